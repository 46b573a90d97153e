"""The replies of Claude Code transcript files, found in their bytes: ``workbench usage``'s pass over a tree.

Only lines that hold a ``"usage"`` key are parsed (orjson, on the mapped file: a tool result's kilobytes are
never decoded), and of those only assistant replies with a usage object and a session id are kept, each as a
tuple :data:`FIELDS`. A quoted ``\\"usage\\"`` inside a message's text is escaped in the line and is not a key.
A line orjson refuses is read by Python's ``json`` (a lone surrogate escape) or passed over (not JSON), as the
usage pass documents. The module imports nothing heavy, so the processes that scan a large tree in parallel
start in milliseconds.
"""

from __future__ import annotations

import json
import mmap
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

#: what each reply is: its file's index in the list scanned, its line, and what ccusage's count reads
FIELDS = ("file", "line", "session_id", "request_id", "message_id", "model", "input_tokens", "output_tokens",
          "cache_read_input_tokens", "cache_creation_input_tokens")
_COUNTS = FIELDS[6:]
#: bytes below which a tree is scanned in this process (starting workers costs more than it saves)
PARALLEL_BYTES = 64 << 20


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def token_count(value: Any) -> int:
    """A token count from a log (0 for anything that is not a positive integer): the importer's rule and this
    pass's."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


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


def file_replies(path: str, index: int) -> list[tuple[Any, ...]]:
    """The replies of one transcript file, in line order (tuples of :data:`FIELDS`)."""
    out: list[tuple[Any, ...]] = []
    if os.path.getsize(path) == 0:
        return out
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        view = memoryview(mm)
        try:
            size, find = len(mm), mm.find
            start = 3 if mm[:3] == b"\xef\xbb\xbf" else 0  # a byte-order mark is not content
            line = 0
            while start < size:
                end = find(b"\n", start)
                if end < 0:
                    end = size
                line += 1
                if find(b'"usage"', start, end) >= 0:
                    rec = _parse(view[start:end])
                    reply = _reply(rec, index, line)
                    if reply is not None:
                        out.append(reply)
                start = end + 1
        finally:
            view.release()
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
    usage = msg["usage"]
    return (index, line, sid, _str(rec.get("requestId")), _str(msg.get("id")), _str(msg.get("model")),
            *(token_count(usage.get(k)) for k in _COUNTS))


def _files_replies(batch: Sequence[tuple[str, int]]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for path, index in batch:
        out.extend(file_replies(path, index))
    return out


def tree_replies(files: Sequence[str | os.PathLike[str]], workers: int | None = None) -> list[tuple[Any, ...]]:
    """The replies of every file, in file order then line order. A tree of at least :data:`PARALLEL_BYTES` is
    scanned by ``workers`` processes (default: the machine's cores, at most 4), each a share of the files of
    about equal bytes."""
    paths = [os.fspath(f) for f in files]
    sizes = [os.path.getsize(p) for p in paths]
    workers = workers if workers is not None else min(4, os.cpu_count() or 1)
    if workers <= 1 or sum(sizes) < PARALLEL_BYTES or len(paths) < 2:
        return _files_replies(list(zip(paths, range(len(paths)), strict=True)))
    shares: list[list[tuple[str, int]]] = [[] for _ in range(workers)]
    load = [0] * workers
    for i in sorted(range(len(paths)), key=lambda i: -sizes[i]):  # largest first, each to the lightest share
        k = load.index(min(load))
        shares[k].append((paths[i], i))
        load[k] += sizes[i]
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        parts = list(pool.map(_files_replies, [s for s in shares if s]))
    return sorted((r for part in parts for r in part), key=lambda r: (r[0], r[1]))


__all__ = ["FIELDS", "PARALLEL_BYTES", "file_replies", "line_kind", "token_count", "tree_replies"]
