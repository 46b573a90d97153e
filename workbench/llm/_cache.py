"""On-disk response cache keyed by the whole request (never by credentials).

A key is the SHA-256 of the canonical JSON of the request material (what decides the answer that the client can
know: base URL, endpoint path, model, the whole body, the judge's prompt version); a value is the parsed JSON
response. Each entry stores its request and a SHA-256 of its response: an entry whose request does not hash to
its key, or whose response does not match its checksum (edited by hand, written by another program), is never
served -- it counts as :attr:`DiskCache.mismatched` and the request is asked again. A cache that cannot be
written (read-only, a full disk) loses no answer: :meth:`DiskCache.put` says why it could not store one, and the
run goes on. Each entry is one file written to a
temporary name and renamed into place, so a reader never sees half an entry and two
processes (or Ray workers) can share a cache. Entries are not ``fsync``-ed one by one (that cost
a disk flush per answer on the hot path): a machine crash can at worst leave an empty or partial
file, which reads as a miss -- the request is asked again, never answered wrongly.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

from workbench._util.atomic import atomic_write


def request_key(material: Any) -> str:
    """Stable hash of a JSON-serialisable request description."""
    blob = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def response_digest(response: Any) -> str:
    """SHA-256 of a response's canonical JSON (what an entry's ``response_sha256`` holds)."""
    blob = json.dumps(response, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class DiskCache:
    """A directory of ``ab/abcdef....json`` files, one per request."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        #: entries found whose request or response did not match (never served)
        self.mismatched = 0
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        """The directory only (a Ray worker's copy counts its own mismatches; a lock does not travel)."""
        return {"directory": self.directory}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["directory"])  # type: ignore[misc]

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Any | None:
        """The response stored for ``key``, or None: no entry, an unreadable one, or one that does not match (its
        request does not hash to ``key``, its response does not match its checksum; counted in
        :attr:`mismatched`)."""
        path = self._path(key)
        try:
            with open(path, encoding="utf-8") as fh:
                entry = json.load(fh)
        except (OSError, ValueError, RecursionError):  # missing, unreadable, half-written, not JSON
            return None
        if not isinstance(entry, dict) or "response" not in entry:
            return None
        try:
            matches = (request_key(entry.get("request")) == key
                       and entry.get("response_sha256") == response_digest(entry["response"]))
        except (TypeError, ValueError, RecursionError):
            matches = False
        if not matches:
            with self._lock:
                self.mismatched += 1
            return None
        return entry["response"]

    def put(self, key: str, response: Any, request: Any = None) -> str | None:
        """Store ``response`` for ``key`` with its ``request``; None when stored, else why it could not be (a
        read-only directory, a full disk): the caller keeps the answer and says so."""
        blob = json.dumps({"request": request, "response": response, "response_sha256": response_digest(response)},
                          ensure_ascii=False)
        try:
            atomic_write(self._path(key), lambda tmp: tmp.write_text(blob, encoding="utf-8"))
        except OSError as err:
            return f"{err.strerror or type(err).__name__}: {self.directory}"
        return None

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*/*.json")) if self.directory.exists() else 0


__all__ = ["DiskCache"]
