"""Judge validation: bootstrap engine, AUROC and kappa against sklearn, sampling, store, UIs, Label Studio."""

from __future__ import annotations

import io as stdio
import json
import multiprocessing as mp
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from workbench.annotate import (
    AnnotationStore,
    LabelSession,
    from_labelstudio,
    label_widget,
    render_item_html,
    sample_entries,
    terminal_label,
    to_labelstudio,
)
from workbench.bootstrap import auroc_ci, bootstrap, make_units, resample_counts
from workbench.cli import main
from workbench.metrics.agreement import agreement_table, cohen_kappa, disagreements, percent_agreement
from workbench.metrics.discrimination import auroc, gold_labels, judge_table, precision_recall_at

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.UndefinedMetricWarning")

XSS = "<img src=x onerror=alert(1)>"


def data(n: int = 300, k: int = 30, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    clusters = rng.integers(0, k, n)
    labels = rng.random(n) < 0.4
    scores = np.round(rng.random(n) + 0.5 * labels, 1)  # rounding makes ties
    return scores, labels, clusters


# --- bootstrap engine ---------------------------------------------------------------


def test_auroc_point_estimate_equals_sklearn_with_ties() -> None:
    s, y, c = data()
    assert auroc_ci(s, y, c, n_boot=10).estimate == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert auroc(s, y) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def test_vectorised_auroc_equals_loop_over_the_same_resamples() -> None:
    s, y, c = data()
    vec = auroc_ci(s, y, c, n_boot=500, seed=3)
    loop = bootstrap(lambda yy, ss: roc_auc_score(yy, ss), y, s, clusters=c, n_boot=500, seed=3)
    assert (vec.ci_low, vec.ci_high) == pytest.approx((loop.ci_low, loop.ci_high), abs=1e-12)
    assert vec.ci_low <= vec.estimate <= vec.ci_high
    assert (vec.n, vec.n_pos, vec.n_boot, vec.method) == (300, int(y.sum()), 500, "percentile")


def test_seeded_and_independent_of_global_state() -> None:
    s, y, c = data()
    np.random.seed(1)
    a = auroc_ci(s, y, c, n_boot=200, seed=7)
    np.random.seed(2)
    b = auroc_ci(s, y, c, n_boot=200, seed=7)
    assert a == b
    assert auroc_ci(s, y, c, n_boot=200, seed=8) != a


def test_degenerate_resamples_are_counted_not_hidden() -> None:
    # two clusters, each one class: every resample drawing the same cluster twice is one-class
    s = np.array([0.9, 0.8, 0.1, 0.2])
    y = np.array([True, True, False, False])
    c = np.array([0, 0, 1, 1])
    r = auroc_ci(s, y, c, n_boot=2000, seed=0)
    assert 800 < r.n_degenerate < 1200  # about half
    g = bootstrap(roc_auc_score, y, s, clusters=c, n_boot=2000, seed=0)
    assert g.n_degenerate == r.n_degenerate


def test_strata_keep_each_strata_size() -> None:
    units = make_units(clusters=np.array([0, 0, 1, 2, 2, 3]), strata=np.array([0, 0, 0, 1, 1, 1]))
    counts = resample_counts(units, 100, np.random.default_rng(0))
    first = units.unit_stratum == 0
    assert np.all(counts[:, first].sum(axis=1) == first.sum())
    assert np.all(counts[:, ~first].sum(axis=1) == (~first).sum())
    s, y, c = data()
    r = auroc_ci(s, y, [f"{ci}-{yi}" for ci, yi in zip(c, y, strict=True)], n_boot=300, strata=y)
    assert r.n_degenerate == 0  # the label ratio is kept, so no one-class resample


def test_bca_interval_is_finite_and_contains_estimate() -> None:
    s, y, c = data()
    r = auroc_ci(s, y, c, n_boot=2000, method="bca")
    assert r.method == "bca" and r.ci_low < r.estimate < r.ci_high
    g = bootstrap(roc_auc_score, y, s, clusters=c, n_boot=300, method="bca")
    assert g.ci_low < g.estimate < g.ci_high


@pytest.mark.slow
def test_scenario_interval_covers_population_auroc_about_95_percent() -> None:
    """Scores ~ N(d*label + scenario effect, 1): population AUROC = Phi(d / sqrt(2)) with the
    scenario effect shared by both classes in a scenario... it is not, so we estimate the
    population value by a very large simulation and check coverage of the cluster interval."""
    from scipy.stats import norm

    d, k, per = 1.0, 30, 10
    rng = np.random.default_rng(11)
    # population AUROC: effects differ by cluster, pairs across clusters matter -> simulate large
    big = rng.normal(size=(2000, per))
    eff = rng.normal(scale=0.5, size=2000)
    yb = rng.random((2000, per)) < 0.4
    sb = d * yb + eff[:, None] + big
    population = roc_auc_score(yb.ravel(), sb.ravel())
    assert population == pytest.approx(norm.cdf(d / np.sqrt(2 * (1 + 0.25))), abs=0.01)
    hits, trials = 0, 200
    for _ in range(trials):
        eff = rng.normal(scale=0.5, size=k)
        y = rng.random((k, per)) < 0.4
        s = d * y + eff[:, None] + rng.normal(size=(k, per))
        r = auroc_ci(s.ravel(), y.ravel(), np.repeat(np.arange(k), per), n_boot=1000, seed=int(rng.integers(1e9)))
        hits += r.ci_low <= population <= r.ci_high
    coverage = hits / trials
    print(f"coverage {coverage:.3f}")
    assert 0.88 <= coverage <= 0.99


# --- discrimination and agreement -------------------------------------------------


def test_precision_recall_at_tau_hand_computed() -> None:
    s = np.array([0.9, 0.8, 0.6, 0.4, 0.2])
    y = np.array([True, False, True, True, False])
    assert precision_recall_at(s, y, 0.5) == (pytest.approx(2 / 3), pytest.approx(2 / 3))


def test_kappa_and_agreement_equal_sklearn() -> None:
    rng = np.random.default_rng(4)
    for _ in range(20):
        a = rng.choice(["s", "u", "x"], 60)
        b = np.where(rng.random(60) < 0.8, a, rng.choice(["s", "u", "x"], 60))
        assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
        assert percent_agreement(a, b) == pytest.approx(np.mean(a == b))
    assert np.isnan(cohen_kappa(["a"] * 3, ["a"] * 3))


def labels_frame(error: float = 0.05, n: int = 200) -> pl.DataFrame:
    rng = np.random.default_rng(5)
    truth = rng.random(n) < 0.6
    rows = []
    for rnd in (1, 2):
        flip = rng.random(n) < error
        for i in range(n):
            v = truth[i] ^ flip[i]
            rows.append({"item_id": f"e{i:03d}", "annotator": f"a{rnd}", "round": rnd, "field": "support",
                         "value": "supported" if v else "unsupported", "note": None, "labeled_at": None})
    return pl.DataFrame(rows)


def test_agreement_table_and_disagreements() -> None:
    labels = labels_frame()
    t = agreement_table(labels, {f"e{i:03d}": f"s{i % 10}" for i in range(200)}, n_boot=300)
    assert t.columns == ["field", "a", "b", "statistic", "disagreements", "estimate", "ci_low", "ci_high", "n",
                         "n_boot", "level", "method"]
    row = t.filter(pl.col("statistic") == "kappa").row(0, named=True)
    wide = labels.pivot(on="round", index="item_id", values="value")
    assert row["estimate"] == pytest.approx(cohen_kappa_score(wide["1"], wide["2"]))
    assert row["ci_low"] <= row["estimate"] <= row["ci_high"] and row["n_boot"] == 300 and row["n"] == 200
    agree = t.filter(pl.col("statistic") == "agreement").row(0, named=True)
    assert agree["estimate"] == pytest.approx(float((wide["1"] == wide["2"]).mean()))
    assert row["disagreements"] == disagreements(labels).height == int((wide["1"] != wide["2"]).sum())


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
    assert (r["n_boot"], r["level"], r["method"]) == (500, 0.95, "percentile")


# --- sampling ---------------------------------------------------------------------


def test_sample_balanced_seeded_and_honest_about_short_strata() -> None:
    items = pl.DataFrame({"entry_id": [f"e{i}" for i in range(100)],
                          "section": ["Decisions"] * 60 + ["Open TODOs"] * 40,
                          "outcome": (["success", "failure"] * 50)})
    s1, rep = sample_entries(items, 40, seed=1)
    s2, _ = sample_entries(items, 40, seed=1)
    assert s1.equals(s2) and s1["entry_id"].n_unique() == 40 and not rep.short
    counts = s1.group_by("section", "outcome").len()["len"].to_list()
    assert sorted(counts) == [10, 10, 10, 10]
    s3, rep3 = sample_entries(items, 100, seed=1)
    assert rep3.short == {("Open TODOs", "failure"): (20, 25), ("Open TODOs", "success"): (20, 25)}
    assert "only 20 item(s), 25 asked" in rep3.message() and s3.height == 90


def test_sample_cli_items_hide_scores_and_outcomes(tmp_path: Path) -> None:
    d = tmp_path / "tb"
    assert main(["simulate", "--out", str(d), "--tasks", "12", "--runs", "2", "--budgets", "48", "--policies",
                 "prompting", "--quiet", "--workers", "1"]) == 0
    out = tmp_path / "s.jsonl"
    assert main(["sample", str(d), "--n", "20", "--seed", "3", "--out", str(out)]) == 0
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(items) == 20 and len({i["item_id"] for i in items}) == 20
    for i in items:
        assert set(i) == {"item_id", "text", "section", "task", "previous_summary", "evidence"}
        assert isinstance(i["evidence"], list)


# --- store --------------------------------------------------------------------------


def _writer(args: tuple[str, str]) -> None:
    root, who = args
    store = AnnotationStore(root)
    for i in range(400):
        store.add(item_id=f"e{i}", annotator="shared", round=1, field="support", value=f"{who}-{i}")


def test_two_processes_adding_400_labels_each_leave_800(tmp_path: Path) -> None:
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        pool.map(_writer, [(str(tmp_path), "p1"), (str(tmp_path), "p2")])
    lines = (tmp_path / "labels" / "shared.round1.jsonl").read_text().splitlines()
    assert len(lines) == 800 and all(json.loads(line)["field"] == "support" for line in lines)
    assert AnnotationStore(tmp_path).history().height == 800


def test_latest_label_wins_history_stays_and_session_resumes(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path)
    items = [{"item_id": f"e{i}", "text": f"- entry {i}"} for i in range(4)]
    s = LabelSession(items, store, "bob", 1)
    s.label("supported")
    s.label("unsupported")
    s.undo()
    s.label("supported", note="changed my mind")
    assert store.history().height == 3
    cur = store.labels()
    assert cur.height == 2 and cur.filter(pl.col("item_id") == "e1")["value"][0] == "supported"
    assert LabelSession(items, store, "bob", 1).index == 2  # resumes at the first unlabeled item
    with pytest.raises(ValueError, match="expected one of"):
        s.label("maybe")


def test_corrupt_label_file_names_the_line(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path)
    store.add(item_id="e1", annotator="x", round=1, field="support", value="supported")
    with open(store.file_for("x", 1), "a") as fh:
        fh.write('{"item_id": "e2", "annotator": "x"\n')
    from workbench.schema import SchemaError

    with pytest.raises(SchemaError, match=r"x.round1.jsonl:2: "):
        store.labels()


# --- UIs ------------------------------------------------------------------------------


def test_render_item_html_escapes_everything() -> None:
    item = {"item_id": "<b>id</b>", "text": XSS, "section": "Decisions", "task": "<script>x()</script>",
            "previous_summary": '" onmouseover="x', "evidence": [XSS, "a & b"]}
    out = render_item_html(item)
    assert "<img" not in out and "<script" not in out and "<b>id</b>" not in out
    assert "&lt;img src=x onerror=alert(1)&gt;" in out and "a &amp; b" in out and "&quot; onmouseover=&quot;x" in out


def test_widget_shows_escaped_text_and_labels_through_the_store(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path)
    items = [{"item_id": "e1", "text": XSS, "section": "Decisions", "task": "t", "evidence": []},
             {"item_id": "e2", "text": "- Paid INV-1", "section": "Decisions", "task": "t", "evidence": []}]
    box = label_widget(items, store, "carol", 2)
    html_view = box.children[1]
    assert "&lt;img src=x" in html_view.value and "<img" not in html_view.value
    assert "1 of 2" in box.children[0].value
    buttons = box.children[3].children
    buttons[1].click()  # "unsupported [2]"
    assert store.labels()["value"].to_list() == ["unsupported"]
    box.children[4].value = "u"  # key capture: undo
    assert box.session.index == 0
    box.children[4].value = "1"
    assert store.labels()["value"].to_list() == ["supported"]
    assert "Paid INV-1" in html_view.value


def test_terminal_labeler_and_control_characters(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path)
    items = [{"item_id": "e1", "text": "\x1b[2Jcleared?", "task": "t"}, {"item_id": "e2", "text": "x", "task": "t"}]
    out = stdio.StringIO()
    n = terminal_label(items, store, "dan", 1, stdin=stdio.StringIO("2\ns\n"), stdout=out)
    assert n == 1 and "\\x1b[2Jcleared?" in out.getvalue() and "\x1b" not in out.getvalue()


def test_label_studio_round_trip(tmp_path: Path) -> None:
    items = [{"item_id": "e1", "text": XSS, "section": "Decisions", "task": "t", "previous_summary": "",
              "evidence": ["p1", "p2"]}]
    tasks = to_labelstudio(items)
    assert "predictions" not in tasks[0] and tasks[0]["data"]["evidence_text"] == "[1] p1\n\n[2] p2"
    assert to_labelstudio(items, {"e1": 0.8})[0]["predictions"][0]["score"] == 0.8
    export = [{"id": 1, "data": tasks[0]["data"], "annotations": [
        {"completed_by": {"email": "eve@example.org"}, "was_cancelled": False, "updated_at": "2026-01-01T00:00:00Z",
         "result": [{"from_name": "support", "to_name": "entry", "type": "choices", "value": {"choices": ["supported"]}},
                    {"from_name": "correct", "to_name": "entry", "type": "choices", "value": {"choices": ["incorrect"]}}]},
        {"completed_by": 7, "was_cancelled": True, "result": []}]}]
    recs = from_labelstudio(export, round=1)
    store = AnnotationStore(tmp_path)
    store.add_many(recs)
    got = store.labels().sort("field")
    assert got["value"].to_list() == ["incorrect", "supported"] and set(got["annotator"]) == {"eve@example.org"}


def test_agree_and_adjudicate_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = AnnotationStore(tmp_path)
    store.add_many(labels_frame(n=50).to_dicts())
    assert main(["agree", str(tmp_path), "--n-boot", "200"]) == 0
    out = capsys.readouterr().out
    assert "support" in out and "kappa=" in out
    adj = tmp_path / "adjudication.jsonl"
    lines = [json.loads(x) for x in adj.read_text().splitlines()]
    assert lines and all(x["value"] is None for x in lines)
    lines[0]["value"] = "supported"
    adj.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert main(["adjudicate", str(adj), "--store", str(tmp_path)]) == 0
    gold = gold_labels(store.labels())
    assert gold.filter(pl.col("item_id") == lines[0]["item_id"])["value"][0] == "supported"
