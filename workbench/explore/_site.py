"""The static site ``workbench explore`` writes: an index of runs, a page per run and per compaction, entry pages and a
search index in shards, all opening from disk (no server, no network); written into a temporary sibling and moved
into place, replacing only a directory that holds ``MARKER``."""

from __future__ import annotations

import json
import re
import shutil
import time
from array import array
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from workbench._util.atomic import replace_owned_dir
from workbench._util.untrusted import visible
from workbench.errors import SelectionError
from workbench.summaries._evidence import span_index
from workbench.tokens import count
from workbench.explore._views import HORIZON, TEMPLATES, RunRows, _env, _script_json, _step_view, details_json, slug


MARKER = ".workbench-explore"  # written into every site; only a directory holding it is ever replaced


@dataclass(frozen=True)
class SiteReport:
    """What :func:`build_site` wrote."""

    out: Path
    runs: int
    compactions: int
    pages: int
    bytes: int
    seconds: float

    def __str__(self) -> str:
        return (f"{self.out / 'index.html'}: {self.runs} runs, {self.compactions} compactions, {self.pages} pages, "
                f"{self.bytes / 1e6:.1f} MB in {self.seconds:.1f}s")


def runs_to_show(runs: pl.DataFrame, *, run_ids: Sequence[str] | None = None, method: str | None = None,
                budget: int | None = None, limit: int | None = None) -> pl.DataFrame:
    """The runs a site shows: those named, of a method, at a budget, the first ``limit`` (in table order).

    Parameters
    ----------
    runs : polars.DataFrame
        The runs table.
    run_ids : sequence of str, optional
        Only these runs (each must exist).
    method : str, optional
        Only runs of this method.
    budget : int, optional
        Only runs at this budget.
    limit : int, optional
        At most this many runs.

    Returns
    -------
    polars.DataFrame
        The rows of ``runs`` shown, in table order.
    """
    sel = runs
    if run_ids:
        missing = sorted(set(run_ids) - set(runs.get_column("run_id").to_list()))
        if missing:
            raise SelectionError("runs", "ids of runs in the data", f"{missing[0]!r}, which no run has")
        sel = sel.filter(pl.col("run_id").is_in(list(run_ids)))
    if method is not None:
        if "method" not in sel.columns or not (sel.get_column("method") == method).any():
            raise SelectionError("method", "a method of the runs", f"{method!r}, which no run has")
        sel = sel.filter(pl.col("method") == method)
    if budget is not None:
        if "budget" not in sel.columns or not (sel.get_column("budget") == budget).any():
            raise SelectionError("budget", "a budget of the runs", f"{budget}, which no run has")
        sel = sel.filter(pl.col("budget") == budget)
    return sel.head(limit) if limit is not None else sel


def build_site(tables: Mapping[str, pl.DataFrame | pl.LazyFrame], out: str | Path, *,
               labels: pl.DataFrame | None = None, judge: str | None = None, tau: float = 0.5,
               run_ids: Sequence[str] | None = None,
               method: str | None = None, budget: int | None = None, limit: int | None = None,
               title: str = "compactions", inputs: Sequence[str | Path] = (),
               derive: Sequence[str] = ()) -> SiteReport:
    """Write the site for ``tables`` under ``out`` (replaced whole: written to a sibling, then moved into place).

    The tables may be ``LazyFrame`` s (``workbench explore`` scans a directory): the runs are written a batch at a
    time (:data:`BATCH_COMPACTIONS`), each batch's rows collected from the scans and let go once its pages are written,
    so memory holds one batch of a log's steps, entries, scores and evidence, not the whole log.

    ``out`` is replaced only if this function made it (it holds ``MARKER``) or it is empty or absent; a file,
    any other directory, and a path that holds or lies inside one of ``inputs`` (the data the site is made from)
    are refused with :class:`~workbench.errors.OutputRefused` before anything is written.

    ``labels`` are gold labels (:func:`workbench.tables.gold_labels`; default: those of the tables' own ``labels``
    table, if any); ``judge`` picks the scores shown (default: ``lexical`` when present, else the first judge in
    the scores table); a judge that scored nothing is refused with :class:`~workbench.errors.SelectionError`.

    ``derive`` names tables the data lacks that are made a batch at a time, for the runs shown only: ``entries``
    (:func:`workbench.summaries.entries_table` of the batch's compactions) and ``scores`` (the lexical judge's, with
    the ``evidence`` it used when the data has none), as the judge's batched run makes them; the pages are those of
    the same data judged first, and memory holds a batch, never the whole log's entries and scores.

    Parameters
    ----------
    tables : mapping of str to polars.DataFrame or polars.LazyFrame
        The data's tables (``runs``, ``steps``, ``compactions``; ``entries``, ``scores``, ``evidence``, ``labels``
        when it has them).
    out : str or pathlib.Path
        The site's directory.
    labels : polars.DataFrame, optional
        Gold labels (``item_id``, ``field``, ``value``) to mark entries with.
    judge : str, optional
        The judge whose scores colour the entries.
    tau : float, default 0.5
        The score below which an entry is shown as pruned.
    run_ids : sequence of str, optional
        Only these runs.
    method : str, optional
        Only runs of this method.
    budget : int, optional
        Only runs at this budget.
    limit : int, optional
        At most this many runs, after the other filters, in table order.
    title : str, default "compactions"
        The site's title.
    inputs : sequence of str or pathlib.Path, default ()
        The data the site is made from: ``out`` may not hold or lie inside one.
    derive : sequence of str, default ()
        Tables to make a batch at a time when the data lacks them (``entries``, ``scores``).

    Returns
    -------
    SiteReport
        Where the site is, the runs, compactions and pages written, its size and the seconds taken.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from workbench.adapters import read_log
    >>> from workbench.explore import build_site
    >>> from workbench.datasets import examples
    >>> tables = read_log(examples("invoice_log.jsonl"))
    >>> report = build_site(tables, Path(tempfile.mkdtemp()) / "site", derive=("entries", "scores"))
    >>> report.runs, report.compactions
    (4, 8)
    """
    t0 = time.perf_counter()
    out = Path(out)
    tables = {name: frame for name, frame in tables.items()  # (a log's extras are neither)
              if isinstance(frame, (pl.DataFrame, pl.LazyFrame))}
    stored = tables.get("labels")
    if isinstance(stored, pl.LazyFrame):  # one row per label: held whole
        tables["labels"] = _read("labels", stored)
    scan = tables["runs"]
    if isinstance(scan, pl.LazyFrame):  # the rows of the runs shown and of the runs their pages link, read alone
        chosen, runs, listed = _shown_runs(scan, run_ids=run_ids, method=method, budget=budget, limit=limit)
    else:
        runs = listed = scan
        chosen = runs_to_show(runs, run_ids=run_ids, method=method, budget=budget, limit=limit)
    unknown = set(derive) - {"entries", "scores"}
    if unknown:
        raise ValueError(f"derive: only entries and scores are derived a batch at a time, not {sorted(unknown)}")
    derive = tuple(name for name in ("entries", "scores") if name in derive and name not in tables)
    scores = tables.get("scores")
    judges = (["lexical"] if "scores" in derive else [] if scores is None else
              scores.lazy().select(pl.col("judge").unique(maintain_order=True)).collect().get_column("judge").to_list())
    if judge is not None and judge not in judges:
        raise SelectionError("judge", f"one of the judges that scored ({', '.join(sorted(judges)) or 'none'})", judge)
    if judge is None and judges:
        judge = "lexical" if "lexical" in judges else judges[0]
    shown = chosen.get_column("run_id").to_list()
    for name, frame in tables.items():  # a key given in two batches: no batch holds both rows
        if name in _BATCH_TABLES and isinstance(frame, pl.LazyFrame):
            _check_keys(name, frame, shown)
    env = _env()
    counts: dict[str, int] = {}

    def write(tmp: Path) -> None:
        counts.update(_write_site(tmp, env, tables, chosen, runs, listed, labels, judge, tau, title, derive))

    out = replace_owned_dir(out, MARKER, write, inputs=inputs, made_by="workbench explore")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return SiteReport(out, counts["runs"], counts["compactions"], counts["pages"], size, time.perf_counter() - t0)


#: compactions a batch of runs holds at most (a run with more is a batch of its own): the rows read at once
BATCH_COMPACTIONS = 2_000


def site_batches(chosen: pl.DataFrame, size: int = BATCH_COMPACTIONS) -> list[pl.DataFrame]:
    """The chosen runs in consecutive batches of at most ``size`` compactions each, in their order.

    Parameters
    ----------
    chosen : polars.DataFrame
        Rows of the runs table (:func:`runs_to_show`); its ``compactions`` column weighs each run (a run without
        compactions weighs 1; without the column, every run weighs 8).
    size : int
        The most compactions a batch holds; a run with more is a batch of its own.

    Returns
    -------
    list of polars.DataFrame
        Slices of ``chosen`` that together hold each of its rows once, in order.
    """
    if not chosen.height:
        return []
    if "compactions" in chosen.columns:
        weights = chosen.get_column("compactions").fill_null(0).clip(lower_bound=1).to_list()
    else:
        weights = [8] * chosen.height
    cuts, total = [0], 0
    for i, w in enumerate(weights):
        if total and total + w > size:
            cuts.append(i)
            total = 0
        total += w
    cuts.append(chosen.height)
    return [chosen.slice(a, b - a) for a, b in zip(cuts, cuts[1:])]


def _columns(frame: pl.DataFrame | pl.LazyFrame) -> list[str]:
    return frame.columns if isinstance(frame, pl.DataFrame) else frame.collect_schema().names()


def _read(name: str, scan: pl.LazyFrame) -> pl.DataFrame:
    """A scan's rows of table ``name``, validated as a whole table is when it is read (a batch at a time: memory
    holds a batch)."""
    from workbench.tables._validation import validate

    return validate(name, scan.collect())


def _check_keys(name: str, scan: pl.LazyFrame, shown: Sequence[str]) -> None:
    """Refuse a scan of table ``name`` whose key repeats among the rows of the runs ``shown``, as reading it whole
    does, naming the rows by their place in the whole table (the key's hashes alone are held: 8 bytes a row).

    A batch reads every row of its runs and validates them as a whole table: a key that holds the run (steps,
    compactions) cannot repeat across batches, nor can a score's, once its entries' ids are unique. A table
    whose rows have no run is read whole by every batch. So only a key without the run, of a table with one
    (an entry's or an evidence passage's id copied under another run), is checked here, and only over the rows
    the site shows (issue 82: the whole log's keys were 140 MiB of the explorer's setup at 10x the testbed)."""
    from workbench.tables._schema import table
    from workbench.tables._files import _check_key_across

    columns = _columns(scan)
    key = table(name).key_in(columns)
    if not key or "run_id" in key or "run_id" not in columns:
        return
    rows = scan.select([*key, "run_id"]).with_row_index("_row").filter(pl.col("run_id").is_in(shown)).drop("run_id")
    # (the whole table's rows, from the Parquet footers, bound the shown ones: counting those was a pass of its own)
    _check_key_across(rows, key, name, None, scan.select(pl.len()).collect().item(), row="_row")


#: the tables a page reads a batch of runs' rows of (the runs, labels and scores are read apart)
_BATCH_TABLES = ("steps", "compactions", "entries", "evidence")


def _run_rows(scan: pl.LazyFrame, runs: pl.Series) -> dict[str, tuple[int, int]]:
    """Run id to the positions of its first and last rows (0-based, both included) in a scan with a ``run_id``
    column, read alone (:func:`~workbench.tables._frames._run_spans`, as the judge's batches find them), for the
    ``runs`` a batch may read (a dict of every run of a large log was tens of MiB a table)."""
    from workbench.tables._frames import _run_spans

    spans = _run_spans(scan).filter(pl.col("run_id").is_in(runs.implode()))
    return {run: (int(lo), int(hi) - 1) for run, lo, hi in spans.iter_rows()}


#: rows between two runs' rows that are read rather than skipped (one slice, not two)
_ROW_GAP = 4_096


def _slices(scan: pl.LazyFrame, spans: Sequence[tuple[int, int]]) -> pl.LazyFrame:
    """The rows of ``scan`` in ``spans`` (first and last row, both included), in the scan's order: one slice for
    spans less than :data:`_ROW_GAP` rows apart. A filter alone decodes each Parquet row group it reads whole (at 10x
    the testbed, 2.1x the memory of the slices on the evidence table); a slice is decoded in part."""
    held = sorted(spans)
    if not held:
        return scan.head(0)
    ranges = [list(held[0])]
    for first, last in held[1:]:
        if first <= ranges[-1][1] + _ROW_GAP:
            ranges[-1][1] = max(ranges[-1][1], last)
        else:
            ranges.append([first, last])
    parts = [scan.slice(first, last - first + 1) for first, last in ranges]
    return parts[0] if len(parts) == 1 else pl.concat(parts)


def _rows_of(scan: pl.LazyFrame, spans: Mapping[str, tuple[int, int]], want: Sequence[str]) -> pl.LazyFrame:
    """The rows of runs ``want`` of a scan, in its order: the slices that hold them (``spans``: :func:`_run_rows`),
    filtered."""
    return _slices(scan, [spans[run] for run in want if run in spans]).filter(pl.col("run_id").is_in(want))


def _scores_of(scores: pl.LazyFrame, wanted: Sequence[str]) -> pl.LazyFrame:
    """The rows of a scores scan that score entries ``wanted``, in its order: their positions found from the
    ``entry_id`` column read alone, then the slices that hold them, filtered (a filter alone decoded every column of
    every row group at each batch: 115 MiB more at 10x the testbed's peak, 60 at 1x)."""
    rows = (scores.select("entry_id").with_row_index("row").filter(pl.col("entry_id").is_in(wanted))
            .select("row").collect().get_column("row").to_list())
    return _slices(scores, [(row, row) for row in rows]).filter(pl.col("entry_id").is_in(wanted))


def _batch_tables(tables: Mapping[str, pl.DataFrame | pl.LazyFrame], runs: pl.DataFrame, ids: set[str],
                  twins: set[str], positions: Mapping[str, Mapping[str, tuple[int, int]]] | None = None,
                  derive: Sequence[str] = ()) -> dict[str, pl.DataFrame]:
    """The rows of one batch of runs (``ids``; the steps also of their matched uncompressed runs, ``twins``), collected
    from scans (by the slices that hold them where ``positions`` gives a table's :func:`_run_rows`), with the
    entries' roles and the scores of those entries; the tables named in ``derive`` made from the batch's rows."""
    sub: dict[str, pl.DataFrame] = {}
    for name, frame in tables.items():
        if name not in _BATCH_TABLES:  # (a directory's other tables, spans or rollouts, were read whole a batch)
            continue
        if "run_id" in _columns(frame):
            want = sorted(ids | twins) if name == "steps" else sorted(ids)
            if isinstance(frame, pl.LazyFrame) and positions is not None and name in positions:
                frame = _rows_of(frame, positions[name], want)
            else:
                frame = frame.filter(pl.col("run_id").is_in(want))
        sub[name] = _read(name, frame) if isinstance(frame, pl.LazyFrame) else frame
    if derive:
        _derive_batch(sub, runs, ids, derive, with_evidence="evidence" not in tables)
    if "entries" in sub and sub["entries"].height:
        from workbench.summaries._entries import with_roles

        sub["entries"] = with_roles(sub["entries"])
    scores = tables.get("scores")
    if scores is not None and "entries" in sub and "scores" not in derive:
        # by the rows' positions, then a filter, not a semi-join (at 10x the testbed a join read every score, 180 MiB
        # more at its peak)
        wanted = sub["entries"].get_column("entry_id").to_list()
        scan = _scores_of(scores, wanted) if isinstance(scores, pl.LazyFrame) and positions is not None else (
            scores.lazy().filter(pl.col("entry_id").is_in(wanted)))
        sub["scores"] = _read("scores", scan)
    sub["runs"] = runs  # matched uncompressed runs and parents may lie outside the selection
    return sub


def _derive_batch(sub: dict[str, pl.DataFrame], runs: pl.DataFrame, ids: set[str], derive: Sequence[str], *,
                  with_evidence: bool) -> None:
    """Add to one batch's rows (in place) the ``derive`` tables, made from them as the judge's batched run makes them
    (:func:`workbench.datasets.derive_missing` makes the same from a whole log)."""
    from workbench.judges._lexical import LexicalJudge
    from workbench.judges._requests import score_requests
    from workbench.summaries._entries import entries_table
    from workbench.summaries._evidence import compaction_requests, evidence_table
    from workbench.tables._schema import empty

    comps = sub.get("compactions", empty("compactions"))
    if "entries" in derive:
        sub["entries"] = entries_table(comps)
    if "scores" in derive:
        mine = {**sub, "runs": runs.filter(pl.col("run_id").is_in(sorted(ids)))}
        requests = compaction_requests(mine)
        sub["scores"], _ = score_requests(requests, LexicalJudge())
        if with_evidence:
            sub["evidence"] = evidence_table(requests)


def _write_site(tmp: Path, env: Any, tables: Mapping[str, pl.DataFrame | pl.LazyFrame], chosen: pl.DataFrame,
                runs: pl.DataFrame, listed: pl.DataFrame, labels: pl.DataFrame | None, judge: str | None, tau: float,
                title: str, derive: Sequence[str] = ()) -> dict[str, int]:
    """Write the site's pages into the empty directory ``tmp``, a batch of runs at a time (:func:`site_batches`); the
    counts :class:`SiteReport` gives. ``runs``: the rows of the runs shown and of those their pages link;
    ``listed``: the index's columns of every run (:func:`_shown_runs`)."""
    (tmp / "runs").mkdir(parents=True)
    for asset in ("site.css", "site.js", "views.js"):
        shutil.copy(TEMPLATES / asset, tmp / asset)
    keep = set(chosen.get_column("run_id").to_list())
    source = ""
    stored = tables.get("labels")
    if labels is None and isinstance(stored, pl.DataFrame) and stored.height:
        from workbench.tables._labels import gold_labels, label_source

        labels, source = gold_labels(stored), label_source(stored)
    children: dict[str, list[str]] = {}
    if "parent_run_id" in runs.columns:
        for r in chosen.filter(pl.col("parent_run_id").is_not_null()).select("run_id", "parent_run_id").iter_rows():
            children.setdefault(r[1], []).append(r[0])
    pages, n_comp = 1, 0
    rows = []
    data = _ViewData(tau, tmp / "data")
    positions = {name: _run_rows(frame, runs.get_column("run_id")) for name, frame in tables.items()
                 if name in _BATCH_TABLES and isinstance(frame, pl.LazyFrame) and "run_id" in _columns(frame)}
    for batch in site_batches(chosen, BATCH_COMPACTIONS):
        batch_ids = set(batch.get_column("run_id").to_list())
        sub = _batch_tables(tables, runs, batch_ids, _twin_ids(runs, batch), positions, derive)
        index = span_index(sub["steps"]) if "steps" in sub else None
        per_run = _PerRun(sub, labels)
        # each run's rows as Python rows one run at a time, from the frames _PerRun split by run (rows of the whole
        # log at once held gigabytes)
        comp_frames = per_run.parts.get("compactions", {})
        step_frames = per_run.parts.get("steps", {})
        for run in batch.to_dicts():
            rid = run["run_id"]
            name = slug(rid)
            comps_here = comp_frames[rid].sort("boundary").to_dicts() if rid in comp_frames else []
            run_steps = step_frames[rid].sort("step").to_dicts() if rid in step_frames else []
            tokens = sum(int(run.get(k) or 0) for k in ("agent_tokens", "compressor_tokens"))
            rows.append({"run": {k: run[k] for k in ("run_id", *_INDEX_COLUMNS) if k in run},  # (what the index
                         "href": f"runs/{name}.html", "compactions": len(comps_here), "tokens": tokens})  # shows)
            summary_tokens = {c["boundary"]: count(c.get("committed_summary") or c.get("candidate_summary") or "")
                              for c in comps_here}
            marks = {c["step"]: {**c, "href": f"{name}/b{c['boundary']}.html",
                                 "tokens_after": summary_tokens[c["boundary"]]} for c in comps_here}
            links = [{"boundary": c["boundary"], "href": f"{name}/b{c['boundary']}.html", "compaction": c}
                     for c in comps_here]
            kids = [{"run_id": k, "href": f"{slug(k)}.html"} for k in children.get(rid, []) if k in keep]
            parent = run.get("parent_run_id")
            parent_link = {"run_id": parent, "href": f"{slug(parent)}.html"} if parent and parent in keep else None
            _write(tmp / "runs" / f"{name}.html", env.get_template("run.html").render(
                title=title, run=run, steps=[_step_view(s) for s in run_steps], marks=marks,
                compactions=links, children=kids, parent=parent_link, root="../"))
            pages += 1
            if comps_here:
                (tmp / "runs" / name).mkdir(exist_ok=True)
            data.add_steps(rid, f"runs/{name}", run_steps)
            mine, gold = per_run.tables(run) if comps_here else ({}, None)
            rows_here = RunRows.of(mine, run, gold, judge) if comps_here else None
            for c in comps_here:
                assert rows_here is not None
                view = rows_here.view(c, mine, judge=judge, tau=tau, horizon=HORIZON, index=index,
                                      label_source=source)
                data.add(run, c, view, f"runs/{name}", summary_tokens[c["boundary"]])
                _write(tmp / "runs" / name / f"b{c['boundary']}.html", env.get_template("compaction.html").render(
                    title=title, view=view, run_href=f"../{name}.html", root="../../", details=details_json(view)))
                pages += 1
                n_comp += 1
        del sub, per_run, index, comp_frames, step_frames
    columns = [c for c in _INDEX_COLUMNS if c in listed.columns and listed.get_column(c).null_count() < listed.height]
    _write(tmp / "index.html", env.get_template("index.html").render(
        title=title, rows=rows, columns=columns, judge=judge, total=listed.height, root=""))
    data.write()
    for page in ("entries", "compactions"):
        _write(tmp / f"{page}.html", env.get_template(f"{page}.html").render(title=title, judge=judge, tau=tau,
                                                                           root=""))
        pages += 1
    return {"runs": len(rows), "compactions": n_comp, "pages": pages}


#: entries per data shard of the entries view (a shard is one ``<script>``: bounded bytes whatever the log's size)
ENTRY_SHARD = 5_000


_TERM = re.compile(r"[a-z0-9][a-z0-9_.$/-]*[a-z0-9]|[a-z0-9]")


def _terms(text: str) -> set[str]:
    """The search terms of a text: lower-cased words and identifiers (``inv-4849``, ``src/app.py``), two
    characters or more, trailing punctuation off."""
    return {t for t in _TERM.findall(text.lower()) if len(t) >= 2}


def _shard_key(prefix: str) -> str:
    """The file name of the index shard of a term prefix: its UTF-8 bytes as hex (a name on every system)."""
    return prefix.encode("utf-8").hex()


#: bytes a search-index shard aims at: a shard whose terms hold more is split by one more character of its terms,
#: so a query loads a bounded number of bytes whatever the log's size
INDEX_SHARD_BYTES = 96 << 10


#: rows listed per term and kind (entries, steps): a word in every entry would make its shard grow with the log
MAX_POSTINGS = 2_000


_INDEX_DEPTH = 24  # a prefix this long is not split again (terms sharing it stay in one shard)


def index_shards(index: Mapping[str, Mapping[str, Collection[int]]]) -> dict[str, dict[str, Any]]:
    """The search index as shards keyed by a prefix of their terms: ``{"t": {term: postings}, "split": [...]}``.

    The roots are the terms' first two characters. A shard whose terms weigh more than ``INDEX_SHARD_BYTES`` (96 KiB)
    keeps only the terms exactly as long as its prefix and names in ``split`` the prefixes one character longer
    that hold the rest, each split again as it needs. A term's postings (``e``: entry rows, ``s``: step rows) are
    its first ``MAX_POSTINGS`` (2,000) rows of each kind, with ``more`` when there were more."""
    def body(posts: Mapping[str, Collection[int]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for kind, rows in sorted(posts.items()):
            ordered = sorted(rows)
            out[kind] = ordered[:MAX_POSTINGS]
            if len(ordered) > MAX_POSTINGS:
                out["more"] = 1
        return out

    def weight(term: str, posts: Mapping[str, Collection[int]]) -> int:
        return len(term.encode("utf-8")) + 12 + sum(7 * min(len(rows), MAX_POSTINGS) for rows in posts.values())

    shards: dict[str, dict[str, Any]] = {}
    roots: dict[str, list[str]] = {}
    for term in sorted(index):  # terms came from sets: sorted, the bytes never vary
        roots.setdefault(term[:2], []).append(term)
    todo = list(roots.items())
    while todo:
        prefix, terms = todo.pop()
        deeper = [t for t in terms if len(t) > len(prefix)]
        if (not deeper or len(terms) == 1 or len(prefix) >= _INDEX_DEPTH
                or sum(weight(t, index[t]) for t in terms) <= INDEX_SHARD_BYTES):
            shards[prefix] = {"t": {t: body(index[t]) for t in terms}, "split": []}
            continue
        children: dict[str, list[str]] = {}
        for t in deeper:
            children.setdefault(t[:len(prefix) + 1], []).append(t)
        shards[prefix] = {"t": {t: body(index[t]) for t in terms if len(t) == len(prefix)},
                          "split": sorted(children)}
        todo.extend(children.items())
    return shards


class _ViewData:
    """The rows of the site's entries and compactions views and the search index over entry text, identifiers and
    step text, written as ``<script>`` data files into ``out`` (Chromium does not ``fetch`` from ``file://``): the
    views load the entries in shards of :data:`ENTRY_SHARD`, a search loads one index shard per term. A shard is
    written as soon as it is full and a term keeps no more rows than the index lists (``MAX_POSTINGS``), so
    memory holds one shard of each view and the index's terms, not the log's rows."""

    def __init__(self, tau: float, out: Path) -> None:
        self.tau, self.out = tau, out
        out.mkdir()
        self.rows: dict[str, list[list[Any]]] = {"entries": [], "compactions": [], "steps": []}  # the open shards
        self.written = {kind: 0 for kind in self.rows}  # rows in shards already written
        self.index: dict[str, dict[str, array[int]]] = {}  # term -> {"e": entry rows, "s": step rows}, ascending

    def _append(self, kind: str, row: list[Any]) -> int:
        """Add ``row`` to the ``kind`` view; its number in the view."""
        rows = self.rows[kind]
        rows.append(row)
        number = self.written[kind] + len(rows) - 1
        if len(rows) == ENTRY_SHARD:
            self._flush(kind)
        return number

    def _flush(self, kind: str) -> None:
        rows = self.rows[kind]
        if rows:
            k = self.written[kind] // ENTRY_SHARD
            _write(self.out / f"{kind}-{k:04d}.js", _js(kind, pack_rows(rows, (8,) if kind == "entries" else ()), k))
            self.written[kind] += len(rows)
            self.rows[kind] = []

    def _post(self, text: str, kind: str, row: int) -> None:
        for term in _terms(text):
            posts = self.index.setdefault(term, {})
            rows = posts.get(kind)
            if rows is None:  # 4 bytes a row, not a list's 36: at a large log's cap the postings are most of memory
                rows = posts[kind] = array("i")
            if len(rows) <= MAX_POSTINGS:  # one past the cap: enough to say there were more
                rows.append(row)

    def add(self, run: Mapping[str, Any], c: Mapping[str, Any], view: Mapping[str, Any], pages: str,
            summary_tokens: int) -> None:
        entries = view["entries"]
        unsupported = sum(e.score is not None and e.score < self.tau for e in entries)
        scored = sum(e.score is not None for e in entries)
        self._append("compactions", [pages, run["run_id"], c["boundary"], run.get("method"), run.get("budget"),
                                     len(entries), scored, unsupported, c.get("pre_tokens"), summary_tokens])
        for e in entries:
            verdict = "" if e.score is None else ("supported" if e.score >= self.tau else "unsupported")
            row = self._append("entries", [pages, run["run_id"], c["boundary"], e.position, e.section, e.role,
                                           None if e.score is None else round(float(e.score), 4), e.label,
                                           view.get("label_source") or "", verdict, visible(e.text)[:240]])
            self._post(e.text, "e", row)

    def add_steps(self, run_id: str, pages: str, steps: Sequence[Mapping[str, Any]]) -> None:
        for st in steps:
            text = " ".join(str(st.get(k) or "") for k in ("tool", "args", "text", "observation"))
            if not text.strip():
                continue
            first = next((ln for ln in visible(text).splitlines() if ln.strip()), "")
            self._post(text, "s", self._append("steps", [pages, run_id, st["step"], st.get("tool") or "",
                                                         first[:160]]))

    def write(self) -> None:
        """Write the last shards, the search index and the manifest."""
        for kind in self.rows:
            self._flush(kind)
        search = index_shards(self.index)
        (self.out / "search").mkdir()
        for prefix, shard in search.items():
            _write(self.out / "search" / f"{_shard_key(prefix)}.js", _js("index", shard, _shard_key(prefix)))
        count = self.written
        manifest = {"entries": count["entries"], "entry_shards": -(-count["entries"] // ENTRY_SHARD),
                    "shard": ENTRY_SHARD, "compactions": count["compactions"],
                    "compaction_shards": -(-count["compactions"] // ENTRY_SHARD), "steps": count["steps"],
                    "step_shards": -(-count["steps"] // ENTRY_SHARD), "tau": self.tau,
                    "index_shards": sorted(_shard_key(p) for p in search if len(p) == 2)}
        _write(self.out / "manifest.js", _js("manifest", manifest))


def pack_rows(rows: Sequence[Sequence[Any]], shared: Sequence[int] = ()) -> dict[str, Any]:
    """A shard of view rows ``[pages, run_id, ...]`` (``pages``: the run's page path without ``.html``) written
    without repeating what rows share: ``runs`` lists each ``[run_id, pages]`` once and a row starts with its index
    there; each column in ``shared`` (the label source) lists its values once in ``values[col]`` and rows hold the
    index. views.js unpacks a shard into the rows and makes each row's link from its run's pages (the run's page,
    a compaction's ``/bB.html``, an entry's ``#entry-P``). The two repeated strings were 40% of an entry row."""
    runs: dict[tuple[str, str], int] = {}
    values: dict[int, dict[Any, int]] = {col: {} for col in shared}
    packed = []
    for r in rows:
        row = [runs.setdefault((r[1], r[0]), len(runs)), *r[2:]]
        for col in shared:
            row[col - 1] = values[col].setdefault(r[col], len(values[col]))
        packed.append(row)
    return {"runs": [list(k) for k in runs], "values": {str(col): list(v) for col, v in values.items()},
            "rows": packed}




def _js(kind: str, value: Any, key: object = None) -> str:
    """A data file: ``WB.load(kind, key, value)``, its JSON safe inside a script (:func:`_script_json`)."""
    text = _script_json(value, ensure_ascii=False, separators=(",", ":"))
    return f"WB.load({json.dumps(kind)},{json.dumps(key)},{text});\n"


class _PerRun:
    """The tables split by run once, so a compaction page reads its run's rows (a filter of every table per page
    made a site's build time grow with the square of the log: 11,000 filters for 640 pages)."""

    def __init__(self, sub: Mapping[str, pl.DataFrame], labels: pl.DataFrame | None) -> None:
        self.sub, self.labels = sub, labels
        self.parts: dict[str, dict[str, pl.DataFrame]] = {}
        for name in ("compactions", "steps", "entries", "evidence"):
            frame = sub.get(name)
            if frame is not None and frame.height and "run_id" in frame.columns:
                self.parts[name] = {k[0]: g for k, g in frame.partition_by("run_id", as_dict=True).items()}
        entries = sub.get("entries")
        owner = entries.select("entry_id", "run_id") if entries is not None and entries.height else None
        for name, frame, key in (("scores", sub.get("scores"), "entry_id"), ("labels", labels, "item_id")):
            if frame is not None and frame.height and owner is not None:
                joined = frame.join(owner.rename({"entry_id": key}), on=key, how="inner")
                self.parts[name] = {k[0]: g.drop("run_id") for k, g in joined.partition_by("run_id",
                                                                                          as_dict=True).items()}
        runs = sub["runs"]
        self.twins: dict[Any, pl.DataFrame] = {}
        if {"task_id", "method"} <= set(runs.columns):
            plain = runs.filter(pl.col("method") == "no_compression")
            self.twins = {k[0]: g for k, g in plain.partition_by("task_id", as_dict=True).items()}

    def tables(self, run: Mapping[str, Any]) -> tuple[dict[str, pl.DataFrame], pl.DataFrame | None]:
        """The tables :func:`compaction_view` reads, holding this run's rows (and those of its matched
        uncompressed run, found as the view finds it), and the run's gold labels."""
        rid = run["run_id"]
        out = dict(self.sub)
        for name, parts in self.parts.items():
            if name != "labels":
                out[name] = parts[rid] if rid in parts else self.sub[name].clear()
        labels = self.labels
        if "labels" in self.parts and labels is not None:
            labels = self.parts["labels"].get(rid, labels.clear())
        # the run's row made from its dict (a row of the runs table): a filter of every run per run grew with the square
        rows = [pl.DataFrame([dict(run)], schema=self.sub["runs"].schema)]
        twin = self.twins.get(run.get("task_id")) if run.get("task_id") is not None else None
        if twin is not None and run.get("method") != "no_compression":
            rows.append(twin)
            if "steps" in self.parts:
                out["steps"] = pl.concat([out["steps"], *(self.parts["steps"][t] for t in twin.get_column("run_id")
                                                          if t in self.parts["steps"] and t != rid)])
        out["runs"] = pl.concat(rows)
        return out, labels


#: the runs' columns the index shows, where any run has a value
_INDEX_COLUMNS = ("task_id", "project", "method", "budget", "model", "success", "steps")


def _shown_runs(scan: pl.LazyFrame, *, run_ids: Sequence[str] | None, method: str | None, budget: int | None,
                limit: int | None) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """From a scan of the runs table: the runs shown (:func:`runs_to_show`), the rows the pages read (those runs and
    the uncompressed run each is matched to, whole: the first of its task and replicate, the one a view shows), and
    the columns that choose them and that the index lists, of every run. Every run's row is checked in those
    columns (its id unique, its types); the rows read whole are validated whole, an error naming a row by its place
    in the table. The runs of a large log are read in two narrow passes, not held whole (issue 82: every method's
    86,400 runs with their text, 88 MiB at 10x the testbed, where a method shows a sixth of them)."""
    from workbench.tables._validation import validate

    present = _columns(scan)
    narrow = [c for c in ("run_id", "method", "budget", "task_id", "replicate", *_INDEX_COLUMNS) if c in present]
    listed = validate("runs", scan.select(list(dict.fromkeys(narrow))).collect(), partial=True)
    chosen_ids = runs_to_show(listed, run_ids=run_ids, method=method, budget=budget,
                              limit=limit).get_column("run_id")
    wanted = pl.col("run_id").is_in(chosen_ids.implode())
    if {"task_id", "method"} <= set(present):  # each page's matched uncompressed run: a view shows the first of
        tasks = listed.filter(wanted).get_column("task_id").unique().drop_nulls()  # its task (and replicate)
        match = [c for c in ("task_id", "replicate") if c in present]
        twins = (listed.filter((pl.col("method") == "no_compression") & pl.col("task_id").is_in(tasks.implode()))
                 .unique(match, keep="first", maintain_order=True).get_column("run_id"))
        wanted = wanted | pl.col("run_id").is_in(twins.implode())
    read = scan.with_row_index("_row").filter(wanted).collect()
    runs = validate("runs", read.drop("_row"), lines=[f"row {r + 1}" for r in read.get_column("_row").to_list()])
    chosen = runs.filter(pl.col("run_id").is_in(chosen_ids.implode()))
    return chosen, runs, listed


def _twin_ids(runs: pl.DataFrame, chosen: pl.DataFrame) -> set[str]:
    """Run ids of the uncompressed runs matched to the chosen ones (same task and replicate)."""
    if not {"task_id", "method"} <= set(runs.columns):
        return set()
    base = runs.filter(pl.col("method") == "no_compression")
    keys = ["task_id", "replicate"] if "replicate" in runs.columns else ["task_id"]
    return set(base.join(chosen.select(keys).unique(), on=keys).get_column("run_id").to_list())


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


__all__ = ["BATCH_COMPACTIONS", "build_site", "site_batches", "runs_to_show", "SiteReport"]
