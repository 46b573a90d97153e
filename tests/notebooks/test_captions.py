"""Issue 79: every sentence a notebook prints is true of the data it ran on. A caption written for the project's
own data (the testbed, a committed example, a published benchmark) is shown through
:func:`workbench.notebooks.caption` only when every data parameter it names is that data; no markdown cell states
what a figure of the testbed shows."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))


def _captions(path: Path) -> list[tuple[str, list[str]]]:
    """Every ``caption(TEXT, DATA...)`` call of a notebook: its text and the names of its data arguments."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "caption":
            text = node.args[0].value if isinstance(node.args[0], ast.Constant) else ""
            found.append((str(text), [a.id for a in node.args[1:] if isinstance(a, ast.Name)]))
    return found


def test_no_markdown_cell_states_what_a_figure_of_the_project_data_shows() -> None:
    """A markdown cell is shown whatever the data: a figure's caption there (``**Figure (testbed...)**``) would
    describe the testbed under a researcher's data. Only captions true of any data (a published table, a bound)
    stay markdown; every other is a caption() call naming the data parameters it is about."""
    for path in NOTEBOOKS:
        text = path.read_text(encoding="utf-8")
        for cell in re.split(r"(?m)^(?=# %%)", text):
            if cell.startswith("# %% [markdown]"):
                label = re.search(r"^# \*\*(?:Figure|Table) \(([^)]*)\)", cell, re.M)
                assert label is None or any(k in label.group(1) for k in ("published", "closed form")), \
                    (path.name, label.group(0) if label else None)
        parameters = set(re.findall(r"(?m)^([A-Z_]+): ", text))
        for caption_text, data in _captions(path):
            assert data and set(data) <= parameters, (path.name, caption_text[:60], data)


def test_a_caption_is_shown_on_the_projects_data_and_only_there(tmp_path: Path) -> None:
    """caption() in a kernel-less run: the Markdown on the project's data (None, a path under data/), one line
    saying it is not shown on any other."""
    code = ("from workbench.notebooks import caption\n"
            "caption('**Figure (testbed).** most entries sit in the top bin', None, 'data/testbed')\n"
            f"caption('**Figure (testbed).** most entries sit in the top bin', 'data/testbed', {str(tmp_path)!r})\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "**Figure (testbed).** most entries sit in the top bin"  # (outside a kernel: the text)
    assert lines[1] == f"(the caption written for the project's own data is not shown here: the data is {tmp_path})"


@pytest.mark.slow
@pytest.mark.extra
def test_every_notebook_on_a_labelled_summaries_import_prints_no_project_caption(tmp_path: Path) -> None:
    """Every notebook, run by ``workbench figures`` from outside the checkout on an import of labelled summaries
    (not agent logs, not the testbed): none fails, none prints a caption written for the project's data, the
    coding-agent notebook skips with its reason, and the report says where the figures went."""
    data = tmp_path / "summaries"
    fixture = ROOT / "tests" / "fixtures" / "labelled_summaries" / "three_annotators.jsonl"
    workbench = [sys.executable, "-m", "workbench.cli.main"]
    assert subprocess.run([*workbench, "import", str(fixture), "--out", str(data)], capture_output=True,
                          cwd=tmp_path, timeout=300).returncode == 0
    done = subprocess.run([*workbench, "figures", "--param", f"DATA={data}", "--build", str(tmp_path / "built")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=1800)
    assert " 0 failed" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    assert "skipped agent_transcripts: DATA holds no coding-agent sessions" in done.stdout
    assert f"figures and tables in {ROOT / 'build' / 'figures'}" in done.stdout  # (never the gallery's figures/)
    about_data = {p.stem: [t[:80] for t, data in _captions(p) if "DATA" in data] for p in NOTEBOOKS}
    checked = 0
    for executed in (tmp_path / "built").glob("*.ipynb"):
        outputs = "\n".join(json.dumps(c.get("outputs", [])) for c in json.loads(executed.read_text())["cells"])
        for text in about_data.get(executed.stem, []):  # (a notebook without DATA ran on the project's own inputs)
            assert json.dumps(text)[1:-1] not in outputs, (executed.name, text)
            checked += 1
    assert checked >= 20


def test_figures_from_outside_the_checkout_names_where_it_looked(tmp_path: Path) -> None:
    """Before: from another directory ``workbench figures`` failed with "notebooks: no such directory", and a relative
    ``--param DATA=xa`` found nowhere failed inside a notebook as "no such file", not saying it was read from the
    checkout. Now the checkout's notebooks are run (and named), and the missing input is refused up front with both
    places it was looked for."""
    done = subprocess.run([sys.executable, "-m", "workbench.cli.main", "figures", "--only", "quickstart",
                           "--param", "DATA=xa"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 2
    assert f"notebooks: {ROOT / 'notebooks'} (the checkout workbench runs from" in done.stdout
    assert f"exists from here ({tmp_path})" in done.stderr and f"in the notebooks' project ({ROOT})" in done.stderr
    assert "got xa" in done.stderr
