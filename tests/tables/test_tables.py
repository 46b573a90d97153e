"""Table files: Parquet and JSONL, line-numbered errors, references between tables."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from workbench.adapters import read_log
from workbench.datasets import load
from workbench.tables import read_table, write_tables
from workbench.errors import SchemaError

EXAMPLE = Path(__file__).resolve().parents[2] / "workbench" / "datasets" / "example_logs" / "invoice_log.jsonl"


def write_lines(path: Path, records: list[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def test_table_files_parquet_and_jsonl(tmp_path: Path) -> None:
    scores = pl.DataFrame({"entry_id": ["a", "b"], "judge": ["lexical", "lexical"], "score": [0.2, None],
                           "evidence_ids": [["p1"], None]})
    for fmt in ("parquet", "jsonl"):
        write_tables({"scores": scores}, tmp_path / fmt, fmt=fmt)
        back = read_table(tmp_path / fmt / f"scores.{fmt}", "scores")
        assert back.select(scores.columns).equals(scores)


def test_table_jsonl_errors_name_line(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    write_lines(path, [
        {"item_id": "a", "annotator": "x", "round": 1, "field": "support", "value": "supported"},
        {"item_id": "b", "annotator": "x", "round": "one", "field": "support", "value": "no"},
    ])
    with pytest.raises(SchemaError, match=r"labels.jsonl:2: field 'round': expected an integer, got string 'one'"):
        read_table(path, "labels")


def test_references_between_table_files(tmp_path: Path) -> None:
    tables = read_log(EXAMPLE)
    write_tables(tables, tmp_path / "d", fmt="jsonl")
    steps = pl.read_ndjson(tmp_path / "d" / "steps.jsonl")
    steps = steps.with_row_index("i").with_columns(pl.when(pl.col("i") == 3).then(pl.lit("ghost")).otherwise(pl.col("run_id")).alias("run_id")).drop("i")
    steps.write_ndjson(tmp_path / "d" / "steps.jsonl")
    with pytest.raises(SchemaError, match=r"steps.jsonl:4: field 'run_id': expected a key present in table 'runs', got unknown run_id='ghost'"):
        load(tmp_path / "d")


def _scores(n: int) -> pl.DataFrame:
    return pl.DataFrame({"entry_id": [f"r{i // 10}/b0/e{i % 10}" for i in range(n)], "judge": ["lexical"] * n,
                         "repeat": [0] * n, "score": [(i % 7) / 7 for i in range(n)], "request_id": ["q"] * n,
                         "evidence_ids": [["o0c0"]] * n, "reason": [None] * n},
                        schema_overrides={"reason": pl.Utf8, "repeat": pl.Int32})


def test_scan_table_gives_the_checked_columns_read_table_gives(tmp_path: Path) -> None:
    """The lazy columns equal the eager reader's (cast to the declared dtypes: Int32 repeat becomes Int64)."""
    from workbench.tables import read_table

    _scores(1000).write_parquet(tmp_path / "scores.parquet")
    lazy = read_table(tmp_path / "scores.parquet", "scores", ("entry_id", "repeat", "score"), lazy=True)
    assert isinstance(lazy, pl.LazyFrame)
    got = lazy.collect()
    assert got.columns == ["entry_id", "repeat", "score"] and got.schema["repeat"] == pl.Int64
    assert got.equals(read_table(tmp_path / "scores.parquet", "scores").select("entry_id", "repeat", "score"))


@pytest.mark.parametrize("batch_bytes", [64 * 2**20, 3_000])
def test_scan_table_names_the_bad_row_beyond_the_first_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             batch_bytes: int) -> None:
    """Checked a batch at a time, an error still names the file's row (row 2,501 here: batches of 1,000; with
    3,000 bytes a batch, batches of about a hundred rows, which wide rows get)."""
    from workbench.tables import _files as tables
    from workbench.tables import read_table

    monkeypatch.setattr(tables, "_CHECK_ROWS", 1000)
    monkeypatch.setattr(tables, "_CHECK_BYTES", batch_bytes)
    _scores(1000).write_parquet(tmp_path / "first.parquet")
    at_once = tables._check_rows(pl.scan_parquet(tmp_path / "first.parquet"))
    assert at_once == 1000 if batch_bytes > 10**6 else 10 < at_once < 1000
    bad = _scores(4000).with_columns(pl.when(pl.int_range(pl.len()) == 2500).then(1.5).otherwise(pl.col("score"))
                                     .alias("score"))
    bad.write_parquet(tmp_path / "scores.parquet")
    with pytest.raises(SchemaError) as err:
        read_table(tmp_path / "scores.parquet", "scores", ("entry_id", "score"), lazy=True)
    assert str(err.value) == (f"{tmp_path / 'scores.parquet'}:row 2501: field 'score': expected a number in [0, 1], "
                              "got number 1.5")
    # a column not asked for is not read, so not checked
    assert read_table(tmp_path / "scores.parquet", "scores", ("entry_id",), lazy=True).collect().height == 4000


@pytest.mark.parametrize("hashes", [8_000_000, 500])
def test_scan_table_finds_a_key_repeated_in_another_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          hashes: int) -> None:
    """Batches of 1,000: row 2,400 repeats row 10's (run_id, step); rows 3,001-3,002 repeat each other. With 500
    hashes held at a time the 3,500 keys' hashes go through eight bucket files: the same answer."""
    from workbench.tables import _files as tables
    from workbench.tables import read_table

    monkeypatch.setattr(tables, "_CHECK_ROWS", 1000)
    monkeypatch.setattr(tables, "_KEY_HASHES", hashes)
    steps = pl.DataFrame({"run_id": [f"r{i // 7}" for i in range(3500)], "step": [i % 7 for i in range(3500)]})
    steps.write_parquet(tmp_path / "steps.parquet")
    assert read_table(tmp_path / "steps.parquet", "steps", ("run_id", "step"), lazy=True).collect().equals(steps)
    bad = steps.with_columns(pl.when(pl.int_range(pl.len()) == 2399).then(pl.lit("r1")).otherwise(pl.col("run_id"))
                             .alias("run_id"),
                             pl.when(pl.int_range(pl.len()) == 2399).then(2).otherwise(pl.col("step")).alias("step"))
    assert bad.row(9) == bad.row(2399) == ("r1", 2)
    bad.write_parquet(tmp_path / "steps.parquet")
    with pytest.raises(SchemaError) as err:
        read_table(tmp_path / "steps.parquet", "steps", ("step", "run_id"), lazy=True)
    assert str(err.value) == (f"{tmp_path / 'steps.parquet'}:row 2400: field 'run_id,step': expected a unique key in "
                              "table 'steps', got duplicate (run_id='r1', step=2) first seen at row 10")
    assert read_table(tmp_path / "steps.parquet", "steps", ("run_id",), lazy=True).collect().height == 3500  # not the whole key


def test_scan_table_missing_and_optional_columns(tmp_path: Path) -> None:
    """A required column the file lacks is an error naming it; an optional one is null, as read_table gives it."""
    from workbench.tables import read_table

    _scores(10).drop("repeat").write_parquet(tmp_path / "scores.parquet")
    got = read_table(tmp_path / "scores.parquet", "scores", ("entry_id", "repeat", "score"), lazy=True).collect()
    assert got.equals(read_table(tmp_path / "scores.parquet", "scores").select("entry_id", "repeat", "score"))
    assert got.schema["repeat"] == pl.Int64 and got.get_column("repeat").null_count() == 10
    _scores(10).drop("judge").write_parquet(tmp_path / "scores.parquet")
    with pytest.raises(SchemaError, match=r"scores.parquet:row 1: field 'judge': expected a column of strings"):
        read_table(tmp_path / "scores.parquet", "scores", ("entry_id", "judge"), lazy=True)
    (tmp_path / "scores.parquet").write_bytes(b"not parquet")
    with pytest.raises(SchemaError, match="not a readable Parquet file"):
        read_table(tmp_path / "scores.parquet", "scores", ("entry_id",), lazy=True)


def test_scan_table_without_columns_gives_every_column_as_read_table_does(tmp_path: Path) -> None:
    from workbench.tables import read_table

    _scores(50).drop("reason").write_parquet(tmp_path / "scores.parquet")  # an optional column absent: null
    assert read_table(tmp_path / "scores.parquet", "scores", lazy=True).collect().equals(
        read_table(tmp_path / "scores.parquet", "scores"))


def test_scan_table_checks_a_key_only_when_it_reads_all_of_it(tmp_path: Path) -> None:
    """Steps' key is (run_id, step): run_id alone repeats; the whole key given twice is an error."""
    from workbench.tables import read_table

    steps = pl.DataFrame({"run_id": ["r", "r", "r"], "step": [0, 1, 1]})
    steps.write_parquet(tmp_path / "steps.parquet")
    assert read_table(tmp_path / "steps.parquet", "steps", ("run_id",), lazy=True).collect().height == 3
    with pytest.raises(SchemaError, match=r"steps.parquet:row 3: field 'run_id,step': expected a unique key"):
        read_table(tmp_path / "steps.parquet", "steps", ("run_id", "step"), lazy=True)


def test_rows_of_keeps_what_a_semi_join_keeps_from_a_parquet_scan(tmp_path: Path) -> None:
    """``rows_of`` against polars' own semi join on frames in memory: one key column and two, where each column's
    values occur in the keys but not every pair does (run a's boundary 2 is not asked), nulls and repeated keys."""
    from workbench.tables import rows_of

    rows = pl.DataFrame({"run_id": ["a", "a", "b", "b", "c", None, "a"], "boundary": [1, 2, 1, 2, 1, 1, 1],
                         "x": list(range(7))})
    rows.write_parquet(tmp_path / "t.parquet", row_group_size=2)
    scan = pl.scan_parquet(tmp_path / "t.parquet")
    pairs = pl.DataFrame({"run_id": ["a", "b", "a", None], "boundary": [1, 2, 1, 1]})
    single = pl.DataFrame({"run_id": ["b", "a", "zz"]})
    for keys in (pairs, single):
        expected = rows.join(keys, on=keys.columns, how="semi", maintain_order="left")
        got = rows_of(scan, keys).collect()
        assert got.equals(expected), (keys.columns, got)
    assert rows_of(scan, pairs).collect().get_column("x").to_list() == [0, 3, 6]


def test_a_frame_built_from_columns_is_the_frame_built_from_the_rows() -> None:
    """The import's workers hand their rows over as columns (``records.row_columns``); the frame made of them must be
    the one polars makes of the rows themselves (``rows_frame``, which reads dicts): keys a row lacks, a column
    all null, declared dtypes, a column the schema does not declare (inferred from every row, an int then a float),
    and no rows at all."""
    from workbench.tables._records import row_columns
    from workbench.tables._files import columns_frame, rows_frame

    rows = [{"run_id": "r1", "step": 0, "tool": "Read", "args": '{"a":1}', "input_tokens": 10, "extra": 1},
            {"run_id": "r1", "step": 1, "observation": "ok", "error": True, "timestamp": None, "extra": 2.5},
            {"step": 2, "run_id": "r2", "text": "done", "output_tokens": 3, "model": None}]
    for table, given in (("steps", rows), ("steps", [{k: v for k, v in r.items() if k != "extra"} for r in rows]),
                         ("compactions", []), ("steps", [{"run_id": "r", "step": 0, "tool": None}]),
                         ("steps", [{"run_id": "r", "step": 1.5}])):  # (rows_frame reads a float step as 1)
        expected = rows_frame(table, given)
        got = columns_frame(table, row_columns(given))
        assert got.schema == expected.schema and got.equals(expected), (table, given)
    assert rows_frame("steps", rows)["extra"].dtype == pl.Float64  # (the case is what it says)


def test_a_wide_table_is_written_in_row_groups_of_bounded_bytes(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 62: ``write_tables`` cuts a table into Parquet row groups of about ``_ROW_GROUP_BYTES`` of data (as a
    streamed table is cut), so a scan's slice decodes part of a table, not all of it; the rows read back are the
    rows written. Counted by pyarrow: 400 rows of 1 KiB text at 64 KiB a group -> 7 groups (64 rows each, the floor),
    a narrow table one group."""
    import pyarrow.parquet as pq

    from workbench.tables import _files

    monkeypatch.setattr(_files, "_ROW_GROUP_BYTES", 64 << 10)
    steps = pl.DataFrame({"run_id": ["r"] * 400, "step": list(range(400)), "observation": ["x" * 1024] * 400})
    narrow = steps.head(50).drop("observation")
    write_tables({"steps": steps}, tmp_path / "wide")
    write_tables({"steps": narrow}, tmp_path / "narrow")
    wide = pq.ParquetFile(tmp_path / "wide" / "steps.parquet").metadata
    assert (wide.num_row_groups, wide.row_group(0).num_rows) == (7, 64)
    assert pq.ParquetFile(tmp_path / "narrow" / "steps.parquet").metadata.num_row_groups == 1
    back = read_table(tmp_path / "wide" / "steps.parquet", "steps")
    assert back.select(steps.columns).equals(steps)
