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
# # FOCUS rollouts (Lemma 1, Theorem 1, Figures 4-5, Table 4)
#
# Hoeffding bounds and the empirical behaviour of the draft-rollout estimator on the testbed's simulated drafts (20 rollouts per compaction event).

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters"; `papermill NB.ipynb OUT.ipynb -p DATA mydir`)
from typing import Optional  # papermill --help-notebook reads Optional[str], not str | None
DATA: str = "data/testbed"      # a workbench directory: the default testbed, or `workbench import` output
SEED: int = 0
N_BOOT: int = 2000
FIGURES: Optional[str] = None     # None: figures/ for the project's own data, build/figures/<data name>/ for yours
FOCUS_TAU: float = 0.3            # FOCUS's retention threshold (Figure 4 caption); SJC's TAU is not used here
N_TRUTH: list[int] = [1, 2, 3, 5, 10, 20, 50, 100, 300]   # rollouts at which the error against u* is measured (Figure 5B)
EVENTS_AT_A_TIME: int = 5000      # compaction events whose rollouts are analysed at a time (memory, not results)
STYLE: str = "gallery"          # "paper": Computer Modern at 10pt, an article's text width (plots.use_style)

# %%
from workbench.notebooks import caption, figures_dir, skip_when_not_applicable, use_project_root

use_project_root(chdir=True)  # relative parameters are the project's, however the kernel was started
skip_when_not_applicable()  # an analysis the data cannot serve is skipped with its reason, not an error
figs = figures_dir(FIGURES, DATA, style=STYLE)
import polars as pl

from workbench import plots
from workbench.datasets import ensure_default_testbed, load, need
from workbench.tables import height, rows_of
from workbench.notebooks import Analyses

analyses = Analyses()  # what ran and what could not, for the run's summary

plots.use_style(STYLE)
pl.Config.set_tbl_rows(40)
# the rollouts lazily (a large log's are read as integer codes by the functions below), the spans and runs whole
tables = load(ensure_default_testbed(DATA), derive=True, names=("spans",),
              columns={"rollouts": ("event_id", "rollout", "span_id")},
              run_columns=("scenario_id",))
runs = tables["runs"]
{name: height(frame) for name, frame in tables.items()}

# %%
import numpy as np

from workbench.analyses.focus import (
    bound_curves,
    citation_matrices,
    citation_scores,
    curve_means,
    error_against_truth,
    error_slope,
    event_batches,
    event_scenarios,
    rollouts_needed,
    published_draft_error,
    self_consistency_curves,
    utility_histogram,
)

if analyses.for_the_project("FOCUS Lemma 1 recovery bound (closed form)", ["figures/focus_lemma1_recovery_bound.png"],
                             DATA):
    curves = bound_curves([5, 20, 50], [0.1, 0.2, 0.3], np.unique(np.logspace(0, 3, 40).astype(int)))
    fig = plots.focus.bound_curves(curves)
    plots.export(fig, "focus_lemma1_recovery_bound", figs)
    analyses.ran("FOCUS Lemma 1 recovery bound (closed form)")
{(m, g): rollouts_needed(m, g, 0.05) for m in (5, 20, 50) for g in (0.1, 0.2, 0.3)}

# %% [markdown]
# **Figure (closed form; FOCUS Lemma 1 / Theorem 1).** Lower bound 1 - 2m exp(-2N gamma^2) on the probability that thresholding recovers the keep set, against the number of rollouts N, for m spans and margin gamma. The dictionary above gives the rollouts needed for delta = 0.05.

# %%
need(tables, "spans", "rollouts", what="the empirical FOCUS curves")
N_MAX = int(tables["rollouts"].select(pl.col("rollout").max()).collect().item()) + 1
spans, cites = tables["spans"], tables["rollouts"]
# the events EVENTS_AT_A_TIME at a time, in sorted order, one random stream through them: the same scores and
# draws as all events at once, without holding every event's rollout matrix (91,200 events at 100x the testbed)
rng = np.random.default_rng(SEED)
first3, stability, needed = [], [], []
for part in event_batches(spans, EVENTS_AT_A_TIME):
    part_cites = rows_of(cites, part.select("event_id")).collect()
    first3.append(citation_scores(part_cites.filter(pl.col("rollout") < 3), 3, part))  # N = 3, FOCUS's default
    stability.append(self_consistency_curves(citation_matrices(part_cites, part, N_MAX), [1, 2, 3, 5, 10, 20],
                                             tau=FOCUS_TAU, draws=100, seed=rng))
    # (the last table's counts: spans, the rollouts citing them, spans kept at N_MAX, by the spans' ground truth)
    needed.append(part.join(citation_scores(part_cites, N_MAX, part), on=["event_id", "span_id"]).group_by(
        "gt_needed", "gt_enumeration").agg(pl.len(), pl.col("n_cited").sum(), (pl.col("score") >= FOCUS_TAU).sum()
                                           .alias("n_kept")))
first3, stability, needed = pl.concat(first3), pl.concat(stability), pl.concat(needed)
hist = utility_histogram(first3, FOCUS_TAU)
fig = plots.focus.utility_histogram(hist, FOCUS_TAU)
plots.export(fig, "focus_fig4_utility_histogram", figs)
hist

# %%
caption("""**Figure (testbed drafts; FOCUS Figure 4).** Distribution of the estimated span utility with N = 3 rollouts, coloured by FOCUS's threshold tau = 0.3 (red: pruned, blue: kept). Mass sits at 0 and 1; the title gives the interior share and the share within ±1/6 of tau, both counted exactly on the rollout counts (FOCUS: 8-16% interior, under 10% near tau).""", DATA)

# %%
error = error_against_truth(spans, N_TRUTH, draws=100, seed=SEED)
slope = error_slope(error, clusters=event_scenarios(spans, runs), n_boot=N_BOOT, seed=SEED)
error_means = curve_means(error, "max_error")
published = published_draft_error(pl.read_csv("data/published/text_numbers.csv"))
fig = plots.focus.estimation_curves(curve_means(stability, "jaccard"), error_means, slope, published)
plots.export(fig, "focus_fig5_error_and_stability", figs)
plots.export_table(error_means, "focus_fig5b_error_vs_truth", f"{figs}/tables",
                   "Worst-span error against u* by N (testbed)")
slope

# %%
caption("""**Figure (testbed drafts; FOCUS Figure 5).** (A) Jaccard overlap of the keep set at tau = 0.3 with N rollouts against the decision at N_max = 20. (B) Worst-span error max_i |û_i(N) - u*_i| against the true utility u* (the drafts' citation probability, known on the testbed) for N = 1 ... 300 on log-log axes, with its slope and a 95% scenario-bootstrap interval; crosses: FOCUS's published 0.25, 0.089, 0.025 at N = 1, 10, 300 (slope about -0.40); dotted: Lemma 1's -0.5.""", DATA)

# %%
needed.group_by("gt_needed", "gt_enumeration").agg(
    pl.col("len").sum(), (pl.col("n_cited").sum() / pl.col("len").sum() / N_MAX).alias("mean_u"),
    (pl.col("n_kept").sum() / pl.col("len").sum()).alias("kept")).sort("gt_needed", "gt_enumeration")

# %% [markdown]
# Needed spans are kept almost always; the per-invoice enumeration span (the invoice list) is under-cited when the remaining work is 'for each invoice', FOCUS A.10's failure mode, which the defensive rescue set exists for.
