"""Tables for a paper: a booktabs ``.tex`` that fits an ``article`` column, beside a CSV that keeps every column.

A results frame holds what an analysis computed (``estimate, ci_low, ci_high, n, n_boot, level,
method``, raw p-values); a table in a write-up holds fewer columns under words, an interval under one header
(``0.71 [0.65, 0.77]``), p-values as ``<0.001``, methods, roles and fields by their display names
(:mod:`workbench.plots._names`), a ``\\label`` to refer to. Numbers are set in siunitx ``S`` columns, so they align
on the decimal point and a negative one prints a math minus (``-0.146`` beside ``+0.815``: the text hyphen is
narrower than a plus and broke the alignment); an interval is three such columns joined by its brackets. The
preamble the tables need is :data:`PACKAGES` (``booktabs,array,siunitx``). :func:`to_latex` then fits the result
to a text width (345pt, LaTeX's ``article`` at 10pt): at normal size if it fits, else ``\\small`` or
``\\footnotesize``, else with its widest text columns wrapped (``p{...}``, no narrower than :data:`MIN_WRAP`), else
split into stacked parts of one width (``tabular*`` at ``\\linewidth``) that repeat the leading label columns (a
text column too wide even beside them wraps).

Widths are estimated from the Computer Modern metrics matplotlib ships (``cmr10``, the font of a
default LaTeX document), scaled for the smaller sizes by the ratio of ``cmr9``/``cmr8`` digit widths
to ``cmr10``'s, plus ``\\tabcolsep`` (6pt) on each side of every column; a test pins the estimate
to pdfTeX's measured width of the same tabular.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import polars as pl

from workbench.plots._names import DISPLAYED_COLUMNS, display_name
from workbench._util.project import PROJECT_ROOT

TEXT_WIDTH = 345.0  # pt: \textwidth of LaTeX's article class at 10pt (letter and a4 paper alike)
#: pt: \textheight of LaTeX's article class at 10pt on letter paper (a float taller than it is "too large")
TEXT_HEIGHT = 550.0
#: pt: the baseline skip of a row at each size of :data:`SIZES` (article, 10pt)
ROW_HEIGHT = {"": 12.0, r"\small": 11.0, r"\footnotesize": 9.5}
TABCOLSEP = 6.0  # pt, each side of every column
#: (size command, width of text at that size relative to cmr10 at 10pt): Computer Modern's digit widths,
#: cmr10 5.00pt, cmr9 at 9pt 4.59pt, cmr8 at 8pt 4.25pt (the smaller designs are relatively wider)
SIZES: tuple[tuple[str, float], ...] = (("", 1.0), (r"\small", 0.918), (r"\footnotesize", 0.85))

#: Headers in words for the column names the workbench's analyses use; any other name has its
#: underscores turned into spaces and its first letter capitalised. ``rename=`` overrides both.
HEADERS: dict[str, str] = {
    "estimate": "Estimate", "ci_low": "CI low", "ci_high": "CI high", "n": "n", "n_boot": "Resamples",
    "level": "Level", "method": "Method", "n_clusters": "Scenarios", "clusters": "Scenarios",
    "p_value": "p", "p_holm": "p (Holm)", "p_bonferroni": "p (Bonferroni)", "gee_coef": "GEE coef.",
    "gee_p": "GEE p", "mcnemar_p": "McNemar p", "acc": "Acc", "acc_std": "Acc s.d.", "pass_hat_k": "Pass^k",
    "pass_at_k": "Pass@k", "n_tasks": "Tasks", "n_runs": "Runs", "k": "k", "steps": "Steps", "peak_k": "Peak (k)",
    "scenario_id": "Scenario", "task_id": "Task", "run_id": "Run", "judge": "Judge", "field": "Field",
    "section": "Section", "entries": "Entries", "share": "Share", "budget": "Budget", "metric": "Metric",
    "statistic": "Statistic", "subset": "Subset", "role": "Role", "schema": "Schema", "boundary": "Boundary",
    "a": "Method", "b": "Baseline", "tau": "tau", "precision": "Precision", "recall": "Recall",
    "n_pos": "Positives", "n_null": "No label", "n_degenerate": "Degenerate", "target": "Target",
    "value": "Value", "calibration": "Calibration", "unsupported": "Unsupported",
    "unsupported_share": "Unsupported share", "coverage": "Coverage", "width": "Width", "trials": "Trials",
}


def format_p(p: float | None) -> str:
    """A p-value as a paper prints it: ``<0.001`` below a thousandth, else three decimals; missing is ``--``."""
    if p is None or not math.isfinite(p):
        return "--"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def format_number(value: object) -> str:
    """Integers as they are; floats to three decimals, one above 100, none (thousands separated) above 1000;
    booleans in words (``yes``, ``no``), as a paper prints them."""
    if value is None:
        return "--"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, float):
        return str(value)
    if not math.isfinite(value):
        return "--"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:.1f}"
    return f"{value:.3f}"


def is_p_column(name: str) -> bool:
    """``p``, ``p_value``, ``p_holm``, ``gee_p``, ``mcnemar_p``...: a column of p-values."""
    return name == "p" or name.startswith("p_") or name.endswith("_p")


def header(name: str, rename: Mapping[str, str] | None = None) -> str:
    """The header in words of column ``name``."""
    if rename and name in rename:
        return rename[name]
    if name in HEADERS:
        return HEADERS[name]
    words = name.replace("_", " ")
    return words[:1].upper() + words[1:]


def tex_escape(value: object) -> str:
    """Text as LaTeX prints it literally: the ten special characters escaped, and ``<``, ``>`` and ``|``, which
    the default (OT1) font encoding of a plain ``article`` prints as other glyphs (``<0.001`` came out as
    ``¡0.001``)."""
    text = "" if value is None else str(value)
    out = []
    for ch in text:
        out.append({"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}.get(ch, ch))
    return "".join(out)


def tex_label(value: object) -> str:
    """A header or caption: :func:`tex_escape`, with a power written ``^k`` (Pass^k, Pass^2) set as a superscript
    (``Pass$^{k}$``, not the accent ``\\textasciicircum``). Cells of data are never read this way."""
    return re.sub(r"\\textasciicircum\{\}(\w+)", r"$^{\1}$", tex_escape(value))


@lru_cache(maxsize=1)
def _font() -> Any:
    import matplotlib
    from matplotlib import ft2font

    font = ft2font.FT2Font(os.path.join(matplotlib.get_data_path(), "fonts", "ttf", "cmr10.ttf"))
    font.set_size(10, 72)
    return font


@lru_cache(maxsize=4096)
def text_width(text: str) -> float:
    """Width in pt of ``text`` set in Computer Modern Roman at 10pt (kerning included, ligatures not)."""
    if not text:
        return 0.0
    font = _font()
    font.set_text(text)
    return font.get_width_height()[0] / 64.0


#: a number as a table prints it: an optional comparator and sign, digits, optional decimals (thousands separators
#: are taken out first: siunitx groups the digits itself)
_NUMBER = re.compile(r"(?P<cmp>[<>])?(?P<sign>[+-])?(?P<int>\d+)(?:\.(?P<dec>\d+))?")
_MISSING = "--"


_GROUPING = re.compile(r"(?<=\d),(?=\d{3}\b)")


def _ungrouped(text: str) -> str:
    """A number's text without its thousands separators (``15,008`` -> ``15008``): siunitx groups the digits."""
    return _GROUPING.sub("", text)


def _number(text: str) -> re.Match[str] | None:
    return _NUMBER.fullmatch(_ungrouped(text))


@dataclass(frozen=True)
class Column:
    """One printed column: its header and cells as they read (not yet escaped), whether numbers align right, and
    for a column of numbers (``kind`` ``number``) or intervals (``interval``: estimate and bounds; ``bounds``: an
    interval alone) the numbers of each cell, printed in siunitx ``S`` columns aligned on the decimal point.

    A column whose cells are not all numbers (a format that adds a percent sign) prints as text, right-aligned,
    with a math minus."""

    header: str
    cells: tuple[str, ...]
    numeric: bool
    kind: str = "text"
    pieces: tuple[tuple[str, ...], ...] = ()

    def width(self) -> float:
        """The widest cell or header in pt; in numbers a minus or comparator is as wide as a plus (all three are
        7.78pt in Computer Modern's math fonts, where the hyphen of the text is 3.33pt)."""
        if self.kind == "text":
            return max(text_width(t) for t in (self.header, *self.cells))
        return max([text_width(self.header), *(text_width(re.sub(r"[-<>]", "+", t)) for t in self.cells)])

    @cached_property
    def formats(self) -> list[str]:
        """siunitx's ``table-format`` of each number of a cell (one for a number, three or two for an interval):
        comparator, sign, integer and decimal digits as wide as the widest of the column. Worked out once per
        column (a row without an interval asks for it again)."""
        out = []
        for k in range({"number": 1, "interval": 3, "bounds": 2}.get(self.kind, 0)):  # a table of no rows too
            found = [m for m in (_number(p[k]) for p in self.pieces) if m is not None]
            cmp = "<" if any(m["cmp"] for m in found) else ""
            sign = "+" if any(m["sign"] for m in found) else ""
            digits = max((len(m["int"]) for m in found), default=1)
            decimals = max((len(m["dec"] or "") for m in found), default=0)
            out.append(f"{cmp}{sign}{digits}.{decimals}")
        return out


def _intervals(frame: pl.DataFrame, intervals: bool | Mapping[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """Estimate column -> (low, high) columns printed with it in one cell."""
    if intervals is False:
        return {}
    if intervals is not True:
        return {est: (lo, hi) for est, (lo, hi) in intervals.items()}
    found = {}
    cols = set(frame.columns)
    if {"estimate", "ci_low", "ci_high"} <= cols:
        found["estimate"] = ("ci_low", "ci_high")
    for c in frame.columns:
        if f"{c}_ci_low" in cols and f"{c}_ci_high" in cols:
            found[c] = (f"{c}_ci_low", f"{c}_ci_high")
    return found


def _level_text(frame: pl.DataFrame) -> str:
    if "level" in frame.columns:
        levels = frame.get_column("level").drop_nulls().unique().to_list()
        if len(levels) == 1:
            return f"{100 * float(levels[0]):g}% CI"
    return "CI"


def columns_for(frame: pl.DataFrame, *, columns: Sequence[str] | None = None, rename: Mapping[str, str] | None = None,
                formats: Mapping[str, str | Callable[[object], str]] | None = None,
                intervals: bool | Mapping[str, tuple[str, str]] = True) -> list[Column]:
    """The printed columns of ``frame``: ``columns`` (default all but the bookkeeping ``n_boot``, ``level`` and
    an interval's own ``method``, and a ``reason`` column no row fills), each interval merged into its estimate's
    cell, numbers formatted."""
    merged = _intervals(frame, intervals)
    hidden = {b for pair in merged.values() for b in pair}
    names = list(columns) if columns is not None else [
        c for c in frame.columns if c not in hidden and not (merged and c in ("n_boot", "level", "method", "ci_method"))
        and not (c == "reason" and frame.get_column(c).null_count() == frame.height)]  # a reason only when there is one
    missing = [c for c in names if c not in frame.columns]
    if missing:
        raise ValueError(f"export_table: no column(s) {missing}; the frame has {frame.columns}")
    formats = dict(formats or {})
    out = []
    for name in names:
        fmt = formats.get(name)
        if isinstance(fmt, str):
            spec = fmt
            fmt = lambda v, spec=spec: (  # noqa: E731 - missing, NaN and infinity print as "--", never "nan"
                "--" if v is None or isinstance(v, float) and not math.isfinite(v) else format(v, spec))
        cell = fmt or (format_p if is_p_column(name) else format_number)
        values = frame.get_column(name).to_list()
        numeric = frame.schema[name].is_numeric()
        if not numeric and name in DISPLAYED_COLUMNS and name not in formats:  # ids print as words
            values = [None if v is None else display_name(v) for v in values]
        cells = [cell(v) for v in values]
        title = header(name, rename)
        kind = "number" if numeric else "text"
        pieces: tuple[tuple[str, ...], ...] = tuple((c,) for c in cells) if numeric else ()
        if name in merged:
            lo, hi = ([cell(v) for v in frame.get_column(c).to_list()] for c in merged[name])
            alone = name == merged[name][0]  # keyed by its low bound: the interval alone
            pieces = tuple((a, b) if alone else (c, a, b) for c, a, b in zip(cells, lo, hi, strict=True))
            kind = "bounds" if alone else "interval"
            cells = [f"[{a}, {b}]" if alone else f"{c} [{a}, {b}]" for c, a, b in zip(cells, lo, hi, strict=True)]
            if not (rename and name in rename):
                title = f"{title} [{_level_text(frame)}]"
        if kind != "text" and any(p != _MISSING and _number(p) is None for piece in pieces for p in piece):
            kind, pieces = "text", ()  # a format that is not a plain number (12.5%): printed as it reads
        out.append(Column(title, tuple(cells), numeric or bool(pieces), kind, pieces))
    return out


def _total(cols: Sequence[Column], scale: float) -> float:
    return sum(c.width() * scale + 2 * TABCOLSEP for c in cols)




MIN_WRAP = 72.0  # pt: the narrowest a wrapped text column may get (about a dozen words a cell at \\footnotesize)


def _wrapped(cols: Sequence[Column], part: Sequence[int], scale: float, width: float) -> dict[int, float] | None:
    """Wrap widths that make ``part`` fit ``width`` by wrapping its widest text columns to one shared width
    (water-filling: text columns narrower than the share keep theirs), or None when the share would be
    under :data:`MIN_WRAP`."""
    fixed = sum(cols[i].width() * scale + 2 * TABCOLSEP for i in part if cols[i].numeric)
    text = sorted((i for i in part if not cols[i].numeric), key=lambda i: cols[i].width())
    room = width - fixed - 2 * TABCOLSEP * len(text)
    while text:
        share = room / len(text)
        if cols[text[0]].width() * scale > share:
            break
        room -= cols[text.pop(0)].width() * scale
    if not text:  # every text column keeps its width: the numbers alone are too wide
        return {} if room >= 0 else None
    share = room / len(text)
    return {i: share for i in text} if share >= MIN_WRAP else None


def _layout(cols: list[Column], width: float, n_keys: int | None = None) -> tuple[str, list[list[int]], dict[int, float]]:
    """(size command, column indices of each stacked part, wrap widths in pt for text columns that wrap)."""
    for size, scale in SIZES:
        if _total(cols, scale) <= width:
            return size, [list(range(len(cols)))], {}
    size, scale = SIZES[-1]
    whole = _wrapped(cols, range(len(cols)), scale, width)
    if whole is not None:
        return size, [list(range(len(cols)))], whole
    if n_keys is None:  # the first column, and the text columns right after it, label a row
        n_keys = 1 + next((i for i, c in enumerate(cols[1:]) if c.numeric), len(cols) - 1)
    keys = list(range(max(1, min(n_keys, len(cols) - 1))))
    wrap: dict[int, float] = {}
    if _total([cols[i] for i in keys], scale) > width / 2:  # the labels may take half the width, wrapped if need be
        fitted = _wrapped(cols, keys, scale, width / 2)
        if fitted is None:  # too many labels to wrap legibly: only the first is repeated
            keys = keys[:1]
            fitted = {0: width / 2 - 2 * TABCOLSEP} if not cols[0].numeric and \
                cols[0].width() * scale > width / 2 - 2 * TABCOLSEP else {}
        wrap.update(fitted)
    rest = [i for i in range(len(cols)) if i not in keys]
    key_width = sum(wrap.get(i, cols[i].width() * scale) + 2 * TABCOLSEP for i in keys)
    parts: list[list[int]] = []
    current: list[int] = []
    used = key_width
    for i in rest:
        w = cols[i].width() * scale + 2 * TABCOLSEP
        if current and used + w > width:
            parts.append(keys + current)
            current, used = [], key_width
        if key_width + w > width and not cols[i].numeric:  # one text column too wide beside the labels: it wraps
            wrap[i] = width - key_width - 2 * TABCOLSEP
            w = width - key_width
        current.append(i)
        used += w
    if current or not parts:
        parts.append(keys + current)
    return size, parts, wrap


def to_latex(frame: pl.DataFrame, caption: str = "", *, columns: Sequence[str] | None = None,
             rename: Mapping[str, str] | None = None, label: str | None = None,
             formats: Mapping[str, str | Callable[[object], str]] | None = None,
             intervals: bool | Mapping[str, tuple[str, str]] = True, keys: Sequence[str] | None = None,
             width: float = TEXT_WIDTH) -> str:
    """A booktabs ``table`` of ``frame`` that fits ``width`` pt (see the module docstring).

    ``columns`` picks and orders the printed columns; ``rename`` maps a column to its header;
    ``formats`` maps a column to a format spec (``".1%"``) or a function of the value; ``intervals``
    (default: found by name, ``estimate``/``ci_low``/``ci_high`` and ``X``/``X_ci_low``/``X_ci_high``)
    prints an estimate and its bounds in one cell, or maps an estimate column to its ``(low, high)``
    columns (a low column mapped to itself prints the interval alone); ``keys`` are the columns that label a
    row, printed first and repeated in every part of a split table (default: the first column and the text
    columns right after it); ``label`` is the ``\\label`` (nothing when ``None``). Text is escaped;
    p-value columns (``p``, ``p_*``, ``*_p``) print ``<0.001``.

    Parameters
    ----------
    frame : polars.DataFrame
        The table.
    caption : str, default ""
        Its caption.
    columns : sequence of str, optional
        The printed columns, in order.
    rename : mapping of str to str, optional
        Headers by column.
    label : str, optional
        The ``\\label``.
    formats : mapping of str to str or callable, optional
        Formats by column.
    intervals : bool or mapping of str to tuple of (str, str), default True
        Estimate columns printed with their interval.
    keys : sequence of str, optional
        The columns that label a row.
    width : float, default 345.0
        The width in pt the table must fit.

    Returns
    -------
    str
        The LaTeX.
    """
    if keys is not None:
        printed = list(columns) if columns is not None else [c for c in frame.columns if c not in keys]
        columns = [*keys, *(c for c in printed if c not in keys)]
    cols = columns_for(frame, columns=columns, rename=rename, formats=formats, intervals=intervals)
    size, parts, wrap = _layout(cols, width, None if keys is None else len(keys))
    n_rows = len(cols[0].cells) if cols else 0
    chunks = _row_chunks(n_rows, len(parts), size, caption)
    lines = [PREAMBLE_COMMENT]
    for c, (first, stop) in enumerate(chunks):
        lines += [r"\begin{table}[t]" if len(chunks) == 1 else r"\begin{table}[p]", r"\centering"]
        if size:
            lines.append(size)
        lines.append(SISETUP)
        if c == 0:  # a table taller than the page is several floats: the first captioned and labelled
            if caption:
                lines.append(rf"\caption{{{tex_label(caption)}}}")
            if label:
                lines.append(rf"\label{{{label}}}")
        else:  # (no numbered caption: one table, continued; article has no \caption*)
            where = rf"Table~\ref{{{label}}}" if label else "The table above"
            lines.append(rf"{where}, continued (rows {first + 1}--{stop} of {n_rows})\par\medskip")
        for p, part in enumerate(parts):
            if p:
                lines.append(r"\par\medskip")
            spec = "".join(_spec(cols[i], wrap.get(i), last=j == len(part) - 1, fill=len(parts) > 1)
                           for j, i in enumerate(part))
            opening = (rf"\begin{{tabular*}}{{\linewidth}}{{@{{\extracolsep{{\fill}}}}{spec}}}" if len(parts) > 1
                       else rf"\begin{{tabular}}{{{spec}}}")
            lines += [opening, r"\toprule", " & ".join(_header_cell(cols[i]) for i in part) + r" \\", r"\midrule"]
            for r in range(first, stop):
                lines.append(" & ".join(_cell(cols[i], r) for i in part) + r" \\")
            lines += [r"\bottomrule", r"\end{tabular*}" if len(parts) > 1 else r"\end{tabular}"]
        lines += [r"\end{table}", ""]
    return "\n".join(lines)


def _row_chunks(n_rows: int, n_parts: int, size: str, caption: str) -> list[tuple[int, int]]:
    """The rows of each float, (first, stop): one float when the table fits :data:`TEXT_HEIGHT`, else as few as
    hold every row, each at most the page's height. Estimated from the rows' baseline skip at the table's size
    (a wrapped cell may take more; a tenth of the page is kept free for that), each part's header (two lines at
    most) and rules, the caption (at most three lines) and the space between parts."""
    row = ROW_HEIGHT.get(size, 12.0)
    caption_height = (3 * 12.0 + 10.0) if caption else 0.0
    fixed = caption_height + n_parts * (3 * row + 8.0) + (n_parts - 1) * 6.0
    room = 0.9 * TEXT_HEIGHT - fixed
    per_float = max(1, int(room // (row * n_parts))) if room > row * n_parts else 1
    if n_rows <= per_float:
        return [(0, n_rows)]
    return [(k, min(k + per_float, n_rows)) for k in range(0, n_rows, per_float)]


#: the packages an exported table needs, said in its first line and in the README (one list for both)
PACKAGES = ("booktabs", "array", "siunitx")
PREAMBLE_COMMENT = (f"% table written by workbench.plots.export_table; the preamble needs \\usepackage{{{','.join(PACKAGES)}}}")
#: siunitx's settings for the table (local to it): thousands separated by commas from four digits (15,008), and the
#: sign a format asked for kept (+0.815 beside -0.146, as a difference prints)
SISETUP = r"\sisetup{group-separator={,}, group-minimum-digits=4, retain-explicit-plus}"


def _spec(col: Column, wrap: float | None, *, last: bool, fill: bool) -> str:
    """The column's preamble: text left (or wrapped), numbers in siunitx ``S`` columns; an interval is three ``S``
    columns (two for the interval alone, after an empty one) joined by its brackets, so every number aligns on its
    decimal point and prints a math minus."""
    if wrap is not None:
        return rf">{{\raggedright\arraybackslash}}p{{{wrap:.0f}pt}}"
    if col.kind == "text":
        return "r" if col.numeric else "l"
    numbers = [f"S[table-format={f}]" for f in col.formats]
    if col.kind == "number":
        return numbers[0]
    keep = r"\extracolsep{0pt}" if fill else ""  # no stretch inside an interval when the parts are stretched
    after = r"\hspace{\tabcolsep}" if last else r"\hspace{2\tabcolsep}" + (r"\extracolsep{\fill}" if fill else "")
    # an empty column after the closing bracket takes what a header wider than the numbers adds to its span (LaTeX
    # gives it all to a span's last column), so the numbers stay together and the space falls before the next column
    if col.kind == "interval":
        return rf"{numbers[0]}@{{{keep}\ [}}{numbers[1]}@{{,\ }}{numbers[2]}@{{]}}l@{{{after}}}"
    return rf"c@{{{keep}[}}{numbers[0]}@{{,\ }}{numbers[1]}@{{]}}l@{{{after}}}"


def _span(col: Column) -> int:
    return {"interval": 4, "bounds": 4}.get(col.kind, 1)


def _header_cell(col: Column) -> str:
    text = tex_label(col.header)
    if col.kind == "number":
        return f"{{{text}}}"  # text in an S column is braced
    return rf"\multicolumn{{{_span(col)}}}{{c}}{{{text}}}" if _span(col) > 1 else text


def _cell(col: Column, row: int) -> str:
    if col.kind == "text":
        text = tex_escape(col.cells[row])
        return re.sub(r"(?<![\w.])-(?=\d)", "$-$", text) if col.numeric else text  # a math minus
    numbers = [_ungrouped(p) if p != _MISSING else "{--}" for p in col.pieces[row]]
    if col.kind == "number":
        return numbers[0]
    if all(p == _MISSING for p in col.pieces[row][-2:]):  # no interval: the estimate alone, without brackets
        if col.kind == "bounds":
            return r"\multicolumn{4}{c}{--}"
        keep = r"\hphantom{\ [}"  # as wide as the bracket the other rows have there, so the estimates align
        return (rf"\multicolumn{{1}}{{S[table-format={col.formats[0]}]@{{{keep}}}}}{{{numbers[0]}}} & "
                r"\multicolumn{3}{l}{}")
    return " & ".join(([""] if col.kind == "bounds" else []) + numbers + [""])  # the span's empty columns


def export_table(frame: pl.DataFrame | pl.LazyFrame, name: str, directory: str | Path = PROJECT_ROOT / "figures" / "tables",
                 caption: str = "", *, columns: Sequence[str] | None = None, rename: Mapping[str, str] | None = None,
                 label: str | None = "", formats: Mapping[str, str | Callable[[object], str]] | None = None,
                 intervals: bool | Mapping[str, tuple[str, str]] = True, keys: Sequence[str] | None = None,
                 width: float = TEXT_WIDTH, max_rows: int | None = None) -> list[Path]:
    """Write ``name.csv`` (every column of ``frame``, as computed) and ``name.tex`` (:func:`to_latex`: chosen
    columns under words, fitted to ``width`` pt) under ``directory``; returns both paths. ``label`` defaults to
    ``tab:NAME``; ``None`` leaves it out. ``max_rows`` prints at most that many rows in the LaTeX table (a
    table with a row per compaction of a whole directory of sessions), its caption saying so; the CSV has them
    all. A ``LazyFrame`` (a scan of a table too large to hold) is streamed into the CSV, and only the rows the
    LaTeX prints are read into memory.

    Parameters
    ----------
    frame : polars.DataFrame or polars.LazyFrame
        The results.
    name : str
        The file name without its suffix.
    directory : str or pathlib.Path, default the project's figures/tables
        Where the files go.
    caption : str, default ""
        The caption.
    columns : sequence of str, optional
        The printed columns, in order.
    rename : mapping of str to str, optional
        Column to header.
    label : str, optional, default ""
        The label; ``tab:NAME`` when "", none when None.
    formats : mapping, optional
        Column to a format spec or a function of the value.
    intervals : bool or mapping, default True
        Estimates printed with their bounds.
    keys : sequence of str, optional
        Columns that label a row, repeated in every part of a split table.
    width : float, default 345.0
        The text width in pt.
    max_rows : int, optional
        At most this many rows in the LaTeX table.

    Returns
    -------
    list of pathlib.Path
        The CSV and the ``.tex``.

    Examples
    --------
    >>> import tempfile
    >>> import polars as pl
    >>> from workbench.plots import export_table
    >>> frame = pl.DataFrame({"method": ["fifo", "sjc"], "estimate": [0.61, 0.74], "ci_low": [0.52, 0.66], "ci_high": [0.70, 0.81]})
    >>> paths = export_table(frame, "acc", tempfile.mkdtemp(), "Accuracy per method.", label="tab:acc")
    >>> [p.suffix for p in paths]
    ['.csv', '.tex']
    """
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+", name):
        raise ValueError(f"export_table: name {name!r} is not a file name (letters, digits, _ . -)")
    from workbench._util.atomic import atomic_write
    from workbench.tables._frames import collected, height

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rows = height(frame)
    printed = frame
    if max_rows is not None and rows > max_rows:
        printed = frame.head(max_rows)
        caption = f"{caption} (the first {max_rows:,} of {rows:,} rows; every row in {name}.csv)".lstrip()
    tex = to_latex(collected(printed), caption, columns=columns, rename=rename, label=f"tab:{name}" if label == "" else label,
                   formats=formats, intervals=intervals, keys=keys, width=width)
    csv_path = directory / f"{name}.csv"
    tex_path = directory / f"{name}.tex"
    from workbench._util.spreadsheet import neutralised

    cells = neutralised(frame)  # a CSV people open: a text cell never starts a formula
    if isinstance(cells, pl.LazyFrame):
        atomic_write(csv_path, lambda tmp: cells.sink_csv(tmp, engine="streaming"))
    else:
        atomic_write(csv_path, cells.write_csv)
    atomic_write(tex_path, lambda tmp: tmp.write_text(tex, encoding="utf-8"))
    return [csv_path, tex_path]


__all__ = ["export_table", "to_latex"]
