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
# # Real logs: tau-bench trajectories and Claude compaction summaries
#
# Data no one on this project wrote. By default the committed fixtures in `data/real/` (5 tau-bench tasks x 4 trials; the 3 Claude summaries with the history strings the check needs); point `TAU_BENCH` and `CLAUDE_RESULTS` / `CLAUDE_PROMPTS` to the full files to use them. The Claude strings are real malicious URLs: they are shown defanged (`hxxp`, `[.]`) and never as links.

# %% tags=["parameters"]
# Parameters (papermill: this cell is tagged "parameters")
from typing import Optional  # papermill --help-notebook reads Optional[str], not str | None
TAU_BENCH: str = "data/real/tau-bench/gpt-4o-airline-subset.json"   # or ../shared/data/tau-bench/gpt-4o-airline.json
CLAUDE_FIXTURE: str = "data/real/claude-compaction/fixture.json"
CLAUDE_RESULTS: Optional[str] = None   # e.g. "../shared/data/claude-compaction/results/runs.jsonl" (with CLAUDE_PROMPTS)
CLAUDE_PROMPTS: Optional[str] = None   # e.g. "../shared/data/claude-compaction/data/prompts"
BUDGETS: list[int] = [2048, 4096, 8192]
FIGURES: Optional[str] = None     # None: figures/ for the project's own data, build/figures/<data name>/ for yours
STYLE: str = "gallery"          # "paper": Computer Modern at 10pt, an article's text width (plots.use_style)

# %%
from workbench.notebooks import caption, figures_dir, skip_when_not_applicable, use_project_root

use_project_root(chdir=True)  # relative parameters are the project's, however the kernel was started
skip_when_not_applicable()  # an analysis the data cannot serve is skipped with its reason, not an error
figs = figures_dir(FIGURES, TAU_BENCH, CLAUDE_FIXTURE, CLAUDE_RESULTS, CLAUDE_PROMPTS, style=STYLE)
from workbench import plots
from workbench.adapters import read_tau_bench
from workbench.stats import reliability_by_k
from workbench.stats import efficiency_by_encoding

plots.use_style(STYLE)
tau = read_tau_bench(TAU_BENCH, domain="gpt-4o-airline")
runs, steps = tau["runs"], tau["steps"]
{name: frame.height for name, frame in tau.items()}

# %% [markdown]
# ## tau-bench: reliability and efficiency

# %%
passk = reliability_by_k(runs)
plots.export_table(passk, "real_taubench_pass_k", f"{figs}/tables", "tau-bench airline (gpt-4o): Pass^k and Pass@k")
passk

# %%
eff = efficiency_by_encoding(steps, runs)
plots.export_table(eff, "real_taubench_efficiency", f"{figs}/tables", "tau-bench efficiency (FOCUS A.8)")
eff

# %%
source = "committed fixture" if TAU_BENCH.endswith("-subset.json") else "full file"
fig = plots.real_logs.pass_k_curves(passk, source)
plots.export(fig, "real_taubench_pass_k", figs);

# %%
caption("""**Figure (real tau-bench airline runs, gpt-4o; the title says whether it is the committed 5-task fixture or the full file).** Pass^k and Pass@k against the number of trials k: reliability falls with k while Pass@k rises, the gap TRACE's Pass^2 framing warns about.""", TAU_BENCH)

# %% [markdown]
# ## tau-bench: replaying the compaction trigger and FIFO

# %%
from workbench.analyses import replay, replay_by_budget

by_budget = replay_by_budget(replay(steps, runs, BUDGETS))
plots.export_table(by_budget, "real_taubench_fifo_replay", f"{figs}/tables", "FIFO replay on tau-bench")
by_budget

# %%
fig = plots.real_logs.fifo_out_of_window(by_budget)
plots.export(fig, "real_taubench_fifo_out_of_window", figs);

# %%
caption("""**Figure (real tau-bench runs, replayed without an LLM).** Identifiers in the agent's action arguments after the first budget boundary that it had seen in an earlier observation, split by whether FIFO still holds that observation: the red part is the silent channel on real data, an id acted on whose source is gone.""", TAU_BENCH)

# %% [markdown]
# ## Claude compaction summaries: the fact check

# %%
from workbench.adapters import check_table, defang, load_fixture, load_full
from workbench.summaries import claude_check

claude = load_full(CLAUDE_RESULTS, CLAUDE_PROMPTS) if CLAUDE_RESULTS else load_fixture(CLAUDE_FIXTURE)
ct = check_table(claude)
plots.export_table(ct, "real_claude_fact_check", f"{figs}/tables", "Claude compaction summaries: fact check vs measured FNR")
ct

# %%
for r in claude:
    c = claude_check(r["summary"], r["history"], r["members"])
    print(r["seed"], "identifiers:", c.identifiers, "unsourced:", [defang(u) for u in c.unsourced])

# %%
fig = plots.real_logs.claude_fact_check(ct)
plots.export(fig, "real_claude_fact_check", figs);

# %%
caption("""**Figure (real Claude compaction summaries).** Per summary: the share of its identifiers found in the 15,000 strings it replaced, the share of the 100 queried members whose host it still names, and the members recalled after compaction (1 - FNR, measured by the source experiment). The summaries name almost no member, yet recall ranges from 3% to 37%, with false positives of 4-48%: answers come from guessing at patterns, not from what the summary holds.""", CLAUDE_FIXTURE, CLAUDE_RESULTS, CLAUDE_PROMPTS)

