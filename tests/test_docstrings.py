"""The statistics' public functions, and every function a notebook calls, document every parameter and what they
return (numpydoc).

Checked by numpydoc's own validator (``numpydoc.validate``, the check pandas and scikit-learn run), not
by a reading of our own: a parameter added to a signature and not to its docstring fails here.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

validate = pytest.importorskip("numpydoc.validate")

#: the modules whose public functions compute a statistic, a table of statistics or their inputs
STATISTICS = (
    "stats._bootstrap", "stats._calibration", "stats._compare", "analyses.sjc._sensitivity", "stats._agreement",
    "stats._correlation", "stats._discrimination", "stats._success", "stats._efficiency", "analyses.sjc._results",
    "summaries._prune", "analyses.focus", "analyses.trace", "analyses.sjc._attribution", "stats._coverage",
    "analyses._human_labels", "analyses.sjc._composition", "datasets._load", "datasets._selection",
    "datasets._guards", "datasets._testbed")

#: numpydoc's codes for a parameter or a return value left out, unknown, out of order or undescribed
REQUIRED = {"GL08", "PR01", "PR02", "PR03", "PR07", "PR10", "RT01", "RT03", "SS01"}


def _notebook_functions() -> set[str]:
    """Every workbench function a notebook calls (``from workbench.X import f``, ``plots.f``, ``plots.M.f``): the
    surface a user's own notebook copies."""
    import ast
    from pathlib import Path

    found: set[tuple[str, str]] = set()
    for path in sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.py")):
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


def _public_functions() -> list[str]:
    names = set()
    for module_name in STATISTICS:
        module = importlib.import_module(f"workbench.{module_name}")
        names |= {f"workbench.{module_name}.{name}" for name in module.__all__
                  if inspect.isfunction(obj := getattr(module, name)) and obj.__module__ == module.__name__}
    return sorted(names | _notebook_functions())


@pytest.mark.parametrize("name", _public_functions())
def test_every_parameter_and_the_return_value_are_documented(name: str) -> None:
    errors = [f"{code}: {message}" for code, message in validate.validate(name)["errors"] if code in REQUIRED]
    assert not errors, "\n".join(errors)


def _leaves_b_out(a: int, b: int) -> int:
    """Add two numbers.

    Parameters
    ----------
    a : int
        A number.

    Returns
    -------
    int
        The sum.
    """
    return a + b


def test_the_check_finds_an_undocumented_parameter() -> None:
    errors = validate.validate(f"{__name__}._leaves_b_out")["errors"]
    assert [code for code, _ in errors if code in REQUIRED] == ["PR01"]
