"""The replies of Claude Code transcript files, found in their bytes: ``workbench usage``'s pass over a tree.

Only lines that hold a ``"usage"`` key are parsed (orjson, the file read in buffered blocks: a tool result's
kilobytes are never decoded; a file that shrinks while it is read ends early, where a memory map would kill the
process with SIGBUS), and of those only assistant replies with a usage object and a session id are kept, each as a
tuple :data:`FIELDS`. A quoted ``\\"usage\\"`` inside a message's text is escaped in the line and is not a key.
A line orjson refuses is read by Python's ``json`` (a lone surrogate escape) or passed over (not JSON), as the
usage pass documents. A line longer than the line bound (64 MiB, :func:`~workbench._util.jsonl.max_line_bytes`) is
an error naming it, or with ``skip_invalid`` skipped and counted. The module imports nothing heavy, so the processes that scan a large tree in parallel
start in milliseconds.
"""

from __future__ import annotations

import json
import re
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from workbench._util.jsonl import BadLines

#: what each reply is: its file's index in the list scanned, its line, and what ccusage's count reads
FIELDS = ("file", "line", "session_id", "request_id", "message_id", "model", "input_tokens", "output_tokens",
          "cache_read_input_tokens", "cache_creation_input_tokens", "cache_creation_1h_tokens", "timestamp")
#: bytes below which a tree is scanned in this process (starting workers costs more than it saves)
PARALLEL_BYTES = 64 << 20


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def token_count(value: Any) -> int:
    """A token count from a log (0 for anything that is not a positive integer): the importer's rule and this
    pass's."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def usage_counts(usage: dict[str, Any]) -> tuple[int, int, int, int]:
    """A reply's ``usage`` object as (input, output, cache read, cache creation) tokens, each :func:`token_count`:
    what ccusage sums, read the same by the importer and this pass."""
    return (token_count(usage.get("input_tokens")), token_count(usage.get("output_tokens")),
            token_count(usage.get("cache_read_input_tokens")), token_count(usage.get("cache_creation_input_tokens")))


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
    """The replies of one transcript file, in line order (tuples of :data:`FIELDS`). A line over the line bound is
    an error naming it, or with ``bad.skip_invalid`` passed over and counted in ``bad``."""
    from workbench._util.jsonl import bounded_lines, long_line, max_line_bytes

    out: list[tuple[Any, ...]] = []
    limit = max_line_bytes()
    with open(path, "rb", buffering=1 << 20) as fh:
        for line, raw in bounded_lines(fh, limit):
            if raw is None:
                long_line(path, line, limit, bad)
                continue
            if b'"usage"' in raw:
                if line == 1 and raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]  # a byte-order mark is not content
                reply = _reply(_parse(raw), index, line)
                if reply is not None:
                    out.append(reply)
    return out


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
    tiers = msg["usage"].get("cache_creation")
    hour = token_count(tiers.get("ephemeral_1h_input_tokens")) if isinstance(tiers, dict) else 0
    return (index, line, sid, _str(rec.get("requestId")), _str(msg.get("id")), _str(msg.get("model")),
            *usage_counts(msg["usage"]), hour, _str(rec.get("timestamp")))


def _files_replies(batch: Sequence[tuple[str, int]], skip_invalid: bool = False
                   ) -> tuple[list[tuple[Any, ...]], list[tuple[str, int, str]]]:
    from workbench._util.jsonl import BadLines

    out: list[tuple[Any, ...]] = []
    bad = BadLines(skip_invalid=skip_invalid)
    for path, index in batch:
        out.extend(file_replies(path, index, bad))
    return out, bad.skipped


def tree_replies(files: Sequence[str | os.PathLike[str]], workers: int | None = None,
                 bad: BadLines | None = None, sizes: Sequence[int] | None = None) -> list[tuple[Any, ...]]:
    """The replies of every file, in file order then line order. A tree of at least :data:`PARALLEL_BYTES` is
    scanned by ``workers`` processes (default: the cores this process may use, at most 4), each a share of the files of
    about equal bytes (``sizes``: the files' sizes from the walk that listed them, else one ``stat`` each). With
    ``bad.skip_invalid`` a line over the line bound is skipped and counted in ``bad``."""
    paths = [os.fspath(f) for f in files]
    sizes = list(sizes) if sizes is not None else [os.path.getsize(p) for p in paths]
    from workbench._util.executors import ProcessWorkers, usable_cores

    workers = workers if workers is not None else min(4, usable_cores())
    skip = bad is not None and bad.skip_invalid
    if workers <= 1 or sum(sizes) < PARALLEL_BYTES or len(paths) < 2:
        replies, skipped = _files_replies(list(zip(paths, range(len(paths)), strict=True)), skip)
        if bad is not None:
            bad.skipped.extend(skipped)
        return replies
    shares: list[list[tuple[str, int]]] = [[] for _ in range(workers)]
    load = [0] * workers
    for i in sorted(range(len(paths)), key=lambda i: -sizes[i]):  # largest first, each to the lightest share
        k = load.index(min(load))
        shares[k].append((paths[i], i))
        load[k] += sizes[i]
    with ProcessWorkers(workers) as pool:
        parts = [f.result() for f in [pool.submit(_files_replies, s, skip) for s in shares if s]]
    if bad is not None:
        bad.skipped.extend(sorted((s for _, skipped in parts for s in skipped), key=lambda s: (paths.index(s[0]), s[1])))
    return sorted((r for part, _ in parts for r in part), key=lambda r: (r[0], r[1]))


#: the usage columns of a session, as the importers name them
USAGE_COLUMNS = ("usage_input_tokens", "usage_output_tokens", "usage_cache_read_tokens",
                 "usage_cache_creation_tokens", "usage_reasoning_tokens", "usage_replies")


def claude_code_totals(files: Sequence[Path], bad: BadLines | None = None,
                       sizes: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """Per Claude Code session, in the order sessions first appear: ``client`` (``claude-code``),
    ``project_dir``, ``session_id``, the :data:`USAGE_COLUMNS` (reasoning 0), ``models`` and ``parts``: the same
    counts per (UTC day of the reply's timestamp, model), each a dict with ``day``, ``model``, ``input``,
    ``output``, ``cache_read``, ``cache_creation_5m``, ``cache_creation_1h`` and ``replies`` (what a cost and a
    ``--by day`` view need). Each (message id, request id) counts once, where it is first read in ``files``' order
    (sorted paths); a reply without both counts on its own: ccusage's rule, and the importer's. ``sizes``: the
    files' sizes, where the walk that listed them has them."""
    from workbench.adapters._logfiles import project_dir

    seen: set[tuple[str, str]] = set()
    sessions: dict[tuple[str, str], dict[str, Any]] = {}  # (project directory, session) -> its totals, in order
    projects = [project_dir(Path(f)) for f in files]
    days: dict[str | None, Any] = {}  # a reply's timestamp -> its UTC day (replies share few days)
    for index, _line, sid, request, message, model, fresh, output, read, made, hour, stamp in tree_replies(
            files, bad=bad, sizes=sizes):
        if message is not None and request is not None:  # first_time's rule, inline: the loop's hottest line
            key2 = (message, request)
            if key2 in seen:
                continue  # a reply written over several lines (or copied by a resume) counts once
            seen.add(key2)
        key = (projects[index], sid)
        row = sessions.get(key)
        if row is None:
            row = sessions[key] = {"client": "claude-code", "project_dir": key[0], "session_id": sid,
                                   **{c: 0 for c in USAGE_COLUMNS}, "models": [], "parts": {}}
        row["usage_input_tokens"] += fresh
        row["usage_output_tokens"] += output
        row["usage_cache_read_tokens"] += read
        row["usage_cache_creation_tokens"] += made
        row["usage_replies"] += 1
        if model is not None and model != "<synthetic>" and model not in row["models"]:
            row["models"].append(model)
        day = days.get(stamp, _UNSEEN)
        if day is _UNSEEN:
            day = utc_day(stamp)
            if len(days) < 100_000:  # a bound on the memo, not on the answer
                days[stamp] = day
        part = row["parts"].get((day, model))
        if part is None:
            part = row["parts"][(day, model)] = [0, 0, 0, 0, 0, 0]
        hour = min(hour, made)
        part[0] += fresh
        part[1] += output
        part[2] += read
        part[3] += made - hour
        part[4] += hour
        part[5] += 1
    for row in sessions.values():
        row["parts"] = [{"day": day, "model": model, **dict(zip(PART_COUNTS, counts, strict=True))}
                        for (day, model), counts in row["parts"].items()]
    return list(sessions.values())


_UNSEEN = object()  # a timestamp not in claude_code_totals' memo yet

#: the counts of a session's part (one UTC day and model)
PART_COUNTS = ("input", "output", "cache_read", "cache_creation_5m", "cache_creation_1h", "replies")


#: a UTC timestamp as clients write it (``2026-11-20T10:04:00.000Z``): its day is its first ten characters, once
#: the date is known to be one (``_DAYS``); anything else is parsed
_UTC_STAMP = re.compile(r"(\d{4}-\d{2}-\d{2})T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{3}|\.\d{6})?Z")
_DAYS: dict[str, bool] = {}


def utc_day(stamp: str | None) -> str | None:
    """The UTC date (``2026-11-02``) of an ISO timestamp as logs write it (``...Z`` or with an offset), or None.

    A stamp already in UTC (``...Z``, whole or millisecond or microsecond seconds) is its first ten characters
    when they are a date (checked once a day, not once a reply: a tenth of the usage pass was this parse)."""
    if not stamp:
        return None
    if (m := _UTC_STAMP.fullmatch(stamp)) is not None:
        day = m.group(1)
        known = _DAYS.get(day)
        if known is None:
            from datetime import date

            try:
                date.fromisoformat(day)
                known = True
            except ValueError:
                known = False
            _DAYS[day] = known
        if known:
            return day
        return None
    from datetime import datetime, timezone

    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return when.astimezone(timezone.utc).date().isoformat()


__all__ = ["claude_code_totals", "FIELDS", "PARALLEL_BYTES", "PART_COUNTS", "file_replies", "utc_day", "first_time", "line_kind", "token_count",
           "tree_replies", "usage_counts", "USAGE_COLUMNS"]
