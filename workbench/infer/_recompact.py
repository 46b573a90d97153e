"""Real summaries at the budget boundaries of real runs, written by a compressor model (no summaries in the log)."""

from __future__ import annotations

import polars as pl

from workbench import tokens
from workbench.tables import _schema as schema
from workbench.tables._validation import validate
from workbench.infer._compressor import OpenClawCompressor
from workbench.analyses._fifo_replay import turn_text


def compact_with(compressor: object, steps: pl.DataFrame, runs: pl.DataFrame, budget: int,
                 *, encoding: str = "o200k_base") -> pl.DataFrame:
    """Real summaries at the budget boundaries of real runs: a ``compactions`` table.

    At each boundary the turns since the previous boundary (all but the latest, which is kept
    verbatim) are compacted by ``compressor`` (:class:`workbench.infer.OpenClawCompressor`,
    cached through the client layer) with the previous summary; the summary then stands in
    for those turns. A cancelled compaction (quality check failed twice) leaves the history
    uncompressed, as OpenClaw does, and is not a row. The judge (``workbench judge``) and the
    fact check (:func:`workbench.summaries.fact_check_compactions`) run on the result.

    Parameters
    ----------
    compressor : OpenClawCompressor
        What writes the summaries.
    steps : polars.DataFrame
        The runs' steps.
    runs : polars.DataFrame
        The runs (their task and first prompt).
    budget : int
        The context budget in tokens.
    encoding : str, default "o200k_base"
        The tokenizer counted with.

    Returns
    -------
    polars.DataFrame
        A compactions table.
    """
    assert isinstance(compressor, OpenClawCompressor)
    prompts = dict(runs.select("run_id", pl.col("task").fill_null("")).iter_rows())
    out = []
    for (rid,), st in steps.partition_by("run_id", as_dict=True, maintain_order=True).items():
        rows = st.sort("step").to_dicts()
        texts = [turn_text(r) for r in rows]
        sizes = tokens.count_many(texts, encoding)
        task = prompts.get(rid, "")
        base = tokens.count(task, encoding)
        start, summary, summary_size, boundary = 0, None, 0, 0
        for t, row in enumerate(rows):
            if t - start >= 2 and base + summary_size + sum(sizes[start:t]) > budget:
                turns = [f"[Turn {rows[k]['step']}]: {texts[k]}" for k in range(start, t - 1)]
                res = compressor.compact(turns, task, summary)
                if res.summary is None:
                    continue  # cancelled: the history stays uncompressed
                out.append({"run_id": rid, "boundary": boundary, "step": row["step"], "span_start": rows[start]["step"],
                            "span_end": rows[t - 2]["step"], "previous_summary": summary,
                            "retained_turn": texts[t - 1], "candidate_summary": res.summary,
                            "committed_summary": res.summary})
                summary, summary_size, start, boundary = res.summary, tokens.count(res.summary, encoding), t - 1, boundary + 1
    return validate("compactions", pl.DataFrame(out, schema=schema.table("compactions").polars_schema())
                           if out else schema.empty("compactions"))


__all__ = ["compact_with"]
