"""Agreement between annotation rounds or annotators: Cohen's kappa and percent agreement per pair, and for
three or more annotators Fleiss' kappa and Krippendorff's alpha.

``cohen_kappa`` equals ``sklearn.metrics.cohen_kappa_score`` (unweighted); both measures
get scenario-bootstrap intervals from the one engine (SJC Appendix G reports kappa 0.95
on support and 0.88 on correctness between two rounds; Section 3.2 kappa on attributions).
:func:`fleiss_kappa` is ``statsmodels.stats.inter_rater.fleiss_kappa`` on the items every annotator labelled;
:func:`krippendorff_alpha` is the ``krippendorff`` package's nominal alpha, which takes every label (an item two
annotators labelled counts too); :func:`multi_rater_agreement` gives both with scenario-bootstrap intervals.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from workbench.stats._bootstrap import DEFAULT_N_BOOT, INTERVAL_SCHEMA, Seed, bootstrap, missing_mask
from workbench.tables._labels import latest_labels


def labelled_pairs(a: npt.ArrayLike, b: npt.ArrayLike, what: str = "labels") -> tuple[np.ndarray, np.ndarray, int]:
    """The positions where both label sequences hold a label, as text, and how many were left out.

    A null or NaN label is a *skipped* one (the labels schema's null value): it is never a category, and the item it
    belongs to is left out of the pair's comparison and counted.

    Parameters
    ----------
    a, b : array-like
        Two annotators' labels of the same items, in the same order.
    what : str, default "labels"
        The caller's name, for the error.

    Returns
    -------
    tuple
        The two arrays of labels as text, without the skipped positions, and the number of positions left out.
    """
    # a list may mix text with None or NaN (numpy would make NaN the text "nan"): kept as objects; an array as it is
    x, y = (v if isinstance(v, np.ndarray) else np.asarray(v, dtype=object) for v in (a, b))
    if x.shape != y.shape:
        raise ValueError(f"{what}: lengths differ ({len(x)} != {len(y)})")
    keep = ~(missing_mask(x) | missing_mask(y))
    if keep.all():  # the usual case (a bootstrap's every resample): no copy
        return x.astype(str), y.astype(str), 0
    return x[keep].astype(str), y[keep].astype(str), int((~keep).sum())


def cohen_kappa(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """Cohen's kappa of two label sequences over the union of their categories; an item either sequence skipped
    (null or NaN) is left out (``labelled_pairs``).

    Parameters
    ----------
    a, b : array-like
        The two annotators' labels of the same items, in the same order.

    Returns
    -------
    float
        Cohen's kappa; NaN when expected agreement is 1 (one category throughout).

    References
    ----------
    Cohen, J. (1960). A coefficient of agreement for nominal scales. Educ. Psychol. Meas. 20(1), 37-46.
    """
    x, y, _ = labelled_pairs(a, b, "cohen_kappa")
    if len(x) == 0:
        raise ValueError("cohen_kappa: no item labelled by both")
    cats, inv = np.unique(np.concatenate([x, y]), return_inverse=True)
    xi, yi = inv[: len(x)], inv[len(x):]
    k = len(cats)
    conf = np.zeros((k, k))
    np.add.at(conf, (xi, yi), 1.0)
    n = conf.sum()
    po = np.trace(conf) / n
    pe = float((conf.sum(axis=1) @ conf.sum(axis=0)) / n**2)
    if pe == 1.0:
        return float("nan")  # one shared category: undefined, as sklearn's default replace_undefined_by=nan
    return float((po - pe) / (1.0 - pe))


def percent_agreement(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """The share of items on which two label sequences agree (compared as text); an item either sequence skipped
    (null or NaN) is left out (``labelled_pairs``).

    Parameters
    ----------
    a, b : array-like
        The two annotators' labels of the same items, in the same order.

    Returns
    -------
    float
        Equal labels over items, in [0, 1].
    """
    x, y, _ = labelled_pairs(a, b, "percent_agreement")
    if len(x) == 0:
        raise ValueError("percent_agreement: no item labelled by both")
    return float(np.mean(x == y))


#: how every agreement table treats ``unsure`` (its ``unsure_as`` column)
UNSURE_AS = "a category: two sides both unsure agree, unsure against a label disagrees"


def _pair_statistics(pair: pl.DataFrame, clusters: Mapping[str, str] | None, *, n_boot: int, seed: Seed,
                     level: float, n_skipped: int = 0) -> list[dict[str, object]]:
    """Kappa and agreement of one compared pair (columns ``item_id``, ``value``, ``value_b``, skipped items already
    left out): ``statistic``, ``disagreements``, ``n_unsure`` (items either side called ``unsure``), ``unsure_as``
    (``UNSURE_AS``) and the interval columns, resampling ``clusters`` (item -> scenario; else the item).
    ``n_missing`` is ``n_skipped``: the items a side skipped are the ones left out."""
    va, vb = pair.get_column("value").to_numpy(), pair.get_column("value_b").to_numpy()
    cl = np.array([(clusters or {}).get(i, i) for i in pair.get_column("item_id").to_list()])
    unsure = int(((va == "unsure") | (vb == "unsure")).sum())
    return [{"statistic": statistic, "disagreements": int((va != vb).sum()), "n_unsure": unsure,
             "unsure_as": UNSURE_AS,
             **bootstrap(metric, va, vb, clusters=cl, n_boot=n_boot, seed=seed, level=level, method=how,
                         n_missing=n_skipped).row()}
            for statistic, metric, how in (("kappa", cohen_kappa, KAPPA_METHOD),
                                           ("agreement", percent_agreement, AGREEMENT_METHOD))]


#: percent agreement's interval: the jackknife t on the logit of the share, chosen by
#: benchmarks/bench_interval_coverage.py (issue 60: 90.7-94.7% at 8, 12 and 30 unequal scenarios on three generators,
#: 300 trials a cell, where the percentile interval gave 84.3-92.0%)
AGREEMENT_METHOD = "logit-t"
#: kappa's interval: the jackknife t on Fisher's z, chosen by benchmarks/bench_interval_coverage.py (93.0-94.5% at
#: 8, 12 and 30 unequal scenarios on two generators, where the percentile interval gave 87.8-92.4%)
KAPPA_METHOD = "atanh-t"


def agreement_table(
    labels: pl.DataFrame,
    clusters: Mapping[str, str] | None = None,
    *,
    by: str = "round",
    n_boot: int = DEFAULT_N_BOOT,
    seed: Seed = 0,
    level: float = 0.95,
) -> pl.DataFrame:
    """Kappa and percent agreement per field for every pair of rounds (or annotators).

    ``labels`` in the labels-table schema; the latest label per (item, annotator, round,
    field) counts. Items labeled by both sides of a pair are compared; an item one side skipped (a null value) is
    left out and counted in ``n_skipped`` (``unsure`` is a label: two sides agreeing on it agree). One row per (field,
    pair, ``statistic``) where ``statistic`` is ``kappa`` (Cohen's, equal to
    ``statsmodels.stats.inter_rater.cohens_kappa``) or ``agreement`` (share of equal labels),
    with ``disagreements`` and the interval columns; intervals resample ``clusters`` (item ->
    scenario; an item without one is its own cluster).

    Parameters
    ----------
    labels : polars.DataFrame
        Labels in the labels-table schema.
    clusters : mapping of str to str, optional
        Item id to scenario.
    by : {"round", "annotator"}, default "round"
        The sides compared.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the intervals.

    Returns
    -------
    polars.DataFrame
        One row per (field, pair, statistic) with ``disagreements`` and the interval columns.

    References
    ----------
    Cohen, J. (1960). A coefficient of agreement for nominal scales. Educ. Psychol. Meas. 20(1), 37-46.
    """
    latest = latest_labels(labels)
    key = pl.col(by).cast(pl.Utf8)
    sides = sorted(latest.select(key).unique().to_series().to_list())
    rows = []
    for field in sorted(latest.get_column("field").unique().to_list()):
        f = latest.filter(pl.col("field") == field).with_columns(key.alias("_side"))
        for i, s1 in enumerate(sides):
            for s2 in sides[i + 1:]:
                a = f.filter(pl.col("_side") == s1).group_by("item_id", maintain_order=True).agg(pl.col("value").last())
                b = f.filter(pl.col("_side") == s2).group_by("item_id", maintain_order=True).agg(pl.col("value").last())
                pair, skipped = _both_labelled(a.join(b, on="item_id", suffix="_b").sort("item_id"))
                if pair.height == 0:
                    continue
                rows += [{"field": field, "a": s1, "b": s2, "n_skipped": skipped, **r}
                         for r in _pair_statistics(pair, clusters, n_boot=n_boot, seed=seed, level=level,
                                                   n_skipped=skipped)]
    return pl.DataFrame(rows, schema={"field": pl.Utf8, "a": pl.Utf8, "b": pl.Utf8, "statistic": pl.Utf8,
                                      "disagreements": pl.Int64, "n_skipped": pl.Int64, **_UNSURE_SCHEMA,
                                      **INTERVAL_SCHEMA})


def _both_labelled(pair: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """The items of a joined pair both sides labelled, and how many one side skipped (a null value)."""
    both = pair.filter(pl.col("value").is_not_null() & pl.col("value_b").is_not_null())
    return both, pair.height - both.height


_UNSURE_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {"n_unsure": pl.Int64, "unsure_as": pl.Utf8}
_PAIR_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "field": pl.Utf8, "comparison": pl.Utf8, "group": pl.Utf8, "a": pl.Utf8, "b": pl.Utf8, "statistic": pl.Utf8,
    "disagreements": pl.Int64, "n_skipped": pl.Int64, **_UNSURE_SCHEMA, **INTERVAL_SCHEMA}
_SKIP_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "field": pl.Utf8, "comparison": pl.Utf8, "group": pl.Utf8, "reason": pl.Utf8}


def agreement_pairs(
    labels: pl.DataFrame,
    clusters: Mapping[str, str] | None = None,
    *,
    n_boot: int = DEFAULT_N_BOOT,
    seed: Seed = 0,
    level: float = 0.95,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Agreement that compares like with like, per field: (a) each annotator's rounds against each other
    (``comparison`` = ``within annotator``, ``group`` = the annotator, ``a``/``b`` = rounds), and (b) each pair
    of annotators within each round (``between annotators``, ``group`` = the round, ``a``/``b`` = annotators).

    Returns the table (one row per comparison and ``statistic``, ``kappa`` or ``agreement``, with
    ``disagreements`` and the interval columns; intervals resample ``clusters``, item -> scenario) and the
    comparisons that could not be made, each with its ``reason`` (labeled in one round only, one annotator
    in a round, no item labeled by both sides).

    Parameters
    ----------
    labels : polars.DataFrame
        Labels in the labels-table schema.
    clusters : mapping of str to str, optional
        Item id to scenario; items are their own clusters without it.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the intervals.

    Returns
    -------
    tuple of polars.DataFrame
        The agreement table and the comparisons not made with their ``reason``.
    """
    latest = latest_labels(labels).with_columns(pl.col("round").cast(pl.Utf8).alias("_round"))
    rows: list[dict[str, object]] = []
    skipped: list[dict[str, object]] = []

    def compare(field: str, comparison: str, group: str, f: pl.DataFrame, col: str, s1: str, s2: str) -> None:
        a = f.filter(pl.col(col) == s1).select("item_id", "value")
        b = f.filter(pl.col(col) == s2).select("item_id", pl.col("value").alias("value_b"))
        pair, n_skipped = _both_labelled(a.join(b, on="item_id").sort("item_id"))
        if pair.height == 0:
            why = f"{s1} and {s2} share no labeled item" + (f" ({n_skipped} shared, skipped by one)" if n_skipped
                                                            else "")
            skipped.append({"field": field, "comparison": comparison, "group": group, "reason": why})
            return
        rows.extend({"field": field, "comparison": comparison, "group": group, "a": s1, "b": s2,
                     "n_skipped": n_skipped, **r}
                    for r in _pair_statistics(pair, clusters, n_boot=n_boot, seed=seed, level=level,
                                              n_skipped=n_skipped))

    for field in sorted(latest.get_column("field").unique().to_list()):
        f = latest.filter(pl.col("field") == field)
        for annotator in sorted(f.get_column("annotator").unique().to_list()):
            g = f.filter(pl.col("annotator") == annotator)
            rounds = sorted(g.get_column("_round").unique().to_list(), key=int)
            if len(rounds) < 2:
                skipped.append({"field": field, "comparison": "within annotator", "group": annotator,
                                "reason": f"labeled in round {rounds[0]} only"})
            for i, r1 in enumerate(rounds):
                for r2 in rounds[i + 1:]:
                    compare(field, "within annotator", annotator, g, "_round", r1, r2)
        for rnd in sorted(f.get_column("_round").unique().to_list(), key=int):
            g = f.filter(pl.col("_round") == rnd)
            annotators = sorted(g.get_column("annotator").unique().to_list())
            if len(annotators) < 2:
                skipped.append({"field": field, "comparison": "between annotators", "group": f"round {rnd}",
                                "reason": f"only {annotators[0]} labeled round {rnd}"})
            for i, a1 in enumerate(annotators):
                for a2 in annotators[i + 1:]:
                    compare(field, "between annotators", f"round {rnd}", g, "annotator", a1, a2)
    return pl.DataFrame(rows, schema=_PAIR_SCHEMA), pl.DataFrame(skipped, schema=_SKIP_SCHEMA)


def disagreements(labels: pl.DataFrame, *, by: str = "round") -> pl.DataFrame:
    """Items whose latest labels differ between sides, one row per (item, field) with every value.

    Parameters
    ----------
    labels : polars.DataFrame
        Labels in the labels-table schema.
    by : {"round", "annotator"}, default "round"
        The sides compared.

    Returns
    -------
    polars.DataFrame
        One row per (item, field) whose latest labels differ.
    """
    latest = latest_labels(labels).filter(pl.col("value").is_not_null())  # a skip is no label: never a disagreement
    grouped = latest.group_by("item_id", "field", maintain_order=True).agg(
        pl.col("value").n_unique().alias("_k"),
        pl.concat_str([pl.col(by).cast(pl.Utf8), pl.lit("="), pl.col("value")]).alias("values"))
    return grouped.filter(pl.col("_k") > 1).drop("_k").sort("item_id", "field")


def _codes(ratings: npt.ArrayLike) -> np.ndarray:
    r = np.asarray(ratings, dtype=np.float64)
    if r.ndim != 2:
        raise ValueError(f"ratings: expected items x annotators, got {r.ndim} dimension(s)")
    return r


def fleiss_kappa(ratings: npt.ArrayLike) -> float:
    """Fleiss' kappa of an (items x annotators) array of category codes (NaN: not labelled), over the items every
    annotator labelled (statsmodels' ``fleiss_kappa`` of ``aggregate_raters``). Fewer than two such items, or one
    category in all of them, is undefined (NaN).

    Parameters
    ----------
    ratings : array-like
        Items x annotators category codes, NaN where not labelled.

    Returns
    -------
    float
        Fleiss' kappa, or NaN when undefined.

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. Psychol. Bull. 76(5), 378-382.
    """
    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    r = _codes(ratings)
    full = r[~np.isnan(r).any(axis=1)]
    if len(full) < 2 or r.shape[1] < 2:
        return float("nan")
    table, _ = aggregate_raters(full.astype(np.int64))
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(sm_fleiss(table))


def krippendorff_alpha(ratings: npt.ArrayLike) -> float:
    """Krippendorff's nominal alpha of an (items x annotators) array of category codes (NaN: not labelled), every
    label counted (the ``krippendorff`` package). Undefined (NaN) when no item has two labels or all labels agree on
    one category.

    Parameters
    ----------
    ratings : array-like
        Items x annotators category codes, NaN where not labelled.

    Returns
    -------
    float
        Krippendorff's nominal alpha, or NaN when undefined.

    References
    ----------
    Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Annenberg School for Communication.
    """
    import krippendorff

    r = _codes(ratings)
    pairable = (~np.isnan(r)).sum(axis=1) >= 2
    values = r[pairable][~np.isnan(r[pairable])]
    if not pairable.any() or len(np.unique(values)) < 2:
        return float("nan")
    return float(krippendorff.alpha(reliability_data=r.T, level_of_measurement="nominal"))


_MULTI_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "field": pl.Utf8, "round": pl.Utf8, "annotators": pl.Int64, "annotator_set": pl.Utf8, "complete_items": pl.Int64,
    "statistic": pl.Utf8, **INTERVAL_SCHEMA}

#: the most annotator sets :func:`multi_rater_agreement` reports per field and round (the largest first)
MAX_ANNOTATOR_SETS = 12


def multi_rater_agreement(labels: pl.DataFrame, clusters: Mapping[str, str] | None = None, *,
                          n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0, level: float = 0.95,
                          min_annotators: int = 3) -> pl.DataFrame:
    """Per field, round and set of at least ``min_annotators`` annotators: Fleiss' kappa and Krippendorff's alpha
    over the items every annotator of the set labelled (``n``), each with a percentile interval resampling
    ``clusters`` (item -> scenario; an item without one is its own cluster).

    The sets are those whose members labelled some item together (each item's labellers, and every such group
    of ``min_annotators`` or more), so an annotator who labels a few items of a crowd's data set adds a row for
    the set with them, over those few, and never replaces the crowd's own row over everything it labelled (issue
    79: three workers' kappa over 2,500 items gave way to a kappa over the 10 a user added). At most
    ``MAX_ANNOTATOR_SETS`` sets a field and round, those labelling the most items together first.

    Parameters
    ----------
    labels : polars.DataFrame
        Labels in the labels-table schema.
    clusters : mapping of str to str, optional
        Item id to scenario.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the intervals.
    min_annotators : int, default 3
        The fewest annotators a set holds.

    Returns
    -------
    polars.DataFrame
        One row per (field, round, annotator set, statistic): ``annotators`` (its size), ``annotator_set`` (the
        names, comma-separated), ``complete_items`` (= ``n``) and the interval columns.
    """
    latest = latest_labels(labels)
    rows: list[dict[str, object]] = []
    for field in sorted(latest.get_column("field").unique().to_list()):
        f = latest.filter(pl.col("field") == field)
        for rnd in sorted(f.get_column("round").unique().to_list()):
            g = f.filter((pl.col("round") == rnd) & pl.col("value").is_not_null())
            annotators = sorted(g.get_column("annotator").unique().to_list())
            if len(annotators) < min_annotators:
                continue
            cats = {v: k for k, v in enumerate(sorted(g.get_column("value").unique().to_list()))}
            wide = g.pivot("annotator", index="item_id", values="value", aggregate_function="last").sort("item_id")
            matrix = np.array([[np.nan if wide[a][i] is None else cats[wide[a][i]] for a in annotators]
                               for i in range(wide.height)], dtype=np.float64)
            labelled = ~np.isnan(matrix)
            patterns: dict[tuple[int, ...], int] = {}
            for row in labelled:
                who = tuple(np.flatnonzero(row).tolist())
                if len(who) >= min_annotators:
                    patterns[who] = patterns.get(who, 0) + 1
            sets = {who: int(labelled[:, list(who)].all(axis=1).sum()) for who in patterns}
            chosen = sorted(sets, key=lambda who: (-sets[who], -len(who), who))[:MAX_ANNOTATOR_SETS]
            items = wide.get_column("item_id").to_numpy()
            for who in chosen:
                complete = labelled[:, list(who)].all(axis=1)
                sub = matrix[complete][:, list(who)]
                cl = np.array([(clusters or {}).get(i, i) for i in items[complete]])
                for statistic, metric in (("fleiss_kappa", fleiss_kappa), ("krippendorff_alpha", krippendorff_alpha)):
                    res = bootstrap(metric, sub, clusters=cl, n_boot=n_boot, seed=seed, level=level)
                    rows.append({"field": field, "round": str(rnd), "annotators": len(who),
                                 "annotator_set": ", ".join(annotators[k] for k in who),
                                 "complete_items": int(complete.sum()), "statistic": statistic, **res.row()})
    return pl.DataFrame(rows, schema=_MULTI_SCHEMA)


@dataclass(frozen=True)
class AgreementReport:
    """Agreement per field and pair (:func:`agreement_pairs`), the pairs not compared and why, and what the
    intervals resample; ``str(report)`` is the printout of ``workbench agree``."""

    table: pl.DataFrame
    skipped: pl.DataFrame
    clustered: bool
    multi: pl.DataFrame | None = None

    def lines(self) -> list[str]:
        out = ["intervals resample " + ("scenarios (from the sample's scenario_id)" if self.clustered else
                                        "items (no sample with scenario_id found; pass --sample)"),
               f"unsure is {UNSURE_AS}; n counts the items both sides labelled, an item one side skipped is left "
               "out (n_missing = n_skipped)"]
        for (field, comparison, group, a, b), pair in self.table.group_by("field", "comparison", "group", "a", "b",
                                                                          maintain_order=True):
            stat = {r["statistic"]: r for r in pair.iter_rows(named=True)}
            ag, ka = stat["agreement"], stat["kappa"]
            what = f"{group}: round {a} vs round {b}" if comparison == "within annotator" else f"{group}: {a} vs {b}"
            notes = ([f"{ag['n_skipped']} skipped by one side, left out"] if ag["n_skipped"] else []) + (
                [f"{ag['n_unsure']} with unsure on a side"] if ag["n_unsure"] else [])
            left = f" ({'; '.join(notes)})" if notes else ""
            out.append(f"{field:<10} {comparison:<18} {what}: n={ag['n']}{left} kappa={ka['estimate']:.3f} "
                       f"[{ka['ci_low']:.3f}, {ka['ci_high']:.3f}] agreement={ag['estimate']:.3f} "
                       f"[{ag['ci_low']:.3f}, {ag['ci_high']:.3f}] disagreements={ag['disagreements']}")
        for row in self.skipped.iter_rows(named=True):
            out.append(f"{row['field']:<10} {row['comparison']:<18} {row['group']}: not compared ({row['reason']})")
        for (field, rnd, members), part in (self.multi.group_by("field", "round", "annotator_set",
                                                                maintain_order=True)
                                            if self.multi is not None else ()):
            stat = {r["statistic"]: r for r in part.iter_rows(named=True)}
            first = next(iter(stat.values()))
            text = "; ".join(f"{name.replace('_', ' ')}={r['estimate']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
                             for name, r in stat.items())
            out.append(f"{field:<10} {'annotator set':<18} round {rnd}: {members} ({first['annotators']}), "
                       f"n={first['n']} items all of them labelled: {text}")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


def agreement_report(labels: pl.DataFrame, clusters: Mapping[str, str] | None = None, *, by: str | None = None,
                     n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0) -> AgreementReport:
    """Agreement of every pair of rounds (``by="round"``), of annotators (``by="annotator"``) or both (None),
    with scenario intervals when ``clusters`` maps item ids to scenarios (items are resampled otherwise); with
    three or more annotators in a round, Fleiss' kappa and Krippendorff's alpha too
    (:func:`multi_rater_agreement`).

    Parameters
    ----------
    labels : polars.DataFrame
        Labels in the labels-table schema.
    clusters : mapping of str to str, optional
        Item id to scenario.
    by : {"round", "annotator"}, optional
        The pairs compared; both kinds when None.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.

    Returns
    -------
    AgreementReport
        The tables, the comparisons not made, and what the intervals resample.
    """
    from workbench.tables._labels import one_question

    one_question(labels)  # agreement between answers to different questions means nothing
    table, skipped = agreement_pairs(labels, clusters or None, n_boot=n_boot, seed=seed)
    multi = None
    if by is not None:
        keep = "within annotator" if by == "round" else "between annotators"
        table, skipped = table.filter(pl.col("comparison") == keep), skipped.filter(pl.col("comparison") == keep)
    if by != "round":
        multi = multi_rater_agreement(labels, clusters or None, n_boot=n_boot, seed=seed)
    return AgreementReport(table, skipped, bool(clusters), multi)


__all__ = ["AGREEMENT_METHOD", "agreement_pairs", "agreement_report", "agreement_table", "AgreementReport",
           "cohen_kappa", "disagreements", "fleiss_kappa", "KAPPA_METHOD", "krippendorff_alpha",
           "multi_rater_agreement", "percent_agreement"]
