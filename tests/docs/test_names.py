"""Every dotted ``workbench.`` name the documentation mentions exists (design round 2: the guide named 16 things that
were gone: ``sessions.SessionAnalyses``, ``metrics.correlation``, ...; ``import workbench.sessions`` failed), and no
page names a workbench thing by a bare module stem (``bootstrap.DEFAULT_N_BOOT``), which is how the stale names
survived. The old column of the guide's moved-names table names what is gone on purpose and is left out."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOTTED = re.compile(r"(?<![\w./-])workbench(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
#: the package and module stems a bare ``stem.Name`` in backticks would be read as
STEMS = {p.stem.lstrip("_") for p in (ROOT / "workbench").rglob("*.py") if p.stem != "__init__"} | {
    p.name for p in (ROOT / "workbench").iterdir() if p.is_dir() and not p.name.startswith("_")} | {
    "sessions", "composition", "sensitivity", "metrics", "bootstrap", "pricing", "frames", "labels", "summary"}
BARE = re.compile(r"`([a-z_]+)\.([A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z_][A-Za-z0-9_]*)*`")
NOT_CODE = {"message", "payload", "session_meta", "info", "action", "runs", "git", "entries", "compactions", "inputs",
            "pyproject", "jupytext"}  # JSON fields, files and columns that share a stem's name


#: ``main.py``: a file, not a name
FILE_SUFFIXES = {"py", "md", "json", "jsonl", "ipynb", "html", "toml", "yml", "txt", "csv", "parquet", "gz", "eval",
                 "tex", "pdf", "png", "lock"}


def _pages() -> list[Path]:
    return sorted(p for p in (ROOT / "docs").rglob("*") if p.suffix in (".md", ".rst") and "_build" not in p.parts)


def _resolves(name: str) -> bool:
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def _mentions(page: Path) -> list[tuple[int, str]]:
    """``(line, text)`` of the page to check: every line, but a moved-names table's old column."""
    out, old_table = [], False
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        cells = line.split("|")
        if line.startswith("| old | now |"):
            old_table = True
        elif not line.startswith("|"):
            old_table = False
        out.append((n, "|".join(cells[2:]) if old_table and len(cells) > 2 else line))
    return out


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.relative_to(ROOT / "docs").as_posix())
def test_every_dotted_workbench_name_on_a_page_exists(page: Path) -> None:
    missing = [f"{page.name}:{n}: {name}" for n, text in _mentions(page) for name in DOTTED.findall(text)
               if not _resolves(name.rstrip("."))]
    bare = [f"{page.name}:{n}: {m.group(0)}" for n, text in _mentions(page) for m in BARE.finditer(text)
            if m.group(1) in STEMS and m.group(1) not in NOT_CODE and m.group(2) not in FILE_SUFFIXES]
    assert not missing and not bare, (missing, bare)


def test_the_check_finds_a_gone_name_and_a_bare_stem(tmp_path: Path) -> None:
    page = tmp_path / "x.md"
    page.write_text("See `workbench.sessions.SessionAnalyses` and `bootstrap.DEFAULT_N_BOOT`.\n"
                    "| old | now |\n| --- | --- |\n| `workbench.metrics` | `workbench.stats` |\n")
    found = [name for _n, text in _mentions(page) for name in DOTTED.findall(text)]
    assert found == ["workbench.sessions.SessionAnalyses", "workbench.stats"]
    assert not _resolves("workbench.sessions.SessionAnalyses") and _resolves("workbench.stats.DEFAULT_N_BOOT")
    assert [m.group(1) for m in BARE.finditer(page.read_text())] == ["workbench", "bootstrap", "workbench", "workbench"]
