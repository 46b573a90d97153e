"""The layout holds: compute never imports a model client, notebooks are paired text, the public surface exists,
and no name shadows a submodule (each a test that fails when someone breaks the rule)."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import importlib.metadata
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "workbench"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))

#: the packages that compute; none of their modules may talk to a model (the design: "Computation never calls a
#: model")
COMPUTE_PACKAGES = ("tables", "summaries", "stats", "analyses")
COMPUTE = sorted(p for name in COMPUTE_PACKAGES for p in (PACKAGE / name).rglob("*.py"))


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at the top or inside a function (``from workbench import llm`` included)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def test_importing_a_compute_module_loads_no_client() -> None:
    """At run time too: a fresh interpreter that imports every compute module has loaded neither package."""
    mods = [f"workbench.{p.relative_to(PACKAGE).with_suffix('').as_posix().replace('/', '.')}" for p in COMPUTE
            if p.name != "__init__.py"]
    assert len(mods) > 30
    code = (f"import sys\nfor m in {mods!r}: __import__(m)\n"
            "print(sorted(m for m in sys.modules if m.startswith(('workbench.llm', 'workbench.infer'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def _tracked_ipynbs() -> list[Path]:
    """The ``.ipynb`` files of notebooks/ but those git ignores (what nbconvert and JupyterLab leave there)."""
    found = sorted((ROOT / "notebooks").glob("*.ipynb"))
    if not found or not (ROOT / ".git").exists():
        return found
    ignored = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], input="\n".join(map(str, found)),
                             capture_output=True, text=True, cwd=ROOT).stdout.split()
    return [p for p in found if str(p) not in ignored]


def test_nbconverts_outputs_and_checkpoints_are_ignored_and_never_run(tmp_path: Path) -> None:
    """``jupyter nbconvert --execute quickstart.ipynb`` in notebooks/ leaves quickstart.nbconvert.ipynb there: git
    ignores it, as JupyterLab's checkpoints, and ``workbench figures`` runs the pairs only."""
    from workbench.notebooks._runner import selected_notebooks

    ignored = subprocess.run(["git", "check-ignore", "--no-index", "notebooks/quickstart.nbconvert.ipynb",
                              "notebooks/.ipynb_checkpoints/quickstart-checkpoint.ipynb"],
                             capture_output=True, text=True, cwd=ROOT).stdout.split()
    assert ignored == ["notebooks/quickstart.nbconvert.ipynb", "notebooks/.ipynb_checkpoints/quickstart-checkpoint.ipynb"]
    for name in ("a.py", "a.ipynb", "a.nbconvert.ipynb", "b.py", "b.ipynb", "copy of b.ipynb"):
        (tmp_path / name).write_text("{}")
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "a-checkpoint.ipynb").write_text("{}")
    assert [p.name for p in selected_notebooks(tmp_path)] == ["a.ipynb", "b.ipynb"]
    for name in ("a.py", "b.py"):  # a user's directory without pairs: every notebook but nbconvert's outputs
        (tmp_path / name).unlink()
    assert [p.name for p in selected_notebooks(tmp_path)] == ["a.ipynb", "b.ipynb", "copy of b.ipynb"]


def test_every_notebook_is_a_pair_and_the_ipynb_is_what_jupytext_makes() -> None:
    import jupytext

    ipynbs = _tracked_ipynbs()
    strays = sorted({p.name for p in ipynbs} - {f"{p.stem}.ipynb" for p in NOTEBOOKS})
    assert not strays, f"notebooks/ holds .ipynb files that are not a jupytext pair: {strays}"
    assert [p.stem for p in ipynbs] == [p.stem for p in NOTEBOOKS] and NOTEBOOKS, "a notebook script has no .ipynb"
    for py in NOTEBOOKS:
        made = jupytext.read(py)
        stored = nbformat.read(py.with_suffix(".ipynb"), as_version=4)

        def cells(nb: nbformat.NotebookNode) -> list[tuple[str, str, list[str]]]:
            return [(c.cell_type, c.source, list(c.metadata.get("tags", []))) for c in nb.cells]

        assert cells(stored) == cells(made), f"{py.name}: run `jupytext --sync {py.relative_to(ROOT)}`"
        assert all(not c.get("outputs") for c in stored.cells), f"{py.stem}.ipynb is committed with outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_parameters_are_set_once_in_the_tagged_cell(path: Path) -> None:
    """papermill injects after the cell tagged ``parameters``; a later assignment of a parameter would undo it
    (``LABELS`` was once set in a later cell, so ``-p LABELS annotations`` was silently overwritten)."""
    import jupytext

    nb = jupytext.read(path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    tagged = [i for i, c in enumerate(code) if "parameters" in c.metadata.get("tags", [])]
    assert tagged == [0], f"{path.name}: the first code cell, and only it, is tagged 'parameters'"
    params = set(_parameters(code[0].source))
    assert params, f"{path.name}: the parameters cell sets nothing"
    for cell in code[1:]:
        src = "\n".join(line for line in cell.source.splitlines() if not line.startswith(("%", "!")))
        for node in ast.walk(ast.parse(src)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
            again = {t.id for t in targets if isinstance(t, ast.Name)} & params
            assert not again, f"{path.name}: parameter(s) {sorted(again)} assigned again after the parameters cell"


def _parameters(source: str) -> dict[str, str | None]:
    """The names a parameters cell sets, each with its annotation (None when it has none)."""
    out: dict[str, str | None] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = ast.unparse(node.annotation)
        elif isinstance(node, ast.Assign):
            out.update({t.id: None for t in node.targets if isinstance(t, ast.Name)})
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_parameter_is_typed_and_read(path: Path) -> None:
    """Setting a parameter a notebook never reads once did nothing, silently (failure_attribution declared JUDGE,
    TAU, SEED, N_BOOT); papermill --help-notebook showed 'Unknown type' for every parameter."""
    import jupytext

    code = [c for c in jupytext.read(path).cells if c.cell_type == "code"]
    params = _parameters(code[0].source)
    assert all(params.values()), f"{path.name}: parameters without a type: {[n for n, t in params.items() if not t]}"
    rest = "\n".join(c.source for c in code[1:])
    used = {node.id for node in ast.walk(ast.parse("\n".join(line for line in rest.splitlines()
                                                             if not line.startswith(("%", "!")))))
            if isinstance(node, ast.Name)}
    assert not set(params) - used, f"{path.name}: parameters never read: {sorted(set(params) - used)}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_papermill_lists_every_parameter_with_its_type_and_default(path: Path) -> None:
    """``papermill --help-notebook`` (``papermill.inspect_notebook``) left out every ``X: str | None = None``: FIGURES
    everywhere, LABELS in judge_validation. Every assignment of the parameters cell is listed, typed, defaulted."""
    import jupytext
    import papermill

    code = [c for c in jupytext.read(path).cells if c.cell_type == "code"]
    declared = {node.target.id: (ast.unparse(node.annotation), ast.unparse(node.value))  # type: ignore[union-attr]
                for node in ast.parse(code[0].source).body if isinstance(node, ast.AnnAssign)}
    listed = papermill.inspect_notebook(str(path.with_suffix(".ipynb")))
    assert list(listed) == list(declared), f"{path.name}: papermill lists {list(listed)}"
    for name, (annotation, default) in declared.items():
        assert listed[name]["inferred_type_name"] == annotation, (name, listed[name])
        assert ast.literal_eval(listed[name]["default"]) == ast.literal_eval(default), (name, listed[name])


def test_notebook_scripts_pass_ruff() -> None:
    ruff = Path(sys.executable).with_name("ruff")
    if not ruff.exists():
        pytest.skip("ruff is not installed in this environment (it comes with the test extra)")
    out = subprocess.run([str(ruff), "check", "--select", "F,E9", *map(str, NOTEBOOKS)], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout


def test_public_surface_and_version() -> None:
    import workbench

    assert workbench.__version__ == importlib.metadata.version("compaction-workbench")
    for name in ("read_log", "load", "need", "derive_missing", "validate", "parse", "prune", "reliability",
                 "efficiency", "auroc_ci", "bootstrap_ci"):
        assert callable(getattr(workbench, name)), name
    assert (PACKAGE / "py.typed").exists()


def test_no_package_attribute_shadows_a_submodule() -> None:
    """``workbench.bootstrap`` was once the function, so ``workbench.bootstrap.interval`` raised AttributeError."""
    import pkgutil

    import workbench

    for info in pkgutil.walk_packages(workbench.__path__, "workbench."):
        if info.name.endswith(".__main__"):
            continue  # running it is the command
        module = importlib.import_module(info.name)
        parent, _, leaf = info.name.rpartition(".")
        value = getattr(importlib.import_module(parent), leaf)
        assert value is module, f"{parent}.{leaf} is {value!r}, not the submodule"


def test_the_bootstrap_module_is_the_module() -> None:
    out = subprocess.run([sys.executable, "-c", "import workbench.stats._bootstrap as b; print(callable(b.interval))"],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "True"


def test_issue_named_functions_keep_their_names() -> None:
    """Names other modules, notebooks and users' scripts rely on (earlier issues named them)."""
    named = {"workbench.summaries._grammar": ["parse", "prune"], "workbench.tokens": ["count"],
             "workbench.stats": ["reliability", "dependency", "efficiency_by"],
             "workbench.stats._bootstrap": ["auroc_ci", "interval", "bootstrap"],
             "workbench.analyses.focus": ["citation_scores", "hoeffding_bound", "rollouts_needed"],
             "workbench.annotate": ["AnnotationStore", "render_item_html"],
             "workbench.datasets": ["load", "need", "derive_missing", "select_runs", "entry_clusters", "ensure_testbed"],
             "workbench.adapters": ["read_log", "FORMATS"]}
    for module, names in named.items():
        mod = importlib.import_module(module)
        assert all(callable(getattr(mod, n)) or n == "FORMATS" for n in names), module


def test_every_workbench_name_a_notebook_benchmark_or_tool_imports_exists() -> None:
    """Moving ``fact_check_compactions`` out of ``workbench.analyses.trace`` once broke the TRACE notebook, which only the
    slow notebook run would have found: every ``from workbench.X import Y`` outside the package resolves."""
    missing = []
    for path in [*NOTEBOOKS, *sorted((ROOT / "benchmarks").glob("*.py")), *sorted((ROOT / "tools").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "workbench":
                if any(part.startswith("_") for part in node.module.split(".")):  # issue 58: the facades only
                    missing.append(f"{path.name}: {node.module} is private; import from its package")
                    continue
                module = importlib.import_module(node.module)
                for alias in node.names:
                    if _is_submodule(f"{node.module}.{alias.name}"):
                        continue
                    if not hasattr(module, alias.name):
                        missing.append(f"{path.name}: {node.module}.{alias.name}")
                    elif alias.name not in getattr(module, "__all__", ()):  # issue 40: the public surface only
                        missing.append(f"{path.name}: {node.module}.{alias.name} is not in its __all__")
    assert not missing, missing


def test_every_module_names_its_public_surface() -> None:
    """Issue 40: every module declares ``__all__`` (moving internals then breaks no user), and each name in it
    exists."""
    lacking, dangling = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__main__.py" or (path.name == "__init__.py" and path.parent.name == "cli"):
            continue
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        module = importlib.import_module(name)
        if not hasattr(module, "__all__"):
            lacking.append(name)
        else:
            dangling += [f"{name}.{n}" for n in module.__all__ if not hasattr(module, n)]
    assert not lacking and not dangling, (lacking, dangling)


def _is_submodule(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # the parent is a module, not a package
        return False


def test_the_import_check_finds_a_name_a_module_does_not_have() -> None:
    assert not _is_submodule("workbench.analyses.trace.fact_check_compactions") and not hasattr(
        importlib.import_module("workbench.analyses.trace"), "fact_check_compactions")
    assert _is_submodule("workbench.stats._success")


def test_the_license_is_an_spdx_expression_with_its_file() -> None:
    """The table form ``license = {text = ...}`` is deprecated (setuptools stops building it after 2027-02-18)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] and all((ROOT / f).is_file() for f in project["license-files"])


def test_the_guide_module_map_names_every_module_and_none_that_is_gone() -> None:
    """Issue 40: the map missed cli/explore.py, cli/labelstudio.py, display.py, executors.py and progress.py. Each
    top-level module is named in the map (``workbench/x.py`` or ``x.py``), each module of a package in its
    package's row (``name`` or ``name.py``), and every path the map names exists."""
    import re

    rows = [line for line in (ROOT / "docs" / "guide" / "modules.md").read_text(encoding="utf-8").splitlines()
            if line.startswith("| `workbench/")]
    by_first = {path: row for row in rows for path in re.findall(r"`(workbench/[^`]+)`", row.split("|")[1])}
    text = "\n".join(rows)
    missing = []
    for f in sorted(PACKAGE.rglob("*.py")):
        if f.name in ("__init__.py", "__main__.py"):
            continue
        rel = f.relative_to(ROOT).as_posix()
        parent = f.parent.relative_to(ROOT).as_posix() + "/"
        if parent == "workbench/":
            named = f"`{rel}`" in text or f"`{f.name}`" in text
        else:
            named = re.search(rf"`{re.escape(f.stem)}(\.py)?`", by_first.get(parent, "")) is not None
        if not named:
            missing.append(rel)
    gone = [p for p in re.findall(r"`(workbench/[^`]+)`", text) if not (ROOT / p).exists()]
    assert not missing and not gone, (missing, gone)


def test_the_command_line_only_parses_calls_and_prints() -> None:
    """Issue 40: the verbs held library logic (filtering labels, globbing samples, checking methods). No cli/ module
    imports polars, numpy or scipy, at module level or in a function, nor walks directories: what they compute is a
    library function a notebook can call."""
    heavy = {"polars", "numpy", "scipy", "pandas", "pyarrow"}
    found = []
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found += [f"{path.name}: import {a.name}" for a in node.names if a.name.split(".")[0] in heavy]
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in heavy:
                found.append(f"{path.name}: from {node.module}")
            elif isinstance(node, ast.Attribute) and node.attr in ("glob", "rglob", "walk", "iterdir"):
                found.append(f"{path.name}:{node.lineno}: .{node.attr}(")
    assert not found, found



def test_plots_only_draw_what_they_are_given() -> None:
    """Issue 40: plots/sessions.py and plots/sjc.py grouped and averaged. No figure function groups, aggregates or
    takes a statistic: those are library functions whose results a figure is given."""
    banned = {"group_by", "agg", "mean", "median", "quantile", "std", "var"}
    found = []
    for path in sorted((PACKAGE / "plots").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            numpy_call = isinstance(node.func.value, ast.Name) and node.func.value.id in ("np", "numpy")
            if node.func.attr in banned or (numpy_call and node.func.attr in ("histogram", "bincount", "unique")):
                found.append(f"{path.name}:{node.lineno}: .{node.func.attr}(")
    assert not found, found


# ---------------------------------------------------------------------------
# the package rules (issue 58): one package per domain, each __init__ a lazy name map, no import up a layer

#: the layers, lowest first, as ``.importlinter`` states them (``make lint`` runs import-linter's layers contract): a
#: package may import any package below it, never one above (judges and infer share a layer, independent)
def _walk_tool():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("layer_walk", ROOT / "tools" / "layer_walk.py")
    assert spec is not None and spec.loader is not None
    walk = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(walk)
    return walk


LAYERS = _walk_tool().importlinter_layers(ROOT / ".importlinter")
LAYER = {name: i for i, names in enumerate(LAYERS) for name in names}


def _package_of(path: Path) -> str:
    """The top-level package (or module) of the workbench a file belongs to."""
    parts = path.relative_to(PACKAGE).parts
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


def package_edges() -> dict[tuple[str, str], set[str]]:
    """(package, package it imports) -> the files that import it, at the top or inside a function."""
    edges: dict[tuple[str, str], set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _package_of(path)
        if source == "__init__":
            continue
        for module in imported_modules(path):
            parts = module.split(".")
            if parts[0] != "workbench" or len(parts) < 2 or parts[1] == source:
                continue
            target = parts[1] if parts[1] in LAYER else None
            if target is not None:
                edges.setdefault((source, target), set()).add(path.relative_to(PACKAGE).as_posix())
    return edges


def test_every_package_and_top_level_module_has_a_layer() -> None:
    found = {_package_of(p) for p in PACKAGE.rglob("*.py")} - {"__init__"}
    assert found == set(LAYER), (sorted(found - set(LAYER)), sorted(set(LAYER) - found))
    assert len([p for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]) <= 8  # a handful of top-level modules


def test_the_layers_contract_finds_an_import_up_a_layer(tmp_path: Path) -> None:
    """``make lint`` checks the layers with import-linter (``.importlinter``); its contract holds on the tree, and on
    a copy of the package with one import up a layer (the loader from the statistics) it is broken."""
    import shutil
    import subprocess
    import sys

    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.skip("import-linter is not installed (the test extra installs it)")
    copy = tmp_path / "tree"
    shutil.copytree(PACKAGE, copy / "workbench", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".importlinter", copy / ".importlinter")
    env = {"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin"}
    kept = subprocess.run([str(lint)], cwd=copy, env=env, capture_output=True, text=True, timeout=300)
    assert kept.returncode == 0, kept.stdout[-2000:]
    with open(copy / "workbench" / "stats" / "_bootstrap.py", "a", encoding="utf-8") as fh:
        fh.write("\n\ndef _up() -> None:\n    from workbench.datasets import load  # noqa: F401\n")
    broken = subprocess.run([str(lint)], cwd=copy, env=env, capture_output=True, text=True, timeout=300)
    assert broken.returncode == 1 and "workbench.stats._bootstrap -> workbench.datasets" in broken.stdout


def _init_statements(path: Path) -> list[str]:
    """What a package __init__ holds beyond a docstring, imports, ``__all__``, the lazy map and the type checker's
    imports: each a line naming it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    extra = []
    for i, node in enumerate(tree.body):
        if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            if names <= {"__all__", "__getattr__", "__dir__"}:
                continue
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING" and \
                all(isinstance(n, (ast.Import, ast.ImportFrom)) for n in node.body):
            continue
        extra.append(f"line {node.lineno}: {ast.unparse(node).splitlines()[0]}")
    return extra


@pytest.mark.parametrize("path", sorted(p for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE),
                         ids=lambda p: p.parent.relative_to(PACKAGE).as_posix())
def test_every_package_init_is_a_lazy_name_map_without_logic(path: Path) -> None:
    assert not _init_statements(path), _init_statements(path)


def test_the_init_rule_finds_logic(tmp_path: Path) -> None:
    path = tmp_path / "__init__.py"
    path.write_text('"""A package."""\nfrom x import y\n__all__ = ["y"]\nJUDGES = ("a",)\ndef make(): pass\n')
    assert _init_statements(path) == ["line 4: JUDGES = ('a',)", "line 5: def make():"]


def test_importing_every_package_loads_no_table_or_array_library() -> None:
    """A package's facade costs nothing: importing every one of them (as ``workbench --help``, a worker or a
    notebook's first line does) loads no polars, numpy or scipy."""
    packages = sorted({".".join(p.parent.relative_to(ROOT).parts) for p in PACKAGE.rglob("__init__.py")})
    assert len(packages) > 15
    code = (f"import sys\nfor m in {packages!r}: __import__(m)\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'polars', 'numpy', 'scipy', 'pyarrow'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_no_two_modules_share_a_stem_outside_plots_and_cli() -> None:
    """One meaning per name: "sessions" once named four modules. ``plots/`` and ``cli/`` mirror the analyses' names
    on purpose."""
    stems: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if path.name in ("__init__.py", "__main__.py") or rel.parts[0] in ("plots", "cli"):
            continue
        stems.setdefault(path.stem.lstrip("_"), []).append(rel.as_posix())
    shared = {stem: paths for stem, paths in stems.items() if len(paths) > 1}
    assert not shared, shared


def test_no_two_public_functions_share_a_name_with_different_signatures() -> None:
    """``explore.select_runs`` and ``datasets.select_runs`` once took different arguments. A figure of ``plots``
    takes the name of the analysis whose result it draws, on purpose."""
    import inspect

    seen: dict[str, tuple[str, str]] = {}
    clashes = []
    packages = sorted({".".join(p.parent.relative_to(ROOT).parts) for p in PACKAGE.rglob("__init__.py")})
    for name in packages:
        if name.startswith("workbench.plots"):
            continue
        package = importlib.import_module(name)
        for attr in getattr(package, "__all__", ()):
            value = getattr(package, attr)
            if not inspect.isfunction(value):
                continue
            signature = str(inspect.signature(value))
            where = f"{value.__module__}.{value.__name__}"
            if attr in seen and seen[attr][0] != where and seen[attr][1] != signature:
                clashes.append(f"{attr}: {seen[attr][0]}{seen[attr][1]} and {where}{signature}")
            seen.setdefault(attr, (where, signature))
    assert not clashes, clashes


def test_the_layer_walk_counts_in_the_layers_stated_here() -> None:
    """tools/layer_walk.py (the closing note's walk) counts returns to a higher layer in the order .importlinter
    states."""
    walk = _walk_tool()
    assert walk.LAYERS == LAYERS and LAYERS[0] == ("errors", "tokens") and LAYERS[-1] == ("cli",)
    assert walk.layer_of("stats/_bootstrap.py") == LAYER["stats"] and walk.layer_of("bootstrap.py") == LAYER["stats"]
    assert walk.summary({("tables/_files.py", "cli/main.py"): 3, ("cli/main.py", "tables/_files.py"): 1}) == {
        "files": 2, "pairs": 2, "returns": 1, "return_calls": 3, "up": ["tables/_files.py -> cli/main.py"]}


def test_every_face_is_what_its_modules_declare_and_resolves_to_their_objects() -> None:
    """A rebuilt lazy map once dropped ``tables.TRAJECTORY_TABLES``. Faces are generated from each module's
    ``__all__`` (``tools/faces.py``; ``make lint`` runs its check): every face is current, and each public name of a
    package is the very object of the module that declares it."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(ROOT / "tools" / "faces.py"), "--check"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    spec = importlib.util.spec_from_file_location("faces", ROOT / "tools" / "faces.py")
    assert spec is not None and spec.loader is not None
    faces = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(faces)
    for init in faces.faces():
        package = importlib.import_module(".".join(init.parent.relative_to(ROOT).parts))
        for path in init.parent.glob("_*.py"):
            if path.name.startswith("__"):
                continue
            module = importlib.import_module(f"{package.__name__}.{path.stem}")
            for name in faces.defined_public(path):
                assert getattr(package, name) is getattr(module, name), f"{package.__name__}.{name}"


def test_the_benchmarks_index_has_a_row_for_every_script() -> None:
    """Design round 2: 36 files and no index, 15 of 24 scripts named in no result document. benchmarks/README.md
    has one row per script and names no script that is gone, nor a result file that is not there."""
    import re

    index = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([a-z_]+\.py)` \|", index, re.MULTILINE))
    assert rows == {p.name for p in (ROOT / "benchmarks").glob("*.py")}
    for doc in set(re.findall(r"`([a-z_]+\.md)` \(", index)):
        assert (ROOT / "benchmarks" / doc).is_file(), doc
