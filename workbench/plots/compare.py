"""Method comparison figures: a forest plot of every method against a baseline."""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.axes import Axes

from workbench.plots import _axes


def forest(diffs: pl.DataFrame, group: str | None = "budget", ax: Axes | None = None) -> Axes:
    """Each method minus the baseline, per group: the difference, its simultaneous interval, Holm's p in the label.

    ``diffs`` is :func:`workbench.compare.compare_to_baseline` (``a``, ``b``, ``estimate``,
    ``sim_low``, ``sim_high``, ``p_holm``, ``metric`` and the ``group`` column). The bars are the
    family's simultaneous intervals (Bonferroni), so a bar clear of 0 is a difference the adjusted
    test finds; the per-comparison intervals (``ci_low``/``ci_high``) would not be.
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
        labels.append(f"{r['a']}" + (f" @ {g}" if g is not None else "") + (f"  ({ptext})" if ptext else ""))
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_yticks(y, labels, fontsize=8)
    metric = rows[0]["metric"] if rows else ""
    baseline = rows[0]["b"] if rows else ""
    m = int(np.isfinite(diffs.get_column("p_value").cast(pl.Float64).to_numpy()).sum()) if "p_value" in diffs.columns else 0
    ax.set_xlabel(f"{metric}: method minus {baseline}\n(simultaneous 95% intervals over scenarios, "
                  f"Bonferroni over {m} comparisons)")
    return ax
