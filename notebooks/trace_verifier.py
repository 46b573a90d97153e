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
# # TRACE: the verifier hears only the loud failures
#
# Burden after compaction, the verifier against an unverified summary and an oracle, defects in chosen and rejected candidates, and the fact check at the boundary.

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

from workbench import plots
from workbench.datasets import ensure_default_testbed, load, need, select_runs
from workbench.tables import height, rows_of

plots.use_style(STYLE)
pl.Config.set_tbl_rows(40)
# steps, compactions and candidates lazily (checked a batch at a time): only the runs and columns read below are
# collected, so a large log's others stay on disk
data_dir = ensure_default_testbed(DATA)
RUN_COLUMNS = ("task_id", "scenario_id", "method", "budget", "replicate", "success", "blocked_calls", "repeated_calls",
               "compactions", "rollout_steps")
tables = load(data_dir, derive=True, names=(), run_columns=RUN_COLUMNS,  # and those of the runs' columns
              columns={"steps": None, "compactions": None,
                       "candidates": ("run_id", "boundary", "chosen", "visible_defects", "silent_defects",
                                      "verifier_score")})
runs = tables["runs"]
candidates = tables.get("candidates")  # scanned: counted as it is read
# the steps of the runs the burden curve reads (prompting and the uncompressed baseline at the budget), with the
# columns it reads
read = runs.filter(pl.col("method").is_in(["prompting", "no_compression"]))
if BUDGET is not None and "budget" in runs.columns:
    read = read.filter(pl.col("budget") == BUDGET)
steps = rows_of(tables["steps"].select("run_id", "step", "boundary_before", "blocked", "repeated"),
                read.select("run_id"))  # (lazy: the burden curve reads them as it joins)
{name: height(frame) for name, frame in tables.items()}

# %%
from workbench.summaries import fact_check_compactions
from workbench.tables import read_table, table_file
from workbench.analyses.trace import (
    article_comparison,
    defects_chosen_vs_rejected,
    post_compaction_burden,
    verifier_table,
)

need(tables, "candidates", what="the verifier analysis")
vt = verifier_table(runs, budget=BUDGET)
plots.export_table(vt, "trace_verifier_table", f"{figs}/tables", "Verifier vs unverified vs oracle (testbed)")
vt

# %%
published = pl.read_csv("data/published/text_numbers.csv")
side = article_comparison(runs, candidates, published)
plots.export_table(side, "trace_published_vs_testbed", f"{figs}/tables", "TRACE article (published) beside this testbed")
side

# %% [markdown]
# Each row: the number the TRACE article states (**published**) beside the same measure on this **testbed**. The testbed extends the article's, so levels differ; directions are what to compare.

# %%
burden = post_compaction_burden(steps, runs, method="prompting", budget=BUDGET, n_boot=N_BOOT, seed=SEED)
fig = plots.trace.burden_curve(burden)
plots.export(fig, "trace_post_compaction_burden", figs)
burden

# %%
caption("""**Figure (testbed; TRACE paper's Figure 4 as described in the article).** Blocked and repeated calls per action at steps 1-5 after a compaction, minus the matched uncompressed run at the same step, with 95% scenario-bootstrap intervals: blocked calls spike at the first step, repeats follow.""", DATA)

# %%
defects = defects_chosen_vs_rejected(candidates, runs, budget=BUDGET)
fig = plots.trace.defects_chosen_rejected(defects)
plots.export(fig, "trace_defects_chosen_vs_rejected", figs)
defects

# %%
caption("""**Figure (testbed).** Mean visible and silent defects in the candidate summaries each selector chose and rejected. The verifier removes visible damage but its chosen summaries are no cleaner on silent damage; the oracle, which sees outcomes, chooses fewer silent defects.""", DATA)

# %%
ver = select_runs(tables, method="verifier", budget=BUDGET).select("run_id")
# the fact check 2,000 verifier runs at a time: their compactions, steps and tasks (it cites the task's instruction)
# read for each batch, so a large log's summaries and tool outputs are never held whole
tasks = read_table(table_file(data_dir, "runs"), "runs", ("run_id", "task"), lazy=True)
fc = pl.concat([fact_check_compactions(rows_of(tables["compactions"], part).collect(engine="streaming"),
                                       rows_of(tables["steps"], part).collect(engine="streaming"),
                                       rows_of(tasks, part).collect())
                for part in ver.iter_slices(2000)])
chosen = rows_of(candidates.filter(pl.col("chosen")).select("run_id", "boundary", "verifier_score"), ver)
both = fc.join(chosen.collect(engine="streaming"), on=["run_id", "boundary"], maintain_order="left")
fig = plots.trace.verifier_vs_factcheck(both)
plots.export(fig, "trace_verifier_vs_fact_check", figs)
both.group_by("silent_defect", maintain_order=True).agg(pl.len(), pl.col("verifier_score").mean())

# %%
caption("""**Figure (testbed).** Verifier scores of the chosen summaries, split by whether the fact check at the boundary finds a silent defect (an unsourced number or a dropped id): the two distributions overlap, the verifier cannot tell them apart, the fact check can.""", DATA)

# %%
from workbench.sim import DatasetConfig, simulate
from workbench.analyses.trace import verifier_cost

# the same tasks and replicates with the cheap verifier (one raw-history continuation shared by the candidates)
# (at most the testbed's 120 tasks: the cheap setting is a simulation beside the log, not a copy of a large one)
n_tasks, n_runs = min(runs["task_id"].n_unique(), 120), int(runs["replicate"].max()) + 1
cheap = simulate(DatasetConfig(tasks=n_tasks, runs=n_runs, budgets=(BUDGET,), policies=("verifier", "oracle"),
                               seed=SEED, verifier="cheap"))
cost = verifier_cost({"article: 3 paired samples per candidate": runs, "cheap: 1 shared continuation": cheap["runs"]},
                     published, budget=BUDGET)
plots.export_table(cost, "trace_verifier_cost", f"{figs}/tables", "Verifier cost per setting beside the TRACE article")
cost

# %% [markdown]
# The TRACE article's verifier rolls three samples of two paired continuations (raw history, candidate) per candidate at every boundary: 85 rollout steps per run against the oracle's 51. The testbed's default verifier does the same; the cheap setting rolls one raw-history continuation shared by the candidates and one per candidate. Rollout steps per run at the analysed budget, with the verifier's accuracy (%) and blocked calls per run.

# %%
vt.select("method", "pass2", "pass_at_2", "gap")
