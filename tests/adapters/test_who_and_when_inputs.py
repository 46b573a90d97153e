"""Who&When's reader on hostile and malformed input (faults round 5, items 3, 6, 7 and 13): the readers' bounds (the
line bound and its option, decompressed bytes, regular files only), each malformed log an error naming the file and
the field (never "this is a bug"), wrong types refused instead of stored, and the gold labels made outside the
notebook. Real files, FIFOs and processes."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from workbench.adapters import read_who_and_when
from workbench.analyses import failure_gold
from workbench.cli.main import main
from workbench.errors import SchemaError


def log(**changes: Any) -> dict[str, Any]:
    base = {"question": "Which park opens in spring?", "question_ID": "q1", "ground_truth": "Riverside",
            "is_correct": False, "mistake_agent": "WebSurfer", "mistake_step": "1", "mistake_reason": "wrong page",
            "history": [{"content": "Find the park.", "role": "human"},
                        {"content": "Clicked an unrelated page.", "role": "WebSurfer"}]}
    base.update(changes)
    return base


def folder(tmp_path: Path, *texts: str) -> Path:
    where = tmp_path / "ww" / "Hand-Crafted"
    where.mkdir(parents=True)
    for i, text in enumerate(texts, start=1):
        (where / f"{i}.json").write_text(text, encoding="utf-8")
    return where.parent


def error_of(path: Path) -> str:
    with pytest.raises(SchemaError) as caught:
        read_who_and_when(path)
    return str(caught.value)


CASES = {
    "deep nesting": ('{"history": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested"),
    "a key twice": (json.dumps(log())[:-1] + ', "question": "again"}', "'question' twice"),
    "NaN": (json.dumps(log()).replace('"is_correct": false', '"is_correct": NaN'), "finite JSON numbers"),
    "a 5,000-digit step": (json.dumps(log(mistake_step="9" * 5000)), "field 'mistake_step'"),
    "a superscript step": (json.dumps(log(mistake_step="\u00b9")), "field 'mistake_step'"),
    "a dict question id": (json.dumps(log(question_ID={"id": 1})), "field 'question_ID'"),
    "a number as mistake_type": (json.dumps(log(mistake_type=3)), "field 'mistake_type'"),
    "an agent that never acts": (json.dumps(log(mistake_agent="Orchestrator")), "an agent that acts in the log"),
    "Algorithm-Generated's name field": (json.dumps(log(history=[{"content": "x", "name": 7}])), "history[0].name"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_malformed_log_is_an_error_naming_the_file_and_the_field(tmp_path: Path, case: str) -> None:
    text, said = CASES[case]
    data = folder(tmp_path, json.dumps(log()), text)
    message = error_of(data)
    assert message.startswith(str(data / "Hand-Crafted" / "2.json")) and said in message, message


def test_bytes_that_are_not_utf8_and_a_lone_surrogate(tmp_path: Path) -> None:
    data = folder(tmp_path, json.dumps(log()))
    (data / "Hand-Crafted" / "2.json").write_bytes(json.dumps(log()).encode()[:-2] + b"\xff\"}")
    assert "expected UTF-8 text" in error_of(data)
    (data / "Hand-Crafted" / "2.json").write_text(json.dumps(log(mistake_reason="cut \\ud800")).replace(
        "\\\\ud800", "\\ud800"))
    with pytest.warns(UserWarning, match="lone UTF-16 surrogate"):
        tables = read_who_and_when(data)
    assert tables["labels"].filter(tables["labels"]["field"] == "reason")["value"][1] == "cut \ufffd"


def _compact(tmp_path: Path, payload: bytes) -> Path:
    data = tmp_path / "compact"
    data.mkdir(parents=True)
    (data / "Hand-Crafted.jsonl.gz").write_bytes(payload)
    return data


def test_compact_copies_that_are_truncated_not_gzip_or_not_utf8_name_the_file(tmp_path: Path) -> None:
    line = (json.dumps({**log(), "file": "1.json"}) + "\n").encode()
    whole = gzip.compress(line * 3)
    for name, payload, said in (("cut", whole[:-12], "a whole gzip-compressed file"),
                                ("plain", line, "a whole gzip-compressed file"),
                                ("latin", gzip.compress(line.replace(b"park", b"p\xe4rk")), "UTF-8 text")):
        message = error_of(_compact(tmp_path / name, payload))
        assert str(tmp_path / name / "compact" / "Hand-Crafted.jsonl.gz") in message and said in message, message
    empty_name = gzip.compress((json.dumps({**log(), "file": ""}) + "\n").encode())
    assert "field 'file'" in error_of(_compact(tmp_path / "empty", empty_name))


def test_the_line_bound_and_the_decompressed_bound_hold_on_a_small_gzip(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: a 1.5 MB .json.gz holding one 1.6 GB line took 53 s and 3.3 GB. Here a 10 MB line (10 KB
    compressed) against a 1 MB line bound, and 12 MB of lines against a 4 MB decompressed bound."""
    monkeypatch.setenv("WORKBENCH_MAX_LINE_BYTES", str(1 << 20))
    long_line = b'{"file": "1.json", "history": "' + b"a" * (10 << 20) + b'"}\n'
    data = _compact(tmp_path / "long", gzip.compress(long_line))
    assert "a line of at most 1,048,576 bytes" in error_of(data)
    monkeypatch.setenv("WORKBENCH_MAX_LINE_BYTES", str(64 << 20))
    monkeypatch.setenv("WORKBENCH_MAX_GZIP_BYTES", str(4 << 20))
    many = b"".join((json.dumps({**log(), "file": f"{i}.json", "pad": "x" * 100_000}) + "\n").encode()
                     for i in range(120))
    message = error_of(_compact(tmp_path / "many", gzip.compress(many)))
    assert "at most 4,194,304 bytes once decompressed" in message and "Hand-Crafted.jsonl.gz" in message
    monkeypatch.setenv("WORKBENCH_MAX_LINE_BYTES", str(1 << 20))  # a .json file is bounded as one record
    data = folder(tmp_path / "big", json.dumps(log(mistake_reason="y" * (2 << 20))))
    assert "a JSON file of at most 1,048,576 bytes" in error_of(data)


def test_a_fifo_named_like_a_log_is_refused_and_the_command_does_not_hang(tmp_path: Path) -> None:
    data = folder(tmp_path, json.dumps(log()))
    os.mkfifo(data / "Hand-Crafted" / "2.json")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "workbench.cli.main", "import", str(data), "--format",
                           "who-and-when", "--out", str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert time.monotonic() - started < 30 and done.returncode == 2
    assert f"{data / 'Hand-Crafted' / '2.json'}: is not a regular file" in done.stderr
    assert not (tmp_path / "out").exists()


def test_failure_gold_reads_the_readers_labels_outside_the_notebook(tmp_path: Path) -> None:
    """Before: ``ColumnNotFoundError: "labeled_at"`` (labels not yet stored have no time)."""
    tables = read_who_and_when(folder(tmp_path, json.dumps(log()), json.dumps(log(mistake_step=0,
                                                                                  mistake_agent="human"))))
    gold = failure_gold(tables)
    assert gold.sort("run_id").select("run_id", "agent", "step").rows() == [
        ("Hand-Crafted/1", "WebSurfer", 1), ("Hand-Crafted/2", "human", 0)]


def test_the_command_line_reports_each_malformed_log_in_one_line(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    for case in ("deep nesting", "a 5,000-digit step", "a superscript step"):
        data = folder(tmp_path / case.replace(" ", "-"), CASES[case][0])
        assert main(["import", str(data), "--format", "who-and-when", "--out", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err
        assert "internal error" not in err and len(err.strip().splitlines()) == 1, err
