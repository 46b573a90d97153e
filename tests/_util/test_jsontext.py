"""``dumps_indent`` against the standard library's ``json.dumps(value, indent=...)``, the text it must equal."""

from __future__ import annotations

import enum
import json
import math
from collections import OrderedDict

import numpy as np
import pytest

from workbench._util.jsontext import dumps_indent

_TEXTS = ["", "a", "quote \" and \\ backslash", "tab\tnew\nline", "\x00\x1f control", "é ß 中文 😀",
          "\ud800 lone"]


def _value(rng: np.random.Generator, depth: int) -> object:
    kind = int(rng.integers(0, 9 if depth < 4 else 6))
    if kind == 0:
        return None
    if kind == 1:
        return bool(rng.integers(0, 2))
    if kind == 2:
        return int(rng.integers(-10**12, 10**12)) * int(rng.choice([1, 10**9]))
    if kind == 3:
        return float(rng.choice([0.1, -0.0, 1e-5, 1e300, 123456.789, math.nan, math.inf, -math.inf, 2.5e-308]))
    if kind in (4, 5):
        return str(rng.choice(_TEXTS)) + str(int(rng.integers(0, 100)))
    if kind == 6:
        return [_value(rng, depth + 1) for _ in range(int(rng.integers(0, 4)))]
    if kind == 7:
        return tuple(_value(rng, depth + 1) for _ in range(int(rng.integers(0, 3))))
    return {str(rng.choice(_TEXTS)) + str(k): _value(rng, depth + 1) for k in range(int(rng.integers(0, 4)))}


@pytest.mark.parametrize("indent", [1, 2, 4])
def test_random_values_give_the_standard_librarys_text(indent: int) -> None:
    rng = np.random.default_rng(indent)
    for _ in range(2000):
        value = _value(rng, 0)
        assert dumps_indent(value, indent) == json.dumps(value, indent=indent)


def test_what_the_fast_loop_does_not_write_is_the_standard_librarys_too() -> None:
    class Level(enum.IntEnum):
        HIGH = 3

    class Text(str):
        pass

    others = [{1: "int key"}, {True: 1, None: 2, 1.5: 3}, [Level.HIGH], {"k": Text("sub")}, OrderedDict(b=1, a=2),
              [{"deep": [[[[[[[["x"]]]]]]]]}], {"a": [1.0, 2, "3"]},
              [{"k": 1}, {Text("k"): 2}, {Text("new key"): 3}]]  # a str subclass as a key, met before and not
    for value in others:
        assert dumps_indent(value) == json.dumps(value, indent=1)
    deep: object = "leaf"
    for _ in range(300):
        deep = [deep]
    assert dumps_indent(deep) == json.dumps(deep, indent=1)
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps_indent(loop)
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps_indent({"a": {1, 2}})


@pytest.mark.parametrize("indent", [1, 3])
def test_a_list_written_item_by_item_is_the_standard_librarys_text(indent: int) -> None:
    """``write_indent`` writes a list's items one at a time; an item the fast loop leaves to ``json.dumps`` (an
    int key, a str subclass) is that text shifted to where it stands, so the whole equals ``json.dumps``."""
    import io

    from workbench._util.jsontext import write_indent

    class Text(str):
        pass

    rng = np.random.default_rng(10 + indent)
    values: list[object] = [[], {}, "top", [1], {"a": [1, {"b": None}]}]
    values += [[_value(rng, 1) for _ in range(int(rng.integers(1, 8)))] for _ in range(300)]
    values += [[{"k": 1}, {2: {"x": [1, 2]}}, [Text("sub"), {"deep": {3: [4]}}], {"after": "fallback"}]]
    for value in values:
        out = io.StringIO()
        write_indent(value, out, indent)
        assert out.getvalue() == json.dumps(value, indent=indent)


def test_the_keys_kept_are_bounded() -> None:
    """Keys met before are kept with their text (a list's items share them), at most ``_KEYS_KEPT`` of them: a
    value of many distinct keys does not grow the module's memory without end."""
    from workbench._util import jsontext

    value = [{f"key {k}": k} for k in range(3 * jsontext._KEYS_KEPT)]
    assert dumps_indent(value) == json.dumps(value, indent=1)
    assert len(jsontext._KEY_TEXT) <= jsontext._KEYS_KEPT
