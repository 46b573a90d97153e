"""Execute the notebooks in a fresh kernel each (nbclient): every notebook runs, one report says what happened.

A notebook that fails does not stop the others. A notebook whose analysis does not apply to the data (an
imported log with no ``success`` column, no budgets, no methods) raises
:class:`workbench.datasets.NotApplicable` with the reason; it is *skipped*, not failed. :func:`run_all` returns
a :class:`RunReport` (ran, skipped with the reason, failed with the failing cell) whose ``str`` is the closing
summary of ``workbench figures``. Progress goes to the ``workbench`` logger.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: notebooks a person works in (they wait for clicks and make no figures): run only when named
INTERACTIVE = frozenset({"labeling"})


#: the MIME type of an analysis record in a notebook's outputs (:class:`Analyses`); a frontend that does not know it
#: shows the record's text/plain
ANALYSIS_MIME = "application/vnd.workbench.analysis+json"


#: What a skip record calls the cells before a notebook's first ``# part:`` (:mod:`workbench.notebooks._skip`):
#: a notebook whose first part was skipped is reported as skipped, with the reason.
FIRST_PART = "the notebook"


class Analyses:
    """What a notebook's analyses did, said in its outputs so a run's summary can list it.

    A notebook holds one and, for each analysis that may not apply to the data it was given, says :meth:`ran`
    or :meth:`skipped` with the reason. Each record is a display output of two forms: a line of text (what a person
    reading the notebook, or JupyterLab, sees) and ``ANALYSIS_MIME`` (what :func:`run_all` reads from the
    executed copy; papermill and nbconvert keep it too). :meth:`for_the_project` skips an analysis whose outputs do
    not depend on the data (a published table, a bound, a simulation) unless the data is the project's own, so a
    run on your data neither recomputes nor writes them: the gallery's copy is named instead."""

    def __init__(self, *, show: bool = True) -> None:
        self.records: list[dict[str, str]] = []
        self._show = show

    def ran(self, name: str) -> None:
        """Record that analysis ``name`` ran.

        Parameters
        ----------
        name : str
            The analysis, as a reader knows it ("Table 12: AUROC of each judge").
        """
        self._record({"analysis": name, "status": "ran", "reason": ""})

    def skipped(self, name: str, reason: str, *, part: bool = False) -> None:
        """Record that analysis ``name`` did not run, and why.

        Parameters
        ----------
        name : str
            The analysis.
        reason : str
            Why it cannot apply, and what would make it apply.
        part : bool, default False
            ``name`` is a notebook part the kernel skipped (:func:`~workbench.notebooks.skip_when_not_applicable`):
            a notebook whose records are all skips, one of them a part's, is reported as skipped.
        """
        self._record({"analysis": name, "status": "skipped", "reason": reason, **({"part": "yes"} if part else {})})

    def for_the_project(self, name: str, outputs: Sequence[str], *data: str | os.PathLike[str] | None) -> bool:
        """Whether to run analysis ``name``, whose outputs do not depend on the data: only on the project's own.

        Parameters
        ----------
        name : str
            The analysis.
        outputs : sequence of str
            Its outputs in the gallery (``figures/tables/NAME.csv``), named in the reason when it is skipped.
        *data : str or os.PathLike or None
            The notebook's data parameters.

        Returns
        -------
        bool
            True when every data parameter is the project's (the analysis runs and should call :meth:`ran`);
            otherwise False, with the analysis recorded as skipped.
        """
        from workbench._util.project import is_project_data

        if all(d is None or is_project_data(d) for d in data):
            return True
        self.skipped(name, "does not depend on the data: the gallery's copy is " + ", ".join(outputs))
        return False

    def _record(self, record: dict[str, str]) -> None:
        self.records.append(record)
        if not self._show:
            return
        from IPython.display import display

        text = f"{record['status']}: {record['analysis']}" + (f" ({record['reason']})" if record["reason"] else "")
        display({"text/plain": text, ANALYSIS_MIME: record}, raw=True)


def analyses_of(nb: object) -> list[dict[str, str]]:
    """The :class:`Analyses` records in an executed notebook's outputs, in order.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The executed notebook.

    Returns
    -------
    list of dict
        ``analysis``, ``status`` (``ran`` or ``skipped``), ``reason`` and ``part`` (``yes`` for a notebook part the
        kernel skipped, :func:`~workbench.notebooks.skip_when_not_applicable`; else empty) of each record.
    """
    return [{k: str(record.get(k, "")) for k in ("analysis", "status", "reason", "part")}
            for record in _records(nb, ANALYSIS_MIME)]


def _records(nb: object, mime: str) -> list[dict[str, Any]]:
    """The records of type ``mime`` an executed notebook displayed, in order."""
    found = []
    for cell in nb.cells:  # type: ignore[attr-defined]
        for out in cell.get("outputs", []):
            record = out.get("data", {}).get(mime) if out.get("output_type") == "display_data" else None
            if isinstance(record, dict):
                found.append(record)
    return found


@dataclass(frozen=True)
class NotebookRun:
    """One notebook's outcome: ``ran``, ``skipped`` (its analysis does not apply; ``detail`` says why) or
    ``failed`` (``detail`` is ``cell N: Error: message``), and what each of its analyses did (:class:`Analyses`)."""

    name: str
    status: str
    seconds: float
    detail: str = ""
    analyses: tuple[dict[str, str], ...] = ()
    figures: str = ""


def figures_of(nb: object) -> str:
    """Where an executed notebook wrote its figures (the last :func:`~workbench.notebooks.figures_dir` record), or
    an empty string."""
    from workbench._util.project import FIGURES_MIME

    places = [r["figures"] for r in _records(nb, FIGURES_MIME) if isinstance(r.get("figures"), str)]
    return places[-1] if places else ""


@dataclass
class RunReport:
    """Every notebook's outcome and where the executed copies went."""

    build: Path
    runs: list[NotebookRun] = field(default_factory=list)

    def names(self, status: str) -> list[str]:
        return [r.name for r in self.runs if r.status == status]

    @property
    def exit_code(self) -> int:
        """0 when nothing failed and something ran or was skipped for a reason; 1 otherwise."""
        return 1 if not self.runs or self.names("failed") else 0

    def lines(self) -> list[str]:
        """The summary: the counts, then a line per notebook (what ran, what was skipped and why)."""
        if not self.runs:
            return ["no notebooks ran"]
        partly = [r for r in self.runs if r.status == "ran" and any(a["status"] == "skipped" for a in r.analyses)]
        out = [f"{len(self.names('ran'))} ran" + (f" ({len(partly)} of them in part)" if partly else "")
               + f", {len(self.names('skipped'))} skipped, {len(self.names('failed'))} failed; executed copies in "
               f"{self.build.resolve()}/"]
        for r in self.runs:
            if r.status != "ran":
                out.append(f"  {r.status} {r.name}: {r.detail}")
                continue
            done = [a["analysis"] for a in r.analyses if a["status"] == "ran"]
            left = [a for a in r.analyses if a["status"] == "skipped"]
            out.append(f"  ran {r.name} ({r.seconds:.0f} s)" + (f": {'; '.join(done)}" if done else "")
                       + (f"; figures and tables in {r.figures}/" if r.figures else ""))
            out += [f"    skipped {a['analysis']}: {a['reason']}" for a in left]
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


def check_build(notebooks: Path, build: Path) -> None:
    """The executed copies never go into the notebooks' own directory, where they would replace the sources
    (:class:`~workbench.errors.OutputRefused`); checked before any work (``workbench figures`` checks it
    before it generates the testbed)."""
    if Path(build).resolve() == Path(notebooks).resolve():
        from workbench._util.atomic import OutputRefused

        raise OutputRefused(build, f"is the notebooks' own directory ({notebooks}): the executed copies, with their "
                                   "outputs and injected parameters, would replace the sources; name another "
                                   "directory (the default is build/notebooks)")


def run_all(notebooks: Path, build: Path, *, timeout: int = 1200, parameters: dict[str, object] | None = None,
            cwd: Path | None = None, names: list[str] | None = None) -> RunReport:
    """Execute every ``*.ipynb`` in ``notebooks`` (sorted), saving executed copies in ``build``.

    Kernels start in ``cwd`` (the current directory: the project root for ``workbench
    figures``). ``parameters`` are injected after the ``parameters`` cell (papermill's
    convention); ``names`` restricts the run to some notebooks (and is the only way to run an
    ``INTERACTIVE`` one). Executed copies (with outputs) go to ``build``; the sources are never modified: a
    ``build`` that is the notebooks' own directory is refused (:class:`~workbench.errors.OutputRefused`).

    Parameters
    ----------
    notebooks : pathlib.Path
        The directory of notebooks.
    build : pathlib.Path
        Where the executed copies go.
    timeout : int, default 1200
        Seconds a cell may run.
    parameters : dict of str to object, optional
        Values injected after each notebook's ``parameters`` cell.
    cwd : pathlib.Path, optional
        The kernels' working directory (default: the current one).
    names : list of str, optional
        Only these notebooks.

    Returns
    -------
    RunReport
        Each notebook's outcome (ran, skipped with its reason, failed with its error).
    """
    check_build(notebooks, build)
    paths = selected_notebooks(notebooks, names)
    report = RunReport(build)
    if not paths:
        log.error("no notebooks in %s", notebooks)
        return report
    build.mkdir(parents=True, exist_ok=True)
    root = (cwd or Path.cwd()).resolve()
    for i, path in enumerate(paths, start=1):
        log.info("[%d/%d] %s ...", i, len(paths), path.name)
        if parameters and "DATA" in parameters and "DATA" not in notebook_parameters(path):
            # a notebook of the project's own inputs (real_logs) rerun for someone's DATA would write the gallery
            # again from within their run: it is the gallery's, as each figure that does not depend on the data is
            outcome = NotebookRun(path.stem, "skipped", 0.0, "it does not read DATA (it runs on the project's own "
                                  "inputs; its figures are the gallery's, written by make figures)")
        else:
            outcome = _run_one(path, build, root, timeout=timeout, parameters=parameters)
        report.runs.append(outcome)
        what = {"ran": "done", "skipped": f"skipped ({outcome.detail})", "failed": f"FAILED: {outcome.detail}"}
        log.info("[%d/%d] %s %s in %.1fs", i, len(paths), path.name, what[outcome.status], outcome.seconds)
    return report


def _run_one(path: Path, build: Path, root: Path, *, timeout: int,
             parameters: dict[str, object] | None) -> NotebookRun:
    import shutil
    import tempfile

    import nbformat
    from jupyter_client import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    started = time.perf_counter()
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
    kernel_log = build / f"{path.stem}.kernel.log"
    status, detail = "failed", "the kernel stopped"
    try:
        with kernel_log.open("wb") as kernel_stderr:
            try:
                _execute_off_main_thread(client, kernel_stderr)
                status, detail = "ran", ""
            except CellExecutionError as err:
                index, ename, evalue = _failing_cell(nb, err)
                if ename == "NotApplicable":
                    status, detail = "skipped", evalue
                else:
                    detail = f"cell {index}: {ename}: {evalue}"
                    log.error("%s: %s", path, detail)
            except Exception as err:  # noqa: BLE001 - a dead kernel or a timeout: this notebook failed, go on
                detail = f"{type(err).__name__}: {' '.join(str(err).split())[:200]}"
                log.error("%s: %s", path, detail)
            except BaseException:  # SIGTERM or Ctrl-C: the kernel goes at once, then the interruption goes on
                if km.has_kernel:
                    km.shutdown_kernel(now=True)
                raise
            finally:
                kc = getattr(client, "kc", None)  # nbclient leaves a kernel manager we pass in, and its client,
                if kc is not None:                # running and connected: ours to stop (no zmq socket left open)
                    kc.stop_channels()
                if km.has_kernel:
                    km.shutdown_kernel()
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
        _report_kernel_log(kernel_log, status == "failed")
    nbformat.write(nb, build / path.name)
    records = analyses_of(nb)
    if status == "ran" and records and all(a["status"] == "skipped" for a in records) and any(
            a.get("part") for a in records):
        # the kernel skipped a part (skip_when_not_applicable) and nothing said it ran: the notebook did nothing
        status = "skipped"
        detail = "; ".join(a["reason"] if a["analysis"] == FIRST_PART else f"{a['analysis']}: {a['reason']}"
                           for a in records)
        records = []
    return NotebookRun(path.stem, status, time.perf_counter() - started, detail, tuple(records),
                       figures_of(nb) if status == "ran" else "")


def _execute_off_main_thread(client: Any, stderr: Any) -> None:
    """``client.execute`` on a thread of its own, the main thread waiting for it in short steps.

    nbclient, run on the main thread, replaces the process's SIGTERM and SIGINT handlers with its event loop's
    for each notebook: a SIGTERM while a cell ran was swallowed and the notebook ran to its end (a stuck one
    never stopped). Off the main thread nbclient installs no handler, so the CLI's stay: a SIGTERM or Ctrl-C is
    raised here, on the main thread, and the caller shuts the kernel down. The thread's event loop (the one
    jupyter_core makes for it) is closed when the notebook is done."""
    import threading

    from jupyter_core.utils import ensure_event_loop

    failure: list[BaseException] = []

    def run() -> None:
        loop = ensure_event_loop()  # the loop nbclient and the kernel manager will use on this thread
        try:
            client.execute(stderr=stderr)
        except BaseException as err:  # noqa: BLE001 - handed to the main thread
            failure.append(err)
        finally:
            loop.close()

    worker = threading.Thread(target=run, name="notebook", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.2)  # the main thread runs signal handlers between the waits
    if failure:
        raise failure[0]


def _report_kernel_log(kernel_log: Path, failed: bool, lines: int = 40) -> None:
    """After a failure, log the end of the kernel's log; after a success, only where it is. An empty log goes."""
    text = kernel_log.read_text(encoding="utf-8", errors="replace") if kernel_log.exists() else ""
    if not text.strip():
        kernel_log.unlink(missing_ok=True)
        return
    if failed:
        tail = text.rstrip("\n").splitlines()[-lines:]
        log.error("the kernel's log (%s, last %d lines):\n%s", kernel_log, len(tail), "\n".join(tail))
    else:  # only where it is: what the kernel wrote (a traceback while it shut down, say) is noise after a run
        count = len(text.rstrip("\n").splitlines())
        log.info("(the kernel wrote %d line%s to its log: %s)", count, "" if count == 1 else "s", kernel_log)


def _failing_cell(nb: object, err: Exception) -> tuple[int | str, str, str]:
    """Index of the cell that raised, its exception's name and value (ANSI-free)."""
    for index, cell in enumerate(nb.cells):  # type: ignore[attr-defined]
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                return index, str(out.get("ename")), str(out.get("evalue"))
    return "?", str(getattr(err, "ename", type(err).__name__)), ""


def parse_param(text: str) -> tuple[str, object]:
    """``NAME=VALUE`` as papermill's ``-p`` reads it: VALUE as a Python literal when it is one, else as text."""
    import ast

    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        raise ValueError(f"parameter: expected NAME=VALUE with NAME a Python identifier, got {text!r}")
    try:
        return name, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return name, value


def notebook_parameters(path: Path) -> set[str]:
    """The names the cell tagged ``parameters`` of the notebook at ``path`` assigns (what ``-p``/``--param`` can
    set); none when it has no such cell."""
    import ast

    import nbformat

    nb = nbformat.read(path, as_version=4)
    names: set[str] = set()
    for cell in nb.cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, (ast.Assign, ast.AnnAssign)):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def notebook_sources(notebooks: Path) -> tuple[list[Path], list[Path]]:
    """The notebooks of a directory, and the ``.ipynb`` files there that are not notebooks of it, both sorted.

    Where the directory pairs its notebooks with jupytext scripts (``NAME.ipynb`` beside ``NAME.py``, as the
    project's do), only the pairs are notebooks: what the standard tools leave beside them
    (``jupyter nbconvert --execute NAME.ipynb`` writes ``NAME.nbconvert.ipynb``; papermill or a copy saved by
    hand) is not run again as one more notebook. A directory with no pair (a user's own) has every ``*.ipynb``
    but nbconvert's outputs. JupyterLab's ``.ipynb_checkpoints/`` is a directory and never looked into."""
    found = sorted(notebooks.glob("*.ipynb"))
    paired = [p for p in found if p.with_suffix(".py").is_file()]
    keep = paired or [p for p in found if not p.stem.endswith(".nbconvert")]
    return keep, [p for p in found if p not in keep]


def selected_notebooks(notebooks: Path, names: list[str] | None = None) -> list[Path]:
    """The notebooks :func:`run_all` runs: every notebook of ``notebooks`` (``notebook_sources``) but the
    ``INTERACTIVE`` ones, or those ``names``, sorted."""
    return [p for p in notebook_sources(notebooks)[0]
            if (p.stem in names if names is not None else p.stem not in INTERACTIVE)]


def unknown_parameters(notebooks: Path, parameters: dict[str, object],
                       names: list[str] | None = None) -> tuple[list[str], set[str]]:
    """The ``parameters`` no notebook :func:`run_all` would run reads (``notebook_parameters``), and the names
    they do read: a parameter none reads would be set and ignored without a word."""
    known = set().union(*(notebook_parameters(nb) for nb in selected_notebooks(notebooks, names)))
    return sorted(set(parameters) - known), known


def inject_parameters(nb: object, parameters: dict[str, object]) -> None:
    """Append assignments after the cell tagged ``parameters`` (papermill's convention)."""
    import nbformat

    lines = "\n".join(["# Parameters injected by workbench figures",  # as papermill's: it starts a notebook afresh
                       *(f"{k} = {v!r}" for k, v in parameters.items())])
    cells = nb.cells  # type: ignore[attr-defined]
    for index, cell in enumerate(cells):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            new = nbformat.v4.new_code_cell(lines, metadata={"tags": ["injected-parameters"]})
            cells.insert(index + 1, new)
            return
    raise ValueError("notebook has no cell tagged 'parameters'")


__all__ = ["Analyses", "analyses_of", "log", "NotebookRun", "run_all", "RunReport"]
