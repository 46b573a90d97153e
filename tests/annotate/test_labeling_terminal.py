"""`workbench label` in a real terminal: tmux at 80x24, read from the screen as a person would. A 2,000-character
passage is read to its end through the pager; two answers typed in one burst both count; an escape sequence in a
heading does not clear the screen; Ctrl-C stops at once, without a traceback, with every label on disk."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import system_tool

pytestmark = pytest.mark.slow

WORKBENCH = Path(sys.executable).with_name("workbench")
PASSAGE = " ".join(f"w{k:04d}" for k in range(380)) + " the deciding line: INV-4242 was paid $120.50 (DECIDES)"


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[tuple[Callable[..., None], Callable[[], str], Path]]:
    tmux = system_tool("tmux", install="tmux")
    sock = str(tmp_path / "tmux.sock")
    items = [{"item_id": "e1", "text": "- INV-4242 is paid.", "section": "Decisions\x1b[2J\x1b[H", "task": "Settle G1.",
              "previous_summary": "## Decisions\n- Listed the invoices.", "evidence": [PASSAGE],
              "evidence_sources": ["step 4, Read"]},
             {"item_id": "e2", "text": "- File the report.", "section": "Open TODOs", "task": "Settle G1.",
              "evidence": []},
             {"item_id": "e3", "text": "- Pay INV-1.", "section": "Open TODOs", "task": "Settle G1.", "evidence": []}]
    sample = tmp_path / "s.jsonl"
    sample.write_text("".join(json.dumps(i) + "\n" for i in items))
    command = (f"{shlex.quote(str(WORKBENCH))} label {shlex.quote(str(sample))} --annotator dan --round 1 "
               f"--store {shlex.quote(str(tmp_path / 'ann'))}; echo EXIT=$?; sleep 30")
    subprocess.run([tmux, "-S", sock, "new-session", "-d", "-x", "80", "-y", "24", command], check=True,
                   env={**os.environ, "TERM": "xterm"})

    def keys(*k: str) -> None:
        subprocess.run([tmux, "-S", sock, "send-keys", "-t", "0", *k], check=True)

    def screen() -> str:
        return subprocess.run([tmux, "-S", sock, "capture-pane", "-p", "-t", "0"], check=True, capture_output=True,
                              text=True).stdout

    try:
        yield keys, screen, tmp_path
    finally:
        subprocess.run([tmux, "-S", sock, "kill-server"], check=False)


def _wait(screen: Callable[[], str], text: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while True:
        shown = screen()
        if text in shown:
            return shown
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} never appeared; the screen:\n{shown}")
        time.sleep(0.05)


def _labels(root: Path) -> dict[str, str]:
    path = root / "ann" / "labels" / "dan.round1.jsonl"
    return {r["item_id"]: r["value"] for r in map(json.loads, path.read_text().splitlines())} if path.exists() else {}


def test_terminal_labeler_in_tmux_reads_a_long_passage_to_its_end(
        terminal: tuple[Callable[..., None], Callable[[], str], Path]) -> None:
    keys, screen, root = terminal
    first = _wait(screen, "MORE BELOW: press Enter")
    assert "annotator dan · round 1 · field support" in first and "Decisions\\x1b[2J\\x1b[H" in first
    assert len(first.rstrip("\n").splitlines()) <= 24 and max(map(len, first.splitlines())) <= 80
    seen = [first]
    for _ in range(10):  # page on until the end of the item
        if "end of item" in seen[-1]:
            break
        before = seen[-1]
        keys("Enter")
        deadline = time.monotonic() + 10
        while screen() == before and time.monotonic() < deadline:
            time.sleep(0.05)
        seen.append(screen())
    assert "end of item" in seen[-1], seen[-1]
    read = " ".join(" ".join(s.split()) for s in seen)
    for k in range(380):
        assert f"w{k:04d}" in read, f"word {k} of the passage never reached the screen"
    assert "the deciding line: INV-4242 was paid $120.50 (DECIDES)" in " ".join(seen[-1].split())
    assert "Would following" not in read and "Does the entry contain information" in read  # the question, shown

    keys("1", "Enter", "2", "Enter")  # two answers in one burst: both count
    _wait(screen, "item e3")
    assert _labels(root) == {"e1": "supported", "e2": "unsupported"}
    keys("C-c")
    shown = _wait(screen, "EXIT=")
    assert "EXIT=130" in shown and "interrupted: 2 label(s) written this session, every one saved" in shown
    assert "Traceback" not in shown
    assert _labels(root) == {"e1": "supported", "e2": "unsupported"}
