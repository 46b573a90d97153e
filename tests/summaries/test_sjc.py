"""The SJC prune operator: null scores kept, delete-only (property test)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.summaries import keep_positions, prune_summary
from workbench.summaries import parse


def test_prune_summary_keeps_null_and_above_tau() -> None:
    cand = "## Decisions\n- a INV-1\n- b\n## Open TODOs\n- c\n## Exact identifiers\n- INV-1\n"
    res = prune_summary(cand, [0.9, 0.1, None, 0.5], tau=0.5)
    assert res.kept == (0, 2, 3) and res.pruned == (1,)
    assert res.committed == "## Decisions\n- a INV-1\n## Open TODOs\n- c\n## Exact identifiers\n- INV-1\n"
    assert res.tokens_after < res.tokens_before
    assert res.by_section.to_dicts()[0] == {"section": "Decisions", "kept": 1, "pruned": 1}
    assert keep_positions([float("nan"), 0.49], 0.5) == [0]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["- Paid INV-1", "* b", "1. c", "  - nested", "None.", "prose", "## Open TODOs", ""]),
                max_size=15), st.data())
def test_pruning_never_adds_or_rewrites(lines: list[str], data: st.DataObject) -> None:
    cand = "## Decisions\n" + "\n".join(lines) + "\n"
    n = len(parse(cand))
    scores = data.draw(st.lists(st.one_of(st.none(), st.floats(0, 1)), min_size=n, max_size=n))
    tau = data.draw(st.floats(0, 1))
    res = prune_summary(cand, scores, tau)
    kept_texts = [e.text for e in parse(res.committed)]
    assert kept_texts == [e.text for e in parse(cand) if e.position in res.kept]
    assert len(res.committed) <= len(cand)
