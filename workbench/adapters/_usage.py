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
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.adapters._usage_scan import USAGE_COLUMNS, RowSink, claude_code_totals

if TYPE_CHECKING:
    import polars as pl

    from workbench._util.jsonl import BadLines


def session_usage(path: str | os.PathLike[str]) -> pl.DataFrame:
    """What every Claude Code and Codex session below ``path`` (a file, a projects or sessions directory, or a home
    with both) spent: one row per session with ``client``, ``project_dir``, ``session_id``, the usage columns of
    ``USAGE_COLUMNS`` and ``models`` (:func:`usage_rows` as a table).

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


def usage_rows(path: str | os.PathLike[str], bad: BadLines | None = None, sink: RowSink | None = None
               ) -> list[dict[str, Any]]:
    """What every Claude Code and Codex session below ``path`` (a file, a projects or sessions directory, or a
    home with both) spent, one dict per session (the keys of ``claude_code_totals``), Claude Code's first.
    Claude Code's are counted without the table library; Codex rollouts by their importer's usage rule. A file or
    directory that cannot be read, or a line over the line bound, is an error naming it; with ``bad.skip_invalid``
    it is skipped and counted in ``bad``.

    A file's format is decided as ``tree_listing`` decides it, per file (where
    it is read for replies), except that the Codex rollouts of a directory (``rollout-*.jsonl``) take the format
    of its first rollout when that is Codex's, and are checked as they are read: where one is not (its first
    record says otherwise, or it cannot be read), the pass is made again deciding every file on its own, so the
    result is always the per-file rule's (a repeated pass may repeat a warning).

    Parameters
    ----------
    path : str or os.PathLike
        A session file, a projects or sessions directory, or a home with both.
    bad : workbench._util.jsonl.BadLines, optional
        Where unreadable files and lines are counted when its ``skip_invalid`` is set.
    sink : RowSink, optional
        An object with ``add(rows)`` and ``clear()``, also given the rows, in their order, as each becomes final (a
        tree's Claude Code sessions while its files are still being read; :class:`workbench.analyses.UsageView`
        makes the view as they come). A pass made again starts with ``sink.clear()``; what the sink holds at the
        end is the rows returned.

    Returns
    -------
    list of dict
        One dict per session: its ids, model, day, project and token counts.
    """
    from workbench.adapters._logfiles import sniff_format
    from workbench.errors import SchemaError

    p = Path(path)
    if not p.exists():
        raise SchemaError("no such file or directory, expected session files", file=str(p))
    if p.is_dir():
        before = (len(bad.skipped), len(bad.truncated), len(bad.unreadable)) if bad is not None else (0, 0, 0)
        try:
            return _tree_rows(p, bad, by_directory=True, sink=sink)
        except _NotCodex:  # a rollout-named file of a Codex directory is not Codex's: each file decided alone
            if bad is not None:
                del bad.skipped[before[0]:], bad.truncated[before[1]:], bad.unreadable[before[2]:]
            if sink is not None:
                sink.clear()
            return _tree_rows(p, bad, by_directory=False, sink=sink)
    fmt = sniff_format(p)
    if fmt not in ("claude-code", "codex"):
        raise SchemaError(f"not a Claude Code or Codex session ({fmt})", file=str(p))
    rows = claude_code_totals([p], bad, sizes=[p.stat().st_size]) if fmt == "claude-code" else \
        _codex_rows(p, [p], bad, checked=())
    if sink is not None:
        sink.add(rows)
    return rows


class _NotCodex(Exception):
    """A rollout-named file whose format was taken from its directory is not a Codex rollout (or cannot be
    read): :func:`usage_rows` decides every file alone."""


def _tree_rows(p: Path, bad: BadLines | None, by_directory: bool, sink: RowSink | None = None
               ) -> list[dict[str, Any]]:
    """:func:`usage_rows` of a directory: one walk lists the files, read as it goes (the workers start on the first
    files while it walks on); each file's format is decided where it is read (from the same open that reads its
    replies), and the files that are not Claude Code's come back with their formats. ``by_directory``: a
    directory's rollout-named files after its first take that one's format when it is Codex's (they are not
    opened until the Codex pass reads them, which checks them: :class:`_NotCodex`). ``sink``: given the Claude
    Code rows as they become final (:func:`~workbench.adapters._usage_scan._totals`), then the Codex rows."""
    from workbench.adapters._logfiles import HEAD_BYTES, _decided_format, _Walk
    from workbench.adapters._usage_scan import _totals
    from workbench.errors import SchemaError

    files: list[str | os.PathLike[str]] = []  # what the Claude Code pass was given, by its index
    others: list[tuple[int, str | None]] = []
    codex: list[tuple[int, Path]] = []  # (position in the walk, file): the rollouts the walk kept back
    order: list[int] = []  # the walk position of each file given to the Claude Code pass
    taken: set[Path] = set()  # the rollouts whose format was their directory's

    def walk() -> Iterator[tuple[str, int]]:
        directory: str | None = None
        decided: str | None = None
        for position, (file, size, _fmt) in enumerate(_Walk(bad, open_files=False).files(p, "*.jsonl", text=True)):
            if by_directory and os.path.basename(file).startswith("rollout-"):
                parent = os.path.dirname(file)
                if parent != directory:  # the directory's first rollout: decided alone, its head read here
                    directory = parent
                    try:
                        with open(file, "rb") as fh:
                            decided = _decided_format(fh.readline(HEAD_BYTES), file)
                    except (OSError, SchemaError):
                        decided = None  # (the Claude Code pass says what it cannot read)
                    if decided == "codex":
                        codex.append((position, Path(file)))
                        continue
                elif decided == "codex":
                    codex.append((position, Path(file)))
                    taken.add(codex[-1][1])
                    continue
            order.append(position)
            yield file, size

    rows = _totals(walk(), bad, formats=others, listed=files, sink=sink)
    formats: dict[str, list[tuple[int, Path]]] = {"codex": list(codex)}
    for index, fmt in others:
        if fmt is not None:  # a file no record of which says (titles only) is left out
            formats.setdefault(fmt, []).append((order[index], Path(files[index])))
    unknown = sorted(set(formats) - {"claude-code", "codex"})
    if unknown:
        raise SchemaError(f"not a Claude Code or Codex session ({unknown[0]})", file=str(p))
    rollouts = [file for _position, file in sorted(formats["codex"], key=lambda item: item[0])]
    codex_rows = _codex_rows(p, rollouts, bad, checked=taken)
    if sink is not None:
        sink.add(codex_rows)
    return rows + codex_rows


def _codex_rows(p: Path, rollouts: list[Path], bad: BadLines | None, checked: set[Path] | tuple[()]
                ) -> list[dict[str, Any]]:
    """The usage rows of Codex rollouts, in order; each file of ``checked`` must prove a rollout as it is read
    (:class:`_NotCodex` where it does not)."""
    if not rollouts:
        return []
    from workbench.adapters._codex import _NotARollout, codex_runs
    from workbench.adapters._usage_scan import PART_COUNTS, utc_day

    rows = []
    try:
        for _line, run, _steps, _comps in codex_runs(p, files=rollouts, bad=bad, usage_only=True, checked=checked):
            by_model = run.get("usage_by_model") or {}  # (usage_only: the dict, not its JSON text)
            day = utc_day(run.get("started_at"))  # a rollout's usage is dated by its start (no per-event split)
            parts = [{"day": day, "model": model, **{k: int(u.get(k, 0)) for k in PART_COUNTS[:-1]},
                      "cost_logged": None} for model, u in sorted(by_model.items())]
            rows.append({"client": "codex", "project_dir": None, "session_id": run["run_id"],
                         **{c: int(run.get(c) or 0) for c in USAGE_COLUMNS}, "models": list(run.get("models") or []),
                         "parts": parts})
    except _NotARollout:
        raise _NotCodex() from None
    return rows


__all__ = ["session_usage", "usage_rows"]
