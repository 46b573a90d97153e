"""The example logs shipped with the package (package data, so the getting-started tour runs with only the package
installed): a trajectory JSONL log with compactions, a Claude Code session, a Codex rollout, and a real Label Studio
export with its users and tasks."""

from __future__ import annotations

from pathlib import Path

from workbench._util.project import EXAMPLES


def examples(name: str | None = None) -> Path:
    """Where the shipped example logs are: the directory, or one example in it.

    Parameters
    ----------
    name : str, optional
        An example's path relative to the directory (``"invoice_log.jsonl"``, ``"claude-code"``,
        ``"labelstudio/export.json"``); None for the directory itself.

    Returns
    -------
    pathlib.Path
        The absolute path of the directory or of the example.

    Raises
    ------
    FileNotFoundError
        ``name`` is not one of the shipped examples (the message lists them).

    Examples
    --------
    From a shell, with only the package installed::

        EXAMPLES=$(python -c "from workbench.datasets import examples; print(examples())")
        workbench validate $EXAMPLES/invoice_log.jsonl
    """
    if name is None:
        return EXAMPLES
    path = (EXAMPLES / name).resolve()
    if not path.is_relative_to(EXAMPLES) or not path.exists():
        shipped = sorted(str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*") if p.name != "README.md")
        raise FileNotFoundError(f"no example {name!r}: the package ships {', '.join(shipped)} (in {EXAMPLES})")
    return path


__all__ = ["examples"]
