"""``workbench labelstudio import`` of a large Label Studio export: time against the number of distinct annotators
(issue 39 item 9: 100,000 users did not finish in 300 s, a lock and an fsync per file per label).

The export has the shape of ``workbench/datasets/example_logs/labelstudio/export-expanded.json`` (a real Label Studio snapshot export, a
user object in ``completed_by``): N tasks, each annotated by one or three of U users. Timed, in this process:
  import     ``workbench labelstudio import EXPORT --store STORE`` (one label file per user)
The reference, measured in the same run: the same records written by a plain loop, one ``open(...,"a")`` and one
write per user file, no lock, no fsync, no journal (what the store's files hold, with none of its guarantees).
The ratio printed is import / reference.
Run from the project root: .venv/bin/python benchmarks/bench_labelstudio_import.py [USERS ...]
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

from workbench.annotate import from_labelstudio
from workbench.cli.main import main as cli


def export(tasks: int, users: int, per_task: int) -> list[dict]:
    out = []
    for t in range(tasks):
        anns = []
        for k in range(per_task):
            u = (t * per_task + k) % users
            anns.append({"id": t * 10 + k, "was_cancelled": False, "ground_truth": False, "task": t,
                         "result": [{"id": f"r{t}-{k}", "type": "choices", "from_name": "support", "to_name": "entry",
                                     "origin": "manual",
                                     "value": {"choices": ["supported" if (t + k) % 3 else "unsupported"]}}],
                         "completed_by": {"id": u, "email": f"user{u}@example.org", "first_name": "", "last_name": ""}})
        out.append({"id": t, "data": {"item_id": f"e{t}", "text": f"- Paid INV-{t}"}, "annotations": anns})
    return out


def plain(records: list[dict], store: Path) -> None:
    by_user: dict[str, list[str]] = {}
    for r in records:
        by_user.setdefault(r["annotator"], []).append(json.dumps({**r, "labeled_at": "2026-12-01T00:00:00+00:00"}))
    store.mkdir(parents=True)
    for user, lines in by_user.items():
        with open(store / f"{user}.round1.jsonl", "a", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")


def main(users_list: list[int]) -> None:
    print(f"{'users':>8} {'labels':>8} {'import':>9} {'plain':>8} {'ratio':>7}")
    for users in users_list:
        data = export(tasks=max(users, 30_000) // 1, users=users, per_task=1 if users >= 30_000 else 3)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "export.json"
            path.write_text(json.dumps(data), encoding="utf-8")
            started = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                code = cli(["labelstudio", "import", str(path), "--store", str(Path(tmp) / "store")])
            took = time.perf_counter() - started
            assert code == 0, code
            started = time.perf_counter()
            records = from_labelstudio(json.loads(path.read_text(encoding="utf-8")), round=1)
            plain(records, Path(tmp) / "plain")
            ref = time.perf_counter() - started
        print(f"{users:>8} {len(records):>8} {took:8.2f}s {ref:7.2f}s {took / ref:6.1f}x", flush=True)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10, 1_000, 10_000, 100_000])
