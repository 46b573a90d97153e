"""The invoice testbed: environment contract, compressor ground truth, policies, determinism, round trip."""

from __future__ import annotations

import pytest
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl

from workbench.tables._vocabulary import TRAJECTORY_TABLES
from workbench.cli.main import main
from workbench.judges import LexicalJudge
from workbench.summaries import compaction_requests
from workbench.judges import score_requests
from workbench.sim._agent import Turn
from workbench.sim._rule_compressor import CompressorConfig, compress, in_text_order
from workbench.sim import DatasetConfig, simulate
from workbench.sim import Episode, SimConfig, verifier_score
from workbench.sim import Action, InvoiceEnv, check, make_tasks
from workbench.summaries import parse

TASKS = make_tasks(120, 0)


def pay(iid: str, amount: float) -> Action:
    return Action("pay_invoice", (("invoice_id", iid), ("amount", amount)))


def test_tasks_scenarios_and_subsets() -> None:
    assert len(TASKS) == 120 and len({t.scenario.scenario_id for t in TASKS}) >= 10
    assert all(3 <= len(t.invoices) <= 12 for t in TASKS)
    assert {t.subset for t in TASKS} == {"easy", "medium", "hard"}
    assert make_tasks(120, 0) == TASKS and make_tasks(120, 1) != TASKS


def test_execution_error_contract_and_restore() -> None:
    task = TASKS[0]
    env = InvoiceEnv(task)
    inv = task.invoices[0]
    assert not env.step(pay(inv.invoice_id, inv.amount)).blocked
    snap = env.snapshot()
    assert env.step(pay(inv.invoice_id, inv.amount)).blocked  # paying twice
    assert not env.step(pay(task.invoices[1].invoice_id, 1.0)).blocked  # a wrong amount is accepted silently
    assert not env.step(Action("file_report", (("total", 1.0), ("count", 1)))).blocked  # a short report too
    assert env.step(Action("file_report", (("total", 1.0), ("count", 1)))).blocked  # filing twice
    env.restore(snap)
    assert env.state.paid == {inv.invoice_id: inv.amount} and env.state.reports == []
    assert env.step(Action("get_invoice", (("invoice_id", "INV-0000"),))).blocked


def test_checker_names_the_failed_check() -> None:
    task = next(t for t in TASKS if t.scenario.report_expected and not t.scenario.skip_disputed and t.scenario.limit is None)
    env = InvoiceEnv(task)
    for inv in task.invoices:
        env.step(pay(inv.invoice_id, inv.amount))
    assert check(task, env.state) == "finished"
    env.step(Action("finish"))
    assert check(task, env.state) == "report"
    env.state.reports.append((round(sum(i.amount for i in task.invoices), 2), len(task.invoices)))
    assert check(task, env.state) is None
    env.state.paid[task.invoices[0].invoice_id] += 10
    assert check(task, env.state) == "amounts"
    del env.state.paid[task.invoices[0].invoice_id]
    assert check(task, env.state) == "paid_all"


def test_no_compression_solves_every_task() -> None:
    for i, task in enumerate(TASKS[:24]):
        res = Episode(task, i, 0, "no_compression", SimConfig()).run()
        assert res.success, (task.task_id, res.failed_check)
        assert not any(s.blocked for s in res.steps)


def test_lossless_compressor_entries_are_supported_and_correct() -> None:
    cfg = CompressorConfig(dropped_amount=0, dropped_paid=0, dropped_filed=0, dropped_id=0, misremembered_amount=0,
                           rewritten_constraint=0, invented_deliverable=0, contradicted_state=0)
    for i, task in enumerate(TASKS[:24]):
        res = Episode(task, i, 0, "prompting", SimConfig(budget=24, compressor=cfg)).run()
        assert res.success, (task.task_id, res.failed_check)
        for bd in res.boundaries:
            for e in bd.committed:
                assert e.correct and e.defect is None
                assert e.supported == (e.provenance in ("observed", "carried"))


def test_visible_and_silent_defects_do_what_they_say() -> None:
    task = TASKS[8]
    env = InvoiceEnv(task)
    turns = [Turn(0, Action("list_invoices", (("group", task.group),)), env.step(Action("list_invoices", (("group", task.group),))))]
    for k, inv in enumerate(task.invoices[:3]):
        a = pay(inv.invoice_id, inv.amount)
        turns.append(Turn(k + 1, a, env.step(a)))
    rng = np.random.default_rng(0)
    silent = compress(task, None, turns, 0, rng, CompressorConfig().only("silent"))
    visible = compress(task, None, turns, 0, np.random.default_rng(0), CompressorConfig().only("visible"))
    assert silent.visible_defects == 0 and visible.silent_defects == 0
    wrong = [e for e in silent.entries if e.defect == "misremembered_amount"]
    assert all(not e.correct and e.supported for e in wrong)


def test_verifier_cannot_hear_a_misremembered_amount_but_hears_a_dropped_paid_marker() -> None:
    """TRACE article: 'adds 100 to one amount in an otherwise clean summary ... equal at K = 50'."""
    task = next(t for t in TASKS if len(t.invoices) >= 6 and t.scenario.report_expected and t.scenario.limit is None
                and not t.scenario.skip_disputed)
    env = InvoiceEnv(task)
    turns: list[Turn] = []
    for k, inv in enumerate(task.invoices[:4]):
        for a in (Action("get_invoice", (("invoice_id", inv.invoice_id),)), pay(inv.invoice_id, inv.amount)):
            turns.append(Turn(len(turns), a, env.step(a)))
    clean_cfg = CompressorConfig(dropped_amount=0, dropped_paid=0, dropped_filed=0, dropped_id=0, misremembered_amount=0,
                                 rewritten_constraint=0, invented_deliverable=0, contradicted_state=0, plan=0)
    clean = in_text_order(compress(task, None, turns[:-1], 0, np.random.default_rng(1), clean_cfg).entries)
    paid = next(e for e in clean if e.kind == "paid")
    wrong = [replace(e, amount=(e.amount or 0) + 100, text=e.text.replace("$", "$1")) if e is paid else e for e in clean]
    unpaid = [replace(e, kind="amount", section="Open TODOs") if e.kind == "paid" else e for e in clean]
    cfg = SimConfig(horizon=50, reread_rate=0.0)
    prompt = task.instruction()
    s_clean = verifier_score(task, 8, 0, env.snapshot(), prompt, None, turns, clean, cfg)
    s_wrong = verifier_score(task, 8, 0, env.snapshot(), prompt, None, turns, wrong, cfg)
    s_unpaid = verifier_score(task, 8, 0, env.snapshot(), prompt, None, turns, unpaid, cfg)
    assert s_wrong == s_clean
    assert s_unpaid < s_clean


def small(**kw: object) -> DatasetConfig:
    return DatasetConfig(**{"tasks": 24, "runs": 2, "budgets": (48,), **kw})  # type: ignore[arg-type]


def test_article_directions_on_a_small_testbed() -> None:
    tables = simulate(small(tasks=48, policies=("prompting", "verifier", "oracle")), workers=1)
    by = tables["runs"].group_by("method").agg(pl.col("success").mean(), pl.col("blocked_calls").mean())
    m = {r["method"]: r for r in by.iter_rows(named=True)}
    assert m["verifier"]["blocked_calls"] <= 0.5 * m["prompting"]["blocked_calls"]
    assert m["oracle"]["success"] >= m["prompting"]["success"] + 0.10
    assert abs(m["verifier"]["success"] - m["prompting"]["success"]) <= 0.10


def test_candidate_text_positions_match_parse_and_scores_match_the_judge_pipeline() -> None:
    """The testbed judges its candidates from simulator objects while it runs; the public pipeline judges the
    written tables. Equal scores mean the tables hold what the simulator judged (observations, retained turn,
    previous summary, entry order) -- a property of the dataset writer, which breaks if any of those drifts."""
    tables = simulate(small(policies=("prompting",)), workers=1)
    ent = tables["entries"]
    for comp in tables["compactions"].head(40).iter_rows(named=True):
        mine = ent.filter((pl.col("run_id") == comp["run_id"]) & (pl.col("boundary") == comp["boundary"])).sort("position")
        assert [e.text for e in parse(comp["candidate_summary"])] == mine["text"].to_list()
    direct, _ = score_requests(compaction_requests(tables), LexicalJudge())
    joined = direct.join(tables["scores"], on="entry_id", suffix="_sim")
    assert joined.height == tables["scores"].height == direct.height
    assert np.allclose(joined["score"].to_numpy(), joined["score_sim"].to_numpy())


def test_export_validate_import_round_trips_a_simulated_directory(tmp_path: Path) -> None:
    out = tmp_path / "tb"
    assert main(["simulate", "--out", str(out), "--tasks", "12", "--runs", "2", "--budgets", "24",
                 "--policies", "prompting,fifo,verifier", "--quiet", "--workers", "1"]) == 0
    assert main(["export", str(out), "--format", "jsonl", "--out", str(tmp_path / "tb.jsonl")]) == 0
    assert main(["validate", str(tmp_path / "tb.jsonl")]) == 0
    assert main(["import", str(tmp_path / "tb.jsonl"), "--out", str(tmp_path / "back")]) == 0
    for name in TRAJECTORY_TABLES:
        a = pl.read_parquet(out / f"{name}.parquet")
        b = pl.read_parquet(tmp_path / "back" / f"{name}.parquet")
        assert a.equals(b), name


@pytest.mark.slow
def test_identical_across_processes_and_hash_seeds(tmp_path: Path) -> None:
    outs = []
    for hs in ("0", "12345"):
        out = tmp_path / f"h{hs}"
        env = {**os.environ, "PYTHONHASHSEED": hs}
        subprocess.run([sys.executable, "-m", "workbench.cli", "simulate", "--out", str(out), "--tasks", "6",
                        "--runs", "2", "--budgets", "24,48", "--quiet", "--workers", "2"], check=True, env=env)
        outs.append(out)
    for path in sorted(outs[0].glob("*.parquet")):
        assert pl.read_parquet(path).equals(pl.read_parquet(outs[1] / path.name)), path.name
