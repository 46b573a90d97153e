"""Requests in flight at once, against jevcompat's reference mock (PyPI) on loopback with each answer held back:
``--concurrency`` requests run together across compactions and never more, connections are pooled, and the
cache and the accounting stay exact under threads."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

jevcompat_mock = pytest.importorskip("jevcompat.mock")

from workbench.adapters import read_log  # noqa: E402
from workbench.judges import make_judge  # noqa: E402
from workbench.summaries import entry_id  # noqa: E402
from workbench.summaries import compaction_requests  # noqa: E402
from workbench.judges import score_requests  # noqa: E402
from workbench.llm import DiskCache  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


class Watch:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.peak = self.posts = 0
        self.peers: set[tuple[str, int]] = set()


@pytest.fixture
def slow_jev() -> Iterator[tuple[str, Watch]]:
    watch = Watch()

    class Slow(jevcompat_mock.Handler):  # type: ignore[misc,name-defined]
        cfg = jevcompat_mock.MockConfig()
        protocol_version = "HTTP/1.1"  # keep-alive, as real servers: the client may reuse connections

        def do_POST(self) -> None:  # noqa: N802
            with watch.lock:
                watch.now += 1
                watch.posts += 1
                watch.peak = max(watch.peak, watch.now)
                watch.peers.add(self.client_address)
            time.sleep(0.15)
            with watch.lock:
                watch.now -= 1
            super().do_POST()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", watch
    finally:
        server.shutdown()
        server.server_close()


def _requests(n: int) -> list:  # type: ignore[type-arg]
    base = [r for r in compaction_requests(read_log(ROOT / "workbench" / "datasets" / "example_logs" / "invoice_log.jsonl")) if r.entry_ids]
    return [dataclasses.replace(
        base[k % len(base)], boundary=1000 + k, request=dataclasses.replace(base[k % len(base)].request, task=f"task {k}"),
        entry_ids=tuple(entry_id(base[k % len(base)].run_id, 1000 + k, i)
                        for i in range(len(base[k % len(base)].entry_ids)))) for k in range(n)]


def test_up_to_concurrency_requests_in_flight_pooled_and_counted_once(slow_jev: tuple[str, Watch],
                                                                      tmp_path: Path) -> None:
    url, watch = slow_jev
    requests = _requests(24)
    judge = make_judge("jev", base_url=url, max_concurrency=6, cache=tmp_path / "cache")
    scores, acct = score_requests(requests, judge, concurrency=6)
    assert watch.peak == 6  # six at once across compactions, never seven
    assert watch.posts == 24 and int(acct["sent"].sum()) == 24 and scores["score"].null_count() == 0
    assert len(watch.peers) <= 6  # connections kept and reused (a client per request opened 24)
    assert len(DiskCache(tmp_path / "cache")) == 24  # every answer cached once, none lost to a race
    # the same run again is answered from the cache: nothing sent, the same scores
    again = make_judge("jev", base_url=url, max_concurrency=6, cache=tmp_path / "cache")
    scores2, acct2 = score_requests(requests, again, concurrency=6)
    assert watch.posts == 24 and int(acct2["sent"].sum()) == 0 and scores2.equals(scores)


def test_one_at_a_time_when_asked(slow_jev: tuple[str, Watch]) -> None:
    url, watch = slow_jev
    judge = make_judge("jev", base_url=url, max_concurrency=1)
    score_requests(_requests(4), judge, concurrency=1)
    assert watch.peak == 1 and watch.posts == 4


def test_tokenizer_is_built_once_under_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench import tokens

    built: list[str] = []
    real = tokens._build

    def counting(name: str):  # type: ignore[no-untyped-def]
        built.append(name)
        time.sleep(0.05)  # widen the window in which other threads ask
        return real(name)

    monkeypatch.setattr(tokens, "_build", counting)
    tokens.encoding.cache_clear()
    counts: list[int] = []
    threads = [threading.Thread(target=lambda: counts.append(tokens.count("INV-104 paid $120.50"))) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert built == ["o200k_base"] and len(set(counts)) == 1 and len(counts) == 16
