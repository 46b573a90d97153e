"""FOCUS: the rollout parser, citation scores, Hoeffding bounds, error slope and utility histogram."""

from __future__ import annotations

import math
import os

import numpy as np
import polars as pl
import pytest

from workbench.analyses.focus import (
    event_batches,
    bound_curves,
    citation_matrices,
    citation_scores,
    error_slope,
    self_consistency_curves,
    hoeffding_bound,
    keep_set,
    parse_rollout,
    recovery_probability,
    rollouts_needed,
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
    assert keep_set(s.filter(pl.col("event_id") == "e"), 0.5, rescue={"s_4"}) == {"s_1", "s_4"}
    with pytest.raises(ValueError, match="more rollouts than n_rollouts"):
        citation_scores(citations(), 1)
    with pytest.raises(ValueError, match="more rollouts than n_rollouts"):
        citation_scores(citations(), 1, spans)
    lazy = citation_scores(citations().lazy(), {"e": 4, "f": 2}, spans)  # a large log's rollouts, scanned
    assert {(r["event_id"], r["span_id"]): r["score"] for r in lazy.iter_rows(named=True)} == got
    assert citation_scores(citations().lazy(), {"e": 4, "f": 2}).height == 4  # without spans: the cited ones


def test_bounds_equal_closed_forms() -> None:
    assert hoeffding_bound(10, 20, 0.2) == pytest.approx(min(1, 20 * math.exp(-2 * 20 * 0.04)))
    assert hoeffding_bound(10, 1, 0.1) == 1.0
    assert recovery_probability(5, 50, 0.25) == pytest.approx(1 - 10 * math.exp(-2 * 50 * 0.0625))
    assert rollouts_needed(10, 0.2, 0.05) == math.ceil(math.log(400) / 0.08)
    n = rollouts_needed(7, 0.3, 0.1)
    assert hoeffding_bound(7, n, 0.3) <= 0.1 < hoeffding_bound(7, n - 1, 0.3)
    curves = bound_curves([5, 20], [0.1, 0.3], [1, 10, 100])
    assert curves.height == 12 and (curves["bound"] + curves["recovery"]).to_list() == pytest.approx([1.0] * 12)


def test_error_against_truth_equals_the_binomial_mean_absolute_deviation() -> None:
    """E|Bin(N, p)/N - p| computed exactly with scipy's binomial pmf; with one span the worst-span error is it."""
    from scipy.stats import binom

    from workbench.analyses.focus import error_against_truth

    spans = pl.DataFrame({"event_id": ["e"], "span_id": ["s"], "gt_rate": [0.3]})
    got = error_against_truth(spans, [1, 10, 40], draws=40_000, seed=3)
    for n, value in zip(got["n_rollouts"], got["max_error"], strict=True):
        k = np.arange(n + 1)
        exact = float(np.sum(binom.pmf(k, n, 0.3) * np.abs(k / n - 0.3)))
        sd = float(np.sqrt(np.sum(binom.pmf(k, n, 0.3) * (np.abs(k / n - 0.3) - exact) ** 2)))
        assert abs(value - exact) < 4 * sd / np.sqrt(40_000), (n, value, exact)
    assert got["max_error"][0] == pytest.approx(2 * 0.3 * 0.7, abs=0.01)  # N = 1: 0.7 w.p. 0.3, 0.3 w.p. 0.7
    certain = error_against_truth(pl.DataFrame({"event_id": ["e", "e"], "span_id": ["a", "b"], "gt_rate": [0.0, 1.0]}),
                                  [1, 5], draws=10)
    assert certain["max_error"].to_list() == [0.0, 0.0]  # spans never or always cited are estimated exactly


def test_error_slope_is_exact_on_a_power_law_and_resamples_clusters() -> None:
    """Mean error c_e N^-0.4 over events is c̄ N^-0.4: the log-log slope is -0.4 exactly, whatever events are drawn."""
    ns = [1, 3, 10, 30, 100, 300]
    rows = [{"event_id": f"e{e}", "n_rollouts": n, "max_error": (1 + e) * n ** -0.4} for e in range(6) for n in ns]
    res = error_slope(pl.DataFrame(rows), clusters={f"e{e}": f"s{e % 3}" for e in range(6)}, n_boot=200)
    assert res.estimate == pytest.approx(-0.4, abs=1e-12)
    assert res.ci_low == pytest.approx(-0.4, abs=1e-12) and res.ci_high == pytest.approx(-0.4, abs=1e-12)
    assert (res.n, res.n_clusters) == (6, 3)


def test_self_consistency_jaccard_stabilises_with_n() -> None:
    rng = np.random.default_rng(0)
    cites, spans = [], []
    for e in range(30):
        p = rng.choice([0.05, 0.2, 0.5, 0.8, 0.95], size=8)
        x = rng.random((200, 8)) < p
        spans += [(f"e{e}", f"s_{j}") for j in range(8)]
        cites += [(f"e{e}", int(r), f"s_{j}") for r, j in zip(*np.nonzero(x), strict=True)]
    mats = citation_matrices(pl.DataFrame(cites, schema=["event_id", "rollout", "span_id"], orient="row"),
                             pl.DataFrame(spans, schema=["event_id", "span_id"], orient="row"), 200)
    curves = self_consistency_curves(mats, [2, 8, 32, 128], draws=50, seed=1)
    jac = curves.group_by("n_rollouts").agg(pl.col("jaccard").mean()).sort("n_rollouts")["jaccard"].to_list()
    assert jac == sorted(jac) and jac[-1] > 0.9


def test_near_tau_counts_the_closed_interval_exactly() -> None:
    """N = 3: û in {0, 1/3, 2/3, 1}. At tau = 0.5 both 1/3 and 2/3 are exactly 1/6 away: both near (in floating
    point 1/3 fell outside and 2/3 inside). At FOCUS's tau = 0.3 only 1/3 is near."""
    scores = pl.DataFrame({"n_cited": [0, 1, 2, 3, 1, 2], "n_rollouts": [3] * 6}).with_columns(
        (pl.col("n_cited") / pl.col("n_rollouts")).alias("score"))
    assert utility_histogram(scores, tau=0.5).near_tau == pytest.approx(4 / 6)
    assert utility_histogram(scores, tau=0.3).near_tau == pytest.approx(2 / 6)
    assert utility_histogram(scores.select("score"), tau=0.5).near_tau == pytest.approx(4 / 6)  # floats: rounded
    assert abs(1 / 3 - 0.5) > 1 / 6 and abs(2 / 3 - 0.5) < 1 / 6  # the floating-point trap the counts avoid
    h = utility_histogram(scores, tau=0.3)
    assert (h.at_zero, h.at_one, h.interior) == (pytest.approx(1 / 6), pytest.approx(1 / 6), pytest.approx(4 / 6))


def test_utility_histogram_masses() -> None:
    s = pl.DataFrame({"score": [0.0, 0.0, 1.0, 0.5, 0.4, 0.9]})
    h = utility_histogram(s, tau=0.5)
    assert (h.at_zero, h.at_one) == (pytest.approx(2 / 6), pytest.approx(1 / 6))
    assert h.interior == pytest.approx(3 / 6) and h.near_tau == pytest.approx(2 / 6)
    assert int(np.sum(h.counts)) == 6


def test_curve_means_do_not_depend_on_the_number_of_threads() -> None:
    """FOCUS Figure 5's points: the same bits with 1 or 7 polars threads (polars' group-by mean splits its float
    sum across threads, which moved a pixel of the figure between machines), and equal to numpy's mean per N."""
    import subprocess
    import sys

    code = ("import numpy as np, polars as pl; from workbench.analyses.focus import curve_means; "
            "rng = np.random.default_rng(3); n = np.tile([1, 2, 3, 5, 10], 40000); "
            "f = pl.DataFrame({'event_id': [str(i) for i in range(n.size)], 'n_rollouts': n, "
            "'max_error': rng.random(n.size) / n}); print(curve_means(f, 'max_error')['max_error'].to_numpy().tobytes().hex())")
    outs = {t: subprocess.run([sys.executable, "-c", code], env={**os.environ, "POLARS_MAX_THREADS": str(t)},
                              capture_output=True, text=True, check=True).stdout for t in (1, 7)}
    assert outs[1] == outs[7]
    rng = np.random.default_rng(3)
    n = np.tile([1, 2, 3, 5, 10], 40000)
    err = rng.random(n.size) / n
    expected = np.array([np.mean(err[n == k]) for k in (1, 2, 3, 5, 10)])
    assert bytes.fromhex(outs[1].strip()) == expected.tobytes()


def test_citation_matrices_hold_the_drawn_citations_and_ignore_the_rest() -> None:
    """Random 0/1 matrices written out as citations come back as they were drawn; a citation twice, of a span
    the event lacks, or of a rollout past N_max changes nothing, and an event nobody cites is all zeros."""
    rng = np.random.default_rng(3)
    drawn = {f"e{e}": rng.random((6, 1 + e % 4)) < 0.4 for e in range(12)}
    cites = [(e, int(r), f"s_{j}") for e, x in drawn.items() for r, j in zip(*np.nonzero(x), strict=True)]
    cites += [cites[0], ("e1", 0, "s_99"), ("e2", 6, "s_0"), ("nobody", 0, "s_0")]
    rng.shuffle(cites)
    spans = [(e, f"s_{j}") for e, x in drawn.items() for j in range(x.shape[1])] + [("quiet", "s_0")]
    mats = citation_matrices(pl.DataFrame(cites, schema=["event_id", "rollout", "span_id"], orient="row"),
                             pl.DataFrame(spans, schema=["event_id", "span_id"], orient="row"), 6)
    assert list(mats) == [*drawn, "quiet"]
    for e, x in drawn.items():
        ids, got = mats[e]
        assert ids == [f"s_{j}" for j in range(x.shape[1])] and np.array_equal(got, x.astype(float))
    assert mats["quiet"][0] == ["s_0"] and not mats["quiet"][1].any() and mats["quiet"][1].shape == (6, 1)


@pytest.mark.parametrize("size", [1, 5, 100])
def test_event_batches_cover_every_span_once_and_give_the_whole_tables_results(size: int) -> None:
    """Batches of events (sorted, whatever the spans' order) hold every span once; scores and curves computed a
    batch at a time, one generator through the batches, are those of the whole table to the bit."""
    rng = np.random.default_rng(5)
    drawn = {f"e{e:02d}": rng.random((8, 1 + e % 5)) < 0.5 for e in rng.permutation(13)}  # events out of order
    cites = pl.DataFrame([(e, int(r), f"s_{j}") for e, x in drawn.items() for r, j in zip(*np.nonzero(x), strict=True)],
                         schema=["event_id", "rollout", "span_id"], orient="row")
    spans = pl.DataFrame([(e, f"s_{j}") for e, x in drawn.items() for j in range(x.shape[1])],
                         schema=["event_id", "span_id"], orient="row")
    parts = list(event_batches(spans, size))
    assert len(parts) == -(-len(drawn) // size)
    firsts = [p.get_column("event_id").min() for p in parts]
    assert firsts == sorted(firsts) and pl.concat(parts).sort("event_id", "span_id").equals(
        spans.sort("event_id", "span_id"))
    whole_scores = citation_scores(cites, 8, spans)
    whole_curves = self_consistency_curves(citation_matrices(cites, spans, 8), [1, 3, 8], draws=20, seed=7)
    gen = np.random.default_rng(7)
    batched = [(citation_scores(cites, 8, p), self_consistency_curves(citation_matrices(cites, p, 8), [1, 3, 8],
                                                                      draws=20, seed=gen)) for p in parts]
    assert pl.concat([b[0] for b in batched]).equals(whole_scores)
    assert pl.concat([b[1] for b in batched]).equals(whole_curves)
    with pytest.raises(ValueError, match="at least 1"):
        next(event_batches(spans, 0))
