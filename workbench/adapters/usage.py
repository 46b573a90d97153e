"""What coding-agent sessions spent, in one fast pass over their files (``workbench usage``): the usage columns
of the importers (:mod:`workbench.adapters.claude_code`, :mod:`workbench.adapters.codex`) without the steps.

Claude Code: polars reads every ``*.jsonl`` line's ``sessionId``, ``requestId``, ``message.id``, ``message.model``
and ``message.usage`` only (``scan_ndjson`` with that schema: the rest of each line is skipped by its parser),
keeps each (message id, request id) once in file order across the whole tree (a line without both counts on its
own), and sums per session: ccusage's rule, and the importer's. Codex rollouts are read by their importer's usage
rule (``token_count`` events). Lines that are not JSON, or whose fields have other types, are passed over; a
session's totals are those of its readable lines.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from workbench.schema import SchemaError

#: the columns of :func:`session_usage`, as the importers name them
USAGE_COLUMNS = ("usage_input_tokens", "usage_output_tokens", "usage_cache_read_tokens",
                 "usage_cache_creation_tokens", "usage_reasoning_tokens", "usage_replies")

_USAGE = pl.Struct({"input_tokens": pl.Int64, "output_tokens": pl.Int64, "cache_read_input_tokens": pl.Int64,
                    "cache_creation_input_tokens": pl.Int64})
_SCHEMA: dict[str, pl.DataType] = {"type": pl.Utf8(), "sessionId": pl.Utf8(), "requestId": pl.Utf8(),
           "message": pl.Struct({"id": pl.Utf8, "model": pl.Utf8, "role": pl.Utf8, "usage": _USAGE})}


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
    if not files:
        return pl.DataFrame(schema={"client": pl.Utf8, "project_dir": pl.Utf8, "session_id": pl.Utf8,
                                    **{c: pl.Int64 for c in USAGE_COLUMNS}, "models": pl.List(pl.Utf8)})
    rows = (pl.scan_ndjson([str(f) for f in files], schema=_SCHEMA, ignore_errors=True, include_file_paths="file")
            .with_row_index("order")
            .filter(pl.col("message").struct.field("usage").is_not_null()
                    & (pl.col("type").fill_null(pl.col("message").struct.field("role")) == "assistant")
                    & pl.col("sessionId").is_not_null())
            .select("order", "file", pl.col("sessionId").alias("session_id"), "requestId",
                    pl.col("message").struct.field("id").alias("message_id"),
                    pl.col("message").struct.field("model").alias("model"),
                    pl.col("message").struct.field("usage").struct.unnest())
            .collect())
    keyed = rows.filter(pl.col("message_id").is_not_null() & pl.col("requestId").is_not_null())
    once = pl.concat([keyed.sort("order").unique(["message_id", "requestId"], keep="first", maintain_order=True),
                      rows.filter(pl.col("message_id").is_null() | pl.col("requestId").is_null())]).sort("order")
    from workbench.adapters.claude_code import _project_dir

    project = pl.col("file").replace_strict({str(f): _project_dir(f) for f in files}, return_dtype=pl.Utf8)
    return (once.with_columns(project.alias("project_dir"))
            .group_by("project_dir", "session_id", maintain_order=True)
            .agg(pl.col("input_tokens").fill_null(0).sum().alias("usage_input_tokens"),
                 pl.col("output_tokens").fill_null(0).sum().alias("usage_output_tokens"),
                 pl.col("cache_read_input_tokens").fill_null(0).sum().alias("usage_cache_read_tokens"),
                 pl.col("cache_creation_input_tokens").fill_null(0).sum().alias("usage_cache_creation_tokens"),
                 pl.lit(0, dtype=pl.Int64).alias("usage_reasoning_tokens"),
                 pl.len().cast(pl.Int64).alias("usage_replies"),
                 pl.col("model").filter(pl.col("model").is_not_null() & (pl.col("model") != "<synthetic>"))
                 .unique(maintain_order=True).alias("models"))
            .select(pl.lit("claude-code").alias("client"), "project_dir", "session_id", *USAGE_COLUMNS, "models"))


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
