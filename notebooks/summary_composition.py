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
# # Summary composition (SJC Tables 2, 9, 10)
#
# Which entries of the compressor's summaries have a source, by section, by compression boundary, and how long reasoning entries persist. Support comes from the judge at tau (SJC Section 3); on the testbed the ground truth is shown beside it.

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters"; `papermill NB.ipynb OUT.ipynb -p DATA mydir`)
from typing import Optional  # papermill --help-notebook reads Optional[str], not str | None
DATA: str = "data/testbed"      # a workbench directory: the default testbed, or `workbench import` output
JUDGE: str = "lexical"          # the judge whose scores are analysed
METHOD: Optional[str] = "prompting"   # the runs' method analysed (the testbed's SJC compressor); None: every run
TAU: float = 0.5                  # SJC's threshold
BUDGET: int = 48                # the testbed budget the single-budget analyses use
FIGURES: Optional[str] = None     # None: figures/ for the project's own data, build/figures/<data name>/ for yours
STYLE: str = "gallery"          # "paper": Computer Modern at 10pt, an article's text width (plots.use_style)

# %%
from workbench.notebooks import caption, figures_dir, skip_when_not_applicable, use_project_root

use_project_root(chdir=True)  # relative parameters are the project's, however the kernel was started
skip_when_not_applicable()  # an analysis the data cannot serve is skipped with its reason, not an error
figs = figures_dir(FIGURES, DATA, style=STYLE)
import polars as pl
from IPython.display import display

from workbench import plots
from workbench.datasets import ensure_default_testbed, load, select_runs

plots.use_style(STYLE)
pl.Config.set_tbl_rows(40)
# entries and scores are opened lazily: they are read 500 runs at a time below
tables = load(ensure_default_testbed(DATA), derive=True, names=("entries", "scores"),
              columns={"entries": None, "scores": ("entry_id", "judge", "repeat", "score")},
              run_columns=("scenario_id", "method", "budget"))
runs = tables["runs"]
runs.height

# %%
from workbench.analyses.sjc import CompositionCounts, support_from_scores
from workbench.summaries import run_of_entry
from workbench.tables import batches_by_run

sel = select_runs(tables, method=METHOD, budget=BUDGET).select("run_id")
# the selected runs' entries with their support, 500 runs at a time, counted for Tables 2, 9 and 10 as they pass:
# the tables below come from the counts (the same as from all entries at once), so a log of any size fits
counts = CompositionCounts(max_boundary=5, max_d=4)
scored = tables["scores"].with_columns(run_of_entry().alias("run_id"))
for batch in batches_by_run({"entries": tables["entries"], "scores": scored}, 500, order="entries"):
    chosen = batch["entries"].join(sel, on="run_id", how="semi", maintain_order="left")
    counts.add(support_from_scores(chosen, batch["scores"].drop("run_id"), TAU, judge=JUDGE))
table2 = counts.entries_by_section()
plots.export_table(table2, "sjc_table2_entries_by_section", f"{figs}/tables", "Entries by section (judge at tau)")
table2

# %%
if counts.has("gt_supported"):
    truth = counts.entries_by_section("gt_supported")
    plots.export_table(truth, "sjc_table2_ground_truth", f"{figs}/tables", "Entries by section (testbed ground truth)")
    display(truth)

# %%
fig = plots.sjc.section_composition(table2)
plots.export(fig, "sjc_table2_composition", figs);

# %%
caption("""**Figure (testbed; SJC Table 2).** Summary entries per section of the `METHOD` summaries (`prompting` on the testbed), split into entries the source judge scores as supported (score >= tau) and unsupported; the label is the unsupported share. SJC's forward-looking sections (Open TODOs and Pending user asks) carry most of the unsupported entries; Constraints/Rules mixes task restatements (unsupported) with rules the summaries carry over, and Exact identifiers are almost all supported.""", DATA)

# %%
table9 = counts.by_boundary()
plots.export_table(table9, "sjc_table9_by_boundary", f"{figs}/tables", "Unsupported entries by boundary")
fig = plots.sjc.unsupported_by_boundary(table9)
plots.export(fig, "sjc_table9_unsupported_by_boundary", figs)
table9

# %%
caption("""**Figure (testbed; SJC Table 9).** Share of unsupported entries among all entries and among reasoning entries (Decisions + Open TODOs) at each compression boundary (the last point pools boundaries 5 and later).""", DATA)

# %%
table10, exact_share = counts.persistence()
plots.export_table(table10, "sjc_table10_persistence", f"{figs}/tables", "Persistence of reasoning entries")
fig = plots.sjc.persistence_curves(table10)
plots.export(fig, "sjc_table10_persistence", figs)
print(f"matches that were exact (normalised text): {exact_share:.1%}")
table10

# %%
caption("""**Figure (testbed; SJC Table 10).** Share of reasoning entries still present d summaries after they first appear, for entries supported and unsupported at first appearance (matching: normalised text, then character similarity >= 0.9).""", DATA)

