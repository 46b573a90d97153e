"""The Claude compaction data set: real Claude summaries with the history they replaced.

Data: jadidbourbaki/context-compaction-experiments (MIT). Claude compacted a conversation
whose assistant turn listed 15,000 strings (real malicious URLs from a public list: inert
text, never fetched, never rendered as links -- :func:`defang` them before showing), then
answered 100 member and 100 non-member membership queries from the summary alone.

This module loads the data set; the check (:func:`workbench.summaries.claude_check`, TRACE
article, "A production shape I would test"): every identifier in a summary (URLs, domains, IPv4 addresses, hashes) is looked up in the replaced history --
the share with a source there -- and every queried member is looked up in the summary --
the share the summary still holds -- beside the false-negative rate measured after
compaction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import polars as pl

from workbench.summaries._identifiers import claude_check


def defang(text: str) -> str:
    """Make URLs inert for display: ``http`` -> ``hxxp``, ``.`` -> ``[.]`` in host-like tokens.

    Parameters
    ----------
    text : str
        Untrusted text.

    Returns
    -------
    str
        The text with its URLs made inert.
    """
    out = re.sub(r"(?i)\bhttp", "hxxp", text)
    return re.sub(r"(?<=[A-Za-z0-9])\.(?=[A-Za-z0-9])", "[.]", out)


def load_full(results: str | Path, prompts_dir: str | Path, arm: str = "claude") -> list[dict[str, object]]:
    """The readable-summary runs of ``runs.jsonl`` joined with their prompts file (same seed).

    Parameters
    ----------
    results : str or pathlib.Path
        The data set's ``runs.jsonl``.
    prompts_dir : str or pathlib.Path
        Its directory of prompt files.
    arm : str, default "claude"
        The arm read.

    Returns
    -------
    list of dict
        The runs with readable summaries, each with its prompt.
    """
    out = []
    for line in Path(results).read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("arm") != arm or not isinstance(rec.get("summary"), str):
            continue
        prompt = json.loads((Path(prompts_dir) / f"claude_n{rec['n']}_seed{rec['seed']}.json").read_text(encoding="utf-8"))
        listing = next(m["content"] for m in prompt["conversation"] if m["role"] == "assistant")
        out.append({"seed": rec["seed"], "model": rec["model"], "summary": rec["summary"],
                    "history": [s for s in listing.splitlines() if s.strip()], "members": prompt["member_queries"],
                    "non_members": prompt["non_member_queries"], "false_negative_rate": rec["false_negative_rate"],
                    "false_positive_rate": rec["false_positive_rate"], "error_rate": rec["error_rate"],
                    "history_size": None})
    for r in out:
        r["history_size"] = len(r["history"])
    return out


def load_fixture(path: str | Path) -> list[dict[str, object]]:
    """The committed fixture's runs (``data/real/claude-compaction/fixture.json``: a few runs of the real data set).

    Parameters
    ----------
    path : str or pathlib.Path
        The committed fixture (JSON).

    Returns
    -------
    list of dict
        Its runs.
    """
    return json.loads(Path(path).read_text(encoding="utf-8"))


def check_table(runs: Iterable[dict[str, object]]) -> pl.DataFrame:
    """One row per summary: the fact check beside the false-negative rate measured after compaction.

    Parameters
    ----------
    runs : iterable of dict
        The runs of :func:`load_fixture` or :func:`load_full`.

    Returns
    -------
    polars.DataFrame
        One row per summary: the fact check and the measured false-negative rate.
    """
    rows = []
    for r in runs:
        c = claude_check(str(r["summary"]), r["history"], r["members"])  # type: ignore[arg-type]
        rows.append({"seed": r["seed"], "summary_chars": len(str(r["summary"])), "history_size": r["history_size"],
                     "identifiers": c.identifiers, "sourced_share": c.sourced_share,
                     "exact": c.exact, "unsourced": len(c.unsourced),
                     "members_held_exact": c.held_exact_share, "members_held_by_host": c.held_host_share,
                     "false_negative_rate": r["false_negative_rate"], "recall_after_compaction":
                     1 - float(r["false_negative_rate"]),  # type: ignore[arg-type]
                     "false_positive_rate": r["false_positive_rate"]})
    return pl.DataFrame(rows).sort("seed")


__all__ = ["check_table", "defang", "load_fixture", "load_full"]
