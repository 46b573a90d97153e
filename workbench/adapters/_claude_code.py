"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``) as runs, steps and compactions.

One JSON object a line. The fields read (everything else is ignored):

* ``type``: ``user`` / ``assistant`` carry a ``message``; ``system`` lines matter only with
  ``subtype == "compact_boundary"`` (a compaction; ``compactMetadata`` gives ``trigger``,
  ``manual`` or ``auto``, ``preTokens``, and for a partial compaction the kept messages,
  ``preservedSegment`` ``{headUuid, tailUuid}`` or ``preservedMessages``); other types (titles, file
  snapshots, progress, attachments) only link the tree.
* ``sessionId``: the run (a boundary line without one belongs to the session of the line before it); one
  session written over several files is one run (a record copied into a later file, same ``uuid``, is read
  once). ``isSidechain``: the line belongs to a sub-agent (in the session's file, in ``agent-ID.jsonl`` beside
  it or under ``SESSION/subagents/``), which becomes a run of its own, ``SESSION/sidechain/AGENT`` (``agentId``
  when present, else the ``uuid`` of the sidechain's first line), with ``parent_run_id`` naming the session.
  ``isMeta``: injected context, not a turn; ``isCompactSummary``: the user line that carries the summary.
* ``uuid``, ``parentUuid``, ``logicalParentUuid``: the transcript is a tree. A rewind leaves a dead branch (a
  second child of a message); a compaction starts a new root whose ``logicalParentUuid`` points back. The
  session's history is the branch it continued on: the path from its last message back to the root (through
  ``logicalParentUuid`` at a boundary), plus each tool result of a call on that path. Every other user or
  assistant message is on an abandoned branch: never a step, never evidence; the run's
  ``abandoned_branches`` counts those branches.
* ``message.content``: a string, or a list of blocks: ``text``, ``tool_use`` (``id``,
  ``name``, ``input``), ``tool_result`` (``tool_use_id``, ``content`` as a string or text
  blocks, ``is_error``); ``thinking`` blocks are skipped. ``message.model`` names the run's model.
* ``message.usage``: ``input_tokens`` (fresh), ``cache_read_input_tokens``, ``cache_creation_input_tokens``,
  ``output_tokens``. One API reply written as several lines (one per content block) shares ``message.id``
  and ``requestId``: its usage counts once, and its text goes with its first tool call.
* A run's ``scenario_id`` is its session (a sub-agent's is its parent's): the cluster that intervals over
  entries resample, since a session's entries are not independent.
* ``timestamp``, ``cwd``, ``version``, ``gitBranch``: a step's time; the run's ``started_at``/``ended_at``,
  ``project`` (the working directory), ``client_version`` and ``git_branch``; ``project_dir`` is the
  directory the session file lies in (Claude Code's encoded project name).

Steps: every ``tool_use`` is a step (tool = name, args = input) whose observation is its
``tool_result`` (an error result keeps its text, ``error`` = true); an assistant text without
tool calls is a step with no tool; a user's typed message is a step observed from the user.
A step's ``input_tokens`` is its whole prompt (fresh + cache read + cache creation, as Peak needs);
``cache_read_tokens`` and ``cache_creation_tokens`` keep the cache's share apart.
A compaction's ``step`` is the first step after it; its span is every step since the previous
boundary (the history it replaced) except the messages a partial compaction kept, which are its
``retained_turn``; its summary is the compact-summary line's text. A span with no step (a compaction whose
``logicalParentUuid`` names a message the files do not hold) is empty: ``span_end`` = ``span_start`` - 1.

Documented behaviour for the awkward cases: a compact-summary line with no boundary before it is
an error naming the line; a boundary whose summary line never comes is not a compaction row (the
run's ``unsummarized_boundaries`` counts it); a ``tool_result`` whose ``tool_use`` is missing
is a step with no tool and ``orphan_result`` = true; a compaction whose parent is missing is imported with an
empty span. These three also raise a :class:`TranscriptWarning` naming the file and line. One session id under
two project directories (a session copied or resumed elsewhere) is one run per directory, ``PROJECT_DIR/SESSION``,
with a warning naming both files. A file's half-written last line (a session still
open) is skipped with a warning. Nothing here sends anything anywhere or runs any content.
"""

from __future__ import annotations

import itertools
import os
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from workbench.adapters import _claude_lines as claude_sessions
from workbench.adapters import _logfiles as logfiles
from workbench.adapters._logfiles import session_files
from workbench.adapters._staging import Parts, collect_runs
from workbench.adapters._claude_lines import (MODEL_USAGE, USAGE_DEFINITION, TranscriptWarning, _batch_job, _count_spends,
                                       _file_groups, _group_runs, _runs_of, _say_notes, selected)
from workbench._util.jsonl import BadLines


def read_claude_code(path: str | os.PathLike[str], *, bad: BadLines | None = None, since: str | None = None,
                     until: str | None = None, project: str | None = None,
                     files: Sequence[Path] | None = None) -> dict[str, pl.DataFrame]:
    """Load one Claude Code session file, or every ``*.jsonl`` below a directory, into the trajectory tables.

    A file's half-written last line (a session still open) is skipped with a warning; with
    ``bad.skip_invalid`` every bad line is skipped and recorded in ``bad`` instead of failing.
    ``since``/``until`` (ISO dates or times, compared with the session's first and last timestamps) and
    ``project`` (a part of its working directory or project directory name) select sessions; ``files`` reads
    those files instead of every one below ``path`` (a home that also holds Codex sessions).

    Parameters
    ----------
    path : str or os.PathLike
        A session file, or a directory searched for ``*.jsonl`` (``~/.claude/projects`` or one project's).
    bad : workbench._util.jsonl.BadLines, optional
        Where bad lines are recorded when its ``skip_invalid`` is set; None: a bad line is an error naming it.
    since, until : str, optional
        ISO dates or times: only sessions whose first and last timestamps fall between them.
    project : str, optional
        Only sessions whose working directory or project directory name contains this text.
    files : sequence of pathlib.Path, optional
        These files instead of every one below ``path``.

    Returns
    -------
    dict of str to polars.DataFrame
        The tables read (``runs``, ``steps``, ``compactions``, and the others the format carries), validated.
    """
    return collect_runs(Path(path), claude_code_runs(path, bad=bad, since=since, until=until, project=project,
                                                     files=files))


def claude_code_runs(path: str | os.PathLike[str], *, bad: BadLines | None = None, since: str | None = None,
                     until: str | None = None, project: str | None = None, files: Sequence[Path] | None = None,
                     timings: dict[str, float] | None = None, spill: Path | None = None,
                     ) -> Iterator[_RunRows | Parts]:
    """:func:`read_claude_code`'s runs one at a time, ``(first line, run, steps, compactions)``, in bounded memory.

    The files are first scanned for the session ids their lines name (bytes only, no parsing); files that share
    a session id are one group, and each group is read and built alone, so memory holds one group's lines, not
    the tree's. Runs come group by group (groups in the order of their first file). A reply (message id +
    request id) counts where it is first read. ``timings`` adds the seconds spent scanning (``scan``) and
    reading and building runs (``parse``).

    A tree of more than ``PARALLEL_BYTES`` (64 MB) is read by worker processes, one a core, a batch of groups each
    (:func:`~workbench.adapters._claude_lines._batch_job`; a worker imports :mod:`workbench.adapters._claude_lines` only, not
    the table library): a worker builds its groups' steps and compactions, checks them and writes them in chunks
    of columns under ``spill`` (a temporary directory when None), which come as
    ``Parts`` after the batch's runs (rows with no steps or compactions), for
    the caller's ``RunTables`` to validate and write as it does its own rows.
    This process counts the replies in the tree's order and says the warnings, skipped lines and first error in
    the order one process gives them; ``parse`` then includes the workers' building of rows.
    """
    from workbench._util.executors import usable_cores

    bad = bad if bad is not None else BadLines()
    listed = list(files) if files is not None else session_files(path, bad=bad)
    workers = min(usable_cores(), len(listed))
    if workers >= 2 and sum(logfiles._file_sizes(listed)) > PARALLEL_BYTES:
        yield from _parallel_runs(Path(path), listed, workers, bad, since, until, project, timings, spill)
        return
    clock = time.perf_counter()
    groups = _file_groups(listed)
    if timings is not None:
        timings["scan"] = timings.get("scan", 0.0) + time.perf_counter() - clock
    replies: set[str] = set()  # (message.id, requestId) counted anywhere in the tree: a resumed
    for group in groups:  # session's copies count where they first appear
        clock = time.perf_counter()
        runs, spends = _group_runs(group, bad, since, until, project)
        _count_spends(spends, replies)
        if timings is not None:
            timings["parse"] = timings.get("parse", 0.0) + time.perf_counter() - clock
        for session in runs:
            yield session.first_line, *session.finish()
            _say_notes(session)


def _parallel_runs(path: Path, files: list[Path], workers: int, bad: BadLines, since: str | None, until: str | None,
                   project: str | None, timings: dict[str, float] | None, spill: Path | None,
                   ) -> Iterator[_RunRows | Parts]:
    """``claude_code_runs`` with worker processes: they start (importing :mod:`workbench.adapters._claude_lines`)
    while the files are scanned here and with them, then take batches of groups in order, a few batches ahead of
    the one counted here."""
    import contextlib
    import tempfile

    from workbench._util.executors import workers as worker_pool

    with contextlib.ExitStack() as stack:
        pool = stack.enter_context(worker_pool(workers))  # (started already when the command started them)
        pool.start(claude_sessions.__name__)
        if spill is None:  # the chunks are read as they come, then removed with the directory
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="claude-code-"))
        else:  # the chunks are read (and removed) as they come; the caller removes ``spill``
            spill.mkdir(parents=True, exist_ok=True)
            tmp = tempfile.mkdtemp(prefix="claude-code-", dir=spill)
        clock = time.perf_counter()
        groups = _file_groups(files, pool)
        if timings is not None:
            timings["scan"] = timings.get("scan", 0.0) + time.perf_counter() - clock
        batches = _batches(groups)
        todo = iter(enumerate(batches))

        def submit() -> Any:
            nxt = next(todo, None)
            if nxt is None:
                return None
            k, batch = nxt
            return pool.submit(_batch_job, batch, bad.skip_invalid, since, until, project, str(path),
                               str(Path(tmp) / f"batch-{k:06d}"))

        ahead = [f for f in (submit() for _ in range(2 * workers)) if f is not None]
        counted = _CountedReplies()
        while ahead:
            clock = time.perf_counter()
            done, chunks = ahead.pop(0).result()
            if (future := submit()) is not None:
                ahead.append(future)
            if timings is not None:
                timings["parse"] = timings.get("parse", 0.0) + time.perf_counter() - clock
            # the batch's replies in the tree's order, each with whether it counts (decided for the whole batch at
            # once; a group that stops the import below stops it before any of its replies is counted)
            flat = [(runs[k] if k >= 0 else None, reply) for runs, spends, *_ in done for k, reply in spends]
            verdicts = iter(zip(flat, counted.count([reply[0] for _, reply in flat]), strict=True))
            for runs, spends, said, skipped, error in done:
                for category, message in said:
                    warnings.warn(message, category, stacklevel=3)
                bad.truncated.extend(skipped.truncated)
                bad.skipped.extend(skipped.skipped)
                if error is not None:
                    for future in ahead:
                        future.cancel()
                    raise error
                for (target, reply), counts in itertools.islice(verdicts, len(spends)):
                    if counts and target is not None:
                        target.spend(reply)
                for session in runs:
                    yield session.first_line, session.run_row(), [], []
                    _say_notes(session)
            yield Parts([Path(chunk) for chunk in chunks])


class _CountedReplies:
    """The replies an import has counted so far, in the tree's order, kept as sorted arrays of 16-byte digests
    (BLAKE2b of the reply key, :func:`~workbench.adapters._usage_scan._reply_key`; two keys share a digest with
    probability 2^-128): 8 MiB for the 1 GB home's 520,883 replies, where a set of the key strings held about 60 MiB
    of the parent's peak. New digests join as a new array; arrays of comparable size are merged, so a lookup
    searches a few sorted arrays (a log-structured merge)."""

    def __init__(self) -> None:
        self.levels: list[np.ndarray] = []

    def count(self, keys: Sequence[str | None]) -> list[bool]:
        """Whether each reply of a batch, in order, counts: it has no key (then it counts on its own, ccusage's
        rule), or its key was counted neither before nor earlier in the batch. The keys counted are remembered."""
        import hashlib

        where = [i for i, key in enumerate(keys) if key is not None]
        verdicts = [True] * len(keys)
        if not where:
            return verdicts
        digests = np.array([hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16).digest()
                            for key in keys if key is not None], dtype="S16")
        seen = np.zeros(len(digests), dtype=bool)
        for level in self.levels:
            at = np.minimum(np.searchsorted(level, digests), len(level) - 1)
            seen |= level[at] == digests
        first = np.zeros(len(digests), dtype=bool)
        first[np.unique(digests, return_index=True)[1]] = True  # each digest's first place in the batch
        new = first & ~seen
        for i, counts in zip(where, new.tolist(), strict=True):
            verdicts[i] = counts
        fresh = np.sort(digests[new])
        if len(fresh):
            self.levels.append(fresh)
            while len(self.levels) > 1 and len(self.levels[-2]) <= 2 * len(self.levels[-1]):
                top = self.levels.pop()
                self.levels[-1] = np.sort(np.concatenate([self.levels[-1], top]))  # disjoint: no key twice
        return verdicts


def _batches(groups: list[list[Path]]) -> list[list[list[Path]]]:
    """The groups, in order, in batches of about ``BATCH_BYTES`` of files each, whatever the tree's size: the
    parent holds a few batches' results at a time (runs and replies, :func:`_parallel_runs`' ``ahead``), so a
    batch that grew with the tree made the import's memory grow with it (issue 62: batches of a sixteenth of a
    worker's share, up to 64 MB, peaked at 354 MiB on the 1 GB home; 8 MB batches at 286-295 MiB, in the same
    time), and a small batch leaves little for the last worker to finish alone."""
    each = iter(logfiles._file_sizes([f for group in groups for f in group]))
    sizes = [sum(next(each) for _ in group) for group in groups]
    return _runs_of(groups, sizes, BATCH_BYTES)


_RunRows = tuple[int, dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]

#: bytes of session files above which groups are read by worker processes, one a core (below, starting them
#: costs more than they save; the command line starts them early above the same size)
PARALLEL_BYTES = logfiles.PARALLEL_BYTES

#: bytes of session files a worker reads as one batch (:func:`~workbench.adapters._claude_lines._batch_job`): a
#: constant, so that the batches in flight hold the same memory on any tree
BATCH_BYTES = 8 << 20

__all__ = ["read_claude_code", "selected", "MODEL_USAGE", "TranscriptWarning", "USAGE_DEFINITION"]
