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
    s.undo()
    s.label("supported", note="changed my mind")
    assert store.history().height == 3
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
    from workbench.schema import SchemaError

    with pytest.raises(SchemaError, match=r"x.round1.jsonl:2: "):
        store.labels()
