"""Method comparison figures: a forest plot of every method against a baseline."""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.axes import Axes

from workbench.plots._style import _axes
from workbench.plots._names import display_name


def forest(diffs: pl.DataFrame, group: str | None = "budget", ax: Axes | None = None) -> Axes:
    """Each method minus the baseline, per group: the difference, its simultaneous interval, Holm's p in the label.

    ``diffs`` is :func:`workbench.stats.compare_to_baseline` (``a``, ``b``, ``estimate``,
    ``sim_low``, ``sim_high``, ``p_holm``, ``metric`` and the ``group`` column). The bars are the
    family's simultaneous intervals (Bonferroni), so a bar clear of 0 is a difference the adjusted
    test finds; the per-comparison intervals (``ci_low``/``ci_high``) would not be.

    Parameters
    ----------
    diffs : polars.DataFrame
        :func:`workbench.stats.compare_to_baseline`.
    group : str, optional, default "budget"
        The column that groups the comparisons.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    rows = diffs.sort([c for c in (group, "a") if c and c in diffs.columns]).to_dicts()
    fig, ax = _axes(ax, (6.5, 0.8 + 0.32 * len(rows)))
    y = np.arange(len(rows))[::-1]
    groups = sorted({r.get(group) for r in rows}, key=str) if group and group in diffs.columns else [None]
    colours = {g: f"C{i}" for i, g in enumerate(groups)}
    labels = []
    for yi, r in zip(y, rows, strict=True):
        g = r.get(group) if group else None
        ax.errorbar(r["estimate"], yi, xerr=[[r["estimate"] - r["sim_low"]], [r["sim_high"] - r["estimate"]]],
                    fmt="o", capsize=3, color=colours[g])
        p = r.get("p_holm")
        ptext = "" if p is None or not np.isfinite(p) else "Holm p" + (f"={p:.3f}" if p >= 0.001 else "<0.001")
        labels.append(display_name(r["a"]) + (f" @ {g}" if g is not None else "") + (f"  ({ptext})" if ptext else ""))
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_yticks(y, labels, fontsize=8)
    metric = rows[0]["metric"] if rows else ""
    baseline = rows[0]["b"] if rows else ""
    m = int(np.isfinite(diffs.get_column("p_value").cast(pl.Float64).to_numpy()).sum()) if "p_value" in diffs.columns else 0
    ax.set_xlabel(f"{display_name(metric)}: method minus {display_name(baseline)}\n(simultaneous 95% intervals over scenarios, "
                  f"Bonferroni over {m} comparisons)")
    return ax


def performance_profile(profile: pl.DataFrame, group: str = "method", ax: Axes | None = None) -> Axes:
    """rliable's performance profile: per method, the share of tasks whose success rate exceeds tau, with its
    scenario-bootstrap band. ``profile`` is :func:`workbench.stats.performance_profile`.

    Parameters
    ----------
    profile : polars.DataFrame
        :func:`workbench.stats.performance_profile`.
    group : str, default "method"
        The column of the profiles.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax, (5.2, 3.4))
    names = profile.get_column(group).unique(maintain_order=True).to_list() if group in profile.columns else [None]
    for i, name in enumerate(names):
        sub = profile.filter(pl.col(group) == name) if name is not None else profile
        sub = sub.sort("tau")
        t = sub.get_column("tau").to_numpy()
        ax.step(t, sub.get_column("estimate").to_numpy(), where="post", color=f"C{i}", label=display_name(name))
        ax.fill_between(t, sub.get_column("ci_low").to_numpy(), sub.get_column("ci_high").to_numpy(), step="post",
                        color=f"C{i}", alpha=0.15, lw=0)
    ax.set_xlabel("tau (a task's success rate over its runs)")
    ax.set_ylabel("share of tasks with\nsuccess rate above tau")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=7, ncols=3, loc="lower center", bbox_to_anchor=(0.5, 1.0),
              title="bands: 95% intervals resampling scenarios (percentile)", title_fontsize=7)
    return ax


__all__ = ["forest", "performance_profile"]
