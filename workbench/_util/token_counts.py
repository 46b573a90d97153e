"""The one rule for a token count read from a log or an API's ``usage`` object: an integer, as ccusage counts."""

from __future__ import annotations

from typing import Any

__all__ = ["token_count"]


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
