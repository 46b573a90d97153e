"""Adapters: one module per log format, each turning a file into the runs, steps and compactions tables.

The formats, their readers and how each is recognised are declared once, in the registry
(:data:`workbench.adapters.LOG_FORMATS`, module :mod:`workbench.adapters._formats`); everything here reads it.
:mod:`~workbench.adapters._claude_compaction` loads the Claude compaction data set (summaries with
the history they replaced), which is not a trajectory log; :mod:`~workbench.adapters._staging` gathers an
adapter's rows in bounded, validated chunks. ``read_log(path, format=None)`` sniffs the format when it is not
given: a file from its suffix, first bytes or first record (:func:`sniff_format`), a directory by the formats
that recognise one (FRANK's, Who&When's, ...) or from its session files (:func:`sniff_directory`: Claude Code's
``~/.claude/projects`` or Codex's ``~/.codex/sessions``). :func:`import_log` reads a log and writes its tables;
for session logs it skips a file's half-written last line (a session still open) with a warning, and with
``BadLines(skip_invalid=True)`` every bad line.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from workbench.adapters._claude_code import claude_code_runs
from workbench.adapters._codex import codex_runs
from workbench.adapters._formats import LOG_FORMATS, format_names, sniff_directory_format
from workbench.adapters._staging import Parts
from workbench._util.jsonl import BadLines
from workbench.adapters._logfiles import directory_formats, sniff_directory, sniff_format
from workbench.errors import SchemaError


class _Loaded(Mapping[str, Callable[..., Any]]):
    """Format name -> one of its functions (``reader`` or ``runs``), imported when looked up, for the formats of the
    registry that have one."""

    def __init__(self, what: str) -> None:
        self.what = what

    def _names(self) -> list[str]:
        return [name for name, fmt in LOG_FORMATS.items() if getattr(fmt, self.what) is not None]

    def __getitem__(self, name: str) -> Callable[..., Any]:
        if name not in self._names():
            raise KeyError(name)
        return LOG_FORMATS[name].load(self.what)  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


#: format name -> its reader (path -> tables), from the registry
FORMATS: Mapping[str, Callable[[str | os.PathLike[str]], dict[str, pl.DataFrame]]] = _Loaded("reader")
#: formats whose logs may be a directory of session files
DIRECTORY_FORMATS = format_names(reads="sessions")
#: formats that are human-labelled summaries: their ``labels`` go into the annotation store at ``DIR/annotations``
LABELLED_FORMATS = format_names(labelled=True)
#: formats whose input is one directory (not a directory of sessions)
BENCHMARK_DIRECTORIES = format_names(reads="directory")
#: formats whose input is a file, or a directory of such files read together
FILE_OR_DIRECTORY = format_names(reads="file-or-directory")


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

    Examples
    --------
    >>> from workbench.adapters import read_log
    >>> from workbench.datasets import examples
    >>> tables = read_log(examples("invoice_log.jsonl"))  # the format sniffed
    >>> sorted(tables)
    ['compactions', 'runs', 'steps']
    >>> tables["compactions"].height
    8
    """
    fmt = _format_of(path, format)
    return read_sessions(path) if fmt == "sessions" else FORMATS[fmt](path)


#: formats read one line at a time: ``import`` and ``validate`` stream them in bounded memory
STREAMING: Mapping[str, Callable[[str | os.PathLike[str]], Iterator[tuple[int, dict[str, Any], list[dict[str, Any]],
                                                                      list[dict[str, Any]]]]]] = _Loaded("runs")


def read_sessions(path: str | os.PathLike[str], *, bad: BadLines | None = None, since: str | None = None,
                  until: str | None = None, project: str | None = None) -> dict[str, pl.DataFrame]:
    """Every Claude Code and Codex session below a directory (a home with both), as one set of tables: each
    client's files read by its reader, the runs told apart by ``method`` (``claude_code``, ``codex``).

    Parameters
    ----------
    path : str or os.PathLike
        A directory holding Claude Code and Codex sessions (a home, or ``.claude`` and ``.codex`` below it).
    bad : workbench._util.jsonl.BadLines, optional
        Where bad lines are recorded when its ``skip_invalid`` is set; None: a bad line is an error naming it.
    since, until : str, optional
        ISO dates or times: only sessions whose first and last timestamps fall between them.
    project : str, optional
        Only sessions whose working directory or project directory name contains this text.

    Returns
    -------
    dict of str to polars.DataFrame
        The tables read (``runs``, ``steps``, ``compactions``, and the others the format carries), validated.
    """
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
    compactions come as ``Parts`` written under ``spill`` by worker processes
    (``claude_code_runs``)."""
    if fmt != "sessions":
        if fmt == "claude-code":
            yield from claude_code_runs(path, bad=bad, since=since, until=until, project=project, timings=timings,
                                        spill=spill)
        else:
            yield from codex_runs(path, bad=bad, since=since, until=until, project=project, timings=timings)
        return
    formats = directory_formats(path, bad)
    if not formats:
        sniff_directory(path, bad)  # the error naming the directory and its first file
    for name, files in sorted(formats.items()):
        if name == "claude-code":
            yield from claude_code_runs(path, bad=bad, since=since, until=until, project=project, files=files,
                                        timings=timings, spill=spill)
        else:
            yield from codex_runs(path, bad=bad, since=since, until=until, project=project, files=files,
                                  timings=timings)


def _format_of(path: str | os.PathLike[str], format: str | None, bad: BadLines | None = None) -> str:  # noqa: A002
    """The format ``path`` is read in: ``format`` when given (checked against what the path is), else sniffed."""
    if format not in (None, "auto") and format not in LOG_FORMATS:
        raise SchemaError(field="format", expected=f"one of {['auto', *LOG_FORMATS]}", got=repr(format))
    if Path(path).is_dir() and format in (None, "auto"):
        if (named := sniff_directory_format(path)) is not None:
            return named
        found = directory_formats(path, bad)
        if len(found) == 1:
            return next(iter(found))
        if not found and (named := sniff_directory_format(path, last=True)) is not None:
            return named  # (a directory of inspect_ai logs: listed only once no session file was found)
        return "sessions" if found else sniff_directory(path, bad)  # none: sniff_directory's error names the files
    fmt = LOG_FORMATS[format] if format not in (None, "auto") else None
    if Path(path).is_dir() and (fmt is None or fmt.reads == "file"):
        readers = ", ".join(f"{f.name} ({f.summary.split(':')[0]})" for f in LOG_FORMATS.values() if f.reads != "file")
        raise SchemaError(f"is a directory; the formats that read one: {readers}", file=str(path))
    if fmt is not None and fmt.reads == "directory" and not Path(path).is_dir():
        raise SchemaError(f"expected {fmt.summary}, a directory", file=str(path))
    if not Path(path).exists():
        raise SchemaError("no such file", file=str(path))
    return sniff_format(path) if fmt is None else fmt.name


__all__ = ["FORMATS", "read_log", "read_sessions", "sniff_directory", "sniff_format"]
