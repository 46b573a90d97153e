"""Judges against real human labels (FRANK, SummEdits): partial correlations with intervals as a forest plot, AUROC by
group, balanced accuracy per domain beside published models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.axes import Axes

from workbench.analyses import HUMAN_ROW
from workbench.plots._style import _axes, figure_size


def correlation_forest(intervals: pl.DataFrame, *, panels: Sequence[str], order: Sequence[str],
                       judges: Sequence[str] = (), published: pl.DataFrame | None = None,
                       title: str = "partial Pearson correlation with human Factuality",
                       published_label: str = "FRANK's published number", unit: str = "sources") -> tuple[Any, Any]:
    """One panel per data set (``panels``, values of ``dataset``): each metric of ``order`` (top to bottom) at
    its estimate with its interval (``estimate``, ``ci_low``, ``ci_high`` of
    :func:`workbench.analyses.correlation_intervals`), the judges of ``judges`` in a colour of their own, and
    where ``published`` has the same metric and data set (``metric``, ``dataset``, ``value``), the published number
    as a cross (``published_label`` in the legend: pass it only for the data it was published on). An interval is
    drawn as a line with end ticks and the estimate as a dot, so an estimate outside a percentile interval (a few
    summaries) is shown as it is.

    Parameters
    ----------
    intervals : polars.DataFrame
        :func:`workbench.analyses.correlation_intervals` per data set.
    panels : sequence of str
        The data sets, a panel each.
    order : sequence of str
        The metrics, top to bottom.
    judges : sequence of str, default ()
        The metrics drawn as ours (highlighted).
    published : polars.DataFrame, optional
        :func:`workbench.analyses.published_frank`, drawn as points.
    title : str, default "partial Pearson correlation with human Factuality"
        The title.
    published_label : str, default "FRANK's published number"
        The legend's words for the crosses.
    unit : str, default "sources"
        What the intervals resample (the x label).

    Returns
    -------
    tuple of (Figure, axes)
        The figure and its panels.
    """
    fig, axes = plt.subplots(1, len(panels), figsize=figure_size((3.3 * len(panels) + 1.2, 0.32 * len(order) + 1.4)),
                             sharey=True, squeeze=False)
    ys = np.arange(len(order))[::-1]
    for ax, panel in zip(axes[0], panels, strict=True):
        part = intervals.filter(pl.col("dataset") == panel)
        rows = {r["metric"]: r for r in part.iter_rows(named=True)}
        for y, metric in zip(ys, order, strict=True):
            r = rows.get(metric)
            if r is None or r["estimate"] is None:
                continue
            colour = "C3" if metric in judges else "C0"
            lo, hi = r["ci_low"], r["ci_high"]
            if lo is not None and hi is not None:  # drawn as a line: a percentile interval of a few summaries
                ax.hlines(y, lo, hi, color=colour, lw=1.2)  # may leave the estimate outside it
                ax.plot([lo, hi], [y, y], "|", color=colour, markersize=5)
            ax.plot([r["estimate"]], [y], "o", color=colour, markersize=4)
        if published is not None:
            pub = {r["metric"]: r["value"] for r in published.filter(pl.col("dataset") == panel).iter_rows(named=True)}
            xs = [(pub[m], y) for y, m in zip(ys, order, strict=True) if m in pub]
            if xs:
                ax.plot([x for x, _ in xs], [y for _, y in xs], "x", color="black", markersize=6, zorder=3,
                        label=published_label)
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_title(panel, fontsize=9)
        ax.set_xlabel(f"r (95% interval resampling {unit})", fontsize=8)
    axes[0][0].set_yticks(ys)
    axes[0][0].set_yticklabels(order, fontsize=8)
    for label in axes[0][0].get_yticklabels():
        if label.get_text() in judges:
            label.set_color("C3")
    handles = [h for ax in axes[0] for h in ax.get_legend_handles_labels()[0]][:1]
    if handles:
        fig.legend(handles, [published_label], loc="lower center", ncols=1, fontsize=8,
                   bbox_to_anchor=(0.5, -0.02))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.04 if handles else 0, 1, 1))
    return fig, axes


def auroc_by_group(table: pl.DataFrame, group: str, *, scores: Sequence[str], ax: Axes | None = None,
                   title: str | None = None) -> Axes:
    """AUROC with its interval per value of ``group`` (one cluster of bars each), a bar per score of ``scores``
    (:func:`workbench.analyses.entry_auroc`'s columns); a group without an AUROC is left empty, chance at 0.5.

    Parameters
    ----------
    table : polars.DataFrame
        :func:`workbench.analyses.entry_auroc`.
    group : str
        The column whose values are the groups.
    scores : sequence of str
        The scores drawn, a bar each.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.
    title : str, optional
        The title.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    groups = sorted(table.get_column(group).unique().to_list())
    fig, ax = _axes(ax, (max(5.0, 0.9 * len(groups) + 2.0), 3.4))
    width = 0.8 / max(1, len(scores))
    drawn = False
    for k, score in enumerate(scores):
        part = {r[group]: r for r in table.filter(pl.col("score") == score).iter_rows(named=True)}
        xs, est, lo, hi = [], [], [], []
        for i, g in enumerate(groups):
            r = part.get(g)
            if r is None or r["estimate"] is None:
                continue
            xs.append(i + (k - (len(scores) - 1) / 2) * width)
            est.append(r["estimate"])
            lo.append(r["estimate"] - r["ci_low"])
            hi.append(r["ci_high"] - r["estimate"])
        if xs:
            ax.bar(xs, est, width=width * 0.9, yerr=[lo, hi], capsize=2, label=score, color=f"C{k}")
            drawn = True
    ax.axhline(0.5, color="grey", ls=":", lw=0.8)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=8, rotation=20)
    ax.set_ylim(0, 1)
    ax.set_ylabel("AUROC (95% interval)")
    if drawn:
        ax.legend(fontsize=7, ncols=min(3, len(scores)), loc="upper left")
    else:  # too few labels of a class in every group: say so rather than draw an empty frame
        ax.text(0.5, 0.5, "no AUROC: too few labels of each class", transform=ax.transAxes, ha="center",
                va="center", fontsize=8, color="0.4")
    if title:
        ax.set_title(title, fontsize=9)
    return ax


def summedits_domains(table: pl.DataFrame, published: pl.DataFrame | None = None, *,
                      statistic: str = "balanced_accuracy", runs: pl.DataFrame | None = None,
                      ax: Axes | None = None) -> Axes:
    """Per SummEdits domain, each judge's ``statistic`` with its interval (coloured), and where given the published
    models' balanced accuracy (grey dots) and people's (a black bar): :func:`workbench.analyses.summedits_table`
    and :func:`workbench.analyses.published_summedits`.

    Parameters
    ----------
    table : polars.DataFrame
        :func:`workbench.analyses.summedits_table` (one aggregate).
    published : polars.DataFrame, optional
        :func:`workbench.analyses.published_summedits`; drawn only for balanced accuracy.
    statistic : {"balanced_accuracy", "auroc"}, default "balanced_accuracy"
        What the judges' marks show.
    runs : polars.DataFrame, optional
        The project's own runs of the published protocol on a model (``model``, ``domain``,
        ``balanced_accuracy``: ``tools/summedits_model.py``), drawn as crosses.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    rows = table.filter((pl.col("statistic") == statistic) & (pl.col("domain") != "overall"))
    domains = sorted(rows.get_column("domain").unique().to_list())
    judges = sorted(rows.get_column("judge").unique().to_list())
    fig, ax = _axes(ax, (7.0, 3.6))
    if published is not None and statistic == "balanced_accuracy":
        for i, d in enumerate(domains):
            part = published.filter(pl.col("domain") == d)
            models = part.filter(pl.col("model") != HUMAN_ROW).get_column("balanced_accuracy").to_numpy()
            ax.scatter(np.full(len(models), i - 0.18), models, s=9, color="0.65", zorder=2,
                       label="published models" if i == 0 else None)
            people = part.filter(pl.col("model") == HUMAN_ROW).get_column("balanced_accuracy").to_list()
            if people:
                ax.hlines(people[0], i - 0.32, i - 0.04, color="black", lw=1.6, zorder=3,
                          label="people (published)" if i == 0 else "_nolegend_")
    for k, judge in enumerate(judges):
        mine = {r["domain"]: r for r in rows.filter(pl.col("judge") == judge).iter_rows(named=True)}
        xs = [i + 0.12 + 0.1 * k for i, d in enumerate(domains) if mine.get(d) and mine[d]["estimate"] is not None]
        got = [mine[d] for d in domains if mine.get(d) and mine[d]["estimate"] is not None]
        est = np.array([r["estimate"] for r in got], dtype=np.float64)
        lo = np.array([r["ci_low"] if r["ci_low"] is not None else np.nan for r in got], dtype=np.float64)
        hi = np.array([r["ci_high"] if r["ci_high"] is not None else np.nan for r in got], dtype=np.float64)
        ax.errorbar(xs, est, yerr=[np.nan_to_num(est - lo), np.nan_to_num(hi - est)], fmt="o", ms=4, capsize=2,
                    color=f"C{k + 1}", label=judge, zorder=4)
    if runs is not None and statistic == "balanced_accuracy" and runs.height:
        for m, (model,) in enumerate(runs.select("model").unique(maintain_order=True).iter_rows()):
            shares: dict[str, float] = {r["domain"]: r["balanced_accuracy"]
                                        for r in runs.filter(pl.col("model") == model).to_dicts()}
            pts = [(i - 0.18, shares[d]) for i, d in enumerate(domains)
                   if shares.get(d) is not None and np.isfinite(float(shares[d]))]
            ax.scatter([x for x, _ in pts], [y for _, y in pts], marker="x", s=28, color=f"C{len(judges) + 3 + m}",
                       zorder=5, label=f"{model} (this project's run)")
    ax.axhline(0.5, color="grey", ls=":", lw=0.8)
    ax.set_xticks(range(len(domains)))
    ax.set_xticklabels([d.replace("_", " ") for d in domains], fontsize=8, rotation=20)
    ax.set_ylim(0.25, 1.0)
    ax.set_ylabel({"balanced_accuracy": "balanced accuracy", "auroc": "AUROC"}[statistic] + " (test split)")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=4, frameon=False)
    return ax


__all__ = ["auroc_by_group", "correlation_forest", "summedits_domains"]
