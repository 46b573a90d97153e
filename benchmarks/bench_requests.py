"""Judge-request spans: each compaction's observations taken from the steps table.

Reference, in the same run: :func:`workbench.judges._requests.span_outputs`, which filters the
run's steps per compaction (what request building did before). Against it, :func:`span_index`
built once and bisected per compaction. Both must give the same lists. Prints both times and the
ratio on the testbed (``data/testbed``; generated when missing) replicated ``--copies`` times.
Run: .venv/bin/python benchmarks/bench_requests.py [--copies N]
"""

from __future__ import annotations

import argparse
import time

import polars as pl

from workbench.tables import _schema as schema
from workbench.datasets import load
from workbench.summaries import span_index, span_outputs


def main(copies: int = 1) -> None:
    t = load("data/testbed")
    comps = pl.concat([t["compactions"].with_columns(pl.col("run_id") + f"#{i}") for i in range(copies)])
    steps = pl.concat([t["steps"].with_columns(pl.col("run_id") + f"#{i}") for i in range(copies)])
    spans = comps.select("run_id", "span_start", "span_end").rows()
    t0 = time.perf_counter()
    by_run = {k[0]: v for k, v in steps.partition_by("run_id", as_dict=True).items()}
    plain = [span_outputs(by_run.get(r, schema.empty("steps")), r, lo, hi) for r, lo, hi in spans]
    t_plain = time.perf_counter() - t0
    t0 = time.perf_counter()
    index = span_index(steps)
    fast = [index.outputs(r, lo, hi) for r, lo, hi in spans]
    t_fast = time.perf_counter() - t0
    assert fast == plain, "span_index disagrees with span_outputs"
    print(f"{len(spans):,} compactions, {steps.height:,} steps: per-compaction filter {t_plain:.2f} s, "
          f"span index {t_fast:.2f} s, ratio {t_plain / t_fast:.0f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=1, help="replicate the testbed this many times")
    main(parser.parse_args().copies)
