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
# # Method comparisons with paired inference (beyond the papers)
#
# Is a method really better than another on the same tasks, or is that noise? Every method against a baseline, paired on the same tasks and replicates, with 95% scenario intervals (CR2 with Bell-McCaffrey degrees of freedom), Holm-adjusted p-values, and two cross-checks for accuracy that also count the scenarios: a statsmodels GEE logistic model (scenario as group, bias-reduced sandwich, t with scenarios - 1 df) and Durkalski's clustered McNemar test. The verdict below comes from Holm's test and the metric's direction (fewer tokens is better).

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters"; `papermill NB.ipynb OUT.ipynb -p DATA mydir`)
from typing import Optional  # papermill --help-notebook reads Optional[str], not str | None
DATA: str = "data/testbed"      # a workbench directory whose runs hold several methods on the same tasks
BASELINE: str = "prompting"     # the method every other one is compared with
METRIC: str = "acc"             # acc, pass_hat_k or tokens
K: int = 3                      # k for pass_hat_k
BUDGET: int = 48                # the budget the one-sentence reading below is about
SEED: int = 0
N_BOOT: int = 2000
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
from workbench.datasets import NotApplicable, ensure_default_testbed, has_budget, load
from workbench.tables import height

plots.use_style(STYLE)
pl.Config.set_tbl_rows(40)
# the runs (every metric is a run's), only the columns the comparisons read: the pairing, the outcomes, and
# `model`, a dimension the pairing error names when two runs of a method share a task and replicate
RUN_COLUMNS = ("task_id", "scenario_id", "method", "budget", "replicate", "success", "model", "agent_tokens",
               "compressor_tokens")
tables = load(ensure_default_testbed(DATA), derive=True, names=(), run_columns=RUN_COLUMNS)
runs = tables["runs"]
{name: height(frame) for name, frame in tables.items()}

# %%
from workbench.stats import compare_to_baseline

methods = [m for m in runs["method"].unique(maintain_order=True).to_list() if m is not None]
HAVE = BASELINE in methods and len(methods) > 1
if not HAVE:
    raise NotApplicable(f"these runs hold the methods {methods}: a comparison needs the baseline {BASELINE!r} and "
                        "another method on the same tasks")
else:
    by = ("budget",) if has_budget(tables) else ()
    diffs = compare_to_baseline(runs, BASELINE, METRIC, by=by, k=K, n_boot=N_BOOT, seed=SEED)
    plots.export_table(diffs, f"compare_{METRIC}_vs_{BASELINE}", f"{figs}/tables",
                       f"{plots.display_name(METRIC)}: each method minus {plots.display_name(BASELINE)}, paired on "
                       "tasks and replicates. Difference with its "
                       "95% scenario interval (CR2 with Bell-McCaffrey degrees of freedom) and the simultaneous 95% interval of all "
                       "comparisons (Bonferroni); Holm-adjusted p; scenario-clustered GEE and McNemar (Durkalski) p "
                       "as cross-checks.",
                       columns=[*by, "a", "estimate", "sim_low", "n", "p_holm", "gee_p", "mcnemar_p"],
                       intervals={"estimate": ("ci_low", "ci_high"), "sim_low": ("sim_low", "sim_high")},
                       formats={"sim_low": "+.3f", "estimate": "+.3f"},
                       rename={"sim_low": "Simultaneous 95% CI", "estimate": "Difference [95% CI]", "n": "Pairs"})
    fig = plots.compare.forest(diffs, "budget" if by else None)
    plots.export(fig, f"compare_{METRIC}_vs_{BASELINE}", figs)
    display(diffs.select(*by, "a", "estimate", "ci_low", "ci_high", "sim_low", "sim_high", "n", "p_value", "p_holm",
                         "gee_p", "mcnemar_p"))

# %%
caption("""**Figure (testbed).** Each method minus the baseline on the chosen metric, per budget, paired on the same tasks and replicates. The bars are simultaneous 95% intervals for the whole family of comparisons (CR2 with Bell-McCaffrey degrees of freedom over the 12 task scenarios, Bonferroni over the comparisons), so a bar clear of 0 is a difference the adjusted test finds; the labels give the Holm-adjusted p. Holm rejects wherever Bonferroni does and occasionally more, so a bar may touch 0 beside a Holm p just under 0.05, never the reverse. Each comparison's own (unadjusted) 95% interval is in the table.""", DATA)

# %%
from workbench.stats import verdict as compare_verdict  # Holm's test and the metric's direction (fewer tokens wins)

if HAVE and has_budget(tables):
    at = diffs.filter(pl.col("budget") == BUDGET)
    for r in at.iter_rows(named=True):
        verdict = {"better": "beats", "worse": "falls short of"}.get(compare_verdict(r), "cannot be told from")
        print(f"At budget {BUDGET}, {r['a']} {verdict} {BASELINE} on {METRIC} once scenario noise and the "
              f"{diffs.height} comparisons are counted: {r['estimate']:+.3f}, simultaneous 95% interval "
              f"[{r['sim_low']:+.3f}, {r['sim_high']:+.3f}], Holm p = {r['p_holm']:.3g}.")

# %% [markdown]
# ## Probability of improvement and performance profiles (rliable's views)
#
# The probability that a run of a method does better than a run of the baseline on the same task (ties count half; 0.5 is no difference), averaged over tasks, with a 95% interval that resamples scenarios; and each method's performance profile at the chosen budget: the share of tasks whose success rate over their runs exceeds tau.

# %%
from workbench.stats import performance_profile, probability_of_improvement

if HAVE:
    at_budget = runs.filter(pl.col("budget") == BUDGET) if has_budget(tables) else runs
    poi = pl.concat([probability_of_improvement(at_budget, m, BASELINE, METRIC if METRIC != "pass_hat_k" else "acc",
                                                by=(), n_boot=N_BOOT, seed=SEED)
                     for m in methods if m != BASELINE])
    plots.export_table(poi, f"compare_improvement_vs_{BASELINE}", f"{figs}/tables",
                       "Probability that a run of each method does better than a run of "
                       f"{plots.display_name(BASELINE)} on the same "
                       "task (ties half), averaged over tasks; 95% interval resampling scenarios (cluster jackknife t)",
                       columns=["a", "estimate", "n", "n_clusters"], rename={"a": "Method", "n": "Tasks"})
    display(poi.select("a", "estimate", "ci_low", "ci_high", "n", "n_clusters"))
    profile = performance_profile(at_budget, n_boot=N_BOOT, seed=SEED)
    fig = plots.compare.performance_profile(profile)
    plots.export(fig, "compare_performance_profile", figs)

# %%
caption("""**Figure (testbed).** Performance profiles at the chosen budget (48 by default): for each policy, the share of the 120 tasks whose success rate over their four runs exceeds tau, with 95% bands that resample the 12 scenarios. A profile above another at every tau dominates it; curves that cross say the ranking depends on how reliable a task must be.""", DATA)

