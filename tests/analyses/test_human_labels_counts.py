"""Issue 79: every AUROC row's ``n`` is the rows it rests on, ``n_missing`` every row of its group left out, and the
reason says why (no label, no score, too few of a class), counted here by hand."""

from __future__ import annotations

import numpy as np
import polars as pl


def _frame() -> pl.DataFrame:
    """Two systems over 30 sources: "model" with a metric on every summary, "Gold" without one (as in XSumFaith,
    where the reference summaries carry no metric scores), and 6 model summaries with no human label."""
    rng = np.random.default_rng(4)
    rows = []
    for i in range(30):
        for system in ("model", "Gold"):
            label = int(rng.random() < 0.5)
            rows.append({"dataset": "news", "system": system, "source_id": f"s{i}", "split": "test",
                         "human_score": None if system == "model" and i < 6 else float(label),
                         "metric": None if system == "Gold" else float(label + rng.normal(0, 0.8))})
    return pl.DataFrame(rows)


def test_summary_auroc_counts_what_it_left_out_and_why() -> None:
    """Before: n and n_missing counted only the labelled rows with every score (a data set's unlabelled summaries
    were dropped without a count), and a group emptied by a missing metric said "0 positive and 0 negative"."""
    from workbench.analyses import summary_auroc

    frame = _frame()
    whole = summary_auroc(frame, ["metric"], by=("dataset",), n_boot=200).row(0, named=True)
    labelled_with_metric = frame.filter(pl.col("human_score").is_not_null() & pl.col("metric").is_not_null())
    assert whole["n"] == labelled_with_metric.height == 24
    assert whole["n_missing"] == 60 - 24 and whole["positives"] == int(labelled_with_metric["human_score"].sum())
    assert "36 left out: 6 without a label, 30 without every score" in whole["reason"]
    by_system = summary_auroc(frame, ["metric"], by=("system",), n_boot=200)
    gold = by_system.filter(pl.col("system") == "Gold").row(0, named=True)
    labels = frame.filter(pl.col("system") == "Gold")["human_score"]
    pos, neg = int(labels.sum()), int((labels == 0).sum())
    assert gold["estimate"] is None and gold["n"] == 0 and gold["n_missing"] == 30
    assert gold["reason"].startswith(f"0 positive and 0 negative ({pos} and {neg} before the scores were required)")
