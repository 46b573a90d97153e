"""From tables to judge requests and back to a scores table (one request per compaction)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import polars as pl

from workbench import schema
from workbench.validation import validate
from workbench.judges.base import JudgeRequest, JudgeResult, SourceJudge
from workbench.retrieval import retrieve
from workbench.entries import entry_id
from workbench.summary import Entry, parse


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


def build_request(*, task: str, retained_turn: str, previous_summary: str, outputs: Sequence[str],
                  entries: Sequence[str], request_id: str = "") -> JudgeRequest:
    """The SJC judge request at one boundary (Appendix F), the one builder every caller uses.

    ``outputs`` are the environment outputs the evidence may come from (the compressed
    span's observations and the retained turn); BM25 retrieval picks each entry's passages,
    expanded to their chunks and pooled, and the request records which chunks each entry got.
    """
    ev = retrieve(list(entries), list(outputs))
    index = {ch.chunk_id: k for k, ch in enumerate(ev.chunks)}
    return JudgeRequest(
        task=task,
        retained_turn=retained_turn,
        previous_summary=previous_summary,
        evidence=tuple(ev.texts()),
        entries=tuple(entries),
        request_id=request_id,
        evidence_ids=tuple(ch.chunk_id for ch in ev.chunks),
        entry_evidence=tuple(tuple(index[cid] for cid in ids) for ids in ev.per_entry),
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
    out = []
    for c in comps.iter_rows(named=True):
        entries = tuple(parse(c[summary_column] or ""))
        outputs = index.outputs(c["run_id"], c.get("span_start"), c.get("span_end"))
        if c.get("retained_turn"):
            outputs.append(c["retained_turn"])
        request = build_request(task=tasks.get(c["run_id"]) or "", retained_turn=c.get("retained_turn") or "",
                                previous_summary=c.get("previous_summary") or "", outputs=outputs,
                                entries=[e.text for e in entries], request_id=f"{c['run_id']}/b{c['boundary']}")
        out.append(CompactionRequest(c["run_id"], c["boundary"], entries, request))
    return out


def _score_jobs(judge: SourceJudge, jobs: list[tuple[CompactionRequest, int]], concurrency: int,
                progress: Callable[[], None] | None = None) -> list[JudgeResult]:
    """Score (request, repeat) jobs with up to ``concurrency`` at once; results in job order."""
    def one(job: tuple[CompactionRequest, int]) -> JudgeResult:
        cr, r = job
        res = judge.score(cr.request, repeat=r)
        if progress:
            progress()
        return res

    if concurrency > 1 and len(jobs) > 1:
        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            return list(pool.map(one, jobs))
    return [one(job) for job in jobs]


def _score_shard(args: tuple[SourceJudge, list[tuple[CompactionRequest, int]], int]) -> tuple[list[JudgeResult], list[Any]]:
    """A Ray task: one shard of compactions scored by this worker's copy of the judge; returns the results and
    the requests its client made (for the driver's accounting)."""
    judge, jobs, concurrency = args
    results = _score_jobs(judge, jobs, concurrency)
    client = getattr(judge, "client", None)
    return results, list(client.usages) if client is not None else []


def score_requests(
    requests: list[CompactionRequest],
    judge: SourceJudge,
    *,
    repeat: int = 0,
    repeats: int = 1,
    concurrency: int = 1,
    progress: Callable[[], None] | None = None,
    executor: str = "local",
    address: str | None = None,
    shard_size: int | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Score every request with ``judge``; return the scores table and one accounting row per (compaction, repeat).

    With ``repeats`` > 1 every request is scored ``repeats`` times (repeat indices ``repeat``,
    ``repeat + 1`` ...), one scores row per repeat. Up to ``concurrency`` compactions are scored
    at once (the judge's client bounds the requests in flight); rows come out in input order
    whatever order they finish in. ``progress`` is called once per finished compaction.

    ``executor="ray"`` shards the compactions (``shard_size`` each; 64 shards by default) over a
    Ray cluster (``address``; see :mod:`workbench.executors`): each worker scores its shard with
    its own copy of the judge (and ``concurrency`` requests in flight), the driver gathers the rows
    in input order and the workers' requests into the judge client's accounting. The tables are
    identical to the local executor's for the same judge and cache.
    """
    jobs = [(cr, r) for r in range(repeat, repeat + repeats) for cr in requests]
    if executor == "ray":
        from workbench.executors import ray_map, shards

        pieces = shards(len(jobs), shard_size or max(1, -(-len(jobs) // 64)))

        def advance(i: int) -> None:
            for _ in pieces[i]:
                if progress:
                    progress()

        out = ray_map(_score_shard, [(judge, [jobs[i] for i in piece], concurrency) for piece in pieces],
                      address=address, progress=advance)
        results = [res for shard_results, _ in out for res in shard_results]
        client = getattr(judge, "client", None)
        for _, usages in out:  # the workers' requests, in the driver's accounting
            if client is not None:
                client.usages.extend(usages)
                client.sent += sum(u.attempts for u in usages if not u.cached)
        done = [(cr, r, res) for (cr, r), res in zip(jobs, results, strict=True)]
    elif executor == "local":
        done = [(cr, r, res) for (cr, r), res in zip(jobs, _score_jobs(judge, jobs, concurrency, progress),
                                                     strict=True)]
    else:
        raise ValueError(f"executor: expected 'local' or 'ray', got {executor!r}")
    rows: list[dict[str, object]] = []
    acct: list[dict[str, object]] = []
    for cr, r, res in done:
        for e, score, reason, rid in zip(cr.entries, res.scores, res.reasons, res.request_ids, strict=True):
            ev_ids = [cr.request.evidence_ids[j] for j in cr.request.entry_evidence[e.position]] \
                if cr.request.entry_evidence else []
            rows.append({"entry_id": entry_id(cr.run_id, cr.boundary, e.position), "judge": judge.name,
                         "repeat": r, "score": score, "request_id": rid, "evidence_ids": ev_ids,
                         "reason": reason})
        acct.append({"run_id": cr.run_id, "boundary": cr.boundary, "repeat": r, "judge": judge.name,
                     "entries": len(cr.entries), "requests": res.requests, "sent": res.sent,
                     "input_tokens": res.input_tokens, "output_tokens": res.output_tokens, "cost_usd": res.cost_usd})
    scores = pl.DataFrame(rows, schema=schema.table("scores").polars_schema()) if rows else schema.empty("scores")
    accounting = pl.DataFrame(acct, schema={"run_id": pl.Utf8, "boundary": pl.Int64, "repeat": pl.Int64,
                                            "judge": pl.Utf8, "entries": pl.Int64, "requests": pl.Int64,
                                            "sent": pl.Int64, "input_tokens": pl.Int64, "output_tokens": pl.Int64,
                                            "cost_usd": pl.Float64})
    return validate("scores", scores), accounting
