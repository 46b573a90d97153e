"""The OpenAI-compatible judge: p(yes) from logprobs, retries, malformed answers."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from workbench.judges import JudgeRequest
from workbench.judges.openai import OpenAIJudge, yes_probability
from workbench.llm import DiskCache, LLMClient, RetryPolicy

from .conftest import KEY
from .llm_server import FakeLLMServer

pytestmark = pytest.mark.usefixtures("api_keys")



def fast_retry(**kw: float) -> RetryPolicy:
    return RetryPolicy(max_attempts=int(kw.get("max_attempts", 3)), base_delay=0.01, max_delay=0.2,
                       deadline=kw.get("deadline", 5.0))


def request(entries: tuple[str, ...] = ("- Paid INV-104 ($120.50).", "- Will email the client next.")) -> JudgeRequest:
    return JudgeRequest(task="Settle group G7.", retained_turn="paid INV-307", previous_summary="",
                        evidence=("INV-104: amount 120.50",), entries=entries, request_id="r/b0")


def openai_judge(server: FakeLLMServer, tmp_path: Path, **kw: float) -> OpenAIJudge:
    client = LLMClient(server.url + "/v1", api_key_env="OPENAI_API_KEY", cache=DiskCache(tmp_path / "cache"),
                       retry=fast_retry(**kw), max_concurrency=2)
    return OpenAIJudge(client, model="local-model")


def test_openai_logprob_score_and_cache(server: FakeLLMServer, tmp_path: Path) -> None:
    res = openai_judge(server, tmp_path).score(request())
    assert res.scores == pytest.approx([0.9, 0.2]) and res.requests == 2 and res.sent == 2
    body = server.requests[0].body
    assert body["logprobs"] is True and body["top_logprobs"] == 20 and body["max_tokens"] == 1
    assert server.requests[0].path == "/v1/chat/completions"
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    again = openai_judge(server, tmp_path).score(request())
    assert again.scores == res.scores and again.sent == 0 and len(server.requests) == 2


def test_openai_429_then_success_and_no_logprobs_is_null(server: FakeLLMServer, tmp_path: Path) -> None:
    judge = openai_judge(server, tmp_path)
    judge.client.max_concurrency = 1
    server.behaviours.extend(["429", "ok", {"no_logprobs": True}])
    res = judge.score(request())
    assert res.scores[0] == pytest.approx(0.9)
    assert res.scores[1] is None and res.reasons[1] == "response has no logprobs"


def test_openai_500_and_malformed_are_null(server: FakeLLMServer, tmp_path: Path) -> None:
    judge = openai_judge(server, tmp_path, max_attempts=2)
    judge.client.max_concurrency = 1
    server.behaviours.extend(["500", "500", "invalid_json"])
    res = judge.score(request())
    assert res.scores == [None, None]
    assert res.reasons[0] == "HTTP 500 (after 2 attempts)"
    assert "not valid JSON" in (res.reasons[1] or "") or "schema" in (res.reasons[1] or "")


def test_yes_probability_variants() -> None:
    top = [{"token": " yes", "logprob": math.log(0.3)}, {"token": "Yes", "logprob": math.log(0.3)},
           {"token": "NO", "logprob": math.log(0.2)}, {"token": "maybe", "logprob": math.log(0.2)}]
    assert yes_probability(top)[0] == pytest.approx(0.6 / 0.8)
    assert yes_probability([{"token": "maybe", "logprob": 0.0}]) == (None, "no yes/no token among the top log-probabilities")
