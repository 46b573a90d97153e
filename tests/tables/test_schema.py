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
    """The command line offers formats and tables from workbench.tables._vocabulary (so its help imports no polars); the
    lists are the readers' and the declarations' own names."""
    from workbench import adapters
    from workbench.tables import _schema as schema
    from workbench.tables import LOG_FORMATS, TABLE_NAMES

    assert LOG_FORMATS == tuple(adapters.FORMATS) and TABLE_NAMES == tuple(schema.TABLES)
