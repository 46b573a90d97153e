"""Table files: one file per table in a directory, Parquet or JSONL, validated on read and write.

Every reader validates through ``validate`` and fails with
``FILE:LINE: field 'x': expected ..., got ...``. Files are written through :func:`workbench._util.atomic.atomic_write`
(a file appears whole or not at all), and a directory of tables is written into a temporary sibling first,
so a failed import writes nothing. :func:`read_table` with ``lazy=True`` opens a table checked a batch at a time;
:class:`PartWriter` writes one table a part at a time. A directory's tables are loaded by
:func:`workbench.datasets.load`; frame helpers are in :mod:`workbench.tables._frames`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, overload

import polars as pl

from workbench.tables import _schema as schema
from workbench.tables._validation import check_record, describe_dtypes, validate
from workbench._util.atomic import current_umask, make_staging, records_to_jsonl, writes_to
from workbench._util.jsonl import json_lines
from workbench.errors import describe_value
from workbench.errors import SchemaError
from workbench.tables._frames import rows_of, slices
from workbench.tables._records import TRAJECTORY_TABLES, all_keys

_ROW_GROUP = 50_000  # rows per Parquet row group of a streamed table, at most ...
_ROW_GROUP_BYTES = 16 << 20  # ... and about this many bytes of data (a coding session's steps are kilobytes each)


def rows_frame(table_name: str, rows: list[dict[str, Any]]) -> pl.DataFrame:
    """A frame of JSON-like records, with the declared dtypes of the table's columns they carry."""
    if not rows:
        return schema.empty(table_name)
    overrides = schema.table(table_name).polars_schema(all_keys(rows))
    return pl.DataFrame(rows, schema_overrides=overrides, infer_schema_length=None)


def columns_frame(table_name: str, columns: dict[str, list[Any]]) -> pl.DataFrame:
    """``rows_frame`` of rows given as columns (``row_columns``): the same frame, built
    column by column (half the time on a coding session's steps). A column the schema does not declare, or a value
    not of its column's dtype, is read as ``rows_frame`` reads it, from the rows."""
    if not columns or not any(columns.values()):
        return schema.empty(table_name)
    declared = schema.table(table_name).polars_schema(list(columns))
    if len(declared) == len(columns):
        try:
            return pl.DataFrame(columns, schema={name: declared[name] for name in columns})
        except (TypeError, pl.exceptions.PolarsError):  # a value not of its column's dtype: as the rows read
            pass
    names = list(columns)
    return rows_frame(table_name, [dict(zip(names, values, strict=True)) for values in zip(*columns.values(),
                                                                                              strict=True)])


@overload
def read_table(path: str | os.PathLike[str], table_name: str, columns: Sequence[str] | None = None, *,
               lazy: Literal[False] = False) -> pl.DataFrame: ...


@overload
def read_table(path: str | os.PathLike[str], table_name: str, columns: Sequence[str] | None = None, *,
               lazy: Literal[True]) -> pl.LazyFrame: ...


def read_table(path: str | os.PathLike[str], table_name: str, columns: Sequence[str] | None = None, *,
               lazy: bool = False) -> pl.DataFrame | pl.LazyFrame:
    """Read one table file (Parquet or JSONL) and validate it: the one reader of a table file.

    ``lazy`` opens a Parquet table checked a bounded batch of rows at a time and returns a ``LazyFrame`` that reads
    it again when a query collects it (:func:`_scan`); ``columns`` reads only those (lazily, then collected when
    not ``lazy``). Errors name ``FILE:LINE`` (JSONL) or ``FILE:row N`` (Parquet).

    Parameters
    ----------
    path : str or os.PathLike
        The table file.
    table_name : str
        Its table in the schema.
    columns : sequence of str, optional
        The columns read.
    lazy : bool, default False
        Return a ``LazyFrame``.

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        The validated table.
    """
    if lazy or columns is not None:
        scanned = _scan(path, table_name, columns)
        return scanned if lazy else scanned.collect()
    return _read_whole(path, table_name)


def _read_whole(path: str | os.PathLike[str], table_name: str) -> pl.DataFrame:
    path = Path(path)
    if path.suffix == ".parquet":
        try:
            frame = pl.read_parquet(path)
        except Exception as exc:  # noqa: BLE001 - turn any reader failure into one clear error
            raise SchemaError(f"not a readable Parquet file ({exc.__class__.__name__}: {exc})", file=str(path)) from exc
        return validate(table_name, frame, file=str(path))
    rows, lines = [], []
    for number, record in json_lines(path):
        if not isinstance(record, dict):
            raise SchemaError(file=str(path), line=number, expected="a JSON object", got=describe_value(record))
        try:
            check_record(schema.table(table_name), record)
        except SchemaError as err:
            raise err.located(str(path), number) from None
        rows.append(record)
        lines.append(number)
    return validate(table_name, rows_frame(table_name, rows), file=str(path), lines=lines)


#: rows checked at a time by :func:`read_table` with ``lazy`` (bounded memory however long the table)
_CHECK_ROWS = 250_000
#: about how many bytes of a table are checked at a time: fewer rows than _CHECK_ROWS when rows are wide (a
#: compactions table's summaries: 250,000 of them were 0.6 GiB at once)
_CHECK_BYTES = 64 * 2**20


def _check_rows(lazy: pl.LazyFrame) -> int:
    """Rows to check at a time: :data:`_CHECK_ROWS`, or fewer so a batch is about :data:`_CHECK_BYTES` (the row
    size estimated on the first 1,000 rows)."""
    head = lazy.head(1000).collect()
    per_row = head.estimated_size() / head.height if head.height else 1.0
    return max(1, min(_CHECK_ROWS, int(_CHECK_BYTES // max(per_row, 1.0))))


class RowNames(Sequence[str]):
    """``row N`` for the rows of a batch that starts after ``offset`` rows of a file: how errors name a Parquet
    file's rows, made when an error asks (a list of 250,000 such strings per batch was 15 MiB)."""

    def __init__(self, offset: int, length: int) -> None:
        self.offset, self.length = offset, length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.length))]
        if not -self.length <= i < self.length:
            raise IndexError(i)
        return f"row {self.offset + i % self.length + 1}"


def _scan(path: str | os.PathLike[str], table_name: str, columns: Sequence[str] | None = None) -> pl.LazyFrame:
    """``columns`` of one table file (None: all), opened lazily and checked: an analysis of a large table reads
    what it uses.

    The columns are checked as :func:`read_table` checks them (:func:`validate` with ``partial``:
    dtypes, nulls, closed sets, ranges; errors name ``FILE:row N``, or ``FILE:LINE`` for JSONL), a bounded
    batch of rows at a time, so checking does not hold the table. What comes back is a ``LazyFrame`` of
    those columns cast to their declared dtypes, read again when a query collects it. When the columns hold
    the table's whole key, its uniqueness is checked over the whole file too (:func:`_check_key_across`: a
    bounded number of 64-bit hashes in memory, the rest in temporary files). Not checked here: references to
    other tables. An optional column the file lacks comes back null, as :func:`read_table` gives it.
    """
    path = Path(path)
    tbl = schema.table(table_name)
    if path.suffix != ".parquet":  # JSON lines: read and validated whole (they are small or slow anyway)
        frame = _read_whole(path, table_name)
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
                          expected=(f"a column of {describe_dtypes(col.dtype)} in table '{table_name}'"
                                    if col else f"a column of table '{table_name}'"), got="no such column")
    read = [c for c in columns if c in present]
    lazy = pl.scan_parquet(path).select(read)
    offset = 0
    at_once = _check_rows(lazy)
    for batch in slices(lazy, at_once):
        validate(table_name, batch, file=str(path), lines=RowNames(offset, batch.height), partial=True)
        offset += batch.height
    key = tbl.key_in(read)
    if key and offset > at_once:  # one batch was checked whole above
        _check_key_across(lazy, key, table_name, str(path), offset)
    typed = [pl.col(c).cast(tbl.column(c).dtype) if c in tbl.names else pl.col(c) for c in read]
    nulls = [pl.lit(None, dtype=tbl.column(c).dtype).alias(c) for c in absent if not tbl.column(c).is_ground_truth]
    out = lazy.select(*typed, *nulls)
    return out.select([c for c in columns if c in out.collect_schema()])


#: 64-bit key hashes held at a time while a key's uniqueness is checked (64 MiB); a larger file's hashes are
#: spread over temporary bucket files first, each bucket checked alone
_KEY_HASHES = 8_000_000


def _check_key_across(lazy: pl.LazyFrame, key: list[str], table_name: str, file: str | None,
                      rows: int = 0, *, row: str | None = None) -> None:
    """Raise :class:`~workbench.errors.SchemaError` at the first row whose ``key`` repeats an earlier row's,
    anywhere in the file.

    Holds 64-bit hashes of the keys, not the keys, and at most :data:`_KEY_HASHES` of them at a time: for a file
    of more ``rows``, one pass writes each row's hash into one of ``rows / _KEY_HASHES`` temporary files by its top
    bits (equal keys land in the same file), then each file is sorted and searched alone, so memory stays the same
    however long the table. Rows whose hashes collide are candidates, and only those are read back and compared
    exactly (an error names rows as :func:`validate` does). ``row``: a column of ``lazy`` holding each row's place
    in the table (0-based; the rows are a selection of it), named in an error instead of its place in ``lazy``.
    """
    import numpy as np

    digest = pl.struct(key).hash(seed=0)
    clashes: list[np.ndarray] = []

    def repeated(hashes: np.ndarray) -> None:
        hashes.sort()
        clashes.append(np.unique(hashes[1:][hashes[1:] == hashes[:-1]]))

    buckets = -(-rows // _KEY_HASHES)
    if buckets <= 1:
        repeated(lazy.select(digest).collect(engine="streaming").to_series().to_numpy().copy())
    else:
        shift = np.uint64(64 - int(buckets - 1).bit_length())  # top bits: a bucket number below 2**bits
        with tempfile.TemporaryDirectory(prefix="workbench-keys-") as tmp:
            parts = [open(Path(tmp) / f"{b}.u64", "wb") for b in range(1 << (64 - int(shift)))]
            try:
                for batch in slices(lazy.select(digest), _CHECK_ROWS):
                    hashes = batch.to_series().to_numpy()
                    which = hashes >> shift
                    order = np.argsort(which, kind="stable")
                    bounds = np.searchsorted(which[order], np.arange(len(parts) + 1))
                    for b, fh in enumerate(parts):
                        hashes[order[bounds[b]:bounds[b + 1]]].tofile(fh)
            finally:
                for fh in parts:
                    fh.close()
            for fh in parts:
                repeated(np.fromfile(fh.name, dtype=np.uint64))
    clashing = pl.Series(np.concatenate(clashes), dtype=pl.UInt64)
    if clashing.is_empty():
        return
    placed = lazy.select(row, *key).rename({row: "_row"}) if row else lazy.select(key).with_row_index("_row")
    candidates = placed.filter(digest.is_in(clashing.implode())).collect(engine="streaming").sort("_row")
    validate(table_name, candidates.drop("_row"), file=file, partial=True,
                    lines=[f"row {r + 1}" for r in candidates.get_column("_row").to_list()])


def _group_rows(rows: int, size: int) -> int:
    """Rows per Parquet row group of a table of ``rows`` rows and ``size`` bytes: :data:`_ROW_GROUP`, fewer when its
    rows are wide (about :data:`_ROW_GROUP_BYTES` of data a group)."""
    return max(64, min(_ROW_GROUP, _ROW_GROUP_BYTES * rows // max(1, size)))


def write_tables(tables: dict[str, pl.DataFrame], directory: str | os.PathLike[str], *, fmt: str = "parquet",
                 replace: bool = False, stage: Callable[[Path], object] | None = None) -> Path:
    """Write several tables into ``directory`` (``NAME.parquet`` each); all are validated first.

    The files are written into a temporary sibling directory and then moved into place, so a
    failure part-way leaves ``directory`` as it was. With ``replace`` the written set replaces
    the directory's tables: any other table file there (from an earlier import) is removed, so
    two logs' tables are never mixed. ``stage(staging)`` writes more into the staging directory (a labelled
    import's annotation store), moved into place with the tables; a directory it makes must not exist yet in
    ``directory``.

    Parameters
    ----------
    tables : dict of str to polars.DataFrame
        The tables by name.
    directory : str or os.PathLike
        Where they are written.
    fmt : {"parquet", "jsonl"}, default "parquet"
        The files' format.
    replace : bool, default False
        Remove the directory's other table files.
    stage : callable, optional
        ``stage(staging)`` writes more into the staging directory.

    Returns
    -------
    pathlib.Path
        The directory.
    """
    directory = Path(directory)
    if fmt not in ("parquet", "jsonl"):
        raise ValueError(f"fmt: expected 'parquet' or 'jsonl', got {fmt!r}")
    validated = {name: validate(name, frame) for name, frame in tables.items()}
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = make_staging(directory)
    mode = 0o666 & ~current_umask()
    try:
        for name, frame in validated.items():
            target = staging / f"{name}.{fmt}"
            with writes_to(directory / target.name, target):  # (a full disk names the file the user will see)
                if fmt == "parquet":  # row groups as a streamed table's, so a slice decodes a part of a table
                    frame.write_parquet(target, row_group_size=_group_rows(frame.height, int(frame.estimated_size())))
                else:
                    records_to_jsonl(frame.iter_rows(named=True), target)
            os.chmod(target, mode)
        if stage is not None:
            with writes_to(directory):
                stage(staging)
        move_into_place(staging, directory, replace=replace)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return directory


def move_into_place(staging: Path, directory: Path, *, replace: bool) -> None:
    """Move the table files of ``staging`` into ``directory``; with ``replace``, remove its other table files.

    The moves are one step for SIGTERM (:func:`workbench._util.atomic.uninterrupted`): a termination that arrives
    between two tables waits until the set is complete, so the directory never holds new compactions beside
    old runs and steps."""
    from workbench._util.atomic import uninterrupted

    directory.mkdir(parents=True, exist_ok=True)
    files = [t for t in staging.iterdir() if t.is_file()]
    folders = [t for t in staging.iterdir() if t.is_dir() and not t.name.startswith(".")]
    written = {t.name for t in files}
    taken = [f for f in folders if (directory / f.name).exists() and any((directory / f.name).iterdir())]
    if taken:
        raise SchemaError(f"holds {taken[0].name}/ already; nothing was written", file=str(directory))
    with uninterrupted():
        for target in files:
            os.replace(target, directory / target.name)
        for folder in folders:
            if (directory / folder.name).is_dir():
                (directory / folder.name).rmdir()  # empty (checked above)
            os.replace(folder, directory / folder.name)
        if replace:
            for old in directory.iterdir():
                if old.stem in schema.TABLES and old.suffix in (".parquet", ".jsonl") and old.name not in written:
                    old.unlink()


def table_file(directory: str | os.PathLike[str], name: str) -> Path | None:
    """The file of table ``name`` in ``directory``: ``NAME.parquet``, else ``NAME.jsonl``; None when neither is there.

    Parameters
    ----------
    directory : str or os.PathLike
        A directory of tables.
    name : str
        The table.

    Returns
    -------
    pathlib.Path or None
        Its file, or None.
    """
    for suffix in (".parquet", ".jsonl"):
        path = Path(directory) / f"{name}{suffix}"
        if path.exists():
            return path
    return None


def open_tables(directory: str | os.PathLike[str], names: Sequence[str], *,
                need: Sequence[str] = ("runs",)) -> dict[str, pl.DataFrame | pl.LazyFrame]:
    """The named tables of a table directory, Parquet ones opened as plain scans (read when and as far as a query
    needs them), JSONL ones read and validated: what a verb that reads a batch at a time and validates each batch
    opens (the judge, the loader's ``lazy``).

    Parameters
    ----------
    directory : str or os.PathLike
        A directory written by ``workbench import`` or ``workbench simulate``.
    names : sequence of str
        The tables to open; those the directory lacks are left out.
    need : sequence of str, default ("runs",)
        Tables that must be there: a :class:`~workbench.errors.SchemaError` naming the directory otherwise.

    Returns
    -------
    dict of str to polars.DataFrame or polars.LazyFrame
        Table name to its scan (Parquet) or validated frame (JSONL).
    """
    out: dict[str, pl.DataFrame | pl.LazyFrame] = {}
    for name in names:
        file = table_file(directory, name)
        if file is not None:
            out[name] = pl.scan_parquet(file) if file.suffix == ".parquet" else read_table(file, name)
    missing = [name for name in need if name not in out]
    if missing:
        raise SchemaError(f"no {missing[0]} table ({missing[0]}.parquet or {missing[0]}.jsonl); expected a directory "
                          "written by `workbench import` or `workbench simulate`", file=str(directory))
    return out


def table_files(directory: str | os.PathLike[str]) -> list[Path]:
    """The table files in ``directory`` (any declared table, Parquet or JSONL); none when it is not a directory."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.iterdir() if p.stem in schema.TABLES and p.suffix in (".parquet", ".jsonl"))


def check_references(tables: Mapping[str, pl.DataFrame | pl.LazyFrame], files: dict[str, Path] | None = None) -> None:
    """Every declared reference (steps.run_id -> runs ...) between present tables resolves.

    A table in memory is checked against its target whether the target is in memory or scanned (a scanned
    target is read for the keys asked for only, :func:`rows_of`); a scanned table's own references are not
    checked here (a lazy :func:`read_table` checks columns, not references)."""
    files = files or {}
    for name, frame in tables.items():
        if not isinstance(frame, pl.DataFrame):
            continue
        for cols, target in schema.table(name).references:
            if target not in tables or not frame.height:
                continue
            known = tables[target]
            known = (rows_of(known.select(cols), frame.select(cols).unique()).unique().collect()
                     if isinstance(known, pl.LazyFrame) else known.select(cols).unique())
            missing = frame.select(cols).with_row_index("_row").join(known, on=list(cols), how="anti")
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


def sink_parts(name: str, parts: Sequence[Path], target: Path) -> None:
    """Stream Parquet parts of table ``name`` into one file ``target`` (row groups of bounded bytes, two parts in
    memory at a time: the next is read while one is written). Parts whose columns differ (a column all null in one
    chunk, absent in another) are unified; columns come in ``column_order``.

    The parts are read and written by pyarrow, whose memory pool gives back what a part used once it is written:
    read by polars and handed to pyarrow, the freed memory of every part stayed with the process (the steps of
    the 1 GB home's import, 66 parts streamed alone: 183 MiB more after the stream, now 82)."""
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow as pa
    import pyarrow.parquet as pq

    unified: dict[str, pa.DataType] = {}
    for part in parts:
        for field in pq.read_schema(part):
            if field.name not in unified or pa.types.is_null(unified[field.name]):
                unified[field.name] = field.type
    order = schema.column_order(name, list(unified)) if name in schema.TABLES else list(unified)
    fields = pa.schema([(c, unified[c]) for c in order])

    def read(k: int) -> pa.Table:
        table = pq.read_table(parts[k])
        return pa.Table.from_arrays([table.column(c).cast(unified[c]) if c in table.column_names
                                     else pa.nulls(table.num_rows, unified[c]) for c in order], schema=fields)

    pool = pa.default_memory_pool()
    writer: pq.ParquetWriter | None = None
    # at most two parts in memory: the next one is read on a thread while this one is written (both release the
    # GIL); polars' sink_parquet over every part held several (+300 MB on 1 GB of logs)
    with ThreadPoolExecutor(max_workers=1) as reader:
        try:
            coming = reader.submit(read, 0)
            for k in range(len(parts)):
                table = coming.result()
                if k + 1 < len(parts):
                    coming = reader.submit(read, k + 1)
                if writer is None:
                    writer = pq.ParquetWriter(target, fields, compression="zstd")
                # rows per row group: _ROW_GROUP, fewer when rows are wide (a session's steps are kilobytes each)
                writer.write_table(table, row_group_size=_group_rows(table.num_rows, table.nbytes))
                del table
                pool.release_unused()
        finally:
            if writer is not None:
                writer.close()
    os.chmod(target, 0o666 & ~current_umask())


class PartWriter:
    """One table written a part at a time (each validated), into one file at the end: Parquet parts streamed
    together (bounded memory), or JSONL. Nothing appears at ``path`` until :meth:`PartWriter.finish`; :meth:`PartWriter.discard` (or an
    exception inside ``with``) leaves nothing behind."""

    def __init__(self, name: str, path: str | os.PathLike[str]) -> None:
        self.name, self.path = name, Path(path)
        if self.path.suffix not in (".parquet", ".jsonl", ".ndjson"):
            raise ValueError(f"{self.path}: expected a .parquet or .jsonl file name")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.staging = make_staging(self.path)  # (after removing what a SIGKILLed run left beside the same output)
        self.parts: list[Path] = []
        self.rows = 0

    def add(self, frame: pl.DataFrame) -> None:
        frame = validate(self.name, frame)
        part = self.staging / f"part-{len(self.parts):06d}.parquet"
        with writes_to(self.path, part):
            frame.write_parquet(part)
        self.parts.append(part)
        self.rows += frame.height

    def finish(self) -> Path:
        """Join the parts into the table at ``path`` (moved into place whole) and remove the staging directory."""
        try:
            if not self.parts:
                self.add(schema.empty(self.name))
            target = self.staging / f"whole{self.path.suffix}"
            with writes_to(self.path, target):
                self._join(target)
            os.replace(target, self.path)
            return self.path
        finally:
            self.discard()

    def _join(self, target: Path) -> None:
        """The parts into one file at ``target`` (in the staging directory)."""
        if self.path.suffix == ".parquet":
            sink_parts(self.name, self.parts, target)
        else:
            records_to_jsonl((row for part in self.parts for row in pl.read_parquet(part).iter_rows(named=True)),
                             target)
            os.chmod(target, 0o666 & ~current_umask())

    def discard(self) -> None:
        """Remove the staging directory and its parts; ``path`` is left as it was."""
        shutil.rmtree(self.staging, ignore_errors=True)

    def __enter__(self) -> PartWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.discard()


__all__ = ["open_tables", "PartWriter", "read_table", "table_file", "TRAJECTORY_TABLES", "write_tables"]
