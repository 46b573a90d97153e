"""Read and write the workbench's tables; load trajectory logs from any harness.

Tables (``workbench.schema``) are stored one file per table in a directory, as Parquet
(``runs.parquet`` ...) or as JSONL (one row per line). Every reader validates through
``schema.validate`` and fails with ``FILE:LINE: field 'x': expected ..., got ...``.
Writers are atomic: a table file appears whole or not at all, and a directory of tables
is written into a temporary sibling first, so a failed import writes nothing.

Trajectory JSONL (the documented log format, ``docs`` in README): one run per line::

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

The OpenAI chat adapter (:func:`read_openai_chat`) reads one run per line with a
``messages`` list in the chat-completions format (see its docstring).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from workbench import schema
from workbench.schema import SchemaError, describe_value

TRAJECTORY_TABLES = ("runs", "steps", "compactions")
_CHUNK_RUNS = 2000


# ---------------------------------------------------------------------------
# atomic writes


def _atomic_write(path: Path, write: Callable[[Path], object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _records_to_jsonl(records: Iterable[dict[str, Any]], path: Path) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for row in records:
            fh.write(json.dumps(row, ensure_ascii=False, allow_nan=False, default=str))
            fh.write("\n")


def write_jsonl(records: Iterable[dict[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write records as JSON lines, atomically (the file appears whole or not at all)."""
    path = Path(path)
    _atomic_write(path, lambda p: _records_to_jsonl(records, p))
    return path


def rows_frame(table_name: str, rows: list[dict[str, Any]]) -> pl.DataFrame:
    """A frame of JSON-like records, with the declared dtypes of the table's columns they carry."""
    if not rows:
        return schema.empty(table_name)
    overrides = schema.table(table_name).polars_schema(_all_keys(rows))
    return pl.DataFrame(rows, schema_overrides=overrides, infer_schema_length=None)


def write_table(frame: pl.DataFrame, path: str | os.PathLike[str], table_name: str) -> Path:
    """Validate ``frame`` as ``table_name`` and write it atomically as Parquet or JSONL (by suffix)."""
    path = Path(path)
    frame = schema.validate(table_name, frame)
    if path.suffix == ".parquet":
        _atomic_write(path, lambda p: frame.write_parquet(p))
    elif path.suffix in (".jsonl", ".ndjson"):
        _atomic_write(path, lambda p: _records_to_jsonl(frame.iter_rows(named=True), p))
    else:
        raise ValueError(f"{path}: expected a .parquet or .jsonl file name")
    return path


def read_table(path: str | os.PathLike[str], table_name: str) -> pl.DataFrame:
    """Read one table file (Parquet or JSONL) and validate it."""
    path = Path(path)
    if path.suffix == ".parquet":
        try:
            frame = pl.read_parquet(path)
        except Exception as exc:  # noqa: BLE001 - turn any reader failure into one clear error
            raise SchemaError(f"not a readable Parquet file ({exc.__class__.__name__}: {exc})", file=str(path)) from exc
        return schema.validate(table_name, frame, file=str(path))
    rows, lines = [], []
    for number, record in json_lines(path):
        if not isinstance(record, dict):
            raise SchemaError(file=str(path), line=number, expected="a JSON object", got=describe_value(record))
        try:
            schema.check_record(schema.table(table_name), record)
        except SchemaError as err:
            raise err.located(str(path), number) from None
        rows.append(record)
        lines.append(number)
    return schema.validate(table_name, rows_frame(table_name, rows), file=str(path), lines=lines)


def _all_keys(rows: list[dict[str, Any]]) -> list[str]:
    keys: dict[str, None] = {}
    for r in rows:
        keys.update(dict.fromkeys(r))
    return list(keys)


def write_tables(tables: dict[str, pl.DataFrame], directory: str | os.PathLike[str], *, fmt: str = "parquet") -> Path:
    """Write several tables into ``directory`` (``NAME.parquet`` each); all are validated first.

    The files are written into a temporary sibling directory and then moved into
    place, so a failure part-way leaves ``directory`` as it was.
    """
    directory = Path(directory)
    validated = {name: schema.validate(name, frame) for name, frame in tables.items()}
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        for name, frame in validated.items():
            target = staging / f"{name}.{fmt}"
            if fmt == "parquet":
                frame.write_parquet(target)
            elif fmt == "jsonl":
                _records_to_jsonl(frame.iter_rows(named=True), target)
            else:
                raise ValueError(f"fmt: expected 'parquet' or 'jsonl', got {fmt!r}")
        directory.mkdir(parents=True, exist_ok=True)
        for target in staging.iterdir():
            os.replace(target, directory / target.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return directory


def read_tables(directory: str | os.PathLike[str], names: tuple[str, ...] | None = None) -> dict[str, pl.DataFrame]:
    """Read every table file in ``directory`` (Parquet preferred over JSONL) and check references.

    A row whose key refers to a row of another table that is present (a step's run,
    an entry's compaction) must find it.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise SchemaError("not a directory of tables", file=str(directory))
    out: dict[str, pl.DataFrame] = {}
    files: dict[str, Path] = {}
    for name in names or tuple(schema.TABLES):
        for suffix in (".parquet", ".jsonl"):
            path = directory / f"{name}{suffix}"
            if path.exists():
                out[name] = read_table(path, name)
                files[name] = path
                break
    check_references(out, files)
    return out


def check_references(tables: dict[str, pl.DataFrame], files: dict[str, Path] | None = None) -> None:
    """Every declared reference (steps.run_id -> runs ...) between present tables resolves."""
    files = files or {}
    for name, frame in tables.items():
        for cols, target in schema.table(name).references:
            if target not in tables or not frame.height:
                continue
            missing = frame.select(cols).with_row_index("_row").join(
                tables[target].select(cols).unique(), on=list(cols), how="anti"
            )
            if missing.height:
                first = missing.row(0, named=True)
                raise SchemaError(
                    file=str(files.get(name, f"<{name}>")),
                    line=_row_line(files.get(name), int(first["_row"])),
                    field=",".join(cols),
                    expected=f"a key present in table '{target}'",
                    got=f"unknown {', '.join(f'{c}={first[c]!r}' for c in cols)}",
                )


def _row_line(path: Path | None, row: int) -> str:
    return str(row + 1) if path is not None and path.suffix == ".jsonl" else f"row {row + 1}"


# ---------------------------------------------------------------------------
# JSON lines, streamed


def json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """Yield (line number, parsed JSON) for each non-blank line, failing with the line's number."""
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
                yield number, json.loads(line, parse_constant=_reject_constant)
            except json.JSONDecodeError as exc:
                what = "a truncated line" if exc.pos >= len(line.rstrip()) else f"{exc.msg} at column {exc.colno}"
                raise SchemaError(file=str(path), line=number, expected="one JSON object per line", got=what) from None
            except ValueError as exc:
                raise SchemaError(file=str(path), line=number, expected="finite JSON numbers", got=str(exc)) from None
    if not any_line:
        raise SchemaError(file=str(path), line=1, expected="at least one JSON line", got="an empty file")


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


# ---------------------------------------------------------------------------
# trajectory JSONL


@dataclass
class _Builder:
    """Accumulates rows of runs, steps and compactions in chunks, validated line by line."""

    path: Path
    chunks: dict[str, list[pl.DataFrame]] = field(default_factory=lambda: {t: [] for t in TRAJECTORY_TABLES})
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {t: [] for t in TRAJECTORY_TABLES})
    run_lines: dict[str, int] = field(default_factory=dict)

    def add_run(self, number: int, run: dict[str, Any], steps: list[dict[str, Any]], compactions: list[dict[str, Any]]) -> None:
        where = (str(self.path), number)
        run_id = run["run_id"]
        if run_id in self.run_lines:
            raise SchemaError(
                file=where[0], line=number, field="run_id", expected="a unique run id",
                got=f"duplicate {run_id!r} first seen at line {self.run_lines[run_id]}",
            )
        self.run_lines[run_id] = number
        seen_steps: set[int] = set()
        for i, st in enumerate(steps):
            if st["step"] in seen_steps:
                raise SchemaError(
                    file=where[0], line=number, field=f"steps[{i}].step",
                    expected=f"a unique (run_id, step) in run {run_id!r}", got=f"duplicate step {st['step']}",
                )
            seen_steps.add(st["step"])
        seen_b: set[int] = set()
        for i, c in enumerate(compactions):
            if c["boundary"] in seen_b:
                raise SchemaError(
                    file=where[0], line=number, field=f"compactions[{i}].boundary",
                    expected=f"a unique (run_id, boundary) in run {run_id!r}", got=f"duplicate boundary {c['boundary']}",
                )
            seen_b.add(c["boundary"])
        self.rows["runs"].append(run)
        self.rows["steps"].extend(steps)
        self.rows["compactions"].extend(compactions)
        if len(self.rows["runs"]) >= _CHUNK_RUNS:
            self.flush()

    def flush(self) -> None:
        for name in TRAJECTORY_TABLES:
            rows = self.rows[name]
            if rows:
                self.chunks[name].append(rows_frame(name, rows))
                self.rows[name] = []

    def finish(self) -> dict[str, pl.DataFrame]:
        self.flush()
        out = {}
        for name in TRAJECTORY_TABLES:
            parts = self.chunks[name]
            frame = pl.concat(parts, how="diagonal_relaxed") if parts else schema.empty(name)
            out[name] = schema.validate(name, frame, file=str(self.path))
        return out


def _encode_args(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


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
        elif schema.value_fits(pl.Int64(), value) or value is None:
            nested[key] = []  # a bare count: a log without step-level detail
            run[key] = value
        else:
            raise SchemaError(field=key, expected=f"a list of {key} (or their number)", got=describe_value(value))
    steps_raw, comps_raw = nested["steps"], nested["compactions"]
    schema.check_record(schema.RUNS, run)
    run_id = run["run_id"]
    steps: list[dict[str, Any]] = []
    for i, raw in enumerate(steps_raw):
        prefix = f"steps[{i}]."
        if not isinstance(raw, dict):
            raise SchemaError(field=f"steps[{i}]", expected="an object", got=describe_value(raw))
        st = dict(raw)
        if st.get("run_id", run_id) != run_id:
            raise SchemaError(field=prefix + "run_id", expected=f"the run's own id {run_id!r}",
                              got=f"unknown run {describe_value(st['run_id'])}")
        st["run_id"] = run_id
        action = st.pop("action", None)
        if action is not None:
            if not isinstance(action, dict):
                raise SchemaError(field=prefix + "action", expected="an object with 'tool' and 'args'", got=describe_value(action))
            unknown = set(action) - {"tool", "args"}
            if unknown:
                raise SchemaError(field=prefix + "action", expected="only 'tool' and 'args'", got=f"also {sorted(unknown)}")
            st["tool"] = action.get("tool")
            try:
                st["args"] = _encode_args(action.get("args"))
            except ValueError:
                raise SchemaError(field=prefix + "action.args", expected="finite JSON values", got="NaN or Infinity") from None
        schema.check_record(schema.STEPS, st, prefix=prefix)
        steps.append(st)
    comps: list[dict[str, Any]] = []
    for i, raw in enumerate(comps_raw):
        prefix = f"compactions[{i}]."
        if not isinstance(raw, dict):
            raise SchemaError(field=f"compactions[{i}]", expected="an object", got=describe_value(raw))
        c = dict(raw)
        if c.get("run_id", run_id) != run_id:
            raise SchemaError(field=prefix + "run_id", expected=f"the run's own id {run_id!r}",
                              got=f"unknown run {describe_value(c['run_id'])}")
        c["run_id"] = run_id
        span = c.pop("span", None)
        if span is not None:
            if not (isinstance(span, list) and len(span) == 2 and all(schema.value_fits(pl.Int64(), v) for v in span)):
                raise SchemaError(field=prefix + "span", expected="[first_step, last_step] as two integers", got=describe_value(span))
            c["span_start"], c["span_end"] = span
        schema.check_record(schema.COMPACTIONS, c, prefix=prefix)
        comps.append(c)
    for key, value in run.items():
        _check_finite(value, key)
    return run, steps, comps


def read_trajectories(path: str | os.PathLike[str]) -> dict[str, pl.DataFrame]:
    """Load a trajectory JSONL log into the runs, steps and compactions tables.

    Lines are parsed and checked one at a time and gathered into columnar chunks, so a
    large log is never held twice as Python objects; nothing is returned unless every
    line is valid.
    """
    path = Path(path)
    builder = _Builder(path)
    for number, record in json_lines(path):
        try:
            run, steps, comps = _trajectory_record(record)
        except SchemaError as err:
            raise err.located(str(path), number) from None
        builder.add_run(number, run, steps, comps)
    return builder.finish()


def write_trajectories(tables: dict[str, pl.DataFrame], path: str | os.PathLike[str]) -> Path:
    """Export runs, steps and compactions as trajectory JSONL (the inverse of :func:`read_trajectories`)."""
    path = Path(path)
    runs = schema.validate("runs", tables["runs"])
    steps = schema.validate("steps", tables.get("steps", schema.empty("steps")))
    comps = schema.validate("compactions", tables.get("compactions", schema.empty("compactions")))
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

    _atomic_write(path, write)
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


# ---------------------------------------------------------------------------
# OpenAI chat-completions adapter


def _content_text(content: Any, where: str) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for j, part in enumerate(content):
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
            else:
                raise SchemaError(field=f"{where}.content[{j}]", expected="a text part", got=describe_value(part))
        return "".join(parts)
    raise SchemaError(field=f"{where}.content", expected="a string or a list of text parts", got=describe_value(content))


def chat_to_run(record: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """Convert one run in OpenAI chat-completions format into (run, steps, compactions) records.

    ``record`` holds run fields (``run_id``, ``task_id`` ...) and ``messages``. Each
    assistant ``tool_calls`` item is one step (tool = function name, args = the parsed
    arguments, or the raw string when they are not JSON); the ``tool`` message with the
    same ``tool_call_id`` is its observation. An assistant message without tool calls
    is a step with no tool whose observation is the next user message (a user simulator's
    turn, ``observation_role = "user"``). The first user message is the task (unless
    ``task`` is given). A message that carries ``"compaction": true`` or
    ``"compaction": {...}`` is a compaction summary: its content is the committed
    summary; the object may give ``candidate_summary``, ``previous_summary``,
    ``retained_turn`` and ``span``. System messages are not steps. Token usage is taken
    from an assistant message's ``usage`` (``prompt_tokens``, ``completion_tokens``).
    """
    messages = record.get("messages")
    if not isinstance(messages, list):
        raise SchemaError(field="messages", expected="a list of chat messages", got=describe_value(messages))
    run = {k: v for k, v in record.items() if k != "messages"}
    steps: list[dict[str, Any]] = []
    comps: list[dict[str, Any]] = []
    by_call: dict[str, list[dict[str, Any]]] = {}
    task: str | None = run.get("task")
    last_boundary_step = 0
    previous_committed: str | None = None
    for i, msg in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(msg, dict):
            raise SchemaError(field=where, expected="a message object", got=describe_value(msg))
        role = msg.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            raise SchemaError(field=f"{where}.role", expected="system, developer, user, assistant or tool",
                              got=describe_value(role))
        text = _content_text(msg.get("content"), where)
        marker = msg.get("compaction")
        if marker:
            if not isinstance(marker, (dict, bool)):
                raise SchemaError(field=f"{where}.compaction", expected="true or an object", got=describe_value(marker))
            info = marker if isinstance(marker, dict) else {}
            if text is None:
                raise SchemaError(field=f"{where}.content", expected="the committed summary text", got="null")
            comp: dict[str, Any] = {
                "boundary": len(comps),
                "step": len(steps),
                "span_start": last_boundary_step,
                "span_end": len(steps) - 1,
                "previous_summary": previous_committed,
                "retained_turn": None,
                "candidate_summary": text,
                "committed_summary": text,
            }
            for k in ("candidate_summary", "previous_summary", "retained_turn", "boundary"):
                if k in info:
                    comp[k] = info[k]
            if "span" in info:
                span = info["span"]
                if not (isinstance(span, list) and len(span) == 2):
                    raise SchemaError(field=f"{where}.compaction.span", expected="[first_step, last_step]", got=describe_value(span))
                comp["span_start"], comp["span_end"] = span
            comps.append(comp)
            previous_committed = text
            last_boundary_step = len(steps)
            continue
        if role in ("system", "developer"):
            continue
        if role == "user":
            if task is None:
                task = text
                continue
            if steps and steps[-1].get("tool") is None and steps[-1].get("observation") is None:
                steps[-1]["observation"] = text
                steps[-1]["observation_role"] = "user"
            else:
                steps.append({"step": len(steps), "tool": None, "args": None, "text": None,
                              "observation": text, "observation_role": "user", "message_index": i})
            continue
        if role == "assistant":
            usage: dict[str, Any] = msg["usage"] if isinstance(msg.get("usage"), dict) else {}
            calls = msg.get("tool_calls") or []
            if not isinstance(calls, list):
                raise SchemaError(field=f"{where}.tool_calls", expected="a list", got=describe_value(calls))
            if not calls:
                steps.append({"step": len(steps), "tool": None, "args": None, "text": text, "observation": None,
                              "message_index": i})
                _usage(steps[-1], usage)
                continue
            for j, call in enumerate(calls):
                cw = f"{where}.tool_calls[{j}]"
                fn = call.get("function") if isinstance(call, dict) else None
                if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                    raise SchemaError(field=f"{cw}.function.name", expected="a string", got=describe_value(fn))
                raw_args = fn.get("arguments")
                try:
                    args = json.loads(raw_args) if isinstance(raw_args, str) else raw_args
                except json.JSONDecodeError:
                    args = raw_args  # kept verbatim: some models emit arguments that are not JSON
                step = {"step": len(steps), "tool": fn["name"], "args": _encode_args(args),
                        "text": text if j == 0 else None, "observation": None, "message_index": i}
                if j == 0:
                    _usage(step, usage)
                call_id = call.get("id")
                if isinstance(call_id, str):
                    # real logs reuse ids (tau-bench does): a result answers the oldest unanswered call of that id
                    by_call.setdefault(call_id, []).append(step)
                steps.append(step)
            continue
        # role == "tool"
        call_id = msg.get("tool_call_id")
        pending_same = [st for st in by_call.get(call_id, [])] if isinstance(call_id, str) else []
        target = next((st for st in pending_same if st.get("observation") is None), None)
        if target is None and pending_same:
            raise SchemaError(field=f"{where}.tool_call_id", expected="a call that has no result yet",
                              got=f"a second result for {call_id!r}")
        if target is None:
            pending = [s for s in steps if s.get("tool") is not None and s.get("observation") is None]
            if call_id is None and pending:
                target = pending[0]
            else:
                raise SchemaError(field=f"{where}.tool_call_id", expected="the id of an earlier assistant tool call",
                                  got=describe_value(call_id))
        target["observation"] = text
        target["observation_role"] = "tool"
    run.setdefault("task", task)
    run["steps"], run["compactions"] = len(steps), len(comps)
    for st in steps:
        st["run_id"] = run.get("run_id")
    schema.check_record(schema.RUNS, run)
    for j, st in enumerate(steps):
        schema.check_record(schema.STEPS, st, prefix=f"steps[{j}].")
    for c in comps:
        c["run_id"] = run["run_id"]
    return run, steps, comps


def _usage(step: dict[str, Any], usage: dict[str, Any]) -> None:
    for src, dst in (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens")):
        if isinstance(usage.get(src), int):
            step[dst] = usage[src]


def read_openai_chat(path: str | os.PathLike[str]) -> dict[str, pl.DataFrame]:
    """Load a JSONL file of runs in OpenAI chat-completions format (see :func:`chat_to_run`)."""
    path = Path(path)
    builder = _Builder(path)
    for number, record in json_lines(path):
        try:
            if not isinstance(record, dict):
                raise SchemaError(expected="a JSON object (one run per line)", got=describe_value(record))
            run, steps, comps = chat_to_run(record)
        except SchemaError as err:
            raise err.located(str(path), number) from None
        builder.add_run(number, run, steps, comps)
    return builder.finish()


def message_text(msg: dict[str, Any]) -> str:
    """What a chat message puts in the context: its text plus its tool calls as ``name(arguments)``."""
    text = _content_text(msg.get("content"), "message") or ""
    for call in msg.get("tool_calls") or []:
        fn = call.get("function") or {}
        text += f"\n{fn.get('name')}({fn.get('arguments')})"
    return text


def message_tokens(messages: list[dict[str, Any]], encoding: str) -> tuple[list[int], list[int]]:
    """Per message: input tokens before it (system prompt excluded, FOCUS A.8) and its own tokens."""
    from workbench import tokens

    own = tokens.count_many([message_text(m) for m in messages], encoding)
    before, total = [], 0
    for m, n in zip(messages, own, strict=True):
        before.append(total)
        if m.get("role") not in ("system", "developer"):
            total += n
    return before, own


def read_tau_bench(path: str | os.PathLike[str], *, domain: str | None = None) -> dict[str, pl.DataFrame]:
    """Load a tau-bench ``historical_trajectories`` file (a JSON list of runs) through the chat adapter.

    ``task_id`` and ``trial`` (as ``replicate``) identify a run, ``reward`` == 1 is success,
    the user simulator's turns are kept as user messages (observations with role ``user``).
    Steps get token counts computed offline from the messages: ``input_tokens`` /
    ``output_tokens`` in o200k (system prompt excluded) and ``input_tokens_cl100k`` /
    ``output_tokens_cl100k`` in cl100k, which FOCUS reports with.
    """
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            data = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SchemaError(file=str(path), line=getattr(exc, "lineno", 1), expected="a tau-bench JSON list",
                          got=str(exc)) from None
    if not isinstance(data, list) or not data:
        raise SchemaError(file=str(path), line=1, expected="a non-empty JSON list of runs", got=describe_value(data))
    domain = domain or path.stem
    builder = _Builder(path)
    for k, rec in enumerate(data):
        where = f"[{k}]"
        try:
            if not isinstance(rec, dict):
                raise SchemaError(field=where, expected="a run object", got=describe_value(rec))
            for field_name, ok in (("task_id", lambda v: isinstance(v, int) and not isinstance(v, bool)),
                                   ("trial", lambda v: isinstance(v, int) and not isinstance(v, bool)),
                                   ("reward", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)),
                                   ("traj", lambda v: isinstance(v, list))):
                if not ok(rec.get(field_name)):
                    raise SchemaError(field=f"{where}.{field_name}", expected="a number" if field_name != "traj"
                                      else "a list of chat messages", got=describe_value(rec.get(field_name)))
            traj = rec["traj"]
            record = {"run_id": f"{domain}/t{rec['task_id']}/r{rec['trial']}", "task_id": str(rec["task_id"]),
                      "scenario_id": str(rec["task_id"]), "subset": domain, "method": "no_compression",
                      "model": rec.get("model") or domain.split("-")[0], "replicate": int(rec["trial"]),
                      "reward": float(rec["reward"]), "success": float(rec["reward"]) >= 1.0, "messages": traj}
            run, steps, comps = chat_to_run(record)  # task = the first user message: what the agent saw
            instruction = ((rec.get("info") or {}).get("task") or {}).get("instruction")
            run["user_instruction"] = instruction if isinstance(instruction, str) else None  # the simulator's brief
            for enc, suffix in (("o200k_base", ""), ("cl100k_base", "_cl100k")):
                before, own = message_tokens(traj, enc)
                seen: set[int] = set()
                for st in steps:
                    mi = st.get("message_index")
                    if mi is None or traj[mi].get("role") != "assistant":
                        continue
                    first = mi not in seen
                    seen.add(mi)
                    st[f"input_tokens{suffix}"] = before[mi] if first else 0
                    st[f"output_tokens{suffix}"] = own[mi] if first else 0
        except SchemaError as err:
            field_name = f"{where}.{err.field}" if err.field and not err.field.startswith("[") else (err.field or where)
            raise SchemaError(err.detail, file=str(path), line=1, field=field_name, expected=err.expected,
                              got=err.got) from None
        builder.add_run(k + 1, run, steps, comps)
    return builder.finish()


FORMATS: dict[str, Callable[[str | os.PathLike[str]], dict[str, pl.DataFrame]]] = {
    "trajectory": read_trajectories,
    "openai": read_openai_chat,
    "tau-bench": read_tau_bench,
}


def sniff_format(path: str | os.PathLike[str]) -> str:
    """Guess a log's format: ``tau-bench`` for a JSON list of runs with ``traj``; from the first JSONL
    record, ``openai`` if it has ``messages``, else ``trajectory``."""
    with open(path, "rb") as fh:
        head = fh.read(4096).lstrip()
    if head.startswith(b"[") and b'"traj"' in head:
        return "tau-bench"
    for _, record in json_lines(Path(path)):
        return "openai" if isinstance(record, dict) and "messages" in record else "trajectory"
    return "trajectory"  # pragma: no cover - _json_lines raises on an empty file


def read_log(path: str | os.PathLike[str], fmt: str = "auto") -> dict[str, pl.DataFrame]:
    """Load a trajectory log in any supported format (``auto`` sniffs it)."""
    if not Path(path).is_file():
        raise SchemaError("no such file", file=str(path))
    if fmt == "auto":
        fmt = sniff_format(path)
    try:
        reader = FORMATS[fmt]
    except KeyError:
        raise SchemaError(field="format", expected=f"one of {['auto', *FORMATS]}", got=repr(fmt)) from None
    return reader(path)
