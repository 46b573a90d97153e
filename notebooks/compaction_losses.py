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
# # What each compaction lost
#
# For every compaction: the facts the environment returned in the history it replaced (identifiers, amounts, dates, paths), which it carried (in the summary, the task or the turns it kept), which it dropped, and which the agent fetched again afterwards, at what cost in tokens. Grouped by policy and budget on the testbed, by strategy on an inspect_ai log, with scenario-bootstrap intervals. Run it on any import with compactions: `papermill compaction_losses.ipynb out.ipynb -p DATA my_import`.

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters"; `papermill NB.ipynb OUT.ipynb -p DATA mydir`)
from typing import Optional  # papermill --help-notebook reads Optional[str], not str | None
DATA: str = "data/testbed"      # a workbench directory: the default testbed, or `workbench import` output
SEED: int = 0
N_BOOT: int = 2000
FIGURES: Optional[str] = None     # None: figures/ for the project's own data, build/figures/<data name>/ for yours
STYLE: str = "gallery"          # "paper": Computer Modern at 10pt, an article's text width (plots.use_style)

# %%
from workbench.notebooks import figures_dir, skip_when_not_applicable, use_project_root

use_project_root(chdir=True)  # relative parameters are the project's, however the kernel was started
skip_when_not_applicable()  # an analysis the data cannot serve is skipped with its reason, not an error
figs = figures_dir(FIGURES, DATA, style=STYLE)
import polars as pl

from workbench import plots
from workbench.analyses import compaction_losses, dropped_fact_accuracy, losses_by
from workbench.datasets import ensure_default_testbed, load, need

plots.use_style(STYLE)
pl.Config.set_tbl_rows(40)
data_dir = ensure_default_testbed(DATA)
tables = load(data_dir, names=("runs", "steps", "compactions"))
need(tables, "compactions", what="what each compaction lost")
runs, comps = tables["runs"], tables["compactions"]
losses = compaction_losses(tables)
losses.head()

# %% [markdown]
# One row per compaction: `facts_replaced` = `facts_carried` + `facts_dropped`; `facts_refetched`, the dropped facts a later observation returned again; `refetch_steps` and `refetch_tokens`, the steps that first returned them and their tokens (null where the log records none); `pre_tokens` / `post_tokens`, the context tokens before and after as the log records them.

# %%
# the grouping the data supports: policy and budget (the testbed), else the recorded strategy (inspect_ai), else
# the method
methods = runs.filter(pl.col("run_id").is_in(comps.get_column("run_id").unique().implode()))
if "budget" in runs.columns and methods.get_column("budget").null_count() < methods.height \
        and methods.get_column("method").n_unique() > 1:
    BY = ["method", "budget"]
elif "strategy" in comps.columns and comps.get_column("strategy").null_count() < comps.height:
    BY = ["strategy"]
else:
    BY = ["method"]
grouped = losses_by(losses, tables, BY, n_boot=N_BOOT, seed=SEED)
# the article table: the per-compaction means and their intervals (the notebook's table keeps n_missing, reasons)
short = {"dropped facts per compaction": "dropped", "re-fetched facts per compaction": "re-fetched",
         "re-fetch tokens per compaction": "re-fetch tokens"}
plots.export_table(grouped.select(*BY, pl.col("measure").replace_strict(short), "estimate", "ci_low", "ci_high", "n"),
                   "compaction_losses_by_group", f"{figs}/tables",
                   f"What each compaction lost, by {' and '.join(BY)}: mean dropped facts, re-fetched facts and "
                   "re-fetch tokens per compaction (95% scenario-bootstrap intervals; n compactions)")
grouped

# %%
import matplotlib.pyplot as plt
import numpy as np

measures = grouped.get_column("measure").unique(maintain_order=True).to_list()
label = [" ".join(str(v) for v in key) for key in grouped.filter(pl.col("measure") == measures[0])
         .select(BY).iter_rows()]
fig, axes = plt.subplots(1, len(measures), figsize=(3.2 * len(measures), 0.35 * len(label) + 1.4), sharey=True)
for ax, measure in zip(np.atleast_1d(axes), measures):
    part = grouped.filter(pl.col("measure") == measure)
    est = part.get_column("estimate").to_numpy()
    lo, hi = part.get_column("ci_low").to_numpy(), part.get_column("ci_high").to_numpy()
    y = np.arange(len(est))
    err = np.vstack([est - lo, hi - est])
    ax.errorbar(est, y, xerr=np.where(np.isfinite(err), err, 0), fmt="o", capsize=2)
    ax.set_yticks(y, label)
    ax.set_title(measure, fontsize="medium")
    ax.invert_yaxis()
fig.tight_layout()
plots.export(fig, "compaction_losses_by_group", figs)

# %%
total = losses.select(pl.col("facts_replaced", "facts_dropped", "facts_refetched").sum()).row(0, named=True)
spent = losses.get_column("refetch_tokens")
print(f"Over {losses.height:,} compactions of {losses.get_column('run_id').n_unique():,} runs, grouped by "
      f"{' and '.join(BY)}: {total['facts_replaced']:,} facts replaced, {total['facts_dropped']:,} dropped "
      f"({total['facts_dropped'] / max(total['facts_replaced'], 1):.1%}), {total['facts_refetched']:,} of those "
      "fetched again" + (f", costing {int(spent.sum()):,} tokens in all" if spent.null_count() < spent.len() else
                         " (the log records no tokens, so the cost is unknown)") + ".")
worst = grouped.filter(pl.col("measure") == "dropped facts per compaction").sort("estimate", descending=True)
top = worst.row(0, named=True)
print(f"Most dropped per compaction: {' '.join(str(top[b]) for b in BY)} ({top['estimate']:.2f}); fewest: "
      + " ".join(str(worst.row(-1, named=True)[b]) for b in BY) + f" ({worst.row(-1, named=True)['estimate']:.2f}).")

# %% [markdown]
# **Figure.** Mean dropped facts, re-fetched facts and re-fetch tokens per compaction for each group, with 95% scenario-bootstrap intervals (none over fewer than five scenarios). A fact is counted once per compaction; a dropped fact may be re-fetched by a step that was going to run anyway (a list call that returns every id again), so re-fetch tokens are an upper bound on what the loss cost.

# %% [markdown]
# ## The detector against known facts
#
# Where the log carries each task's world (the testbed's `gt_world`), the facts each task needs are known: the detector's dropped facts are checked against a literal search for them.

# %%
if "gt_world" in runs.columns and runs.get_column("gt_world").null_count() < runs.height:
    accuracy = dropped_fact_accuracy(tables)
    row = accuracy.row(0, named=True)
    print(f"Of {row['reported_dropped']:,} dropped facts the detector reports, {row['tp']:,} are needed facts truly "
          f"dropped (precision {row['precision']:.3f}); of {row['truly_dropped']:,} truly dropped it reports "
          f"{row['tp']:,} (recall {row['recall']:.3f}). A false positive is a fact no task needs, or one the summary holds in another form.")
else:
    accuracy = None
    print("This log records no task world (runs.gt_world): the detector cannot be checked against known facts here.")
accuracy
