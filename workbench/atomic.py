"""Atomic writing: a file appears whole, with the mode a plain ``open`` would give, or not at all.

One writer for every file the workbench writes: table files (:mod:`workbench.tables`), the adapters' exports,
the entries table, samples and adjudication files (:func:`write_jsonl`) and the LLM response cache.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


def current_umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux ``/proc``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: set and restore (not thread-safe, hence the /proc path first)
    os.umask(mask)
    return mask


def atomic_write(path: Path, write: Callable[[Path], object], *, durable: bool = False) -> None:
    """Call ``write(tmp)`` on a temporary sibling of ``path``, then move it into place (or remove it on failure).

    The file gets the mode a plain ``open(path, "w")`` would give (0644 under the usual umask
    022), not the 0600 of a temporary file, so co-workers can read what was written. With
    ``durable`` the temporary file is flushed to disk (``fsync``) before the move, so a crash
    of the machine cannot leave an empty file under the final name.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise named(err, path) from None
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o666 & ~current_umask())
        if durable:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as err:  # a full disk, a quota: the error names the file being written, not its temporary
        Path(tmp).unlink(missing_ok=True)
        raise named(err, path) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def named(err: OSError, path: Path) -> OSError:
    """``err`` as an ``OSError`` that names ``path`` (a write's error names no file, or only a temporary one);
    the workbench's one line reads ``No space left on device: PATH``."""
    out = OSError(err.errno, err.strerror or str(err), str(path))
    return out


def records_to_jsonl(records: Iterable[dict[str, Any]], path: Path) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for row in records:
            fh.write(json.dumps(row, ensure_ascii=False, allow_nan=False, default=str))
            fh.write("\n")


def write_jsonl(records: Iterable[dict[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write records as JSON lines, atomically (the file appears whole or not at all)."""
    path = Path(path)
    atomic_write(path, lambda p: records_to_jsonl(records, p))
    return path

