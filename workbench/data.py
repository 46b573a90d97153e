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


def load_tables(path: str | os.PathLike[str] = DEFAULT_TESTBED, *, generate: bool = True) -> dict[str, pl.DataFrame]:
    """Every table in a directory (Parquet or JSONL), validated; the default testbed is generated if missing."""
    path = Path(path)
    if generate and path.resolve() == DEFAULT_TESTBED.resolve():
        ensure_testbed(path)
    tables = io.read_tables(path, tuple(schema.TABLES))
    if "runs" not in tables:
        raise schema.SchemaError("no runs table (runs.parquet or runs.jsonl)", file=str(path))
    return tables
