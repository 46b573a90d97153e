"""AUROC bootstrap speed: the vectorised ``auroc_ci`` against a loop of sklearn's ``roc_auc_score``.

Both use the same cluster resamples (the loop rebuilds each resample's rows from the same
count matrix). The loop is timed on a slice of the resamples and scaled to all of them
(it is linear in the number of resamples); the ratio printed is loop time / vectorised
time. Scores are continuous (every real judge's) and, as a second row, rounded to two decimals
(about 140 distinct values). ``--large`` adds 1,000,000 entries in 10,000 scenarios, timed with
its peak memory (no loop: it would take hours).
Run: .venv/bin/python benchmarks/bench_bootstrap.py [--large]
"""

from __future__ import annotations

import resource
import sys
import time

import numpy as np
from sklearn.metrics import roc_auc_score

from workbench.stats import auroc_ci, make_units, resample_counts


def case(n: int, k: int, n_boot: int = 2_000, loop_slice: int = 500, *, rounded: bool = False) -> None:
    rng = np.random.default_rng(0)
    clusters = rng.integers(0, k, n)
    labels = rng.random(n) < 0.5
    scores = rng.random(n) + 0.4 * labels
    if rounded:
        scores = np.round(scores, 2)
    auroc_ci(scores, labels, clusters, n_boot=100)  # warm up
    t0 = time.perf_counter()
    res = auroc_ci(scores, labels, clusters, n_boot=n_boot, seed=0)
    vec = time.perf_counter() - t0
    units = make_units(clusters)
    counts = resample_counts(units, n_boot, np.random.default_rng(0))
    members = [np.flatnonzero(units.row_unit == j) for j in range(units.n_units)]
    m = min(loop_slice, n_boot)
    t0 = time.perf_counter()
    for b in range(m):
        idx = np.concatenate([np.repeat(members[j], int(c)) for j, c in enumerate(counts[b]) if c])
        if labels[idx].any() and not labels[idx].all():
            roc_auc_score(labels[idx], scores[idx])
    loop = (time.perf_counter() - t0) * n_boot / m
    kind = "rounded" if rounded else "continuous"
    print(f"n={n:6d} clusters={k:4d} {kind:10s} resamples={n_boot}: vectorised {vec:.3f}s, sklearn loop {loop:.1f}s "
          f"(timed on {m}, scaled) -> {loop / vec:.0f}x faster; AUROC {res.estimate:.3f} [{res.ci_low:.3f}, {res.ci_high:.3f}]")


def large(n: int = 1_000_000, k: int = 10_000, n_boot: int = 2_000) -> None:
    rng = np.random.default_rng(0)
    clusters = rng.integers(0, k, n)
    labels = rng.random(n) < 0.5
    scores = rng.random(n) + 0.4 * labels
    t0 = time.perf_counter()
    res = auroc_ci(scores, labels, clusters, n_boot=n_boot, seed=0)
    took = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux -> GiB
    print(f"n={n} clusters={k} continuous resamples={n_boot}: {took:.1f}s, peak memory of the process "
          f"{peak:.2f} GiB; AUROC {res.estimate:.3f} [{res.ci_low:.3f}, {res.ci_high:.3f}]")


if __name__ == "__main__":
    case(300, 30)
    case(300, 30, rounded=True)
    case(20_000, 600, loop_slice=100)
    case(20_000, 600, loop_slice=100, rounded=True)
    if "--large" in sys.argv:
        large()
