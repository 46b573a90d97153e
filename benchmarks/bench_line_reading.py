"""Reading session files in buffered blocks with a line bound (issue 57, items 6 and 7) against the memory-mapped
reading it replaced, in the same run.

Two parts:

1. **The common path.** A session file of ordinary lines (about 2 KB each, every tenth a reply with ``usage``) is
   counted by :func:`workbench.adapters.usage_rows` (``workbench usage``'s pass: buffered blocks, every line
   bounded, the lines holding ``"usage"`` parsed by orjson). The reference is the old pass's reading alone: the
   file mapped, each usage line a ``memoryview`` slice handed to orjson (no totals, no format sniffing, so the
   ratio is an upper bound on what the new reading costs). Printed: both times and the ratio new / reference.
2. **One long line.** ``workbench usage`` on a directory holding one session and a file that is one line of N MB
   (``--long-mb``; the issue's probe was 1 GB, and a crash's NUL-filled file is the same): the time and the peak
   memory (``ru_maxrss``) of the child process, against a child that only ``fh.read()``-s the same file (what
   holding the line once costs). Before the bound the line was held whole, several times over.

Run from the project root: .venv/bin/python benchmarks/bench_line_reading.py [--mb 200] [--long-mb 1024]
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

from workbench.adapters import usage_rows


def session_file(path: Path, mb: int) -> None:
    text = "word " * 380
    user = json.dumps({"type": "user", "sessionId": "s", "message": {"role": "user", "content": text}}) + "\n"
    with open(path, "w", encoding="utf-8") as fh:
        k = written = 0
        while written < mb * 2**20:
            reply = {"type": "assistant", "sessionId": "s", "requestId": f"r{k}", "message": {
                "id": f"m{k}", "model": "claude-x", "role": "assistant", "content": [{"type": "text", "text": text}],
                "usage": {"input_tokens": 5, "output_tokens": 7}}}
            block = json.dumps(reply) + "\n" + user * 9
            fh.write(block)
            written += len(block)
            k += 1


def mapped(path: Path) -> int:
    """The old reading: mapped file, each usage line a memoryview slice to orjson."""
    n = 0
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        view = memoryview(mm)
        size, pos, find = len(mm), 0, mm.find
        while pos < size:
            end = find(b"\n", pos)
            stop = size if end < 0 else end + 1
            if find(b'"usage"', pos, stop) >= 0:
                orjson.loads(view[pos:stop])
                n += 1
            pos = stop
        view.release()
    return n


def best(fn, *args, repeat: int = 3) -> float:  # noqa: ANN001
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - started)
    return min(times)


CHILD = """
import resource, subprocess, sys, time
started = time.perf_counter()
if sys.argv[2] == "usage":
    subprocess.run([sys.argv[3], "usage", sys.argv[1]], check=True, capture_output=True)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
else:
    with open(sys.argv[1] + "/long.jsonl", "rb") as fh:
        held = len(fh.read())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(time.perf_counter() - started, peak // 1024)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=200, help="size of the ordinary session file")
    parser.add_argument("--long-mb", type=int, default=1024, help="size of the one-line file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "session.jsonl")
        session_file(path, args.mb)
        print(f"1. a {args.mb} MB session file of ~2 KB lines, its usage lines counted")
        rows = usage_rows(path)
        assert rows[0]["usage_replies"] == mapped(path)
        new, ref = best(usage_rows, path), best(mapped, path)
        print(f"   usage_rows {new:.3f}s, mapped reading (ref) {ref:.3f}s, ratio {new / ref:.2f}x", flush=True)
        path.unlink()
        home = Path(tmp, "projects", "p")
        home.mkdir(parents=True)
        session_file(home / "session.jsonl", 1)
        with open(home / "long.jsonl", "wb") as fh:
            chunk = b"a" * 2**20
            for _ in range(args.long_mb):
                fh.write(chunk)
        print(f"2. `workbench usage` beside one line of {args.long_mb} MB (bound 64 MiB)")
        workbench = str(Path(sys.executable).parent / "workbench")
        for how in ("usage", "read"):
            out = subprocess.run([sys.executable, "-c", CHILD, str(home), how, workbench], capture_output=True,
                                 text=True, check=True, env={**os.environ})
            seconds, peak = out.stdout.split()
            label = "workbench usage" if how == "usage" else "fh.read() (ref)"
            print(f"   {label:<16} {float(seconds):>7.2f}s  peak {int(peak):>6} MB", flush=True)


if __name__ == "__main__":
    main()
