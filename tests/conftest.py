"""Fixtures shared across test files: a small simulated testbed (built once a session), the loopback LLM server and
fake API keys."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import settings as hypothesis_settings

from workbench.cli.figures import without_iri_grammar

from .llm_server import FakeLLMServer

without_iri_grammar()  # the test processes import nbformat: 1.7 s less in each worker (as in `workbench figures`)

# property tests draw the same examples on every run (derived from each test): CI never fails on an example the
# last run did not try; HYPOTHESIS_PROFILE=explore draws new ones
hypothesis_settings.register_profile("ci", derandomize=True)
hypothesis_settings.register_profile("explore", derandomize=False)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "workbench" / "datasets" / "example_logs" / "invoice_log.jsonl"

#: the fake key tests set; it must never appear on disk or in an error
KEY = "sk-test-SECRET-4242"


@pytest.fixture(scope="session")
def _small_testbed() -> dict[str, pl.DataFrame]:
    from workbench.sim import DatasetConfig, simulate

    return simulate(DatasetConfig(tasks=24, runs=2, budgets=(48,), n_rollouts=6), workers=1)


@pytest.fixture
def small_testbed(_small_testbed: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """The testbed at 24 tasks x 2 runs x budget 48, every policy, 6 draft rollouts: simulated once a session
    (a few seconds), handed to each test as its own dict (frames are immutable; a test may add tables)."""
    return dict(_small_testbed)


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    """A fake OpenAI-compatible and System One server on 127.0.0.1, speaking HTTP for real."""
    s = FakeLLMServer()
    yield s
    s.close()


@pytest.fixture
def api_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every key variable a judge may read, set to :data:`KEY`."""
    for env in ("TYPESAFE_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.setenv(env, KEY)


def labels_frame(error: float = 0.05, n: int = 200) -> pl.DataFrame:
    """Two rounds of support labels for n items, the second flipping each label with probability ``error``."""
    rng = np.random.default_rng(5)
    truth = rng.random(n) < 0.6
    rows = []
    for rnd in (1, 2):
        flip = rng.random(n) < error
        for i in range(n):
            v = truth[i] ^ flip[i]
            rows.append({"item_id": f"e{i:03d}", "annotator": f"a{rnd}", "round": rnd, "field": "support",
                         "value": "supported" if v else "unsupported", "note": None, "labeled_at": None})
    return pl.DataFrame(rows)


def assert_cli_round_trip(log: Path, tmp: Path, *format_args: str) -> None:
    """``workbench import`` a log, ``export`` it as trajectory JSONL and import that: the tables must be equal."""
    from workbench.tables._vocabulary import TRAJECTORY_TABLES
    from workbench.cli.main import main

    assert main(["import", str(log), *format_args, "--out", str(tmp / "a")]) == 0
    assert main(["export", str(tmp / "a"), "--format", "jsonl", "--out", str(tmp / "e.jsonl")]) == 0
    assert main(["import", str(tmp / "e.jsonl"), "--out", str(tmp / "b")]) == 0
    for name in TRAJECTORY_TABLES:
        a = pl.read_parquet(tmp / "a" / f"{name}.parquet")
        b = pl.read_parquet(tmp / "b" / f"{name}.parquet")
        assert a.equals(b), name


def system_tool(*names: str, install: str) -> str:
    """The first of ``names`` on PATH (Debian's chromium, tmux, pdflatex). Without one the test skips, except
    under CI=true, where it fails: .ci/run installs ``install`` with apt-get, so a missing tool is CI's bug."""
    import os
    import shutil

    for name in names:
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but no {names[0]}: .ci/run installs Debian's {install} with apt-get")
    pytest.skip(f"no {names[0]} on this machine (apt-get install {install}); the test runs in CI")


@pytest.fixture(autouse=True)
def _close_figures() -> Iterator[None]:
    """Every figure a test draws is closed after it (as seaborn's test suite does): none piles up in a worker."""
    yield
    import sys

    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The end-to-end tests (marked slow: a browser, kernels, subprocesses) first in each worker's share: with
    ``-n K --dist worksteal`` xdist gives worker j the j-th of K equal contiguous slices of this list to run in
    order (and steals from the ends of the others' when idle). A 30-second test that starts last keeps one worker
    busy after the other has finished everything else, and slow tests all in the first slice ran one after the
    other on one worker: every K-th slow test (file order) heads each slice, the fast tests fill the rest."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")  # set by xdist in its workers
    k = int(workers) if workers.isdigit() and int(workers) > 1 else 1
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    fast = iter([item for item in items if item.get_closest_marker("slow") is None])
    ordered: list[pytest.Item] = []
    for j in range(k):
        size = (j + 1) * len(items) // k - j * len(items) // k
        head = slow[j::k][:size]
        ordered.extend(head)
        ordered.extend(itertools.islice(fast, size - len(head)))
    ordered.extend(fast)
    placed = set(ordered)
    ordered.extend(item for item in slow if item not in placed)  # (more slow tests than a slice holds)
    items[:] = ordered
