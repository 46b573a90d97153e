"""The bootstrap engine: AUROC equal to sklearn, vectorised equal to the loop, seeds, strata, BCa, coverage."""

from __future__ import annotations

import numpy as np
import pytest
import polars as pl
from sklearn.metrics import roc_auc_score

from workbench.stats import auroc_ci, bootstrap, make_units, resample_counts
from workbench.stats import auroc


def data(n: int = 300, k: int = 30, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    clusters = rng.integers(0, k, n)
    labels = rng.random(n) < 0.4
    scores = np.round(rng.random(n) + 0.5 * labels, 1)  # rounding makes ties
    return scores, labels, clusters


def test_auroc_point_estimate_equals_sklearn_with_ties() -> None:
    s, y, c = data()
    assert auroc_ci(s, y, c, n_boot=10).estimate == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert auroc(s, y) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def test_vectorised_auroc_equals_loop_over_the_same_resamples() -> None:
    s, y, c = data()
    for method in ("percentile", "bca", "t"):  # the vectorised jackknife too (t, bca) equals the loop's
        vec = auroc_ci(s, y, c, n_boot=50, seed=3, method=method)
        loop = bootstrap(lambda yy, ss: roc_auc_score(yy, ss), y, s, clusters=c, n_boot=50, seed=3, method=method)
        assert (vec.ci_low, vec.ci_high) == pytest.approx((loop.ci_low, loop.ci_high), abs=1e-12), method
        assert (vec.n, vec.n_pos, vec.n_boot, vec.method) == (300, int(y.sum()), 50, method)


@pytest.mark.parametrize("dense_units", [0, 10_000])  # through the score groups, and through the units matrix
def test_both_numerator_paths_equal_the_loop(dense_units: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    module = importlib.import_module("workbench.stats._bootstrap")  # the package exports a function of that name
    monkeypatch.setattr(module, "_DENSE_UNITS", dense_units)
    s, y, c = data()
    s = np.round(s, 1)  # ties across and within scenarios
    for method in ("percentile", "t"):
        vec = auroc_ci(s, y, c, n_boot=60, seed=5, method=method)
        loop = bootstrap(lambda yy, ss: roc_auc_score(yy, ss), y, s, clusters=c, n_boot=60, seed=5, method=method)
        assert (vec.ci_low, vec.ci_high) == pytest.approx((loop.ci_low, loop.ci_high), abs=1e-12), method


def test_seeded_and_independent_of_global_state() -> None:
    s, y, c = data()
    np.random.seed(1)
    a = auroc_ci(s, y, c, n_boot=200, seed=7, method="percentile")
    np.random.seed(2)
    b = auroc_ci(s, y, c, n_boot=200, seed=7, method="percentile")
    assert a == b
    assert auroc_ci(s, y, c, n_boot=200, seed=8, method="percentile") != a


def test_degenerate_resamples_are_counted_not_hidden() -> None:
    # two clusters, each one class: every resample drawing the same cluster twice is one-class
    s = np.array([0.9, 0.8, 0.1, 0.2])
    y = np.array([True, True, False, False])
    c = np.array([0, 0, 1, 1])
    r = auroc_ci(s, y, c, n_boot=400, seed=0)
    assert 160 < r.n_degenerate < 240  # about half

    def auc(yy: np.ndarray, ss: np.ndarray) -> float:  # sklearn warns, then returns NaN, on one class: say so first
        if yy.all() or not yy.any():
            raise ValueError("one class")
        return float(roc_auc_score(yy, ss))

    g = bootstrap(auc, y, s, clusters=c, n_boot=400, seed=0)
    assert g.n_degenerate == r.n_degenerate


def test_strata_keep_each_strata_size() -> None:
    units = make_units(clusters=np.array([0, 0, 1, 2, 2, 3]), strata=np.array([0, 0, 0, 1, 1, 1]))
    counts = resample_counts(units, 100, np.random.default_rng(0))
    first = units.unit_stratum == 0
    assert np.all(counts[:, first].sum(axis=1) == first.sum())
    assert np.all(counts[:, ~first].sum(axis=1) == (~first).sum())
    s, y, c = data()
    r = auroc_ci(s, y, [f"{ci}-{yi}" for ci, yi in zip(c, y, strict=True)], n_boot=300, strata=y)
    assert r.n_degenerate == 0  # the label ratio is kept, so no one-class resample


def test_bca_interval_is_finite_and_contains_estimate() -> None:
    s, y, c = data()
    r = auroc_ci(s, y, c, n_boot=2000, method="bca")
    assert r.method == "bca" and r.ci_low < r.estimate < r.ci_high
    g = bootstrap(roc_auc_score, y, s, clusters=c, n_boot=300, method="bca")
    assert g.ci_low < g.estimate < g.ci_high


def test_interval_percentile_by_hand_and_degenerate_resamples_left_out() -> None:
    from workbench.stats import interval

    boots = np.arange(1, 101) / 100  # 0.01 ... 1.00
    iv = interval(0.5, np.append(boots, [np.nan, np.inf]), level=0.9)
    # numpy's linear rule: position 0.05 * 99 = 4.95 -> 0.05 + 0.95 * 0.01; 0.95 * 99 = 94.05 -> 0.95 + 0.05 * 0.01
    assert (iv.ci_low, iv.ci_high) == (pytest.approx(0.0595), pytest.approx(0.9505))
    assert (iv.n_boot, iv.n_degenerate, iv.level, iv.method) == (102, 2, 0.9, "percentile")
    with pytest.raises(ValueError, match=r"one of \['percentile', 'bca', 't', 'logit-t', 'atanh-t', 'cr2'\]"):
        interval(0.5, boots, method="student")


@pytest.mark.slow  # 20,000 resamples each: the Monte Carlo error must be small enough to tell BCa from percentile
def test_bca_matches_scipy_on_unclustered_data() -> None:
    """Each row its own cluster is the ordinary bootstrap; scipy.stats.bootstrap's BCa (with its own resamples)
    must agree within Monte Carlo error."""
    from scipy import stats

    x = np.random.default_rng(3).exponential(size=80)  # skewed: BCa differs from the percentile interval
    ours = bootstrap(np.mean, x, clusters=np.arange(len(x)), n_boot=20_000, seed=1, method="bca")
    ref = stats.bootstrap((x,), np.mean, n_resamples=20_000, method="BCa", random_state=2).confidence_interval
    se = x.std() / np.sqrt(len(x))
    # tolerance 0.08 standard errors: the seeded runs differ by 0.03 se; the percentile interval misses by 0.16-0.19 se
    assert abs(ours.ci_low - ref.low) < 0.08 * se and abs(ours.ci_high - ref.high) < 0.08 * se
    pct = bootstrap(np.mean, x, clusters=np.arange(len(x)), n_boot=20_000, seed=1)
    assert abs(pct.ci_high - ref.high) > 0.08 * se  # so the check can tell BCa from the percentile interval


def test_seed_takes_a_generator_and_an_int_seeds_default_rng() -> None:
    from workbench.stats import as_generator

    s, y, c = data()
    by_int = auroc_ci(s, y, c, n_boot=200, seed=7)
    by_gen = auroc_ci(s, y, c, n_boot=200, seed=np.random.default_rng(7))
    assert (by_int.ci_low, by_int.ci_high) == (by_gen.ci_low, by_gen.ci_high)
    rng = np.random.default_rng(0)
    assert as_generator(rng) is rng
    with pytest.raises(TypeError, match="seed"):
        as_generator(1.5)  # type: ignore[arg-type]


def test_population_auroc_of_the_coverage_model_matches_a_large_simulation() -> None:
    from workbench.stats import population_auroc

    rng = np.random.default_rng(5)
    k, per = 4000, 10
    effect = rng.normal(scale=0.5, size=k)
    y = rng.random((k, per)) < 0.4
    s = y + effect[:, None] + rng.normal(size=(k, per))
    assert roc_auc_score(y.ravel(), s.ravel()) == pytest.approx(population_auroc(1.0, 0.5), abs=0.005)


@pytest.mark.study
@pytest.mark.parametrize("clusters", [12, 30])  # one case each: the two test workers share them
def test_default_interval_holds_its_level_at_12_and_30_scenarios(clusters: int) -> None:
    """The issue's bar: a seeded simulation at 12 clusters covers at least 93%, at 30 clusters 93-97%. The
    percentile interval, the first default, covers about 92% at 12 and misses the bar. The default since issue
    42 is the jackknife t on the logit scale (chosen on unequal scenarios by benchmarks/bench_interval_coverage.py);
    on this equal-size generator it holds too."""
    from workbench.stats import interval_coverage

    # the t intervals do not read the resamples (same coverage at n_boot 1 and 2,000): only the percentile
    # interval, asked for at 12 scenarios, pays for them
    cov = interval_coverage((clusters,), trials=1000, methods=("logit-t", "t"), n_boot=1, seed=0)
    if clusters == 12:
        cov = pl.concat([cov, interval_coverage((clusters,), trials=1000, methods=("percentile",), seed=0)])
    got = {r["method"]: r["coverage"] for r in cov.iter_rows(named=True)}
    if clusters == 12:
        assert got["logit-t"] >= 0.93 and got["percentile"] < 0.93, got  # the percentile miss
    else:
        assert 0.93 <= got["logit-t"] <= 0.97, got
    assert auroc_ci([0.1, 0.9, 0.2, 0.8], [0, 1, 0, 1], ["a", "a", "b", "b"], n_boot=10).method == "logit-t"


def test_t_interval_by_hand() -> None:
    """estimate +/- t(G-1) * sqrt((G-1)/G * sum (jk - mean)^2), with G = 4 jackknife values worked by hand."""
    from scipy.stats import t as student

    from workbench.stats import interval

    jk = np.array([0.70, 0.74, 0.72, 0.76])
    se = np.sqrt(3 / 4 * np.sum((jk - 0.73) ** 2))  # sum of squares 0.002 -> se = sqrt(0.0015)
    iv = interval(0.73, np.array([]), 0.95, "t", jackknife=jk)
    half = student.ppf(0.975, 3) * se
    assert (iv.ci_low, iv.ci_high) == (pytest.approx(0.73 - half), pytest.approx(0.73 + half))
    assert se == pytest.approx(np.sqrt(0.0015))
    with pytest.raises(ValueError, match="jackknife"):
        interval(0.5, np.array([0.4, 0.6]), 0.95, "t")


def test_make_units_numbers_a_polars_series_as_numpy_unique_does() -> None:
    """Clusters given as a polars Series (millions of scenario ids stay out of Python objects) get numpy's numbers:
    np.unique's sorted order, non-ASCII ids included."""
    import polars as pl

    values = ["s10", "s2", "é", "s2", "Z", "s10", "ä", "a", "日本", "s1"]
    got = make_units(pl.Series(values))
    _, inverse = np.unique(np.array(values), return_inverse=True)
    assert got.row_unit.tolist() == inverse.tolist()
    assert got.n_units == 8 and got.unit_stratum.tolist() == [0] * 8
    with pytest.raises(ValueError, match="null"):
        make_units(pl.Series(["a", None]))


def test_heterogeneous_population_auroc_matches_a_large_simulation() -> None:
    """Scenarios differing in offset and discrimination: the closed form against sklearn on 4,000 scenarios."""
    from workbench.stats._coverage import heterogeneous_population_auroc

    rng = np.random.default_rng(6)
    k, per = 4000, 10
    offset, slope = rng.normal(0, 0.6, k), rng.normal(1.2, 0.5, k)
    y = rng.random((k, per)) < 0.55
    s = offset[:, None] + slope[:, None] * y + rng.normal(size=(k, per))
    assert roc_auc_score(y.ravel(), s.ravel()) == pytest.approx(heterogeneous_population_auroc(1.2, 0.6, 0.5),
                                                                abs=0.005)


@pytest.mark.slow
def test_default_interval_when_scenarios_differ_in_offset_and_discrimination() -> None:
    """The held-out generator of the review (12 scenarios of 25, offset sd 0.6, discrimination N(1.2, 0.5),
    prevalence 0.55) and a harsher one (offset sd 1.0, discrimination sd 0.8): bias under 0.01 and coverage
    not told apart from 95% (Wilson interval of the rate reaches it)."""
    from workbench.stats._coverage import heterogeneous_coverage

    cov = heterogeneous_coverage(((0.6, 0.5), (1.0, 0.8)), (12,), trials=300, seed=3)
    for r in cov.iter_rows(named=True):
        assert abs(r["bias"]) < 0.01 and r["coverage_high"] >= 0.95 and r["coverage"] >= 0.9, r


def test_a_resample_holds_one_resamples_rows_not_every_resamples() -> None:
    """Issue 62: ``resamples`` builds each resample's rows with one ``np.repeat``; the rows' repeat counts are
    gathered a resample at a time. Gathered for every resample at once they were an (n_boot, rows) matrix: 100
    resamples of 200,000 rows held 160 MB (3.1 GB at a million rows and 200 resamples). Measured by tracemalloc
    (numpy reports its buffers to it): the peak stays under a tenth of that matrix."""
    import tracemalloc

    rng = np.random.default_rng(62)
    rows, n_boot = 200_000, 100
    clusters, values = rng.integers(0, 2_000, rows), rng.random(rows)
    tracemalloc.start()
    try:
        bootstrap(np.mean, values, clusters=clusters, n_boot=n_boot, seed=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < n_boot * rows * 8 / 10, f"{peak / 1e6:.0f} MB"
