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
# # Failure attribution (SJC Section 3.2, Appendix D, Table 11)
#
# Failed runs traced from the failed check to the action that caused it and the summary entry it carried out. On the testbed the attributions are ground truth from the simulator.

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters"; `papermill NB.ipynb OUT.ipynb -p DATA mydir`)
from typing import Optional  # papermill --help-notebook reads Optional[str], not str | None
DATA: str = "data/testbed"      # a workbench directory: the default testbed, or `workbench import` output
BUDGET: int = 48                # the testbed budget the single-budget analyses use
FIGURES: Optional[str] = None     # None: figures/ for the project's own data, build/figures/<data name>/ for yours
STYLE: str = "gallery"          # "paper": Computer Modern at 10pt, an article's text width (plots.use_style)

# %%
from workbench.notebooks import figures_dir, skip_when_not_applicable, use_project_root

use_project_root(chdir=True)  # relative parameters are the project's, however the kernel was started
skip_when_not_applicable()  # an analysis the data cannot serve is skipped with its reason, not an error
figs = figures_dir(FIGURES, DATA, style=STYLE)
import polars as pl
from IPython.display import display

from workbench import plots
from workbench.datasets import ensure_default_testbed, load, need, select_runs
from workbench.tables import height, rows_of

plots.use_style(STYLE)
pl.Config.set_tbl_rows(40)
tables = load(ensure_default_testbed(DATA), derive=True, names=("attributions",),
              columns={"runs": ("run_id", "scenario_id", "budget")})  # the runs scanned, not held
{name: height(frame) for name, frame in tables.items()}

# %%
from workbench.analyses.sjc import failures_by_scenario, followed_entry_share

need(tables, "attributions", what="failure attribution")  # a log without them: the notebook is skipped, with why
failed = rows_of(select_runs(tables, budget=BUDGET), tables["attributions"].select("run_id")).collect()
att = tables["attributions"].join(failed.select("run_id"), on="run_id", how="semi")  # at the analysed budget
t11, excluded = failures_by_scenario(att, failed, exclude={})
plots.export_table(t11, "sjc_table11_attribution", f"{figs}/tables", "Failed runs by scenario and pattern")
print(followed_entry_share(att))
display(t11)

# %%
fig = plots.sjc.attribution_bars(t11)
plots.export(fig, "sjc_table11_attribution", figs)

# %% [markdown]
# **Figure (testbed ground truth; SJC Table 11).** Failed `prompting` runs at the analysed budget per scenario, stacked by the pattern of the summary entry the failing action carried out: rewritten constraint (RC), invented deliverable (ID), contradicted state (CS), other (e.g. a misremembered amount, which is supported but wrong) and failures unrelated to the summary.
