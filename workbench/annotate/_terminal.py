"""The terminal labeler and adjudicator (:func:`terminal_label`, :func:`terminal_adjudicate`): the item view
(:mod:`workbench.annotate._item_views`) as lines with control characters shown as ``\\xNN``, paged, driven by keys."""

from __future__ import annotations

import os
import select
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import Any, TextIO

from workbench._util.untrusted import visible
from workbench.annotate._store import AnnotationStore

from workbench.annotate._walks import AdjudicationSession, LabelSession, _Walk
from workbench.annotate._item_views import FIELDS, item_view


# ---------------------------------------------------------------------------
# terminal


def _plain(value: object) -> str:
    """Terminal-safe text: :func:`workbench._util.untrusted.visible` (escape sequences, bidi overrides shown as \\xNN)."""
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
                self.message = self.s.undo_message() or "back to the previous item (it had no value to undo)"
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
                   field: str = "support", *, stdin: TextIO | None = None, stdout: TextIO | None = None,
                   size: tuple[int, int] | None = None) -> int:
    """Label in a terminal; returns the number of labels written.

    Each item is shown whole through a pager (``size`` = columns, rows; the terminal's by
    default): Enter pages on, ``b`` back, ``g`` to the top; the status line says which lines
    are shown and whether more follow. Answers are lines: 1-3 label, ``n`` note, ``s`` skip,
    ``u`` undo, ``q`` quit. Ctrl-C stops at once (every label is already on disk) and
    re-raises ``KeyboardInterrupt`` after saying so.

    Parameters
    ----------
    items : sequence of dict
        The sample's items.
    store : AnnotationStore
        Where the labels are appended.
    annotator : str
        Who labels.
    round : int
        The labeling round.
    field : str, default "support"
        The field labelled.
    stdin, stdout : TextIO, optional
        The terminal (default: the process's).
    size : tuple of (int, int), optional
        Columns and rows (default: the terminal's).

    Returns
    -------
    int
        Labels written.
    """
    return _Terminal(LabelSession(items, store, annotator, round, field), stdin or sys.stdin, stdout or sys.stdout,
                     size).run()


def terminal_adjudicate(path: str | os.PathLike[str], field: str = "support", *, adjudicator: str,
                        items: Sequence[dict[str, Any]] | None = None, stdin: TextIO | None = None,
                        stdout: TextIO | None = None, size: tuple[int, int] | None = None) -> int:
    """Decide an adjudication file's disagreements of ``field`` in a terminal (the same pager, keys and item view as
    :func:`terminal_label`, with every annotator's value and note); each decision is written into the file at once.
    Returns the number of decisions written.

    Parameters
    ----------
    path : str or os.PathLike
        The adjudication file.
    field : str, default "support"
        The field decided.
    adjudicator : str
        Who decides.
    items : sequence of dict, optional
        The sample's items, for their text.
    stdin, stdout : TextIO, optional
        The terminal (default: the process's).
    size : tuple of (int, int), optional
        Columns and rows (default: the terminal's).

    Returns
    -------
    int
        Decisions written.
    """
    return _Terminal(AdjudicationSession(path, field, adjudicator=adjudicator, items=items), stdin or sys.stdin,
                     stdout or sys.stdout, size).run()


__all__ = ["terminal_adjudicate", "terminal_label"]
