"""The labeling notebook in a real browser: JupyterLab on 127.0.0.1 with a token, headless Debian Chromium
driven by Playwright in a 1400x900 window. Labels 6 items by clicking (support) and 3 by keyboard (correct),
checks the labels on disk, that the question and the buttons are inside the window for the first item, after
each click and for the sample's longest item, and that the key box is emptied; restarts the kernel and checks
the widget resumes at the first unlabeled item; then adjudicates a disagreement in the same widget. JupyterLab's
news prompt is turned off through its settings, as a user would. Screenshots go to build/screenshots/. Outside CI
the test skips when no Chromium is found; under CI=true that fails."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import system_tool

pytestmark = [pytest.mark.slow, pytest.mark.extra]  # a live JupyterLab in Chromium: CI's extras tier

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "build" / "screenshots"
TOKEN = "wb-browser-test-token"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
SUPPORT_CLICKS = ["supported", "unsupported", "supported", "unsure", "unsupported"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


WIDTH, HEIGHT = 1400, 900
LONGEST = "e7"


def _items() -> list[dict[str, object]]:
    """Ten items; odd ones carry a long evidence passage (the item is taller than the window without a scroll box),
    e7 the longest: a long entry and three long passages."""
    items = []
    for k in range(1, 11):
        iid = f"INV-{6230 + k}"
        items.append({
            "item_id": f"e{k}", "text": f"- Pay {iid} ($600.00) next; <b>not bold</b>", "section": "Decisions",
            "task": "Settle every open invoice for client group G001.",
            "previous_summary": "## Decisions\n- Paid INV-1000 ($12.00).",
            "evidence": [f"{iid}: amount $600.00, status open, not disputed. " * (60 if k % 2 else 2)],
            "evidence_sources": ["step 3 · tool get_invoice · output"], "scenario_id": f"s0{k % 3}",
            "evaluation": [{"name": "Evaluation checks of the task", "text": "- No report is filed."}]})
    long = items[6]
    long["text"] = f"- {'Pay every open invoice of G001 that is not disputed and under the limit; ' * 12}"
    long["evidence"] = [f"INV-{6240 + j}: amount $75.00, status open. " * 90 for j in range(3)]
    long["evidence_sources"] = [f"step {3 + j} · tool get_invoice · output" for j in range(3)]
    assert max(items, key=lambda i: len(json.dumps(i)))["item_id"] == LONGEST
    return items


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """JupyterLab serving a project copy with the labeling notebook (two parameter sets) and a sample."""
    import nbformat

    from workbench.notebooks._runner import inject_parameters
    from workbench._util.atomic import write_jsonl

    root = tmp_path_factory.mktemp("lab")
    (root / "notebooks").mkdir()
    (root / "data").mkdir()  # a project: notebooks/ and data/
    (root / "annotations" / "samples").mkdir(parents=True)
    write_jsonl(_items(), root / "annotations" / "samples" / "s.jsonl")
    for name, params in (("support", {"FIELD": "support"}), ("correct", {"FIELD": "correct"}),
                         ("adjudicate", {"FIELD": "support", "MODE": "adjudicate", "ANNOTATOR": "carol"})):
        nb = nbformat.read(ROOT / "notebooks" / "labeling.ipynb", as_version=4)
        inject_parameters(nb, {"ANNOTATOR": "alice", "ROUND": 1, "SAMPLE": "annotations/samples/s.jsonl",
                               "STORE": "annotations", **params})
        nbformat.write(nb, root / "notebooks" / f"{name}.ipynb")
    # JupyterLab's "get notified about official Jupyter news?" prompt off, through the user settings it reads
    settings = root / ".jupyter" / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false",
                                                                           "checkForUpdates": False}))
    port = _free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(root / ".jupyter"), "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(root / ".jupyter" / "lab" / "user-settings"), "PYTHONPATH": str(ROOT)}
    log = open(root / "lab.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
                             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
                             f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}",
                             "--ServerApp.port_retries=0", "--LabApp.expose_app_in_browser=True"],
                            cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not start:\n{(root / 'lab.log').read_text()[-3000:]}")
            time.sleep(0.3)
        yield url, root
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _open(page: object, url: str, name: str) -> None:
    page.goto(f"{url}/lab/tree/notebooks/{name}?token={TOKEN}")  # type: ignore[attr-defined]
    _wait_idle(page, name)


def _wait_idle(page: object, name: str) -> None:
    """Until the notebook ``name`` is the current tab, shows its cells, and its own kernel is idle (the status bar
    and a selector may find another tab's)."""
    page.wait_for_function(  # type: ignore[attr-defined]
        """name => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
                     const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
                     return w && w.title.label === name && w.content && w.content.widgets.length >= 4
                            && k && k.status === 'idle'; }""", arg=name, timeout=60_000)


def _menu(page: object, menu: str, item: str) -> None:
    page.get_by_role("menuitem", name=menu, exact=True).click()  # type: ignore[attr-defined]
    page.get_by_text(item, exact=True).click()  # type: ignore[attr-defined]


def _disk(root: Path, field: str) -> dict[str, str]:
    latest: dict[str, str] = {}
    for line in (root / "annotations" / "labels" / "alice.round1.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["field"] == field:
            latest[rec["item_id"]] = rec["value"]
    return latest


def _in_window(page: object, what: str) -> None:
    """The question (with its definitions) and every value button lie wholly inside the 1400x900 window, and no
    news prompt covers them."""
    question = page.locator(".wb-question").first  # type: ignore[attr-defined]
    buttons = page.locator(".wb-labeler .widget-button")  # type: ignore[attr-defined]
    boxes = [("question", question.bounding_box())] + [
        (buttons.nth(i).inner_text(), buttons.nth(i).bounding_box()) for i in range(buttons.count())]
    for name, box in boxes:
        assert box is not None, f"{what}: {name} not shown"
        assert box["y"] >= 0 and box["y"] + box["height"] <= HEIGHT and box["x"] + box["width"] <= WIDTH, \
            f"{what}: {name} outside the {WIDTH}x{HEIGHT} window: {box}"
    assert page.get_by_text("official Jupyter news").count() == 0, "the news prompt is on screen"  # type: ignore[attr-defined]


def _key_box_text(page: object) -> str:
    """What the key box shows (the kernel's clearing marker is zero-width)."""
    value = page.locator(".wb-keys input").first.input_value()  # type: ignore[attr-defined]
    return str(value).strip("\u200b\u200c\u2060")


def test_label_in_jupyterlab_by_click_and_keyboard_then_resume_and_adjudicate(lab: tuple[str, Path]) -> None:
    from playwright.sync_api import expect, sync_playwright

    from workbench.annotate import AnnotationStore
    from workbench.cli.main import main

    expect.set_options(timeout=60_000)
    chromium = system_tool("chromium", "chromium-browser", install="chromium")
    url, root = lab
    SHOTS.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        page.set_default_timeout(60_000)
        try:
            _open(page, url, "support.ipynb")
            _menu(page, "Run", "Run All Cells")
            header = page.locator(".widget-html-content b", has_text="annotator alice · round 1 · field support")
            expect(header).to_contain_text("1 of 10 · 0 labeled · 0 skipped")
            _in_window(page, "first item")
            expect(page.locator(".wb-question").first).to_contain_text("unsupported: the entry only plans")
            page.screenshot(path=str(SHOTS / "labeling_1_first_item.png"))
            status = page.locator(".widget-html-content", has_text="saved e")
            for k, value in enumerate(SUPPORT_CLICKS, start=1):
                page.get_by_role("button", name=f"{value} [{FIELD_KEYS[value]}]", exact=True).click()
                expect(status).to_contain_text(f"saved e{k}: support = {value}")
                expect(header).to_contain_text(f"{k + 1} of 10 · {k} labeled")
                item = page.locator(".wb-item").first
                expect(item).to_contain_text(f"Item e{k + 1}")
                _in_window(page, f"after click {k}")
                focused = page.evaluate("document.activeElement && document.activeElement.placeholder")
                assert str(focused).startswith("type here"), f"focus stayed on {focused!r}"
                if k == 1:
                    page.screenshot(path=str(SHOTS / "labeling_2_after_click.png"))
            expect(page.locator(".wb-item").first).to_contain_text("from step 3 · tool get_invoice · output")
            # identifiers and amounts never break inside, whatever JupyterLab's stylesheet says
            split = page.evaluate("""() => [...document.querySelectorAll('.wb-item span')]
                .filter(s => s.getClientRects().length > 1).map(s => s.textContent)""")
            assert split == [], f"tokens broken across lines: {split}"
            assert page.evaluate("getComputedStyle(document.querySelector('.wb-item pre')).wordBreak") == "normal"
            assert "<b>not bold</b>" in page.locator(".wb-entry pre").first.inner_text()  # escaped, shown as text
            # e6, then the longest item: it scrolls in its own box, the question and buttons stay in the window
            page.get_by_role("button", name="supported [1]", exact=True).click()
            expect(page.locator(".wb-item").first).to_contain_text(f"Item {LONGEST}")
            _in_window(page, "the longest item")
            page.screenshot(path=str(SHOTS / "labeling_3_long_item.png"))
            assert _disk(root, "support") == {**{f"e{k}": v for k, v in enumerate(SUPPORT_CLICKS, start=1)},
                                              "e6": "supported"}

            # the correctness round, by keyboard, typed fast (5 ms apart); the key box is emptied
            _open(page, url, "correct.ipynb")
            _menu(page, "Run", "Run All Cells")
            cheader = page.locator(".widget-html-content b", has_text="field correct")
            expect(cheader).to_contain_text("1 of 10 · 0 labeled")
            expect(page.locator(".wb-material").first).to_contain_text("No report is filed.")
            keys = page.get_by_placeholder("type here: 1/2/3 label, u undo, s skip").first
            keys.click()
            page.keyboard.type("123", delay=5)
            expect(cheader).to_contain_text("4 of 10 · 3 labeled")
            page.keyboard.type("s", delay=200)  # one key more, at a person's pace: the box ends empty
            expect(cheader).to_contain_text("1 skipped")
            deadline = time.monotonic() + 10
            while _key_box_text(page) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert _key_box_text(page) == "", f"the key box keeps {_key_box_text(page)!r}"
            page.screenshot(path=str(SHOTS / "labeling_4_keyboard_correct.png"))
            assert _disk(root, "correct") == {"e1": "correct", "e2": "incorrect", "e3": "unsure"}

            # restart the support notebook's kernel and run again: it resumes at e7, the first unlabeled item
            _open(page, url, "support.ipynb")
            _menu(page, "Kernel", "Restart Kernel and Run All Cells…")
            page.locator(".jp-Dialog .jp-mod-accept", has_text="Restart").click()
            _wait_idle(page, "support.ipynb")
            header = page.locator(".widget-html-content b", has_text="field support")
            expect(page.locator(".widget-html-content", has_text="saved e5")).to_have_count(0)
            expect(header).to_contain_text("7 of 10 · 6 labeled · 0 skipped")
            expect(page.locator(".widget-html-content", has_text="annotator alice")).to_contain_text("not labeled yet")
            expect(page.locator(".wb-item").first).to_contain_text(f"Item {LONGEST}")
            page.screenshot(path=str(SHOTS / "labeling_5_resumed.png"))

            # a second annotator disagrees on e1 and e2; agree writes the file; carol decides in the same widget
            store = AnnotationStore(root / "annotations")
            for k, value in enumerate(["unsupported", "unsure", "supported", "unsure", "unsupported", "supported"], 1):
                store.add(item_id=f"e{k}", annotator="bob", round=1, field="support", value=value,
                          note="step 3 shows the invoice open" if k == 1 else None)
            assert main(["agree", str(root / "annotations"), "--n-boot", "50"]) == 0
            _open(page, url, "adjudicate.ipynb")
            _menu(page, "Run", "Run All Cells")
            aheader = page.locator(".widget-html-content b", has_text="adjudicator carol · field support")
            expect(aheader).to_contain_text("1 of 2 · 0 decided")
            expect(page.locator(".wb-labels").first).to_contain_text("bob, round 1: unsupported · note: step 3 "
                                                                     "shows the invoice open")
            _in_window(page, "adjudication")
            page.screenshot(path=str(SHOTS / "labeling_6_adjudication.png"))
            page.get_by_role("button", name="unsupported [2]", exact=True).click()
            expect(aheader).to_contain_text("2 of 2 · 1 decided")
            decided = [json.loads(x) for x in (root / "annotations" / "adjudication.jsonl").read_text().splitlines()]
            assert [(r["item_id"], r["value"], r.get("decided_by")) for r in decided] == [
                ("e1", "unsupported", "carol"), ("e2", None, None)]
        except Exception:
            page.screenshot(path=str(SHOTS / "labeling_failure.png"))
            raise
        finally:
            browser.close()
    print(f"browser test: {time.monotonic() - started:.1f} s, screenshots in {SHOTS}")


FIELD_KEYS = {"supported": "1", "unsupported": "2", "unsure": "3"}
