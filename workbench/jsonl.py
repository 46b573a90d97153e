"""JSON lines as logs write them, read strictly: one record a line, each error named ``FILE:LINE``.

Used by every JSONL adapter, the annotation store and the adjudication file. :func:`parse_json` rejects a key
given twice, NaN and Infinity; :func:`json_lines` skips blank lines, drops a UTF-8 byte-order mark and turns
every decoding or parsing problem into a :class:`~workbench.schema.SchemaError` naming the line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench.schema import SchemaError


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
    ``RecursionError``; :func:`json_lines` turns each into a FILE:LINE message.
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


@contextmanager
def at_line(path: str | os.PathLike[str], number: int) -> Iterator[None]:
    """Name ``path:number`` in any :class:`SchemaError` raised while one record is read, and turn the
    interpreter's recursion limit (a record nested too deep to walk) into one too."""
    try:
        yield
    except SchemaError as err:
        raise err.located(str(path), number) from None
    except RecursionError:
        raise SchemaError(file=str(path), line=number, expected="JSON nested at most a few hundred levels deep",
                          got="deeper nesting") from None


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed JSON) for each non-blank line, failing with the line's number.

    Parsing is strict (:func:`parse_json`): a duplicate key, NaN or Infinity, or nesting deep
    enough to exhaust the interpreter is an error naming the line.
    """
    if path.is_dir():
        raise SchemaError("is a directory, expected a file", file=str(path))
    if not path.exists():
        raise SchemaError("no such file", file=str(path))
    any_line = False
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]  # a UTF-8 byte-order mark (Windows editors write one) is not content
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise SchemaError(
                    file=str(path), line=number, expected="UTF-8 text",
                    got=f"byte 0x{raw[exc.start]:02x} at column {exc.start + 1}",
                ) from None
            if not line.strip():
                continue
            any_line = True
            try:
                record = parse_json(line)
            except (ValueError, RecursionError) as exc:
                expected, got = json_error(exc, line)
                raise SchemaError(file=str(path), line=number, expected=expected, got=got) from None
            yield number, record
    if not any_line:
        raise SchemaError(file=str(path), line=1, expected="at least one JSON line", got="an empty file")


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")

