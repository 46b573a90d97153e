"""Running the notebooks and what a notebook needs from the project: the runner behind ``workbench figures``
(:func:`run_all`, each notebook in a fresh kernel, one report), the parameters it injects, and the project's root and
figure directory every notebook asks for (:func:`use_project_root`, :func:`figures_dir`), and the kernel's
skipping of a part the data cannot serve (:func:`skip_when_not_applicable`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = [
    "Analyses", "analyses_of", "ANALYSIS_MIME", "figures_dir", "find_root", "FIRST_PART", "inject_parameters",
    "INTERACTIVE", "is_project_data", "log", "notebook_parameters", "notebook_sources", "NotebookRun",
    "PARAMETERS_MARK", "parse_param", "PART_MARK", "PROJECT_ROOT", "run_all", "RunReport", "selected_notebooks", "skip_when_not_applicable", "unknown_parameters", "use_project_root"
]

__getattr__, __dir__ = attach(__name__, {
    "_runner": [
        "Analyses", "analyses_of", "ANALYSIS_MIME", "FIRST_PART", "inject_parameters", "INTERACTIVE", "log",
        "notebook_parameters", "notebook_sources", "NotebookRun", "parse_param", "run_all", "RunReport", "selected_notebooks",
        "unknown_parameters"
    ],
    "_skip": ["PARAMETERS_MARK", "PART_MARK", "skip_when_not_applicable"],
    "workbench._util.project": ["figures_dir", "find_root", "is_project_data", "PROJECT_ROOT", "use_project_root"],
}, public=__all__)

if TYPE_CHECKING:
    from workbench.notebooks._runner import (
        Analyses, analyses_of, ANALYSIS_MIME, FIRST_PART, inject_parameters, INTERACTIVE, log, notebook_parameters,
        notebook_sources, NotebookRun, parse_param, run_all, RunReport, selected_notebooks, unknown_parameters
    )
    from workbench.notebooks._skip import PARAMETERS_MARK, PART_MARK, skip_when_not_applicable
    from workbench._util.project import (figures_dir, find_root, is_project_data, PROJECT_ROOT, use_project_root)
