"""One bootstrap engine for every confidence interval in the workbench.

Resampling is over *clusters* (task scenarios, SJC Appendix G: "95% bootstrap confidence
intervals over task scenarios"), with replacement, optionally within strata: each
stratum's clusters are resampled to the stratum's own count, so a stratum's share stays
fixed (for example strata = the binary label, with clusters = (scenario, label) units, keeps
the label ratio -- the case rliable's issue #32 asks for). A cluster that spans several
strata is split into one unit per stratum.

Every resample is a vector of cluster counts drawn from one seeded ``np.random.Generator``
(``multinomial``), so a metric computed with weights sees exactly the rows a loop over
resampled indices would see. :func:`bootstrap` takes any metric callable; :func:`auroc_ci`
is the vectorised path for AUROC: with cluster count vectors ``w_b`` and the matrix
``U[c, d]`` of Mann-Whitney pair counts between the positives of cluster ``c`` and the
negatives of cluster ``d`` (ties count one half), the resampled AUROC is
``w_b^T U w_b / ((w_b . pos) (w_b . neg))``, one matrix product for all resamples.

Resamples with only one class (or where the metric is undefined) are *degenerate*: they
are excluded from the interval and counted in ``n_degenerate``. Every interval of the
workbench goes through :func:`interval`: percentile intervals, or BCa (Efron 1987; bias
correction from the resamples, acceleration from the cluster jackknife) when
``method="bca"``. Every result reports the columns of ``INTERVAL_COLUMNS``
(``estimate, ci_low, ci_high, n, n_boot, level, method``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

ArrayLike = npt.ArrayLike

#: a seed: an integer, or a generator that the function draws from (and advances)
Seed = int | np.random.Generator

#: the interval methods :func:`interval` knows (``cr2``, for a mean, is :func:`cr2_mean`'s)
INTERVAL_METHODS = ("percentile", "bca", "t", "logit-t", "atanh-t", "cr2")



def _logit(v: Any) -> Any:
    q = np.clip(v, 1e-9, 1 - 1e-9)
    return np.log(q / (1 - q))


def _expit(v: Any) -> Any:
    return 1 / (1 + np.exp(-v))


def _atanh(v: Any) -> Any:
    return np.arctanh(np.clip(v, -1 + 1e-9, 1 - 1e-9))


#: the scale a transformed jackknife t interval is built on, and the way back
_SCALES: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "logit-t": (_logit, _expit), "atanh-t": (_atanh, np.tanh)}

#: bootstrap resamples of every interval function unless it is told otherwise (one default for all, so two
#: analyses run with their defaults are comparable)
DEFAULT_N_BOOT = 2000

#: the columns every interval is reported with, in this order: ``n`` the rows used, ``n_missing`` the rows left out
#: for a missing value (a score or label), ``reason`` why the bounds are NaN or zero-width (else null)
INTERVAL_COLUMNS = ("estimate", "ci_low", "ci_high", "n", "n_boot", "level", "method", "n_missing", "reason")
INTERVAL_SCHEMA: dict[str, pl.DataType] = {
    "estimate": pl.Float64(), "ci_low": pl.Float64(), "ci_high": pl.Float64(), "n": pl.Int64(),
    "n_boot": pl.Int64(), "level": pl.Float64(), "method": pl.Utf8(), "n_missing": pl.Int64(), "reason": pl.Utf8()}

#: the reason of an interval over fewer than two scenarios (its bounds are NaN: one scenario says nothing about
#: how another would come out)
ONE_SCENARIO = "fewer than two scenarios: no interval over scenarios"
#: the reason of a zero-width interval (every resample, or every leave-one-out estimate, gave the same value)
ZERO_WIDTH = ("zero width: every resample gives the same value (perfect separation, all scores tied, or every "
              "label alike?): no spread to build an interval from")
#: the reason of a row with an interval but no estimate: the interval is dropped (:meth:`BootstrapResult.row`)
NO_ESTIMATE = "no estimate, so no interval"
#: a zero-width interval stands only on at least this many rows ...
ZERO_WIDTH_MIN_ROWS = 20
#: ... and this many scenarios (statistics round 5, decision 2)
ZERO_WIDTH_MIN_SCENARIOS = 5
#: the reason of an interval from few scenarios (the coverage study in benchmarks/ measured the level falling short)
FEW_SCENARIOS = "few scenarios: the interval may fall short of its level"


def jackknife_se_of(leave_one_out: ArrayLike) -> float:
    """The jackknife standard error of G leave-one-cluster-out estimates: ``sqrt((G - 1) / G * sum_g (jk_g -
    mean jk)^2)`` (NaN for fewer than two); the one formula every ``"t"`` interval and p value uses.

    Parameters
    ----------
    leave_one_out : array-like
        The G estimates, each without one cluster.

    Returns
    -------
    float
        The standard error.
    """
    jk = np.asarray(leave_one_out, dtype=np.float64)
    g = len(jk)
    if g < 2:
        return float("nan")
    return math.sqrt((g - 1) / g * float(np.sum((jk - jk.mean()) ** 2)))


def binary_labels(labels: ArrayLike, what: str = "labels") -> np.ndarray:
    """Binary labels as 1.0 / 0.0, a missing one (None, NaN) as NaN for :func:`complete_rows` to leave out and count.

    Accepted: booleans, and the numbers 0 and 1 (also as 0.0 / 1.0). Anything else (a 2, a text label) is a
    ``ValueError`` naming the value: a label outside the two classes is never binarised silently.

    Parameters
    ----------
    labels : array-like
        The labels.
    what : str, default "labels"
        The caller's name, for the error.

    Returns
    -------
    numpy.ndarray
        Float labels: 1.0, 0.0 or NaN (missing).
    """
    arr = np.asarray(labels)
    if arr.dtype.kind == "b":
        return arr.astype(np.float64)
    if arr.dtype.kind in "iuf":
        out = arr.astype(np.float64)
    else:
        out = np.array([np.nan if v is None or (isinstance(v, float) and math.isnan(v)) else
                        (float(v) if isinstance(v, (bool, int, float, np.bool_, np.integer, np.floating))
                         else math.inf) for v in arr.ravel()], dtype=np.float64)
    bad = ~np.isnan(out) & (out != 0.0) & (out != 1.0)
    if bad.any():
        first = arr.ravel()[int(np.flatnonzero(bad)[0])]
        first = first.item() if isinstance(first, np.generic) else first  # 2, not np.int64(2)
        raise ValueError(f"{what}: expected binary labels (booleans or 0/1; a missing one is None or NaN), got "
                         f"{first!r} ({int(bad.sum())} such value(s))")
    return out


def missing_mask(values: np.ndarray) -> np.ndarray:
    """Where ``values`` misses a value: NaN in a float array, None or NaN in an object array; nothing in text,
    integers or booleans. Elementwise in numpy, no Python loop (a bootstrap may call it once per resample).

    Parameters
    ----------
    values : numpy.ndarray
        One array.

    Returns
    -------
    numpy.ndarray
        A boolean mask, True where a value is missing.
    """
    if values.dtype.kind == "f":
        return np.isnan(values)
    if values.dtype.kind == "O":
        with np.errstate(invalid="ignore"):
            return np.asarray((values == None) | (values != values), dtype=bool)  # noqa: E711 - elementwise
    return np.zeros(values.shape, dtype=bool)


def complete_rows(*arrays: ArrayLike, names: Sequence[str] = ()) -> tuple[list[np.ndarray], int]:
    """The rows of ``arrays`` where none is missing (NaN, or None in an object array), and how many were left out:
    the workbench's one rule for missing scores and labels (every statistic drops them, counts them in
    ``n_missing``, and raises only when nothing remains).

    Parameters
    ----------
    *arrays : array-like
        Row-aligned arrays (scores, labels, ...); clusters need not be passed.
    names : sequence of str, optional
        The arrays' names, for the error when nothing remains.

    Returns
    -------
    tuple of (list of numpy.ndarray, int)
        The arrays restricted to complete rows, and the number of rows dropped.
    """
    arrs = [np.asarray(a) for a in arrays]
    n = len(arrs[0]) if arrs else 0
    if any(len(a) != n for a in arrs):
        raise ValueError(f"{' and '.join(names) or 'arrays'} differ in length ({', '.join(str(len(a)) for a in arrs)})")
    keep = np.ones(n, dtype=bool)
    for a in arrs:
        keep &= ~missing_mask(a)
    dropped = int(n - keep.sum())
    if n and not keep.any():
        raise ValueError(f"every one of the {n} rows misses a value ({' or '.join(names) or 'a value'}): nothing "
                         "to compute on")
    return ([a[keep] for a in arrs] if dropped else arrs), dropped


def interval_reason(ci_low: float, ci_high: float, n_clusters: int | None, *, few: int = 0) -> str | None:
    """Why an interval's bounds are NaN or zero-width, or (``few``: the scenario count below which the coverage
    study found the level falling short) that it is built on few scenarios; None when there is nothing to say.

    Parameters
    ----------
    ci_low, ci_high : float
        The bounds.
    n_clusters : int or None
        Scenarios behind the interval (None: not clustered).
    few : int, default 0
        Scenario counts below this get ``FEW_SCENARIOS``.

    Returns
    -------
    str or None
        ``ONE_SCENARIO``, ``ZERO_WIDTH``, ``FEW_SCENARIOS``, or None.
    """
    if n_clusters is not None and n_clusters < 2:
        return ONE_SCENARIO
    if math.isfinite(ci_low) and math.isfinite(ci_high) and ci_high - ci_low == 0:
        return ZERO_WIDTH
    if n_clusters is not None and n_clusters < few and math.isfinite(ci_low):
        return FEW_SCENARIOS
    return None


def as_generator(seed: Seed) -> np.random.Generator:
    """``seed`` as a generator: a generator is used as it is, an integer seeds a new one (``default_rng``).

    Parameters
    ----------
    seed : int or numpy.random.Generator
        An integer seed, or a generator to draw from (it is advanced, not copied).

    Returns
    -------
    numpy.random.Generator
        ``seed`` itself, or ``numpy.random.default_rng(seed)``.
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed: expected an int or a numpy Generator, got {type(seed).__name__}")
    return np.random.default_rng(int(seed))


@dataclass(frozen=True)
class Interval:
    """A point estimate and its interval from bootstrap resamples (:func:`interval`)."""

    estimate: float
    ci_low: float
    ci_high: float
    n_boot: int
    level: float
    method: str
    n_degenerate: int = 0
    reason: str | None = None


@dataclass(frozen=True)
class BootstrapResult:
    """A point estimate with its bootstrap interval."""

    estimate: float
    ci_low: float
    ci_high: float
    n: int
    n_pos: int | None
    n_boot: int
    method: str
    level: float = 0.95
    n_degenerate: int = 0
    n_clusters: int = 0
    n_missing: int = 0
    reason: str | None = None

    def as_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    def row(self) -> dict[str, object]:
        """The interval contract's columns (``INTERVAL_COLUMNS``), under the two rules every table keeps: no
        interval without an estimate (``NO_ESTIMATE``), and none of zero width where the estimate rests on
        fewer than ``ZERO_WIDTH_MIN_ROWS`` rows or ``ZERO_WIDTH_MIN_SCENARIOS`` scenarios (the reason
        says which)."""
        out = {k: getattr(self, k) for k in INTERVAL_COLUMNS}
        est, lo, hi = self.estimate, self.ci_low, self.ci_high
        nan = float("nan")
        if not math.isfinite(est):
            out.update(ci_low=nan, ci_high=nan, reason=self.reason or NO_ESTIMATE)
        elif math.isfinite(lo) and lo == hi and (self.n < ZERO_WIDTH_MIN_ROWS or
                                                 0 < self.n_clusters < ZERO_WIDTH_MIN_SCENARIOS):
            out.update(ci_low=nan, ci_high=nan, reason=(
                f"no interval: every resample gives {est:.3g}, but the estimate rests on {self.n} row(s)"
                + (f" in {self.n_clusters} scenario(s)" if self.n_clusters else "")
                + f" (fewer than {ZERO_WIDTH_MIN_ROWS} rows or {ZERO_WIDTH_MIN_SCENARIOS} scenarios): no spread seen "
                "on so few is no evidence that there is none"))
        return out


@dataclass(frozen=True)
class Units:
    """The resampling units: each row's unit index, and each unit's stratum."""

    row_unit: np.ndarray  # (n,) int
    unit_stratum: np.ndarray  # (K,) int
    n_units: int


def make_units(clusters: ArrayLike | pl.Series, strata: ArrayLike | None = None) -> Units:
    """Map rows to resampling units: clusters, split by stratum when strata are given.

    Units are numbered in the sorted order of the cluster values (``np.unique``'s). A polars Series of
    clusters without strata is numbered by polars (a dense rank: the same numbers, without turning millions
    of strings into Python objects).

    Parameters
    ----------
    clusters : array-like or polars.Series
        The cluster (task scenario) of each row.
    strata : array-like, optional
        The stratum of each row; a cluster spanning several strata becomes one unit per stratum.

    Returns
    -------
    Units
        Each row's unit index (0..K-1) and each unit's stratum.
    """
    if isinstance(clusters, pl.Series) and strata is None:
        if clusters.null_count():
            raise ValueError("clusters must not be null")
        row_unit = (clusters.rank("dense").cast(pl.Int64) - 1).to_numpy() if len(clusters) else np.zeros(0, np.int64)
        k = int(row_unit.max()) + 1 if len(row_unit) else 0
        return Units(row_unit.astype(np.int64), np.zeros(k, dtype=np.int64), k)
    c = np.asarray(clusters)
    if c.ndim != 1:
        raise ValueError("clusters must be one-dimensional")
    if strata is None:
        keys = c
        _, row_unit = np.unique(keys, return_inverse=True)
        k = int(row_unit.max()) + 1 if len(c) else 0
        return Units(row_unit.astype(np.int64), np.zeros(k, dtype=np.int64), k)
    s = np.asarray(strata)
    if s.shape != c.shape:
        raise ValueError(f"strata has shape {s.shape}, clusters {c.shape}")
    _, s_idx = np.unique(s, return_inverse=True)
    _, c_idx = np.unique(c, return_inverse=True)
    pair = s_idx.astype(np.int64) * (int(c_idx.max()) + 1 if len(c) else 1) + c_idx
    uniq, row_unit = np.unique(pair, return_inverse=True)
    unit_stratum = uniq // (int(c_idx.max()) + 1 if len(c) else 1)
    return Units(row_unit.astype(np.int64), unit_stratum.astype(np.int64), len(uniq))


def resample_counts(units: Units, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """(n_boot, K) counts: each stratum's units drawn with replacement to the stratum's size.

    Parameters
    ----------
    units : Units
        The resampling units (:func:`make_units`).
    n_boot : int
        Number of resamples.
    rng : numpy.random.Generator
        The generator every resample is drawn from.

    Returns
    -------
    numpy.ndarray
        Integer counts of shape ``(n_boot, K)``: how often each unit is drawn in each resample.
    """
    counts = np.zeros((n_boot, units.n_units), dtype=np.float64)
    for s in np.unique(units.unit_stratum):
        members = np.flatnonzero(units.unit_stratum == s)
        m = len(members)
        counts[:, members] = rng.multinomial(m, np.full(m, 1.0 / m), size=n_boot)
    return counts


def interval(estimate: float, boots: ArrayLike, level: float = 0.95, method: str = "percentile", *,
             jackknife: ArrayLike | None = None, n_clusters: int | None = None) -> Interval:
    """The ``level`` interval of ``estimate`` from its bootstrap resamples ``boots``.

    Non-finite resamples (degenerate: the metric was undefined there) are left out and
    counted. ``method`` is one of :data:`INTERVAL_METHODS`:

    * ``"percentile"``: the ``alpha/2`` and ``1 - alpha/2`` quantiles (numpy's linear rule);
    * ``"bca"``: bias-corrected and accelerated (Efron 1987): the bias correction ``z0`` from
      the share of resamples below the estimate, ties counting one half; the acceleration from
      ``jackknife``, the leave-one-cluster-out estimates, as ``scipy.stats.bootstrap`` does;
    * ``"t"``: ``estimate +/- t(G - 1) * se``, the cluster-robust interval with the jackknife
      standard error ``se = sqrt((G - 1) / G * sum (jk_g - mean jk)^2)`` over the G
      leave-one-cluster-out estimates and Student's t with G - 1 degrees of freedom. With few
      clusters it holds its level where the percentile interval does not (measured in
      :func:`workbench.stats.interval_coverage`, the AUROC at 12 and 30 clusters of 25,
      1,000 trials: 95.4% and 95.5% against the percentile interval's 91.8% and 93.6%, in
      ``figures/tables/sjc_table12_interval_coverage.csv``).
      The resamples are not used; ``jackknife`` is required.
    * ``"logit-t"`` / ``"atanh-t"``: the same t interval built on the logit (a share, an AUROC) or on Fisher's
      z (a kappa) of the estimate and its jackknife values, transformed back: it stays inside the statistic's
      range and is not symmetric near a bound. Chosen by ``benchmarks/bench_interval_coverage.py`` for the AUROC
      (94.2-94.9% at 8, 12 and 30 scenarios on two generators with unequal scenarios, where ``"t"`` gave
      92.7-94.3%) and for kappa (93.0-94.5%, where the percentile interval gave 87.8-92.4%).
      When the estimate or a leave-one-out estimate lies at the bound (an AUROC of 1 without one scenario, a
      kappa of 1), the transform sends it to infinity: the plain ``"t"`` interval, clipped, is given instead,
      and ``reason`` says so (``AT_BOUND``).
    * ``"cr2"``: for a mean only, :func:`cr2_mean` (Bell and McCaffrey's bias-reduced variance with their
      degrees of freedom).

    With no finite resample (or jackknife), or fewer than two clusters (``n_clusters``: a resample of one
    scenario is that scenario again, and its "interval" has zero width), the bounds are NaN; ``reason`` says why
    (``interval_reason``), and also names a zero-width interval.

    Parameters
    ----------
    estimate : float
        The point estimate on the full data.
    boots : array-like
        The bootstrap replicates; non-finite ones are degenerate.
    level : float, default 0.95
        Coverage of the two-sided interval.
    method : {"percentile", "bca", "t", "logit-t", "atanh-t"}, default "percentile"
        The interval rule (:data:`INTERVAL_METHODS`; ``"cr2"`` is :func:`cr2_mean`'s).
    jackknife : array-like, optional
        Leave-one-cluster-out estimates; required by ``"bca"`` and ``"t"``.
    n_clusters : int, optional
        The clusters resampled; fewer than two gives NaN bounds.

    Returns
    -------
    Interval
        Estimate, bounds (NaN when nothing finite remains), resamples, level, method, the count of
        degenerate resamples and the reason for NaN or zero-width bounds.

    References
    ----------
    Efron, B. (1987). Better bootstrap confidence intervals. JASA 82(397), 171-185.
    """
    b = np.asarray(boots, dtype=np.float64)
    ok = b[np.isfinite(b)]
    if n_clusters is not None and n_clusters < 2:
        _bounds(estimate, ok[:0], level, method, None if jackknife is None else np.zeros(0))  # the arguments' checks
        lo = hi = float("nan")
    else:
        lo, hi = _bounds(estimate, ok, level, method,
                         None if jackknife is None else np.asarray(jackknife, dtype=np.float64))
    reason = interval_reason(lo, hi, n_clusters)
    if reason is None and method in _SCALES and math.isfinite(lo) and \
            _at_bound(method, float(estimate), None if jackknife is None else np.asarray(jackknife, dtype=np.float64)):
        reason = AT_BOUND
    return Interval(float(estimate), lo, hi, int(len(b)), float(level), method, int(len(b) - len(ok)), reason)


def _bounds(estimate: float, boots: np.ndarray, level: float, method: str,
            jackknife: np.ndarray | None) -> tuple[float, float]:
    if method not in INTERVAL_METHODS:
        raise ValueError(f"method: expected one of {list(INTERVAL_METHODS)}, got {method!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level: expected a number in (0, 1), got {level!r}")
    alpha = (1.0 - level) / 2.0
    if method == "cr2":
        raise ValueError("method 'cr2' is the interval of a mean from its clusters: use cr2_mean")
    if method in _SCALES:  # the jackknife t on a scale where the statistic is unbounded, transformed back
        if jackknife is None:
            raise ValueError(f"method {method!r} needs the leave-one-cluster-out estimates (jackknife)")
        if not math.isfinite(estimate):
            return float("nan"), float("nan")
        if _at_bound(method, estimate, jackknife):  # the transform's delta method breaks at the bound: plain t
            lo, hi = _bounds(estimate, boots[:0], level, "t", jackknife)
            low_end = 0.0 if method == "logit-t" else -1.0
            return float(np.clip(lo, low_end, 1.0)), float(np.clip(hi, low_end, 1.0))
        to, back = _SCALES[method]
        lo, hi = _bounds(float(to(np.float64(estimate))), boots[:0], level, "t", to(jackknife))
        return float(back(lo)), float(back(hi))
    if method == "t":
        if jackknife is None:
            raise ValueError("method 't' needs the leave-one-cluster-out estimates (jackknife)")
        jk = jackknife[np.isfinite(jackknife)]
        g = len(jk)
        if g < 2 or not math.isfinite(estimate):
            return float("nan"), float("nan")
        se = jackknife_se_of(jk)
        from scipy import stats  # here, not at import: scipy.stats costs half a second of start-up

        half = float(stats.t.ppf(1.0 - alpha, g - 1)) * se
        return estimate - half, estimate + half
    if len(boots) == 0:
        return float("nan"), float("nan")
    if method == "percentile":
        lo, hi = np.quantile(boots, [alpha, 1.0 - alpha])
        return float(lo), float(hi)
    prop = (np.sum(boots < estimate) + 0.5 * np.sum(boots == estimate)) / len(boots)
    prop = min(max(prop, 1.0 / (len(boots) + 1)), 1.0 - 1.0 / (len(boots) + 1))
    from scipy import stats

    z0 = stats.norm.ppf(prop)
    a = 0.0
    if jackknife is not None:
        jk = jackknife[np.isfinite(jackknife)]
        if len(jk) > 2:
            d = jk.mean() - jk
            den = 6.0 * (np.sum(d**2) ** 1.5)
            a = float(np.sum(d**3) / den) if den > 0 else 0.0
    z = stats.norm.ppf([alpha, 1.0 - alpha])
    adj = stats.norm.cdf(z0 + (z0 + z) / (1.0 - a * (z0 + z)))
    lo, hi = np.quantile(boots, adj)
    return float(lo), float(hi)


def cr2_mean(values: ArrayLike | None, clusters: ArrayLike | None, *, level: float = 0.95, n_missing: int = 0,
             n_pos: int | None = None, sums: tuple[ArrayLike, ArrayLike] | None = None) -> BootstrapResult:
    """The mean of ``values`` with Bell and McCaffrey's bias-reduced (CR2) cluster interval: the variance
    ``sum_g (u_g / sqrt(1 - n_g / N))^2 / N^2`` of the intercept-only regression (u_g the cluster's sum of
    residuals, n_g its size: the CR2 adjustment ``(I - H_gg)^(-1/2)`` in closed form) and Student's t with their
    Satterthwaite degrees of freedom ``(sum lambda)^2 / sum lambda^2`` over the eigenvalues of G'G (the columns
    ``(e_g - (n_g / N) 1) / (N sqrt(1 - n_g / N))``). Chosen by ``benchmarks/bench_interval_coverage.py`` for
    accuracy and the paired difference, where it held 93-96% at 8, 12 and 30 unequal scenarios (the jackknife t
    gave 90.8-95.0%). ``sums`` ``(cluster sums, cluster sizes)`` gives the clusters' aggregates instead of rows
    (a share of runs from tasks' success counts: the same mean).

    Parameters
    ----------
    values : array-like
        One value per row (ignored with ``sums``).
    clusters : array-like
        The cluster of each row (ignored with ``sums``).
    level : float, default 0.95
        Coverage of the interval.
    n_missing : int, default 0
        Rows the caller left out for a missing value, reported.
    n_pos : int, optional
        Reported with the result.
    sums : tuple of (array-like, array-like), optional
        Each cluster's sum of values and its number of rows.

    Returns
    -------
    BootstrapResult
        The mean and its interval (``method`` ``"cr2"``, ``n_boot`` 0); NaN bounds with the reason over fewer
        than two clusters. :func:`cr2_p_value` gives its test of mean 0.

    References
    ----------
    Bell, R. M. and McCaffrey, D. F. (2002). Bias reduction in standard errors for linear regression with
    multi-stage samples. Survey Methodology 28(2), 169-181; Imbens, G. W. and Kolesar, M. (2016). Robust standard
    errors in small samples: some practical advice. REStat 98(4), 701-712; Pustejovsky, J. E. and Tipton, E.
    (2018). Small-sample methods for cluster-robust variance estimation. JBES 36(4), 672-683.
    """
    est, se, df, g, n = _cr2(values, clusters, sums)
    lo = hi = float("nan")
    if g >= 2 and math.isfinite(se):
        from scipy import stats

        half = float(stats.t.ppf(0.5 + level / 2, df)) * se
        lo, hi = est - half, est + half
    return BootstrapResult(est, lo, hi, n, n_pos, 0, "cr2", level, 0, g, n_missing, interval_reason(lo, hi, g))


#: the reason of a share's Wilson interval with no hits or no misses: one bound is the share itself
ALL_ALIKE = "every row a hit, or none: Wilson's interval, one-sided (its other bound is the estimate)"


def share_interval(values: ArrayLike, clusters: ArrayLike, *, level: float = 0.95,
                   n_missing: int = 0) -> BootstrapResult:
    """A share of 0/1 ``values`` with a score interval that holds at shares near 0 or 1: Wilson's where every
    cluster holds one row, else Wilson's at the effective sample size ``n / deff`` (Kish's design effect
    ``deff = max(1, se_CR2^2 / (p (1 - p) / n))``, from :func:`cr2_mean`'s clustered variance; with no hits or no
    misses the variance says nothing, and ``n_eff`` is the number of clusters) with Student's t quantile at the
    Bell-McCaffrey degrees of freedom (G - 1 with no hits or no misses) in place of the normal one. With the normal
    quantile the clustered form covered 85-94% where 8-30 scenarios of 4-60 runs share their hit rate; with t,
    91-99% (``benchmarks/interval_coverage.md``, issue 78).

    Failure-attribution accuracies sit at 1-17%, where the CR2 t interval (symmetric, clipped at 0) covered a true
    1% share 44% of the time at n = 58 and was [0, 0] with zero hits; Wilson's covers 95-98% there (exact, by
    the binomial: ``tests/stats/test_share_interval.py``).

    Parameters
    ----------
    values : array-like
        One 0/1 value per row.
    clusters : array-like
        The cluster (question, scenario) of each row.
    level : float, default 0.95
        Coverage of the interval.
    n_missing : int, default 0
        Rows the caller left out, reported.

    Returns
    -------
    BootstrapResult
        ``method`` ``"wilson"`` (one row a cluster) or ``"wilson-deff"``; ``n`` the rows, ``n_clusters`` the
        clusters; NaN bounds with no rows.

    References
    ----------
    Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference. JASA 22(158),
    209-212; Kish, L. (1965). Survey Sampling, section 8.2 (the design effect).
    """
    from statsmodels.stats.proportion import proportion_confint

    y = np.asarray(values, dtype=float)
    groups = np.asarray(clusters)
    if y.size and not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("share_interval: values must be 0 or 1")
    n = int(y.size)
    g = len(np.unique(groups)) if n else 0
    if n == 0:
        return BootstrapResult(float("nan"), float("nan"), float("nan"), 0, None, 0, "wilson", level, 0, 0,
                               n_missing, "no rows")
    p = float(y.mean())
    reason = ALL_ALIKE if p in (0.0, 1.0) else None
    if g == n:
        lo, hi = proportion_confint(p * n, n, alpha=1 - level, method="wilson")
        return BootstrapResult(p, float(lo), float(hi), n, int(y.sum()), 0, "wilson", level, 0, g, n_missing, reason)
    from scipy.stats import t as student_t

    df = float(g - 1)
    if 0.0 < p < 1.0:
        _, se, bm_df, _, _ = _cr2(y, groups, None)
        deff = max(1.0, se * se / (p * (1 - p) / n)) if math.isfinite(se) else float(n) / g
        n_eff = n / deff
        df = bm_df if math.isfinite(bm_df) and bm_df > 0 else df
    else:
        n_eff = float(g)
    # Wilson's score interval at the effective n, its normal quantile replaced by Student's t at the clusters'
    # degrees of freedom (Bell and McCaffrey's; G - 1 with no hits or no misses): the design effect is itself
    # estimated from few clusters, and with z it covered 85-94% where scenarios of 4-60 runs share their rate
    z = float(student_t.ppf(0.5 + level / 2, max(df, 1.0)))
    centre = (p + z * z / (2 * n_eff)) / (1 + z * z / n_eff)
    half = z / (1 + z * z / n_eff) * math.sqrt(p * (1 - p) / n_eff + z * z / (4 * n_eff * n_eff))
    lo, hi = max(centre - half, 0.0), min(centre + half, 1.0)
    method = "wilson-deff"
    return BootstrapResult(p, float(lo), float(hi), n, int(y.sum()), 0, method, level, 0, g, n_missing, reason)


def cr2_p_value(values: ArrayLike | None, clusters: ArrayLike | None, *,
                sums: tuple[ArrayLike, ArrayLike] | None = None
                ) -> tuple[float, float, str | None]:
    """Two-sided p of mean 0 from :func:`cr2_mean`'s standard error and degrees of freedom: ``(p, df, why NaN)``.

    Parameters
    ----------
    values : array-like
        One value per row.
    clusters : array-like
        The cluster of each row.
    sums : tuple of (array-like, array-like), optional
        Each cluster's sum and size, instead of rows.

    Returns
    -------
    tuple of (float, float, str or None)
        The p value, the degrees of freedom, and why the p is NaN (one scenario, zero variance).
    """
    est, se, df, g, _ = _cr2(values, clusters, sums)
    if g < 2:
        return float("nan"), float("nan"), "p: fewer than two scenarios"
    if se == 0:
        return (1.0, df, None) if est == 0 else (float("nan"), df, "p: zero variance (every scenario the same)")
    from scipy import stats

    return float(2 * stats.t.sf(abs(est / se), df)), df, None


def _cr2(values: ArrayLike | None, clusters: ArrayLike | None,
         sums: tuple[ArrayLike, ArrayLike] | None) -> tuple[float, float, float, int, int]:
    """(mean, CR2 standard error, Bell-McCaffrey df, clusters, rows) of an intercept-only regression."""
    if sums is None:
        if values is None or clusters is None:
            raise ValueError("cr2_mean: values and clusters, or sums")
        v = np.asarray(values, dtype=np.float64)
        _, inv = np.unique(np.asarray(clusters), return_inverse=True)
        total = np.bincount(inv, weights=v)
        size = np.bincount(inv).astype(np.float64)
    else:
        total, size = np.asarray(sums[0], dtype=np.float64), np.asarray(sums[1], dtype=np.float64)
    n = float(size.sum())
    g = int(len(size))
    if n == 0:
        raise ValueError("cr2_mean: no rows")
    est = float(total.sum() / n)
    if g < 2:
        return est, float("nan"), float("nan"), g, int(n)
    share = size / n
    adj = 1.0 / np.sqrt(1.0 - share)
    resid = total - size * est
    se = math.sqrt(float(np.sum((adj * resid) ** 2))) / n
    k = adj / n
    gram = np.outer(k, k) * (np.diag(size) - np.outer(size, size) / n)
    lam = np.linalg.eigvalsh(gram)
    df = float(lam.sum() ** 2 / np.sum(lam**2))
    return est, se, df, g, int(n)


#: the reason of a transformed interval that fell back to the plain t (an estimate at the statistic's bound)
AT_BOUND = "a leave-one-scenario-out estimate at the statistic's bound: the plain t interval, clipped"


def _at_bound(method: str, estimate: float, jackknife: np.ndarray | None) -> bool:
    """Whether the estimate or a leave-one-out estimate lies at the bound of a transformed scale (an AUROC of 0 or
    1, a kappa of -1 or 1), where the transform sends it to infinity and the interval spans the whole range."""
    values = np.append(np.asarray([] if jackknife is None else jackknife, dtype=np.float64), estimate)
    values = values[np.isfinite(values)]
    if method == "logit-t":
        return bool(np.any((values <= 1e-9) | (values >= 1 - 1e-9)))
    if method == "atanh-t":
        return bool(np.any(np.abs(values) >= 1 - 1e-9))
    return False


def resamples(metric: Callable[..., float], *arrays: ArrayLike, clusters: ArrayLike,
              strata: ArrayLike | None = None, n_boot: int = DEFAULT_N_BOOT,
              seed: Seed = 0) -> tuple[float, np.ndarray, Units]:
    """(the estimate, its ``n_boot`` cluster-bootstrap replicates, the units): the resampling
    :func:`bootstrap` summarises, for estimators that need the replicates themselves (a bias
    correction). A replicate where the metric raises ``ValueError`` or is NaN is NaN.

    Parameters
    ----------
    metric : callable
        ``metric(*arrays) -> float`` on the rows of one resample.
    *arrays : array-like
        Row-aligned inputs of the metric.
    clusters : array-like
        The cluster of each row; clusters are what is resampled.
    strata : array-like, optional
        Strata whose unit counts stay fixed in every resample.
    n_boot : int, default DEFAULT_N_BOOT
        Number of resamples.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.

    Returns
    -------
    tuple of (float, numpy.ndarray, Units)
        The estimate on all rows, the ``n_boot`` replicates (NaN where degenerate) and the units.
    """
    arrs = [np.asarray(a) for a in arrays]
    n = len(arrs[0]) if arrs else 0
    if any(len(a) != n for a in arrs):
        raise ValueError("bootstrap: arrays differ in length")
    units = make_units(clusters, strata)
    if len(units.row_unit) != n:
        raise ValueError(f"bootstrap: clusters has {len(units.row_unit)} rows, data {n}")
    rng = as_generator(seed)
    estimate = _safe(metric, arrs)
    counts = resample_counts(units, n_boot, rng)
    # a resample's rows: unit by unit in unit order, each row of a unit drawn c times repeated c times in a row
    # (one np.repeat a resample; a repeat per unit was most of the time of a cheap metric's bootstrap)
    # each row's repeats are gathered a resample at a time: as one (n_boot, rows) matrix they would be 16 GB for
    # 2,000 resamples of a million rows
    order = np.argsort(units.row_unit, kind="stable")
    unit_of = units.row_unit[order]
    boots = np.empty(n_boot)
    for b in range(n_boot):
        idx = np.repeat(order, np.asarray(counts[b])[unit_of].astype(np.int64))
        boots[b] = _safe(metric, [a[idx] for a in arrs])
    return estimate, boots, units


def bootstrap(
    metric: Callable[..., float],
    *arrays: ArrayLike,
    clusters: ArrayLike,
    strata: ArrayLike | None = None,
    n_boot: int = DEFAULT_N_BOOT,
    seed: Seed = 0,
    level: float = 0.95,
    method: str = "percentile",
    n_pos: int | None = None,
    n_missing: int = 0,
) -> BootstrapResult:
    """Cluster bootstrap of any ``metric(*arrays) -> float`` over resampled rows.

    Each resample takes every row of each drawn cluster as many times as the cluster is
    drawn. A metric that raises ``ValueError`` or returns NaN on a resample makes it
    degenerate (excluded, counted).

    Parameters
    ----------
    metric : callable
        ``metric(*arrays) -> float`` on the rows of one resample.
    *arrays : array-like
        Row-aligned inputs of the metric.
    clusters : array-like
        The cluster (task scenario) of each row; clusters are what is resampled.
    strata : array-like, optional
        Strata whose unit counts stay fixed in every resample.
    n_boot : int, default DEFAULT_N_BOOT
        Number of resamples.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the two-sided interval.
    method : {"percentile", "bca", "t", "logit-t", "atanh-t", "cr2"}, default "percentile"
        The interval rule of :func:`interval`; ``"cr2"`` (a mean: ``metric`` ``np.mean`` of one array) is
        :func:`cr2_mean`'s.
    n_pos : int, optional
        Number of positive rows, reported with the result when the metric has classes.
    n_missing : int, default 0
        Rows the caller left out for a missing value (:func:`complete_rows`), reported with the result.

    Returns
    -------
    BootstrapResult
        Estimate, interval, the number of rows and of degenerate resamples; NaN bounds with their reason over
        fewer than two clusters.

    References
    ----------
    SJC Appendix G (bootstrap over task scenarios); Davison, A. C. and Hinkley, D. V. (1997).
    Bootstrap Methods and their Application, section 3.8 (resampling clusters).

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.stats import bootstrap
    >>> values = np.array([0.2, 0.4, 0.4, 0.9, 0.7, 0.8])
    >>> clusters = np.array([0, 0, 1, 1, 2, 2])  # resample scenarios, not rows
    >>> result = bootstrap(np.mean, values, clusters=clusters, n_boot=2000, seed=0)
    >>> round(result.estimate, 3), round(result.ci_low, 3), round(result.ci_high, 3)
    (0.567, 0.3, 0.75)
    """
    arrs = [np.asarray(a) for a in arrays]
    n = len(arrs[0]) if arrs else 0
    estimate, boots, units = resamples(metric, *arrs, clusters=clusters, strata=strata, n_boot=n_boot, seed=seed)
    members = [np.flatnonzero(units.row_unit == k) for k in range(units.n_units)]
    if method == "cr2":
        if metric is not np.mean or len(arrs) != 1:
            raise ValueError("method 'cr2' is the interval of a mean: metric np.mean of one array (cr2_mean)")
        return cr2_mean(arrs[0], clusters, level=level, n_missing=n_missing, n_pos=n_pos)
    jk = None
    if method in ("bca", "t", "logit-t", "atanh-t"):  # leave one cluster out; one cluster leaves nothing (NaN)
        jk = np.array([_safe(metric, [a[np.concatenate([m for j, m in enumerate(members) if j != k])]
                                      for a in arrs]) for k in range(units.n_units)]) if units.n_units > 1 \
            else np.array([], dtype=np.float64)
    iv = interval(estimate, boots, level, method, jackknife=jk, n_clusters=units.n_units)
    return BootstrapResult(estimate, iv.ci_low, iv.ci_high, n, n_pos, n_boot, method, level, iv.n_degenerate,
                           units.n_units, n_missing, iv.reason)


def _safe(metric: Callable[..., float], arrs: Sequence[np.ndarray]) -> float:
    try:
        v = float(metric(*arrs))
    except (ValueError, ZeroDivisionError, FloatingPointError):
        return float("nan")
    return v


# ---------------------------------------------------------------------------
# vectorised AUROC


@dataclass(frozen=True)
class _Pairs:
    """What the AUROC of any reweighting of the clusters needs, in O(entries) memory.

    ``pos``/``neg`` are sparse (score groups x units) counts, groups in ascending score. A unit
    weighting w gives the weighted Mann-Whitney numerator ``sum_g P_g (B_g + N_g / 2)`` with
    P = pos @ w, N = neg @ w and B the cumulative N below g.
    """

    pos: Any  # scipy.sparse.csr_matrix
    neg: Any
    pos_unit: np.ndarray  # positives per unit
    neg_unit: np.ndarray
    u_total: float  # the unweighted numerator
    u_row: np.ndarray  # per unit c: its positives against every negative
    u_col: np.ndarray  # per unit d: every positive against its negatives
    u_diag: np.ndarray  # per unit: its positives against its own negatives


def _pairs(scores: np.ndarray, labels: np.ndarray, unit: np.ndarray, k: int) -> _Pairs:
    """The :class:`_Pairs` of scores, boolean labels and unit indices (0..k-1)."""
    uniq, g = np.unique(scores, return_inverse=True)
    n_groups = len(uniq)
    shape = (n_groups, k)
    ones_p, ones_n = np.ones(int(labels.sum())), np.ones(int((~labels).sum()))
    from scipy import sparse

    pos = sparse.csr_matrix((ones_p, (g[labels], unit[labels])), shape=shape)
    neg = sparse.csr_matrix((ones_n, (g[~labels], unit[~labels])), shape=shape)
    p_g = np.bincount(g[labels], minlength=n_groups).astype(np.float64)
    n_g = np.bincount(g[~labels], minlength=n_groups).astype(np.float64)
    below = np.cumsum(n_g) - n_g  # negatives with a strictly lower score
    above = p_g.sum() - np.cumsum(p_g)  # positives with a strictly higher score
    u_total = float(p_g @ (below + 0.5 * n_g))
    u_row = pos.T @ (below + 0.5 * n_g)
    u_col = neg.T @ (above + 0.5 * p_g)
    # within each unit: sort by (unit, score group) and count per unit as above
    key = unit.astype(np.int64) * n_groups + g
    blocks, inv = np.unique(key, return_inverse=True)
    bp = np.bincount(inv, weights=labels.astype(np.float64), minlength=len(blocks))
    bn = np.bincount(inv, weights=(~labels).astype(np.float64), minlength=len(blocks))
    b_unit = blocks // n_groups
    first = np.r_[0, np.flatnonzero(np.diff(b_unit)) + 1]
    run = np.cumsum(bn)
    start = np.repeat(run[first] - bn[first], np.diff(np.r_[first, len(blocks)]))
    b_below = run - bn - start
    u_diag = np.bincount(b_unit, weights=bp * (b_below + 0.5 * bn), minlength=k)
    return _Pairs(pos, neg, np.asarray(pos.sum(axis=0)).ravel(), np.asarray(neg.sum(axis=0)).ravel(), u_total,
                  np.asarray(u_row).ravel(), np.asarray(u_col).ravel(), u_diag)


#: up to this many units, the numerators come from the (units x units) matrix of pair counts (one matrix product
#: for all resamples; 2,000 units: 32 MB); above it, from the score groups (memory O(entries), never units^2)
_DENSE_UNITS = 2_000


def _weighted_numerators(pairs: _Pairs, w: np.ndarray) -> np.ndarray:
    """The Mann-Whitney numerator for each row of unit weights ``w`` (resamples x units).

    With few units (:data:`_DENSE_UNITS`): ``w M w`` per resample, ``M[c, d]`` the positives of unit c
    against the negatives of unit d (ties one half), one matrix product for all resamples. Otherwise in
    chunks of resamples sized so that a (score groups x chunk) block stays near a million values (small
    enough to stay in cache, which measured faster than larger blocks).
    """
    n_groups, k = pairs.pos.shape
    if k <= _DENSE_UNITS:
        m = _unit_pairs(pairs)
        wf = np.asarray(w, dtype=np.float64)
        return np.einsum("bc,bc->b", wf @ m, wf)
    chunk = max(1, min(64, 1_000_000 // max(n_groups, 1)))
    out = np.empty(len(w))
    for lo in range(0, len(w), chunk):
        wt = np.ascontiguousarray(w[lo:lo + chunk].T, dtype=np.float64)
        p = pairs.pos @ wt  # groups x chunk
        n = pairs.neg @ wt
        below = np.cumsum(n, axis=0)
        below -= 0.5 * n  # negatives below the group plus half of those tied with it
        out[lo:lo + chunk] = np.einsum("gb,gb->b", p, below)
    return out


def _unit_pairs(pairs: _Pairs) -> np.ndarray:
    """``M[c, d]``: the positives of unit c against the negatives of unit d, ties counting one half (units x units),
    built a block of columns at a time (score groups x block stays near four million values)."""
    n_groups, k = pairs.pos.shape
    pos_t = pairs.pos.T.tocsr()
    m = np.empty((k, k))
    step = max(1, min(k, 4_000_000 // max(n_groups, 1)))
    for lo in range(0, k, step):
        neg = pairs.neg[:, lo:lo + step].toarray()
        below = np.cumsum(neg, axis=0)
        below -= 0.5 * neg  # negatives below the group plus half of those tied with it
        m[:, lo:lo + step] = pos_t @ below
    return m


def auroc_ci(
    scores: ArrayLike,
    labels: ArrayLike,
    clusters: ArrayLike,
    n_boot: int = DEFAULT_N_BOOT,
    seed: Seed = 0,
    level: float = 0.95,
    *,
    strata: ArrayLike | None = None,
    method: str = "logit-t",
) -> BootstrapResult:
    """AUROC of ``scores`` against binary ``labels`` with a cluster interval, vectorised.

    The point estimate equals ``sklearn.metrics.roc_auc_score`` (ties count one half).
    Rows with a missing score (a judge's "no usable answer") or label are dropped before anything else and
    counted in ``n_missing``; no row at all, or none complete, is a ``ValueError`` saying so.
    The default interval is ``"logit-t"``: Student's t with clusters - 1 degrees of freedom and the
    delete-one-cluster jackknife standard error, on the logit of the AUROC, transformed back. It was chosen
    by ``benchmarks/bench_interval_coverage.py`` on two generators with unequal scenario sizes (2,000 trials
    a cell): 94.2%, 94.3% and 94.9% at 8, 12 and 30 scenarios on one, 94.8%, 94.9%, 94.7% on the other, where
    the plain ``"t"`` (the default before, clipped to [0, 1]) gave 92.7-94.3% and the percentile
    88.1-93.1%. The bootstrap resamples are still drawn (``n_degenerate`` counts them) so that
    ``"percentile"`` and ``"bca"`` are one argument away.

    Parameters
    ----------
    scores : array-like
        Judge scores, higher meaning more likely positive; NaN rows are dropped.
    labels : array-like
        Binary labels aligned with ``scores`` (``binary_labels``: booleans or 0/1; None or NaN is missing).
    clusters : array-like
        The cluster (task scenario) of each row.
    n_boot : int, default DEFAULT_N_BOOT
        Number of resamples.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the two-sided interval.
    strata : array-like, optional
        Strata whose unit counts stay fixed in every resample.
    method : {"logit-t", "t", "percentile", "bca"}, default "logit-t"
        The interval rule of :func:`interval`.

    Returns
    -------
    BootstrapResult
        The AUROC (equal to ``sklearn.metrics.roc_auc_score``) with its interval and counts.

    References
    ----------
    Hanley, J. A. and McNeil, B. J. (1982). The meaning and use of the area under a ROC curve.
    Radiology 143(1), 29-36 (the Mann-Whitney form); SJC Appendix G (intervals over scenarios).

    Examples
    --------
    >>> import numpy as np
    >>> from workbench.stats import auroc_ci
    >>> rng = np.random.default_rng(0)
    >>> clusters = np.repeat(np.arange(12), 20)  # 12 scenarios, 20 entries each
    >>> labels = rng.random(240) < 0.5
    >>> scores = np.clip(0.5 + 0.3 * (labels - 0.5) + rng.normal(0, 0.2, 240), 0, 1)
    >>> result = auroc_ci(scores, labels, clusters, seed=0)
    >>> round(result.estimate, 3), round(result.ci_low, 3), round(result.ci_high, 3)
    (0.847, 0.782, 0.895)
    """
    s = np.asarray(scores, dtype=np.float64)
    y_in = binary_labels(labels, "auroc_ci")
    c = np.asarray(clusters)
    if not (len(s) == len(y_in) == len(c)):
        raise ValueError(f"auroc_ci: scores, labels and clusters differ in length ({len(s)}, {len(y_in)}, {len(c)})")
    if not len(s):
        raise ValueError("auroc_ci: no rows; AUROC needs scored, labelled entries")
    rows = np.arange(len(s))
    try:
        (s, y_kept, rows), n_missing = complete_rows(s, y_in, rows, names=("score", "label"))
    except ValueError as err:
        raise ValueError(f"auroc_ci: no rows with a usable score and a label ({err})") from None
    y, c = y_kept.astype(np.float64).astype(bool), c[rows]
    st = None if strata is None else np.asarray(strata)[rows]
    units = make_units(c, st)
    pairs = _pairs(s, y, units.row_unit, units.n_units)
    pos, neg = pairs.pos_unit, pairs.neg_unit
    n_pos = int(pos.sum())
    if n_pos == 0 or neg.sum() == 0:
        raise ValueError("auroc_ci: labels hold one class only; AUROC is undefined")
    estimate = float(pairs.u_total / (pos.sum() * neg.sum()))
    w = resample_counts(units, n_boot, as_generator(seed))
    num = _weighted_numerators(pairs, w)
    den = (w @ pos) * (w @ neg)
    valid = den > 0
    boots = np.full(n_boot, np.nan)
    boots[valid] = num[valid] / den[valid]
    jk = None
    if method in ("bca", "t", "logit-t", "atanh-t"):  # leave one unit out: remove its row and column of the pairs
        dj = (pos.sum() - pos) * (neg.sum() - neg)
        nj = pairs.u_total - pairs.u_row - pairs.u_col + pairs.u_diag
        jk = np.where(dj > 0, nj / np.where(dj > 0, dj, 1), np.nan)
    iv = interval(estimate, boots, level, method, jackknife=jk, n_clusters=units.n_units)
    n_neg = int(len(s)) - n_pos
    if min(n_pos, n_neg) < AUROC_MIN_CLASS:  # the estimate stands; an interval from so few of a class does not
        few = (f"{n_pos} positive and {n_neg} negative: no interval from fewer than {AUROC_MIN_CLASS} of a class "
               "(the resamples see only its few labels)")
        return BootstrapResult(estimate, float("nan"), float("nan"), int(len(s)), n_pos, n_boot, method, level,
                               iv.n_degenerate, units.n_units, n_missing, few)
    return BootstrapResult(estimate, max(iv.ci_low, 0.0), min(iv.ci_high, 1.0), int(len(s)), n_pos, n_boot,
                           method, level, iv.n_degenerate, units.n_units, n_missing, iv.reason)


#: the fewest labels of either class from which :func:`auroc_ci` gives an interval (with one positive, a share of
#: its negatives below it, an interval of 0.222 [0.028, 0.740] was printed without a word)
AUROC_MIN_CLASS = 5


__all__ = ["as_generator", "auroc_ci", "AUROC_MIN_CLASS", "bootstrap", "BootstrapResult", "complete_rows", "cr2_mean",
           "cr2_p_value", "DEFAULT_N_BOOT", "Interval", "interval", "make_units", "INTERVAL_METHODS", "resample_counts",
           "resamples", "Seed", "share_interval"]
