"""Tables for a paper: words for headers, an interval in one cell, p-values as ``<0.001``, a label, and a width
that fits LaTeX's ``article`` column (345pt), checked by compiling with pdfTeX (Debian's texlive; .ci/run
installs it; outside CI the compiling tests skip without it, under CI=true they fail)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

from workbench import plots
from workbench.plots._latex import SIZES, TEXT_WIDTH, _total, columns_for, format_number, format_p

from tests.conftest import system_tool

ROOT = Path(__file__).resolve().parents[2]


def _siunitx() -> None:
    """The tables' numbers need siunitx (Debian's texlive-science): without it the test skips, or fails under CI."""
    import os

    kpsewhich = shutil.which("kpsewhich")
    if kpsewhich and subprocess.run([kpsewhich, "siunitx.sty"], capture_output=True).returncode == 0:
        return
    if os.environ.get("CI") == "true":
        pytest.fail("CI=true but no siunitx.sty: .ci/run installs Debian's texlive-science")
    pytest.skip("no siunitx.sty on this machine (apt-get install texlive-science); the test runs in CI")


def _compile(body: str, tmp: Path) -> str:
    """The log of an ``article`` (10pt, 345pt text width) holding ``body``; fails on a LaTeX error."""
    _siunitx()
    doc = "\\documentclass{article}\n\\usepackage{booktabs,array,siunitx}\n\\begin{document}\n" + body + "\n\\end{document}\n"
    (tmp / "doc.tex").write_text(doc, encoding="utf-8")
    run = subprocess.run([system_tool("pdflatex", install="texlive-latex-base texlive-latex-recommended"), "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], cwd=tmp,
                         capture_output=True, text=True, timeout=120)
    log = (tmp / "doc.log").read_text(encoding="utf-8", errors="replace")
    assert run.returncode == 0, log[-3000:]
    return log


def test_numbers_read_as_a_paper_prints_them() -> None:
    assert [format_p(p) for p in (0.0, 0.0004, 0.001, 0.0456, 1.0, None, float("nan"))] == \
        ["<0.001", "<0.001", "0.001", "0.046", "1.000", "--", "--"]
    assert [format_number(v) for v in (3, 0.71234, 123.456, 15008.0, None, float("inf"))] == \
        ["3", "0.712", "123.5", "15,008", "--", "--"]


def test_interval_in_one_cell_headers_in_words_and_label(tmp_path: Path) -> None:
    frame = pl.DataFrame({"judge": ["lexical"], "estimate": [0.712], "ci_low": [0.651], "ci_high": [0.774],
                          "n": [300], "n_boot": [2000], "level": [0.95], "method": ["t"], "p_holm": [0.0002],
                          "tokens_before": [150000]})
    csv, tex = plots.export_table(frame, "auroc", tmp_path, "AUROC", rename={"judge": "Source judge"})
    text = tex.read_text()
    assert r"\label{tab:auroc}" in text and r"\caption{AUROC}" in text
    head, row = [line for line in text.splitlines() if line.endswith(r"\\")][:2]
    assert head == r"Source judge & \multicolumn{4}{c}{Estimate [95\% CI]} & {n} & {p (Holm)} & {Tokens before} \\"
    assert row == r"lexical & 0.712 & 0.651 & 0.774 &  & 300 & <0.001 & 150000 \\"  # siunitx S columns
    spec = re.search(r"\\begin\{tabular\}\{(.*)\}\n", text)
    assert spec and spec.group(1) == (r"lS[table-format=1.3]@{\ [}S[table-format=1.3]@{,\ }S[table-format=1.3]"
                                      r"@{]}l@{\hspace{2\tabcolsep}}S[table-format=3.0]S[table-format=<1.3]S[table-format=6.0]")
    assert pl.read_csv(csv).columns == frame.columns  # the CSV keeps every column
    chosen = plots.to_latex(frame, columns=["judge", "n"], formats={"n": ",d"}, label=None)
    assert r"\label" not in chosen and "lexical & 300" in chosen and "Estimate" not in chosen
    with pytest.raises(ValueError, match="no column"):
        plots.to_latex(frame, columns=["judge", "auroc"])


@pytest.mark.slow  # compiles with pdfLaTeX: an end-to-end test
def test_width_estimate_matches_pdftex(tmp_path: Path) -> None:
    """The estimate the layout relies on, against pdfTeX's width of the same tabular at each size."""
    frame = pl.DataFrame({"section": ["Constraints/Rules", "Open TODOs", "Pending asks"],
                          "entries": [120, 64, 9], "estimate": [0.25, 0.16, 0.11], "ci_low": [0.2, 0.1, 0.0],
                          "ci_high": [0.31, 0.22, 0.3], "p_value": [0.0001, 0.2, 0.74]})
    cols = columns_for(frame)
    body, sizes = [], ("", r"\small", r"\footnotesize")
    for size in sizes:
        tabular = re.search(r"\\begin\{tabular\}.*?\\end\{tabular\}", plots.to_latex(frame, width=1e9), re.S)
        assert tabular
        body.append(f"\\sbox0{{{size}{tabular.group(0)}}}\\typeout{{WIDTH=\\the\\wd0}}")
    measured = [float(w) for w in re.findall(r"WIDTH=([\d.]+)pt", _compile("\n".join(body), tmp_path))]
    estimated = [_total(cols, dict(SIZES)[size]) for size in sizes]  # the width to_latex fits by
    for m, e in zip(measured, estimated, strict=True):
        assert abs(e - m) / m < 0.03, (measured, estimated)


def _overfull(log: str) -> list[str]:
    return re.findall(r"Overfull \\hbox \(([\d.]+pt) too wide\)", log)


@pytest.mark.slow  # compiles with pdfLaTeX: an end-to-end test
def test_wide_tables_are_fitted_to_the_column(tmp_path: Path) -> None:
    """16 numeric columns (SJC Table 12's shape) and a long text column: no overfull box once compiled."""
    wide = pl.DataFrame({"judge": ["lexical", "jev-compatible"], **{f"statistic_{i}": [0.123456, 12345.6]
                                                                      for i in range(15)}})
    prose = pl.DataFrame({"run_id": ["claude-code:0f3c9a2e-7d41-4b6e-9a55-1c2d3e4f5a6b"],
                          "entry": [" ".join(["the agent renamed the invoice field and reran the tests"] * 6)],
                          "score": [0.5]})
    body = []
    for name, frame in (("wide", wide), ("prose", prose)):
        plots.export_table(frame, name, tmp_path, name)
        body.append(f"\\input{{{name}.tex}}\\clearpage")
    assert r"\par\medskip" in (tmp_path / "wide.tex").read_text()  # split into stacked parts
    assert _overfull(_compile("\n".join(body), tmp_path)) == []


def test_every_exported_table_fits_an_article_column(tmp_path: Path) -> None:
    """The gallery's tables as ``make figures`` wrote them: each has a label, words for headers, and fits 345pt."""
    tables = sorted((ROOT / "figures" / "tables").glob("*.tex"))
    if not tables:  # the tables are not tracked: .ci/run runs this test again after `make figures`
        pytest.skip("no figures/tables/*.tex yet: run `make figures` first")
    assert len(tables) >= 30
    for path in tables:
        text = path.read_text(encoding="utf-8")
        assert rf"\label{{tab:{path.stem}}}" in text, path.name
        for head in re.findall(r"\\toprule\n(.*?)\n\\midrule", text):
            assert r"\_" not in head, f"{path.name}: a raw column name in the header: {head}"
        for raw in ("no\\_compression", "prompting\\_sjc", "user\\_messages"):
            assert raw not in text, f"{path.name}: a raw id ({raw}) where its display name belongs"
        shutil.copy(path, tmp_path / path.name)
    assert TEXT_WIDTH == 345.0
    log = _compile("\n".join(f"\\input{{{p.name}}}\\clearpage" for p in tables), tmp_path)
    assert _overfull(log) == [], "a table is wider than the article column"
    assert "Float too large" not in log, "a table is taller than the article's page"  # issue 79


def test_max_rows_prints_the_first_rows_and_says_so_while_the_csv_keeps_all(tmp_path: Path) -> None:
    frame = pl.DataFrame({"run": [f"r{i}" for i in range(100)], "steps": list(range(100))})
    csv, tex = plots.export_table(frame, "many", tmp_path, "Sessions", max_rows=7)
    assert pl.read_csv(csv).equals(frame)
    body = tex.read_text()
    printed = re.findall(r"^r\d+ & \d+ \\\\$", body, flags=re.MULTILINE)
    assert printed == [f"r{i} & {i} \\\\" for i in range(7)]
    assert r"\caption{Sessions (the first 7 of 100 rows; every row in many.csv)}" in body
    _, short = plots.export_table(frame.head(7), "few", tmp_path, "Sessions", max_rows=7)
    assert r"\caption{Sessions}" in short.read_text()  # nothing left out, nothing said


def test_a_scan_is_streamed_into_the_csv_and_only_the_printed_rows_are_read(tmp_path: Path) -> None:
    """A LazyFrame (a scan of a table too large to hold) writes the bytes polars' own write_csv writes for the
    collected frame, and the same LaTeX as the frame."""
    frame = pl.DataFrame({"run": [f"r{i}" for i in range(100)], "share": [i / 7 for i in range(100)],
                          "note": [None if i % 3 else "x,\"y\"" for i in range(100)]})
    frame.write_parquet(tmp_path / "t.parquet")
    csv, tex = plots.export_table(pl.scan_parquet(tmp_path / "t.parquet"), "scan", tmp_path / "out", "Sessions",
                                  max_rows=7)
    assert csv.read_bytes() == frame.write_csv().encode()
    _, eager_tex = plots.export_table(frame, "scan", tmp_path / "eager", "Sessions", max_rows=7)
    assert tex.read_text() == eager_tex.read_text() and "the first 7 of 100 rows" in tex.read_text()


def test_a_reason_column_prints_only_when_a_row_has_a_reason() -> None:
    """judge_table says why a row has no AUROC in ``reason``; the exported table shows that column only when some
    row fills it (the testbed's Table 12, where every AUROC exists, prints as it did)."""
    import polars as pl

    from workbench.plots import to_latex

    rows = pl.DataFrame({"judge": ["lexical", "lexical"], "estimate": [0.9, 0.6], "reason": [None, None]},
                        schema_overrides={"reason": pl.Utf8})
    assert "Reason" not in to_latex(rows, "t")
    why = rows.with_columns(pl.Series("reason", [None, "no correct labels"]), pl.Series("estimate", [0.9, None]))
    assert "Reason" in to_latex(why, "t") and "no correct labels" in to_latex(why, "t")


def test_less_than_and_bars_print_as_themselves_in_a_plain_article() -> None:
    """In a plain ``article`` (OT1 encoding) a bare ``<`` prints as an inverted exclamation mark: p-values read
    ``¡0.001`` in the Williams and comparison tables. They are escaped with the text commands LaTeX defines."""
    from workbench.plots._latex import tex_escape

    assert tex_escape("<0.001 | a>b") == r"\textless{}0.001 \textbar{} a\textgreater{}b"


def test_the_guide_names_the_packages_the_tables_ask_for() -> None:
    """The .tex header and the README said different things (booktabs vs booktabs,array): one list for both (the
    guide's getting-started page now says it)."""
    from workbench.plots._latex import PACKAGES, PREAMBLE_COMMENT

    packages = r"\usepackage{" + ",".join(PACKAGES) + "}"
    guide = (ROOT / "docs" / "guide" / "getting-started.md").read_text(encoding="utf-8")
    assert packages in PREAMBLE_COMMENT and packages in guide
    assert packages == r"\usepackage{booktabs,array,siunitx}"


@pytest.mark.slow  # compiles with pdfLaTeX: an end-to-end test
def test_a_minimal_article_takes_two_tables_and_a_paper_style_figure(tmp_path: Path,
                                                                      small_testbed: dict[str, pl.DataFrame]) -> None:
    """What a user's write-up does: \\input two exported tables and \\includegraphics one figure drawn in the paper
    style, at its natural size, in a 10pt article. Read back from the PDF (pdftotext, not our own text): no overfull
    box, a math minus (U+2212) in every negative number and never a hyphen, methods by their display names."""
    import matplotlib.pyplot as plt

    from workbench.stats import compare_to_baseline
    from workbench.stats import reliability

    runs = small_testbed["runs"]
    diffs = compare_to_baseline(runs, "prompting", "acc", by=("budget",), n_boot=200)
    assert (diffs["estimate"] < 0).any()  # a negative number to print
    plots.export_table(diffs, "compare", tmp_path, f"{plots.display_name('acc')}: each method minus "
                       f"{plots.display_name('prompting')}", columns=["a", "estimate", "n", "p_holm"],
                       formats={"estimate": "+.3f"}, rename={"estimate": "Difference [95% CI]", "n": "Pairs"})
    plots.export_table(reliability(runs, k=2, by="method", n_boot=200), "reliability", tmp_path, "Acc and Pass^2",
                       columns=["method", "acc", "pass_hat_k", "n_tasks"])
    try:
        plots.use_style("paper")
        pdf, _ = plots.export(plots.compare.forest(diffs, "budget"), "forest", tmp_path)
    finally:
        plots.use_style("gallery")
        plt.close("all")
    body = ("\\section*{Results}\nThe methods differ on accuracy (Table~\\ref{tab:compare}).\n"
            "\\input{compare.tex}\n\\input{reliability.tex}\n"
            f"\\begin{{figure}}[h]\n\\centering\n\\includegraphics{{{pdf.name}}}\n\\caption{{Paired differences.}}\n"
            "\\end{figure}\n\\clearpage")
    doc = ("\\documentclass[10pt]{article}\n\\usepackage{booktabs,array,siunitx}\n\\usepackage{graphicx}\n"
           f"\\begin{{document}}\n{body}\n\\end{{document}}\n")
    (tmp_path / "article.tex").write_text(doc, encoding="utf-8")
    pdflatex = system_tool("pdflatex", install="texlive-latex-base texlive-latex-recommended texlive-science")
    _siunitx()
    run = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "article.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    log = (tmp_path / "article.log").read_text(encoding="utf-8", errors="replace")
    assert run.returncode == 0, log[-3000:]
    assert _overfull(log) == [] and "Overfull \\vbox" not in log
    text = subprocess.run([system_tool("pdftotext", install="poppler-utils"), "-layout", "article.pdf", "-"],
                          cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert re.search("\u2212\\d", text), text[:500]  # a math minus before a digit
    assert not re.search(r"(?<![\w\u2212])-\d", text), "a hyphen printed as a minus sign"
    for name in ("No compression", "Prompting + SJC", "FIFO", "Difference", "Pairs", "p (Holm)", "Passk [95% CI]"):
        assert name in text, name  # Pass^k with k a superscript (pdftotext reads it in line), not an accent
    assert "ˆ" not in text
    assert "no_compression" not in text and "no compression" not in text and "prompting_sjc" not in text


@pytest.mark.slow  # compiles with pdfLaTeX: an end-to-end test
def test_a_table_of_no_rows_prints_its_headers(tmp_path: Path) -> None:
    """A session log with one summary each has no persistence rows: the table is its headers (it raised TypeError)."""
    empty = pl.DataFrame(schema={"d": pl.Int64, "supported": pl.Boolean, "estimate": pl.Float64,
                                 "ci_low": pl.Float64, "ci_high": pl.Float64, "share": pl.Float64})
    text = plots.to_latex(empty, "Persistence")
    assert r"\multicolumn{4}{c}{Estimate [CI]}" in text and "S[table-format=1.0]" in text
    assert _overfull(_compile(text, tmp_path)) == []



def test_a_row_without_an_interval_prints_its_estimate_alone() -> None:
    """Published baselines have a correlation but no interval: '0.055 [--, --]' read as an interval that failed; the
    estimate prints alone, in a cell as wide as the bracket beside it, so it stays aligned with the rows above."""
    frame = pl.DataFrame({"metric": ["lexical (min)", "Bleu"], "r": [0.126, 0.055], "r_ci_low": [0.074, None],
                          "r_ci_high": [0.179, None]})
    rows = [line for line in plots.to_latex(frame).splitlines() if line.endswith(r"\\")][1:]
    assert rows == [r"lexical (min) & 0.126 & 0.074 & 0.179 &  \\",
                    r"Bleu & \multicolumn{1}{S[table-format=1.3]@{\hphantom{\ [}}}{0.055} & \multicolumn{3}{l}{} \\"]


@pytest.mark.parametrize("lazy", [False, True])
def test_a_tables_csv_never_starts_a_formula_and_its_tex_shows_the_text(tmp_path: Path, lazy: bool) -> None:
    """Issue 57 item 3: the notebooks' CSV tables are opened in spreadsheets. A text cell that starts with = + - @,
    tab or CR gets a leading apostrophe (OWASP); numbers, negative ones too, stay numbers; the LaTeX shows the
    text itself."""
    frame = pl.DataFrame({"method": ["=cmd|' /C calc'!A0", "+plus", "-minus", "@at", "\ttab", "plain"],
                          "difference": [-0.169, 0.2, -1.0, 0.0, 1.5, -2.25]})
    csv, tex = plots.export_table(frame.lazy() if lazy else frame, "cells", tmp_path, "Cells")
    back = pl.read_csv(csv)
    assert back["method"].to_list() == ["'=cmd|' /C calc'!A0", "'+plus", "'-minus", "'@at", "'\ttab", "plain"]
    assert back["difference"].to_list() == frame["difference"].to_list()
    assert "+plus" in tex.read_text() and "'+plus" not in tex.read_text()


@pytest.mark.slow
def test_the_tables_of_a_users_own_labelled_data_fit_and_say_only_words(tmp_path: Path) -> None:
    """Issue 59: the human-labels tables on a user's import were a page too long, with rows of nan at n = 0 and
    Python's True/False. On the hand-made file with a header (two targets, missing metric values, its own question)
    every table the notebook writes compiles, fits the article column, and holds neither."""
    from workbench.cli.main import main
    from workbench.notebooks import run_all

    import json

    from workbench.annotate import AnnotationStore

    data, mine = tmp_path / "own", tmp_path / "mine"
    assert main(["import", str(ROOT / "tests" / "fixtures" / "labelled_summaries" / "own_header.jsonl"),
                 "--out", str(data)]) == 0
    assert main(["sample", str(data), "--n", "6", "--out", str(tmp_path / "s.jsonl")]) == 0
    store = AnnotationStore(mine)  # one's own labels, beside the workers' the file brought
    for k, line in enumerate((tmp_path / "s.jsonl").read_text().splitlines()):
        item = json.loads(line)
        store.add(item_id=item["item_id"], annotator="me", round=1, field="support",
                  value=("supported", "unsupported")[k % 2], question=item["question"])
    figs = tmp_path / "figs"
    report = run_all(ROOT / "notebooks", tmp_path / "build", timeout=300, cwd=ROOT,
                     parameters={"DATA": str(data), "FIGURES": str(figs), "N_BOOT": 50, "LABELS": str(mine)},
                     names=["human_labels", "judge_validation"])
    assert report.exit_code == 0 and not report.names("skipped"), str(report)
    agreement = pl.read_csv(figs / "tables" / "sjc_appG_agreement.csv")  # mine next to each worker's
    assert {(a, b) for a, b in agreement.select("a", "b").iter_rows()} == {
        ("me", "worker1"), ("me", "worker2"), ("worker1", "worker2")}
    import nbformat

    printed = "".join(o.get("text", "") for c in nbformat.read(tmp_path / "build" / "human_labels.ipynb", 4).cells
                      for o in c.get("outputs", []))
    assert "TARGET = 'human_faithful', the first of the data's human targets" in printed  # no TARGET given
    tables = sorted((figs / "tables").glob("*.tex"))
    assert len(tables) >= 8
    for path in tables:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\b(True|False|nan)\b", text), path.name
        assert "FRANK" not in text, path.name
        shutil.copy(path, tmp_path / path.name)
    log = _compile("\n".join(f"\\input{{{p.name}}}\\clearpage" for p in tables), tmp_path)
    assert _overfull(log) == [] and "Float too large" not in log


def test_a_table_taller_than_the_page_is_split_into_floats_that_fit(tmp_path: Path) -> None:
    """Issue 79: whowhen_accuracy, whowhen_comparison and three FRANK tables were "Float too large" by 231-413pt.
    A table whose rows do not fit the page's 550pt is printed as several floats, the first captioned and labelled,
    the others saying which rows they continue with; each fits (pdfTeX's log) and every row is printed once."""
    import polars as pl

    for n, parts in ((160, 1), (90, 3)):  # one part, and three parts side by side stacked (a wide table)
        frame = pl.DataFrame({"attributor": [f"attributor {i}" for i in range(n)],
                              **{f"measure {k}": [0.5 + k / 100] * n for k in range(1 if parts == 1 else 14)}})
        tex = plots.to_latex(frame, "Accuracy of every attributor", label=f"tab:tall{n}")
        floats = tex.count(r"\begin{table}")
        assert floats > 1 and tex.count(r"\caption{") == 1 and tex.count("continued (rows") == floats - 1
        assert all(tex.count(f"attributor {i} &") == tex.count(r"\toprule") // floats for i in range(n))
        log = _compile(tex, tmp_path)
        assert "Float too large" not in log and _overfull(log) == []
