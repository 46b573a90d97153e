"""On-disk response cache keyed by the whole request (never by credentials).

A key is the SHA-256 of the canonical JSON of the request material (endpoint path,
model, body); a value is the parsed JSON response. Each entry is one file written to a
temporary name and renamed into place, so a reader never sees half an entry and two
processes (or Ray workers) can share a cache. Entries are not ``fsync``-ed one by one (that cost
a disk flush per answer on the hot path): a machine crash can at worst leave an empty or partial
file, which reads as a miss -- the request is asked again, never answered wrongly.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from workbench._util.atomic import atomic_write


def request_key(material: Any) -> str:
    """Stable hash of a JSON-serialisable request description."""
    blob = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class DiskCache:
    """A directory of ``ab/abcdef....json`` files, one per request."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Any | None:
        path = self._path(key)
        try:
            with open(path, encoding="utf-8") as fh:
                return json.load(fh)["response"]
        except (FileNotFoundError, json.JSONDecodeError, KeyError, UnicodeDecodeError):
            return None

    def put(self, key: str, response: Any, request: Any = None) -> None:
        blob = json.dumps({"request": request, "response": response}, ensure_ascii=False)
        atomic_write(self._path(key), lambda tmp: tmp.write_text(blob, encoding="utf-8"))

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*/*.json")) if self.directory.exists() else 0


__all__ = ["DiskCache", "request_key"]
