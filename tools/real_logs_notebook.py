"""The cells of ``notebooks/real_logs.ipynb`` (written by ``tools/make_notebooks.py``)."""

from __future__ import annotations

from collections.abc import Callable

import nbformat as nbf

PARAMS = '''# Parameters (papermill convention: this cell is tagged "parameters")
TAU_BENCH = "data/real/tau-bench/gpt-4o-airline-subset.json"   # or ../shared/data/tau-bench/gpt-4o-airline.json
CLAUDE_FIXTURE = "data/real/claude-compaction/fixture.json"
CLAUDE_RESULTS = None   # e.g. "../shared/data/claude-compaction/results/runs.jsonl" (with CLAUDE_PROMPTS)
CLAUDE_PROMPTS = None   # e.g. "../shared/data/claude-compaction/data/prompts"
BUDGETS = [2048, 4096, 8192]
FIGURES = "figures"
SEED = 0'''

LOAD = '''import matplotlib.pyplot as plt
import numpy as np
import polars as pl

from workbench import io, plots
from workbench.metrics import efficiency, reliability

plots.set_style()
tau = io.read_tau_bench(TAU_BENCH, domain="gpt-4o-airline")
runs, steps = tau["runs"], tau["steps"]
{name: frame.height for name, frame in tau.items()}'''

PASSK = '''n_trials = int(runs.group_by("task_id", maintain_order=True).len()["len"].min())
passk = pl.concat([reliability(runs, k=k) for k in range(1, n_trials + 1)]).select(
    "k", "n_tasks", "acc", "pass_hat_k", "pass_at_k")
plots.export_table(passk, "real_taubench_pass_k", f"{FIGURES}/tables", "tau-bench airline (gpt-4o): Pass^k and Pass@k")
passk'''

EFF = '''rows = []
for suffix, enc in (("", "o200k"), ("_cl100k", "cl100k")):
    tok = steps.drop_nulls(f"input_tokens{suffix}").select(
        "run_id", pl.col(f"input_tokens{suffix}").alias("input_tokens"), pl.col(f"output_tokens{suffix}").alias("output_tokens"))
    e = efficiency(tok)
    rows.append(e.select(pl.lit(enc).alias("encoding"), pl.col("peak_tokens").mean().alias("peak_mean"),
                         (pl.col("dependency").mean() / 1e6).alias("dependency_mean_1e6")))
tool_calls = steps.filter(pl.col("tool").is_not_null()).group_by("run_id", maintain_order=True).len()["len"].mean()
eff = pl.concat(rows).with_columns(pl.lit(float(runs["steps"].mean())).alias("steps_mean"),
                                   pl.lit(float(tool_calls)).alias("tool_calls_mean"))
plots.export_table(eff, "real_taubench_efficiency", f"{FIGURES}/tables", "tau-bench efficiency (FOCUS A.8)")
eff'''

PASSK_FIG = '''fig, ax = plt.subplots(figsize=(5, 3.2))
ax.plot(passk["k"], passk["pass_hat_k"], "o-", label="Pass^k (all k trials succeed)")
ax.plot(passk["k"], passk["pass_at_k"], "s--", label="Pass@k (some trial succeeds)")
ax.set_xlabel("k (trials)")
ax.set_ylabel("share of tasks")
ax.set_xticks(passk["k"].to_list())
ax.set_ylim(0, 1)
ax.legend(fontsize=8)
plots.export(fig, "real_taubench_pass_k", FIGURES);'''

REPLAY = '''from workbench.replay import replay

rep = replay(steps, runs, BUDGETS)
by_budget = rep.group_by("budget", maintain_order=True).agg(
    pl.col("boundaries").mean().alias("boundaries_per_run"), (pl.col("boundaries") > 0).mean().alias("runs_compacted"),
    pl.col("actions_after").sum(), pl.col("refs").sum().alias("id_refs_after_boundary"), pl.col("out_of_window").sum(),
    (pl.col("out_of_window") > 0).mean().alias("runs_with_out_of_window_refs")).sort("budget")
plots.export_table(by_budget, "real_taubench_fifo_replay", f"{FIGURES}/tables", "FIFO replay on tau-bench")
by_budget'''

REPLAY_FIG = '''fig, ax = plt.subplots(figsize=(5.5, 3.2))
labels = [str(b) for b in by_budget["budget"]]
lost = by_budget["out_of_window"].to_numpy()
kept = by_budget["id_refs_after_boundary"].to_numpy() - lost
ax.bar(labels, lost, color="C3", label="source no longer in the window")
ax.bar(labels, kept, bottom=lost, color="C0", label="source still in the window")
ax.set_xlabel("budget (o200k tokens)")
ax.set_ylabel("identifier references after a boundary")
ax.legend(fontsize=8)
plots.export(fig, "real_taubench_fifo_out_of_window", FIGURES);'''

CLAUDE = '''from workbench.claude_compaction import check, check_table, defang, load_fixture, load_full

claude = load_full(CLAUDE_RESULTS, CLAUDE_PROMPTS) if CLAUDE_RESULTS else load_fixture(CLAUDE_FIXTURE)
ct = check_table(claude)
plots.export_table(ct, "real_claude_fact_check", f"{FIGURES}/tables", "Claude compaction summaries: fact check vs measured FNR")
ct'''

CLAUDE_UNSOURCED = '''for r in claude:
    c = check(r["summary"], r["history"], r["members"])
    print(r["seed"], "identifiers:", c["identifiers"], "unsourced:", [defang(u) for u in c["unsourced"]])'''

CLAUDE_FIG = '''fig, ax = plt.subplots(figsize=(6.5, 3.2))
x = np.arange(ct.height)
w = 0.25
ax.bar(x - w, ct["sourced_share"], w, label="summary ids with a source", color="C0")
ax.bar(x, ct["members_held_by_host"], w, label="queried members named (host)", color="C2")
ax.bar(x + w, ct["recall_after_compaction"], w, label="members recalled (1 - FNR)", color="C3")
ax.set_xticks(x, [f"seed {s}" for s in ct["seed"]])
ax.set_ylim(0, 1.05)
ax.set_ylabel("share")
ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
plots.export(fig, "real_claude_fact_check", FIGURES);'''


def real_logs(md: Callable[[str], nbf.NotebookNode], code: Callable[..., nbf.NotebookNode],
              write: Callable[[nbf.NotebookNode, str], None]) -> None:
    nb = nbf.v4.new_notebook()
    nb.cells = [
        md("# Real logs: tau-bench trajectories and Claude compaction summaries\n\n"
           "Data no one on this project wrote. By default the committed fixtures in `data/real/` (5 tau-bench tasks "
           "x 4 trials; the 3 Claude summaries with the history strings the check needs); point `TAU_BENCH` and "
           "`CLAUDE_RESULTS` / `CLAUDE_PROMPTS` to the full files to use them. The Claude strings are real malicious "
           "URLs: they are shown defanged (`hxxp`, `[.]`) and never as links."),
        code(PARAMS, ["parameters"]),
        code(LOAD),
        md("## tau-bench: reliability and efficiency"),
        code(PASSK),
        code(EFF),
        code(PASSK_FIG),
        md("**Figure (real tau-bench airline runs, gpt-4o; by default the 5-task fixture).** Pass^k and Pass@k against the number of trials k: "
           "reliability falls with k while Pass@k rises, the gap TRACE's Pass^2 framing warns about."),
        md("## tau-bench: replaying the compaction trigger and FIFO"),
        code(REPLAY),
        code(REPLAY_FIG),
        md("**Figure (real tau-bench runs, replayed without an LLM).** Identifiers in the agent's action arguments "
           "after the first budget boundary that it had seen in an earlier observation, split by whether FIFO still "
           "holds that observation: the red part is the silent channel on real data, an id acted on whose source is gone."),
        md("## Claude compaction summaries: the fact check"),
        code(CLAUDE),
        code(CLAUDE_UNSOURCED),
        code(CLAUDE_FIG),
        md("**Figure (real Claude compaction summaries).** Per summary: the share of its identifiers found in the "
           "15,000 strings it replaced, the share of the 100 queried members whose host it still names, and the "
           "members recalled after compaction (1 - FNR, measured by the source experiment). The summaries name "
           "almost no member, yet recall ranges from 3% to 37%, with false positives of 4-48%: answers come from "
           "guessing at patterns, not from what the summary holds."),
    ]
    write(nb, "real_logs")
