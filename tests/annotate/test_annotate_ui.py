"""The labeling interfaces: one item view (checked against PROTOCOL.md's words), the widget and the terminal
labeler writing through the store, resuming, keeping notes, escaping, paging to the end of long text."""

from __future__ import annotations

import io as stdio
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from workbench.annotate import AnnotationStore, label_widget, render_item_html, terminal_label
from workbench.annotate._evaluation import NO_MATERIAL
from workbench.annotate import QUESTIONS, item_view

XSS = "<img src=x onerror=alert(1)>"
ROOT = Path(__file__).resolve().parents[2]
LONG = " ".join(f"w{k:04d}" for k in range(399)) + " DECIDING-LINE-INV-4242"  # 2,000+ characters, the end decides


class _Page(HTMLParser):
    """Tags and text of an HTML fragment, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs = getattr(self, "attrs", []) + attrs

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def _shown(html: str) -> str:
    """The text a browser shows for an HTML fragment."""
    return "".join(_parse(html).text)


def _item(k: int = 1, **extra: object) -> dict[str, object]:
    return {"item_id": f"e{k}", "text": f"- Paid INV-{k:04d}", "section": "Decisions", "task": "Settle G1.",
            "previous_summary": "## Decisions\n- Paid INV-0007 ($600.00).", "evidence": [f"INV-{k:04d}: $1.00"],
            "evidence_sources": ["step 3, Read"], **extra}


def _protocol_quotes() -> str:
    """PROTOCOL.md's block quotes, joined into running text (the questions as the protocol words them)."""
    text = (ROOT / "annotations" / "PROTOCOL.md").read_text()
    return " ".join(" ".join(line[1:].strip() for line in block.splitlines())
                    for block in re.findall(r"(?m)(?:^>.*\n)+", text))


def test_render_item_html_escapes_everything() -> None:
    item = {"item_id": "<b>id</b>", "text": XSS, "section": "<i>Decisions</i>", "task": "<script>x()</script>",
            "previous_summary": '" onmouseover="x', "evidence": [XSS, "a & b"], "evidence_sources": ["<u>s</u>"]}
    page = _parse(render_item_html(item))
    assert set(page.tags) <= {"div", "b", "code", "pre", "span"}  # no tag came from the item
    assert all(name in ("class", "style") for name, _ in page.attrs)  # and no attribute (onmouseover, onerror)
    text = "".join(page.text)
    for raw in (XSS, "<b>id</b>", "<script>x()</script>", '" onmouseover="x', "a & b", "<u>s</u>", "<i>Decisions</i>"):
        assert raw in text  # shown as text, character for character


def test_item_view_shows_everything_and_the_protocols_questions() -> None:
    item = _item(evidence=["short", LONG], evidence_sources=["step 3, Read", "retained turn"],
                 evaluation=[{"name": "Evaluation checks of the task", "text": "- No report is filed."}])
    support = item_view(item, "support")
    text = "\n".join(f"{b.title}\n{b.text}" for b in support)
    assert "section: Decisions" in text and "Settle G1." in text and "Paid INV-0007 ($600.00)" in text
    assert LONG in text  # the whole passage, no cut
    assert "Evidence [2 of 2] from retained turn" in text and "from step 3, Read" in text
    assert "No report is filed" not in text  # support is labeled blind: no evaluation material
    quotes = _protocol_quotes()
    assert QUESTIONS["support"] in quotes and QUESTIONS["correct"] in quotes
    assert support[-1].text.startswith(QUESTIONS["support"]) and "\nunsupported: the entry only plans" in support[-1].text
    protocol = " ".join((Path(__file__).resolve().parents[2] / "annotations" / "PROTOCOL.md").read_text().split())
    for value in ("supported", "unsupported", "unsure"):  # each definition shown says what the protocol says
        assert f"`{value}`" in protocol
    correct = item_view(item, "correct")
    assert any(b.title == "Evaluation material: Evaluation checks of the task" and "No report" in b.text
               for b in correct) and correct[-1].text.startswith(QUESTIONS["correct"])
    bare = item_view(_item(), "correct")
    assert any(b.text == NO_MATERIAL for b in bare) and "cannot be labeled" in NO_MATERIAL


def test_identifiers_never_break_inside_but_long_tokens_may() -> None:
    html = render_item_html(_item(text="Pay INV-6237 $600.00 now " + "x" * 80))
    assert '<span style="white-space: nowrap">INV-6237</span>' in html
    assert '<span style="white-space: nowrap">$600.00</span>' in html
    assert "word-break: normal" in html and "overflow-wrap: anywhere" in html  # JupyterLab's break-all overridden
    assert "nowrap\">" + "x" * 80 not in html


def _widget(tmp_path: Path, n: int = 3, field: str = "support") -> tuple[AnnotationStore, object]:
    store = AnnotationStore(tmp_path)
    return store, label_widget([_item(k) for k in range(1, n + 1)], store, "carol", 2, field)


def _parts(box: object) -> dict[str, object]:
    header, question, buttons, inputs, status, frame = box.children  # type: ignore[attr-defined]
    return {"header": header, "question": question, "buttons": {b.description.split(" ")[0]: b for b in buttons.children},
            "keys": inputs.children[0], "note": inputs.children[1], "status": status, "frame": frame}


def test_widget_shows_who_what_where_confirms_saves_and_shows_existing_labels(tmp_path: Path) -> None:
    store, box = _widget(tmp_path)
    p = _parts(box)
    assert "annotator carol · round 2 · field support · 1 of 3 · 0 labeled · 0 skipped" in p["header"].value
    assert "not labeled yet" in p["header"].value
    first_view = p["frame"].children[0]
    assert "Paid INV-0001" in _shown(first_view.value)
    p["buttons"]["unsupported"].click()
    assert store.labels()["value"].to_list() == ["unsupported"]
    assert re.search(r"saved e1: support = <b>unsupported</b> at \d\d:\d\d:\d\d", p["status"].value)
    assert p["frame"].children[0] is not first_view and "Paid INV-0002" in _shown(p["frame"].children[0].value)
    assert "2 of 3 · 1 labeled" in p["header"].value
    p["buttons"]["undo"].click()  # issue 43: undo retracts the label, and the header and status say so
    assert "Paid INV-0001" in _shown(p["frame"].children[0].value) and "not labeled yet" in p["header"].value
    assert "undone: the support label &#x27;unsupported&#x27; of e1 is retracted" in p["status"].value, p["status"].value
    assert "1 of 3 · 0 labeled" in p["header"].value and not store.labels().height
    assert store.history()["value"].to_list() == ["unsupported", None]


def test_widget_keys_typed_together_all_count(tmp_path: Path) -> None:
    store, box = _widget(tmp_path)
    keys = _parts(box)["keys"]
    keys.value = "12"  # two keys arrived in one update
    keys.value = "123"
    assert store.labels().sort("item_id")["value"].to_list() == ["supported", "unsupported", "unsure"]
    assert "All items labeled (3 of 3 for field support)." in _parts(box)["frame"].children[0].value


def test_widget_key_box_is_cleared_and_a_key_from_before_the_clearing_counts_once(tmp_path: Path) -> None:
    """The browser sends the whole box each time; a value typed before the browser saw the kernel clear the box
    still holds the keys acted on already. Sequence by hand: "1" (e1 supported; box cleared), then the browser's
    stale "12" (only the 2 is new: e2 unsupported), then "3" typed into the cleared box (e3 unsure)."""
    store, box = _widget(tmp_path, n=4)
    keys = _parts(box)["keys"]
    keys.value = "1"
    cleared = keys.value
    assert cleared.strip("\u200b\u200c\u2060") == ""  # nothing visible is left in the box
    keys.value = "12"  # stale: typed before the clearing arrived
    keys.value = keys.value + "3"  # typed into the box as the kernel left it
    assert keys.value.strip("\u200b\u200c\u2060") == ""
    history = store.history().sort("item_id")  # every line ever written: a key acted on twice would show
    assert history["item_id"].to_list() == ["e1", "e2", "e3"]
    assert history["value"].to_list() == ["supported", "unsupported", "unsure"]
    assert box.session.current["item_id"] == "e4"


def test_widget_resumes_at_first_unlabeled_and_skips_labeled_ones(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path)
    store.add(item_id="e2", annotator="carol", round=2, field="support", value="supported")
    box = label_widget([_item(k) for k in range(1, 5)], store, "carol", 2, "support")
    assert box.session.index == 0  # e1 has no label
    _parts(box)["buttons"]["supported"].click()
    assert box.session.current["item_id"] == "e3"  # e2 is labeled already: not walked into


def test_all_items_labeled_only_when_true(tmp_path: Path) -> None:
    store, box = _widget(tmp_path)
    p = _parts(box)
    for _ in range(3):
        p["buttons"]["skip"].click()
    view = p["frame"].children[0].value
    assert "All items labeled" not in view and "3 of 3 item(s) still have no support label" in view
    assert "0 labeled · 3 skipped" in p["header"].value and not store.labels().height
    p["buttons"]["first"].click()
    assert box.session.current["item_id"] == "e1"


def test_widget_note_survives_a_skip_and_is_saved_with_the_label(tmp_path: Path) -> None:
    store, box = _widget(tmp_path)
    p = _parts(box)
    p["note"].value = "evidence cut? check step 3"
    p["buttons"]["skip"].click()
    assert store.notes("carol", 2, "support") == {"e1": "evidence cut? check step 3"}
    p["buttons"]["first"].click()
    assert p["note"].value == "evidence cut? check step 3"  # shown again
    p["buttons"]["supported"].click()
    assert store.labels()["note"].to_list() == ["evidence cut? check step 3"]


def test_correct_field_shows_the_evaluation_material(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path)
    items = [_item(1, evaluation=[{"name": "gt_actions", "text": '[{"name": "book"}]'}]), _item(2)]
    box = label_widget(items, store, "carol", 1, "correct")
    view = _parts(box)["frame"].children[0].value
    assert "Evaluation material: gt_actions" in _shown(view) and '[{"name": "book"}]' in _shown(view)
    question = _shown(_parts(box)["question"].value)  # above the item, beside the buttons, with the definitions
    assert QUESTIONS["correct"] in question and "incorrect: following the entry would violate" in question
    assert QUESTIONS["correct"] not in _shown(view)  # not a second time at the bottom of the item
    _parts(box)["buttons"]["incorrect"].click()
    assert "cannot be labeled for this item" in _shown(_parts(box)["frame"].children[0].value)


# ---------------------------------------------------------------------------
# terminal


def _pages(out: str) -> str:
    """What a person read through the pager, wrapped lines joined back (the status and prompt lines dropped)."""
    body, in_header = [], False
    for ln in out.splitlines():
        in_header = in_header or ln.startswith("[annotator")
        if not in_header and not ln.startswith("lines ") and "q quit >" not in ln:
            body.append(ln)
        in_header = in_header and not ln.endswith("]")
    return "".join(body)


def test_terminal_pages_a_2000_character_passage_to_its_end(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path)
    out = stdio.StringIO()
    answers = "\n" * 12 + "1\n"  # Enter until the end of the item, then a label
    terminal_label([_item(1, evidence=[LONG])], store, "dan", 1, stdin=stdio.StringIO(answers), stdout=out,
                   size=(80, 24))
    text = out.getvalue()
    assert max(len(ln) for ln in text.splitlines()) <= 80
    assert "".join(LONG.split()) in "".join(_pages(text).split())  # every character of it, in order
    assert "lines 1-" in text and "MORE BELOW: press Enter" in text and "end of item" in text
    assert "DECIDING-LINE-INV-4242" in text  # the identifier is not broken at its hyphens
    assert store.labels()["value"].to_list() == ["supported"]


def test_terminal_shows_question_previous_summary_and_escapes_ids(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path)
    items = [_item(1, item_id="e\x1b[2J1", section="\x1b]0;pwned\x07Decisions"), _item(2)]
    out = stdio.StringIO()
    n = terminal_label(items, store, "dan", 1, stdin=stdio.StringIO("\n\n2\ns\n"), stdout=out, size=(80, 60))
    text = out.getvalue()
    assert n == 1 and "\x1b" not in text and "\x07" not in text and "e\\x1b[2J1" in text
    assert "== Previous summary ==" in text and "Paid INV-0007 ($600.00)" in text
    assert " ".join(QUESTIONS["support"].split()) in " ".join(_pages(text).split())
    assert "annotator dan · round 1 · field support" in text


def test_terminal_note_is_kept_through_skip_and_undo(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path)
    items = [_item(1), _item(2)]
    answers = "n\nsee step 3\ns\nu\n2\n"  # note, skip (the old loss), back, label
    terminal_label(items, store, "dan", 1, stdin=stdio.StringIO(answers), stdout=stdio.StringIO(), size=(80, 60))
    assert store.labels().select("item_id", "value", "note").rows() == [("e1", "unsupported", "see step 3")]
    assert store.notes("dan", 1, "support") == {"e1": "see step 3"}


def test_terminal_ctrl_c_stops_at_once_and_keeps_labels(tmp_path: Path) -> None:
    class Interrupting(stdio.StringIO):
        def readline(self, *args: object) -> str:
            line = super().readline()
            if not line:
                raise KeyboardInterrupt
            return line

    store = AnnotationStore(tmp_path)
    out = stdio.StringIO()
    with pytest.raises(KeyboardInterrupt):
        terminal_label([_item(1), _item(2)], store, "dan", 1, stdin=Interrupting("1\n"), stdout=out, size=(80, 60))
    assert store.labels()["item_id"].to_list() == ["e1"]
    assert "interrupted: 1 label(s) written this session, every one saved" in out.getvalue()


def test_sample_file_round_trip_keeps_evaluation_material(tmp_path: Path) -> None:
    from workbench.annotate import load_sample
    from workbench._util.atomic import write_jsonl

    item = _item(1, evaluation=[{"name": "gt_outputs", "text": "[\"1\"]"}], scenario_id="s01")
    write_jsonl([item], tmp_path / "s.jsonl")
    assert load_sample(tmp_path / "s.jsonl") == [json.loads(json.dumps(item))]


def test_control_and_bidi_characters_are_shown_not_obeyed_in_the_widget() -> None:
    """U+202E made 'INV-\u202e4301' display as 'INV-1034' to an annotator; ESC and U+2066 reached the page raw."""
    item = {"item_id": "e\u20661", "text": "- Pay INV-\u202e4301 \x1b[31mnow", "section": "Decisions",
            "evidence": ["INV-4301: open"], "evidence_sources": ["step 3, Read"]}
    page = render_item_html(item)
    assert "\u202e" not in page and "\x1b" not in page and "\u2066" not in page
    text = "".join(_parse(page).text)
    assert "INV-\\u202e4301" in text and "\\x1b[31mnow" in text and "e\\u20661" in text
