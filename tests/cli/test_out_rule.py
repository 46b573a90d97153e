"""One rule for every verb's ``--out`` file (faults round 5, items 4 and 5): an existing file is replaced only when
it is what that verb writes (an earlier run's), or with ``--force``; never through a link; and ``usage --by`` writes
the grouping it names. Before: ``usage --out mine.csv`` and ``judge --out`` silently replaced a file they did not
make, and ``usage --by day|model|project --out x.csv`` wrote the per-session table all four times."""

from __future__ import annotations

import csv
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import ROOT
from workbench.cli.main import main

HOME = ROOT / "workbench" / "datasets" / "example_logs"


@pytest.mark.parametrize("verb", ["usage", "judge"])
def test_a_file_the_verb_did_not_write_is_refused_then_replaced_with_force(verb: str, tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / ("mine.csv" if verb == "usage" else "mine.parquet")
    pl.DataFrame({"my": [1, 2]}).write_csv(mine) if verb == "usage" else pl.DataFrame({"my": [1]}).write_parquet(mine)
    before = mine.read_bytes()
    if verb == "usage":
        args = ["usage", str(HOME), "--out", str(mine)]
    else:
        data = tmp_path / "log"
        assert main(["import", str(HOME / "invoice_log.jsonl"), "--out", str(data), "--entries"]) == 0
        args = ["judge", str(data), "--out", str(mine)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{mine}: is a file this command did not write" in err and "--force" in err
    assert mine.read_bytes() == before
    assert main([*args, "--force"]) == 0 and mine.read_bytes() != before
    again = mine.read_bytes()
    assert main(args) == 0  # its own file now: replaced without --force
    link = tmp_path / ("link.csv" if verb == "usage" else "link.parquet")
    link.symlink_to(mine)
    assert main([*args[:-1], str(link), "--force"]) == 2
    assert "symbolic link" in capsys.readouterr().err and mine.read_bytes() == again


@pytest.mark.parametrize("by, key", [("day", "day"), ("model", "model"), ("project", "project_dir"),
                                     ("session", "session_id")])
def test_usage_writes_the_grouping_it_names(by: str, key: str, tmp_path: Path) -> None:
    out = tmp_path / f"{by}.csv"
    assert main(["usage", str(HOME), "--by", by, "--out", str(out)]) == 0
    with open(out, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert key in rows[0]
    keys = [r[key] for r in rows]
    assert len(keys) == len(set(keys))  # one row per group
    tokens = "input" if by != "session" else "usage_input_tokens"
    assert sum(int(r[tokens]) for r in rows) > 0
    parquet = tmp_path / f"{by}.parquet"
    assert main(["usage", str(HOME), "--by", by, "--out", str(parquet)]) == 0
    assert pl.read_parquet(parquet).height == len(rows)
