"""The SJC prune operator (SJC Section 4, Eq. 1) and its bookkeeping.

Given a candidate summary, one source score per entry and a threshold tau (0.5 by
default; SJC did not tune it), the committed summary keeps every entry whose score is at
least tau and every entry the judge gave no usable answer for ("an entry for which the
judge returns no usable answer is kept", Appendix F), and deletes the others whole
through :func:`workbench.summaries.prune`: kept entries stay byte-identical, headings stay,
and the committed summary is never longer than the candidate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from workbench import tokens
from workbench.summaries import _grammar as summary
from workbench.summaries._entries import entry_id

DEFAULT_TAU = 0.5


@dataclass(frozen=True)
class PruneResult:
    committed: str
    kept: tuple[int, ...]
    pruned: tuple[int, ...]
    by_section: pl.DataFrame  # section, kept, pruned
    tokens_before: int
    tokens_after: int


def keep_positions(scores: Sequence[float | None], tau: float = DEFAULT_TAU) -> list[int]:
    """Positions kept at ``tau``: score >= tau, or no usable answer (None / NaN).

    Parameters
    ----------
    scores : sequence of float or None
        The scores of a summary's entries, in order.
    tau : float, default 0.5
        The pruning threshold.

    Returns
    -------
    list of int
        The positions kept.

    References
    ----------
    SJC section 4 (the prune operator).
    """
    return [i for i, s in enumerate(scores) if s is None or s != s or s >= tau]


def prune_summary(candidate: str, scores: Sequence[float | None], tau: float = DEFAULT_TAU,
                  *, encoding: str = "o200k_base", entries: Sequence[summary.Entry] | None = None) -> PruneResult:
    """Apply SJC's prune operator to one candidate summary (``entries``: its parse, when the caller has it).

    Parameters
    ----------
    candidate : str
        The candidate summary's text.
    scores : sequence of float or None
        Its entries' scores, in order.
    tau : float, default 0.5
        The pruning threshold.
    encoding : str, default "o200k_base"
        The tokenizer of the token counts.
    entries : sequence of Entry, optional
        The candidate's parse.

    Returns
    -------
    PruneResult
        The committed text, the kept and pruned positions, counts by section and the token counts.

    References
    ----------
    SJC section 4.
    """
    committed, kept, counts, before, after = _prune(candidate, scores, tau, encoding, entries)
    by_section = pl.DataFrame(counts, schema={"section": pl.Utf8, "kept": pl.Int64, "pruned": pl.Int64}, orient="row")
    n = sum(k + p for _, k, p in counts)
    kept_set = set(kept)
    return PruneResult(committed, tuple(kept), tuple(i for i in range(n) if i not in kept_set), by_section,
                       before, after)


def _prune(candidate: str, scores: Sequence[float | None], tau: float, encoding: str,
           entries: Sequence[summary.Entry] | None) -> tuple[str, list[int], list[tuple[str, int, int]], int, int]:
    """(committed, kept positions, (section, kept, pruned) in order of first appearance, tokens before, after)."""
    if entries is None:
        entries = summary.parse(candidate)
    if len(scores) != len(entries):
        raise ValueError(f"prune_summary: {len(scores)} scores for {len(entries)} entries")
    kept = keep_positions(scores, tau)
    committed = summary.prune(candidate, kept, entries=entries)
    kept_set = set(kept)
    counts: dict[str, list[int]] = {}
    for e in entries:
        counts.setdefault(e.section, [0, 0])[0 if e.position in kept_set else 1] += 1
    return (committed, kept, [(sec, k, p) for sec, (k, p) in counts.items()],
            tokens.count(candidate, encoding), tokens.count(committed, encoding))


def prune_compactions(compactions: pl.DataFrame, scores: pl.DataFrame, tau: float = DEFAULT_TAU,
                      judge: str | None = None, *,
                      entries: Mapping[tuple[str, int], Sequence[summary.Entry]] | None = None,
                      ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Committed summaries for every compaction from a scores table; returns (compactions, bookkeeping).

    ``scores`` rows are matched to entries by ``entry_id`` (``RUN/bB/eP``); an entry
    without a score row is kept, like one with a null score. ``entries`` maps (run, boundary)
    to the candidate's parse when the caller has it (the judge's requests hold it), so each
    summary is parsed once per run.

    Parameters
    ----------
    compactions : polars.DataFrame
        The compactions table.
    scores : polars.DataFrame
        The scores table.
    tau : float, default 0.5
        The pruning threshold.
    judge : str, optional
        The judge whose scores are used (required when several are present).
    entries : mapping, optional
        (run, boundary) to the candidate's parse.

    Returns
    -------
    tuple of polars.DataFrame
        The compactions with committed summaries, and one bookkeeping row per compaction.

    References
    ----------
    SJC section 4.
    """
    if judge is not None:
        scores = scores.filter(pl.col("judge") == judge)
    if "repeat" in scores.columns:
        scores = scores.filter(pl.col("repeat").fill_null(0) == 0)
    by_id = dict(zip(scores.get_column("entry_id").to_list(), scores.get_column("score").to_list(), strict=True))
    committed, rows = [], []
    for c in compactions.iter_rows(named=True):
        parsed = entries.get((c["run_id"], c["boundary"])) if entries is not None else None
        if parsed is None:
            parsed = summary.parse(c["candidate_summary"])
        s = [by_id.get(entry_id(c["run_id"], c["boundary"], e.position)) for e in parsed]
        text, _kept, counts, before, after = _prune(c["candidate_summary"], s, tau, "o200k_base", parsed)
        committed.append(text)
        for sec, k, p in counts:
            rows.append((c["run_id"], c["boundary"], sec, k, p, before, after))
    out = compactions.with_columns(pl.Series("committed_summary", committed, dtype=pl.Utf8))
    book = pl.DataFrame(rows, schema={"run_id": pl.Utf8, "boundary": pl.Int64, "section": pl.Utf8, "kept": pl.Int64,
                                      "pruned": pl.Int64, "tokens_before": pl.Int64, "tokens_after": pl.Int64},
                        orient="row")
    return out, book


__all__ = ["DEFAULT_TAU", "keep_positions", "prune_compactions", "prune_summary", "PruneResult"]
