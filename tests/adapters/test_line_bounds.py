"""Session files that shrink while they are read, lines without a bound, and trees that cannot be read (issue 57,
items 6, 7 and 16). Each test runs the real command or a child process on real files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench._util.jsonl import BadLines, json_lines

WORKBENCH = str(Path(sys.executable).parent / "workbench")


def _reply(sid: str, k: int, text: str = "hi") -> str:
    return json.dumps({"type": "assistant", "sessionId": sid, "requestId": f"r{k}", "uuid": f"{sid}-{k}",
                       "timestamp": f"2026-01-01T00:00:{k:02d}Z", "cwd": "/p",
                       "message": {"id": f"m{sid}{k}", "model": "claude-x", "role": "assistant",
                                   "content": [{"type": "text", "text": text}],
                                   "usage": {"input_tokens": 5, "output_tokens": 7}}}) + "\n"


def _without_root_reads() -> None:
    """In the child, before it runs the command: give up root's power to read any file (CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH leave the bounding set, so the program run has neither), as a user's own process has."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _run(*args: str, env: dict[str, str] | None = None, as_user: bool = False) -> subprocess.CompletedProcess[str]:
    preexec = _without_root_reads if as_user and os.geteuid() == 0 else None
    return subprocess.run([WORKBENCH, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})}, preexec_fn=preexec)


# -- item 6: a file that shrinks while it is read -------------------------------------------------------------

SHRINK = """
import os, sys, warnings
from pathlib import Path
from workbench._util.jsonl import BadLines, json_lines
path = Path(sys.argv[1])
lines = json_lines(path, BadLines(), fast=True)
next(lines)
os.truncate(path, 20_000)  # the session file is cut (rotated, rewritten) while it is read
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    rest = sum(1 for _ in lines)
print(rest, len(caught))
"""


def test_a_session_file_cut_while_it_is_read_ends_early_instead_of_killing_the_process(tmp_path: Path) -> None:
    """Before: the file was mapped, and reading a page past its new end killed the process with SIGBUS (rc -7 for
    a child, 135 for the shell; no message). Now the reader sees the file end: the lines left in the buffer are
    read, the cut last line is skipped with the usual warning, the process goes on."""
    path = tmp_path / "s.jsonl"
    path.write_text("".join(_reply("s", k % 60, "x" * 2000) for k in range(4000)), encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", SHRINK, str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, (out.returncode, out.stderr[-500:])
    rest, warned = map(int, out.stdout.split())
    assert rest < 3999  # it ended early, where the file now ends (the buffered block may still hold a few lines)
    assert warned <= 1


# -- item 7: a bound on a line's bytes ------------------------------------------------------------------------

def test_bounded_lines_splits_as_splitlines_does_and_passes_over_a_long_line(tmp_path: Path) -> None:
    """The reader's lines against Python's own split of the same bytes, with a bound of 10: the 11-byte line (its
    end not counted) is None and every other line is byte-identical, numbered as ``enumerate`` numbers them."""
    from workbench._util.jsonl import bounded_lines

    data = b"a\n0123456789\n0123456789A\n\nlast"
    path = tmp_path / "f"
    path.write_bytes(data)
    with open(path, "rb") as fh:
        got = list(bounded_lines(fh, 10))
    want = list(enumerate(data.splitlines(keepends=True), start=1))
    assert [n for n, _ in got] == [n for n, _ in want]
    assert [raw for _, raw in got] == [b"a\n", b"0123456789\n", None, b"\n", b"last"]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(lines=st.lists(st.tuples(st.sampled_from([b"", b"x", b"ab", b"NEEDLE", b"xNEEDLEy", b"NEED", b"LE"]),
                                st.integers(0, 40)), max_size=30),
       last_end=st.booleans(), limit=st.integers(1, 60), block=st.integers(1, 70))
def test_lines_holding_is_bounded_lines_filtered(lines: list[tuple[bytes, int]], last_end: bool, limit: int,
                                                 block: int) -> None:
    """``workbench usage``'s block scanner against the line reader it replaced on random files: the lines holding
    the needle and every line over the bound, with the same numbers and bytes, whatever the block size (a needle
    cut by a block's edge, a long line spanning blocks, a last line without its end)."""
    import io

    from workbench._util.jsonl import bounded_lines, lines_holding

    data = b"\n".join(word + b"." * pad for word, pad in lines) + (b"\n" if last_end and lines else b"")
    want = [(n, raw) for n, raw in bounded_lines(io.BytesIO(data), limit) if raw is None or b"NEEDLE" in raw]
    assert list(lines_holding(io.BytesIO(data), b"NEEDLE", limit, block=block)) == want


def test_a_line_over_the_bound_is_a_located_error_or_skipped_and_counted(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a line was read whole whatever its size (a 1 GB line took 5.5 GB). With the bound lowered to 1000
    bytes, line 2 of 2500 bytes is an error naming FILE:2 on both readers, or skipped and counted with
    skip_invalid; the lines around it are read."""
    from workbench.errors import SchemaError

    monkeypatch.setenv("WORKBENCH_MAX_LINE_BYTES", "1000")
    path = tmp_path / "s.jsonl"
    path.write_text(_reply("s", 0) + _reply("s", 1, "y" * 2500) + _reply("s", 2), encoding="utf-8")
    for fast in (False, True):
        with pytest.raises(SchemaError, match=r"s\.jsonl:2: expected a line of at most 1,000 bytes"):
            list(json_lines(path, BadLines(), fast=fast))
        bad = BadLines(skip_invalid=True)
        assert [n for n, _ in json_lines(path, bad, fast=fast)] == [1, 3]
        assert bad.skipped == [(str(path), 2, "a line longer than 1,000 bytes")]


@pytest.fixture
def nul_home(tmp_path: Path) -> Path:
    """A Claude Code home with one session and a 3 MB file of NUL bytes (what a crash can leave)."""
    project = tmp_path / "home" / ".claude" / "projects" / "p"
    project.mkdir(parents=True)
    (project / "a.jsonl").write_text(_reply("s1", 0) + _reply("s1", 1), encoding="utf-8")
    (project / "crash.jsonl").write_bytes(b"\0" * 3_000_000)
    return tmp_path / "home"


def test_usage_and_import_read_past_a_nul_filled_file_within_the_bound(nul_home: Path) -> None:
    """Before: ``usage`` on a NUL-filled file grew until the OOM killer stopped it (24 GB). With a 64 KiB bound
    (``--max-line-bytes``) the file's one line is never held: usage (which reads only files that say they are
    sessions) counts the session's two replies; import, which reads every file of the tree, names the file's line
    1, and with --skip-invalid reads the session. The bounded reader's peak memory on a 1 GB line is measured in
    benchmarks/bench_line_reading.py."""
    usage = _run("usage", str(nul_home), "--max-line-bytes", "65536", "--json")
    assert usage.returncode == 0, usage.stderr
    assert [r["replies"] for r in json.loads(usage.stdout)] == [2]
    out = nul_home.parent / "out"
    imported = _run("import", str(nul_home), "--out", str(out), "--max-line-bytes", "65536")
    assert imported.returncode == 2 and "crash.jsonl:1: expected a line of at most 65,536 bytes" in imported.stderr
    imported = _run("import", str(nul_home), "--out", str(out), "--max-line-bytes", "65536", "--skip-invalid")
    assert imported.returncode == 0, imported.stderr
    assert "1 runs" in imported.stdout and "crash.jsonl:1: a line longer than 65,536 bytes" in imported.stderr


def test_a_long_line_in_a_session_is_named_by_usage_and_import_and_skipped_with_skip_invalid(tmp_path: Path) -> None:
    """A session's second line over the bound: without --skip-invalid both commands stop with FILE:2, exit 2,
    nothing written; with it both go on and say they skipped one line."""
    project = tmp_path / "projects" / "p"
    project.mkdir(parents=True)
    (project / "a.jsonl").write_text(_reply("s1", 0) + _reply("s1", 1, "z" * 9000) + _reply("s1", 2),
                                     encoding="utf-8")
    for verb in (["usage"], ["import", "--out", str(tmp_path / "out")]):
        bounded = _run(*verb[:1], str(tmp_path / "projects"), *verb[1:], "--max-line-bytes", "4096")
        assert bounded.returncode == 2
        assert "a.jsonl:2: expected a line of at most 4,096 bytes" in bounded.stderr
        assert "Traceback" not in bounded.stderr and not (tmp_path / "out").exists()
        skipped = _run(*verb[:1], str(tmp_path / "projects"), *verb[1:], "--max-line-bytes", "4096",
                       "--skip-invalid")
        assert skipped.returncode == 0, skipped.stderr
        assert "skipped 1 invalid line(s) (--skip-invalid)" in skipped.stderr and "a.jsonl:2" in skipped.stderr


def test_a_malformed_line_bound_is_refused_before_reading() -> None:
    bad = _run("usage", ".", env={"WORKBENCH_MAX_LINE_BYTES": "64MB"})
    assert bad.returncode == 2 and "WORKBENCH_MAX_LINE_BYTES" in bad.stderr and "'64MB'" in bad.stderr
    option = _run("usage", ".", "--max-line-bytes", "0")
    assert option.returncode == 2 and "at least 1" in option.stderr


# -- item 16: what cannot be read ----------------------------------------------------------------------------

@pytest.fixture
def locked_home() -> Iterator[Path]:
    """A Claude Code home with four readable sessions in two projects, one session file the user may not read
    and one project directory (two sessions) they may not list: both belong to another user (``nobody``), mode
    0600 and 0700. When the tests run as root the commands run without root's power to read any file."""
    top = Path(tempfile.mkdtemp(prefix="wb-locked-"))
    projects = top / "home" / ".claude" / "projects"
    for name, sids in (("open", ["s1", "s2"]), ("also-open", ["s3", "s4"]), ("closed", ["s5", "s6"])):
        (projects / name).mkdir(parents=True)
        for sid in sids:
            (projects / name / f"{sid}.jsonl").write_text(_reply(sid, 0) + _reply(sid, 1), encoding="utf-8")
    (projects / "open" / "secret.jsonl").write_text(_reply("s7", 0), encoding="utf-8")
    os.chmod(projects / "open" / "secret.jsonl", 0o600)
    os.chmod(projects / "closed", 0o700)
    if os.geteuid() == 0:
        os.chown(projects / "open" / "secret.jsonl", NOBODY, NOBODY)
        os.chown(projects / "closed", NOBODY, NOBODY)
    else:  # the user's own files: modes that keep the user out
        os.chmod(projects / "open" / "secret.jsonl", 0o000)
        os.chmod(projects / "closed", 0o000)
    yield top / "home"
    os.chmod(projects / "closed", 0o700)
    shutil.rmtree(top)


NOBODY = 65534


def test_unreadable_files_and_directories_are_named_or_skipped_and_counted(locked_home: Path) -> None:
    """Before: an unreadable session file aborted ``usage`` and ``import`` even with --skip-invalid (an internal
    PermissionError), while an unreadable project directory was passed over without a word (its sessions silently
    missing). Now both are an error naming the first, exit 2, nothing written; with --skip-invalid both are skipped,
    counted and named, and the four readable sessions are counted."""
    out = locked_home.parent / "out"
    for verb in (["usage"], ["import", "--out", str(out)]):
        stopped = _run(*verb[:1], str(locked_home), *verb[1:], as_user=True)
        assert stopped.returncode == 2, stopped.stderr
        assert "cannot be read (Permission denied)" in stopped.stderr and "Traceback" not in stopped.stderr
        assert not out.exists()
        skipped = _run(*verb[:1], str(locked_home), *verb[1:], "--skip-invalid", as_user=True)
        assert skipped.returncode == 0, skipped.stderr
        assert "skipped 2 unreadable file(s) or directories (--skip-invalid)" in skipped.stderr
        assert "projects/closed" in skipped.stderr and "secret.jsonl" in skipped.stderr
    assert len(json.loads(_run("usage", str(locked_home), "--skip-invalid", "--json", as_user=True).stdout)) == 4
    assert "4 runs" in skipped.stdout
