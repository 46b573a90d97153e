"""The lexical judge's features and its fixed function."""

from __future__ import annotations


import polars as pl

from workbench.summaries import JudgeRequest
from workbench.judges import LexicalJudge, probability
from workbench.judges._lexical import features


def request(entries: tuple[str, ...] = ("- Paid INV-104 ($120.50).", "- Will email the client next.")) -> JudgeRequest:
    return JudgeRequest(task="Settle group G7.", retained_turn="paid INV-307", previous_summary="",
                        evidence=("INV-104: amount 120.50",), entries=entries, request_id="r/b0")


def test_lexical_features_by_their_definitions() -> None:
    f = features("- Paid INV-104 ($120.50).", "INV-104: amount 120.50, paid")
    assert f.n_ids == 2 and f.id_overlap == 1.0 and f.word_overlap == 1.0 and not f.cue  # INV-104 and 120.50 found
    half = features("- Paid INV-104 and INV-999.", "INV-104 paid")
    assert half.n_ids == 2 and half.id_overlap == 0.5  # one of the two ids has a source
    g = features("- Will email the client next.", "INV-104: amount 120.50")
    assert g.cue and g.n_ids == 0 and g.word_overlap == 0.0


def test_lexical_probability_moves_the_right_way() -> None:
    """Properties of the fixed function, not its coefficients: more sourced ids or words raise the score, a
    forward-looking cue lowers it, every score is a probability."""
    base = features("- Paid INV-104 and INV-999.", "INV-104 paid")
    better = features("- Paid INV-104 and INV-999.", "INV-104 INV-999 paid")
    cued = features("- Will pay INV-104 and INV-999.", "INV-104 INV-999 paid")
    assert probability(better) > probability(base)
    assert probability(cued) < probability(better)
    assert all(0.0 < probability(x) < 1.0 for x in (base, better, cued))
    res = LexicalJudge().score(request())
    assert res.scores[0] > res.scores[1]  # type: ignore[operator]


def test_lexical_judge_separates_sourced_entries_on_the_testbed(small_testbed: dict[str, pl.DataFrame]) -> None:
    """Against ground truth the simulator knows (gt_supported), scored by sklearn: the baseline is a useful judge."""
    from sklearn.metrics import roc_auc_score

    from workbench.summaries import compaction_requests
    from workbench.judges import score_requests

    prompting = small_testbed["runs"].filter(pl.col("method") == "prompting").select("run_id")
    t = {name: small_testbed[name].join(prompting, on="run_id", how="semi") for name in ("runs", "steps", "compactions")}
    scores, _ = score_requests(compaction_requests(t), LexicalJudge())
    joined = scores.join(small_testbed["entries"].select("entry_id", "gt_supported"), on="entry_id")
    assert joined.height > 200
    assert roc_auc_score(joined["gt_supported"], joined["score"]) > 0.8


def test_requests_take_each_span_from_the_steps_as_a_plain_filter_would() -> None:
    """compaction_requests bisects per-run step lists built once; span_outputs filters the steps table per
    compaction. Same evidence for every compaction of the example log, including the retained turn."""
    from pathlib import Path

    from workbench.adapters import read_log
    from workbench.summaries import build_request, compaction_requests, span_outputs
    from workbench.summaries import parse

    t = read_log(Path(__file__).resolve().parents[2] / "workbench" / "datasets" / "example_logs" / "invoice_log.jsonl")
    comps = {(c["run_id"], c["boundary"]): c for c in t["compactions"].iter_rows(named=True)}
    tasks = dict(t["runs"].select("run_id", "task").iter_rows())
    got = compaction_requests(t)
    assert len(got) == len(comps) == 8
    for req in got:
        c = comps[(req.run_id, req.boundary)]
        outputs = span_outputs(t["steps"], c["run_id"], c["span_start"], c["span_end"])
        outputs += [c["retained_turn"]] if c["retained_turn"] else []
        assert outputs, "the example's spans have observations"
        want = build_request(task=tasks[c["run_id"]] or "", retained_turn=c["retained_turn"] or "",
                             previous_summary=c["previous_summary"] or "", outputs=outputs,
                             entries=[e.text for e in parse(c["candidate_summary"])],
                             request_id=f"{c['run_id']}/b{c['boundary']}")
        assert req.request == want


def test_an_identifier_counts_when_the_sources_hold_it_as_an_identifier_or_inside_their_text() -> None:
    """The judge finds an entry's identifiers among the sources' identifiers (a set intersection since issue 62)
    and, failing that, inside their lower-cased text: ``A7-Q`` is inside ``noteA7-Q`` (an identifier of its own),
    ``INV-999`` nowhere. By hand: ids {a7-q, inv-104, inv-999}, two found; words {paid, order, inv} ("and" is a
    stop word), two found (paid, inv); so z = -1 + 3 (2/3) - 1.5 (1/3) + 2.5 (2/3) and the score is 1 / (1 + e^-z);
    the judge's score is the same number."""
    import math

    from workbench.judges._lexical import Sources

    entry = "- Paid order A7-Q, INV-104 and INV-999."
    f = features(entry, "noteA7-Q here; INV-104 paid")
    assert (f.n_ids, f.id_overlap, f.n_words, f.word_overlap, f.cue) == (3, 2 / 3, 3, 2 / 3, False)
    z = -1.0 + 3.0 * (2 / 3) - 1.5 * (1 - 2 / 3) + 2.5 * (2 / 3)
    assert probability(f) == 1.0 / (1.0 + math.exp(-z))
    req = JudgeRequest(task="t", retained_turn="INV-104 paid", previous_summary="", evidence=("noteA7-Q here",),
                       entries=(entry, "- Will email the client next."), request_id="r/b1")
    scores = LexicalJudge().score(req).scores
    sources = Sources.of("\n".join(["noteA7-Q here", "INV-104 paid", ""]))
    assert scores == [probability(features(e, sources)) for e in req.entries]
    assert abs(scores[0] - 1.0 / (1.0 + math.exp(-z))) < 1e-15


def test_a_judge_that_gives_another_count_of_scores_than_entries_is_an_error_naming_the_request() -> None:
    """score_requests builds the scores table a request at a time; a judge that answers a request of n entries with
    another number of scores is refused, naming the request, not written shifted onto the next entries."""
    import pytest

    from workbench.adapters import read_log
    from workbench.judges import JudgeResult, score_requests
    from workbench.summaries import compaction_requests

    from tests.conftest import ROOT

    requests = [r for r in compaction_requests(read_log(ROOT / "workbench" / "datasets" / "example_logs" / "invoice_log.jsonl"))
                if len(r.entry_ids) > 1][:2]

    class Short(LexicalJudge):
        def score(self, request: JudgeRequest, repeat: int = 0) -> JudgeResult:
            res = super().score(request, repeat)
            return JudgeResult(scores=res.scores[:-1], reasons=res.reasons[:-1], request_ids=res.request_ids[:-1],
                               requests=1)

    full, _ = score_requests(requests, LexicalJudge())
    assert full.height == sum(len(r.entry_ids) for r in requests)
    with pytest.raises(ValueError, match=requests[0].request.request_id):
        score_requests(requests, Short())


def test_the_identifier_pattern_finds_what_the_plain_pattern_finds() -> None:
    """Issue 62: the identifier pattern skips starts inside a run of letters (a lookbehind) and never gives letters
    back (possessive). Against the plain pattern it replaced, on 20,000 random strings over letters, digits,
    separators, a non-ASCII letter and spaces, and on identifiers as logs write them: the same matches."""
    import random
    import re

    from workbench.judges._lexical import _ID

    plain = re.compile(r"[A-Za-z]*[-_]?\d[\w.\-/:]*")
    rng = random.Random(7)
    alphabet = "abZ-_1907.:/ é\n,"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(20_000)]
    texts += ["INV-104 paid $120.50 on 2026-11-02T10:00Z", "ab-x1 abc_9 -5 _7 x-_1 a--1 é7 Ab12/cd:3.4",
              "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-", "", "7", "a7-q"]
    assert [_ID.findall(t) for t in texts] == [plain.findall(t) for t in texts]
