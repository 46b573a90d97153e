"""The log formats the workbench reads: one declaration each, the only place a format is named.

Every part of the workbench that needs to know the formats reads this registry: :func:`workbench.adapters.read_log`
and ``workbench import``/``validate`` (the reader, and which inputs are directories, streamed, labelled),
format sniffing (:func:`sniff_file`, :func:`sniff_directory_format`), the command line's ``--format`` choices and
help, and the docs' format reference (the ``workbench-formats`` directive of ``docs/_ext``). Adding a format is its reader module, one :class:`LogFormat` below, and its
tests.

The module is light on purpose: names, one-line help, cheap sniffing checks and dotted paths. ``workbench --help``
imports it without polars or numpy; a reader is imported only when its format is read (:meth:`LogFormat.load`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any, Literal

__all__ = ["LOG_FORMATS", "LogFormat", "MissingExtra", "register_format"]


class MissingExtra(ImportError):
    """A format (or judge) whose reader needs an optional extra that is not installed: one line naming the extra."""

    def __init__(self, what: str, extra: str, package: str) -> None:
        self.extra, self.package = extra, package
        super().__init__(f"{what} needs the optional extra '{extra}' ({package} is not installed): "
                         f'pip install -e ".[{extra}]" in a checkout, or pip install "compaction-workbench[{extra}]"')


@dataclass(frozen=True)
class LogFormat:
    """One log format: its ``--format`` name, what it reads, its reader and how it is recognised.

    ``reads`` is ``file`` (one log file), ``directory`` (a benchmark's own directory: FRANK's, Who&When's),
    ``sessions`` (a session file or a directory of them, streamed a group of files at a time) or ``file-or-directory``
    (one log file, or a directory of such files read together). ``reader`` and ``runs`` are dotted paths
    (``module:function``): the reader returns the tables; ``runs``, where given, streams ``(line, run, steps,
    compactions)`` one run at a time so that an import holds a bounded chunk. A file is recognised by its suffix,
    else by its first bytes (``head``), else by its first JSON record (``record``), in the order of :data:`LOG_FORMATS`;
    a directory by ``directory`` (a dotted predicate over the path). ``labelled`` formats carry people's labels,
    which an import puts into the output's annotation store. ``extra``: the optional dependency (``pip install -e
    ".[extra]"``) the reader needs, named by ``package``. ``directory_last``: the directory predicate lists the
    directory, so it is asked only when the directory holds no session file (a session tree is walked once)."""

    name: str
    summary: str
    reader: str
    reads: Literal["file", "directory", "sessions", "file-or-directory"] = "file"
    runs: str | None = None
    suffixes: tuple[str, ...] = ()
    head: Callable[[bytes], bool] | None = None
    record: Callable[[Any], bool] | None = None
    directory: str | None = None
    labelled: bool = False
    tables: tuple[str, ...] = ("runs", "steps", "compactions")
    extra: str | None = None
    package: str | None = None
    directory_last: bool = False
    reference: str = field(default="", compare=False)

    def load(self, what: Literal["reader", "runs", "directory"] = "reader") -> Callable[..., Any]:
        """The function a dotted path names (the reader by default), imported now. A reader whose optional extra
        is missing raises :class:`MissingExtra`, one line naming the extra."""
        dotted = getattr(self, what)
        if dotted is None:
            raise LookupError(f"format {self.name!r} has no {what}")
        module, _, name = dotted.partition(":")
        if self.package is not None and what == "reader":
            try:
                import_module(self.package.replace("-", "_"))
            except ImportError:
                raise MissingExtra(f"--format {self.name}", self.extra or self.package, self.package) from None
        return getattr(import_module(module), name)


#: every format, in the order files are sniffed; :func:`register_format` adds one
LOG_FORMATS: dict[str, LogFormat] = {}


def register_format(fmt: LogFormat) -> LogFormat:
    """Add ``fmt`` to :data:`LOG_FORMATS` (a name already there is an error); returns it.

    Parameters
    ----------
    fmt : LogFormat
        The format: its ``--format`` name, what it reads, its reader's dotted path and how it is sniffed.

    Returns
    -------
    LogFormat
        ``fmt``, now in :data:`LOG_FORMATS` (so a module can register at import and keep the value).
    """
    if fmt.name in LOG_FORMATS or fmt.name in ("auto", "sessions"):
        raise ValueError(f"a log format named {fmt.name!r} is registered already")
    LOG_FORMATS[fmt.name] = fmt
    return fmt


def format_names(*, reads: str | None = None, labelled: bool | None = None, streaming: bool | None = None
                 ) -> tuple[str, ...]:
    """The names of the registered formats, in order; ``reads``, ``labelled`` and ``streaming`` select some."""
    return tuple(f.name for f in LOG_FORMATS.values()
                 if (reads is None or f.reads == reads) and (labelled is None or f.labelled == labelled)
                 and (streaming is None or (f.runs is not None) == streaming))


def sniff_file(path: str | os.PathLike[str], head: bytes, first_record: Callable[[], Any]) -> str:
    """The format of the log file ``path``: by its suffix, else its first bytes ``head``, else the record
    ``first_record()`` returns (called only when needed: it reads the file), else ``trajectory``."""
    name = Path(path).name.lower().removesuffix(".gz")
    for fmt in LOG_FORMATS.values():
        if any(name.endswith(s) for s in fmt.suffixes):
            return fmt.name
    for fmt in LOG_FORMATS.values():
        if fmt.head is not None and fmt.head(head):
            return fmt.name
    record = first_record()
    for fmt in LOG_FORMATS.values():
        if fmt.record is not None and fmt.record(record):
            return fmt.name
    return "trajectory"


def sniff_directory_format(path: str | os.PathLike[str], *, last: bool = False) -> str | None:
    """The benchmark or log-directory format that recognises the directory ``path`` (its own predicate), in the
    order of :data:`LOG_FORMATS`; None: none does (a directory of sessions, or nothing the workbench reads).
    ``last``: ask the formats whose predicate lists the directory (``directory_last``), which the caller asks once
    it found no session file; else the others."""
    for fmt in LOG_FORMATS.values():
        if fmt.directory is not None and fmt.directory_last == last and fmt.load("directory")(path):
            return fmt.name
    return None


def inspect_head(head: bytes) -> bool:
    """Whether a file's first bytes are an inspect_ai ``.json`` log's: an object naming its ``version`` at once and
    its ``eval``."""
    return head.lstrip().startswith(b"{") and b'"version"' in head[:200] and b'"eval"' in head


def _keys(record: Any) -> Mapping[str, Any]:
    return record if isinstance(record, dict) else {}


# --- the formats, in the order files are sniffed -------------------------------------------------------------------

register_format(LogFormat(
    "tau-bench", "tau-bench historical_trajectories: a JSON list of runs with their 'traj'",
    "workbench.adapters._tau_bench:read_tau_bench",
    head=lambda head: head.startswith(b"[") and b'"traj"' in head))
register_format(LogFormat(
    "inspect", "inspect_ai evaluation logs: a .eval (or .json) log, or a directory of them; one run per sample and "
    "epoch, one compaction per CompactionEvent",
    "workbench.adapters._inspect:read_inspect", reads="file-or-directory", suffixes=(".eval",),
    head=inspect_head,
    directory="workbench.adapters._inspect:is_inspect_directory", directory_last=True, extra="inspect",
    package="inspect-ai"))
register_format(LogFormat(
    "openai", "OpenAI chat-completions message lists, one run per JSON line ('messages')",
    "workbench.adapters._openai_chat:read_openai_chat", runs="workbench.adapters._openai_chat:openai_runs",
    record=lambda r: "messages" in _keys(r)))
register_format(LogFormat(
    "labelled-summaries", "human-labelled summaries, one JSON record per summary (a header line first)",
    "workbench.adapters._labelled_summaries:read_labelled_summaries", labelled=True,
    record=lambda r: set(_keys(r)) == {"header"} or "source_id" in _keys(r) and ("summary" in r or "run_id" not in r),
    tables=("runs", "steps", "compactions", "entries")))
register_format(LogFormat(
    "claude-code", "Claude Code session transcripts: a session file or a directory of them (~/.claude/projects)",
    "workbench.adapters._claude_code:read_claude_code", reads="sessions",
    record=lambda r: "sessionId" in _keys(r)))
register_format(LogFormat(
    "codex", "Codex CLI rollouts: a rollout file or a directory of them (~/.codex/sessions)",
    "workbench.adapters._codex:read_codex", reads="sessions",
    record=lambda r: "payload" in _keys(r) and "type" in _keys(r)))
register_format(LogFormat(
    "frank", "the FRANK benchmark's directory (FRANK's own files, or the project's compact copy)",
    "workbench.adapters._frank:read_frank", reads="directory", labelled=True,
    directory="workbench.adapters._frank:is_frank", tables=("runs", "steps", "compactions", "entries")))
register_format(LogFormat(
    "summedits", "SummEdits' per-domain files (summedits_<domain>.json, or the project's .json.gz copy): summaries of "
    "dialogues, transcripts, emails and articles labelled consistent or not with their document",
    "workbench.adapters._summedits:read_summedits", reads="file-or-directory",
    head=lambda head: head.lstrip().startswith(b"[") and b'"original_summary"' in head and b'"doc"' in head,
    directory="workbench.adapters._summedits:is_summedits", tables=("runs", "steps", "compactions", "entries")))
register_format(LogFormat(
    "who-and-when", "Who&When's labelled failure logs (Algorithm-Generated/ and Hand-Crafted/, or a folder of "
    ".json logs)",
    "workbench.adapters._who_and_when:read_who_and_when", reads="directory", labelled=True,
    directory="workbench.adapters._who_and_when:is_who_and_when", tables=("runs", "steps")))
register_format(LogFormat(
    "trajectory", "the workbench's own trajectory JSONL, one run per line (what a file no other format recognises is read as)",
    "workbench.adapters._trajectory:read_trajectories", runs="workbench.adapters._trajectory:trajectory_runs"))
