"""Old name of :mod:`workbench.datasets`; kept so earlier imports still work."""

from workbench.datasets import DEFAULT_TESTBED, derive_missing, ensure_testbed, load_tables, require

__all__ = ["DEFAULT_TESTBED", "derive_missing", "ensure_testbed", "load_tables", "require"]
