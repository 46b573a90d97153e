"""Every table of the workbench, declared once: columns, polars dtypes, keys, references.

The data model is tidy: one row per run, step, compaction
boundary, summary entry, judge score, label, attribution or cited rollout span.

Columns are declared as data (name, dtype, required, nullable, allowed values); every
reader goes through one path, :func:`workbench.tables.validate`, which casts a frame to
the declared dtypes and fails with a :class:`~workbench.errors.SchemaError` that names the file, the line
(or row), the field, what was expected and what was found. The words the declarations
allow (sections, patterns, label values) are :mod:`workbench.tables._vocabulary`'s.

Ground truth that only synthetic data has (an entry's provenance, whether it is
supported, the defect that damaged it ...) lives in optional columns whose names
start with ``GROUND_TRUTH_PREFIX``, so a real log never has to fill them.
Columns a table does not declare are kept as they are (a harness's own metadata).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import polars as pl

from workbench.errors import SchemaError
from workbench.tables._vocabulary import PATTERNS, SUPPORT_VALUES

GROUND_TRUTH_PREFIX = "gt_"


@dataclass(frozen=True)
class Column:
    """One declared column: its polars dtype, whether it must be present, whether it may be null."""

    name: str
    dtype: pl.DataType
    required: bool = True
    nullable: bool = False
    values: tuple[str, ...] | None = None
    doc: str = ""
    #: smallest allowed value (counts, budgets, indices are >= 0)
    minimum: float | None = None
    #: largest allowed value (a probability is <= 1)
    maximum: float | None = None
    #: an ISO-8601 timestamp (text)
    timestamp: bool = False

    @property
    def is_ground_truth(self) -> bool:
        return self.name.startswith(GROUND_TRUTH_PREFIX)


@dataclass(frozen=True)
class Table:
    """A table's declaration: columns in order, its key and the tables its keys refer to."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    references: tuple[tuple[tuple[str, ...], str], ...] = field(default=())
    doc: str = ""

    def column(self, name: str) -> Column:
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(f"table '{self.name}' has no column '{name}'")

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def required(self) -> list[str]:
        return [c.name for c in self.columns if c.required]

    def key_in(self, present: Sequence[str]) -> list[str]:
        """The key columns to check in a frame of the ``present`` columns: those of the key it has (an optional
        one, ``scores.repeat``, may be absent), or none when it lacks a required one (a selection of columns
        without the whole key need not be unique)."""
        if any(self.column(k).required and k not in present for k in self.key):
            return []
        return [k for k in self.key if k in present]

    def polars_schema(self, present: Sequence[str] | None = None) -> dict[str, pl.DataType]:
        """The dtypes of the declared columns (only those in ``present`` when given)."""
        return {
            c.name: c.dtype for c in self.columns if present is None or c.name in present
        }


#: what a column means where a table does not say more: the keys several tables share, and the label's parts
_SHARED_DOCS = {
    "run_id": "the run (runs.run_id)",
    "boundary": "the compaction boundary within the run (compactions.boundary)",
    "entry_id": "the summary entry: RUN/bBOUNDARY/ePOSITION (entries.entry_id)",
    "judge": "the judge's name (lexical, jev, openai:MODEL, ...)",
    "request_id": "the compaction's judge request the score came from (evidence.request_id)",
    "item_id": "what was labelled: an entry_id, or a run_id for a failure label",
    "annotator": "who gave the label (a name or an e-mail; the store checks the form)",
    "note": "the annotator's free-text note",
    "failed_check": "the environment's check the run failed (its name, as the environment reports it)",
    "support": "whether the entry the action carried out had a source (SUPPORT_VALUES)",
    "pattern": "SJC Table 11's pattern of the failure: RC (rewritten constraint), ID (identifier), CS (changed "
               "state), other, unrelated",
    "event_id": "the compaction event (boundary) the drafts were sampled at",
    "span_id": "a span of the replaced history",
}


def _c(
    name: str,
    dtype: pl.DataType,
    required: bool = False,
    nullable: bool = True,
    values: tuple[str, ...] | None = None,
    doc: str = "",
    minimum: float | None = None,
    maximum: float | None = None,
    timestamp: bool = False,
) -> Column:
    return Column(name, dtype, required=required, nullable=nullable, values=values,
                  doc=doc or _SHARED_DOCS.get(name, ""), minimum=minimum, maximum=maximum, timestamp=timestamp)


def _key(name: str, dtype: pl.DataType = pl.Utf8(), doc: str = "", minimum: float | None = None) -> Column:
    return Column(name, dtype, required=True, nullable=False, doc=doc or _SHARED_DOCS.get(name, ""), minimum=minimum)


def _n(name: str, dtype: pl.DataType, doc: str = "") -> Column:
    """A count, budget, index or size: never negative."""
    return _c(name, dtype, doc=doc, minimum=0)


Utf8, Int64, Float64, Boolean = pl.Utf8(), pl.Int64(), pl.Float64(), pl.Boolean()

RUNS = Table(
    "runs",
    (
        _key("run_id", doc="unique id of the agent run"),
        _key("task_id", doc="the task the run attempts; replicates share it"),
        _c("scenario_id", Utf8, doc="task template / scenario: the cluster resampled by CIs"),
        _c("subset", Utf8, doc="difficulty (easy/medium/hard) or number of applications"),
        _c("method", Utf8, doc="context-management policy (no_compression, fifo, prompting ...)"),
        _c("model", Utf8, doc="agent model"),
        _n("budget", Int64, doc="compaction budget (tokens, or testbed units)"),
        _n("replicate", Int64, doc="0-based index of the run among the task's replicates"),
        _c("task", Utf8, doc="the task instruction (first user prompt)"),
        _c("success", Boolean, doc="whether every evaluation check passed"),
        _c("reward", Float64, doc="raw reward where the harness gives one"),
        _c("failed_check", Utf8, doc="name of the first evaluation check that failed"),
        _n("steps", Int64, doc="number of agent steps (action-observation exchanges)"),
        _n("compactions", Int64, doc="number of compaction boundaries"),
        _n("blocked_calls", Int64, doc="tool calls the environment refused"),
        _n("repeated_calls", Int64, doc="tool calls that repeat an earlier identical call"),
        _n("peak_tokens", Int64, doc="max input tokens over steps, system prompt excluded (FOCUS A.8)"),
        _n("agent_tokens", Int64, doc="cumulative agent tokens (input + output)"),
        _n("compressor_tokens", Int64, doc="cumulative compressor tokens"),
        _n("judge_tokens", Int64, doc="cumulative source-judge tokens"),
        _n("dependency", Float64, doc="FOCUS A.8 dependency"),
        # what a coding agent's session records about itself (Claude Code, Codex)
        _c("parent_run_id", Utf8, doc="the session a sub-agent run belongs to"),
        _c("started_at", Utf8, doc="ISO time of the session's first line"),
        _c("ended_at", Utf8, doc="ISO time of the session's last line"),
        _c("project", Utf8, doc="the session's working directory"),
        _c("project_dir", Utf8, doc="the directory the session file lies in (Claude Code's project name)"),
        _c("client_version", Utf8, doc="version of the coding agent that wrote the session"),
        _c("git_branch", Utf8, doc="git branch of the working directory"),
        _n("abandoned_branches", Int64, doc="branches the session left (rewinds): never steps, never evidence"),
        _c("models", pl.List(pl.Utf8), doc="every model the session's replies name, in the order of first use "
                                           "(model is the first)"),
        # what the session spent, as ccusage counts it: every unique reply (message id + request id) of the
        # session, whichever branch it is on, each once across the whole tree (usage_definition says how)
        _n("usage_input_tokens", Int64, doc="fresh input tokens: without cache read and creation (Codex: "
                                            "input_tokens less cached_input_tokens)"),
        _n("usage_output_tokens", Int64, doc="output tokens (Codex: includes reasoning)"),
        _n("usage_cache_read_tokens", Int64, doc="input tokens read from the prompt cache (Codex: cached input)"),
        _n("usage_cache_creation_tokens", Int64, doc="input tokens written to the prompt cache (Claude Code)"),
        _n("usage_reasoning_tokens", Int64, doc="of the output, reasoning tokens (Codex)"),
        _n("usage_replies", Int64, doc="replies (or Codex token_count events) counted in the usage columns"),
        _c("usage_definition", Utf8, doc="which client's token definitions the usage columns follow"),
        _c("usage_by_model", Utf8, doc="the usage columns per model, as JSON {model: {input, output, cache_read, "
                                      "cache_creation_5m, cache_creation_1h, reasoning}}, Codex's with its "
                                      "token_count events as replies (cost: workbench.analyses.session_costs)"),
        _n("off_branch_lines", Int64, doc="messages not on the branch the steps follow: their usage counts, their "
                                          "text is never a step"),
        _c("off_branch_reason", Utf8, doc="why lines are off the followed branch: abandoned branch (a rewind), "
                                          "missing parent (earlier lines not in the files)"),
        _n("unsummarized_boundaries", Int64, doc="compaction boundaries whose summary line never came"),
        # what a human-labelled summary carries (workbench import --format labelled-summaries, frank)
        _c("split", Utf8, doc="the benchmark split the summary belongs to (valid, test ...)"),
        _c("human_score", Float64, doc="a summary-level human score (FRANK: Factuality, the share of error-free "
                                       "sentences)"),
        _c("question", Utf8, doc="the question annotators answered about the run's entries (a labelled-summaries "
                                 "header's); null = SJC's agent question"),
        # what a labelled failure log carries (workbench import --format who-and-when)
        _c("reference_answer", Utf8, doc="the task's reference answer (Who&When: GAIA's or AssistantBench's); "
                                         "shown only to an attributor told to use it"),
        _c("level", Utf8, doc="the task's difficulty level as the benchmark gives it"),
    ),
    key=("run_id",),
    doc="one row per agent run",
)

STEPS = Table(
    "steps",
    (
        _key("run_id"),
        _key("step", Int64, minimum=0, doc="0-based step index within the run"),
        _c("tool", Utf8, doc="tool called by the action; null for a plain message"),
        _c("args", Utf8, doc="the action's arguments as JSON text"),
        _c("text", Utf8, doc="assistant text of the step, if any"),
        _c("observation", Utf8, doc="what the environment (tool or user simulator) returned"),
        _c("observation_role", Utf8, values=("tool", "user"), doc="who produced the observation"),
        _c("blocked", Boolean, doc="the environment refused the call (execution error)"),
        _c("repeated", Boolean, doc="the call repeats an earlier identical call"),
        _n("input_tokens", Int64, doc="input tokens of the generation, system prompt excluded"),
        _n("output_tokens", Int64, doc="output tokens of the generation"),
        _c("boundary_before", Boolean, doc="a compaction boundary was applied right before this step"),
        _n("cache_read_tokens", Int64, doc="of input_tokens, those read from the prompt cache"),
        _n("cache_creation_tokens", Int64, doc="of input_tokens, those written to the prompt cache"),
        _c("model", Utf8, doc="the model that made the step (coding-agent sessions)"),
        _n("forks", Int64, doc="rewound branches that leave the session here (Claude Code): their messages are not "
                               "steps"),
        _c("timestamp", Utf8, doc="ISO time of the line that made the step"),
        _c("error", Boolean, doc="the tool result is an error"),
        _c("orphan_result", Boolean, doc="a tool result whose call is missing from the log"),
        # multi-agent logs (Who&When): who took the step
        _c("agent", Utf8, doc="the agent that took the step, normalised (Magentic-One's 'Orchestrator (thought)' "
                              "is 'Orchestrator')"),
        _c("agent_raw", Utf8, doc="the agent as the log names it (a CaptainAgent message's name, a Magentic-One "
                                  "message's role)"),
    ),
    key=("run_id", "step"),
    references=((("run_id",), "runs"),),
    doc="one row per agent step",
)

COMPACTIONS = Table(
    "compactions",
    (
        _key("run_id"),
        _key("boundary", Int64, minimum=0, doc="0-based index of the compaction within the run"),
        _key("step", Int64, minimum=0, doc="the step before which the committed summary is in context"),
        _n("span_start", Int64, doc="first step of the span the summary replaced"),
        _c("span_end", Int64, minimum=-1,
           doc="last step of the span the summary replaced (inclusive; span_start - 1 when it replaced no step)"),
        _c("previous_summary", Utf8, doc="committed summary of the previous boundary"),
        _c("retained_turn", Utf8, doc="the most recent turn, kept verbatim"),
        Column("candidate_summary", Utf8, required=True, nullable=True,
               doc="what the compressor wrote; null for a compaction that writes no summary (compaction_type edit, "
                   "trim): it has no entries"),
        _c("committed_summary", Utf8, doc="what the agent saw (after pruning or selection)"),
        _c("trigger", Utf8, doc="what started the compaction, in the log's own words (Claude Code: auto, manual; "
                                "inspect_ai: threshold, forced)"),
        _n("pre_tokens", Int64, doc="context tokens just before the compaction, as the log records them"),
        _n("post_tokens", Int64, doc="context tokens just after the compaction, as the log records them "
                                     "(inspect_ai's tokens_after)"),
        _c("compaction_type", Utf8, doc="what the compaction did, where the log says: summary (the history replaced "
                                        "by a summary), edit (tool results and reasoning cleared), trim (old "
                                        "messages dropped)"),
        _c("strategy", Utf8, doc="the compaction strategy as the log names it (inspect_ai: CompactionSummary, "
                                 "CompactionEdit, CompactionTrim, CompactionNative, CompactionAuto)"),
        _c("timestamp", Utf8, doc="ISO time of the compaction, where the log says"),
    ),
    key=("run_id", "boundary"),
    references=((("run_id",), "runs"),),
    doc="one row per compaction boundary",
)

ENTRIES = Table(
    "entries",
    (
        _key("entry_id"),
        _key("run_id"),
        _key("boundary", Int64, minimum=0),
        _key("section", doc="heading the entry stands under"),
        _key("position", Int64, minimum=0, doc="0-based order of the entry in its summary"),
        _key("text", doc="the entry exactly as the compressor wrote it"),
        _c("carried_from", Utf8, doc="entry_id of the same entry in the previous summary"),
        _c("role", Utf8, values=("history", "forward", "constraints", "identifiers", "user_messages", "other"),
           doc="what the entry's section is for (summary.ROLES); null in tables written before schemas"),
        _c("schema", Utf8, doc="the summary schema that parsed the entry (openclaw, claude_code, free_text)"),
        _c("gt_provenance", Utf8, values=("observed", "carried", "task", "invented"),
           doc="synthetic ground truth: where the entry came from"),
        _c("gt_supported", Boolean, doc="synthetic ground truth: has a source"),
        _c("gt_correct", Boolean, doc="synthetic ground truth: following it violates no check"),
        _c("gt_pattern", Utf8, doc="synthetic ground truth: RC / ID / CS for invented reasoning"),
        _c("gt_defect", Utf8, doc="synthetic ground truth: lossy defect that damaged the entry"),
    ),
    key=("entry_id",),
    references=((("run_id", "boundary"), "compactions"),),
    doc="one row per summary entry of a candidate summary",
)

SCORES = Table(
    "scores",
    (
        _key("entry_id"),
        _key("judge"),
        _n("repeat", Int64, doc="index of a repeated request (judge repeatability); 0 by default"),
        _c("score", Float64, doc="source score in [0, 1]; null = no usable answer", minimum=0, maximum=1),
        _c("request_id", Utf8),
        _c("evidence_ids", pl.List(pl.Utf8), doc="the entry's evidence passages (evidence.evidence_id), best first"),
        _c("reason", Utf8, doc="why the score is null, when it is"),
    ),
    key=("entry_id", "judge", "repeat"),
    doc="one row per judge score of an entry",
)

EVIDENCE = Table(
    "evidence",
    (
        _key("evidence_id", doc="REQUEST/oIcJ: chunk J of environment output I of the request (entries.evidence_id)"),
        _key("request_id", doc="the compaction's judge request (entries.request_id)"),
        _key("run_id"),
        _key("boundary", Int64, minimum=0),
        _c("entry_ids", pl.List(pl.Utf8), doc="the entries BM25 retrieved this passage for"),
        _c("ranks", pl.List(pl.Int64), doc="its rank among each of those entries' passages (0 = best)"),
        _c("step", Int64, doc="the replaced-history step whose output it is; null = the retained turn"),
        _n("part", Int64, doc="0 for the first chunk of an output, 1 for the next ..."),
        _c("source", Utf8, doc="where it came from, in words (step 12 · tool Read · output)"),
        _c("text", Utf8, doc="the passage as the judge saw it"),
    ),
    key=("evidence_id",),
    references=((("run_id", "boundary"), "compactions"),),
    doc="one row per evidence passage a judge request used (SJC Appendix F), written beside the scores",
)

LABELS = Table(
    "labels",
    (
        _key("item_id"),
        _key("annotator"),
        _key("round", Int64, minimum=0, doc="the labeling round (a second round by the same annotator measures "
                                            "agreement within a person)"),
        _key("field", doc="one of LABEL_VALUES: support, correct, pattern, entry_support, and the open fields of a "
                          "failure label: agent, step, reason"),
        Column("value", Utf8, required=True, nullable=True, doc="one of LABEL_VALUES[field] (any text for an open "
                                                                "field); null = skipped"),
        _c("note", Utf8),
        _c("labeled_at", Utf8, doc="ISO-8601 UTC timestamp, written by the store", timestamp=True),
        _c("question", Utf8, doc="the question the annotator answered, as the data set states it; null = SJC's "
                                 "agent question (an environment output as the entry's source)"),
    ),
    key=(),  # append-only history: the latest label per (item, annotator, round, field) wins
    doc="one row per label an annotator gave",
)

ATTRIBUTIONS = Table(
    "attributions",
    (
        _key("run_id"),
        _c("failed_check", Utf8),
        _n("action_step", Int64, doc="the step whose action caused the failed check"),
        _c("entry_id", Utf8, doc="the summary entry the action carried out, if any"),
        Column("pattern", Utf8, required=True, nullable=False, values=PATTERNS, doc=_SHARED_DOCS["pattern"]),
        _c("support", Utf8, values=SUPPORT_VALUES),
    ),
    key=("run_id",),
    doc="one row per failed run traced back to its cause (SJC Appendix D)",
)

ROLLOUTS = Table(
    "rollouts",
    (
        _key("event_id", doc="compaction event (boundary) the drafts were sampled at"),
        _key("rollout", Int64, minimum=0, doc="0-based index of the draft rollout"),
        _key("span_id", doc="span cited by the rollout"),
        _c("gt_needed", Boolean, doc="synthetic ground truth: the remaining work needs the span"),
    ),
    key=(),  # a span cited twice in one rollout is a legal duplicate; û counts it once
    doc="one row per cited span in one draft rollout (FOCUS Eq. 8)",
)

CANDIDATES = Table(
    "candidates",
    (
        _key("run_id"),
        _key("boundary", Int64, minimum=0),
        _key("candidate", Int64, minimum=0, doc="0-based index of the candidate summary at the boundary"),
        _key("chosen", Boolean, doc="the policy committed this candidate"),
        _n("visible_defects", Int64, doc="defects the candidate introduced that cause blocked/repeated calls"),
        _n("silent_defects", Int64, doc="defects the candidate introduced that cause neither"),
        _c("verifier_score", Float64, doc="TRACE Eq. 4: minus the induced burden"),
        _c("oracle_success", Boolean, doc="the task is finally solved with this candidate"),
    ),
    key=("run_id", "boundary", "candidate"),
    references=((("run_id", "boundary"), "compactions"),),
    doc="one row per candidate summary at a boundary with several (TRACE verifier / oracle)",
)

SPANS = Table(
    "spans",
    (
        _key("event_id"),
        _key("span_id"),
        _c("step", Int64, doc="the step whose action-observation pair the span is"),
        _c("gt_needed", Boolean, doc="synthetic ground truth: the remaining work uses a fact only it holds"),
    ),
    key=("event_id", "span_id"),
    doc="one row per candidate span at a compaction event (the universe the rollouts cite from)",
)

LABEL_SPANS = Table(
    "label_spans",
    (
        _key("item_id", doc="the labelled entry (entries.entry_id)"),
        _key("annotator"),
        _key("start", Int64, minimum=0, doc="first character of the span in the entry's text (0-based)"),
        _key("end", Int64, minimum=0, doc="one past its last character"),
        _c("type", Utf8, doc="what the annotator found there (an error type), where the data says; a span of "
                             "several types is a row each"),
        _c("text", Utf8, doc="the entry's text from start to end"),
    ),
    key=("item_id", "annotator", "start", "end", "type"),
    doc="one row per span and type an annotator marked in a labelled entry (a labelled-summaries file's spans)",
)

VARIABLES = Table(
    "variables",
    (
        _key("name", doc="the name the data gives it"),
        Column("kind", Utf8, required=True, nullable=False, values=("target", "metric"),
               doc="a human target or a metric"),
        _key("column", doc="the runs column that holds it (human_NAME, metric_NAME; score: human_score)"),
        _c("direction", Utf8, values=("higher", "lower"), doc="which way is better (more faithful, more factual)"),
        _c("description", Utf8, doc="what it measures, in the data's words"),
    ),
    key=("name", "kind"),
    doc="one row per human target and metric a labelled-summaries header declares, with its direction",
)

TABLES: dict[str, Table] = {
    t.name: t
    for t in (RUNS, STEPS, COMPACTIONS, ENTRIES, SCORES, EVIDENCE, LABELS, ATTRIBUTIONS, ROLLOUTS, CANDIDATES,
              SPANS, LABEL_SPANS, VARIABLES)
}


def table(name: str) -> Table:
    """The declaration of a table by name.

    Parameters
    ----------
    name : str
        The table's name (:data:`TABLES`).

    Returns
    -------
    Table
        Its columns, key and references.
    """
    try:
        return TABLES[name]
    except KeyError:
        raise SchemaError(
            field="table", expected=f"one of {sorted(TABLES)}", got=repr(name)
        ) from None


def column_order(table_name: str, columns: Sequence[str]) -> list[str]:
    """``columns`` in the order :func:`validate` gives them: the declared ones in declared order, then the others
    by name."""
    declared = table(table_name).names
    present = set(columns)
    return [c for c in declared if c in present] + sorted(c for c in present if c not in set(declared))


def empty(table_name: str) -> pl.DataFrame:
    """An empty frame with every declared column of a table.

    Parameters
    ----------
    table_name : str
        The table's name.

    Returns
    -------
    polars.DataFrame
        No rows, every declared column with its dtype.
    """
    return pl.DataFrame(schema=table(table_name).polars_schema())


__all__ = ["ATTRIBUTIONS", "CANDIDATES", "COMPACTIONS", "empty", "ENTRIES", "EVIDENCE", "LABEL_SPANS", "LABELS",
           "ROLLOUTS", "RUNS", "SCORES", "SPANS", "STEPS", "Table", "table", "TABLES", "VARIABLES"]
