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
# # Judges on dialogue summaries (SummEdits)
#
# SummEdits (Laban et al., EMNLP 2023; Apache-2.0): summaries of chats, meeting and call transcripts, emails, podcasts, news and paper abstracts, each a seed summary or a minimal edit of it, labelled consistent or not with its document by people; the project holds 8 of its 10 domains (`data/benchmarks/summedits/`). Text that reads like an agent's history (turns of a conversation, a transcript) is where a source judge has to work. Each judge's summary score is the minimum over its sentences (the mean beside it); per domain, its AUROC against the labels and its balanced accuracy on the `test` split at the threshold chosen on the `evaluation` split, with intervals resampling documents (an item's edits share its document). The authors' per-domain balanced accuracy of 19 zero-shot models and of people is drawn beside: a reference on the same quantity and data, not something to reproduce digit by digit (no per-item predictions are published).

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters"; `papermill NB.ipynb OUT.ipynb -p DATA mydir`)
from typing import Optional  # papermill --help-notebook reads Optional[str], not str | None
DATA: str = "data/benchmarks/summedits"   # SummEdits' files, or a directory `workbench import --format summedits` wrote
SCORES: Optional[str] = None    # a scores table of other judges (workbench judge DATA --out S.parquet); None: lexical
N_BOOT: int = 2000
SEED: int = 0
FIGURES: Optional[str] = None     # None: figures/ for the project's own data, build/figures/<data name>/ for yours
STYLE: str = "gallery"          # "paper": Computer Modern at 10pt, an article's text width (plots.use_style)

# %%
from workbench.notebooks import figures_dir, skip_when_not_applicable, use_project_root

use_project_root(chdir=True)  # relative parameters are the project's, however the kernel was started
skip_when_not_applicable()  # an analysis the data cannot serve is skipped with its reason, not an error
figs = figures_dir(FIGURES, DATA, SCORES, style=STYLE)
from pathlib import Path

import polars as pl
from IPython.display import display

from workbench import plots
from workbench.analyses import HUMAN_ROW, published_summedits, summedits_frame, summedits_table
from workbench.datasets import NotApplicable, load

plots.use_style(STYLE)
pl.Config.set_tbl_rows(40)
tables = load(DATA, derive=True)
runs = tables["runs"]
if "meta_release" not in runs.columns or runs.get_column("meta_release").drop_nulls().unique().to_list() != ["SummEdits"]:
    raise NotApplicable("DATA is not a SummEdits import (no run's meta_release is SummEdits): import SummEdits' files "
                        "with `workbench import DIR --format summedits`")
if SCORES:
    from workbench.tables import read_table

    tables["scores"] = read_table(SCORES, "scores")
frame = summedits_frame(runs, tables["entries"], tables["scores"])
judges = sorted(frame.get_column("judge").unique().to_list())
print(f"{runs.height} summaries of {runs.get_column('scenario_id').n_unique()} documents in "
      f"{runs.get_column('subset').n_unique()} domains ({int(runs.get_column('human_score').sum())} consistent); "
      f"judges: {', '.join(judges)}")

# %%
table = pl.concat([summedits_table(frame, aggregate=a, n_boot=N_BOOT, seed=SEED) for a in ("min", "mean")])
plots.export_table(table.filter(pl.col("aggregate") == "min").select(
    "judge", "domain", "statistic", "tau", "estimate", "ci_low", "ci_high", "n", "n_clusters"),
    "summedits_judges", f"{figs}/tables",
    "Each judge on SummEdits' test split, per domain and the mean of the eight: AUROC of the summary score (the "
    "minimum over its sentences) against people's labels, and balanced accuracy at the threshold tau chosen on the "
    "evaluation split, with 95% intervals resampling documents",
    intervals={"estimate": ("ci_low", "ci_high")}, formats={"estimate": ".3f", "tau": ".3f"},
    keys=["judge", "domain"])
display(table.filter(pl.col("aggregate") == "min"))
by_mean = table.filter((pl.col("aggregate") == "mean") & (pl.col("domain") == "overall"))
by_min = table.filter((pl.col("aggregate") == "min") & (pl.col("domain") == "overall"))
for j in judges:
    lo = {r["statistic"]: r["estimate"] for r in by_min.filter(pl.col("judge") == j).to_dicts()}
    me = {r["statistic"]: r["estimate"] for r in by_mean.filter(pl.col("judge") == j).to_dicts()}
    print(f"{j}: over the eight domains AUROC {lo['auroc']:.3f} and balanced accuracy {lo['balanced_accuracy']:.3f} "
          f"with the minimum over sentences, {me['auroc']:.3f} and {me['balanced_accuracy']:.3f} with the mean")

# %%
published = published_summedits()
# the published protocol run by this project on a real small model (tools/summedits_model.py), where it was run
run_files = sorted((Path(DATA) / "runs").glob("*.csv")) if Path(DATA).is_dir() else []
model_runs = pl.concat([pl.read_csv(f, schema_overrides={"balanced_accuracy": pl.Float64}) for f in run_files]) \
    if run_files else None
if model_runs is not None:
    plots.export_table(model_runs.select("model", "domain", "items", "misses", "balanced_accuracy"),
                       "summedits_model_runs", f"{figs}/tables",
                       "SummEdits' zero-shot prompt run by this project on a local model: per domain the test items "
                       "asked, the answers starting with neither Yes nor No (left out), and the balanced accuracy of "
                       "the rest", formats={"balanced_accuracy": ".3f"}, keys=["model"])
    for (model,), part in model_runs.group_by("model", maintain_order=True):
        shares = part.filter(pl.col("balanced_accuracy").is_not_null())["balanced_accuracy"]
        span = (f"balanced accuracy {shares.min():.3f}-{shares.max():.3f} in the {shares.len()} domain(s) whose "
                "answered summaries held both classes" if shares.len()
                else "no domain whose answered summaries held both classes")
        sizes = sorted(set(part["items"].to_list()))
        each = f"{sizes[0]}" if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]}"
        print(f"{model} ({part['file_bytes'][0] / 1e6:.0f} MB), the authors' prompt on {part['items'].sum()} test "
              f"summaries ({each} a domain, run {part['as_of'][0]}): "
              f"{part['misses'].sum()} answers began with neither Yes nor No (left out); {span}")
fig = plots.human_labels.summedits_domains(table.filter(pl.col("aggregate") == "min"), published, runs=model_runs)
plots.export(fig, "summedits_balanced_accuracy", figs)
ours = table.filter((pl.col("aggregate") == "min") & (pl.col("statistic") == "balanced_accuracy")
                    & (pl.col("domain") != "overall"))
human = published.filter(pl.col("model") == HUMAN_ROW)
chance = ours.filter((pl.col("ci_low") <= 0.5) & (pl.col("ci_high") >= 0.5))
print(f"Figure: balanced accuracy per domain on the test split: each judge's (coloured, 95% interval over "
      f"documents), the {published.get_column('model').n_unique() - 1} published models' (grey: zero-shot LLMs and "
      "three trained checkers, DAE, SummaC and QAFactEval) and "
      f"people's ({human.get_column('balanced_accuracy').min():.1%}-{human.get_column('balanced_accuracy').max():.1%}, "
      f"black). {chance.height} of the {ours.height} judge-domain intervals hold 50%, a coin's balanced accuracy.")
