"""The labeling interfaces: escaped HTML, the widget and the terminal labeler writing through the store."""

from __future__ import annotations

import io as stdio
from pathlib import Path

from workbench.annotate import (
    AnnotationStore,
    label_widget,
    render_item_html,
    terminal_label,
)

XSS = "<img src=x onerror=alert(1)>"


def test_render_item_html_escapes_everything() -> None:
    item = {"item_id": "<b>id</b>", "text": XSS, "section": "Decisions", "task": "<script>x()</script>",
            "previous_summary": '" onmouseover="x', "evidence": [XSS, "a & b"]}
    out = render_item_html(item)
    assert "<img" not in out and "<script" not in out and "<b>id</b>" not in out
    assert "&lt;img src=x onerror=alert(1)&gt;" in out and "a &amp; b" in out and "&quot; onmouseover=&quot;x" in out


def test_widget_shows_escaped_text_and_labels_through_the_store(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path)
    items = [{"item_id": "e1", "text": XSS, "section": "Decisions", "task": "t", "evidence": []},
             {"item_id": "e2", "text": "- Paid INV-1", "section": "Decisions", "task": "t", "evidence": []}]
    box = label_widget(items, store, "carol", 2)
    html_view = box.children[1]
    assert "&lt;img src=x" in html_view.value and "<img" not in html_view.value
    assert "1 of 2" in box.children[0].value
    buttons = box.children[3].children
    buttons[1].click()  # "unsupported [2]"
    assert store.labels()["value"].to_list() == ["unsupported"]
    box.children[4].value = "u"  # key capture: undo
    assert box.session.index == 0
    box.children[4].value = "1"
    assert store.labels()["value"].to_list() == ["supported"]
    assert "Paid INV-1" in html_view.value


def test_terminal_labeler_and_control_characters(tmp_path: Path) -> None:
    store = AnnotationStore(tmp_path)
    items = [{"item_id": "e1", "text": "\x1b[2Jcleared?", "task": "t"}, {"item_id": "e2", "text": "x", "task": "t"}]
    out = stdio.StringIO()
    n = terminal_label(items, store, "dan", 1, stdin=stdio.StringIO("2\ns\n"), stdout=out)
    assert n == 1 and "\\x1b[2Jcleared?" in out.getvalue() and "\x1b" not in out.getvalue()
