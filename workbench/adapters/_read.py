"""Adapters: one module per log format, each turning a file into the runs, steps and compactions tables.

| format | module | what it reads |
| --- | --- | --- |
| ``trajectory`` | :mod:`~workbench.adapters._trajectory` | the workbench's own JSONL, one run per line |
| ``openai`` | :mod:`~workbench.adapters._openai_chat` | OpenAI chat-completions message lists, one run per line |
| ``tau-bench`` | :mod:`~workbench.adapters._tau_bench` | tau-bench ``historical_trajectories`` JSON lists |
| ``claude-code`` | :mod:`~workbench.adapters._claude_code` | Claude Code session transcripts (a file or a directory) |
| ``codex`` | :mod:`~workbench.adapters._codex` | Codex CLI rollouts (a file or a directory) |
| ``labelled-summaries`` | :mod:`~workbench.adapters._labelled_summaries` | human-labelled summaries, one per line |
| ``frank`` | :mod:`~workbench.adapters._frank` | the FRANK benchmark's directory (FRANK's files, or the compact copy) |

:mod:`~workbench.adapters._claude_compaction` loads the Claude compaction data set (summaries with
the history they replaced), which is not a trajectory log; :mod:`~workbench.adapters._staging` gathers an
adapter's rows in bounded, validated chunks. ``read_log(path, format=None)`` sniffs the format when it is not
given: a file from its first record (:func:`sniff_format`), a directory of sessions from its ``*.jsonl`` files
(:func:`sniff_directory`: Claude Code's ``~/.claude/projects`` or Codex's ``~/.codex/sessions``).
:func:`import_log` reads a log and writes its tables; for session logs it skips a file's half-written last line
(a session still open) with a warning, and with ``BadLines(skip_invalid=True)`` every bad line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl

from workbench.adapters._claude_code import claude_code_runs, read_claude_code
from workbench.adapters._codex import codex_runs, read_codex
from workbench.adapters._frank import is_frank, read_frank
from workbench.adapters._labelled_summaries import read_labelled_summaries
from workbench.adapters._openai_chat import chat_to_run, openai_runs, read_openai_chat
from workbench.adapters._staging import Parts
from workbench.adapters._tau_bench import read_tau_bench
from workbench.adapters._trajectory import read_trajectories, trajectory_runs, write_trajectories
from workbench._util.jsonl import BadLines
from workbench.adapters._logfiles import directory_formats, input_bytes, sniff_directory, sniff_format
from workbench.tables._schema import SchemaError

FORMATS: dict[str, Callable[[str | os.PathLike[str]], dict[str, pl.DataFrame]]] = {
    "trajectory": read_trajectories,
    "openai": read_openai_chat,
    "tau-bench": read_tau_bench,
    "claude-code": read_claude_code,
    "codex": read_codex,
    "labelled-summaries": read_labelled_summaries,
    "frank": read_frank,
}

#: formats whose logs may be a directory of session files
DIRECTORY_FORMATS = ("claude-code", "codex")
#: formats that are human-labelled summaries: their ``labels`` go into the annotation store at ``DIR/annotations``
LABELLED_FORMATS = ("labelled-summaries", "frank")


def read_log(path: str | os.PathLike[str], format: str | None = None) -> dict[str, pl.DataFrame]:  # noqa: A002
    """Load a trajectory log in any supported format (``None`` or ``"auto"`` sniffs it).

    Parameters
    ----------
    path : str or os.PathLike
        A log file, or a directory of Claude Code or Codex sessions.
    format : str, optional
        A format of :data:`FORMATS`; sniffed when None or "auto".

    Returns
    -------
    dict of str to polars.DataFrame
        The workbench's tables (runs, steps, compactions, ...).
    """
    fmt = _format_of(path, format)
    return read_sessions(path) if fmt == "sessions" else FORMATS[fmt](path)


#: formats read one line at a time: ``import`` and ``validate`` stream them in bounded memory
STREAMING: dict[str, Callable[[str | os.PathLike[str]], Iterator[tuple[int, dict[str, Any], list[dict[str, Any]],
                                                                    list[dict[str, Any]]]]]] = {
    "trajectory": trajectory_runs,
    "openai": openai_runs,
}


def read_sessions(path: str | os.PathLike[str], *, bad: BadLines | None = None, since: str | None = None,
                  until: str | None = None, project: str | None = None) -> dict[str, pl.DataFrame]:
    """Every Claude Code and Codex session below a directory (a home with both), as one set of tables: each
    client's files read by its reader, the runs told apart by ``method`` (``claude_code``, ``codex``)."""
    from workbench.adapters._staging import collect_runs

    return collect_runs(Path(path), session_runs(path, "sessions", bad=bad, since=since, until=until,
                                                 project=project))


def session_runs(path: str | os.PathLike[str], fmt: str, *, bad: BadLines | None = None, since: str | None = None,
                 until: str | None = None, project: str | None = None, timings: dict[str, float] | None = None,
                 spill: Path | None = None,
                 ) -> Iterator[tuple[int, dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]] | Parts]:
    """The runs of a session log, ``(first line, run, steps, compactions)``, one at a time: ``fmt``
    ``claude-code`` or ``codex`` (a file or a directory), or ``sessions`` (a home with both: Claude Code's
    files first, then Codex's, each run told apart by ``method``). A large Claude Code tree's steps and
    compactions come as :class:`~workbench.adapters._staging.Parts` written under ``spill`` by worker processes
    (:func:`~workbench.adapters._claude_code.claude_code_runs`)."""
    if fmt != "sessions":
        if fmt == "claude-code":
            yield from claude_code_runs(path, bad=bad, since=since, until=until, project=project, timings=timings,
                                        spill=spill)
        else:
            yield from codex_runs(path, bad=bad, since=since, until=until, project=project, timings=timings)
        return
    formats = directory_formats(path)
    if not formats:
        sniff_directory(path)  # the error naming the directory and its first file
    for name, files in sorted(formats.items()):
        if name == "claude-code":
            yield from claude_code_runs(path, bad=bad, since=since, until=until, project=project, files=files,
                                        timings=timings, spill=spill)
        else:
            yield from codex_runs(path, bad=bad, since=since, until=until, project=project, files=files,
                                  timings=timings)


def _format_of(path: str | os.PathLike[str], format: str | None) -> str:  # noqa: A002
    if Path(path).is_dir() and format in (None, "auto"):
        if is_frank(path):
            return "frank"
        found = directory_formats(path)
        if len(found) == 1:
            return next(iter(found))
        return "sessions" if found else sniff_directory(path)  # none: sniff_directory's error names the files
    if Path(path).is_dir() and format not in (*DIRECTORY_FORMATS, "frank"):
        raise SchemaError("is a directory; only --format claude-code or codex (a directory of sessions) or frank "
                          "(FRANK's files) read a directory", file=str(path))
    if format == "frank" and not Path(path).is_dir():
        raise SchemaError("expected FRANK's directory (human_annotations.json, baseline_factuality_metrics_"
                          "outputs.json, the articles)", file=str(path))
    if not Path(path).exists():
        raise SchemaError("no such file", file=str(path))
    fmt = sniff_format(path) if format in (None, "auto") else format
    if fmt not in FORMATS:
        raise SchemaError(field="format", expected=f"one of {['auto', *FORMATS]}", got=repr(fmt))
    return fmt


def _entries_of(chunk: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """The entries of a chunk's compactions (``import --entries``), runs in the order the log has them (as its
    compactions are), so that the table does not depend on how the log was cut into chunks or batches; a function
    of this module, so that a worker process can be given it."""
    from workbench.summaries._entries import entries_table

    entries = entries_table(chunk["compactions"])  # (runs sorted by id, each in boundary and position order)
    runs = chunk["compactions"].select(pl.col("run_id").unique(maintain_order=True)).with_row_index("run_order")
    return {"entries": entries.join(runs, on="run_id", how="left").sort("run_order", maintain_order=True)
            .drop("run_order")}


def import_log(path: str | os.PathLike[str], out: str | os.PathLike[str] | None, format: str | None = None,  # noqa: A002
               *, entries: bool = False, replace: bool = False, bad: BadLines | None = None,
               since: str | None = None, until: str | None = None, project: str | None = None,
               timings: dict[str, float] | None = None) -> dict[str, int]:
    """Read a log and write its tables as Parquet into ``out`` (``None``: only check it); returns row counts.

    JSONL formats (:data:`STREAMING`) are read one line at a time and written in bounded chunks,
    so memory does not grow with the log; the others are read whole (their logs are small).
    ``entries`` adds the entries table, extracted chunk by chunk. Either way the tables appear in
    ``out`` only when the whole log was valid (an error names FILE:LINE and writes nothing). Session formats
    (:data:`DIRECTORY_FORMATS`) skip a file's half-written last line with a warning and record it in ``bad``;
    with ``bad.skip_invalid`` they skip and record every bad line; ``since``, ``until`` and ``project`` select
    their sessions (:func:`workbench.adapters._claude_code.selected`), and are read a group of files at a time
    (:func:`session_runs`), so memory holds one session's lines and a chunk of rows, not the tree. ``timings``
    (a dict) receives the seconds of each stage of a streamed import: ``scan`` (session ids in the files' bytes),
    ``parse`` (lines read and runs built), ``tables`` (rows validated and spilled as Parquet parts), ``write``
    (the parts streamed into the tables and moved into place).
    """
    from workbench.adapters._staging import stream_tables
    from workbench.tables._files import write_tables

    path = Path(path)
    if out is not None:  # the tables never go into the log they are read from
        from workbench._util.atomic import check_not_input

        check_not_input(out, [path])
    fmt = _format_of(path, format)
    derive = _entries_of if entries else None
    if fmt in STREAMING:
        return stream_tables(path, STREAMING[fmt](path), out, replace=replace, derive=derive, timings=timings)
    if fmt in DIRECTORY_FORMATS or fmt == "sessions":  # sessions: streamed a group of files at a time
        def runs(spill: Path | None) -> Iterator[Any]:
            return session_runs(path, fmt, bad=bad, since=since, until=until, project=project, timings=timings,
                                spill=spill)

        return stream_tables(path, runs, out, replace=replace, derive=derive, timings=timings)
    if since or until or project:
        raise SchemaError(f"since, until and project select sessions of {' or '.join(DIRECTORY_FORMATS)} logs, not "
                          f"of a {fmt} log", file=str(path))
    tables = FORMATS[fmt](path)
    if derive is not None:
        tables.update(derive(tables))
    labels = tables.pop("labels", None) if fmt in LABELLED_FORMATS else None
    if out is not None:
        store = None
        if labels is not None and labels.height:
            check_new_store(Path(out) / "annotations")
            store = lambda staging: write_labelled_store(staging / "annotations", tables, labels)  # noqa: E731
        write_tables(tables, out, replace=replace, stage=store)
    counts = {name: frame.height for name, frame in tables.items()}
    if labels is not None:
        counts["labels"] = labels.height
    return counts


def check_new_store(store: Path) -> None:
    """An import writes its labels into a new annotation store only: one that holds labels (a person's, or an
    earlier import's) is never added to or replaced."""
    if store.exists() and any(store.rglob("*.jsonl")):
        raise SchemaError("holds labels already; import into a new directory (the labels people added there are "
                          "never replaced)", file=str(store))


def write_labelled_store(store: Path, tables: dict[str, pl.DataFrame], labels: pl.DataFrame) -> None:
    """The labels of a labelled-summaries import as an annotation store (``store/labels/ANNOTATOR.round1.jsonl``),
    with the labelled entries as a sample (``store/samples/labelled.jsonl``: each item's text, evidence and
    ``scenario_id``, the source the summary came from), so ``workbench agree STORE`` clusters its intervals by
    source and ``workbench label`` can add a person's labels to the same items."""
    from workbench.annotate._sampling import sample_items
    from workbench.annotate._store import AnnotationStore
    from workbench._util.atomic import write_jsonl

    AnnotationStore(store).add_many(labels.drop("labeled_at", strict=False).to_dicts())
    ids = labels.get_column("item_id").unique(maintain_order=True).to_list()
    items, _ = sample_items(tables, len(ids), strata=(), sections=None, only_ids=ids)
    write_jsonl(items, store / "samples" / "labelled.jsonl")


__all__ = ["directory_formats", "DIRECTORY_FORMATS", "FORMATS", "LABELLED_FORMATS", "STREAMING", "input_bytes", "chat_to_run", "import_log", "read_claude_code", "read_codex", "read_log",
           "read_openai_chat", "read_sessions", "session_runs", "read_tau_bench", "read_trajectories", "sniff_directory", "sniff_format", "write_trajectories"]
