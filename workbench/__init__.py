"""Compaction Workbench: summary entries, source judges, validation labels and the analyses of context compaction.

The names a notebook user needs, in one place::

    from workbench import load, read_log, derive_missing, need, parse, prune, reliability, auroc_ci

``bootstrap_ci`` is :func:`workbench.stats.bootstrap` (the module keeps its name: no attribute of the
package shadows a submodule). Everything else lives in the module its name says (``workbench.analyses.trace``, ``workbench.analyses.focus``,
``workbench.judges`` ...); see the module map in the README.
"""

from importlib import import_module
from typing import Any


def _package_version() -> str:
    """The installed distribution's version (read when first asked: importlib.metadata costs the CLI's start-up
    40 ms it does not need to print help)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("compaction-workbench")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree that was never installed
        return "0+unknown"

#: the package's names and where they live; each is imported when first used (``import workbench`` stays quick:
#: the CLI's start-up and a notebook's first cell do not pay for scipy, polars and the adapters up front)
_EXPORTS = {"read_log": ("workbench.adapters", "read_log"), "auroc_ci": ("workbench.stats._bootstrap", "auroc_ci"),
            "bootstrap_ci": ("workbench.stats._bootstrap", "bootstrap"), "derive_missing": ("workbench.datasets", "derive_missing"),
            "load": ("workbench.datasets", "load"), "need": ("workbench.datasets", "need"), "efficiency": ("workbench.stats", "efficiency"),
            "reliability": ("workbench.stats", "reliability"), "parse": ("workbench.summaries._grammar", "parse"),
            "prune": ("workbench.summaries._grammar", "prune"), "validate": ("workbench.tables._validation", "validate")}


def __getattr__(name: str) -> Any:
    """Import an exported name on first use (PEP 562); ``__version__`` is read then too."""
    if name == "__version__":
        globals()[name] = value = _package_version()
        return value
    if name in _EXPORTS:
        module, attr = _EXPORTS[name]
        value = getattr(import_module(module), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = ["__version__", "auroc_ci", "bootstrap_ci", "derive_missing", "efficiency", "load", "need", "parse", "prune",
           "read_log", "reliability", "validate"]
