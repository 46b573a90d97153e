"""One chat-completions request through the ``openai`` SDK, with errors mapped for the retry loop."""

from __future__ import annotations

import json
from typing import Any

from workbench.llm.client import LLMClient, RequestFailed, parse_retry_after


def send_chat(client: LLMClient, body: dict[str, Any]) -> tuple[Any, int, int]:
    """Send ``body`` once to ``client.base_url`` (SDK retries off: the client layer retries).

    Returns (the completion as JSON, prompt tokens, completion tokens) or raises
    :class:`RequestFailed` (retryable for 429, 5xx, timeouts and connection errors).
    """
    import openai

    limit = client.attempt_timeout()
    key = client.api_key() or "not-needed"
    sdk = client.shared(f"openai:{key}", lambda: openai.OpenAI(  # one SDK a client: its connections are reused
        base_url=client.base_url, api_key=key, max_retries=0))
    try:
        completion = sdk.chat.completions.create(**body, timeout=limit)
    except openai.APITimeoutError:
        raise RequestFailed(f"timed out after {limit:g}s", retryable=True) from None
    except openai.APIConnectionError:
        raise RequestFailed("connection error", retryable=True) from None
    except openai.APIStatusError as err:
        status = err.status_code
        raise RequestFailed(f"HTTP {status}", status=status, retryable=status == 429 or status >= 500,
                            retry_after=parse_retry_after(err.response.headers.get("retry-after"))) from None
    except openai.APIResponseValidationError:
        raise RequestFailed("the response does not follow the chat-completions schema") from None
    except (json.JSONDecodeError, ValueError) as err:
        raise RequestFailed(f"the response is not valid JSON ({type(err).__name__})", retryable=True) from None
    data = completion.model_dump(mode="json")
    usage = data.get("usage") or {}
    return data, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
