"""Source judges behind one protocol: lexical (offline default), jev (decision API), openai (logprobs)."""

from __future__ import annotations

from pathlib import Path

from workbench.judges.base import SOURCE_QUESTION, JudgeRequest, JudgeResult, SourceJudge, split_request
from workbench.judges.lexical import LexicalJudge

JUDGES = ("lexical", "jev", "openai")


def make_judge(
    name: str,
    *,
    model: str | None = None,
    base_url: str | None = None,
    cache: str | Path | None = None,
    max_concurrency: int = 4,
    context_tokens: int | None = None,
    api_key_env: str | None = None,
) -> SourceJudge:
    """Build a judge by name; the network judges share the cached, retrying client layer."""
    if name == "lexical":
        return LexicalJudge()
    from workbench.llm import DiskCache, LLMClient

    disk = DiskCache(cache) if cache is not None else None
    if name == "jev":
        from workbench.judges.jev import ROUTES, JevJudge

        route = "openrouter" if base_url and "openrouter" in base_url else "typesafe"
        default_base, path, env = ROUTES[route]
        client = LLMClient(base_url or default_base, api_key_env=api_key_env or env, cache=disk,
                           max_concurrency=max_concurrency)
        judge = JevJudge(client, path=path)
        if model:
            judge.model = model
        if context_tokens:
            judge.context_tokens = context_tokens
        return judge
    if name == "openai":
        from workbench.judges.openai import OpenAIJudge

        client = LLMClient(base_url or "https://api.openai.com/v1", api_key_env=api_key_env or "OPENAI_API_KEY",
                           cache=disk, max_concurrency=max_concurrency)
        judge_o = OpenAIJudge(client)
        if model:
            judge_o.model = model
        if context_tokens:
            judge_o.context_tokens = context_tokens
        return judge_o
    raise ValueError(f"judge: expected one of {list(JUDGES)}, got {name!r}")


__all__ = ["JUDGES", "SOURCE_QUESTION", "JudgeRequest", "JudgeResult", "LexicalJudge", "SourceJudge",
           "make_judge", "split_request"]
