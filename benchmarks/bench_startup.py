"""Start-up: `import workbench` and `workbench --help` against a bare interpreter and against importing polars
and numpy (what any table tool pays), median of 7 runs each, with `python -X importtime`'s slowest imports of
`workbench --help`. Prints seconds and ratios.
Run: .venv/bin/python benchmarks/bench_startup.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def seconds(argv: list[str], runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    bare = seconds([sys.executable, "-c", "pass"])
    tables = seconds([sys.executable, "-c", "import numpy, polars"])
    cases = {"import workbench": [sys.executable, "-c", "import workbench"],
             "workbench --help": [str(BIN / "workbench"), "--help"],
             "workbench.cli.main (what --help loads)": [sys.executable, "-c", "import workbench.cli.main"]}
    print(f"bare interpreter {bare:.3f}s; import numpy, polars {tables:.3f}s")
    for name, argv in cases.items():
        t = seconds(argv)
        print(f"{name}: {t:.3f}s (ratio {t / bare:.1f}x a bare interpreter, {t / tables:.2f}x numpy + polars)")
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import workbench.cli.main"],
                         capture_output=True, text=True).stderr.splitlines()
    rows = [(int(line.split("|")[1]), line.split("|")[2].strip()) for line in out if line.startswith("import time:")
            and line.split("|")[1].strip().isdigit()]
    print("slowest imports under workbench.cli.main (cumulative microseconds):")
    for us, name in sorted(rows, reverse=True)[:8]:
        print(f"  {us:>9} {name}")


if __name__ == "__main__":
    main()
