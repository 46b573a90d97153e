"""Efficiency of agent runs: Steps, Peak, Dependency, cumulative tokens and cost (FOCUS A.8).

* Steps: number of action-observation exchanges of a run.
* Peak: ``max_t n_in(t)``, the largest input of any generation step, system prompt
  excluded (FOCUS A.8 "Peak Tokens").
* Dependency: ``sum_t (n_in(t) + 2 n_out(t)) * n_out(t) / 2`` (FOCUS A.8 "Dependency").
* Cumulative tokens per role (agent, compressor, judge) and cost from a price table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl


def dependency(input_tokens: npt.ArrayLike, output_tokens: npt.ArrayLike) -> float:
    """FOCUS A.8 Dependency of one trajectory: sum over steps of (n_in + 2 n_out) n_out / 2.

    Parameters
    ----------
    input_tokens : array-like
        Each step's input tokens (system prompt excluded).
    output_tokens : array-like
        Each step's output tokens.

    Returns
    -------
    float
        The Dependency of the trajectory.

    References
    ----------
    FOCUS Appendix A.8.
    """
    n_in = np.asarray(input_tokens, dtype=np.float64)
    n_out = np.asarray(output_tokens, dtype=np.float64)
    if n_in.shape != n_out.shape:
        raise ValueError(f"dependency: input and output token arrays differ in shape {n_in.shape} != {n_out.shape}")
    if np.any(n_in < 0) or np.any(n_out < 0):
        raise ValueError("dependency: token counts must be non-negative")
    return float(np.sum((n_in + 2.0 * n_out) * n_out / 2.0))


def peak(input_tokens: npt.ArrayLike) -> int:
    """FOCUS A.8 Peak of one trajectory: the largest input (system prompt excluded) of any step.

    Parameters
    ----------
    input_tokens : array-like
        Each step's input tokens (system prompt excluded).

    Returns
    -------
    int
        The largest of them.

    References
    ----------
    FOCUS Appendix A.8.
    """
    n_in = np.asarray(input_tokens)
    return int(n_in.max()) if n_in.size else 0


def efficiency(steps: pl.DataFrame | pl.LazyFrame, *, run: str = "run_id") -> pl.DataFrame:
    """Per run: ``steps``, ``peak_tokens``, ``dependency``, ``input_tokens``, ``output_tokens``.

    ``steps`` needs ``input_tokens`` and ``output_tokens`` (system prompt excluded). Steps
    with unknown token counts are counted in ``steps`` but not in the token measures. Lazy steps
    (a large log's) are aggregated as they are read; the result, a row per run, is collected.

    Parameters
    ----------
    steps : polars.DataFrame or polars.LazyFrame
        The steps table.
    run : str, default "run_id"
        The run column.

    Returns
    -------
    polars.DataFrame
        One row per run with the columns above.

    References
    ----------
    FOCUS Appendix A.8.
    """
    return _per_run(steps, run).collect(engine="streaming" if isinstance(steps, pl.LazyFrame) else "auto")


def _per_run(steps: pl.DataFrame | pl.LazyFrame, run: str = "run_id", *, ordered: bool = True) -> pl.LazyFrame:
    """The query of :func:`efficiency`: a row per run, in the order the runs first appear if ``ordered``."""
    need = [run, "input_tokens", "output_tokens"]
    missing = [c for c in need if c not in steps.collect_schema().names()]
    if missing:
        raise ValueError(f"efficiency: steps has no column(s) {missing}")
    n_in = pl.col("input_tokens").cast(pl.Float64)
    n_out = pl.col("output_tokens").cast(pl.Float64)
    return steps.lazy().select(run, "input_tokens", "output_tokens").group_by(run, maintain_order=ordered).agg(
        pl.len().alias("steps"),
        pl.col("input_tokens").max().alias("peak_tokens"),
        ((n_in + 2.0 * n_out) * n_out / 2.0).sum().alias("dependency"),
        pl.col("input_tokens").sum().alias("input_tokens"),
        pl.col("output_tokens").sum().alias("output_tokens"),
    )


@dataclass(frozen=True)
class Price:
    """USD per million tokens, as providers quote them."""

    input_per_million: float
    output_per_million: float

    def cost(self, input_tokens: float, output_tokens: float) -> float:
        return (input_tokens * self.input_per_million + output_tokens * self.output_per_million) / 1e6


def efficiency_by(steps: pl.DataFrame | pl.LazyFrame, runs: pl.DataFrame | pl.LazyFrame,
                  by: str | Sequence[str] = "method") -> pl.DataFrame:
    """Mean Steps, Peak (thousands) and Dependency (millions) per group of runs (FOCUS A.8, Tables 1-14's units).

    ``steps`` as for :func:`efficiency`; ``runs`` (in memory or scanned) gives each run's ``by`` columns. Columns:
    the ``by`` columns, ``steps``, ``peak_k``, ``dependency_m``; one row per group, sorted. One streaming query:
    the per-run rows are not held (their sums are of integers and halves, exact in any order).

    Parameters
    ----------
    steps : polars.DataFrame or polars.LazyFrame
        The steps table.
    runs : polars.DataFrame or polars.LazyFrame
        The runs table, with the ``by`` columns.
    by : str or sequence of str, default "method"
        Columns that define the groups.

    Returns
    -------
    polars.DataFrame
        One row per group with the columns above.

    References
    ----------
    FOCUS Appendix A.8 and Tables 1-14.
    """
    keys = [by] if isinstance(by, str) else list(by)
    per_group = _per_run(steps, ordered=False).join(runs.lazy().select("run_id", *keys), on="run_id").group_by(*keys).agg(
        pl.col("steps").mean(), (pl.col("peak_tokens").mean() / 1e3).alias("peak_k"),
        (pl.col("dependency").mean() / 1e6).alias("dependency_m"))
    return per_group.collect(engine="streaming").sort(pl.all())


def efficiency_by_encoding(steps: pl.DataFrame, runs: pl.DataFrame,
                           encodings: Mapping[str, str] | None = None) -> pl.DataFrame:
    """Mean Peak and Dependency of a log counted in each tokenizer, beside mean steps and tool calls per run.

    ``encodings`` maps a name to the suffix of the steps' token columns (default: ``o200k`` ->
    ``input_tokens`` / ``output_tokens``, ``cl100k`` -> ``input_tokens_cl100k`` / ...), as the
    tau-bench adapter writes them; FOCUS reports in cl100k. One row per encoding: ``encoding``,
    ``peak_mean``, ``dependency_mean_1e6``, ``steps_mean``, ``tool_calls_mean``.

    Parameters
    ----------
    steps : polars.DataFrame
        The steps table with a token column pair per encoding.
    runs : polars.DataFrame
        The runs table (``run_id``).
    encodings : mapping of str to str, optional
        Encoding name to token column suffix.

    Returns
    -------
    polars.DataFrame
        One row per encoding with the columns above.
    """
    encodings = encodings or {"o200k": "", "cl100k": "_cl100k"}
    rows = []
    for name, suffix in encodings.items():
        tok = steps.drop_nulls(f"input_tokens{suffix}").select(
            "run_id", pl.col(f"input_tokens{suffix}").alias("input_tokens"),
            pl.col(f"output_tokens{suffix}").alias("output_tokens"))
        e = efficiency(tok)
        rows.append(e.select(pl.lit(name).alias("encoding"), pl.col("peak_tokens").mean().alias("peak_mean"),
                             (pl.col("dependency").mean() / 1e6).alias("dependency_mean_1e6")))
    tool_calls = steps.filter(pl.col("tool").is_not_null()).group_by("run_id", maintain_order=True).len()["len"].mean()
    return pl.concat(rows).with_columns(pl.lit(float(runs["steps"].mean())).alias("steps_mean"),  # type: ignore[arg-type]
                                        pl.lit(float(tool_calls)).alias("tool_calls_mean"))  # type: ignore[arg-type]


def cumulative_tokens(runs: pl.DataFrame, roles: tuple[str, ...] = ("agent", "compressor", "judge")) -> pl.DataFrame:
    """Add ``total_tokens`` = the sum of the ``{role}_tokens`` columns present (nulls count 0).

    Parameters
    ----------
    runs : polars.DataFrame
        The runs table.
    roles : tuple of str, default ("agent", "compressor", "judge")
        The roles whose ``{role}_tokens`` are summed.

    Returns
    -------
    polars.DataFrame
        ``runs`` with ``total_tokens``.
    """
    cols = [f"{r}_tokens" for r in roles if f"{r}_tokens" in runs.columns]
    if not cols:
        raise ValueError(f"cumulative_tokens: runs has none of {[f'{r}_tokens' for r in roles]}")
    return runs.with_columns(pl.sum_horizontal([pl.col(c).fill_null(0) for c in cols]).alias("total_tokens"))


def cost(
    usage: pl.DataFrame,
    prices: Mapping[str, Price],
    *,
    model: str = "model",
    input_tokens: str = "input_tokens",
    output_tokens: str = "output_tokens",
) -> pl.DataFrame:
    """Add ``cost_usd`` to a frame of token usage from a price table keyed by model name.

    A model missing from the table is an error naming it (a silent zero cost would
    understate an expensive run).

    Parameters
    ----------
    usage : polars.DataFrame
        Token usage with a model column.
    prices : mapping of str to Price
        Price per model name.
    model : str, default "model"
        The model column.
    input_tokens : str, default "input_tokens"
        The input token column.
    output_tokens : str, default "output_tokens"
        The output token column.

    Returns
    -------
    polars.DataFrame
        ``usage`` with ``cost_usd``.
    """
    models = usage.get_column(model).unique().to_list()
    unknown = [m for m in models if m not in prices]
    if unknown:
        raise ValueError(f"cost: no price for model(s) {unknown}; known: {sorted(prices)}")
    table = pl.DataFrame(
        {
            model: list(prices),
            "_in": [p.input_per_million for p in prices.values()],
            "_out": [p.output_per_million for p in prices.values()],
        }
    )
    return (
        usage.join(table, on=model, how="left")
        .with_columns(
            ((pl.col(input_tokens) * pl.col("_in") + pl.col(output_tokens) * pl.col("_out")) / 1e6).alias("cost_usd")
        )
        .drop("_in", "_out")
    )


__all__ = ["cost", "cumulative_tokens", "dependency", "efficiency", "efficiency_by", "efficiency_by_encoding",
           "peak", "Price"]
