"""Gold labels (adjudicated first, else majority) and the Table 12 judge table built on them."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import roc_auc_score

from workbench.tables import gold_labels
from workbench.stats import judge_table

from tests.conftest import labels_frame


def test_gold_prefers_adjudicated_and_judge_table() -> None:
    labels = labels_frame()
    adj = pl.DataFrame([{"item_id": "e000", "annotator": "adjudicated", "round": 0, "field": "support",
                         "value": "unsupported", "note": None, "labeled_at": None}])
    gold = gold_labels(pl.concat([labels, adj]))
    assert gold.filter(pl.col("item_id") == "e000")["value"][0] == "unsupported"
    assert gold.height == 200
    rng = np.random.default_rng(0)
    pos = (gold.sort("item_id")["value"] == "supported").to_numpy()
    scores = pl.DataFrame({"entry_id": sorted(gold["item_id"].to_list()), "judge": "j",
                           "score": np.clip(0.3 * pos + rng.random(200) * 0.7, 0, 1)})
    scores = scores.with_columns(pl.when(pl.col("entry_id") == "e001").then(None).otherwise(pl.col("score")).alias("score"))
    tbl = judge_table(scores, gold, {f"e{i:03d}": f"s{i % 10}" for i in range(200)}, fields=("support",), n_boot=500)
    r = tbl.row(0, named=True)
    kept = scores.join(gold.rename({"item_id": "entry_id"}), on="entry_id").drop_nulls("score")
    assert r["n"] == 199 and r["n_null"] == 1
    assert r["estimate"] == pytest.approx(roc_auc_score(kept["value"] == "supported", kept["score"]))
    assert r["ci_low"] <= r["estimate"] <= r["ci_high"] and r["n_clusters"] == 10
    assert (r["n_boot"], r["level"], r["method"]) == (500, 0.95, "logit-t")  # the default chosen by coverage


def test_label_source_names_who_labelled() -> None:
    from workbench.tables._labels import label_source

    def frame(*annotators: str) -> pl.DataFrame:
        return pl.DataFrame({"item_id": ["e"] * len(annotators), "annotator": list(annotators),
                             "round": [1] * len(annotators), "field": ["support"] * len(annotators),
                             "value": ["supported"] * len(annotators)})

    assert label_source(frame("sim-round1", "sim-round2")) == "simulated annotators (sim-round1, sim-round2)"
    assert label_source(frame("bob", "alice", "adjudicated")) == "annotators alice, bob, adjudicated"
    assert label_source(frame(*[f"a{i}" for i in range(7)])) == "annotators a0, a1, a2, a3, a4 and 2 more"
    assert label_source(frame()) == ""
