"""The annotation store: append-only JSONL label files, safe for several labelers at once.

Labels live under ``<root>/labels/<annotator>.round<R>.jsonl``, one file per annotator and
round, one label per line (the ``labels`` table's columns). A label is never rewritten:
changing one appends a new line, and the latest line per (item, annotator, round, field)
wins while the history stays. Every write takes the store's exclusive lock (``labels/.store.lock``,
``filelock``) and writes whole lines (checking every byte was written) followed by ``fsync``,
so two processes adding at once never lose or interleave a line.

A batch (:meth:`AnnotationStore.add_many`: a Label Studio import, adjudicated labels) is all or nothing: before
any line is appended, a journal (``labels/.journal.json``, never committed: ``.gitignore`` names it) records, for
every label file the batch touches, its size before the batch, the bytes the batch will add, the file's identity
(device and inode; a file the batch makes is made, empty, before the journal is written) and a SHA-256 of at most
the last 64 KiB before that size. It is removed once every line is on disk. A batch interrupted in between
(SIGTERM, Ctrl-C, a full disk, a killed process) is rolled back -- at once when the process can, else by the next
writer that opens the store -- and until then readers read each file only up to the size the journal records:
nobody sees part of a batch.

The journal is checked before anything is rolled back: it may only name label files of its own store, by a plain
name, that are the very files the batch made or appended to (same identity, no shorter than before, longer by at
most what the batch added, the same bytes before its start). A journal that does not match -- hand-edited, copied
from another clone, or overtaken by later writes -- rolls back nothing: writers refuse with an error naming the
file and what to do (:class:`JournalMismatch`), and readers ignore its entries that do not match.

The store, not its caller, stamps ``labeled_at``; annotator names are checked
(:func:`check_annotator`), and values by the labels table's declaration. A crash in the middle of
a write can leave a torn last line: opening the store (and every append) moves it to a side file
``<file>.torn-<time>`` with a warning naming it, so reading works and the next label starts on a
clean line.

Nothing is read, repaired or written through a symbolic link: Git keeps links, so a committed
``labels/x.round1.jsonl -> ../../somefile`` reaches every clone. Every label, note, lock, holder, journal and side
file is opened with :func:`~workbench._util.atomic.open_own` (no link followed from the store's root down, a
regular file only); one that is a link, a FIFO or a directory, or sits in a linked ``labels/`` or ``notes/``, is
an error naming it, raised before anything in the store is changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import stat
import warnings
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import polars as pl
from filelock import FileLock

from workbench._util.atomic import NotOurs, check_own, open_own
from workbench.tables import _schema as schema
from workbench.tables._validation import check_record
from workbench.tables._vocabulary import LABEL_VALUES, check_annotator
from workbench.tables._labels import latest_labels
from workbench.tables._files import read_table

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class TornLineWarning(UserWarning):
    """A label file ended in a partial line (a crash mid-write); the fragment was moved aside."""


class JournalMismatch(schema.SchemaError):
    """The store's batch journal names a file it may not roll back (outside the store, replaced, grown past the
    batch, changed before the batch's start): nothing was rolled back and the journal was left for a person."""


_JOURNAL_VERSION = 2
_TAIL = 64 * 1024  # the bytes before a batch's start that the journal hashes
_LABEL_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.round[0-9]+\.jsonl")


def _safe_name(annotator: str) -> str:
    name = _SAFE.sub("_", annotator).strip("._")
    if not name:
        raise ValueError(f"annotator name {annotator!r} has no usable characters")
    return name


class AnnotationStore:
    """Append-only labels under ``path`` (for example ``annotations/``)."""

    def __init__(self, path: str | os.PathLike[str], *, read_only: bool = False) -> None:
        """Open the store; a writer rolls back a batch that was interrupted and moves any torn last line aside
        (under the store's lock). ``read_only`` (the reading verbs: ``agree``) takes no lock and repairs nothing,
        so a read-only mount or a full disk can be read: a torn last line is left where it is, skipped when read,
        and reported as what a writer would do; an interrupted batch is not read."""
        self.root = Path(path)
        self.dir = self.root / "labels"
        self.read_only = read_only
        if not self._check_tree():
            return
        if read_only:
            for file in sorted(self.dir.glob("*.jsonl")):
                torn = _torn_bytes(file, self.root)
                if torn:
                    warnings.warn(f"{file}: the last line was cut off ({torn} bytes); left as it is (read only) "
                                  "and skipped: the next writer moves it aside", TornLineWarning, stacklevel=2)
            return
        with self._lock():
            self._recover()
            for file in sorted(self.dir.glob("*.jsonl")):
                _move_torn_tail(file, self.root)

    def _check_tree(self) -> bool:
        """Whether the store has a ``labels/`` directory, after checking that it, ``notes/`` and every file of the
        store in them are plain (no symbolic link, FIFO or device: :class:`~workbench._util.atomic.NotOurs`
        naming the first that is not), before anything is read or repaired."""
        for sub in (self.dir, self.root / "notes"):
            if sub.is_symlink() or (sub.exists() and not sub.is_dir()):
                raise NotOurs("is a symbolic link or not a directory; a store's labels and notes live in plain "
                              "directories of it", file=str(sub))
            if not sub.is_dir():
                continue
            for file in sorted(sub.iterdir()):
                if file.name.endswith(".jsonl") or ".torn-" in file.name or file.name.startswith(".store.lock") \
                        or file.name == self.journal.name or file.name.endswith(".jsonl.lock"):
                    check_own(file, root=self.root)
        return self.dir.is_dir()

    def _lock(self) -> _StoreLock:
        """The store's one lock, held around every write and every repair (:class:`_StoreLock`: it says who holds
        it while a writer waits, and waits at most ``LOCK_WAIT`` seconds)."""
        if self.dir.is_symlink():
            raise NotOurs("is a symbolic link; a store's labels live in a plain directory of it", file=str(self.dir))
        self.dir.mkdir(parents=True, exist_ok=True)
        return _StoreLock(self.dir / ".store.lock", self.root)

    @property
    def journal(self) -> Path:
        """Where a batch being written records the files it touches (present only while one is written)."""
        return self.dir / ".journal.json"

    def _journal_entries(self) -> tuple[str, dict[str, dict[str, Any]]] | None:
        """The journal of a batch being written (or interrupted): the ``labeled_at`` its labels carry, and file
        name -> what it recorded of that file (``size`` before the batch, ``added``, ``created``, ``dev``/``ino``,
        ``tail_sha256``); None: no batch. A journal that is
        not this store's (not JSON, another version, a name that is not a plain label-file name, fields of the
        wrong type) is a :class:`JournalMismatch`."""
        try:
            fd = open_own(self.journal, os.O_RDONLY, root=self.root)
        except FileNotFoundError:
            return None
        except NotOurs:
            raise self._refusal("is not a regular file of the store (a symbolic link?)") from None
        try:
            with os.fdopen(fd, "rb") as fh:
                data = json.loads(fh.read().decode("utf-8"))
        except (ValueError, UnicodeDecodeError):  # written atomically, so never half; a hand-edited one is an error
            raise self._refusal("is not JSON") from None
        if not isinstance(data, dict) or data.get("version") != _JOURNAL_VERSION or \
                not isinstance(data.get("files"), dict) or not isinstance(data.get("labeled_at"), str):
            raise self._refusal(f"is not a batch journal of this version (JSON with 'version': {_JOURNAL_VERSION}, "
                                "'labeled_at' and 'files')")
        entries: dict[str, dict[str, Any]] = data["files"]
        for name, entry in entries.items():
            if not isinstance(name, str) or not _LABEL_FILE.fullmatch(name):
                raise self._refusal(f"names {name!r}, which is not a label file of this store (a plain name "
                                    "'<annotator>.round<R>.jsonl')")
            fields = ("size", "added", "dev", "ino")
            if not isinstance(entry, dict) or \
                    not all(type(entry.get(k)) is int and entry[k] >= 0 for k in fields) or \
                    not isinstance(entry.get("created"), bool) or not isinstance(entry.get("tail_sha256"), str):
                raise self._refusal(f"records {name!r} without its size, added bytes, identity and checksum")
        return data["labeled_at"], entries

    def _refusal(self, what: str) -> JournalMismatch:
        return JournalMismatch(f"the batch journal {what}; nothing was rolled back. Check the label files, then "
                               "remove the journal to keep them as they are", file=str(self.journal))

    def _journal_sizes(self) -> dict[str, int | None] | None:
        """file name -> the size a reader reads it to while a batch is written (None: a file the batch made, read
        as empty); None: no batch. Entries that do not match their file (:func:`_mismatch`, as a reader checks)
        are left out: a stale journal hides nothing."""
        try:
            journal = self._journal_entries()
        except JournalMismatch:
            return None
        if journal is None:
            return None
        stamp, entries = journal
        return {name: (None if e["created"] else e["size"]) for name, e in entries.items()
                if _mismatch(self.dir / name, e, stamp, checksum=False) is None}

    def _recover(self) -> None:
        """Roll back a batch whose writer died (call under the lock): every file it touched back to its size, once
        every entry is checked; else :class:`JournalMismatch` and nothing changes."""
        journal = self._journal_entries()
        if journal is None:
            return
        stamp, entries = journal
        removed = self._roll_back(entries, stamp)
        self.journal.unlink()
        warnings.warn(f"{self.journal}: a batch of labels was interrupted (a killed import?); rolled back: "
                      f"{removed} bytes removed from {len(entries)} file(s), none of its labels kept",
                      TornLineWarning, stacklevel=3)

    def _roll_back(self, entries: dict[str, dict[str, Any]], stamp: str) -> int:
        """Every file of a batch back to its size before it (a file the batch made is removed); the bytes removed.
        Every entry is checked first (``stamp``: the batch's ``labeled_at``): one that does not match raises
        :class:`JournalMismatch`, nothing removed."""
        for name, entry in entries.items():
            why = _mismatch(self.dir / name, entry, stamp, checksum=True)
            if why is not None:
                raise self._refusal(f"names {name}, which {why}")
        removed = 0
        for name, entry in entries.items():
            path = self.dir / name
            try:
                now = path.lstat().st_size
            except FileNotFoundError:
                continue
            if entry["created"]:
                path.unlink()
                removed += now
            elif now > entry["size"]:
                fd = open_own(path, os.O_WRONLY, root=self.root)
                try:
                    os.ftruncate(fd, entry["size"])
                    os.fsync(fd)
                finally:
                    os.close(fd)
                removed += now - entry["size"]
        return removed

    def file_for(self, annotator: str, round: int) -> Path:  # noqa: A002 - the labels table's name
        return self.dir / f"{_safe_name(annotator)}.round{int(round)}.jsonl"

    def add(self, *, item_id: str, annotator: str, round: int, field: str, value: str | None,  # noqa: A002
            note: str | None = None, question: str | None = None) -> dict[str, object]:
        """Append one label; returns the record written. ``question``: the data set's own question the annotator
        answered (kept with the label; None, SJC's agent question, is not written)."""
        check_annotator(annotator)
        record: dict[str, object] = {"item_id": str(item_id), "annotator": annotator, "round": int(round),
                                     "field": str(field), "value": None if value is None else str(value), "note": note,
                                     "labeled_at": datetime.now(timezone.utc).isoformat(timespec="microseconds")}
        if question is not None:
            record["question"] = question
        check_record(schema.LABELS, record)
        self._append(self.file_for(annotator, round), [record])
        return record

    def add_many(self, records: Iterable[dict[str, object]], *, adjudication: bool = False) -> int:
        """Append several labels as one batch: all of them or, if anything stops it, none (see the module
        docstring). Every record is checked before anything is written. Only ``adjudication`` may write under a
        reserved name (``RESERVED_ANNOTATORS``)."""
        by_file: dict[Path, list[dict[str, object]]] = {}
        now = datetime.now(timezone.utc).isoformat(timespec="microseconds")
        for r in records:
            rec: dict[str, Any] = {"note": None, **r, "labeled_at": now}  # the store's clock, never the input's
            check_annotator(rec.get("annotator"), reserved=adjudication)
            check_record(schema.LABELS, rec)
            by_file.setdefault(self.file_for(str(rec["annotator"]), int(rec["round"])), []).append(rec)
        if not by_file:
            return 0
        payloads = {path: _lines(recs) for path, recs in by_file.items()}
        with self._lock():
            self._recover()
            entries: dict[str, dict[str, Any]] = {}
            try:
                for path, payload in payloads.items():
                    _move_torn_tail(path, self.root)
                    entries[path.name] = _entry_before(path, len(payload), self.root)
                from workbench._util.atomic import atomic_write

                journal = {"version": _JOURNAL_VERSION, "pid": os.getpid(), "host": socket.gethostname(),
                           "labeled_at": now, "files": entries}
                atomic_write(self.journal, lambda tmp: tmp.write_text(json.dumps(journal), encoding="utf-8"),
                             durable=True)
                for path, payload in payloads.items():
                    _append_bytes(path, payload, self.root, sync=len(payloads) <= _FSYNC_FILES)
                if len(payloads) > _FSYNC_FILES:
                    os.sync()  # one flush of every file written, instead of one fsync each
            except BaseException:  # SIGTERM, Ctrl-C, a full disk: none of the batch stays
                self._roll_back(entries, now)
                self.journal.unlink(missing_ok=True)
                raise
            self.journal.unlink()  # the batch is whole: from here on it is read
        return sum(len(v) for v in by_file.values())

    def not_held(self, records: Sequence[dict[str, Any]],
                 current: pl.DataFrame | None = None) -> tuple[list[dict[str, Any]], int]:
        """The ``records`` the store does not hold as they are -- its latest label of that item, annotator, round
        and field has another value or note, or there is none -- and how many it holds already: adding what
        this returns makes importing one export twice add nothing. ``current``: :meth:`labels`, when the caller
        has read them already."""
        current = self.labels() if current is None else current
        if not current.height:
            return list(records), 0
        have = {(r["item_id"], r["annotator"], r["round"], r["field"]): (r["value"], r["note"]) for r in
                current.select("item_id", "annotator", "round", "field", "value", "note").iter_rows(named=True)}
        fresh = [r for r in records
                 if have.get((r["item_id"], r["annotator"], r["round"], r["field"])) != (r["value"], r.get("note"))]
        return fresh, len(records) - len(fresh)

    def _append(self, path: Path, records: Sequence[dict[str, object]]) -> None:
        self._write(path, _lines(records))

    def _write(self, path: Path, payload: bytes) -> None:
        with self._lock():
            self._recover()
            if path.parent.is_symlink():
                raise NotOurs("is a symbolic link; a store's notes live in a plain directory of it",
                              file=str(path.parent))
            path.parent.mkdir(parents=True, exist_ok=True)  # notes live beside the labels
            _move_torn_tail(path, self.root)
            _append_bytes(path, payload, self.root, sync=True)

    def note_file_for(self, annotator: str, round: int) -> Path:  # noqa: A002
        return self.root / "notes" / f"{_safe_name(annotator)}.round{int(round)}.jsonl"

    def add_note(self, *, item_id: str, annotator: str, round: int, field: str, note: str) -> dict[str, object]:  # noqa: A002
        """Keep a note typed for an item that has no label yet (a skip or an undo right after typing it), so it
        is never lost; the labeler shows it again and saves it with the item's label. Append-only, like labels,
        under ``<root>/notes/``."""
        check_annotator(annotator)
        if field not in LABEL_VALUES:
            raise schema.SchemaError(field="field", expected=f"one of {list(LABEL_VALUES)}", got=repr(field))
        record = {"item_id": str(item_id), "annotator": annotator, "round": int(round), "field": field,
                  "note": str(note), "noted_at": datetime.now(timezone.utc).isoformat(timespec="microseconds")}
        self._append(self.note_file_for(annotator, round), [record])
        return record

    def notes(self, annotator: str, round: int, field: str) -> dict[str, str]:  # noqa: A002
        """item id -> the latest note kept with :meth:`add_note` for this annotator, round and field."""
        path = self.note_file_for(annotator, round)
        out: dict[str, str] = {}
        if check_own(path, root=self.root):
            from workbench._util.jsonl import BadLines, json_lines

            if not self.read_only:
                lock = Path(str(path) + ".lock")
                check_own(lock, root=self.root)
                with FileLock(str(lock)):
                    _move_torn_tail(path, self.root)
            for _number, rec in json_lines(path, BadLines() if self.read_only else None):
                if isinstance(rec, dict) and rec.get("field") == field and isinstance(rec.get("note"), str):
                    out[str(rec.get("item_id"))] = rec["note"]
        return out

    @property
    def sample_list(self) -> Path:
        """The file naming the samples this store's labels were given on (:meth:`keep_sample`)."""
        return self.root / "samples.json"

    def keep_sample(self, path: str | os.PathLike[str]) -> bool:
        """Remember that labels in this store are given on the sample at ``path``, so that ``agree``,
        ``adjudicate`` and the adjudication widget find its items (their evidence, task and scenario) without
        being told; kept as a path relative to the store (a store moved with its samples still finds them).
        Returns whether the path was new. Written atomically, under the store's lock."""
        from workbench._util.atomic import atomic_write

        target = Path(os.path.relpath(Path(path).resolve(), self.root.resolve())).as_posix()
        with self._lock():
            kept = self._sample_paths()
            if target in kept:
                return False
            text = json.dumps({"samples": [*kept, target]}, indent=1)
            atomic_write(self.sample_list, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        return True

    def _sample_paths(self) -> list[str]:
        try:
            data = json.loads(self.sample_list.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (ValueError, UnicodeDecodeError):
            raise schema.SchemaError("not the store's list of samples (JSON with 'samples')", file=str(self.sample_list))
        kept = data.get("samples") if isinstance(data, dict) else None
        if not isinstance(kept, list) or not all(isinstance(k, str) for k in kept):
            raise schema.SchemaError("not the store's list of samples (JSON with 'samples': paths)",
                                     file=str(self.sample_list))
        return kept

    def kept_samples(self) -> list[Path]:
        """The samples :meth:`keep_sample` named, as paths (relative to the store), in the order they were kept;
        a path may no longer exist (the caller says so)."""
        return [self.root / k for k in self._sample_paths()]

    def history(self) -> pl.DataFrame:
        """Every label line ever written (validated, file:line errors on a corrupt file); of a batch being written
        (or interrupted and not yet rolled back), nothing."""
        for _ in range(5):  # a batch that starts or ends while the files are read: read them again
            before = self._journal_sizes()
            frames = [self._read_file(p, before) for p in sorted(self.dir.glob("*.jsonl"))]
            if self._journal_sizes() == before:
                break
        kept = [f for f in frames if f is not None and f.height]
        return pl.concat(kept, how="diagonal_relaxed") if kept else schema.empty("labels")

    def _read_file(self, path: Path, sizes: dict[str, int | None] | None) -> pl.DataFrame | None:
        """One label file as a reader sees it: none of a batch being written (the file only up to the size the
        journal ``sizes`` records; None for a file the batch made), and on a read-only store without a torn last
        line."""
        check_own(path, root=self.root)
        if sizes is not None and path.name in sizes:
            limit = sizes[path.name]
            if limit is None:
                return None
            if path.stat().st_size > limit:
                return _read_labels(path, limit)
        return _read_labels(path) if self.read_only and _torn_bytes(path, self.root) else read_table(path, "labels")

    def labels(self) -> pl.DataFrame:
        """The current labels: the latest per (item, annotator, round, field), without those whose latest record
        is a retraction (a null ``value``: an undo in a labeler)."""
        latest = latest_labels(self.history())
        if latest.height:
            latest = latest.filter(pl.col("value").is_not_null())
        return latest.sort(["annotator", "round", "item_id", "field"])

    def current(self, annotator: str, round: int, field: str) -> dict[str, dict[str, Any]]:  # noqa: A002
        """item id -> the latest label record (``value``, ``note``, ``labeled_at``) of this annotator, round and
        field; only that annotator's file is read."""
        path = self.file_for(annotator, round)
        table = self._read_file(path, self._journal_sizes()) if check_own(path, root=self.root) else None
        if table is None:
            return {}
        latest = latest_labels(table.filter(
            (pl.col("annotator") == annotator) & (pl.col("field") == field)))
        return {r["item_id"]: r for r in latest.iter_rows(named=True)}

#: seconds a writer waits for another process's hold on the store's lock before it gives up, saying who holds it
#: (``WORKBENCH_LOCK_WAIT`` sets another bound)
LOCK_WAIT = 600.0


class LockWaitWarning(UserWarning):
    """A writer is waiting for the store's lock, which another process holds (said once, naming it)."""


class _StoreLock:
    """The store's lock (``labels/.store.lock``, ``flock``: the kernel lets go of it when its process dies, however
    it dies), and beside it ``labels/.store.lock.holder`` naming who took it (pid, host, since when). A writer
    that finds it held says so once, naming the holder, and gives up after ``LOCK_WAIT`` seconds with an error
    that names the holder again; nothing is written."""

    def __init__(self, path: Path, root: Path) -> None:
        self.path, self.root = path, root
        self.holder = path.with_name(path.name + ".holder")
        check_own(path, root=root)  # filelock opens it itself: never a link to someone's file
        self.lock = FileLock(str(path))

    def __enter__(self) -> _StoreLock:
        import time
        from filelock import Timeout

        bound = float(os.environ.get("WORKBENCH_LOCK_WAIT", LOCK_WAIT))
        started, said = time.monotonic(), False
        while True:
            try:
                self.lock.acquire(timeout=0.5 if said else 0.2)
                break
            except Timeout:
                waited = time.monotonic() - started
                if waited >= bound:
                    raise schema.SchemaError(f"the store is locked by {self._who()} and was not let go of in "
                                             f"{bound:.0f} s; nothing was written. Try again when that process "
                                             "has finished (or stop it)", file=str(self.path)) from None
                if not said:
                    warnings.warn(f"{self.path}: waiting for {self._who()} to finish writing (at most {bound:.0f} s)",
                                  LockWaitWarning, stacklevel=3)
                    said = True
        try:
            check_own(self.path, root=self.root)  # made by filelock, or in place before: still no link
            text = json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                               "since": datetime.now(timezone.utc).isoformat(timespec="seconds")})
            fd = open_own(self.holder, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, root=self.root)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
        except NotOurs:
            self.lock.release()
            raise
        except OSError:  # a read-only or full disk: the lock still holds; only its name is not said
            pass
        return self

    def __exit__(self, *exc: object) -> None:
        self.lock.release()

    def _who(self) -> str:
        """The process holding the lock as its holder file names it (it may be gone by now)."""
        try:
            with os.fdopen(open_own(self.holder, os.O_RDONLY, root=self.root), "rb") as fh:
                held = json.loads(fh.read())
            return f"process {int(held['pid'])} on {held['host']} (since {held['since']})"
        except (OSError, ValueError, KeyError, TypeError, NotOurs):
            return "another process"


def _torn_bytes(path: Path, root: Path) -> int:
    """How many bytes after the last newline a writer would move aside (0: none, or a whole record)."""
    try:
        fd = open_own(path, os.O_RDONLY, root=root)
    except FileNotFoundError:
        return 0
    with os.fdopen(fd, "rb") as fh:
        data = fh.read()
    if not data:
        return 0
    if data.endswith(b"\n"):
        return 0
    tail = data[data.rfind(b"\n") + 1:]
    try:
        return 0 if isinstance(json.loads(tail), dict) else len(tail)
    except ValueError:
        return len(tail)


_FSYNC_FILES = 32  # a batch over more files than this is flushed with one os.sync(), not an fsync per file


def _lines(records: Sequence[dict[str, object]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def _append_bytes(path: Path, payload: bytes, root: Path, *, sync: bool) -> None:
    """Append ``payload`` whole (every byte written, or an error naming the file); ``sync``: fsync after. Never
    through a link (:func:`~workbench._util.atomic.open_own`)."""
    fd = open_own(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, root=root)
    try:
        try:
            view = memoryview(payload)
            while view:
                written = os.write(fd, view)
                if written <= 0:
                    raise OSError(f"{path}: wrote {len(payload) - len(view)} of {len(payload)} bytes")
                view = view[written:]
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as err:  # a full disk: name the label file, not a write call
        from workbench._util.atomic import named

        raise named(err, path) from None


def _entry_before(path: Path, added: int, root: Path) -> dict[str, Any]:
    """What the journal records of ``path`` before a batch appends ``added`` bytes to it. A file the batch makes is
    made here, empty, so that the journal can name its identity (a crash before the journal is written leaves an
    empty label file, which reads as no labels)."""
    created = not path.exists() and not path.is_symlink()
    fd = open_own(path, os.O_RDONLY | os.O_CREAT, root=root)
    try:
        info = os.fstat(fd)
        size = info.st_size
        start = max(0, size - _TAIL)
        tail = os.pread(fd, size - start, start) if size else b""
    finally:
        os.close(fd)
    return {"size": size, "added": added, "created": created, "dev": info.st_dev, "ino": info.st_ino,
            "tail_sha256": hashlib.sha256(tail).hexdigest()}


def _mismatch(path: Path, entry: dict[str, Any], stamp: str, *, checksum: bool) -> str | None:
    """Why the journal's ``entry`` is not about ``path`` as it is now (None: it is, or the file is gone): another
    file (identity), not a regular file, shorter than before the batch, longer than the batch can have made it,
    lines after the batch's start that are not the batch's (every label of a batch carries its ``stamp``: labels
    written later, or a later file given the same inode number, do not; a reader checks the first such line, a
    roll-back every one), or (``checksum``, rolling back) other bytes before the batch's start."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError:  # a symbolic link (ELOOP), or unreadable
        return "is not a regular file of the store"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return "is not a regular file of the store"
        if (info.st_dev, info.st_ino) != (entry["dev"], entry["ino"]):
            return "is not the file the batch wrote (another file of that name replaced it)"
        size, now = entry["size"], info.st_size
        if now < size:
            return f"is shorter ({now} bytes) than before the batch ({size})"
        if now > size + entry["added"]:
            return f"is longer ({now} bytes) than the batch can have made it ({size} + {entry['added']}): " \
                   "labels were added after it"
        # a reader looks at the first line after the start; rolling back, at every line and the bytes before it
        added = os.pread(fd, now - size, size) if checksum else os.pread(fd, min(now - size, _TAIL), size)
        if not _only_batch_lines(added if checksum else added[:added.find(b"\n") + 1], stamp):
            return "holds labels after the batch's start that the batch did not write"
        if checksum:
            start = max(0, size - _TAIL)
            if hashlib.sha256(os.pread(fd, size - start, start)).hexdigest() != entry["tail_sha256"]:
                return "holds other bytes before the batch's start than when the batch began"
        return None
    finally:
        os.close(fd)


def _only_batch_lines(added: bytes, stamp: str) -> bool:
    """Whether ``added`` (a file's bytes after a batch's start) holds only the batch's labels: whole lines stamped
    ``stamp``, then at most a torn fragment of one more (a write the crash cut)."""
    *whole, _fragment = added.split(b"\n")
    for line in whole:
        try:
            record = json.loads(line)
        except ValueError:
            return False
        if not isinstance(record, dict) or record.get("labeled_at") != stamp:
            return False
    return True


def _read_labels(path: Path, limit: int | None = None) -> pl.DataFrame:
    """A label file read without its torn last line (read-only stores), or only its first ``limit`` bytes (the size
    before a batch being written), validated like :func:`read_table`."""
    import tempfile

    data = path.read_bytes() if limit is None else path.read_bytes()[:limit]
    with tempfile.TemporaryDirectory() as tmp:
        clean = Path(tmp) / path.name
        clean.write_bytes(data[:data.rfind(b"\n") + 1])
        return read_table(clean, "labels")


def _move_torn_tail(path: Path, root: Path) -> None:
    """If ``path`` does not end in a newline: a last record that parses is kept (its newline added); anything else
    after the last newline is moved to a side file (call under the file's lock). Neither is ever reached through a
    link (:func:`~workbench._util.atomic.open_own`)."""
    try:
        fd = open_own(path, os.O_RDWR, root=root)
    except FileNotFoundError:
        return
    with os.fdopen(fd, "rb+") as fh:
        if os.fstat(fh.fileno()).st_size == 0:
            return
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return
        fh.seek(0)
        data = fh.read()
        keep = data.rfind(b"\n") + 1
        try:
            complete = isinstance(json.loads(data[keep:]), dict)
        except ValueError:
            complete = False
        if complete:  # a whole record whose newline never came: keep it, end the line
            fh.seek(0, os.SEEK_END)
            fh.write(b"\n")
            fh.flush()
            os.fsync(fh.fileno())
            return
        side = path.with_name(f"{path.name}.torn-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%S%fZ')}")
        with os.fdopen(open_own(side, os.O_WRONLY | os.O_CREAT | os.O_EXCL, root=root), "wb") as out:
            out.write(data[keep:])
        fh.truncate(keep)
        fh.flush()
        os.fsync(fh.fileno())
    warnings.warn(f"{path}: the last line was cut off (a crash while writing?); moved its "
                  f"{len(data) - keep} bytes to {side}", TornLineWarning, stacklevel=3)


__all__ = ["AnnotationStore", "JournalMismatch", "LockWaitWarning", "TornLineWarning"]
