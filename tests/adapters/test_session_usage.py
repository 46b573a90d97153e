"""Issue 44: what a coding-agent session spent, counted as ccusage counts it (its README and JSON output): every
unique reply of a Claude Code session (message.id + requestId), whichever branch it is on, once across the tree;
a Codex session's token_count events. The fixtures reproduce each case in lines shaped as real ones (Claude Code
2.x lines as claude-code-log's captured messages show them: compact JSON, message.id, requestId, usage with cache
fields; Codex token_count events as ccusage's own loader reads them); the totals are checked against a count
written here, independent of the importer."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.adapters import TranscriptWarning, read_claude_code
from workbench.adapters import read_codex

SID, OTHER = "5d1c0a2e-1111-4a5b-9c8d-000000000001", "5d1c0a2e-2222-4a5b-9c8d-000000000002"


def user(uuid: str, parent: str | None, text: str, sid: str = SID, ts: str = "2026-11-02T10:00:00.000Z") -> dict:
    return {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/home/dev/shop",
            "sessionId": sid, "version": "2.0.31", "gitBranch": "main", "type": "user",
            "message": {"role": "user", "content": text}, "uuid": uuid, "timestamp": ts}


def reply(uuid: str, parent: str | None, mid: str, rid: str, usage: tuple[int, int, int, int], *,
          model: str = "claude-sonnet-4-5-20250929", text: str = "ok", sid: str = SID, typed: bool = True,
          ts: str = "2026-11-02T10:00:01.000Z") -> dict:
    fresh, out, read, made = usage
    rec = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/home/dev/shop",
           "sessionId": sid, "version": "2.0.31", "gitBranch": "main",
           "message": {"id": mid, "type": "message", "role": "assistant", "model": model,
                       "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                       "usage": {"input_tokens": fresh, "cache_creation_input_tokens": made,
                                 "cache_read_input_tokens": read, "output_tokens": out,
                                 "service_tier": "standard"}},
           "requestId": rid, "type": "assistant", "uuid": uuid, "timestamp": ts}
    if not typed:
        del rec["type"]
    return rec


def write(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    return path


def by_hand(files: list[Path]) -> dict[str, dict[str, int]]:
    """Per session: the usage of every assistant line whose (message.id, requestId) was not seen before in the
    tree (files in sorted order), and every line without them -- ccusage's rule, written out."""
    seen: set[tuple[str, str]] = set()
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for file in sorted(files):
        for line in file.read_text().splitlines():
            rec = json.loads(line)
            msg = rec.get("message") or {}
            if rec.get("type", msg.get("role")) != "assistant" or "usage" not in msg:
                continue
            key = (msg.get("id"), rec.get("requestId"))
            if None not in key:
                if key in seen:
                    continue
                seen.add(key)
            u = msg["usage"]
            for k, col in (("input_tokens", "in"), ("output_tokens", "out"), ("cache_read_input_tokens", "read"),
                           ("cache_creation_input_tokens", "made")):
                out[rec["sessionId"]][col] += u.get(k, 0)
    return {k: dict(v) for k, v in out.items()}


def totals(runs: pl.DataFrame) -> dict[str, dict[str, int]]:
    return {r["run_id"]: {"in": r["usage_input_tokens"], "out": r["usage_output_tokens"],
                          "read": r["usage_cache_read_tokens"], "made": r["usage_cache_creation_tokens"]}
            for r in runs.iter_rows(named=True)}


def test_every_reply_counts_whichever_branch_and_once_across_the_tree(tmp_path: Path) -> None:
    """One session lost 40,733 cache-read tokens (a rewind) and another all of them (a trimmed file), with
    abandoned_branches 0 and no warning; a resumed session's copied lines would count twice. Now: the steps follow
    the live branch, the usage counts every reply, each once, and the run says how many lines were off it and
    why."""
    home = tmp_path / "projects" / "-home-dev-shop"
    first = write(home / f"{SID}.jsonl", [
        # a chain whose parent is gone (the file's earlier lines were trimmed)
        reply("t1", "gone-0", "msg_T1", "req_T1", (3, 40, 9000, 100)),
        # the session proper
        user("u1", None, "Fix the rounding bug in invoice.py."),
        reply("a1", "u1", "msg_A1", "req_A1", (5, 120, 12000, 800)),
        reply("a1b", "a1", "msg_A1", "req_A1", (5, 120, 12000, 800), text="(same reply, next block)"),
        user("u2", "a1b", "Run the tests."),
        reply("a2", "u2", "msg_A2", "req_A2", (2, 300, 15000, 400), model="claude-opus-4-1-20250805"),
        # rewound: a reply on a branch the session left
        user("u3x", "a1b", "Actually, rewrite the module."),
        reply("a3x", "u3x", "msg_A3X", "req_A3X", (4, 900, 14000, 1200)),
        # an older client's line without 'type'
        reply("a4", "a2", "msg_A4", "req_A4", (1, 50, 16000, 0), typed=False),
    ])
    second = write(home / f"{OTHER}.jsonl", [  # resumed: copies the first session's reply, then goes on
        {**reply("a2", "u2", "msg_A2", "req_A2", (2, 300, 15000, 400), model="claude-opus-4-1-20250805"),
         "sessionId": OTHER},
        user("v1", "a2", "Continue.", sid=OTHER),
        reply("b1", "v1", "msg_B1", "req_B1", (7, 60, 17000, 300), sid=OTHER),
    ])
    with pytest.warns(TranscriptWarning, match=r"1 line\(s\) without 'type'"):
        tables = read_claude_code(tmp_path / "projects")
    runs = tables["runs"].sort("run_id")
    assert totals(runs) == by_hand([first, second])
    mine = runs.filter(pl.col("run_id") == SID).row(0, named=True)
    assert mine["usage_cache_read_tokens"] == 9000 + 12000 + 15000 + 14000 + 16000  # every branch, a1 once
    assert mine["models"] == ["claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805"]
    assert mine["model"] == "claude-sonnet-4-5-20250929" and mine["usage_replies"] == 5
    assert mine["off_branch_lines"] == 3 and mine["off_branch_reason"] == "abandoned branch: 2; missing parent: 1"
    steps = tables["steps"].filter(pl.col("run_id") == SID)
    assert "Actually, rewrite the module." not in steps["observation"].to_list()  # the steps follow the live branch
    forked = steps.filter(pl.col("forks").fill_null(0) > 0)  # issue 45: where the rewound branch left (after a1b)
    assert forked["text"].to_list() == ["(same reply, next block)"] and forked["forks"].to_list() == [1]
    assert steps.filter(pl.col("text") == "ok")["model"].to_list()[:2] == ["claude-sonnet-4-5-20250929",
                                                                          "claude-opus-4-1-20250805"]
    other = runs.filter(pl.col("run_id") == OTHER).row(0, named=True)
    assert other["usage_cache_read_tokens"] == 17000  # the copied reply counted where it first appeared


def token_count(ts: str, total: tuple[int, int, int, int] | None, last: tuple[int, int, int, int] | None) -> dict:
    def usage(u: tuple[int, int, int, int]) -> dict[str, int]:
        i, cached, out, reasoning = u
        return {"input_tokens": i, "cached_input_tokens": cached, "output_tokens": out,
                "reasoning_output_tokens": reasoning, "total_tokens": i + out}
    info: dict[str, Any] = {}
    if total is not None:
        info["total_token_usage"] = usage(total)
    if last is not None:
        info["last_token_usage"] = usage(last)
    return {"timestamp": ts, "type": "event_msg", "payload": {"type": "token_count", "info": info or None,
                                                              "rate_limits": {"primary": {"used_percent": 3.0}}}}


def test_codex_usage_comes_from_token_count_events(tmp_path: Path) -> None:
    """A Codex session's usage is only in event_msg token_count records (per turn last_token_usage, cumulative
    total_token_usage); they were skipped and every Codex session had 0 tokens. The delta of an event is its
    last_token_usage, else its total less the previous total (ccusage's rule); info null (rate limits only) is
    nothing. Reasoning is kept apart; the model switch is kept."""
    rollout = tmp_path / "sessions" / "2026" / "11" / "02" / "rollout-2026-11-02T10-00-00-0199b.jsonl"
    lines = [
        {"timestamp": "2026-11-02T10:00:00.000Z", "type": "session_meta",
         "payload": {"id": "0199b000-aaaa-7bbb-8ccc-000000000001", "cwd": "/home/dev/shop", "cli_version": "0.58.0"}},
        {"timestamp": "2026-11-02T10:00:01.000Z", "type": "turn_context", "payload": {"model": "gpt-5-codex"}},
        {"timestamp": "2026-11-02T10:00:02.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix it."}]}},
        token_count("2026-11-02T10:00:03.000Z", None, None),  # rate limits only
        token_count("2026-11-02T10:00:04.000Z", (1200, 200, 500, 64), (1200, 200, 500, 64)),
        token_count("2026-11-02T10:00:05.000Z", (2000, 300, 800, 100), None),  # totals only: the difference
        {"timestamp": "2026-11-02T10:00:06.000Z", "type": "turn_context", "payload": {"model": "gpt-5"}},
        token_count("2026-11-02T10:00:07.000Z", (2600, 700, 850, 100), (600, 400, 50, 0)),
    ]
    write(rollout, lines)
    runs = read_codex(tmp_path / "sessions")["runs"]
    row = runs.row(0, named=True)
    # by hand: deltas (1200, 200, 500, 64), (800, 100, 300, 36), (600, 400, 50, 0); fresh input = input - cached
    # (ccusage 20.0.24 on this file: inputTokens 1900, cacheReadTokens 700, outputTokens 850, reasoning 100)
    assert (row["usage_input_tokens"], row["usage_cache_read_tokens"], row["usage_output_tokens"],
            row["usage_reasoning_tokens"]) == (2600 - 700, 700, 850, 100)
    assert row["usage_replies"] == 3 and row["models"] == ["gpt-5-codex", "gpt-5"] and row["model"] == "gpt-5-codex"
    assert "codex" in row["usage_definition"]


def test_a_home_holding_claude_and_codex_sessions_imports_both(tmp_path: Path) -> None:
    """A directory holding .claude/projects and .codex/sessions imported only the Claude sessions, silently."""
    from workbench.datasets import import_log

    home = tmp_path / "home"
    write(home / ".claude" / "projects" / "-home-dev-shop" / f"{SID}.jsonl",
          [user("u1", None, "Fix it."), reply("a1", "u1", "msg_A1", "req_A1", (5, 120, 12000, 800))])
    write(home / ".codex" / "sessions" / "2026" / "11" / "02" / "rollout-2026-11-02T10-00-00-0199b.jsonl", [
        {"timestamp": "2026-11-02T10:00:00.000Z", "type": "session_meta",
         "payload": {"id": "0199b000-aaaa-7bbb-8ccc-000000000001", "cwd": "/home/dev/shop"}},
        {"timestamp": "2026-11-02T10:00:02.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix it."}]}},
        token_count("2026-11-02T10:00:04.000Z", (1200, 200, 500, 64), (1200, 200, 500, 64))])
    out = tmp_path / "tables"
    counts = import_log(home, out)
    assert counts["runs"] == 2
    runs = pl.read_parquet(out / "runs.parquet").sort("method")
    assert runs["method"].to_list() == ["claude_code", "codex"]
    assert runs["usage_input_tokens"].to_list() == [5, 1200 - 200]
    # `workbench usage` counts both clients of the home too, on screen and in its table, as the import does
    import subprocess
    import sys

    from workbench.cli.main import main

    assert main(["usage", str(home), "--out", str(tmp_path / "u.csv")]) == 0
    table = pl.read_csv(tmp_path / "u.csv").sort("client")
    assert table["client"].to_list() == ["claude-code", "codex"]
    assert table["usage_input_tokens"].to_list() == runs["usage_input_tokens"].to_list()
    assert table["usage_cache_read_tokens"].to_list() == [12000, 200]
    # ... and, without --out, with no table library loaded when the home holds only Claude Code sessions (its
    # start was two thirds of its time on a small tree: 0.45 s beside ccusage's 0.2 s)
    code = ("import sys; from workbench.cli.main import main; main(['usage', sys.argv[1]]); "
            "print('polars loaded' if 'polars' in sys.modules else 'polars not loaded')")
    shown = subprocess.run([sys.executable, "-c", code, str(home / ".claude")], capture_output=True, text=True,
                           check=True).stdout
    assert "total (1 session)" in shown and f"{12000:,}" in shown and "polars not loaded" in shown


def test_session_cost_per_model_from_the_dated_table(tmp_path: Path) -> None:
    """Issue 44: cost per session and model from the shipped table, the cache-write tiers where the log says which;
    a model without a price is said, not guessed. Hand computation with Anthropic's list prices (USD per million:
    Sonnet 4.5 3 / 15, cache read 0.30, writes 3.75 (5 min) and 6 (1 h); Opus 4.1 15 / 75 / 1.50 / 18.75 / 30);
    ccusage 20.0.24 gives the same costs on claude-code-log's sessions (tools/ccusage_compare.py)."""
    from workbench.analyses import session_costs

    one_hour = reply("a2", "u1", "msg_A2", "req_A2", (10, 100, 1000, 400), model="claude-opus-4-1-20250805")
    one_hour["message"]["usage"]["cache_creation"] = {"ephemeral_5m_input_tokens": 100,
                                                      "ephemeral_1h_input_tokens": 300}
    write(tmp_path / "p" / "-x" / f"{SID}.jsonl", [
        user("u1", None, "Go."), reply("a1", "u1", "msg_A1", "req_A1", (5, 120, 12000, 800)), one_hour,
        reply("a3", "a2", "msg_A3", "req_A3", (1, 2, 3, 4), model="mystery-model-9")])
    costs = session_costs(read_claude_code(tmp_path / "p")["runs"]).sort("model")
    got = {r["model"]: r for r in costs.iter_rows(named=True)}
    sonnet = (5 * 3 + 120 * 15 + 12000 * 0.30 + 800 * 3.75) / 1e6
    opus = (10 * 15 + 100 * 75 + 1000 * 1.50 + 100 * 18.75 + 300 * 30) / 1e6
    assert got["claude-sonnet-4-5-20250929"]["cost_usd"] == pytest.approx(sonnet, rel=1e-12)
    assert got["claude-opus-4-1-20250805"]["cost_usd"] == pytest.approx(opus, rel=1e-12)
    assert got["claude-opus-4-1-20250805"]["cache_creation_1h"] == 300
    assert not got["mystery-model-9"]["price_known"] and got["mystery-model-9"]["cost_usd"] == 0.0
    assert "no price for 'mystery-model-9'" in got["mystery-model-9"]["reason"]


@pytest.mark.parametrize("processes", [False, True])
def test_the_fast_usage_pass_equals_the_count_by_hand_and_the_importer(tmp_path: Path, processes: bool,
                                                                      capsys: pytest.CaptureFixture[str],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 44: `workbench usage` (only the lines holding a usage key parsed; with ``processes`` the files
    scanned by two worker processes, as a tree over 64 MB is) gives per session what the count written here and
    the importer give, on the rewind / trimmed / resumed / untyped tree; its table prints per session. Lines that
    name "usage" without being a reply (a tool result quoting a log line, a sub-agent's usage in a tool's result)
    count nothing; a reply with a lone surrogate escape in its text counts."""
    from workbench.adapters import _usage_scan as usage_scan
    from workbench.adapters import session_usage
    from workbench.cli.main import main

    if processes:
        monkeypatch.setattr(usage_scan, "PARALLEL_BYTES", 0)
        monkeypatch.setattr(usage_scan.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)

    home = tmp_path / "projects" / "-home-dev-shop"
    first = write(home / f"{SID}.jsonl", [
        reply("t1", "gone-0", "msg_T1", "req_T1", (3, 40, 9000, 100)),
        user("u1", None, "Fix it."),
        reply("a1", "u1", "msg_A1", "req_A1", (5, 120, 12000, 800)),
        reply("a1b", "a1", "msg_A1", "req_A1", (5, 120, 12000, 800), text="(next block)"),
        user("u3x", "a1b", "Rewrite."), reply("a3x", "u3x", "msg_A3X", "req_A3X", (4, 900, 14000, 1200)),
        {**reply("n1", "a1b", "msg_N1", "req_N1", (1, 2, 3, 4)), "requestId": None},  # no request id: counted
        reply("a4", "a1b", "msg_A4", "req_A4", (1, 50, 16000, 0), typed=False),
        user("q1", "a4", json.dumps(reply("x", None, "msg_X", "req_X", (9, 9, 9, 9)))),  # a quoted reply line
        {**user("q2", "q1", "done"), "toolUseResult": {"usage": {"input_tokens": 7, "output_tokens": 7}}},
        reply("s1", "q2", "msg_S1", "req_S1", (2, 3, 4, 5), text="cut \ud83d here")])
    second = write(home / f"{OTHER}.jsonl", [
        {**reply("a1", "u1", "msg_A1", "req_A1", (5, 120, 12000, 800)), "sessionId": OTHER},
        user("v1", "a1", "Continue.", sid=OTHER), reply("b1", "v1", "msg_B1", "req_B1", (7, 60, 17000, 300), sid=OTHER)])
    got = session_usage(tmp_path / "projects")
    fast = {r["session_id"]: {"in": r["usage_input_tokens"], "out": r["usage_output_tokens"],
                              "read": r["usage_cache_read_tokens"], "made": r["usage_cache_creation_tokens"]}
            for r in got.iter_rows(named=True)}
    assert fast == by_hand([first, second])
    with pytest.warns(TranscriptWarning):
        runs = read_claude_code(tmp_path / "projects")["runs"]
    assert fast == totals(runs)
    assert got.filter(pl.col("session_id") == SID)["models"].to_list() == [["claude-sonnet-4-5-20250929"]]
    assert main(["usage", str(tmp_path / "projects")]) == 0
    out = capsys.readouterr().out
    assert "total (2 sessions)" in out and f"{sum(v['read'] for v in fast.values()):,}" in out
    inside = tmp_path / "projects" / "-home-dev-shop" / "usage.csv"  # an output inside the input: refused
    assert main(["usage", str(tmp_path / "projects"), "--out", str(inside)]) == 2 and not inside.exists()
    assert "is inside the input" in capsys.readouterr().err


def test_a_sub_agents_file_counts_in_its_sessions_row(tmp_path: Path) -> None:
    """Sub-agent transcripts under SESSION/subagents/ belong to the session's project directory (as the importer
    reads them): the fast pass named their project after the session and split the session in two rows."""
    from workbench.adapters import session_usage

    project = tmp_path / "projects" / "-home-dev-shop"
    write(project / f"{SID}.jsonl", [user("u1", None, "Fix it."),
                                     reply("a1", "u1", "msg_A1", "req_A1", (5, 120, 12000, 800))])
    write(project / SID / "subagents" / "agent-a7f3.jsonl", [
        {**reply("s1", None, "msg_S1", "req_S1", (2, 30, 500, 40)), "isSidechain": True, "agentId": "a7f3"}])
    got = session_usage(tmp_path / "projects")
    assert got.height == 1 and got.row(0, named=True)["project_dir"] == "-home-dev-shop"
    assert got.row(0, named=True)["usage_cache_read_tokens"] == 12000 + 500


def test_usage_csv_never_starts_a_formula(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 57 item 3: a session id or project directory starting with ``=``, ``+``, ``-`` or ``@`` went into
    ``workbench usage --out x.csv`` as it was, a formula to a spreadsheet. Text cells get a leading apostrophe
    (OWASP); the counts stay numbers; the Parquet output keeps the ids exactly."""
    import csv

    import polars as pl

    from workbench.cli.main import main

    sid = "=HYPERLINK(1)"
    write(tmp_path / "projects" / "@-home-dev" / "s.jsonl",
          [user("u1", None, "hi", sid=sid), reply("a1", "u1", "m1", "r1", (3, 4, 5, 6), sid=sid)])
    assert main(["usage", str(tmp_path / "projects"), "--out", str(tmp_path / "u.csv")]) == 0
    rows = list(csv.DictReader((tmp_path / "u.csv").read_text().splitlines()))
    assert [(r["session_id"], r["project_dir"]) for r in rows] == [("'" + sid, "'@-home-dev")]
    assert rows[0]["usage_input_tokens"] == "3"
    assert main(["usage", str(tmp_path / "projects"), "--out", str(tmp_path / "u.parquet")]) == 0
    assert pl.read_parquet(tmp_path / "u.parquet").select("session_id", "project_dir").row(0) == (sid, "@-home-dev")


@pytest.mark.parametrize("bad", [10**30, -5, 2.5])
def test_a_codex_count_out_of_range_is_a_located_error_of_its_line(tmp_path: Path, bad: object,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 57 item 15: a token_count of 10**30 was an internal error in import and usage, and one negative count
    refused the whole home naming 'row 1' and another field. The rollout's file and line, the field, what a count
    may be; exit 2, nothing written; the other rollout of the home is not blamed."""
    from workbench.cli.main import main

    home = tmp_path / "sessions" / "2026" / "11" / "02"
    meta = {"timestamp": "2026-11-02T10:00:00.000Z", "type": "session_meta", "payload": {"id": "s-good", "cwd": "/w"}}
    write(home / "rollout-a.jsonl", [meta, token_count("2026-11-02T10:00:01.000Z", None, (10, 0, 5, 0))])
    wrong = token_count("2026-11-02T10:00:02.000Z", None, (10, 0, 5, 0))
    wrong["payload"]["info"]["last_token_usage"]["output_tokens"] = bad
    bad_file = write(home / "rollout-b.jsonl", [{**meta, "payload": {"id": "s-bad", "cwd": "/w"}},
                                                 token_count("2026-11-02T10:00:01.000Z", None, (1, 0, 1, 0)), wrong])
    for argv in (["usage", str(tmp_path / "sessions")],
                 ["import", str(tmp_path / "sessions"), "--out", str(tmp_path / "out")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"{bad_file}:3: field 'payload.info.last_token_usage.output_tokens': expected a count of tokens" \
            in err, err
        assert "internal error" not in err and "row 1" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("field", ["input_tokens", "cache_creation"])
def test_a_claude_count_beyond_2_53_is_a_located_error_or_skipped(tmp_path: Path, field: str,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A reply's count of 2**62 + 1 was an internal error in usage (the sums' 64 bits overflowed) and in import
    (polars could not build the column). Now both name FILE:LINE, the field and what a count may be (Codex's rule:
    at most 2**53), exit 2 with nothing written; with --skip-invalid the line is skipped and counted, and the
    session's other reply is counted."""
    from workbench.cli.main import main

    good = reply("u1", None, "msg_1", "req_1", (10, 1, 0, 0))
    wrong = reply("u2", "u1", "msg_2", "req_2", (10, 1, 0, 0))
    where = "message.usage.input_tokens"
    if field == "input_tokens":
        wrong["message"]["usage"]["input_tokens"] = 2**62 + 1
    else:
        wrong["message"]["usage"]["cache_creation"] = {"ephemeral_1h_input_tokens": 2**62 + 1}
        where = "message.usage.cache_creation.ephemeral_1h_input_tokens"
    path = write(tmp_path / "projects" / "-home-dev-shop" / f"{SID}.jsonl", [good, wrong])
    for argv in (["usage", str(tmp_path / "projects")],
                 ["import", str(tmp_path / "projects"), "--out", str(tmp_path / "out")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"{path}:2: field '{where}': expected a count of tokens: a whole number from 0 to " \
               "9,007,199,254,740,992, got integer 4611686018427387905" in err, err
        assert "internal error" not in err
    assert not (tmp_path / "out").exists()
    assert main(["usage", str(tmp_path / "projects"), "--skip-invalid", "--json"]) == 0
    captured = capsys.readouterr()
    assert [(r["input"], r["replies"]) for r in json.loads(captured.out)] == [(10, 1)]
    assert f"{path}:2" in captured.err


def test_workers_hand_back_the_replies_and_skipped_lines_in_the_order_one_process_reads_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A usage pass's workers read runs of consecutive files, two workers taking them as they finish, and the
    parent sums each run as it comes back. Every reply (with its file index and line), and every line over the
    line bound skipped, still comes in the order one process reads them: on 40 files in about 30 runs, a reply
    copied into later files (the resume ccusage counts once) and long lines in several files. And the sessions'
    totals equal the one-process pass's."""
    from workbench._util.jsonl import BadLines
    from workbench.adapters import _usage_scan as usage_scan

    files = []
    for k in range(40):
        records = [reply(f"a{k}", None, f"msg_{k}", f"req_{k}", (k, 2 * k, 3, 4), sid=f"s{k % 7}")]
        if k % 9 == 4:
            records.append(reply(f"c{k}", f"a{k}", "msg_3", "req_3", (3, 6, 3, 4), sid=f"s{k % 7}"))  # a copy of 3's
        if k % 6 == 1:
            records.append(user(f"u{k}", f"a{k}", "x" * 3000, sid=f"s{k % 7}"))  # over the bound set below
        files.append(write(tmp_path / "projects" / f"-p{k % 3}" / f"f{k:02d}.jsonl", records))
    monkeypatch.setenv("WORKBENCH_MAX_LINE_BYTES", "2000")
    one, many = BadLines(skip_invalid=True), BadLines(skip_invalid=True)
    alone = usage_scan.tree_replies(files, workers=1, bad=one)
    monkeypatch.setattr(usage_scan, "PARALLEL_BYTES", 0)
    spread = usage_scan.tree_replies(files, workers=2, bad=many)
    assert spread == alone and len(alone) == 40 + 4
    assert many.skipped == one.skipped and len(one.skipped) == 7
    monkeypatch.setattr(usage_scan, "PARALLEL_BYTES", 1 << 60)
    by_one = usage_scan.claude_code_totals(files, BadLines(skip_invalid=True))
    monkeypatch.setattr(usage_scan, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(usage_scan.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert usage_scan.claude_code_totals(files, BadLines(skip_invalid=True)) == by_one


def test_a_replys_key_is_one_string_that_no_other_pair_gives() -> None:
    """Issue 62: the import remembers each reply it counted as one string, not a pair (half the memory), so two
    pairs must never give the same string: ("ab", "c") and ("a", "bc") joined plainly would."""
    from workbench.adapters._claude_lines import _reply_key

    pairs = [("ab", "c"), ("a", "bc"), ("", "abc"), ("abc", ""), ("1:a", "b"), ("1", ":ab"), ("msg_1", "req_1")]
    assert len({_reply_key(m, r) for m, r in pairs}) == len(pairs)
    assert _reply_key("msg_01", "req_9") == _reply_key("msg_01", "req_9")


@pytest.mark.parametrize("sizes", [[5] * 5, [20, 1, 1, 30], [], [1, 1, 1], [0, 0, 7, 0, 0, 9]])
def test_runs_cover_the_files_in_order_each_of_at_least_its_target(sizes: list[int]) -> None:
    """The runs a parallel usage scan hands its workers: consecutive, every file once, each run of at least the
    target bytes but the last, and none longer than it needs to be (its last file is what reached the target)."""
    from workbench.adapters._usage_scan import _cut

    target = 10
    runs = list(_cut(((i, size) for i, size in enumerate(sizes)), target))
    assert [i for run in runs for i in run] == list(range(len(sizes)))
    for run in runs[:-1]:
        assert sum(sizes[i] for i in run) >= target > sum(sizes[i] for i in run[:-1])


@pytest.mark.parametrize("parallel", [False, True])
def test_a_files_format_is_decided_where_its_replies_are_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              parallel: bool) -> None:
    """Issue 62: the usage pass lists a tree without opening its files for their formats; each file's format is
    decided in the process that reads its replies. The rule is the walk's: a file whose first line is a title
    (no ``sessionId``) is Claude Code's when a later record says so, a file of titles only is left out, and a Codex
    rollout in the same tree is counted as Codex's. Checked against a count by hand and the walk's own formats."""
    from workbench.adapters import _usage_scan as usage_scan
    from workbench.adapters import usage_rows
    from workbench.adapters._read import directory_formats

    title = {"type": "summary", "summary": "Fix the invoice export", "leafUuid": "a1"}
    root = tmp_path / "home"
    write(root / ".claude" / "projects" / "-p0" / "a.jsonl",
          [title, reply("a1", None, "msg_a", "req_a", (3, 5, 7, 11), sid="s-a"),
           reply("a2", "a1", "msg_b", "req_b", (1, 1, 1, 1), sid="s-a")])
    write(root / ".claude" / "projects" / "-p0" / "b.jsonl", [title, {**title, "summary": "Another title"}])
    write(root / ".claude" / "projects" / "-p1" / "c.jsonl", [reply("c1", None, "msg_c", "req_c", (2, 0, 0, 0),
                                                                    sid="s-c")])
    meta = {"timestamp": "2026-11-02T10:00:00.000Z", "type": "session_meta",
            "payload": {"id": "0199b000-aaaa-7bbb-8ccc-000000000009", "cwd": "/w", "cli_version": "0.58.0"}}
    write(root / ".codex" / "sessions" / "2026" / "11" / "02" / "rollout-x.jsonl",
          [meta, token_count("2026-11-02T10:00:04.000Z", (40, 10, 6, 0), (40, 10, 6, 0))])
    if parallel:
        monkeypatch.setattr(usage_scan, "PARALLEL_BYTES", 0)
        monkeypatch.setattr(usage_scan.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    rows = usage_rows(root)
    claude = [r for r in rows if r["client"] == "claude-code"]
    assert [(r["project_dir"], r["session_id"], r["usage_input_tokens"], r["usage_output_tokens"],
             r["usage_cache_read_tokens"], r["usage_cache_creation_tokens"], r["usage_replies"]) for r in claude] == [
        ("-p0", "s-a", 4, 6, 8, 12, 2), ("-p1", "s-c", 2, 0, 0, 0, 1)]
    walked = directory_formats(root)
    assert sorted(walked) == ["claude-code", "codex"] and len(walked["claude-code"]) == 2  # b.jsonl: no format
    assert claude == usage_scan.claude_code_totals(walked["claude-code"])
    assert [(r["client"], r["usage_input_tokens"] + r["usage_cache_read_tokens"]) for r in rows[2:]] == [("codex", 40)]


def test_a_run_whose_replies_were_counted_in_an_earlier_run_is_added_reply_by_reply(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The usage pass sums each run of files where it is read and adds the run whole when none of its replies was
    counted in an earlier run. Here later runs hold copies (a resume): a session whose first reply is a copy (it
    must be ordered by its first reply of its own), a session of copies only (no row), a part (day, model) of
    copies only (no part), and a keyless reply (counts every time). With a run of one or two files, the sums, the
    order of sessions and parts, and the hand count (ccusage's rule) all equal one process reading every file."""
    from workbench.adapters import _usage_scan as usage_scan

    day2 = "2026-11-03T09:00:00.000Z"
    files = [write(tmp_path / "projects" / "-p0" / "a.jsonl", [
                 reply("a1", None, "msg_1", "req_1", (1, 2, 3, 4), sid="s-a"),
                 reply("a2", "a1", "msg_2", "req_2", (5, 6, 7, 8), sid="s-a", model="claude-opus-4-1-20250805"),
                 reply("a3", "a2", "msg_3", "req_3", (9, 1, 1, 1), sid="s-a", ts=day2)]),
             write(tmp_path / "projects" / "-p0" / "b.jsonl", [
                 reply("b1", None, "msg_2", "req_2", (5, 6, 7, 8), sid="s-b", model="claude-opus-4-1-20250805"),
                 reply("b2", "b1", "msg_4", "req_4", (2, 2, 2, 2), sid="s-b")]),
             write(tmp_path / "projects" / "-p0" / "c.jsonl", [
                 reply("c1", None, "msg_1", "req_1", (1, 2, 3, 4), sid="s-c"),
                 reply("c2", "c1", "msg_3", "req_3", (9, 1, 1, 1), sid="s-c", ts=day2)]),
             write(tmp_path / "projects" / "-p1" / "d.jsonl", [
                 reply("d1", None, "msg_5", "req_5", (3, 3, 3, 3), sid="s-d"),
                 reply("d2", "d1", "msg_3", "req_3", (9, 1, 1, 1), sid="s-d", ts=day2),
                 {**reply("d3", "d2", "msg_6", "req_6", (4, 0, 0, 0), sid="s-d"), "requestId": None},
                 {**reply("d4", "d3", "msg_6", "req_6", (4, 0, 0, 0), sid="s-d"), "requestId": None}]),
             write(tmp_path / "projects" / "-p1" / "e.jsonl", [  # two sessions in one file, the first's copy first
                 reply("e1", None, "msg_1", "req_1", (1, 2, 3, 4), sid="s-e1"),
                 reply("e2", "e1", "msg_7", "req_7", (1, 1, 1, 1), sid="s-e2"),
                 reply("e3", "e2", "msg_8", "req_8", (2, 1, 1, 1), sid="s-e1")])]
    monkeypatch.setattr(usage_scan, "PARALLEL_BYTES", 1 << 60)
    alone = usage_scan.claude_code_totals(files)
    monkeypatch.setattr(usage_scan, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(usage_scan, "RUN_BYTES", sum(f.stat().st_size for f in files) // 4)  # one or two files a run
    monkeypatch.setattr(usage_scan.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    spread = usage_scan.claude_code_totals(files)
    assert spread == alone
    runs = list(usage_scan._cut(((f, f.stat().st_size) for f in files), sum(f.stat().st_size for f in files) // 4))
    assert len(runs) >= 3 and files[-1] not in runs[0]  # a.jsonl's run is not e.jsonl's
    assert [r["session_id"] for r in alone] == ["s-a", "s-b", "s-d", "s-e2", "s-e1"]  # s-c: copies only
    hand = by_hand(files)
    assert {r["session_id"]: {"in": r["usage_input_tokens"], "out": r["usage_output_tokens"],
                              "read": r["usage_cache_read_tokens"], "made": r["usage_cache_creation_tokens"]}
            for r in alone} == {k: v for k, v in hand.items() if k != "s-c"} and "s-c" not in hand
    assert [(p["day"], p["model"]) for p in alone[1]["parts"]] == [("2026-11-02", "claude-sonnet-4-5-20250929")]
    assert [(p["day"], p["replies"]) for p in alone[2]["parts"]] == [("2026-11-02", 3)]  # msg_3's copy: no part


def test_the_walk_gives_the_files_sorted_as_paths_sort_while_it_walks(tmp_path: Path) -> None:
    """Issue 62: the walk visits each directory's entries in name order and gives each file as it is found, so a
    reader can start before the walk ends. That order must be the order of the paths sorted part by part (pathlib's
    own sort, the reference here), with names that begin other names, directories beside files of the same stem,
    punctuation that sorts below the separator and a tree deeper than the recursion limit."""
    import sys

    from workbench.adapters._logfiles import tree_listing

    names = ["a", "a-b", "a.b", "ab", "a b", "A", "z", "a0", "a_"]
    made = []
    for top in names:
        for sub in ("", *names[:4]):
            where = tmp_path / "t" / top / sub if sub else tmp_path / "t" / top
            where.mkdir(parents=True, exist_ok=True)
            for leaf in ("x.jsonl", "a.jsonl", "a-.jsonl", "b.txt"):
                (where / leaf).write_text("{}\n")
                made.append(where / leaf)
        (tmp_path / "t" / f"{top}.jsonl").write_text("{}\n")
        made.append(tmp_path / "t" / f"{top}.jsonl")
    deep = tmp_path / "t" / "deep"
    deep.mkdir()
    here = deep
    for _ in range(sys.getrecursionlimit() + 50):  # one level at a time (pathlib's parents=True recurses)
        here = here / "d"
        here.mkdir()
    (here / "bottom.jsonl").write_text("{}\n")
    made.append(here / "bottom.jsonl")
    try:
        listed = [file for file, _size, _fmt in tree_listing(tmp_path / "t")]
    finally:  # removed bottom up: shutil.rmtree and pytest's own clean-up recurse, and this tree is too deep for them
        (here / "bottom.jsonl").unlink()
        while here != deep:
            here.rmdir()
            here = here.parent
    assert listed == sorted(f for f in made if f.suffix == ".jsonl")


@pytest.mark.parametrize("parallel", [False, True])
def test_a_file_the_usage_pass_cannot_open_is_named_or_skipped_and_counted_where_it_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parallel: bool) -> None:
    """The usage pass's walk no longer opens every file to check it can be read: the process that reads a file
    says when it cannot open it (here a file gone between the walk and the read), in the tree's order, as the walk
    said it: an error naming it, or with --skip-invalid counted, the other files' replies still summed."""
    from workbench._util.jsonl import BadLines
    from workbench.adapters import _usage_scan as usage_scan
    from workbench.errors import SchemaError

    files = [write(tmp_path / "p" / f"f{k}.jsonl", [reply(f"a{k}", None, f"msg_{k}", f"req_{k}", (k, 1, 1, 1),
                                                          sid=f"s{k}")]) for k in range(4)]
    gone = tmp_path / "p" / "f2.jsonl"
    listing = [(f, f.stat().st_size) for f in files]
    gone.unlink()
    if parallel:
        monkeypatch.setattr(usage_scan, "PARALLEL_BYTES", 0)
        monkeypatch.setattr(usage_scan, "RUN_BYTES", 1)
        monkeypatch.setattr(usage_scan.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    bad = BadLines(skip_invalid=True)
    rows = usage_scan._totals(listing, bad)
    assert [r["session_id"] for r in rows] == ["s0", "s1", "s3"]
    assert bad.unreadable == [(str(gone), "No such file or directory")]
    with pytest.raises(SchemaError) as err:
        usage_scan._totals(listing, BadLines())
    assert str(gone) in str(err.value) and "cannot be read (No such file or directory)" in str(err.value)


def test_the_codex_usage_pass_reads_a_rollout_as_the_importer_does(tmp_path: Path) -> None:
    """The usage pass reads rollouts in a loop of its own (issue 62: the Codex pass 0.40 -> 0.30 s at 1 GB). On
    one rollout with every case the rules know -- lines out of time order, a stamp with an offset and one that is
    no date, a token_count with only the cumulative total, an older key name, a float count, info null, a model
    switch, a line that is not a rollout line's shape -- its run is checked against values written here by hand,
    and its usage columns and span equal the importer's full read."""
    from workbench.adapters._codex import _rollout
    from workbench.errors import SchemaError

    legacy = token_count("2026-11-02T10:00:05.000Z", None, (7, 0, 1, 0))
    legacy["payload"]["info"]["last_token_usage"]["cache_read_input_tokens"] = 3
    del legacy["payload"]["info"]["last_token_usage"]["cached_input_tokens"]
    floated = token_count("2026-11-02T10:00:06.000Z", None, (4, 1, 2, 1))
    floated["payload"]["info"]["last_token_usage"]["input_tokens"] = 4.0
    lines = [
        {"timestamp": "2026-11-02T10:00:03.000Z", "type": "session_meta",
         "payload": {"id": "s-1", "cwd": "/w", "cli_version": "0.46.0", "git": {"branch": "main"}}},
        {"timestamp": "2026-11-02T10:00:02.000Z", "type": "turn_context", "payload": {"model": "gpt-5-codex"}},
        token_count("2026-11-02T10:00:04.000Z", (10, 4, 5, 2), None),  # only the total: the delta from 0
        token_count("2026-11-02T10:00:04.500Z", (15, 6, 8, 2), None),  # (5, 2, 3, 0)
        {"timestamp": "2026-11-02T09:59:59.000+00:00", "type": "turn_context", "payload": {"model": "gpt-5"}},
        legacy,  # (7, cached 3, 1, 0)
        {"timestamp": "not a date", "type": "event_msg", "payload": {"type": "token_count", "info": None}},
        floated,
        {"timestamp": "2026-11-02T10:00:09.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "assistant", "content": "done"}},
    ]
    path = write(tmp_path / "rollout-x.jsonl", lines)
    run, steps, comps, first = _rollout(path, usage_only=True)
    # fresh input = input - cached: (10-4) + (5-2) + (7-3) + (4-1); cached 4 + 2 + 3 + 1; output 5 + 3 + 1 + 2
    assert (run["usage_input_tokens"], run["usage_cache_read_tokens"], run["usage_output_tokens"],
            run["usage_reasoning_tokens"], run["usage_replies"]) == (16, 10, 11, 3, 4)
    assert run["usage_by_model"] == {
        "gpt-5-codex": {"input": 9, "cache_read": 6, "output": 8, "reasoning": 2, "cache_creation_5m": 0,
                        "cache_creation_1h": 0, "replies": 2},
        "gpt-5": {"input": 7, "cache_read": 4, "output": 3, "reasoning": 1, "cache_creation_5m": 0,
                  "cache_creation_1h": 0, "replies": 2}}
    # 09:59:59+00:00 is the earliest instant; "not a date" sorts after every date (widen_span's rule)
    assert (run["started_at"], run["ended_at"]) == ("2026-11-02T09:59:59.000+00:00", "not a date")
    assert (run["run_id"], run["project"], run["client_version"], run["git_branch"], run["model"], run["models"]) \
        == ("s-1", "/w", "0.46.0", "main", "gpt-5-codex", ["gpt-5-codex", "gpt-5"])
    assert (steps, comps, first) == ([], [], 1)
    full, *_ = _rollout(path)
    same = ("run_id", "started_at", "ended_at", "models", "usage_replies", "usage_input_tokens",
            "usage_cache_read_tokens", "usage_output_tokens", "usage_reasoning_tokens", "project", "model")
    assert {k: run[k] for k in same} == {k: full[k] for k in same}
    assert json.loads(full["usage_by_model"]) == run["usage_by_model"]

    # a stamp of the layout's length, not in UTC: 09:00:00Z, the earliest instant, though the latest as text
    shifted = [{"timestamp": ts, "type": "event_msg", "payload": {"type": "agent_message"}}
               for ts in ("2026-11-02T10:00:01.000Z", "2026-11-02T10:00:02.000Z", "2026-11-02T18:00:00+0900",
                          "2026-11-02T10:00:03.000Z")]
    run, *_ = _rollout(write(tmp_path / "rollout-y.jsonl", shifted), usage_only=True)
    assert (run["started_at"], run["ended_at"]) == ("2026-11-02T18:00:00+0900", "2026-11-02T10:00:03.000Z")

    write(path, lines[:3] + [{"timestamp": "2026-11-02T10:00:07.000Z", "type": "event_msg", "payload": "x"}])
    with pytest.raises(SchemaError, match=rf"{path}:4: expected a rollout line"):
        _rollout(path, usage_only=True)


def _rollout_lines(sid: str, counts: tuple[int, int, int, int]) -> list[dict]:
    return [{"timestamp": "2026-11-02T10:00:00.000Z", "type": "session_meta", "payload": {"id": sid, "cwd": "/w"}},
            {"timestamp": "2026-11-02T10:00:01.000Z", "type": "turn_context", "payload": {"model": "gpt-5-codex"}},
            token_count("2026-11-02T10:00:02.000Z", None, counts)]


def test_a_codex_directory_is_decided_by_its_first_rollout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 62: the usage pass decided every file's format from its own head, opening each rollout twice. A
    directory's rollouts now take its first rollout's format: on a day of five rollouts one head is read to decide
    (counted), and the rows are those written here by hand."""
    from workbench.adapters import _logfiles
    from workbench.adapters._usage import usage_rows

    day = tmp_path / "sessions" / "2026" / "11" / "02"
    for k in range(5):
        write(day / f"rollout-2026-11-02T10-00-0{k}-{k}.jsonl", _rollout_lines(f"s{k}", (10 * k + 10, k, 5, 1)))
    decided = []
    real = _logfiles._decided_format
    monkeypatch.setattr(_logfiles, "_decided_format", lambda head, file: decided.append(file) or real(head, file))
    rows = usage_rows(tmp_path / "sessions")
    assert [Path(f).name for f in decided] == ["rollout-2026-11-02T10-00-00-0.jsonl"]
    # fresh input = input - cached
    assert [(r["session_id"], r["usage_input_tokens"], r["usage_cache_read_tokens"]) for r in rows] == \
        [("s0", 10, 0), ("s1", 19, 1), ("s2", 28, 2), ("s3", 37, 3), ("s4", 46, 4)]


def test_a_rollout_named_file_that_is_not_a_rollout_is_decided_on_its_own(tmp_path: Path) -> None:
    """Where a directory's files disagree, the per-file rule decides: a Claude Code transcript named like a rollout
    among Codex rollouts is counted as Claude Code's, a rollout-named file of one unfinished line is left out (the
    rows, warning and counts of the code that decided each file alone); an invalid line skipped elsewhere is
    counted once, not once a pass."""
    from workbench._util.jsonl import BadLines
    from workbench.adapters._usage import usage_rows

    day = tmp_path / "sessions" / "2026" / "11" / "02"
    first = write(day / "rollout-a.jsonl", _rollout_lines("s-a", (10, 4, 5, 1)))
    with first.open("a") as fh:
        fh.write("not json\n")  # read (and skipped) before rollout-b is found out
    write(day / "rollout-b.jsonl", [user("u1", None, "hi"), reply("r1", "u1", "msg_1", "req_1", (3, 4, 5, 6))])
    (day / "rollout-c.jsonl").write_text('{"timestamp": "2026-11-02T10:00:00.000Z", "type": "sess')
    write(day / "rollout-d.jsonl", _rollout_lines("s-d", (7, 0, 1, 0)))
    write(tmp_path / "sessions" / "2026" / "11" / "03" / "rollout-e.jsonl", _rollout_lines("s-e", (2, 0, 1, 0)))
    bad = BadLines(skip_invalid=True)
    with pytest.warns(Warning, match="rollout-c.jsonl:1"):
        rows = usage_rows(tmp_path / "sessions", bad)
    assert [(r["client"], r["session_id"], r["usage_input_tokens"]) for r in rows] == \
        [("claude-code", SID, 3), ("codex", "s-a", 6), ("codex", "s-d", 7), ("codex", "s-e", 2)]
    assert [(Path(f).name, n) for f, n, _ in bad.skipped] == [("rollout-a.jsonl", 4)]
    assert bad.truncated == []  # (rollout-c says no format: left out with the warning, as a file decided alone)


def test_a_pass_made_again_gives_its_sink_the_rows_of_the_second_pass_only(tmp_path: Path) -> None:
    """Issue 82: where a rollout-named file proves not to be a rollout, the usage pass is made again with each file
    decided alone. The sink (the view ``workbench usage`` makes while the files are read) was given the first
    pass's Claude Code rows; it is cleared, so it holds each session once: the view of the rows returned."""
    from workbench.adapters._usage import usage_rows
    from workbench.analyses import usage_view
    from workbench.analyses._pricing import UsageView

    day = tmp_path / "sessions" / "2026" / "11" / "02"
    write(day / "rollout-a.jsonl", _rollout_lines("s-a", (10, 4, 5, 1)))
    write(day / "rollout-b.jsonl", [user("u1", None, "hi"), reply("r1", "u1", "msg_1", "req_1", (3, 4, 5, 6))])
    write(tmp_path / "sessions" / "zz" / "c.jsonl", [reply("z1", None, "msg_9", "req_9", (9, 9, 9, 9), sid="s-z")])
    view = UsageView("session")
    rows = usage_rows(tmp_path / "sessions", sink=view)
    assert [(r["client"], r["session_id"]) for r in rows] == [("claude-code", SID), ("claude-code", "s-z"),
                                                               ("codex", "s-a")]
    assert view.result() == usage_view(rows, "session")


def test_a_worker_sums_each_line_by_the_reply_rules(tmp_path: Path) -> None:
    """Issue 62: a worker of the usage pass sums each line as it parses it, the reply rules written out once more
    for speed. On one file holding every case the rules know, its sums are checked against counts written here
    by hand: a line without a type whose message is an assistant's (an older client) counts; a user line with a
    usage object does not, nor a reply without a session id; a count that is true, negative or fractional is 0;
    a 1-hour cache write larger than the whole write is cut to it; a reply on three lines counts once; a reply
    without a request id counts each time."""
    from workbench.adapters._usage_scan import _run_sums

    old = reply("a1", None, "msg_1", "req_1", (10, 1, 0, 0))
    del old["type"]
    as_user = {**reply("a2", None, "msg_2", "req_2", (1000, 0, 0, 0)), "type": "user"}
    no_sid = reply("a3", None, "msg_3", "req_3", (1000, 0, 0, 0))
    del no_sid["sessionId"]
    odd = reply("a4", None, "msg_4", "req_4", (5, 2, 0, 40))
    odd["message"]["usage"].update(input_tokens=True, output_tokens=-3, cache_read_input_tokens=2.5)
    odd["message"]["usage"]["cache_creation"] = {"ephemeral_1h_input_tokens": 99}
    split = [reply(f"a5{k}", None, "msg_5", "req_5", (7, 1, 0, 0)) for k in range(3)]
    no_request = [reply(f"a6{k}", None, "msg_6", "", (2, 0, 0, 0)) for k in range(2)]
    for line in no_request:
        del line["requestId"]
    path = write(tmp_path / "projects" / "-home-dev" / f"{SID}.jsonl",
                 [user("u1", None, "hi"), old, as_user, no_sid, odd, *split, *no_request])
    run = _run_sums([(str(path), 0)])
    assert run.parts == [("-home-dev", SID, "2026-11-02", "claude-sonnet-4-5-20250929", False)]  # no costUSD
    # input 10 + 0 + 7 + 2 + 2; output 1 + 0 + 1; cache read 0; writes: 40 of which 1 h 40 (99 cut to 40); replies 5;
    # no kind above 200,000 tokens in a reply; no cost logged
    assert list(run.sums) == [21, 2, 0, 0, 40, 5, 0, 0, 0, 0, 0, 0]
    assert run.keys == ["5:msg_1req_1", "5:msg_4req_4", "5:msg_5req_5", None, None]


class _Sink:
    """A sink of the usage pass's rows that records what it was handed and how many runs had been taken then."""

    def __init__(self, runs: list[int]) -> None:
        self.runs, self.rows, self.calls = runs, [], []

    def add(self, rows: list[dict]) -> None:
        self.rows.extend(rows)
        self.calls.append(("add", len(rows), self.runs[0]))

    def clear(self) -> None:
        self.rows = []
        self.calls.append(("clear", 0, self.runs[0]))


def _counting_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of runs the usage pass has taken so far (``[n]``), read one file a run by two workers."""
    from workbench.adapters import _usage_scan as usage_scan

    taken = [0]
    in_order = usage_scan._in_order

    def counted(*args: Any, **kwargs: Any) -> Any:
        for run in in_order(*args, **kwargs):
            taken[0] += 1
            yield run

    monkeypatch.setattr(usage_scan, "_in_order", counted)
    monkeypatch.setattr(usage_scan, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(usage_scan, "RUN_BYTES", 1)  # a file a run
    monkeypatch.setattr(usage_scan.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    return taken


def test_the_rows_are_handed_on_as_each_project_directory_ends(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 82: ``workbench usage`` makes the sessions' rows and the view while the workers still read. A session's
    rows go to the sink once a run ends in a later project directory: here after the third and fourth of five runs
    (-p0's two sessions, then -p1's), and -p2's at the end. The rows handed on are the rows returned, in the same
    order, and equal to those of one process reading every file; the totals are the hand count's."""
    from workbench.adapters import _usage_scan as usage_scan
    from workbench.adapters import usage_rows

    files = [write(tmp_path / "projects" / "-p0" / "a.jsonl", [reply("a1", None, "m1", "r1", (1, 2, 3, 4), sid="s-a")]),
             write(tmp_path / "projects" / "-p0" / "b.jsonl", [reply("b1", None, "m2", "r2", (5, 6, 7, 8), sid="s-b"),
                                                               reply("b2", "b1", "m1", "r1", (1, 2, 3, 4), sid="s-b")]),
             write(tmp_path / "projects" / "-p1" / "c.jsonl", [reply("c1", None, "m3", "r3", (2, 2, 2, 2), sid="s-c")]),
             write(tmp_path / "projects" / "-p2" / "d.jsonl", [reply("d1", None, "m4", "r4", (3, 3, 3, 3), sid="s-d")]),
             write(tmp_path / "projects" / "-p2" / "e.jsonl", [reply("e1", None, "m5", "r5", (4, 4, 4, 4), sid="s-a")])]
    monkeypatch.setattr(usage_scan, "PARALLEL_BYTES", 1 << 60)
    alone = usage_rows(tmp_path / "projects")
    taken = _counting_runs(monkeypatch)
    sink = _Sink(taken)
    rows = usage_rows(tmp_path / "projects", sink=sink)
    assert taken == [5] and sink.calls == [("add", 2, 3), ("add", 1, 4), ("add", 2, 5), ("add", 0, 5)]  # 0: Codex
    assert sink.rows == rows == alone
    assert [(r["project_dir"], r["session_id"]) for r in rows] == [("-p0", "s-a"), ("-p0", "s-b"), ("-p1", "s-c"),
                                                                   ("-p2", "s-d"), ("-p2", "s-a")]
    hand = by_hand(files)  # (by session id: s-a's two rows are one there)
    assert sum(r["usage_input_tokens"] for r in rows if r["session_id"] == "s-a") == hand["s-a"]["in"] == 5
    assert [r["usage_output_tokens"] for r in rows[1:4]] == [hand[s]["out"] for s in ("s-b", "s-c", "s-d")]


def test_a_project_directory_that_comes_back_makes_every_row_again(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 82: a project directory's name can come back later in a tree (two homes under one directory). A
    session handed on (its parts let go) that then gets more replies has its parts made again from its row, its
    logged cost to the billionth, and the pass clears its sink and hands it every row at the end: the rows, and
    each view of them, are those of one process reading every file without a sink."""
    from workbench.adapters import _usage_scan as usage_scan
    from workbench.adapters import usage_rows
    from workbench.analyses import usage_view
    from workbench.analyses._pricing import UsageView

    root = tmp_path / "homes"
    files = [write(root / "one" / "-p0" / "a.jsonl", [  # a logged cost, in dollars in the row: summed in billionths
                 {**reply("a1", None, "m1", "r1", (1, 2, 3, 4), sid="s-a"), "costUSD": 0.1}]),
             write(root / "one" / "-p1" / "b.jsonl", [reply("b1", None, "m2", "r2", (5, 6, 7, 8), sid="s-b")]),
             write(root / "two" / "-p0" / "c.jsonl", [  # s-a's project directory again, replies of its own
                 reply("c1", None, "m3", "r3", (2, 2, 2, 2), sid="s-a", ts="2026-11-03T09:00:00.000Z",
                       model="claude-opus-4-1-20250805"),
                 {**reply("c2", None, "m5", "r5", (0, 0, 0, 0), sid="s-a"), "costUSD": 0.2}]),
             write(root / "two" / "-p2" / "d.jsonl", [reply("d1", None, "m4", "r4", (3, 3, 3, 3), sid="s-d")])]
    monkeypatch.setattr(usage_scan, "PARALLEL_BYTES", 1 << 60)
    alone = usage_rows(root)
    taken = _counting_runs(monkeypatch)
    sink = _Sink(taken)
    rows = usage_rows(root, sink=sink)
    assert sink.calls[:2] == [("add", 1, 2), ("clear", 0, 4)] and sink.calls[2][:2] == ("add", 3)
    assert sink.rows == rows == alone
    assert [(r["session_id"], r["usage_input_tokens"], len(r["parts"])) for r in rows] == [
        ("s-a", 3, 2), ("s-b", 5, 1), ("s-d", 3, 1)]  # by hand: 1 + 2 + 0, two (day, model) parts
    assert [p["cost_logged"] for p in rows[0]["parts"]] == [0.3, None]  # 300,000,000 billionths, not 0.1 + 0.2
    assert by_hand(files)["s-a"]["in"] == 3
    views = {by: UsageView(by) for by in ("session", "day", "model", "project")}

    class Each:  # one pass, every grouping's view
        def add(self, rows: list[dict]) -> None:
            for view in views.values():
                view.add(rows)

        def clear(self) -> None:
            for view in views.values():
                view.clear()

    usage_rows(root, sink=Each())
    assert all(view.result() == usage_view(alone, by) for by, view in views.items())


def test_a_part_cost_with_a_memo_is_the_part_cost_without(tmp_path: Path) -> None:
    """Issue 62: the usage view keeps each model's price in a memo across its parts. By hand, with Anthropic's list
    prices for Sonnet 4.5 (USD per million: 3 / 15, cache read 0.30, writes 3.75 and 6): the same cost with and
    without the memo, the dated name priced by its family, an unknown model None (never 0), no tokens 0."""
    from workbench.analyses._pricing import part_cost

    counts = {"input": 5, "output": 120, "cache_read": 12000, "cache_creation_5m": 800, "cache_creation_1h": 100}
    want = (5 * 3 + 120 * 15 + 12000 * 0.30 + 800 * 3.75 + 100 * 6) / 1e6
    memo: dict = {}
    for _ in range(2):
        assert part_cost("claude-sonnet-4-5-20250929", counts, memo=memo) == pytest.approx(want, rel=1e-12)
        assert part_cost("mystery-model-9", counts, memo=memo) is None
    assert part_cost("claude-sonnet-4-5-20250929", counts) == pytest.approx(want, rel=1e-12)
    assert set(memo) == {"claude-sonnet-4-5-20250929", "mystery-model-9"} and memo["mystery-model-9"] is None
    assert part_cost("mystery-model-9", dict.fromkeys(counts, 0), memo=memo) == 0.0


def test_an_empty_session_file_in_a_tree_is_left_out_not_a_refusal(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Claude Code leaves empty session files. One of them made ``workbench usage`` and ``import`` refuse the whole
    home ("expected at least one JSON line, got an empty file"), even with ``--skip-invalid``, where ccusage counts
    the rest. An empty file in a tree (or one of blank lines) holds no session and is left out, from a home, a
    projects directory and a sessions directory alike; the counts are the hand count of the other files. A file
    named alone that is empty is still an error naming it."""
    from workbench.cli.main import main

    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    kept = write(projects / "-home-dev-shop" / f"{SID}.jsonl",
                 [user("u1", None, "Fix it."), reply("a1", "u1", "msg_A1", "req_A1", (5, 120, 12000, 800))])
    (projects / "-home-dev-shop" / f"{OTHER}.jsonl").write_bytes(b"")
    (projects / "-home-dev-shop" / "blank.jsonl").write_bytes(b"\n  \n")  # blank lines only: no session either
    day = home / ".codex" / "sessions" / "2026" / "11" / "02"
    write(day / "rollout-a.jsonl", _rollout_lines("s-a", (10, 4, 5, 1)))
    (day / "rollout-b.jsonl").write_bytes(b"")
    (day / "rollout-c.jsonl").write_bytes(b"\n")
    want = by_hand([kept])[SID]
    for where in (home, projects):
        assert main(["usage", str(where), "--out", str(tmp_path / "u.csv")]) == 0, capsys.readouterr().err
        table = pl.read_csv(tmp_path / "u.csv").sort("client")
        assert table.filter(pl.col("client") == "claude-code").select(
            "session_id", "usage_input_tokens", "usage_output_tokens", "usage_cache_read_tokens").row(0) == \
            (SID, want["in"], want["out"], want["read"])
        assert table["client"].to_list() == (["claude-code", "codex"] if where == home else ["claude-code"])
    for where, runs in ((home, 2), (projects, 1), (home / ".codex" / "sessions", 1)):
        out = tmp_path / f"tables-{where.name}"
        assert main(["import", str(where), "--out", str(out)]) == 0, capsys.readouterr().err
        assert pl.read_parquet(out / "runs.parquet").height == runs
    assert main(["usage", str(projects / "-home-dev-shop" / f"{OTHER}.jsonl")]) == 2
    assert f"{OTHER}.jsonl:1: expected at least one JSON line, got an empty file" in capsys.readouterr().err


_ODD = st.one_of(st.none(), st.booleans(), st.integers(-3, 2**64 + 3), st.sampled_from([2**53, 2**53 + 1, 2**63, 7]),
                 st.floats(allow_nan=False, allow_infinity=False, width=32), st.text("ab", max_size=2),
                 st.lists(st.integers(0, 2), max_size=2), st.dictionaries(st.text("e", max_size=1), st.integers(0, 3),
                                                                          max_size=1))


#: the fields of a line a count reads; a line has at most one of them of another JSON type (``_line``), so that
#: each field's odd values reach the decoder on a line that is otherwise a plain reply
_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
           "cache_creation", "ephemeral_1h_input_tokens", "speed", "id", "role", "model", "usage", "type",
           "sessionId", "requestId", "timestamp", "message", "costUSD")


@st.composite
def _line(draw: st.DrawFn) -> bytes:
    """A transcript line holding ``"usage"``: a plain reply, or one whose field ``odd`` (one of ``_FIELDS``, half the
    time) is a value of any JSON type; at times with a field of bytes that are not UTF-8, or not JSON at all."""
    odd = draw(st.sampled_from(_FIELDS)) if draw(st.booleans()) else None

    def value(field: str, usual: st.SearchStrategy[Any]) -> Any:
        return draw(_ODD if field == odd else usual)

    usage = {k: value(k, st.integers(0, 300_000)) for k in ("input_tokens", "output_tokens",
             "cache_read_input_tokens", "cache_creation_input_tokens") if draw(st.booleans()) or k == "input_tokens"}
    if draw(st.integers(0, 19)) == 0:
        usage["input_tokens"] = 2**53 + 1  # one more than a count may be: the line is an error
    if draw(st.booleans()):
        usage["cache_creation"] = value("cache_creation", st.fixed_dictionaries(
            {"ephemeral_1h_input_tokens": st.just(value("ephemeral_1h_input_tokens", st.integers(0, 300_000)))}))
    if draw(st.booleans()):
        usage["speed"] = value("speed", st.sampled_from(["fast", "standard"]))
    message = {"id": value("id", st.sampled_from(["m1", "m2", "m3"])), "role": value("role", st.just("assistant")),
               "model": value("model", st.sampled_from(["claude-a", "claude-b"])),
               "usage": value("usage", st.just(usage))}
    rec = {"type": value("type", st.sampled_from(["assistant", "assistant", "user"])),
           "sessionId": value("sessionId", st.sampled_from(["s1", "s2"])),
           "requestId": value("requestId", st.sampled_from(["r1", "r2"])),
           "timestamp": value("timestamp", st.sampled_from(["2026-11-02T10:00:01.000Z", "2026-11-03T23:59:59Z",
                                                            "2026-11-03T10:00:00+05:00", "2026-02-30T10:00:00Z"])),
           "message": value("message", st.just(message))}
    if draw(st.booleans()):
        rec["costUSD"] = value("costUSD", st.floats(0, 5, allow_nan=False))
    for key in [k for k in rec if draw(st.integers(0, 9)) == 0]:
        del rec[key]
    damage = draw(st.integers(0, 11))
    if (damage in (0, 1) or odd not in (None, "id", "requestId")) and type(rec.get("requestId")) is str:
        # a key of its own: counted unless what is odd or damaged keeps it out (ids from small sets mostly repeat
        # an earlier line's key, which would hide a line counted that should not be)
        rec["requestId"] = f"r-own-{draw(st.integers(0, 10**6))}"
    raw = json.dumps(rec, separators=(",", ":")).encode()
    if damage == 0:  # a field the decoder passes over, its bytes not UTF-8
        raw = raw[:-1] + b',"text":"\xff\xfe"}'
    elif damage == 1:  # a lone surrogate escape, which only Python's json reads
        raw = raw[:-1] + b',"text":"\\ud800"}'
    elif damage == 2:  # not JSON
        raw = raw[: len(raw) // 2] + b'"usage"'
    return raw + b"\n"


@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lines=st.lists(_line(), min_size=1, max_size=12))
def test_the_decoded_fields_count_every_line_as_the_whole_line_rules_do(tmp_path: Path, lines: list[bytes]) -> None:
    """A worker decodes a line into the few fields a count reads (msgspec) and reads a line of other types whole;
    on random lines (any field of any JSON type, big and negative counts, bytes that are not UTF-8 in a field the
    decoder passes over, a lone surrogate, a line that is not JSON) its sums per session, day and model are those
    of the rules the importer keeps (``_parse`` and ``_reply``: each line read whole), each key once; where a count
    beyond 2**53 stops those rules, the worker's error names the same line."""
    _assert_counted_as_whole_lines(tmp_path, lines)


def _assert_counted_as_whole_lines(tmp_path: Path, lines: list[bytes]) -> None:
    """A worker's sums of ``lines`` (one file) per session, day and model are those of the importer's rules
    (``_parse`` and ``_reply``: each line read whole), each key once; where a count beyond 2**53 stops those rules,
    the worker's error names the same line."""
    from workbench.adapters._usage_scan import _N, _parse, _reply, _run_sums
    from workbench.errors import SchemaError

    path = tmp_path / "projects" / "-p" / "s.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines))
    want: dict[tuple[Any, ...], list[int]] = defaultdict(lambda: [0] * 5)
    seen: set[tuple[str, str]] = set()
    for number, raw in enumerate(lines, start=1):
        try:
            r = _reply(_parse(raw), 0, number)
        except SchemaError:  # a count beyond MAX_COUNT: the first such line is the worker's error
            with pytest.raises(SchemaError) as err:
                _run_sums([(str(path), 0)])
            assert (err.value.file, err.value.line) == (str(path), number)
            return
        if r is None:
            continue
        _, _, sid, request, message, model, fresh, output, read, made, hour, day = r
        if request is not None and message is not None:
            if (message, request) in seen:
                continue
            seen.add((message, request))
        rec = _parse(raw)
        if model is not None and rec["message"]["usage"].get("speed") == "fast":
            model += "-fast"
        for j, v in enumerate((fresh, output, read, made, 1)):
            want[(sid, day, model)][j] += v
    run = _run_sums([(str(path), 0)])
    got: dict[tuple[Any, ...], list[int]] = defaultdict(lambda: [0] * 5)
    for k, (_project, sid, day, model, _logged) in enumerate(run.parts):
        counts = run.sums[_N * k:_N * k + 6]
        for j, v in enumerate((counts[0], counts[1], counts[2], counts[3] + counts[4], counts[5])):
            got[(sid, day, model)][j] += v
    assert dict(got) == dict(want)


#: where each field of ``_FIELDS`` is in a reply line
_AT = {**{k: ("message", "usage") for k in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                                             "cache_creation_input_tokens", "cache_creation", "speed")},
       "ephemeral_1h_input_tokens": ("message", "usage", "cache_creation"),
       **{k: ("message",) for k in ("id", "role", "model", "usage")}}


def test_each_field_of_another_type_is_counted_as_the_whole_line_rules_count_it(tmp_path: Path) -> None:
    """The decoder's types one by one: a plain reply with each field of ``_FIELDS`` in turn set to each value of
    another type (null, booleans, a negative, a whole float, 2**53, text, a list, an object, an empty string),
    each line with a key of its own, beside plain replies and the damaged ones (bytes that are not UTF-8 in a field
    the decoder passes over, a lone surrogate escape, a line cut short): counted as the importer's rules count
    them."""
    import copy

    plain = {"type": "assistant", "sessionId": "s1", "requestId": "r", "timestamp": "2026-11-02T10:00:01.000Z",
             "costUSD": 0.5, "message": {"id": "m1", "role": "assistant", "model": "claude-a", "usage": {
                 "input_tokens": 5, "output_tokens": 7, "cache_read_input_tokens": 11,
                 "cache_creation_input_tokens": 13, "speed": "fast",
                 "cache_creation": {"ephemeral_1h_input_tokens": 3}}}}
    lines: list[bytes] = []

    def add(rec: dict[str, Any]) -> None:
        if type(rec.get("requestId")) is str:
            rec["requestId"] = f"r{len(lines)}"
        lines.append(json.dumps(rec, separators=(",", ":")).encode() + b"\n")

    for field in _FIELDS:
        for odd in (None, True, False, -1, 5.0, 2**53, "7", [3], {"e": 1}, ""):
            rec = copy.deepcopy(plain)
            where = rec
            for key in _AT.get(field, ()):
                where = where[key]
            where[field] = odd
            add(rec)
    add(copy.deepcopy(plain))
    for damage in (b',"text":"\xff\xfe"}', b',"text":"\\ud800"}'):
        add(copy.deepcopy(plain))
        lines[-1] = lines[-1][:-2] + damage + b"\n"
    add(copy.deepcopy(plain))
    lines[-1] = lines[-1][:40] + b'"usage"\n'
    _assert_counted_as_whole_lines(tmp_path, lines)


def test_usage_json_goes_to_a_text_only_stream_as_to_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    """``--json`` writes orjson's bytes to stdout's buffer; a notebook's stdout has none (text only): the same
    text goes to it."""
    import io

    from workbench.cli.main import main

    home = write(tmp_path / "projects" / "-home-dev-shop" / f"{SID}.jsonl",
                 [user("u1", None, "hé"), reply("a1", "u1", "msg_1", "req_1", (10, 1, 0, 0))]).parent.parent
    assert main(["usage", str(home), "--json"]) == 0
    through_buffer = capsysbinary.readouterr().out
    text = io.StringIO()
    monkeypatch.setattr("sys.stdout", text)
    assert main(["usage", str(home), "--json"]) == 0
    assert text.getvalue().encode("utf-8") == through_buffer
    assert [(r["session_id"], r["input"]) for r in json.loads(through_buffer)] == [(SID, 10)]
