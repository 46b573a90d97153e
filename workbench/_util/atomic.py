"""Atomic writing: a file appears whole, with the mode a plain ``open`` would give, or not at all.

One writer for every file the workbench writes: table files (:mod:`workbench.tables._files`), the adapters' exports,
the entries table, samples and adjudication files (:func:`write_jsonl`) and the LLM response cache.
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench.errors import OutputRefused, SchemaError  # noqa: F401 (the writers raise it; callers import it from here too)


def current_umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux ``/proc``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: set and restore (not thread-safe, hence the /proc path first)
    os.umask(mask)
    return mask


def atomic_write(path: Path, write: Callable[[Path], object], *, durable: bool = False) -> None:
    """Call ``write(tmp)`` on a temporary sibling of ``path``, then move it into place (or remove it on failure).

    The file gets the mode a plain ``open(path, "w")`` would give (0644 under the usual umask
    022), not the 0600 of a temporary file, so co-workers can read what was written. With
    ``durable`` the temporary file is flushed to disk (``fsync``) before the move, so a crash
    of the machine cannot leave an empty file under the final name.
    """
    import tempfile  # (here, not at the top: every command imports this module, few write through it)

    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise named(err, path) from None
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o666 & ~current_umask())
        if durable:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as err:  # a full disk, a quota: the error names the file being written, not its temporary
        Path(tmp).unlink(missing_ok=True)
        disk = disk_error(err, tmp) if isinstance(err, Exception) else None
        if disk is None:
            raise
        raise named(disk, path) from None


class NotOurs(SchemaError):
    """A path the workbench would write (or repair) that is not a plain file of its own: a symbolic link, a FIFO,
    a device, a directory, or a file reached through a linked directory. Nothing was read-modified or written."""


def open_own(path: str | os.PathLike[str], flags: int, *, root: str | os.PathLike[str], mode: int = 0o644) -> int:
    """Open ``path``, a file of ours under ``root``, and return its descriptor: the one way the workbench opens a
    file it appends to, truncates, repairs or replaces in place (the annotation store's label, note, lock and side
    files; the response cache; every verb's ``--out``).

    Every directory from ``root`` down to the file is opened in turn without following a symbolic link (``openat``
    with ``O_NOFOLLOW``), and so is the file itself; the file must then be a regular file. A symbolic link (a
    committed ``labels/x.round1.jsonl -> ../../somefile`` reaches a teammate's clone), a FIFO (opened without
    blocking), a device or a directory raises :class:`NotOurs` naming the path; nothing is written through it.
    ``root`` itself is the user's choice and may be a link. ``flags`` are :func:`os.open`'s (``O_CREAT`` makes
    the file, with ``mode`` less the umask)."""
    import errno
    import fcntl
    import stat

    path, root = Path(path), Path(root)
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        raise NotOurs(f"is not inside {root}; the workbench writes only there", file=str(path)) from None
    if not parts or ".." in parts:
        raise NotOurs(f"is not a file inside {root}", file=str(path))
    nofollow = os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as err:
        raise named(err, root) from None
    here = root
    try:
        for part in parts[:-1]:
            here = here / part
            try:
                inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | nofollow, dir_fd=dir_fd)
            except OSError as err:
                if err.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise NotOurs("is a symbolic link or not a directory; the workbench writes only into plain "
                                  f"directories of {root}", file=str(here)) from None
                raise named(err, here) from None
            dir_fd, outer = inner, dir_fd  # (held before the close: a SIGTERM raised just after it must not make
            os.close(outer)  # the finally below close it again, an EBADF in place of the termination)
        try:
            fd = os.open(parts[-1], flags | nofollow | os.O_NONBLOCK, mode, dir_fd=dir_fd)
        except OSError as err:
            if err.errno == errno.ELOOP:
                raise NotOurs("is a symbolic link; the workbench never writes through one. Remove the link (or "
                              "replace it with a copy of the file) and run again", file=str(path)) from None
            if err.errno in (errno.ENXIO, errno.EISDIR):  # a FIFO with no reader; a directory
                raise NotOurs("is not a regular file; the workbench writes only regular files", file=str(path)) \
                    from None
            raise named(err, path) from None
    finally:
        os.close(dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotOurs("is not a regular file (a FIFO, a device or a socket); the workbench writes only regular "
                          "files", file=str(path))
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_own(path: str | os.PathLike[str], *, root: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (under ``root``) exists, after checking it is a file of ours if it does: a regular file that
    is no symbolic link, under plain directories (:func:`open_own`'s rule, for a file about to be read, replaced by
    a rename or handed to a library that opens it itself); :class:`NotOurs` otherwise."""
    try:
        fd = open_own(path, os.O_RDONLY, root=root)
    except FileNotFoundError:
        return False
    os.close(fd)
    return True


_OS_ERROR = re.compile(r"\(os error (\d+)\)|\[Errno (\d+)\]")
_LOW_SPACE = 1 << 20  # bytes: a write that failed with less free than this failed for want of space


def disk_error(err: BaseException, written: str | os.PathLike[str] | None = None) -> OSError | None:
    """``err`` as an ``OSError`` when it is one, or when a library wrapped one in its own error (polars' Parquet
    writer reports a full disk as ``ComputeError: ... underlying IO error: No space left on device (os error
    28)``); None for any other error.

    Some of polars' write errors lose the cause (a file cut at the process's file size limit is reported as
    ``Invalid thrift: transport error``): with ``written`` (the file being written) the disk is looked at, and a
    file system with under 1 MiB free, or a file that reached ``RLIMIT_FSIZE``, gives ``ENOSPC`` or ``EFBIG``."""
    if isinstance(err, OSError):
        return err
    if isinstance(err, SchemaError):  # (its message quotes the input, which may say anything)
        return None
    match = _OS_ERROR.search(str(err))
    if match is not None:
        code = int(match.group(1) or match.group(2))
        return OSError(code, os.strerror(code))
    if written is None:
        return None
    import errno
    import resource
    import shutil

    place = Path(written)
    while not place.exists() and place != place.parent:
        place = place.parent
    try:
        if shutil.disk_usage(place if place.is_dir() else place.parent).free < _LOW_SPACE:
            return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if limit != resource.RLIM_INFINITY and os.path.isfile(written) and os.path.getsize(written) >= limit:
            return OSError(errno.EFBIG, os.strerror(errno.EFBIG))
    except OSError:
        return None
    return None


@contextmanager
def writes_to(path: str | os.PathLike[str], written: str | os.PathLike[str] | None = None) -> Iterator[None]:
    """Inside, a write's disk error (a full disk, a quota, a file size limit; an ``OSError`` or a library's error
    carrying one) comes out as an ``OSError`` naming ``path`` (the file the user will see); ``written`` is the
    file actually written (a staging copy), looked at when the error lost its cause (:func:`disk_error`). Any
    other error passes unchanged."""
    try:
        yield
    except Exception as err:
        shown = os.fspath(path)
        if isinstance(err, OSError) and isinstance(err.filename, str) and \
                (err.filename == shown or err.filename.startswith(shown.rstrip(os.sep) + os.sep)):
            raise  # (already named by an inner writes_to: the file inside ``path``)
        disk = disk_error(err, written)
        if disk is None:
            raise
        raise named(disk, Path(path)) from None


def named(err: OSError, path: Path) -> OSError:
    """``err`` as an ``OSError`` that names ``path`` (a write's error names no file, or only a temporary one);
    the workbench's one line reads ``No space left on device: PATH``."""
    out = OSError(err.errno, err.strerror or str(err), str(path))
    return out


def records_to_jsonl(records: Iterable[dict[str, Any]], path: Path) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for row in records:
            fh.write(json.dumps(row, ensure_ascii=False, allow_nan=False, default=str))
            fh.write("\n")


def write_jsonl(records: Iterable[dict[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write records as JSON lines, atomically (the file appears whole or not at all).

    Parameters
    ----------
    records : iterable of dict
        The records.
    path : str or os.PathLike
        The file written.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = Path(path)
    atomic_write(path, lambda p: records_to_jsonl(records, p))
    return path



# ---------------------------------------------------------------------------
# steps a signal must not cut in two

_critical = 0
_pending: list[BaseException] = []


@contextmanager
def uninterrupted() -> Iterator[None]:
    """A step SIGTERM must not cut in two (moving a set of tables into place): a termination that arrives inside
    is held (:func:`terminate`) and raised when the step is done, so a directory holds the old set or the new one,
    never a mix. Main thread only, where Python runs signal handlers."""
    global _critical
    _critical += 1
    try:
        yield
    finally:
        _critical -= 1
        if not _critical and _pending:
            held = _pending.pop()
            held.after_step = True  # type: ignore[attr-defined]  # the step it waited for is done: say so
            raise held


def terminate(exc: BaseException) -> None:
    """Raise ``exc`` now, or when the :func:`uninterrupted` step running now is done."""
    if _critical:
        _pending.append(exc)
        return
    raise exc


STALE_AFTER = 3600.0  # seconds: a staging directory older than this, beside an output, belongs to a dead run


def staging_prefix(output: Path) -> str:
    """The name every staging directory beside ``output`` starts with (``.OUTPUT.wb-staging-``): only directories
    so named are ever cleaned up, never a hidden file or directory of someone else's (``.build.bak``)."""
    return f".{Path(output).name}.wb-staging-"


def make_staging(output: Path) -> Path:
    """A fresh staging directory beside ``output`` (:func:`staging_prefix`), after removing stale ones."""
    import tempfile

    clean_stale_staging(output)
    return Path(tempfile.mkdtemp(prefix=staging_prefix(output), dir=Path(output).parent))


def _first_few(paths: list[Path]) -> str:
    """Up to three paths for a message, "..." after them when there are more."""
    return ", ".join(str(p) for p in paths[:3]) + (" ..." if len(paths) > 3 else "")


def clean_stale_staging(output: Path, *, older_than: float = STALE_AFTER) -> list[Path]:
    """Remove the staging left beside ``output`` by runs that were killed (SIGKILL, a machine that went down):
    directories named :func:`staging_prefix` ``*`` older than ``older_than`` seconds (a running import's is
    younger; two imports into one output at once are not supported); nothing else beside ``output`` is touched.
    Returns what was removed; the caller says so."""
    import shutil
    import time

    output = Path(output)
    if not output.parent.is_dir():
        return []
    import logging

    removed, young = [], []
    now = time.time()
    for sibling in output.parent.glob(glob.escape(staging_prefix(output)) + "*"):  # a name may hold * ? [ ]
        try:
            if not sibling.is_dir() or sibling.is_symlink():
                continue
            if now - sibling.stat().st_mtime < older_than:
                young.append(sibling)
                continue
            shutil.rmtree(sibling)
            removed.append(sibling)
        except OSError:
            continue
    log = logging.getLogger("workbench")
    if removed:
        log.info(f"removed {len(removed)} staging director{'y' if len(removed) == 1 else 'ies'} a killed run left "
                 f"beside {output}: {_first_few(removed)}")
    if young:
        log.info(f"left {len(young)} staging director{'y' if len(young) == 1 else 'ies'} beside {output} younger than "
                 f"{older_than / 60:g} minutes (a run writing the same output now, or one killed recently; remove "
                 f"it by hand if none is running): {_first_few(young)}")
    return removed


# ---------------------------------------------------------------------------
# output directories a command replaces whole


def _inside(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def check_not_input(out: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str]]) -> None:
    """An output is never an input, inside one, or a directory holding one: :class:`~workbench.errors.OutputRefused`
    otherwise."""
    target = Path(out).resolve()
    for source in inputs:
        src = Path(source).resolve()
        if _inside(target, src) or _inside(src, target):
            where = "is" if target == src else "is inside" if _inside(target, src) else "holds"
            raise OutputRefused(out, f"{where} the input {source}; the output must be a place of its own")


def file_columns(path: str | os.PathLike[str]) -> set[str] | None:
    """The column names a table file holds (Parquet's schema, a CSV's header, the keys of a JSON-lines file's first
    record), or None when it is none of those or cannot be read: how a verb recognises a file it wrote before."""
    import json as _json

    path = Path(path)
    try:
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            return set(pq.read_schema(path).names)
        with open(path, encoding="utf-8") as fh:
            head = fh.readline(1 << 20)
        if path.suffix == ".csv":
            import csv

            return set(next(csv.reader([head]), []))
        first = _json.loads(head or "{}")
        return set(first) if isinstance(first, dict) else None
    except (OSError, ValueError, UnicodeDecodeError, StopIteration):
        return None
    except Exception:  # noqa: BLE001 - pyarrow's errors for a file that is not Parquet
        return None


def check_out_file(out: str | os.PathLike[str], *, what: str, columns: Iterable[str], force: bool = False,
                   inputs: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """The one rule for a verb's ``--out`` file: absent, empty, or a ``what`` the verb wrote before (recognised by
    holding every one of ``columns``: :func:`file_columns`) is replaced; anything else only with ``force``. Never a
    symbolic link, a directory, a FIFO or a device, and never an input (or inside one).
    :class:`~workbench.errors.OutputRefused` otherwise, saying how to proceed."""
    import stat

    path = Path(out)
    check_not_input(path, inputs)
    try:
        info = path.lstat()
    except FileNotFoundError:
        return path
    if stat.S_ISLNK(info.st_mode):
        raise OutputRefused(out, "is a symbolic link; the workbench never writes through one: name a new file")
    if not stat.S_ISREG(info.st_mode):
        raise OutputRefused(out, f"is not a regular file; name a new file for the {what}")
    if force or info.st_size == 0:
        return path
    found = file_columns(path)
    if found is None or not set(columns) <= found:
        raise OutputRefused(out, f"is a file this command did not write (not a {what}); name a new file, or pass "
                                 "--force to replace it")
    return path


def check_owned_dir(out: str | os.PathLike[str], marker: str, *,
                    inputs: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """``out`` as a directory a command may replace whole: absent, empty, or holding ``marker`` (the file the
    command writes into every directory it makes); never a file, a symbolic link, an input, a directory that
    holds an input or one inside an input. Anything else raises :class:`~workbench.errors.OutputRefused`: the
    command only ever replaces what it made, and there is no force option."""
    given = out
    out = Path(os.path.abspath(out))  # "." and "..": the directory by its own name, written beside itself
    if not out.name:
        raise OutputRefused(given, "is the file system's root; name a new or empty directory")
    if out.is_symlink():
        raise OutputRefused(out, "is a symbolic link; name a new directory (or one this command wrote)")
    check_not_input(out, inputs)
    if out.exists() and not out.is_dir():
        raise OutputRefused(out, "is a file, not a directory this command wrote")
    if out.is_dir() and not (out / marker).is_file() and any(out.iterdir()):
        raise OutputRefused(out, f"is a directory this command did not write (no {marker} in it); name a new "
                                 "or empty directory")
    return out


def replace_owned_dir(out: str | os.PathLike[str], marker: str, build: Callable[[Path], object], *,
                      inputs: Iterable[str | os.PathLike[str]] = (), made_by: str = "") -> Path:
    """Build a directory with ``build(tmp)`` in a fresh temporary sibling of ``out`` and move it into place,
    replacing ``out`` only if :func:`check_owned_dir` allows (checked before the build and again before the
    swap). The new directory holds ``marker``; a failed build removes only its own temporary directory; the
    previous directory is moved to a fresh name of its own before it is removed, so no name someone else chose
    is ever deleted. One run at a time: ``out`` itself is locked (``flock`` on the directory, so no lock file is
    left anywhere) from the check to the swap, a second run is refused at once, and under the lock what a killed
    run left (``.OUT.partial-*``, ``.OUT.old-*``) is removed."""
    import fcntl

    inputs = list(inputs)
    out = check_owned_dir(out, marker, inputs=inputs)
    made = not out.exists()
    out.mkdir(parents=True, exist_ok=True)  # absent: claimed empty, so that there is something to lock
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            made = False  # the other run's, now
            raise OutputRefused(out, "another run is writing it now; wait for that run to finish, or name another "
                                     "directory") from None
        _remove_leftovers(out)  # under the lock: a .partial- or .old- directory of this output is a dead run's
        return _replace_locked(out, marker, build, inputs, made_by)
    except BaseException:
        if made:  # the empty directory claimed above, unless the build's is in its place now
            try:
                out.rmdir()
            except OSError:
                pass
        raise
    finally:
        os.close(fd)


def _remove_leftovers(out: Path) -> None:
    """The temporary siblings of ``out`` a killed run of :func:`replace_owned_dir` left (only names it makes)."""
    import logging
    import shutil

    # exactly the names _replace_locked makes (mkdtemp's suffix, 12 hex digits), the output's name taken literally:
    # ``--out '*'`` once removed every other output's leftovers, and a run still at work's
    made = re.compile(rf"\.{re.escape(out.name)}\.(partial-[a-z0-9_]{{8}}|old-[0-9a-f]{{12}})")
    left = [p for p in out.parent.glob(f".{glob.escape(out.name)}.*-*")
            if made.fullmatch(p.name) and p.is_dir() and not p.is_symlink()]
    for p in left:
        shutil.rmtree(p, ignore_errors=True)
    if left:
        logging.getLogger("workbench").info(f"removed what a killed run left beside {out}: {_first_few(left)}")


def _replace_locked(out: Path, marker: str, build: Callable[[Path], object], inputs: list[str | os.PathLike[str]],
                    made_by: str) -> Path:
    import shutil
    import tempfile
    import uuid

    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        os.chmod(tmp, 0o777 & ~current_umask())
        build(tmp)
        (tmp / marker).write_text(json.dumps({"made_by": made_by or marker}) + "\n", encoding="utf-8")
        with uninterrupted():
            check_owned_dir(out, marker, inputs=inputs)
            old = None
            if out.exists():
                old = out.with_name(f".{out.name}.old-{uuid.uuid4().hex[:12]}")
                out.rename(old)
            tmp.rename(out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


__all__ = ["atomic_write", "check_not_input", "check_out_file", "check_own", "file_columns", "NotOurs", "open_own", "check_owned_dir", "clean_stale_staging", "make_staging", "staging_prefix", "current_umask", "disk_error", "named", "writes_to", "OutputRefused",
           "records_to_jsonl", "replace_owned_dir", "STALE_AFTER", "terminate", "uninterrupted", "write_jsonl"]
