"""One run's accounting and limits: what a caller hands the client for a run, instead of setting its fields.

A :class:`RunAccount` holds the run's limits (a deadline in seconds for the whole run, how many unusable answers
of one kind in a row stop it, who hears each finished request) and what the run did (one
:class:`~workbench.llm.Usage` per request, the attempts that reached the network).
:meth:`workbench.llm.LLMClient.running` gives the client an account for the duration of a run; a Ray
worker's requests join the driver's account with :meth:`RunAccount.add`.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

__all__ = ["RunAccount", "Usage"]


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
    #: why each retry happened (status, timeout, unusable answer), in order
    retries: tuple[str, ...] = ()
    #: the model the answer says made it (its ``model`` field), when it says
    model: str | None = None
    #: why a usable answer could not be stored in the cache (a read-only cache): it is kept all the same
    uncached: str | None = None



#: unusable answers of one kind in a row, with no usable answer yet in the run, after which nothing more is sent
FAIL_FAST_AFTER = 20


@dataclass
class RunAccount:
    """A run's limits and its accounting (see the module docstring).

    ``deadline``: seconds the whole run may take from when the account is made (None: no limit);
    ``fail_fast_after``: stop sending after that many unusable answers of one kind in a row and none usable
    (0: never); ``on_event``: called with ``("done", Usage)`` as a request finishes and ``("retry", reason)``
    as one is retried. ``usages`` and ``sent`` are what the run did."""

    deadline: float | None = None
    fail_fast_after: int = FAIL_FAST_AFTER
    on_event: Callable[[str, object], None] | None = None
    usages: list[Usage] = field(default_factory=list)
    sent: int = 0

    def __post_init__(self) -> None:
        self._ends = None if self.deadline is None else time.monotonic() + self.deadline

    def remaining(self) -> float | None:
        """Seconds left of the run (None: no deadline)."""
        return None if self._ends is None else self._ends - time.monotonic()

    def emit(self, kind: str, what: object) -> None:
        if self.on_event is not None:
            self.on_event(kind, what)

    def add(self, usages: Iterable[Usage]) -> None:
        """Another client's requests (a Ray worker's) into this run's accounting."""
        for u in usages:
            self.usages.append(u)
            self.sent += 0 if u.cached else u.attempts

    def failures(self) -> Counter[str]:
        """Failed requests by reason (without the attempt count)."""
        return Counter(re.sub(r" \(after \d+ attempts?\)$", "", u.error) for u in self.usages if u.error)

    def summary(self) -> dict[str, float]:
        """Totals over every request of the run."""
        u = self.usages
        return {
            "requests": len(u),
            "sent": sum(1 for x in u if not x.cached),
            "cached": sum(1 for x in u if x.cached),
            "failed": sum(1 for x in u if x.error),
            "attempts": sum(x.attempts for x in u),
            "retries": sum(len(x.retries) for x in u),
            "input_tokens": sum(x.input_tokens for x in u),
            "output_tokens": sum(x.output_tokens for x in u),
            "cost_usd": sum(x.cost_usd for x in u),
        }
