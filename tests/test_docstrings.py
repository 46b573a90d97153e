"""The docstring check ``make lint`` runs (``tools/docstrings.py``: numpydoc's own validator over the statistics and
every function a notebook calls) finds what it is for: an undocumented parameter, and nothing on a documented one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("numpydoc.validate")
ROOT = Path(__file__).resolve().parents[1]


def _tool():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("docstrings", ROOT / "tools" / "docstrings.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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


def test_the_check_finds_an_undocumented_parameter_and_covers_the_notebooks() -> None:
    tool = _tool()
    assert [p.split(":")[0] for p in tool.problems(f"{__name__}._leaves_b_out")] == ["PR01"]
    assert tool.problems("workbench.stats._bootstrap.auroc_ci") == []
    checked = tool.public_functions()
    assert "workbench.stats._bootstrap.auroc_ci" in checked and len(checked) > 150
