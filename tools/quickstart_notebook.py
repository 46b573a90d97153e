"""The cells of ``notebooks/quickstart.ipynb`` (written by ``tools/make_notebooks.py``)."""

from __future__ import annotations

from collections.abc import Callable

import nbformat as nbf


def quickstart(md: Callable[[str], nbf.NotebookNode], code: Callable[..., nbf.NotebookNode],
               write: Callable[[nbf.NotebookNode, str], None]) -> None:
    nb = nbf.v4.new_notebook()
    nb.cells = [
        md("# Quickstart: load a log, split summaries into entries, measure runs\n\n"
           "Loads a trajectory log (the documented JSONL format, or OpenAI chat messages), splits every candidate "
           "summary into its entries (SJC Appendix F), and computes reliability (Acc, Pass^k, Pass@k) and efficiency "
           "(Steps, Peak, Dependency; FOCUS A.8). Runs on the committed example log by default; set `DATA` to your own log."),
        code('# Parameters (papermill convention)\nDATA = "data/examples/invoice_log.jsonl"\nJUDGE = "lexical"\n'
             'TAU = 0.5\nSEED = 0\nK = 2\nFIGURES = "figures"', ["parameters"]),
        code("import polars as pl\n\nfrom workbench import io, plots\nfrom workbench.metrics import efficiency, reliability\n"
             "from workbench.summary import entries_table\n\nplots.set_style()\ntables = io.read_log(DATA)\n"
             'runs, steps, compactions = tables["runs"], tables["steps"], tables["compactions"]\n'
             'entries = entries_table(compactions)\n{name: frame.height for name, frame in {**tables, "entries": entries}.items()}'),
        md("## Entries by section\n\nEach bullet under one of the five OpenClaw headings is an entry; reasoning entries "
           "are those under Decisions and Open TODOs (SJC Table 2)."),
        code('by_section = entries.group_by("section", maintain_order=True).agg(pl.len().alias("entries")).sort(\n'
             '    ["entries", "section"], descending=[True, False])\n'
             'plots.export_table(by_section, "quickstart_entries_by_section", f"{FIGURES}/tables")\nby_section'),
        code('fig = plots.entries_by_section(by_section)\nplots.export(fig, "quickstart_entries_by_section", FIGURES);'),
        md("**Figure (committed example log).** Number of summary entries under each section heading, over every "
           "candidate summary of the log: the first column of SJC Table 2."),
        md("## Reliability and efficiency"),
        code('rel = reliability(runs, k=K, by="method")\nplots.export_table(rel, "quickstart_reliability", f"{FIGURES}/tables")\nrel'),
        code('eff = efficiency(steps).join(runs.select("run_id", "method"), on="run_id")\n'
             'eff.group_by("method", maintain_order=True).agg(pl.col("steps").mean(), pl.col("peak_tokens").mean(), '
             '(pl.col("dependency").mean() / 1e6).alias("dependency_1e6"))'),
    ]
    write(nb, "quickstart")
