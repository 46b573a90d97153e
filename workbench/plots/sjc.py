"""SJC figures: composition, validation, sensitivity, attribution, reliability vs cost."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
from matplotlib.axes import Axes

from workbench.plots._style import _axes
from workbench.plots._names import display_name
from workbench.analyses.sjc._sensitivity import ThresholdCounts
from workbench.tables._vocabulary import PATTERNS


def section_composition(table2: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """SJC Table 2 as bars: entries per section, split into supported and unsupported.

    Parameters
    ----------
    table2 : polars.DataFrame
        :func:`workbench.analyses.sjc.entries_by_section`.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax, (6.0, 3.2))
    t = table2.filter(~pl.col("section").is_in(["All"]) & ~pl.col("section").str.starts_with("Reasoning"))
    names = t.get_column("section").to_list()[::-1]
    uns = t.get_column("unsupported").to_numpy()[::-1]
    tot = t.get_column("entries").to_numpy()[::-1]
    ax.barh(names, tot - uns, color="C0", label="supported")
    ax.barh(names, uns, left=tot - uns, color="C3", label="unsupported")
    for y, (n, u) in enumerate(zip(tot, uns, strict=True)):
        ax.text(n, y, f" {u / n:.0%}" if n else "", va="center", fontsize=8)
    ax.set_xlabel("entries (label: unsupported share)")
    ax.set_xlim(0, tot.max() * 1.12 if len(tot) else 1)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=2)
    return ax


def unsupported_by_boundary(table9: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """SJC Table 9: unsupported share among all and among reasoning entries, by boundary.

    Parameters
    ----------
    table9 : polars.DataFrame
        :func:`workbench.analyses.sjc.by_boundary`.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax)
    k = table9.get_column("k").to_numpy()
    ax.plot(k, table9.get_column("unsupported_all"), "o-", label="all entries")
    ax.plot(k, table9.get_column("unsupported_reasoning"), "s-", label="reasoning entries")
    ax.set_xlabel("compression boundary")
    ax.set_ylabel("unsupported share")
    ax.set_xticks(k)
    ax.legend()
    return ax


def persistence_curves(table10: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """SJC Table 10: share of reasoning entries still present d summaries after they appear.

    Parameters
    ----------
    table10 : polars.DataFrame
        :func:`workbench.analyses.sjc.persistence`'s frame.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax)
    for sup, style in ((True, "o-"), (False, "s--")):
        sub = table10.filter(pl.col("supported") == sup).sort("d")
        ax.plot(sub.get_column("d"), sub.get_column("share"), style, label="supported" if sup else "unsupported")
    ax.set_xlabel("summaries after first appearance (d)")
    ax.set_xticks(sorted(table10.get_column("d").unique().to_list()))
    ax.set_ylabel("share still present")
    ax.set_ylim(0, 1)
    ax.legend()
    return ax


def auroc_intervals(table12: pl.DataFrame, published: dict[str, float] | None = None,
                    published_label: str = "Jev (SJC, published)", ax: Axes | None = None) -> Axes:
    """SJC Table 12: AUROC with 95% scenario-bootstrap intervals per judge and label field.

    ``published`` maps a label field (``support``, ``correct``) to a published AUROC; each is
    drawn as a point on a row of its own, ``published_label / field``, beside the measured rows: pass it only for
    the data it was published on. Each measured row says its ``n`` and positives (``n_pos``); the x axis holds
    every interval whole.

    Parameters
    ----------
    table12 : polars.DataFrame
        :func:`workbench.stats.judge_table`.
    published : dict of str to float, optional
        Label field to a published AUROC, drawn as a point.
    published_label : str, default "Jev (SJC, published)"
        The published points' row label.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    t = table12.drop_nulls("estimate")
    counts = [f" (n={n}, {p} positive)" if n is not None and p is not None else "" for n, p in
              t.select(pl.col("n") if "n" in t.columns else pl.lit(None).alias("n"),
                       pl.col("n_pos") if "n_pos" in t.columns else pl.lit(None).alias("n_pos")).iter_rows()]
    rows = [(f"{j} / {display_name(f)}{c}", e, lo, hi) for (j, f, e, lo, hi), c in
            zip(t.select("judge", "field", "estimate", "ci_low", "ci_high").iter_rows(), counts, strict=True)]
    pub = [(f"{published_label} / {display_name(field)}", value) for field, value in (published or {}).items()]
    fig, ax = _axes(ax, (5.5, 1.4 + 0.45 * (len(rows) + len(pub))))
    labels = [r[0] for r in rows] + [p[0] for p in pub]
    y = np.arange(len(labels))[::-1]  # first row on top
    est = np.array([r[1] for r in rows])
    lo, hi = np.array([r[2] for r in rows]), np.array([r[3] for r in rows])
    if rows:  # an interval as a line with end ticks, the estimate as a dot (a percentile interval may miss it)
        ax.hlines(y[:len(rows)], lo, hi, color="C0", lw=1.2)
        ax.plot(np.r_[lo, hi], np.r_[y[:len(rows)], y[:len(rows)]], "|", color="C0", markersize=7)
        ax.plot(est, y[:len(rows)], "o", color="C0", label="measured (95% CI over scenarios)")
    if pub:
        ax.plot([p[1] for p in pub], y[len(rows):], "D", color="C3", label="published (point estimate)")
        for (_, value), yy in zip(pub, y[len(rows):], strict=True):
            ax.annotate(f"{value:.3f}", (value, yy), xytext=(6, -3), textcoords="offset points", fontsize=8)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=8, ncols=2)
    ax.set_ylim(-0.6, len(labels) - 0.4)
    ax.axvline(0.5, color="grey", lw=0.8)
    ax.set_yticks(y, labels)
    ax.set_xlabel("AUROC")
    shown = [v for v in (*lo, *hi, *est, *(p[1] for p in pub)) if v is not None and np.isfinite(v)]
    ax.set_xlim(min(0.3, min(shown, default=0.3) - 0.03), max(1.0, max(shown, default=1.0) + 0.02))  # every interval
    return ax


def score_histograms(frame: pl.DataFrame | ThresholdCounts, sections: Sequence[str], bins: int = 20,
                     ax: Axes | None = None) -> Axes:
    """SJC Figure 3 (left): distribution of source scores per section, from the entries or from their counts
    (:class:`workbench.analyses.sjc.ThresholdCounts`, a log of any size; the same figure).

    Parameters
    ----------
    frame : polars.DataFrame or ThresholdCounts
        Scored entries with ``section``, or their counts.
    sections : sequence of str
        The sections drawn.
    bins : int, default 20
        Histogram bins.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax)
    for i, s in enumerate(sections):
        if isinstance(frame, ThresholdCounts):
            counts, edges = frame.histogram(s), frame.edges
            if counts.sum():  # each bin's left edge weighted by its count: numpy bins them as it binned the scores
                ax.hist(edges[:-1], bins=edges.tolist(), weights=counts, histtype="step", lw=1.5, density=True, label=s,
                        color=f"C{i}")
            continue
        x = frame.filter(pl.col("section") == s).get_column("score").drop_nulls().to_numpy()
        if len(x):
            ax.hist(x, bins=bins, range=(0, 1), histtype="step", lw=1.5, density=True, label=s, color=f"C{i}")
    ax.set_xlabel("source score")
    ax.set_ylabel("density")
    ax.legend(fontsize=8)
    return ax


def pruned_vs_tau(curve: pl.DataFrame, tau: float | None = 0.5, legend_title: str | None = "budget",
                  ax: Axes | None = None) -> Axes:
    """SJC Figure 3 (right): fraction pruned against tau per setting (``legend_title`` names what the settings
    are), with scenario-bootstrap bands; a dotted line at SJC's ``tau`` and a shaded span over tau 0.3 to 0.7, the
    range whose change :func:`workbench.analyses.sjc.largest_change` tables, both in the legend.

    Parameters
    ----------
    curve : polars.DataFrame
        :func:`workbench.analyses.sjc.sweep`.
    tau : float, optional, default 0.5
        SJC's threshold, a dotted line (none when None).
    legend_title : str, optional, default "budget"
        What the settings are.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax)
    for i, (name,) in enumerate(curve.select("setting").unique(maintain_order=True).iter_rows()):
        c = curve.filter(pl.col("setting") == name) if name is not None else curve
        ax.plot(c.get_column("tau"), c.get_column("estimate"), color=f"C{i}", label=display_name(name))
        ax.fill_between(c.get_column("tau"), c.get_column("ci_low"), c.get_column("ci_high"), color=f"C{i}", alpha=0.2)
    if tau is not None:
        ax.axvline(tau, color="grey", ls=":", label=f"SJC's tau = {tau:g}")
    ax.axvspan(0.3, 0.7, color="grey", alpha=0.06, label="tau 0.3 to 0.7")
    ax.set_xlabel("threshold tau")
    ax.set_ylabel("fraction of entries pruned")
    ax.legend(title=legend_title, fontsize=8, title_fontsize=8)
    return ax


def keep_rates(table: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """Keep rate per section at tau.

    Parameters
    ----------
    table : polars.DataFrame
        :func:`workbench.analyses.sjc.keep_rate_by_section`.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax)
    ax.barh(table.get_column("section"), table.get_column("keep_rate"), color="C2")
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of entries kept")
    return ax


def attribution_bars(table11: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """SJC Table 11: failed runs per scenario, stacked by pattern.

    Parameters
    ----------
    table11 : polars.DataFrame
        :func:`workbench.analyses.sjc.failures_by_scenario`'s table.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax, (6.5, 3.2))
    t = table11.filter(pl.col("scenario_id") != "Total")
    x = np.arange(t.height)
    bottom = np.zeros(t.height)
    for i, p in enumerate(PATTERNS):
        v = t.get_column(p).to_numpy().astype(float)
        ax.bar(x, v, bottom=bottom, label=p, color=f"C{i}")
        bottom += v
    ax.set_xticks(x, t.get_column("scenario_id").to_list(), rotation=45, fontsize=8)
    ax.set_ylabel("failed runs")
    ax.legend(ncols=5, fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    return ax


def pass_vs_tokens(frame: pl.DataFrame, reference: str = "no_compression", ax: Axes | None = None) -> Axes:
    """SJC Figure 2: Pass^k against mean cumulative LLM tokens per task; dotted: uncompressed cost.

    When ``frame`` carries ``pass_hat_k_ci_*`` and ``tokens_ci_*`` (``pass_vs_tokens(..., n_boot=)``)
    each method gets its interval on both axes.

    Parameters
    ----------
    frame : polars.DataFrame
        :func:`workbench.analyses.sjc.pass_vs_tokens`.
    reference : str, default "no_compression"
        The uncompressed method, whose cost is the dotted line.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax)
    bars = {"pass_hat_k_ci_low", "tokens_ci_low"} <= set(frame.columns)
    for i, row in enumerate(frame.iter_rows(named=True)):
        ax.scatter(row["tokens_per_task"], row["pass_hat_k"], color=f"C{i}", zorder=3)
        if bars:  # 95% scenario intervals on both axes
            ax.errorbar(row["tokens_per_task"], row["pass_hat_k"], color=f"C{i}", lw=1, capsize=2,
                        xerr=[[row["tokens_per_task"] - row["tokens_ci_low"]], [row["tokens_ci_high"] - row["tokens_per_task"]]],
                        yerr=[[row["pass_hat_k"] - row["pass_hat_k_ci_low"]], [row["pass_hat_k_ci_high"] - row["pass_hat_k"]]])
        ax.annotate(display_name(row["method"]), (row["tokens_per_task"], row["pass_hat_k"]), fontsize=8,
                    xytext=(4, 2), textcoords="offset points")
    ref = frame.filter(pl.col("method") == reference)
    if ref.height:
        ax.axvline(ref.get_column("tokens_per_task")[0], color="grey", ls=":", label="uncompressed cost")
        ax.legend(fontsize=8)
    ax.set_xlabel("mean cumulative LLM tokens per task (agent + compressor)")
    ax.set_ylabel("Pass^k")
    return ax


def accuracy_by_budget(frame: pl.DataFrame, value: str = "acc", ax: Axes | None = None) -> Axes:
    """Accuracy of each method at each budget (grouped bars), with its interval when ``frame`` has one.

    ``frame`` has ``method``, ``budget`` and ``value`` per row, as
    :func:`workbench.stats.reliability` by ``["method", "budget"]`` gives; with ``n_boot`` it
    also has ``{value}_ci_low`` / ``{value}_ci_high``, drawn as error bars.

    Parameters
    ----------
    frame : polars.DataFrame
        :func:`workbench.stats.reliability` by ``["method", "budget"]``.
    value : str, default "acc"
        The statistic drawn.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax, (6.5, 3.2))
    budgets = sorted(frame.get_column("budget").unique().to_list())
    methods = frame.get_column("method").unique(maintain_order=True).to_list()
    width = 0.8 / max(1, len(methods))
    bounds = f"{value}_ci_low" in frame.columns and f"{value}_ci_high" in frame.columns
    for i, m in enumerate(methods):
        sub = frame.filter(pl.col("method") == m)
        rows = [sub.filter(pl.col("budget") == b) for b in budgets]
        vals = np.array([r.get_column(value).cast(pl.Float64)[0] if r.height else np.nan for r in rows],
                        dtype=float)  # one row per (method, budget)
        x = np.arange(len(budgets)) + i * width
        ax.bar(x, vals, width, label=display_name(m), color=f"C{i}")
        if bounds:
            lo = np.array([r.get_column(f"{value}_ci_low")[0] if r.height else np.nan for r in rows], dtype=float)
            hi = np.array([r.get_column(f"{value}_ci_high")[0] if r.height else np.nan for r in rows], dtype=float)
            ax.errorbar(x, vals, yerr=[np.clip(vals - lo, 0, None), np.clip(hi - vals, 0, None)], fmt="none",
                        ecolor="black", elinewidth=0.8, capsize=2)
    ax.set_xticks(np.arange(len(budgets)) + width * (len(methods) - 1) / 2, [str(b) for b in budgets])
    ax.set_xlabel("budget (context units: 1 per turn + 1 per id or number; TRACE's 'tokens')")
    ax.set_ylabel({"acc": "accuracy (share of runs\nthat complete the task)"}.get(value, value))
    if bounds:
        method = frame.get_column("ci_method")[0] if "ci_method" in frame.columns else ""
        from workbench.plots._names import INTERVAL_METHODS

        ax.text(1.0, -0.3, f"error bars: 95% intervals over task scenarios ({INTERVAL_METHODS.get(method, method)})",
                transform=ax.transAxes, ha="right", va="top", fontsize=7, color="0.3")
    ax.legend(fontsize=7, ncols=3, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    return ax


def decision_flips(flips: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """SJC Section 5.4: share of entries whose keep/prune decision flips across repeats, per section.

    ``flips`` is :func:`workbench.analyses.sjc.decision_flips` by ``section``; with a reference
    judge, a second bar gives the share among entries the reference scores low.

    Parameters
    ----------
    flips : polars.DataFrame
        :func:`workbench.analyses.sjc.decision_flips` by ``section``, for one judge.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax, (6.0, 3.2))
    names = [f"{s} (n={n})" for s, n in zip(flips.get_column("section"), flips.get_column("entries"), strict=True)]
    y = np.arange(len(names))
    with_ref = "flip_share_ref_low" in flips.columns
    h = 0.4 if with_ref else 0.8
    ax.barh(y + (h / 2 if with_ref else 0), flips.get_column("flip_share").fill_null(np.nan).to_numpy(), h,
            color="C0", label="all entries")
    if with_ref:  # no bar where the reference scores no entry of the section low
        ax.barh(y - h / 2, flips.get_column("flip_share_ref_low").fill_null(np.nan).to_numpy(), h, color="C3",
                label="entries the reference scores below 0.2")
        ax.legend(fontsize=8, loc="lower right")
    ax.set_yticks(y, names)
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of entries whose decision flips across repeats")
    return ax


def entries_by_section(counts: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """Bar chart of entries per section (columns ``section``, ``entries``), SJC Table 2's first column.

    Parameters
    ----------
    counts : polars.DataFrame
        ``section`` and ``entries`` (:func:`workbench.analyses.sjc.section_counts`).
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax)
    ax.barh(counts.get_column("section").to_list()[::-1], counts.get_column("entries").to_list()[::-1], color="C0")
    ax.set_xlabel("entries")
    ax.set_title("Summary entries by section")
    return ax


__all__ = ["entries_by_section", "accuracy_by_budget", "attribution_bars", "auroc_intervals", "decision_flips", "keep_rates",
           "pass_vs_tokens", "persistence_curves", "pruned_vs_tau", "score_histograms", "section_composition",
           "unsupported_by_boundary"]
