"""JSON lines as logs write them, read strictly: one record a line, each error named ``FILE:LINE``.

Used by every JSONL adapter, the annotation store and the adjudication file. :func:`parse_json` rejects a key
given twice, NaN and Infinity; :func:`json_lines` skips blank lines, drops a UTF-8 byte-order mark and turns
every decoding or parsing problem into a :class:`~workbench.errors.SchemaError` naming the line.
"""

from __future__ import annotations

import errno
import io
import json
import os
import re
import stat
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from workbench.errors import BadLines, SchemaError  # noqa: F401 (BadLines: the readers import it from here)


class LogWarning(UserWarning):
    """A log line read with a documented fallback (a session's half-written last line skipped, ...)."""


class DuplicateKey(ValueError):
    """A JSON object that names one key twice (JSON allows it; a log that does is ambiguous)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads`` ``object_pairs_hook``: the object, or :class:`DuplicateKey` for a key given twice."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return obj


def parse_json(text: str | bytes) -> Any:
    """Strict JSON for logs: duplicate keys rejected, NaN/Infinity rejected, nesting bounded by the interpreter.

    Raises :class:`DuplicateKey`, ``ValueError`` (NaN, Infinity), ``json.JSONDecodeError`` or
    ``RecursionError``; :func:`json_lines` turns each into a ``FILE:LINE`` message.
    """
    return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=unique_keys)


def json_error(err: BaseException, line: str) -> tuple[str, str]:
    """(expected, got) for an error of :func:`parse_json` on ``line``."""
    if isinstance(err, DuplicateKey):
        return "each key once per object", f"key {err.key!r} twice"
    if isinstance(err, RecursionError):
        return "JSON nested at most a few hundred levels deep", "deeper nesting"
    if isinstance(err, json.JSONDecodeError):
        what = ("a truncated line" if err.pos >= len(line.rstrip())
                else f"{err.msg.removesuffix(' at')} at column {err.colno}")
        return "one JSON object per line", what
    return "finite JSON numbers", str(err)


class at_line:  # (lower case: used as the function it was, ``with at_line(path, number):``)
    """Name ``path:number`` in any :class:`~workbench.errors.SchemaError` raised while one record is read, and turn the
    interpreter's recursion limit (a record nested too deep to walk) into one too.

    A class, not a generator-based context manager: readers enter one a line, and a generator's machinery cost
    about 1.5 microseconds a line (a sixth of ``workbench usage`` on a Codex tree).
    """

    __slots__ = ("path", "number")

    def __init__(self, path: str | os.PathLike[str], number: int) -> None:
        self.path, self.number = path, number

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, err: BaseException | None, tb: object) -> None:
        if isinstance(err, SchemaError):
            raise err.located(str(self.path), self.number) from None
        if isinstance(err, RecursionError):
            raise SchemaError(file=str(self.path), line=self.number,
                              expected="JSON nested at most a few hundred levels deep", got="deeper nesting") from None


#: the longest line a log may have, in bytes, unless ``WORKBENCH_MAX_LINE_BYTES`` (or an importer's
#: ``--max-line-bytes``) says otherwise: a longer line is an error naming it (with ``skip_invalid``, skipped and
#: counted), and is passed over without being held in memory
MAX_LINE_BYTES = 64 << 20
LINE_BOUND_ENV = "WORKBENCH_MAX_LINE_BYTES"


def max_line_bytes() -> int:
    """The line bound in force: ``WORKBENCH_MAX_LINE_BYTES`` when set, else :data:`MAX_LINE_BYTES`."""
    value = os.environ.get(LINE_BOUND_ENV, "").strip()
    if not value:
        return MAX_LINE_BYTES
    if not value.isdigit() or int(value) < 1:
        raise SchemaError(field=LINE_BOUND_ENV, expected="a whole number of bytes, at least 1", got=repr(value))
    return int(value)


def line_too_long(path: str | os.PathLike[str], number: int, limit: int) -> SchemaError:
    """The error for a line longer than the bound: where it is, the bound, and how to raise it."""
    return SchemaError(file=str(path), line=number,
                       expected=f"a line of at most {limit:,} bytes (--max-line-bytes or {LINE_BOUND_ENV} raises "
                                "the bound; --skip-invalid skips the line)",
                       got="a longer line")


def bounded_lines(fh: Any, limit: int) -> Iterator[tuple[int, bytes | None]]:
    """(line number, the line's bytes with its end) of a binary file, read in buffered blocks; a line longer than
    ``limit`` bytes (its end not counted) comes as None, its bytes passed over, never held. Linear in the file's
    size whatever its lines are (a file of NUL bytes is one long line)."""
    readline = fh.readline
    number = 0
    while raw := readline(limit + 1):
        number += 1
        if len(raw) > limit and not raw.endswith(b"\n"):
            while (rest := readline(1 << 20)) and not rest.endswith(b"\n"):
                pass
            yield number, None
            continue
        yield number, raw


def lines_holding(fh: Any, needle: bytes, limit: int, block: int = 1 << 20) -> Iterator[tuple[int, bytes | None]]:
    """(line number, the line's bytes with its end) of each line of a binary file that holds ``needle``, and
    (line number, None) of each line longer than ``limit`` bytes (its end not counted) whether it holds it or not:
    :func:`bounded_lines`' lines, filtered, without a Python step per line. The file is read in blocks of
    ``block`` bytes; the needle is found and the lines are counted by the bytes' own methods, so a line without the
    needle costs no interpreted work (``workbench usage`` reads a reply line in three). A long line's bytes are
    passed over, never held; nothing larger than ``limit`` plus a block is held at once."""
    number = 0  # the lines before buf
    buf = b""
    while chunk := fh.read(block):
        buf = buf + chunk if buf else chunk
        end = buf.rfind(b"\n") + 1  # buf[:end]: whole lines
        if end == 0:
            if len(buf) > limit:  # a line over the bound, its end not read yet: passed over
                while (rest := fh.read(block)) and (cut := rest.find(b"\n")) < 0:
                    pass
                number += 1
                yield number, None
                buf = rest[cut + 1:] if rest else b""
            continue
        if end > limit + 1 and _longest_line(buf, end) > limit:  # (only when buf could hold a line over the bound)
            yield from _lines_of(buf, end, needle, limit, number)
            number += buf.count(b"\n", 0, end)
        else:
            counted = 0  # buf's lines before ``counted`` are in number
            at = buf.find(needle, 0, end)
            while at >= 0:
                start = buf.rfind(b"\n", 0, at) + 1
                stop = buf.find(b"\n", at) + 1
                number += buf.count(b"\n", counted, start) + 1
                counted = stop
                yield number, buf[start:stop]
                at = buf.find(needle, stop, end)
            number += buf.count(b"\n", counted, end)
        buf = buf[end:]
    if buf:  # the last line, without an end
        number += 1
        if len(buf) > limit:
            yield number, None
        elif needle in buf:
            yield number, buf


def _longest_line(buf: bytes, end: int) -> int:
    """The length (without its end) of the longest whole line of ``buf[:end]``."""
    longest, start = 0, 0
    while start < end:
        stop = buf.find(b"\n", start, end)
        longest = max(longest, stop - start)
        start = stop + 1
    return longest


def _lines_of(buf: bytes, end: int, needle: bytes, limit: int, number: int) -> Iterator[tuple[int, bytes | None]]:
    """:func:`lines_holding`'s lines of ``buf[:end]`` (whole lines, the first numbered ``number + 1``), one by one:
    the path of a buffer that holds a line over the bound."""
    start = 0
    while start < end:
        stop = buf.find(b"\n", start, end) + 1
        number += 1
        if stop - 1 - start > limit:
            yield number, None
        elif buf.find(needle, start, stop) >= 0:
            yield number, buf[start:stop]
        start = stop


#: the most bytes a gzip-compressed input may decompress to, unless ``WORKBENCH_MAX_GZIP_BYTES`` says otherwise: a
#: 1.5 MB file can hold gigabytes (Who&When's reader once took 53 s and 3.3 GB on one); every gzip the readers open
#: goes through :func:`open_input`, which stops at the bound with an error naming the file
MAX_GZIP_BYTES = 4 << 30
GZIP_BOUND_ENV = "WORKBENCH_MAX_GZIP_BYTES"


def max_gzip_bytes() -> int:
    """The decompressed-bytes bound in force: ``WORKBENCH_MAX_GZIP_BYTES`` when set, else :data:`MAX_GZIP_BYTES`."""
    value = os.environ.get(GZIP_BOUND_ENV, "").strip()
    if not value:
        return MAX_GZIP_BYTES
    if not value.isdigit() or int(value) < 1:
        raise SchemaError(field=GZIP_BOUND_ENV, expected="a whole number of bytes, at least 1", got=repr(value))
    return int(value)


class _Bounded(io.RawIOBase):
    """A decompressed stream that raises a :class:`~workbench.errors.SchemaError` naming ``path`` past
    ``limit`` bytes."""

    def __init__(self, inner: Any, path: str, limit: int) -> None:
        self.inner, self.path, self.limit, self.seen = inner, path, limit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self.inner.readinto(buffer)
        self.seen += n or 0
        if self.seen > self.limit:
            raise SchemaError(file=self.path, expected=f"at most {self.limit:,} bytes once decompressed "
                              f"({GZIP_BOUND_ENV} raises the bound)", got="more")
        return n

    def close(self) -> None:
        self.inner.close()
        super().close()


def regular_input(path: str | os.PathLike[str], *, stream: bool = False) -> os.stat_result:
    """``path``'s stat, after checking it is a regular file (a FIFO, a device or a socket would block or never end:
    refused before it is opened); an error naming it otherwise. ``stream``: a FIFO is taken too (a JSON-lines log
    piped into ``workbench import``), never a directory."""
    try:
        info = os.stat(path)
    except OSError as err:
        if err.errno not in _NO_FILE:
            raise
        raise SchemaError("no such file", file=str(path)) from None
    if stat.S_ISDIR(info.st_mode):
        raise SchemaError("is a directory, expected a file", file=str(path))
    if not stat.S_ISREG(info.st_mode) and not (stream and stat.S_ISFIFO(info.st_mode)):
        raise SchemaError("is not a regular file (a FIFO, a device or a socket); expected a log file", file=str(path))
    return info


def open_input(path: str | os.PathLike[str], *, stream: bool = False) -> Any:
    """A log file opened for reading in binary: a regular file only (:func:`regular_input`), and a ``.gz`` file
    read through gzip with its decompressed bytes bounded by :func:`max_gzip_bytes` (the one bound on every gzip
    the readers open); a file that is not gzip, or is cut short, is an error naming it when read."""
    regular_input(path, stream=stream)
    if str(path).endswith(".gz"):
        import gzip

        return io.BufferedReader(_Bounded(gzip.open(path, "rb"), str(path), max_gzip_bytes()), 1 << 16)
    return open(path, "rb")


def read_json_file(path: str | os.PathLike[str]) -> Any:
    """A whole JSON file (a ``.json``, or ``.json.gz``) read with the line bound as its size bound
    (:func:`max_line_bytes`: the file is one record), strictly (:func:`parse_json`: duplicate keys, NaN and
    Infinity refused; nesting deeper than the interpreter walks an error), lone UTF-16 surrogates replaced by
    U+FFFD with a warning; every problem an error naming the file."""
    limit = max_line_bytes()
    try:
        with open_input(path) as fh:
            data = fh.read(limit + 1)
    except (EOFError, OSError) as exc:
        raise SchemaError(file=str(path), expected="a whole, readable file (gzip-compressed when named .gz)",
                          got=f"{type(exc).__name__}: {exc}") from None
    if len(data) > limit:
        raise SchemaError(file=str(path), expected=f"a JSON file of at most {limit:,} bytes (--max-line-bytes or "
                          f"{LINE_BOUND_ENV} raises the bound)", got="a larger file")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SchemaError(file=str(path), expected="UTF-8 text",
                          got=f"byte 0x{data[exc.start]:02x} at offset {exc.start}") from None
    try:
        record = parse_json(text)
    except (ValueError, RecursionError) as exc:
        expected, got = json_error(exc, text)
        raise SchemaError(file=str(path), expected=expected.replace("one JSON object per line", "one JSON value"),
                          got=got) from None
    if "\\ud" in text or "\\uD" in text:
        record, lone = _without_lone_surrogates(record)
        if lone:
            warnings.warn(f"{path}: {lone} lone UTF-16 surrogate escape(s) replaced by U+FFFD", LogWarning,
                          stacklevel=2)
    return record


class EmptyLog(SchemaError):
    """:func:`json_lines`' error for a file with no line that is not blank: a log of nothing is an error, but a
    session tree's empty file is a file that says no format (:func:`~workbench.adapters._logfiles._file_format`)."""


#: the errors of a stat that mean there is no file there (as pathlib's exists() reads them)
_NO_FILE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})


def json_lines(path: Path, bad: BadLines | None = None, *, fast: bool = False) -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed JSON) for each non-blank line, failing with the line's number.

    Parsing is strict (:func:`parse_json`): a duplicate key, NaN or Infinity, or nesting deep
    enough to exhaust the interpreter is an error naming the line. With ``bad`` (session logs), a last line
    that is not JSON and has no line end (the session is still being written) is skipped with a
    :class:`LogWarning`, and with ``bad.skip_invalid`` every line that is not JSON is skipped and counted.
    A ``.gz`` file is read through gzip (line numbers are the decompressed text's).

    A line longer than :func:`max_line_bytes` (64 MiB) is an error naming it, or with ``bad.skip_invalid``
    skipped and counted; its bytes are passed over, never held.

    ``fast`` (session logs, gigabytes of lines written by a client, not by a person) parses each
    line with orjson, as JavaScript's ``JSON.parse`` reads it (ccusage's reading): a key given twice keeps its
    last value and an integer beyond 64 bits is read as a float. Every line orjson refuses (not JSON, a byte-order
    mark, bytes that are not UTF-8, a lone surrogate escape, a number too large for a double, nesting deeper than
    1024) is read again by the strict path above, with its errors, warnings and fallbacks.
    """
    info = regular_input(path, stream=True)  # one stat a file, not three; a FIFO is a piped log
    if fast and info.st_size > 0 and path.suffix != ".gz":
        yield from _fast_lines(path, bad)
        return
    any_line = False
    opened = open_input(path, stream=True)  # a .gz file (a benchmark kept compact) read as it streams, its bytes bounded
    limit = max_line_bytes()
    with opened as fh:
        for number, raw in _numbered(fh, path, limit):
            if raw is None:
                long_line(path, number, limit, bad)
                any_line = True
                continue
            record = _strict_line(path, number, raw, bad)
            if record is _BLANK:
                continue
            any_line = True
            if record is not _SKIPPED:
                yield number, record
    if not any_line:
        raise EmptyLog(file=str(path), line=1, expected="at least one JSON line", got="an empty file")


def long_line(path: str | os.PathLike[str], number: int, limit: int, bad: BadLines | None) -> None:
    """A line over the bound: counted in ``bad`` with ``skip_invalid``, else the error."""
    if bad is not None and bad.skip_invalid:
        bad.skipped.append((str(path), number, f"a line longer than {limit:,} bytes"))
        return
    raise line_too_long(path, number, limit)


_BLANK, _SKIPPED = object(), object()  # what _strict_line returns for a blank line and a line it skipped


def _strict_line(path: Path, number: int, raw: bytes, bad: BadLines | None) -> Any:
    """One raw line read strictly: its record, ``_BLANK``, ``_SKIPPED`` (counted in ``bad``), or an error."""
    if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]  # a UTF-8 byte-order mark (Windows editors write one) is not content
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        got = f"byte 0x{raw[exc.start]:02x} at column {exc.start + 1}"
        if bad is not None and (bad.skip_invalid or not raw.endswith(b"\n")):
            (bad.skipped if raw.endswith(b"\n") else bad.truncated).append((str(path), number, got))
            return _SKIPPED
        raise SchemaError(file=str(path), line=number, expected="UTF-8 text", got=got) from None
    if not line.strip():
        return _BLANK
    try:
        record = parse_json(line)
    except (ValueError, RecursionError) as exc:
        expected, got = json_error(exc, line)
        if bad is not None and not raw.endswith(b"\n"):  # only the last line can lack its end
            bad.truncated.append((str(path), number, got))
            warnings.warn(f"{path}:{number}: skipped the last line, which is not complete JSON ({got}): "
                          "a session still being written", LogWarning, stacklevel=3)
            return _SKIPPED
        if bad is not None and bad.skip_invalid:
            bad.skipped.append((str(path), number, f"expected {expected}, got {got}"))
            return _SKIPPED
        raise SchemaError(file=str(path), line=number, expected=expected, got=got) from None
    if "\\ud" in line or "\\uD" in line:  # a lone UTF-16 surrogate (text cut by JavaScript) cannot be stored
        record, lone = _without_lone_surrogates(record)
        if lone:
            warnings.warn(f"{path}:{number}: {lone} lone UTF-16 surrogate escape(s) (\\ud800-\\udfff "
                          "without its pair, as a client that cut text in the middle of a character leaves "
                          "them) replaced by U+FFFD", LogWarning, stacklevel=3)
    return record


def _fast_lines(path: Path, bad: BadLines | None) -> Iterator[tuple[int, Any]]:
    """:func:`json_lines`' fast path: buffered blocks (a file that shrinks while it is read just ends early; a
    memory map of it would kill the process with SIGBUS), each line parsed by orjson, each line orjson refuses
    handed to :func:`_strict_line`."""
    import orjson

    loads, error = orjson.loads, orjson.JSONDecodeError
    limit = max_line_bytes()
    any_line = False
    with open(path, "rb", buffering=1 << 20) as fh:
        for number, raw in bounded_lines(fh, limit):
            if raw is None:
                long_line(path, number, limit, bad)
                any_line = True
                continue
            try:
                record = loads(raw)
            except error:
                record = _strict_line(path, number, raw, bad)
                if record is _BLANK:
                    continue
                if record is _SKIPPED:
                    any_line = True
                    continue
            any_line = True
            yield number, record
    if not any_line:
        raise EmptyLog(file=str(path), line=1, expected="at least one JSON line", got="an empty file")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_lone_surrogates(value: Any) -> tuple[Any, int]:
    """``value`` with every lone surrogate code point in its strings (keys too) replaced by U+FFFD, and how many
    there were (a valid pair was already one character when JSON was parsed)."""
    if isinstance(value, str):
        fixed, n = _SURROGATE.subn("\ufffd", value)
        return fixed, n
    if isinstance(value, list):
        out, total = [], 0
        for v in value:
            fixed, n = _without_lone_surrogates(v)
            out.append(fixed)
            total += n
        return out, total
    if isinstance(value, dict):
        result, total = {}, 0
        for k, v in value.items():
            fk, n1 = _without_lone_surrogates(k)
            fv, n2 = _without_lone_surrogates(v)
            result[fk] = fv
            total += n1 + n2
        return result, total
    return value, 0


def _numbered(fh: Any, path: Path, limit: int) -> Iterator[tuple[int, bytes | None]]:
    """(line number, raw line or None when longer than ``limit``: :func:`bounded_lines`) of an open file; a gzip
    stream that is cut short or not gzip at all is an error naming the file and the line it broke at."""
    number = 0
    try:
        for number, raw in bounded_lines(fh, limit):
            yield number, raw
    except (EOFError, OSError) as exc:  # gzip.BadGzipFile is an OSError
        if path.suffix != ".gz":
            raise
        raise SchemaError(file=str(path), line=number + 1, expected="a whole gzip-compressed file",
                          got=f"{type(exc).__name__}: {exc}") from None


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


__all__ = ["at_line", "BadLines", "bounded_lines", "DuplicateKey", "EmptyLog", "GZIP_BOUND_ENV", "json_error",
           "json_lines", "line_too_long", "long_line", "LINE_BOUND_ENV", "LogWarning", "MAX_GZIP_BYTES",
           "max_gzip_bytes", "MAX_LINE_BYTES", "max_line_bytes", "open_input", "parse_json", "read_json_file",
           "regular_input", "unique_keys"]
