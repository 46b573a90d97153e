"""Table files: one file per table in a directory, Parquet or JSONL, validated on read and write.

Every reader validates through ``schema.validate`` and fails with
``FILE:LINE: field 'x': expected ..., got ...``. There is one atomic writer
(:func:`atomic_write`), used by every table writer here, by the adapters' exports and by the
LLM response cache: a file appears whole or not at all, and a directory of tables is written
into a temporary sibling first, so a failed import writes nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from workbench import schema
from workbench.schema import SchemaError, describe_value

TRAJECTORY_TABLES = ("runs", "steps", "compactions")
_CHUNK_RUNS = 2000  # a chunk of an adapter's rows: at most this many runs ...
_CHUNK_ROWS = 50_000  # ... or rows of runs, steps and compactions together (bounds import memory)
_ROW_GROUP = 50_000  # rows per Parquet row group of a streamed table


# ---------------------------------------------------------------------------
# atomic writes


def current_umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux ``/proc``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: set and restore (not thread-safe, hence the /proc path first)
    os.umask(mask)
    return mask


def atomic_write(path: Path, write: Callable[[Path], object], *, durable: bool = False) -> None:
    """Call ``write(tmp)`` on a temporary sibling of ``path``, then move it into place (or remove it on failure).

    The file gets the mode a plain ``open(path, "w")`` would give (0644 under the usual umask
    022), not the 0600 of a temporary file, so co-workers can read what was written. With
    ``durable`` the temporary file is flushed to disk (``fsync``) before the move, so a crash
    of the machine cannot leave an empty file under the final name.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o666 & ~current_umask())
        if durable:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
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
    atomic_write(path, lambda p: _records_to_jsonl(records, p))
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
        atomic_write(path, lambda p: frame.write_parquet(p))
    elif path.suffix in (".jsonl", ".ndjson"):
        atomic_write(path, lambda p: _records_to_jsonl(frame.iter_rows(named=True), p))
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


#: rows checked at a time by :func:`scan_table` (bounded memory however long the table)
_CHECK_ROWS = 250_000


def scan_table(path: str | os.PathLike[str], table_name: str, columns: Sequence[str] | None = None) -> pl.LazyFrame:
    """``columns`` of one table file (None: all), opened lazily and checked: an analysis of a large table reads
    what it uses.

    The columns are checked as :func:`read_table` checks them (:func:`schema.validate` with ``partial``:
    dtypes, nulls, closed sets, ranges; errors name ``FILE:row N``, or ``FILE:LINE`` for JSONL), a bounded
    batch of rows at a time, so checking does not hold the table. What comes back is a ``LazyFrame`` of
    those columns cast to their declared dtypes, read again when a query collects it. When the columns hold
    the table's whole key, its uniqueness is checked over the whole file too (:func:`_check_key_across`, 16
    bytes a row). Not checked here: references to other tables. An optional column the file lacks comes back
    null, as :func:`read_table` gives it.
    """
    path = Path(path)
    tbl = schema.table(table_name)
    if path.suffix != ".parquet":  # JSON lines: read and validated whole (they are small or slow anyway)
        frame = read_table(path, table_name)
        columns = frame.columns if columns is None else columns
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise SchemaError(file=str(path), field=missing[0], expected=f"a column of table '{table_name}'",
                              got="no such column")
        return frame.lazy().select(list(columns))
    try:
        present = pl.read_parquet_schema(path)
    except Exception as exc:  # noqa: BLE001 - turn any reader failure into one clear error
        raise SchemaError(f"not a readable Parquet file ({exc.__class__.__name__}: {exc})", file=str(path)) from exc
    if columns is None:  # every column, in the order read_table gives them (declared ones null where absent)
        columns = [c for c in schema.column_order(table_name, list({*present, *tbl.names}))
                   if c in present or not tbl.column(c).is_ground_truth]
    # an optional declared column the file lacks is null, as read_table gives it (ground truth is left out)
    absent = {c for c in columns if c not in present and c in tbl.names and not tbl.column(c).required}
    missing = [c for c in columns if c not in present and c not in absent]
    if missing:
        col = tbl.column(missing[0]) if missing[0] in tbl.names else None
        raise SchemaError(file=str(path), line="row 1", field=missing[0],
                          expected=(f"a column of {schema.describe_dtypes(col.dtype)} in table '{table_name}'"
                                    if col else f"a column of table '{table_name}'"), got="no such column")
    read = [c for c in columns if c in present]
    lazy = pl.scan_parquet(path).select(read)
    offset = 0
    for batch in lazy.collect_batches(chunk_size=_CHECK_ROWS):
        rows = [f"row {offset + i + 1}" for i in range(batch.height)]  # errors name the file's rows
        schema.validate(table_name, batch, file=str(path), lines=rows, partial=True)
        offset += batch.height
    key = tbl.key_in(read)
    if key and offset > _CHECK_ROWS:  # one batch was checked whole above
        _check_key_across(lazy, key, table_name, str(path))
    typed = [pl.col(c).cast(tbl.column(c).dtype) if c in tbl.names else pl.col(c) for c in read]
    nulls = [pl.lit(None, dtype=tbl.column(c).dtype).alias(c) for c in absent if not tbl.column(c).is_ground_truth]
    out = lazy.select(*typed, *nulls)
    return out.select([c for c in columns if c in out.collect_schema()])


def _check_key_across(lazy: pl.LazyFrame, key: list[str], table_name: str, file: str) -> None:
    """Raise :class:`SchemaError` at the first row whose ``key`` repeats an earlier row's, anywhere in the file.

    Holds a 64-bit hash per row (twice, to sort), not the keys: rows whose hashes collide are candidates,
    and only those are read back and compared exactly (an error names rows as :func:`schema.validate` does).
    """
    digest = pl.struct(key).hash(seed=0)
    ordered = lazy.select(digest).collect(engine="streaming").to_series().sort()
    clashing = ordered.filter(ordered == ordered.shift(1)).unique()
    del ordered
    if clashing.is_empty():
        return
    candidates = (lazy.select(key).with_row_index("_row").filter(digest.is_in(clashing.implode()))
                  .collect(engine="streaming").sort("_row"))
    schema.validate(table_name, candidates.drop("_row"), file=file, partial=True,
                    lines=[f"row {r + 1}" for r in candidates.get_column("_row").to_list()])


def _all_keys(rows: list[dict[str, Any]]) -> list[str]:
    keys: dict[str, None] = {}
    for r in rows:
        keys.update(dict.fromkeys(r))
    return list(keys)


def write_tables(tables: dict[str, pl.DataFrame], directory: str | os.PathLike[str], *, fmt: str = "parquet",
                 replace: bool = False) -> Path:
    """Write several tables into ``directory`` (``NAME.parquet`` each); all are validated first.

    The files are written into a temporary sibling directory and then moved into place, so a
    failure part-way leaves ``directory`` as it was. With ``replace`` the written set replaces
    the directory's tables: any other table file there (from an earlier import) is removed, so
    two logs' tables are never mixed.
    """
    directory = Path(directory)
    if fmt not in ("parquet", "jsonl"):
        raise ValueError(f"fmt: expected 'parquet' or 'jsonl', got {fmt!r}")
    validated = {name: schema.validate(name, frame) for name, frame in tables.items()}
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    mode = 0o666 & ~current_umask()
    try:
        for name, frame in validated.items():
            target = staging / f"{name}.{fmt}"
            if fmt == "parquet":
                frame.write_parquet(target)
            else:
                _records_to_jsonl(frame.iter_rows(named=True), target)
            os.chmod(target, mode)
        _move_into_place(staging, directory, replace=replace)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return directory


def _move_into_place(staging: Path, directory: Path, *, replace: bool) -> None:
    """Move the table files of ``staging`` into ``directory``; with ``replace``, remove its other table files."""
    directory.mkdir(parents=True, exist_ok=True)
    files = [t for t in staging.iterdir() if t.is_file()]
    written = {t.name for t in files}
    for target in files:
        os.replace(target, directory / target.name)
    if replace:
        for old in directory.iterdir():
            if old.stem in schema.TABLES and old.suffix in (".parquet", ".jsonl") and old.name not in written:
                old.unlink()


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
        path = table_file(directory, name)
        if path is not None:
            out[name] = read_table(path, name)
            files[name] = path
    check_references(out, files)
    return out


def table_file(directory: str | os.PathLike[str], name: str) -> Path | None:
    """The file of table ``name`` in ``directory``: ``NAME.parquet``, else ``NAME.jsonl``; None when neither is there."""
    for suffix in (".parquet", ".jsonl"):
        path = Path(directory) / f"{name}{suffix}"
        if path.exists():
            return path
    return None


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


# ---------------------------------------------------------------------------
# runs, steps and compactions gathered from a log, line by line


@dataclass
class RunTables:
    """Gathers an adapter's rows of runs, steps and compactions in bounded chunks, validated chunk by chunk.

    In memory (the default) :meth:`finish` returns the tables. With ``spill`` (a directory), every
    chunk is written there as a Parquet part as soon as it is full, so memory stays bounded by a
    chunk whatever the log's size, and :meth:`finish_into` streams the parts into one Parquet file
    per table. With ``keep=False`` chunks are validated and counted, then dropped (``validate``).
    ``derive`` maps a chunk's tables to more tables (the entries of its compactions).
    """

    path: Path
    spill: Path | None = None
    keep: bool = True
    derive: Callable[[dict[str, pl.DataFrame]], dict[str, pl.DataFrame]] | None = None
    chunks: dict[str, list[pl.DataFrame]] = field(default_factory=lambda: {t: [] for t in TRAJECTORY_TABLES})
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {t: [] for t in TRAJECTORY_TABLES})
    run_lines: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    parts: dict[str, list[Path]] = field(default_factory=dict)
    pending: int = 0

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
        self.pending += 1 + len(steps) + len(compactions)
        if len(self.rows["runs"]) >= _CHUNK_RUNS or self.pending >= _CHUNK_ROWS:
            self.flush()

    def flush(self) -> None:
        """Turn the rows gathered so far into a validated chunk (kept, spilled or dropped)."""
        if not self.rows["runs"]:
            return
        streaming = self.spill is not None or not self.keep
        chunk = {name: schema.validate(name, rows_frame(name, self.rows[name]), file=str(self.path)) if streaming
                 else rows_frame(name, self.rows[name]) for name in TRAJECTORY_TABLES}  # in memory: validated whole
        if self.derive is not None:
            chunk.update(self.derive(chunk))
        self.rows = {t: [] for t in TRAJECTORY_TABLES}
        self.pending = 0
        for name, frame in chunk.items():
            self.counts[name] = self.counts.get(name, 0) + frame.height
            if not self.keep:
                continue
            if self.spill is None:
                self.chunks.setdefault(name, []).append(frame)
                continue
            parts = self.parts.setdefault(name, [])
            part = self.spill / name / f"part-{len(parts):06d}.parquet"
            part.parent.mkdir(parents=True, exist_ok=True)
            frame.write_parquet(part)
            parts.append(part)

    def finish(self) -> dict[str, pl.DataFrame]:
        """The tables, in memory (each validated whole once more: keys across chunks)."""
        self.flush()
        out = {}
        for name, parts in self.chunks.items():
            frame = pl.concat(parts, how="diagonal_relaxed") if parts else schema.empty(name)
            out[name] = schema.validate(name, frame, file=str(self.path))
        return out

    def finish_into(self, staging: Path) -> dict[str, int]:
        """Stream each table's spilled parts into ``staging/NAME.parquet`` (row groups, bounded memory); returns
        the row counts. Parts whose columns differ (a column all null in one chunk) are unified first."""
        assert self.spill is not None, "finish_into needs a spill directory"
        self.flush()
        names = list(dict.fromkeys([*TRAJECTORY_TABLES, *self.parts]))
        for name in names:
            target = staging / f"{name}.parquet"
            parts = self.parts.get(name, [])
            if not parts:
                schema.empty(name).write_parquet(target)
                self.counts.setdefault(name, 0)
                continue
            sink_parts(name, parts, target)
        return self.counts


def sink_parts(name: str, parts: Sequence[Path], target: Path) -> None:
    """Stream Parquet parts of table ``name`` into one file ``target`` (row groups, bounded memory). Parts whose
    columns differ (a column all null in one chunk, absent in another) are unified; columns come in
    :func:`schema.column_order`."""
    unified: dict[str, pl.DataType] = {}
    columns = []
    for part in parts:
        cols = pl.read_parquet_schema(part)
        columns.append(set(cols))
        for col, dtype in cols.items():
            if col not in unified or unified[col] == pl.Null:
                unified[col] = dtype
    order = schema.column_order(name, list(unified)) if name in schema.TABLES else list(unified)
    scans = [pl.scan_parquet(part).select(
        [pl.col(c).cast(unified[c]) if c in cols else pl.lit(None, dtype=unified[c]).alias(c) for c in order])
        for part, cols in zip(parts, columns, strict=True)]
    pl.concat(scans, how="vertical").sink_parquet(target, row_group_size=_ROW_GROUP)
    os.chmod(target, 0o666 & ~current_umask())


class PartWriter:
    """One table written a part at a time (each validated), into one file at the end: Parquet parts streamed
    together (bounded memory), or JSONL. Nothing appears at ``path`` until :meth:`finish`; :meth:`discard` (or an
    exception inside ``with``) leaves nothing behind."""

    def __init__(self, name: str, path: str | os.PathLike[str]) -> None:
        self.name, self.path = name, Path(path)
        if self.path.suffix not in (".parquet", ".jsonl", ".ndjson"):
            raise ValueError(f"{self.path}: expected a .parquet or .jsonl file name")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.staging = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.", dir=self.path.parent))
        self.parts: list[Path] = []
        self.rows = 0

    def add(self, frame: pl.DataFrame) -> None:
        frame = schema.validate(self.name, frame)
        part = self.staging / f"part-{len(self.parts):06d}.parquet"
        frame.write_parquet(part)
        self.parts.append(part)
        self.rows += frame.height

    def finish(self) -> Path:
        try:
            if not self.parts:
                self.add(schema.empty(self.name))
            target = self.staging / f"whole{self.path.suffix}"
            if self.path.suffix == ".parquet":
                sink_parts(self.name, self.parts, target)
            else:
                _records_to_jsonl((row for part in self.parts for row in pl.read_parquet(part).iter_rows(named=True)),
                                  target)
                os.chmod(target, 0o666 & ~current_umask())
            os.replace(target, self.path)
            return self.path
        finally:
            self.discard()

    def discard(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)

    def __enter__(self) -> PartWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()


def collect_runs(path: Path, runs: Iterable[tuple[int, dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]],
                 ) -> dict[str, pl.DataFrame]:
    """An adapter's runs (``(line, run, steps, compactions)``) gathered into the tables, in memory."""
    builder = RunTables(path)
    for number, run, steps, comps in runs:
        builder.add_run(number, run, steps, comps)
    return builder.finish()


def stream_tables(path: Path, runs: Iterator[tuple[int, dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]],
                  directory: str | os.PathLike[str] | None, *, replace: bool = False,
                  derive: Callable[[dict[str, pl.DataFrame]], dict[str, pl.DataFrame]] | None = None,
                  ) -> dict[str, int]:
    """Read an adapter's runs (``(line, run, steps, compactions)``) in bounded chunks and write them as Parquet
    into ``directory`` -- or, with ``directory`` None, only validate them. Returns the row count per table.

    Memory is bounded by a chunk, not the log. Everything is written into a temporary sibling of
    ``directory`` and moved into place only when the whole log was valid, so an error (named
    ``FILE:LINE``) leaves ``directory`` as it was, and no directory at all if it did not exist.
    """
    if directory is None:
        builder = RunTables(path, keep=False, derive=derive)
        for number, run, steps, comps in runs:
            builder.add_run(number, run, steps, comps)
        builder.flush()
        return {name: builder.counts.get(name, 0) for name in dict.fromkeys([*TRAJECTORY_TABLES, *builder.counts])}
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        builder = RunTables(path, spill=staging / ".parts", derive=derive)
        for number, run, steps, comps in runs:
            builder.add_run(number, run, steps, comps)
        counts = builder.finish_into(staging)
        shutil.rmtree(staging / ".parts", ignore_errors=True)
        _move_into_place(staging, directory, replace=replace)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return counts
