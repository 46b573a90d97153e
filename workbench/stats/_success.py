"""Reliability of agent runs: accuracy, Pass^k and Pass@k (SJC Tables 3-4, TRACE Pass² / Pass@2).

For a task with ``n`` replicate runs of which ``c`` succeeded:

* ``pass_hat_k`` (Pass^k, "solved in all k runs") = C(c, k) / C(n, k), the unbiased mean
  over all k-subsets of the n runs -- exactly tau-bench's ``pass^k``; with n == k it is
  1 when every run succeeded and 0 otherwise (SJC's Pass3).
* ``pass_at_k`` (Pass@k, "solved in at least one of k runs") = 1 - C(n - c, k) / C(n, k),
  the unbiased estimator of Chen et al. (2021).

Both are averaged over tasks, each task weighted equally. With unequal trial counts each
task uses its own n (its estimator stays unbiased for that task), so a task with more trials
does not weigh more; a task with fewer than k trials has no Pass^k and is an error naming it.
``acc`` is the mean success over all runs and ``acc_std``
the standard deviation, across replicates, of the per-replicate accuracy (SJC Table 3's
subscript). Checked against brute force over run subsets in ``tests/stats/test_metrics_success.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

import numpy as np
import polars as pl


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that k runs drawn without replacement from n (c successful) all succeed.

    Parameters
    ----------
    n : int
        Runs of the task.
    c : int
        Successful runs among them.
    k : int
        Runs drawn.

    Returns
    -------
    float
        ``C(c, k) / C(n, k)``.

    References
    ----------
    Yao, S. et al. (2024). tau-bench: a benchmark for tool-agent-user interaction. arXiv:2406.12045 (pass^k).
    """
    _check_nck(n, c, k)
    return comb(c, k) / comb(n, k)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k runs drawn without replacement from n succeeds.

    Parameters
    ----------
    n : int
        Runs of the task.
    c : int
        Successful runs among them.
    k : int
        Runs drawn.

    Returns
    -------
    float
        ``1 - C(n - c, k) / C(n, k)``.

    References
    ----------
    Chen, M. et al. (2021). Evaluating large language models trained on code. arXiv:2107.03374 (the unbiased
    pass@k estimator).
    """
    _check_nck(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def _check_nck(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n) or k < 1:
        raise ValueError(f"need 0 <= c <= n and k >= 1, got n={n}, c={c}, k={k}")
    if k > n:
        raise ValueError(f"k={k} is larger than the number of replicates n={n}")


def reliability(
    runs: pl.DataFrame | pl.LazyFrame,
    k: int,
    by: str | Sequence[str] | None = None,
    *,
    task: str = "task_id",
    replicate: str = "replicate",
    success: str = "success",
    ddof: int = 1,
    n_boot: int | None = None,
    seed: int = 0,
    level: float = 0.95,
    method: str = "cr2",
) -> pl.DataFrame:
    """Acc, its across-replicate std, Pass^k and Pass@k per group of ``by`` columns.

    Returns one row per group with ``n_tasks``, ``n_runs``, ``k``, ``acc``, ``acc_std``
    (``ddof`` 1 by default; null with one replicate), ``pass_hat_k`` and ``pass_at_k``.
    A task with fewer than ``k`` runs in a group is an error naming it. With ``n_boot`` each
    of the three also gets a scenario interval (tasks resampled by ``scenario_id``, a task
    without one its own cluster): ``acc_ci_low`` / ``acc_ci_high`` and likewise for
    ``pass_hat_k`` and ``pass_at_k``, with ``n_boot``, ``level``, ``ci_method`` (not ``method``, which
    names the agents' policies) and ``reason`` (why a statistic's interval is NaN or of zero width, by name; null
    when every interval is one). The default interval, ``"cr2"``, is Bell and McCaffrey's bias-reduced cluster
    variance with their degrees of freedom (:func:`workbench.stats.cr2_mean`; acc from its scenarios'
    success and run counts), clipped to [0, 1] as every share is: ``benchmarks/bench_interval_coverage.py``
    chose it (accuracy covered 92.9-93.9% at 8, 12 and 30 unequal scenarios on two generators, where the
    jackknife t gave 90.8-93.4% and the percentile 86.0-92.2%).

    This is the one wide form of the interval contract: three statistics of one group in one row, each
    ``STAT_ci_low`` / ``STAT_ci_high`` beside its estimate, ``ci_method`` for the contract's ``method`` because
    the groups here are usually the agents' ``method`` (the long form's ``method`` column would collide with
    them). Every other interval in the workbench is long (``estimate, ci_low, ci_high, n, n_boot, level,
    method``); :func:`workbench.analyses.sjc.results_table` and the SJC tables show this wide form.

    Parameters
    ----------
    runs : polars.DataFrame or polars.LazyFrame
        One row per run with the task, replicate and success columns.
    k : int
        The k of Pass^k and Pass@k.
    by : str or sequence of str, optional
        Columns that define the groups.
    task : str, default "task_id"
        The task column.
    replicate : str, default "replicate"
        The replicate column.
    success : str, default "success"
        The success column (bool).
    ddof : int, default 1
        Delta degrees of freedom of ``acc_std``.
    n_boot : int, optional
        With a value, scenario intervals for the three statistics.
    seed : int, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the intervals.
    method : {"cr2", "t", "percentile", "bca"}, default "cr2"
        The interval rule of :func:`workbench.stats.interval`.

    Returns
    -------
    polars.DataFrame
        One row per group with the columns above.

    References
    ----------
    SJC section 5.1 (Acc, Pass^k); Yao et al. (2024), tau-bench.

    Examples
    --------
    >>> import polars as pl
    >>> from workbench.stats import reliability
    >>> runs = pl.DataFrame({"task_id": ["a"] * 3 + ["b"] * 3, "replicate": [0, 1, 2] * 2, "success": [True, True, False, True, True, True], "method": ["m"] * 6})
    >>> reliability(runs, k=2, by="method").select("method", "acc", "pass_hat_k").to_dicts()
    [{'method': 'm', 'acc': 0.8333333333333334, 'pass_hat_k': 0.6666666666666666}]
    """
    keys = [by] if isinstance(by, str) else list(by or [])
    lazy = runs.lazy()  # (a scan of a large log's runs is aggregated as it is read)
    names = lazy.collect_schema().names()
    missing = [c for c in [*keys, task, success] if c not in names]
    if missing:
        raise ValueError(f"reliability: runs has no column(s) {missing}")
    s = pl.col(success).cast(pl.Int64)
    scen = ((pl.col("scenario_id") if "scenario_id" in names else pl.col(task)).cast(pl.Utf8)
            .fill_null(pl.col(task).cast(pl.Utf8)))
    # one row per task, sorted, so the result does not depend on the runs' order (float sums are order-sensitive);
    # the counts are integers, exact in any order; a task's scenario is its runs' (the first by name if several)
    per_task = lazy.group_by([*keys, task]).agg(
        pl.len().alias("_n"), s.sum().alias("_c"), s.null_count().alias("_nulls"), scen.min().alias("_scen")
    ).collect(engine="streaming").sort([*keys, task], maintain_order=True)
    if per_task.get_column("_nulls").sum():
        raise ValueError("reliability: success has nulls; drop or fill runs without an outcome first")
    short = per_task.filter(pl.col("_n") < k)
    if short.height:
        first = short.row(0, named=True)
        raise ValueError(
            f"reliability: task {first[task]!r} has {first['_n']} run(s), fewer than k={k}"
            + (f" in group {({c: first[c] for c in keys})}" if keys else "")
        )
    n = per_task.get_column("_n").to_numpy()
    c = per_task.get_column("_c").to_numpy()
    per_task = per_task.with_columns(
        pl.Series("_hat", [pass_hat_k(int(a), int(b), k) for a, b in zip(n, c, strict=True)], dtype=pl.Float64),
        pl.Series("_at", [pass_at_k(int(a), int(b), k) for a, b in zip(n, c, strict=True)], dtype=pl.Float64),
    )
    summary = per_task.group_by(keys or pl.lit(0), maintain_order=True).agg(
        pl.len().alias("n_tasks"),
        pl.col("_n").sum().alias("n_runs"),
        (pl.col("_c").sum() / pl.col("_n").sum()).alias("acc"),
        pl.col("_hat").mean().alias("pass_hat_k"),
        pl.col("_at").mean().alias("pass_at_k"),
    )
    if not keys:
        summary = summary.drop("literal")
    if replicate in names:
        per_rep = lazy.group_by([*keys, replicate]).agg(s.sum().alias("_c"), pl.len().alias("_n")).collect(
            engine="streaming").sort([*keys, replicate], maintain_order=True).with_columns(
            (pl.col("_c") / pl.col("_n")).alias("_acc"))
        std = per_rep.group_by(keys or pl.lit(0), maintain_order=True).agg(pl.col("_acc").std(ddof=ddof).alias("acc_std"))
        if keys:
            summary = summary.join(std, on=keys, how="left", nulls_equal=True)
        else:
            summary = summary.with_columns(std.get_column("acc_std"))
    else:
        summary = summary.with_columns(pl.lit(None, dtype=pl.Float64).alias("acc_std"))
    out = summary.with_columns(pl.lit(k, dtype=pl.Int64).alias("k")).select(
        *keys, "n_tasks", "n_runs", "k", "acc", "acc_std", "pass_hat_k", "pass_at_k"
    )
    if n_boot is None:
        return out
    intervals = _intervals(per_task, keys, n_boot, seed, level, method)
    return (out.join(intervals, on=keys, how="left", nulls_equal=True) if keys
            else pl.concat([out, intervals], how="horizontal"))


def _intervals(per_task: pl.DataFrame, keys: list[str], n_boot: int, seed: int, level: float,
               method: str) -> pl.DataFrame:
    """Scenario intervals of acc, pass_hat_k and pass_at_k per group (tasks resampled by scenario)."""
    from workbench.stats._bootstrap import bootstrap, cr2_mean

    groups = per_task.partition_by(keys, as_dict=True, maintain_order=True) if keys else {(): per_task}
    rows = []
    for key, g in groups.items():
        n, c = g.get_column("_n").to_numpy().astype(float), g.get_column("_c").to_numpy().astype(float)
        hat, at = g.get_column("_hat").to_numpy(), g.get_column("_at").to_numpy()
        cl = g.get_column("_scen").to_numpy()
        row: dict[str, object] = dict(zip(keys, key, strict=True))
        reasons: list[str] = []
        for name, metric, arrays in (("acc", lambda cc, nn: cc.sum() / nn.sum(), (c, n)),
                                     ("pass_hat_k", np.mean, (hat,)), ("pass_at_k", np.mean, (at,))):
            if method == "cr2" and name == "acc":  # the share of runs: its scenarios' successes and runs
                _, inv = np.unique(cl, return_inverse=True)
                res = cr2_mean(None, None, level=level, sums=(np.bincount(inv, weights=c), np.bincount(inv, weights=n)))
            else:
                res = bootstrap(metric, *arrays, clusters=cl, n_boot=n_boot, seed=seed, level=level, method=method)
            # a share lies in [0, 1]: the t interval's symmetric bounds are clipped there (NaN stays NaN)
            row[f"{name}_ci_low"], row[f"{name}_ci_high"] = float(np.clip(res.ci_low, 0.0, 1.0)), \
                float(np.clip(res.ci_high, 0.0, 1.0))
            if res.reason:  # a NaN or zero-width interval says why, as every interval result does
                reasons.append(f"{name}: {res.reason}")
        row.update(n_boot=n_boot, level=level, ci_method=method, reason="; ".join(reasons) or None)
        rows.append(row)
    return pl.DataFrame(rows)


def reliability_by_k(runs: pl.DataFrame, ks: Sequence[int] | None = None) -> pl.DataFrame:
    """:func:`reliability` at every k (default 1 ... the fewest trials any task has): ``k``, ``n_tasks``,
    ``acc``, ``pass_hat_k``, ``pass_at_k`` -- the curve of Pass^k falling and Pass@k rising with k.

    Parameters
    ----------
    runs : polars.DataFrame
        One row per run (``task_id``, ``replicate``, ``success``).
    ks : sequence of int, optional
        The k values; 1 to the fewest runs any task has by default.

    Returns
    -------
    polars.DataFrame
        One row per k.
    """
    if ks is None:
        n_trials = int(runs.group_by("task_id", maintain_order=True).len().get_column("len").min())  # type: ignore[arg-type]
        ks = range(1, n_trials + 1)
    return pl.concat([reliability(runs, k=k) for k in ks]).select("k", "n_tasks", "acc", "pass_hat_k", "pass_at_k")


__all__ = ["pass_at_k", "pass_hat_k", "reliability", "reliability_by_k"]
