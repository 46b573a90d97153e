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

from workbench.bootstrap import DEFAULT_N_BOOT, INTERVAL_SCHEMA, Seed, bootstrap
from workbench.vocabulary import REASONING_SECTIONS, SECTIONS
from workbench.summary import normalise

REASONING = "Reasoning (Decisions + Open TODOs)"
Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


def support_from_scores(entries: Frame, scores: pl.DataFrame | pl.LazyFrame, tau: float = 0.5,
                        judge: str | None = None) -> Frame:
    """Add ``supported`` = score >= tau (SJC Section 3: below 0.5 is unsupported); null without a score.

    Entries keep their order. Lazy ``entries`` (a large log's, :func:`workbench.datasets.load_for_analysis`
    with ``columns``) give a lazy result, to be collected with only the columns an analysis needs.
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
    """Entries per section (``section``, ``entries``), most first: the first column of SJC Table 2."""
    return entries.group_by("section", maintain_order=True).agg(pl.len().alias("entries")).sort(
        ["entries", "section"], descending=[True, False])


def entries_by_role(entries: pl.DataFrame, supported: str = "supported") -> pl.DataFrame:
    """SJC Table 2's question for any compressor: entries and unsupported entries per role (and schema).

    Roles come from each entry's schema (:func:`workbench.entries.with_roles`), so OpenClaw's
    Open TODOs and Claude Code's Pending Tasks are both ``forward``. Columns ``schema``,
    ``role``, ``entries``, ``unsupported``, ``unsupported_share`` (null without a ``supported`` column).
    """
    from workbench.entries import with_roles

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
    session, whose entries are not independent); an entry without one is its own cluster. Percentile interval
    from the one engine (:func:`workbench.bootstrap.bootstrap`); entries without a support value are left out.
    """
    from workbench.entries import with_roles

    e = with_roles(entries).filter(pl.col(supported).is_not_null())
    unit = pl.col(clusters).cast(pl.Utf8).fill_null(pl.col("entry_id")) if clusters in e.columns else pl.col("entry_id")
    rows = []
    for (schema, role), g in e.with_columns(unit.alias("_unit")).group_by("schema", "role", maintain_order=True):
        miss = (~g.get_column(supported)).cast(pl.Float64).to_numpy()
        units = g.get_column("_unit").to_numpy()
        r = bootstrap(np.mean, miss, clusters=units, n_boot=n_boot, seed=seed, level=level)
        row = r.row()
        if r.n_clusters < 2:  # one session: resampling it only repeats it, so there is no interval to give
            row.update(ci_low=float("nan"), ci_high=float("nan"))
        rows.append({"schema": schema, "role": role, "entries": g.height, "unsupported": int(miss.sum()),
                     "clusters": r.n_clusters, **row})
    out = pl.DataFrame(rows, schema={"schema": pl.Utf8, "role": pl.Utf8, "entries": pl.Int64,
                                     "unsupported": pl.Int64, "clusters": pl.Int64, **INTERVAL_SCHEMA})
    return out.sort("schema", "role")


def entries_by_section(entries: pl.DataFrame, supported: str = "supported") -> pl.DataFrame:
    """SJC Table 2: entries and the unsupported share per section, reasoning entries and all.

    Columns: ``section``, ``entries``, ``share`` (of all entries), ``unsupported``
    (count), ``unsupported_share`` (among the section's entries with a support value).
    """
    e = entries.with_columns((~pl.col(supported)).cast(pl.Int64).alias("_u"),
                             pl.col(supported).is_not_null().cast(pl.Int64).alias("_k"))
    total = e.height

    def row(name: str, sub: pl.DataFrame) -> dict[str, object]:
        known = int(sub.get_column("_k").sum()) if sub.height else 0
        uns = int(sub.get_column("_u").fill_null(0).sum()) if sub.height else 0
        return {"section": name, "entries": sub.height, "share": sub.height / total if total else float("nan"),
                "unsupported": uns, "unsupported_share": uns / known if known else float("nan")}

    present = e.get_column("section").unique().to_list()
    order = [s for s in SECTIONS if s in present] + sorted(s for s in present if s not in SECTIONS)
    rows = [row(s, e.filter(pl.col("section") == s)) for s in order]
    rows.append(row(REASONING, e.filter(pl.col("section").is_in(list(REASONING_SECTIONS)))))
    rows.append(row("All", e))
    return pl.DataFrame(rows)


def by_boundary(entries: pl.DataFrame, supported: str = "supported", max_boundary: int | None = None) -> pl.DataFrame:
    """SJC Table 9: per compression boundary (1-based ``k``; ``max_boundary`` pools the tail).

    ``summaries``: number of summaries; ``unsupported_all`` / ``unsupported_reasoning``:
    unsupported share among all and among reasoning entries; ``unsupported_reasoning_per_summary``.
    """
    k = pl.col("boundary") + 1
    if max_boundary is not None:
        k = pl.min_horizontal(k, pl.lit(max_boundary))
    e = entries.with_columns(k.alias("k"), pl.col("section").is_in(list(REASONING_SECTIONS)).alias("_r"),
                             (~pl.col(supported)).alias("_u"))
    per_summary = e.group_by("run_id", "boundary", "k", maintain_order=True).agg((pl.col("_u") & pl.col("_r")).sum().alias("_ur"))
    a = e.group_by("k", maintain_order=True).agg(pl.col("_u").mean().alias("unsupported_all"),
                            pl.col("_u").filter(pl.col("_r")).mean().alias("unsupported_reasoning"),
                            pl.len().alias("entries"))
    b = per_summary.group_by("k", maintain_order=True).agg(pl.len().alias("summaries"),
                                      pl.col("_ur").mean().alias("unsupported_reasoning_per_summary"))
    return b.join(a, on="k").select("k", "summaries", "entries", "unsupported_all", "unsupported_reasoning",
                                    "unsupported_reasoning_per_summary").sort("k")


def match_next(prev: list[str], nxt: list[str], threshold: float = 90.0) -> list[tuple[int | None, bool]]:
    """For each entry of ``prev``, the index of its match in ``nxt`` and whether it matched exactly.

    First by normalised text (bullet dropped, whitespace folded, lower case), then by
    character similarity (``rapidfuzz.fuzz.ratio`` >= 90, SJC Appendix C); each entry of
    ``nxt`` is matched at most once.
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
    """
    reason = entries.filter(pl.col("section").is_in(list(REASONING_SECTIONS))).sort("run_id", "boundary", "position")
    exact = fuzzy = 0
    counts: dict[tuple[int, bool], list[int]] = {}
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
    rows = [{"d": d, "supported": s, "entries": n, "present": p, "share": p / n if n else float("nan")}
            for (d, s), (n, p) in sorted(counts.items())]
    frame = pl.DataFrame(rows, schema={"d": pl.Int64, "supported": pl.Boolean, "entries": pl.Int64,
                                       "present": pl.Int64, "share": pl.Float64})
    return frame, exact / (exact + fuzzy) if exact + fuzzy else float("nan")
