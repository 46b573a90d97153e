"""What the judges do with answers that are too large, malformed, stale or cannot be cached, and with attempts that
time out (issue 57, items 4, 5, 11, 17 and 18). Every test talks real HTTP to the loopback server of
``tests/llm_server.py``; nothing of the SDK is mocked."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from workbench.cli.main import main
from workbench.judges import JevJudge, OpenAIJudge
from workbench.llm import DiskCache, LLMClient, RetryPolicy
from workbench.summaries import JudgeRequest

from tests.conftest import EXAMPLE
from tests.llm_server import FakeLLMServer


def request(n: int, rid: str = "r") -> JudgeRequest:
    entries = tuple(f"- Paid INV-{100 + i} ($1.00)." if i % 2 == 0 else f"- Called the customer {i}." for i in range(n))
    return JudgeRequest(task=f"Settle group {rid}.", retained_turn="paid INV-307", previous_summary="",
                        evidence=("INV-104: amount 120.50",), entries=entries, request_id=rid)


def make_client(server: FakeLLMServer, tmp_path: Path, *, path: str = "", attempts: int = 1, timeout: float = 10.0,
                concurrency: int = 1, **kw: object) -> LLMClient:
    return LLMClient(server.url + path, api_key_env="TYPESAFE_API_KEY", cache=DiskCache(tmp_path / "cache"),
                     retry=RetryPolicy(max_attempts=attempts, base_delay=0.01, max_delay=0.2, deadline=timeout),
                     max_concurrency=concurrency, **kw)  # type: ignore[arg-type]


def openai_judge(server: FakeLLMServer, tmp_path: Path, **kw: object) -> OpenAIJudge:
    return OpenAIJudge(make_client(server, tmp_path, path="/v1", **kw), model="local-model")


# -- item 4: the answer cap, whatever the framing --------------------------------------------------------------

def test_a_chunked_answer_over_the_cap_is_cut_off_and_never_cached(server: FakeLLMServer, tmp_path: Path) -> None:
    """Before: the OpenAI judge's 16 MiB cap looked only at Content-Length, so a chunked body of any size was read,
    scored and cached (a 200 MB answer: 2.7 GB peak). With a 1 MiB cap, a 64 MiB chunked answer is refused with
    its reason, the client stops reading (the server could write only what the socket buffers hold), nothing is
    cached, and the next entry is scored. Jev's reader keeps its own cap."""
    server.behaviours.extend([("chunked", 64 << 20), "ok"])
    judge = openai_judge(server, tmp_path, max_response_bytes=1 << 20)
    res = judge.score(request(2))
    assert res.scores[0] is None and "larger than 1 MiB" in (res.reasons[0] or "")
    assert res.scores[1] == pytest.approx(0.2)
    assert server.chunked_written < 32 << 20
    assert len(DiskCache(tmp_path / "cache")) == 1  # the usable answer only
    server.behaviours.append(("chunked", 8 << 20))
    jev = JevJudge(make_client(server, tmp_path / "jev", max_response_bytes=1 << 20)).score(request(1))
    assert jev.scores == [None] and "larger than 1 MiB" in (jev.reasons[0] or "")


# -- item 5: malformed answers are one entry's null score -------------------------------------------------------

def _completion(**change: object) -> bytes:
    p = 0.9
    top = [{"token": "Yes", "logprob": math.log(p)}, {"token": "No", "logprob": math.log(1 - p)}]
    body: dict[str, object] = {
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": "Yes"},
                     "logprobs": {"content": [{"token": "Yes", "logprob": math.log(p), "top_logprobs": top}]}}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 1, "total_tokens": 51}}
    body.update(change)
    return json.dumps(body).encode()


DEEP = b"[" * 200_000 + b"]" * 200_000


def test_malformed_chat_answers_are_null_scores_with_their_reason_and_the_run_goes_on(server: FakeLLMServer,
                                                                                      tmp_path: Path) -> None:
    """Before: each of these ended the whole run with an internal error and nothing written (ValueError on
    ``int("abc")``, AttributeError on ``choices: {}`` and on a text message, RecursionError on a 200k-deep array).
    Now usage counts that are not numbers count 0 (usage never decides a score: the answer is scored), and every
    other shape is that entry's null score with what was wrong."""
    server.behaviours.extend([
        ("raw", _completion(usage={"prompt_tokens": "abc", "completion_tokens": [1]})),
        ("raw", _completion(choices={})),
        ("raw", _completion(choices=[{"index": 0, "message": "hi"}])),
        ("raw", DEEP),
        ("raw", b'["a", "list"]'),
        "ok",
    ])
    judge = openai_judge(server, tmp_path)
    res = judge.score(request(6))
    assert res.scores[0] == pytest.approx(0.9) and res.input_tokens == 0 + 50  # "abc" counted 0; the last answer's 50
    assert res.scores[1:5] == [None] * 4
    assert res.reasons[1].startswith("response has no logprobs")
    assert res.reasons[2].startswith("response has no logprobs")
    assert "nested deeper than 64 levels" in res.reasons[3]
    assert "list JSON, not a chat completion object" in res.reasons[4]
    assert res.scores[5] == pytest.approx(0.2)


def test_malformed_system_one_answers_are_null_scores_and_a_deep_extra_field_is_dropped(server: FakeLLMServer,
                                                                                       tmp_path: Path) -> None:
    """Jev: a 200k-deep array is every entry's null score with its reason; a valid answer that carries an extra
    field nested 900 deep (a RecursionError before) is scored, the extra field never stored."""
    deep_extra = b'{"answers": {"e0": {"noul": 0.7}, "e1": {"noul": 0.1}}, "trace": ' + b"[" * 900 + b"]" * 900 + b"}"
    server.behaviours.extend([("raw", DEEP), ("raw", deep_extra)])
    judge = JevJudge(make_client(server, tmp_path))
    first, second = judge.score(request(2, "a")), judge.score(request(2, "b"))
    assert first.scores == [None, None] and all("nested deeper than 64 levels" in r for r in first.reasons)
    assert second.scores == [pytest.approx(0.7), pytest.approx(0.1)], second.reasons
    stored = [json.loads(f.read_text()) for f in (tmp_path / "cache").rglob("*.json")]
    assert len(stored) == 1 and "trace" not in stored[0]["response"]["body"]


# -- item 11: what the cache key covers, and what is served -----------------------------------------------------

def test_the_cache_key_covers_the_prompt_version_the_model_and_the_base_url(server: FakeLLMServer, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A re-run sends nothing; a new prompt version, another model name or another server asks again."""
    def sent(judge: JevJudge) -> int:
        before = len(server.requests)
        judge.score(request(2))
        return len(server.requests) - before

    assert sent(JevJudge(make_client(server, tmp_path))) == 1
    assert sent(JevJudge(make_client(server, tmp_path))) == 0
    assert sent(JevJudge(make_client(server, tmp_path), model="jev-2")) == 1
    monkeypatch.setattr(JevJudge, "PROMPT_VERSION", "sjc-source-2")
    assert sent(JevJudge(make_client(server, tmp_path))) == 1
    other = FakeLLMServer()
    try:
        c = LLMClient(other.url, api_key_env="TYPESAFE_API_KEY", cache=DiskCache(tmp_path / "cache"))
        JevJudge(c).score(request(2))
        assert len(other.requests) == 1
    finally:
        other.close()


def test_a_hand_edited_cache_entry_is_not_served(server: FakeLLMServer, tmp_path: Path) -> None:
    """Before: an entry's stored request was never compared with its key and its answer never checked, so an edited
    score was served as is. Now an entry whose answer was changed, or whose request no longer hashes to its key,
    is passed over, counted, and asked again: the scores are the server's."""
    JevJudge(make_client(server, tmp_path)).score(request(2, "a"))
    JevJudge(make_client(server, tmp_path)).score(request(2, "b"))
    files = sorted((tmp_path / "cache").rglob("*.json"))
    edited = json.loads(files[0].read_text())
    edited["response"]["body"]["answers"]["e0"]["noul"] = 0.001
    files[0].write_text(json.dumps(edited))
    moved = json.loads(files[1].read_text())
    moved["request"]["body"]["model"] = "another"
    files[1].write_text(json.dumps(moved))
    client = make_client(server, tmp_path)
    before = len(server.requests)
    scores = [JevJudge(client).score(request(2, rid)).scores for rid in "ab"]
    assert scores == [[pytest.approx(0.9), pytest.approx(0.2)]] * 2
    assert len(server.requests) - before == 2 and client.cache.mismatched == 2  # type: ignore[union-attr]


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    from workbench.datasets import import_log

    import_log(EXAMPLE, tmp_path / "log")
    return tmp_path / "log"


def _judge_cli(log_dir: Path, server: FakeLLMServer, *extra: str, capsys: pytest.CaptureFixture[str]
               ) -> tuple[int, str, str]:
    code = main(["judge", str(log_dir), "--judge", "jev", "--base-url", server.url, "--out",
                 str(log_dir.parent / "s.parquet"), "--cache", str(log_dir.parent / "cache"), "--quiet", *extra])
    out, err = capsys.readouterr()
    return code, out, err


def test_answers_from_the_cache_made_by_another_model_than_the_server_now_reports_are_named(
        server: FakeLLMServer, log_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: after the server's model changed under the same --model, every answer came from the cache without a
    word (mean 0.909 against 0.050 fresh). The summary now says which model made the cached answers, and when the
    answers sent in the same run name another, a warning says the scores mix models."""
    server.default = ("model", "server-model-A")
    code, out, _ = _judge_cli(log_dir, server, capsys=capsys)
    assert code == 0 and "answered from cache" in out and "warning" not in out
    server.default = ("model", "server-model-B")
    # repeat 0 from the cache; repeat 1 sent (5 requests: 3 of the 8 compactions ask what another asked, and are
    # answered from the cache the run fills)
    code, out, _ = _judge_cli(log_dir, server, "--repeats", "2", capsys=capsys)
    assert code == 0
    assert "answered from cache (made by 'server-model-A' (8), 'server-model-B' (3))" in out, out
    assert ("warning: the server now says its answers are made by 'server-model-B', but 8 answers read from the cache "
            "were made by 'server-model-A'") in out


# -- item 17: a cache that cannot be written loses no answer ------------------------------------------------------

def test_a_cache_that_cannot_be_written_keeps_every_answer(server: FakeLLMServer, log_dir: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the first answer the cache could not store ended the run with an internal error, and the answers
    already received were lost. A cache directory whose every entry directory is taken by a file (so no entry can
    be written, even by root) now gives a complete scores table and a warning with the count and the reason."""
    cache = log_dir.parent / "cache"
    cache.mkdir()
    for i in range(256):
        (cache / f"{i:02x}").write_text("not a directory")
    code, out, _ = _judge_cli(log_dir, server, capsys=capsys)
    assert code == 0, out
    scores = pl.read_parquet(log_dir.parent / "s.parquet")
    assert scores.height == 61 and scores.get_column("score").null_count() == 0
    assert "warning: 8 answers could not be stored in the cache" in out


def test_a_cache_path_that_is_a_file_is_refused_before_anything_is_sent(server: FakeLLMServer, log_dir: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    (log_dir.parent / "cache").write_text("a file")
    code, _, err = _judge_cli(log_dir, server, capsys=capsys)
    assert code == 2 and "option --cache" in err and "is a file" in err
    assert server.requests == [] and not (log_dir.parent / "s.parquet").exists()


# -- item 18: a timed-out attempt holds its slot until its connection is closed -----------------------------------

def test_timed_out_attempts_never_exceed_the_concurrency_and_every_attempt_is_counted(server: FakeLLMServer,
                                                                                     log_dir: Path,
                                                                                     capsys: pytest.CaptureFixture[str]
                                                                                     ) -> None:
    """Before: an attempt given up at its timeout freed its slot while its connection stayed open, so the server saw
    5 requests in flight at --concurrency 2, and the summary said "24 sent" for 28 attempts. The server here sends
    its status line a byte every 0.2 s (so no read ever times out) and notices at once when a client hangs up:
    an abandoned attempt's connection closes only when its read wakes, and until then it still holds its slot.
    The server never has more than 2 requests open, and the summary's attempts are the requests it received."""
    server.default = "dribble"
    code, out, _ = _judge_cli(log_dir, server, "--timeout", "0.4", "--max-attempts", "2", "--concurrency", "2",
                              capsys=capsys)
    assert code == 1  # no usable answer at all
    assert server.max_active <= 2
    received = len(server.requests)
    # 8 requests, of which 3 ask what another asked (they share its failure); 5 sent, each twice
    assert f"8 requests, 5 sent ({received} attempts)" in out and received == 10, out
