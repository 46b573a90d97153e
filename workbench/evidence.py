"""Evidence for a source judge: a compaction's replaced history turned into one judge request (SJC Appendix F).

The span a summary replaced (:class:`SpanIndex`: each run's tool outputs by step, for fast slicing), the request
built from it (:func:`build_request`: task, retained turn, previous summary, the entries, and the BM25 passages of
:mod:`workbench.retrieval` pooled across entries), and one request per compaction of a directory's tables
(:func:`compaction_requests`). Scoring the requests is :mod:`workbench.judges.requests`.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from itertools import islice
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from workbench import schema
from workbench.judges.base import JudgeRequest
from workbench.retrieval import Evidence, retrieve, retrieve_many
from workbench.summary import Entry, parse


#: compactions whose evidence is retrieved together (:func:`workbench.retrieval.retrieve_many`): large enough that
#: the array work dominates, small enough that its arrays stay a few megabytes
RETRIEVAL_BATCH = 256


@dataclass(frozen=True)
class CompactionRequest:
    run_id: str
    boundary: int
    entries: tuple[Entry, ...]
    request: JudgeRequest


def span_outputs(steps: pl.DataFrame, run_id: str, start: int | None, end: int | None) -> list[str]:
    """Environment outputs (observations) of a run's steps ``start..end`` inclusive."""
    sel = steps.filter(pl.col("run_id") == run_id)
    if start is not None:
        sel = sel.filter(pl.col("step") >= start)
    if end is not None:
        sel = sel.filter(pl.col("step") <= end)
    return [o for o in sel.sort("step").get_column("observation").to_list() if o]


@dataclass(frozen=True)
class SpanIndex:
    """Every run's steps and observations in step order, built once (:func:`span_index`): a span's outputs
    are then two bisections, so building requests grows with the log, not with compactions x steps."""

    runs: dict[str, tuple[list[int], list[str | None]]]

    def outputs(self, run_id: str, start: int | None, end: int | None) -> list[str]:
        """What :func:`span_outputs` returns for the same run and span."""
        numbers, observations = self.runs.get(run_id, ([], []))
        lo = 0 if start is None else bisect_left(numbers, start)
        hi = len(numbers) if end is None else bisect_right(numbers, end)
        return [o for o in observations[lo:hi] if o]

    def output_steps(self, run_id: str, start: int | None, end: int | None) -> list[int]:
        """The step of each of :meth:`outputs` (what an evidence chunk ``o{i}c{j}`` came from: step ``[i]``)."""
        numbers, observations = self.runs.get(run_id, ([], []))
        lo = 0 if start is None else bisect_left(numbers, start)
        hi = len(numbers) if end is None else bisect_right(numbers, end)
        return [n for n, o in zip(numbers[lo:hi], observations[lo:hi], strict=True) if o]


def span_index(steps: pl.DataFrame) -> SpanIndex:
    """The :class:`SpanIndex` of a steps table (one sort, one partition)."""
    runs: dict[str, tuple[list[int], list[str | None]]] = {}
    if steps.height:
        ordered = steps.select("run_id", "step", "observation").sort("run_id", "step")
        for (run_id,), part in ordered.partition_by("run_id", as_dict=True, maintain_order=True).items():
            runs[str(run_id)] = (part.get_column("step").to_list(), part.get_column("observation").to_list())
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


def compaction_requests(tables: dict[str, pl.DataFrame], *, summary_column: str = "candidate_summary") -> list[CompactionRequest]:
    """One judge request per compaction: task, retained turn, previous summary, BM25 evidence, entries.

    Evidence comes from the observations of the compressed span and from the retained
    turn (SJC Appendix F); the task instruction comes from the run.
    """
    comps = tables["compactions"].sort("run_id", "boundary")
    steps = tables.get("steps", schema.empty("steps"))
    runs = tables.get("runs", schema.empty("runs"))
    tasks = dict(zip(runs.get_column("run_id").to_list(), runs.get_column("task").to_list(), strict=True)) \
        if "task" in runs.columns else {}
    index = span_index(steps)
    out: list[CompactionRequest] = []
    rows = comps.iter_rows(named=True)
    while batch := list(islice(rows, RETRIEVAL_BATCH)):
        parsed = [tuple(parse(c[summary_column] or "")) for c in batch]  # parse remembers the texts it has seen
        outputs = []
        for c in batch:
            outs = index.outputs(c["run_id"], c.get("span_start"), c.get("span_end"))
            if c.get("retained_turn"):
                outs.append(c["retained_turn"])
            outputs.append(outs)
        evidence = retrieve_many([([e.text for e in entries], outs) for entries, outs in zip(parsed, outputs,
                                                                                             strict=True)])
        for c, entries, ev in zip(batch, parsed, evidence, strict=True):
            request = _request(task=tasks.get(c["run_id"]) or "", retained_turn=c.get("retained_turn") or "",
                               previous_summary=c.get("previous_summary") or "", entries=[e.text for e in entries],
                               request_id=f"{c['run_id']}/b{c['boundary']}", evidence=ev)
            out.append(CompactionRequest(c["run_id"], c["boundary"], entries, request))
    return out
