"""Validation: the one path every reader takes from a file or a frame to a declared table.

:func:`validate` casts a frame to the declared dtypes (:mod:`workbench.tables._schema`) and checks keys, ranges, allowed
values and label fields; :func:`check_record` does the same for one record of a line-by-line reader. Both fail
with a :class:`~workbench.errors.SchemaError` that names the file, the line (or row), the field, what was
expected and what was found; :func:`describe_value` says what was found in words.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

import polars as pl

from workbench.errors import describe_value
from workbench.tables._schema import Column, SchemaError, Table, table
from workbench.tables._vocabulary import LABEL_VALUES, OPEN_LABEL_FIELDS

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def describe_dtypes(dtype: pl.DataType) -> str:
    """A dtype in the plural, as in "a column of strings"."""
    names = {pl.Utf8: "strings", pl.Int64: "integers", pl.Float64: "numbers", pl.Boolean: "booleans"}
    return next((v for k, v in names.items() if dtype == k), "lists" if isinstance(dtype, pl.List) else str(dtype))


def describe_dtype(dtype: pl.DataType) -> str:
    if dtype == pl.Utf8:
        return "a string"
    if dtype == pl.Int64:
        return "an integer"
    if dtype == pl.Float64:
        return "a number"
    if dtype == pl.Boolean:
        return "true or false"
    if isinstance(dtype, pl.List):
        return f"a list of {describe_dtype(dtype.inner)[2:]}s"  # type: ignore[arg-type]
    return str(dtype)


def value_fits(dtype: pl.DataType, value: object) -> bool:
    """Whether a JSON value can be stored in a column of ``dtype`` without loss (integers within 64 bits)."""
    if dtype == pl.Utf8:
        return isinstance(value, str)
    if dtype == pl.Int64:
        return isinstance(value, int) and not isinstance(value, bool) and INT64_MIN <= value <= INT64_MAX
    if dtype == pl.Float64:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        try:
            return math.isfinite(float(value))
        except OverflowError:
            return False
    if dtype == pl.Boolean:
        return isinstance(value, bool)
    if isinstance(dtype, pl.List):
        return isinstance(value, list) and all(value_fits(dtype.inner, v) for v in value)  # type: ignore[arg-type]
    return True


def check_record(
    tbl: Table, record: dict[str, object], *, prefix: str = "", skip: Sequence[str] = ()
) -> None:
    """Check one record (a JSON object) against a table's declared columns.

    Raises :class:`~workbench.errors.SchemaError` without a file or line (the caller adds them).

    Parameters
    ----------
    tbl : Table
        The table's declaration.
    record : dict of str to object
        The record.
    prefix : str, default ""
        Put before a field's name in an error (a nested record's path).
    skip : sequence of str, default ()
        Columns not checked.
    """
    for col in tbl.columns:
        if col.name in skip:
            continue
        name = prefix + col.name
        if col.name not in record:
            if col.required:
                raise SchemaError(field=name, expected=describe_dtype(col.dtype), got="nothing (missing)")
            continue
        value = record[col.name]
        if value is None:
            if not col.nullable:
                raise SchemaError(field=name, expected=describe_dtype(col.dtype), got="null")
            continue
        if not value_fits(col.dtype, value):
            too_big = col.dtype == pl.Int64 and isinstance(value, int) and not isinstance(value, bool)
            raise SchemaError(field=name, expected="an integer within 64 bits" if too_big else describe_dtype(col.dtype),
                              got=describe_value(value))
        if col.values is not None and value not in col.values:
            raise SchemaError(field=name, expected=f"one of {list(col.values)}", got=describe_value(value))
        if col.minimum is not None and value < col.minimum:  # type: ignore[operator]
            raise SchemaError(field=name, expected=_range_text(col), got=describe_value(value))
        if col.maximum is not None and value > col.maximum:  # type: ignore[operator]
            raise SchemaError(field=name, expected=_range_text(col), got=describe_value(value))
        if col.timestamp and not is_timestamp(value):
            raise SchemaError(field=name, expected="an ISO-8601 timestamp (2026-11-30T12:00:00+00:00)",
                              got=describe_value(value))
    if tbl.name == "labels":
        check_label(record.get("field"), record.get("value"), prefix)


def _range_text(col: Column) -> str:
    if col.minimum is not None and col.maximum is not None:
        return f"a number in [{col.minimum:g}, {col.maximum:g}]"
    if col.minimum == 0:
        return f"a non-negative {'integer' if col.dtype == pl.Int64 else 'number'}"
    return f"a number >= {col.minimum:g}" if col.minimum is not None else f"a number <= {col.maximum:g}"


def is_timestamp(value: object) -> bool:
    """An ISO-8601 date-time (``datetime.fromisoformat``), such as the store writes. (``datetime`` is imported with
    the module: an import statement in here was three quarters of checking 568,236 stamps, 0.72 s against 0.17 s.)"""
    if not isinstance(value, str) or len(value) < 10:
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def check_label(field_name: object, value: object, prefix: str = "") -> None:
    """A label's ``field`` is declared and its ``value`` is one of that field's (``LABEL_VALUES``); null is a skip."""
    if field_name not in LABEL_VALUES:
        raise SchemaError(field=prefix + "field", expected=f"one of {list(LABEL_VALUES)}",
                          got=describe_value(field_name))
    allowed = LABEL_VALUES[str(field_name)]
    if str(field_name) in OPEN_LABEL_FIELDS:  # any text (a failure label's agent, step, reason)
        if value is not None and not isinstance(value, str):
            raise SchemaError(field=prefix + "value", expected=f"for field '{field_name}' text",
                              got=describe_value(value))
        return
    if value is not None and value not in allowed:
        raise SchemaError(field=prefix + "value", expected=f"for field '{field_name}' one of {list(allowed)}",
                          got=describe_value(value))


def _where(line: str) -> str:
    """``line 12`` for a line number, ``row 12`` as it is."""
    return line if line.startswith("row") else f"line {line}"


def _line_of(lines: Sequence[int | str] | None, row: int) -> str:
    if lines is None:
        return f"row {row + 1}"
    return str(lines[row])


def validate(
    table_name: str,
    frame: pl.DataFrame,
    *,
    file: str | None = None,
    lines: Sequence[int | str] | None = None,
    partial: bool = False,
) -> pl.DataFrame:
    """Check ``frame`` against the declaration of ``table_name`` and return it cast.

    Declared columns come first, in declared order, cast to their dtypes (an optional
    column the frame lacks is added as nulls, except ground-truth ``gt_`` columns);
    columns the table does not declare follow unchanged, in name order. ``lines`` maps row i to
    the line of the source file it came from (JSONL), or its name (``row 5001`` of a file read in batches);
    without it errors name ``row i+1``.
    With ``partial`` the frame is a selection of the table's columns: the columns it has are checked
    as above, and a declared column it lacks is neither an error nor added.

    Raises :class:`~workbench.errors.SchemaError` on a missing required column, a value of the wrong
    type, a null where none is allowed, a value outside a closed set, or a duplicate key.

    Parameters
    ----------
    table_name : str
        A declared table (:data:`TABLES`).
    frame : polars.DataFrame
        The rows to check.
    file : str, optional
        The file the rows came from, named in errors.
    lines : sequence of int or str, optional
        The source line (or name) of each row.
    partial : bool, default False
        The frame holds a selection of the table's columns.

    Returns
    -------
    polars.DataFrame
        The frame with its declared columns first, cast.

    Examples
    --------
    >>> import polars as pl
    >>> from workbench.tables import validate
    >>> from workbench.errors import SchemaError
    >>> runs = pl.DataFrame({"run_id": ["r1"], "task": ["pay the invoices"], "success": ["yes"]})
    >>> try:
    ...     validate("runs", runs)
    ... except SchemaError as err:
    ...     print(err)
    ...
    line 1: field 'task_id': expected a column of strings in table 'runs', got no such column
    """
    tbl = table(table_name)
    present = set(frame.columns)
    for col in tbl.columns:
        if col.required and col.name not in present and not partial:
            raise SchemaError(
                file=file, line=1 if lines is None else lines[0] if len(lines) else 1,
                field=col.name, expected=f"a column of {describe_dtypes(col.dtype)} in table '{tbl.name}'",
                got="no such column",
            )
    out: list[pl.Series] = []
    ruled: list[tuple[Column, pl.Series]] = []  # columns whose values have rules, checked together (_check_rules)
    try:
        for col in tbl.columns:
            if col.name not in present:
                # every declared column is there: null where a log has nothing
                if not col.is_ground_truth and not partial:
                    out.append(pl.Series(col.name, [None] * frame.height, dtype=col.dtype))
                continue
            series = frame.get_column(col.name)
            if series.dtype != col.dtype:
                series = _cast_column(series, col, file=file, lines=lines)
            if not col.nullable and series.null_count():
                row = int(series.is_null().arg_max())  # type: ignore[arg-type]
                raise SchemaError(
                    file=file, line=_line_of(lines, row), field=col.name,
                    expected=describe_dtype(col.dtype), got="null",
                )
            if col.values is not None or col.minimum is not None or col.maximum is not None or col.timestamp:
                ruled.append((col, series))
            out.append(series)
    except SchemaError:
        _check_rules(ruled, file=file, lines=lines)  # an earlier column's value error is the first error
        raise
    _check_rules(ruled, file=file, lines=lines)
    # undeclared columns in name order: one order whatever wrote the frame (an export that drops nulls
    # cannot reproduce the order a log first showed them in)
    extra = [frame.get_column(c) for c in sorted(frame.columns) if c not in set(tbl.names)]
    result = pl.DataFrame(out + extra) if (out or extra) else pl.DataFrame()
    if tbl.name == "labels" and result.height:
        for row, (field_name, value) in enumerate(result.select("field", "value").iter_rows()):
            try:
                check_label(field_name, value)
            except SchemaError as err:
                raise err.located(file, _line_of(lines, row)) from None
    key = tbl.key_in(result.columns)  # without partial, every required key column is there (checked above)
    if key and result.height:
        dup = result.select(key).is_duplicated()
        if dup.any():
            rows = [i for i, d in enumerate(dup.to_list()) if d]
            first = result.row(rows[0], named=True)
            key_text = ", ".join(f"{k}={first[k]!r}" for k in key)
            twin = next(r for r in rows[1:] if all(result.row(r, named=True)[k] == first[k] for k in key))
            raise SchemaError(
                file=file, line=_line_of(lines, twin), field=",".join(key),
                expected=f"a unique key in table '{tbl.name}'",
                got=f"duplicate ({key_text}) first seen at {_where(_line_of(lines, rows[0]))}",
            )
    return result


def _check_rules(ruled: Sequence[tuple[Column, pl.Series]], *, file: str | None,
                 lines: Sequence[int | str] | None) -> None:
    """The value rules of the columns in ``ruled`` (:func:`_value_rules`; a timestamp's, :func:`_check_timestamp`),
    all in one polars query; a column that breaks one is read again for the error naming its first bad row. One
    query, not a few calls a column: a whole chunk of 2,000 runs of an import (20 ranged columns) is validated in
    1.4-2.0 ms, where it took 7.3-7.8 ms (50,000 steps: 3.8-5.4 ms, was 9-12)."""
    rules = {k: _value_rules(col, f"_{k}", series.dtype) for k, (col, series) in enumerate(ruled)}
    broken: dict[str, bool] = {}
    if any(rules.values()):
        data = pl.DataFrame([ruled[k][1].alias(f"_{k}") for k in rules if rules[k]])
        broken = data.select([pl.any_horizontal([bad for bad, _ in rules[k]]).any().alias(f"_{k}")
                              for k in rules if rules[k]]).row(0, named=True)
    for k, (col, series) in enumerate(ruled):
        if broken.get(f"_{k}"):
            frame = series.to_frame(f"_{k}")
            for bad, expected in rules[k]:  # the first rule broken, at its first row
                row = frame.select(bad.arg_true().first()).item()
                if row is not None:
                    raise SchemaError(file=file, line=_line_of(lines, row), field=col.name, expected=expected,
                                      got=describe_value(series[row]))
        if col.timestamp and col.minimum is None and col.maximum is None:
            _check_timestamp(series, col, file=file, lines=lines)


def _value_rules(col: Column, name: str, dtype: pl.DataType) -> list[tuple[pl.Expr, str]]:
    """The value rules of ``col`` (read as the column ``name`` of dtype ``dtype``), in the order they are said: its
    closed set of values, then its minimum and maximum (NaN is out of range); each as (the rows that break it, what
    was expected)."""
    rules = []
    if col.values is not None:
        rules.append((pl.col(name).is_not_null() & ~pl.col(name).is_in(list(col.values)),
                      f"one of {list(col.values)}"))
    if col.minimum is not None or col.maximum is not None:
        values = pl.col(name).cast(pl.Float64)
        bad = values.is_nan().fill_null(False) if dtype.is_float() else pl.lit(False)
        if col.minimum is not None:
            bad = bad | (values < col.minimum).fill_null(False)
        if col.maximum is not None:
            bad = bad | (values > col.maximum).fill_null(False)
        rules.append((bad, _range_text(col)))
    return rules


def _check_timestamp(series: pl.Series, col: Column, *, file: str | None,
                     lines: Sequence[int | str] | None) -> None:
    """An ISO-8601 timestamp column (``is_timestamp``, a Python rule): an error naming the first bad row."""
    bad = series.map_elements(lambda v: not is_timestamp(v), return_dtype=pl.Boolean, skip_nulls=True).fill_null(False)
    if bad.any():
        row = int(bad.arg_max())  # type: ignore[arg-type]
        raise SchemaError(file=file, line=_line_of(lines, row), field=col.name,
                          expected="an ISO-8601 timestamp (2026-11-30T12:00:00+00:00)", got=describe_value(series[row]))


def _cast_column(
    series: pl.Series, col: Column, *, file: str | None, lines: Sequence[int | str] | None
) -> pl.Series:
    if series.dtype == pl.Null:
        return series.cast(col.dtype)
    ok_int_to_float = col.dtype == pl.Float64 and series.dtype.is_integer()
    ok_small_int = col.dtype == pl.Int64 and series.dtype.is_integer()
    ok_utf8 = col.dtype == pl.Utf8 and series.dtype in (pl.Categorical, pl.Enum, pl.String)
    ok_list = isinstance(col.dtype, pl.List) and isinstance(series.dtype, pl.List)
    if ok_int_to_float or ok_small_int or ok_utf8 or ok_list:
        try:
            return series.cast(col.dtype, strict=True)
        except Exception:  # noqa: BLE001 - reported below with the offending row
            pass
    # Anything else is a type error: name the first non-null row.
    row = int(series.is_not_null().arg_max()) if series.null_count() < len(series) else 0  # type: ignore[arg-type]
    raise SchemaError(
        file=file, line=_line_of(lines, row), field=col.name,
        expected=describe_dtype(col.dtype), got=f"{describe_value(series[row])} (column of {series.dtype})",
    )


__all__ = ["check_record", "validate"]
