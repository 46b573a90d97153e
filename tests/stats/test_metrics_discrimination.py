"""Precision and recall at tau on a hand-computed case."""

from __future__ import annotations

import numpy as np
import pytest

from workbench.stats import precision_recall_at


def test_precision_recall_at_tau_hand_computed() -> None:
    s = np.array([0.9, 0.8, 0.6, 0.4, 0.2])
    y = np.array([True, False, True, True, False])
    assert precision_recall_at(s, y, 0.5) == (pytest.approx(2 / 3), pytest.approx(2 / 3))


def test_a_field_nobody_labelled_is_skipped_with_its_reason_not_an_index_error() -> None:
    """Issue 43: the README's tour labels support only; judge_table's default fields include correct, whose empty
    input raised IndexError in auroc_ci. The empty field is a row with its reason; auroc_ci on no rows says so."""
    import polars as pl

    from workbench.stats import auroc_ci
    from workbench.stats import judge_table

    scores = pl.DataFrame({"entry_id": ["a", "b", "c", "d"], "judge": ["lexical"] * 4, "score": [0.9, 0.2, 0.8, 0.1]})
    gold = pl.DataFrame({"item_id": ["a", "b", "c", "d"], "field": ["support"] * 4,
                         "value": ["supported", "unsupported", "supported", "unsupported"]})
    table = judge_table(scores, gold, {"a": "s1", "b": "s1", "c": "s2", "d": "s2"}, n_boot=50)
    support = table.filter(pl.col("field") == "support").row(0, named=True)
    correct = table.filter(pl.col("field") == "correct").row(0, named=True)
    assert support["estimate"] == 1.0 and support["reason"].startswith("zero width")  # perfect: said, issue 42
    assert correct["estimate"] is None and correct["n"] == 0 and correct["reason"] == "no correct labels of entries this judge scored"
    with pytest.raises(ValueError, match="no rows with a usable score"):
        auroc_ci(np.array([np.nan]), np.array([1]), np.array(["s"]))
