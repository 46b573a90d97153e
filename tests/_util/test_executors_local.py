"""Worker processes started as ``python -c`` with this package (workbench._util.executors.ProcessWorkers): the session
readers' parallel passes ran in multiprocessing's spawn pool, which imports the caller's ``__main__`` again in
every worker, so a user's script without an ``if __name__ == "__main__"`` guard (or one piped to ``python -``)
broke the pool on any tree above 64 MB."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench._util.executors import ProcessWorkers

ROOT = Path(__file__).resolve().parents[2]


def _square_and_say(x: int) -> tuple[int, int]:
    print("chatter on standard output")  # must not reach the answers
    return x * x, os.getpid()


def _refuse(x: int) -> int:
    from workbench.errors import SchemaError

    raise SchemaError(field="x", expected="an even number", got=str(x)).located("f.jsonl", x)


def test_workers_answer_in_order_in_other_processes_and_raise_what_the_function_raised() -> None:
    from workbench.errors import SchemaError

    with ProcessWorkers(2) as pool:
        futures = [pool.submit(_square_and_say, k) for k in range(6)]
        answers = [f.result(timeout=60) for f in futures]
        with pytest.raises(SchemaError) as err:
            pool.submit(_refuse, 3).result(timeout=60)
    assert [a for a, _ in answers] == [k * k for k in range(6)]
    assert os.getpid() not in {pid for _, pid in answers} and len({pid for _, pid in answers}) <= 2
    assert str(err.value) == "f.jsonl:3: field 'x': expected an even number, got 3" and err.value.line == 3


def _killed() -> None:
    import signal

    os.kill(os.getpid(), signal.SIGKILL)


def test_a_worker_that_dies_is_said_and_replaced() -> None:
    """Issue 57 item 20: a worker killed by ``kill -9`` was an internal error ('this is a bug'). The error says the
    worker was killed, by what, and that the outputs were not moved into place; a worker that exits says its code."""
    from workbench._util.executors import WorkerStopped

    with ProcessWorkers(1) as pool:
        with pytest.raises(WorkerStopped, match=r"a worker process exited with code 3 in the middle of its job"):
            pool.submit(os._exit, 3).result(timeout=60)
        with pytest.raises(WorkerStopped, match=r"was killed by SIGKILL \(kill -9, or the kernel's out-of-memory "
                                                r"killer\).*not moved into place"):
            pool.submit(_killed).result(timeout=60)
        assert pool.submit(pow, 2, 10).result(timeout=60) == 1024


def test_the_command_line_says_a_killed_worker_is_not_a_bug(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """What a verb prints when a worker of its was killed: the worker's fate, exit 1, no 'this is a bug'."""
    import signal

    from workbench._util.executors import WorkerStopped
    from workbench.cli import logs
    from workbench.cli.main import main

    def killed(args: object) -> int:
        raise WorkerStopped(-signal.SIGKILL)

    monkeypatch.setattr(logs, "run_import", killed)
    assert main(["import", "workbench/datasets/example_logs/invoice_log.jsonl", "--out", "unused"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("workbench import: a worker process was killed by SIGKILL") and "bug" not in err


def test_workers_started_ahead_are_taken_once_for_their_count_and_stopped_otherwise() -> None:
    """``workbench import`` starts the workers before its own imports (start_workers) and the reader takes them
    (workers): the same processes must serve the reader, a pool started for another count must be stopped, not
    left running, and a second take must start new ones."""
    from workbench._util import executors

    executors.start_workers(2)
    pool = executors.workers(2)
    with pool:
        pids = {pool.submit(_square_and_say, k).result(timeout=60)[1] for k in range(4)}
        procs = list(pool._procs)
        assert pids <= {p.pid for p in procs} and len(procs) == 2  # no process beyond the two started ahead
    assert all(p.poll() is not None for p in procs)  # stopped when the reader was done
    executors.start_workers(2)
    ahead = executors._STARTED[-1]
    assert ahead.submit(len, "up").result(timeout=60) == 2
    procs = list(ahead._procs)
    with executors.workers(3) as other:
        assert other is not ahead and other.size == 3 and not executors._STARTED
        for proc in procs:  # the pool for two was stopped (one still running would time out here)
            proc.wait(timeout=10)
    with executors.workers(2) as fresh:
        assert fresh is not pool and fresh is not ahead


@pytest.mark.parametrize("how", ["script", "stdin"])
def test_a_script_without_a_main_guard_reads_a_large_tree_in_workers(tmp_path: Path, how: str) -> None:
    """The usage pass and the import, in worker processes (the size threshold set to 0), from a script with no
    main guard and from one piped to ``python -``: both used to stop with BrokenProcessPool."""
    from tests.adapters.test_session_streaming import _many_groups

    _many_groups(tmp_path / "tree", bad_line=False, cut=False)
    code = ("import os, warnings\n"
            "warnings.simplefilter('ignore')\n"
            "from workbench.adapters import _usage_scan as usage_scan\n"
            "from workbench.adapters import _claude_code as claude_code\n"
            "from workbench.datasets import import_log\n"
            "from workbench.adapters import session_usage\n"
            "usage_scan.PARALLEL_BYTES = claude_code.PARALLEL_BYTES = 0\n"
            "claude_code.os.sched_getaffinity = lambda pid: {0, 1}\n"
            "claude_code._group_runs = None  # in this process, a group read here fails\n"
            f"rows = session_usage({str(tmp_path / 'tree' / 'projects')!r})\n"
            f"counts = import_log({str(tmp_path / 'tree' / 'projects')!r}, {str(tmp_path / 'out')!r})\n"
            "print('sessions', rows.height, 'runs', counts['runs'])\n")
    script = tmp_path / "count.py"
    script.write_text(code)
    cmd = [sys.executable, str(script)] if how == "script" else [sys.executable, "-"]
    done = subprocess.run(cmd, input=None if how == "script" else code, capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "sessions 6 runs 7"
