"""Adjudication: the disagreements written out for a third person, and their decisions read back as gold labels."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from workbench._util.jsonl import json_lines
from workbench.tables._labels import latest_labels
from workbench.errors import SchemaError
from workbench.tables._validation import check_label
from workbench.tables._vocabulary import LABEL_VALUES

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

    Parameters
    ----------
    disagreements : polars.DataFrame
        The disagreements (``item_id``, ``field``).
    labels : polars.DataFrame, optional
        The labels, for each annotator's latest value.
    items : mapping of str to mapping, optional
        The sample's items by id, for the entry's text.
    notes : mapping, optional
        The annotators' notes by (item, annotator, round, field).

    Yields
    ------
    dict
        One request per disagreement.
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
        head = f"{self.path}: {self.open} to adjudicate, {self.decided} decided ({self.added} new)"
        if self.open:
            return (f"{head}; decide with `workbench adjudicate FILE --decide --adjudicator NAME` (or the labeling "
                    "notebook's MODE = \"adjudicate\"), which adds the decisions to the store")
        if self.decided:
            return f"{head}; every disagreement is decided: `workbench adjudicate FILE` adds the decisions to the store"
        return f"{head}: the annotators agree on every item"


def merge_adjudication(path: str | os.PathLike[str], requests: Iterable[dict[str, Any]]) -> AdjudicationFile:
    """Add the ``requests`` for (item, field) pairs the file does not hold yet; never rewrite a record already in it.

    The file is append-only in effect, like the labels: a decided value stays as the adjudicator wrote it (and is
    checked: a value its field does not allow is an error naming ``FILE:LINE``, and nothing is written), an undecided
    one stays undecided, and only new disagreements are added. Written atomically.

    Parameters
    ----------
    path : str or os.PathLike
        The adjudication file (created when absent).
    requests : iterable of dict
        The requests (:func:`adjudication_requests`).

    Returns
    -------
    AdjudicationFile
        How many records wait for a decision, how many are decided and how many were added.
    """
    from workbench._util.atomic import write_jsonl

    path = Path(path)
    requests = list(requests)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        kept = read_adjudication(path) if path.exists() else []
        have = {(r["item_id"], r["field"]) for r in kept}
        added = [r for r in requests if (r["item_id"], r["field"]) not in have]
        records = kept + added
        write_jsonl(records, path)
    decided = sum(r.get("value") is not None for r in records)
    return AdjudicationFile(path, len(records) - decided, decided, len(added))


def read_adjudication(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Every record of an adjudication file, checked (``numbered_records``).

    Parameters
    ----------
    path : str or os.PathLike
        The adjudication file.

    Returns
    -------
    list of dict
        Its records, in file order.
    """
    return [rec for _, rec in numbered_records(path)]


def numbered_records(path: str | os.PathLike[str]) -> list[tuple[int, dict[str, Any]]]:
    """Every record of an adjudication file with its line number, checked: string ``item_id`` and ``field``, one
    record per (item, field), a decided ``value`` the field allows and a ``decided_by`` that is a person's name
    (the annotator rule) -- else ``SchemaError`` naming ``FILE:LINE``. An empty file (``agree`` found no
    disagreement) has none."""
    from workbench.tables._vocabulary import check_annotator

    path = Path(path)
    records: list[tuple[int, dict[str, Any]]] = []
    if path.is_file() and path.stat().st_size == 0:
        return records
    first: dict[tuple[str, str], int] = {}
    for number, rec in json_lines(path):
        if not isinstance(rec, dict) or not isinstance(rec.get("item_id"), str) or \
                not isinstance(rec.get("field"), str):
            raise SchemaError(file=str(path), line=number, field="item_id/field", expected="strings",
                              got=str(rec)[:60])
        key = (rec["item_id"], rec["field"])
        if key in first:  # two decisions for one disagreement: which one holds is nobody's guess
            raise SchemaError(file=str(path), line=number, field="item_id/field",
                              expected="one record per item and field",
                              got=f"a second record of item {key[0]!r}, field {key[1]!r} (the first is line "
                                  f"{first[key]})")
        first[key] = number
        try:
            if rec.get("value") is not None:
                check_label(rec["field"], rec["value"])
            if rec.get("decided_by") is not None:
                try:
                    check_annotator(rec["decided_by"])
                except SchemaError as err:
                    raise SchemaError(field="decided_by", expected=err.expected, got=err.got) from None
        except SchemaError as err:
            raise SchemaError(file=str(path), line=number, field=err.field, expected=err.expected,
                              got=err.got) from None
        records.append((number, rec))
    return records


def decide(path: str | os.PathLike[str], item_id: str, field: str, *, value: str | None, note: str | None,
           adjudicator: str, retract: bool = False) -> dict[str, Any]:
    """Write one decision (or, with ``value`` None, only a note) into the adjudication file's record of
    (``item_id``, ``field``): ``value``, ``note``, ``decided_by``, ``decided_at``; ``retract`` takes a decision
    back (the record is undecided again, its note kept; an undo). The file is rewritten atomically with every other
    record as it was; returns the decision as a label-like record.

    Parameters
    ----------
    path : str or os.PathLike
        The adjudication file.
    item_id : str
        The item.
    field : str
        The field.
    value : str or None
        The decided value (None: a note only).
    note : str or None
        The adjudicator's note.
    adjudicator : str
        Who decided.
    retract : bool, default False
        Take the decision back.

    Returns
    -------
    dict
        The decision as a label-like record.
    """
    from datetime import datetime, timezone

    from workbench._util.atomic import write_jsonl

    from workbench.tables._vocabulary import check_annotator

    path = Path(path)
    check_annotator(adjudicator)  # a person: never a reserved name, nor one that only looks different
    if value is not None:
        check_label(field, value)
    with _locked(path):  # read, change and write as one step: two adjudicators at once lose nothing
        records = read_adjudication(path)
        match = [r for r in records if r["item_id"] == item_id and r["field"] == field]
        if not match:
            raise SchemaError(f"no disagreement of item {item_id!r}, field {field!r} in the file", file=str(path))
        at = datetime.now(timezone.utc).isoformat()
        for rec in match:
            if retract:
                rec.update(value=None, decided_by=None, decided_at=None)
            elif value is not None:
                rec.update(value=value, decided_by=adjudicator, decided_at=at)
            rec["note"] = note or rec.get("note")
        write_jsonl(records, path)
    return {"item_id": item_id, "field": field, "value": value, "note": match[0].get("note"), "labeled_at": at}


def _locked(path: Path) -> Any:
    """The adjudication file's lock (``FILE.lock``, as the annotation store locks its files): held around every
    read-change-write of the file, so decisions written at once by two processes are all kept."""
    from filelock import FileLock

    return FileLock(str(path) + ".lock")


def _as_label(rec: dict[str, Any]) -> dict[str, Any]:
    return {"item_id": rec["item_id"], "annotator": ADJUDICATOR, "round": 0, "field": rec["field"],
            "value": str(rec["value"]), "note": rec.get("note")}


# ---------------------------------------------------------------------------
# the two steps of ``workbench agree`` and ``workbench adjudicate``, for a notebook as for the command line


@dataclass(frozen=True)
class Prepared:
    """What :func:`prepare` did: the agreement report, the labels left out because no sample holds their items,
    and the adjudication file it added the new disagreements to; ``str()`` is ``workbench agree``'s printout."""

    report: Any  # workbench.stats._agreement.AgreementReport
    file: AdjudicationFile
    stray_labels: int = 0
    stray_items: int = 0
    first_stray: str | None = None

    def lines(self) -> list[str]:
        out = []
        if self.stray_labels:
            out.append(f"{self.stray_labels} label(s) of {self.stray_items} item(s) not in the sample(s) left out "
                       f"(first {self.first_stray!r})")
        return [*out, str(self.report), str(self.file)]

    def __str__(self) -> str:
        return "\n".join(self.lines())


def prepare(store: str | os.PathLike[str], *, samples: Sequence[str | os.PathLike[str]] | None = None,
            by: str | None = None, out: str | os.PathLike[str] | None = None, n_boot: int | None = None,
            seed: int = 0) -> Prepared:
    """Agreement of a store's labels and the disagreements written out for adjudication (``workbench agree``).

    The labels (adjudicated ones left out) of the items the ``samples`` hold (default: the store's own samples,
    ``STORE/samples/*.jsonl``; every label when there are none); agreement per field
    (:func:`workbench.stats.agreement_report`, intervals resampling the items' ``scenario_id``; ``by``
    ``round`` or ``annotator`` keeps one kind of comparison); and each new disagreement, with every annotator's
    value and note and the sample's text, added to the adjudication file ``out`` (default
    ``STORE/adjudication.jsonl``; a record already there is never rewritten). A store without labels, or without
    labels of the samples' items, is an error naming it.

    Parameters
    ----------
    store : str or os.PathLike
        The annotation store.
    samples : sequence of str or os.PathLike, optional
        The sample files whose items are compared.
    by : {"round", "annotator"}, optional
        Keep one kind of comparison.
    out : str or os.PathLike, optional
        The adjudication file.
    n_boot : int, optional
        Bootstrap resamples of the agreement intervals.
    seed : int, default 0
        The bootstrap's seed.

    Returns
    -------
    Prepared
        The agreement report, the labels left out and what was added to the adjudication file.
    """
    from workbench.annotate._samples import sample_clusters, sample_index
    from workbench.annotate._store import AnnotationStore
    from workbench.stats._bootstrap import DEFAULT_N_BOOT
    from workbench.stats._agreement import agreement_report, disagreements

    store = Path(store)
    reader = AnnotationStore(store, read_only=True)  # reading takes no lock: a read-only store can be read
    labels = reader.labels()
    labels = labels.filter(pl.col("annotator") != ADJUDICATOR) if labels.height else labels
    if not labels.height:
        raise SchemaError("no labels in the store", file=str(store / "labels"))
    items = sample_index(samples, store=store)
    stray = labels.filter(~pl.col("item_id").is_in(list(items))) if items else labels.head(0)
    if items:  # labels of items no sample holds are kept apart: they are not the sample agreement is about
        labels = labels.filter(pl.col("item_id").is_in(list(items)))
        if not labels.height:
            raise SchemaError("no labels of the sample's items in the store", file=str(store / "labels"))
    report = agreement_report(labels, sample_clusters(items), by=by, n_boot=n_boot or DEFAULT_N_BOOT, seed=seed)
    notes = {}
    for who, rnd, field in labels.select("annotator", "round", "field").unique().iter_rows():
        for item_id, note in reader.notes(who, rnd, field).items():
            notes[(item_id, who, rnd, field)] = note
    requests = adjudication_requests(disagreements(labels, by=by or "round"), labels, items, notes)
    written = merge_adjudication(Path(out) if out else store / "adjudication.jsonl", requests)
    return Prepared(report, written, stray.height, stray["item_id"].n_unique() if stray.height else 0,
                    stray["item_id"][0] if stray.height else None)


@dataclass(frozen=True)
class Applied:
    """What :func:`apply` added to the store."""

    added: int
    already: int

    def __str__(self) -> str:
        return f"{self.added} adjudicated label(s) added ({self.already} already in the store)"


def apply(path: str | os.PathLike[str], store: str | os.PathLike[str]) -> Applied:
    """Add an adjudication file's decisions to the store as ``adjudicated`` labels, each once (``workbench
    adjudicate``). Each decision must answer a disagreement: the store's annotators' latest labels of its item and
    field differ (:func:`workbench.stats.disagreements`); a decision about an item and field they
    never labelled, or labelled alike (it would override what they agreed on), is an error naming ``FILE:LINE``, and
    nothing is added. A decision already in the store (same value and note) is not added again.

    Parameters
    ----------
    path : str or os.PathLike
        The adjudication file.
    store : str or os.PathLike
        The annotation store.

    Returns
    -------
    Applied
        How many decisions were added, and how many were there already.
    """
    from workbench.annotate._store import AnnotationStore
    from workbench.stats._agreement import disagreements

    decided = [(number, rec) for number, rec in numbered_records(path) if rec.get("value") is not None]
    target = AnnotationStore(store)
    labeled = target.labels()
    people = labeled.filter(pl.col("annotator") != ADJUDICATOR) if labeled.height else labeled
    known = set(zip(people["item_id"].to_list(), people["field"].to_list(), strict=True)) if people.height else set()
    split = set(disagreements(people).select("item_id", "field").iter_rows()) if people.height else set()
    unanswered = [(number, rec) for number, rec in decided if (rec["item_id"], rec["field"]) not in split]
    if unanswered:  # nothing to adjudicate: an item nobody labelled, or one the annotators agree on
        number, rec = unanswered[0]
        why = ("the annotators labelled alike" if (rec["item_id"], rec["field"]) in known
               else "no annotator of the store labelled")
        raise SchemaError(file=str(Path(path)), line=number, field="item_id/field",
                          expected="a decision about an item and field the store's annotators disagree on",
                          got=f"item {rec['item_id']!r}, field {rec['field']!r}, which {why} ({len(unanswered)} "
                              "such decision(s))")
    records = [_as_label(rec) for _, rec in decided]
    fresh, already = target.not_held(records, labeled)
    n = target.add_many(fresh, adjudication=True) if fresh else 0
    return Applied(n, already)


__all__ = ["adjudication_requests", "AdjudicationFile", "ADJUDICATOR", "Applied", "apply", "decide",
           "merge_adjudication", "prepare", "Prepared", "read_adjudication"]
