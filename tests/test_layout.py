"""The layout holds: compute never imports a model client, notebooks are paired text, the public surface exists,
and the names earlier releases used still import (each a test that fails when someone breaks the rule)."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "workbench"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.py"))

#: modules that compute; none of them may talk to a model (DESIGN.md: "Computation never calls a model")
COMPUTE = [*sorted((PACKAGE / "metrics").glob("*.py")),
           *(PACKAGE / f"{name}.py" for name in ("bootstrap", "sensitivity", "composition", "attribution", "trace",
                                                 "focus", "calibration", "compare", "identifiers", "labels",
                                                 "summary", "sjc", "replay"))]


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


@pytest.mark.parametrize("path", [p for p in COMPUTE if p.exists()], ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_compute_modules_never_import_model_clients(path: Path) -> None:
    bad = {m for m in imported_modules(path) if m.startswith(("workbench.llm", "workbench.infer"))}
    assert not bad, f"{path.name} imports {sorted(bad)}"


def test_metrics_do_not_import_annotate() -> None:
    for path in (PACKAGE / "metrics").glob("*.py"):
        assert not {m for m in imported_modules(path) if m.startswith("workbench.annotate")}, path.name


def test_importing_a_compute_module_loads_no_client() -> None:
    """At run time too: a fresh interpreter that imports every compute module has loaded neither package."""
    mods = [f"workbench.{p.relative_to(PACKAGE).with_suffix('').as_posix().replace('/', '.')}" for p in COMPUTE
            if p.exists() and p.name != "__init__.py"]
    code = (f"import sys\nfor m in {mods!r}: __import__(m)\n"
            "print(sorted(m for m in sys.modules if m.startswith(('workbench.llm', 'workbench.infer'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_every_notebook_is_a_pair_and_the_ipynb_is_what_jupytext_makes() -> None:
    import jupytext

    ipynbs = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert [p.stem for p in ipynbs] == [p.stem for p in NOTEBOOKS] and NOTEBOOKS
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
    params = {t.id for node in ast.parse(code[0].source).body if isinstance(node, ast.Assign)
              for t in node.targets if isinstance(t, ast.Name)}
    assert params, f"{path.name}: the parameters cell sets nothing"
    for cell in code[1:]:
        src = "\n".join(line for line in cell.source.splitlines() if not line.startswith(("%", "!")))
        for node in ast.walk(ast.parse(src)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
            again = {t.id for t in targets if isinstance(t, ast.Name)} & params
            assert not again, f"{path.name}: parameter(s) {sorted(again)} assigned again after the parameters cell"


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
    for name in ("read_log", "load_tables", "derive_missing", "validate", "parse", "prune", "reliability",
                 "efficiency", "auroc_ci", "bootstrap"):
        assert callable(getattr(workbench, name)), name
    assert (PACKAGE / "py.typed").exists()


#: (old import path, name, new import path, name): every name earlier releases used keeps working
MOVED = [
    ("workbench.io", "read_tables", "workbench.tables", "read_tables"),
    ("workbench.io", "write_tables", "workbench.tables", "write_tables"),
    ("workbench.io", "read_table", "workbench.tables", "read_table"),
    ("workbench.io", "write_table", "workbench.tables", "write_table"),
    ("workbench.io", "write_jsonl", "workbench.tables", "write_jsonl"),
    ("workbench.io", "json_lines", "workbench.tables", "json_lines"),
    ("workbench.io", "read_tau_bench", "workbench.adapters.tau_bench", "read_tau_bench"),
    ("workbench.io", "read_openai_chat", "workbench.adapters.openai_chat", "read_openai_chat"),
    ("workbench.io", "chat_to_run", "workbench.adapters.openai_chat", "chat_to_run"),
    ("workbench.io", "write_trajectories", "workbench.adapters.trajectory", "write_trajectories"),
    ("workbench.io", "FORMATS", "workbench.adapters", "FORMATS"),
    ("workbench.data", "load_tables", "workbench.datasets", "load_tables"),
    ("workbench.data", "ensure_testbed", "workbench.datasets", "ensure_testbed"),
    ("workbench.claude_compaction", "check", "workbench.identifiers", "claude_check"),
    ("workbench.claude_compaction", "summary_identifiers", "workbench.identifiers", "summary_identifiers"),
    ("workbench.claude_compaction", "check_table", "workbench.adapters.claude_compaction", "check_table"),
    ("workbench.summary", "identifiers", "workbench.identifiers", "opaque_identifiers"),
    ("workbench.trace", "fact_check", "workbench.identifiers", "fact_check"),
    ("workbench.trace", "fact_check_compactions", "workbench.identifiers", "fact_check_compactions"),
    ("workbench.replay", "arg_identifiers", "workbench.identifiers", "arg_identifiers"),
    ("workbench.llm.compressor", "OpenClawCompressor", "workbench.infer.compressor", "OpenClawCompressor"),
    ("workbench.metrics.discrimination", "gold_labels", "workbench.labels", "gold_labels"),
    ("workbench.annotate.store", "latest_labels", "workbench.labels", "latest_labels"),
    ("workbench.attribution", "table11", "workbench.attribution", "failures_by_scenario"),
]


@pytest.mark.parametrize(("old", "name", "new", "new_name"), MOVED, ids=[f"{m[0]}.{m[1]}" for m in MOVED])
def test_old_import_paths_still_work(old: str, name: str, new: str, new_name: str) -> None:
    assert getattr(importlib.import_module(old), name) is getattr(importlib.import_module(new), new_name)


def test_issue_named_functions_keep_their_names() -> None:
    """Names other modules, notebooks and users' scripts rely on (earlier issues named them)."""
    named = {"workbench.summary": ["parse", "prune"], "workbench.tokens": ["count"],
             "workbench.metrics": ["reliability", "dependency", "efficiency_by"],
             "workbench.bootstrap": ["auroc_ci", "interval", "bootstrap"],
             "workbench.sensitivity": ["pruned_fraction"],
             "workbench.focus": ["citation_scores", "hoeffding_bound", "rollouts_needed"],
             "workbench.annotate": ["AnnotationStore", "render_item_html"],
             "workbench.datasets": ["derive_missing", "select_runs", "entry_clusters", "ensure_testbed"],
             "workbench.adapters": ["read_log", "FORMATS"]}
    for module, names in named.items():
        mod = importlib.import_module(module)
        assert all(callable(getattr(mod, n)) or n == "FORMATS" for n in names), module


def test_old_read_log_keeps_its_fmt_keyword() -> None:
    from workbench import adapters, io

    example = ROOT / "data" / "examples" / "invoice_log.jsonl"
    old, new = io.read_log(example, fmt="trajectory"), adapters.read_log(example, format="trajectory")
    assert old.keys() == new.keys() and all(old[k].equals(new[k]) for k in old)
