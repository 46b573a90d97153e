"""Judge calibration against hand computations, scikit-learn and statsmodels, and a deliberately miscalibrated judge."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.calibration import (
    brier,
    calibration_table,
    ece,
    paired_auroc_difference,
    recalibrate,
    reliability_curve,
    threshold_for,
)


def test_brier_and_murphy_decomposition_by_hand() -> None:
    s = np.array([0.2, 0.2, 0.8, 0.8, 0.8])
    y = np.array([0, 1, 1, 1, 0])
    b = brier(s, y)
    # squared errors: 0.04, 0.64, 0.04, 0.04, 0.64 -> mean 1.4 / 5 = 0.28
    assert b.brier == pytest.approx(0.28)
    # forecasts 0.2 (n=2, o=0.5) and 0.8 (n=3, o=2/3); overall o = 0.6
    assert b.reliability == pytest.approx((2 * 0.3**2 + 3 * (0.8 - 2 / 3) ** 2) / 5)
    assert b.resolution == pytest.approx((2 * 0.1**2 + 3 * (2 / 3 - 0.6) ** 2) / 5)
    assert b.uncertainty == pytest.approx(0.24)
    assert b.brier == pytest.approx(b.reliability - b.resolution + b.uncertainty)


def test_ece_by_hand_uniform_and_quantile() -> None:
    s = np.array([0.05, 0.15, 0.15, 0.95, 0.95, 0.95])
    y = np.array([0, 0, 1, 1, 1, 0])
    # bins [0, .1): {0.05 -> 0}: |0.05 - 0| ; [.1, .2): {0.15, 0.15 -> 0.5}: |0.15 - 0.5|; [.9, 1]: |0.95 - 2/3|
    hand = (1 * 0.05 + 2 * 0.35 + 3 * abs(0.95 - 2 / 3)) / 6
    assert ece(s, y, bins=10) == pytest.approx(hand)
    assert ece(np.array([0.3, 0.7]), np.array([0, 1]), bins=1) == pytest.approx(0.0)  # one bin: mean 0.5 vs rate 0.5


def test_isotonic_recalibration_equals_sklearn_on_the_same_folds() -> None:
    from sklearn.isotonic import IsotonicRegression
    from sklearn.model_selection import GroupKFold

    rng = np.random.default_rng(2)
    c = np.repeat(np.arange(8), 20)
    s = rng.random(160)
    y = (rng.random(160) < s**2).astype(int)
    got = recalibrate(s, y, c, "isotonic", n_splits=4)
    expected = np.empty(160)
    for train, test in GroupKFold(n_splits=4).split(s, y, groups=c):
        iso = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(s[train], y[train])
        expected[test] = iso.predict(s[test])
    assert np.allclose(got, expected)


def test_platt_recalibration_equals_a_direct_statsmodels_glm() -> None:
    import statsmodels.api as sm
    from sklearn.model_selection import GroupKFold

    rng = np.random.default_rng(3)
    c = np.repeat(np.arange(6), 30)
    s = np.clip(rng.random(180), 0.01, 0.99)
    y = (rng.random(180) < 0.2 + 0.6 * s).astype(int)
    got = recalibrate(s, y, c, "platt", n_splits=3)
    logit = np.log(s / (1 - s))
    for train, test in GroupKFold(n_splits=3).split(s, y, groups=c):
        fit = sm.Logit(y[train], sm.add_constant(logit[train])).fit(disp=0)
        assert np.allclose(got[test], fit.predict(sm.add_constant(logit[test])), atol=1e-6)


def squashed_judge(seed: int = 0, scenarios: int = 20, per: int = 30) -> tuple[np.ndarray, ...]:
    """A well-ranking judge made miscalibrated on purpose: true probabilities squashed toward 0.5, with scenario
    effects on the truth."""
    rng = np.random.default_rng(seed)
    effect = np.repeat(rng.normal(scale=0.7, size=scenarios), per)
    z = rng.normal(size=scenarios * per) * 2 + effect
    p = 1 / (1 + np.exp(-z))
    y = (rng.random(p.size) < p).astype(int)
    score = 0.5 + 0.25 * (p - 0.5)  # squashed: every score within [0.375, 0.625]
    return score, y, np.repeat(np.arange(scenarios), per)


def test_recalibration_repairs_a_squashed_judge() -> None:
    s, y, c = squashed_judge()
    before_brier, before_ece = brier(s, y).brier, ece(s, y)
    for method in ("platt", "isotonic"):
        fixed = recalibrate(s, y, c, method)
        assert brier(fixed, y).brier < before_brier and ece(fixed, y) < before_ece / 2, method
    table = calibration_table(s, y, c, n_boot=200)
    row = {r["statistic"]: r for r in table.iter_rows(named=True)}
    assert row["brier"]["estimate"] == pytest.approx(before_brier) and row["ece"]["ci_low"] > 0.1


def test_reliability_curve_threshold_and_paired_auroc() -> None:
    s, y, c = squashed_judge(1)
    curve = reliability_curve(s, y, c, bins=4, n_boot=200)
    assert curve["n"].sum() == s.size and (curve["estimate"] >= curve["mean_score"]).tail(1).all()
    chosen = threshold_for(s, y, c, "precision", 0.8, n_boot=200)
    est = {r["statistic"]: r["estimate"] for r in chosen.iter_rows(named=True)}
    kept = s >= est["tau"]
    assert est["precision"] == pytest.approx(y[kept].mean()) and est["precision"] >= 0.8
    assert y[s >= np.max(s[s < est["tau"]])].mean() < 0.8  # the next lower score would miss the target
    assert est["pruned_at_sjc"] == pytest.approx((s < 0.5).mean())
    from sklearn.metrics import roc_auc_score

    noisy = s + np.random.default_rng(4).normal(scale=0.05, size=s.size)
    diff = paired_auroc_difference(s, noisy, y, c, n_boot=200)
    assert diff.estimate == pytest.approx(roc_auc_score(y, s) - roc_auc_score(y, noisy))
    assert diff.ci_low < diff.estimate < diff.ci_high
