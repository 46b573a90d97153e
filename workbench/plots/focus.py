"""FOCUS figures: Hoeffding bound curves, utility histogram, estimator error and keep-set stability."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from workbench.plots._style import _axes, figure_size

if TYPE_CHECKING:
    from workbench.stats._bootstrap import BootstrapResult
    from workbench.analyses.focus import UtilityHistogram


def bound_curves(curves: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """Lemma 1 / Theorem 1: recovery probability 1 - 2m exp(-2Nγ²) against N for each (m, γ).

    Parameters
    ----------
    curves : polars.DataFrame
        :func:`workbench.analyses.focus.bound_curves`.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax)
    for i, ((m, g), sub) in enumerate(sorted(curves.partition_by(["m", "gamma"], as_dict=True).items())):
        sub = sub.sort("n_rollouts")
        ax.plot(sub.get_column("n_rollouts"), sub.get_column("recovery"), color=f"C{i}", label=f"m={m}, γ={g}")
    ax.set_xscale("log")
    ax.set_xlabel("rollouts N")
    ax.set_ylabel("recovery probability (lower bound)")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7)
    return ax


def utility_histogram(hist: UtilityHistogram, tau: float = 0.5, ax: Axes | None = None) -> Axes:
    """FOCUS Figure 4: the distribution of û, pruned (below tau) and kept.

    Parameters
    ----------
    hist : UtilityHistogram
        :func:`workbench.analyses.focus.utility_histogram`.
    tau : float, default 0.5
        The keep threshold, a dotted line.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax)
    counts = np.asarray(hist.counts, dtype=float)
    edges = np.asarray(hist.edges, dtype=float)
    share = counts / max(counts.sum(), 1)
    colors = ["C3" if e < tau else "C0" for e in edges[:-1]]
    ax.bar(edges[:-1], share, width=np.diff(edges), align="edge", color=colors, edgecolor="white")
    ax.axvline(tau, color="grey", ls=":")
    ax.axvspan(tau - 1 / 6, tau + 1 / 6, color="grey", alpha=0.08)
    ax.set_xlabel("estimated span utility û")
    ax.set_ylabel("share of spans")
    ax.set_title(f"interior {hist.interior:.0%}, within ±1/6 of τ {hist.near_tau:.0%}", fontsize=9)
    return ax


def estimation_curves(stability: pl.DataFrame, error: pl.DataFrame, slope: BootstrapResult | None = None,
                      published: pl.DataFrame | None = None, ax: Sequence[Axes] | None = None,
                      ) -> tuple[Figure, tuple[Axes, Axes]]:
    """FOCUS Figure 5: (A) keep-set Jaccard against the N_max decision, (B) worst-span error against u* (log-log).

    ``stability`` and ``error`` are the mean curves (:func:`workbench.analyses.focus.curve_means` of
    :func:`workbench.analyses.focus.self_consistency_curves` and :func:`workbench.analyses.focus.error_against_truth`), ``slope``
    :func:`workbench.analyses.focus.error_slope`, shown with its interval in panel B's title, ``published`` FOCUS's own
    points (:func:`workbench.analyses.focus.published_draft_error`); ``ax``, when given, is the pair of axes for panels
    A and B. Returns the figure and the two axes.

    Parameters
    ----------
    stability : polars.DataFrame
        :func:`workbench.analyses.focus.curve_means` of the Jaccard curves.
    error : polars.DataFrame
        :func:`workbench.analyses.focus.curve_means` of the error against the truth.
    slope : BootstrapResult, optional
        :func:`workbench.analyses.focus.error_slope`, written on panel B.
    published : polars.DataFrame, optional
        :func:`workbench.analyses.focus.published_draft_error`, drawn as crosses.
    ax : sequence of matplotlib.axes.Axes, optional
        Two Axes to draw on; a new figure when None.

    Returns
    -------
    tuple of (Figure, (Axes, Axes))
        The figure and its two panels.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        fig, (a, b) = plt.subplots(1, 2, figsize=figure_size((8.0, 3.2)))
    else:
        a, b = ax
        fig = cast(Figure, a.figure)
    a.plot(stability.get_column("n_rollouts").to_numpy(), stability.get_column("jaccard"), "o-")
    a.set_xscale("log")
    a.set_ylim(0, 1.02)
    a.set_xlabel("rollouts N")
    a.set_ylabel("keep set's overlap with the\nlargest N's (Jaccard)")
    a.set_title("(A) keep-set stability", fontsize=9)
    n = error.get_column("n_rollouts").to_numpy()
    err = error.get_column("max_error").to_numpy()
    b.loglog(n, err, "o-", ms=3, label="testbed drafts vs u*")
    b.loglog(n, err[0] * (n / n[0]) ** -0.5, ":", color="grey", label="slope -0.5 (Lemma 1)")
    if published is not None:
        b.scatter(published.get_column("n_rollouts").to_list(), published.get_column("max_error").to_list(),
                  marker="x", color="C3", zorder=3, label="FOCUS (published)")
    b.set_xlabel("rollouts N")
    b.set_ylabel("worst span's error |û - u*|")
    title = "(B) worst-span error vs u*"
    if slope is not None:
        title += f": slope {slope.estimate:.2f} [{slope.ci_low:.2f}, {slope.ci_high:.2f}]"
    b.set_title(title, fontsize=9)
    b.legend(fontsize=7)
    fig.tight_layout()
    return fig, (a, b)


LABELS = {"acc": "accuracy (%)", "dependency_m": "Dependency (10^6)", "peak_k": "Peak tokens (10^3)",
          "steps": "Steps", "em": "exact match", "f1": "F1"}


def published_table(frame: pl.DataFrame, metric_x: str, metric_y: str, title: str | None = None,
                    ax: Axes | None = None) -> Axes:
    """A published results table replotted: ``metric_y`` against ``metric_x`` per method (FOCUS Tables 1-3).

    Parameters
    ----------
    frame : polars.DataFrame
        A published table (``method``, ``metric``, ``value``).
    metric_x : str
        The metric on the x axis.
    metric_y : str
        The metric on the y axis.
    title : str, optional
        The title.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax)
    wide = frame.pivot(on="metric", index="method", values="value")
    for i, row in enumerate(wide.iter_rows(named=True)):
        ax.scatter(row[metric_x], row[metric_y], color=f"C{i % 10}", zorder=3)
        ax.annotate(row["method"], (row[metric_x], row[metric_y]), fontsize=7, xytext=(3, 2), textcoords="offset points")
    ax.set_xlabel(LABELS.get(metric_x, metric_x))
    ax.set_ylabel(LABELS.get(metric_y, metric_y))
    if title:
        ax.set_title(title, fontsize=9)
    return ax


__all__ = ["bound_curves", "estimation_curves", "LABELS", "published_table", "utility_histogram"]
