"""The ``workbench`` parser and its one error path.

Verbs: ``validate | import | usage | export | entries | judge | attribute | simulate | sample | label | agree |
adjudicate | labelstudio | explore | figures | serve-model`` (one module each or per group, see :mod:`workbench.cli`).

Every verb checks its arguments before it does any work, and every problem is one line on standard error,
``workbench VERB: what is wrong, and what is expected``: a bad option is a
:class:`~workbench.cli.args.UsageError` (``option --tau: expected ..., got ...``), a bad input file a
:class:`~workbench.errors.SchemaError` (``FILE:LINE: field 'x': expected ..., got ...``); exit 2, nothing
written. An unexpected exception is a bug: one line with a hint to rerun with ``--debug`` for the traceback,
exit 1. Every output is written to a temporary path and moved into place.
"""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from collections.abc import Sequence

from workbench.cli import attribute, explore, figures, judge, labeling, labelstudio, logs, serve_model, simulate
from workbench._util.atomic import OutputRefused
from workbench.cli.args import UsageError
from workbench._util.executors import ExecutorUnavailable, WorkerStopped
from workbench._util.jsonl import LogWarning
from workbench.errors import SchemaError

#: the verb modules, in the order ``workbench --help`` lists them
VERBS = (logs, judge, attribute, simulate, labeling, labelstudio, explore, figures, serve_model)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: ``workbench VERB: what is wrong`` and exit 2 (no usage dump)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: {message}", file=sys.stderr)
        raise SystemExit(2)


class _Version(argparse.Action):
    """``--version``: the installed package's version, read only when asked (importlib.metadata costs start-up)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the installed version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        import workbench

        print(f"workbench {workbench.__version__}")
        raise SystemExit(0)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="workbench", description="Compaction Workbench: one verb per step, from an agent log "
                     "to the exported figures.")
    parser.add_argument("--version", action=_Version)
    parser.add_argument("--debug", action="store_true", help="show the traceback of an unexpected error")
    sub = parser.add_subparsers(dest="command", required=True, metavar="VERB",
                                title="verbs (workbench VERB --help for each)")
    for module in VERBS:
        module.add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    verb = f"workbench {args.command}"
    _log_to_stderr()
    previous = _on_sigterm(_terminate)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", LogWarning)
            warnings.showwarning = lambda message, *_: print(f"{verb}: warning: {message}", file=sys.stderr)
            return int(args.func(args))
    except ExecutorUnavailable as err:  # the library names what was asked; the option is ours
        print(f"{verb}: --{err.what} {err}", file=sys.stderr)
        return 2
    except (SchemaError, UsageError, OutputRefused) as err:
        print(f"{verb}: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"{verb}: {err.strerror or err}{f': {err.filename}' if err.filename else ''}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{verb}: interrupted", file=sys.stderr)
        return 130
    except WorkerStopped as err:  # killed from outside (kill -9, out of memory): not a bug of ours
        print(f"{verb}: {err}", file=sys.stderr)
        return 1
    except Terminated as err:
        if getattr(err, "after_step", False):  # held until the new outputs were in place
            print(f"{verb}: terminated (SIGTERM) just after the new outputs were moved into place: they are whole",
                  file=sys.stderr)
        else:
            print(f"{verb}: terminated (SIGTERM); outputs already in place are whole, the one being written was "
                  "not moved into place (a batch of labels: none of it was kept)", file=sys.stderr)
        return 143
    except Exception as err:  # noqa: BLE001 - a bug: one line, the traceback on request
        if args.debug:
            raise
        text = " ".join(str(err).split())[:200]
        print(f"{verb}: internal error ({type(err).__name__}: {text}); this is a bug -- rerun with --debug "
              "for the traceback", file=sys.stderr)
        return 1
    finally:
        _on_sigterm(previous)


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a message comes (a test may have replaced it since)."""

    @property
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, value: object) -> None:
        pass


def _log_to_stderr() -> None:
    """The library's messages (the ``workbench`` logger: progress, what was generated, derived or skipped) go to
    standard error as plain lines while a verb runs; the library itself never prints."""
    logger = logging.getLogger("workbench")
    if not any(getattr(h, "_workbench_cli", False) for h in logger.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        handler._workbench_cli = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)


class Terminated(BaseException):
    """SIGTERM (``kill``, a batch system's time limit) raised as an exception: the verb unwinds like Ctrl-C, so
    its staging directories and temporary files are removed instead of left beside the output."""


def _terminate(signum: int, frame: object) -> None:
    from workbench._util.atomic import terminate

    terminate(Terminated())  # held while a set of tables moves into place, raised right after


def _on_sigterm(handler: object) -> object:
    """Install ``handler`` for SIGTERM (from the main thread only; elsewhere nothing changes); the previous one."""
    import signal
    import threading

    if handler is None or threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, handler)  # type: ignore[arg-type]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


__all__ = ["build_parser", "main", "Terminated", "VERBS"]
