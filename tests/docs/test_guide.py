"""The two commands and the user guide's tour run as printed: each tour command of ``docs/guide/getting-started.md``,
in order, on a fresh copy of the project, against local servers on 127.0.0.1 (jevcompat mock for Jev, the loopback
server for the OpenAI judge); the guide's other examples name what they say they name."""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.llm_server import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide"
BIN = Path(sys.executable).parent


def _blocks() -> list[str]:
    text = (GUIDE / "getting-started.md").read_text(encoding="utf-8")
    section = text.split("## A short tour", 1)[1].split("\n## ", 1)[0]
    return [block.split("```", 1)[0] for block in section.split("```bash")[1:]]


def tour() -> list[str]:
    """The tour's commands, as a user with only the package installed types them."""
    return [line.split("  #", 1)[0].strip() for line in _blocks()[0].splitlines() if line.strip()]


def checkout_commands() -> list[str]:
    """The commands the tour runs from a checkout (the notebooks are not package data)."""
    return [line.split("  #", 1)[0].strip() for line in _blocks()[1].splitlines() if line.strip()]


def test_readme_keeps_its_two_commands_and_ci_calls_the_test_one() -> None:
    for page in (ROOT / "README.md", GUIDE / "getting-started.md", ROOT / "docs" / "index.md"):
        text = page.read_text(encoding="utf-8")
        assert "make figures" in text and "make test" in text, page
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in ci


@pytest.mark.slow
def test_the_tour_runs_as_printed(tmp_path: Path) -> None:
    """Issue 83: the tour runs as printed with only the package installed, in an empty directory outside the
    checkout (its example logs are package data, found by ``examples()``)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "TYPESAFE_API_KEY": "",
           "OPENAI_API_KEY": "", "PYTHONPATH": ""}
    openai = FakeLLMServer()
    mock: subprocess.Popen[str] | None = None
    jev_port = "8787"
    commands = tour()
    assert len(commands) >= 12 and any("--judge jev" in c for c in commands)
    assert not [c for c in commands if ".venv" in c or "data/" in c], "the tour names a checkout's path"
    try:
        for command in commands:
            if command.startswith("EXAMPLES="):
                done = subprocess.run(["bash", "-c", f"{command}; echo $EXAMPLES"], cwd=elsewhere, env=env,
                                      capture_output=True, text=True, timeout=60)
                env["EXAMPLES"] = done.stdout.strip()
                assert done.returncode == 0 and (Path(env["EXAMPLES"]) / "invoice_log.jsonl").is_file(), done.stderr
                continue
            argv = [os.path.expandvars(a) if "$" in a else a for a in shlex.split(command.rstrip("&").strip())]
            argv = [a.replace("$EXAMPLES", env["EXAMPLES"]) for a in argv]
            if argv[0] == "jevcompat":  # the tour starts a local Jev; the test starts it on a free port
                mock = subprocess.Popen([*argv[:2], "--port", "0"], cwd=elsewhere, stderr=subprocess.PIPE,
                                        stdout=subprocess.DEVNULL, text=True, env=env)
                assert mock.stderr is not None
                port = re.search(r":(\d+)/v1/systemone", mock.stderr.readline())
                assert port, "jevcompat mock did not start"
                jev_port = port.group(1)
                continue
            argv = [a.replace("127.0.0.1:8787", f"127.0.0.1:{jev_port}")
                    .replace("http://127.0.0.1:8000", openai.url) for a in argv]
            stdin = "1\n2\n1\n3\nq\n" if argv[1] in ("label", "adjudicate") else ""
            done = subprocess.run(argv, cwd=elsewhere, env=env, input=stdin, capture_output=True, text=True,
                                  timeout=900)
            assert done.returncode == 0, f"{command}\n{done.stderr[-2000:]}"
            assert "Traceback" not in done.stderr, command
            if argv[1] == "validate":  # the comment says what it prints
                assert done.stdout.startswith(f"{argv[2]}: ok (4 runs"), done.stdout
    finally:
        openai.close()
        if mock is not None:
            mock.terminate()
            mock.wait(timeout=10)
            if mock.stderr is not None:
                mock.stderr.close()
    assert (elsewhere / "build" / "jev.parquet").exists()
    assert (elsewhere / "build" / "annotations" / "adjudication.jsonl").exists()
    # what the tour wrote: its outputs under build/, and the judges' response cache (--cache, default .cache/llm)
    assert sorted(p.name for p in elsewhere.iterdir()) == [".cache", "build"]


@pytest.mark.extra  # a testbed and a notebook kernel; CI's make figures runs the same command on the whole project
def test_the_tours_checkout_commands_run_as_printed(tmp_path: Path) -> None:
    """The tour's commands from a checkout (the notebooks are not package data), at a copy of the project."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "PYTHONPATH": ""}
    work = tmp_path / "project"
    work.mkdir()
    for part in ("data/published", "data/real", "notebooks", "annotations"):
        shutil.copytree(ROOT / part, work / part)
    (work / ".venv").symlink_to(BIN.parent)
    for command in checkout_commands():
        argv = shlex.split(command)
        assert argv[0].startswith(".venv/bin/"), command
        if argv[0].endswith("jupyter"):  # JupyterLab waits for a person: tests/annotate/test_labeling_browser.py drives it
            assert argv[1:] == ["lab", "notebooks/labeling.ipynb"] and (work / argv[2]).exists()
            continue
        assert argv[1:] == ["figures"], command
        # the main job: CI runs every notebook (make figures), and the notebook tests each one; here one, on the
        # testbed this command makes
        done = subprocess.run([*argv, "--only", "summary_composition"], cwd=work, capture_output=True, text=True,
                              timeout=900, env={**env, "WORKBENCH_TESTBED_TASKS": "6", "WORKBENCH_TESTBED_RUNS": "1"})
        assert done.returncode == 0, f"{command}\n{done.stderr[-2000:]}"
    assert {"sjc_table2_composition.png", "sjc_table9_unsupported_by_boundary.png", "sjc_table10_persistence.png"} \
        <= {p.name for p in (work / "figures").glob("*.png")}


def test_the_shipped_examples_are_package_data() -> None:
    """Issue 83: the tour's examples are in the wheel (package data), not only in a checkout; an unknown example is
    named with the ones there are."""
    import tomllib
    from fnmatch import fnmatch

    from workbench.datasets import examples

    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"][
        "package-data"]["workbench"]
    package = ROOT / "workbench"
    shipped = [p for p in examples().rglob("*") if p.is_file()]
    assert len(shipped) >= 10 and examples().is_relative_to(package)
    unmatched = [p for p in shipped if not any(fnmatch(str(p.relative_to(package)), pat) for pat in patterns)]
    assert not unmatched, unmatched
    assert examples("invoice_log.jsonl").is_file() and examples("codex").is_dir()
    with pytest.raises(FileNotFoundError, match="no example 'nope': the package ships claude-code, "):
        examples("nope")
    with pytest.raises(FileNotFoundError):
        examples("../_load.py")  # nothing outside the examples


def test_the_params_yaml_example_names_parameters_the_notebook_declares() -> None:
    """The notebooks page's ``papermill -f`` example: every key is a parameter of the notebook it names, as papermill's own
    ``inspect_notebook`` reads it, and each value has the type the notebook declares."""
    import papermill
    import yaml

    text = (GUIDE / "notebooks.md").read_text(encoding="utf-8")
    block = text.split("```yaml", 1)[1].split("```", 1)[0]
    notebook = re.search(r"papermill (notebooks/\S+\.ipynb) \S+ -f", block)
    assert notebook, "the YAML example names the notebook it is for"
    declared = papermill.inspect_notebook(str(ROOT / notebook.group(1)))
    values = yaml.safe_load(block)
    assert values and set(values) <= set(declared), sorted(set(values) - set(declared))
    python = {"str": str, "int": int, "float": (int, float), "list[int]": list, "str | None": (str, type(None))}
    for name, value in values.items():
        assert isinstance(value, python[declared[name]["inferred_type_name"]]), (name, value)


def test_the_labeling_notebooks_defaults_are_the_tours_sample_and_store() -> None:
    """Following the tour, the widget opens the sample the tour drew and the store it labeled into."""
    import papermill

    declared = papermill.inspect_notebook(str(ROOT / "notebooks" / "labeling.ipynb"))
    default = {name: ast.literal_eval(p["default"]) for name, p in declared.items()}
    labels = [shlex.split(c) for c in tour() if " label " in c]
    assert labels and all(argv[2] == default["SAMPLE"] for argv in labels)
    assert all(argv[argv.index("--store") + 1] == default["STORE"] for argv in labels)
    readme = (GUIDE / "labeling.md").read_text(encoding="utf-8")
    for name in default:  # the labeling page lists every parameter with its default
        assert f"`{name}`" in readme, name


def test_every_example_writes_under_build() -> None:
    """The README's example `workbench import your_log.jsonl --out mydir` made an untracked mydir/ at the root: every
    command the README and the docs' pages print writes under build/ (or regenerates the testbed where the project
    keeps it)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    text = "\n".join(p.read_text(encoding="utf-8") for p in pages)
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    outputs = []
    lines = "\n".join(blocks).replace("\\\n", " ").splitlines()  # continuation lines joined
    for line in (ln.split("  #", 1)[0] for ln in lines):
        words = shlex.split(line) if line.startswith((".venv/bin/", "workbench ")) else []
        outputs += [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("--out", "--output", "--build")]
        outputs += [w.split("=", 1)[1] for w in words if w.startswith(("DATA=", "FIGURES="))]
        outputs += [words[i + 2] for i, w in enumerate(words[:-2]) if w == "-p" and words[i + 1] in ("DATA", "FIGURES")]
    assert outputs
    outside = [o for o in outputs if not o.startswith(("build/", "/tmp/", "data/testbed"))]
    assert not outside, f"examples that write outside build/: {outside}"
