"""Figure and table export: fonts embedded, booktabs escaped."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from workbench import plots

ROOT = Path(__file__).resolve().parents[2]


def test_export_writes_pdf_with_embedded_truetype_and_png(tmp_path: Path) -> None:
    counts = pl.DataFrame({"section": ["Decisions", "Open TODOs"], "entries": [3, 5]})
    ax = plots.entries_by_section(counts)
    assert [b.get_width() for b in ax.patches] == [5, 3]  # drawn bottom-up: first row on top
    pdf, png = plots.export(ax, "x", tmp_path)  # the Axes a figure function returns, exported whole
    data = pdf.read_bytes()
    assert b"/FontFile2" in data and b"/Type3" not in data  # TrueType embedded (fonttype 42)
    from PIL import Image

    with Image.open(png) as im:
        assert im.info["dpi"][0] == pytest.approx(200, abs=1)


def test_latex_table_is_booktabs_and_escaped(tmp_path: Path) -> None:
    frame = pl.DataFrame({"section": ["Constraints/Rules & more_", "50%"], "share": [0.12345, 1.0]})
    csv, tex = plots.export_table(frame, "t", tmp_path)
    text = tex.read_text()
    assert r"\toprule" in text and r"\bottomrule" in text
    assert r"Constraints/Rules \& more\_" in text and r"50\%" in text and "0.123" in text
    assert pl.read_csv(csv).equals(frame)


# --- every figure function on small results computed by the library ----------------------------------

def _results(t: dict[str, pl.DataFrame]) -> dict[str, tuple[object, ...]]:
    """Arguments for every plotting function, computed from a small simulated testbed and the real fixtures."""
    import numpy as np

    from workbench.analyses import focus
    from workbench.analyses.sjc import _sensitivity as sensitivity
    from workbench.analyses import trace
    from workbench.summaries import _identifiers as identifiers
    from workbench.analyses.sjc import decision_flips
    from workbench.adapters import check_table, load_fixture
    from workbench.adapters import read_tau_bench
    from workbench.analyses.sjc import failures_by_scenario
    from workbench.analyses import attribution_accuracy, random_within
    from workbench.analyses.sjc import by_boundary, entries_by_section, persistence, section_counts, support_from_scores
    from workbench.tables import gold_labels
    from workbench.stats import reliability, reliability_by_k
    from workbench.stats import judge_table
    from workbench.analyses.sjc import pass_vs_tokens
    import warnings

    from workbench.adapters import read_log
    from workbench.analyses import replay, replay_by_budget
    from workbench.sim._annotators import simulate_annotation

    t["labels"] = simulate_annotation(t, n=60)
    runs = t["runs"]
    entries = support_from_scores(t["entries"].join(runs.select("run_id", "scenario_id", "budget"), on="run_id"),
                                  t["scores"], 0.5)
    clusters = entries.select("entry_id", "scenario_id")
    spans, cites = t["spans"], t["rollouts"]
    curves = focus.self_consistency_curves(focus.citation_matrices(cites, spans, 6), [1, 2, 3, 6], draws=10)
    truth = focus.error_against_truth(spans, [1, 3, 10, 30], draws=10)
    table11, _ = failures_by_scenario(t["attributions"], runs)
    burden = trace.post_compaction_burden(t["steps"], runs, method="prompting", budget=48, n_boot=50)
    ver = runs.filter(pl.col("method") == "verifier").select("run_id")
    fc = identifiers.fact_check_compactions(t["compactions"].join(ver, on="run_id", how="semi"), t["steps"], runs)
    both = fc.join(t["candidates"].filter(pl.col("chosen")).select("run_id", "boundary", "verifier_score"),
                   on=["run_id", "boundary"])
    tau_bench = read_tau_bench(ROOT / "data" / "real" / "tau-bench" / "gpt-4o-airline-subset.json")
    published = pl.read_csv(ROOT / "data" / "published" / "focus_tables.csv").filter(
        (pl.col("table") == "Table 1") & pl.col("panel").str.starts_with("(a)"))
    rep = pl.concat([t["scores"], t["scores"].with_columns(pl.lit(1, dtype=pl.Int64).alias("repeat"),
                                                           (1 - pl.col("score")).alias("score"))])
    flips = decision_flips(rep.join(entries.select("entry_id", "section"), on="entry_id"), 0.5, t["scores"],
                           by="section")
    from workbench.stats import labeled_scores, reliability_curve, threshold_sweep
    from workbench.stats import compare_to_baseline, performance_profile
    from workbench.analyses.sjc import entries_by_role
    from workbench.datasets import entry_clusters
    from workbench.analyses.sjc import unsupported_by_role
    from workbench.analyses import (after_compaction, burden_totals, compaction_overview, compaction_timeline,
                                    prompt_cache)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sessions = read_log(ROOT / "workbench" / "datasets" / "example_logs" / "codex", "codex")
        claude = read_log(ROOT / "workbench" / "datasets" / "example_logs" / "claude-code", "claude-code")

    lab = labeled_scores(t["scores"], gold_labels(t["labels"]), entry_clusters(t), judge="lexical")
    ls, ly, lc = lab["score"].to_numpy(), lab["label"].to_numpy(), lab["scenario_id"].to_numpy()
    gold = pl.DataFrame({"run_id": ["a", "b", "c", "d"], "subset": ["s"] * 4, "question_id": ["q1", "q1", "q2", "q3"],
                         "agent": ["X", "Y", "X", "Z"], "step": [1, 5, 0, 3], "reason": [""] * 4,
                         "n_steps": [6, 7, 4, 5], "n_agents": [2, 2, 2, 3], "n_agents_raw": [2, 2, 2, 3]})
    guesses = pl.DataFrame({"run_id": ["a", "b", "c", "d"], "attributor": ["p"] * 4, "with_reference": [False] * 4,
                            "agent": ["X", "X", "X", "Z"], "step": [1, 4, 2, 3], "reason": [""] * 4})
    accuracy = attribution_accuracy(gold, guesses, ks=range(3))
    return {
        "calibration.reliability_diagram": (reliability_curve(ls, ly, lc, 5, n_boot=20),),
        "calibration.threshold_curve": (threshold_sweep(ls, ly, lc, [0.2, 0.5, 0.8], n_boot=20), 0.8),
        "compare.forest": (compare_to_baseline(runs, "prompting", "acc", by=("budget",), n_boot=20),),
        "compare.performance_profile": (performance_profile(runs, [0.0, 0.5, 1.0], n_boot=20),),
        "sjc.entries_by_section": (section_counts(entries),),
        "sjc.decision_flips": (flips,),
        "sjc.section_composition": (entries_by_section(entries),),
        "sjc.unsupported_by_boundary": (by_boundary(entries, max_boundary=3),),
        "sjc.persistence_curves": (persistence(entries, max_d=3)[0],),
        "sjc.auroc_intervals": (judge_table(t["scores"], gold_labels(t["labels"]), clusters, n_boot=50),
                                {"support": 0.905, "correct": 0.444}),
        "sjc.score_histograms": (entries, ["Decisions", "Open TODOs"]),
        "sjc.pruned_vs_tau": (sensitivity.sweep(entries, np.linspace(0, 1, 5), n_boot=20),),
        "sjc.keep_rates": (sensitivity.keep_rate_by_section(entries),),
        "sjc.attribution_bars": (table11,),
        "sjc.pass_vs_tokens": (pass_vs_tokens(runs, k=2),),
        "sjc.accuracy_by_budget": (reliability(runs, k=1, by=["method", "budget"], n_boot=20, method="percentile"),),
        "focus.bound_curves": (focus.bound_curves([5], [0.2], [1, 10, 100]),),
        "focus.utility_histogram": (focus.utility_histogram(focus.citation_scores(cites, 6, spans)), 0.3),
        "focus.estimation_curves": (focus.curve_means(curves, "jaccard"), focus.curve_means(truth, "max_error"),
                                    focus.error_slope(truth, n_boot=20),
                                    focus.published_draft_error(pl.read_csv(ROOT / "data" / "published" /
                                                                            "text_numbers.csv"))),
        "focus.published_table": (published, "dependency_m", "acc"),
        "trace.burden_curve": (burden,),
        "trace.defects_chosen_rejected": (trace.defects_chosen_vs_rejected(t["candidates"], runs),),
        "trace.verifier_vs_factcheck": (both,),
        "real_logs.pass_k_curves": (reliability_by_k(tau_bench["runs"]),),
        "real_logs.fifo_out_of_window": (replay_by_budget(replay(tau_bench["steps"], tau_bench["runs"], [2048])),),
        "real_logs.claude_fact_check": (check_table(load_fixture(ROOT / "data" / "real" / "claude-compaction" /
                                                                 "fixture.json")),),
        "coding_agents.compaction_tokens": (compaction_overview(sessions),),
        "coding_agents.entries_by_role": (entries_by_role(entries),),
        "coding_agents.burden_before_after": (burden_totals(after_compaction(sessions["steps"], sessions["compactions"])),),
        "coding_agents.compaction_timeline": (compaction_timeline(claude["runs"], claude["compactions"]),),
        "coding_agents.prompt_cache": (prompt_cache(claude["steps"], claude["compactions"]),),
        "coding_agents.unsupported_by_role": (unsupported_by_role(entries, n_boot=20),),
        "failure_attribution.accuracy_panels": (accuracy, {"s": (0.3, 0.1)}, ["s"]),  # four toy failed runs
        "failure_attribution.step_tolerance": (accuracy, "s", random_within(gold, range(3))),
    }


def _figure_functions() -> list[str]:
    import inspect

    from workbench import plots

    names: list[str] = []
    for module in (plots.sjc, plots.focus, plots.trace, plots.real_logs, plots.coding_agents, plots.calibration,
                   plots.compare, plots.failure_attribution):
        short = module.__name__.rsplit(".", 1)[1]
        names += [f"{short}.{n}" for n, f in inspect.getmembers(module, inspect.isfunction)
                  if f.__module__ == module.__name__ and not n.startswith("_")]
    return sorted(names)


def test_every_figure_function_draws_from_library_results_into_a_given_ax(
        small_testbed: dict[str, pl.DataFrame]) -> None:
    import inspect

    import matplotlib.pyplot as plt

    from workbench import plots

    args = _results(small_testbed)
    assert sorted(args) == _figure_functions(), "a figure function has no smoke case here (or one was removed)"
    for name, a in args.items():
        fn = plots
        for part in name.split("."):
            fn = getattr(fn, part)
        params = list(inspect.signature(fn).parameters.values())  # type: ignore[arg-type]
        assert params[-1].name == "ax" and params[-1].default is None, f"{name}: ax=None is not the last keyword"
        n_axes = 2 if name in ("focus.estimation_curves", "failure_attribution.accuracy_panels") else 1
        fig, axes = plt.subplots(1, n_axes)
        given = list(axes) if n_axes > 1 else axes
        out = fn(*a, ax=given)  # type: ignore[operator]
        if n_axes > 1:  # several panels: (fig, axes), the axes it was given
            assert out[0] is fig and list(out[1]) == given, f"{name} did not return (fig, the given axes)"
        else:  # one panel: the Axes it drew on
            assert out is given, f"{name} did not return the given ax"
        drawn = sum(len(x.lines) + len(x.patches) + len(x.collections) for x in fig.axes)
        assert drawn > 0, f"{name} drew nothing"
        plt.close(fig)
        alone = fn(*a)  # type: ignore[operator]
        own = alone[0] if n_axes > 1 else alone.figure
        assert own is not fig and own.axes, f"{name} without ax makes its own figure"
        plt.close(own)


def test_session_figures_of_a_whole_directory_stay_readable_past_many() -> None:
    """Past ``MANY`` compactions or sessions: distributions instead of a column or line each (bin counts checked
    against numpy's histogram), and the prompt-cache bars become the mean call before and after (heights checked
    against numpy's means); a scan of the table draws the same figure."""
    import matplotlib.pyplot as plt
    import numpy as np

    from workbench.plots import coding_agents as fig

    n = fig.MANY + 5
    overview = pl.DataFrame({"run_id": [f"s{i // 3}" for i in range(n)], "boundary": [i % 3 for i in range(n)],
                             "schema": ["claude_code"] * n, "tokens_before_from": ["log", "counted"] * (n // 2) + ["log"],
                             "tokens_before": [1000 + 37 * i for i in range(n)], "tokens_after": [100 + i for i in range(n)]})
    from workbench.analyses import token_medians

    medians = token_medians(overview)
    assert medians == {"logged": int(np.median(np.array(overview.filter(pl.col("tokens_before_from") == "log")[
        "tokens_before"]))), "counted": int(np.median(np.array(overview.filter(
            pl.col("tokens_before_from") == "counted")["tokens_before"]))), "after": int(np.median(
                np.array(overview["tokens_after"])))}
    for frame in (overview, overview.lazy()):
        ax = fig.compaction_tokens(frame, medians=medians)
        assert any(f"median {medians['after']:,}" in t.get_text() for t in ax.get_legend().get_texts())
        assert [t.get_text() for t in ax.get_xticklabels() if "\n#" in t.get_text()] == []
        assert ax.get_xscale() == "log" and ax.get_title() == f"{n:,} compactions"
        after = np.array(overview["tokens_after"])
        edges = np.geomspace(100, (1000 + 37 * (n - 1)) * 1.0001, 41)
        counts, _ = np.histogram(after, edges)
        step = [p for p in ax.patches if p.get_label().startswith("after")][0]  # a step outline of the 40 bins
        heights = step.get_xy()[1:-1:2, 1]
        assert list(heights[:40]) == list(counts) and counts.sum() == n
        plt.close("all")
    small = fig.compaction_tokens(overview.head(3))
    assert len([t for t in small.get_xticklabels() if "\n#" in t.get_text()]) == 3  # a few: each labelled
    plt.close("all")
    timeline = pl.DataFrame({"run_id": [f"s{i}" for i in range(n)], "boundary": [0] * n,
                             "minutes": [float(i % 10) for i in range(n)], "session_minutes": [12.0] * n,
                             "trigger": ["auto", "manual"] * (n // 2) + [None]})
    ax = fig.compaction_timeline(timeline.lazy())
    assert ax.figure.get_size_inches()[1] == 3.2 and ax.get_title() == f"{n} compactions in {n} sessions"
    stacked = sum(p.get_height() for p in ax.patches)
    assert stacked == n  # every compaction counted once, whatever its trigger
    plt.close("all")
    rng = np.random.default_rng(2)
    cache = pl.DataFrame({"run_id": [f"s{i}" for i in range(n) for _ in range(2)], "boundary": [0] * (2 * n),
                          "window": ["before", "after"] * n, "cache_read_tokens": rng.integers(0, 900, 2 * n),
                          "cache_creation_tokens": rng.integers(0, 90, 2 * n), "fresh_tokens": rng.integers(0, 50, 2 * n)})
    from workbench.analyses import prompt_cache_means

    with pytest.raises(ValueError, match="pass means="):  # the figure draws what it is given, never averages
        fig.prompt_cache(cache.lazy())
    ax = fig.prompt_cache(cache.lazy(), means=prompt_cache_means(cache.lazy()))
    bars = ax.patches
    assert len(bars) == 6  # three stacked parts, two bars
    for j, window in enumerate(("before", "after")):
        part = cache.filter(pl.col("window") == window)
        assert bars[j].get_height() == pytest.approx(float(np.mean(part["cache_read_tokens"].to_numpy())))
        assert bars[4 + j].get_y() == pytest.approx(float(np.mean(part["cache_read_tokens"].to_numpy())
                                                           + np.mean(part["cache_creation_tokens"].to_numpy())))
    plt.close("all")


def test_the_paper_style_sets_computer_modern_at_the_articles_width_and_embeds_its_fonts(tmp_path: Path) -> None:
    """``plots.use_style("paper")``: serif Computer Modern (matplotlib's own cmr10, no TeX), 10pt, a figure as wide as
    the article's text (345pt) or column (252pt), TrueType fonts embedded; the gallery's style comes back whole."""
    import matplotlib.pyplot as plt

    counts = pl.DataFrame({"section": ["Constraints/Rules", "Open TODOs"], "entries": [12, -3]})
    plots.use_style("gallery")
    gallery = dict(plt.rcParams)
    try:
        plots.use_style("paper")
        ax = plots.entries_by_section(counts)
        assert ax.figure.get_size_inches()[0] * 72.27 == pytest.approx(345.0)
        assert plt.rcParams["font.family"] == ["serif"] and plt.rcParams["font.size"] == 10
        pdf, _ = plots.export(ax, "paper", tmp_path)
        plt.close(ax.figure)
        data = pdf.read_bytes()
        assert b"/FontFile2" in data and b"/Type3" not in data and b"Cmr10" in data  # TrueType, embedded
        fig, ax = plt.subplots()  # cmr10 draws < as an inverted exclamation mark: those come from the math font
        ax.set_yticks([0, 1], ["Holm p<0.001", "Oracle"])
        ax.set_xlabel("a | b")
        pdf, _ = plots.export(ax, "less", tmp_path)
        assert [t.get_text() for t in ax.get_yticklabels()][0] == "Holm p$<$0.001" and b"Cmmi10" in pdf.read_bytes()
        assert ax.get_xlabel() == "a $|$ b"
        plt.close(fig)
        plots.use_style("paper", width="column")
        ax = plots.entries_by_section(counts)
        assert ax.figure.get_size_inches()[0] * 72.27 == pytest.approx(252.0)
        plt.close(ax.figure)
        with pytest.raises(ValueError, match="expected one of"):
            plots.use_style("poster")
    finally:
        plots.use_style("gallery")
    after = dict(plt.rcParams)
    changed = {k for k in gallery if k not in ("figure.figsize",) and str(gallery[k]) != str(after[k])}
    assert plt.rcParams["font.family"] == ["sans-serif"] and not changed, sorted(changed)[:5]
    ax = plots.entries_by_section(counts)  # the gallery's figures keep their own sizes
    assert tuple(ax.figure.get_size_inches()) == (5.0, 3.2)
    import matplotlib.pyplot as plt

    plt.close(ax.figure)


def test_the_gallery_style_is_seaborns_theme_without_importing_seaborn() -> None:
    """Issue 82: ``use_style("gallery")`` imported seaborn for ``set_theme`` (scipy.stats and pandas with it: 1.7 of
    the 2.0 s of a notebook's setup cell). It now applies the settings ``tools/seaborn_theme.py`` wrote from seaborn:
    in a fresh process it imports no seaborn, scipy or pandas, every matplotlib setting equals what seaborn's own
    ``set_theme`` and the gallery's overrides give (but the default colormap, seaborn's ``rocket``, which matplotlib
    knows only once seaborn is imported), and so do the one-letter colour codes (the first run without them drew a
    bar chart's error bars black, not seaborn's dark grey); the file is what the tool writes. Both comparisons
    need the seaborn the file was written from (``_theme.SEABORN``): with another, the gallery keeps its look."""
    import json
    import subprocess
    import sys

    import matplotlib as mpl
    import matplotlib.colors as mcolors
    import matplotlib.pyplot as plt
    import seaborn as sns

    from workbench.plots import _style, _theme

    probe = ("import sys, json, matplotlib.colors as c; from workbench import plots; plots.use_style('gallery'); "
             "print(json.dumps([sorted(m for m in ('seaborn', 'scipy.stats', 'pandas') if m in sys.modules), "
             "{k: c.to_rgb(k) for k in 'bgrmyck'}]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    imported, codes = json.loads(done.stdout)
    assert imported == [], imported
    if sns.__version__ != _theme.SEABORN:  # the gallery keeps its look; following a new theme is a choice
        pytest.skip(f"the gallery's theme is seaborn {_theme.SEABORN}'s; seaborn {sns.__version__} is installed: "
                    "run tools/seaborn_theme.py to take its theme")
    saved = dict(mpl.rcParams)
    try:
        mpl.rcdefaults()
        sns.set_theme(context="paper", style="whitegrid", palette="colorblind", font_scale=1.2)
        plt.rcParams.update(_style.STYLE)
        theirs = dict(mpl.rcParams)
        mpl.rcdefaults()
        plots.use_style("gallery")
        ours = dict(mpl.rcParams)
    finally:
        mpl.rcParams.update(saved)
    differ = sorted(k for k in theirs if str(theirs[k]) != str(ours[k]))
    assert differ == ["image.cmap"], differ
    # seaborn's colour codes ("k" is matplotlib's bar error bars' colour): as the other process set them
    assert codes == {k: list(mcolors.to_rgb(k)) for k in "bgrmyck"} and codes["k"] == [0.1, 0.1, 0.1]
    tool = ROOT / "tools" / "seaborn_theme.py"
    assert subprocess.run([sys.executable, str(tool), "--check"], capture_output=True, timeout=120).returncode == 0


def test_the_auroc_figure_holds_every_interval_and_says_n_and_positives() -> None:
    """Issue 59: the judge-validation figure's axis started at 0.3 and cut an interval's lower end without a mark,
    and n (7, with 2 positives) was not shown. A small labelled sample's interval reaching 0.05 is now whole, and
    each row names its n and positives; an estimate outside its percentile interval is drawn, not an error."""
    import matplotlib.pyplot as plt

    from workbench import plots

    table = pl.DataFrame({"judge": ["lexical", "mine"], "field": ["support", "support"], "estimate": [0.6, 0.9],
                          "ci_low": [0.05, 0.92], "ci_high": [0.98, 1.0], "n": [7, 7], "n_pos": [2, 2]})
    ax = plots.sjc.auroc_intervals(table)
    low, high = ax.get_xlim()
    assert low <= 0.05 and high >= 1.0
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["lexical / Support (n=7, 2 positive)", "mine / Support (n=7, 2 positive)"]
    plt.close(ax.figure)


def test_an_auroc_figure_with_no_estimate_says_so_without_a_legend_warning() -> None:
    """A user's small data set: no group had enough labels of each class, so no bar; matplotlib warned that the
    legend had no artists, and the figure was an empty frame. Now it says why it is empty, with no warning."""
    import warnings

    from workbench.plots.human_labels import auroc_by_group

    table = pl.DataFrame({"dataset": ["news"], "score": ["lexical"], "estimate": [None], "ci_low": [None],
                          "ci_high": [None]}, schema_overrides={"estimate": pl.Float64, "ci_low": pl.Float64,
                                                                 "ci_high": pl.Float64})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ax = auroc_by_group(table, "dataset", scores=["lexical"])
    assert ax.get_legend() is None
    assert [t.get_text() for t in ax.texts] == ["no AUROC: too few labels of each class"]
    import matplotlib.pyplot as plt

    plt.close(ax.figure)
