"""Costs as ccusage computes them (issue 79): a reply's logged ``costUSD`` first, else its tokens at LiteLLM's
prices (a dated snapshot), fast mode at its model's multiplier, the 200k-token tier, Codex by each turn's model.

The reference is ccusage 20.0.24's own JSON (``ccusage session --json --offline`` and ``ccusage codex session --json
--offline``) on the probe home in ``tests/fixtures/ccusage/`` (both written by ``tools/ccusage_compare.py --probe``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "ccusage"


def _ccusage() -> dict[str, dict]:
    """Session id -> ccusage's row, Claude Code's and Codex's (a rollout's id: the last five parts of its path)."""
    out = {}
    for s in json.loads((FIXTURE / "ccusage-claude.json").read_text())["session"]:
        out[s["period"]] = {"cost": s["totalCost"], "models": s["modelsUsed"]}
    for s in json.loads((FIXTURE / "ccusage-codex.json").read_text())["sessions"]:
        out["-".join(s["sessionId"].split("-")[-5:])] = {"cost": s["costUSD"], "models": s["models"]}
    return out


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    from workbench.adapters import usage_rows

    return usage_rows(FIXTURE / "home")


def test_every_session_costs_what_ccusage_says(rows: list[dict]) -> None:
    """Before: costUSD ignored, claude-3-sonnet and gpt-5.2/5.3-codex unpriced, fast mode at the standard price, no
    long-context tier, a session with one unknown model "unknown" as a whole. Each session now equals ccusage's
    cost to 1e-9; where ccusage prices an unknown model at 0, the workbench leaves its replies out of the cost and
    counts them (a session of that model alone: cost unknown)."""
    from workbench.analyses import usage_view

    theirs = _ccusage()
    view = {g["session_id"]: g for g in usage_view(rows, "session")}
    assert set(view) == set(theirs) and len(view) == 6
    for sid, g in view.items():
        if g["unpriced"] and g["replies"] == g["unpriced_replies"]:
            assert g["cost_usd"] is None and theirs[sid]["cost"] == 0, sid
        else:
            assert g["cost_usd"] == pytest.approx(theirs[sid]["cost"], abs=1e-9), sid
    mixed = view["a1000000-0000-4000-8000-000000000002"]  # sonnet above the tier, opus fast 2x and 1x, unknown
    assert (mixed["unpriced"], mixed["unpriced_replies"]) == (["claude-mystery-9"], 1)
    assert mixed["models"] == theirs["a1000000-0000-4000-8000-000000000002"]["models"]  # fast mode named "-fast"
    # the logged costUSD of an unknown model's reply is its cost, as ccusage's "auto" takes it
    assert view["b2000000-0000-4000-8000-000000000003"]["unpriced"] == []


def test_the_total_is_the_same_whatever_the_grouping(rows: list[dict]) -> None:
    """Before: by session or model $0.7972, by day or project $0.7896 on one home (a day with an unpriced model lost
    its priced replies). Every grouping now adds up to ccusage's total and counts the same unpriced replies."""
    from workbench.analyses import usage_view

    total = sum(r["cost"] for r in _ccusage().values())
    for by in ("session", "day", "model", "project"):
        view = usage_view(rows, by)
        assert sum(g["cost_usd"] or 0.0 for g in view) == pytest.approx(total, abs=1e-9), by
        assert sum(g["unpriced_replies"] for g in view) == 2, by


def test_codex_tokens_go_to_each_turns_model(rows: list[dict]) -> None:
    """A rollout whose turns switch model: each model's tokens as ccusage's per-model breakdown gives them."""
    from workbench.analyses import usage_view

    theirs = _ccusage()["0199c000-aaaa-7bbb-8ccc-000000000005"]["models"]
    codex = [r for r in rows if r["client"] == "codex"]
    by_model = {g["model"]: g for g in usage_view(codex[:1], "model")}
    assert set(by_model) == set(theirs) == {"gpt-5.2-codex", "gpt-5.3-codex"}
    for model, m in theirs.items():
        assert (by_model[model]["input"], by_model[model]["cache_read"], by_model[model]["output"]) == \
            (m["inputTokens"], m["cacheReadTokens"], m["outputTokens"])


def test_prices_are_the_dated_snapshots() -> None:
    """A few prices pinned to the shipped snapshot (LiteLLM 1.100.0, then 1.80.0 for what it dropped), and ccusage's
    rules on them: a 1-hour write at twice the input, fast mode 6x (ccusage's own multiplier for Opus 4.6), 2x
    (LiteLLM's for Opus 4.8) or 1x (none known), a dated name by its own entry or its family's."""
    from workbench.analyses import PRICES_AS_OF, PRICES_SOURCE, price_of

    assert PRICES_AS_OF == "2026-12-06" and "LiteLLM 1.100.0" in PRICES_SOURCE

    def five(model: str) -> tuple[float, ...]:
        p = price_of(model)
        assert p is not None, model
        return p.input, p.output, p.cache_read, p.cache_write_5m, p.cache_write_1h

    assert five("claude-3-sonnet-20240229") == (3.0, 15.0, 0.3, 3.75, 6.0)
    assert five("gpt-5.2-codex")[:3] == five("gpt-5.3-codex")[:3] == (1.75, 14.0, 0.175)
    assert five("claude-3-5-haiku-20241022")[4] == pytest.approx(1.6)  # LiteLLM 1.80.0 says 6.0; ccusage 1.6
    assert five("claude-opus-4-6-fast") == tuple(6 * v for v in five("claude-opus-4-6"))
    assert five("claude-opus-4-8-fast") == tuple(2 * v for v in five("claude-opus-4-8"))
    assert five("claude-opus-4-20250514-fast") == five("claude-opus-4-20250514") == (15.0, 75.0, 1.5, 18.75, 30.0)
    assert five("anthropic/claude-sonnet-4-5-20250929") == (3.0, 15.0, 0.3, 3.75, 6.0)
    assert price_of("claude-opus-5-5") is None  # newer than the snapshot: unpriced, as ccusage 20.0.24 has it


def test_tokens_beyond_the_tier_in_one_reply_cost_the_long_context_price() -> None:
    """By hand, Sonnet 4.5 (3 / 15 / 0.30 / 3.75 a million; above 200k tokens of a kind in one reply 6 / 22.5 /
    0.60 / 7.50; a 1-hour write twice the input rate): 1M input and 300k output in one reply, 50k read in another."""
    from workbench.analyses._pricing import part_cost

    counts = {"input": 1_000_000, "output": 300_000, "cache_read": 50_000, "input_over_tier": 800_000,
              "output_over_tier": 100_000, "cache_creation_1h": 250_000, "cache_creation_1h_over_tier": 50_000}
    want = (200_000 * 3 + 800_000 * 6 + 200_000 * 15 + 100_000 * 22.5 + 50_000 * 0.3 + 200_000 * 6
            + 50_000 * 12) / 1e6
    assert part_cost("claude-sonnet-4-5-20250929", counts) == pytest.approx(want, rel=1e-12)
    assert part_cost("claude-sonnet-4-5-20250929", {**counts, "cost_logged": 0.5}) == 0.5  # logged: as logged
    assert part_cost("no-such-model", counts) is None and part_cost("no-such-model", {"input": 0}) == 0.0


def test_a_resumed_copy_in_a_later_run_keeps_the_tier_and_the_logged_cost(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A resumed session copies earlier replies (a logged cost, a reply above the tier) into its own file; read in
    runs of one file each by two workers, those replies are added one by one, and their extra counts (kept apart
    from the common six) must come along: the same costs as one process reading every file, the copy adding none."""
    import shutil

    from workbench.adapters import _usage_scan as usage_scan
    from workbench.analyses import usage_view

    projects = tmp_path / "projects"
    shutil.copytree(FIXTURE / "home" / ".claude" / "projects", projects)
    source = projects / "-home-dev-shop" / "a1000000-0000-4000-8000-000000000001.jsonl"
    tier = projects / "-home-dev-shop" / "a1000000-0000-4000-8000-000000000002.jsonl"
    copied = [json.loads(line) for line in (source.read_text() + tier.read_text()).splitlines()]
    resumed = [{**rec, "sessionId": "c3000000-0000-4000-8000-000000000009"} for rec in copied]
    new = resumed[0]  # and two replies of its own: a logged cost, and 300k input (100k above the tier)
    resumed.append({**new, "requestId": "req_new1", "costUSD": 0.77, "message": {**new["message"], "id": "msg_new1"}})
    resumed.append({**new, "requestId": "req_new2", "message": {**new["message"], "id": "msg_new2", "usage": {
        "input_tokens": 300_000, "output_tokens": 0, "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0}}})
    (projects / "-home-dev-shop" / "zz-resumed.jsonl").write_text(
        "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in resumed))
    files = sorted(projects.rglob("*.jsonl"))
    monkeypatch.setattr(usage_scan, "PARALLEL_BYTES", 1 << 60)
    alone = usage_view(usage_scan.claude_code_totals(files), "session")
    monkeypatch.setattr(usage_scan, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(usage_scan, "RUN_BYTES", 1)  # a file a run
    monkeypatch.setattr(usage_scan.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    spread = usage_view(usage_scan.claude_code_totals(files), "session")
    assert spread == alone
    theirs = {sid: row["cost"] for sid, row in _ccusage().items() if not sid.startswith("0199")}
    theirs["c3000000-0000-4000-8000-000000000009"] = 0.77 + (200_000 * 3 + 100_000 * 6) / 1e6  # Sonnet 4.5
    assert {g["session_id"]: g["cost_usd"] or 0.0 for g in spread} == pytest.approx(theirs, abs=1e-9)


def test_a_view_made_a_batch_at_a_time_is_the_view_of_all_its_rows() -> None:
    """Issue 82: the usage view added to in batches (as the pass hands rows on) gives what it gives on all the rows
    at once, in every grouping, on the fixture home's Claude Code and Codex rows (priced, unpriced, logged costs):
    the same groups in the same order, the same sums and costs to the last digit. A view's result is taken once."""
    from workbench.adapters import usage_rows
    from workbench.analyses import usage_view
    from workbench.analyses._pricing import UsageView

    rows = usage_rows(FIXTURE / "home")
    assert len(rows) >= 4 and {r["client"] for r in rows} == {"claude-code", "codex"}
    for by in ("session", "day", "model", "project"):
        whole = usage_view(rows, by)
        for size in (1, 2, 3):
            view = UsageView(by)
            for at in range(0, len(rows), size):
                view.add(rows[at:at + size])
            assert view.result() == whole
    view = UsageView("day")
    view.add(rows)
    view.result()
    with pytest.raises(RuntimeError, match="already taken"):
        view.result()
    with pytest.raises(ValueError, match="by must be"):
        UsageView("week")
