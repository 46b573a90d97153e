"""Real logs: tau-bench through the chat adapter, the FIFO replay, and the Claude summary fact check."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from workbench import io
from workbench.claude_compaction import check, check_table, defang, load_fixture, summary_identifiers
from workbench.cli import main
from workbench.metrics import reliability
from workbench.replay import arg_identifiers, replay_run
from workbench.schema import SchemaError

ROOT = Path(__file__).resolve().parents[1]
TAU = ROOT / "data" / "real" / "tau-bench" / "gpt-4o-airline-subset.json"
CLAUDE = ROOT / "data" / "real" / "claude-compaction" / "fixture.json"


def test_tau_bench_import_cli_and_tables(tmp_path: Path) -> None:
    assert main(["import", str(TAU), "--format", "tau-bench", "--out", str(tmp_path / "t")]) == 0
    runs = pl.read_parquet(tmp_path / "t" / "runs.parquet")
    steps = pl.read_parquet(tmp_path / "t" / "steps.parquet")
    raw = json.loads(TAU.read_text())
    assert runs.height == 20 and sorted(runs["replicate"].unique().to_list()) == [0, 1, 2, 3]
    assert runs["success"].sum() == sum(r["reward"] >= 1 for r in raw)
    n_calls = sum(len(m.get("tool_calls") or []) for r in raw for m in r["traj"] if m["role"] == "assistant")
    assert steps.filter(pl.col("tool").is_not_null()).height == n_calls
    assert steps.filter(pl.col("observation_role") == "tool").height == n_calls  # every call got its result
    assert (steps["observation_role"] == "user").sum() > 0  # user simulator turns kept
    first = steps.filter((pl.col("run_id") == runs["run_id"][0]) & pl.col("input_tokens").is_not_null()).sort("step")
    assert (first["input_tokens"].diff().drop_nulls() >= 0).all()  # context only grows without compaction
    assert {"input_tokens_cl100k", "output_tokens_cl100k"} <= set(steps.columns)


def test_tau_bench_pass_k_equals_brute_force_over_trial_subsets() -> None:
    runs = io.read_tau_bench(TAU)["runs"]
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
        io.read_tau_bench(bad)
    bad.write_text("{}")
    with pytest.raises(SchemaError, match="expected a non-empty JSON list of runs"):
        io.read_tau_bench(bad)


def test_duplicate_tool_call_ids_answer_the_oldest_pending_call(tmp_path: Path) -> None:
    call = {"id": "dup", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    msgs = [{"role": "user", "content": "go"}, {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "dup", "content": "first"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "dup", "content": "second"}]
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"run_id": "r", "task_id": "t", "messages": msgs}) + "\n")
    assert io.read_log(path)["steps"]["observation"].to_list() == ["first", "second"]
    msgs.append({"role": "tool", "tool_call_id": "dup", "content": "third"})
    path.write_text(json.dumps({"run_id": "r", "task_id": "t", "messages": msgs}) + "\n")
    with pytest.raises(SchemaError, match="a second result for 'dup'"):
        io.read_log(path)


def test_replay_counts_boundaries_and_out_of_window_references() -> None:
    pad = " filler" * 200  # about 200 o200k tokens
    steps = pl.DataFrame({
        "step": [0, 1, 2, 3],
        "tool": ["get_reservation", "search", "noop", "cancel_reservation"],
        "args": ['{"id": "AB12CD"}', '{"q": "x"}', "{}", '{"reservation_id": "AB12CD"}'],
        "text": [None] * 4,
        "observation": ["reservation AB12CD found" + pad, "results" + pad, "ok" + pad, "cancelled"],
    })
    res = replay_run(steps, "cancel my trip", 500)
    assert res.boundaries >= 1
    assert res.refs == 1 and res.out_of_window == 1 and res.lost == ("AB12CD",)
    wide = replay_run(steps, "cancel my trip", 100_000)
    assert (wide.boundaries, wide.out_of_window) == (0, 0)
    assert arg_identifiers('{"a": ["HAT136", {"b": "mia_li_3668"}], "d": "2024-05-20"}') == {"HAT136", "mia_li_3668"}


def test_claude_check_hand_case_and_defang() -> None:
    summary = "Members include paypal.com.login.example.net/x and http://1.2.3.4/bins/a and madeup-site.org."
    history = ["paypal.com.login.example.net/x?y=1", "http://1.2.3.4/bins/a", "other.com"]
    c = check(summary, history, ["other.com", "http://1.2.3.4/bins/a"])
    assert c.identifiers == 3 and c.sourced == 2 and c.unsourced == ("madeup-site.org",) and c.exact == 1
    assert c.held_exact == 1 and c.held_host == 1
    assert defang("http://evil.example.com/a.exe") == "hxxp://evil[.]example[.]com/a[.]exe"
    assert summary_identifiers("Use caution. Not a domain.") == []


def test_claude_fixture_table() -> None:
    runs = load_fixture(CLAUDE)
    t = check_table(runs)
    assert t["seed"].to_list() == [42, 43, 44]
    assert t["false_negative_rate"].to_list() == [0.97, 0.79, 0.63]
    assert t["identifiers"].to_list() == [12, 10, 18]
    assert t["sourced_share"].to_list() == pytest.approx([1.0, 1.0, 17 / 18])
    assert t["members_held_exact"].to_list() == [0.0, 0.0, 0.0]
    assert t["members_held_by_host"].to_list() == pytest.approx([0.03, 0.06, 0.04])
    assert t["recall_after_compaction"].to_list() == pytest.approx([0.03, 0.21, 0.37])


def test_compact_with_a_compressor_on_real_runs(tmp_path: Path) -> None:
    from workbench.llm import DiskCache, LLMClient, RetryPolicy
    from workbench.infer import OpenClawCompressor, compact_with
    from workbench.trace import fact_check_compactions

    from .llm_server import FakeLLMServer

    tables = io.read_tau_bench(TAU)
    runs = tables["runs"].head(1)
    steps = tables["steps"].join(runs.select("run_id"), on="run_id", how="semi")
    summary = ("## Decisions\n- Looked up the user.\n\n## Open TODOs\n- Continue.\n\n## Constraints/Rules\nNone.\n\n"
               f"## Pending user asks\n- {runs['task'][0]}\n\n## Exact identifiers\n- mia_li_3668\n")
    server = FakeLLMServer()
    try:
        server.behaviours.extend([{"content": summary}] * 50)
        client = LLMClient(server.url + "/v1", cache=DiskCache(tmp_path), retry=RetryPolicy(max_attempts=2, deadline=5))
        comps = compact_with(OpenClawCompressor(client, model="m"), steps, runs, 2048)
        sent = len(server.requests)
        assert comps.height >= 1 and sent == comps.height
        assert comps["boundary"].to_list() == list(range(comps.height))
        assert (comps["span_end"] < comps["step"]).all()
        again = compact_with(OpenClawCompressor(client, model="m"), steps, runs, 2048)
        assert again.equals(comps) and len(server.requests) == sent  # cached: nothing sent
        fc = fact_check_compactions(comps, steps, runs)
        assert fc.height == comps.height
    finally:
        server.close()
