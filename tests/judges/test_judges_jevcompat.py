"""Conformance with a reference server no one on this project wrote: ``jevcompat mock`` (PyPI), a spec-exact
stand-in for TypeSafe's System One API with injectable faults, and the request/response contract of TypeSafe's own
SDK (``typesafe-sdk``). Clean, every entry is scored, a rerun is answered from the cache with equal scores; with a
fault that touches a client, every score is right or null with a reason -- never a crash, never a wrong number."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import polars as pl
import pytest

from workbench.cli.main import main
from workbench.judges._jev import build_body

from tests.conftest import EXAMPLE

JEVCOMPAT = Path(sys.executable).with_name("jevcompat")
KEY = "jc-test-key-77"

pytestmark = pytest.mark.skipif(not JEVCOMPAT.exists(), reason="jevcompat is not installed (it comes with the "
                                "test extra)")


@contextmanager
def mock(*args: str) -> Iterator[str]:
    """``jevcompat mock`` on a free loopback port; yields its base URL."""
    proc = subprocess.Popen([str(JEVCOMPAT), "mock", "--host", "127.0.0.1", "--port", "0", *args],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/v1/systemone", line)
        assert found, f"jevcompat mock did not start: {line!r}"
        yield f"http://127.0.0.1:{found.group(1)}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stderr is not None:
            proc.stderr.close()


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("log") / "d"
    assert main(["import", str(EXAMPLE), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def clean_scores(log_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> pl.DataFrame:
    """Scores from the clean mock, the reference every faulty run is held to."""
    tmp = tmp_path_factory.mktemp("clean")
    with mock() as url:
        assert run(log_dir, tmp, url) == 0
    return pl.read_parquet(tmp / "scores.parquet")


def run(log_dir: Path, tmp: Path, url: str, *extra: str) -> int:
    return main(["judge", str(log_dir), "--judge", "jev", "--base-url", url, "--cache", str(tmp / "cache"),
                 "--out", str(tmp / "scores.parquet"), "--quiet", "--max-attempts", "2", "--timeout", "10", *extra])


def test_clean_every_entry_scored_and_rerun_from_cache(log_dir: Path, tmp_path: Path, clean_scores: pl.DataFrame,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert clean_scores.height == 61 and clean_scores["score"].null_count() == 0
    assert clean_scores["score"].is_between(0, 1).all() and clean_scores["score"].n_unique() > 20
    with mock() as url:
        assert run(log_dir, tmp_path, url) == 0
        first = capsys.readouterr().out
        assert run(log_dir, tmp_path, url) == 0
        second = capsys.readouterr().out
    assert "8 requests, 5 sent, 3 answered from cache (made by 'jevcompat-mock-0.1'), 0 failed" in first
    assert "8 requests, 0 sent, 8 answered from cache (made by 'jevcompat-mock-0.1'), 0 failed" in second
    again = pl.read_parquet(tmp_path / "scores.parquet")
    assert again.equals(pl.read_parquet(tmp_path / "scores.parquet")) and again["score"].equals(clean_scores["score"])


def test_request_and_response_follow_the_official_sdk_contract(log_dir: Path) -> None:
    """Our body validates as the SDK's SystemOneRequest with ``state`` a JSON object (not a JSON string)."""
    from typesafe_sdk._schemas.models import SystemOneRequest, SystemOneResponse

    from workbench.summaries import compaction_requests
    from workbench.datasets import load

    req = compaction_requests(load(log_dir))[0].request
    body = build_body("jev-1.13.0", req)
    parsed = SystemOneRequest.model_validate(body)
    assert isinstance(parsed.state, dict) and set(parsed.state) >= {"task_instruction", "evidence"}
    assert all(q.root.type == "noul" for q in parsed.questions.values())
    SystemOneResponse.model_validate({"model": "m", "answers": {"e0": {"type": "noul", "noul": 0.3}},
                                      "usage": {"input_tokens": 10, "output_tokens": 2}})


@pytest.mark.parametrize("fault", ["first-question-only", "noul-range", "xssi-200", "text-errors", "no-usage",
                                   "float-usage", "extra-answer"])
def test_faults_give_right_scores_or_nulls_with_reasons(fault: str, log_dir: Path, tmp_path: Path,
                                                        clean_scores: pl.DataFrame) -> None:
    with mock("--fault", fault) as url:
        code = run(log_dir, tmp_path, url)
    scores = pl.read_parquet(tmp_path / "scores.parquet")
    both = scores.join(clean_scores.select("entry_id", pl.col("score").alias("clean")), on="entry_id")
    assert both.height == 61
    answered = both.filter(pl.col("score").is_not_null())
    assert (answered["score"] == answered["clean"]).all(), f"{fault}: a score differs from the clean server's"
    nulls = both.filter(pl.col("score").is_null())
    assert nulls["reason"].is_not_null().all(), f"{fault}: a null score without a reason"
    expect_all = {"no-usage", "float-usage", "extra-answer", "text-errors"}  # nothing a score depends on is broken
    if fault in expect_all:
        assert nulls.height == 0 and code == 0, (fault, nulls["reason"].to_list()[:3])
    elif fault == "first-question-only":  # e0 answered, the others missing
        assert answered["entry_id"].str.ends_with("/e0").all() and nulls["reason"].str.contains("no answer").all()
    elif fault == "noul-range":
        assert nulls.height == 61 and nulls["reason"].str.contains("outside \\[0, 1\\]").all() and code == 1
    elif fault == "xssi-200":
        assert nulls.height == 61 and nulls["reason"].str.contains("not valid JSON").all() and code == 1


def test_wrong_key_is_null_with_the_servers_reason(log_dir: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", "not-the-key")
    with mock("--key", KEY) as url:
        assert run(log_dir, tmp_path, url) == 1
        out = capsys.readouterr().out
        scores = pl.read_parquet(tmp_path / "scores.parquet")
        assert scores["score"].null_count() == 61 and scores["reason"].str.contains("HTTP 401").all()
        assert "not-the-key" not in out and "HTTP 401" in out
        monkeypatch.setenv("TYPESAFE_API_KEY", KEY)
        assert run(log_dir, tmp_path, url) == 0  # the failure was not cached
    assert pl.read_parquet(tmp_path / "scores.parquet")["score"].null_count() == 0


def test_text_errors_reason_names_what_the_server_said(log_dir: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", "not-the-key")
    with mock("--key", KEY, "--fault", "text-errors") as url:
        assert run(log_dir, tmp_path, url) == 1
    reasons = set(pl.read_parquet(tmp_path / "scores.parquet")["reason"])
    assert all(r.startswith("HTTP 401: Cannot authenticate") for r in reasons), reasons


def test_repeats_against_a_noisy_server_are_real_requests(log_dir: Path, tmp_path: Path) -> None:
    """SJC Section 5.4: with ``--repeats 3`` each request is asked three times (the repeat index is in the cache key),
    so a non-deterministic judge (``jevcompat mock --noise``) disagrees with itself and decisions can flip."""
    from workbench.analyses.sjc import decision_flips

    with mock("--noise", "1.5") as url:
        assert run(log_dir, tmp_path, url, "--repeats", "3") == 0
    scores = pl.read_parquet(tmp_path / "scores.parquet")
    assert scores.height == 3 * 61 and sorted(scores["repeat"].unique()) == [0, 1, 2]
    per_entry = scores.group_by("entry_id").agg(pl.col("score").n_unique().alias("k"))
    assert (per_entry["k"] > 1).mean() > 0.5  # repeats are separate answers, not one answer cached thrice
    flips = decision_flips(scores, 0.5).row(0, named=True)
    assert 0.0 < flips["flip_share"] < 1.0


@pytest.mark.slow
def test_threshold_notebook_draws_decision_flips_from_noisy_repeats(log_dir: Path, tmp_path: Path) -> None:
    """The threshold-sensitivity notebook, given repeats from a non-deterministic server, draws flips per section;
    the exported table equals decision_flips computed here from the same files."""
    from workbench.datasets import derive_missing, load
    from workbench.notebooks import run_all
    from workbench.analyses.sjc import decision_flips

    with mock("--noise", "1.5") as url:
        assert run(log_dir, tmp_path, url, "--repeats", "4") == 0
    figs = tmp_path / "figs"
    root = Path(__file__).resolve().parents[2]
    report = run_all(root / "notebooks", tmp_path / "build", timeout=300, cwd=root, names=["threshold_sensitivity"],
                   parameters={"DATA": str(log_dir), "FIGURES": str(figs), "N_BOOT": 50,
                               "REPEATED_SCORES": str(tmp_path / "scores.parquet")})
    assert report.exit_code == 0, str(report)
    assert (figs / "sjc_sec54_decision_flips_jev.png").exists()
    table = pl.read_csv(figs / "tables" / "sjc_sec54_decision_flips.csv")
    tables = load(log_dir)
    derive_missing(tables)
    repeated = pl.read_parquet(tmp_path / "scores.parquet").join(tables["entries"].select("entry_id", "section"),
                                                                 on="entry_id")
    expected = decision_flips(repeated, 0.5, tables["scores"], by="section")
    assert table["flip_share"].to_list() == pytest.approx(expected["flip_share"].to_list())
    assert table["section"].to_list() == expected["section"].to_list()
