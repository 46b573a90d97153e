"""Size and power of the tests that compare two metrics' partial correlations with a human score over articles
(issue 78, item 4): which test to use where the summaries of one article are not independent.

Candidates, each two-sided at 5%:

* ``clustered t``: :func:`workbench.stats.correlation_difference_ci`'s delete-one-article jackknife t with G - 1
  degrees of freedom (the default since issue 60);
* ``article bootstrap``: the same function's percentile interval over article resamples (500), rejecting when it
  leaves out 0;
* ``within-article swap``: the two metrics' standardised scores exchanged article by article (every pattern up to
  10 articles, else 499 drawn), the difference itself the statistic;
* ``studentized swap``: the same exchanges, each pattern's difference divided by its own jackknife standard error
  (a studentized permutation test, Janssen 1997; Chung and Romano 2013), which needs no exchangeability in the
  limit.

Generators: the three of ``bench_correlation_tests.py`` (``normal``, ``heavy``, ``slopes``: null pairs whose
metrics are exchangeable), two null pairs whose metrics are not (``skewed``: one metric's noise a centred
chi-square of the same variance; ``clustered``: one metric's noise mostly shared within the article, same variance),
and the first three with a real difference: the second metric's noise raised until its partial correlation is
0.081 below the first's (the difference of the issue's power figure; the added noise solved on 20,000 articles).

    .venv/bin/python benchmarks/bench_correlation_power.py --trials 1000   # the committed table
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import bench_correlation_tests as null_pairs
from workbench.stats import correlation_difference_ci, partial_correlation

SIZES = (8, 12, 30)
DIFFERENCE = 0.081
EXACT_UP_TO = 10
TESTS = ("clustered t", "article bootstrap", "within-article swap", "studentized swap")


def unequal_pair(kind: str, g: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """A null pair of metrics with equal partial correlations that are not exchangeable (``skewed``, ``clustered``)."""
    sizes = rng.integers(1, 11, size=g)
    article = np.repeat(np.arange(g), sizes)
    n = len(article)
    system = rng.integers(0, len(null_pairs.SYSTEMS), size=n)
    u = rng.normal(size=g)[article]
    y = rng.normal(size=n) + 0.7 * u + null_pairs.SYSTEMS[system]
    a1, a2 = rng.normal(size=g)[article], rng.normal(size=g)[article]
    x1 = 0.8 * y + rng.normal(size=n) + 0.5 * a1 + 0.5 * u
    if kind == "skewed":
        x2 = 0.8 * y + (rng.chisquare(2, size=n) - 2) / 2 + 0.5 * a2 + 0.5 * u
    else:  # the same variance (1.25), four fifths of it per article
        x2 = 0.8 * y + 0.5 * rng.normal(size=n) + a2 + 0.5 * u
    return x1, x2, y, system.astype(str), article


def added_noise(kind: str) -> float:
    """The noise added to the second metric for a partial correlation DIFFERENCE below the first's."""
    rng = np.random.default_rng(5)
    x1, x2, y, system, _ = null_pairs.draw(kind, 20_000, rng)
    e = rng.normal(size=len(x2))
    r1 = partial_correlation(x1, y, system).r
    low, high = 0.0, 5.0
    for _ in range(30):
        mid = (low + high) / 2
        low, high = (mid, high) if r1 - partial_correlation(x2 + mid * e, y, system).r < DIFFERENCE else (low, mid)
    return low


def _residuals(m: np.ndarray, codes: np.ndarray) -> np.ndarray:
    out = m.copy()
    for j in np.unique(codes):
        sel = codes == j
        out[:, sel] -= m[:, sel].mean(axis=1, keepdims=True)
    return out


def _differences(a: np.ndarray, b: np.ndarray, y: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Each row's partial r of a with y minus b's (Pearson, the system's means removed)."""
    ry = _residuals(y[None, :], codes)[0]
    ry = ry - ry.mean()

    def r(m: np.ndarray) -> np.ndarray:
        m = _residuals(m, codes)
        m = m - m.mean(axis=1, keepdims=True)
        return (m @ ry) / np.sqrt((m * m).sum(axis=1) * (ry @ ry))
    return r(a) - r(b)


def swap_p(x1: np.ndarray, x2: np.ndarray, y: np.ndarray, system: np.ndarray, article: np.ndarray,
           rng: np.random.Generator, studentized: bool, n_perm: int = 499) -> float:
    """The two-sided p-value of exchanging the standardised metrics article by article."""
    _, codes = np.unique(system, return_inverse=True)
    _, art = np.unique(article, return_inverse=True)
    g = int(art.max()) + 1
    if g <= EXACT_UP_TO:
        patterns = ((np.arange(2**g)[:, None] >> np.arange(g)) & 1).astype(bool)
    else:
        patterns = np.vstack([np.zeros(g, bool), rng.random((n_perm, g)) < 0.5])
    z1, z2 = (x1 - x1.mean()) / x1.std(), (x2 - x2.mean()) / x2.std()
    swapped = patterns[:, art]
    a, b = np.where(swapped, z2, z1), np.where(swapped, z1, z2)
    stat = _differences(a, b, y, codes)
    if studentized:
        jk = np.array([_differences(a[:, art != k], b[:, art != k], y[art != k], codes[art != k]) for k in range(g)])
        stat = stat / np.sqrt((g - 1) / g * ((jk - jk.mean(axis=0)) ** 2).sum(axis=0))
    return float(np.mean(np.abs(stat) >= abs(stat[0]) - 1e-12))


def cell(kind: str, g: int, noise: float, trials: int) -> dict[str, int]:
    rng = np.random.default_rng([g, len(kind), int(noise * 1000)])
    out = dict.fromkeys(TESTS, 0)
    for _ in range(trials):
        if kind in ("skewed", "clustered"):
            x1, x2, y, system, article = unequal_pair(kind, g, rng)
        else:
            x1, x2, y, system, article = null_pairs.draw(kind, g, rng)
            x2 = x2 + noise * rng.normal(size=len(x2))
        out["clustered t"] += correlation_difference_ci(x1, x2, y, system, article, n_boot=10, seed=rng).p_value < 0.05
        boot = correlation_difference_ci(x1, x2, y, system, article, n_boot=500, seed=rng,
                                         interval_method="percentile")
        out["article bootstrap"] += not boot.ci_low <= 0.0 <= boot.ci_high
        out["within-article swap"] += swap_p(x1, x2, y, system, article, rng, studentized=False) < 0.05
        out["studentized swap"] += swap_p(x1, x2, y, system, article, rng, studentized=True) < 0.05
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=1000)
    args = parser.parse_args()
    started = time.perf_counter()
    rows = [(f"{kind}, null", kind, 0.0) for kind in (*null_pairs.GENERATORS, "skewed", "clustered")]
    rows += [(f"{kind}, difference {DIFFERENCE}", kind, added_noise(kind)) for kind in null_pairs.GENERATORS]
    print(f"Rejection rate at 5% (two-sided), {args.trials} trials a cell, with its Wilson 95% Monte Carlo interval: "
          "the size on a null pair, the power at a difference\n")
    for label, kind, noise in rows:
        results = {g: cell(kind, g, noise, args.trials) for g in SIZES}
        print(f"{label}" + (f" (noise {noise:.3f} added to the second metric)" if noise else ""))
        print("| test | " + " | ".join(f"{g} articles" for g in SIZES) + " |")
        print("| --- |" + " --- |" * len(SIZES))
        for test in TESTS:
            cells = []
            for g in SIZES:
                k = results[g][test]
                low, high = null_pairs.wilson(k, args.trials)
                cells.append(f"{k / args.trials:.3f} [{max(low, 0.0):.3f}, {high:.3f}]")
            print(f"| {test} | " + " | ".join(cells) + " |")
        print(flush=True)
    print(f"wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
