"""One chat-completions request through the ``openai`` SDK, with errors mapped for the retry loop."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from functools import cache
from typing import Any

from workbench.llm._client import (MAX_ANSWER_DEPTH, LLMClient, RequestFailed, not_an_answer, parse_retry_after,
                                   token_count, unreachable)


def send_chat(client: LLMClient, body: dict[str, Any]) -> tuple[Any, int, int]:
    """Send ``body`` once to ``client.base_url`` (SDK retries off: the client layer retries).

    Returns (the completion as JSON, prompt tokens, completion tokens) or raises
    :class:`RequestFailed` (retryable for 429, 5xx, timeouts and connection errors). At most
    ``client.max_response_bytes`` of the body are read however it is framed (a declared length above it is
    refused before reading; a chunked body is cut off there), and bodies come uncompressed
    (``Accept-Encoding: identity``), so the bytes counted are the bytes held. A body that is not a chat
    completion (a list, ``choices`` that is no list, a message that is text) is an unusable answer, never a crash.
    """
    import openai

    limit = client.attempt_timeout()
    key = client.api_key() or "not-needed"

    cap = client.max_response_bytes
    too_large = (f"the response is larger than {cap / 2**20:g} MiB (max_response_bytes): not read, not cached")

    def refuse_large(response: Any) -> None:  # before the SDK reads the body
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > cap:
            raise _TooLarge(too_large)
        capped = _capped_stream(sys.modules[type(response).__module__.partition(".")[0]].SyncByteStream)
        response.stream = capped(response.stream, cap, too_large)  # whatever the framing (chunked, no length)

    sdk = client.shared(f"openai:{key}", lambda: openai.OpenAI(  # one SDK a client: its connections are reused
        base_url=client.base_url, api_key=key, max_retries=0, default_headers={"Accept-Encoding": "identity"},
        http_client=openai.DefaultHttpxClient(event_hooks={"response": [refuse_large]}, follow_redirects=False)))
    try:
        raw = sdk.chat.completions.with_raw_response.create(**body, timeout=limit)
        kind = raw.headers.get("content-type") or ""
        if kind and "json" not in kind.lower():  # a web page on the port: the SDK would hand back its text
            raise not_an_answer(raw.status_code, raw.headers, raw.content, key)
        data = json.loads(raw.content)  # the dict itself: the SDK's objects would take any shape without a word
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
    except RecursionError:  # a 200k-deep array
        raise RequestFailed(f"unusable answer: JSON nested deeper than {MAX_ANSWER_DEPTH} levels", retryable=True,
                            unusable=True) from None
    except (json.JSONDecodeError, ValueError) as err:
        raise RequestFailed(f"the response is not valid JSON ({type(err).__name__})", retryable=True) from None
    if not isinstance(data, dict):
        raise RequestFailed(f"unusable answer: {type(data).__name__} JSON, not a chat completion object",
                            retryable=True, unusable=True)
    data = essentials(data)
    usage = data["usage"]
    return data, token_count(usage.get("prompt_tokens")), token_count(usage.get("completion_tokens"))


class _TooLarge(Exception):
    pass


@cache
def _capped_stream(base: type) -> type:
    """A response body class of the SDK's own HTTP library (``base``: its ``SyncByteStream``, which its responses
    require) that raises :class:`_TooLarge` once more than ``cap`` bytes have come."""

    class Capped(base):
        def __init__(self, stream: Any, cap: int, message: str) -> None:
            self._stream, self._cap, self._message = stream, cap, message

        def __iter__(self) -> Iterator[bytes]:
            size = 0
            for chunk in self._stream:
                size += len(chunk)
                if size > self._cap:
                    raise _TooLarge(self._message)
                yield chunk

        def close(self) -> None:
            self._stream.close()

    return Capped


def essentials(data: dict[str, Any]) -> dict[str, Any]:
    """What the judge reads of a chat completion, and nothing else (what is cached): the model, each choice's
    message text, finish reason and log-probabilities (token and logprob, with the top alternatives), and the
    token usage. A server's extra fields (or echoed request headers) are dropped, and a field of another shape
    than the API's (``choices`` that is an object, a message that is text) is read as missing, so the judge's
    check names what is missing."""
    def obj(value: Any) -> dict[str, Any]:
        return value if isinstance(value, dict) else {}

    def seq(value: Any) -> list[Any]:
        return value if isinstance(value, list) else []

    def lp(item: dict[str, Any]) -> dict[str, Any]:
        out = {"token": item.get("token"), "logprob": item.get("logprob")}
        if "top_logprobs" in item:
            out["top_logprobs"] = [{"token": t.get("token"), "logprob": t.get("logprob")}
                                   for t in seq(item.get("top_logprobs")) if isinstance(t, dict)]
        return out

    choices = []
    for c in seq(data.get("choices")):
        if not isinstance(c, dict):
            continue
        logprobs = c.get("logprobs")
        content = logprobs.get("content") if isinstance(logprobs, dict) else None
        message = obj(c.get("message"))
        choices.append({"index": c.get("index"), "finish_reason": c.get("finish_reason"),
                        "message": {"role": message.get("role"), "content": message.get("content")},
                        "logprobs": None if not isinstance(content, list) else
                        {"content": [lp(i) for i in content if isinstance(i, dict)]}})
    usage = obj(data.get("usage"))
    return {"model": data.get("model"), "choices": choices,
            "usage": {k: usage.get(k) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}}


__all__ = []
