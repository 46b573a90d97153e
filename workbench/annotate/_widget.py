"""The JupyterLab labeling and adjudication widget (:func:`label_widget`, :func:`adjudicate_widget`): the item view
(:mod:`workbench.annotate._item_views`) above keys that act on the session (:mod:`workbench.annotate._walks`)."""

from __future__ import annotations

import html
import os
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from workbench.annotate._store import AnnotationStore

from workbench.annotate._walks import AdjudicationSession, LabelSession, _Walk
from workbench.annotate._item_views import (DEFINITIONS, FIELDS, item_definitions, item_question, QUESTIONS,
                                            render_item_html)


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


def _question_html(field: str, item: Mapping[str, Any] | None = None) -> str:
    """The question (the item's data set's own, else the protocol's) and what each value means under it."""
    meanings = item_definitions(item, field) if item is not None else DEFINITIONS[field]
    question = item_question(item, field) if item is not None else QUESTIONS[field]
    items = "".join(f"<li><b>{html.escape(v)}</b>: {html.escape(m)}</li>" for v, m in meanings.items())
    return (f'<div class="wb-question" style="font-family: sans-serif; line-height: 1.3">'
            f'<b>Question ({html.escape(field)}):</b> {html.escape(question)}'
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
            question.value = _question_html(field, item)  # the data set's own question
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
        elif fn is undo_here and session.last_undone is not None:
            message = f'<span style="color:#a60">&#8630; {html.escape(session.undo_message())}</span>'
        refresh(message)

    def undo_here() -> None:
        session.undo(note.value)

    buttons = []
    for value, key in FIELDS[field]:
        b = w.Button(description=f"{value} [{key}]")
        b.on_click(lambda _b, v=value: act(lambda: session.label(v, note.value), saving=True))
        buttons.append(b)
    undo = w.Button(description="undo [u]")
    undo.on_click(lambda _b: act(undo_here))
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
                act(undo_here)
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

    Parameters
    ----------
    items : sequence of dict
        The sample's items.
    store : AnnotationStore
        Where labels are written.
    annotator : str
        Who labels.
    round : int
        The annotation round.
    field : str, default "support"
        The field labelled.

    Returns
    -------
    ipywidgets.Widget
        The widget to display.
    """
    return _widget(LabelSession(items, store, annotator, round, field))


def adjudicate_widget(path: str | os.PathLike[str], field: str = "support", *, adjudicator: str,
                      items: Sequence[dict[str, Any]] | None = None) -> Any:
    """The same widget over an adjudication file (:class:`AdjudicationSession`): the entry with every annotator's
    value and note, the sample's evidence when ``items`` are given, the question, and a button per allowed value;
    each decision is written into the file at once.

    Parameters
    ----------
    path : str or os.PathLike
        The adjudication file.
    field : str, default "support"
        The field decided.
    adjudicator : str
        Who decides.
    items : sequence of dict, optional
        The sample's items, for their evidence.

    Returns
    -------
    ipywidgets.Widget
        The widget to display.
    """
    return _widget(AdjudicationSession(path, field, adjudicator=adjudicator, items=items))


__all__ = ["adjudicate_widget", "label_widget"]
