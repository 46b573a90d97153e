"""Reading session files in buffered blocks with a line bound (issue 57, items 6 and 7) against the memory-mapped
reading it replaced, in the same run.

Two parts:

1. **The common path.** A session file of ordinary lines (about 2 KB each, every tenth a reply with ``usage``) is
   read both ways: every line parsed by orjson (the importer's fast JSON lines), and only the lines holding
   ``"usage"`` (``workbench usage``'s pass). The reference is the old reading: the file mapped, each line a
   ``memoryview`` slice handed to orjson. Printed: both times and the ratio new / reference.
2. **One long line.** A file that is one line of N MB (``--long-mb``; the issue's probe was 1 GB) is read by the
   bounded reader with the default 64 MiB bound: the time and the peak memory (``ru_maxrss``) of a child process,
   against a plain ``fh.read()`` of the same file in another child (what the whole file costs to hold once).
   Before the bound this path re-joined a growing buffer (quadratic time) and held the line several times over.

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

from workbench._util.jsonl import bounded_lines, max_line_bytes


def session_file(path: Path, mb: int) -> None:
    text = "word " * 380
    reply = {"type": "assistant", "sessionId": "s", "requestId": "r", "message": {
        "id": "m", "model": "claude-x", "role": "assistant", "content": [{"type": "text", "text": text}],
        "usage": {"input_tokens": 5, "output_tokens": 7}}}
    user = {"type": "user", "sessionId": "s", "message": {"role": "user", "content": text}}
    lines = [json.dumps(reply if i % 10 == 0 else user) + "\n" for i in range(10)]
    block = "".join(lines).encode()
    with open(path, "wb") as fh:
        for _ in range(mb * 2**20 // len(block)):
            fh.write(block)


def mapped(path: Path, usage_only: bool) -> int:
    """The old reading: mapped file, memoryview slices to orjson."""
    n = 0
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        view = memoryview(mm)
        size, pos, find = len(mm), 0, mm.find
        while pos < size:
            end = find(b"\n", pos)
            stop = size if end < 0 else end + 1
            if not usage_only or find(b'"usage"', pos, stop) >= 0:
                orjson.loads(view[pos:stop])
                n += 1
            pos = stop
        view.release()
    return n


def buffered(path: Path, usage_only: bool) -> int:
    """The new reading: buffered blocks, each line bounded, bytes to orjson."""
    n = 0
    limit = max_line_bytes()
    with open(path, "rb", buffering=1 << 20) as fh:
        for _number, raw in bounded_lines(fh, limit):
            if raw is not None and (not usage_only or b'"usage"' in raw):
                orjson.loads(raw)
                n += 1
    return n


def best(fn, *args, repeat: int = 3) -> float:  # noqa: ANN001
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - started)
    return min(times)


CHILD = """
import resource, sys, time
from workbench._util.jsonl import bounded_lines, max_line_bytes
started = time.perf_counter()
with open(sys.argv[1], "rb", buffering=1 << 20) as fh:
    if sys.argv[2] == "bounded":
        lines = sum(1 for _ in bounded_lines(fh, max_line_bytes()))
    else:
        lines = len(fh.read())
print(time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=200, help="size of the ordinary session file")
    parser.add_argument("--long-mb", type=int, default=1024, help="size of the one-line file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "session.jsonl")
        session_file(path, args.mb)
        print(f"1. a {args.mb} MB session file of ~2 KB lines")
        print(f"   {'lines parsed':<14} {'buffered':>10} {'mapped (ref)':>13} {'ratio':>7}")
        for what, usage_only in (("every line", False), ("usage lines", True)):
            assert buffered(path, usage_only) == mapped(path, usage_only)
            new, ref = best(buffered, path, usage_only), best(mapped, path, usage_only)
            print(f"   {what:<14} {new:>9.3f}s {ref:>12.3f}s {new / ref:>6.2f}x", flush=True)
        path.unlink()
        long = Path(tmp, "long.jsonl")
        with open(long, "wb") as fh:
            chunk = b"a" * 2**20
            for _ in range(args.long_mb):
                fh.write(chunk)
        print(f"2. one line of {args.long_mb} MB, bound {max_line_bytes() / 2**20:g} MiB")
        for how in ("bounded", "read"):
            out = subprocess.run([sys.executable, "-c", CHILD, str(long), how], capture_output=True, text=True,
                                 check=True, env={**os.environ})
            seconds, peak = out.stdout.split()
            label = "bounded reader" if how == "bounded" else "fh.read() (ref)"
            print(f"   {label:<16} {float(seconds):>7.2f}s  peak {int(peak):>6} MB", flush=True)


if __name__ == "__main__":
    main()
