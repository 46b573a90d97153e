"""Where the notebooks' data comes from: loading never derives silently; derive_missing says what it added."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from workbench.adapters import read_log
from workbench.datasets import derive_missing, entry_clusters, has_budget, load, select_runs
from workbench.summaries import parse
from workbench.tables import write_tables

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "workbench" / "datasets" / "example_logs" / "invoice_log.jsonl"


def test_load_derives_nothing_and_derive_missing_reports_what_it_adds(tmp_path: Path) -> None:
    write_tables(read_log(EXAMPLE), tmp_path / "imported")
    tables = load(tmp_path / "imported")
    assert set(tables) == {"runs", "steps", "compactions"}
    added = derive_missing(tables)
    n_entries = sum(len(parse(s)) for s in tables["compactions"]["candidate_summary"])
    assert set(added) >= {"entries", "scores"} and f"{n_entries} entries" in added["entries"]
    assert tables["entries"].height == n_entries and tables["scores"].height == n_entries
    assert derive_missing(tables) == {}  # a second call finds nothing left to add


def test_load_derive_reads_only_what_it_is_asked_and_all_when_it_must_derive(tmp_path: Path,
                                                                                   caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="workbench")
    from workbench.datasets import load

    imported = read_log(EXAMPLE)
    n_entries = sum(len(parse(s)) for s in imported["compactions"]["candidate_summary"])
    write_tables(imported, tmp_path / "bare")
    derived = load(tmp_path / "bare", derive=True, names=("entries", "scores"))  # not there: read all, derive
    assert {"steps", "compactions", "entries", "scores"} <= set(derived) and derived["scores"].height == n_entries
    assert f"{n_entries} entries parsed" in caplog.text  # logged by the library, not printed
    write_tables({"entries": derived["entries"], "scores": derived["scores"]}, tmp_path / "bare")
    only = load(tmp_path / "bare", derive=True, names=("entries", "scores"))
    assert set(only) == {"runs", "entries", "scores"}  # steps and compactions stay on disk
    assert "nothing, every table was in DATA" in caplog.text  # logged by the library, not printed
    # nothing derived: the runs come without their long texts, unless asked; with them when deriving
    assert "task" in derived["runs"].columns and "task" not in only["runs"].columns
    on_disk = load(tmp_path / "bare", names=())["runs"]
    assert only["runs"].equals(on_disk.drop("task", "gt_world", strict=False)) and "task" in on_disk.columns
    texts = load(tmp_path / "bare", derive=True, names=("entries", "scores"), run_texts=True)
    assert texts["runs"].equals(on_disk)


def test_select_runs_applies_only_the_filters_the_data_can_answer_and_refuses_what_it_lacks() -> None:
    from workbench.datasets import NotApplicable

    runs = pl.DataFrame({"run_id": ["a", "b", "c"], "method": ["x", "y", "x"], "budget": [48, 48, 96]})
    tables = {"runs": runs}
    assert select_runs(tables, method="x", budget=48)["run_id"].to_list() == ["a"]
    with pytest.raises(NotApplicable, match=r"no run has method 'nosuch'; the runs have \['x', 'y'\]"):
        select_runs(tables, method="nosuch", budget=96)  # it once returned the other methods' runs
    with pytest.raises(ValueError, match=r"no run has budget 24; the runs have \[48, 96\]"):
        select_runs(tables, method="x", budget=24)  # it once returned nothing, silently
    no_budget = {"runs": runs.with_columns(pl.lit(None, dtype=pl.Int64).alias("budget"))}
    assert not has_budget(no_budget) and select_runs(no_budget, method="y", budget=48)["run_id"].to_list() == ["b"]
    one_method = {"runs": pl.DataFrame({"run_id": ["s1", "s2"], "method": ["claude_code"] * 2})}
    assert select_runs(one_method, method="prompting", budget=48)["run_id"].to_list() == ["s1", "s2"]


def test_entry_clusters_map_entries_to_their_runs_scenario() -> None:
    tables = {"runs": pl.DataFrame({"run_id": ["r1", "r2"], "scenario_id": ["s1", None]}),
              "entries": pl.DataFrame({"entry_id": ["r1/b0/0", "r2/b0/0", "r1/b1/0"], "run_id": ["r1", "r2", "r1"]})}
    got = dict(entry_clusters(tables).iter_rows())
    assert got == {"r1/b0/0": "s1", "r2/b0/0": None, "r1/b1/0": "s1"}


def test_load_derive_with_columns_gives_lazy_checked_tables(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """``columns``: those tables come back lazy with those columns (the eager tables' columns, row for row), whether
    they were on disk or derived; a bad value in a scanned column is an error naming the file's row."""
    from workbench.datasets import load
    from workbench.errors import SchemaError

    write_tables(read_log(EXAMPLE), tmp_path / "d")
    cols = {"entries": ("entry_id", "section"), "scores": ("entry_id", "score")}
    derived = load(tmp_path / "d", derive=True, names=("entries",), columns=cols)
    assert "entries parsed" in caplog.text  # logged by the library, not printed
    assert isinstance(derived["entries"], pl.LazyFrame) and isinstance(derived["runs"], pl.DataFrame)
    eager = load(tmp_path / "d", derive=True, names=("entries", "scores"))
    write_tables({"entries": eager["entries"], "scores": eager["scores"]}, tmp_path / "d")
    scanned = load(tmp_path / "d", derive=True, names=("entries",), columns=cols)
    assert set(scanned) == {"runs", "entries", "scores"}
    for name, wanted in cols.items():
        assert scanned[name].collect().equals(eager[name].select(wanted))
        assert derived[name].collect().equals(eager[name].select(wanted))
    bad = eager["scores"].with_columns(pl.when(pl.int_range(pl.len()) == 3).then(-0.5).otherwise(pl.col("score"))
                                       .alias("score"))
    bad.write_parquet(tmp_path / "d" / "scores.parquet")
    try:
        load(tmp_path / "d", derive=True, columns=cols)
    except SchemaError as err:
        assert str(err).startswith(f"{tmp_path / 'd' / 'scores.parquet'}:row 4: field 'score'")
    else:
        raise AssertionError("a negative score was read")


def test_loading_a_directory_without_tables_is_an_error_that_writes_nothing(tmp_path: Path) -> None:
    from workbench.datasets import DEFAULT_TESTBED, load
    from workbench.errors import SchemaError

    (tmp_path / "mine").mkdir()
    with pytest.raises(SchemaError, match="no tables here .*expected a directory written by `workbench import`"):
        load(tmp_path / "mine")
    assert not any((tmp_path / "mine").iterdir())
    if not (DEFAULT_TESTBED / "runs.parquet").exists():  # the default testbed is not generated by loading either
        with pytest.raises(SchemaError, match="generate it with `workbench simulate"):
            load(DEFAULT_TESTBED)
        assert not (DEFAULT_TESTBED / "runs.parquet").exists()


def test_importing_workbench_and_running_analyses_prints_nothing(tmp_path: Path) -> None:
    """The library once printed what it derived and what it generated; now it logs (shown where a caller asks)."""
    import subprocess
    import sys

    code = f"""
import workbench
from workbench.datasets import import_log
from workbench.datasets import load, select_runs
from workbench.analyses.sjc import entries_by_section, support_from_scores
from workbench.stats import efficiency_by, reliability
import_log({str(EXAMPLE)!r}, {str(tmp_path / 'd')!r})
t = load({str(tmp_path / 'd')!r}, derive=True)
entries_by_section(support_from_scores(t["entries"].collect(), t["scores"], 0.5) if hasattr(t["entries"], "collect")
                   else support_from_scores(t["entries"], t["scores"], 0.5))
reliability(t["runs"], k=1, by="method")
efficiency_by(t["steps"], t["runs"], "method")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == ""


def test_derive_missing_fills_run_usage_from_the_steps_as_counted_by_hand_eager_or_lazy() -> None:
    """Run a lacks its usage; run b carries its own (kept). Run a's steps: (in 10, out 2) and (in 30, out 4):
    peak 30, dependency (10 + 4) 2 / 2 + (30 + 8) 4 / 2 = 14 + 76 = 90, agent tokens 46. Scanned runs are
    filled lazily to the same values; runs read without a column are filled in the columns they have."""
    runs = pl.DataFrame({"run_id": ["a", "b"], "peak_tokens": [None, 7], "dependency": [None, 1.5],
                         "agent_tokens": [None, 9]}, schema_overrides={"peak_tokens": pl.Int64, "agent_tokens": pl.Int64})
    steps = pl.DataFrame({"run_id": ["a", "a", "b"], "input_tokens": [10, 30, 100], "output_tokens": [2, 4, 50]})
    want = {"run_id": ["a", "b"], "peak_tokens": [30, 7], "dependency": [90.0, 1.5], "agent_tokens": [46, 9]}
    for frame in (runs, runs.lazy()):
        tables = {"runs": frame, "steps": steps}
        added = derive_missing(tables, wanted=())
        assert type(tables["runs"]) is type(frame)  # a scan stays a scan
        assert tables["runs"].lazy().collect().to_dict(as_series=False) == want
        assert added == {f"runs.{c}": "filled for 1 of 2 runs from the steps' token counts"
                         for c in ("peak_tokens", "dependency", "agent_tokens")}
        assert derive_missing(tables, wanted=()) == {}
    narrow = {"runs": runs.select("run_id", "peak_tokens").lazy(), "steps": steps}
    assert set(derive_missing(narrow, wanted=())) == {"runs.peak_tokens"}
    assert narrow["runs"].collect().to_dict(as_series=False) == {"run_id": ["a", "b"], "peak_tokens": [30, 7]}


def test_load_derive_can_scan_the_runs_and_still_checks_what_refers_to_them(tmp_path: Path) -> None:
    """``columns={"runs": ...}``: the runs come back as a scan; select_runs and has_budget answer on it what
    polars' own filter of the file answers; an eager table naming a run the file lacks is an error naming its row."""
    from workbench.datasets import NotApplicable, load
    from workbench.errors import SchemaError

    write_tables(read_log(EXAMPLE), tmp_path / "d")
    on_disk = pl.read_parquet(tmp_path / "d" / "runs.parquet")
    budgets = pl.Series([48, 96] * on_disk.height)[:on_disk.height]
    on_disk.with_columns(budgets.alias("budget")).write_parquet(tmp_path / "d" / "runs.parquet")
    tables = load(tmp_path / "d", derive=True, names=("steps",), columns={"runs": ("run_id", "method", "budget")})
    assert isinstance(tables["runs"], pl.LazyFrame) and isinstance(tables["steps"], pl.DataFrame)
    assert has_budget(tables)
    picked = select_runs(tables, budget=96)
    assert isinstance(picked, pl.LazyFrame)
    assert picked.collect()["run_id"].to_list() == on_disk.filter(budgets == 96)["run_id"].to_list()
    with pytest.raises(NotApplicable, match=r"no run has budget 24; the runs have \[48, 96\]"):
        select_runs(tables, budget=24)
    steps = pl.read_parquet(tmp_path / "d" / "steps.parquet")
    steps.with_columns(pl.when(pl.int_range(pl.len()) == 5).then(pl.lit("nosuch")).otherwise(pl.col("run_id"))
                       .alias("run_id")).write_parquet(tmp_path / "d" / "steps.parquet")
    with pytest.raises(SchemaError) as err:
        load(tmp_path / "d", derive=True, names=("steps",), columns={"runs": ("run_id",)})
    assert str(err.value).startswith(f"{tmp_path / 'd' / 'steps.parquet'}:row 6: field 'run_id'")
    assert "unknown run_id='nosuch'" in str(err.value)


def test_filling_run_usage_keeps_the_runs_in_their_order() -> None:
    """A left join without ``maintain_order`` gave the runs back in one of three orders from run to run (the
    coding-agent notebook's sessions table changed between two ``make figures``)."""
    runs = pl.DataFrame({"run_id": [f"r{i:03d}" for i in range(300)][::-1], "peak_tokens": [None] * 300},
                        schema_overrides={"peak_tokens": pl.Int64})
    steps = pl.DataFrame({"run_id": [f"r{i:03d}" for i in range(300)] * 2, "input_tokens": list(range(600)),
                          "output_tokens": [1] * 600})
    for _ in range(5):
        tables = {"runs": runs, "steps": steps}
        derive_missing(tables, wanted=())
        assert tables["runs"].get_column("run_id").to_list() == runs.get_column("run_id").to_list()
