"""The store never reads, repairs or writes through a symbolic link (faults round 5, item 1).

Git keeps links, so a committed ``annotations/labels/x.round1.jsonl -> ../../somefile`` reaches a teammate's clone.
Before: opening the store as a writer cut the link target's last line off (the torn-tail repair opened it ``rb+``
and truncated it) and moved it into the store; ``add`` appended the label to the target; ``add_many`` failed with a
bare ``OSError: [Errno 40]``. Real files, links and FIFOs, and the real command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench._util.atomic import NotOurs, open_own
from workbench.annotate import AnnotationStore

ROOT = Path(__file__).resolve().parents[2]
TARGET = b'{"someone": "else"}\nlast line without its newline'


def _store_with(tmp_path: Path, name: str, *, subdir: str = "labels") -> tuple[Path, Path, Path]:
    """A store with one real label, and ``<subdir>/<name>`` a link to a file outside it (ending in a torn line)."""
    store = tmp_path / "project" / "annotations"
    AnnotationStore(store).add(item_id="e0", annotator="amy", round=1, field="support", value="supported")
    victim = tmp_path / "somefile"
    victim.write_bytes(TARGET)
    (store / subdir).mkdir(exist_ok=True)
    link = store / subdir / name
    link.unlink(missing_ok=True)  # the lock and its holder file exist once a label is written
    link.symlink_to(os.path.relpath(victim, link.parent))
    return store, victim, link


def _untouched(store: Path, victim: Path) -> None:
    assert victim.read_bytes() == TARGET
    assert not list(store.rglob("*.torn-*")), "nothing of the target is moved into the store"


@pytest.mark.parametrize("name", ["x.round1.jsonl", "amy.round1.jsonl"])
def test_opening_the_store_as_a_writer_never_repairs_a_linked_label_file(tmp_path: Path, name: str) -> None:
    store, victim, link = _store_with(tmp_path, name) if name != "amy.round1.jsonl" else _link_own(tmp_path)
    with pytest.raises(NotOurs) as caught:
        AnnotationStore(store)
    assert str(caught.value).startswith(f"{link}: is a symbolic link")
    _untouched(store, victim)
    with pytest.raises(NotOurs):  # a reader too: the link is named, never read as labels
        AnnotationStore(store, read_only=True).labels()
    _untouched(store, victim)


def _link_own(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A store whose own label file of amy, round 1, has been replaced by a link (what ``add`` appends to)."""
    store, victim, link = _store_with(tmp_path, "x.round1.jsonl")
    link.unlink()
    own = store / "labels" / "amy.round1.jsonl"
    own.unlink()
    own.symlink_to(victim)
    return store, victim, own


def test_add_and_add_many_never_append_through_a_link(tmp_path: Path) -> None:
    store, victim, link = _link_own(tmp_path)
    opened = AnnotationStore.__new__(AnnotationStore)  # as if the link came in after the store was opened
    opened.root, opened.dir, opened.read_only = store, store / "labels", False
    with pytest.raises(NotOurs, match="is a symbolic link"):
        opened.add(item_id="e1", annotator="amy", round=1, field="support", value="supported")
    _untouched(store, victim)
    with pytest.raises(NotOurs) as caught:  # before: a bare OSError, [Errno 40] Too many levels of symbolic links
        opened.add_many([{"item_id": "e2", "annotator": "amy", "round": 1, "field": "support",
                          "value": "supported"}])
    assert str(link) in str(caught.value)
    _untouched(store, victim)
    assert not (store / "labels" / ".journal.json").exists()


@pytest.mark.parametrize("name", [".store.lock", ".store.lock.holder"])
def test_the_lock_and_its_holder_file_are_never_written_through_a_link(tmp_path: Path, name: str) -> None:
    store, victim, link = _store_with(tmp_path, name)
    with pytest.raises(NotOurs, match="is a symbolic link"):
        AnnotationStore(store).add(item_id="e1", annotator="amy", round=1, field="support", value="supported")
    assert victim.read_bytes() == TARGET  # filelock truncates nothing, the holder's pid is not written there


def test_a_linked_labels_or_notes_directory_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "annotations"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "amy.round1.jsonl").write_bytes(TARGET)
    store.mkdir()
    (store / "labels").symlink_to(elsewhere)
    with pytest.raises(NotOurs, match="is a symbolic link or not a directory"):
        AnnotationStore(store)
    assert (elsewhere / "amy.round1.jsonl").read_bytes() == TARGET
    (store / "labels").unlink()
    (store / "notes").symlink_to(elsewhere)
    with pytest.raises(NotOurs, match="notes"):
        AnnotationStore(store).add_note(item_id="e1", annotator="amy", round=1, field="support", note="hm")
    assert sorted(p.name for p in elsewhere.iterdir()) == ["amy.round1.jsonl"]


def test_a_fifo_named_like_a_label_file_is_refused_without_hanging(tmp_path: Path) -> None:
    store = tmp_path / "annotations"
    AnnotationStore(store).add(item_id="e0", annotator="amy", round=1, field="support", value="supported")
    os.mkfifo(store / "labels" / "bob.round1.jsonl")
    done = subprocess.run([sys.executable, "-c", "import sys\nfrom workbench.annotate import AnnotationStore\n"
                           f"AnnotationStore({str(store)!r})"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "is not a regular file" in done.stderr


def test_the_command_line_names_the_link_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    """``workbench labelstudio import`` into a clone that carries a committed link: exit 2, one line naming it."""
    store, victim, link = _store_with(tmp_path, "x.round1.jsonl")
    export = tmp_path / "export.json"
    export.write_text(json.dumps([{"id": 1, "data": {"item_id": "x1", "text": "- Paid INV-1"}, "annotations": [
        {"id": 1, "was_cancelled": False, "task": 1, "completed_by": {"id": 1, "email": "zed@example.org"},
         "result": [{"type": "choices", "from_name": "support", "to_name": "entry",
                     "value": {"choices": ["supported"]}}]}]}]))
    before = sorted(p.name for p in (store / "labels").iterdir())
    done = subprocess.run([sys.executable, "-m", "workbench.cli.main", "labelstudio", "import", str(export),
                           "--store", str(store)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [f"workbench labelstudio: {link}: is a symbolic link; the workbench "
                                                "never writes through one. Remove the link (or replace it with a copy "
                                                "of the file) and run again"]
    _untouched(store, victim)
    assert sorted(p.name for p in (store / "labels").iterdir()) == before


def test_open_own_refuses_what_is_not_a_plain_file_under_its_root(tmp_path: Path) -> None:
    """The one helper every writer opens through: outside the root, ``..``, a linked directory on the way."""
    (tmp_path / "root" / "real").mkdir(parents=True)
    (tmp_path / "root" / "linked").symlink_to(tmp_path / "root" / "real")
    with pytest.raises(NotOurs, match="is not inside"):
        open_own(tmp_path / "other.txt", os.O_WRONLY | os.O_CREAT, root=tmp_path / "root")
    with pytest.raises(NotOurs):
        open_own(tmp_path / "root" / ".." / "x.txt", os.O_WRONLY | os.O_CREAT, root=tmp_path / "root")
    with pytest.raises(NotOurs, match="symbolic link or not a directory"):
        open_own(tmp_path / "root" / "linked" / "x.txt", os.O_WRONLY | os.O_CREAT, root=tmp_path / "root")
    assert not (tmp_path / "root" / "real" / "x.txt").exists()
    fd = open_own(tmp_path / "root" / "real" / "x.txt", os.O_WRONLY | os.O_CREAT, root=tmp_path / "root")
    os.close(fd)
    assert (tmp_path / "root" / "real" / "x.txt").is_file()


def test_a_termination_right_after_a_directory_is_closed_is_not_turned_into_a_bad_descriptor(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A SIGTERM (raised as an exception, cli.main) that arrived just after ``open_own`` closed a directory on the way
    down left that descriptor's number in the variable its ``finally`` closes: a second close, EBADF, and the
    command said "Bad file descriptor" and exited 2, not 143 (seen once in ``make test``'s SIGTERM import test).
    Here the first close raises right after closing, as a signal handler would: the termination comes out."""
    (tmp_path / "labels").mkdir()
    real = os.close
    closed: list[int] = []

    def close_then_terminated(fd: int) -> None:
        real(fd)
        closed.append(fd)
        if len(closed) == 1:
            raise KeyboardInterrupt("terminated just after a close")

    monkeypatch.setattr(os, "close", close_then_terminated)
    with pytest.raises(KeyboardInterrupt, match="just after a close"):
        open_own(tmp_path / "labels" / "a.jsonl", os.O_WRONLY | os.O_CREAT, root=tmp_path)
    monkeypatch.undo()
    assert len(closed) == len(set(closed)) == 2  # the root's and the labels directory's, each once
