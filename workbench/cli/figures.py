"""``workbench figures``: execute every notebook and export the figures (:func:`workbench.notebooks.run_all`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from workbench.cli.args import UsageError, at_least, existing_dir, verb


def add(sub: argparse._SubParsersAction) -> None:
    p = verb(sub, "figures", "execute every notebook and export figures/ (the main job)")
    p.add_argument("--notebooks", default=None, help="directory of .ipynb notebooks (default: notebooks/ of the "
                   "project around the working directory, else of the checkout workbench was installed from)")
    p.add_argument("--build", default=None, help="where executed copies go (default: build/notebooks, the copies the "
                   "docs' gallery is built from; with --param build/notebooks-HASH, HASH of the parameters)")
    p.add_argument("--timeout", type=int, default=1200, help="seconds per cell")
    p.add_argument("--data", default="data/testbed", help="the default testbed (relative to the notebooks' project), "
                   "generated there if missing and no --param DATA is given")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="set a notebook parameter in every notebook (repeatable; VALUE is read as a Python "
                        "literal when it is one, else as text), as papermill -p does")
    p.add_argument("--only", action="append", default=None, metavar="NAME",
                   help="run only this notebook (repeatable; the name without .ipynb)")
    p.set_defaults(func=run)


def without_iri_grammar() -> None:
    """Let this process's jsonschema go without its ``iri`` format check: nbformat imports jsonschema, which imports
    ``rfc3987_syntax`` for that check, and that builds about 35 Lark parsers at import (1.7 of the 2.0 CPU seconds
    of importing nbclient here; python-jsonschema issue 1428). No notebook's schema uses the format. Only the
    command's own process goes without it (a kernel is a process of its own), and only before jsonschema is
    imported; a library call never does this to its caller's interpreter."""
    import sys

    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # (None: its import raises ImportError)


def run(args: argparse.Namespace) -> int:
    without_iri_grammar()
    from workbench.datasets import ensure_testbed
    from workbench.notebooks._runner import check_build, notebook_sources, parse_param, run_all, unknown_parameters
    from workbench._util.project import find_root

    from workbench._util.project import PROJECT_ROOT

    at_least("--timeout", args.timeout, 1)
    if args.notebooks is None:  # from outside a project: the notebooks of the checkout this package belongs to
        here = find_root()
        args.notebooks = str((here or PROJECT_ROOT) / "notebooks")
        if here is None:
            print(f"notebooks: {args.notebooks} (the checkout workbench runs from; --notebooks for others)")
    notebooks = existing_dir(args.notebooks, "directory of notebooks")
    try:
        parameters = dict(parse_param(p) for p in args.param)
    except ValueError as err:
        raise UsageError("--param", "NAME=VALUE", str(err).split("got ")[-1]) from None
    if args.build is None:  # a run with parameters never writes over the default run's executed copies
        import hashlib
        import json

        said = json.dumps(sorted((k, str(v)) for k, v in parameters.items()))
        args.build = "build/notebooks" + (f"-{hashlib.sha256(said.encode()).hexdigest()[:16]}" if parameters else "")
    check_build(notebooks, Path(args.build))  # before anything is made: the testbed is not generated for nothing
    sources, strays = notebook_sources(notebooks)
    if args.only:
        missing = [n for n in args.only if n not in {p.stem for p in sources}]
        if missing:
            raise UsageError("--only", f"notebooks in {notebooks}/ ({', '.join(p.stem for p in sources)})",
                             ", ".join(missing))
    if strays:
        print(f"not run (not a notebook of {notebooks}/, a copy the tools left): "
              + ", ".join(p.name for p in strays))
    if parameters:  # a name no notebook reads would be set and ignored without a word
        unknown, known = unknown_parameters(notebooks, parameters, args.only)
        if unknown:
            raise UsageError("--param", f"a parameter of the notebooks run ({', '.join(sorted(known))})",
                             ", ".join(unknown))
    # a value naming a file or directory that exists from here is made absolute: the kernels start in the
    # notebooks' project root, where the notebooks read their relative parameters
    parameters = {k: str(Path(v).resolve()) if isinstance(v, str) and v and Path(v).exists() else v
                  for k, v in parameters.items()}
    root = find_root(notebooks)
    for name, value in parameters.items():  # an input found neither here nor in the project: said now, with both
        if name in INPUT_PARAMETERS and isinstance(value, str) and value and not Path(value).is_absolute() \
                and not ((root or Path.cwd()) / value).exists():
            raise UsageError(f"--param {name}", f"a file or directory that exists from here ({Path.cwd()}) or, "
                             f"relative, in the notebooks' project ({root or Path.cwd()}), where the notebooks read "
                             "relative paths", value)
    if "DATA" not in parameters:  # the notebooks read the default testbed: make it if it is missing
        ensure_testbed((root or Path.cwd()) / args.data)
    report = run_all(notebooks, Path(args.build), timeout=args.timeout, parameters=parameters or None,
                     names=args.only, cwd=root)
    print(report)
    return report.exit_code


#: the notebooks' parameters that name an input file or directory (a relative one is read from the project root)
INPUT_PARAMETERS = frozenset({"DATA", "LABELS", "SCORES", "WHO_WHEN", "PREDICTIONS", "CLAUDE_CODE", "CODEX",
                              "TAU_BENCH", "CLAUDE_FIXTURE", "CLAUDE_RESULTS", "CLAUDE_PROMPTS", "REPEATED_SCORES"})

__all__ = ["add", "INPUT_PARAMETERS", "run", "without_iri_grammar"]
