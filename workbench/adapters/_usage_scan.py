"""The replies of Claude Code transcript files, found in their bytes: ``workbench usage``'s pass over a tree.

Only lines that hold a ``"usage"`` key are parsed (orjson, the file read in buffered blocks: a tool result's
kilobytes are never decoded; a file that shrinks while it is read ends early, where a memory map would kill the
process with SIGBUS), and of those only assistant replies with a usage object and a session id are kept, each as a
tuple ``FIELDS``. A quoted ``\\"usage\\"`` inside a message's text is escaped in the line and is not a key.
A line orjson refuses is read by Python's ``json`` (a lone surrogate escape) or passed over (not JSON), as the
usage pass documents. A line longer than the line bound (64 MiB, :func:`~workbench._util.jsonl.max_line_bytes`) is
an error naming it, or with ``skip_invalid`` skipped and counted. The module imports nothing heavy, so the
processes that scan a large tree in parallel start in milliseconds.

A tree is read in runs of consecutive files (:func:`_in_order`); for :func:`claude_code_totals` each run is summed
where it is read (:func:`_run_sums`) and the sums are added in the tree's order, each reply counted once across
the tree.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
from array import array
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar

from workbench._util.token_counts import MAX_COUNT, logged_count

if TYPE_CHECKING:
    from workbench._util.jsonl import BadLines

#: what each reply is: its file's index in the list scanned, its line, what ccusage's count reads, and the UTC day
#: of its timestamp (:func:`utc_day`, worked out where the line is read: in the workers of a parallel scan)
FIELDS = ("file", "line", "session_id", "request_id", "message_id", "model", "input_tokens", "output_tokens",
          "cache_read_input_tokens", "cache_creation_input_tokens", "cache_creation_1h_tokens", "day")
#: bytes below which a tree is scanned in this process (starting workers costs more than it saves)
PARALLEL_BYTES = 64 << 20


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


#: a reply's token counts as its ``usage`` object names them, in :func:`usage_counts`' order
_TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


def usage_counts(usage: dict[str, Any]) -> tuple[int, int, int, int]:
    """A reply's ``usage`` object as (input, output, cache read, cache creation) tokens, each :func:`token_count`
    (what ccusage sums, read the same by the importer and this pass); a count beyond ``MAX_COUNT`` is an error
    naming its field (:func:`~workbench._util.token_counts.logged_count`)."""
    return (logged_count(usage.get("input_tokens"), "message.usage.input_tokens"),
            logged_count(usage.get("output_tokens"), "message.usage.output_tokens"),
            logged_count(usage.get("cache_read_input_tokens"), "message.usage.cache_read_input_tokens"),
            logged_count(usage.get("cache_creation_input_tokens"), "message.usage.cache_creation_input_tokens"))


def hour_count(usage: dict[str, Any]) -> int:
    """A reply's 1-hour cache writes (``usage.cache_creation.ephemeral_1h_input_tokens``), as :func:`usage_counts`
    reads a count; 0 where there is no such object."""
    tiers = usage.get("cache_creation")
    return logged_count(tiers.get("ephemeral_1h_input_tokens"), "message.usage.cache_creation."
                        "ephemeral_1h_input_tokens") if isinstance(tiers, dict) else 0


_Key = TypeVar("_Key", tuple[str, str], str)


def first_time(key: _Key | None, seen: set[_Key]) -> bool:
    """Whether a reply counts here: its (message id, request id) ``key`` (a pair, or the importer's one string for
    it) is not in ``seen`` (then it is added); a reply without both (None) counts on its own. ccusage's rule, the
    importer's and this pass's."""
    if key is None:
        return True
    if key in seen:
        return False
    seen.add(key)
    return True


def line_kind(rec: dict[str, Any]) -> Any:
    """A transcript line's ``type``; a line without one that carries a user's or an assistant's message (older
    clients wrote replies so, and ccusage reads them) is of its message's role."""
    kind = rec.get("type")
    msg = rec.get("message")
    if kind is None and isinstance(msg, dict) and msg.get("role") in ("user", "assistant"):
        return msg["role"]
    return kind


def _parse(raw: bytes | memoryview) -> Any:
    import orjson

    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            return json.loads(bytes(raw))
        except ValueError:
            return None


def file_replies(path: str, index: int, bad: BadLines | None = None) -> list[tuple[Any, ...]]:
    """The replies of one transcript file, in line order (tuples of ``FIELDS``). A line over the line bound is
    an error naming it, or with ``bad.skip_invalid`` passed over and counted in ``bad``."""
    return _file_replies(path, index, bad)[1]


def _file_replies(path: str, index: int, bad: BadLines | None = None, decide: bool = False,
                  on_record: Callable[[bytes, int], None] | None = None) -> tuple[str | None, list[tuple[Any, ...]]]:
    """(format, replies) of one file. With ``decide`` its session format is decided first, from the same open
    (``tree_listing``'s rule: its first line, else record by record), and a file
    that is not Claude Code's is not read further (no replies); without, it is read as Claude Code's. With
    ``on_record`` each line that may hold a usage is handed to it unparsed, with its line number, and no reply is
    kept."""
    from workbench._util.jsonl import lines_holding, long_line, max_line_bytes
    from workbench.errors import BadLines, SchemaError

    out: list[tuple[Any, ...]] = []
    limit = max_line_bytes()
    try:
        fh = open(path, "rb")
    except OSError as err:  # (the walk did not open it: the reader says what it cannot open)
        raise _Unreadable(err.strerror or type(err).__name__) from None
    with fh:
        if decide:
            from workbench.adapters._logfiles import HEAD_BYTES, _decided_format

            fmt = _decided_format(fh.readline(HEAD_BYTES), path)
            if fmt != "claude-code":
                return fmt, out
            fh.seek(0)
        for line, raw in lines_holding(fh, b'"usage"', limit):
            if raw is None:
                long_line(path, line, limit, bad)
                continue
            if line == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]  # a byte-order mark is not content
            try:
                if on_record is not None:
                    on_record(raw, line)
                    continue
                reply = _reply(_parse(raw), index, line)
            except SchemaError as err:  # a count beyond MAX_COUNT
                (bad or BadLines()).skip_or_raise(err, path, line)
                continue
            if reply is not None:
                out.append(reply)
    return "claude-code", out


def _reply(rec: Any, index: int, line: int) -> tuple[Any, ...] | None:
    """A parsed line as a reply, or None: an assistant's (``type``, or its message's ``role`` on an older client's
    line without one) with a ``message.usage`` object and a ``sessionId``."""
    if not isinstance(rec, dict):
        return None
    msg = rec.get("message")
    if not isinstance(msg, dict) or not isinstance(msg.get("usage"), dict):
        return None
    if line_kind(rec) != "assistant":
        return None
    sid = _str(rec.get("sessionId"))
    if sid is None:
        return None
    hour = hour_count(msg["usage"])
    return (index, line, sid, _str(rec.get("requestId")), _str(msg.get("id")), _str(msg.get("model")),
            *usage_counts(msg["usage"]), hour, utc_day(_str(rec.get("timestamp"))))


class _Unreadable(Exception):
    """A file that cannot be opened, with the reason (:func:`_files_replies` hands it back, in order)."""


class _Replies(NamedTuple):
    """A run of files read (:func:`_files_replies`): the replies, the lines skipped, each file not read as Claude
    Code's as (index, its format), and each file that could not be opened as (path, reason)."""

    replies: list[tuple[Any, ...]]
    skipped: list[tuple[str, int, str]]
    others: list[tuple[int, str | None]]
    unreadable: list[tuple[str, str]]


def _files_replies(batch: Sequence[tuple[str, int]], skip_invalid: bool = False, decide: bool = False,
                   on_file: Callable[[str], Callable[[bytes, int], None]] | None = None) -> _Replies:
    """The replies of a run of files, the lines skipped, and (with ``decide``) each file not read as Claude Code's
    as (index, its format). With ``on_file``, each file's usage lines go to the function it returns for the
    file's path (:func:`_file_replies`' ``on_record``), and no reply is kept."""
    from workbench._util.jsonl import BadLines

    out: list[tuple[Any, ...]] = []
    others: list[tuple[int, str | None]] = []
    unreadable: list[tuple[str, str]] = []
    bad = BadLines(skip_invalid=skip_invalid)
    for path, index in batch:
        try:
            fmt, replies = _file_replies(path, index, bad, decide, on_file(path) if on_file is not None else None)
        except _Unreadable as err:
            unreadable.append((path, str(err)))
            if not skip_invalid:
                break  # the error the parent raises: nothing after it is read
            continue
        if fmt != "claude-code":
            others.append((index, fmt))
        out.extend(replies)
    return _Replies(out, bad.skipped, others, unreadable)


def tree_replies(files: Sequence[str | os.PathLike[str]], workers: int | None = None,
                 bad: BadLines | None = None, sizes: Sequence[int] | None = None) -> list[tuple[Any, ...]]:
    """The replies of every file, in file order then line order (tuples of ``FIELDS``). A tree of at least
    :data:`PARALLEL_BYTES` is read by ``workers`` processes (:func:`_in_order`). With ``bad.skip_invalid`` a line
    over the line bound is skipped and counted in ``bad``."""
    listing = zip(files, sizes if sizes is not None else [os.path.getsize(f) for f in files], strict=True)
    return [r for run in _in_order(_files_replies, listing, workers, bad) for r in run.replies]


_Run = TypeVar("_Run", "_Replies", "_RunSums")


def _in_order(job: Callable[[list[tuple[str, int]], bool, bool], _Run],
              listing: Iterable[tuple[str | os.PathLike[str], int]], workers: int | None = None,
              bad: BadLines | None = None, formats: list[tuple[int, str | None]] | None = None,
              listed: list[str | os.PathLike[str]] | None = None) -> Iterator[_Run]:
    """``job`` (:func:`_files_replies` or :func:`_run_sums`) of each run of consecutive files of ``listing``
    ((path, size), in order: a list, or a walk still going), in file order, so a caller takes one run while the
    workers read the next. A tree of at least :data:`PARALLEL_BYTES` is read by ``workers`` processes (default:
    the cores this process may use, at most 4), started once that many bytes are listed; they take runs of about
    :data:`RUN_BYTES` in order, as the listing gives them (the walk goes on while they read); a smaller tree is
    read in this process, as one run. Lines skipped over the line bound are added to ``bad`` as their run is
    taken, so in the order one process reads them. With ``formats`` (a list), each file's session format is
    decided where it is read, and every file that is not Claude Code's is added to it as (index, format), not
    read for replies. ``listed`` (a list) gets every file's path as the listing gives it (the indexes)."""
    from workbench._util.executors import ProcessWorkers, usable_cores

    workers = workers if workers is not None else min(4, usable_cores())
    skip = bad is not None and bad.skip_invalid
    decide = formats is not None
    listed = listed if listed is not None else []

    def taken(run: _Run) -> _Run:
        from workbench.adapters._logfiles import _cannot_read

        if bad is not None:
            bad.skipped.extend(run.skipped)
        for path, reason in run.unreadable:
            _cannot_read(path, reason, bad)
        if formats is not None:
            formats.extend(run.others)
        return run

    def indexed() -> Iterator[tuple[tuple[str, int], int]]:
        for path, size in listing:
            listed.append(path)
            yield (os.fspath(path), len(listed) - 1), size

    files = indexed()
    head: list[tuple[tuple[str, int], int]] = []
    total = 0
    for item in files:
        head.append(item)
        total += item[1]
        if len(head) >= 2 and total >= PARALLEL_BYTES and workers > 1:
            break
    else:  # every file listed, fewer bytes than a parallel read is worth (or one worker)
        yield taken(job([file for file, _size in head], skip, decide))
        return
    with ProcessWorkers(workers) as pool:
        pending: deque[Any] = deque()
        for run in _cut(itertools.chain(head, files), RUN_BYTES):
            pending.append(pool.submit(job, run, skip, decide))
            while pending and pending[0].done():
                yield taken(pending.popleft().result())
        while pending:
            yield taken(pending.popleft().result())


#: bytes of files a worker of a parallel scan reads as one run (smaller: the caller's last run, summed after every
#: worker has finished, is shorter; each run costs a message each way)
RUN_BYTES = 16 << 20


_Item = TypeVar("_Item")


def _cut(items: Iterable[tuple[_Item, int]], target: int) -> Iterator[list[_Item]]:
    """Consecutive runs of ``items`` ((item, size), in order), each of at least ``target`` bytes (the last one may
    be less), each given as soon as it is full."""
    run: list[_Item] = []
    total = 0
    for item, size in items:
        run.append(item)
        total += size
        if total >= target:
            yield run
            run, total = [], 0
    if run:
        yield run


#: the usage columns of a session, as the importers name them
USAGE_COLUMNS = ("usage_input_tokens", "usage_output_tokens", "usage_cache_read_tokens",
                 "usage_cache_creation_tokens", "usage_reasoning_tokens", "usage_replies")


def claude_code_totals(files: Sequence[Path], bad: BadLines | None = None,
                       sizes: Sequence[int] | None = None, *,
                       formats: list[tuple[int, str | None]] | None = None) -> list[dict[str, Any]]:
    """Per Claude Code session, in the order sessions first appear: ``client`` (``claude-code``),
    ``project_dir``, ``session_id``, the ``USAGE_COLUMNS`` (reasoning 0), ``models`` and ``parts``: the same
    counts per (UTC day of the reply's timestamp, model), each a dict with ``day``, ``model``, ``input``,
    ``output``, ``cache_read``, ``cache_creation_5m``, ``cache_creation_1h`` and ``replies`` (what a cost and a
    ``--by day`` view need). Each (message id, request id) counts once, where it is first read in ``files``' order
    (sorted paths); a reply without both counts on its own: ccusage's rule, and the importer's. ``sizes``: the
    files' sizes, where the walk that listed them has them. ``formats`` (a list): the files' formats are not
    known yet; each is decided where the file is read (in the workers), and a file that is not Claude Code's is
    added to the list as (index, format) instead of being summed.

    Each run of files is summed where it is read (:func:`_run_sums`, in the workers of a parallel scan), its
    replies deduplicated within the run; this process keeps every reply key counted so far and adds a run's sums
    whole when none of its keys was counted in an earlier run (a C-level set test), else adds its replies one by
    one, leaving out those counted before (a resumed session's copies in another run)."""
    listing = zip(files, sizes if sizes is not None else [os.path.getsize(f) for f in files], strict=True)
    return _totals(listing, bad, formats)


class RowSink(Protocol):
    """Where :func:`~workbench.adapters.usage_rows` hands the sessions' rows as soon as each is final, while the
    files are still being read: ``add`` takes rows in their order, after those before; ``clear`` forgets them
    all (the pass starts over). :class:`~workbench.analyses.UsageView` is one."""

    def add(self, rows: list[dict[str, Any]]) -> None:
        """Take ``rows`` (dicts of :func:`~workbench.adapters.usage_rows`), in order, after those taken before."""

    def clear(self) -> None:
        """Forget every row taken: the pass is made again from its start."""


def _totals(listing: Iterable[tuple[str | os.PathLike[str], int]], bad: BadLines | None = None,
            formats: list[tuple[int, str | None]] | None = None,
            listed: list[str | os.PathLike[str]] | None = None, sink: RowSink | None = None) -> list[dict[str, Any]]:
    """:func:`claude_code_totals` of a listing ((path, size) in order; a walk still going), ``listed`` getting
    every file's path (:func:`_in_order`).

    With ``sink``, the rows are also handed to it as they become final, in the rows' order, while the workers
    still read: a session's key holds its file's project directory, and a walk gives each directory's files
    together, so once a run ends in another project directory, the sessions of those before it have all their
    replies. A session's parts are let go once its row is made (the rows hold the same counts). A session handed
    on that gets more replies later (a tree where one project directory's name comes back in another place) has
    its parts made again from its row and its row made again in its place at the end; then the sink is cleared
    and given every row anew, so what it holds is always the rows of the whole pass."""
    seen: set[str | None] = set()
    # (project directory, session) -> its parts: (UTC day, model, cost logged) -> PART_COUNTS, in the order each
    # first appears, for each session whose row is not made yet, in the order each was made
    sessions: dict[tuple[str, str], dict[tuple[str | None, str | None, bool], list[int]]] = {}
    rows: list[dict[str, Any]] = []  # the rows made, in the order their sessions were made
    # each session whose row was made while files were still to be read: its row's index, and its parts' logged
    # cost in billionths (None: none logged; the row has it in dollars); and those that got more replies after,
    # their parts again
    handed: dict[tuple[str, str], tuple[int, list[int] | None]] = {}
    again: dict[tuple[str, str], dict[tuple[str | None, str | None, bool], list[int]]] = {}

    def add(label: tuple[str, str, str | None, str | None, bool], counts: array, at: int) -> None:
        """:data:`PART_COUNTS` from ``counts[at:]`` onto the part ``label`` (made, and its session, where new)."""
        project, sid, day, model, logged = label
        key = (project, sid)
        parts = sessions.get(key)
        if parts is None:
            if key not in handed:
                parts = sessions[key] = {}
            elif (parts := again.get(key)) is None:  # its row was made: its parts again, from the row
                index, nanos = handed[key]
                parts = again[key] = {
                    (p["day"], p["model"], p["cost_logged"] is not None):
                        [*(p[name] for name in PART_COUNTS[:-1]), nanos[k] if nanos is not None else 0]
                    for k, p in enumerate(rows[index]["parts"])}
        part = parts.get((day, model, logged))
        if part is None:  # (most parts: a part is in one run, unless its session's files span two)
            parts[(day, model, logged)] = counts[at:at + _N].tolist()
            return
        for j in range(_N):
            part[j] += counts[at + j]

    def hand_on(open_project: str | None) -> None:
        """The rows of the sessions made since the last call, up to the first of ``open_project`` (whose files
        may go on in the next run), made, their parts let go, and given to the sink."""
        done = list(itertools.takewhile(lambda key: key[0] != open_project, sessions))
        for key in done:
            parts = sessions.pop(key)
            if open_project is not None:  # (files are still to be read: the session may get more replies)
                handed[key] = (len(rows), [c[-1] for c in parts.values()] if any(logged for *_, logged in parts)
                               else None)
            rows.append(_session_row(key, parts))
        if done and sink is not None and not again:
            sink.add(rows[-len(done):])

    for run in _in_order(_run_sums, listing, bad=bad, formats=formats, listed=listed):
        if seen.isdisjoint(run.keys):
            seen.update(run.keys)
            seen.discard(None)  # (a reply without both ids counts every time: None is never "seen")
            for k, label in enumerate(run.parts):
                add(label, run.sums, _N * k)
        else:
            for r, key in enumerate(run.keys):  # some reply was counted in an earlier run: reply by reply
                if key is not None:
                    if key in seen:
                        continue
                    seen.add(key)
                add(run.parts[run.reply_parts[r]], array("q", (*run.reply_counts[6 * r:6 * r + 6],
                                                                *run.reply_extra.get(r, _NO_EXTRA))), 0)
        if sink is not None and run.parts:
            hand_on(run.parts[-1][0])
    hand_on(None)
    for session, parts in again.items():
        rows[handed[session][0]] = _session_row(session, parts)
    if again and sink is not None:
        sink.clear()
        sink.add(rows)
    return rows


@dataclass
class _RunSums:
    """A run of files summed where it was read (:func:`_run_sums`). ``parts``: (project directory, session, UTC
    day, model, cost logged) in the order each first appears; ``sums``: their :data:`PART_COUNTS`; ``keys``: each
    counted reply's key (:func:`_reply_key`; None for a reply without both ids), in order, with its part
    (``reply_parts``) and its first six counts (``reply_counts``; the rest, in the few replies where they are not
    0, in ``reply_extra`` by the reply's index); the lines skipped, the files not read as Claude Code's and
    those that could not be opened (:func:`_files_replies`)."""

    parts: list[tuple[str, str, str | None, str | None, bool]]
    sums: array
    keys: list[str | None]
    reply_parts: array
    reply_counts: array
    reply_extra: dict[int, tuple[int, ...]]
    skipped: list[tuple[str, int, str]]
    others: list[tuple[int, str | None]]
    unreadable: list[tuple[str, str]]


def _reply_key(message: str, request: str) -> str:
    """A reply's (message id, request id) as one string, ``LEN:MESSAGEREQUEST`` (the message id's length first, so
    two different pairs never give the same string): the set of replies counted holds one string a reply, not a
    tuple of two (about 100 bytes less a reply; with the 1 GB home's 520,883 replies, the import's peak is 37 MiB
    lower). The usage pass's key and the importer's."""
    return f"{len(message)}:{message}{request}"


def _run_sums(batch: Sequence[tuple[str, int]], skip_invalid: bool = False, decide: bool = False) -> _RunSums:
    """The replies of a run of files summed per (project directory, session, day, model), each reply key counted
    once within the run (:class:`_RunSums`).

    A line is decoded into the few fields a reply's count reads (:func:`_line_decoder`: the rest of the line, a
    message's text and tool results, is checked and passed over, never built into Python objects); a line whose
    fields are not of the plain types (or that is not valid JSON, or not UTF-8) is read whole (:func:`_parse`) and
    counted by :func:`_reply`, the importer's rules. Both ways give the same count of every line: the decoder takes
    a token count only as a whole number from 0 to ``MAX_COUNT`` (anything else goes the other way, where
    :func:`token_count` makes it 0, or beyond ``MAX_COUNT`` an error naming its line)."""
    from workbench.adapters._logfiles import project_dir

    decode, invalid = _line_decoder()
    by_directory: dict[str, str] = {}
    seen: set[str] = set()
    where: dict[tuple[str, str, str | None, str | None, bool], int] = {}
    labels: list[tuple[str, str, str | None, str | None, bool]] = []
    zeros = (0,) * _N
    sums, reply_parts, reply_counts = array("q"), array("i"), array("q")
    reply_extra: dict[int, tuple[int, ...]] = {}
    keys: list[str | None] = []
    project = ""  # the project directory of the file being read

    def tally(sid: str, request: str | None, message: str | None, model: str | None, speed: Any, logged: Any,
              day: str | None, fresh: int, output: int, read: int, made: int, hour: int) -> None:
        """One reply's counts (each a whole number, at least 0) onto its part, unless its key was counted."""
        if model is not None and speed == "fast":
            model += "-fast"  # ccusage's name for a fast-mode reply, priced at its model's fast multiplier
        key = None
        if message is not None and request is not None:
            key = f"{len(message)}:{message}{request}"  # _reply_key
            if key in seen:
                return  # a reply written over several lines (or copied by a resume) counts once
            seen.add(key)
        if (type(logged) is not float and type(logged) is not int) or not -1e6 < logged < 1e6:  # (NaN: not)
            logged = None  # the client's own cost of the reply: ccusage's first choice (its "auto")
        label = (project, sid, day, model, logged is not None)
        k = where.get(label)
        if k is None:
            k = where[label] = len(labels)
            labels.append(label)
            sums.extend(zeros)
        if hour > made:
            hour = made
        at = _N * k
        sums[at] += fresh
        sums[at + 1] += output
        sums[at + 2] += read
        sums[at + 3] += made - hour
        sums[at + 4] += hour
        sums[at + 5] += 1
        keys.append(key)
        reply_parts.append(k)
        reply_counts.extend((fresh, output, read, made - hour, hour, 1))
        if logged is None and fresh <= TIER and output <= TIER and read <= TIER and made <= TIER:
            return  # the common case: nothing beyond the tier, no cost logged
        extra = (fresh - TIER if fresh > TIER else 0, output - TIER if output > TIER else 0,
                 read - TIER if read > TIER else 0, made - hour - TIER if made - hour > TIER else 0,
                 hour - TIER if hour > TIER else 0, round(logged * 1e9) if logged is not None else 0)
        for j in range(6):
            sums[at + 6 + j] += extra[j]
        reply_extra[len(keys) - 1] = extra

    def add(raw: bytes, _line: int) -> None:
        try:
            if not raw.isascii():
                raw.decode("utf-8")  # (the decoder passes over a field it does not read unchecked)
            rec = decode(raw)
        except invalid:
            return add_record(_parse(raw))
        msg = rec.message
        if msg is None or (usage := msg.usage) is None:
            return
        kind = rec.type  # line_kind: an older client's line without a type is of its message's role
        if kind != "assistant" and (kind is not None or msg.role != "assistant"):
            return
        if rec.sessionId is None:
            return
        tiers = usage.cache_creation
        tally(rec.sessionId, rec.requestId, msg.id, msg.model, usage.speed, rec.costUSD, utc_day(rec.timestamp),
              usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens,
              usage.cache_creation_input_tokens, tiers.ephemeral_1h_input_tokens if tiers is not None else 0)

    def add_record(rec: Any) -> None:
        """:func:`add` of a line read whole: :func:`_reply`'s rules, each field tested."""
        reply = _reply(rec, 0, 0)
        if reply is None:
            return
        _index, _line, sid, request, message, model, fresh, output, read, made, hour, day = reply
        tally(sid, request, message, model, rec["message"]["usage"].get("speed"), rec.get("costUSD"), day, fresh,
              output, read, made, hour)

    def for_file(path: str) -> Callable[[bytes, int], None]:
        nonlocal project  # (read by add: the file's project directory)
        directory = os.path.dirname(path)
        known = by_directory.get(directory)
        if known is None:
            known = by_directory[directory] = project_dir(Path(path))
        project = known
        return add

    _, skipped, others, unreadable = _files_replies(batch, skip_invalid, decide, for_file)
    return _RunSums(labels, sums, keys, reply_parts, reply_counts, reply_extra, skipped, others, unreadable)


@functools.cache
def _line_decoder() -> tuple[Callable[[bytes], Any], tuple[type[Exception], ...]]:
    """A decoder of a transcript line into the fields a reply's count reads, typed (msgspec), and the errors it
    raises for a line it does not take: one that is not JSON, or whose fields are not a plain reply's (an id that
    is not a string, a token count that is not a whole number from 0 to ``MAX_COUNT``, a message that is not an
    object). Made on first use (msgspec is imported only by the processes that scan)."""
    from typing import Annotated

    import msgspec

    count = Annotated[int, msgspec.Meta(ge=0, le=MAX_COUNT)]
    text = str | None

    def struct(name: str, *fields: tuple[str, Any, Any]) -> Any:
        return msgspec.defstruct(name, fields, gc=False)  # (its values are strings and numbers: not tracked)

    tiers = struct("Tiers", ("ephemeral_1h_input_tokens", count, 0))
    usage = struct("Usage", *((name, count, 0) for name in _TOKEN_FIELDS),
                   ("cache_creation", tiers | None, None), ("speed", Any, None))
    message = struct("Message", ("id", text, None), ("model", text, None), ("role", Any, None),
                     ("usage", usage | None, None))
    line = struct("Line", ("type", Any, None), ("sessionId", text, None), ("requestId", text, None),
                  ("timestamp", text, None), ("costUSD", Any, None), ("message", message | None, None))
    return msgspec.json.Decoder(line).decode, (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError)


def _session_row(key: tuple[str, str], parts: dict[tuple[str | None, str | None, bool], list[int]]
                 ) -> dict[str, Any]:
    """A session's row from its parts: its totals are their sums (the cache writes: both tiers), its models theirs
    in the order each first appears (a part is made by the session's first reply of its day and model). One loop
    over the parts, not five sums (0.48 -> 0.35 s for the 1 GB home's 47,353 sessions, after the scan, with a core
    idle), each part's dict made by one ``zip``."""
    models: list[str] = []
    fresh = output = read = write_5m = write_1h = replies = 0
    rows = []
    for (day, model, logged), counts in parts.items():
        i, o, r, w5, w1, n = counts[:6]  # PART_COUNTS' order
        if model is not None and model != "<synthetic>" and model not in models:
            models.append(model)
        fresh += i
        output += o
        read += r
        write_5m += w5
        write_1h += w1
        replies += n
        rows.append(dict(zip(_PART_KEYS, (day, model, *counts[:-1], counts[-1] / 1e9 if logged else None))))
    return {"client": "claude-code", "project_dir": key[0], "session_id": key[1],
            "usage_input_tokens": fresh, "usage_output_tokens": output, "usage_cache_read_tokens": read,
            "usage_cache_creation_tokens": write_5m + write_1h, "usage_reasoning_tokens": 0,
            "usage_replies": replies, "models": models, "parts": rows}


#: the counts of a session's part (one UTC day, model, and whether its replies logged their cost): the tokens of
#: each kind, the replies, each kind's tokens beyond :data:`TIER` in a reply (priced at a model's long-context rate)
#: and the replies' logged cost (``costUSD``) in billionths of a dollar; a part's dict has ``cost_logged`` in USD
#: (None where its replies logged none) in place of the last
PART_COUNTS = ("input", "output", "cache_read", "cache_creation_5m", "cache_creation_1h", "replies",
               "input_over_tier", "output_over_tier", "cache_read_over_tier", "cache_creation_5m_over_tier",
               "cache_creation_1h_over_tier", "cost_logged_nanousd")
_N = len(PART_COUNTS)
#: the keys of a part's dict in a session's row (:func:`_session_row`)
_PART_KEYS = ("day", "model", *PART_COUNTS[:-1], "cost_logged")
_NO_EXTRA = (0,) * (_N - 6)

#: the tokens of one kind in one reply above which a model with a long-context price charges it (LiteLLM's
#: ``*_above_200k_tokens``; ccusage applies it to each kind of a reply on its own)
TIER = 200_000


#: a UTC timestamp as clients write it (``2026-11-20T10:04:00.000Z``): its day is its first ten characters, once
#: the date is known to be one (``_DAYS``: each day seen, to the one string returned for it, or None where it is
#: not a date); anything else is parsed
_UTC_STAMP = re.compile(r"(\d{4}-\d{2}-\d{2})T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{3}|\.\d{6})?Z")
_DAYS: dict[str, str | None] = {}


def utc_day(stamp: str | None) -> str | None:
    """The UTC date (``2026-11-02``) of an ISO timestamp as logs write it (``...Z`` or with an offset), or None.

    A stamp already in UTC (``...Z``, whole or millisecond or microsecond seconds) is its first ten characters
    when they are a date (checked once a day, not once a reply: a tenth of the usage pass was this parse); the
    replies of a day share one string for it (a worker hands it back pickled once)."""
    if not stamp:
        return None
    if (m := _UTC_STAMP.fullmatch(stamp)) is not None:
        day = m.group(1)
        if day in _DAYS:
            return _DAYS[day]
        from datetime import date

        try:
            date.fromisoformat(day)
        except ValueError:
            _DAYS[day] = None
        else:
            _DAYS[day] = day
        return _DAYS[day]
    from datetime import datetime, timezone

    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc).date().isoformat()


__all__ = ["RowSink"]
