"""FOCUS rollout analysis: span dependency scores, Hoeffding bounds, estimator error, keep-set stability.

FOCUS (Sections 4.3-4.4, Appendix A.2) samples N draft plan sketches at a compression
event; each planned step cites the history spans it depends on ("Step: ... | Depends on:
[s_3, s_7]"). The dependency score of span i is its citation frequency across rollouts,
``û_i = (1/N) sum_k 1[s_i in Dep(p_k)]`` (Eq. 8); for a candidate dropped set S,
``û_S = (1/N) sum_k 1[Dep(p_k) ∩ S ≠ ∅]`` (Eq. 4). Spans with ``û_i >= tau`` are kept.

Lemma 1: ``P(max_i |û_i - u_i| > γ) <= 2m exp(-2Nγ²)``; Theorem 1: under a margin γ around
tau, thresholding recovers the future-relevant set with probability at least
``1 - 2m exp(-2Nγ²)``, so ``N >= ln(2m/δ) / (2γ²)`` rollouts suffice for failure
probability δ. Corollary 1: the decision loss of dropping S is at most ``m_max · û_S``.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from workbench.stats._bootstrap import DEFAULT_N_BOOT, BootstrapResult, Seed, as_generator, bootstrap

_DEPENDS = re.compile(r"depends\s*on\s*:?\s*(?P<list>.*)$", re.IGNORECASE)
_SPAN = re.compile(r"\bs\s*_?\s*(\d+)\b", re.IGNORECASE)


# ---------------------------------------------------------------------------
# parsing draft plan sketches


@dataclass(frozen=True)
class ParsedRollout:
    citations: pl.DataFrame  # event_id, rollout, span_id
    unknown: tuple[tuple[int, str], ...]  # (line number, span id) cited but not in the history
    malformed: tuple[tuple[int, str], ...]  # (line number, text) a Depends-on clause with no span ids


def parse_rollout(text: str, event_id: str, rollout: int, known_spans: Iterable[str] | None = None) -> ParsedRollout:
    """Citations of one plan sketch.

    Tolerant of spacing, case, missing brackets and ``s3`` vs ``s_3`` (normalised to
    ``s_3``). A cited id not in ``known_spans`` is reported in ``unknown`` and ignored, never
    mapped to a near one; a "Depends on" clause with no span id (other than an explicit
    "none") is reported in ``malformed``. A span cited twice in one rollout appears once.

    Parameters
    ----------
    text : str
        The plan sketch.
    event_id : str
        Its compaction event.
    rollout : int
        Its rollout index.
    known_spans : iterable of str, optional
        The event's span ids.

    Returns
    -------
    ParsedRollout
        The cited spans and what could not be read (``unknown``, ``malformed``).
    """
    known = None if known_spans is None else {_norm(s) for s in known_spans}
    seen: list[str] = []
    unknown: list[tuple[int, str]] = []
    malformed: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        m = _DEPENDS.search(line)
        if not m:
            continue
        body = m.group("list").strip().strip("[]().").strip()
        ids = [f"s_{int(x)}" for x in _SPAN.findall(body)]
        if not ids:
            if body.lower() not in ("", "none", "nothing", "-", "n/a"):
                malformed.append((number, line.strip()))
            continue
        for sid in ids:
            if known is not None and sid not in known:
                unknown.append((number, sid))
            elif sid not in seen:
                seen.append(sid)
    frame = pl.DataFrame({"event_id": [event_id] * len(seen), "rollout": [rollout] * len(seen), "span_id": seen},
                         schema={"event_id": pl.Utf8, "rollout": pl.Int64, "span_id": pl.Utf8})
    return ParsedRollout(frame, tuple(unknown), tuple(malformed))


def _norm(span: str) -> str:
    m = _SPAN.fullmatch(span.strip())
    return f"s_{int(m.group(1))}" if m else span.strip()


# ---------------------------------------------------------------------------
# scores


def event_batches(spans: pl.DataFrame, size: int) -> Iterator[pl.DataFrame]:
    """The spans of ``size`` compaction events at a time, the events in sorted order.

    What is computed per event and sorted by event comes out of the batches, concatenated, as it comes out of
    the whole table: :func:`citation_scores` (sorted by event and span) and :func:`self_consistency_curves`
    (events drawn in sorted order: pass one generator through the batches for the same draws). A large log's
    events then never hold their rollouts' matrices all at once (91,200 events at 100x the testbed).

    Parameters
    ----------
    spans : polars.DataFrame
        ``event_id`` and the spans' columns.
    size : int
        Events per batch.

    Yields
    ------
    polars.DataFrame
        The spans of the next ``size`` events.
    """
    if size < 1:
        raise ValueError(f"event_batches: size must be at least 1, got {size}")
    events = spans.get_column("event_id").unique().sort()
    for start in range(0, len(events), size):
        yield spans.filter(pl.col("event_id").is_in(events.slice(start, size).implode()))


def _n_for(n_rollouts: int | Mapping[str, int], event: str) -> int:
    return int(n_rollouts[event]) if isinstance(n_rollouts, Mapping) else int(n_rollouts)


def _span_columns(spans: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(each event's span ids in order: ``event_id``, ``span_id`` list; and each (event, span)'s integer codes:
    ``_e`` the event's position, ``_j`` the span's column -- a span id repeated within an event, its last)."""
    columns = spans.select("event_id", "span_id").group_by("event_id", maintain_order=True).agg("span_id")
    index = (columns.with_row_index("_e").explode("span_id")
             .with_columns(pl.int_range(pl.len()).over("_e").alias("_j"))
             .unique(["event_id", "span_id"], keep="last"))
    return columns, index


def _citation_codes(citations: pl.DataFrame | pl.LazyFrame, index: pl.DataFrame,
                    n_rollouts: int | None = None) -> pl.DataFrame:
    """The citations of known spans (rollouts below ``n_rollouts``) as three integer columns (``_e``, ``rollout``,
    ``_j``), joined by the streaming engine: a large log's rollouts are never held as strings (7.8 million at
    100x the testbed: 94 MiB as integers)."""
    cited = citations.lazy().select("event_id", "rollout", "span_id")
    if n_rollouts is not None:
        cited = cited.filter(pl.col("rollout") < n_rollouts)
    return (cited.join(index.lazy(), on=["event_id", "span_id"], how="inner")
            .select(pl.col("_e").cast(pl.UInt32), pl.col("rollout").cast(pl.Int64), pl.col("_j").cast(pl.UInt32))
            .collect(engine="streaming"))


def citation_scores(citations: pl.DataFrame | pl.LazyFrame, n_rollouts: int | Mapping[str, int],
                    spans: pl.DataFrame | None = None) -> pl.DataFrame:
    """û per (event, span): the fraction of the event's rollouts that cite the span (Eq. 8).

    ``citations``: ``event_id``, ``rollout``, ``span_id`` (a frame, or a lazy one: a large log's rollouts
    table). A span cited twice in one rollout counts once. With ``spans`` (``event_id``, ``span_id``), never-cited
    spans get û = 0 and citations of other spans are left out, counted on integer codes.

    Parameters
    ----------
    citations : polars.DataFrame or polars.LazyFrame
        ``event_id``, ``rollout``, ``span_id``.
    n_rollouts : int or mapping of str to int
        Rollouts per event (one number, or per event id).
    spans : polars.DataFrame, optional
        ``event_id``, ``span_id``: each event's spans, so never-cited spans count.

    Returns
    -------
    polars.DataFrame
        One row per (event, span) with ``n_cited``, ``n_rollouts`` and ``score`` (û).

    References
    ----------
    FOCUS Eq. 8.
    """
    if spans is None:  # the distinct rollouts citing each span
        per = (citations.lazy().group_by("event_id", "span_id").agg(pl.col("rollout").n_unique().alias("n_cited"))
               .collect())
    else:
        _, index = _span_columns(spans)
        counted = (_citation_codes(citations, index).group_by("_e", "_j")
                   .agg(pl.col("rollout").n_unique().cast(pl.UInt32).alias("n_cited")))
        per = (spans.select("event_id", "span_id")
               .join(index.join(counted, on=["_e", "_j"], how="left"), on=["event_id", "span_id"], how="left")
               .select("event_id", "span_id", pl.col("n_cited").fill_null(0)))
    events = per.get_column("event_id").unique().to_list()
    n_map = {e: _n_for(n_rollouts, e) for e in events}
    bad = per.join(pl.DataFrame({"event_id": list(n_map), "_n": list(n_map.values())}), on="event_id").filter(
        pl.col("n_cited") > pl.col("_n"))
    if bad.height:
        raise ValueError(f"citation_scores: span cited by more rollouts than n_rollouts: {bad.row(0)}")
    n_col = pl.col("event_id").replace_strict(n_map, return_dtype=pl.Int64)
    return per.with_columns(n_col.alias("n_rollouts")).with_columns(
        (pl.col("n_cited") / pl.col("n_rollouts")).alias("score")).sort("event_id", "span_id")


def keep_set(scores: pl.DataFrame, tau: float, rescue: Iterable[str] = ()) -> set[str]:
    """S_U: spans with û >= tau, united with a defensive rescue set (FOCUS-D).

    Parameters
    ----------
    scores : polars.DataFrame
        ``span_id`` and ``score`` (û).
    tau : float
        The keep threshold.
    rescue : iterable of str, default ()
        Span ids kept whatever their score.

    Returns
    -------
    set of str
        The kept span ids.

    References
    ----------
    FOCUS section 4 (FOCUS-D).
    """
    return set(scores.filter(pl.col("score") >= tau).get_column("span_id").to_list()) | set(rescue)


# ---------------------------------------------------------------------------
# bounds


def hoeffding_bound(m: int, n_rollouts: int | np.ndarray, gamma: float) -> float | np.ndarray:
    """Lemma 1: min(1, 2m exp(-2Nγ²)), the chance some of m spans is off by more than γ.

    Parameters
    ----------
    m : int
        Number of spans.
    n_rollouts : int or numpy.ndarray
        Number of rollouts N.
    gamma : float
        The error margin.

    Returns
    -------
    float or numpy.ndarray
        The bound, capped at 1.

    References
    ----------
    FOCUS Lemma 1; Hoeffding, W. (1963). Probability inequalities for sums of bounded random variables.
    JASA 58(301), 13-30.
    """
    n = np.asarray(n_rollouts, dtype=np.float64)
    out = np.minimum(1.0, 2.0 * m * np.exp(-2.0 * n * gamma**2))
    return float(out) if out.ndim == 0 else out


def recovery_probability(m: int, n_rollouts: int | np.ndarray, gamma: float) -> float | np.ndarray:
    """Theorem 1: the keep set is recovered with probability at least 1 - 2m exp(-2Nγ²).

    Parameters
    ----------
    m : int
        Number of spans.
    n_rollouts : int or numpy.ndarray
        Number of rollouts N.
    gamma : float
        The error margin.

    Returns
    -------
    float or numpy.ndarray
        The lower bound on the recovery probability, at least 0.

    References
    ----------
    FOCUS Theorem 1.
    """
    return 1.0 - hoeffding_bound(m, n_rollouts, gamma)


def rollouts_needed(m: int, gamma: float, delta: float) -> int:
    """ceil(ln(2m/δ) / (2γ²)): rollouts for failure probability at most δ.

    Parameters
    ----------
    m : int
        Number of spans.
    gamma : float
        The error margin.
    delta : float
        The allowed failure probability.

    Returns
    -------
    int
        The smallest N the bound guarantees.

    References
    ----------
    FOCUS Lemma 1.
    """
    if not (0 < delta < 1) or gamma <= 0 or m < 1:
        raise ValueError("rollouts_needed: need m >= 1, gamma > 0, 0 < delta < 1")
    return max(1, math.ceil(math.log(2 * m / delta) / (2 * gamma**2)))


def bound_curves(ms: Sequence[int], gammas: Sequence[float], ns: Sequence[int]) -> pl.DataFrame:
    """The bound and the recovery probability over N for each (m, γ).

    Parameters
    ----------
    ms : sequence of int
        Numbers of spans.
    gammas : sequence of float
        Error margins.
    ns : sequence of int
        Numbers of rollouts.

    Returns
    -------
    polars.DataFrame
        ``m``, ``gamma``, ``n_rollouts``, ``bound`` and ``recovery``.

    References
    ----------
    FOCUS Lemma 1 and Theorem 1.
    """
    rows = [{"m": m, "gamma": g, "n_rollouts": n, "bound": float(hoeffding_bound(m, n, g)),
             "recovery": float(recovery_probability(m, n, g))} for m in ms for g in gammas for n in ns]
    return pl.DataFrame(rows)


# ---------------------------------------------------------------------------
# empirical curves from rollouts at N_max


def citation_matrices(citations: pl.DataFrame | pl.LazyFrame, spans: pl.DataFrame,
                      n_rollouts: int) -> dict[str, tuple[list[str], np.ndarray]]:
    """Per event: span ids and the (N_max, m) 0/1 matrix of which rollout cites which span.

    Built from columns: each citation's span is located by a join on (event, span) and the matrices are filled
    from integer arrays, one slice per event (not a frame and a Python loop per event, which held gigabytes at
    100x the testbed's events); ``citations`` may be lazy. A citation of a span the event does not have, or of a
    rollout >= ``n_rollouts``, is ignored.

    Parameters
    ----------
    citations : polars.DataFrame or polars.LazyFrame
        ``event_id``, ``rollout``, ``span_id``.
    spans : polars.DataFrame
        ``event_id``, ``span_id``: each event's spans.
    n_rollouts : int
        Rollouts per event (the matrices' rows).

    Returns
    -------
    dict
        Event id to (its span ids, its 0/1 matrix of rollouts by spans).
    """
    out: dict[str, tuple[list[str], np.ndarray]] = {}
    columns, index = _span_columns(spans)
    hits = _citation_codes(citations, index, n_rollouts)
    event = hits.get_column("_e").to_numpy()
    order = np.argsort(event, kind="stable")
    bounds = np.searchsorted(event[order], np.arange(columns.height + 1))
    rollout, column = hits.get_column("rollout").to_numpy()[order], hits.get_column("_j").to_numpy()[order]
    del hits, event, order
    for k, (name, ids) in enumerate(columns.iter_rows()):
        x = np.zeros((n_rollouts, len(ids)), dtype=np.float64)
        lo, hi = bounds[k], bounds[k + 1]
        x[rollout[lo:hi], column[lo:hi]] = 1.0
        out[str(name)] = (ids, x)
    return out


def self_consistency_curves(matrices: Mapping[str, tuple[list[str], np.ndarray]], ns: Sequence[int], *,
                            tau: float = 0.3, draws: int = 200, seed: Seed = 0, replace: bool = True) -> pl.DataFrame:
    """Keep-set Jaccard against the estimator's own N_max decision (FOCUS Figure 5A), and, as a *diagnostic*,
    the worst-span distance ``max_i |û_i(N) - û_i(N_max)|`` to its own N_max estimate.

    For each event and N, ``draws`` subsamples of N of the N_max rollouts (with replacement
    by default; ``replace=False`` samples without) give the two measures, averaged over draws.
    One row per (event, N). The distance is measured against the estimator's own rollouts, so
    its decay with N holds by construction (about -0.5 on a log-log scale): it is *not*
    FOCUS Figure 5B, which measures against the true utility u* (:func:`error_against_truth`);
    use it only where u* is unknown (real logs), and read it as self-consistency.

    Parameters
    ----------
    matrices : mapping
        Event id to (span ids, rollouts x spans 0/1 matrix), from :func:`citation_matrices`.
    ns : sequence of int
        Numbers of rollouts.
    tau : float, default 0.3
        The keep threshold.
    draws : int, default 200
        Subsamples per (event, N).
    seed : int or numpy.random.Generator, default 0
        Seed of the subsamples.
    replace : bool, default True
        Subsample with replacement.

    Returns
    -------
    polars.DataFrame
        ``event_id``, ``n_rollouts``, ``max_distance_to_own`` and ``jaccard``.

    References
    ----------
    FOCUS Figure 5A.
    """
    rng = as_generator(seed)
    rows: dict[str, list[Any]] = {"event_id": [], "n_rollouts": [], "max_distance_to_own": [], "jaccard": []}
    for event in sorted(matrices):
        _, x = matrices[event]
        n_max = x.shape[0]
        ref = x.mean(axis=0)
        keep_ref = ref >= tau
        for n in ns:
            if not replace and n > n_max:
                continue
            idx = rng.integers(0, n_max, size=(draws, n)) if replace else np.argsort(rng.random((draws, n_max)), axis=1)[:, :n]
            u = x[idx].mean(axis=1)  # (draws, m)
            err = np.abs(u - ref).max(axis=1)
            keep = u >= tau
            inter = (keep & keep_ref).sum(axis=1)
            union = (keep | keep_ref).sum(axis=1)
            jac = np.where(union > 0, inter / np.where(union > 0, union, 1), 1.0)
            for column, value in zip(rows.values(), (event, n, float(err.mean()), float(jac.mean())), strict=True):
                column.append(value)
    return pl.DataFrame(rows) if rows["event_id"] else pl.DataFrame()


#: the name earlier releases used


def error_against_truth(spans: pl.DataFrame, ns: Sequence[int], *, truth: str = "gt_rate", draws: int = 200,
                        seed: Seed = 0) -> pl.DataFrame:
    """FOCUS Figure 5B where the true utility is known: worst-span error ``max_i |û_i(N) - u*_i|`` against N.

    ``spans`` has ``event_id``, ``span_id`` and the true utility ``truth`` of each span (on the
    testbed, ``gt_rate``: the probability that a draft cites the span, so u* is exact). For each
    event and N, ``draws`` sets of N draft rollouts are drawn from the drafts' own citation
    model (each rollout cites span i with probability u*_i, independently -- how the testbed's
    drafts are made) and the worst-span error is averaged over draws. One row per (event, N):
    ``event_id``, ``n_rollouts``, ``max_error``. FOCUS reports 0.25, 0.089, 0.025 at N = 1, 10,
    300 on real drafts (slope about -0.40).

    Parameters
    ----------
    spans : polars.DataFrame
        ``event_id``, ``span_id`` and the true utility.
    ns : sequence of int
        Numbers of rollouts.
    truth : str, default "gt_rate"
        The column of the true utility.
    draws : int, default 200
        Simulated rollout sets per (event, N).
    seed : int or numpy.random.Generator, default 0
        Seed of the draws.

    Returns
    -------
    polars.DataFrame
        ``event_id``, ``n_rollouts``, ``max_error``.

    References
    ----------
    FOCUS Figure 5B and Appendix A.2.6.
    """
    rng = as_generator(seed)
    rows: dict[str, list[Any]] = {"event_id": [], "n_rollouts": [], "max_error": []}  # columns, not a dict a row
    per_event = spans.group_by("event_id", maintain_order=True).agg(pl.col(truth).cast(pl.Float64))
    for event, values in per_event.iter_rows():  # events in the order they first appear, as the draws are made
        u = np.asarray(values, dtype=np.float64)
        for n in ns:
            hits = rng.binomial(int(n), np.broadcast_to(u, (draws, len(u))))  # (draws, m) rollouts citing each span
            err = np.abs(hits / n - u).max(axis=1)
            for column, value in zip(rows.values(), (str(event), int(n), float(err.mean())), strict=True):
                column.append(value)
    return pl.DataFrame(rows, schema={"event_id": pl.Utf8, "n_rollouts": pl.Int64, "max_error": pl.Float64})


def loglog_slope(n: np.ndarray, err: np.ndarray) -> float:
    """OLS slope of log(error) on log(N).

    Parameters
    ----------
    n : numpy.ndarray
        Numbers of rollouts.
    err : numpy.ndarray
        The errors at them.

    Returns
    -------
    float
        The OLS slope of log(err) on log(n).
    """
    keep = (err > 0) & (n > 0)
    if keep.sum() < 2:
        raise ValueError("loglog_slope: fewer than two positive points")
    return float(np.polyfit(np.log(n[keep]), np.log(err[keep]), 1)[0])


def event_scenarios(spans: pl.DataFrame, runs: pl.DataFrame) -> dict[str, str]:
    """Each compaction event's task scenario (events are ``RUN/bBOUNDARY``): the clusters an interval resamples.

    An event whose run has no scenario is its own cluster.

    Parameters
    ----------
    spans : polars.DataFrame
        ``event_id`` of each span.
    runs : polars.DataFrame
        ``run_id``, ``scenario_id``.

    Returns
    -------
    dict of str to str
        Event id to scenario id.
    """
    events = spans.select("event_id").unique().with_columns(
        pl.col("event_id").str.replace(r"/b\d+$", "").alias("run_id"))
    joined = events.join(runs.select("run_id", "scenario_id"), on="run_id", how="left")
    return {e: (s if s is not None else e) for e, s in joined.select("event_id", "scenario_id").iter_rows()}


def curve_means(curves: pl.DataFrame, value: str) -> pl.DataFrame:
    """The mean of ``value`` at each number of rollouts, sorted by N: the points FOCUS Figure 5 plots from
    :func:`self_consistency_curves` (``jaccard``) or :func:`error_against_truth` (``max_error``).

    The mean is numpy's over each N's rows in table order, not polars' group-by mean, whose float sum
    is split across threads and so differs in the last bits with the machine's core count (which moved
    a pixel of FOCUS Figure 5 between machines).

    Parameters
    ----------
    curves : polars.DataFrame
        Curves with ``n_rollouts`` and ``value``.
    value : str
        The column averaged.

    Returns
    -------
    polars.DataFrame
        ``n_rollouts`` and the mean of ``value``, sorted by N.

    References
    ----------
    FOCUS Figure 5.
    """
    ns = sorted(curves.get_column("n_rollouts").unique().to_list())
    means = [float(np.mean(curves.filter(pl.col("n_rollouts") == n).get_column(value).cast(pl.Float64).to_numpy()))
             for n in ns]
    return pl.DataFrame({"n_rollouts": ns, value: means},
                        schema={"n_rollouts": curves.schema["n_rollouts"], value: pl.Float64})


def published_draft_error(published: pl.DataFrame) -> pl.DataFrame:
    """FOCUS's reported worst-span draft error at N rollouts (Appendix A.2.6), from ``data/published/
    text_numbers.csv`` (rows ``draft_error_nN``): ``n_rollouts``, ``max_error``, sorted by N.

    Parameters
    ----------
    published : polars.DataFrame
        The published numbers table.

    Returns
    -------
    polars.DataFrame
        ``n_rollouts``, ``max_error``.

    References
    ----------
    FOCUS Appendix A.2.6.
    """
    rows = published.filter((pl.col("document") == "FOCUS") & pl.col("quantity").str.starts_with("draft_error_n"))
    return rows.select(pl.col("quantity").str.strip_prefix("draft_error_n").cast(pl.Int64).alias("n_rollouts"),
                       pl.col("value").cast(pl.Float64).alias("max_error")).sort("n_rollouts")


def error_slope(curves: pl.DataFrame, *, clusters: Mapping[str, str] | None = None, value: str = "max_error",
                n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0, level: float = 0.95) -> BootstrapResult:
    """The log-log slope of the mean worst-span error against N, with a bootstrap interval.

    ``curves`` has ``event_id``, ``n_rollouts`` and ``value`` (:func:`error_against_truth`).
    The interval resamples ``clusters`` (event -> scenario; each event its own cluster when
    not given) with all their events. FOCUS A.2.6 reports about -0.40 for draft rollouts
    against the ideal -0.5 of Lemma 1. ``estimate`` is the slope, ``n`` the events.

    Parameters
    ----------
    curves : polars.DataFrame
        ``event_id``, ``n_rollouts`` and ``value``.
    clusters : mapping of str to str, optional
        Event id to scenario.
    value : str, default "max_error"
        The error column.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the interval.

    Returns
    -------
    BootstrapResult
        The slope with its interval.

    References
    ----------
    FOCUS Lemma 1 and Appendix A.2.6.
    """
    ns = np.sort(curves.get_column("n_rollouts").unique().to_numpy())
    events = sorted(curves.get_column("event_id").unique().to_list())
    wide = curves.pivot(on="n_rollouts", index="event_id", values=value).sort("event_id")
    mat = wide.select([str(n) for n in ns]).to_numpy()
    groups = np.array([(clusters or {}).get(e, e) for e in events])

    def slope(rows: np.ndarray) -> float:
        return loglog_slope(ns.astype(float), mat[rows.astype(int)].mean(axis=0))

    return bootstrap(slope, np.arange(len(events)), clusters=groups, n_boot=n_boot, seed=seed, level=level)


@dataclass(frozen=True)
class UtilityHistogram:
    """FOCUS Figure 4's distribution of û (:func:`utility_histogram`)."""

    n: int
    tau: float
    at_zero: float
    at_one: float
    interior: float
    near_tau: float
    counts: np.ndarray = field(repr=False)
    edges: np.ndarray = field(repr=False)


#: FOCUS Figure 4's neighbourhood of tau: within +/- 1/6 (closed: a score exactly 1/6 away is near)
NEAR = Fraction(1, 6)


def utility_histogram(scores: pl.DataFrame, tau: float = 0.3, bins: int = 20) -> UtilityHistogram:
    """FOCUS Figure 4: the distribution of û with the mass at the extremes, inside, and near tau.

    ``at_zero``/``at_one``: û exactly 0 or 1; ``interior``: strictly between; ``near_tau``: the
    share with ``|û - tau| <= 1/6`` -- FOCUS: "within ±1/6 of τ", read as the closed interval, so
    with N = 3 and tau = 0.5 both 1/3 and 2/3 lie on its edges and count. The shares are
    computed exactly, on the integer counts ``n_cited`` / ``n_rollouts`` that
    :func:`citation_scores` gives and on tau as the decimal it is written as (0.3 = 3/10), never
    on floating-point û (where 1/3 and 2/3 land on opposite sides of 1/6). Without counts the
    scores are taken as given. ``tau`` defaults to FOCUS's 0.3 (Figure 4 caption).

    Parameters
    ----------
    scores : polars.DataFrame
        ``score`` (û; with ``n_cited`` and ``n_rollouts`` when known).
    tau : float, default 0.3
        The keep threshold.
    bins : int, default 20
        Histogram bins.

    Returns
    -------
    UtilityHistogram
        The histogram and the four shares.

    References
    ----------
    FOCUS Figure 4.
    """
    u = scores.get_column("score").to_numpy()
    counts, edges = np.histogram(u, bins=bins, range=(0.0, 1.0))
    nan = float("nan")
    if not len(u):
        return UtilityHistogram(0, tau, nan, nan, nan, nan, counts, edges)
    t = Fraction(str(tau))
    if {"n_cited", "n_rollouts"} <= set(scores.columns):
        exact = [Fraction(int(c), int(n)) for c, n in scores.select("n_cited", "n_rollouts").iter_rows()]
    else:
        exact = [Fraction(str(v)).limit_denominator(10_000) for v in u.tolist()]  # û is a rollout fraction
    return UtilityHistogram(
        n=len(u), tau=tau, at_zero=sum(v == 0 for v in exact) / len(exact),
        at_one=sum(v == 1 for v in exact) / len(exact),
        interior=sum(0 < v < 1 for v in exact) / len(exact),
        near_tau=sum(abs(v - t) <= NEAR for v in exact) / len(exact), counts=counts, edges=edges)


__all__ = ["bound_curves", "citation_matrices", "citation_scores", "curve_means", "error_against_truth",
           "error_slope", "event_batches", "event_scenarios", "hoeffding_bound", "keep_set", "loglog_slope", "NEAR",
           "parse_rollout", "ParsedRollout", "published_draft_error", "recovery_probability", "rollouts_needed",
           "self_consistency_curves", "utility_histogram", "UtilityHistogram"]
