"""See a compaction: a static HTML site of runs, their compactions, the history each replaced, and what the judge
and the annotators said (``workbench explore``), and the same compaction view in a notebook cell (:func:`show`).

The site opens from disk (no server, no network, no CDN): an index of runs (sortable, filterable and paginated
by a few lines of JavaScript shipped with it), a page per run (its steps as a timeline, each compaction a marker,
sub-agent runs linked) and a page per compaction: the summary with each entry coloured by its judge score and
marked with its human label; a click on an entry shows its evidence passages (the BM25 passages the judge
request holds for it, each with its step and tool and a link into the replaced history), its score and decision
at tau, and the identifiers it names with whether each has a source in the replaced history; below, the
replaced history, the retained turn, the previous summary, and what the agent did next (repeated, blocked and
error calls marked, beside the matched uncompressed run where the data has one).

Pages are rendered by Jinja2 with autoescaping: every string from a log is shown as text, and control and
format characters (ANSI escapes, bidi overrides) are made visible as ``\\xNN``, as the terminal labeling view
does. Long outputs are cut in the page with the whole text one click away.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from workbench.tables import _schema as schema
from workbench._util.atomic import replace_owned_dir
from workbench._util.untrusted import visible
from workbench.errors import SelectionError
from workbench.summaries._evidence import CompactionRequest, build_request, entry_evidence, request_evidence, span_index
from workbench.summaries._identifiers import code_identifiers
from workbench.tokens import count

HORIZON = 5  # steps after a compaction shown as "what came next" (TRACE's K)
CUT = 1500  # characters of a long text shown before "show all"
TEMPLATES = Path(__file__).with_name("templates")
MARKER = ".workbench-explore"  # written into every site; only a directory holding it is ever replaced


def slug(value: str) -> str:
    """A file name for a run id (ids hold ``/`` and ``:``): its safe characters and a short hash of the whole."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", value)[:60].strip("._") or "run"
    return f"{safe}-{hashlib.sha1(value.encode('utf-8')).hexdigest()[:8]}"


def score_colour(score: float | None) -> str:
    """Background of an entry by its judge score: red (0, no source) through yellow to green (1); none unscored."""
    if score is None or score != score:
        return ""
    hue = round(120 * max(0.0, min(1.0, float(score))))
    return f"hsl({hue}, 70%, 85%)"


_MARKDOWN: Any = None


def markdown(text: object) -> Any:
    """A message's Markdown as HTML (CommonMark: paragraphs, lists, emphasis, code spans and fenced code blocks):
    raw HTML in it is escaped, links and images are left as their text (a site loads nothing from anywhere), and
    control and bidi characters are shown (:func:`visible`) first.

    Parameters
    ----------
    text : object
        The message (``None`` is empty).

    Returns
    -------
    markupsafe.Markup
        The HTML, safe to put in a page.
    """
    global _MARKDOWN
    from markupsafe import Markup

    if _MARKDOWN is None:
        from markdown_it import MarkdownIt

        _MARKDOWN = MarkdownIt("commonmark", {"html": False}).disable(["image", "link", "autolink"])
    return Markup(_MARKDOWN.render(visible("" if text is None else str(text))))


def _env() -> Any:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["visible"] = visible
    env.filters["markdown"] = markdown
    env.filters["colour"] = score_colour
    env.filters["fmt"] = lambda v, spec="": "" if v is None else format(v, spec)
    return env


# ---------------------------------------------------------------------------
# what a compaction page shows


@dataclass
class EntryView:
    entry_id: str
    position: int
    section: str
    role: str
    text: str
    score: float | None
    decision: str  # "kept", "pruned" or "" (unscored)
    reason: str
    label: str
    evidence: list[dict[str, Any]] = field(default_factory=list)
    identifiers: list[tuple[str, bool]] = field(default_factory=list)
    carried_from: tuple[int, int] | None = None  # (boundary, position) of the same entry in the run's last summary


def _rows(frame: pl.DataFrame | None, **match: object) -> list[dict[str, Any]]:
    if frame is None or not frame.height:
        return []
    sel = frame
    for k, v in match.items():
        if k not in sel.columns:
            return []
        sel = sel.filter(pl.col(k) == v)
    return sel.to_dicts()


def _step_view(s: Mapping[str, Any]) -> dict[str, Any]:
    return {"step": s.get("step"), "tool": s.get("tool"), "args": s.get("args"), "text": s.get("text"),
            "observation": s.get("observation"), "blocked": bool(s.get("blocked")), "repeated": bool(s.get("repeated")),
            "error": bool(s.get("error")), "boundary_before": bool(s.get("boundary_before")),
            "observation_role": s.get("observation_role"),
            "forks": int(s.get("forks") or 0),
            "tokens": {k: s[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
                       if s.get(k) is not None}}


def compaction_view(tables: Mapping[str, pl.DataFrame], run_id: str, boundary: int, *, judge: str | None = None,
                    tau: float = 0.5, labels: pl.DataFrame | None = None, horizon: int = HORIZON,
                    index: Any = None, label_source: str = "") -> dict[str, Any]:
    """Everything a compaction page shows, as plain data: run, compaction, entries with score, label, evidence
    and identifiers, replaced history, retained turn, previous summary, the steps after it and those of the
    matched uncompressed run. ``labels`` are gold labels (``item_id``, ``field``, ``value``)."""
    runs, steps = tables["runs"], tables.get("steps")
    run = (_rows(runs, run_id=run_id) or [{"run_id": run_id}])[0]
    comp = _rows(tables["compactions"], run_id=run_id, boundary=boundary)
    if not comp:
        raise ValueError(f"no compaction {boundary} in run {run_id!r}")
    if index is None:
        index = span_index(steps if steps is not None else schema.empty("steps"))
    rows = RunRows.of(tables, run, labels, judge)
    return rows.view(comp[0], tables, judge=judge, tau=tau, horizon=horizon, index=index, label_source=label_source)


@dataclass
class RunRows:
    """One run's rows as a compaction page reads them: its steps in order, its entries by boundary, the chosen
    judge's scores and the gold labels by entry, its evidence table, and the steps of its matched uncompressed
    run. Read once per run (a polars filter per page cost milliseconds each, eleven per page)."""

    run: dict[str, Any]
    steps: list[dict[str, Any]]
    entries: dict[int, list[dict[str, Any]]]
    scores: dict[str, dict[str, Any]]
    gold: dict[str, Any]
    evidence: pl.DataFrame | None
    matched: list[dict[str, Any]]
    unread: pl.DataFrame | None = None  # the judge's scores, when entries are split here and not read from a table
    stored: dict[str, list[dict[str, Any]]] | None = None  # the evidence table's passages of every entry, read once
    _requests: set[str] | None = None

    def requests(self) -> set[str]:
        """The request ids the evidence table holds passages of."""
        if self._requests is None:
            self._requests = set(self.evidence.get_column("request_id").to_list()) if self.evidence is not None \
                else set()
        return self._requests

    @classmethod
    def of(cls, tables: Mapping[str, pl.DataFrame], run: dict[str, Any], labels: pl.DataFrame | None,
           judge: str | None) -> RunRows:
        """The rows of ``run`` in ``tables`` (which may hold other runs' rows too)."""
        run_id = run["run_id"]
        runs, steps = tables["runs"], tables.get("steps")
        entries: dict[int, list[dict[str, Any]]] = {}
        for e in sorted(_rows(tables.get("entries"), run_id=run_id), key=lambda e: (e["boundary"], e["position"])):
            entries.setdefault(e["boundary"], []).append(e)
        score_rows: dict[str, dict[str, Any]] = {}
        unread: pl.DataFrame | None = None  # scores of entries the entries table does not hold, read per page
        scores = tables.get("scores")
        if scores is not None and scores.height:
            chosen = scores
            if "repeat" in chosen.columns:
                chosen = chosen.filter(pl.col("repeat").fill_null(0) == 0)
            if judge is not None:
                chosen = chosen.filter(pl.col("judge") == judge)
            if entries:
                ids = [e["entry_id"] for rows in entries.values() for e in rows]
                chosen = chosen.filter(pl.col("entry_id").is_in(pl.Series(ids, dtype=pl.Utf8).implode()))
                score_rows = {r["entry_id"]: r for r in chosen.to_dicts()}
            else:
                unread = chosen
        gold = {}
        if labels is not None and labels.height:
            gold = {r["item_id"]: r["value"] for r in labels.filter(pl.col("field") == "support").to_dicts()}
        evidence = tables.get("evidence")
        if evidence is not None and evidence.height:
            evidence = evidence.filter(pl.col("run_id") == run_id) if "run_id" in evidence.columns else evidence
        matched: list[dict[str, Any]] = []
        if "method" in runs.columns and run.get("task_id") is not None and run.get("method") != "no_compression":
            twin = runs.filter((pl.col("task_id") == run["task_id"]) & (pl.col("method") == "no_compression"))
            if "replicate" in runs.columns and run.get("replicate") is not None:
                twin = twin.filter(pl.col("replicate") == run["replicate"])
            if twin.height:
                matched = sorted(_rows(steps, run_id=twin.get_column("run_id")[0]), key=lambda s: s["step"])
        return cls(run, sorted(_rows(steps, run_id=run_id), key=lambda s: s["step"]), entries, score_rows, gold,
                   evidence, matched, unread)

    def view(self, c: dict[str, Any], tables: Mapping[str, pl.DataFrame], *, judge: str | None, tau: float,
             horizon: int, index: Any, label_source: str) -> dict[str, Any]:
        """:func:`compaction_view` of compaction ``c`` of this run (``tables``: its compactions, when the
        entries table does not hold this compaction's entries)."""
        from workbench.summaries._entries import request_id

        run, run_id, boundary = self.run, self.run["run_id"], c["boundary"]
        start, end = c.get("span_start"), c.get("span_end")
        replaced = [s for s in self.steps
                    if (start is None or s["step"] >= start) and (end is None or s["step"] <= end)]
        table_entries = self.entries.get(boundary, [])
        carried: dict[str, tuple[int, int]] = {}
        if table_entries:
            from workbench.summaries._entries import entry_parts

            parsed = [(e["entry_id"], e["position"], e["section"], e.get("role") or "", e["text"])
                      for e in table_entries]
            for e in table_entries:
                if e.get("carried_from"):
                    _, b, pos = entry_parts(e["carried_from"])
                    carried[e["entry_id"]] = (b, pos)
        else:
            from workbench.summaries._entries import entries_table

            one = tables["compactions"].filter((pl.col("run_id") == run_id) & (pl.col("boundary") == boundary))
            parsed = [(e["entry_id"], e["position"], e["section"], e["role"] or "", e["text"])
                      for e in entries_table(one).iter_rows(named=True)]
        # the evidence the judge request used: the judge's evidence table, else retrieved as the judge would
        if self.evidence is not None and request_id(run_id, boundary) in self.requests():
            if self.stored is None:  # every entry of the run at once
                self.stored = entry_evidence(self.evidence, [e["entry_id"] for es in self.entries.values()
                                                             for e in es])
            passages = {p[0]: self.stored.get(p[0], []) for p in parsed}
        else:
            passages = _evidence_of(run, c, parsed, index)
        history_text = "\n".join(str(s.get(k) or "") for s in replaced for k in ("observation", "args", "text"))
        history_text += "\n" + (c.get("retained_turn") or "")
        scores = self.scores
        if self.unread is not None and parsed:
            ids = pl.Series([p[0] for p in parsed], dtype=pl.Utf8).implode()
            scores = {r["entry_id"]: r for r in self.unread.filter(pl.col("entry_id").is_in(ids)).to_dicts()}
        views = []
        for entry_id, position, section, role, text in parsed:
            sr = scores.get(entry_id, {})
            score = sr.get("score")
            evidence = [{"evidence_id": p["evidence_id"], "step": p["step"], "where": p["source"], "text": p["text"]}
                        for p in passages[entry_id]]
            views.append(EntryView(entry_id, position, section, role, text, score,
                                   "" if score is None else ("kept" if score >= tau else "pruned"),
                                   sr.get("reason") or "", self.gold.get(entry_id, ""), evidence,
                                   [(i, i in history_text) for i in code_identifiers(text)], carried.get(entry_id)))
        at = c.get("step")
        after = [_step_view(s) for s in self.steps if at is not None and at <= s["step"] < at + horizon]
        matched = [_step_view(s) for s in self.matched if at is not None and at <= s["step"] < at + horizon]
        return {"run": run, "compaction": c, "entries": views, "replaced": [_step_view(s) for s in replaced],
                "after": after, "matched": matched, "tau": tau, "judge": judge, "horizon": horizon,
                "scored": any(v.score is not None for v in views), "labelled": any(v.label for v in views),
                "label_source": label_source}


def _evidence_of(run: Mapping[str, Any], c: Mapping[str, Any], parsed: Sequence[tuple[str, int, str, str, str]],
                 index: Any) -> dict[str, list[dict[str, Any]]]:
    """Each entry's evidence passages (:func:`workbench.summaries._evidence.request_evidence`) from the request built here
    as the judge builds it (for a compaction no evidence table holds)."""
    from workbench.summaries._entries import request_id

    ids = [p[0] for p in parsed]
    rid = request_id(c["run_id"], c["boundary"])
    start, end = c.get("span_start"), c.get("span_end")
    outputs = index.outputs(c["run_id"], start, end)
    if c.get("retained_turn"):
        outputs.append(c["retained_turn"])
    request = build_request(task=run.get("task") or "", retained_turn=c.get("retained_turn") or "",
                            previous_summary=c.get("previous_summary") or "", outputs=outputs,
                            entries=[p[4] for p in parsed], request_id=rid)
    return request_evidence(CompactionRequest(c["run_id"], c["boundary"], tuple(ids), request,
                                              tuple(index.output_steps(c["run_id"], start, end)),
                                              tuple(index.output_tools(c["run_id"], start, end))))


# ---------------------------------------------------------------------------
# the site


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


def select_runs(runs: pl.DataFrame, *, run_ids: Sequence[str] | None = None, method: str | None = None,
                budget: int | None = None, limit: int | None = None) -> pl.DataFrame:
    """The runs a site shows: those named, of a method, at a budget, the first ``limit`` (in table order)."""
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


def build_site(tables: Mapping[str, pl.DataFrame], out: str | Path, *, labels: pl.DataFrame | None = None,
               judge: str | None = None, tau: float = 0.5, run_ids: Sequence[str] | None = None,
               method: str | None = None, budget: int | None = None, limit: int | None = None,
               title: str = "compactions", inputs: Sequence[str | Path] = ()) -> SiteReport:
    """Write the site for ``tables`` under ``out`` (replaced whole: written to a sibling, then moved into place).

    ``out`` is replaced only if this function made it (it holds :data:`MARKER`) or it is empty or absent; a file,
    any other directory, and a path that holds or lies inside one of ``inputs`` (the data the site is made from)
    are refused with :class:`~workbench._util.atomic.OutputRefused` before anything is written.

    ``labels`` are gold labels (:func:`workbench.tables._labels.gold_labels`; default: those of the tables' own ``labels``
    table, if any); ``judge`` picks the scores shown (default: ``lexical`` when present, else the first judge in
    the scores table).
    """
    t0 = time.perf_counter()
    out = Path(out)
    tables = {name: frame for name, frame in tables.items() if isinstance(frame, pl.DataFrame)}  # (a log's extras)
    runs = tables["runs"]
    chosen = select_runs(runs, run_ids=run_ids, method=method, budget=budget, limit=limit)
    scores = tables.get("scores")
    if judge is None and scores is not None and scores.height:
        judges = scores.get_column("judge").unique(maintain_order=True).to_list()
        judge = "lexical" if "lexical" in judges else judges[0]
    env = _env()
    counts: dict[str, int] = {}

    def write(tmp: Path) -> None:
        counts.update(_write_site(tmp, env, tables, chosen, runs, scores, labels, judge, tau, title))

    out = replace_owned_dir(out, MARKER, write, inputs=inputs, made_by="workbench explore")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return SiteReport(out, counts["runs"], counts["compactions"], counts["pages"], size, time.perf_counter() - t0)


def _write_site(tmp: Path, env: Any, tables: Mapping[str, pl.DataFrame], chosen: pl.DataFrame, runs: pl.DataFrame,
                scores: pl.DataFrame | None, labels: pl.DataFrame | None, judge: str | None, tau: float,
                title: str) -> dict[str, int]:
    """Write the site's pages into the empty directory ``tmp``; the counts :class:`SiteReport` gives."""
    (tmp / "runs").mkdir(parents=True)
    for asset in ("site.css", "site.js", "views.js"):
        shutil.copy(TEMPLATES / asset, tmp / asset)
    keep = set(chosen.get_column("run_id").to_list())
    sub = {name: (frame.filter(pl.col("run_id").is_in(keep)) if "run_id" in frame.columns else frame)
           for name, frame in tables.items() if isinstance(frame, pl.DataFrame)}
    if "entries" in sub and sub["entries"].height:
        from workbench.summaries._entries import with_roles

        sub["entries"] = with_roles(sub["entries"])
    source = ""
    if labels is None and "labels" in tables and tables["labels"].height:
        from workbench.tables._labels import gold_labels, label_source

        labels, source = gold_labels(tables["labels"]), label_source(tables["labels"])
    if scores is not None and "entries" in sub and scores.height:
        sub["scores"] = scores.join(sub["entries"].select("entry_id"), on="entry_id", how="semi")
    sub["runs"] = runs  # matched uncompressed runs and parents may lie outside the selection
    steps = tables.get("steps")
    if steps is not None:
        twins = _twin_ids(runs, chosen)
        sub["steps"] = steps.filter(pl.col("run_id").is_in(keep | twins))
    index = span_index(sub["steps"]) if "steps" in sub else None
    children: dict[str, list[str]] = {}
    if "parent_run_id" in runs.columns:
        for r in chosen.filter(pl.col("parent_run_id").is_not_null()).select("run_id", "parent_run_id").iter_rows():
            children.setdefault(r[1], []).append(r[0])
    pages, n_comp = 1, 0
    rows = []
    data = _ViewData(tau, tmp / "data")
    per_run = _PerRun(sub, labels)
    # each run's rows as Python rows one run at a time, from the frames _PerRun split by run (rows of the whole log
    # at once held gigabytes)
    comp_frames = per_run.parts.get("compactions", {})
    step_frames = per_run.parts.get("steps", {})
    for run in chosen.to_dicts():
        rid = run["run_id"]
        name = slug(rid)
        comps_here = comp_frames[rid].sort("boundary").to_dicts() if rid in comp_frames else []
        run_steps = step_frames[rid].sort("step").to_dicts() if rid in step_frames else []
        tokens = sum(int(run.get(k) or 0) for k in ("agent_tokens", "compressor_tokens"))
        rows.append({"run": run, "href": f"runs/{name}.html", "compactions": len(comps_here), "tokens": tokens})
        summary_tokens = {c["boundary"]: count(c.get("committed_summary") or c.get("candidate_summary") or "")
                          for c in comps_here}
        marks = {c["step"]: {**c, "href": f"{name}/b{c['boundary']}.html", "tokens_after": summary_tokens[c["boundary"]]}
                 for c in comps_here}
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
            view = rows_here.view(c, mine, judge=judge, tau=tau, horizon=HORIZON, index=index, label_source=source)
            data.add(run, c, view, f"runs/{name}", summary_tokens[c["boundary"]])
            _write(tmp / "runs" / name / f"b{c['boundary']}.html", env.get_template("compaction.html").render(
                title=title, view=view, run_href=f"../{name}.html", root="../../", details=details_json(view)))
            pages += 1
            n_comp += 1
    columns = [c for c in ("task_id", "project", "method", "budget", "model", "success", "steps") if c in runs.columns
               and runs.get_column(c).null_count() < runs.height]
    _write(tmp / "index.html", env.get_template("index.html").render(
        title=title, rows=rows, columns=columns, judge=judge, total=runs.height, root=""))
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

    The roots are the terms' first two characters. A shard whose terms weigh more than :data:`INDEX_SHARD_BYTES`
    keeps only the terms exactly as long as its prefix and names in ``split`` the prefixes one character longer
    that hold the rest, each split again as it needs. A term's postings (``e``: entry rows, ``s``: step rows) are
    its first :data:`MAX_POSTINGS` rows of each kind, with ``more`` when there were more."""
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
    written as soon as it is full and a term keeps no more rows than the index lists (:data:`MAX_POSTINGS`), so
    memory holds one shard of each view and the index's terms, not the log's rows."""

    def __init__(self, tau: float, out: Path) -> None:
        self.tau, self.out = tau, out
        out.mkdir()
        self.rows: dict[str, list[list[Any]]] = {"entries": [], "compactions": [], "steps": []}  # the open shards
        self.written = {kind: 0 for kind in self.rows}  # rows in shards already written
        self.index: dict[str, dict[str, list[int]]] = {}  # term -> {"e": entry rows, "s": step rows}, ascending

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
            rows = self.index.setdefault(term, {}).setdefault(kind, [])
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


def _script_json(value: Any, **dumps: Any) -> str:
    """``value`` as JSON that is safe inside a ``<script>`` element: ``<``, ``>``, ``&`` and U+2028/9 escaped (a
    log's ``</script>`` cannot end the script). ``dumps``: :func:`json.dumps`'s options."""
    text = json.dumps(value, **dumps)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                    ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


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


def _twin_ids(runs: pl.DataFrame, chosen: pl.DataFrame) -> set[str]:
    """Run ids of the uncompressed runs matched to the chosen ones (same task and replicate)."""
    if not {"task_id", "method"} <= set(runs.columns):
        return set()
    base = runs.filter(pl.col("method") == "no_compression")
    keys = ["task_id", "replicate"] if "replicate" in runs.columns else ["task_id"]
    return set(base.join(chosen.select(keys).unique(), on=keys).get_column("run_id").to_list())


def details_json(view: Mapping[str, Any]) -> str:
    """What a compaction page's entry panel shows on a click, as one JSON object safe inside a ``<script>``
    element (site.js builds the panel from it as text nodes): ``passages``, each evidence passage of the page once
    (``[anchor, source, text]``: anchor ``h-STEP`` or ``retained``), and ``entries`` in page order, each
    ``[section, role, score, decision, reason, label, carried_from, passages, identifiers]`` (score to three
    places as text or null; carried_from ``[boundary, position]`` or null; passages as indices into
    ``passages``; identifiers ``[identifier, 1 if in the replaced history else 0]``). Every string is
    :func:`visible` (control and bidi characters shown). A passage is written once however many entries cite it:
    the panel of each entry was its own hidden HTML, two thirds of a page's bytes."""
    passages: list[list[Any]] = []
    seen: dict[tuple[Any, ...], int] = {}
    entries = []
    for e in view["entries"]:
        cites = []
        for p in e.evidence:
            key = ("retained" if p["step"] is None else f"h-{p['step']}", visible(str(p["where"])),
                   visible(str(p["text"])))
            if key not in seen:
                seen[key] = len(passages)
                passages.append(list(key))
            cites.append(seen[key])
        entries.append([visible(e.section), e.role or "", None if e.score is None else format(e.score, ".3f"),
                        e.decision, visible(e.reason) if e.reason else "", e.label or "",
                        list(e.carried_from) if e.carried_from else None, cites,
                        [[visible(i), int(sourced)] for i, sourced in e.identifiers]])
    return _script_json({"tau": view["tau"], "passages": passages, "entries": entries}, ensure_ascii=False,
                        separators=(",", ":"))


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def show(tables: Mapping[str, pl.DataFrame], run_id: str, compaction: int = 0, *, judge: str | None = None,
         tau: float = 0.5, labels: pl.DataFrame | None = None) -> CompactionDisplay:
    """The compaction page of ``run_id``'s boundary ``compaction`` in a notebook cell, readable wherever the
    notebook is opened (:class:`CompactionDisplay`): a trusted notebook runs the page (styles, colours, clicks);
    an untrusted one (an executed copy opened in JupyterLab, GitHub, nbviewer, nbconvert with ``sanitize_html``)
    shows its core as plain lists: every entry with its score, decision and label, its evidence passages with
    their sources.

    Parameters
    ----------
    tables : mapping of str to polars.DataFrame
        The loaded tables.
    run_id : str
        The run.
    compaction : int, default 0
        Its boundary.
    judge : str, optional
        The judge whose scores colour the entries (``lexical`` when there, else the first, when None).
    tau : float, default 0.5
        The support threshold.
    labels : polars.DataFrame, optional
        Labels shown beside the scores.

    Returns
    -------
    CompactionDisplay
        The display (its ``data`` is the page's HTML, styles inline).
    """
    scores = tables.get("scores")
    if judge is None and scores is not None and scores.height:
        judges = scores.get_column("judge").unique(maintain_order=True).to_list()
        judge = "lexical" if "lexical" in judges else judges[0]
    view = compaction_view(tables, run_id, compaction, judge=judge, tau=tau, labels=labels)
    body = _env().get_template("compaction_body.html").render(view=view, run_href=None, details=details_json(view))
    css = (TEMPLATES / "site.css").read_text(encoding="utf-8")
    return CompactionDisplay(f"<div class='wb-explore'><style>{css}</style>{body}</div>", _safe_core(view),
                             (TEMPLATES / "site.js").read_text(encoding="utf-8"))


#: the tags an untrusted notebook keeps (bleach's, which nbconvert's ``sanitize_html`` uses; JupyterLab, GitHub and
#: nbviewer keep more): the core of :func:`show` uses these and no attribute
SAFE_TAGS = ("a", "abbr", "acronym", "b", "blockquote", "code", "em", "i", "li", "ol", "strong", "ul")


def _safe_core(view: Mapping[str, Any]) -> str:
    """A compaction as nested lists of :data:`SAFE_TAGS` only, no attribute: what reads the same with no style and
    no script."""
    import html as _html

    def esc(value: object) -> str:
        return _html.escape(visible("" if value is None else str(value)), quote=True)

    c, run = view["compaction"], view["run"]
    parts = [f"<b>{esc(run.get('run_id'))} · compaction {esc(c.get('boundary'))}</b> (before step {esc(c.get('step'))};"
             f" replaced steps {esc(c.get('span_start'))}-{esc(c.get('span_end'))})"]
    if view.get("judge"):
        parts.append(f"<i>scores: the {esc(view['judge'])} judge; supported at tau {esc(view['tau'])}</i>")
    parts.append("<ul>")
    section = None
    for e in view["entries"]:
        if e.section != section:
            if section is not None:
                parts.append("</ol></li>")
            section = e.section
            parts.append(f"<li><b>{esc(e.section)}</b>{f' <i>({esc(e.role)})</i>' if e.role else ''}<ol>")
        score = (f" <b>score {e.score:.2f}</b> <i>{'supported' if e.decision == 'kept' else 'unsupported'} at tau "
                 f"{esc(view['tau'])}</i>" if e.score is not None else "")
        label = f" · label <em>{esc(e.label)}</em>" if e.label else ""
        evidence = "".join(f"<li>from <code>{esc(p['where'])}</code><blockquote>{esc(p['text'])}</blockquote></li>"
                           for p in e.evidence)
        parts.append(f"<li>{esc(e.text)}{score}{label}"
                     + (f"<ul>{evidence}</ul>" if evidence else " <i>(no evidence passage)</i>") + "</li>")
    if section is not None:
        parts.append("</ol></li>")
    parts.append("</ul>")
    return "\n".join(parts)


class CompactionDisplay:
    """What :func:`show` returns. Displayed, it prints two outputs: the safe core (``text/html`` of
    :data:`SAFE_TAGS` only, which every sanitizer keeps) and a script (``application/javascript``, which sanitizers
    and untrusted notebooks drop) that, where it runs, builds the page in its own output and hides the core."""

    def __init__(self, data: str, core: str, script: str) -> None:
        self.data = data  # the page: styles inline, no script
        self.core = core
        self._script = script

    def builder(self) -> str:
        """The script that builds the page in its output (``element``: the output node, as JupyterLab and
        nbconvert's templates give it; a jQuery object in the classic notebook) and hides the core above it."""
        return ("(function (element) {\n"
                "  var host = element && element.jquery ? element[0] : element;\n"
                "  var root = document.createElement('div');\n"
                f"  root.innerHTML = {_script_json(self.data)};\n"
                "  host.appendChild(root.firstChild);\n"
                "  var tries = 0;\n"
                "  (function hideCore() {  // once the output is in the page (JupyterLab attaches it after this runs)\n"
                "    var area = host.closest ? host.closest('.jp-OutputArea-child, .output_area') : null;\n"
                "    if (!area) { if (tries++ < 40) { setTimeout(hideCore, 50); } return; }\n"
                "    var core = area.previousElementSibling;\n"
                "    if (core && core.querySelector('b')) { core.style.display = 'none'; }\n"
                "  })();\n"
                "  window.WB_SCOPE = host.lastChild;\n"
                f"{self._script}\n"
                "  delete window.WB_SCOPE;\n"
                "})(element);\n")

    def _ipython_display_(self) -> None:
        from IPython.display import display

        first = re.sub(r"<[^>]+>", "", self.core.split("\n", 1)[0])
        display({"text/html": self.core, "text/plain": first}, raw=True)
        display({"application/javascript": self.builder(), "text/plain": ""}, raw=True)

    def _repr_html_(self) -> str:
        return self.core


__all__ = ["build_site", "CompactionDisplay", "compaction_view", "HORIZON", "markdown", "MARKER", "SAFE_TAGS", "score_colour",
           "select_runs", "show", "SiteReport", "slug", "visible"]
