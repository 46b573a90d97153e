"""Build a source judge by name: the offline lexical judge, Jev's decision API or an OpenAI-compatible server,
the network ones sharing the cached, retrying client layer."""

from __future__ import annotations

from pathlib import Path

from workbench.judges._base import SourceJudge
from workbench.judges._lexical import LexicalJudge

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
    timeout: float | None = None,
    max_attempts: int | None = None,
    refresh: bool = False,
    offline: bool = False,
) -> SourceJudge:
    """Build a judge by name; the network judges share the cached, retrying client layer.

    ``timeout`` is the limit of one attempt in seconds (body included), ``max_attempts`` the
    attempts per request, ``max_concurrency`` the requests in flight at once; ``refresh``
    ignores cached answers, ``offline`` sends nothing (see :class:`workbench.llm.LLMClient`).
    """
    if name == "lexical":
        return LexicalJudge()
    from workbench.llm import DiskCache, LLMClient, RetryPolicy

    disk = DiskCache(cache) if cache is not None else None
    retry = RetryPolicy()
    if timeout is not None:
        retry.deadline = timeout
    if max_attempts is not None:
        retry.max_attempts = max_attempts
    if name == "jev":
        from workbench.judges._jev import ROUTES, JevJudge

        route = "openrouter" if base_url and "openrouter" in base_url else "typesafe"
        default_base, path, env = ROUTES[route]
        client = LLMClient(base_url or default_base, api_key_env=api_key_env or env, cache=disk, retry=retry,
                           max_concurrency=max_concurrency, refresh=refresh, offline=offline)
        judge = JevJudge(client, path=path)
        if model:
            judge.model = model
        if context_tokens:
            judge.context_tokens = context_tokens
        return judge
    if name == "openai":
        from workbench.judges._openai import OpenAIJudge

        client = LLMClient(base_url or "https://api.openai.com/v1", api_key_env=api_key_env or "OPENAI_API_KEY",
                           cache=disk, retry=retry, max_concurrency=max_concurrency, refresh=refresh, offline=offline)
        judge_o = OpenAIJudge(client)
        if model:
            judge_o.model = model
        if context_tokens:
            judge_o.context_tokens = context_tokens
        return judge_o
    raise ValueError(f"judge: expected one of {list(JUDGES)}, got {name!r}")


__all__ = ["JUDGES", "make_judge"]
