"""Scoring judge requests (one per compaction, :mod:`workbench.summaries._evidence`) into a scores table, here or on Ray."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from workbench.tables import _schema as schema
from workbench.summaries._entries import evidence_id
from workbench.summaries._evidence import CompactionRequest
from workbench.judges._base import JudgeResult, SourceJudge
from workbench.tables._validation import validate


def _score_jobs(judge: SourceJudge, jobs: list[tuple[CompactionRequest, int]], concurrency: int,
                progress: Callable[[], None] | None = None) -> list[JudgeResult]:
    """Score (request, repeat) jobs with up to ``concurrency`` at once; results in job order."""
    def one(job: tuple[CompactionRequest, int]) -> JudgeResult:
        cr, r = job
        res = judge.score(cr.request, repeat=r)
        if progress:
            progress()
        return res

    client = getattr(judge, "client", None)
    if concurrency > 1 and len(jobs) > 1 and client is not None:  # a judge that waits on a server
        from workbench._util.executors import thread_map

        # SIGTERM or Ctrl-C while waiting: stop sending, do not wait
        return thread_map(one, jobs, concurrency, on_stop=client.stop, what="judge requests")
    return [one(job) for job in jobs]  # an offline judge computes: threads would only contend for the interpreter


def _score_shard(args: tuple[SourceJudge, list[tuple[CompactionRequest, int]], int]) -> tuple[list[JudgeResult], list[Any]]:
    """A Ray task: one shard of compactions scored by this worker's copy of the judge; returns the results and
    the requests its client made (for the driver's accounting)."""
    from workbench._util.executors import rare_collections

    judge, jobs, concurrency = args
    with rare_collections():
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
    Ray cluster (``address``; see :mod:`workbench._util.executors`): each worker scores its shard with
    its own copy of the judge (and ``concurrency`` requests in flight), the driver gathers the rows
    in input order and the workers' requests into the judge client's accounting. The tables are
    identical to the local executor's for the same judge and cache.

    Parameters
    ----------
    requests : list of workbench.summaries.CompactionRequest
        One request per compaction (:func:`workbench.summaries.compaction_requests`).
    judge : SourceJudge
        The judge.
    repeat : int, default 0
        The first repeat index.
    repeats : int, default 1
        Times every request is scored.
    concurrency : int, default 1
        Compactions scored at once.
    progress : callable, optional
        Called once per finished compaction.
    executor : {"local", "ray"}, default "local"
        Where the requests are scored.
    address : str, optional
        The Ray cluster's address.
    shard_size : int, optional
        Compactions per Ray shard.

    Returns
    -------
    scores : polars.DataFrame
        The scores table, one row per entry and repeat, in input order.
    accounting : polars.DataFrame
        One row per (compaction, repeat): requests, tokens, latency and failures.
    """
    # by compaction, then repeat: the rows come out in the same order however the runs are batched
    jobs = [(cr, r) for cr in requests for r in range(repeat, repeat + repeats)]
    if executor == "ray":
        from workbench._util.executors import ray_map, shards

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
                client.record(usages)
        done = [(cr, r, res) for (cr, r), res in zip(jobs, results, strict=True)]
    elif executor == "local":
        done = [(cr, r, res) for (cr, r), res in zip(jobs, _score_jobs(judge, jobs, concurrency, progress),
                                                     strict=True)]
    else:
        raise ValueError(f"executor: expected 'local' or 'ray', got {executor!r}")
    cols: dict[str, list[Any]] = {c: [] for c in ("entry_id", "repeat", "score", "request_id", "reason")}
    evidence_flat: list[str] = []  # every entry's evidence ids, one after the other, and where each entry's end
    evidence_ends: list[int] = [0]
    acct: list[dict[str, object]] = []
    for cr, r, res in done:  # columns, a request at a time: a million scores build in a second
        request = cr.request
        n = len(cr.entry_ids)
        if not len(res.scores) == len(res.reasons) == len(res.request_ids) == n:
            raise ValueError(f"{judge.name} judge gave {len(res.scores)} scores, {len(res.reasons)} reasons and "
                             f"{len(res.request_ids)} request ids for the {n} entries of {request.request_id}")
        cols["entry_id"].extend(cr.entry_ids)
        cols["repeat"].extend([r] * n)
        cols["score"].extend(res.scores)
        cols["request_id"].extend(res.request_ids)
        cols["reason"].extend(res.reasons)
        if request.entry_evidence:
            ids = [evidence_id(request.request_id, e) for e in request.evidence_ids]  # each passage's id once
            for k in range(n):
                evidence_flat.extend([ids[j] for j in request.entry_evidence[k]])
                evidence_ends.append(len(evidence_flat))
        else:
            evidence_ends.extend([len(evidence_flat)] * n)
        acct.append({"run_id": cr.run_id, "boundary": cr.boundary, "repeat": r, "judge": judge.name,
                     "entries": len(cr.entry_ids), "requests": res.requests, "sent": res.sent,
                     "input_tokens": res.input_tokens, "output_tokens": res.output_tokens, "cost_usd": res.cost_usd})
    scores_schema = schema.table("scores").polars_schema()
    if cols["entry_id"]:
        import pyarrow as pa

        # the list column from its values and offsets (a Series per entry's list would take most of the time)
        evidence = pl.Series("evidence_ids", pa.ListArray.from_arrays(pa.array(evidence_ends, pa.int64()),
                                                                      pa.array(evidence_flat, pa.large_string())))
        scores = pl.DataFrame({**cols, "judge": [judge.name] * len(cols["entry_id"])},
                              schema={c: scores_schema[c] for c in (*cols, "judge")}, strict=False)
        scores = scores.with_columns(evidence.cast(scores_schema["evidence_ids"])).select(list(scores_schema))
    else:
        scores = schema.empty("scores")
    accounting = pl.DataFrame(acct, schema={"run_id": pl.Utf8, "boundary": pl.Int64, "repeat": pl.Int64,
                                            "judge": pl.Utf8, "entries": pl.Int64, "requests": pl.Int64,
                                            "sent": pl.Int64, "input_tokens": pl.Int64, "output_tokens": pl.Int64,
                                            "cost_usd": pl.Float64})
    return validate("scores", scores), accounting


__all__ = ["score_requests"]
