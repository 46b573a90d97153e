"""A researcher's own Claude Code sessions, end to end, as the README tells it: import a ~/.claude/projects (one
session still being written), sample, judge, label in the terminal (two rounds), agree, and the notebooks that read
sessions with DATA pointing at the import. Each step exits 0 and says what it did."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from tests.adapters.test_import_sessions import claude_home

ROOT = Path(__file__).resolve().parents[1]


def workbench(*args: str, stdin: str | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([sys.executable, "-m", "workbench.cli", *args], input=stdin, capture_output=True,
                         text=True, cwd=cwd, timeout=600)
    assert out.returncode == 0, (args, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr, out.stderr
    return out


@pytest.mark.slow
def test_sessions_from_import_to_figures(tmp_path: Path) -> None:
    projects = claude_home(tmp_path)
    with (projects / "-home-u-api" / "s1.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"type": "user", "sessionId": "x", "message": {"content": "half')  # still being written
    cc = tmp_path / "cc"
    out = workbench("import", str(projects), "--out", str(cc))
    assert "skipped the last line" in out.stderr and "4 runs" in out.stdout

    sample = tmp_path / "val.jsonl"
    out = workbench("sample", str(cc), "--n", "10", "--out", str(sample))
    items = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines()]
    assert len(items) == 10 and "sampled 10 of 10" in out.stdout
    roles = pl.read_parquet(cc / "runs.parquet")  # the default draw: Claude Code's history and forward sections
    assert {i["section"] for i in items} <= {"Key Technical Concepts", "Errors and fixes", "Problem Solving",
                                             "Current Work", "Pending Tasks", "Optional Next Step"} and roles.height
    assert all(s.startswith(("step ", "retained turn")) and "(o" not in s for i in items
               for s in i["evidence_sources"])

    out = workbench("judge", str(cc), "--out", str(tmp_path / "scores.parquet"), "--tau", "0.5", "--quiet")
    assert "scores by lexical (0 without a usable answer)" in out.stdout

    store = tmp_path / "ann"
    for rnd, answers in (("1", ["1"] * 10), ("2", ["1", "2"] * 5)):
        out = workbench("label", str(sample), "--annotator", "alice", "--round", rnd, "--store", str(store),
                        stdin="\n".join([*answers, "q"]) + "\n")
        assert "10 label(s) written" in out.stdout
    out = workbench("agree", str(store), "--sample", str(sample), "--n-boot", "200")
    assert "alice: round 1 vs round 2: n=10" in out.stdout and "5 to adjudicate, 0 decided (5 new)" in out.stdout
    assert "intervals resample scenarios" in out.stdout  # a session is the scenario of its entries

    # the notebooks that read the sessions, and one that must skip (no run outcomes); every notebook runs on an
    # imported log in test_notebooks and on the testbed in the README's tour
    figs, build = tmp_path / "figs", tmp_path / "build"
    out = workbench("figures", "--param", f"DATA={cc}", "--param", f"FIGURES={figs}", "--build", str(build),
                    "--only", "agent_transcripts", "--only", "summary_composition", "--only", "reliability_efficiency")
    summary = out.stdout.strip().splitlines()
    assert summary[0].endswith(f"failed; executed copies in {build}/") and " 0 failed" in summary[0], out.stdout
    assert "skipped reliability_efficiency: reliability (Acc, Pass^k) and its tables needs run outcomes" in out.stdout
    assert (figs / "transcripts_entries_by_role.png").exists() and (figs / "sjc_table2_composition.png").exists()
