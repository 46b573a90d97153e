"""TRACE diagnostics: continuation burden, the verifier score, post-compaction burden, defects, fact check.

From the TRACE article and the paper it reviews: the *burden* of a continuation is the
number of its actions over K steps that are blocked or repeat an earlier call, counted
once per action (Eq. 2); a summary's induced burden is E[POST] - E[PRE] (Eq. 3) and its
score the negative of that (Eq. 4). The fact check at the boundary looks every
identifier and number of a summary up in the raw turns it replaced, which hears the
silent channel the verifier cannot (dropped ids, misremembered amounts).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import numpy as np
import numpy.typing as npt
import polars as pl

from workbench.stats._bootstrap import DEFAULT_N_BOOT, INTERVAL_SCHEMA, Seed, bootstrap
from workbench.stats._success import reliability
from workbench.tables._frames import height

# the boundary fact check lives with the identifier rules; these names keep their old import path
__all__ = ["article_comparison", "verifier_cost", "continuation_burden", "defects_chosen_vs_rejected",
           "pass_pairs", "post_compaction_burden", "verifier_score",
           "verifier_table"]


def _mean(series: pl.Series) -> float:
    """The mean of a numeric or boolean column as a float (NaN when empty or all null)."""
    value = series.cast(pl.Float64).mean()
    return float(cast(float, value)) if value is not None else float("nan")


def continuation_burden(blocked: npt.ArrayLike, repeated: npt.ArrayLike) -> int:
    """Eq. 2: actions that were blocked or repeated (the union, each action once).

    Parameters
    ----------
    blocked : array-like
        Indices of the blocked actions.
    repeated : array-like
        Indices of the repeated actions.

    Returns
    -------
    int
        The size of their union.

    References
    ----------
    TRACE Eq. 2.
    """
    b = np.asarray(blocked, dtype=bool)
    r = np.asarray(repeated, dtype=bool)
    return int(np.sum(b | r))


def verifier_score(pre_burdens: npt.ArrayLike, post_burdens: npt.ArrayLike) -> float:
    """Eq. 3-4: -(mean POST burden - mean PRE burden).

    Parameters
    ----------
    pre_burdens : array-like
        Continuation burdens from the history before compaction.
    post_burdens : array-like
        Continuation burdens from the candidate summary.

    Returns
    -------
    float
        The score; higher is better.

    References
    ----------
    TRACE Eq. 3-4.
    """
    return -(float(np.asarray(post_burdens, dtype=np.float64).mean())
             - float(np.asarray(pre_burdens, dtype=np.float64).mean()))


def post_compaction_burden(steps: pl.DataFrame | pl.LazyFrame, runs: pl.DataFrame, *, method: str,
                           baseline: str = "no_compression", horizon: int = 5, budget: int | None = None,
                           n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0, level: float = 0.95) -> pl.DataFrame:
    """Blocked and repeated calls per action at steps 1..horizon after each boundary, minus the baseline.

    The baseline is the matched uncompressed run (same task and replicate) at the same step
    index. One row per (``k``, ``measure``): the interval columns (``estimate`` is the excess
    per action over the baseline, ``n`` the actions; CIs resample scenarios) and ``rate``,
    the raw rate of the compacted runs.

    Parameters
    ----------
    steps : polars.DataFrame or polars.LazyFrame
        The steps table.
    runs : polars.DataFrame
        The runs table.
    method : str
        The compacted method.
    baseline : str, default "no_compression"
        The matched uncompressed method.
    horizon : int, default 5
        Steps after each boundary.
    budget : int, optional
        The budget compared; every budget by default.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the intervals.

    Returns
    -------
    polars.DataFrame
        One row per (``k``, ``measure``) with the interval columns and ``rate``.

    References
    ----------
    TRACE section 3 (continuation burden after a boundary).
    """
    sel = runs.filter(pl.col("method") == method)
    if budget is not None:
        sel = sel.filter(pl.col("budget") == budget)
    base_runs = runs.filter(pl.col("method") == baseline).select("task_id", "replicate", pl.col("run_id").alias("_base"))
    if budget is not None and "budget" in runs.columns:
        base_runs = runs.filter((pl.col("method") == baseline) & (pl.col("budget") == budget)).select(
            "task_id", "replicate", pl.col("run_id").alias("_base"))
    sel = sel.join(base_runs, on=["task_id", "replicate"], how="left")
    # one streaming query (``steps`` may be a scan): the steps k = 1..horizon after each boundary, looked up by
    # (run, step) -- not every step against every boundary of its run, which grew with the log (1.3 GiB at 100x
    # the testbed) -- beside the baseline's step of the same index; then in the steps' order within each k
    st = steps.lazy().with_row_index("_i").join(sel.lazy().select("run_id", "scenario_id", "_base"), on="run_id")
    step_type = st.collect_schema()["step"]
    after = (st.filter(pl.col("boundary_before")).select("run_id", "step")
             .join(pl.LazyFrame({"k": range(1, horizon + 1)}, schema={"k": pl.Int64}), how="cross")
             .select("run_id", (pl.col("step") + pl.col("k") - 1).cast(step_type), "k"))
    base = steps.lazy().filter(pl.col("run_id").is_in(sel.get_column("_base").drop_nulls().implode())).select(
        pl.col("run_id").alias("_base"), "step", pl.col("blocked").alias("_bb"), pl.col("repeated").alias("_br"))
    rows = (st.join(after, on=["run_id", "step"]).join(base, on=["_base", "step"], how="left")
            .select("k", "_i", "scenario_id", "blocked", "repeated", pl.col("_bb").fill_null(False),
                    pl.col("_br").fill_null(False))
            .collect(engine="streaming").sort("k", "_i"))
    out = []
    for k in range(1, horizon + 1):
        r = rows.filter(pl.col("k") == k)
        if not r.height:
            continue
        cl = r.get_column("scenario_id").to_numpy()
        for what, col, bcol in (("blocked", "blocked", "_bb"), ("repeated", "repeated", "_br")):
            x = r.get_column(col).cast(pl.Float64).to_numpy() - r.get_column(bcol).cast(pl.Float64).to_numpy()
            res = bootstrap(np.mean, x, clusters=cl, n_boot=n_boot, seed=seed, level=level)
            out.append({"k": k, "measure": what, **res.row(), "rate": _mean(r.get_column(col))})
    return pl.DataFrame(out, schema={"k": pl.Int64, "measure": pl.Utf8, **INTERVAL_SCHEMA, "rate": pl.Float64})


def pass_pairs(runs: pl.DataFrame, by: Sequence[str] = ("method",)) -> pl.DataFrame:
    """Pass² and Pass@2 over two disjoint run pairs (replicates 0-1 and 2-3), averaged.

    Parameters
    ----------
    runs : polars.DataFrame
        The runs table with four replicates per task.
    by : sequence of str, default ("method",)
        Columns that define the groups.

    Returns
    -------
    polars.DataFrame
        One row per group: ``pass2``, ``pass_at_2``, ``pairs`` and ``gap``.

    References
    ----------
    TRACE (Pass^2 and Pass@2 over disjoint pairs).
    """
    parts = []
    for pair, reps in enumerate(((0, 1), (2, 3))):
        sub = runs.filter(pl.col("replicate").is_in(list(reps)))
        if sub.height == 0:
            continue
        r = reliability(sub, k=2, by=list(by)).with_columns(pl.lit(pair).alias("pair"))
        parts.append(r)
    allp = pl.concat(parts)
    return allp.group_by(list(by), maintain_order=True).agg(pl.col("pass_hat_k").mean().alias("pass2"),
                                       pl.col("pass_at_k").mean().alias("pass_at_2"),
                                       pl.len().alias("pairs")).with_columns(
        (pl.col("pass_at_2") - pl.col("pass2")).alias("gap"))


def verifier_table(runs: pl.DataFrame, *, budget: int | None = None,
                   methods: Sequence[str] = ("no_compression", "fifo", "prompting", "verifier", "oracle")) -> pl.DataFrame:
    """The article's table: accuracy, Pass², Pass@2, blocked and repeated per run, rollout steps per run.

    Parameters
    ----------
    runs : polars.DataFrame
        The runs table.
    budget : int, optional
        The budget shown; every budget by default.
    methods : sequence of str, default the five of the article
        The methods, in row order.

    Returns
    -------
    polars.DataFrame
        One row per method.

    References
    ----------
    TRACE, main results table.
    """
    r = runs.filter(pl.col("method").is_in(list(methods)))
    if budget is not None:
        r = r.filter(pl.col("budget") == budget)
    base = r.group_by("method", maintain_order=True).agg(pl.col("success").mean().alias("acc"), pl.len().alias("runs"),
                                    pl.col("blocked_calls").mean().alias("blocked"),
                                    pl.col("repeated_calls").mean().alias("repeated"),
                                    pl.col("compactions").mean().alias("compactions"),
                                    (pl.col("rollout_steps").mean() if "rollout_steps" in r.columns
                                     else pl.lit(0.0)).alias("rollout_steps"))
    order = {m: i for i, m in enumerate(methods)}
    return base.join(pass_pairs(r), on="method", how="left").sort(pl.col("method").replace_strict(order))


def defects_chosen_vs_rejected(candidates: pl.DataFrame | pl.LazyFrame, runs: pl.DataFrame | pl.LazyFrame,
                               budget: int | None = None) -> pl.DataFrame:
    """Mean silent and visible defects, and the share with at least one silent defect, in chosen vs rejected candidates.

    Lazy candidates (a large log's, scanned) are counted as they are read: the means are of integer counts, exact
    in any order.

    Parameters
    ----------
    candidates : polars.DataFrame or polars.LazyFrame
        The verifier's candidates table.
    runs : polars.DataFrame or polars.LazyFrame
        The runs table (for the budget).
    budget : int, optional
        The budget compared; every budget by default.

    Returns
    -------
    polars.DataFrame
        One row per (``method``, ``chosen``): ``candidates``, ``silent_mean``, ``any_silent``, ``visible_mean``.
    """
    c = candidates.lazy().join(runs.lazy().select("run_id", "method", "budget"), on="run_id")
    if budget is not None:
        c = c.filter(pl.col("budget") == budget)
    return c.group_by("method", "chosen").agg(
        pl.len().alias("candidates"), pl.col("silent_defects").mean().alias("silent_mean"),
        (pl.col("silent_defects") > 0).mean().alias("any_silent"),
        pl.col("visible_defects").mean().alias("visible_mean")).collect(engine="streaming").sort(
        "method", "chosen", descending=[False, True])


def article_comparison(runs: pl.DataFrame, candidates: pl.DataFrame | pl.LazyFrame | None,
                       published: pl.DataFrame) -> pl.DataFrame:
    """The TRACE article's stated numbers beside the same measures on a testbed (``source`` marks each).

    ``published`` is ``data/published/text_numbers.csv``; only the quantities a testbed can
    measure the same way are compared. Percentages are on the 0-100 scale like the article's.

    Parameters
    ----------
    runs : polars.DataFrame
        The testbed's runs table.
    candidates : polars.DataFrame or polars.LazyFrame, optional
        The verifier's candidates table, when the testbed has one.
    published : polars.DataFrame
        The published numbers table.

    Returns
    -------
    polars.DataFrame
        One row per (quantity, ``source``).

    References
    ----------
    TRACE, the article's reported numbers.
    """
    def acc(method: str, budget: int) -> float:
        r = runs.filter((pl.col("method") == method) & (pl.col("budget") == budget))
        return _mean(r.get_column("success")) * 100 if r.height else float("nan")

    def comp(method: str, budget: int) -> float:
        r = runs.filter((pl.col("method") == method) & (pl.col("budget") == budget))
        return _mean(r.get_column("compactions")) if r.height else float("nan")

    def gap(method: str, budget: int) -> float:
        r = runs.filter((pl.col("method") == method) & (pl.col("budget") == budget))
        return float(pass_pairs(r).get_column("gap")[0]) * 100 if r.height else float("nan")

    def blocked_cut(budget: int) -> float:
        a = runs.filter((pl.col("method") == "prompting") & (pl.col("budget") == budget))["blocked_calls"].mean()
        b = runs.filter((pl.col("method") == "verifier") & (pl.col("budget") == budget))["blocked_calls"].mean()
        return (1 - float(b) / float(a)) * 100 if a else float("nan")  # type: ignore[arg-type]

    def rollout(method: str, budget: int) -> float:
        r = runs.filter((pl.col("method") == method) & (pl.col("budget") == budget))
        return _mean(r.get_column("rollout_steps")) if r.height and "rollout_steps" in r.columns else float("nan")

    measures = {
        "acc_summary_budget48": lambda: acc("prompting", 48), "acc_verifier_budget48": lambda: acc("verifier", 48),
        "acc_oracle_budget48": lambda: acc("oracle", 48), "blocked_cut_verifier_budget48": lambda: blocked_cut(48),
        "pass_gap_fifo_budget48": lambda: gap("fifo", 48), "pass_gap_summary_budget48": lambda: gap("prompting", 48),
        "acc_fifo_budget96": lambda: acc("fifo", 96), "acc_summary_budget96": lambda: acc("prompting", 96),
        "rollout_steps_verifier": lambda: rollout("verifier", 48), "rollout_steps_oracle": lambda: rollout("oracle", 48),
        "compactions_per_episode_budget24": lambda: comp("prompting", 24),
        "compactions_per_episode_budget48": lambda: comp("prompting", 48),
        "acc_summary_budget24": lambda: acc("prompting", 24), "acc_verifier_budget24": lambda: acc("verifier", 24),
        "acc_oracle_budget24": lambda: acc("oracle", 24),
    }
    if candidates is not None and height(candidates):
        d = defects_chosen_vs_rejected(candidates, runs, budget=48)

        def dv(method: str, chosen: bool, col: str, scale: float = 1.0) -> Callable[[], float]:
            return lambda: float(d.filter((pl.col("method") == method) & (pl.col("chosen") == chosen))[col][0]) * scale

        measures.update({
            "silent_defects_chosen_verifier": dv("verifier", True, "silent_mean"),
            "silent_defects_rejected_verifier": dv("verifier", False, "silent_mean"),
            "any_silent_chosen_verifier": dv("verifier", True, "any_silent", 100),
            "any_silent_rejected_verifier": dv("verifier", False, "any_silent", 100),
            "silent_defects_chosen_oracle": dv("oracle", True, "silent_mean"),
            "silent_defects_rejected_oracle": dv("oracle", False, "silent_mean"),
        })
    pub = published.filter(pl.col("document") == "TRACE")
    rows = []
    for q, fn in measures.items():
        p = pub.filter(pl.col("quantity") == q)
        if p.height:
            try:
                mine = fn()
            except (IndexError, ZeroDivisionError, TypeError):
                mine = float("nan")
            rows.append({"quantity": q, "published": float(p["value"][0]), "testbed": mine, "unit": p["unit"][0]})
    return pl.DataFrame(rows)


def verifier_cost(runs_by_setting: dict[str, pl.DataFrame], published: pl.DataFrame, *, budget: int = 48) -> pl.DataFrame:
    """What the verifier costs and buys under each continuation setting, beside the TRACE article.

    ``runs_by_setting`` maps a setting name (``article``: three paired samples of two
    continuations per candidate; ``cheap``: one raw-history continuation shared by the
    candidates) to runs holding ``verifier`` and ``oracle`` rows. One row per setting and one for
    the article: rollout steps per run of the verifier and of the oracle, the verifier's
    accuracy (%) and blocked calls per run. ``published`` is ``data/published/text_numbers.csv``.

    Parameters
    ----------
    runs_by_setting : dict of str to polars.DataFrame
        Setting name to its runs table.
    published : polars.DataFrame
        The published numbers table.
    budget : int, default 48
        The budget whose runs are compared.

    Returns
    -------
    polars.DataFrame
        One row per setting and one for the article.

    References
    ----------
    TRACE, the verifier's rollout protocol.
    """
    def mean(runs: pl.DataFrame, method: str, col: str, scale: float = 1.0) -> float:
        r = runs.filter((pl.col("method") == method) & (pl.col("budget") == budget))
        return _mean(r.get_column(col)) * scale if r.height and col in r.columns else float("nan")

    rows = [{"setting": name, "verifier_rollout_steps": mean(r, "verifier", "rollout_steps"),
             "oracle_rollout_steps": mean(r, "oracle", "rollout_steps"),
             "verifier_acc": mean(r, "verifier", "success", 100.0),
             "verifier_blocked_calls": mean(r, "verifier", "blocked_calls")} for name, r in runs_by_setting.items()]
    pub = dict(published.filter(pl.col("document") == "TRACE").select("quantity", "value").iter_rows())
    rows.append({"setting": "TRACE article (published)", "verifier_rollout_steps": pub.get("rollout_steps_verifier"),
                 "oracle_rollout_steps": pub.get("rollout_steps_oracle"),
                 "verifier_acc": pub.get(f"acc_verifier_budget{budget}"), "verifier_blocked_calls": None})
    return pl.DataFrame(rows, schema={"setting": pl.Utf8, "verifier_rollout_steps": pl.Float64,
                                      "oracle_rollout_steps": pl.Float64, "verifier_acc": pl.Float64,
                                      "verifier_blocked_calls": pl.Float64})
