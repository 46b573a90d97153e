"""Where sharded work runs: here (threads or processes) or on a Ray cluster.

Judge jobs are sharded by compaction and simulation sweeps by block of tasks (each episode's
seed comes from the configuration's seed, its task and its replicate, so a shard computes the
same episodes wherever it runs). :func:`ray_map` sends each shard to Ray as a task and returns
the results in input order, so the tables are identical to a local run's. Ray is optional (the
``scale`` extra): nothing imports it unless ``--executor ray`` is asked for.

``address`` is Ray's: ``None`` starts (or reuses) a local Ray on this machine; ``"auto"`` joins
the cluster this machine belongs to; ``"ray://HEAD:10001"`` connects a client to a remote head.
The workers need this package installed (the same version) and, for judges with a cache, the
cache directory on a filesystem they share (entries are written atomically, so workers writing
at once never corrupt or duplicate one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")



#: new objects between two of the cyclic garbage collector's collections under :func:`rare_collections` and in a
#: worker process (Python's default: 700)
RARE_THRESHOLD = 100_000


@contextmanager
def rare_collections(threshold: int = RARE_THRESHOLD) -> Iterator[None]:
    """Run the block with Python's cyclic garbage collector starting a collection every ``threshold`` new
    objects instead of every 700, then restore the old thresholds.

    Judging a log allocates millions of small acyclic objects (tokens, tuples, rows) while the requests and caches
    it keeps grow, so the default thresholds make the collector walk the growing heap again and again: on the
    testbed that was 6 of 14 seconds of ``workbench judge``. Cycles are still collected, only less often."""
    import gc

    old = gc.get_threshold()
    gc.set_threshold(threshold, old[1], old[2])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one: a container limited to two
    of a machine's cores has two, though ``os.cpu_count`` says all)."""
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


#: the code a worker process starts with: it takes the parent's ``sys.path`` from its input, then serves
#: :func:`serve_worker` (so a worker never imports the caller's ``__main__``)
_BOOT = ("import pickle, sys\n"
         "sys.path[:] = pickle.load(sys.stdin.buffer)\n"
         "from workbench._util.executors import serve_worker\n"
         "serve_worker()\n")


def serve_worker() -> None:
    """A worker process's loop: read a pickled ``(function, args)`` from standard input, run it, write back a
    pickled ``(True, result)`` or ``(False, exception)``, until the input ends. What the function prints goes
    to standard error (standard output carries the answers)."""
    import gc
    import os
    import pickle
    import sys

    # a job reads data into small acyclic objects by the million (a session's lines, rows, replies): the collector
    # starts as rarely as under rare_collections, for the whole worker
    gc.set_threshold(RARE_THRESHOLD, *gc.get_threshold()[1:])
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    jobs = sys.stdin.buffer
    while True:
        try:
            fn, args = pickle.load(jobs)
        except EOFError:
            return
        try:
            answer: tuple[bool, Any] = (True, fn(*args))
        except BaseException as exc:  # noqa: BLE001 - sent to the parent, which raises it
            answer = (False, exc)
        try:
            data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001 - an answer that does not pickle is said as an error
            data = pickle.dumps((False, RuntimeError(f"a worker's answer could not be sent: {exc!r}")))
        answers.write(data)
        answers.flush()


class WorkerStopped(RuntimeError):
    """A worker process ended in the middle of a job: killed (``kill -9``, the kernel's out-of-memory killer) or
    exited. Not a bug of the job: the command says what happened and that its outputs were not moved into place."""

    def __init__(self, returncode: int) -> None:
        import signal

        self.returncode = returncode
        if returncode < 0:
            try:
                name = signal.Signals(-returncode).name
            except ValueError:
                name = f"signal {-returncode}"
            how = f"was killed by {name}" + (" (kill -9, or the kernel's out-of-memory killer)"
                                               if name == "SIGKILL" else "")
        else:
            how = f"exited with code {returncode}"
        super().__init__(f"a worker process {how} in the middle of its job; the outputs being written were not "
                         "moved into place (run the command again)")


class ProcessWorkers:
    """Functions run in ``n`` worker processes, each started as ``python -c`` with this package (not forked, and
    not multiprocessing's spawn, which imports the caller's ``__main__`` again in every worker: a user's script
    without an ``if __name__ == "__main__"`` guard ran its own top level in each and broke the pool). A worker
    takes one job at a time; :meth:`submit` returns a future, results are the function's (pickled back),
    exceptions are raised from :meth:`Future.result`. The functions and their arguments must pickle (module-level
    functions). Use as a context manager: leaving it stops the workers (those still running are killed)."""

    def __init__(self, n: int) -> None:
        import threading
        from concurrent.futures import ThreadPoolExecutor

        self._local = threading.local()
        self._lock = threading.Lock()
        self._procs: list[Any] = []
        self.size = max(1, n)
        self._started = False
        self._pool = ThreadPoolExecutor(max_workers=self.size)

    def _proc(self) -> Any:
        import pickle
        import subprocess
        import sys

        proc = getattr(self._local, "proc", None)
        if proc is None or proc.poll() is not None:  # (a worker that died is replaced)
            proc = subprocess.Popen([sys.executable, "-c", _BOOT], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            with self._lock:
                self._procs.append(proc)
            assert proc.stdin is not None
            pickle.dump(list(sys.path), proc.stdin)
            self._local.proc = proc
        return proc

    def _call(self, fn: Callable[..., R], args: tuple[Any, ...]) -> R:
        import pickle

        proc = self._proc()
        pickle.dump((fn, args), proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        proc.stdin.flush()
        try:
            ok, value = pickle.load(proc.stdout)
        except EOFError:
            raise WorkerStopped(proc.wait()) from None
        if ok:
            return value
        raise value

    def start(self, module: str | None = None) -> None:
        """Start every worker now, each importing ``module``, without waiting (so that their start overlaps the
        caller's own work; otherwise a worker starts at its first job)."""
        import importlib

        if self._started:
            return
        self._started = True
        for _ in range(self.size):
            self.submit(importlib.import_module, module or __name__)

    def submit(self, fn: Callable[..., R], *args: Any) -> Any:
        """``fn(*args)`` in a worker process: a :class:`concurrent.futures.Future`."""
        return self._pool.submit(self._call, fn, args)

    def close(self) -> None:
        """Stop the workers: jobs not started are cancelled, idle workers end, a busy one is killed."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            procs, self._procs = self._procs, []
        for proc in procs:
            try:
                proc.stdin.close()
            except OSError:
                pass
        for proc in procs:
            try:
                proc.wait(timeout=2)
            except Exception:  # noqa: BLE001 - still busy with a job nobody waits for
                proc.kill()
                proc.wait()
            proc.stdout.close()

    def __enter__(self) -> ProcessWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: pools started ahead of need by :func:`start_workers`, for :func:`workers` to take
_STARTED: list[ProcessWorkers] = []


def start_workers(n: int, module: str | None = None) -> None:
    """Start ``n`` worker processes now, each importing ``module``, for the next :func:`workers` call to take. A
    command calls it before its own imports, so that the workers' start overlaps them (on two cores, the import
    of a large session tree waited a third of a second for its workers otherwise). Workers nobody takes are
    stopped at exit."""
    import atexit

    pool = ProcessWorkers(n)
    pool.start(module)
    _STARTED.append(pool)
    atexit.register(pool.close)


def workers(n: int) -> ProcessWorkers:
    """``n`` worker processes: those :func:`start_workers` started, when it started ``n``, else new ones (a pool
    started for another count is stopped). Use as a context manager."""
    while _STARTED:
        pool = _STARTED.pop()
        if pool.size == n:
            return pool
        pool.close()
    return ProcessWorkers(n)


def thread_map(fn: Callable[[T], R], items: Sequence[T], workers: int, *, on_stop: Callable[[], None] | None = None,
               what: str = "items") -> list[R]:
    """``[fn(x) for x in items]`` on up to ``workers`` threads, results in input order.

    When the waiting thread is interrupted (SIGTERM raised there, Ctrl-C), ``on_stop()`` is called (a client stops
    sending), the items not started are cancelled, the running ones are not waited for, the count left is
    logged as ``stopping: N of M WHAT left unanswered``, and the interruption is raised.
    """
    import logging
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    futures: list[Any] = []
    try:
        futures.extend(pool.submit(fn, x) for x in items)
        return [f.result() for f in futures]
    except BaseException:
        if on_stop is not None:
            on_stop()
        left = len(items) - sum(f.done() and not f.cancelled() for f in futures)
        logging.getLogger("workbench").info(f"stopping: {left} of {len(items)} {what} left unanswered")
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=False)


class ExecutorUnavailable(RuntimeError):
    """The executor asked for cannot run here (Ray not installed, no cluster at the address). ``what`` names what
    was asked for (``executor``, ``address``): the command line shows it as its option."""

    def __init__(self, message: str, what: str = "address") -> None:
        super().__init__(message)
        self.what = what


def ray_map(fn: Callable[[T], R], items: Sequence[T], *, address: str | None = None,
            progress: Callable[[int], None] | None = None) -> list[R]:
    """``[fn(x) for x in items]`` as Ray tasks, one per item, results in input order.

    ``progress(i)`` is called with the index of each item as its task finishes (in finishing order).
    Ray is started here when it is not running yet (and then left running for later calls).
    """
    return list(ray_imap(fn, items, address=address, progress=progress, window=max(1, len(items))))


def ray_imap(fn: Callable[[T], R], items: Iterable[T], *, address: str | None = None,
             progress: Callable[[int], None] | None = None, window: int | None = None) -> Iterator[R]:
    """``fn(x)`` for each of ``items`` as Ray tasks, yielded in input order, with at most ``window`` items taken
    from ``items`` and not yet yielded (default: twice the cluster's CPUs), so a long stream of large items
    (a log's batches of runs) never sits in the object store, or in this process, all at once."""
    ray = _ray(address)
    remote = ray.remote(fn)
    if window is None:
        window = 2 * max(1, int(ray.cluster_resources().get("CPU", 1)))
    stream = iter(items)
    pending: dict[Any, int] = {}
    finished: dict[int, Any] = {}
    taken = emitted = 0
    exhausted = False
    while True:
        while not exhausted and taken - emitted < window:
            try:
                x = next(stream)
            except StopIteration:
                exhausted = True
                break
            pending[remote.remote(x)] = taken
            taken += 1
        if emitted == taken and exhausted:
            return
        if emitted not in finished:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                i = pending.pop(ref)
                finished[i] = ray.get(ref)
                if progress is not None:
                    progress(i)
        while emitted in finished:
            yield finished.pop(emitted)
            emitted += 1


def _ray(address: str | None) -> Any:
    """The ``ray`` module, connected to ``address`` (started here when no Ray runs yet)."""
    try:
        import ray
    except ImportError:
        raise ExecutorUnavailable("ray needs Ray: pip install 'compaction-workbench[scale]' (or pip install ray)",
                                  "executor") from None
    reachable(address)  # even with a Ray running here: the address asked for must be one that can work
    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
        except ConnectionError as err:
            raise ExecutorUnavailable(f"{address}: no Ray cluster there ({err})") from None
        except Exception as err:  # noqa: BLE001 - Ray's own errors for a bad address or a missing client
            raise ExecutorUnavailable(f"{address}: Ray could not connect ({type(err).__name__}: "
                                      f"{' '.join(str(err).split())[:160]})") from None
    return ray


CONNECT_TIMEOUT = 5.0  # seconds to reach a Ray head before saying there is none (Ray itself retries for minutes)


def reachable(address: str | None, timeout: float = CONNECT_TIMEOUT) -> None:
    """Fail at once, naming the address, when a Ray address cannot work: a malformed one, a ``ray://`` client
    without ``ray[client]`` installed, or a HOST:PORT where nothing answers within ``timeout`` seconds (Ray would
    retry for minutes). ``None`` (a local Ray) and ``auto`` are left to Ray."""
    import socket

    if address is None or address in ("auto", "local"):
        return
    client = address.startswith("ray://")
    host, _, port = address.split("://", 1)[-1].rpartition(":")
    if not port.isdigit() or not host:
        raise ExecutorUnavailable(f"{address}: expected auto, HOST:PORT or ray://HOST:PORT")
    if client:
        try:
            import grpc  # noqa: F401 - the Ray client's transport, in ray[client]
        except ImportError:
            raise ExecutorUnavailable(f"{address}: the Ray client needs ray[client]: pip install "
                                      "'compaction-workbench[scale]' (or pip install 'ray[client]')") from None
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as err:
        raise ExecutorUnavailable(f"{address}: no Ray cluster at {host}:{port} "
                                  f"({err.strerror or type(err).__name__})") from None


def shards(n: int, size: int) -> list[range]:
    """``range(n)`` cut into consecutive pieces of at most ``size``."""
    size = max(1, size)
    return [range(start, min(n, start + size)) for start in range(0, n, size)]


__all__ = ["WorkerStopped", "CONNECT_TIMEOUT", "ExecutorUnavailable", "ProcessWorkers", "RARE_THRESHOLD",
           "rare_collections", "ray_imap", "start_workers", "workers",
           "ray_map", "reachable", "serve_worker", "shards", "thread_map", "usable_cores"]
