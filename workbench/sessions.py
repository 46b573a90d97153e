"""Compactions in coding-agent sessions (Claude Code, Codex): what each replaced, and what the agent did next.

The SJC and TRACE questions asked of real sessions (``notebooks/agent_transcripts.py``):

* :func:`compaction_overview` -- per compaction: trigger, the summary's schema and entries,
  tokens before (``compactMetadata.preTokens`` where the log has it, else counted) and after;
* :func:`compaction_timeline` -- when each session compacted, in minutes since it started;
* :func:`prompt_cache` -- the prompt of the calls just before and after each compaction, split into what the
  prompt cache served, what was written to it and what was sent fresh (a compaction rewrites the history the
  cache held);
* :func:`after_compaction` -- TRACE's continuation burden (Eq. 2) on real sessions: in the
  ``horizon`` steps after each compaction, and for reference the ``horizon`` steps before it,
  how many calls repeated an identical earlier call and how many returned an error. A real
  session has no blocked calls, so an error result stands in for one.

Which identifiers of a summary have a source in what it replaced is
:func:`workbench.identifiers.identifier_sources`; entries by role with lexical support is
:func:`workbench.composition.entries_by_role`, its unsupported share with a session-bootstrap interval
:func:`workbench.composition.unsupported_by_role`.
"""

from __future__ import annotations

import polars as pl

from workbench import tokens
from workbench.identifiers import replaced_history
from workbench.summary import detect_schema, parse
from workbench.trace import continuation_burden

__all__ = ["after_compaction", "compaction_overview", "compaction_timeline", "prompt_cache"]


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


def _time(column: str) -> pl.Expr:
    """An ISO time column (``2026-11-20T10:04:00.000Z``) as a UTC datetime (null where it is missing)."""
    return pl.col(column).str.to_datetime(time_zone="UTC", strict=False)


def compaction_timeline(runs: pl.DataFrame, compactions: pl.DataFrame) -> pl.DataFrame:
    """When each session compacted: one row per compaction with a time, ``run_id``, ``boundary``, ``trigger``,
    ``minutes`` since the session's first line, and the session's length in ``session_minutes``.

    Sessions and compactions without times (logs that do not record them) are left out.
    """
    if "timestamp" not in compactions.columns or "started_at" not in runs.columns:
        return pl.DataFrame(schema={"run_id": pl.Utf8, "boundary": pl.Int64, "trigger": pl.Utf8,
                                    "minutes": pl.Float64, "session_minutes": pl.Float64})
    sessions = runs.select("run_id", _time("started_at").alias("_start"), _time("ended_at").alias("_end"))
    trigger = pl.col("trigger") if "trigger" in compactions.columns else pl.lit(None, dtype=pl.Utf8).alias("trigger")
    at = compactions.select("run_id", "boundary", trigger, _time("timestamp").alias("_at"))
    minutes = (pl.col("_at") - pl.col("_start")).dt.total_milliseconds() / 60_000
    length = (pl.col("_end") - pl.col("_start")).dt.total_milliseconds() / 60_000
    return (at.join(sessions, on="run_id").filter(pl.col("_at").is_not_null() & pl.col("_start").is_not_null())
            .select("run_id", "boundary", "trigger", minutes.alias("minutes"), length.alias("session_minutes"))
            .sort("run_id", "boundary"))


def prompt_cache(steps: pl.DataFrame, compactions: pl.DataFrame) -> pl.DataFrame:
    """What a compaction does to the prompt cache: the prompt of the last call before it and of the first call
    after it, split into ``cache_read_tokens``, ``cache_creation_tokens`` and ``fresh_tokens`` (the rest of
    ``input_tokens``). One row per (compaction, ``window``), ``window`` = ``before`` / ``after``; a compaction with
    no recorded call on one side has no row there. Logs without the cache's share have none at all."""
    schema = {"run_id": pl.Utf8, "boundary": pl.Int64, "window": pl.Utf8, "step": pl.Int64, "input_tokens": pl.Int64,
              "cache_read_tokens": pl.Int64, "cache_creation_tokens": pl.Int64, "fresh_tokens": pl.Int64}
    if not {"cache_read_tokens", "cache_creation_tokens", "input_tokens"} <= set(steps.columns):
        return pl.DataFrame(schema=schema)
    calls = steps.filter(pl.col("input_tokens").is_not_null()).select(
        "run_id", "step", "input_tokens", pl.col("cache_read_tokens").fill_null(0),
        pl.col("cache_creation_tokens").fill_null(0))
    joined = compactions.select("run_id", "boundary", pl.col("step").alias("_at")).join(calls, on="run_id")
    before = (joined.filter(pl.col("step") < pl.col("_at")).sort("step").group_by("run_id", "boundary")
              .last().with_columns(pl.lit("before").alias("window")))
    after = (joined.filter(pl.col("step") >= pl.col("_at")).sort("step").group_by("run_id", "boundary")
             .first().with_columns(pl.lit("after").alias("window")))
    both = pl.concat([before, after]).with_columns(
        (pl.col("input_tokens") - pl.col("cache_read_tokens") - pl.col("cache_creation_tokens")).alias("fresh_tokens"))
    order = pl.col("window").replace_strict({"before": 0, "after": 1}, return_dtype=pl.Int8)
    return both.sort("run_id", "boundary", order).select(list(schema)).cast(schema)  # type: ignore[arg-type]
