"""The notebooks run on a user's own data: an imported log given as the DATA parameter."""

from __future__ import annotations

from pathlib import Path

from workbench.cli import main
from workbench.notebooks import run_all

ROOT = Path(__file__).resolve().parents[1]


def test_notebooks_run_on_an_imported_log(tmp_path: Path) -> None:
    data = tmp_path / "imported"
    assert main(["import", str(ROOT / "data" / "examples" / "invoice_log.jsonl"), "--out", str(data)]) == 0
    figs = tmp_path / "figs"
    code = run_all(ROOT / "notebooks", tmp_path / "build", timeout=300, cwd=ROOT,
                   parameters={"DATA": str(data), "FIGURES": str(figs), "N_BOOT": 200},
                   names=["summary_composition", "threshold_sensitivity", "reliability_efficiency",
                          "failure_attribution", "judge_validation"])
    assert code == 0
    made = {p.name for p in figs.glob("*.png")}
    assert {"sjc_table2_composition.png", "sjc_fig3_pruned_vs_tau.png", "sjc_fig2_pass_vs_tokens.png"} <= made
    assert (figs / "tables" / "sjc_table2_entries_by_section.tex").exists()
