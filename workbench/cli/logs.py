"""``workbench validate | import | export | entries``: agent logs in, tables out, and back."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from typing import TYPE_CHECKING

from workbench.cli.args import UsageError, existing_dir, existing_file, out_file, verb
from typing import Any
from workbench.errors import SchemaError
from workbench.adapters._formats import LOG_FORMATS, format_names
from workbench.tables._vocabulary import TABLE_NAMES, TRAJECTORY_TABLES

if TYPE_CHECKING:
    from workbench._util.jsonl import BadLines


def _formats_help() -> str:
    """``--format``'s help: every registered format and what it reads, from the registry."""
    return "log format (auto: sniffed) -- " + "; ".join(f"{f.name}: {f.summary}" for f in LOG_FORMATS.values())

#: inputs at least this large say what is being done before the work starts (smaller ones finish within a second)
ANNOUNCE_BYTES = 5_000_000


def add(sub: argparse._SubParsersAction) -> None:
    p = verb(sub, "validate", "check a trajectory log (or a table file) and report the first error")
    p.add_argument("file", help="the log (JSONL, tau-bench JSON) or, with --table, one table file")
    p.add_argument("--format", default="auto", choices=["auto", *LOG_FORMATS], help=_formats_help())
    p.add_argument("--table", choices=sorted(TABLE_NAMES), help="validate a single table file instead of a log")
    _skip_invalid_option(p)
    _line_bound_option(p)
    p.set_defaults(func=run_validate)

    p = verb(sub, "import", "load a trajectory log into Parquet tables")
    p.add_argument("file", help="the log to import")
    p.add_argument("--out", required=True, help="directory for runs/steps/compactions.parquet")
    p.add_argument("--format", default="auto", choices=["auto", *LOG_FORMATS], help=_formats_help())
    p.add_argument("--entries", action="store_true", help="also split candidate summaries into entries.parquet")
    p.add_argument("--force", action="store_true", help="replace the tables already in --out (the whole set: "
                   "tables the new log does not have are removed, never mixed with another log's)")
    _skip_invalid_option(p)
    _line_bound_option(p)
    p.add_argument("--since", help="sessions (claude-code, codex) that end on or after this ISO date or time")
    p.add_argument("--until", help="sessions that start on or before this ISO date or time (2026-12-01 is its start)")
    p.add_argument("--project", help="sessions whose working directory or project directory name contains this")
    p.add_argument("--timings", action="store_true", help="say on stderr how long each stage took (session logs and "
                   "JSONL: scan, parse, tables, write)")
    p.set_defaults(func=run_import)

    p = verb(sub, "usage", "what Claude Code and Codex sessions spent: tokens per session, as ccusage counts them")
    p.add_argument("path", help="a session file, ~/.claude/projects, ~/.codex/sessions, or a home with both")
    p.add_argument("--out", help="write the per-session table here (.csv or .parquet; default: print it)")
    p.add_argument("--by", choices=["session", "day", "model", "project"], default="session",
                   help="one row per session (default), per UTC day of the replies (ccusage daily --timezone UTC), "
                        "per model, or per project directory")
    p.add_argument("--json", action="store_true", help="print the rows as JSON (cost null where a model has no price)")
    p.add_argument("--force", action="store_true", help="replace an --out file that this command did not write")
    p.add_argument("--skip-invalid", dest="skip_invalid", action="store_true",
                   help="skip files and directories that cannot be read and lines over the line bound, count them "
                        "and name the first few, instead of stopping at the first")
    _line_bound_option(p)
    p.set_defaults(func=run_usage)

    p = verb(sub, "export", "write a directory of tables back as trajectory JSONL")
    p.add_argument("dir", help="a workbench directory")
    p.add_argument("--format", default="jsonl", choices=["jsonl"], help="the trajectory JSONL format")
    p.add_argument("--out", required=True, help="the .jsonl file to write")
    p.set_defaults(func=run_export)

    p = verb(sub, "entries", "split the candidate summaries of DIR into entries.parquet")
    p.add_argument("dir", help="a workbench directory with a compactions table")
    p.set_defaults(func=run_entries)


def _skip_invalid_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--skip-invalid", dest="skip_invalid", action="store_true",
                   help="session logs (claude-code, codex): skip every bad line, count them and name the first few, "
                        "instead of stopping at the first (a half-written last line is always skipped, with a warning)")


def _line_bound_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-line-bytes", dest="max_line_bytes", type=_positive_bytes, default=None, metavar="N",
                   help="the longest line a log may have, in bytes (default 64 MiB, or WORKBENCH_MAX_LINE_BYTES): a "
                        "longer line is an error naming it, or skipped and counted with --skip-invalid")


def _positive_bytes(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of bytes, at least 1, got {text!r}")
    return int(text)


def _apply_line_bound(args: argparse.Namespace) -> None:
    """``--max-line-bytes`` for this process and the worker processes it starts (they read the environment)."""
    import os

    from workbench._util.jsonl import LINE_BOUND_ENV, max_line_bytes

    if getattr(args, "max_line_bytes", None) is not None:
        os.environ[LINE_BOUND_ENV] = str(args.max_line_bytes)
    max_line_bytes()  # a malformed WORKBENCH_MAX_LINE_BYTES is named before anything is read


class _PointToSkip:
    """A context: a bad line of a log, read without ``--skip-invalid``, is an error that says the option exists."""

    def __init__(self, args: argparse.Namespace, sessions: bool = True) -> None:
        self.skip = getattr(args, "skip_invalid", False) or not sessions  # the option reads session logs only

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, err: BaseException | None, tb: object) -> None:
        if isinstance(err, SchemaError) and not self.skip and err.line is not None and err.file:
            raise SchemaError(f"{err}; --skip-invalid skips every bad line, counts them and names the first few") \
                from None


def _sessions(path: Path, fmt: str) -> bool:
    """Whether ``path`` is read as session logs (what --skip-invalid applies to)."""
    if fmt != "auto":
        return LOG_FORMATS[fmt].reads == "sessions"
    if path.is_dir():
        from workbench.adapters._formats import sniff_directory_format

        return sniff_directory_format(path) is None  # a directory of sessions, not a benchmark's directory
    from workbench.adapters._formats import sniff_file
    from workbench.adapters._logfiles import _file_format

    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).lstrip()
        if sniff_file(path, head, lambda: None) not in ("trajectory", *format_names(reads="sessions")):
            return False  # its suffix or first bytes name a format that is not a session's (an inspect_ai log)
        return _file_format(path) is not None  # the first record that says is a session's
    except (OSError, SchemaError):
        return False


def _report_bad(bad: BadLines) -> None:
    line = bad.summary()
    if line:
        print(f"warning: {line}", file=sys.stderr)


def _iso(value: str) -> bool:
    from datetime import datetime

    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _log_path(args: argparse.Namespace, what: str = "log file") -> Path:
    """The FILE argument: a directory of sessions for the formats that read one, else a file that exists."""
    reads_directory = args.format != "auto" and LOG_FORMATS[args.format].reads != "file"
    if (reads_directory or args.format == "auto" and not getattr(args, "table", None)) and Path(args.file).is_dir():
        return Path(args.file)  # a directory of sessions or FRANK's files (format sniffed when not given)
    return existing_file(args.file, what)


def _starting(doing: str, path: Path) -> None:
    from workbench._util.jsonl import BadLines
    from workbench.adapters._logfiles import tree_listing
    from workbench.adapters._logfiles import input_bytes

    # a directory of sessions: the bytes of its session files, from the walk the import reads them by
    listing = tree_listing(path, "*.jsonl", BadLines(skip_invalid=True), formats=True) if path.is_dir() else []
    size = sum(size for _file, size, _fmt in listing) or input_bytes(path)
    if size >= ANNOUNCE_BYTES:
        print(f"{doing} {path} ({size / 1e6:.0f} MB) ...", file=sys.stderr, flush=True)


def run_usage(args: argparse.Namespace) -> int:
    from workbench._util.executors import rare_collections

    with rare_collections():  # a session's row, parts and view are small acyclic objects made by the hundred thousand
        return _run_usage(args)


def _run_usage(args: argparse.Namespace) -> int:
    from workbench._util.jsonl import BadLines
    from workbench.adapters import usage_rows
    from workbench.analyses._pricing import UsageView

    _apply_line_bound(args)
    if args.out:
        out_file("--out", args.out, (".csv", ".parquet"))
    if not Path(args.path).exists():
        raise SchemaError("no such file or directory, expected session files", file=args.path)
    key = {"session": ("session_id", "usage_input_tokens", "usage_output_tokens"), "day": ("day", "input", "output"),
           "model": ("model", "input", "output"), "project": ("project_dir", "input", "output")}[args.by]
    if args.out:
        from workbench._util.atomic import check_out_file

        # never into the sessions it counts, never over a file it did not write (the one --out rule)
        check_out_file(args.out, what=f"usage table by {args.by}", columns=key, force=args.force,
                       inputs=[args.path])
    bad = BadLines(skip_invalid=args.skip_invalid)
    # the view is made as the sessions' rows become final, while the workers still read (the 1 GB home: its
    # 47,353 rows and their prices were most of the second after the last file was read)
    groups = None if args.out and args.by == "session" else UsageView(args.by)
    with _PointToSkip(args):
        rows = usage_rows(args.path, bad, sink=groups)  # counted without the table library
    _report_bad(bad)
    if groups is None:
        from workbench.adapters._usage import usage_table
        from workbench._util.atomic import atomic_write

        from workbench._util.spreadsheet import neutralised

        table = usage_table(rows)
        flat = neutralised(table.with_columns(table["models"].list.join(" ")))  # a CSV people open
        atomic_write(Path(args.out), (lambda tmp: flat.write_csv(tmp)) if args.out.endswith(".csv")
                     else (lambda tmp: table.write_parquet(tmp)))
        print(f"{args.out}: {table.height} session(s)")
        return 0
    view = groups.result()
    if args.out:  # --by day, model or project: the view's rows, one per group, as printed
        from workbench._util.atomic import atomic_write
        from workbench._util.spreadsheet import neutralised
        from workbench.analyses._pricing import usage_view_frame

        grouped = usage_view_frame(view)
        atomic_write(Path(args.out), (lambda tmp: neutralised(grouped).write_csv(tmp)) if args.out.endswith(".csv")
                     else (lambda tmp: grouped.write_parquet(tmp)))
        print(f"{args.out}: {grouped.height} {args.by}(s)")
        return 0
    if args.json:
        import orjson

        try:  # (the 1 GB home's 47,353 sessions: 0.04 s, where the standard module's indented text took 0.35 s)
            text = orjson.dumps(view, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
        except TypeError:  # a sum beyond 64 bits, which orjson does not write
            text = (json.dumps(view, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        sys.stdout.flush()
        if hasattr(sys.stdout, "buffer"):
            sys.stdout.buffer.write(text)
        else:  # a stream of text only (a notebook's)
            sys.stdout.write(text.decode("utf-8"))
        return 0
    print_usage(view, args.by)
    return 0


def print_usage(view: list[dict[str, Any]], by: str) -> None:
    """The view as a table with a total line and the price snapshot's date; a row with replies the price table
    cannot price shows the cost of the rest, and the total line says how many replies are unpriced."""
    from workbench.analyses._pricing import PRICES_AS_OF, USAGE_TOKENS as _TOKENS

    first = {"session": ("client", "session"), "day": ("day",), "model": ("model",), "project": ("project",)}[by]
    keys = {"session": ("client", "session_id"), "day": ("day",), "model": ("model",), "project": ("project_dir",)}[by]
    widths = [max([len(h), *(len(str(g[k])) for g in view)]) for h, k in zip(first, keys, strict=True)]
    extra = (("day", 10), ("models", 24)) if by == "session" else ()
    line = "  ".join(f"{h:<{w}}" for h, w in zip(first, widths, strict=True))
    line += "".join(f"  {h:<{w}}" for h, w in extra)
    print(line + "".join(f"{h:>14}" for _, h in _TOKENS) + f"{'cost USD':>12}  unpriced")
    for g in view:
        row = "  ".join(f"{str(g[k]):<{w}}" for k, w in zip(keys, widths, strict=True))
        if by == "session":
            row += "".join(f"  {str(v)[:w]:<{w}}" for v, (_, w) in zip((g["day"] or "-", ",".join(g["models"])), extra,
                                                                    strict=True))
        cost = "unknown" if g["cost_usd"] is None else f"{g['cost_usd']:.2f}"
        unpriced = f"  {g['unpriced_replies']:,} repl{'y' if g['unpriced_replies'] == 1 else 'ies'}" \
            if g["unpriced"] else ""
        print(row + "".join(f"{g[k]:>14,}" for k, _ in _TOKENS) + f"{cost:>12}{unpriced}")
    known = sum(g["cost_usd"] for g in view if g["cost_usd"] is not None)
    label = f"total ({len(view)} {by if by != 'session' else 'session'}{'s' if len(view) != 1 else ''})"
    pad = sum(widths) + 2 * (len(widths) - 1) + sum(2 + w for _, w in extra)
    print(f"{label:<{pad}}" + "".join(f"{sum(g[k] for g in view):>14,}" for k, _ in _TOKENS)
          + f"{known:>12.2f}")
    unpriced = sum(g["unpriced_replies"] for g in view)
    models = sorted({m for g in view for m in g["unpriced"] if m is not None})
    print(f"cost as ccusage computes it: a reply's logged costUSD, else its tokens at LiteLLM's prices of "
          f"{PRICES_AS_OF}")
    if any(g["unpriced"] for g in view):  # (models: their names; a model without one is unpriced too)
        print(f"{unpriced:,} repl{'y' if unpriced == 1 else 'ies'} unpriced: no price for "
              f"{', '.join(models) or 'a model without a name'} in that table; the total counts the priced replies")


def run_validate(args: argparse.Namespace) -> int:
    from workbench.adapters._logfiles import one_walk

    with one_walk():  # a session tree walked once: its size, its format and its files
        return _validate(args)


def _validate(args: argparse.Namespace) -> int:
    from workbench import datasets
    from workbench._util.jsonl import BadLines
    from workbench.tables._files import read_table

    _apply_line_bound(args)
    path = _log_path(args, "table file" if args.table else "log file")
    if args.table:
        frame = read_table(path, args.table)
        print(f"{path}: ok ({frame.height} {args.table} rows)")
        return 0
    _starting("validating", path)
    bad = BadLines(skip_invalid=args.skip_invalid)
    with _PointToSkip(args, _sessions(path, args.format)):
        counted = datasets.import_log(path, None, args.format, bad=bad)
    _report_bad(bad)
    counts = ", ".join(f"{counted.get(t, 0)} {t}" for t in TRAJECTORY_TABLES)
    print(f"{path}: ok ({counts})")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from workbench._util.executors import rare_collections
    from workbench.adapters._logfiles import one_walk

    # a session tree walked once: the workers started, its size, its format and its files; the rows, run dicts and
    # column lists are small acyclic objects by the million (the 1 GB home's import: 21.7 -> 20.7 s)
    with one_walk(), rare_collections():
        return _import(args)


def _import(args: argparse.Namespace) -> int:
    _apply_line_bound(args)
    path = _log_path(args)
    _start_workers(path, args.format)
    from workbench import datasets
    from workbench._util.jsonl import BadLines
    from workbench.tables._files import table_files

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError("--out", "a directory", f"the file {args.out!r}")
    existing = table_files(out)
    if existing and not args.force:
        raise UsageError("--out", "an empty or new directory (or --force to replace its tables)",
                         f"{args.out!r}, which holds {', '.join(p.name for p in existing)}")
    _starting("importing", path)
    bad = BadLines(skip_invalid=args.skip_invalid)
    for option in ("since", "until"):
        value = getattr(args, option)
        if value is not None and not _iso(value):
            raise UsageError(f"--{option}", "an ISO date or time (2026-11-20 or 2026-11-20T10:00)", repr(value))
    timings: dict[str, float] = {}
    clock = time.perf_counter()
    with _PointToSkip(args, _sessions(path, args.format)):
        counted = datasets.import_log(path, out, args.format, entries=args.entries, replace=True, bad=bad,
                                      since=args.since, until=args.until, project=args.project, timings=timings)
    _report_bad(bad)
    if args.timings:
        stages = ", ".join(f"{stage} {seconds:.2f} s" for stage, seconds in timings.items())
        print(f"timings: {stages}{', ' if stages else ''}total {time.perf_counter() - clock:.2f} s", file=sys.stderr)
    counts = ", ".join(f"{n} {name}" for name, n in counted.items())
    print(f"{args.file} -> {out}/ ({counts})")
    return 0


def _start_workers(path: Path, fmt: str | None) -> None:
    """Start the worker processes a large Claude Code tree is read with before this command's own imports, so
    that theirs overlap them (the reader takes them: workbench.adapters._claude_code.claude_code_runs)."""
    from workbench._util.executors import start_workers
    from workbench.adapters._logfiles import import_workers

    if fmt in (None, "auto", "claude-code") and (n := import_workers(path)):
        start_workers(n, "workbench.adapters._claude_lines")


def run_export(args: argparse.Namespace) -> int:
    from workbench import adapters
    from workbench.datasets import load

    out_file("--out", args.out, (".jsonl",))
    tables = load(existing_dir(args.dir), names=TRAJECTORY_TABLES)
    out = adapters.write_trajectories(tables, args.out)
    print(f"{args.dir} -> {out} ({tables['runs'].height} runs)")
    return 0


def run_entries(args: argparse.Namespace) -> int:
    from workbench.summaries._entries import write_entries

    directory = existing_dir(args.dir, "workbench directory")
    if not any((directory / f"compactions.{ext}").exists() for ext in ("parquet", "jsonl")):
        raise SchemaError("no compactions table (compactions.parquet or .jsonl)", file=str(directory))
    from workbench.summaries._entries import given_entries

    if (given := given_entries(directory)) is not None:
        print(f"{args.dir}: {given} entries, as the log gave them (a labelled summary's own sentences): kept, "
              "never split again")
        return 0
    n = write_entries(directory)  # in batches: memory bounded by a batch, not the log
    print(f"{args.dir}/entries.parquet: {n} entries")
    return 0


__all__ = ["add", "ANNOUNCE_BYTES", "run_entries", "run_export", "run_import", "run_validate"]
