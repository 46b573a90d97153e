"""Sample files: the items a person labels, written once and read by every labeling interface.

A sample is JSON lines, one item per line (``item_id``, ``text`` and what :func:`workbench.annotate._sampling.
sample_items` attaches: section, task, previous summary, evidence with sources, ``scenario_id``, evaluation
material). ``workbench sample``, the labeling notebook and a labelled-summaries import write them
(:func:`write_sample`); ``workbench label``, the widget, Label Studio's export and agreement read them
(:func:`load_sample`). A store's own samples lie in ``STORE/samples/*.jsonl`` (:func:`store_samples`), and their
items by id (``sample_index``) give agreement its clusters and adjudication its evidence.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from workbench.errors import SchemaError

__all__ = ["load_sample", "store_samples", "write_sample"]


def load_sample(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """A sample file's items (each with a string ``item_id`` and ``text``; ``FILE:LINE`` errors otherwise).

    Parameters
    ----------
    path : str or os.PathLike
        A sample file (JSON lines).

    Returns
    -------
    list of dict
        Its items.
    """
    from workbench._util.jsonl import json_lines

    items = []
    for number, rec in json_lines(Path(path)):
        if not isinstance(rec, dict) or not isinstance(rec.get("item_id"), str) or not isinstance(rec.get("text"), str):
            raise SchemaError(file=str(path), line=number, field="item_id/text", expected="an item with string "
                              "'item_id' and 'text'", got=json.dumps(rec)[:60])
        items.append(rec)
    return items


def write_sample(items: Iterable[Mapping[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write a sample atomically (it appears whole or not at all).

    Parameters
    ----------
    items : iterable of mapping
        The sample's items, one JSON line each (what :func:`sample_items` draws).
    path : str or os.PathLike
        The sample file to write.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    from workbench._util.atomic import write_jsonl

    return write_jsonl((dict(i) for i in items), path)


def store_samples(store: str | os.PathLike[str]) -> list[Path]:
    """The samples of an annotation store that exist: its own (``STORE/samples/*.jsonl``, in name order), then
    those its labelers worked on (``AnnotationStore.keep_sample``: ``workbench label``, the labeling notebook,
    ``labelstudio import --sample``), each once.

    Parameters
    ----------
    store : str or os.PathLike
        The annotation store.

    Returns
    -------
    list of pathlib.Path
        The sample files, each once.
    """
    from workbench.annotate._store import AnnotationStore

    own = sorted((Path(store) / "samples").glob("*.jsonl"))
    kept = [p for p in AnnotationStore(store, read_only=True).kept_samples() if p.is_file()]
    seen: set[Path] = set()
    out = []
    for p in [*own, *kept]:
        if p.resolve() not in seen:
            seen.add(p.resolve())
            out.append(p)
    return out


def sample_index(paths: Sequence[str | os.PathLike[str]] | None = None, *,
                 store: str | os.PathLike[str] | None = None) -> dict[str, dict[str, Any]]:
    """item_id -> item over the sample files ``paths``, else over the store's own samples (a later file's item
    replaces an earlier one's)."""
    files = [Path(p) for p in paths] if paths else (store_samples(store) if store is not None else [])
    out: dict[str, dict[str, Any]] = {}
    for path in files:
        if not path.is_file():
            raise SchemaError("no such file, expected a sample (.jsonl)", file=str(path))
        for item in load_sample(path):
            out[item["item_id"]] = item
    return out


def sample_clusters(items: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """item_id -> scenario of the items that carry one: the clusters agreement intervals resample."""
    return {i: str(it["scenario_id"]) for i, it in items.items() if it.get("scenario_id") is not None}
