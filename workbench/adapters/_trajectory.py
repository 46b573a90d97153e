"""The workbench's own log format, trajectory JSONL (the documented log format, ``docs`` in README): one run per line::

    {"run_id": "r1", "task_id": "t1", "scenario_id": "s1", "method": "prompting",
     "replicate": 0, "success": true, "task": "Settle every open invoice ...",
     "steps": [
        {"step": 0, "action": {"tool": "list_invoices", "args": {"group": "G7"}},
         "observation": "INV-104, INV-221", "input_tokens": 812, "output_tokens": 40},
        {"step": 1, "text": "Which account?", "observation": "Account 2", "observation_role": "user"}
     ],
     "compactions": [
        {"boundary": 0, "step": 7, "span": [1, 5], "previous_summary": null,
         "retained_turn": "...", "candidate_summary": "## Decisions\\n- ...",
         "committed_summary": "## Decisions\\n- ..."}
     ]}

Run fields are the columns of the ``runs`` table (``run_id`` and ``task_id`` required);
a step's fields are the ``steps`` columns, with the action nested as ``action.tool`` and
``action.args`` (any JSON value; stored as JSON text); a compaction's fields are the
``compactions`` columns with ``span`` as ``[first_step, last_step]``. Steps and
compactions may repeat ``run_id``; if they do it must be the run's own.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

from workbench.tables import _schema as schema
from workbench.tables._validation import check_record, validate, value_fits
from workbench.adapters._staging import collect_runs
from workbench._util.atomic import atomic_write
from workbench._util.jsonl import at_line, json_lines
from workbench.tables._records import encode_args, widen_span
from workbench.errors import describe_value
from workbench.errors import SchemaError
from workbench.tables._files import check_references


def _check_finite(value: Any, field_name: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise SchemaError(field=field_name, expected="a finite number", got=str(value))


def _trajectory_record(record: Any) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    if not isinstance(record, dict):
        raise SchemaError(expected="a JSON object (one run per line)", got=describe_value(record))
    run = {k: v for k, v in record.items() if k not in ("steps", "compactions")}
    nested: dict[str, list[Any]] = {}
    for key in ("steps", "compactions"):
        value = record.get(key, [])
        if isinstance(value, list):
            nested[key] = value
            if key in record:
                run[key] = len(value)  # the runs table's count is the number of nested rows
        elif value_fits(pl.Int64(), value) or value is None:
            nested[key] = []  # a bare count: a log without step-level detail
            run[key] = value
        else:
            raise SchemaError(field=key, expected=f"a list of {key} (or their number)", got=describe_value(value))
    steps_raw, comps_raw = nested["steps"], nested["compactions"]
    check_record(schema.RUNS, run)
    run_id = run["run_id"]
    steps = [_step_row(i, raw, run_id) for i, raw in enumerate(steps_raw)]
    comps = [_compaction_row(i, raw, run_id) for i, raw in enumerate(comps_raw)]
    for key, value in run.items():
        _check_finite(value, key)
    return run, steps, comps


def _own_row(kind: str, i: int, raw: Any, run_id: str) -> dict[str, Any]:
    """A nested object of the run as a row of its own, carrying the run's id (any other id is an error)."""
    if not isinstance(raw, dict):
        raise SchemaError(field=f"{kind}[{i}]", expected="an object", got=describe_value(raw))
    row = dict(raw)
    if row.get("run_id", run_id) != run_id:
        raise SchemaError(field=f"{kind}[{i}].run_id", expected=f"the run's own id {run_id!r}",
                          got=f"unknown run {describe_value(row['run_id'])}")
    row["run_id"] = run_id
    return row


def _step_row(i: int, raw: Any, run_id: str) -> dict[str, Any]:
    """One nested step as a ``steps`` row: the action's tool and args flattened, checked field by field."""
    prefix = f"steps[{i}]."
    st = _own_row("steps", i, raw, run_id)
    action = st.pop("action", None)
    if action is not None:
        if not isinstance(action, dict):
            raise SchemaError(field=prefix + "action", expected="an object with 'tool' and 'args'", got=describe_value(action))
        unknown = set(action) - {"tool", "args"}
        if unknown:
            raise SchemaError(field=prefix + "action", expected="only 'tool' and 'args'", got=f"also {sorted(unknown)}")
        st["tool"] = action.get("tool")
        try:
            st["args"] = encode_args(action.get("args"))
        except ValueError:
            raise SchemaError(field=prefix + "action.args", expected="finite JSON values", got="NaN or Infinity") from None
    check_record(schema.STEPS, st, prefix=prefix)
    return st


def _compaction_row(i: int, raw: Any, run_id: str) -> dict[str, Any]:
    """One nested compaction as a ``compactions`` row: ``span`` split into its first and last step."""
    prefix = f"compactions[{i}]."
    c = _own_row("compactions", i, raw, run_id)
    span = c.pop("span", None)
    if span is not None:
        if not (isinstance(span, list) and len(span) == 2 and all(value_fits(pl.Int64(), v) for v in span)):
            raise SchemaError(field=prefix + "span", expected="[first_step, last_step] as two integers", got=describe_value(span))
        c["span_start"], c["span_end"] = span
    check_record(schema.COMPACTIONS, c, prefix=prefix)
    return c


def read_trajectories(path: str | os.PathLike[str]) -> dict[str, pl.DataFrame]:
    """Load a trajectory JSONL log into the runs, steps and compactions tables.

    Lines are parsed and checked one at a time and gathered into columnar chunks, so a
    large log is never held twice as Python objects; nothing is returned unless every
    line is valid.

    Parameters
    ----------
    path : str or os.PathLike
        A trajectory JSONL log (one run a line, with its steps and compactions).

    Returns
    -------
    dict of str to polars.DataFrame
        The tables read (``runs``, ``steps``, ``compactions``, and the others the format carries), validated.
    """
    return collect_runs(Path(path), trajectory_runs(path))


def trajectory_runs(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any], list[dict[str, Any]],
                                                                      list[dict[str, Any]]]]:
    """(line, run, steps, compactions) for each line of a trajectory log, read one line at a time."""
    path = Path(path)
    for number, record in json_lines(path):
        with at_line(path, number):
            run, steps, comps = _trajectory_record(record)
        yield number, run, steps, comps


def write_trajectories(tables: dict[str, pl.DataFrame], path: str | os.PathLike[str]) -> Path:
    """Export runs, steps and compactions as trajectory JSONL (the inverse of :func:`read_trajectories`).

    Parameters
    ----------
    tables : dict of str to polars.DataFrame
        The ``runs``, ``steps`` and ``compactions`` tables.
    path : str or os.PathLike
        The JSONL file to write (replaced atomically).

    Returns
    -------
    pathlib.Path
        The file written.
    """
    path = Path(path)
    runs = validate("runs", tables["runs"])
    steps = validate("steps", tables.get("steps", schema.empty("steps")))
    comps = validate("compactions", tables.get("compactions", schema.empty("compactions")))
    check_references({"runs": runs, "steps": steps, "compactions": comps})
    steps_by_run = steps.sort("run_id", "step").partition_by("run_id", as_dict=True, maintain_order=True)
    comps_by_run = comps.sort("run_id", "boundary").partition_by("run_id", as_dict=True, maintain_order=True)

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            for run in runs.iter_rows(named=True):
                record = {k: v for k, v in run.items() if v is not None}
                key = (run["run_id"],)
                # nested lists where there are rows; otherwise the bare count, if any
                if key in steps_by_run:
                    record["steps"] = [_step_record(s) for s in steps_by_run[key].iter_rows(named=True)]
                if key in comps_by_run:
                    record["compactions"] = [_compaction_record(c) for c in comps_by_run[key].iter_rows(named=True)]
                fh.write(json.dumps(record, ensure_ascii=False, allow_nan=False))
                fh.write("\n")

    atomic_write(path, write)
    return path


def _step_record(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in row.items():
        if k in ("run_id", "tool", "args") or v is None:
            continue
        out[k] = v
    if row.get("tool") is not None or row.get("args") is not None:
        action: dict[str, Any] = {"tool": row.get("tool")}
        if row.get("args") is not None:
            action["args"] = json.loads(row["args"])
        out["action"] = action
    return out


def _compaction_record(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if k not in ("run_id", "span_start", "span_end") and v is not None}
    if row.get("span_start") is not None and row.get("span_end") is not None:
        out["span"] = [row["span_start"], row["span_end"]]
    elif row.get("span_start") is not None or row.get("span_end") is not None:
        out.update({k: row[k] for k in ("span_start", "span_end") if row.get(k) is not None})
    return out


__all__ = ["encode_args", "read_trajectories", "widen_span", "write_trajectories"]
