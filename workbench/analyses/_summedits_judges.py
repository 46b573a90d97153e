"""Judges validated on SummEdits (Laban et al., EMNLP 2023): AUROC and balanced accuracy per domain, beside the
authors' published rows.

A summary's judge score is the minimum over its sentences (one unsupported sentence makes it inconsistent; the
mean is reported beside it). :func:`summedits_table` gives, per domain and over the eight:

* ``auroc``: the summary scores against the people's labels (consistent = positive) on the ``test`` split, with
  the document-clustered interval of :func:`workbench.stats.auroc_ci` (an item's edits share its document);
* ``balanced_accuracy``: the mean of the two classes' recalls on ``test`` when a summary is called consistent at a
  score of at least ``tau``, ``tau`` chosen on the ``evaluation`` split of the same domain (the threshold that
  maximises its balanced accuracy there, the lowest such), never on ``test``; a judge that answers yes or no (a
  score of 0 or 1, as the zero-shot protocol's) needs no choice, and its ``tau`` is 0.5. The interval resamples
  documents (the jackknife t on the logit, as the AUROC's).

The overall row is the mean of the eight domains' values (the authors' "Overall" averages domains), its interval
resampling documents within each domain. :func:`published_summedits` reads the authors' per-domain balanced
accuracy of 19 models and of people (``data/benchmarks/summedits/README.md``'s table); they are reference points on
the same quantity and data, not numbers to reproduce: no per-item predictions are published.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from workbench._util.project import PROJECT_ROOT
from workbench.stats._bootstrap import DEFAULT_N_BOOT, INTERVAL_SCHEMA, Seed, auroc_ci, bootstrap
from workbench.stats._discrimination import auroc

#: the project's copy of SummEdits (its README holds the published table)
SUMMEDITS_COPY = PROJECT_ROOT / "data" / "benchmarks" / "summedits"
#: the published table's column of each domain (the files' names)
PUBLISHED_DOMAINS = {"Podcast": "podcast", "SamSum": "samsum", "News": "news", "Sales Call": "sales_call",
                     "Sales Email": "sales_email", "SciTLDR": "scitldr", "QMSumm": "qmsumm", "ECTSum": "ectsum"}
#: the published row of people's performance (the ceiling)
HUMAN_ROW = "Human Perf."


def balanced_accuracy(scores: np.ndarray, labels: np.ndarray, tau: float) -> float:
    """The mean of the recalls of the two classes when a score of at least ``tau`` is called positive; a summary
    without a score (NaN: a judge's miss) is left out, not called negative; NaN without both classes.

    Parameters
    ----------
    scores : numpy.ndarray
        Each summary's score (NaN: none).
    labels : numpy.ndarray
        1 for a consistent summary, 0 for an inconsistent one.
    tau : float
        The threshold.

    Returns
    -------
    float
        The balanced accuracy.
    """
    s = np.asarray(scores, dtype=np.float64)
    scored = ~np.isnan(s)
    y = np.asarray(labels, dtype=bool)[scored]
    called = s[scored] >= tau
    if y.all() or not y.any():
        return float("nan")
    return float((called[y].mean() + (~called[~y]).mean()) / 2)


def choose_tau(scores: np.ndarray, labels: np.ndarray) -> float:
    """The threshold that maximises the balanced accuracy of ``scores`` (the lowest such, among the scores
    themselves); 0.5 for scores that are all 0 or 1 (a yes/no judge); summaries without a score left out.

    Parameters
    ----------
    scores : numpy.ndarray
        Each summary's score (NaN: none).
    labels : numpy.ndarray
        1 for a consistent summary, 0 for an inconsistent one.

    Returns
    -------
    float
        The threshold.
    """
    s = np.asarray(scores, dtype=np.float64)
    if np.isin(s[~np.isnan(s)], (0.0, 1.0)).all():
        return 0.5
    candidates = np.unique(s[~np.isnan(s)])
    values = [balanced_accuracy(s, labels, t) for t in candidates]
    return float(candidates[int(np.nanargmax(values))]) if np.isfinite(values).any() else float("nan")


def summedits_frame(runs: pl.DataFrame | pl.LazyFrame, entries: pl.DataFrame | pl.LazyFrame,
                    scores: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """One row per (summary, judge): ``run_id``, ``document`` (the cluster), ``domain``, ``split``, ``label``
    (1 consistent), ``judge``, ``min`` and ``mean`` over its sentences.

    Parameters
    ----------
    runs, entries, scores : polars.DataFrame or polars.LazyFrame
        The tables of a SummEdits import and a judge's scores of its entries.

    Returns
    -------
    polars.DataFrame
        The frame :func:`summedits_table` reads.
    """
    from workbench.analyses._human_labels import summary_scores

    r = runs.lazy().select("run_id", pl.col("scenario_id").alias("document"), pl.col("subset").alias("domain"),
                           "split", pl.col("human_score").alias("label")).collect()
    return (r.join(summary_scores(entries, scores), on="run_id").sort("domain", "judge", "run_id")
            .select("run_id", "document", "domain", "split", "label", "judge", "min", "mean"))


def summedits_table(frame: pl.DataFrame, *, aggregate: str = "min", n_boot: int = DEFAULT_N_BOOT, seed: Seed = 0,
                    level: float = 0.95) -> pl.DataFrame:
    """AUROC and balanced accuracy of each judge per domain and over the eight (see the module docstring).

    Parameters
    ----------
    frame : polars.DataFrame
        :func:`summedits_frame`.
    aggregate : {"min", "mean"}, default "min"
        A summary's score from its sentences'.
    n_boot : int, default DEFAULT_N_BOOT
        Bootstrap resamples of the overall row's interval.
    seed : int or numpy.random.Generator, default 0
        Seed of the resampling.
    level : float, default 0.95
        Coverage of the intervals.

    Returns
    -------
    polars.DataFrame
        One row per (judge, domain, statistic): ``judge``, ``domain`` (``overall`` for the mean of the domains),
        ``statistic`` (``auroc``, ``balanced_accuracy``), ``tau`` (the threshold chosen on ``evaluation``), the
        interval columns (``n`` the test summaries, ``n_clusters`` their documents) and ``aggregate``.
    """
    if aggregate not in ("min", "mean"):
        raise ValueError(f"aggregate: expected 'min' or 'mean', got {aggregate!r}")
    rows: list[dict[str, Any]] = []
    for (judge,), part in frame.group_by("judge", maintain_order=True):
        tests: list[pl.DataFrame] = []
        for (domain,), d in part.sort("domain").group_by("domain", maintain_order=True):
            ev, te = d.filter(pl.col("split") == "evaluation"), d.filter(pl.col("split") == "test")
            tau = choose_tau(ev[aggregate].to_numpy(), ev["label"].to_numpy()) if ev.height else float("nan")
            tests.append(te.with_columns(pl.lit(tau).alias("_tau")))
            s, y, c = te[aggregate].to_numpy(), te["label"].to_numpy().astype(bool), te["document"].to_numpy()
            res = auroc_ci(s, y, c, n_boot=n_boot, seed=seed, level=level)
            rows.append({"judge": judge, "domain": domain, "statistic": "auroc", "tau": None, **res.row(),
                         "n_clusters": res.n_clusters})
            ba = bootstrap(lambda a, b, t=tau: balanced_accuracy(a, b, t), s, y, clusters=c, n_boot=n_boot,
                           seed=seed, level=level, method="logit-t", n_pos=int(y.sum()))
            rows.append({"judge": judge, "domain": domain, "statistic": "balanced_accuracy", "tau": tau, **ba.row(),
                         "n_clusters": ba.n_clusters})
        test = pl.concat(tests)
        domains, codes = np.unique(test["domain"].to_numpy(), return_inverse=True)
        s, y, c, t = (test[aggregate].to_numpy(), test["label"].to_numpy().astype(bool),
                      test["document"].to_numpy(), test["_tau"].to_numpy())

        def mean_over_domains(s: np.ndarray, y: np.ndarray, t: np.ndarray, k: np.ndarray, what: str) -> float:
            values = []
            for j in range(len(domains)):
                m = k == j
                if what == "auroc":
                    try:
                        values.append(auroc(s[m], y[m]))
                    except ValueError:  # one class in this resample's domain
                        return float("nan")
                else:
                    values.append(balanced_accuracy(s[m], y[m], float(t[m][0])))
            return float(np.mean(values))

        for what in ("auroc", "balanced_accuracy"):
            res = bootstrap(lambda a, b, tt, kk, w=what: mean_over_domains(a, b, tt, kk, w), s, y, t,
                            codes.astype(np.float64), clusters=c, strata=codes, n_boot=n_boot, seed=seed,
                            level=level, method="percentile", n_pos=int(y.sum()))
            rows.append({"judge": judge, "domain": "overall", "statistic": what, "tau": None, **res.row(),
                         "n_clusters": res.n_clusters})
    schema: dict[str, Any] = {"judge": pl.Utf8, "domain": pl.Utf8, "statistic": pl.Utf8, "tau": pl.Float64,
                              **INTERVAL_SCHEMA, "n_clusters": pl.Int64}
    return pl.DataFrame(rows, schema=schema).with_columns(pl.lit(aggregate).alias("aggregate"))


def published_summedits(path: str | Path | None = None) -> pl.DataFrame:
    """The authors' per-domain balanced accuracy (%) of 19 models and of people, from the README's table.

    Parameters
    ----------
    path : str or pathlib.Path, optional
        The README (default: the project's copy's).

    Returns
    -------
    polars.DataFrame
        ``model``, ``domain`` (the files' names), ``balanced_accuracy`` (a share, not %).
    """
    text = Path(path or SUMMEDITS_COPY / "README.md").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    head = next(i for i, line in enumerate(lines) if line.startswith("| model |"))
    columns = [c.strip() for c in lines[head].strip("|").split("|")]
    rows = []
    for line in lines[head + 2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) != len(columns) or not re.fullmatch(r"[\d.]+", cells[1]):
            break
        for name, value in zip(columns[1:], cells[1:], strict=True):
            rows.append({"model": cells[0], "domain": PUBLISHED_DOMAINS[name], "balanced_accuracy": float(value) / 100})
    return pl.DataFrame(rows)


__all__ = ["balanced_accuracy", "choose_tau", "HUMAN_ROW", "published_summedits", "summedits_frame", "summedits_table"]
