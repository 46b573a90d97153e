"""Drawing: one function per figure, each taking precomputed results and an optional ``ax``, returning the Axes it
drew on (a figure of several panels: ``(fig, axes)``), as seaborn, pingouin and rliable do.

Nothing here computes beyond layout, and nothing changes matplotlib's global style on
import: call :func:`set_style` (notebooks do, once) and :func:`export` to write a
figure to ``figures/NAME.pdf`` (fonts embedded as TrueType, ``pdf.fonttype`` 42) and
``figures/NAME.png`` (200 dpi). :func:`export_table` (:mod:`workbench.plots.latex`) writes a table as a CSV
of every column and a booktabs ``.tex`` that fits an ``article`` column.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import matplotlib.pyplot as plt
import polars as pl
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from workbench.project import PROJECT_ROOT

#: where a figure goes when no directory is given: the project's gallery, whatever the working directory
FIGURES = PROJECT_ROOT / "figures"
STYLE: dict[str, Any] = {
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "figure.dpi": 100,
    "savefig.dpi": 200,
    "savefig.bbox": "tight",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "font.size": 10,
    "axes.titlesize": 11,
    "legend.frameon": False,
}


def set_style() -> None:
    """Apply the workbench's figure style (seaborn's paper context plus :data:`STYLE`)."""
    import seaborn as sns

    sns.set_theme(context="paper", style="whitegrid", palette="colorblind", font_scale=1.2)
    plt.rcParams.update(cast(Any, STYLE))


def export(fig: Figure | Axes | tuple[Figure, Any], name: str, directory: str | Path = FIGURES,
           formats: Sequence[str] = ("pdf", "png")) -> list[Path]:
    """Write a figure as ``directory/name.{pdf,png}`` with fonts embedded; returns the paths. ``fig`` is what a
    figure function returned: its Axes, or ``(fig, axes)`` for a figure of several panels, or a Figure."""
    if isinstance(fig, tuple):
        fig = fig[0]
    if isinstance(fig, Axes):
        fig = cast(Figure, fig.figure)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    with plt.rc_context({"pdf.fonttype": 42, "ps.fonttype": 42}):
        for ext in formats:
            path = directory / f"{name}.{ext}"
            fig.savefig(path, dpi=200, bbox_inches="tight")
            paths.append(path)
    return paths


def _axes(ax: Axes | None, figsize: tuple[float, float] = (5.0, 3.2)) -> tuple[Figure, Axes]:
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
        return fig, ax
    return ax.figure, ax  # type: ignore[return-value]


def entries_by_section(counts: pl.DataFrame, ax: Axes | None = None) -> Axes:
    """Bar chart of entries per section (columns ``section``, ``entries``), SJC Table 2's first column."""
    fig, ax = _axes(ax)
    ax.barh(counts.get_column("section").to_list()[::-1], counts.get_column("entries").to_list()[::-1], color="C0")
    ax.set_xlabel("entries")
    ax.set_title("Summary entries by section")
    return ax


from workbench.plots import calibration, compare, focus, human_labels, real_logs, sessions, sjc, trace  # noqa: E402,E501
from workbench.plots.latex import export_table, to_latex  # noqa: E402

__all__ = ["FIGURES", "STYLE", "calibration", "compare", "entries_by_section", "export", "export_table", "focus",
           "human_labels", "real_logs", "sessions", "set_style", "sjc", "to_latex", "trace"]
