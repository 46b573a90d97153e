"""What each compaction lost: the environment's facts a compaction replaced, which it carried, which it dropped, and
what the agent paid to fetch the dropped ones again.

A *fact* is a value the environment returned in the history a compaction replaced (the observations of the steps
of its span, :func:`workbench.summaries.replaced_history`'s span: tool outputs and user turns): the fact check's
identifiers (``IDENTIFIER``: URLs and tokens of 5+ characters mixing letters and digits,
the rule ``fact_check_compactions`` uses for ``dropped_ids``), widened to amounts (``$1,204.50`` and numbers with
two decimals, compared as values), ISO dates and file paths. Facts are matched as whole tokens found by the same
rules, never as a substring of a longer token (``INV-1`` is not in ``INV-12``).

*Carried*: the fact is in the summary, the task or the turns the compaction kept (``retained_turn``); *dropped*:
it is not; *re-fetched*: a dropped fact that a later step's observation returns again. ``refetch_steps`` counts
the steps that first returned a dropped fact again, ``refetch_tokens`` their input and output tokens (null where
the log records none): what the agent paid to get back what the compaction lost.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import polars as pl

from workbench._util.long_tokens import bound_tokens
from workbench.summaries._identifiers import IDENTIFIER

#: amounts: a dollar sign, or a number with exactly two decimals (thousands separators allowed)
AMOUNT = re.compile(r"(?<![\w.-])(?:\$\d[\d,]*(?:\.\d+)?|\d[\d,]*\.\d\d)(?![\w.]*\d)")
#: ISO dates (with an optional time)
DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b")
#: file paths: two or more components after a slash (``/srv/app.py``, ``src/app/main.py``)
PATH = re.compile(r"(?<![\w/.:-])(?:~|\.{1,2})?/?(?:[\w.@+-]+/)+[\w.@+-]*\w")

#: the columns of :func:`compaction_losses`
LOSS_COLUMNS = ("run_id", "boundary", "facts_replaced", "facts_carried", "facts_dropped", "facts_refetched",
                "refetch_steps", "refetch_tokens", "pre_tokens", "post_tokens")


def facts(text: str | None) -> dict[str, str]:
    """The facts of one text: ``{fact: kind}`` with kind ``identifier``, ``amount``, ``date`` or ``path``; amounts
    as values with two decimals (``$1,204.5`` is ``1204.50``), every other fact as written.

    Parameters
    ----------
    text : str or None
        The text (None: no facts).

    Returns
    -------
    dict of str to str
        Each fact and its kind, in order of appearance.
    """
    if not text:
        return {}
    text = bound_tokens(text)
    out: dict[str, str] = {}
    for m in DATE.finditer(text):
        out.setdefault(m.group(0), "date")
    for m in PATH.finditer(text):
        if "/" in m.group(0) and not m.group(0).startswith("http"):
            out.setdefault(m.group(0).rstrip(".,;:)"), "path")
    for m in IDENTIFIER.finditer(text):
        value = m.group(0).rstrip(".,;:)")
        if not DATE.fullmatch(value):
            out.setdefault(value, "identifier")
    for m in AMOUNT.finditer(text):
        raw = m.group(0).lstrip("$").replace(",", "")
        try:
            out.setdefault(f"{float(raw):.2f}", "amount")
        except ValueError:
            continue
    return out


def _runs_steps(steps: pl.DataFrame, wanted: set[str]) -> dict[str, tuple[list[int], list[str], dict[int, int]]]:
    """Each wanted run's step numbers and observations in step order, and the tokens (input + output) of the steps
    that record any."""
    cols = [c for c in ("input_tokens", "output_tokens") if c in steps.columns]
    frame = steps.filter(pl.col("run_id").is_in(list(wanted))).select("run_id", "step", "observation", *cols)
    out = {}
    for (run_id,), st in frame.partition_by("run_id", as_dict=True, maintain_order=True).items():
        st = st.sort("step")
        numbers = st.get_column("step").to_list()
        tokens: dict[int, int] = {}
        if cols:
            spent = st.select(pl.when(pl.any_horizontal(pl.col(cols).is_not_null()))
                              .then(pl.sum_horizontal(pl.col(cols).fill_null(0)))).to_series().to_list()
            tokens = {n: t for n, t in zip(numbers, spent) if t is not None}
        out[run_id] = (numbers, st.get_column("observation").to_list(), tokens)
    return out


def _span(c: Mapping[str, Any]) -> tuple[int, int]:
    """The first and last step a compaction replaced (``span_start``..``span_end``, else every step before it)."""
    return (c["span_start"] if c.get("span_start") is not None else 0,
            c["span_end"] if c.get("span_end") is not None else c["step"] - 1)


def _shown(c: Mapping[str, Any], summary: str) -> str | None:
    """The summary column ``summary`` of a compaction, its candidate where that is null."""
    return c.get(summary) if c.get(summary) is not None else c.get("candidate_summary")


def facts_of(c: Mapping[str, Any], numbers: Sequence[int], observations: Sequence[str | None],
             task: str | None, *, summary: str = "committed_summary",
             step_facts: Sequence[dict[str, str]] | None = None) -> list[dict[str, Any]]:
    """One compaction's facts (:func:`compaction_facts`' rows without the key) from its row ``c``, its run's step
    numbers and observations in step order, and the run's task; ``step_facts``: each observation's :func:`facts`,
    where the caller has them (a run's several compactions read its steps once)."""
    if step_facts is None:
        step_facts = [facts(o) for o in observations]
    lo, hi = _span(c)
    visible = set(facts(_shown(c, summary))) | set(facts(task)) | set(facts(c.get("retained_turn")))
    replaced: dict[str, tuple[str, int]] = {}
    for k in range(bisect_left(numbers, lo), bisect_right(numbers, hi)):
        for fact, kind in step_facts[k].items():
            replaced.setdefault(fact, (kind, numbers[k]))
    later = [(numbers[k], step_facts[k]) for k in range(bisect_left(numbers, c["step"]), len(numbers))]
    rows: list[dict[str, Any]] = []
    for fact, (kind, source) in replaced.items():
        carried = fact in visible
        refetch = None if carried else next((n for n, found in later if fact in found), None)
        rows.append({"fact": fact, "kind": kind, "source_step": source, "carried": carried, "refetch_step": refetch})
    return rows


def fact_totals(rows: Sequence[Mapping[str, Any]], tokens: Mapping[int, int]) -> dict[str, Any]:
    """One compaction's counts from its ``facts_of`` rows and its run's tokens per step (the steps that record
    any): ``facts_replaced``, ``facts_carried``, ``facts_dropped``, ``facts_refetched``, ``refetch_steps`` (the
    steps that first returned a dropped fact again) and ``refetch_tokens`` (their tokens; null where the run
    records none, 0 where it does and nothing was fetched again)."""
    carried = sum(1 for r in rows if r["carried"])
    back = {r["refetch_step"] for r in rows if not r["carried"] and r["refetch_step"] is not None}
    return {"facts_replaced": len(rows), "facts_carried": carried, "facts_dropped": len(rows) - carried,
            "facts_refetched": sum(1 for r in rows if not r["carried"] and r["refetch_step"] is not None),
            "refetch_steps": len(back),
            "refetch_tokens": sum(tokens.get(n, 0) for n in back) if tokens else None}


_RunSteps = tuple[list[int], list[str], dict[int, int]]


def _each_compaction(tables: Mapping[str, pl.DataFrame], summary: str
                     ) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]], _RunSteps]]:
    """Every compaction in (``run_id``, ``boundary``) order with its ``facts_of`` rows and its run's steps
    (numbers, observations, tokens per step): the one pass over the steps every function here reads (each run's
    observations parsed once)."""
    comps = tables["compactions"]
    runs = tables.get("runs")
    tasks = dict(runs.select("run_id", "task").iter_rows()) if runs is not None and "task" in runs.columns else {}
    by_run = _runs_steps(tables["steps"], set(comps.get_column("run_id").unique().to_list())) if comps.height else {}
    cached: tuple[str | None, list[dict[str, str]]] = (None, [])
    for c in comps.sort("run_id", "boundary").iter_rows(named=True):
        run: _RunSteps = by_run.get(c["run_id"], ([], [], {}))
        numbers, observations, _ = run
        if cached[0] != c["run_id"]:
            cached = (c["run_id"], [facts(o) for o in observations])
        yield c, facts_of(c, numbers, observations, tasks.get(c["run_id"]), summary=summary,
                          step_facts=cached[1]), run


def compaction_facts(tables: Mapping[str, pl.DataFrame], *, summary: str = "committed_summary") -> pl.DataFrame:
    """Every fact every compaction replaced: one row per (compaction, fact).

    Columns ``run_id``, ``boundary``, ``fact``, ``kind`` (identifier, amount, date, path), ``source_step`` (the
    first replaced step whose observation returned it), ``carried`` (in the summary, the task or the kept turns),
    ``refetch_step`` (for a dropped fact, the first later step whose observation returned it again; null when none
    did). ``summary``: the summary column read (``committed_summary``, what the agent saw; the candidate where it is
    null).

    Parameters
    ----------
    tables : mapping of str to polars.DataFrame
        ``compactions``, ``steps`` and ``runs``.
    summary : str, default "committed_summary"
        The summary column read.

    Returns
    -------
    polars.DataFrame
        One row per (compaction, fact) with the columns above.
    """
    rows = [{"run_id": c["run_id"], "boundary": c["boundary"], **row}
            for c, found, _ in _each_compaction(tables, summary) for row in found]
    return pl.DataFrame(rows, schema={"run_id": pl.Utf8, "boundary": pl.Int64, "fact": pl.Utf8, "kind": pl.Utf8,
                                      "source_step": pl.Int64, "carried": pl.Boolean, "refetch_step": pl.Int64})


def compaction_losses(tables: Mapping[str, pl.DataFrame], *, summary: str = "committed_summary") -> pl.DataFrame:
    """What each compaction lost, one row per compaction (keyed by ``run_id``, ``boundary``).

    Parameters
    ----------
    tables : mapping of str to polars.DataFrame
        The runs (optional: the task counts as carried), steps and compactions tables.
    summary : str, default "committed_summary"
        The summary column a fact is looked for in.

    Returns
    -------
    polars.DataFrame
        ``LOSS_COLUMNS``: ``facts_replaced`` (environment facts of the replaced history) = ``facts_carried`` +
        ``facts_dropped``; ``facts_refetched`` (dropped facts a later observation returned again),
        ``refetch_steps`` and ``refetch_tokens`` (the steps that first returned them, and their tokens; null where
        the log records no tokens), and the recorded ``pre_tokens`` / ``post_tokens`` (null where the log has none).
    """
    rows = [{"run_id": c["run_id"], "boundary": c["boundary"], **fact_totals(found, run[2]),
             "pre_tokens": c.get("pre_tokens"), "post_tokens": c.get("post_tokens")}
            for c, found, run in _each_compaction(tables, summary)]
    return pl.DataFrame(rows, schema={"run_id": pl.Utf8, "boundary": pl.Int64, "facts_replaced": pl.Int64,
                                      "facts_carried": pl.Int64, "facts_dropped": pl.Int64,
                                      "facts_refetched": pl.Int64, "refetch_steps": pl.Int64,
                                      "refetch_tokens": pl.Int64, "pre_tokens": pl.Int64, "post_tokens": pl.Int64})


#: what :func:`losses_by` summarises per compaction, and how it names each
LOSS_MEASURES = {"facts_dropped": "dropped facts per compaction", "facts_refetched": "re-fetched facts per compaction",
                 "refetch_tokens": "re-fetch tokens per compaction"}


def losses_by(losses: pl.DataFrame, tables: Mapping[str, pl.DataFrame], by: Sequence[str], *, n_boot: int = 2000,
              seed: int = 0) -> pl.DataFrame:
    """:func:`compaction_losses` per group, with scenario-bootstrap intervals: one row per group and measure of
    ``LOSS_MEASURES`` (the mean over the group's compactions).

    Parameters
    ----------
    losses : polars.DataFrame
        :func:`compaction_losses`' table.
    tables : mapping of str to polars.DataFrame
        The runs (``scenario_id``, the clusters resampled, and any ``by`` column of theirs) and compactions (any
        ``by`` column of theirs: ``strategy``, ``compaction_type``).
    by : sequence of str
        The grouping columns, from the runs or the compactions.
    n_boot : int, default 2000
        Bootstrap resamples.
    seed : int, default 0
        Seed of the resampling.

    Returns
    -------
    polars.DataFrame
        The ``by`` columns, ``measure``, and the interval columns (``estimate``, ``ci_low``, ``ci_high``, ``n``
        compactions with a value, ``n_missing`` without one -- no tokens recorded --, ``reason``, ``interval``
        the interval's rule) and
        ``n_scenarios`` (no interval, with its reason, over fewer than five).
    """
    import numpy as np

    from workbench.stats import bootstrap
    from workbench.stats._bootstrap import ZERO_WIDTH_MIN_SCENARIOS

    runs = tables["runs"]
    from_runs = [b for b in by if b in runs.columns and b not in losses.columns]
    comps = tables["compactions"]
    from_comps = [b for b in by if b not in from_runs and b not in losses.columns and b in comps.columns]
    missing = [b for b in by if b not in from_runs and b not in from_comps and b not in losses.columns]
    if missing:
        raise ValueError(f"losses_by: no column {missing} in the runs or compactions")
    frame = losses.join(runs.select("run_id", "scenario_id", *from_runs), on="run_id", how="left")
    if from_comps:
        frame = frame.join(comps.select("run_id", "boundary", *from_comps), on=["run_id", "boundary"], how="left")
    rows = []
    for key, part in frame.sort(*by, nulls_last=True).partition_by(list(by), as_dict=True,
                                                                   maintain_order=True).items():
        for k, (measure, name) in enumerate(LOSS_MEASURES.items()):
            have = part.filter(pl.col(measure).is_not_null())
            res = bootstrap(np.mean, have.get_column(measure).cast(pl.Float64).to_numpy(),
                            clusters=have.get_column("scenario_id").to_numpy(), n_boot=n_boot, seed=seed + k,
                            n_missing=part.height - have.height)
            row, scenarios = res.row(), have.get_column("scenario_id").n_unique()
            row["interval"] = row.pop("method")  # the interval's rule; "method" is the testbed's policy
            if scenarios < ZERO_WIDTH_MIN_SCENARIOS and math.isfinite(row["estimate"]):  # type: ignore[arg-type]
                row.update(ci_low=float("nan"), ci_high=float("nan"), reason=(
                    f"no interval: {scenarios} scenario(s); resampling fewer than {ZERO_WIDTH_MIN_SCENARIOS} "
                    "scenarios says nothing of the spread between them"))
            rows.append({**dict(zip(by, key)), "measure": name, **row, "n_scenarios": scenarios})
    return pl.DataFrame(rows)


def _literal(value: str, text: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(value)}(?![\w-]|\.\d)", text) is not None


def dropped_fact_accuracy(tables: Mapping[str, pl.DataFrame], *, summary: str = "committed_summary") -> pl.DataFrame:
    """The dropped-fact detector against the testbed's ground truth: the facts each task needs (its invoices' ids
    and amounts, from ``runs.gt_world``), each found by its exact text.

    A needed fact is *truly dropped* at a compaction when an observation of the replaced span shows it and neither
    the summary, the task nor the kept turns do (a literal search, independent of the detector's patterns). Over
    every compaction of runs with a world: ``tp`` (dropped facts the detector reports that are truly dropped),
    ``fp`` (reported dropped, not a truly dropped needed fact: a fact no task needs, or one the summary holds in
    another form), ``fn`` (truly dropped, not reported), ``precision`` and ``recall``.

    Parameters
    ----------
    tables : mapping of str to polars.DataFrame
        The runs (with ``gt_world``), steps and compactions tables.
    summary : str, default "committed_summary"
        The summary column a fact is looked for in.

    Returns
    -------
    polars.DataFrame
        One row: ``compactions``, ``truly_dropped``, ``reported_dropped``, ``tp``, ``fp``, ``fn``, ``precision``,
        ``recall``.
    """
    import json

    runs = tables["runs"]
    if "gt_world" not in runs.columns:
        raise ValueError("dropped_fact_accuracy needs runs.gt_world (the testbed's tasks): this log has no world")
    worlds = {r: json.loads(w) for r, w in runs.select("run_id", "gt_world").iter_rows() if w}
    tasks = dict(runs.select("run_id", "task").iter_rows()) if "task" in runs.columns else {}
    comps = tables["compactions"].filter(pl.col("run_id").is_in(list(worlds)))
    reported: set[tuple[str, int, str]] = set()
    truth: set[tuple[str, int, str]] = set()
    for c, found, (numbers, observations, _) in _each_compaction({**tables, "compactions": comps}, summary):
        reported.update((c["run_id"], c["boundary"], r["fact"]) for r in found if not r["carried"])
        lo, hi = _span(c)
        span = "\n".join(o or "" for o in observations[bisect_left(numbers, lo):bisect_right(numbers, hi)])
        seen = "\n".join(t or "" for t in (_shown(c, summary), tasks.get(c["run_id"]), c.get("retained_turn")))
        for invoice in worlds[c["run_id"]].get("invoices", []):
            for value in (invoice["invoice_id"], f"{invoice['amount']:.2f}"):
                if _literal(value, span) and not _literal(value, seen):
                    truth.add((c["run_id"], c["boundary"], value))
    tp, fp, fn = len(reported & truth), len(reported - truth), len(truth - reported)
    return pl.DataFrame({"compactions": [comps.height], "truly_dropped": [len(truth)], "reported_dropped":
                         [len(reported)], "tp": [tp], "fp": [fp], "fn": [fn],
                         "precision": [tp / (tp + fp) if tp + fp else float("nan")],
                         "recall": [tp / (tp + fn) if tp + fn else float("nan")]})


__all__ = ["compaction_facts", "compaction_losses", "dropped_fact_accuracy", "facts", "losses_by"]
