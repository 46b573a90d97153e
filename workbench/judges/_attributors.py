"""Failure attributors behind one protocol, beside the source judges: given a failed run's steps (and, when allowed,
its question's reference answer), say which agent's step decided the failure, at which step, and why.

:class:`Attributor` is the protocol (``name``, ``with_reference``, ``attribute(log) -> Attribution``). The offline
baselines here need no model, so the failure-attribution notebook and its tables run on a fresh machine:

* :class:`LastStep`: the run's last step and its agent (the failure shows at the end);
* :class:`FirstError`: the first step after the task whose text signals an error or a failed tool call
  (``ERROR_PATTERN``), else the last step;
* :class:`MostActive`: the agent with the most steps, at its first step;
* :class:`PositionPrior`: the decisive step's median relative position on other labelled logs (fitted on one
  subset, tested on the other), and the agent at that step.

:func:`failure_logs` builds the logs from a directory's tables and :func:`predict` runs an attributor over them (the
evaluation is :mod:`workbench.analyses._failure_attribution`'s). Steps are 0-based indices into the log, as the labels
are. An attributor that cannot say (a run with no step) gives
``None`` for what it cannot name, with its ``reason``: a miss, never an error of the run.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import polars as pl

#: words that signal an error or a failed tool call in a step's text (FirstError)
ERROR_PATTERN = re.compile(r"\b(error|exception|traceback|failed|failure|not found|unable to|cannot|can't|"
                           r"couldn't|could not|timed? ?out|invalid|no results?|exitcode: 1)\b", re.IGNORECASE)


@dataclass(frozen=True)
class FailureStep:
    """One step of a failed run: its 0-based ``index``, the normalised ``agent``, the ``agent_raw`` name the log
    gives, and its ``text``."""

    index: int
    agent: str
    agent_raw: str
    text: str


@dataclass(frozen=True)
class FailureLog:
    """A failed run as an attributor sees it. ``reference_answer`` is None unless the attributor may use it."""

    run_id: str
    question: str
    steps: tuple[FailureStep, ...]
    reference_answer: str | None = None

    @property
    def agents(self) -> list[str]:
        """The distinct agents of the run, in order of first appearance."""
        return list(dict.fromkeys(s.agent for s in self.steps))


@dataclass(frozen=True)
class Attribution:
    """An attributor's answer: the agent, the 0-based step and the reason (None where it names nothing)."""

    agent: str | None
    step: int | None
    reason: str


class Attributor(Protocol):
    """The failure attributor protocol: a ``name``, whether it reads the reference answer (``with_reference``), and
    its ``attribute`` method."""

    name: str
    with_reference: bool

    def attribute(self, log: FailureLog) -> Attribution:
        """The agent, step and reason of ``log``'s failure."""
        ...


def _at(log: FailureLog, position: int, why: str) -> Attribution:
    """The step at ``position`` in the log (its own ``index``, the number the labels use) and its agent."""
    step = log.steps[position]
    return Attribution(step.agent, step.index, why)


def _empty(log: FailureLog) -> Attribution | None:
    return Attribution(None, None, "the run has no step") if not log.steps else None


@dataclass(frozen=True)
class LastStep:
    """The last step and its agent."""

    name: str = "last step"
    with_reference: bool = False

    def attribute(self, log: FailureLog) -> Attribution:
        return _empty(log) or _at(log, len(log.steps) - 1, "the last step")


@dataclass(frozen=True)
class FirstError:
    """The first step after the task (step 0) whose text matches ``ERROR_PATTERN``, else the last step."""

    name: str = "first error"
    with_reference: bool = False

    def attribute(self, log: FailureLog) -> Attribution:
        if (none := _empty(log)) is not None:
            return none
        for position, step in enumerate(log.steps[1:], start=1):
            found = ERROR_PATTERN.search(step.text)
            if found:
                return _at(log, position, f"its text says {found.group(0)!r}")
        return _at(log, len(log.steps) - 1, "no step signals an error: the last step")


@dataclass(frozen=True)
class MostActive:
    """The agent with the most steps (ties: the first to act), at its first step."""

    name: str = "most active"
    with_reference: bool = False

    def attribute(self, log: FailureLog) -> Attribution:
        if (none := _empty(log)) is not None:
            return none
        counts = Counter(s.agent for s in log.steps)
        top = max(log.agents, key=lambda a: counts[a])
        first = next(s.index for s in log.steps if s.agent == top)
        return Attribution(top, first, f"{top} takes {counts[top]} of {len(log.steps)} steps")


@dataclass(frozen=True)
class PositionPrior:
    """The decisive step at the median relative position ``quantile`` (0 the first step, 1 the last) learnt from
    other labelled logs (its ``fit`` method), and the agent at that step."""

    quantile: float = 0.5
    name: str = "position prior"
    with_reference: bool = False

    @classmethod
    def fit(cls, steps: Sequence[int], lengths: Sequence[int], name: str = "position prior") -> PositionPrior:
        """The prior from labelled logs: the median of ``step / (length - 1)`` (a one-step log counts 0).

        Parameters
        ----------
        steps : sequence of int
            The labelled decisive steps.
        lengths : sequence of int
            Each log's number of steps.
        name : str, default "position prior"
            The attributor's name (say what it was fitted on).

        Returns
        -------
        PositionPrior
            The fitted attributor.
        """
        import numpy as np

        if not len(steps) or len(steps) != len(lengths):
            raise ValueError("PositionPrior.fit: expected as many steps as lengths, at least one")
        rel = [s / (n - 1) if n > 1 else 0.0 for s, n in zip(steps, lengths, strict=True)]
        return cls(float(np.median(rel)), name)

    def attribute(self, log: FailureLog) -> Attribution:
        if (none := _empty(log)) is not None:
            return none
        step = int(round(self.quantile * (len(log.steps) - 1)))
        return _at(log, step, f"the learnt relative position {self.quantile:.2f}")


#: the columns of a predictions table (``workbench attribute --out`` writes one; :func:`predict` returns one)
PREDICTION_COLUMNS: dict[str, pl.DataType] = {
    "run_id": pl.Utf8(), "attributor": pl.Utf8(), "with_reference": pl.Boolean(), "agent": pl.Utf8(),
    "step": pl.Int64(), "reason": pl.Utf8()}


def failure_logs(tables: dict[str, pl.DataFrame], *, with_reference: bool = False) -> list[FailureLog]:
    """Every run of ``tables`` as an attributor sees it (steps in order, each step's text followed by its
    observation where the log has one); the reference answer only when ``with_reference``.

    Parameters
    ----------
    tables : dict of str to polars.DataFrame
        ``runs`` and ``steps`` (``agent``, ``agent_raw``, ``text``).
    with_reference : bool, default False
        Give each log its ``reference_answer``.

    Returns
    -------
    list of FailureLog
        One per run, in run order.
    """
    runs = tables["runs"]
    steps = tables["steps"].sort("run_id", "step")
    by_run = {key[0]: part for key, part in steps.group_by("run_id", maintain_order=True)}
    logs = []
    for row in runs.iter_rows(named=True):
        part = by_run.get(row["run_id"])
        rows = [] if part is None else part.iter_rows(named=True)
        reference = row.get("reference_answer") if with_reference else None
        logs.append(FailureLog(row["run_id"], row.get("task") or "", tuple(
            FailureStep(int(s["step"]), s.get("agent") or "", s.get("agent_raw") or s.get("agent") or "",
                        "\n".join(t for t in (s.get("text"), s.get("observation")) if t)) for s in rows), reference))
    return logs


def read_predictions(path: str | os.PathLike[str]) -> pl.DataFrame:
    """A predictions table written by ``workbench attribute --out`` (.parquet or .jsonl), checked: every column of
    ``PREDICTION_COLUMNS`` present and of its type, else a :class:`~workbench.errors.SchemaError` naming the
    file and the column.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    polars.DataFrame
        The predictions, in ``PREDICTION_COLUMNS``' order.
    """
    from pathlib import Path

    from workbench.errors import SchemaError

    p = Path(path)
    if not p.is_file():
        raise SchemaError("no such file", file=str(p))
    try:
        frame = pl.read_parquet(p) if p.suffix == ".parquet" else pl.read_ndjson(p)
    except Exception as err:  # noqa: BLE001 - any reader error is this file's
        raise SchemaError(f"not a predictions table ({type(err).__name__}: {err})", file=str(p)) from None
    for name, dtype in PREDICTION_COLUMNS.items():
        if name not in frame.columns:
            raise SchemaError(field=name, expected=f"a column of a predictions table ({list(PREDICTION_COLUMNS)})",
                              got="no such column", file=str(p))
        try:
            frame = frame.with_columns(pl.col(name).cast(dtype, strict=True))
        except pl.exceptions.PolarsError:
            raise SchemaError(field=name, expected=str(dtype), got=str(frame.schema[name]), file=str(p)) from None
    return frame.select(list(PREDICTION_COLUMNS))


def predict(attributor: Attributor, logs: Iterable[FailureLog]) -> pl.DataFrame:
    """``attributor`` on every log: a predictions table (``PREDICTION_COLUMNS``).

    Parameters
    ----------
    attributor : Attributor
        The attributor.
    logs : iterable of FailureLog
        The runs (built with the reference answer only if the attributor may read it).

    Returns
    -------
    polars.DataFrame
        One row per log.
    """
    rows = []
    for log in logs:
        a = attributor.attribute(log)
        rows.append({"run_id": log.run_id, "attributor": attributor.name,
                     "with_reference": attributor.with_reference, "agent": a.agent, "step": a.step,
                     "reason": a.reason})
    return pl.DataFrame(rows, schema=PREDICTION_COLUMNS)


__all__ = ["Attribution", "Attributor", "failure_logs", "FailureLog", "FailureStep", "FirstError", "LastStep",
           "MostActive", "PositionPrior", "predict", "read_predictions"]
