"""Issue 42: one rule for missing values, no silent pooling, no zero-width interval from one scenario, clear errors,
shares that stay shares, and names that say what is computed. Each test states the defect it pins (every one failed
before) and checks against a reference independent of the code: sklearn, statsmodels, a hand computation."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from workbench.stats import auroc_ci
from workbench.stats._bootstrap import ONE_SCENARIO
from workbench.stats import brier, ece, recalibrate, reliability_curve, threshold_for


def judged(n_scen: int = 10, per: int = 20, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    c = np.repeat([f"s{i:02d}" for i in range(n_scen)], per)
    s = rng.random(c.size)
    y = (rng.random(c.size) < 0.2 + 0.6 * s).astype(float)
    return s, y, c


def with_holes(a: np.ndarray, at: np.ndarray) -> np.ndarray:
    out = a.astype(float).copy()
    out[at] = np.nan
    return out


HOLES = np.array([0, 7, 33, 90, 150])


# ---------------------------------------------------------------------------
# missing values: dropped, counted, the result equal to the data without them


def test_threshold_for_drops_missing_scores_instead_of_choosing_a_tau_the_data_does_not_have() -> None:
    """A NaN score chose tau 0.935 with 'precision' 0.333 at target 0.6 (NaN sorted past every score)."""
    s, y, c = judged()
    keep = np.setdiff1d(np.arange(len(s)), HOLES)
    got = threshold_for(with_holes(s, HOLES), y, c, "precision", 0.6, n_boot=100)
    clean = threshold_for(s[keep], y[keep], c[keep], "precision", 0.6, n_boot=100)
    assert got.drop("n_missing").equals(clean.drop("n_missing"))
    assert set(got["n_missing"]) == {len(HOLES)} and set(clean["n_missing"]) == {0}
    tau = got.filter(pl.col("statistic") == "tau")["estimate"][0]
    s_k, y_k = s[keep], y[keep]  # by hand: the smallest score whose precision of calling >= it positive is >= 0.6
    hand = min(t for t in np.unique(s_k) if y_k[s_k >= t].mean() >= 0.6)
    assert tau == hand


def test_reliability_curve_leaves_missing_scores_out_of_every_bin() -> None:
    """NaN scores went to bin 0 (n 11, rate 0.636 where the bin holds 6 entries at 0.500)."""
    s, y, c = judged()
    keep = np.setdiff1d(np.arange(len(s)), HOLES)
    got = reliability_curve(with_holes(s, HOLES), y, c, n_boot=50)
    clean = reliability_curve(s[keep], y[keep], c[keep], n_boot=50)
    assert got.drop("n_missing").equals(clean.drop("n_missing")) and set(got["n_missing"]) == {len(HOLES)}
    assert got["n"].sum() == len(keep)
    first = s[keep] < 0.1  # the bin [0, 0.1) by hand
    row0 = got.filter(pl.col("bin") == 0).row(0, named=True)
    assert row0["n"] == first.sum() and row0["estimate"] == pytest.approx(y[keep][first].mean())


def test_auroc_ci_drops_missing_labels_instead_of_counting_them_positive() -> None:
    """NaN labels were cast to True: 0.3806 where sklearn on the labelled rows says 0.3961."""
    from sklearn.metrics import roc_auc_score

    s, y, c = judged()
    holes = with_holes(y, HOLES)
    keep = np.setdiff1d(np.arange(len(s)), HOLES)
    got = auroc_ci(s, holes, c, n_boot=100)
    assert got.estimate == pytest.approx(roc_auc_score(y[keep], s[keep])) and got.n_missing == len(HOLES)
    labels = np.array([None if i in HOLES else bool(v) for i, v in enumerate(y)], dtype=object)  # None, too
    assert auroc_ci(s, labels, c, n_boot=100).estimate == pytest.approx(got.estimate)


def test_ece_brier_and_recalibration_drop_missing_rows() -> None:
    """ECE and Brier returned NaN with no reason; recalibrate raised statsmodels' MissingDataError."""
    s, y, c = judged()
    keep = np.setdiff1d(np.arange(len(s)), HOLES)
    s_nan = with_holes(s, HOLES)
    assert ece(s_nan, y) == pytest.approx(ece(s[keep], y[keep]))
    assert brier(s, with_holes(y, HOLES)).brier == pytest.approx(np.mean((s[keep] - y[keep]) ** 2))
    out = recalibrate(s_nan, y, c, "platt")
    assert np.isnan(out[HOLES]).all() and np.allclose(out[keep], recalibrate(s[keep], y[keep], c[keep], "platt"))
    with pytest.raises(ValueError, match="every one of the 3 rows misses a value"):
        ece(np.full(3, np.nan), np.ones(3))


# ---------------------------------------------------------------------------
# one scenario: NaN bounds with the reason, on every path


def test_one_scenario_gives_no_interval_on_every_path() -> None:
    """Each of these printed a zero-width interval: kappa 0.584 [0.584, 0.584], the performance profile
    1.0 [1.0, 1.0], precision_at_sjc 0.344 [0.344, 0.344], AUROC 0.5 [0.5, 0.5]."""
    from workbench.stats import performance_profile
    from workbench.stats import agreement_table

    s, y, _ = judged(1, 40)
    one = np.full(len(s), "s00")
    r = auroc_ci(np.full(len(s), 0.5), y, one, method="percentile", n_boot=100)
    assert r.estimate == 0.5 and math.isnan(r.ci_low) and r.reason == ONE_SCENARIO
    t = threshold_for(s, y, one, "precision", 0.6, n_boot=100)
    at_sjc = t.filter(pl.col("statistic") == "precision_at_sjc").row(0, named=True)
    assert math.isnan(at_sjc["ci_low"]) and at_sjc["reason"] == ONE_SCENARIO
    labels = pl.DataFrame({"item_id": [f"e{i}" for i in range(20)] * 2, "annotator": ["a"] * 40,
                           "round": [1] * 20 + [2] * 20, "field": ["support"] * 40,
                           "value": (["supported", "unsupported"] * 10) + (["supported"] * 3 + ["unsupported"] * 17),
                           "note": [None] * 40, "labeled_at": ["2026-01-01T00:00:00"] * 40})
    kappa = agreement_table(labels, {f"e{i}": "only" for i in range(20)}, n_boot=100).filter(
        pl.col("statistic") == "kappa").row(0, named=True)
    assert math.isnan(kappa["ci_low"]) and kappa["reason"] == ONE_SCENARIO
    runs = pl.DataFrame({"method": ["A"] * 4, "task_id": ["t0", "t0", "t1", "t1"], "replicate": [0, 1, 0, 1],
                         "scenario_id": ["s"] * 4, "success": [True, True, True, True]})
    prof = performance_profile(runs, [0.5], n_boot=100).row(0, named=True)
    assert prof["estimate"] == 1.0 and math.isnan(prof["ci_low"]) and prof["reason"] == ONE_SCENARIO


# ---------------------------------------------------------------------------
# pooling, errors, shares


def two_models() -> pl.DataFrame:
    """Methods A and B on 12 tasks in 4 scenarios, 2 replicates, under two models that disagree."""
    rng = np.random.default_rng(3)
    rows = []
    for model, pa, pb in (("m1", 0.7, 0.4), ("m2", 0.3, 0.5)):
        for t in range(12):
            for rep in range(2):
                for method, p in (("A", pa), ("B", pb)):
                    rows.append({"method": method, "model": model, "task_id": f"t{t}", "replicate": rep,
                                 "scenario_id": f"s{t % 4}", "success": bool(rng.random() < p)})
    return pl.DataFrame(rows)


def test_probability_of_improvement_refuses_to_pool_two_models_and_takes_by() -> None:
    """Two models were pooled: PoI 0.479 where the models give 0.458 and 0.500."""
    from workbench.stats import performance_profile, probability_of_improvement

    runs = two_models()
    with pytest.raises(ValueError, match=r"probability_of_improvement: .*they differ in \['model'\]"):
        probability_of_improvement(runs, "A", "B", by=("budget",))
    with pytest.raises(ValueError, match=r"performance_profile: .*they differ in \['model'\]"):
        performance_profile(runs)
    got = probability_of_improvement(runs, "A", "B", by=("model",), n_boot=50)
    for model in ("m1", "m2"):  # by hand: per task, wins + half ties over the 2 x 2 run pairs, mean over tasks
        r = runs.filter(pl.col("model") == model)
        per_task = []
        for t in range(12):
            xa = r.filter((pl.col("method") == "A") & (pl.col("task_id") == f"t{t}"))["success"].to_list()
            xb = r.filter((pl.col("method") == "B") & (pl.col("task_id") == f"t{t}"))["success"].to_list()
            per_task.append(np.mean([(u > v) + 0.5 * (u == v) for u in xa for v in xb]))
        assert got.filter(pl.col("model") == model)["estimate"][0] == pytest.approx(np.mean(per_task))
    prof = performance_profile(runs, [0.0, 0.5], by=("method", "model"), scores="runs", n_boot=50)
    a1 = runs.filter((pl.col("method") == "A") & (pl.col("model") == "m1"))["success"].cast(float).to_numpy()
    got_runs = prof.filter((pl.col("method") == "A") & (pl.col("model") == "m1") & (pl.col("tau") == 0.0))
    assert got_runs["estimate"][0] == pytest.approx(np.mean(a1 > 0.0))  # rliable's run-score distribution


def test_bare_errors_are_one_line_saying_what_is_missing() -> None:
    """auroc_ci on empty input and compare_to_baseline with only the baseline raised IndexError."""
    from workbench.stats import compare_to_baseline

    with pytest.raises(ValueError, match="auroc_ci: no rows"):
        auroc_ci([], [], [])
    runs = two_models().filter((pl.col("method") == "A") & (pl.col("model") == "m1"))
    with pytest.raises(ValueError, match="nothing to compare with the baseline 'A'"):
        compare_to_baseline(runs, "A")
    with pytest.raises(ValueError, match="no runs of the baseline 'Z'"):
        compare_to_baseline(runs, "Z")


def test_out_of_fold_shares_stay_in_the_unit_interval() -> None:
    """precision_oof reached 1.052 (its t interval unclipped) in 11 of 40 samples."""
    highest = 0.0
    for i in range(15):
        rng = np.random.default_rng(100 + i)
        c = np.repeat(np.arange(8), 12)
        s = rng.random(c.size)
        y = (rng.random(c.size) < s**0.3).astype(float)  # a sharp judge: precision near 1 above a middling tau
        got = threshold_for(s, y, c, "precision", 0.9, n_boot=20)
        shares = got.filter(pl.col("statistic") != "tau")
        highest = max(highest, float(shares["ci_high"].max()))
        assert (shares["ci_low"].drop_nans() >= 0).all() and (shares["ci_high"].drop_nans() <= 1).all()
    assert highest == 1.0  # the clip was needed: some interval reached the bound


# ---------------------------------------------------------------------------
# names that say what is computed


def test_the_paired_t_standard_error_is_the_jackknife_not_cr1() -> None:
    """'Cluster-robust t' was a delete-one-cluster jackknife: SE 0.02541 beside statsmodels' CR1 0.02319. Its
    variance is checked against the CR3 sandwich written out with the hat matrix (Bell and McCaffrey 2002),
    recentred; and it differs from statsmodels' CR1 on unequal clusters."""
    import statsmodels.api as sm

    from workbench.stats import jackknife_se

    rng = np.random.default_rng(9)
    sizes = [3, 5, 8, 20, 2, 11, 4]
    c = np.repeat(np.arange(len(sizes)), sizes)
    v = rng.normal(0.1, 1, c.size) + rng.normal(0, 0.5, len(sizes))[c]
    g, n = len(sizes), len(v)
    x = np.ones((n, 1))
    e = v - v.mean()
    meat = np.zeros((1, 1))
    for k in range(g):  # CR3: X_g' (I - H_gg)^-1 e_g, H = X (X'X)^-1 X'
        m = c == k
        h_gg = x[m] @ np.linalg.inv(x.T @ x) @ x[m].T
        u = x[m].T @ np.linalg.solve(np.eye(m.sum()) - h_gg, e[m])
        meat += np.outer(u, u)
    cr3 = float((np.linalg.inv(x.T @ x) @ meat @ np.linalg.inv(x.T @ x))[0, 0])
    loo = np.array([v[c != k].mean() for k in range(g)])
    centred = (g - 1) / g * (cr3 - g * (loo.mean() - v.mean()) ** 2)  # sum (m_(g) - mbar)^2 = sum (m_(g) - m)^2 - G (mbar - m)^2
    assert jackknife_se(v, c) ** 2 == pytest.approx(centred, rel=1e-10)
    cr1 = sm.OLS(v, x).fit(cov_type="cluster", cov_kwds={"groups": c}).bse[0]
    assert abs(jackknife_se(v, c) - cr1) / cr1 > 0.02  # not CR1: the name said what it is not


def test_a_p_value_without_spread_says_why() -> None:
    from workbench.stats import paired_difference

    rows = []
    for t in range(8):
        for method, ok in (("A", True), ("B", t % 2 == 0)):  # every scenario's difference 0.5: no spread
            rows.append({"method": method, "task_id": f"t{t}", "replicate": 0, "scenario_id": f"s{t // 2}",
                         "success": ok})
    got = paired_difference(pl.DataFrame(rows), a="A", b="B", by=(), n_boot=20).row(0, named=True)
    assert math.isnan(got["p_value"]) and "p: zero variance" in got["reason"]


# ---------------------------------------------------------------------------
# the interval methods the coverage study chose (benchmarks/bench_interval_coverage.py)


def test_cr2_equals_the_bell_mccaffrey_matrix_formulas() -> None:
    """The CR2 variance and Bell-McCaffrey degrees of freedom, written out with the full hat matrix, matrix
    square roots (scipy.linalg.sqrtm) and the eigenvalues of G'G, against the closed form the code uses."""
    from scipy import linalg, stats

    from workbench.stats import cr2_mean, cr2_p_value

    rng = np.random.default_rng(12)
    sizes = [2, 9, 4, 15, 3, 6]
    c = np.repeat(np.arange(len(sizes)), sizes)
    v = rng.normal(0.3, 1, c.size) + rng.normal(0, 0.7, len(sizes))[c]
    n = len(v)
    x = np.ones((n, 1))
    xtx_inv = np.linalg.inv(x.T @ x)
    h = x @ xtx_inv @ x.T
    e = v - (x @ xtx_inv @ x.T @ v)
    meat = np.zeros((1, 1))
    g_cols = []
    for k in range(len(sizes)):
        m = c == k
        a_g = np.real(linalg.inv(linalg.sqrtm(np.eye(m.sum()) - h[np.ix_(m, m)])))
        u = x[m].T @ a_g @ e[m]
        meat += np.outer(u, u)
        col = (np.eye(n) - h)[:, m] @ a_g @ x[m] @ xtx_inv  # (I - H)_{.,g} A_g X_g (X'X)^-1
        g_cols.append(col[:, 0])
    var = float((xtx_inv @ meat @ xtx_inv)[0, 0])
    gmat = np.column_stack(g_cols)
    lam = np.linalg.eigvalsh(gmat.T @ gmat)
    df = lam.sum() ** 2 / np.sum(lam**2)
    half = stats.t.ppf(0.975, df) * np.sqrt(var)
    got = cr2_mean(v, c)
    assert (got.ci_low, got.ci_high) == (pytest.approx(v.mean() - half, rel=1e-9), pytest.approx(v.mean() + half,
                                                                                                    rel=1e-9))
    p, got_df, why = cr2_p_value(v, c)
    assert got_df == pytest.approx(df, rel=1e-9) and why is None
    assert p == pytest.approx(2 * stats.t.sf(abs(v.mean()) / np.sqrt(var), df), rel=1e-9)
    sums = (np.bincount(c, weights=v), np.bincount(c))  # the same from the clusters' aggregates
    assert cr2_mean(None, None, sums=sums).ci_low == pytest.approx(got.ci_low, rel=1e-12)


def test_transformed_t_intervals_by_hand() -> None:
    """logit-t and atanh-t: the jackknife t interval of the transformed estimate, transformed back."""
    from scipy import stats

    from workbench.stats import interval

    jk = np.array([0.80, 0.84, 0.78, 0.83, 0.81])
    est = 0.81
    z, zj = np.log(est / (1 - est)), np.log(jk / (1 - jk))
    se = np.sqrt(4 / 5 * np.sum((zj - zj.mean()) ** 2))
    half = stats.t.ppf(0.975, 4) * se
    iv = interval(est, np.zeros(0), 0.95, "logit-t", jackknife=jk)
    expit = lambda t: 1 / (1 + np.exp(-t))  # noqa: E731
    assert (iv.ci_low, iv.ci_high) == (pytest.approx(expit(z - half)), pytest.approx(expit(z + half)))
    kj = np.array([0.55, 0.61, 0.58, 0.49, 0.60])
    zk = np.arctanh(kj)
    se_k = np.sqrt(4 / 5 * np.sum((zk - zk.mean()) ** 2))
    iv = interval(0.57, np.zeros(0), 0.95, "atanh-t", jackknife=kj)
    h = stats.t.ppf(0.975, 4) * se_k
    assert (iv.ci_low, iv.ci_high) == (pytest.approx(np.tanh(np.arctanh(0.57) - h)),
                                       pytest.approx(np.tanh(np.arctanh(0.57) + h)))


def test_the_coverage_study_smoke() -> None:
    """The study in benchmarks/ runs (a few trials of one cell) and every candidate gives an interval or a 0/1
    rejection; its kappa percentile interval is the library's own (the same draws)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_interval_coverage.py"
    spec = importlib.util.spec_from_file_location("bench_interval_coverage", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.check_kappa_resamples()
    truth = {"auroc": 0.7, "kappa": 0.7, "agreement": 0.85, "accuracy": 0.6, "difference": 0.07}
    hits = bench.cell(("polarised", 8, 2, 50, truth, False))  # the third generator (issue 60)
    assert {"auroc/logit-t", "kappa/atanh-t", "agreement/percentile", "agreement/logit-t", "accuracy/CR2-BM",
            "difference/CR2-BM", "null/wild-bootstrap"} <= set(hits)
    assert all(len(v) == 2 and set(v) <= {0.0, 1.0} for v in hits.values())
    # the acceptance run's --defaults-only computes the defaults alone, on the same draws: the same intervals
    full, fast = bench.one_trial("mix", 8, 3, 20), bench.one_trial("mix", 8, 3, 20, defaults_only=True)
    assert set(fast) == set(bench.DEFAULTS)
    assert all(np.allclose(fast[k], full[k], equal_nan=True) for k in fast)


def test_a_transformed_interval_at_the_bound_falls_back_to_the_plain_t() -> None:
    """A leave-one-out kappa of 1 (or an AUROC of 1) is infinite on Fisher's z (or the logit): the transformed
    interval would be a number of the transform's clipping, not of the data. It is the plain t, clipped, and says so."""
    from scipy import stats

    from workbench.stats import interval
    from workbench.stats._bootstrap import AT_BOUND

    jk = np.array([1.0, 0.6, 0.7, 0.65])
    iv = interval(0.72, np.zeros(0), 0.95, "atanh-t", jackknife=jk)
    se = np.sqrt(3 / 4 * np.sum((jk - jk.mean()) ** 2))
    half = stats.t.ppf(0.975, 3) * se
    assert (iv.ci_low, iv.ci_high) == (pytest.approx(max(-1.0, 0.72 - half)), pytest.approx(min(1.0, 0.72 + half)))
    assert iv.reason == AT_BOUND
    inside = interval(0.72, np.zeros(0), 0.95, "atanh-t", jackknife=np.array([0.8, 0.6, 0.7, 0.65]))
    assert inside.reason is None and inside.ci_high < 1.0
