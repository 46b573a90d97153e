"""A real Label Studio round trip: the workbench's export into a real Label Studio server, two people's labels
through its REST API, its exports back into an annotation store, and agreement on them.

Label Studio pins heavy dependencies, so it lives in a virtual environment of its own, never in the project's::

    python3 -m venv /tmp/ls && /tmp/ls/bin/pip install 'label-studio==1.23.2'
    .venv/bin/python tools/labelstudio_roundtrip.py --label-studio /tmp/ls/bin/label-studio \\
        --fixture workbench/datasets/example_logs/labelstudio/

What it does, each step through Label Studio's own HTTP API on 127.0.0.1 (a throwaway data directory; the server
is stopped at the end):

1. a small testbed (``workbench simulate``), a sample of it (``workbench sample``) and its tasks and interface
   (``workbench labelstudio export --field support``, blind);
2. starts ``label-studio start`` and times it until ``/health`` answers;
3. signs up two people through the signup form (Label Studio 1.23 disables the legacy API token, so every call
   is made in a logged-in session with its CSRF token, as its API documentation says) and gives one of them a
   first and last name (``PATCH /api/users/ID``); the other signs up with an e-mail only, as most do;
4. creates the project with the exported XML (``POST /api/projects``: Label Studio validates the interface) and
   imports the tasks (``POST /api/projects/ID/import``);
5. each person annotates every task as the labeling interface submits it (``POST /api/tasks/ID/annotations``: a
   ``choices`` result, for some a ``textarea`` note); one person skips one task (``was_cancelled``). The values are
   drawn with a fixed seed (this checks the protocol, not people's judgment);
6. exports twice: the plain JSON export (``GET /api/projects/ID/export?exportType=JSON``: ``completed_by`` is a bare
   user id) and a snapshot export with users expanded (``POST /api/projects/ID/exports`` with
   ``serialization_options.annotations__completed_by.only_id = false``), and saves ``GET /api/users``;
7. runs ``workbench labelstudio import`` on each (the plain one with ``--annotators users.json``) and
   ``workbench agree`` on the store, and prints what each said;
8. with ``--fixture DIR``, writes what the server returned (both exports, the users, the interface and the
   tasks it was given) there, for the fast tests to read.

Also checks that a task exported with ``--predictions`` is accepted by the server with its predictions.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "roundtrip-Pa55word"


class Session:
    """One person logged in to Label Studio: a cookie jar, and the CSRF token Django wants on every write."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def csrf(self) -> str:
        return next((c.value for c in self.jar if c.name == "csrftoken"), "")

    def call(self, method: str, path: str, body: Any = None, *, form: dict[str, str] | None = None) -> Any:
        headers = {"X-CSRFToken": self.csrf(), "Referer": self.base + "/"}
        data = None
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with self.opener.open(request, timeout=120) as response:
                raw = response.read()
                kind = response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as err:
            raise SystemExit(f"{method} {path}: HTTP {err.code}: {err.read()[:400]!r}") from None
        return json.loads(raw) if "json" in kind and raw else raw

    def sign_up(self, email: str) -> None:
        self.call("GET", "/user/signup/")  # sets the csrftoken cookie
        self.call("POST", "/user/signup/", form={"email": email, "password": PASSWORD,
                                                  "csrfmiddlewaretoken": self.csrf()})
        if not any(c.name == "sessionid" for c in self.jar):
            raise SystemExit(f"signing up {email} did not log in (no session cookie)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def workbench(*args: str) -> str:
    """Run ``workbench ARGS`` as a user does; its output (stdout and stderr)."""
    done = subprocess.run([sys.executable, "-m", "workbench.cli.main", *args], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    if done.returncode:
        raise SystemExit(f"workbench {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return (done.stdout + done.stderr).strip()


def wait_for(base: str, server: subprocess.Popen[bytes], limit: float) -> float:
    start = time.monotonic()
    while time.monotonic() - start < limit:
        if server.poll() is not None:
            raise SystemExit(f"label-studio exited with {server.returncode} before it answered")
        try:
            with urllib.request.urlopen(base + "/health", timeout=5) as r:
                if r.status == 200:
                    return time.monotonic() - start
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(1)
    raise SystemExit(f"label-studio did not answer /health within {limit:.0f} s")


def annotate(session: Session, task_id: int, choice: str | None, note: str | None) -> None:
    """Submit one annotation as Label Studio's interface does: a choices result and, when given, the note's
    text area; ``choice`` None is a skip (``was_cancelled``, no result)."""
    if choice is None:
        session.call("POST", f"/api/tasks/{task_id}/annotations/", {"result": [], "was_cancelled": True})
        return
    result: list[dict[str, Any]] = [{"from_name": "support", "to_name": "entry", "type": "choices",
                                     "value": {"choices": [choice]}, "origin": "manual"}]
    if note:
        result.append({"from_name": "note", "to_name": "entry", "type": "textarea", "value": {"text": [note]},
                       "origin": "manual"})
    session.call("POST", f"/api/tasks/{task_id}/annotations/", {"result": result, "was_cancelled": False,
                                                                "lead_time": 12.5})


def snapshot_export(session: Session, project: int) -> list[dict[str, Any]]:
    """A snapshot export with users expanded and skipped annotations included."""
    made = session.call("POST", f"/api/projects/{project}/exports/", {
        "title": "roundtrip", "serialization_options": {"annotations__completed_by": {"only_id": False}},
        "annotation_filter_options": {"skipped": True}})
    for _ in range(120):
        state = session.call("GET", f"/api/projects/{project}/exports/{made['id']}")
        if state.get("status") == "completed":
            break
        if state.get("status") == "failed":
            raise SystemExit(f"snapshot export failed: {state}")
        time.sleep(1)
    raw = session.call("GET", f"/api/projects/{project}/exports/{made['id']}/download?exportType=JSON")
    return json.loads(raw) if isinstance(raw, bytes) else raw


def screenshot(base: str, email: str, project: int, task: int, out: Path) -> None:
    """Log in as ``email`` in headless Chromium and photograph the labeling page of one task: what an annotator sees
    of the exported interface (the question, the definitions, the choices, the note, and the task's data)."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=args, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 1500})
        page.set_default_timeout(120_000)
        page.goto(base + "/user/login/")
        page.fill("input[name=email]", email)
        page.fill("input[name=password]", PASSWORD)
        page.locator("button[type=submit], input[type=submit]").first.click()
        page.wait_for_load_state("networkidle")
        page.goto(f"{base}/projects/{project}/data?task={task}")
        page.get_by_text("Question (support)").first.wait_for()
        page.wait_for_timeout(2000)
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out), full_page=False)
        browser.close()
    print(f"{out}: the labeling page of task {task} in project {project}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label-studio", required=True, help="the label-studio executable (its own venv)")
    parser.add_argument("--n", type=int, default=16, help="tasks in the project")
    parser.add_argument("--seed", type=int, default=0, help="the annotators' simulated choices")
    parser.add_argument("--fixture", help="write what the server returned into this directory")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory (printed)")
    parser.add_argument("--screenshots", help="photograph a task's labeling page (blind, and with the judge shown) "
                        "into this directory (Playwright and Chromium)")
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="ls-roundtrip-"))
    data, sample, tasks = scratch / "testbed", scratch / "val.jsonl", scratch / "tasks.json"
    print(workbench("simulate", "--out", str(data), "--tasks", "4", "--runs", "1", "--budgets", "48"))
    print(workbench("sample", str(data), "--n", str(args.n), "--out", str(sample)))
    print(workbench("labelstudio", "export", str(sample), "--field", "support", "--out", str(tasks)))
    print(workbench("judge", str(data), "--judge", "lexical", "--out", str(scratch / "scores.parquet")))
    print(workbench("labelstudio", "export", str(sample), "--field", "support", "--out",
                    str(scratch / "predicted.json"), "--predictions", str(scratch / "scores.parquet")))

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "LABEL_STUDIO_BASE_DATA_DIR": str(scratch / "ls-data"), "LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK": "false"}
    log = open(scratch / "label-studio.log", "wb")  # noqa: SIM115 - closed in finally
    server = subprocess.Popen([args.label_studio, "start", "--data-dir", str(scratch / "ls-data"), "--port", str(port),
                               "--internal-host", "127.0.0.1", "--no-browser", "--log-level", "WARNING"],
                              env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        started = wait_for(base, server, 900)
        print(f"label-studio answered /health after {started:.1f} s")
        eve, dan = Session(base), Session(base)
        eve.sign_up("eve@example.org")
        dan.sign_up("dan@example.org")
        me = eve.call("GET", "/api/current-user/whoami")
        eve.call("PATCH", f"/api/users/{me['id']}/", {"first_name": "Eve", "last_name": "Moreau"})
        config = tasks.with_suffix(".xml").read_text(encoding="utf-8")
        project = eve.call("POST", "/api/projects/", {"title": "workbench support", "label_config": config})
        imported = eve.call("POST", f"/api/projects/{project['id']}/import", json.loads(tasks.read_text()))
        print(f"project {project['id']}: {imported.get('task_count')} tasks imported")
        listed = eve.call("GET", f"/api/tasks/?project={project['id']}&page_size=1000")
        task_ids = sorted(t["id"] for t in (listed["tasks"] if isinstance(listed, dict) else listed))
        leaked = [k for t in json.loads(tasks.read_text()) for k in t["data"] if k not in
                  ("item_id", "text", "section", "task", "previous_summary", "evidence_text")]
        one = eve.call("GET", f"/api/tasks/{task_ids[0]}")
        print(f"GET /api/tasks/{task_ids[0]} data keys: {sorted(one['data'])}; keys beyond support's view: {leaked}")

        rng = random.Random(args.seed)
        values = ("supported", "unsupported", "unsure")
        for k, task_id in enumerate(task_ids):
            first = rng.choices(values, weights=(6, 3, 1))[0]
            second = first if rng.random() < 0.8 else rng.choice([v for v in values if v != first])
            annotate(eve, task_id, first, "the amount is in the evidence, not the status" if first == "unsure" else None)
            annotate(dan, task_id, None if k == 1 else second,
                     "no output names this invoice" if second == "unsure" else None)

        predicted = eve.call("POST", "/api/projects/", {"title": "workbench support, judge shown",
                                                         "label_config": (scratch / "predicted.xml").read_text()})
        eve.call("POST", f"/api/projects/{predicted['id']}/import", json.loads((scratch / "predicted.json").read_text()))
        shown = eve.call("GET", f"/api/tasks/?project={predicted['id']}&page_size=1")
        first_task = (shown["tasks"] if isinstance(shown, dict) else shown)[0]
        print(f"project {predicted['id']} (--predictions): a task holds {first_task.get('total_predictions')} "
              "prediction(s)")

        if args.screenshots:
            screenshot(base, "dan@example.org", project["id"], task_ids[3], Path(args.screenshots) / "labelstudio-task.png")
            screenshot(base, "eve@example.org", predicted["id"], first_task["id"],
                       Path(args.screenshots) / "labelstudio-task-judge-shown.png")
        plain = eve.call("GET", f"/api/projects/{project['id']}/export?exportType=JSON&download_all_tasks=true")
        plain = json.loads(plain) if isinstance(plain, bytes) else plain
        expanded = snapshot_export(eve, project["id"])
        users = eve.call("GET", "/api/users/")
        version = eve.call("GET", "/api/version")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()

    (scratch / "export.json").write_text(json.dumps(plain, indent=1))
    (scratch / "export-expanded.json").write_text(json.dumps(expanded, indent=1))
    (scratch / "users.json").write_text(json.dumps(users, indent=1))
    store = scratch / "store"
    print(workbench("labelstudio", "import", str(scratch / "export.json"), "--store", str(scratch / "bare")))
    print(workbench("labelstudio", "import", str(scratch / "export.json"), "--store", str(store), "--annotators",
                    str(scratch / "users.json"), "--sample", str(sample)))
    print(workbench("labelstudio", "import", str(scratch / "export-expanded.json"), "--store", str(store / "x"),
                    "--annotator-from", "name"))
    print(workbench("agree", str(store), "--by", "annotator"))
    print(f"label-studio {version.get('label-studio-os-package', {}).get('version', version)}: started in "
          f"{started:.1f} s")
    if args.fixture:
        out = Path(args.fixture)
        out.mkdir(parents=True, exist_ok=True)
        for name in ("export.json", "export-expanded.json", "users.json", "tasks.json", "tasks.xml", "val.jsonl"):
            shutil.copy(scratch / name, out / name)
        print(f"{out}: the server's exports, its users, and the tasks and interface it was given")
    if args.keep:
        print(f"kept {scratch}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
