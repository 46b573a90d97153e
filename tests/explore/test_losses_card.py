"""The compaction page's card: recorded tokens, strategy, and what the compaction lost, the same numbers as
:func:`workbench.analyses.compaction_losses`, each dropped fact linked to the step that returned it and the step
that fetched it again."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT
from workbench.analyses import compaction_losses
from workbench.explore import build_site

# the reader imports inspect_ai when it reads; a worker that only collects this file does not
pytestmark = pytest.mark.skipif(importlib.util.find_spec("inspect_ai") is None, reason="inspect_ai is not installed")


def test_the_card_says_what_compaction_losses_counts(tmp_path: Path) -> None:
    from workbench.adapters import read_log

    tables = read_log(ROOT / "tests" / "fixtures" / "inspect" / "edit.eval")
    build_site(tables, tmp_path / "site")
    losses = compaction_losses(tables)
    for row in losses.iter_rows(named=True):
        slug_start = row["run_id"].replace("/", "_")
        page = next((tmp_path / "site" / "runs").glob(f"{slug_start}-*/b{row['boundary']}.html")).read_text()
        card = page[page.index('id="losses"'):page.index("</div>", page.index('id="losses"'))]
        assert f"{row['pre_tokens']} tokens before, {row['post_tokens']} after" in card
        assert "edit compaction by CompactionEdit, trigger threshold" in card
        assert (f"{row['facts_carried']} carried (in the summary, the task or the kept turns), "
                f"{row['facts_dropped']} dropped; {row['facts_refetched']} of those fetched again in "
                f"{row['refetch_steps']} step") in card
        assert f"costing {row['refetch_tokens']} tokens" in card
        assert len(re.findall(r"<tr><td><code>", card.split("carried fact")[0])) == row["facts_dropped"]
        # every "returned at" link points at a replaced step anchored on this page
        for step in re.findall(r'href="#h-(\d+)"', card):
            assert f'id="h-{step}"' in page
        assert "writes no summary" in page


def test_untrusted_facts_are_escaped(tmp_path: Path) -> None:
    from workbench.adapters._staging import RunTables

    builder = RunTables(tmp_path / "log")
    builder.add_run(1, {"run_id": "r", "task_id": "r", "scenario_id": "r", "method": "m", "task": "t"},
                    [{"run_id": "r", "step": 0, "tool": "t", "observation": "see https://x.example/<script>alert(1)"},
                     {"run_id": "r", "step": 1, "tool": "t", "observation": "ok"}],
                    [{"run_id": "r", "boundary": 0, "step": 1, "span_start": 0, "span_end": 0,
                      "candidate_summary": "nothing", "committed_summary": "nothing"}])
    tables = builder.finish()
    build_site(tables, tmp_path / "site")
    page = next((tmp_path / "site" / "runs").glob("r-*/b0.html")).read_text()
    card = page[page.index('id="losses"'):]
    assert "<script>alert" not in card and "&lt;script&gt;" in card
