"""Table files: Parquet and JSONL, line-numbered errors, references between tables."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from workbench import io
from workbench.schema import SchemaError

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "examples" / "invoice_log.jsonl"


def write_lines(path: Path, records: list[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def test_table_files_parquet_and_jsonl(tmp_path: Path) -> None:
    scores = pl.DataFrame({"entry_id": ["a", "b"], "judge": ["lexical", "lexical"], "score": [0.2, None],
                           "evidence_ids": [["p1"], None]})
    for suffix in (".parquet", ".jsonl"):
        path = io.write_table(scores, tmp_path / f"scores{suffix}", "scores")
        back = io.read_table(path, "scores")
        assert back.select(scores.columns).equals(scores)


def test_table_jsonl_errors_name_line(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    write_lines(path, [
        {"item_id": "a", "annotator": "x", "round": 1, "field": "support", "value": "supported"},
        {"item_id": "b", "annotator": "x", "round": "one", "field": "support", "value": "no"},
    ])
    with pytest.raises(SchemaError, match=r"labels.jsonl:2: field 'round': expected an integer, got string 'one'"):
        io.read_table(path, "labels")


def test_references_between_table_files(tmp_path: Path) -> None:
    tables = io.read_log(EXAMPLE)
    io.write_tables(tables, tmp_path / "d", fmt="jsonl")
    steps = pl.read_ndjson(tmp_path / "d" / "steps.jsonl")
    steps = steps.with_row_index("i").with_columns(pl.when(pl.col("i") == 3).then(pl.lit("ghost")).otherwise(pl.col("run_id")).alias("run_id")).drop("i")
    steps.write_ndjson(tmp_path / "d" / "steps.jsonl")
    with pytest.raises(SchemaError, match=r"steps.jsonl:4: field 'run_id': expected a key present in table 'runs', got unknown run_id='ghost'"):
        io.read_tables(tmp_path / "d")
