"""Agreement between annotation rounds or annotators: Cohen's kappa and percent agreement.

``cohen_kappa`` equals ``sklearn.metrics.cohen_kappa_score`` (unweighted); both measures
get scenario-bootstrap intervals from the one engine (SJC Appendix G reports kappa 0.95
on support and 0.88 on correctness between two rounds; Section 3.2 kappa on attributions).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt
import polars as pl

from workbench.bootstrap import INTERVAL_SCHEMA, Seed, bootstrap
from workbench.labels import latest_labels


def cohen_kappa(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Cohen's kappa of two label sequences over the union of their categories."""
    x, y = np.asarray(a).astype(str), np.asarray(b).astype(str)
    if x.shape != y.shape:
        raise ValueError(f"cohen_kappa: lengths differ ({len(x)} != {len(y)})")
    if len(x) == 0:
        raise ValueError("cohen_kappa: no items")
    cats, inv = np.unique(np.concatenate([x, y]), return_inverse=True)
    xi, yi = inv[: len(x)], inv[len(x):]
    k = len(cats)
    conf = np.zeros((k, k))
    np.add.at(conf, (xi, yi), 1.0)
    n = conf.sum()
    po = np.trace(conf) / n
    pe = float((conf.sum(axis=1) @ conf.sum(axis=0)) / n**2)
    if pe == 1.0:
        return float("nan")  # one shared category: undefined, as sklearn's default replace_undefined_by=nan
    return float((po - pe) / (1.0 - pe))


def percent_agreement(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    x, y = np.asarray(a).astype(str), np.asarray(b).astype(str)
    if len(x) == 0:
        raise ValueError("percent_agreement: no items")
    return float(np.mean(x == y))


def agreement_table(
    labels: pl.DataFrame,
    clusters: Mapping[str, str] | None = None,
    *,
    by: str = "round",
    n_boot: int = 2_000,
    seed: Seed = 0,
    level: float = 0.95,
) -> pl.DataFrame:
    """Kappa and percent agreement per field for every pair of rounds (or annotators).

    ``labels`` in the labels-table schema; the latest label per (item, annotator, round,
    field) counts. Items labeled by both sides of a pair are compared. One row per (field,
    pair, ``statistic``) where ``statistic`` is ``kappa`` (Cohen's, equal to
    ``statsmodels.stats.inter_rater.cohens_kappa``) or ``agreement`` (share of equal labels),
    with ``disagreements`` and the interval columns; intervals resample ``clusters`` (item ->
    scenario; an item without one is its own cluster).
    """
    latest = latest_labels(labels)
    key = pl.col(by).cast(pl.Utf8)
    sides = sorted(latest.select(key).unique().to_series().to_list())
    rows = []
    for field in sorted(latest.get_column("field").unique().to_list()):
        f = latest.filter(pl.col("field") == field).with_columns(key.alias("_side"))
        for i, s1 in enumerate(sides):
            for s2 in sides[i + 1:]:
                a = f.filter(pl.col("_side") == s1).group_by("item_id", maintain_order=True).agg(pl.col("value").last())
                b = f.filter(pl.col("_side") == s2).group_by("item_id", maintain_order=True).agg(pl.col("value").last())
                pair = a.join(b, on="item_id", suffix="_b").sort("item_id")
                if pair.height == 0:
                    continue
                va, vb = pair.get_column("value").to_numpy(), pair.get_column("value_b").to_numpy()
                cl = np.array([(clusters or {}).get(i, i) for i in pair.get_column("item_id").to_list()])
                for statistic, metric in (("kappa", cohen_kappa), ("agreement", percent_agreement)):
                    res = bootstrap(metric, va, vb, clusters=cl, n_boot=n_boot, seed=seed, level=level)
                    rows.append({"field": field, "a": s1, "b": s2, "statistic": statistic,
                                 "disagreements": int((va != vb).sum()), **res.row()})
    return pl.DataFrame(rows, schema={"field": pl.Utf8, "a": pl.Utf8, "b": pl.Utf8, "statistic": pl.Utf8,
                                      "disagreements": pl.Int64, **INTERVAL_SCHEMA})


def disagreements(labels: pl.DataFrame, *, by: str = "round") -> pl.DataFrame:
    """Items whose latest labels differ between sides, one row per (item, field) with every value."""
    latest = latest_labels(labels)
    grouped = latest.group_by("item_id", "field", maintain_order=True).agg(
        pl.col("value").n_unique().alias("_k"),
        pl.concat_str([pl.col(by).cast(pl.Utf8), pl.lit("="), pl.col("value")]).alias("values"))
    return grouped.filter(pl.col("_k") > 1).drop("_k").sort("item_id", "field")
