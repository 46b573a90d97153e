"""Claude Code and Codex session transcripts: the fixtures read as the files say, round-trip, and bad lines.

Expected numbers come from reading the fixture files by hand (line numbers below are the files' own),
not from the adapters.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import polars as pl
import pytest

from workbench.adapters import read_log
from workbench.adapters import sniff_format
from workbench.adapters import TranscriptWarning
from workbench.cli.main import main
from workbench.errors import SchemaError

from tests.conftest import assert_cli_round_trip

ROOT = Path(__file__).resolve().parents[2]
CLAUDE = ROOT / "workbench" / "datasets" / "example_logs" / "claude-code" / "session.jsonl"
CODEX_DIR = ROOT / "workbench" / "datasets" / "example_logs" / "codex"
CODEX = next(CODEX_DIR.glob("rollout-*.jsonl"))
MAIN = "7b1c2d3e-0000-4a5b-9c8d-1234567890ab"
SIDE = f"{MAIN}/sidechain/a7f3"
CODEX_RUN = "0199aa11-2222-7333-8444-555566667777"


def read(path: Path, fmt: str) -> dict[str, pl.DataFrame]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranscriptWarning)
        return read_log(path, fmt)


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(("path", "fmt"), [(CLAUDE, "claude-code"), (CLAUDE.parent, "claude-code"),
                                           (CODEX, "codex"), (CODEX_DIR, "codex")])
def test_import_validate_export_reimport_identical(tmp_path: Path, path: Path, fmt: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TranscriptWarning)
        assert main(["validate", str(path), "--format", fmt]) == 0
        assert_cli_round_trip(path, tmp_path, "--format", fmt)


def test_format_is_sniffed_from_the_first_line() -> None:
    assert sniff_format(CLAUDE) == "claude-code"
    assert sniff_format(CODEX) == "codex"


def test_claude_code_runs_steps_and_sidechain() -> None:
    t = read(CLAUDE, "claude-code")
    runs = t["runs"].sort("run_id")
    assert runs["run_id"].to_list() == [MAIN, SIDE]
    assert runs["parent_run_id"].to_list() == [None, MAIN]
    raw = lines(CLAUDE)
    # the task is the first typed user message (line 3; line 2 is an isMeta /init command)
    assert runs["task"][0] == raw[2]["message"]["content"]
    assert runs["task"][1] == raw[17]["message"]["content"]  # line 18 starts the sidechain
    steps = t["steps"]
    main_steps = steps.filter(pl.col("run_id") == MAIN).sort("step")
    # tool calls on lines 4 6 8 10 12 | 16 22 25 29, one typed user message at line 24
    assert main_steps["tool"].to_list() == ["Bash", "Read", "Edit", "Grep", "Bash", "Edit", "Bash", None, "Bash",
                                            "Read"]
    uses = [b for r in raw if r.get("type") == "assistant" and not r["isSidechain"]
            for b in r["message"]["content"] if b["type"] == "tool_use"]
    assert [json.loads(a) for a in main_steps["args"].drop_nulls()] == [u["input"] for u in uses]
    results = {b["tool_use_id"]: b for r in raw if r.get("type") == "user" and isinstance(r["message"]["content"], list)
               for b in r["message"]["content"] if b["type"] == "tool_result"}
    assert main_steps.filter(pl.col("tool").is_not_null())["observation"].to_list() == [
        results[u["id"]]["content"] if isinstance(results[u["id"]]["content"], str)
        else "\n".join(b["text"] for b in results[u["id"]]["content"]) for u in uses]
    flags = [bool(results[u["id"]]["is_error"]) for u in uses]
    assert main_steps.filter(pl.col("tool").is_not_null())["error"].to_list() == flags and sum(flags) == 2
    assert len(main_steps["observation"][4]) > 250_000  # the large line is read whole
    assert main_steps["observation"][7] == raw[23]["message"]["content"]  # the typed message, observed from the user
    assert main_steps["observation_role"][7] == "user"
    side = steps.filter(pl.col("run_id") == SIDE).sort("step")
    assert side["tool"].to_list() == ["Grep", None]
    assert side["observation"][0] == "src/api/orders.py:88: amount = inv.total()"
    assert side["text"][1] == "One caller: src/api/orders.py:88."
    assert main_steps["input_tokens"][0] == 1200 and main_steps["output_tokens"][0] == 80


def test_claude_code_compactions_spans_and_replaced_history() -> None:
    t = read(CLAUDE, "claude-code")
    comps = t["compactions"].sort("boundary")
    raw = lines(CLAUDE)
    assert comps["run_id"].to_list() == [MAIN, MAIN]
    # boundary at line 14 (auto, 155321 tokens) after 5 steps; boundary at line 27 (manual) after 4 more
    assert comps.select("step", "span_start", "span_end", "trigger", "pre_tokens").rows() == [
        (5, 0, 4, "auto", 155321), (9, 5, 8, "manual", raw[26]["compactMetadata"]["preTokens"])]
    assert comps["committed_summary"].to_list() == [raw[14]["message"]["content"], raw[27]["message"]["content"]]
    assert comps["previous_summary"].to_list() == [None, raw[14]["message"]["content"]]
    assert t["runs"].filter(pl.col("run_id") == MAIN)["compactions"][0] == 2
    assert t["runs"]["unsummarized_boundaries"].to_list() == [0, 0]
    # the history each summary replaced: its span's steps, whose results are the evidence
    history = t["steps"].filter((pl.col("run_id") == MAIN) & pl.col("step").is_between(0, 4))
    assert "120.49 != 120.50" in history["observation"][0]
    assert "```" in comps["committed_summary"][0]  # the summary that quotes code


def test_codex_steps_and_compactions() -> None:
    t = read(CODEX, "codex")
    raw = lines(CODEX)
    run = t["runs"].row(0, named=True)
    assert (run["run_id"], run["model"], run["steps"], run["compactions"]) == (CODEX_RUN, "gpt-5-codex", 8, 2)
    assert run["task"] == raw[2]["payload"]["content"][0]["text"]  # line 2 is injected environment context
    steps = t["steps"].sort("step")
    assert steps["tool"].to_list() == ["shell", "shell", None, "apply_patch", None, "shell", None, "shell"]
    assert json.loads(steps["args"][0]) == json.loads(raw[6]["payload"]["arguments"])
    assert steps["observation"][1] == raw[9]["payload"]["output"]
    assert steps["text"][2] == "The upstream export renamed order_ts to ordered_at."
    assert steps["orphan_result"].to_list() == [None, None, None, None, True, None, None, None]
    assert steps["error"].to_list() == [False, None, None, None, None, None, None, None]  # line 8: exit_code 0
    assert steps["observation"][4] == raw[14]["payload"]["output"]
    assert (steps["observation"][6], steps["observation_role"][6]) == ("Add that test please.", "user")
    comps = t["compactions"].sort("boundary")
    assert comps.select("step", "span_start", "span_end").rows() == [(3, 0, 2), (6, 3, 5)]
    assert comps["committed_summary"].to_list() == [raw[11]["payload"]["message"], raw[17]["payload"]["message"]]


# --- bad and awkward input -------------------------------------------------------------------------


def test_truncated_line_names_file_and_line(tmp_path: Path) -> None:
    for src, fmt in ((CLAUDE, "claude-code"), (CODEX, "codex")):
        text = src.read_text(encoding="utf-8").splitlines()
        bad = tmp_path / fmt / src.name
        bad.parent.mkdir()
        bad.write_text("\n".join(text[:5] + [text[5][: len(text[5]) // 2]] + text[6:]) + "\n", encoding="utf-8")
        with pytest.raises(SchemaError, match=rf"{bad.name}:6\b"):
            read_log(bad, fmt)
        out = tmp_path / f"{fmt}-tables"
        assert main(["import", str(bad.parent), "--format", fmt, "--out", str(out)]) != 0
        assert not out.exists()  # nothing half-written


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _line(kind: str, **more: object) -> dict:
    return {"type": kind, "sessionId": "s1", "uuid": f"u{len(more)}", "isSidechain": False, **more}


def test_summary_without_boundary_is_an_error(tmp_path: Path) -> None:
    log = _write(tmp_path / "s.jsonl", [
        _line("user", message={"role": "user", "content": "task"}),
        _line("user", isCompactSummary=True, message={"role": "user", "content": "a summary"}),
    ])
    with pytest.raises(SchemaError, match=r"s\.jsonl:2.*isCompactSummary.*compact_boundary"):
        read_log(log, "claude-code")


def test_boundary_without_summary_is_counted_and_warned(tmp_path: Path) -> None:
    log = _write(tmp_path / "s.jsonl", [
        _line("user", message={"role": "user", "content": "task"}),
        _line("assistant", message={"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}),
        _line("user", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]}),
        _line("system", subtype="compact_boundary", compactMetadata={"trigger": "auto", "preTokens": 10}),
        _line("assistant", message={"role": "assistant", "content": "done"}),
    ])
    with pytest.warns(TranscriptWarning, match=r"s\.jsonl:4: compact_boundary with no isCompactSummary"):
        t = read_log(log, "claude-code")
    assert t["compactions"].height == 0
    assert t["runs"]["unsummarized_boundaries"].to_list() == [1]
    assert t["steps"].height == 2


def test_result_without_its_call_is_an_orphan_step(tmp_path: Path) -> None:
    log = _write(tmp_path / "s.jsonl", [
        _line("user", message={"role": "user", "content": "task"}),
        _line("user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "gone", "content": [{"type": "text", "text": "late"}],
             "is_error": True}]}),
    ])
    with pytest.warns(TranscriptWarning, match=r"s\.jsonl:2: tool_result 'gone' has no tool_use"):
        t = read_log(log, "claude-code")
    row = t["steps"].row(0, named=True)
    assert (row["tool"], row["observation"], row["orphan_result"], row["error"]) == (None, "late", True, True)
    with pytest.warns(TranscriptWarning, match=rf"{CODEX.name}:15: function_call_output 'call_ZZ'"):
        read_log(CODEX, "codex")


def test_bad_fields_name_the_line_and_field(tmp_path: Path) -> None:
    log = _write(tmp_path / "s.jsonl", [
        _line("user", message={"role": "user", "content": "task"}),
        _line("assistant", message={"role": "assistant", "content": [{"type": "tool_use", "id": "t", "input": {}}]}),
    ])
    with pytest.raises(SchemaError, match=r"s\.jsonl:2.*message\.content\[0\]\.name.*tool's name"):
        read_log(log, "claude-code")
    _write(log, [{"type": "user", "message": {"role": "user", "content": "x"}}])
    with pytest.raises(SchemaError, match=r"s\.jsonl:1.*sessionId"):
        read_log(log, "claude-code")
    _write(log, [{"timestamp": "t", "type": "compacted", "payload": {"message": 3}}])
    with pytest.raises(SchemaError, match=r"s\.jsonl:1.*payload\.message.*summary text"):
        read_log(log, "codex")


def test_directory_reads_every_session_and_rejects_an_empty_one(tmp_path: Path) -> None:
    shutil.copy(CLAUDE, tmp_path / "one.jsonl")
    other = [dict(r, sessionId="other") for r in lines(CLAUDE)]
    (tmp_path / "sub").mkdir()
    _write(tmp_path / "sub" / "two.jsonl", other)
    t = read(tmp_path, "claude-code")
    assert t["runs"].height == 4 and t["compactions"].height == 4
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SchemaError, match="no \\*.jsonl session files"):
        read_log(empty, "claude-code")
    with pytest.raises(SchemaError, match="is a directory"):
        read_log(tmp_path, "trajectory")


def test_other_system_lines_skipped_and_boundary_without_session_id(tmp_path: Path) -> None:
    """Shapes seen in public parsers' tests: system lines of other subtypes (no sessionId), a boundary written with
    parentUuid null, logicalParentUuid and no sessionId, a summary line marked isVisibleInTranscriptOnly."""
    log = _write(tmp_path / "s.jsonl", [
        {"type": "system", "subtype": "turn_duration", "durationMs": 88947},
        _line("user", message={"role": "user", "content": "task"}),
        _line("assistant", message={"role": "assistant", "content": [
            {"type": "thinking", "thinking": "...", "signature": "x"},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.py"}}]}),
        _line("user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "file contents"}],
             "is_error": False}]}),
        {"type": "system", "subtype": "compact_boundary", "uuid": "c1", "parentUuid": None, "logicalParentUuid": "t1",
         "content": "Conversation compacted", "compactMetadata": {"preTokens": 2048, "trigger": "auto"}},
        _line("user", isCompactSummary=True, isVisibleInTranscriptOnly=True,
              message={"role": "user", "content": "Summary:\n1. **Primary Request and Intent**:\n   - read a.py\n"}),
    ])
    t = read_log(log, "claude-code")
    assert t["runs"]["run_id"].to_list() == ["s1"]
    assert t["steps"].select("tool", "observation", "error").rows() == [("Read", "file contents", False)]
    assert t["compactions"].select("step", "span_start", "span_end", "trigger", "pre_tokens").rows() == [
        (1, 0, 0, "auto", 2048)]


def _codex_item(kind: str, **payload: object) -> dict:
    return {"timestamp": "2026-11-21T09:00:00Z", "type": kind, "payload": payload}


def test_codex_compacted_with_replacement_history_or_nothing_readable(tmp_path: Path) -> None:
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the ETL job"}]}
    summary = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Summary: job 77 fixed"}]}
    env = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>x"}]}
    log = _write(tmp_path / "rollout-x.jsonl", [
        _codex_item("session_meta", id="r1"),
        _codex_item("response_item", **user),
        _codex_item("response_item", type="function_call", name="shell", arguments='{"command": ["ls"]}',
                    call_id="c1"),
        _codex_item("response_item", type="function_call_output", call_id="c1", output="a.py"),
        _codex_item("compacted", message="", replacement_history=[env, user, summary]),
        _codex_item("compacted", replacement_history=[{"type": "compaction", "encrypted_content": "gAAA"}]),
    ])
    with pytest.warns(TranscriptWarning, match=r"rollout-x\.jsonl:6: compacted item with no readable summary"):
        t = read_log(log, "codex")
    comps = t["compactions"].sort("boundary")
    assert comps.select("committed_summary", "retained_turn", "span_start", "span_end").rows() == [
        ("Summary: job 77 fixed", "fix the ETL job", 0, 0), ("", None, 1, 0)]
    _write(log, [_codex_item("compacted", message="s", replacement_history="nope")])
    with pytest.raises(SchemaError, match=r"rollout-x\.jsonl:1.*payload\.replacement_history.*list of response items"):
        read_log(log, "codex")


def test_codex_exit_code_sets_error(tmp_path: Path) -> None:
    out = json.dumps({"output": "No such file", "metadata": {"exit_code": 2}})
    log = _write(tmp_path / "rollout-e.jsonl", [
        _codex_item("response_item", type="function_call", name="shell", arguments='{"command": ["cat", "x"]}',
                    call_id="c1"),
        _codex_item("response_item", type="function_call_output", call_id="c1", output=out),
    ])
    row = read_log(log, "codex")["steps"].row(0, named=True)
    assert (row["observation"], row["error"]) == ("No such file", True)


def test_cli_prints_each_transcript_warning_on_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(CODEX_DIR), "--format", "codex"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [f"workbench validate: warning: {CODEX_DIR / CODEX.name}:15: function_call_output 'call_ZZ' has no "
                   "call before it; kept as a step with no tool and orphan_result = true"]


def test_a_session_starts_at_its_earliest_line_and_ends_at_its_latest(tmp_path: Path) -> None:
    """Lines are not always in time order in a file (four real runs ended before they started): the run's span is
    the earliest and the latest timestamp, compared as instants (an offset and a Z mean the same time)."""
    log = _write(tmp_path / "s.jsonl", [
        _line("user", timestamp="2026-11-20T10:05:00.000Z", message={"role": "user", "content": "task"}),
        _line("assistant", timestamp="2026-11-20T10:01:00.000Z", message={"role": "assistant", "content": "hi"}),
        _line("assistant", timestamp="2026-11-20T12:09:00+02:00", message={"role": "assistant", "content": "ok"}),
        _line("assistant", timestamp="2026-11-20T10:03:00.000Z", message={"role": "assistant", "content": "bye"}),
    ])
    run = read_log(log, "claude-code")["runs"].row(0, named=True)
    assert (run["started_at"], run["ended_at"]) == ("2026-11-20T10:01:00.000Z", "2026-11-20T12:09:00+02:00")


def test_lines_without_type_are_read_by_their_role_and_counted(tmp_path: Path) -> None:
    """Older clients wrote replies with a message but no type (ccusage's own fixtures do): they made empty runs with
    no word. They are read by the message's role, and one warning says how many there were."""
    lines = [
        {"sessionId": "s1", "uuid": "a", "timestamp": "2026-11-20T10:00:00Z",
         "message": {"role": "user", "content": "fix the total"}},
        {"sessionId": "s1", "uuid": "b", "parentUuid": "a", "timestamp": "2026-11-20T10:00:05Z",
         "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                                          "input": {"command": "pytest"}}]}},
        {"sessionId": "s1", "uuid": "c", "parentUuid": "b", "timestamp": "2026-11-20T10:00:09Z",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "1 failed"}]}},
    ]
    log = _write(tmp_path / "s.jsonl", lines)
    with pytest.warns(TranscriptWarning, match=r"s\.jsonl:1: 3 line\(s\) without 'type'"):
        t = read_log(log, "claude-code")
    run = t["runs"].row(0, named=True)
    assert run["task"] == "fix the total" and run["steps"] == 1
    step = t["steps"].row(0, named=True)
    assert step["tool"] == "Bash" and step["observation"] == "1 failed"
