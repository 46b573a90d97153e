"""Validation samples: balanced, seeded, honest about short strata, blind to scores and outcomes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from workbench.annotate import (
    sample_entries,
)
from workbench.cli.main import main
from workbench.sim import make_tasks


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
        assert set(i) == {"item_id", "text", "section", "task", "previous_summary", "evidence", "evidence_sources",
                          "run_id", "boundary", "scenario_id", "evaluation"}  # no score, no outcome
        assert isinstance(i["evidence"], list) and len(i["evidence_sources"]) == len(i["evidence"])
    # each source in words names the step whose tool output holds the passage (read from the steps table)
    all_steps = pl.read_parquet(d / "steps.parquet")
    named = 0
    for i in items:
        for source, passage in zip(i["evidence_sources"], i["evidence"], strict=True):
            m = re.fullmatch(r"step (\d+) · tool (\S+) · output( · part \d+)?|retained turn", source)
            assert m, source
            if m.group(1) is None:
                continue
            row = all_steps.filter((pl.col("run_id") == i["run_id"]) & (pl.col("step") == int(m.group(1))))
            assert row["tool"].item() == m.group(2) and passage.strip()[:40] in row["observation"].item()
            named += 1
    assert named > 10
    # the clusters of agreement intervals and the evaluation material, checked against the world itself
    runs = pl.read_parquet(d / "runs.parquet")
    tasks = {t.task_id: t for t in make_tasks(12, 0)}
    for i in items:
        run = runs.filter(pl.col("run_id") == i["run_id"]).row(0, named=True)
        assert i["scenario_id"] == run["scenario_id"]
        task = tasks[run["task_id"]]
        checks, invoices, report = i["evaluation"]
        assert checks["name"] == "Evaluation checks of the task"
        if task.scenario.report_expected:
            total = round(sum(v.amount for v in task.invoices if task.payable(v)), 2)
            assert f"total ${total:,.2f} and count {len(task.to_pay)}" in checks["text"]
        else:
            assert "No report is filed" in checks["text"]
        named = [v for v in task.invoices if v.invoice_id in i["text"]]
        shown = named or list(task.invoices)
        lines = invoices["text"].splitlines()
        assert [ln.split(":")[0] for ln in lines] == [v.invoice_id for v in shown]
        for v, ln in zip(shown, lines, strict=True):
            assert f"amount ${v.amount:,.2f}" in ln and ("NOT payable" in ln) == (not task.payable(v))
    # statuses at the compaction: hand-read from the steps before it
    item = next(i for i in items if "paid $" in i["evaluation"][1]["text"])
    steps = pl.read_parquet(d / "steps.parquet").filter(pl.col("run_id") == item["run_id"])
    at = pl.read_parquet(d / "compactions.parquet").filter(
        (pl.col("run_id") == item["run_id"]) & (pl.col("boundary") == item["boundary"]))["step"].item()
    paid = {o.split(":")[0].removeprefix("Paid ") for o, b, st in steps.select("observation", "blocked", "step").rows()
            if o.startswith("Paid ") and not b and st < at}
    for ln in item["evaluation"][1]["text"].splitlines():
        assert ("status at this compaction: paid" in ln) == (ln.split(":")[0] in paid)


def test_tau_bench_items_carry_its_ground_truth_and_others_say_none(tmp_path: Path) -> None:
    from workbench.adapters import read_log
    from workbench.annotate._evaluation import evaluation_material

    path = Path(__file__).resolve().parents[2] / "data" / "real" / "tau-bench" / "gpt-4o-airline-subset.json"
    raw = json.loads(path.read_text())[0]
    runs = read_log(path)["runs"]
    run = runs.row(0, named=True)
    material = evaluation_material(run, "- Book HAT136")
    by_name = {m["name"]: m["text"] for m in material}
    assert json.loads(by_name["gt_actions"]) == raw["info"]["task"]["actions"]
    assert by_name["user simulator's brief"] == raw["info"]["task"]["instruction"]
    assert "reward" not in json.dumps(material)  # the outcome stays hidden
    assert evaluation_material({"run_id": "r", "task": "t", "success": True}, "- x") == []


def test_sample_from_lazy_tables_equals_the_eager_one(tmp_path: Path) -> None:
    """``workbench sample`` opens Parquet lazily (only the drawn entries' texts, compactions and steps are read)."""
    from workbench.annotate import sample_items
    from workbench.datasets import load

    d = tmp_path / "tb"
    assert main(["simulate", "--out", str(d), "--tasks", "12", "--runs", "2", "--budgets", "48", "--policies",
                 "prompting", "--quiet", "--workers", "1"]) == 0
    eager = load(d)
    lazy = {name: pl.scan_parquet(d / f"{name}.parquet") for name in ("runs", "steps", "compactions", "entries")}
    a, ra = sample_items(eager, 25, seed=4)
    b, rb = sample_items(lazy, 25, seed=4)
    assert a == b and ra == rb and len(a) == 25
    # the draw is stream_sample's over every reasoning entry with its run's outcome, whatever the row order
    from workbench.annotate import entries_with_outcome, stream_sample

    every = entries_with_outcome(eager["entries"], eager["runs"]).filter(
        pl.col("section").is_in(["Decisions", "Open TODOs"]))
    shuffled = every.sample(fraction=1.0, shuffle=True, seed=9)
    whole, _ = stream_sample(shuffled, 25, seed=4, batch_rows=37)
    assert [item["item_id"] for item in b] == whole.get_column("entry_id").to_list()
    scenario = dict(every.select("entry_id", "scenario_id").iter_rows())
    assert [item["scenario_id"] for item in b] == [scenario[i] for i in whole.get_column("entry_id").to_list()]
    # an earlier sample's items, drawn again through --ids: the same items
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps({"item_id": i["item_id"], "text": i["text"]}) + "\n" for i in a[:7]))
    again = tmp_path / "again.jsonl"
    assert main(["sample", str(d), "--ids", str(old), "--out", str(again)]) == 0
    assert sorted(json.loads(x)["item_id"] for x in again.read_text().splitlines()) == sorted(i["item_id"] for i in a[:7])
    old.write_text(json.dumps({"item_id": "nope/b0/e0", "text": "x"}) + "\n")
    assert main(["sample", str(d), "--ids", str(old), "--out", str(again)]) == 2


def test_stream_sample_keys_are_keyed_blake2b_and_each_item_is_equally_likely() -> None:
    """The key is BLAKE2b-64 of the id keyed by the seed (pinned by hashlib here); over 1,000 seeds each of 20
    items in a stratum is drawn (5 of 20) about 250 times: within 5 binomial standard deviations (14) each."""
    import hashlib

    import numpy as np

    from workbench.annotate import stream_sample
    from workbench.annotate._sampling import item_keys

    key = hashlib.blake2b(b"e7", digest_size=8, key=(3).to_bytes(16, "little", signed=True)).digest()
    assert item_keys(["e7"], 3)[0] == int.from_bytes(key, "little")
    items = pl.DataFrame({"entry_id": [f"e{i}" for i in range(20)], "section": ["Decisions"] * 20})
    counts = np.zeros(20)
    for seed in range(1000):
        s, _ = stream_sample(items, 5, ("section",), seed)
        for i in s["entry_id"].to_list():
            counts[int(i[1:])] += 1
    sd = (1000 * 0.25 * 0.75) ** 0.5
    assert counts.sum() == 5000 and np.all(np.abs(counts - 250) < 5 * sd), counts


def test_stream_sample_is_the_same_under_every_pythonhashseed(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = ("import polars as pl; from workbench.annotate import stream_sample; "
            "f = pl.DataFrame({'entry_id': [f'e{i}' for i in range(500)], 'section': ['a', 'b'] * 250}); "
            "print(stream_sample(f, 12, ('section',), 5)[0]['entry_id'].to_list())")
    outs = {subprocess.run([sys.executable, "-c", code], env={**__import__("os").environ, "PYTHONHASHSEED": h},
                           capture_output=True, text=True, check=True).stdout for h in ("0", "1", "4242")}
    assert len(outs) == 1 and outs.pop().count("'e") == 12


def test_sample_keeps_each_ids_first_row_in_id_order() -> None:
    """An id given twice is one item, its first row (by hand: b's first row says x, a's says y)."""
    from workbench.annotate import sample_entries

    items = pl.DataFrame({"entry_id": ["b", "a", "b", "a", "c"], "section": ["Decisions"] * 5,
                          "outcome": ["x", "y", "z", "w", "v"]})
    sample, report = sample_entries(items, 10, strata=(), seed=0)
    assert sample.rows() == [("a", "Decisions", "y"), ("b", "Decisions", "x"), ("c", "Decisions", "v")]
    assert report.short == {(): (3, 10)}


def test_sample_shows_the_evidence_the_judge_stored_and_retrieves_only_without_it(tmp_path: Path) -> None:
    """Issue 40: sampling retrieved BM25 passages again ("the passages the judge would see"), so a change of
    retrieval between judging and sampling showed annotators other evidence than the judge saw. The stored
    evidence is what an item shows: a passage altered in the judge's evidence table shows altered."""
    from workbench.annotate import sample_items
    from workbench.datasets import load

    d = tmp_path / "log"
    assert main(["import", str(Path(__file__).resolve().parents[2] / "workbench" / "datasets" / "example_logs" / "invoice_log.jsonl"),
                 "--out", str(d), "--entries"]) == 0
    assert main(["judge", str(d), "--out", str(tmp_path / "s.parquet"), "--quiet"]) == 0
    stored = pl.read_parquet(tmp_path / "s.evidence.parquet")
    fresh, _ = sample_items(load(d), 8, strata=(), seed=1, sections=None)  # no evidence table: retrieved
    judged = dict(load(d), evidence=stored)
    same, _ = sample_items(judged, 8, strata=(), seed=1, sections=None)
    assert same == fresh and sum(len(i["evidence"]) for i in same) > 0  # the judge's retrieval is the sample's
    altered = stored.with_columns((pl.lit("ALTERED ") + pl.col("text")).alias("text"))
    shown, _ = sample_items(dict(judged, evidence=altered), 8, strata=(), seed=1, sections=None)
    assert [[p.removeprefix("ALTERED ") for p in i["evidence"]] for i in shown] == [i["evidence"] for i in fresh]
    assert all(p.startswith("ALTERED ") for i in shown for p in i["evidence"])
    altered.write_parquet(tmp_path / "altered.parquet")
    out = tmp_path / "v.jsonl"
    assert main(["sample", str(d), "--n", "8", "--strata", "", "--sections", ",".join(
        pl.read_parquet(d / "entries.parquet").get_column("section").unique().to_list()), "--seed", "1",
                 "--evidence", str(tmp_path / "altered.parquet"), "--out", str(out)]) == 0
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert items and all(p.startswith("ALTERED ") for i in items for p in i["evidence"])
