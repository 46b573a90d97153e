"""``--format inspect``: inspect_ai's logs read back, every count checked against inspect_ai's own reader.

The fixtures under ``tests/fixtures/inspect`` were written by inspect_ai itself (``tools/inspect_logs.py``: a react
agent on the invoice testbed with summary, edit and trim compactions, two epochs, an error sample); the slow test
writes them again and compares what the reader makes of both.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.conftest import ROOT
from workbench.adapters import read_log, sniff_format
from workbench.errors import SchemaError

# inspect_ai (3 s to import) is imported by the tests that read with it, not by every worker that collects them
pytestmark = pytest.mark.skipif(importlib.util.find_spec("inspect_ai") is None, reason="inspect_ai is not installed")


def inspect_log() -> Any:
    """inspect_ai's own log module, the reference every count is checked against."""
    return importlib.import_module("inspect_ai.log")

FIXTURES = ROOT / "tests" / "fixtures" / "inspect"
LOGS = sorted(FIXTURES.glob("*.eval"))


def _own(path: Path) -> list:
    return list(inspect_log().read_eval_log(str(path), resolve_attachments=True).samples or [])


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.stem)
def test_counts_equal_inspect_ais_own_reader(path: Path) -> None:
    tables = read_log(path)
    samples = _own(path)
    runs, steps, comps = tables["runs"], tables["steps"], tables["compactions"]
    assert runs.height == len(samples)
    task = inspect_log().read_eval_log(str(path), header_only=True).eval.task
    for sample in samples:
        run_id = f"{task}/{sample.id}/e{sample.epoch}"
        run = runs.filter(pl.col("run_id") == run_id).row(0, named=True)
        events = sample.events
        compactions = [e for e in events if e.event == "compaction"]
        mine = comps.filter(pl.col("run_id") == run_id).sort("boundary")
        assert mine.height == len(compactions) == run["compactions"]
        assert mine.get_column("pre_tokens").to_list() == [e.tokens_before for e in compactions]
        assert mine.get_column("post_tokens").to_list() == [e.tokens_after for e in compactions]
        assert mine.get_column("compaction_type").to_list() == [e.type for e in compactions]
        assert mine.get_column("strategy").to_list() == [e.metadata["strategy"] for e in compactions]
        assert mine.get_column("trigger").to_list() == [e.metadata["trigger"] for e in compactions]
        # every tool the agent called is a step, with the result inspect_ai recorded
        tool_events = [e for e in events if e.event == "tool"]
        mine_steps = steps.filter(pl.col("run_id") == run_id).sort("step")
        executed = mine_steps.filter(pl.col("observation").is_not_null())
        assert executed.get_column("tool").to_list() == [e.function for e in tool_events]
        calls = [c.function for e in events if e.event == "model" and e.output.message.tool_calls
                 for c in e.output.message.tool_calls]
        assert mine_steps.filter(pl.col("tool").is_not_null()).get_column("tool").to_list() == calls
        assert mine_steps.height == run["steps"]
        if sample.error is not None:
            assert run["success"] is False and run["failed_check"].startswith("error: ")
            assert sample.error.message.splitlines()[0][:40] in run["failed_check"]
        elif sample.limit is not None:
            assert run["success"] is False and run["failed_check"].startswith("limit: ")
        else:
            assert run["success"] is (next(iter(sample.scores.values())).value == "C")
        # summaries: the summary message inspect_ai put in the agent's input, none for edit and trim
        for c in mine.iter_rows(named=True):
            if c["compaction_type"] == "summary":
                assert c["committed_summary"].startswith("[CONTEXT COMPACTION SUMMARY]")
            else:
                assert c["committed_summary"] is None and c["candidate_summary"] is None
            assert c["span_start"] <= c["span_end"] + 1 and c["span_end"] < c["step"]


def test_the_replaced_steps_are_the_ones_the_next_input_lacks() -> None:
    """A summary compaction removes the whole conversation (inspect_ai keeps system, input, summary); a trim keeps
    the newer part, so its span ends before the boundary; an edit clears the older tool results only."""
    comps = {p.stem: read_log(p)["compactions"] for p in LOGS}
    summary = comps["summary"].filter(pl.col("run_id").str.ends_with("t008/e1")).sort("boundary")
    assert summary.select("span_start", "span_end", "step").rows() == [(0, 10, 11), (11, 16, 17), (17, 21, 22)]
    trim = comps["trim"].filter(pl.col("run_id").str.ends_with("t008/e1")).sort("boundary").row(0, named=True)
    assert trim["span_end"] < trim["step"] - 1 and trim["retained_turn"]
    edit = comps["edit"].filter(pl.col("run_id").str.ends_with("t008/e1")).sort("boundary").row(0, named=True)
    assert "tool:" in edit["retained_turn"] and edit["span_end"] < edit["step"] - 1


def test_a_directory_of_logs_is_sniffed_and_imported_from_outside_the_checkout(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for p in LOGS:
        (logs / p.name).write_bytes(p.read_bytes())
    (logs / "logs.json").write_text('{"summary.eval": {"eval": {}}}')  # inspect_ai's index, and notes: not logs
    (logs / "VERSIONS.json").write_bytes((FIXTURES / "VERSIONS.json").read_bytes())
    assert sniff_format(LOGS[0]) == "inspect"
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "workbench.cli.main", "import", str(logs), "--out", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    runs = pl.read_parquet(out / "runs.parquet")
    assert runs.height == sum(len(_own(p)) for p in LOGS)
    assert set(runs.get_column("project")) == {p.name for p in LOGS}


def test_a_file_inspect_ai_cannot_read_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "broken.eval"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(SchemaError) as err:
        read_log(bad, "inspect")
    assert "broken.eval" in str(err.value) and "inspect_ai log" in str(err.value)


def test_without_the_extra_the_error_names_it(tmp_path: Path) -> None:
    code = ("import sys\nsys.modules['inspect_ai'] = None\n"
            "from workbench.cli.main import main\n"
            f"sys.exit(main(['import', {str(LOGS[0])!r}, '--out', {str(tmp_path / 'o')!r}]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "optional extra 'inspect'" in done.stderr and 'pip install -e ".[inspect]"' in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


@pytest.mark.extra
def test_the_script_writes_the_fixtures_again(tmp_path: Path) -> None:
    """tools/inspect_logs.py with inspect_ai as installed writes logs the reader reads as it reads the committed
    ones (times and ids differ from run to run; steps, tokens and compactions do not)."""
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "inspect_logs.py"), str(tmp_path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    made = json.loads((tmp_path / "VERSIONS.json").read_text())
    assert made["strategies"] == ["summary", "edit", "trim"]
    for p in LOGS:
        old, new = read_log(p), read_log(tmp_path / p.name)
        for table, cols in (("steps", ["run_id", "step", "tool", "args", "observation", "input_tokens"]),
                            ("compactions", ["run_id", "boundary", "step", "span_start", "span_end",
                                             "pre_tokens", "post_tokens", "compaction_type", "committed_summary"])):
            assert old[table].select(cols).equals(new[table].select(cols)), (p.name, table)


def test_a_json_log_reads_as_its_eval(tmp_path: Path) -> None:
    """inspect_ai's other log format: the same log written as .json by inspect_ai is sniffed and read the same."""
    log = inspect_log().read_eval_log(str(LOGS[0]))
    target = tmp_path / "same.json"
    inspect_log().write_eval_log(log, str(target), format="json")
    assert sniff_format(target) == "inspect"
    a, b = read_log(LOGS[0]), read_log(target)
    for table in ("runs", "steps", "compactions"):
        assert a[table].drop("project", strict=False).equals(b[table].drop("project", strict=False)), table
    # the command line sniffs it too, and says nothing of lines (it is one JSON document, not a session's lines)
    done = subprocess.run([sys.executable, "-m", "workbench.cli.main", "import", str(target), "--out",
                           str(tmp_path / "out")], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "warning" not in done.stderr, done.stderr


def test_a_damaged_sample_is_one_error_naming_the_file_and_nothing_is_written(tmp_path: Path) -> None:
    """A log whose sample was cut short (half its JSON): inspect_ai's own error, with the file; no output."""
    import zipfile

    import zipfile_zstd  # noqa: F401 - inspect_ai's dependency: its .eval members are zstd-compressed

    damaged = tmp_path / "cut.eval"
    with zipfile.ZipFile(LOGS[0]) as z, zipfile.ZipFile(damaged, "w") as w:
        for name in z.namelist():
            data = z.read(name)
            w.writestr(name, data[:len(data) // 2] if name.startswith("samples/t008_epoch_1") else data)
    done = subprocess.run([sys.executable, "-m", "workbench.cli.main", "import", str(damaged), "--out",
                           str(tmp_path / "out")], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "cut.eval" in done.stderr and "inspect_ai samples it can read" in done.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.extra
def test_logs_made_through_inspect_ais_openai_provider(tmp_path: Path, server) -> None:  # noqa: ANN001
    """The same agent driven over HTTP: inspect_ai's OpenAI-compatible provider against the loopback server (which
    answers as the script's openai_reply), so the model events carry real chat-completions calls; the reader's
    counts equal inspect_ai's own, and the agent's tool calls are the ones the server sent."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("inspect_logs", ROOT / "tools" / "inspect_logs.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    server.default = ("reply", script.openai_reply)
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "inspect_logs.py"), str(tmp_path), "--strategy",
                           "summary", "--tasks", "4", "--epochs", "1", "--openai", f"{server.url}/v1"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    log = tmp_path / "summary.eval"
    samples = _own(log)
    tables = read_log(log)
    assert tables["runs"].height == len(samples) == 4
    assert len(server.requests) == sum(1 for s in samples for e in s.events
                                       if e.event == "model" and e.model != "mockllm/summariser")
    compactions = sum(1 for s in samples for e in s.events if e.event == "compaction")
    assert tables["compactions"].height == compactions > 0
    assert tables["compactions"].get_column("pre_tokens").to_list() == [
        e.tokens_before for s in samples for e in s.events if e.event == "compaction"]
    called = tables["steps"].filter(pl.col("tool").is_not_null()).height
    assert called == len(server.requests)
