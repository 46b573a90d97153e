"""The scripted agent and its context: it believes only what its context says.

The context is the first prompt, the committed summary (if any) and the raw turns kept
since. The agent reads its beliefs from them -- raw observations first (the most recent),
then summary entries, then the prompt -- and so follows the TODOs and constraints a
summary states: a rewritten constraint, an invented deliverable or a contradicted state
can derail it. It re-reads an invoice it already knows at a small rate, works through
the invoices in an order shuffled per replicate, and stops at 50 steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from workbench.sim._world import Action, Observation, Task

MAX_STEPS = 50


@dataclass(frozen=True)
class Turn:
    """One raw action-observation exchange."""

    step: int
    action: Action
    observation: Observation

    def render(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.action.args)
        return f"[Assistant]: {self.action.tool}({args})\n[Tool]: {self.observation.text}"


@dataclass(frozen=True)
class SimEntry:
    """A summary entry with the structured fact it states and its ground truth.

    ``kind`` is what the agent reads from it: ``list`` (invoice ids), ``id``, ``amount``
    (an unpaid invoice's amount and flags, phrased as a TODO), ``paid``, ``skip``,
    ``filed``, ``task``, ``rule`` (a constraint), ``plan`` (no effect), ``recheck``
    (re-fetch an invoice), ``file`` (file a report), ``cs_paid``, ``cs_filed``.
    """

    section: str
    text: str
    kind: str
    ids: tuple[str, ...] = ()
    amount: float | None = None
    disputed: bool | None = None
    rule: tuple[str, object] | None = None
    total: float | None = None
    count: int | None = None
    provenance: str = "observed"
    supported: bool = True
    correct: bool = True
    pattern: str | None = None
    defect: str | None = None
    origin: int = -1  # boundary where the entry first appeared


@dataclass
class Context:
    prompt: str
    summary: list[SimEntry] | None = None
    turns: list[Turn] = field(default_factory=list)


@dataclass
class Beliefs:
    ids: list[str] = field(default_factory=list)
    amount: dict[str, float] = field(default_factory=dict)
    disputed: dict[str, bool] = field(default_factory=dict)
    paid: set[str] = field(default_factory=set)
    filed: bool = False
    skip_disputed: bool = False
    limit: float | None = None
    report_expected: bool = True
    file_todo: bool = False
    recheck: list[str] = field(default_factory=list)
    listed: bool = False

    def know(self, iid: str) -> None:
        if iid not in self.ids:
            self.ids.append(iid)


def read_beliefs(task: Task, ctx: Context) -> Beliefs:
    """What the context says, oldest source first so later sources override."""
    sc = task.scenario
    b = Beliefs(skip_disputed=sc.skip_disputed, limit=sc.limit, report_expected=sc.report_expected)
    for e in ctx.summary or ():
        k = e.kind
        for iid in e.ids:
            b.know(iid)
        if k == "amount":
            if e.amount is not None:
                b.amount[e.ids[0]] = e.amount
            if e.disputed is not None:
                b.disputed[e.ids[0]] = e.disputed
        elif k in ("paid", "cs_paid"):
            b.paid.add(e.ids[0])
            if e.amount is not None:
                b.amount[e.ids[0]] = e.amount
        elif k == "skip":
            b.disputed.setdefault(e.ids[0], bool(e.disputed))
            if e.amount is not None:
                b.amount[e.ids[0]] = e.amount
        elif k in ("filed", "cs_filed"):
            b.filed = True
        elif k == "rule" and e.rule is not None:
            name, value = e.rule
            setattr(b, name, value)
        elif k == "file":
            b.file_todo = True
        elif k == "recheck":
            b.recheck.extend(e.ids)
        elif k == "list":
            b.listed = True
    for t in ctx.turns:
        a, o = t.action, t.observation
        if a.tool == "list_invoices":
            b.listed = True
            body = o.text.split(":", 1)[1]
            for iid in body.strip(" .").split(", "):
                if iid:
                    b.know(iid)
        elif a.tool == "get_invoice" and not o.blocked:
            iid = str(a.arg("invoice_id"))
            b.know(iid)
            b.amount[iid] = float(o.text.split("$", 1)[1].split(",", 1)[0])
            b.disputed[iid] = ", disputed" in o.text
            if "status paid" in o.text:
                b.paid.add(iid)
            else:
                b.paid.discard(iid)  # the environment's word beats the summary's
            if iid in b.recheck:
                b.recheck.remove(iid)
        elif a.tool == "pay_invoice":
            iid = str(a.arg("invoice_id"))
            b.know(iid)
            if not o.blocked or "already paid" in o.text:
                b.paid.add(iid)
            if not o.blocked:
                b.amount[iid] = float(a.arg("amount"))
        elif a.tool == "file_report":
            b.filed = True
    return b


@dataclass
class ScriptedAgent:
    """Deterministic given its RNG: order keys per replicate, re-read rate per step."""

    task: Task
    order: dict[str, float]
    reread_rate: float = 0.05

    def act(self, ctx: Context, rng: np.random.Generator) -> Action:
        b = read_beliefs(self.task, ctx)
        if not b.ids and not b.listed:
            return Action("list_invoices", (("group", self.task.group),))
        if b.recheck:
            return Action("get_invoice", (("invoice_id", b.recheck[0]),))
        known = [i for i in b.ids if i in b.amount]
        if known and rng.random() < self.reread_rate:
            iid = known[int(rng.integers(len(known)))]
            return Action("get_invoice", (("invoice_id", iid),))
        for iid in sorted(b.ids, key=lambda i: (self.order.get(i, 2.0), i)):
            if iid in b.paid:
                continue
            if iid not in b.amount or iid not in b.disputed:
                return Action("get_invoice", (("invoice_id", iid),))
            amount = b.amount[iid]
            if b.skip_disputed and b.disputed[iid]:
                continue
            if b.limit is not None and amount >= b.limit:
                continue
            return Action("pay_invoice", (("invoice_id", iid), ("amount", round(amount, 2))))
        if (b.report_expected or b.file_todo) and not b.filed:
            missing = [i for i in b.ids if i in b.paid and i not in b.amount]
            if missing:
                return Action("get_invoice", (("invoice_id", missing[0]),))
            paid = [i for i in b.ids if i in b.paid]
            total = round(sum(b.amount[i] for i in paid), 2)
            return Action("file_report", (("total", total), ("count", len(paid))))
        return Action("finish", ())


__all__ = []
