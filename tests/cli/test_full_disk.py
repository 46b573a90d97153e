"""A full disk during ``workbench import`` (faults round 5, item 8): a disk error naming the table file, the earlier
tables byte for byte as they were, no staging directory left. Before: ``internal error (ComputeError: parquet: File
out of specification: underlying IO error: No space left on device (os error 28)); this is a bug``, and with the
process's file size limit polars lost the cause altogether (``Invalid thrift: transport error``)."""

from __future__ import annotations

import errno
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import ROOT
from workbench._util.atomic import disk_error, writes_to

EXAMPLES = ROOT / "workbench" / "datasets" / "example_logs"
SOURCES = {
    "streamed JSON lines": EXAMPLES / "invoice_log.jsonl",
    "streamed Claude Code directory": EXAMPLES / "claude-code",
    "tau-bench, in memory (write_tables)": ROOT / "data" / "real" / "tau-bench" / "gpt-4o-airline-subset.json",
}


def _import(source: Path, out: Path, *, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def cap() -> None:  # (in the child only: a file size limit, as a quota or a small disk would give)
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    return subprocess.run([sys.executable, "-m", "workbench.cli.main", "import", str(source), "--out", str(out), "--force"],
                          capture_output=True, text=True, cwd=out.parent, preexec_fn=cap, timeout=120)


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.mark.parametrize("first, second", [("streamed Claude Code directory", "streamed JSON lines"),
                                           ("streamed JSON lines", "tau-bench, in memory (write_tables)")])
def test_an_import_that_runs_out_of_space_names_the_file_and_keeps_the_earlier_tables(first: str, second: str,
                                                                                        tmp_path: Path) -> None:
    out = tmp_path / "tables"
    assert _import(SOURCES[first], out).returncode == 0
    before = _snapshot(out)
    done = _import(SOURCES[second], out, limit=4096)
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("workbench import: File too large: ") and "internal error" not in done.stderr
    named = Path(line.split(": ", 2)[2])
    assert named.parent.name == "tables" and named.suffix == ".parquet", line
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tables"]  # no staging directory beside it


def test_polars_full_disk_error_becomes_an_oserror_naming_the_table() -> None:
    # /dev/full answers every write with ENOSPC: polars' own error, not a simulation of it
    with pytest.raises(OSError) as caught, writes_to("out/steps.parquet", "/dev/full"):
        pl.DataFrame({"a": list(range(100_000))}).write_parquet("/dev/full")
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == "out/steps.parquet"


def test_disk_error_leaves_other_errors_alone(tmp_path: Path) -> None:
    from workbench.errors import SchemaError

    assert disk_error(SchemaError("log.jsonl:3: field 'x' said (os error 28)")) is None  # input text, not a disk
    assert disk_error(pl.exceptions.ComputeError("some other failure"), tmp_path / "absent") is None
    with pytest.raises(ValueError), writes_to(tmp_path / "x"):
        raise ValueError("not a disk error")


@pytest.mark.skipif(os.geteuid() != 0 or not Path("/proc/filesystems").exists(), reason="mounting needs root")
def test_a_really_full_tmpfs(tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(small)],
                      capture_output=True).returncode != 0:
        pytest.skip("this machine does not let a test mount a tmpfs")
    try:
        out = small / "tables"
        assert _import(SOURCES["streamed Claude Code directory"], out).returncode == 0
        before = _snapshot(out)
        filler = small / "filler"  # the disk full but for 16 KiB, less than the new tables need
        filler.write_bytes(b"\0" * (shutil.disk_usage(small).free - 16384))
        done = _import(SOURCES["tau-bench, in memory (write_tables)"], out)
        assert done.returncode == 2, done.stderr
        assert "No space left on device: " in done.stderr and "internal error" not in done.stderr
        assert _snapshot(out) == before and sorted(p.name for p in small.iterdir()) == ["filler", "tables"]
    finally:
        subprocess.run(["umount", str(small)], check=False)
