"""The workbench's bad-input error, in a module of its own that imports nothing heavy: the command line names it
before it loads any table (``workbench --help`` imports no polars)."""

from __future__ import annotations

__all__ = ["BadLines", "describe_value", "OutputRefused", "SchemaError", "SelectionError"]


def __getattr__(name: str) -> object:
    """The two kinds that live with the code that makes them (the atomic writer, the session reader), named here
    too: :class:`OutputRefused` (an output path a command will not write) and :class:`BadLines` (what a reader
    skipped)."""
    if name == "OutputRefused":
        from workbench._util.atomic import OutputRefused

        return OutputRefused
    if name == "BadLines":
        from workbench._util.jsonl import BadLines

        return BadLines
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    """A short description of a JSON value for an error message."""
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
