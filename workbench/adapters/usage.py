"""What coding-agent sessions spent, in one fast pass over their files (``workbench usage``): the usage columns
of the importers (:mod:`workbench.adapters.claude_code`, :mod:`workbench.adapters.codex`) without the steps.

Claude Code: only the lines holding a ``"usage"`` key are parsed (:mod:`workbench.usage_scan`: a tree of more
than 64 MB is scanned by one process a core), their ``sessionId``, ``requestId``, ``message.id``,
``message.model`` and ``message.usage`` read; each (message id, request id) is kept once in file order across the
whole tree (a line without both counts on its own), and summed per session: ccusage's rule, and the importer's. Codex rollouts are read by their importer's usage
rule (``token_count`` events). Lines that are not JSON, or whose fields have other types, are passed over; a
session's totals are those of its readable lines.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import polars as pl

from workbench.usage_scan import USAGE_COLUMNS, claude_code_totals, usage_rows

_SCHEMA: dict[str, Any] = {"client": pl.Utf8, "project_dir": pl.Utf8, "session_id": pl.Utf8,
                           **{c: pl.Int64 for c in USAGE_COLUMNS}, "models": pl.List(pl.Utf8)}


def claude_code_usage(files: list[Path]) -> pl.DataFrame:
    """Per Claude Code session (``session_id``, ``project_dir``): the usage columns and ``models``.

    Parameters
    ----------
    files : list of pathlib.Path
        Transcript files, in the order a reply's first appearance is decided (sorted paths).

    Returns
    -------
    polars.DataFrame
        One row per (project directory, session): ``client`` ``claude-code``, the usage columns of
        :data:`USAGE_COLUMNS` (reasoning 0) and ``models`` (:func:`workbench.usage_scan.claude_code_totals`).
    """
    return usage_table(claude_code_totals(files))


def session_usage(path: str | os.PathLike[str]) -> pl.DataFrame:
    """What every Claude Code and Codex session below ``path`` (a file, a projects or sessions directory, or a home
    with both) spent: one row per session with ``client``, ``project_dir``, ``session_id``, the usage columns of
    :data:`USAGE_COLUMNS` and ``models`` (:func:`workbench.usage_scan.usage_rows` as a table).

    Parameters
    ----------
    path : str or os.PathLike
        A session file or a directory of them.

    Returns
    -------
    polars.DataFrame
        One row per session, Claude Code's first.
    """
    return usage_table(usage_rows(path))


def usage_table(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Rows of :func:`workbench.usage_scan.usage_rows` as :func:`session_usage`'s table."""
    return pl.DataFrame(rows, schema=_SCHEMA, orient="row")


__all__ = ["claude_code_usage", "session_usage", "usage_table", "USAGE_COLUMNS"]
