"""Threshold sweep speed: 101 taus with scenario-bootstrap bands over 27,000 entries (SJC's scale).

Reference, in the same run: a plain loop that, for each resample, rebuilds the resampled
rows and computes the pruned fraction at every tau with numpy (timed on a slice of the
resamples, scaled). Prints both times and the ratio.
Run: .venv/bin/python benchmarks/bench_sensitivity.py
"""

from __future__ import annotations

import time

import numpy as np
import polars as pl

from workbench.stats import make_units, resample_counts
from workbench.analyses.sjc import sweep


def main(n: int = 27_000, k: int = 90, n_boot: int = 2000, loop_slice: int = 100) -> None:
    rng = np.random.default_rng(0)
    scores = np.clip(rng.beta(0.4, 0.4, n), 0, 1)
    frame = pl.DataFrame({"score": scores, "scenario_id": rng.integers(0, k, n).astype(str)})
    taus = np.linspace(0, 1, 101)
    t0 = time.perf_counter()
    sweep(frame, taus, n_boot=n_boot, seed=0)
    fast = time.perf_counter() - t0
    units = make_units(frame["scenario_id"].to_numpy())
    counts = resample_counts(units, n_boot, np.random.default_rng(0))
    members = [np.flatnonzero(units.row_unit == j) for j in range(units.n_units)]
    t0 = time.perf_counter()
    for b in range(loop_slice):
        idx = np.concatenate([np.repeat(members[j], int(c)) for j, c in enumerate(counts[b]) if c])
        s = scores[idx]
        _ = [(s < t).mean() for t in taus]
    loop = (time.perf_counter() - t0) * n_boot / loop_slice
    print(f"{n} entries, {k} scenarios, 101 taus, {n_boot} resamples: vectorised sweep {fast:.2f}s, "
          f"plain loop {loop:.1f}s (timed on {loop_slice}, scaled) -> {loop / fast:.0f}x faster")


if __name__ == "__main__":
    main()
