"""The lexical judge's features and its fixed function."""

from __future__ import annotations

import math

import pytest

from workbench.judges import JudgeRequest
from workbench.judges.lexical import LexicalJudge, features, probability


def request(entries: tuple[str, ...] = ("- Paid INV-104 ($120.50).", "- Will email the client next.")) -> JudgeRequest:
    return JudgeRequest(task="Settle group G7.", retained_turn="paid INV-307", previous_summary="",
                        evidence=("INV-104: amount 120.50",), entries=entries, request_id="r/b0")


def test_lexical_features_and_fixed_function() -> None:
    f = features("- Paid INV-104 ($120.50).", "INV-104: amount 120.50, paid")
    assert f.n_ids == 2 and f.id_overlap == 1.0 and f.word_overlap == 1.0 and not f.cue
    assert probability(f) == pytest.approx(1 / (1 + math.exp(-4.5)))
    g = features("- Will email the client next.", "INV-104: amount 120.50")
    assert g.cue and g.n_ids == 0 and g.word_overlap == 0.0
    assert probability(g) == pytest.approx(1 / (1 + math.exp(2.5)))
    res = LexicalJudge().score(request())
    assert res.scores[0] > 0.9 > 0.1 > res.scores[1]  # type: ignore[operator]
