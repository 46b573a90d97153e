"""Progress of a long job on standard error: a bar on a terminal, plain periodic lines in a log.

A bar is drawn only when the stream is a terminal; otherwise a line such as
``judge jev: 40/129 requests, 12 from cache, 2 retries, 1 failed (12.3 s)`` is written at
most every ``interval`` seconds and once at the end, so logs hold no carriage returns.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO


class Progress:
    """Counts finished items (and, for requests, cache hits, retries and failures); thread-safe."""

    def __init__(self, total: int, desc: str, unit: str = "requests", *, stream: TextIO | None = None,
                 interval: float = 5.0, enabled: bool = True) -> None:
        self.total, self.desc, self.unit = total, desc, unit
        self.stream = stream or sys.stderr
        self.interval, self.enabled = interval, enabled
        self.done = self.cached = self.retries = self.failed = 0
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._last = self._started
        self._bar: Any = None
        if enabled and _is_tty(self.stream):
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=desc, unit=unit.rstrip("s"), file=self.stream, dynamic_ncols=True)

    def event(self, kind: str, what: object) -> None:
        """A client event: ``("done", Usage)`` or ``("retry", reason)`` (a ``RunAccount``'s ``on_event``)."""
        if kind == "retry":
            with self._lock:
                self.retries += 1
            self._refresh()
            return
        self.advance(cached=bool(getattr(what, "cached", False)), failed=bool(getattr(what, "error", None)))

    def advance(self, n: int = 1, *, cached: bool = False, failed: bool = False) -> None:
        with self._lock:
            self.done += n
            self.cached += n if cached else 0
            self.failed += n if failed else 0
        if self._bar is not None:
            self._bar.update(n)
        self._refresh()

    def line(self) -> str:
        total = max(self.total, self.done)
        return (f"{self.desc}: {self.done}/{total} {self.unit}, {self.cached} from cache, {self.retries} "
                f"retr{'y' if self.retries == 1 else 'ies'}, {self.failed} failed "
                f"({time.monotonic() - self._started:.1f} s)")

    def _refresh(self) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.set_postfix_str(f"cache {self.cached}, retries {self.retries}, failed {self.failed}",
                                      refresh=False)
            return
        now = time.monotonic()
        with self._lock:
            due = now - self._last >= self.interval
            if due:
                self._last = now
        if due:
            print(self.line(), file=self.stream, flush=True)

    def close(self) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.close()
        else:
            print(self.line(), file=self.stream, flush=True)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


__all__ = ["Progress"]
