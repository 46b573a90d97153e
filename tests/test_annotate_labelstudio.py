"""The Label Studio round trip."""

from __future__ import annotations

from pathlib import Path

from workbench.annotate import (
    AnnotationStore,
    from_labelstudio,
    to_labelstudio,
)

XSS = "<img src=x onerror=alert(1)>"


def test_label_studio_round_trip(tmp_path: Path) -> None:
    items = [{"item_id": "e1", "text": XSS, "section": "Decisions", "task": "t", "previous_summary": "",
              "evidence": ["p1", "p2"]}]
    tasks = to_labelstudio(items)
    assert "predictions" not in tasks[0] and tasks[0]["data"]["evidence_text"] == "[1] p1\n\n[2] p2"
    assert to_labelstudio(items, {"e1": 0.8})[0]["predictions"][0]["score"] == 0.8
    export = [{"id": 1, "data": tasks[0]["data"], "annotations": [
        {"completed_by": {"email": "eve@example.org"}, "was_cancelled": False, "updated_at": "2026-01-01T00:00:00Z",
         "result": [{"from_name": "support", "to_name": "entry", "type": "choices", "value": {"choices": ["supported"]}},
                    {"from_name": "correct", "to_name": "entry", "type": "choices", "value": {"choices": ["incorrect"]}}]},
        {"completed_by": 7, "was_cancelled": True, "result": []}]}]
    recs = from_labelstudio(export, round=1)
    store = AnnotationStore(tmp_path)
    store.add_many(recs)
    got = store.labels().sort("field")
    assert got["value"].to_list() == ["incorrect", "supported"] and set(got["annotator"]) == {"eve@example.org"}
