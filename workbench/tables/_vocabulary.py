"""The fixed words of the source documents that tables, summaries and labels share.

OpenClaw's five summary sections and SJC's reasoning and forward-looking subsets of them (SJC Section 3.1,
Table 2; Appendix E.3); the failure patterns and support values of SJC Table 11 (Appendix D); the label fields of
``annotations/PROTOCOL.md`` and the values each may take.
"""

from __future__ import annotations

import re
from functools import lru_cache

from workbench.errors import SchemaError

#: The five section headings of OpenClaw's safeguard summary, in order (SJC Appendix E.3).
SECTIONS: tuple[str, ...] = (
    "Decisions",
    "Open TODOs",
    "Constraints/Rules",
    "Pending user asks",
    "Exact identifiers",
)


#: Reasoning entries in SJC's sense (Section 3.1, Table 2).
REASONING_SECTIONS: tuple[str, ...] = ("Decisions", "Open TODOs")


#: Failure patterns of SJC Appendix D / Table 11.
PATTERNS: tuple[str, ...] = ("RC", "ID", "CS", "other", "unrelated")


#: Support of the executed entry (SJC Table 11).
SUPPORT_VALUES: tuple[str, ...] = ("supported", "unsupported", "contradicted")


#: The label fields of annotations/PROTOCOL.md and the values each may take.
LABEL_VALUES: dict[str, tuple[str, ...]] = {
    "support": ("supported", "unsupported", "unsure"),
    "correct": ("correct", "incorrect", "unsure"),
    "pattern": PATTERNS,
    "entry_support": SUPPORT_VALUES,
    # a failure label (Who&When's): which agent's step decided the failure, and why; any text (open fields)
    "agent": (),
    "step": (),
    "reason": (),
}
#: the label fields whose values are any text (a failure label's agent, 0-based step and reason)
OPEN_LABEL_FIELDS: tuple[str, ...] = ("agent", "step", "reason")



#: the one naming rule for annotators, in words: the CLI's help, the errors and annotations/PROTOCOL.md say this
ANNOTATOR_RULE = ("letters, digits and _ . - @ + (an e-mail address is a name), starting with a letter or digit, "
                  "at most 128, no spaces; not 'adjudicated' (in any case, with any punctuation)")
#: names the store gives labels itself: ``adjudicated`` labels win outright in the gold set, so no person may
#: label under that name (``workbench adjudicate`` writes them)
RESERVED_ANNOTATORS = frozenset({"adjudicated"})

#: the tables every trajectory log gives
TRAJECTORY_TABLES: tuple[str, ...] = ("runs", "steps", "compactions")

#: the tables of ``workbench.tables._schema`` (its ``TABLES``), by name
TABLE_NAMES: tuple[str, ...] = ("runs", "steps", "compactions", "entries", "scores", "evidence", "labels",
                                "attributions", "rollouts", "candidates", "spans", "label_spans", "variables")


_ANNOTATOR = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+-]{0,127}")


def check_annotator(name: object, *, reserved: bool = False) -> str:
    """``name`` if it is a usable annotator name, else ``SchemaError``.

    A usable name has letters, digits and the characters ``_.-@+`` (so an e-mail address from Label Studio is
    one), at most 128 of them, starting with a letter or digit: no spaces, so ``"dan "`` is not a second person,
    and no path characters; it is not one of ``RESERVED_ANNOTATORS`` unless ``reserved``, which only
    adjudication passes.

    Parameters
    ----------
    name : object
        The name given.
    reserved : bool, default False
        Allow a reserved name (adjudication's).

    Returns
    -------
    str
        ``name``.
    """
    if not isinstance(name, str):
        raise SchemaError(field="annotator", expected=f"a name of {ANNOTATOR_RULE}", got=repr(name))
    return _checked_name(name, reserved)


@lru_cache(maxsize=1 << 14)
def _checked_name(name: str, reserved: bool) -> str:
    """:func:`check_annotator` of a string, remembered (an import checks the same few names a hundred thousand
    times); a refusal raises and is not remembered."""
    if not _ANNOTATOR.fullmatch(name):
        raise SchemaError(field="annotator", expected=f"a name of {ANNOTATOR_RULE}", got=repr(name))
    if not reserved and _folded(name) in _RESERVED_FOLDED:  # "Adjudicated_" looks like "adjudicated" too
        raise SchemaError(field="annotator", expected="a person's name (not one the store reserves, nor "
                                 f"one that differs from it only in case or punctuation: {', '.join(sorted(RESERVED_ANNOTATORS))})",
                                 got=repr(name))
    return name


def _folded(name: str) -> str:
    """A name case-folded and stripped of punctuation: two names equal so are the same name to a reader."""
    return "".join(c for c in name.casefold() if c.isalnum())


_RESERVED_FOLDED = frozenset(_folded(r) for r in RESERVED_ANNOTATORS)


__all__ = ["check_annotator", "LABEL_VALUES", "PATTERNS", "SECTIONS", "SUPPORT_VALUES"]
