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
# # Judge calibration and thresholds (beyond the papers)
#
# Can a judge's score be read as a probability, and which tau gives the precision a pruning policy needs? The reliability diagram, the Brier score with Murphy's decomposition and the expected calibration error, each with 95% scenario-bootstrap intervals; out-of-fold Platt and isotonic recalibration (folds grouped by scenario); the tau that reaches a target precision, with its interval, beside SJC's tau = 0.5; and two judges compared on the same entries. On the testbed the labels come from simulated annotators.

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters"; `papermill NB.ipynb OUT.ipynb -p DATA mydir`)
from typing import Optional  # papermill --help-notebook reads Optional[str], not str | None
DATA: str = "data/testbed"      # a workbench directory with scores and labels
JUDGE: str = "lexical"          # the judge to calibrate
OTHER_JUDGE: Optional[str] = None         # a second judge in the scores table, compared on the same entries
FIELD: str = "support"          # the label field: support or correct
LABELS: Optional[str] = None              # an AnnotationStore root with real labels (default: DATA's labels table)
TAU_TARGET: str = "precision"   # choose tau for a target precision (or recall); TARGET means the human target elsewhere
TAU_TARGET_VALUE: float = 0.95
TAU: float = 0.5                  # SJC's threshold, reported beside the chosen one
BINS: int = 10
SEED: int = 0
N_BOOT: int = 2000
FIGURES: Optional[str] = None     # None: figures/ for the project's own data, build/figures/<data name>/ for yours
STYLE: str = "gallery"          # "paper": Computer Modern at 10pt, an article's text width (plots.use_style)

# %%
from workbench.notebooks import caption, figures_dir, skip_when_not_applicable, use_project_root

use_project_root(chdir=True)  # relative parameters are the project's, however the kernel was started
skip_when_not_applicable()  # an analysis the data cannot serve is skipped with its reason, not an error
figs = figures_dir(FIGURES, DATA, LABELS, style=STYLE, JUDGE=None if JUDGE == "lexical" else JUDGE,
                   FIELD=None if FIELD == "support" else FIELD)
import polars as pl
from IPython.display import display

from workbench import plots
from workbench.annotate import AnnotationStore
from workbench.datasets import NotApplicable, entry_clusters, ensure_default_testbed, load
from workbench.tables import height, rows_of

plots.use_style(STYLE)
pl.Config.set_tbl_rows(40)
# the labels first: every analysis here needs them, and without them nothing is derived or scored
data_dir = ensure_default_testbed(DATA)
labels = AnnotationStore(LABELS).labels() if LABELS else load(data_dir, names=("labels",)).get("labels")
if labels is None or labels.height == 0:
    raise NotApplicable(f"no labels in {DATA}" + (f" or {LABELS}" if LABELS else "") + ": label a sample "
                        "(workbench sample, workbench label) and set LABELS")
# the runs; entries and scores lazily, for the columns read: only the labeled entries' are collected
tables = load(data_dir, derive=True, names=(),
              columns={"entries": ("entry_id", "run_id"), "scores": ("entry_id", "judge", "repeat", "score")},
              run_columns=("scenario_id",))
{name: height(frame) for name, frame in tables.items()}

# %%
from workbench.stats import labeled_scores
from workbench.tables import gold_labels

labeled = labels.select(pl.col("item_id").alias("entry_id")).unique().lazy()  # their scores and scenarios
scores = rows_of(tables["scores"], labeled).collect()
clusters = entry_clusters({**tables, "entries": rows_of(tables["entries"], labeled)})
data = labeled_scores(scores, gold_labels(labels), clusters, judge=JUDGE, field=FIELD)
HAVE = data.height > 0 and 0 < data["label"].sum() < data.height
if not HAVE:
    raise NotApplicable(f"no usable {FIELD} labels for judge {JUDGE} ({data.height} labeled entries with a score, "
                        f"{int(data['label'].sum()) if data.height else 0} positive): calibration needs both classes")
s, y, c = data["score"].to_numpy(), data["label"].to_numpy(), data["scenario_id"].to_numpy()
print(f"{data.height} labeled entries in {len(set(c))} scenarios, {int(y.sum())} positive")

# %%
from workbench.stats import calibration_table, reliability_curve

if HAVE:
    curve = reliability_curve(s, y, c, BINS, n_boot=N_BOOT, seed=SEED)
    fig = plots.calibration.reliability_diagram(curve, title=f"{JUDGE} judge, {plots.display_name(FIELD).lower()} labels")
    plots.export(fig, f"calibration_reliability_{JUDGE}_{FIELD}", figs)
    display(curve.select("bin", "n", "mean_score", "estimate", "ci_low", "ci_high"))  # each bin's score and share
    table = calibration_table(s, y, c, BINS, n_boot=N_BOOT, seed=SEED)
    plots.export_table(table, f"calibration_brier_ece_{JUDGE}_{FIELD}", f"{figs}/tables",
                       "Brier (Murphy decomposition), plug-in ECE (biased upward), and the debiased squared calibration "
                       "error with its root (Kumar et al. 2019); 95% intervals: scenario bootstrap (percentile), "
                       "for the debiased two the values a scenario sign-flip test of calibration and Feldman and "
                       "Cousins' interval leave (never below 0)")
    display(table)

# %%
caption("""**Figure (testbed, simulated annotators).** Share of entries labeled supported against the judge's mean score in each of ten equal-width bins (a score on a bin edge counts in the bin above it), with bin counts and 95% intervals: the union of the scenario-bootstrap percentile interval and the Wilson interval of the bin's entries, so a bin where every label agrees does not collapse to a point. The dotted diagonal is perfect calibration. The lexical judge's scores are not probabilities: most entries sit in the top bin, where the judge is overconfident (the supported share there is below the bin's mean score, the first table below gives both), and its mid-range scores (the forward-looking cue at 0.5) overstate how often such entries are supported.""", DATA, LABELS)

# %%
from workbench.stats import recalibration_table

if HAVE:
    recal = recalibration_table(s, y, c, bins=BINS, n_boot=N_BOOT, seed=SEED)
    plots.export_table(recal, f"calibration_recalibrated_{JUDGE}_{FIELD}", f"{figs}/tables",
                       "Brier and ECE before and after out-of-fold recalibration (folds by scenario)")
    display(recal)

# %% [markdown]
# Out-of-fold recalibration (each scenario mapped by a calibrator fitted on the others): Platt fits a binomial GLM on the logit of the score (statsmodels, maximum likelihood), isotonic a monotone map (scikit-learn; piecewise linear between its fitted points, not a step function). Both lower the Brier score and the ECE on the testbed, isotonic most, which says the lexical score ranks well but is mis-scaled.

# %%
import numpy as np

from workbench.stats import threshold_for, threshold_sweep

if HAVE:
    chosen = threshold_for(s, y, c, TAU_TARGET, TAU_TARGET_VALUE, sjc_tau=TAU, n_boot=N_BOOT, seed=SEED)
    plots.export_table(chosen, f"calibration_threshold_{JUDGE}_{FIELD}", f"{figs}/tables",
                       f"tau reaching {TAU_TARGET} {TAU_TARGET_VALUE}, with intervals, beside SJC's tau; precision and "
                       "recall in-sample (optimistic: tau was chosen on the same labels) and out of fold "
                       "(tau chosen without each scenario)")
    sweep = threshold_sweep(s, y, c, np.linspace(0, 1, 41), n_boot=min(N_BOOT, 500), seed=SEED)
    tau_star = chosen.filter(pl.col("statistic") == "tau")["estimate"][0]
    fig = plots.calibration.threshold_curve(sweep, tau_star, TAU)
    plots.export(fig, f"calibration_threshold_{JUDGE}_{FIELD}", figs)
    display(chosen)

# %%
caption("""**Figure (testbed).** Precision of keeping entries scored at or above tau, recall of supported entries, and the fraction pruned, against tau, with 95% scenario-bootstrap bands; the solid line is the smallest tau whose precision reaches the target, the dotted one SJC's tau = 0.5. The table gives that tau with its interval and what it achieves: in-sample (optimistic, since tau was chosen to reach the target on these labels) and out of fold (each scenario judged by the tau chosen on the others), the honest estimate.""", DATA, LABELS)

# %%
from workbench.stats import paired_auroc_difference

if HAVE and OTHER_JUDGE:
    other = labeled_scores(scores, gold_labels(labels), clusters, judge=OTHER_JUDGE,
                           field=FIELD).select("entry_id", pl.col("score").alias("other"))
    both = data.join(other, on="entry_id")
    diff = paired_auroc_difference(both["score"], both["other"], both["label"], both["scenario_id"],
                                   n_boot=N_BOOT, seed=SEED)
    print(f"AUROC {JUDGE} minus {OTHER_JUDGE} on {both.height} shared entries: {diff.estimate:.3f} "
          f"[{diff.ci_low:.3f}, {diff.ci_high:.3f}]")
else:
    print("set OTHER_JUDGE to compare two judges on the same entries (both judges resampled together)")
