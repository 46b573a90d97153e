"""Compaction of real runs by a compressor model (cached), against the loopback server."""

from __future__ import annotations

from pathlib import Path

from workbench.adapters import read_tau_bench

ROOT = Path(__file__).resolve().parents[2]


TAU = ROOT / "data" / "real" / "tau-bench" / "gpt-4o-airline-subset.json"


def test_compact_with_a_compressor_on_real_runs(tmp_path: Path) -> None:
    from workbench.infer import OpenClawCompressor, compact_with
    from workbench.llm import DiskCache, LLMClient, RetryPolicy
    from workbench.summaries import fact_check_compactions

    from tests.llm_server import FakeLLMServer

    tables = read_tau_bench(TAU)
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
