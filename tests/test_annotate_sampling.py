"""Validation samples: balanced, seeded, honest about short strata, blind to scores and outcomes."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from workbench.annotate import (
    sample_entries,
)
from workbench.cli import main


def test_sample_balanced_seeded_and_honest_about_short_strata() -> None:
    items = pl.DataFrame({"entry_id": [f"e{i}" for i in range(100)],
                          "section": ["Decisions"] * 60 + ["Open TODOs"] * 40,
                          "outcome": (["success", "failure"] * 50)})
    s1, rep = sample_entries(items, 40, seed=1)
    s2, _ = sample_entries(items, 40, seed=1)
    assert s1.equals(s2) and s1["entry_id"].n_unique() == 40 and not rep.short
    counts = s1.group_by("section", "outcome").len()["len"].to_list()
    assert sorted(counts) == [10, 10, 10, 10]
    s3, rep3 = sample_entries(items, 100, seed=1)
    assert rep3.short == {("Open TODOs", "failure"): (20, 25), ("Open TODOs", "success"): (20, 25)}
    assert "only 20 item(s), 25 asked" in rep3.message() and s3.height == 90


def test_sample_cli_items_hide_scores_and_outcomes(tmp_path: Path) -> None:
    d = tmp_path / "tb"
    assert main(["simulate", "--out", str(d), "--tasks", "12", "--runs", "2", "--budgets", "48", "--policies",
                 "prompting", "--quiet", "--workers", "1"]) == 0
    out = tmp_path / "s.jsonl"
    assert main(["sample", str(d), "--n", "20", "--seed", "3", "--out", str(out)]) == 0
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(items) == 20 and len({i["item_id"] for i in items}) == 20
    for i in items:
        assert set(i) == {"item_id", "text", "section", "task", "previous_summary", "evidence"}
        assert isinstance(i["evidence"], list)
