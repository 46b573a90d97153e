"""Cluster-bootstrap resampling of a cheap metric: ``stats.resamples`` against the plain construction it replaced.

A resample's rows are its units' rows, unit by unit, each row of a unit drawn c times repeated c times. The plain
construction (kept here as the reference) builds them with one ``np.repeat`` a unit and a concatenation; the
workbench builds them with one ``np.repeat`` a resample over the rows in unit order. Both are given the same count
matrix (``resample_counts``, one seed) and the same metric, and their replicates must be equal bit for bit (the
benchmark stops otherwise). Printed: each one's seconds (best of 5) and the ratio reference / workbench, for a mean
and for a precision at a fixed threshold (the kind of metric ``threshold_for``'s interval resamples), at 8, 30 and
200 scenarios of unequal sizes, their rows shuffled.

Run: .venv/bin/python benchmarks/bench_resamples.py
"""

from __future__ import annotations

import time

import numpy as np

from workbench.stats import make_units, resample_counts, resamples


def reference(metric, arrays: list[np.ndarray], clusters: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """The replicates as the plain construction gives them: a repeat per unit, concatenated."""
    units = make_units(clusters)
    counts = resample_counts(units, n_boot, np.random.default_rng(seed))
    members = [np.flatnonzero(units.row_unit == k) for k in range(units.n_units)]
    out = np.empty(n_boot)
    for b in range(n_boot):
        idx = np.concatenate([np.repeat(members[k], int(c)) for k, c in enumerate(counts[b]) if c])
        out[b] = metric(*[a[idx] for a in arrays])
    return out


def precision_at_half(score: np.ndarray, label: np.ndarray) -> float:
    kept = score >= 0.5
    return float(label[kept].mean()) if kept.any() else float("nan")


def best(fn, repeats: int = 5) -> tuple[float, np.ndarray]:
    times, result = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main() -> None:
    n_boot = 2_000
    print("| metric | scenarios | rows | reference s | workbench s | ratio | replicates |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for g in (8, 30, 200):
        rng = np.random.default_rng(g)
        sizes = np.where(rng.random(g) < 0.2, 60, 12)
        clusters = np.repeat(np.arange(g), sizes).astype(str)
        rng.shuffle(clusters)  # rows of a scenario need not be together
        score, label = rng.random(clusters.size), rng.integers(0, 2, clusters.size)
        for name, metric, arrays in (("mean", lambda s: float(np.mean(s)), [score]),
                                     ("precision at 0.5", precision_at_half, [score, label])):
            plain_s, plain = best(lambda: reference(metric, arrays, clusters, n_boot, 7))
            ours_s, (_, ours, _) = best(lambda: resamples(metric, *arrays, clusters=clusters, n_boot=n_boot, seed=7))
            same = np.array_equal(plain, ours, equal_nan=True)
            if not same:
                raise SystemExit(f"{name} at {g} scenarios: the replicates differ")
            print(f"| {name} | {g} | {clusters.size} | {plain_s:.3f} | {ours_s:.3f} | {plain_s / ours_s:.2f}x | "
                  f"equal |")


if __name__ == "__main__":
    main()
