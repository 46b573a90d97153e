"""Paired method comparisons against hand computations and direct statsmodels calls, and their coverage."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from workbench.stats import compare_to_baseline, paired_difference


def runs_for(success_a: list[int], success_b: list[int], scenarios: list[str]) -> pl.DataFrame:
    rows = []
    for i, (sa, sb, sc) in enumerate(zip(success_a, success_b, scenarios, strict=True)):
        rows.append({"run_id": f"a{i}", "method": "A", "task_id": f"t{i}", "replicate": 0, "scenario_id": sc,
                     "success": bool(sa), "agent_tokens": 100 + i})
        rows.append({"run_id": f"b{i}", "method": "B", "task_id": f"t{i}", "replicate": 0, "scenario_id": sc,
                     "success": bool(sb), "agent_tokens": 90})
    return pl.DataFrame(rows)


def test_difference_and_cross_checks_against_hand_computations() -> None:
    """The estimate is the difference of success rates; the GEE coefficient of a saturated model with every scenario
    holding both methods equally is the marginal log odds ratio, whatever the working correlation; the clustered
    McNemar statistic is (sum d_k)^2 / sum d_k^2 by hand, and with one pair per scenario McNemar's own (statsmodels,
    uncorrected)."""
    from scipy import stats
    from statsmodels.stats.contingency_tables import mcnemar

    from workbench.stats import clustered_mcnemar_p

    rng = np.random.default_rng(0)
    n = 60
    scen = [f"s{i % 6}" for i in range(n)]
    a = (rng.random(n) < 0.7).astype(int).tolist()
    b = (rng.random(n) < 0.5).astype(int).tolist()
    got = paired_difference(runs_for(a, b, scen), "acc", a="A", b="B", by=(), n_boot=200).row(0, named=True)
    assert got["estimate"] == pytest.approx(np.mean(a) - np.mean(b)) and got["n"] == n and got["n_clusters"] == 6
    logit = lambda p: np.log(p / (1 - p))  # noqa: E731
    assert got["gee_coef"] == pytest.approx(logit(np.mean(a)) - logit(np.mean(b)), rel=1e-6)
    assert 0 < got["gee_p"] < 1 and got["reason"] is None
    aa, bb, cl = np.array(a, bool), np.array(b, bool), np.array(scen)
    d = np.array([np.sum(aa & ~bb & (cl == s)) - np.sum(~aa & bb & (cl == s)) for s in sorted(set(scen))])
    assert got["mcnemar_p"] == pytest.approx(stats.chi2.sf(d.sum() ** 2 / np.sum(d**2), 1))
    table = [[int((aa & bb).sum()), int((aa & ~bb).sum())], [int((~aa & bb).sum()), int((~aa & ~bb).sum())]]
    plain = mcnemar(table, exact=False, correction=False).pvalue
    assert clustered_mcnemar_p(aa, bb, np.arange(n)) == pytest.approx(plain)
    assert clustered_mcnemar_p(aa, aa, cl) == 1.0  # no discordant pair


def test_one_scenario_gets_an_estimate_and_a_reason_not_a_crash() -> None:
    """A group with one scenario (the leave-one-scenario-out step had nothing left and crashed)."""
    got = paired_difference(runs_for([1, 1, 0, 1], [0, 1, 0, 0], ["s0"] * 4), "acc", a="A", b="B", by=(),
                            n_boot=50).row(0, named=True)
    assert got["estimate"] == pytest.approx(0.5) and got["n_clusters"] == 1
    assert np.isnan(got["ci_low"]) and np.isnan(got["ci_high"]) and np.isnan(got["p_value"])
    assert "fewer than two scenarios: no interval" in got["reason"] and "GEE: fewer than two scenarios" in got["reason"]
    assert "p: fewer than two scenarios" in got["reason"]
    from workbench.stats import reliability

    rel = reliability(runs_for([1, 0], [1, 1], ["s0", "s0"]), k=1, by="method", n_boot=50).row(0, named=True)
    assert rel["acc"] == 0.5 and np.isnan(rel["acc_ci_low"]) and np.isnan(rel["acc_ci_high"])


def test_zero_variance_is_not_a_p_of_zero() -> None:
    """Four pairs in two scenarios, every pair favouring a by one: no spread to test against, p is NaN (was 0.0)."""
    got = paired_difference(runs_for([1, 1, 1, 1], [0, 0, 0, 0], ["s0", "s0", "s1", "s1"]), "acc", a="A", b="B",
                            by=(), n_boot=50, cross_checks=False).row(0, named=True)
    assert got["estimate"] == 1.0 and np.isnan(got["p_value"])


def test_duplicate_pairing_keys_are_refused_with_the_column_that_differs() -> None:
    """Runs of two models on the same tasks: pairing on (task_id, replicate) alone crossed A@m1 with B@m2."""
    base = runs_for([1, 0, 1, 1], [0, 0, 1, 0], ["s0", "s0", "s1", "s1"])
    two = pl.concat([base.with_columns(pl.lit(m).alias("model")) for m in ("m1", "m2")])
    with pytest.raises(ValueError, match=r"method 'A' has 2 runs for task_id 't0', replicate 0; they differ in "
                                         r"\['model'\]: pass by=\('model',\)"):
        paired_difference(two, "acc", a="A", b="B", by=())
    per_model = paired_difference(two, "acc", a="A", b="B", by=("model",), n_boot=50, cross_checks=False)
    assert per_model["n"].to_list() == [4, 4] and per_model["estimate"].to_list() == pytest.approx([0.5, 0.5])


def test_verdicts_follow_the_adjusted_test_and_the_metrics_direction() -> None:
    from workbench.stats import verdict

    row = {"metric": "acc", "estimate": -0.146, "ci_low": -0.269, "ci_high": -0.022, "p_holm": 0.246}
    assert verdict(row) == "no difference found"  # the unadjusted interval excludes 0, Holm does not
    assert verdict({**row, "p_holm": 0.01}) == "worse"
    assert verdict({"metric": "tokens", "estimate": 500.0, "p_holm": 0.001}) == "worse"  # more tokens
    assert verdict({"metric": "tokens", "estimate": -500.0, "p_holm": 0.001}) == "better"
    assert verdict({"metric": "acc", "estimate": 0.2, "p_holm": float("nan")}) == "no difference found"


def _null_runs(rng: np.random.Generator, scenarios: int, tasks: int = 10, replicates: int = 2) -> pl.DataFrame:
    """No difference on average, but each scenario favours one method (d_s ~ N(0, 0.15)): the clustered null."""
    rows = []
    for s in range(scenarios):
        q, d = rng.uniform(0.3, 0.7), rng.normal(0, 0.15)
        for t in range(tasks):
            for r in range(replicates):
                for m, p in (("A", q + d), ("B", q - d)):
                    rows.append({"method": m, "task_id": f"s{s}t{t}", "replicate": r, "scenario_id": f"s{s}",
                                 "success": bool(rng.random() < min(max(p, 0.01), 0.99))})
    return pl.DataFrame(rows)


@pytest.mark.study
@pytest.mark.parametrize("scenarios", [12, 30])
def test_cross_checks_hold_their_level_under_a_clustered_null(scenarios: int) -> None:
    """Rejection at 5% under the clustered null: the plain McNemar (statsmodels, exact) rejects about 30% of the
    time, the clustered one and the bias-reduced GEE about 5% (Wilson interval of the rate in the message)."""
    from statsmodels.stats.contingency_tables import mcnemar
    from statsmodels.stats.proportion import proportion_confint

    rng = np.random.default_rng(11 + scenarios)
    trials, hits = 200, {"mcnemar_p": 0, "gee_p": 0, "p_value": 0, "plain": 0}
    for _ in range(trials):
        runs = _null_runs(rng, scenarios)
        got = paired_difference(runs, "acc", a="A", b="B", by=(), n_boot=10).row(0, named=True)
        for k in ("mcnemar_p", "gee_p", "p_value"):
            hits[k] += got[k] < 0.05
        a = runs.filter(pl.col("method") == "A").sort("task_id", "replicate")["success"].to_numpy()
        b = runs.filter(pl.col("method") == "B").sort("task_id", "replicate")["success"].to_numpy()
        hits["plain"] += mcnemar([[np.sum(a & b), np.sum(a & ~b)], [np.sum(~a & b), np.sum(~a & ~b)]],
                                 exact=True).pvalue < 0.05
    rates = {k: (v / trials, proportion_confint(v, trials, method="wilson")) for k, v in hits.items()}
    print(f"null rejection at 5%, {scenarios} scenarios: " + ", ".join(
        f"{k} {r:.3f} [{lo:.3f}, {hi:.3f}]" for k, (r, (lo, hi)) in rates.items()))
    assert rates["plain"][0] > 0.15, rates  # the unclustered test the workbench used to report
    for k in ("mcnemar_p", "gee_p", "p_value"):
        assert rates[k][1][0] < 0.05 and rates[k][0] <= 0.09, (k, rates)


def test_pass_hat_k_and_tokens_pair_by_task() -> None:
    rows = []
    for t, (sa, sb) in enumerate([([1, 1, 1], [1, 0, 1]), ([1, 0, 0], [0, 0, 0])]):
        for r in range(3):
            rows += [{"method": "A", "task_id": f"t{t}", "replicate": r, "scenario_id": f"s{t}", "success": bool(sa[r]),
                      "agent_tokens": 10, "compressor_tokens": 5},
                     {"method": "B", "task_id": f"t{t}", "replicate": r, "scenario_id": f"s{t}", "success": bool(sb[r]),
                      "agent_tokens": 4, "compressor_tokens": None}]
    runs = pl.DataFrame(rows)
    hat = paired_difference(runs, "pass_hat_k", a="A", b="B", by=(), k=2, n_boot=50).row(0, named=True)
    # task 0: C(3,2)/C(3,2) - C(2,2)/C(3,2) = 1 - 1/3; task 1: 0 - 0
    assert hat["estimate"] == pytest.approx((2 / 3 + 0) / 2) and hat["n"] == 2 and hat["gee_p"] is None
    tok = paired_difference(runs, "tokens", a="A", b="B", by=(), n_boot=50).row(0, named=True)
    assert tok["estimate"] == pytest.approx(15 - 4)


def test_holm_adjusts_all_comparisons_together() -> None:
    rng = np.random.default_rng(1)
    rows = []
    for i in range(40):
        for m, p in (("base", 0.5), ("good", 0.8), ("same", 0.5)):
            rows.append({"method": m, "task_id": f"t{i}", "replicate": 0, "scenario_id": f"s{i % 8}",
                         "success": bool(rng.random() < p)})
    out = compare_to_baseline(pl.DataFrame(rows), "base", "acc", by=(), n_boot=100)
    assert out["a"].to_list() == ["good", "same"]
    # Holm by hand: the i-th smallest of m p-values times (m - i), running maximum, capped at 1
    p = out["p_value"].to_list()
    order = sorted(range(len(p)), key=lambda i: p[i])
    holm, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        holm[i] = running
    assert out["p_holm"].to_list() == pytest.approx(holm)
    # simultaneous intervals: each comparison's t interval at Bonferroni's level 1 - 0.05/2, computed afresh
    wide = pl.concat([paired_difference(pl.DataFrame(rows), "acc", a=a, b="base", by=(), n_boot=100,
                                        level=1 - 0.05 / 2, cross_checks=False) for a in ("good", "same")])
    assert out["sim_low"].to_list() == pytest.approx(wide["ci_low"].to_list())
    assert out["sim_high"].to_list() == pytest.approx(wide["ci_high"].to_list())
    assert out["p_bonferroni"].to_list() == pytest.approx([min(1.0, 2 * p) for p in out["p_value"]])
    for r in out.iter_rows(named=True):  # the interval excludes 0 exactly when Bonferroni's p is below 0.05
        assert (r["sim_low"] > 0 or r["sim_high"] < 0) == (r["p_bonferroni"] < 0.05)


@pytest.mark.study
@pytest.mark.parametrize("scenarios", [12, 30])
def test_paired_difference_interval_covers_the_true_difference(scenarios: int) -> None:
    """12 scenarios x 10 tasks x 2 replicates; a succeeds with q_s + d_s, b with q_s (q_s ~ U(0.2, 0.6), d_s ~
    U(-0.05, 0.25) per scenario): the true difference is 0.1, the mean over scenarios. The
    default interval holds its level from both sides, where a naive interval that treats pairs as independent
    (mean +/- 1.96 sd / sqrt(n)) does not."""
    from statsmodels.stats.proportion import proportion_confint

    rng = np.random.default_rng(7 + scenarios)
    hits = below = naive = 0
    trials = 400
    for _ in range(trials):
        d = np.repeat(0.1 + rng.uniform(-0.15, 0.15, size=scenarios), 20)  # q + d stays in [0.15, 0.85]
        q = np.repeat(rng.uniform(0.2, 0.6, size=scenarios), 20)
        u = rng.random(q.size)  # common random numbers: the pairs are correlated, as real paired runs are
        a = (u < q + d).astype(int)
        b = (np.where(rng.random(q.size) < 0.5, u, rng.random(q.size)) < q).astype(int)
        scen = [f"s{i // 20}" for i in range(q.size)]
        rows = [{"method": m, "task_id": f"t{i // 2}", "replicate": i % 2, "scenario_id": scen[i], "success": bool(x)}
                for m, xs in (("A", a), ("B", b)) for i, x in enumerate(xs)]
        r = paired_difference(pl.DataFrame(rows), "acc", a="A", b="B", by=(), n_boot=100, seed=int(rng.integers(1e9)),
                              cross_checks=False).row(0, named=True)
        hits += r["ci_low"] <= 0.1 <= r["ci_high"]
        below += r["ci_high"] < 0.1
        diff = a - b
        naive += abs(diff.mean() - 0.1) <= 1.96 * diff.std(ddof=1) / np.sqrt(diff.size)
    low, high = proportion_confint(hits, trials, method="wilson")
    message = (f"paired difference at {scenarios} scenarios: coverage {hits / trials:.3f} (Wilson [{low:.3f}, "
               f"{high:.3f}]); naive iid interval {naive / trials:.3f}")
    assert low <= 0.95 <= high, message
    assert below / trials < 0.05, message  # misses split between the two sides, not all on one
    print(message)
    assert naive / trials < 0.93, message

def _runs(outcomes: dict[tuple[str, str], list[int]], scenario: dict[str, str]) -> pl.DataFrame:
    return pl.DataFrame([{"method": m, "task_id": t, "replicate": i, "scenario_id": scenario[t], "success": bool(x),
                          "agent_tokens": 100 - 10 * x} for (m, t), xs in outcomes.items() for i, x in enumerate(xs)])


def test_probability_of_improvement_is_the_mean_mann_whitney_share_per_task() -> None:
    """Per task, U / (n_a n_b) with ties counted half (scipy's Mann-Whitney U), averaged over tasks."""
    from scipy.stats import mannwhitneyu

    from workbench.stats import probability_of_improvement

    out = {("A", "t0"): [1, 0, 1], ("B", "t0"): [0, 0], ("A", "t1"): [1, 1], ("B", "t1"): [1, 0, 1],
           ("A", "t2"): [0, 0], ("B", "t2"): [1, 1], ("A", "t3"): [1], ("B", "t3"): [1]}
    runs = _runs(out, {"t0": "s0", "t1": "s0", "t2": "s1", "t3": "s2"})
    got = probability_of_improvement(runs, "A", "B", by=(), n_boot=50).row(0, named=True)
    shares = [mannwhitneyu(out[("A", t)], out[("B", t)]).statistic / (len(out[("A", t)]) * len(out[("B", t)]))
              for t in ("t0", "t1", "t2", "t3")]
    assert got["estimate"] == pytest.approx(np.mean(shares)) and got["n"] == 4 and got["n_clusters"] == 3
    assert 0 <= got["ci_low"] <= got["estimate"] <= got["ci_high"] <= 1
    # tokens: fewer is better, and a run that succeeds spends fewer here, so the two views agree
    tok = probability_of_improvement(runs, "A", "B", "tokens", by=(), n_boot=50).row(0, named=True)
    assert tok["estimate"] == pytest.approx(got["estimate"])


def test_performance_profile_by_hand() -> None:
    from workbench.stats import performance_profile

    out = {("A", "t0"): [1, 1], ("A", "t1"): [1, 0], ("A", "t2"): [0, 0], ("A", "t3"): [1, 1]}
    runs = _runs(out, {"t0": "s0", "t1": "s0", "t2": "s1", "t3": "s1"})
    prof = performance_profile(runs, [0.0, 0.5, 0.99], n_boot=200)
    # success rates 1, 0.5, 0, 1: above 0 -> 3/4, above 0.5 -> 2/4, above 0.99 -> 2/4
    assert prof["estimate"].to_list() == [0.75, 0.5, 0.5] and prof["method"].to_list() == ["A"] * 3
    # resampling the two scenarios: s0 = {1, 0.5}, s1 = {0, 1}; above 0 the share is 1 (s0 twice), 0.5 or 0.75
    assert prof["ci_low"][0] >= 0.5 and prof["ci_high"][0] == 1.0


@pytest.mark.study
@pytest.mark.parametrize("scenarios", [12, 30])
def test_probability_of_improvement_interval_covers_the_truth(scenarios: int) -> None:
    """Independent runs, p_a = q_s + d_s and p_b = q_s per task (q_s ~ U(0.2, 0.6), d_s ~ U(-0.05, 0.25)): the
    probability of improvement is 0.5 + (p_a - p_b) / 2 per task, 0.55 over the population of scenarios."""
    from statsmodels.stats.proportion import proportion_confint

    from workbench.stats import probability_of_improvement

    rng = np.random.default_rng(7 + scenarios)
    trials, hits = 400, 0
    for _ in range(trials):
        rows = []
        for s in range(scenarios):
            q, d = rng.uniform(0.2, 0.6), rng.uniform(-0.05, 0.25)
            for t in range(10):
                for r in range(3):
                    for m, p in (("A", q + d), ("B", q)):
                        rows.append({"method": m, "task_id": f"s{s}t{t}", "replicate": r, "scenario_id": f"s{s}",
                                     "success": bool(rng.random() < p)})
        got = probability_of_improvement(pl.DataFrame(rows), "A", "B", by=(), n_boot=1).row(0, named=True)
        hits += got["ci_low"] <= 0.55 <= got["ci_high"]
    low, high = proportion_confint(hits, trials, method="wilson")
    message = f"probability of improvement at {scenarios} scenarios: coverage {hits / trials:.3f} (Wilson [{low:.3f}, {high:.3f}])"
    print(message)
    assert high >= 0.95 and low <= 0.95, message  # not told apart from the level


def test_gee_is_left_out_with_its_reason_when_a_scenario_is_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    """60 pairs over 6 scenarios: 20 outcomes a scenario. With at most 19 the GEE is not fitted and says why; the
    paired difference and McNemar are still given."""
    from workbench.stats import _compare as compare

    rng = np.random.default_rng(0)
    scen = [f"s{i % 6}" for i in range(60)]
    a, b = (rng.random(60) < 0.7).astype(int).tolist(), (rng.random(60) < 0.5).astype(int).tolist()
    monkeypatch.setattr(compare, "GEE_MAX_CLUSTER", 20)
    assert 0 < paired_difference(runs_for(a, b, scen), "acc", a="A", b="B", by=(), n_boot=50).row(0, named=True)[
        "gee_p"] < 1
    monkeypatch.setattr(compare, "GEE_MAX_CLUSTER", 19)
    got = paired_difference(runs_for(a, b, scen), "acc", a="A", b="B", by=(), n_boot=50).row(0, named=True)
    assert np.isnan(got["gee_p"]) and np.isnan(got["gee_coef"]) and "a scenario of 20 outcomes" in got["reason"]
    assert got["estimate"] == pytest.approx(np.mean(a) - np.mean(b)) and 0 < got["mcnemar_p"] < 1
