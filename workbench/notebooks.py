"""Execute the notebooks in a fresh kernel each (nbclient) and report the first failing cell."""

from __future__ import annotations

import sys
import time
from pathlib import Path


#: notebooks a person works in (they wait for clicks and make no figures): run only when named
INTERACTIVE = frozenset({"labeling"})


def run_all(notebooks: Path, build: Path, *, timeout: int = 1200, parameters: dict[str, object] | None = None,
            cwd: Path | None = None, names: list[str] | None = None) -> int:
    """Execute every ``*.ipynb`` in ``notebooks`` (sorted), saving executed copies in ``build``.

    Kernels start in ``cwd`` (the current directory: the project root for ``workbench
    figures``). ``parameters`` are injected after the ``parameters`` cell (papermill's
    convention); ``names`` restricts the run to some notebooks (and is the only way to run an
    :data:`INTERACTIVE` one).

    Returns 0, or 1 after printing ``NOTEBOOK: cell N: ERROR`` for the first error.
    Executed copies (with outputs) go to ``build``; the sources are never modified.
    """
    import shutil
    import tempfile

    import nbformat
    from jupyter_client import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    paths = sorted(p for p in notebooks.glob("*.ipynb")
                   if (p.stem in names if names is not None else p.stem not in INTERACTIVE))
    if not paths:
        print(f"no notebooks in {notebooks}", file=sys.stderr)
        return 1
    build.mkdir(parents=True, exist_ok=True)
    root = (cwd or Path.cwd()).resolve()
    for i, path in enumerate(paths, start=1):
        started = time.perf_counter()
        print(f"[{i}/{len(paths)}] {path.name} ...", flush=True)
        nb = nbformat.read(path, as_version=4)
        if parameters:
            inject_parameters(nb, parameters)
        # the kernel talks over local IPC sockets in a private directory: no TCP port, no transport warning
        sockets = tempfile.mkdtemp(prefix="workbench-kernel-")
        km = KernelManager(kernel_name="python3", transport="ipc", ip=str(Path(sockets) / "kernel"))
        client = NotebookClient(nb, km=km, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": str(root)}})
        # The kernel process's own stderr (its log, not the cells' output, which travels to the notebook)
        # goes to a file: ipykernel can log a harmless traceback while it shuts down, which is noise
        # after a notebook that ran; when one fails, the log is printed after the failing cell.
        log = build / f"{path.stem}.kernel.log"
        failed = True
        try:
            with log.open("wb") as kernel_stderr:
                try:
                    client.execute(stderr=kernel_stderr)
                    failed = False
                except CellExecutionError as err:
                    index, message = _failing_cell(nb, err)
                    nbformat.write(nb, build / path.name)
                    print(f"{path}: cell {index}: {message}", file=sys.stderr)
                    return 1
                finally:
                    if km.has_kernel:  # a kernel manager we pass in is ours to shut down (nbclient leaves it running)
                        km.shutdown_kernel()
        finally:
            shutil.rmtree(sockets, ignore_errors=True)
            _report_kernel_log(log, failed)
        nbformat.write(nb, build / path.name)
        print(f"[{i}/{len(paths)}] {path.name} done in {time.perf_counter() - started:.1f}s", flush=True)
    return 0


def _report_kernel_log(log: Path, failed: bool, lines: int = 40) -> None:
    """After a failure, print the end of the kernel's log; after a success, only where it is. An empty log goes."""
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    if not text.strip():
        log.unlink(missing_ok=True)
        return
    if failed:
        tail = text.rstrip("\n").splitlines()[-lines:]
        print(f"the kernel's log ({log}, last {len(tail)} lines):", *tail, sep="\n", file=sys.stderr)
    else:
        print(f"(the kernel wrote {len(text.splitlines())} lines to its log: {log})", file=sys.stderr)


def _failing_cell(nb: object, err: Exception) -> tuple[int | str, str]:
    """Index of the cell that raised and its ``Name: value`` (ANSI-free)."""
    for index, cell in enumerate(nb.cells):  # type: ignore[attr-defined]
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return index, f"{out.get('ename')}: {out.get('evalue')}"
    return "?", getattr(err, "ename", type(err).__name__)


def parse_param(text: str) -> tuple[str, object]:
    """``NAME=VALUE`` as papermill's ``-p`` reads it: VALUE as a Python literal when it is one, else as text."""
    import ast

    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        raise ValueError(f"--param: expected NAME=VALUE with NAME a Python identifier, got {text!r}")
    try:
        return name, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return name, value


def inject_parameters(nb: object, parameters: dict[str, object]) -> None:
    """Append assignments after the cell tagged ``parameters`` (papermill's convention)."""
    import nbformat

    lines = "\n".join(f"{k} = {v!r}" for k, v in parameters.items())
    cells = nb.cells  # type: ignore[attr-defined]
    for index, cell in enumerate(cells):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            new = nbformat.v4.new_code_cell(lines, metadata={"tags": ["injected-parameters"]})
            cells.insert(index + 1, new)
            return
    raise ValueError("notebook has no cell tagged 'parameters'")
