"""OpenAI chat-completions logs: one run per JSON line, with a ``messages`` list (see ``chat_to_run``)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from workbench.tables import _schema as schema
from workbench.tables._validation import check_record
from workbench.adapters._staging import collect_runs
from workbench.tables._records import encode_args
from workbench._util.jsonl import at_line, json_lines
from workbench.errors import describe_value
from workbench.errors import SchemaError


def _content_text(content: Any, where: str) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for j, part in enumerate(content):
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part, str):
                parts.append(part)
            else:
                raise SchemaError(field=f"{where}.content[{j}]", expected="a text part", got=describe_value(part))
        return "".join(parts)
    raise SchemaError(field=f"{where}.content", expected="a string or a list of text parts", got=describe_value(content))


def chat_to_run(record: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """Convert one run in OpenAI chat-completions format into (run, steps, compactions) records.

    ``record`` holds run fields (``run_id``, ``task_id`` ...) and ``messages``. Each
    assistant ``tool_calls`` item is one step (tool = function name, args = the parsed
    arguments, or the raw string when they are not JSON); the ``tool`` message with the
    same ``tool_call_id`` is its observation. An assistant message without tool calls
    is a step with no tool whose observation is the next user message (a user simulator's
    turn, ``observation_role = "user"``). The first user message is the task (unless
    ``task`` is given). A message that carries ``"compaction": true`` or
    ``"compaction": {...}`` is a compaction summary: its content is the committed
    summary; the object may give ``candidate_summary``, ``previous_summary``,
    ``retained_turn`` and ``span``. System messages are not steps. Token usage is taken
    from an assistant message's ``usage`` (``prompt_tokens``, ``completion_tokens``).
    """
    messages = record.get("messages")
    if not isinstance(messages, list):
        raise SchemaError(field="messages", expected="a list of chat messages", got=describe_value(messages))
    run = {k: v for k, v in record.items() if k != "messages"}
    chat = _ChatRun(task=run.get("task"))
    for i, msg in enumerate(messages):
        chat.read(i, msg)
    run.setdefault("task", chat.task)
    run["steps"], run["compactions"] = len(chat.steps), len(chat.comps)
    for st in chat.steps:
        st["run_id"] = run.get("run_id")
    check_record(schema.RUNS, run)
    for j, st in enumerate(chat.steps):
        check_record(schema.STEPS, st, prefix=f"steps[{j}].")
    for c in chat.comps:
        c["run_id"] = run["run_id"]
    return run, chat.steps, chat.comps


@dataclass
class _ChatRun:
    """The steps and compactions of one chat, built message by message (one method per role)."""

    task: str | None
    steps: list[dict[str, Any]] = field(default_factory=list)
    comps: list[dict[str, Any]] = field(default_factory=list)
    by_call: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    last_boundary_step: int = 0
    previous_committed: str | None = None

    def read(self, i: int, msg: Any) -> None:
        where = f"messages[{i}]"
        if not isinstance(msg, dict):
            raise SchemaError(field=where, expected="a message object", got=describe_value(msg))
        role = msg.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            raise SchemaError(field=f"{where}.role", expected="system, developer, user, assistant or tool",
                              got=describe_value(role))
        text = _content_text(msg.get("content"), where)
        if msg.get("compaction"):
            self.compaction(where, msg["compaction"], text)
        elif role == "user":
            self.user(i, text)
        elif role == "assistant":
            self.assistant(i, where, msg, text)
        elif role == "tool":
            self.tool(where, msg.get("tool_call_id"), text)
        # system and developer messages are not steps

    def compaction(self, where: str, marker: Any, text: str | None) -> None:
        if not isinstance(marker, (dict, bool)):
            raise SchemaError(field=f"{where}.compaction", expected="true or an object", got=describe_value(marker))
        info = marker if isinstance(marker, dict) else {}
        if text is None:
            raise SchemaError(field=f"{where}.content", expected="the committed summary text", got="null")
        comp: dict[str, Any] = {
            "boundary": len(self.comps),
            "step": len(self.steps),
            "span_start": self.last_boundary_step,
            "span_end": len(self.steps) - 1,
            "previous_summary": self.previous_committed,
            "retained_turn": None,
            "candidate_summary": text,
            "committed_summary": text,
        }
        for k in ("candidate_summary", "previous_summary", "retained_turn", "boundary"):
            if k in info:
                comp[k] = info[k]
        if "span" in info:
            span = info["span"]
            if not (isinstance(span, list) and len(span) == 2):
                raise SchemaError(field=f"{where}.compaction.span", expected="[first_step, last_step]",
                                  got=describe_value(span))
            comp["span_start"], comp["span_end"] = span
        self.comps.append(comp)
        self.previous_committed = text
        self.last_boundary_step = len(self.steps)

    def user(self, i: int, text: str | None) -> None:
        if self.task is None:
            self.task = text
        elif self.steps and self.steps[-1].get("tool") is None and self.steps[-1].get("observation") is None:
            self.steps[-1]["observation"] = text
            self.steps[-1]["observation_role"] = "user"
        else:
            self.steps.append({"step": len(self.steps), "tool": None, "args": None, "text": None,
                               "observation": text, "observation_role": "user", "message_index": i})

    def assistant(self, i: int, where: str, msg: dict[str, Any], text: str | None) -> None:
        usage: dict[str, Any] = msg["usage"] if isinstance(msg.get("usage"), dict) else {}
        calls = msg.get("tool_calls") or []
        if not isinstance(calls, list):
            raise SchemaError(field=f"{where}.tool_calls", expected="a list", got=describe_value(calls))
        if not calls:
            self.steps.append({"step": len(self.steps), "tool": None, "args": None, "text": text,
                               "observation": None, "message_index": i})
            _usage(self.steps[-1], usage)
            return
        for j, call in enumerate(calls):
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
                raise SchemaError(field=f"{where}.tool_calls[{j}].function.name", expected="a string",
                                  got=describe_value(fn))
            raw_args = fn.get("arguments")
            try:
                args = json.loads(raw_args) if isinstance(raw_args, str) else raw_args
            except json.JSONDecodeError:
                args = raw_args  # kept verbatim: some models emit arguments that are not JSON
            step = {"step": len(self.steps), "tool": fn["name"], "args": encode_args(args),
                    "text": text if j == 0 else None, "observation": None, "message_index": i}
            if j == 0:
                _usage(step, usage)
            call_id = call.get("id")
            if isinstance(call_id, str):
                # real logs reuse ids (tau-bench does): a result answers the oldest unanswered call of that id
                self.by_call.setdefault(call_id, []).append(step)
            self.steps.append(step)

    def tool(self, where: str, call_id: Any, text: str | None) -> None:
        same_id = self.by_call.get(call_id, []) if isinstance(call_id, str) else []
        target = next((st for st in same_id if st.get("observation") is None), None)
        if target is None and same_id:
            raise SchemaError(field=f"{where}.tool_call_id", expected="a call that has no result yet",
                              got=f"a second result for {call_id!r}")
        if target is None:
            pending = [s for s in self.steps if s.get("tool") is not None and s.get("observation") is None]
            if call_id is None and pending:
                target = pending[0]
            else:
                raise SchemaError(field=f"{where}.tool_call_id", expected="the id of an earlier assistant tool call",
                                  got=describe_value(call_id))
        target["observation"] = text
        target["observation_role"] = "tool"


def _usage(step: dict[str, Any], usage: dict[str, Any]) -> None:
    for src, dst in (("prompt_tokens", "input_tokens"), ("completion_tokens", "output_tokens")):
        if isinstance(usage.get(src), int):
            step[dst] = usage[src]


def read_openai_chat(path: str | os.PathLike[str]) -> dict[str, pl.DataFrame]:
    """Load a JSONL file of runs in OpenAI chat-completions format (see ``chat_to_run``).

    Parameters
    ----------
    path : str or os.PathLike
        A JSONL file, one run a line: ``messages`` (system, user, assistant with ``tool_calls``, tool) and
        optional run fields.

    Returns
    -------
    dict of str to polars.DataFrame
        The tables read (``runs``, ``steps``, ``compactions``, and the others the format carries), validated.
    """
    return collect_runs(Path(path), openai_runs(path))


def openai_runs(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any], list[dict[str, Any]],
                                                                  list[dict[str, Any]]]]:
    """(line, run, steps, compactions) for each line of a chat-completions log, read one line at a time."""
    path = Path(path)
    for number, record in json_lines(path):
        with at_line(path, number):
            if not isinstance(record, dict):
                raise SchemaError(expected="a JSON object (one run per line)", got=describe_value(record))
            run, steps, comps = chat_to_run(record)
        yield number, run, steps, comps


def message_text(msg: dict[str, Any]) -> str:
    """What a chat message puts in the context: its text plus its tool calls as ``name(arguments)``."""
    text = _content_text(msg.get("content"), "message") or ""
    for call in msg.get("tool_calls") or []:
        fn = call.get("function") or {}
        text += f"\n{fn.get('name')}({fn.get('arguments')})"
    return text


def message_tokens(messages: list[dict[str, Any]], encoding: str) -> tuple[list[int], list[int]]:
    """Per message: input tokens before it (system prompt excluded, FOCUS A.8) and its own tokens."""
    from workbench import tokens

    own = tokens.count_many([message_text(m) for m in messages], encoding)
    before, total = [], 0
    for m, n in zip(messages, own, strict=True):
        before.append(total)
        if m.get("role") not in ("system", "developer"):
            total += n
    return before, own


__all__ = ["read_openai_chat"]
