"""Coding-agent compactions: overview, identifier sources and the next-five-steps burden, by hand on the fixtures.

Step numbers and calls below are read off the fixture files (see tests/adapters/test_adapters_claude_code.py
for the line-to-step map), not produced by the functions under test.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import polars as pl
import pytest
from workbench import tokens
from workbench.adapters import read_log
from workbench.summaries import find, identifier_sources
from workbench.analyses import after_compaction, compaction_overview

ROOT = Path(__file__).resolve().parents[2]


def load(fmt: str) -> dict[str, pl.DataFrame]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_log(ROOT / "workbench" / "datasets" / "example_logs" / fmt, fmt)


def test_after_compaction_claude_code_by_hand() -> None:
    t = load("claude-code")
    got = after_compaction(t["steps"], t["compactions"]).sort("boundary", "window")
    # boundary 0 at step 5: before = steps 0-4 (5 calls, the Edit at step 2 errs); after = steps 5-8, stopped by
    # the next compaction at 9: Edit, Bash "pytest tests/test_invoice.py -x" (identical to step 0, in the span),
    # a typed user message, Bash that errs -> burden 2
    # boundary 1 at step 9: before = steps 5-8 (same repeat and error); after = step 9 only (Read, new)
    assert got.drop("run_id").rows() == [
        (0, "after", 4, 3, 1, 1, 2, 1), (0, "before", 5, 5, 0, 1, 1, 0),
        (1, "after", 1, 1, 0, 0, 0, 0), (1, "before", 4, 3, 1, 1, 2, 0)]


def test_after_compaction_codex_and_horizon() -> None:
    t = load("codex")
    got = after_compaction(t["steps"], t["compactions"]).sort("boundary", "window")
    # steps: 0 shell, 1 shell, 2 text | compaction at 3 | 3 apply_patch, 4 orphan output, 5 shell | at 6 | 6 user, 7 shell
    assert got.select("boundary", "window", "steps", "calls", "burden").rows() == [
        (0, "after", 3, 2, 0), (0, "before", 3, 2, 0), (1, "after", 2, 1, 0), (1, "before", 3, 2, 0)]
    one = after_compaction(t["steps"], t["compactions"], horizon=1).sort("boundary", "window")
    assert one["steps"].to_list() == [1, 1, 1, 1]
    with pytest.raises(ValueError, match="horizon"):
        after_compaction(t["steps"], t["compactions"], horizon=0)


def test_compaction_overview_tokens() -> None:
    t = load("claude-code")
    ov = compaction_overview(t).sort("boundary")
    assert ov.select("trigger", "schema", "entries", "span_steps", "tokens_before", "tokens_before_from").rows() == [
        ("auto", "claude_code", 11, 5, 155321, "log"), ("manual", "claude_code", 11, 4, 48210, "log")]
    enc = tokens.encoding("o200k_base")  # the offline o200k table, pinned to tiktoken in test_tokens.py
    assert ov["tokens_after"].to_list() == [len(enc.encode_ordinary(s)) for s in
                                            t["compactions"].sort("boundary")["committed_summary"]]
    # the first span holds the 250 KB build log: counted history is far larger than the second
    assert ov["counted_before"][0] > 30_000 > 1_000 > ov["counted_before"][1]
    codex = compaction_overview(load("codex"))
    assert codex["tokens_before_from"].to_list() == ["counted", "counted"]
    assert (codex["tokens_before"] == codex["counted_before"]).all()


def test_code_identifiers_rule() -> None:
    text = ("Fixed src/a/b.py:41 and tests/test_x.py::test_total; total() and foo.bar() in README.md, see "
            "https://x.io/a. logs/nightly-2026-11-20.log (job INV-1034), x.py.")
    assert find(text, "code") == ["src/a/b.py:41", "tests/test_x.py::test_total", "total()", "foo.bar()", "README.md",
                                  "https://x.io/a", "logs/nightly-2026-11-20.log", "INV-1034", "x.py"]
    assert find("a plain sentence with no ids.", "code") == []


def test_identifier_sources_on_the_fixtures() -> None:
    t = load("claude-code")
    got = identifier_sources(t["compactions"], t["steps"], t["runs"])
    unsourced = got.filter(~pl.col("sourced")).select("boundary", "identifier").rows()
    # src/api/orders.py:88 and inv.total() came back from the sub-agent (its own run), not from any step the
    # main session's second summary replaced
    assert unsourced == [(1, "src/api/orders.py:88"), (1, "inv.total()")]
    assert got.filter(pl.col("boundary") == 0)["sourced"].all()  # total() is sourced by "def total(self)"
    codex = load("codex")
    assert identifier_sources(codex["compactions"], codex["steps"], codex["runs"])["sourced"].all()


def test_compaction_timeline_and_prompt_cache_on_the_example_session() -> None:
    """Read by hand off workbench/datasets/example_logs/claude-code/session.jsonl: the session's first turn is at 10:02, its
    boundaries at 10:14 (auto) and 10:27 (manual), its last line at 10:30; each call's usage as written there."""
    import warnings

    from workbench.adapters import read_log
    from workbench.analyses import compaction_timeline, prompt_cache

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = read_log(ROOT / "workbench" / "datasets" / "example_logs" / "claude-code", "claude-code")
    main = t["runs"].filter(pl.col("parent_run_id").is_null())
    timeline = compaction_timeline(main, t["compactions"])
    assert timeline.select("boundary", "trigger", "minutes", "session_minutes").rows() == [
        (0, "auto", 12.0, 28.0), (1, "manual", 25.0, 28.0)]
    cache = prompt_cache(t["steps"], t["compactions"])
    assert cache.select("boundary", "window", "step", "input_tokens", "cache_read_tokens", "cache_creation_tokens",
                        "fresh_tokens").rows() == [
        (0, "before", 4, 4000, 3300, 680, 20), (0, "after", 5, 2000, 1100, 880, 20),
        (1, "before", 8, 3400, 2700, 680, 20), (1, "after", 9, 2000, 1100, 880, 20)]
    assert prompt_cache(t["steps"].drop("cache_read_tokens"), t["compactions"]).height == 0  # a log without it


def test_unsupported_share_by_role_resamples_sessions() -> None:
    from workbench.analyses.sjc import unsupported_by_role

    e = pl.DataFrame({"entry_id": [f"e{i}" for i in range(8)], "section": ["Current Work"] * 4 + ["Pending Tasks"] * 4,
                      "schema": ["claude_code"] * 8, "supported": [True, False, True, False, False, True, True, True],
                      "scenario_id": ["s1", "s1", "s2", "s2", "s1", "s1", "s1", "s1"]})
    got = {r["role"]: r for r in unsupported_by_role(e, n_boot=200).iter_rows(named=True)}
    history, forward = got["history"], got["forward"]
    # history: 2 of 4 unsupported, each session 1 of 2: every resample is 0.5, a zero-width interval, which on 4
    # entries from 2 sessions (fewer than 20 rows or 5 scenarios) is no interval, said (statistics round 5)
    assert (history["entries"], history["unsupported"], history["estimate"]) == (4, 2, 0.5)
    assert math.isnan(history["ci_low"]) and math.isnan(history["ci_high"]) and history["clusters"] == 2
    assert "4 row(s) in 2 scenario(s)" in history["reason"]
    # forward: all from session s1, 1 of 4: no interval from one session
    assert forward["estimate"] == 0.25 and forward["clusters"] == 1 and math.isnan(forward["ci_low"])
    assert set(got["history"]) >= {"estimate", "ci_low", "ci_high", "n", "n_boot", "level", "method"}


def test_unsupported_share_from_batch_counts_is_the_row_bootstrap() -> None:
    """The shares from clusters' counts, added up over batches that split sessions, are the generic row bootstrap's
    (workbench.stats._bootstrap.bootstrap of np.mean over the entries) to the bit; entries without support are left out."""
    import numpy as np
    from workbench.stats import bootstrap
    from workbench.analyses.sjc import unsupported_by_role, unsupported_counts, unsupported_from_counts

    rng = np.random.default_rng(7)
    n = 300
    sessions = rng.choice([f"s{i:02d}" for i in range(13)], n)
    support = rng.random(n) < 0.7
    e = pl.DataFrame({"entry_id": [f"e{i}" for i in range(n)],
                      "section": rng.choice(["Current Work", "Pending Tasks", "Files and Code Sections"], n),
                      "schema": ["claude_code"] * n, "scenario_id": sessions,
                      "supported": [None if i % 17 == 0 else bool(v) for i, v in enumerate(support)]})
    whole = unsupported_by_role(e, n_boot=400, seed=3)
    batched = unsupported_from_counts(pl.concat([unsupported_counts(part) for part in e.iter_slices(70)]),
                                      n_boot=400, seed=3)
    assert batched.equals(whole)
    from workbench.summaries import with_roles

    rows = with_roles(e).filter(pl.col("supported").is_not_null())
    for r in whole.iter_rows(named=True):
        g = rows.filter(pl.col("role") == r["role"])
        ref = bootstrap(np.mean, (~g["supported"]).cast(pl.Float64).to_numpy(), clusters=g["scenario_id"].to_numpy(),
                        n_boot=400, seed=3)
        assert (r["estimate"], r["ci_low"], r["ci_high"], r["clusters"]) == (ref.estimate, ref.ci_low, ref.ci_high,
                                                                            ref.n_clusters)
        assert r["entries"] == g.height and r["unsupported"] == int((~g["supported"]).sum())


@pytest.mark.parametrize("size", [1, 2, 500])
def test_session_analyses_a_batch_at_a_time_are_the_functions_of_all_sessions(size: int) -> None:
    """Fed one, two or every session at a time (batches_by_run), SessionAnalyses gives the per-compaction rows of
    the functions run on all sessions at once (checked by hand above), and the same entry counts and intervals."""
    from workbench.analyses.sjc import entries_by_role, support_from_scores, unsupported_by_role
    from workbench.datasets import derive_missing
    from workbench.analyses import SessionAnalyses, compaction_timeline, identifier_share, prompt_cache
    from workbench.tables import batches_by_run

    parts = [load("claude-code"), load("codex")]
    t = {name: pl.concat([p[name] for p in parts], how="diagonal_relaxed") for name in parts[0]}
    derive_missing(t)
    analyses = SessionAnalyses(horizon=3)
    frames = {name: t[name] for name in ("runs", "steps", "compactions", "entries")}
    frames["scores"] = t["scores"].join(t["entries"].select("entry_id", "run_id"), on="entry_id")
    for batch in batches_by_run(frames, size, order="compactions"):
        analyses.add(batch)
    assert analyses.compactions == t["compactions"].height
    ids = identifier_sources(t["compactions"], t["steps"], t["runs"])
    whole = {"overview": compaction_overview(t), "timeline": compaction_timeline(t["runs"], t["compactions"]),
             "prompt_cache": prompt_cache(t["steps"], t["compactions"]),
             "after": after_compaction(t["steps"], t["compactions"], horizon=3),
             "identifiers": identifier_share(ids), "unsourced": ids.filter(~pl.col("sourced"))}
    for name, expected in whole.items():
        got = analyses.table(name).collect()
        keys = [c for c in ("run_id", "boundary", "window", "identifier") if c in expected.columns]
        assert got.sort(keys).equals(expected.sort(keys)), (name, got.sort(keys).rows(), expected.sort(keys).rows())
    assert (analyses.identifiers, analyses.sourced) == (ids.height, int(ids["sourced"].sum()))
    entries = support_from_scores(t["entries"], t["scores"], 0.5)
    assert analyses.entries_by_role().equals(entries_by_role(entries))
    clustered = entries.join(t["runs"].select("run_id", "scenario_id"), on="run_id", how="left")
    assert analyses.unsupported_by_role(n_boot=300, seed=4).equals(unsupported_by_role(clustered, n_boot=300, seed=4))
    with pytest.raises(ValueError, match="expected one of"):
        analyses.table("nosuch")
    analyses.close()


def test_session_analyses_name_a_compaction_of_a_session_the_runs_lack() -> None:
    """A scanned directory's references are checked a batch at a time: a compaction naming a session that is not
    among the runs is an error naming the table, the field and the unknown key (not a row of the batch)."""
    from workbench.errors import SchemaError
    from workbench.analyses import SessionAnalyses
    from workbench.tables import batches_by_run

    t = load("claude-code")
    comps = t["compactions"].with_columns(
        pl.when(pl.col("boundary") == 1).then(pl.lit("nosuch-session")).otherwise(pl.col("run_id")).alias("run_id"))
    frames = {"runs": t["runs"], "steps": t["steps"], "compactions": comps}
    with pytest.raises(SchemaError, match=r"^<compactions>: field 'run_id': expected a key present in table 'runs', "
                                          r"got unknown run_id='nosuch-session'$"):
        for batch in batches_by_run(frames, 500, order="compactions"):
            SessionAnalyses().add(batch)
