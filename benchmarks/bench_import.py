"""``workbench import`` of a home's Claude Code tree beside ccusage's usage report on it (issue 62, second item):
wall time, CPU time and peak memory, as ratios measured in the same run.

The home is built by ``benchmarks/build_home.py`` (the committed example sessions copied with every id remapped).
Each command runs in a child process ``--repeat`` times, interleaved (ccusage, this tree, each ``--before`` commit,
ccusage, ...), so all see the same machine; the ratio printed is the median of the paired ratios. CPU time and
peak memory (``ru_maxrss``) are the child's and its workers', from ``os.wait4``.

  ccusage     ``ccusage claude session --json --offline`` (``CLAUDE_CONFIG_DIR`` set to the home's ``.claude``):
              usage only, no tables; pass the executable as ``--ccusage`` (``npm install ccusage@20.0.24``)
  import      ``workbench import HOME/.claude/projects --out DIR --skip-invalid --timings`` (runs, steps and
              compactions written as Parquet; above 64 MB by a worker a core), this tree's code and, with
              ``--before REF ...``, the code of each commit ``REF`` (a ``git worktree`` under ``build/``)

The tables each import wrote are compared file by file (the same rows in the same order, ``DataFrame.equals``),
and the last run's ``--timings`` line of each is printed.

Run: ``.venv/bin/python benchmarks/bench_import.py HOME [--ccusage EXE] [--before REF ...] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from worktrees import checkout

ROOT = Path(__file__).resolve().parents[1]
#: the command each code runs: its own checkout's workbench (``cwd`` and ``PYTHONPATH`` are the checkout; with
#: ``-c``, Python puts the working directory first on the path, so a child run from this tree imported this tree's
#: code whatever ``PYTHONPATH`` said, until 2026-12-04), checked before it runs
CLI = ("import os, sys, workbench; from pathlib import Path; "
       "assert Path(workbench.__file__).resolve().is_relative_to(Path(os.environ['BENCH_CODE']).resolve()), "
       "workbench.__file__; from workbench.cli.main import main; raise SystemExit(main(sys.argv[1:]))")

#: issue 62's figure (2026-12-03, a 1 GB home of real captured lines, two cores): the import over ccusage, wall time
RECORDED = "6.2x wall, 7.4x CPU at 1 GB"


def run(cmd: list[str], env: dict[str, str], err: Path, cwd: Path | None = None) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system, with the workers') and peak MiB of ``cmd`` run in ``cwd``, its
    stderr kept."""
    start = time.perf_counter()
    with open(err, "wb") as fh:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=fh, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status:
        raise SystemExit(f"{' '.join(cmd)} exited {status}: {err.read_text()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024



def main() -> None:
    import polars as pl

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("home", type=Path)
    ap.add_argument("--ccusage", help="the ccusage executable (20.0.24)")
    ap.add_argument("--before", metavar="REF", nargs="*", default=[], help="also run the import of these commits")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    tree = args.home / ".claude" / "projects"
    size = sum(p.stat().st_size for p in tree.rglob("*.jsonl"))
    codes = {"this tree": ROOT, **{ref: checkout(ref, "import") for ref in args.before}}
    times: dict[str, list[tuple[float, float, int]]] = {name: [] for name in ["ccusage", *codes] if
                                                        name != "ccusage" or args.ccusage}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            if args.ccusage:
                env = {**os.environ, "CLAUDE_CONFIG_DIR": str(args.home / ".claude")}
                times["ccusage"].append(run([args.ccusage, "claude", "session", "--json", "--offline"], env,
                                            Path(tmp) / "ccusage.err"))
            for name, code in codes.items():
                out = Path(tmp) / f"out-{len(times[name])}-{name.replace(' ', '-')}"
                env = {**os.environ, "PYTHONPATH": str(code), "BENCH_CODE": str(code)}
                times[name].append(run([sys.executable, "-c", CLI, "import", str(tree.resolve()), "--out", str(out),
                                        "--skip-invalid", "--timings"], env, Path(tmp) / f"{name}.err", cwd=code))
        print(f"`workbench import` of {tree} ({size / 1e6:,.0f} MB), median of {args.repeat} interleaved runs\n")
        print("| command | wall s | CPU s | peak MiB | wall / ccusage | CPU / ccusage |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name, runs in times.items():
            wall, cpu, peak = (statistics.median(r[k] for r in runs) for k in range(3))
            if args.ccusage:
                ratios = [(a[0] / c[0], a[1] / c[1]) for a, c in zip(runs, times["ccusage"], strict=True)]
                wr, cr = (f"{statistics.median(r[k] for r in ratios):.2f}x" for k in range(2))
            else:
                wr = cr = f"(recorded 2026-12-03: {RECORDED})"
            print(f"| {name} | {wall:.1f} | {cpu:.1f} | {peak:,.0f} | {wr} | {cr} |")
        for name in codes:
            lines = (Path(tmp) / f"{name}.err").read_text().splitlines()
            print(f"\n{name}: {next((ln for ln in lines if ln.startswith('timings:')), '(no timings)')}")
        first = Path(tmp) / f"out-{args.repeat - 1}-this-tree"
        for ref in args.before:
            other = Path(tmp) / f"out-{args.repeat - 1}-{ref}"
            same = all(pl.read_parquet(f).equals(pl.read_parquet(other / f.name)) for f in first.glob("*.parquet"))
            names = ", ".join(sorted(f.name for f in first.glob("*.parquet")))
            print(f"\ntables identical to {ref}'s: {same} ({names})")
        for out in Path(tmp).glob("out-*"):
            shutil.rmtree(out)


if __name__ == "__main__":
    main()
