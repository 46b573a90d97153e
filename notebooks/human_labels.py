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
# # Judges against human labels: correlations, intervals, Williams tests, AUROC and calibration
#
# Every other notebook's AUROC, kappa and calibration is computed on labels the testbed's simulator wrote. Here the labels are people's. Each summary's human target (`TARGET`) is compared with every metric the data ships and with the workbench's judges (the lexical judge runs offline on every summary sentence against its source, as on any compaction; `SCORES` adds another judge's): correlations, plain and controlling for the system, on the summaries every compared score has (paired); intervals that resample sources; Williams tests; AUROC against sentence labels; calibration.
#
# `DATA` is FRANK by default (Pagnoni, Balachandran and Tsvetkov, NAACL 2021; MIT; the project's compact copy, read in memory), and on FRANK its published table is reproduced first. Point `DATA` at any `workbench import --format labelled-summaries` (or `frank`) directory to run the same analyses on your own labelled summaries: every sentence printed below is computed from the data the notebook ran on.

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters"; `papermill NB.ipynb OUT.ipynb -p DATA mydir`)
from typing import Optional  # papermill --help-notebook reads Optional[str], not str | None
DATA: str = "data/benchmarks/frank"   # FRANK's files, or a directory written by workbench import (labelled summaries)
SCORES: Optional[str] = None       # a scores table of another judge (workbench judge DATA --judge openai --out S.parquet)
TARGET: Optional[str] = None    # the human target (a runs column); None: human_score, else the header's first target
REPORT_SPLIT: str = "test"      # the split the judges are reported on (FRANK: choose on valid, report on test)
CHOOSE_SPLIT: str = "valid"     # the split the headline aggregation (mean or min over sentences) is chosen on
N_BOOT: int = 2000
SEED: int = 0
FIGURES: Optional[str] = None     # None: figures/ for the project's own data, build/figures/<data name>/ for yours
STYLE: str = "gallery"          # "paper": Computer Modern at 10pt, an article's text width (plots.use_style)

# %%
from workbench.notebooks import figures_dir, skip_when_not_applicable, use_project_root

use_project_root(chdir=True)  # relative parameters are the project's, however the kernel was started
skip_when_not_applicable()  # an analysis the data cannot serve is skipped with its reason, not an error
figs = figures_dir(FIGURES, DATA, SCORES, style=STYLE, TARGET=TARGET)
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
from workbench.analyses import AGGREGATIONS, metric_column, summary_frame, summary_scores

runs = tables["runs"]
declared = [] if tables.get("variables") is None else [
    r["column"] for r in tables["variables"].iter_rows(named=True) if r["kind"] == "target"]
present = [c for c in ["human_score", *declared] if c in runs.columns and runs.get_column(c).null_count() < runs.height]
HUMAN = TARGET or (present[0] if present else None)  # the target used below: TARGET, else the data's first
if TARGET is None and len(present) > 1:
    print(f"TARGET = {HUMAN!r}, the first of the data's human targets {present} (-p TARGET NAME for another)")
if HUMAN is None or HUMAN not in present:
    raise NotApplicable(f"the correlation with human judgement needs a summary-level human target (TARGET = {TARGET!r}"
                        f"); these runs have {present or 'none'} (a labelled-summaries file's score or human fields)")
from workbench.adapters import DEFAULT_METRICS, RELEASE

METRICS = [m for m in DEFAULT_METRICS if metric_column(m) in runs.columns] or [
    c.removeprefix("metric_") for c in runs.columns if c.startswith("metric_")]
aggregated = summary_scores(tables["entries"], tables["scores"])
frame = summary_frame(runs, aggregated, METRICS, targets=[HUMAN])  # the target under its own name
from workbench.analyses import oriented

frame, LOWER = oriented(frame, tables.get("variables"), METRICS)  # a lower-is-better metric, negated: higher is better
if LOWER:
    print(f"{LOWER}: lower is better (the data's header says so), so their scores are negated below: for every score, "
          "higher is better")
JUDGES = sorted(aggregated.get_column("judge").unique().to_list())
subsets = sorted(d for d in frame.get_column("dataset").unique().to_list() if d is not None)
# the rows over every data set (the analyses' "both", FRANK's word for its two) named for this data
whole_name = "both" if len(subsets) == 2 else "all data sets" if len(subsets) > 2 else (subsets or ["all"])[0]
DATASETS = [None, *subsets] if len(subsets) > 1 else [None]  # one data set: its panel would repeat "all"
IS_FRANK = "meta_release" in runs.columns and runs.get_column("meta_release").unique().to_list() == [RELEASE]
sentences = tables["entries"].group_by("run_id").len()
ONE_SENTENCE = bool(sentences.height) and int(sentences.get_column("len").max()) == 1
AGGREGATES = ("mean",) if ONE_SENTENCE else AGGREGATIONS  # one sentence a summary: its minimum is its mean
print(f"{frame.height} summaries of {frame['source_id'].n_unique()} sources by {frame['system'].n_unique()} systems"
      f"{f' in {len(subsets)} data sets' if len(subsets) > 1 else ''}; target {HUMAN}; metrics {METRICS or 'none'}; "
      f"judges {JUDGES}" + ("; FRANK's release: its published table is reproduced below" if IS_FRANK else ""))

# %% [markdown]
# ## Correlations with the human target, and a published table reproduced
#
# The partial correlations follow FRANK's protocol (`evaluation/evaluate.py`): a score and the human target are each replaced by their residuals after a least-squares fit on the system's one-hot indicators, then Pearson's and Spearman's correlations of the residuals, per split and data set. Every row of one split and data set uses the same summaries, those every compared score has (`n`; `n_missing` counts the others), so the rows can be compared with each other. The plain correlations (Pearson, Spearman, Kendall's tau-b) are computed on the same rows.
#
# A published table is reproduced as published: each metric on its own rows (missing values dropped per metric). On FRANK's release, FRANK's own numbers from its data README (three decimals) stand beside the computed ones; on any other data no published number is shown.

# %%
from workbench.analyses import compare_with_published, correlation_table

JUDGE_COLUMNS = [f"{j} ({a})" for j in JUDGES for a in AGGREGATES]
ORDER = [*METRICS, *JUDGE_COLUMNS]
present = {s for s in frame.get_column("split").unique().to_list() if s is not None}
SPLITS = ["all", *(s for s in ("valid", "test") if s in present), *sorted(present - {"valid", "test"})]
table = correlation_table(frame, ORDER, splits=SPLITS, datasets=DATASETS, human=HUMAN)  # paired
plain = correlation_table(frame, ORDER, splits=SPLITS, datasets=DATASETS, human=HUMAN, control=None)
if IS_FRANK and METRICS:
    reproduced = compare_with_published(correlation_table(frame, METRICS, splits=SPLITS, datasets=DATASETS,
                                                          human=HUMAN, paired=False))
    worst = max(reproduced["pearson_difference"].abs().max(), reproduced["spearman_difference"].abs().max())
    print(f"FRANK's table: {reproduced.height} published numbers reproduced (each metric on its own rows); largest "
          f"absolute difference {worst:.4f} (they are rounded to 0.001)")
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
else:
    print("no published table belongs to this data: nothing is reproduced")
report = REPORT_SPLIT if REPORT_SPLIT in SPLITS else "all"
for frame_, name, what in ((table, "human_correlations", "Partial Pearson and Spearman correlation (controlling for "
                            "the system)"), (plain, "human_plain_correlations", "Plain Pearson, Spearman and Kendall "
                            "correlation")):
    shown = frame_.filter(pl.col("split") == report).with_columns(pl.col("dataset").replace("both", whole_name))
    n_rows = shown.group_by("dataset").agg(pl.col("n").first(), pl.col("n_missing").first())
    counts = "; ".join(f"{d}: {n} summaries, {m} without every score" for d, n, m in n_rows.sort("dataset").iter_rows())
    plots.export_table(shown, name, f"{figs}/tables",
                       f"{what} with {HUMAN} of every metric and judge aggregation on the {report} split, every "
                       f"row of a data set on the same summaries ({counts})",
                       columns=["dataset", "metric", "pearson", "pearson_p", "spearman", "spearman_p",
                                *(["kendall"] if name == "human_plain_correlations" else [])],
                       formats={"pearson": ".3f", "spearman": ".3f", "kendall": ".3f", "pearson_p": ".2g",
                                "spearman_p": ".2g"}, keys=["dataset"])

# %% [markdown]
# ## The judges in the table, with intervals
#
# A summary's judge score is the mean or the minimum of its sentences' scores (only the mean when every summary has one sentence); which is the headline is chosen on `CHOOSE_SPLIT` (the higher partial Pearson correlation) and the judges are reported on `REPORT_SPLIT`. Intervals resample sources (the summaries of one source are not independent) and refit the system adjustment in every resample.

# %%
from workbench.analyses import choose_aggregation, correlation_intervals

has_split = CHOOSE_SPLIT in frame.get_column("split").to_list()
HEADLINE = {j: choose_aggregation(frame, j, split=CHOOSE_SPLIT, human=HUMAN) if has_split and len(AGGREGATES) > 1
            else "mean" for j in JUDGES}
print({j: f"{a} (chosen on {CHOOSE_SPLIT})" if has_split else f"{a} (no {CHOOSE_SPLIT} split: the mean)"
       for j, a in HEADLINE.items()})
# the table's intervals: paired, as its estimates; the figure's: paired too, except on FRANK's release, whose
# figure stands beside FRANK's published numbers and so puts each score on its own summaries, as they were published
intervals = correlation_intervals(frame, ORDER, split=report, human=HUMAN, n_boot=N_BOOT, seed=SEED)
forest = pl.concat([correlation_intervals(frame, ORDER, split=report, dataset=d, correlations=("pearson",),
                                          human=HUMAN, n_boot=N_BOOT, seed=SEED, paired=not IS_FRANK)
                    for d in DATASETS])
bounds = {kind: intervals.filter(pl.col("correlation") == kind).select(
    "metric", pl.col("ci_low").alias(f"{kind}_low"), pl.col("ci_high").alias(f"{kind}_high"))
    for kind in ("pearson", "spearman")}
placed = (table.filter((pl.col("split") == report) & (pl.col("dataset") == "both"))
          .join(bounds["pearson"], on="metric", how="left").join(bounds["spearman"], on="metric", how="left")
          .with_columns(pl.col("metric").is_in([f"{j} ({a})" for j, a in HEADLINE.items()]).alias("headline")))
plots.export_table(placed.select("metric", "n", "pearson", "pearson_low", "pearson_high", "spearman", "spearman_low",
                                 "spearman_high", "headline"),
                   "human_judges_placed", f"{figs}/tables",
                   f"Partial correlations with {HUMAN} on the {report} split, every data set: the baselines "
                   f"and the judges' {' and '.join(AGGREGATES)} over sentences, with 95% intervals resampling sources",
                   columns=["metric", "n", "pearson", "spearman", "headline"],
                   rename={"n": "Summaries", "pearson": "Pearson [95%]", "spearman": "Spearman [95%]"},
                   intervals={"pearson": ("pearson_low", "pearson_high"), "spearman": ("spearman_low", "spearman_high")},
                   formats={"pearson": ".3f", "spearman": ".3f"}, keys=["metric"])
display(placed)

# %%
from workbench.analyses import published_frank

published = published_frank().filter(pl.col("split") == report).select(
    "metric", "dataset", pl.col("pearson").alias("value")) if IS_FRANK else None  # FRANK's numbers: on FRANK only
shown_forest = forest.with_columns(pl.col("dataset").replace("both", whole_name))
ns = forest.filter(pl.col("dataset") == "both").get_column("n")
span = f"{ns.min()}" if ns.min() == ns.max() else f"{ns.min()} to {ns.max()}"
on_rows = "each score on the summaries that have it" if IS_FRANK else "every score on the summaries that have all"
fig = plots.human_labels.correlation_forest(shown_forest, panels=[d or whole_name for d in DATASETS], order=ORDER,
                                            judges=JUDGE_COLUMNS,
                                            published=published if published is not None and published.height else None,
                                            title=f"partial Pearson correlation with {HUMAN} ({report} split; "
                                                  f"{on_rows}: {span})")
plots.export(fig, "human_partial_correlation_forest", figs)
both = forest.filter((pl.col("dataset") == "both") & pl.col("estimate").is_not_nan())
ranked = both.sort("estimate", descending=True, nulls_last=True).drop_nulls("estimate").get_column("metric").to_list()
print(f"Figure: each score's partial Pearson correlation with {HUMAN} on the {report} split (controlling for the "
      f"system), with its 95% interval resampling sources, for {'every data set and each alone' if len(DATASETS) > 1 else 'the data'}; "
      f"judges' rows in orange" + ("; FRANK's published numbers as crosses (its README's table)" if IS_FRANK else "")
      + (f". Highest: {ranked[0]!r}; the judges rank " + ", ".join(
          f"{j} {ranked.index(j) + 1} of {len(ranked)}" for j in JUDGE_COLUMNS if j in ranked) if ranked else
          ". No score has a correlation here (too few summaries with every score)")
      + (f"; no estimate for {', '.join(repr(m) for m in ORDER if m not in ranked)} (too few summaries with it)"
         if ranked and len(ranked) < len(ORDER) else "") + ".")

# %% [markdown]
# ## Williams tests against each baseline
#
# FRANK's `mm-correlation` mode: on the summaries both scores have, every variable residualised on the system, the difference r(judge) - r(baseline), tested two-sided in that declared order (never the direction the data shows). Williams' test takes summaries as independent and normal, and rejects a true null far more often than 5% when the summaries of one source share it (`benchmarks/interval_coverage.md`); the clustered p and the interval beside it (the delete-one-source jackknife t) hold their level, and are the ones to read.

# %%
from workbench.analyses import williams_table

williams = pl.concat([williams_table(frame, f"{j} ({HEADLINE[j]})", METRICS, split=report, human=HUMAN,
                                     n_boot=N_BOOT, seed=SEED) for j in JUDGES])
plots.export_table(williams.select("metric", "baseline", "n", "r_metric", "r_baseline", "p", "p_cluster", "difference",
                                   "ci_low", "ci_high"),
                   "human_williams", f"{figs}/tables",
                   f"Each judge's headline against each baseline ({report} split): the difference r(judge) - "
                   "r(baseline) of partial correlations with its 95% interval and two-sided p, both clustered by "
                   "source (jackknife t), and Williams' two-sided p (which takes summaries as independent)",
                   columns=["metric", "baseline", "n", "r_metric", "r_baseline", "difference", "p_cluster", "p"],
                   rename={"n": "Summaries", "r_metric": "r judge", "r_baseline": "r baseline",
                           "p": "Williams p", "p_cluster": "clustered p", "difference": "judge - baseline [95%]"},
                   intervals={"difference": ("ci_low", "ci_high")},
                   formats={"r_metric": ".3f", "r_baseline": ".3f", "difference": ".3f"},
                   keys=["metric"])
display(williams)

# %% [markdown]
# ## AUROC against sentence labels
#
# Sentence labels (people's `support` labels of the entries; on FRANK, a one-sentence summary's `Factuality` is the label of its sentence: `supported` if no annotator found an error). Each judge's sentence score and, for one-sentence summaries, each baseline's summary score against them, per data set and per system, with intervals resampling sources; below, the summary-level AUROC of the target `== 1` (an approximation of TRUE's protocol).

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
whole = summary_auroc(frame, [*METRICS, *JUDGE_COLUMNS], by=("dataset",), human=HUMAN, n_boot=N_BOOT, seed=SEED)
plots.export_table(whole, "human_summary_auroc", f"{figs}/tables",
                   f"AUROC of each score against {HUMAN} = 1, per data set, 95% intervals resampling sources: an "
                   "approximation of TRUE's protocol",
                   columns=["dataset", "score", "estimate", "n", "positives"],
                   intervals={"estimate": ("ci_low", "ci_high")}, formats={"estimate": ".3f"}, keys=["dataset"])
display(whole)

# %%
if labels is not None and labels.height:
    counted = gold.filter(pl.col("field") == "support").get_column("value").value_counts().sort("value")
    said = ", ".join(f"{n} {v}" for v, n in counted.iter_rows())
    print(f"Figure: AUROC of each judge's sentence score{' and of ' + ', '.join(repr(s) for s in shown if s not in JUDGES) if len(shown) > len(JUDGES) else ''} "
          f"against people's sentence labels ({said}), per system, with 95% intervals resampling sources; chance "
          "is the dotted line; a system with fewer than 5 labels of a class has no point.")

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

# %%
if labels is not None and labels.height:
    share = float(y.mean())
    middle = float(((s >= 0.4) & (s <= 0.7)).mean())
    print(f"Figure: the share of the {len(y)} labelled sentences people found supported against the lexical judge's "
          f"mean score per bin, with 95% intervals resampling sources. People found {share:.0%} of them supported; the "
          f"judge puts {middle:.0%} of them between 0.4 and 0.7; its Brier score is "
          f"{float(calibration.filter(pl.col('statistic') == 'brier').get_column('estimate')[0]):.3f}.")
