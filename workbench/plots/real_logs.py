"""Figures of the real logs: tau-bench reliability, FIFO replay, the Claude compaction summaries' fact check."""

from __future__ import annotations

from typing import cast

import numpy as np
import polars as pl
from matplotlib.axes import Axes

from workbench.plots._style import _axes


def pass_k_curves(passk: pl.DataFrame, source: str | None = None, ax: Axes | None = None) -> Axes:
    """Pass^k and Pass@k against the number of trials k (columns ``k``, ``n_tasks``, ``pass_hat_k``, ``pass_at_k``).

    The title says how many tasks the curve rests on and, with ``source``, which file (the
    committed 5-task fixture or the full log).

    Parameters
    ----------
    passk : polars.DataFrame
        :func:`workbench.stats.reliability_by_k`.
    source : str, optional
        The file the curve comes from, named in the title.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax, (5.0, 3.2))
    n_tasks = int(cast(int, passk.get_column("n_tasks").max() or 0)) if "n_tasks" in passk.columns else None
    if n_tasks is not None:
        ax.set_title(f"{n_tasks} tasks" + (f" ({source})" if source else ""), fontsize=9)
    ax.plot(passk["k"], passk["pass_hat_k"], "o-", label="Pass^k (all k trials succeed)")
    ax.plot(passk["k"], passk["pass_at_k"], "s--", label="Pass@k (some trial succeeds)")
    ax.set_xlabel("k (trials)")
    ax.set_ylabel("share of tasks")
    ax.set_xticks(passk["k"].to_list())
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    return ax


def fifo_out_of_window(by_budget: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """Identifier references after a boundary, stacked by whether FIFO still holds their source.

    Columns ``budget``, ``id_refs_after_boundary`` and ``out_of_window`` (the FIFO replay's
    per-budget sums).

    Parameters
    ----------
    by_budget : polars.DataFrame
        The FIFO replay's sums per budget (:func:`workbench.analyses.replay_by_budget`).
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax, (5.5, 3.2))
    labels = [str(b) for b in by_budget["budget"]]
    lost = by_budget["out_of_window"].to_numpy()
    kept = by_budget["id_refs_after_boundary"].to_numpy() - lost
    ax.bar(labels, lost, color="C3", label="source no longer in the window")
    ax.bar(labels, kept, bottom=lost, color="C0", label="source still in the window")
    ax.set_xlabel("budget (o200k tokens)")
    ax.set_ylabel("identifier references after a boundary")
    ax.legend(fontsize=8)
    return ax


def claude_fact_check(checks: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """Per Claude summary: identifiers with a source, members named by host, members recalled (1 - FNR).

    ``checks`` is :func:`workbench.adapters.check_table`'s frame.

    Parameters
    ----------
    checks : polars.DataFrame
        :func:`workbench.adapters.check_table`.
    ax : matplotlib.axes.Axes, optional
        The Axes to draw on; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on.
    """
    fig, ax = _axes(ax, (6.5, 3.2))
    x = np.arange(checks.height)
    w = 0.25
    ax.bar(x - w, checks["sourced_share"], w, label="summary ids with a source", color="C0")
    ax.bar(x, checks["members_held_by_host"], w, label="queried members named (host)", color="C2")
    ax.bar(x + w, checks["recall_after_compaction"], w, label="members recalled (1 - FNR)", color="C3")
    ax.set_xticks(x, [f"seed {s}" for s in checks["seed"]])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return ax


__all__ = ["claude_fact_check", "fifo_out_of_window", "pass_k_curves"]
