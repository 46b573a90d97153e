"""The statistics' public functions document every parameter and what they return (numpydoc).

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
    "bootstrap", "calibration", "compare", "sensitivity", "metrics.agreement", "metrics.correlation",
    "metrics.discrimination", "metrics.success", "metrics.usage", "metrics.tables", "sjc", "focus", "trace",
    "attribution", "coverage_study", "human_labels", "composition", "datasets")

#: numpydoc's codes for a parameter or a return value left out, unknown, out of order or undescribed
REQUIRED = {"GL08", "PR01", "PR02", "PR03", "PR07", "PR10", "RT01", "RT03", "SS01"}


def _public_functions() -> list[str]:
    names = []
    for module_name in STATISTICS:
        module = importlib.import_module(f"workbench.{module_name}")
        names += [f"workbench.{module_name}.{name}" for name in module.__all__
                  if inspect.isfunction(obj := getattr(module, name)) and obj.__module__ == module.__name__]
    return names


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
