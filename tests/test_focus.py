"""FOCUS: the rollout parser, citation scores, Hoeffding bounds, error slope and utility histogram."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from workbench.focus import (
    bound_curves,
    citation_matrices,
    citation_scores,
    error_slope,
    estimation_curves,
    hoeffding_bound,
    keep_set,
    parse_rollout,
    recovery_probability,
    rollouts_needed,
    safety_certificate,
    set_score,
    utility_histogram,
)

SKETCH = """Plan:
Step: pay INV-1 | Depends on: [s_3, s_7]
step: file report |depends ON: s3,S_9
Step: finish | Depends on: []
Step: re-check | Depends on: [s_42]
Step: garbled | Depends on: the invoice list
Step: again | Depends on: (s_7)
no dependency line here
"""


def test_parser_tolerance_unknown_and_malformed() -> None:
    p = parse_rollout(SKETCH, "ev", 0, known_spans=["s_3", "s_7", "s9"])
    assert p.citations["span_id"].to_list() == ["s_3", "s_7", "s_9"]  # s3 == s_3, duplicates once
    assert p.unknown == ((5, "s_42"),)  # reported, never mapped to a near id
    assert p.malformed == ((6, "Step: garbled | Depends on: the invoice list"),)
    assert parse_rollout(SKETCH, "ev", 1).unknown == ()  # without a known list nothing is unknown


def citations() -> pl.DataFrame:
    rows = [("e", 0, "s_1"), ("e", 0, "s_1"), ("e", 0, "s_2"), ("e", 1, "s_1"), ("e", 2, "s_3"), ("f", 0, "s_1")]
    return pl.DataFrame(rows, schema=["event_id", "rollout", "span_id"], orient="row")


def test_citation_scores_count_once_per_rollout_and_include_uncited() -> None:
    spans = pl.DataFrame({"event_id": ["e"] * 4 + ["f"], "span_id": ["s_1", "s_2", "s_3", "s_4", "s_1"]})
    s = citation_scores(citations(), {"e": 4, "f": 2}, spans)
    got = {(r["event_id"], r["span_id"]): r["score"] for r in s.iter_rows(named=True)}
    assert got == {("e", "s_1"): 0.5, ("e", "s_2"): 0.25, ("e", "s_3"): 0.25, ("e", "s_4"): 0.0, ("f", "s_1"): 0.5}
    assert set_score(citations(), "e", {"s_2", "s_3"}, 4) == 0.5  # rollouts 0 and 2
    assert keep_set(s.filter(pl.col("event_id") == "e"), 0.5, rescue={"s_4"}) == {"s_1", "s_4"}
    assert safety_certificate(3.0, 0.5) == 1.5
    with pytest.raises(ValueError, match="more rollouts than n_rollouts"):
        citation_scores(citations(), 1)


def test_bounds_equal_closed_forms() -> None:
    assert hoeffding_bound(10, 20, 0.2) == pytest.approx(min(1, 20 * math.exp(-2 * 20 * 0.04)))
    assert hoeffding_bound(10, 1, 0.1) == 1.0
    assert recovery_probability(5, 50, 0.25) == pytest.approx(1 - 10 * math.exp(-2 * 50 * 0.0625))
    assert rollouts_needed(10, 0.2, 0.05) == math.ceil(math.log(400) / 0.08)
    n = rollouts_needed(7, 0.3, 0.1)
    assert hoeffding_bound(7, n, 0.3) <= 0.1 < hoeffding_bound(7, n - 1, 0.3)
    curves = bound_curves([5, 20], [0.1, 0.3], [1, 10, 100])
    assert curves.height == 12 and (curves["bound"] + curves["recovery"]).to_list() == pytest.approx([1.0] * 12)


def bernoulli_events(n_events: int = 40, m: int = 8, n_max: int = 400, seed: int = 0) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    cites, spans = [], []
    for e in range(n_events):
        p = rng.choice([0.05, 0.2, 0.5, 0.8, 0.95], size=m)
        x = rng.random((n_max, m)) < p
        for j in range(m):
            spans.append((f"e{e}", f"s_{j}"))
        for r, j in zip(*np.nonzero(x), strict=True):
            cites.append((f"e{e}", int(r), f"s_{j}"))
    return (pl.DataFrame(cites, schema=["event_id", "rollout", "span_id"], orient="row"),
            pl.DataFrame(spans, schema=["event_id", "span_id"], orient="row"))


def test_error_slope_on_bernoulli_citations_is_about_minus_half() -> None:
    cites, spans = bernoulli_events()
    mats = citation_matrices(cites, spans, 400)
    curves = estimation_curves(mats, [4, 8, 16, 32, 64], draws=100, seed=1)
    res = error_slope(curves, n_boot=500)
    assert res.ci_low <= -0.5 <= res.ci_high or abs(res.estimate + 0.5) < 0.05, res
    jac = curves.group_by("n_rollouts").agg(pl.col("jaccard").mean()).sort("n_rollouts")["jaccard"].to_list()
    assert jac == sorted(jac) and jac[-1] > 0.85  # stabilises with N


def test_utility_histogram_masses() -> None:
    s = pl.DataFrame({"score": [0.0, 0.0, 1.0, 0.5, 0.4, 0.9]})
    h = utility_histogram(s, tau=0.5)
    assert (h.at_zero, h.at_one) == (pytest.approx(2 / 6), pytest.approx(1 / 6))
    assert h.interior == pytest.approx(3 / 6) and h.near_tau == pytest.approx(2 / 6)
    assert int(np.sum(h.counts)) == 6
