"""The store's batch journal is checked before anything is rolled back (issue 57 item 1): a journal may only name
label files of its own store, by a plain name, that its own batch made or appended to, and only the bytes that batch
added are removed. Before, a journal naming ``../../victim.txt`` (size null) deleted that file, an absolute path
(size 3) truncated it, and a stale journal emptied an annotator's real labels. Real files, real processes killed
mid-batch with SIGKILL, the real command line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from workbench.annotate import AnnotationStore
from workbench.annotate import JournalMismatch, TornLineWarning
from workbench.cli.main import main

ROOT = Path(__file__).resolve().parents[2]

# A child that starts a batch and is killed (SIGKILL: no clean-up) after writing half of the batch's first file.
_CRASHING_BATCH = """
import os, signal, sys
import workbench.annotate._store as st
real = st._append_bytes
def half_then_killed(path, payload, root, *, sync):
    real(path, payload[: len(payload) // 2], root, sync=True)
    os.kill(os.getpid(), signal.SIGKILL)
st._append_bytes = half_then_killed
who, n = sys.argv[2], int(sys.argv[3])
st.AnnotationStore(sys.argv[1]).add_many(
    [{"item_id": f"{who}-batch-{i}", "annotator": who, "round": 1, "field": "support", "value": "supported"}
     for i in range(n)])
"""


def crash_a_batch(store: Path, who: str, n: int = 40) -> None:
    done = subprocess.run([sys.executable, "-c", _CRASHING_BATCH, str(store), who, str(n)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr
    assert (store / "labels" / ".journal.json").exists()


def labels_of(store: Path, who: str) -> list[str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TornLineWarning)
        table = AnnotationStore(store, read_only=True).labels()
    return sorted(table.filter(table["annotator"] == who)["item_id"].to_list())


def export(tmp_path: Path) -> Path:
    """A one-label Label Studio export (the shape of workbench/datasets/example_logs/labelstudio/export-expanded.json)."""
    path = tmp_path / "export.json"
    path.write_text(json.dumps([{"id": 1, "data": {"item_id": "x1", "text": "- Paid INV-1"}, "annotations": [
        {"id": 1, "was_cancelled": False, "task": 1, "completed_by": {"id": 1, "email": "zed@example.org"},
         "result": [{"type": "choices", "from_name": "support", "to_name": "entry",
                     "value": {"choices": ["supported"]}}]}]}]))
    return path


def _hostile_journals(victim: Path) -> dict[str, object]:
    entry = {"size": 3, "added": 10, "created": False, "dev": 0, "ino": 0, "tail_sha256": ""}
    v2 = {"version": 2, "labeled_at": "2026-01-01T00:00:00+00:00"}
    return {
        "old format, relative": {"sizes": {"../../victim.txt": None}},
        "old format, absolute": {"sizes": {str(victim): 3}},
        "relative": {**v2, "files": {"../../victim.txt": {**entry, "created": True}}},
        "absolute": {**v2, "files": {str(victim): entry}},
        "a symbolic link out of the store": {**v2, "files": {"evil.round1.jsonl": {
            **entry, "dev": victim.stat().st_dev, "ino": victim.stat().st_ino}}},
    }


@pytest.mark.parametrize("case", ["old format, relative", "old format, absolute", "relative", "absolute",
                                  "a symbolic link out of the store"])
def test_a_journal_naming_a_file_outside_the_store_touches_nothing(
        tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "home"
    store = outside / "project" / "annotations"
    AnnotationStore(store).add(item_id="e1", annotator="amy", round=1, field="support", value="supported")
    victim = outside / "victim.txt"
    victim.write_text("someone else's file\n")
    link = store / "labels" / "evil.round1.jsonl"
    if case == "a symbolic link out of the store":
        link.symlink_to(victim)
    journal = store / "labels" / ".journal.json"
    journal.write_text(json.dumps(_hostile_journals(victim)[case]))
    code = main(["labelstudio", "import", str(export(tmp_path)), "--store", str(store)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert victim.read_text() == "someone else's file\n"
    assert journal.exists()  # left for a person to look at
    if link.is_symlink():  # refused before the journal is read: the store holds a link
        assert f"{link}: is a symbolic link" in err and len(err.strip().splitlines()) == 1
        link.unlink()
    else:
        assert f"{journal}: the batch journal" in err and "nothing was rolled back" in err
        assert "remove the journal" in err and len(err.strip().splitlines()) == 1
    assert labels_of(store, "amy") == ["e1"]  # a reader ignores a journal that names no file of its own
    assert labels_of(store, "zed@example.org") == []


def test_a_stale_journal_does_not_empty_labels_written_after_the_crash(tmp_path: Path) -> None:
    """A batch killed mid-write, rolled back by the next writer; the annotator then labels 15 items; the old journal
    comes back (a teammate's commit, a restored backup). Its file was made by the batch (size null before), so
    rolling it back deleted the 15 labels; now the journal is refused and they stay."""
    store = tmp_path / "annotations"
    crash_a_batch(store, "carol")
    journal = store / "labels" / ".journal.json"
    stale = journal.read_bytes()
    with pytest.warns(TornLineWarning, match="rolled back"):
        AnnotationStore(store)
    assert not (store / "labels" / "carol.round1.jsonl").exists()
    fresh = AnnotationStore(store)
    for i in range(15):
        fresh.add(item_id=f"real-{i:02d}", annotator="carol", round=1, field="support", value="supported")
    journal.write_bytes(stale)
    before = (store / "labels" / "carol.round1.jsonl").read_bytes()
    with pytest.raises(JournalMismatch, match="carol.round1.jsonl, which .*(not the file|did not write)"):
        AnnotationStore(store)
    assert (store / "labels" / "carol.round1.jsonl").read_bytes() == before
    assert labels_of(store, "carol") == [f"real-{i:02d}" for i in range(15)]


def test_a_batch_killed_mid_write_is_rolled_back_to_the_labels_before_it(tmp_path: Path) -> None:
    """The journal's own batch is still rolled back: the file it appended to back to its 5 labels, to the byte."""
    store = tmp_path / "annotations"
    writer = AnnotationStore(store)
    for i in range(5):
        writer.add(item_id=f"kept-{i}", annotator="dave", round=1, field="support", value="unsupported")
    path = store / "labels" / "dave.round1.jsonl"
    before = path.read_bytes()
    crash_a_batch(store, "dave")
    assert path.stat().st_size > len(before)
    assert labels_of(store, "dave") == [f"kept-{i}" for i in range(5)]  # readers see none of the batch
    with pytest.warns(TornLineWarning, match="rolled back"):
        AnnotationStore(store)
    assert path.read_bytes() == before
    assert not (store / "labels" / ".journal.json").exists()


def test_a_label_file_changed_before_the_batch_start_is_not_rolled_back(tmp_path: Path) -> None:
    """The SHA-256 of the bytes before the batch's start no longer matches: the file is not the one the batch
    appended to, so nothing is cut from it."""
    store = tmp_path / "annotations"
    writer = AnnotationStore(store)
    writer.add(item_id="kept-0", annotator="erin", round=1, field="support", value="unsupported")
    path = store / "labels" / "erin.round1.jsonl"
    crash_a_batch(store, "erin")
    data = path.read_bytes()
    changed = data.replace(b'"unsupported"', b'"supported"  ', 1)  # same length, other bytes
    assert changed != data
    with open(path, "r+b") as fh:  # in place: the same file
        fh.write(changed)
    with pytest.raises(JournalMismatch, match="erin.round1.jsonl, which holds other bytes before the batch"):
        AnnotationStore(store)
    assert path.read_bytes() == changed


def test_the_journal_is_never_committed() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    done = subprocess.run(["git", "check-ignore", "-q", "annotations/labels/.journal.json"], cwd=ROOT)
    assert done.returncode == 0
    assert os.path.isdir(ROOT / "annotations" / "labels")


def test_a_writer_says_who_holds_the_lock_waits_a_bounded_time_and_goes_on_once_the_holder_is_killed(
        tmp_path: Path) -> None:
    """Issue 57 item 20: a writer waited without limit and without a word while another process held
    ``labels/.store.lock``. It says who holds it (pid, host, since when), gives up after the bound naming the holder
    again with nothing written, and once the holder is killed (SIGKILL: the kernel lets go of the lock) the next
    writer goes on. Real processes."""
    import signal
    import socket

    store = tmp_path / "annotations"
    AnnotationStore(store).add(item_id="e0", annotator="amy", round=1, field="support", value="supported")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom pathlib import Path\nfrom workbench.annotate._store import "
         f"_StoreLock\nwith _StoreLock(Path({str(store / 'labels' / '.store.lock')!r}), Path({str(store)!r})):\n"
         "    print('held', flush=True)\n    time.sleep(120)\n"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        env = {**os.environ, "WORKBENCH_LOCK_WAIT": "2"}
        cmd = [sys.executable, "-m", "workbench.cli.main", "labelstudio", "import", str(export(tmp_path)),
               "--store", str(store)]
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        who = f"process {holder.pid} on {socket.gethostname()}"
        assert done.returncode == 2, done.stderr
        assert f"waiting for {who}" in done.stderr and f"the store is locked by {who}" in done.stderr
        assert "nothing was written" in done.stderr and "internal error" not in done.stderr
        assert labels_of(store, "zed@example.org") == []
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert labels_of(store, "zed@example.org") == ["x1"] and labels_of(store, "amy") == ["e0"]
    finally:
        holder.kill()
        holder.wait(timeout=30)
        if holder.stdout is not None:
            holder.stdout.close()
