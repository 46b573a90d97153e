"""Requests per second against concurrency, for the Jev judge, against a server that answers in 200 ms.

The server is ``jevcompat``'s reference mock (PyPI), each answer held back 200 ms, on loopback. The judge
scores ``--requests`` compactions of the example log (cycled with new request ids when it has fewer) through
the CLI's path (``make_judge`` + ``score_requests``) at each ``--concurrency``, with no cache. The reference,
measured in the same run, is concurrency 1: the ratio is the speed-up over one request at a time (ideal:
the concurrency, until the server or the client saturates).
Run: .venv/bin/python benchmarks/bench_concurrency.py [--requests 129] [--delay 0.2] [--levels 1,4,16,64]
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import time
from typing import Any

from jevcompat.mock import Handler, MockConfig
from http.server import ThreadingHTTPServer

from workbench.adapters import read_log
from workbench.judges import make_judge
from workbench.summaries import compaction_requests
from workbench.judges import score_requests


def serve(delay: float, port: "multiprocessing.Queue[int]") -> None:
    class Slow(Handler):
        cfg = MockConfig()
        protocol_version = "HTTP/1.1"  # keep-alive, as a real server
        disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            time.sleep(delay)
            super().do_POST()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    server.daemon_threads = True
    server.request_queue_size = 256
    port.put(server.server_address[1])
    server.serve_forever()


def slow_server(delay: float) -> tuple[multiprocessing.Process, str]:
    """The mock in its own process (as a real server is: it does not share the client's interpreter lock)."""
    port: multiprocessing.Queue[int] = multiprocessing.Queue()
    proc = multiprocessing.Process(target=serve, args=(delay, port), daemon=True)
    proc.start()
    return proc, f"http://127.0.0.1:{port.get(timeout=30)}"


def requests_for(n: int) -> list[Any]:
    base = [r for r in compaction_requests(read_log("workbench/datasets/example_logs/invoice_log.jsonl")) if r.entry_ids]
    out = []
    for k in range(n):
        r = base[k % len(base)]
        out.append(dataclasses.replace(r, boundary=r.boundary + 1000 * (k // len(base)),
                                       request=dataclasses.replace(r.request, task=f"{r.request.task} [{k}]")))
    return out


def main(n: int, delay: float, levels: list[int]) -> None:
    server, url = slow_server(delay)
    requests = requests_for(n)
    base = None
    print(f"{n} compactions, server answers in {delay * 1000:.0f} ms")
    for c in levels:
        judge = make_judge("jev", base_url=url, max_concurrency=c)
        started = time.perf_counter()
        scores, acct = score_requests(requests, judge, concurrency=c)
        took = time.perf_counter() - started
        sent = int(acct["sent"].sum())
        assert scores["score"].null_count() == 0, "some requests failed"
        base = base or took
        print(f"concurrency {c:>3}: {sent} requests in {took:6.2f} s = {sent / took:6.1f} req/s, "
              f"{base / took:5.1f}x concurrency 1 (ideal {min(c, sent)}x)")
    server.terminate()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=129)
    parser.add_argument("--delay", type=float, default=0.2)
    parser.add_argument("--levels", default="1,4,16,64")
    a = parser.parse_args()
    main(a.requests, a.delay, [int(x) for x in a.levels.split(",")])
