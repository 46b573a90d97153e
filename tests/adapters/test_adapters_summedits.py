"""SummEdits (issue 81): the authors' per-domain files as labelled summaries, checked against the counts its README
gives, and a bad item named by file, item and field."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from workbench.adapters import read_log
from workbench.errors import SchemaError

ROOT = Path(__file__).resolve().parents[2]
COPY = ROOT / "data" / "benchmarks" / "summedits"
SHARED = ROOT.parent / "shared" / "data" / "human-labels" / "summedits"
#: the README's table: domain -> (items, consistent, inconsistent, distinct documents)
README = {"ectsum": (668, 242, 426, 22), "news": (819, 321, 498, 25), "podcast": (500, 163, 337, 21),
          "qmsumm": (431, 183, 248, 16), "sales_call": (520, 173, 347, 18), "sales_email": (613, 179, 434, 21),
          "samsum": (664, 242, 422, 22), "scitldr": (466, 145, 321, 17)}


@pytest.fixture(scope="module")
def tables() -> dict[str, pl.DataFrame]:
    return read_log(COPY)


def test_the_copy_is_sniffed_and_holds_what_the_readme_counts(tables: dict[str, pl.DataFrame]) -> None:
    """Items, classes and documents per domain as the README's table gives them; a document is the seed's id
    prefix, and QMSum's q_test_40 and q_test_41 (one text under two prefixes) are one document: 162 in all, 16 in
    QMSum, as the README counts them."""
    runs = tables["runs"]
    got = {d: (p.height, int(p["human_score"].sum()), int((p["human_score"] == 0).sum()), p["scenario_id"].n_unique())
           for (d,), p in runs.group_by("subset")}
    assert got == README
    assert runs["scenario_id"].n_unique() == 162 and runs.height == 4681
    assert set(runs["split"].unique().to_list()) == {"evaluation", "test"}
    assert set(runs["meta_release"].unique().to_list()) == {"SummEdits"}
    seed = runs.filter(pl.col("run_id") == "samsum_train_13731241_og").row(0, named=True)
    edit = runs.filter(pl.col("run_id") == "samsum_train_13731241_3").row(0, named=True)
    assert seed["scenario_id"] == edit["scenario_id"] == "samsum_train_13731241" and seed["method"] == "seed"
    assert edit["method"] == "edit"


def test_each_summary_is_its_sentences_and_its_document_the_source(tables: dict[str, pl.DataFrame]) -> None:
    items = {it["id"]: it for it in json.loads((SHARED / "summedits_samsum.json").read_text())} \
        if SHARED.is_dir() else None
    if items is None:
        pytest.skip("no ../shared copy of SummEdits")
    item = items["samsum_train_13731241_og"]
    steps = tables["steps"].filter(pl.col("run_id") == item["id"])
    comp = tables["compactions"].filter(pl.col("run_id") == item["id"]).row(0, named=True)
    entries = tables["entries"].filter(pl.col("run_id") == item["id"]).sort("position")
    assert steps["observation"].to_list() == [item["doc"]] and comp["committed_summary"] == item["summary"]
    assert " ".join(entries["text"].to_list()) == item["summary"] and entries.height == 2


def test_the_compact_copy_reads_as_the_authors_files(tables: dict[str, pl.DataFrame]) -> None:
    if not SHARED.is_dir():
        pytest.skip("no ../shared copy of SummEdits")
    theirs = read_log(SHARED, "summedits")
    assert all(theirs[name].equals(tables[name]) for name in tables)


@pytest.mark.parametrize(("change", "field", "expected"), [
    ({"label": 2}, "label", "1 (consistent) or 0"),
    ({"doc": ""}, "doc", "a text"),
    ({"split": "train"}, "split", "evaluation or test"),
    ({"edit_types": "not json"}, "edit_types", "a list of error types"),
])
def test_a_bad_item_names_its_file_item_and_field(tmp_path: Path, change: dict, field: str, expected: str) -> None:
    good = {"id": "x_1_og", "doc": "A: hi. B: hello.", "summary": "A greets B.", "label": "1",
            "original_summary": "A greets B.", "edit_types": "[]", "split": "test"}
    path = tmp_path / "summedits_samsum.json"
    path.write_text(json.dumps([good, {**good, "id": "x_1_2", **change}]))
    with pytest.raises(SchemaError) as caught:
        read_log(tmp_path, "summedits")
    said = str(caught.value)
    assert said.startswith(f"{path}:item 2: field '{field}'") and expected in said, said
    path.write_text(json.dumps([good]))
    assert read_log(path)["runs"]["human_score"].to_list() == [1.0]  # sniffed from its head; "1" read as 1


def test_balanced_accuracy_and_the_threshold_against_sklearn() -> None:
    """balanced_accuracy is sklearn's balanced_accuracy_score of the calls at tau; choose_tau maximises it on the
    data it is given (the lowest such tau), and a yes/no judge's tau is 0.5."""
    from sklearn.metrics import balanced_accuracy_score

    from workbench.analyses import balanced_accuracy, choose_tau

    rng = np.random.default_rng(3)
    y = rng.random(300) < 0.35
    s = np.clip(0.5 + 0.2 * (y - 0.35) + rng.normal(0, 0.2, 300), 0, 1)
    for tau in (0.3, 0.5, 0.61):
        assert balanced_accuracy(s, y, tau) == pytest.approx(balanced_accuracy_score(y, s >= tau), abs=1e-12)
    best = choose_tau(s, y)
    everything = [balanced_accuracy_score(y, s >= t) for t in np.unique(s)]
    assert balanced_accuracy(s, y, best) == pytest.approx(max(everything), abs=1e-12)
    assert best == min(t for t, v in zip(np.unique(s), everything, strict=True) if v == max(everything))
    assert choose_tau((rng.random(50) < 0.5).astype(float), rng.random(50) < 0.5) == 0.5


def test_the_table_per_domain_is_sklearns_on_test_at_the_evaluation_tau(tables: dict[str, pl.DataFrame]) -> None:
    """On the lexical judge's scores: each domain's AUROC is sklearn's on the test split, its balanced accuracy
    sklearn's at the tau chosen on evaluation only (scores of test items changed: the same tau), and the overall
    row the mean of the eight."""
    from sklearn.metrics import balanced_accuracy_score, roc_auc_score

    from workbench.analyses import choose_tau, summedits_frame, summedits_table
    from workbench.datasets import derive_missing

    t = dict(tables)
    derive_missing(t, wanted=("scores",))
    frame = summedits_frame(t["runs"], t["entries"], t["scores"])
    table = summedits_table(frame, n_boot=50)
    rows = {(r["domain"], r["statistic"]): r for r in table.iter_rows(named=True)}
    aurocs, bas = [], []
    for domain in README:
        d = frame.filter(pl.col("domain") == domain)
        ev, te = d.filter(pl.col("split") == "evaluation"), d.filter(pl.col("split") == "test")
        tau = choose_tau(ev["min"].to_numpy(), ev["label"].to_numpy().astype(bool))
        auc = roc_auc_score(te["label"].to_numpy(), te["min"].to_numpy())
        ba = balanced_accuracy_score(te["label"].to_numpy().astype(bool), te["min"].to_numpy() >= tau)
        assert rows[domain, "auroc"]["estimate"] == pytest.approx(auc, abs=1e-12)
        assert rows[domain, "balanced_accuracy"]["estimate"] == pytest.approx(ba, abs=1e-12)
        assert rows[domain, "balanced_accuracy"]["tau"] == tau and rows[domain, "auroc"]["n"] == te.height
        aurocs.append(auc)
        bas.append(ba)
    assert rows["overall", "auroc"]["estimate"] == pytest.approx(np.mean(aurocs), abs=1e-12)
    assert rows["overall", "balanced_accuracy"]["estimate"] == pytest.approx(np.mean(bas), abs=1e-12)
    shifted = frame.with_columns(pl.when(pl.col("split") == "test").then(1 - pl.col("min")).otherwise(pl.col("min"))
                                 .alias("min"))
    again = summedits_table(shifted, n_boot=10).filter(pl.col("statistic") == "balanced_accuracy")
    assert again.filter(pl.col("domain") != "overall")["tau"].to_list() == [
        rows[d, "balanced_accuracy"]["tau"] for d in sorted(README)]


def test_the_published_table_is_the_readmes() -> None:
    from workbench.analyses import published_summedits

    published = published_summedits()
    assert published["model"].n_unique() == 20 and published.height == 160
    gpt4 = {r["domain"]: r["balanced_accuracy"] for r in published.filter(pl.col("model") == "GPT4").to_dicts()}
    assert gpt4 == pytest.approx({"podcast": 0.827, "samsum": 0.831, "news": 0.833, "sales_call": 0.879,
                                  "sales_email": 0.795, "scitldr": 0.824, "qmsumm": 0.796, "ectsum": 0.870})


def test_a_summary_without_a_score_is_left_out_not_called_inconsistent() -> None:
    """A verdict judge's miss (no Yes or No) leaves a summary without a score (NaN). Balanced accuracy counted it
    as called inconsistent, and a yes/no judge with one miss lost its 0.5 threshold; both leave it out now, as the
    AUROC does (sklearn on the scored rows)."""
    from sklearn.metrics import balanced_accuracy_score

    from workbench.analyses import balanced_accuracy, choose_tau

    s = np.array([1.0, 1.0, np.nan, 0.0, 1.0, np.nan, 0.0, 0.0])
    y = np.array([True, True, False, False, False, True, False, True])
    scored = ~np.isnan(s)
    assert balanced_accuracy(s, y, 0.5) == pytest.approx(balanced_accuracy_score(y[scored], s[scored] >= 0.5))
    assert choose_tau(s, y) == 0.5
