"""Failure attribution (SJC Table 11) on a hand-computed case."""

from __future__ import annotations

import polars as pl

from workbench.analyses.sjc import failures_by_scenario as table11
from workbench.analyses.sjc import followed_entry_share


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
    assert followed_entry_share(att)["follows_entry"] == 0.5
