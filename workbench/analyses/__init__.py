"""The analyses: one public namespace per source document -- :mod:`~workbench.analyses.sjc` (composition,
threshold sensitivity, failure attribution, results tables), :mod:`~workbench.analyses.focus` (rollout estimates and
their Hoeffding bounds), :mod:`~workbench.analyses.trace` (the verifier, post-compaction burden, article comparison)
-- and, beyond the papers, FIFO replay over real trajectories (``_fifo_replay``), judges against human labels
(``_human_labels``: FRANK's table and the judges placed in it), failure attribution against people's labels
(``_failure_attribution``: Who&When's Random row, attributors' accuracy with intervals), coding-agent sessions
(``_coding_agents``) and what they cost (``_pricing``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = [
    "after_compaction", "AGGREGATIONS", "attribution_accuracy", "burden_totals", "choose_aggregation",
    "compaction_overview", "compaction_timeline", "compare_attributors", "compare_with_published",
    "correlation_intervals", "correlation_table", "decisive_after_compaction", "entry_auroc", "failure_gold", "focus",
    "frank_frame", "FRANK_PUBLISHED", "frank_table", "FRANK_WILLIAMS", "identifier_share", "metric_column",
    "ModelPrice", "oriented", "OVERALL", "part_cost", "price_of", "PRICES", "PRICES_AS_OF", "prompt_cache",
    "prompt_cache_means", "published_frank", "random_baseline", "random_within", "replay", "replay_by_budget",
    "replay_run", "ReplayResult", "session_costs", "SessionAnalyses", "sjc", "SPLITS", "summary_auroc",
    "summary_frame", "summary_scores", "testbed_gold", "token_medians", "trace", "turn_text", "williams_table"
]

__getattr__, __dir__ = attach(__name__, {
    "_coding_agents": [
        "after_compaction", "burden_totals", "compaction_overview", "compaction_timeline", "identifier_share",
        "prompt_cache", "prompt_cache_means", "SessionAnalyses", "token_medians"
    ],
    "_failure_attribution": [
        "attribution_accuracy", "compare_attributors", "decisive_after_compaction", "failure_gold", "OVERALL",
        "random_baseline", "random_within", "testbed_gold"
    ],
    "_fifo_replay": ["replay", "replay_by_budget", "replay_run", "ReplayResult", "turn_text"],
    "_human_labels": [
        "AGGREGATIONS", "choose_aggregation", "compare_with_published", "correlation_intervals", "correlation_table",
        "entry_auroc", "frank_frame", "FRANK_PUBLISHED", "frank_table", "FRANK_WILLIAMS", "metric_column", "oriented",
        "published_frank", "SPLITS", "summary_auroc", "summary_frame", "summary_scores", "williams_table"
    ],
    "_pricing": ["ModelPrice", "part_cost", "price_of", "PRICES", "PRICES_AS_OF", "session_costs"],
}, modules=["focus", "sjc", "trace"], public=__all__)

if TYPE_CHECKING:
    from workbench.analyses._coding_agents import (
        after_compaction, burden_totals, compaction_overview, compaction_timeline, identifier_share, prompt_cache,
        prompt_cache_means, SessionAnalyses, token_medians
    )
    from workbench.analyses._fifo_replay import (replay, replay_by_budget, replay_run, ReplayResult, turn_text)
    from workbench.analyses._human_labels import (
        AGGREGATIONS, choose_aggregation, compare_with_published, correlation_intervals, correlation_table,
        entry_auroc, frank_frame, FRANK_PUBLISHED, frank_table, FRANK_WILLIAMS, metric_column, oriented,
        published_frank, SPLITS, summary_auroc, summary_frame, summary_scores, williams_table
    )
    from workbench.analyses._pricing import (ModelPrice, part_cost, price_of, PRICES, PRICES_AS_OF, session_costs)
    from workbench.analyses import focus, sjc, trace
    from workbench.analyses._failure_attribution import (
        attribution_accuracy, compare_attributors, decisive_after_compaction, failure_gold, OVERALL, random_baseline,
        random_within, testbed_gold
    )
