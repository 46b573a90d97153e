"""Write ``docs/api/PACKAGE.rst``: one page per package of the workbench listing its public names (``__all__``) with
the autodoc directive each one takes (function, class, exception, module, or data).

The pages are committed and edited by hand after that (grouping, prose); ``tests/docs/test_reference.py`` fails when
a package's public name is missing from its page, so rerun this (or add the line) when a name is added::

    .venv/bin/python tools/api_pages.py            # write pages for packages that have none
    .venv/bin/python tools/api_pages.py --force    # rewrite every page
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: the packages (and top-level modules) with a page, in the order the reference lists them
PACKAGES = ("datasets", "adapters", "summaries", "tables", "judges", "llm", "stats", "analyses", "sim", "infer",
            "annotate", "explore", "plots", "notebooks", "tokens", "errors")


def directive(module: types.ModuleType, name: str) -> str:
    """The autodoc directive for ``module.name``."""
    obj = getattr(module, name)
    if isinstance(obj, types.ModuleType):
        return f".. automodule:: {obj.__name__}\n   :members:"
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return f".. autoexception:: {name}"
    if inspect.isclass(obj):
        return f".. autoclass:: {name}\n   :members:"
    if callable(obj):
        return f".. autofunction:: {name}"
    return f".. autodata:: {name}\n   :no-value:"


def page(package: str) -> str:
    module = importlib.import_module(f"workbench.{package}")
    title = f"``workbench.{package}``"
    names = list(module.__all__)
    lines = [title, "=" * len(title), "", f".. automodule:: workbench.{package}", "   :no-members:", "",
             f".. currentmodule:: workbench.{package}", ""]
    modules = [n for n in names if isinstance(getattr(module, n), types.ModuleType)]
    for name in [n for n in names if n not in modules] + modules:  # a module sets the current module: last
        lines += [directive(module, name), ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="rewrite pages that exist")
    args = parser.parse_args()
    out = ROOT / "docs" / "api"
    out.mkdir(parents=True, exist_ok=True)
    for package in PACKAGES:
        path = out / f"{package}.rst"
        if path.exists() and not args.force:
            continue
        path.write_text(page(package), encoding="utf-8")
        print(path.relative_to(ROOT))


if __name__ == "__main__":
    main()
