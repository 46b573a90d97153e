"""Replay the compaction loop's budget trigger and the FIFO policy over real trajectories (no LLM).

For a run's steps (action + observation, in order) the context before step t is the first
prompt plus every earlier turn; a *boundary* fires when it passes the budget (SJC Section 2;
counted in o200k tokens). Under FIFO the oldest turns are dropped until the context fits
again. What FIFO no longer holds when the agent later acts on it is the real-data form of the
TRACE article's silent channel: an identifier in a later action's arguments that the run
saw only in observations that have fallen out of the window.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import polars as pl

from workbench import tokens

from workbench.trace import IDENTIFIER as _ID


def arg_identifiers(args: str | None) -> set[str]:
    """Identifiers in an action's JSON arguments: string values mixing letters and digits (5+ chars)."""
    if not args:
        return set()
    try:
        value = json.loads(args)
    except json.JSONDecodeError:
        return set(_ID.findall(args))
    out: set[str] = set()

    def walk(v: object) -> None:
        if isinstance(v, str):
            out.update(_ID.findall(v))
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(value)
    return out


def _turn_text(row: dict[str, object]) -> str:
    action = f"{row.get('tool')}({row.get('args')})" if row.get("tool") else str(row.get("text") or "")
    return f"{action}\n{row.get('observation') or ''}"


def replay_run(steps: pl.DataFrame, first_prompt: str, budget: int, *, encoding: str = "o200k_base") -> dict[str, object]:
    """Boundaries and out-of-window references of one run under the budget trigger with FIFO.

    Returns ``boundaries`` (times the context passed the budget before a step), ``actions``
    after the first boundary, ``refs`` (argument identifiers of those actions that the run
    had seen in an earlier observation), ``out_of_window`` (of those, seen only in
    observations FIFO had dropped and nowhere in the window or the first prompt) and the
    identifiers themselves.
    """
    rows = steps.sort("step").to_dicts()
    texts = [_turn_text(r) for r in rows]
    sizes = tokens.count_many(texts, encoding)
    prompt_size = tokens.count(first_prompt, encoding)
    window_start = 0  # index of the oldest turn still in the FIFO window
    boundaries = 0
    actions_after = refs = oow = 0
    lost: list[str] = []
    prompt_ids = set(_ID.findall(first_prompt))
    for t, row in enumerate(rows):
        context = prompt_size + sum(sizes[window_start:t])
        if context > budget and t - window_start >= 2:
            boundaries += 1
            while t - window_start > 1 and prompt_size + sum(sizes[window_start:t]) > budget:
                window_start += 1
        if boundaries and row.get("tool"):
            actions_after += 1
            ids = arg_identifiers(row.get("args"))  # type: ignore[arg-type]
            for ident in ids:
                seen_in = [k for k in range(t) if ident in (rows[k].get("observation") or "")]
                if not seen_in:
                    continue
                refs += 1
                in_window = any(ident in texts[k] for k in range(window_start, t)) or ident in prompt_ids
                if not in_window:
                    oow += 1
                    lost.append(ident)
    return {"boundaries": boundaries, "actions_after": actions_after, "refs": refs, "out_of_window": oow,
            "lost": lost}


def replay(steps: pl.DataFrame, runs: pl.DataFrame, budgets: Sequence[int] = (2048, 4096, 8192),
           *, encoding: str = "o200k_base") -> pl.DataFrame:
    """:func:`replay_run` for every run and budget; one row per (run, budget)."""
    prompts = dict(runs.select("run_id", pl.col("task").fill_null("")).iter_rows())
    out = []
    by_run = steps.partition_by("run_id", as_dict=True, maintain_order=True)
    for (rid,), st in by_run.items():
        for b in budgets:
            r = replay_run(st, prompts.get(rid, ""), b, encoding=encoding)
            out.append({"run_id": rid, "budget": b, **{k: v for k, v in r.items() if k != "lost"},
                        "lost_ids": r["lost"]})
    return pl.DataFrame(out, schema_overrides={"lost_ids": pl.List(pl.Utf8)})


def compact_with(compressor: object, steps: pl.DataFrame, runs: pl.DataFrame, budget: int,
                 *, encoding: str = "o200k_base") -> pl.DataFrame:
    """Real summaries at the budget boundaries of real runs: a ``compactions`` table.

    At each boundary the turns since the previous boundary (all but the latest, which is kept
    verbatim) are compacted by ``compressor`` (:class:`workbench.llm.compressor.OpenClawCompressor`,
    cached through the client layer) with the previous summary; the summary then stands in
    for those turns. A cancelled compaction (quality check failed twice) leaves the history
    uncompressed, as OpenClaw does, and is not a row. The judge (``workbench judge``) and the
    fact check (:func:`workbench.trace.fact_check_compactions`) run on the result.
    """
    from workbench.llm.compressor import OpenClawCompressor

    assert isinstance(compressor, OpenClawCompressor)
    prompts = dict(runs.select("run_id", pl.col("task").fill_null("")).iter_rows())
    out = []
    for (rid,), st in steps.partition_by("run_id", as_dict=True, maintain_order=True).items():
        rows = st.sort("step").to_dicts()
        texts = [_turn_text(r) for r in rows]
        sizes = tokens.count_many(texts, encoding)
        task = prompts.get(rid, "")
        base = tokens.count(task, encoding)
        start, summary, summary_size, boundary = 0, None, 0, 0
        for t, row in enumerate(rows):
            if t - start >= 2 and base + summary_size + sum(sizes[start:t]) > budget:
                turns = [f"[Turn {rows[k]['step']}]: {texts[k]}" for k in range(start, t - 1)]
                res = compressor.compact(turns, task, summary)
                if res.summary is None:
                    continue  # cancelled: the history stays uncompressed
                out.append({"run_id": rid, "boundary": boundary, "step": row["step"], "span_start": rows[start]["step"],
                            "span_end": rows[t - 2]["step"], "previous_summary": summary,
                            "retained_turn": texts[t - 1], "candidate_summary": res.summary,
                            "committed_summary": res.summary})
                summary, summary_size, start, boundary = res.summary, tokens.count(res.summary, encoding), t - 1, boundary + 1
    from workbench import schema

    return schema.validate("compactions", pl.DataFrame(out, schema=schema.table("compactions").polars_schema())
                           if out else schema.empty("compactions"))
