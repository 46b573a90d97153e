"""The entries table: every summary of a compactions table split into entries, in memory or streamed to disk.

The grammar (what an entry is, per schema) is :mod:`workbench.summaries._grammar`; this module only applies it to the
rows of a compactions table (:func:`entries_table`) or a directory's compactions file (:func:`write_entries`),
and fills roles in tables written before schemas existed (:func:`with_roles`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypeVar

import polars as pl

from workbench.tables import _schema as schema
from workbench.summaries._grammar import SCHEMAS, normalise, parse

__all__ = ["entries_table", "entry_id", "evidence_id", "request_id", "run_of_entry", "with_roles", "write_entries"]

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)

#: the columns a parsed summary fills (the ground-truth ones are the testbed's)
_COLUMNS = ("entry_id", "run_id", "boundary", "section", "position", "text", "carried_from", "role", "schema")


# The ids that tie the tables together, all made here: an entry's, the judge request of its compaction's, and an
# evidence passage's of that request. Nothing else writes or takes apart one of these strings.


def entry_id(run_id: str, boundary: int, position: int) -> str:
    """The stable id of an entry: ``RUN/bBOUNDARY/ePOSITION``.

    Parameters
    ----------
    run_id : str
        The run.
    boundary : int
        The compaction's boundary.
    position : int
        The entry's position in its summary.

    Returns
    -------
    str
        The id.
    """
    return f"{request_id(run_id, boundary)}/e{position}"


def request_id(run_id: str, boundary: int) -> str:
    """The id of a compaction's judge request: ``RUN/bBOUNDARY`` (a request split to fit a judge's context adds
    ``#K`` in the scores' ``request_id``).

    Parameters
    ----------
    run_id : str
        The run.
    boundary : int
        The compaction's boundary.

    Returns
    -------
    str
        The id.
    """
    return f"{run_id}/b{boundary}"


def evidence_id(request: str, chunk_id: str) -> str:
    """The id of one evidence passage of a request: ``REQUEST/oIcJ`` (chunk ``J`` of environment output ``I``).

    Parameters
    ----------
    request : str
        The request's id.
    chunk_id : str
        The chunk's id within the request (``oIcJ``).

    Returns
    -------
    str
        The id.
    """
    return f"{request}/{chunk_id}"


def entry_parts(entry: str) -> tuple[str, int, int]:
    """(run id, boundary, position) of an entry id (:func:`entry_id`); a ``ValueError`` for anything else.

    Parameters
    ----------
    entry : str
        An entry id, ``RUN/bBOUNDARY/ePOSITION``.

    Returns
    -------
    tuple of (str, int, int)
        Its run id, boundary and position.
    """
    rest, _, position = entry.rpartition("/e")
    run, _, boundary = rest.rpartition("/b")
    if not run or not boundary.isdigit() or not position.isdigit():
        raise ValueError(f"not an entry id (RUN/bBOUNDARY/ePOSITION): {entry!r}")
    return run, int(boundary), int(position)


def run_of_entry(column: str = "entry_id") -> pl.Expr:
    """The run id inside an entry id (:func:`entry_id`), as an expression: a scores table's run.

    Parameters
    ----------
    column : str, default "entry_id"
        The column of entry ids.

    Returns
    -------
    polars.Expr
        The run id of each.
    """
    return pl.col(column).str.replace(r"/b\d+/e\d+$", "")


def request_of_entry(column: str = "entry_id") -> pl.Expr:
    """The request id inside an entry id (:func:`request_id`), as an expression: where its evidence is."""
    return pl.col(column).str.replace(r"/e\d+$", "")


def with_roles(entries: Frame) -> Frame:
    """``entries`` with ``schema`` and ``role`` filled where they are missing: the schema is OpenClaw's when
    not recorded (tables written before schemas existed), the role comes from the section under it.

    Parameters
    ----------
    entries : polars.DataFrame or polars.LazyFrame
        An entries table.

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        The same rows with ``schema`` and ``role`` filled.
    """
    cols = entries.collect_schema().names() if isinstance(entries, pl.LazyFrame) else entries.columns
    schema_col = pl.col("schema").fill_null("openclaw") if "schema" in cols else pl.lit("openclaw")
    derived = pl.struct(schema_col.alias("_s"), pl.col("section")).map_elements(
        lambda v: SCHEMAS.get(v["_s"], SCHEMAS["free_text"]).role(v["section"]), return_dtype=pl.Utf8)
    role = pl.col("role").fill_null(derived) if "role" in cols else derived
    return entries.with_columns(role.alias("role"), schema_col.alias("schema"))


def entries_table(compactions: pl.DataFrame, *, summary_column: str = "candidate_summary") -> pl.DataFrame:
    """One row per entry of every candidate summary (schema table ``entries``).

    ``carried_from`` names the entry of the run's previous boundary with the same
    normalised text (exact match; ``workbench.analyses.sjc._composition`` adds fuzzy matching).

    Parameters
    ----------
    compactions : polars.DataFrame
        The compactions table.
    summary_column : str, default "candidate_summary"
        The summary parsed.

    Returns
    -------
    polars.DataFrame
        The entries table.

    Examples
    --------
    >>> from workbench.adapters import read_log
    >>> from workbench.summaries import entries_table
    >>> from workbench.datasets import examples
    >>> entries = entries_table(read_log(examples("invoice_log.jsonl"))["compactions"])
    >>> entries.height, entries.row(0, named=True)["entry_id"]
    (61, 't1-r0/b0/e0')
    """
    rows: list[dict[str, object]] = []
    ordered = compactions.sort("run_id", "boundary")
    previous: dict[str, str] = {}
    last_run: object = None
    for comp in ordered.iter_rows(named=True):
        if comp["run_id"] != last_run:
            previous, last_run = {}, comp["run_id"]
        current: dict[str, str] = {}
        for e in parse(comp[summary_column] or ""):
            eid = entry_id(comp["run_id"], comp["boundary"], e.position)
            key = normalise(e.text)
            rows.append({
                "entry_id": eid, "run_id": comp["run_id"], "boundary": comp["boundary"],
                "section": e.section, "position": e.position, "text": e.text,
                "carried_from": previous.get(key), "role": e.role, "schema": e.schema,
            })
            current.setdefault(key, eid)
        previous = current
    columns = schema.table("entries").polars_schema(_COLUMNS)
    return pl.DataFrame(rows, schema=columns) if rows else pl.DataFrame(schema=columns)


def given_entries(directory: str | os.PathLike[str]) -> int | None:
    """How many entries ``directory``'s entries table holds when the log gave them (a labelled summary's
    sentences, schema ``given``), else None: such entries are never split again (labels name them by id)."""
    from workbench.tables._files import table_file

    path = table_file(Path(directory), "entries")
    if path is None:
        return None
    frame = (pl.scan_parquet(path) if path.suffix == ".parquet" else pl.scan_ndjson(path)).select("schema")
    counts = frame.select(pl.len().alias("n"), (pl.col("schema") == "given").sum().alias("given")).collect()
    return int(counts["n"][0]) if counts["given"][0] else None


def write_entries(directory: str | os.PathLike[str], *, batch_rows: int = 20_000) -> int:
    """Extract the entries of ``directory``'s compactions into ``directory/entries.parquet``; returns their number.

    Compactions are read in batches from Parquet (whole runs per batch, so ``carried_from`` sees a
    run's previous boundary) and the entries streamed to disk: memory is bounded by a batch, not by
    the log. Rows come run by run in the compactions' order (the in-memory :func:`entries_table`
    sorts by run id; the rows are the same). A directory whose compactions do not keep each run's
    rows together, or that has them only as JSONL, is done in memory. The file appears whole or
    not at all. Entries the log gave (``given_entries``) are kept as they are: their number is returned.

    Parameters
    ----------
    directory : str or os.PathLike
        A workbench directory with a compactions table.
    batch_rows : int, default 20000
        Compactions read at a time.

    Returns
    -------
    int
        The entries written.
    """
    given = given_entries(directory)
    if given is not None:
        return given
    import shutil
    import tempfile

    from workbench._util.atomic import atomic_write
    from workbench.tables._files import read_table, sink_parts

    directory = Path(directory)
    source = directory / "compactions.parquet"
    if not source.exists():
        frame = entries_table(read_table(directory / "compactions.jsonl", "compactions"))
        atomic_write(directory / "entries.parquet", lambda p: frame.write_parquet(p))
        return frame.height
    staging = Path(tempfile.mkdtemp(prefix=".entries.", dir=directory))
    try:
        parts: list[Path] = []
        closed: set[str] = set()
        carry: pl.DataFrame | None = None
        total = 0
        contiguous = True

        def emit(batch: pl.DataFrame) -> None:
            nonlocal total
            frame = entries_table(batch)
            total += frame.height
            part = staging / f"part-{len(parts):06d}.parquet"
            frame.write_parquet(part)
            parts.append(part)

        columns = ["run_id", "boundary", "candidate_summary"]
        for batch in pl.scan_parquet(source).select(columns).collect_batches(chunk_size=batch_rows):
            if carry is not None:
                batch = pl.concat([carry, batch])
            runs = batch.get_column("run_id").unique(maintain_order=True).to_list()
            if closed.intersection(runs):
                contiguous = False
                break
            last = runs[-1]
            carry = batch.filter(pl.col("run_id") == last)
            done = batch.filter(pl.col("run_id") != last)
            if done.height:
                emit(done)
            closed.update(r for r in runs if r != last)
        if not contiguous:
            frame = entries_table(read_table(source, "compactions"))
            atomic_write(directory / "entries.parquet", lambda p: frame.write_parquet(p))
            return frame.height
        if carry is not None and carry.height:
            emit(carry)
        if not parts:
            emit(pl.DataFrame(schema={"run_id": pl.Utf8, "boundary": pl.Int64, "candidate_summary": pl.Utf8}))
        sink_parts("entries", parts, staging / "entries.parquet")
        os.replace(staging / "entries.parquet", directory / "entries.parquet")
        return total
    finally:
        shutil.rmtree(staging, ignore_errors=True)
