"""SJC's analyses (Source-Judged Compaction): the composition of summaries by section and role (Table 2,
``_composition``), threshold sensitivity (Figure 3, ``_sensitivity``), failure attribution (Table 11, ``_attribution``)
and the results tables of Section 5 (Tables 3-5, Figure 2, ``_results``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = [
    "by_boundary", "CompositionCounts", "decision_flips", "entries_by_role", "entries_by_section",
    "failures_by_scenario", "first_vs_later", "followed_entry_share", "judge_overhead", "keep_rate_by_section",
    "largest_change", "match_next", "pass_vs_tokens", "persistence", "REASONING", "results_table", "score_distribution",
    "section_counts", "SUMMARY_ROWS", "support_from_scores", "sweep", "ThresholdCounts", "UNCOMPRESSED",
    "unsupported_by_role", "unsupported_counts", "unsupported_from_counts"
]

__getattr__, __dir__ = attach(__name__, {
    "_attribution": ["failures_by_scenario", "followed_entry_share"],
    "_composition": [
        "by_boundary", "CompositionCounts", "entries_by_role", "entries_by_section", "match_next", "persistence",
        "REASONING", "section_counts", "support_from_scores", "unsupported_by_role", "unsupported_counts",
        "unsupported_from_counts"
    ],
    "_results": ["judge_overhead", "pass_vs_tokens", "results_table", "SUMMARY_ROWS", "UNCOMPRESSED"],
    "_sensitivity": [
        "decision_flips", "first_vs_later", "keep_rate_by_section", "largest_change", "score_distribution", "sweep",
        "ThresholdCounts"
    ],
}, public=__all__)

if TYPE_CHECKING:
    from workbench.analyses.sjc._attribution import (failures_by_scenario, followed_entry_share)
    from workbench.analyses.sjc._composition import (
        by_boundary, CompositionCounts, entries_by_role, entries_by_section, match_next, persistence, REASONING,
        section_counts, support_from_scores, unsupported_by_role, unsupported_counts, unsupported_from_counts
    )
    from workbench.analyses.sjc._results import (
        judge_overhead, pass_vs_tokens, results_table, SUMMARY_ROWS, UNCOMPRESSED
    )
    from workbench.analyses.sjc._sensitivity import (
        decision_flips, first_vs_later, keep_rate_by_section, largest_change, score_distribution, sweep, ThresholdCounts
    )
