"""The OpenAI-compatible judge: p(yes) from logprobs, retries, malformed answers."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from workbench.summaries import JudgeRequest
from workbench.judges import OpenAIJudge
from workbench.judges._openai import yes_probability
from workbench.llm import DiskCache, LLMClient, RetryPolicy

from tests.conftest import KEY
from tests.llm_server import FakeLLMServer

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


def test_openai_judge_reuses_its_connections(server: FakeLLMServer, tmp_path: Path) -> None:
    """Eight entries, two in flight at once: at most two connections, kept open (an SDK per request opened eight)."""
    entries = tuple(f"- Paid INV-{k} ($1.00)." for k in range(8))
    res = openai_judge(server, tmp_path).score(request(entries))
    assert res.sent == 8 and len(server.requests) == 8
    assert len({r.peer for r in server.requests}) <= 2


def test_openai_429_then_success_and_no_logprobs_is_null(server: FakeLLMServer, tmp_path: Path) -> None:
    judge = openai_judge(server, tmp_path)
    judge.client.max_concurrency = 1
    server.behaviours.extend(["429", "ok"] + [{"no_logprobs": True}] * 3)
    res = judge.score(request())
    assert res.scores[0] == pytest.approx(0.9)
    assert res.scores[1] is None and res.reasons[1] == "response has no logprobs (after 3 attempts)"
    assert len(DiskCache(tmp_path / "cache")) == 1  # only the usable answer is cached


def test_openai_500_and_malformed_are_null(server: FakeLLMServer, tmp_path: Path) -> None:
    judge = openai_judge(server, tmp_path, max_attempts=2)
    judge.client.max_concurrency = 1
    server.behaviours.extend(["500", "500", "invalid_json", "invalid_json"])
    res = judge.score(request())
    assert res.scores == [None, None]
    assert res.reasons[0] == "HTTP 500 (after 2 attempts)"
    assert "not valid JSON" in (res.reasons[1] or "") or "schema" in (res.reasons[1] or "")


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize(("top", "reason"), [
    ([("Yes", NAN), ("No", math.log(0.5))], "logprob is nan for token 'Yes'"),  # was a score of 0.0, then pruned
    ([("Yes", INF), ("No", math.log(0.5))], "logprob is inf"),                   # was a NaN score counted as usable
    ([("Yes", 0.3), ("No", math.log(0.5))], "logprob 0.3 is above 0"),           # was a score of 1.0
    ([("Yes", 1000.0), ("No", -1.0)], "logprob 1000 is above 0"),                # was an OverflowError, every rerun
    ([("Yes", -INF), ("No", -1.0)], "logprob is -inf"),
    ([("maybe", -0.1), ("perhaps", -2.5)], "no yes/no token"),
])
def test_openai_unusable_logprobs_are_null_never_cached_never_a_crash(server: FakeLLMServer, tmp_path: Path,
                                                                      top: list[tuple[str, float]], reason: str) -> None:
    judge = openai_judge(server, tmp_path, max_attempts=2)
    judge.client.max_concurrency = 1
    server.behaviours.extend([{"top": top}] * 2)
    res = judge.score(request(("- Paid INV-104 ($120.50).",)))
    assert res.scores == [None] and reason in (res.reasons[0] or ""), res.reasons
    assert len(DiskCache(tmp_path / "cache")) == 0
    again = openai_judge(server, tmp_path).score(request(("- Paid INV-104 ($120.50).",)))  # asked again, answered
    assert again.scores == [pytest.approx(0.9)]


def test_yes_probability_variants() -> None:
    """Each rule of the docstring, with probabilities chosen so the expected share is worked out by hand."""
    def top(*pairs: tuple[str, float]) -> list[dict[str, object]]:
        return [{"token": t, "logprob": math.log(p)} for t, p in pairs]

    # leading space and case: " yes" and "Yes" both count and add up; "NO" counts; "maybe" counts for neither
    assert yes_probability(top((" yes", 0.3), ("Yes", 0.3), ("NO", 0.2), ("maybe", 0.2)))[0] == pytest.approx(0.6 / 0.8)
    # trailing newline, byte-level BPE and SentencePiece word-start markers
    assert yes_probability(top(("Yes\n", 0.2), ("\u0120No", 0.2), ("\u2581no", 0.4)))[0] == pytest.approx(0.2 / 0.8)
    # the one-letter variants count; punctuation does not
    assert yes_probability(top(("Y", 0.1), ("Yes.", 0.5), ("n", 0.3)))[0] == pytest.approx(0.1 / 0.4)
    # only yes: 1.0; only no: 0.0 (both are real answers, not defaults)
    assert yes_probability(top(("yes", 0.9), ("ok", 0.1)))[0] == 1.0
    assert yes_probability(top(("no", 0.9), ("ok", 0.1)))[0] == 0.0
    assert yes_probability(top(("maybe", 1.0))) == (None, "no yes/no token among the top log-probabilities")
    # a bad log-probability anywhere makes the answer unusable, even on a token that is neither yes nor no
    assert yes_probability([{"token": "yes", "logprob": -0.1}, {"token": "hm", "logprob": float("nan")}])[0] is None
