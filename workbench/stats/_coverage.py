"""How often an interval method covers the truth, at the cluster counts people have (measure, do not assume).

The model behind Table 12's intervals: ``clusters`` task scenarios of ``per_cluster``
entries; an entry is positive with probability ``positive_rate``; its judge score is
``separation * label + scenario effect + noise`` (effect ~ N(0, ``effect_sd``), noise ~
N(0, 1)), so entries of one scenario are correlated and the interval must resample
scenarios. The estimand is the population AUROC over infinitely many scenarios, where almost
every positive-negative pair comes from two different scenarios: the score difference of
such a pair is ``N(separation, 2 (1 + effect_sd^2))``, so the AUROC is
``Phi(separation / sqrt(2 (1 + effect_sd^2)))`` (:func:`population_auroc`; checked against
a large simulation scored by sklearn in the tests).

:func:`interval_coverage` draws ``trials`` seeded samples per cluster count and reports, per
method, the share of intervals that contain the population AUROC, with a Wilson interval
(``statsmodels``) for that share, and the mean width.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
from scipy.stats import norm

from workbench.stats._bootstrap import DEFAULT_N_BOOT, Seed, as_generator, auroc_ci

#: the AUROC interval methods the study compares (``auroc_ci``'s default, ``logit-t``, last)
METHODS = ("percentile", "bca", "t", "logit-t")


def population_auroc(separation: float = 1.0, effect_sd: float = 0.5) -> float:
    """The AUROC over the whole population of scenarios: ``Phi(d / sqrt(2 (1 + sd^2)))``.

    Parameters
    ----------
    separation : float, default 1.0
        Mean score difference of positives and negatives.
    effect_sd : float, default 0.5
        Standard deviation of the scenarios' random effect.

    Returns
    -------
    float
        The population AUROC.
    """
    return float(norm.cdf(separation / np.sqrt(2.0 * (1.0 + effect_sd**2))))


def interval_coverage(clusters: Sequence[int] = (12, 30), *, per_cluster: int = 25, trials: int = 1000,
                      methods: Sequence[str] = METHODS, n_boot: int = DEFAULT_N_BOOT, level: float = 0.95,
                      separation: float = 1.0, effect_sd: float = 0.5, positive_rate: float = 0.4,
                      seed: Seed = 0) -> pl.DataFrame:
    """Coverage of each interval method for the AUROC, by number of clusters.

    One row per (clusters, method): ``coverage`` (share of intervals holding the population
    AUROC), ``coverage_low`` / ``coverage_high`` (95% Wilson interval of that share), ``width``
    (mean interval width), ``trials``. Every method sees the same samples and resamples.

    Parameters
    ----------
    clusters : sequence of int, default (12, 30)
        Numbers of scenarios.
    per_cluster : int, default 25
        Entries per scenario.
    trials : int, default 1000
        Simulated data sets per cell.
    methods : sequence of str, default ("percentile", "bca", "t", "logit-t")
        Interval methods compared.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples.
    level : float, default 0.95
        The nominal coverage.
    separation : float, default 1.0
        Mean score difference of positives and negatives.
    effect_sd : float, default 0.5
        Standard deviation of the scenarios' random effect.
    positive_rate : float, default 0.4
        The share of positives.
    seed : int or numpy.random.Generator, default 0
        Seed of the simulation.

    Returns
    -------
    polars.DataFrame
        One row per (clusters, method) with the columns above.
    """
    from statsmodels.stats.proportion import proportion_confint

    rng = as_generator(seed)
    truth = population_auroc(separation, effect_sd)
    rows = []
    for k in clusters:
        hits = {m: 0 for m in methods}
        width = {m: 0.0 for m in methods}
        done = 0
        groups = np.repeat(np.arange(k), per_cluster)
        for _ in range(trials):
            effect = rng.normal(scale=effect_sd, size=k)
            y = rng.random((k, per_cluster)) < positive_rate
            s = (separation * y + effect[:, None] + rng.normal(size=(k, per_cluster))).ravel()
            if y.all() or not y.any():
                continue
            boot_seed = int(rng.integers(2**31))
            done += 1
            for m in methods:
                r = auroc_ci(s, y.ravel(), groups, n_boot=n_boot, seed=boot_seed, level=level, method=m)
                hits[m] += int(r.ci_low <= truth <= r.ci_high)
                width[m] += r.ci_high - r.ci_low
        for m in methods:
            low, high = proportion_confint(hits[m], done, alpha=0.05, method="wilson")
            rows.append({"clusters": k, "method": m, "coverage": hits[m] / done, "coverage_low": float(low),
                         "coverage_high": float(high), "width": width[m] / done, "trials": done})
    return pl.DataFrame(rows)


def heterogeneous_population_auroc(discrimination: float, offset_sd: float, discrimination_sd: float) -> float:
    """The population AUROC when scenarios differ in offset (``N(0, offset_sd)``) and discrimination
    (``N(discrimination, discrimination_sd)``) and entries have N(0, 1) noise: a positive of one scenario and a
    negative of another differ by ``N(discrimination, 2 offset_sd^2 + discrimination_sd^2 + 2)``.

    Parameters
    ----------
    discrimination : float
        The mean discrimination.
    offset_sd : float
        The standard deviation of the scenario offsets.
    discrimination_sd : float
        The standard deviation of the scenario discriminations.

    Returns
    -------
    float
        ``Phi(discrimination / sqrt(2 offset_sd^2 + discrimination_sd^2 + 2))``.
    """
    return float(norm.cdf(discrimination / np.sqrt(2 * offset_sd**2 + discrimination_sd**2 + 2)))


def heterogeneous_coverage(settings: Sequence[tuple[float, float]] = ((0.6, 0.5), (0.0, 0.5), (0.6, 0.0), (1.0, 0.8)),
                           clusters: Sequence[int] = (12, 30), *, per_cluster: int = 25, discrimination: float = 1.2,
                           positive_rate: float = 0.55, trials: int = 300, level: float = 0.95,
                           seed: Seed = 0) -> pl.DataFrame:
    """Bias and coverage of the default AUROC interval (cluster jackknife t) when scenarios differ in both score
    offset and discrimination, per (``offset_sd``, ``discrimination_sd``) in ``settings`` and cluster count.

    Each scenario draws an offset ~ N(0, offset_sd) and a discrimination ~ N(``discrimination``,
    discrimination_sd); an entry is positive with ``positive_rate`` and scores offset + discrimination *
    label + N(0, 1). The estimand is ``heterogeneous_population_auroc``. One row per setting and cluster
    count: ``truth``, ``bias`` (mean estimate minus truth: the pooled AUROC's within-scenario pairs make it
    O(1 / clusters)), ``coverage`` with its Wilson ``coverage_low`` / ``coverage_high``, ``width``, ``trials``.

    Parameters
    ----------
    settings : sequence of (float, float)
        (offset_sd, discrimination_sd) pairs.
    clusters : sequence of int, default (12, 30)
        Numbers of scenarios.
    per_cluster : int, default 25
        Entries per scenario.
    discrimination : float, default 1.2
        The mean discrimination.
    positive_rate : float, default 0.55
        The share of positives.
    trials : int, default 300
        Simulated data sets per cell.
    level : float, default 0.95
        The nominal coverage.
    seed : int or numpy.random.Generator, default 0
        Seed of the simulation.

    Returns
    -------
    polars.DataFrame
        One row per (setting, clusters) with the columns above.
    """
    from statsmodels.stats.proportion import proportion_confint

    rng = as_generator(seed)
    rows = []
    for offset_sd, discrimination_sd in settings:
        truth = heterogeneous_population_auroc(discrimination, offset_sd, discrimination_sd)
        for k in clusters:
            groups = np.repeat(np.arange(k), per_cluster)
            hits, done, width, total = 0, 0, 0.0, 0.0
            for _ in range(trials):
                offset = rng.normal(0, offset_sd, k)
                slope = rng.normal(discrimination, discrimination_sd, k)
                y = rng.random((k, per_cluster)) < positive_rate
                s = (offset[:, None] + slope[:, None] * y + rng.normal(size=(k, per_cluster))).ravel()
                if y.all() or not y.any():
                    continue
                r = auroc_ci(s, y.ravel(), groups, n_boot=1, level=level, method="t")  # t: no resamples needed
                done += 1
                hits += int(r.ci_low <= truth <= r.ci_high)
                width += r.ci_high - r.ci_low
                total += r.estimate
            low, high = proportion_confint(hits, done, alpha=0.05, method="wilson")
            rows.append({"offset_sd": offset_sd, "discrimination_sd": discrimination_sd, "clusters": k,
                         "truth": truth, "bias": total / done - truth, "coverage": hits / done,
                         "coverage_low": float(low), "coverage_high": float(high), "width": width / done,
                         "trials": done})
    return pl.DataFrame(rows)


__all__ = ["interval_coverage", "population_auroc"]
