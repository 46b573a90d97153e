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
# # Reliability and efficiency (SJC Tables 3-5, Figure 2; FOCUS A.8 and Tables 1-4)
#
# Acc with the across-run standard deviation, Pass^k, Steps and Peak per method and subset; Pass^k against cumulative tokens; the judge's overhead; and the FOCUS paper's published results replotted.

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters"; `papermill NB.ipynb OUT.ipynb -p DATA mydir`)
from typing import Optional  # papermill --help-notebook reads Optional[str], not str | None
DATA: str = "data/testbed"      # a workbench directory: the default testbed, or `workbench import` output
SEED: int = 0
N_BOOT: int = 2000
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
from workbench.datasets import ensure_default_testbed, has_budget, load, need_outcomes, select_runs
from workbench.tables import height
from workbench.notebooks import Analyses

analyses = Analyses()  # what ran and what could not, for the run's summary

plots.use_style(STYLE)
pl.Config.set_tbl_rows(40)
# the runs, steps and compactions are opened lazily: read (only these columns) when a cell aggregates them
RUN_COLUMNS = ("run_id", "task_id", "scenario_id", "subset", "method", "budget", "replicate", "success", "steps",
               "peak_tokens", "agent_tokens", "compressor_tokens", "judge_tokens")
tables = load(ensure_default_testbed(DATA), derive=True, names=("steps", "compactions"),
              columns={"runs": RUN_COLUMNS, "steps": ("run_id", "input_tokens", "output_tokens"),
                       "compactions": ("run_id", "candidate_summary", "committed_summary")})
runs = tables["runs"]
need_outcomes(runs, what="reliability (Acc, Pass^k) and its tables")
height(runs)

# %%
from workbench.analyses.sjc import judge_overhead, pass_vs_tokens, results_table

r = select_runs(tables, budget=BUDGET)
K = int(min(3, r.group_by("method", "task_id").len().collect()["len"].min()))  # SJC: Pass3 over three runs
t3 = results_table(r.with_columns(pl.col("subset").fill_null("all")), k=K, replicates=list(range(K)))
plots.export_table(t3, "sjc_table3_results", f"{figs}/tables", "Acc, Pass3, Steps, Peak by method and subset (testbed)")
t3

# %%
pvt = pass_vs_tokens(r, k=K, n_boot=N_BOOT, seed=SEED)
fig = plots.sjc.pass_vs_tokens(pvt)
plots.export(fig, "sjc_fig2_pass_vs_tokens", figs)
pvt

# %%
caption("""**Figure (testbed; SJC Figure 2).** Pass^k (k = 3 on the testbed) against mean cumulative LLM tokens per task (agent plus compressor, judge excluded as in SJC), with 95% scenario intervals on both axes (Pass^k: CR2 with Bell-McCaffrey degrees of freedom; tokens: cluster jackknife t); the dotted line is the cost of uncompressed execution.""", DATA)

# %%
if has_budget(tables):
    from workbench.stats import reliability

    acc = reliability(runs, k=1, by=["method", "budget"], n_boot=N_BOOT, seed=SEED, method="percentile")  # in [0, 1]
    fig = plots.sjc.accuracy_by_budget(acc)
    plots.export(fig, "testbed_accuracy_by_budget", figs)
    display(acc.select("method", "budget", "n_tasks", "n_runs", "acc", "acc_ci_low", "acc_ci_high").sort("budget", "method"))
    analyses.ran("accuracy by budget")
else:
    analyses.skipped("accuracy by budget", "the runs carry no context budget")

# %%
caption("""**Figure (testbed).** Accuracy (share of runs that complete the task) of every policy at the three budgets (context units), with 95% percentile intervals resampling the 12 task scenarios (they stay within 0 and 1, where a t interval of a share near 0 or 1 would not): the tightest budget compacts about ten times per run and no selector recovers from it; at 96 FIFO matches the summary.""", DATA)

# %%
if {"prompting_sjc", "prompting"} <= set(runs.select(pl.col("method").unique()).collect()["method"]):
    display(judge_overhead(r, tables["compactions"]))
    analyses.ran("SJC Table 5: judge overhead")
else:
    analyses.skipped("SJC Table 5: judge overhead", "needs runs of both prompting and prompting_sjc")

# %%
if analyses.for_the_project("FOCUS Table 1(a) as published", ["figures/focus_table1_appworld_published.png"], DATA):
    published = pl.read_csv("data/published/focus_tables.csv")
    appworld = published.filter((pl.col("table") == "Table 1") & pl.col("panel").str.starts_with("(a)"))
    fig = plots.focus.published_table(appworld, "dependency_m", "acc",
                                      title="published: FOCUS Table 1(a), AppWorld test_normal")
    plots.export(fig, "focus_table1_appworld_published", figs)
    analyses.ran("FOCUS Table 1(a) as published")
    display(appworld.pivot(on="metric", index="method", values="value"))

# %% [markdown]
# **Figure (published; FOCUS Table 1a).** Accuracy against Dependency (10^6) of every method on AppWorld test_normal as published (gpt-4.1 agent and compressor), replotted from `data/published/focus_tables.csv`.

# %%
from workbench.stats import efficiency_by

efficiency_by(tables["steps"], runs, ["method", "budget"] if has_budget(tables) else ["method"])
