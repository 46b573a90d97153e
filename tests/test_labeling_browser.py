"""The labeling notebook in a real browser: JupyterLab on 127.0.0.1 with a token, headless Debian Chromium
driven by Playwright. Labels 5 items by clicking (support) and 3 by keyboard (correct), checks the labels on
disk, restarts the kernel and checks the widget resumes at the first unlabeled item. Screenshots go to
build/screenshots/. Outside CI the test skips when no Chromium is found; under CI=true that fails."""

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

from .conftest import system_tool

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "build" / "screenshots"
TOKEN = "wb-browser-test-token"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
SUPPORT_CLICKS = ["supported", "unsupported", "supported", "unsure", "unsupported"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _items() -> list[dict[str, object]]:
    """Ten items; odd ones carry a long evidence passage (the item is taller than the window without a scroll box)."""
    items = []
    for k in range(1, 11):
        iid = f"INV-{6230 + k}"
        items.append({
            "item_id": f"e{k}", "text": f"- Pay {iid} ($600.00) next; <b>not bold</b>", "section": "Decisions",
            "task": "Settle every open invoice for client group G001.",
            "previous_summary": "## Decisions\n- Paid INV-1000 ($12.00).",
            "evidence": [f"{iid}: amount $600.00, status open, not disputed. " * (60 if k % 2 else 2)],
            "evidence_sources": ["step 3, Read"], "scenario_id": f"s0{k % 3}",
            "evaluation": [{"name": "Evaluation checks of the task", "text": "- No report is filed."}]})
    return items


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """JupyterLab serving a project copy with the labeling notebook (two parameter sets) and a sample."""
    import nbformat

    from workbench.notebooks import inject_parameters
    from workbench.atomic import write_jsonl

    root = tmp_path_factory.mktemp("lab")
    (root / "notebooks").mkdir()
    (root / "annotations" / "samples").mkdir(parents=True)
    write_jsonl(_items(), root / "annotations" / "samples" / "s.jsonl")
    for field in ("support", "correct"):
        nb = nbformat.read(ROOT / "notebooks" / "labeling.ipynb", as_version=4)
        inject_parameters(nb, {"ANNOTATOR": "alice", "ROUND": 1, "FIELD": field, "SAMPLE": "annotations/samples/s.jsonl"})
        nbformat.write(nb, root / "notebooks" / f"{field}.ipynb")
    port = _free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(root / ".jupyter"), "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
           "PYTHONPATH": str(ROOT)}
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


def test_label_in_jupyterlab_by_click_and_keyboard_then_resume(lab: tuple[str, Path]) -> None:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=60_000)
    chromium = system_tool("chromium", "chromium-browser", install="chromium")
    url, root = lab
    SHOTS.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        try:
            _open(page, url, "support.ipynb")
            _menu(page, "Run", "Run All Cells")
            header = page.locator(".widget-html-content b", has_text="annotator alice · round 1 · field support")
            expect(header).to_contain_text("1 of 10 · 0 labeled · 0 skipped")
            page.screenshot(path=str(SHOTS / "labeling_1_first_item.png"))
            status = page.locator(".widget-html-content", has_text="saved e")
            for k, value in enumerate(SUPPORT_CLICKS, start=1):
                page.get_by_role("button", name=f"{value} [{FIELD_KEYS[value]}]", exact=True).click()
                expect(status).to_contain_text(f"saved e{k}: support = {value}")
                expect(header).to_contain_text(f"{k + 1} of 10 · {k} labeled")
                item = page.locator(".wb-item").first
                expect(item).to_contain_text(f"Item e{k + 1}")
                box = item.bounding_box()
                widget = page.locator(".jp-OutputArea-output .widget-vbox").first.bounding_box()
                assert box is not None and widget is not None
                assert 0 <= box["y"] < 1000 - 200, f"item e{k + 1} starts outside the window: {box}"
                assert widget["height"] <= 1000, f"the widget is taller than the window: {widget}"
                focused = page.evaluate("document.activeElement && document.activeElement.placeholder")
                assert str(focused).startswith("type here"), f"focus stayed on {focused!r}"
                if k == 1:
                    page.screenshot(path=str(SHOTS / "labeling_2_after_click.png"))
            # identifiers and amounts never break inside, whatever JupyterLab's stylesheet says
            split = page.evaluate("""() => [...document.querySelectorAll('.wb-item span')]
                .filter(s => s.getClientRects().length > 1).map(s => s.textContent)""")
            assert split == [], f"tokens broken across lines: {split}"
            assert page.evaluate("getComputedStyle(document.querySelector('.wb-item pre')).wordBreak") == "normal"
            assert "<b>not bold</b>" in page.locator(".wb-entry pre").first.inner_text()  # escaped, shown as text
            page.screenshot(path=str(SHOTS / "labeling_3_five_clicked.png"))
            assert _disk(root, "support") == {f"e{k}": v for k, v in enumerate(SUPPORT_CLICKS, start=1)}

            # the correctness round, by keyboard, typed fast (5 ms apart)
            _open(page, url, "correct.ipynb")
            _menu(page, "Run", "Run All Cells")
            cheader = page.locator(".widget-html-content b", has_text="field correct")
            expect(cheader).to_contain_text("1 of 10 · 0 labeled")
            expect(page.locator(".wb-material").first).to_contain_text("No report is filed.")
            keys = page.get_by_placeholder("type here: 1/2/3 label, u undo, s skip").first
            keys.click()
            page.keyboard.type("123", delay=5)
            expect(cheader).to_contain_text("4 of 10 · 3 labeled")
            page.screenshot(path=str(SHOTS / "labeling_4_keyboard_correct.png"))
            assert _disk(root, "correct") == {"e1": "correct", "e2": "incorrect", "e3": "unsure"}

            # restart the support notebook's kernel and run again: it resumes at e6, the first unlabeled item
            _open(page, url, "support.ipynb")
            _menu(page, "Kernel", "Restart Kernel and Run All Cells…")
            page.locator(".jp-Dialog .jp-mod-accept", has_text="Restart").click()
            _wait_idle(page, "support.ipynb")
            header = page.locator(".widget-html-content b", has_text="field support")
            expect(page.locator(".widget-html-content", has_text="saved e5")).to_have_count(0)
            expect(header).to_contain_text("6 of 10 · 5 labeled · 0 skipped")
            expect(page.locator(".widget-html-content", has_text="annotator alice")).to_contain_text("not labeled yet")
            expect(page.locator(".wb-item").first).to_contain_text("Item e6")
            page.locator(".widget-html-content", has_text="annotator alice").first.scroll_into_view_if_needed()
            page.screenshot(path=str(SHOTS / "labeling_5_resumed.png"))
        except Exception:
            page.screenshot(path=str(SHOTS / "labeling_failure.png"))
            raise
        finally:
            browser.close()
    print(f"browser test: {time.monotonic() - started:.1f} s, screenshots in {SHOTS}")


FIELD_KEYS = {"supported": "1", "unsupported": "2", "unsure": "3"}
