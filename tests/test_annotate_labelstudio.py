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


def test_label_studio_import_checks_values_and_keeps_nothing_of_a_bad_export(tmp_path: Path) -> None:
    import pytest

    from workbench.schema import SchemaError

    def task(choice: str, *, when: str = "2020-01-01T00:00:00Z") -> dict[str, object]:
        return {"data": {"item_id": "e1"}, "annotations": [{"completed_by": {"email": "eve@example.org"},
                "updated_at": when, "result": [{"from_name": "support", "type": "choices",
                                                 "value": {"choices": [choice]}}]}]}

    with pytest.raises(SchemaError, match=r"\[1\]\.annotations\.result\.support.*expected one of \['supported', "
                                          r"'unsupported', 'unsure'\], got \['banana'\]"):
        from_labelstudio([task("supported"), task("banana")], round=1)
    recs = from_labelstudio([task("unsure", when="2999-01-01T00:00:00Z")], round=1)
    store = AnnotationStore(tmp_path)
    store.add_many(recs)
    stamped = store.labels()["labeled_at"].item()
    assert not stamped.startswith("2999")  # Label Studio's clock is not the store's: a future time cannot win
