"""Coding-agent sessions as they lie on a real disk: ~/.claude/projects with a session still being written,
bad lines skipped only when asked, and a directory's format sniffed from its files."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest

from workbench.cli.main import main

EXAMPLES = Path(__file__).resolve().parents[2] / "workbench" / "datasets" / "example_logs"


def claude_home(tmp_path: Path) -> Path:
    """A ~/.claude/projects with two projects, each holding the example session under its own id."""
    projects = tmp_path / ".claude" / "projects"
    text = (EXAMPLES / "claude-code" / "session.jsonl").read_text(encoding="utf-8")
    sid = next(line.split('"sessionId": "')[1].split('"')[0] for line in text.splitlines() if '"sessionId": "' in line)
    for i, project in enumerate(("-home-u-shop", "-home-u-api")):
        (projects / project).mkdir(parents=True)
        (projects / project / f"s{i}.jsonl").write_text(text.replace(sid, f"{sid}-{i}"), encoding="utf-8")
    return projects


def test_a_session_still_being_written_is_imported_without_its_half_line(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    projects = claude_home(tmp_path)
    complete = main(["import", str(projects), "--out", str(tmp_path / "whole")])
    assert complete == 0
    capsys.readouterr()
    open_session = projects / "-home-u-api" / "s1.jsonl"
    lines = open_session.read_text(encoding="utf-8").splitlines(keepends=True)
    with open_session.open("a", encoding="utf-8") as fh:
        fh.write('{"type": "assistant", "sessionId": "x", "message": {"content": [{"type": "te')  # no line end
    assert main(["import", str(projects), "--out", str(tmp_path / "open")]) == 0
    err = capsys.readouterr().err
    assert f"{open_session}:{len(lines) + 1}: skipped the last line" in err
    # every complete line of both sessions is there: the tables equal those of the closed sessions
    for name in ("runs", "steps", "compactions"):
        assert pl.read_parquet(tmp_path / "open" / f"{name}.parquet").equals(
            pl.read_parquet(tmp_path / "whole" / f"{name}.parquet")), name
    runs = pl.read_parquet(tmp_path / "open" / "runs.parquet")  # each example session has one sub-agent run
    assert runs.filter(pl.col("parent_run_id").is_null()).height == 2 and runs.height == 4


def test_a_bad_line_inside_a_session_is_still_an_error_unless_skip_invalid(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    projects = claude_home(tmp_path)
    session = projects / "-home-u-shop" / "s0.jsonl"
    lines = session.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(2, "{not json\n")
    lines.insert(4, '{"type": "user", "message": {"content": "no session id"}}\n')
    session.write_text("".join(lines), encoding="utf-8")
    assert main(["import", str(projects), "--out", str(tmp_path / "out")]) == 2
    assert f"{session}:3:" in capsys.readouterr().err and not (tmp_path / "out").exists()
    assert main(["import", str(projects), "--out", str(tmp_path / "out"), "--skip-invalid"]) == 0
    err = capsys.readouterr().err
    assert "skipped 2 invalid line(s) (--skip-invalid)" in err
    assert f"{session}:3: expected one JSON object per line" in err and f"{session}:5: field 'sessionId'" in err
    assert pl.read_parquet(tmp_path / "out" / "runs.parquet").filter(pl.col("parent_run_id").is_null()).height == 2


def test_a_directory_is_sniffed_as_claude_code_or_codex(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    projects = claude_home(tmp_path)
    assert main(["import", str(projects), "--out", str(tmp_path / "cc")]) == 0
    assert pl.read_parquet(tmp_path / "cc" / "runs.parquet").get_column("method").unique().to_list() == ["claude_code"]
    sessions = tmp_path / ".codex" / "sessions" / "2026" / "03" / "08"
    sessions.mkdir(parents=True)
    for f in (EXAMPLES / "codex").glob("*.jsonl"):
        shutil.copy(f, sessions / f.name)
    capsys.readouterr()
    assert main(["import", str(tmp_path / ".codex" / "sessions"), "--out", str(tmp_path / "cx")]) == 0
    assert pl.read_parquet(tmp_path / "cx" / "runs.parquet").get_column("method").unique().to_list() == ["codex"]
    other = tmp_path / "notes"
    other.mkdir()
    (other / "a.jsonl").write_text('{"hello": 1}\n', encoding="utf-8")
    assert main(["import", str(other), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "neither Claude Code's" in err and str(other / "a.jsonl") in err


def test_since_until_and_project_select_sessions_at_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    projects = claude_home(tmp_path)  # both sessions ran on 2026-11-20
    assert main(["import", str(projects), "--out", str(tmp_path / "a"), "--project", "api"]) == 0
    runs = pl.read_parquet(tmp_path / "a" / "runs.parquet")
    assert set(runs.get_column("project_dir").to_list()) == {"-home-u-api"}
    assert main(["import", str(projects), "--out", str(tmp_path / "b"), "--since", "2026-11-21"]) == 0
    assert pl.read_parquet(tmp_path / "b" / "runs.parquet").height == 0
    assert main(["import", str(projects), "--out", str(tmp_path / "c"), "--since", "2026-11-20",
                 "--until", "2026-11-21"]) == 0
    assert pl.read_parquet(tmp_path / "c" / "runs.parquet").height == 4
    capsys.readouterr()
    assert main(["import", str(projects), "--out", str(tmp_path / "d"), "--since", "last tuesday"]) == 2
    assert "option --since: expected an ISO date" in capsys.readouterr().err


def test_sample_on_sessions_refuses_what_they_lack_and_says_what_there_is(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    projects = claude_home(tmp_path)
    assert main(["import", str(projects), "--out", str(tmp_path / "cc")]) == 0
    capsys.readouterr()
    assert main(["sample", str(tmp_path / "cc"), "--budget", "48", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "option --budget: expected a budget the runs have: none, got 48" in capsys.readouterr().err
    assert main(["sample", str(tmp_path / "cc"), "--sections", "Decisions", "--out", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "no entries to sample with sections ['Decisions']" in err and "claude_code: sections [" in err
    assert "'Pending Tasks'" in err and "(choose with --sections or --roles)" in err
    assert main(["sample", str(tmp_path / "cc"), "--roles", "forward", "--n", "4", "--out",
                 str(tmp_path / "f.jsonl")]) == 0
    import json

    items = [json.loads(x) for x in (tmp_path / "f.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {i["section"] for i in items} <= {"Pending Tasks", "Optional Next Step"} and len(items) == 4
    assert not (tmp_path / "x.jsonl").exists()


def test_a_lone_surrogate_escape_is_replaced_with_a_warning_not_an_internal_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 39 item 3: a ``\\ud83d`` in a tool output (JavaScript cutting text inside an emoji) ended import and
    validate in "internal error ... this is a bug", --skip-invalid or not. It becomes U+FFFD, with a warning
    naming FILE:LINE, and every other line imports as before."""
    import json

    source = EXAMPLES / "claude-code" / "session.jsonl"
    lines = source.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[4])
    record["message"]["content"][0]["content"] = "cut here: "  # the escape is written below, as a client writes it
    cut = json.dumps(record).replace('"cut here: "', '"cut here: \\ud83d"')
    log = tmp_path / "projects" / "shop" / "session.jsonl"
    log.parent.mkdir(parents=True)
    log.write_text("\n".join([*lines[:4], cut, *lines[5:]]) + "\n", encoding="utf-8")
    for argv in (["validate", str(log)], ["import", str(log.parent.parent), "--out", str(tmp_path / "out")]):
        assert main(argv) == 0
        err = capsys.readouterr().err
        assert f"{log}:5: 1 lone UTF-16 surrogate escape(s)" in err and "internal error" not in err, err
    steps = pl.read_parquet(tmp_path / "out" / "steps.parquet")
    assert steps.filter(pl.col("observation").str.contains("cut here: \ufffd", literal=True)).height == 1
