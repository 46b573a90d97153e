"""What summaries are made of (SJC Section 3, Appendix C: Tables 2, 9 and 10).

Every function takes the ``entries`` table plus a boolean ``supported`` column (from a
judge at tau with :func:`support_from_scores`, from labels, or from synthetic ground
truth) and returns a tidy frame.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import polars as pl
from rapidfuzz import fuzz

from workbench.stats._bootstrap import DEFAULT_N_BOOT, INTERVAL_SCHEMA, Seed
from workbench.tables._vocabulary import REASONING_SECTIONS, SECTIONS
from workbench.summaries._grammar import normalise

REASONING = "Reasoning (Decisions + Open TODOs)"
Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


def support_from_scores(entries: Frame, scores: pl.DataFrame | pl.LazyFrame, tau: float = 0.5,
                        judge: str | None = None) -> Frame:
    """Add ``supported`` = score >= tau (SJC Section 3: below 0.5 is unsupported); null without a score.

    Entries keep their order. Lazy ``entries`` (a large log's, :func:`workbench.datasets.load`
    with ``columns``) give a lazy result, to be collected with only the columns an analysis needs.

    Parameters
    ----------
    entries : polars.DataFrame or polars.LazyFrame
        The entries table.
    scores : polars.DataFrame or polars.LazyFrame
        The scores table.
    tau : float, default 0.5
        Scores at or above tau are supported.
    judge : str, optional
        The judge whose scores are used (required when several are present).

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        ``entries`` with ``supported``, of the same kind as ``entries``.

    References
    ----------
    SJC section 3.
    """
    sc = scores if judge is None else scores.filter(pl.col("judge") == judge)
    if "repeat" in sc.collect_schema().names():
        sc = sc.filter(pl.col("repeat").fill_null(0) == 0)
    sc = sc.select("entry_id", "score")
    if isinstance(entries, pl.LazyFrame):  # only the scores of these entries are held (a log's are many more)
        sc = sc.lazy().join(entries.select("entry_id"), on="entry_id", how="semi")
    elif isinstance(sc, pl.LazyFrame):
        sc = sc.collect()
    sc = sc.unique("entry_id", keep="first")
    return entries.join(sc, on="entry_id", how="left", maintain_order="left").with_columns(
        (pl.col("score") >= tau).alias("supported"))


def section_counts(entries: pl.DataFrame) -> pl.DataFrame:
    """Entries per section (``section``, ``entries``), most first: the first column of SJC Table 2.

    Parameters
    ----------
    entries : polars.DataFrame
        The entries table.

    Returns
    -------
    polars.DataFrame
        ``section`` and ``entries``, most first.

    References
    ----------
    SJC Table 2.
    """
    return entries.group_by("section", maintain_order=True).agg(pl.len().alias("entries")).sort(
        ["entries", "section"], descending=[True, False])


def entries_by_role(entries: pl.DataFrame, supported: str = "supported") -> pl.DataFrame:
    """SJC Table 2's question for any compressor: entries and unsupported entries per role (and schema).

    Roles come from each entry's schema (:func:`workbench.summaries.with_roles`), so OpenClaw's
    Open TODOs and Claude Code's Pending Tasks are both ``forward``. Columns ``schema``,
    ``role``, ``entries``, ``unsupported``, ``unsupported_share`` (null without a ``supported`` column).

    Parameters
    ----------
    entries : polars.DataFrame
        The entries table.
    supported : str, default "supported"
        The support column.

    Returns
    -------
    polars.DataFrame
        One row per (schema, role) with the columns above.

    References
    ----------
    SJC Table 2.
    """
    from workbench.summaries._entries import with_roles

    e = with_roles(entries)
    has = supported in e.columns
    aggs = [pl.len().alias("entries")]
    if has:
        aggs += [(~pl.col(supported).fill_null(True)).sum().alias("unsupported")]
    out = e.group_by("schema", "role", maintain_order=True).agg(*aggs).sort("schema", "role")
    if has:
        out = out.with_columns((pl.col("unsupported") / pl.col("entries")).alias("unsupported_share"))
    return out


def unsupported_by_role(entries: pl.DataFrame, clusters: str = "scenario_id", supported: str = "supported", *,
                        n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0, level: float = 0.95) -> pl.DataFrame:
    """The unsupported share of each role's entries (per schema) with a cluster-bootstrap interval: ``schema``,
    ``role``, ``entries``, ``unsupported``, ``clusters`` (how many were resampled), then the interval columns
    (``estimate`` = the share; ``ci_low``/``ci_high`` NaN when the role's entries come from one cluster).

    ``clusters`` names the column whose values are resampled (``scenario_id``: for coding-agent sessions the
    session, whose entries are not independent); an entry without one is its own cluster. Percentile interval;
    entries without a support value are left out. The same as :func:`unsupported_from_counts` of
    :func:`unsupported_counts`, which a caller reading entries a batch at a time adds up.

    Parameters
    ----------
    entries : polars.DataFrame
        The entries table with the support column.
    clusters : str, default "scenario_id"
        The resampled cluster column.
    supported : str, default "supported"
        The support column.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the intervals.

    Returns
    -------
    polars.DataFrame
        One row per (schema, role) with the columns above.
    """
    return unsupported_from_counts(unsupported_counts(entries, clusters, supported), n_boot=n_boot, seed=seed,
                                   level=level)


def unsupported_counts(entries: pl.DataFrame, clusters: str = "scenario_id",
                       supported: str = "supported") -> pl.DataFrame:
    """Per ``schema``, ``role`` and cluster (``unit``, :func:`unsupported_by_role`'s ``clusters``): the
    ``entries`` with a support value and how many of them are ``unsupported``. Counts of several batches of
    entries are concatenated as they are; :func:`unsupported_from_counts` adds them up.

    Parameters
    ----------
    entries : polars.DataFrame
        The entries table with the support column.
    clusters : str, default "scenario_id"
        The cluster column.
    supported : str, default "supported"
        The support column.

    Returns
    -------
    polars.DataFrame
        ``schema``, ``role``, ``unit``, ``entries``, ``unsupported``.
    """
    from workbench.summaries._entries import with_roles

    e = with_roles(entries).filter(pl.col(supported).is_not_null())
    unit = pl.col(clusters).cast(pl.Utf8).fill_null(pl.col("entry_id")) if clusters in e.columns else pl.col("entry_id")
    return e.group_by("schema", "role", unit.alias("unit")).agg(
        pl.len().cast(pl.Int64).alias("entries"), (~pl.col(supported)).sum().cast(pl.Int64).alias("unsupported"))


def unsupported_from_counts(counts: pl.DataFrame, *, n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0,
                            level: float = 0.95) -> pl.DataFrame:
    """:func:`unsupported_by_role` from :func:`unsupported_counts` (rows of the same unit added up).

    The bootstrap is :func:`workbench.stats.bootstrap`'s over the entries, computed from the clusters' sums:
    the units are numbered in sorted order and drawn with the same generator, and a resample's share is its
    unsupported entries over its entries, the mean of its rows (both sums exact integers), so the interval is the
    same to the bit while the entries are never held.

    Parameters
    ----------
    counts : polars.DataFrame
        :func:`unsupported_counts` of one or more batches, concatenated.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the intervals.

    Returns
    -------
    polars.DataFrame
        :func:`unsupported_by_role`'s columns.
    """
    from workbench.stats._bootstrap import BootstrapResult, as_generator, interval, make_units, resample_counts

    summed = counts.group_by("schema", "role", "unit").agg(pl.col("entries", "unsupported").sum())
    rows = []
    for (schema, role), g in summed.group_by("schema", "role"):
        g = g.sort("unit")  # make_units numbers clusters in sorted order
        n = g.get_column("entries").to_numpy().astype(np.float64)
        miss = g.get_column("unsupported").to_numpy().astype(np.float64)
        units = make_units(np.arange(g.height))
        draws = resample_counts(units, n_boot, as_generator(seed))
        estimate = float(miss.sum() / n.sum())
        # one session: resampling it only repeats it, so there is no interval to give (NaN, with the reason)
        iv = interval(estimate, (draws @ miss) / (draws @ n), level, "percentile", n_clusters=units.n_units)
        r = BootstrapResult(estimate, iv.ci_low, iv.ci_high, int(n.sum()), None, n_boot, "percentile", level,
                            iv.n_degenerate, units.n_units, reason=iv.reason)
        row = r.row()
        rows.append({"schema": schema, "role": role, "entries": int(n.sum()), "unsupported": int(miss.sum()),
                     "clusters": r.n_clusters, **row})
    out = pl.DataFrame(rows, schema={"schema": pl.Utf8, "role": pl.Utf8, "entries": pl.Int64,
                                     "unsupported": pl.Int64, "clusters": pl.Int64, **INTERVAL_SCHEMA})
    return out.sort("schema", "role")


def entries_by_section(entries: pl.DataFrame, supported: str = "supported") -> pl.DataFrame:
    """SJC Table 2: entries and the unsupported share per section, reasoning entries and all.

    Columns: ``section``, ``entries``, ``share`` (of all entries), ``unsupported``
    (count), ``unsupported_share`` (among the section's entries with a support value).

    Parameters
    ----------
    entries : polars.DataFrame
        The entries table.
    supported : str, default "supported"
        The support column.

    Returns
    -------
    polars.DataFrame
        One row per section with the columns above.

    References
    ----------
    SJC Table 2.
    """
    return _section_table(_section_counts(entries, supported))


def _section_counts(entries: pl.DataFrame, supported: str) -> pl.DataFrame:
    """Per section: entries (``n``), entries with a support value (``known``), unsupported ones (``unsupported``):
    what Table 2 is made of, summed over batches by :class:`CompositionCounts`."""
    return entries.group_by("section").agg(pl.len().cast(pl.Int64).alias("n"),
                                           pl.col(supported).is_not_null().sum().cast(pl.Int64).alias("known"),
                                           (~pl.col(supported)).sum().cast(pl.Int64).alias("unsupported"))


def _section_table(counts: pl.DataFrame) -> pl.DataFrame:
    counts = counts.group_by("section").agg(pl.col("n", "known", "unsupported").sum())
    total = int(counts.get_column("n").sum())
    per = {r["section"]: r for r in counts.iter_rows(named=True)}

    def row(name: str, sections: list[str]) -> dict[str, object]:
        n, known, uns = (sum(int(per[s][c]) for s in sections if s in per) for c in ("n", "known", "unsupported"))
        return {"section": name, "entries": n, "share": n / total if total else float("nan"),
                "unsupported": uns, "unsupported_share": uns / known if known else float("nan")}

    order = [s for s in SECTIONS if s in per] + sorted(s for s in per if s not in SECTIONS)
    rows = [row(s, [s]) for s in order]
    rows.append(row(REASONING, list(REASONING_SECTIONS)))
    rows.append(row("All", list(per)))
    return pl.DataFrame(rows)


def by_boundary(entries: pl.DataFrame, supported: str = "supported", max_boundary: int | None = None) -> pl.DataFrame:
    """SJC Table 9: per compression boundary (1-based ``k``; ``max_boundary`` pools the tail).

    ``summaries``: number of summaries; ``unsupported_all`` / ``unsupported_reasoning``:
    unsupported share among all and among reasoning entries (of those with a support value);
    ``unsupported_reasoning_per_summary``.

    Parameters
    ----------
    entries : polars.DataFrame
        The entries table with ``boundary``, ``role`` and the support column.
    supported : str, default "supported"
        The support column.
    max_boundary : int, optional
        The last boundary shown; later ones are pooled into it.

    Returns
    -------
    polars.DataFrame
        One row per boundary ``k`` with the columns above.

    References
    ----------
    SJC Table 9.
    """
    return _boundary_table(_boundary_counts(entries, supported, max_boundary))


def _boundary_counts(entries: pl.DataFrame, supported: str, max_boundary: int | None) -> pl.DataFrame:
    """Per ``k``: summaries, the sum over them of their unsupported reasoning entries, and for all and for reasoning
    entries how many have a support value and how many of those are unsupported (a summary's entries must all be in
    ``entries``: :class:`CompositionCounts` is given whole runs)."""
    k = pl.col("boundary") + 1
    if max_boundary is not None:
        k = pl.min_horizontal(k, pl.lit(max_boundary))
    e = entries.with_columns(k.alias("k"), pl.col("section").is_in(list(REASONING_SECTIONS)).alias("_r"),
                             (~pl.col(supported)).alias("_u"))
    per_summary = (e.group_by("run_id", "boundary", "k")
                   .agg((pl.col("_u") & pl.col("_r")).sum().alias("_ur"))
                   .group_by("k").agg(pl.len().cast(pl.Int64).alias("summaries"),
                                      pl.col("_ur").sum().cast(pl.Int64).alias("ur_sum")))
    counted = e.group_by("k").agg(pl.len().cast(pl.Int64).alias("entries"),
                                  pl.col("_u").is_not_null().sum().cast(pl.Int64).alias("u_known"),
                                  pl.col("_u").sum().cast(pl.Int64).alias("u_sum"),
                                  pl.col("_u").filter(pl.col("_r")).is_not_null().sum().cast(pl.Int64).alias("r_known"),
                                  pl.col("_u").filter(pl.col("_r")).sum().cast(pl.Int64).alias("r_sum"))
    return per_summary.join(counted, on="k")


def _boundary_table(counts: pl.DataFrame) -> pl.DataFrame:
    c = counts.group_by("k").agg(pl.exclude("k").sum())

    def share(num: str, den: str) -> pl.Expr:
        return pl.when(pl.col(den) > 0).then(pl.col(num) / pl.col(den)).otherwise(None)

    return c.select("k", pl.col("summaries").cast(pl.UInt32), pl.col("entries").cast(pl.UInt32),
                    share("u_sum", "u_known").alias("unsupported_all"),
                    share("r_sum", "r_known").alias("unsupported_reasoning"),
                    (pl.col("ur_sum") / pl.col("summaries")).alias("unsupported_reasoning_per_summary")).sort("k")


def match_next(prev: list[str], nxt: list[str], threshold: float = 90.0) -> list[tuple[int | None, bool]]:
    """For each entry of ``prev``, the index of its match in ``nxt`` and whether it matched exactly.

    First by normalised text (bullet dropped, whitespace folded, lower case), then by
    character similarity (``rapidfuzz.fuzz.ratio`` >= 90, SJC Appendix C); each entry of
    ``nxt`` is matched at most once.

    Parameters
    ----------
    prev : list of str
        The entries of a summary.
    nxt : list of str
        The entries of the next summary.
    threshold : float, default 90.0
        The similarity (0-100) a fuzzy match needs.

    Returns
    -------
    list of (int or None, bool)
        For each entry of ``prev``: its match's index in ``nxt`` (None without one) and whether it was exact.

    References
    ----------
    SJC Appendix C.
    """
    norm_next = [normalise(t) for t in nxt]
    used: set[int] = set()
    out: list[tuple[int | None, bool]] = []
    for t in prev:
        nt = normalise(t)
        j = next((j for j, x in enumerate(norm_next) if j not in used and x == nt), None)
        if j is not None:
            used.add(j)
            out.append((j, True))
            continue
        best, best_score = None, threshold
        for j, x in enumerate(norm_next):
            if j in used:
                continue
            score = fuzz.ratio(nt, x)
            if score >= best_score:
                best, best_score = j, score
        if best is not None:
            used.add(best)
        out.append((best, False) if best is not None else (None, False))
    return out


def persistence(entries: pl.DataFrame, supported: str = "supported", max_d: int = 5,
                threshold: float = 90.0) -> tuple[pl.DataFrame, float]:
    """SJC Table 10: share of reasoning entries still present d summaries after they first appear.

    An entry first appears at a boundary where it does not match the run's previous summary;
    it is followed forward summary by summary (exact normalised match, then similarity >= 90).
    Returns the frame (``d``, ``supported``, ``entries``, ``present``, ``share``) and the
    share of matches that were exact.

    Parameters
    ----------
    entries : polars.DataFrame
        The entries table with the support column.
    supported : str, default "supported"
        The support column.
    max_d : int, default 5
        The largest distance followed.
    threshold : float, default 90.0
        The similarity a fuzzy match needs.

    Returns
    -------
    tuple of (polars.DataFrame, float)
        The persistence frame and the share of exact matches.

    References
    ----------
    SJC Table 10 and Appendix C.
    """
    counts: dict[tuple[int, bool], list[int]] = {}
    matches = _count_persistence(entries, counts, supported, max_d, threshold)
    return _persistence_table(counts, matches)


def _count_persistence(entries: pl.DataFrame, counts: dict[tuple[int, bool], list[int]], supported: str,
                       max_d: int, threshold: float) -> tuple[int, int]:
    """Add each run's (d, supported) -> [followed, present] to ``counts``; the (exact, fuzzy) matches made."""
    reason = entries.filter(pl.col("section").is_in(list(REASONING_SECTIONS))).sort("run_id", "boundary", "position")
    exact = fuzzy = 0
    for (_run,), g in reason.partition_by("run_id", as_dict=True, maintain_order=True).items():
        bounds = sorted(g.get_column("boundary").unique().to_list())
        texts = {b: g.filter(pl.col("boundary") == b) for b in bounds}
        # links[b][i] = index in boundary b+1 of entry i of boundary b
        links: dict[int, list[int | None]] = {}
        for b, b2 in zip(bounds, bounds[1:], strict=False):
            if b2 != b + 1:
                continue
            m = match_next(texts[b].get_column("text").to_list(), texts[b2].get_column("text").to_list(), threshold)
            links[b] = [j for j, _ in m]
            exact += sum(1 for j, ex in m if j is not None and ex)
            fuzzy += sum(1 for j, ex in m if j is not None and not ex)
        carried_in: dict[int, set[int]] = {b: set() for b in bounds}
        for b, lk in links.items():
            carried_in[b + 1] = {j for j in lk if j is not None}
        for b in bounds:
            sup = texts[b].get_column(supported).to_list()
            for i in range(texts[b].height):
                if i in carried_in[b] or sup[i] is None:
                    continue  # not a first appearance, or no support value
                j: int | None = i
                for d in range(1, max_d + 1):
                    if b + d > bounds[-1] or b + d not in texts:
                        break  # no summary d steps later: not counted for this d
                    j = links.get(b + d - 1, [None] * (texts[b + d - 1].height))[j] if j is not None else None
                    counts.setdefault((d, bool(sup[i])), [0, 0])
                    counts[(d, bool(sup[i]))][0] += 1
                    counts[(d, bool(sup[i]))][1] += int(j is not None)
    return exact, fuzzy


def _persistence_table(counts: dict[tuple[int, bool], list[int]], matches: tuple[int, int]) -> tuple[pl.DataFrame, float]:
    exact, fuzzy = matches
    rows = [{"d": d, "supported": s, "entries": n, "present": p, "share": p / n if n else float("nan")}
            for (d, s), (n, p) in sorted(counts.items())]
    frame = pl.DataFrame(rows, schema={"d": pl.Int64, "supported": pl.Boolean, "entries": pl.Int64,
                                       "present": pl.Int64, "share": pl.Float64})
    return frame, exact / (exact + fuzzy) if exact + fuzzy else float("nan")


class CompositionCounts:
    """SJC Tables 2, 9 and 10 counted a batch of runs at a time (:func:`workbench.tables.batches_by_run`), so a
    log of any size is summarised in the memory of one batch; exact: the same tables as :func:`entries_by_section`,
    :func:`by_boundary` and :func:`persistence` on all the entries at once, as long as each batch holds whole runs.

    ``add`` takes entries with a ``supported`` column; Table 2 is also counted for every column of ``also`` a batch
    has (``gt_supported``: the testbed's ground truth).
    """

    def __init__(self, *, max_boundary: int | None = None, max_d: int = 5, threshold: float = 90.0,
                 also: tuple[str, ...] = ("gt_supported",)) -> None:
        self.max_boundary, self.max_d, self.threshold, self.also = max_boundary, max_d, threshold, also
        self._sections: dict[str, list[pl.DataFrame]] = {}
        self._boundaries: list[pl.DataFrame] = []
        self._persistence: dict[tuple[int, bool], list[int]] = {}
        self._matches = (0, 0)

    def add(self, entries: pl.DataFrame) -> None:
        for column in ("supported", *self.also):
            if column in entries.columns:
                self._sections.setdefault(column, []).append(_section_counts(entries, column))
        self._boundaries.append(_boundary_counts(entries, "supported", self.max_boundary))
        exact, fuzzy = _count_persistence(entries, self._persistence, "supported", self.max_d, self.threshold)
        self._matches = (self._matches[0] + exact, self._matches[1] + fuzzy)

    def entries_by_section(self, supported: str = "supported") -> pl.DataFrame:
        """Table 2 (:func:`entries_by_section`) by ``supported`` (or a column of ``also``)."""
        return _section_table(pl.concat(self._sections[supported]))

    def has(self, supported: str) -> bool:
        """Whether the batches had the column ``supported``."""
        return supported in self._sections

    def by_boundary(self) -> pl.DataFrame:
        """Table 9 (:func:`by_boundary`)."""
        return _boundary_table(pl.concat(self._boundaries))

    def persistence(self) -> tuple[pl.DataFrame, float]:
        """Table 10 and the share of exact matches (:func:`persistence`)."""
        return _persistence_table(self._persistence, self._matches)


__all__ = ["by_boundary", "CompositionCounts", "entries_by_role", "entries_by_section", "match_next", "persistence",
           "REASONING", "section_counts", "support_from_scores", "unsupported_by_role", "unsupported_counts",
           "unsupported_from_counts"]
