"""``json.dumps(value, indent=1)``'s text, written faster and, for a list, an item at a time.

CPython's standard encoder leaves its C accelerator when ``indent`` is given and encodes in Python, value by value
(0.46 s for ``workbench usage --json``'s 47,353 sessions on the 1 GB home, a tenth of the command), then joins the
whole text. :func:`dumps_indent` writes the same text with the C string encoder the standard module uses and a loop
specialised to the types JSON knows (0.28 s there); :func:`write_indent` writes a list's items one at a time, so
the whole text is never held (the command's peak: 257 -> 214 MiB). Anything else (a key that is not a string, a
value of another type) is left to ``json.dumps``, so the text is the standard module's in every case."""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
from typing import Any, TextIO

__all__ = ["dumps_indent", "write_indent"]

_INFINITY = float("inf")

#: nesting beyond which the text is left to ``json.dumps`` (which names a value that holds itself)
_DEPTH = 200


def _float(value: float) -> str:
    """``json.dumps``' text for a float (``allow_nan``: NaN and the infinities as JavaScript names them)."""
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return float.__repr__(value)


class _Other(Exception):
    """A value the fast loop does not write (json.dumps says what to do with it)."""


def dumps_indent(value: Any, indent: int = 1) -> str:
    """``json.dumps(value, indent=indent)``, character for character (ASCII, keys in their order, NaN allowed).

    Parameters
    ----------
    value : object
        Dicts with string keys, lists, tuples, strings, ints, floats, booleans and None, nested; anything else is
        passed to ``json.dumps`` whole.
    indent : int, default 1
        Spaces per level.

    Returns
    -------
    str
        The JSON text.
    """
    return _text(value, indent, 0)


def write_indent(value: Any, out: TextIO, indent: int = 1) -> None:
    """:func:`dumps_indent`'s text written to ``out``, a list's items one at a time: the whole text is never held
    (``workbench usage --json`` on the 1 GB home: the standard module's text and its pieces cost 55 MiB of peak).

    Parameters
    ----------
    value : object
        As :func:`dumps_indent` takes it.
    out : text file
        Where the text goes (no newline is added).
    indent : int, default 1
        Spaces per level.
    """
    if type(value) is not list or not value:
        out.write(_text(value, indent, 0))
        return
    pad = "\n" + " " * indent
    out.write("[")
    for k, item in enumerate(value):
        out.write((pad if k == 0 else "," + pad) + _text(item, indent, 1))
    out.write("\n]")


#: a dict key's text with its ": ", for keys met before (the items of a list share their keys); at most
#: :data:`_KEYS_KEPT` kept
_KEY_TEXT: dict[str, str] = {}
_KEYS_KEPT = 4096


def _text(value: Any, indent: int, base: int) -> str:
    """The text of ``value`` as it stands at nesting ``base`` of a larger value (its lines after the first indented
    by ``base`` levels)."""
    try:
        return _written(value, indent, base, base)
    except _Other:  # the standard text, shifted as it would stand inside the larger value
        text = json.dumps(value, indent=indent)
        return text.replace("\n", "\n" + " " * (indent * base)) if base else text


def _written(o: Any, indent: int, level: int, base: int) -> str:
    """:func:`_text` of ``o`` at nesting ``level``; :class:`_Other` for what the standard module must write. A
    container's items are made into strings and joined with one separator string (as the standard encoder makes
    them), each scalar by a test of its type in line, not a call and an append a value (``workbench usage --json``
    on the 1 GB home: 0.33 -> 0.23 s)."""
    if level - base > _DEPTH:  # deeper, or a value that holds itself: json.dumps says what it says
        raise _Other
    encode = encode_basestring_ascii
    t = type(o)
    keyed = t is dict
    if not (keyed or t is list or t is tuple):
        text = _scalar(o)
        if text is None:
            raise _Other
        return text
    if not o:
        return "{}" if keyed else "[]"
    items: list[str] = []
    add = items.append
    keys = _KEY_TEXT
    for item in o.items() if keyed else o:
        head = ""
        if keyed:
            k, item = item
            known = keys.get(k)  # (a key that is not a string is never among them)
            if known is None:
                if type(k) is not str:
                    raise _Other
                known = encode(k) + ": "
                if len(keys) < _KEYS_KEPT:
                    keys[k] = known
            head = known
        v = type(item)
        if v is str:
            add(head + encode(item))
        elif v is int:
            add(head + int.__repr__(item))
        elif item is None:
            add(head + "null")
        elif v is float:
            add(head + _float(item))
        elif item is True:
            add(head + "true")
        elif item is False:
            add(head + "false")
        else:
            add(head + _written(item, indent, level + 1, base))
    pad = "\n" + " " * (indent * (level + 1))
    return ("{" if keyed else "[") + pad + ("," + pad).join(items) + "\n" + " " * (indent * level) + \
        ("}" if keyed else "]")


def _scalar(v: Any) -> str | None:
    """A scalar's text, None for anything else."""
    t = type(v)
    if t is str:
        return encode_basestring_ascii(v)
    if t is int:
        return int.__repr__(v)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if t is float:
        return _float(v)
    return None
