"""The notebooks: they run on a user's own data, and a failing cell is named."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import polars as pl
import pytest

from workbench.cli.main import main
from workbench.notebooks import run_all

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.parametrize("names", [  # three groups, so that the test workers share the kernels' time
    ("summary_composition", "threshold_sensitivity", "reliability_efficiency"),
    # two notebooks that skip at once on a log without labels: the skip itself is make test's in
    # test_a_notebook_that_does_not_apply_is_skipped_with_its_reason; these two kernels run in CI's extras tier
    pytest.param(("failure_attribution", "judge_validation"), marks=pytest.mark.extra),
    ("judge_calibration", "method_comparison"),
], ids=["sjc", "validation", "calibration"])
def test_notebooks_run_on_an_imported_log(tmp_path: Path, names: tuple[str, ...]) -> None:
    data = tmp_path / "imported"
    assert main(["import", str(ROOT / "workbench" / "datasets" / "example_logs" / "invoice_log.jsonl"), "--out", str(data)]) == 0
    figs = tmp_path / "figs"
    report = run_all(ROOT / "notebooks", tmp_path / "build", timeout=300, cwd=ROOT,
                     parameters={"DATA": str(data), "FIGURES": str(figs), "N_BOOT": 200, "COVERAGE_TRIALS": 20},
                     names=list(names))
    assert report.exit_code == 0 and len(report.runs) == len(names), str(report)
    status = {r.name: r.status for r in report.runs}
    made = {p.relative_to(figs).as_posix() for p in figs.rglob("*") if p.is_file()} if figs.exists() else set()
    # what does not depend on the data is never recomputed or written for it: the summary names the gallery's copy
    assert not {"focus_table1_appworld_published.png", "tables/sjc_table12_interval_coverage.csv"} & made
    if "judge_validation" in names:  # no labels in the log: skipped at once, with the reason (it once ran 132 s)
        assert status["judge_validation"] == status["failure_attribution"] == "skipped"
        assert f"skipped judge_validation: no labels in {data}" in str(report), str(report)
    if "summary_composition" not in names:
        return
    assert ("skipped FOCUS Table 1(a) as published: does not depend on the data: the gallery's copy is "
            "figures/focus_table1_appworld_published.png") in str(report), str(report)
    assert "skipped accuracy by budget: the runs carry no context budget" in str(report)
    made = {p.name for p in figs.glob("*.png")}
    assert {"sjc_table2_composition.png", "sjc_fig3_pruned_vs_tau.png", "sjc_fig2_pass_vs_tokens.png"} <= made
    # Table 2's entry counts, counted here by hand from the log: '- ' bullet lines under each '## ' heading
    import json
    from collections import Counter

    hand: Counter[str] = Counter()
    for line in (ROOT / "workbench" / "datasets" / "example_logs" / "invoice_log.jsonl").read_text(encoding="utf-8").splitlines():
        for comp in json.loads(line).get("compactions", []):
            section = None
            for row in comp["candidate_summary"].splitlines():
                if row.startswith("## "):
                    section = row[3:].strip()
                elif row.startswith("- ") and section and row[2:].strip().rstrip(".").lower() != "none":
                    hand[section] += 1
    table2 = pl.read_csv(figs / "tables" / "sjc_table2_entries_by_section.csv")
    got = dict(zip(table2["section"], table2["entries"], strict=True))
    assert {s: got[s] for s in hand} == dict(hand) and got["All"] == sum(hand.values())


def _notebook(path: Path, source: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("X = 1\nNAME = 'bob'\nDATA = ''", metadata={"tags": ["parameters"]}), nbformat.v4.new_code_cell(source)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


@pytest.mark.slow
def test_figures_names_notebook_and_cell_of_first_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_TESTBED_TASKS", "6")
    monkeypatch.setenv("WORKBENCH_TESTBED_RUNS", "1")
    nbdir = tmp_path / "nbs"
    nbdir.mkdir()
    _notebook(nbdir / "a_ok.ipynb", "assert X == 1")
    _notebook(nbdir / "b_bad.ipynb", "raise RuntimeError('boom')")
    code = main(["figures", "--notebooks", str(nbdir), "--build", str(tmp_path / "build"), "--timeout", "60",
                 "--data", str(tmp_path / "tb")])
    assert code == 1
    err = capsys.readouterr().err
    assert f"{nbdir / 'b_bad.ipynb'}: cell 1: RuntimeError: boom" in err
    assert (tmp_path / "build" / "a_ok.ipynb").exists() and (tmp_path / "tb" / "runs.parquet").exists()
    assert not nbformat.read(nbdir / "a_ok.ipynb", as_version=4).cells[1].get("outputs")  # sources untouched


@pytest.mark.slow
def test_figures_param_reaches_every_notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``workbench figures --param NAME=VALUE`` overrides the parameters cell of each notebook, as papermill -p does:
    the literal 2 arrives as an int, a word as text."""
    nbdir = tmp_path / "nbs"
    nbdir.mkdir()
    (tmp_path / "tb").mkdir()
    (tmp_path / "tb" / "runs.parquet").write_bytes(b"")  # the testbed counts as present: nothing is generated
    _notebook(nbdir / "a.ipynb", "assert X == 2, X")
    _notebook(nbdir / "b.ipynb", "assert (X, NAME) == (2, 'alice'), (X, NAME)")
    args = ["figures", "--notebooks", str(nbdir), "--build", str(tmp_path / "build"), "--timeout", "60",
            "--data", str(tmp_path / "tb")]
    assert main([*args, "--param", "X=2", "--param", "NAME=alice"]) == 0
    assert main(args) == 1  # without the parameter X stays 1 and the first notebook fails


def test_a_param_no_notebook_reads_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 39 item 11: `--param DATTA=...` was set in every notebook and ignored by all, without a word. The
    names are read from each notebook's cell tagged 'parameters'; nothing runs."""
    from workbench.notebooks._runner import notebook_parameters

    assert notebook_parameters(ROOT / "notebooks" / "human_labels.ipynb") >= {"DATA", "SEED", "N_BOOT"}
    assert main(["figures", "--notebooks", str(ROOT / "notebooks"), "--only", "human_labels",
                 "--param", "DATTA=x", "--param", "SEED=1"]) == 2
    err = capsys.readouterr().err
    assert "option --param: expected a parameter of the notebooks run (" in err and err.rstrip().endswith("got DATTA")


def test_parse_param_reads_literals_and_rejects_bad_names() -> None:
    from workbench.notebooks._runner import parse_param

    assert parse_param("N_BOOT=200") == ("N_BOOT", 200) and parse_param("TAU=0.3") == ("TAU", 0.3)
    assert parse_param("DATA=data/x") == ("DATA", "data/x") and parse_param("LABELS=None") == ("LABELS", None)
    with pytest.raises(ValueError, match="NAME=VALUE"):
        parse_param("1X=2")


@pytest.mark.extra  # make test runs papermill with DATA in tests/notebooks/test_project.py
def test_papermill_runs_a_notebook_on_an_imported_log(tmp_path: Path) -> None:
    """As the README tells users: ``papermill notebooks/NAME.ipynb out.ipynb -p DATA DIR`` on their own log."""
    import subprocess
    import sys

    papermill = Path(sys.executable).with_name("papermill")
    data, figs = tmp_path / "imported", tmp_path / "figs"
    assert main(["import", str(ROOT / "workbench" / "datasets" / "example_logs" / "invoice_log.jsonl"), "--out", str(data)]) == 0
    out = subprocess.run([str(papermill), "notebooks/summary_composition.ipynb", str(tmp_path / "out.ipynb"),
                          "-p", "DATA", str(data), "-p", "FIGURES", str(figs), "--cwd", str(ROOT)],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    executed = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and str(data) in injected[0].source
    printed = "".join(o.get("text", "") for c in executed.cells for o in c.get("outputs", []))
    assert "derived:" in printed and "entries" in printed  # derive_missing said what it added to the imported log
    assert (figs / "tables" / "sjc_table2_entries_by_section.csv").exists()


@pytest.mark.extra  # agent_transcripts on imported sessions: make test runs it in test_sessions_end_to_end
def test_agent_transcripts_notebook_on_imported_sessions(tmp_path: Path) -> None:
    """The coding-agent notebook on a directory of Claude Code sessions imported by the CLI (DATA)."""
    import warnings

    data = tmp_path / "cc"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["import", str(ROOT / "workbench" / "datasets" / "example_logs" / "claude-code"), "--format", "claude-code",
                     "--out", str(data)]) == 0
    figs = tmp_path / "figs"
    assert run_all(ROOT / "notebooks", tmp_path / "build", timeout=300, cwd=ROOT,
                   parameters={"DATA": str(data), "FIGURES": str(figs)}, names=["agent_transcripts"]).exit_code == 0
    assert {"transcripts_entries_by_role.png", "transcripts_tokens_before_after.png",
            "transcripts_burden_before_after.png"} <= {p.name for p in figs.glob("*.png")}
    # the two compactions of the fixture, their triggers as the boundary lines say (auto, then manual)
    comps = pl.read_csv(figs / "tables" / "transcripts_compactions.csv").sort("boundary")
    assert comps["trigger"].to_list() == ["auto", "manual"] and comps["tokens_before"].to_list()[0] == 155321
    roles = pl.read_csv(figs / "tables" / "transcripts_entries_by_role.csv")
    assert set(roles["schema"]) == {"claude_code"} and roles["entries"].sum() == 22  # 11 entries per summary


# notebooks.run_all on small notebooks made here (each starts kernels: slow)


@pytest.mark.slow
def test_notebooks_run_without_the_kernel_transport_warning(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """``workbench figures`` once printed JupyterLab's 'Kernel is running over TCP without encryption' nine times."""
    import nbformat

    from workbench.notebooks import run_all

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("X = 1", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("print(X + 1)")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (tmp_path / "nbs").mkdir()
    nbformat.write(nb, tmp_path / "nbs" / "a.ipynb")
    nbformat.write(nb, tmp_path / "nbs" / "b.ipynb")
    assert run_all(tmp_path / "nbs", tmp_path / "build", timeout=60).exit_code == 0
    out, err = capfd.readouterr()
    assert "WARNING" not in err and "TCP" not in err and "Parent appears" not in err, err
    assert nbformat.read(tmp_path / "build" / "b.ipynb", as_version=4).cells[1].outputs[0]["text"] == "2\n"


@pytest.mark.slow
def test_a_notebook_that_does_not_read_data_is_not_rerun_for_someone_elses(tmp_path: Path) -> None:
    """``workbench figures --param DATA=mine`` ran real_logs (which reads the project's own tau-bench and Claude
    files, not DATA) and wrote its tables into the gallery's figures/ from within a user's run, from outside the
    checkout too. A notebook whose parameters cell has no DATA is skipped, with its reason, when DATA is given, and
    runs as before when it is not."""
    nbdir = tmp_path / "nbs"
    nbdir.mkdir()
    marker = tmp_path / "gallery.txt"
    own = nbformat.v4.new_notebook()
    own.cells = [nbformat.v4.new_code_cell(f"OUT = {str(marker)!r}", metadata={"tags": ["parameters"]}),
                 nbformat.v4.new_code_cell("open(OUT, 'w').write('written')")]
    own.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(own, nbdir / "a.ipynb")
    _notebook(nbdir / "b.ipynb", "assert DATA == 'mine', DATA")
    report = run_all(nbdir, tmp_path / "build", timeout=60, parameters={"DATA": "mine"})
    assert report.exit_code == 0 and [r.status for r in report.runs] == ["skipped", "ran"], str(report)
    assert "skipped a: it does not read DATA (it runs on the project's own inputs" in str(report)
    assert not marker.exists() and not (tmp_path / "build" / "a.ipynb").exists()
    assert run_all(nbdir, tmp_path / "build", timeout=60, names=["a"]).exit_code == 0 and marker.exists()


@pytest.mark.slow
def test_a_notebook_that_does_not_apply_is_skipped_with_its_reason(tmp_path: Path) -> None:
    import nbformat

    from workbench.notebooks import run_all

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("from workbench.datasets import NotApplicable\n"
                                          "raise NotApplicable('the runs have no success column')")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (tmp_path / "nbs").mkdir()
    nbformat.write(nb, tmp_path / "nbs" / "a.ipynb")
    part = nbformat.v4.new_notebook()  # one that runs in part: each analysis says what it did
    part.cells = [nbformat.v4.new_code_cell("from workbench.notebooks import Analyses\nanalyses = Analyses()\n"
                                            "analyses.ran('Table 3')\nanalyses.skipped('Table 5', 'no judge runs')\n"
                                            "_ = analyses.for_the_project('the bound', ['figures/b.png'], '/elsewhere')")]
    part.metadata["kernelspec"] = nb.metadata["kernelspec"]
    nbformat.write(part, tmp_path / "nbs" / "b.ipynb")
    report = run_all(tmp_path / "nbs", tmp_path / "build", timeout=60)
    assert report.exit_code == 0 and [r.status for r in report.runs] == ["skipped", "ran"]
    assert "skipped a: the runs have no success column" in str(report)
    lines = str(report).splitlines()
    assert lines[0].startswith("1 ran (1 of them in part), 1 skipped, 0 failed")
    assert lines[2].startswith("  ran b (") and lines[2].endswith("): Table 3")
    assert lines[3:] == ["    skipped Table 5: no judge runs",
                         "    skipped the bound: does not depend on the data: the gallery's copy is figures/b.png"]
    executed = nbformat.read(tmp_path / "build" / "b.ipynb", as_version=4)  # what a reader sees: a line of text
    assert [o["data"]["text/plain"] for o in executed.cells[0].outputs] == [
        "ran: Table 3", "skipped: Table 5 (no judge runs)",
        "skipped: the bound (does not depend on the data: the gallery's copy is figures/b.png)"]


@pytest.mark.slow
def test_a_part_that_does_not_apply_is_skipped_by_the_kernel_under_any_executor(tmp_path: Path) -> None:
    """Issue 59: NotApplicable raised in a cell failed papermill and nbconvert (only ``workbench figures`` called it a
    skip). Executed by nbclient with errors not allowed (what nbconvert does; ``run_all`` drives it and stops the
    kernel it starts): the raising cell ends there without an error, the rest of its part is empty, the next
    ``# part:`` runs, a cell's value is still shown, a parameters cell starts afresh, and any other exception is
    still an error."""
    cells = ["from workbench.notebooks import skip_when_not_applicable\nskip_when_not_applicable()\nran = []",
             "ran.append(1)\n6 * 7",
             "from workbench.datasets import NotApplicable\nran.append(2)\n"
             "raise NotApplicable('no run has a success column')\nran.append('after the raise')",
             "ran.append('rest of the skipped part')",
             "# part: the second analysis\nran.append(3)\nran",
             "# Parameters\nran.append(4)\nraise NotApplicable('again')",
             "ran.append('skipped again')",
             "# part: last\nran"]
    spec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (tmp_path / "nbs").mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells], metadata={"kernelspec": spec})
    nbformat.write(nb, tmp_path / "nbs" / "a.ipynb")
    failing = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cells[0]), nbformat.v4.new_code_cell("1 / 0")],
                                       metadata={"kernelspec": spec})
    nbformat.write(failing, tmp_path / "nbs" / "b.ipynb")
    report = run_all(tmp_path / "nbs", tmp_path / "build", timeout=60)
    # a: no error (its two skips are its only records, so the summary calls it skipped, with both reasons)
    assert [(r.name, r.status) for r in report.runs] == [("a", "skipped"), ("b", "failed")], str(report)
    assert report.runs[0].detail == "no run has a success column; again"
    assert "ZeroDivisionError" in report.runs[1].detail
    executed = nbformat.read(tmp_path / "build" / "a.ipynb", as_version=4)
    shown = [[o.get("data", {}).get("text/plain", o.get("text", "")) for o in c.outputs] for c in executed.cells]
    assert shown[1] == ["42"]
    assert shown[2] == ["skipped: the notebook (no run has a success column)"]
    assert shown[3] == [] and shown[6] == []
    assert shown[4] == ["[1, 2, 3]"]
    assert shown[5] == ["skipped: the notebook (again)"]
    assert shown[7] == ["[1, 2, 3, 4]"]


def _papermill_composition(tmp_path: Path, name: str, *extra: str) -> tuple[Path, Path]:
    """``summary_composition`` run by papermill from a directory outside the project on a labelled import; the
    executed copy and the figures' directory."""
    import subprocess
    import sys

    papermill = Path(sys.executable).with_name("papermill")
    data, figs, away = tmp_path / "own", tmp_path / "figs" / name, tmp_path / "away"
    away.mkdir()
    assert main(["import", str(ROOT / "tests" / "fixtures" / "labelled_summaries" / "own_header.jsonl"),
                 "--out", str(data)]) == 0
    out = subprocess.run([str(papermill), str(ROOT / "notebooks" / "summary_composition.ipynb"), f"{name}.ipynb",
                          "-p", "DATA", str(data), "-p", "FIGURES", str(figs), *extra],
                         capture_output=True, text=True, cwd=away, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return away / f"{name}.ipynb", figs


@pytest.mark.slow
def test_papermill_from_elsewhere_skips_a_notebook_the_data_cannot_serve(tmp_path: Path) -> None:
    """Issue 59: ``summary_composition`` on a labelled import (its default METHOD is the testbed's) stopped papermill
    with ``NotApplicable``. Run from a directory outside the project, it now succeeds, says why it did nothing, and
    writes no figure."""
    executed, figs = _papermill_composition(tmp_path, "skip")
    printed = [o.get("data", {}).get("text/plain", "") for c in nbformat.read(executed, as_version=4).cells
               for o in c.get("outputs", [])]
    assert "skipped: the notebook (no run has method 'prompting'; the runs have ['bart', 'pegasus'])" in printed
    assert not figs.exists() or not any(figs.rglob("*.png"))


@pytest.mark.extra  # a second papermill run of the same notebook: the extras' tier
def test_papermill_with_method_none_analyses_every_run(tmp_path: Path) -> None:
    """Issue 59: with ``-p METHOD None`` the same notebook on the same import analyses every run."""
    _executed, figs = _papermill_composition(tmp_path, "all", "-p", "METHOD", "None")
    assert (figs / "tables" / "sjc_table2_entries_by_section.csv").exists()


@pytest.mark.slow
def test_the_kernels_own_log_is_kept_aside_and_shown_only_when_a_notebook_fails(
        tmp_path: Path, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    """CI once failed because ipykernel logged a shutdown traceback to stderr after a notebook that ran.

    The kernel process's stderr (not the cells' output) goes to ``BUILD/NAME.kernel.log``: after a
    notebook that ran, only a pointer to it is printed; after one that failed, its end is printed.
    """
    import logging

    import nbformat

    from workbench.notebooks import run_all

    caplog.set_level(logging.INFO, logger="workbench")  # the pointer is an info line (it passed only after a test
    #                                                     that had set the level: an order the workers no longer keep)

    def notebook(name: str, *cells: str) -> None:
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbformat.write(nb, tmp_path / "nbs" / f"{name}.ipynb")

    (tmp_path / "nbs").mkdir()
    to_fd2 = "import os; os.write(2, b'Traceback (most recent call last):\\n  kernel-side marker 7f3a\\n')"
    notebook("a_ran", to_fd2, "print('fine')")
    notebook("b_quiet", "print('fine')")
    assert run_all(tmp_path / "nbs", tmp_path / "build", timeout=60, names=["a_ran", "b_quiet"]).exit_code == 0
    _, err = capfd.readouterr()
    assert "Traceback" not in err and "7f3a" not in err and "Traceback" not in caplog.text, err
    # the marker's two lines, and on a loaded machine any the kernel writes of its own (a third once, here)
    wrote = re.search(rf"\(the kernel wrote (\d+) lines to its log: {re.escape(str(tmp_path / 'build'))}/a_ran"
                      r"\.kernel\.log\)", caplog.text)
    assert wrote is not None and int(wrote.group(1)) >= 2, caplog.text
    assert "kernel-side marker 7f3a" in (tmp_path / "build" / "a_ran.kernel.log").read_text()
    # each notebook its own log: a quiet one's holds nothing of the one before (a loaded machine's kernel can
    # still write a line of its own, as CI's once did, so the empty log's removal is held by the test below)
    quiet = tmp_path / "build" / "b_quiet.kernel.log"
    assert not quiet.exists() or ("7f3a" not in quiet.read_text() and f"to its log: {quiet})" in caplog.text)

    caplog.clear()
    notebook("c_fails", to_fd2, "1 / 0")
    notebook("d_after", "print('still runs')")
    report = run_all(tmp_path / "nbs", tmp_path / "build", timeout=60, names=["c_fails", "d_after"])
    assert report.exit_code == 1 and report.names("failed") == ["c_fails"] and report.names("ran") == ["d_after"]
    log = caplog.text
    cell = log.index("c_fails.ipynb: cell 1: ZeroDivisionError: division by zero")
    assert log.index("kernel-side marker 7f3a") > cell, log
    assert str(report).startswith("1 ran, 0 skipped, 1 failed")


@pytest.mark.slow
def test_sigterm_stops_figures_and_its_kernel_at_once(tmp_path: Path) -> None:
    """Before: nbclient's own SIGTERM handler swallowed the signal while a cell ran, and `workbench figures` ran the
    notebook to its end (a stuck one never stopped). Now it stops within seconds with 143 and the kernel goes."""
    import os
    import signal
    import subprocess
    import sys
    import time

    nbdir = tmp_path / "nbs"
    nbdir.mkdir()
    mark = tmp_path / "kernel.pid"
    _notebook(nbdir / "slow.ipynb", f"import os, time\nopen({str(mark)!r}, 'w').write(str(os.getpid()))\n"
                                    "time.sleep(120)")
    proc = subprocess.Popen([sys.executable, "-m", "workbench.cli", "figures", "--notebooks", str(nbdir), "--build",
                             str(tmp_path / "build"), "--param", f"DATA={tmp_path}", "--timeout", "300"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 60
    while not (mark.exists() and mark.read_text()) and time.monotonic() < deadline:
        time.sleep(0.2)
    kernel = int(mark.read_text())
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 143 and "terminated (SIGTERM)" in err, (proc.returncode, err[-500:])
    assert time.monotonic() - sent < 20
    for _ in range(50):  # the kernel is gone (a moment after the runner returns)
        try:
            os.kill(kernel, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        os.kill(kernel, signal.SIGKILL)
        raise AssertionError("the kernel was left running")


@pytest.mark.slow
def test_human_labels_notebook_on_a_labelled_summaries_import(tmp_path: Path) -> None:
    """The human-labels notebook through DATA on a user's own labelled summaries (the hand-written file with three
    annotators): every table is written, the lexical judge is placed in it, small groups say why they have no
    AUROC; and the calibration notebook reads the directory's own annotation store."""
    data = tmp_path / "mine"
    assert main(["import", str(ROOT / "tests" / "fixtures" / "labelled_summaries" / "three_annotators.jsonl"),
                 "--out", str(data)]) == 0
    figs = tmp_path / "figs"
    report = run_all(ROOT / "notebooks", tmp_path / "build", timeout=300, cwd=ROOT,
                     parameters={"DATA": str(data), "FIGURES": str(figs), "N_BOOT": 100},
                     names=["human_labels", "judge_calibration"])
    assert report.exit_code == 0 and not report.names("skipped"), str(report)
    placed = pl.read_csv(figs / "tables" / "human_judges_placed.csv")
    assert placed["metric"].to_list() == ["my_metric", "lexical (mean)", "lexical (min)"]
    # paired (issue 59): every row on the test split's summaries that have every score: my_metric has 1 of 6
    assert placed["headline"].sum() == 1 and placed["n"].to_list() == [1, 1, 1]
    auroc = pl.read_csv(figs / "tables" / "human_entry_auroc.csv")
    assert auroc["reason"].drop_nulls().str.contains("an AUROC needs at least 5 of each").all()
    assert {"human_partial_correlation_forest.png", "calibration_reliability_lexical_support.png"} <= {
        p.name for p in figs.glob("*.png")}


@pytest.mark.slow
def test_the_tours_own_labels_validate_the_judge(tmp_path: Path) -> None:
    """Issue 43 item 1: the README's tour labels `support` only; the validation notebook on that store ended in
    IndexError (its `correct` field had no labels). Now it runs, and the field without labels is a row with its
    reason. The labels are two rounds of one annotator, written with the store's API as `workbench label` does."""
    import json

    from workbench.annotate import AnnotationStore

    data, sample, store = tmp_path / "small", tmp_path / "val.jsonl", tmp_path / "annotations"
    assert main(["simulate", "--out", str(data), "--tasks", "4", "--runs", "1", "--budgets", "48"]) == 0
    assert main(["sample", str(data), "--n", "24", "--out", str(sample)]) == 0
    ids = [json.loads(line)["item_id"] for line in sample.read_text().splitlines()]
    labels = AnnotationStore(store)
    for rnd in (1, 2):
        labels.add_many({"item_id": i, "annotator": "alice", "round": rnd, "field": "support",
                         "value": ("supported", "unsupported")[(k + (rnd == 2 and k % 5 == 0)) % 2]}
                        for k, i in enumerate(ids))
    figs = tmp_path / "figs"
    report = run_all(ROOT / "notebooks", tmp_path / "build", timeout=300, cwd=ROOT, names=["judge_validation"],
                     parameters={"DATA": str(data), "LABELS": str(store), "FIGURES": str(figs), "N_BOOT": 200,
                                 "COVERAGE_TRIALS": 20})
    assert report.exit_code == 0 and report.runs[0].status == "ran", str(report)
    table = pl.read_csv(figs / "tables" / "sjc_table12_auroc.csv")
    assert set(table["field"]) == {"support", "correct"}, table
    correct = table.filter(pl.col("field") == "correct")
    assert correct["estimate"].null_count() == correct.height and "no correct labels" in correct["reason"][0], correct
    assert table.filter(pl.col("field") == "support")["estimate"].null_count() == 0


def test_figures_refuses_to_write_executed_copies_over_the_sources(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 57 item 9: ``workbench figures --build notebooks`` wrote each executed copy (outputs, an injected
    parameters cell) over its source. A build directory that is the notebooks' own, however it is spelled, is
    refused before anything runs, and the sources stay as they were, to the byte."""
    nbdir = tmp_path / "nbs"
    nbdir.mkdir()
    (tmp_path / "tb").mkdir()
    (tmp_path / "tb" / "runs.parquet").write_bytes(b"")  # the testbed counts as present: nothing is generated
    _notebook(nbdir / "a.ipynb", "assert X == 1")
    before = (nbdir / "a.ipynb").read_bytes()
    for build in (nbdir, tmp_path / "nbs" / ".." / "nbs"):
        code = main(["figures", "--notebooks", str(nbdir), "--build", str(build), "--timeout", "60",
                     "--data", str(tmp_path / "tb"), "--param", "X=2"])
        err = capsys.readouterr().err
        assert code == 2, err
        assert "is the notebooks' own directory" in err and len(err.strip().splitlines()) == 1
        assert (nbdir / "a.ipynb").read_bytes() == before
        assert sorted(p.name for p in nbdir.iterdir()) == ["a.ipynb"]


@pytest.mark.extra  # a third agent_transcripts kernel (make test runs it in test_sessions_end_to_end): CI's extras
def test_the_coding_agent_notebook_takes_the_users_scores(tmp_path: Path) -> None:
    """Issue 59: the coding-agent notebook recomputed lexical scores whatever the user had. Given a scores table of
    a judge of one's own that finds no source for anything (every score 0), every role is 100% unsupported."""
    data = tmp_path / "cc"
    assert main(["import", str(ROOT / "workbench" / "datasets" / "example_logs" / "claude-code"), "--out", str(data), "--entries"]) == 0
    entries = pl.read_parquet(data / "entries.parquet")
    scores = tmp_path / "mine.parquet"
    pl.DataFrame({"entry_id": entries["entry_id"], "judge": ["mine"] * entries.height, "repeat": [0] * entries.height,
                  "score": [0.0] * entries.height}).write_parquet(scores)
    figs = tmp_path / "figs"
    report = run_all(ROOT / "notebooks", tmp_path / "build", timeout=300, cwd=ROOT,
                     parameters={"DATA": str(data), "SCORES": str(scores), "FIGURES": str(figs), "N_BOOT": 50},
                     names=["agent_transcripts"])
    assert report.exit_code == 0, str(report)
    roles = pl.read_csv(figs / "tables" / "transcripts_entries_by_role.csv")
    assert roles["entries"].sum() == entries.height and (roles["unsupported"] == roles["entries"]).all()
    tex = (figs / "tables" / "transcripts_unsupported_by_role.tex").read_text()
    assert "(mine score" in tex and "lexical" not in tex  # the tables name the judge that scored


def test_figures_imports_nbclient_without_the_iri_grammar() -> None:
    """``workbench figures``' process goes without jsonschema's ``iri`` check (rfc3987_syntax built ~35 parsers at
    import: 1.7 s of every run); nbformat still validates a notebook."""
    import subprocess
    import sys

    code = ("import sys; from workbench.cli.figures import without_iri_grammar; without_iri_grammar(); "
            "import nbformat, nbclient, jsonschema; nbformat.validate(nbformat.v4.new_notebook()); "
            "print('iri' in jsonschema.Draft7Validator.FORMAT_CHECKER.checkers, "
            "sys.modules.get('rfc3987_syntax') is not None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"], out.stderr


def test_a_kernel_log_with_nothing_in_it_goes_and_one_with_a_line_is_pointed_to(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from workbench.notebooks._runner import _report_kernel_log

    caplog.set_level(logging.INFO, logger="workbench")
    empty, blank, noisy = tmp_path / "empty.kernel.log", tmp_path / "blank.kernel.log", tmp_path / "noisy.kernel.log"
    empty.write_text("")
    blank.write_text("\n  \n")
    noisy.write_text("IOStream.flush timed out\n")
    for path in (empty, blank, noisy):
        _report_kernel_log(path, failed=False)
    assert not empty.exists() and not blank.exists() and noisy.exists()
    assert caplog.messages == [f"(the kernel wrote 1 line to its log: {noisy})"]
    _report_kernel_log(tmp_path / "never.kernel.log", failed=True)  # no file (the kernel never started): no error
    assert len(caplog.messages) == 1
