"""Acc, Pass^k and Pass@k against brute force and hand computation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.stats import (
    pass_at_k,
    pass_hat_k,
    reliability,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=7), st.integers(1, 7))
def test_pass_k_equal_brute_force_over_subsets(successes: list[bool], k: int) -> None:
    if k > len(successes):
        with pytest.raises(ValueError, match="larger than the number of replicates"):
            pass_hat_k(len(successes), sum(successes), k)
        return
    hat, at = brute_force_pass(successes, k)
    assert pass_hat_k(len(successes), sum(successes), k) == pytest.approx(hat)
    assert pass_at_k(len(successes), sum(successes), k) == pytest.approx(at)


def runs_frame() -> pl.DataFrame:
    # method A: task 1 solved 3/3, task 2 solved 1/3; method B: task 1 2/3, task 2 0/3
    rows = []
    outcome = {("A", "t1"): [1, 1, 1], ("A", "t2"): [1, 0, 0], ("B", "t1"): [1, 0, 1], ("B", "t2"): [0, 0, 0]}
    for (m, t), succ in outcome.items():
        for r, s in enumerate(succ):
            rows.append({"method": m, "task_id": t, "replicate": r, "success": bool(s)})
    return pl.DataFrame(rows)


@pytest.mark.parametrize("lazy", [False, True], ids=["in memory", "scanned"])
def test_reliability_by_method_hand_computed(lazy: bool) -> None:
    frame = runs_frame()
    out = reliability(frame.lazy() if lazy else frame, k=3, by="method").sort("method")
    a, b = out.row(0, named=True), out.row(1, named=True)
    assert a["acc"] == pytest.approx(4 / 6) and b["acc"] == pytest.approx(2 / 6)
    assert a["pass_hat_k"] == pytest.approx(0.5) and b["pass_hat_k"] == 0.0
    assert a["pass_at_k"] == 1.0 and b["pass_at_k"] == pytest.approx(0.5)
    # per-replicate accuracies A: [1, .5, .5] -> sample std
    assert a["acc_std"] == pytest.approx(np.std([1, 0.5, 0.5], ddof=1))
    assert b["acc_std"] == pytest.approx(np.std([0.5, 0, 0.5], ddof=1))
    assert (a["n_tasks"], a["n_runs"], a["k"]) == (2, 6, 3)


def test_reliability_pass_hat_1_is_acc_and_unbiased_over_subsets() -> None:
    frame = runs_frame()
    out = reliability(frame, k=1)
    assert out["pass_hat_k"][0] == pytest.approx(out["acc"][0]) == pytest.approx(out["pass_at_k"][0])
    two = reliability(frame, k=2, by="method").sort("method")
    # A: t1 3/3 -> 1; t2 1/3 -> C(1,2)/C(3,2) = 0 ; B: t1 2/3 -> 1/3; t2 -> 0
    assert two["pass_hat_k"].to_list() == pytest.approx([0.5, 1 / 6])


def test_reliability_errors() -> None:
    with pytest.raises(ValueError, match="task 't1' has 3 run"):
        reliability(runs_frame(), k=4, by="method")
    with pytest.raises(ValueError, match="no column"):
        reliability(runs_frame().drop("success"), k=1)
    with_null = runs_frame().with_columns(pl.when(pl.int_range(pl.len()) == 4).then(None)
                                          .otherwise(pl.col("success")).alias("success"))
    for frame in (with_null, with_null.lazy()):
        with pytest.raises(ValueError, match="success has nulls"):
            reliability(frame, k=1)


def test_reliability_does_not_depend_on_row_order() -> None:
    rng = np.random.default_rng(3)
    rows = [{"method": m, "task_id": f"t{t}", "replicate": r, "success": bool(rng.random() < 0.6)}
            for m in ("a", "b") for t in range(40) for r in range(3)]
    frame = pl.DataFrame(rows)
    ref = reliability(frame, k=3, by="method").sort("method")
    for seed in range(5):
        shuffled = frame.sample(fraction=1.0, shuffle=True, seed=seed)
        assert reliability(shuffled, k=3, by="method").sort("method").equals(ref)
        # shuffled and scanned (aggregated as read), with scenario intervals: those of the sorted runs in memory
        with_scen = shuffled.with_columns((pl.col("task_id").str.slice(1).cast(pl.Int64) % 7).cast(pl.Utf8)
                                          .alias("scenario_id"))
        assert reliability(with_scen.lazy(), k=3, by="method", n_boot=200, seed=1).sort("method").equals(
            reliability(with_scen.sort("task_id"), k=3, by="method", n_boot=200, seed=1).sort("method"))


def test_reliability_by_k_up_to_the_fewest_trials() -> None:
    from workbench.stats import reliability_by_k

    runs = runs_frame().filter(pl.col("method") == "A")  # t1 solved 3/3, t2 1/3
    got = reliability_by_k(runs)
    assert got["k"].to_list() == [1, 2, 3]
    # Pass^k: t1 always 1; t2 C(1,k)/C(3,k): 1/3, 0, 0. Pass@k: t1 1; t2 1 - C(2,k)/C(3,k): 1/3, 2/3, 1
    assert got["pass_hat_k"].to_list() == pytest.approx([(1 + 1 / 3) / 2, 0.5, 0.5])
    assert got["pass_at_k"].to_list() == pytest.approx([(1 + 1 / 3) / 2, (1 + 2 / 3) / 2, 1.0])


def test_unequal_trial_counts_each_task_its_own_n_equal_weights() -> None:
    """Task a: 2 of 3 trials succeed; task b: 3 of 5. Pass^2 per task by brute force over its own 2-subsets,
    then the plain mean over the two tasks."""
    from itertools import combinations

    outcomes = {"a": [1, 1, 0], "b": [1, 0, 1, 1, 0]}
    runs = pl.DataFrame([{"task_id": t, "replicate": r, "success": bool(s)}
                         for t, ss in outcomes.items() for r, s in enumerate(ss)])
    got = reliability(runs, k=2).row(0, named=True)
    hat = {t: np.mean([all(c) for c in combinations(ss, 2)]) for t, ss in outcomes.items()}
    at = {t: np.mean([any(c) for c in combinations(ss, 2)]) for t, ss in outcomes.items()}
    assert got["pass_hat_k"] == pytest.approx((hat["a"] + hat["b"]) / 2)  # (1/3 + 3/10) / 2
    assert got["pass_at_k"] == pytest.approx((at["a"] + at["b"]) / 2)
    assert got["acc"] == pytest.approx(5 / 8) and got["n_runs"] == 8
    with pytest.raises(ValueError, match="fewer than k=4"):
        reliability(runs, k=4)


def brute_force_pass(successes: Sequence[bool], k: int) -> tuple[float, float]:
    """The test oracle: Pass^k and Pass@k of one task by enumerating every k-subset of its runs."""
    from itertools import combinations

    subsets = list(combinations(range(len(successes)), k))
    s = np.asarray(successes, dtype=bool)
    all_ok = np.mean([s[list(idx)].all() for idx in subsets])
    any_ok = np.mean([s[list(idx)].any() for idx in subsets])
    return float(all_ok), float(any_ok)


def test_intervals_are_the_cluster_t_by_hand_and_stay_within_0_and_1() -> None:
    """Acc's interval: estimate +/- t(G-1) * jackknife SE over scenarios, computed here by hand; a share near 1 gets
    bounds clipped to [0, 1] (the testbed showed -0.032 and 1.054)."""
    from scipy import stats

    succ = {"s0": [1, 1, 1, 0], "s1": [1, 1, 1, 1], "s2": [1, 1, 1, 1], "s3": [0, 1, 1, 1]}
    rows = [{"task_id": f"{s}t{i}", "scenario_id": s, "replicate": 0, "success": bool(v)}
            for s, vs in succ.items() for i, v in enumerate(vs)]
    got = reliability(pl.DataFrame(rows), k=1, n_boot=20).row(0, named=True)
    values = {s: np.array(v, float) for s, v in succ.items()}
    jk = np.array([np.concatenate([v for t, v in values.items() if t != s]).mean() for s in values])
    se = np.sqrt(3 / 4 * np.sum((jk - jk.mean()) ** 2))
    est = 14 / 16
    half = stats.t.ppf(0.975, 3) * se
    assert est + half > 1  # the unclipped bound leaves [0, 1]
    assert got["acc"] == est
    assert got["acc_ci_low"] == pytest.approx(est - half) and got["acc_ci_high"] == 1.0
