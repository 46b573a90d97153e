"""Sphinx configuration of the workbench's documentation site (``make docs`` builds it into ``build/docs/``).

The gallery renders the notebooks ``make figures`` executed (``build/notebooks/``) as they are: this file copies them
into ``docs/gallery/`` (not tracked) with a first cell that names their jupytext source, and never executes one. The
``labeling`` notebook, which ``workbench figures`` skips (it waits for a person), is rendered from its source and
says so. Nothing is fetched: no intersphinx, and the theme's assets ship with it.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS / "_ext"))

project = "Compaction Workbench"
#: the version the package is built as (pyproject.toml), shown in the header
release = version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
# options print as typed: a copied `--help` must not become an en dash (issue 83)
smartquotes = False
author = "Compaction Workbench developers"
copyright = "2026, Compaction Workbench developers"  # noqa: A001 (Sphinx's name)

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.viewcode",  # [source] beside every entry: the module's code as a page of the site
    "numpydoc",
    "myst_nb",
    "sphinxarg.ext",
    "workbench_tables",  # docs/_ext: ``workbench-table`` renders a table's reference from its declaration
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "_ext", "**.ipynb_checkpoints", "changes"]  # changes/: assembled into about/changelog
root_doc = "index"

# -- the reference: every name resolves, the build fails on a warning (make docs passes -W) ------------------------
nitpicky = True
#: types from outside the project, written as in the signatures (``pl.DataFrame``) or their modules: not documented
#: here, and no inventory is fetched to link them (the build is offline)
EXTERNAL = (r"pl\..*", r"np\..*", r"pd\..*", r"polars(\..*)?", r"numpy(\..*)?", r"pandas(\..*)?", r"pyarrow(\..*)?",
            r"scipy(\..*)?", r"matplotlib(\..*)?", r"plt\..*", r"sklearn(\..*)?", r"statsmodels(\..*)?",
            r"openai(\..*)?", r"httpx(\..*)?", r"argparse(\..*)?", r"collections\.abc\..*", r"typing(_extensions)?\..*",
            r"pathlib\..*", r"Path", r"os\..*", r"datetime\..*", r"enum\..*", r"concurrent\..*", r"io\..*",
            r"threading\..*", r"ray(\..*)?", r"ipywidgets(\..*)?", r"jinja2(\..*)?", r"nbformat(\..*)?",
            r"(Any|Callable|Iterable|Iterator|Mapping|Sequence|Collection|Literal|Self|TextIO|IO|Generator|"
            r"MutableMapping|Hashable|NamedTuple|TypeAlias|TypeVar|ClassVar)",
            r"(int|float|str|bytes|bool|None|dict|list|tuple|set|frozenset|object|type|complex|range|slice)",
            r"(Exception|ValueError|RuntimeError|KeyError|TypeError|OSError|FileNotFoundError|UserWarning|Warning)",
            r"array-like|array_like|optional|default.*|callable|iterable|mapping|sequence|frame|generator",
            r"Axes|Figure|collections\.Counter|tiktoken(\..*)?",
            r"TypeAliasForwardRef|ArrayLike|Seed",  # names autodoc_type_aliases keeps (numpy's, workbench.stats')
            r"'?[\w.]+\[.*",  # a generic's text (``dict[str, Any]``) that Sphinx splits at its commas
            # the project's own names that are not part of its interface: private modules and names, and the type
            # variables the signatures are written with (their docstrings say what they stand for)
            r"(workbench\.)?(.*\.)?_\w+(\..*)?", r"workbench\..*\.(Frame|T|R)", r"Frame|T|R")
nitpick_ignore_regex = [(r"py:.*", pattern) for pattern in EXTERNAL]

autodoc_typehints = "signature"
#: a signature longer than this is printed one parameter a line (issue 83: 88 ran past 200 characters on one line)
python_maximum_signature_line_length = 100
autodoc_typehints_format = "short"
autodoc_member_order = "bysource"
autodoc_preserve_defaults = True
# type aliases printed by name, not expanded (issue 83: numpy's ArrayLike took up to 1,015 characters a signature)
autodoc_type_aliases = {"ArrayLike": "ArrayLike", "npt.ArrayLike": "ArrayLike", "Seed": "Seed"}
autosummary_generate = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- the gallery: executed notebooks as they are ---------------------------------------------------------------------
nb_execution_mode = "off"
nb_output_stderr = "remove"
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# -- HTML ----------------------------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"Compaction Workbench {release}"
html_favicon = "_static/favicon.svg"
#: the theme's light/dark mode when the reader chose none (unset, it logs "invalid theme mode" on every page)
html_context = {"default_mode": "auto"}
html_theme_options = {
    "navigation_with_keys": False,
    "logo": {"text": f"Compaction Workbench {release}"},
    "show_toc_level": 2,
    "navbar_end": ["theme-switcher", "navbar-icon-links"],
    "icon_links": [],
    "use_edit_page_button": False,
}
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_copy_source = False
html_show_sourcelink = False
#: a result's summary is fetched from its page, which Chromium refuses from file://: results show without it
html_show_search_summary = False


NOTEBOOKS = ROOT / "notebooks"
EXECUTED = ROOT / "build" / "notebooks"
GALLERY = DOCS / "gallery"
ANALYSIS_MIME = "application/vnd.workbench.analysis+json"
FIGURES_MIME = "application/vnd.workbench.figures+json"  # workbench._util.project.FIGURES_MIME: where a notebook wrote


def _source_cell(name: str, executed: bool) -> dict:
    how = ("executed by `make figures` (`build/notebooks/`), rendered here as it ran"
           if executed else "**not executed**: `workbench figures` skips it (it waits for a person); rendered from its source")
    text = (f"This page is the notebook {how}. Source: {{download}}`notebooks/{name}.py <../../notebooks/{name}.py>` "
            f"(jupytext percent script, paired with `notebooks/{name}.ipynb`).")
    return {"cell_type": "markdown", "id": "workbench-source", "metadata": {}, "source": text}


def copy_gallery() -> list[str]:
    """Copy the executed notebooks into ``docs/gallery/`` with the source cell; the names, in order."""
    sources = sorted(p.stem for p in NOTEBOOKS.glob("*.py"))
    missing = [s for s in sources if s != "labeling" and not (EXECUTED / f"{s}.ipynb").exists()]
    if missing:
        from sphinx.errors import ConfigError

        raise ConfigError(f"no executed notebook for {', '.join(missing)} in {EXECUTED}: run `make figures` first")
    for name in sources:
        executed = name != "labeling"
        path = EXECUTED / f"{name}.ipynb" if executed else NOTEBOOKS / f"{name}.ipynb"
        nb = json.loads(path.read_text(encoding="utf-8"))
        cells = nb["cells"]
        injected = [c for c in cells if "injected-parameters" in c.get("metadata", {}).get("tags", [])]
        if executed and injected:  # a run on someone's own data (workbench figures --param, papermill -p)
            from sphinx.errors import ConfigError

            given = " ".join(line.strip() for line in "".join(injected[0]["source"]).splitlines()
                             if line.strip() and not line.lstrip().startswith("#"))
            raise ConfigError(f"{path} ran with parameters of its own ({given}): the gallery shows only the "
                              "project's default run; run `make figures` (or `workbench figures --only "
                              f"{name}`) without --param, or keep your run elsewhere (--build DIR)")
        at = 1 if cells and cells[0]["cell_type"] == "markdown" and "".join(cells[0]["source"]).lstrip().startswith("#") else 0
        cells.insert(at, _source_cell(name, executed))
        for cell in cells:  # the machine-readable records (no page shows them; their text/plain is beside them)
            for output in cell.get("outputs", []):
                output.get("data", {}).pop(ANALYSIS_MIME, None)
                output.get("data", {}).pop(FIGURES_MIME, None)
        if not executed:
            for cell in cells:
                if cell["cell_type"] == "code":
                    cell["outputs"], cell["execution_count"] = [], None
        target = GALLERY / f"{name}.ipynb"
        text = json.dumps(nb, ensure_ascii=False, indent=1) + "\n"
        # paths the notebooks printed name the machine that ran them: the site shows them relative to the project root
        text = text.replace(str(ROOT) + "/", "").replace(str(ROOT), ".")
        if not target.exists() or target.read_text(encoding="utf-8") != text:  # unchanged: Sphinx keeps its build
            target.write_text(text, encoding="utf-8")
    return sources


copy_gallery()

#: figures whose notebook names them only through an f-string: the notebook, by the figure's prefix
FIGURE_PREFIXES = {"calibration_": "judge_calibration", "compare_": "method_comparison"}


def write_all_figures() -> None:
    """``docs/gallery/all_figures.md`` (not tracked): every PNG of ``figures/``, full size, each with the notebook
    that draws it (its name in the notebook's source, else :data:`FIGURE_PREFIXES`) and its PDF."""
    sources = {p.stem: p.read_text(encoding="utf-8") for p in sorted(NOTEBOOKS.glob("*.py"))}
    lines = ["# Every figure", "",
             "Every figure `make figures` writes into `figures/` (PNG here, PDF beside it), full size, in name order, "
             "each under the notebook that draws it; [the figures](figures.md) page says what the main ones show.",
             ""]
    for png in sorted((ROOT / "figures").glob("*.png")):
        notebook = next((name for name, text in sources.items() if png.stem in text), None) or next(
            (name for prefix, name in FIGURE_PREFIXES.items() if png.stem.startswith(prefix)), None)
        lines += [f"## {png.stem}", ""]
        if notebook:
            lines += [f"From [{notebook}]({notebook}.ipynb); PDF: `figures/{png.stem}.pdf`.", ""]
        lines += [f"![{png.stem}](../../figures/{png.name})", ""]
    text = "\n".join(lines)
    target = GALLERY / "all_figures.md"
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


write_all_figures()


def write_changelog() -> None:
    """``docs/about/changelog.md`` (not tracked): the entries of ``docs/changes/*.md`` (one a round, from its closing
    note, named ``DATE-...``), newest first."""
    entries = sorted((DOCS / "changes").glob("*.md"), reverse=True)
    text = "\n".join(["# Changelog", "", "What each round of work changed, newest first (from `docs/changes/`, one file "
                      "a round, written from the round's closing notes).", ""]
                     + [entry.read_text(encoding="utf-8").rstrip() + "\n" for entry in entries])
    target = DOCS / "about" / "changelog.md"
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


write_changelog()



_ATTR_DOCS: dict[str, dict[str, list[str]]] = {}


def _attribute_docs(package: str) -> dict[str, list[str]]:
    """The ``#:`` comments of a package's module-level names, read from the modules that define them (autodoc reads
    those of the module a directive names: the package's ``__init__``, which only maps names to modules)."""
    if package not in _ATTR_DOCS:
        import importlib
        import pkgutil

        from sphinx.pycode import ModuleAnalyzer

        docs: dict[str, list[str]] = {}
        module = importlib.import_module(package)
        names = [package] + ([m.name for m in pkgutil.walk_packages(module.__path__, package + ".")]
                             if hasattr(module, "__path__") else [])
        for name in names:
            for (scope, attr), lines in ModuleAnalyzer.for_module(name).find_attr_docs().items():
                if scope == "":
                    docs.setdefault(attr, list(lines))
        _ATTR_DOCS[package] = docs
    return _ATTR_DOCS[package]


def _data_docstring(app, what, name, obj, options, lines):  # type: ignore[no-untyped-def]
    """A constant's entry says what its ``#:`` comment says (never the docstring of its type, ``str`` or ``dict``),
    then its value when that is short and not a path of the machine that built the site (issue 83)."""
    if what != "data" or not name.startswith("workbench."):
        return
    package, attr = name.rsplit(".", 1)
    lines[:] = list(_attribute_docs(package).get(attr, []))
    value = repr(obj)
    if isinstance(obj, Path) and obj.is_relative_to(ROOT):
        value = repr(obj.relative_to(ROOT).as_posix()) + " (relative to the project root)"
    if len(value) <= 120 and str(ROOT) not in value:
        lines += ["", f"Value: ``{value}``"]


def _search_keeps_data_set_names() -> None:
    """Searching "Who&When" (or "who and when") found no guide page: "who" and "when" are English stop words, left
    out of the index and of the query alike. They are kept (the index and the page's query use the same list)."""
    import sphinx.search
    from sphinx.search.en import SearchEnglish

    class SearchEnglishWithDataSetNames(SearchEnglish):
        stopwords = SearchEnglish.stopwords - {"who", "when"}

    sphinx.search.languages["en"] = SearchEnglishWithDataSetNames


_search_keeps_data_set_names()


def _factory_defaults(app, what, name, obj, options, signature, return_annotation):  # type: ignore[no-untyped-def]
    """A dataclass field's ``default_factory`` prints as ``<factory>``, which is not Python: Sphinx cannot parse
    the signature and prints it on one line, however long. Each becomes its factory's call (``dict()``)."""
    import dataclasses

    if not signature or "<factory>" not in signature or not dataclasses.is_dataclass(obj):
        return None
    for f in dataclasses.fields(obj):
        if f.default_factory is not dataclasses.MISSING:
            factory = getattr(f.default_factory, "__name__", "factory")
            signature = signature.replace("<factory>", f"{factory}()", 1)
    return signature, return_annotation


def setup(app):  # type: ignore[no-untyped-def]
    app.connect("autodoc-process-docstring", _data_docstring)
    app.connect("autodoc-process-signature", _factory_defaults)
