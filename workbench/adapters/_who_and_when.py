"""Who&When (Zhang et al., ICML 2025; MIT) as labelled failure logs: ``workbench import DIR --format who-and-when``.

``DIR`` is the release's folder (``Who&When/Algorithm-Generated/*.json`` and ``Who&When/Hand-Crafted/*.json``, or
the two subset folders themselves, as in ``../shared/data/failure-attribution/who-and-when``), the project's compact
copy (``data/benchmarks/who-and-when``: ``Algorithm-Generated.jsonl.gz`` and ``Hand-Crafted.jsonl.gz``, one log a
line, each the release's JSON object with its ``file`` name; ``tools/compact_who_and_when.py`` makes it), or any
directory of logs in the same shape (a folder of ``*.json`` files with ``history`` and the ``mistake_*`` fields).

Each log is one failed run:

* ``runs``: ``run_id`` ``SUBSET/FILE`` (``Hand-Crafted/12``), ``task_id`` and ``scenario_id`` the question id (45
  questions appear in both subsets: intervals cluster by question), ``method`` the system family (CaptainAgent for
  Algorithm-Generated, Magentic-One for Hand-Crafted, the subset's name for another folder), ``subset`` the folder,
  ``task`` the question, ``success`` the log's ``is_correct`` (``is_corrected`` in Hand-Crafted), ``steps`` the
  history's length, ``reference_answer`` the question's ``ground_truth`` and ``level`` (text; absent in 28 of
  Hand-Crafted's logs);
* ``steps``: one per history element, ``step`` its 0-based index (the labels' own numbering), ``text`` its content,
  ``agent_raw`` the agent as the log names it (``name`` in Algorithm-Generated, ``role`` in Hand-Crafted, where a
  role like ``Orchestrator (-> WebSurfer)`` is the orchestrator addressing another agent) and ``agent`` the text
  before `` (``, the name ``mistake_agent`` uses;
* ``labels``: the people's failure label of each run as three open label fields, ``agent`` (``mistake_agent``),
  ``step`` (``mistake_step``, a 0-based index) and ``reason`` (``mistake_reason``), annotator ``who-and-when``.

Field drift is taken as it comes: ``is_correct`` / ``is_corrected``, ``level`` as text or number or absent, an
extra ``labels`` field (``Algorithm-Generated/30.json``), ``system_prompt`` in one folder only, ``mistake_type``
in four logs (kept as ``meta_mistake_type``). A log that is not an object, a history that is not a list of
messages with text, or a ``mistake_step`` that is not an index into the history is an error naming the file
and the field.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

from workbench.errors import SchemaError, describe_value

#: what the runs' ``meta_release`` says of every log read from the release: its published Table 1 is on these logs
WHO_AND_WHEN = "Who&When"
#: the annotator the release's failure labels are stored under
FAILURE_ANNOTATOR = "who-and-when"
#: the release's two subsets and the system family that produced each
SUBSETS: dict[str, str] = {"Algorithm-Generated": "CaptainAgent", "Hand-Crafted": "Magentic-One"}
#: the question the release's annotators answered for each failed log
FAILURE_QUESTION = ("Which agent's action decided the failure, at which step (0-based) of the log, and why?")


def normalised_agent(raw: str) -> str:
    """The agent a message's role names: the text before `` (`` (``Orchestrator (thought)`` is ``Orchestrator``),
    as the release's ``mistake_agent`` writes it.

    Parameters
    ----------
    raw : str
        The agent as the log names it.

    Returns
    -------
    str
        The normalised agent.
    """
    return raw.split(" (", 1)[0].strip()


def is_who_and_when(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a Who&When directory (the release's folders, or the compact copy)."""
    p = Path(path)
    if not p.is_dir():
        return False
    return any((base / name).is_dir() or (p / f"{name}.jsonl.gz").exists()
               for base in (p, p / "Who&When") for name in SUBSETS)


def _folders(path: Path) -> list[tuple[str, Path]]:
    """(subset, where its logs are) in the release's order: the compact files, else the folders."""
    found = []
    for name in SUBSETS:
        compact = path / f"{name}.jsonl.gz"
        folder = next((b / name for b in (path, path / "Who&When") if (b / name).is_dir()), None)
        if compact.exists():
            found.append((name, compact))
        elif folder is not None:
            found.append((name, folder))
    if not found and any(path.glob("*.json")):  # a folder of logs in the same shape
        found.append((path.name, path))
    if not found:
        raise SchemaError("expected Who&When's folders (Algorithm-Generated/, Hand-Crafted/, or the compact "
                          "SUBSET.jsonl.gz files) or a folder of *.json logs", file=str(path))
    return found


def _by_number(p: Path) -> tuple[int, str]:
    return (int(p.stem), p.stem) if p.stem.isdigit() else (10**9, p.stem)


def who_and_when_logs(path: str | os.PathLike[str]) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """Every log of the directory: ``(subset, file stem, where for an error, the log's JSON object)``, in the
    release's order (subsets, then files by number). Read with the readers' bounds: the line bound
    (``--max-line-bytes``) on each line of the compact copy and on each ``.json`` file as a whole, the decompressed
    bytes of a ``.gz`` bounded, regular files only (a FIFO is refused before it is opened), JSON read strictly
    (a key twice, NaN, nesting deeper than the interpreter walks: errors naming the file)."""
    from workbench._util.jsonl import json_lines, read_json_file, regular_input

    for subset, where in _folders(Path(path)):
        if where.is_file() or where.suffix == ".gz":  # the compact copy: one log a line
            regular_input(where)  # never a FIFO or a device, refused before it is opened
            for number, record in json_lines(where):
                name = record.get("file") if isinstance(record, dict) else None
                if not isinstance(name, str) or not Path(name).stem.strip() or Path(name).name != name:
                    raise SchemaError(field="file", expected="the log's file name (a plain, non-empty name)",
                                      got=describe_value(name), file=f"{where}:{number}")
                yield subset, Path(name).stem, f"{where}:{number}", record
            continue
        for file in sorted(where.glob("*.json"), key=_by_number):
            regular_input(file)
            yield subset, file.stem, str(file), read_json_file(file)


#: the longest decisive step a log may name (a 5,000-digit number is no step of any log)
_STEP_DIGITS = 9


def _check(record: Any, where: str) -> tuple[list[dict[str, Any]], int]:
    """The log's history and its decisive step, checked; errors name the file and the field."""
    if not isinstance(record, dict):
        raise SchemaError(field="(top level)", expected="a log object", got=describe_value(record), file=where)
    history = record.get("history")
    if not isinstance(history, list) or not history:
        raise SchemaError(field="history", expected="a non-empty list of messages", got=describe_value(history),
                          file=where)
    for i, message in enumerate(history):
        if not isinstance(message, dict) or not isinstance(message.get("content"), str):
            raise SchemaError(field=f"history[{i}].content", expected="text", got=describe_value(
                message.get("content") if isinstance(message, dict) else message), file=where)
        key = "name" if "name" in message else "role"  # Algorithm-Generated names its agents, Hand-Crafted gives roles
        if not isinstance(message.get(key), str) or not message[key].strip():
            raise SchemaError(field=f"history[{i}].{key}", expected="the agent's name or role (text)",
                              got=describe_value(message.get(key)), file=where)
    for key in ("question", "mistake_agent", "mistake_reason"):
        if not isinstance(record.get(key), str):
            raise SchemaError(field=key, expected="text", got=describe_value(record.get(key)), file=where)
    for key in ("question_ID", "mistake_type"):
        value = record.get(key)
        if value is not None and not isinstance(value, str) and not (key == "question_ID" and type(value) is int):
            raise SchemaError(field=key, expected="text" + (" or a whole number" if key == "question_ID" else "")
                              + " (or absent)", got=describe_value(value), file=where)
    step = record.get("mistake_step")
    text = str(step).strip() if isinstance(step, str) or type(step) is int else ""
    if not (text.isascii() and text.isdigit() and len(text) <= _STEP_DIGITS) or not int(text) < len(history):
        raise SchemaError(field="mistake_step", expected=f"a 0-based index into the history (0 to "
                          f"{len(history) - 1}, ASCII digits)", got=describe_value(step), file=where)
    agents = {normalised_agent(str(m.get("name", m.get("role")))) for m in history}
    if normalised_agent(record["mistake_agent"]) not in agents:
        raise SchemaError(field="mistake_agent", expected=f"an agent that acts in the log ({', '.join(sorted(agents))})",
                          got=describe_value(record["mistake_agent"]), file=where)
    return history, int(text)


def read_who_and_when(path: str | os.PathLike[str]) -> dict[str, pl.DataFrame]:
    """The tables of a Who&When directory (see the module's description).

    Parameters
    ----------
    path : str or os.PathLike
        The release's folder, the compact copy, or a folder of logs in the same shape.

    Returns
    -------
    dict of str to polars.DataFrame
        ``runs``, ``steps``, an empty ``compactions`` and the failure ``labels``.
    """
    from workbench.tables._schema import empty

    runs: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    labels: list[dict[str, Any]] = []
    seen: set[str] = set()
    for subset, stem, where, record in who_and_when_logs(path):
        history, decisive = _check(record, where)
        run_id = f"{subset}/{stem}"
        if run_id in seen:
            raise SchemaError(f"a second log named {run_id}", file=where)
        seen.add(run_id)
        outcome = record.get("is_correct", record.get("is_corrected"))
        question_id = str(record.get("question_ID") or run_id)
        level = record.get("level")
        runs.append({
            "run_id": run_id, "task_id": question_id, "scenario_id": question_id, "subset": subset,
            "method": SUBSETS.get(subset, subset), "task": record["question"],
            "success": bool(outcome) if isinstance(outcome, bool) else None, "steps": len(history),
            "compactions": 0, "reference_answer": None if record.get("ground_truth") is None
            else str(record["ground_truth"]), "level": None if level is None else str(level),
            "meta_release": WHO_AND_WHEN, "meta_mistake_type": record.get("mistake_type")})
        for i, message in enumerate(history):
            raw = str(message.get("name", message.get("role")))
            steps.append({"run_id": run_id, "step": i, "text": message["content"], "agent_raw": raw,
                          "agent": normalised_agent(raw)})
        for field, value in (("agent", record["mistake_agent"]), ("step", str(decisive)),
                             ("reason", record["mistake_reason"])):
            labels.append({"item_id": run_id, "annotator": FAILURE_ANNOTATOR, "round": 1, "field": field, "value": value,
                           "note": None, "question": FAILURE_QUESTION})
    if not runs:
        raise SchemaError("holds no log", file=str(path))
    return {"runs": pl.DataFrame(runs, infer_schema_length=None), "steps": pl.DataFrame(steps),
            "compactions": empty("compactions"), "labels": pl.DataFrame(labels)}


__all__ = ["read_who_and_when"]
