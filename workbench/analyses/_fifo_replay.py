"""Replay the compaction loop's budget trigger and the FIFO policy over real trajectories (no LLM).

For a run's steps (action + observation, in order) the context before step t is the first
prompt plus every earlier turn; a *boundary* fires when it passes the budget (SJC Section 2;
counted in o200k tokens). Under FIFO the oldest turns are dropped until the context fits
again. What FIFO no longer holds when the agent later acts on it is the real-data form of the
TRACE article's silent channel: an identifier in a later action's arguments that the run
saw only in observations that have fallen out of the window.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from workbench import tokens
from workbench.summaries._identifiers import IDENTIFIER, arg_identifiers


@dataclass(frozen=True)
class ReplayResult:
    """One run replayed under a budget with FIFO (:func:`replay_run`)."""

    boundaries: int
    actions_after: int
    refs: int
    out_of_window: int
    lost: tuple[str, ...]


def turn_text(row: dict[str, object]) -> str:
    """A step as the context holds it: the action (or the agent's text), then the observation."""
    action = f"{row.get('tool')}({row.get('args')})" if row.get("tool") else str(row.get("text") or "")
    return f"{action}\n{row.get('observation') or ''}"


def replay_run(steps: pl.DataFrame, first_prompt: str, budget: int, *, encoding: str = "o200k_base") -> ReplayResult:
    """Boundaries and out-of-window references of one run under the budget trigger with FIFO.

    Returns ``boundaries`` (times the context passed the budget before a step), ``actions``
    after the first boundary, ``refs`` (argument identifiers of those actions that the run
    had seen in an earlier observation), ``out_of_window`` (of those, seen only in
    observations FIFO had dropped and nowhere in the window or the first prompt) and the
    identifiers themselves.

    Parameters
    ----------
    steps : polars.DataFrame
        One run's steps, in order.
    first_prompt : str
        The run's first prompt (always in the window).
    budget : int
        The context budget in tokens.
    encoding : str, default "o200k_base"
        The tokenizer counted with.

    Returns
    -------
    ReplayResult
        The counts and identifiers above.
    """
    rows = steps.sort("step").to_dicts()
    texts = [turn_text(r) for r in rows]
    sizes = tokens.count_many(texts, encoding)
    prompt_size = tokens.count(first_prompt, encoding)
    window_start = 0  # index of the oldest turn still in the FIFO window
    boundaries = 0
    actions_after = refs = oow = 0
    lost: list[str] = []
    prompt_ids = set(IDENTIFIER.findall(first_prompt))
    for t, row in enumerate(rows):
        context = prompt_size + sum(sizes[window_start:t])
        if context > budget and t - window_start >= 2:
            boundaries += 1
            while t - window_start > 1 and prompt_size + sum(sizes[window_start:t]) > budget:
                window_start += 1
        if boundaries and row.get("tool"):
            actions_after += 1
            ids = arg_identifiers(row.get("args"))
            for ident in ids:
                seen_in = [k for k in range(t) if ident in (rows[k].get("observation") or "")]
                if not seen_in:
                    continue
                refs += 1
                in_window = any(ident in texts[k] for k in range(window_start, t)) or ident in prompt_ids
                if not in_window:
                    oow += 1
                    lost.append(ident)
    return ReplayResult(boundaries=boundaries, actions_after=actions_after, refs=refs, out_of_window=oow,
                        lost=tuple(lost))


def replay(steps: pl.DataFrame, runs: pl.DataFrame, budgets: Sequence[int] = (2048, 4096, 8192),
           *, encoding: str = "o200k_base") -> pl.DataFrame:
    """:func:`replay_run` for every run and budget; one row per (run, budget).

    Parameters
    ----------
    steps : polars.DataFrame
        The steps table (with their messages).
    runs : polars.DataFrame
        The runs table.
    budgets : sequence of int, default (2048, 4096, 8192)
        Context budgets in tokens.
    encoding : str, default "o200k_base"
        The tokenizer.

    Returns
    -------
    polars.DataFrame
        One row per (run, budget).
    """
    prompts = dict(runs.select("run_id", pl.col("task").fill_null("")).iter_rows())
    out = []
    by_run = steps.partition_by("run_id", as_dict=True, maintain_order=True)
    for (rid,), st in by_run.items():
        for b in budgets:
            r = replay_run(st, prompts.get(rid, ""), b, encoding=encoding)
            out.append({"run_id": rid, "budget": b, "boundaries": r.boundaries, "actions_after": r.actions_after,
                        "refs": r.refs, "out_of_window": r.out_of_window, "lost_ids": list(r.lost)})
    return pl.DataFrame(out, schema_overrides={"lost_ids": pl.List(pl.Utf8)})



def replay_by_budget(replayed: pl.DataFrame) -> pl.DataFrame:
    """:func:`replay`'s rows summed per budget: boundaries per run, runs compacted, references and how many FIFO lost.

    Parameters
    ----------
    replayed : polars.DataFrame
        :func:`replay`.

    Returns
    -------
    polars.DataFrame
        One row per budget.
    """
    return replayed.group_by("budget", maintain_order=True).agg(
        pl.col("boundaries").mean().alias("boundaries_per_run"), (pl.col("boundaries") > 0).mean().alias("runs_compacted"),
        pl.col("actions_after").sum(), pl.col("refs").sum().alias("id_refs_after_boundary"), pl.col("out_of_window").sum(),
        (pl.col("out_of_window") > 0).mean().alias("runs_with_out_of_window_refs")).sort("budget")


__all__ = ["replay", "replay_by_budget", "replay_run", "ReplayResult"]
