"""Build a large home of coding-agent sessions (``.claude/projects`` and ``.codex/sessions``) from the committed
example sessions, for the usage and import benchmarks (issue 62).

Every copy of a session has each of its ids remapped (``uuid``, ``parentUuid``, ``leafUuid``, ``sessionId``,
``requestId``, message and tool-use ids, ``agentId``; a rollout's ``payload.id`` and ``call_id``), so parent chains
and reply keys stay consistent within a copy and no two copies share a reply: every copy counts. Two shapes:

* ``small`` (many small files, as a home of short sessions): each Claude Code file one copy, its long strings
  (the fixture's 250 KB tool result) cut to a length drawn per copy (exp(N(log 2500, 1.2)), at most the original),
  spread over 64 project directories; one Codex rollout per 24 Claude files, in ``YYYY/MM/DD`` directories;
* ``large`` (few large files): each Claude Code file the concatenation of copies up to a size drawn uniform in
  5-50 MB (one session id a file), the long strings kept.

Deterministic for a seed. Run: ``.venv/bin/python benchmarks/build_home.py OUT --megabytes 200 [--shape small]``;
it prints the files and bytes it wrote.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CLAUDE = ROOT / "workbench" / "datasets" / "example_logs" / "claude-code" / "session.jsonl"
CODEX = next((ROOT / "workbench" / "datasets" / "example_logs" / "codex").glob("rollout-*.jsonl"))
IDS = {"uuid", "parentUuid", "leafUuid", "requestId", "agentId", "tool_use_id", "call_id"}


def remap(value: Any, suffix: str, cut: int | None, session: str | None) -> Any:
    """``value`` with every id given ``suffix`` (``sessionId`` set to ``session``), message and tool ids (an ``id``
    under a dict with ``type`` or ``role``) too, and strings longer than ``cut`` (and than 2,000 characters: the
    texts, never an id or a timestamp) cut to it."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k == "sessionId" and session is not None:
                out[k] = session
            elif isinstance(v, str) and (k in IDS or k == "id"):
                out[k] = f"{v}-{suffix}"
            else:
                out[k] = remap(v, suffix, cut, session)
        return out
    if isinstance(value, list):
        return [remap(v, suffix, cut, session) for v in value]
    if isinstance(value, str) and cut is not None and len(value) > max(cut, 2000):
        return value[:cut]  # a long text (a tool result), never an id or a timestamp
    return value


def claude_copy(lines: list[Any], suffix: str, cut: int | None, session: str) -> str:
    """One copy of the session as Claude Code writes it (compact JSON, one record a line; ccusage reads no other);
    a reply with usage and no ``message.id`` / ``requestId`` (the fixture has none) gets both, as real ones do."""
    out = []
    for rec in lines:
        rec = remap(rec, suffix, cut, session)
        message = rec.get("message")
        if isinstance(message, dict) and "usage" in message and "id" not in message:
            message["id"] = f"msg_{rec['uuid']}"
            rec["requestId"] = f"req_{rec['uuid']}"
        out.append(json.dumps(rec, separators=(",", ":")) + "\n")
    return "".join(out)


def codex_copy(lines: list[Any], suffix: str, rng: random.Random) -> list[Any]:
    """One copy of the rollout, ids remapped, with a ``token_count`` event after each call and assistant message
    (what each turn spent, as Codex writes it: ``last_token_usage`` and the running ``total_token_usage``; the
    fixture has none); the fixture's orphan call output (its warning per file would be timed) left out."""
    total = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0, "reasoning_output_tokens": 0,
             "total_tokens": 0}
    out = []
    for rec in lines:
        rec = remap(rec, suffix, None, None)
        p = rec.get("payload", {})
        if p.get("type") == "function_call_output" and str(p.get("call_id", "")).startswith("call_ZZ"):
            continue
        out.append(rec)
        if rec.get("type") == "response_item" and (p.get("type") == "function_call" or p.get("role") == "assistant"):
            fresh, cached, output = rng.randint(200, 4000), rng.randint(0, 20000), rng.randint(20, 800)
            last = {"input_tokens": fresh + cached, "cached_input_tokens": cached, "output_tokens": output,
                    "reasoning_output_tokens": output // 4, "total_tokens": fresh + cached + output}
            total = {k: total[k] + last[k] for k in total}
            out.append({"timestamp": rec["timestamp"], "type": "event_msg",
                        "payload": {"type": "token_count", "info": {"total_token_usage": dict(total),
                                                                     "last_token_usage": last,
                                                                     "model_context_window": 272000}}})
    return out


def build(out: Path, megabytes: float, shape: str, seed: int) -> tuple[int, int, int]:
    rng = random.Random(seed)
    claude = [json.loads(line) for line in CLAUDE.read_text(encoding="utf-8").splitlines() if line.strip()]
    codex = [json.loads(line) for line in CODEX.read_text(encoding="utf-8").splitlines() if line.strip()]
    target = megabytes * 1e6
    written = n_claude = n_codex = 0
    projects = out / ".claude" / "projects"
    while written < target:
        session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        project = projects / f"-home-dev-project{n_claude % 64:02d}"
        project.mkdir(parents=True, exist_ok=True)
        if shape == "small":
            cut = min(250_000, int(math.exp(rng.gauss(math.log(2500), 1.2))))
            text = claude_copy(claude, f"c{n_claude}", cut, session)
        else:
            size, parts, k = rng.uniform(5e6, 50e6), [], 0
            while sum(map(len, parts)) < size:
                parts.append(claude_copy(claude, f"c{n_claude}x{k}", None, session))
                k += 1
            text = "".join(parts)
        (project / f"{session}.jsonl").write_text(text, encoding="utf-8")
        written += len(text.encode("utf-8"))
        n_claude += 1
        if shape == "small" and n_claude % 24 == 0:
            rid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
            day = out / ".codex" / "sessions" / "2026" / "11" / f"{1 + n_codex % 28:02d}"
            day.mkdir(parents=True, exist_ok=True)
            text = "".join(json.dumps(rec, separators=(",", ":")).replace("0199aa11-2222-7333-8444-555566667777", rid)
                           + "\n" for rec in codex_copy(codex, f"x{n_codex}", rng))
            (day / f"rollout-2026-11-{1 + n_codex % 28:02d}T09-00-00-{rid}.jsonl").write_text(text, encoding="utf-8")
            written += len(text.encode("utf-8"))
            n_codex += 1
    return n_claude, n_codex, written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--megabytes", type=float, default=200)
    parser.add_argument("--shape", choices=("small", "large"), default="small")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.out.exists() and any(args.out.iterdir()):
        raise SystemExit(f"{args.out}: not empty; the home is built into an empty or new directory")
    claude, codex, size = build(args.out, args.megabytes, args.shape, args.seed)
    print(f"{args.out}: {claude} Claude Code files, {codex} Codex rollouts, {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
