"""Importing a log: read it (:func:`workbench.adapters.read_log`, or a session tree a batch at a time) and write its
tables as Parquet into a directory, with a labelled import's labels in the directory's own annotation store
(``DIR/annotations``). What ``workbench import`` runs."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import polars as pl

from workbench._util.jsonl import BadLines
from workbench.errors import SchemaError

from workbench.adapters._staging import chunk_entries
from workbench.adapters._formats import LOG_FORMATS, format_names
from workbench.adapters._read import _format_of, session_runs


def import_log(path: str | os.PathLike[str], out: str | os.PathLike[str] | None, format: str | None = None,  # noqa: A002
               *, entries: bool = False, replace: bool = False, bad: BadLines | None = None,
               since: str | None = None, until: str | None = None, project: str | None = None,
               timings: dict[str, float] | None = None) -> dict[str, int]:
    """Read a log and write its tables as Parquet into ``out`` (``None``: only check it); returns row counts.

    JSONL formats (those the registry gives a ``runs`` stream) are read one line at a time and written in bounded chunks,
    so memory does not grow with the log; the others are read whole (their logs are small).
    ``entries`` adds the entries table, extracted chunk by chunk. Either way the tables appear in
    ``out`` only when the whole log was valid (an error names ``FILE:LINE`` and writes nothing). Session formats
    (the registry's formats that read ``sessions``) skip a file's half-written last line with a warning and record it in ``bad``;
    with ``bad.skip_invalid`` they skip and record every bad line; ``since``, ``until`` and ``project`` select
    their sessions (by their start, end and project), and are read a group of files at a time
    (``session_runs``), so memory holds one session's lines and a chunk of rows, not the tree. ``timings``
    (a dict) receives the seconds of each stage of a streamed import: ``scan`` (session ids in the files' bytes),
    ``parse`` (lines read and runs built), ``tables`` (rows validated and spilled as Parquet parts), ``write``
    (the parts streamed into the tables and moved into place).

    Parameters
    ----------
    path : str or os.PathLike
        The log: a file or directory in any format of :data:`workbench.adapters.LOG_FORMATS`.
    out : str or os.PathLike or None
        The directory the tables are written into (new, or one this function wrote); None checks the log only.
    format : str, optional
        The format's ``--format`` name; sniffed from the log when None.
    entries : bool, default False
        Also write the entries table (each summary split into its entries).
    replace : bool, default False
        Replace the tables already in ``out`` (the whole set: no table of an earlier import is left beside).
    bad : workbench._util.jsonl.BadLines, optional
        Where bad lines are recorded (and, with its ``skip_invalid``, skipped).
    since, until : str, optional
        Session formats: ISO dates or times bounding the sessions read.
    project : str, optional
        Session formats: only sessions whose project contains this text.
    timings : dict of str to float, optional
        Receives the seconds of each stage of a streamed import.

    Returns
    -------
    dict of str to int
        Rows written (or, with ``out`` None, read) per table.

    Examples
    --------
    >>> import tempfile
    >>> from workbench.datasets import import_log
    >>> from workbench.datasets import examples
    >>> out = tempfile.mkdtemp()
    >>> import_log(examples("invoice_log.jsonl"), out, entries=True)
    {'runs': 4, 'steps': 32, 'compactions': 8, 'entries': 61}
    """
    from workbench.adapters._staging import stream_tables
    from workbench.tables._files import write_tables

    path = Path(path)
    if out is not None:  # the tables never go into the log they are read from
        from workbench._util.atomic import check_not_input

        check_not_input(out, [path])
        _check_new_store(Path(out) / "annotations")  # labels made on another log never meet this one's entries
    fmt = _format_of(path, format, bad)
    derive = chunk_entries if entries else None
    declared = LOG_FORMATS.get(fmt)
    if declared is not None and declared.runs is not None:
        return stream_tables(path, declared.load("runs")(path), out, replace=replace, derive=derive, timings=timings)
    if fmt == "sessions" or declared is not None and declared.reads == "sessions":  # a group of files at a time
        runs = partial(session_runs, path, fmt, bad=bad, since=since, until=until, project=project, timings=timings)
        return stream_tables(path, runs, out, replace=replace, derive=derive, timings=timings)
    if since or until or project:
        raise SchemaError(f"since, until and project select sessions of {' or '.join(format_names(reads='sessions'))} "
                          f"logs, not of a {fmt} log", file=str(path))
    assert declared is not None
    tables = declared.load()(path)
    if derive is not None and "entries" not in tables:  # entries the log gives (its sentences) are never re-split
        tables.update(derive(tables))
    labels = tables.pop("labels", None) if declared.labelled else None
    if out is not None:
        store = None
        if labels is not None and labels.height:
            store = lambda staging: _write_labelled_store(staging / "annotations", tables, labels)  # noqa: E731
        write_tables(tables, out, replace=replace, stage=store)
    counts = {name: frame.height for name, frame in tables.items()}
    if labels is not None:
        counts["labels"] = labels.height
    return counts


def _check_new_store(store: Path) -> None:
    """An import writes its labels into a new annotation store only: one that holds labels (a person's, or an
    earlier import's) is never added to or replaced."""
    if store.exists() and any(store.rglob("*.jsonl")):
        raise SchemaError(f"holds labels made on the log imported there before (their ids would name this log's "
                          f"entries); import into a new directory, or keep them elsewhere first (mv {store} "
                          f"{store.parent.name}-labels) and import again: labels are never replaced",
                          file=str(store))


def _write_labelled_store(store: Path, tables: dict[str, pl.DataFrame], labels: pl.DataFrame) -> None:
    """The labels of a labelled-summaries import as an annotation store (``store/labels/ANNOTATOR.round1.jsonl``),
    with the labelled entries as a sample (``store/samples/labelled.jsonl``: each item's text, evidence and
    ``scenario_id``, the source the summary came from), so ``workbench agree STORE`` clusters its intervals by
    source and ``workbench label`` can add a person's labels to the same items."""
    from workbench.annotate._sampling import sample_items
    from workbench.annotate._store import AnnotationStore
    from workbench._util.atomic import write_jsonl

    AnnotationStore(store).add_many(labels.drop("labeled_at", strict=False).to_dicts())
    if "entries" not in tables:  # failure labels (Who&When) name runs, not entries: no sample to label further
        return
    ids = labels.get_column("item_id").unique(maintain_order=True).to_list()
    items, _ = sample_items(tables, len(ids), strata=(), sections=None, only_ids=ids)
    write_jsonl(items, store / "samples" / "labelled.jsonl")


__all__ = ["import_log"]
