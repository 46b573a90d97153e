"""The fixed words of the source documents that tables, summaries and labels share.

OpenClaw's five summary sections and SJC's reasoning and forward-looking subsets of them (SJC Section 3.1,
Table 2; Appendix E.3); the failure patterns and support values of SJC Table 11 (Appendix D); the label fields of
``annotations/PROTOCOL.md`` and the values each may take.
"""

from __future__ import annotations


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


#: SJC's forward-looking sections, the ones pruning targets (Section 5: "open TODOs ... pending user asks").
FORWARD_SECTIONS: tuple[str, ...] = ("Open TODOs", "Pending user asks")


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
}



#: the one naming rule for annotators, in words: the CLI's help, the errors and annotations/PROTOCOL.md say this
ANNOTATOR_RULE = ("letters, digits and _ . - @ + (an e-mail address is a name), starting with a letter or digit, "
                  "at most 128, no spaces; not 'adjudicated' (in any case, with any punctuation)")
#: names the store gives labels itself: ``adjudicated`` labels win outright in the gold set, so no person may
#: label under that name (``workbench adjudicate`` writes them)
RESERVED_ANNOTATORS = frozenset({"adjudicated"})

#: the log formats ``workbench import`` reads (``workbench.adapters.FORMATS`` has a reader for each): named here so
#: the command line can offer them without importing the readers
LOG_FORMATS: tuple[str, ...] = ("trajectory", "openai", "tau-bench", "claude-code", "codex", "labelled-summaries",
                                "frank")

#: the tables of ``workbench.schema`` (its ``TABLES``), by name
TABLE_NAMES: tuple[str, ...] = ("runs", "steps", "compactions", "entries", "scores", "evidence", "labels",
                                "attributions", "rollouts", "candidates", "spans")


__all__ = ["ANNOTATOR_RULE", "FORWARD_SECTIONS", "LABEL_VALUES", "LOG_FORMATS", "PATTERNS", "REASONING_SECTIONS",
           "RESERVED_ANNOTATORS", "SECTIONS", "SUPPORT_VALUES", "TABLE_NAMES"]
