"""Paired method comparisons against hand computations and direct statsmodels calls, and their coverage."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from workbench.compare import compare_to_baseline, paired_difference


def runs_for(success_a: list[int], success_b: list[int], scenarios: list[str]) -> pl.DataFrame:
    rows = []
    for i, (sa, sb, sc) in enumerate(zip(success_a, success_b, scenarios, strict=True)):
        rows.append({"run_id": f"a{i}", "method": "A", "task_id": f"t{i}", "replicate": 0, "scenario_id": sc,
                     "success": bool(sa), "agent_tokens": 100 + i})
        rows.append({"run_id": f"b{i}", "method": "B", "task_id": f"t{i}", "replicate": 0, "scenario_id": sc,
                     "success": bool(sb), "agent_tokens": 90})
    return pl.DataFrame(rows)


def test_difference_gee_and_mcnemar_equal_direct_statsmodels() -> None:
    import statsmodels.api as sm
    from statsmodels.stats.contingency_tables import mcnemar

    rng = np.random.default_rng(0)
    n = 60
    scen = [f"s{i % 6}" for i in range(n)]
    a = (rng.random(n) < 0.7).astype(int).tolist()
    b = (rng.random(n) < 0.5).astype(int).tolist()
    got = paired_difference(runs_for(a, b, scen), "acc", a="A", b="B", by=(), n_boot=200).row(0, named=True)
    assert got["estimate"] == pytest.approx(np.mean(a) - np.mean(b)) and got["n"] == n and got["n_clusters"] == 6
    y = np.array(a + b)
    x = sm.add_constant(np.array([1] * n + [0] * n))
    groups = np.unique(np.array(scen + scen), return_inverse=True)[1]
    gee = sm.GEE(y, x, groups=groups, family=sm.families.Binomial(), cov_struct=sm.cov_struct.Exchangeable()).fit()
    assert got["gee_coef"] == pytest.approx(gee.params[1]) and got["gee_p"] == pytest.approx(gee.pvalues[1])
    aa, bb = np.array(a, bool), np.array(b, bool)
    table = [[int((aa & bb).sum()), int((aa & ~bb).sum())], [int((~aa & bb).sum()), int((~aa & ~bb).sum())]]
    assert got["mcnemar_p"] == pytest.approx(mcnemar(table, exact=True).pvalue)


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
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(1)
    rows = []
    for i in range(40):
        for m, p in (("base", 0.5), ("good", 0.8), ("same", 0.5)):
            rows.append({"method": m, "task_id": f"t{i}", "replicate": 0, "scenario_id": f"s{i % 8}",
                         "success": bool(rng.random() < p)})
    out = compare_to_baseline(pl.DataFrame(rows), "base", "acc", by=(), n_boot=100)
    assert out["a"].to_list() == ["good", "same"]
    assert out["p_holm"].to_list() == pytest.approx(list(multipletests(out["p_value"].to_numpy(), method="holm")[1]))
    # simultaneous intervals: each comparison's t interval at Bonferroni's level 1 - 0.05/2, computed afresh
    wide = pl.concat([paired_difference(pl.DataFrame(rows), "acc", a=a, b="base", by=(), n_boot=100,
                                        level=1 - 0.05 / 2, cross_checks=False) for a in ("good", "same")])
    assert out["sim_low"].to_list() == pytest.approx(wide["ci_low"].to_list())
    assert out["sim_high"].to_list() == pytest.approx(wide["ci_high"].to_list())
    assert out["p_bonferroni"].to_list() == pytest.approx([min(1.0, 2 * p) for p in out["p_value"]])
    for r in out.iter_rows(named=True):  # the interval excludes 0 exactly when Bonferroni's p is below 0.05
        assert (r["sim_low"] > 0 or r["sim_high"] < 0) == (r["p_bonferroni"] < 0.05)


@pytest.mark.slow
def test_paired_difference_interval_covers_the_true_difference() -> None:
    """12 scenarios x 10 tasks x 2 replicates; a succeeds with q_s + 0.1, b with q_s (q_s ~ U(0.2, 0.7) per
    scenario, shared by both methods): the true difference is 0.1 exactly. Coverage of the default interval."""
    rng = np.random.default_rng(7)
    hits, trials = 0, 600
    for _ in range(trials):
        q = np.repeat(rng.uniform(0.2, 0.7, size=12), 20)
        u = rng.random(q.size)  # common random numbers: the pairs are correlated, as real paired runs are
        a = (u < q + 0.1).astype(int)
        b = (np.where(rng.random(q.size) < 0.5, u, rng.random(q.size)) < q).astype(int)
        scen = [f"s{i // 20}" for i in range(q.size)]
        rows = [{"method": m, "task_id": f"t{i // 2}", "replicate": i % 2, "scenario_id": scen[i], "success": bool(x)}
                for m, xs in (("A", a), ("B", b)) for i, x in enumerate(xs)]
        r = paired_difference(pl.DataFrame(rows), "acc", a="A", b="B", by=(), n_boot=100, seed=int(rng.integers(1e9)),
                              cross_checks=False).row(0, named=True)
        hits += r["ci_low"] <= 0.1 <= r["ci_high"]
    coverage = hits / trials
    print(f"paired_difference coverage: {coverage:.3f}")
    assert coverage >= 0.93
