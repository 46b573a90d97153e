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
    from workbench.stats import agreement_report
    from workbench.stats._agreement import UNSURE_AS

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


def test_a_new_annotator_adds_a_row_and_never_replaces_the_workers_one() -> None:
    """Issue 79: after a user labelled 10 of 2,500 items, agree printed a Fleiss kappa over those 10 and no longer
    the three workers' over 2,500. Each set of annotators that labelled items together now has its row over the items
    all of them labelled: the workers' over all 60 here (equal to statsmodels' Fleiss kappa), the four's over the 6
    the user labelled."""
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    from workbench.stats import agreement_report, multi_rater_agreement

    rng = np.random.default_rng(9)
    truth = rng.random(60) < 0.5
    rows = []
    votes = {}
    for who in ("w1", "w2", "w3"):
        votes[who] = truth ^ (rng.random(60) < 0.2)
    votes["user"] = truth ^ (rng.random(60) < 0.5)
    for who, v in votes.items():
        for i in range(60 if who != "user" else 6):
            rows.append({"item_id": f"e{i:02d}", "annotator": who, "round": 1, "field": "support",
                         "value": "supported" if v[i] else "unsupported", "note": None, "labeled_at": None})
    labels = pl.DataFrame(rows, schema_overrides={"note": pl.Utf8, "labeled_at": pl.Utf8})
    multi = multi_rater_agreement(labels, n_boot=100).filter(pl.col("statistic") == "fleiss_kappa")
    by_set = {r["annotator_set"]: r for r in multi.iter_rows(named=True)}
    assert set(by_set) == {"w1, w2, w3", "user, w1, w2, w3"}
    workers = np.column_stack([votes[w] for w in ("w1", "w2", "w3")]).astype(int)
    assert by_set["w1, w2, w3"]["n"] == 60
    assert by_set["w1, w2, w3"]["estimate"] == pytest.approx(fleiss_kappa(aggregate_raters(workers)[0]), abs=1e-12)
    four = np.column_stack([votes[w][:6] for w in ("user", "w1", "w2", "w3")]).astype(int)
    assert by_set["user, w1, w2, w3"]["n"] == 6
    assert by_set["user, w1, w2, w3"]["estimate"] == pytest.approx(fleiss_kappa(aggregate_raters(four)[0]), abs=1e-12)
    printed = str(agreement_report(labels, by="annotator", n_boot=50))
    assert "round 1: w1, w2, w3 (3), n=60 items all of them labelled" in printed
    assert "round 1: user, w1, w2, w3 (4), n=6 items all of them labelled" in printed
