"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``) as runs, steps and compactions.

One JSON object a line. The fields read (everything else is ignored):

* ``type``: ``user`` / ``assistant`` carry a ``message``; ``system`` lines matter only with
  ``subtype == "compact_boundary"`` (a compaction; ``compactMetadata`` gives ``trigger``,
  ``manual`` or ``auto``, and ``preTokens``); ``summary`` lines (session titles) are skipped.
* ``sessionId``: the run (a boundary line without one belongs to the session of the line
  before it); ``isSidechain``: the line belongs to a sub-agent, which becomes a run
  of its own, ``SESSION/sidechain/AGENT`` (``agentId`` when present, else the sidechain's
  first ``uuid``), with ``parent_run_id`` naming the session; ``isMeta``: injected context,
  not a turn; ``isCompactSummary``: the user line that carries the summary after a boundary.
* ``message.content``: a string, or a list of blocks: ``text``, ``tool_use`` (``id``,
  ``name``, ``input``), ``tool_result`` (``tool_use_id``, ``content`` as a string or text
  blocks, ``is_error``); ``thinking`` blocks are skipped. ``message.usage`` gives token counts.

Steps: every ``tool_use`` is a step (tool = name, args = input) whose observation is its
``tool_result`` (an error result keeps its text, ``error`` = true); an assistant text without
tool calls is a step with no tool; a user's typed message is a step observed from the user.
A compaction's ``step`` is the first step after it; its span is every step since the previous
boundary (the history it replaced); its summary is the compact-summary line's text.

Documented behaviour for the awkward cases: a compact-summary line with no boundary before it is
an error naming the line; a boundary whose summary line never comes is not a compaction row (the
run's ``unsummarized_boundaries`` counts it); a ``tool_result`` whose ``tool_use`` is missing
is a step with no tool and ``orphan_result`` = true. Both of the last two also raise a
:class:`TranscriptWarning` naming the file and line. ``system`` lines of other subtypes (turn
durations, hook output) are skipped. Nothing here sends anything anywhere or runs any content.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from workbench.adapters.staging import RunTables
from workbench.adapters.trajectory import encode_args
from workbench.jsonl import BadLines, LogWarning, at_line, json_lines
from workbench.schema import SchemaError, describe_value


class TranscriptWarning(LogWarning):
    """A transcript line read with a documented fallback (an orphan result, a boundary without summary)."""


def session_files(path: str | os.PathLike[str], pattern: str = "*.jsonl") -> list[Path]:
    """A file, or every ``pattern`` file below a directory (sorted)."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.rglob(pattern) if f.is_file())
        if not files:
            raise SchemaError(f"no {pattern} session files below this directory", file=str(p))
        return files
    return [p]


def _text(content: Any, where: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for j, block in enumerate(content):
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif isinstance(block, dict) and block.get("type") in ("image", "thinking", "redacted_thinking"):
                continue
            elif not isinstance(block, dict):
                raise SchemaError(field=f"{where}[{j}]", expected="a content block", got=describe_value(block))
        return "\n".join(parts)
    raise SchemaError(field=where, expected="a string or a list of content blocks", got=describe_value(content))


@dataclass
class _Session:
    """One run being built: steps, compactions, pending tool calls."""

    run_id: str
    parent: str | None = None
    task: str | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    comps: list[dict[str, Any]] = field(default_factory=list)
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)
    boundary: dict[str, Any] | None = None  # a compact_boundary waiting for its summary line
    last_span_start: int = 0
    previous_summary: str | None = None
    unsummarized: int = 0
    first_line: int = 0
    notes: list[tuple[int, str]] = field(default_factory=list)  # (line, what was odd) to warn about

    def user(self, number: int, rec: dict[str, Any]) -> None:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            raise SchemaError(field="message", expected="an object with role and content", got=describe_value(msg))
        content = msg.get("content")
        if rec.get("isCompactSummary"):
            self.summary(number, _text(content, "message.content"))
            return
        if rec.get("isMeta"):
            return
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            for j, block in enumerate(content):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self.result(number, block, f"message.content[{j}]")
            return
        text = _text(content, "message.content")
        if self.task is None:
            self.task = text
            return
        self.steps.append({"step": len(self.steps), "tool": None, "args": None, "text": None, "observation": text,
                           "observation_role": "user"})

    def result(self, number: int, block: dict[str, Any], where: str) -> None:
        call_id = block.get("tool_use_id")
        text = _text(block.get("content"), f"{where}.content")
        step = self.calls.pop(call_id, None) if isinstance(call_id, str) else None
        if step is None:  # its tool_use is missing: kept as what it is, a result without a call
            self.notes.append((number, f"tool_result {call_id!r} has no tool_use before it; kept as a step "
                                       "with no tool and orphan_result = true"))
            self.steps.append({"step": len(self.steps), "tool": None, "args": None, "text": None, "observation": text,
                               "observation_role": "tool", "orphan_result": True, "error": bool(block.get("is_error"))})
            return
        step["observation"] = text
        step["observation_role"] = "tool"
        step["error"] = bool(block.get("is_error"))

    def assistant(self, rec: dict[str, Any]) -> None:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            raise SchemaError(field="message", expected="an object with role and content", got=describe_value(msg))
        content = msg.get("content")
        usage: dict[str, Any] = msg["usage"] if isinstance(msg.get("usage"), dict) else {}
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        text = _text([b for b in blocks if isinstance(b, dict) and b.get("type") == "text"], "message.content")
        uses = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        first = True
        for j, use in enumerate(uses):
            if not isinstance(use.get("name"), str):
                raise SchemaError(field=f"message.content[{j}].name", expected="the tool's name",
                                  got=describe_value(use.get("name")))
            step = {"step": len(self.steps), "tool": use["name"], "args": encode_args(use.get("input")),
                    "text": text if first and text else None, "observation": None}
            if first:
                _usage(step, usage)
            first = False
            if isinstance(use.get("id"), str):
                self.calls[use["id"]] = step
            self.steps.append(step)
        if not uses and text:
            step = {"step": len(self.steps), "tool": None, "args": None, "text": text, "observation": None}
            _usage(step, usage)
            self.steps.append(step)

    def compact_boundary(self, number: int, rec: dict[str, Any]) -> None:
        if self.boundary is not None:
            self._unsummarized()  # the previous boundary never got its summary
        meta: dict[str, Any] = rec["compactMetadata"] if isinstance(rec.get("compactMetadata"), dict) else {}
        pre = meta.get("preTokens")
        self.boundary = {"line": number, "trigger": meta.get("trigger"),
                         "pre_tokens": pre if isinstance(pre, int) and not isinstance(pre, bool) else None}

    def summary(self, number: int, text: str) -> None:
        if self.boundary is None:
            raise SchemaError(field="isCompactSummary", expected="a compact_boundary system line before the summary",
                              got="a compact summary with no boundary")
        self.comps.append({"boundary": len(self.comps), "step": len(self.steps), "span_start": self.last_span_start,
                           "span_end": len(self.steps) - 1, "previous_summary": self.previous_summary,
                           "retained_turn": None, "candidate_summary": text, "committed_summary": text,
                           "trigger": self.boundary["trigger"], "pre_tokens": self.boundary["pre_tokens"]})
        self.previous_summary = text
        self.last_span_start = len(self.steps)
        self.boundary = None

    def _unsummarized(self) -> None:
        assert self.boundary is not None
        self.unsummarized += 1
        self.notes.append((self.boundary["line"], "compact_boundary with no isCompactSummary line after it; "
                                                  "not a compaction row, counted in unsummarized_boundaries"))

    def finish(self) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
        if self.boundary is not None:
            self._unsummarized()
            self.boundary = None
        run = {"run_id": self.run_id, "task_id": self.run_id, "method": "claude_code", "task": self.task,
               "steps": len(self.steps), "compactions": len(self.comps), "parent_run_id": self.parent,
               "unsummarized_boundaries": self.unsummarized}
        for st in self.steps:
            st["run_id"] = self.run_id
        for c in self.comps:
            c["run_id"] = self.run_id
        return run, self.steps, self.comps


def _usage(step: dict[str, Any], usage: dict[str, Any]) -> None:
    n_in = sum(v for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
               if isinstance(v := usage.get(k), int) and not isinstance(v, bool))
    if n_in or isinstance(usage.get("input_tokens"), int):
        step["input_tokens"] = n_in
    if isinstance(usage.get("output_tokens"), int) and not isinstance(usage.get("output_tokens"), bool):
        step["output_tokens"] = usage["output_tokens"]


def read_claude_code(path: str | os.PathLike[str], *, bad: BadLines | None = None) -> dict[str, pl.DataFrame]:
    """Load one Claude Code session file, or every ``*.jsonl`` below a directory, into the trajectory tables.

    A file's half-written last line (a session still open) is skipped with a warning; with
    ``bad.skip_invalid`` every bad line is skipped and recorded in ``bad`` instead of failing.
    """
    bad = bad if bad is not None else BadLines()
    builder: RunTables | None = None
    for file in session_files(path):
        sessions: dict[str, _Session] = {}
        last_sid: str | None = None
        for number, rec in json_lines(file, bad):
            try:
                last_sid = _read_line(file, number, rec, sessions, last_sid)
            except SchemaError as err:
                if not bad.skip_invalid:
                    raise
                bad.skipped.append((str(file), number, str(err).split(f"{file}:{number}: ", 1)[-1]))
        builder = builder or RunTables(Path(path))
        for session in sessions.values():
            builder.add_run(session.first_line, *session.finish())
            for line, note in sorted(session.notes):
                warnings.warn(f"{file}:{line}: {note}", TranscriptWarning, stacklevel=2)
    assert builder is not None
    return builder.finish()


def _read_line(file: Path, number: int, rec: Any, sessions: dict[str, _Session], last_sid: str | None) -> str | None:
    """Add one transcript line to its session; returns the session id the next boundary belongs to."""
    with at_line(file, number):
        if not isinstance(rec, dict):
            raise SchemaError(expected="a JSON object (one transcript line)", got=describe_value(rec))
        kind = rec.get("type")
        if kind not in ("user", "assistant", "system"):
            return last_sid  # summary titles, file snapshots and whatever newer versions add
        if kind == "system" and rec.get("subtype") != "compact_boundary":
            return last_sid  # turn durations, hook output, API errors: not turns
        sid = rec.get("sessionId")
        if kind == "system" and sid is None and last_sid is not None:
            sid = last_sid  # a boundary written without the id belongs to the session it interrupts
        if not isinstance(sid, str) or not sid:
            raise SchemaError(field="sessionId", expected="the session's id", got=describe_value(sid))
        last_sid = sid
        run_id, parent = sid, None
        if rec.get("isSidechain"):
            agent = rec.get("agentId") if isinstance(rec.get("agentId"), str) else None
            key = f"{sid}/sidechain/{agent}" if agent else next(
                (k for k in sessions if k.startswith(f"{sid}/sidechain/")), f"{sid}/sidechain/{rec.get('uuid')}")
            run_id, parent = key, sid
        session = sessions.setdefault(run_id, _Session(run_id, parent, first_line=number))
        if kind == "user":
            session.user(number, rec)
        elif kind == "assistant":
            session.assistant(rec)
        elif rec.get("subtype") == "compact_boundary":
            session.compact_boundary(number, rec)
    return last_sid

