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

from workbench.schema import SchemaError

#: the columns of :func:`session_usage`, as the importers name them
USAGE_COLUMNS = ("usage_input_tokens", "usage_output_tokens", "usage_cache_read_tokens",
                 "usage_cache_creation_tokens", "usage_reasoning_tokens", "usage_replies")



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
        :data:`USAGE_COLUMNS` (reasoning 0) and ``models``.
    """
    from workbench.adapters.claude_code import _project_dir
    from workbench.usage_scan import tree_replies

    seen: set[tuple[str, str]] = set()
    sessions: dict[tuple[str, str], dict[str, Any]] = {}  # (project directory, session) -> its totals, in order
    projects = [_project_dir(f) for f in files]
    for index, _line, sid, request, message, model, fresh, output, read, made in tree_replies(files):
        if request is not None and message is not None:  # a reply written over several lines counts once
            if (message, request) in seen:
                continue
            seen.add((message, request))
        row = sessions.setdefault((projects[index], sid), {c: 0 for c in USAGE_COLUMNS} | {"models": []})
        row["usage_input_tokens"] += fresh
        row["usage_output_tokens"] += output
        row["usage_cache_read_tokens"] += read
        row["usage_cache_creation_tokens"] += made
        row["usage_replies"] += 1
        if model is not None and model != "<synthetic>" and model not in row["models"]:
            row["models"].append(model)
    return pl.DataFrame([{"client": "claude-code", "project_dir": project, "session_id": sid, **row}
                         for (project, sid), row in sessions.items()],
                        schema={"client": pl.Utf8, "project_dir": pl.Utf8, "session_id": pl.Utf8,
                                **{c: pl.Int64 for c in USAGE_COLUMNS}, "models": pl.List(pl.Utf8)}, orient="row")


def session_usage(path: str | os.PathLike[str]) -> pl.DataFrame:
    """What every Claude Code and Codex session below ``path`` (a file, a projects or sessions directory, or a home
    with both) spent: one row per session with ``client``, ``project_dir``, ``session_id``, the usage columns of
    :data:`USAGE_COLUMNS` and ``models``.

    Parameters
    ----------
    path : str or os.PathLike
        A session file or a directory of them.

    Returns
    -------
    polars.DataFrame
        One row per session, Claude Code's first.
    """
    from workbench.adapters import directory_formats

    p = Path(path)
    if not p.exists():
        raise SchemaError("no such file or directory, expected session files", file=str(p))
    if p.is_dir():
        formats = directory_formats(p)
    else:
        from workbench.adapters import sniff_format

        formats = {sniff_format(p): [p]}
    unknown = sorted(set(formats) - {"claude-code", "codex"})
    if unknown:
        raise SchemaError(f"not a Claude Code or Codex session ({unknown[0]})", file=str(p))
    parts = [claude_code_usage(formats.get("claude-code", []))]
    if formats.get("codex"):
        from workbench.adapters.codex import read_codex

        runs = read_codex(p, files=formats["codex"])["runs"]
        parts.append(runs.select(pl.lit("codex").alias("client"), pl.lit(None, dtype=pl.Utf8).alias("project_dir"),
                                 pl.col("run_id").alias("session_id"),
                                 *[pl.col(c).cast(pl.Int64).fill_null(0) for c in USAGE_COLUMNS],
                                 pl.col("models").cast(pl.List(pl.Utf8))))
    return pl.concat(parts, how="vertical_relaxed")


__all__ = ["claude_code_usage", "session_usage", "USAGE_COLUMNS"]
