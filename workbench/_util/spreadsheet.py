"""CSV files that people open in a spreadsheet: a text cell that starts like a formula is written with a leading
apostrophe, as OWASP's guidance on CSV injection recommends, so that Excel, LibreOffice and Google Sheets show it as
text instead of running it (a run id ``=HYPERLINK(...)`` from a log, a method name, an entry's text).

The characters that start a formula: ``=``, ``+``, ``-``, ``@``, tab and carriage return. Only text cells change
(numbers stay numbers); the explorer's own "download CSV" applies the same rule in the page."""

from __future__ import annotations

from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:
    import polars as pl

#: what a text cell may not start with, unescaped, in a CSV written for people
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@overload
def neutralised(frame: pl.DataFrame) -> pl.DataFrame: ...
@overload
def neutralised(frame: pl.LazyFrame) -> pl.LazyFrame: ...
@overload
def neutralised(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame | pl.LazyFrame: ...


def neutralised(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame | pl.LazyFrame:
    """``frame`` (eager or lazy) with every text cell that starts with one of :data:`FORMULA_START` prefixed by
    ``'``."""
    import polars as pl

    pattern = "^[" + "".join("\\-" if c == "-" else c for c in FORMULA_START) + "]"
    text = [name for name, dtype in frame.collect_schema().items() if dtype == pl.Utf8]
    return frame.with_columns(pl.when(pl.col(name).str.contains(pattern)).then("'" + pl.col(name))
                              .otherwise(pl.col(name)).alias(name) for name in text)


__all__ = ["FORMULA_START", "neutralised"]
