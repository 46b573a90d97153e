"""Judge calibration against hand computations, scikit-learn and statsmodels, and a deliberately miscalibrated judge."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from workbench.stats import (
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
    # quantile, 3 bins: numpy's tertiles of the scores are 0.15 and 0.95, so the bins are {0.05}, {0.15, 0.15} and
    # {0.95 x 3}, the same groups as above; uniform thirds put 0.05 with the two 0.15s instead
    assert ece(s, y, bins=3, strategy="quantile") == pytest.approx(hand)
    assert ece(s, y, bins=3) == pytest.approx((3 * abs(0.35 / 3 - 1 / 3) + 3 * abs(0.95 - 2 / 3)) / 6)


def test_scores_on_a_grid_are_binned_exactly() -> None:
    """0.3 belongs to [0.3, 0.4): linspace's edge 0.30000000000000004 put it with 0.2, merging two bins whose
    gaps cancel (ECE 0 against the hand-computed 0.3)."""
    s = np.array([0.2] * 10 + [0.3] * 10)
    y = np.array([1] * 5 + [0] * 5 + [0] * 10)
    assert ece(s, y) == pytest.approx(0.5 * abs(0.2 - 0.5) + 0.5 * abs(0.3 - 0.0))
    curve = reliability_curve(s, y, np.arange(20) % 4, n_boot=20)
    assert curve["bin"].to_list() == [2, 3] and curve["mean_score"].to_list() == pytest.approx([0.2, 0.3])
    grid = np.round(np.arange(11) / 10, 1)  # every grid score its own bin; 1.0 closes the last one
    assert reliability_curve(grid, np.ones(11), np.arange(11), n_boot=10)["bin"].to_list() == [*range(10), 9][:10]


def test_bins_off_the_edges_match_sklearns_calibration_curve() -> None:
    from sklearn.calibration import calibration_curve

    rng = np.random.default_rng(8)
    s = rng.random(500)
    y = (rng.random(500) < s**1.5).astype(int)
    prob_true, prob_pred = calibration_curve(y, s, n_bins=10, strategy="uniform")
    curve = reliability_curve(s, y, np.arange(500) % 10, n_boot=20)
    assert curve["estimate"].to_list() == pytest.approx(list(prob_true))
    assert curve["mean_score"].to_list() == pytest.approx(list(prob_pred))


def test_a_bin_where_every_label_agrees_keeps_a_wilson_interval() -> None:
    """0 positives of 11 showed [0, 0]; the interval now reaches Wilson's upper bound (statsmodels)."""
    from statsmodels.stats.proportion import proportion_confint

    s = np.full(11, 0.05)
    curve = reliability_curve(s, np.zeros(11), np.arange(11) % 3, n_boot=50).row(0, named=True)
    low, high = proportion_confint(0, 11, method="wilson")
    assert curve["ci_low"] == 0.0 and curve["ci_high"] == pytest.approx(high) and high > 0.25
    assert curve["method"] == "percentile|wilson"


def test_debiased_squared_calibration_error_by_hand() -> None:
    from workbench.stats import squared_ce_debiased

    s = np.array([0.15, 0.15, 0.15, 0.15, 0.85, 0.85])
    y = np.array([0, 1, 0, 0, 1, 1])
    # bin 1: n 4, rate 1/4, gap (0.15 - 0.25)^2 = 0.01, noise 0.25 * 0.75 / 3; bin 8: n 2, rate 1, gap 0.0225
    hand = 4 / 6 * (0.01 - 0.1875 / 3) + 2 / 6 * (0.0225 - 0.0)
    assert squared_ce_debiased(s, y) == pytest.approx(hand)


def _judge_draw(rng: np.random.Generator, scenarios: int, truth: str) -> tuple[np.ndarray, ...]:
    """25 rows a scenario, P(y) = s or s^2; ``shared``: P(y) = s^2 in scenarios of 60 or 6 rows whose labels share
    a scenario effect, ``p + u p (1 - p)`` with u ~ U(-0.9, 0.9), so P(y | s) is still s^2 over scenarios."""
    if truth != "shared":
        s = rng.random(scenarios * 25)
        p = s if truth == "calibrated" else s**2
        return s, (rng.random(s.size) < p).astype(int), np.repeat(np.arange(scenarios), 25)
    c = np.repeat(np.arange(scenarios), np.where(np.arange(scenarios) % 4 == 0, 60, 6))
    s = rng.random(c.size)
    p = s**2 + rng.uniform(-0.9, 0.9, scenarios)[c] * s**2 * (1 - s**2)
    return s, (rng.random(c.size) < p).astype(int), c


def _true_squared_ce(truth: str, bins: int = 10, grid: int = 100_000) -> float:
    s = (np.arange(grid) + 0.5) / grid
    p = s if truth == "calibrated" else s**2
    idx = np.minimum((s * bins).astype(int), bins - 1)
    return float(sum(np.mean(idx == b) * (s[idx == b].mean() - p[idx == b].mean()) ** 2 for b in range(bins)))


@pytest.mark.study
@pytest.mark.parametrize(("truth", "scenarios"), [("calibrated", 12), ("squared", 12), ("shared", 12),
                                                  ("shared", 30)])
def test_debiased_calibration_error_covers_its_truth(truth: str, scenarios: int) -> None:
    """Coverage of the debiased squared calibration error's interval at a calibrated judge (truth 0) and at
    P(y) = s^2 (truth by numerical integration), with equal scenarios or unequal ones sharing their labels (where
    the jackknife's G - 1 degrees of freedom covered 87.7% at 12 scenarios), beside the plug-in ECE's interval,
    which never covers 0."""
    from statsmodels.stats.proportion import proportion_confint

    from workbench.stats import debiased_calibration_error

    rng = np.random.default_rng(21 + scenarios)
    truth_value = _true_squared_ce(truth)
    trials, hits, plugin_zero = 300, 0, 0
    for i in range(trials):
        s, y, c = _judge_draw(rng, scenarios, truth)
        res = debiased_calibration_error(s, y, c)
        hits += res.ci_low <= truth_value <= res.ci_high
        if truth == "calibrated" and i < 30:
            row = calibration_table(s, y, c, n_boot=100, seed=i).row(1, named=True)
            assert row["statistic"] == "ece"
            plugin_zero += row["ci_low"] <= 0.0
    low, high = proportion_confint(hits, trials, method="wilson")
    message = f"{truth} at {scenarios} scenarios: coverage {hits / trials:.3f} (Wilson [{low:.3f}, {high:.3f}])"
    print(message)
    # issue 60's acceptance: the Monte Carlo interval meets 93-97%; at 0 the jackknife's interval alone covered 99-100%
    assert high >= 0.93 and low <= 0.97, message
    assert plugin_zero == 0  # the plug-in's percentile interval: never covers a calibrated judge's 0


def test_the_calibration_test_against_every_sign_pattern_written_out() -> None:
    """The sign-flip test's statistic and p-value, recomputed the long way: every pair of rows in one bin and in
    different scenarios, and all 2^G sign patterns (the test enumerates half of them, a pattern and its negation
    being equal)."""
    import itertools

    from workbench.stats import calibration_test

    rng = np.random.default_rng(8)
    c = np.repeat(np.arange(5), [3, 9, 4, 12, 6])
    s = np.round(rng.random(c.size), 2)
    y = (rng.random(c.size) < s**1.5).astype(int)
    b = np.minimum((s * 10).astype(int), 9)
    d = s - y

    def statistic(sign: np.ndarray) -> float:
        total = 0.0
        for i in range(c.size):
            for j in range(c.size):
                if b[i] == b[j] and c[i] != c[j]:
                    total += sign[c[i]] * sign[c[j]] * d[i] * d[j] / (c.size * np.sum(b == b[i]))
        return total

    observed = statistic(np.ones(5))
    null = [statistic(np.array(sign)) for sign in itertools.product((1.0, -1.0), repeat=5)]
    res = calibration_test(s, y, c)
    assert res.statistic == pytest.approx(observed, abs=1e-14)
    assert res.p_value == pytest.approx(np.mean(np.array(null) >= observed - 1e-12), abs=1e-12)
    assert (res.n_flips, res.exact, res.n_clusters) == (16, True, 5)
    # above the exact limit the patterns are drawn, seeded: the same seed, the same p-value
    c30 = np.repeat(np.arange(30), 4)
    s30, y30 = rng.random(120), rng.integers(0, 2, 120)
    drawn = calibration_test(s30, y30, c30, n_flips=999, seed=4)
    assert not drawn.exact and drawn.n_flips == 999
    assert drawn.p_value == calibration_test(s30, y30, c30, n_flips=999, seed=4).p_value
    # just above the limit (14 scenarios) the drawn p-value is the exact one within its Monte Carlo error: every one
    # of the 2^14 patterns by hand, U = sum over bins of ((sum_g sign_g D_gb)^2 - sum_g D_gb^2) / (N n_b), D_gb the
    # gaps of scenario g in bin b summed
    c14 = np.repeat(np.arange(14), rng.integers(3, 15, 14))
    s14 = np.round(rng.random(c14.size), 2)
    y14 = (rng.random(c14.size) < s14**1.3).astype(int)
    b14 = np.minimum((s14 * 10).astype(int), 9)
    gaps = np.zeros((14, 10))
    np.add.at(gaps, (c14, b14), s14 - y14)
    per_bin = c14.size * np.bincount(b14, minlength=10)
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=14)))
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.nansum(((signs @ gaps) ** 2 - (gaps**2).sum(axis=0)) / per_bin, axis=1)
    exact = float(np.mean(u >= u[0] - 1e-12))  # (the first pattern is all +1: the sample)
    drawn14 = calibration_test(s14, y14, c14)
    assert not drawn14.exact and drawn14.statistic == pytest.approx(u[0], abs=1e-14)
    assert 0.02 < exact < 0.98 and abs(drawn14.p_value - exact) < 4 * np.sqrt(exact * (1 - exact) / 9999) + 1e-3, \
        (drawn14.p_value, exact)


def test_a_rejected_calibration_with_no_positive_value_rejected_gives_an_interval_open_at_0() -> None:
    """The default interval is the values neither test rejects. In this sample (mildly miscalibrated, P(y) =
    s^1.25) the sign-flip test rejects calibration while the unified interval's low is 0: the interval is
    (0, high], its low the smallest positive float, so it does not hold 0 and does hold every positive value up
    to high; where calibration is not rejected the low is 0 even if the unified interval's is above it."""
    from workbench.stats import ABOVE_ZERO, calibration_test, debiased_calibration_error

    rng = np.random.default_rng(0)
    found = None
    for _ in range(200):
        c = np.repeat(np.arange(12), 25)
        s = rng.random(c.size)
        y = (rng.random(c.size) < s**1.25).astype(int)
        unified = debiased_calibration_error(s, y, c, interval_method="unified")
        if calibration_test(s, y, c).p_value < 0.05 and unified.ci_low == 0.0:
            found = (s, y, c)
            break
    assert found is not None
    res = debiased_calibration_error(*found)
    assert res.method == "sign-flip" and res.ci_low == ABOVE_ZERO and 0.0 < res.ci_low < 1e-300
    assert not (res.ci_low <= 0.0) and res.ci_high > 0.001
    assert "open at 0" in res.reason
    # the root's row keeps the exclusion: sqrt of the smallest float is still above 0
    row = calibration_table(*found, n_boot=50).filter(pl.col("statistic") == "rmsce_debiased").row(0, named=True)
    assert row["ci_low"] > 0.0


def test_the_unified_interval_covers_a_bounded_normal_mean_at_its_level() -> None:
    """Feldman and Cousins' construction, checked by its defining property: for a normal mean theta >= 0 seen
    through one observation X ~ N(theta, 1), P(theta in interval(X)) is 0.95 at every theta, found here by
    quadrature over X (scipy's normal), not by the construction; far from 0 the interval is X +/- 1.96, at X = 0 it
    is [0, 1.96], and it is never below 0."""
    from scipy import stats

    from workbench.stats import unified_interval

    xs = np.arange(-4.0, 9.0, 0.01)
    bounds = np.array([unified_interval(x, 1.0, np.inf) for x in xs])
    assert np.all(bounds >= 0) and np.all(bounds[:, 0] <= bounds[:, 1])
    for theta in (0.0, 0.3, 1.0, 2.0, 4.0):
        inside = (bounds[:, 0] <= theta) & (theta <= bounds[:, 1])
        cover = float(np.sum(stats.norm.pdf(xs - theta)[inside]) * 0.01) + stats.norm.sf(9.0 - theta)
        assert cover == pytest.approx(0.95, abs=0.006), theta
    assert unified_interval(0.0, 1.0, np.inf) == pytest.approx((0.0, 1.96), abs=0.006)
    assert unified_interval(20.0, 2.0, np.inf) == pytest.approx((20 - 2 * 1.96, 20 + 2 * 1.96), abs=0.01)
    assert np.isnan(unified_interval(1.0, 0.0, 10)[0])


def test_no_tau_reaches_the_target_so_recall_is_missing_not_zero() -> None:
    s = np.array([0.1, 0.4, 0.6, 0.9])
    y = np.array([0, 0, 0, 1])
    got = threshold_for(s, y, [0, 0, 1, 1], "precision", 1.01, n_boot=20)
    row = {r["statistic"]: r for r in got.iter_rows(named=True)}
    for name in ("tau", "precision", "recall", "precision_at_tau_oof", "recall_at_tau_oof", "precision_oof",
                 "recall_oof"):  # issue 42: the rule's recall was 0.0 where no tau exists
        assert np.isnan(row[name]["estimate"]) and np.isnan(row[name]["ci_low"]), name
        assert row[name]["reason"] == "no tau reaches the target on these labels", name


def test_out_of_fold_calls_use_a_tau_chosen_without_the_scenario() -> None:
    """Hand case: two scenarios; the tau for precision 1 chosen on each is applied to the other."""
    from workbench.stats._calibration import out_of_fold_calls

    s = np.array([0.2, 0.5, 0.9, 0.3, 0.6, 0.8])
    y = np.array([0, 1, 1, 0, 0, 1])
    c = np.array(["a", "a", "a", "b", "b", "b"])
    # on a: the smallest tau with precision 1 is 0.5 -> b's calls: 0.3 no, 0.6 yes, 0.8 yes
    # on b: 0.6 has precision 1/2, 0.8 has 1 -> tau 0.8 -> a's calls: 0.2 no, 0.5 no, 0.9 yes
    assert out_of_fold_calls(s, y, c, "precision", 1.0).tolist() == [0, 0, 1, 0, 1, 1]


@pytest.mark.study
@pytest.mark.parametrize("scenarios", [12])  # 8, 12 and 30, equal and unequal: benchmarks/bench_threshold_coverage.py
def test_the_reported_taus_precision_is_covered_out_of_fold(scenarios: int) -> None:
    """Issue 42: the out-of-fold row's interval covered the *reported* tau's true precision in 85% of an audit's
    samples (it estimates the rule "choose tau on the other scenarios", not the reported tau). The row that
    estimates the reported tau's precision, ``precision_at_tau_oof``, is checked here on a generator with unequal
    scenarios (a fifth of them four times as large) and prevalence U(0.5, 0.8): positives' scores Beta(5, 2),
    negatives' Beta(2, 4), so the truth of any tau is known in closed form. The in-sample row falls short."""
    from scipy import stats
    from statsmodels.stats.proportion import proportion_confint

    pos, neg = stats.beta(5, 2), stats.beta(2, 4)
    rng = np.random.default_rng(41 + scenarios)
    trials, hits, hits_in = 200, 0, 0
    for i in range(trials):
        sizes = np.where(rng.random(scenarios) < 0.2, 60, 15)
        y = np.concatenate([rng.random(n) < p for n, p in zip(sizes, rng.uniform(0.5, 0.8, scenarios))]).astype(int)
        s = np.where(y == 1, pos.rvs(y.size, random_state=rng), neg.rvs(y.size, random_state=rng))
        got = threshold_for(s, y, np.repeat(np.arange(scenarios), sizes), "precision", 0.85, n_boot=200, seed=i)
        row = {r["statistic"]: r for r in got.iter_rows(named=True)}
        t = row["tau"]["estimate"]
        truth = 0.65 * pos.sf(t) / (0.65 * pos.sf(t) + 0.35 * neg.sf(t))
        hits += row["precision_at_tau_oof"]["ci_low"] <= truth <= row["precision_at_tau_oof"]["ci_high"]
        hits_in += row["precision"]["ci_low"] <= truth <= row["precision"]["ci_high"]
    low, high = proportion_confint(hits, trials, method="wilson")
    message = (f"{scenarios} unequal scenarios: the reported tau's precision covered {hits / trials:.3f} "
               f"(Wilson [{low:.3f}, {high:.3f}]) out of fold, {hits_in / trials:.3f} in sample")
    print(message)
    assert high >= 0.95 and hits / trials >= 0.89 and hits > hits_in, message


def test_the_selection_bootstrap_recomputed_by_hand_with_the_same_draws() -> None:
    """The default interval of the reported tau's precision and recall, recomputed by a plain loop: each resample
    of scenarios (the library's draws, ``resample_counts``) rebuilt as rows, tau chosen on it by brute force over
    its distinct scores, the optimism on the logit scale, and the t(G - 1) interval around the corrected value, its
    spread scaled by sqrt(G / (G - 1))."""
    from scipy import stats
    from scipy.special import expit, logit

    from workbench.stats import as_generator, make_units, resample_counts

    rng = np.random.default_rng(5)
    g = 12
    sizes = rng.integers(10, 40, g)
    c = np.repeat(np.arange(g), sizes)
    y = (rng.random(c.size) < rng.uniform(0.4, 0.8, g)[c]).astype(int)
    s = np.round(np.clip(0.35 * y + 0.65 * rng.random(c.size), 0, 1), 2)

    def tau_of(ss: np.ndarray, yy: np.ndarray) -> float:
        for t in sorted(set(ss.tolist())):  # the smallest score whose precision reaches 0.8
            if yy[ss >= t].mean() >= 0.8:
                return t
        return float("nan")

    def lg(p: float) -> float:
        return float(logit(min(max(p, 1e-4), 1 - 1e-4)))

    tau = tau_of(s, y)
    counts = resample_counts(make_units(c), 300, as_generator(11))
    gaps = {"precision": [], "recall": []}
    for row in counts:
        take = np.concatenate([np.flatnonzero(c == k) for k in range(g) for _ in range(int(row[k]))])
        sb, yb = s[take], y[take]
        tb = tau_of(sb, yb)
        if np.isnan(tb):
            continue
        gaps["precision"].append(lg(yb[sb >= tb].mean()) - lg(y[s >= tb].mean()))
        gaps["recall"].append(lg((sb[yb == 1] >= tb).mean()) - lg((s[y == 1] >= tb).mean()))
    got = {r["statistic"]: r for r in threshold_for(s, y, c, "precision", 0.8, n_boot=300, seed=11).to_dicts()}
    t = stats.t.ppf(0.975, g - 1)
    for kind, at_tau in (("precision", y[s >= tau].mean()), ("recall", (s[y == 1] >= tau).mean())):
        gap = np.array(gaps[kind])
        centre = lg(at_tau) - gap.mean()
        half = t * gap.std(ddof=1) * np.sqrt(g / (g - 1))
        want = expit([centre, centre - half, centre + half])
        row = got[f"{kind}_at_tau_oof"]
        assert [row["estimate"], row["ci_low"], row["ci_high"]] == pytest.approx(want, rel=1e-9), kind
        assert row["method"] == "selection-bootstrap" and row["n_boot"] == 300


def test_a_tau_that_keeps_a_handful_of_entries_gets_no_interval() -> None:
    """The precision at a tau that keeps fewer than 20 entries (or fewer than 5 scenarios among them) has no
    interval, and its reason says on how many entries it rests; the recall at the same tau, on all the positives,
    keeps its interval."""
    from workbench.stats import TAU_MIN_ENTRIES

    rng = np.random.default_rng(2)
    c = np.repeat(np.arange(12), 30)
    y = (rng.random(c.size) < 0.5).astype(int)
    s = rng.random(c.size)
    top = np.argsort(-s)[:6]
    y[top] = 1  # the six highest scores are all positive: a tau for precision 1 keeps six entries
    got = {r["statistic"]: r for r in threshold_for(s, y, c, "precision", 1.0, n_boot=100).to_dicts()}
    assert (s >= got["tau"]["estimate"]).sum() == 6 < TAU_MIN_ENTRIES
    row = got["precision_at_tau_oof"]
    assert np.isnan(row["ci_low"]) and np.isnan(row["ci_high"]) and np.isfinite(row["estimate"])
    assert row["reason"].startswith("no interval: the reported tau's precision rests on 6 entries")
    recall = got["recall_at_tau_oof"]
    assert recall["ci_low"] < recall["ci_high"] and recall["reason"] is None


def test_fewer_than_twelve_scenarios_give_the_reported_taus_precision_no_interval() -> None:
    """Issue 60: with 8 scenarios the default interval held 86% of 95% on one generator of the coverage study and
    99% on another, so below 12 there is none, and the reason gives the scenario count; the estimate stays. The
    same labels cut into 12 scenarios get an interval; the earlier method, kept by name, is not changed."""
    from workbench.stats import TAU_FEW_SCENARIOS

    rng = np.random.default_rng(8)
    y = (rng.random(480) < 0.6).astype(int)
    s = np.clip(0.3 * y + 0.7 * rng.random(480), 0, 1)
    for g in (8, 11, 12):
        c = np.arange(480) % g
        got = {r["statistic"]: r for r in threshold_for(s, y, c, "precision", 0.85, n_boot=100).to_dicts()}
        for kind in ("precision", "recall"):
            row = got[f"{kind}_at_tau_oof"]
            rests_on = (s >= got["tau"]["estimate"]).sum() if kind == "precision" else y.sum()  # n: its rows
            assert np.isfinite(row["estimate"]) and row["n"] == rests_on < 480
            if g < TAU_FEW_SCENARIOS:
                assert np.isnan(row["ci_low"]) and np.isnan(row["ci_high"]), (g, kind, row)
                assert row["reason"].startswith(f"no interval: {g} scenario(s), fewer than 12"), row["reason"]
            else:
                assert row["ci_low"] < row["estimate"] < row["ci_high"] and row["reason"] is None, (g, kind, row)
        old = {r["statistic"]: r for r in threshold_for(s, y, c, "precision", 0.85, n_boot=20,
                                                        tau_interval="jackknife").to_dicts()}["precision_at_tau_oof"]
        assert old["ci_low"] < old["ci_high"]


@pytest.mark.study
def test_the_reported_taus_precision_is_covered_where_the_target_is_out_of_reach() -> None:
    """Issue 60, item 2: at a target the population never reaches (its precision tops out near 0.89), the
    reported tau is chosen where the sample's precision happens to reach 0.95, and the earlier interval (the
    jackknife at tau held fixed, kept as ``tau_interval="jackknife"``) held the truth in about half the samples.
    Labels with annotator error Beta(1, 12) per scenario, unequal scenarios (a fifth of 60 rows, the rest 12),
    30 scenarios; the truth of a tau from 400,000 rows drawn the same way. The default must hold near 95% on the
    samples it gives an interval for; the earlier one falls far short on the same samples."""
    from scipy.special import expit
    from statsmodels.stats.proportion import proportion_confint

    def draw(rng: np.random.Generator, g: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        sizes = np.where(rng.random(g) < 0.2, 60, 12)
        c = np.repeat(np.arange(g), sizes)
        base, off, disc, err = rng.beta(4, 3, g), rng.normal(0, 0.6, g), rng.normal(1.2, 0.5, g), rng.beta(1, 12, g)
        truth = rng.random(c.size) < base[c]
        score = expit(off[c] + disc[c] * truth + rng.normal(0, 1, c.size))
        return score, (truth ^ (rng.random(c.size) < err[c])).astype(int), c

    ps, py, _ = draw(np.random.default_rng(99), 20_000)
    order = np.argsort(ps)
    ps, above = ps[order], np.concatenate([np.cumsum(py[order][::-1])[::-1], [0]])

    def truth_at(t: float) -> float:
        i = np.searchsorted(ps, t)
        return above[i] / (len(ps) - i)

    rng = np.random.default_rng(60)
    given = hits = hits_before = 0
    for i in range(150):
        s, y, c = draw(rng, 30)
        new = {r["statistic"]: r for r in threshold_for(s, y, c, "precision", 0.95, n_boot=200, seed=i).to_dicts()}
        row = new["precision_at_tau_oof"]
        if not np.isfinite(row["ci_low"]):
            continue
        truth = truth_at(new["tau"]["estimate"])
        old = {r["statistic"]: r for r in threshold_for(s, y, c, "precision", 0.95, n_boot=1, seed=i,
                                                        tau_interval="jackknife").to_dicts()}["precision_at_tau_oof"]
        given += 1
        hits += row["ci_low"] <= truth <= row["ci_high"]
        hits_before += old["ci_low"] <= truth <= old["ci_high"]
    low, high = proportion_confint(hits, given, method="wilson")
    message = (f"covered {hits}/{given} = {hits / given:.3f} (Wilson [{low:.3f}, {high:.3f}]); "
               f"the jackknife at a fixed tau {hits_before / given:.3f}")
    print(message)
    assert given >= 30 and high >= 0.93 and hits / given >= 0.88 and hits_before / given < 0.8, message


def test_isotonic_recalibration_never_sees_the_scenario_it_maps() -> None:
    """No leakage: changing one scenario's labels leaves that scenario's recalibrated scores unchanged (its fold's
    calibrator was fitted on the others) and changes the others'."""
    rng = np.random.default_rng(2)
    c = np.repeat(np.arange(8), 20)
    s = rng.random(160)
    y = (rng.random(160) < s**2).astype(int)
    got = recalibrate(s, y, c, "isotonic", n_splits=8)
    flipped = y.copy()
    flipped[c == 3] = 1 - flipped[c == 3]
    again = recalibrate(s, flipped, c, "isotonic", n_splits=8)
    assert np.array_equal(got[c == 3], again[c == 3])
    assert not np.allclose(got[c != 3], again[c != 3])
    assert np.all(np.diff(got[c == 0][np.argsort(s[c == 0])]) >= -1e-12)  # monotone within a fold


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
    # the squashed judge's top bin: scores near 0.6 for entries that are positive far more often (by hand)
    top = s >= 0.5
    assert curve.row(-1, named=True)["estimate"] == pytest.approx(y[top].mean())
    assert y[top].mean() > s[top].mean() + 0.15
    assert curve["n"].to_list() == [int(np.sum(s < 0.5)), int(np.sum(top))]  # scores span bins 1 and 2 of 4
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
    assert diff.estimate > 0.01  # noise only hurts ranking


def test_recall_target_and_threshold_edge_cases_by_hand() -> None:
    """Recall 0.75 of 4 positives: the largest tau still keeping 3 of them is 0.6 (scores of positives 0.9, 0.7,
    0.6, 0.2); every score equal: tau is that score, precision the positive share; a target met exactly counts."""
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.2])
    y = np.array([1, 0, 1, 1, 0, 1])
    row = {r["statistic"]: r["estimate"] for r in threshold_for(s, y, [0, 0, 1, 1, 2, 2], "recall", 0.75,
                                                                n_boot=20).iter_rows(named=True)}
    assert row["tau"] == 0.6 and row["recall"] == 0.75 and row["precision"] == pytest.approx(3 / 4)
    flat = {r["statistic"]: r["estimate"] for r in threshold_for(np.full(4, 0.4), np.array([1, 1, 0, 1]),
                                                                 [0, 0, 1, 1], "precision", 0.75,
                                                                 n_boot=20).iter_rows(named=True)}
    assert flat["tau"] == 0.4 and flat["precision"] == 0.75 and flat["recall"] == 1.0
    with pytest.raises(ValueError, match="target"):
        threshold_for(s, y, np.zeros(6), "f1", 0.5)
