"""Is method A really better than method B on the same tasks, or is that noise? Paired inference.

Beyond the papers (SJC and FOCUS report point estimates per method). Two methods run on the
same tasks and replicates are compared pair by pair:

* :func:`paired_difference` -- the mean difference a - b of ``acc`` (success of each paired
  run), ``pass_hat_k`` (per task, from its replicates) or ``tokens`` (cumulative agent and
  compressor tokens of each paired run), with a scenario-cluster interval from the one engine
  (the cluster jackknife t interval by default: a scenario's tasks share what makes them hard),
  a p-value from the same t statistic, and for ``acc`` two cross-checks that also count the
  scenarios: a statsmodels GEE logistic model of success on method (scenario as the group,
  exchangeable working correlation, Mancl-DeRouen bias-reduced sandwich, t with G - 1 df) and
  Durkalski et al.'s (2003) clustered McNemar test on the paired outcomes. The plain McNemar
  test and a GEE with the usual sandwich treat pairs as independent or trust 12 clusters too
  much: with scenario effects and no difference they reject about 30% and 10% of the time
  (measured in the tests), the two here about 5%;
* :func:`probability_of_improvement` and :func:`performance_profile` -- rliable's two views for
  comparing methods across tasks, with intervals that resample scenarios;
* :func:`compare_to_baseline` -- every method against one baseline per group, the p-values
  adjusted together with Holm (``statsmodels.stats.multitest.multipletests``), and simultaneous
  intervals for the whole family (Bonferroni: each at level ``1 - (1 - level) / m``), which
  exclude 0 exactly when the Bonferroni-adjusted p is below ``1 - level``. Holm rejects
  whenever Bonferroni does and sometimes more, so a simultaneous interval that excludes 0
  always goes with Holm p below ``1 - level``; the converse can fail by Holm's step-down.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from math import comb
from typing import Any

import numpy as np
import polars as pl
from scipy import stats

from workbench.stats._bootstrap import (DEFAULT_N_BOOT, INTERVAL_SCHEMA, Seed, as_generator, bootstrap, cr2_p_value,
                                 jackknife_se_of)

METRICS = ("acc", "pass_hat_k", "tokens")
#: Which way is better for each metric: more successes, fewer tokens.
HIGHER_IS_BETTER = {"acc": True, "pass_hat_k": True, "tokens": False}


def _pairs(runs: pl.DataFrame, metric: str, a: str, b: str, k: int,
           roles: Sequence[str] = ("agent", "compressor")) -> pl.DataFrame:
    """One row per pair (``task_id``, ``replicate``; per task for pass_hat_k): ``scenario_id``, ``x_a``, ``x_b``."""
    need = {"method", "task_id", "success"} | ({"replicate"} if metric != "pass_hat_k" else set())
    missing = need - set(runs.columns)
    if missing:
        raise ValueError(f"paired_difference: runs has no column(s) {sorted(missing)}")
    r = _with_scenarios(runs)
    run_key = ["task_id", "replicate"] if "replicate" in r.columns else ["task_id"]
    if metric == "pass_hat_k" and run_key == ["task_id"]:
        run_key = []  # a task's runs are its trials: nothing to be unique
    for m in (a, b):
        if run_key:
            _unique_pairs(r.filter(pl.col("method") == m), run_key, m)
    if metric in ("acc", "tokens"):
        try:
            r = _per_task_outcomes(r, metric, roles)
        except ValueError as err:
            raise ValueError(f"paired_difference: {err}") from None
        key = ["task_id", "replicate"]
    elif metric == "pass_hat_k":
        per = r.group_by("method", "task_id", "scenario_id", maintain_order=True).agg(
            pl.len().alias("_n"), pl.col("success").cast(pl.Int64).sum().alias("_c"))
        short = per.filter(pl.col("_n") < k)
        if short.height:
            raise ValueError(f"paired_difference: task {short['task_id'][0]!r} has fewer than k={k} runs")
        r = per.with_columns(pl.struct("_n", "_c").map_elements(
            lambda v: comb(v["_c"], k) / comb(v["_n"], k), return_dtype=pl.Float64).alias("_x"))
        key = ["task_id"]
    else:
        raise ValueError(f"metric: expected one of {list(METRICS)}, got {metric!r}")
    left = r.filter(pl.col("method") == a).select(*key, "scenario_id", pl.col("_x").alias("x_a"))
    right = r.filter(pl.col("method") == b).select(*key, pl.col("_x").alias("x_b"))
    return left.join(right, on=key, how="inner").sort(key)


_NOT_A_DIMENSION = {"_x", "_n", "_c", "run_id", "success", "steps", "scenario_id", "method"}


def _unique_pairs(rows: pl.DataFrame, key: list[str], method: str, who: str = "paired_difference") -> None:
    """Refuse a method with two rows for one pairing key: pairing them would silently cross another dimension
    (two models, two judges); the message (from ``who``) names the columns that tell the duplicates apart."""
    dup = rows.filter(pl.struct(key).is_duplicated())
    if not dup.height:
        return
    first = dup.row(0, named=True)
    same = dup.filter(pl.all_horizontal([pl.col(k) == first[k] for k in key]))
    differ = [c for c in same.columns if c not in _NOT_A_DIMENSION and c not in key
              and not same.schema[c].is_float() and same.get_column(c).n_unique() > 1]
    where = ", ".join(f"{k} {first[k]!r}" for k in key)
    hint = (f"they differ in {differ}: pass by=({', '.join(repr(c) for c in differ)},) to compare within each, "
            "or filter the runs first") if differ else "no other column tells them apart: drop the duplicates first"
    raise ValueError(f"{who}: method {method!r} has {same.height} runs for {where}; {hint}")


#: the largest scenario (outcomes of both methods) the GEE cross-check is fitted on: statsmodels' bias-reduced
#: sandwich solves with an n x n matrix per cluster (5,000: 200 MB; at 100x the testbed a scenario holds 12,000,
#: 1.1 GB, and the fit ran for minutes)
GEE_MAX_CLUSTER = 5_000


def _gee_p(pairs: pl.DataFrame) -> tuple[float, float, str | None]:
    """(coefficient of method a, its p-value, why not) in a GEE logistic model of success, clustered by scenario.

    Scenario is the group (exchangeable working correlation), the standard error the bias-reduced
    (Mancl-DeRouen) sandwich, and the p-value from t with G - 1 degrees of freedom: with 12
    scenarios the usual sandwich and the normal rejects a true null about twice as often as it should.
    NaN with a reason when every outcome is equal, one method's outcomes are all equal (separation:
    the coefficient is infinite), or there are fewer than two scenarios.
    """
    import warnings

    import statsmodels.api as sm

    a, b = pairs["x_a"].to_numpy(), pairs["x_b"].to_numpy()
    y = np.concatenate([a, b])
    x = sm.add_constant(np.concatenate([np.ones(pairs.height), np.zeros(pairs.height)]))
    groups = np.unique(np.concatenate([pairs["scenario_id"].to_numpy()] * 2), return_inverse=True)[1]
    g = int(groups.max()) + 1 if groups.size else 0
    if g < 2:
        return float("nan"), float("nan"), "GEE: fewer than two scenarios"
    if y.min() == y.max():
        return float("nan"), float("nan"), "GEE: every outcome is the same"
    if a.min() == a.max() or b.min() == b.max():
        return float("nan"), float("nan"), "GEE: one method's outcomes are all the same (separation)"
    largest = int(np.bincount(groups).max())
    if largest > GEE_MAX_CLUSTER:
        return float("nan"), float("nan"), (f"GEE: a scenario of {largest:,} outcomes (statsmodels' bias-reduced "
                                            f"covariance holds a square matrix of a cluster's size; at most "
                                            f"{GEE_MAX_CLUSTER:,})")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = sm.GEE(y, x, groups=groups, family=sm.families.Binomial(),
                     cov_struct=sm.cov_struct.Exchangeable()).fit(cov_type="bias_reduced")
    coef, se = float(fit.params[1]), float(fit.bse[1])
    if not (math.isfinite(coef) and math.isfinite(se)) or se == 0:
        return float("nan"), float("nan"), "GEE: the fit did not converge to a finite coefficient"
    return coef, float(2 * stats.t.sf(abs(coef / se), g - 1)), None


def clustered_mcnemar_p(x_a: np.ndarray, x_b: np.ndarray, clusters: np.ndarray) -> float:
    """Durkalski, Palesch, Lipsitz and Rust's (2003) McNemar test for clustered paired binary outcomes.

    With ``d_k`` the discordant pairs of cluster k that favour a minus those that favour b,
    ``X^2 = (sum d_k)^2 / sum d_k^2`` is chi-squared with one degree of freedom under equal
    marginals; with one pair a cluster it is McNemar's (uncorrected) statistic. 1.0 without
    discordant pairs.

    Parameters
    ----------
    x_a, x_b : numpy.ndarray
        Paired binary outcomes of methods a and b.
    clusters : numpy.ndarray
        The cluster (task scenario) of each pair.

    Returns
    -------
    float
        The two-sided p value (chi-squared, one degree of freedom).

    References
    ----------
    Durkalski, V. L., Palesch, Y. Y., Lipsitz, S. R. and Rust, P. F. (2003). Analysis of clustered matched-pair
    data. Statistics in Medicine 22(15), 2417-2428.
    """
    from workbench.stats._bootstrap import binary_labels

    a_in, b_in = binary_labels(x_a, "clustered_mcnemar_p"), binary_labels(x_b, "clustered_mcnemar_p")
    if np.isnan(a_in).any() or np.isnan(b_in).any():
        raise ValueError("clustered_mcnemar_p: a missing outcome; pass only the pairs both methods have")
    a, b = a_in.astype(bool), b_in.astype(bool)
    labels, inverse = np.unique(np.asarray(clusters), return_inverse=True)
    d = np.bincount(inverse, weights=(a & ~b).astype(float), minlength=len(labels)) - \
        np.bincount(inverse, weights=(~a & b).astype(float), minlength=len(labels))
    den = float(np.sum(d**2))
    if den == 0:
        return 1.0
    return float(stats.chi2.sf(float(np.sum(d)) ** 2 / den, 1))


def paired_difference(runs: pl.DataFrame, metric: str = "acc", *, a: str, b: str,
                      by: Sequence[str] = ("budget",), k: int = 1, n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0,
                      level: float = 0.95, method: str = "cr2", cross_checks: bool = True) -> pl.DataFrame:
    """``a`` minus ``b`` on ``metric`` over the pairs they share, per group of ``by`` columns.

    Columns: the ``by`` columns, ``metric``, ``a``, ``b``, the interval columns (``estimate`` is
    the mean paired difference, ``n`` the pairs; clusters are scenarios), ``n_clusters``,
    ``p_value`` (two-sided) and its ``df``: by default (``method="cr2"``) Bell and McCaffrey's bias-reduced
    variance with their degrees of freedom (:func:`workbench.stats.cr2_mean`), which
    ``benchmarks/bench_interval_coverage.py`` chose (coverage 94.8-96.2% at 8, 12 and 30 unequal scenarios on
    two generators, null rejection 2.9-5.9% at 5%; the jackknife t it replaced: 92.9-95.0% and 4.4-6.4%);
    with ``method="t"`` the delete-one-scenario jackknife (CR3-type, :func:`jackknife_se`) t with clusters - 1
    degrees of freedom, for ``acc`` ``gee_coef`` / ``gee_p`` and ``mcnemar_p`` (both clustered by scenario; see the
    module docstring; ``cross_checks=False`` skips them), and ``reason``: why a value is missing (fewer than
    two scenarios: an estimate without interval or p; a GEE that cannot be fitted), else null. A group where
    the methods share no pair is left out; a pair with a missing outcome is left out of its group and counted in
    ``n_missing`` (a group whose every pair misses one is a row with that reason). Two runs of one method with the same pairing key (another
    dimension such as a model) are an error naming the column that tells them apart.

    Parameters
    ----------
    runs : polars.DataFrame
        The runs table.
    metric : str, default "acc"
        The run metric compared.
    a, b : str
        The two methods; the estimate is ``a`` minus ``b``.
    by : sequence of str, default ("budget",)
        Columns that define the groups compared separately.
    k : int, default 1
        The k of a Pass^k metric.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples of a percentile or BCa interval.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the interval.
    method : {"cr2", "t", "percentile", "bca"}, default "cr2"
        The interval rule (:func:`workbench.stats.cr2_mean`, or :func:`workbench.stats.interval`'s).
    cross_checks : bool, default True
        Also fit the clustered GEE and the clustered McNemar test (``acc`` only).

    Returns
    -------
    polars.DataFrame
        One row per group, with the columns above.

    References
    ----------
    Cameron, A. C. and Miller, D. L. (2015). A practitioner's guide to cluster-robust inference. J. Human
    Resources 50(2), 317-372; Liang, K.-Y. and Zeger, S. L. (1986). Longitudinal data analysis using
    generalized linear models. Biometrika 73(1), 13-22 (GEE).
    """
    keys = [c for c in by if c in runs.columns]
    both = runs.filter(pl.col("method").is_in([a, b])) if "method" in runs.columns else runs  # (only theirs split)
    groups = both.partition_by(keys, as_dict=True, maintain_order=True) if keys else {(): both}
    rows = []
    for group_key, g in groups.items():
        shared = _pairs(g, metric, a, b, k)
        # a pair with a missing outcome (null or NaN) is left out and counted in n_missing
        pairs = shared.filter(*(pl.col(c).is_not_null() & pl.col(c).cast(pl.Float64).is_not_nan()
                                for c in ("x_a", "x_b")))
        missing = shared.height - pairs.height
        row: dict[str, object] = dict(zip(keys, group_key, strict=True))
        if not pairs.height:
            if shared.height:  # shared pairs, every one missing an outcome: said, not an opaque error
                rows.append({**row, "metric": metric, "a": a, "b": b, "n": 0, "n_missing": missing,
                             "n_boot": n_boot, "level": level, "method": method,
                             "reason": f"every one of the {missing} shared pairs misses an outcome"})
            continue
        diff = pairs["x_a"].to_numpy().astype(np.float64) - pairs["x_b"].to_numpy().astype(np.float64)
        clusters = pairs["scenario_id"].cast(pl.Utf8).to_numpy()
        res = bootstrap(np.mean, diff, clusters=clusters, n_boot=n_boot, seed=seed, level=level, method=method,
                        n_missing=missing)
        row.update(metric=metric, a=a, b=b, **res.row(), n_clusters=res.n_clusters)
        if method == "cr2":
            p_value, df, p_why = cr2_p_value(diff, clusters)
        else:
            (p_value, p_why), df = _t_p_value(diff, clusters, why=True), float(res.n_clusters - 1)
        row["p_value"], row["df"] = p_value, df if res.n_clusters >= 2 else None
        reasons = [r for r in (res.reason, p_why) if r]
        if metric == "acc" and cross_checks:
            row["gee_coef"], row["gee_p"], why = _gee_p(pairs)
            reasons += [why] if why else []
            row["mcnemar_p"] = clustered_mcnemar_p(pairs["x_a"].to_numpy(), pairs["x_b"].to_numpy(), clusters)
        else:
            row["gee_coef"] = row["gee_p"] = row["mcnemar_p"] = None
        row["reason"] = "; ".join(dict.fromkeys(reasons)) or None
        rows.append(row)
    schema: dict[str, pl.DataType] = {**{k_: runs.schema[k_] for k_ in keys}, "metric": pl.Utf8(), "a": pl.Utf8(),
                                      "b": pl.Utf8(), **INTERVAL_SCHEMA, "n_clusters": pl.Int64(),
                                      "p_value": pl.Float64(), "df": pl.Float64(), "gee_coef": pl.Float64(),
                                      "gee_p": pl.Float64(), "mcnemar_p": pl.Float64(), "reason": pl.Utf8()}
    return pl.DataFrame(rows, schema=schema)


def _t_p_value(diff: np.ndarray, clusters: np.ndarray, *, why: bool = False) -> Any:
    """Two-sided p of mean(diff) = 0 from the delete-one-cluster jackknife standard error (CR3-like, below) and t
    with G - 1 df; with ``why``, ``(p, the reason it is NaN)``."""
    labels = np.unique(clusters)
    g = len(labels)
    if g < 2:
        return (float("nan"), "p: fewer than two scenarios") if why else float("nan")
    se = jackknife_se(diff, clusters)
    est = float(diff.mean())
    if se == 0:  # every leave-one-out mean equal: no spread to test against (not a p of 0)
        p, reason = (float("nan"), "p: zero variance (every scenario's difference the same)") if est != 0 \
            else (1.0, None)
        return (p, reason) if why else p
    p = float(2 * stats.t.sf(abs(est / se), g - 1))
    return (p, None) if why else p


def jackknife_se(values: np.ndarray, clusters: np.ndarray) -> float:
    """The delete-one-cluster jackknife standard error of the mean of ``values``: with ``m_(g)`` the mean without
    cluster g's rows and G clusters, ``sqrt((G - 1) / G * sum_g (m_(g) - mean_g m_(g))^2)``.

    This is the standard error behind every ``"t"`` interval and the paired difference's p value. It is not the
    usual cluster-robust sandwich (CR1: Liang-Zeger with the factor G/(G-1) (N-1)/(N-K), statsmodels'
    ``cov_type="cluster"``), which it exceeds when clusters differ in size. It is the jackknife (CR3-type)
    estimator: the CR3 sandwich of an intercept-only regression, ``sum_g X_g'(I - H_gg)^-1 e_g e_g'(I - H_gg)^-1
    X_g / N^2`` (Bell and McCaffrey 2002), equals ``sum_g (m_(g) - m)^2`` around the full-sample mean m; this
    estimator centres at the mean of the delete-one estimates instead and scales by (G - 1) / G, the form of
    MacKinnon, Nielsen and Webb's (2023) CV3. Measured in ``benchmarks/bench_interval_coverage.py``.

    Parameters
    ----------
    values : numpy.ndarray
        One value per row (a paired difference).
    clusters : numpy.ndarray
        The cluster of each row.

    Returns
    -------
    float
        The standard error; NaN with fewer than two clusters.

    References
    ----------
    Bell, R. M. and McCaffrey, D. F. (2002). Bias reduction in standard errors for linear regression with
    multi-stage samples. Survey Methodology 28(2), 169-181; MacKinnon, J. G., Nielsen, M. O. and Webb, M. D.
    (2023). Cluster-robust inference: a guide to empirical practice. J. Econometrics 232(2), 272-299.
    """
    v = np.asarray(values, dtype=np.float64)
    labels, inverse = np.unique(np.asarray(clusters), return_inverse=True)
    g = len(labels)
    if g < 2:
        return float("nan")
    sums = np.bincount(inverse, weights=v, minlength=g)
    sizes = np.bincount(inverse, minlength=g).astype(np.float64)
    return jackknife_se_of((v.sum() - sums) / (len(v) - sizes))


def simultaneous_interval(estimate: float, ci_low: float, ci_high: float, n_clusters: int, level: float,
                          m: int, df: float | None = None) -> tuple[float, float]:
    """The cluster jackknife t interval at ``level`` widened to Bonferroni's ``1 - (1 - level) / m`` for ``m``
    comparisons: same standard error (recovered from the half-width), t quantile with clusters - 1 df.

    Parameters
    ----------
    estimate : float
        The comparison's estimate.
    ci_low, ci_high : float
        Its t interval at ``level``.
    n_clusters : int
        Scenarios behind it (the t has ``n_clusters - 1`` degrees of freedom).
    level : float
        The family's coverage.
    m : int
        Number of comparisons in the family.
    df : float, optional
        The interval's degrees of freedom (Bell-McCaffrey's for ``cr2``); ``n_clusters - 1`` by default.

    Returns
    -------
    tuple of float
        The widened ``(low, high)``; NaN bounds when the interval is undefined.
    """
    if m < 1 or n_clusters < 2 or not all(math.isfinite(v) for v in (estimate, ci_low, ci_high)):
        return float("nan"), float("nan")
    df = n_clusters - 1 if df is None or not math.isfinite(df) else df
    se = (ci_high - ci_low) / 2 / stats.t.ppf(0.5 + level / 2, df)
    half = se * stats.t.ppf(1 - (1 - level) / (2 * m), df)
    return estimate - half, estimate + half


def compare_to_baseline(runs: pl.DataFrame, baseline: str, metric: str = "acc", *,
                        methods: Sequence[str] | None = None, by: Sequence[str] = ("budget",), k: int = 1,
                        n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0, level: float = 0.95) -> pl.DataFrame:
    """Every method (or those named) minus ``baseline``, per group.

    The columns of :func:`paired_difference` (``ci_low``/``ci_high``: each comparison's own interval at
    ``level``), and for the family of all comparisons: ``p_holm`` (Holm-adjusted), ``p_bonferroni``, and
    ``sim_low``/``sim_high``, simultaneous intervals (Bonferroni) that agree with ``p_bonferroni``.

    Parameters
    ----------
    runs : polars.DataFrame
        The runs table (one row per run, with ``method``, ``task_id``, ``scenario_id`` and the metric).
    baseline : str
        The method every other method is compared with.
    metric : str, default "acc"
        The run metric (``acc``, ``pass_hat_k`` with ``k``, ``tokens``, ...).
    methods : sequence of str, optional
        The methods to compare; every other method by default.
    by : sequence of str, default ("budget",)
        Columns that define the groups compared separately.
    k : int, default 1
        The k of a Pass^k metric.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples, where an interval uses them.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of each comparison's interval.

    Returns
    -------
    polars.DataFrame
        One row per (group, method) with :func:`paired_difference`'s columns and the family's adjusted p values
        and simultaneous intervals.

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J. Statist. 6, 65-70.
    """
    from statsmodels.stats.multitest import multipletests

    present = runs.get_column("method").unique(maintain_order=True).to_list() if "method" in runs.columns else []
    if baseline not in present:
        raise ValueError(f"compare_to_baseline: no runs of the baseline {baseline!r} (methods: {present})")
    names = list(methods) if methods else [m for m in present if m != baseline]
    if not names:
        raise ValueError(f"compare_to_baseline: nothing to compare with the baseline {baseline!r}: the runs hold no "
                         f"other method (methods: {present})")
    parts = [paired_difference(runs, metric, a=m, b=baseline, by=by, k=k, n_boot=n_boot, seed=seed, level=level)
             for m in names]
    out = pl.concat([p for p in parts if p.height]) if any(p.height for p in parts) else parts[0]
    p = out.get_column("p_value").to_numpy()
    adjusted = np.full(len(p), np.nan)
    ok = np.isfinite(p)
    bonferroni = np.full(len(p), np.nan)
    if ok.any():
        adjusted[ok] = multipletests(p[ok], method="holm")[1]
        bonferroni[ok] = np.minimum(1.0, p[ok] * int(ok.sum()))
    m = int(ok.sum())
    bounds = [simultaneous_interval(r["estimate"], r["ci_low"], r["ci_high"], r["n_clusters"] or 0, level, m,
                                    r.get("df"))
              if r["estimate"] is not None and r["ci_low"] is not None and r["ci_high"] is not None
              else (float("nan"), float("nan")) for r in out.iter_rows(named=True)]
    return out.with_columns(pl.Series("p_holm", adjusted), pl.Series("p_bonferroni", bonferroni),
                            pl.Series("sim_low", [b[0] for b in bounds], dtype=pl.Float64),
                            pl.Series("sim_high", [b[1] for b in bounds], dtype=pl.Float64))


def verdict(row: dict[str, object], alpha: float = 0.05, p: str = "p_holm") -> str:
    """``better``, ``worse`` or ``no difference found`` for one row of :func:`compare_to_baseline`: from the
    adjusted test (``p``, Holm's by default) and the metric's direction (``HIGHER_IS_BETTER``: fewer
    tokens is better), never from an unadjusted interval.

    Parameters
    ----------
    row : dict
        One row of :func:`compare_to_baseline`.
    alpha : float, default 0.05
        The family-wise error rate.
    p : str, default "p_holm"
        The column of the adjusted p value.

    Returns
    -------
    str
        ``"better"``, ``"worse"`` or ``"no difference found"``.
    """
    value = row.get(p)
    estimate = row.get("estimate")
    if not isinstance(value, float) or not math.isfinite(value) or value >= alpha or not isinstance(estimate, float):
        return "no difference found"
    higher = HIGHER_IS_BETTER.get(str(row.get("metric")), True)
    return "better" if (estimate > 0) == higher else "worse"


def _with_scenarios(runs: pl.DataFrame) -> pl.DataFrame:
    """``runs`` with ``scenario_id`` filled from the task where missing (a task without one is its own cluster)."""
    return runs.with_columns(pl.col("scenario_id").fill_null(pl.col("task_id")) if "scenario_id" in runs.columns
                             else pl.col("task_id").alias("scenario_id"))


def _per_task_outcomes(runs: pl.DataFrame, metric: str, roles: Sequence[str] = ("agent", "compressor")) -> pl.DataFrame:
    """Each run's outcome ``_x`` (success as 0/1, or its tokens) with ``scenario_id`` filled from the task."""
    r = _with_scenarios(runs)
    if metric == "acc":
        return r.with_columns(pl.col("success").cast(pl.Float64).alias("_x"))
    if metric == "tokens":
        cols = [f"{role}_tokens" for role in roles if f"{role}_tokens" in r.columns]
        if not cols:
            raise ValueError("runs has no *_tokens columns for metric 'tokens'")
        return r.with_columns(pl.sum_horizontal([pl.col(c).fill_null(0) for c in cols]).cast(pl.Float64).alias("_x"))
    raise ValueError(f"metric: expected 'acc' or 'tokens', got {metric!r}")


def probability_of_improvement(runs: pl.DataFrame, a: str, b: str, metric: str = "acc", *,
                               by: Sequence[str] = ("budget",), n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0,
                               level: float = 0.95, method: str = "t") -> pl.DataFrame:
    """rliable's probability of improvement of ``a`` over ``b`` (Agarwal et al. 2021), per group of ``by``.

    Per task, over every pair of a run of ``a`` and a run of ``b`` on it, the share where ``a`` does
    better plus half the ties (``metric`` ``acc``: succeeds where b fails; ``tokens``: spends fewer),
    averaged over the tasks both ran. 0.5 is no difference. The interval resamples scenarios (with all
    their tasks; rliable resamples runs within tasks, which treats a scenario's tasks as independent),
    the cluster jackknife t by default, clipped to [0, 1]. Columns: the ``by`` columns, ``metric``, ``a``,
    ``b``, the interval columns (``n`` the tasks; ``reason`` for NaN bounds), ``n_clusters``. Runs that vary in
    another dimension within a group (two runs of a method for one task and replicate: two models, say) are
    refused, naming the column: pass it in ``by``.

    Parameters
    ----------
    runs : polars.DataFrame
        The runs table.
    a, b : str
        The two methods; the probability is that ``a`` does better than ``b``.
    metric : {"acc", "tokens"}, default "acc"
        The run metric compared.
    by : sequence of str, default ("budget",)
        Columns that define the groups compared separately.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples of a percentile or BCa interval.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the interval.
    method : {"t", "percentile", "bca"}, default "t"
        The interval rule of :func:`workbench.stats.interval`.

    Returns
    -------
    polars.DataFrame
        One row per group, with the columns above.

    References
    ----------
    Agarwal et al. (2021), NeurIPS (rliable's ``probability_of_improvement``).
    """
    keys = [c for c in by if c in runs.columns]
    groups = runs.partition_by(keys, as_dict=True, maintain_order=True) if keys else {(): runs}
    better = HIGHER_IS_BETTER.get(metric, True)
    rows = []
    for group_key, g in groups.items():
        if "replicate" in g.columns:  # a task's runs of one method are its replicates; two of one replicate are
            for m in (a, b):          # another dimension (two models): pooled, they would blur both
                _unique_pairs(g.filter(pl.col("method") == m), ["task_id", "replicate"], m,
                              "probability_of_improvement")
        r = _per_task_outcomes(g, metric)
        left = r.filter(pl.col("method") == a).group_by("task_id", maintain_order=True).agg(
            pl.col("scenario_id").first(), pl.col("_x").alias("xa"))
        right = r.filter(pl.col("method") == b).group_by("task_id", maintain_order=True).agg(pl.col("_x").alias("xb"))
        both = left.join(right, on="task_id").sort("task_id")
        if not both.height:
            continue
        per_task = []
        for xa, xb in zip(both["xa"].to_list(), both["xb"].to_list(), strict=True):
            u, v = np.asarray(xa, dtype=float)[:, None], np.asarray(xb, dtype=float)[None, :]
            wins = (u > v) if better else (u < v)
            per_task.append(float(np.mean(wins + 0.5 * (u == v))))
        res = bootstrap(np.mean, np.array(per_task), clusters=both["scenario_id"].cast(pl.Utf8).to_numpy(),
                        n_boot=n_boot, seed=seed, level=level, method=method)
        row: dict[str, object] = dict(zip(keys, group_key, strict=True))
        row.update(metric=metric, a=a, b=b, **res.row(), n_clusters=res.n_clusters)
        row["ci_low"], row["ci_high"] = float(np.clip(res.ci_low, 0, 1)), float(np.clip(res.ci_high, 0, 1))
        rows.append(row)
    schema: dict[str, pl.DataType] = {**{k: runs.schema[k] for k in keys}, "metric": pl.Utf8(), "a": pl.Utf8(),
                                      "b": pl.Utf8(), **INTERVAL_SCHEMA, "n_clusters": pl.Int64()}
    return pl.DataFrame(rows, schema=schema)


def performance_profile(runs: pl.DataFrame, taus: Sequence[float] | np.ndarray = tuple(np.linspace(0, 1, 21)), *,
                        by: Sequence[str] = ("method",), scores: str = "tasks", n_boot: int = DEFAULT_N_BOOT,
                        seed: Seed = 0, level: float = 0.95) -> pl.DataFrame:
    """rliable's performance profile: per group and tau, the share of scores above tau, with a scenario-bootstrap
    percentile band (scenarios drawn with all their tasks and runs, the same draws at every tau so the band is a
    band). ``scores="tasks"`` (the default, as before) takes each task's success rate over its runs: rliable's
    ``create_performance_profile(..., use_score_distribution=False)``, the average-score distribution.
    ``scores="runs"`` takes every run's outcome: rliable's default (``use_score_distribution=True``), the run-score
    distribution, the mean over all runs of ``score > tau``. Columns: the ``by`` columns, ``tau``, ``scores``, the
    interval columns (``n`` the tasks or runs; ``reason`` for NaN bounds: fewer than two scenarios) with
    ``ci_method`` for the contract's ``method``, which the grouping by the agents' ``method`` would collide with
    (as in :func:`workbench.stats.reliability`). Runs that vary in another dimension within a profile (two runs
    of one task and replicate: two models, say) are refused, naming the column: pass it in ``by``.

    Parameters
    ----------
    runs : polars.DataFrame
        The runs table (``task_id``, ``scenario_id``, ``acc`` and the ``by`` columns).
    taus : sequence of float, default 0, 0.05, ..., 1
        Success-rate thresholds.
    by : sequence of str, default ("method",)
        Columns that define the profiles.
    scores : {"tasks", "runs"}, default "tasks"
        Task success rates (rliable's average-score distribution) or run outcomes (its run-score distribution).
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples of the band.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the band.

    Returns
    -------
    polars.DataFrame
        One row per (group, tau) with the columns above.

    References
    ----------
    Agarwal, R., Schwarzer, M., Castro, P. S., Courville, A. and Bellemare, M. G. (2021). Deep reinforcement
    learning at the edge of the statistical precipice. NeurIPS (rliable).
    """
    from workbench.stats._bootstrap import interval_reason, make_units, resample_counts

    if scores not in ("tasks", "runs"):
        raise ValueError(f"scores: expected 'tasks' or 'runs', got {scores!r}")
    keys = [c for c in by if c in runs.columns]
    r = _per_task_outcomes(runs, "acc")
    if "replicate" in r.columns:
        parts = r.partition_by(keys, as_dict=True, maintain_order=True) if keys else {(): r}
        for group_key, g in parts.items():
            _unique_pairs(g, ["task_id", "replicate"], ", ".join(map(str, group_key)) or "every run",
                          "performance_profile")
    if scores == "tasks":
        per = r.group_by([*keys, "task_id"], maintain_order=True).agg(pl.col("scenario_id").first(),
                                                                      pl.col("_x").mean().alias("rate"))
    else:
        per = r.select(*keys, "task_id", "scenario_id", pl.col("_x").alias("rate"))
    per = per.sort([*keys, "task_id"])
    groups = per.partition_by(keys, as_dict=True, maintain_order=True) if keys else {(): per}
    grid = np.asarray(taus, dtype=float)
    alpha = (1 - level) / 2
    rows = []
    for group_key, g in groups.items():
        rate = g["rate"].to_numpy()
        units = make_units(g["scenario_id"].cast(pl.Utf8).to_numpy())
        counts = resample_counts(units, n_boot, as_generator(seed))  # (n_boot, scenarios)
        above = rate[:, None] > grid[None, :]  # (tasks or runs, taus)
        per_unit = np.zeros((units.n_units, len(grid)))
        np.add.at(per_unit, units.row_unit, above.astype(float))
        size = np.bincount(units.row_unit, minlength=units.n_units).astype(float)
        boots = (counts @ per_unit) / (counts @ size)[:, None]
        nan = np.full(len(grid), np.nan)
        lo, hi = np.quantile(boots, [alpha, 1 - alpha], axis=0) if n_boot and units.n_units > 1 else (nan, nan)
        for j, t in enumerate(grid):
            rows.append({**dict(zip(keys, group_key, strict=True)), "tau": float(t), "scores": scores,
                         "estimate": float(above[:, j].mean()), "ci_low": float(lo[j]), "ci_high": float(hi[j]),
                         "n": int(len(rate)), "n_boot": n_boot, "level": level, "ci_method": "percentile",
                         "n_missing": 0, "reason": interval_reason(float(lo[j]), float(hi[j]), units.n_units)})
    interval = {("ci_method" if k == "method" else k): v for k, v in INTERVAL_SCHEMA.items()}
    schema: dict[str, pl.DataType] = {**{k: runs.schema[k] for k in keys}, "tau": pl.Float64(), "scores": pl.Utf8(),
                                      **interval}
    return pl.DataFrame(rows, schema=schema)


__all__ = ["clustered_mcnemar_p", "compare_to_baseline", "jackknife_se", "paired_difference", "performance_profile",
           "probability_of_improvement", "simultaneous_interval", "verdict"]
