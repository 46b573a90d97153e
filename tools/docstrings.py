"""numpydoc's validator over the public functions users call (``make lint``): every parameter and the return value
documented, in order, with a one-line summary.

    python tools/docstrings.py       # exit 1 naming each function and numpydoc code that fails

The functions are every public function of every package (each face's ``__all__``, :data:`PACKAGES`), those of
the statistics' modules (:data:`STATISTICS`) and every workbench function a notebook calls. Checked by numpydoc's own validator (``numpydoc.validate``, the
check pandas and scikit-learn run), not by a reading of our own: a parameter added to a signature and not to its
docstring fails here.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: the modules whose public functions compute a statistic, a table of statistics or their inputs
STATISTICS = (
    "stats._bootstrap", "stats._calibration", "stats._compare", "analyses.sjc._sensitivity", "stats._agreement",
    "stats._correlation", "stats._discrimination", "stats._success", "stats._efficiency", "analyses.sjc._results",
    "summaries._prune", "analyses.focus", "analyses.trace", "analyses.sjc._attribution", "stats._coverage",
    "analyses._human_labels", "analyses.sjc._composition", "datasets._load", "datasets._selection",
    "datasets._guards", "datasets._testbed")

#: the packages and modules whose public functions are checked (issue 83: every one, not only the statistics)
PACKAGES = ("adapters", "analyses", "annotate", "datasets", "explore", "infer", "judges", "llm", "notebooks", "plots",
            "sim", "stats", "summaries", "tables", "tokens", "errors")

#: numpydoc's codes for a parameter or a return value left out, unknown, out of order or undescribed
REQUIRED = {"GL08", "PR01", "PR02", "PR03", "PR07", "PR10", "RT01", "RT03", "SS01"}


def notebook_functions() -> set[str]:
    """Every workbench function a notebook calls (``from workbench.X import f``, ``plots.f``, ``plots.M.f``)."""
    found: set[tuple[str, str]] = set()
    for path in sorted((ROOT / "notebooks").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("workbench"):
                found.update((node.module, alias.name) for alias in node.names)
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "plots":
                found.add(("workbench.plots", node.attr))
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute)
                  and isinstance(node.value.value, ast.Name) and node.value.value.id == "plots"):
                found.add((f"workbench.plots.{node.value.attr}", node.attr))
    names = set()
    for module_name, name in found:
        obj = getattr(importlib.import_module(module_name), name, None)
        if inspect.isfunction(obj):
            names.add(f"{obj.__module__}.{obj.__name__}")
    return names


def public_functions() -> list[str]:
    """The dotted names checked."""
    names = set()
    for module_name in STATISTICS:
        module = importlib.import_module(f"workbench.{module_name}")
        names |= {f"workbench.{module_name}.{name}" for name in module.__all__
                  if inspect.isfunction(obj := getattr(module, name)) and obj.__module__ == module.__name__}
    for package in PACKAGES:
        face = importlib.import_module(f"workbench.{package}")
        for name in face.__all__:
            obj = getattr(face, name)
            if inspect.isfunction(obj):
                names.add(f"{obj.__module__}.{obj.__qualname__}")
    return sorted(names | notebook_functions())


def problems(name: str) -> list[str]:
    """numpydoc's :data:`REQUIRED` errors of the function ``name``, each ``CODE: message``."""
    from numpydoc.validate import validate

    return [f"{code}: {message}" for code, message in validate(name)["errors"] if code in REQUIRED]


def main() -> int:
    failed = 0
    names = public_functions()
    for name in names:
        for problem in problems(name):
            print(f"{name}: {problem}", file=sys.stderr)
            failed += 1
    print(f"docstrings: {len(names)} functions checked, {failed} problem(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
