"""The budget trigger and FIFO replayed over real runs, on a hand-built run."""

from __future__ import annotations

import polars as pl

from workbench.summaries._identifiers import arg_identifiers
from workbench.analyses import replay_run


def test_replay_counts_boundaries_and_out_of_window_references() -> None:
    pad = " filler" * 200  # about 200 o200k tokens
    steps = pl.DataFrame({
        "step": [0, 1, 2, 3],
        "tool": ["get_reservation", "search", "noop", "cancel_reservation"],
        "args": ['{"id": "AB12CD"}', '{"q": "x"}', "{}", '{"reservation_id": "AB12CD"}'],
        "text": [None] * 4,
        "observation": ["reservation AB12CD found" + pad, "results" + pad, "ok" + pad, "cancelled"],
    })
    res = replay_run(steps, "cancel my trip", 500)
    assert res.boundaries >= 1
    assert res.refs == 1 and res.out_of_window == 1 and res.lost == ("AB12CD",)
    wide = replay_run(steps, "cancel my trip", 100_000)
    assert (wide.boundaries, wide.out_of_window) == (0, 0)
    assert arg_identifiers('{"a": ["HAT136", {"b": "mia_li_3668"}], "d": "2024-05-20"}') == {"HAT136", "mia_li_3668"}


def test_replay_by_budget_sums_runs_per_budget() -> None:
    from workbench.analyses import replay_by_budget

    rep = pl.DataFrame({"run_id": ["a", "b", "a", "b"], "budget": [200, 200, 100, 100], "boundaries": [0, 2, 1, 3],
                        "actions_after": [0, 4, 2, 5], "refs": [0, 3, 1, 3], "out_of_window": [0, 1, 0, 2],
                        "lost_ids": [[], ["x"], [], ["x", "y"]]})
    got = {r["budget"]: r for r in replay_by_budget(rep).iter_rows(named=True)}
    assert list(got) == [100, 200]
    assert (got[100]["boundaries_per_run"], got[100]["runs_compacted"], got[100]["actions_after"]) == (2.0, 1.0, 7)
    assert (got[200]["boundaries_per_run"], got[200]["runs_compacted"], got[200]["id_refs_after_boundary"]) == (1.0, 0.5, 3)
    assert (got[100]["out_of_window"], got[200]["runs_with_out_of_window_refs"]) == (2, 0.5)
