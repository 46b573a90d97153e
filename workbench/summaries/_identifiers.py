"""Exact identifiers: the rules that find them in text, and every check that uses them.

Five rules, each named for what it serves:

* ``openclaw`` -- exactly OpenClaw's ``extractOpaqueIdentifiers`` (its compaction safeguard,
  the host compressor of SJC Appendix E.3), which decides what is copied into
  ``## Exact identifiers``: ``openclaw_identifiers``; over the last ten summarised
  messages it is ``opaque_identifiers``, the default
  wherever an analysis follows SJC.
* ``workbench`` -- the rule this workbench used before it reproduced OpenClaw's: hex ids must
  mix letters and digits (so words such as ``deadbeef`` or ``facade`` are never ids), UUIDs
  stay whole, host:port accepts ``localhost:8080``. It reads better on prose, so it stays
  available by name, but it is not what the compressor does.
* ``fact_check`` -- tokens a summary must not invent or drop at a boundary (TRACE
  article): URLs and tokens of 5+ characters mixing letters and digits (``INV-1034``,
  ``HAT136``, hashes). The fact check keeps its own rule because OpenClaw's misses exactly
  these business ids (``INV-1034`` is neither a hex run nor 6+ digits); :func:`fact_check`,
  :func:`fact_check_compactions` and FIFO replay's ``arg_identifiers``.
* ``network`` -- URLs, domains, IPv4 addresses and long hex hashes, the strings of the
  Claude compaction data set; ``summary_identifiers`` and :func:`claude_check`.
* ``code`` -- what a coding agent's summary must get exactly right: file paths (with a
  ``/`` or a known extension, optionally ``::test`` and ``:line``), ``name()`` references,
  and everything the ``fact_check`` rule finds; :func:`identifier_sources` checks each
  against the history a Claude Code or Codex summary replaced.

:func:`find` applies any of them to one text. Every rule reads its text through
:func:`workbench._util.long_tokens.bound_tokens`: a run of over 1,024 non-space characters is read as its first
1,024 (the patterns' look-arounds made one such run cost quadratic time); in text without such runs each rule
finds exactly what it did before, OpenClaw's exactly what OpenClaw finds.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from workbench._util.long_tokens import bound_tokens

# ---------------------------------------------------------------------------
# the rules

#: OpenClaw's pattern (compaction-safeguard-quality.ts, ``extractOpaqueIdentifiers``), in the same
#: order of alternatives: hex runs of 8+, http(s) URLs, absolute paths of 2+ segments (the first
#: 2+ characters), Windows paths, host.domain:port (a dot before the colon), runs of 6+ digits.
#: JavaScript's ``\w``, ``\d`` and ``\b`` are ASCII; its ``\S`` excludes Unicode spaces too.
_JS_NOT_SPACE = "[^\\s\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]"
OPENCLAW = re.compile(
    r"[A-Fa-f0-9]{8,}"
    rf"|https?://{_JS_NOT_SPACE}+"
    r"|/[A-Za-z0-9_.-]{2,}(?:/[A-Za-z0-9_.-]+)+"
    r"|[A-Za-z]:\\[A-Za-z0-9_\\.-]+"
    r"|[A-Za-z0-9._-]+\.[A-Za-z0-9._/-]+:[0-9]{1,5}"
    r"|\b[0-9]{6,}\b",
    re.ASCII,
)
_LEAD = re.compile(r"^[(\"'`\[{<]+")
_TRAIL = re.compile(r"[)\]\"'`,;:.!?<>]+$")
_PURE_HEX = re.compile(r"[A-Fa-f0-9]{8,}", re.ASCII)


def openclaw_identifiers(text: str, limit: int = 12) -> list[str]:
    """OpenClaw's ``extractOpaqueIdentifiers``: every match of ``OPENCLAW``, trimmed of surrounding
    whitespace, leading quotes and brackets and trailing punctuation; a pure hex run upper-cased; matches
    under 4 characters dropped; deduplicated in order; at most ``limit`` (12)."""
    out: dict[str, None] = {}
    for m in OPENCLAW.finditer(bound_tokens(text)):
        value = _TRAIL.sub("", _LEAD.sub("", m.group(0).strip()))
        if _PURE_HEX.fullmatch(value):
            value = value.upper()
        if len(value) >= 4:
            out.setdefault(value, None)
    return list(out)[:limit]


def summary_includes(summary: str, identifier: str) -> bool:
    """OpenClaw's check that a summary keeps an identifier: case-insensitive for pure hex, exact otherwise."""
    if _PURE_HEX.fullmatch(identifier):
        return identifier.upper() in summary.upper()
    return identifier in summary


_OPAQUE_PATTERNS = (
    re.compile(r"\bhttps?://[^\s<>\"'`)\]]+"),  # URLs
    re.compile(r"(?<![\w.])(?:~|\.{1,2})?(?:/[\w.@%+-]+){2,}/?"),  # file paths with 2+ components
    re.compile(r"\b(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9a-fA-F:]+\]):\d{2,5}\b"),  # host:port
    re.compile(r"\b(?=[0-9a-fA-F-]*[0-9])(?=[0-9a-fA-F-]*[a-fA-F])[0-9a-fA-F]{8,}(?:-[0-9a-fA-F]{4,})*\b"),  # hex ids, UUIDs
    re.compile(r"(?<![\w.])\d{6,}(?![\w])"),  # long numbers
)

#: identifiers for fact checks: URLs, and tokens of 5+ characters mixing letters and digits
IDENTIFIER = re.compile(r"https?://[^\s<>\"')\]]+|\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]{4,}\b")

#: URLs, domains, IPv4 addresses (with an optional path) and hex hashes of 16+ characters
NETWORK = re.compile(r"(?:https?://)?(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}(?:/[^\s\"'<>)`*,]*)?"
                     r"|(?:https?://)?\b\d{1,3}(?:\.\d{1,3}){3}\b(?:/[^\s\"'<>)`*,]*)?|\b[0-9a-f]{16,}\b")

_NUM = re.compile(r"(?<![\w.-])\$?\d[\d,]*(?:\.\d+)?")

#: file paths (a slash, or a bare name with a source-file extension; ``::test`` and ``:line`` kept)
#: and ``name()`` references: the identifiers of coding-agent sessions
_EXT = r"(?:py|pyi|ipynb|js|jsx|ts|tsx|rs|go|java|kt|c|h|cc|cpp|hpp|rb|php|sh|sql|md|rst|txt|json|jsonl|toml|ya?ml|ini|cfg|log|csv|html|css)"
CODE = re.compile(
    r"https?://[^\s<>\"')\]]+"
    r"|(?<![\w/.~-])(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*\w(?:::[\w\[\]-]+)*(?::\d+)?"
    rf"|(?<![\w/.-])[\w-]+\.{_EXT}\b(?:::[\w\[\]-]+)*(?::\d+)?"
    r"|\b[A-Za-z_][\w.]*\(\)"
)

RULES = ("openclaw", "workbench", "fact_check", "network", "code")

MAX_IDENTIFIERS = 12
LAST_MESSAGES = 10


def find(text: str, rule: str = "openclaw") -> list[str]:
    """Identifiers of one text under ``rule`` (one of :data:`RULES`), deduplicated in order of appearance.

    Parameters
    ----------
    text : str
        The text.
    rule : str, default "openclaw"
        The rule.

    Returns
    -------
    list of str
        The identifiers.
    """
    if rule == "openclaw":
        return openclaw_identifiers(text, limit=10**9)
    if rule == "workbench":
        return opaque_identifiers([text], limit=10**9, last=1, rule="workbench")
    if rule == "fact_check":
        return list(dict.fromkeys(_fact_ids_in_order(text)))
    if rule == "network":
        return summary_identifiers(text)
    if rule == "code":
        return code_identifiers(text)
    raise ValueError(f"rule: expected one of {RULES}, got {rule!r}")


def opaque_identifiers(messages: Sequence[str], *, limit: int = MAX_IDENTIFIERS, last: int = LAST_MESSAGES,
                       rule: str = "openclaw") -> list[str]:
    """Opaque identifiers OpenClaw copies into ``## Exact identifiers`` (SJC Appendix E.3), from the last
    ``last`` messages (10), at most ``limit`` (12).

    ``rule="openclaw"`` (the default) is ``openclaw_identifiers`` over the messages joined by
    newlines. ``rule="workbench"`` is the earlier rule: URLs, file paths, host:port pairs, hex
    ids of 8+ characters with at least one digit and one letter (UUIDs whole), numbers of 6+
    digits, in order of first appearance, an identifier inside one already taken not repeated.
    """
    recent = list(messages[-last:]) if last else []
    if rule == "openclaw":
        return openclaw_identifiers("\n".join(recent), limit)
    if rule != "workbench":
        raise ValueError(f"rule: expected 'openclaw' or 'workbench', got {rule!r}")
    found: list[tuple[int, int, str]] = []
    for m_index, message in enumerate(recent):
        for pattern in _OPAQUE_PATTERNS:
            for m in pattern.finditer(bound_tokens(message)):
                value = m.group(0).rstrip(".,;:!?")
                if value:
                    found.append((m_index, m.start(), value))
    found.sort(key=lambda t: (t[0], t[1], -len(t[2])))
    out: list[str] = []
    for _, _, value in found:
        if value in out or any(value in taken for taken in out):
            continue
        out.append(value)
        if len(out) >= limit:
            break
    return out


# ---------------------------------------------------------------------------
# the TRACE fact check at the boundary


def _fact_ids_in_order(text: str) -> list[str]:
    return [m.group(0).rstrip(".,;:)") for m in IDENTIFIER.finditer(bound_tokens(text))]


def _ids(text: str) -> set[str]:
    return set(_fact_ids_in_order(text))


def _numbers(text: str) -> set[str]:
    out = set()
    for m in _NUM.finditer(bound_tokens(text)):
        raw = m.group(0).lstrip("$").replace(",", "").rstrip(".")
        try:
            out.add(f"{float(raw):.2f}")
        except ValueError:
            continue
    return out


@dataclass(frozen=True)
class FactCheck:
    """One summary against the history it replaced (:func:`fact_check`)."""

    ids: int
    numbers: int
    unsourced_ids: tuple[str, ...]
    unsourced_numbers: tuple[str, ...]
    dropped_ids: tuple[str, ...]

    @property
    def silent_defect(self) -> bool:
        return bool(self.unsourced_ids or self.unsourced_numbers or self.dropped_ids)


def fact_check(summary: str, history: str, kept: str = "") -> FactCheck:
    """Every identifier and number of ``summary`` looked up in the ``history`` it replaced, and back.

    Identifiers follow the ``fact_check`` rule (URLs and tokens of 5+ characters mixing
    letters and digits); numbers are compared as values (``$1,200.5`` = ``1200.50``).
    ``unsourced_ids`` / ``unsourced_numbers``: in the summary but in neither the history nor
    the ``kept`` text (first prompt, retained turn) -- a misremembered amount;
    ``dropped_ids``: in the history but in neither the summary nor the kept text -- a
    dropped id the agent can no longer see.

    Parameters
    ----------
    summary : str
        The summary.
    history : str
        The text it replaced.
    kept : str, default ""
        The text the agent still sees beside it.

    Returns
    -------
    FactCheck
        The identifiers and numbers on each side and which are unsourced or dropped.

    Examples
    --------
    >>> from workbench.summaries import fact_check
    >>> check = fact_check("- Paid INV-104 ($120.50).", "get_invoice INV-104 -> amount 120.50; INV-221 open")
    >>> check.dropped_ids, check.unsourced_numbers
    (('INV-221',), ())
    """
    s_ids, h_ids, k_ids = _ids(summary), _ids(history), _ids(kept)
    s_num, h_num, k_num = _numbers(summary), _numbers(history), _numbers(kept)
    return FactCheck(ids=len(s_ids), numbers=len(s_num), unsourced_ids=tuple(sorted(s_ids - h_ids - k_ids)),
                     unsourced_numbers=tuple(sorted(s_num - h_num - k_num)),
                     dropped_ids=tuple(sorted(h_ids - s_ids - k_ids)))


def replaced_history(compactions: pl.DataFrame, steps: pl.DataFrame,
                     runs: pl.DataFrame | None = None) -> list[tuple[str, str]]:
    """For each compaction (in order), the text it replaced and the text kept beside it.

    The replaced text is the previous summary, then the tool, arguments and observation of every step of the
    compaction's span, in step order: steps ``span_start`` through ``span_end`` when the row gives them, else every
    step before the compaction's ``step``. The kept text is the run's task instruction (``runs.task``) and the
    retained turn.

    Parameters
    ----------
    compactions : polars.DataFrame
        The compactions table (``run_id``, ``step``, ``span_start``, ``span_end``, ``previous_summary``,
        ``retained_turn``).
    steps : polars.DataFrame
        The steps table of the same runs (``run_id``, ``step``, ``tool``, ``args``, ``observation``).
    runs : polars.DataFrame, optional
        The runs table, for each run's ``task``; without it the kept text is the retained turn alone.

    Returns
    -------
    list of tuple of (str, str)
        One ``(replaced, kept)`` pair per compaction row, in the rows' order.
    """
    wanted = set(compactions.get_column("run_id").unique().to_list()) if compactions.height else set()
    by_run: dict[str, tuple[list[int], list[str]]] = {}  # each run's steps in order, and each step's text
    if wanted:
        ordered = steps.filter(pl.col("run_id").is_in(list(wanted))).select("run_id", "step", "tool", "args",
                                                                            "observation")
        for (run_id,), st in ordered.partition_by("run_id", as_dict=True, maintain_order=True).items():
            st = st.sort("step", maintain_order=True)
            texts = [f"{t} {a or ''} {o or ''}" for t, a, o in st.select("tool", "args", "observation").iter_rows()]
            by_run[run_id] = (st.get_column("step").to_list(), texts)
    tasks = dict(runs.select("run_id", "task").iter_rows()) if runs is not None and "task" in runs.columns else {}
    out = []
    for c in compactions.iter_rows(named=True):
        parts = [c.get("previous_summary") or ""]
        if (found := by_run.get(c["run_id"])) is not None:
            numbers, texts = found
            lo: int = c["span_start"] if c.get("span_start") is not None else 0
            hi: int = c["span_end"] if c.get("span_end") is not None else c["step"] - 1
            parts += texts[bisect_left(numbers, lo):bisect_right(numbers, hi)]
        out.append(("\n".join(parts), f"{tasks.get(c['run_id']) or ''}\n{c.get('retained_turn') or ''}"))
    return out


def fact_check_compactions(compactions: pl.DataFrame, steps: pl.DataFrame, runs: pl.DataFrame | None = None,
                           *, summary: str = "committed_summary") -> pl.DataFrame:
    """The fact check for every compaction: the summary against what it replaced (:func:`replaced_history`).

    One row per compaction.

    Parameters
    ----------
    compactions : polars.DataFrame
        The compactions table.
    steps : polars.DataFrame
        The steps table.
    runs : polars.DataFrame, optional
        The runs table (the task, when a summary's identifiers may come from it).
    summary : str, default "committed_summary"
        The summary column checked.

    Returns
    -------
    polars.DataFrame
        One row per compaction.
    """
    rows = []
    for c, (history, kept) in zip(compactions.iter_rows(named=True), replaced_history(compactions, steps, runs)):
        res = fact_check(c[summary] or "", history, kept)
        rows.append({"run_id": c["run_id"], "boundary": c["boundary"], "ids": res.ids, "numbers": res.numbers,
                     "unsourced_ids": len(res.unsourced_ids), "unsourced_numbers": len(res.unsourced_numbers),
                     "dropped_ids": len(res.dropped_ids), "silent_defect": res.silent_defect})
    return pl.DataFrame(rows, schema={"run_id": pl.Utf8, "boundary": pl.Int64, "ids": pl.Int64, "numbers": pl.Int64,
                                      "unsourced_ids": pl.Int64, "unsourced_numbers": pl.Int64,
                                      "dropped_ids": pl.Int64, "silent_defect": pl.Boolean})


def code_identifiers(text: str) -> list[str]:
    """Identifiers under the ``code`` rule (``CODE`` and the ``fact_check`` rule), in order, deduplicated,
    trailing punctuation dropped."""
    text = bound_tokens(text)
    spans = [(m.start(), m.end()) for pattern in (CODE, IDENTIFIER) for m in pattern.finditer(text)]
    out: dict[str, None] = {}
    covered_to = -1
    for start, end in sorted(spans, key=lambda se: (se[0], -se[1])):
        if end <= covered_to:
            continue  # inside a longer identifier already taken (the date in a log file's path)
        covered_to = end
        value = text[start:end]
        value = value if value.endswith("()") else value.rstrip(".,;:)")
        if len(value) >= 3:
            out.setdefault(value, None)
    return list(out)


def identifier_sources(compactions: pl.DataFrame, steps: pl.DataFrame, runs: pl.DataFrame | None = None, *,
                       summary: str = "committed_summary", rule: str = "code",
                       history: list[tuple[str, str]] | None = None) -> pl.DataFrame:
    """Every identifier of every summary, and whether it has a source in the history the summary replaced.

    One row per (compaction, identifier): ``run_id``, ``boundary``, ``identifier``, ``sourced``
    (its exact text -- for ``name()``, the text ``name(`` -- occurs in the replaced history,
    :func:`replaced_history`), ``kept`` (it occurs only in the task or retained turn, which the
    agent still sees). An identifier that is neither was written by the compressor from nowhere
    the log shows. ``history``: the compactions' :func:`replaced_history`, when the caller has it already.

    Parameters
    ----------
    compactions : polars.DataFrame
        The compactions table.
    steps : polars.DataFrame
        The steps table of their runs.
    runs : polars.DataFrame, optional
        The runs table, for the task text.
    summary : str, default "committed_summary"
        The summary column read.
    rule : str, default "code"
        The identifier rule (:data:`RULES`).
    history : list of tuple of (str, str), optional
        The compactions' replaced and kept text, when the caller has it.

    Returns
    -------
    polars.DataFrame
        One row per (compaction, identifier) with ``sourced`` and ``kept``.
    """
    if history is None:
        history = replaced_history(compactions, steps, runs)
    rows = []
    for c, (replaced, kept) in zip(compactions.iter_rows(named=True), history, strict=True):
        for ident in find(c[summary] or "", rule):
            needle = ident[:-1] if ident.endswith("()") else ident  # total() is sourced by "def total(self)"
            in_history = needle in replaced
            rows.append({"run_id": c["run_id"], "boundary": c["boundary"], "identifier": ident,
                         "sourced": in_history, "kept": not in_history and needle in kept})
    return pl.DataFrame(rows, schema={"run_id": pl.Utf8, "boundary": pl.Int64, "identifier": pl.Utf8,
                                      "sourced": pl.Boolean, "kept": pl.Boolean})


def arg_identifiers(args: str | None) -> set[str]:
    """Identifiers (``fact_check`` rule) in an action's JSON arguments, searched in every string value."""
    if not args:
        return set()
    try:
        value = json.loads(args)
    except json.JSONDecodeError:
        return set(IDENTIFIER.findall(bound_tokens(args)))
    out: set[str] = set()
    stack = [value]  # iterative: arguments nested hundreds deep cannot exhaust the interpreter
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.update(IDENTIFIER.findall(bound_tokens(v)))
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out


# ---------------------------------------------------------------------------
# the Claude compaction summaries' fact check


def summary_identifiers(summary: str) -> list[str]:
    """URLs, domains, IPv4 addresses and long hex hashes in a summary (``network`` rule), deduplicated in order.

    Trailing punctuation is dropped; file-like tokens (``Mozi.m``) count only with a dot in a
    host-like position, so prose words are never identifiers.
    """
    seen: dict[str, None] = {}
    for m in NETWORK.finditer(bound_tokens(summary)):
        token = m.group(0).rstrip(".,;:!?")
        if len(token) >= 4 and not token.replace(".", "").isdigit():
            seen.setdefault(token, None)
    return list(seen)


def _host(s: str) -> str:
    s = re.sub(r"^[a-z]+://", "", s.strip().lower())
    return s.split("/")[0].removeprefix("www.")


def _share(part: int, whole: int) -> float:
    return part / whole if whole else float("nan")


@dataclass(frozen=True)
class SummaryCheck:
    """Identifiers of a summary sourced in its history; queried members the summary holds (:func:`claude_check`)."""

    identifiers: int
    exact: int
    sourced: int
    unsourced: tuple[str, ...]
    members: int
    held_exact: int
    held_host: int

    @property
    def sourced_share(self) -> float:
        return _share(self.sourced, self.identifiers)

    @property
    def held_exact_share(self) -> float:
        return _share(self.held_exact, self.members)

    @property
    def held_host_share(self) -> float:
        return _share(self.held_host, self.members)


def claude_check(summary: str, history: Sequence[str], members: Sequence[str]) -> SummaryCheck:
    """Identifiers of the summary sourced in the history; queried members held by the summary.

    An identifier is *exact* when it equals a history string, *sourced* when some history
    string contains it (case-insensitive), else *unsourced*. A member is *held exactly* when
    the summary contains the whole string, *held by host* when it contains the member's host.

    Parameters
    ----------
    summary : str
        The summary.
    history : sequence of str
        What it replaced.
    members : sequence of str
        The queried members.

    Returns
    -------
    SummaryCheck
        Identifiers by source, members held.
    """
    hist_lower = [h.lower() for h in history]
    hist_set = set(hist_lower)
    blob = "\n".join(hist_lower)
    ids = summary_identifiers(summary)
    exact = [i for i in ids if i.lower() in hist_set]
    sourced = [i for i in ids if i.lower() in blob]
    low = summary.lower()
    return SummaryCheck(identifiers=len(ids), exact=len(exact), sourced=len(sourced),
                        unsourced=tuple(i for i in ids if i not in sourced), members=len(members),
                        held_exact=sum(1 for m in members if m.lower() in low),
                        held_host=sum(1 for m in members if _host(m) and _host(m) in low))


__all__ = ["claude_check", "fact_check", "fact_check_compactions", "FactCheck", "find", "identifier_sources", "RULES",
           "replaced_history", "SummaryCheck"]
