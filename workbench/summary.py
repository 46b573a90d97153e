"""Structured summaries: split into entries, prune whole entries, extract exact identifiers.

The host compressor of the source documents is OpenClaw's safeguard compaction
(SJC Appendix E.3). Its summary has five level-2 headings, in order: ``## Decisions``,
``## Open TODOs``, ``## Constraints/Rules``, ``## Pending user asks``,
``## Exact identifiers``. An *entry* is each bullet line under a heading (SJC Appendix F).

How each kind of line is treated (every rule has a test in ``tests/test_summary.py``):

* ``- x``, ``* x``, ``+ x`` and numbered items ``1. x`` / ``1) x`` at an indent of 0 or 1
  spaces start an entry. A bullet with no text after its marker is not an entry.
* A line indented by 2 or more spaces (or a tab) deeper than the entry's first line that
  follows an entry -- a nested bullet or a continuation paragraph -- belongs to that entry
  and goes with it when it is pruned. So does a non-blank, non-bullet line directly after an entry line (Markdown's
  lazy continuation of a wrapped line). An indented line after a blank line still
  belongs to the entry when the next non-blank line does not start a new block.
* Placeholders ``None.``, ``None captured.``, ``(none)``, ``N/A`` (as a bullet or bare
  line, any case, with or without the full stop) are not entries.
* A non-indented, non-bullet line after a blank line is prose: not an entry, kept by prune.
* Text before the first heading is a preamble: never entries (even bullets), kept by prune.
* A level-2 heading that is not one of the five is its own section, named by its text.
  A repeated heading continues the same section name; each occurrence stays in place.
  Level-1 and level-3+ headings are not section boundaries; they end an entry.
* Inside a code fence (a line starting with ``` or ~~~), ``##`` lines and bullets are
  not structure; a fence that opens as a continuation of an entry belongs to the entry,
  otherwise it is prose.
* CRLF, CR and LF line endings are all recognised; entry text never includes the line
  ending, and the source's line endings are left as they are by prune.

Other compressors (:data:`SCHEMAS`, chosen by :func:`detect_schema` or by name): Claude Code's
``/compact`` summary has numbered bold items (``1. **Primary Request and Intent**:``) as its
headings, after an ``Analysis:`` preamble, with its bullets indented under them; free text has no
fixed headings (``##`` lines and bold-only lines, when present, name sections). In both, a
paragraph is an entry too. Each section maps to one of :data:`ROLES`, so the analyses can ask
which roles carry unsupported entries whatever the compressor.

``Entry.text`` is the exact source text of the entry (its first line through its last
continuation line, with the original inner line endings), so ``text in summary`` always
holds and pruning is a matter of deleting whole line ranges.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


from workbench.schema import SECTIONS

__all__ = ["ROLES", "SCHEMAS", "Entry", "Schema", "detect_schema",
           "headings", "normalise", "parse", "prune", "render",
           "section_name"]

_HEADING = re.compile(r"^ {0,3}##[ \t]+(?P<title>.*?)[ \t]*#*[ \t]*$")
_OTHER_HEADING = re.compile(r"^ {0,3}(#|#{3,6})([ \t]|$)")
_BULLET = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>[-*+]|\d{1,9}[.)])(?:[ \t]+(?P<body>.*))?$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_PLACEHOLDER = re.compile(r"^\(?\s*(none( captured| yet| so far)?|n/?a|nothing( yet)?)\s*\)?\.?$", re.IGNORECASE)
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")

_CANONICAL = {s.lower(): s for s in SECTIONS}


@dataclass(frozen=True)
class Entry:
    """One summary entry: the section it stands under, its 0-based order, its exact text.

    ``start`` and ``end`` are character offsets of the entry's lines in the summary
    (``summary[start:end] == text``); ``line`` is its 1-based first line number.
    """

    section: str
    position: int
    text: str
    start: int
    end: int
    line: int
    #: what the section is for in the analyses (one of :data:`ROLES`) and the schema that parsed it
    role: str = "other"
    schema: str = "openclaw"

    @property
    def body(self) -> str:
        """The entry without its bullet marker, on one line (for judges and matching)."""
        first, *rest = self.text.splitlines()
        m = _BULLET.match(first)
        head = (m.group("body") or "") if m else first.strip()
        return " ".join([head.strip(), *(r.strip() for r in rest if r.strip())]).strip()


@dataclass(frozen=True)
class _Line:
    text: str  # without terminator
    start: int  # offset of the line
    end: int  # offset after the text (before the terminator)
    stop: int  # offset after the terminator
    number: int


def _lines(text: str) -> list[_Line]:
    out: list[_Line] = []
    pos = 0
    number = 1
    n = len(text)
    while pos < n:
        m = _LINE.match(text, pos)
        assert m is not None
        raw = m.group(0)
        body = raw.rstrip("\r\n")
        out.append(_Line(body, pos, pos + len(body), m.end(), number))
        pos = m.end()
        number += 1
    return out


def section_name(title: str) -> str:
    """The canonical name of a heading's title (one of :data:`SECTIONS` or the title itself)."""
    return _CANONICAL.get(re.sub(r"\s+", " ", title.strip()).lower(), title.strip())


def _indent_width(s: str) -> int:
    width = 0
    for ch in s:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4
        else:
            break
    return width


#: what a section is for in the analyses: the record of what happened, open work and pending asks (SJC's
#: forward-looking entries), constraints, exact identifiers, the user's own words, anything else
ROLES = ("history", "forward", "constraints", "identifiers", "user_messages", "other")


@dataclass(frozen=True)
class Schema:
    """How one compressor writes its summaries: how a heading looks, and each section's role.

    ``roles`` maps a section name to one of :data:`ROLES` (unknown sections: ``default_role``);
    ``prose_entries`` makes a paragraph under a heading an entry of its own (OpenClaw's prose is
    not: only its bullets are entries).
    """

    name: str
    roles: dict[str, str]
    prose_entries: bool = False
    default_role: str = "other"
    first_section: str | None = None  # the section before any heading (None: text there is preamble)

    def role(self, section: str) -> str:
        return self.roles.get(section, self.default_role)


#: Claude Code's /compact summary: an optional ``Analysis:`` preamble, then numbered bold items
_CLAUDE_HEADING = re.compile(r"^ {0,3}\d{1,2}\.[ \t]+\*\*(?P<title>[^*\n]+?)\*\*[ \t]*:?.*$")
#: a line that is bold text only ("**Summary of the set:**"), the headings of free-text summaries
_BOLD_LINE = re.compile(r"^ {0,3}\*\*(?P<title>[^*\n]+?):?\*\*:?[ \t]*$")

SCHEMAS: dict[str, Schema] = {
    "openclaw": Schema("openclaw", {"Decisions": "history", "Open TODOs": "forward", "Constraints/Rules": "constraints",
                                    "Pending user asks": "forward", "Exact identifiers": "identifiers"}),
    "claude_code": Schema("claude_code", {
        "Primary Request and Intent": "constraints", "Key Technical Concepts": "history",
        "Files and Code Sections": "identifiers", "Errors and fixes": "history", "Problem Solving": "history",
        "All user messages": "user_messages", "Pending Tasks": "forward", "Current Work": "history",
        "Optional Next Step": "forward"}, prose_entries=True),
    "free_text": Schema("free_text", {}, prose_entries=True, first_section="Summary"),
}


def detect_schema(text: str) -> str:
    """The schema a summary is written in: ``openclaw`` when one of its ``##`` headings is one of OpenClaw's
    five sections, ``claude_code`` when it has two or more numbered bold items (``1. **Title**:``), else
    ``free_text`` (whose ``##`` headings and bold-only lines, if any, name sections)."""
    lines = [ln.text for ln in _lines(text)]
    if any((m := _HEADING.match(t)) and section_name(m.group("title")) in SECTIONS for t in lines):
        return "openclaw"
    if sum(1 for t in lines if _CLAUDE_HEADING.match(t)) >= 2:
        return "claude_code"
    return "free_text"


def _heading_of(schema: str, line: str) -> str | None:
    if schema == "openclaw":
        m = _HEADING.match(line)
        return section_name(m.group("title")) if m else None
    if schema == "claude_code":
        m = _CLAUDE_HEADING.match(line)
        return re.sub(r"\s+", " ", m.group("title").strip()) if m else None
    m = _HEADING.match(line) or _BOLD_LINE.match(line)
    return re.sub(r"\s+", " ", m.group("title").strip()) if m else None


def parse(text: str, schema: str = "auto") -> list[Entry]:
    """Split a structured summary into its entries (see the module docstring for the rules).

    ``schema`` is one of :data:`SCHEMAS` or ``"auto"`` (:func:`detect_schema`); each entry
    carries the schema used and its section's role. For OpenClaw's schema every rule of the
    module docstring applies; Claude Code's numbered bold items and free-text bold lines are
    headings too, and under them (or, in free text, anywhere) a paragraph is an entry as well.
    """
    name = detect_schema(text) if schema == "auto" else schema
    if name not in SCHEMAS:
        raise ValueError(f"schema: expected 'auto' or one of {list(SCHEMAS)}, got {schema!r}")
    sch = SCHEMAS[name]
    lines = _lines(text)
    entries: list[Entry] = []
    section: str | None = sch.first_section
    # the entry being built: (section, first line index, last line index)
    current: list[int] | None = None
    current_section = ""
    in_fence = False
    fence_owned = False  # the open fence continues the current entry
    blank_since = False  # a blank line since the current entry's last line

    def close() -> None:
        nonlocal current
        if current is not None:
            first, last = lines[current[0]], lines[current[1]]
            entries.append(Entry(current_section, len(entries), text[first.start:last.end], first.start, last.end,
                                 first.number, sch.role(current_section), name))
        current = None

    for i, ln in enumerate(lines):
        s = ln.text
        if in_fence:
            if fence_owned and current is not None:
                current[1] = i
            if _FENCE.match(s):
                in_fence = False
            continue
        if not s.strip():
            blank_since = True
            continue
        if _FENCE.match(s):
            in_fence = True
            owned = current is not None and (not blank_since or _indent_width(s) >= 2)
            fence_owned = owned
            if owned:
                assert current is not None
                current[1] = i
                blank_since = False
            else:
                close()
            continue
        heading = _heading_of(name, s)
        if heading is not None:
            close()
            section = heading
            blank_since = False
            continue
        if _OTHER_HEADING.match(s) or (name != "openclaw" and _HEADING.match(s)):
            close()
            continue
        if section is None:
            continue  # preamble
        bullet = _BULLET.match(s)
        indent = _indent_width(s)
        if current is not None and indent >= _indent_width(lines[current[0]].text) + 2:
            current[1] = i  # nested bullet or indented continuation (deeper than the entry's own line)
            blank_since = False
            continue
        if bullet:
            close()
            body = (bullet.group("body") or "").strip()
            if not body or _PLACEHOLDER.match(body):
                continue
            current = [i, i]
            current_section = section
            blank_since = False
            continue
        if current is not None and not blank_since and not _PLACEHOLDER.match(s.strip()):
            current[1] = i  # lazy continuation of a wrapped line
            continue
        close()  # prose or a bare placeholder
        if sch.prose_entries and not _PLACEHOLDER.match(s.strip()):
            current = [i, i]  # a paragraph is an entry in this schema
            current_section = section
            blank_since = False
    close()
    return entries


def prune(text: str, keep: Iterable[int], schema: str = "auto", *, entries: Sequence[Entry] | None = None) -> str:
    """Delete every entry whose position is not in ``keep``; everything else stays byte-identical.

    Headings, preamble, prose and placeholders are never removed, so every heading of
    the candidate stays in order; the result is never longer than the input, and
    ``parse(prune(text, keep))`` gives exactly the kept entries, in order (SJC Eq. 1's
    constraint that the committed summary is a sub-summary of the candidate).
    """
    keep_set = set(keep)
    if entries is None:  # a caller that parsed ``text`` already passes its entries (parsed once per run)
        entries = parse(text, schema)
    unknown = keep_set - {e.position for e in entries}
    if unknown:
        raise ValueError(f"keep names positions with no entry: {sorted(unknown)} (summary has {len(entries)} entries)")
    stop_after = {ln.end: ln.stop for ln in _lines(text)}
    pieces: list[str] = []
    pos = 0
    for e in entries:
        if e.position not in keep_set:
            # the entry's lines from its first line's start through its last line's terminator
            pieces.append(text[pos:e.start])
            pos = stop_after[e.end]
    pieces.append(text[pos:])
    return "".join(pieces)


def render(sections: dict[str, Sequence[str]], *, newline: str = "\n", placeholder: str | None = "None.") -> str:
    """Write a five-section OpenClaw summary from bullet texts per section.

    Sections are written in :data:`SECTIONS` order (then any other, in the given order);
    an empty section gets the placeholder line unless ``placeholder`` is None.
    """
    order = [s for s in SECTIONS] + [s for s in sections if s not in SECTIONS]
    blocks: list[str] = []
    for name in order:
        items = list(sections.get(name, ()))
        lines = [f"## {name}"]
        lines += [f"- {item}" for item in items]
        if not items and placeholder is not None:
            lines.append(placeholder)
        blocks.append(newline.join(lines))
    return (newline + newline).join(blocks) + newline


def headings(text: str) -> list[str]:
    """The level-2 headings of a summary, in order, outside code fences."""
    out: list[str] = []
    in_fence = False
    for ln in _lines(text):
        if _FENCE.match(ln.text):
            in_fence = not in_fence
            continue
        if not in_fence:
            m = _HEADING.match(ln.text)
            if m:
                out.append(section_name(m.group("title")))
    return out


# ---------------------------------------------------------------------------
# the entries table


def normalise(text: str) -> str:
    """Entry text for matching across summaries: bullet marker dropped, whitespace folded, lower case."""
    first, *rest = text.splitlines() or [""]
    m = _BULLET.match(first)
    head = (m.group("body") or "") if m else first
    return " ".join(" ".join([head, *rest]).split()).lower()
