"""The Claude compaction data set: the committed fixture gives the full data's fact-check table."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.claude_compaction import check_table, load_fixture

ROOT = Path(__file__).resolve().parents[1]


CLAUDE = ROOT / "data" / "real" / "claude-compaction" / "fixture.json"


def test_claude_fixture_table() -> None:
    runs = load_fixture(CLAUDE)
    t = check_table(runs)
    assert t["seed"].to_list() == [42, 43, 44]
    assert t["false_negative_rate"].to_list() == [0.97, 0.79, 0.63]
    assert t["identifiers"].to_list() == [12, 10, 18]
    assert t["sourced_share"].to_list() == pytest.approx([1.0, 1.0, 17 / 18])
    assert t["members_held_exact"].to_list() == [0.0, 0.0, 0.0]
    assert t["members_held_by_host"].to_list() == pytest.approx([0.03, 0.06, 0.04])
    assert t["recall_after_compaction"].to_list() == pytest.approx([0.03, 0.21, 0.37])
