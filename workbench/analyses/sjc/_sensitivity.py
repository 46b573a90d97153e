"""Threshold sensitivity and score distributions (SJC Figure 3, Section 5.4; FOCUS Figure 4).

An entry is pruned when its score is below tau; an entry without a usable score is never
pruned (SJC Appendix F) and stays in the denominator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict

import numpy as np
import numpy.typing as npt
import polars as pl

from workbench.stats._bootstrap import (DEFAULT_N_BOOT, INTERVAL_COLUMNS, Seed, Units, as_generator, interval, make_units,
                                 resample_counts)


def score_distribution(frame: pl.DataFrame, by: str | None = "section", score: str = "score") -> pl.DataFrame:
    """Shares of scores >= 0.8, < 0.2 and in [0.3, 0.7] (SJC Figure 3 left), per group and overall.

    Parameters
    ----------
    frame : polars.DataFrame
        Scored entries.
    by : str, optional, default "section"
        The group column; ``None`` for the overall row only.
    score : str, default "score"
        The score column.

    Returns
    -------
    polars.DataFrame
        One row per group and one overall, with the three shares.

    References
    ----------
    SJC Figure 3 (left).
    """
    f = frame.drop_nulls(score)
    aggs = [pl.len().alias("n"), (pl.col(score) >= 0.8).mean().alias("share_high"),
            (pl.col(score) < 0.2).mean().alias("share_low"),
            ((pl.col(score) >= 0.3) & (pl.col(score) <= 0.7)).mean().alias("share_middle")]
    overall = f.select(pl.lit("All").alias(by or "group"), *aggs)
    if by is None:
        return overall
    return pl.concat([f.group_by(by, maintain_order=True).agg(*aggs).sort(by), overall], how="vertical_relaxed")


def sweep(
    frame: pl.DataFrame,
    taus: npt.ArrayLike = np.linspace(0, 1, 101),
    *,
    setting: str | None = None,
    cluster: str = "scenario_id",
    score: str = "score",
    n_boot: int = DEFAULT_N_BOOT,
    seed: Seed = 0,
    level: float = 0.95,
    method: str = "percentile",
) -> pl.DataFrame:
    """Fraction pruned against tau with scenario-bootstrap bands (SJC Figure 3 right), per setting.

    One row per (setting, tau): ``setting``, ``tau`` and the interval columns (``estimate`` is
    the fraction pruned, ``n`` the entries). Vectorised: per cluster, the number of entries
    below each tau (K x T) and its size; each resample's fraction is ``(w @ below) / (w @ size)``,
    and each tau's interval comes from :func:`workbench.stats.interval`. Every setting
    draws its resamples from the same stream when ``seed`` is an integer (a generator is advanced
    across settings instead).

    Parameters
    ----------
    frame : polars.DataFrame
        Scored entries with the cluster column (and ``setting`` when given).
    taus : array-like, default 0, 0.01, ..., 1
        Thresholds.
    setting : str, optional
        Column that defines the curves (one curve without it).
    cluster : str, default "scenario_id"
        The resampled cluster column.
    score : str, default "score"
        The score column.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples of the band.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the band.
    method : {"percentile", "bca", "t"}, default "percentile"
        The interval rule of :func:`workbench.stats.interval`.

    Returns
    -------
    polars.DataFrame
        One row per (setting, tau) with the interval columns.

    References
    ----------
    SJC Figure 3 (right) and Appendix G.
    """
    t = np.asarray(taus, dtype=np.float64)
    groups = [(None, frame)] if setting is None else [
        (k[0], g) for k, g in frame.partition_by(setting, as_dict=True, maintain_order=True).items()]
    out = []
    for name, g in groups:
        s = g.get_column(score).cast(pl.Float64).fill_null(np.inf).to_numpy()  # null: never pruned
        units = make_units(g.get_column(cluster).cast(pl.Utf8).fill_null("?"))
        below = _below_per_unit(s, units.row_unit, units.n_units, t)
        size = np.bincount(units.row_unit, minlength=units.n_units).astype(np.float64)
        out.append(_curve(name, t, below, size, units, g.height, n_boot, seed, level, method))
    return pl.concat(out)


def _curve(name: object, taus: np.ndarray, below: np.ndarray, size: np.ndarray, units: Units, n: int, n_boot: int,
           seed: Seed, level: float, method: str) -> pl.DataFrame:
    """One setting's rows of :func:`sweep` from its (units x taus) counts below each tau and each unit's size:
    each resample's fraction is ``(w @ below) / (w @ size)``; an integer ``seed`` restarts the stream."""
    est = below.sum(axis=0) / size.sum()
    w = resample_counts(units, n_boot, as_generator(seed))
    frac = (w @ below) / (w @ size)[:, None]
    rows = [{"setting": name, "tau": float(tau), **asdict(interval(float(e), frac[:, j], level, method,
                                                                   n_clusters=units.n_units)), "n": n,
             "n_missing": 0} for j, (tau, e) in enumerate(zip(taus, est, strict=True))]
    return pl.DataFrame(rows).select("setting", "tau", *INTERVAL_COLUMNS)


def _below_per_unit(s: np.ndarray, unit: np.ndarray, n_units: int, t: np.ndarray) -> np.ndarray:
    """(units x taus) counts of entries with score < tau, in one pass over the entries: each entry lands in
    the first tau above it, and a cumulative sum over the sorted taus counts it for every larger tau."""
    order = np.argsort(t, kind="stable")
    pos = np.searchsorted(t[order], s, side="right")  # NaN and inf sort past every tau: never below
    hist = np.bincount(unit * (len(t) + 1) + pos, minlength=n_units * (len(t) + 1)).reshape(n_units, len(t) + 1)
    return _below_from_slots(hist, order)


def _below_from_slots(hist: np.ndarray, order: np.ndarray) -> np.ndarray:
    """(units x taus) counts below each tau from each unit's count per slot (slot j: between the j-th and the
    (j+1)-th smallest tau, the last slot above them all), the taus in their given ``order``."""
    below = np.empty((hist.shape[0], len(order)))
    below[:, order] = np.cumsum(hist[:, :-1], axis=1)
    return below


def largest_change(curve: pl.DataFrame, lo: float = 0.3, hi: float = 0.7) -> pl.DataFrame:
    """Per setting, how much the pruned fraction moves between tau = lo and hi (SJC Figure 3 right).

    Parameters
    ----------
    curve : polars.DataFrame
        A curve of :func:`sweep`.
    lo, hi : float, default 0.3 and 0.7
        The two thresholds compared.

    Returns
    -------
    polars.DataFrame
        One row per ``setting``: ``change``, the range of the pruned fraction over taus in [lo, hi].

    References
    ----------
    SJC Figure 3 (right).
    """
    c = curve.filter((pl.col("tau") >= lo - 1e-9) & (pl.col("tau") <= hi + 1e-9))
    return c.group_by("setting", maintain_order=True).agg(
        (pl.col("estimate").max() - pl.col("estimate").min()).alias("change"))


def keep_rate_by_section(frame: pl.DataFrame, tau: float = 0.5, score: str = "score",
                         sections: Sequence[str] | None = None) -> pl.DataFrame:
    """Share of each section's entries kept at tau (null scores are kept).

    Parameters
    ----------
    frame : polars.DataFrame
        Scored entries with ``section``.
    tau : float, default 0.5
        The pruning threshold.
    score : str, default "score"
        The score column.
    sections : sequence of str, optional
        The sections to report; every section by default.

    Returns
    -------
    polars.DataFrame
        ``section``, ``entries`` and ``keep_rate`` (null scores kept), lowest rate first.
    """
    f = frame if sections is None else frame.filter(pl.col("section").is_in(list(sections)))
    return f.group_by("section", maintain_order=True).agg(pl.len().alias("entries"),
                                     (pl.col(score).is_null() | (pl.col(score) >= tau)).mean().alias("keep_rate")
                                     ).sort("keep_rate")


def first_vs_later(frame: pl.DataFrame, tau: float = 0.5, score: str = "score") -> pl.DataFrame:
    """Pruned share at the first compaction of a run against later ones.

    Parameters
    ----------
    frame : polars.DataFrame
        Scored entries with ``boundary`` (0 for a run's first compaction).
    tau : float, default 0.5
        The pruning threshold.
    score : str, default "score"
        The score column.

    Returns
    -------
    polars.DataFrame
        Rows ``compaction`` (``first``, ``later``), ``entries`` and ``pruned`` (the share scored below tau).
    """
    return frame.with_columns(pl.when(pl.col("boundary") == 0).then(pl.lit("first")).otherwise(pl.lit("later"))
                              .alias("compaction")).group_by("compaction", maintain_order=True).agg(
        pl.len().alias("entries"), (pl.col(score).is_not_null() & (pl.col(score) < tau)).mean().alias("pruned")
    ).sort("compaction")


def decision_flips(scores: pl.DataFrame, tau: float = 0.5, reference: pl.DataFrame | None = None,
                   low: float = 0.2, by: str | Sequence[str] | None = None) -> pl.DataFrame:
    """SJC Section 5.4: share of entries whose keep/prune decision flips across repeated requests.

    ``scores`` holds several ``repeat`` values per (entry, judge); an entry flips when its
    repeats do not all fall on the same side of ``tau`` (null answers are left out, and an
    entry needs two usable repeats to count). With ``reference`` (``entry_id``, ``score`` of a
    reference judge) the share is also given among entries the reference scores below
    ``low`` -- SJC's question whether the judge is stable where it matters for pruning.
    ``by`` names columns of ``scores`` (for example ``section``) to report per group.
    One row per judge (and group): ``entries``, ``flip_share`` and, with a reference,
    ``entries_ref_low``, ``flip_share_ref_low``.

    Parameters
    ----------
    scores : polars.DataFrame
        The scores table with several ``repeat`` values per (entry, judge).
    tau : float, default 0.5
        The keep/prune threshold.
    reference : polars.DataFrame, optional
        ``entry_id`` and ``score`` of a reference judge.
    low : float, default 0.2
        The reference score below which an entry is a pruning candidate.
    by : str or sequence of str, optional
        Columns of ``scores`` to report per group.

    Returns
    -------
    polars.DataFrame
        One row per judge (and group) with the columns above.

    References
    ----------
    SJC section 5.4.
    """
    groups = ["judge", *([by] if isinstance(by, str) else list(by or []))]
    d = scores.drop_nulls("score").with_columns((pl.col("score") >= tau).alias("_keep"))
    per = d.group_by(*groups, "entry_id", maintain_order=True).agg(
        pl.len().alias("_n"), pl.col("_keep").n_unique().alias("_k")).filter(pl.col("_n") > 1)
    out = per.group_by(*groups, maintain_order=True).agg(pl.len().alias("entries"),
                                                          (pl.col("_k") > 1).mean().alias("flip_share"))
    if reference is not None:
        ref = reference.select("entry_id", pl.col("score").alias("_ref"))
        low_part = per.join(ref, on="entry_id").filter(pl.col("_ref") < low).group_by(*groups, maintain_order=True).agg(
            pl.len().alias("entries_ref_low"), (pl.col("_k") > 1).mean().alias("flip_share_ref_low"))
        out = out.join(low_part, on=groups, how="left")
    return out.sort(groups)


class ThresholdCounts:
    """What the threshold analyses read from a log's entries, counted a batch at a time, so a log of any size is
    analysed in the memory of one batch: the pruned-fraction sweep per scenario (SJC Figure 3 right), the score
    histograms per section (Figure 3 left), the score mass, keep rates and first-against-later shares.

    Feed it frames with ``score``, ``section``, ``boundary``, the ``cluster`` column and (with ``setting``) the
    setting column, in the log's row order (:meth:`add`). Each method returns what the function of the same name
    returns for all the rows at once: the counts are exact (each tau's count of scores below it, per scenario),
    so the tables and figures are identical, not approximations (tests hold them to the whole-frame functions).
    """

    def __init__(self, taus: npt.ArrayLike = np.linspace(0, 1, 101), *, tau: float = 0.5,
                 setting: str | None = None, cluster: str = "scenario_id", score: str = "score",
                 bins: int = 20) -> None:
        self.taus = np.asarray(taus, dtype=np.float64)
        self.tau, self.setting, self.cluster, self.score, self.bins = tau, setting, cluster, score, bins
        self.edges = np.linspace(0, 1, bins + 1)
        self._order = np.argsort(self.taus, kind="stable")
        self._below: dict[object, dict[str, np.ndarray]] = {}  # setting -> cluster -> counts per tau slot
        self._rows: dict[object, int] = {}
        self._hist: dict[str, np.ndarray] = {}
        self._mass: dict[str, list[int]] = {}  # section -> non-null, >= 0.8, < 0.2, in [0.3, 0.7]
        self._keep: dict[str, list[int]] = {}  # section -> entries, kept at tau
        self._first: dict[str, list[int]] = {}  # first / later -> entries, pruned at tau

    def add(self, frame: pl.DataFrame) -> None:
        """Count one batch of rows."""
        if not frame.height:
            return
        s = frame.get_column(self.score).cast(pl.Float64)
        groups = [(None, frame)] if self.setting is None else [
            (k[0], g) for k, g in frame.partition_by(self.setting, as_dict=True, maintain_order=True).items()]
        for name, g in groups:
            values = g.get_column(self.score).cast(pl.Float64).fill_null(np.inf).to_numpy()
            pos = np.searchsorted(self.taus[self._order], values, side="right")
            clusters = g.get_column(self.cluster).cast(pl.Utf8).fill_null("?")
            per = self._below.setdefault(name, {})
            self._rows[name] = self._rows.get(name, 0) + g.height
            counted = pl.DataFrame({"c": clusters, "p": pos}).group_by("c", "p").len()
            for c, p, n in counted.iter_rows():
                per.setdefault(c, np.zeros(len(self.taus) + 1))[p] += n
        for (section,), g in frame.with_columns(s.alias("_s")).group_by("section", maintain_order=True):
            x = g.get_column("_s")
            known = x.drop_nulls().to_numpy()
            self._hist[section] = self._hist.get(section, np.zeros(self.bins, dtype=np.int64)) + \
                np.histogram(known, bins=self.bins, range=(0, 1))[0]
            mass = self._mass.setdefault(section, [0, 0, 0, 0])
            mass[0] += len(known)
            mass[1] += int((known >= 0.8).sum())
            mass[2] += int((known < 0.2).sum())
            mass[3] += int(((known >= 0.3) & (known <= 0.7)).sum())
            keep = self._keep.setdefault(section, [0, 0])
            keep[0] += g.height
            keep[1] += int((x.is_null() | (x >= self.tau)).sum())
        first = frame.with_columns(s.alias("_s"), pl.when(pl.col("boundary") == 0).then(pl.lit("first"))
                                   .otherwise(pl.lit("later")).alias("_c"))
        for (which,), g in first.group_by("_c", maintain_order=True):
            x = g.get_column("_s")
            counts = self._first.setdefault(which, [0, 0])
            counts[0] += g.height
            counts[1] += int((x.is_not_null() & (x < self.tau)).sum())

    def sweep(self, *, n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0, level: float = 0.95,
              method: str = "percentile") -> pl.DataFrame:
        """:func:`sweep` of every row added."""
        out = []
        for name, per in self._below.items():
            clusters = sorted(per)  # units in the sorted order of the cluster values, as make_units numbers them
            hist = np.stack([per[c] for c in clusters])
            units = Units(np.arange(len(clusters)), np.zeros(len(clusters), dtype=np.int64), len(clusters))
            out.append(_curve(name, self.taus, _below_from_slots(hist, self._order), hist.sum(axis=1), units,
                              self._rows[name], n_boot, seed, level, method))
        return pl.concat(out)

    def score_distribution(self) -> pl.DataFrame:
        """:func:`score_distribution` by section of every row added."""
        def row(name: str, m: Sequence[int]) -> dict[str, object]:
            n = m[0]
            return {"section": name, "n": n, "share_high": m[1] / n if n else None,
                    "share_low": m[2] / n if n else None, "share_middle": m[3] / n if n else None}

        shares = {"share_high": pl.Float64, "share_low": pl.Float64, "share_middle": pl.Float64}
        parts = [pl.DataFrame([row(k, m) for k, m in self._mass.items() if m[0]],
                              schema={"section": pl.Utf8, "n": pl.UInt32, **shares}).sort("section"),
                 pl.DataFrame([row("All", [sum(m[i] for m in self._mass.values()) for i in range(4)])],
                              schema={"section": pl.Utf8, "n": pl.UInt32, **shares})]
        return pl.concat(parts, how="vertical_relaxed")

    def keep_rate_by_section(self) -> pl.DataFrame:
        """:func:`keep_rate_by_section` at this tau of every row added."""
        return pl.DataFrame([{"section": k, "entries": e, "keep_rate": kept / e} for k, (e, kept) in self._keep.items()],
                            schema={"section": pl.Utf8, "entries": pl.UInt32, "keep_rate": pl.Float64}).sort("keep_rate")

    def first_vs_later(self) -> pl.DataFrame:
        """:func:`first_vs_later` at this tau of every row added."""
        return pl.DataFrame([{"compaction": k, "entries": e, "pruned": p / e} for k, (e, p) in self._first.items()],
                            schema={"compaction": pl.Utf8, "entries": pl.UInt32, "pruned": pl.Float64}
                            ).sort("compaction")

    def histogram(self, section: str) -> np.ndarray:
        """The section's count of known scores in each of ``bins`` equal bins over [0, 1] (``edges``), as
        ``numpy.histogram`` counts them."""
        return self._hist.get(section, np.zeros(self.bins, dtype=np.int64))


__all__ = ["decision_flips", "first_vs_later", "keep_rate_by_section", "largest_change", "score_distribution",
           "sweep", "ThresholdCounts"]
