"""Adjudication: the disagreements written out for a third person, and their decisions read back as gold labels."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from workbench.jsonl import json_lines
from workbench.labels import latest_labels
from workbench.schema import SchemaError
from workbench.validation import check_label
from workbench.vocabulary import LABEL_VALUES

#: the annotator name under which adjudicated labels are stored (they win in ``labels.gold_labels``)
ADJUDICATOR = "adjudicated"


def adjudication_requests(disagreements: pl.DataFrame, labels: pl.DataFrame | None = None,
                          items: Mapping[str, Mapping[str, Any]] | None = None,
                          notes: Mapping[tuple[str, str, int, str], str] | None = None) -> Iterator[dict[str, Any]]:
    """One record per disagreement (``metrics.agreement.disagreements``), all an adjudicator needs in one place.

    ``item_id``, ``field``; the entry's ``text``, ``section`` and ``role`` (from the sample ``items``, by id);
    ``labels``: each annotator's latest value and note (``annotator``, ``round``, ``value``, ``note``, from the
    ``labels`` table and the annotators' ``notes`` keyed by (item, annotator, round, field)); ``allowed``: the
    values the field takes, as values; and ``value``, null until decided.
    """
    latest = latest_labels(labels) if labels is not None and labels.height else None
    for r in disagreements.iter_rows(named=True):
        item = (items or {}).get(r["item_id"], {})
        given = []
        if latest is not None:
            mine = latest.filter((pl.col("item_id") == r["item_id"]) & (pl.col("field") == r["field"]))
            for lab in mine.sort("annotator", "round").iter_rows(named=True):
                note = (notes or {}).get((r["item_id"], lab["annotator"], lab["round"], r["field"])) or lab.get("note")
                given.append({"annotator": lab["annotator"], "round": lab["round"], "value": lab["value"],
                              "note": note})
        yield {"item_id": r["item_id"], "field": r["field"], "text": item.get("text"), "section": item.get("section"),
               "role": item.get("role"), "labels": given, "allowed": list(LABEL_VALUES.get(r["field"], ())),
               "value": None}


@dataclass(frozen=True)
class AdjudicationFile:
    """What :func:`merge_adjudication` left in the file: how many items wait for a decision, how many are decided,
    how many were added by this run."""

    path: Path
    open: int
    decided: int
    added: int

    def __str__(self) -> str:
        return (f"{self.path}: {self.open} to adjudicate, {self.decided} decided ({self.added} new); "
                "decide with `workbench adjudicate FILE --decide --adjudicator NAME` (or the labeling notebook's "
                "MODE = \"adjudicate\"), which adds the decisions to the store")


def merge_adjudication(path: str | os.PathLike[str], requests: Iterable[dict[str, Any]]) -> AdjudicationFile:
    """Add the ``requests`` for (item, field) pairs the file does not hold yet; never rewrite a record already in it.

    The file is append-only in effect, like the labels: a decided value stays as the adjudicator wrote it (and is
    checked: a value its field does not allow is an error naming FILE:LINE, and nothing is written), an undecided
    one stays undecided, and only new disagreements are added. Written atomically.
    """
    from workbench.atomic import write_jsonl

    path = Path(path)
    kept = read_adjudication(path) if path.exists() else []
    have = {(r["item_id"], r["field"]) for r in kept}
    added = [r for r in requests if (r["item_id"], r["field"]) not in have]
    records = kept + added
    write_jsonl(records, path)
    decided = sum(r.get("value") is not None for r in records)
    return AdjudicationFile(path, len(records) - decided, decided, len(added))


def read_adjudication(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every record of an adjudication file, checked: string ``item_id`` and ``field``, and a decided ``value`` the
    field allows (else ``SchemaError`` naming FILE:LINE). An empty file (``agree`` found no disagreement) has none."""
    path = Path(path)
    records: list[dict[str, Any]] = []
    if path.is_file() and path.stat().st_size == 0:
        return records
    for number, rec in json_lines(path):
        if not isinstance(rec, dict) or not isinstance(rec.get("item_id"), str) or \
                not isinstance(rec.get("field"), str):
            raise SchemaError(file=str(path), line=number, field="item_id/field", expected="strings",
                              got=str(rec)[:60])
        if rec.get("value") is not None:
            try:
                check_label(rec["field"], rec["value"])
            except SchemaError as err:
                raise SchemaError(file=str(path), line=number, field=err.field, expected=err.expected,
                                  got=err.got) from None
        records.append(rec)
    return records


def decide(path: str | os.PathLike[str], item_id: str, field: str, *, value: str | None, note: str | None,
           adjudicator: str) -> dict[str, Any]:
    """Write one decision (or, with ``value`` None, only a note) into the adjudication file's record of
    (``item_id``, ``field``): ``value``, ``note``, ``decided_by``, ``decided_at``. The file is rewritten
    atomically with every other record as it was; returns the decision as a label-like record."""
    from datetime import datetime, timezone

    from workbench.atomic import write_jsonl

    path = Path(path)
    if value is not None:
        check_label(field, value)
    records = read_adjudication(path)
    match = [r for r in records if r["item_id"] == item_id and r["field"] == field]
    if not match:
        raise SchemaError(f"no disagreement of item {item_id!r}, field {field!r} in the file", file=str(path))
    at = datetime.now(timezone.utc).isoformat()
    for rec in match:
        if value is not None:
            rec.update(value=value, decided_by=adjudicator, decided_at=at)
        rec["note"] = note or rec.get("note")
    write_jsonl(records, path)
    return {"item_id": item_id, "field": field, "value": value, "note": match[0].get("note"), "labeled_at": at}


def adjudicated_labels(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The filled-in adjudication file as label records (annotator ``adjudicated``, round 0).

    Records whose ``value`` is still null are skipped (not yet decided); a record without
    string ``item_id`` and ``field``, or with a value its field does not declare ("maybe" for
    ``support``), is an error naming its line, and nothing is returned.
    """
    return [{"item_id": rec["item_id"], "annotator": ADJUDICATOR, "round": 0, "field": rec["field"],
             "value": str(rec["value"]), "note": rec.get("note")}
            for rec in read_adjudication(path) if rec.get("value") is not None]
