"""Claude Code transcripts as trees, built from the format's public descriptions (field names and linking as
public parsers and Claude Code's own writer document them: uuid / parentUuid, a compact_boundary with
parentUuid null and logicalParentUuid, compactMetadata.preservedSegment {headUuid, anchorUuid, tailUuid},
sub-agent files with isSidechain and agentId, one API reply written as one line per content block sharing
message.id and requestId). Each test names the defect it guards against."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import polars as pl

from workbench.adapters import read_claude_code

SID = "5f0c1a2b-0000-4000-8000-00000000beef"


class Transcript:
    """Writes lines the way Claude Code links them: each line's parentUuid is the previous line's uuid unless
    told otherwise."""

    def __init__(self, sid: str = SID, cwd: str = "/home/dev/shop") -> None:
        self.lines: list[dict] = []
        self.sid, self.cwd = sid, cwd
        self.last: str | None = None

    def add(self, kind: str, uid: str, parent: str | None | bool = True, **more: object) -> str:
        rec = {"type": kind, "uuid": uid, "parentUuid": self.last if parent is True else parent or None,
               "sessionId": self.sid, "timestamp": f"2026-11-20T10:{len(self.lines):02d}:00.000Z",
               "cwd": self.cwd, "version": "2.1.3", "gitBranch": "main", "isSidechain": False, **more}
        self.lines.append(rec)
        self.last = uid
        return uid

    def user(self, uid: str, text: str, **kw: object) -> str:
        return self.add("user", uid, message={"role": "user", "content": text}, **kw)

    def call(self, uid: str, tool_id: str, name: str = "Read", usage: dict | None = None, msg_id: str | None = None,
             text: str | None = None, **kw: object) -> str:
        content: list[dict] = ([{"type": "text", "text": text}] if text else []) + \
            [{"type": "tool_use", "id": tool_id, "name": name, "input": {"path": f"{tool_id}.py"}}]
        message = {"role": "assistant", "model": "claude-sonnet-4-5", "content": content,
                   "usage": usage or {"input_tokens": 10, "output_tokens": 5}}
        if msg_id:
            message["id"] = msg_id
        return self.add("assistant", uid, message=message, **kw)

    def result(self, uid: str, tool_id: str, out: str, **kw: object) -> str:
        return self.add("user", uid, message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": out}]}, **kw)

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in self.lines), encoding="utf-8")
        return path


def read(path: Path) -> dict[str, pl.DataFrame]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_claude_code(path)


def six_calls_then_compaction(t: Transcript) -> None:
    t.user("p", "fix the invoice rounding")
    for i in range(6):
        t.call(f"a{i}", f"t{i}")
        t.result(f"r{i}", f"t{i}", f"output {i}")
    t.add("system", "b1", parent=None, subtype="compact_boundary", logicalParentUuid=t.last,
          compactMetadata={"trigger": "auto", "preTokens": 9000})
    t.user("s1", "Summary:\n1. **Current Work**:\n   Editing t5.py", isCompactSummary=True)


def test_a_rewound_branch_is_not_history_and_not_evidence(tmp_path: Path) -> None:
    """With a dead branch off a message, 14 steps were imported instead of 12 and the dead steps fell inside the
    next compaction's span."""
    t = Transcript()
    t.user("p", "fix the invoice rounding")
    for i in range(3):
        t.call(f"a{i}", f"t{i}")
        t.result(f"r{i}", f"t{i}", f"output {i}")
    fork = t.last
    t.call("dead1", "tx", name="Bash")  # the user pressed Esc twice and rewound to `fork`
    t.result("dead2", "tx", "rm -rf build")
    t.last = fork
    for i in range(3, 6):
        t.call(f"a{i}", f"t{i}")
        t.result(f"r{i}", f"t{i}", f"output {i}")
    t.add("system", "b1", parent=None, subtype="compact_boundary", logicalParentUuid=t.last,
          compactMetadata={"trigger": "auto", "preTokens": 9000})
    t.user("s1", "Summary:\n1. **Current Work**:\n   done", isCompactSummary=True)
    for i in range(6, 12):
        t.call(f"a{i}", f"t{i}")
        t.result(f"r{i}", f"t{i}", f"output {i}")
    tables = read(t.write(tmp_path / "p" / f"{SID}.jsonl"))
    steps = tables["steps"]
    assert steps.height == 12 and "rm -rf build" not in steps.get_column("observation").to_list()
    assert steps.get_column("args").to_list() == [json.dumps({"path": f"t{i}.py"}, separators=(",", ":")) for i in range(12)]
    assert tables["compactions"].select("span_start", "span_end", "step").row(0) == (0, 5, 6)
    assert tables["runs"].get_column("abandoned_branches").to_list() == [1]


def test_a_partial_compaction_keeps_its_preserved_messages_out_of_the_span(tmp_path: Path) -> None:
    """compactMetadata.preservedSegment names messages the compaction kept: retained history, not replaced."""
    t = Transcript()
    six_calls_then_compaction(t)
    boundary = next(r for r in t.lines if r["uuid"] == "b1")
    boundary["compactMetadata"]["preservedSegment"] = {"headUuid": "a4", "anchorUuid": "s1", "tailUuid": "r5"}
    comps = read(t.write(tmp_path / "s.jsonl"))["compactions"]
    assert comps.select("span_start", "span_end", "step").row(0) == (0, 3, 6)
    retained = comps.get_column("retained_turn")[0]
    assert "output 4" in retained and "output 5" in retained and "output 3" not in retained


def test_two_sidechains_without_agent_ids_are_two_runs(tmp_path: Path) -> None:
    """They were merged into one run, the second agent's prompt becoming a user step."""
    t = Transcript()
    t.user("p", "look around")
    t.call("a0", "task1", name="Task")
    for agent in ("x", "y"):
        t.add("user", f"{agent}0", parent=None, isSidechain=True,
              message={"role": "user", "content": f"agent {agent}: search"})
        t.call(f"{agent}1", f"{agent}t", isSidechain=True)
        t.result(f"{agent}2", f"{agent}t", f"found by {agent}", isSidechain=True)
    t.result("r0", "task1", "both agents done", parent="a0")
    runs = read(t.write(tmp_path / "s.jsonl"))["runs"].sort("run_id")
    assert runs.get_column("run_id").to_list() == [SID, f"{SID}/sidechain/x0", f"{SID}/sidechain/y0"]
    assert runs.get_column("task").to_list() == ["look around", "agent x: search", "agent y: search"]
    assert runs.get_column("steps").to_list() == [1, 1, 1]


def test_one_reply_over_several_lines_counts_its_usage_once(tmp_path: Path) -> None:
    """Lines sharing message.id and requestId (thinking, text, tool_use) became several steps with the usage
    counted each time: 12,000 input tokens instead of 10,800."""
    t = Transcript()
    t.user("p", "go")
    usage = {"input_tokens": 800, "cache_read_input_tokens": 10_000, "cache_creation_input_tokens": 0,
             "output_tokens": 50}
    t.add("assistant", "l1", requestId="req_1", message={
        "id": "msg_1", "role": "assistant", "model": "claude-opus-4-1", "usage": usage,
        "content": [{"type": "thinking", "thinking": "...", "signature": "s"}]})
    t.add("assistant", "l2", requestId="req_1", message={
        "id": "msg_1", "role": "assistant", "model": "claude-opus-4-1", "usage": usage,
        "content": [{"type": "text", "text": "Reading the file."}]})
    t.add("assistant", "l3", requestId="req_1", message={
        "id": "msg_1", "role": "assistant", "model": "claude-opus-4-1", "usage": usage,
        "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "a.py"}}]})
    t.result("l4", "t1", "contents")
    t.add("assistant", "l5", requestId="req_2", message={
        "id": "msg_2", "role": "assistant", "model": "claude-opus-4-1", "content": [{"type": "text", "text": "Done."}],
        "usage": {"input_tokens": 0, "cache_read_input_tokens": 10_800, "output_tokens": 3}})
    steps = read(t.write(tmp_path / "s.jsonl"))["steps"]
    assert steps.select("tool", "text").rows() == [("Read", "Reading the file."), (None, "Done.")]
    assert steps.get_column("input_tokens").to_list() == [10_800, 10_800]
    assert steps.get_column("input_tokens").sum() == 21_600
    assert steps.get_column("cache_read_tokens").to_list() == [10_000, 10_800]
    assert steps.get_column("cache_creation_tokens").to_list() == [0, 0]


def test_a_session_over_two_files_is_one_run_and_copied_lines_count_once(tmp_path: Path) -> None:
    """A resumed session once failed with an error naming the directory; its copied history would count twice."""
    t = Transcript()
    six_calls_then_compaction(t)
    first = t.lines[:7]
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in first), encoding="utf-8")
    t.write(tmp_path / "p" / "b.jsonl")  # the whole session again, the first part copied
    tables = read(tmp_path / "p")
    assert tables["runs"].get_column("run_id").to_list() == [SID]
    assert tables["steps"].height == 6 and tables["compactions"].height == 1


def test_sub_agent_files_beside_the_session_and_under_subagents(tmp_path: Path) -> None:
    t = Transcript()
    six_calls_then_compaction(t)
    t.write(tmp_path / "-home-dev-shop" / f"{SID}.jsonl")
    for where, agent in ((tmp_path / "-home-dev-shop" / "agent-a1.jsonl", "a1"),
                         (tmp_path / "-home-dev-shop" / SID / "subagents" / "agent-a2.jsonl", "a2")):
        s = Transcript()
        s.add("user", f"{agent}-0", parent=None, isSidechain=True, agentId=agent,
              message={"role": "user", "content": f"{agent} task"})
        s.call(f"{agent}-1", f"{agent}-t", isSidechain=True, agentId=agent)
        s.write(where)
    runs = read(tmp_path)["runs"].sort("run_id")
    assert runs.select("run_id", "parent_run_id", "project_dir").rows() == [
        (SID, None, "-home-dev-shop"), (f"{SID}/sidechain/a1", SID, "-home-dev-shop"),
        (f"{SID}/sidechain/a2", SID, "-home-dev-shop")]


def test_what_the_session_records_is_kept_and_selects_sessions(tmp_path: Path) -> None:
    t = Transcript()
    six_calls_then_compaction(t)
    t.write(tmp_path / "-home-dev-shop" / "a.jsonl")
    other = Transcript(sid="other", cwd="/home/dev/api")
    other.user("p", "hello")
    for r in other.lines:
        r["timestamp"] = "2026-12-24T08:00:00.000Z"
    other.write(tmp_path / "-home-dev-api" / "b.jsonl")
    runs = read(tmp_path)["runs"].sort("run_id")
    row = runs.row(0, named=True)
    assert (row["model"], row["project"], row["client_version"], row["git_branch"]) == (
        "claude-sonnet-4-5", "/home/dev/shop", "2.1.3", "main")
    assert (row["started_at"], row["ended_at"]) == ("2026-11-20T10:00:00.000Z", "2026-11-20T10:14:00.000Z")
    steps = read(tmp_path / "-home-dev-shop")["steps"]
    assert steps.get_column("timestamp").to_list()[:2] == ["2026-11-20T10:01:00.000Z", "2026-11-20T10:03:00.000Z"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert read_claude_code(tmp_path, since="2026-12-01")["runs"].get_column("run_id").to_list() == ["other"]
        assert read_claude_code(tmp_path, until="2026-12-01")["runs"].get_column("run_id").to_list() == [SID]
        assert read_claude_code(tmp_path, project="api")["runs"].get_column("run_id").to_list() == ["other"]


def test_preserved_messages_listed_by_uuid_are_retained_not_replaced(tmp_path: Path) -> None:
    """The other way a partial compaction names what it kept: compactMetadata.preservedMessages (uuids, or
    objects carrying one)."""
    t = Transcript()
    six_calls_then_compaction(t)
    boundary = next(r for r in t.lines if r["uuid"] == "b1")
    boundary["compactMetadata"]["preservedMessages"] = ["a5", {"uuid": "r5"}]
    comps = read(t.write(tmp_path / "s.jsonl"))["compactions"]
    assert comps.select("span_start", "span_end", "step").row(0) == (0, 4, 6)
    assert "output 5" in comps.get_column("retained_turn")[0] and "output 4" not in comps.get_column("retained_turn")[0]


def test_a_compaction_whose_parent_is_missing_imports_with_an_empty_span(tmp_path: Path) -> None:
    """Issue 39 item 4: a session file that starts at a compaction whose logicalParentUuid names a message no
    file holds (the earlier file is gone) failed the whole directory on a derived field (span_end -1),
    --skip-invalid or not, and the healthy session beside it was lost. Now the compaction imports with an empty
    replaced span and a warning naming FILE:LINE; the other session is whole."""
    from workbench.cli.main import main

    projects = tmp_path / ".claude" / "projects"
    healthy = Transcript(sid="11111111-0000-4000-8000-000000000001")
    six_calls_then_compaction(healthy)
    healthy.write(projects / "-home-dev-shop" / f"{healthy.sid}.jsonl")
    orphan = Transcript(sid="22222222-0000-4000-8000-000000000002")
    orphan.add("system", "b1", parent=None, subtype="compact_boundary", logicalParentUuid="not-in-any-file",
               compactMetadata={"trigger": "auto", "preTokens": 9000})
    orphan.user("s1", "Summary:\n1. **Current Work**:\n   Editing t5.py", isCompactSummary=True)
    orphan.call("a7", "t7")
    orphan.result("r7", "t7", "output 7")
    orphan_file = orphan.write(projects / "-home-dev-shop" / f"{orphan.sid}.jsonl")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        tables = read_claude_code(projects)
    assert any(f"{orphan_file}:1: " in str(w.message) and "not-in-any-file" in str(w.message) for w in seen)
    comps = tables["compactions"].sort("run_id")
    assert comps.select("run_id", "step", "span_start", "span_end").rows() == [
        (healthy.sid, 6, 0, 5), (orphan.sid, 0, 0, -1)]
    assert dict(tables["runs"].select("run_id", "steps").iter_rows()) == {healthy.sid: 6, orphan.sid: 1}
    assert main(["import", str(projects), "--out", str(tmp_path / "out")]) == 0
    assert pl.read_parquet(tmp_path / "out" / "compactions.parquet").height == 2


def test_one_session_id_under_two_project_directories_is_two_runs(tmp_path: Path) -> None:
    """Issue 39 item 5: the same session id under two project directories was merged into one tree and the
    session that did not end last vanished (its 6 steps and compaction), exit 0. Now each is a run whose id
    names its project directory, with a warning naming both files."""
    projects = tmp_path / ".claude" / "projects"
    shop = Transcript()
    six_calls_then_compaction(shop)
    shop_file = shop.write(projects / "-home-dev-shop" / f"{SID}.jsonl")
    other = Transcript(cwd="/home/dev/other")
    other.user("q", "another task")
    for i in range(3):
        other.call(f"x{i}", f"y{i}")
        other.result(f"z{i}", f"y{i}", f"other output {i}")
    other_file = other.write(projects / "-home-dev-other" / f"{SID}.jsonl")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        tables = read_claude_code(projects)
    assert any(str(shop_file) in str(w.message) and str(other_file) in str(w.message) for w in seen)
    runs = tables["runs"].sort("run_id")
    assert runs.select("run_id", "project", "steps", "compactions").rows() == [
        (f"-home-dev-other/{SID}", "/home/dev/other", 3, 0), (f"-home-dev-shop/{SID}", "/home/dev/shop", 6, 1)]
    alone = read(shop_file)["runs"]  # a session id under one directory keeps the plain id
    assert alone.get_column("run_id").to_list() == [SID]


def test_a_preserved_tail_reparented_under_the_summary_is_retained_not_lost(tmp_path: Path) -> None:
    """Issue 79: in a partial compaction as Claude Code writes it (the shape of claude-code-log 1.7.0's
    dag_compact_after_rewind_preserved case, built here), the boundary's logicalParentUuid is the preserved tail,
    which is written after the summary, re-parented under it; compactMetadata.preservedSegment (head, anchor, tail)
    and preservedMessages (anchor, uuids) name the kept messages, which stay on the pre-compaction line. The reader
    found no walked line for the logical parent and imported an empty replaced span and no retained_turn. The
    replaced span is the live branch before the preserved head, the retained turn the preserved messages."""
    t = Transcript()
    t.user("p", "fix the invoice rounding")
    t.call("a0", "t0")
    t.result("r0", "t0", "output 0")
    fork = t.last
    t.call("dead", "tx", name="Bash")  # a rewound attempt off `fork`
    t.result("dead2", "tx", "rm -rf build")
    t.last = fork
    t.call("a1", "t1")
    t.result("r1", "t1", "output 1")
    t.call("a2", "t2")  # the preserved head
    t.result("r2", "t2", "output 2")
    t.add("system", "b1", parent=None, subtype="compact_boundary", logicalParentUuid="a3", content="Conversation compacted",
          compactMetadata={"trigger": "auto", "preTokens": 150000,
                           "preservedSegment": {"headUuid": "a2", "anchorUuid": "s1", "tailUuid": "a3"},
                           "preservedMessages": {"anchorUuid": "s1", "uuids": ["a2", "r2", "a3"]}})
    t.user("s1", "This session is being continued from a previous conversation. Summary: read t0 and t1.",
           isCompactSummary=True)
    t.add("assistant", "a3", parent="s1", message={"role": "assistant", "model": "claude-sonnet-4-5", "content": [
        {"type": "text", "text": "kept going"}], "usage": {"input_tokens": 10, "output_tokens": 5}})
    t.call("a4", "t4")
    t.result("r4", "t4", "output 4")
    tables = read(t.write(tmp_path / "p" / f"{SID}.jsonl"))
    comps = tables["compactions"]
    assert comps.height == 1
    start, end, step = comps.select("span_start", "span_end", "step").row(0)
    obs = tables["steps"].sort("step")["observation"].to_list()
    assert (start, end) == (0, 1) and obs[:2] == ["output 0", "output 1"]  # t0 and t1 replaced; the dead branch not
    retained = comps.get_column("retained_turn")[0]
    assert retained is not None and "output 2" in retained and "output 1" not in retained
    assert "rm -rf build" not in obs
