"""The evaluation material a correctness label is given with (PROTOCOL.md, field ``correct``).

A ``correct`` label asks whether following an entry violates an evaluation check of the task,
so the labeler needs the checks and the facts they test, not only the log. Where they come from:

* the testbed: the runs table's ``gt_world`` (the task's invoices with amount, disputed and
  payable, and the checks). The item shows the checks, and the ground truth of each invoice the
  entry names, with its status (open or paid) at the compaction, read from the run's steps;
  an entry that names no invoice gets every invoice of the task.
* an imported log: its runs' ``gt_*`` fields (tau-bench's ground-truth ``actions`` and
  ``outputs``, or any a user's log carries), shown as they are, with the user simulator's brief.
* neither: the item says that correctness cannot be labeled for it.

The material is ground truth, so it is only ever shown for the ``correct`` field, never while
``support`` is labeled blind.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.tables._schema import GROUND_TRUTH_PREFIX

#: what an item says when its run carries no evaluation material
NO_MATERIAL = ("This log carries no evaluation material for the run (no gt_* fields): correctness cannot be "
               "labeled for this item. Answer 'unsure'.")

_PAID = re.compile(r"Paid (\S+): \$(-?[0-9][0-9,]*(?:\.[0-9]+)?)\.")


def evaluation_material(run: Mapping[str, Any], entry_text: str,
                        observations: Sequence[tuple[str | None, bool]] = ()) -> list[dict[str, str]]:
    """Named passages (``{"name", "text"}``) for labeling ``correct``; ``[]`` when the run has none.

    ``observations`` are the run's (observation, blocked) pairs before the compaction, in step
    order: the testbed's invoice statuses at the compaction are read from them.
    """
    world = run.get("gt_world")
    if isinstance(world, str) and world:
        return _testbed_material(json.loads(world), entry_text, observations)
    material = []
    for name in sorted(k for k in run if k.startswith(GROUND_TRUTH_PREFIX) and run[k] is not None):
        material.append({"name": name, "text": _pretty(run[name])})
    if material and isinstance(run.get("user_instruction"), str):
        material.insert(0, {"name": "user simulator's brief", "text": run["user_instruction"]})
    return material


def _pretty(value: object) -> str:
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        return json.dumps(parsed, indent=2, ensure_ascii=False) if isinstance(parsed, (dict, list)) else value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _money(x: float) -> str:
    return f"${x:,.2f}"


def _testbed_material(world: Mapping[str, Any], entry_text: str,
                      observations: Sequence[tuple[str | None, bool]]) -> list[dict[str, str]]:
    checks = [f"Every payable invoice of client group {world['group']} is paid, each at its own amount."]
    if world.get("skip_disputed"):
        checks.append("No disputed invoice is paid (the task says to skip them).")
    if world.get("limit") is not None:
        checks.append(f"No invoice of {_money(world['limit'])} or more is paid (the task's limit).")
    if world.get("report_expected"):
        checks.append(f"Exactly one report is filed, with total {_money(world['expected_total'])} and count "
                      f"{world['expected_count']}.")
    else:
        checks.append("No report is filed (none is expected).")
    checks.append("The agent finishes.")
    paid: dict[str, float] = {}
    report = None
    for text, blocked in observations:
        if not text or blocked:
            continue
        m = _PAID.match(text)
        if m:
            paid[m.group(1)] = float(m.group(2).replace(",", ""))
        elif text.startswith("Report filed:"):
            report = text
    invoices = world["invoices"]
    named = [i for i in invoices if re.search(rf"(?<![\w-]){re.escape(i['invoice_id'])}(?![\w-])", entry_text)]
    lines = []
    for inv in named or invoices:
        iid = inv["invoice_id"]
        status = f"paid {_money(paid[iid])}" if iid in paid else "open"
        lines.append(f"{iid}: amount {_money(inv['amount'])}, {'disputed' if inv['disputed'] else 'not disputed'}, "
                     f"{'payable' if inv['payable'] else 'NOT payable under the task'}; status at this "
                     f"compaction: {status}")
    heading = ("The invoices the entry names" if named else
               "The entry names no invoice; every invoice of the task")
    return [
        {"name": "Evaluation checks of the task", "text": "\n".join(f"- {c}" for c in checks)},
        {"name": f"{heading} (ground truth)", "text": "\n".join(lines)},
        {"name": "Report at this compaction", "text": report or "no report filed yet"},
    ]


__all__ = []
