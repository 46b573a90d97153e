"""See a compaction: a static HTML site of runs, their compactions, the history each replaced, and what the judge
and the annotators said (``workbench explore``: :func:`build_site`, in ``_site``), and the same compaction view in a
notebook cell (:func:`show`, in ``_display``); what one compaction looks like is built once, in ``_views``.

The site opens from disk (no server, no network, no CDN): an index of runs (sortable, filterable and paginated
by a few lines of JavaScript shipped with it), a page per run (its steps as a timeline, each compaction a marker,
sub-agent runs linked) and a page per compaction: the summary with each entry coloured by its judge score and
marked with its human label; a click on an entry shows its evidence passages, its score and decision at tau, and
the identifiers it names with whether each has a source in the replaced history; below, the replaced history, the
retained turn, the previous summary, and what the agent did next.

Pages are rendered by Jinja2 with autoescaping: every string from a log is shown as text, and control and
format characters (ANSI escapes, bidi overrides) are made visible as ``\\xNN`` (:func:`visible`), as the terminal
labeling view does. Long outputs are cut in the page with the whole text one click away."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = [
    "BATCH_COMPACTIONS", "build_site", "compaction_view", "CompactionDisplay", "details_json", "EntryView", "HORIZON",
    "index_shards", "markdown", "MARKER", "pack_rows", "RunRows", "runs_to_show", "SAFE_TAGS", "score_colour",
    "show", "site_batches", "SiteReport", "slug", "visible"
]

__getattr__, __dir__ = attach(__name__, {
    "_display": ["CompactionDisplay", "SAFE_TAGS", "show"],
    "_site": [
        "BATCH_COMPACTIONS", "build_site", "index_shards", "MARKER", "pack_rows", "runs_to_show", "site_batches",
        "SiteReport"
    ],
    "_views": [
        "compaction_view", "details_json", "EntryView", "HORIZON", "markdown", "RunRows", "score_colour", "slug"
    ],
    "workbench._util.untrusted": ["visible"],
}, public=__all__)

if TYPE_CHECKING:
    from workbench.explore._display import (CompactionDisplay, SAFE_TAGS, show)
    from workbench.explore._site import (
        BATCH_COMPACTIONS, build_site, index_shards, MARKER, pack_rows, runs_to_show, site_batches, SiteReport
    )
    from workbench.explore._views import (
        compaction_view, details_json, EntryView, HORIZON, markdown, RunRows, score_colour, slug
    )
    from workbench._util.untrusted import (visible)
