"""The workbench's errors and what a reader reports, in a module of its own that imports nothing heavy: the command
line names them before it loads any table (``workbench --help`` imports no polars).

:class:`SchemaError` is bad input (file, line, field, what was expected); :class:`SelectionError` a selection no data
has; :class:`OutputRefused` an output path a command will not write; :class:`BadLines` what a session reader skipped
instead of failing."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

__all__ = ["BadLines", "describe_value", "OutputRefused", "SchemaError", "SelectionError"]



class SchemaError(ValueError):
    """Bad input: where it is (file, line), which field, what was expected and what came.

    ``str(error)`` is one line: ``FILE:LINE: field 'x': expected ..., got ...``.
    """

    def __init__(
        self,
        message: str | None = None,
        *,
        file: str | None = None,
        line: int | str | None = None,
        field: str | None = None,
        expected: str | None = None,
        got: str | None = None,
    ) -> None:
        self.file = file
        self.line = line
        self.field = field
        self.expected = expected
        self.got = got
        self.detail = message
        super().__init__(self._format())

    def _format(self) -> str:
        where = self.file or ""
        if self.line is not None and where:
            where += f":{self.line}"
        elif self.line is not None:
            where = f"line {self.line}" if str(self.line).isdigit() else str(self.line)
        parts = [where] if where else []
        if self.field is not None:
            parts.append(f"option {self.field}" if self.field.startswith("-") else f"field '{self.field}'")
        what = ""
        if self.expected is not None:
            what = f"expected {self.expected}"
            if self.got is not None:
                what += f", got {self.got}"
        elif self.detail is not None:
            what = self.detail
        if what:
            parts.append(what)
        return ": ".join(parts)

    def __reduce__(self) -> tuple[object, tuple[object, ...], dict[str, object]]:
        """Pickled with its fields (an error raised in a worker process is raised again in the parent)."""
        return (_schema_error, (self.detail, self.file, self.line, self.field, self.expected, self.got),
                self.__dict__)

    def located(self, file: str | None = None, line: int | str | None = None) -> SchemaError:
        """The same error with a file and line filled in where they were unknown."""
        return SchemaError(
            self.detail,
            file=self.file or file,
            line=self.line if self.line is not None else line,
            field=self.field,
            expected=self.expected,
            got=self.got,
        )


def _schema_error(message: str | None, file: str | None, line: int | str | None, field: str | None,
                  expected: str | None, got: str | None) -> SchemaError:
    return SchemaError(message, file=file, line=line, field=field, expected=expected, got=got)


class SelectionError(ValueError):
    """A selection the data does not have (a method, budget or run no row has; ids that are not entries): ``what``
    was asked (``method``, ``budget``, ``runs``, ``ids``), what was ``expected`` and what came (``got``). The library
    names the thing; the command line names its option."""

    def __init__(self, what: str, expected: str, got: str) -> None:
        self.what, self.expected, self.got = what, expected, got
        super().__init__(f"{what}: expected {expected}, got {got}")


def describe_value(value: object) -> str:
    """A short description of a JSON value for an error message.

    Parameters
    ----------
    value : object
        The value.

    Returns
    -------
    str
        Its type and value (a long string cut to 40 characters).
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"string {shown!r}"
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class OutputRefused(Exception):
    """An output path a command will not write: it names something the command did not make, or an input."""

    def __init__(self, path: str | os.PathLike[str], why: str) -> None:
        self.path, self.why = str(path), why
        super().__init__(f"{path}: {why}")


@dataclass
class BadLines:
    """What a session reader skipped instead of failing: a file's truncated last line (a session still being
    written: always, with a warning), and with ``skip_invalid`` every other bad line, each ``(file, line,
    reason)``."""

    skip_invalid: bool = False
    truncated: list[tuple[str, int, str]] = field(default_factory=list)
    skipped: list[tuple[str, int, str]] = field(default_factory=list)
    #: files and directories that could not be read, each ``(path, reason)``, once (with ``skip_invalid``)
    unreadable: list[tuple[str, str]] = field(default_factory=list)

    def skip_or_raise(self, err: SchemaError, file: str, line: int) -> None:
        """A bad line: ``err`` raised, located at ``file:line``, unless ``skip_invalid``; then counted as skipped.

        Parameters
        ----------
        err : SchemaError
            What is wrong with the line.
        file : str
            The file it is in.
        line : int
            Its line number.
        """
        if not self.skip_invalid:
            raise err.located(file, line) from None
        self.skipped.append((file, line, str(err)))

    def cannot_read(self, path: str, reason: str) -> None:
        """Count ``path`` as unreadable (once however often it is met)."""
        if (path, reason) not in self.unreadable:
            self.unreadable.append((path, reason))

    def summary(self, first: int = 5) -> str | None:
        """One line with the count of skipped files and lines and the first few locations (None when nothing
        was skipped)."""
        def listed(what: str, count: int, places: list[str]) -> str:
            more = f" (and {count - first} more)" if count > first else ""
            return f"skipped {count} {what} (--skip-invalid): {'; '.join(places)}{more}"

        parts = []
        if self.unreadable:
            parts.append(listed("unreadable file(s) or directories", len(self.unreadable),
                                [f"{f}: {why}" for f, why in self.unreadable[:first]]))
        if self.skipped:
            parts.append(listed("invalid line(s)", len(self.skipped),
                                [f"{f}:{n}: {why}" for f, n, why in self.skipped[:first]]))
        return "; ".join(parts) or None
