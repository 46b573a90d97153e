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
# # Threshold sensitivity (SJC Figure 3, Section 5.4)
#
# How scores are distributed and how much of the summary is pruned as tau moves.

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters"; `papermill NB.ipynb OUT.ipynb -p DATA mydir`)
from typing import Optional  # papermill --help-notebook reads Optional[str], not str | None
DATA: str = "data/testbed"      # a workbench directory: the default testbed, or `workbench import` output
METHOD: str = "prompting"       # the runs analysed (a log without it and without budgets: every run)
JUDGE: str = "lexical"          # the judge whose scores are analysed
TAU: float = 0.5                  # SJC's threshold
SEED: int = 0
N_BOOT: int = 2000
FIGURES: Optional[str] = None     # None: figures/ for the project's own data, build/figures/<data name>/ for yours
REPEATED_SCORES: Optional[str] = None     # a scores file with repeats (workbench judge ... --repeats N): decision flips (SJC 5.4)
REFERENCE_JUDGE: str = "lexical"  # the judge in DATA's scores that marks entries as scored low (< 0.2)
STYLE: str = "gallery"          # "paper": Computer Modern at 10pt, an article's text width (plots.use_style)

# %%
from workbench.notebooks import caption, figures_dir, skip_when_not_applicable, use_project_root

use_project_root(chdir=True)  # relative parameters are the project's, however the kernel was started
skip_when_not_applicable()  # an analysis the data cannot serve is skipped with its reason, not an error
figs = figures_dir(FIGURES, DATA, style=STYLE)
import polars as pl
from IPython.display import display

from workbench import plots
from workbench.datasets import has_budget, ensure_default_testbed, load, select_runs, single_method
from workbench.notebooks import Analyses

analyses = Analyses()  # what ran and what could not, for the run's summary

plots.use_style(STYLE)
pl.Config.set_tbl_rows(40)
# entries and scores are opened lazily with the columns used here: a large log's are never held whole
tables = load(ensure_default_testbed(DATA), derive=True, names=("entries", "scores"),
              columns={"entries": ("entry_id", "run_id", "section", "boundary"),
                       "scores": ("entry_id", "judge", "repeat", "score")},
              run_columns=("scenario_id", "method", "budget"))
runs = tables["runs"]
runs.height

# %%
import numpy as np

from workbench.analyses.sjc import support_from_scores
from workbench.tables import SECTIONS
from workbench.analyses.sjc import ThresholdCounts, largest_change
from workbench.summaries import run_of_entry
from workbench.tables import batches_by_run

sel = select_runs(tables, method=single_method(tables, METHOD))
setting = "budget" if has_budget(tables) else None
meta = ["run_id", "scenario_id"] + (["budget"] if setting else [])
# the entries with their scores, 500 runs at a time, counted (per scenario, section and tau) as they pass: the
# figures and tables below come from the counts, so a log of any size is analysed in the memory of one batch
counts = ThresholdCounts(np.linspace(0, 1, 101), tau=TAU, setting=setting)
scored = tables["scores"].with_columns(run_of_entry().alias("run_id"))
for batch in batches_by_run({"entries": tables["entries"], "scores": scored}, 500, order="entries"):
    chosen = batch["entries"].join(sel.select(meta), on="run_id", maintain_order="left")  # the method's runs
    part = support_from_scores(chosen, batch["scores"].drop("run_id"), TAU, judge=JUDGE)
    counts.add(part.with_columns(pl.col("budget").cast(pl.Utf8)) if setting else part)
dist = counts.score_distribution()
plots.export_table(dist, "sjc_fig3_score_distribution", f"{figs}/tables", "Score mass by section")
dist

# %%
fig = plots.sjc.score_histograms(counts, SECTIONS)
plots.export(fig, "sjc_fig3_score_distribution", figs);

# %%
caption("""**Figure (testbed; SJC Figure 3 left).** Distribution of the lexical judge's source scores of summary entries in each of the five sections, Pending user asks included. SJC highlights that section (86% of its entries unsupported under Jev); the lexical baseline scores most of the testbed's pending asks near 1, because the restated task recurs word for word in the previous summary it may cite -- a limit of word overlap, which cannot tell a carried restatement from an observed fact. The table above gives the shares >= 0.8, < 0.2 and in [0.3, 0.7].""", DATA)

# %%
curve = counts.sweep(n_boot=N_BOOT, seed=SEED)
change = largest_change(curve)
plots.export_table(change, "sjc_fig3_change_03_07", f"{figs}/tables", "Change in pruned fraction, tau 0.3 to 0.7")
fig = plots.sjc.pruned_vs_tau(curve, tau=TAU, legend_title="budget (context units)" if setting else None)
plots.export(fig, "sjc_fig3_pruned_vs_tau", figs)
change

# %%
caption("""**Figure (testbed; SJC Figure 3 right).** Fraction of entries pruned against the threshold tau, per budget, with 95% scenario-bootstrap bands; the dotted line is SJC's tau = 0.5 and the shaded span tau from 0.3 to 0.7, where the curve barely moves because scores sit at the extremes (the table above gives the change).""", DATA)

# %%
keep = counts.keep_rate_by_section()
fig = plots.sjc.keep_rates(keep)
plots.export(fig, "sjc_keep_rate_by_section", figs)
plots.export_table(keep, "sjc_keep_rate_by_section", f"{figs}/tables")
display(counts.first_vs_later())
keep

# %%
caption("""**Figure (testbed).** Share of each section's entries kept at tau: SJC's forward-looking sections (Open TODOs, Pending user asks) are pruned far more than exact identifiers.""", DATA)

# %%
from workbench.analyses.sjc import decision_flips
from workbench.tables import read_table

repeated = read_table(REPEATED_SCORES, "scores").lazy() if REPEATED_SCORES else tables["scores"]
repeats = (repeated.select(pl.col("repeat").n_unique()).collect().item()
           if "repeat" in repeated.collect_schema().names() else 1)
if repeats > 1:
    repeated = repeated.collect()
    sections = tables["entries"].select("entry_id", "section").collect()
    reference = tables["scores"].filter((pl.col("judge") == REFERENCE_JUDGE) & (pl.col("repeat") == 0)).collect()
    flips = decision_flips(repeated.join(sections, on="entry_id"), TAU, reference, by="section")
    overall = decision_flips(repeated, TAU, reference)
    plots.export_table(flips, "sjc_sec54_decision_flips", f"{figs}/tables", "Decision flips across repeats")
    for judge_name, per_judge in flips.group_by("judge", maintain_order=True):
        fig = plots.sjc.decision_flips(per_judge)
        plots.export(fig, f"sjc_sec54_decision_flips_{judge_name[0]}", figs)
    display(overall)
    analyses.ran("SJC 5.4: decision flips across repeats")
else:
    analyses.skipped("SJC 5.4: decision flips across repeats", "no repeated scores: run `workbench judge DIR "
                     "--judge jev --repeats 5 --out rep.parquet` and set REPEATED_SCORES")

# %%
caption("""**Figure (when repeated scores are given; SJC Section 5.4).** Per section, the share of entries whose keep/prune decision at tau changes across repeated requests to the same judge, and the same share among entries the reference judge scores below 0.2. The testbed's lexical judge is deterministic, so on the default data this cell only says how to produce repeats.""", DATA, REPEATED_SCORES)

