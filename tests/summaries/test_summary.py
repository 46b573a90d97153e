"""Summary parsing, pruning and identifiers (SJC Appendix E.3 / F); one test per line rule."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.tables import SECTIONS
from workbench.summaries import entries_table
from workbench.summaries import headings, parse, prune, render

SUMMARY = """## Decisions
- Paid INV-104 ($120.50).
* Skipped INV-221: disputed.
+ Will file after INV-307.

## Open TODOs
1. Pay INV-307.
2) File the report.

## Constraints/Rules
None.

## Pending user asks
- Settle every open invoice for G7.

## Exact identifiers
- INV-104
"""


def texts(summary: str) -> list[tuple[str, str]]:
    return [(e.section, e.text) for e in parse(summary)]


def test_bullet_kinds_and_numbered_items_are_entries() -> None:
    assert texts(SUMMARY) == [
        ("Decisions", "- Paid INV-104 ($120.50)."),
        ("Decisions", "* Skipped INV-221: disputed."),
        ("Decisions", "+ Will file after INV-307."),
        ("Open TODOs", "1. Pay INV-307."),
        ("Open TODOs", "2) File the report."),
        ("Pending user asks", "- Settle every open invoice for G7."),
        ("Exact identifiers", "- INV-104"),
    ]
    assert [e.position for e in parse(SUMMARY)] == list(range(7))
    assert all(SUMMARY[e.start:e.end] == e.text for e in parse(SUMMARY))


def test_placeholders_are_not_entries() -> None:
    s = "## Decisions\n- None.\n- none captured\n(none)\nN/A\n- \n## Open TODOs\n- Pay INV-1\nNone.\n"
    assert texts(s) == [("Open TODOs", "- Pay INV-1")]  # a bare placeholder after an entry is not a continuation


def test_wrapped_continuation_and_nested_bullets_belong_to_their_entry() -> None:
    s = "## Decisions\n- Paid INV-1 after checking\nthe disputed flag.\n  - nested detail\n    deeper\n- Second\n"
    assert texts(s) == [
        ("Decisions", "- Paid INV-1 after checking\nthe disputed flag.\n  - nested detail\n    deeper"),
        ("Decisions", "- Second"),
    ]
    pruned = prune(s, [1])
    assert pruned == "## Decisions\n- Second\n"


def test_indented_paragraph_after_blank_continues_but_flush_prose_does_not() -> None:
    s = "## Decisions\n- First\n\n  more of first\n\nProse line.\n- Second\n"
    assert texts(s) == [("Decisions", "- First\n\n  more of first"), ("Decisions", "- Second")]
    assert prune(s, []) == "## Decisions\n\nProse line.\n"


def test_crlf_and_cr_line_endings() -> None:
    crlf = SUMMARY.replace("\n", "\r\n")
    assert [t for _, t in texts(crlf)] == [t for _, t in texts(SUMMARY)]
    assert "\r" not in "".join(e.text for e in parse(crlf))
    kept = prune(crlf, [0])
    assert kept.count("\r\n") == kept.count("\n") and "- Paid INV-104 ($120.50).\r\n" in kept
    cr = "## Decisions\r- a\r  b\r- c\r"
    assert texts(cr) == [("Decisions", "- a\r  b"), ("Decisions", "- c")]


def test_text_before_first_heading_is_preamble() -> None:
    s = "Summary of the run so far:\n- not an entry\n\n## Decisions\n- entry\n"
    assert texts(s) == [("Decisions", "- entry")]
    assert prune(s, []) == "Summary of the run so far:\n- not an entry\n\n## Decisions\n"


def test_unknown_and_repeated_headings() -> None:
    s = "## Decisions\n- a\n## Notes from tools\n- b\n## Decisions\n- c\n### Sub heading\n- d\n"
    assert texts(s) == [("Decisions", "- a"), ("Notes from tools", "- b"), ("Decisions", "- c"), ("Decisions", "- d")]
    assert headings(s) == ["Decisions", "Notes from tools", "Decisions"]
    assert headings(prune(s, [])) == headings(s)


def test_heading_case_and_spacing_normalised_to_canonical_names() -> None:
    s = "##   open todos  \n- a\n## EXACT IDENTIFIERS ##\n- b\n"
    assert texts(s) == [("Open TODOs", "- a"), ("Exact identifiers", "- b")]


def test_code_fences_are_not_structure() -> None:
    s = "## Decisions\n- a\n\n```\n## Open TODOs\n- not a bullet\n```\n- b\n"
    assert texts(s) == [("Decisions", "- a"), ("Decisions", "- b")]
    owned = "## Decisions\n- run this\n  ```\n  ## x\n  - y\n  ```\n- b\n"
    assert texts(owned)[0] == ("Decisions", "- run this\n  ```\n  ## x\n  - y\n  ```")


def test_prune_keeps_everything_else_byte_identical() -> None:
    out = prune(SUMMARY, [0, 3, 6])
    assert texts(out) == [texts(SUMMARY)[i] for i in (0, 3, 6)]
    assert headings(out) == list(SECTIONS)
    assert "None." in out and len(out) < len(SUMMARY)
    assert prune(SUMMARY, range(7)) == SUMMARY


def test_prune_rejects_unknown_positions() -> None:
    import pytest

    with pytest.raises(ValueError, match=r"positions with no entry: \[9\]"):
        prune(SUMMARY, [9])


def test_entry_body_and_render() -> None:
    e = parse("## Decisions\n- Paid INV-1\n  after review\n")[0]
    assert e.body == "Paid INV-1 after review"
    rendered = render({"Decisions": ["x"], "Open TODOs": []})
    assert headings(rendered) == list(SECTIONS)
    assert texts(rendered) == [("Decisions", "- x")]


def test_entries_table_ids_and_exact_carry_over() -> None:
    comps = pl.DataFrame({
        "run_id": ["r", "r"], "boundary": [0, 1],
        "candidate_summary": ["## Decisions\n- Paid INV-1\n", "## Decisions\n-   paid  inv-1\n- New\n"],
    })
    ent = entries_table(comps)
    assert ent["entry_id"].to_list() == ["r/b0/e0", "r/b1/e0", "r/b1/e1"]
    assert ent["carried_from"].to_list() == [None, "r/b0/e0", None]


# --- property tests --------------------------------------------------------

_words = st.text(alphabet=st.sampled_from("abcINV-0123 .$:/"), min_size=1, max_size=20).map(str.strip).filter(
    lambda w: bool(w) and w.lower().rstrip(".") not in ("none", "n/a", "na", "nothing"))
_line = st.one_of(
    st.builds(lambda m, w: f"{m} {w}", st.sampled_from(["-", "*", "+", "1.", "2)"]), _words),
    st.builds(lambda w: f"  - {w}", _words),
    st.builds(lambda w: f"    {w}", _words),
    _words,
    st.just(""),
    st.just("None."),
    st.just("```"),
    st.sampled_from([f"## {s}" for s in SECTIONS] + ["## Other", "# Title", "### Sub"]),
)
_summary = st.builds(
    lambda lines, nl, final: nl.join(lines) + (nl if final else ""),
    st.lists(_line, max_size=25), st.sampled_from(["\n", "\r\n"]), st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(_summary, st.data())
def test_prune_never_adds_or_rewrites_an_entry(summary: str, data: st.DataObject) -> None:
    entries = parse(summary)
    keep = data.draw(st.sets(st.sampled_from(range(len(entries)))) if entries else st.just(set()))
    out = prune(summary, keep)
    assert len(out) <= len(summary)
    # read under the summary's own schema: pruning may remove the only line that told the schema apart (a
    # "## Decisions" swallowed by a fenced entry), and a compressor's schema does not change with a prune
    schema = entries[0].schema if entries else "auto"
    assert [e.text for e in parse(out, schema)] == [e.text for e in entries if e.position in keep]
    assert [e.section for e in parse(out, schema)] == [e.section for e in entries if e.position in keep]
    assert headings(out) == headings(summary)
    assert all(summary[e.start:e.end] == e.text for e in entries)
    assert prune(summary, range(len(entries))) == summary


# --- schemas beyond OpenClaw's (Claude Code, free text) ----------------------------------------

CLAUDE_CODE = """Analysis:
I read the file and ran the test.

Summary:
1. **Primary Request and Intent**:
   - Fix test_total without changing the API.
2. **Key Technical Concepts**:
   - Decimal rounding
   - pytest
3. **Files and Code Sections**:
   - src/invoice.py
      - total() does not round:
      ```python
      - not a bullet
      ```
4. **Pending Tasks**:
   None.
5. **Current Work**:
   Editing src/invoice.py line 41.
   It failed once.
"""


def test_claude_code_numbered_bold_items_are_sections_with_roles() -> None:
    from workbench.summaries import detect_schema

    assert detect_schema(CLAUDE_CODE) == "claude_code"
    got = [(e.section, e.role, e.text) for e in parse(CLAUDE_CODE)]
    assert got == [
        ("Primary Request and Intent", "constraints", "   - Fix test_total without changing the API."),
        ("Key Technical Concepts", "history", "   - Decimal rounding"),
        ("Key Technical Concepts", "history", "   - pytest"),
        ("Files and Code Sections", "identifiers",
         "   - src/invoice.py\n      - total() does not round:\n      ```python\n      - not a bullet\n      ```"),
        ("Current Work", "history", "   Editing src/invoice.py line 41.\n   It failed once."),
    ]
    assert {e.schema for e in parse(CLAUDE_CODE)} == {"claude_code"}


def test_free_text_paragraphs_and_bullets_are_entries() -> None:
    from workbench.summaries import detect_schema

    text = "The user asked for X.\nIt wraps.\n\n- ran job 77\n- saw KeyError\n\n**Next steps:**\nRerun job 77.\n"
    assert detect_schema(text) == "free_text"
    assert [(e.section, e.role, e.text) for e in parse(text)] == [
        ("Summary", "other", "The user asked for X.\nIt wraps."), ("Summary", "other", "- ran job 77"),
        ("Summary", "other", "- saw KeyError"), ("Next steps", "other", "Rerun job 77.")]
    # an unknown ## heading alone does not make a summary OpenClaw's
    assert detect_schema("## Notes\nsomething\n") == "free_text"
    assert detect_schema("## notes\n- a\n## Open todos\n- b\n") == "openclaw"
    assert [e.section for e in parse("## Notes\nsomething\n")] == ["Notes"]


def test_schema_detected_on_the_fixtures_and_the_real_claude_summaries() -> None:
    import json
    import warnings
    from pathlib import Path

    from workbench.adapters import read_log
    from workbench.summaries import detect_schema

    root = Path(__file__).resolve().parents[2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        claude = read_log(root / "workbench" / "datasets" / "example_logs" / "claude-code", "claude-code")["compactions"]
        codex = read_log(root / "workbench" / "datasets" / "example_logs" / "codex", "codex")["compactions"]
    assert [detect_schema(s) for s in claude["committed_summary"]] == ["claude_code", "claude_code"]
    assert [detect_schema(s) for s in codex["committed_summary"]] == ["free_text", "free_text"]
    first = parse(claude["committed_summary"][0])
    # nine numbered items in the first summary, read by hand; "Analysis:" text is a preamble
    assert len({e.section for e in first}) == 9 and not any("The user wants" in e.text for e in first)
    assert len(first) == 11 and sum(e.role == "forward" for e in first) == 2
    real = json.loads((root / "data" / "real" / "claude-compaction" / "fixture.json").read_text())
    assert [detect_schema(r["summary"]) for r in real] == ["free_text"] * 3
    for r in real:  # every line that is a bullet in the real summaries is in exactly one entry
        entries = parse(r["summary"])
        bullets = [ln for ln in r["summary"].splitlines() if ln.startswith("- ")]
        assert all(sum(b in e.text.splitlines() for e in entries) == 1 for b in bullets)


_cc_item = st.builds(lambda n, title: f"{n}. **{title}**:", st.integers(1, 12),
                     st.sampled_from(["Primary Request and Intent", "Pending Tasks", "Current Work", "Other"]))
_cc_line = st.one_of(_cc_item, st.builds(lambda w: f"   - {w}", _words), st.builds(lambda w: f"      - {w}", _words),
                     st.builds(lambda w: f"   {w}", _words), _words, st.just(""), st.just("   None."), st.just("```"))
_free_line = st.one_of(_words, st.builds(lambda w: f"- {w}", _words), st.builds(lambda w: f"**{w}:**", _words),
                       st.builds(lambda w: f"## {w}", _words), st.just(""), st.just("  - nested"))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["openclaw", "claude_code", "free_text"]), st.data())
def test_prune_is_delete_only_for_every_schema(schema: str, data: st.DataObject) -> None:
    line = {"openclaw": _line, "claude_code": _cc_line, "free_text": _free_line}[schema]
    nl = data.draw(st.sampled_from(["\n", "\r\n"]))
    summary = nl.join(data.draw(st.lists(line, max_size=25)))
    entries = parse(summary, schema)
    keep = data.draw(st.sets(st.sampled_from(range(len(entries)))) if entries else st.just(set()))
    out = prune(summary, keep, schema)
    assert [(e.section, e.text) for e in parse(out, schema)] == [(e.section, e.text) for e in entries
                                                                 if e.position in keep]
    assert all(summary[e.start:e.end] == e.text for e in entries)
    # delete-only: the output is the input with whole entry ranges cut out, in order
    rest = iter(summary)
    assert all(ch in rest for ch in out)
    assert prune(summary, range(len(entries)), schema) == summary
