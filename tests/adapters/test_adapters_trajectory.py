"""Trajectory JSONL: exact round trips, and every malformed line named by FILE:LINE with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.adapters import read_log
from workbench.adapters import write_trajectories
from workbench.datasets import load
from workbench.tables import write_tables
from workbench.tables._vocabulary import TRAJECTORY_TABLES
from workbench.cli.main import main
from workbench.errors import SchemaError

from tests.conftest import assert_cli_round_trip

EXAMPLE = Path(__file__).resolve().parents[2] / "workbench" / "datasets" / "example_logs" / "invoice_log.jsonl"


def run_record(run_id: str = "r1", n_steps: int = 2, **extra: object) -> dict[str, object]:
    steps = [
        {"step": i, "action": {"tool": "get_invoice", "args": {"invoice_id": f"INV-{i}"}},
         "observation": f"INV-{i}: amount {10 * i}.00", "input_tokens": 100 + i, "output_tokens": 10}
        for i in range(n_steps)
    ]
    comps = [{"boundary": 0, "step": 1, "span": [0, 0], "candidate_summary": "## Decisions\n- Paid INV-0.\n"}]
    return {"run_id": run_id, "task_id": "t1", "replicate": 0, "success": True,
            "steps": steps, "compactions": comps, **extra}


def write_lines(path: Path, records: list[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def log_300(tmp_path: Path) -> Path:
    return write_lines(tmp_path / "log.jsonl", [run_record(f"r{i}") for i in range(300)])


def test_example_log_round_trips_exactly(tmp_path: Path) -> None:
    first = read_log(EXAMPLE)
    write_tables(first, tmp_path / "a")
    write_trajectories(load(tmp_path / "a"), tmp_path / "export.jsonl")
    second = read_log(tmp_path / "export.jsonl")
    for name in TRAJECTORY_TABLES:
        assert first[name].equals(second[name]), name
    assert first["runs"].height == 4 and first["steps"].height == 32 and first["compactions"].height == 8


def test_cli_import_export_import_identical(tmp_path: Path) -> None:
    assert_cli_round_trip(EXAMPLE, tmp_path)


def test_args_keep_key_order_and_types(tmp_path: Path) -> None:
    rec = run_record()
    rec["steps"][0]["action"]["args"] = {"z": 1, "a": [1.5, None, "x"], "m": {"k": True}}  # type: ignore[index]
    tables = read_log(write_lines(tmp_path / "l.jsonl", [rec]))
    assert tables["steps"]["args"][0] == '{"z":1,"a":[1.5,null,"x"],"m":{"k":true}}'
    write_trajectories(tables, tmp_path / "out.jsonl")
    back = json.loads((tmp_path / "out.jsonl").read_text())
    assert back["steps"][0]["action"]["args"] == {"z": 1, "a": [1.5, None, "x"], "m": {"k": True}}


BAD_LINES = [
    # (description, line content, expected fragment)
    ("truncated", '{"run_id": "r150", "task_id": "t1", "steps": [', "truncated line"),
    ("not json", "run_id=r150", "one JSON object per line"),
    ("missing field", {"run_id": "r150", "steps": []}, "field 'task_id': expected a string, got nothing (missing)"),
    ("wrong type", {"run_id": "r150", "task_id": "t1", "replicate": "0"}, "field 'replicate': expected an integer, got string '0'"),
    ("wrong step type", {"run_id": "r150", "task_id": "t1", "steps": [{"step": 0, "blocked": "no"}]},
     "field 'steps[0].blocked': expected true or false"),
    ("duplicate step", {"run_id": "r150", "task_id": "t1", "steps": [{"step": 0}, {"step": 0}]},
     "field 'steps[1].step': expected a unique (run_id, step)"),
    ("unknown run", {"run_id": "r150", "task_id": "t1", "steps": [{"step": 0, "run_id": "r999"}]},
     "field 'steps[0].run_id': expected the run's own id 'r150', got unknown run string 'r999'"),
    ("not an object", [1, 2], "expected a JSON object"),
    ("NaN", '{"run_id": "r150", "task_id": "t1", "reward": NaN}', "finite JSON numbers"),
    ("duplicate run", {"run_id": "r3", "task_id": "t1"}, "field 'run_id': expected a unique run id, got duplicate 'r3' first seen at line 4"),
]


@pytest.mark.parametrize(("what", "bad", "fragment"), BAD_LINES, ids=[b[0] for b in BAD_LINES])
def test_malformed_line_in_300_line_log_names_the_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], what: str, bad: object, fragment: str
) -> None:
    records: list[object] = [run_record(f"r{i}") for i in range(300)]
    records[150] = bad
    log = write_lines(tmp_path / "log.jsonl", records)
    with pytest.raises(SchemaError) as info:
        read_log(log)
    assert str(info.value).startswith(f"{log}:151: "), str(info.value)
    assert fragment in str(info.value)
    out = tmp_path / "out"
    assert main(["import", str(log), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"workbench import: {log}:151: ")
    assert not out.exists() and not any(p.name.startswith(".out") for p in tmp_path.iterdir())
    assert main(["validate", str(log)]) == 2


def test_utf8_error_names_line_and_byte(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    good = json.dumps(run_record("r0")).encode() + b"\n"
    log.write_bytes(good + b'{"run_id": "r1", "task_id": "t\xff1"}\n')
    with pytest.raises(SchemaError, match=r"log.jsonl:2: expected UTF-8 text, got byte 0xff at column 31"):
        read_log(log)


def test_empty_and_blank_files(tmp_path: Path) -> None:
    for content in ("", "\n  \n"):
        log = tmp_path / "empty.jsonl"
        log.write_text(content)
        with pytest.raises(SchemaError, match=r"empty.jsonl:1: expected at least one JSON line, got an empty file"):
            read_log(log)


def test_validate_prints_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(log_300(tmp_path))]) == 0
    assert "ok (300 runs, 600 steps, 300 compactions)" in capsys.readouterr().out


def test_existing_output_untouched_when_import_fails(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert main(["import", str(EXAMPLE), "--out", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    bad = write_lines(tmp_path / "bad.jsonl", [run_record("x"), "{"])
    assert main(["import", str(bad), "--out", str(out)]) == 2
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_byte_order_mark_and_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "bom.jsonl"
    log.write_bytes(b"\xef\xbb\xbf" + json.dumps(run_record("r0")).encode() + b"\n")
    assert read_log(log)["runs"]["run_id"].to_list() == ["r0"]
    assert main(["validate", str(tmp_path / "nope.jsonl")]) == 2
    assert capsys.readouterr().err.strip() == f"workbench validate: {tmp_path / 'nope.jsonl'}: no such file, expected a log file"


def test_args_text_is_what_json_dumps_writes_whatever_the_value_holds() -> None:
    """encode_args writes most values with orjson, which is faster: its text must be json.dumps' (the reference)
    for every kind of value a tool call's arguments hold, the awkward ones too: floats (orjson writes 1e-05 as
    0.00001), integers beyond 64 bits, keys that are not strings, control characters, lone surrogates, line
    separators, astral characters, deep nesting."""
    import json
    import random

    from workbench.tables import encode_args

    def reference(value: object) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)

    awkward = [{"x": 1e-05}, [1e16, 0.1, -0.0], {"n": 2**64, "m": -2**63 - 1}, {1: "int key"}, {"s": "\ud800 lone"},
               {"c": "".join(chr(i) for i in range(0x20)) + "\x7f\u0085\u2028\u2029\ufeff"}, {"e": "😀 é \U0010ffff"},
               {"deep": json.loads("[" * 300 + "]" * 300)}, {"path": "a\\b\"c'd/e"}, [], {}, "text", 7, True, False]
    rng = random.Random(44)
    alphabet = [chr(i) for i in range(0x250)] + ["\u2028", "😀", "\ufeff", "\ud7ff", "\ue000", "\uffff"]
    for _ in range(2000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
        awkward.append({s: [s, rng.randint(-2**63, 2**63 - 1), None, {"k": s, "b": rng.random() < 0.5}]})
    for value in awkward:
        assert encode_args(value) == reference(value), value
    assert encode_args(None) is None
    with pytest.raises(ValueError):
        encode_args({"x": float("nan")})  # as json.dumps with allow_nan=False
