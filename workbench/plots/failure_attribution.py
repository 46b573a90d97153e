"""Failure attribution against people's labels (Who&When): each attributor's agent- and step-level accuracy with its
interval beside a uniform guess, and step accuracy as the tolerance grows
(:mod:`workbench.analyses._failure_attribution`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from workbench.plots._style import _axes, figure_size


def accuracy_panels(accuracy: pl.DataFrame, random: Mapping[str, tuple[float, float]], subsets: Sequence[str],
                    ax: Sequence[Axes] | None = None) -> tuple[Figure, Sequence[Axes]]:
    """Agent-level (left) and exact step-level (right) accuracy of every attributor, one row of points per
    attributor and a colour per subset, each with its interval; the dotted marks are a uniform guess's expected
    accuracy per subset (``random``: subset -> (agent, step), shares).

    Parameters
    ----------
    accuracy : polars.DataFrame
        :func:`workbench.analyses.attribution_accuracy` (k = 0 among its step rows).
    random : mapping of str to (float, float)
        Each subset's expected agent and step accuracy of a uniform guess (shares, not %).
    subsets : sequence of str
        The subsets drawn, in order.
    ax : sequence of two matplotlib.axes.Axes, optional
        The two panels to draw on; a new figure when None.

    Returns
    -------
    tuple of (matplotlib.figure.Figure, sequence of Axes)
        The figure and its two panels.
    """
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(accuracy.get_column("attributor").to_list()))
    axes: list[Axes]
    if ax is None:
        fig, pair = plt.subplots(1, 2, figsize=figure_size((7.2, 0.8 + 0.45 * len(names) * len(subsets))),
                                 sharey=True)
        axes = list(pair)
    else:
        axes = list(ax)
        fig = axes[0].figure  # type: ignore[assignment]
    y_of = {(a, s): i * (len(subsets) + 1) + j for i, a in enumerate(names) for j, s in enumerate(subsets)}
    for panel, (what, k, title, r) in zip(axes, (("agent", None, "agent level", 0),
                                                 ("step", 0, "step level (exact)", 1)), strict=True):
        part = accuracy.filter((pl.col("level_of") == what)
                               & (pl.col("k").is_null() if k is None else pl.col("k") == k))
        for j, subset in enumerate(subsets):
            rows = part.filter(pl.col("subset") == subset)
            ys = [y_of[(a, subset)] for a in rows["attributor"]]
            est = rows["estimate"].to_numpy()
            err = np.vstack([est - rows["ci_low"].to_numpy(), rows["ci_high"].to_numpy() - est])
            panel.errorbar(est, ys, xerr=np.nan_to_num(err), fmt="o", color=f"C{j}", capsize=2, label=subset)
            if subset in random:
                panel.axvline(random[subset][r], color=f"C{j}", ls=":", lw=1)
        panel.set_title(title, fontsize=9)
        panel.set_xlim(-0.02, 1.02)
    fig.supxlabel("accuracy (95% interval over questions)", fontsize=9)
    centres = [y_of[(a, subsets[0])] + (len(subsets) - 1) / 2 for a in names]  # each attributor's rows' middle
    axes[0].set_yticks(centres, names, fontsize=8)
    axes[0].invert_yaxis()
    axes[1].legend(fontsize=7, loc="lower right", title="dotted: a uniform guess", title_fontsize=7)
    if ax is None:
        fig.tight_layout()
    return fig, axes


def step_tolerance(accuracy: pl.DataFrame, subset: str, guess: pl.DataFrame | None = None,
                   ax: Axes | None = None) -> Axes:
    """Step-level accuracy within +-k steps of the labelled step, against k, one line per attributor with its
    interval as a band; ``guess`` (:func:`workbench.analyses.random_within`) adds a uniform
    guess's expected accuracy as a dashed grey line.

    Parameters
    ----------
    accuracy : polars.DataFrame
        :func:`workbench.analyses.attribution_accuracy` with several ``k``.
    subset : str
        The subset drawn (or ``overall``).
    guess : polars.DataFrame, optional
        A uniform guess's accuracy per subset and k.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax, (4.2, 3.0))
    if guess is not None:
        g = guess.filter(pl.col("subset") == subset).sort("k")
        ax.plot(g["k"].to_numpy(), g["estimate"].to_numpy(), ls="--", color="0.5", label="a uniform guess")
    part = accuracy.filter((pl.col("level_of") == "step") & (pl.col("subset") == subset)).sort("k")
    for i, (name,) in enumerate(part.select("attributor").unique(maintain_order=True).iter_rows()):
        rows = part.filter(pl.col("attributor") == name)
        k = rows["k"].to_numpy()
        ax.plot(k, rows["estimate"].to_numpy(), marker="o", color=f"C{i}", label=name)
        ax.fill_between(k, rows["ci_low"].to_numpy(), rows["ci_high"].to_numpy(), color=f"C{i}", alpha=0.15)
    ax.set_xlabel("tolerance k (steps)")
    ax.set_ylabel("step accuracy within +-k")
    ax.set_ylim(0, 1)
    ax.set_title(subset, fontsize=9)
    ax.legend(fontsize=7)
    return ax


__all__ = ["accuracy_panels", "step_tolerance"]
