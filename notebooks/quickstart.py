# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Quickstart: load a log, split summaries into entries, measure runs
#
# Loads a trajectory log (the documented JSONL format, or OpenAI chat messages), splits every candidate summary into its entries (SJC Appendix F), and computes reliability (Acc, Pass^k, Pass@k) and efficiency (Steps, Peak, Dependency; FOCUS A.8). Runs on the committed example log by default; set `DATA` to your own log.

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters"; `papermill NB.ipynb OUT.ipynb -p DATA mylog.jsonl`)
from typing import Optional  # papermill --help-notebook reads Optional[str], not str | None
DATA: str = "workbench/datasets/example_logs/invoice_log.jsonl"   # a log in any format `workbench import` reads, or its directory
K: int = 2                                      # Pass^k and Pass@k over k replicates
FIGURES: Optional[str] = None     # None: figures/ for the project's own data, build/figures/<data name>/ for yours
STYLE: str = "gallery"          # "paper": Computer Modern at 10pt, an article's text width (plots.use_style)

# %%
from workbench.notebooks import caption, figures_dir, skip_when_not_applicable, use_project_root

use_project_root(chdir=True)  # relative parameters are the project's, however the kernel was started
skip_when_not_applicable()  # an analysis the data cannot serve is skipped with its reason, not an error
figs = figures_dir(FIGURES, DATA, style=STYLE)
from workbench import plots
from workbench.datasets import load, need_outcomes
from workbench.analyses.sjc import section_counts
from workbench.stats import efficiency_by, reliability
from workbench.summaries import entries_table

plots.use_style(STYLE)
tables = load(DATA)  # a log file, a directory of sessions, or a workbench directory
runs, steps, compactions = tables["runs"], tables["steps"], tables["compactions"]
entries = entries_table(compactions)
{name: frame.height for name, frame in {**tables, "entries": entries}.items()}

# %% [markdown]
# ## Entries by section
#
# Each bullet under one of the five OpenClaw headings is an entry; reasoning entries are those under Decisions and Open TODOs (SJC Table 2).

# %%
by_section = section_counts(entries)
plots.export_table(by_section, "quickstart_entries_by_section", f"{figs}/tables")
by_section

# %%
fig = plots.entries_by_section(by_section)
plots.export(fig, "quickstart_entries_by_section", figs);

# %%
caption("""**Figure (committed example log).** Number of summary entries under each section heading, over every candidate summary of the log: the first column of SJC Table 2.""", DATA)

# %% [markdown]
# ## One compaction, looked at
#
# The summary as written, each entry coloured by the offline lexical judge's score; click an entry for its evidence passages (with the step and tool they came from) and the identifiers it names; below it the replaced history and what the agent did next. `workbench explore DATA --out DIR` writes the same view for every compaction as a static site.

# %%
from workbench.datasets import derive_missing
from workbench.explore import show

derive_missing(tables, wanted=("entries", "scores"))  # the offline lexical judge's scores, if the log has none
first = compactions.sort("run_id", "boundary").row(0, named=True)
show(tables, run_id=first["run_id"], compaction=first["boundary"])

# %% [markdown]
# ## Reliability and efficiency

# %%
efficiency_by(steps, runs, "method")

# %%
need_outcomes(runs, what="reliability (Acc, Pass^k, Pass@k)")  # imported sessions have no outcomes: stop here
rel = reliability(runs, k=K, by="method")
plots.export_table(rel, "quickstart_reliability", f"{figs}/tables")
rel
