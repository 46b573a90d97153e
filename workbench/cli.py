"""The ``workbench`` command: ``validate | import | export | entries | figures``.

Every verb reports bad input as one line ``FILE:LINE: field 'x': expected ..., got ...``
on standard error and exits 2; nothing is written when the input is bad.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from workbench import io, schema
from workbench.schema import SchemaError


def _cmd_validate(args: argparse.Namespace) -> int:
    path = Path(args.file)
    if args.table:
        frame = io.read_table(path, args.table)
        print(f"{path}: ok ({frame.height} {args.table} rows)")
        return 0
    tables = io.read_log(path, args.format)
    counts = ", ".join(f"{tables[t].height} {t}" for t in io.TRAJECTORY_TABLES)
    print(f"{path}: ok ({counts})")
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    tables = io.read_log(args.file, args.format)
    if args.entries:
        from workbench.summary import entries_table

        tables["entries"] = entries_table(tables["compactions"])
    out = io.write_tables(tables, args.out)
    counts = ", ".join(f"{frame.height} {name}" for name, frame in tables.items())
    print(f"{args.file} -> {out}/ ({counts})")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    if args.format != "jsonl":
        raise SchemaError(field="--format", expected="'jsonl'", got=repr(args.format))
    tables = io.read_tables(args.dir, io.TRAJECTORY_TABLES)
    if "runs" not in tables:
        raise SchemaError("no runs table (runs.parquet or runs.jsonl)", file=str(args.dir))
    out = io.write_trajectories(tables, args.out)
    print(f"{args.dir} -> {out} ({tables['runs'].height} runs)")
    return 0


def _cmd_entries(args: argparse.Namespace) -> int:
    from workbench.summary import entries_table

    tables = io.read_tables(args.dir, ("runs", "compactions"))
    if "compactions" not in tables:
        raise SchemaError("no compactions table", file=str(args.dir))
    entries = entries_table(tables["compactions"])
    io.write_tables({"entries": entries}, args.dir)
    print(f"{args.dir}/entries.parquet: {entries.height} entries")
    return 0


def _cmd_figures(args: argparse.Namespace) -> int:
    from workbench.notebooks import run_all

    return run_all(Path(args.notebooks), Path(args.build), timeout=args.timeout)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="workbench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("validate", help="check a trajectory log (or a table file) and report the first error")
    p.add_argument("file")
    p.add_argument("--format", default="auto", choices=["auto", *io.FORMATS])
    p.add_argument("--table", choices=sorted(schema.TABLES), help="validate a single table file instead of a log")
    p.set_defaults(func=_cmd_validate)

    p = sub.add_parser("import", help="load a trajectory log into Parquet tables")
    p.add_argument("file")
    p.add_argument("--out", required=True, help="directory for runs/steps/compactions.parquet")
    p.add_argument("--format", default="auto", choices=["auto", *io.FORMATS])
    p.add_argument("--entries", action="store_true", help="also split candidate summaries into entries.parquet")
    p.set_defaults(func=_cmd_import)

    p = sub.add_parser("export", help="write a directory of tables back as trajectory JSONL")
    p.add_argument("dir")
    p.add_argument("--format", default="jsonl")
    p.add_argument("--out", required=True)
    p.set_defaults(func=_cmd_export)

    p = sub.add_parser("entries", help="split the candidate summaries of DIR into entries.parquet")
    p.add_argument("dir")
    p.set_defaults(func=_cmd_entries)

    p = sub.add_parser("figures", help="execute every notebook and export figures/ (the main job)")
    p.add_argument("--notebooks", default="notebooks")
    p.add_argument("--build", default="build/notebooks", help="where executed copies go")
    p.add_argument("--timeout", type=int, default=1200, help="seconds per cell")
    p.set_defaults(func=_cmd_figures)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except SchemaError as err:
        print(err, file=sys.stderr)  # FILE:LINE: field 'x': expected ..., got ...
        return 2
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
