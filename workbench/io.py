"""Old home of table files and log adapters; kept so earlier imports (``from workbench import io``) still work.

Table files live in :mod:`workbench.tables`, log formats in :mod:`workbench.adapters`.
"""

from __future__ import annotations

import os

import polars as pl

from workbench.adapters import FORMATS, sniff_format
from workbench.adapters import read_log as _read_log
from workbench.adapters.openai_chat import chat_to_run, message_text, message_tokens, read_openai_chat
from workbench.adapters.tau_bench import read_tau_bench
from workbench.adapters.trajectory import read_trajectories, write_trajectories
from workbench.tables import (
    TRAJECTORY_TABLES,
    check_references,
    json_lines,
    read_table,
    read_tables,
    rows_frame,
    write_jsonl,
    write_table,
    write_tables,
)


def read_log(path: str | os.PathLike[str], fmt: str = "auto") -> dict[str, pl.DataFrame]:
    """Load a trajectory log in any supported format; see :func:`workbench.adapters.read_log`."""
    return _read_log(path, fmt)


__all__ = ["FORMATS", "TRAJECTORY_TABLES", "chat_to_run", "check_references", "json_lines", "message_text",
           "message_tokens", "read_log", "read_openai_chat", "read_table", "read_tables", "read_tau_bench",
           "read_trajectories", "rows_frame", "sniff_format", "write_jsonl", "write_table", "write_tables",
           "write_trajectories"]
