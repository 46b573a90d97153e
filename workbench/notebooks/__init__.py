"""Running the notebooks and what a notebook needs from the project: the runner behind ``workbench figures``
(:func:`run_all`, each notebook in a fresh kernel, one report), the parameters it injects, and the project's root and
figure directory every notebook asks for (:func:`use_project_root`, :func:`figures_dir`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = [
    "Analyses", "analyses_of", "ANALYSIS_MIME", "figures_dir", "find_root", "inject_parameters", "INTERACTIVE",
    "is_project_data", "log", "notebook_parameters", "notebook_sources", "NotebookRun", "parse_param", "PROJECT_ROOT",
    "run_all", "RunReport", "selected_notebooks", "unknown_parameters", "use_project_root"
]

__getattr__, __dir__ = attach(__name__, {
    "_runner": [
        "Analyses", "analyses_of", "ANALYSIS_MIME", "inject_parameters", "INTERACTIVE", "log", "notebook_parameters",
        "notebook_sources", "NotebookRun", "parse_param", "run_all", "RunReport", "selected_notebooks",
        "unknown_parameters"
    ],
    "workbench._util.project": ["figures_dir", "find_root", "is_project_data", "PROJECT_ROOT", "use_project_root"],
}, public=__all__)

if TYPE_CHECKING:
    from workbench.notebooks._runner import (
        Analyses, analyses_of, ANALYSIS_MIME, inject_parameters, INTERACTIVE, log, notebook_parameters,
        notebook_sources, NotebookRun, parse_param, run_all, RunReport, selected_notebooks, unknown_parameters
    )
    from workbench._util.project import (figures_dir, find_root, is_project_data, PROJECT_ROOT, use_project_root)
