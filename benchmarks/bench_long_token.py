"""One long token in a summary entry and in a tool output: the cost of import, judge and explore against its
length (issue 39 item 8: one 32 KB token of letters cost 22 s in the lexical judge, 128 KB over 300 s, as the
identifier pattern re-scanned the token from every position).

For each length L (and each kind of token: letters only, base64, words joined by hyphens), a trajectory log of
one run with one compaction: the summary's Decisions entry holds the token, one tool output holds it too. Each
stage runs as the user runs it, in this process, and is timed:
  import   ``workbench import`` (entries derived)       judge    ``workbench judge`` (lexical, BM25 evidence)
  explore  ``workbench explore`` (its pages)
The reference, measured in the same run: the same pipeline on a log whose entry and output hold ordinary text of
the same length (words of 3 to 9 letters). The ratio printed is time(token) / time(ordinary text); linear cost
keeps it near a constant as L doubles, quadratic cost doubles it.
Run from the project root: .venv/bin/python benchmarks/bench_long_token.py
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import random
import string
import tempfile
import time
from pathlib import Path

from workbench.cli.main import main as cli

LENGTHS = (16_000, 32_000, 64_000, 128_000, 2_000_000)


def token(kind: str, n: int, rng: random.Random) -> str:
    if kind == "letters":
        return "".join(rng.choice(string.ascii_letters) for _ in range(n))
    if kind == "base64":
        return base64.b64encode(rng.randbytes(n * 3 // 4)).decode()[:n]
    if kind == "hyphens":
        return "-".join("".join(rng.choice(string.ascii_lowercase) for _ in range(4)) for _ in range(n // 5))[:n]
    words, size = [], 0  # ordinary text: the reference
    while size < n:
        words.append("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9))))
        size += len(words[-1]) + 1
    return " ".join(words)[:n]


def log(blob: str) -> dict:
    summary = f"## Decisions\n- Paid INV-104 after reading {blob} from the export.\n\n## Open TODOs\n- File the report.\n"
    return {"run_id": "r0", "task_id": "t", "scenario_id": "s", "method": "m", "task": "Settle invoices.",
            "steps": [{"step": 0, "action": {"tool": "read_export", "args": {}}, "observation": f"export: {blob}"},
                      {"step": 1, "action": {"tool": "pay", "args": {"id": "INV-104"}}, "observation": "paid INV-104"},
                      {"step": 2, "action": {"tool": "report", "args": {}}, "observation": "filed"}],
            "compactions": [{"boundary": 0, "step": 2, "span": [0, 1], "candidate_summary": summary,
                             "committed_summary": summary}]}


def pipeline(blob: str, where: Path) -> dict[str, float]:
    src = where / "log.jsonl"
    src.write_text(json.dumps(log(blob)) + "\n", encoding="utf-8")
    took = {}
    for stage, argv in (("import", ["import", str(src), "--out", str(where / "d")]),
                        ("judge", ["judge", str(where / "d"), "--out", str(where / "scores.parquet")]),
                        ("explore", ["explore", str(where / "d"), "--out", str(where / "site")])):
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = cli(argv)
        took[stage] = time.perf_counter() - started
        assert code == 0, (stage, code)
    return took


def main() -> None:
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:  # warm up: imports, the tokenizer's tables
        pipeline(token("text", 1000, rng), Path(tmp))
    print(f"{'kind':8} {'L':>7} " + " ".join(f"{s:>16}" for s in ("import", "judge", "explore", "total")))
    for n in LENGTHS:
        with tempfile.TemporaryDirectory() as tmp:
            ref = pipeline(token("text", n, rng), Path(tmp))
        for kind in ("letters", "base64", "hyphens"):
            with tempfile.TemporaryDirectory() as tmp:
                got = pipeline(token(kind, n, rng), Path(tmp))
            cells = [f"{got[s]:6.2f}s ({got[s] / ref[s]:4.1f}x)" for s in ("import", "judge", "explore")]
            total, ref_total = sum(got.values()), sum(ref.values())
            print(f"{kind:8} {n:>7} " + " ".join(f"{c:>16}" for c in cells) + f" {total:6.2f}s ({total / ref_total:4.1f}x)",
                  flush=True)


if __name__ == "__main__":
    main()
