"""Validation samples for labeling (SJC Appendix G): balanced, seeded, without duplicates.

SJC samples 300 reasoning entries balanced between Decisions and Open TODOs and between
successful and failed runs. :func:`sample_entries` draws ``n`` entries split as evenly as
possible over the strata (the cross product of the ``strata`` columns' values); when a
stratum holds fewer items than its share it takes them all and says so in
``SampleReport.short``, and the remainder is *not* silently filled from other strata
unless ``fill=True``.

:func:`stream_sample` is the draw of ``workbench sample``: the same balance and report, in one streaming pass
that holds at most ``n`` candidates per stratum whatever the log's size. Each item's key is a keyed hash of its
id (BLAKE2b with the seed as key), and a stratum's sample is its items with the smallest keys: the draw depends
on the seed and the ids only, not on the order or the batching of the rows, the platform or PYTHONHASHSEED.
It draws other items than :func:`sample_entries` does for the same seed (which the testbed's simulated
annotators keep using, so the testbed does not change); a sample drawn before keeps its items through
``workbench sample --ids OLD.jsonl``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

import numpy as np
import polars as pl

from workbench.annotate._evaluation import evaluation_material
from workbench.stats._bootstrap import Seed
from workbench.errors import SelectionError
from workbench.tables._frames import collected, rows_of, slices
from workbench.tables._vocabulary import REASONING_SECTIONS

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)


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


def entries_with_outcome(entries: Frame, runs: Frame, how: Literal["left", "inner"] = "left") -> Frame:
    """Entries joined with their run's outcome (``outcome`` = success / failure, ``unknown`` for a run without one,
    as imported sessions are) and scenario (lazy or not);
    ``how="inner"`` keeps only entries of the given runs.

    Parameters
    ----------
    entries : polars.DataFrame or polars.LazyFrame
        The entries table.
    runs : polars.DataFrame or polars.LazyFrame
        The runs table.
    how : {"left", "inner"}, default "left"
        Keep every entry, or only those of the given runs.

    Returns
    -------
    polars.DataFrame or polars.LazyFrame
        The entries with ``outcome`` and ``scenario_id`` (lazy when the entries are).
    """
    have = runs.collect_schema().names()
    meta = runs.select("run_id", *(["task"] if "task" in have else []), "scenario_id",
                       pl.when(pl.col("success").is_null()).then(pl.lit("unknown"))
                       .when(pl.col("success")).then(pl.lit("success")).otherwise(pl.lit("failure")).alias("outcome"))
    return entries.join(meta, on="run_id", how=how)


def _shares(strata: Iterable[tuple[object, ...]], n: int) -> dict[tuple[object, ...], int]:
    """``n`` split as evenly as possible over the strata, in the order of their names; the first ``n mod k`` get
    one more."""
    keys = sorted(strata, key=str)
    base, extra = divmod(n, max(1, len(keys)))
    return {k: base + (1 if i < extra else 0) for i, k in enumerate(keys)}


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

    Parameters
    ----------
    items : polars.DataFrame
        The entries (with the ``strata`` columns; ``outcome`` from :func:`entries_with_outcome`).
    n : int
        The sample size.
    strata : sequence of str, default ("section", "outcome")
        The columns balanced over.
    seed : int or numpy.random.Generator, default 0
        The seed.
    sections : sequence of str or None, default ("Decisions", "Open TODOs")
        Only entries of these sections (None: every section).
    fill : bool, default False
        Fill a stratum short of its share from the others.
    id_column : str, default "entry_id"
        The items' id column.

    Returns
    -------
    sample : polars.DataFrame
        The drawn items.
    report : SampleReport
        How many each stratum had and gave.

    Examples
    --------
    >>> import polars as pl
    >>> from workbench.annotate import sample_entries
    >>> items = pl.DataFrame({"entry_id": [f"e{i}" for i in range(40)], "section": ["Decisions", "Open TODOs"] * 20, "outcome": ["success"] * 20 + ["failure"] * 20})
    >>> sample, report = sample_entries(items, 8, seed=0)
    >>> sample.group_by("section", "outcome").len().sort("section", "outcome").to_dicts()
    [{'section': 'Decisions', 'outcome': 'failure', 'len': 2}, {'section': 'Decisions', 'outcome': 'success', 'len': 2}, {'section': 'Open TODOs', 'outcome': 'failure', 'len': 2}, {'section': 'Open TODOs', 'outcome': 'success', 'len': 2}]
    """
    if sections is not None and "section" in items.columns:
        items = items.filter(pl.col("section").is_in(list(sections)))
    # sorted by id, each id once (its first row): a stable sort puts a repeated id's rows together, first one first
    # (no hash set of every id, which held 200 bytes an item)
    items = items.sort(id_column, maintain_order=True)
    items = items.filter(pl.col(id_column).ne_missing(pl.col(id_column).shift(1)))
    missing = [c for c in strata if c not in items.columns]
    if missing:
        raise ValueError(f"sample: items have no column(s) {missing}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(np.random.SeedSequence([seed, 4242]))
    groups: dict[tuple[object, ...], pl.DataFrame] = (
        items.partition_by(list(strata), as_dict=True, maintain_order=True) if strata else {(): items})
    asked = _shares(groups, n)
    keys = list(asked)
    chosen: list[pl.DataFrame] = []
    short: dict[tuple[object, ...], tuple[int, int]] = {}
    per: dict[tuple[object, ...], int] = {}
    rest: list[tuple[pl.DataFrame, np.ndarray]] = []  # each stratum's items not drawn, gathered only to fill
    for k in keys:
        g = groups[k]
        perm = rng.permutation(g.height)
        take = min(asked[k], g.height)
        if take < asked[k]:
            short[k] = (g.height, asked[k])
        chosen.append(g[perm[:take]])
        rest.append((g, perm[take:]))
        per[k] = take
    sample = pl.concat(chosen) if chosen else items.head(0)
    if fill and sample.height < n and rest:
        pool = pl.concat([g[idx] for g, idx in rest])
        perm = rng.permutation(pool.height)[: n - sample.height]
        sample = pl.concat([sample, pool[perm.tolist()]])
    sample = sample.sort(id_column)
    return sample, SampleReport(n, sample.height, per, short)


def item_keys(ids: Sequence[str], seed: int) -> np.ndarray:
    """Each id's draw key: the first 8 bytes of BLAKE2b(id, key = the seed), as unsigned 64-bit integers."""
    import hashlib

    salt = int(seed).to_bytes(16, "little", signed=True)
    return np.fromiter((int.from_bytes(hashlib.blake2b(i.encode(), digest_size=8, key=salt).digest(), "little")
                        for i in ids), dtype=np.uint64, count=len(ids))


def stream_sample(items: pl.LazyFrame | pl.DataFrame | Iterable[pl.DataFrame], n: int,
                  strata: Sequence[str] = ("section", "outcome"), seed: Seed = 0, *, fill: bool = False,
                  id_column: str = "entry_id", batch_rows: int = 500_000) -> tuple[pl.DataFrame, SampleReport]:
    """A balanced sample of ``n`` items over ``strata`` in one streaming pass (see the module docstring).

    Reads ``items`` (the id and strata columns: a frame, read ``batch_rows`` rows at a time, or the batches
    themselves) once, keeping per
    stratum the ``n`` items with the smallest keys and the stratum's size; then splits ``n`` as evenly as
    :func:`sample_entries` does (strata in the order of their names), takes each stratum's share by key, reports
    short strata, and with ``fill`` tops up from the items left, smallest keys first. A repeated id counts once,
    in the stratum of its first row. Memory: a batch plus ``n`` rows per stratum.

    Parameters
    ----------
    items : polars.LazyFrame or polars.DataFrame or iterable of polars.DataFrame
        The items (their id and strata columns).
    n : int
        The sample size.
    strata : sequence of str, default ("section", "outcome")
        The columns balanced over.
    seed : int or numpy.random.Generator, default 0
        The seed.
    fill : bool, default False
        Top a short stratum up from the others.
    id_column : str, default "entry_id"
        The items' id column.
    batch_rows : int, default 500000
        Rows read at a time.

    Returns
    -------
    sample : polars.DataFrame
        The drawn items.
    report : SampleReport
        How many each stratum had and gave.
    """
    if isinstance(seed, np.random.Generator):
        seed = int(seed.integers(2**62))
    wanted = list(dict.fromkeys((id_column, *strata)))
    batches = slices(items, batch_rows) if isinstance(items, (pl.DataFrame, pl.LazyFrame)) else iter(items)
    groups = list(strata) if strata else None
    candidates: pl.DataFrame | None = None
    counts: pl.DataFrame | None = None
    empty: pl.DataFrame | None = None
    row = 0
    for batch in batches:
        missing = [c for c in wanted if c not in batch.columns]
        if missing:
            raise ValueError(f"sample: items have no column(s) {missing}")
        batch = batch.select(wanted)
        empty = batch.head(0)
        if not batch.height:
            continue
        batch = batch.with_columns(pl.Series("_key", item_keys(batch.get_column(id_column).to_list(), seed)),
                                   pl.int_range(row, row + batch.height, dtype=pl.Int64).alias("_row"))
        row += batch.height
        pooled = batch if candidates is None else pl.concat([candidates, batch])
        pooled = pooled.sort("_row").unique(id_column, keep="first", maintain_order=True)  # first row of an id
        pooled = pooled.sort("_key", id_column)
        kept = pooled.filter(pl.int_range(pl.len()).over(groups) < n) if groups else pooled.head(n)
        # copied out of the batch: polars' strings are views into their batch's buffers, and a few kept ids
        # would otherwise keep every batch they came from in memory (1 GiB at 37 million entries, measured)
        candidates = pl.DataFrame(kept.to_dict(as_series=False), schema=kept.schema)
        sizes = batch.group_by(groups).len() if groups else pl.DataFrame({"len": [batch.height]})
        if counts is not None:
            both = pl.concat([counts, sizes])
            sizes = both.group_by(groups).agg(pl.col("len").sum()) if groups else both.select(pl.col("len").sum())
        counts = sizes
    if candidates is None or counts is None:
        if empty is None:
            raise ValueError("sample: no items (not even a batch with their columns)")
        return empty, SampleReport(n, 0, {}, {})
    size: dict[tuple[object, ...], int] = (
        {tuple(r[c] for c in strata): int(r["len"]) for r in counts.iter_rows(named=True)} if groups
        else {(): int(counts["len"][0])})
    asked = _shares(size, n)
    keys = list(asked)
    ranked = candidates.with_columns(pl.int_range(pl.len()).over(groups).alias("_rank") if groups
                                     else pl.int_range(pl.len()).alias("_rank"))
    per: dict[tuple[object, ...], int] = {}
    short: dict[tuple[object, ...], tuple[int, int]] = {}
    quota = []
    for k in keys:
        per[k] = min(asked[k], size[k])
        if per[k] < asked[k]:
            short[k] = (size[k], asked[k])
        quota.append({**dict(zip(strata, k, strict=True)), "_quota": per[k]})
    if groups:
        q = pl.DataFrame(quota, schema={**{c: ranked.schema[c] for c in strata}, "_quota": pl.Int64})
        ranked = ranked.join(q, on=groups, how="left", nulls_equal=True)
    else:
        ranked = ranked.with_columns(pl.lit(per[()]).alias("_quota"))
    chosen = ranked.filter(pl.col("_rank") < pl.col("_quota"))
    if fill and chosen.height < n:
        chosen = pl.concat([chosen, ranked.filter(pl.col("_rank") >= pl.col("_quota")).sort("_key", id_column)
                            .head(n - chosen.height)])
    sample = chosen.drop("_key", "_row", "_rank", "_quota").sort(id_column)
    return sample, SampleReport(n, sample.height, per, short)


#: entries read at a time while drawing a sample
SAMPLE_BATCH_ROWS = 200_000

#: what a sample draws from by default, per summary schema: SJC's reasoning sections for OpenClaw; for Claude
#: Code's summaries the record of what happened and the forward-looking sections (the roles that can carry
#: invented content); every entry of a free-text summary
DEFAULT_SELECTION: dict[str, tuple[str, tuple[str, ...]]] = {
    "openclaw": ("section", REASONING_SECTIONS),
    "claude_code": ("role", ("history", "forward")),
    "free_text": ("role", ("other",)),
    "given": ("role", ("other",)),  # a labelled summary's own sentences: every one
}


def default_selection() -> pl.Expr:
    """The entries a sample draws from when neither sections nor roles are named (``DEFAULT_SELECTION``);
    entries written before schemas were recorded count as OpenClaw's."""
    schema = pl.col("schema").fill_null("openclaw")
    return pl.any_horizontal([(schema == name) & pl.col(column).is_in(list(values))
                              for name, (column, values) in DEFAULT_SELECTION.items()])


def selection_help(entries: pl.DataFrame | pl.LazyFrame) -> str:
    """What entries there are (sections and roles by schema), for a message that says which flag selects them."""
    from workbench.summaries._entries import with_roles

    have = with_roles(collected(entries.select(*(c for c in ("section", "role", "schema")
                                                   if c in entries.collect_schema()))))
    if not have.height:
        return "the selected runs have no summary entries"
    parts = []
    for (schema,), g in have.group_by("schema", maintain_order=True):
        sections = sorted(g.get_column("section").unique().to_list())
        roles = sorted(g.get_column("role").unique().to_list())
        parts.append(f"{schema}: sections {sections[:9]}{' ...' if len(sections) > 9 else ''}, roles {roles}")
    return "; ".join(parts) + " (choose with --sections or --roles)"


def sample_items(tables: Mapping[str, pl.DataFrame | pl.LazyFrame], n: int,
                 strata: Sequence[str] = ("section", "outcome"), seed: Seed = 0, *, method: str | None = None,
                 budget: int | None = None, sections: Sequence[str] | None | Literal["auto"] = "auto",
                 roles: Sequence[str] | None = None, only_ids: Sequence[str] | None = None,
                 ) -> tuple[list[dict[str, object]], SampleReport]:
    """Sample entries of a workbench directory's tables and attach what a labeler needs.

    Each item: ``item_id``, ``text``, ``section``, ``task``, ``previous_summary``, ``evidence``
    (the BM25 passages the judge saw, best first: the tables' ``evidence`` table, which the judge writes beside its
    scores; retrieved once here, as the judge would, for data no judge has scored) with ``evidence_sources``, ``run_id``, ``boundary``,
    ``scenario_id`` (the cluster of agreement intervals), ``evaluation`` (the material a
    ``correct`` label is given with, shown only for that field) and, when the runs state one, ``question`` (the
    data set's own question, which the labelers show instead of SJC's) -- and nothing a blind labeler
    must not see: no judge score, no run outcome.

    The draw is :func:`stream_sample`'s: one streaming pass over the entries' ids and strata, holding at most
    ``n`` candidates per stratum, so memory does not grow with the log (``tables`` may be lazy,
    ``pl.scan_parquet``); only the drawn entries' texts, compactions and steps are read after. ``only_ids``
    draws exactly those entries instead (a sample made before, its items with today's evidence).

    A ``method`` or ``budget`` no run has, and ``only_ids`` that are not entries, raise
    :class:`~workbench.errors.SelectionError` naming what there is (a sample of nothing is never drawn silently).

    Which entries: ``sections`` and ``roles`` name them (both: entries in both); with neither (``sections`` left
    at ``"auto"``) the default of each entry's schema (``default_selection``): for the testbed, SJC's
    Decisions and Open TODOs; for Claude Code sessions, the history and forward-looking roles. ``sections=None``
    takes every entry.

    Parameters
    ----------
    tables : mapping of str to polars.DataFrame or polars.LazyFrame
        The loaded tables.
    n : int
        Items to draw.
    strata : sequence of str, default ("section", "outcome")
        Columns the draw is stratified by.
    seed : int or numpy.random.Generator, default 0
        Seed of the draw.
    method : str, optional
        Only this method's runs.
    budget : int, optional
        Only this budget's runs.
    sections : sequence of str or None or "auto", default "auto"
        The sections drawn from; each schema's default with "auto".
    roles : sequence of str, optional
        The roles drawn from.
    only_ids : sequence of str, optional
        Exactly these entries instead of a draw.

    Returns
    -------
    tuple of (list of dict, SampleReport)
        The items and what the draw took from where.
    """
    from workbench.summaries._entries import entries_table
    from workbench.summaries._evidence import entry_evidence

    # the draw reads of the runs only what selects them and what an entry's stratum needs (a large log's runs table
    # is mostly texts and counts); the drawn runs' whole rows are read after
    every_run = tables["runs"].lazy()
    picked = every_run
    have = every_run.collect_schema().names()
    for column, asked in (("method", method), ("budget", budget)):
        if asked is None:
            continue
        present = (sorted(v for v in every_run.select(pl.col(column).unique()).collect().to_series().to_list()
                          if v is not None) if column in have else [])
        if asked not in present:
            raise SelectionError(column, f"a {column} the runs have: {present or 'none'}", repr(asked))
        picked = picked.filter(pl.col(column) == asked)
    runs = picked.select("run_id", "scenario_id", "success").collect()
    from workbench.summaries._entries import with_roles

    source = tables.get("entries")
    base = source.lazy() if source is not None else entries_table(collected(tables["compactions"])).lazy()

    def chosen(entries: Frame, text: bool = True) -> Frame:
        """The entries to draw from, with their run's outcome and scenario (lazy or not; ``text`` or not)."""
        if sections == "auto" and roles is None:
            entries = with_roles(entries).filter(default_selection())
        else:
            if sections not in (None, "auto"):
                entries = entries.filter(pl.col("section").is_in(list(sections)))
            if roles is not None:
                entries = with_roles(entries).filter(pl.col("role").is_in(list(roles)))
        columns = ["entry_id", "run_id", "boundary", "section", "position", *(["text"] if text else [])]
        return entries_with_outcome(entries.select(columns), runs.lazy() if isinstance(entries, pl.LazyFrame)
                                    else runs, how="inner")

    # the draw reads the entries' table a slice at a time, keeping each slice's ids and strata only (a large log's
    # entries are never held whole); what an item shows, texts included, is read for the drawn entries alone
    light = base.select([c for c in base.collect_schema().names() if c != "text"])  # the draw never reads texts
    keep = [c for c in dict.fromkeys(("entry_id", "section", *strata))
            if c in chosen(light, text=False).collect_schema()]
    draw_from = (chosen(part, text=False).select(keep) for part in slices(light, SAMPLE_BATCH_ROWS))
    if only_ids is not None:  # a sample drawn before: the same items, drawn again with today's evidence
        wanted_ids = pl.DataFrame({"entry_id": list(dict.fromkeys(only_ids))})
        found = (chosen(rows_of(light, wanted_ids), text=False).select(keep)
                 .unique("entry_id", keep="first"))
        sample = found.collect(engine="streaming")
        lost = wanted_ids.join(sample, on="entry_id", how="anti")
        if lost.height:
            raise SelectionError("ids", "ids of entries in the selected runs and sections",
                                 f"{lost.height} of {wanted_ids.height} item(s) that are not (first "
                                 f"{lost['entry_id'][0]!r})")
        report = SampleReport(wanted_ids.height, sample.height, {}, {})
    else:
        sample, report = stream_sample(draw_from, n, strata, seed)
    # the drawn entries' rows, compactions and steps, each read through a filter on the drawn ids that the scan
    # applies as it reads (:func:`rows_of`; a semi join, or joining every entry with its run before keeping a few
    # hundred, held the whole table)
    sample = (chosen(rows_of(base, sample.select("entry_id")))
              .collect(engine="streaming").sort("entry_id"))
    texts = dict(sample.select("entry_id", "text").iter_rows())
    wanted = sample.select("run_id", "boundary").unique()
    comps = rows_of(tables["compactions"], wanted).collect(engine="streaming")
    steps = (rows_of(tables["steps"], wanted.select("run_id")).collect(engine="streaming") if "steps" in tables
             else pl.DataFrame())
    # the drawn runs, whole: the task an item shows, the world for the material
    drawn_runs = rows_of(every_run, wanted.select("run_id")).collect(engine="streaming")
    run_rows = {r["run_id"]: r for r in drawn_runs.iter_rows(named=True)}
    comp_rows = {(c["run_id"], c["boundary"]): c for c in comps.iter_rows(named=True)}
    # the passages the judge used, as it stored them (read for the drawn compactions only); retrieved here, once,
    # only for data no judge has scored
    evidence = tables.get("evidence")
    if evidence is None:
        from workbench.summaries._evidence import compaction_requests, evidence_table

        drawn_entries = rows_of(base, wanted).collect(engine="streaming")
        evidence = evidence_table(compaction_requests({"runs": drawn_runs, "steps": steps, "compactions": comps,
                                                       "entries": drawn_entries}))
    passages = entry_evidence(evidence, sample.get_column("entry_id").to_list())
    observations = _observations_before(steps, comps)
    items = []
    for row in sample.iter_rows(named=True):
        key = (row["run_id"], row["boundary"])
        text = texts[row["entry_id"]]
        used = passages[row["entry_id"]]
        items.append({"item_id": row["entry_id"], "text": text, "section": row["section"],
                      "task": run_rows[row["run_id"]].get("task") or "",
                      "previous_summary": comp_rows[key].get("previous_summary") or "",
                      "evidence": [p["text"] for p in used], "evidence_sources": [p["source"] for p in used],
                      "run_id": row["run_id"], "boundary": row["boundary"], "scenario_id": row.get("scenario_id"),
                      "evaluation": evaluation_material(run_rows[row["run_id"]], text, observations.get(key, [])),
                      **({"question": q} if (q := run_rows[row["run_id"]].get("question")) else {})})
    return items, report


def _observations_before(steps: pl.DataFrame, comps: pl.DataFrame) -> dict[tuple[str, int], list[tuple[str | None, bool]]]:
    """(run, boundary) -> the run's (observation, blocked) pairs of the steps before the compaction."""
    if not steps.height or "step" not in comps.columns:
        return {}
    cols = [pl.col("observation"), pl.col("blocked").fill_null(False) if "blocked" in steps.columns
            else pl.lit(False).alias("blocked")]
    joined = (comps.select("run_id", "boundary", pl.col("step").alias("at"))
              .join(steps.select("run_id", "step", *cols), on="run_id")
              .filter(pl.col("step") < pl.col("at")).sort("run_id", "boundary", "step"))
    out: dict[tuple[str, int], list[tuple[str | None, bool]]] = {}
    for (run_id, boundary), g in joined.group_by("run_id", "boundary", maintain_order=True):
        out[(str(run_id), int(boundary))] = list(zip(g["observation"].to_list(), g["blocked"].to_list()))
    return out


__all__ = ["entries_with_outcome", "sample_entries", "sample_items", "SampleReport", "stream_sample"]
