"""FRANK end to end: reading it, judging every summary sentence with the lexical judge, and FRANK's table with the
judges' article-bootstrap intervals; time and peak memory, and the intervals against a plain reference.

Steps, each timed in this process (peak memory is the process's ``ru_maxrss`` after each):
  read     FRANK's compact copy into the workbench's tables (``datasets.load``)
  judge    the lexical judge on every sentence, evidence from its article (``derive_missing``)
  table    FRANK's table, every split and data set, its ten metrics and the judge's two aggregations
  ci       article-bootstrap intervals (2,000 resamples, the system means refitted in each) of every metric's and
           aggregation's partial Pearson correlation, test split, both data sets
The reference for ``ci``: the engine's plain loop, ``workbench.stats._bootstrap.bootstrap`` of ``partial_correlation``
over each resample's rows (what the intervals equal, tests/stats/test_metrics_correlation.py), timed on a slice of the
resamples and scaled; the ratio printed is loop time / vectorised time.
Run from the project root: .venv/bin/python benchmarks/bench_frank.py
"""

from __future__ import annotations

import resource
import time

import numpy as np

from workbench.adapters import DEFAULT_METRICS
from workbench.stats import bootstrap
from workbench.datasets import derive_missing, load
from workbench.analyses import correlation_intervals, correlation_table, summary_frame, summary_scores
from workbench.stats import partial_correlation

FRANK = "data/benchmarks/frank"


def peak() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux -> GiB


def main(n_boot: int = 2000, loop_slice: int = 100) -> None:
    t0 = time.perf_counter()
    tables = load(FRANK)
    took = {"read": time.perf_counter() - t0}
    mem = {"read": peak()}
    t0 = time.perf_counter()
    derive_missing(tables)
    took["judge"], mem["judge"] = time.perf_counter() - t0, peak()
    sentences = tables["scores"].height
    t0 = time.perf_counter()
    frame = summary_frame(tables["runs"], summary_scores(tables["entries"], tables["scores"]), DEFAULT_METRICS)
    order = [*DEFAULT_METRICS, "lexical (mean)", "lexical (min)"]
    table = correlation_table(frame, order, datasets=(None, "cnndm", "bbc"))
    took["table"], mem["table"] = time.perf_counter() - t0, peak()
    t0 = time.perf_counter()
    intervals = correlation_intervals(frame, order, correlations=("pearson",), n_boot=n_boot)
    took["ci"], mem["ci"] = time.perf_counter() - t0, peak()
    test = frame.filter(frame["split"] == "test")
    loop_took = 0.0
    for metric in order:
        x, y = test[metric].to_numpy(), test["human_score"].to_numpy()
        keep = np.isfinite(x)
        args = (x[keep], y[keep], test["system"].to_numpy()[keep])
        t1 = time.perf_counter()
        bootstrap(lambda a, b, c: partial_correlation(a, b, c).r, *args, clusters=test["source_id"].to_numpy()[keep],
                  n_boot=loop_slice, seed=0)
        loop_took += (time.perf_counter() - t1) * n_boot / loop_slice
    for step in took:
        print(f"{step:6s} {took[step]:6.2f} s   peak {mem[step]:.2f} GiB")
    print(f"judged {sentences} sentences of {frame.height} summaries in {took['judge']:.1f} s; "
          f"{table.height} table rows; {intervals.height} intervals of {n_boot} resamples in {took['ci']:.1f} s")
    print(f"intervals: vectorised {took['ci']:.2f} s, the engine's loop {loop_took:.1f} s (timed on {loop_slice} "
          f"resamples a metric, scaled) -> {loop_took / took['ci']:.1f}x faster")
    print(f"everything: {sum(took.values()):.1f} s, peak memory {max(mem.values()):.2f} GiB")


if __name__ == "__main__":
    main()
