"""The one client layer every judge, compressor and draft client goes through.

* cache: a request whose response is cached is never sent (and needs no key). Only
  *usable* answers are cached: the caller's ``check`` says whether a response is usable,
  and an unusable one is retried like a transient error and, if it stays unusable, returned
  with its reason but never stored, so the next run asks again. ``refresh`` ignores the
  cache when reading; ``offline`` sends nothing and answers a miss with "not in cache";
* retries: 429, 5xx, connection errors, timeouts and unusable answers are retried with
  exponential backoff and full jitter (seeded), honouring ``Retry-After``, up to
  ``retry.max_attempts`` attempts;
* deadlines: each attempt has a wall-clock limit (``retry.deadline``) that also covers a
  body that starts and then stalls; a whole run may have a wall-clock budget (its
  :class:`~workbench.llm.RunAccount`'s ``deadline``) after which nothing more is sent and
  every remaining request fails with reason "deadline";
* concurrency: at most ``max_concurrency`` requests are in flight at once across every
  thread that uses the client (a semaphore), and :meth:`LLMClient.map` fans out;
* accounting: one :class:`Usage` record per request (tokens, cost, attempts, cached) in the run's
  :class:`~workbench.llm.RunAccount`, whose ``on_event`` hears each finished request and each retry (for
  progress reporting). A caller gives the client a run's account and limits with :meth:`LLMClient.running`; it
  sets none of the client's fields.

API keys are read from the environment by name only when a request is actually sent;
they are put in a header and never into the cache, a log, a ``Usage`` or an error. A
server on the loopback interface (a local vLLM, llama.cpp or Ollama) needs no key.
"""

from __future__ import annotations

import json
import os
import random
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

import httpx

from workbench._util.token_counts import token_count
from workbench.llm._account import RunAccount, Usage
from workbench.llm._cache import DiskCache, request_key

T = TypeVar("T")
R = TypeVar("R")

_BEARER = re.compile(r"Bearer\s+[^\s\"',;]+", re.IGNORECASE)
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})


class RequestFailed(Exception):
    """A request that could not be completed; ``reason`` is safe to record (no secrets). ``unusable``: the
    server answered, but nothing a judge can read (it counts towards the run's fail fast)."""

    def __init__(self, reason: str, *, status: int | None = None, retryable: bool = False,
                 retry_after: float | None = None, unusable: bool = False, refused: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.unusable = unusable
        self.refused = refused  # no connection could be made (nothing listening, no such host)


class MissingKey(RequestFailed):
    def __init__(self, env: str) -> None:
        super().__init__(f"no API key: set the environment variable {env}")
        self.env = env


def redact_url(url: str) -> str:
    """``url`` without its user information (``http://user:pass@host`` -> ``http://host``): what is stored in a
    cache file, a key or a message. The request itself still carries it (as HTTP Basic authentication)."""
    scheme, sep, rest = url.partition("://")  # by hand: a URL urllib cannot parse ("http://[::1") is redacted too
    if not sep:
        return url
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    netloc = rest[:cut]
    return f"{scheme}://{netloc.rpartition('@')[2]}{rest[cut:]}" if "@" in netloc else url


def is_loopback(url: str) -> bool:
    """Whether ``url`` points at this machine's loopback interface (127.0.0.0/8, ::1, localhost)."""
    import ipaddress
    from urllib.parse import urlsplit

    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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


def error_message(raw: bytes, key: str | None = None, limit: int = 160) -> str:
    """What an error body says, in one short line: the JSON ``detail`` / ``error`` / ``message``, or the text.

    Control characters are removed and the API key, if the server echoed it, is masked.
    """
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        text = raw.decode("utf-8", errors="replace")
    else:
        text = str(data)
        if isinstance(data, dict):
            for name in ("detail", "error", "message"):
                value = data.get(name)
                if isinstance(value, dict):
                    value = value.get("message", value)
                if isinstance(value, list) and value and isinstance(value[0], dict):
                    value = "; ".join(str(v.get("msg", v)) for v in value)
                if value:
                    text = str(value)
                    break
    text = "".join(c if c.isprintable() else " " for c in text).strip()
    if key:
        text = text.replace(key, "***")
    return text[:limit] + ("..." if len(text) > limit else "")


#: the deepest nesting of JSON arrays and objects an answer may have; an API's answer is a few levels deep, and a
#: deeper one (a 200k-deep array) is an unusable answer, never a crash of the run
MAX_ANSWER_DEPTH = 64


def nesting_depth(value: Any, limit: int = MAX_ANSWER_DEPTH) -> int:
    """How deeply ``value``'s lists and dicts nest (a scalar: 0), counted without recursion and stopping at
    ``limit + 1``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        elif not isinstance(item, list):
            continue
        depth += 1
        if depth > limit:
            return depth
        deepest = max(deepest, depth)
        stack.extend((v, depth) for v in item if isinstance(v, (list, dict)))
    return deepest


def reported_model(stored: Any) -> str | None:
    """The model a stored answer says made it (``body.model``), or None."""
    body = stored.get("body") if isinstance(stored, dict) else None
    model = body.get("model") if isinstance(body, dict) else None
    return model[:200] if isinstance(model, str) else None


#: seconds a run keeps trying a server it cannot connect to (a local server still starting) before it stops
REFUSED_GRACE = 10.0


def unreachable(url: str, exc: BaseException) -> RequestFailed:
    """The failure for a connection that could not be made, naming the address (never its user information):
    "nothing is listening on 127.0.0.1:8000" for a refused connection. Retried until ``REFUSED_GRACE``."""
    from urllib.parse import urlsplit

    public = redact_url(url)
    try:
        parts = urlsplit(public)
        where = parts.netloc or public
        if parts.port is None and parts.hostname:
            where += ":443" if parts.scheme == "https" else ":80"
    except ValueError:
        where = public
    detail = " ".join(str(exc).split())[:120] or type(exc).__name__
    if "refused" in detail.lower():
        return RequestFailed(f"nothing is listening on {where} (connection refused)", retryable=True, refused=True)
    return RequestFailed(f"could not connect to {where} ({detail})", retryable=True, refused=True)


def not_an_answer(status: int, headers: Mapping[str, str], raw: bytes, key: str | None = None) -> RequestFailed:
    """The failure for a response that is no API answer at all: a redirect (``HTTP 30x``, with where it points),
    or a success whose body is not JSON (a web page on the port, a base URL without the API's path). Neither is
    retried: the same address gives the same answer. The message says what came back and what was expected."""
    if 300 <= status < 400:
        where = headers.get("location") or "nowhere (no Location header)"
        return RequestFailed(f"HTTP {status}: the server redirects to {where}; an API answer (JSON) was expected: "
                             "give the address it redirects to as the base URL", status=status, unusable=True)
    kind = headers.get("content-type") or "no content type"
    said = error_message(raw, key, limit=60)
    return RequestFailed(f"HTTP {status} with {kind}" + (f" ({said!r})" if said else " (an empty body)")
                         + ", not the API's JSON answer: is the base URL the API's (for an OpenAI-compatible "
                         "server, usually ending in /v1)?", status=status, unusable=True)


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
    #: read nothing cached before this client existed (answers are still written, and reused within the run)
    refresh: bool = False
    #: send nothing: a request not in the cache fails with reason "not in cache"
    offline: bool = False
    #: the largest response body read (bytes); a larger one fails its request, unread and uncached
    max_response_bytes: int = 16 * 2**20
    #: seconds of failing connections, none made since, after which the run stops sending (a server still starting)
    refused_grace: float = REFUSED_GRACE

    @property
    def public_url(self) -> str:
        """The base URL as stored and shown: without user information (a password in it never reaches disk)."""
        return redact_url(self.base_url)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._lock = threading.Lock()
        self._in_flight = threading.BoundedSemaphore(max(1, self.max_concurrency))
        self._key_locks: dict[str, threading.Lock] = {}
        self._written: set[str] = set()  # keys cached by this client (``refresh`` still reads these)
        self._failed_now: dict[str, tuple[Any, str]] = {}  # failures of this run, shared by identical requests
        self.account = RunAccount()  # the run's limits and accounting (running() hands it another)
        self._pool: httpx.Client | None = None
        self._shared: dict[str, Any] = {}
        self._stop = threading.Event()  # set by stop(): nothing more is sent, waits end at once
        self._tripped: str | None = None  # why the run stopped sending (fail fast), once it did
        self._streak: tuple[str, int] = ("", 0)  # the current run of unusable answers of one kind
        self._usable = 0  # usable answers so far
        self._not_before: tuple[float, str] | None = None  # the server asked to wait past what the run allows
        self._refused_since: float | None = None  # when connections started failing (none has succeeded since)

    # -- a copy for another process (a Ray worker) ---------------------------------

    def __getstate__(self) -> dict[str, Any]:
        """The configuration, without what belongs to this process: locks, connections, the accounting so far,
        the progress callback; the run's limits travel, its deadline as the seconds left (clocks differ between
        machines)."""
        state = {f.name: getattr(self, f.name) for f in fields(self)}
        state["_limits"] = (self.account.remaining(), self.account.fail_fast_after)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        left, fail_fast_after = state.pop("_limits")
        for name, value in state.items():
            setattr(self, name, value)
        self.__post_init__()
        self.account = RunAccount(deadline=left, fail_fast_after=fail_fast_after)

    # -- a run ----------------------------------------------------------------------

    @property
    def usages(self) -> list[Usage]:
        """The requests of the current run (its account's)."""
        return self.account.usages

    @property
    def sent(self) -> int:
        """Attempts of the current run that reached the network (cache hits are not sent)."""
        return self.account.sent

    def record(self, usages: Iterable[Usage]) -> None:
        """Requests a copy of this client made elsewhere (a Ray worker) into the current run's accounting."""
        with self._lock:
            self.account.add(usages)

    @contextmanager
    def running(self, account: RunAccount) -> Iterator[RunAccount]:
        """Run with ``account``'s limits (deadline, fail fast, progress) and accounting, then go back to the
        account before: the one way a caller sets run-level state."""
        previous = self.account
        with self._lock:
            self.account = account
            self._tripped, self._streak, self._usable, self._not_before = None, ("", 0), 0, None
            self._refused_since = None
        try:
            yield account
        finally:
            self.account = previous

    def _http(self) -> httpx.Client:
        """The one HTTP client of this client, made on first use: its connections are kept and reused (an
        ``httpx.Client`` per request cost a new TLS context, ~20 ms of CPU, each time). httpx clients are safe to
        share between threads; up to ``max_concurrency`` connections stay open."""
        with self._lock:
            if self._pool is None:
                n = max(1, self.max_concurrency)
                self._pool = httpx.Client(limits=httpx.Limits(max_connections=n, max_keepalive_connections=n))
            return self._pool

    def shared(self, name: str, make: Callable[[], T]) -> T:
        """An object made once per client and shared by every thread (the ``openai`` SDK, whose own HTTP
        client then pools its connections as :meth:`post_json`'s does)."""
        with self._lock:
            if name not in self._shared:
                self._shared[name] = make()
            return self._shared[name]

    def stop(self) -> None:
        """Send nothing more: every request not yet answered fails with reason ``stopped`` at its next step
        (waits between attempts end at once; an attempt in flight is abandoned). For SIGTERM and Ctrl-C."""
        self._stop.set()

    def close(self) -> None:
        """Close the pooled connections (a later request opens new ones)."""
        with self._lock:
            pool, self._pool = self._pool, None
            shared = list(self._shared.values())
            self._shared.clear()
        if pool is not None:
            pool.close()
        for obj in shared:  # the openai SDK's own HTTP client
            close = getattr(obj, "close", None)
            if callable(close):
                close()

    def __del__(self) -> None:
        """A client dropped without :meth:`close` (a judge made in a notebook cell) still closes its connections,
        so no socket is left for the interpreter to warn about."""
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit anything may be gone already
            pass

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the generic path -----------------------------------------------------

    def cached_call(self, material: Any, send: Callable[[], tuple[Any, int, int]],
                    check: Callable[[Any], str | None] | None = None) -> tuple[Any, Usage]:
        """Return the cached response for ``material`` or call ``send`` with retries and cache it.

        ``send`` returns (json response, input tokens, output tokens) or raises
        :class:`RequestFailed`; ``check(json response)`` returns None when the answer is
        usable, else the reason. A final failure is returned as ``(None, usage)`` with
        ``usage.error`` set, never raised, so one bad request does not lose a batch; an answer
        that stayed unusable is returned as ``(response, usage)`` with ``usage.error`` set
        (the caller may take what is usable in it) and is not cached. Identical requests run one
        at a time: the second is answered by the first's cached answer, or shares its failure
        for the rest of this client's life (nothing is sent twice in one run; the next run asks again).
        """
        key = request_key(material)
        with self._lock:
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:  # one identical request at a time: the second asks the cache after the first answered
            return self._cached_call(key, material, send, check)

    def _cached_call(self, key: str, material: Any, send: Callable[[], tuple[Any, int, int]],
                     check: Callable[[Any], str | None] | None) -> tuple[Any, Usage]:
        if self.cache is not None and (not self.refresh or key in self._written):
            hit = self.cache.get(key)
            if isinstance(hit, dict) and (check is None or check(hit.get("body")) is None):
                return hit, self._finish(Usage(key, True, 0, *self._tokens(hit), model=reported_model(hit)))
        if self.offline:
            return None, self._finish(Usage(key, False, 0, error="not in cache"))
        if key in self._failed_now:  # an identical request failed in this run: not asked twice, not cached
            response, error = self._failed_now[key]
            return response, self._finish(Usage(key, False, 0, error=error))
        started = time.perf_counter()
        attempt = 0
        retries: list[str] = []
        unusable: tuple[dict[str, Any], str] | None = None
        while True:
            remaining = self._remaining()
            if remaining is not None and remaining <= 0:
                return self._failed(key, "deadline", attempt, started, retries, unusable)
            halt = self._halted()
            if halt is not None:
                return self._failed(key, halt, attempt, started, retries, unusable)
            attempt += 1
            try:
                halt = self._slot()  # a slot of max_concurrency, held until this attempt's sending ends
                if halt is not None:
                    return self._failed(key, halt, attempt - 1, started, retries, unusable)
                with self._lock:
                    self.account.sent += 1
                response, n_in, n_out = self._bounded(send)  # gives the slot back when the sending ends
                if nesting_depth(response) > MAX_ANSWER_DEPTH:
                    raise RequestFailed(f"unusable answer: JSON nested deeper than {MAX_ANSWER_DEPTH} levels",
                                        retryable=True, unusable=True)
                reason = check(response) if check is not None else None
                if reason is not None:
                    unusable = ({"body": response, "input_tokens": n_in, "output_tokens": n_out}, reason)
                    self._unusable(reason)
                    raise RequestFailed(f"unusable answer: {reason}", retryable=True)
            except RequestFailed as err:
                if err.unusable:  # a web page, a redirect: every request of the run would get the same
                    self._unusable(err.reason)
                self._connected(not err.refused, err.reason)
                if err.retry_after is not None and self._too_long(err.retry_after):
                    said = f"server asks to retry in {err.retry_after:g} s"
                    with self._lock:
                        self._not_before = (time.monotonic() + err.retry_after, said)
                    return self._failed(key, said, attempt, started, retries, unusable)
                if err.retryable and attempt < self.retry.max_attempts and self._halted() is None:
                    retries.append(err.reason)
                    self._emit("retry", err.reason)
                    with self._lock:
                        wait = self.retry.delay(attempt, self._rng, err.retry_after)
                    remaining = self._remaining()
                    if remaining is not None and wait >= remaining:
                        return self._failed(key, "deadline", attempt, started, retries, unusable)
                    self._stop.wait(wait)  # a stop ends the wait at once
                    continue
                return self._failed(key, self._halted() or err.reason, attempt, started, retries, unusable)
            break
        self._connected(True)
        with self._lock:
            self._usable += 1
            self._streak = ("", 0)
        stored = {"body": self._scrub(response), "input_tokens": n_in, "output_tokens": n_out}
        not_stored = None
        if self.cache is not None:
            not_stored = self.cache.put(key, stored, material)  # a cache that cannot be written loses no answer
            if not_stored is None:
                self._written.add(key)
        usage = Usage(key, False, attempt, n_in, n_out,
                      (n_in * self.price_in_per_million + n_out * self.price_out_per_million) / 1e6,
                      time.perf_counter() - started, retries=tuple(retries), model=reported_model(stored),
                      uncached=not_stored)
        return stored, self._finish(usage)

    # -- faults: a stop, a server that answers nothing usable, one that asks to wait, one that never finishes --

    def _halted(self) -> str | None:
        """Why nothing more may be sent now, or None."""
        if self._stop.is_set():
            return "stopped before an answer (SIGTERM or interrupt)"
        if self._tripped is not None:
            return self._tripped
        nb = self._not_before
        if nb is not None and time.monotonic() < nb[0]:
            return nb[1]
        return None

    def _too_long(self, seconds: float) -> bool:
        """A server's Retry-After the run cannot honour: past the longest wait between attempts, or the deadline."""
        remaining = self._remaining()
        return seconds > self.retry.max_delay or (remaining is not None and seconds >= remaining)

    def _connected(self, ok: bool, reason: str = "") -> None:
        """Count a connection made (``ok``) or not; connections failing for ``refused_grace`` seconds with
        none made since stop the run: nothing more is sent (a server that is not running is not asked for a
        minute)."""
        with self._lock:
            if ok:
                self._refused_since = None
                return
            now = time.monotonic()
            if self._refused_since is None:
                self._refused_since = now
            elif now - self._refused_since >= self.refused_grace and self._tripped is None:
                self._tripped = (f"stopped: {reason} for {now - self._refused_since:.0f} s; is the server running "
                                 "at that address?")

    def _unusable(self, reason: str) -> None:
        """Count an unusable answer; after ``fail_fast_after`` of one kind in a row with no usable answer yet in
        the run, trip: nothing more is sent."""
        kind = reason.split(" for token")[0][:60]
        with self._lock:
            same, n = self._streak
            n = n + 1 if same == kind else 1
            self._streak = (kind, n)
            limit = self.account.fail_fast_after
            if limit and n >= limit and self._usable == 0 and self._tripped is None:
                self._tripped = (f"stopped after {n} unusable answers in a row and none usable ({kind}): the server "
                                 "answers nothing usable (--no-fail-fast to keep asking)")

    def _slot(self) -> str | None:
        """Take one of the ``max_concurrency`` slots (None), waiting while all are taken; or why nothing may be
        sent now (a stop, the deadline, fail fast), without a slot. :meth:`_bounded` gives the slot back."""
        while not self._in_flight.acquire(timeout=0.05):
            remaining = self._remaining()
            if remaining is not None and remaining <= 0:
                return "deadline"
            if (halt := self._halted()) is not None:
                return halt
        halt = self._halted()  # the signal may have come while this request waited for a slot
        if halt is not None:
            self._in_flight.release()
        return halt

    def _bounded(self, send: Callable[[], T]) -> T:
        """``send()`` within the attempt's time, whatever the server does (a status line sent one byte at a time
        never trips httpx's per-read timeout): run in a daemon thread, abandoned when the time is up or the client
        stops. The thread gives back the slot :meth:`_slot` took when its sending ends, not when it is abandoned:
        an abandoned attempt still holds a connection, so it still counts against ``max_concurrency`` until the
        connection is closed (:meth:`_drop_connections` closes it at once)."""
        limit = self.attempt_timeout()
        box: dict[str, Any] = {}
        done = threading.Event()

        def run() -> None:
            try:
                box["value"] = send()
            except BaseException as exc:  # noqa: BLE001 - carried to the caller's thread
                box["error"] = exc
            finally:
                done.set()
                self._in_flight.release()

        threading.Thread(target=run, daemon=True, name="workbench-request").start()
        remaining = self._remaining()
        grace = 0.5 if remaining is None or remaining > limit + 0.5 else 0.0  # never past the run's deadline
        end = time.monotonic() + limit + grace  # the transport's own timeout (limit) normally fires first
        while not done.wait(min(0.1, max(0.0, end - time.monotonic()))):
            if self._stop.is_set():
                self._drop_connections()
                raise RequestFailed("stopped before an answer (SIGTERM or interrupt)")
            if time.monotonic() >= end:
                self._drop_connections()
                raise RequestFailed(f"timed out after {limit:g}s (the answer never finished)", retryable=True)
        if "error" in box:
            error = box["error"]
            if isinstance(error, RuntimeError) and "client has been closed" in str(error):
                # another attempt's time ran out and the client's connections were dropped (_drop_connections)
                # while this one was being sent through them: a failed attempt, tried again on new connections
                raise RequestFailed("the connection was closed under this request (another request timed out)",
                                    retryable=True) from None
            raise error
        return box["value"]

    def _drop_connections(self) -> None:
        """Give up this client's connections (an abandoned attempt holds one): later requests open new ones, and
        closing the old ones (in the background: a close may wait for the stuck read) ends the abandoned read."""
        with self._lock:
            pool, self._pool = self._pool, None
            shared = list(self._shared.values())
            self._shared.clear()

        def close() -> None:
            for obj in ([pool] if pool is not None else []) + shared:
                try:
                    obj.close()
                except Exception:  # noqa: BLE001 - a connection already broken
                    pass

        threading.Thread(target=close, daemon=True, name="workbench-close").start()

    def _scrub(self, value: Any) -> Any:
        """``value`` with the API key and any ``Bearer`` credential replaced by ``***``: a server that echoes the
        request's headers must not put the key into the cache."""
        key = None
        try:
            key = self.api_key()
        except MissingKey:
            pass
        if isinstance(value, str):
            out = value.replace(key, "***") if key else value
            return _BEARER.sub("Bearer ***", out)
        if isinstance(value, dict):
            return {self._scrub(k) if isinstance(k, str) else k: self._scrub(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._scrub(v) for v in value]
        return value

    def attempt_timeout(self) -> float:
        """Seconds the next attempt may take: the per-attempt limit, or less when the run budget ends sooner."""
        remaining = self._remaining()
        return self.retry.deadline if remaining is None else max(0.001, min(self.retry.deadline, remaining))

    def _remaining(self) -> float | None:
        return self.account.remaining()

    def _failed(self, key: str, reason: str, attempts: int, started: float, retries: list[str],
                unusable: tuple[dict[str, Any], str] | None) -> tuple[Any, Usage]:
        what = f"{reason} (after {attempts} attempt{'s' if attempts != 1 else ''})" if attempts else reason
        usage = Usage(key, False, attempts, seconds=time.perf_counter() - started, error=what, retries=tuple(retries))
        response = unusable[0] if unusable else None
        self._failed_now[key] = (response, what)
        return response, self._finish(usage)

    def _finish(self, usage: Usage) -> Usage:
        with self._lock:
            self.account.usages.append(usage)
        self._emit("done", usage)
        return usage

    def _emit(self, kind: str, what: object) -> None:
        self.account.emit(kind, what)

    @staticmethod
    def _tokens(hit: Any) -> tuple[int, int]:
        return int(hit.get("input_tokens", 0) or 0), int(hit.get("output_tokens", 0) or 0)

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

        from workbench._util.executors import thread_map

        # SIGTERM or Ctrl-C while waiting: stop sending, do not wait for the rest
        return thread_map(run, items, self.max_concurrency, on_stop=self.stop, what="requests")

    # -- plain JSON over HTTP -------------------------------------------------

    def api_key(self) -> str | None:
        """The key from ``api_key_env``; None when no key is configured or the server is on loopback without one."""
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            if is_loopback(self.base_url):
                return None  # a local server (vLLM, llama.cpp, Ollama) takes no key
            raise MissingKey(self.api_key_env)
        return key

    def check_key(self) -> None:
        """Raise :class:`MissingKey` now if a request would need a key that is not set (nothing is sent)."""
        if not self.offline:
            self.api_key()

    def post_json(self, path: str, body: dict[str, Any]) -> Any:
        """POST ``body`` to ``base_url + path`` once, within the deadline; raise :class:`RequestFailed`."""
        headers = {"Content-Type": "application/json"}
        key = self.api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = self.base_url.rstrip("/") + path
        limit = self.attempt_timeout()
        deadline = time.monotonic() + limit
        try:
            with self._http().stream("POST", url, json=body, headers=headers, timeout=httpx.Timeout(limit)) as resp:
                chunks: list[bytes] = []
                size = 0
                too_big = RequestFailed(f"the response is larger than {self.max_response_bytes / 2**20:g} MiB "
                                        "(max_response_bytes): not read, not cached")
                declared = resp.headers.get("content-length")
                if declared and declared.isdigit() and int(declared) > self.max_response_bytes:
                    raise too_big
                for chunk in resp.iter_bytes():
                    size += len(chunk)
                    if size > self.max_response_bytes:
                        raise too_big
                    chunks.append(chunk)
                    if time.monotonic() > deadline:
                        raise RequestFailed(f"timed out after {limit:g}s while reading the body", retryable=True)
                status = resp.status_code
                retry_after = parse_retry_after(resp.headers.get("retry-after"))
                kind = resp.headers.get("content-type") or ""
                location = resp.headers.get("location")
        except httpx.TimeoutException:
            raise RequestFailed(f"timed out after {limit:g}s", retryable=True) from None
        except httpx.ConnectError as exc:
            raise unreachable(url, exc) from None
        except httpx.TransportError as exc:
            raise RequestFailed(f"connection error: {type(exc).__name__}", retryable=True) from None
        raw = b"".join(chunks)
        if status >= 400:
            said = error_message(raw, key)
            raise RequestFailed(f"HTTP {status}" + (f": {said}" if said else ""), status=status,
                                retryable=status in RETRY_STATUS, retry_after=retry_after)
        if status >= 300 or (kind and "json" not in kind.lower()):  # a redirect, a web page: no answer
            raise not_an_answer(status, {"content-type": kind, **({"location": location} if location else {})},
                                raw, key)
        try:
            return json.loads(raw)  # NaN / Infinity are read: the judges' strict checks decide what they mean
        except (json.JSONDecodeError, UnicodeDecodeError):  # JSON promised, but cut or garbled: may be transient
            raise RequestFailed("the response is not valid JSON", status=status, retryable=True) from None
        except RecursionError:  # a 200k-deep array: no API answers so
            raise RequestFailed(f"unusable answer: JSON nested deeper than {MAX_ANSWER_DEPTH} levels", status=status,
                                retryable=True, unusable=True) from None

    # -- accounting -----------------------------------------------------------

    def summary(self) -> dict[str, float]:
        """Totals over every request of the current run (:meth:`RunAccount.summary`)."""
        return self.account.summary()


__all__ = ["LLMClient", "MissingKey", "RequestFailed", "token_count", "RetryPolicy"]
