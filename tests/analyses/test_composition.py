"""Summary composition (SJC Tables 2, 9, 10) on hand-computed cases."""

from __future__ import annotations

import polars as pl
import pytest

from workbench.analyses.sjc import by_boundary, entries_by_section, match_next, persistence, support_from_scores


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


def test_section_counts_most_first_ties_by_name() -> None:
    from workbench.analyses.sjc import section_counts

    got = section_counts(entries_frame())
    assert got.rows() == [("Decisions", 3), ("Open TODOs", 3), ("Exact identifiers", 1)]


def test_composition_counts_over_batches_of_runs_hand_computed() -> None:
    """Run r (above) and a run s with an entry the judge left unscored, added as two batches: every share counts
    only entries with a support value, and each table is the hand count over both runs."""
    from workbench.analyses.sjc import CompositionCounts

    s = pl.DataFrame([("s", 0, "Decisions", 0, "- Paid INV-9.", None), ("s", 0, "Open TODOs", 1, "- Call Bob.", True),
                      ("s", 1, "Open TODOs", 0, "- Call Bob.", False)],
                     schema=entries_frame().schema, orient="row")
    counts = CompositionCounts(max_d=2, also=())
    counts.add(entries_frame())
    counts.add(s)
    t2 = {r["section"]: (r["entries"], r["unsupported"], r["unsupported_share"])
          for r in counts.entries_by_section().iter_rows(named=True)}
    assert t2["Decisions"] == (4, 1, pytest.approx(1 / 3))  # 4 entries, 3 with a value, 1 unsupported
    assert t2["Open TODOs"] == (5, 4, pytest.approx(4 / 5))
    assert t2["All"] == (10, 5, pytest.approx(5 / 9))
    t9 = counts.by_boundary()
    assert t9["k"].to_list() == [1, 2, 3] and t9["summaries"].to_list() == [2, 2, 1]
    assert t9["entries"].to_list() == [5, 4, 1]
    assert t9["unsupported_all"].to_list() == pytest.approx([1 / 4, 3 / 4, 1.0])  # b0: of r's 3 and s's 1 known
    assert t9["unsupported_reasoning"].to_list() == pytest.approx([1 / 3, 3 / 4, 1.0])
    assert t9["unsupported_reasoning_per_summary"].to_list() == pytest.approx([0.5, 1.5, 1.0])
    t10, exact = counts.persistence()
    got = {(r["d"], r["supported"]): (r["entries"], r["present"]) for r in t10.iter_rows(named=True)}
    assert got[(1, True)] == (2, 2)  # r's Paid and s's Call Bob (exact) persist into b1
    assert got[(1, False)] == (2, 1) and got[(2, True)] == (1, 0) and got[(2, False)] == (1, 1)
    assert exact == pytest.approx(3 / 4)


def test_composition_counts_equal_the_whole_tables_on_the_testbed(
        small_testbed: dict[str, pl.DataFrame]) -> None:
    """A small testbed's entries (scored and unscored) 37 runs at a time (batches_by_run) against each table on all
    at once."""
    from workbench.analyses.sjc import CompositionCounts
    from workbench.tables import batches_by_run

    entries = support_from_scores(small_testbed["entries"], small_testbed["scores"])
    assert entries["supported"].null_count() and entries["supported"].sum()  # unscored and supported entries both
    counts = CompositionCounts(max_boundary=5, max_d=4)
    for batch in batches_by_run({"entries": entries}, 37, order="entries"):
        counts.add(batch["entries"])
    assert counts.entries_by_section().equals(entries_by_section(entries))
    assert counts.entries_by_section("gt_supported").equals(
        entries_by_section(entries.with_columns(pl.col("gt_supported").alias("supported"))))
    assert counts.by_boundary().equals(by_boundary(entries, max_boundary=5))
    (got, got_exact), (want, want_exact) = counts.persistence(), persistence(entries, max_d=4)
    assert got.equals(want) and got_exact == want_exact and got.height
