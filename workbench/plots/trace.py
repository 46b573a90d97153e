"""TRACE figures: post-compaction burden, chosen vs rejected defects, verifier against the fact check."""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.axes import Axes

from workbench.plots._style import _axes
from workbench.plots._names import display_name


def burden_curve(frame: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """Blocked and repeated calls per action at steps 1..5 after a boundary, minus the uncompressed run.

    Parameters
    ----------
    frame : polars.DataFrame
        :func:`workbench.analyses.trace.post_compaction_burden`.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax)
    for i, m in enumerate(("blocked", "repeated")):
        sub = frame.filter(pl.col("measure") == m).sort("k")
        k = sub.get_column("k").to_numpy()
        est = sub.get_column("estimate").to_numpy()
        ax.errorbar(k + (i - 0.5) * 0.08, est, yerr=[est - sub.get_column("ci_low").to_numpy(),
                                                    sub.get_column("ci_high").to_numpy() - est],
                    fmt="o-", capsize=3, label=f"{m} calls", color=f"C{i}")
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("steps after the compaction")
    ax.set_ylabel("excess per action\nover the uncompressed run")
    from workbench.plots._names import INTERVAL_METHODS

    method = frame.get_column("method")[0] if "method" in frame.columns and frame.height else ""
    ax.legend(title=f"error bars: 95% intervals over scenarios ({INTERVAL_METHODS.get(method, method)})".replace(" ()", ""),
              title_fontsize=7, fontsize=8)
    return ax


def defects_chosen_rejected(frame: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """Mean silent and visible defects of chosen vs rejected candidates, per selector.

    Parameters
    ----------
    frame : polars.DataFrame
        :func:`workbench.analyses.trace.defects_chosen_vs_rejected`.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax)
    rows = frame.sort("method", "chosen", descending=[False, True]).iter_rows(named=True)
    labels, silent, visible = [], [], []
    for r in rows:
        labels.append(f"{display_name(r['method'])}\n{'chosen' if r['chosen'] else 'rejected'}")
        silent.append(r["silent_mean"])
        visible.append(r["visible_mean"])
    x = np.arange(len(labels))
    ax.bar(x - 0.2, visible, 0.4, label="visible defects", color="C1")
    ax.bar(x + 0.2, silent, 0.4, label="silent defects", color="C4")
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_ylabel("defects per candidate summary")
    ax.legend(fontsize=8)
    return ax


def verifier_vs_factcheck(frame: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """The verifier score of each chosen summary against its fact-check result (silent defect or not).

    Parameters
    ----------
    frame : polars.DataFrame
        The chosen candidates with ``verifier_score`` and ``silent_defect``.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax)
    for i, (flag, label) in enumerate(((False, "fact check clean"), (True, "fact check: silent defect"))):
        x = frame.filter(pl.col("silent_defect") == flag).get_column("verifier_score").drop_nulls().to_numpy()
        if len(x):
            bins = np.arange(np.floor(x.min()) - 0.5, np.ceil(x.max()) + 1.5).tolist()
            ax.hist(x, bins=bins, histtype="step", lw=2, density=True, label=f"{label} (n={len(x)})", color=f"C{i}",
                    ls="-" if i == 0 else "--")
    ax.set_xlabel("verifier score (-induced burden)")
    ax.set_ylabel("density")
    ax.legend(fontsize=8)
    return ax


__all__ = ["burden_curve", "defects_chosen_rejected", "verifier_vs_factcheck"]
