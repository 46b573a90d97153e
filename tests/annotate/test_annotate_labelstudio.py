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

ROOT = Path(__file__).resolve().parents[2]


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

    from workbench.errors import SchemaError

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


REAL = ROOT / "workbench" / "datasets" / "example_logs" / "labelstudio"  # a real Label Studio 1.23.2 server's exports: its README
FIXTURE = REAL / "export-expanded.json"


def _config_names(config: str) -> dict[str, set[str]]:
    import xml.etree.ElementTree as ET

    root = ET.fromstring(config)
    return {tag: {el.get("name") or "" for el in root.iter(tag)} for tag in ("Text", "Choices", "TextArea")}


def test_the_config_shows_the_question_definitions_evidence_and_material() -> None:
    """Parsed as XML; every $variable is a key of the exported tasks' data; `correct` adds the material; the
    committed export's from_name/to_name are the config's names."""
    import json

    from workbench.annotate import labeling_config
    from workbench.annotate import DEFINITIONS, QUESTIONS

    support, correct = labeling_config("support"), labeling_config("correct")
    item = {"item_id": "e1", "text": "- x", "evidence": ["p"], "evidence_sources": ["step 3, Read"]}
    tasks = to_labelstudio([item])
    for field, config in (("support", support), ("correct", correct)):
        assert config_variables(config) == set(to_labelstudio([item], field=field)[0]["data"]) - {"item_id"}
    predicted = to_labelstudio([item], {"e1": 0.7}, judge="lexical")
    assert config_variables(labeling_config("support", predictions=True)) == set(predicted[0]["data"]) - {"item_id"}
    assert "$evaluation_text" in correct and "$evaluation_text" not in support
    # the question is the task's own (issue 59): SJC's for an agent log's entry, the data set's when it states one
    assert '<Text name="question" value="$question"/>' in support and all(f"{v}: " in support
                                                                          for v in DEFINITIONS["support"])
    assert tasks[0]["data"]["question"] == QUESTIONS["support"]
    own = to_labelstudio([{**item, "question": "Is every fact of the sentence in the article?"}])
    assert own[0]["data"]["question"] == "Is every fact of the sentence in the article?"
    assert tasks[0]["data"]["evidence_text"] == "[1 of 1] from step 3, Read\np"
    names = _config_names(support)
    assert names["Choices"] == {"support"} and "entry" in names["Text"]
    export = json.loads(FIXTURE.read_text())
    for task in export:  # exported by Label Studio before tasks carried their question
        assert set(task["data"]) >= config_variables(support) - {"question"}
        for ann in task["annotations"]:
            for res in ann["result"]:
                assert res["from_name"] in names["Choices"] | names["TextArea"] and res["to_name"] in names["Text"]


def _by_hand(export: list[dict], users: dict[int, dict], name: str = "email") -> set[tuple]:
    """The labels a Label Studio export holds, read here without the workbench: (item, annotator, value, note) of
    every annotation not cancelled, the annotator by ``name`` from the user object or the users list."""
    out = set()
    for task in export:
        for ann in task["annotations"]:
            if ann["was_cancelled"]:
                continue
            user = ann["completed_by"] if isinstance(ann["completed_by"], dict) else users[ann["completed_by"]]
            who = user["email"] if name == "email" else ".".join(p for p in (user["first_name"], user["last_name"]) if p)
            notes = [t for r in ann["result"] if r["type"] == "textarea" for t in r["value"]["text"]]
            for r in ann["result"]:
                if r["type"] == "choices":
                    out.add((task["data"]["item_id"], who or user["email"], r["value"]["choices"][0],
                             "\n".join(notes) or None))
    return out


def test_labelstudio_export_and_import_round_trip_a_samples_labels(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """CLI on a real Label Studio 1.23.2 server's exports (workbench/datasets/example_logs/labelstudio): the server kept the task
    data the export gave it; the plain export (bare user ids) with --annotators and the snapshot export (users
    expanded) both give exactly the labels the files hold (read by hand above), named by e-mail or names, notes
    kept, the skipped annotation counted and left out; bare ids without a users file are said, naming the
    option; a bad export keeps nothing."""
    import json

    from workbench.cli.main import main

    sample = REAL / "val.jsonl"
    assert main(["labelstudio", "export", str(sample), "--out", str(tmp_path / "tasks.json")]) == 0
    tasks = json.loads((tmp_path / "tasks.json").read_text())
    plain, expanded = (json.loads((REAL / n).read_text()) for n in ("export.json", "export-expanded.json"))
    users = {u["id"]: u for u in json.loads((REAL / "users.json").read_text())}
    # the fixture was exported before tasks carried their question (issue 59): the rest is the same
    assert [{k: v for k, v in t["data"].items() if k != "question"} for t in tasks] == [t["data"] for t in plain] \
        == [t["data"] for t in expanded]
    assert {type(a["completed_by"]) for t in plain for a in t["annotations"]} == {int}
    store = tmp_path / "store"
    assert main(["labelstudio", "import", str(REAL / "export.json"), "--store", str(store),
                 "--annotators", str(REAL / "users.json"), "--sample", str(sample)]) == 0
    out = capsys.readouterr()
    assert "1 skipped annotation(s) (not labels)" in out.out and "warning" not in out.err, out
    got = {(r["item_id"], r["annotator"], r["value"], r["note"]) for r in AnnotationStore(store).labels().iter_rows(named=True)}
    assert got == _by_hand(plain, users) and len(got) == 31 and sum(g[3] is not None for g in got) == 4
    assert main(["labelstudio", "import", str(REAL / "export-expanded.json"), "--store", str(tmp_path / "by-name"),
                 "--annotator-from", "name", "--round", "2"]) == 0
    assert "--annotator-from name: 1 user(s) have none (ids 2); named by e-mail" in capsys.readouterr().err
    named = AnnotationStore(tmp_path / "by-name").labels()
    assert {(r["item_id"], r["annotator"], r["value"], r["note"]) for r in named.iter_rows(named=True)} == \
        _by_hand(expanded, users, "name") and set(named["annotator"]) == {"Eve.Moreau", "dan@example.org"}
    assert main(["labelstudio", "import", str(REAL / "export.json"), "--store", str(tmp_path / "bare")]) == 0
    err = capsys.readouterr().err
    assert "warning: --annotator-from email: the export names 2 annotator(s) by user id only (1, 2)" in err
    assert "--annotators USERS.json" in err
    export = json.loads(json.dumps(expanded))
    export[1]["annotations"][0]["result"][0]["value"]["choices"] = ["maybe"]
    (tmp_path / "bad.json").write_text(json.dumps(export))
    assert main(["labelstudio", "import", str(tmp_path / "bad.json"), "--store", str(tmp_path / "bad")]) == 2
    assert not (tmp_path / "bad").exists() or not AnnotationStore(tmp_path / "bad").labels().height
    export[1]["annotations"][0]["result"][0]["value"]["choices"] = ["unsure"]
    export[1]["data"]["item_id"] = "zzz"
    (tmp_path / "stray.json").write_text(json.dumps(export))
    assert main(["labelstudio", "import", str(tmp_path / "stray.json"), "--store", str(tmp_path / "stray"),
                 "--sample", str(sample)]) == 2


def test_a_support_task_holds_no_ground_truth_and_predictions_are_opt_in(tmp_path: Path) -> None:
    """Issue 43 item 3: `labelstudio export --field support` put `evaluation_text` (the ground truth: the
    invoices' status at the compaction) into every task, where Label Studio's data manager and GET /api/tasks/ID
    show it. The exported JSON (not a view of it) now holds, for support, only the entry, section, task, previous
    summary, evidence and item id; `correct` adds its material; scores come only with --predictions."""
    import json

    import polars as pl

    from workbench.cli.main import main

    item = {"item_id": "e1", "text": "- Paid INV-1034.", "section": "Decisions", "task": "Settle G7.",
            "previous_summary": "", "evidence": ["INV-1034: amount 120.50"], "evidence_sources": ["step 3, get"],
            "scenario_id": "s1", "run_id": "r1", "boundary": 1, "outcome": "fabricated",
            "evaluation": [{"name": "INV-1034 (ground truth)", "text": "status at this compaction: paid $120.50"}]}
    sample = tmp_path / "s.jsonl"
    sample.write_text(json.dumps(item) + "\n")
    assert main(["labelstudio", "export", str(sample), "--out", str(tmp_path / "t.json")]) == 0
    raw = (tmp_path / "t.json").read_text()
    (task,) = json.loads(raw)
    assert set(task) == {"data"} and set(task["data"]) == {"item_id", "question", "text", "section", "task",
                                                           "previous_summary", "evidence_text"}
    assert "ground truth" not in raw and "paid $120.50" not in raw and "fabricated" not in raw and "s1" not in raw
    assert task["data"]["previous_summary"] == "(none: first compaction)"  # as the terminal says, not a blank
    assert main(["labelstudio", "export", str(sample), "--field", "correct", "--out", str(tmp_path / "c.json")]) == 0
    assert "paid $120.50" in json.loads((tmp_path / "c.json").read_text())[0]["data"]["evaluation_text"]
    scores = tmp_path / "scores.parquet"
    pl.DataFrame({"entry_id": ["e1"], "judge": ["lexical"], "repeat": [0], "score": [0.25]}).write_parquet(scores)
    assert main(["labelstudio", "export", str(sample), "--out", str(tmp_path / "p.json"), "--predictions",
                 str(scores), "--tau", "0.2"]) == 0
    (shown,) = json.loads((tmp_path / "p.json").read_text())
    assert shown["predictions"] == [{"model_version": "lexical", "score": 0.25, "result": [
        {"from_name": "support", "to_name": "entry", "type": "choices", "value": {"choices": ["supported"]}}]}]
    assert "lexical scored this entry 0.250" in shown["data"]["judge_shown"]
    assert "$judge_shown" in (tmp_path / "p.xml").read_text() and "$judge_shown" not in (tmp_path / "t.xml").read_text()
    assert main(["labelstudio", "export", str(sample), "--field", "correct", "--out", str(tmp_path / "x.json"),
                 "--predictions", str(scores)]) == 2


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

    export = json.loads(FIXTURE.read_text())
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


def test_the_tours_adjudication_finds_the_sample_the_labels_were_given_on(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 43 item 5: after the tour (`sample --out build/val.jsonl`, `label`, `agree`), `adjudicate --decide`
    without --sample showed an empty task and "no environment output was retrieved": it looked only in
    STORE/samples/. The store now keeps the path of the sample `label` worked on, so `agree` clusters by its
    scenarios and `adjudicate` shows its task and evidence; with no sample anywhere it warns."""
    import io
    import json

    from workbench.cli.main import main

    work = tmp_path / "build"
    work.mkdir()
    lines = (REAL / "val.jsonl").read_text().splitlines()
    lines.sort(key=lambda line: not json.loads(line)["evidence"])  # an item with evidence first: it is labelled
    (work / "val.jsonl").write_text("\n".join(lines) + "\n")
    first = json.loads(lines[0])
    store = work / "annotations"
    for rnd, answer in ((1, "1"), (2, "2")):  # alice labels the first item twice, differently
        monkeypatch.setattr("sys.stdin", io.StringIO(f"{answer}\nq\n"))
        assert main(["label", str(work / "val.jsonl"), "--annotator", "alice", "--round", str(rnd),
                     "--store", str(store)]) == 0
    assert json.loads((store / "samples.json").read_text()) == {"samples": ["../val.jsonl"]}
    capsys.readouterr()
    assert main(["agree", str(store)]) == 0
    assert "intervals resample scenarios (from the sample's scenario_id)" in capsys.readouterr().out
    decide = ["adjudicate", str(store / "adjudication.jsonl"), "--store", str(store), "--decide", "--adjudicator",
              "carol"]
    (work / "val.jsonl").rename(work / "moved.jsonl")  # the sample gone: said, not an empty screen
    monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
    assert main(decide) == 0
    assert "warning: 1 disagreement(s) have no sample item" in capsys.readouterr().err
    (work / "moved.jsonl").rename(work / "val.jsonl")
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n"))
    assert main(decide) == 0
    out = capsys.readouterr()
    assert first["evidence"][0].splitlines()[0][:40] in out.out and first["task"][:40] in out.out, out.out[:2000]
    assert "no environment output was retrieved" not in out.out and "warning" not in out.err
    assert "1 adjudicated label(s) added" in out.out


def _real_export() -> list[dict]:
    """workbench/datasets/example_logs/labelstudio/export-expanded.json: a real Label Studio snapshot export (users expanded)."""
    import json

    return json.loads((ROOT / "workbench" / "datasets" / "example_logs" / "labelstudio" / "export-expanded.json").read_text())


def test_a_control_renamed_for_one_annotator_is_counted_and_named_not_dropped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 57 item 10: with one annotator's control renamed (``from_name: "factuality"``), their labels vanished,
    counted neither as skipped nor as unlabelled. Every result the import does not take is counted, by control."""
    import json

    from workbench.cli.main import main

    export = _real_export()
    renamed = 0
    people = sorted({str(a["completed_by"]["email"]) for t in export for a in t["annotations"]})
    for task in export:
        for ann in task["annotations"]:
            if ann["completed_by"]["email"] == people[0]:
                for res in ann["result"]:
                    if res.get("from_name") == "support" and res.get("type") == "choices":
                        res["from_name"] = "factuality"
                        renamed += 1
    assert renamed > 0
    path = tmp_path / "renamed.json"
    path.write_text(json.dumps(export))
    assert main(["labelstudio", "import", str(path), "--store", str(tmp_path / "store")]) == 0
    out = capsys.readouterr().out
    assert f"{renamed} result(s) not taken as labels (factuality (choices): {renamed})" in out


def test_an_export_with_a_byte_order_mark_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 57 item 21: an export saved by a Windows tool, with a UTF-8 BOM, was refused as 'not JSON'."""
    import json

    from workbench.cli.main import main

    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(_real_export()).encode("utf-8"))
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(_real_export()))
    assert main(["labelstudio", "import", str(plain), "--store", str(tmp_path / "a")]) == 0
    expected = capsys.readouterr().out.replace(str(tmp_path / "a"), "STORE")
    assert main(["labelstudio", "import", str(path), "--store", str(tmp_path / "b")]) == 0
    assert capsys.readouterr().out.replace(str(tmp_path / "b"), "STORE") == expected


def test_a_lone_surrogate_item_id_is_a_located_error_and_a_notes_is_replaced(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 57 item 21: an ``item_id`` of ``"\\ud800"`` (JSON allows the escape; no file can hold it as UTF-8)
    was an internal UnicodeEncodeError. It is an error naming the task; a note cut inside a character keeps its
    text, the broken character replaced by U+FFFD and said."""
    import json

    from workbench.annotate import AnnotationStore
    from workbench.cli.main import main

    export = _real_export()
    export[1]["data"]["item_id"] = "e\ud800x"
    path = tmp_path / "id.json"
    path.write_text(json.dumps(export))  # json escapes the surrogate: the file is valid UTF-8 JSON
    assert main(["labelstudio", "import", str(path), "--store", str(tmp_path / "s1")]) == 2
    err = capsys.readouterr().err
    assert f"{path}: field '[1].data.item_id': expected the sample's item id (valid Unicode)" in err
    assert "lone UTF-16 surrogate" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "s1" / "labels").exists() or not list((tmp_path / "s1" / "labels").glob("*.jsonl"))

    export = _real_export()
    task = next(t for t in export if any(a["result"] and not a.get("was_cancelled") for a in t["annotations"]))
    ann = next(a for a in task["annotations"] if a["result"] and not a.get("was_cancelled"))
    ann["result"].append({"type": "textarea", "from_name": "note", "to_name": "entry",
                          "value": {"text": ["cut here: \ud83d"]}})
    path.write_text(json.dumps(export))
    assert main(["labelstudio", "import", str(path), "--store", str(tmp_path / "s2")]) == 0
    assert "1 note(s) held a lone UTF-16 surrogate" in capsys.readouterr().err
    notes = AnnotationStore(tmp_path / "s2", read_only=True).labels()["note"].to_list()
    assert any(n is not None and n.endswith("cut here: \ufffd") for n in notes)
