"""What coding-agent sessions spent, in one fast pass over their files (``workbench usage``): the usage columns
of the importers (:mod:`workbench.adapters._claude_code`, :mod:`workbench.adapters._codex`) without the steps.

Claude Code: only the lines holding a ``"usage"`` key are parsed (:mod:`workbench.adapters._usage_scan`: a tree of more
than 64 MB is scanned by one process a core), their ``sessionId``, ``requestId``, ``message.id``,
``message.model`` and ``message.usage`` read; each (message id, request id) is kept once in file order across the
whole tree (a line without both counts on its own), and summed per session: ccusage's rule, and the importer's. Codex rollouts are read by their importer's usage
rule (``token_count`` events), also without the table library. Lines that are not JSON, or whose fields have other types, are passed over; a
session's totals are those of its readable lines.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.adapters._usage_scan import USAGE_COLUMNS, claude_code_totals

if TYPE_CHECKING:
    import polars as pl

    from workbench._util.jsonl import BadLines


def session_usage(path: str | os.PathLike[str]) -> pl.DataFrame:
    """What every Claude Code and Codex session below ``path`` (a file, a projects or sessions directory, or a home
    with both) spent: one row per session with ``client``, ``project_dir``, ``session_id``, the usage columns of
    :data:`USAGE_COLUMNS` and ``models`` (:func:`usage_rows` as a table).

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
    """Rows of :func:`usage_rows` as :func:`session_usage`'s table (their ``parts`` left out)."""
    import polars as pl

    schema: dict[str, Any] = {"client": pl.Utf8, "project_dir": pl.Utf8, "session_id": pl.Utf8,
                              **{c: pl.Int64 for c in USAGE_COLUMNS}, "models": pl.List(pl.Utf8)}
    return pl.DataFrame([{k: r[k] for k in schema} for r in rows], schema=schema, orient="row")


def usage_rows(path: str | os.PathLike[str], bad: BadLines | None = None) -> list[dict[str, Any]]:
    """What every Claude Code and Codex session below ``path`` (a file, a projects or sessions directory, or a
    home with both) spent, one dict per session (the keys of ``claude_code_totals``), Claude Code's first.
    Claude Code's are counted without the table library; Codex rollouts by their importer's usage rule. A file or
    directory that cannot be read, or a line over the line bound, is an error naming it; with ``bad.skip_invalid``
    it is skipped and counted in ``bad``."""
    from workbench.adapters._logfiles import _Walk, sniff_format
    from workbench.adapters._usage_scan import _totals
    from workbench.errors import SchemaError

    p = Path(path)
    if not p.exists():
        raise SchemaError("no such file or directory, expected session files", file=str(p))
    formats: dict[str, list[Path]] = {}
    if p.is_dir():
        # one walk lists the files, read as it goes (the workers start on the first files while it walks on);
        # each file's format is decided where it is read (from the same open that reads its replies), and the files
        # that are not Claude Code's come back with their formats
        files: list[Path] = []
        others: list[tuple[int, str | None]] = []
        walk = ((file, size) for file, size, _fmt in _Walk(bad, open_files=False).files(p, "*.jsonl"))
        rows = _totals(walk, bad, formats=others, listed=files)
        for index, fmt in others:
            if fmt is not None:  # a file no record of which says (titles only) is left out
                formats.setdefault(fmt, []).append(files[index])
    else:
        fmt = sniff_format(p)
        formats[fmt] = [p]
        rows = claude_code_totals([p], bad, sizes=[p.stat().st_size]) if fmt == "claude-code" else []
    unknown = sorted(set(formats) - {"claude-code", "codex"})
    if unknown:
        raise SchemaError(f"not a Claude Code or Codex session ({unknown[0]})", file=str(p))
    if formats.get("codex"):
        from workbench.adapters._codex import codex_runs
        from workbench.adapters._usage_scan import PART_COUNTS, utc_day

        for _line, run, _steps, _comps in codex_runs(p, files=formats["codex"], bad=bad, usage_only=True):
            by_model = run.get("usage_by_model") or {}  # (usage_only: the dict, not its JSON text)
            day = utc_day(run.get("started_at"))  # a rollout's usage is dated by its start (no per-event split)
            parts = [{"day": day, "model": model, **{k: int(u.get(k, 0)) for k in PART_COUNTS if k != "replies"},
                      "replies": 0} for model, u in sorted(by_model.items())]
            rows.append({"client": "codex", "project_dir": None, "session_id": run["run_id"],
                         **{c: int(run.get(c) or 0) for c in USAGE_COLUMNS}, "models": list(run.get("models") or []),
                         "parts": parts})
    return rows


__all__ = ["session_usage", "usage_rows", "usage_table"]
