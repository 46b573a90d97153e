"""Agreement and adjudication through the CLI: disagreements out, adjudicated labels back into the store."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import polars as pl
import pytest

from workbench.annotate import (
    AnnotationStore,
)
from workbench.cli.main import main
from workbench.tables import gold_labels

from tests.conftest import labels_frame


def test_agree_and_adjudicate_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = AnnotationStore(tmp_path)
    store.add_many(labels_frame(n=50).with_columns(pl.lit("a1").alias("annotator")).to_dicts())  # one person, 2 rounds
    assert main(["agree", str(tmp_path), "--n-boot", "200"]) == 0
    out = capsys.readouterr().out
    assert "support" in out and "kappa=" in out
    adj = tmp_path / "adjudication.jsonl"
    lines = [json.loads(x) for x in adj.read_text().splitlines()]
    assert lines and all(x["value"] is None for x in lines)
    lines[0]["value"] = "supported"
    adj.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert main(["adjudicate", str(adj), "--store", str(tmp_path)]) == 0
    gold = gold_labels(store.labels())
    assert gold.filter(pl.col("item_id") == lines[0]["item_id"])["value"][0] == "supported"


def test_agree_compares_like_with_like_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two annotators, two rounds, eight items in four scenarios. By hand:
    alice round 2 = alice round 1 -> kappa 1; bob labels round 1 only.
    Round 1, alice vs bob: alice S S S S U U U U, bob S S S U U U U S -> 6 of 8 agree (po 0.75); alice has 4 S,
    bob 4 S, so pe = (4*4 + 4*4) / 64 = 0.5 and kappa = (0.75 - 0.5) / 0.5 = 0.5."""
    store = AnnotationStore(tmp_path)
    alice = ["supported"] * 4 + ["unsupported"] * 4
    bob = ["supported"] * 3 + ["unsupported"] * 4 + ["supported"]
    recs = []
    for i in range(8):
        for who, rnd, value in (("alice", 1, alice[i]), ("alice", 2, alice[i]), ("bob", 1, bob[i])):
            recs.append({"item_id": f"e{i}", "annotator": who, "round": rnd, "field": "support", "value": value})
    store.add_many(recs)
    sample = tmp_path / "samples" / "s.jsonl"
    sample.parent.mkdir()
    sample.write_text("".join(json.dumps({"item_id": f"e{i}", "text": "x", "scenario_id": f"s{i // 2}"}) + "\n"
                              for i in range(8)))
    assert main(["agree", str(tmp_path), "--n-boot", "200"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "intervals resample scenarios (from the sample's scenario_id)"
    within = [x for x in out if "within annotator" in x and "alice" in x]
    between = [x for x in out if "round 1: alice vs bob" in x]
    assert len(within) == 1 and "n=8 kappa=1.000" in within[0] and "agreement=1.000" in within[0]
    assert len(between) == 1 and "n=8 kappa=0.500" in between[0] and "agreement=0.750" in between[0]
    assert "disagreements=2" in between[0]
    assert any("bob: not compared (labeled in round 1 only)" in x for x in out)
    assert any("round 2: not compared (only alice labeled round 2)" in x for x in out)
    from workbench.stats import agreement_pairs

    table, _ = agreement_pairs(store.labels(), {f"e{i}": f"s{i // 2}" for i in range(8)}, n_boot=200)
    kappa = table.filter((pl.col("comparison") == "between annotators") & (pl.col("statistic") == "kappa")).row(
        0, named=True)
    assert kappa["n"] == 8 and kappa["ci_low"] <= 0.5 <= kappa["ci_high"]


def test_adjudicate_rejects_values_the_field_does_not_declare(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    adj = tmp_path / "adjudication.jsonl"
    rows = [{"item_id": "e1", "field": "support", "values": ["supported", "unsupported"], "value": "supported"},
            {"item_id": "e2", "field": "support", "values": ["supported", "unsure"], "value": "maybe"}]
    adj.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["adjudicate", str(adj), "--store", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{adj}:2: field 'value': expected for field 'support' one of ['supported', 'unsupported', 'unsure'], " \
           "got string 'maybe'" in err
    assert not AnnotationStore(tmp_path).labels().height  # the good first line was not added alone
    rows[1]["field"] = "mood"
    adj.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["adjudicate", str(adj), "--store", str(tmp_path)]) == 2
    assert "field 'field': expected one of ['support', 'correct', 'pattern', 'entry_support', 'agent', 'step', 'reason'], got string 'mood'" in \
        capsys.readouterr().err


def test_rerunning_agree_keeps_every_decision_and_adds_only_new_disagreements(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Adjudicate, rerun agree (which rewrote every value back to null), then a new disagreement appears: the
    decisions stand, the record carries the entry, both annotators' values and notes, and the allowed values."""
    store = AnnotationStore(tmp_path)
    sample = tmp_path / "samples" / "s.jsonl"
    sample.parent.mkdir()
    sample.write_text("".join(json.dumps({"item_id": f"e{i}", "text": f"- Paid INV-{i} <b>", "section": "Decisions",
                                          "role": "history", "scenario_id": f"s{i % 3}"}) + "\n" for i in range(6)))
    recs = [{"item_id": f"e{i}", "annotator": who, "round": 1, "field": "support", "value": v}
            for i in range(6) for who, v in (("alice", "supported"), ("bob", "unsupported" if i < 2 else "supported"))]
    store.add_many(recs)
    store.add_note(item_id="e0", annotator="bob", round=1, field="support", note="no step shows the payment")
    assert main(["agree", str(tmp_path), "--n-boot", "50"]) == 0
    assert "2 to adjudicate, 0 decided (2 new)" in capsys.readouterr().out
    adj = tmp_path / "adjudication.jsonl"
    lines = [json.loads(x) for x in adj.read_text().splitlines()]
    first = lines[0]
    assert first["item_id"] == "e0" and first["text"] == "- Paid INV-0 <b>" and first["section"] == "Decisions"
    assert first["role"] == "history" and first["allowed"] == ["supported", "unsupported", "unsure"]
    assert {(x["annotator"], x["value"], x["note"]) for x in first["labels"]} == {
        ("alice", "supported", None), ("bob", "unsupported", "no step shows the payment")}
    first["value"], first["note"] = "unsupported", "bob is right"
    adj.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert main(["agree", str(tmp_path), "--n-boot", "50"]) == 0  # nothing new: the decision stays
    assert "1 to adjudicate, 1 decided (0 new)" in capsys.readouterr().out
    store.add_many([{"item_id": "e5", "annotator": "bob", "round": 1, "field": "support", "value": "unsure"}])
    assert main(["agree", str(tmp_path), "--n-boot", "50"]) == 0
    assert "2 to adjudicate, 1 decided (1 new)" in capsys.readouterr().out
    after = [json.loads(x) for x in adj.read_text().splitlines()]
    assert after[0] == first and after[1] == lines[1] and after[2]["item_id"] == "e5"
    assert main(["adjudicate", str(adj), "--store", str(tmp_path)]) == 0
    assert gold_labels(store.labels()).filter(pl.col("item_id") == "e0")["value"][0] == "unsupported"
    # a decided value the field does not allow stops agree with FILE:LINE, the file unchanged
    after[1]["value"] = "maybe"
    text = "".join(json.dumps(x) + "\n" for x in after)
    adj.write_text(text)
    assert main(["agree", str(tmp_path), "--n-boot", "50"]) == 2
    assert f"{adj}:2: field 'value'" in capsys.readouterr().err and adj.read_text() == text


def test_labels_outside_the_sample_are_left_out_and_said(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: agree reported n = 15 for a 10-item sample; adjudicate accepted a decision about 'nonexistent/zzz'."""
    store = AnnotationStore(tmp_path)
    sample = tmp_path / "samples" / "s.jsonl"
    sample.parent.mkdir()
    sample.write_text("".join(json.dumps({"item_id": f"e{i}", "text": "- x", "scenario_id": f"s{i % 2}"}) + "\n"
                              for i in range(4)))
    store.add_many([{"item_id": f"e{i}", "annotator": "alice", "round": r, "field": "support",
                     "value": "supported" if (i + r) % 3 else "unsupported"} for i in range(6) for r in (1, 2)])
    assert main(["agree", str(tmp_path), "--n-boot", "50"]) == 0
    out = capsys.readouterr().out
    assert "4 label(s) of 2 item(s) not in the sample(s) left out (first 'e4')" in out and "n=4 " in out
    adj = tmp_path / "decisions.jsonl"
    adj.write_text(json.dumps({"item_id": "nonexistent/zzz", "field": "support", "value": "supported"}) + "\n")
    assert main(["adjudicate", str(adj), "--store", str(tmp_path)]) == 2
    assert (f"{adj}:1: field 'item_id/field': expected a decision about an item and field the store's annotators "
            "disagree on, got item 'nonexistent/zzz', field 'support', which no annotator of the store labelled") in \
        capsys.readouterr().err
    assert "adjudicated" not in set(store.labels()["annotator"])


def _disagreements(tmp_path: Path) -> tuple[Path, Path]:
    """A store where alice and bob disagree on e1 and e2 (support) and agree on e3; agree writes the file."""
    store = AnnotationStore(tmp_path / "store")
    for who, values in (("alice", ["supported", "supported", "unsure"]), ("bob", ["unsupported", "unsure", "unsure"])):
        for k, v in enumerate(values, start=1):
            store.add(item_id=f"e{k}", annotator=who, round=1, field="support", value=v,
                      note="step 4 says open" if (who, k) == ("bob", 1) else None)
    sample = tmp_path / "store" / "samples" / "s.jsonl"
    sample.parent.mkdir()
    sample.write_text("".join(json.dumps({"item_id": f"e{k}", "text": f"- Paid INV-{k}", "section": "Decisions",
                                          "evidence": [f"INV-{k}: status open"],
                                          "evidence_sources": ["step 4 · tool get_invoice · output"],
                                          "scenario_id": f"s{k}"}) + "\n" for k in (1, 2, 3)))
    assert main(["agree", str(tmp_path / "store"), "--n-boot", "50"]) == 0
    return tmp_path / "store", tmp_path / "store" / "adjudication.jsonl"


def test_terminal_adjudication_decides_in_the_file_and_the_cli_adds_each_decision_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    store_dir, adj = _disagreements(tmp_path)
    capsys.readouterr()
    monkeypatch.setattr("sys.stdin", io.StringIO("2\nn\nno tool output says paid\n3\n"))
    assert main(["adjudicate", str(adj), "--store", str(store_dir), "--decide", "--adjudicator", "carol"]) == 0
    out = capsys.readouterr().out
    # the adjudicator saw each annotator's value and note, and the sample's evidence with its source
    assert "alice, round 1: supported" in out and "bob, round 1: unsupported · note: step 4 says open" in out
    assert "from step 4 · tool get_invoice · output" in out and "adjudicator carol · field support" in out
    records = [json.loads(x) for x in adj.read_text().splitlines()]
    assert [(r["item_id"], r["value"], r["decided_by"]) for r in records] == [("e1", "unsupported", "carol"),
                                                                              ("e2", "unsure", "carol")]
    assert records[1]["note"] == "no tool output says paid" and records[0]["labels"][1]["note"] == "step 4 says open"
    assert "2 adjudicated label(s) added (0 already in the store)" in out
    gold = gold_labels(AnnotationStore(store_dir).labels())
    assert dict(gold.select("item_id", "value").iter_rows()) == {"e1": "unsupported", "e2": "unsure", "e3": "unsure"}
    # rerunning agree keeps both decisions; adjudicate again adds nothing new
    assert main(["agree", str(store_dir), "--n-boot", "50"]) == 0
    assert "0 to adjudicate, 2 decided (0 new)" in capsys.readouterr().out
    assert [json.loads(x)["value"] for x in adj.read_text().splitlines()] == ["unsupported", "unsure"]
    assert main(["adjudicate", str(adj), "--store", str(store_dir)]) == 0
    assert "0 adjudicated label(s) added (2 already in the store)" in capsys.readouterr().out


def test_adjudication_widget_writes_each_decision_into_the_file(tmp_path: Path) -> None:
    from workbench.annotate import adjudicate_widget, load_sample

    store_dir, adj = _disagreements(tmp_path)
    box = adjudicate_widget(adj, "support", adjudicator="carol", items=load_sample(store_dir / "samples" / "s.jsonl"))
    header, question, buttons, inputs, status, frame = box.children
    assert "adjudicator carol · field support · 1 of 2 · 0 decided" in header.value
    shown = html.unescape(re.sub(r"<[^>]+>", "", frame.children[0].value))  # the text a browser shows
    assert "bob, round 1: unsupported · note: step 4 says open" in shown
    by_name = {b.description.split(" ")[0]: b for b in buttons.children}
    by_name["supported"].click()
    first = json.loads(adj.read_text().splitlines()[0])
    assert (first["value"], first["decided_by"]) == ("supported", "carol")
    assert json.loads(adj.read_text().splitlines()[1])["value"] is None
    assert "2 of 2 · 1 decided" in header.value
    with pytest.raises(ValueError, match="no disagreement of field 'correct'"):
        adjudicate_widget(adj, "correct", adjudicator="carol")


def test_an_empty_adjudication_file_has_nothing_to_decide(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`agree` writes an empty file when the annotators agree everywhere; deciding it is not an error."""
    adj = tmp_path / "adjudication.jsonl"
    adj.write_text("")
    assert main(["adjudicate", str(adj), "--store", str(tmp_path), "--decide", "--adjudicator", "carol"]) == 0
    out = capsys.readouterr().out
    assert "no disagreements" in out and "0 adjudicated label(s) added" in out


def test_the_labeling_workflow_runs_from_the_library_without_the_cli(tmp_path: Path) -> None:
    """Issue 40: agreement, the adjudication file and adding decisions lived in the CLI; a notebook now calls
    annotate.adjudication.prepare and apply, and sample_items refuses a method the runs lack (it drew nothing)."""
    from workbench.annotate import AnnotationStore, sample_items, write_sample
    from workbench.annotate import apply, decide, prepare
    from workbench.errors import SelectionError
    from workbench.datasets import load

    from tests.conftest import EXAMPLE

    assert main(["import", str(EXAMPLE), "--out", str(tmp_path / "d"), "--entries"]) == 0
    tables = load(tmp_path / "d")
    with pytest.raises(SelectionError, match=r"method: expected a method the runs have: \[.*\], got 'no-such'"):
        sample_items(tables, 5, method="no-such")
    items, _ = sample_items(tables, 6, strata=(), sections=None, seed=2)
    store = AnnotationStore(tmp_path / "store")
    write_sample(items, tmp_path / "store" / "samples" / "mine.jsonl")
    for k, item in enumerate(items):
        store.add(item_id=item["item_id"], annotator="ann", round=1, field="support", value="supported")
        store.add(item_id=item["item_id"], annotator="bob", round=1, field="support",
                  value="supported" if k % 2 else "unsupported")
    prepared = prepare(tmp_path / "store", by="annotator", n_boot=50)
    assert prepared.file.open == 3 and prepared.file.added == 3 and "ann vs bob: n=6" in str(prepared)
    first = json.loads((tmp_path / "store" / "adjudication.jsonl").read_text().splitlines()[0])
    assert first["text"] == next(i["text"] for i in items if i["item_id"] == first["item_id"])  # the sample's text
    decide(prepared.file.path, first["item_id"], "support", value="unsupported", note=None, adjudicator="carol")
    assert (apply(prepared.file.path, tmp_path / "store").added, apply(prepared.file.path, tmp_path / "store").added) \
        == (1, 0)  # added once
    gold = gold_labels(store.labels()).filter(pl.col("item_id") == first["item_id"])
    assert gold["value"].item() == "unsupported"


@pytest.mark.slow
def test_two_adjudicators_at_once_lose_no_decision(tmp_path: Path) -> None:
    """Issue 39 item 2: decide() rewrote the whole file with no lock; two processes deciding different items left
    5, 6 or 7 of 9 decided, both exiting 0. Two processes decide their own items at once, repeatedly: all kept."""
    import subprocess
    import sys

    from workbench.annotate import merge_adjudication, read_adjudication

    path = tmp_path / "adjudication.jsonl"
    merge_adjudication(path, ({"item_id": f"e{i}", "field": "support", "labels": [], "allowed": ["supported"],
                               "value": None} for i in range(30)))
    code = """
import sys
from workbench.annotate import decide
for rnd in range(8):  # many writes each, so the two processes overlap for certain
    for i in range(int(sys.argv[2]), 30, 2):
        decide(sys.argv[1], f"e{i}", "support", value="supported", note=f"pass {rnd}", adjudicator=sys.argv[3])
"""
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path), str(k), who])
             for k, who in ((0, "carol"), (1, "dave"))]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    records = read_adjudication(path)
    assert len(records) == 30 and all(r["value"] == "supported" and r["note"] == "pass 7" for r in records)
    assert {r["decided_by"] for r in records if int(r["item_id"][1:]) % 2} == {"dave"}


@pytest.mark.parametrize("case", ["agreed", "conflicting", "decided_by"])
def test_a_decision_is_checked_against_the_disagreement_it_answers(tmp_path: Path, case: str,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 39 item 10: the adjudication file was trusted as written. A decision on e3 (alice and bob both said
    'unsure') replaced their agreed label in the gold set; two records of e1 with different values were both
    added; a decided_by of 'adjudicated' (or a name with a space) went in. Now each is refused with FILE:LINE and
    nothing is added to the store."""
    store_dir, adj = _disagreements(tmp_path)
    lines = [json.loads(line) for line in adj.read_text().splitlines()]
    assert [r["item_id"] for r in lines] == ["e1", "e2"]
    decision = {"field": "support", "value": "supported", "decided_by": "carol"}
    if case == "agreed":
        extra, line, said = {"item_id": "e3", **decision}, 3, "item 'e3', field 'support', which the annotators " \
            "labelled alike"
    elif case == "conflicting":
        extra, line, said = {"item_id": "e1", **decision, "value": "unsupported"}, 3, \
            "a second record of item 'e1', field 'support' (the first is line 1)"
    else:
        lines[1].update(decision, decided_by="Adjudicated_")
        extra, line, said = None, 2, "'Adjudicated_'"
    lines[0].update(decision)
    adj.write_text("".join(json.dumps(r) + "\n" for r in [*lines, *([extra] if extra else [])]))
    before = gold_labels(AnnotationStore(store_dir).labels())
    capsys.readouterr()
    assert main(["adjudicate", str(adj), "--store", str(store_dir)]) == 2
    err = capsys.readouterr().err
    assert f"{adj}:{line}: " in err and said in err, err
    assert gold_labels(AnnotationStore(store_dir).labels()).equals(before)  # nothing added


def test_an_adjudicator_or_annotator_named_like_the_reserved_name_is_refused(tmp_path: Path) -> None:
    """Issue 39 item 11: 'adjudicated.' and 'adjudicated_' were accepted as people's names. Case-folded and stripped
    of punctuation, a name equal to a reserved one is refused, as a labeller and as an adjudicator."""
    from workbench.annotate import decide
    from workbench.errors import SchemaError

    store = AnnotationStore(tmp_path / "store")
    for name in ("adjudicated.", "adjudicated_", "Adjudicated", "ADJUDICATED-", "adju.dicated"):
        with pytest.raises(SchemaError, match="reserves"):
            store.add(item_id="e1", annotator=name, round=1, field="support", value="supported")
    store.add(item_id="e1", annotator="adjudicator7", round=1, field="support", value="supported")  # not alike
    _, adj = _disagreements(tmp_path / "x")
    with pytest.raises(SchemaError, match="reserves"):
        decide(adj, "e1", "support", value="supported", note=None, adjudicator="adjudicated_")
    assert all(json.loads(line).get("value") is None for line in adj.read_text().splitlines())
