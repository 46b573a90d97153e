"""Judge calibration figures: the reliability diagram and precision / recall / pruned fraction against tau."""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.axes import Axes

from workbench.plots._style import _axes


def reliability_diagram(curve: pl.DataFrame, title: str | None = None, ax: Axes | None = None) -> Axes:
    """Observed positive rate against mean score per bin, with intervals, the diagonal and the bin counts.

    ``curve`` is :func:`workbench.stats.reliability_curve` (``mean_score``, ``estimate``,
    ``ci_low``, ``ci_high``, ``n``).

    Parameters
    ----------
    curve : polars.DataFrame
        :func:`workbench.stats.reliability_curve`.
    title : str, optional
        The title.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax, (4.6, 4.2))
    ax.plot([0, 1], [0, 1], ":", color="grey", label="perfect calibration")
    x = curve.get_column("mean_score").to_numpy()
    y = curve.get_column("estimate").to_numpy()
    lo, hi = curve.get_column("ci_low").to_numpy(), curve.get_column("ci_high").to_numpy()
    what = {"percentile|wilson": "scenario bootstrap and Wilson"}.get(
        str(curve.get_column("method")[0]) if "method" in curve.columns and curve.height else "", "")
    ax.errorbar(x, y, yerr=[y - lo, hi - y], fmt="o-", capsize=3, color="C0",
                label="observed share" + (f" (95% interval: {what})" if what else " (95% interval)"))
    for xi, yi, n in zip(x, y, curve.get_column("n").to_list(), strict=True):
        ax.annotate(f"n={n}", (xi, yi), xytext=(4, -10), textcoords="offset points", fontsize=7, color="C0")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(-0.02, 1.05)
    ax.set_xlabel("mean judge score in bin")
    ax.set_ylabel("share of entries labeled positive")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8, loc="upper left")
    return ax


def threshold_curve(sweep: pl.DataFrame, chosen: float | None = None, sjc_tau: float | None = 0.5,
                    ax: Axes | None = None) -> Axes:
    """Precision, recall and pruned fraction against tau with 95% bands; the chosen tau and SJC's tau marked.

    ``sweep`` is :func:`workbench.stats.threshold_sweep` (long form by ``statistic``).

    Parameters
    ----------
    sweep : polars.DataFrame
        :func:`workbench.stats.threshold_sweep`.
    chosen : float, optional
        The chosen tau, a solid line.
    sjc_tau : float, optional, default 0.5
        SJC's tau, a dotted line.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax, (5.5, 3.4))
    for i, name in enumerate(("precision", "recall", "pruned")):
        sub = sweep.filter(pl.col("statistic") == name).sort("tau")
        t = sub.get_column("tau").to_numpy()
        ax.plot(t, sub.get_column("estimate").to_numpy(), color=f"C{i}", label=name)
        ax.fill_between(t, sub.get_column("ci_low").fill_null(np.nan).to_numpy(),
                        sub.get_column("ci_high").fill_null(np.nan).to_numpy(), color=f"C{i}", alpha=0.2)
    if chosen is not None and np.isfinite(chosen):
        ax.axvline(chosen, color="black", lw=1, label=f"chosen tau = {chosen:.2f}")
    if sjc_tau is not None:
        ax.axvline(sjc_tau, color="grey", ls=":", lw=1, label=f"SJC tau = {sjc_tau}")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("threshold tau (keep entries with score >= tau)")
    ax.set_ylabel("share")
    ax.legend(fontsize=7, loc="lower left")
    return ax


__all__ = ["reliability_diagram", "threshold_curve"]
