"""Build a source judge by name: the offline lexical judge, Jev's decision API or an OpenAI-compatible server,
the network ones sharing the cached, retrying client layer."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from workbench.judges._base import SourceJudge
from workbench.judges._registry import JUDGE_REGISTRY

if TYPE_CHECKING:
    from workbench.llm import LLMClient

#: the judges' names, from the registry (:data:`~workbench.judges.JUDGE_REGISTRY`)
JUDGES = tuple(JUDGE_REGISTRY)


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
    prompt: str = "sjc",
) -> SourceJudge:
    """Build a judge by name; the network judges share the cached, retrying client layer.

    ``prompt`` names what a model judge asks (:data:`workbench.judges.PROMPTS`: ``sjc`` by default, ``summedits``
    the SummEdits authors' zero-shot prompt, which only the ``openai`` judge sends).

    ``timeout`` is the limit of one attempt in seconds (body included), ``max_attempts`` the
    attempts per request, ``max_concurrency`` the requests in flight at once; ``refresh``
    ignores cached answers, ``offline`` sends nothing (see :class:`workbench.llm.LLMClient`).

    Parameters
    ----------
    name : str
        A judge of :data:`JUDGE_REGISTRY` (``lexical``, ``jev``, ``openai``).
    model : str, optional
        The model a network judge asks.
    base_url : str, optional
        The server's base URL (default: the judge's own).
    cache : str or pathlib.Path, optional
        The response cache directory.
    max_concurrency : int, default 4
        Requests in flight at once.
    context_tokens : int, optional
        The model's context: a longer request is split.
    api_key_env : str, optional
        The environment variable holding the key.
    timeout : float, optional
        Seconds one attempt may take.
    max_attempts : int, optional
        Attempts per request.
    refresh : bool, default False
        Ignore cached answers.
    offline : bool, default False
        Send nothing: only cached answers are used.
    prompt : str, default "sjc"
        A prompt of :data:`PROMPTS`.

    Returns
    -------
    SourceJudge
        The judge.

    Examples
    --------
    >>> from workbench.judges import make_judge
    >>> from workbench.summaries import JudgeRequest
    >>> judge = make_judge("lexical")  # offline; "jev" and "openai" ask a server
    >>> request = JudgeRequest(task="Pay the open invoices.", retained_turn="", previous_summary="", evidence=("get_invoice INV-104 -> amount 120.50",), entries=("- Paid INV-104 ($120.50).", "- Paid INV-999."))
    >>> [round(s, 2) for s in judge.score(request).scores]
    [0.96, 0.22]
    """
    from workbench.judges._prompts import check_prompt, DEFAULT_PROMPT

    if name not in JUDGE_REGISTRY:
        raise ValueError(f"judge: expected one of {list(JUDGES)}, got {name!r}")
    check_prompt(prompt, name)
    declared = JUDGE_REGISTRY[name]
    if declared.kind == "offline":
        return declared.load()()
    from functools import partial

    client_for = partial(model_client, cache=cache, max_concurrency=max_concurrency, timeout=timeout,
                         max_attempts=max_attempts, refresh=refresh, offline=offline)
    if name == "jev":
        from workbench.judges._jev import ROUTES

        JevJudge = declared.load()
        route = "openrouter" if base_url and "openrouter" in base_url else "typesafe"
        default_base, path, env = ROUTES[route]
        client = client_for(base_url or default_base, api_key_env or env)
        judge = JevJudge(client, path=path)
        if model:
            judge.model = model
        if context_tokens:
            judge.context_tokens = context_tokens
        return judge
    if name == "openai":
        client = client_for(base_url or OPENAI_BASE_URL, api_key_env or "OPENAI_API_KEY")
        judge_o = declared.load()(client, prompt=prompt)
        if prompt != DEFAULT_PROMPT:  # another prompt's scores are another judge's column
            judge_o.name = f"openai-{prompt}"
        if model:
            judge_o.model = model
        if context_tokens:
            judge_o.context_tokens = context_tokens
        return judge_o
    raise ValueError(f"judge {name!r} is declared as a model judge but make_judge does not build it")


def model_client(base_url: str, api_key_env: str, *, cache: str | Path | None = None, max_concurrency: int = 4,
                 timeout: float | None = None, max_attempts: int | None = None, refresh: bool = False,
                 offline: bool = False) -> LLMClient:
    """The cached, retrying client every network judge and attributor talks through.

    Parameters
    ----------
    base_url : str
        The server root.
    api_key_env : str
        The environment variable holding the key (none needed on loopback).
    cache : str or pathlib.Path, optional
        The response cache directory; no cache when None.
    max_concurrency : int, default 4
        Requests in flight at once.
    timeout : float, optional
        The limit of one attempt in seconds, body included.
    max_attempts : int, optional
        Attempts per request.
    refresh : bool, default False
        Ignore cached answers.
    offline : bool, default False
        Send nothing: answer from the cache only.

    Returns
    -------
    workbench.llm.LLMClient
        The client.
    """
    from workbench.llm import DiskCache, LLMClient, RetryPolicy

    retry = RetryPolicy()
    if timeout is not None:
        retry.deadline = timeout
    if max_attempts is not None:
        retry.max_attempts = max_attempts
    return LLMClient(base_url, api_key_env=api_key_env, cache=DiskCache(cache) if cache is not None else None,
                     retry=retry, max_concurrency=max_concurrency, refresh=refresh, offline=offline)


#: the OpenAI-compatible server a judge or attributor asks when no base URL is given
OPENAI_BASE_URL = "https://api.openai.com/v1"

__all__ = ["JUDGES", "make_judge"]
