"""The SummEdits zero-shot protocol through the OpenAI-compatible judge (issue 81): the authors' prompt filled with
the whole document and the summary's sentences, one request per summary, the answer read by its first word as
the paper reads it; against the loopback server that speaks the chat-completions protocol."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.judges import OpenAIJudge
from workbench.judges._prompts import summedits_verdict
from workbench.llm import DiskCache, LLMClient, RetryPolicy
from workbench.summaries import JudgeRequest

from tests.llm_server import FakeLLMServer

pytestmark = pytest.mark.usefixtures("api_keys")
ROOT = Path(__file__).resolve().parents[2]


def chat(text: object) -> dict:
    return {"id": "c1", "object": "chat.completion", "model": "m", "choices": [
        {"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 80, "completion_tokens": 8, "total_tokens": 88}}


@pytest.mark.parametrize(("answer", "score"), [
    ("Yes", 1.0), ("yes, the summary is consistent", 1.0), ("No. The second sentence says", 0.0),
    ("**No**, sentence 2", 0.0), ('"Yes"', 1.0), ("  \nNO", 0.0), ("Yesterday", None), ("The summary is", None),
    ("", None), (None, None), ("Nope", None)])
def test_the_answer_is_read_by_its_first_word(answer: object, score: float | None) -> None:
    got, why = summedits_verdict(answer)
    assert got == score and (why is None) == (score is not None)


def test_one_request_per_summary_with_the_authors_prompt(server: FakeLLMServer, tmp_path: Path) -> None:
    """The document (the request's evidence, in order) and the sentences, one a line, fill the authors' file; every
    entry of the summary gets the verdict; a second run is answered from the cache; an answer that starts with
    neither word is no score, its reason quoting it, and is not cached."""
    prompt = (ROOT / "data" / "benchmarks" / "summedits" / "standard_zs_prompt.txt").read_text()
    client = LLMClient(server.url + "/v1", api_key_env="OPENAI_API_KEY", cache=DiskCache(tmp_path / "cache"),
                       retry=RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.1, deadline=5.0))
    judge = OpenAIJudge(client, model="local", prompt="summedits")
    request = JudgeRequest(task="", retained_turn="", previous_summary="",
                           evidence=("Ann: buy butter.", "Mike: ok."), entries=("Ann asks for butter.", "Mike agrees."),
                           request_id="r/b0")
    server.behaviours.append(("reply", lambda body: chat("No. Mike never agreed.")))
    res = judge.score(request)
    assert res.scores == [0.0, 0.0] and res.sent == 1 and len(server.requests) == 1
    sent = server.requests[0].body
    want = prompt.replace("[ARTICLE]", "Ann: buy butter.\nMike: ok.").replace(
        "[SUMMARY_SENTENCES]", "Ann asks for butter.\nMike agrees.")
    assert sent["messages"] == [{"role": "user", "content": want}] and sent["max_tokens"] == 8
    assert sent["temperature"] == 0 and "logprobs" not in sent
    again = OpenAIJudge(client, model="local", prompt="summedits").score(request)
    assert again.scores == [0.0, 0.0] and again.sent == 0 and len(server.requests) == 1
    other = JudgeRequest(task="", retained_turn="", previous_summary="", evidence=("x",), entries=("y",),
                         request_id="r2/b0")
    server.behaviours.extend([("reply", lambda body: chat("The summary is fine."))] * 2)
    bad = judge.score(other)
    assert bad.scores == [None] and "does not start with Yes or No: 'The summary is fine.'" in bad.reasons[0]
    assert "(after 2 attempts)" in bad.reasons[0]


def test_the_command_sends_the_prompt_and_refuses_it_for_another_judge(server: FakeLLMServer, tmp_path: Path) -> None:
    """``workbench judge DIR --judge openai --prompt summedits`` on a SummEdits import: one request per summary,
    scores under the judge ``openai-summedits``, every sentence of a summary with its verdict; the lexical judge
    with that prompt is a usage error naming the option."""
    import polars as pl

    one = [{"id": "samsum_1_og", "doc": "Ann: buy butter. Mike: ok.", "summary": "Ann asks for butter. Mike agrees.",
            "label": 1, "original_summary": "Ann asks for butter. Mike agrees.", "edit_types": [], "split": "test"},
           {"id": "samsum_1_2", "doc": "Ann: buy butter. Mike: ok.", "summary": "Ann asks for milk.", "label": 0,
            "original_summary": "Ann asks for butter. Mike agrees.", "edit_types": ["EntE"], "split": "test"}]
    (tmp_path / "se").mkdir()
    (tmp_path / "se" / "summedits_samsum.json").write_text(json.dumps(one))
    workbench = [sys.executable, "-m", "workbench.cli.main"]
    assert subprocess.run([*workbench, "import", str(tmp_path / "se"), "--out", str(tmp_path / "d")],
                          capture_output=True, timeout=120).returncode == 0
    server.default = ("reply", lambda body: chat("Yes" if "milk" not in body["messages"][0]["content"] else "No, milk"))
    done = subprocess.run([*workbench, "judge", str(tmp_path / "d"), "--judge", "openai", "--prompt", "summedits",
                           "--base-url", server.url + "/v1", "--cache", str(tmp_path / "c"), "--quiet",
                           "--out", str(tmp_path / "s.parquet")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    scores = pl.read_parquet(tmp_path / "s.parquet").sort("entry_id")
    assert set(scores["judge"].to_list()) == {"openai-summedits"} and len(server.requests) == 2
    assert dict(zip(scores["entry_id"].to_list(), scores["score"].to_list(), strict=True)) == {
        "samsum_1_2/b0/e0": 0.0, "samsum_1_og/b0/e0": 1.0, "samsum_1_og/b0/e1": 1.0}
    refused = subprocess.run([*workbench, "judge", str(tmp_path / "d"), "--prompt", "summedits", "--out",
                              str(tmp_path / "t.parquet")], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "option --prompt" in refused.stderr
