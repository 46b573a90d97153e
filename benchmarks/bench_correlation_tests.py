"""Size of the tests that compare two metrics' correlations with a human score, and coverage of the partial
correlation's intervals, on clustered, non-normal data (issue 60).

Each trial draws G articles (8, 12 or 30) with an unequal number of summaries each (1 to 10, drawn per article:
a 10x spread), four systems with their own offsets, and a *null pair*: two metrics whose partial correlations with
the human score are equal in the population. Rows of one article share an article effect in the human score and
in both metrics, so summaries are not independent. Three generators differ in how the scores depend on the article:

* ``normal``: Gaussian noise, article effects added (the case Williams' test was made for, except the clustering);
* ``heavy``: Student t(3) noise and a log-normal (skewed) human score;
* ``slopes``: each article has its own slope of the metrics on the human score (drawn once per article and shared
  by both metrics), with t(5) noise: how well a metric tracks people varies from article to article.

Reported, per generator and G: the rejection rate at 5% of Williams' two-sided test (summaries as independent), of
FRANK's protocol (one-sided, the higher correlation first: the direction chosen from the data), and of the
article-clustered jackknife t test of :func:`workbench.stats.correlation_difference_ci` (two-sided); the coverage of
the difference's 95% intervals (truth 0) and of the partial correlation's (truth from one draw of 400,000 articles),
each with its Wilson 95% Monte Carlo interval. This is a benchmark, not a test: it prints a table.

    .venv/bin/python benchmarks/bench_correlation_tests.py --trials 2000   # the committed table
    .venv/bin/python benchmarks/bench_correlation_tests.py --quick         # 300 trials, for development
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from workbench.stats import (correlation_difference_ci, partial_correlation, partial_correlation_ci, williams_test)

GENERATORS = ("normal", "heavy", "slopes")
SIZES = (8, 12, 30)
SYSTEMS = np.array([0.0, 0.3, -0.2, 0.5])


def draw(kind: str, g: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """(x1, x2, y, system, article) for ``g`` articles of ``kind``."""
    sizes = rng.integers(1, 11, size=g)
    article = np.repeat(np.arange(g), sizes)
    n = len(article)
    system = rng.integers(0, len(SYSTEMS), size=n)
    u = rng.normal(size=g)[article]  # the article's effect, shared by the human score and both metrics
    if kind == "heavy":
        y = np.exp(0.6 * rng.normal(size=n) + 0.5 * u) + SYSTEMS[system]
        e1, e2 = rng.standard_t(3, size=n), rng.standard_t(3, size=n)
        slope = np.full(n, 0.8)
    elif kind == "slopes":
        y = rng.normal(size=n) + 0.7 * u + SYSTEMS[system]
        e1, e2 = rng.standard_t(5, size=n), rng.standard_t(5, size=n)
        slope = rng.gamma(2.0, 0.4, size=g)[article]  # one slope per article, shared by both metrics
    else:
        y = rng.normal(size=n) + 0.7 * u + SYSTEMS[system]
        e1, e2 = rng.normal(size=n), rng.normal(size=n)
        slope = np.full(n, 0.8)
    a1, a2 = rng.normal(size=g)[article], rng.normal(size=g)[article]
    x1 = slope * y + e1 + 0.5 * a1 + 0.5 * u
    x2 = slope * y + e2 + 0.5 * a2 + 0.5 * u
    return x1, x2, y, system.astype(str), article


def truth(kind: str) -> float:
    """The population partial correlation of x1 with y (equal to x2's), from one large draw."""
    x1, _, y, system, _ = draw(kind, 400_000, np.random.default_rng(12345))
    return partial_correlation(x1, y, system).r


def wilson(k: int, n: int) -> tuple[float, float]:
    z = 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def cell(kind: str, g: int, trials: int, n_boot: int, r_true: float) -> dict[str, list[bool]]:
    rng = np.random.default_rng([g, GENERATORS.index(kind)])
    out: dict[str, list[bool]] = {k: [] for k in (
        "reject/williams two-sided", "reject/FRANK one-sided (data's direction)", "reject/clustered t",
        "cover difference/t", "cover difference/percentile", "cover partial r/percentile",
        "cover partial r/atanh-t")}
    for _ in range(trials):
        x1, x2, y, system, article = draw(kind, g, rng)
        r1, r2 = partial_correlation(x1, y, system).r, partial_correlation(x2, y, system).r
        r12 = partial_correlation(x1, x2, system).r
        if not np.isfinite([r1, r2, r12]).all() or len(y) <= 3:
            continue
        out["reject/williams two-sided"].append(williams_test(r1, r2, r12, len(y))[1] < 0.05)
        hi, lo = max(r1, r2), min(r1, r2)
        out["reject/FRANK one-sided (data's direction)"].append(
            williams_test(hi, lo, r12, len(y), alternative="greater")[1] < 0.05)
        diff = correlation_difference_ci(x1, x2, y, system, article, n_boot=n_boot, seed=rng)
        out["reject/clustered t"].append(bool(diff.p_value < 0.05))
        out["cover difference/t"].append(bool(diff.ci_low <= 0 <= diff.ci_high))
        pct = correlation_difference_ci(x1, x2, y, system, article, n_boot=n_boot, seed=rng,
                                        interval_method="percentile")
        out["cover difference/percentile"].append(bool(pct.ci_low <= 0 <= pct.ci_high))
        for how in ("percentile", "atanh-t"):
            res = partial_correlation_ci(x1, y, system, article, n_boot=n_boot, seed=rng, interval_method=how)
            out[f"cover partial r/{how}"].append(bool(res.ci_low <= r_true <= res.ci_high))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--n-boot", type=int, default=500)
    parser.add_argument("--quick", action="store_true", help="300 trials, 300 resamples")
    args = parser.parse_args()
    trials, n_boot = (300, 300) if args.quick else (args.trials, args.n_boot)
    started = time.perf_counter()
    print(f"{trials} trials a cell, {n_boot} resamples; rejection rate at 5% (nominal 0.05) or coverage of 95% "
          "intervals (nominal 0.95), each with its Wilson 95% Monte Carlo interval\n")
    for kind in GENERATORS:
        r_true = truth(kind)
        results = {g: cell(kind, g, trials, n_boot, r_true) for g in SIZES}
        print(f"generator {kind}: partial r of each metric with the human score {r_true:.4f} (equal: a null pair)")
        print("| statistic | " + " | ".join(f"{g} articles" for g in SIZES) + " |")
        print("| --- |" + " --- |" * len(SIZES))
        for name in results[SIZES[0]]:
            cells = []
            for g in SIZES:
                hits = results[g][name]
                low, high = wilson(sum(hits), len(hits))
                cells.append(f"{sum(hits) / len(hits):.3f} [{low:.3f}, {high:.3f}]")
            print(f"| {name} | " + " | ".join(cells) + " |")
        print()
    print(f"wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
