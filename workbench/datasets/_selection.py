"""Choosing runs: by method, budget and ids (:func:`select_runs`), the one method of a log (:func:`single_method`),
whether runs have budgets, and the clusters (task scenarios) of entries."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from workbench.datasets._guards import NotApplicable


def select_runs(tables: Mapping[str, Any], *, method: str | None = None,
                budget: int | None = None) -> pl.DataFrame | pl.LazyFrame:
    """The runs of one method at one budget, as the single-setting analyses use them (a ``LazyFrame`` when the
    runs are scanned: :func:`load` with ``columns={"runs": ...}``).

    A dimension the runs do not carry (no budgets, as in imported logs; no method) is not filtered, and a log
    with a single method of its own (``claude_code``, ``codex``) is taken whole whatever ``method`` asks. Asking
    for a method or budget the runs do have, but not that one, raises :class:`NotApplicable` (a ``ValueError``)
    naming what there is, instead of returning nothing.

    Parameters
    ----------
    tables : mapping of str to polars.DataFrame
        The loaded tables.
    method : str, optional
        The method.
    budget : int, optional
        The budget.

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        The selected runs.
    """
    runs = tables["runs"]
    columns = runs.collect_schema().names()
    if method is not None and "method" in columns:
        methods = _values(runs, "method")
        if method in methods:
            runs = runs.filter(pl.col("method") == method)
        elif len(methods) > 1:
            raise NotApplicable(f"no run has method {method!r}; the runs have {methods}")
    if budget is not None and has_budget(tables):
        budgets = _values(runs, "budget")
        if budget not in budgets:
            raise NotApplicable(f"no run has budget {budget!r}; the runs have {budgets}")
        runs = runs.filter(pl.col("budget") == budget)
    return runs


def single_method(tables: Mapping[str, Any], wanted: str = "prompting") -> str | None:
    """The method a one-method analysis reads (threshold sensitivity: the compacting policy's scores): ``wanted``
    when the runs have it; None (every run) when they do not and carry no budget, as an imported log whose methods
    are its own (a labelled benchmark's summarisation systems, a coding agent); otherwise :class:`NotApplicable`
    naming the methods there are.

    Parameters
    ----------
    tables : mapping of str to polars.DataFrame
        The loaded tables.
    wanted : str, default "prompting"
        The method asked for.

    Returns
    -------
    str or None
        The method to read, or None for every run.
    """
    runs = tables["runs"]
    if "method" not in runs.collect_schema().names():
        return None
    methods = _values(runs, "method")
    if wanted in methods:
        return wanted
    if not has_budget(tables):
        return None
    raise NotApplicable(f"no run has method {wanted!r}; the runs have {methods}")


def _values(runs: pl.DataFrame | pl.LazyFrame, column: str) -> list[Any]:
    """The distinct non-null values of a run column, sorted (one streaming pass when the runs are lazy)."""
    values = runs.lazy().select(pl.col(column).unique()).collect(engine="streaming").to_series()
    return sorted(v for v in values.to_list() if v is not None)


def has_budget(tables: Mapping[str, Any]) -> bool:
    """Whether the runs carry a context budget (the testbed does; imported logs usually do not).

    Parameters
    ----------
    tables : mapping of str to polars.DataFrame
        The loaded tables.

    Returns
    -------
    bool
        Whether ``runs`` has a non-null ``budget``.
    """
    runs = tables["runs"]
    if "budget" not in runs.collect_schema().names():
        return False
    nulls, n = runs.lazy().select(pl.col("budget").null_count(), pl.len()).collect(engine="streaming").row(0)
    return nulls < n


def entry_clusters(tables: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """Each entry's task scenario (``entry_id``, ``scenario_id``): the clusters every entry-level interval resamples.

    ``scenario_id`` is null for an entry whose run has none. Lazy entries (:func:`load` with
    ``columns``) are read for these two columns only.

    Parameters
    ----------
    tables : dict of str to polars.DataFrame
        The loaded tables (``entries`` and ``runs``).

    Returns
    -------
    polars.DataFrame
        ``entry_id``, ``scenario_id``.
    """
    entries, runs = tables["entries"], tables["runs"]
    clusters = (entries.select("entry_id", "run_id")
                .join((runs.lazy() if isinstance(entries, pl.LazyFrame) else runs).select("run_id", "scenario_id"),
                      on="run_id")
                .select("entry_id", "scenario_id"))
    return clusters.collect(engine="streaming") if isinstance(clusters, pl.LazyFrame) else clusters


__all__ = ["entry_clusters", "has_budget", "select_runs", "single_method"]
