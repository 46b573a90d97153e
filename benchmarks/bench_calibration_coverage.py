"""Coverage of ``workbench.stats.debiased_calibration_error``'s intervals (issue 60): the default ``sign-flip`` and
the earlier ``unified`` and ``t`` kept by name, at a calibrated judge (truth 0) and at a miscalibrated one; and
(issue 78) the rejection rate at 5% of ``calibration_test`` (its size at a calibrated judge, its power at ``s^2``)
beside a variant tried and not kept, computed here: each scenario's gaps weighted by Kish's design effect
(``v_g = sqrt(mean a / a_g)``, ``a_g = n_g (1 + (n_g - 1) rho)``, rho about 0), meant to keep a few large
scenarios sharing their labels from carrying the statistic alone.

The scores and scenarios are those of the three generators of ``bench_interval_coverage.py`` (``mix``,
``lognormal``, ``polarised``: unequal scenario sizes, scores whose spread and discrimination change with the
scenario, one-decimal ties in ``polarised``). The labels are drawn again from the scores so that the truth is known
and the rows of a scenario share it: ``P(y = 1 | score) = p(score) + u_g p (1 - p)``, with ``u_g = tanh`` of the
scenario's effect (normal, or t(3) in ``polarised``: symmetric, so the mean over scenarios is ``p(score)``) and
``p(s) = s`` (calibrated: truth 0) or ``p(s) = s^2``, whose truth is the binned squared gap on the scores of 40,000
scenarios drawn the same way.

A fourth generator, ``betabinomial``, follows issue 78's description of an independent audit's held-out one (not
that generator itself, which is not ours): scenario sizes spread tenfold (5-50 rows, log-uniform), skewed and
heavy-tailed scores (logit a scenario mean plus t(3) noise, mostly above 0.5) rounded to 0.1 (many ties), and
beta-binomial labels: a scenario's rows share one quantile u_g of ``Beta(k p, k (1 - p))`` (k = 2: strongly
shared), whose mean is ``p(s)``.

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
from workbench.stats import ABOVE_ZERO, bin_edges, bin_index, calibration_test, debiased_calibration_error

GENERATORS = ("mix", "lognormal", "polarised", "betabinomial")
SIZES = (8, 12, 30)
TRUTHS = ("calibrated", "squared")
METHODS = ("sign-flip", "unified", "t")


def labelled(kind: str, g: int, truth: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores and scenarios of ``kind``'s generator, labels drawn from the scores (``p(s)`` by ``truth``) with a
    shared scenario effect that leaves ``P(y | s)`` at ``p(s)`` over scenarios."""
    if kind == "betabinomial":
        from scipy.stats import beta

        c = np.repeat(np.arange(g), np.round(np.exp(rng.uniform(math.log(5), math.log(50), g))).astype(int))
        score = np.round(expit(rng.normal(1.5, 0.7, g)[c] + 1.2 * rng.standard_t(3, c.size)), 1)
        p = score if truth == "calibrated" else score**2
        share = beta.ppf(rng.random(g)[c], np.maximum(2 * p, 1e-3), np.maximum(2 * (1 - p), 1e-3))
        return score, (rng.random(c.size) < share).astype(np.int8), c
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


def kish_weights(d: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``sqrt(mean a / a_g)``, ``a_g = n_g (1 + (n_g - 1) rho)``, rho the gaps' intraclass correlation about 0."""
    sizes = np.bincount(g).astype(np.float64)
    k, n = len(sizes), float(sizes.sum())
    means = np.bincount(g, weights=d) / sizes
    within = float(np.sum((d - means[g]) ** 2)) / (n - k) if n > k else 0.0
    between = max((float(np.sum(sizes * means**2)) - k * within) / n, 0.0)
    rho = between / (between + within) if between + within > 0 else 0.0
    a = sizes * (1 + (sizes - 1) * rho)
    return np.sqrt(a.mean() / a)


def weighted_p(s: np.ndarray, y: np.ndarray, c: np.ndarray, n_flips: int = 9999) -> float:
    """The sign-flip p-value of the Kish-weighted statistic ``sum_b sum_{g != h} v_g v_h D_gb D_hb / (N n_b)``
    (the tried variant): every pattern up to 13 scenarios, else ``n_flips`` drawn, as ``calibration_test`` does."""
    idx = bin_index(s, bin_edges(s, 10))
    _, b = np.unique(idx, return_inverse=True)
    _, g = np.unique(c, return_inverse=True)
    sums = np.zeros((g.max() + 1, b.max() + 1))
    np.add.at(sums, (g, b), s - y)
    sums *= kish_weights(s - y, g)[:, None]
    weight = 1.0 / (s.size * np.bincount(b))
    own = (sums**2).sum(axis=0) @ weight
    observed = (sums.sum(axis=0) ** 2) @ weight - own
    if len(sums) <= 13:
        rest = (np.arange(2 ** (len(sums) - 1))[:, None] >> np.arange(len(sums) - 1)) & 1
        flips = np.hstack([np.ones((len(rest), 1)), 1.0 - 2.0 * rest])
    else:
        flips = np.random.default_rng(0).choice([-1.0, 1.0], size=(n_flips, len(sums)))
    null = ((flips @ sums) ** 2) @ weight - own
    hits = np.count_nonzero(null >= observed - 1e-12 * max(abs(observed), 1e-300))
    return hits / len(null) if len(sums) <= 13 else (hits + 1) / (len(null) + 1)


ROWS = (*METHODS, "open", "reject/calibration_test", "reject/Kish-weighted (tried)")


def cell(job: tuple[str, int, str, int, float]) -> dict[str, int]:
    kind, g, truth, trials, value = job
    rng = np.random.default_rng([GENERATORS.index(kind), g, TRUTHS.index(truth), 60])
    out = dict.fromkeys(ROWS, 0)
    for _ in range(trials):
        s, y, c = labelled(kind, g, truth, rng)
        for method in METHODS:
            res = debiased_calibration_error(s, y, c, interval_method=method)
            out[method] += bool(res.ci_low <= value <= res.ci_high)
            out["open"] += method == "sign-flip" and res.ci_low == ABOVE_ZERO
        out["reject/calibration_test"] += calibration_test(s, y, c).p_value < 0.05
        out["reject/Kish-weighted (tried)"] += weighted_p(s, y, c) < 0.05
    return out


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(mid - half, 0.0), min(mid + half, 1.0)


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
            for row in ROWS:
                cells = []
                for g in SIZES:
                    k = results[kind, g, truth][row]
                    low, high = wilson(k, args.trials)
                    cells.append(f"{k / args.trials:.3f} [{low:.3f}, {high:.3f}]")
                print(f"| {'open at 0' if row == 'open' else row} | " + " | ".join(cells) + " |")
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
