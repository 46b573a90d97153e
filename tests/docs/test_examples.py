"""Issue 83: the Examples of the functions a user calls first (loading, judging, validating, the tables) run as
written and print what they show: each docstring's examples executed by doctest, in an empty directory."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

#: the functions whose docstrings carry Examples (the first a user calls)
FIRST = ("adapters.read_log", "adapters.sniff_format", "datasets.import_log", "datasets.load", "datasets.derive_missing",
         "datasets.examples", "tables.validate", "summaries.parse", "summaries.prune", "summaries.entries_table",
         "summaries.fact_check", "judges.make_judge", "judges.judge_directory", "stats.auroc_ci", "stats.bootstrap",
         "stats.reliability", "tables.gold_labels", "annotate.sample_entries", "tokens.count", "explore.build_site",
         "plots.export_table")


@pytest.mark.parametrize("name", FIRST)
def test_the_examples_run_as_written(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package, function = name.split(".")
    obj = getattr(importlib.import_module(f"workbench.{package}"), function)
    assert "Examples\n" in (obj.__doc__ or ""), f"{name} has no Examples section"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the examples' mkdtemp() directories go with the test's
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    tests = [t for t in doctest.DocTestFinder(recurse=False).find(obj, name) if t.examples]
    if name == "datasets.examples":  # its example is a shell session, shown, not run
        assert not tests
        return
    assert tests, f"{name}: no >>> example"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{name}: {runner.failures} example(s) print something else (see above)"
