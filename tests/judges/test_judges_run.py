"""The directory judge (what ``workbench judge`` runs), called as a notebook would call it."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from workbench.datasets import import_log
from workbench.judges import make_judge
from workbench.judges import _run as judge_run
from workbench.summaries import compaction_requests
from workbench.judges import score_requests
from workbench.judges import JudgeReport, judge_directory
from workbench.datasets import load

EXAMPLE = Path(__file__).resolve().parents[2] / "workbench" / "datasets" / "example_logs" / "invoice_log.jsonl"


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    import_log(EXAMPLE, tmp_path / "log")
    return tmp_path / "log"


def test_judge_directory_writes_the_scores_of_the_in_memory_requests(log_dir: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judge_run, "JUDGE_BATCH_RUNS", 1)  # a batch a run: the same scores as one batch
    report = judge_directory(log_dir, make_judge("lexical"), tmp_path / "s.parquet", tau=0.5)
    expected, _ = score_requests(compaction_requests(load(log_dir)), make_judge("lexical"))
    got = pl.read_parquet(tmp_path / "s.parquet")
    assert got.sort("entry_id").equals(expected.sort("entry_id")) and report.scores == got.height == 61
    kept = got.filter(pl.col("score").is_null() | (pl.col("score") >= 0.5)).height  # SJC: keep >= tau or no answer
    assert (report.kept, report.pruned) == (kept, 61 - kept)
    assert str(report).splitlines() == [
        f"{tmp_path / 's.parquet'}: 61 scores by lexical (0 without a usable answer); "
        f"{report.requests} requests, 0 sent, 0 answered from cache, 0 failed",
        f"{tmp_path / 's.evidence.parquet'}: the evidence passages the requests used",
        f"tau=0.5: {kept} entries kept, {61 - kept} pruned"]
    assert not report.nothing_usable


def test_the_evidence_table_holds_what_each_request_sent_and_the_scores_point_into_it(log_dir: Path,
                                                                                       tmp_path: Path) -> None:
    """Issue 40: the evidence a judge used is data (one row per passage of a request), so sampling and the
    explorer read it instead of retrieving again; checked against the in-memory requests, passage by passage."""
    judge_directory(log_dir, make_judge("lexical"), tmp_path / "s.parquet")
    evidence = pl.read_parquet(tmp_path / "s.evidence.parquet")
    scores = pl.read_parquet(tmp_path / "s.parquet")
    requests = compaction_requests(load(log_dir))
    by_id = {r["evidence_id"]: r for r in evidence.iter_rows(named=True)}
    assert evidence.height == sum(len(cr.request.evidence) for cr in requests) == len(by_id)
    for cr in requests:
        for k, eid in enumerate(cr.entry_ids):
            shown = [cr.request.evidence[j] for j in cr.request.entry_evidence[k]]
            listed = scores.filter(pl.col("entry_id") == eid).get_column("evidence_ids").to_list()[0]
            assert [by_id[i]["text"] for i in listed] == shown  # the scores' ids, best first, name what was sent
            for rank, i in enumerate(listed):
                row = by_id[i]
                assert dict(zip(row["entry_ids"], row["ranks"], strict=True))[eid] == rank
                assert row["request_id"] == f"{cr.run_id}/b{cr.boundary}" and row["run_id"] == cr.run_id
    steps = load(log_dir)["steps"]
    observation = {(r, s): o for r, s, o in steps.select("run_id", "step", "observation").iter_rows()}
    for row in evidence.iter_rows(named=True):  # each passage is a piece of the output of the step it names
        assert row["step"] is None or row["text"] in observation[(row["run_id"], row["step"])]
        assert row["source"].startswith("retained turn" if row["step"] is None else f"step {row['step']} ")


def test_a_requests_evidence_per_entry_is_what_was_sent_and_what_the_table_says(log_dir: Path, tmp_path: Path) -> None:
    """The explorer reads a compaction's passages from its request when no evidence table holds it
    (request_evidence, no table built a page): each entry's passages are the texts its request sent, best first,
    with the evidence ids, steps and sources the judge's evidence table wrote for them."""
    from workbench.summaries._evidence import request_evidence

    judge_directory(log_dir, make_judge("lexical"), tmp_path / "s.parquet")
    table = {r["evidence_id"]: r for r in pl.read_parquet(tmp_path / "s.evidence.parquet").iter_rows(named=True)}
    requests = compaction_requests(load(log_dir))
    assert requests
    for cr in requests:
        got = request_evidence(cr)
        assert list(got) == list(cr.entry_ids)
        for k, eid in enumerate(cr.entry_ids):
            assert [p["text"] for p in got[eid]] == [cr.request.evidence[j] for j in cr.request.entry_evidence[k]]
            for p in got[eid]:
                row = table[p["evidence_id"]]
                assert (p["step"], p["part"], p["source"], p["text"]) == (row["step"], row["part"], row["source"],
                                                                           row["text"])


def test_a_report_with_no_usable_answer_says_so() -> None:
    report = JudgeReport(Path("s.parquet"), "jev", scores=3, null_scores=3, requests=1, sent=1, cached=0,
                         failures={"HTTP 429: slow down": 1})
    assert report.nothing_usable and report.failed == 1
    assert str(report).endswith("1 requests, 1 sent, 0 answered from cache, 1 failed (HTTP 429: slow down: 1)")


def test_a_directory_without_compactions_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    from workbench.errors import SchemaError

    (tmp_path / "empty").mkdir()
    with pytest.raises(SchemaError, match=r"no tables here \(no runs.parquet or runs.jsonl\)"):
        judge_directory(tmp_path / "empty", make_judge("lexical"), tmp_path / "s.parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty"]


@pytest.mark.parametrize("theirs", ["notes.txt", "table.parquet", "empty-rows.jsonl"])
def test_the_judge_never_writes_its_evidence_over_a_file_it_did_not_make(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], theirs: str) -> None:
    """Issue 57 item 17: ``OUT.evidence.parquet`` replaced a file of that name that the judge did not make. Such a
    file (text, another table, a JSONL of other records) is refused, untouched, before anything is judged; the
    judge's own evidence from an earlier run is replaced as before."""
    from workbench.cli.main import main

    import_log(EXAMPLE, tmp_path / "log")
    out = tmp_path / "s.parquet"
    beside = tmp_path / "s.evidence.parquet"
    if theirs == "notes.txt":
        beside.write_text("my notes")
    elif theirs == "table.parquet":
        pl.DataFrame({"run": ["a"], "value": [1.0]}).write_parquet(beside)
    else:
        beside.write_text('{"id": 1, "text": "not evidence"}\n')
    before = beside.read_bytes()
    assert main(["judge", str(tmp_path / "log"), "--judge", "lexical", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"its evidence would replace {beside}, which is not an evidence table the judge wrote" in err
    assert beside.read_bytes() == before and not out.exists()
    beside.unlink()
    for _ in range(2):  # the judge's own evidence, replaced by a second run
        assert main(["judge", str(tmp_path / "log"), "--judge", "lexical", "--out", str(out)]) == 0
    assert pl.read_parquet(beside).height > 0


def test_the_evidence_tables_list_columns_match_rows_built_one_by_one(log_dir: Path) -> None:
    """The entry_ids and ranks columns are built from flat values and offsets (issue 62); the table equals one
    built row by row from Python lists (polars' own constructor), passages served to no entry included as empty
    lists, and keeps the declared schema."""
    from workbench.summaries._evidence import evidence_table
    from workbench.tables import _schema as schema

    requests = compaction_requests(load(log_dir))
    got = evidence_table(requests)
    rows = []
    for cr in requests:
        for j, text in enumerate(cr.request.evidence):
            served = [(cr.entry_ids[k], picks.index(j)) for k, picks in enumerate(cr.request.entry_evidence)
                      if j in picks]
            rows.append({"entry_ids": [e for e, _ in served], "ranks": [r for _, r in served], "text": text})
    want = pl.DataFrame(rows, schema={"entry_ids": pl.List(pl.Utf8), "ranks": pl.List(pl.Int64), "text": pl.Utf8})
    assert got.select("entry_ids", "ranks", "text").equals(want)
    assert got.schema == schema.table("evidence").polars_schema()


def test_the_evidence_rows_a_forked_worker_builds_are_the_tables_rows(log_dir: Path) -> None:
    """The simulator's forked workers list evidence without polars (its thread pool deadlocks a forked child);
    those rows are the evidence table's, column for column."""
    from workbench.summaries._evidence import evidence_rows
    from workbench.summaries._evidence import evidence_table

    requests = compaction_requests(load(log_dir))
    assert evidence_rows(requests) == evidence_table(requests).to_dicts() != []
