"""``workbench usage`` as people use ccusage (issue 59): full session ids, a day, the models, tokens and a cost per
session, ``--by day|model|project`` and ``--json``; a model without a price costs "unknown", never 0.

The reference numbers were printed by ccusage 20.0.24 (``ccusage daily --json --offline --timezone UTC``) on the
home :func:`home` writes, recorded here: per UTC day the input, output, cache-read and cache-creation tokens and the
cost. ccusage prices the unknown model at 0; the workbench says it does not know."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

WORKBENCH = str(Path(sys.executable).parent / "workbench")

#: ccusage 20.0.24 on this home: (day, input, output, cache read, cache creation, cost USD)
CCUSAGE_DAILY = [("2026-11-02", 100, 200, 3000, 400, 0.0057),
                 ("2026-11-03", 61, 82, 5703, 684, 0.005131500000000001),
                 ("2026-11-04", 1000, 1000, 0, 0, 0)]


def _reply(sid: str, mid: str, ts: str, model: str, u: tuple[int, int, int, int], one_hour: int = 0) -> dict:
    usage: dict = {"input_tokens": u[0], "cache_creation_input_tokens": u[3], "cache_read_input_tokens": u[2],
                   "output_tokens": u[1], "service_tier": "standard"}
    if one_hour:
        usage["cache_creation"] = {"ephemeral_5m_input_tokens": u[3] - one_hour, "ephemeral_1h_input_tokens": one_hour}
    return {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/dev/shop",
            "sessionId": sid, "version": "2.0.31", "gitBranch": "main",
            "message": {"id": mid, "type": "message", "role": "assistant", "model": model,
                        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn", "usage": usage},
            "requestId": "r" + mid, "type": "assistant", "uuid": mid + "u", "timestamp": ts}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """Two projects: a session over two UTC days (a reply written twice: counted once; a 1-hour cache write) with two
    models, and a session on a priced model and on one no price table knows."""
    projects = tmp_path / "projects"
    sessions = {
        "-home-dev-shop/5d1c0a2e-1111-4a5b-9c8d-000000000001.jsonl": [
            _reply("5d1c0a2e-1111-4a5b-9c8d-000000000001", "m1", "2026-11-02T23:50:00.000Z",
                   "claude-sonnet-4-5-20250929", (100, 200, 3000, 400)),
            _reply("5d1c0a2e-1111-4a5b-9c8d-000000000001", "m2", "2026-11-03T00:10:00.000Z",
                   "claude-sonnet-4-5-20250929", (10, 20, 5000, 600), one_hour=200),
            _reply("5d1c0a2e-1111-4a5b-9c8d-000000000001", "m2", "2026-11-03T00:10:00.000Z",
                   "claude-sonnet-4-5-20250929", (10, 20, 5000, 600), one_hour=200),
            _reply("5d1c0a2e-1111-4a5b-9c8d-000000000001", "m3", "2026-11-03T01:00:00.000Z",
                   "claude-haiku-4-5-20251001", (50, 60, 700, 80))],
        "-home-dev-blog/5d1c0a2e-2222-4a5b-9c8d-000000000002.jsonl": [
            _reply("5d1c0a2e-2222-4a5b-9c8d-000000000002", "m4", "2026-11-03T10:00:00.000Z",
                   "claude-opus-4-5-20251101", (1, 2, 3, 4)),
            _reply("5d1c0a2e-2222-4a5b-9c8d-000000000002", "m5", "2026-11-04T10:00:00.000Z", "mystery-model-9",
                   (1000, 1000, 0, 0))]}
    for name, lines in sessions.items():
        (projects / name).parent.mkdir(parents=True, exist_ok=True)
        (projects / name).write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))
    return projects


def usage(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([WORKBENCH, "usage", *args], capture_output=True, text=True, timeout=120)


def test_by_day_is_ccusage_daily_and_an_unpriced_model_is_unknown(home: Path) -> None:
    done = usage(str(home), "--by", "day", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(r["day"], r["input"], r["output"], r["cache_read"], r["cache_write"]) for r in rows] == \
        [d[:5] for d in CCUSAGE_DAILY]
    for r, (*_, cost) in zip(rows[:2], CCUSAGE_DAILY[:2], strict=True):
        assert r["cost_usd"] == pytest.approx(cost, abs=1e-12) and r["unpriced"] == []
    assert rows[2]["cost_usd"] is None and rows[2]["unpriced"] == ["mystery-model-9"]  # ccusage: 0


def test_sessions_show_full_ids_their_day_models_and_a_total_that_says_what_it_leaves_out(home: Path) -> None:
    """Before: ids cut to 40 characters, no model, day or cost. The table now holds each session's full id and
    first day, and the total line counts the priced cost and names the model it could not price."""
    done = usage(str(home))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    shop = next(line for line in lines if "5d1c0a2e-1111-4a5b-9c8d-000000000001" in line)
    assert "2026-11-02" in shop and "claude-sonnet-4-5" in shop
    assert shop.split()[-1] == f"{CCUSAGE_DAILY[0][5] + 0.00453 + 0.00052:.2f}"
    # the blog session: its opus reply priced ((1 x 5 + 2 x 25 + 3 x 0.5 + 4 x 6.25) / 1e6 = 0.0000815), the
    # unknown model's reply counted apart (before: the whole session "unknown", its priced reply lost)
    blog = next(line for line in lines if "5d1c0a2e-2222-4a5b-9c8d-000000000002" in line)
    assert blog.split()[-3:] == ["0.00", "1", "reply"]
    blog_json = next(r for r in json.loads(usage(str(home), "--json").stdout)
                     if r["session_id"].startswith("5d1c0a2e-2"))
    assert blog_json["cost_usd"] == pytest.approx(0.0000815, abs=1e-15) and blog_json["unpriced_replies"] == 1
    assert "1 reply unpriced: no price for mystery-model-9" in done.stdout
    assert "LiteLLM's prices of 2026-12-06" in done.stdout
    by_project = json.loads(usage(str(home), "--by", "project", "--json").stdout)
    assert {r["project_dir"]: r["input"] for r in by_project} == {"-home-dev-shop": 160, "-home-dev-blog": 1001}
    by_model = json.loads(usage(str(home), "--by", "model", "--json").stdout)
    assert {r["model"]: r["output"] for r in by_model} == {"claude-haiku-4-5-20251001": 60,
                                                          "claude-opus-4-5-20251101": 2,
                                                          "claude-sonnet-4-5-20250929": 220, "mystery-model-9": 1000}


def test_the_first_bad_line_of_a_session_says_skip_invalid_exists(home: Path, tmp_path: Path) -> None:
    """Before: ``workbench import ~`` stopped at the first malformed line without a word about --skip-invalid.
    (``usage`` passes over lines that are not JSON, as ccusage does.)"""
    bad = next(home.rglob("*.jsonl"))
    bad.write_text(bad.read_text() + "not json\n")
    done = subprocess.run([WORKBENCH, "import", str(home), "--out", str(tmp_path / "out")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and f"{bad.name}:{len(bad.read_text().splitlines())}: expected one JSON object" in done.stderr
    assert "--skip-invalid skips every bad line" in done.stderr and not (tmp_path / "out").exists()
    assert usage(str(home)).returncode == 0
