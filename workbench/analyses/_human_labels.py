"""Judges checked against real human labels: FRANK's published evaluation reproduced, and the workbench's judges
placed in it with intervals (``notebooks/human_labels.py``).

FRANK (Pagnoni, Balachandran and Tsvetkov, NAACL 2021) scores a metric by its partial correlation with the human
``Factuality`` of each summary, controlling for the system that wrote it
(:func:`workbench.stats.partial_correlation`), on the valid, test or all split of either or both
data sets. :func:`frank_table` computes that table from FRANK's own files; :func:`correlation_table` computes it
for any summary frame (FRANK's metrics, the workbench's judges aggregated per summary, a user's own scores).

What FRANK does not publish, added here: article-bootstrap intervals (:func:`correlation_intervals`: the summaries
of one article share it, so an interval resamples articles and refits the system adjustment in each resample),
the Williams test of a judge against each baseline beside the article-bootstrap interval of the difference
(:func:`williams_table`), and entry-level AUROC against sentence labels (:func:`entry_auroc`) and summary-level
AUROC of ``Factuality == 1`` (:func:`summary_auroc`, an approximation of TRUE's protocol, which needs FRANK's
per-sentence annotation file). FRANK's "no error" covers every error type (grammar, coreference, discourse links
too), so it is broader than "supported by the source".
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from workbench.stats._bootstrap import AUROC_MIN_CLASS, DEFAULT_N_BOOT, INTERVAL_SCHEMA, Seed, auroc_ci
from workbench.stats._correlation import (ALTERNATIVES, PartialCorrelation, correlation_ci, correlation_difference_ci,
                                           partial_correlation, partial_correlation_ci, williams_test)

__all__ = ["AGGREGATIONS", "FRANK_PUBLISHED", "choose_aggregation", "compare_with_published", "correlation_intervals",
           "correlation_table", "entry_auroc", "frank_frame", "frank_table", "metric_column", "oriented",
           "published_frank", "summary_auroc", "summary_frame", "summary_scores", "williams_table"]

#: the splits FRANK's script evaluates (``--split``)
SPLITS = ("all", "valid", "test")
#: how a summary's sentence scores become the summary's score
AGGREGATIONS = ("mean", "min")
#: FRANK's numbers as its data README gives them (computed by FRANK's script from its two JSON files)
FRANK_PUBLISHED = Path(__file__).resolve().parents[2] / "data" / "published" / "frank_correlations.csv"


def metric_column(name: str) -> str:
    """The run column an imported metric's scores are in (:mod:`workbench.adapters._labelled_summaries`).

    Parameters
    ----------
    name : str
        The metric's name.

    Returns
    -------
    str
        Its column in the runs table.
    """
    from workbench.adapters._labelled_summaries import run_column

    return run_column("metric_", name)


# ---------------------------------------------------------------------------
# one row per summary


def summary_scores(entries: pl.DataFrame | pl.LazyFrame, scores: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """Each summary's (run's) judge scores aggregated over its sentences: ``run_id``, ``judge``, ``mean``, ``min``
    and ``sentences`` (the entries with a usable score; the first repeat of each).

    Parameters
    ----------
    entries : polars.DataFrame or polars.LazyFrame
        The entries table.
    scores : polars.DataFrame or polars.LazyFrame
        The scores table.

    Returns
    -------
    polars.DataFrame
        One row per (run, judge) with the columns above.
    """
    s = scores.lazy()
    if "repeat" in s.collect_schema().names():
        s = s.filter(pl.col("repeat").fill_null(0) == 0)
    # sorted before aggregating: a mean's last bit depends on the order it adds in, and a join's order is not fixed
    return (s.select("entry_id", "judge", "score").join(entries.lazy().select("entry_id", "run_id"), on="entry_id")
            .sort("run_id", "judge", "entry_id")
            .group_by("run_id", "judge", maintain_order=True)
            .agg(pl.col("score").mean().alias("mean"), pl.col("score").min().alias("min"),
                 pl.col("score").count().alias("sentences"))
            .collect(engine="in-memory"))


def summary_frame(runs: pl.DataFrame | pl.LazyFrame, aggregated: pl.DataFrame | None = None,
                  metrics: Sequence[str] = (), targets: Sequence[str] = ()) -> pl.DataFrame:
    """One row per summary: ``run_id``, ``source_id`` (the cluster), ``system``, ``dataset``, ``split``,
    ``human_score``, each other human target of ``targets`` (a runs column, under its own name), a column per named
    imported metric (under its own name) and, from :func:`summary_scores`, ``JUDGE (mean)`` and ``JUDGE (min)``
    per judge. Sorted by run id.

    Parameters
    ----------
    runs : polars.DataFrame or polars.LazyFrame
        The runs table of an imported labelled benchmark.
    aggregated : polars.DataFrame, optional
        :func:`summary_scores` of its entries.
    metrics : sequence of str, default ()
        Imported metrics to carry.
    targets : sequence of str, default ()
        Other runs columns to carry as human targets.

    Returns
    -------
    polars.DataFrame
        One row per summary with the columns above.
    """
    have = runs.lazy().collect_schema().names()
    cols = [pl.col("run_id"), pl.col("scenario_id").alias("source_id"), pl.col("method").alias("system"),
            (pl.col("subset") if "subset" in have else pl.lit(None, pl.Utf8)).alias("dataset"),
            (pl.col("split") if "split" in have else pl.lit(None, pl.Utf8)).alias("split"),
            (pl.col("human_score") if "human_score" in have else pl.lit(None, pl.Float64)).alias("human_score")]
    cols += [pl.col(t).cast(pl.Float64) for t in targets if t != "human_score"]
    cols += [pl.col(metric_column(m)).cast(pl.Float64).alias(m) for m in metrics]
    frame = runs.lazy().select(cols).collect()
    if aggregated is not None and aggregated.height:
        for judge in aggregated.get_column("judge").unique().sort().to_list():
            part = aggregated.filter(pl.col("judge") == judge).select(
                "run_id", *(pl.col(a).alias(f"{judge} ({a})") for a in AGGREGATIONS))
            frame = frame.join(part, on="run_id", how="left", maintain_order="left")
    return frame.sort("run_id")


def oriented(frame: pl.DataFrame, variables: pl.DataFrame | None, metrics: Sequence[str]) -> tuple[pl.DataFrame,
                                                                                                   list[str]]:
    """``frame`` with every metric of ``metrics`` that the data declares lower-is-better (its ``variables`` table,
    ``direction == "lower"``) negated, so that a higher score means better for every score (an AUROC of 0.2 is then
    a bad metric, not a good one read backwards), and the metrics negated.

    Parameters
    ----------
    frame : polars.DataFrame
        A :func:`summary_frame`.
    variables : polars.DataFrame, optional
        The ``variables`` table of a labelled-summaries import (None: no directions declared).
    metrics : sequence of str
        The metric columns of ``frame``.

    Returns
    -------
    tuple of (polars.DataFrame, list of str)
        The oriented frame and the metrics it negated.
    """
    if variables is None or not variables.height:
        return frame, []
    lower = [name for name, kind, direction in variables.select("name", "kind", "direction").iter_rows()
             if kind == "metric" and direction == "lower" and name in metrics]
    return frame.with_columns([-pl.col(m) for m in lower]), lower


def _subset(frame: pl.DataFrame, split: str, dataset: str | None) -> pl.DataFrame:
    if split not in SPLITS:
        raise ValueError(f"split: expected one of {list(SPLITS)}, got {split!r}")
    out = frame if split == "all" else frame.filter(pl.col("split") == split)
    return out if dataset is None else out.filter(pl.col("dataset") == dataset)


# ---------------------------------------------------------------------------
# FRANK's table


def frank_frame(path: str | os.PathLike[str], metrics: Sequence[str] | None = None) -> pl.DataFrame:
    """FRANK's two files joined as its script joins them (``hash`` and ``model_name``, one to one): a
    :func:`summary_frame` with the named metrics (default FRANK's ten) under their own names, straight from
    ``human_annotations.json`` and ``baseline_factuality_metrics_outputs.json`` (or their ``.gz`` copies).

    Parameters
    ----------
    path : str or os.PathLike
        FRANK's data directory.
    metrics : sequence of str, optional
        The metric columns; FRANK's ten by default.

    Returns
    -------
    polars.DataFrame
        One row per annotated summary.

    References
    ----------
    FRANK, ``evaluation/evaluate.py``.
    """
    from workbench.adapters._frank import DEFAULT_METRICS, read_json

    path = Path(path)
    metrics = tuple(metrics or DEFAULT_METRICS)
    human = read_json(path / "human_annotations.json")
    scores = {(r["hash"], r["model_name"]): r for r in read_json(path / "baseline_factuality_metrics_outputs.json")}
    rows = []
    for r in human:
        key = (r["hash"], r["model_name"])
        if key not in scores:
            raise ValueError(f"{path}: no metric scores for article {key[0]} system {key[1]}")
        missing = [m for m in metrics if m not in scores[key]]
        if missing:
            raise ValueError(f"{path}: no metric {missing[0]!r} in the score file (it has "
                             f"{sorted(k for k in scores[key] if k not in ('hash', 'model_name', 'dataset', 'split'))})")
        rows.append({"run_id": f"{key[1]}:{key[0]}", "source_id": key[0], "system": key[1], "dataset": r["dataset"],
                     "split": r["split"], "human_score": r["Factuality"],
                     **{m: scores[key][m] for m in metrics}})
    schema = {"run_id": pl.Utf8, "source_id": pl.Utf8, "system": pl.Utf8, "dataset": pl.Utf8, "split": pl.Utf8,
              "human_score": pl.Float64, **{m: pl.Float64 for m in metrics}}
    return pl.DataFrame(rows, schema=schema).sort("run_id")


def correlation_table(frame: pl.DataFrame, metrics: Sequence[str], *, splits: Sequence[str] = SPLITS,
                      datasets: Sequence[str | None] = (None,), human: str = "human_score",
                      control: str | None = "system", paired: bool = True) -> pl.DataFrame:
    """Each metric's correlation with ``human`` per split and data set (None: every data set), on the rows where
    every compared score exists (``paired``, the default) or on each metric's own rows (``paired=False``: how a
    published table such as FRANK's drops missing values, metric by metric).

    With ``control`` (a column; FRANK's is the system) the correlations are partial Pearson and Spearman, each
    variable residualised on ``control`` (FRANK's protocol); with ``control=None`` they are plain Pearson, Spearman
    and Kendall's tau-b (``kendall`` is null for a partial correlation: no reference exists for it here). Columns
    ``split, dataset, metric, n, n_missing, pearson, pearson_p, pearson_p_adjusted, spearman, spearman_p,
    spearman_p_adjusted, kendall, kendall_p, control, paired``; ``n`` counts the rows used and ``n_missing`` the rows
    of the subset left out (the metric's own missing values, and when paired every other metric's and the human
    score's). ``*_p`` is FRANK's p (``n - 2`` degrees of freedom, as its script); ``*_p_adjusted`` takes away the
    control's (``n - 2 - k``, k = systems - 1; pingouin's and OLS's), and is the one to test with
    (:class:`workbench.stats.PartialCorrelation`); without a control the two are equal.

    Parameters
    ----------
    frame : polars.DataFrame
        A :func:`summary_frame` or :func:`frank_frame`.
    metrics : sequence of str
        The metric columns.
    splits : sequence of str, default ("all", "valid", "test")
        The splits.
    datasets : sequence of str or None, default (None,)
        The data sets; None for all.
    human : str, default "human_score"
        The human judgement column (the target).
    control : str or None, default "system"
        The category controlled for; None for plain correlations.
    paired : bool, default True
        Every row of one (split, dataset) on the same summaries.

    Returns
    -------
    polars.DataFrame
        One row per (split, dataset, metric) with the columns above.

    References
    ----------
    FRANK, section 6 and ``evaluation/evaluate.py`` (partial, ``paired=False``).
    """
    from workbench.stats._correlation import plain_correlation

    rows = []
    for split in splits:
        for dataset in datasets:
            part = _subset(frame, split, dataset)
            target = _finite(part.get_column(human))
            ok = {m: _finite(part.get_column(m)) & target for m in metrics}
            if control is not None:
                known = part.get_column(control).is_not_null().to_numpy()
                ok = {m: keep & known for m, keep in ok.items()}
            common = np.logical_and.reduce(list(ok.values())) if ok else target
            for m in metrics:
                keep = common if paired else ok[m]
                x, y = part.get_column(m).to_numpy()[keep], part.get_column(human).to_numpy()[keep]
                if control is None:
                    p, s, k = (plain_correlation(x, y, how) for how in ("pearson", "spearman", "kendall"))
                else:
                    c = part.get_column(control).to_numpy()[keep]
                    p, s, k = _partial(x, y, c, "pearson"), _partial(x, y, c, "spearman"), None
                rows.append({"split": split, "dataset": dataset or "both", "metric": m, "n": int(keep.sum()),
                             "n_missing": part.height - int(keep.sum()), "pearson": p.r, "pearson_p": p.p,
                             "pearson_p_adjusted": p.p_adjusted, "spearman": s.r, "spearman_p": s.p,
                             "spearman_p_adjusted": s.p_adjusted, "kendall": None if k is None else k.r,
                             "kendall_p": None if k is None else k.p, "control": control, "paired": paired})
    return pl.DataFrame(rows, schema={"split": pl.Utf8, "dataset": pl.Utf8, "metric": pl.Utf8, "n": pl.Int64,
                                      "n_missing": pl.Int64, "pearson": pl.Float64, "pearson_p": pl.Float64,
                                      "pearson_p_adjusted": pl.Float64, "spearman": pl.Float64,
                                      "spearman_p": pl.Float64, "spearman_p_adjusted": pl.Float64,
                                      "kendall": pl.Float64, "kendall_p": pl.Float64, "control": pl.Utf8,
                                      "paired": pl.Boolean})


def _finite(column: pl.Series) -> np.ndarray:
    """Where a numeric column holds a finite value (null and NaN are missing)."""
    return np.isfinite(column.cast(pl.Float64).fill_null(float("nan")).to_numpy())


def _partial(x: np.ndarray, y: np.ndarray, control: np.ndarray, method: str = "pearson") -> PartialCorrelation:
    """:func:`partial_correlation`, or NaN with the rows counted when fewer than 3 have both values (a small split
    of a user's own data: a row of the table, not an error)."""
    try:
        return partial_correlation(x, y, control, method)
    except ValueError:
        return PartialCorrelation(float("nan"), float("nan"), _pairs(x, y), method)


def _pairs(x: np.ndarray, y: np.ndarray) -> int:
    """How many rows have both values (what a partial correlation uses)."""
    return int((np.isfinite(x.astype(np.float64)) & np.isfinite(y.astype(np.float64))).sum())


def frank_table(path: str | os.PathLike[str], *, splits: Sequence[str] = SPLITS,
                datasets: Sequence[str | None] = (None, "cnndm", "bbc"),
                metrics: Sequence[str] | None = None) -> pl.DataFrame:
    """FRANK's published evaluation from its own files (FRANK's ``evaluation/evaluate.py``
    ``human_metric_correlation``: partial correlation with ``Factuality`` controlling for ``model_name``) for
    every split and data set: :func:`correlation_table` of :func:`frank_frame`, unpaired (each metric on its own
    rows, as the published table is). ``metrics`` defaults to the ten
    FRANK's script reports; any other metric column of the score file on request.

    Parameters
    ----------
    path : str or os.PathLike
        FRANK's data directory.
    splits : sequence of str, default ("all", "valid", "test")
        The splits.
    datasets : sequence of str or None, default (None, "cnndm", "bbc")
        The data sets; None for both.
    metrics : sequence of str, optional
        The metric columns; FRANK's ten by default.

    Returns
    -------
    polars.DataFrame
        :func:`correlation_table`'s columns.

    References
    ----------
    FRANK, ``evaluation/evaluate.py`` (``human_metric_correlation``).
    """
    frame = frank_frame(path, metrics)
    return correlation_table(frame, [c for c in frame.columns if c not in
                                     ("run_id", "source_id", "system", "dataset", "split", "human_score")],
                             splits=splits, datasets=datasets, paired=False)  # as FRANK's script: per metric


def published_frank() -> pl.DataFrame:
    """FRANK's three-decimal table as its data README gives it (``data/published/frank_correlations.csv``).

    Returns
    -------
    polars.DataFrame
        ``split``, ``dataset``, ``metric``, ``pearson``, ``spearman``.

    References
    ----------
    FRANK's data README (the correlation table).
    """
    return pl.read_csv(FRANK_PUBLISHED)


# ---------------------------------------------------------------------------
# what the table lacks: intervals, Williams tests, AUROC


def correlation_intervals(frame: pl.DataFrame, metrics: Sequence[str], *, split: str = "test",
                          dataset: str | None = None, correlations: Sequence[str] = ("pearson", "spearman"),
                          human: str = "human_score", control: str | None = "system", clusters: str = "source_id",
                          n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0, level: float = 0.95,
                          paired: bool = True) -> pl.DataFrame:
    """Each metric's partial Pearson and Spearman correlation with an interval that resamples ``clusters``
    (articles) and refits the system adjustment in every resample
    (:func:`~workbench.stats.partial_correlation_ci`): columns ``split, dataset, metric, correlation`` and the
    interval columns (``estimate, ci_low, ci_high, n, n_boot, level, method, n_missing``). Every metric on the
    summaries that have every metric of ``metrics`` and the human score (``paired``, as :func:`correlation_table`),
    or each on its own (``paired=False``, as a published table).

    Parameters
    ----------
    frame : polars.DataFrame
        A :func:`summary_frame` or :func:`frank_frame`.
    metrics : sequence of str
        The metric columns.
    split : str, default "test"
        The split.
    dataset : str, optional
        The data set; both when None.
    correlations : sequence of str, default ("pearson", "spearman")
        The correlations computed (``"kendall"`` too without a control).
    human : str, default "human_score"
        The human judgement column.
    control : str or None, default "system"
        The category controlled for; None: plain correlations, each with the interval
        :func:`~workbench.stats.correlation_ci` gives (article-clustered, the partial ones' rule).
    clusters : str, default "source_id"
        The resampled cluster column (the articles).
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the intervals.
    paired : bool, default True
        Every metric on the same summaries.

    Returns
    -------
    polars.DataFrame
        One row per (metric, correlation) with the columns above.
    """
    part = _subset(frame, split, dataset)
    total = part.height
    if paired:
        keep = _finite(part.get_column(human))
        if control is not None:
            keep &= part.get_column(control).is_not_null().to_numpy()
        for m in metrics:
            keep &= _finite(part.get_column(m))
        part = part.filter(pl.Series(keep))
    rows = []
    for m in metrics:
        for kind in correlations:
            x, y = part.get_column(m).to_numpy(), part.get_column(human).to_numpy()
            try:
                row = (correlation_ci(x, y, part.get_column(clusters).to_numpy(), method=kind, n_boot=n_boot,
                                      seed=seed, level=level) if control is None else
                       partial_correlation_ci(x, y, part.get_column(control).to_numpy(),
                                              part.get_column(clusters).to_numpy(), method=kind, n_boot=n_boot,
                                              seed=seed, level=level)).row()
            except ValueError:  # fewer than 3 summaries with both values
                row = {"estimate": None, "ci_low": None, "ci_high": None, "n": _pairs(x, y),
                       "n_boot": n_boot, "level": level, "method": "percentile"}
            used = row["n"]
            row["n_missing"] = total - (used if isinstance(used, int) else 0)  # every summary of the subset not used
            rows.append({"split": split, "dataset": dataset or "both", "metric": m, "correlation": kind, **row})
    return pl.DataFrame(rows, schema={"split": pl.Utf8, "dataset": pl.Utf8, "metric": pl.Utf8,
                                      "correlation": pl.Utf8, **INTERVAL_SCHEMA})


def williams_table(frame: pl.DataFrame, metric: str, baselines: Sequence[str], *, split: str = "test",
                   dataset: str | None = None, human: str = "human_score", control: str = "system",
                   clusters: str = "source_id", n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0,
                   level: float = 0.95, alternative: str = "two-sided") -> pl.DataFrame:
    """``metric`` against each baseline on the summaries both have, every variable residualised on the system (FRANK's
    ``mm-correlation`` mode): Williams' test of ``r(metric) - r(baseline)`` (``t``, ``p``; it takes summaries as
    independent and normal), and beside it the article-clustered test and interval of the same difference
    (:func:`~workbench.stats.correlation_difference_ci`: ``p_cluster``, ``difference``, ``ci_low``, ``ci_high``),
    which holds its size when summaries share an article.

    ``alternative`` is declared, never taken from the data: ``"two-sided"``, ``"greater"`` (the metric's correlation
    exceeds the baseline's) or ``"less"``. ``"frank"`` is FRANK's published protocol: one-sided that the higher of
    the two correlations exceeds the lower, the direction chosen from the data (``higher`` names it); its p is not
    at its nominal level under a true null. Columns ``split, dataset, metric, baseline, n, r_metric, r_baseline,
    r_between, higher, alternative, t, p, p_cluster, difference, ci_low, ci_high, n_boot, level, n_missing``.

    Parameters
    ----------
    frame : polars.DataFrame
        A :func:`summary_frame` or :func:`frank_frame`.
    metric : str
        The metric compared.
    baselines : sequence of str
        The metrics it is compared with.
    split : str, default "test"
        The split.
    dataset : str, optional
        The data set; both when None.
    human : str, default "human_score"
        The human judgement column.
    control : str, default "system"
        The category controlled for.
    clusters : str, default "source_id"
        The resampled cluster column.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the intervals.
    alternative : {"two-sided", "greater", "less", "frank"}, default "two-sided"
        The alternative of both tests (see above).

    Returns
    -------
    polars.DataFrame
        One row per baseline with the columns above.

    References
    ----------
    Williams (1959); Graham and Baldwin (2014); FRANK ``evaluation/evaluate.py`` (``mm-correlation``).
    """
    if alternative not in (*ALTERNATIVES, FRANK_WILLIAMS):
        raise ValueError(f"alternative: expected one of {[*ALTERNATIVES, FRANK_WILLIAMS]}, got {alternative!r}")
    part = _subset(frame, split, dataset)
    rows = []
    for b in baselines:
        both = part.filter(pl.col(metric).is_not_null() & pl.col(b).is_not_null() & pl.col(human).is_not_null()
                           & pl.col(metric).is_not_nan() & pl.col(b).is_not_nan())
        c = both.get_column(control).to_numpy()
        y = both.get_column(human).to_numpy()
        xm, xb = both.get_column(metric).to_numpy(), both.get_column(b).to_numpy()
        r_m, r_b, r_mb = _partial(xm, y, c).r, _partial(xb, y, c).r, _partial(xm, xb, c).r
        higher = metric if r_m >= r_b else b
        # FRANK's protocol tests the higher against the lower, one-sided; otherwise metric - baseline as declared
        first_is_metric, how = (r_m >= r_b, "greater") if alternative == FRANK_WILLIAMS else (True, alternative)
        if both.height > 3 and np.isfinite([r_m, r_b, r_mb]).all():
            r1, r2 = (r_m, r_b) if first_is_metric else (r_b, r_m)
            t, p = williams_test(r1, r2, r_mb, both.height, alternative=how)
            x1, x2 = (xm, xb) if first_is_metric else (xb, xm)
            diff = correlation_difference_ci(x1, x2, y, c, both.get_column(clusters).to_numpy(), n_boot=n_boot,
                                             seed=seed, level=level, alternative=how)
            estimate, low, high = (diff.estimate, diff.ci_low, diff.ci_high) if first_is_metric else (
                -diff.estimate, -diff.ci_high, -diff.ci_low)  # the table's difference is always metric - baseline
            p_cluster = diff.p_value
        else:  # too few summaries for the test
            t = p = p_cluster = estimate = low = high = float("nan")
        rows.append({"split": split, "dataset": dataset or "both", "metric": metric, "baseline": b,
                     "n": both.height, "r_metric": r_m, "r_baseline": r_b, "r_between": r_mb, "higher": higher,
                     "alternative": alternative, "t": t, "p": p, "p_cluster": p_cluster, "difference": estimate,
                     "ci_low": low, "ci_high": high, "n_boot": n_boot, "level": level,
                     "n_missing": part.height - both.height})
    return pl.DataFrame(rows, schema={"split": pl.Utf8, "dataset": pl.Utf8, "metric": pl.Utf8, "baseline": pl.Utf8,
                                      "n": pl.Int64, "r_metric": pl.Float64, "r_baseline": pl.Float64,
                                      "r_between": pl.Float64, "higher": pl.Utf8, "alternative": pl.Utf8,
                                      "t": pl.Float64, "p": pl.Float64, "p_cluster": pl.Float64,
                                      "difference": pl.Float64, "ci_low": pl.Float64, "ci_high": pl.Float64,
                                      "n_boot": pl.Int64, "level": pl.Float64, "n_missing": pl.Int64})


#: :func:`williams_table`'s FRANK protocol: one-sided, the higher correlation first (chosen from the data)
FRANK_WILLIAMS = "frank"


def choose_aggregation(frame: pl.DataFrame, judge: str, *, split: str = "valid", human: str = "human_score",
                       control: str = "system") -> str:
    """The headline aggregation of a judge's sentence scores (:data:`AGGREGATIONS`): the one with the higher
    partial Pearson correlation on ``split`` (FRANK asks to choose on valid and report on test); the first when
    neither is defined there (too few summaries).

    Parameters
    ----------
    frame : polars.DataFrame
        A :func:`summary_frame` or :func:`frank_frame`.
    judge : str
        The judge whose aggregations are compared.
    split : str, default "valid"
        The split the choice is made on.
    human : str, default "human_score"
        The human judgement column.
    control : str, default "system"
        The category controlled for.

    Returns
    -------
    str
        The chosen aggregation (``"mean"`` or ``"min"``).

    References
    ----------
    Pagnoni, Balachandran and Tsvetkov (2021), FRANK, section 6.
    """
    part = _subset(frame, split, None)
    best = {a: _partial(part.get_column(f"{judge} ({a})").to_numpy(), part.get_column(human).to_numpy(),
                        part.get_column(control).to_numpy()).r for a in AGGREGATIONS}
    return max(AGGREGATIONS, key=lambda a: (best[a] if np.isfinite(best[a]) else -np.inf, -AGGREGATIONS.index(a)))


#: the fewest items of each class a group needs for an AUROC (CNN/DM has 3 one-sentence summaries: 2 of one class):
#: the statistics' own floor for an AUROC's interval
MIN_CLASS = AUROC_MIN_CLASS


def _auroc_rows(data: pl.DataFrame, score_columns: Sequence[str], label: str, by: Sequence[str], *,
                clusters: str, n_boot: int, seed: Seed, level: float, paired: bool = True,
                unlabelled: pl.DataFrame | None = None) -> list[dict[str, object]]:
    """Each score's AUROC per group: on the items every score has (``paired``) or on each score's own.
    ``n_missing`` counts every row of the group left out, and a ``reason`` says why whenever any was: without a
    label (``unlabelled``: the group's rows the caller dropped for that) or without a score; a group with too few
    of a class says how many it had before the scores were required."""
    rows: list[dict[str, object]] = []
    groups = [((), data)] if not by else sorted(data.group_by(list(by), maintain_order=True), key=lambda g: str(g[0]))
    for key, part in groups:
        where = dict(zip(by, key, strict=True))
        no_label = 0 if unlabelled is None else unlabelled.filter(
            pl.all_horizontal([pl.col(b) == v for b, v in where.items()]) if where else pl.lit(True)).height
        every = pl.all_horizontal([pl.col(c).is_not_null() & pl.col(c).is_not_nan() for c in score_columns]) \
            if score_columns else pl.lit(True)
        y_all = part.get_column(label).to_numpy().astype(bool)
        for col in score_columns:
            own = pl.col(col).is_not_null() & pl.col(col).is_not_nan()
            keep = part.filter(every if paired else own)
            y = keep.get_column(label).to_numpy().astype(bool)
            no_score = part.height - keep.height
            left = [f"{no_label} without a label" if no_label else "",
                    f"{no_score} without {'every score' if paired else 'this score'}" if no_score else ""]
            left_out = f"{no_label + no_score} left out: " + ", ".join(w for w in left if w) if any(left) else None
            row = {**where, "score": col, "positives": int(y.sum()), "reason": None}
            if min(int(y.sum()), int((~y).sum())) < MIN_CLASS:
                before = (f" ({int(y_all.sum())} and {int((~y_all).sum())} before the scores were required)"
                          if no_score else "")
                rows.append({**row, "estimate": None, "ci_low": None, "ci_high": None, "n": keep.height,
                             "n_missing": no_label + no_score, "n_boot": n_boot, "level": level, "method": None,
                             "reason": f"{int(y.sum())} positive and {int((~y).sum())} negative{before}: an AUROC "
                                       f"needs at least {MIN_CLASS} of each"
                                       + (f"; {left_out}" if left_out else "")})
                continue
            res = auroc_ci(keep.get_column(col).to_numpy(), y, keep.get_column(clusters).to_numpy(), n_boot=n_boot,
                           seed=seed, level=level)
            out = {**row, **res.row(), "n_missing": no_label + no_score}
            if left_out:
                out["reason"] = "; ".join(r for r in (out.get("reason"), left_out) if r)
            rows.append(out)
    return rows


def _auroc_frame(rows: list[dict[str, object]], by: Sequence[str]) -> pl.DataFrame:
    schema: dict[str, pl.DataType] = {**{b: pl.Utf8() for b in by}, "score": pl.Utf8(), "positives": pl.Int64(),
                                      "reason": pl.Utf8(), **INTERVAL_SCHEMA}
    return pl.DataFrame(rows, schema=schema).select(*by, "score", *INTERVAL_SCHEMA, "positives")  # reason: in it


def entry_auroc(gold: pl.DataFrame, entries: pl.DataFrame, scores: pl.DataFrame, frame: pl.DataFrame, *,
                baselines: Sequence[str] = (), by: Sequence[str] = ("dataset",), one_sentence_only: bool = True,
                n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0, level: float = 0.95, paired: bool = True) -> pl.DataFrame:
    """AUROC of each judge's sentence score (and, for one-sentence summaries, each baseline's summary score) against
    the sentences' gold ``support`` labels (``supported`` the positive class; ``unsure`` and ties left out), per
    group of ``by`` (columns of ``frame``), with intervals resampling the summaries' sources (articles). A group
    with fewer than ``MIN_CLASS`` (5) items of either class gets no AUROC, and says why. Every score of a group
    is computed on the sentences every score has (``paired``; ``n_missing`` counts the others), or with
    ``paired=False`` on its own. Columns: the groups, ``score``, the interval columns, ``positives`` and ``reason``.

    Parameters
    ----------
    gold : polars.DataFrame
        Gold labels (``item_id``, ``field``, ``value``).
    entries : polars.DataFrame
        The entries table.
    scores : polars.DataFrame
        The scores table.
    frame : polars.DataFrame
        A :func:`summary_frame` (the groups and the baselines' summary scores).
    baselines : sequence of str, default ()
        Summary-level metrics scored for one-sentence summaries.
    by : sequence of str, default ("dataset",)
        Columns of ``frame`` that define the groups.
    one_sentence_only : bool, default True
        Score the baselines on one-sentence summaries only.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the intervals.
    paired : bool, default True
        Every score on the same sentences.

    Returns
    -------
    polars.DataFrame
        One row per (group, score) with the columns above.
    """
    labelled = (gold.filter((pl.col("field") == "support") & pl.col("value").is_in(["supported", "unsupported"]))
                .select(pl.col("item_id").alias("entry_id"), (pl.col("value") == "supported").alias("label")))
    sentences = entries.lazy().select("entry_id", "run_id").collect()
    per_run = sentences.group_by("run_id").len()
    data = labelled.join(sentences, on="entry_id").join(per_run, on="run_id")
    if one_sentence_only:
        data = data.filter(pl.col("len") == 1)
    s = scores.filter(pl.col("repeat").fill_null(0) == 0) if "repeat" in scores.columns else scores
    judges = sorted(s.get_column("judge").unique().to_list())
    for judge in judges:
        data = data.join(s.filter(pl.col("judge") == judge).select("entry_id", pl.col("score").alias(judge)),
                         on="entry_id", how="left")
    data = data.join(frame.select("run_id", "source_id", *(c for c in by if c not in ("run_id",)), *baselines),
                     on="run_id").sort("entry_id")
    rows = _auroc_rows(data, [*judges, *baselines], "label", by, clusters="source_id", n_boot=n_boot, seed=seed,
                       level=level, paired=paired)
    return _auroc_frame(rows, by)


def summary_auroc(frame: pl.DataFrame, metrics: Sequence[str], *, by: Sequence[str] = ("dataset",),
                  split: str = "all", human: str = "human_score", n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0,
                  level: float = 0.95, paired: bool = True) -> pl.DataFrame:
    """AUROC of each metric against ``human == 1`` (a summary with no sentence in error), per group of ``by``, with
    intervals resampling articles: an approximation of TRUE's protocol (Honovich et al. 2022, which labels a
    summary by per-sentence majorities of FRANK's sentence file, not in this data). Every metric of a group on the
    summaries every metric has (``paired``, with ``n_missing``), or each on its own (``paired=False``).

    Parameters
    ----------
    frame : polars.DataFrame
        A :func:`summary_frame` or :func:`frank_frame`.
    metrics : sequence of str
        The metric columns.
    by : sequence of str, default ("dataset",)
        Columns that define the groups.
    split : str, default "all"
        The split.
    human : str, default "human_score"
        The human judgement column.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the intervals.
    paired : bool, default True
        Every metric on the same summaries.

    Returns
    -------
    polars.DataFrame
        One row per (group, metric) with the interval columns.

    References
    ----------
    Honovich, O. et al. (2022). TRUE: re-evaluating factual consistency evaluation. NAACL.
    """
    rows = _subset(frame, split, None)
    part = rows.filter(pl.col(human).is_not_null()).with_columns((pl.col(human) == 1).alias("_consistent"))
    return _auroc_frame(_auroc_rows(part, metrics, "_consistent", by, clusters="source_id", n_boot=n_boot,
                                    seed=seed, level=level, paired=paired,
                                    unlabelled=rows.filter(pl.col(human).is_null())), by)


def compare_with_published(table: pl.DataFrame, published: pl.DataFrame | None = None) -> pl.DataFrame:
    """:func:`correlation_table` beside FRANK's published three-decimal numbers: per split, data set and metric,
    ``pearson`` and ``spearman`` as computed, as published, and the differences (the published ones are rounded
    to three decimals, so a difference under 0.0005 is agreement).

    Parameters
    ----------
    table : polars.DataFrame
        A :func:`correlation_table` or :func:`frank_table`.
    published : polars.DataFrame, optional
        The published table; :func:`published_frank` by default.

    Returns
    -------
    polars.DataFrame
        One row per (split, dataset, metric) with the computed, published and differing values.
    """
    published = published_frank() if published is None else published
    joined = table.join(published.rename({"pearson": "pearson_published", "spearman": "spearman_published"}),
                        on=["split", "dataset", "metric"], how="inner", maintain_order="left")
    return joined.with_columns((pl.col("pearson") - pl.col("pearson_published")).alias("pearson_difference"),
                               (pl.col("spearman") - pl.col("spearman_published")).alias("spearman_difference"))
