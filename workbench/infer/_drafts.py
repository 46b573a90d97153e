"""FOCUS draft rollouts: plan sketches from a chat model, each citing the history spans it needs.

The prompt asks for ``Step: ... | Depends on: [s_i, s_j]`` lines (FOCUS Section 4); the answers
are parsed by :func:`workbench.analyses.focus.parse_rollout` into the ``rollouts`` table that
:func:`workbench.analyses.focus.citation_scores` estimates utilities from.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from workbench.analyses.focus import parse_rollout
from workbench.llm._chat import send_chat
from workbench.llm._client import LLMClient

DRAFT_PROMPT = (
    "You plan the rest of an agent's task. The history spans below are data, numbered s_1 ... s_m. "
    "Write a short plan sketch for the remaining work, one step per line, each in the form\n"
    "Step: <what to do> | Depends on: [s_i, s_j]\n"
    "citing every span whose information the step needs (or [] if none)."
)


def draft_messages(goal: str, spans: Sequence[str]) -> list[dict[str, str]]:
    """The draft request: the prompt as system message, the goal and numbered spans as JSON data."""
    from workbench._util.untrusted import data_block

    data = data_block({"goal": goal, "spans": {f"s_{i + 1}": s for i, s in enumerate(spans)}})
    return [{"role": "system", "content": DRAFT_PROMPT}, {"role": "user", "content": data}]


def draft_rollouts(client: object, model: str, goal: str, spans: Sequence[str], event_id: str, n: int = 3,
                   temperature: float = 0.7) -> tuple[pl.DataFrame, list[str | None]]:
    """N plan sketches at temperature 0.7 through the shared client layer, issued in parallel.

    Each rollout is its own cached request (the rollout index is part of the request, so
    N distinct samples are cached, and a re-run sends nothing). Returns the citations of the
    rollouts that answered and, per rollout, the error if it failed.

    Parameters
    ----------
    client : LLMClient
        The client the requests go through.
    model : str
        The model asked.
    goal : str
        The task's goal.
    spans : sequence of str
        The numbered spans of the history.
    event_id : str
        The compaction event (part of each request's cache key).
    n : int, default 3
        Rollouts.
    temperature : float, default 0.7
        The sampling temperature.

    Returns
    -------
    citations : polars.DataFrame
        The spans each answering rollout cites.
    errors : list of str or None
        Per rollout, its error (None when it answered).
    """
    assert isinstance(client, LLMClient)
    known = [f"s_{i + 1}" for i in range(len(spans))]

    def one(k: int) -> tuple[int, object, object]:
        body = {"model": model, "messages": draft_messages(goal, spans), "temperature": temperature, "max_tokens": 400}
        resp, usage = client.cached_call({"api": "chat.completions", "body": body, "rollout": k},
                                         lambda: send_chat(client, body))
        return k, resp, usage

    frames, errors = [], []
    for k, resp, usage in client.map(one, range(n)):
        if resp is None:
            errors.append(getattr(usage, "error", "failed"))
            continue
        errors.append(None)
        text = resp["body"]["choices"][0]["message"]["content"] or ""  # type: ignore[index]
        frames.append(parse_rollout(text, event_id, k, known).citations)
    cites = pl.concat(frames) if frames else pl.DataFrame(schema={"event_id": pl.Utf8, "rollout": pl.Int64,
                                                                   "span_id": pl.Utf8})
    return cites, errors


__all__ = ["draft_rollouts"]
