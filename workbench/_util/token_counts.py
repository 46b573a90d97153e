"""The one rule for a token count read from a log or an API's ``usage`` object: an integer, as ccusage counts."""

from __future__ import annotations

from typing import Any

__all__ = ["logged_count", "MAX_COUNT", "token_count"]

#: the largest token count a log's line may give (2**53: exact in every JSON reader, JavaScript's included; no
#: session comes near it): a larger one is an error naming its field, not a sum that overflows a table's 64 bits
MAX_COUNT = 2**53


def token_count(value: Any) -> int:
    """A token count as logs and APIs give it: a non-negative integer is itself; anything else (missing, a boolean,
    text, a float -- even a whole one, as ccusage counts only integers --, a negative or nested value) is 0. Usage
    never decides a score or ends a run. The importer, the usage pass and the LLM client's accounting all count
    with this.

    Parameters
    ----------
    value : object
        The count as given.

    Returns
    -------
    int
        The count, or 0.
    """
    return value if type(value) is int and value > 0 else 0


def logged_count(value: Any, field: str) -> int:
    """:func:`token_count` of a count read from a session log's line, where an integer beyond :data:`MAX_COUNT` is
    a :class:`~workbench.errors.SchemaError` naming ``field`` (it was an internal overflow error in ``workbench
    usage`` and ``workbench import``).

    Parameters
    ----------
    value : object
        The count as the line gives it.
    field : str
        Its field, as the error names it (``message.usage.input_tokens``).

    Returns
    -------
    int
        The count, or 0.
    """
    if type(value) is int and value > MAX_COUNT:
        from workbench.errors import SchemaError, describe_value

        raise SchemaError(field=field, expected=f"a count of tokens: a whole number from 0 to {MAX_COUNT:,}",
                          got=describe_value(value))
    return token_count(value)
