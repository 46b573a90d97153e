"""Codex CLI session rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) as runs, steps and compactions.

One JSON object a line, ``{"timestamp", "type", "payload"}``. The types read:

* ``session_meta``: ``payload.id`` is the run (the file name when it is missing);
* ``turn_context``: ``payload.model`` is the model of the turns that follow (the run's ``model`` is the first,
  ``models`` every one in order);
* ``response_item``: ``payload.type`` ``message`` (``role`` user / assistant, ``content`` a list
  of ``input_text`` / ``output_text`` blocks or a string), ``function_call`` (``name``,
  ``arguments`` as JSON text, ``call_id``) and ``local_shell_call`` (``action``, ``call_id``)
  are steps, ``function_call_output`` (``call_id``, ``output`` as text or ``{"content": ...}``;
  exec output as JSON text whose ``metadata.exit_code`` sets ``error``) their observations; ``reasoning`` is skipped;
* ``compacted``: a compaction; ``payload.message`` is the summary that replaced the history
  (when it is empty, the last message of ``payload.replacement_history``; the other messages
  there, the user turns Codex keeps, are the compaction's ``retained_turn``);
* ``event_msg``: UI events, skipped (the same content arrives as response items), except ``token_count``:
  what each turn spent, ``payload.info.last_token_usage`` (else ``total_token_usage`` less the previous total),
  summed into the run's usage columns as ccusage 20 reports them (:data:`USAGE_DEFINITION`: the input without
  its cached part, which is ``usage_cache_read_tokens``; the output with its reasoning, which is also
  ``usage_reasoning_tokens``); ``info`` null (rate limits only) counts nothing.

The first user message that is not injected context (``<environment_context>``,
``<user_instructions>``) is the task. As with Claude Code transcripts, a compaction's span is
every step since the previous one, an output whose call is missing is a step with no tool and
``orphan_result`` = true, and nothing is sent anywhere or executed.
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.adapters._claude_lines import MODEL_USAGE, TranscriptWarning, selected
from workbench.adapters._logfiles import session_files, session_format
from workbench._util.token_counts import MAX_COUNT
from workbench.tables._records import _before, encode_args, widen_span

if TYPE_CHECKING:  # the usage pass reads rollouts without the table library (codex_runs)
    import polars as pl
from workbench._util.jsonl import BadLines, at_line, json_lines
from workbench.errors import describe_value
from workbench.errors import SchemaError

_INJECTED = ("<environment_context>", "<user_instructions>", "<permissions", "# AGENTS.md")

#: how a Codex run's usage columns are counted (ccusage's definitions: its Codex loader and JSON output)
USAGE_DEFINITION = ("codex: token_count events (last_token_usage, else the change of total_token_usage); input "
                    "excludes the cached input (usage_cache_read_tokens), output includes reasoning "
                    "(usage_reasoning_tokens)")
_USAGE_KEYS = (("input_tokens", "usage_input_tokens"), ("cached_input_tokens", "usage_cache_read_tokens"),
               ("output_tokens", "usage_output_tokens"), ("reasoning_output_tokens", "usage_reasoning_tokens"))
_USAGE_COLUMNS = tuple(column for _, column in _USAGE_KEYS)  # (fresh, cached, output, reasoning: _spend's order)



def _counts(value: Any, where: str) -> dict[str, int] | None:
    """A token_count usage object's four counters (0 where absent; ``cache_read_input_tokens`` is an older name of
    the cached input), None when it is not an object. A counter that is negative, fractional or beyond
    :data:`MAX_COUNT` is a :class:`~workbench.errors.SchemaError` naming the field (``where`` and the key): 10**30
    was an internal overflow error, and a negative count failed a whole home's table at 'row 1'."""
    if not isinstance(value, dict):
        return None
    a, b, c, d = (value.get("input_tokens"), value.get("cached_input_tokens"), value.get("output_tokens"),
                  value.get("reasoning_output_tokens"))
    if (type(a) is int and type(b) is int and type(c) is int and type(d) is int  # what every line holds
            and 0 <= a <= MAX_COUNT and 0 <= b <= MAX_COUNT and 0 <= c <= MAX_COUNT and 0 <= d <= MAX_COUNT):
        return {"input_tokens": a, "cached_input_tokens": b, "output_tokens": c, "reasoning_output_tokens": d}

    def count(*keys: str) -> int:
        for k in keys:
            v = value.get(k)
            if type(v) is int and 0 <= v <= MAX_COUNT:  # what every line holds: no further checks
                return v
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v:
                if v < 0 or v > MAX_COUNT or v != int(v):
                    raise SchemaError(field=f"{where}.{k}", expected=f"a count of tokens: a whole number from 0 to "
                                      f"{MAX_COUNT:,}", got=describe_value(v))
                return int(v)
        return 0
    return {"input_tokens": count("input_tokens"),
            "cached_input_tokens": count("cached_input_tokens", "cache_read_input_tokens"),
            "output_tokens": count("output_tokens"), "reasoning_output_tokens": count("reasoning_output_tokens")}


def _spend(run: dict[str, Any], payload: dict[str, Any], previous: dict[str, int] | None,
           by_model: dict[str, dict[str, int]], model: str | None) -> dict[str, int] | None:
    """Add one token_count event's delta to ``run`` (and to ``model``'s row of ``by_model``); returns the
    cumulative totals it carried (or ``previous``)."""
    info: dict[str, Any] = payload["info"] if isinstance(payload.get("info"), dict) else {}
    last = _counts(info.get("last_token_usage"), "payload.info.last_token_usage")
    total = _counts(info.get("total_token_usage"), "payload.info.total_token_usage")
    delta = last
    if delta is None and total is not None:
        delta = {k: max(v - (previous or {}).get(k, 0), 0) for k, v in total.items()}
    if delta is None:
        return total if total is not None else previous
    fresh, cached, output, reasoning = (delta["input_tokens"], delta["cached_input_tokens"], delta["output_tokens"],
                                        delta["reasoning_output_tokens"])
    if fresh or cached or output or reasoning:
        cached = min(cached, fresh)
        fresh -= cached  # fresh input, as ccusage reports it
        get = run.get
        run["usage_replies"] = get("usage_replies", 0) + 1
        for column, value in zip(_USAGE_COLUMNS, (fresh, cached, output, reasoning)):
            run[column] = get(column, 0) + value
        row = by_model.get(model or "(no model)")
        if row is None:
            row = by_model[model or "(no model)"] = dict.fromkeys(MODEL_USAGE, 0)
        row["replies"] = row.get("replies", 0) + 1
        row["input"] += fresh
        row["cache_read"] += cached
        row["output"] += output
        row["reasoning"] += reasoning
    return total if total is not None else previous


def _text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    raise SchemaError(field=where, expected="a string or a list of text blocks", got=describe_value(content))


def _output(value: Any) -> tuple[str, bool | None]:
    """An output's text, and whether it failed (a nonzero ``metadata.exit_code``; None when not said)."""
    if isinstance(value, dict):
        value = value.get("content", value.get("output", ""))
    if isinstance(value, str):
        try:  # exec outputs are JSON text {"output": ..., "metadata": {"exit_code": ...}}
            inner = json.loads(value)
        except json.JSONDecodeError:
            return value, None
        if not (isinstance(inner, dict) and isinstance(inner.get("output"), str)):
            return value, None
        meta = inner.get("metadata")
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return inner["output"], (code != 0) if isinstance(code, int) and not isinstance(code, bool) else None
    return (_text(value, "payload.output") if isinstance(value, list) else str(value)), None


def _compacted(p: dict[str, Any]) -> tuple[str, str | None]:
    """A ``compacted`` item's summary and the user messages it kept (``replacement_history``).

    ``message`` is the summary; when it is empty or missing, the last message of
    ``replacement_history`` (where Codex puts the summary it rebuilt the history around) is.
    """
    message = p.get("message")
    if message is not None and not isinstance(message, str):
        raise SchemaError(field="payload.message", expected="the summary text", got=describe_value(message))
    history = p.get("replacement_history")
    if history is not None and not isinstance(history, list):
        raise SchemaError(field="payload.replacement_history", expected="a list of response items",
                          got=describe_value(history))
    texts = [_text(item.get("content", ""), f"payload.replacement_history[{i}].content")
             for i, item in enumerate(history or []) if isinstance(item, dict) and item.get("type") == "message"]
    texts = [t for t in texts if t and not t.lstrip().startswith(_INJECTED)]
    summary = message or (texts.pop() if texts else "")
    if message and texts and texts[-1] == message:
        texts.pop()
    return summary, "\n\n".join(texts) or None


def _session_meta(run: dict[str, Any], p: dict[str, Any]) -> None:
    """A ``session_meta`` payload with an id into ``run``: the run's id, working directory, client version and git
    branch (what is given as text)."""
    run["run_id"] = p["id"]
    for key, column in (("cwd", "project"), ("cli_version", "client_version")):
        if isinstance(p.get(key), str):
            run[column] = p[key]
    if isinstance(p.get("git"), dict) and isinstance(p["git"].get("branch"), str):
        run["git_branch"] = p["git"]["branch"]


def _turn_model(run: dict[str, Any], models: list[str], model: str) -> str:
    """A ``turn_context``'s model: the run's first (``model``) and each new one in order (``models``); returned, the
    model of the turns that follow."""
    run.setdefault("model", model)
    if model not in models:
        models.append(model)
    return model


class _NotARollout(Exception):
    """A file read as a rollout on its directory's word (``check``) that does not prove one: its first record is
    not a rollout line, it has none, or it cannot be read."""


def _rollout_usage(file: Path, bad: BadLines | None = None, check: bool = False) -> tuple[dict[str, Any], int]:
    """:func:`_rollout`'s run with ``usage_only`` (the usage pass): its identity, span, models and usage, read by the
    same rules in one loop with no per-line context manager or call but for a token_count's; every line is still
    parsed and checked, and an error still names its line (with the changes beside it, the Codex pass on the 1 GB
    home took 0.30 s, not 0.40 s). ``check``: the file's format was not decided on its own
    (the usage pass took its directory's), so :class:`_NotARollout` where its first record is not a rollout line
    (``session_format``), where it has no record, or where it cannot be read."""
    run: dict[str, Any] = {"run_id": file.stem, "method": "codex", "task": None}
    first = number = 0
    totals: dict[str, int] | None = None
    models: list[str] = []
    by_model: dict[str, dict[str, int]] = {}
    current: str | None = None
    start = end = ""  # the span's ends (once ``spanned``), by widen_span's rule; its common case inline
    spanned = False
    layout = -1  # the length of the ends while both are of one layout ending in Z, else -1
    try:
        for number, rec in json_lines(file, bad, fast=True):
            if not first:
                first = number
                if check and session_format(rec) != "codex":
                    raise _NotARollout(str(file))
            p = rec.get("payload") if type(rec) is dict else None
            if type(p) is not dict:
                raise SchemaError(expected="a rollout line {timestamp, type, payload}", got=describe_value(rec))
            ts = rec.get("timestamp")
            if type(ts) is str:
                if len(ts) == layout and ts[-1] == "Z":  # the ends and ts: one layout, UTC; text order is time order
                    if ts < start:
                        start = ts
                    if end < ts:
                        end = ts
                else:
                    if not spanned:
                        start = end = ts
                        spanned = True
                    else:
                        if _before(ts, start):
                            start = ts
                        if _before(end, ts):
                            end = ts
                    layout = len(start) if len(start) == len(end) and start[-1:] == end[-1:] == "Z" else -1
            kind = rec.get("type")
            if kind == "event_msg":
                if p.get("type") == "token_count":
                    totals = _spend(run, p, totals, by_model, current)
            elif kind == "turn_context" and isinstance(p.get("model"), str):
                current = _turn_model(run, models, p["model"])
            elif kind == "session_meta" and isinstance(p.get("id"), str):
                _session_meta(run, p)
    except (SchemaError, OSError) as err:
        if check and not first:
            raise _NotARollout(str(file)) from None
        if isinstance(err, OSError):
            raise
        raise err.located(str(file), number) from None
    if check and not first:
        raise _NotARollout(str(file))
    if spanned:
        run["started_at"], run["ended_at"] = start, end
    run_id = run["run_id"]
    run.update(task_id=run_id, scenario_id=run_id, steps=0, compactions=0, models=models,
               usage_definition=USAGE_DEFINITION, usage_by_model=by_model or None,
               **{c: run.get(c, 0) for c in ("usage_replies", *_USAGE_COLUMNS)})
    return run, first


def _rollout(file: Path, bad: BadLines | None = None, usage_only: bool = False, check: bool = False
             ) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]], int]:
    """One rollout's run, steps and compactions, and its first line. ``usage_only``: the run's identity, span,
    models and usage alone (every line still read and checked), no steps or compactions, and ``usage_by_model`` as
    the dict, not its JSON text -- the usage pass (:func:`_rollout_usage`)."""
    if usage_only:
        usage, first = _rollout_usage(file, bad, check)
        return usage, [], [], first
    run: dict[str, Any] = {"run_id": file.stem, "method": "codex", "task": None}
    steps: list[dict[str, Any]] = []
    comps: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    span_start, previous = 0, None
    first = 0
    totals: dict[str, int] | None = None  # the last cumulative token_count seen
    models: list[str] = []
    by_model: dict[str, dict[str, int]] = {}
    current: str | None = None  # the model of the turns being read
    for number, rec in json_lines(file, bad, fast=True):
        first = first or number
        with at_line(file, number):
            if not isinstance(rec, dict) or not isinstance(rec.get("payload"), dict):
                raise SchemaError(expected="a rollout line {timestamp, type, payload}", got=describe_value(rec))
            kind, p = rec.get("type"), rec["payload"]
            ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
            if ts is not None:
                widen_span(run, ts)
            before = len(steps)
            if kind == "session_meta" and isinstance(p.get("id"), str):
                _session_meta(run, p)
            elif kind == "turn_context" and isinstance(p.get("model"), str):
                current = _turn_model(run, models, p["model"])
            elif kind == "event_msg" and p.get("type") == "token_count":
                totals = _spend(run, p, totals, by_model, current)
            elif kind == "compacted":
                summary, kept = _compacted(p)
                if not summary:
                    warnings.warn(f"{file}:{number}: compacted item with no readable summary (empty, or only "
                                  "encrypted server-side compaction); kept as a compaction with an empty summary",
                                  TranscriptWarning, stacklevel=3)
                comps.append({"boundary": len(comps), "step": len(steps), "span_start": span_start,
                              "span_end": len(steps) - 1, "previous_summary": previous, "retained_turn": kept,
                              "candidate_summary": summary, "committed_summary": summary, "timestamp": ts})
                previous, span_start = summary, len(steps)
            elif kind == "response_item":
                if _item(p, steps, calls, run):
                    warnings.warn(f"{file}:{number}: function_call_output {p.get('call_id')!r} has no call before it; "
                                  "kept as a step with no tool and orphan_result = true", TranscriptWarning, stacklevel=3)
            for st in steps[before:]:
                st["timestamp"] = ts
    run_id = run["run_id"]
    run.update(task_id=run_id, scenario_id=run_id, steps=len(steps), compactions=len(comps),  # a session: a cluster
               models=models, usage_definition=USAGE_DEFINITION,
               usage_by_model=json.dumps(by_model, sort_keys=True) if by_model else None,
               **{c: run.get(c, 0) for c in ("usage_replies", *_USAGE_COLUMNS)})
    for row in (*steps, *comps):
        row["run_id"] = run_id
    return run, steps, comps, first


def _item(p: dict[str, Any], steps: list[dict[str, Any]], calls: dict[str, dict[str, Any]], run: dict[str, Any]) -> bool:
    """Add one response item to ``steps``; true when it was an output whose call is missing."""
    kind = p.get("type")
    if kind == "message":
        text = _text(p.get("content", ""), "payload.content")
        if p.get("role") == "user":
            if text.lstrip().startswith(_INJECTED):
                return False
            if run["task"] is None:
                run["task"] = text
            else:
                steps.append({"step": len(steps), "tool": None, "args": None, "text": None, "observation": text,
                              "observation_role": "user"})
        elif p.get("role") == "assistant" and text:
            steps.append({"step": len(steps), "tool": None, "args": None, "text": text, "observation": None})
    elif kind in ("function_call", "local_shell_call", "custom_tool_call"):
        name = p.get("name") or ("shell" if kind == "local_shell_call" else None)
        if not isinstance(name, str):
            raise SchemaError(field="payload.name", expected="the tool's name", got=describe_value(name))
        raw = p.get("arguments", p.get("action", p.get("input")))
        try:
            args = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            args = raw  # kept verbatim
        new: dict[str, Any] = {"step": len(steps), "tool": name, "args": encode_args(args), "text": None,
                               "observation": None}
        if isinstance(p.get("call_id"), str):
            calls[p["call_id"]] = new
        steps.append(new)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        call_id = p.get("call_id")
        step = calls.pop(call_id, None) if isinstance(call_id, str) else None
        text, failed = _output(p.get("output"))
        if step is None:
            steps.append({"step": len(steps), "tool": None, "args": None, "text": None, "observation": text,
                          "observation_role": "tool", "orphan_result": True, "error": failed})
            return True
        step["observation"], step["observation_role"], step["error"] = text, "tool", failed
    return False


def read_codex(path: str | os.PathLike[str], *, bad: BadLines | None = None, since: str | None = None,
               until: str | None = None, project: str | None = None,
               files: Sequence[Path] | None = None) -> dict[str, pl.DataFrame]:
    """Load one Codex rollout file, or every ``rollout-*.jsonl`` below a directory, into the trajectory tables.

    A file's half-written last line (a session still open) is skipped with a warning; with
    ``bad.skip_invalid`` every line that is not JSON is skipped and recorded in ``bad``. ``since``, ``until``
    and ``project`` select sessions as :func:`workbench.adapters.read_claude_code` does; ``files``
    reads those files instead of every one below ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        A rollout file, or a directory searched for ``rollout-*.jsonl`` (``~/.codex/sessions``).
    bad : workbench._util.jsonl.BadLines, optional
        Where bad lines are recorded when its ``skip_invalid`` is set; None: a bad line is an error naming it.
    since, until : str, optional
        ISO dates or times: only sessions whose first and last timestamps fall between them.
    project : str, optional
        Only sessions whose working directory or project directory name contains this text.
    files : sequence of pathlib.Path, optional
        These files instead of every one below ``path``.

    Returns
    -------
    dict of str to polars.DataFrame
        The tables read (``runs``, ``steps``, ``compactions``, and the others the format carries), validated.
    """
    from workbench.adapters._staging import collect_runs

    return collect_runs(Path(path), codex_runs(path, bad=bad, since=since, until=until, project=project,
                                               files=files))


def codex_runs(path: str | os.PathLike[str], *, bad: BadLines | None = None, since: str | None = None,
               until: str | None = None, project: str | None = None, files: Sequence[Path] | None = None,
               timings: dict[str, float] | None = None, usage_only: bool = False,
               checked: Collection[Path] = (),
               ) -> Iterator[tuple[int, dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]]:
    """:func:`read_codex`'s runs one rollout at a time, ``(first line, run, steps, compactions)``; ``timings`` adds
    the seconds spent reading and building them (``parse``); ``usage_only`` reads each run's usage and no steps
    (``workbench usage``), each file of ``checked`` proving a rollout as it is read (:class:`_NotARollout`)."""
    bad = bad if bad is not None else BadLines()
    where: dict[str, Path] = {}  # run id -> its rollout file
    for file in (files if files is not None else session_files(path, "*.jsonl", bad)):
        clock = time.perf_counter()
        run, steps, comps, first = _rollout(file, bad, usage_only, check=usage_only and file in checked)
        if timings is not None:
            timings["parse"] = timings.get("parse", 0.0) + time.perf_counter() - clock
        if run["run_id"] in where:
            raise SchemaError(f"session {run['run_id']!r} is in two rollout files, {where[run['run_id']]} and this "
                              "one; import one of them (or move the other aside)", file=str(file), line=first)
        where[run["run_id"]] = file
        if selected(run, since, until, project):
            yield first, run, steps, comps


__all__ = ["read_codex"]
