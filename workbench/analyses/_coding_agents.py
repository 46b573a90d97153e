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
:func:`workbench.summaries.identifier_sources`; entries by role with lexical support is
:func:`workbench.analyses.sjc.entries_by_role`, its unsupported share with a session-bootstrap interval
:func:`workbench.analyses.sjc.unsupported_by_role`.

:class:`SessionAnalyses` runs all of them a batch of sessions at a time
(:func:`workbench.tables.batches_by_run`), so a directory of any number of sessions fits in memory: the
per-compaction tables go to disk as they are made and come back as scans, and the entry counts are added up.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from workbench import tokens
from workbench.stats._bootstrap import DEFAULT_N_BOOT
from workbench.summaries._identifiers import identifier_sources, replaced_history
from workbench.summaries._grammar import detect_schema, parse
from workbench.analyses.trace import continuation_burden

__all__ = ["after_compaction", "burden_totals", "compaction_overview", "compaction_timeline", "identifier_share",
           "prompt_cache", "prompt_cache_means", "SessionAnalyses", "token_medians"]


def compaction_overview(tables: dict[str, pl.DataFrame], *, summary: str = "committed_summary",
                        encoding: str = "o200k_base", history: list[tuple[str, str]] | None = None) -> pl.DataFrame:
    """One row per compaction: ``run_id``, ``boundary``, ``trigger``, ``schema``, ``entries``, ``span_steps``,
    ``tokens_before`` and where it came from (``tokens_before_from``: ``log`` when the log recorded the
    context size, ``counted`` otherwise), ``counted_before`` (tokens of the task, the previous summary
    and the replaced steps: what a counter sees without the system prompt and tool definitions) and
    ``tokens_after`` (tokens of the summary), all counted with ``encoding``. ``history``: the compactions'
    :func:`~workbench.summaries.replaced_history`, when the caller has it already.

    Parameters
    ----------
    tables : dict of str to polars.DataFrame
        ``runs``, ``steps`` and ``compactions``.
    summary : str, default "committed_summary"
        The summary column read.
    encoding : str, default "o200k_base"
        The tokenizer counted with.
    history : list of tuple of (str, str), optional
        The compactions' replaced and kept text, when the caller has it.

    Returns
    -------
    polars.DataFrame
        One row per compaction with the columns above.
    """
    comps, steps = tables["compactions"], tables["steps"]
    if history is None:
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

    Parameters
    ----------
    steps : polars.DataFrame
        The steps table.
    compactions : polars.DataFrame
        The compactions table of the same runs.
    horizon : int, default 5
        Steps in each window.

    Returns
    -------
    polars.DataFrame
        Two rows per compaction (``before``, ``after``) with the counts above.
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


def _minutes(milliseconds: pl.Expr) -> pl.Expr:
    """Milliseconds as minutes, each divided by numpy (correctly rounded): polars divides a column of more than
    one row by the reciprocal, so the same session's minutes would differ in the last bit with the batch it came
    in (20 s: 0.33333333333333337 in a column, 0.3333333333333333 alone)."""
    return milliseconds.map_batches(
        lambda s: pl.Series(s.name, s.cast(pl.Float64).to_numpy() / 60_000, dtype=pl.Float64).fill_nan(None),
        return_dtype=pl.Float64)


def compaction_timeline(runs: pl.DataFrame, compactions: pl.DataFrame) -> pl.DataFrame:
    """When each session compacted: one row per compaction with a time, ``run_id``, ``boundary``, ``trigger``,
    ``minutes`` since the session's first line, and the session's length in ``session_minutes``.

    Sessions and compactions without times (logs that do not record them) are left out.

    Parameters
    ----------
    runs : polars.DataFrame
        The runs table (``started_at``, ``ended_at``).
    compactions : polars.DataFrame
        The compactions table (``timestamp``).

    Returns
    -------
    polars.DataFrame
        One row per timed compaction.
    """
    if "timestamp" not in compactions.columns or "started_at" not in runs.columns:
        return pl.DataFrame(schema={"run_id": pl.Utf8, "boundary": pl.Int64, "trigger": pl.Utf8,
                                    "minutes": pl.Float64, "session_minutes": pl.Float64})
    sessions = runs.select("run_id", _time("started_at").alias("_start"), _time("ended_at").alias("_end"))
    trigger = pl.col("trigger") if "trigger" in compactions.columns else pl.lit(None, dtype=pl.Utf8).alias("trigger")
    at = compactions.select("run_id", "boundary", trigger, _time("timestamp").alias("_at"))
    minutes = _minutes((pl.col("_at") - pl.col("_start")).dt.total_milliseconds())
    length = _minutes((pl.col("_end") - pl.col("_start")).dt.total_milliseconds())
    return (at.join(sessions, on="run_id").filter(pl.col("_at").is_not_null() & pl.col("_start").is_not_null())
            .select("run_id", "boundary", "trigger", minutes.alias("minutes"), length.alias("session_minutes"))
            .sort("run_id", "boundary"))


def prompt_cache(steps: pl.DataFrame, compactions: pl.DataFrame) -> pl.DataFrame:
    """What a compaction does to the prompt cache: the prompt of the last call before it and of the first call
    after it, split into ``cache_read_tokens``, ``cache_creation_tokens`` and ``fresh_tokens`` (the rest of
    ``input_tokens``). One row per (compaction, ``window``), ``window`` = ``before`` / ``after``; a compaction with
    no recorded call on one side has no row there. Logs without the cache's share have none at all.

    Parameters
    ----------
    steps : polars.DataFrame
        The steps table (with its cache token columns).
    compactions : polars.DataFrame
        The compactions table of the same runs.

    Returns
    -------
    polars.DataFrame
        Up to two rows per compaction (``before``, ``after``).
    """
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


def burden_totals(after: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """Calls, repeated calls and errors summed over every compaction, per window (``before`` then ``after``), from
    :func:`after_compaction`: what :func:`workbench.plots.coding_agents.burden_before_after` draws as shares.

    Parameters
    ----------
    after : polars.DataFrame or polars.LazyFrame
        :func:`after_compaction`.

    Returns
    -------
    polars.DataFrame
        One row per window.
    """
    totals = after.lazy().group_by("window").agg(pl.col("calls", "repeated", "errors").sum())
    order = pl.col("window").replace_strict({"before": 0, "after": 1}, default=2)
    return totals.sort(order).collect(engine="streaming")


def prompt_cache_means(cache: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """The mean call before and the mean call after a compaction (:func:`prompt_cache`): ``window``, ``calls`` and
    the mean of each part of the prompt (cache read, cache written, fresh; a missing part counts 0).

    Parameters
    ----------
    cache : polars.DataFrame or polars.LazyFrame
        :func:`prompt_cache`.

    Returns
    -------
    polars.DataFrame
        One row per window.
    """
    parts = ("cache_read_tokens", "cache_creation_tokens", "fresh_tokens")
    means = cache.lazy().group_by("window").agg(pl.len().alias("calls"),
                                               *(pl.col(c).fill_null(0).mean() for c in parts))
    return means.sort(pl.col("window").replace_strict({"before": 0, "after": 1}, default=2)).collect(engine="streaming")


def token_medians(overview: pl.DataFrame | pl.LazyFrame) -> dict[str, int]:
    """The median tokens of a compaction (:func:`compaction_overview`) before it, as the agent recorded them
    (``logged``) or counted from the replaced history (``counted``), and after it (``after``: the summary).

    Parameters
    ----------
    overview : polars.DataFrame or polars.LazyFrame
        :func:`compaction_overview`.

    Returns
    -------
    dict of str to int
        ``logged``, ``counted`` and ``after``.
    """
    import numpy as np

    cols = overview.lazy().select("tokens_before", "tokens_before_from", "tokens_after").collect(engine="streaming")
    logged = (cols.get_column("tokens_before_from") == "log").to_numpy()
    before = np.maximum(cols.get_column("tokens_before").fill_null(1).to_numpy(), 1)
    after = np.maximum(cols.get_column("tokens_after").fill_null(1).to_numpy(), 1)
    return {name: int(np.median(values)) for name, values in (("logged", before[logged]),
                                                              ("counted", before[~logged]), ("after", after))
            if values.size}


def identifier_share(ids: pl.DataFrame) -> pl.DataFrame:
    """Per compaction with identifiers (from :func:`workbench.summaries.identifier_sources`): ``run_id``,
    ``boundary``, ``identifiers``, how many are ``sourced`` in the replaced history and ``kept`` beside it, and
    ``sourced_share``.

    Parameters
    ----------
    ids : polars.DataFrame
        :func:`workbench.summaries.identifier_sources`' rows.

    Returns
    -------
    polars.DataFrame
        One row per compaction with identifiers.
    """
    share = ids.group_by("run_id", "boundary").agg(pl.len().alias("identifiers"), pl.col("sourced").sum(),
                                                   pl.col("kept").sum()).sort("run_id", "boundary")
    return share.with_columns((pl.col("sourced") / pl.col("identifiers")).alias("sourced_share"))


class SessionAnalyses:
    """Every analysis of the coding-agent notebook, fed a batch of sessions at a time with its ``add`` method.

    A batch is a mapping of ``runs``, ``steps`` and ``compactions`` (and ``entries`` with their ``scores``, for the
    judge's support) holding the same sessions, as :func:`workbench.tables.batches_by_run` yields them. Each batch
    gives its rows of the per-compaction tables, written to Parquet parts in a temporary directory; :meth:`table`
    scans them back (:data:`TABLES`). Each table is sorted as its function sorts it within a batch, and batches
    follow each other, so with one batch (up to its size in sessions) the tables are the functions' own. The
    entries are counted as they pass: :meth:`entries_by_role` and :meth:`unsupported_by_role` are those of all
    entries at once (:func:`workbench.analyses.sjc.unsupported_from_counts`). The replaced history of a compaction is
    built once for the overview and the identifier check. Memory holds one batch, not the directory. Each batch's
    references are checked (a step or compaction of a session the runs lack, an entry of a compaction the
    compactions lack): a scanned directory's are not when it is opened.
    """

    #: the per-compaction tables: name -> the function whose rows they are
    TABLES = {"overview": "compaction_overview", "timeline": "compaction_timeline", "prompt_cache": "prompt_cache",
              "after": "after_compaction", "identifiers": "identifier_share",
              "unsourced": "identifier_sources (the identifiers without a source)"}

    def __init__(self, *, horizon: int = 5, tau: float = 0.5, encoding: str = "o200k_base", judge: str | None = None,
                 summary: str = "committed_summary", clusters: str = "scenario_id") -> None:
        if horizon < 1:
            raise ValueError(f"horizon: expected at least 1, got {horizon}")
        self.horizon, self.tau, self.encoding, self.judge = horizon, tau, encoding, judge
        self.summary, self.clusters = summary, clusters
        self._dir = Path(tempfile.mkdtemp(prefix="workbench-sessions-"))
        self._remove = weakref.finalize(self, shutil.rmtree, self._dir, True)  # the parts go with the object
        self._parts: dict[str, list[Path]] = {name: [] for name in self.TABLES}
        self._empty: dict[str, pl.DataFrame] = {}
        self._by_role: list[pl.DataFrame] = []
        self._unit_counts: list[pl.DataFrame] = []
        self.batches = self.compactions = self.identifiers = self.sourced = 0

    def add(self, batch: Mapping[str, pl.DataFrame]) -> None:
        """Analyse one batch of sessions (see the class)."""
        from workbench.analyses.sjc._composition import entries_by_role, support_from_scores, unsupported_counts

        from workbench.errors import SchemaError
        from workbench.tables._files import check_references

        try:  # a scanned directory's references are not checked when it is opened: each batch's are, here
            check_references(batch)
        except SchemaError as err:  # (its rows are the batch's, not the file's: the key says which, not the row)
            raise SchemaError(file=err.file, field=err.field, expected=err.expected, got=err.got) from None
        runs, steps, comps = batch["runs"], batch["steps"], batch["compactions"]
        history = replaced_history(comps, steps, runs)
        tables = {"runs": runs, "steps": steps, "compactions": comps}
        self._spill("overview", compaction_overview(tables, summary=self.summary, encoding=self.encoding,
                                                    history=history))
        self._spill("timeline", compaction_timeline(runs, comps))
        self._spill("prompt_cache", prompt_cache(steps, comps))
        self._spill("after", after_compaction(steps, comps, horizon=self.horizon))
        ids = identifier_sources(comps, steps, runs, summary=self.summary, history=history)
        self._spill("identifiers", identifier_share(ids))
        self._spill("unsourced", ids.filter(~pl.col("sourced")))
        self.identifiers += ids.height
        self.sourced += int(ids.get_column("sourced").sum())
        self.compactions += comps.height
        self.batches += 1
        if "entries" in batch and "scores" in batch:
            entries = support_from_scores(batch["entries"], batch["scores"], self.tau, judge=self.judge)
            self._by_role.append(entries_by_role(entries))
            if self.clusters in runs.columns and self.clusters not in entries.columns:
                entries = entries.join(runs.select("run_id", self.clusters), on="run_id", how="left")
            self._unit_counts.append(unsupported_counts(entries, self.clusters))
            if len(self._unit_counts) >= 64:  # added up now and then: a cluster's rows of many batches become one
                self._unit_counts = [pl.concat(self._unit_counts).group_by("schema", "role", "unit").agg(
                    pl.col("entries", "unsupported").sum())]

    def _spill(self, name: str, frame: pl.DataFrame) -> None:
        self._empty.setdefault(name, frame.clear())
        if frame.height:
            part = self._dir / f"{name}-{len(self._parts[name]):06d}.parquet"
            frame.write_parquet(part)
            self._parts[name].append(part)

    def table(self, name: str) -> pl.LazyFrame:
        """A scan of one per-compaction table (:data:`TABLES`), every batch's rows in turn; empty (with its
        columns) when no batch had a row, or before the first batch."""
        if name not in self.TABLES:
            raise ValueError(f"table: expected one of {sorted(self.TABLES)}, got {name!r}")
        if not self._parts[name]:
            return self._empty.get(name, pl.DataFrame()).lazy()
        return pl.scan_parquet(self._parts[name])

    def entries_by_role(self) -> pl.DataFrame:
        """:func:`workbench.analyses.sjc.entries_by_role` of every batch's entries (with ``supported``)."""
        if not self._by_role:
            return pl.DataFrame(schema={"schema": pl.Utf8, "role": pl.Utf8, "entries": pl.UInt32,
                                        "unsupported": pl.UInt32, "unsupported_share": pl.Float64})
        every = pl.concat(self._by_role)
        summed = every.group_by("schema", "role").agg(pl.col("entries", "unsupported").sum()).cast(
            {"entries": every.schema["entries"], "unsupported": every.schema["unsupported"]})
        return summed.sort("schema", "role").with_columns(
            (pl.col("unsupported") / pl.col("entries")).alias("unsupported_share"))

    def unsupported_by_role(self, *, n_boot: int = DEFAULT_N_BOOT, seed: int = 0, level: float = 0.95) -> pl.DataFrame:
        """:func:`workbench.analyses.sjc.unsupported_by_role` of every batch's entries, clusters resampled."""
        from workbench.analyses.sjc._composition import unsupported_from_counts

        counts = pl.concat(self._unit_counts) if self._unit_counts else pl.DataFrame(
            schema={"schema": pl.Utf8, "role": pl.Utf8, "unit": pl.Utf8, "entries": pl.Int64, "unsupported": pl.Int64})
        return unsupported_from_counts(counts, n_boot=n_boot, seed=seed, level=level)

    def close(self) -> None:
        """Remove the parts now (the scans of :meth:`table` can no longer be read); else they go with the object."""
        self._remove()
