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
# # Failure attribution (SJC Section 3.2, Appendix D, Table 11; Who&When)
#
# Failed runs traced from the failed check to the action that caused it and the summary entry it carried out. On the testbed the attributions are ground truth from the simulator. Then, beyond the testbed, attributors checked against what people found: Who&When (Zhang et al., ICML 2025; MIT), 184 failed multi-agent runs each labelled with the agent whose action decided the failure, the decisive step and why.

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters"; `papermill NB.ipynb OUT.ipynb -p DATA mydir`)
from typing import Optional  # papermill --help-notebook reads Optional[str], not str | None
DATA: str = "data/testbed"      # a workbench directory: the default testbed, or `workbench import` output
BUDGET: int = 48                # the testbed budget the single-budget analyses use
WHO_WHEN: str = "data/benchmarks/who-and-when"  # Who&When's logs and labels (the project's copy, or the release's folder)
PREDICTIONS: Optional[str] = None  # an attributions file from `workbench attribute --out P.parquet` (LLM rows)
K_MAX: int = 5                  # the widest step tolerance (+-k) shown
FIGURES: Optional[str] = None     # None: figures/ for the project's own data, build/figures/<data name>/ for yours
STYLE: str = "gallery"          # "paper": Computer Modern at 10pt, an article's text width (plots.use_style)

# %%
from workbench.notebooks import caption, figures_dir, skip_when_not_applicable, use_project_root

use_project_root(chdir=True)  # relative parameters are the project's, however the kernel was started
skip_when_not_applicable()  # an analysis the data cannot serve is skipped with its reason, not an error
figs = figures_dir(FIGURES, DATA, WHO_WHEN, PREDICTIONS, style=STYLE)
import polars as pl
from IPython.display import display

from workbench import plots
from workbench.datasets import ensure_default_testbed, load, need, select_runs
from workbench.tables import height, rows_of

plots.use_style(STYLE)
pl.Config.set_tbl_rows(40)
tables = load(ensure_default_testbed(DATA), derive=True, names=("attributions", "compactions", "steps"),
              columns={"runs": ("run_id", "scenario_id", "budget", "method"),
                       "compactions": ("run_id", "step"),
                       "steps": ("run_id", "step", "text", "observation")})  # scanned: only the failed runs are read
{name: height(frame) for name, frame in tables.items()}

# %%
# part: SJC Table 11 and the testbed's failures (they need DATA's attributions)
from workbench.analyses.sjc import failures_by_scenario, followed_entry_share

need(tables, "attributions", what="failure attribution")  # a log without them: the notebook is skipped, with why
failed = rows_of(select_runs(tables, budget=BUDGET), tables["attributions"].select("run_id")).collect()
att = tables["attributions"].join(failed.select("run_id"), on="run_id", how="semi")  # at the analysed budget
t11, excluded = failures_by_scenario(att, failed, exclude={})
plots.export_table(t11, "sjc_table11_attribution", f"{figs}/tables", "Failed runs by scenario and pattern")
print(followed_entry_share(att))
display(t11)

# %%
fig = plots.sjc.attribution_bars(t11)
plots.export(fig, "sjc_table11_attribution", figs)

# %%
caption("""**Figure (testbed ground truth; SJC Table 11).** Failed `prompting` runs at the analysed budget per scenario, stacked by the pattern of the summary entry the failing action carried out: rewritten constraint (RC), invented deliverable (ID), contradicted state (CS), other (e.g. a misremembered amount, which is supported but wrong) and failures unrelated to the summary.""", DATA)

# %% [markdown]
# ## Do failures start right after a compaction? (testbed)
#
# The same failed runs, with the decisive step known: the step whose action carried out the failing summary entry. The share of decisive steps that come within k steps after a compaction (the compaction's step is the first that sees its summary), and how well two offline attributors find that step (one agent: step level only).

# %%
from workbench.analyses import attribution_accuracy, decisive_after_compaction, testbed_gold
from workbench.judges import failure_logs, FirstError, LastStep, predict

failed_steps = rows_of(tables["steps"], failed.select("run_id").lazy()).collect()
after = decisive_after_compaction(att.drop_nulls("action_step").select("run_id", pl.col("action_step").alias("step")),
                                  rows_of(tables["compactions"], failed.select("run_id").lazy()).collect(),
                                  ks=range(K_MAX + 1), steps=failed_steps.select("run_id", "step"))
plots.export_table(after, "testbed_decisive_after_compaction", f"{figs}/tables",
                   "Failed testbed runs whose decisive step comes within k steps after a compaction, beside the "
                   "share of all their steps that do")
display(after)
bed = {"runs": failed.join(tables["runs"].select("run_id", "method").collect(), on="run_id", how="left"),
       "steps": failed_steps, "attributions": att}
bed_gold = testbed_gold(bed)
bed_logs = failure_logs(bed)
bed_acc = attribution_accuracy(bed_gold, pl.concat([predict(a, bed_logs) for a in (LastStep(), FirstError())]),
                               ks=range(K_MAX + 1)).filter(pl.col("level_of") == "step")
plots.export_table(bed_acc.filter(pl.col("subset") == "overall").select("attributor", "k", "estimate", "ci_low",
                                                                        "ci_high", "n", "n_clusters"),
                   "testbed_attributor_step_accuracy", f"{figs}/tables",
                   "Offline attributors on the testbed's failed runs: the decisive step within +-k (95% Wilson "
                   "intervals at the design effect's n over scenarios)", intervals={"estimate": ("ci_low", "ci_high")})
share = after.filter(pl.col("k") == 1).row(0, named=True)
print(f"{share['after_compaction']} of {share['runs']} failed runs ({share['share']:.0%}) fail within one step after a "
      f"compaction on the testbed at this budget, where {share['share_of_steps']:.0%} of all their steps lie that close "
      "to one")

# %% [markdown]
# ## Who&When: attributors against people's labels

# %%
# part: Who&When: attributors against people's labels
from workbench.adapters import read_who_and_when
from workbench.datasets import NotApplicable
from workbench.notebooks import Analyses, is_project_data

if is_project_data(WHO_WHEN) and not is_project_data(DATA):  # the gallery's result, not DATA's: not redone for it
    raise NotApplicable("does not depend on DATA: the gallery's copy is figures/whowhen_accuracy.png (set WHO_WHEN "
                        "to a failure set of your own to evaluate it)")
from workbench.analyses import attribution_accuracy, compare_attributors, failure_gold, random_baseline, unnamed_roles
from workbench.judges import failure_logs, FirstError, LastStep, MostActive, PositionPrior, predict

ww = read_who_and_when(WHO_WHEN)  # in memory; the labels' time is the import's
ww["labels"] = ww["labels"].with_columns(pl.lit("1970-01-01T00:00:00+00:00").alias("labeled_at"))
gold = failure_gold(ww)
raw, normalised = random_baseline(gold), random_baseline(gold, agents="normalised")
fair = random_baseline(gold, agents="named")  # a guess among the agents a label could name
paper = pl.read_csv("data/published/who_and_when_table1.csv")
random_row = (raw.select("subset", pl.col("agent_accuracy").alias("agent (raw roles)"),
                         pl.col("step_accuracy").alias("step"))
              .join(normalised.select("subset", pl.col("agent_accuracy").alias("agent (normalised)")), on="subset")
              .join(fair.select("subset", pl.col("agent_accuracy").alias("agent (fair)")), on="subset")
              .join(paper.filter(pl.col("method") == "Random").select(
                  "subset", pl.col("agent_accuracy").alias("paper agent"), pl.col("step_accuracy").alias("paper step")),
                  on="subset", how="left"))
plots.export_table(random_row, "whowhen_random_row", f"{figs}/tables",
                   "A uniform guess's expected accuracy (%), computed from the logs, beside the paper's Table 1",
                   formats={c: ".2f" for c in random_row.columns if c != "subset"})
display(random_row)
left_out = unnamed_roles(ww["steps"], ww["runs"].with_columns(pl.col("subset").fill_null("all")),
                         gold["agent"].unique().to_list())
print("agent (fair): per log, a uniform guess among the agents acting in it, leaving out the roles no label of the "
      f"data names and that act in at least half of a subset's logs ({', '.join(sorted(left_out)) or 'none here'}); "
      "the paper's Random row (raw roles) counts them")

# %%
logs = failure_logs(ww)  # without the reference answer: the offline attributors never read it
by_subset = {s: gold.filter(pl.col("subset") == s) for s in gold["subset"].unique(maintain_order=True)}
predictions = [predict(a, logs) for a in (LastStep(), FirstError(), MostActive())]
for subset, rows in by_subset.items():  # the position prior is learnt on the other subset, tested on this one
    other = gold.filter(pl.col("subset") != subset)
    if other.height:
        prior = PositionPrior.fit(other["step"].to_list(), other["n_steps"].to_list(), name="position prior")
        mine = set(rows["run_id"].to_list())
        predictions.append(predict(prior, [log for log in logs if log.run_id in mine]))
if PREDICTIONS:  # an attributor's predictions (workbench attribute --out): the LLM rows
    from workbench.judges import read_predictions

    given = read_predictions(PREDICTIONS)
    taken = {p["attributor"][0] for p in predictions}  # a name the notebook's own attributors use: marked as given
    predictions.append(given.with_columns(pl.when(pl.col("attributor").is_in(taken))
                                          .then(pl.col("attributor") + " (PREDICTIONS)")
                                          .otherwise(pl.col("attributor")).alias("attributor")))
predictions = pl.concat(predictions)
accuracy = attribution_accuracy(gold, predictions, ks=range(K_MAX + 1))
SUBSETS = list(by_subset)
plots.export_table(accuracy.filter(pl.col("k").is_null() | (pl.col("k") == 0)).select(
    "attributor", "with_reference", "subset", "level_of", "estimate", "ci_low", "ci_high", "n", "n_clusters"),
    "whowhen_accuracy", f"{figs}/tables",
    "Agent- and step-level accuracy (exact step) of each attributor on Who&When, with 95% Wilson intervals "
    "(at the design effect's n where a question holds several runs)", intervals={"estimate": ("ci_low", "ci_high")}, keys=["attributor"])
guess = {r["subset"]: (r["agent_accuracy"] / 100, r["step_accuracy"] / 100) for r in fair.to_dicts()}
fig, _ = plots.failure_attribution.accuracy_panels(accuracy, guess, subsets=SUBSETS)  # the fair guess
plots.export(fig, "whowhen_accuracy", figs)
pct = {(r["subset"], k): r["agent_accuracy"] for k, f in (("raw", raw), ("fair", fair)) for r in f.to_dicts()}
print(f"Figure: each attributor's agent-level and exact step-level accuracy on the {len(SUBSETS)} subset(s) of "
      f"{gold.height} labelled failures, with 95% Wilson score intervals (at the design effect's n where a question "
      "holds several runs). The dotted lines are the fair uniform guess's expected accuracy ("
      + "; ".join(f"{s}: agent {pct[s, 'fair']:.2f}% against the paper's raw-role {pct[s, 'raw']:.2f}%"
                  for s in SUBSETS) + "). The offline attributors read only the log: no model, no reference "
      "answer. Steps match by equality, not by the authors' substring rule.")

# %%
import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, len(SUBSETS), figsize=plots.figure_size((3.6 * len(SUBSETS), 3.0)), sharey=True)
from workbench.analyses import random_within

guess_within = random_within(gold, range(K_MAX + 1))
for ax, subset in zip(list(axes) if len(SUBSETS) > 1 else [axes], SUBSETS):
    plots.failure_attribution.step_tolerance(accuracy, subset=subset, ax=ax, guess=guess_within)
fig.tight_layout()
plots.export(fig, "whowhen_step_tolerance", figs)
best = (accuracy.filter((pl.col("level_of") == "step") & (pl.col("k") == 0) & (pl.col("subset") == "overall"))
        .sort("estimate", descending=True).row(0, named=True))
print(f"Exact step: best offline attributor {best['attributor']!r} at {best['estimate']:.1%} "
      f"[{best['ci_low']:.1%}, {best['ci_high']:.1%}] over {best['n']} logs.")

# %%
caption("""**Figure (Who&When).** Step-level accuracy when a prediction within k steps of the labelled step counts, for k = 0 to `K_MAX`, per subset, with 95% bands over questions; dashed, a uniform guess over the log's steps (Algorithm-Generated logs have 5-10 steps, so at k = 5 a guess is right most of the time). Hand-Crafted logs run to 130 steps, so even a tolerance of a few steps leaves most predictions wrong there.""", WHO_WHEN, PREDICTIONS)

# %%
names = predictions["attributor"].unique(maintain_order=True).to_list()
comparison = pl.concat([compare_attributors(gold, predictions, a, "last step", level_of=level)
                        for a in names if a != "last step" for level in ("agent", "step")])
plots.export_table(comparison.select("a", "b", "level_of", "subset", "accuracy_a", "accuracy_b", "estimate", "ci_low",
                                     "ci_high", "p_value", "mcnemar_p"),
                   "whowhen_comparison", f"{figs}/tables",
                   "Each attributor against the last step on the same logs: the paired difference in accuracy with "
                   "its 95% CR2 interval and p over questions, and the clustered McNemar p",
                   intervals={"estimate": ("ci_low", "ci_high")})
display(comparison)
Analyses().ran("Who&When: attributors against people's labels")  # said, for a run where the testbed part was skipped
