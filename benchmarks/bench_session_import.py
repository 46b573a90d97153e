"""``workbench import`` of a large ``~/.claude/projects`` beside ccusage's session report on the same tree (issue 44):
time, peak memory, and whether the token totals agree.

The tree is synthesized from real captured lines (claude-code-log's ``dev-docs/messages/claude-code`` from its
PyPI source package, passed as ``--lines``): each session is a chain of those lines' shapes, cycled, with fresh
uuids, parent links, message ids and request ids, so every reply is unique and the tree is one live branch per
session. ``--sessions`` sessions of ``--turns`` lines each, at each ``--scale``. Timed in child processes, peak
memory from ``ru_maxrss``:

  ccusage    ``ccusage claude session --json --offline`` (the reference, where ``--ccusage`` is given)
  usage      ``workbench usage TREE`` (the usage pass alone, its report printed as ccusage prints its own: only
             the lines holding a usage key parsed)
  import     ``workbench import TREE --out DIR`` (the tables written; a tree above 64 MB read by worker
             processes, which build a batch of groups' rows each and hand them back as chunks of columns, for
             the importing process to validate and write)

Peak memory is the largest one process reached (``ru_maxrss`` of the children): with worker processes the
import's whole footprint is up to three such processes on two cores.

``import`` runs with ``--timings`` and its stages are shown (scan, parse, tables, write); each command runs
``--repeat`` times and the median is shown. The exponents fit log time and log peak memory against log bytes.

Run: ``.venv/bin/python benchmarks/bench_session_import.py --lines DIR [--ccusage EXE] [--scale 1 10 100]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def templates(lines: Path) -> list[dict]:
    """The user and assistant lines among the captured ones (their shapes, in file order)."""
    out = []
    for f in sorted(lines.rglob("*.jsonl")):
        for text in f.read_text(encoding="utf-8").splitlines():
            if text.strip():
                rec = json.loads(text)
                if rec.get("type") in ("user", "assistant") and isinstance(rec.get("message"), dict):
                    out.append(rec)
    return out


def build(tree: Path, shapes: list[dict], sessions: int, turns: int) -> int:
    """``sessions`` session files of ``turns`` lines; returns the bytes written."""
    total = 0
    project = tree / "projects" / "-home-dev-bench"
    project.mkdir(parents=True)
    for s in range(sessions):
        sid = str(uuid.UUID(int=s + 1))
        parent = None
        rows = []
        calls: dict[str, str] = {}  # a template's tool_use id -> the id it has in this session, latest
        for t in range(turns):
            rec = json.loads(json.dumps(shapes[t % len(shapes)]))
            me = str(uuid.UUID(int=(s + 1) * 1_000_000 + t))
            rec.update(sessionId=sid, uuid=me, parentUuid=parent, isSidechain=False,
                       timestamp=f"2026-11-{1 + s % 28:02d}T10:{t // 60 % 60:02d}:{t % 60:02d}.000Z")
            rec.pop("agentId", None)
            if rec["type"] == "assistant":
                rec["message"]["id"] = f"msg_{s}_{t}"
                rec["requestId"] = f"req_{s}_{t}"
            _pair_tool_ids(rec, calls, f"{s}_{t}")
            rows.append(json.dumps(rec, separators=(",", ":"), ensure_ascii=False))
            parent = me
        text = "\n".join(rows) + "\n"
        (project / f"{sid}.jsonl").write_text(text, encoding="utf-8")
        total += len(text.encode("utf-8"))
    return total


def _pair_tool_ids(rec: dict, calls: dict[str, str], turn: str) -> None:
    """Give a line's tool calls fresh ids and answer each still-open call with the next tool result, so a
    session's calls and results pair as a real session's do (the captured lines are examples, not one session:
    they hold more results than calls). A result with no open call becomes the user's text of the same bytes."""
    content = rec["message"].get("content")
    for k, block in enumerate(content if isinstance(content, list) else []):
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
            fresh = f"toolu_{turn}_{k}"
            calls[fresh] = fresh
            block["id"] = fresh
        elif block.get("type") == "tool_result" and calls:
            block["tool_use_id"] = calls.pop(next(iter(calls)))
        elif block.get("type") == "tool_result":
            inner = block.get("content")
            text = inner if isinstance(inner, str) else json.dumps(inner, ensure_ascii=False)
            content[k] = {"type": "text", "text": text}


_WRAP = ("import resource, subprocess, sys, time\n"
         "t0 = time.perf_counter()\n"
         "done = subprocess.run(sys.argv[1:], capture_output=True, text=True, check=True)\n"
         "sys.stdout.write(done.stdout)\n"
         "sys.stdout.write(''.join('!! ' + x + '\\n' for x in done.stderr.splitlines() if x.startswith('timings: ')))\n"
         "print('@@', time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """(seconds, peak MiB, stdout) of ``cmd``, run under a wrapper process of its own (so the peak is this
    command's, not the largest of every child so far)."""
    done = subprocess.run([sys.executable, "-c", _WRAP, *cmd], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=ROOT, check=True)
    body, _, tail = done.stdout.rpartition("@@ ")
    seconds, peak = tail.split()
    return float(seconds), int(peak) / 1024, body


def median_run(cmd: list[str], env: dict[str, str] | None, repeat: int) -> tuple[float, float, str]:
    """The median time of ``repeat`` runs of ``cmd`` (the first run also warms the page cache), the largest peak,
    and the last run's output."""
    runs = [timed(cmd, env) for _ in range(repeat)]
    seconds = sorted(r[0] for r in runs)[len(runs) // 2]
    return seconds, max(r[1] for r in runs), runs[-1][2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", required=True, help="captured Claude Code lines (a directory of *.jsonl)")
    parser.add_argument("--ccusage", help="the ccusage executable (the reference)")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--scale", type=float, nargs="+", default=[1.0, 4.0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command; the median is shown")
    args = parser.parse_args()
    shapes = templates(Path(args.lines))
    print("| scale | sessions | MB | ccusage s (MiB) | usage s (MiB) | import s (MiB) | usage / ccusage | "
          "import / ccusage | import stages | totals equal |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = []
    for scale in args.scale:
        with tempfile.TemporaryDirectory() as tmp:
            tree = Path(tmp) / "claude"
            sessions = max(1, round(args.sessions * scale))
            size = build(tree, shapes, sessions, args.turns)
            ours_s, ours_mib, report = median_run([sys.executable, "-m", "workbench.cli.main", "usage",
                                                   str(tree / "projects")], None, args.repeat)
            total = next(line for line in report.splitlines() if line.startswith("total "))
            sums = [int(v.replace(",", "")) for v in total.split()[-6:-2]]  # input, output, cache read, write
            ours = dict(zip(("input", "output", "cache_read", "cache_creation"), sums, strict=True))
            imp_s, imp_mib, imp_out = median_run([sys.executable, "-m", "workbench.cli.main", "import",
                                                  str(tree / "projects"), "--out", str(Path(tmp) / "tables"),
                                                  "--force", "--timings"], None, args.repeat)
            stages = next((x.removeprefix("!! timings: ") for x in imp_out.splitlines() if x.startswith("!! ")), "")
            ref = "-"
            ratio_u = ratio_i = "-"
            equal = "-"
            if args.ccusage:
                cc_s, cc_mib, cc_out = median_run([args.ccusage, "claude", "session", "--json", "--offline"],
                                                  {"CLAUDE_CONFIG_DIR": str(tree)}, args.repeat)
                t = json.loads(cc_out)["totals"]
                theirs = {"input": t["inputTokens"], "output": t["outputTokens"], "cache_read": t["cacheReadTokens"],
                          "cache_creation": t["cacheCreationTokens"]}
                ref = f"{cc_s:.2f} ({cc_mib:.0f})"
                ratio_u, ratio_i = f"{ours_s / cc_s:.1f}x", f"{imp_s / cc_s:.1f}x"
                equal = "yes" if theirs == ours else f"no: {theirs} vs {ours}"
            rows.append((size, imp_s, imp_mib))
            print(f"| {scale:g} | {sessions} | {size / 1e6:.0f} | {ref} | {ours_s:.2f} ({ours_mib:.0f}) | "
                  f"{imp_s:.2f} ({imp_mib:.0f}) | {ratio_u} | {ratio_i} | {stages} | {equal} |", flush=True)
    if len(rows) > 1:
        import numpy as np

        size = np.log([r[0] for r in rows])
        time_k, memory_k = (np.polyfit(size, np.log([r[k] for r in rows]), 1)[0] for k in (1, 2))
        print(f"\nexponents against the tree's bytes (slope of logs, as bench_scale.py fits them): import time "
              f"{time_k:.2f}, import peak memory {memory_k:.2f} (1: linear, 0: flat)")


if __name__ == "__main__":
    main()
