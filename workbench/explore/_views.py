"""What one compaction looks like, for the site and a notebook alike: its summary's entries with their scores, labels
and evidence, the replaced history, the retained turn and what came next (:func:`compaction_view`), a run's rows read
once (:class:`RunRows`), and the Markdown and colours every view uses.

Every string from a log is shown as text: Jinja2 autoescapes it, and control and format characters (ANSI escapes,
bidi overrides) are made visible as ``\\xNN``."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from workbench.tables import _schema as schema
from workbench._util.untrusted import visible
from workbench.summaries._evidence import CompactionRequest, build_request, entry_evidence, request_evidence, span_index
from workbench.summaries._identifiers import code_identifiers


HORIZON = 5  # steps after a compaction shown as "what came next" (TRACE's K)


CUT = 1500  # characters of a long text shown before "show all"


TEMPLATES = Path(__file__).with_name("templates")


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
    matched uncompressed run. ``labels`` are gold labels (``item_id``, ``field``, ``value``).

    Parameters
    ----------
    tables : mapping of str to polars.DataFrame
        The tables of (at least) the compaction's run and its matched uncompressed run.
    run_id : str
        The run.
    boundary : int
        The compaction's boundary in the run.
    judge : str, optional
        The judge whose scores are shown (default: ``lexical`` when present, else the first).
    tau : float, default 0.5
        The score below which an entry counts as pruned.
    labels : polars.DataFrame, optional
        Gold labels.
    horizon : int, default 5
        Steps shown after the compaction.
    index : object, optional
        The runs' step index (:func:`workbench.summaries.span_index`) when the caller has it.
    label_source : str, default ""
        Where the labels come from, in words the page shows.

    Returns
    -------
    dict of str to object
        The view, plain data (strings, numbers, lists, dicts) the page templates render.
    """
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
    _step_facts: list[dict[str, str]] | None = None  # each step's observation's facts, read once for every card

    def step_facts(self) -> list[dict[str, str]]:
        """The facts (:func:`workbench.analyses.facts`) of each step's observation, in step order, found once."""
        if self._step_facts is None:
            from workbench.analyses import facts

            self._step_facts = [facts(s.get("observation"))
                                for s in sorted(self.steps, key=lambda s: s["step"])]
        return self._step_facts

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
                "losses": losses_card(c, self.steps, run.get("task"), step_facts=self.step_facts()),
                "after": after, "matched": matched, "tau": tau, "judge": judge, "horizon": horizon,
                "scored": any(v.score is not None for v in views), "labelled": any(v.label for v in views),
                "label_source": label_source}


def losses_card(c: Mapping[str, Any], steps: Sequence[Mapping[str, Any]], task: str | None, *,
                step_facts: Sequence[dict[str, str]] | None = None) -> dict[str, Any]:
    """What a compaction page's card shows of what the compaction lost (:mod:`workbench.analyses._compaction_losses`):
    the recorded tokens before and after, its type, strategy and trigger, and the facts of the replaced history it
    carried and dropped, each with the step that returned it and, for a dropped one, the step that fetched it again
    and that step's tokens. ``step_facts``: each step's facts in step order, where the caller found them once."""
    from workbench.analyses._compaction_losses import fact_totals, facts_of

    ordered = sorted(steps, key=lambda s: s["step"])
    found = facts_of(c, [s["step"] for s in ordered], [s.get("observation") for s in ordered], task,
                     step_facts=step_facts)
    tokens = {s["step"]: (s.get("input_tokens") or 0) + (s.get("output_tokens") or 0) for s in ordered
              if s.get("input_tokens") is not None or s.get("output_tokens") is not None}
    return {**fact_totals(found, tokens), "pre_tokens": c.get("pre_tokens"), "post_tokens": c.get("post_tokens"),
            "type": c.get("compaction_type"), "strategy": c.get("strategy"), "trigger": c.get("trigger"),
            "carried": [f for f in found if f["carried"]], "dropped": [f for f in found if not f["carried"]]}


def _evidence_of(run: Mapping[str, Any], c: Mapping[str, Any], parsed: Sequence[tuple[str, int, str, str, str]],
                 index: Any) -> dict[str, list[dict[str, Any]]]:
    """Each entry's evidence passages (``request_evidence``) from the request built here
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


def _script_json(value: Any, **dumps: Any) -> str:
    """``value`` as JSON that is safe inside a ``<script>`` element: ``<``, ``>``, ``&`` and U+2028/9 escaped (a
    log's ``</script>`` cannot end the script). ``dumps``: :func:`json.dumps`'s options."""
    text = json.dumps(value, **dumps)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                    ("\u2029", "\\u2029")):
        text = text.replace(ch, esc)
    return text


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


__all__ = ["compaction_view", "RunRows"]
