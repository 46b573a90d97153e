"""A minimal article with two of the gallery's tables and one figure in the paper style, as a write-up uses them.

Run from the project root after ``make figures`` (which writes ``figures/tables/``):
``.venv/bin/python tools/paper_article.py [OUT_DIR]`` (default ``build/article``). It writes ``article.tex`` (a 10pt
``article`` that ``\\input``s ``compare_acc_vs_prompting.tex`` and ``reliability.tex`` and includes the paper-style
``compare_acc_vs_prompting.pdf`` at its natural width), compiles it twice with pdfLaTeX, fails on an overfull box,
and renders its pages side by side as ``article-page.png`` (pdftoppm, 110 dpi).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import polars as pl  # noqa: E402

from workbench import plots  # noqa: E402
from workbench.stats import compare_to_baseline  # noqa: E402
from workbench.datasets import load  # noqa: E402
from workbench.stats import reliability  # noqa: E402

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "build/article")
TABLES = Path("figures/tables")

BODY = r"""\documentclass[10pt]{article}
\usepackage{booktabs,array,siunitx}
\usepackage{graphicx}
\begin{document}
\section*{Results}
At a budget of 48 context units, pruning the summary (Prompting + SJC) beats prompting alone, and no
compression beats both (Table~\ref{tab:compare_acc_vs_prompting}, Figure~\ref{fig:forest}); Table~\ref{tab:reliability}
gives each method's accuracy and Pass$^{3}$.
\input{compare_acc_vs_prompting.tex}
\input{reliability.tex}
\begin{figure}[h]
\centering
\includegraphics{forest.pdf}
\caption{Each method minus Prompting at budget 48: simultaneous 95\% intervals over the 12 scenarios.}
\label{fig:forest}
\end{figure}
\end{document}
"""


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    shutil.copy(TABLES / "compare_acc_vs_prompting.tex", OUT / "compare_acc_vs_prompting.tex")
    runs = load()["runs"].filter(pl.col("budget") == 48)
    table = reliability(runs, k=3, by="method", n_boot=2000)
    plots.export_table(table, "reliability", OUT, "Acc and Pass^3 at budget 48 (95% intervals over scenarios)",
                       columns=["method", "acc", "pass_hat_k", "n_tasks"])
    diffs = compare_to_baseline(runs, "prompting", "acc", by=())
    try:
        plots.use_style("paper")
        plots.export(plots.compare.forest(diffs), "forest", OUT, formats=("pdf",))
    finally:
        plots.use_style("gallery")
    (OUT / "article.tex").write_text(BODY, encoding="utf-8")
    for _ in range(2):  # the second pass resolves the references
        subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "article.tex"], cwd=OUT,
                       check=True, capture_output=True)
    overfull = re.findall(r"Overfull \\hbox \(([\d.]+pt) too wide\)", (OUT / "article.log").read_text())
    if overfull:
        print(f"overfull boxes: {overfull}")
        return 1
    subprocess.run(["pdftoppm", "-png", "-r", "110", "article.pdf", "page"], cwd=OUT, check=True)
    from PIL import Image

    pages = [Image.open(p) for p in sorted(OUT.glob("page-*.png"))]  # the pages side by side, as a spread
    spread = Image.new("RGB", (sum(p.width for p in pages), max(p.height for p in pages)), "white")
    for i, page in enumerate(pages):
        spread.paste(page, (sum(p.width for p in pages[:i]), 0))
    spread.save(OUT / "article-page.png")
    print(OUT / "article-page.png", f"({len(pages)} pages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
