"""The published numbers transcribed from the source documents cite their source and match the text."""

from __future__ import annotations

import polars as pl


def test_published_numbers_cite_their_source_and_match_the_text() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "data" / "published"
    focus = pl.read_csv(root / "focus_tables.csv")
    text = pl.read_csv(root / "text_numbers.csv")
    assert focus["source"].str.contains(r"line \d+$").all() and text["source"].str.contains(r"line \d+$").all()
    assert set(focus["table"]) == {f"Table {i}" for i in (*range(1, 11), 12, 13, 14)}
    # spot checks against numbers the FOCUS text repeats in prose
    row = focus.filter((pl.col("table") == "Table 1") & pl.col("panel").str.starts_with("(a)")
                       & (pl.col("method") == "FOCUS-D") & (pl.col("metric") == "acc"))
    assert row["value"][0] == 64.9  # "jumping to 64.9% absolute accuracy"
    assert focus.filter((pl.col("table") == "Table 5") & (pl.col("method") == "FOCUS (parallel)")
                        & (pl.col("metric") == "latency_s"))["value"][0] == 36.5
    assert text.filter(pl.col("quantity") == "auroc_support_jev")["value"][0] == 0.905
