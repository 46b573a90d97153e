"""The lazy name map every package ``__init__`` is (PEP 562): a package lists its public names and the private module
that defines each, and a name's module is imported when the name is first used. Importing a package therefore loads
nothing heavy (no polars, numpy or scipy), and ``dir()`` and ``__all__`` still show every public name."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any

__all__ = ["attach"]


def attach(package: str, names: Mapping[str, Sequence[str]], modules: Sequence[str] = (), *,
           public: Sequence[str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the package ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    names : mapping of str to sequence of str
        A private module of the package (``"_bootstrap"``), or a module elsewhere by its full name
        (``"workbench._util.project"``) -> the public names the package takes from it.
    modules : sequence of str
        Public submodules (``"sjc"``), importable as attributes of the package.
    public : sequence of str
        The package's ``__all__``, written out (so that linters and type checkers read it): it must list exactly
        the names of ``names`` and ``modules``, else ``ImportError``.

    Returns
    -------
    tuple
        ``(__getattr__, __dir__)``, to assign in the package's ``__init__``.
    """
    where = {name: module for module, listed in names.items() for name in listed}
    clash = (set(where) & set(modules)) | {n for n in where if list(where).count(n) > 1}
    if len(where) != sum(map(len, names.values())) or clash:
        raise ImportError(f"{package}: a public name is listed twice: {sorted(clash)}")
    if sorted(public) != sorted([*where, *modules]):
        raise ImportError(f"{package}: __all__ is not the names its lazy map lists: "
                          f"{sorted(set(public) ^ {*where, *modules})}")

    def __getattr__(name: str) -> Any:
        if name in modules:
            value = import_module(f"{package}.{name}")
        elif name in where:
            module = where[name]
            value = getattr(import_module(module if module.startswith("workbench.") else f"{package}.{module}"), name)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *public})

    return __getattr__, __dir__
