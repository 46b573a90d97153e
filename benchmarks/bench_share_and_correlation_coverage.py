"""Coverage of two defaults issue 78 added: the failure-attribution accuracy's interval
(:func:`workbench.stats.share_interval`: Wilson's, at Kish's effective n where a question holds several runs) and
the plain correlations' intervals (:func:`workbench.stats.correlation_ci`: Pearson's and Kendall's jackknife t on
Fisher's z over articles, Spearman's article-bootstrap percentiles).

* **Accuracy.** The scenario sizes of ``bench_interval_coverage.py``'s three generators (``mix``, ``lognormal``,
  ``polarised``; 4-60 runs a scenario), a low accuracy shared within a scenario: each scenario's hit rate is
  ``expit(logit(p) + 0.8 e_g)`` with ``e_g`` the generator's scenario effect (normal, or t(3) in ``polarised``),
  at ``p`` = 0.03 and 0.15 (Who&When's exact-step accuracies lie between 0.8 and 17%). The truth, the expected
  share of hits among runs, from 200,000 scenarios.
* **Plain correlations.** ``bench_correlation_tests.py``'s three generators (``normal``, ``heavy``, ``slopes``:
  1-10 summaries an article sharing an article effect), the first metric against the human score, nothing
  controlled. The truths from 100,000 articles (Kendall's from 20,000).

2,000 trials a cell; each coverage with its Wilson 95% Monte Carlo interval.

    .venv/bin/python benchmarks/bench_share_and_correlation_coverage.py --trials 2000 --jobs 2
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy.special import expit, logit

import bench_correlation_tests as articles
import bench_interval_coverage as study
from workbench.stats import correlation_ci, plain_correlation, share_interval

SIZES = (8, 12, 30)
RATES = (0.03, 0.15)
METHODS = ("pearson", "spearman", "kendall")


def hits(kind: str, g: int, rate: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    sc = study.scenarios(kind, g, rng)
    c = np.repeat(np.arange(g), sc.sizes)
    return (rng.random(c.size) < expit(logit(rate) + 0.8 * sc.effect)[c]).astype(np.int8), c


def accuracy_truth(kind: str, rate: float) -> float:
    y, _ = hits(kind, 200_000, rate, np.random.default_rng(12345))
    return float(y.mean())


def correlation_truth(kind: str, method: str) -> float:
    x1, _, y, _, _ = articles.draw(kind, 20_000 if method == "kendall" else 100_000, np.random.default_rng(12345))
    return plain_correlation(x1, y, method).r


def accuracy_cell(job: tuple[str, int, float, int, float]) -> int:
    kind, g, rate, trials, truth = job
    rng = np.random.default_rng([study.GENERATORS.index(kind), g, int(rate * 100), 78])
    covered = 0
    for _ in range(trials):
        res = share_interval(*hits(kind, g, rate, rng))
        covered += bool(res.ci_low <= truth <= res.ci_high)
    return covered


def correlation_cell(job: tuple[str, int, int, dict[str, float]]) -> dict[str, int]:
    kind, g, trials, truth = job
    rng = np.random.default_rng([articles.GENERATORS.index(kind), g, 78])
    covered = dict.fromkeys(METHODS, 0)
    for _ in range(trials):
        x1, _, y, _, article = articles.draw(kind, g, rng)
        for method in METHODS:
            res = correlation_ci(x1, y, article, method=method, n_boot=1000, seed=rng)
            covered[method] += bool(res.ci_low <= truth[method] <= res.ci_high)
    return covered


def cells(k: dict[int, int], trials: int) -> str:
    out = []
    for g in SIZES:
        low, high = articles.wilson(k[g], trials)
        out.append(f"{k[g] / trials:.3f} [{max(low, 0.0):.3f}, {min(high, 1.0):.3f}]")
    return " | ".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--part", choices=("both", "accuracy", "correlations"), default="both")
    args = parser.parse_args()
    started = time.perf_counter()
    acc_truth = {(k, r): accuracy_truth(k, r) for k in study.GENERATORS for r in RATES}
    cor_truth = {k: {m: correlation_truth(k, m) for m in METHODS} for k in articles.GENERATORS} \
        if args.part != "accuracy" else {}
    acc_jobs = [(k, g, r, args.trials, acc_truth[k, r]) for k in study.GENERATORS for r in RATES for g in SIZES
                if args.part != "correlations"]
    cor_jobs = [(k, g, args.trials, cor_truth[k]) for k in cor_truth for g in SIZES]
    with ProcessPoolExecutor(args.jobs) as pool:
        acc = dict(zip([j[:3] for j in acc_jobs], pool.map(accuracy_cell, acc_jobs), strict=True))
        cor = dict(zip([j[:2] for j in cor_jobs], pool.map(correlation_cell, cor_jobs), strict=True))
    print(f"Coverage of 95% intervals, {args.trials} trials a cell (Wilson 95% Monte Carlo interval)\n")
    if not acc:
        print("(failure-attribution accuracy not run: --part correlations)")
    print("Failure-attribution accuracy (share_interval)" if acc else "")
    print("| generator | true accuracy | " + " | ".join(f"{g} scenarios" for g in SIZES) + " |")
    print("| --- | --- |" + " --- |" * len(SIZES))
    for kind in study.GENERATORS if acc else ():
        for rate in RATES:
            print(f"| {kind} | {acc_truth[kind, rate]:.4f} | "
                  + cells({g: acc[kind, g, rate] for g in SIZES}, args.trials) + " |")
    print("\nPlain correlations with the human score (correlation_ci, article-clustered)")
    print("| generator | correlation (truth) | " + " | ".join(f"{g} articles" for g in SIZES) + " |")
    print("| --- | --- |" + " --- |" * len(SIZES))
    for kind in cor_truth:
        for method in METHODS:
            print(f"| {kind} | {method} ({cor_truth[kind][method]:.4f}) | "
                  + cells({g: cor[kind, g][method] for g in SIZES}, args.trials) + " |")
    print(f"\nwall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
