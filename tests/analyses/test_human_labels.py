"""The judges placed in FRANK's evaluation: per-summary aggregation by hand, the imported tables giving FRANK's
table, Williams rows recomputed as FRANK's mm-correlation mode does, AUROC against sklearn's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats

from workbench.analyses import (choose_aggregation, correlation_table, entry_auroc, frank_table, summary_frame,
                                    summary_scores, williams_table)

from tests.stats.test_metrics_correlation import frank_method

ROOT = Path(__file__).resolve().parents[2]
FRANK = ROOT / "data" / "benchmarks" / "frank"
pytestmark = pytest.mark.slow  # the lexical judge over all of FRANK once (3 s), for every test here


@pytest.fixture(scope="module")
def frank(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> dict[str, pl.DataFrame]:
    """FRANK read in memory and judged by the lexical judge (as the notebook does): once a test session, the test
    workers that run these tests reading the first one's tables (the judging took 5 s in each of them)."""
    from filelock import FileLock

    from workbench.datasets import derive_missing, load

    def judged() -> dict[str, pl.DataFrame]:
        tables = load(FRANK)
        derive_missing(tables)
        return tables

    if not hasattr(request.config, "workerinput"):  # not a test worker of pytest-xdist: nothing to share
        return judged()
    shared = tmp_path_factory.getbasetemp().parent / "frank-judged"  # this session's, beside each worker's own
    with FileLock(f"{shared}.lock"):
        if not (shared / "names").exists():
            tables = judged()
            shared.mkdir(exist_ok=True)  # (a worker stopped while writing left it without its names)
            for name, frame in tables.items():
                frame.write_parquet(shared / f"{name}.parquet")
            (shared / "names").write_text("\n".join(tables))  # last: the tables are whole
    return {name: pl.read_parquet(shared / f"{name}.parquet") for name in (shared / "names").read_text().split()}


def test_summary_scores_by_hand_and_the_same_bits_in_any_row_order() -> None:
    entries = pl.DataFrame({"entry_id": ["r1/b0/e0", "r1/b0/e1", "r1/b0/e2", "r2/b0/e0"],
                            "run_id": ["r1", "r1", "r1", "r2"]})
    scores = pl.DataFrame({"entry_id": ["r1/b0/e0", "r1/b0/e1", "r1/b0/e2", "r2/b0/e0", "r1/b0/e0"],
                           "judge": ["lexical"] * 5, "repeat": [0, 0, 0, 0, 1],
                           "score": [0.1, 0.7, None, 0.4, 0.9]})
    got = summary_scores(entries, scores)
    assert got.rows() == [("r1", "lexical", pytest.approx(0.4), 0.1, 2), ("r2", "lexical", 0.4, 0.4, 1)]
    rng = np.random.default_rng(0)
    many = pl.DataFrame({"entry_id": [f"r{i % 50}/b0/e{i}" for i in range(5000)], "judge": "lexical", "repeat": 0,
                         "score": rng.random(5000)})
    ents = many.select("entry_id", pl.col("entry_id").str.replace(r"/b0/e\d+$", "").alias("run_id"))
    first = summary_scores(ents, many)
    for seed in range(5):  # a mean's last bit depends on the order it adds in: the rows are sorted first
        shuffled = many.sample(fraction=1.0, shuffle=True, seed=seed)
        assert summary_scores(ents.sample(fraction=1.0, shuffle=True, seed=seed), shuffled).equals(first)


def test_the_imported_tables_give_frank_table(frank: dict[str, pl.DataFrame]) -> None:
    """The workbench path (import, runs' metric columns) and FRANK's own files give the same table."""
    from workbench.adapters import DEFAULT_METRICS

    frame = summary_frame(frank["runs"], None, DEFAULT_METRICS)
    mine = correlation_table(frame, DEFAULT_METRICS, datasets=(None, "cnndm", "bbc"), paired=False)
    theirs = frank_table(FRANK)
    assert mine.drop("pearson_p", "spearman_p").equals(theirs.drop("pearson_p", "spearman_p"))


def test_williams_rows_are_franks_mm_correlation(frank: dict[str, pl.DataFrame]) -> None:
    from sklearn.linear_model import LinearRegression
    from sklearn.preprocessing import OneHotEncoder

    frame = summary_frame(frank["runs"], summary_scores(frank["entries"], frank["scores"]), ["Dep Entail", "FactCC"])
    rows = williams_table(frame, "lexical (mean)", ["Dep Entail", "FactCC"], n_boot=200, seed=1)
    test = frame.filter(pl.col("split") == "test")
    for row in rows.iter_rows(named=True):
        both = test.filter(pl.col(row["baseline"]).is_not_null())
        q = OneHotEncoder().fit_transform(both["system"].to_numpy().reshape(-1, 1))
        res = {}
        for name in ("lexical (mean)", row["baseline"], "human_score"):
            v = both[name].to_numpy()
            res[name] = v - LinearRegression().fit(q, v).predict(q)
        r12 = stats.pearsonr(res["lexical (mean)"], res["human_score"])[0]
        r13 = stats.pearsonr(res[row["baseline"]], res["human_score"])[0]
        r23 = stats.pearsonr(res["lexical (mean)"], res[row["baseline"]])[0]
        assert row["n"] == both.height
        assert (row["r_metric"], row["r_baseline"], row["r_between"]) == pytest.approx((r12, r13, r23), abs=1e-10)
        assert row["higher"] == ("lexical (mean)" if r12 >= r13 else row["baseline"])
        assert row["ci_low"] <= row["difference"] <= row["ci_high"]
        assert row["difference"] == pytest.approx(r12 - r13, abs=1e-10)
    assert rows.filter(pl.col("baseline") == "Dep Entail")["n"].item() == 1575 - 41  # missing dependency scores


def test_entry_auroc_is_sklearns_and_a_small_group_says_why(frank: dict[str, pl.DataFrame]) -> None:
    from sklearn.metrics import roc_auc_score

    from workbench.tables import gold_labels

    frame = summary_frame(frank["runs"], None, ["FactCC"])
    table = entry_auroc(gold_labels(frank["labels"]), frank["entries"], frank["scores"], frame, baselines=["FactCC"],
                        n_boot=200, seed=0)
    labels = frank["labels"].select(pl.col("item_id").alias("entry_id"), (pl.col("value") == "supported").alias("y"))
    xsum = (labels.join(frank["scores"], on="entry_id")
            .join(frank["entries"].select("entry_id", "run_id"), on="entry_id")
            .join(frame.select("run_id", "dataset", "FactCC"), on="run_id").filter(pl.col("dataset") == "bbc"))
    for score, column in (("lexical", "score"), ("FactCC", "FactCC")):
        row = table.filter((pl.col("dataset") == "bbc") & (pl.col("score") == score)).row(0, named=True)
        assert row["estimate"] == pytest.approx(roc_auc_score(xsum["y"], xsum[column]), abs=1e-12)
        assert row["n"] == 966 and row["positives"] == 77 and row["ci_low"] < row["estimate"] < row["ci_high"]
    small = table.filter(pl.col("dataset") == "cnndm").row(0, named=True)
    assert small["estimate"] is None and "an AUROC needs at least 5 of each" in small["reason"]


def test_the_headline_aggregation_is_the_better_one_on_valid(frank: dict[str, pl.DataFrame]) -> None:
    frame = summary_frame(frank["runs"], summary_scores(frank["entries"], frank["scores"]))
    valid = frame.filter(pl.col("split") == "valid")
    r = {a: frank_method(valid[f"lexical ({a})"].to_numpy(), valid["human_score"].to_numpy(),
                         valid["system"].to_numpy())[0] for a in ("mean", "min")}
    assert choose_aggregation(frame, "lexical") == max(r, key=r.get)
