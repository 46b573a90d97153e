"""Rows and records as the log readers build them, with no table library (the worker processes of a large import
load this module, not polars, and start in a tenth of a second): a tool call's arguments as JSON text
(:func:`encode_args`), a run's time span (:func:`widen_span`), and runs' rows checked and cut into bounded chunks
(:class:`RowChunks`, which ``RunTables`` turns into validated tables)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from workbench.errors import SchemaError
from workbench.tables._vocabulary import TRAJECTORY_TABLES  # the tables of a log, in their order (declared there)

CHUNK_RUNS = 2000  # a chunk of an adapter's rows: at most this many runs ...
CHUNK_ROWS = 50_000  # ... or rows of runs, steps and compactions together (bounds import memory) ...
CHUNK_TEXT = 8 << 20  # ... or characters of their texts (a coding session's tool results are kilobytes a step)



def encode_args(value: Any) -> str | None:
    """A tool call's arguments as compact JSON text: ``json.dumps(value, ensure_ascii=False, separators=(",", ":"),
    allow_nan=False)``. orjson writes the same text for strings, integers, booleans, nulls, lists and objects
    with string keys, several times faster (a coding session's arguments hold whole files); a value holding a
    float (orjson writes ``1e-05`` as ``0.00001``), a key that is not a string or an integer beyond 64 bits goes
    to ``json``.

    Parameters
    ----------
    value : object
        The arguments (None stays None).

    Returns
    -------
    str or None
        The JSON text.
    """
    if value is None:
        return None
    if not _holds_float(value):
        try:
            return orjson.dumps(value).decode()
        except TypeError:  # (orjson.JSONEncodeError is one) a key that is not a string, an integer beyond 64 bits
            pass
    return _encode(value)


def _holds_float(value: Any) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, float):
            return True
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return False


#: ``json.dumps`` with encode_args' options, its encoder made once (``dumps`` with options makes one a call)
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def _instant(ts: str) -> Any:
    """An ISO-8601 timestamp as a comparable instant (``Z`` read as UTC); the text itself when it does not parse."""
    try:
        t = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return (1, ts)
    return (0, t if t.tzinfo else t.replace(tzinfo=timezone.utc))


def _before(a: str, b: str) -> bool:
    """Whether timestamp ``a`` is an earlier instant than ``b``. Two UTC stamps of one layout (what a client writes
    on every line: same length, ``Z`` at the end) compare as text, which is their time order; any other pair is
    parsed (:func:`_instant`). The text path keeps a line's cost to a string comparison on an import's hot path."""
    if len(a) == len(b) and a[-1:] == b[-1:] == "Z":
        return a < b
    return bool(_instant(a) < _instant(b))


def widen_span(run: dict[str, Any], ts: str) -> None:
    """Keep ``run``'s ``started_at`` the earliest and ``ended_at`` the latest timestamp seen.

    A session file's lines are not always in time order (a resumed session, a sub-agent's lines): the first and
    last line's times gave runs that ended before they started.

    Parameters
    ----------
    run : dict
        The run's fields, updated in place.
    ts : str
        A line's ISO-8601 timestamp.
    """
    if "started_at" not in run or _before(ts, run["started_at"]):
        run["started_at"] = ts
    if "ended_at" not in run or _before(run["ended_at"], ts):
        run["ended_at"] = ts


def _no_rows() -> dict[str, list[dict[str, Any]]]:
    return {t: [] for t in TRAJECTORY_TABLES}


@dataclass
class RowChunks:
    """An adapter's rows of runs, steps and compactions gathered run by run and cut into chunks of at most
    ``CHUNK_RUNS`` runs, ``CHUNK_ROWS`` rows or ``CHUNK_TEXT`` characters of text. A run's id must be
    new and its steps and boundaries unique in it (errors name the log's ``path`` and the run's first line).
    Subclasses say what a chunk of ``rows`` becomes (:meth:`flush`, which empties them); with ``with_runs`` False
    (a worker's builder) the runs' rows are only checked, not kept."""

    path: Path
    with_runs = True
    rows: dict[str, list[dict[str, Any]]] = field(init=False, default_factory=_no_rows)
    run_lines: dict[str, int] = field(init=False, default_factory=dict)  # run id -> the line it was first read at
    pending: int = field(init=False, default=0)  # rows, runs and characters of text gathered since the last chunk
    pending_runs: int = field(init=False, default=0)
    pending_text: int = field(init=False, default=0)

    def add_run(self, number: int, run: dict[str, Any], steps: list[dict[str, Any]],
                compactions: list[dict[str, Any]]) -> None:
        where = (str(self.path), number)
        run_id = run["run_id"]
        if run_id in self.run_lines:
            raise SchemaError(
                file=where[0], line=number, field="run_id", expected="a unique run id",
                got=f"duplicate {run_id!r} first seen at line {self.run_lines[run_id]}",
            )
        self.run_lines[run_id] = number
        for rows, key, name in ((steps, "step", "steps"), (compactions, "boundary", "compactions")):
            seen: set[int] = set()
            for i, row in enumerate(rows):
                if row[key] in seen:
                    raise SchemaError(
                        file=where[0], line=number, field=f"{name}[{i}].{key}",
                        expected=f"a unique (run_id, {key}) in run {run_id!r}", got=f"duplicate {key} {row[key]}",
                    )
                seen.add(row[key])
        if self.with_runs:
            self.rows["runs"].append(run)
        self.rows["steps"].extend(steps)
        self.rows["compactions"].extend(compactions)
        self.pending += 1 + len(steps) + len(compactions)
        self.pending_runs += 1
        self.pending_text += sum(_chars(row.get("observation")) + _chars(row.get("text")) + _chars(row.get("args"))
                                 for row in steps)
        self.pending_text += sum(_chars(row.get("candidate_summary")) for row in compactions)
        if self.pending_runs >= CHUNK_RUNS or self.pending >= CHUNK_ROWS or self.pending_text >= CHUNK_TEXT:
            self.flush()

    def take_rows(self) -> dict[str, list[dict[str, Any]]]:
        """The rows gathered since the last chunk, handed over (the builder starts a new chunk)."""
        rows, self.rows = self.rows, _no_rows()
        self.pending = self.pending_runs = self.pending_text = 0
        return rows

    def flush(self) -> None:
        """Turn the rows gathered so far into a chunk (:meth:`take_rows`): what a chunk becomes is the subclass's."""
        raise NotImplementedError


def _chars(value: Any) -> int:
    return len(value) if isinstance(value, str) else 0


def all_keys(rows: list[dict[str, Any]]) -> list[str]:
    """The keys of ``rows``, in the order they first appear."""
    keys: dict[str, None] = {}
    for r in rows:
        keys.update(dict.fromkeys(r))
    return list(keys)


def row_columns(rows: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """``rows`` as columns (``all_keys``' order; a key a row lacks is None there)."""
    return {key: [row.get(key) for row in rows] for key in all_keys(rows)}


__all__ = ["TRAJECTORY_TABLES", "encode_args", "RowChunks", "widen_span"]
