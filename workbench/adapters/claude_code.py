"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``) as runs, steps and compactions.

One JSON object a line. The fields read (everything else is ignored):

* ``type``: ``user`` / ``assistant`` carry a ``message``; ``system`` lines matter only with
  ``subtype == "compact_boundary"`` (a compaction; ``compactMetadata`` gives ``trigger``,
  ``manual`` or ``auto``, ``preTokens``, and for a partial compaction the kept messages,
  ``preservedSegment`` ``{headUuid, tailUuid}`` or ``preservedMessages``); other types (titles, file
  snapshots, progress, attachments) only link the tree.
* ``sessionId``: the run (a boundary line without one belongs to the session of the line before it); one
  session written over several files is one run (a record copied into a later file, same ``uuid``, is read
  once). ``isSidechain``: the line belongs to a sub-agent (in the session's file, in ``agent-ID.jsonl`` beside
  it or under ``SESSION/subagents/``), which becomes a run of its own, ``SESSION/sidechain/AGENT`` (``agentId``
  when present, else the ``uuid`` of the sidechain's first line), with ``parent_run_id`` naming the session.
  ``isMeta``: injected context, not a turn; ``isCompactSummary``: the user line that carries the summary.
* ``uuid``, ``parentUuid``, ``logicalParentUuid``: the transcript is a tree. A rewind leaves a dead branch (a
  second child of a message); a compaction starts a new root whose ``logicalParentUuid`` points back. The
  session's history is the branch it continued on: the path from its last message back to the root (through
  ``logicalParentUuid`` at a boundary), plus each tool result of a call on that path. Every other user or
  assistant message is on an abandoned branch: never a step, never evidence; the run's
  ``abandoned_branches`` counts those branches.
* ``message.content``: a string, or a list of blocks: ``text``, ``tool_use`` (``id``,
  ``name``, ``input``), ``tool_result`` (``tool_use_id``, ``content`` as a string or text
  blocks, ``is_error``); ``thinking`` blocks are skipped. ``message.model`` names the run's model.
* ``message.usage``: ``input_tokens`` (fresh), ``cache_read_input_tokens``, ``cache_creation_input_tokens``,
  ``output_tokens``. One API reply written as several lines (one per content block) shares ``message.id``
  and ``requestId``: its usage counts once, and its text goes with its first tool call.
* A run's ``scenario_id`` is its session (a sub-agent's is its parent's): the cluster that intervals over
  entries resample, since a session's entries are not independent.
* ``timestamp``, ``cwd``, ``version``, ``gitBranch``: a step's time; the run's ``started_at``/``ended_at``,
  ``project`` (the working directory), ``client_version`` and ``git_branch``; ``project_dir`` is the
  directory the session file lies in (Claude Code's encoded project name).

Steps: every ``tool_use`` is a step (tool = name, args = input) whose observation is its
``tool_result`` (an error result keeps its text, ``error`` = true); an assistant text without
tool calls is a step with no tool; a user's typed message is a step observed from the user.
A step's ``input_tokens`` is its whole prompt (fresh + cache read + cache creation, as Peak needs);
``cache_read_tokens`` and ``cache_creation_tokens`` keep the cache's share apart.
A compaction's ``step`` is the first step after it; its span is every step since the previous
boundary (the history it replaced) except the messages a partial compaction kept, which are its
``retained_turn``; its summary is the compact-summary line's text. A span with no step (a compaction whose
``logicalParentUuid`` names a message the files do not hold) is empty: ``span_end`` = ``span_start`` - 1.

Documented behaviour for the awkward cases: a compact-summary line with no boundary before it is
an error naming the line; a boundary whose summary line never comes is not a compaction row (the
run's ``unsummarized_boundaries`` counts it); a ``tool_result`` whose ``tool_use`` is missing
is a step with no tool and ``orphan_result`` = true; a compaction whose parent is missing is imported with an
empty span. These three also raise a :class:`TranscriptWarning` naming the file and line. One session id under
two project directories (a session copied or resumed elsewhere) is one run per directory, ``PROJECT_DIR/SESSION``,
with a warning naming both files. A file's half-written last line (a session still
open) is skipped with a warning. Nothing here sends anything anywhere or runs any content.
"""

from __future__ import annotations

import json
import os
import re
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from workbench.adapters.staging import Parts, RunTables, collect_runs
from workbench.adapters.trajectory import encode_args, widen_span
from workbench.jsonl import BadLines, LogWarning, json_lines
from workbench import logfiles
from workbench.logfiles import project_dir as _project_dir
from workbench.usage_scan import first_time, line_kind, token_count, usage_counts
from workbench.validation import describe_value
from workbench.schema import SchemaError


#: how a Claude Code run's usage columns are counted (ccusage's definitions: its README and JSON output)
USAGE_DEFINITION = ("claude-code: every unique reply (message.id + requestId; a reply without them counts per line) "
                    "of the session on any branch, once across the tree; input excludes cache read and creation")


#: the per-model usage counters of ``usage_by_model`` (both clients)
MODEL_USAGE = ("input", "output", "cache_read", "cache_creation_5m", "cache_creation_1h", "reasoning")


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


class _Record:
    """One transcript line: where it is, what it says, and what the tree walk asks of it (read once)."""

    __slots__ = ("file", "line", "rec", "uuid", "parent", "kind", "turn", "side", "is_result")

    def __init__(self, file: Path, line: int, rec: dict[str, Any], kind: Any) -> None:
        self.file, self.line, self.rec, self.kind = file, line, rec, kind
        u = rec.get("uuid")
        self.uuid: str | None = u if isinstance(u, str) else None
        # the message this one follows: parentUuid, or at a compaction's new root its logicalParentUuid
        up = rec.get("parentUuid")
        if not isinstance(up, str):
            up = rec.get("logicalParentUuid")
        self.parent: str | None = up if isinstance(up, str) else None
        self.turn = kind == "user" or kind == "assistant" or (kind == "system"
                                                              and rec.get("subtype") == "compact_boundary")
        self.side = bool(rec.get("isSidechain"))
        self.is_result = False
        if kind == "user":  # (only a user's message carries tool results)
            msg = rec.get("message")
            content = msg.get("content") if isinstance(msg, dict) else None
            if isinstance(content, list):
                for b in content:
                    if isinstance(b, dict) and b.get("type") == "tool_result":
                        self.is_result = True
                        break


@dataclass
class _Session:
    """One run being built: steps, compactions, pending tool calls, what the session records about itself."""

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
    notes: list[tuple[str, int, str]] = field(default_factory=list)  # (file, line, what was odd) to warn about
    file: Path | None = None  # the file of the line being read
    meta: dict[str, Any] = field(default_factory=dict)  # model, times, project, version, branch
    usage_seen: set[tuple[str, str | None]] = field(default_factory=set)  # (message.id, requestId) counted
    reply_text: tuple[str, int] | None = None  # (message.id, step) of a reply's text-only line
    step_uuid: dict[int, str] = field(default_factory=dict)  # step -> uuid of the line that made it
    abandoned: int = 0
    untyped: int = 0  # lines with a message but no type, read by the message's role
    first_untyped: tuple[str, int] = ("", 0)
    spent: dict[str, int] = field(default_factory=dict)  # usage of every counted reply, whichever branch
    by_model: dict[str, dict[str, int]] = field(default_factory=dict)  # the same per model
    models: list[str] = field(default_factory=list)
    off_branch: dict[str, int] = field(default_factory=dict)  # reason -> messages off the followed branch
    sizes: tuple[int, int] = (0, 0)  # (steps, compactions) handed over by close()

    def spend(self, reply: _Reply) -> None:
        """Count one reply's usage and model (:func:`_reply_of`; the caller counts each reply once, whichever
        branch it is on)."""
        _, model, usage = reply
        if model is not None and model != "<synthetic>" and model not in self.models:
            self.models.append(model)
        if usage is None:
            return
        fresh, output, read, made, hour = usage
        spent = self.spent
        spent["usage_replies"] = spent.get("usage_replies", 0) + 1
        spent["usage_input_tokens"] = spent.get("usage_input_tokens", 0) + fresh
        spent["usage_output_tokens"] = spent.get("usage_output_tokens", 0) + output
        spent["usage_cache_read_tokens"] = spent.get("usage_cache_read_tokens", 0) + read
        spent["usage_cache_creation_tokens"] = spent.get("usage_cache_creation_tokens", 0) + made
        # per model, with the cache writes split into their 5-minute and 1-hour tiers where the log says which
        row = self.by_model.get(model or "(no model)")
        if row is None:
            row = self.by_model[model or "(no model)"] = dict.fromkeys(MODEL_USAGE, 0)
        row["input"] += fresh
        row["output"] += output
        row["cache_read"] += read
        row["cache_creation_1h"] += min(hour, made)
        row["cache_creation_5m"] += made - min(hour, made)

    def read(self, r: _Record) -> None:
        rec = r.rec
        get = rec.get
        self.file = r.file
        kind = r.kind
        if kind is not None and get("type") is None:  # an older client's line: said once per session
            if not self.untyped:
                self.first_untyped = (str(r.file), r.line)
            self.untyped += 1
        meta = self.meta
        ts = get("timestamp")
        if isinstance(ts, str):
            widen_span(meta, ts)
        else:
            ts = None
        if "project" not in meta and isinstance(v := get("cwd"), str) and v:
            meta["project"] = v
        if "git_branch" not in meta and isinstance(v := get("gitBranch"), str) and v:
            meta["git_branch"] = v
        if isinstance(v := get("version"), str):
            meta["client_version"] = v
        before = len(self.steps)
        if kind == "user":
            self.user(r.line, rec)
        elif kind == "assistant":
            self.assistant(rec)
        elif rec.get("subtype") == "compact_boundary":
            self.compact_boundary(r.line, rec)
        for i in range(before, len(self.steps)):
            self.steps[i].setdefault("timestamp", ts)
            if r.uuid is not None:
                self.step_uuid[i] = r.uuid

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
            self.notes.append((str(self.file), number, f"tool_result {call_id!r} has no tool_use before it; kept as a step "
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
        model = msg["model"] if isinstance(msg.get("model"), str) and msg["model"] != "<synthetic>" else None
        if model is not None:
            self.meta.setdefault("model", model)
        content = msg.get("content")
        usage: dict[str, Any] = msg["usage"] if isinstance(msg.get("usage"), dict) else {}
        mid = msg.get("id") if isinstance(msg.get("id"), str) else None
        key = (mid, rec.get("requestId") if isinstance(rec.get("requestId"), str) else None) if mid else None
        if key in self.usage_seen:
            usage = {}  # one reply over several lines: its usage counts once, on the first step it makes
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        text = _text([b for b in blocks if isinstance(b, dict) and b.get("type") == "text"], "message.content")
        uses = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
        carried: dict[str, Any] = {}
        if uses and mid is not None and self.reply_text is not None and self.reply_text == (mid, len(self.steps) - 1):
            carried = self.steps.pop()  # the same reply's text line: its text and usage go with the first call
            self.step_uuid.pop(len(self.steps), None)
            text = "\n".join(t for t in (carried.get("text"), text) if t)
        self.reply_text = None
        first = True
        for j, use in enumerate(uses):
            if not isinstance(use.get("name"), str):
                raise SchemaError(field=f"message.content[{j}].name", expected="the tool's name",
                                  got=describe_value(use.get("name")))
            step = {"step": len(self.steps), "tool": use["name"], "args": encode_args(use.get("input")),
                    "text": text if first and text else None, "observation": None, "model": model}
            if first:
                step.update({k: v for k, v in carried.items() if k.endswith("_tokens") or k == "timestamp"})
                _usage(step, usage)
                if key is not None:
                    self.usage_seen.add(key)
            first = False
            if isinstance(use.get("id"), str):
                self.calls[use["id"]] = step
            self.steps.append(step)
        if not uses and text:
            step = {"step": len(self.steps), "tool": None, "args": None, "text": text, "observation": None,
                    "model": model}
            _usage(step, usage)
            if key is not None:
                self.usage_seen.add(key)
            self.steps.append(step)
            if mid is not None:
                self.reply_text = (mid, step["step"])

    def compact_boundary(self, number: int, rec: dict[str, Any]) -> None:
        if self.boundary is not None:
            self._unsummarized()  # the previous boundary never got its summary
        meta: dict[str, Any] = rec["compactMetadata"] if isinstance(rec.get("compactMetadata"), dict) else {}
        pre = meta.get("preTokens")
        self.boundary = {"line": number, "trigger": meta.get("trigger"), "kept": _preserved(meta),
                         "timestamp": rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None,
                         "pre_tokens": pre if isinstance(pre, int) and not isinstance(pre, bool) else None}

    def summary(self, number: int, text: str) -> None:
        if self.boundary is None:
            raise SchemaError(field="isCompactSummary", expected="a compact_boundary system line before the summary",
                              got="a compact summary with no boundary")
        span_end = len(self.steps) - 1
        retained = None
        kept = self.boundary["kept"]
        if kept:  # a partial compaction: the messages it kept are retained history, not replaced history
            uuids = list(self.step_uuid.items())
            if isinstance(kept, tuple):  # preservedSegment: from its head message through its tail
                head = next((st for st, u in uuids if u == kept[0] and st >= self.last_span_start), None)
                kept_steps = list(range(head, len(self.steps))) if head is not None else []
            else:
                kept_steps = [st for st, u in uuids if u in kept and st >= self.last_span_start]
            if kept_steps:
                span_end = min(kept_steps) - 1
                retained = "\n".join(_step_text(self.steps[st]) for st in range(min(kept_steps), len(self.steps)))
        self.comps.append({"boundary": len(self.comps), "step": len(self.steps), "span_start": self.last_span_start,
                           "span_end": span_end, "previous_summary": self.previous_summary,
                           "retained_turn": retained, "candidate_summary": text, "committed_summary": text,
                           "trigger": self.boundary["trigger"], "pre_tokens": self.boundary["pre_tokens"],
                           "timestamp": self.boundary["timestamp"]})
        self.previous_summary = text
        self.last_span_start = len(self.steps)
        self.boundary = None

    def _unsummarized(self) -> None:
        assert self.boundary is not None
        self.unsummarized += 1
        self.notes.append((str(self.file), self.boundary["line"], "compact_boundary with no isCompactSummary line after it; "
                                                  "not a compaction row, counted in unsummarized_boundaries"))

    def finish(self) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
        """The run's row, steps and compactions (:meth:`close`, then :meth:`run_row`)."""
        steps, comps = self.close()
        return self.run_row(), steps, comps

    def close(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """End the session (a boundary still waiting is unsummarized; untyped lines are said) and hand over its
        steps and compactions, each naming the run; the session keeps their counts, for :meth:`run_row`."""
        if self.boundary is not None:
            self._unsummarized()
            self.boundary = None
        if self.untyped:
            self.notes.append((*self.first_untyped, f"{self.untyped} line(s) without 'type' (an older client's) read by "
                               "their message's role, as ccusage reads them"))
        steps, comps = self.steps, self.comps
        for st in steps:
            st["run_id"] = self.run_id
        for c in comps:
            c["run_id"] = self.run_id
        self.sizes = (len(steps), len(comps))
        self.steps, self.comps, self.calls, self.step_uuid, self.usage_seen = [], [], {}, {}, set()
        return steps, comps

    def run_row(self) -> dict[str, Any]:
        """The run's row, once the session is closed and its replies counted (:meth:`spend`)."""
        usage = {c: self.spent.get(c, 0) for c in ("usage_input_tokens", "usage_output_tokens",
                                                    "usage_cache_read_tokens", "usage_cache_creation_tokens",
                                                    "usage_replies")}
        return {"run_id": self.run_id, "task_id": self.run_id, "scenario_id": self.parent or self.run_id,
                "method": "claude_code", "task": self.task,
                "steps": self.sizes[0], "compactions": self.sizes[1], "parent_run_id": self.parent,
                "unsummarized_boundaries": self.unsummarized, "abandoned_branches": self.abandoned, **self.meta,
                "models": list(self.models), **usage, "usage_definition": USAGE_DEFINITION,
                "usage_by_model": json.dumps(self.by_model, sort_keys=True) if self.by_model else None,
                "off_branch_lines": sum(self.off_branch.values()),
                "off_branch_reason": "; ".join(f"{reason}: {n}" for reason, n in sorted(self.off_branch.items()))
                or None}


def _preserved(meta: dict[str, Any]) -> tuple[str, str | None] | frozenset[str] | None:
    """The messages a partial compaction kept: ``preservedSegment`` as (head uuid, tail uuid), or
    ``preservedMessages`` (uuids, or objects with a ``uuid``) as a set; None for a whole compaction."""
    seg = meta.get("preservedSegment")
    if isinstance(seg, dict) and isinstance(seg.get("headUuid"), str):
        return seg["headUuid"], seg.get("tailUuid") if isinstance(seg.get("tailUuid"), str) else None
    kept = meta.get("preservedMessages")
    if isinstance(kept, list):
        ids = {k if isinstance(k, str) else k.get("uuid") for k in kept if isinstance(k, (str, dict))}
        return frozenset(i for i in ids if isinstance(i, str)) or None
    return None


def _step_text(step: dict[str, Any]) -> str:
    return "\n".join(str(v) for v in (step.get("text"), step.get("tool"), step.get("observation")) if v)


def _usage(step: dict[str, Any], usage: dict[str, Any]) -> None:
    if not usage:
        return
    fresh, read = _count_of(usage.get("input_tokens")), _count_of(usage.get("cache_read_input_tokens"))
    made, out = _count_of(usage.get("cache_creation_input_tokens")), _count_of(usage.get("output_tokens"))
    if fresh is not None or read or made:
        step["input_tokens"] = (fresh or 0) + (read or 0) + (made or 0)  # the whole prompt, as Peak needs
        step["cache_read_tokens"] = read or 0
        step["cache_creation_tokens"] = made or 0
    if out is not None:
        step["output_tokens"] = out


def _count_of(v: Any) -> int | None:
    """A count as the log has it (an integer, not a boolean), else None."""
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def read_claude_code(path: str | os.PathLike[str], *, bad: BadLines | None = None, since: str | None = None,
                     until: str | None = None, project: str | None = None,
                     files: Sequence[Path] | None = None) -> dict[str, pl.DataFrame]:
    """Load one Claude Code session file, or every ``*.jsonl`` below a directory, into the trajectory tables.

    A file's half-written last line (a session still open) is skipped with a warning; with
    ``bad.skip_invalid`` every bad line is skipped and recorded in ``bad`` instead of failing.
    ``since``/``until`` (ISO dates or times, compared with the session's first and last timestamps) and
    ``project`` (a part of its working directory or project directory name) select sessions; ``files`` reads
    those files instead of every one below ``path`` (a home that also holds Codex sessions).
    """
    return collect_runs(Path(path), claude_code_runs(path, bad=bad, since=since, until=until, project=project,
                                                     files=files))


def claude_code_runs(path: str | os.PathLike[str], *, bad: BadLines | None = None, since: str | None = None,
                     until: str | None = None, project: str | None = None, files: Sequence[Path] | None = None,
                     timings: dict[str, float] | None = None, spill: Path | None = None,
                     derive: Callable[[dict[str, pl.DataFrame]], dict[str, pl.DataFrame]] | None = None,
                     ) -> Iterator[_RunRows | Parts]:
    """:func:`read_claude_code`'s runs one at a time, ``(first line, run, steps, compactions)``, in bounded memory.

    The files are first scanned for the session ids their lines name (bytes only, no parsing); files that share
    a session id are one group, and each group is read and built alone, so memory holds one group's lines, not
    the tree's. Runs come group by group (groups in the order of their first file). A reply (message id +
    request id) counts where it is first read. ``timings`` adds the seconds spent scanning (``scan``) and
    reading and building runs (``parse``).

    A tree of more than :data:`PARALLEL_BYTES` is read by worker processes, one a core, a batch of groups each
    (:func:`_batch_job`): a worker builds its groups' steps and compactions into validated tables (with
    ``derive``'s, as :class:`~workbench.adapters.staging.RunTables` derives them) and writes them as Parquet
    parts under ``spill`` (a temporary directory when None), which come as
    :class:`~workbench.adapters.staging.Parts` after the batch's runs (rows with no steps or compactions). The
    parent counts the replies in the tree's order and says the warnings, skipped lines and first error in the
    order one process gives them; ``parse`` then includes the workers' building of tables.
    """
    from workbench.executors import usable_cores

    bad = bad if bad is not None else BadLines()
    listed = list(files) if files is not None else session_files(path)
    workers = min(usable_cores(), len(listed))
    if workers >= 2 and sum(f.stat().st_size for f in listed) > PARALLEL_BYTES:
        yield from _parallel_runs(Path(path), listed, workers, bad, since, until, project, timings, spill, derive)
        return
    clock = time.perf_counter()
    groups = _file_groups(listed)
    if timings is not None:
        timings["scan"] = timings.get("scan", 0.0) + time.perf_counter() - clock
    replies: set[tuple[str, str]] = set()  # (message.id, requestId) counted anywhere in the tree: a resumed
    for group in groups:  # session's copies count where they first appear
        clock = time.perf_counter()
        runs, spends = _group_runs(group, bad, since, until, project)
        _count_spends(spends, replies)
        if timings is not None:
            timings["parse"] = timings.get("parse", 0.0) + time.perf_counter() - clock
        for session in runs:
            yield session.first_line, *session.finish()
            _say_notes(session)


def _say_notes(session: _Session) -> None:
    for where, line, note in sorted(session.notes):
        warnings.warn(f"{where}:{line}: {note}", TranscriptWarning, stacklevel=3)


def _parallel_runs(path: Path, files: list[Path], workers: int, bad: BadLines, since: str | None, until: str | None,
                   project: str | None, timings: dict[str, float] | None, spill: Path | None,
                   derive: Callable[[dict[str, pl.DataFrame]], dict[str, pl.DataFrame]] | None,
                   ) -> Iterator[_RunRows | Parts]:
    """:func:`claude_code_runs` with worker processes: they start (importing this module) while the files are
    scanned here, then take batches of groups in order, a few batches ahead of the one counted here."""
    import contextlib
    import tempfile

    from workbench.executors import workers as worker_pool

    with contextlib.ExitStack() as stack:
        pool = stack.enter_context(worker_pool(workers))  # (started already when the command started them)
        pool.start(__name__)
        if spill is None:  # the parts are read as they come, then removed with the directory
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="claude-code-"))
        else:  # the parts stay until the caller has merged them, and removes ``spill``
            spill.mkdir(parents=True, exist_ok=True)
            tmp = tempfile.mkdtemp(prefix="claude-code-", dir=spill)
        clock = time.perf_counter()
        groups = _file_groups(files, pool)
        if timings is not None:
            timings["scan"] = timings.get("scan", 0.0) + time.perf_counter() - clock
        batches = _batches(groups, workers)
        todo = iter(enumerate(batches))

        def submit() -> Any:
            nxt = next(todo, None)
            if nxt is None:
                return None
            k, batch = nxt
            return pool.submit(_batch_job, batch, bad.skip_invalid, since, until, project, str(path),
                               str(Path(tmp) / f"batch-{k:06d}"), derive)

        ahead = [f for f in (submit() for _ in range(2 * workers)) if f is not None]
        replies: set[tuple[str, str]] = set()
        while ahead:
            clock = time.perf_counter()
            done, parts = ahead.pop(0).result()
            if (future := submit()) is not None:
                ahead.append(future)
            if timings is not None:
                timings["parse"] = timings.get("parse", 0.0) + time.perf_counter() - clock
            for runs, spends, said, skipped, error in done:
                for category, message in said:
                    warnings.warn(message, category, stacklevel=3)
                bad.truncated.extend(skipped.truncated)
                bad.skipped.extend(skipped.skipped)
                if error is not None:
                    for future in ahead:
                        future.cancel()
                    raise error
                _count_spends([(runs[k] if k >= 0 else None, reply) for k, reply in spends], replies)
                for session in runs:
                    yield session.first_line, session.run_row(), [], []
                    _say_notes(session)
            yield parts


def _batches(groups: list[list[Path]], workers: int) -> list[list[list[Path]]]:
    """The groups, in order, in batches of at most about ``BATCH_BYTES`` of files: a sixteenth of a worker's share
    of the tree (at least an eighth of ``BATCH_BYTES``), so that the worker left with the last batch does not keep
    the other waiting long (against eighths: 6% less time on 1 GB, farm-bench)."""
    sizes = [sum(f.stat().st_size for f in group) for group in groups]
    return _runs_of(groups, sizes, max(BATCH_BYTES // 8, min(BATCH_BYTES, sum(sizes) // (16 * workers))))


def _runs_of(items: list[Any], sizes: list[int], target: int) -> list[list[Any]]:
    """``items`` cut, in order, into runs of consecutive items: a run is closed once it holds ``target`` bytes
    (``sizes`` are the items' bytes)."""
    runs: list[list[Any]] = []
    size = target
    for item, n in zip(items, sizes, strict=True):
        if size >= target:
            runs.append([])
            size = 0
        runs[-1].append(item)
        size += n
    return runs


def _batch_job(groups: list[list[Path]], skip_invalid: bool, since: str | None, until: str | None,
               project: str | None, where: str, out: str,
               derive: Callable[[dict[str, pl.DataFrame]], dict[str, pl.DataFrame]] | None,
               ) -> tuple[list[tuple[list[_Session], list[tuple[int, _Reply]], list[tuple[type[Warning], str]],
                                     BadLines, BaseException | None]], Parts]:
    """A batch of groups in a worker process. For each group in order: its closed runs (their steps and
    compactions handed over), the replies to count (by the index of their run in the runs, -1 for a run not
    selected), the warnings it gave, the lines it skipped, and the error that stopped it (the last group read:
    the parent raises it when it comes to this group, so the first error in the tree's order is the one said).
    Then the steps and compactions of every group, validated and written as Parquet parts under ``out``."""
    builder = RunTables(Path(where), spill=Path(out), derive=derive, with_runs=False)
    done: list[tuple[list[_Session], list[tuple[int, _Reply]], list[tuple[type[Warning], str]], BadLines,
                     BaseException | None]] = []
    for files in groups:
        bad = BadLines(skip_invalid=skip_invalid)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                runs, spends = _group_runs(files, bad, since, until, project)
                for session in runs:
                    builder.add_run(session.first_line, {"run_id": session.run_id}, *session.close())
            except Exception as err:  # noqa: BLE001 - raised again in the parent, in order
                done.append(([], [], [(w.category, str(w.message)) for w in caught], bad, err))
                break
        index = {id(session): k for k, session in enumerate(runs)}
        done.append((runs, [(index[id(t)] if t is not None else -1, reply) for t, reply in spends],
                     [(w.category, str(w.message)) for w in caught], bad, None))
    try:
        builder.flush()
    except Exception as err:  # noqa: BLE001 - the last chunk's error, said after the batch's groups
        done.append(([], [], [], BadLines(skip_invalid=skip_invalid), err))
    return done, Parts(dict(builder.parts), {name: n for name, n in builder.counts.items() if name != "runs"})


_RunRows = tuple[int, dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]

#: bytes of session files above which groups are read by worker processes, one a core (below, starting them
#: costs more than they save; the command line starts them early above the same size)
PARALLEL_BYTES = logfiles.PARALLEL_BYTES

#: bytes of session files a worker reads as one batch (:func:`_batch_job`), at most
BATCH_BYTES = 64 << 20

#: bytes of session files scanned for their session ids as one job (:func:`_scan`), about
SCAN_BYTES = 16 << 20

#: ``"sessionId": "..."`` in a line's bytes (the prescan that groups files; an id's escapes are kept as written)
_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _session_ids(file: Path) -> set[bytes]:
    """The session ids a file's lines name, found in its bytes block by block (no line is parsed). A quoted
    ``\\"sessionId\\"`` inside a message's text is escaped in the line and is not found."""
    found: set[bytes] = set()
    with open(file, "rb") as fh:
        rest = b""
        while True:
            block = fh.read(1 << 23)
            buf = rest + block if rest else block
            if block:
                cut = buf.rfind(b"\n") + 1
                buf, rest = buf[:cut], buf[cut:]
            found.update(_SESSION_ID.findall(buf))
            if not block:
                return found


def _scan(files: list[Path], pool: Any = None) -> list[set[bytes]]:
    """Each file's :func:`_session_ids`: here, or shared with ``pool``'s workers (a
    :class:`~workbench.executors.ProcessWorkers`), which take runs of files from the front while this process
    takes them from the back (a run a worker has not started is taken back), so none waits for another."""
    if pool is None:
        return [_session_ids(f) for f in files]
    runs = _runs_of(files, [f.stat().st_size for f in files], SCAN_BYTES)
    futures = [pool.submit(_scan, run) for run in runs]
    found: list[list[set[bytes]] | None] = [None] * len(runs)
    for k in reversed(range(len(runs))):
        if futures[k].cancel():
            found[k] = _scan(runs[k])
    out: list[set[bytes]] = []
    for mine, future in zip(found, futures, strict=True):
        out.extend(mine if mine is not None else future.result())
    return out


def _file_groups(files: list[Path], pool: Any = None) -> list[list[Path]]:
    """The files in groups that share no session id with each other (a session written over several files, or
    a resume that copied lines of another, is one group), each in the files' order, groups by their first
    file. ``pool``: workers that share the scan (:func:`_scan`)."""
    owner: dict[bytes, int] = {}  # session id -> the first file naming it
    root = list(range(len(files)))  # union-find over file indices

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    for i, (file, ids) in enumerate(zip(files, _scan(files, pool), strict=True)):
        for sid in ids:
            j = owner.setdefault(sid, i)
            a, b = find(i), find(j)
            if a != b:
                root[max(a, b)] = min(a, b)
    groups: dict[int, list[Path]] = {}
    for i, file in enumerate(files):
        groups.setdefault(find(i), []).append(file)
    return list(groups.values())


def _group_runs(files: list[Path], bad: BadLines, since: str | None, until: str | None, project: str | None
                ) -> tuple[list[_Session], list[tuple[_Session | None, _Reply]]]:
    """The selected runs of one group of files (every session they hold, each sub-agent a run), their usage not
    yet counted, and the replies to count (:func:`_count_spends`) in the order the sequential reading meets them
    (a reply of a run not selected still marks its (message id, request id) as seen)."""
    by_session: dict[tuple[str, str], list[_Record]] = {}  # (project directory, session id) -> its lines
    seen: dict[tuple[str, str, str], Path] = {}
    for file in files:
        last_sid: str | None = None
        project_dir = _project_dir(file)
        for number, rec in json_lines(file, bad, fast=True):
            try:
                if not isinstance(rec, dict):
                    raise SchemaError(expected="a JSON object (one transcript line)", got=describe_value(rec))
                kind = line_kind(rec)
                sid = _session_of(rec, kind, last_sid)
            except SchemaError as err:
                if not bad.skip_invalid:
                    raise err.located(str(file), number) from None
                bad.skipped.append((str(file), number, str(err)))
                continue
            if sid is None:
                continue
            last_sid = sid
            r = _Record(file, number, rec, kind)
            if r.uuid is not None:
                if seen.setdefault((project_dir, sid, r.uuid), file) is not file:
                    continue  # the same message copied into a later file of the session (a resume)
            by_session.setdefault((project_dir, sid), []).append(r)
    del seen
    projects: dict[str, list[tuple[str, Path]]] = {}  # session id -> (project directory, first file) of each
    for (project_dir, sid), records in by_session.items():
        projects.setdefault(sid, []).append((project_dir, records[0].file))
    for sid, dirs in projects.items():
        if len(dirs) > 1:
            warnings.warn(f"session {sid} is under {len(dirs)} project directories ("
                          + ", ".join(str(f) for _, f in dirs) + "): imported as one run each, "
                          + ", ".join(f"{d}/{sid}" for d, _ in dirs), TranscriptWarning, stacklevel=3)
    chosen: list[_Session] = []
    spends: list[tuple[_Session | None, _Reply]] = []
    for key in list(by_session):
        project_dir, sid = key
        records = by_session.pop(key)  # a session's lines are let go once its runs are built
        run_id = sid if len(projects[sid]) == 1 else f"{project_dir}/{sid}"
        mine: list[tuple[_Session, _Reply]] = []
        runs = _sessions(run_id, records, bad, mine)
        keep = {id(session) for session in runs if selected(session.meta, since, until, project)}
        chosen.extend(session for session in runs if id(session) in keep)
        spends.extend((target if id(target) in keep else None, reply) for target, reply in mine)
    return chosen, spends


def _session_of(rec: dict[str, Any], kind: Any, last_sid: str | None) -> str | None:
    """The session a line (of type ``kind``) belongs to (None for a line that is no turn of any session, such as
    a title)."""
    sid = rec.get("sessionId")
    if kind == "system" and sid is None:
        return last_sid  # a boundary written without the id belongs to the session it interrupts
    if kind in ("user", "assistant") and (not isinstance(sid, str) or not sid):
        raise SchemaError(field="sessionId", expected="the session's id", got=describe_value(sid))
    return sid if isinstance(sid, str) and sid else None


def _sessions(sid: str, records: list[_Record], bad: BadLines, spends: list[tuple[_Session, _Reply]]
              ) -> list[_Session]:
    """The session's run (its live branch) and one run per sub-agent, in the order they start; ``sid`` is the
    run id (the session id, with its project directory in front when the id is under two). Every reply's usage
    counts on the run it belongs to, whichever branch it is on, once per (message id, request id) across the
    tree: each reply is appended to ``spends`` as (its run, :func:`_reply_of` the line), in line order, for the
    caller to count in the tree's order (:func:`_count_spends`)."""
    off_memo: dict[str, str] = {}  # message -> why it is off the followed branch
    parent_of = {r.uuid: r.parent for r in records if r.uuid is not None}
    by_uuid = {r.uuid: r for r in records if r.uuid is not None}
    main = [r for r in records if r.turn and not r.side]
    live = _live_branch(main, parent_of)
    # where a rewound branch leaves the live one: the live message each abandoned branch's first message follows
    forks: dict[str, int] = {}
    if live is not None:
        for r in main:
            if r.uuid is not None and r.uuid not in live and parent_of.get(r.uuid) in live and not r.is_result:
                parent = parent_of[r.uuid]
                assert parent is not None
                forks[parent] = forks.get(parent, 0) + 1
    session = _Session(sid, None, first_line=main[0].line if main else records[0].line)
    side: dict[str, _Session] = {}
    out = [session]
    for r in records:
        if not r.turn:
            continue
        counted = r.kind == "assistant"
        if r.side:
            agent = r.rec.get("agentId")
            key = f"{sid}/sidechain/{agent if isinstance(agent, str) and agent else _sidechain_root(r, by_uuid)}"
            if key not in side:
                side[key] = _Session(key, sid, first_line=r.line)
                out.append(side[key])
            target = side[key]
            if counted:
                spends.append((target, _reply_of(r.rec)))
        elif live is None or r.uuid is None or r.uuid in live:
            if counted:
                spends.append((session, _reply_of(r.rec)))
            target = session
            lost = r.rec.get("logicalParentUuid")
            if (live is not None and r.rec.get("subtype") == "compact_boundary" and isinstance(lost, str)
                    and lost not in by_uuid):  # in a transcript read as a tree, the history before it is gone
                session.notes.append((str(r.file), r.line, f"compact_boundary's logicalParentUuid {lost!r} is not in "
                                      "the session (an earlier file missing?): the history it replaced is unknown; "
                                      "imported with an empty replaced span"))
        else:
            if counted:  # spend is spend: a reply off the followed branch still cost its tokens
                spends.append((session, _reply_of(r.rec)))
            if r.kind in ("user", "assistant"):
                why = _off_branch_reason(r.uuid, parent_of, live, off_memo)
                session.off_branch[why] = session.off_branch.get(why, 0) + 1
            if parent_of.get(r.uuid) in live and not r.is_result:
                session.abandoned += 1  # the first message of a branch the session did not continue on
            continue
        try:
            target.read(r)
        except (SchemaError, RecursionError) as exc:  # named FILE:LINE (a record nested too deep to walk too)
            err = exc if isinstance(exc, SchemaError) else SchemaError(
                expected="JSON nested at most a few hundred levels deep", got="deeper nesting")
            if not bad.skip_invalid:
                raise err.located(str(r.file), r.line) from None
            bad.skipped.append((str(r.file), r.line, str(err)))
        if target is session and r.uuid in forks and session.steps:  # the step where the session was rewound
            last = session.steps[-1]
            last["forks"] = last.get("forks", 0) + forks.pop(r.uuid)
    for s in out:
        s.meta.setdefault("project_dir", _project_dir(records[0].file))
    return [s for s in out if s.steps or s.comps or s.task is not None or s is session]


#: a reply as counting reads it (:func:`_reply_of`): its (message id, request id) or None, its model (a non-empty
#: string) or None, and its usage (input, output, cache read, cache creation, of which the 1-hour tier) or None
_Reply = tuple[tuple[str, str] | None, str | None, tuple[int, int, int, int, int] | None]


def _reply_of(rec: dict[str, Any]) -> _Reply:
    """What counting an assistant line's usage reads of it (:meth:`_Session.spend`, :func:`~workbench.usage_scan.first_time`): its
    message's ``id`` with its ``requestId`` (None unless both are strings), its message's ``model`` and its
    ``usage`` counts (each a positive integer, else 0; the 1-hour cache-write tier from ``cache_creation``), small
    enough to send from a worker process."""
    msg = rec.get("message")
    msg = msg if isinstance(msg, dict) else {}
    mid, rid = msg.get("id"), rec.get("requestId")
    model = msg.get("model")
    usage = msg.get("usage")
    if isinstance(usage, dict):
        tiers = usage.get("cache_creation")
        hour = token_count(tiers.get("ephemeral_1h_input_tokens")) if isinstance(tiers, dict) else 0
        counts: tuple[int, int, int, int, int] | None = (*usage_counts(usage), hour)
    else:
        counts = None
    return ((mid, rid) if isinstance(mid, str) and isinstance(rid, str) else None,
            model if isinstance(model, str) and model else None, counts)


def _count_spends(spends: Sequence[tuple[_Session | None, _Reply]], replies: set[tuple[str, str]]) -> None:
    """Count each reply of ``spends`` on its run, in order, unless its (message id, request id) is in
    ``replies`` (then remembered there); a reply of a run not selected (None) is only remembered."""
    for target, reply in spends:
        if first_time(reply[0], replies) and target is not None:
            target.spend(reply)


def _off_branch_reason(uuid: str | None, parent_of: dict[str, str | None], live: set[str],
                       memo: dict[str, str]) -> str:
    """Why a message is off the followed branch: its ancestors reach the branch (an abandoned branch, a rewind),
    end at a parent the files do not hold (a missing parent: earlier lines trimmed or in a missing file), or at a
    root the branch does not start from (another chain). ``memo`` keeps the answer of every message walked, so a
    long off-branch chain is walked once."""
    node, path, walked = uuid, [], set()
    reason = "another chain"  # a root the followed branch does not start from
    while node is not None:
        if node in memo:
            reason = memo[node]
            break
        if node in live:
            reason = "abandoned branch"
            break
        if node not in parent_of:
            reason = "missing parent"
            break
        if node in walked:  # a cycle in the parent links
            break
        path.append(node)
        walked.add(node)
        node = parent_of[node]
    for n in path:
        memo[n] = reason
    return reason


def _live_branch(main: list[_Record], parent_of: dict[str, str | None]) -> set[str] | None:
    """The uuids of the branch the session continued on: its last message's ancestors (through every line type,
    and ``logicalParentUuid`` at a compaction), plus the tool results of calls on it. None (every message is
    read) when the lines carry no tree: no parent links, or uuids that are not unique."""
    uuids = [r.uuid for r in main if r.uuid is not None]
    leaf = uuids[-1] if uuids else None
    if leaf is None or len(set(uuids)) != len(uuids) or not any(r.parent for r in main):
        return None
    live: set[str] = set()
    node: str | None = leaf
    while node is not None and node not in live:
        live.add(node)
        node = parent_of.get(node)
    live.update(r.uuid for r in main if r.uuid is not None and r.is_result and r.parent in live)
    return live


def _sidechain_root(r: _Record, by_uuid: dict[str, _Record]) -> str:
    """The uuid of the first line of the sidechain ``r`` belongs to (its id when it has no ``agentId``)."""
    node = r
    while node.parent is not None and (up := by_uuid.get(node.parent)) is not None and up.side:
        node = up
    return node.uuid or f"line{node.line}"


def selected(meta: dict[str, Any], since: str | None, until: str | None, project: str | None) -> bool:
    """Whether a session (its ``started_at``, ``ended_at``, ``project``, ``project_dir``) is selected: it ends on
    or after ``since``, starts on or before ``until`` (ISO strings, compared as text: ``2026-12-01`` is the day's
    start), and ``project`` is a part of its working directory or project directory name."""
    started, ended = meta.get("started_at"), meta.get("ended_at")
    if since is not None and (ended is None or ended < since):
        return False
    if until is not None and (started is None or started > until):
        return False
    if project is not None and not any(project in str(meta.get(k) or "") for k in ("project", "project_dir")):
        return False
    return True


__all__ = ["claude_code_runs", "read_claude_code", "selected", "session_files", "MODEL_USAGE", "TranscriptWarning", "USAGE_DEFINITION"]
