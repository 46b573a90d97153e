"""Logs 1x, 10x, 30x (and 100x with --100x) the testbed: time and peak memory of every step, and growth exponents.

The 1x log is the default testbed exported as trajectory JSONL (``workbench export``); a k-x log is k copies
with new run ids (``RUN#i``). Each step runs as its own process, as a user runs it, and is measured with
``os.wait4`` (wall time, peak resident memory of that process):

    validate    workbench validate LOG
    import      workbench import LOG --out DIR
    entries     workbench entries DIR
    judge       workbench judge DIR --judge lexical --out DIR/scores.parquet
    sample      workbench sample DIR --n 300 --out DIR/sample.jsonl
    threshold   the threshold-sensitivity notebook on DIR (workbench figures --only, --param DATA=DIR)
    composition the summary-composition notebook (SJC Tables 2, 9, 10) on DIR
    reliability the reliability-and-efficiency notebook (Acc, Pass^k, Steps, Peak, Dependency) on DIR

With ``--directories`` the sizes are k-x copies of the testbed *directory* instead (every table: labels,
attributions, rollouts too; runs, tasks, entries and events renamed per copy), and the steps are judge, sample
and every analysis notebook (failure attribution, FOCUS rollouts, judge calibration and validation, method
comparison, the TRACE verifier, the coding-agent sessions besides the three above), each a process whose peak
includes its kernel's.
The copies repeat the testbed's texts, so the caches of judging and parsing hit more than on a real log.

The growth exponent of a step is the slope of log(time) on log(size) over the sizes run (1.0: linear; below
1.15 counts as linear), and the same for peak memory (below 0.2 counts as flat), also between 10x and 100x
alone. The reference in the same run is the 1x time: the ratio column is time / (k x 1x time). A corrupt line is then written near the end of the
largest log and ``import`` must name it and leave no directory. Measurements accumulate in WORK/results.json
(WORK/results-directories.json; sizes may be run separately; the table covers all), drawn in WORK/results*.png.
Run: .venv/bin/python benchmarks/bench_scale.py [--sizes 1,10,30] [--100x] [--work build/scale] [--skip STEPS]
     [--directories]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parents[1]


def run(argv: list[str], *, cwd: Path = ROOT, env: dict[str, str] | None = None) -> tuple[float, float, int, str]:
    """(seconds, peak GiB, exit code, stderr tail) of one process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - started, usage.ru_maxrss / 2**20, proc.returncode, err[-600:]


def make_logs(work: Path, sizes: list[int]) -> dict[int, Path]:
    base = work / "x1.jsonl"
    if not base.exists():
        from workbench.datasets import ensure_testbed

        ensure_testbed("data/testbed")
        t, _, rc, err = run([str(BIN / "workbench"), "export", "data/testbed", "--out", str(base)])
        assert rc == 0, err
    lines = base.read_bytes().splitlines()
    heads = []
    for line in lines:
        rid = json.loads(line)["run_id"]
        needle = b'"run_id": ' + json.dumps(rid).encode()
        assert needle in line, "the export's run_id key"
        heads.append((needle, rid))
    logs = {1: base}
    for k in sizes:
        if k == 1:
            continue
        path = work / f"x{k}.jsonl"
        logs[k] = path
        if path.exists():
            continue
        with open(path.with_suffix(".tmp"), "wb") as fh:
            for copy in range(k):
                for line, (needle, rid) in zip(lines, heads, strict=True):
                    new = b'"run_id": ' + json.dumps(f"{rid}#{copy}").encode()
                    fh.write(line.replace(needle, new, 1) + b"\n")
        os.replace(path.with_suffix(".tmp"), path)
    return logs


def steps(log: Path, out: Path) -> list[tuple[str, list[str]]]:
    wb = str(BIN / "workbench")
    return [
        ("validate", [wb, "validate", str(log)]),
        ("import", [wb, "import", str(log), "--out", str(out), "--force"]),
        ("entries", [wb, "entries", str(out)]),
        ("judge", [wb, "judge", str(out), "--judge", "lexical", "--out", str(out / "scores.parquet"), "--quiet"]),
        ("sample", [wb, "sample", str(out), "--n", "300", "--out", str(out.parent / f"{out.name}-sample.jsonl")]),
        *[(name, [wb, "figures", "--only", notebook, "--param", f"DATA={out}",
                  "--param", f"FIGURES={out.parent / (out.name + '-figures')}",
                  "--build", str(out.parent / (out.name + "-build"))])
          for name, notebook in NOTEBOOKS.items()],
    ]


#: the analysis notebooks timed (each run on the log's directory, its figures written beside it); the coding-agent
#: notebook (agent_transcripts) reads DATA too; the other two (quickstart, real_logs) read fixed example files
NOTEBOOKS = {"threshold": "threshold_sensitivity", "composition": "summary_composition",
             "reliability": "reliability_efficiency", "attribution": "failure_attribution",
             "rollouts": "focus_rollouts", "calibration": "judge_calibration", "validation": "judge_validation",
             "comparison": "method_comparison", "trace": "trace_verifier", "transcripts": "agent_transcripts"}

#: what a k-x testbed directory renames in each copy: columns holding a run id, and entry / request ids whose
#: first part is the run id (``RUN/bN/eM``, ``RUN/bN``)
RUN_COLUMNS = ("run_id", "parent_run_id", "task_id", "gt_task_id", "span_id")
ENTRY_COLUMNS = ("entry_id", "item_id")


def make_directories(work: Path, sizes: list[int], source: Path = ROOT / "data" / "testbed") -> dict[int, Path]:
    """k-x copies of the testbed directory (every table, labels, attributions and rollouts included), each copy's
    runs, tasks, entries and events renamed ``ID#i`` (scenarios kept: the copies are more replicates of them), so
    every notebook runs on it as on the testbed. Written table by table through lazy scans (``sink_parquet``)."""
    import polars as pl

    dirs = {}
    for k in sizes:
        out = work / f"dir-x{k}"
        dirs[k] = out
        if (out / "runs.parquet").exists():
            continue
        out.mkdir(parents=True, exist_ok=True)
        for table in sorted(source.glob("*.parquet")):
            scan = pl.scan_parquet(table)
            names = scan.collect_schema().names()
            copies = []
            for i in range(k):
                tag = f"#{i}"
                renamed = [pl.col(c) + tag for c in RUN_COLUMNS if c in names]
                renamed += [pl.col(c).str.replace(r"^(.*)(/b\d+/e\d+)$", "${1}" + tag + "${2}") for c in ENTRY_COLUMNS
                            if c in names]
                renamed += [pl.col(c).str.replace(r"^(.*)(/b\d+)$", "${1}" + tag + "${2}")
                            for c in ("request_id", "event_id") if c in names]  # RUN/bN
                copies.append(scan.with_columns(renamed) if k > 1 else scan)
            pl.concat(copies).sink_parquet(out / table.name)
    return dirs


def prepare(work: Path, sizes: list[int], directories: bool) -> dict[int, Path]:
    """The logs (or directories) of every size, written by a child process. A measured step's peak memory is
    ``ru_maxrss``, which Linux carries from the process that forks it: a parent that had just written a 30x
    directory (0.47 GiB) raised every step's floor to that, so this process never reads or writes the data."""
    make = "make_directories" if directories else "make_logs"
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); from pathlib import Path; "
            f"import bench_scale; bench_scale.{make}(Path({str(work)!r}), {sizes!r})")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    if directories:
        return {k: work / f"dir-x{k}" for k in sizes}
    return {k: work / ("x1.jsonl" if k == 1 else f"x{k}.jsonl") for k in [1, *sizes]}


def directory_steps(data: Path) -> list[tuple[str, list[str]]]:
    """The steps that read a workbench directory: judge, sample and every analysis notebook."""
    wb = str(BIN / "workbench")
    return [
        ("judge", [wb, "judge", str(data), "--judge", "lexical", "--out", str(data.parent / f"{data.name}-scores.parquet"),
                   "--quiet"]),
        ("sample", [wb, "sample", str(data), "--n", "300", "--out", str(data.parent / f"{data.name}-sample.jsonl")]),
        *[(name, [wb, "figures", "--only", notebook, "--param", f"DATA={data}",
                  "--param", f"FIGURES={data.parent / (data.name + '-figures')}",
                  "--build", str(data.parent / (data.name + "-build"))])
          for name, notebook in NOTEBOOKS.items()],
    ]


def main(sizes: list[int], work: Path, skip: set[str], corrupt: bool = True, directories: bool = False) -> None:
    work.mkdir(parents=True, exist_ok=True)
    logs = prepare(work, sizes, directories)
    # every measurement is kept in WORK/results.json, so sizes measured in separate runs (100x takes over an
    # hour) share one table and one fit; a step measured again replaces its earlier measurement
    store = work / ("results-directories.json" if directories else "results.json")
    saved = json.loads(store.read_text()) if store.exists() else {}
    results: dict[str, dict[int, tuple[float, float]]] = {
        name: {int(k): (float(v[0]), float(v[1])) for k, v in by_size.items()} for name, by_size in saved.items()}
    print(f"(this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB, the floor of every "
          "step's peak)", flush=True)
    for k in sizes:
        out = work / f"x{k}"
        size = sum(p.stat().st_size for p in (logs[k].glob("*.parquet") if directories else [logs[k]])) / 1e9
        print(f"-- {k}x: {logs[k].name}, {size:.2f} GB", flush=True)
        for name, argv in (directory_steps(logs[k]) if directories else steps(logs[k], out)):
            if name in skip:
                continue
            seconds, gib, rc, err = run(argv)
            status = "" if rc == 0 else f"  FAILED rc={rc}: {err.strip().splitlines()[-1] if err.strip() else ''}"
            print(f"   {name:<10} {seconds:8.1f} s {gib:6.2f} GiB{status}", flush=True)
            results.setdefault(name, {})[k] = (seconds if rc == 0 else float("nan"), gib)
            store.write_text(json.dumps({n: {str(k): v for k, v in sorted(b.items())} for n, b in results.items()},
                                        indent=1))
    sizes = sorted({k for by_size in results.values() for k in by_size})
    print(f"\n(all measurements in {store})")
    print("\n| step | " + " | ".join(f"{k}x" for k in sizes) + " | exponent (time) | exponent (memory) |"
          " memory 10x-100x |")
    print("| --- | " + " | ".join("---" for _ in sizes) + " | --- | --- | --- |")
    for name, by_size in results.items():
        base = by_size.get(1, (float("nan"), 0.0))[0]  # the ratio: time / (k x the 1x time); 1.00 is linear
        cells = [f"{by_size[k][0]:.1f} s, {by_size[k][1]:.2f} GiB ({by_size[k][0] / (k * base):.2f})"
                 if k in by_size else "-" for k in sizes]
        ks = [k for k in sizes if k in by_size and np.isfinite(by_size[k][0])]
        slope = np.polyfit(np.log(ks), np.log([by_size[k][0] for k in ks]), 1)[0] if len(ks) > 1 else float("nan")
        mem = np.polyfit(np.log(ks), np.log([by_size[k][1] for k in ks]), 1)[0] if len(ks) > 1 else float("nan")
        # the flatness test: the exponent of memory between 10x and 100x alone (below 0.2 is flat)
        late = (np.log(by_size[100][1] / by_size[10][1]) / np.log(10) if {10, 100} <= by_size.keys()
                else float("nan"))
        print(f"| {name} | " + " | ".join(cells) + f" | {slope:.2f} | {mem:.2f} | {late:.2f} |")
    plot(results, store.with_suffix(".png"))
    if not corrupt or directories:
        return
    # a corrupt line near the end of the largest log: named, and nothing left behind
    big = logs[max(logs)]
    lines = sum(1 for _ in open(big, "rb"))
    bad = work / "corrupt.jsonl"
    shutil.copyfile(big, bad)
    with open(bad, "r+b") as fh:
        fh.seek(-2, os.SEEK_END)
        fh.write(b"#\n")  # the last line's closing brace: that line is no longer JSON
    out = work / "corrupt-out"
    seconds, gib, rc, err = run([str(BIN / "workbench"), "import", str(bad), "--out", str(out)])
    named = f"{bad}:{lines}:" in err
    left = [p.name for p in work.iterdir() if p.name.startswith((f"{out.name}", f".{out.name}"))]
    print(f"\ncorrupt line {lines:,} of {bad.name}: import exit {rc} in {seconds:.1f} s, {gib:.2f} GiB, "
          f"line named: {named}, left behind: {left or 'nothing'}")
    bad.unlink()


def plot(results: dict[str, dict[int, tuple[float, float]]], path: Path) -> None:
    """Time and peak memory of every step against the log's size, log-log, one line per step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(11, 4.2))
    colours = plt.get_cmap("tab20").colors  # one colour a step (the default cycle repeats after ten)
    for i, (name, by_size) in enumerate(sorted(results.items())):
        ks = sorted(by_size)
        style = {"marker": "os^"[i % 3], "color": colours[(2 * i) % 20 + (i // 10)], "label": name}
        ax_t.plot(ks, [by_size[k][0] for k in ks], **style)
        ax_m.plot(ks, [by_size[k][1] for k in ks], **style)
    for ax, what in ((ax_t, "wall time (s)"), (ax_m, "peak resident memory (GiB)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("size (copies of the testbed)")
        ax.set_ylabel(what)
    ax_m.axhline(2.0, color="grey", linestyle=":", linewidth=1, label="2 GiB (the goal)")
    ax_m.set_ylim(top=max(ax_m.get_ylim()[1], 2.5))  # the goal's line inside the frame, not on its edge
    ax_m.legend(fontsize=7, ncol=2, frameon=False)
    fig.suptitle("Every step at 1x, 10x ... of the testbed: time and memory")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,10,30")
    parser.add_argument("--100x", dest="hundred", action="store_true", help="add the 100x log (about 10 GB)")
    parser.add_argument("--work", default="build/scale")
    parser.add_argument("--skip", default="", help="comma-separated steps to leave out")
    parser.add_argument("--no-corrupt", dest="corrupt", action="store_false", help="skip the corrupt-line import")
    parser.add_argument("--directories", action="store_true", help="k-x copies of the testbed directory (every "
                        "table) instead of logs: judge, sample and every analysis notebook")
    a = parser.parse_args()
    chosen = [int(x) for x in a.sizes.split(",") if x] + ([100] if a.hundred else [])
    main(chosen, Path(a.work), set(filter(None, a.skip.split(","))), a.corrupt, a.directories)
