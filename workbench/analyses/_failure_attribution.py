"""Failure attribution against people's labels (Who&When, or any log with failure labels in the same shape):
which agent's step decided a failed run, checked against what people found.

* :func:`failure_gold`: the labels (agent, 0-based step, reason; open label fields of the labels table) with each
  run's subset, question and length.
* :func:`random_baseline`: the expected accuracy of a uniform guess, the paper's Random row (Zhang et al. 2025,
  Table 1): the mean over logs of 1 / (the log's distinct agents) and of 1 / (its steps). ``agents="raw"`` counts
  the agents as the log names them (a Magentic-One role such as ``Orchestrator (thought)`` apart from
  ``Orchestrator (-> WebSurfer)``), as the paper does; ``"normalised"`` counts the agents the labels name.
* predictions come from :func:`workbench.judges.predict` (an attributor over every log) or ``workbench attribute``:
  one row per run with ``attributor``, ``with_reference``, ``agent``, ``step`` and ``reason``.
* :func:`attribution_accuracy`: agent-level and step-level accuracy (a step within +-k of the labelled one; k = 0
  is equality, never the authors' substring match, which counts "1" right for "12"), per subset and overall, each
  with Wilson's score interval, at the design effect's sample size where a question holds several runs (45
  questions appear in both Who&When subsets): the CR2 t interval it replaced covered a true 1% 44% of the time.
* :func:`compare_attributors`: two attributors on the same logs, the paired difference in accuracy with its CR2
  interval and p, and the clustered McNemar p (Durkalski et al. 2003).
* :func:`testbed_gold` and :func:`decisive_after_compaction`: on runs whose ground truth is known (the testbed's
  failed runs, the decisive step the one whose action carried out the failing summary entry), the same evaluation,
  and the share of decisive steps within k steps after a compaction.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

#: the whole of a labelled set in :func:`attribution_accuracy` and :func:`compare_attributors`
OVERALL = "overall"


def failure_gold(tables: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """One row per labelled failed run: ``run_id``, ``subset``, ``question_id`` (the run's scenario), ``agent``,
    ``step`` (0-based), ``reason``, ``n_steps`` and ``n_agents`` / ``n_agents_raw`` (distinct agents, normalised and
    as the log names them). The latest label of each open field counts; a run without an agent or step label is left
    out.

    Parameters
    ----------
    tables : dict of str to polars.DataFrame
        ``runs``, ``steps`` (with ``agent`` and ``agent_raw``) and ``labels`` (fields ``agent``, ``step``,
        ``reason``).

    Returns
    -------
    polars.DataFrame
        The gold labels with each run's facts.
    """
    from workbench.tables._labels import latest_labels

    labels = latest_labels(tables["labels"].filter(pl.col("field").is_in(["agent", "step", "reason"])
                                                   & pl.col("value").is_not_null()))
    wide = labels.pivot("field", index="item_id", values="value", aggregate_function="last")
    for field in ("agent", "step", "reason"):
        if field not in wide.columns:
            wide = wide.with_columns(pl.lit(None, dtype=pl.Utf8).alias(field))
    wide = wide.drop_nulls(["agent", "step"]).select(
        pl.col("item_id").alias("run_id"), "agent", pl.col("step").cast(pl.Int64), "reason")
    steps = tables["steps"]
    runs = tables["runs"].select("run_id", pl.col("subset").fill_null("all"),
                                 pl.col("scenario_id").fill_null(pl.col("run_id")).alias("question_id"))
    unnamed = sorted(unnamed_roles(steps, runs, wide["agent"].unique().to_list()))
    per_run = steps.group_by("run_id").agg(pl.len().alias("n_steps"), pl.col("agent").n_unique().alias("n_agents"),
                                           pl.col("agent_raw").n_unique().alias("n_agents_raw"),
                                           pl.col("agent").filter(~pl.col("agent").is_in(unnamed)).n_unique()
                                           .alias("n_agents_named"))
    return (wide.join(runs, on="run_id").join(per_run, on="run_id")
            .select("run_id", "subset", "question_id", "agent", "step", "reason", "n_steps", "n_agents",
                    "n_agents_raw", "n_agents_named").sort("subset", "run_id"))


def unnamed_roles(steps: pl.DataFrame, runs: pl.DataFrame, named: Sequence[str]) -> set[str]:
    """The roles a fair guess leaves out: agents that no label of the data set names and that act in at least half
    of a subset's logs (Who&When: ``human`` in all 58 Hand-Crafted logs, ``Computer_terminal`` in 116 of the 126
    Algorithm-Generated ones; the next unnamed agent acts in 5 logs). An agent of a single log that no label names
    (most of Who&When's experts) stays: a guess could not know it will not be blamed.

    Parameters
    ----------
    steps : polars.DataFrame
        ``run_id`` and ``agent`` of every step.
    runs : polars.DataFrame
        ``run_id`` and ``subset``.
    named : sequence of str
        Every agent some label names.

    Returns
    -------
    set of str
        The agents left out.
    """
    acting = steps.select("run_id", "agent").unique().join(runs.select("run_id", "subset"), on="run_id")
    logs = runs.group_by("subset").agg(pl.len().alias("logs"))
    share = acting.group_by("subset", "agent").agg(pl.len().alias("in_logs")).join(logs, on="subset")
    frequent = share.filter(pl.col("in_logs") * 2 >= pl.col("logs"))["agent"].to_list()
    return set(frequent) - {None} - set(named)


def testbed_gold(tables: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """:func:`failure_gold`'s frame for runs whose ground truth is known (the testbed's attributions): the decisive
    step is the step whose action carried out the failing summary entry (``action_step``), the agent is the one
    agent of the run (null: these runs have one), the subset the run's method.

    Parameters
    ----------
    tables : dict of str to polars.DataFrame
        ``attributions``, ``runs`` and ``steps``.

    Returns
    -------
    polars.DataFrame
        The columns of :func:`failure_gold`.
    """
    att = tables["attributions"].drop_nulls("action_step").select(
        "run_id", pl.col("action_step").cast(pl.Int64).alias("step"), pl.col("pattern").alias("reason"))
    runs = tables["runs"].select("run_id", pl.col("method").fill_null("all").alias("subset"),
                                 pl.col("scenario_id").fill_null(pl.col("run_id")).alias("question_id"))
    per_run = tables["steps"].group_by("run_id").agg(pl.len().alias("n_steps"))
    return (att.join(runs, on="run_id").join(per_run, on="run_id")
            .with_columns(pl.lit(None, dtype=pl.Utf8).alias("agent"), pl.lit(1, dtype=pl.UInt32).alias("n_agents"),
                          pl.lit(1, dtype=pl.UInt32).alias("n_agents_raw"),
                          pl.lit(1, dtype=pl.UInt32).alias("n_agents_named"))
            .select("run_id", "subset", "question_id", "agent", "step", "reason", "n_steps", "n_agents",
                    "n_agents_raw", "n_agents_named").sort("subset", "run_id"))


def random_baseline(gold: pl.DataFrame, *, agents: str = "raw") -> pl.DataFrame:
    """The expected accuracy (%) of a uniform guess per subset and overall: ``agent_accuracy`` = mean of 1 / distinct
    agents, ``step_accuracy`` = mean of 1 / steps (Zhang et al. 2025, Table 1's Random row).

    The paper's count (``"raw"``) includes roles no label can name (Who&When: ``human`` in every Hand-Crafted log,
    ``Computer_terminal`` in most Algorithm-Generated ones), so it understates what a guess gets; ``"named"`` is the
    fair baseline: per log, a uniform guess among the agents that act in it, leaving out the roles no label of the
    data set names (:func:`unnamed_roles`; ``n_agents_named``), averaged over logs.

    Parameters
    ----------
    gold : polars.DataFrame
        :func:`failure_gold`.
    agents : {"raw", "normalised", "named"}, default "raw"
        Count the agents as the log names them (the paper's count), normalised (the labels' spelling), or without
        the roles no label names (the fair guess).

    Returns
    -------
    polars.DataFrame
        ``subset``, ``logs``, ``agent_accuracy``, ``step_accuracy``, ``agents``.
    """
    if agents not in ("raw", "normalised", "named"):
        raise ValueError(f"agents: expected 'raw', 'normalised' or 'named', got {agents!r}")
    column = {"raw": "n_agents_raw", "normalised": "n_agents", "named": "n_agents_named"}[agents]
    parts = [*gold.partition_by("subset", maintain_order=True), gold]
    rows = [{"subset": p["subset"][0] if p is not gold else OVERALL, "logs": p.height,
             "agent_accuracy": 100.0 * float(np.mean(1.0 / p[column].to_numpy().astype(np.float64))),
             "step_accuracy": 100.0 * float(np.mean(1.0 / p["n_steps"].to_numpy().astype(np.float64))),
             "agents": agents}
            for p in parts if p.height]
    return pl.DataFrame(rows)


def random_within(gold: pl.DataFrame, ks: Sequence[int] = range(6)) -> pl.DataFrame:
    """The expected step accuracy within +-k of a uniform guess over each log's steps, per subset and overall: the
    mean over logs of (steps within k of the labelled one) / (steps). At k = 0 it is :func:`random_baseline`'s step
    accuracy (as a share).

    Parameters
    ----------
    gold : polars.DataFrame
        :func:`failure_gold`.
    ks : sequence of int, default 0..5
        The tolerances.

    Returns
    -------
    polars.DataFrame
        ``subset``, ``k``, ``estimate``.
    """
    rows = []
    for k in ks:
        within = ((pl.min_horizontal(pl.col("step") + k, pl.col("n_steps").cast(pl.Int64) - 1)
                   - pl.max_horizontal(pl.col("step") - k, pl.lit(0)) + 1) / pl.col("n_steps")).alias("p")
        shares = gold.with_columns(within)
        for (subset,), part in shares.group_by("subset", maintain_order=True):
            rows.append({"subset": subset, "k": int(k), "estimate": float(np.mean(part["p"].to_numpy()))})
        rows.append({"subset": OVERALL, "k": int(k), "estimate": float(np.mean(shares["p"].to_numpy()))})
    return pl.DataFrame(rows)


def _hits(gold: pl.DataFrame, predictions: pl.DataFrame, level: str, k: int) -> pl.DataFrame:
    """Gold joined with predictions and a 0/1 ``hit`` per log (a log without a prediction is a miss)."""
    joined = gold.join(predictions.select("run_id", "attributor", "with_reference", pl.col("agent").alias("p_agent"),
                                          pl.col("step").alias("p_step")), on="run_id", how="inner")
    if level == "agent":
        hit = (pl.col("p_agent") == pl.col("agent")).fill_null(False)
    else:
        hit = ((pl.col("p_step") - pl.col("step")).abs() <= k).fill_null(False)
    return joined.with_columns(hit.cast(pl.Float64).alias("hit"))


def _share(values: np.ndarray, clusters: np.ndarray, level: float) -> dict[str, object]:
    from workbench.stats._bootstrap import share_interval

    res = share_interval(values, clusters, level=level)
    return {"estimate": res.estimate, "ci_low": res.ci_low, "ci_high": res.ci_high, "n": res.n,
            "n_clusters": res.n_clusters, "method": res.method, "level": level, "reason": res.reason}


def attribution_accuracy(gold: pl.DataFrame, predictions: pl.DataFrame, *, ks: Sequence[int] = (0,),
                         level: float = 0.95) -> pl.DataFrame:
    """Agent-level and step-level accuracy of each attributor (and reference setting), per subset and overall, with
    Wilson intervals (at the design effect's sample size where a question holds several runs:
    :func:`workbench.stats.share_interval`).

    Parameters
    ----------
    gold : polars.DataFrame
        :func:`failure_gold`.
    predictions : polars.DataFrame
        Predictions (``PREDICTION_COLUMNS``), any number of attributors.
    ks : sequence of int, default (0,)
        Step tolerances: a step within +-k of the labelled one counts (k = 0: equality).
    level : float, default 0.95
        Coverage of the intervals.

    Returns
    -------
    polars.DataFrame
        ``attributor``, ``with_reference``, ``subset``, ``level_of`` (``agent`` or ``step``), ``k`` (null for
        agents), then ``estimate`` (a share), ``ci_low``, ``ci_high``, ``n``, ``n_clusters``, ``method``, ``level``,
        ``reason``, and ``n_missing`` (labelled logs the attributor gave no prediction for: misses).
    """
    twice = predictions.group_by("run_id", "attributor", "with_reference").len().filter(pl.col("len") > 1)
    if twice.height:
        first = twice.row(0, named=True)
        raise ValueError(f"attribution_accuracy: {twice.height} run(s) predicted twice by one attributor (run "
                         f"{first['run_id']!r}, attributor {first['attributor']!r}): give each attributor a name of "
                         "its own")
    rows: list[dict[str, object]] = []
    wanted = [("agent", None), *(("step", k) for k in ks)]
    for (name, ref), preds in predictions.group_by("attributor", "with_reference", maintain_order=True):
        for what, k in wanted:
            hits = _hits(gold, preds, what, k or 0)
            missing = gold.join(preds.select("run_id"), on="run_id", how="anti")
            hits = pl.concat([hits, missing.with_columns(pl.lit(name).alias("attributor"),
                                                         pl.lit(ref).alias("with_reference"),
                                                         pl.lit(None, dtype=pl.Utf8).alias("p_agent"),
                                                         pl.lit(None, dtype=pl.Int64).alias("p_step"),
                                                         pl.lit(0.0).alias("hit"))], how="diagonal_relaxed")
            subsets = [(s[0], p) for s, p in hits.group_by("subset", maintain_order=True)]
            for subset, part in [*sorted(subsets, key=lambda x: str(x[0])), (OVERALL, hits)]:
                rows.append({"attributor": name, "with_reference": ref, "subset": subset, "level_of": what, "k": k,
                             **_share(part["hit"].to_numpy(), part["question_id"].to_numpy(), level),
                             "n_missing": int(missing.filter(pl.col("subset") == subset).height
                                              if subset != OVERALL else missing.height)})
    return pl.DataFrame(rows, schema={
        "attributor": pl.Utf8, "with_reference": pl.Boolean, "subset": pl.Utf8, "level_of": pl.Utf8, "k": pl.Int64,
        "estimate": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64, "n": pl.Int64, "n_clusters": pl.Int64,
        "method": pl.Utf8, "level": pl.Float64, "reason": pl.Utf8, "n_missing": pl.Int64})


def compare_attributors(gold: pl.DataFrame, predictions: pl.DataFrame, a: str, b: str, *, level_of: str = "step",
                        k: int = 0, level: float = 0.95) -> pl.DataFrame:
    """Attributor ``a`` minus ``b`` in accuracy on the logs both predicted, per subset and overall: the paired
    difference with its CR2 interval and p (clustered by question), and the clustered McNemar p.

    Parameters
    ----------
    gold : polars.DataFrame
        :func:`failure_gold`.
    predictions : polars.DataFrame
        Both attributors' predictions.
    a, b : str
        The attributors compared (their ``attributor`` names).
    level_of : {"agent", "step"}, default "step"
        Which accuracy.
    k : int, default 0
        The step tolerance.
    level : float, default 0.95
        Coverage of the interval.

    Returns
    -------
    polars.DataFrame
        ``subset``, ``a``, ``b``, ``level_of``, ``k``, ``accuracy_a``, ``accuracy_b``, ``estimate`` (a - b),
        ``ci_low``, ``ci_high``, ``n``, ``n_clusters``, ``n_missing`` (labelled logs one of the two did not
        predict: left out of the pairs), ``p_value``, ``mcnemar_p``, ``reason``.
    """
    from workbench.stats._bootstrap import cr2_mean, cr2_p_value
    from workbench.stats._compare import clustered_mcnemar_p

    if level_of not in ("agent", "step"):
        raise ValueError(f"level_of: expected 'agent' or 'step', got {level_of!r}")
    ha = _hits(gold, predictions.filter(pl.col("attributor") == a), level_of, k).select("run_id", "subset",
                                                                                        "question_id", "hit")
    hb = _hits(gold, predictions.filter(pl.col("attributor") == b), level_of, k).select("run_id",
                                                                                        pl.col("hit").alias("hit_b"))
    both = ha.join(hb, on="run_id")
    if not both.height:
        raise ValueError(f"compare_attributors: {a!r} and {b!r} share no predicted log")
    rows = []
    subsets = sorted({str(s) for s in both["subset"].to_list()})
    for subset in [*subsets, OVERALL]:
        part = both if subset == OVERALL else both.filter(pl.col("subset") == subset)
        xa, xb = part["hit"].to_numpy(), part["hit_b"].to_numpy()
        cl = part["question_id"].to_numpy()
        diff = xa - xb
        res = cr2_mean(diff, cl, level=level)
        p, _, why = cr2_p_value(diff, cl)
        labelled = gold if subset == OVERALL else gold.filter(pl.col("subset") == subset)
        rows.append({"subset": subset, "a": a, "b": b, "level_of": level_of, "k": k,
                     "accuracy_a": float(xa.mean()), "accuracy_b": float(xb.mean()), "estimate": res.estimate,
                     "ci_low": res.ci_low, "ci_high": res.ci_high, "n": res.n, "n_clusters": res.n_clusters,
                     "n_missing": labelled.height - part.height, "p_value": p,
                     "mcnemar_p": clustered_mcnemar_p(xa, xb, cl),
                     "reason": "; ".join(r for r in (res.reason, why) if r) or None})
    return pl.DataFrame(rows)


def decisive_after_compaction(decisive: pl.DataFrame, compactions: pl.DataFrame, ks: Sequence[int] = range(6), *,
                              steps: pl.DataFrame | None = None) -> pl.DataFrame:
    """The share of decisive steps that come within ``k`` steps after a compaction (the compaction's ``step`` is
    the first step that sees its summary: a decisive step ``d`` with ``0 <= d - step <= k`` for some compaction of
    its run counts), for each k; runs without a compaction count as not after one. With ``steps`` (``run_id``,
    ``step`` of every step of the same runs) the share of *all* their steps within k after a compaction is given
    beside it (``share_of_steps``): what the decisive steps' share would be if failures fell on any step alike.

    Parameters
    ----------
    decisive : polars.DataFrame
        ``run_id`` and ``step`` (the decisive step of each failed run).
    compactions : polars.DataFrame
        ``run_id`` and ``step`` of every compaction.
    ks : sequence of int, default 0..5
        The windows.
    steps : polars.DataFrame, optional
        Every step of the runs, for the share of all steps.

    Returns
    -------
    polars.DataFrame
        ``k``, ``runs``, ``after_compaction`` (count), ``share`` and, with ``steps``, ``share_of_steps``.
    """
    def nearest(points: pl.DataFrame) -> np.ndarray:
        """Each point's steps since the latest compaction at or before it (-1: none): within k is 0 <= gap <= k."""
        gaps = points.select("run_id", pl.col("step").alias("d"), pl.int_range(pl.len()).alias("_i")).join(
            compactions.select("run_id", pl.col("step").alias("c")), on="run_id", how="left").with_columns(
            pl.when(pl.col("d") >= pl.col("c")).then(pl.col("d") - pl.col("c")).alias("gap"))
        return gaps.group_by("_i").agg(pl.col("gap").min().fill_null(-1)).sort("_i")["gap"].to_numpy()

    decisive_gap = nearest(decisive)
    step_gap = nearest(steps) if steps is not None else None
    rows = []
    for k in ks:
        hits = (decisive_gap >= 0) & (decisive_gap <= k)
        n, hit = len(hits), int(hits.sum())
        row: dict[str, object] = {"k": int(k), "runs": n, "after_compaction": hit,
                                  "share": hit / n if n else float("nan")}
        if step_gap is not None:
            every = (step_gap >= 0) & (step_gap <= k)
            row["share_of_steps"] = float(np.mean(every)) if len(every) else float("nan")
        rows.append(row)
    return pl.DataFrame(rows)


__all__ = ["attribution_accuracy", "compare_attributors", "decisive_after_compaction", "failure_gold",
           "random_baseline", "random_within", "testbed_gold", "unnamed_roles"]
