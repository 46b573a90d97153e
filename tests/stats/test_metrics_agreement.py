"""Kappa and percent agreement against sklearn; the agreement table and the disagreements."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import cohen_kappa_score

from workbench.stats import agreement_table, cohen_kappa, disagreements, percent_agreement

from tests.conftest import labels_frame


def test_kappa_and_agreement_equal_sklearn() -> None:
    rng = np.random.default_rng(4)
    for _ in range(20):
        a = rng.choice(["s", "u", "x"], 60)
        b = np.where(rng.random(60) < 0.8, a, rng.choice(["s", "u", "x"], 60))
        assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
        assert percent_agreement(a, b) == pytest.approx(np.mean(a == b))
    assert np.isnan(cohen_kappa(["a"] * 3, ["a"] * 3))


def test_agreement_table_and_disagreements() -> None:
    labels = labels_frame()
    t = agreement_table(labels, {f"e{i:03d}": f"s{i % 10}" for i in range(200)}, n_boot=300)
    assert t.columns == ["field", "a", "b", "statistic", "disagreements", "n_skipped", "n_unsure", "unsure_as",
                         "estimate", "ci_low", "ci_high", "n", "n_boot", "level", "method", "n_missing", "reason"]
    row = t.filter(pl.col("statistic") == "kappa").row(0, named=True)
    wide = labels.pivot(on="round", index="item_id", values="value")
    assert row["estimate"] == pytest.approx(cohen_kappa_score(wide["1"], wide["2"]))
    assert row["ci_low"] <= row["estimate"] <= row["ci_high"] and row["n_boot"] == 300 and row["n"] == 200
    agree = t.filter(pl.col("statistic") == "agreement").row(0, named=True)
    assert agree["estimate"] == pytest.approx(float((wide["1"] == wide["2"]).mean()))
    assert row["disagreements"] == disagreements(labels).height == int((wide["1"] != wide["2"]).sum())


def test_unsure_is_said_to_be_a_category_and_skips_are_the_missing() -> None:
    """Statistics round 5, item 6: the table says how unsure counts (a category: both unsure agree), counts the
    items with unsure on a side, and n_missing is the skipped items, not 0 beside n_skipped = 2."""
    from workbench.stats import UNSURE_AS, agreement_report

    a = ["supported", "unsure", "unsure", "unsupported", None, "supported"]
    b = ["supported", "unsure", "supported", "unsupported", "supported", None]
    labels = pl.DataFrame([{"item_id": f"e{i}", "annotator": who, "round": 1, "field": "support", "value": v,
                            "note": None, "labeled_at": None}
                           for i, (x, y) in enumerate(zip(a, b, strict=True)) for who, v in (("ann", x), ("bob", y))],
                          schema_overrides={"note": pl.Utf8, "labeled_at": pl.Utf8})
    t = agreement_table(labels, by="annotator", n_boot=50)
    agree = t.filter(pl.col("statistic") == "agreement").row(0, named=True)
    assert (agree["n"], agree["n_skipped"], agree["n_missing"], agree["n_unsure"]) == (4, 2, 2, 2)
    assert agree["estimate"] == pytest.approx(3 / 4) and agree["unsure_as"] == UNSURE_AS  # (unsure, unsure) agrees
    printed = str(agreement_report(labels, by="annotator", n_boot=50))
    assert "unsure is a category: two sides both unsure agree" in printed and "2 skipped by one side, left out; 2 with unsure on a side" in printed
