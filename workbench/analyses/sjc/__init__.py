"""SJC's analyses (Source-Judged Compaction): the results tables of Section 5 (Tables 3-5, Figure 2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = ["judge_overhead", "pass_vs_tokens", "results_table", "SUMMARY_ROWS", "UNCOMPRESSED"]

__getattr__, __dir__ = attach(__name__, {
    "_results": ["judge_overhead", "pass_vs_tokens", "results_table", "SUMMARY_ROWS", "UNCOMPRESSED"],
}, public=__all__)

if TYPE_CHECKING:
    from workbench.analyses.sjc._results import (
        judge_overhead, pass_vs_tokens, results_table, SUMMARY_ROWS, UNCOMPRESSED
    )
