"""SummEdits (Laban et al., EMNLP 2023; Apache-2.0) as labelled summaries: ``workbench import DIR --format summedits``.

``DIR`` holds the authors' per-domain files ``summedits_<domain>.json`` (a JSON list each, as in
``../shared/data/human-labels/summedits``), or their gzip-compressed copies ``summedits_<domain>.json.gz`` (the
project's compact copy, ``data/benchmarks/summedits``); a single such file may be given too. Each item is a summary
of a document (a chat, a meeting or call transcript, an email thread, a podcast, a news article, a paper abstract),
a seed summary (id ending ``_og``) or a minimal edit of it, labelled consistent (1) or not (0) with the document by
people. Each becomes one labelled summary (:mod:`workbench.adapters._labelled_summaries`):

* id the item's id, ``source_id`` its document (the id without its final ``_suffix``: the seed's and its edits'
  document, so that every interval resamples documents; two prefixes of the same text, as QMSum's ``q_test_40``
  and ``q_test_41``, are one document: 162 over the eight domains), ``system`` ``seed`` or ``edit``;
* source the document, summary as given, one entry per summary sentence (the labelled-summaries splitter);
* ``score`` (the runs' ``human_score``) the summary-level label; ``dataset`` the domain, ``split`` ``evaluation``
  or ``test``;
* ``meta``: ``edit_types`` (the error types of an inconsistent edit, comma-separated; empty for none),
  ``release`` (``SUMMEDITS_RELEASE``: the published table belongs to these rows) and ``original_summary``.

The label is the summary's, not a sentence's: no sentence label is invented from it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

from workbench.errors import SchemaError, describe_value

#: what every run's ``meta_release`` says (the authors' per-domain table belongs to these rows)
SUMMEDITS_RELEASE = "SummEdits"
#: the eight domains the project's copy holds, in the authors' table order
SUMMEDITS_DOMAINS = ("podcast", "samsum", "news", "sales_call", "sales_email", "scitldr", "qmsumm", "ectsum")
_FILE = re.compile(r"summedits_([a-z_]+)\.json(\.gz)?$")
_FIELDS = ("id", "doc", "summary", "label", "original_summary", "edit_types", "split")


def domain_files(path: str | os.PathLike[str]) -> list[tuple[str, Path]]:
    """``(domain, file)`` of a SummEdits directory (or of one file), in the authors' table order; the plain JSON
    file where both it and its ``.gz`` copy are there."""
    p = Path(path)
    found: dict[str, Path] = {}
    for f in ([p] if p.is_file() else sorted(p.iterdir()) if p.is_dir() else []):
        m = _FILE.search(f.name)
        if m and (m.group(1) not in found or not m.group(2)):
            found[m.group(1)] = f
    order = {d: i for i, d in enumerate(SUMMEDITS_DOMAINS)}
    return sorted(found.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))


def is_summedits(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a SummEdits directory (or file): ``summedits_<domain>.json[.gz]`` files."""
    return bool(domain_files(path))


def _read(file: Path) -> Any:
    """A domain's file, plain or its ``.gz`` copy (FRANK's reader's rule); errors name the file."""
    from workbench.adapters._frank import read_json

    return read_json(file.with_suffix("") if file.suffix == ".gz" else file)


def document_of(item_id: str) -> str:
    """The document an item summarises: its id without the final ``_suffix`` (``samsum_train_13731241_og`` and
    ``samsum_train_13731241_3`` share ``samsum_train_13731241``)."""
    return item_id.rsplit("_", 1)[0] if "_" in item_id else item_id


def _edit_types(value: Any, where: str, file: Path) -> str:
    """The error types as one comma-separated text: the authors write a list, or a JSON list in a string."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except ValueError:
            raise SchemaError(file=str(file), line=where, field="edit_types", expected="a list of error types "
                              "(or one as JSON text)", got=describe_value(value)) from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SchemaError(file=str(file), line=where, field="edit_types", expected="a list of error types",
                          got=describe_value(value))
    return ", ".join(value)


def summedits_records(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """Each item as a labelled-summaries record (see the module docstring); a bad item is an error naming its file,
    its index and the field."""
    files = domain_files(path)
    if not files:
        raise SchemaError("no summedits_<domain>.json files; expected SummEdits' per-domain files", file=str(path))
    seen: dict[str, str] = {}
    document: dict[str, str] = {}  # a document's text -> the first id prefix it was read under
    for domain, file in files:
        items = _read(file)
        if not isinstance(items, list):
            raise SchemaError(file=str(file), expected="a JSON list of items", got=describe_value(items))
        for i, item in enumerate(items):
            where = f"item {i + 1}"
            if not isinstance(item, dict):
                raise SchemaError(file=str(file), line=where, expected="an object", got=describe_value(item))
            for name in ("id", "doc", "summary"):
                if not isinstance(item.get(name), str) or not item[name].strip():
                    raise SchemaError(file=str(file), line=where, field=name, expected="a text",
                                      got=describe_value(item.get(name)))
            label = item.get("label")
            label = int(label) if isinstance(label, str) and label.strip() in ("0", "1") else label
            if label not in (0, 1) or isinstance(label, bool):
                raise SchemaError(file=str(file), line=where, field="label", expected="1 (consistent) or 0",
                                  got=describe_value(item.get("label")))
            split = item.get("split")
            if split not in ("evaluation", "test"):
                raise SchemaError(file=str(file), line=where, field="split", expected="evaluation or test",
                                  got=describe_value(split))
            if item["id"] in seen:
                raise SchemaError(file=str(file), line=where, field="id", expected="an id no other item has",
                                  got=f"{item['id']!r}, also in {seen[item['id']]}")
            seen[item["id"]] = f"{file.name} {where}"
            source = document.setdefault(item["doc"], document_of(item["id"]))  # (QMSum's q_test_40 and _41: one)
            yield {"id": item["id"], "source_id": source,
                   "system": "seed" if item["id"].endswith("_og") else "edit", "source": item["doc"],
                   "summary": item["summary"], "score": float(label), "split": split, "dataset": domain,
                   "meta": {"edit_types": _edit_types(item.get("edit_types", []), where, file),
                            "release": SUMMEDITS_RELEASE,
                            "original_summary": item.get("original_summary")
                            if isinstance(item.get("original_summary"), str) else None}}


def read_summedits(path: str | os.PathLike[str]) -> dict[str, pl.DataFrame]:
    """The tables of SummEdits (its items as labelled-summaries records, through that format's checks and
    tables).

    Parameters
    ----------
    path : str or os.PathLike
        A SummEdits directory of ``summedits_<domain>.json[.gz]`` files, or one such file.

    Returns
    -------
    dict of str to polars.DataFrame
        The tables read (``runs``, ``steps``, ``compactions``, and the others the format carries), validated.
    """
    from workbench.adapters._labelled_summaries import check_summary, records_to_tables

    checked = []
    for record in summedits_records(path):
        try:
            checked.append(check_summary(record))
        except SchemaError as err:
            raise err.located(str(path), f"item {record['id']}") from None
    return records_to_tables(checked)


__all__ = ["read_summedits"]
