# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Coding-agent sessions: what Claude Code and Codex summaries keep, invent, and cost
#
# SJC's and TRACE's questions asked of the compactions coding agents really write. By default the committed fixtures in `workbench/datasets/example_logs/claude-code/` and `workbench/datasets/example_logs/codex/` (hand-built from the formats' public descriptions, so the numbers below describe the fixtures, not the agents); point `CLAUDE_CODE` / `CODEX` at your own session directories (`~/.claude/projects/NAME`, `~/.codex/sessions`), or `DATA` at tables made by `workbench import --format claude-code`. Each summary's evidence is the history it replaced: every step since the previous compaction.

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters")
from typing import Optional  # papermill --help-notebook reads Optional[str], not str | None
DATA: Optional[str] = None   # a directory of imported tables; when set, CLAUDE_CODE and CODEX are not read
CLAUDE_CODE: Optional[str] = "workbench/datasets/example_logs/claude-code"   # a Claude Code session file or directory (None to skip)
CODEX: Optional[str] = "workbench/datasets/example_logs/codex"               # a Codex rollout file or directory (None to skip)
HORIZON: int = 5        # steps after (and before) each compaction, TRACE's K
TAU: float = 0.5          # score below which an entry is unsupported (SJC Section 3)
SCORES: Optional[str] = None   # a scores table of your own judge (workbench judge DIR --out S.parquet); None: lexical, offline
JUDGE: Optional[str] = None    # the judge of SCORES whose scores are used (None: its only judge)
ENCODING: str = "o200k_base"
N_BOOT: int = 2000      # bootstrap resamples of the interval over sessions
SEED: int = 0
TABLE_ROWS: int = 40    # rows of a table of sessions or compactions printed in its LaTeX (its CSV has every row)
SESSIONS_AT_A_TIME: int = 500  # sessions analysed together: memory holds a batch of them, not the directory
FIGURES: Optional[str] = None     # None: figures/ for the project's own data, build/figures/<data name>/ for yours
STYLE: str = "gallery"          # "paper": Computer Modern at 10pt, an article's text width (plots.use_style)

# %%
from workbench.notebooks import caption, figures_dir, skip_when_not_applicable, use_project_root

use_project_root(chdir=True)  # relative parameters are the project's, however the kernel was started
skip_when_not_applicable()  # an analysis the data cannot serve is skipped with its reason, not an error
figs = figures_dir(FIGURES, DATA, CLAUDE_CODE, CODEX, SCORES, style=STYLE, JUDGE=JUDGE)
import warnings

import polars as pl

from workbench import plots
from workbench.adapters import read_log
from workbench.datasets import derive_missing, load
from workbench.tables import height

plots.use_style(STYLE)
if DATA is not None:  # every table is scanned, and read below a batch of sessions at a time
    from workbench.datasets import NotApplicable

    tables = load(DATA, derive=True, columns=dict.fromkeys(("runs", "steps", "compactions", "entries", "scores")))
    clients = (tables["runs"].select(pl.col("usage_definition").drop_nulls().unique()).collect()
               if "usage_definition" in tables["runs"].collect_schema().names() else pl.DataFrame())
    if not clients.height:  # summaries of documents, a benchmark's runs: not what this notebook reads
        raise NotApplicable("DATA holds no coding-agent sessions: no run has a usage_definition, which the Claude "
                            "Code and Codex importers write (workbench import ~/.claude/projects or ~/.codex/sessions)")
else:
    parts = []
    with warnings.catch_warnings(record=True) as odd:  # orphan results and unsummarized boundaries, listed below
        warnings.simplefilter("always")
        for path, fmt in ((CLAUDE_CODE, "claude-code"), (CODEX, "codex")):
            if path is not None:
                parts.append(read_log(path, fmt))
    for w in odd:
        print(w.message)
    tables = {name: pl.concat([p[name] for p in parts], how="diagonal_relaxed") for name in parts[0]}
    print(derive_missing(tables))
if SCORES:  # the user's own judge instead of the lexical scores derived offline
    from workbench.tables import read_table

    own = read_table(SCORES, "scores")
    judges = sorted(own.get_column("judge").unique().to_list())
    if JUDGE is None and len(judges) != 1:
        raise ValueError(f"SCORES holds the judges {judges}: set JUDGE to one of them")
    chosen = JUDGE or judges[0]
    tables["scores"] = own.filter(pl.col("judge") == chosen).select(tables["scores"].collect_schema().names())
    print(f"scores: judge {chosen!r} from {SCORES} ({height(tables['scores'])} entries)")
JUDGE_NAME = chosen if SCORES else "lexical"  # the judge whose scores every table and caption below names
{name: height(frame) for name, frame in tables.items()}

# %% [markdown]
# Every analysis below runs `SESSIONS_AT_A_TIME` sessions at a time: the tables of one row per compaction go to disk as they are made (each sorted as its function sorts it, within a batch), and the entries are counted as they pass, so a directory of any size fits in memory.

# %%
from workbench.summaries import run_of_entry
from workbench.analyses import SessionAnalyses, burden_totals, prompt_cache_means, token_medians
from workbench.tables import batches_by_run

analyses = SessionAnalyses(horizon=HORIZON, tau=TAU, encoding=ENCODING)
frames = {name: tables[name] for name in ("runs", "steps", "compactions", "entries")}
frames["scores"] = tables["scores"].with_columns(run_of_entry().alias("run_id"))  # a score's session, from its entry
for batch in batches_by_run(frames, SESSIONS_AT_A_TIME, order="compactions"):
    analyses.add(batch)
print(f"{analyses.compactions:,} compactions in {analyses.batches} batch(es)")

# %% [markdown]
# ## Compactions per session, and tokens before and after

# %%
overview = analyses.table("overview")
per_session = tables["runs"].select("run_id", "method", "steps", "compactions")
plots.export_table(per_session, "transcripts_sessions", f"{figs}/tables", "Sessions: steps and compactions",
                   max_rows=TABLE_ROWS)
plots.export_table(overview, "transcripts_compactions", f"{figs}/tables",
                   "Each compaction: trigger, schema, entries, tokens before (recorded or counted) and after",
                   max_rows=TABLE_ROWS)
overview.head(TABLE_ROWS).collect()

# %%
fig = plots.coding_agents.compaction_tokens(overview, medians=token_medians(overview))
plots.export(fig, "transcripts_tokens_before_after", figs);

# %%
caption("""**Figure (coding-agent compactions).** Tokens in the context before each compaction (filled: the size the agent recorded in `compactMetadata.preTokens`; open: counted here from the task, previous summary and replaced steps, which misses the system prompt and tool definitions) and tokens of the summary that replaced it, on a log scale; one column per compaction, labelled by the summary's schema and boundary. Past 40 compactions (a directory of sessions) the figure is their distribution instead: how many compactions had each size before and after, on log-spaced bins, with the medians in the legend.""", DATA, CLAUDE_CODE, CODEX, SCORES)

# %% [markdown]
# ## When sessions compact, and what a compaction does to the prompt cache

# %%
timeline = analyses.table("timeline")
plots.export_table(timeline, "transcripts_compaction_timeline", f"{figs}/tables",
                   "Each compaction: minutes since its session started", max_rows=TABLE_ROWS)
fig = plots.coding_agents.compaction_timeline(timeline)
plots.export(fig, "transcripts_compactions_over_time", figs);

# %%
caption("""**Figure (coding-agent sessions).** One line per session that recorded times, from its first line to its last, and a marker at each compaction (filled: automatic, open: the user's `/compact`). Past 40 sessions, the compactions counted by the minute of their session they came at, stacked by trigger.""", DATA, CLAUDE_CODE, CODEX, SCORES)

# %%
cache = analyses.table("prompt_cache")
plots.export_table(cache, "transcripts_prompt_cache", f"{figs}/tables",
                   "Prompt tokens of the call before and after each compaction: cache read, cache written, fresh",
                   max_rows=TABLE_ROWS)
fig = plots.coding_agents.prompt_cache(cache, means=prompt_cache_means(cache))
plots.export(fig, "transcripts_prompt_cache", figs);
cache.head(TABLE_ROWS).collect()

# %%
caption("""**Figure (coding-agent sessions).** The prompt of the last call before each compaction and of the first call after it, stacked by what the prompt cache served (blue), what had to be written to it (orange) and what was sent fresh (green). Before a compaction the cache serves almost the whole history; after it, only what stayed the same (the system prompt): the summary and everything after are written anew. Logs that do not record the cache's share (Codex) have no bars.""", DATA, CLAUDE_CODE, CODEX, SCORES)

# %% [markdown]
# ## Entries by role, and which roles the source judge finds unsupported (SJC Table 2's question)
#
# The judge is the offline lexical one, or the one of `SCORES` when given: every table names it (`JUDGE_NAME`).

# %%
by_role = analyses.entries_by_role()
plots.export_table(by_role, "transcripts_entries_by_role", f"{figs}/tables",
                   f"Entries per role and schema; unsupported = {JUDGE_NAME} score < {TAU}")
by_role

# %%
fig = plots.coding_agents.entries_by_role(by_role, judge=JUDGE_NAME)
plots.export(fig, "transcripts_entries_by_role", figs);

# %%
shares = analyses.unsupported_by_role(n_boot=N_BOOT, seed=SEED)
plots.export_table(shares, "transcripts_unsupported_by_role", f"{figs}/tables",
                   f"Unsupported share per role ({JUDGE_NAME} score < {TAU}), 95% interval resampling sessions")
fig = plots.coding_agents.unsupported_by_role(shares, judge=JUDGE_NAME)
plots.export(fig, "transcripts_unsupported_by_role", figs);
shares

# %%
caption("""**Figure (coding-agent summaries).** The share of each role's entries that the source judge (`JUDGE_NAME`) finds no source for, with a 95% percentile interval that resamples whole sessions (a session's entries are not independent); with a handful of sessions the intervals are wide, as they should be.""", DATA, CLAUDE_CODE, CODEX, SCORES)

# %%
caption("""**Figure (coding-agent summaries).** Entries of every summary by the role its section plays (Claude Code's Pending Tasks and Optional Next Step are forward-looking, its Files and Code Sections identifiers; free-text summaries have no sections, so every paragraph or bullet is `other`), split by whether the source judge (`JUDGE_NAME`) finds a source for it in the replaced history (red: score below `TAU`).""", DATA, CLAUDE_CODE, CODEX, SCORES)

# %% [markdown]
# ## Identifiers with and without a source in the replaced history

# %%
share = analyses.table("identifiers")
plots.export_table(share, "transcripts_identifier_sources", f"{figs}/tables",
                   "Identifiers (paths, name(), ids) in each summary with a source in the history it replaced",
                   max_rows=TABLE_ROWS)
print(f"{analyses.sourced:,} of {analyses.identifiers:,} summary identifiers have a source in the replaced history")
analyses.table("unsourced").head(TABLE_ROWS).collect()

# %% [markdown]
# An unsourced identifier is not necessarily invented: in the fixture, `src/api/orders.py:88` came back from a sub-agent, whose steps are a run of their own (`parent_run_id`), not part of the main session's replaced history.

# %% [markdown]
# ## What the agent did next: repeated calls and errors after each compaction (TRACE's burden)

# %%
after = analyses.table("after")
plots.export_table(after, "transcripts_after_compaction", f"{figs}/tables",
                   f"Calls, repeats and errors in the {HORIZON} steps before and after each compaction",
                   max_rows=TABLE_ROWS)
after.head(TABLE_ROWS).collect()

# %%
fig = plots.coding_agents.burden_before_after(burden_totals(after))
plots.export(fig, "transcripts_burden_before_after", figs);

# %%
caption("""**Figure (coding-agent sessions).** Of the tool calls in the `HORIZON` steps before and after a compaction (a window stops at the neighbouring compaction), the share that repeated an identical earlier call and the share whose result was an error, summed over compactions: TRACE's post-compaction burden measured on real sessions, with the steps before as the session's own baseline.""", DATA, CLAUDE_CODE, CODEX, SCORES)

