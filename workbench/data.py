"""Where the notebooks' data comes from: the default testbed (generated on demand) or a user's directory."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from workbench import io, schema

DEFAULT_TESTBED = Path("data/testbed")


def ensure_testbed(path: str | os.PathLike[str] = DEFAULT_TESTBED, *, tasks: int | None = None,
                   runs: int | None = None, seed: int = 0, quiet: bool = False) -> Path:
    """Generate the default testbed into ``path`` unless it is already there (``runs.parquet`` present).

    ``WORKBENCH_TESTBED_TASKS`` / ``WORKBENCH_TESTBED_RUNS`` override the size (a smaller
    testbed for quick checks); the defaults are the issue's 120 tasks x 4 runs.
    """
    from workbench.sim.dataset import DatasetConfig, build

    path = Path(path)
    if (path / "runs.parquet").exists():
        return path
    tasks = tasks or int(os.environ.get("WORKBENCH_TESTBED_TASKS", "120"))
    runs = runs or int(os.environ.get("WORKBENCH_TESTBED_RUNS", "4"))
    if not quiet:
        print(f"generating the testbed ({tasks} tasks x {runs} runs) into {path} ...", flush=True)
    build(path, DatasetConfig(tasks=tasks, runs=runs, seed=seed))
    return path


def load_tables(path: str | os.PathLike[str] = DEFAULT_TESTBED, *, generate: bool = True,
                complete: bool = True) -> dict[str, pl.DataFrame]:
    """Every table in a directory (Parquet or JSONL), validated; the default testbed is generated if missing.

    With ``complete``, what an imported log lacks but can be derived is derived: ``entries``
    from the candidate summaries, and lexical-judge ``scores`` for them (offline), so the
    composition and sensitivity notebooks run on any imported log.
    """
    path = Path(path)
    if generate and path.resolve() == DEFAULT_TESTBED.resolve():
        ensure_testbed(path)
    tables = io.read_tables(path, tuple(schema.TABLES))
    if "runs" not in tables:
        raise schema.SchemaError("no runs table (runs.parquet or runs.jsonl)", file=str(path))
    if complete and "steps" in tables and {"input_tokens", "output_tokens"} <= set(tables["steps"].columns):
        from workbench.metrics.efficiency import efficiency

        eff = efficiency(tables["steps"].drop_nulls(["input_tokens", "output_tokens"]))
        fill = eff.select("run_id", pl.col("peak_tokens").alias("_peak"), pl.col("dependency").alias("_dep"),
                          (pl.col("input_tokens") + pl.col("output_tokens")).alias("_agent"))
        runs = tables["runs"].join(fill, on="run_id", how="left")
        tables["runs"] = runs.with_columns(
            pl.col("peak_tokens").fill_null(pl.col("_peak").cast(pl.Int64)),
            pl.col("dependency").fill_null(pl.col("_dep")),
            pl.col("agent_tokens").fill_null(pl.col("_agent").cast(pl.Int64))).drop("_peak", "_dep", "_agent")
    if complete and "compactions" in tables:
        if "entries" not in tables:
            from workbench.summary import entries_table

            tables["entries"] = entries_table(tables["compactions"])
        if "scores" not in tables:
            from workbench.judges.lexical import LexicalJudge
            from workbench.judges.requests import compaction_requests, score_requests

            tables["scores"], _ = score_requests(compaction_requests(tables), LexicalJudge())
    return tables


def require(tables: dict[str, pl.DataFrame], *names: str, what: str = "this analysis") -> bool:
    """Whether every named table is present; prints which are missing (a log may not have them)."""
    missing = [n for n in names if n not in tables or tables[n].height == 0]
    if missing:
        print(f"{what} needs the table(s) {missing}, which this data directory does not have; skipped.")
    return not missing
