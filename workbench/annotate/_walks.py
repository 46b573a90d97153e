"""The state behind both labeling interfaces. :class:`LabelSession` starts at the first item without a label for the
field, moves on to the next unlabeled item after each label or skip, keeps notes typed before a skip or an undo
(``AnnotationStore.add_note``), and knows when every item is labeled. :class:`AdjudicationSession` walks the
disagreements of an adjudication file the same way, with each annotator's value and note on screen, and writes each
decision into the file."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from workbench.annotate._store import AnnotationStore
from workbench.tables._vocabulary import check_annotator

from workbench.annotate._item_views import FIELDS


# ---------------------------------------------------------------------------
# the sessions behind both interfaces


def _check_field(field: str) -> None:
    if field not in FIELDS:
        raise ValueError(f"field: expected one of {list(FIELDS)}, got {field!r}")


class _Walk:
    """A walk over items for one field: position, values given, skips, undo, kept notes. Subclasses save."""

    #: what a saved value is called in the progress line ("labeled", "decided") and at the end ("label")
    done_word, value_word = "labeled", "label"

    def __init__(self, items: Sequence[dict[str, Any]], field: str, given: dict[str, dict[str, Any]],
                 kept_notes: dict[str, str]) -> None:
        _check_field(field)
        self.items, self.field = list(items), field
        self.ids = [str(i["item_id"]) for i in self.items]
        self.given, self.kept_notes = given, kept_notes
        self.skipped: set[str] = set()
        self.undo_stack: list[tuple[int, bool]] = []  # (index, whether a value was saved there)
        self.last_saved: dict[str, object] | None = None
        self.last_undone: dict[str, Any] | None = None  # the value the last undo retracted
        self.index = self._next_unlabeled(0)

    # what a subclass provides
    def who(self) -> str:
        raise NotImplementedError

    def _save(self, item_id: str, value: str, note: str | None) -> dict[str, object]:
        raise NotImplementedError

    def _save_note(self, item_id: str, note: str) -> None:
        raise NotImplementedError

    def _retract(self, item_id: str) -> None:
        raise NotImplementedError

    def _next_unlabeled(self, start: int) -> int:
        for i in range(start, len(self.ids)):
            if self.ids[i] not in self.given:
                return i
        return len(self.ids)

    @property
    def done(self) -> bool:
        """Past the last item (whether or not every item has a value: see :attr:`all_labeled`)."""
        return self.index >= len(self.items)

    @property
    def all_labeled(self) -> bool:
        return all(i in self.given for i in self.ids)

    @property
    def labeled(self) -> int:
        return sum(i in self.given for i in self.ids)

    @property
    def current(self) -> dict[str, Any] | None:
        return None if self.done else self.items[self.index]

    def existing(self) -> dict[str, Any] | None:
        """The value already given to the current item for the field (latest), if any."""
        item = self.current
        return None if item is None else self.given.get(str(item["item_id"]))

    def pending_note(self) -> str:
        """The note to show with the current item: a kept note, else the note of its existing value."""
        item = self.current
        if item is None:
            return ""
        iid = str(item["item_id"])
        return self.kept_notes.get(iid) or (self.given.get(iid) or {}).get("note") or ""

    def progress(self) -> str:
        unlabeled_skipped = len([i for i in self.skipped if i not in self.given])
        return (f"{min(self.index + 1, len(self.items))} of {len(self.items)} · {self.labeled} {self.done_word} · "
                f"{unlabeled_skipped} skipped")

    def header(self) -> str:
        return f"{self.who()} · {self.progress()}"

    def label(self, value: str, note: str | None = None) -> None:
        allowed = [v for v, _ in FIELDS[self.field]]
        if value not in allowed:
            raise ValueError(f"value: expected one of {allowed}, got {value!r}")
        item = self.current
        if item is None:
            return
        iid = str(item["item_id"])
        note = note or self.kept_notes.get(iid) or None
        self.last_saved = self._save(iid, value, note)
        self.given[iid] = self.last_saved
        self.kept_notes.pop(iid, None)
        self.undo_stack.append((self.index, True))
        self.index = self._next_unlabeled(self.index + 1)

    def keep_note(self, note: str | None) -> None:
        """Keep a typed note for the current item without a value (before a skip or an undo)."""
        item = self.current
        if item is None or not note or note == self.pending_note():
            return
        iid = str(item["item_id"])
        self._save_note(iid, note)
        self.kept_notes[iid] = note

    def skip(self, note: str | None = None) -> None:
        if self.done:
            return
        self.keep_note(note)
        self.skipped.add(self.ids[self.index])
        self.undo_stack.append((self.index, False))
        self.index = self._next_unlabeled(self.index + 1)

    def undo(self, note: str | None = None) -> None:
        """Go back to the previous item; if a value was given there, retract it (a retraction is appended, the
        history keeps both), so the item is open again: :attr:`last_undone` holds the retracted value and
        :meth:`undo_message` says so. Its note comes back with the item."""
        self.keep_note(note)
        self.last_undone = None
        if not self.undo_stack:
            return
        self.index, saved = self.undo_stack.pop()
        iid = self.ids[self.index]
        old = self.given.get(iid)
        if saved and old is not None:
            self._retract(iid)
            del self.given[iid]
            if old.get("note") and not self.kept_notes.get(iid):
                self._save_note(iid, str(old["note"]))
                self.kept_notes[iid] = str(old["note"])
            self.last_undone = {"item_id": iid, **old}

    def undo_message(self) -> str:
        """What the last undo did, in words (empty if it retracted nothing)."""
        if self.last_undone is None:
            return ""
        return (f"undone: the {self.field} {self.value_word} {self.last_undone.get('value')!r} of "
                f"{self.last_undone['item_id']} is retracted (the history keeps it); the item is open again")

    def first_unlabeled(self) -> None:
        """Start again at the first item without a value (after skipping some)."""
        self.index = self._next_unlabeled(0)

    def end_message(self) -> str:
        if self.all_labeled:
            return f"All items {self.done_word} ({len(self.items)} of {len(self.items)} for field {self.field})."
        left = len(self.items) - self.labeled
        return (f"End of the list: {left} of {len(self.items)} item(s) still have no {self.field} {self.value_word} "
                "(skipped). Go to the first open item to finish.")


class LabelSession(_Walk):
    """An annotator labeling a sample for one field; every label and kept note goes to the store at once."""

    def __init__(self, items: Sequence[dict[str, Any]], store: AnnotationStore, annotator: str, round: int,  # noqa: A002
                 field: str = "support") -> None:
        _check_field(field)  # before the store is read for it
        check_annotator(annotator)
        self.store, self.annotator, self.round = store, annotator, round
        given = {k: v for k, v in store.current(annotator, round, field).items() if v.get("value") is not None}
        super().__init__(items, field, given, store.notes(annotator, round, field))

    def who(self) -> str:
        return f"annotator {self.annotator} · round {self.round} · field {self.field}"

    def _save(self, item_id: str, value: str, note: str | None) -> dict[str, object]:
        item = self.items[self.ids.index(item_id)]
        own = item.get("question") if self.field == "support" else None  # the data set's question, kept with it
        return self.store.add(item_id=item_id, annotator=self.annotator, round=self.round, field=self.field,
                              value=value, note=note, question=own if isinstance(own, str) and own.strip() else None)

    def _save_note(self, item_id: str, note: str) -> None:
        self.store.add_note(item_id=item_id, annotator=self.annotator, round=self.round, field=self.field, note=note)

    def _retract(self, item_id: str) -> None:
        self.store.add(item_id=item_id, annotator=self.annotator, round=self.round, field=self.field, value=None)


class AdjudicationSession(_Walk):
    """An adjudicator deciding the disagreements of one field in an adjudication file (``workbench agree``).

    Each item is the disagreement's record (entry text, section, role, every annotator's value and note) over the
    sample's item when ``items`` has it (task, previous summary, evidence, evaluation material), so the adjudicator
    sees what the annotators saw and what they said. A decision is written into the file at once (the record's
    ``value``, ``note``, ``decided_by``, ``decided_at``; the file rewritten atomically, every other record as it
    was); ``workbench adjudicate FILE`` then adds the decisions to the store. Decided items are not walked into.
    """

    done_word, value_word = "decided", "decision"

    def __init__(self, path: str | os.PathLike[str], field: str = "support", *, adjudicator: str,
                 items: Sequence[dict[str, Any]] | Mapping[str, dict[str, Any]] | None = None) -> None:
        from workbench.annotate._adjudication import read_adjudication

        check_annotator(adjudicator)
        self.path, self.adjudicator = Path(path), adjudicator
        by_id = items if isinstance(items, Mapping) else {str(i["item_id"]): i for i in items or ()}
        records = [r for r in read_adjudication(self.path) if r["field"] == field]
        if not records:
            raise ValueError(f"{self.path}: no disagreement of field {field!r} to adjudicate")
        views = []
        for rec in records:
            shown = {k: v for k, v in rec.items() if k not in ("value", "note", "decided_by", "decided_at")}
            views.append({**by_id.get(rec["item_id"], {}), **{k: v for k, v in shown.items() if v is not None}})
        given = {r["item_id"]: {"value": r["value"], "note": r.get("note")} for r in records if r.get("value")}
        notes = {r["item_id"]: r["note"] for r in records if r.get("note") and not r.get("value")}
        super().__init__(views, field, given, notes)

    def who(self) -> str:
        return f"adjudicator {self.adjudicator} · field {self.field}"

    def _save(self, item_id: str, value: str, note: str | None) -> dict[str, object]:
        from workbench.annotate._adjudication import decide

        return decide(self.path, item_id, self.field, value=value, note=note, adjudicator=self.adjudicator)

    def _save_note(self, item_id: str, note: str) -> None:
        from workbench.annotate._adjudication import decide

        decide(self.path, item_id, self.field, value=None, note=note, adjudicator=self.adjudicator)

    def _retract(self, item_id: str) -> None:
        from workbench.annotate._adjudication import decide

        decide(self.path, item_id, self.field, value=None, note=None, adjudicator=self.adjudicator, retract=True)


__all__ = ["AdjudicationSession", "LabelSession"]
