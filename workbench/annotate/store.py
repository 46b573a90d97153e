"""The annotation store: append-only JSONL label files, safe for several labelers at once.

Labels live under ``<root>/labels/<annotator>.round<R>.jsonl``, one file per annotator and
round, one label per line (the ``labels`` table's columns). A label is never rewritten:
changing one appends a new line, and the latest line per (item, annotator, round, field)
wins while the history stays. Every write takes the store's exclusive lock (``labels/.store.lock``,
``filelock``) and writes whole lines (checking every byte was written) followed by ``fsync``,
so two processes adding at once never lose or interleave a line.

A batch (:meth:`AnnotationStore.add_many`: a Label Studio import, adjudicated labels) is all or nothing: before
any line is appended, a journal (``labels/.journal.json``) records the size of every file the batch touches; it
is removed once every line is on disk. A batch interrupted in between (SIGTERM, Ctrl-C, a full disk, a killed
process) is rolled back -- at once when the process can, else by the next writer that opens the store -- and
until then readers read each file only up to the size the journal records: nobody sees part of a batch.

The store, not its caller, stamps ``labeled_at``; annotator names are checked
(:func:`check_annotator`), and values by the labels table's declaration. A crash in the middle of
a write can leave a torn last line: opening the store (and every append) moves it to a side file
``<file>.torn-<time>`` with a warning naming it, so reading works and the next label starts on a
clean line.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

import polars as pl
from filelock import FileLock

from workbench import schema
from workbench.validation import check_record
from workbench.vocabulary import ANNOTATOR_RULE, LABEL_VALUES
from workbench.vocabulary import RESERVED_ANNOTATORS as RESERVED
from workbench.labels import latest_labels
from workbench.tables import read_table

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_ANNOTATOR = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+-]{0,127}")


class TornLineWarning(UserWarning):
    """A label file ended in a partial line (a crash mid-write); the fragment was moved aside."""


def check_annotator(name: object, *, reserved: bool = False) -> str:
    """``name`` if it is a usable annotator name (letters, digits, ``_ . - @ +`` -- so an e-mail address from
    Label Studio is one --, at most 128, starting with a letter or digit: no spaces, so ``"dan "`` is not a
    second person, and no path characters; not one of :data:`RESERVED` unless ``reserved``, which only
    adjudication passes); else ``SchemaError``."""
    if not isinstance(name, str):
        raise schema.SchemaError(field="annotator", expected=f"a name of {ANNOTATOR_RULE}", got=repr(name))
    return _checked_name(name, reserved)


@lru_cache(maxsize=1 << 14)
def _checked_name(name: str, reserved: bool) -> str:
    """:func:`check_annotator` of a string, remembered (an import checks the same few names a hundred thousand
    times); a refusal raises and is not remembered."""
    if not _ANNOTATOR.fullmatch(name):
        raise schema.SchemaError(field="annotator", expected=f"a name of {ANNOTATOR_RULE}", got=repr(name))
    if not reserved and _folded(name) in _RESERVED_FOLDED:  # "Adjudicated_" looks like "adjudicated" too
        raise schema.SchemaError(field="annotator", expected="a person's name (not one the store reserves, nor "
                                 f"one that differs from it only in case or punctuation: {', '.join(sorted(RESERVED))})",
                                 got=repr(name))
    return name


def _folded(name: str) -> str:
    """A name case-folded and stripped of punctuation: two names equal so are the same name to a reader."""
    return "".join(c for c in name.casefold() if c.isalnum())


_RESERVED_FOLDED = frozenset(_folded(r) for r in RESERVED)


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
        if not self.dir.is_dir():
            return
        if read_only:
            for file in sorted(self.dir.glob("*.jsonl")):
                torn = _torn_bytes(file)
                if torn:
                    warnings.warn(f"{file}: the last line was cut off ({torn} bytes); left as it is (read only) "
                                  "and skipped: the next writer moves it aside", TornLineWarning, stacklevel=2)
            return
        with self._lock():
            self._recover()
            for file in sorted(self.dir.glob("*.jsonl")):
                _move_torn_tail(file)

    def _lock(self) -> FileLock:
        """The store's one lock, held around every write and every repair."""
        self.dir.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.dir / ".store.lock"))

    @property
    def journal(self) -> Path:
        """Where a batch being written records the files it touches (present only while one is written)."""
        return self.dir / ".journal.json"

    def _journal_sizes(self) -> dict[str, int | None] | None:
        """file name -> its size before the batch being written (None: the batch created it); None: no batch."""
        try:
            data = json.loads(self.journal.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (ValueError, UnicodeDecodeError):  # written atomically, so never half; a hand-edited one is an error
            raise schema.SchemaError("not the store's batch journal (JSON with 'sizes')", file=str(self.journal))
        sizes = data.get("sizes") if isinstance(data, dict) else None
        if not isinstance(sizes, dict):
            raise schema.SchemaError("not the store's batch journal (JSON with 'sizes')", file=str(self.journal))
        return sizes

    def _recover(self) -> None:
        """Roll back a batch whose writer died (call under the lock): every file it touched back to its size."""
        sizes = self._journal_sizes()
        if sizes is None:
            return
        removed = _roll_back(self.dir, sizes)
        self.journal.unlink()
        warnings.warn(f"{self.journal}: a batch of labels was interrupted (a killed import?); rolled back: "
                      f"{removed} bytes removed from {len(sizes)} file(s), none of its labels kept",
                      TornLineWarning, stacklevel=3)

    def file_for(self, annotator: str, round: int) -> Path:  # noqa: A002 - the labels table's name
        return self.dir / f"{_safe_name(annotator)}.round{int(round)}.jsonl"

    def add(self, *, item_id: str, annotator: str, round: int, field: str, value: str | None,  # noqa: A002
            note: str | None = None) -> dict[str, object]:
        """Append one label; returns the record written."""
        check_annotator(annotator)
        record = {"item_id": str(item_id), "annotator": annotator, "round": int(round), "field": str(field),
                  "value": None if value is None else str(value), "note": note,
                  "labeled_at": datetime.now(timezone.utc).isoformat(timespec="microseconds")}
        check_record(schema.LABELS, record)
        self._append(self.file_for(annotator, round), [record])
        return record

    def add_many(self, records: Iterable[dict[str, object]], *, adjudication: bool = False) -> int:
        """Append several labels as one batch: all of them or, if anything stops it, none (see the module
        docstring). Every record is checked before anything is written. Only ``adjudication`` may write under a
        reserved name (:data:`RESERVED`)."""
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
            sizes: dict[str, int | None] = {}
            for path in payloads:
                _move_torn_tail(path)
                sizes[path.name] = path.stat().st_size if path.exists() else None
            from workbench.atomic import atomic_write

            atomic_write(self.journal, lambda tmp: tmp.write_text(json.dumps({"sizes": sizes}), encoding="utf-8"),
                         durable=True)
            try:
                for path, payload in payloads.items():
                    _append_bytes(path, payload, sync=len(payloads) <= _FSYNC_FILES)
                if len(payloads) > _FSYNC_FILES:
                    os.sync()  # one flush of every file written, instead of one fsync each
            except BaseException:  # SIGTERM, Ctrl-C, a full disk: none of the batch stays
                _roll_back(self.dir, sizes)
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
            path.parent.mkdir(parents=True, exist_ok=True)  # notes live beside the labels
            _move_torn_tail(path)
            _append_bytes(path, payload, sync=True)

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
        if path.exists():
            from workbench.jsonl import BadLines, json_lines

            if not self.read_only:
                with FileLock(str(path) + ".lock"):
                    _move_torn_tail(path)
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
        from workbench.atomic import atomic_write

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
        if sizes is not None and path.name in sizes:
            limit = sizes[path.name]
            if limit is None:
                return None
            if path.stat().st_size > limit:
                return _read_labels(path, limit)
        return _read_labels(path) if self.read_only and _torn_bytes(path) else read_table(path, "labels")

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
        table = self._read_file(path, self._journal_sizes()) if path.exists() else None
        if table is None:
            return {}
        latest = latest_labels(table.filter(
            (pl.col("annotator") == annotator) & (pl.col("field") == field)))
        return {r["item_id"]: r for r in latest.iter_rows(named=True)}

def _torn_bytes(path: Path) -> int:
    """How many bytes after the last newline a writer would move aside (0: none, or a whole record)."""
    if not path.exists() or path.stat().st_size == 0:
        return 0
    data = path.read_bytes()
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


def _append_bytes(path: Path, payload: bytes, *, sync: bool) -> None:
    """Append ``payload`` whole (every byte written, or an error naming the file); ``sync``: fsync after."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
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
        from workbench.atomic import named

        raise named(err, path) from None


def _roll_back(directory: Path, sizes: dict[str, int | None]) -> int:
    """Every file of a batch back to its size before it (a file the batch made is removed); the bytes removed."""
    removed = 0
    for name, size in sizes.items():
        path = directory / name
        if not path.exists():
            continue
        now = path.stat().st_size
        if size is None:
            path.unlink()
            removed += now
        elif now > size:
            with open(path, "rb+") as fh:
                fh.truncate(size)
                fh.flush()
                os.fsync(fh.fileno())
            removed += now - size
    return removed


def _read_labels(path: Path, limit: int | None = None) -> pl.DataFrame:
    """A label file read without its torn last line (read-only stores), or only its first ``limit`` bytes (the size
    before a batch being written), validated like :func:`read_table`."""
    import tempfile

    data = path.read_bytes() if limit is None else path.read_bytes()[:limit]
    with tempfile.TemporaryDirectory() as tmp:
        clean = Path(tmp) / path.name
        clean.write_bytes(data[:data.rfind(b"\n") + 1])
        return read_table(clean, "labels")


def _move_torn_tail(path: Path) -> None:
    """If ``path`` does not end in a newline: a last record that parses is kept (its newline added); anything else
    after the last newline is moved to a side file (call under the file's lock)."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as fh:
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
        side.write_bytes(data[keep:])
        fh.truncate(keep)
        fh.flush()
        os.fsync(fh.fileno())
    warnings.warn(f"{path}: the last line was cut off (a crash while writing?); moved its "
                  f"{len(data) - keep} bytes to {side}", TornLineWarning, stacklevel=3)


__all__ = ["AnnotationStore", "check_annotator", "TornLineWarning"]
