"""Structured summaries: the grammar that splits them into entries, delete-only pruning, rendering.

Applying it to a compactions table (the entries table, streamed to disk) is :mod:`workbench.summaries._entries`; the
exact-identifier rules are :mod:`workbench.summaries._identifiers`.

The host compressor of the source documents is OpenClaw's safeguard compaction
(SJC Appendix E.3). Its summary has five level-2 headings, in order: ``## Decisions``,
``## Open TODOs``, ``## Constraints/Rules``, ``## Pending user asks``,
``## Exact identifiers``. An *entry* is each bullet line under a heading (SJC Appendix F).

How each kind of line is treated (every rule has a test in ``tests/summaries/test_summary.py``):

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

Other compressors (:data:`SCHEMAS`, chosen by :func:`detect_schema` or by name). Free text has no fixed
headings (``##`` lines and bold-only lines, when present, name sections); a paragraph is an entry too.
Claude Code's compaction summary (``claude_code``; every shape below has a fixture in
``tests/fixtures/claude_summaries/``, whose README says where it was seen, and a test in
``tests/summaries/test_summary_claude_code.py``):

* Only the model's summary proper is read: the client's header (``This session is being continued ...``),
  the model's ``Analysis:`` part (or ``<analysis>`` tags) up to ``Summary:`` (or ``<summary>``), and the
  client's trailer (``If you need specific details from before compaction ...``, ``Please continue the
  conversation ...``, ``Continue the conversation from where it left off ...``) are never entries; prune
  keeps them as they are. The Analysis is the model's chronological notes before it writes the summary: its
  numbered bold items and ``##`` lines are not sections.
* Section titles come in five forms, any case: ``1. **Title**:``, ``1. **Title:**``, ``1. Title:`` (plain,
  only for the nine known titles, ``CLAUDE_SECTIONS``), ``## 1. Title`` and ``## 1. Title:``. A numbered
  bold item with an unknown title is a section only when it continues the numbering of the summary's
  numbered titles and no numbered item has come since (``3. **Design Decisions**:`` after section 2); under a
  section, ``1. **Neo4j mocking not applied**:`` is an entry of that section.
* Text after a title on its line (``8. **Current Work**: Editing ...``) is an entry; prune removes it and
  leaves the title.
* A markdown heading below the titles' level (``### path/to/file.py`` under Files and Code Sections) starts one
  entry with everything under it, up to the next heading or title. A bold-only line (``**Current state**:``)
  is a label, not an entry; a bold lead-in with text (``**Last action**: restarted ...``) is a paragraph.
* A fence closes on its own line or at the end of a code line (``...return -1;`````); an unclosed fence ends
  at the next known section title, so one odd fence cannot swallow the sections after it.

Each section maps to one of :data:`ROLES`, so the analyses can ask which roles carry unsupported entries
whatever the compressor.

``Entry.text`` is the exact source text of the entry (its first line through its last
continuation line, with the original inner line endings), so ``text in summary`` always
holds and pruning is a matter of deleting line ranges (or, after a title, the rest of its line).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple


from workbench.tables._vocabulary import SECTIONS

__all__ = ["ROLES", "SCHEMAS", "Entry", "Schema", "detect_schema", "headings", "parse", "prune", "render"]

_HEADING = re.compile(r"^ {0,3}##[ \t]+(?P<title>.*?)[ \t]*#*[ \t]*$")
_OTHER_HEADING = re.compile(r"^ {0,3}(#|#{3,6})([ \t]|$)")
_BULLET = re.compile(r"^(?P<indent>[ \t]*)(?P<marker>[-*+]|\d{1,9}[.)])(?:[ \t]+(?P<body>.*))?$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_FENCE_LINE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*(?P<info>[A-Za-z0-9_+#][^`]*?)?[ \t.]*$")  # "```." closes


def _fence_depth(depth: int, line: str) -> int:
    """The fence nesting after ``line`` inside a fence at ``depth`` (>= 1): a fence with a language tag opens a
    block inside the block (a summary quoting a README whose ``bash`` block is inside its ``markdown`` one), a bare
    fence closes the innermost one. CommonMark would close the outer block at the first bare fence; a summary's
    writer means the nesting, and reading it so keeps the quoted README's ``# comment`` lines out of the
    sections."""
    m = _FENCE_LINE.match(line)
    if m is None:
        return depth
    return depth + 1 if m.group("info") else depth - 1
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


class _Line(NamedTuple):
    text: str  # without terminator
    start: int  # offset of the line
    end: int  # offset after the text (before the terminator)
    stop: int  # offset after the terminator
    number: int


def _lines(text: str) -> list[_Line]:
    """The lines of ``text`` (terminated by \\r\\n, \\r or \\n, or by the end), with their offsets."""
    out: list[_Line] = []
    n = len(text)
    for number, m in enumerate(_LINE.finditer(text), start=1):
        start, stop = m.span()
        if start == n:  # the empty match at the very end
            break
        body = m.group(0).rstrip("\r\n")
        out.append(_Line(body, start, start + len(body), stop, number))
    return out


@lru_cache(maxsize=4096)
def section_name(title: str) -> str:
    """The canonical name of a heading's title (one of :data:`~workbench.tables.SECTIONS` or the title itself)."""
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


#: a line that is bold text only ("**Summary of the set:**"), the headings of free-text summaries
_BOLD_LINE = re.compile(r"^ {0,3}\*\*(?P<title>[^*\n]+?):?\*\*:?[ \t]*$")

#: the nine sections Claude Code's compaction prompt asks for, by their lower-case title (models vary the case)
CLAUDE_SECTIONS = ("Primary Request and Intent", "Key Technical Concepts", "Files and Code Sections",
                   "Errors and fixes", "Problem Solving", "All user messages", "Pending Tasks", "Current Work",
                   "Optional Next Step")
_CLAUDE_CANONICAL = {t.lower(): t for t in CLAUDE_SECTIONS}

#: a section title in any of the forms real summaries use: ``1. **T**:``, ``1. **T:**``, ``1. T:``,
#: ``## 1. T``, ``## 1. T:``, ``### T`` (``rest`` is text after the title on the same line)
_CC_TITLE = re.compile(
    r"^(?P<indent>[ \t]*)(?:(?P<hashes>#{1,6})[ \t]+)?(?:(?P<number>\d{1,2})[.)][ \t]+)?"
    r"(?:\*\*(?P<bold>[^*\n]+?)[ \t]*(?P<colon_in>:)?\*\*(?P<colon_out>:)?[ \t]*(?P<rest>.*?)"
    r"|(?P<plain>[^*\n:]+?)[ \t]*(?P<colon>:)?)[ \t]*$")
#: a qualifier after a section title, ``(most recent, verbatim)``, on its own or after a bold title
_QUALIFIED = re.compile(r"[ \t]*\([^()\n]*\)[ \t]*$")
_QUALIFIER = re.compile(r"^\([^()\n]*\)[ \t]*(?P<colon>:)?[ \t]*$")
#: the client's lines around the model's summary (Claude Code writes them; they are not the summary's entries)
_CC_HEADER = re.compile(r"^\s*This session is being continued from a previous conversation\b")
_CC_TRAILER = re.compile(r"^\s*(If you need specific details from before compaction|Please continue the conversation "
                         r"from where we left|Continue the conversation from where it left off|Recent messages are "
                         r"preserved verbatim)")
#: the header sentence as written on one line with the summary after it (a short free-text summary)
_CC_HEADER_SENTENCE = re.compile(r"^\s*This session is being continued from a previous conversation[^.\n]*\.?"
                                 r"(?:[ \t]*The conversation is summari[sz]ed below:?)?(?:[ \t]*Summary:)?[ \t]*",
                                 re.IGNORECASE)
_CC_ANALYSIS = re.compile(r"^\s*(Analysis:|<analysis>)\s*$", re.IGNORECASE)
_CC_SUMMARY = re.compile(r"^\s*(Summary:|<summary>)\s*$", re.IGNORECASE)
_CC_TAG = re.compile(r"^\s*</?(analysis|summary)>\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class _Title:
    """A Claude Code section title found on a line: its name, whether the line is a markdown heading and its
    level (``#`` count; 2 for numbered items), number, whether it is one of ``CLAUDE_SECTIONS``, and where
    text after it starts (or None)."""

    name: str
    heading: bool
    level: int
    number: int | None
    known: bool
    rest: int | None


def _claude_title(line: str) -> _Title | None:
    """The title on ``line`` if it is written as a Claude Code section title (known or not), else None.

    A markdown heading is always a title (a candidate: :func:`_claude_regions` decides by level); a numbered
    bold item is one (``1. **X**:``); a plain numbered line only with a known title (``1. Current Work:``), since
    ``1. Fixed the bug:`` is an ordinary numbered entry.
    """
    m = _CC_TITLE.match(line)
    if m is None or _indent_width(m.group("indent")) > 3:
        return None
    raw = m.group("bold") or m.group("plain") or ""
    name = re.sub(r"\s+", " ", raw.strip().rstrip(":")).strip()
    if not name:
        return None
    colon = m.group("colon_in") or m.group("colon_out") or m.group("colon")
    rest = m.group("rest") or ""
    if m.group("bold") and (q := _QUALIFIER.match(rest)) is not None:  # **All user messages** (verbatim):
        rest, colon = "", q.group("colon") or colon
    base = _QUALIFIED.sub("", name)  # "All user messages (most recent, verbatim)": the title before its qualifier
    canonical = _CLAUDE_CANONICAL.get(name.lower()) or _CLAUDE_CANONICAL.get(base.lower())
    number = int(m.group("number")) if m.group("number") else None
    if m.group("hashes"):
        if rest and not m.group("bold"):
            return None
        return _Title(canonical or name, True, len(m.group("hashes")), number, canonical is not None,
                      m.start("rest") if rest else None)
    if number is None:
        return None
    if rest and not colon:
        return None  # "1. **Note** that ..." is an entry
    if m.group("bold"):
        return _Title(canonical or name, False, 2, number, canonical is not None, m.start("rest") if rest else None)
    if canonical is not None and not rest:
        return _Title(canonical, False, 2, number, True, None)
    return None


def _claude_regions(lines: list[_Line]) -> tuple[int, int]:
    """(first line of the summary proper, first line after it): the client's header and trailer and the model's
    ``Analysis:`` part lie outside ``[start, stop)``."""
    start, stop, analysis = 0, len(lines), -1
    summary_at = next((i for i, ln in enumerate(lines) if _CC_SUMMARY.match(ln.text)), None)
    for i, ln in enumerate(lines):
        if _CC_ANALYSIS.match(ln.text) and (summary_at is None or i < summary_at):
            analysis = i
            break
    if summary_at is not None:
        start = summary_at + 1
    elif analysis >= 0:  # an Analysis with no Summary: line runs to the first known section title
        start = next((i for i in range(analysis + 1, len(lines))
                      if (t := _claude_title(lines[i].text)) is not None and t.known), len(lines))
    else:
        header = next((i for i, ln in enumerate(lines) if _CC_HEADER.match(ln.text)), None)
        if header is not None:
            start = header + 1
    # the trailer is the client's last lines: walk up from the end over blocks of non-blank lines; a block belongs
    # to the trailer from its first trailer sentence on (an export may wrap that sentence over two lines), and the
    # first block with no trailer sentence is the summary's own (a quoted "Please continue ..." inside it stays)
    i = len(lines) - 1
    while i >= start:
        if not lines[i].text.strip():
            i -= 1
            continue
        j = i
        while j - 1 >= start and lines[j - 1].text.strip() and not _CC_TRAILER.match(lines[j].text):
            j -= 1
        if not _CC_TRAILER.match(lines[j].text):
            break
        stop, i = j, j - 1
    return start, stop


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
    five sections; ``claude_code`` when it carries Claude Code's header (``This session is being continued
    ...``) or a ``Summary:`` line with a section title after it, or two of the nine known section titles in any
    form, or two numbered bold items; else ``free_text`` (whose ``##`` headings and bold-only lines, if any,
    name sections).

    Parameters
    ----------
    text : str
        The summary.

    Returns
    -------
    str
        ``"openclaw"``, ``"claude_code"`` or ``"free_text"``.
    """
    return _detect_schema(_lines(text))


def _detect_schema(lines: list[_Line]) -> str:
    texts = [ln.text for ln in lines]
    if any((m := _HEADING.match(t)) and section_name(m.group("title")) in SECTIONS for t in texts):
        return "openclaw"
    titles = [t for line in texts if (t := _claude_title(line)) is not None]
    if any(_CC_HEADER.match(t) for t in texts) and titles:
        return "claude_code"
    if sum(t.known for t in titles) >= 2 or sum(not t.heading for t in titles) >= 2:  # known, or numbered items
        return "claude_code"
    if any(_CC_SUMMARY.match(t) for t in texts) and any(t.known for t in titles):
        return "claude_code"
    return "free_text"


def _heading_of(schema: str, line: str) -> str | None:
    if schema == "openclaw":
        m = _HEADING.match(line)
        return section_name(m.group("title")) if m else None
    m = _HEADING.match(line) or _BOLD_LINE.match(line)
    return re.sub(r"\s+", " ", m.group("title").strip()) if m else None


def parse(text: str, schema: str = "auto") -> list[Entry]:
    """Split a structured summary into its entries (see the module docstring for the rules).

    ``schema`` is one of :data:`SCHEMAS` or ``"auto"`` (:func:`detect_schema`); each entry
    carries the schema used and its section's role. For OpenClaw's schema every rule of the
    module docstring applies; Claude Code's summaries follow their own rules there (titles in five forms,
    only the summary proper between the client's lines); in free text, bold lines are headings too, and
    a paragraph is an entry as well.

    Parameters
    ----------
    text : str
        The summary.
    schema : str, default "auto"
        The schema it is written in.

    Returns
    -------
    list of Entry
        Its entries in order: section, position, text, role, schema.

    Examples
    --------
    >>> from workbench.summaries import parse
    >>> text = "## Decisions\\n- Paid INV-104.\\n## Open TODOs\\n- Pay INV-221.\\n"
    >>> [(e.section, e.position, e.text) for e in parse(text)]
    [('Decisions', 0, '- Paid INV-104.'), ('Open TODOs', 1, '- Pay INV-221.')]
    """
    return list(_parse(text, schema))


@lru_cache(maxsize=1 << 14)
def _parse(text: str, schema: str) -> tuple[Entry, ...]:
    """:func:`parse`, remembered for the last 16,384 texts (entries are immutable; a log repeats summaries: the
    testbed's 23,398 compactions have 15,601 distinct ones)."""
    lines = _lines(text)  # once: the schema is detected on the same lines
    name = _detect_schema(lines) if schema == "auto" else schema
    if name not in SCHEMAS:
        raise ValueError(f"schema: expected 'auto' or one of {list(SCHEMAS)}, got {schema!r}")
    sch = SCHEMAS[name]
    if name == "claude_code":
        return tuple(_parse_claude(text, lines, sch))
    entries: list[Entry] = []
    section: str | None = sch.first_section
    # the client's header and trailer are never entry text, whatever the schema: a header line's text after the
    # header sentence starts at ``skip``; the trailer's lines are not read
    skip: dict[int, int] = {}
    for i, ln in enumerate(lines):
        if (m := _CC_HEADER_SENTENCE.match(ln.text)) is not None:
            skip[i] = m.end()
    _, stop = _claude_regions(lines) if skip or any(_CC_TRAILER.match(ln.text) for ln in lines) else (0, len(lines))
    # the entry being built: (section, first line index, last line index)
    current: list[int] | None = None
    current_section = ""
    in_fence = False
    depth = 0  # fences open inside the current one (see _fence_depth)
    fence_owned = False  # the open fence continues the current entry
    blank_since = False  # a blank line since the current entry's last line

    def close() -> None:
        nonlocal current
        if current is not None:
            first, last = lines[current[0]], lines[current[1]]
            begin = first.start + skip.get(current[0], 0)
            entries.append(Entry(current_section, len(entries), text[begin:last.end], begin, last.end,
                                 first.number, sch.role(current_section), name))
        current = None

    for i, ln in enumerate(lines):
        if i >= stop:
            break
        s = ln.text[skip[i]:] if i in skip else ln.text
        if in_fence:
            if fence_owned and current is not None:
                current[1] = i
            depth = _fence_depth(depth, s)
            in_fence = depth > 0
            continue
        if not s.strip():
            blank_since = True
            continue
        if _FENCE.match(s):
            in_fence, depth = True, 1
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
    return tuple(entries)


def _parse_claude(text: str, lines: list[_Line], sch: Schema) -> list[Entry]:
    """Claude Code's summary (see the module docstring): only the lines between the client's header or the
    model's ``Summary:`` line and the client's trailer are read; section titles in every real form open sections,
    sub-headings (``### path``) open one entry that runs to the next heading, bold-only lines are labels."""
    begin, stop = _claude_regions(lines)
    entries: list[Entry] = []
    section: str | None = None
    title_level = 2
    last_number: int | None = None
    numbered_since_title = False
    headed = False  # the summary's titles are markdown headings (## 1. Title)
    current: list[int] | None = None  # [first line, last line, start offset]
    current_section = ""
    block = False  # the current entry is a sub-heading and everything under it
    in_fence = fence_owned = blank_since = False
    depth = 0  # fences open inside the current one (see _fence_depth)

    def close() -> None:
        nonlocal current, block
        if current is not None:
            first, last = lines[current[0]], lines[current[1]]
            entries.append(Entry(current_section, len(entries), text[current[2]:last.end], current[2], last.end,
                                 first.number, sch.role(current_section), sch.name))
        current, block = None, False

    def opens_section(t: _Title, line: str) -> bool:
        if t.known:
            return True
        if t.heading:  # a markdown heading: a section at the titles' level, a sub-heading below it
            return t.level <= title_level
        if _indent_width(line) > 1 or headed:
            return False  # a numbered bold item is a title only in a summary whose titles are numbered items
        return section is None and t.number == 1 or (
            last_number is not None and t.number == last_number + 1 and not numbered_since_title)

    for i in range(begin, stop):
        ln = lines[i]
        s = ln.text
        title = _claude_title(s)
        if in_fence:
            if title is not None and title.known and title.rest is None:
                in_fence = False  # an unclosed fence does not swallow the sections after it
            else:
                if fence_owned and current is not None:
                    current[1] = i
                if _FENCE_LINE.match(s):
                    depth = _fence_depth(depth, s)  # a tagged fence nests, a bare one closes
                    in_fence = depth > 0
                elif s.rstrip().rstrip(".").endswith(("```", "~~~")):
                    depth -= 1  # a closing fence glued to the end of a code line
                    in_fence = depth > 0
                continue
        if not s.strip():
            blank_since = True
            continue
        if _CC_TAG.match(s) or _CC_SUMMARY.match(s):
            close()
            continue
        if title is not None and opens_section(title, s):
            close()
            section = title.name
            if title.heading:
                title_level, headed = title.level, True
            last_number, numbered_since_title = title.number, False
            blank_since = False
            if title.rest is not None:  # "1. **Current Work**: text" -- the text is an entry of its own
                current = [i, i, ln.start + title.rest]
                current_section = section
            continue
        if _FENCE.match(s):
            in_fence, depth = True, 1
            fence_owned = current is not None and (block or not blank_since or _indent_width(s) >= 2)
            if fence_owned:
                assert current is not None
                current[1] = i
                blank_since = False
            else:
                close()
            if s.strip().count("```") >= 2 or s.strip().count("~~~") >= 2:
                in_fence = False  # ```one line```
            continue
        if section is None:
            continue  # nothing before the first title is an entry
        if _HEADING.match(s) or _OTHER_HEADING.match(s):
            close()  # a sub-heading (### path): one entry with everything under it
            current, block = [i, i, ln.start], True
            current_section = section
            blank_since = False
            continue
        if _BOLD_LINE.match(s):
            close()  # a label ("**Current state**:"): structure, not an entry
            continue
        if block and current is not None:
            current[1] = i
            blank_since = False
            continue
        bullet = _BULLET.match(s)
        indent = _indent_width(s)
        if current is not None and indent >= _indent_width(lines[current[0]].text) + 2 and current[2] == \
                lines[current[0]].start:
            current[1] = i
            blank_since = False
            continue
        if bullet:
            close()
            if bullet.group("marker")[0].isdigit():
                numbered_since_title = True
            body = (bullet.group("body") or "").strip()
            if not body or _PLACEHOLDER.match(body):
                continue
            current = [i, i, ln.start]
            current_section = section
            blank_since = False
            continue
        if current is not None and not blank_since and not _PLACEHOLDER.match(s.strip()):
            current[1] = i
            continue
        close()
        if not _PLACEHOLDER.match(s.strip()):
            current = [i, i, ln.start]
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

    Parameters
    ----------
    text : str
        The candidate summary.
    keep : iterable of int
        The positions of the entries kept.
    schema : str, default "auto"
        The schema it is written in.
    entries : sequence of Entry, optional
        ``parse(text, schema)`` when the caller has it.

    Returns
    -------
    str
        The committed summary.

    Examples
    --------
    >>> from workbench.summaries import prune
    >>> text = "## Decisions\\n- Paid INV-104.\\n- Skip disputed invoices.\\n## Open TODOs\\n- Pay INV-221.\\n"
    >>> print(prune(text, keep={0, 2}), end="")
    ## Decisions
    - Paid INV-104.
    ## Open TODOs
    - Pay INV-221.
    """
    keep_set = set(keep)
    if entries is None:  # a caller that parsed ``text`` already passes its entries (parsed once per run)
        entries = parse(text, schema)
    unknown = keep_set - {e.position for e in entries}
    if unknown:
        raise ValueError(f"keep names positions with no entry: {sorted(unknown)} (summary has {len(entries)} entries)")
    lines = _lines(text)
    stop_after = {ln.end: ln.stop for ln in lines}
    line_starts = {ln.start for ln in lines}
    pieces: list[str] = []
    pos = 0
    for e in entries:
        if e.position not in keep_set:
            # the entry's lines from its first line's start through its last line's terminator; an entry that
            # starts after a title on its line ("1. **Current Work**: text") goes without the line's end
            pieces.append(text[pos:e.start])
            pos = stop_after[e.end] if e.start in line_starts else e.end
    pieces.append(text[pos:])
    return "".join(pieces)


def render(sections: dict[str, Sequence[str]], *, newline: str = "\n", placeholder: str | None = "None.") -> str:
    """Write a five-section OpenClaw summary from bullet texts per section.

    Sections are written in :data:`~workbench.tables.SECTIONS` order (then any other, in the given order);
    an empty section gets the placeholder line unless ``placeholder`` is None.

    Parameters
    ----------
    sections : dict of str to sequence of str
        Bullet texts per section.
    newline : str, default "\\n"
        The line ending.
    placeholder : str or None, default "None."
        The line of an empty section.

    Returns
    -------
    str
        The summary.
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
    """The level-2 headings of a summary, in order, outside code fences.

    Parameters
    ----------
    text : str
        The summary.

    Returns
    -------
    list of str
        The headings' titles.
    """
    out: list[str] = []
    depth = 0
    for ln in _lines(text):
        if depth:
            depth = _fence_depth(depth, ln.text)
            continue
        if _FENCE.match(ln.text):
            depth = 1
            continue
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
