"""Can a judge's score be read as a probability, and which tau gives the precision a user needs?

Beyond the papers (SJC reports one tau and point estimates). Everything here works on one
judge's scores of labeled entries: ``scores`` in [0, 1], binary ``labels`` (1 = the positive
class, e.g. ``supported``) and ``clusters`` (each entry's task scenario), and every interval
comes from :mod:`workbench.bootstrap` resampling scenarios.

* :func:`reliability_curve` -- per score bin the mean score and the observed positive rate
  with its interval (the reliability diagram);
* :func:`ece` -- expected calibration error, ``sum_b n_b / N |mean score_b - positive rate_b|``;
* :func:`brier` -- the Brier score with Murphy's (1973) decomposition over the distinct
  forecast values, ``brier = reliability - resolution + uncertainty`` exactly;
* :func:`recalibrate` -- out-of-fold Platt (a statsmodels binomial GLM on the logit of the
  score, cluster-robust by scenario) or isotonic (scikit-learn) recalibration, folds grouped
  by scenario (``GroupKFold``), so no scenario helps calibrate its own entries;
* :func:`threshold_for` -- the tau that reaches a target precision (the smallest) or recall
  (the largest), with intervals for tau and for what it achieves;
* :func:`paired_auroc_difference` -- two judges on the same entries, resampled together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from workbench.bootstrap import DEFAULT_N_BOOT, INTERVAL_SCHEMA, BootstrapResult, Seed, bootstrap

ArrayLike = npt.ArrayLike
STRATEGIES = ("uniform", "quantile")


def labeled_scores(scores: pl.DataFrame, gold: pl.DataFrame, clusters: pl.DataFrame, *, judge: str,
                   field: str = "support") -> pl.DataFrame:
    """One judge's usable scores joined with the gold labels of ``field`` and each entry's scenario.

    ``scores`` (the scores table; repeat 0 when repeats exist), ``gold`` (:func:`workbench.labels.gold_labels`),
    ``clusters`` (:func:`workbench.datasets.entry_clusters`). Columns ``entry_id``, ``score``,
    ``label`` (True for the field's positive value; ``unsure`` labels left out), ``scenario_id``.
    """
    from workbench.metrics.discrimination import POSITIVE

    sc = scores.filter(pl.col("judge") == judge)
    if "repeat" in sc.columns:
        sc = sc.filter(pl.col("repeat").fill_null(0) == 0)
    g = gold.filter((pl.col("field") == field) & (pl.col("value") != "unsure")).select(
        pl.col("item_id").alias("entry_id"), (pl.col("value") == POSITIVE.get(field, "yes")).alias("label"))
    return (sc.drop_nulls("score").select("entry_id", "score").join(g, on="entry_id")
            .join(clusters.select("entry_id", pl.col("scenario_id").cast(pl.Utf8).fill_null(pl.col("entry_id"))),
                  on="entry_id", how="left").sort("entry_id"))


def _arrays(scores: ArrayLike, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels).astype(np.float64)
    if s.shape != y.shape:
        raise ValueError(f"scores and labels differ in shape {s.shape} != {y.shape}")
    if s.size and (np.nanmin(s) < 0 or np.nanmax(s) > 1):
        raise ValueError("scores must lie in [0, 1]")
    return s, y


def bin_edges(scores: ArrayLike, bins: int = 10, strategy: str = "uniform") -> np.ndarray:
    """Bin edges on [0, 1]: ``uniform`` (equal widths) or ``quantile`` (equal counts; ties merge bins)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy: expected one of {list(STRATEGIES)}, got {strategy!r}")
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, bins + 1)
    q = np.quantile(np.asarray(scores, dtype=np.float64), np.linspace(0.0, 1.0, bins + 1))
    q[0], q[-1] = 0.0, 1.0
    return np.unique(q)


def _bin_index(scores: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Bin of each score: ``[e_i, e_{i+1})``, the last bin closed at 1."""
    return np.clip(np.searchsorted(edges, scores, side="right") - 1, 0, len(edges) - 2)


def ece(scores: ArrayLike, labels: ArrayLike, bins: int = 10, strategy: str = "uniform") -> float:
    """Expected calibration error: the count-weighted mean gap between mean score and positive rate per bin."""
    s, y = _arrays(scores, labels)
    if not s.size:
        return float("nan")
    idx = _bin_index(s, bin_edges(s, bins, strategy))
    total = 0.0
    for b in np.unique(idx):
        m = idx == b
        total += m.sum() / s.size * abs(s[m].mean() - y[m].mean())
    return float(total)


@dataclass(frozen=True)
class BrierDecomposition:
    """The Brier score and Murphy's terms over the distinct forecast values (brier = rel - res + unc)."""

    brier: float
    reliability: float
    resolution: float
    uncertainty: float


def brier(scores: ArrayLike, labels: ArrayLike) -> BrierDecomposition:
    """Mean squared error of the scores as probabilities, with Murphy's decomposition.

    Grouping by distinct forecast value f_k (n_k entries, positive rate o_k, overall rate o):
    reliability = sum n_k/N (f_k - o_k)^2, resolution = sum n_k/N (o_k - o)^2,
    uncertainty = o (1 - o); the identity brier = reliability - resolution + uncertainty is exact.
    """
    s, y = _arrays(scores, labels)
    if not s.size:
        nan = float("nan")
        return BrierDecomposition(nan, nan, nan, nan)
    values, inverse = np.unique(s, return_inverse=True)
    n_k = np.bincount(inverse).astype(np.float64)
    o_k = np.bincount(inverse, weights=y) / n_k
    o = y.mean()
    return BrierDecomposition(brier=float(np.mean((s - y) ** 2)),
                              reliability=float(np.sum(n_k * (values - o_k) ** 2) / s.size),
                              resolution=float(np.sum(n_k * (o_k - o) ** 2) / s.size),
                              uncertainty=float(o * (1 - o)))


def reliability_curve(scores: ArrayLike, labels: ArrayLike, clusters: ArrayLike, bins: int = 10,
                      strategy: str = "uniform", *, n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0,
                      level: float = 0.95) -> pl.DataFrame:
    """The reliability diagram's data: per non-empty bin ``bin``, ``lower``, ``upper``, ``mean_score`` and the
    observed positive rate as ``estimate`` with its scenario-bootstrap interval (interval columns)."""
    s, y = _arrays(scores, labels)
    c = np.asarray(clusters)
    edges = bin_edges(s, bins, strategy)
    idx = _bin_index(s, edges)
    rows = []
    for b in np.unique(idx):
        m = idx == b
        res = bootstrap(np.mean, y[m], clusters=c[m], n_boot=n_boot, seed=seed, level=level)
        rows.append({"bin": int(b), "lower": float(edges[b]), "upper": float(edges[b + 1]),
                     "mean_score": float(s[m].mean()), **res.row()})
    return pl.DataFrame(rows, schema={"bin": pl.Int64, "lower": pl.Float64, "upper": pl.Float64,
                                      "mean_score": pl.Float64, **INTERVAL_SCHEMA})


def calibration_table(scores: ArrayLike, labels: ArrayLike, clusters: ArrayLike, bins: int = 10,
                      strategy: str = "uniform", *, n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0,
                      level: float = 0.95) -> pl.DataFrame:
    """Brier (with its three Murphy terms) and ECE, each a row with its scenario-bootstrap interval."""
    s, y = _arrays(scores, labels)
    c = np.asarray(clusters)
    stats: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
        "brier": lambda a, b: brier(a, b).brier, "ece": lambda a, b: ece(a, b, bins, strategy),
        "reliability": lambda a, b: brier(a, b).reliability, "resolution": lambda a, b: brier(a, b).resolution,
        "uncertainty": lambda a, b: brier(a, b).uncertainty}
    rows = [{"statistic": name, **bootstrap(fn, s, y, clusters=c, n_boot=n_boot, seed=seed, level=level).row()}
            for name, fn in stats.items()]
    return pl.DataFrame(rows, schema={"statistic": pl.Utf8, **INTERVAL_SCHEMA})


def _logit(p: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    q = np.clip(p, eps, 1 - eps)
    return np.log(q / (1 - q))


def recalibrate(scores: ArrayLike, labels: ArrayLike, clusters: ArrayLike, method: str = "platt",
                n_splits: int = 5) -> np.ndarray:
    """Out-of-fold recalibrated scores: each scenario's entries are mapped by a calibrator fitted on the others.

    ``platt``: ``P(y = 1) = logistic(a + b logit(score))``, fitted as a statsmodels ``GLM``
    (binomial family) with cluster-robust standard errors by scenario; ``isotonic``:
    scikit-learn's ``IsotonicRegression`` (increasing, clipped to [0, 1]). Folds come from
    ``GroupKFold`` over scenarios (at most ``n_splits``, at least 2).
    """
    import statsmodels.api as sm
    from sklearn.isotonic import IsotonicRegression
    from sklearn.model_selection import GroupKFold

    s, y = _arrays(scores, labels)
    c = np.asarray(clusters)
    groups = np.unique(c)
    if len(groups) < 2:
        raise ValueError("recalibrate: needs at least two scenarios for out-of-fold fits")
    out = np.full(s.shape, np.nan)
    for train, test in GroupKFold(n_splits=min(n_splits, len(groups))).split(s, y, groups=c):
        if method == "platt":
            x = sm.add_constant(_logit(s[train]), has_constant="add")
            fit = sm.GLM(y[train], x, family=sm.families.Binomial()).fit(
                cov_type="cluster", cov_kwds={"groups": np.unique(c[train], return_inverse=True)[1]})
            out[test] = fit.predict(sm.add_constant(_logit(s[test]), has_constant="add"))
        elif method == "isotonic":
            iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
            out[test] = iso.fit(s[train], y[train]).predict(s[test])
        else:
            raise ValueError(f"method: expected 'platt' or 'isotonic', got {method!r}")
    return out


def recalibration_table(scores: ArrayLike, labels: ArrayLike, clusters: ArrayLike, *,
                        methods: Sequence[str] = ("platt", "isotonic"), bins: int = 10, n_splits: int = 5,
                        n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0, level: float = 0.95) -> pl.DataFrame:
    """Brier and ECE of the raw scores and of each out-of-fold recalibration, with intervals.

    One row per (``calibration``, ``statistic``): ``raw`` or a method, ``brier`` or ``ece``.
    """
    s, y = _arrays(scores, labels)
    c = np.asarray(clusters)
    versions = {"raw": s, **{m: recalibrate(s, y, c, m, n_splits) for m in methods}}
    rows = []
    for name, version in versions.items():
        for stat, fn in (("brier", lambda a, b: brier(a, b).brier), ("ece", lambda a, b: ece(a, b, bins))):
            res = bootstrap(fn, version, y, clusters=c, n_boot=n_boot, seed=seed, level=level)
            rows.append({"calibration": name, "statistic": stat, **res.row()})
    return pl.DataFrame(rows, schema={"calibration": pl.Utf8, "statistic": pl.Utf8, **INTERVAL_SCHEMA})


# ---------------------------------------------------------------------------
# thresholds


def _precision_recall_curve(s: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """At each distinct score t (ascending): precision and recall of calling ``score >= t`` positive."""
    taus = np.unique(s)
    order = np.argsort(s, kind="stable")
    s_sorted, y_sorted = s[order], y[order]
    first = np.searchsorted(s_sorted, taus, side="left")  # entries at or above tau: first..end
    pos_above = np.concatenate([np.cumsum(y_sorted[::-1])[::-1], [0.0]])[first]
    n_above = len(s) - first
    precision = np.where(n_above > 0, pos_above / np.maximum(n_above, 1), np.nan)
    recall = pos_above / y.sum() if y.sum() else np.full(len(taus), np.nan)
    return taus, precision, recall


def _tau_for(s: np.ndarray, y: np.ndarray, target: str, value: float) -> float:
    taus, precision, recall = _precision_recall_curve(s, y)
    if target == "precision":
        ok = np.flatnonzero(precision >= value)
        return float(taus[ok[0]]) if ok.size else float("nan")
    ok = np.flatnonzero(recall >= value)
    return float(taus[ok[-1]]) if ok.size else float("nan")


def threshold_for(scores: ArrayLike, labels: ArrayLike, clusters: ArrayLike, target: str = "precision",
                  value: float = 0.95, *, sjc_tau: float = 0.5, n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0,
                  level: float = 0.95) -> pl.DataFrame:
    """The tau that reaches ``target`` >= ``value`` on the labels, with intervals, beside SJC's tau.

    For ``precision`` the smallest tau whose precision (of calling ``score >= tau`` positive)
    reaches the value -- the most entries kept at that precision; for ``recall`` the largest tau
    whose recall still reaches it. Rows (``statistic``): ``tau`` (its interval: the tau each
    scenario resample picks), ``precision`` and ``recall`` at the chosen tau, and
    ``precision_at_sjc``, ``recall_at_sjc``, ``pruned_at_sjc`` at ``sjc_tau`` (0.5). NaN when no
    tau reaches the value.
    """
    if target not in ("precision", "recall"):
        raise ValueError(f"target: expected 'precision' or 'recall', got {target!r}")
    s, y = _arrays(scores, labels)
    c = np.asarray(clusters)
    tau = _tau_for(s, y, target, value)

    def prec(t: float) -> Callable[[np.ndarray, np.ndarray], float]:
        return lambda a, b: float(b[a >= t].mean()) if (a >= t).any() else float("nan")

    def rec(t: float) -> Callable[[np.ndarray, np.ndarray], float]:
        return lambda a, b: float((a[b == 1] >= t).mean()) if (b == 1).any() else float("nan")

    stats: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
        "tau": lambda a, b: _tau_for(a, b, target, value), "precision": prec(tau), "recall": rec(tau),
        "precision_at_sjc": prec(sjc_tau), "recall_at_sjc": rec(sjc_tau),
        "pruned_at_sjc": lambda a, b: float((a < sjc_tau).mean())}
    rows = [{"target": target, "value": value, "statistic": name,
             **bootstrap(fn, s, y, clusters=c, n_boot=n_boot, seed=seed, level=level).row()}
            for name, fn in stats.items()]
    return pl.DataFrame(rows, schema={"target": pl.Utf8, "value": pl.Float64, "statistic": pl.Utf8,
                                      **INTERVAL_SCHEMA})


def threshold_sweep(scores: ArrayLike, labels: ArrayLike, clusters: ArrayLike,
                    taus: ArrayLike = np.linspace(0, 1, 41), *, n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0,
                    level: float = 0.95) -> pl.DataFrame:
    """Precision, recall and pruned fraction against tau, each with a scenario-bootstrap band (long form)."""
    s, y = _arrays(scores, labels)
    c = np.asarray(clusters)
    rows = []
    for t in np.asarray(taus, dtype=np.float64):
        for name, fn in (("precision", lambda a, b, t=t: float(b[a >= t].mean()) if (a >= t).any() else float("nan")),
                         ("recall", lambda a, b, t=t: float((a[b == 1] >= t).mean()) if (b == 1).any() else float("nan")),
                         ("pruned", lambda a, b, t=t: float((a < t).mean()))):
            rows.append({"tau": float(t), "statistic": name,
                         **bootstrap(fn, s, y, clusters=c, n_boot=n_boot, seed=seed, level=level).row()})
    return pl.DataFrame(rows, schema={"tau": pl.Float64, "statistic": pl.Utf8, **INTERVAL_SCHEMA})


def paired_auroc_difference(scores_a: ArrayLike, scores_b: ArrayLike, labels: ArrayLike, clusters: ArrayLike, *,
                            n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0, level: float = 0.95,
                            method: str = "t") -> BootstrapResult:
    """AUROC of judge a minus judge b on the same entries; each resample draws scenarios once for both judges."""
    from workbench.metrics.discrimination import auroc

    a = np.asarray(scores_a, dtype=np.float64)
    b = np.asarray(scores_b, dtype=np.float64)
    y = np.asarray(labels).astype(bool)
    keep = np.isfinite(a) & np.isfinite(b)
    return bootstrap(lambda yy, aa, bb: auroc(aa, yy) - auroc(bb, yy), y[keep], a[keep], b[keep],
                     clusters=np.asarray(clusters)[keep], n_boot=n_boot, seed=seed, level=level, method=method)
