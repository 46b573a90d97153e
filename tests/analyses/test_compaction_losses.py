"""What each compaction lost: facts replaced, carried, dropped and re-fetched, counted by hand on small logs and
checked for their invariants on inspect_ai's own logs."""

from __future__ import annotations

import polars as pl
import pytest

from tests.conftest import ROOT
from workbench.analyses import compaction_facts, compaction_losses
from workbench.analyses._compaction_losses import facts
from workbench.summaries import fact_check_compactions


def _tables(observations: list[str], summary: str | None, *, step: int, retained: str | None = None,
            tokens: list[int | None] | None = None, task: str = "Pay the invoices.") -> dict[str, pl.DataFrame]:
    n = len(observations)
    steps = pl.DataFrame({"run_id": ["r"] * n, "step": list(range(n)), "tool": ["t"] * n, "args": ["{}"] * n,
                          "observation": observations,
                          "input_tokens": tokens if tokens is not None else [None] * n,
                          "output_tokens": [None] * n}, schema_overrides={"input_tokens": pl.Int64,
                                                                           "output_tokens": pl.Int64})
    comps = pl.DataFrame({"run_id": ["r"], "boundary": [0], "step": [step], "span_start": [0], "span_end": [step - 1],
                          "previous_summary": [None], "retained_turn": [retained], "candidate_summary": [summary],
                          "committed_summary": [summary], "pre_tokens": [900], "post_tokens": [300]},
                         schema_overrides={"previous_summary": pl.Utf8, "retained_turn": pl.Utf8,
                                           "candidate_summary": pl.Utf8, "committed_summary": pl.Utf8})
    runs = pl.DataFrame({"run_id": ["r"], "task": [task]})
    return {"runs": runs, "steps": steps, "compactions": comps}


def test_counts_by_hand() -> None:
    tables = _tables(["Open invoices: INV-1234, INV-12345.", "INV-1234: amount $1,204.50, due 2026-11-30.",
                      "Saved /srv/app/report.csv", "INV-12345: amount $88.00.",
                      "INV-1234: amount $1,204.50 again"],  # step 4, after the boundary: a re-fetch
                     "Paid INV-12345 ($88). Amount $1204.5 noted.", step=4, tokens=[10, 20, 30, 40, 50])
    rows = {r["fact"]: r for r in compaction_facts(tables).iter_rows(named=True)}
    assert rows.keys() == {"INV-1234", "INV-12345", "1204.50", "2026-11-30", "/srv/app/report.csv", "88.00"}
    assert rows["INV-12345"]["carried"] and rows["88.00"]["carried"]  # "$88" in the summary is the amount 88.00
    assert rows["1204.50"]["carried"]  # $1204.5 = $1,204.50, compared as values
    # INV-1234 is inside INV-12345 as a substring, never as a token: dropped, and step 4 returns it again
    assert not rows["INV-1234"]["carried"] and rows["INV-1234"]["refetch_step"] == 4
    assert rows["INV-1234"]["source_step"] == 0 and rows["1204.50"]["source_step"] == 1
    assert not rows["2026-11-30"]["carried"] and rows["2026-11-30"]["refetch_step"] is None
    assert rows["/srv/app/report.csv"]["kind"] == "path" and rows["2026-11-30"]["kind"] == "date"
    loss = compaction_losses(tables).row(0, named=True)
    assert loss == {"run_id": "r", "boundary": 0, "facts_replaced": 6, "facts_carried": 3, "facts_dropped": 3,
                    "facts_refetched": 1, "refetch_steps": 1, "refetch_tokens": 50, "pre_tokens": 900,
                    "post_tokens": 300}


def test_the_kept_turn_and_the_task_carry_facts_and_no_summary_is_an_edit() -> None:
    tables = _tables(["INV-5555 amount $10.00", "INV-7777 amount $20.00"], None, step=2,
                     retained="tool: INV-7777 amount $20.00", task="Settle INV-5555 first.")
    loss = compaction_losses(tables).row(0, named=True)
    assert (loss["facts_replaced"], loss["facts_carried"], loss["facts_dropped"]) == (4, 3, 1)
    # no tokens recorded in the run: what a re-fetch cost is unknown, not zero
    assert loss["refetch_tokens"] is None


def test_the_fact_checks_identifiers_are_the_identifier_facts() -> None:
    """Built on the fact check: its dropped identifiers are this module's dropped identifier facts wherever the
    summary replaced observations only (no previous summary, no arguments with other ids)."""
    tables = _tables(["Open: INV-1001, INV-1002, INV-1003", "INV-1002: amount $5.00"], "Paid INV-1001.", step=2)
    dropped = compaction_facts(tables).filter(~pl.col("carried") & (pl.col("kind") == "identifier"))
    checked = fact_check_compactions(tables["compactions"], tables["steps"], tables["runs"])
    assert checked.get_column("dropped_ids").to_list() == [dropped.height] == [2]


def test_amount_rules() -> None:
    assert facts("paid $1,204.5 and 3.10 and 12.345 and v2.10.1 and 7") == {"1204.50": "amount", "3.10": "amount"}


@pytest.mark.parametrize("name", ["summary", "edit", "trim"])
def test_invariants_on_inspect_ais_logs(name: str) -> None:
    pytest.importorskip("inspect_ai")
    from workbench.adapters import read_log

    tables = read_log(ROOT / "tests" / "fixtures" / "inspect" / f"{name}.eval")
    losses = compaction_losses(tables)
    assert losses.height == tables["compactions"].height
    assert (losses["facts_replaced"] == losses["facts_carried"] + losses["facts_dropped"]).all()
    assert (losses["facts_refetched"] <= losses["facts_dropped"]).all()
    assert (losses["refetch_steps"] <= losses["facts_refetched"]).all()
    assert losses.select("pre_tokens", "post_tokens").equals(
        tables["compactions"].sort("run_id", "boundary").select("pre_tokens", "post_tokens"))
    if name != "summary":  # edit and trim keep no summary: what they cleared is lost unless kept or fetched again
        assert losses["facts_dropped"].sum() > 0 and losses["facts_refetched"].sum() > 0


def test_the_detector_against_a_known_world() -> None:
    """Two invoices the task needs; the summary keeps one id and its amount; a report total no task needs is
    dropped too: the detector reports it (a false positive), and both of the other invoice's facts (true)."""
    import json

    from workbench.analyses import dropped_fact_accuracy

    tables = _tables(["Open: INV-1111, INV-2222.", "INV-1111: amount $10.00", "INV-2222: amount $20.00",
                      "Report filed: total $30.00"], "Paid INV-1111 $10.00.", step=4)
    world = {"invoices": [{"invoice_id": "INV-1111", "amount": 10.0}, {"invoice_id": "INV-2222", "amount": 20.0}]}
    tables["runs"] = tables["runs"].with_columns(gt_world=pl.lit(json.dumps(world)))
    row = dropped_fact_accuracy(tables).row(0, named=True)
    assert (row["truly_dropped"], row["reported_dropped"], row["tp"], row["fp"], row["fn"]) == (2, 3, 2, 1, 0)
    assert row["precision"] == pytest.approx(2 / 3) and row["recall"] == 1.0


@pytest.mark.parametrize("name", ["claude-code", "codex"])
def test_every_format_with_compactions(name: str) -> None:
    """The coding agents' example sessions: one row per compaction, the facts their tools returned (paths among
    them) split into carried and dropped; the recorded post_tokens are null where the format records none."""
    from workbench.adapters import read_log

    tables = read_log(ROOT / "workbench" / "datasets" / "example_logs" / name, name)
    losses = compaction_losses(tables)
    assert losses.height == tables["compactions"].height > 0
    assert (losses["facts_replaced"] == losses["facts_carried"] + losses["facts_dropped"]).all()
    assert losses["facts_replaced"].sum() > 0
    assert losses["post_tokens"].null_count() == losses.height
