"""TRACE diagnostics on hand-computed cases and their directions on a small testbed."""

from __future__ import annotations

import polars as pl
import pytest

from workbench.analyses.sjc import support_from_scores
from workbench.analyses.sjc import pass_vs_tokens, results_table
from workbench.analyses.sjc import (
    keep_rate_by_section,
)
from workbench.summaries import fact_check
from workbench.sim import DatasetConfig, simulate
from workbench.analyses.trace import (
    continuation_burden,
    defects_chosen_vs_rejected,
    pass_pairs,
    verifier_score,
    verifier_table,
)


def test_trace_equations_and_fact_check() -> None:
    assert continuation_burden([True, False, True, False], [True, True, False, False]) == 3  # union, once
    assert verifier_score([1, 1], [3, 2]) == -1.5
    r = fact_check("- Paid INV-1034 ($120.50).\n- INV-2000 at $99.00", "get INV-1034: amount $120.50\nlist: INV-1034, INV-2000, INV-3000",
                   kept="Settle G7")
    assert r.unsourced_numbers == ("99.00",) and r.dropped_ids == ("INV-3000",) and r.silent_defect
    clean = fact_check("- Paid INV-1034 ($1,200.5)", "INV-1034 amount 1200.50", kept="")
    assert not clean.silent_defect


def test_pass_pairs_and_results_table_hand_computed() -> None:
    rows = []
    for t, succ in (("t1", [1, 1, 0, 1]), ("t2", [0, 0, 1, 1])):
        for rep, s in enumerate(succ):
            rows.append({"method": "m", "task_id": t, "replicate": rep, "success": bool(s), "subset": "easy",
                         "steps": 10, "peak_tokens": 2000, "agent_tokens": 100, "compressor_tokens": 50})
    runs = pl.DataFrame(rows)
    p = pass_pairs(runs).row(0, named=True)
    # pair (0,1): t1 both, t2 none -> pass2 .5, pass@2 .5; pair (2,3): t1 one, t2 both -> pass2 .5, pass@2 1
    assert (p["pass2"], p["pass_at_2"]) == (0.5, 0.75)
    t = results_table(runs, k=2, block="subset").row(0, named=True)
    assert t["peak_k"] == 2.0 and t["best"] is True
    assert pass_vs_tokens(runs, k=2)["tokens_per_task"][0] == 150


def test_directions_on_the_testbed() -> None:
    # its own, larger testbed (36 tasks): the directions it checks need more runs than the shared one has
    tables = simulate(DatasetConfig(tasks=36, runs=2, budgets=(48,), policies=("prompting", "verifier", "oracle")),
                      workers=1)
    runs = tables["runs"]
    entries = support_from_scores(tables["entries"].join(runs.filter(pl.col("method") == "prompting").select("run_id"),
                                                         on="run_id", how="semi"), tables["scores"])
    keep = {r["section"]: r["keep_rate"] for r in keep_rate_by_section(entries).iter_rows(named=True)}
    assert keep["Exact identifiers"] > keep["Open TODOs"] and keep["Exact identifiers"] > keep["Constraints/Rules"]
    d = defects_chosen_vs_rejected(tables["candidates"], runs)
    v = {r["chosen"]: r for r in d.filter(pl.col("method") == "verifier").iter_rows(named=True)}
    assert v[True]["visible_mean"] < v[False]["visible_mean"]  # it hears the visible channel
    assert v[True]["silent_mean"] >= 0.8 * v[False]["silent_mean"]  # and is not cleaner on the silent one
    vt = verifier_table(runs)
    assert set(vt["method"]) == {"prompting", "verifier", "oracle"}


def test_article_comparison_pairs_published_with_testbed(small_testbed: dict[str, pl.DataFrame]) -> None:
    from pathlib import Path

    chosen = small_testbed["runs"].filter(pl.col("method").is_in(["prompting", "verifier", "fifo"])).select("run_id")
    tables = {name: small_testbed[name].join(chosen, on="run_id", how="semi") for name in ("runs", "candidates")}
    published = pl.read_csv(Path(__file__).resolve().parents[2] / "data" / "published" / "text_numbers.csv")
    from workbench.analyses.trace import article_comparison

    side = article_comparison(tables["runs"], tables["candidates"], published)
    acc = side.filter(pl.col("quantity") == "acc_summary_budget48").row(0, named=True)
    assert acc["published"] == 42.7
    assert acc["testbed"] == pytest.approx(
        100 * tables["runs"].filter(pl.col("method") == "prompting")["success"].mean())
    assert side.filter(pl.col("quantity") == "acc_oracle_budget48")["testbed"].is_nan().all()  # no oracle runs


def test_post_compaction_burden_hand_computed() -> None:
    """Two compacted runs and their matched uncompressed runs; excess blocked/repeated per action worked by hand."""
    from workbench.analyses.trace import post_compaction_burden

    runs = pl.DataFrame({"run_id": ["r1", "b1", "r2", "b2"], "method": ["m", "no_compression"] * 2,
                         "task_id": ["t1", "t1", "t2", "t2"], "replicate": [0] * 4,
                         "scenario_id": ["s1", "s1", "s2", "s2"]})
    rows = []
    for rid, n, boundary, blocked, repeated in (("r1", 5, 2, {2}, {3}), ("b1", 5, None, {3}, set()),
                                                ("r2", 4, 1, {1}, set()), ("b2", 4, None, {1}, set())):
        for step in range(n):
            rows.append({"run_id": rid, "step": step, "blocked": step in blocked, "repeated": step in repeated,
                         "boundary_before": step == boundary})
    got = post_compaction_burden(pl.DataFrame(rows), runs, method="m", horizon=2, n_boot=50)
    est = {(r["k"], r["measure"]): r["estimate"] for r in got.iter_rows(named=True)}
    # k=1: r1 step 2 blocked vs b1 not (+1), r2 step 1 blocked vs b2 blocked (0)
    # k=2: r1 step 3 not blocked vs b1 blocked (-1), repeated vs not (+1); r2 step 2 nothing (0)
    assert est == {(1, "blocked"): 0.5, (1, "repeated"): 0.0, (2, "blocked"): -0.5, (2, "repeated"): 0.5}
    assert set(got["n"]) == {2} and set(got["method"]) == {"percentile"}


@pytest.mark.parametrize("lazy", [False, True], ids=["in memory", "scanned"])
def test_post_compaction_burden_counts_a_step_after_each_boundary_it_follows(lazy: bool) -> None:
    """Boundaries before steps 1 and 2 of one run, horizon 2: step 2 is k = 2 after the first and k = 1 after the
    second. Only step 2 is blocked, the baseline never: k = 1 has steps 1 and 2 (0 and 1 blocked, excess 0.5),
    k = 2 steps 2 and 3 (1 and 0: 0.5), each over two actions."""
    from workbench.analyses.trace import post_compaction_burden

    runs = pl.DataFrame({"run_id": ["r", "b"], "method": ["m", "no_compression"], "task_id": ["t", "t"],
                         "replicate": [0, 0], "scenario_id": ["s", "s"]})
    steps = pl.DataFrame([{"run_id": rid, "step": i, "blocked": rid == "r" and i == 2, "repeated": False,
                           "boundary_before": rid == "r" and i in (1, 2)} for rid in ("r", "b") for i in range(5)])
    got = post_compaction_burden(steps.lazy() if lazy else steps, runs, method="m", horizon=2, n_boot=20)
    assert {(r["k"], r["measure"]): (r["estimate"], r["n"]) for r in got.iter_rows(named=True)} == {
        (1, "blocked"): (0.5, 2), (1, "repeated"): (0.0, 2), (2, "blocked"): (0.5, 2), (2, "repeated"): (0.0, 2)}


@pytest.mark.parametrize("lazy", [False, True], ids=["in memory", "scanned"])
def test_defects_chosen_vs_rejected_hand_computed(lazy: bool) -> None:
    """Run r1 (budget 48): the chosen candidate has 2 silent, 0 visible defects; the two rejected 0 and 3, 1 and 1.
    Run r2 is at budget 96 and left out. Chosen: 1 candidate, silent 2, any silent 1, visible 0; rejected: 2,
    silent 0.5, any silent 0.5, visible 2."""
    candidates = pl.DataFrame({"run_id": ["r1", "r1", "r1", "r2"], "boundary": [0, 0, 0, 0],
                               "chosen": [True, False, False, True], "silent_defects": [2, 0, 1, 9],
                               "visible_defects": [0, 3, 1, 9]})
    runs = pl.DataFrame({"run_id": ["r1", "r2"], "method": ["verifier"] * 2, "budget": [48, 96]})
    got = defects_chosen_vs_rejected(candidates.lazy() if lazy else candidates, runs, budget=48)
    assert got.select("method", "chosen", "candidates", "silent_mean", "any_silent", "visible_mean").rows() == [
        ("verifier", True, 1, 2.0, 1.0, 0.0), ("verifier", False, 2, 0.5, 0.5, 2.0)]
