"""tau-bench logs through the chat adapter: tables, Pass^k against brute force, bad input, reused call ids."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from workbench.adapters import read_log
from workbench.adapters import read_tau_bench
from workbench.cli.main import main
from workbench.stats import reliability
from workbench.errors import SchemaError

ROOT = Path(__file__).resolve().parents[2]


TAU = ROOT / "data" / "real" / "tau-bench" / "gpt-4o-airline-subset.json"


def test_tau_bench_import_cli_and_tables(tmp_path: Path) -> None:
    assert main(["import", str(TAU), "--format", "tau-bench", "--out", str(tmp_path / "t")]) == 0
    runs = pl.read_parquet(tmp_path / "t" / "runs.parquet")
    steps = pl.read_parquet(tmp_path / "t" / "steps.parquet")
    raw = json.loads(TAU.read_text())
    assert runs.height == 20 and sorted(runs["replicate"].unique().to_list()) == [0, 1, 2, 3]
    assert runs["success"].sum() == sum(abs(r["reward"] - 1) <= 1e-6 for r in raw)
    n_calls = sum(len(m.get("tool_calls") or []) for r in raw for m in r["traj"] if m["role"] == "assistant")
    assert steps.filter(pl.col("tool").is_not_null()).height == n_calls
    assert steps.filter(pl.col("observation_role") == "tool").height == n_calls  # every call got its result
    assert (steps["observation_role"] == "user").sum() > 0  # user simulator turns kept
    first = steps.filter((pl.col("run_id") == runs["run_id"][0]) & pl.col("input_tokens").is_not_null()).sort("step")
    assert (first["input_tokens"].diff().drop_nulls() >= 0).all()  # context only grows without compaction
    assert {"input_tokens_cl100k", "output_tokens_cl100k"} <= set(steps.columns)


def test_tau_bench_pass_k_equals_brute_force_over_trial_subsets() -> None:
    runs = read_tau_bench(TAU)["runs"]
    per_task = runs.group_by("task_id").agg(pl.col("success")).sort("task_id")
    for k in range(1, 5):
        got = reliability(runs, k=k).row(0, named=True)
        brute_hat, brute_at = [], []
        for succ in per_task["success"].to_list():
            subsets = list(combinations(succ, k))
            brute_hat.append(np.mean([all(s) for s in subsets]))
            brute_at.append(np.mean([any(s) for s in subsets]))
        assert got["pass_hat_k"] == pytest.approx(np.mean(brute_hat))
        assert got["pass_at_k"] == pytest.approx(np.mean(brute_at))


def test_tau_bench_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"task_id": 0, "trial": 0, "reward": 1.0, "traj": "nope"}]))
    with pytest.raises(SchemaError, match=r"field '\[0\].traj': expected a list of chat messages"):
        read_tau_bench(bad)
    bad.write_text("{}")
    with pytest.raises(SchemaError, match="expected a non-empty JSON list of runs"):
        read_tau_bench(bad)


def test_duplicate_tool_call_ids_answer_the_oldest_pending_call(tmp_path: Path) -> None:
    call = {"id": "dup", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    msgs = [{"role": "user", "content": "go"}, {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "dup", "content": "first"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "dup", "content": "second"}]
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"run_id": "r", "task_id": "t", "messages": msgs}) + "\n")
    assert read_log(path)["steps"]["observation"].to_list() == ["first", "second"]
    msgs.append({"role": "tool", "tool_call_id": "dup", "content": "third"})
    path.write_text(json.dumps({"run_id": "r", "task_id": "t", "messages": msgs}) + "\n")
    with pytest.raises(SchemaError, match="a second result for 'dup'"):
        read_log(path)


@pytest.mark.parametrize(("reward", "success"), [(1.0, True), (0.9999995, True), (1.0000009, True), (0.999998, False),
                                                 (1.5, False), (0.0, False)])
def test_success_is_tau_benchs_rule(reward: float, success: bool) -> None:
    """tau-bench: ``1 - 1e-6 <= reward <= 1 + 1e-6``; ``reward >= 1`` once called 1.5 a success and 0.9999995 not."""
    from workbench.adapters._tau_bench import is_success

    assert is_success(reward) is success
