"""Adapters: one module per log format, each turning a file into the runs, steps and compactions tables.

| format | module | what it reads |
| --- | --- | --- |
| ``trajectory`` | :mod:`~workbench.adapters.trajectory` | the workbench's own JSONL, one run per line |
| ``openai`` | :mod:`~workbench.adapters.openai_chat` | OpenAI chat-completions message lists, one run per line |
| ``tau-bench`` | :mod:`~workbench.adapters.tau_bench` | tau-bench ``historical_trajectories`` JSON lists |
| ``claude-code`` | :mod:`~workbench.adapters.claude_code` | Claude Code session transcripts (a file or a directory) |
| ``codex`` | :mod:`~workbench.adapters.codex` | Codex CLI rollouts (a file or a directory) |

:mod:`~workbench.adapters.claude_compaction` loads the Claude compaction data set (summaries with
the history they replaced), which is not a trajectory log. ``read_log(path, format=None)`` sniffs
the format when it is not given.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import polars as pl

from workbench.adapters.claude_code import read_claude_code
from workbench.adapters.codex import read_codex
from workbench.adapters.openai_chat import chat_to_run, read_openai_chat
from workbench.adapters.tau_bench import read_tau_bench
from workbench.adapters.trajectory import read_trajectories, write_trajectories
from workbench.schema import SchemaError
from workbench.tables import json_lines

FORMATS: dict[str, Callable[[str | os.PathLike[str]], dict[str, pl.DataFrame]]] = {
    "trajectory": read_trajectories,
    "openai": read_openai_chat,
    "tau-bench": read_tau_bench,
    "claude-code": read_claude_code,
    "codex": read_codex,
}

#: formats whose logs may be a directory of session files
DIRECTORY_FORMATS = ("claude-code", "codex")


def sniff_format(path: str | os.PathLike[str]) -> str:
    """Guess a log's format: ``tau-bench`` for a JSON list of runs with ``traj``; from the first JSONL
    record, ``openai`` if it has ``messages``, else ``trajectory``."""
    with open(path, "rb") as fh:
        head = fh.read(4096).lstrip()
    if head.startswith(b"[") and b'"traj"' in head:
        return "tau-bench"
    for _, record in json_lines(Path(path)):
        if isinstance(record, dict) and "messages" in record:
            return "openai"
        if isinstance(record, dict) and "payload" in record and "type" in record:
            return "codex"
        if isinstance(record, dict) and "sessionId" in record:
            return "claude-code"
        return "trajectory"
    return "trajectory"  # pragma: no cover - json_lines raises on an empty file


def read_log(path: str | os.PathLike[str], format: str | None = None) -> dict[str, pl.DataFrame]:  # noqa: A002
    """Load a trajectory log in any supported format (``None`` or ``"auto"`` sniffs it)."""
    if Path(path).is_dir() and format not in DIRECTORY_FORMATS:
        raise SchemaError("is a directory; only --format claude-code or codex read a directory of sessions",
                          file=str(path))
    if not Path(path).exists():
        raise SchemaError("no such file", file=str(path))
    fmt = sniff_format(path) if format in (None, "auto") else format
    try:
        reader = FORMATS[fmt]
    except KeyError:
        raise SchemaError(field="format", expected=f"one of {['auto', *FORMATS]}", got=repr(fmt)) from None
    return reader(path)


__all__ = ["DIRECTORY_FORMATS", "FORMATS", "chat_to_run", "read_claude_code", "read_codex", "read_log",
           "read_openai_chat", "read_tau_bench", "read_trajectories", "sniff_format", "write_trajectories"]
