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
# # Judge validation (SJC Appendix G, Table 12)
#
# AUROC of each judge against annotated support and correctness labels with 95% bootstrap intervals over task scenarios; precision of 'supported' and recall of supported entries at tau; agreement between the two annotation rounds. **On the testbed the annotators are simulated** (two rounds with a configurable error rate); pass `LABELS` to use real labels from an annotation store.

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters"; `papermill NB.ipynb OUT.ipynb -p DATA mydir`)
from typing import Optional  # papermill --help-notebook reads Optional[str], not str | None
DATA: str = "data/testbed"      # a workbench directory: the default testbed, or `workbench import` output
TAU: float = 0.5                  # SJC's threshold
SEED: int = 0
N_BOOT: int = 2000
FIGURES: Optional[str] = None     # None: figures/ for the project's own data, build/figures/<data name>/ for yours
LABELS: Optional[str] = None              # e.g. "annotations": an AnnotationStore root with real labels
COVERAGE_TRIALS: int = 1000     # simulated samples per cluster count for the interval-coverage check
STYLE: str = "gallery"          # "paper": Computer Modern at 10pt, an article's text width (plots.use_style)

# %%
from workbench.notebooks import caption, figures_dir, skip_when_not_applicable, use_project_root

use_project_root(chdir=True)  # relative parameters are the project's, however the kernel was started
skip_when_not_applicable()  # an analysis the data cannot serve is skipped with its reason, not an error
figs = figures_dir(FIGURES, DATA, LABELS, style=STYLE)  # labels of one's own: results of their own
import polars as pl
from IPython.display import display

from workbench import plots
from workbench.annotate import AnnotationStore
from workbench.datasets import NotApplicable, entry_clusters, ensure_default_testbed, load
from workbench.tables import height, rows_of
from workbench.notebooks import Analyses

plots.use_style(STYLE)
pl.Config.set_tbl_rows(40)
analyses = Analyses()  # what ran and what could not, for the run's summary
# the labels first: without them nothing below but the (data-independent) coverage study applies, and nothing is
# derived or scored for it
data = ensure_default_testbed(DATA)
theirs = load(data, names=("labels",)).get("labels")  # the data's own labels (a labelled import's workers)
labels = AnnotationStore(LABELS).labels() if LABELS else theirs
HAVE = labels is not None and labels.height > 0
# your labels next to the data's: agreement pools both (each annotator a side); the judge is validated on yours
pooled = labels if not LABELS or theirs is None or not HAVE else pl.concat([theirs, labels], how="diagonal_relaxed")
NO_LABELS = (f"no labels in {DATA}" + (f" or {LABELS}" if LABELS else "") + ": label a sample (workbench sample, "
             "workbench label) and set LABELS")
COVERAGE = analyses.for_the_project("coverage of the AUROC intervals (simulation)",
                                    ["figures/tables/sjc_table12_interval_coverage.csv"], DATA)
if not HAVE and not COVERAGE:
    raise NotApplicable(NO_LABELS)
if HAVE:  # the runs; entries and scores lazily, for the columns read: only the labeled entries' are collected
    tables = load(data, derive=True, names=(),
                  columns={"entries": ("entry_id", "run_id"), "scores": ("entry_id", "judge", "repeat", "score")},
                  run_columns=("scenario_id",))
    display({name: height(frame) for name, frame in tables.items()})

# %%
from workbench.tables import gold_labels
from workbench.stats import agreement_table
from workbench.stats import judge_table

if HAVE:
    labeled = pooled.select(pl.col("item_id").alias("entry_id")).unique().lazy()  # the labeled entries only
    scores = rows_of(tables["scores"], labeled).collect()
    clusters = entry_clusters({**tables, "entries": rows_of(tables["entries"], labeled)})
else:
    analyses.skipped("agreement between annotation rounds", NO_LABELS)
    analyses.skipped("SJC Table 12: AUROC of each judge", NO_LABELS)
if HAVE:
    SIDES = "round" if pooled.get_column("round").n_unique() > 1 else "annotator"  # one round: annotators
    agree = agreement_table(pooled, dict(zip(clusters["entry_id"], clusters["scenario_id"].fill_null("?"))),
                            by=SIDES, n_boot=N_BOOT, seed=SEED)
    plots.export_table(agree, "sjc_appG_agreement", f"{figs}/tables", f"Agreement between annotation {SIDES}s")
    display(agree)
    analyses.ran("agreement between annotation rounds")

# %%
if HAVE:
    gold = gold_labels(labels)
    table12 = judge_table(scores, gold, clusters, tau=TAU, n_boot=N_BOOT, seed=SEED)
    plots.export_table(table12, "sjc_table12_auroc", f"{figs}/tables", "AUROC of each judge (95% CI over scenarios)")
    display(table12)

# %%
published = pl.read_csv("data/published/text_numbers.csv")
jev = dict(published.filter(pl.col("quantity").is_in(["auroc_support_jev", "auroc_correct_source_score"]))
           .select(pl.col("quantity").replace({"auroc_support_jev": "support", "auroc_correct_source_score": "correct"}),
                   "value").iter_rows())
from workbench.notebooks import is_project_data

ON_TESTBED = is_project_data(DATA) and LABELS is None  # SJC's numbers stand beside the gallery's figure only
if HAVE:
    fig = plots.sjc.auroc_intervals(table12, jev if ON_TESTBED else None,
                                    published_label="Jev on SJC's data (published)")
    plots.export(fig, "sjc_table12_auroc", figs)
    analyses.ran("SJC Table 12: AUROC of each judge")

# %%
caption("""**Figure (SJC Table 12).** AUROC of each judge against the gold labels for support and for correctness, with 95% intervals from scenario-bootstrap resamples (method and measured coverage below); each row says how many entries and positives it has. On the project's testbed (simulated annotators) the red diamonds are Jev's published AUROCs on SJC's own data, support 0.905 and correctness 0.444, on rows of their own; on any other data no published number is drawn.""", DATA, LABELS)

# %%
from workbench.stats import interval_coverage

if COVERAGE:
    coverage = interval_coverage((12, 30), trials=COVERAGE_TRIALS, n_boot=1000, seed=SEED)
    plots.export_table(coverage, "sjc_table12_interval_coverage", f"{figs}/tables",
                       "Coverage of 95% AUROC intervals by number of scenarios (simulation)")
    analyses.ran("coverage of the AUROC intervals (simulation)")
    display(coverage)

# %% [markdown]
# **Interval method.** The AUROC intervals above are cluster jackknife t intervals on the logit scale: the logit of the AUROC plus or minus Student's t with (scenarios - 1) degrees of freedom times the leave-one-scenario-out jackknife standard error of that logit, transformed back. The table measures, on a simulated judge with scenario effects (12 and 30 scenarios of 25 entries, as the testbed's Table 12 has 12), how often each method's 95% interval holds the population AUROC, with a Wilson interval for that share: the percentile bootstrap, the usual default, falls short with 12 scenarios; the t intervals hold their level. The choice of the logit scale was made on scenarios of unequal size, where the plain t fell short at 8 and 12 scenarios (`benchmarks/bench_interval_coverage.py`, its table in `benchmarks/interval_coverage.md`).
