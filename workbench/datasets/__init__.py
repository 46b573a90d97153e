"""Where the analyses' data comes from, and getting it there: the one loader (``_load``: :func:`load`, which never
writes, and :func:`derive_missing`, which adds explicitly what an imported log lacks), importing a log into a
directory of tables (``_import``: :func:`import_log`, what ``workbench import`` runs), the testbed (``_testbed``:
:func:`ensure_testbed`), choosing runs (``_selection``: :func:`select_runs`) and what an analysis needs of the data
(``_guards``: :func:`need`, :class:`NotApplicable`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = [
    "DEFAULT_TESTBED", "derive_missing", "ensure_default_testbed", "ensure_testbed", "entry_clusters", "has_budget",
    "import_log", "load", "need", "need_outcomes", "NotApplicable", "RUN_TEXTS", "select_runs", "single_method", "STORE"
]

__getattr__, __dir__ = attach(__name__, {
    "_guards": ["need", "need_outcomes", "NotApplicable"],
    "_import": ["import_log"],
    "_load": ["derive_missing", "load", "RUN_TEXTS", "STORE"],
    "_selection": ["entry_clusters", "has_budget", "select_runs", "single_method"],
    "_testbed": ["DEFAULT_TESTBED", "ensure_default_testbed", "ensure_testbed"],
}, public=__all__)

if TYPE_CHECKING:
    from workbench.datasets._guards import (need, need_outcomes, NotApplicable)
    from workbench.datasets._import import (import_log)
    from workbench.datasets._load import (derive_missing, load, RUN_TEXTS, STORE)
    from workbench.datasets._selection import (entry_clusters, has_budget, select_runs, single_method)
    from workbench.datasets._testbed import (DEFAULT_TESTBED, ensure_default_testbed, ensure_testbed)
