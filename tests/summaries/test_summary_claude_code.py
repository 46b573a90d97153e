"""Claude Code compaction summaries in every shape seen in public repositories (tests/fixtures/claude_summaries/,
each shape's sources in its README): titles in five forms and any case, the Analysis part, sub-items and
sub-headings inside sections, fences (nested, glued, unclosed), CRLF, and the client's header and trailer.

Every expectation here was read off the fixture text by hand, not produced by the parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.summaries import detect_schema, parse, prune
from workbench.summaries._grammar import CLAUDE_SECTIONS

FIXTURES = Path(__file__).parents[1] / "fixtures" / "claude_summaries"
ALL = sorted(FIXTURES.glob("*.txt"))
ROLES = {"Primary Request and Intent": "constraints", "Key Technical Concepts": "history",
         "Files and Code Sections": "identifiers", "Errors and fixes": "history", "Problem Solving": "history",
         "All user messages": "user_messages", "Pending Tasks": "forward", "Current Work": "history",
         "Optional Next Step": "forward"}


def read(name: str) -> str:
    return (FIXTURES / name).read_bytes().decode("utf-8")  # bytes: CRLF kept as written


def sections(text: str) -> list[str]:
    return list(dict.fromkeys(e.section for e in parse(text)))


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_every_shape_is_claude_code_and_prune_keeping_all_is_the_identity(path: Path) -> None:
    text = path.read_bytes().decode("utf-8")
    assert detect_schema(text) == "claude_code"
    entries = parse(text)
    assert entries and prune(text, range(len(entries))) == text
    assert all(text[e.start:e.end] == e.text for e in entries)
    assert all(e.role == ROLES.get(e.section, "other") for e in entries)
    # pruning every other entry leaves exactly the kept ones, byte for byte
    keep = set(range(0, len(entries), 2))
    assert [e.text for e in parse(prune(text, keep))] == [e.text for e in entries if e.position in keep]


@pytest.mark.parametrize("name", ["a_plain_titles_new_header.txt", "b_analysis_markdown_headings.txt",
                                  "c_bold_colon_inside.txt", "d_bold_colon_outside_analysis.txt"])
def test_the_nine_titles_in_each_form_are_the_nine_sections_in_order(name: str) -> None:
    assert sections(read(name)) == list(CLAUDE_SECTIONS)


def test_title_case_varies_and_maps_to_one_name() -> None:
    text = read("b_analysis_markdown_headings.txt")  # "## 4. Errors and Fixes", "## 6. All User Messages"
    assert "## 4. Errors and Fixes" in text and "## 6. All User Messages" in text
    by = {e.section: e.role for e in parse(text)}
    assert by["Errors and fixes"] == "history" and by["All user messages"] == "user_messages"


def test_the_header_and_trailer_are_the_clients_not_entries() -> None:
    text = read("a_plain_titles_new_header.txt")
    entries = parse(text)
    assert not any("being continued" in e.text or "read the full transcript" in e.text
                   or "Resume directly" in e.text for e in entries)
    assert entries[-1].text == "   Replace the inline styles, starting with `CategoryCard.tsx`."
    assert entries[-1].role == "forward"
    old = read("f_crlf_old_trailer.txt")
    assert not any("Please continue" in e.text for e in parse(old))


def test_the_analysis_is_not_entries_and_its_numbered_bold_items_are_not_sections() -> None:
    for name, notes in (("b_analysis_markdown_headings.txt", ("Initial Context", "Conversation Flow", "core/ and")),
                        ("d_bold_colon_outside_analysis.txt", ("Initial Request", "Investigation")),
                        ("e_tags_raw.txt", ("Phase 2**", "slash commands"))):
        entries = parse(read(name))
        assert not any(n in e.text or n in e.section for e in entries for n in notes), name
        assert entries[0].section == "Primary Request and Intent"


def test_sub_items_and_sub_headings_stay_inside_their_section() -> None:
    c = parse(read("c_bold_colon_inside.txt"))
    errors = [e.text for e in c if e.section == "Errors and fixes"]
    assert errors == ["   1. **Migration applied twice**:\n      - Fixed by checking `schema_migrations` first.",
                      "   2. **Wrong env var**:\n      - `NEXT_PUBLIC_URL` renamed to `ROOT_DOMAIN`."]
    b = parse(read("b_analysis_markdown_headings.txt"))
    files = [e.text.splitlines()[0] for e in b if e.section == "Files and Code Sections"]
    assert files == ["### `/data/p/core/model_loader.py`", "### `/data/p/shell/start.sh`"]
    first = next(e for e in b if e.section == "Files and Code Sections")
    assert first.text.endswith('sys.path.insert(0, str(PROJECT_ROOT / "src"))\n```')  # the fence is in its entry
    # a bold lead-in with text is an entry; numbered bold items under a section are entries of it
    assert ("Current Work", "**Last action**: restarted collection after fixing imports.") in \
        [(e.section, e.text) for e in b]
    assert [e.text for e in b if e.section == "Pending Tasks"] == ["1. **Launch collection**: on GPUs 5, 6 and 7"]


def test_text_after_a_title_on_its_line_is_an_entry_that_prunes_alone() -> None:
    text = read("d_bold_colon_outside_analysis.txt")
    entries = parse(text)
    last = entries[-1]
    assert (last.section, last.text) == ("Optional Next Step", "Rebuild and rerun `./vkcube`.")
    pruned = prune(text, range(len(entries) - 1))
    assert pruned.endswith("9. **Optional Next Step**: \n") and "Rebuild" not in pruned


def test_a_code_block_is_never_split_and_a_glued_closing_fence_closes_it() -> None:
    entries = parse(read("d_bold_colon_outside_analysis.txt"))
    files = [e.text for e in entries if e.section == "Files and Code Sections"]
    assert files == ["   - `src/virgl_resource.c`:\n     ```c\n     int fd = export_fd(res);\n"
                     "     if (fd < 0) return -1;```", "   - `src/venus/vkr_device.c`: creates the instance"]


def test_crlf_and_the_clients_full_stop_after_a_fence() -> None:
    text = read("f_crlf_old_trailer.txt")
    assert "\r\n" in text
    entries = parse(text)
    assert [e.section for e in entries] == ["Primary Request and Intent", "Key Technical Concepts",
                                            "Files and Code Sections", "Current Work"]
    assert entries[-1].text == ("   The trace shows:\r\n   ```\r\n   QuickSearchBar (61:7)\r\n   CodesPage (364:5)\r\n"
                                "   ```.")
    assert all(not e.text.endswith("\r") for e in entries)


def test_one_unclosed_fence_does_not_swallow_the_sections_after_it() -> None:
    assert sections(read("g_unclosed_fence.txt")) == ["Primary Request and Intent", "Key Technical Concepts",
                                                      "Files and Code Sections", "Pending Tasks"]


def test_a_section_the_model_named_itself_is_a_section_with_role_other() -> None:
    entries = parse(read("h_sections_renamed_by_model.txt"))
    assert [(e.section, e.role) for e in entries] == [
        ("Primary Request and Intent", "constraints"), ("Key Technical Concepts", "history"),
        ("Design Decisions", "other"), ("Pending Tasks", "forward")]
    assert entries[0].text == "The user wants a heat bath in two simulations."


def test_a_numbered_list_is_not_mistaken_for_titles() -> None:
    text = "1. Fixed the bug:\n2. Ran the tests\n"
    assert detect_schema(text) == "free_text"
    assert [e.text for e in parse(text, "claude_code")] == []  # no title: nothing is a section's entry


def test_a_trailer_sentence_quoted_inside_the_summary_is_content_and_a_wrapped_trailer_is_not() -> None:
    text = ("Summary:\n1. **All user messages**:\n   The user wrote:\n"
            "   Please continue the conversation from where we left it off, then ship it.\n\n"
            "2. **Current Work**:\n   Shipping.\n"
            "Please continue the conversation from where we left it off without asking the user any further\n"
            "questions. Continue with the last task that you were asked to work on.\n")
    entries = parse(text)
    assert [e.text for e in entries] == [
        "   The user wrote:\n   Please continue the conversation from where we left it off, then ship it.",
        "   Shipping."]
    assert prune(text, range(len(entries))) == text


def test_a_title_with_a_qualifier_opens_its_section() -> None:
    """Issue 44: `6. All user messages (most recent, verbatim):` did not open its section, so the user's messages
    became entries of Problem Solving with the wrong role."""
    entries = parse(read("i_qualified_title.txt"))
    assert sections(read("i_qualified_title.txt")) == [s for s in CLAUDE_SECTIONS if s != "Errors and fixes"]
    users = [e for e in entries if e.role == "user_messages"]
    assert [e.text for e in users] == [
        '   - "Finish the spec in docs/spec.txt; it is incomplete. Keep to the four requirements."',
        '   - "Do not invent folders that are not there."']
    assert not any("Finish the spec" in e.text for e in entries if e.section == "Problem Solving")


def test_a_tagged_fence_inside_a_fence_nests() -> None:
    """Issue 44: a ```markdown block quoting a README with a ```bash block inside: the inner opener closed the outer
    block, and the README's `# comment` lines after it became sections of their own."""
    entries = parse(read("j_nested_fences.txt"))
    assert sections(read("j_nested_fences.txt")) == ["Primary Request and Intent", "Key Technical Concepts",
                                                     "Files and Code Sections", "Problem Solving",
                                                     "All user messages", "Current Work", "Optional Next Step"]
    files = [e for e in entries if e.section == "Files and Code Sections"]
    assert len(files) == 1 and "# create a virtual environment first" in files[0].text
    assert files[0].text.rstrip().endswith("```") and "from billing import pay" in files[0].text


def test_the_clients_header_is_never_entry_text() -> None:
    """Issue 44: a short free-text summary on the header's own line was one entry that began with Claude Code's
    header sentence, which was then judged."""
    from workbench.summaries import parse as parse_any

    text = ("This session is being continued from a previous conversation that ran out of context. Summary: the "
            "user asked for a plan.")
    (entry,) = parse_any(text)
    assert entry.text == "the user asked for a plan." and text[entry.start:entry.end] == entry.text
    text = ("This session is being continued from a previous conversation that ran out of context. The "
            "conversation is summarized below:\nThe user asked for a refactor of billing.\n\nPlease continue the "
            "conversation from where we left it off without asking the user any further questions.")
    assert [e.text for e in parse_any(text)] == ["The user asked for a refactor of billing."]


def test_a_closing_fence_with_the_clients_full_stop_still_closes() -> None:
    """The nesting rule (a tagged fence opens) must not read the client's ```. as a tagged opener: the sections after
    it stay sections."""
    text = ("Summary:\n1. **Primary Request and Intent**:\n   - Print it:\n```python\nprint(1)\n```.\n"
            "2. **Key Technical Concepts**:\n   - fences\n")
    assert sections(text) == ["Primary Request and Intent", "Key Technical Concepts"]
