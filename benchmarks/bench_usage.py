"""``workbench usage`` beside ccusage on the same home (issue 62): wall time, CPU time and peak memory, as a ratio
measured in the same run, and whether the totals agree.

The home is built by ``benchmarks/build_home.py`` (the committed example sessions copied with every id remapped).
Each command runs in a child process ``--repeat`` times, the two interleaved (ccusage, workbench, ccusage, ...), so
both see the same machine; the ratio printed is the median of the paired ratios. CPU time and peak memory
(``ru_maxrss``) are the child's, from ``os.wait4``.

  ccusage     ``ccusage claude session --json --offline`` (``CLAUDE_CONFIG_DIR`` set to the home's ``.claude``)
              and ``ccusage codex session --json --offline`` (``CODEX_HOME`` set to its ``.codex``): pass the
              executable as ``--ccusage`` (``npm install ccusage@20.0.24`` puts it in ``node_modules/.bin``); without
              it the project's recorded figures are printed instead, with their date
  workbench   ``workbench usage HOME/.claude/projects --json`` and ``workbench usage HOME/.codex/sessions --json``

Totals compared: input, output, cache-read and cache-write tokens over every session. ``--before REF ...`` adds a
row for each earlier commit's ``workbench usage`` (checked out with ``git worktree`` under ``build/``, run from its
checkout, which the child checks), and compares its output with this tree's byte for byte.

Every command runs once untimed first (the files' pages in memory, Python's bytecode caches written). Python
may write and read its bytecode caches (``__pycache__``), as on a machine where the package is installed:
``PYTHONDONTWRITEBYTECODE`` is removed from the children's environment, where a sandbox may set it, and every run
would then compile the package again (about 60 ms a run, a tenth of the Codex pass). ``--no-bytecode`` keeps it.

Run: ``.venv/bin/python benchmarks/bench_usage.py HOME [--ccusage EXE] [--repeat 5] [--before REF ...]
[--no-bytecode]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKBENCH = ROOT / ".venv" / "bin" / "workbench"
#: an earlier commit's command, run from its checkout (with ``-c`` the working directory comes first on the path)
CLI = ("import os, sys, workbench; from pathlib import Path; "
       "assert Path(workbench.__file__).resolve().is_relative_to(Path(os.environ['BENCH_CODE']).resolve()), "
       "workbench.__file__; from workbench.cli.main import main; raise SystemExit(main(sys.argv[1:]))")

#: issue 62's figures (2026-12-03, homes of real captured lines, two cores): workbench over ccusage, wall time
RECORDED = {"claude": "1.6-1.7x (200 MB and 1 GB)", "codex": "2.3-3.0x"}


def run(cmd: list[str], env: dict[str, str], out: Path, cwd: Path | None = None) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and peak KiB of ``cmd``, its output written to ``out``. The output
    goes to a file, not through this process: a child's peak (``ru_maxrss``) starts at its parent's size when it
    is forked, so this process stays small until every run is timed."""
    start = time.perf_counter()
    with open(out, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status:
        raise SystemExit(f"{' '.join(cmd)} exited {status}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def ccusage_totals(out: bytes) -> tuple[int, int, int, int]:
    t = json.loads(out)["totals"]
    return t["inputTokens"], t["outputTokens"], t["cacheReadTokens"], t["cacheCreationTokens"]


def workbench_totals(out: bytes) -> tuple[int, int, int, int]:
    rows = json.loads(out)
    rows = rows["rows"] if isinstance(rows, dict) else rows
    keys = ("input", "output", "cache_read", "cache_write")
    return tuple(sum(int(r.get(k) or 0) for r in rows) for k in keys)  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("home", type=Path)
    parser.add_argument("--ccusage", help="the ccusage executable (else the recorded figures are printed)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--before", metavar="REF", nargs="*", default=[], help="also run these commits' usage")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="keep PYTHONDONTWRITEBYTECODE if set (every run compiles the package)")
    args = parser.parse_args()
    if args.before:
        from worktrees import checkout

        earlier = {ref: checkout(ref, "usage") for ref in args.before}
    else:
        earlier = {}
    home = args.home.resolve()
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(home / ".claude"), "CODEX_HOME": str(home / ".codex"),
           "NO_COLOR": "1"}
    if not args.no_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    size = sum(f.stat().st_size for f in home.rglob("*.jsonl"))
    print(f"home {home}: {size / 1e6:.0f} MB in {sum(1 for _ in home.rglob('*.jsonl'))} files; "
          f"{args.repeat} paired runs, medians, after one untimed run of each; Python bytecode caches "
          f"{'not written' if 'PYTHONDONTWRITEBYTECODE' in env else 'allowed'}")
    print("| tree | workbench wall s | ccusage wall s | wall ratio | CPU ratio | peak MiB (workbench / ccusage) | "
          "totals |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    rows, outputs = [], Path(tempfile.mkdtemp(prefix="bench-usage-"))
    before: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
    for tree, sub in (("claude", home / ".claude" / "projects"), ("codex", home / ".codex" / "sessions")):
        if not sub.is_dir():
            continue
        mine, theirs = [], []
        for k in range(-1, args.repeat):  # k = -1: the untimed first run of each
            if args.ccusage:
                theirs.append(run([args.ccusage, tree, "session", "--json", "--offline"], env,
                                  outputs / f"{tree}-ccusage-{k}.json"))
            mine.append(run([str(WORKBENCH), "usage", str(sub), "--json"], env, outputs / f"{tree}-workbench-{k}.json"))
            for ref, code in earlier.items():
                before.setdefault((tree, ref), []).append(run(
                    [sys.executable, "-c", CLI, "usage", str(sub), "--json"],
                    {**env, "PYTHONPATH": str(code), "BENCH_CODE": str(code)}, outputs / f"{tree}-{ref}-{k}.json",
                    cwd=code))
        mine, theirs = mine[1:], theirs[1:]  # the untimed first runs left out
        for ref in earlier:
            before[(tree, ref)] = before[(tree, ref)][1:]
        rows.append((tree, mine, theirs))
    for tree, mine, theirs in rows:  # totals read only now: this process grew no larger while runs were timed
        wall = statistics.median(m[0] for m in mine)
        peak = statistics.median(m[2] for m in mine) / 1024
        if not args.ccusage:
            print(f"| {tree} | {wall:.2f} | -- | recorded: {RECORDED[tree]} | -- | {peak:.0f} / -- | -- |")
            continue
        ratio = statistics.median(m[0] / t[0] for m, t in zip(mine, theirs))
        cpu = statistics.median(m[1] / t[1] for m, t in zip(mine, theirs))
        ours = workbench_totals((outputs / f"{tree}-workbench-0.json").read_bytes())
        reference = ccusage_totals((outputs / f"{tree}-ccusage-0.json").read_bytes())
        print(f"| {tree} | {wall:.2f} | {statistics.median(t[0] for t in theirs):.2f} | {ratio:.2f}x | {cpu:.2f}x | "
              f"{peak:.0f} / {statistics.median(t[2] for t in theirs) / 1024:.0f} | "
              f"{'identical' if ours == reference else f'DIFFER: {ours} against {reference}'} |")
        for ref in args.before:
            runs = before[(tree, ref)]
            mine_out = (outputs / f"{tree}-workbench-0.json").read_bytes()
            same = (outputs / f"{tree}-{ref}-0.json").read_bytes() == mine_out
            ratio = statistics.median(m[0] / t[0] for m, t in zip(runs, theirs)) if theirs else float("nan")
            cpu = statistics.median(m[1] / t[1] for m, t in zip(runs, theirs)) if theirs else float("nan")
            print(f"| {tree} ({ref}) | {statistics.median(m[0] for m in runs):.2f} | -- | {ratio:.2f}x | {cpu:.2f}x | "
                  f"{statistics.median(m[2] for m in runs) / 1024:.0f} / -- | "
                  f"{'output identical to this tree' if same else 'OUTPUT DIFFERS from this tree'} |")
    shutil.rmtree(outputs)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
