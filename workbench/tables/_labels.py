"""Labels as the analyses use them: the latest label per annotator and round, and one gold label per item.

Pure functions over the ``labels`` table (``workbench.tables._schema``); the store that writes labels
is :class:`workbench.annotate.AnnotationStore`.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl


def latest_labels(labels: pl.DataFrame) -> pl.DataFrame:
    """The latest label per (item, annotator, round, field): by ``labeled_at``, then by row order (labels that were
    never stored, as a reader returns them, have no ``labeled_at``: row order alone).

    Parameters
    ----------
    labels : polars.DataFrame
        A labels table.

    Returns
    -------
    polars.DataFrame
        One row per (item, annotator, round, field).
    """
    if not labels.height:
        return labels
    if "labeled_at" not in labels.columns:
        labels = labels.with_columns(pl.lit(None, dtype=pl.Utf8).alias("labeled_at"))
    return (labels.with_row_index("_order")
            .sort(["labeled_at", "_order"], nulls_last=False)
            .group_by(["item_id", "annotator", "round", "field"], maintain_order=True).last()
            .drop("_order"))


def one_question(labels: pl.DataFrame) -> str | None:
    """The question every label of ``labels`` answered (None: SJC's agent question, the protocol's), per field;
    a :class:`~workbench.errors.SchemaError` when labels of one field answered different questions: pooling them
    (agreement, gold labels, a judge's validation) would mix two questions' answers."""
    from workbench.errors import SchemaError

    if "question" not in labels.columns or not labels.height:
        return None
    asked = labels.select("field", pl.col("question").fill_null("")).unique().sort("field", "question")
    for (field,), group in asked.group_by("field", maintain_order=True):
        if group.height > 1:
            shown = [q or "SJC's agent question (none stated)" for q in group.get_column("question").to_list()]
            raise SchemaError(field="question", expected="one question per field: labels that answered different "
                              "questions are never pooled (keep them in separate stores)",
                              got=f"{group.height} questions for {field!r}: " + "; ".join(repr(q[:80]) for q in shown))
    questions = [q for q in asked.get_column("question").unique().to_list() if q]
    return questions[0] if len(questions) == 1 else None


def gold_labels(labels: pl.DataFrame, *, prefer: Sequence[str] = ("adjudicated",)) -> pl.DataFrame:
    """One label per (item, field): the adjudicated one if any, else the latest round's majority.

    Returns ``item_id``, ``field``, ``value``. Annotators named in ``prefer`` win outright. A skipped label (a null
    value) is no vote: an item only skipped has no gold label, and skips never outvote labels. ``unsure`` is a
    vote like any value (the AUROC tables and calibration leave an ``unsure`` gold label out, and count it).

    Parameters
    ----------
    labels : polars.DataFrame
        Labels in the labels-table schema.
    prefer : sequence of str, default ("adjudicated",)
        Annotators whose label wins outright.

    Returns
    -------
    polars.DataFrame
        ``item_id``, ``field``, ``value``.

    Examples
    --------
    >>> import polars as pl
    >>> from workbench.tables import gold_labels
    >>> labels = pl.DataFrame({"item_id": ["e1", "e1", "e1"], "annotator": ["alice", "bob", "adjudicated"], "round": [1, 1, 1], "field": ["support"] * 3, "value": ["supported", "unsupported", "unsupported"]})
    >>> gold_labels(labels).select("item_id", "field", "value").to_dicts()
    [{'item_id': 'e1', 'field': 'support', 'value': 'unsupported'}]
    """
    one_question(labels)  # never a majority of answers to different questions
    latest = latest_labels(labels).filter(pl.col("value").is_not_null())  # each one's latest; a skip is no vote
    pref = latest.filter(pl.col("annotator").is_in(list(prefer)))
    rest = latest.join(pref.select("item_id", "field"), on=["item_id", "field"], how="anti")
    max_round = rest.group_by("item_id", "field", maintain_order=True).agg(pl.col("round").max().alias("_r"))
    rest = rest.join(max_round, on=["item_id", "field"]).filter(pl.col("round") == pl.col("_r"))
    votes = rest.group_by("item_id", "field", "value", maintain_order=True).agg(pl.len().alias("_n")).sort(
        ["item_id", "field", "_n", "value"], descending=[False, False, True, False])
    majority = votes.group_by("item_id", "field", maintain_order=True).first().select("item_id", "field", "value")
    return pl.concat([pref.select("item_id", "field", "value"), majority]).sort("item_id", "field")


def majority_labels(labels: pl.DataFrame, field: str = "support") -> pl.DataFrame:
    """One row per item of ``field``: the value most of its annotators gave in the latest round (each annotator's
    latest label, ``unsure`` and skipped labels left out), the ``votes`` for it, the ``annotators`` counted and
    whether the top was ``tied``; a tie is counted, never broken: its ``value`` is null. Adjudicated labels are
    not votes (:func:`gold_labels` lets them win outright).

    Parameters
    ----------
    labels : polars.DataFrame
        A labels table.
    field : str, default "support"
        The field.

    Returns
    -------
    polars.DataFrame
        One row per item: ``value``, ``votes``, ``annotators``, ``tied``.
    """
    latest = latest_labels(labels).filter((pl.col("field") == field) & pl.col("value").is_not_null()
                                          & (pl.col("value") != "unsure") & (pl.col("annotator") != "adjudicated"))
    if not latest.height:
        return pl.DataFrame(schema={"item_id": pl.Utf8, "value": pl.Utf8, "votes": pl.Int64, "annotators": pl.Int64,
                                    "tied": pl.Boolean})
    last = latest.group_by("item_id").agg(pl.col("round").max().alias("_r"))
    latest = latest.join(last, on="item_id").filter(pl.col("round") == pl.col("_r"))
    votes = latest.group_by("item_id", "value").agg(pl.len().cast(pl.Int64).alias("votes"))
    summary = votes.group_by("item_id").agg(pl.col("votes").max().alias("_top"), pl.col("votes").sum().alias("annotators"),
                                            (pl.col("votes") == pl.col("votes").max()).sum().alias("_k"))
    top = votes.join(summary, on="item_id").filter(pl.col("votes") == pl.col("_top"))
    out = top.group_by("item_id").agg(pl.col("value").sort().first(), pl.col("votes").first(),
                                      pl.col("annotators").first(), (pl.col("_k").first() > 1).alias("tied"))
    return out.with_columns(pl.when(pl.col("tied")).then(None).otherwise(pl.col("value")).alias("value"),
                            pl.col("annotators").cast(pl.Int64)).sort("item_id")


def label_source(labels: pl.DataFrame) -> str:
    """Where a labels table's labels come from, in words a page can show beside them.

    Parameters
    ----------
    labels : polars.DataFrame
        Labels in the labels-table schema.

    Returns
    -------
    str
        ``simulated annotators (...)`` when every annotator is one of the testbed's (``sim-``), else the
        annotators by name, with ``adjudicated`` when an adjudicator decided some; empty for no labels.
    """
    if not labels.height:
        return ""
    names = sorted(set(labels.get_column("annotator").drop_nulls().to_list()))
    people = [n for n in names if n != "adjudicated"]
    if people and all(n.startswith("sim-") for n in people):
        text = f"simulated annotators ({', '.join(people)})"
    else:
        text = "annotators " + ", ".join(people[:5]) + (f" and {len(people) - 5} more" if len(people) > 5 else "")
    return text + (", adjudicated" if "adjudicated" in names else "")


__all__ = ["gold_labels", "latest_labels", "majority_labels"]
