"""Compaction Workbench: summary entries, source judges, validation labels and the analyses of context compaction.

The names a notebook user needs, in one place::

    from workbench import read_log, load_tables, derive_missing, parse, prune, reliability, auroc_ci

``bootstrap_ci`` is :func:`workbench.bootstrap.bootstrap` (the module keeps its name: no attribute of the
package shadows a submodule). Everything else lives in the module its name says (``workbench.trace``, ``workbench.focus``,
``workbench.judges`` ...); see the module map in the README.
"""

from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as _version

from workbench.adapters import read_log
from workbench.bootstrap import auroc_ci
from workbench.bootstrap import bootstrap as bootstrap_ci
from workbench.datasets import derive_missing, load_tables
from workbench.metrics import efficiency, reliability
from workbench.summary import parse, prune
from workbench.validation import validate

try:
    __version__ = _version("compaction-workbench")
except PackageNotFoundError:  # pragma: no cover - running from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = ["__version__", "auroc_ci", "bootstrap_ci", "derive_missing", "efficiency", "load_tables", "parse", "prune",
           "read_log", "reliability", "validate"]
