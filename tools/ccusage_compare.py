"""Per-session token totals of the workbench beside ccusage's, on the same Claude Code and Codex files.

ccusage (npm) is what people run to see what a session spent. It is not a dependency: install it in a scratch
directory (``npm install ccusage@20.0.24``: 20.0.26 ships no linux-x64 binary) and pass its executable::

    .venv/bin/python tools/ccusage_compare.py --ccusage /tmp/ccu/node_modules/.bin/ccusage \\
        --lines /tmp/claude_code_log-1.7.0/dev-docs/messages/claude-code   # claude-code-log's captured lines
    .venv/bin/python tools/ccusage_compare.py --ccusage ... --home ~/.claude   # or a real home (read only)

``--lines DIR`` builds a home in a scratch directory from loose transcript lines (every ``*.jsonl`` below DIR,
grouped by ``sessionId`` into ``projects/<cwd>/<sessionId>.jsonl``, in time order, written as compact JSON, as
Claude Code writes them: ccusage skips a line written with spaces after the colons). ``--codex DIR`` adds a
directory of Codex rollouts. For every session it prints ccusage's input, output, cache-read and cache-creation
tokens (``ccusage claude session --json --offline``; Codex: ``ccusage codex session --json --offline``), the
workbench's (``read_claude_code`` / ``read_codex``: the runs of a session summed, sub-agents included), an
independent count (unique message id + request id, first appearance, written here), and the differences.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

COLUMNS = ("input", "output", "cache_read", "cache_creation")
COST = "cost_usd"


def build_home(lines: Path, home: Path) -> int:
    """Loose transcript lines below ``lines`` as a Claude Code home under ``home``; returns the sessions."""
    by_session: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for file in sorted(lines.rglob("*.jsonl")):
        for text in file.read_text(encoding="utf-8").splitlines():
            if not text.strip():
                continue
            rec = json.loads(text)
            sid = rec.get("sessionId")
            if isinstance(sid, str):
                project = "-" + str(rec.get("cwd") or "unknown").strip("/").replace("/", "-")
                by_session[(project, sid)].append(rec)
    for (project, sid), records in by_session.items():
        records.sort(key=lambda r: str(r.get("timestamp") or ""))
        out = home / "projects" / project / f"{sid}.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in records),
                       encoding="utf-8")
    return len(by_session)


def _reply(n: int, sid: str, cwd: str, stamp: str, model: str, usage: dict[str, Any], **extra: Any) -> dict[str, Any]:
    base = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    return {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid,
            "version": "2.0.31", "type": "assistant", "uuid": f"probe-{n}", "timestamp": stamp,
            "requestId": f"req_probe{n:04d}", **extra,
            "message": {"id": f"msg_probe{n:04d}", "type": "message", "role": "assistant", "model": model,
                        "content": [{"type": "text", "text": "ok"}], "usage": {**base, **usage}}}


def _token_count(stamp: str, last: tuple[int, int, int, int]) -> dict[str, Any]:
    keys = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")
    usage = dict(zip(keys, last, strict=True))
    usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    return {"timestamp": stamp, "type": "event_msg",
            "payload": {"type": "token_count", "info": {"last_token_usage": usage}}}


def probe_home(home: Path) -> None:
    """A home of what ccusage's cost rules turn on (``--probe``): replies with a logged ``costUSD``, fast mode
    (priced 6x, 2x and 1x by model), a reply above the 200k-token tier, 5-minute and 1-hour cache writes, a model
    only older price lists carry (``claude-3-sonnet-20240229``), an unknown model beside priced ones in one
    session, day and project, two projects over two UTC days; and Codex rollouts whose turns switch model
    (``gpt-5.2-codex`` -> ``gpt-5.3-codex``). ``home/.claude`` and ``home/.codex``."""
    sessions = {
        ("/home/dev/shop", "a1000000-0000-4000-8000-000000000001"): [
            ("2026-11-02T09:00:00.000Z", "claude-sonnet-4-5-20250929", {"input_tokens": 1200, "output_tokens": 800,
             "cache_read_input_tokens": 40_000, "cache_creation_input_tokens": 3000,
             "cache_creation": {"ephemeral_5m_input_tokens": 2000, "ephemeral_1h_input_tokens": 1000}}, {}),
            ("2026-11-02T09:01:00.000Z", "claude-sonnet-4-5-20250929", {"input_tokens": 900, "output_tokens": 300},
             {"costUSD": 0.0421}),
            ("2026-11-02T23:59:59.000Z", "claude-opus-4-6", {"input_tokens": 300, "output_tokens": 2000,
             "cache_read_input_tokens": 90_000, "speed": "fast"}, {}),
            ("2026-11-03T00:00:01.000Z", "claude-opus-4-6", {"input_tokens": 300, "output_tokens": 1000}, {}),
        ],
        ("/home/dev/shop", "a1000000-0000-4000-8000-000000000002"): [
            ("2026-11-03T10:00:00.000Z", "claude-sonnet-4-5-20250929", {"input_tokens": 12, "output_tokens": 4000,
             "cache_read_input_tokens": 260_000, "cache_creation_input_tokens": 210_000}, {}),
            ("2026-11-03T10:02:00.000Z", "claude-opus-4-8", {"input_tokens": 50, "output_tokens": 700,
             "speed": "fast"}, {}),
            ("2026-11-03T10:03:00.000Z", "claude-opus-4-20250514", {"input_tokens": 50, "output_tokens": 700,
             "speed": "fast"}, {}),
            ("2026-11-03T10:04:00.000Z", "claude-mystery-9", {"input_tokens": 5000, "output_tokens": 5000}, {}),
        ],
        ("/home/dev/notes", "b2000000-0000-4000-8000-000000000003"): [
            ("2026-11-02T12:00:00.000Z", "claude-3-sonnet-20240229", {"input_tokens": 4000, "output_tokens": 1500,
             "cache_read_input_tokens": 8000, "cache_creation_input_tokens": 2000}, {}),
            ("2026-11-02T12:05:00.000Z", "claude-haiku-4-5-20251001", {"input_tokens": 700, "output_tokens": 90,
             "cache_creation_input_tokens": 5000,
             "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 5000}}, {}),
            ("2026-11-02T12:06:00.000Z", "claude-mystery-9", {"input_tokens": 100, "output_tokens": 100},
             {"costUSD": 0.25}),
        ],
        ("/home/dev/notes", "b2000000-0000-4000-8000-000000000004"): [
            ("2026-11-03T08:00:00.000Z", "claude-mystery-9", {"input_tokens": 300, "output_tokens": 30}, {}),
        ],
    }
    n = 0
    for (cwd, sid), replies in sessions.items():
        lines = []
        for stamp, model, usage, extra in replies:
            n += 1
            lines.append(_reply(n, sid, cwd, stamp, model, usage, **extra))
        out = home / ".claude" / "projects" / cwd.replace("/", "-") / f"{sid}.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in lines), encoding="utf-8")
    rollouts = {
        "0199c000-aaaa-7bbb-8ccc-000000000005": ("2026-11-02T14:00:00.000Z", [
            ("gpt-5.2-codex", [(12_000, 8000, 900, 300), (15_000, 12_000, 1200, 500)]),
            ("gpt-5.3-codex", [(20_000, 16_000, 2000, 800)]),
        ]),
        "0199c000-aaaa-7bbb-8ccc-000000000006": ("2026-11-03T09:00:00.000Z", [
            ("gpt-5-codex", [(30_000, 20_000, 3000, 1000)]),
            ("gpt-5.2-codex", [(4000, 1000, 500, 0)]),
        ]),
    }
    for rid, (start, turns) in rollouts.items():
        day = start[:10].replace("-", "/")
        lines = [{"timestamp": start, "type": "session_meta",
                  "payload": {"id": rid, "cwd": "/home/dev/shop", "cli_version": "0.58.0"}}]
        second = 1
        for model, counts in turns:
            lines.append({"timestamp": f"{start[:17]}{second:02d}.000Z", "type": "turn_context",
                          "payload": {"model": model}})
            for c in counts:
                second += 1
                lines.append(_token_count(f"{start[:17]}{second:02d}.000Z", c))
            second += 1
        out = home / ".codex" / "sessions" / day / f"rollout-{start[:19].replace(':', '-')}-{rid}.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in lines), encoding="utf-8")


def by_hand(projects: Path) -> dict[str, dict[str, int]]:
    """Per session file: unique (message.id, requestId) replies, first appearance in file order; lines without
    both are counted each (ccusage's rule, written out)."""
    seen: set[tuple[str, str]] = set()
    out: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(COLUMNS, 0))
    for file in sorted(projects.rglob("*.jsonl")):
        for text in file.read_text(encoding="utf-8").splitlines():
            rec = json.loads(text) if text.strip() else {}
            msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
            if rec.get("type", msg.get("role")) != "assistant" or not isinstance(msg.get("usage"), dict):
                continue
            key = (msg.get("id"), rec.get("requestId"))
            if None not in key:
                if key in seen:
                    continue
                seen.add(key)
            u = msg["usage"]
            row = out[file.stem]
            for k, col in (("input_tokens", "input"), ("output_tokens", "output"),
                           ("cache_read_input_tokens", "cache_read"), ("cache_creation_input_tokens", "cache_creation")):
                row[col] += int(u.get(k) or 0)
    return dict(out)


def codex_ids(sessions: Path) -> dict[str, str]:
    """Rollout file stem -> the session id its session_meta names (the workbench's run id)."""
    out = {}
    for file in sessions.rglob("*.jsonl"):
        for text in file.read_text(encoding="utf-8").splitlines():
            rec = json.loads(text) if text.strip() else {}
            if rec.get("type") == "session_meta" and isinstance(rec.get("payload", {}).get("id"), str):
                out[file.stem] = rec["payload"]["id"]
                break
    return out


def workbench(projects: Path, client: str) -> dict[str, dict[str, Any]]:
    """The workbench's usage per session, tokens and cost, as ``workbench usage PATH --json`` prints them (a
    session's runs summed: sub-agents roll up into it; a cost with unpriced replies is that of the rest)."""
    done = subprocess.run([sys.executable, "-m", "workbench.cli.main", "usage", str(projects), "--json"],
                          capture_output=True, text=True, timeout=600, check=True, cwd=ROOT)
    out: dict[str, dict[str, Any]] = {}
    for r in json.loads(done.stdout):
        if r["client"] != ("claude-code" if client == "claude" else "codex"):
            continue
        out[str(r["session_id"])] = {"input": r["input"], "output": r["output"], "cache_read": r["cache_read"],
                                     "cache_creation": r["cache_write"], COST: r["cost_usd"] or 0.0}
    return out


def ccusage(exe: str, client: str, env: dict[str, str]) -> dict[str, dict[str, Any]]:
    """ccusage's sessions (``ccusage [codex] session --json --offline``): its Claude report lists them under
    ``session`` (the id as ``period``, the cost as ``totalCost``), its Codex report under ``sessions`` (the rollout's
    path as ``sessionId``, the cost as ``costUSD``)."""
    command = [exe, "session", "--json", "--offline"] if client == "claude" else \
        [exe, "codex", "session", "--json", "--offline"]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **env}, timeout=300,
                          check=True)
    report = json.loads(done.stdout)
    out: dict[str, dict[str, Any]] = defaultdict(lambda: {**dict.fromkeys(COLUMNS, 0), COST: 0.0})
    for s in report.get("session", report.get("sessions", [])):
        row = out[str(s.get("period") or s.get("sessionId")).rsplit("/", 1)[-1]]
        row[COST] += float(s.get("totalCost", s.get("costUSD")) or 0.0)
        for col, key in (("input", "inputTokens"), ("output", "outputTokens"), ("cache_creation", "cacheCreationTokens")):
            row[col] += int(s.get(key) or 0)
        row["cache_read"] += int(s.get("cacheReadTokens", s.get("cachedInputTokens")) or 0)
    return dict(out)


def table(title: str, theirs: dict[str, dict[str, int]], ours: dict[str, dict[str, int]],
          hand: dict[str, dict[str, int]] | None) -> int:
    print(f"\n{title}")
    print("| session | " + " | ".join(f"{c} (ccusage / workbench)" for c in (*COLUMNS, COST)) + " | differences |")
    print("| --- | " + " | ".join("---" for _ in (*COLUMNS, COST)) + " | --- |")
    bad = 0
    for sid in sorted(set(theirs) | set(ours)):
        a, b = theirs.get(sid, {}), ours.get(sid, {})
        diff: dict[str, Any] = {c: b.get(c, 0) - a.get(c, 0) for c in COLUMNS}
        if abs(b.get(COST, 0.0) - a.get(COST, 0.0)) > 1e-9:
            diff[COST] = round(b.get(COST, 0.0) - a.get(COST, 0.0), 9)
        if hand is not None and sid in hand and any(hand[sid][c] != b.get(c, 0) for c in COLUMNS):
            diff["vs hand count"] = 1
        bad += any(diff.values())
        print(f"| {sid[:13]} | " + " | ".join(f"{a.get(c, 0):,} / {b.get(c, 0):,}" for c in COLUMNS)
              + f" | {a.get(COST, 0.0):.6f} / {b.get(COST, 0.0):.6f}"
              + f" | {'0' if not any(diff.values()) else diff} |")
    return bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ccusage", required=True, help="the ccusage executable")
    parser.add_argument("--lines", help="loose Claude Code transcript lines (a directory of *.jsonl)")
    parser.add_argument("--home", help="a Claude Code home (~/.claude: its projects/ is read)")
    parser.add_argument("--codex", help="a directory of Codex rollouts (~/.codex/sessions)")
    parser.add_argument("--probe", help="write the probe home of ccusage's cost rules here (probe_home), with "
                                        "ccusage's two reports on it, and compare")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="ccusage-compare-"))
    bad = 0
    if args.probe:
        probe = Path(args.probe)
        probe_home(probe / "home")
        for client, env in (("claude", {"CLAUDE_CONFIG_DIR": str(probe / "home" / ".claude")}),
                            ("codex", {"CODEX_HOME": str(probe / "home" / ".codex")})):
            command = [args.ccusage, "session", "--json", "--offline"] if client == "claude" else \
                [args.ccusage, "codex", "session", "--json", "--offline"]
            done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **env}, timeout=300,
                                  check=True)
            (probe / f"ccusage-{client}.json").write_text(done.stdout, encoding="utf-8")
        args.home, args.codex = str(probe / "home" / ".claude"), str(probe / "home" / ".codex" / "sessions")
    try:
        if args.lines or args.home:
            home = scratch / "claude"
            if args.lines:
                print(f"{build_home(Path(args.lines), home)} sessions built from {args.lines}")
            else:
                shutil.copytree(Path(args.home) / "projects", home / "projects")
            theirs = ccusage(args.ccusage, "claude", {"CLAUDE_CONFIG_DIR": str(home)})
            bad += table("Claude Code (tokens)", theirs, workbench(home / "projects", "claude"),
                         by_hand(home / "projects"))
        if args.codex:
            codex_home = scratch / "codex"
            shutil.copytree(args.codex, codex_home / "sessions")
            ids = codex_ids(codex_home / "sessions")
            theirs = {ids.get(k, k): v for k, v in ccusage(args.ccusage, "codex", {"CODEX_HOME": str(codex_home)}).items()}
            bad += table("Codex (tokens; cache_read = cached input)", theirs,
                         workbench(codex_home / "sessions", "codex"), None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"\n{bad} session(s) differ")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
