"""Labeling interfaces: one HTML renderer, a JupyterLab widget and a terminal labeler.

Every piece of untrusted text (entry, task, previous summary, evidence) passes through
:func:`render_item_html`, which HTML-escapes it (``html.escape`` with quotes) and shows it
inside ``<pre>`` blocks; nothing from an item is ever inserted as markup. Both interfaces
write through :class:`~workbench.annotate.store.AnnotationStore` and resume at the first
unlabeled item.
"""

from __future__ import annotations

import html
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from workbench.annotate.store import AnnotationStore

#: label values per field, with the keyboard key for each (not JupyterLab command-mode keys)
FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "support": (("supported", "1"), ("unsupported", "2"), ("unsure", "3")),
    "correct": (("correct", "1"), ("incorrect", "2"), ("unsure", "3")),
}

SOURCE_QUESTION_FOR_LABELERS = (
    "Does the entry contain information that came from an environment output in the span or from the previous "
    "checkpoint (a value, a name, a result, how something in the environment behaves), rather than only plans, "
    "decisions, or readings of the task?"
)


def _text(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def render_item_html(item: dict[str, Any]) -> str:
    """The HTML a labeler sees for one sample item; every value is escaped."""
    parts = [
        '<div class="wb-item" style="font-family: sans-serif; max-width: 60em">',
        f'<div><b>Item</b> <code>{_text(item.get("item_id"))}</code> &middot; section '
        f'<b>{_text(item.get("section"))}</b></div>',
        f'<h4>Entry</h4><pre style="white-space: pre-wrap; background:#f6f6f6; padding:.5em">{_text(item.get("text"))}</pre>',
        f'<h4>Task</h4><pre style="white-space: pre-wrap">{_text(item.get("task"))}</pre>',
        f'<h4>Previous summary</h4><pre style="white-space: pre-wrap">{_text(item.get("previous_summary") or "(none)")}</pre>',
        "<h4>Evidence</h4>",
    ]
    evidence = item.get("evidence") or []
    if not evidence:
        parts.append("<p><i>(no passages retrieved)</i></p>")
    for k, passage in enumerate(evidence):
        parts.append(f'<pre style="white-space: pre-wrap; border-left: 3px solid #ccc; padding-left:.5em">'
                     f'[{k + 1}] {_text(passage)}</pre>')
    parts.append(f"<p><small>{_text(SOURCE_QUESTION_FOR_LABELERS)}</small></p></div>")
    return "\n".join(parts)


def load_sample(path: str | Path) -> list[dict[str, Any]]:
    """A sample file (JSONL, one item per line, written by ``workbench sample``)."""
    from workbench.tables import json_lines

    items = []
    for number, rec in json_lines(Path(path)):
        if not isinstance(rec, dict) or not isinstance(rec.get("item_id"), str) or not isinstance(rec.get("text"), str):
            from workbench.schema import SchemaError

            raise SchemaError(file=str(path), line=number, field="item_id/text", expected="an item with string "
                              "'item_id' and 'text'", got=json.dumps(rec)[:60])
        items.append(rec)
    return items


class LabelSession:
    """The state behind both interfaces: position, undo stack, writes through the store."""

    def __init__(self, items: Sequence[dict[str, Any]], store: AnnotationStore, annotator: str, round: int,  # noqa: A002
                 field: str = "support") -> None:
        if field not in FIELDS:
            raise ValueError(f"field: expected one of {list(FIELDS)}, got {field!r}")
        self.items, self.store, self.annotator, self.round, self.field = list(items), store, annotator, round, field
        self.index = store.next_unlabeled([i["item_id"] for i in self.items], annotator, round, [field])
        self.undo_stack: list[int] = []

    @property
    def done(self) -> bool:
        return self.index >= len(self.items)

    @property
    def current(self) -> dict[str, Any] | None:
        return None if self.done else self.items[self.index]

    def progress(self) -> str:
        return f"{min(self.index + 1, len(self.items))} of {len(self.items)}"

    def label(self, value: str, note: str | None = None) -> None:
        allowed = [v for v, _ in FIELDS[self.field]]
        if value not in allowed:
            raise ValueError(f"value: expected one of {allowed}, got {value!r}")
        item = self.current
        if item is None:
            return
        self.store.add(item_id=item["item_id"], annotator=self.annotator, round=self.round, field=self.field,
                       value=value, note=note or None)
        self.undo_stack.append(self.index)
        self.index += 1

    def skip(self) -> None:
        if not self.done:
            self.undo_stack.append(self.index)
            self.index += 1

    def undo(self) -> None:
        """Go back to the previous item; its next label supersedes the old one (history is kept)."""
        if self.undo_stack:
            self.index = self.undo_stack.pop()


def label_widget(items: Sequence[dict[str, Any]], store: AnnotationStore, annotator: str, round: int,  # noqa: A002
                 field: str = "support") -> Any:
    """An ipywidgets labeler for JupyterLab.

    Buttons for each value, Undo, Skip, a note field and progress "k of n". Keyboard: the
    digit keys 1-3 choose a value, ``u`` undoes and ``s`` skips -- but only while focus is
    inside the widget's key-capture area, so JupyterLab's command-mode shortcuts (A, B, D D,
    M, Y, arrows ...) are never intercepted.
    """
    import ipywidgets as w

    session = LabelSession(items, store, annotator, round, field)
    view = w.HTML()
    progress = w.HTML()
    note = w.Text(placeholder="note (optional)", layout=w.Layout(width="40em"))
    keys = w.Text(placeholder="type here: 1/2/3 to label, u undo, s skip", layout=w.Layout(width="24em"))

    def refresh() -> None:
        item = session.current
        progress.value = f"<b>{_text(session.progress())}</b> &middot; field <b>{_text(field)}</b>"
        view.value = "<p><b>All items labeled.</b></p>" if item is None else render_item_html(item)
        note.value = ""

    def act(fn: Callable[[], None]) -> None:
        fn()
        refresh()

    buttons = []
    for value, key in FIELDS[field]:
        b = w.Button(description=f"{value} [{key}]")
        b.on_click(lambda _b, v=value: act(lambda: session.label(v, note.value)))
        buttons.append(b)
    undo = w.Button(description="undo [u]")
    undo.on_click(lambda _b: act(session.undo))
    skip = w.Button(description="skip [s]")
    skip.on_click(lambda _b: act(session.skip))

    by_key = {key: value for value, key in FIELDS[field]}

    def on_key(change: dict[str, Any]) -> None:
        typed = (change.get("new") or "")[-1:]
        if not typed:
            return
        keys.value = ""
        if typed in by_key:
            act(lambda: session.label(by_key[typed], note.value))
        elif typed == "u":
            act(session.undo)
        elif typed == "s":
            act(session.skip)

    keys.observe(on_key, names="value")
    refresh()
    box = w.VBox([progress, view, note, w.HBox([*buttons, undo, skip]), keys])
    box.session = session
    return box


def terminal_label(items: Sequence[dict[str, Any]], store: AnnotationStore, annotator: str, round: int,  # noqa: A002
                   field: str = "support", *, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> int:
    """Label in a terminal: shows each item as plain text, reads 1/2/3, u, s, n (note), q. Returns labels written."""
    session = LabelSession(items, store, annotator, round, field)
    written = 0
    choices = " ".join(f"[{k}] {v}" for v, k in FIELDS[field])
    while not session.done:
        item = session.current
        assert item is not None
        stdout.write(f"\n--- {session.progress()} --- {item['item_id']} ({item.get('section')})\n")
        stdout.write(f"ENTRY: {_plain(item.get('text'))}\nTASK: {_plain(item.get('task'))}\n")
        for k, passage in enumerate(item.get("evidence") or []):
            stdout.write(f"  [{k + 1}] {_plain(passage)[:400]}\n")
        stdout.write(f"{choices}  [u] undo  [s] skip  [n] note  [q] quit > ")
        stdout.flush()
        line = stdin.readline()
        if not line:
            break
        cmd = line.strip()
        by_key = {key: value for value, key in FIELDS[field]}
        note = None
        if cmd == "n":
            stdout.write("note> ")
            stdout.flush()
            note = stdin.readline().strip()
            stdout.write(f"{choices} > ")
            stdout.flush()
            cmd = stdin.readline().strip()
        if cmd == "q":
            break
        if cmd in by_key:
            session.label(by_key[cmd], note)
            written += 1
        elif cmd == "u":
            session.undo()
        elif cmd == "s":
            session.skip()
        else:
            stdout.write(f"unknown answer {cmd!r}\n")
    stdout.write(f"\n{written} label(s) written; {session.progress()}\n")
    return written


def _plain(value: object) -> str:
    """Terminal-safe text: control characters (escape sequences) shown as \\xNN, never interpreted."""
    text = "" if value is None else str(value)
    return "".join(ch if (ch.isprintable() or ch in "\n\t") else f"\\x{ord(ch):02x}" for ch in text)
