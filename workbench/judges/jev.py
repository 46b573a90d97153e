"""Jev through TypeSafe's System One decision API (SJC's source judge, Appendix F).

``POST {base_url}/v1/systemone`` with ``{"model", "state", "questions"}``: the state is
the boundary context as structured data, and ``questions`` maps a name per entry
(``e0``, ``e1`` ...) to ``{"type": "noul", "instructions": <the SJC source question about
this entry>}``. The answer for an entry is ``answers[name].noul``, the probability of
"yes". One request per compaction, split when it would exceed the context (32K tokens).

The key comes from ``TYPESAFE_API_KEY`` (or ``OPENROUTER_API_KEY`` for the OpenRouter
route). Any answer that is missing, not a number, NaN, infinite or outside [0, 1] gives
a null score with its reason, never a crash.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from workbench.judges.base import (
    JudgeRequest,
    JudgeResult,
    count_tokens,
    entry_question,
    split_request,
    usable_probability,
)
from workbench.llm.client import LLMClient, RequestFailed

ROUTES = {
    "typesafe": ("https://api.typesafe.ai", "/v1/systemone", "TYPESAFE_API_KEY"),
    "openrouter": ("https://openrouter.ai/api", "/v1/systemone", "OPENROUTER_API_KEY"),
}


def build_body(model: str, request: JudgeRequest) -> dict[str, object]:
    """The System One request body for one (sub-)request."""
    return {
        "model": model,
        "state": json.dumps(request.state(), ensure_ascii=False),
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

    def _size(self, request: JudgeRequest) -> int:
        return count_tokens(json.dumps(build_body(self.model, request), ensure_ascii=False))

    def score(self, request: JudgeRequest) -> JudgeResult:
        n = len(request.entries)
        result = JudgeResult(scores=[None] * n, reasons=[None] * n, request_ids=[request.request_id] * n)
        groups, overflow = split_request(request, self.context_tokens, self._size)
        for i in overflow:
            result.reasons[i] = f"request exceeds the judge's context of {self.context_tokens} tokens even alone"
        self.split_log.append(len(groups))
        for indices, sub in groups:
            body = build_body(self.model, sub)
            material = {"api": "systemone", "path": self.path, "body": body}
            response, usage = self.client.cached_call(material, partial(self._send, body))
            result.add_usage(usage)
            for local, i in enumerate(indices):
                result.request_ids[i] = sub.request_id
                if response is None:
                    result.reasons[i] = usage.error
                    continue
                result.scores[i], result.reasons[i] = _answer(response["body"], f"e{local}")
        return result

    def _send(self, body: dict[str, object]) -> tuple[object, int, int]:
        data = self.client.post_json(self.path, body)
        if not isinstance(data, dict):
            raise RequestFailed("the response is not a JSON object")
        usage: dict[str, Any] = data["usage"] if isinstance(data.get("usage"), dict) else {}
        n_in = usage.get("input_tokens", 0) if isinstance(usage.get("input_tokens"), int) else 0
        n_out = usage.get("output_tokens", 0) if isinstance(usage.get("output_tokens"), int) else 0
        return data, n_in, n_out


def _answer(body: object, name: str) -> tuple[float | None, str | None]:
    answers = body.get("answers") if isinstance(body, dict) else None
    if not isinstance(answers, dict):
        return None, "response has no 'answers' object"
    answer = answers.get(name)
    if not isinstance(answer, dict):
        return None, f"no answer for {name}"
    return usable_probability(answer.get("noul"))
