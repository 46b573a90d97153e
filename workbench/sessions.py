"""Compactions in coding-agent sessions (Claude Code, Codex): what each replaced, and what the agent did next.

The SJC and TRACE questions asked of real sessions (``notebooks/agent_transcripts.py``):

* :func:`compaction_overview` -- per compaction: trigger, the summary's schema and entries,
  tokens before (``compactMetadata.preTokens`` where the log has it, else counted) and after;
* :func:`after_compaction` -- TRACE's continuation burden (Eq. 2) on real sessions: in the
  ``horizon`` steps after each compaction, and for reference the ``horizon`` steps before it,
  how many calls repeated an identical earlier call and how many returned an error. A real
  session has no blocked calls, so an error result stands in for one.

Which identifiers of a summary have a source in what it replaced is
:func:`workbench.identifiers.identifier_sources`; entries by role with lexical support is
:func:`workbench.composition.entries_by_role`.
"""

from __future__ import annotations

import polars as pl

from workbench import tokens
from workbench.identifiers import replaced_history
from workbench.summary import detect_schema, parse
from workbench.trace import continuation_burden

__all__ = ["after_compaction", "compaction_overview"]


def compaction_overview(tables: dict[str, pl.DataFrame], *, summary: str = "committed_summary",
                        encoding: str = "o200k_base") -> pl.DataFrame:
    """One row per compaction: ``run_id``, ``boundary``, ``trigger``, ``schema``, ``entries``, ``span_steps``,
    ``tokens_before`` and where it came from (``tokens_before_from``: ``log`` when the log recorded the
    context size, ``counted`` otherwise), ``counted_before`` (tokens of the task, the previous summary
    and the replaced steps: what a counter sees without the system prompt and tool definitions) and
    ``tokens_after`` (tokens of the summary), all counted with ``encoding``."""
    comps, steps = tables["compactions"], tables["steps"]
    history = replaced_history(comps, steps, tables.get("runs"))
    rows = []
    for c, (replaced, kept) in zip(comps.iter_rows(named=True), history):
        text = c[summary] or ""
        counted = tokens.count(f"{kept}\n{replaced}", encoding)
        logged = c.get("pre_tokens")
        lo = c["span_start"] if c.get("span_start") is not None else 0
        hi = c["span_end"] if c.get("span_end") is not None else c["step"] - 1
        rows.append({"run_id": c["run_id"], "boundary": c["boundary"], "trigger": c.get("trigger"),
                     "schema": detect_schema(text), "entries": len(parse(text)), "span_steps": max(hi - lo + 1, 0),
                     "tokens_before": logged if logged is not None else counted,
                     "tokens_before_from": "log" if logged is not None else "counted",
                     "counted_before": counted, "tokens_after": tokens.count(text, encoding)})
    return pl.DataFrame(rows, schema={"run_id": pl.Utf8, "boundary": pl.Int64, "trigger": pl.Utf8, "schema": pl.Utf8,
                                      "entries": pl.Int64, "span_steps": pl.Int64, "tokens_before": pl.Int64,
                                      "tokens_before_from": pl.Utf8, "counted_before": pl.Int64,
                                      "tokens_after": pl.Int64})


def _signature(tool: str | None, args: str | None) -> tuple[str, str] | None:
    return None if tool is None else (tool, args or "")


def after_compaction(steps: pl.DataFrame, compactions: pl.DataFrame, *, horizon: int = 5) -> pl.DataFrame:
    """Calls, repeats and errors in the ``horizon`` steps after each compaction and the ``horizon`` before it.

    One row per (compaction, ``window`` ``before`` / ``after``): ``steps`` (a window stops at
    the run's previous or next compaction and at its ends), ``calls`` (steps with a tool),
    ``repeated`` (a call identical in tool and arguments to one earlier in the run), ``errors``
    (the call's result was an error), ``burden`` (TRACE Eq. 2: calls repeated or in error,
    each once) and ``repeated_from_span`` (repeats of a call the summary replaced).
    """
    if horizon < 1:
        raise ValueError(f"horizon: expected at least 1, got {horizon}")
    error = pl.col("error") if "error" in steps.columns else pl.lit(None).alias("error")
    by_run = {k[0]: v.sort("step").select("step", "tool", "args", error).rows()
              for k, v in steps.partition_by("run_id", as_dict=True).items()}  # each run's rows, made once
    bounds: dict[str, list[int]] = {}
    for run_id, step in compactions.select("run_id", "step").iter_rows():
        bounds.setdefault(run_id, []).append(step)
    rows = []
    for c in compactions.iter_rows(named=True):
        records = by_run.get(c["run_id"], [])
        marks = bounds[c["run_id"]]
        b = c["step"]
        prev_b = max((m for m in marks if m < b), default=None)
        next_b = min((m for m in marks if m > b), default=None)
        lo_span = c["span_start"] if c.get("span_start") is not None else (prev_b or 0)
        hi_span = c["span_end"] if c.get("span_end") is not None else b - 1
        windows = {"before": (max(b - horizon, prev_b if prev_b is not None else 0), b - 1),
                   "after": (b, min(b + horizon - 1, next_b - 1 if next_b is not None else b + horizon - 1))}
        for window, (lo, hi) in windows.items():
            seen: set[tuple[str, str]] = set()
            span_calls: set[tuple[str, str]] = set()
            n = calls = 0
            repeated: list[bool] = []
            errors: list[bool] = []
            from_span = 0
            for step, tool, args, error in records:
                sig = _signature(tool, args)
                if lo <= step <= hi:
                    n += 1
                    if sig is not None:
                        calls += 1
                        repeated.append(sig in seen)
                        errors.append(bool(error))
                        from_span += sig in span_calls
                if sig is not None:
                    seen.add(sig)
                    if lo_span <= step <= hi_span:
                        span_calls.add(sig)
                if step >= hi:
                    break
            rows.append({"run_id": c["run_id"], "boundary": c["boundary"], "window": window, "steps": n,
                         "calls": calls, "repeated": sum(repeated), "errors": sum(errors),
                         "burden": continuation_burden(errors, repeated) if calls else 0,
                         "repeated_from_span": from_span})
    return pl.DataFrame(rows, schema={"run_id": pl.Utf8, "boundary": pl.Int64, "window": pl.Utf8, "steps": pl.Int64,
                                      "calls": pl.Int64, "repeated": pl.Int64, "errors": pl.Int64, "burden": pl.Int64,
                                      "repeated_from_span": pl.Int64})
