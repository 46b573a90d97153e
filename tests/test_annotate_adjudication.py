"""Agreement and adjudication through the CLI: disagreements out, adjudicated labels back into the store."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from workbench.annotate import (
    AnnotationStore,
)
from workbench.cli import main
from workbench.metrics.discrimination import gold_labels

from .conftest import labels_frame


def test_agree_and_adjudicate_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = AnnotationStore(tmp_path)
    store.add_many(labels_frame(n=50).to_dicts())
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
