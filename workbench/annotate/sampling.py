"""Validation samples for labeling (SJC Appendix G): balanced, seeded, without duplicates.

SJC samples 300 reasoning entries balanced between Decisions and Open TODOs and between
successful and failed runs. :func:`sample_entries` draws ``n`` entries split as evenly as
possible over the strata (the cross product of the ``strata`` columns' values); when a
stratum holds fewer items than its share it takes them all and says so in
``SampleReport.short``, and the remainder is *not* silently filled from other strata
unless ``fill=True``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from workbench.bootstrap import Seed

from workbench.schema import REASONING_SECTIONS


@dataclass(frozen=True)
class SampleReport:
    requested: int
    drawn: int
    per_stratum: dict[tuple[object, ...], int]
    short: dict[tuple[object, ...], tuple[int, int]]  # stratum -> (available, asked)

    def message(self) -> str:
        lines = [f"sampled {self.drawn} of {self.requested} requested"]
        for key, (have, want) in sorted(self.short.items(), key=lambda kv: str(kv[0])):
            lines.append(f"stratum {key}: only {have} item(s), {want} asked")
        return "; ".join(lines)


def entries_with_outcome(entries: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """Entries joined with their run's outcome (``outcome`` = success/failure) and scenario."""
    meta = runs.select("run_id", "task", "scenario_id", pl.when(pl.col("success")).then(pl.lit("success"))
                       .otherwise(pl.lit("failure")).alias("outcome"))
    return entries.join(meta, on="run_id", how="left")


def sample_entries(
    items: pl.DataFrame,
    n: int,
    strata: Sequence[str] = ("section", "outcome"),
    seed: Seed = 0,
    *,
    sections: Sequence[str] | None = REASONING_SECTIONS,
    fill: bool = False,
    id_column: str = "entry_id",
) -> tuple[pl.DataFrame, SampleReport]:
    """Draw a balanced sample of ``n`` items over ``strata``; deterministic given ``seed``.

    An integer seed is mixed with a fixed salt (so the sample differs from other draws made
    with the same integer); a generator is drawn from as it is.
    """
    if sections is not None and "section" in items.columns:
        items = items.filter(pl.col("section").is_in(list(sections)))
    items = items.unique(id_column, keep="first", maintain_order=True).sort(id_column)
    missing = [c for c in strata if c not in items.columns]
    if missing:
        raise ValueError(f"sample: items have no column(s) {missing}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(np.random.SeedSequence([seed, 4242]))
    groups = items.partition_by(list(strata), as_dict=True, maintain_order=True) if strata else {(): items}
    keys = sorted(groups, key=str)
    base, extra = divmod(n, max(1, len(keys)))
    asked = {k: base + (1 if i < extra else 0) for i, k in enumerate(keys)}
    chosen: list[pl.DataFrame] = []
    short: dict[tuple[object, ...], tuple[int, int]] = {}
    per: dict[tuple[object, ...], int] = {}
    leftovers: list[pl.DataFrame] = []
    for k in keys:
        g = groups[k]
        perm = rng.permutation(g.height)
        take = min(asked[k], g.height)
        if take < asked[k]:
            short[k] = (g.height, asked[k])
        chosen.append(g[perm[:take].tolist()])
        leftovers.append(g[perm[take:].tolist()])
        per[k] = take
    sample = pl.concat(chosen) if chosen else items.head(0)
    if fill and sample.height < n and leftovers:
        pool = pl.concat(leftovers)
        perm = rng.permutation(pool.height)[: n - sample.height]
        sample = pl.concat([sample, pool[perm.tolist()]])
    sample = sample.sort(id_column)
    return sample, SampleReport(n, sample.height, per, short)


def sample_items(tables: dict[str, pl.DataFrame], n: int, strata: Sequence[str] = ("section", "outcome"),
                 seed: Seed = 0, *, method: str | None = None, budget: int | None = None,
                 sections: Sequence[str] | None = REASONING_SECTIONS) -> tuple[list[dict[str, object]], SampleReport]:
    """Sample entries of a workbench directory's tables and attach what a labeler needs.

    Each item: ``item_id``, ``text``, ``section``, ``task``, ``previous_summary`` and
    ``evidence`` (the BM25 passages the judge would see) -- and nothing a blind labeler
    must not see: no judge score, no run outcome, no ground truth.
    """
    from workbench.judges.requests import compaction_requests
    from workbench.summary import entries_table

    runs = tables["runs"]
    if method is not None and "method" in runs.columns:
        runs = runs.filter(pl.col("method") == method)
    if budget is not None and "budget" in runs.columns:
        runs = runs.filter(pl.col("budget") == budget)
    entries = tables.get("entries")
    if entries is None:
        entries = entries_table(tables["compactions"])
    entries = entries.join(runs.select("run_id"), on="run_id", how="semi")
    sample, report = sample_entries(entries_with_outcome(entries, runs), n, strata, seed, sections=sections)
    wanted = sample.select("run_id", "boundary").unique()
    comps = tables["compactions"].join(wanted, on=["run_id", "boundary"], how="semi")
    sub = {"runs": runs, "steps": tables.get("steps", pl.DataFrame()), "compactions": comps}
    requests = {(r.run_id, r.boundary): r for r in compaction_requests(sub)}
    items = []
    for row in sample.iter_rows(named=True):
        req = requests[(row["run_id"], row["boundary"])].request
        evidence = [req.evidence[j] for j in req.entry_evidence[row["position"]]] if req.entry_evidence else []
        items.append({"item_id": row["entry_id"], "text": row["text"], "section": row["section"],
                      "task": req.task, "previous_summary": req.previous_summary, "evidence": evidence})
    return items, report
