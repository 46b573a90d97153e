"""Notebooks give the same outputs however they are run: from the project root or from ``notebooks/`` (nbconvert,
JupyterLab), with papermill, and a user's own data never writes into the tracked gallery."""

from __future__ import annotations

import json

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.notebooks._runner import selected_notebooks
from workbench.notebooks import figures_dir, find_root, is_project_data, use_project_root

ROOT = Path(__file__).resolve().parents[2]


def test_the_root_is_found_from_the_root_from_notebooks_and_not_outside(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    assert find_root(ROOT) == find_root(ROOT / "notebooks") == find_root(ROOT / "workbench" / "datasets" / "example_logs") == ROOT
    assert find_root(tmp_path) is None
    monkeypatch.chdir(ROOT / "notebooks")
    assert use_project_root() == ROOT and Path.cwd() == ROOT / "notebooks"  # asked, it finds; it moves nothing
    assert use_project_root(chdir=True) == ROOT and Path.cwd() == ROOT  # a notebook asks to move
    monkeypatch.chdir(tmp_path)
    assert use_project_root(chdir=True) == ROOT  # outside a project: the checkout the package belongs to (issue 59)


def test_only_the_projects_own_data_writes_the_gallery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    assert is_project_data(None) and is_project_data("data/testbed") and is_project_data(ROOT / "data" / "real")
    assert not is_project_data(tmp_path / "cc") and not is_project_data("build/cc")
    assert figures_dir(None, "data/testbed") == ROOT / "figures"
    assert figures_dir(None, None, "workbench/datasets/example_logs/claude-code") == ROOT / "figures"
    mine = figures_dir(None, "data/testbed", tmp_path / "my-sessions")
    assert mine.parent == ROOT / "build" / "figures" and mine.name.startswith("my-sessions-")
    assert json.loads((mine / "inputs.json").read_text())["data"] == [str(ROOT / "data" / "testbed"),
                                                                      str(tmp_path / "my-sessions")]
    assert figures_dir(None, "data/testbed", tmp_path / "my-sessions") == mine  # the same inputs: the same place
    # issue 59: another labels store, or another target on the same data, never overwrites these results
    assert figures_dir(None, "data/testbed", tmp_path / "my-sessions", tmp_path / "my-labels") != mine
    targeted = figures_dir(None, "data/testbed", TARGET="factual")
    assert targeted != ROOT / "figures" and json.loads((targeted / "inputs.json").read_text())["TARGET"] == "factual"
    assert figures_dir("somewhere", tmp_path / "my-sessions") == Path("somewhere")
    monkeypatch.chdir(ROOT / "notebooks")  # from below the root (nbconvert's kernel): the same places
    assert figures_dir(None, "../data/testbed") == ROOT / "figures" and is_project_data("../data/testbed")


def test_library_path_defaults_are_the_projects_not_the_working_directory(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 40: plots.FIGURES was Path("figures") and export_table's default "figures/tables", wherever the
    process stood; both are the project's gallery now, and the testbed's place is the same project's."""
    import inspect

    from workbench.plots._style import FIGURES
    from workbench.datasets import DEFAULT_TESTBED
    from workbench.plots import export_table
    from workbench.notebooks import PROJECT_ROOT

    monkeypatch.chdir(tmp_path)
    assert PROJECT_ROOT == ROOT and DEFAULT_TESTBED == ROOT / "data" / "testbed"
    assert FIGURES == ROOT / "figures"
    assert inspect.signature(export_table).parameters["directory"].default == ROOT / "figures" / "tables"


def _copy_project(tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    for part in ("notebooks", "workbench/datasets/example_logs", "data/published"):
        shutil.copytree(ROOT / part, copy / part)
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    return copy


@pytest.mark.extra  # three kernels (26 CPU s): CI's tier of the heaviest tests; make test runs papermill elsewhere
def test_nbconvert_from_notebooks_and_papermill_with_your_data(tmp_path: Path) -> None:
    copy = _copy_project(tmp_path)
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    tracked = {p.relative_to(copy) for p in copy.rglob("*") if p.is_file()}
    # nbconvert from the project root: agent_transcripts reads the committed session fixtures, writes the gallery
    subprocess.run([str(bin_dir / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
                    "notebooks/agent_transcripts.ipynb", "--output", str(tmp_path / "a.ipynb")], cwd=copy, env=env,
                   check=True, capture_output=True, timeout=600)
    pngs = sorted((copy / "figures").glob("transcripts_*.png"))
    assert len(pngs) >= 5
    for png in pngs:  # the same bytes `workbench figures` committed
        assert png.read_bytes() == (ROOT / "figures" / png.name).read_bytes(), png.name
    # nbconvert as its documentation runs it, from notebooks/ (where it starts the kernel): the notebook still reads
    # and writes the project's paths, and the copy it leaves there (quickstart.nbconvert.ipynb) is not a notebook
    # `workbench figures` runs
    subprocess.run([str(bin_dir / "jupyter"), "nbconvert", "--to", "notebook", "--execute", "quickstart.ipynb"],
                   cwd=copy / "notebooks", env=env, check=True, capture_output=True, timeout=600)
    left = copy / "notebooks" / "quickstart.nbconvert.ipynb"
    assert left.exists() and left not in selected_notebooks(copy / "notebooks")
    assert len(selected_notebooks(copy / "notebooks")) == len(selected_notebooks(ROOT / "notebooks"))
    made = copy / "figures" / "quickstart_entries_by_section.png"
    assert made.read_bytes() == (ROOT / "figures" / "quickstart_entries_by_section.png").read_bytes()
    assert not (copy / "notebooks" / "figures").exists() and not (copy / "notebooks" / "data").exists()
    # papermill, a log of one's own: the figures go under build/figures/<its name>, the gallery is untouched
    mine = tmp_path / "elsewhere" / "mine.jsonl"
    mine.parent.mkdir()
    shutil.copy(ROOT / "workbench" / "datasets" / "example_logs" / "invoice_log.jsonl", mine)
    before = {p.name: p.read_bytes() for p in (copy / "figures").rglob("*") if p.is_file()}
    subprocess.run([str(bin_dir / "papermill"), "notebooks/quickstart.ipynb", str(tmp_path / "p.ipynb"),
                    "-p", "DATA", str(mine)], cwd=copy, env=env, check=True, capture_output=True, timeout=600)
    assert [p.parent.name.startswith("mine.jsonl-") for p in
            (copy / "build" / "figures").glob("*/quickstart_entries_by_section.png")] == [True]
    assert {p.name: p.read_bytes() for p in (copy / "figures").rglob("*") if p.is_file()} == before  # untouched
    # nothing was written outside figures/ and build/ (no second testbed, no notebooks/figures/)
    stray = {p.relative_to(copy) for p in copy.rglob("*") if p.is_file()} - tracked
    stray.discard(left.relative_to(copy))
    assert not [p for p in stray if p.parts[0] not in ("figures", "build")], sorted(map(str, stray))[:10]


@pytest.mark.extra  # the project's relative defaults from elsewhere: CI's extras tier (papermill from elsewhere on DATA: make test)
def test_papermill_from_another_directory_reads_the_projects_default_data(tmp_path: Path) -> None:
    """Issue 59: ``papermill /path/to/notebooks/quickstart.ipynb out.ipynb`` run outside the project stopped with
    "workbench/datasets/example_logs/invoice_log.jsonl: no such file": a relative parameter now means the project's, from anywhere."""
    import sys

    papermill = Path(sys.executable).parent / "papermill"
    done = subprocess.run([str(papermill), str(ROOT / "notebooks" / "quickstart.ipynb"), str(tmp_path / "out.ipynb"),
                           "-p", "FIGURES", str(tmp_path / "figs")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-800:]
    assert (tmp_path / "figs" / "quickstart_entries_by_section.png").exists()


def test_a_figures_directory_is_named_by_16_hex_characters_and_its_manifest_is_compared(tmp_path: Path) -> None:
    """Faults round 5, item 10: 8 hex characters collided (a pair in 71,342 tries) and inputs.json was never read
    back, so a second run's figures went into the first's directory under its manifest. Here a directory holding
    another run's manifest under this run's name (a collision, made by hand) is not used: the full digest names a
    directory of its own, and the first manifest is left as it was."""
    import hashlib
    import shutil

    data = tmp_path / "mine-collide"
    place = figures_dir(None, data)
    key = place.name.rsplit("-", 1)[1]
    said = json.loads((place / "inputs.json").read_text())
    assert len(key) == 16 and key == hashlib.sha256(json.dumps(said, sort_keys=True).encode()).hexdigest()[:16]
    other = {"data": ["/somewhere/else"]}
    (place / "inputs.json").write_text(json.dumps(other))
    try:
        moved = figures_dir(None, data)
        assert moved != place and len(moved.name.rsplit("-", 1)[1]) == 64
        assert json.loads((moved / "inputs.json").read_text()) == said
        assert json.loads((place / "inputs.json").read_text()) == other
    finally:
        shutil.rmtree(place, ignore_errors=True)
        shutil.rmtree(place.with_name(f"{data.name}-{hashlib.sha256(json.dumps(said, sort_keys=True).encode()).hexdigest()}"),
                      ignore_errors=True)


def test_figures_into_the_notebooks_refuses_before_it_generates_the_testbed(tmp_path: Path) -> None:
    """Faults round 5, item 12: in a fresh clone (no testbed), ``workbench figures --build notebooks`` generated the
    testbed (minutes) and then refused. A copy of the notebooks in a project without data: refused at once."""
    import shutil
    import subprocess
    import sys

    project = tmp_path / "clone"
    shutil.copytree(ROOT / "notebooks", project / "notebooks")
    (project / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    done = subprocess.run([sys.executable, "-m", "workbench.cli.main", "figures", "--notebooks", "notebooks",
                           "--build", "notebooks"], cwd=project, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "is the notebooks' own directory" in done.stderr
    assert not (project / "data").exists()


def test_labels_added_to_the_datas_own_store_get_results_of_their_own(tmp_path: Path) -> None:
    """Issue 79: the output folder was named by the data's path only, so labels added to the data's own store and a
    rerun replaced the earlier results. The labels' content enters the hash (the sha256 of every label file, here
    recomputed by hand); the same labels give the same folder."""
    import hashlib
    import shutil

    from workbench._util.project import labels_digest

    data = tmp_path / "mine-labels"
    (data / "annotations" / "labels").mkdir(parents=True)
    made = []
    try:
        before = figures_dir(None, data)
        made.append(before)
        assert labels_digest(data) is None and "labels" not in json.loads((before / "inputs.json").read_text())
        store = data / "annotations" / "labels" / "alice-1.jsonl"
        store.write_text('{"item_id": "e1", "value": "supported"}\n')
        after = figures_dir(None, data)
        made.append(after)
        want = hashlib.sha256(b"annotations/labels/alice-1.jsonl\0" + store.read_bytes() + b"\0").hexdigest()
        assert labels_digest(data) == want and after != before
        assert json.loads((after / "inputs.json").read_text())["labels"] == {str(data.resolve()): want}
        assert figures_dir(None, data) == after  # the same labels: the same folder
        with store.open("a") as fh:
            fh.write('{"item_id": "e2", "value": "unsupported"}\n')
        made.append(figures_dir(None, data))
        assert made[-1] not in (before, after)
    finally:
        for place in made:
            shutil.rmtree(place, ignore_errors=True)
