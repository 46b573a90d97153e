"""Plot export, LaTeX tables and the notebook runner behind ``workbench figures``."""

from __future__ import annotations

from pathlib import Path

import nbformat
import polars as pl
import pytest

from workbench import plots
from workbench.cli import main


def test_export_writes_pdf_with_embedded_truetype_and_png(tmp_path: Path) -> None:
    counts = pl.DataFrame({"section": ["Decisions", "Open TODOs"], "entries": [3, 5]})
    fig = plots.entries_by_section(counts)
    assert [b.get_width() for b in fig.axes[0].patches] == [5, 3]  # drawn bottom-up: first row on top
    pdf, png = plots.export(fig, "x", tmp_path)
    data = pdf.read_bytes()
    assert b"/FontFile2" in data and b"/Type3" not in data  # TrueType embedded (fonttype 42)
    from PIL import Image

    with Image.open(png) as im:
        assert im.info["dpi"][0] == pytest.approx(200, abs=1)


def test_latex_table_is_booktabs_and_escaped(tmp_path: Path) -> None:
    frame = pl.DataFrame({"section": ["Constraints/Rules & more_", "50%"], "share": [0.12345, 1.0]})
    csv, tex = plots.export_table(frame, "t", tmp_path)
    text = tex.read_text()
    assert r"\toprule" in text and r"\bottomrule" in text
    assert r"Constraints/Rules \& more\_" in text and r"50\%" in text and "0.123" in text
    assert pl.read_csv(csv).equals(frame)


def _notebook(path: Path, source: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("X = 1", metadata={"tags": ["parameters"]}), nbformat.v4.new_code_cell(source)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


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
