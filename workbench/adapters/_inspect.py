"""inspect_ai evaluation logs (``.eval`` or ``.json``, a file or a directory of them) as runs, steps and compactions.

Read through inspect_ai's own log API (:func:`inspect_ai.log.read_eval_log` for the header,
:func:`inspect_ai.log.read_eval_log_samples` streaming the samples, attachments resolved), so the counts are
inspect_ai's. Needs the optional extra ``inspect`` (``pip install -e ".[inspect]"``).

* **Runs**: one per sample and epoch, ``run_id`` ``TASK/SAMPLE/eEPOCH`` (with the eval's id when two logs hold the
  same task). ``model`` is the eval's model, ``replicate`` the epoch, ``task`` the sample's input; ``success`` the
  first score (``C`` / ``I``, a number equal to 1, a boolean); a sample that ended in an error or a limit is kept,
  ``success`` false, ``failed_check`` ``error: ...`` or ``limit: ...``.
* **Steps**: one per tool call of the agent's model events, in order (a reply with no call is a step with its
  text), the observation the matching tool event's result (or its error, ``error`` true; null for a call never
  executed because a limit ended the sample first); a model event's input
  and output tokens (inspect_ai's usage) go on its first step. The summariser's own generate (the model event
  that directly precedes a summary compaction and calls no tool) is not a step.
* **Compactions**: one per ``CompactionEvent``: ``compaction_type`` its ``type`` (summary, edit, trim; native and
  auto compactions are logged as summary), ``strategy`` and ``trigger`` from its metadata, ``pre_tokens`` /
  ``post_tokens`` its ``tokens_before`` / ``tokens_after``. inspect_ai records how many messages a compaction
  removed, not which: the steps it replaced are those still in the agent's input before it whose call or result
  is absent from (or, for an edit, changed in) the first model input after it, compared by message id;
  ``span_start``..``span_end`` covers them.
  The summary is the input's message with metadata ``{"summary": true}`` (null for edit and trim, which write
  none); ``retained_turn`` the conversation messages the compaction kept.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

from workbench.adapters._formats import inspect_head
from workbench.adapters._staging import RunTables
from workbench.errors import SchemaError



def is_inspect_directory(path: str | os.PathLike[str]) -> bool:
    """Whether the directory ``path`` holds inspect_ai logs: ``*.eval`` files directly in it, as inspect_ai's log
    directories do (looked at without walking the tree: every directory import asks; ``--format inspect`` reads
    logs at any depth)."""
    return any(Path(path).glob("*.eval"))


def _looks_like_log(path: Path) -> bool:
    """Whether a ``.json`` file of a directory is an inspect_ai log by the registry's sniffing rule (its first
    4 KiB): its other JSON files (inspect_ai's own ``logs.json`` index, notes) are not read."""
    with open(path, "rb") as fh:
        return inspect_head(fh.read(4096))


def _files(path: Path) -> list[Path]:
    if not path.is_dir():
        return [path]
    found = sorted(p for p in path.rglob("*") if p.is_file() and (p.suffix == ".eval" or p.suffix == ".json"
                                                                   and _looks_like_log(p)))
    if not found:
        raise SchemaError("holds no inspect_ai log (*.eval or *.json)", file=str(path))
    return found


def _text(message: Any) -> str:
    content = getattr(message, "content", None)
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for c in content:
        for attr in ("text", "reasoning"):
            value = getattr(c, attr, None)
            if isinstance(value, str) and value:
                parts.append(value)
                break
    return "\n".join(parts)


def _success(sample: Any) -> bool | None:
    if not sample.scores:
        return None
    value = next(iter(sample.scores.values())).value
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return {"C": True, "I": False}.get(value.upper())
    if isinstance(value, (int, float)):
        return abs(float(value) - 1.0) <= 1e-9
    return None


def _observation(tool_event: Any) -> tuple[str | None, bool | None]:
    if tool_event is None:  # a call the run never executed (a limit reached first)
        return None, None
    if tool_event.error is not None:
        return f"{tool_event.error.type}: {tool_event.error.message}", True
    result = tool_event.result
    if isinstance(result, str):
        return result, False
    if isinstance(result, list):
        return "\n".join(getattr(c, "text", "") or "" for c in result), False
    return json.dumps(result, default=str) if result is not None else "", False


def sample_tables(sample: Any, run_id: str, model: str | None) -> tuple[dict[str, Any], list[dict[str, Any]],
                                                                          list[dict[str, Any]]]:
    """One sample's run, steps and compactions (the module's rules)."""
    events = list(sample.events)
    tool_events = {e.id: e for e in events if e.event == "tool"}
    steps: list[dict[str, Any]] = []
    comps: list[dict[str, Any]] = []
    step_messages: list[tuple[str | None, str | None]] = []  # each step's assistant message id and tool call id
    pending: list[tuple[int, Any]] = []  # compactions waiting for the next agent input
    removed: set[int] = set()  # steps an earlier compaction already took out of the agent's input
    first_seen: dict[str, str] = {}  # each tool result's text as the agent first saw it in its input

    def summariser_call(i: int) -> bool:
        event = events[i]
        if event.output is not None and event.output.message.tool_calls:
            return False
        for later in events[i + 1:]:
            if later.event == "compaction":
                return later.type == "summary"
            if later.event == "model":
                return False
        return False

    def close(compaction: Any, boundary_step: int, after_input: list[Any] | None) -> dict[str, Any]:
        meta = compaction.metadata or {}
        previous_step = comps[-1]["step"] if comps else 0
        summary: str | None = None
        # the steps still in the agent's input before this compaction (a trim keeps older steps a later one removes)
        candidates = [k for k in range(boundary_step) if k not in removed]
        replaced = candidates
        kept: list[str] = []
        if after_input is not None:
            present = {m.id: m for m in after_input if m.id is not None}
            results = {m.tool_call_id: m for m in after_input if m.role == "tool"}
            replaced = []
            for k in candidates:
                message_id, call_id = step_messages[k]
                gone = message_id is not None and message_id not in present
                if call_id is not None:  # an edit rewrites a result: compared with what the agent saw before
                    now = results.get(call_id)
                    before = first_seen.get(call_id, steps[k]["observation"] or "")
                    gone = gone or now is None or _text(now) != before
                if gone:
                    replaced.append(k)
            for m in after_input:
                if (m.metadata or {}).get("summary"):
                    summary = _text(m)
            first_user = next((m.id for m in after_input if m.role == "user"), None)
            kept = [f"{m.role}: {_text(m)}" for m in after_input
                    if m.role in ("assistant", "tool") or (m.role == "user" and m.id != first_user
                                                            and not (m.metadata or {}).get("summary"))]
        if compaction.type != "summary":
            summary = None
        removed.update(replaced)
        return {"run_id": run_id, "boundary": len(comps), "step": boundary_step,
                "span_start": replaced[0] if replaced else previous_step,
                "span_end": replaced[-1] if replaced else previous_step - 1,
                "previous_summary": next((c["committed_summary"] for c in reversed(comps)
                                          if c["committed_summary"] is not None), None),
                "retained_turn": "\n".join(kept) or None, "candidate_summary": summary, "committed_summary": summary,
                "trigger": meta.get("trigger"), "pre_tokens": compaction.tokens_before,
                "post_tokens": compaction.tokens_after, "compaction_type": compaction.type,
                "strategy": meta.get("strategy"),
                "timestamp": compaction.timestamp.isoformat() if compaction.timestamp else None}

    for i, event in enumerate(events):
        if event.event == "compaction":
            pending.append((i, event))
            continue
        if event.event != "model" or summariser_call(i):
            continue
        while pending:  # this input is the first the agent saw after each pending compaction
            _, compaction = pending.pop(0)
            comps.append(close(compaction, len(steps), list(event.input) if not pending else None))
        for m in event.input:
            if m.role == "tool" and m.tool_call_id and m.tool_call_id not in first_seen:
                first_seen[m.tool_call_id] = _text(m)
        output = event.output
        message = output.message if output is not None and output.choices else None
        usage = output.usage if output is not None else None
        first = len(steps)
        calls = (message.tool_calls or []) if message is not None else []
        for call in calls or [None]:
            tool_event = tool_events.get(call.id) if call is not None else None
            observation, error = _observation(tool_event)
            steps.append({"run_id": run_id, "step": len(steps), "tool": call.function if call else None,
                          "args": json.dumps(call.arguments, ensure_ascii=False, default=str) if call else None,
                          "text": _text(message) or None if message is not None else None,
                          "observation": observation, "observation_role": "tool" if observation is not None else None,
                          "error": error,
                          "model": event.model,
                          "timestamp": event.timestamp.isoformat() if event.timestamp else None,
                          "boundary_before": False})
            step_messages.append((message.id if message is not None else None, call.id if call else None))
        if usage is not None and len(steps) > first:
            steps[first]["input_tokens"] = usage.input_tokens
            steps[first]["output_tokens"] = usage.output_tokens
    for _, compaction in pending:  # after the last model call: no input shows what it kept
        comps.append(close(compaction, len(steps), None))
    for c in comps:
        if c["step"] < len(steps):
            steps[c["step"]]["boundary_before"] = True
    error = sample.error.message if sample.error is not None else None
    limit = f"{sample.limit.type} limit {sample.limit.limit:g}" if sample.limit is not None else None
    success = _success(sample)
    failed = f"error: {error.splitlines()[0][:300]}" if error else (f"limit: {limit}" if limit else None)
    run = {"run_id": run_id, "task_id": str(sample.id), "scenario_id": str(sample.id), "method": "inspect",
           "model": model, "replicate": sample.epoch, "task": _text_input(sample.input),
           "success": False if failed else success, "failed_check": failed, "steps": len(steps),
           "compactions": len(comps),
           "started_at": str(sample.started_at) if sample.started_at else None,
           "ended_at": str(sample.completed_at) if sample.completed_at else None,
           "models": list(dict.fromkeys(s["model"] for s in steps if s["model"]))}
    return run, steps, comps


def _text_input(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "\n".join(_text(m) for m in value if getattr(m, "role", None) == "user")


def _said(exc: Exception) -> str:
    """An exception inspect_ai raised, in one line: its type and its message's first line (200 characters)."""
    text = str(exc)
    return f"{type(exc).__name__}: {text.splitlines()[0][:200] if text else ''}"


def inspect_runs(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any], list[dict[str, Any]],
                                                                  list[dict[str, Any]]]]:
    """The runs of an inspect_ai log file or directory, one sample at a time, ``(k, run, steps, compactions)``."""
    from inspect_ai.log import read_eval_log, read_eval_log_samples

    seen: set[str] = set()
    k = 0
    for file in _files(Path(path)):
        try:
            header = read_eval_log(str(file), header_only=True)
        except Exception as exc:  # inspect_ai raises many types for a file that is not its log
            raise SchemaError(file=str(file), expected="an inspect_ai log (.eval or .json) that inspect_ai reads",
                              got=_said(exc)) from None
        task, eval_id, model = header.eval.task, header.eval.eval_id, header.eval.model
        samples = read_eval_log_samples(str(file), all_samples_required=False, resolve_attachments=True)
        while True:
            try:
                sample = next(samples)
            except StopIteration:
                break
            except Exception as exc:  # a damaged sample (a truncated .eval): inspect_ai's own error, with the file
                raise SchemaError(file=str(file), expected=f"inspect_ai samples it can read (after {k} run(s))",
                                  got=_said(exc)) from None
            k += 1
            run_id = f"{task}/{sample.id}/e{sample.epoch}"
            if run_id in seen:
                run_id = f"{task}@{eval_id[:8]}/{sample.id}/e{sample.epoch}"
            seen.add(run_id)
            run, steps, comps = sample_tables(sample, run_id, model)
            run["project"] = file.name
            yield k, run, steps, comps


def read_inspect(path: str | os.PathLike[str]) -> dict[str, pl.DataFrame]:
    """Load inspect_ai logs (a ``.eval`` / ``.json`` file, or a directory of them) as the workbench's tables.

    Parameters
    ----------
    path : str or os.PathLike
        An inspect_ai log file, or a directory of them.

    Returns
    -------
    dict of str to polars.DataFrame
        The runs, steps and compactions.
    """
    builder = RunTables(Path(path))
    for k, run, steps, comps in inspect_runs(path):
        builder.add_run(k, run, steps, comps)
    return builder.finish()


__all__ = ["read_inspect"]
