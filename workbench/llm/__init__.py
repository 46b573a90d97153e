"""Transport for everything that talks to a model: the on-disk cache (``_cache``), the retrying, deadline-bound,
concurrency-bounded client (``_client``: :class:`LLMClient`), a run's limits and accounting (``_account``:
:class:`RunAccount`) and one chat-completions call (``_chat``). Judges, compressors and draft models share it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = [
    "DiskCache", "error_message", "essentials", "FAIL_FAST_AFTER", "is_loopback", "LLMClient", "MAX_ANSWER_DEPTH",
    "MissingKey", "nesting_depth", "not_an_answer", "parse_retry_after", "redact_url", "REFUSED_GRACE",
    "reported_model", "request_key", "RequestFailed", "response_digest", "RETRY_STATUS", "RetryPolicy", "RunAccount",
    "send_chat", "token_count", "unreachable", "Usage"
]

__getattr__, __dir__ = attach(__name__, {
    "_account": ["FAIL_FAST_AFTER", "RunAccount"],
    "_cache": ["DiskCache", "request_key", "response_digest"],
    "_chat": ["essentials", "send_chat"],
    "_client": [
        "error_message", "is_loopback", "LLMClient", "MAX_ANSWER_DEPTH", "MissingKey", "nesting_depth", "not_an_answer",
        "parse_retry_after", "redact_url", "REFUSED_GRACE", "reported_model", "RequestFailed", "RETRY_STATUS",
        "RetryPolicy", "token_count", "unreachable", "Usage"
    ],
}, public=__all__)

if TYPE_CHECKING:
    from workbench.llm._account import (FAIL_FAST_AFTER, RunAccount)
    from workbench.llm._cache import (DiskCache, request_key, response_digest)
    from workbench.llm._chat import (essentials, send_chat)
    from workbench.llm._client import (
        error_message, is_loopback, LLMClient, MAX_ANSWER_DEPTH, MissingKey, nesting_depth, not_an_answer,
        parse_retry_after, redact_url, REFUSED_GRACE, reported_model, RequestFailed, RETRY_STATUS, RetryPolicy,
        token_count, unreachable, Usage
    )
