"""Streaming import: a JSONL log read line by line and written in bounded chunks gives exactly the tables of the
in-memory reader; a bad line near the end is named FILE:LINE and leaves no directory, no staging, no half table."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from workbench.tables import _records as records
from workbench.adapters import read_log
from workbench.datasets import import_log
from workbench.cli.main import main
from workbench.summaries import entries_table

from tests.conftest import EXAMPLE


def _log(tmp_path: Path, copies: int = 12) -> Path:
    """The example log replicated with new run ids; later copies carry a gt_ field the first ones lack."""
    lines = [json.loads(x) for x in EXAMPLE.read_text().splitlines() if x.strip()]
    out = tmp_path / "log.jsonl"
    with open(out, "w") as fh:
        for c in range(copies):
            for rec in lines:
                rec = {**rec, "run_id": f"{rec['run_id']}#{c}"}
                if c >= copies // 2:
                    rec["gt_note"] = f"copy {c}"
                fh.write(json.dumps(rec) + "\n")
    return out


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(records, "CHUNK_ROWS", 40)  # many chunks even for a small log


def test_streamed_tables_equal_the_in_memory_ones(tmp_path: Path, small_chunks: None) -> None:
    log = _log(tmp_path)
    counts = import_log(log, tmp_path / "out", entries=True)
    whole = read_log(log)
    whole["entries"] = entries_table(whole["compactions"])
    for name, frame in whole.items():
        got = pl.read_parquet(tmp_path / "out" / f"{name}.parquet")
        assert got.columns == frame.columns, name
        if name == "entries":  # extracted chunk by chunk: each chunk in order, the same rows
            got, frame = got.sort("entry_id"), frame.sort("entry_id")
        assert got.equals(frame), name
        assert counts[name] == frame.height
    assert "gt_note" in pl.read_parquet(tmp_path / "out" / "runs.parquet").columns
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left behind
    assert import_log(log, None) == {n: counts[n] for n in ("runs", "steps", "compactions")}  # validate: counts


def test_a_bad_line_near_the_end_names_it_and_writes_nothing(tmp_path: Path, small_chunks: None,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    log = _log(tmp_path)
    lines = log.read_text().splitlines()
    bad = len(lines) - 1
    lines[bad - 1] = lines[bad - 1].replace('"run_id"', '"run_id": 7, "x"', 1)
    log.write_text("\n".join(lines) + "\n")
    out = tmp_path / "new"
    assert main(["import", str(log), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{log}:{bad}:" in err and "run_id" in err
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    # over an existing import (--force): the old tables stay as they were
    good = tmp_path / "good"
    assert main(["import", str(EXAMPLE), "--out", str(good)]) == 0
    before = {p.name: p.read_bytes() for p in good.iterdir()}
    assert main(["import", str(log), "--out", str(good), "--force"]) == 2
    assert {p.name: p.read_bytes() for p in good.iterdir()} == before
    assert main(["validate", str(log)]) == 2 and f"{log}:{bad}:" in capsys.readouterr().err


def test_entries_in_batches_equal_the_in_memory_extraction(tmp_path: Path) -> None:
    """Batches of 7 compactions cut runs apart: carried_from must still see each run's previous boundary."""
    from workbench.summaries import write_entries

    log = _log(tmp_path, copies=3)
    import_log(log, tmp_path / "d")
    n = write_entries(tmp_path / "d", batch_rows=7)
    got = pl.read_parquet(tmp_path / "d" / "entries.parquet")
    want = entries_table(pl.read_parquet(tmp_path / "d" / "compactions.parquet"))
    assert n == want.height and got.columns == want.columns
    assert got.sort("entry_id").equals(want.sort("entry_id"))
    assert got["carried_from"].null_count() < got.height  # the case that matters: some entries are carried
    # compactions that do not keep a run's rows together are done in memory, with the same result
    shuffled = pl.read_parquet(tmp_path / "d" / "compactions.parquet").sample(fraction=1.0, shuffle=True, seed=1)
    shuffled.write_parquet(tmp_path / "d" / "compactions.parquet")
    assert write_entries(tmp_path / "d", batch_rows=7) == want.height
    assert pl.read_parquet(tmp_path / "d" / "entries.parquet").sort("entry_id").equals(want.sort("entry_id"))


def test_sigterm_during_import_removes_its_staging_directory(tmp_path: Path) -> None:
    """``kill`` (SIGTERM) mid-import: the process unwinds like Ctrl-C, exits 143 and leaves neither the output nor its
    hidden staging directory (a killed import used to leave ``.out.XXXX/.parts``). The log is a FIFO, so the import
    is certainly mid-way: it has read some lines and waits for more (its format is given: sniffing would read ahead)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    fifo = tmp_path / "log.jsonl"
    os.mkfifo(fifo)
    proc = subprocess.Popen([str(Path(sys.executable).parent / "workbench"), "import", str(fifo), "--format", "trajectory",
                             "--out", str(tmp_path / "out")], stderr=subprocess.PIPE, text=True)
    try:
        with open(fifo, "w", encoding="utf-8") as writer:  # blocks until the import opens the log
            writer.write(EXAMPLE.read_text(encoding="utf-8").splitlines()[0] + "\n")
            writer.flush()
            deadline = time.monotonic() + 20
            while not any(p.name.startswith(".out.") for p in tmp_path.iterdir()):
                assert time.monotonic() < deadline, "no staging directory appeared"
                time.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 143, err
    assert "terminated (SIGTERM)" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.jsonl"]


def test_sigterm_between_two_table_moves_waits_until_the_set_is_in_place(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a SIGTERM after the first table moved left the new compactions beside the old runs and steps. The
    termination now waits for the last move: the directory holds one import's set whole."""
    import os
    import signal

    from workbench.cli import main as cli_main
    from workbench.cli.main import main
    from workbench.tables import _files as tables_module

    out = tmp_path / "out"
    assert main(["import", str(EXAMPLE), "--out", str(out)]) == 0
    old = {p.name: p.read_bytes() for p in out.iterdir()}
    moves = []
    real_replace = os.replace

    def replace_then_signal(src: object, dst: object) -> None:
        real_replace(src, dst)
        moves.append(Path(str(dst)).name)
        if len(moves) == 1:  # the signal arrives after the first table is in place
            signal.raise_signal(signal.SIGTERM)

    monkeypatch.setattr(tables_module.os, "replace", replace_then_signal)
    previous = signal.signal(signal.SIGTERM, cli_main._terminate)
    try:
        with pytest.raises(cli_main.Terminated):
            from workbench.tables._files import move_into_place

            staging = tmp_path / ".out.staging"
            staging.mkdir()
            for name in old:
                (staging / name).write_bytes(b"new " + name.encode())
            move_into_place(staging, out, replace=True)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert len(moves) == len(old)  # every table moved before the termination was raised
    assert {p.name: p.read_bytes() for p in out.iterdir()} == {n: b"new " + n.encode() for n in old}


def test_staging_a_killed_run_left_is_cleaned_by_the_next(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: a SIGKILL left `.OUT.*` beside an import forever; later runs neither cleaned nor mentioned it."""
    import os
    import time

    from workbench.cli.main import main

    stale = tmp_path / ".out.wb-staging-abc123"
    (stale / ".parts").mkdir(parents=True)
    (stale / ".parts" / "part-000000.parquet").write_bytes(b"x")
    fresh = tmp_path / ".out.wb-staging-def456"  # a run going on now: young, left alone
    fresh.mkdir()
    theirs = [tmp_path / ".out.bak", tmp_path / ".out.notes"]  # someone else's, old: never touched (issue 39)
    theirs[0].mkdir()
    theirs[1].write_text("mine")
    hour_ago = time.time() - 7200
    for old in (stale, *theirs):
        os.utime(old, (hour_ago, hour_ago))
    assert main(["import", str(EXAMPLE), "--out", str(tmp_path / "out")]) == 0
    assert not stale.exists() and fresh.exists() and all(p.exists() for p in theirs)
    assert f"removed 1 staging directory a killed run left beside {tmp_path / 'out'}" in capsys.readouterr().err
