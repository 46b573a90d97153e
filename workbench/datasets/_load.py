"""Where the notebooks' data comes from: the default testbed or a user's directory.

Loading never writes: :func:`load` (the one loader) reads a directory or a log as it is and fails, saying how to
make one, when it holds no tables. :func:`derive_missing` adds, explicitly, what an imported log lacks and the
analyses need. Messages go to the ``workbench`` logger: what was derived or skipped at WARNING (shown in a
notebook's output)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from workbench.tables import _schema as schema
from workbench.tables._frames import height
from workbench.tables._files import check_references, open_tables, read_table, table_file
from workbench.datasets._guards import _null_counts
from workbench.datasets._testbed import DEFAULT_TESTBED


log = logging.getLogger("workbench.datasets")


#: a directory's own annotation store (a labelled-summaries import writes its labels there): its ``labels`` table
#: when the directory has no labels file
STORE = "annotations"


#: the runs' long texts (the task's instruction, the simulated world): no analysis reads them, and at 100x the
#: testbed they are most of the runs table's 820 MiB
RUN_TEXTS = ("task", "gt_world")


def load(path: str | os.PathLike[str] = DEFAULT_TESTBED, *, names: Sequence[str] | None = None,
         columns: Mapping[str, Sequence[str] | None] | None = None, lazy: bool = False, derive: bool = False,
         run_texts: bool | None = None, run_columns: Sequence[str] | None = None,
         need: Sequence[str] = ("runs",)) -> dict[str, Any]:
    """The tables of ``path``, validated: the one way the workbench loads data. Nothing is written or generated.

    ``path`` is a directory of tables (written by ``workbench import`` or ``simulate``; Parquet or JSONL), or a log
    in any format (:func:`workbench.adapters.read_log`: a file, or a directory of Claude Code or Codex sessions),
    read into memory.

    * ``names``: only these tables (and ``runs``); default every table there is, so an analysis that needs
      entries and scores need not hold a large log's steps. A directory without a labels file gives the labels of
      its own annotation store (``DIR/annotations``, where ``workbench import`` puts a labelled import's labels).
    * ``columns``: a table -> the columns used (None: all); those tables come back as ``LazyFrame`` s, checked a
      batch at a time (:func:`workbench.tables.read_table` with ``lazy``) and read again when a query collects
      them; with the runs among them, the eager tables' references are checked against the scan.
    * ``lazy``: every Parquet table opened as a plain scan (the verbs that read a batch at a time and validate
      each batch), JSONL ones read and validated.
    * ``derive``: then :func:`derive_missing` adds what an imported log lacks (entries, scores, evidence, run
      usage) and it is logged; when a table to derive is missing, every table is read, since deriving needs the
      compactions and steps.
    * ``run_texts`` or ``run_columns``: with ``run_texts=False`` the runs are read without ``RUN_TEXTS`` (from
      Parquet, when nothing is to be derived), with ``run_columns`` only those of their columns (``run_id``
      always). By default the texts are read unless ``derive`` (an analysis reads none; the fact check, which
      cites the task, asks for them).
    * ``need``: tables that must be there (a :class:`~workbench.errors.SchemaError` naming the directory); an
      analysis's own requirement is :func:`need`'s :class:`NotApplicable`.

    Parameters
    ----------
    path : str or os.PathLike, default the project's data/testbed
        A directory of tables, or a log in any format.
    names : sequence of str, optional
        The tables to read (``runs`` always).
    columns : mapping of str to sequence of str or None, optional
        Tables read lazily, with the columns used.
    lazy : bool, default False
        Open every Parquet table as a scan.
    derive : bool, default False
        Add what an imported log lacks (:func:`derive_missing`).
    run_texts : bool, optional
        Read the runs' long text columns.
    run_columns : sequence of str, optional
        The run columns read.
    need : sequence of str, default ("runs",)
        Tables that must be there.

    Returns
    -------
    dict
        Table name to frame (``DataFrame``, or ``LazyFrame`` where asked).

    Examples
    --------
    >>> import tempfile
    >>> from workbench.datasets import import_log, load
    >>> from workbench.datasets import examples
    >>> out = tempfile.mkdtemp()
    >>> _ = import_log(examples("invoice_log.jsonl"), out)
    >>> tables = load(out, derive=True)  # entries and lexical scores derived, offline
    >>> {name: frame.height for name, frame in sorted(tables.items()) if hasattr(frame, "height")}
    {'compactions': 8, 'entries': 61, 'evidence': 32, 'runs': 4, 'scores': 61, 'steps': 32}
    """
    path = Path(path)
    columns = dict(columns or {})
    run_texts = not derive if run_texts is None else run_texts
    wanted = tuple(dict.fromkeys(("runs", *(names or ()), *columns))) if names is not None or columns else None
    if not path.is_dir() or table_file(path, "runs") is None:
        return _load_log(path, wanted, columns, derive)
    if lazy:
        tables: dict[str, Any] = open_tables(path, wanted or tuple(schema.TABLES), need=())
    elif columns or derive:
        tables = _analysis_tables(path, wanted, columns, derive, run_texts, run_columns)
    else:
        tables = _read_dir(path, wanted, light_runs=not run_texts or run_columns is not None, run_columns=run_columns)
    missing = [name for name in need if name not in tables]
    if missing:
        raise schema.SchemaError(f"no {missing[0]} table ({missing[0]}.parquet or {missing[0]}.jsonl); expected a "
                                 "directory written by `workbench import` or `workbench simulate`", file=str(path))
    return tables


def _load_log(path: Path, wanted: tuple[str, ...] | None, columns: Mapping[str, Sequence[str] | None],
              derive: bool) -> dict[str, Any]:
    """A log read whole (:func:`workbench.adapters.read_log`), shaped as a directory's tables would be."""
    from workbench.adapters._formats import sniff_directory_format

    if path.resolve() == DEFAULT_TESTBED.resolve() or (path.is_dir() and sniff_directory_format(path) is None
                                                        and not any(path.rglob("*.jsonl"))):
        made_by = ("generate it with `workbench simulate --out PATH` (or datasets.ensure_testbed(PATH))"
                   if path.resolve() == DEFAULT_TESTBED.resolve() else "expected a directory written by "
                   "`workbench import` or `workbench simulate`, a log file, a directory of sessions, or a "
                   "benchmark's own directory (FRANK's, SummEdits', Who&When's)")
        raise schema.SchemaError(f"no tables here (no runs.parquet or runs.jsonl); {made_by}", file=str(path))
    from workbench.adapters._read import read_log

    tables: dict[str, Any] = read_log(path)
    if derive:
        _say_derived(derive_missing(tables, wanted))
    if wanted is not None:
        tables = {name: frame for name, frame in tables.items() if name in wanted}
    return {**tables, **{name: tables[name].lazy().select(tables[name].columns if cols is None else list(cols))
                         for name, cols in columns.items() if name in tables}}


def _read_dir(path: Path, names: Sequence[str] | None, *, light_runs: bool = False,
              run_columns: Sequence[str] | None = None) -> dict[str, pl.DataFrame]:
    """The named tables of a directory (every table when None), read whole and validated, their references
    checked. ``light_runs`` reads the runs without ``RUN_TEXTS`` (from Parquet; checked as a lazy
    :func:`~workbench.tables.read_table` checks columns), with ``run_columns`` only those of the runs' columns
    the file has (at 100x the testbed the runs without texts are still 154 MiB, their id, scenario, method and
    budget 40)."""
    wanted = tuple(schema.TABLES) if names is None else tuple(names)
    runs_file = table_file(path, "runs")
    light = light_runs and runs_file is not None and runs_file.suffix == ".parquet"
    out: dict[str, pl.DataFrame] = {}
    files: dict[str, Path] = {}
    for name in wanted:
        file = table_file(path, name)
        if file is None and name == "labels" and (path / STORE / "labels").is_dir():
            from workbench.annotate._store import AnnotationStore

            out[name] = AnnotationStore(path / STORE, read_only=True).labels()  # the directory's own store
            continue
        if file is None:
            continue
        files[name] = file
        if name == "runs" and light:
            keep = [c for c in pl.read_parquet_schema(file) if c not in RUN_TEXTS
                    and (run_columns is None or c == "run_id" or c in run_columns)]
            out[name] = read_table(file, name, keep)
        else:
            out[name] = read_table(file, name)
    check_references(out, files)
    return out


def _analysis_tables(path: Path, wanted: tuple[str, ...] | None, columns: Mapping[str, Sequence[str] | None],
                     derive: bool, run_texts: bool, run_columns: Sequence[str] | None) -> dict[str, Any]:
    """:func:`load` with ``columns`` or ``derive``: the lazy tables scanned, the others read, then derived."""
    on_disk = {name: file for name in columns if (file := table_file(path, name)) is not None}
    light = not run_texts and wanted is not None and (not derive or _on_disk(path, wanted))
    if columns and set(columns) <= on_disk.keys():  # every lazy table is there: scan it
        eager_names = tuple(n for n in wanted or () if n not in columns)
        if "runs" in columns:  # the runs scanned too: the eager tables' references are checked against the scan
            tables: dict[str, Any] = _read_dir(path, eager_names) if eager_names else {}
        else:
            tables = _read_dir(path, eager_names, light_runs=not run_texts and _on_disk(path, eager_names),
                               run_columns=run_columns)
        tables.update({name: read_table(on_disk[name], name, cols, lazy=True) for name, cols in columns.items()})
        if "runs" in columns:
            check_references(tables, {n: f for n in tables if (f := table_file(path, n)) is not None})
        if derive:
            _say_derived(derive_missing(tables, wanted))
        return tables
    eager = _read_dir(path, wanted, light_runs=light, run_columns=run_columns)
    if derive and wanted is not None and not set(wanted) <= eager.keys():
        eager = _read_dir(path, None)
    if derive:
        _say_derived(derive_missing(eager, wanted))
    return {**eager, **{name: eager[name].lazy().select(eager[name].columns if cols is None else list(cols))
                        for name, cols in columns.items() if name in eager}}  # (a table it lacks stays absent)


def _on_disk(path: Path, names: Sequence[str]) -> bool:
    """Every named table is in the directory (nothing will be derived: the runs' texts are not needed)."""
    return all(table_file(path, n) is not None for n in names)


def _say_derived(derived: dict[str, str]) -> None:
    if derived:
        log.warning("derived: %s", derived)
    else:
        log.info("derived: nothing, every table was in DATA")


def _fill_run_usage(tables: dict[str, Any]) -> dict[str, str]:
    """Fill the runs' ``peak_tokens``, ``dependency`` and ``agent_tokens`` where null from the steps' token counts
    (in place); what was filled, for :func:`derive_missing`. Runs that carry all three (the testbed's) cost no pass
    over the steps."""
    if "steps" not in tables or not {"input_tokens", "output_tokens"} <= set(tables["steps"].collect_schema().names()):
        return {}
    runs = tables["runs"]  # (a LazyFrame when the notebook scans the runs: filled lazily, counted by a query)
    # those of the three the runs were read with (every one, unless the notebook named its run columns)
    targets = [c for c in ("peak_tokens", "dependency", "agent_tokens") if c in runs.collect_schema().names()]
    before = _null_counts(runs, targets)
    if not any(before.values()):
        return {}
    from workbench.stats._efficiency import efficiency

    eff = efficiency(tables["steps"].drop_nulls(["input_tokens", "output_tokens"]))
    fill = eff.lazy().select("run_id", pl.col("peak_tokens").cast(pl.Int64).alias("_peak_tokens"),
                             pl.col("dependency").alias("_dependency"),
                             (pl.col("input_tokens") + pl.col("output_tokens")).cast(pl.Int64).alias("_agent_tokens"))
    filled_runs = runs.lazy().join(fill, on="run_id", how="left", maintain_order="left").with_columns(
        pl.col(c).fill_null(pl.col(f"_{c}")) for c in targets).drop("_peak_tokens", "_dependency", "_agent_tokens")
    runs = filled_runs if isinstance(runs, pl.LazyFrame) else filled_runs.collect()
    tables["runs"] = runs
    after, n = _null_counts(runs, targets), height(runs)
    return {f"runs.{col}": f"filled for {n_before - after[col]} of {n} runs from the steps' token counts"
            for col, n_before in before.items() if n_before > after[col]}




def derive_missing(tables: dict[str, Any], wanted: Sequence[str] | None = None) -> dict[str, str]:
    """Add to ``tables`` (in place) what an imported log lacks but can be derived offline; return what was added.

    * run columns ``peak_tokens``, ``dependency`` and ``agent_tokens`` where they are null,
      from the steps' token counts (FOCUS A.8; :mod:`workbench.stats`);
    * ``entries`` from the candidate summaries (:func:`workbench.summaries.entries_table`);
    * lexical-judge ``scores`` for those entries (the offline default judge), and the ``evidence`` they used.

    The result maps each added table or filled column to a one-line description, so a
    notebook can print exactly what it analyses that the log did not carry. The testbed
    carries everything, so on it the result is empty. With ``wanted``, entries and scores are
    derived only if named there (a notebook that reads steps lazily needs neither).

    Parameters
    ----------
    tables : dict of str to polars.DataFrame
        The loaded tables, completed in place.
    wanted : sequence of str, optional
        The derived tables asked for; all by default.

    Returns
    -------
    dict of str to str
        Each added table or filled column, with a one-line description.

    Examples
    --------
    >>> from workbench.adapters import read_log
    >>> from workbench.datasets import derive_missing
    >>> from workbench.datasets import examples
    >>> tables = read_log(examples("invoice_log.jsonl"))
    >>> for name, what in derive_missing(tables).items():
    ...     print(f"{name}: {what}")
    ...
    runs.peak_tokens: filled for 4 of 4 runs from the steps' token counts
    runs.dependency: filled for 4 of 4 runs from the steps' token counts
    runs.agent_tokens: filled for 4 of 4 runs from the steps' token counts
    entries: 61 entries parsed from the candidate summaries
    scores: 61 lexical-judge scores (offline)
    evidence: 32 evidence passages the lexical judge used
    """
    added = _fill_run_usage(tables)
    if "compactions" in tables:
        if "entries" not in tables and (wanted is None or {"entries", "scores"} & set(wanted)):
            from workbench.summaries._entries import entries_table

            tables["entries"] = entries_table(tables["compactions"])
            added["entries"] = f"{tables['entries'].height} entries parsed from the candidate summaries"
        if "scores" not in tables and (wanted is None or "scores" in wanted):
            from workbench.summaries._evidence import compaction_requests, evidence_table
            from workbench.judges._lexical import LexicalJudge
            from workbench.judges._requests import score_requests

            requests = compaction_requests(tables)
            tables["scores"], _ = score_requests(requests, LexicalJudge())
            added["scores"] = f"{tables['scores'].height} lexical-judge scores (offline)"
            if "evidence" not in tables:
                tables["evidence"] = evidence_table(requests)
                added["evidence"] = f"{tables['evidence'].height} evidence passages the lexical judge used"
    return added


__all__ = ["derive_missing", "load"]
