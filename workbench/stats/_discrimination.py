"""How well a judge's scores separate labeled entries (SJC Appendix G, Table 12).

* :func:`auroc` -- equal to ``sklearn.metrics.roc_auc_score`` (ties count one half).
* :func:`precision_recall_at` -- precision of "supported" among entries scored at or
  above tau, and recall of supported entries (SJC: 96.9% and 64.2% for Jev at 0.5).
* :func:`judge_table` -- the Table 12 frame: per judge and label field, AUROC with a 95%
  scenario-bootstrap interval, n and positives, plus precision and recall at tau.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt
import polars as pl

from workbench.stats._bootstrap import DEFAULT_N_BOOT, INTERVAL_SCHEMA, Seed, auroc_ci

#: label values that count as the positive class, per field
POSITIVE: dict[str, str] = {"support": "supported", "correct": "correct"}
#: label values that count as the negative class, per field (``unsure`` and a skip are neither: left out, counted)
NEGATIVE: dict[str, str] = {"support": "unsupported", "correct": "incorrect"}
#: label values that are no class: left out of an AUROC, precision and recall, and counted in ``n_skipped``
NOT_A_CLASS = ("unsure",)


def gold_classes(values: pl.Series, field: str) -> tuple[np.ndarray, np.ndarray]:
    """Gold label values of ``field`` as binary classes: (1.0 for the positive value, 0.0 for the negative, NaN for
    ``unsure`` or a skip) and the mask of the rows left out. A value outside the field's vocabulary is a
    ``ValueError`` naming it.

    Parameters
    ----------
    values : polars.Series
        The gold labels' values.
    field : str
        The labelled field (``support``, ``correct``).

    Returns
    -------
    tuple of numpy.ndarray
        The classes (float, NaN where left out) and the left-out mask.
    """
    if field not in POSITIVE:
        raise ValueError(f"field: expected one of {sorted(POSITIVE)}, got {field!r}")
    known = {POSITIVE[field]: 1.0, NEGATIVE[field]: 0.0}
    out = np.full(len(values), np.nan)
    for i, v in enumerate(values.to_list()):
        if v in known:
            out[i] = known[v]
        elif v is not None and v not in NOT_A_CLASS:
            raise ValueError(f"gold {field} labels: expected {sorted([*known, *NOT_A_CLASS])} or null (skipped), "
                             f"got {v!r}")
    return out, np.isnan(out)


def auroc(scores: npt.ArrayLike, labels: npt.ArrayLike) -> float:
    """Mann-Whitney AUROC with ties counting one half (what sklearn's roc_auc_score computes).

    Parameters
    ----------
    scores : array-like
        Scores, higher meaning more likely positive.
    labels : array-like
        Binary labels aligned with ``scores``: booleans or 0/1 (anything else is a ``ValueError`` naming it). A row
        with a missing label (None, NaN) or score (NaN) is left out.

    Returns
    -------
    float
        The AUROC.

    Raises
    ------
    ValueError
        When the labels hold one class only.

    References
    ----------
    Hanley, J. A. and McNeil, B. J. (1982). Radiology 143(1), 29-36.
    """
    from workbench.stats._bootstrap import binary_labels, complete_rows

    (s, y_in), _ = complete_rows(np.asarray(scores, dtype=np.float64), binary_labels(labels, "auroc"),
                                 names=("score", "label"))
    y = y_in.astype(bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError("auroc: labels hold one class only")
    from scipy.stats import rankdata

    ranks = rankdata(s)  # average ranks for ties
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def precision_recall_at(scores: npt.ArrayLike, labels: npt.ArrayLike, tau: float = 0.5) -> tuple[float, float]:
    """(precision of score >= tau for the positive label, recall of positives at tau); NaN when undefined.

    Parameters
    ----------
    scores : array-like
        Scores.
    labels : array-like
        Binary labels aligned with ``scores`` (booleans or 0/1; a missing label or score leaves its row out).
    tau : float, default 0.5
        Scores at or above tau are called positive.

    Returns
    -------
    tuple of float
        ``(precision, recall)``, NaN where undefined.
    """
    from workbench.stats._bootstrap import binary_labels, complete_rows

    (s, y_in), _ = complete_rows(np.asarray(scores, dtype=np.float64), binary_labels(labels, "precision_recall_at"),
                                 names=("score", "label"))
    y = y_in.astype(bool)
    called = s >= tau
    precision = float(y[called].mean()) if called.any() else float("nan")
    recall = float(called[y].mean()) if y.any() else float("nan")
    return precision, recall


def judge_table(
    scores: pl.DataFrame,
    gold: pl.DataFrame,
    clusters: Mapping[str, str] | pl.DataFrame,
    *,
    fields: Sequence[str] = ("support", "correct"),
    tau: float = 0.5,
    n_boot: int = DEFAULT_N_BOOT,
    seed: Seed = 0,
    level: float = 0.95,
    method: str = "logit-t",
) -> pl.DataFrame:
    """SJC Table 12: AUROC of each judge against gold labels, scenario-bootstrap CIs.

    ``scores``: ``entry_id``, ``judge``, ``score`` (null = no usable answer, left out and
    counted in ``n_null``); ``gold``: ``item_id``, ``field``, ``value`` (an ``unsure`` or null value is no class:
    left out and counted in ``n_skipped``, as :func:`~workbench.stats.labeled_scores` and the entry AUROC leave it
    out; a value outside the field's vocabulary is a ``ValueError``); ``clusters``: entry
    id -> scenario (a mapping, or a frame with ``entry_id`` and ``scenario_id``).

    One row per (judge, field): the interval columns (``estimate`` is the AUROC, ``n`` the
    entries with a usable score and a gold label), ``n_pos``, ``n_null``, ``n_degenerate``,
    ``n_clusters``, and ``precision`` / ``recall`` at ``tau``. With one class only the AUROC
    and its interval are null; a field without labels gets no AUROC, precision or recall. ``reason`` says why a
    row has no AUROC.

    Parameters
    ----------
    scores : polars.DataFrame
        ``entry_id``, ``judge``, ``score``.
    gold : polars.DataFrame
        ``item_id``, ``field``, ``value``.
    clusters : mapping of str to str or polars.DataFrame
        Entry id to scenario.
    fields : sequence of str, default ("support", "correct")
        The labelled fields to report.
    tau : float, default 0.5
        The threshold of precision and recall.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the intervals.
    method : {"logit-t", "t", "percentile", "bca"}, default "logit-t"
        The interval rule of :func:`workbench.stats.interval` (:func:`workbench.stats.auroc_ci`'s default).

    Returns
    -------
    polars.DataFrame
        One row per (judge, field) with the columns above.

    References
    ----------
    SJC Table 12 and Appendix G.
    """
    if isinstance(clusters, pl.DataFrame):
        cl = clusters.select(pl.col("entry_id"), pl.col("scenario_id").cast(pl.Utf8))
    else:
        cl = pl.DataFrame({"entry_id": list(clusters), "scenario_id": [str(v) for v in clusters.values()]})
    sc = scores.filter(pl.col("repeat").fill_null(0) == 0) if "repeat" in scores.columns else scores
    rows = []
    for judge in sorted(sc.get_column("judge").unique().to_list()):
        js = sc.filter(pl.col("judge") == judge).select("entry_id", "score")
        for field in fields:
            g = gold.filter(pl.col("field") == field).select(pl.col("item_id").alias("entry_id"), "value")
            d = js.join(g, on="entry_id").join(cl, on="entry_id", how="left")
            n_null = d.get_column("score").null_count()
            d = d.drop_nulls("score")
            classes, left_out = gold_classes(d.get_column("value"), field)
            d, y = d.filter(pl.Series(~left_out)), classes[~left_out].astype(bool)
            s = d.get_column("score").to_numpy()
            row: dict[str, object] = {"judge": judge, "field": field, "estimate": None, "ci_low": None,
                                      "ci_high": None, "n": d.height, "n_boot": n_boot, "level": level,
                                      "method": method, "n_pos": int(y.sum()), "n_null": n_null,
                                      "n_skipped": int(left_out.sum()), "reason": None}
            if not d.height:  # a field nobody labelled (the tour labels support only): skipped, with why
                row.update(reason=f"no {field} labels of entries this judge scored")
                rows.append(row)
                continue
            try:
                r = auroc_ci(s, y, d.get_column("scenario_id").fill_null("?").to_numpy(), n_boot=n_boot,
                             seed=seed, level=level, method=method)
                row.update(estimate=r.estimate, ci_low=r.ci_low, ci_high=r.ci_high, n_degenerate=r.n_degenerate,
                           n_clusters=r.n_clusters, n_missing=r.n_missing, reason=r.reason)
            except ValueError as err:
                row.update(n_degenerate=None, n_clusters=None, reason=str(err).split(": ", 1)[-1])
            p, rc = precision_recall_at(s, y, tau)
            row.update(tau=tau, precision=p, recall=rc)
            rows.append(row)
    return pl.DataFrame(rows, schema={"judge": pl.Utf8, "field": pl.Utf8, **INTERVAL_SCHEMA, "n_pos": pl.Int64,
                                      "n_null": pl.Int64, "n_skipped": pl.Int64, "n_degenerate": pl.Int64, "n_clusters": pl.Int64,
                                      "tau": pl.Float64, "precision": pl.Float64, "recall": pl.Float64,
                                      "reason": pl.Utf8})


__all__ = ["auroc", "judge_table", "precision_recall_at"]
