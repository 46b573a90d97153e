"""Frame validation: duplicate keys, value rules, extra and ground-truth columns kept."""

from __future__ import annotations

import polars as pl
import pytest

from workbench.tables import _schema as schema
from workbench.tables import validate
from workbench.errors import SchemaError


def test_validate_frame_duplicate_key_and_values() -> None:
    frame = pl.DataFrame({"run_id": ["a", "b", "a"], "task_id": ["t", "t", "t"]})
    with pytest.raises(SchemaError, match=r"row 3: field 'run_id': expected a unique key in table 'runs', got duplicate \(run_id='a'\) first seen at row 1"):
        validate("runs", frame)
    bad = pl.DataFrame({"run_id": ["a"], "pattern": ["XX"]})
    with pytest.raises(SchemaError, match=r"field 'pattern': expected one of \['RC', 'ID', 'CS', 'other', 'unrelated'\]"):
        validate("attributions", bad)


def test_validate_keeps_extra_and_ground_truth_columns() -> None:
    frame = pl.DataFrame({"entry_id": ["e"], "run_id": ["r"], "boundary": [0], "section": ["Decisions"],
                          "position": [0], "text": ["- x"], "gt_supported": [True], "harness_note": ["k"]})
    out = validate("entries", frame)
    assert out.columns[-1] == "harness_note" and out["gt_supported"].dtype == pl.Boolean
    assert [c for c in out.columns if c.startswith(schema.GROUND_TRUTH_PREFIX)] == ["gt_supported"]


def test_the_light_name_lists_match_what_they_name() -> None:
    """The command line offers tables from workbench.tables._vocabulary and formats from the format registry (so its
    help imports no polars); the lists are the declarations' own names, and every format's reader is importable."""
    from workbench import adapters
    from workbench.tables import _schema as schema
    from workbench.tables._vocabulary import TABLE_NAMES, TRAJECTORY_TABLES

    assert TABLE_NAMES == tuple(schema.TABLES) and set(TRAJECTORY_TABLES) <= set(TABLE_NAMES)
    assert tuple(adapters.FORMATS) == tuple(adapters.LOG_FORMATS)
    for fmt in adapters.LOG_FORMATS.values():
        if fmt.extra is None:
            assert callable(fmt.load()) and set(fmt.tables) <= set(TABLE_NAMES)


def test_a_frames_first_error_is_the_first_in_column_order_whatever_kind_it_is() -> None:
    """Issue 62: the value rules of all columns (a closed set, a range, NaN) are checked in one query, and the
    column that breaks one is read again for its row. The error said is still the first in the table's declared
    column order, each column's own checks in order (type, null, values, range), as a column-by-column check says
    it. Hand-made steps: `step` -1 at row 3, `observation_role` "robot" at row 2, `input_tokens` not integers."""
    steps = {"run_id": ["r", "r", "r"], "step": [0, 1, -1], "observation_role": ["tool", "robot", None],
             "input_tokens": [1, 2, 3]}
    with pytest.raises(SchemaError, match=r"^row 3: field 'step': expected a non-negative integer, got integer -1"):
        validate("steps", pl.DataFrame(steps))
    ok_steps = {**steps, "step": [0, 1, 2]}
    with pytest.raises(SchemaError, match=r"^row 2: field 'observation_role': expected one of \['tool', 'user'\], "
                                          r"got string 'robot'"):
        validate("steps", pl.DataFrame({**ok_steps, "input_tokens": ["1", "x", "3"]}))  # (a later type error)
    with pytest.raises(SchemaError, match=r"^row 1: field 'input_tokens': expected"):
        validate("steps", pl.DataFrame({**ok_steps, "observation_role": ["tool", "user", None],
                                        "input_tokens": ["1", "x", "3"]}))
    scores = {"entry_id": ["e1", "e2"], "judge": ["j", "j"], "repeat": [0, 0], "score": [0.5, float("nan")]}
    with pytest.raises(SchemaError, match=r"^row 2: field 'score': expected a number in \[0, 1\], got number nan"):
        validate("scores", pl.DataFrame(scores))
    assert validate("scores", pl.DataFrame({**scores, "score": [0.5, None]})).height == 2  # null: no answer, allowed
