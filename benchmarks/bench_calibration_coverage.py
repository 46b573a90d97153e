"""Coverage of ``workbench.stats.debiased_calibration_error``'s intervals (issue 60): the default ``sign-flip`` and
the earlier ``unified`` and ``t`` kept by name, at a calibrated judge (truth 0) and at a miscalibrated one.

The scores and scenarios are those of the three generators of ``bench_interval_coverage.py`` (``mix``,
``lognormal``, ``polarised``: unequal scenario sizes, scores whose spread and discrimination change with the
scenario, one-decimal ties in ``polarised``). The labels are drawn again from the scores so that the truth is known
and the rows of a scenario share it: ``P(y = 1 | score) = p(score) + u_g p (1 - p)``, with ``u_g = tanh`` of the
scenario's effect (normal, or t(3) in ``polarised``: symmetric, so the mean over scenarios is ``p(score)``) and
``p(s) = s`` (calibrated: truth 0) or ``p(s) = s^2``, whose truth is the binned squared gap on the scores of 40,000
scenarios drawn the same way.

Reported per cell: coverage with a Wilson 95% Monte Carlo interval, and the share of samples whose interval is open
at 0 (calibration rejected, no positive value rejected). Acceptance (issue 60): the Wilson interval overlaps 93-97%.

Run: ``.venv/bin/python benchmarks/bench_calibration_coverage.py [--trials 2000] [--jobs 2]``.
"""

from __future__ import annotations

import argparse
import math
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy.special import expit

import bench_interval_coverage as study
from workbench.stats import ABOVE_ZERO, bin_edges, bin_index, debiased_calibration_error

GENERATORS = ("mix", "lognormal", "polarised")
SIZES = (8, 12, 30)
TRUTHS = ("calibrated", "squared")
METHODS = ("sign-flip", "unified", "t")


def labelled(kind: str, g: int, truth: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores and scenarios of ``kind``'s generator, labels drawn from the scores (``p(s)`` by ``truth``) with a
    shared scenario effect that leaves ``P(y | s)`` at ``p(s)`` over scenarios."""
    sc = study.scenarios(kind, g, rng)
    c = np.repeat(np.arange(g), sc.sizes)
    base = rng.random(c.size) < expit(sc.base[c])
    score = expit(sc.offset[c] + sc.disc[c] * base + rng.normal(0, 1, c.size))
    if kind == "polarised":
        score = np.round(score, 1)
    p = score if truth == "calibrated" else score**2
    p = p + np.tanh(sc.effect[c]) * p * (1 - p)
    return score, (rng.random(c.size) < p).astype(np.int8), c


def true_error(kind: str, truth: str, bins: int = 10) -> float:
    """The population's binned squared gap between mean score and ``P(y = 1)``, on 40,000 scenarios' scores."""
    if truth == "calibrated":
        return 0.0
    score, _, _ = labelled(kind, 40_000, truth, np.random.default_rng(12345))
    idx = bin_index(score, bin_edges(score, bins))
    return float(sum(np.mean(idx == b) * (score[idx == b].mean() - (score[idx == b] ** 2).mean()) ** 2
                     for b in np.unique(idx)))


def cell(job: tuple[str, int, str, int, float]) -> dict[str, int]:
    kind, g, truth, trials, value = job
    rng = np.random.default_rng([GENERATORS.index(kind), g, TRUTHS.index(truth), 60])
    out = dict.fromkeys([*METHODS, "open"], 0)
    for _ in range(trials):
        s, y, c = labelled(kind, g, truth, rng)
        for method in METHODS:
            res = debiased_calibration_error(s, y, c, interval_method=method)
            out[method] += bool(res.ci_low <= value <= res.ci_high)
            out["open"] += method == "sign-flip" and res.ci_low == ABOVE_ZERO
    return out


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return mid - half, mid + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=2000, help="samples per cell")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    start = time.perf_counter()
    values = {(k, t): true_error(k, t) for k in GENERATORS for t in TRUTHS}
    jobs = [(k, g, t, args.trials, values[k, t]) for k in GENERATORS for t in TRUTHS for g in SIZES]
    with ProcessPoolExecutor(args.jobs) as pool:
        results = dict(zip([j[:3] for j in jobs], pool.map(cell, jobs), strict=True))
    print(f"Coverage of 95% intervals of the debiased squared calibration error ({args.trials} samples a cell; "
          "Wilson 95% Monte Carlo interval); 'open at 0': the default's share of samples with the interval (0, high].")
    for kind in GENERATORS:
        for truth in TRUTHS:
            print(f"\ngenerator {kind}, {truth} (truth {values[kind, truth]:.5f})")
            print("| interval | " + " | ".join(f"{g} scenarios" for g in SIZES) + " |")
            print("| --- |" + " --- |" * len(SIZES))
            for row in (*METHODS, "open"):
                cells = []
                for g in SIZES:
                    k = results[kind, g, truth][row]
                    low, high = wilson(k, args.trials)
                    cells.append(f"{k / args.trials:.3f} [{low:.3f}, {high:.3f}]")
                print(f"| {'open at 0' if row == 'open' else row} | " + " | ".join(cells) + " |")
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
