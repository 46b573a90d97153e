"""Coverage of the threshold rows of ``workbench.stats._calibration.threshold_for`` for the true precision of the tau it
reports (issue 42): the in-sample ``precision``, ``precision_at_tau_oof`` (the reported tau's precision with the
optimism of choosing it removed) and ``precision_oof`` (the rule "choose tau on the other scenarios", which
estimates another quantity).

The generator is written here: positives' scores Beta(5, 2), negatives' Beta(2, 4), each scenario's prevalence
U(0.5, 0.8) (so the population precision of any tau is known in closed form, ``0.65 S_pos / (0.65 S_pos +
0.35 S_neg)``); scenario sizes equal (25) or unequal (a fifth of them 100, the rest 15). Target precision 0.85.
Prints each row's coverage with a Wilson 95% Monte Carlo interval, and how often the reported tau's true precision
falls short of the target. Run: ``.venv/bin/python benchmarks/bench_threshold_coverage.py [--trials 1000]``.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np
from scipy import stats

ROWS = ("precision", "precision_at_tau_oof", "precision_oof")


def cell(args: tuple[int, bool, int]) -> dict[str, float]:
    from workbench.stats import threshold_for

    g, unequal, trials = args
    pos, neg = stats.beta(5, 2), stats.beta(2, 4)
    rng = np.random.default_rng(1000 * g + unequal)
    hits = dict.fromkeys(ROWS, 0)
    below = 0
    for i in range(trials):
        sizes = np.where(rng.random(g) < 0.2, 100, 15) if unequal else np.full(g, 25)
        y = np.concatenate([rng.random(n) < p for n, p in zip(sizes, rng.uniform(0.5, 0.8, g))]).astype(int)
        s = np.where(y == 1, pos.rvs(y.size, random_state=rng), neg.rvs(y.size, random_state=rng))
        got = threshold_for(s, y, np.repeat(np.arange(g), sizes), "precision", 0.85, n_boot=50, seed=i)
        row = {r["statistic"]: r for r in got.iter_rows(named=True)}
        t = row["tau"]["estimate"]
        truth = 0.65 * pos.sf(t) / (0.65 * pos.sf(t) + 0.35 * neg.sf(t))
        for k in ROWS:
            hits[k] += row[k]["ci_low"] <= truth <= row[k]["ci_high"]
        below += truth < 0.85
    return {**{k: v / trials for k, v in hits.items()}, "below": below / trials}


def main() -> None:
    from statsmodels.stats.proportion import proportion_confint

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    start = time.perf_counter()
    jobs = [(g, unequal, args.trials) for unequal in (False, True) for g in (8, 12, 30)]
    with ProcessPoolExecutor(args.jobs) as pool:
        results = dict(zip([(g, u) for g, u, _ in jobs], pool.map(cell, jobs), strict=True))
    print(f"Coverage of the reported tau's true precision ({args.trials} trials a cell, target 0.85; Wilson 95%)")
    for unequal in (False, True):
        print(f"\nscenario sizes {'unequal (a fifth 100, the rest 15)' if unequal else 'equal (25)'}")
        print("| row | 8 scenarios | 12 scenarios | 30 scenarios |")
        print("| --- | --- | --- | --- |")
        for k in (*ROWS, "below"):
            cells = []
            for g in (8, 12, 30):
                v = results[(g, unequal)][k]
                lo, hi = proportion_confint(round(v * args.trials), args.trials, alpha=0.05, method="wilson")
                cells.append(f"{v:.3f} [{lo:.3f}, {hi:.3f}]")
            name = "tau's precision below the target" if k == "below" else k
            print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
