"""Simulated annotators: two independent labeling rounds of a validation sample (SJC Appendix G).

Each round labels every sampled entry for support (``supported`` / ``unsupported``) and
correctness (``correct`` / ``incorrect``) from the entry's ground truth, flipping each label
independently with probability ``error``. Clearly simulated: annotators are named
``sim-round1`` / ``sim-round2``.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from workbench.annotate._sampling import entries_with_outcome, sample_entries


def simulate_annotation(tables: dict[str, pl.DataFrame], *, n: int = 300, error: float = 0.02, seed: int = 0,
                        method: str = "prompting", budget: int = 48) -> pl.DataFrame:
    runs = tables["runs"].filter((pl.col("method") == method) & (pl.col("budget") == budget))
    entries = tables["entries"].join(runs.select("run_id"), on="run_id", how="semi")
    sample, _ = sample_entries(entries_with_outcome(entries, runs), n, ("section", "outcome"), seed)
    rows = []
    for rnd in (1, 2):
        rng = np.random.default_rng(np.random.SeedSequence([seed, 5151, rnd]))
        flips = rng.random((sample.height, 2)) < error
        for i, row in enumerate(sample.iter_rows(named=True)):
            sup = bool(row["gt_supported"]) ^ bool(flips[i, 0])
            cor = bool(row["gt_correct"]) ^ bool(flips[i, 1])
            for field_name, value in (("support", "supported" if sup else "unsupported"),
                                      ("correct", "correct" if cor else "incorrect")):
                rows.append({"item_id": row["entry_id"], "annotator": f"sim-round{rnd}", "round": rnd,
                             "field": field_name, "value": value, "note": None, "labeled_at": None})
    return pl.DataFrame(rows, schema={"item_id": pl.Utf8, "annotator": pl.Utf8, "round": pl.Int64, "field": pl.Utf8,
                                      "value": pl.Utf8, "note": pl.Utf8, "labeled_at": pl.Utf8})


__all__ = []
