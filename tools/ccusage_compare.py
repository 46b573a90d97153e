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


def workbench(projects: Path, client: str) -> dict[str, dict[str, int]]:
    """The workbench's usage per session (a session's runs summed: sub-agents roll up into it)."""
    from workbench.adapters import read_claude_code
    from workbench.adapters import read_codex
    from workbench.analyses import session_costs

    runs = (read_claude_code if client == "claude" else read_codex)(projects)["runs"]
    costs = session_costs(runs).group_by("run_id").agg(__import__("polars").col("cost_usd").sum())
    cost_of = dict(costs.iter_rows())
    out: dict[str, dict[str, Any]] = defaultdict(lambda: {**dict.fromkeys(COLUMNS, 0), COST: 0.0})
    for r in runs.iter_rows(named=True):  # a session under two project directories is PROJECT_DIR/SESSION
        session = str(r.get("parent_run_id") or r["run_id"]).rsplit("/", 1)[-1]
        row = out[session]
        for col in COLUMNS:
            row[col] += int(r.get(f"usage_{col}_tokens") or 0)
        row[COST] += float(cost_of.get(r["run_id"], 0.0))
    return dict(out)


def ccusage(exe: str, client: str, env: dict[str, str]) -> dict[str, dict[str, int]]:
    done = subprocess.run([exe, client, "session", "--json", "--offline"], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=300, check=True)
    report = json.loads(done.stdout)
    out: dict[str, dict[str, Any]] = defaultdict(lambda: {**dict.fromkeys(COLUMNS, 0), COST: 0.0})
    for s in report.get("sessions", []):
        row = out[str(s.get("sessionId")).rsplit("/", 1)[-1]]
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
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="ccusage-compare-"))
    bad = 0
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
