"""Adapters: one module per log format, each turning a file into the runs, steps and compactions tables.

| format | module | what it reads |
| --- | --- | --- |
| ``trajectory`` | :mod:`~workbench.adapters.trajectory` | the workbench's own JSONL, one run per line |
| ``openai`` | :mod:`~workbench.adapters.openai_chat` | OpenAI chat-completions message lists, one run per line |
| ``tau-bench`` | :mod:`~workbench.adapters.tau_bench` | tau-bench ``historical_trajectories`` JSON lists |

:mod:`~workbench.adapters.claude_compaction` loads the Claude compaction data set (summaries with
the history they replaced), which is not a trajectory log. ``read_log(path, format=None)`` sniffs
the format when it is not given.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import polars as pl

from workbench.adapters.openai_chat import chat_to_run, read_openai_chat
from workbench.adapters.tau_bench import read_tau_bench
from workbench.adapters.trajectory import read_trajectories, write_trajectories
from workbench.schema import SchemaError
from workbench.tables import json_lines

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
    return "trajectory"  # pragma: no cover - json_lines raises on an empty file


def read_log(path: str | os.PathLike[str], format: str | None = None) -> dict[str, pl.DataFrame]:  # noqa: A002
    """Load a trajectory log in any supported format (``None`` or ``"auto"`` sniffs it)."""
    if Path(path).is_dir():
        raise SchemaError("is a directory, expected a log file", file=str(path))
    if not Path(path).is_file():
        raise SchemaError("no such file", file=str(path))
    fmt = sniff_format(path) if format in (None, "auto") else format
    try:
        reader = FORMATS[fmt]
    except KeyError:
        raise SchemaError(field="format", expected=f"one of {['auto', *FORMATS]}", got=repr(fmt)) from None
    return reader(path)


__all__ = ["FORMATS", "chat_to_run", "read_log", "read_openai_chat", "read_tau_bench", "read_trajectories",
           "sniff_format", "write_trajectories"]
