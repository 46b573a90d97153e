"""Argument checks shared by the verbs: every option is checked before any work, and a bad one is a
:class:`UsageError` (``option --tau: expected a threshold in [0, 1], got 2.0``); bad data stays a
:class:`~workbench.errors.SchemaError` (``FILE:LINE: field 'x': ...``)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from workbench.errors import SchemaError


class UsageError(ValueError):
    """A command-line option outside what its verb accepts: which option, what was expected, what came."""

    def __init__(self, option: str, expected: str, got: str) -> None:
        self.option, self.expected, self.got = option, expected, got
        super().__init__(f"option {option}: expected {expected}, got {got}")


def _a(what: str) -> str:
    return f"{'an' if what[:1] in 'aeiou' else 'a'} {what}"


def existing_file(path: str | Path, what: str = "file") -> Path:
    """``path`` as an input file that exists (not a directory)."""
    p = Path(path)
    if p.is_dir():
        raise SchemaError(f"is a directory, expected {_a(what)}", file=str(path))
    if not p.exists():
        raise SchemaError(f"no such file, expected {_a(what)}", file=str(path))
    return p


def existing_dir(path: str | Path, what: str = "directory of tables") -> Path:
    """``path`` as an input directory that exists."""
    p = Path(path)
    if not p.exists():
        raise SchemaError(f"no such directory, expected {_a(what)}", file=str(path))
    if not p.is_dir():
        raise SchemaError(f"is a file, expected {_a(what)}", file=str(path))
    return p


def at_least(option: str, value: float | None, low: float, what: str = "an integer") -> None:
    if value is None:
        return
    if (isinstance(value, float) and not math.isfinite(value)) or value < low:
        raise UsageError(option, f"{what} >= {low:g}", repr(value))


def out_file(option: str, path: str, suffixes: tuple[str, ...]) -> None:
    """``path`` names an output file with one of ``suffixes`` (not an existing directory)."""
    if Path(path).suffix not in suffixes:
        raise UsageError(option, f"a file name ending in {' or '.join(suffixes)}", repr(path))
    if Path(path).is_dir():
        raise UsageError(option, "a file name", f"the directory {path!r}")


class DefaultsHelp(argparse.ArgumentDefaultsHelpFormatter):
    """argparse's defaults formatter, saying a default once and only where there is one: not on a required option,
    a flag, an option whose default is "not given" (None), or one whose help already says its default."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if (action.required or action.default is None or action.default is argparse.SUPPRESS
                or isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction))
                or "default" in text):
            return text
        return super()._get_help_string(action)


def verb(sub: argparse._SubParsersAction, name: str, summary: str) -> argparse.ArgumentParser:
    """A verb's parser: its one-line summary in ``workbench --help``, every default shown in its own help once."""
    return sub.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".",
                          formatter_class=DefaultsHelp)


def executor_options(p: argparse.ArgumentParser, unit: str) -> None:
    p.add_argument("--executor", choices=["local", "ray"], default="local",
                   help=f"where the work runs: here, or sharded by {unit} over Ray (the scale extra)")
    p.add_argument("--address", default=None,
                   help="with --executor ray: the cluster ('auto', or ray://HEAD:10001); default a local Ray")


__all__ = ["at_least", "DefaultsHelp", "executor_options", "existing_dir", "existing_file", "out_file", "UsageError", "verb"]
