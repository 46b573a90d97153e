"""Claude Code transcript lines read into sessions, with no table library: the core of
:mod:`workbench.adapters._claude_code` (read that module's documentation for what is read and how), and what the
worker processes of a large import run. A worker imports this module only, so it starts in a tenth of a second
where one that imported the table library took half a second a process; it hands back its rows as chunks of
columns (:func:`_batch_job`), which the importing process validates and writes."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.errors import SchemaError, describe_value
from workbench._util.jsonl import BadLines, LogWarning, json_lines
from workbench.adapters._logfiles import _file_sizes, project_dir as _project_dir
from workbench.tables._records import RowChunks, encode_args, row_columns, widen_span
from workbench.adapters._usage_scan import _reply_key, first_time, hour_count, line_kind, usage_counts


#: how a Claude Code run's usage columns are counted (ccusage's definitions: its README and JSON output)
USAGE_DEFINITION = ("claude-code: every unique reply (message.id + requestId; a reply without them counts per line) "
                    "of the session on any branch, once across the tree; input excludes cache read and creation")


#: the per-model usage counters of ``usage_by_model`` (both clients)
MODEL_USAGE = ("input", "output", "cache_read", "cache_creation_5m", "cache_creation_1h", "reasoning")


class TranscriptWarning(LogWarning):
    """A transcript line read with a documented fallback (an orphan result, a boundary without summary)."""


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


#: ``json.dumps(value, sort_keys=True)``, its encoder made once (``dumps`` with an option makes one a call)
_SORTED_JSON = json.JSONEncoder(sort_keys=True)


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
    replies: int = 0  # counted replies with usage, whichever branch
    by_model: dict[str, dict[str, int]] = field(default_factory=dict)  # their usage per model
    models: list[str] = field(default_factory=list)
    off_branch: dict[str, int] = field(default_factory=dict)  # reason -> messages off the followed branch
    sizes: tuple[int, int] = (0, 0)  # (steps, compactions) handed over by close()

    def spend(self, reply: _Reply) -> None:
        """Count one reply's usage and model (:func:`_reply_of`; the caller counts each reply once, whichever
        branch it is on): per model, with the cache writes split into their 5-minute and 1-hour tiers where the log
        says which; the run's totals are the models' sums (:meth:`run_row`)."""
        _, model, usage = reply
        if model is not None and model != "<synthetic>" and model not in self.models:
            self.models.append(model)
        if usage is None:
            return
        fresh, output, read, made, hour = usage
        self.replies += 1
        key = model or "(no model)"
        row = self.by_model.get(key)
        if row is None:
            row = self.by_model[key] = dict.fromkeys(MODEL_USAGE, 0)
        row["input"] += fresh
        row["output"] += output
        row["cache_read"] += read
        hour = hour if hour < made else made
        row["cache_creation_1h"] += hour
        row["cache_creation_5m"] += made - hour

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
        # what only reading needed goes too: a worker hands its closed sessions back pickled (the summary text was
        # two thirds of a session's bytes)
        self.previous_summary = self.file = None
        return steps, comps

    def run_row(self) -> dict[str, Any]:
        """The run's row, once the session is closed and its replies counted (:meth:`spend`)."""
        rows = self.by_model.values()
        usage = {"usage_input_tokens": sum(r["input"] for r in rows),
                 "usage_output_tokens": sum(r["output"] for r in rows),
                 "usage_cache_read_tokens": sum(r["cache_read"] for r in rows),
                 "usage_cache_creation_tokens": sum(r["cache_creation_5m"] + r["cache_creation_1h"] for r in rows),
                 "usage_replies": self.replies}
        return {"run_id": self.run_id, "task_id": self.run_id, "scenario_id": self.parent or self.run_id,
                "method": "claude_code", "task": self.task,
                "steps": self.sizes[0], "compactions": self.sizes[1], "parent_run_id": self.parent,
                "unsummarized_boundaries": self.unsummarized, "abandoned_branches": self.abandoned, **self.meta,
                "models": list(self.models), **usage, "usage_definition": USAGE_DEFINITION,
                "usage_by_model": _SORTED_JSON.encode(self.by_model) if self.by_model else None,
                "off_branch_lines": sum(self.off_branch.values()),
                "off_branch_reason": "; ".join(f"{reason}: {n}" for reason, n in sorted(self.off_branch.items()))
                or None}


def _preserved(meta: dict[str, Any]) -> tuple[str, str | None] | frozenset[str] | None:
    """The messages a partial compaction kept: ``preservedSegment`` as (head uuid, tail uuid), or
    ``preservedMessages`` (uuids, or objects with a ``uuid``) as a set; None for a whole compaction."""
    seg = meta.get("preservedSegment")
    if isinstance(seg, dict) and isinstance(seg.get("headUuid"), str):
        return seg["headUuid"], seg.get("tailUuid") if isinstance(seg.get("tailUuid"), str) else None
    return frozenset(_preserved_messages(meta)) or None


def _preserved_messages(meta: dict[str, Any]) -> list[str]:
    """``preservedMessages``' uuids in their order: a list of uuids or of objects with a ``uuid``, or
    ``{anchorUuid, uuids}`` as Claude Code 2.1 writes it; empty where there are none."""
    kept = meta.get("preservedMessages")
    if isinstance(kept, dict):
        kept = kept.get("uuids")
    if not isinstance(kept, list):
        return []
    ids = [k if isinstance(k, str) else k.get("uuid") for k in kept if isinstance(k, (str, dict))]
    return [i for i in ids if isinstance(i, str)]


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


def _say_notes(session: _Session) -> None:
    for where, line, note in sorted(session.notes):
        warnings.warn(f"{where}:{line}: {note}", TranscriptWarning, stacklevel=3)


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
               ) -> tuple[list[tuple[list[_Session], list[tuple[int, _Reply]], list[tuple[type[Warning], str]],
                                     BadLines, BaseException | None]], list[str]]:
    """A batch of groups in a worker process. For each group in order: its closed runs (their steps and
    compactions handed over), the replies to count (by the index of their run in the runs, -1 for a run not
    selected), the warnings it gave, the lines it skipped, and the error that stopped it (the last group read:
    the parent raises it when it comes to this group, so the first error in the tree's order is the one said).
    Then the files under ``out`` holding every group's steps and compactions, checked and cut into chunks as one
    process cuts them, as columns (:class:`_ColumnChunks`)."""
    builder = _ColumnChunks(Path(where), Path(out))
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
    builder.flush()
    return done, builder.files


@dataclass
class _ColumnChunks(RowChunks):
    """A worker's rows of steps and compactions (its runs' rows go to the parent with their sessions), checked and
    cut into chunks as ``RunTables`` cuts them; each chunk is written under
    ``out`` as a pickled ``{table: {column: values}}`` (``row_columns``), for the parent to
    validate (``Parts``)."""

    out: Path
    with_runs = False
    files: list[str] = field(default_factory=list)

    def flush(self) -> None:
        import pickle  # (here: the usage pass imports this module and never writes a chunk)

        if not self.pending_runs:
            return
        rows = self.take_rows()
        self.out.mkdir(parents=True, exist_ok=True)
        target = self.out / f"chunk-{len(self.files):06d}.pickle"
        with open(target, "wb") as fh:
            pickle.dump({name: row_columns(rows[name]) for name in ("steps", "compactions")}, fh,
                        protocol=pickle.HIGHEST_PROTOCOL)
        self.files.append(str(target))


#: bytes of session files scanned for their session ids as one job (:func:`_scan`), about
SCAN_BYTES = 16 << 20

#: ``"sessionId": "..."`` in a line's bytes (the prescan that groups files; an id's escapes are kept as written)
_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _session_ids(file: Path) -> set[bytes]:
    """The session ids a file's lines name, found in its bytes block by block (no line is parsed). A quoted
    ``\\"sessionId\\"`` inside a message's text is escaped in the line and is not found; a line over the line
    bound is passed over."""
    from workbench._util.jsonl import max_line_bytes

    limit = max_line_bytes()
    found: set[bytes] = set()
    with open(file, "rb") as fh:
        rest = b""
        skipping = False  # inside a line over the line bound: its bytes are passed over (the reading names it)
        while True:
            block = fh.read(1 << 23)
            if skipping:
                cut = block.find(b"\n")
                if cut < 0 and block:
                    continue
                skipping, block = False, block[cut + 1:]
            buf = rest + block if rest else block
            if block:
                cut = buf.rfind(b"\n") + 1
                buf, rest = buf[:cut], buf[cut:]
                if len(rest) > limit:  # never more than the bound held: the scan stays linear
                    rest, skipping = b"", True
            found.update(_SESSION_ID.findall(buf))
            if not block:
                return found


def _scan(files: list[Path], pool: Any = None) -> list[set[bytes]]:
    """Each file's :func:`_session_ids`: here, or shared with ``pool``'s workers (a
    :class:`~workbench._util.executors.ProcessWorkers`), which take runs of files from the front while this process
    takes them from the back (a run a worker has not started is taken back), so none waits for another."""
    if pool is None:
        return [_session_ids(f) for f in files]
    runs = _runs_of(files, _file_sizes(files), SCAN_BYTES)
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
                bad.skip_or_raise(err, str(file), number)
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
    for r in records:  # a boundary whose logical parent is written after it: a kept message stands in
        if r.uuid is not None and r.kind == "system" and r.rec.get("parentUuid") is None and r.parent is not None:
            stand_in = _stand_in(r, parent_of)
            if stand_in is not None:
                parent_of[r.uuid] = stand_in
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
                spends.append((target, _reply_of(r, bad)))
        elif live is None or r.uuid is None or r.uuid in live:
            if counted:
                spends.append((session, _reply_of(r, bad)))
            target = session
            lost = r.rec.get("logicalParentUuid")
            if (live is not None and r.rec.get("subtype") == "compact_boundary" and isinstance(lost, str)
                    and lost not in by_uuid):  # in a transcript read as a tree, the history before it is gone
                session.notes.append((str(r.file), r.line, f"compact_boundary's logicalParentUuid {lost!r} is not in "
                                      "the session (an earlier file missing?): the history it replaced is unknown; "
                                      "imported with an empty replaced span"))
        else:
            if counted:  # spend is spend: a reply off the followed branch still cost its tokens
                spends.append((session, _reply_of(r, bad)))
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
            bad.skip_or_raise(err, str(r.file), r.line)
        if target is session and r.uuid in forks and session.steps:  # the step where the session was rewound
            last = session.steps[-1]
            last["forks"] = last.get("forks", 0) + forks.pop(r.uuid)
    for s in out:
        s.meta.setdefault("project_dir", _project_dir(records[0].file))
    return [s for s in out if s.steps or s.comps or s.task is not None or s is session]


#: a reply as counting reads it (:func:`_reply_of`): its (message id, request id) as one string (:func:`_reply_key`)
#: or None, its model (a non-empty string) or None, and its usage (input, output, cache read, cache creation, of
#: which the 1-hour tier) or None
_Reply = tuple[str | None, str | None, tuple[int, int, int, int, int] | None]


def _reply_of(r: _Record, bad: BadLines) -> _Reply:
    """What counting an assistant line's usage reads of it (:meth:`_Session.spend`,
    :func:`~workbench.adapters._usage_scan.first_time`): its message's ``id`` with its ``requestId``
    (:func:`_reply_key`; None unless both are strings), its message's ``model`` and its ``usage`` counts (each a
    positive integer, else 0; the 1-hour cache-write tier from ``cache_creation``), small enough to send from a
    worker process. A count beyond ``MAX_COUNT`` is an error naming the line's FILE:LINE and field, or with
    ``bad.skip_invalid`` the line's usage is not counted and the line is counted in ``bad``."""
    rec = r.rec
    msg = rec.get("message")
    msg = msg if isinstance(msg, dict) else {}
    mid, rid = msg.get("id"), rec.get("requestId")
    model = msg.get("model")
    usage = msg.get("usage")
    counts: tuple[int, int, int, int, int] | None = None
    if isinstance(usage, dict):
        try:
            counts = (*usage_counts(usage), hour_count(usage))
        except SchemaError as err:
            bad.skip_or_raise(err, str(r.file), r.line)
    return (_reply_key(mid, rid) if isinstance(mid, str) and isinstance(rid, str) else None,
            model if isinstance(model, str) and model else None, counts)


def _count_spends(spends: Sequence[tuple[_Session | None, _Reply]], replies: set[str]) -> None:
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


def _descends_from(node: str | None, ancestor: str, parent_of: dict[str, str | None]) -> bool:
    """Whether ``ancestor`` is on ``node``'s chain of parents (a chain that loops is cut where it loops)."""
    seen: set[str] = set()
    while node is not None and node not in seen:
        if node == ancestor:
            return True
        seen.add(node)
        node = parent_of.get(node)
    return False


def _stand_in(boundary: _Record, parent_of: dict[str, str | None]) -> str | None:
    """The message a compact_boundary follows when its ``logicalParentUuid`` cannot be it: a partial compaction
    re-parents its preserved tail (often that very uuid) under its own summary, written after the boundary, so
    the logical parent descends from the boundary and the walk back from the session's end would loop. The
    preserved messages that stay on the pre-compaction line stand in (claude-code-log 1.7.0 reads the same
    fields so): of ``preservedMessages.uuids`` and ``preservedSegment``'s head and tail, the last that does not
    descend from the boundary. None when the logical parent is fine, or nothing stands in."""
    assert boundary.uuid is not None
    if not _descends_from(boundary.parent, boundary.uuid, parent_of):
        return None
    meta = boundary.rec.get("compactMetadata")
    meta = meta if isinstance(meta, dict) else {}
    members = _preserved_messages(meta)
    seg = meta.get("preservedSegment")
    if isinstance(seg, dict):
        members += [u for u in (seg.get("headUuid"), seg.get("tailUuid")) if isinstance(u, str)]
    before = [u for u in members if u in parent_of and not _descends_from(u, boundary.uuid, parent_of)]
    return before[-1] if before else None


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




__all__ = ["TranscriptWarning"]
