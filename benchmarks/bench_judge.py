"""Lexical judging throughput (entries per second) against the code before the batched retrieval, same machine,
same run, and the Ray executor's scaling.

Rows, each ``workbench judge DATA --judge lexical`` in its own process (wall time, peak memory by ``os.wait4``):

    base            the commit before this work (BASE, checked out with ``git worktree`` under build/)
    base+gc         the same code with the collector's threshold this code uses (``executors.rare_collections``),
                    to show how much of the gain is the collector alone
    now             this tree

Every row's scores table must equal the base's (the benchmark stops otherwise). Then, in one process, retrieval
alone over the distinct compactions of DATA: ``tests/oracles.retrieve_bm25s`` (a bm25s index per compaction, the
reference) against ``retrieval.retrieve_many`` with its token memory cleared, so repeated texts do not count.
With ``--ray``, the Ray executor given 1 and every core and the local executor in one process given one core: each
run's process, and every process it starts (Ray's own, its workers), may use only those cores
(``os.sched_setaffinity``, as ``taskset`` does), and Ray schedules as many tasks at once (``ray.init(num_cpus=N)``,
every worker warmed first). Printed: time ratios against linear, from Ray on one core (how Ray scales with the cores
it is given) and from the local executor (what Ray costs over the plain loop), and the CPU seconds the whole
machine was busy while judging (the driver and Ray's own processes share the cores). Without the pinning, "Ray on one
core" had the driver and Ray's processes on the machine's other cores, and its time moved between 8.5 and 11.5 s.

``--compare REF ...`` adds rows for more commits (each in its own worktree), and checks this tree's evidence table
equals the last one's.

Run: .venv/bin/python benchmarks/bench_judge.py [--data data/testbed] [--base f6cdcdb] [--compare REF ...] [--ray]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from worktrees import checkout

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.oracles: the reference this benchmark measures against
BASE = "f6cdcdb"  # the last commit before the batched retrieval
JUDGE = ("try:\n    from workbench.cli.main import main\nexcept ImportError:\n    from workbench.cli import main\n"
         "raise SystemExit(main({argv!r}))")  # the command line was one module before the package layout
RARE_GC = "import gc; gc.set_threshold(100_000, 10, 10)\n"


def run(code: str, tree: Path) -> tuple[float, float]:
    """(seconds, peak GiB) of ``python -c code`` with ``tree`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=tree, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed in {tree}:\n{err[-2000:]}")
    return time.perf_counter() - started, usage.ru_maxrss / 2**20



def main() -> None:
    import polars as pl

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="data/testbed")
    ap.add_argument("--base", default=BASE)
    ap.add_argument("--ray", action="store_true", help="also measure the Ray executor on 1 and on every core")
    ap.add_argument("--compare", nargs="*", default=[], metavar="REF",
                    help="more commits to run beside (e.g. the one before a change, for its evidence table)")
    args = ap.parse_args()
    data = (ROOT / args.data).resolve()
    out = ROOT / "build" / "bench-judge"
    out.mkdir(parents=True, exist_ok=True)
    entries = pl.scan_parquet(data / "entries.parquet").select(pl.len()).collect().item() \
        if (data / "entries.parquet").exists() else None
    base = checkout(args.base, "judge")
    rows = []
    runs = [("base", base, ""), ("base+gc", base, RARE_GC),
            *((ref, checkout(ref, "judge"), "") for ref in args.compare), ("now", ROOT, "")]
    for name, tree, prefix in runs:
        target = out / f"{name}.parquet"
        seconds, gib = run(prefix + JUDGE.format(argv=["judge", str(data), "--judge", "lexical", "--out",
                                                      str(target)]), tree)
        scores = pl.read_parquet(target)
        n = entries or scores.height
        rows.append((name, seconds, gib, n / seconds, scores))
    reference = rows[0][4]
    if args.compare:  # the evidence tables of the last compared commit and of this tree: the same rows
        before, now = (pl.read_parquet(out / f"{name}.evidence.parquet") for name in (args.compare[-1], "now"))
        print(f"evidence of now against {args.compare[-1]}: {'identical' if now.equals(before) else 'DIFFER'} "
              f"({now.height:,} rows)")
    last = rows[-2][4] if args.compare else None
    for name, seconds, gib, rate, scores in rows:
        # against the base: the entries, scores and reasons (evidence ids were qualified with their request since);
        # against the last compared commit, every column
        same = scores.select("entry_id", "score", "reason").equals(reference.select("entry_id", "score", "reason"))
        whole = "" if last is None else f", every column {'identical' if scores.equals(last) else 'DIFFERENT'} " \
                                        f"to {args.compare[-1]}'s"
        print(f"{name:8s} {seconds:6.1f} s  {gib:4.2f} GiB peak  {rate:9,.0f} entries/s  "
              f"ratio {rate / rows[0][3]:.2f}x base  scores {'identical' if same else 'DIFFER'}{whole}")
        if not same:
            raise SystemExit(f"{name}: scores differ from the base's")
    retrieval_only(data)
    if args.ray:
        ray_scaling(data, out)


def retrieval_only(data: Path) -> None:
    """bm25s per compaction against the batched scorer, on each distinct (entries, outputs) once."""
    from workbench.summaries import span_index
    from tests.oracles import retrieve_bm25s  # the reference: a bm25s index per compaction
    from workbench.summaries import clear_caches, retrieve_many
    from workbench.summaries import parse
    from workbench.datasets import load

    tables = load(data)
    index = span_index(tables["steps"])
    seen, batch = set(), []
    for c in tables["compactions"].sort("run_id", "boundary").iter_rows(named=True):
        outputs = index.outputs(c["run_id"], c.get("span_start"), c.get("span_end"))
        outputs += [c["retained_turn"]] if c.get("retained_turn") else []
        entries = [e.text for e in parse(c["candidate_summary"] or "")]
        key = (tuple(entries), tuple(outputs))
        if key not in seen:
            seen.add(key)
            batch.append((entries, outputs))
    t0 = time.perf_counter()
    reference = [retrieve_bm25s(e, o) for e, o in batch]
    t_ref = time.perf_counter() - t0
    clear_caches()
    t0 = time.perf_counter()
    mine = [ev for i in range(0, len(batch), 256) for ev in retrieve_many(batch[i:i + 256])]
    t_new = time.perf_counter() - t0
    assert mine == reference, "the batched scorer's evidence differs from bm25s's"
    print(f"retrieval alone, {len(batch):,} distinct compactions: bm25s per compaction {t_ref:.2f} s, batched "
          f"{t_new:.2f} s (ratio {t_ref / t_new:.2f}x), evidence identical")


RAY_RUN = """
import sys, time
t0 = time.perf_counter()
from workbench.adapters import read_log
from workbench.judges import judge_directory, make_judge

if "{executor}" == "ray":  # (the local reference runs without Ray, whose idle processes would share its cores)
    import ray

    ray.init(num_cpus={n}, include_dashboard=False, log_to_driver=False)

    @ray.remote
    def warm():  # every worker imports the package before the clock starts (one warm-up task warms one worker)
        from workbench.judges import LexicalJudge, judge_directory  # noqa: F401
        time.sleep(0.5)

    ray.get([warm.remote() for _ in range(4 * {n})])
judge_directory(read_log("workbench/datasets/example_logs/invoice_log.jsonl"), make_judge("lexical"), "{out}/warm.parquet",
                executor="{executor}")
BUSY
t1, b1 = time.perf_counter(), busy()
judge_directory("{data}", make_judge("lexical"), "{out}/ray-{n}.parquet", executor="{executor}")
print(t1 - t0, time.perf_counter() - t1, busy() - b1)
"""

#: the machine's busy CPU seconds so far (every process: the driver, the workers, Ray's own), from /proc/stat
BUSY = """
def busy():
    fields = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")  # all but idle and iowait
import os
"""


def ray_scaling(data: Path, out: Path) -> None:
    """The Ray executor with 1 and with every core, and the local executor in one process as the serial reference:
    start-up (Ray's, and every worker's imports) apart, then judging, with the CPU seconds the whole machine was
    busy meanwhile (what the driver and Ray's own processes add to the judging)."""
    allowed = sorted(os.sched_getaffinity(0))
    cores = len(allowed)
    times = {}
    for n, executor in [(1, "local"), *[(k, "ray") for k in sorted({1, cores})]]:
        code = RAY_RUN.replace("BUSY", BUSY).format(n=n, out=out, data=data, executor=executor)
        given = set(allowed[:n])
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                              preexec_fn=lambda: os.sched_setaffinity(0, given))  # (inherited by what it starts)
        start, judge, busy = (float(x) for x in done.stdout.split()[-3:])
        if executor == "local":
            times[0] = judge
            print(f"local executor (one process, one core): judging {judge:.1f} s, machine busy {busy:.1f} CPU s")
            continue
        times.setdefault(1, judge)
        print(f"ray on {n} core(s): start-up {start:.1f} s, judging {judge:.1f} s, machine busy {busy:.1f} CPU s; "
              f"speed-up {times[1] / judge:.2f}x ({times[1] / judge / n:.0%} of linear), against the local "
              f"executor {times[0] / judge:.2f}x ({times[0] / judge / n:.0%})")


if __name__ == "__main__":
    main()
