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
| ``who-and-when`` | :mod:`~workbench.adapters._who_and_when` | Who&When's failure logs with their labels (a directory) |

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
from workbench.adapters._who_and_when import is_who_and_when, read_who_and_when
from workbench._util.jsonl import BadLines
from workbench.adapters._logfiles import directory_formats, input_bytes, sniff_directory, sniff_format
from workbench.errors import SchemaError

FORMATS: dict[str, Callable[[str | os.PathLike[str]], dict[str, pl.DataFrame]]] = {
    "trajectory": read_trajectories,
    "openai": read_openai_chat,
    "tau-bench": read_tau_bench,
    "claude-code": read_claude_code,
    "codex": read_codex,
    "labelled-summaries": read_labelled_summaries,
    "frank": read_frank,
    "who-and-when": read_who_and_when,
}

#: formats whose logs may be a directory of session files
DIRECTORY_FORMATS = ("claude-code", "codex")
#: formats that are human-labelled summaries: their ``labels`` go into the annotation store at ``DIR/annotations``
LABELLED_FORMATS = ("labelled-summaries", "frank", "who-and-when")
#: formats whose input is one directory (not a directory of sessions)
BENCHMARK_DIRECTORIES = ("frank", "who-and-when")


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
    if Path(path).is_dir() and format in (None, "auto"):
        if is_frank(path):
            return "frank"
        if is_who_and_when(path):
            return "who-and-when"
        found = directory_formats(path, bad)
        if len(found) == 1:
            return next(iter(found))
        return "sessions" if found else sniff_directory(path, bad)  # none: sniff_directory's error names the files
    if Path(path).is_dir() and format not in (*DIRECTORY_FORMATS, *BENCHMARK_DIRECTORIES):
        raise SchemaError("is a directory; only --format claude-code or codex (a directory of sessions), frank "
                          "(FRANK's files) or who-and-when (its failure logs) read a directory", file=str(path))
    if format == "frank" and not Path(path).is_dir():
        raise SchemaError("expected FRANK's directory (human_annotations.json, baseline_factuality_metrics_"
                          "outputs.json, the articles)", file=str(path))
    if format == "who-and-when" and not Path(path).is_dir():
        raise SchemaError("expected Who&When's directory (Algorithm-Generated/ and Hand-Crafted/, or a folder of "
                          "*.json failure logs)", file=str(path))
    if not Path(path).exists():
        raise SchemaError("no such file", file=str(path))
    fmt = sniff_format(path) if format in (None, "auto") else format
    if fmt not in FORMATS:
        raise SchemaError(field="format", expected=f"one of {['auto', *FORMATS]}", got=repr(fmt))
    return fmt


__all__ = ["BENCHMARK_DIRECTORIES", "directory_formats", "DIRECTORY_FORMATS", "FORMATS", "LABELLED_FORMATS", "STREAMING", "input_bytes", "chat_to_run", "read_claude_code", "read_codex", "read_log",
           "read_openai_chat", "read_sessions", "session_runs", "read_tau_bench", "read_trajectories", "sniff_directory", "sniff_format", "write_trajectories"]
