"""Adjudication: the disagreements written out for a third person, and their decisions read back as gold labels."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

from workbench.validation import check_label
from workbench.schema import SchemaError
from workbench.jsonl import json_lines

#: the annotator name under which adjudicated labels are stored (they win in ``labels.gold_labels``)
ADJUDICATOR = "adjudicated"


def adjudication_requests(disagreements: pl.DataFrame) -> Iterator[dict[str, Any]]:
    """One record per disagreement (``metrics.agreement.disagreements``): the values given, ``value`` to fill in."""
    for r in disagreements.iter_rows(named=True):
        yield {"item_id": r["item_id"], "field": r["field"], "values": r["values"], "value": None}


def adjudicated_labels(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The filled-in adjudication file as label records (annotator ``adjudicated``, round 0).

    Records whose ``value`` is still null are skipped (not yet decided); a record without
    string ``item_id`` and ``field``, or with a value its field does not declare ("maybe" for
    ``support``), is an error naming its line, and nothing is returned.
    """
    records = []
    for number, rec in json_lines(Path(path)):
        if not isinstance(rec, dict) or not isinstance(rec.get("item_id"), str) or not isinstance(rec.get("field"), str):
            raise SchemaError(file=str(path), line=number, field="item_id/field", expected="strings", got=str(rec)[:60])
        if rec.get("value") is None:
            continue
        try:
            check_label(rec["field"], rec["value"])
        except SchemaError as err:
            raise SchemaError(file=str(path), line=number, field=err.field, expected=err.expected,
                              got=err.got) from None
        records.append({"item_id": rec["item_id"], "annotator": ADJUDICATOR, "round": 0, "field": rec["field"],
                        "value": str(rec["value"]), "note": rec.get("note")})
    return records
