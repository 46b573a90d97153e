"""``at_line``: the location every reader gives a record's error (issue 62 made it a class, a line's cost)."""

from __future__ import annotations

import pytest

from workbench._util.jsonl import at_line
from workbench.errors import SchemaError


def test_an_error_in_a_record_is_named_by_file_and_line_and_other_errors_pass_through() -> None:
    with pytest.raises(SchemaError) as raised:
        with at_line("logs/a.jsonl", 7):
            raise SchemaError(field="payload.type", expected="a string", got="integer 3")
    assert (raised.value.file, raised.value.line, raised.value.field) == ("logs/a.jsonl", 7, "payload.type")
    with pytest.raises(SchemaError) as raised:  # an error that knows its place keeps it
        with at_line("logs/a.jsonl", 7):
            raise SchemaError(file="logs/b.jsonl", line=2, expected="x", got="y")
    assert (raised.value.file, raised.value.line) == ("logs/b.jsonl", 2)
    with pytest.raises(SchemaError, match="nested at most a few hundred levels") as raised:
        with at_line("logs/a.jsonl", 9):
            raise RecursionError("maximum recursion depth exceeded")
    assert raised.value.line == 9 and raised.value.__cause__ is None
    with pytest.raises(ValueError, match="not ours"):
        with at_line("logs/a.jsonl", 9):
            raise ValueError("not ours")
    with at_line("logs/a.jsonl", 9):
        pass
