"""The results tables of SJC Section 5 (Tables 3-5, Figure 2) from a runs table."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from workbench.stats._success import reliability

UNCOMPRESSED = "no_compression"


def results_table(runs: pl.DataFrame | pl.LazyFrame, k: int = 3, by: Sequence[str] = ("method", "subset"),
                  block: str | None = "subset", replicates: Sequence[int] | None = None) -> pl.DataFrame:
    """SJC Tables 3-4: Acc (± across-run std), Pass^k, Steps and Peak (10^3 tokens) per method and subset.

    ``best`` marks the best compressed accuracy within each ``block`` (ties all marked);
    the uncompressed reference is never marked. ``replicates`` limits the runs (SJC uses 3).
    Lazy runs (a large log's, scanned) are aggregated as they are read.

    Parameters
    ----------
    runs : polars.DataFrame or polars.LazyFrame
        The runs table.
    k : int, default 3
        The k of Pass^k.
    by : sequence of str, default ("method", "subset")
        Columns that define the rows.
    block : str, optional, default "subset"
        The column within whose values ``best`` is marked.
    replicates : sequence of int, optional
        The replicates taken; all by default.

    Returns
    -------
    polars.DataFrame
        One row per group with Acc, its std, Pass^k, Steps, Peak and ``best``.

    References
    ----------
    SJC Tables 3-4.
    """
    r = runs.lazy() if replicates is None else runs.lazy().filter(pl.col("replicate").is_in(list(replicates)))
    rel = reliability(r, k=k, by=list(by))
    # (means of integer columns: their sums are exact, so the order the runs are read in does not matter)
    eff = r.group_by(list(by)).agg(pl.col("steps").mean().alias("steps"),
                                   (pl.col("peak_tokens").mean() / 1000).alias("peak_k")).collect(engine="streaming")
    out = rel.join(eff, on=list(by), how="left")
    if block is not None:
        comp = pl.col("method") != UNCOMPRESSED
        best = out.filter(comp).group_by(block, maintain_order=True).agg(pl.col("acc").max().alias("_best"))
        out = out.join(best, on=block, how="left").with_columns(
            (comp & (pl.col("acc") >= pl.col("_best") - 1e-12)).fill_null(False).alias("best")).drop("_best")
    return out.sort(list(by))


def pass_vs_tokens(runs: pl.DataFrame | pl.LazyFrame, k: int = 3, by: Sequence[str] = ("method",),
                   roles: Sequence[str] = ("agent", "compressor"), *, n_boot: int | None = None,
                   seed: int = 0) -> pl.DataFrame:
    """SJC Figure 2: Pass^k against mean cumulative LLM tokens per task (judge excluded, as in SJC).

    With ``n_boot`` both axes get scenario intervals: ``pass_hat_k_ci_low`` / ``_high`` (from
    :func:`~workbench.stats.reliability`) and ``tokens_ci_low`` / ``_high`` (tasks resampled by scenario, the
    cluster jackknife t interval). Lazy runs are aggregated as they are read; the tasks are taken in sorted
    order (a task's scenario: its runs', the first by name if several), so the result does not depend on the
    order of the runs.

    Parameters
    ----------
    runs : polars.DataFrame or polars.LazyFrame
        The runs table.
    k : int, default 3
        The k of Pass^k.
    by : sequence of str, default ("method",)
        Columns that define the points.
    roles : sequence of str, default ("agent", "compressor")
        The roles whose tokens count.
    n_boot : int, optional
        With a value, scenario intervals on both axes.
    seed : int, default 0
        Seed of the resampling.

    Returns
    -------
    polars.DataFrame
        One row per group: Pass^k and mean tokens per task (with intervals when asked).

    References
    ----------
    SJC Figure 2.
    """
    from workbench.stats._bootstrap import bootstrap

    names = runs.lazy().collect_schema().names()
    cols = [f"{r}_tokens" for r in roles if f"{r}_tokens" in names]
    r = runs.lazy().with_columns(pl.sum_horizontal([pl.col(c).fill_null(0) for c in cols]).alias("_tok"))
    per_task = r.group_by([*by, "task_id"]).agg(
        pl.col("_tok").mean(), (pl.col("scenario_id") if "scenario_id" in names
                                else pl.col("task_id")).cast(pl.Utf8).min().alias("_scen")
    ).collect(engine="streaming").sort([*by, "task_id"], maintain_order=True)
    tok = per_task.group_by(list(by), maintain_order=True).agg(pl.col("_tok").mean().alias("tokens_per_task"))
    rel = reliability(r, k=k, by=list(by), n_boot=n_boot, seed=seed)
    out = rel.join(tok, on=list(by))
    if n_boot is None:
        return out.select(*by, "pass_hat_k", "acc", "tokens_per_task")
    bounds = []
    for key, g in per_task.partition_by(list(by), as_dict=True, maintain_order=True).items():
        res = bootstrap(np.mean, g.get_column("_tok").cast(pl.Float64).to_numpy(),
                        clusters=g.get_column("_scen").fill_null("?").to_numpy(), n_boot=n_boot, seed=seed, method="t")
        bounds.append({**dict(zip(by, key, strict=True)), "tokens_ci_low": res.ci_low, "tokens_ci_high": res.ci_high})
    return out.join(pl.DataFrame(bounds), on=list(by)).select(
        *by, "pass_hat_k", "pass_hat_k_ci_low", "pass_hat_k_ci_high", "acc", "tokens_per_task", "tokens_ci_low",
        "tokens_ci_high")


#: compactions whose summaries :func:`judge_overhead` reads at a time
SUMMARY_ROWS = 20_000


def judge_overhead(runs: pl.DataFrame | pl.LazyFrame, compactions: pl.DataFrame | pl.LazyFrame, *,
                   method: str = "prompting_sjc", reference: str = "prompting", per_tasks: int = 1000,
                   price_per_million: float = 0.0) -> pl.DataFrame:
    """SJC Table 5: judge requests, tokens and cost per 1,000 tasks; LLM tokens vs the reference; summary change.

    One judge request per compaction; ``summary_tokens_change`` is the mean relative change
    in summary length after pruning (committed against candidate, o200k tokens). Lazy compactions (a
    large log's) are read for the method's runs only.

    Parameters
    ----------
    runs : polars.DataFrame or polars.LazyFrame
        The runs table.
    compactions : polars.DataFrame or polars.LazyFrame
        The compactions table.
    method : str, default "prompting_sjc"
        The method with a judge.
    reference : str, default "prompting"
        The method without one.
    per_tasks : int, default 1000
        The number of tasks the counts are scaled to.
    price_per_million : float, default 0.0
        Judge price per million tokens.

    Returns
    -------
    polars.DataFrame
        One row with the counts, tokens, cost and summary change.

    References
    ----------
    SJC Table 5.
    """
    from workbench import tokens
    from workbench.tables._frames import slices

    runs = runs.lazy().filter(pl.col("method").is_in([method, reference])).collect()  # (lazy runs: these two)
    r = runs.filter(pl.col("method") == method)
    ref = runs.filter(pl.col("method") == reference)
    n_tasks = r.height
    ids = r.get_column("run_id").implode()
    change: list[float] = []
    requests = 0
    # the summaries SUMMARY_ROWS compactions at a time, the method's kept: a large log's are never held whole
    for part in slices(compactions.lazy().select("run_id", "candidate_summary", "committed_summary"), SUMMARY_ROWS):
        part = part.filter(pl.col("run_id").is_in(ids))
        requests += part.height
        cand = tokens.count_many(part.get_column("candidate_summary").to_list())
        comm = tokens.count_many(part.get_column("committed_summary").fill_null("").to_list())
        change += [(b - a) / a for a, b in zip(cand, comm, strict=True) if a]
    judge_tok = float(r.get_column("judge_tokens").fill_null(0).sum()) if "judge_tokens" in r.columns else 0.0
    llm = lambda f: float((f.get_column("agent_tokens").fill_null(0) + f.get_column("compressor_tokens").fill_null(0)).mean())  # noqa: E731
    return pl.DataFrame([{
        "method": method, "runs": n_tasks,
        "judge_requests_per_1k": requests / n_tasks * per_tasks if n_tasks else float("nan"),
        "judge_tokens_per_1k": judge_tok / n_tasks * per_tasks if n_tasks else float("nan"),
        "judge_cost_per_1k": judge_tok / n_tasks * per_tasks * price_per_million / 1e6 if n_tasks else float("nan"),
        "llm_tokens_per_task": llm(r) if n_tasks else float("nan"),
        "llm_tokens_delta": (llm(r) - llm(ref)) / llm(ref) if n_tasks and ref.height else float("nan"),
        "summary_tokens_change": sum(change) / len(change) if change else float("nan"),
    }])


__all__ = ["judge_overhead", "pass_vs_tokens", "results_table", "SUMMARY_ROWS", "UNCOMPRESSED"]
