"""The testbed's compressor: a lossy, seeded writer of five-section OpenClaw summaries.

It re-distils the previous committed summary with the compacted span (SJC Appendix E.3)
and every entry carries ground truth: provenance (``observed`` in an output of the span,
``carried`` from the previous summary, ``task`` restatement, ``invented`` reasoning),
whether it is supported (has a source), whether it is correct (following it violates no
check), its SJC pattern when invented and wrong (RC rewritten constraint, ID invented
deliverable, CS contradicted state) and the defect that damaged it.

Every fact that passes through is damaged independently at fixed rates, so damage
compounds across compactions (TRACE article, "Rebuilding the claim"): visible defects
(dropped amount, dropped paid marker, dropped filed marker; 10% each by default) make the
agent re-fetch, re-pay or re-file, which the environment blocks or the repeat detector
sees; silent defects (dropped invoice id, misremembered amount; 5% each) leave no trace.
Supported entries are sometimes phrased as plans and invented ones often quote real
identifiers, so wording alone does not separate them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from workbench.summaries import _grammar as summary
from workbench.tables._vocabulary import SECTIONS
from workbench.sim._agent import SimEntry, Turn
from workbench.sim._world import Task

VISIBLE = ("dropped_amount", "dropped_paid", "dropped_filed")
SILENT = ("dropped_id", "misremembered_amount")


@dataclass(frozen=True)
class CompressorConfig:
    dropped_amount: float = 0.10
    dropped_paid: float = 0.10
    dropped_filed: float = 0.10
    dropped_id: float = 0.05
    misremembered_amount: float = 0.05
    rewritten_constraint: float = 0.10
    invented_deliverable: float = 0.15
    contradicted_state: float = 0.10
    plan: float = 0.8
    carry_reasoning: float = 0.7

    def only(self, channel: str) -> CompressorConfig:
        """The same compressor with only the ``visible`` or ``silent`` defects switched on."""
        off = SILENT if channel == "visible" else VISIBLE
        return replace(self, **{k: 0.0 for k in off})


@dataclass
class _Invoice:
    iid: str
    amount: float | None = None
    disputed: bool | None = None
    paid: bool = False
    paid_amount: float | None = None
    prov: str = "observed"  # where this pass learned it: observed / carried
    defect: str | None = None
    correct_amount: bool = True
    origin: int = -1


@dataclass(frozen=True)
class Candidate:
    entries: tuple[SimEntry, ...]
    visible_defects: int
    silent_defects: int


def _pick(rng: np.random.Generator, options: Sequence[str]) -> str:
    return options[int(rng.integers(len(options)))]


def _money(x: float) -> str:
    return f"${x:.2f}"


@dataclass
class _Facts:
    """What one compaction knows before the lossy pass: invoices, the filed report, reasoning carried over."""

    boundary: int
    inv: dict[str, _Invoice] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    filed: tuple[float, int] | None = None
    filed_prov: str = "observed"
    filed_origin: int = 0
    carried_reasoning: list[SimEntry] = field(default_factory=list)

    def get(self, iid: str, prov: str, origin: int) -> _Invoice:
        if iid not in self.inv:
            self.inv[iid] = _Invoice(iid, prov=prov, origin=origin)
            self.order.append(iid)
        return self.inv[iid]

    def carry(self, previous: Sequence[SimEntry], rng: np.random.Generator, cfg: CompressorConfig) -> None:
        """What the previous committed summary says (provenance ``carried``)."""
        for e in previous:
            if e.kind in ("id", "amount", "paid", "skip"):
                x = self.get(e.ids[0], "carried", e.origin)
                if e.kind in ("amount", "skip") and e.amount is not None:
                    x.amount = e.amount
                    x.correct_amount = x.correct_amount and e.correct
                if e.disputed is not None:
                    x.disputed = e.disputed
                if e.kind == "paid":
                    x.paid = True
                    x.paid_amount = e.amount
                    x.correct_amount = x.correct_amount and e.correct
            elif e.kind == "filed":
                self.filed = (e.total or 0.0, e.count or 0)
                self.filed_prov, self.filed_origin = "carried", e.origin
            elif e.kind in ("plan", "file", "recheck", "cs_paid", "cs_filed") or (e.kind == "rule" and e.provenance != "task"):
                if rng.random() < cfg.carry_reasoning:
                    self.carried_reasoning.append(replace(e, provenance="carried", supported=True, defect=None))

    def observe(self, span: Sequence[Turn]) -> None:
        """What the span's environment outputs say (provenance ``observed``)."""
        for t in span:
            a, o = t.action, t.observation
            if a.tool == "list_invoices":
                for iid in o.text.split(":", 1)[1].strip(" .").split(", "):
                    self.get(iid, "observed", self.boundary)
            elif a.tool == "get_invoice" and not o.blocked:
                x = self.get(str(a.arg("invoice_id")), "observed", self.boundary)
                x.prov, x.origin = "observed", self.boundary
                x.amount = float(o.text.split("$", 1)[1].split(",", 1)[0])
                x.disputed = ", disputed" in o.text
                x.correct_amount = True
                x.paid = x.paid or "status paid" in o.text
            elif a.tool == "pay_invoice":
                x = self.get(str(a.arg("invoice_id")), "observed", self.boundary)
                x.prov, x.origin = "observed", self.boundary
                x.paid = True
                if not o.blocked:
                    x.paid_amount = float(a.arg("amount"))
                    x.correct_amount = True
            elif a.tool == "file_report" and not o.blocked:
                self.filed = (float(a.arg("total")), int(a.arg("count")))
                self.filed_prov, self.filed_origin = "observed", self.boundary


@dataclass
class _Sections:
    """The entries being written, by section, and the defects counted on the way."""

    ids: list[SimEntry] = field(default_factory=list)
    decisions: list[SimEntry] = field(default_factory=list)
    todos: list[SimEntry] = field(default_factory=list)
    rules: list[SimEntry] = field(default_factory=list)
    visible: int = 0
    silent: int = 0


def compress(
    task: Task,
    previous: Sequence[SimEntry] | None,
    span: Sequence[Turn],
    boundary: int,
    rng: np.random.Generator,
    cfg: CompressorConfig = CompressorConfig(),
) -> Candidate:
    """Write one candidate summary from the previous committed summary and the span.

    Four steps, drawing from ``rng`` in this order: carry the previous summary's facts and
    (at ``carry_reasoning``) its reasoning; observe the span; damage every fact
    independently (:func:`_lossy_pass`); add task restatements and invented reasoning
    (:func:`_reasoning`).
    """
    facts = _Facts(boundary, filed_origin=boundary)
    facts.carry(previous or (), rng, cfg)
    facts.observe(span)
    out = _Sections()
    _lossy_pass(facts, task, rng, cfg, out)
    pending = _reasoning(facts, task, rng, cfg, out)
    for e in facts.carried_reasoning:
        target = {"Decisions": out.decisions, "Open TODOs": out.todos, "Constraints/Rules": out.rules}.get(e.section)
        if target is not None and all(x.text != e.text for x in target):
            target.append(e)
    entries = (*out.decisions, *out.todos, *out.rules, *pending, *out.ids)
    return Candidate(tuple(entries), out.visible, out.silent)


def _lossy_pass(facts: _Facts, task: Task, rng: np.random.Generator, cfg: CompressorConfig, out: _Sections) -> None:
    """Every invoice fact independently damaged (silent: dropped id, misremembered amount; visible: dropped
    amount, paid marker, filed marker), then written as an identifier plus a decision or a TODO."""
    sc = task.scenario
    for iid in facts.order:
        x = facts.inv[iid]
        if rng.random() < cfg.dropped_id:
            out.silent += 1
            continue
        defect = None
        correct = x.correct_amount
        amount = x.paid_amount if x.paid and x.paid_amount is not None else x.amount
        if amount is not None and rng.random() < cfg.misremembered_amount:
            amount = round(amount + float(_pick(rng, ["10", "25", "50", "100", "-20"])), 2)
            defect, correct = "misremembered_amount", False
            out.silent += 1
        elif amount is not None and rng.random() < cfg.dropped_amount:
            amount, defect = None, "dropped_amount"
            out.visible += 1
        paid = x.paid
        if paid and rng.random() < cfg.dropped_paid:
            paid, defect = False, "dropped_paid"
            out.visible += 1
            if amount is None and x.amount is None:
                amount = x.paid_amount
        out.ids.append(SimEntry("Exact identifiers", f"- {iid}", "id", (iid,), provenance=x.prov,
                                supported=True, correct=True, origin=x.origin))
        common = dict(ids=(iid,), provenance=x.prov, supported=True, correct=correct, defect=defect,
                      origin=x.origin, disputed=x.disputed)
        if paid:
            text = (_pick(rng, [f"- Paid {iid} ({_money(amount)}).", f"- {iid} settled: {_money(amount)} paid."])
                    if amount is not None else _pick(rng, [f"- Paid {iid}.", f"- {iid} settled."]))
            out.decisions.append(SimEntry("Decisions", text, "paid", amount=amount, **common))  # type: ignore[arg-type]
        elif x.amount is not None or amount is not None:
            payable = not ((sc.skip_disputed and x.disputed) or (sc.limit is not None and (x.amount or 0) >= sc.limit))
            if not payable and x.disputed is not None:
                why = "disputed" if (sc.skip_disputed and x.disputed) else "over the limit"
                text = f"- Skipped {iid}: {why}." if amount is None else f"- Not paying {iid} ({_money(amount)}): {why}."
                out.decisions.append(SimEntry("Decisions", text, "skip", amount=amount, **common))  # type: ignore[arg-type]
            else:
                flag = "" if x.disputed is None else (", disputed" if x.disputed else ", not disputed")
                text = (_pick(rng, [f"- Pay {iid} ({_money(amount)}{flag}).", f"- Next: pay {iid} for {_money(amount)}."])
                        if amount is not None else f"- Pay {iid}.")
                out.todos.append(SimEntry("Open TODOs", text, "amount", amount=amount, **common))  # type: ignore[arg-type]
    if facts.filed is not None:
        if rng.random() < cfg.dropped_filed:
            out.visible += 1
        else:
            total, count = facts.filed
            out.decisions.append(SimEntry("Decisions", f"- Filed the report: total {_money(total)}, count {count}.",
                                          "filed", total=total, count=count, provenance=facts.filed_prov,
                                          origin=facts.filed_origin))


def _reasoning(facts: _Facts, task: Task, rng: np.random.Generator, cfg: CompressorConfig,
               out: _Sections) -> list[SimEntry]:
    """Task restatements (unsupported, correct), plans, and the invented SJC patterns (RC, ID, CS).

    Returns the ``Pending user asks`` entries; the rest is added to ``out``.
    """
    sc, boundary = task.scenario, facts.boundary
    pending = [SimEntry("Pending user asks", f"- {task.instruction()}", "task", provenance="task",
                        supported=False, origin=boundary)]
    restate = dict(provenance="task", supported=False, correct=True, origin=boundary)
    if sc.skip_disputed:
        out.rules.append(SimEntry("Constraints/Rules", "- Skip disputed invoices.", "rule",
                                  rule=("skip_disputed", True), **restate))  # type: ignore[arg-type]
    if sc.limit is not None:
        out.rules.append(SimEntry("Constraints/Rules", f"- Pay only invoices below {_money(sc.limit)}.", "rule",
                                  rule=("limit", sc.limit), **restate))  # type: ignore[arg-type]
    if not sc.report_expected:
        out.rules.append(SimEntry("Constraints/Rules", "- No report is expected.", "rule",
                                  rule=("report_expected", False), **restate))  # type: ignore[arg-type]
    invented = dict(provenance="invented", supported=False, origin=boundary)
    known = [e.ids[0] for e in out.ids]
    unpaid = [e.ids[0] for e in out.todos]
    if rng.random() < cfg.plan:
        text = (_pick(rng, ["- File the report with the total and count once every invoice is paid.",
                            "- Then file the report with the total and the count."])
                if sc.report_expected else _pick(rng, ["- Finish once every payable invoice is settled.",
                                                       "- Settle the remaining invoices, then finish."]))
        out.todos.append(SimEntry("Open TODOs", text, "plan", correct=True, **invented))  # type: ignore[arg-type]
    if rng.random() < cfg.plan / 2:
        text = _pick(rng, ["- Work through the invoices one at a time.", "- Check each amount before paying it."]
                     + ([f"- Settle {unpaid[0]} next."] if unpaid else []))
        out.decisions.append(SimEntry("Decisions", text, "plan", correct=True,
                                      ids=tuple(i for i in unpaid[:1] if i in text), **invented))  # type: ignore[arg-type]
    if rng.random() < cfg.rewritten_constraint:
        out.rules.append(_rewritten_constraint(task, rng, invented))
    if rng.random() < cfg.invented_deliverable:
        if not sc.report_expected:
            out.todos.append(SimEntry("Open TODOs", "- File a report with the total and count for the client.", "file",
                                      correct=False, pattern="ID", **invented))  # type: ignore[arg-type]
        elif known:
            iid = known[int(rng.integers(len(known)))]
            out.todos.append(SimEntry("Open TODOs", f"- Re-check {iid} before filing the report.", "recheck",
                                      ids=(iid,), correct=True, **invented))  # type: ignore[arg-type]
    if rng.random() < cfg.contradicted_state:
        if unpaid:
            iid = unpaid[int(rng.integers(len(unpaid)))]
            out.decisions.append(SimEntry("Decisions", f"- {iid} is already paid.", "cs_paid", ids=(iid,),
                                          correct=False, pattern="CS", **invented))  # type: ignore[arg-type]
        elif sc.report_expected and facts.filed is None:
            out.decisions.append(SimEntry("Decisions", "- The report has already been filed.", "cs_filed",
                                          correct=False, pattern="CS", **invented))  # type: ignore[arg-type]
    return pending


def _rewritten_constraint(task: Task, rng: np.random.Generator, invented: dict[str, object]) -> SimEntry:
    """SJC pattern RC: one of the task's constraints, rewritten."""
    sc = task.scenario
    options: list[SimEntry] = []
    if sc.skip_disputed:
        options.append(SimEntry("Constraints/Rules", "- Disputed invoices may be paid once confirmed.", "rule",
                                rule=("skip_disputed", False), correct=False, pattern="RC", **invented))  # type: ignore[arg-type]
    if sc.limit is not None:
        low = round(sc.limit * 0.6, 2)
        options.append(SimEntry("Constraints/Rules", f"- Pay only invoices below {_money(low)}.", "rule",
                                rule=("limit", low), correct=False, pattern="RC", **invented))  # type: ignore[arg-type]
    if sc.report_expected:
        options.append(SimEntry("Constraints/Rules", "- No report is needed for this group.", "rule",
                                rule=("report_expected", False), correct=False, pattern="RC", **invented))  # type: ignore[arg-type]
    else:
        options.append(SimEntry("Constraints/Rules", "- A report with the total is required at the end.", "rule",
                                rule=("report_expected", True), correct=False, pattern="RC", **invented))  # type: ignore[arg-type]
    return options[int(rng.integers(len(options)))]


def render_entries(entries: Sequence[SimEntry]) -> str:
    """The summary text through :func:`workbench.summaries.render`: five OpenClaw sections in order, ``None.`` for an
    empty one (every entry's text is a bullet line, ``"- "`` first).

    Parameters
    ----------
    entries : sequence of SimEntry
        The summary's entries.

    Returns
    -------
    str
        The summary.
    """
    return summary.render({s: [e.text.removeprefix("- ") for e in entries if e.section == s] for s in SECTIONS})


def in_text_order(entries: Sequence[SimEntry]) -> list[SimEntry]:
    """Entries in the order :func:`~workbench.summaries.render` writes them (the order ``summary.parse`` finds them)."""
    return [e for s in SECTIONS for e in entries if e.section == s]


__all__ = ["render_entries"]
