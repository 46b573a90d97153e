"""The one client layer every judge, compressor and draft client goes through.

* cache: a request whose response is cached is never sent (and needs no key);
* retries: 429, 5xx, connection errors and timeouts are retried with exponential
  backoff and full jitter (seeded), honouring ``Retry-After``;
* deadline: each attempt has a wall-clock deadline that also covers a body that
  starts and then stalls;
* concurrency: :meth:`LLMClient.map` runs at most ``max_concurrency`` requests at once;
* accounting: one :class:`Usage` record per request (tokens, cost, attempts, cached).

API keys are read from the environment by name only when a request is actually sent;
they are put in a header and never into the cache, a log, a ``Usage`` or an error.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx

from workbench.llm.cache import DiskCache, request_key

T = TypeVar("T")
R = TypeVar("R")

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


class RequestFailed(Exception):
    """A request that could not be completed; ``reason`` is safe to record (no secrets)."""

    def __init__(self, reason: str, *, status: int | None = None, retryable: bool = False,
                 retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class MissingKey(RequestFailed):
    def __init__(self, env: str) -> None:
        super().__init__(f"no API key: set the environment variable {env}")


@dataclass(frozen=True)
class Usage:
    """What one request cost."""

    key: str
    cached: bool
    attempts: int
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    error: str | None = None


@dataclass
class RetryPolicy:
    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    deadline: float = 60.0  # seconds per attempt, body included

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_delay)
        return rng.uniform(0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time.time())


@dataclass
class LLMClient:
    """Cached, retrying, concurrency-bounded requests to one HTTP API."""

    base_url: str
    api_key_env: str | None = None
    cache: DiskCache | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_concurrency: int = 4
    seed: int = 0
    price_in_per_million: float = 0.0
    price_out_per_million: float = 0.0
    usages: list[Usage] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._lock = threading.Lock()
        self.sent = 0  # requests that reached the network (attempts, not cache hits)

    # -- the generic path -----------------------------------------------------

    def cached_call(self, material: Any, send: Callable[[], tuple[Any, int, int]]) -> tuple[Any, Usage]:
        """Return the cached response for ``material`` or call ``send`` with retries and cache it.

        ``send`` returns (json response, input tokens, output tokens) or raises
        :class:`RequestFailed`. A final failure is returned as ``(None, usage)`` with
        ``usage.error`` set, never raised, so one bad request does not lose a batch.
        """
        key = request_key(material)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                usage = Usage(key, True, 0, *self._tokens(hit))
                self._record(usage)
                return hit, usage
        started = time.perf_counter()
        attempt = 0
        while True:
            attempt += 1
            try:
                with self._lock:
                    self.sent += 1
                response, n_in, n_out = send()
            except RequestFailed as err:
                if err.retryable and attempt < self.retry.max_attempts:
                    with self._lock:
                        wait = self.retry.delay(attempt, self._rng, err.retry_after)
                    time.sleep(wait)
                    continue
                usage = Usage(key, False, attempt, seconds=time.perf_counter() - started,
                              error=f"{err.reason} (after {attempt} attempt{'s' if attempt > 1 else ''})")
                self._record(usage)
                return None, usage
            break
        if self.cache is not None:
            self.cache.put(key, {"body": response, "input_tokens": n_in, "output_tokens": n_out}, material)
        usage = Usage(key, False, attempt, n_in, n_out,
                      (n_in * self.price_in_per_million + n_out * self.price_out_per_million) / 1e6,
                      time.perf_counter() - started)
        self._record(usage)
        return {"body": response, "input_tokens": n_in, "output_tokens": n_out}, usage

    @staticmethod
    def _tokens(hit: Any) -> tuple[int, int]:
        return int(hit.get("input_tokens", 0) or 0), int(hit.get("output_tokens", 0) or 0)

    def _record(self, usage: Usage) -> None:
        with self._lock:
            self.usages.append(usage)

    def map(self, fn: Callable[[T], R], items: Iterable[T], progress: Callable[[], None] | None = None) -> list[R]:
        """``[fn(x) for x in items]`` with at most ``max_concurrency`` running at once, in order."""
        items = list(items)
        if self.max_concurrency <= 1 or len(items) <= 1:
            out = []
            for x in items:
                out.append(fn(x))
                if progress:
                    progress()
            return out

        def run(x: T) -> R:
            r = fn(x)
            if progress:
                progress()
            return r

        with ThreadPoolExecutor(max_workers=self.max_concurrency) as pool:
            return list(pool.map(run, items))

    # -- plain JSON over HTTP -------------------------------------------------

    def api_key(self) -> str | None:
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise MissingKey(self.api_key_env)
        return key

    def post_json(self, path: str, body: dict[str, Any]) -> Any:
        """POST ``body`` to ``base_url + path`` once, within the deadline; raise :class:`RequestFailed`."""
        headers = {"Content-Type": "application/json"}
        key = self.api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = self.base_url.rstrip("/") + path
        deadline = time.monotonic() + self.retry.deadline
        try:
            with httpx.Client(timeout=httpx.Timeout(self.retry.deadline)) as http, \
                    http.stream("POST", url, json=body, headers=headers) as resp:
                chunks: list[bytes] = []
                for chunk in resp.iter_bytes():
                    chunks.append(chunk)
                    if time.monotonic() > deadline:
                        raise RequestFailed(f"deadline of {self.retry.deadline:g}s passed while reading the body",
                                            retryable=True)
                status = resp.status_code
                retry_after = parse_retry_after(resp.headers.get("retry-after"))
        except httpx.TimeoutException:
            raise RequestFailed(f"timed out after {self.retry.deadline:g}s", retryable=True) from None
        except httpx.TransportError as exc:
            raise RequestFailed(f"connection error: {type(exc).__name__}", retryable=True) from None
        if status >= 400:
            raise RequestFailed(f"HTTP {status}", status=status, retryable=status in RETRY_STATUS,
                                retry_after=retry_after)
        raw = b"".join(chunks)
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise RequestFailed("the response is not valid JSON", status=status) from None

    # -- accounting -----------------------------------------------------------

    def summary(self) -> dict[str, float]:
        """Totals over every request so far."""
        u = self.usages
        return {
            "requests": len(u),
            "sent": sum(1 for x in u if not x.cached),
            "cached": sum(1 for x in u if x.cached),
            "failed": sum(1 for x in u if x.error),
            "attempts": sum(x.attempts for x in u),
            "input_tokens": sum(x.input_tokens for x in u),
            "output_tokens": sum(x.output_tokens for x in u),
            "cost_usd": sum(x.cost_usd for x in u),
        }

