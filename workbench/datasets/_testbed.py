"""Where the default testbed lives, and generating it: explicit (:func:`ensure_testbed`), or on demand for the default
path only (:func:`ensure_default_testbed`, which a notebook calls on its ``DATA``)."""

from __future__ import annotations

import logging
import os
from pathlib import Path


from workbench._util.project import PROJECT_ROOT

log = logging.getLogger("workbench.datasets")


#: where the default testbed lives, whatever the current directory
DEFAULT_TESTBED = PROJECT_ROOT / "data" / "testbed"


def ensure_testbed(path: str | os.PathLike[str] = DEFAULT_TESTBED, *, tasks: int | None = None,
                   runs: int | None = None, seed: int = 0) -> Path:
    """Generate the default testbed into ``path`` unless it is already there (``runs.parquet`` present).

    ``WORKBENCH_TESTBED_TASKS`` / ``WORKBENCH_TESTBED_RUNS`` override the size (a smaller
    testbed for quick checks); the defaults are the issue's 120 tasks x 4 runs.

    Parameters
    ----------
    path : str or os.PathLike, default the project's data/testbed
        The testbed directory.
    tasks : int, optional
        Tasks to simulate (the default size otherwise).
    runs : int, optional
        Runs per task.
    seed : int, default 0
        Seed of the simulation.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    from workbench.sim._dataset import DatasetConfig, build

    path = Path(path)
    if (path / "runs.parquet").exists():
        return path
    tasks = tasks or int(os.environ.get("WORKBENCH_TESTBED_TASKS", "120"))
    runs = runs or int(os.environ.get("WORKBENCH_TESTBED_RUNS", "4"))
    log.info("generating the testbed (%d tasks x %d runs) into %s ...", tasks, runs, path)
    build(path, DatasetConfig(tasks=tasks, runs=runs, seed=seed))
    return path


def ensure_default_testbed(data: str | os.PathLike[str]) -> Path:
    """``data`` as a path, after generating the default testbed there when ``data`` names it and it is missing;
    any other directory is left as it is (a typo in ``DATA`` is an error when loading, never a new testbed).

    Parameters
    ----------
    data : str or os.PathLike
        The data directory a notebook was given.

    Returns
    -------
    pathlib.Path
        ``data`` as a path.
    """
    path = Path(data)
    if path.resolve() == DEFAULT_TESTBED.resolve():
        ensure_testbed(path)
    return path


__all__ = ["DEFAULT_TESTBED", "ensure_default_testbed", "ensure_testbed"]
