"""One chat-completions request through the ``openai`` SDK, with errors mapped for the retry loop."""

from __future__ import annotations

import json
from typing import Any

from workbench.llm._client import LLMClient, RequestFailed, not_an_answer, parse_retry_after, unreachable


def send_chat(client: LLMClient, body: dict[str, Any]) -> tuple[Any, int, int]:
    """Send ``body`` once to ``client.base_url`` (SDK retries off: the client layer retries).

    Returns (the completion as JSON, prompt tokens, completion tokens) or raises
    :class:`RequestFailed` (retryable for 429, 5xx, timeouts and connection errors).
    """
    import openai

    limit = client.attempt_timeout()
    key = client.api_key() or "not-needed"

    def refuse_large(response: Any) -> None:  # before the SDK reads the body
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > client.max_response_bytes:
            raise _TooLarge(f"the response is larger than {client.max_response_bytes / 2**20:g} MiB "
                            "(max_response_bytes): not read, not cached")

    sdk = client.shared(f"openai:{key}", lambda: openai.OpenAI(  # one SDK a client: its connections are reused
        base_url=client.base_url, api_key=key, max_retries=0,
        http_client=openai.DefaultHttpxClient(event_hooks={"response": [refuse_large]}, follow_redirects=False)))
    try:
        raw = sdk.chat.completions.with_raw_response.create(**body, timeout=limit)
        kind = raw.headers.get("content-type") or ""
        if kind and "json" not in kind.lower():  # a web page on the port: the SDK would hand back its text
            raise not_an_answer(raw.status_code, raw.headers, raw.content, key)
        completion = raw.parse()
    except RequestFailed:
        raise
    except _TooLarge as err:  # raised by the response hook, before the body is read
        raise RequestFailed(str(err)) from None
    except openai.APITimeoutError:
        raise RequestFailed(f"timed out after {limit:g}s", retryable=True) from None
    except openai.APIConnectionError as err:
        if isinstance(err.__cause__, _TooLarge):
            raise RequestFailed(str(err.__cause__)) from None
        cause = err.__cause__
        if cause is not None and any(k.__name__ == "ConnectError" for k in type(cause).__mro__):
            raise unreachable(client.base_url, cause) from None  # the SDK's own httpx (its name varies by version)
        raise RequestFailed("connection error", retryable=True) from None
    except openai.APIStatusError as err:
        status = err.status_code
        if 300 <= status < 400:  # redirects are not followed: the key would travel to wherever they point
            raise not_an_answer(status, err.response.headers, b"", key) from None
        raise RequestFailed(f"HTTP {status}", status=status, retryable=status == 429 or status >= 500,
                            retry_after=parse_retry_after(err.response.headers.get("retry-after"))) from None
    except openai.APIResponseValidationError:
        raise RequestFailed("the response does not follow the chat-completions schema") from None
    except (json.JSONDecodeError, ValueError) as err:
        raise RequestFailed(f"the response is not valid JSON ({type(err).__name__})", retryable=True) from None
    if not hasattr(completion, "model_dump"):  # JSON, but not an object the SDK could read as a completion
        raise RequestFailed(f"the response is {type(completion).__name__} JSON, not a chat completion object")
    data = essentials(completion.model_dump(mode="json"))
    usage = data.get("usage") or {}
    return data, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


class _TooLarge(Exception):
    pass


def essentials(data: dict[str, Any]) -> dict[str, Any]:
    """What the judge reads of a chat completion, and nothing else (what is cached): the model, each choice's
    message text, finish reason and log-probabilities (token and logprob, with the top alternatives), and the
    token usage. A server's extra fields (or echoed request headers) are dropped."""
    def lp(item: dict[str, Any]) -> dict[str, Any]:
        out = {"token": item.get("token"), "logprob": item.get("logprob")}
        if "top_logprobs" in item:
            out["top_logprobs"] = [{"token": t.get("token"), "logprob": t.get("logprob")}
                                   for t in item.get("top_logprobs") or [] if isinstance(t, dict)]
        return out

    choices = []
    for c in data.get("choices") or []:
        logprobs = c.get("logprobs")
        content = logprobs.get("content") if isinstance(logprobs, dict) else None
        choices.append({"index": c.get("index"), "finish_reason": c.get("finish_reason"),
                        "message": {"role": (c.get("message") or {}).get("role"),
                                    "content": (c.get("message") or {}).get("content")},
                        "logprobs": None if content is None else
                        {"content": [lp(i) for i in content if isinstance(i, dict)]}})
    usage = data.get("usage") or {}
    return {"model": data.get("model"), "choices": choices,
            "usage": {k: usage.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}}


__all__ = ["essentials", "send_chat"]
