"""Analysis modules on small hand-computed cases, and their directions on a testbed."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from workbench.attribution import failures_by_scenario as table11
from workbench.attribution import failure_counts as counts
from workbench.attribution import followed_entry_share
from workbench.composition import by_boundary, entries_by_section, match_next, persistence, support_from_scores
from workbench.metrics.tables import pass_vs_tokens, results_table
from workbench.sensitivity import (
    decision_flips,
    first_vs_later,
    keep_rate_by_section,
    largest_change,
    pruned_fraction,
    score_distribution,
    sweep,
)
from workbench.sim.dataset import DatasetConfig, simulate
from workbench.trace import (
    continuation_burden,
    defects_chosen_vs_rejected,
    fact_check,
    pass_pairs,
    verifier_score,
    verifier_table,
)


def entries_frame() -> pl.DataFrame:
    rows = [
        # run, boundary, section, position, text, supported
        ("r", 0, "Decisions", 0, "- Paid INV-1 ($10.00).", True),
        ("r", 0, "Open TODOs", 1, "- File the report.", False),
        ("r", 0, "Exact identifiers", 2, "- INV-1", True),
        ("r", 1, "Decisions", 0, "- Paid INV-1 ($10.00).", True),
        ("r", 1, "Open TODOs", 1, "- File the report!", False),  # fuzzy match of the TODO
        ("r", 1, "Decisions", 2, "- Skip INV-2.", False),
        ("r", 2, "Open TODOs", 0, "- File the report!", False),
    ]
    return pl.DataFrame(rows, schema=["run_id", "boundary", "section", "position", "text", "supported"], orient="row")


def test_entries_by_section_hand_computed() -> None:
    t = entries_by_section(entries_frame())
    got = {r["section"]: (r["entries"], r["unsupported"]) for r in t.iter_rows(named=True)}
    assert got["Decisions"] == (3, 1) and got["Open TODOs"] == (3, 3) and got["Exact identifiers"] == (1, 0)
    assert got["Reasoning (Decisions + Open TODOs)"] == (6, 4) and got["All"] == (7, 4)


def test_by_boundary_hand_computed() -> None:
    t = by_boundary(entries_frame())
    assert t["k"].to_list() == [1, 2, 3] and t["summaries"].to_list() == [1, 1, 1]
    assert t["unsupported_all"].to_list() == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert t["unsupported_reasoning_per_summary"].to_list() == [1, 2, 1]


def test_match_next_exact_then_fuzzy() -> None:
    m = match_next(["- Paid INV-1", "- File the report.", "- Gone"], ["- paid   inv-1", "- File the report!"])
    assert m == [(0, True), (1, False), (None, False)]


def test_persistence_hand_computed() -> None:
    frame, exact_share = persistence(entries_frame(), max_d=2)
    got = {(r["d"], r["supported"]): (r["entries"], r["present"]) for r in frame.iter_rows(named=True)}
    # first appearances at b0: Paid (sup) and TODO (unsup); at b1: Skip (unsup)
    assert got[(1, True)] == (1, 1)  # Paid persists into b1
    assert got[(1, False)] == (2, 1)  # TODO persists (fuzzy), Skip does not
    assert got[(2, True)] == (1, 0) and got[(2, False)] == (1, 1)  # at d=2 only the b0 entries count
    assert exact_share == pytest.approx(2 / 3)  # b0->b1 Paid exact, TODO fuzzy; b1->b2 TODO exact


def test_support_from_scores_nulls_stay_null() -> None:
    e = pl.DataFrame({"entry_id": ["a", "b", "c"]})
    s = pl.DataFrame({"entry_id": ["a", "b"], "judge": ["j", "j"], "score": [0.7, None]})
    assert support_from_scores(e, s)["supported"].to_list() == [True, None, None]


def test_pruned_fraction_vectorised_equals_loop() -> None:
    rng = np.random.default_rng(0)
    s = np.round(rng.random(1000), 2)
    s[:10] = np.nan  # no usable answer: never pruned
    taus = np.linspace(0, 1, 101)
    loop = [float(np.mean(np.nan_to_num(s, nan=np.inf) < t)) for t in taus]
    assert pruned_fraction(s, taus) == pytest.approx(loop)


def test_sweep_bands_and_largest_change() -> None:
    rng = np.random.default_rng(1)
    f = pl.DataFrame({"score": rng.random(600), "scenario_id": rng.integers(0, 20, 600).astype(str),
                      "setting": ["a"] * 300 + ["b"] * 300})
    curve = sweep(f, np.linspace(0, 1, 11), setting="setting", n_boot=300)
    assert curve.height == 22
    assert (curve["ci_low"] <= curve["estimate"] + 1e-12).all() and (curve["estimate"] <= curve["ci_high"] + 1e-12).all()
    a = f.filter(pl.col("setting") == "a")["score"].to_numpy()
    assert curve.filter(pl.col("setting") == "a")["estimate"].to_list() == pytest.approx(
        list(pruned_fraction(a, np.linspace(0, 1, 11))))
    ch = largest_change(curve).filter(pl.col("setting") == "a")["change"][0]
    assert ch == pytest.approx(float(np.mean(a < 0.7) - np.mean(a < 0.3)))


def test_distribution_keep_rates_first_vs_later_and_flips() -> None:
    f = pl.DataFrame({"section": ["Decisions", "Decisions", "Open TODOs", "Open TODOs"],
                      "score": [0.9, 0.1, 0.5, None], "boundary": [0, 1, 0, 1]})
    d = score_distribution(f)
    row = d.filter(pl.col("section") == "All").row(0, named=True)
    assert (row["n"], row["share_high"], row["share_low"], row["share_middle"]) == (3, pytest.approx(1 / 3),
                                                                                  pytest.approx(1 / 3), pytest.approx(1 / 3))
    k = {r["section"]: r["keep_rate"] for r in keep_rate_by_section(f).iter_rows(named=True)}
    assert k == {"Decisions": 0.5, "Open TODOs": 1.0}
    fl = first_vs_later(f)
    assert fl["pruned"].to_list() == [0.0, 0.5]
    reps = pl.DataFrame({"entry_id": ["a", "a", "b", "b", "c", "c"], "judge": "j", "repeat": [0, 1] * 3,
                         "score": [0.4, 0.6, 0.9, 0.8, 0.1, 0.55]})
    ref = pl.DataFrame({"entry_id": ["a", "b", "c"], "score": [0.1, 0.9, 0.15]})
    out = decision_flips(reps, 0.5, ref).row(0, named=True)
    assert out["flip_share"] == pytest.approx(2 / 3) and out["flip_share_ref_low"] == pytest.approx(1.0)


def test_table11_counts_and_exclusion() -> None:
    runs = pl.DataFrame({"run_id": ["a", "b", "c", "d"], "scenario_id": ["s1", "s1", "s2", "bad"],
                         "task_id": ["t1", "t2", "t3", "t4"]})
    att = pl.DataFrame({"run_id": ["a", "b", "c", "d"], "failed_check": ["report"] * 4, "action_step": [1, 2, 3, 4],
                        "entry_id": ["e1", None, "e3", None], "pattern": ["RC", "unrelated", "CS", "other"],
                        "support": ["unsupported", None, "contradicted", None]})
    t, excluded = table11(att, runs, exclude={"bad": "reference solution inconsistent"})
    total = t.filter(pl.col("scenario_id") == "Total").row(0, named=True)
    assert (total["failed_runs"], total["RC"], total["CS"], total["unrelated"], total["contradicted"]) == (3, 1, 1, 1, 1)
    assert excluded.to_dicts() == [{"scenario_id": "bad", "failed_runs": 1, "reason": "reference solution inconsistent"}]
    by_pair, per_run = counts(att, runs)
    assert by_pair.height == 4 and per_run.height == 4
    assert followed_entry_share(att)["follows_entry"] == 0.5


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


def test_published_numbers_cite_their_source_and_match_the_text() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "data" / "published"
    focus = pl.read_csv(root / "focus_tables.csv")
    text = pl.read_csv(root / "text_numbers.csv")
    assert focus["source"].str.contains(r"line \d+$").all() and text["source"].str.contains(r"line \d+$").all()
    assert set(focus["table"]) == {f"Table {i}" for i in (*range(1, 11), 12, 13, 14)}
    # spot checks against numbers the FOCUS text repeats in prose
    row = focus.filter((pl.col("table") == "Table 1") & pl.col("panel").str.starts_with("(a)")
                       & (pl.col("method") == "FOCUS-D") & (pl.col("metric") == "acc"))
    assert row["value"][0] == 64.9  # "jumping to 64.9% absolute accuracy"
    assert focus.filter((pl.col("table") == "Table 5") & (pl.col("method") == "FOCUS (parallel)")
                        & (pl.col("metric") == "latency_s"))["value"][0] == 36.5
    assert text.filter(pl.col("quantity") == "auroc_support_jev")["value"][0] == 0.905


def test_article_comparison_pairs_published_with_testbed() -> None:
    from pathlib import Path

    tables = simulate(DatasetConfig(tasks=24, runs=2, budgets=(48,), policies=("prompting", "verifier", "fifo")),
                      workers=1)
    published = pl.read_csv(Path(__file__).resolve().parents[1] / "data" / "published" / "text_numbers.csv")
    from workbench.trace import article_comparison

    side = article_comparison(tables["runs"], tables["candidates"], published)
    acc = side.filter(pl.col("quantity") == "acc_summary_budget48").row(0, named=True)
    assert acc["published"] == 42.7
    assert acc["testbed"] == pytest.approx(
        100 * tables["runs"].filter(pl.col("method") == "prompting")["success"].mean())
    assert side.filter(pl.col("quantity") == "acc_oracle_budget48")["testbed"].is_nan().all()  # no oracle runs
