"""Which log a file or directory holds, read without the table library (``workbench usage`` starts in a tenth of
a second): a log file's format from its first record (:func:`sniff_format`), a directory's session files by
format (``directory_formats``: Claude Code's ``~/.claude/projects``, Codex's ``~/.codex/sessions``, or a
home with both), the bytes a log holds. :mod:`workbench.adapters` exports each."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from workbench.errors import SchemaError
from workbench._util.jsonl import BadLines, json_lines


#: bytes of Claude Code session files above which an import reads them in worker processes, one a core (below,
#: starting them costs more than they save)
PARALLEL_BYTES = 64 << 20


def sniff_format(path: str | os.PathLike[str]) -> str:
    """Guess a log file's format by the registry's rules (:func:`workbench.adapters._formats.sniff_file`): its
    suffix, its first 4 KiB (``tau-bench``: a JSON list of runs with ``traj``), else its first JSONL record
    (``openai`` with ``messages``; ``labelled-summaries`` for a header or a record with ``source_id``; ``codex``,
    ``claude-code`` for a session line), else ``trajectory``.

    Parameters
    ----------
    path : str or os.PathLike
        The log file.

    Returns
    -------
    str
        The format's ``--format`` name.

    Examples
    --------
    >>> from workbench.adapters import sniff_format
    >>> from workbench.datasets import examples
    >>> sniff_format(examples("invoice_log.jsonl")), sniff_format(examples("codex/rollout-2026-11-21T09-00-00-0199aa11.jsonl"))
    ('trajectory', 'codex')
    """
    import gzip

    from workbench.adapters._formats import sniff_file

    with (gzip.open(path, "rb") if Path(path).suffix == ".gz" else open(path, "rb")) as fh:
        head = fh.read(4096).lstrip()

    def first_record() -> Any:
        for _, record in json_lines(Path(path)):
            return record
        return None  # pragma: no cover - json_lines raises on an empty file

    return sniff_file(path, head, first_record)


def session_format(record: Any) -> str | None:
    """The session format a record is a line of (the registry's formats that read ``sessions``: ``codex`` for a
    rollout line with ``type`` and ``payload``, ``claude-code`` for a transcript line with ``sessionId``), None for
    anything else."""
    for name, says in _SESSION_SNIFFERS:
        if says(record):
            return name
    return None


def _session_sniffers() -> tuple[tuple[str, Any], ...]:
    from workbench.adapters._formats import LOG_FORMATS

    return tuple((f.name, f.record) for f in LOG_FORMATS.values() if f.reads == "sessions" and f.record is not None)


_SESSION_SNIFFERS = _session_sniffers()


def input_bytes(path: str | os.PathLike[str]) -> int:
    """The bytes a log holds: a file's size, or the sizes of every file below a directory of sessions."""
    p = Path(path)
    return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else p.stat().st_size


def tree_files(path: str | os.PathLike[str], pattern: str = "*.jsonl", bad: BadLines | None = None) -> list[Path]:
    """Every ``pattern`` file below the directory ``path`` (symbolic links to directories are not followed), sorted.

    A directory that cannot be listed or a file that cannot be opened (its permissions) is an error naming it;
    with ``bad.skip_invalid`` it is left out and counted in ``bad`` (:meth:`workbench.errors.BadLines.cannot_read`), so the run
    says how many it skipped.
    """
    return [file for file, _size, _fmt in tree_listing(path, pattern, bad)]


#: bytes of a session file read to decide its format from its first line (a longer first line: the file is parsed)
HEAD_BYTES = 64 << 10

#: the listings ``tree_listing`` made in the current ``one_walk`` scope, by (directory, pattern): whether
#: the formats were read, and the listing (None outside a scope: every call walks)
_WALKS: dict[tuple[str, str], tuple[bool, list[tuple[Path, int, str | None]]]] | None = None


@contextlib.contextmanager
def one_walk() -> Iterator[None]:
    """Within this scope a session tree is walked once: ``tree_listing`` gives a later call the listing an
    earlier one made of the same directory and pattern (with the formats, when the earlier read them), so that a
    command's start (the workers it starts, the size it announces), its format detection and its reader share one
    walk (issue 62: an import walked a tree four times, a quarter of its parent's profiled time at 200 MB). A walk
    that skipped what it could not read is not kept: a later call without ``skip_invalid`` gets the error. Scopes
    nest (the outer one's listings are shared); outside any scope nothing is kept.

    Yields
    ------
    None
    """
    global _WALKS
    outer = _WALKS
    _WALKS = {} if outer is None else outer
    try:
        yield
    finally:
        _WALKS = outer


def tree_listing(path: str | os.PathLike[str], pattern: str = "*.jsonl", bad: BadLines | None = None,
                 *, formats: bool = False) -> list[tuple[Path, int, str | None]]:
    """One walk of a session tree: every ``pattern`` file below ``path`` as (path, size, format), sorted by path.

    The walk lists each directory once (``os.scandir``: a file's type from the listing, its size from one
    ``stat``) and opens each file once, to check it can be read. With ``formats`` that open also reads the file's
    first line (at most ``HEAD_BYTES``) and decides its format from it (``session_format``, as orjson reads
    it); a file whose first line does not say (a title line, a blank or broken line, a longer line) is read as
    ``directory_formats`` always read it, record by record until one says. Without ``formats`` the format is
    None. What cannot be listed or opened is an error naming it, or with ``bad.skip_invalid`` left out and
    counted (``tree_files``).

    Parameters
    ----------
    path : str or os.PathLike
        The directory.
    pattern : str, optional
        The file names to list (``fnmatch``; default ``"*.jsonl"``).
    bad : BadLines, optional
        Where what cannot be read is counted (with ``skip_invalid``).
    formats : bool, default False
        Decide each file's session format.

    Returns
    -------
    list of tuple
        (path, size in bytes, format or None), sorted by path.
    """
    key = (os.path.abspath(path), pattern)
    kept = _WALKS.get(key) if _WALKS is not None else None
    if kept is not None and (kept[0] or not formats):
        return list(kept[1]) if formats else [(file, size, None) for file, size, _fmt in kept[1]]
    walk = _Walk(bad)
    found = list(walk.files(path, pattern, formats=formats))
    if _WALKS is not None and not walk.skipped:
        _WALKS[key] = (formats, list(found))
    return found


def _file_sizes(files: Sequence[Path]) -> list[int]:
    """Each file's size in bytes: as the kept listing of the current ``one_walk`` scope has it, else from a
    ``stat`` (a file no kept listing holds, or outside a scope). An import sized its 47,353 files three times more
    after the walk (splitting the work, batching it, scanning it): 0.55 s of its parent's profile at 1 GB."""
    known: dict[Path, int] = {}
    if _WALKS is not None:
        for _formats, listing in _WALKS.values():
            known.update((file, size) for file, size, _fmt in listing)
    return [known[f] if f in known else f.stat().st_size for f in files]


def _cannot_read(where: str, reason: str, bad: BadLines | None) -> None:
    """A file or directory that cannot be read: an error naming it, or with ``bad.skip_invalid`` counted."""
    if bad is None or not bad.skip_invalid:
        raise SchemaError(f"cannot be read ({reason}); --skip-invalid skips what cannot be read and counts it",
                          file=where)
    bad.cannot_read(where, reason)


class _Walk:
    """One walk of a session tree, file by file in ``tree_listing``'s order: each directory listed once
    (``os.scandir``) and its entries visited in name order, a directory's files where its name falls. That is the
    order of the paths sorted part by part (a name sorts before any longer name it begins), so the files come
    sorted as they are found, and a reader can start on the first ones before the walk ends. Each file is opened to
    check it can be read, unless ``open_files`` is false (a reader that opens every file at once says what it
    cannot open, :func:`_cannot_read`). ``skipped``: whether something that could not be read was left out
    (``bad.skip_invalid``)."""

    def __init__(self, bad: BadLines | None, open_files: bool = True) -> None:
        self.bad = bad
        self.open_files = open_files
        self.skipped = False

    def _unreadable(self, where: str, err: OSError) -> None:
        _cannot_read(where, err.strerror or type(err).__name__, self.bad)
        self.skipped = True

    def files(self, path: str | os.PathLike[str], pattern: str = "*.jsonl", *, formats: bool = False,
              text: bool = False) -> Iterator[tuple[Any, int, str | None]]:
        """Every ``pattern`` file below ``path`` as (path, size, format or None), in sorted order, as found (a
        stack of the directories being listed, not recursion: a tree of any depth). ``text``: each path as the
        string the listing gives, not a :class:`~pathlib.Path` (the usage pass: its walk of the 1 GB home's
        47,353 files ended at 0.48 s, not 0.73-1.06 s)."""
        import fnmatch

        stack = [self._entries(os.fspath(path))]
        while stack:
            entry = next(stack[-1], None)
            if entry is None:
                stack.pop()
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(self._entries(entry.path))
                    continue
                if not fnmatch.fnmatchcase(entry.name, pattern) or not entry.is_file():
                    continue  # a FIFO, a socket, a link to nothing
                size = entry.stat().st_size
            except OSError:
                continue  # gone since it was listed
            head = b""
            if self.open_files or formats:
                try:
                    fd = os.open(entry.path, os.O_RDONLY | os.O_NONBLOCK)
                except OSError as err:
                    self._unreadable(entry.path, err)
                    continue
                try:
                    if formats:
                        head = _first_line(fd)
                finally:
                    os.close(fd)
            file = entry.path if text else Path(entry.path)
            yield file, size, _decided_format(head, file) if formats else None

    def _entries(self, directory: str) -> Iterator[os.DirEntry[str]]:
        """A directory's entries in name order (none where it cannot be listed and that is skipped)."""
        try:
            with os.scandir(directory) as listing:
                return iter(sorted(listing, key=lambda entry: entry.name))
        except OSError as err:
            self._unreadable(str(err.filename or directory), err)
            return iter(())


#: bytes read first to find a file's first line (266 in a Claude Code or Codex session file of the real fixtures);
#: a longer first line is read on, up to ``HEAD_BYTES``
_HEAD_FIRST_BYTES = 4 << 10


def _first_line(fd: int) -> bytes:
    """The first line of the open file ``fd`` (at most ``HEAD_BYTES``, with what follows it in the last read),
    reading the fewest bytes that hold it: :data:`_HEAD_FIRST_BYTES`, then on to ``HEAD_BYTES`` only while no
    line has ended (a 64 KiB read took most of a typical session file: 0.8 s of the parent's 7 s, profiled, on a
    200 MB home)."""
    head = os.read(fd, _HEAD_FIRST_BYTES)
    while b"\n" not in head and len(head) < HEAD_BYTES:
        more = os.read(fd, HEAD_BYTES - len(head))
        if not more:
            break
        head += more
    return head


def _decided_format(head: bytes, file: str | os.PathLike[str]) -> str | None:
    """A session file's format by ``tree_listing``'s rule: what its first line (``head``) says
    (:func:`_format_of_head`), else its first record that says, read record by record (:func:`_file_format`)."""
    fmt = _format_of_head(head)
    return fmt if fmt is not None else _file_format(Path(file))


def _format_of_head(head: bytes) -> str | None:
    """The session format a file's first ``HEAD_BYTES`` bytes (or its first line of them) say, as orjson reads
    the line, or None when they do not say or cannot be read so (blank, not JSON, a byte-order mark, a first line
    longer than ``HEAD_BYTES``)."""
    import orjson

    end = head.find(b"\n")
    if end < 0:
        if len(head) == HEAD_BYTES:
            return None
        end = len(head)
    try:
        return session_format(orjson.loads(head[:end]))
    except orjson.JSONDecodeError:
        return None


def sniff_directory(path: str | os.PathLike[str], bad: BadLines | None = None) -> str:
    """The session format of a directory, from the first record below it that says (its ``*.jsonl`` files in
    order, bad lines passed over): ``claude-code`` (``~/.claude/projects``: lines with ``sessionId``) or ``codex``
    (``~/.codex/sessions``: ``type`` and ``payload``); an error naming the directory and its first file when
    no record says.

    Parameters
    ----------
    path : str or os.PathLike
        The directory.
    bad : workbench._util.jsonl.BadLines, optional
        Where the lines passed over are recorded.

    Returns
    -------
    str
        ``"claude-code"`` or ``"codex"``.
    """
    files = tree_files(path, "*.jsonl", bad)
    if not files:
        raise SchemaError("is a directory with no *.jsonl session files below it that can be read; expected a log file, or a "
                          "directory of sessions (~/.claude/projects, ~/.codex/sessions)", file=str(path))
    for file in files:
        if (fmt := _file_format(file)) is not None:
            return fmt
    raise SchemaError(f"its session files are neither Claude Code's (lines with sessionId) nor Codex's (lines "
                      f"with type and payload); first read: {files[0]}", file=str(path))


def directory_formats(path: str | os.PathLike[str], bad: BadLines | None = None) -> dict[str, list[Path]]:
    """The session files below a directory by format: each ``*.jsonl`` file's first record that says
    (:func:`sniff_directory`'s rule), files in sorted order; a file no record of which says is left out (a
    Claude Code file of titles only). A home holding ``.claude/projects`` and ``.codex/sessions`` has both. What
    cannot be read is an error, or skipped and counted with ``bad.skip_invalid`` (``tree_files``)."""
    return {fmt: [file for file, _size in files] for fmt, files in directory_listing(path, bad).items()}


def directory_listing(path: str | os.PathLike[str], bad: BadLines | None = None) -> dict[str, list[tuple[Path, int]]]:
    """``directory_formats`` with each file's size, from the one walk of ``tree_listing`` (what the usage
    pass and an import share: the files, their sizes for splitting the work, their formats).

    Parameters
    ----------
    path : str or os.PathLike
        A directory of sessions (or a home holding both clients').
    bad : BadLines, optional
        Where what cannot be read is counted (with ``skip_invalid``).

    Returns
    -------
    dict
        Format -> [(path, size)], each in sorted order.
    """
    out: dict[str, list[tuple[Path, int]]] = {}
    for file, size, fmt in tree_listing(path, "*.jsonl", bad, formats=True):
        if fmt is not None:
            out.setdefault(fmt, []).append((file, size))
    return out


def _file_format(file: Path) -> str | None:
    """A session file's format: that of its first record that says (``session_format``; bad lines passed
    over), None when none does -- an empty file's too (Claude Code leaves them; ``workbench usage`` and ``import``
    refused a whole home for one, even with ``--skip-invalid``, where ccusage counts the rest)."""
    from workbench._util.jsonl import EmptyLog

    try:
        for _, record in json_lines(file, BadLines(skip_invalid=True)):
            if (fmt := session_format(record)) is not None:
                return fmt
    except EmptyLog:
        return None
    return None


def import_workers(path: str | os.PathLike[str]) -> int:
    """How many worker processes an import of ``path`` will read Claude Code files with (0: none), guessed before
    the import from the files' sizes and the first file that says its format, not by sorting every file by format
    as the import does (the command line starts them early: workers the reader does not take are stopped at
    exit). Whatever is wrong with the directory is left for the import to say."""
    import warnings

    from workbench._util.executors import usable_cores

    p = Path(path)
    if not p.is_dir():
        return 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            listing = tree_listing(p, "*.jsonl", formats=True)  # (in a one_walk scope: the import's own walk)
        n = min(usable_cores(), len(listing))
        if n < 2 or sum(size for _file, size, _fmt in listing) <= PARALLEL_BYTES:
            return 0
        first = next((fmt for _file, _size, fmt in listing if fmt is not None), None)  # sniff_directory's rule
        return n if first == "claude-code" else 0
    except (OSError, SchemaError):
        return 0


def project_dir(file: Path) -> str:
    """The directory a Claude Code session file lies in (``~/.claude/projects/<this>/``), above any
    ``subagents/``."""
    parent = file.parent
    if parent.name == "subagents":
        parent = parent.parent.parent
    return parent.name


#: the largest file ``session_files`` reads to see whether it holds only blank lines
_BLANK_BYTES = 1024


def _blank(file: Path) -> bool:
    """Whether a small file holds only whitespace (unreadable: not known to be blank, so the reader says why)."""
    try:
        return not file.read_bytes().strip()
    except OSError:
        return False


def session_files(path: str | os.PathLike[str], pattern: str = "*.jsonl", bad: BadLines | None = None) -> list[Path]:
    """A file, or every ``pattern`` file below a directory that holds a line that is not blank (sorted; what cannot
    be read as ``tree_files`` says). An empty file in a tree holds no session and is left out: Claude Code
    leaves them, and one made ``workbench import`` refuse the whole tree, even with ``--skip-invalid``, where
    ccusage counts the rest. Only files of at most :data:`_BLANK_BYTES` bytes are read to find out (a longer file
    of blank lines is the reader's error). A file named alone must hold a session (an empty one is an error naming
    it)."""
    p = Path(path)
    if p.is_dir():
        listing = tree_listing(p, pattern, bad)
        if not listing:
            raise SchemaError(f"no {pattern} session files below this directory", file=str(p))
        files = [file for file, size, _fmt in listing if size > _BLANK_BYTES or (size and not _blank(file))]
        if not files:
            raise SchemaError(f"every {pattern} file below this directory is empty", file=str(p))
        return files
    return [p]


__all__ = ["sniff_directory", "sniff_format"]
