"""Labeling and adjudication interfaces: one item view shown two ways, in a JupyterLab widget and in a terminal.

:func:`item_view` decides what an annotator sees for an item and a field -- the entry, its
section, the task, the previous summary, every evidence passage in full with its source, the
question worded as in ``annotations/PROTOCOL.md``, and for ``correct`` the evaluation material
(``workbench.annotate.evaluation``) -- so the two interfaces cannot show different things.
:func:`render_item_html` escapes every piece of it (``html.escape`` with quotes) into ``<pre>``
blocks; :func:`item_lines` makes terminal lines with control characters shown as ``\\xNN``.

:class:`AdjudicationSession` walks the disagreements of an adjudication file the same way, with each annotator's
value and note on screen, and writes each decision into the file (:func:`adjudicate_widget`,
:func:`terminal_adjudicate`). :class:`LabelSession` is the state behind labeling: it starts at the first item without a label
for the field, moves on to the next unlabeled item after each label or skip, keeps notes typed
before a skip or an undo (``AnnotationStore.add_note``), and knows when every item is labeled.
"""

from __future__ import annotations

import html
import os
import re
import select
import shutil
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from workbench.annotate.evaluation import NO_MATERIAL
from workbench.display import visible
from workbench.annotate.store import AnnotationStore, check_annotator

#: label values per field, with the keyboard key for each (not JupyterLab command-mode keys)
FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "support": (("supported", "1"), ("unsupported", "2"), ("unsure", "3")),
    "correct": (("correct", "1"), ("incorrect", "2"), ("unsure", "3")),
}

#: the question for each field, word for word as in annotations/PROTOCOL.md
QUESTIONS: dict[str, str] = {
    "support": ("Does the entry contain information that came from an environment output in the span or from the "
                "previous checkpoint, such as a value, a name, a result, or how something in the environment "
                "behaves, rather than only plans, decisions, or readings of the task?"),
    "correct": ("Would following the entry violate an evaluation check of the task, as the evaluation material "
                "states it?"),
}
SOURCE_QUESTION_FOR_LABELERS = QUESTIONS["support"]  # its earlier name

#: what each value means, as annotations/PROTOCOL.md defines it (shown under the question in every interface)
DEFINITIONS: dict[str, dict[str, str]] = {
    "support": {
        "supported": "an environment output (a tool result) or the previous summary establishes what the entry "
                     "states: an id, an amount, a status; a plan that quotes an observed value is supported.",
        "unsupported": "the entry only plans, decides or restates the task, or states something no output or "
                       "previous summary establishes.",
        "unsure": "the evidence shown is not enough to decide; use sparingly and add a note.",
    },
    "correct": {
        "correct": "following the entry violates no evaluation check of the task.",
        "incorrect": "following the entry would violate an evaluation check, as the evaluation material states it.",
        "unsure": "the material shown is not enough to decide; use sparingly and add a note.",
    },
}


def definitions_text(field: str) -> str:
    """The field's values and their meanings, one line each."""
    return "\n".join(f"{value}: {meaning}" for value, meaning in DEFINITIONS[field].items())


@dataclass(frozen=True)
class Block:
    """One titled piece of an item view; ``text`` is untrusted and shown verbatim (escaped)."""

    title: str
    text: str
    kind: str = "text"  # entry | text | evidence | material | question | notice


def item_view(item: dict[str, Any], field: str = "support", *, question: bool = True) -> list[Block]:
    """What an annotator sees for ``item`` when labeling ``field``, in order; the question last unless the
    interface shows it elsewhere (``question=False``: the widget keeps it above the item, beside the buttons).
    An adjudication record's ``labels`` (each annotator's value and note) follow the entry."""
    role = f", role: {item['role']}" if item.get("role") else ""
    blocks = [Block(f"Entry (section: {item.get('section') or 'none'}{role})", _str(item.get("text")), "entry")]
    if item.get("labels"):
        blocks.append(Block("Values the annotators gave", "\n".join(_given(g) for g in item["labels"]), "labels"))
    blocks += [Block("Task", _str(item.get("task"))),
              Block("Previous summary", _str(item.get("previous_summary")) or "(none: first compaction)")]
    evidence = item.get("evidence") or []
    sources = item.get("evidence_sources") or []
    if not evidence:
        blocks.append(Block("Evidence", "(no environment output was retrieved for this entry)", "notice"))
    for k, passage in enumerate(evidence):
        source = sources[k] if k < len(sources) else "source not recorded"
        blocks.append(Block(f"Evidence [{k + 1} of {len(evidence)}] from {source}", _str(passage), "evidence"))
    if field == "correct":
        material = item.get("evaluation") or []
        if not material:
            blocks.append(Block("Evaluation material", NO_MATERIAL, "notice"))
        for m in material:
            blocks.append(Block(f"Evaluation material: {m.get('name')}", _str(m.get("text")), "material"))
    if question:
        blocks.append(Block(f"Question ({field})", QUESTIONS[field] + "\n\n" + definitions_text(field), "question"))
    return blocks


def _given(label: Mapping[str, Any]) -> str:
    """``alice, round 1: unsupported · note: ...`` for one annotator's value in an adjudication record."""
    note = f" · note: {label['note']}" if label.get("note") else ""
    return f"{label.get('annotator')}, round {label.get('round')}: {label.get('value')}{note}"


def _str(value: object) -> str:
    return "" if value is None else str(value)


# ---------------------------------------------------------------------------
# HTML

_TOKEN = re.compile(r"(?<!\S)(?=\S*(?:[0-9$#_]|\w-\w))\S{2,40}(?!\S)")  # digits, $, _ or an inner hyphen
_PRE = ("white-space: pre-wrap; word-break: normal; overflow-wrap: anywhere; margin: .2em 0 .6em 0; "
        "font-family: var(--jp-code-font-family, monospace); font-size: 13px")
_STYLE = {"entry": "background:#fff8dc; padding:.4em; border:1px solid #e0d8b0",
          "evidence": "border-left: 3px solid #9ab; padding-left:.5em",
          "material": "border-left: 3px solid #c96; padding-left:.5em",
          "question": "font-weight: bold",
          "labels": "background:#eef3fb; padding:.4em; border:1px solid #c8d4e8", "notice": "font-style: italic; color:#555", "text": ""}


def _escaped(text: str) -> str:
    """Escaped text whose identifier-like tokens (``INV-6237``, ``$600.00``) never break inside; longer ones may.
    Control and bidi characters are shown first (:func:`workbench.display.visible`): U+202E in ``INV-\u202e4301``
    would make it read ``INV-1034``."""
    return _TOKEN.sub(lambda m: f'<span style="white-space: nowrap">{m.group(0)}</span>',
                      html.escape(visible(text), quote=True))


def render_item_html(item: dict[str, Any], field: str = "support", *, question: bool = True) -> str:
    """The HTML a labeler sees for one sample item; every value is escaped."""
    parts = ['<div class="wb-item" style="font-family: sans-serif">',
             f'<div>Item <code>{html.escape(visible(_str(item.get("item_id"))), quote=True)}</code></div>']
    for b in item_view(item, field, question=question):
        parts.append(f'<div class="wb-block wb-{b.kind}"><b>{_escaped(b.title)}</b>'
                     f'<pre style="{_PRE}; {_STYLE[b.kind]}">{_escaped(b.text)}</pre></div>')
    parts.append("</div>")
    return "\n".join(parts)


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
        self.undo_stack: list[int] = []
        self.last_saved: dict[str, object] | None = None
        self.index = self._next_unlabeled(0)

    # what a subclass provides
    def who(self) -> str:
        raise NotImplementedError

    def _save(self, item_id: str, value: str, note: str | None) -> dict[str, object]:
        raise NotImplementedError

    def _save_note(self, item_id: str, note: str) -> None:
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
        self.undo_stack.append(self.index)
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
        self.undo_stack.append(self.index)
        self.index = self._next_unlabeled(self.index + 1)

    def undo(self, note: str | None = None) -> None:
        """Go back to the previous item; its next value supersedes the old one (history is kept)."""
        self.keep_note(note)
        if self.undo_stack:
            self.index = self.undo_stack.pop()

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
        return self.store.add(item_id=item_id, annotator=self.annotator, round=self.round, field=self.field,
                              value=value, note=note)

    def _save_note(self, item_id: str, note: str) -> None:
        self.store.add_note(item_id=item_id, annotator=self.annotator, round=self.round, field=self.field, note=note)


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
        from workbench.annotate.adjudication import read_adjudication

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
        from workbench.annotate.adjudication import decide

        return decide(self.path, item_id, self.field, value=value, note=note, adjudicator=self.adjudicator)

    def _save_note(self, item_id: str, note: str) -> None:
        from workbench.annotate.adjudication import decide

        decide(self.path, item_id, self.field, value=None, note=note, adjudicator=self.adjudicator)


# ---------------------------------------------------------------------------
# JupyterLab widget

# The key box is cleared after each action by the kernel. A key typed before the browser has seen the clearing
# arrives in a value that still holds the old keys; so the kernel writes a marker of zero-width characters (the
# box's "epoch", invisible) when it clears, and counts what it has acted on per epoch: every key is acted on
# once, whether it arrives before or after the browser applied the clearing.
_ZERO, _ONE, _END = "\u200b", "\u200c", "\u2060"
_MARK = re.compile(f"^([{_ZERO}{_ONE}]*){_END}")


def _epoch_marker(epoch: int) -> str:
    return format(epoch, "b").replace("0", _ZERO).replace("1", _ONE) + _END


def _split_epoch(text: str) -> tuple[int, str]:
    """(epoch, keys typed) of the key box's value; -1 before the first clearing."""
    m = _MARK.match(text)
    if not m:
        return -1, text
    bits = m.group(1).replace(_ZERO, "0").replace(_ONE, "1")
    return (int(bits, 2) if bits else 0), text[m.end():]


def _question_html(field: str) -> str:
    items = "".join(f"<li><b>{html.escape(v)}</b>: {html.escape(m)}</li>" for v, m in DEFINITIONS[field].items())
    return (f'<div class="wb-question" style="font-family: sans-serif; line-height: 1.3">'
            f'<b>Question ({html.escape(field)}):</b> {html.escape(QUESTIONS[field])}'
            f'<ul style="margin: .2em 0 0 0; padding-left: 1.4em; font-size: 12px">{items}</ul></div>')


def _widget(session: _Walk) -> Any:
    """The labeling widget over any walk (labels or adjudication): who and where, the question and the protocol's
    definitions, the buttons, key box and note, the last save, and below them the item in its own scroll box."""
    import ipywidgets as w

    field = session.field
    header = w.HTML()
    question = w.HTML(_question_html(field))
    status = w.HTML()
    note = w.Text(placeholder="note (optional; kept with a skip or undo too)", layout=w.Layout(width="40em"))
    keys = w.Text(placeholder="type here: 1/2/3 label, u undo, s skip", layout=w.Layout(width="24em"))
    keys.add_class("wb-keys")
    # the item scrolls inside its own box, so the question and the buttons above it stay in the window
    frame = w.Box(layout=w.Layout(max_height="calc(100vh - 470px)", min_height="160px", overflow="auto",
                                  border="1px solid #ddd", padding="0 .5em"))
    state: dict[str, Any] = {"epoch": -1, "seen": {}}

    def refresh(message: str = "") -> None:
        item = session.current
        old = frame.children
        existing = session.existing()
        mine = (f" · your {session.value_word}: <b>{html.escape(str(existing['value']))}</b>" if existing else
                f" · <i>not {session.done_word} yet</i>") if item is not None else ""
        header.value = f"<b>{html.escape(session.header())}</b>{mine}"
        status.value = message or "&nbsp;"
        if item is None:
            body = f"<p><b>{html.escape(session.end_message())}</b></p>"
        else:
            body = render_item_html(item, field, question=False)
        frame.children = (w.HTML(body),)  # a new element: its scroll box starts at the top
        for child in old:
            child.close()
        note.value = session.pending_note()
        keys.focus()  # focus (and its ring) leaves the clicked button; keys typed next are captured

    def act(fn: Callable[[], None], saving: bool = False) -> None:
        before = session.current
        try:
            fn()
        except Exception as err:  # noqa: BLE001 - shown to the annotator, who can retry
            refresh(f'<span style="color:#b00">not saved: {html.escape(str(err))}</span>')
            return
        message = ""
        if saving and session.last_saved is not None and before is not None:
            rec = session.last_saved
            at = datetime.fromisoformat(str(rec["labeled_at"])).astimezone().strftime("%H:%M:%S")
            message = (f'<span style="color:#070">&#10003; saved {html.escape(str(rec["item_id"]))}: '
                       f'{html.escape(field)} = <b>{html.escape(str(rec["value"]))}</b> at {at}</span>')
        refresh(message)

    buttons = []
    for value, key in FIELDS[field]:
        b = w.Button(description=f"{value} [{key}]")
        b.on_click(lambda _b, v=value: act(lambda: session.label(v, note.value), saving=True))
        buttons.append(b)
    undo = w.Button(description="undo [u]")
    undo.on_click(lambda _b: act(lambda: session.undo(note.value)))
    skip = w.Button(description="skip [s]")
    skip.on_click(lambda _b: act(lambda: session.skip(note.value)))
    first = w.Button(description="first open item")
    first.on_click(lambda _b: act(session.first_unlabeled))

    by_key = {key: value for value, key in FIELDS[field]}

    def on_key(change: dict[str, Any]) -> None:
        epoch, typed = _split_epoch(change.get("new") or "")
        seen = state["seen"].get(epoch, 0)
        if len(typed) < seen:  # the box was edited by hand: start counting again
            state["seen"][epoch] = len(typed)
            return
        new, state["seen"][epoch] = typed[seen:], len(typed)
        for ch in new:  # every key, in order: none is dropped when two arrive in one update
            if ch in by_key:
                value = by_key[ch]
                act(lambda: session.label(value, note.value), saving=True)  # noqa: B023 - called at once
            elif ch == "u":
                act(lambda: session.undo(note.value))
            elif ch == "s":
                act(lambda: session.skip(note.value))
        if new:  # clear the box: a new epoch
            state["epoch"] = max(state["epoch"], epoch) + 1
            keys.value = _epoch_marker(state["epoch"])

    keys.observe(on_key, names="value")
    refresh()
    box = w.VBox([header, question, w.HBox([*buttons, undo, skip, first]), w.HBox([keys, note]), status, frame])
    box.add_class("wb-labeler")
    box.session = session
    return box


def label_widget(items: Sequence[dict[str, Any]], store: AnnotationStore, annotator: str, round: int,  # noqa: A002
                 field: str = "support") -> Any:
    """An ipywidgets labeler for JupyterLab.

    At the top, always in view: who labels what (annotator, round, field), progress (k of n,
    labeled, skipped), the item's existing label, the question with the protocol's definitions,
    the buttons (one per value, undo, skip, first open item), a key-capture box (cleared after
    each key) and a note, and the last save's confirmation. Below, the item -- entry, task,
    previous summary, evidence with its sources in words -- in a scroll box of its own, which
    starts at its top for each new item. Keyboard: typed in the key-capture box, 1-3 choose a
    value, ``u`` undoes and ``s`` skips; JupyterLab's command-mode shortcuts are never
    intercepted. Every key typed is acted on once, however fast.
    """
    return _widget(LabelSession(items, store, annotator, round, field))


def adjudicate_widget(path: str | os.PathLike[str], field: str = "support", *, adjudicator: str,
                      items: Sequence[dict[str, Any]] | None = None) -> Any:
    """The same widget over an adjudication file (:class:`AdjudicationSession`): the entry with every annotator's
    value and note, the sample's evidence when ``items`` are given, the question, and a button per allowed value;
    each decision is written into the file at once."""
    return _widget(AdjudicationSession(path, field, adjudicator=adjudicator, items=items))


# ---------------------------------------------------------------------------
# terminal


def _plain(value: object) -> str:
    """Terminal-safe text: :func:`workbench.display.visible` (escape sequences, bidi overrides shown as \\xNN)."""
    return visible(value)


def item_lines(item: dict[str, Any], field: str, width: int) -> list[str]:
    """The item view as terminal lines of at most ``width`` characters: nothing cut, every character shown."""
    wrap = textwrap.TextWrapper(width=max(20, width), break_on_hyphens=False, replace_whitespace=False,
                                drop_whitespace=False, expand_tabs=True)
    lines = wrap.wrap(f"item {_plain(item.get('item_id'))}") or ["item"]  # a long id wraps, never cut
    for b in item_view(item, field):
        lines.append("")
        lines.extend(wrap.wrap(f"== {_plain(b.title)} ==") or [""])
        for raw in _plain(b.text).split("\n"):
            lines.extend(wrap.wrap(raw) or [""])
    return lines


class _Lines:
    """Lines from a stream. On a real file descriptor it waits with ``select`` in short steps and reads raw bytes
    into its own buffer: Ctrl-C then interrupts at once even when the signal lands on another thread (polars'
    workers; a blocked ``readline`` would sleep on until Enter), and lines that arrive together are all kept."""

    def __init__(self, stream: TextIO) -> None:
        self.stream, self.buffer = stream, b""
        try:
            self.fd: int | None = stream.fileno() if os.name == "posix" else None
        except (AttributeError, OSError, ValueError):
            self.fd = None

    def readline(self) -> str:
        if self.fd is None:
            return self.stream.readline()
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if not ready:
                continue  # the interpreter runs signal handlers here
            chunk = os.read(self.fd, 65536)
            if not chunk:  # end of input: the last partial line, then ""
                rest, self.buffer = self.buffer, b""
                return rest.decode("utf-8", errors="replace")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode("utf-8", errors="replace") + "\n"


class _Terminal:
    """A pager over one item at a time; commands are lines (Enter), so a key typed early waits in the input."""

    def __init__(self, session: _Walk, stdin: TextIO, stdout: TextIO, size: tuple[int, int] | None) -> None:
        self.s, self.stdin, self.stdout = session, _Lines(stdin), stdout
        cols, rows = size or tuple(shutil.get_terminal_size((80, 24)))
        self.width, self.rows = max(20, cols - 1), max(8, rows)
        self.clear = bool(size is None and getattr(stdout, "isatty", lambda: False)())
        self.written = 0
        self.top = 0
        self.shown_page = self.rows
        self.message = ""

    def say(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def show(self, lines: list[str]) -> None:
        """One screen: header, a page of the item, where we are, the last message, the prompt -- never more rows
        than the terminal has, so nothing scrolls away unseen."""
        existing = self.s.existing()
        mine = f"your {self.s.value_word}: {existing['value']}" if existing else f"not {self.s.done_word}"
        header = textwrap.wrap(_plain(f"[{self.s.header()} · {mine}]"), self.width, break_on_hyphens=False)
        message = textwrap.wrap(_plain(self.message), self.width) if self.message else []
        self.message = ""
        page = max(3, self.rows - len(header) - len(message) - 2)  # 2: the status line and the prompt
        end = min(len(lines), self.top + page)
        out = ["\x1b[2J\x1b[H"] if self.clear else ["\n"]
        out += [ln + "\n" for ln in (*header, *lines[self.top:end])]
        out.append(f"lines {self.top + 1}-{end} of {len(lines)} · " +
                   ("MORE BELOW: press Enter\n" if end < len(lines) else "end of item\n"))
        out += [ln + "\n" for ln in message]
        choices = " ".join(f"{k}={v}" for v, k in FIELDS[self.s.field])
        out.append(f"{choices} Enter/b page n note s skip u undo q quit > ")
        self.say("".join(out))
        self.shown_page = page

    def run(self) -> int:
        try:
            self.loop()
        except KeyboardInterrupt:
            self.say(f"\ninterrupted: {self.written} {self.s.value_word}(s) written this session, every one saved "
                     f"({self.s.labeled} of {len(self.s.items)} labeled); run the same command to resume\n")
            raise
        self.say(f"\n{self.written} {self.s.value_word}(s) written; {self.s.progress()}\n")
        return self.written

    def loop(self) -> None:
        by_key = {key: value for value, key in FIELDS[self.s.field]}
        shown: object = None
        while True:
            item = self.s.current
            if item is None:
                self.say(f"\n{self.s.end_message()}\n")
                if self.s.all_labeled:
                    return
                self.say("[f] first unlabeled  [q] quit > ")
                line = self.stdin.readline()
                if not line or line.strip() == "q":
                    return
                if line.strip() == "f":
                    self.s.first_unlabeled()
                continue
            if item is not shown:
                shown, self.top = item, 0
            lines = item_lines(item, self.s.field, self.width)
            self.show(lines)
            line = self.stdin.readline()
            if not line:  # end of input
                return
            cmd = line.strip()
            if cmd in ("", "f"):
                if self.top + self.shown_page < len(lines):
                    self.top += self.shown_page
                else:
                    self.message = "end of item: answer with a label key, or b to page back"
            elif cmd == "b":
                self.top = max(0, self.top - self.shown_page)
            elif cmd == "g":
                self.top = 0
            elif cmd == "q":
                return
            elif cmd == "n":
                self.note(by_key)
            elif cmd in by_key:
                self.s.label(by_key[cmd])
                self.written += 1
                self.message = f"saved {item['item_id']}: {self.s.field} = {by_key[cmd]}"
            elif cmd == "s":
                self.s.skip()
            elif cmd == "u":
                self.s.undo()
            else:
                self.message = f"unknown answer {cmd!r}: use {', '.join(by_key)}, Enter, b, g, n, s, u or q"

    def note(self, by_key: dict[str, str]) -> None:
        """Read a note; it is kept at once (so a skip, an undo or a quit never loses it), then saved with the label."""
        old = self.s.pending_note()
        self.say(f"note{f' (now: {_plain(old)})' if old else ''}> ")
        text = self.stdin.readline()
        if not text:
            return
        note = text.rstrip("\n")
        self.s.keep_note(note)
        self.message = "note kept; it is saved with this item's label"


def terminal_label(items: Sequence[dict[str, Any]], store: AnnotationStore, annotator: str, round: int,  # noqa: A002
                   field: str = "support", *, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout,
                   size: tuple[int, int] | None = None) -> int:
    """Label in a terminal; returns the number of labels written.

    Each item is shown whole through a pager (``size`` = columns, rows; the terminal's by
    default): Enter pages on, ``b`` back, ``g`` to the top; the status line says which lines
    are shown and whether more follow. Answers are lines: 1-3 label, ``n`` note, ``s`` skip,
    ``u`` undo, ``q`` quit. Ctrl-C stops at once (every label is already on disk) and
    re-raises ``KeyboardInterrupt`` after saying so.
    """
    return _Terminal(LabelSession(items, store, annotator, round, field), stdin, stdout, size).run()


def terminal_adjudicate(path: str | os.PathLike[str], field: str = "support", *, adjudicator: str,
                        items: Sequence[dict[str, Any]] | None = None, stdin: TextIO = sys.stdin,
                        stdout: TextIO = sys.stdout, size: tuple[int, int] | None = None) -> int:
    """Decide an adjudication file's disagreements of ``field`` in a terminal (the same pager, keys and item view as
    :func:`terminal_label`, with every annotator's value and note); each decision is written into the file at once.
    Returns the number of decisions written."""
    return _Terminal(AdjudicationSession(path, field, adjudicator=adjudicator, items=items), stdin, stdout, size).run()


def load_sample(path: str | Path) -> list[dict[str, Any]]:
    """A sample file (JSONL, one item per line, written by ``workbench sample``)."""
    import json

    from workbench.schema import SchemaError
    from workbench.jsonl import json_lines

    items = []
    for number, rec in json_lines(Path(path)):
        if not isinstance(rec, dict) or not isinstance(rec.get("item_id"), str) or not isinstance(rec.get("text"), str):
            raise SchemaError(file=str(path), line=number, field="item_id/text", expected="an item with string "
                              "'item_id' and 'text'", got=json.dumps(rec)[:60])
        items.append(rec)
    return items
