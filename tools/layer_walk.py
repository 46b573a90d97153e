"""Follow two users' paths through the workbench's code: which files they run, and how often they climb back up.

Path ``claude``: a Claude Code session line to a judge score (``workbench import workbench/datasets/example_logs/claude-code --out D
--entries``, then ``workbench judge D --judge lexical --out S``). Path ``labelled``: a labelled-summaries file to a
partial correlation (``workbench import`` of FRANK's compact copy, then the human-labels notebook's steps: load with
derived lexical scores, ``summary_scores``, ``summary_frame``, ``correlation_table`` on the test split).

Each path runs in a fresh interpreter under ``sys.setprofile``; every call from a function in one file of the
package to a function in another is recorded. Printed per path: the distinct files whose code runs, the distinct
(caller file, callee file) pairs, and the *returns to a higher layer*: the pairs (and the calls) whose callee lies
in a higher layer than its caller -- code reaching back up the layers, in the order ``.importlinter``
states (``LAYERS`` below reads it). A file of an older layout (before the package
layout of issue 58) is given the layer of the package its code moved to, so two layouts are counted alike.

Run from the project root, on this tree or on another checkout of the project (its code is run; the layer order
is this file's)::

    .venv/bin/python tools/layer_walk.py                 # this tree
    git worktree add /tmp/old c1757b0 && .venv/bin/python tools/layer_walk.py --tree /tmp/old
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]



def importlinter_layers(config: Path) -> list[tuple[str, ...]]:
    """The layers of the import-linter contract in ``config`` (``.importlinter``: the one statement of the layers),
    lowest first, each a tuple of package names."""
    import configparser

    parser = configparser.ConfigParser()
    parser.read(config, encoding="utf-8")
    lines = [line.strip() for line in parser["importlinter:contract:layers"]["layers"].splitlines() if line.strip()]
    return [tuple(part.strip().removeprefix("workbench.") for part in line.split("|")) for line in reversed(lines)]


#: the layers, lowest first, as ``.importlinter`` states them (``make lint`` checks them)
LAYERS = importlinter_layers(ROOT / ".importlinter")
LAYER = {name: i for i, names in enumerate(LAYERS) for name in names}

#: where each top-level module of the old layout (c1757b0) went
OLD_HOMES = {
    "atomic": "_util", "jsonl": "_util", "executors": "_util", "progress": "_util", "display": "_util",
    "long_tokens": "_util", "project": "_util", "schema": "tables", "validation": "tables", "vocabulary": "tables",
    "records": "tables", "tables": "tables", "frames": "tables", "labels": "tables", "logfiles": "adapters",
    "usage_scan": "adapters", "claude_sessions": "adapters", "summary": "summaries", "entries": "summaries",
    "identifiers": "summaries", "evidence": "summaries", "retrieval": "summaries", "sjc": "summaries",
    "bootstrap": "stats", "metrics": "stats", "compare": "stats", "calibration": "stats", "coverage_study": "stats",
    "composition": "analyses", "sensitivity": "analyses", "attribution": "analyses", "focus": "analyses",
    "trace": "analyses", "fifo_replay": "analyses", "human_labels": "analyses", "sessions": "analyses",
    "pricing": "analyses", "datasets": "datasets", "notebooks": "notebooks", "errors": "errors", "tokens": "tokens",
}

CLAUDE = """
from workbench.cli.main import main
assert main(["import", "workbench/datasets/example_logs/claude-code", "--out", OUT + "/claude", "--entries"]) == 0
assert main(["judge", OUT + "/claude", "--judge", "lexical", "--out", OUT + "/claude-scores.parquet"]) == 0
"""

LABELLED = """
from workbench.cli.main import main
assert main(["import", "data/benchmarks/frank", "--out", OUT + "/frank"]) == 0
try:  # the layout before issue 58 first: an editable install finds this tree's new packages for an old checkout
    from workbench.human_labels import correlation_table, summary_frame, summary_scores
except ImportError:
    from workbench.analyses import correlation_table, summary_frame, summary_scores
from workbench.datasets import load
tables = load(OUT + "/frank", derive=True)
frame = summary_frame(tables["runs"], summary_scores(tables["entries"], tables["scores"]), ["BertScore_P_Art"])
correlation_table(frame, ["BertScore_P_Art"], splits=("test",), datasets=[None])
"""

TRACER = """
import json, os, sys
PACKAGE = os.path.join(os.getcwd(), "workbench") + os.sep
calls = {}
def profile(frame, event, arg):
    if event == "call" and frame.f_back is not None:
        callee, caller = frame.f_code.co_filename, frame.f_back.f_code.co_filename
        if callee != caller and callee.startswith(PACKAGE) and caller.startswith(PACKAGE):
            key = caller[len(PACKAGE):] + " " + callee[len(PACKAGE):]
            calls[key] = calls.get(key, 0) + 1
OUT = sys.argv[1]
sys.setprofile(profile)
try:
    exec(compile(sys.argv[2], "<path>", "exec"))
finally:
    sys.setprofile(None)
    with open(sys.argv[3], "w") as fh:
        json.dump(calls, fh)
"""


def layer_of(rel: str) -> int:
    """The layer of a file (a path below ``workbench/``)."""
    first = rel.split(os.sep)[0].removesuffix(".py")
    if first in LAYER:
        return LAYER[first]
    if first in OLD_HOMES:
        return LAYER[OLD_HOMES[first]]
    if first == "__init__":
        return LAYER["errors"]  # the lazy top-level names: no layer of their own, counted as the lowest
    raise SystemExit(f"{rel}: no layer for it; add its package to LAYERS or OLD_HOMES")


def walk(tree: Path, code: str) -> dict[tuple[str, str], int]:
    """(caller file, callee file) -> how many calls a path makes from one to the other."""
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "visits.json"
        env = {**os.environ, "PYTHONPATH": str(tree), "WORKBENCH_NO_PROGRESS": "1"}
        done = subprocess.run([sys.executable, "-c", TRACER, tmp, code, str(record)], cwd=tree, env=env,
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"the path failed in {tree}:\n{done.stderr[-3000:]}")
        calls = json.loads(record.read_text())
    return {tuple(key.split(" ")): n for key, n in calls.items()}  # type: ignore[misc]


def summary(calls: dict[tuple[str, str], int]) -> dict[str, object]:
    """Distinct files, distinct caller-callee pairs, and the pairs (and calls) that go up a layer."""
    up = sorted(f"{a} -> {b}" for (a, b) in calls if layer_of(b) > layer_of(a))
    return {"files": len({f for pair in calls for f in pair}), "pairs": len(calls), "returns": len(up),
            "return_calls": sum(n for (a, b), n in calls.items() if layer_of(b) > layer_of(a)), "up": up}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, default=ROOT, help="a checkout of the project whose code is run")
    ap.add_argument("--json", action="store_true", help="print the numbers and each upward pair as JSON")
    args = ap.parse_args(argv)
    tree = args.tree.resolve()
    results = {}
    for name, code in (("claude", CLAUDE), ("labelled", LABELLED)):
        results[name] = summary(walk(tree, code))
    if args.json:
        print(json.dumps(results, indent=1))
        return
    print(f"{tree}")
    for name, r in results.items():
        print(f"  {name:<9} files {r['files']:>3}  caller-callee pairs {r['pairs']:>4}  returns to a higher layer "
              f"{r['returns']:>3} pairs ({r['return_calls']} calls)")
        for pair in r["up"]:  # type: ignore[attr-defined]
            print(f"      up: {pair}")


if __name__ == "__main__":
    main()
