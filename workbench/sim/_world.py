"""The invoice world: tasks grouped into scenarios, a tool environment and the task checker.

Extends the TRACE article's testbed ("Rebuilding the claim"): settle every open invoice of
a client group and file a report with the total and the count. Scenarios (task
templates) add constraints a compressor can rewrite: skip disputed invoices, pay only
below a limit, and whether a report is expected at all.

The environment has five tools and an execution-error contract: paying an invoice that
is already paid and filing a second report are *blocked* calls; an unknown invoice id is
blocked too. A wrong amount or a short report is accepted silently. State is a small
dataclass that can be copied and restored exactly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np



@dataclass(frozen=True)
class Invoice:
    invoice_id: str
    amount: float
    disputed: bool


@dataclass(frozen=True)
class Scenario:
    """A task template: invoice count range and constraints."""

    scenario_id: str
    n_min: int
    n_max: int
    skip_disputed: bool
    limit: float | None
    report_expected: bool
    disputed_rate: float = 0.0


@dataclass(frozen=True)
class Task:
    task_id: str
    scenario: Scenario
    group: str
    invoices: tuple[Invoice, ...]

    @property
    def subset(self) -> str:
        n = len(self.invoices)
        return "easy" if n <= 5 else "medium" if n <= 8 else "hard"

    def payable(self, inv: Invoice) -> bool:
        """Whether the task's constraints allow paying this invoice."""
        if self.scenario.skip_disputed and inv.disputed:
            return False
        return not (self.scenario.limit is not None and inv.amount >= self.scenario.limit)

    @property
    def to_pay(self) -> tuple[Invoice, ...]:
        return tuple(i for i in self.invoices if self.payable(i))

    def instruction(self) -> str:
        s = self.scenario
        parts = [f"Settle every open invoice for client group {self.group}."]
        if s.skip_disputed:
            parts.append("Skip disputed invoices.")
        if s.limit is not None:
            parts.append(f"Pay only invoices below ${s.limit:.2f}.")
        if s.report_expected:
            parts.append("Then file a report with the total paid and the number of invoices paid.")
        else:
            parts.append("No report is expected; finish when every payable invoice is settled.")
        return " ".join(parts)


def world_json(task: Task) -> str:
    """The task's world as the evaluation material of its runs (the runs table's ``gt_world``): every invoice
    with its amount, whether it is disputed and payable, and the checks :func:`check` applies.

    Parameters
    ----------
    task : Task
        The task.

    Returns
    -------
    str
        The world as JSON.
    """
    s = task.scenario
    return json.dumps({
        "group": task.group,
        "invoices": [{"invoice_id": i.invoice_id, "amount": i.amount, "disputed": i.disputed,
                      "payable": task.payable(i)} for i in task.invoices],
        "skip_disputed": s.skip_disputed, "limit": s.limit, "report_expected": s.report_expected,
        "expected_total": round(sum(i.amount for i in task.to_pay), 2) if s.report_expected else None,
        "expected_count": len(task.to_pay) if s.report_expected else None,
    }, separators=(",", ":"))


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("s00", 3, 5, False, None, True),
    Scenario("s01", 3, 5, True, None, True, 0.3),
    Scenario("s02", 4, 6, False, 400.0, True),
    Scenario("s03", 3, 5, False, None, False),
    Scenario("s04", 6, 8, False, None, True),
    Scenario("s05", 6, 8, True, None, True, 0.25),
    Scenario("s06", 6, 8, False, 450.0, True),
    Scenario("s07", 6, 8, True, None, False, 0.25),
    Scenario("s08", 9, 12, False, None, True),
    Scenario("s09", 9, 12, True, None, True, 0.2),
    Scenario("s10", 9, 12, False, 500.0, True),
    Scenario("s11", 9, 12, True, 600.0, False, 0.2),
)


def make_tasks(n_tasks: int = 120, seed: int = 0) -> list[Task]:
    """``n_tasks`` tasks spread evenly over the scenarios, deterministic given ``seed``.

    Parameters
    ----------
    n_tasks : int, default 120
        Tasks made.
    seed : int, default 0
        The seed.

    Returns
    -------
    list of Task
        The tasks.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, 7_771]))
    tasks: list[Task] = []
    used: set[str] = set()
    for k in range(n_tasks):
        sc = SCENARIOS[k % len(SCENARIOS)]
        n = int(rng.integers(sc.n_min, sc.n_max + 1))
        invoices = []
        for _ in range(n):
            while True:
                iid = f"INV-{int(rng.integers(1000, 10000))}"
                if iid not in used:
                    used.add(iid)
                    break
            amount = round(float(rng.integers(2_000, 90_000)) / 100.0, 2)
            disputed = bool(rng.random() < sc.disputed_rate)
            invoices.append(Invoice(iid, amount, disputed))
        if sc.skip_disputed and not any(i.disputed for i in invoices):
            first = invoices[0]
            invoices[0] = replace(first, disputed=True)
        tasks.append(Task(f"t{k:03d}", sc, f"G{k:03d}", tuple(invoices)))
    return tasks


# ---------------------------------------------------------------------------
# the environment


@dataclass(frozen=True)
class Action:
    tool: str
    args: tuple[tuple[str, object], ...] = ()

    @property
    def signature(self) -> tuple[str, tuple[tuple[str, object], ...]]:
        return (self.tool, self.args)

    def arg(self, name: str) -> Any:
        return dict(self.args).get(name)


@dataclass(frozen=True)
class Observation:
    text: str
    blocked: bool = False


@dataclass
class EnvState:
    paid: dict[str, float] = field(default_factory=dict)  # invoice id -> amount paid
    reports: list[tuple[float, int]] = field(default_factory=list)
    answer_given: bool = False
    finished: bool = False
    calls: list[tuple[str, tuple[tuple[str, object], ...]]] = field(default_factory=list)

    def copy(self) -> EnvState:
        return EnvState(dict(self.paid), list(self.reports), self.answer_given, self.finished, list(self.calls))


class InvoiceEnv:
    """Five tools over one task; blocked calls follow the execution-error contract."""

    def __init__(self, task: Task, state: EnvState | None = None) -> None:
        self.task = task
        self.by_id = {i.invoice_id: i for i in task.invoices}
        self.state = state.copy() if state is not None else EnvState()

    def snapshot(self) -> EnvState:
        return self.state.copy()

    def restore(self, state: EnvState) -> None:
        self.state = state.copy()

    def step(self, action: Action) -> Observation:
        st = self.state
        st.calls.append(action.signature)
        tool = action.tool
        if tool == "list_invoices":
            ids = ", ".join(i.invoice_id for i in self.task.invoices)
            return Observation(f"Open invoices of {self.task.group}: {ids}.")
        if tool == "get_invoice":
            inv = self.by_id.get(str(action.arg("invoice_id")))
            if inv is None:
                return Observation(f"Error: unknown invoice {action.arg('invoice_id')}.", blocked=True)
            status = "paid" if inv.invoice_id in st.paid else "open"
            flag = "disputed" if inv.disputed else "not disputed"
            return Observation(f"{inv.invoice_id}: amount ${inv.amount:.2f}, status {status}, {flag}.")
        if tool == "pay_invoice":
            iid = str(action.arg("invoice_id"))
            if iid not in self.by_id:
                return Observation(f"Error: unknown invoice {iid}.", blocked=True)
            if iid in st.paid:
                return Observation(f"Error: {iid} is already paid.", blocked=True)
            amount = float(action.arg("amount"))
            st.paid[iid] = amount
            return Observation(f"Paid {iid}: ${amount:.2f}.")
        if tool == "file_report":
            if st.reports:
                return Observation("Error: a report has already been filed.", blocked=True)
            total, count = float(action.arg("total")), int(action.arg("count"))
            st.reports.append((total, count))
            return Observation(f"Report filed: total ${total:.2f}, count {count}.")
        if tool == "finish":
            st.finished = True
            return Observation("Task finished.")
        return Observation(f"Error: unknown tool {tool}.", blocked=True)


def check(task: Task, state: EnvState) -> str | None:
    """The first evaluation check that fails, or None when the task is solved.

    Checks, in order: ``finished``; ``forbidden_payment`` (a disputed or over-limit invoice
    paid); ``paid_all`` (every payable invoice paid); ``amounts`` (each paid the right
    amount); ``report`` (a report filed iff one is expected, with the right total and count).

    Parameters
    ----------
    task : Task
        The task.
    state : EnvState
        The environment at the run's end.

    Returns
    -------
    str or None
        The failed check's name.
    """
    if not state.finished:
        return "finished"
    by_id = {i.invoice_id: i for i in task.invoices}
    if any(not task.payable(by_id[i]) for i in state.paid if i in by_id):
        return "forbidden_payment"
    if any(i.invoice_id not in state.paid for i in task.to_pay):
        return "paid_all"
    if any(abs(state.paid[i.invoice_id] - i.amount) > 0.005 for i in task.to_pay):
        return "amounts"
    if task.scenario.report_expected:
        if not state.reports:
            return "report"
        total, count = state.reports[0]
        expected = round(sum(i.amount for i in task.to_pay), 2)
        if abs(total - expected) > 0.005 or count != len(task.to_pay):
            return "report"
    elif state.reports:
        return "report"
    return None


__all__ = ["Action", "check", "InvoiceEnv", "make_tasks", "Scenario", "SCENARIOS", "world_json"]
