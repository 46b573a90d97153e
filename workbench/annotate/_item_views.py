"""What an annotator sees of one item, decided once for every interface: :func:`item_view` (the entry, its
section, the task, the previous summary, every evidence passage in full with its source, the question worded as in
``annotations/PROTOCOL.md``, and for ``correct`` the evaluation material, ``workbench.annotate._evaluation``), and
:func:`render_item_html`, which escapes every piece of it (``html.escape`` with quotes) into ``<pre>`` blocks. The
JupyterLab widget (:mod:`workbench.annotate._widget`), the terminal (:mod:`workbench.annotate._terminal`) and Label
Studio's interface (:mod:`workbench.annotate._labelstudio`) show this view."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.annotate._evaluation import NO_MATERIAL
from workbench._util.untrusted import visible


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


#: what each value means when the data set asks its own question (a labelled-summaries header's ``question``):
#: the answer to that question, with none of the agent protocol's wording about tool results
OWN_DEFINITIONS: dict[str, str] = {
    "supported": "yes: the answer to the question above is yes for this entry.",
    "unsupported": "no: the answer to the question above is no for this entry.",
    "unsure": "the material shown is not enough to decide; use sparingly and add a note.",
}


def has_own_question(item: Mapping[str, Any], field: str = "support") -> bool:
    """Whether ``item`` carries its data set's own question for ``field`` (only ``support`` can have one)."""
    own = item.get("question") if field == "support" else None
    return isinstance(own, str) and bool(own.strip())


def item_definitions(item: Mapping[str, Any], field: str = "support") -> dict[str, str]:
    """What each value of ``field`` means for ``item``: ``OWN_DEFINITIONS`` under a data set's own question,
    else the protocol's (:data:`DEFINITIONS`)."""
    return OWN_DEFINITIONS if has_own_question(item, field) else DEFINITIONS[field]


def item_question(item: Mapping[str, Any], field: str = "support") -> str:
    """The question an annotator answers for ``item``: the data set's own (a labelled-summaries header's
    ``question``, carried by each sample item) for ``support``, else the protocol's (:data:`QUESTIONS`: SJC's agent
    question for logs)."""
    return str(item["question"]) if has_own_question(item, field) else QUESTIONS[field]


def definitions_text(field: str, item: Mapping[str, Any] | None = None) -> str:
    """The field's values and their meanings, one line each (for ``item``: ``item_definitions``)."""
    meanings = item_definitions(item, field) if item is not None else DEFINITIONS[field]
    return "\n".join(f"{value}: {meaning}" for value, meaning in meanings.items())


@dataclass(frozen=True)
class Block:
    """One titled piece of an item view; ``text`` is untrusted and shown verbatim (escaped)."""

    title: str
    text: str
    kind: str = "text"  # entry | text | evidence | material | question | notice


def item_view(item: dict[str, Any], field: str = "support", *, question: bool = True) -> list[Block]:
    """What an annotator sees for ``item`` when labeling ``field``, in order; the question last unless the
    interface shows it elsewhere (``question=False``: the widget keeps it above the item, beside the buttons).
    An adjudication record's ``labels`` (each annotator's value and note) follow the entry.

    Parameters
    ----------
    item : dict
        A sample's item.
    field : str, default "support"
        The field labelled.
    question : bool, default True
        End with the question.

    Returns
    -------
    list of Block
        The view's titled pieces; their text is untrusted and shown escaped.
    """
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
        blocks.append(Block(f"Question ({field})", item_question(item, field) + "\n\n" + definitions_text(field, item),
                            "question"))
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
    Control and bidi characters are shown first (:func:`workbench._util.untrusted.visible`): U+202E in ``INV-\u202e4301``
    would make it read ``INV-1034``."""
    return _TOKEN.sub(lambda m: f'<span style="white-space: nowrap">{m.group(0)}</span>',
                      html.escape(visible(text), quote=True))


def render_item_html(item: dict[str, Any], field: str = "support", *, question: bool = True) -> str:
    """The HTML a labeler sees for one sample item; every value is escaped.

    Parameters
    ----------
    item : dict
        A sample's item.
    field : str, default "support"
        The field labelled.
    question : bool, default True
        End with the question.

    Returns
    -------
    str
        The HTML.
    """
    parts = ['<div class="wb-item" style="font-family: sans-serif">',
             f'<div>Item <code>{html.escape(visible(_str(item.get("item_id"))), quote=True)}</code></div>']
    for b in item_view(item, field, question=question):
        parts.append(f'<div class="wb-block wb-{b.kind}"><b>{_escaped(b.title)}</b>'
                     f'<pre style="{_PRE}; {_STYLE[b.kind]}">{_escaped(b.text)}</pre></div>')
    parts.append("</div>")
    return "\n".join(parts)


__all__ = ["DEFINITIONS", "FIELDS", "item_view", "QUESTIONS", "render_item_html"]
