"""The Label Studio round trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.annotate import (
    AnnotationStore,
    from_labelstudio,
    to_labelstudio,
)

XSS = "<img src=x onerror=alert(1)>"

ROOT = Path(__file__).resolve().parents[1]


def test_label_studio_round_trip(tmp_path: Path) -> None:
    items = [{"item_id": "e1", "text": XSS, "section": "Decisions", "task": "t", "previous_summary": "",
              "evidence": ["p1", "p2"]}]
    tasks = to_labelstudio(items)
    assert "predictions" not in tasks[0]
    assert tasks[0]["data"]["evidence_text"] == "[1 of 2] from source not recorded\np1\n\n[2 of 2] from source not recorded\np2"
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


FIXTURE = Path(__file__).resolve().parents[1] / "data" / "examples" / "labelstudio-export.json"  # provenance: its .md


def _config_names(config: str) -> dict[str, set[str]]:
    import xml.etree.ElementTree as ET

    root = ET.fromstring(config)
    return {tag: {el.get("name") or "" for el in root.iter(tag)} for tag in ("Text", "Choices")}


def test_the_config_shows_the_question_definitions_evidence_and_material() -> None:
    """Parsed as XML; every $variable is a key of the exported tasks' data; `correct` adds the material; the
    committed export's from_name/to_name are the config's names."""
    import json

    from workbench.annotate.labelstudio import labeling_config
    from workbench.annotate.views import DEFINITIONS, QUESTIONS

    support, correct = labeling_config("support"), labeling_config("correct")
    tasks = to_labelstudio([{"item_id": "e1", "text": "- x", "evidence": ["p"], "evidence_sources": ["step 3, Read"]}])
    for config in (support, correct):
        assert config_variables(config) <= set(tasks[0]["data"])
    assert "$evaluation_text" in correct and "$evaluation_text" not in support
    assert QUESTIONS["support"] in support and all(f"{v}: " in support for v in DEFINITIONS["support"])
    assert tasks[0]["data"]["evidence_text"] == "[1 of 1] from step 3, Read\np"
    names = _config_names(support)
    assert names["Choices"] == {"support"} and "entry" in names["Text"]
    export = json.loads(FIXTURE.read_text())
    for task in export:
        assert set(task["data"]) >= config_variables(support)
        for ann in task["annotations"]:
            for res in ann["result"]:
                assert res["from_name"] in names["Choices"] and res["to_name"] in names["Text"]


def test_labelstudio_export_and_import_round_trip_a_samples_labels(tmp_path: Path) -> None:
    """CLI: a sample out as tasks, Label Studio's export (the committed fixture's shape) back in: exactly the labels
    given, under e-mail or names, the skipped annotation left out; a bad export keeps nothing."""
    import json

    from workbench.cli.main import main

    sample = tmp_path / "s.jsonl"
    sample.write_text("".join(json.dumps({"item_id": i, "text": f"- {i} <b>x</b>", "section": "Decisions",
                                          "evidence": ["INV-1034: amount 120.50"],
                                          "evidence_sources": ["step 3, get_invoice"]}) + "\n" for i in ("e1", "e2")))
    assert main(["labelstudio", "export", str(sample), "--out", str(tmp_path / "tasks.json")]) == 0
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    assert [t["data"]["item_id"] for t in tasks] == ["e1", "e2"] and (tmp_path / "tasks.xml").exists()
    export = json.loads(FIXTURE.read_text())
    for task, mine in zip(export, tasks, strict=True):  # Label Studio keeps the data it was given
        task["data"] = mine["data"]
    (tmp_path / "export.json").write_text(json.dumps(export))
    store = tmp_path / "store"
    assert main(["labelstudio", "import", str(tmp_path / "export.json"), "--store", str(store),
                 "--sample", str(sample)]) == 0
    got = {(r["item_id"], r["annotator"], r["value"]) for r in AnnotationStore(store).labels().iter_rows(named=True)}
    assert got == {("e1", "eve@example.org", "supported"), ("e1", "dan@example.org", "unsupported"),
                   ("e2", "eve@example.org", "unsure")}
    assert main(["labelstudio", "import", str(tmp_path / "export.json"), "--store", str(tmp_path / "by-name"),
                 "--annotator-from", "name", "--round", "2"]) == 0
    named = AnnotationStore(tmp_path / "by-name").labels()
    assert set(named["annotator"]) == {"Eve.Moreau", "Dan.Okafor"} and set(named["round"]) == {2}
    export[1]["annotations"][0]["result"][0]["value"]["choices"] = ["maybe"]
    (tmp_path / "bad.json").write_text(json.dumps(export))
    assert main(["labelstudio", "import", str(tmp_path / "bad.json"), "--store", str(tmp_path / "bad")]) == 2
    assert not (tmp_path / "bad").exists() or not AnnotationStore(tmp_path / "bad").labels().height
    export[1]["annotations"][0]["result"][0]["value"]["choices"] = ["unsure"]
    export[1]["data"]["item_id"] = "zzz"
    (tmp_path / "stray.json").write_text(json.dumps(export))
    assert main(["labelstudio", "import", str(tmp_path / "stray.json"), "--store", str(tmp_path / "stray"),
                 "--sample", str(sample)]) == 2


def config_variables(config: str) -> set[str]:
    """The task ``data`` keys a labeling config reads (its ``$name`` references): the test's reading of the XML."""
    import re

    return set(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", config))


@pytest.mark.parametrize(("content", "said"), [
    ('[{"data": {"item_id": "e1"}, "annotations": "oops"}]',
     "field '[0].annotations': expected a list of annotations, got string 'oops'"),
    ('[{"data": {"item_id": "e1"}, "annotations": [{"result": [{"type": "choices", "from_name": "support", '
     '"value": {"choices": "supported"}}], "completed_by": 3}]}]',
     "field '[0].annotations[0].result[0].value.choices': expected a list of choices, got string"),
    ("[" * 100_000 + "]" * 100_000, "JSON nested deeper than its reader allows"),
    ('["not a task"]', "field '[0]': expected a task (an object), got string"),
])
def test_a_malformed_export_is_a_clear_error_not_an_internal_one(tmp_path: Path, content: str, said: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 39 item 11: an `annotations` field that is a string and a 100,000-deep JSON array ended in 'internal
    error ... this is a bug'. Now each names the file and where in it; nothing is added."""
    from workbench.cli.main import main

    path = tmp_path / "export.json"
    path.write_text(content)
    assert main(["labelstudio", "import", str(path), "--store", str(tmp_path / "store")]) == 2
    err = capsys.readouterr().err
    assert f"workbench labelstudio: {path}: " in err and said in err, err
    assert not (tmp_path / "store" / "labels").exists() or not list((tmp_path / "store" / "labels").glob("*.jsonl"))


def test_importing_one_export_twice_adds_nothing_and_a_conflict_is_refused(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 39 item 11: a second import of the same export appended every label again, and one person's two
    different labels of one item (a task duplicated in the project) were both stored, silently."""
    import json

    from workbench.cli.main import main

    export = json.loads((ROOT / "data" / "examples" / "labelstudio-export.json").read_text())
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    store = tmp_path / "store"
    assert main(["labelstudio", "import", str(path), "--store", str(store)]) == 0
    first = AnnotationStore(store).history().height
    assert first > 0 and "0 already in the store" in capsys.readouterr().out
    assert main(["labelstudio", "import", str(path), "--store", str(store)]) == 0
    assert "0 label(s)" in capsys.readouterr().out and AnnotationStore(store).history().height == first
    twice = [export[0], {**export[0], "id": 999}]  # the task twice, its first annotation's choice changed
    twice[1]["annotations"] = [json.loads(json.dumps(twice[1]["annotations"][0]))]
    twice[1]["annotations"][0]["result"][0]["value"]["choices"] = \
        ["unsupported" if twice[0]["annotations"][0]["result"][0]["value"]["choices"] == ["supported"] else "supported"]
    path.write_text(json.dumps(twice))
    assert main(["labelstudio", "import", str(path), "--store", str(tmp_path / "other")]) == 2
    err = capsys.readouterr().err
    assert "field '[1].annotations[0].result[0]': expected one support label per item and annotator" in err, err
    assert "at [0].annotations[0].result[0]" in err
