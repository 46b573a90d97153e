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
# # Judges against real human labels: FRANK reproduced, the workbench's judges placed in it
#
# Every other notebook's AUROC, kappa and calibration is computed on labels the testbed's simulator wrote. Here the labels are people's: FRANK (Pagnoni, Balachandran and Tsvetkov, NAACL 2021; MIT; the article and summary text is CNN/DailyMail's and the BBC's), 2,246 summaries of 499 news articles by 9 systems, each with the share of its sentences that three annotators found free of factual errors (`Factuality`). FRANK's evaluation, the partial correlation of a metric's per-summary score with `Factuality` controlling for the system, is reproduced from FRANK's own score file; the lexical judge (run offline on every summary sentence against the article it came from, as on any compaction) takes its place in that table with what FRANK does not publish: article-bootstrap intervals, Williams tests against each baseline, AUROC against sentence labels, calibration. FRANK's "no error" covers every error type (grammar, coreference, discourse links too), so it is broader than "supported by the source": read every number below with that in mind.
#
# `DATA` is FRANK by default (the project's compact copy, read in memory); point it at any `workbench import --format labelled-summaries` (or `frank`) directory to run the same analyses on your own labelled summaries.

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters"; `papermill NB.ipynb OUT.ipynb -p DATA mydir`)
from typing import Optional  # papermill --help-notebook reads Optional[str], not str | None
DATA: str = "data/benchmarks/frank"   # FRANK's files, or a directory written by workbench import (labelled summaries)
SCORES: Optional[str] = None       # a scores table of another judge (workbench judge DATA --judge openai --out S.parquet)
REPORT_SPLIT: str = "test"      # the split the judges are reported on (FRANK: choose on valid, report on test)
CHOOSE_SPLIT: str = "valid"     # the split the headline aggregation (mean or min over sentences) is chosen on
N_BOOT: int = 2000
SEED: int = 0
FIGURES: Optional[str] = None     # None: figures/ for the project's own data, build/figures/<data name>/ for yours
STYLE: str = "gallery"          # "paper": Computer Modern at 10pt, an article's text width (plots.use_style)

# %%
from workbench.notebooks import figures_dir, use_project_root

use_project_root(chdir=True)  # relative parameters are the project's, however the kernel was started
figs = figures_dir(FIGURES, DATA, SCORES, style=STYLE)
import polars as pl
from IPython.display import display

from workbench import plots
from workbench.datasets import NotApplicable, load, need
from workbench.tables import height

plots.use_style(STYLE)
pl.Config.set_tbl_rows(60)
tables = load(DATA, derive=True)  # the lexical judge scores every sentence offline when the data has no scores
if SCORES:
    from workbench.tables import read_table

    tables["scores"] = pl.concat([tables["scores"], read_table(SCORES, "scores").select(tables["scores"].columns)])
need(tables, "entries", "scores", what="judging summaries against human labels")
{name: height(frame) for name, frame in tables.items()}

# %%
from workbench.analyses import metric_column, summary_frame, summary_scores

runs = tables["runs"]
if "human_score" not in runs.columns or runs.get_column("human_score").null_count() == runs.height:
    raise NotApplicable("the correlation with human judgement needs a summary-level human score (the runs' "
                        "human_score: a labelled-summaries import's score field); these runs have none")
from workbench.adapters import DEFAULT_METRICS

METRICS = [m for m in DEFAULT_METRICS if metric_column(m) in runs.columns] or [
    c.removeprefix("metric_") for c in runs.columns if c.startswith("metric_")]
aggregated = summary_scores(tables["entries"], tables["scores"])
frame = summary_frame(runs, aggregated, METRICS)
JUDGES = sorted(aggregated.get_column("judge").unique().to_list())
DATASETS = [None, *sorted(d for d in frame.get_column("dataset").unique().to_list() if d is not None)]
print(f"{frame.height} summaries of {frame['source_id'].n_unique()} sources by {frame['system'].n_unique()} systems; "
      f"metrics {METRICS}; judges {JUDGES}")

# %% [markdown]
# ## FRANK's table, reproduced
#
# FRANK's protocol (`evaluation/evaluate.py`): a metric's score and `Factuality` are each replaced by their residuals after a least-squares fit on the system's one-hot indicators, then Pearson's and Spearman's correlations of the residuals, on split all, valid or test of both data sets or one. Missing metric values are dropped per metric (dependency entailment has 83, FEQA 4). Beside each number, FRANK's own from its data README (three decimals) and the difference.

# %%
from workbench.analyses import AGGREGATIONS, compare_with_published, correlation_table

JUDGE_COLUMNS = [f"{j} ({a})" for j in JUDGES for a in AGGREGATIONS]
ORDER = [*METRICS, *JUDGE_COLUMNS]
table = correlation_table(frame, ORDER, splits=("all", "valid", "test"), datasets=DATASETS)
reproduced = compare_with_published(table)
if reproduced.height:
    worst = max(reproduced["pearson_difference"].abs().max(), reproduced["spearman_difference"].abs().max())
    print(f"{reproduced.height} published numbers; largest absolute difference {worst:.4f} (they are rounded to 0.001)")
    plots.export_table(reproduced.select("split", "dataset", "metric", "n", "pearson", "pearson_published",
                                         "spearman", "spearman_published"),
                       "human_frank_reproduced", f"{figs}/tables",
                       "FRANK's partial correlations with Factuality (controlling for the system), as the workbench "
                       "computes them from FRANK's score file and as FRANK's data README gives them",
                       rename={"pearson": "Pearson", "pearson_published": "FRANK", "spearman": "Spearman",
                               "spearman_published": "FRANK ", "n": "summaries"},
                       formats={"pearson": ".3f", "pearson_published": ".3f", "spearman": ".3f",
                                "spearman_published": ".3f"}, keys=["split", "dataset"])
    display(reproduced)
plots.export_table(table, "human_correlations", f"{figs}/tables",
                   "Partial Pearson and Spearman correlation with the human score (controlling for the system) of "
                   "every metric and judge aggregation, per split and data set, with p-values as FRANK reports them",
                   formats={"pearson": ".3f", "spearman": ".3f", "pearson_p": ".2g", "spearman_p": ".2g"},
                   keys=["split", "dataset"])

# %% [markdown]
# ## The judges in the table, with intervals
#
# A summary's judge score is the mean or the minimum of its sentences' scores; which is the headline is chosen on the valid split (the higher partial Pearson correlation) and the judges are reported on the test split. Intervals resample articles (the 4 or 5 summaries of one article are not independent) and refit the system adjustment in every resample.

# %%
from workbench.analyses import choose_aggregation, correlation_intervals

has_split = CHOOSE_SPLIT in frame.get_column("split").to_list()
HEADLINE = {j: choose_aggregation(frame, j, split=CHOOSE_SPLIT) if has_split else "mean" for j in JUDGES}
print({j: f"{a} (chosen on {CHOOSE_SPLIT})" if has_split else f"{a} (no {CHOOSE_SPLIT} split: the mean)"
       for j, a in HEADLINE.items()})
report = REPORT_SPLIT if REPORT_SPLIT in frame.get_column("split").to_list() else "all"
forest = pl.concat([correlation_intervals(frame, ORDER, split=report, dataset=d, correlations=("pearson",),
                                          n_boot=N_BOOT, seed=SEED) for d in DATASETS])
spearman = correlation_intervals(frame, JUDGE_COLUMNS, split=report, correlations=("spearman",), n_boot=N_BOOT,
                                 seed=SEED)
placed = (table.filter((pl.col("split") == report) & (pl.col("dataset") == "both"))
          .join(forest.filter(pl.col("dataset") == "both").select("metric", pl.col("ci_low").alias("pearson_low"),
                                                                  pl.col("ci_high").alias("pearson_high")),
                on="metric", how="left")
          .join(spearman.select("metric", pl.col("ci_low").alias("spearman_low"),
                                pl.col("ci_high").alias("spearman_high")), on="metric", how="left")
          .with_columns(pl.col("metric").is_in([f"{j} ({a})" for j, a in HEADLINE.items()]).alias("headline")))
plots.export_table(placed.select("metric", "n", "pearson", "pearson_low", "pearson_high", "spearman", "spearman_low",
                                 "spearman_high", "headline"),
                   "human_judges_placed", f"{figs}/tables",
                   f"Partial correlations with the human score on the {report} split, both data sets: the baselines "
                   "and the judges' mean and minimum over sentences, with 95% article-bootstrap intervals",
                   columns=["metric", "n", "pearson", "spearman", "headline"],
                   rename={"n": "Summaries", "pearson": "Pearson [95%]", "spearman": "Spearman [95%]"},
                   intervals={"pearson": ("pearson_low", "pearson_high"), "spearman": ("spearman_low", "spearman_high")},
                   formats={"pearson": ".3f", "spearman": ".3f"}, keys=["metric"])
display(placed)

# %%
from workbench.analyses import published_frank

published = published_frank().filter(pl.col("split") == report).select(
    "metric", "dataset", pl.col("pearson").alias("value"))
fig = plots.human_labels.correlation_forest(forest, panels=[d or "both" for d in DATASETS], order=ORDER,
                                            judges=JUDGE_COLUMNS, published=published if published.height else None,
                                            title=f"partial Pearson correlation with the human score ({report} split)")
plots.export(fig, "human_partial_correlation_forest", figs)

# %% [markdown]
# **Figure (FRANK, people's labels).** Each metric's partial Pearson correlation with `Factuality` on the test split (controlling for the system), with its 95% interval resampling articles, for both data sets and each alone; the judges' rows in orange, FRANK's published numbers as crosses where its README gives them (test split, both data sets). On FRANK the lexical judge correlates about as well as the reference-based scores overall and better than them on CNN/DM, and clearly less than BERTScore against the article and FactCC. Reference-based scores (BLEU, METEOR, ROUGE) compare with the reference summary, not the article; BERTScore-Art, FactCC, QAGS, FEQA and dependency entailment, like the lexical judge, compare with the article.

# %% [markdown]
# ## Williams tests against each baseline
#
# FRANK's `mm-correlation` mode: on the summaries both scores have, every variable residualised on the system, Williams' one-sided test that the higher correlation exceeds the lower. It takes summaries as independent; an article's 4 or 5 summaries share it, so beside each test the article-bootstrap interval of the difference in correlation.

# %%
from workbench.analyses import williams_table

williams = pl.concat([williams_table(frame, f"{j} ({HEADLINE[j]})", METRICS, split=report, n_boot=N_BOOT, seed=SEED)
                      for j in JUDGES])
plots.export_table(williams.select("metric", "baseline", "n", "r_metric", "r_baseline", "higher", "p", "difference",
                                   "ci_low", "ci_high"),
                   "human_williams", f"{figs}/tables",
                   f"Each judge's headline against each baseline ({report} split): Williams' one-sided p that the higher "
                   "partial correlation exceeds the lower, and the difference r(judge) - r(baseline) with its 95% "
                   "article-bootstrap interval",
                   columns=["metric", "baseline", "n", "r_metric", "r_baseline", "higher", "p", "difference"],
                   rename={"n": "Summaries", "r_metric": "r judge", "r_baseline": "r baseline",
                           "p": "Williams p", "difference": "judge - baseline [95%]"},
                   intervals={"difference": ("ci_low", "ci_high")},
                   formats={"r_metric": ".3f", "r_baseline": ".3f", "difference": ".3f"},
                   keys=["metric"])
display(williams)

# %% [markdown]
# ## AUROC against sentence labels
#
# A one-sentence summary's `Factuality` is a label of its sentence, the workbench's entry: `supported` if no annotator found an error (966 XSum summaries have one sentence, CNN/DM only 3). Each judge's sentence score and each baseline's summary score against it, per data set and per system, with intervals resampling articles; below, the summary-level AUROC of `Factuality == 1` (an approximation of TRUE's protocol, which needs FRANK's per-sentence file).

# %%
from workbench.analyses import entry_auroc, summary_auroc
from workbench.tables import gold_labels

labels = tables.get("labels")
if labels is not None and labels.height:
    gold = gold_labels(labels)
    by_dataset = entry_auroc(gold, tables["entries"], tables["scores"], frame, baselines=METRICS, by=("dataset",),
                             n_boot=N_BOOT, seed=SEED)
    by_system = entry_auroc(gold, tables["entries"], tables["scores"], frame, baselines=METRICS,
                            by=("dataset", "system"), n_boot=N_BOOT, seed=SEED)
    plots.export_table(by_dataset, "human_entry_auroc", f"{figs}/tables",
                       "AUROC against the sentence labels of one-sentence summaries, per data set, with 95% intervals "
                       "resampling articles (--: fewer than 5 labels of a class; the CSV's reason column says so)",
                       columns=["dataset", "score", "estimate", "n", "positives"],
                       intervals={"estimate": ("ci_low", "ci_high")}, formats={"estimate": ".3f"}, keys=["dataset"])
    plots.export_table(by_system, "human_entry_auroc_by_system", f"{figs}/tables",
                       "AUROC against sentence labels per data set and system (95% intervals resampling articles; --: "
                       "fewer than 5 labels of a class, the CSV says why)",
                       columns=["dataset", "system", "score", "estimate", "n", "positives"],
                       intervals={"estimate": ("ci_low", "ci_high")}, formats={"estimate": ".3f"},
                       keys=["dataset", "system"])
    display(by_dataset)
    shown = [*JUDGES, "BertScore P Art", "FactCC"]
    shown = [s for s in shown if s in by_system.get_column("score").to_list()]
    fig = plots.human_labels.auroc_by_group(by_system.filter(pl.col("estimate").is_not_null()), "system",
                                            scores=shown, title="AUROC against sentence labels (one-sentence summaries)")
    plots.export(fig, "human_entry_auroc_by_system", figs)
else:
    print("no sentence labels in DATA: entry-level AUROC skipped")
whole = summary_auroc(frame, [*METRICS, *JUDGE_COLUMNS], by=("dataset",), n_boot=N_BOOT, seed=SEED)
plots.export_table(whole, "human_summary_auroc", f"{figs}/tables",
                   "AUROC of each score against Factuality = 1 (no sentence in error), per data set, 95% intervals "
                   "resampling articles: an approximation of TRUE's protocol",
                   columns=["dataset", "score", "estimate", "n", "positives"],
                   intervals={"estimate": ("ci_low", "ci_high")}, formats={"estimate": ".3f"}, keys=["dataset"])
display(whole)

# %% [markdown]
# **Figure (FRANK, XSum).** AUROC of the judge's sentence score and of two article-based baselines against people's sentence labels, per system, with 95% intervals resampling articles; chance is the dotted line. XSum summaries are single, highly abstractive sentences: most have an error (889 of 966), and an error there is often an invented fact phrased in words the article does not use, which a lexical overlap judge can only see as low overlap.

# %% [markdown]
# ## Calibration of the lexical judge on people's labels

# %%
from workbench.stats import calibration_table, reliability_curve
from workbench.datasets import entry_clusters

if labels is not None and labels.height:
    from workbench.stats import labeled_scores

    data = labeled_scores(tables["scores"], gold, entry_clusters(tables), judge="lexical")
    s, y, c = data["score"].to_numpy(), data["label"].to_numpy(), data["scenario_id"].to_numpy()
    curve = reliability_curve(s, y, c, 10, n_boot=N_BOOT, seed=SEED)
    fig = plots.calibration.reliability_diagram(curve, title=f"lexical judge, {data.height} sentences people labelled")
    plots.export(fig, "human_calibration_lexical", figs)
    calibration = calibration_table(s, y, c, 10, n_boot=N_BOOT, seed=SEED)
    plots.export_table(calibration, "human_calibration_lexical", f"{figs}/tables",
                       "The lexical judge's calibration on people's sentence labels: Brier (Murphy decomposition), "
                       "plug-in ECE and the debiased calibration error; 95% intervals resampling articles")
    display(calibration)

# %% [markdown]
# **Figure (FRANK).** The share of sentences people found free of errors against the lexical judge's mean score per bin, with 95% intervals: on people's labels the judge's score is far from a probability. All but three of these sentences are XSum's, and people found an error in 92% of them, while the judge puts most of them between 0.4 and 0.7: its score ranks sentences a little (the AUROC above) and overstates how often one is free of errors at every level.
