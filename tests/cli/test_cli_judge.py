"""``workbench judge`` as a new user meets it, against servers on 127.0.0.1: what is cached, how long it waits,
how it exits, what it says. Each test names the failure it guards against."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import polars as pl
import pytest

from workbench.cli.main import main

from tests.conftest import EXAMPLE
from tests.llm_server import FakeLLMServer


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    """The example log imported: 8 compactions (3 of them repeat another's request exactly), 61 entries."""
    assert main(["import", str(EXAMPLE), "--out", str(tmp_path / "d")]) == 0
    return tmp_path / "d"


def judge(log_dir: Path, tmp_path: Path, *extra: str, judge: str = "jev", out: str = "scores.parquet") -> int:
    return main(["judge", str(log_dir), "--judge", judge, "--cache", str(tmp_path / "cache"),
                 "--out", str(tmp_path / out), "--quiet", *extra])


def test_cache_key_holds_the_base_url(log_dir: Path, tmp_path: Path, server: FakeLLMServer,
                                      api_keys: None) -> None:
    """Two runs with the same model and cache but another server used to share answers (0 requests sent)."""
    other = FakeLLMServer()
    try:
        other.behaviours.extend([{"e0": 0.42}] * 20)
        assert judge(log_dir, tmp_path, "--base-url", server.url) == 0
        assert judge(log_dir, tmp_path, "--base-url", other.url, out="other.parquet") == 0
        assert len(other.requests) == 5  # asked, not served from the first server's answers
        first, second = (pl.read_parquet(tmp_path / n) for n in ("scores.parquet", "other.parquet"))
        e0 = pl.col("entry_id").str.ends_with("e0")
        assert set(second.filter(e0)["score"]) == {0.42} and 0.42 not in set(first["score"])
    finally:
        other.close()


def test_summary_line_and_rerun_from_cache(log_dir: Path, tmp_path: Path, server: FakeLLMServer, api_keys: None,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert judge(log_dir, tmp_path, "--base-url", server.url) == 0
    out = capsys.readouterr().out
    assert "61 scores by jev (0 without a usable answer); 8 requests, 5 sent, 3 answered from cache, 0 failed" in out
    assert judge(log_dir, tmp_path, "--base-url", server.url) == 0
    assert "8 requests, 0 sent, 8 answered from cache, 0 failed" in capsys.readouterr().out
    assert len(server.requests) == 5


def test_no_key_stops_before_sending_and_names_the_variable(log_dir: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """Before: exit 0, "8 requests, 8 sent" though nothing was sent, the problem only inside the Parquet file."""
    monkeypatch.delenv("TYPESAFE_API_KEY", raising=False)
    assert judge(log_dir, tmp_path, "--base-url", "https://jev.example.invalid") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "TYPESAFE_API_KEY" in err[0] and "Traceback" not in err[0]
    assert not (tmp_path / "scores.parquet").exists()


def test_loopback_needs_no_key(log_dir: Path, tmp_path: Path, server: FakeLLMServer,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert judge(log_dir, tmp_path, "--base-url", server.url + "/v1", "--model", "local", judge="openai") == 0
    assert server.requests and all("authorization" not in r.headers or r.headers["authorization"] == "Bearer not-needed"
                                   for r in server.requests)


def test_no_usable_answer_exits_nonzero_and_strict_any_failure(log_dir: Path, tmp_path: Path, server: FakeLLMServer,
                                                               api_keys: None,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    server.default = "500"
    assert judge(log_dir, tmp_path, "--base-url", server.url, "--max-attempts", "1") == 1
    captured = capsys.readouterr()
    # 5 distinct requests are sent; the 3 identical ones share their failure in this run (not sent twice)
    assert "5 sent, 0 answered from cache, 8 failed (HTTP 500: boom: 8)" in captured.out
    assert "no request got a usable answer" in captured.err and len(server.requests) == 5
    scores = pl.read_parquet(tmp_path / "scores.parquet")  # what there is, is written
    assert scores["score"].null_count() == scores.height == 61
    server.default = "ok"
    server.behaviours.extend(["500"])  # one compaction fails, the rest answer
    assert judge(log_dir, tmp_path, "--base-url", server.url, "--max-attempts", "1", "--refresh") == 0
    server.behaviours.extend(["500"])
    assert judge(log_dir, tmp_path, "--base-url", server.url, "--max-attempts", "1", "--refresh", "--strict") == 1


def test_stalled_bodies_are_bounded_per_attempt_and_compactions_run_concurrently(
        log_dir: Path, tmp_path: Path, server: FakeLLMServer, api_keys: None,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Before: 60 s x 5 attempts per compaction, one compaction at a time (about 35 minutes for this log)."""
    server.default = "stall"
    server.stall_seconds = 120.0
    started = time.monotonic()
    code = judge(log_dir, tmp_path, "--base-url", server.url, "--timeout", "0.5", "--max-attempts", "2",
                 "--concurrency", "4")
    elapsed = time.monotonic() - started
    assert code == 1 and elapsed < 10, elapsed  # 8 compactions, 4 at once, 2 attempts of 0.5 s each (+ backoff)
    scores = pl.read_parquet(tmp_path / "scores.parquet")
    assert scores["reason"].str.contains("timed out after 0.5s").all()


def test_deadline_bounds_the_run_and_keeps_what_was_answered(log_dir: Path, tmp_path: Path, server: FakeLLMServer,
                                                            api_keys: None) -> None:
    server.behaviours.extend(["ok", "ok"])  # two compactions answer at once, the rest stall
    server.default = "stall"
    server.stall_seconds = 120.0
    started = time.monotonic()
    code = judge(log_dir, tmp_path, "--base-url", server.url, "--timeout", "30", "--deadline", "2",
                 "--concurrency", "2")
    elapsed = time.monotonic() - started
    assert code == 0 and elapsed < 10, elapsed
    scores = pl.read_parquet(tmp_path / "scores.parquet")
    answered = scores.filter(pl.col("score").is_not_null())
    assert answered.height > 0 and scores.filter(pl.col("score").is_null())["reason"].str.contains(
        "deadline|timed out").all()


def test_offline_uses_only_the_cache_and_refresh_ignores_it(log_dir: Path, tmp_path: Path, server: FakeLLMServer,
                                                            api_keys: None, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert judge(log_dir, tmp_path, "--base-url", server.url, "--offline") == 1
    assert not server.requests
    assert set(pl.read_parquet(tmp_path / "scores.parquet")["reason"]) == {"not in cache"}
    assert judge(log_dir, tmp_path, "--base-url", server.url) == 0 and len(server.requests) == 5
    monkeypatch.delenv("TYPESAFE_API_KEY")  # the cache answers; no key is needed to read it
    assert judge(log_dir, tmp_path, "--base-url", "https://jev.example.invalid", "--offline") == 1  # other server
    assert judge(log_dir, tmp_path, "--base-url", server.url, "--offline") == 0 and len(server.requests) == 5
    monkeypatch.setenv("TYPESAFE_API_KEY", "k")
    capsys.readouterr()
    assert judge(log_dir, tmp_path, "--base-url", server.url, "--refresh") == 0
    assert len(server.requests) == 10 and "5 sent, 3 answered from cache" in capsys.readouterr().out


@pytest.mark.parametrize("bad", [["--tau", "2"], ["--tau", "nan"], ["--concurrency", "0"], ["--timeout", "-1"],
                                 ["--max-attempts", "0"], ["--repeats", "0"], ["--offline", "--refresh"]])
def test_bad_options_are_refused_before_any_work(log_dir: Path, tmp_path: Path, bad: list[str],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert judge(log_dir, tmp_path, *bad) == 2
    assert "expected" in capsys.readouterr().err and not (tmp_path / "scores.parquet").exists()


def test_unsupported_out_suffix_is_refused_before_scoring(log_dir: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert judge(log_dir, tmp_path, judge="lexical", out="scores.csv") == 2
    assert ".parquet or .jsonl" in capsys.readouterr().err


def test_outputs_follow_the_umask(log_dir: Path, tmp_path: Path) -> None:
    """Before: single-file outputs were 0600, unreadable by co-workers on a shared machine."""
    old = os.umask(0o022)
    try:
        assert judge(log_dir, tmp_path, judge="lexical") == 0
        assert main(["export", str(log_dir), "--out", str(tmp_path / "export.jsonl")]) == 0
        assert main(["sample", str(log_dir), "--n", "5", "--out", str(tmp_path / "sample.jsonl")]) == 0
    finally:
        os.umask(old)
    for name in ("scores.parquet", "export.jsonl", "sample.jsonl"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name
    assert stat.S_IMODE((log_dir / "runs.parquet").stat().st_mode) == 0o644


def test_progress_is_plain_lines_when_stderr_is_not_a_terminal(log_dir: Path, tmp_path: Path, server: FakeLLMServer,
                                                               api_keys: None,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judge", str(log_dir), "--judge", "jev", "--base-url", server.url, "--cache", str(tmp_path / "c"),
                 "--out", str(tmp_path / "s.parquet")]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = err.strip().splitlines()
    assert lines[0].startswith("judge jev: 8 compactions from") and lines[0].endswith("retrieving evidence ...")
    assert lines[-1].startswith("judge jev: 8/8 requests, 3 from cache, 0 retries, 0 failed")


def test_jev_requests_run_concurrently_across_compactions(log_dir: Path, tmp_path: Path, server: FakeLLMServer,
                                                          api_keys: None) -> None:
    """Before: --concurrency was not used for Jev, one compaction at a time. Two repeats of the example log are
    10 distinct requests, each taking 1 s at the server: one at a time 10 s, with 4 in flight about 3 s."""
    server.default = ("delay", 1.0)
    started = time.monotonic()
    assert judge(log_dir, tmp_path, "--base-url", server.url, "--concurrency", "4", "--repeats", "2") == 0
    elapsed = time.monotonic() - started
    assert 3 <= server.max_active <= 4 and len(server.requests) == 10  # bounded by --concurrency, and used
    assert elapsed < 7, elapsed


def test_each_summary_is_parsed_once_per_judge_run_with_tau(log_dir: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """With --tau the candidate summaries were parsed four times each (requests, pruning, its per-summary helper,
    the prune operator); once is enough. The pruning itself is checked against the scores by hand."""
    from workbench.summaries import _grammar as summary

    calls: list[str] = []
    real = summary.parse

    def counting(text: str, schema: str = "auto") -> list[summary.Entry]:
        calls.append(text)
        return real(text, schema)

    monkeypatch.setattr(summary, "parse", counting)
    for module in ("workbench.summaries._entries", "workbench.summaries._evidence", "workbench.judges._requests", "workbench.summaries._prune"):
        if hasattr(__import__(module, fromlist=["x"]), "parse"):
            monkeypatch.setattr(f"{module}.parse", counting)
    assert main(["judge", str(log_dir), "--judge", "lexical", "--out", str(tmp_path / "s.parquet"), "--quiet",
                 "--tau", "0.5"]) == 0
    compactions = pl.read_parquet(log_dir / "compactions.parquet")
    assert len(calls) == compactions.height
    scores = pl.read_parquet(tmp_path / "s.parquet")
    kept = scores.filter(pl.col("score").is_null() | (pl.col("score") >= 0.5)).height
    assert f"tau=0.5: {kept} entries kept, {scores.height - kept} pruned" in capsys.readouterr().out


def test_judging_in_batches_of_runs_gives_the_same_scores(log_dir: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A large log is judged a batch of runs at a time (bounded memory); the scores and --tau counts are those of
    one batch."""
    from workbench.judges import _run as judge_run

    assert main(["judge", str(log_dir), "--judge", "lexical", "--out", str(tmp_path / "one.parquet"), "--quiet",
                 "--tau", "0.5"]) == 0
    monkeypatch.setattr(judge_run, "JUDGE_BATCH_RUNS", 1)
    assert main(["judge", str(log_dir), "--judge", "lexical", "--out", str(tmp_path / "many.parquet"), "--quiet",
                 "--tau", "0.5"]) == 0
    assert pl.read_parquet(tmp_path / "many.parquet").equals(pl.read_parquet(tmp_path / "one.parquet"))
    # batches written as JSON lines: the same rows, and no staging directory left beside the output
    assert main(["judge", str(log_dir), "--judge", "lexical", "--out", str(tmp_path / "many.jsonl"), "--quiet"]) == 0
    from workbench.tables import read_table

    assert read_table(tmp_path / "many.jsonl", "scores").equals(pl.read_parquet(tmp_path / "one.parquet"))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_batches_read_tables_in_any_row_order(log_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch reads the rows between its runs' first and last row: with each table in another order (steps
    shuffled, runs reversed) every run still gets all of its rows, and the scores are those of the library's
    in-memory requests."""
    from workbench.judges import _run as judge_run
    from workbench.judges import make_judge
    from workbench.summaries import compaction_requests
    from workbench.judges import score_requests
    from workbench.datasets import load

    tables = load(log_dir)
    assert tables["compactions"].get_column("run_id").n_unique() > 2
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    tables["steps"].sample(fraction=1.0, shuffle=True, seed=7).write_parquet(mixed / "steps.parquet")
    tables["compactions"].reverse().write_parquet(mixed / "compactions.parquet")
    tables["runs"].reverse().write_parquet(mixed / "runs.parquet")
    monkeypatch.setattr(judge_run, "JUDGE_BATCH_RUNS", 1)
    assert main(["judge", str(mixed), "--judge", "lexical", "--out", str(tmp_path / "s.parquet"), "--quiet"]) == 0
    expected, _ = score_requests(compaction_requests(tables), make_judge("lexical"))
    got = pl.read_parquet(tmp_path / "s.parquet")
    assert got.height == expected.height == 61  # the example log's entries
    assert got.sort("entry_id").equals(expected.sort("entry_id"))
    # runs in the order the compactions table names them (here reversed), each run's boundaries in order
    runs_in_order = list(dict.fromkeys(tables["compactions"].reverse().get_column("run_id").to_list()))
    assert list(dict.fromkeys(got.get_column("entry_id").str.extract(r"^(.*)/b\d+/e\d+$").to_list())) == runs_in_order


def test_the_judge_scores_the_entries_table_not_a_new_parse(tmp_path: Path) -> None:
    """Issue 40: the judge parsed the candidate summaries again; a directory whose entries were given (a labelled
    summary's sentences) or edited is judged entry by entry as its entries table holds them."""
    d = tmp_path / "log"
    assert main(["import", str(EXAMPLE), "--out", str(d), "--entries"]) == 0
    entries = pl.read_parquet(d / "entries.parquet")
    kept = entries.filter(pl.col("position") != 1)  # one entry less in every summary ...
    edited = kept.with_columns(pl.when(pl.col("position") == 0).then(pl.lit("a sentence no summary holds"))
                               .otherwise(pl.col("text")).alias("text"))  # ... and one rewritten
    edited.write_parquet(d / "entries.parquet")
    assert main(["judge", str(d), "--out", str(tmp_path / "s.parquet"), "--quiet"]) == 0
    scores = pl.read_parquet(tmp_path / "s.parquet")
    assert sorted(scores.get_column("entry_id").to_list()) == sorted(edited.get_column("entry_id").to_list())
    # the rewritten sentence shares no word with any tool output: no passage, and one score for all of them
    rewritten = scores.join(edited.filter(pl.col("position") == 0), on="entry_id")
    assert rewritten.height == pl.read_parquet(d / "compactions.parquet").height
    assert rewritten.get_column("evidence_ids").list.len().max() == 0
    assert rewritten.get_column("score").n_unique() == 1


@pytest.mark.parametrize("url", ["http://[::1", "http://127.0.0.1:x/v1", "ftp://host/v1", "127.0.0.1:8000"])
def test_a_malformed_base_url_is_an_option_error(url: str, log_dir: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 39 item 11: --base-url http://[::1 ended in 'internal error (ValueError: Invalid IPv6 URL)'."""
    assert main(["judge", str(log_dir), "--judge", "openai", "--base-url", url, "--out",
                 str(tmp_path / "s.parquet")]) == 2
    assert "option --base-url: expected an http(s) URL with a host" in capsys.readouterr().err
