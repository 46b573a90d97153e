"""The Ray executor on a local Ray (``ray.init(num_cpus=2)``): judge jobs sharded by compaction and simulation
sharded by blocks of tasks give tables identical to the local executor's; workers share the on-disk cache
without losing or duplicating an entry, and their requests reach the driver's accounting."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.adapters import read_log
from workbench.judges import make_judge
from workbench.summaries import compaction_requests
from workbench.judges import score_requests
from workbench.llm import DiskCache

from tests.conftest import EXAMPLE

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    # Ray is imported here, not at the module's top: collecting this file (every worker does, even for `make
    # test-fast`, which deselects it) once imported Ray in each worker, seconds of CPU for nothing
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def requests() -> list:  # type: ignore[type-arg]
    return compaction_requests(read_log(EXAMPLE))


@pytest.mark.extra  # a local Ray starts in 16 s of a worker: CI's tier of the heaviest tests (make test-extras)
def test_on_ray_judging_and_simulation_equal_local(local_ray: None, requests: list,  # type: ignore[type-arg]
                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every Ray path in one test, so that the suite starts one local Ray (each start took 13 s of a test worker,
    and two workers each started one): requests scored in shards, the Jev judge's cache and accounting shared by
    the workers, a directory judged batch by batch, and a simulation in blocks of tasks, each equal to the local
    executor's result."""
    _lexical_requests(requests)
    _jev_requests(requests, tmp_path / "requests")
    _directory_batches(tmp_path / "directory", monkeypatch)
    _simulation()


def _lexical_requests(requests: list) -> None:  # type: ignore[type-arg]
    judge = make_judge("lexical")
    local = score_requests(requests, judge, repeats=2)
    remote = score_requests(requests, judge, repeats=2, executor="ray", shard_size=3)
    assert remote[0].equals(local[0]) and remote[1].equals(local[1]) and local[0].height == 2 * 61


def _jev_requests(requests: list, tmp_path: Path) -> None:  # type: ignore[type-arg]
    """The Jev judge on Ray shares the on-disk cache and its requests reach the driver's accounting."""
    from jevcompat.mock import Running

    with Running() as server:
        local = score_requests(requests, make_judge("jev", base_url=server.url, cache=tmp_path / "a"), concurrency=2)
        judge = make_judge("jev", base_url=server.url, cache=tmp_path / "b")
        remote = score_requests(requests, judge, concurrency=2, executor="ray", shard_size=2)
        assert remote[0].equals(local[0])
        assert remote[1].drop("sent").equals(local[1].drop("sent"))
        # 8 compactions, 3 of them the same request as another: 5 distinct requests, each cached once
        assert len(DiskCache(tmp_path / "b")) == len(DiskCache(tmp_path / "a")) == 5
        assert len(judge.client.usages) == 8 and sum(not u.cached for u in judge.client.usages) >= 5
        again = make_judge("jev", base_url=server.url, cache=tmp_path / "b")
        rerun = score_requests(requests, again, executor="ray", shard_size=2)
        assert rerun[0].equals(local[0]) and all(u.cached for u in again.client.usages)


def _directory_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`workbench judge --executor ray` ships whole batches of runs (requests built and scored on the workers):
    one run per task here, so the example log's runs make several tasks; the scores, tau counts and the Jev
    client's accounting equal the local run's."""
    import polars as pl
    from jevcompat.mock import Running

    from workbench.judges import _run as judge_run
    from workbench.judges import judge_directory

    tmp_path.mkdir()
    monkeypatch.setattr(judge_run, "RAY_BATCH_RUNS", 1)
    tables = read_log(EXAMPLE)
    assert tables["runs"].height >= 3
    local = judge_directory(tables, make_judge("lexical"), tmp_path / "local.parquet", tau=0.5, repeats=2)
    remote = judge_directory(tables, make_judge("lexical"), tmp_path / "ray.parquet", tau=0.5, repeats=2,
                             executor="ray")
    assert pl.read_parquet(remote.out).equals(pl.read_parquet(local.out))
    assert (remote.scores, remote.kept, remote.pruned, remote.requests) == (local.scores, local.kept, local.pruned,
                                                                            local.requests) and local.pruned > 0
    with Running() as server:
        here = judge_directory(tables, make_judge("jev", base_url=server.url, cache=tmp_path / "a"),
                               tmp_path / "jev-local.parquet")
        there = judge_directory(tables, make_judge("jev", base_url=server.url, cache=tmp_path / "b"),
                                tmp_path / "jev-ray.parquet", executor="ray")
    assert pl.read_parquet(there.out).equals(pl.read_parquet(here.out))
    # every worker's request reached the driver's accounting: 8 compactions, each sent or answered from the cache
    assert there.requests == here.requests == 8 and there.sent + there.cached == 8 and there.sent >= 5


def _simulation() -> None:
    from workbench.sim import DatasetConfig, simulate

    cfg = DatasetConfig(tasks=6, runs=2, budgets=(48,), policies=("prompting", "no_compression"), seed=3)
    local = simulate(cfg, workers=1)
    remote = simulate(cfg, executor="ray")
    assert local.keys() == remote.keys()
    for name in local:
        assert remote[name].equals(local[name]), name


def test_a_bad_ray_address_is_one_line_naming_address_and_fails_at_once(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Before: `--address 127.0.0.1:1` retried for over two minutes with no error, and `ray://host:port` without the
    Ray client was an 'internal error ... this is a bug'. Ray is never started here: the address is checked first."""
    import time

    from workbench.cli.main import main
    from workbench._util.executors import ExecutorUnavailable, reachable

    started = time.monotonic()
    code = main(["simulate", "--out", str(tmp_path / "tb"), "--tasks", "2", "--runs", "1", "--budgets", "48",
                 "--executor", "ray", "--address", "127.0.0.1:1"])
    err = capsys.readouterr().err
    assert code == 2 and time.monotonic() - started < 15
    last = err.strip().splitlines()[-1]  # after the progress lines
    assert last == "workbench simulate: --address 127.0.0.1:1: no Ray cluster at 127.0.0.1:1 (Connection refused)"
    assert "bug" not in err and "Traceback" not in err and not (tmp_path / "tb").exists()
    for bad, said in (("127.0.0.1", "expected auto, HOST:PORT"), ("ray://:10001", "expected auto, HOST:PORT")):
        with pytest.raises(ExecutorUnavailable, match=said):
            reachable(bad)
    try:
        import grpc  # noqa: F401
    except ImportError:  # the test environment has Ray without its client: the message says what to install
        with pytest.raises(ExecutorUnavailable, match=r"ray\[client\]"):
            reachable("ray://127.0.0.1:10001")
