"""Old home of the Claude compaction data set and its fact check; kept so earlier imports still work.

The loader lives in :mod:`workbench.adapters.claude_compaction`, the check in
:mod:`workbench.identifiers` (``check`` is :func:`~workbench.identifiers.claude_check`).
"""

from workbench.adapters.claude_compaction import check_table, defang, load_fixture, load_full, make_fixture
from workbench.identifiers import claude_check as check
from workbench.identifiers import summary_identifiers

__all__ = ["check", "check_table", "defang", "load_fixture", "load_full", "make_fixture", "summary_identifiers"]
