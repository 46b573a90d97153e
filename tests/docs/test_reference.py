"""Issue 63: the documentation's sources cover the workbench. Every public name of every package is on its API page,
every verb of the command line has its section in the CLI reference, every notebook is in the gallery and every page
is in a table of contents. Read from the sources under ``docs/`` (not a built site: the build runs under ``make docs``
and in CI, not in the test suite)."""

from __future__ import annotations

import argparse
import importlib
import re
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

#: every package with public names (``__init__`` with ``__all__``) and the top-level modules that have one
PACKAGES = sorted({p.parent.name for p in (ROOT / "workbench").glob("*/__init__.py")
                   if not p.parent.name.startswith("_") and p.parent.name != "cli"}
                  | {p.stem for p in (ROOT / "workbench").glob("*.py") if not p.stem.startswith("_")})

DIRECTIVE = re.compile(r"^\.\. auto(?:function|class|exception|data|module):: (\S+)", re.M)


def documented(package: str) -> set[str]:
    """The names the package's page documents (``autofunction:: name`` and the others), as written."""
    page = DOCS / "api" / f"{package}.rst"
    assert page.exists(), f"no API page for workbench.{package}: docs/api/{package}.rst (tools/api_pages.py)"
    return set(DIRECTIVE.findall(page.read_text(encoding="utf-8")))


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_of_a_package_is_on_its_api_page(package: str) -> None:
    module = importlib.import_module(f"workbench.{package}")
    names = set(module.__all__)
    on_page = documented(package)
    missing = []
    for name in sorted(names):
        obj = getattr(module, name)
        if isinstance(obj, types.ModuleType):  # a public module: documented whole, under its own name
            if obj.__name__ not in on_page:
                missing.append(obj.__name__)
        elif name not in on_page:
            missing.append(name)
    extra = {n for n in on_page if "." not in n} - names - {f"workbench.{package}"}
    assert not missing and not extra, (missing, sorted(extra))


def test_the_api_index_lists_every_package_page() -> None:
    index = (DOCS / "api" / "index.rst").read_text(encoding="utf-8")
    listed = set(re.findall(r"^   (\w+)$", index, flags=re.M))
    assert listed == set(PACKAGES) == {p.stem for p in (DOCS / "api").glob("*.rst")} - {"index"}


def test_every_cli_verb_has_its_section_in_the_cli_reference() -> None:
    from workbench.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    paths = re.findall(r"^:path: (\S+)$", text, flags=re.M)
    headings = re.findall(r"^## `workbench (\S+)`$", text, flags=re.M)
    assert paths == headings == list(sub.choices), (paths, list(sub.choices))


def test_every_notebook_is_in_the_gallery_and_every_page_in_a_toctree() -> None:
    gallery = (DOCS / "gallery" / "index.md").read_text(encoding="utf-8")
    entries = set(re.findall(r"^(\w+)$", gallery.split("```{toctree}", 1)[1], flags=re.M))
    assert {p.stem for p in (ROOT / "notebooks").glob("*.py")} | {"figures", "all_figures"} == entries
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"^((?:guide|gallery|api|about)/[\w-]+|cli)$", index, flags=re.M))
    about = {"installation", "changelog", "citing", "faq", "glossary"}  # (the changelog is assembled by conf.py)
    pages = ({f"guide/{p.stem}" for p in (DOCS / "guide").glob("*.md")} | {"gallery/index", "api/index", "cli"}
             | {f"about/{name}" for name in about})
    assert listed == pages, (pages - listed, listed - pages)


def test_the_gallery_page_shows_every_tracked_figure() -> None:
    """Every PNG under figures/ is on the gallery's figure page or in an executed notebook (which shows all of them);
    the figure page's images exist."""
    text = (DOCS / "gallery" / "figures.md").read_text(encoding="utf-8")
    shown = re.findall(r"!\[[^\]]*\]\(\.\./\.\./(figures/[^)]+)\)", text)
    assert shown and all((ROOT / s).exists() for s in shown)


def test_the_format_pages_render_every_table_and_every_column_says_what_it_is() -> None:
    """The trajectory format's reference (runs, steps, compactions) and the tables page render the declarations
    themselves (``workbench-table``), so they list every column the readers check; a column added without a ``doc``
    would show an empty meaning, so every declared column has one."""
    from workbench.tables import TABLES

    rendered = lambda page: re.findall(r"^```\{workbench-table\} (\w+)$",  # noqa: E731
                                       (DOCS / "guide" / page).read_text(encoding="utf-8"), flags=re.M)
    assert rendered("agent-logs.md") == ["runs", "steps", "compactions"]
    assert rendered("tables.md") == list(TABLES)
    undocumented = [f"{name}.{c.name}" for name, t in TABLES.items() for c in t.columns if not c.doc.strip()]
    assert not undocumented, undocumented


def test_the_labelled_summaries_reference_names_every_field_the_reader_accepts() -> None:
    """Every field a labelled-summaries line, its header, a label, a span and a declared variable may hold (the reader
    refuses any other) is named in the guide's reference."""
    from workbench.adapters import _labelled_summaries as reader

    text = (DOCS / "guide" / "labels.md").read_text(encoding="utf-8")
    reference = text.split("Reference, field by field:", 1)[1].split("\n\n", 2)[1]
    fields = [*reader.FIELDS, *reader.HEADER_FIELDS, *reader._LABEL_FIELDS, *reader._SPAN_FIELDS,
              *reader._VARIABLE_FIELDS]
    missing = [f for f in fields if f"`{f}`" not in reference]
    assert not missing, missing
