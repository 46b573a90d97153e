"""Drawing: one function per figure, each taking precomputed results and an optional ``ax``, returning the Axes it
drew on (a figure of several panels: ``(fig, axes)``), as seaborn, pingouin and rliable do.

Nothing here computes beyond layout, and nothing changes matplotlib's global style on
import: call :func:`set_style` (notebooks do, once) and :func:`export` to write a
figure to ``figures/NAME.pdf`` (fonts embedded as TrueType, ``pdf.fonttype`` 42) and
``figures/NAME.png`` (200 dpi); :func:`use_style` for a figure that sits in an article. The figures themselves are
in the modules named after the analyses (``sjc``, ``focus``, ...); tables in ``_latex``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from workbench._util.project import PROJECT_ROOT

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


#: widths in pt of a standard 10pt ``article``: its text (one column) and a column of a two-column paper
PAPER_WIDTHS: dict[str, float] = {"text": 345.0, "column": 252.0}
#: the paper style's settings over the gallery's: Computer Modern (matplotlib's bundled cmr10 and mathtext's cm: no
#: TeX install at run time) at the body's 10pt, TrueType fonts embedded, the minus of the math font on the axes
PAPER: dict[str, Any] = {
    "font.family": "serif",
    "font.serif": ["cmr10"],
    "mathtext.fontset": "cm",
    "axes.formatter.use_mathtext": True,  # cmr10 has no minus sign: tick labels take mathtext's
    "axes.unicode_minus": True,
    "font.size": 10,
    "axes.titlesize": 10,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.title_fontsize": 9,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "savefig.dpi": 300,
    "figure.constrained_layout.use": True,
    "savefig.bbox": "standard",  # the width asked for, not the drawing's extent
}
#: the figure width of the style in use, in inches (None: each figure's own size, the gallery's)
_width: list[float | None] = [None]
#: the settings the paper style replaced, restored when the gallery's style is asked for again
_saved: list[dict[str, Any]] = []
STYLES = ("gallery", "paper")


def set_style() -> None:
    """Apply the gallery's figure style (seaborn's paper context plus :data:`STYLE`): ``use_style("gallery")``."""
    use_style("gallery")


def use_style(name: str = "gallery", *, width: str | float = "text") -> None:
    """Apply a figure style to every figure drawn after it.

    Parameters
    ----------
    name : {"gallery", "paper"}, default "gallery"
        ``gallery``: the look of ``figures/`` (seaborn's paper context, sans-serif). ``paper``: a figure that sits
        in a LaTeX article: Computer Modern serif at the body's 10pt (``PAPER``), sized to ``width``.
    width : {"text", "column"} or float, default "text"
        The paper style's figure width: the article's text width (345pt), a column of a two-column paper (252pt),
        or a width in pt; each figure keeps its own aspect ratio.
    """
    import matplotlib.colors as mcolors
    from matplotlib.rcsetup import cycler

    from workbench.plots import _theme

    if name not in STYLES:
        raise ValueError(f"use_style: expected one of {list(STYLES)}, got {name!r}")
    if isinstance(width, str) and width not in PAPER_WIDTHS:
        raise ValueError(f"use_style: width expected one of {list(PAPER_WIDTHS)} or a number of pt, got {width!r}")
    rc = cast(Any, plt.rcParams)
    if _saved:  # back from the paper style: what it changed, as it was
        rc.update(_saved.pop())
    # seaborn's theme (paper context, white grid, colourblind palette, fonts at 1.2), as tools/seaborn_theme.py wrote
    # it from seaborn: importing seaborn (scipy.stats, pandas) was 1.7 of a notebook setup cell's 2.0 s (issue 82)
    rc.update(_theme.RC)
    rc["axes.prop_cycle"] = cycler(color=_theme.COLORS)
    for code, rgb in _theme.CODES.items():  # seaborn's color codes ("k" a dark grey, as matplotlib's bars use it)
        mcolors.get_named_colors_mapping()[code] = rgb
    plt.rcParams.update(cast(Any, STYLE))
    _width[0] = None
    if name == "paper":
        points = PAPER_WIDTHS[width] if isinstance(width, str) else float(width)
        _saved.append({key: rc[key] for key in (*PAPER, "figure.figsize")})
        rc.update(PAPER)
        inches = points / 72.27  # TeX points per inch
        _width[0] = inches
        rc["figure.figsize"] = (inches, inches * 0.62)


def figure_size(figsize: tuple[float, float]) -> tuple[float, float]:
    """A figure function's own size, or under the paper style the style's width at the same aspect ratio.

    Parameters
    ----------
    figsize : tuple of float
        The figure's (width, height) in inches in the gallery.

    Returns
    -------
    tuple of float
        The (width, height) to draw at.
    """
    width = _width[0]
    return figsize if width is None else (width, figsize[1] * width / figsize[0])


def export(fig: Figure | Axes | tuple[Figure, Any], name: str, directory: str | Path = FIGURES,
           formats: Sequence[str] = ("pdf", "png")) -> list[Path]:
    """Write a figure as ``directory/name.{pdf,png}`` with fonts embedded; returns the paths. ``fig`` is what a
    figure function returned: its Axes, or ``(fig, axes)`` for a figure of several panels, or a Figure.

    Parameters
    ----------
    fig : Figure, Axes or (Figure, axes)
        What a figure function returned.
    name : str
        The file name without its suffix.
    directory : str or pathlib.Path, default the project's figures/
        Where the files go.
    formats : sequence of str, default ("pdf", "png")
        The formats written.

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    if isinstance(fig, tuple):
        fig = fig[0]
    if isinstance(fig, Axes):
        fig = cast(Figure, fig.figure)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    # the gallery crops to what is drawn; the paper style keeps the width it was asked for (345pt or 252pt), its
    # constrained layout keeping the labels inside, so the figure sits in the article at its natural size
    paper = _width[0] is not None
    if paper:
        _paper_text(fig)
    with plt.rc_context({"pdf.fonttype": 42, "ps.fonttype": 42}):
        for ext in formats:
            path = directory / f"{name}.{ext}"
            fig.savefig(path, dpi=300 if paper else 200, bbox_inches=None if paper else "tight")
            paths.append(path)
    return paths


#: characters cmr10 (TeX's OT1 layout) draws as other glyphs (``<`` as ``¡``, ``|`` as an em dash), each set in
#: mathtext's Computer Modern instead
_OT1 = {"<": "$<$", ">": "$>$", "|": "$|$", "_": r"$\_$", "{": r"$\{$", "}": r"$\}$"}


def _paper_text(fig: Figure) -> None:
    """The paper style's text fixes before saving: labels longer than the article's width wrap instead of running off
    the page, and the characters cmr10 does not have as themselves come from the math font (text already holding
    mathtext is left as it is)."""
    from matplotlib.text import Text

    from matplotlib.ticker import FixedFormatter, FixedLocator

    def fixed(value: str) -> str:
        if not value or "$" in value or not any(ch in value for ch in _OT1):
            return value
        return "".join(_OT1.get(ch, ch) for ch in value)

    for ax in fig.axes:
        for label in (ax.xaxis.label, ax.yaxis.label, ax.title):
            label.set_wrap(True)
        for axis in (ax.xaxis, ax.yaxis):  # tick labels are made again from the formatter when drawn
            locator = axis.get_major_locator()
            if isinstance(locator, FixedLocator):  # labels given with the ticks (set_yticks(y, labels))
                labels = axis.get_major_formatter().format_ticks(list(locator()))
                if any(fixed(label) != label for label in labels):
                    axis.set_major_formatter(FixedFormatter([fixed(label) for label in labels]))
    for text in fig.findobj(Text):
        text.set_text(fixed(text.get_text()))


def _axes(ax: Axes | None, figsize: tuple[float, float] = (5.0, 3.2)) -> tuple[Figure, Axes]:
    if ax is None:
        fig, ax = plt.subplots(figsize=figure_size(figsize))
        return fig, ax
    return ax.figure, ax  # type: ignore[return-value]


__all__ = ["export", "figure_size", "set_style", "STYLE", "STYLES", "use_style"]
