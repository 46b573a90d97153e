"""Jev through TypeSafe's System One decision API (SJC's source judge, Appendix F).

``POST {base_url}/v1/systemone`` with ``{"model", "state", "questions"}``, as TypeSafe's
own SDK (``typesafe-sdk``, ``SystemOneRequest``) defines it: ``state`` may be text, a JSON
object or an array, and the boundary context is sent as a JSON object (never as a JSON
string); ``questions`` maps a name per entry (``e0``, ``e1`` ...) to ``{"type": "noul",
"instructions": <the SJC source question about this entry>}``. The answer for an entry is
``answers[name].noul`` (``SystemOneResponse``), the probability of "yes"; ``usage`` holds
integer token counts. One request per compaction, split when it would exceed the context
(32K tokens).

The key comes from ``TYPESAFE_API_KEY`` (or ``OPENROUTER_API_KEY`` for the OpenRouter
route); a server on loopback needs none. ``check_answers`` is the strict check: an
answer that is missing, not a ``noul`` answer, not a number, NaN, infinite or outside
[0, 1] makes the response unusable; it is retried, never cached, and in the end each such
entry gets a null score with its reason -- never a crash, never a wrong number. Answers
nobody asked for are ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from workbench.judges._base import (
    JudgeRequest,
    JudgeResult,
    count_tokens,
    entry_question,
    split_request,
    usable_probability,
)
from workbench.llm._client import LLMClient, RequestFailed, token_count

ROUTES = {
    "typesafe": ("https://api.typesafe.ai", "/v1/systemone", "TYPESAFE_API_KEY"),
    "openrouter": ("https://openrouter.ai/api", "/v1/systemone", "OPENROUTER_API_KEY"),
}


def build_body(model: str, request: JudgeRequest) -> dict[str, object]:
    """The System One request body for one (sub-)request; the boundary context is the ``state`` object."""
    return {
        "model": model,
        "state": request.state(),
        "questions": {f"e{i}": {"type": "noul", "instructions": entry_question(e)}
                      for i, e in enumerate(request.entries)},
    }


@dataclass
class JevJudge:
    """The Jev source judge; ``client`` carries the base URL, key variable, cache and retries."""

    client: LLMClient
    model: str = "jev-1.13.0"
    path: str = "/v1/systemone"
    context_tokens: int = 32_000
    name: str = "jev"
    split_log: list[int] = field(default_factory=list)  # number of sub-requests per request
    #: the question's wording and the request's shape: part of every cache key, raised when either changes
    PROMPT_VERSION = "sjc-source-1"

    def _size(self, request: JudgeRequest) -> int:
        return count_tokens(json.dumps(build_body(self.model, request), ensure_ascii=False))

    @property
    def route(self) -> str:
        return self.client.public_url.rstrip("/") + self.path

    def score(self, request: JudgeRequest, repeat: int = 0) -> JudgeResult:
        """Scores for every entry; ``repeat`` > 0 asks again as a separate, separately cached request."""
        n = len(request.entries)
        result = JudgeResult(scores=[None] * n, reasons=[None] * n, request_ids=[request.request_id] * n)
        groups, overflow = split_request(request, self.context_tokens, self._size)
        for i in overflow:
            result.reasons[i] = f"request exceeds the judge's context of {self.context_tokens} tokens even alone"
        self.split_log.append(len(groups))
        for indices, sub in groups:
            body = build_body(self.model, sub)
            # everything that decides the answer, never the key
            material = {"judge": self.name, "prompt_version": self.PROMPT_VERSION, "route": self.route,
                        "base_url": self.client.public_url, "path": self.path, "body": body, "repeat": repeat}
            names = [f"e{local}" for local in range(len(indices))]
            response, usage = self.client.cached_call(material, partial(self._send, body),
                                                      check=partial(check_answers, names=names))
            result.add_usage(usage)
            for name, i in zip(names, indices, strict=True):
                result.request_ids[i] = sub.request_id
                if response is None:
                    result.reasons[i] = usage.error
                    continue
                result.scores[i], result.reasons[i] = answer_of(response["body"], name)
                if result.scores[i] is None and usage.attempts:
                    result.reasons[i] = f"{result.reasons[i]} (after {usage.attempts} attempt{'s' * (usage.attempts > 1)})"
        return result

    def _send(self, body: dict[str, object]) -> tuple[object, int, int]:
        data = self.client.post_json(self.path, body)
        if not isinstance(data, dict):
            raise RequestFailed("unusable answer: the response is not a JSON object", retryable=True, unusable=True)
        questions = body["questions"]
        kept = system_one_essentials(data, list(questions) if isinstance(questions, dict) else [])
        usage = kept["usage"]
        return kept, token_count(usage.get("input_tokens")), token_count(usage.get("output_tokens"))


def system_one_essentials(data: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """What the judge reads of a System One answer, and nothing else (what is cached): the answers to the questions
    asked (each one's ``type`` and ``noul``), the ``model`` it names and the token usage. Answers nobody asked for
    and extra fields (however deeply nested) are dropped."""
    answers = data.get("answers")
    kept: dict[str, Any] = {"model": data.get("model") if isinstance(data.get("model"), str) else None}
    if isinstance(answers, dict):
        kept["answers"] = {name: ({k: answers[name][k] for k in ("type", "noul") if k in answers[name]}
                                  if isinstance(answers[name], dict) else answers[name])
                           for name in names if name in answers}
    usage = data.get("usage")
    kept["usage"] = {k: usage.get(k) for k in ("input_tokens", "output_tokens")} if isinstance(usage, dict) else {}
    return kept


def answer_of(body: object, name: str) -> tuple[float | None, str | None]:
    """The probability the response gives question ``name``, or (None, why it is unusable)."""
    answers = body.get("answers") if isinstance(body, dict) else None
    if not isinstance(answers, dict):
        return None, "response has no 'answers' object"
    answer = answers.get(name)
    if not isinstance(answer, dict):
        return None, f"no answer for {name}"
    kind = answer.get("type", "noul")
    if kind != "noul":
        return None, f"answer for {name} has type {str(kind)[:20]!r}, expected 'noul'"
    return usable_probability(answer.get("noul"))


def check_answers(body: object, names: list[str]) -> str | None:
    """None when every asked question has a usable answer, else the first reason (the strict check)."""
    for name in names:
        score, reason = answer_of(body, name)
        if score is None:
            return reason
    return None


__all__ = ["JevJudge"]
