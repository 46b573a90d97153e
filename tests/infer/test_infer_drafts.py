"""FOCUS draft rollouts through the client layer: parallel, cached, against the loopback server."""

from __future__ import annotations


def test_draft_client_parallel_cached_against_loopback(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from workbench.infer import draft_rollouts
    from workbench.llm import DiskCache, LLMClient, RetryPolicy

    from tests.llm_server import FakeLLMServer

    server = FakeLLMServer()
    try:
        server.behaviours.extend([{"content": "Step: pay | Depends on: [s_1, s_2]"}, "500",
                                  {"content": "Step: file | Depends on: s2"}, {"content": "Step: x | Depends on: [s_9]"}])
        client = LLMClient(server.url + "/v1", cache=DiskCache(tmp_path), max_concurrency=1,
                           retry=RetryPolicy(max_attempts=2, base_delay=0.01, deadline=5))
        cites, errors = draft_rollouts(client, "m", "settle G7", ["list", "get INV-1"], "ev", n=3)
        assert errors == [None, None, None]
        assert sorted(cites["span_id"].to_list()) == ["s_1", "s_2", "s_2"]  # s_9 is unknown: ignored
        assert {b["temperature"] for b in (r.body for r in server.requests)} == {0.7}
        sent = len(server.requests)
        again, _ = draft_rollouts(client, "m", "settle G7", ["list", "get INV-1"], "ev", n=3)
        assert len(server.requests) == sent and again.equals(cites)
    finally:
        server.close()
