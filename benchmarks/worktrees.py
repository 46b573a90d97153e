"""The code of an earlier commit beside this tree's, for a benchmark's "before" rows: ``checkout(ref, name)`` checks
``ref`` out with ``git worktree`` under ``build/bench-NAME-REF`` (once; later runs reuse it), and a child process
runs it with that directory first on ``PYTHONPATH``. ``git worktree remove`` (or ``make clean``) takes it away."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def checkout(ref: str, name: str) -> Path:
    """The directory holding commit ``ref``'s code, checked out under ``build/`` for the benchmark ``name``."""
    tree = ROOT / "build" / f"bench-{name}-{ref}"
    if not tree.exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), ref], cwd=ROOT, check=True,
                       capture_output=True)
    return tree
