"""The CLI meets bad input as a new user gives it: every verb, every kind of bad argument, every bad log from the
first probe -- one line on standard error, exit 2, no traceback, nothing written. Each case names what it once did."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import polars as pl
import pytest

from workbench.cli.main import build_parser, main

from tests.conftest import EXAMPLE


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An imported example log (d), a sample of it, an empty directory, a label store."""
    root = tmp_path_factory.mktemp("cli")
    assert main(["import", str(EXAMPLE), "--out", str(root / "d"), "--entries"]) == 0
    assert main(["sample", str(root / "d"), "--n", "6", "--out", str(root / "sample.jsonl")]) == 0
    (root / "empty").mkdir()
    (root / "store" / "labels").mkdir(parents=True)
    return root


def one_line_exit_2(args: list[str], capsys: pytest.CaptureFixture[str], *, code: int = 2) -> str:
    assert main(args) == code, args
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in captured.err + captured.out
    return err


def bad_arguments(w: Path) -> list[tuple[str, list[str], str]]:
    d, s, e = str(w / "d"), str(w / "sample.jsonl"), str(w / "empty")
    return [
        # (what it once did, argv, fragment of the one line)
        ("missing file", ["validate", str(w / "nope.jsonl")], "no such file"),
        ("a directory for a file: 'no such file'", ["validate", d], "is a directory"),
        ("--table on a directory: [Errno 21]", ["validate", d, "--table", "runs"], "is a directory"),
        ("unknown format", ["validate", str(EXAMPLE), "--format", "xml"], "invalid choice"),
        ("unknown table", ["validate", str(EXAMPLE), "--table", "nosuch"], "invalid choice"),
        ("import onto a file", ["import", str(EXAMPLE), "--out", s], "expected a directory"),
        ("import into another log's tables, mixed", ["import", str(EXAMPLE), "--out", d], "--force"),
        ("export a directory without tables", ["export", e, "--out", str(w / "x.jsonl")], "no tables here (no runs.parquet or runs.jsonl)"),
        ("export to a .csv", ["export", d, "--out", str(w / "x.csv")], ".jsonl"),
        ("export format", ["export", d, "--format", "csv", "--out", str(w / "x.jsonl")], "invalid choice"),
        ("entries of a missing directory", ["entries", str(w / "nope")], "no such directory"),
        ("attribute --with-reference on an offline attributor", ["attribute", d, "--attributor", "last-step",
                                                                   "--with-reference", "--out", str(w / "p.parquet")],
         "with an LLM protocol"),
        ("attribute --out .csv", ["attribute", d, "--out", str(w / "p.csv")], ".parquet or .jsonl"),
        ("attribute --context-tokens 10", ["attribute", d, "--context-tokens", "10", "--out", str(w / "p.parquet")],
         ">= 4000"),
        ("judge --tau 2 accepted", ["judge", d, "--tau", "2", "--out", str(w / "s.parquet")], "[0, 1]"),
        ("judge --tau nan accepted", ["judge", d, "--tau", "nan", "--out", str(w / "s.parquet")], "[0, 1]"),
        ("judge --out .csv refused after scoring", ["judge", d, "--out", str(w / "s.csv")], ".parquet or .jsonl"),
        ("judge unknown judge", ["judge", d, "--judge", "gpt", "--out", str(w / "s.parquet")], "invalid choice"),
        ("judge --concurrency 0", ["judge", d, "--concurrency", "0", "--out", str(w / "s.parquet")], ">= 1"),
        ("judge a non-number", ["judge", d, "--timeout", "soon", "--out", str(w / "s.parquet")], "invalid float"),
        ("simulate --tasks 0: KeyError 'runs'", ["simulate", "--tasks", "0", "--out", str(w / "t")], ">= 1"),
        ("simulate --tasks -1: KeyError 'runs'", ["simulate", "--tasks", "-1", "--out", str(w / "t")], ">= 1"),
        ("simulate bad budgets", ["simulate", "--budgets", "48,x", "--out", str(w / "t")], "--budgets"),
        ("simulate unknown policy", ["simulate", "--policies", "magic", "--out", str(w / "t")], "--policies"),
        ("sample an empty directory: KeyError 'runs'", ["sample", e, "--out", str(w / "x.jsonl")], "no tables here (no runs.parquet or runs.jsonl)"),
        ("sample --n -5: 'sampled 16 of -5'", ["sample", d, "--n", "-5", "--out", str(w / "x.jsonl")], ">= 1"),
        ("sample --method nosuch: empty sample, exit 0", ["sample", d, "--method", "nosuch", "--out",
                                                          str(w / "x.jsonl")], "a method the runs have"),
        ("sample --budget absent", ["sample", d, "--budget", "7", "--out", str(w / "x.jsonl")], "--budget"),
        ("sample unknown stratum", ["sample", d, "--strata", "colour", "--out", str(w / "x.jsonl")], "--strata"),
        ("sample to .txt", ["sample", d, "--out", str(w / "x.txt")], ".jsonl"),
        ("label a missing sample", ["label", str(w / "nope.jsonl"), "--annotator", "ann"], "no such file"),
        ("annotator 'dan ' a second person", ["label", s, "--annotator", "dan "], "--annotator"),
        ("annotator with a path", ["label", s, "--annotator", "../x"], "--annotator"),
        ("label round 0", ["label", s, "--annotator", "ann", "--round", "0"], ">= 1"),
        ("label unknown field", ["label", s, "--annotator", "ann", "--field", "mood"], "invalid choice"),
        ("agree on a missing store", ["agree", str(w / "nope")], "no such directory"),
        ("agree on an empty store", ["agree", str(w / "store")], "no labels"),
        ("agree --n-boot 0", ["agree", str(w / "store"), "--n-boot", "0"], ">= 1"),
        ("adjudicate a missing file", ["adjudicate", str(w / "nope.jsonl")], "no such file"),
        ("labelstudio export to .txt", ["labelstudio", "export", s, "--out", str(w / "t.txt")], ".json"),
        ("labelstudio import a missing file", ["labelstudio", "import", str(w / "nope.json")], "no such file"),
        ("explore a missing directory", ["explore", str(w / "nope"), "--out", str(w / "site")], "no such"),
        ("explore --limit 0", ["explore", str(EXAMPLE), "--out", str(w / "site"), "--limit", "0"], ">= 1"),
        ("explore --tau 2", ["explore", str(EXAMPLE), "--out", str(w / "site"), "--tau", "2"], "[0, 1]"),
        ("figures missing notebooks", ["figures", "--notebooks", str(w / "nope")], "no such directory"),
        ("serve-model of a missing file", ["serve-model", "--model", str(w / "nope.gguf")], "no such file"),
        ("figures bad --param", ["figures", "--notebooks", e, "--param", "1X=2"], "NAME=VALUE"),
        ("usage of a missing path", ["usage", str(w / "nope")], "no such file or directory"),
        ("usage --out .txt", ["usage", str(w), "--out", str(w / "u.txt")], ".csv or .parquet"),
        ("unknown verb", ["frobnicate"], "invalid choice"),
        ("missing required option", ["import", str(EXAMPLE)], "--out"),
    ]


def test_every_verb_bad_argument_is_one_line_exit_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = sorted(p.name for p in workdir.rglob("*"))
    for what, argv, fragment in bad_arguments(workdir):
        err = one_line_exit_2(argv, capsys)
        assert fragment in err, (what, err)
        assert err.startswith("workbench"), (what, err)
    assert sorted(p.name for p in workdir.rglob("*")) == before  # nothing written, nothing half-written
    covered = {argv[0] for _, argv, _ in bad_arguments(workdir)}
    verbs = set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert verbs <= covered, verbs - covered


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_line(**extra: object) -> dict[str, object]:
    rec: dict[str, object] = {"run_id": "r1", "task_id": "t1", "method": "m",
                              "steps": [{"step": 0, "observation": "ok", "input_tokens": 3, "output_tokens": 1}]}
    rec.update(extra)
    return rec


BAD_LOGS = [
    # (what it once did, the bad line, fragment)
    ("nested 10,000 deep in an array: RecursionError", "[" * 10_000 + "]" * 10_000, "nested"),
    ("nested 10,000 deep in an object: RecursionError", '{"a":' * 10_000 + "1" + "}" * 10_000, "nested"),
    ("nested 10,000 deep inside args", json.dumps(run_line())[:-1] + ', "x": 1}' if False else
     json.dumps(run_line(steps=[{"step": 0, "action": {"tool": "t", "args": "ARGS"}}])).replace(
         '"ARGS"', "[" * 10_000 + "]" * 10_000), "nested"),
    ("integer beyond 64 bits: polars ComputeError", json.dumps(run_line(replicate=99999999999999999999999)),
     "field 'replicate': expected an integer within 64 bits"),
    ("negative budget imported as ok", json.dumps(run_line(budget=-5)), "field 'budget': expected a non-negative"),
    ("negative token count imported as ok",
     json.dumps(run_line(steps=[{"step": 0, "input_tokens": -3}])), "steps[0].input_tokens"),
    ("replicate below 0 imported as ok", json.dumps(run_line(replicate=-1)), "field 'replicate'"),
    ("duplicate key kept the last, the error blamed a later line",
     '{"run_id": "r1", "run_id": "r2", "task_id": "t"}', "key 'run_id' twice"),
    ("a JSON string message doubled its words", '{"run_id": "r1", "task_id": "t1, "x": 1}', "column"),
    ("'starting at at column'", '{"run_id": "a\tb", "task_id": "t"}', "Invalid control character at column"),
]


@pytest.mark.parametrize(("what", "bad", "fragment"), BAD_LOGS, ids=[b[0].split(":")[0] for b in BAD_LOGS])
def test_bad_log_lines_name_file_and_line(what: str, bad: str, fragment: str, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    log = write(tmp_path / "log.jsonl", [json.dumps(run_line(run_id="r0")), bad])
    for argv in (["validate", str(log)], ["import", str(log), "--out", str(tmp_path / "out")]):
        err = one_line_exit_2(argv, capsys)
        assert f"{log}:2: " in err and fragment in err, (what, err)
        assert "at at" not in err and "<frame>" not in err and "a strings" not in err
    assert not (tmp_path / "out").exists()


def test_deep_nesting_in_a_tau_bench_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "tau.json"
    bad.write_text("[" * 10_000 + "]" * 10_000, encoding="utf-8")
    err = one_line_exit_2(["validate", str(bad), "--format", "tau-bench"], capsys)
    assert "nested" in err and str(bad) in err


def test_label_table_values_and_timestamps_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``validate --table labels`` once accepted value 'maybe' and labeled_at 'yesterday' (which then always won)."""
    ok = {"item_id": "e", "annotator": "a", "round": 1, "field": "support", "value": "supported",
          "labeled_at": "2026-11-30T12:00:00+00:00"}
    for bad, fragment in (({"value": "maybe"}, "'value': expected for field 'support'"),
                          ({"labeled_at": "yesterday"}, "ISO-8601"), ({"field": "mood"}, "field 'field'"),
                          ({"round": -1}, "'round'")):
        path = write(tmp_path / "labels.jsonl", [json.dumps(ok), json.dumps({**ok, **bad})])
        err = one_line_exit_2(["validate", str(path), "--table", "labels"], capsys)
        assert f"{path}:2: " in err and fragment in err, err


def test_import_force_replaces_the_whole_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Log A with --entries, then log B into the same --out, once left A's entries beside B's tables."""
    a = write(tmp_path / "a.jsonl", [json.dumps(run_line(run_id="a1"))])
    out = tmp_path / "out"
    assert main(["import", str(EXAMPLE), "--out", str(out), "--entries"]) == 0
    assert (out / "entries.parquet").exists()
    one_line_exit_2(["import", str(a), "--out", str(out)], capsys)  # refused: it would mix two logs
    assert main(["import", str(a), "--out", str(out), "--force"]) == 0
    assert not (out / "entries.parquet").exists()
    assert pl.read_parquet(out / "runs.parquet")["run_id"].to_list() == ["a1"]


def _one_true_default(name: str, parser: argparse.ArgumentParser, text: str) -> None:
    """Issue 43 item 6: help said "(default: None)" on a required option and gave --field/--sample two defaults.
    Each option's help names a default at most once, and never None or False."""
    assert "(default: None)" not in text and "(default: False)" not in text, name
    for action in parser._actions:
        helped = parser._get_formatter()._expand_help(action) if action.help else ""
        assert helped.count("default") <= 1, (name, action.dest, helped)


def test_help_lists_every_verb_and_every_option_explains_itself(capsys: pytest.CaptureFixture[str]) -> None:
    """``workbench --help`` once listed 5 of the 11 verbs, and most options had no help text or default shown."""
    parser = build_parser()
    verbs = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert main(["--help"]) == 0
    top = capsys.readouterr().out
    assert all(f"    {name}" in top for name in verbs), top
    for name, sub in verbs.items():
        for action in sub._actions:
            if action.dest == "help":
                continue
            assert action.help, f"{name} {action.option_strings or action.dest}: no help text"
        assert main([name, "--help"]) == 0
        text = capsys.readouterr().out
        _one_true_default(name, sub, text)
        steps = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
        if steps:  # a verb of steps (labelstudio export | import): each step's help shows its defaults
            for step, step_parser in steps[0].choices.items():
                assert all(a.help for a in step_parser._actions if a.dest != "help"), (name, step)
                assert main([name, step, "--help"]) == 0
                step_text = capsys.readouterr().out
                assert "(default:" in step_text, (name, step)
                _one_true_default(f"{name} {step}", step_parser, step_text)
            continue
        assert "(default:" in text or name in ("entries", "adjudicate") or "default" in text, name


def test_unexpected_error_is_one_line_with_a_debug_hint(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from workbench.cli import logs

    def broken(args: object) -> int:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(logs, "run_entries", broken)
    parser_args = ["entries", str(tmp_path)]
    err = one_line_exit_2(parser_args, capsys, code=1)
    assert "internal error (ZeroDivisionError" in err and "--debug" in err
    with pytest.raises(ZeroDivisionError):
        main(["--debug", *parser_args])


def test_table_file_errors_read_well(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Parquet table without a required column once said 'column of a strings'; frame errors said '<frame>:'."""
    path = tmp_path / "runs.parquet"
    pl.DataFrame({"run_id": ["r1"], "budget": [-1]}).write_parquet(path)
    err = one_line_exit_2(["validate", str(path), "--table", "runs"], capsys)
    assert err == (f"workbench validate: {path}:1: field 'task_id': expected a column of strings in table 'runs', "
                   "got no such column")
    pl.DataFrame({"run_id": ["r1"], "task_id": ["t"], "budget": [-1]}).write_parquet(path)
    err = one_line_exit_2(["validate", str(path), "--table", "runs"], capsys)
    assert err.endswith("field 'budget': expected a non-negative integer, got integer -1") and "<frame>" not in err


def test_the_parser_and_its_help_import_no_numerical_library() -> None:
    """Issue 40: `workbench --help` took 0.60 s because building the parser imported polars and numpy (the
    annotation store for a help text, the adapters for their format names, the schema for SchemaError). Building
    the parser, printing every verb's help and rejecting a bad option import none of them."""
    import subprocess
    import sys

    code = """
import sys, contextlib, io
from workbench.cli.main import build_parser, main, VERBS
parser = build_parser()
verbs = [a for a in parser._subparsers._group_actions[0].choices]
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    for v in ["--help", *([v, "--help"] for v in verbs), ["import", "x", "--format", "nope", "--out", "y"]]:
        main(v if isinstance(v, list) else [v])
print(sorted(m for m in ("polars", "numpy", "scipy", "pyarrow", "pandas", "sklearn", "matplotlib") if m in sys.modules))
print(len(verbs))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    imported, verbs = out.stdout.split("\n")[:2]
    assert imported == "[]" and int(verbs) >= 13, out.stdout


def test_version_prints_the_installed_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 83: the installation page checks with ``workbench --version``; it prints the distribution's version
    (importlib.metadata's, what pip installed) and exits 0 without a verb."""
    import importlib.metadata

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"workbench {importlib.metadata.version('compaction-workbench')}\n"
