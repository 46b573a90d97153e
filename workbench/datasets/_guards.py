"""What an analysis needs of the data: :func:`need` and :func:`need_outcomes` raise :class:`NotApplicable` with the
reason, which ``workbench figures`` and papermill report as a skip, not a failure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from workbench.tables._frames import height


class NotApplicable(ValueError):
    """Raised by a notebook whose analysis needs what the data does not have (a ``success`` column, budgets,
    methods): ``workbench figures`` reports it as skipped with this reason, not as a failure."""


def need(tables: Mapping[str, Any], *names: str, what: str = "this analysis") -> None:
    """The one guard: raise :class:`NotApplicable` (a notebook's analysis is skipped, with this reason) unless every
    named table is present and not empty.

    Parameters
    ----------
    tables : mapping of str to polars.DataFrame
        The loaded tables.
    *names : str
        The tables the analysis needs.
    what : str, default "this analysis"
        The analysis, for the message.

    Raises
    ------
    NotApplicable
        Naming the missing or empty tables.
    """
    missing = [n for n in names if n not in tables or height(tables[n]) == 0]
    if missing:
        raise NotApplicable(f"{what} needs the table(s) {missing}, which this data directory does not have")


def need_outcomes(runs: pl.DataFrame | pl.LazyFrame, what: str = "this analysis") -> None:
    """Raise :class:`NotApplicable` when no run has an outcome (``success``), as in imported coding-agent
    sessions: Acc, Pass^k and every comparison of methods need one. Lazy runs are counted by one query.

    Parameters
    ----------
    runs : polars.DataFrame or polars.LazyFrame
        The runs table.
    what : str, default "this analysis"
        The analysis, for the message.

    Raises
    ------
    NotApplicable
        When no run has a ``success`` value.
    """
    n = height(runs)
    if "success" not in runs.collect_schema().names() or _null_counts(runs, ["success"])["success"] == n:
        raise NotApplicable(f"{what} needs run outcomes (a success column); these {n} runs have none")

def _null_counts(runs: pl.DataFrame | pl.LazyFrame, columns: Sequence[str]) -> dict[str, int]:
    """Each column's null count in the runs, by one query (a streaming pass when they are lazy)."""
    if not columns:
        return {}
    return runs.lazy().select(pl.col(c).null_count() for c in columns).collect(engine="streaming").row(0, named=True)


__all__ = ["need", "need_outcomes", "NotApplicable"]
