"""The Claude compaction data set: the committed fixture gives the full data's fact-check table."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.adapters import check_table, load_fixture

ROOT = Path(__file__).resolve().parents[2]


CLAUDE = ROOT / "data" / "real" / "claude-compaction" / "fixture.json"


def test_claude_fixture_table_against_a_plain_pass_over_the_fixture() -> None:
    """Every number derived here from the fixture's raw JSON with plain string operations and one plain regex
    (written for this test), not copied from a run of the code under test."""
    import json
    import re

    raw = json.loads(CLAUDE.read_text(encoding="utf-8"))
    t = check_table(load_fixture(CLAUDE))
    assert t["seed"].to_list() == sorted(r["seed"] for r in raw)
    plain = re.compile(r"(?:https?://)?(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}(?:/[^\s\"'<>)`*,]*)?"
                       r"|(?:https?://)?\b\d{1,3}(?:\.\d{1,3}){3}\b(?:/[^\s\"'<>)`*,]*)?|\b[0-9a-f]{16,}\b")
    for row, rec in zip(t.iter_rows(named=True), sorted(raw, key=lambda r: r["seed"]), strict=True):
        ids = list(dict.fromkeys(m.rstrip(".,;:!?") for m in plain.findall(rec["summary"])))
        ids = [i for i in ids if len(i) >= 4 and not i.replace(".", "").isdigit()]
        blob = "\n".join(rec["history"]).lower()
        sourced = [i for i in ids if i.lower() in blob]
        assert row["identifiers"] == len(ids)
        assert row["sourced_share"] == pytest.approx(len(sourced) / len(ids))
        members = rec["members"]
        host = [re.sub(r"^[a-z]+://", "", m.lower()).split("/")[0].removeprefix("www.") for m in members]
        low = rec["summary"].lower()
        assert row["members_held_exact"] == pytest.approx(sum(m.lower() in low for m in members) / len(members))
        assert row["members_held_by_host"] == pytest.approx(sum(bool(h) and h in low for h in host) / len(members))
        assert row["false_negative_rate"] == rec["false_negative_rate"]
        assert row["recall_after_compaction"] == pytest.approx(1 - rec["false_negative_rate"])
