"""Session logs imported as a stream (issue 44): files grouped by the session ids in their bytes, read a group at
a time, rows spilled in chunks bounded by their text, parts merged one at a time; lines parsed as JavaScript's
JSON.parse reads them (what ccusage does), every other line by the strict reader. Each test names the defect or
the rule it guards."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from workbench.tables import _files as tables_module
from workbench.datasets import import_log
from workbench.adapters._claude_code import _file_groups, read_claude_code
from workbench._util.jsonl import BadLines, json_lines

from tests.adapters.test_adapters_claude_code_tree import Transcript

ROOT = Path(__file__).resolve().parents[2]


def _session(sid: str, prefix: str, turns: int = 2) -> Transcript:
    t = Transcript(sid=sid)
    t.user(f"{prefix}-u0", f"task of {sid}")
    for k in range(turns):
        t.call(f"{prefix}-a{k}", f"{prefix}-t{k}", msg_id=f"msg-{prefix}-{k}", requestId=f"req-{prefix}-{k}")
        t.result(f"{prefix}-r{k}", f"{prefix}-t{k}", f"out {k}")
    return t


def test_files_sharing_a_session_id_are_one_group_whatever_lies_between_them(tmp_path: Path) -> None:
    """A session resumed into a later file (its lines copied there, with another session's after them) must be
    read with that file: grouping by file alone split it into two runs of one id. By hand: a and c share s1, c and
    d share s3, b shares nothing."""
    proj = tmp_path / "projects" / "-home-dev-shop"
    a = _session("s1", "a").write(proj / "a.jsonl")
    b = _session("s2", "b").write(proj / "b.jsonl")
    c = proj / "c.jsonl"
    c.write_text(a.read_text() + "".join(json.dumps(r) + "\n" for r in _session("s3", "c").lines))
    d = _session("s3", "d").write(proj / "d.jsonl")
    # an id quoted inside a message's text is escaped in the line's bytes: it links nothing
    e = Transcript(sid="s4")
    e.user("e-u0", 'the log said {"sessionId": "s2"}')
    e.write(proj / "e.jsonl")
    assert _file_groups([a, b, c, d, proj / "e.jsonl"]) == [[a, c, d], [b], [proj / "e.jsonl"]]
    runs = read_claude_code(tmp_path / "projects")["runs"]
    assert sorted(runs["run_id"].to_list()) == ["s1", "s2", "s3", "s4"]
    assert runs.filter(pl.col("run_id") == "s1")["steps"].item() == 2  # a's copy in c is read once


def test_a_spaced_session_id_groups_as_a_compact_one(tmp_path: Path) -> None:
    """Claude Code writes compact JSON, other writers `"sessionId": "x"`; both name the session."""
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    one.write_text('{"sessionId":"x","type":"user"}\n')
    two.write_text('{"type": "user", "sessionId" :  "x"}\n')
    assert _file_groups([one, two]) == [[one, two]]


def test_the_fast_path_reads_a_repeated_key_as_json_parse_does_and_the_strict_path_refuses_it(tmp_path: Path) -> None:
    """Session lines are parsed as JavaScript's JSON.parse (ccusage's reader) and Python's json.loads read them:
    a key given twice keeps its last value; an integer past 64 bits is a double, as every number is in JavaScript.
    A person's file (the strict default) still refuses the repeated key."""
    f = tmp_path / "s.jsonl"
    text = '{"type":"user","model":"first","model":"last","n":123456789012345678901234567890}\n'
    f.write_text(text)
    assert [r for _, r in json_lines(f, BadLines(), fast=True)] == [json.loads(text, parse_int=float)]
    with pytest.raises(Exception, match="key 'model' twice"):
        list(json_lines(f))


@pytest.mark.parametrize("raw, expected", [
    (b'\xef\xbb\xbf{"a": 1}\n{"b": 2}\n', [(1, {"a": 1}), (2, {"b": 2})]),  # a byte-order mark on line 1
    (b'{"a": 1}\n\n   \n{"b": "\\ud83d\\ude00"}\n', [(1, {"a": 1}), (4, {"b": "\U0001F600"})]),  # blanks, a pair
    (b'{"a": 1}\r\n{"b": 1e400}\n', [(1, {"a": 1}), (2, {"b": float("inf")})]),  # CRLF; a number past a double
    (b'{"a": "\\ud800x"}\n', [(1, {"a": "\ufffdx"})]),  # a lone surrogate: U+FFFD, as the strict path does
    (b'{"a": 1}\n{"b": ', [(1, {"a": 1})]),  # a half-written last line: skipped
])
def test_the_fast_path_gives_the_strict_readers_records_on_awkward_lines(tmp_path: Path, raw: bytes,
                                                                          expected: list) -> None:
    """Every line orjson refuses goes to the strict reader: its numbering, fallbacks and values are kept."""
    f = tmp_path / "s.jsonl"
    f.write_bytes(raw)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        got = list(json_lines(f, BadLines(), fast=True))
    assert bool(said) == (b"\\ud800" in raw or raw.endswith(b'": '))  # a warning for a lone surrogate, a cut line
    assert got == expected
    assert got == list(json_lines(f, BadLines()))  # the strict path, line for line


def test_an_empty_session_file_is_named_on_the_fast_path_too(tmp_path: Path) -> None:
    f = tmp_path / "s.jsonl"
    f.write_bytes(b"")
    with pytest.raises(Exception, match="an empty file"):
        list(json_lines(f, BadLines(), fast=True))
    f.write_bytes(b"\n\n")
    with pytest.raises(Exception, match=r"s.jsonl:1: expected at least one JSON line, got an empty file"):
        list(json_lines(f, BadLines(), fast=True))


def test_a_streamed_import_writes_what_the_in_memory_reader_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The import streams sessions in chunks (here: a chunk every few hundred characters, parts merged one at a
    time); its tables hold the rows the in-memory reader returns, in its order."""
    from workbench.tables import _records as records

    monkeypatch.setattr(records, "CHUNK_TEXT", 200)
    proj = tmp_path / "projects" / "-home-dev-shop"
    for k in range(6):
        _session(f"s{k}", f"p{k}", turns=3).write(proj / f"s{k}.jsonl")
    counts = import_log(tmp_path / "projects", tmp_path / "out")
    expected = read_claude_code(tmp_path / "projects")
    for name in ("runs", "steps"):
        got = pl.read_parquet(tmp_path / "out" / f"{name}.parquet")
        assert got.height == counts[name] == expected[name].height
        assert got.select(expected[name].columns).equals(expected[name]), name
    assert len(list((tmp_path / "out").iterdir())) == 3  # no parts left behind


def test_wide_rows_are_written_in_row_groups_of_bounded_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A coding session's steps are kilobytes each: 50,000 rows a row group held 250 MB in the writer."""
    monkeypatch.setattr(tables_module, "_ROW_GROUP_BYTES", 1 << 20)
    parts = []
    for k in range(3):
        part = tmp_path / f"part-{k}.parquet"
        pl.DataFrame({"run_id": [f"r{k}"] * 2000, "step": list(range(2000)),
                      "observation": [f"{k}-{i}-" + "x" * 4000 for i in range(2000)]}).write_parquet(part)
        parts.append(part)
    target = tmp_path / "steps.parquet"
    tables_module.sink_parts("steps", parts, target)
    meta = pq.ParquetFile(target).metadata
    assert meta.num_rows == 6000
    assert max(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)) < 3 << 20
    assert pl.read_parquet(target).equals(pl.concat([pl.read_parquet(p) for p in parts]).select(
        pl.read_parquet(target).columns))


def test_parts_that_differ_in_columns_are_streamed_into_the_table_polars_concatenates(tmp_path: Path) -> None:
    """Parts as chunks come: a column all null in one (polars' Null dtype), absent in another, the columns in
    another order. The file holds what polars' own diagonal concatenation of the parts holds, in the schema's
    column order, with each column's dtype from a part that has values."""
    frames = [pl.DataFrame({"run_id": ["a", "a"], "step": [0, 1], "text": ["x", None], "model": [None, None]}),
              pl.DataFrame({"step": [0], "run_id": ["b"], "model": ["m-1"]}),
              pl.DataFrame({"run_id": ["c"] * 3, "step": [0, 1, 2], "text": ["y", "z", "w" * 5000],
                            "model": ["m-2", None, "m-3"]})]
    parts = []
    for k, frame in enumerate(frames):
        parts.append(tmp_path / f"part-{k}.parquet")
        frame.write_parquet(parts[-1])
    assert frames[0].schema["model"] == pl.Null
    target = tmp_path / "steps.parquet"
    tables_module.sink_parts("steps", parts, target)
    got = pl.read_parquet(target)
    expected = pl.concat(frames, how="diagonal_relaxed")
    assert got.columns == ["run_id", "step", "text", "model"]  # the steps table's declared order
    assert got.equals(expected.select(got.columns))
    assert got.schema["model"] == pl.String and got.schema["text"] == pl.String


def test_import_says_its_stages_with_timings(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "-home-dev-shop"
    _session("s1", "a").write(proj / "a.jsonl")
    done = subprocess.run([sys.executable, "-m", "workbench.cli.main", "import", str(tmp_path / "projects"), "--out",
                           str(tmp_path / "out"), "--timings"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stderr.splitlines() if x.startswith("timings: "))
    assert [part.split()[0] for part in line.removeprefix("timings: ").split(", ")] == \
        ["scan", "parse", "tables", "write", "total"]


def _many_groups(root: Path, bad_line: bool, cut: bool = True) -> list[Path]:
    """Six groups of files (the resumed copy's file, a session under two project directories, a session before
    2026-11-01 whose reply a later one copies), with a half-written last line and, with ``bad_line``, a line that
    is no object in two of them."""
    from tests.adapters.test_session_usage import OTHER, SID, reply, user, write

    shop, two = root / "projects" / "-home-dev-shop", root / "projects" / "-home-dev-two"
    old, new = "5d1c0a2e-3333-4a5b-9c8d-000000000003", "5d1c0a2e-4444-4a5b-9c8d-000000000004"
    cut_id, third = "5d1c0a2e-5555-4a5b-9c8d-000000000005", "5d1c0a2e-6666-4a5b-9c8d-000000000006"
    files = [
        write(shop / f"{SID}.jsonl", [user("u1", None, "Fix it."), reply("a1", "u1", "msg_A1", "req_A1", (5, 120, 12000, 800)),
                                      reply("a1b", "a1", "msg_A1", "req_A1", (5, 120, 12000, 800), text="next"),
                                      reply("t1", "gone", "msg_T1", "req_T1", (3, 40, 9000, 100))]),
        write(shop / f"{OTHER}.jsonl", [{**reply("a1", "u1", "msg_A1", "req_A1", (5, 120, 12000, 800)), "sessionId": OTHER},
                                        user("v1", "a1", "Go on.", sid=OTHER),
                                        reply("b1", "v1", "msg_B1", "req_B1", (7, 60, 17000, 300), sid=OTHER)]),
        write(shop / f"{old}.jsonl", [user("o1", None, "Old.", sid=old, ts="2026-10-01T09:00:00.000Z"),
                                      reply("p1", "o1", "msg_P1", "req_P1", (1, 10, 100, 10), sid=old,
                                            ts="2026-10-01T09:00:01.000Z")]),
        write(shop / f"{new}.jsonl", [{**reply("p1", "o1", "msg_P1", "req_P1", (1, 10, 100, 10)), "sessionId": new},
                                      user("n1", "p1", "New.", sid=new),
                                      reply("q1", "n1", "msg_Q1", "req_Q1", (2, 20, 200, 20), sid=new)]),
        write(two / f"{third}.jsonl", [user("w1", None, "Elsewhere.", sid=third),
                                       reply("x1", "w1", "msg_X1", "req_X1", (4, 40, 400, 40), sid=third)]),
        write(two / f"{cut_id}.jsonl", [user("c1", None, "Cut.", sid=cut_id),
                                        reply("d1", "c1", "msg_D1", "req_D1", (6, 60, 600, 60), sid=cut_id)]),
        write(shop / f"{third}.jsonl", [user("w9", None, "Here too.", sid=third)]),
    ]
    if cut:
        with open(files[5], "a") as fh:
            fh.write('{"type":"assistant","sessionId":"' + cut_id + '","message":{"id"')  # a session being written
    if bad_line:
        for k in (1, 3):
            with open(files[k], "a") as fh:
                fh.write("[1, 2]\n")
    return files


def _read_all(root: Path, skip_invalid: bool, **options: str) -> tuple[dict[str, pl.DataFrame], list[str], BadLines]:
    bad = BadLines(skip_invalid=skip_invalid)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tables = read_claude_code(root / "projects", bad=bad, **options)
    return tables, sorted(f"{w.category.__name__}: {w.message}" for w in caught), bad


def test_groups_read_by_worker_processes_give_what_one_process_gives(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree above PARALLEL_BYTES is read a group per worker process; a reply copied into a later group (a resumed
    session) must still count once, where it first appears, a reply of a session the date leaves out must still
    not count again, and the warnings, skipped lines and first error must be the ones one process gives. The
    totals are also the count written in test_session_usage (ccusage's rule)."""
    from polars.testing import assert_frame_equal

    from workbench.adapters import _claude_code as claude_code
    from workbench.errors import SchemaError

    from tests.adapters.test_session_usage import by_hand, totals

    _many_groups(tmp_path / "ok", bad_line=False)
    _many_groups(tmp_path / "bad", bad_line=True)
    files = _many_groups(tmp_path / "clean", bad_line=False, cut=False)  # what by_hand reads (no cut line)
    assert len(_file_groups(session_files_of(tmp_path / "ok"))) == 6
    cases = [("ok", True, {}), ("ok", True, {"since": "2026-11-01"}), ("bad", True, {})]
    alone = [_read_all(tmp_path / where, skip, **options) for where, skip, options in cases]
    with pytest.raises(SchemaError) as first_error:
        read_claude_code(tmp_path / "bad" / "projects")
    monkeypatch.setattr(claude_code, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(claude_code.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(claude_code, "_group_runs", lambda *a, **k: pytest.fail("a group was read in this process"))
    spawned = [_read_all(tmp_path / where, skip, **options) for where, skip, options in cases]
    for (tables, said, bad), (tables2, said2, bad2) in zip(alone, spawned):
        assert tables.keys() == tables2.keys()
        for name in tables:
            assert_frame_equal(tables[name], tables2[name])
        assert said == said2 and any("project directories" in w for w in said)
        assert bad.truncated == bad2.truncated and bad.skipped == bad2.skipped and bad.truncated
    assert len(alone[2][2].skipped) == 2
    runs = spawned[0][0]["runs"]
    plain = runs.filter(~pl.col("run_id").str.contains("/"))  # a session under two directories is DIR/ID
    expected = by_hand(files)
    assert totals(plain) == {k: v for k, v in expected.items() if k in plain["run_id"].to_list()}
    assert spawned[1][0]["runs"].height == runs.height - 1  # the October session left out ...
    copied = spawned[1][0]["runs"].filter(pl.col("run_id") == "5d1c0a2e-4444-4a5b-9c8d-000000000004")
    assert copied["usage_cache_read_tokens"].to_list() == [200]  # ... its reply, copied, not counted again
    with pytest.raises(SchemaError) as error:
        read_claude_code(tmp_path / "bad" / "projects")
    assert str(error.value) == str(first_error.value) and "5d1c0a2e-2222" in str(error.value)


@pytest.mark.parametrize("entries", [True, False])
def test_an_import_built_by_workers_writes_the_tables_one_process_writes(tmp_path: Path, entries: bool,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Above PARALLEL_BYTES, workers build a batch of groups' steps and compactions and hand them back as chunks of
    columns, which the parent validates (deriving entries with ``--entries``) and merges after its own runs: every
    table file must hold what the one-process import writes, row for row and in the same order, over several
    batches (the example session with its compactions, copied under other ids, and the six awkward groups)."""
    from workbench.adapters import _claude_code as claude_code

    tree = tmp_path / "tree"
    _many_groups(tree, bad_line=False)
    example = (ROOT / "workbench" / "datasets" / "example_logs" / "claude-code" / "session.jsonl").read_text()
    for k in range(5):
        sid = f"7b1c2d3e-000{k}-4a5b-9c8d-1234567890ab"
        target = tree / "projects" / f"-home-dev-copy{k % 2}" / f"{sid}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(example.replace("7b1c2d3e-0000-4a5b-9c8d-1234567890ab", sid))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = import_log(tree / "projects", tmp_path / "alone", entries=entries)
        monkeypatch.setattr(claude_code, "PARALLEL_BYTES", 0)
        monkeypatch.setattr(claude_code, "BATCH_BYTES", 1)  # a batch a group: 11 batches
        monkeypatch.setattr(claude_code.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
        monkeypatch.setattr(claude_code, "_group_runs", lambda *a, **k: pytest.fail("a group was read in this process"))
        spawned = import_log(tree / "projects", tmp_path / "spawned", entries=entries)
    assert len(_file_groups(session_files_of(tree))) == 11
    assert alone == spawned and alone["compactions"] == 10 and alone.get("entries", 11) > 10
    assert list(spawned) == list(alone) == ["runs", "steps", "compactions", *(["entries"] if entries else [])]
    for name in alone:
        one = pl.read_parquet(tmp_path / "alone" / f"{name}.parquet")
        assert one.equals(pl.read_parquet(tmp_path / "spawned" / f"{name}.parquet")), name
    assert sorted(p.name for p in (tmp_path / "spawned").iterdir()) == sorted(p.name for p in (tmp_path / "alone").iterdir())


def test_a_scan_shared_with_workers_groups_the_files_as_one_process_does(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Above PARALLEL_BYTES the session-id scan is shared: workers take runs of files from the front while this
    process takes them back from the end. The groups must be those of the scan in one process, whoever scanned
    which file, and both sides must have scanned (this process slowed, so that the workers take some)."""
    import time

    from workbench.adapters import _claude_lines as claude_sessions
    from workbench._util.executors import ProcessWorkers

    _many_groups(tmp_path, bad_line=False)
    files = session_files_of(tmp_path)
    alone = _file_groups(files)
    here: list[Path] = []
    scan_here = claude_sessions._session_ids

    def slow(file: Path) -> set[bytes]:
        here.append(file)
        time.sleep(0.3)
        return scan_here(file)

    monkeypatch.setattr(claude_sessions, "SCAN_BYTES", 1)  # a run a file
    monkeypatch.setattr(claude_sessions, "_session_ids", slow)
    with ProcessWorkers(2) as pool:
        pool.start("workbench.adapters._claude_lines")
        assert pool.submit(len, "ready").result(timeout=60) == 5  # (the workers are up)
        shared = _file_groups(files, pool)
    assert shared == alone and len(alone) == 6
    assert 0 < len(here) < len(files) and files[-1] in here and files[0] not in here


def test_the_import_command_starts_the_workers_early_and_the_reader_takes_those(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """``workbench import`` starts the workers before its own imports: the reader must read with that pool (not
    start a second one and leave the first idle), and write what one process writes."""
    from workbench.adapters import _logfiles as logfiles
    from workbench._util import executors
    from workbench.adapters import _claude_code as claude_code
    from workbench.cli.main import main

    _many_groups(tmp_path / "tree", bad_line=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["import", str(tmp_path / "tree" / "projects"), "--out", str(tmp_path / "alone")]) == 0
        started: list[executors.ProcessWorkers] = []
        taken: list[executors.ProcessWorkers] = []
        start, take = executors.start_workers, executors.workers
        modules: list[str | None] = []
        monkeypatch.setattr(executors, "start_workers", lambda n, module=None: (start(n, module), modules.append(module),
                                                                               started.append(executors._STARTED[-1])))
        monkeypatch.setattr(executors, "workers", lambda n: taken.append(take(n)) or taken[-1])
        monkeypatch.setattr(logfiles, "PARALLEL_BYTES", 0)
        monkeypatch.setattr(claude_code, "PARALLEL_BYTES", 0)
        monkeypatch.setattr(claude_code.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
        assert main(["import", str(tmp_path / "tree" / "projects"), "--out", str(tmp_path / "spawned")]) == 0
    assert len(started) == 1 and taken == started and not executors._STARTED
    assert modules == ["workbench.adapters._claude_lines"]  # (the light module: no table library in a worker)
    for name in ("runs", "steps", "compactions"):
        one = pl.read_parquet(tmp_path / "alone" / f"{name}.parquet")
        assert one.equals(pl.read_parquet(tmp_path / "spawned" / f"{name}.parquet")), name


def session_files_of(root: Path) -> list[Path]:
    from workbench.adapters._logfiles import session_files

    return session_files(root / "projects")


def test_the_import_workers_module_loads_no_table_library() -> None:
    """A worker of a large import imports ``workbench.adapters._claude_lines`` only (the CLI and the reader start it with
    that module): no polars, numpy or pyarrow, each of which cost a worker half a second before it read a line."""
    code = ("import sys, workbench.adapters._claude_lines\n"
            "print(sorted(m for m in ('polars', 'numpy', 'pyarrow') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "[]"
    from workbench.adapters import _claude_code as claude_code

    assert claude_code._batch_job.__module__ == "workbench.adapters._claude_lines"  # what the workers are sent


def test_a_batch_holds_the_same_bytes_on_a_small_tree_and_a_large_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parent holds a few batches' results at a time, so a batch must not grow with the tree (issue 62: batches
    of a sixteenth of a worker's share reached 64 MB on a 1 GB home, and the import's peak grew with it). Groups
    of one 1 MB file: 100 of them and 4,000 of them are cut into batches of the same bytes, each closed once it
    reaches BATCH_BYTES, in order and with every group once."""
    from workbench.adapters import _claude_code as claude_code
    from workbench.adapters import _logfiles as logfiles

    monkeypatch.setattr(logfiles, "_file_sizes", lambda files: [1 << 20] * len(files))
    largest = {}
    for n in (100, 4_000):
        groups = [[Path(f"/tree/{k}.jsonl")] for k in range(n)]
        batches = claude_code._batches(groups)
        assert [g for batch in batches for g in batch] == groups
        largest[n] = max(len(batch) for batch in batches) << 20
        assert all(len(batch) << 20 == claude_code.BATCH_BYTES for batch in batches[:-1])
    assert largest[100] == largest[4_000] == 8 << 20
