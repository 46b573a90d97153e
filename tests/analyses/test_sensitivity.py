"""Threshold sensitivity: pruned fraction, sweep bands, distributions, keep rates, decision flips."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from workbench.analyses.sjc import (
    decision_flips,
    first_vs_later,
    keep_rate_by_section,
    largest_change,
    score_distribution,
    sweep,
)


def test_sweep_bands_and_largest_change() -> None:
    rng = np.random.default_rng(1)
    f = pl.DataFrame({"score": rng.random(600), "scenario_id": rng.integers(0, 20, 600).astype(str),
                      "setting": ["a"] * 300 + ["b"] * 300})
    curve = sweep(f, np.linspace(0, 1, 11), setting="setting", n_boot=300)
    assert curve.height == 22
    assert (curve["ci_low"] <= curve["estimate"] + 1e-12).all() and (curve["estimate"] <= curve["ci_high"] + 1e-12).all()
    a = f.filter(pl.col("setting") == "a")["score"].to_numpy()
    assert curve.filter(pl.col("setting") == "a")["estimate"].to_list() == pytest.approx(
        [float(np.mean(a < t)) for t in np.linspace(0, 1, 11)])  # the share pruned, entry by entry
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


def test_decision_flips_by_section_hand_computed() -> None:
    reps = pl.DataFrame({"entry_id": ["a", "a", "b", "b", "c", "c", "d", "d"], "judge": "j", "repeat": [0, 1] * 4,
                         "score": [0.4, 0.6, 0.9, 0.8, 0.1, 0.55, 0.3, None],
                         "section": ["S", "S", "S", "S", "T", "T", "T", "T"]})
    ref = pl.DataFrame({"entry_id": ["a", "b", "c", "d"], "score": [0.1, 0.9, 0.15, 0.0]})
    got = {r["section"]: r for r in decision_flips(reps, 0.5, ref, by="section").iter_rows(named=True)}
    # S: a flips, b does not -> 1/2; among reference-low only a -> 1/1. T: c flips; d has one usable repeat only
    assert (got["S"]["entries"], got["S"]["flip_share"], got["S"]["flip_share_ref_low"]) == (2, 0.5, 1.0)
    assert (got["T"]["entries"], got["T"]["flip_share"], got["T"]["entries_ref_low"]) == (1, 1.0, 1)


def test_sweep_counts_equal_a_per_scenario_loop_with_ties_nulls_and_unsorted_taus() -> None:
    from workbench.analyses.sjc._sensitivity import _below_per_unit

    rng = np.random.default_rng(3)
    s = np.round(rng.random(500), 1)  # many ties, some exactly on a tau
    s[::37] = np.inf  # null scores are filled with inf (never pruned)
    s[5] = np.nan
    unit = rng.integers(0, 13, 500)
    t = np.array([0.5, 0.0, 1.0, 0.3, 0.30000001, 0.7, 0.5])
    loop = np.array([[np.sum(s[unit == k] < tau) for tau in t] for k in range(13)], dtype=float)
    assert np.array_equal(_below_per_unit(s, unit, 13, t), loop)


def test_threshold_counts_batch_by_batch_equal_the_whole_frame_functions() -> None:
    """Scores on the tau grid and on every edge the tables use (0.2, 0.3, 0.5, 0.7, 0.8), nulls, three budgets,
    scenarios and sections, fed in uneven batches: every table equals the whole-frame function's, the sweep to the
    last bit of every bootstrap bound, and each section's histogram equals numpy's."""
    import numpy as np

    from workbench.analyses.sjc import (ThresholdCounts, first_vs_later, keep_rate_by_section, score_distribution,
                                       sweep)

    rng = np.random.default_rng(3)
    n = 5000
    scores = np.where(rng.random(n) < 0.3, rng.choice([0.0, 0.2, 0.3, 0.5, 0.7, 0.8, 1.0, 0.01 * 37], n),
                      rng.random(n))
    frame = pl.DataFrame({
        "score": pl.Series(scores).set(pl.Series(rng.random(n) < 0.05), None),
        "section": rng.choice(["Decisions", "Open TODOs", "Exact identifiers"], n),
        "boundary": rng.integers(0, 4, n), "scenario_id": rng.choice([f"s{i:02d}" for i in range(13)], n),
        "budget": rng.choice(["24", "48", "96"], n)})
    counts = ThresholdCounts(np.linspace(0, 1, 101), tau=0.5, setting="budget")
    start = 0
    for size in (1, 999, 2, 1500, 2498):
        counts.add(frame.slice(start, size))
        start += size
    assert start == n
    assert counts.sweep(n_boot=200, seed=4).equals(sweep(frame, np.linspace(0, 1, 101), setting="budget", n_boot=200,
                                                         seed=4))
    assert counts.score_distribution().equals(score_distribution(frame))
    assert counts.keep_rate_by_section().equals(keep_rate_by_section(frame, 0.5))
    assert counts.first_vs_later().equals(first_vs_later(frame, 0.5))
    for section in ("Decisions", "Open TODOs"):
        known = frame.filter(pl.col("section") == section)["score"].drop_nulls().to_numpy()
        assert np.array_equal(counts.histogram(section), np.histogram(known, bins=20, range=(0, 1))[0])


def test_batches_by_run_give_every_row_once_whatever_the_order() -> None:
    """Two frames of 40 runs; the second shuffled (its runs' rows scattered): batches of 7 runs hold each run's rows
    of both frames, every row exactly once, in the first frame's run order."""
    from workbench.tables import batches_by_run

    entries = pl.DataFrame({"run_id": [f"r{i // 5:02d}" for i in range(200)], "k": range(200)})
    scores = entries.with_columns((pl.col("k") * 10).alias("v")).sample(fraction=1.0, shuffle=True, seed=2)
    seen_runs, rows_e, rows_s = [], [], []
    for batch in batches_by_run({"entries": entries.lazy(), "scores": scores}, 7, order="entries"):
        runs = batch["entries"]["run_id"].unique(maintain_order=True).to_list()
        assert len(runs) <= 7 and set(batch["scores"]["run_id"]) == set(runs)
        seen_runs += runs
        rows_e += batch["entries"]["k"].to_list()
        rows_s += batch["scores"]["k"].to_list()
    assert seen_runs == [f"r{i:02d}" for i in range(40)]
    assert rows_e == list(range(200)) and sorted(rows_s) == list(range(200))
