"""Judging a whole directory of tables: requests a batch of runs at a time, scores streamed to disk, one report.

:func:`judge_directory` is what ``workbench judge`` runs, callable from a notebook as it is::

    from workbench.judges import make_judge
    from workbench.judges._run import judge_directory

    report = judge_directory("data/testbed", make_judge("lexical"), "build/scores.parquet", tau=0.5)
    print(report)   # build/scores.parquet: 5210 scores by lexical (0 without a usable answer); ...

Memory holds one batch of runs (``JUDGE_BATCH_RUNS``), never the log: each table is read once for its
``run_id`` column, then a batch reads only the rows between its runs' first and last (see
``run_batches``), builds its requests from the entries table (SJC Appendix F evidence), scores them and writes
the scores and the evidence the requests used (:func:`workbench.summaries.evidence_table`, at
``evidence_path`` of ``out``) as validated Parquet parts
(:class:`workbench.tables.PartWriter`); nothing appears at ``out`` until every batch is done.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from workbench.summaries._entries import entries_table
from workbench.summaries._evidence import compaction_requests, evidence_path, evidence_table
from workbench._util.executors import rare_collections
from workbench.judges._base import SourceJudge
from workbench.judges._requests import score_requests
from workbench.llm._account import FAIL_FAST_AFTER, RunAccount
from workbench._util.progress import Progress
from workbench.tables._frames import batches_by_run, height, slices
from workbench.tables._files import TRAJECTORY_TABLES, PartWriter, open_tables, table_file
from workbench.tables._validation import validate
from workbench.errors import SchemaError

#: the tables a judge run reads: the trajectory and, when the directory has one, its entries table
JUDGE_TABLES = (*TRAJECTORY_TABLES, "entries")

#: runs whose judge requests are built and scored together (the requests of a whole large log do not fit); on the
#: testbed (373,410 entries) 500 runs a batch peak at 569 MiB against 654 for 1,000, for 3% more time (250: 511 MiB,
#: 10% more time)
JUDGE_BATCH_RUNS = 500
#: runs per Ray task: small enough that every worker gets several, large enough that a task is not all overhead
RAY_BATCH_RUNS = 200

Tables = Mapping[str, pl.DataFrame | pl.LazyFrame]


@dataclass(frozen=True)
class JudgeReport:
    """What a directory judge run did; ``str(report)`` is the summary line ``workbench judge`` prints."""

    out: Path
    judge: str
    scores: int
    null_scores: int
    requests: int
    sent: int
    cached: int
    failures: dict[str, int] = field(default_factory=dict)
    tau: float | None = None
    kept: int = 0
    pruned: int = 0
    #: the evidence table the requests used (``evidence_path`` of ``out``)
    evidence: Path | None = None
    #: attempts that reached the network (a request retried after a timeout is one request sent, two attempts)
    attempts: int | None = None
    #: the models the answers say made them: those read from the cache, those sent now (name -> answers)
    cached_models: dict[str, int] = field(default_factory=dict)
    sent_models: dict[str, int] = field(default_factory=dict)
    #: usable answers the cache could not store (kept all the same), and the first reason
    uncached: int = 0
    uncached_reason: str | None = None
    #: cache entries that did not match their request or their checksum: not served, asked again
    mismatched: int = 0

    @property
    def failed(self) -> int:
        return sum(self.failures.values())

    @property
    def nothing_usable(self) -> bool:
        """Scores were asked for and none got a usable answer."""
        return bool(self.scores) and self.null_scores == self.scores

    def lines(self) -> list[str]:
        reasons = ", ".join(f"{reason}: {n}" for reason, n in self.failures.items())
        attempts = f" ({self.attempts} attempts)" if self.attempts is not None and self.attempts != self.sent else ""
        by = f" (made by {_names(self.cached_models)})" if self.cached_models else ""
        out = [f"{self.out}: {self.scores} scores by {self.judge} ({self.null_scores} without a usable answer); "
               f"{self.requests} requests, {self.sent} sent{attempts}, {self.cached} answered from cache{by}, "
               f"{self.failed} failed" + (f" ({reasons})" if reasons else "")]
        stale = {m: n for m, n in self.cached_models.items() if m not in self.sent_models}
        if self.sent_models and stale:
            out.append(f"warning: the server now says its answers are made by {_names(self.sent_models)}, but "
                       f"{sum(stale.values())} answers read from the cache were made by {_names(stale)}: the scores "
                       "mix models (--refresh asks everything again)")
        if self.uncached:
            out.append(f"warning: {self.uncached} answers could not be stored in the cache ({self.uncached_reason}); "
                       "they are in the scores, and a re-run asks them again")
        if self.mismatched:
            out.append(f"warning: {self.mismatched} cache entries did not match their request or their checksum "
                       "(edited, or written by another program): not used, asked again")
        if self.evidence is not None:
            out.append(f"{self.evidence}: the evidence passages the requests used")
        if self.tau is not None:
            out.append(f"tau={self.tau}: {self.kept} entries kept, {self.pruned} pruned")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


def _names(models: dict[str, int]) -> str:
    shown = [f"{name!r}" + (f" ({n})" if len(models) > 1 else "") for name, n in list(models.items())[:3]]
    return ", ".join(shown) + (f" and {len(models) - 3} more" if len(models) > 3 else "")


def _open(path: Path) -> Tables:
    """The tables a judge reads: a table directory's opened as scans (:func:`~workbench.tables.open_tables`), a
    log's read whole (:func:`~workbench.adapters.read_log`)."""
    need = ("runs", "compactions")
    if path.is_dir() and table_file(path, "runs") is not None:
        return open_tables(path, JUDGE_TABLES, need=need)
    from workbench.adapters import read_log
    from workbench.adapters._frank import is_frank

    if path.is_dir() and not is_frank(path) and not any(path.rglob("*.jsonl")):
        raise SchemaError("no tables here (no runs.parquet or runs.jsonl); expected a directory written by `workbench "
                          "import` or `workbench simulate`, a log file, a directory of sessions, or FRANK's files",
                          file=str(path))
    tables = {name: frame for name, frame in read_log(path).items() if name in JUDGE_TABLES}
    missing = [name for name in need if name not in tables]
    if missing:
        raise SchemaError(f"no {missing[0]} in this log; expected a log with compactions", file=str(path))
    return tables


def judge_directory(
    data: str | os.PathLike[str] | Tables,
    judge: SourceJudge,
    out: str | os.PathLike[str],
    *,
    repeats: int = 1,
    tau: float | None = None,
    deadline: float | None = None,
    concurrency: int = 4,
    executor: str = "local",
    address: str | None = None,
    progress: bool = False,
    fail_fast_after: int = FAIL_FAST_AFTER,
) -> JudgeReport:
    """Score every summary entry of a directory's compactions with ``judge``; write the scores table to ``out``.

    ``data`` is a workbench directory (runs, steps, compactions, and entries when it has them) or its tables
    already opened (:func:`workbench.tables.open_tables`); the entries judged are the entries table's (parsed from
    the candidate summaries when there is none). The evidence each request used is written beside ``out``
    (``evidence_path``). ``repeats`` asks every request that many times (SJC Section 5.4;
    a ``repeat`` column tells them apart); ``tau`` also counts what SJC pruning keeps (entries with score >= tau
    or no usable answer, :func:`workbench.summaries.prune_compactions`); ``deadline`` bounds the whole run in seconds
    (what is left then gets a null score with reason ``deadline``). ``executor="ray"`` shards each batch over a
    Ray cluster (``address``). ``progress`` draws a bar (or periodic lines) on standard error. ``fail_fast_after``
    unusable answers of one kind in a row, with none usable, stop the run (0: never). The deadline, the fail-fast
    limit and the progress reach the judge's client as one :class:`~workbench.llm.RunAccount`
    (:meth:`~workbench.llm.LLMClient.running`), which also holds the run's accounting.

    Parameters
    ----------
    data : str or os.PathLike or mapping of str to polars.DataFrame or polars.LazyFrame
        A workbench directory, or its tables opened.
    judge : SourceJudge
        The judge (:func:`make_judge`).
    out : str or os.PathLike
        The scores file (``.parquet`` or ``.jsonl``); the evidence is written beside it.
    repeats : int, default 1
        Times every request is asked.
    tau : float, optional
        Also count the entries SJC pruning at ``tau`` keeps.
    deadline : float, optional
        Seconds the whole run may take.
    concurrency : int, default 4
        Compactions scored at once.
    executor : {"local", "ray"}, default "local"
        Where batches are scored.
    address : str, optional
        The Ray cluster's address.
    progress : bool, default False
        Draw progress on standard error.
    fail_fast_after : int, default 20
        Unusable answers of one kind in a row, with none usable, that stop the run (0: never).

    Returns
    -------
    JudgeReport
        What was scored and written, what failed and what it cost; ``str(report)`` is the CLI's summary line.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from workbench.datasets import import_log
    >>> from workbench.judges import judge_directory, make_judge
    >>> from workbench.datasets import examples
    >>> out = Path(tempfile.mkdtemp())
    >>> _ = import_log(examples("invoice_log.jsonl"), out / "data", entries=True)
    >>> report = judge_directory(out / "data", make_judge("lexical"), out / "scores.parquet", tau=0.5)
    >>> report.scores, report.null_scores, report.kept, report.pruned
    (61, 0, 51, 10)
    """
    if isinstance(data, (str, os.PathLike)):
        check_scores_path(data, out)
        data = _open(Path(data))
    tables = data
    client = getattr(judge, "client", None)
    by_request = client is not None and executor == "local"  # a Ray worker's requests are not seen here
    total = _request_count(tables, judge) if by_request else height(tables["compactions"])
    accounts = []
    kept = pruned = n_scores = n_null = 0
    with ExitStack() as stack:
        bar = stack.enter_context(Progress(total * repeats, f"judge {judge.name}",
                                           "requests" if by_request else "compactions", enabled=progress))
        writer = stack.enter_context(PartWriter("scores", out))
        evidence_writer = stack.enter_context(PartWriter("evidence", evidence_path(out)))
        account = RunAccount(deadline=deadline, fail_fast_after=fail_fast_after,
                             on_event=bar.event if by_request else None)
        if client is not None:
            stack.enter_context(client.running(account))
        if executor == "ray":  # each Ray task builds and scores a batch of runs: the whole work is sharded
            from workbench._util.executors import ray_imap

            jobs = ((batch, judge, repeats, concurrency, tau, True) for batch in run_batches(tables, RAY_BATCH_RUNS))
            done: Iterator[_Batch] = ray_imap(_judge_batch, jobs, address=address)
        elif executor == "local":
            done = (_judge_batch((batch, judge, repeats, concurrency, tau, False), None if by_request else bar.advance)
                    for batch in run_batches(tables, JUDGE_BATCH_RUNS))
        else:
            raise ValueError(f"executor: expected 'local' or 'ray', got {executor!r}")
        for result in done:
            part = result.scores
            writer.add(part)  # to disk a batch at a time: the scores of a large log are not held in memory
            evidence_writer.add(result.evidence)
            n_scores += part.height
            n_null += part.get_column("score").null_count()
            accounts.append(result.account)
            kept += result.kept
            pruned += result.pruned
            if executor == "ray":
                if client is not None:  # the workers' requests, in the driver's accounting
                    client.record(result.usages)
                for _ in range(result.account.height):  # one row per (compaction, repeat), as the bar counts
                    bar.advance()
        written = writer.finish()
        written_evidence = evidence_writer.finish()
    usages = account.usages
    failed = account.failures()
    n_requests = len(usages) if client is not None else int(pl.concat(accounts).get_column("requests").sum())
    from collections import Counter

    uncached = [u.uncached for u in usages if u.uncached]
    cache = getattr(client, "cache", None)
    return JudgeReport(out=written, judge=judge.name, scores=n_scores, null_scores=n_null, requests=n_requests,
                       sent=sum(1 for u in usages if not u.cached and u.attempts),
                       cached=sum(1 for u in usages if u.cached), failures=dict(failed.most_common()), tau=tau,
                       kept=kept, pruned=pruned, evidence=written_evidence,
                       attempts=sum(u.attempts for u in usages if not u.cached),
                       cached_models=dict(Counter(u.model for u in usages if u.cached and u.model).most_common()),
                       sent_models=dict(Counter(u.model for u in usages if not u.cached and u.model).most_common()),
                       uncached=len(uncached), uncached_reason=uncached[0] if uncached else None,
                       mismatched=getattr(cache, "mismatched", 0))


def check_scores_path(data: str | os.PathLike[str], out: str | os.PathLike[str], *, force: bool = False) -> None:
    """The scores (and the evidence beside them) never replace another table of the directory judged: ``out`` may
    be its ``scores`` table (then the evidence is its ``evidence`` table) or any file outside it, not its steps
    or runs; an existing file there must be a scores table (an earlier run's) unless ``force``, and never a link
    (the one ``--out`` rule: :func:`~workbench._util.atomic.check_out_file`). :class:`~workbench.errors.OutputRefused`
    otherwise."""
    from workbench.tables import _schema as schema
    from workbench._util.atomic import OutputRefused, check_out_file

    directory, target = Path(data).resolve(), Path(out).resolve()
    if target == directory or directory in target.parents and target.is_dir():
        raise OutputRefused(out, "is the directory judged; expected a scores file (.parquet or .jsonl)")
    for path, own in ((target, "scores"), (evidence_path(target), "evidence")):
        if path.parent == directory and path.stem in schema.TABLES and path.stem != own:
            raise OutputRefused(out, f"would replace the {path.stem} table of {data}; the scores go to "
                                     f"{Path(data) / 'scores.parquet'} or a file of their own")
    check_out_file(out, what="scores table", force=force,
                   columns=[c.name for c in schema.table("scores").columns if not c.nullable])
    beside = evidence_path(target)
    if beside.exists() and not _holds_evidence(beside):
        raise OutputRefused(out, f"its evidence would replace {beside}, which is not an evidence table the judge "
                                 "wrote; move that file or name another scores file")


def _holds_evidence(path: Path) -> bool:
    """Whether ``path`` is an evidence table (a judge's earlier run), by its columns: Parquet's schema, or the keys
    of a JSONL file's first record; anything unreadable is not."""
    import json

    from workbench.tables import _schema as schema

    keys = {c.name for c in schema.table("evidence").columns if not c.nullable}
    try:
        if path.stat().st_size == 0:  # nothing to lose
            return True
        if path.suffix == ".parquet":
            names = set(pl.read_parquet_schema(path))
        else:
            with open(path, encoding="utf-8") as fh:
                first = json.loads(fh.readline() or "{}")
            names = set(first) if isinstance(first, dict) else set()
    except (OSError, ValueError, pl.exceptions.PolarsError):
        return False
    return keys <= names


@dataclass(frozen=True)
class _Batch:
    """One batch of runs judged: its scores, the evidence its requests used, its accounting, what pruning at tau
    kept, and (on a Ray worker) the requests the worker's client made."""

    scores: pl.DataFrame
    evidence: pl.DataFrame
    account: pl.DataFrame
    kept: int = 0
    pruned: int = 0
    usages: list[Any] = field(default_factory=list)


def _judge_batch(job: tuple[dict[str, pl.DataFrame], SourceJudge, int, int, float | None, bool],
                 progress: Callable[[], None] | None = None) -> _Batch:
    """Build a batch's requests, score them (here), and count what pruning at tau keeps; the same work locally
    and as a Ray task (``remote``: ``judge`` is the worker's copy, whose client's requests go back to the
    driver's accounting)."""
    batch, judge, repeats, concurrency, tau, remote = job
    with rare_collections():  # the evidence table too: its rows are many small objects (issue 62)
        requests = compaction_requests(batch)
        part, account = score_requests(requests, judge, repeats=repeats, concurrency=concurrency, progress=progress)
        evidence = validate("evidence", evidence_table(requests))
    kept = pruned = 0
    if tau is not None:  # SJC's prune operator keeps an entry scored >= tau or without a usable answer
        first = part.filter(pl.col("repeat") == 0).get_column("score")
        pruned = int((first < tau).sum())
        kept = first.len() - pruned
    client = getattr(judge, "client", None)
    return _Batch(part, evidence, account, kept, pruned,
                  list(client.usages) if remote and client is not None else [])


def _request_count(tables: Tables, judge: SourceJudge) -> int:
    """Requests the run will send: one per entry for the OpenAI judge, one per compaction otherwise."""
    if judge.name != "openai":
        return height(tables["compactions"])
    if "entries" in tables:
        return height(tables["entries"])
    comps = tables["compactions"].lazy().select("run_id", "boundary", "candidate_summary")
    return sum(entries_table(batch).height for batch in slices(comps, 20_000))


def run_batches(tables: Tables, size: int) -> Iterator[dict[str, pl.DataFrame]]:
    """The trajectory tables of ``size`` runs at a time, each batch validated: memory holds a batch, not the log.

    Runs come in the order they first appear in the compactions table (:func:`workbench.tables.batches_by_run`
    reads each table once for its ``run_id`` column, then each batch as a slice).
    """
    frames = {name: frame for name, frame in tables.items() if name in JUDGE_TABLES}
    for batch in batches_by_run(frames, size, order="compactions"):
        yield {name: validate(name, frame) for name, frame in batch.items()}


__all__ = ["judge_directory", "JudgeReport", "Tables"]
