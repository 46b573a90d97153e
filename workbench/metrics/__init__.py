"""Metrics over tidy run / step tables: reliability and efficiency (more land beside them)."""

from workbench.metrics.usage import Price, cost, cumulative_tokens, dependency, efficiency, efficiency_by, peak
from workbench.metrics.success import pass_at_k, pass_hat_k, reliability, reliability_by_k

__all__ = [
    "Price",
    "cost",
    "cumulative_tokens",
    "dependency",
    "efficiency",
    "efficiency_by",
    "pass_at_k",
    "pass_hat_k",
    "peak",
    "reliability",
    "reliability_by_k",
]
