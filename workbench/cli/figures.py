"""``workbench figures``: execute every notebook and export the figures (:func:`workbench.notebooks.run_all`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.cli.args import UsageError, at_least, existing_dir, verb


def add(sub: argparse._SubParsersAction) -> None:
    p = verb(sub, "figures", "execute every notebook and export figures/ (the main job)")
    p.add_argument("--notebooks", default="notebooks", help="directory of .ipynb notebooks")
    p.add_argument("--build", default="build/notebooks", help="where executed copies go")
    p.add_argument("--timeout", type=int, default=1200, help="seconds per cell")
    p.add_argument("--data", default="data/testbed", help="the default testbed, generated here if missing")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="set a notebook parameter in every notebook (repeatable; VALUE is read as a Python "
                        "literal when it is one, else as text), as papermill -p does")
    p.add_argument("--only", action="append", default=None, metavar="NAME",
                   help="run only this notebook (repeatable; the name without .ipynb)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workbench.datasets import ensure_testbed
    from workbench.notebooks import parse_param, run_all

    at_least("--timeout", args.timeout, 1)
    notebooks = existing_dir(args.notebooks, "directory of notebooks")
    try:
        parameters = dict(parse_param(p) for p in args.param)
    except ValueError as err:
        raise UsageError("--param", "NAME=VALUE", str(err).split("got ")[-1]) from None
    if args.only:
        missing = [n for n in args.only if not (notebooks / f"{n}.ipynb").exists()]
        if missing:
            raise UsageError("--only", f"notebooks in {notebooks}/", ", ".join(missing))
    ensure_testbed(args.data)
    report = run_all(notebooks, Path(args.build), timeout=args.timeout, parameters=parameters or None,
                     names=args.only)
    print(report)
    return report.exit_code
