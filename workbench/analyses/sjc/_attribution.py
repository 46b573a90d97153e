"""Failure attribution tables (SJC Section 3.2, Appendix D, Table 11).

Input: the ``attributions`` table (one row per failed run: the failed check, the action
that caused it, the summary entry it carried out if any, the pattern RC / ID / CS / other /
unrelated, and the support of the executed entry) and the ``runs`` table for scenarios.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from workbench.tables._vocabulary import PATTERNS, SUPPORT_VALUES


def failures_by_scenario(attributions: pl.DataFrame, runs: pl.DataFrame,
                         exclude: Mapping[str, str] | None = None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """SJC Table 11: failed runs per scenario by pattern and by the support of the executed entry, with a total row.

    ``exclude`` maps scenario ids to the stated reason they are left out (SJC excludes one
    whose reference solution is inconsistent with its environment data); the second frame
    lists them with their failed-run counts and reasons.

    Parameters
    ----------
    attributions : polars.DataFrame
        One row per failed run with its pattern and the executed entry's support.
    runs : polars.DataFrame
        The runs table (``run_id``, ``scenario_id``).
    exclude : mapping of str to str, optional
        Scenario id to the reason it is left out.

    Returns
    -------
    tuple of polars.DataFrame
        The table (with a total row) and the excluded scenarios.

    References
    ----------
    SJC Table 11.
    """
    a = attributions.join(runs.select("run_id", "scenario_id"), on="run_id", how="left")
    exclude = dict(exclude or {})
    excluded = a.filter(pl.col("scenario_id").is_in(list(exclude))).group_by("scenario_id", maintain_order=True).agg(
        pl.len().alias("failed_runs")).with_columns(
        pl.col("scenario_id").replace_strict(exclude, return_dtype=pl.Utf8).alias("reason")).sort("scenario_id")
    a = a.filter(~pl.col("scenario_id").is_in(list(exclude)))
    cols = [(pl.col("pattern") == p).sum().cast(pl.Int64).alias(p) for p in PATTERNS]
    cols += [(pl.col("support") == s).sum().cast(pl.Int64).alias(s) for s in SUPPORT_VALUES]
    per = a.group_by("scenario_id", maintain_order=True).agg(pl.len().cast(pl.Int64).alias("failed_runs"), *cols).sort("scenario_id")
    total = per.select(pl.lit("Total").alias("scenario_id"), *[pl.col(c).sum() for c in per.columns[1:]])
    return pl.concat([per, total]), excluded


def followed_entry_share(attributions: pl.DataFrame) -> dict[str, float]:
    """Of failed runs, the share whose causing action followed a summary entry, and its support mix.

    Parameters
    ----------
    attributions : polars.DataFrame
        One row per failed run.

    Returns
    -------
    dict of str to float
        ``failed_runs``, ``follows_entry`` (the share whose action followed an entry) and ``entry_{support}``,
        the count of those entries with each support value.

    References
    ----------
    SJC section 3.2 and Appendix D.
    """
    n = attributions.height
    follows = attributions.filter(pl.col("entry_id").is_not_null())
    out = {"failed_runs": float(n), "follows_entry": follows.height / n if n else float("nan")}
    for s in SUPPORT_VALUES:
        out[f"entry_{s}"] = float((follows.get_column("support") == s).sum())
    return out


__all__ = ["failures_by_scenario", "followed_entry_share"]
