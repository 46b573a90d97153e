"""The append-only annotation store: concurrent writers, latest label wins, corrupt files named."""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path

import polars as pl
import pytest

from workbench.annotate import (
    AnnotationStore,
    LabelSession,
)


def _writer(args: tuple[str, str]) -> None:
    root, who = args
    store = AnnotationStore(root)
    for i in range(400):
        store.add(item_id=f"e{i}", annotator="shared", round=1, field="support", value="supported",
                  note=f"{who}-{i}")


@pytest.mark.slow
def test_two_processes_adding_400_labels_each_leave_800(tmp_path: Path) -> None:
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        pool.map(_writer, [(str(tmp_path), "p1"), (str(tmp_path), "p2")])
    lines = (tmp_path / "labels" / "shared.round1.jsonl").read_text().splitlines()
    assert len(lines) == 800 and all(json.loads(line)["field"] == "support" for line in lines)
    assert {json.loads(line)["note"] for line in lines} == {f"{w}-{i}" for w in ("p1", "p2") for i in range(400)}
    assert AnnotationStore(tmp_path).history().height == 800


def test_latest_label_wins_history_stays_and_session_resumes(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path)
    items = [{"item_id": f"e{i}", "text": f"- entry {i}"} for i in range(4)]
    s = LabelSession(items, store, "bob", 1)
    s.label("supported")
    s.label("unsupported")
    s.undo()  # issue 43: an undo retracts the label (appended), so the item is open again
    assert s.index == 1 and "undone: the support label 'unsupported' of e1 is retracted" in s.undo_message()
    assert store.labels()["item_id"].to_list() == ["e0"]
    assert LabelSession(items, store, "bob", 1).index == 1  # a new session opens at the undone item
    s.label("supported", note="changed my mind")
    history = store.history()
    assert history.height == 4 and history["value"].to_list() == ["supported", "unsupported", None, "supported"]
    cur = store.labels()
    assert cur.height == 2 and cur.filter(pl.col("item_id") == "e1")["value"][0] == "supported"
    assert LabelSession(items, store, "bob", 1).index == 2  # resumes at the first unlabeled item
    with pytest.raises(ValueError, match="expected one of"):
        s.label("maybe")


def test_corrupt_label_file_names_the_line(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path)
    store.add(item_id="e1", annotator="x", round=1, field="support", value="supported")
    with open(store.file_for("x", 1), "a") as fh:
        fh.write('{"item_id": "e2", "annotator": "x"\n')
    from workbench.errors import SchemaError

    with pytest.raises(SchemaError, match=r"x.round1.jsonl:2: "):
        store.labels()


def test_torn_last_line_is_moved_aside_and_the_next_label_starts_clean(tmp_path: Path) -> None:
    from workbench.annotate import TornLineWarning

    store = AnnotationStore(tmp_path)
    store.add(item_id="e1", annotator="alice", round=1, field="support", value="supported")
    path = store.file_for("alice", 1)
    good = path.read_bytes()
    torn = b'{"item_id": "e2", "annotator": "alice", "rou'  # what kill -9 in the middle of a write leaves
    path.write_bytes(good + torn)
    with pytest.warns(TornLineWarning, match=r"alice\.round1\.jsonl: the last line was cut off.*moved its 44 bytes"):
        store = AnnotationStore(tmp_path)
    assert path.read_bytes() == good
    sides = list(path.parent.glob("alice.round1.jsonl.torn-*"))
    assert len(sides) == 1 and sides[0].read_bytes() == torn
    store.add(item_id="e2", annotator="alice", round=1, field="support", value="unsupported")
    assert store.labels()["item_id"].to_list() == ["e1", "e2"]
    # a tear appearing while a store is open is caught by the next append, under the lock
    path.write_bytes(path.read_bytes() + b'{"item_id"')
    with pytest.warns(TornLineWarning):
        store.add(item_id="e3", annotator="alice", round=1, field="support", value="unsure")
    assert [json.loads(x)["item_id"] for x in path.read_text().splitlines()] == ["e1", "e2", "e3"]


def test_store_stamps_labeled_at_and_checks_annotator_names(tmp_path: Path) -> None:
    from workbench.errors import SchemaError

    store = AnnotationStore(tmp_path)
    store.add_many([{"item_id": "e1", "annotator": "bob", "round": 1, "field": "support", "value": "supported",
                     "labeled_at": "2099-01-01T00:00:00+00:00"}])
    stamp = store.labels()["labeled_at"][0]
    assert not str(stamp).startswith("2099")  # the input's time never wins as latest
    for bad in ("dan ", " dan", "a/b", "..", "", "x\\y", "eve\n"):
        with pytest.raises(SchemaError, match="field 'annotator'"):
            store.add(item_id="e1", annotator=bad, round=1, field="support", value="supported")
        with pytest.raises(SchemaError, match="field 'annotator'"):
            store.add_many([{"item_id": "e1", "annotator": bad, "round": 1, "field": "support", "value": "supported"}])
    store.add(item_id="e1", annotator="eve@example.org", round=1, field="support", value="supported")
    assert set(store.labels()["annotator"]) == {"bob", "eve@example.org"}




def test_a_complete_last_record_without_its_newline_is_kept(tmp_path: Path) -> None:
    """A whole record whose newline never came was moved aside as torn; it parses, so it stays."""
    store = AnnotationStore(tmp_path)
    store.add(item_id="e1", annotator="alice", round=1, field="support", value="supported")
    path = store.file_for("alice", 1)
    last = json.loads(path.read_text().splitlines()[0]) | {"item_id": "e2", "value": "unsupported"}
    path.write_bytes(path.read_bytes() + json.dumps(last).encode())
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no TornLineWarning
        store = AnnotationStore(tmp_path)
        store.add(item_id="e3", annotator="alice", round=1, field="support", value="unsure")
    assert store.labels()["item_id"].to_list() == ["e1", "e2", "e3"]
    assert not list(path.parent.glob("*.torn-*"))


def test_nobody_labels_under_the_adjudicators_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """'adjudicated' labels win outright in the gold set: only `workbench adjudicate` may write them."""
    from workbench.cli.main import main
    from workbench.errors import SchemaError

    store = AnnotationStore(tmp_path)
    for name in ("adjudicated", "Adjudicated"):
        with pytest.raises(SchemaError, match="not one the store reserves"):
            store.add(item_id="e1", annotator=name, round=1, field="support", value="supported")
        with pytest.raises(SchemaError, match="not one the store reserves"):
            store.add_many([{"item_id": "e1", "annotator": name, "round": 0, "field": "support", "value": "unsure"}])
    sample = tmp_path / "s.jsonl"
    sample.write_text(json.dumps({"item_id": "e1", "text": "- x"}) + "\n")
    assert main(["label", str(sample), "--annotator", "adjudicated", "--store", str(tmp_path)]) == 2
    assert "option --annotator" in capsys.readouterr().err
    assert store.add_many([{"item_id": "e1", "annotator": "adjudicated", "round": 0, "field": "support",
                            "value": "unsure"}], adjudication=True) == 1


def test_one_naming_rule_for_annotators_in_the_store_the_cli_and_the_protocol() -> None:
    from workbench.tables._vocabulary import ANNOTATOR_RULE
    from workbench.cli.main import build_parser

    protocol = " ".join((Path(__file__).resolve().parents[2] / "annotations" / "PROTOCOL.md").read_text().split())
    assert ANNOTATOR_RULE in protocol
    label = build_parser()._subparsers._group_actions[0].choices["label"]  # type: ignore[union-attr]
    assert ANNOTATOR_RULE in " ".join(label.format_help().split())


def test_a_read_only_store_can_be_read_and_nothing_is_repaired(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Before: agree on a read-only mount failed creating a lock file (and would have moved a torn tail aside).
    Reading takes no lock and repairs nothing: no file is created or changed, a torn tail is skipped and reported.
    (Checked by the files, not by mode bits: the tests run as root, whom a read-only mode does not stop.)"""
    from workbench.annotate import TornLineWarning
    from workbench.cli.main import main

    store = AnnotationStore(tmp_path / "store")
    store.add_many([{"item_id": f"e{i}", "annotator": "alice", "round": r, "field": "support",
                     "value": "supported" if (i + r) % 3 else "unsupported"} for i in range(6) for r in (1, 2)])
    store.add_note(item_id="e1", annotator="alice", round=1, field="support", note="checked step 3")
    path = store.file_for("alice", 1)
    path.write_bytes(path.read_bytes() + b'{"item_id": "e9", "annot')
    for lock in (tmp_path / "store").rglob("*.lock"):
        lock.unlink()
    before = {p: p.read_bytes() for p in (tmp_path / "store").rglob("*") if p.is_file()}
    with pytest.warns(TornLineWarning, match="left as it is"):
        got = AnnotationStore(tmp_path / "store", read_only=True).labels()
    assert got.height == 12
    assert main(["agree", str(tmp_path / "store"), "--n-boot", "50", "--out", str(tmp_path / "adj.jsonl")]) == 0
    said = capsys.readouterr()
    assert "n=6" in said.out and "left as it is (read only)" in said.err
    assert {p: p.read_bytes() for p in (tmp_path / "store").rglob("*") if p.is_file()} == before


def test_a_full_disk_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Before: 'No space left on device' with no file named. The label store's append and every atomic write."""
    import errno
    import os

    from workbench._util.atomic import atomic_write

    def full(*_: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    store = AnnotationStore(tmp_path / "store")
    monkeypatch.setattr(os, "write", full)
    with pytest.raises(OSError) as caught:
        store.add(item_id="e1", annotator="alice", round=1, field="support", value="supported")
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(store.file_for("alice", 1))
    monkeypatch.undo()
    with pytest.raises(OSError) as caught:
        atomic_write(tmp_path / "out.json", lambda tmp: full())
    assert caught.value.filename == str(tmp_path / "out.json") and not list(tmp_path.glob(".out.json.*"))
