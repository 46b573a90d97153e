"""Agreement and adjudication through the CLI: disagreements out, adjudicated labels back into the store."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from workbench.annotate import (
    AnnotationStore,
)
from workbench.cli.main import main
from workbench.labels import gold_labels

from .conftest import labels_frame


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
    from workbench.metrics.agreement import agreement_pairs

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
    assert "field 'field': expected one of ['support', 'correct', 'pattern', 'entry_support'], got string 'mood'" in \
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
    assert "field 'item_id': expected an item and field the store's annotators labeled, got 'nonexistent/zzz'" in \
        capsys.readouterr().err
    assert "adjudicated" not in set(store.labels()["annotator"])
