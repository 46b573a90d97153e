"""Simulator speed: episodes per second per policy, and the default dataset end to end.

Reference, measured in the same run: the plain uncompressed episode (``no_compression``),
the cheapest loop through the same agent and environment; each policy prints its cost
as a ratio to it. Then the default dataset (120 tasks x 4 runs x 3 budgets x 6 policies)
with 2 worker processes.
Run: .venv/bin/python benchmarks/bench_simulate.py [--quick]
"""

from __future__ import annotations

import sys
import tempfile
import time

from workbench.sim import DatasetConfig, build
from workbench.sim import POLICIES, Episode, SimConfig
from workbench.sim import make_tasks


def episodes_per_second(policy: str, budget: int, tasks: list, reps: int = 2) -> float:
    t0 = time.perf_counter()
    n = 0
    for i, task in enumerate(tasks):
        for r in range(reps):
            Episode(task, i, r, policy, SimConfig(budget=budget)).run()
            n += 1
    return n / (time.perf_counter() - t0)


def main() -> None:
    quick = "--quick" in sys.argv
    tasks = make_tasks(24 if quick else 60, 0)
    episodes_per_second("no_compression", 48, tasks)  # warm up caches (token counts, encodings)
    ref = episodes_per_second("no_compression", 48, tasks)
    print(f"reference no_compression: {ref:,.0f} episodes/s")
    for budget in (24, 48):
        for policy in POLICIES[1:]:
            eps = episodes_per_second(policy, budget, tasks)
            print(f"budget {budget:3d} {policy:15s} {eps:8,.0f} episodes/s  ({ref / eps:5.1f}x the reference's cost)")
    if not quick:
        cfg = DatasetConfig()
        n = cfg.tasks * cfg.runs * len(cfg.budgets) * len(cfg.policies)
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            build(tmp, cfg, workers=2)
            dt = time.perf_counter() - t0
        print(f"default dataset: {n} episodes in {dt:.1f}s on 2 workers ({n / dt:,.0f} episodes/s)")


if __name__ == "__main__":
    main()
