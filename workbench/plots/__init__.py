"""Drawing: one function per figure, each taking precomputed results and an optional ``ax``, returning the Axes it
drew on (a figure of several panels: ``(fig, axes)``), as seaborn, pingouin and rliable do; a module per analysis
(``sjc``, ``focus``, ``trace``, ``calibration``, ``compare``, ``real_logs``, ``coding_agents``, ``human_labels``,
``failure_attribution``: the analyses' names, on purpose).

Nothing here computes beyond layout, and nothing changes matplotlib's global style on import: call
:func:`set_style` (notebooks do, once; ``_style``) and :func:`export` to write a figure to ``figures/NAME.pdf`` and
``figures/NAME.png``. :func:`export_table` (``_latex``) writes a table as a CSV of every column and a booktabs ``.tex``
that fits an ``article`` column; :func:`display_name` (``_names``) is how every table and figure names a method,
role, field or metric."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = [
    "calibration", "coding_agents", "compare", "display_name", "entries_by_section", "export", "export_table",
    "failure_attribution",
    "figure_size", "FIGURES", "focus", "human_labels", "PAPER", "PAPER_WIDTHS", "real_logs", "set_style", "sjc",
    "STYLE", "STYLES", "to_latex", "trace", "use_style"
]

__getattr__, __dir__ = attach(__name__, {
    "_latex": ["export_table", "to_latex"],
    "_names": ["display_name"],
    "_style": [
        "export", "figure_size", "FIGURES", "PAPER", "PAPER_WIDTHS", "set_style", "STYLE", "STYLES", "use_style"
    ],
    "sjc": ["entries_by_section"],
}, modules=["calibration", "coding_agents", "compare", "failure_attribution", "focus", "human_labels", "real_logs",
            "sjc", "trace"], public=__all__)

if TYPE_CHECKING:
    from workbench.plots._latex import (export_table, to_latex)
    from workbench.plots._names import (display_name)
    from workbench.plots._style import (
        export, figure_size, FIGURES, PAPER, PAPER_WIDTHS, set_style, STYLE, STYLES, use_style
    )
    from workbench.plots.sjc import (entries_by_section)
    from workbench.plots import (calibration, coding_agents, compare, failure_attribution, focus, human_labels,
                                 real_logs, sjc, trace)
