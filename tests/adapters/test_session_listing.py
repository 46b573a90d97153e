"""One walk of a session tree (issue 62): the listing's files, sizes and formats, decided from the fewest bytes, and
a Codex usage pass without the table library."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from workbench.adapters._logfiles import HEAD_BYTES, directory_formats, directory_listing, tree_listing

ROOT = Path(__file__).resolve().parents[2]


def _claude(sid: str, k: int) -> dict:
    return {"type": "assistant", "sessionId": sid, "uuid": f"{sid}-{k}", "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "model": "m", "content": "hi", "usage": {"input_tokens": 1}}}


def _lines(*records: object) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def test_the_listing_decides_each_files_format_as_a_record_by_record_reading_does(tmp_path: Path) -> None:
    """Every first line the head cannot decide from is read record by record, so each file gets the format its
    first record that says gives (the rule written out by hand below), and files none of whose records say are
    left out; sizes are the files' own and the order is sorted, whatever the directory order."""
    home = tmp_path / "home"
    claude, codex = home / ".claude" / "projects" / "p", home / ".codex" / "sessions" / "2026" / "01" / "02"
    claude.mkdir(parents=True)
    codex.mkdir(parents=True)
    meta = {"timestamp": "t", "type": "session_meta", "payload": {"id": "r1"}}
    files = {
        claude / "plain.jsonl": (_lines(_claude("a", 0)), "claude-code"),
        claude / "titled.jsonl": (_lines({"type": "summary", "summary": "x"}, _claude("b", 0)), "claude-code"),
        claude / "titles-only.jsonl": (_lines({"type": "summary", "summary": "x"}), None),
        claude / "blank-first.jsonl": ("\n" + _lines(_claude("c", 0)), "claude-code"),
        claude / "bom.jsonl": ("\ufeff" + _lines(_claude("d", 0)), "claude-code"),
        claude / "broken-first.jsonl": (_lines("{not json", _claude("e", 0)), "claude-code"),
        claude / "long-first.jsonl": (_lines({**_claude("f", 0), "pad": "x" * (HEAD_BYTES + 10)}), "claude-code"),
        claude / "past-first-read.jsonl": (_lines({**_claude("g", 0), "pad": "x" * 10_000}), "claude-code"),
        claude / "titled-past-first-read.jsonl": (_lines({"type": "summary", "summary": "y" * 10_000},
                                                          _claude("h", 0)), "claude-code"),
        claude / "escaped.jsonl": (_lines({"type": "summary", "summary": 'a "sessionId": here'}), None),
        codex / "rollout-1.jsonl": (_lines(meta), "codex"),
    }
    for path, (text, _) in files.items():
        path.write_text(text, encoding="utf-8")
    listing = tree_listing(home, formats=True)
    assert [f for f, _, _ in listing] == sorted(files)
    assert {f: (size, fmt) for f, size, fmt in listing} == {f: (f.stat().st_size, want) for f, (_, want) in
                                                            files.items()}
    by_format = directory_listing(home)
    assert by_format == {"claude-code": [(f, f.stat().st_size) for f in sorted(files) if files[f][1] == "claude-code"],
                         "codex": [(codex / "rollout-1.jsonl", (codex / "rollout-1.jsonl").stat().st_size)]}
    assert directory_formats(home) == {k: [f for f, _ in v] for k, v in by_format.items()}
    assert [f for f, _, fmt in tree_listing(home)] == sorted(files) and {fmt for *_, fmt in tree_listing(home)} == {None}


def test_the_head_reads_only_as_far_as_the_first_lines_end() -> None:
    """The format is decided from the first line, read a few KiB at a time until it ends (before: 64 KiB, most of
    a session file, at every file). Through a pipe, what is left unread is counted: a short first line costs one
    first read, a 10,000-byte one the rest of it read on at once, a line longer than HEAD_BYTES HEAD_BYTES."""
    from workbench.adapters._logfiles import _HEAD_FIRST_BYTES, _first_line, _format_of_head

    def left_after(text: bytes) -> tuple[str | None, int]:
        r, w = os.pipe()
        try:
            os.write(w, text)
            os.close(w)
            w = -1
            fmt = _format_of_head(_first_line(r))
            rest = b""
            while chunk := os.read(r, 1 << 16):
                rest += chunk
            return fmt, len(rest)
        finally:
            os.close(r)
            if w >= 0:
                os.close(w)

    short = _lines(_claude("a", 0)).encode()
    body = _lines(*[_claude("a", k) for k in range(1, 200)]).encode()  # 40 KB after it
    assert len(short) < _HEAD_FIRST_BYTES < len(short) + len(body) < 60_000
    assert left_after(short + body) == ("claude-code", len(short) + len(body) - _HEAD_FIRST_BYTES)
    long = _lines({**_claude("b", 0), "pad": "x" * 10_000}).encode()
    assert left_after(long + body[:30_000]) == ("claude-code", 0)  # read on to HEAD_BYTES: the pipe held less
    huge = _lines({**_claude("c", 0), "pad": "x" * HEAD_BYTES}).encode()
    assert len(huge) < 65_536 + HEAD_BYTES
    fmt, left = left_after(huge[:60_000])  # a pipe holds 64 KiB: no end of line within what it holds
    assert (fmt, left) == (None, 0)


def test_sizes_come_from_the_kept_listing_inside_a_walks_scope(tmp_path: Path) -> None:
    """Inside :func:`one_walk` a file's size is the listing's (what the split of the work was planned on), with no
    stat; a file no listing holds, or any file outside the scope, is stat'ed."""
    from workbench.adapters._logfiles import _file_sizes, one_walk

    a, b = tmp_path / "t" / "a.jsonl", tmp_path / "b.jsonl"
    a.parent.mkdir()
    a.write_text(_lines(_claude("a", 0)), encoding="utf-8")
    b.write_text("x\n", encoding="utf-8")
    listed = a.stat().st_size
    with one_walk():
        assert [f for f, _, _ in tree_listing(tmp_path / "t")] == [a]
        a.write_text(_lines(_claude("a", 0), _claude("a", 1)), encoding="utf-8")  # grown since the walk
        assert _file_sizes([a, b]) == [listed, 2]
    assert _file_sizes([a, b]) == [a.stat().st_size, 2] and a.stat().st_size > listed


def test_a_codex_usage_pass_does_not_load_the_table_library(tmp_path: Path) -> None:
    """Before, the Codex usage pass read rollouts through the importer's tables (polars: a quarter of a CPU second
    for one file); now it reads them without, with the same rows (the importer's table is the reference) on a
    rollout with two turns' token_count events."""
    usage = {"input_tokens": 1200, "cached_input_tokens": 200, "output_tokens": 90, "reasoning_output_tokens": 10,
             "total_tokens": 1290}
    twice = {k: 2 * v for k, v in usage.items()}
    rollout = tmp_path / "rollout-2026-01-02T00-00-00-r1.jsonl"
    rollout.write_text(_lines(
        {"timestamp": "2026-01-02T00:00:00Z", "type": "session_meta", "payload": {"id": "r1", "cwd": "/p"}},
        {"timestamp": "2026-01-02T00:00:01Z", "type": "turn_context", "payload": {"model": "gpt-5-codex"}},
        {"timestamp": "2026-01-02T00:00:02Z", "type": "event_msg",
         "payload": {"type": "token_count", "info": {"last_token_usage": usage, "total_token_usage": usage}}},
        {"timestamp": "2026-01-02T00:00:03Z", "type": "event_msg",
         "payload": {"type": "token_count", "info": {"last_token_usage": usage, "total_token_usage": twice}}}),
        encoding="utf-8")
    code = ("import sys, json; from workbench.adapters import usage_rows; "
            f"rows = usage_rows({str(tmp_path)!r}); print(json.dumps([[r['session_id'], r['usage_input_tokens'], "
            "r['usage_output_tokens'], r['usage_cache_read_tokens'], r['models']] for r in rows])); "
            "print('polars' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout.splitlines()
    assert out[1] == "False"
    from workbench.adapters import read_codex

    runs = read_codex(tmp_path)["runs"]
    want = [[r["run_id"], r["usage_input_tokens"], r["usage_output_tokens"], r["usage_cache_read_tokens"],
             list(r["models"])] for r in runs.iter_rows(named=True)]
    assert json.loads(out[0]) == want == [["r1", 2000, 180, 400, ["gpt-5-codex"]]]  # input less the cached, twice


def test_the_utc_day_of_a_stamp_equals_a_full_parse() -> None:
    """The usage pass takes a UTC stamp's day from its first ten characters; on every shape below (valid and not:
    February 30, hour 24, second 60, fractions of 1 to 7 digits, offsets, no zone) the day is what a full parse by
    ``datetime.fromisoformat`` and a conversion to UTC give."""
    import itertools
    from datetime import datetime, timezone

    from workbench.adapters._usage_scan import utc_day  # noqa: PLC2701 - the function under test

    def by_parse(stamp: str) -> str | None:
        try:
            when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        except ValueError:
            return None
        when = when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)
        return when.astimezone(timezone.utc).date().isoformat()

    days = ["2026-11-20", "2024-02-29", "2026-02-29", "2026-02-30", "2026-13-01", "2026-00-10", "2026-12-31"]
    times = ["10:04:00", "23:59:59", "24:00:00", "12:60:00", "12:00:60", "00:00:00"]
    tails = ["Z", ".123Z", ".123456Z", ".1Z", ".1234Z", ".1234567Z", "+02:00", "-05:30", "", ".000+00:00"]
    stamps = [f"{d}T{t}{z}" for d, t, z in itertools.product(days, times, tails)] + ["", "garbage", "2026-11-20"]
    assert [utc_day(s) for s in stamps] == [by_parse(s) if s else None for s in stamps]


def test_the_listing_is_in_the_order_sorted_paths_have(tmp_path: Path) -> None:
    """Names that sort differently as strings and as paths ("a-b/x" before "a/y" as strings, after as paths): the
    listing keeps pathlib's order, which decides which copy of a reply counts first."""
    for rel in ("a/y.jsonl", "a-b/x.jsonl", "a.b/z.jsonl", "a/b/c.jsonl", "ab.jsonl", "a0/w.jsonl"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}\n", encoding="utf-8")
    got = [f for f, _, _ in tree_listing(tmp_path)]
    assert got == sorted(tmp_path.rglob("*.jsonl")) and got != sorted(got, key=str)


def _tree_of_sessions(root: Path, n: int = 4) -> Path:
    tree = root / "projects"
    for k in range(n):
        target = tree / f"-home-p{k % 2}" / f"s{k}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_lines(_claude(f"s{k}", 0), _claude(f"s{k}", 1)))
    return tree


def test_an_import_walks_its_tree_once(tmp_path: Path, monkeypatch) -> None:
    """Issue 62: `workbench import` walked a session tree four times before reading a line (the workers it starts,
    the size it announces, the format, the files: 2.3 of a 200 MB import's 9.5 profiled seconds). Counted at
    ``os.scandir`` on the tree's root: one listing per command now, for import and validate alike, the import
    writing what it did; and outside a command's scope every call walks again (nothing is kept between
    commands)."""
    from workbench.adapters import _logfiles
    from workbench.cli.main import main

    tree = _tree_of_sessions(tmp_path)
    walks: list[str] = []
    scandir = os.scandir

    def counted(path="."):  # noqa: ANN001, ANN202 - os.scandir's own signature (shutil passes descriptors)
        if not isinstance(path, int):
            walks.append(os.fspath(path))
        return scandir(path)

    monkeypatch.setattr(_logfiles.os, "scandir", counted)
    monkeypatch.setattr(_logfiles, "PARALLEL_BYTES", 0)  # (the workers' start walks too, when a tree is large)
    assert main(["import", str(tree), "--out", str(tmp_path / "out")]) == 0
    assert walks.count(str(tree)) == 1
    assert (tmp_path / "out" / "steps.parquet").exists()
    walks.clear()
    assert main(["validate", str(tree)]) == 0
    assert walks.count(str(tree)) == 1
    walks.clear()
    tree_listing(tree)
    tree_listing(tree)
    assert walks.count(str(tree)) == 2


def test_a_walk_that_skipped_a_file_is_not_shared(tmp_path: Path, monkeypatch) -> None:
    """A listing made with ``skip_invalid`` that left out a file it could not open is not given to a later call in
    the same scope: a call without ``skip_invalid`` still gets the error naming the file."""
    import pytest

    from workbench._util.jsonl import BadLines
    from workbench.adapters import _logfiles
    from workbench.errors import SchemaError

    tree = _tree_of_sessions(tmp_path)
    locked = str(sorted(tree.rglob("*.jsonl"))[1])
    opener = os.open

    def refusing(path, *args):  # noqa: ANN001, ANN002, ANN202 - os.open's own signature
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return opener(path, *args)

    monkeypatch.setattr(_logfiles.os, "open", refusing)
    with _logfiles.one_walk():
        bad = BadLines(skip_invalid=True)
        assert len(tree_listing(tree, bad=bad)) == 3 and bad.unreadable == [(locked, "Permission denied")]
        with pytest.raises(SchemaError, match="cannot be read"):
            tree_listing(tree)


def test_the_imports_counted_replies_equal_a_set_read_in_order() -> None:
    """The import keeps the replies it counted as sorted digests, batch by batch; which replies count must be what a
    plain set gives reading every key in the tree's order (a key counts the first time it is met; a keyless reply
    always counts). 400 batches of random keys, many repeated within and across batches, merge the digest arrays
    many times over."""
    import numpy as np

    from workbench.adapters._claude_code import _CountedReplies
    from workbench.adapters._usage_scan import first_time

    rng = np.random.default_rng(62)
    counted, seen = _CountedReplies(), set()
    for _ in range(400):
        keys = [None if rng.random() < 0.1 else f"{int(rng.integers(0, 6000))}:msg\u00e9{int(rng.integers(0, 3))}"
                for _ in range(int(rng.integers(0, 60)))]
        assert counted.count(keys) == [first_time(key, seen) for key in keys]
    assert sum(len(level) for level in counted.levels) == len(seen) > 5000
    assert all(np.all(level[:-1] < level[1:]) for level in counted.levels)  # sorted, no key twice
