"""An adapter's runs, steps and compactions gathered line by line into validated tables, in bounded chunks.

``RunTables`` holds at most a chunk of rows; ``collect_runs`` returns the tables in memory,
``stream_tables`` spills each chunk as a Parquet part and streams the parts into one file per table in a
temporary sibling of the output, moved into place only when the whole log was valid.

An adapter that builds rows in worker processes yields ``Parts`` among its runs: chunks of rows a worker
checked and wrote as columns, taken in the order they come, as rows are.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from workbench.tables import _schema as schema
from workbench._util.atomic import make_staging, writes_to
from workbench.tables._validation import validate
from workbench.tables._records import RowChunks
from workbench.tables._files import TRAJECTORY_TABLES, columns_frame, move_into_place, rows_frame, sink_parts


@dataclass
class Parts:
    """Rows an adapter's worker gathered and checked run by run (a :class:`~workbench.tables.RowChunks` of its
    own, with no table library) and wrote as chunks: each file a pickled ``{table: {column: values}}``, in order.
    :meth:`RunTables.add_parts` turns each into a validated chunk, as it turns its own rows. Their runs come as
    rows of their own (with no steps or compactions), before or after; a run's uniqueness is checked where the
    runs are."""

    chunks: list[Path]


_RunItem = tuple[int, dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]


@dataclass
class RunTables(RowChunks):
    """Gathers an adapter's rows of runs, steps and compactions in bounded chunks, validated chunk by chunk.

    In memory (the default) :meth:`finish` returns the tables. With ``spill`` (a directory), every
    chunk is written there as a Parquet part as soon as it is full, so memory stays bounded by a
    chunk whatever the log's size, and :meth:`finish_into` streams the parts into one Parquet file
    per table. With ``keep=False`` chunks are validated and counted, then dropped (``validate``).
    ``derive`` maps a chunk's tables to more tables (the entries of its compactions). Rows are checked and cut
    into chunks as :class:`~workbench.tables.RowChunks` says. ``named_as``: the directory the tables will be
    moved into, which a disk error while spilling names (``named_as/NAME.parquet``).
    """

    spill: Path | None = None
    named_as: Path | None = None
    keep: bool = True
    derive: Callable[[dict[str, pl.DataFrame]], dict[str, pl.DataFrame]] | None = None
    chunks: dict[str, list[pl.DataFrame]] = field(default_factory=lambda: {t: [] for t in TRAJECTORY_TABLES})
    counts: dict[str, int] = field(default_factory=dict)
    parts: dict[str, list[Path]] = field(default_factory=dict)

    def add_parts(self, written: Parts) -> None:
        """Take the chunks a worker wrote (``Parts``), after the rows gathered so far, each validated and kept,
        spilled or dropped as a chunk of this builder's own (with ``derive``'s tables); the chunk files are removed
        once read."""
        import pickle

        if self.rows["steps"] or self.rows["compactions"]:  # rows of the same tables gathered before come first
            self.flush()
        for path in written.chunks:
            with open(path, "rb") as fh:
                columns: dict[str, dict[str, list[Any]]] = pickle.load(fh)
            path.unlink()
            self._take({name: columns_frame(name, cols) for name, cols in columns.items()})

    def flush(self) -> None:
        """Turn the rows gathered so far into a validated chunk (kept, spilled or dropped). A table with no rows in
        the chunk is counted, not kept: the tables' columns are those of their rows, however they were chunked."""
        if not self.pending_runs:
            return
        rows = self.take_rows()
        self._take({name: rows_frame(name, rows[name]) for name in TRAJECTORY_TABLES})

    def _take(self, chunk: dict[str, pl.DataFrame]) -> None:
        """One chunk's tables: validated (streaming; in memory they are validated whole at the end), with
        ``derive``'s, counted, then kept, spilled as Parquet parts or dropped."""
        if self.spill is not None or not self.keep:
            chunk = {name: validate(name, frame, file=str(self.path)) for name, frame in chunk.items()}
        if self.derive is not None:
            chunk.update(self.derive(chunk))
        for name, frame in chunk.items():
            self.counts[name] = self.counts.get(name, 0) + frame.height
            if not self.keep or frame.height == 0:
                continue
            if self.spill is None:
                self.chunks.setdefault(name, []).append(frame)
                continue
            parts = self.parts.setdefault(name, [])
            part = self.spill / name / f"part-{len(parts):06d}.parquet"
            with writes_to(self.named_as / f"{name}.parquet" if self.named_as else part, part):
                part.parent.mkdir(parents=True, exist_ok=True)
                frame.write_parquet(part)
            parts.append(part)

    def finish(self) -> dict[str, pl.DataFrame]:
        """The tables, in memory (each validated whole once more: keys across chunks)."""
        self.flush()
        out = {}
        for name in dict.fromkeys([*self.chunks, *self.counts]):
            parts = self.chunks.get(name, [])
            frame = pl.concat(parts, how="diagonal_relaxed") if parts else schema.empty(name)
            out[name] = validate(name, frame, file=str(self.path))
        return out

    def finish_into(self, staging: Path, *, named_as: Path | None = None) -> dict[str, int]:
        """Stream each table's spilled parts into ``staging/NAME.parquet`` (row groups, bounded memory); returns
        the row counts. Parts whose columns differ (a column all null in one chunk) are unified first. A disk
        error names ``named_as/NAME.parquet`` (the file the user will see), not the staging copy."""
        assert self.spill is not None, "finish_into needs a spill directory"
        self.flush()
        names = list(dict.fromkeys([*TRAJECTORY_TABLES, *self.counts, *self.parts]))
        for name in names:
            target = staging / f"{name}.parquet"
            parts = self.parts.get(name, [])
            with writes_to((named_as or staging) / target.name, target):
                if not parts:
                    schema.empty(name).write_parquet(target)
                    self.counts.setdefault(name, 0)
                    continue
                sink_parts(name, parts, target)
        return {name: self.counts.get(name, 0) for name in names}  # (the trajectory tables first, in their order)


def collect_runs(path: Path, runs: Iterable[_RunItem | Parts]) -> dict[str, pl.DataFrame]:
    """An adapter's runs (``(line, run, steps, compactions)``, or ``Parts``) gathered into the tables, in
    memory."""
    builder = RunTables(path)
    for item in runs:
        if isinstance(item, Parts):
            builder.add_parts(item)
        else:
            builder.add_run(*item)
    return builder.finish()


class SpilledRuns(Protocol):
    """An adapter's runs as a function of the directory its workers write their ``Parts`` into (``spill``;
    None: only validating), as ``stream_tables`` takes them."""

    def __call__(self, *, spill: Path | None) -> Iterator[_RunItem | Parts]: ...


def stream_tables(path: Path, runs: Iterator[_RunItem | Parts] | SpilledRuns,
                  directory: str | os.PathLike[str] | None, *, replace: bool = False,
                  derive: Callable[[dict[str, pl.DataFrame]], dict[str, pl.DataFrame]] | None = None,
                  timings: dict[str, float] | None = None) -> dict[str, int]:
    """Read an adapter's runs (``(line, run, steps, compactions)``) in bounded chunks and write them as Parquet
    into ``directory`` -- or, with ``directory`` None, only validate them. Returns the row count per table.

    Memory is bounded by a chunk, not the log. Everything is written into a temporary sibling of
    ``directory`` and moved into place only when the whole log was valid, so an error (named
    ``FILE:LINE``) leaves ``directory`` as it was, and no directory at all if it did not exist. ``timings`` adds
    the seconds spent validating and spilling chunks (``tables``) and writing the tables (``write``). ``runs`` may
    be a function of a directory, where an adapter's workers write their ``Parts`` (``SpilledRuns``).
    """
    if directory is None:
        builder = RunTables(path, keep=False, derive=derive)
        _add_all(builder, runs(spill=None) if callable(runs) else runs, timings)
        return {name: builder.counts.get(name, 0) for name in dict.fromkeys([*TRAJECTORY_TABLES, *builder.counts])}
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = make_staging(directory)  # (after removing what a SIGKILLed import left beside the same output)
    try:
        builder = RunTables(path, spill=staging / ".parts", derive=derive, named_as=directory)
        with writes_to(directory):  # (a worker's spilled parts)
            _add_all(builder, runs(spill=staging / ".workers") if callable(runs) else runs, timings)
        clock = time.perf_counter()
        counts = builder.finish_into(staging, named_as=directory)
        shutil.rmtree(staging / ".parts", ignore_errors=True)
        shutil.rmtree(staging / ".workers", ignore_errors=True)
        move_into_place(staging, directory, replace=replace)
        if timings is not None:
            timings["write"] = timings.get("write", 0.0) + time.perf_counter() - clock
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return counts


def _add_all(builder: RunTables, runs: Iterator[_RunItem | Parts], timings: dict[str, float] | None) -> None:
    """Every run (and ``Parts``) into ``builder`` (its last chunk flushed), the time spent in the builder added
    to ``timings["tables"]``."""
    spent = 0.0
    for item in runs:
        clock = time.perf_counter()
        if isinstance(item, Parts):
            builder.add_parts(item)
        else:
            builder.add_run(*item)
        spent += time.perf_counter() - clock
    clock = time.perf_counter()
    builder.flush()
    spent += time.perf_counter() - clock
    if timings is not None:
        timings["tables"] = timings.get("tables", 0.0) + spent

def chunk_entries(chunk: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """The entries of a chunk's compactions (``import --entries``), runs in the order the log has them (as its
    compactions are), so that the table does not depend on how the log was cut into chunks or batches; a function
    of a module, so that a worker process can be given it."""
    from workbench.summaries._entries import entries_table

    entries = entries_table(chunk["compactions"])  # (runs sorted by id, each in boundary and position order)
    runs = chunk["compactions"].select(pl.col("run_id").unique(maintain_order=True)).with_row_index("run_order")
    return {"entries": entries.join(runs, on="run_id", how="left").sort("run_order", maintain_order=True)
            .drop("run_order")}


__all__ = []
