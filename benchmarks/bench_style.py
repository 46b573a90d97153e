"""A notebook's style in its setup cell (issue 82): ``plots.use_style("gallery")`` in a fresh process, against the
seaborn ``set_theme`` it used to call and against importing matplotlib's pyplot alone (the floor), wall and CPU.

Each command runs in its own process ``--repeat`` times, interleaved, after one untimed run of each; medians, and
the ratio of each to the seaborn reference paired run by run.

Run: ``.venv/bin/python benchmarks/bench_style.py [--repeat 7]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "use_style (this tree)": "from workbench import plots; plots.use_style('gallery')",
    "seaborn set_theme (the reference)": ("import matplotlib.pyplot; import seaborn as sns; "
                                          "sns.set_theme(context='paper', style='whitegrid', palette='colorblind', "
                                          "font_scale=1.2)"),
    "import matplotlib.pyplot (the floor)": "import matplotlib.pyplot",
}


def run(code: str) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of ``python -c code`` in a fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if status:
        raise SystemExit(f"{code!r} exited {status}")
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in COMMANDS}
    for k in range(-1, args.repeat):
        for name, code in COMMANDS.items():
            measured = run(code)
            if k >= 0:
                times[name].append(measured)
    ref = times["seaborn set_theme (the reference)"]
    print(f"{args.repeat} interleaved runs each, medians; ratios paired against seaborn's set_theme")
    print("| command | wall s | CPU s | wall / reference | CPU / reference |")
    print("| --- | --- | --- | --- | --- |")
    for name, runs in times.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        rw = statistics.median(w / r[0] for (w, _), r in zip(runs, ref))
        rc = statistics.median(c / r[1] for (_, c), r in zip(runs, ref))
        print(f"| {name} | {wall:.2f} | {cpu:.2f} | {rw:.2f}x | {rc:.2f}x |")


if __name__ == "__main__":
    main()
