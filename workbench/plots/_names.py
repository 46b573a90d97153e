"""Display names: the one table of words a table or a figure prints for the ids the data holds.

Methods, summary schemas and roles, label fields and metrics are stored as ids (``no_compression``, ``prompting_sjc``,
``user_messages``, ``pass_hat_k``); a paper prints words. :func:`display_name` maps an id to its words, and an id
that is not in the table to itself with its underscores as spaces (a method a user's own log names), so nothing
prints raw (``no\\_compression`` in a LaTeX cell). Column headers have their own table,
:data:`workbench.plots._latex.HEADERS`; :mod:`workbench.plots._latex` prints the cells of the columns in
:data:`DISPLAYED_COLUMNS` with these names, and the figure functions label methods, roles and fields with them.
"""

from __future__ import annotations

#: the compaction policies (the testbed's, and what the adapters write for a log of one client)
METHODS: dict[str, str] = {
    "no_compression": "No compression", "fifo": "FIFO", "prompting": "Prompting", "prompting_sjc": "Prompting + SJC",
    "verifier": "Verifier", "oracle": "Oracle", "claude_code": "Claude Code", "codex": "Codex",
}
#: the roles of summary entries (:data:`workbench.summaries.ROLES`)
ROLES: dict[str, str] = {
    "history": "History", "forward": "Forward", "constraints": "Constraints", "identifiers": "Identifiers",
    "user_messages": "User messages", "other": "Other",
}
#: the summary schemas (:data:`workbench.summaries.SCHEMAS`; ``claude_code`` is also a method, with the same words)
SCHEMAS: dict[str, str] = {"openclaw": "OpenClaw", "claude_code": "Claude Code", "free_text": "Free text",
                           "given": "Given sentences"}
#: the labelled fields and their values
FIELDS: dict[str, str] = {
    "support": "Support", "correct": "Correct", "supported": "Supported", "unsupported": "Unsupported",
    "unsure": "Unsure",
}
#: run metrics a comparison or a caption names
METRICS: dict[str, str] = {
    "acc": "Acc", "pass_hat_k": "Pass^k", "pass_at_k": "Pass@k", "tokens": "Tokens", "steps": "Steps",
    "peak_tokens": "Peak tokens", "dependency": "Dependency",
}
#: interval methods (``workbench.stats.INTERVAL_METHODS``) as a caption says them
INTERVAL_METHODS: dict[str, str] = {
    "t": "cluster jackknife t", "logit-t": "cluster jackknife t on the logit scale",
    "atanh-t": "cluster jackknife t on Fisher's z", "cr2": "CR2, Bell-McCaffrey df",
    "percentile": "scenario bootstrap, percentile", "bca": "scenario bootstrap, BCa",
}
#: every id with its words (one table: an id means the same wherever it is printed)
DISPLAY_NAMES: dict[str, str] = {**METHODS, **SCHEMAS, **ROLES, **FIELDS, **METRICS}

#: the columns whose cells are ids printed by :func:`display_name` in an exported table
DISPLAYED_COLUMNS = frozenset({"method", "a", "b", "baseline", "role", "field", "metric", "policy", "statistic",
                               "schema"})


def display_name(value: object) -> str:
    """The words printed for ``value``: its entry in ``DISPLAY_NAMES``, else the id with underscores as spaces.

    Parameters
    ----------
    value : object
        An id (a method, role, field or metric); None prints as ``--``.

    Returns
    -------
    str
        The display name.
    """
    if value is None:
        return "--"
    text = str(value)
    return DISPLAY_NAMES.get(text, text.replace("_", " "))


__all__ = ["display_name"]
