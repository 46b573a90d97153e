"""Evidence for a source judge: a compaction's replaced history turned into one judge request (SJC Appendix F), and
the evidence a request used kept as data.

The span a summary replaced (:class:`SpanIndex`: each run's tool outputs and tools by step, for fast slicing), the
request built from it (:class:`JudgeRequest`, :func:`build_request`: task, retained turn, previous summary, the
entries, and the BM25 passages of :mod:`workbench.summaries._retrieval` pooled across entries), one request per compaction of
a directory's tables (:func:`compaction_requests`, whose entries come from the entries table), and the
``evidence`` table (:func:`evidence_table`: one row per passage a request used, with the entries it served), which
the judge writes beside its scores and which sampling, labeling and the explorer read instead of retrieving again
(:func:`entry_evidence`). Scoring the requests is :mod:`workbench.judges._requests`.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import islice
from pathlib import Path
from typing import Any

import polars as pl

from workbench.tables import _schema as schema
from workbench.summaries._entries import entries_table, evidence_id, request_id
from workbench.summaries._retrieval import Evidence, retrieve, retrieve_many

#: compactions whose evidence is retrieved together (:func:`workbench.summaries.retrieve_many`): large enough that
#: the array work dominates, small enough that its arrays stay a few megabytes
RETRIEVAL_BATCH = 256


@dataclass(frozen=True)
class JudgeRequest:
    """Everything a judge sees at one compression boundary."""

    task: str
    retained_turn: str
    previous_summary: str
    evidence: tuple[str, ...]
    entries: tuple[str, ...]
    request_id: str = ""
    #: each evidence passage's chunk id within the request (``o3c1``: output 3, chunk 1)
    evidence_ids: tuple[str, ...] = ()
    #: per entry, the indices into ``evidence`` retrieved for it, best first (lets a split request carry less)
    entry_evidence: tuple[tuple[int, ...], ...] = ()

    def state(self) -> dict[str, object]:
        """The boundary context as structured data (every field is untrusted text)."""
        return {
            "task_instruction": self.task,
            "retained_turn": self.retained_turn,
            "previous_summary": self.previous_summary,
            "evidence": list(self.evidence),
        }

    def subset(self, indices: Sequence[int], suffix: str) -> JudgeRequest:
        """The request restricted to some entries and the evidence retrieved for them."""
        if self.entry_evidence:
            keep = sorted({j for i in indices for j in self.entry_evidence[i]})
            remap = {old: new for new, old in enumerate(keep)}
            evidence = tuple(self.evidence[j] for j in keep)
            ids = tuple(self.evidence_ids[j] for j in keep) if self.evidence_ids else ()
            per = tuple(tuple(remap[j] for j in self.entry_evidence[i]) for i in indices)
        else:
            evidence, ids, per = self.evidence, self.evidence_ids, ()
        return replace(self, entries=tuple(self.entries[i] for i in indices), evidence=evidence,
                       evidence_ids=ids, entry_evidence=per, request_id=f"{self.request_id}{suffix}")


@dataclass(frozen=True)
class CompactionRequest:
    """One compaction's judge request with the ids of its entries (the entries table's, in position order) and
    where each environment output of its evidence came from (the step and its tool; beyond them, the retained
    turn)."""

    run_id: str
    boundary: int
    entry_ids: tuple[str, ...]
    request: JudgeRequest
    output_steps: tuple[int, ...] = ()
    output_tools: tuple[str | None, ...] = ()


def span_outputs(steps: pl.DataFrame, run_id: str, start: int | None, end: int | None) -> list[str]:
    """Environment outputs (observations) of a run's steps ``start..end`` inclusive.

    Parameters
    ----------
    steps : polars.DataFrame
        The steps table.
    run_id : str
        The run.
    start, end : int or None
        The first and last step (None: the run's first, or last).

    Returns
    -------
    list of str
        The observations, in step order.
    """
    sel = steps.filter(pl.col("run_id") == run_id)
    if start is not None:
        sel = sel.filter(pl.col("step") >= start)
    if end is not None:
        sel = sel.filter(pl.col("step") <= end)
    return [o for o in sel.sort("step").get_column("observation").to_list() if o]


@dataclass(frozen=True)
class SpanIndex:
    """Every run's steps, observations and tools in step order, built once (:func:`span_index`): a span's outputs
    are then two bisections, so building requests grows with the log, not with compactions x steps."""

    runs: dict[str, tuple[list[int], list[str | None], list[str | None]]]

    def _bounds(self, run_id: str, start: int | None, end: int | None) -> tuple[int, int]:
        numbers = self.runs.get(run_id, ([], [], []))[0]
        lo = 0 if start is None else bisect_left(numbers, start)
        hi = len(numbers) if end is None else bisect_right(numbers, end)
        return lo, hi

    def outputs(self, run_id: str, start: int | None, end: int | None) -> list[str]:
        """What :func:`span_outputs` returns for the same run and span."""
        observations = self.runs.get(run_id, ([], [], []))[1]
        lo, hi = self._bounds(run_id, start, end)
        return [o for o in observations[lo:hi] if o]

    def output_steps(self, run_id: str, start: int | None, end: int | None) -> list[int]:
        """The step of each of :meth:`outputs` (what an evidence chunk ``o{i}c{j}`` came from: step ``[i]``)."""
        numbers, observations, _ = self.runs.get(run_id, ([], [], []))
        lo, hi = self._bounds(run_id, start, end)
        return [n for n, o in zip(numbers[lo:hi], observations[lo:hi], strict=True) if o]

    def output_tools(self, run_id: str, start: int | None, end: int | None) -> list[str | None]:
        """The tool of each of :meth:`outputs`' steps (None where the step names none)."""
        _, observations, tools = self.runs.get(run_id, ([], [], []))
        lo, hi = self._bounds(run_id, start, end)
        return [t for t, o in zip(tools[lo:hi], observations[lo:hi], strict=True) if o]


def span_index(steps: pl.DataFrame) -> SpanIndex:
    """The :class:`SpanIndex` of a steps table (one sort, one partition).

    Parameters
    ----------
    steps : polars.DataFrame
        The steps table.

    Returns
    -------
    SpanIndex
        The index.
    """
    runs: dict[str, tuple[list[int], list[str | None], list[str | None]]] = {}
    if steps.height:
        tool = pl.col("tool") if "tool" in steps.columns else pl.lit(None, dtype=pl.Utf8).alias("tool")
        ordered = steps.select("run_id", "step", "observation", tool).sort("run_id", "step")
        for (run_id,), part in ordered.partition_by("run_id", as_dict=True, maintain_order=True).items():
            runs[str(run_id)] = (part.get_column("step").to_list(), part.get_column("observation").to_list(),
                                 part.get_column("tool").to_list())
    return SpanIndex(runs)


def chunk_step(chunk_id: str, output_steps: Sequence[int]) -> tuple[int | None, int]:
    """The step whose tool output an evidence chunk (``o3c1``: output 3, chunk 1) came from, and the chunk's part
    number (0 for the first); step ``None`` for the retained turn (the output after the span's last)."""
    m = re.fullmatch(r"o(\d+)c(\d+)", chunk_id)
    if not m:
        raise ValueError(f"chunk id: expected o<output>c<chunk>, got {chunk_id!r}")
    i, part = int(m.group(1)), int(m.group(2))
    return (output_steps[i] if i < len(output_steps) else None), part


def describe_source(chunk_id: str, output_steps: Sequence[int], tools: Mapping[int, str | None] | None = None) -> str:
    """Where an evidence chunk came from, in words a person reads: ``step 12 · tool Read · output``, ``step 12 ·
    output`` (a step without a tool name), ``· part 2`` for a later chunk of a long output, or ``retained turn``.
    ``tools`` maps a step to its tool; the internal chunk id is never shown. Every interface uses this one."""
    step, part = chunk_step(chunk_id, output_steps)
    tool = (tools or {}).get(step) if step is not None else None
    where = "retained turn" if step is None else f"step {step}{f' · tool {tool}' if tool else ''} · output"
    return f"{where}{f' · part {part + 1}' if part else ''}"


def build_request(*, task: str, retained_turn: str, previous_summary: str, outputs: Sequence[str],
                  entries: Sequence[str], request_id: str = "") -> JudgeRequest:
    """The SJC judge request at one boundary (Appendix F), the one builder every caller uses.

    ``outputs`` are the environment outputs the evidence may come from (the compressed
    span's observations and the retained turn); BM25 retrieval picks each entry's passages,
    expanded to their chunks and pooled, and the request records which chunks each entry got.

    Parameters
    ----------
    task : str
        The run's task instruction.
    retained_turn : str
        The turn kept verbatim after the summary.
    previous_summary : str
        The summary the compaction replaced.
    outputs : sequence of str
        The environment outputs the evidence may come from.
    entries : sequence of str
        The entries' texts.
    request_id : str, default ""
        The request's id (:func:`request_id`).

    Returns
    -------
    JudgeRequest
        The request, with each entry's evidence.
    """
    return _request(task=task, retained_turn=retained_turn, previous_summary=previous_summary, entries=entries,
                    request_id=request_id, evidence=retrieve(list(entries), list(outputs)))


def _request(*, task: str, retained_turn: str, previous_summary: str, entries: Sequence[str], request_id: str,
             evidence: Evidence) -> JudgeRequest:
    index = {ch.chunk_id: k for k, ch in enumerate(evidence.chunks)}
    return JudgeRequest(
        task=task,
        retained_turn=retained_turn,
        previous_summary=previous_summary,
        evidence=tuple(evidence.texts()),
        entries=tuple(entries),
        request_id=request_id,
        evidence_ids=tuple(ch.chunk_id for ch in evidence.chunks),
        entry_evidence=tuple(tuple(index[cid] for cid in ids) for ids in evidence.per_entry),
    )


def _entries_by_compaction(tables: Mapping[str, pl.DataFrame], summary_column: str,
                           ) -> dict[tuple[str, int], list[tuple[str, str]]]:
    """(run, boundary) -> its entries' (id, text) in position order, from the entries table (made from the
    compactions by :func:`workbench.summaries.entries_table` when the tables have none)."""
    entries = tables.get("entries")
    if entries is None:
        entries = entries_table(tables["compactions"], summary_column=summary_column)
    out: dict[tuple[str, int], list[tuple[str, str]]] = {}
    ordered = entries.select("run_id", "boundary", "entry_id", "text", "position").sort("run_id", "boundary", "position")
    for run_id, boundary, eid, text, _ in ordered.iter_rows():
        out.setdefault((run_id, boundary), []).append((eid, text))
    return out


def compaction_requests(tables: Mapping[str, pl.DataFrame], *,
                        summary_column: str = "candidate_summary") -> list[CompactionRequest]:
    """One judge request per compaction: task, retained turn, previous summary, BM25 evidence, entries.

    The entries are the entries table's (the one place summaries become entries); a directory without one gets
    them from :func:`workbench.summaries.entries_table`. Evidence comes from the observations of the compressed span
    and from the retained turn (SJC Appendix F); the task instruction comes from the run.

    Parameters
    ----------
    tables : mapping of str to polars.DataFrame
        ``compactions``, ``steps`` and ``runs`` (``entries`` when there is one).
    summary_column : str, default "candidate_summary"
        The summary judged.

    Returns
    -------
    list of CompactionRequest
        One request per compaction, ordered by run and boundary.
    """
    comps = tables["compactions"].sort("run_id", "boundary")
    steps = tables.get("steps", schema.empty("steps"))
    runs = tables.get("runs", schema.empty("runs"))
    tasks = dict(zip(runs.get_column("run_id").to_list(), runs.get_column("task").to_list(), strict=True)) \
        if "task" in runs.columns else {}
    entries = _entries_by_compaction(tables, summary_column)
    index = span_index(steps)
    out: list[CompactionRequest] = []
    rows = comps.iter_rows(named=True)
    while batch := list(islice(rows, RETRIEVAL_BATCH)):
        listed = [entries.get((c["run_id"], c["boundary"]), []) for c in batch]
        outputs, steps_of, tools_of = [], [], []
        for c in batch:
            span = (c["run_id"], c.get("span_start"), c.get("span_end"))
            outs = index.outputs(*span)
            if c.get("retained_turn"):
                outs.append(c["retained_turn"])
            outputs.append(outs)
            steps_of.append(tuple(index.output_steps(*span)))
            tools_of.append(tuple(index.output_tools(*span)))
        evidence = retrieve_many([([text for _, text in listed_], outs)
                                  for listed_, outs in zip(listed, outputs, strict=True)])
        for c, listed_, ev, st, tl in zip(batch, listed, evidence, steps_of, tools_of, strict=True):
            request = _request(task=tasks.get(c["run_id"]) or "", retained_turn=c.get("retained_turn") or "",
                               previous_summary=c.get("previous_summary") or "",
                               entries=[text for _, text in listed_],
                               request_id=request_id(c["run_id"], c["boundary"]), evidence=ev)
            out.append(CompactionRequest(c["run_id"], c["boundary"], tuple(eid for eid, _ in listed_), request,
                                         st, tl))
    return out


# ---------------------------------------------------------------------------
# the evidence table: what each request used, as data


def evidence_table(requests: Iterable[CompactionRequest]) -> pl.DataFrame:
    """One row per evidence passage of each request (schema table ``evidence``): its id (``REQUEST/oIcJ``), the
    request, run and boundary, the entries it was retrieved for and its rank among each one's passages (0 =
    best), the step and part it came from (step null: the retained turn), where it came from in words
    (``describe_source``) and its text.

    Parameters
    ----------
    requests : iterable of CompactionRequest
        The requests.

    Returns
    -------
    polars.DataFrame
        The evidence table.
    """
    cols: dict[str, list[Any]] = {c: [] for c in ("evidence_id", "request_id", "run_id", "boundary", "step", "part",
                                                  "source", "text")}
    # the entry_ids and ranks columns as flat values with their row, grouped once: a list column built from Python
    # lists of lists cost three times as much (issue 62). The grouping uses polars' thread pool, which deadlocks in a
    # forked child: a forked worker (the simulator's) calls evidence_rows instead
    served_rows: list[int] = []
    served_ids: list[str] = []
    served_ranks: list[int] = []
    for cr in requests:
        req = cr.request
        served = _served(cr)
        for j, passage in enumerate(_passages(cr)):
            row = len(cols["text"])
            for key, value in passage.items():
                cols[key].append(value)
            cols["request_id"].append(req.request_id)
            cols["run_id"].append(cr.run_id)
            cols["boundary"].append(cr.boundary)
            for entry, rank in served[j]:
                served_rows.append(row)
                served_ids.append(entry)
                served_ranks.append(rank)
    table_schema = schema.table("evidence").polars_schema()
    frame = pl.DataFrame(cols, schema={k: v for k, v in table_schema.items() if k in cols})
    lists = (pl.DataFrame({"row": served_rows, "entry_ids": served_ids, "ranks": served_ranks},
                          schema={"row": pl.UInt32, "entry_ids": pl.Utf8, "ranks": pl.Int64})
             .group_by("row").agg("entry_ids", "ranks"))  # each row's values in their order (agg keeps it)
    frame = frame.with_row_index("row").join(lists, on="row", how="left").sort("row")
    empty = {name: pl.col(name).fill_null(pl.lit([], dtype=table_schema[name])) for name in ("entry_ids", "ranks")}
    return frame.with_columns(**empty).select(list(table_schema))


def evidence_rows(requests: Iterable[CompactionRequest]) -> list[dict[str, Any]]:
    """:func:`evidence_table`'s rows as dicts (``evidence_table(requests).to_dicts()``), built without the table
    library: what a forked worker may call (the simulator's; polars' thread pool, started in the parent, deadlocks
    a forked child that groups or joins).

    Parameters
    ----------
    requests : iterable of CompactionRequest
        The requests whose evidence is listed.

    Returns
    -------
    list of dict
        One dict per passage, keys in the evidence table's column order.
    """
    from workbench.tables import _schema as schema

    names = list(schema.table("evidence").polars_schema())
    out = []
    for cr in requests:
        req = cr.request
        served = _served(cr)
        for j, passage in enumerate(_passages(cr)):
            row = {**passage, "request_id": req.request_id, "run_id": cr.run_id, "boundary": cr.boundary,
                   "entry_ids": [e for e, _ in served[j]], "ranks": [r for _, r in served[j]]}
            out.append({name: row[name] for name in names})
    return out


def _served(cr: CompactionRequest) -> list[list[tuple[str, int]]]:
    """For each evidence passage of a request, the entries it was retrieved for and its rank among each one's
    passages (0 = best), in entry order."""
    served: list[list[tuple[str, int]]] = [[] for _ in cr.request.evidence_ids]
    for k, picks in enumerate(cr.request.entry_evidence):
        for rank, j in enumerate(picks):
            served[j].append((cr.entry_ids[k], rank))
    return served


def _passages(cr: CompactionRequest) -> list[dict[str, Any]]:
    """Each evidence chunk of a request as a passage: ``evidence_id``, ``step``, ``part``, ``source``, ``text``."""
    req = cr.request
    tools = dict(zip(cr.output_steps, cr.output_tools, strict=True)) if cr.output_tools else {}
    out = []
    for j, chunk_id in enumerate(req.evidence_ids):
        step, part = chunk_step(chunk_id, cr.output_steps)
        out.append({"evidence_id": evidence_id(req.request_id, chunk_id), "step": step, "part": part,
                    "source": describe_source(chunk_id, cr.output_steps, tools), "text": req.evidence[j]})
    return out


def request_evidence(cr: CompactionRequest) -> dict[str, list[dict[str, Any]]]:
    """:func:`entry_evidence` of a request not written as a table yet: each of its entries' passages, best
    first (what ``entry_evidence(evidence_table([cr]), cr.entry_ids)`` reads, without the table)."""
    passages = _passages(cr)
    out: dict[str, list[dict[str, Any]]] = {e: [] for e in cr.entry_ids}
    for k, picks in enumerate(cr.request.entry_evidence):
        out[cr.entry_ids[k]] = [passages[j] for j in picks]
    return out


def evidence_path(scores_path: str | os.PathLike[str]) -> Path:
    """Where the judge writes the evidence table of a scores file: ``evidence.EXT`` beside a directory's own
    ``scores.EXT``, ``NAME.evidence.EXT`` beside any other ``NAME.EXT``."""
    path = Path(scores_path)
    if path.stem == "scores":
        return path.with_name(f"evidence{path.suffix}")
    return path.with_name(f"{path.stem}.evidence{path.suffix}")


def entry_evidence(evidence: pl.DataFrame | pl.LazyFrame, entry_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """Each named entry's evidence passages, best first, from an evidence table (:func:`evidence_table`): a dict
    of ``evidence_id``, ``step``, ``part``, ``source`` and ``text`` per passage; an entry without passages maps to
    an empty list. A lazy table is read for the named entries' requests only.

    Parameters
    ----------
    evidence : polars.DataFrame or polars.LazyFrame
        An evidence table.
    entry_ids : sequence of str
        The entries.

    Returns
    -------
    dict of str to list of dict
        Each entry's passages, best first.
    """
    wanted = list(dict.fromkeys(entry_ids))
    out: dict[str, list[dict[str, Any]]] = {e: [] for e in wanted}
    if not wanted:
        return out
    from workbench.summaries._entries import request_of_entry

    requests = pl.DataFrame({"entry_id": wanted}).select(request_of_entry().alias("request_id")).unique()
    rows = evidence.lazy().filter(pl.col("request_id").is_in(requests.get_column("request_id").implode()))
    exploded = (rows.select("evidence_id", "step", "part", "source", "text", "entry_ids", "ranks")
                .explode("entry_ids", "ranks")
                .filter(pl.col("entry_ids").is_in(pl.Series(wanted).implode()))
                .sort("entry_ids", "ranks").collect())
    for row in exploded.iter_rows(named=True):
        out[row["entry_ids"]].append({k: row[k] for k in ("evidence_id", "step", "part", "source", "text")})
    return out


__all__ = ["CompactionRequest", "JudgeRequest", "SpanIndex", "build_request", "compaction_requests", "entry_evidence",
           "evidence_table", "span_index", "span_outputs"]
