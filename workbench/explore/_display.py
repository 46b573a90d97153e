"""The compaction view in a notebook cell (:func:`show`): an HTML core that needs no JavaScript (what an untrusted
notebook shows) and, where scripts run, the same interactive panel as the site."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import polars as pl

from workbench._util.untrusted import visible
from workbench.explore._views import TEMPLATES, _env, _script_json, compaction_view, details_json


def show(tables: Mapping[str, pl.DataFrame], run_id: str, compaction: int = 0, *, judge: str | None = None,
         tau: float = 0.5, labels: pl.DataFrame | None = None) -> CompactionDisplay:
    """The compaction page of ``run_id``'s boundary ``compaction`` in a notebook cell, readable wherever the
    notebook is opened (:class:`CompactionDisplay`): a trusted notebook runs the page (styles, colours, clicks);
    an untrusted one (an executed copy opened in JupyterLab, GitHub, nbviewer, nbconvert with ``sanitize_html``)
    shows its core as plain lists: every entry with its score, decision and label, its evidence passages with
    their sources.

    Parameters
    ----------
    tables : mapping of str to polars.DataFrame
        The loaded tables.
    run_id : str
        The run.
    compaction : int, default 0
        Its boundary.
    judge : str, optional
        The judge whose scores colour the entries (``lexical`` when there, else the first, when None).
    tau : float, default 0.5
        The support threshold.
    labels : polars.DataFrame, optional
        Labels shown beside the scores.

    Returns
    -------
    CompactionDisplay
        The display (its ``data`` is the page's HTML, styles inline).
    """
    scores = tables.get("scores")
    if judge is None and scores is not None and scores.height:
        judges = scores.get_column("judge").unique(maintain_order=True).to_list()
        judge = "lexical" if "lexical" in judges else judges[0]
    view = compaction_view(tables, run_id, compaction, judge=judge, tau=tau, labels=labels)
    body = _env().get_template("compaction_body.html").render(view=view, run_href=None, details=details_json(view))
    css = (TEMPLATES / "site.css").read_text(encoding="utf-8")
    return CompactionDisplay(f"<div class='wb-explore'><style>{css}</style>{body}</div>", _safe_core(view),
                             (TEMPLATES / "site.js").read_text(encoding="utf-8"))


#: the tags an untrusted notebook keeps (bleach's, which nbconvert's ``sanitize_html`` uses; JupyterLab, GitHub and
#: nbviewer keep more): the core of :func:`show` uses these and no attribute
SAFE_TAGS = ("a", "abbr", "acronym", "b", "blockquote", "code", "em", "i", "li", "ol", "strong", "ul")


def _safe_core(view: Mapping[str, Any]) -> str:
    """A compaction as nested lists of ``SAFE_TAGS`` only, no attribute: what reads the same with no style and
    no script."""
    import html as _html

    def esc(value: object) -> str:
        return _html.escape(visible("" if value is None else str(value)), quote=True)

    c, run = view["compaction"], view["run"]
    parts = [f"<b>{esc(run.get('run_id'))} · compaction {esc(c.get('boundary'))}</b> (before step {esc(c.get('step'))};"
             f" replaced steps {esc(c.get('span_start'))}-{esc(c.get('span_end'))})"]
    if view.get("judge"):
        parts.append(f"<i>scores: the {esc(view['judge'])} judge; supported at tau {esc(view['tau'])}</i>")
    parts.append("<ul>")
    section = None
    for e in view["entries"]:
        if e.section != section:
            if section is not None:
                parts.append("</ol></li>")
            section = e.section
            parts.append(f"<li><b>{esc(e.section)}</b>{f' <i>({esc(e.role)})</i>' if e.role else ''}<ol>")
        score = (f" <b>score {e.score:.2f}</b> <i>{'supported' if e.decision == 'kept' else 'unsupported'} at tau "
                 f"{esc(view['tau'])}</i>" if e.score is not None else "")
        label = f" · label <em>{esc(e.label)}</em>" if e.label else ""
        evidence = "".join(f"<li>from <code>{esc(p['where'])}</code><blockquote>{esc(p['text'])}</blockquote></li>"
                           for p in e.evidence)
        parts.append(f"<li>{esc(e.text)}{score}{label}"
                     + (f"<ul>{evidence}</ul>" if evidence else " <i>(no evidence passage)</i>") + "</li>")
    if section is not None:
        parts.append("</ol></li>")
    parts.append("</ul>")
    return "\n".join(parts)


class CompactionDisplay:
    """What :func:`show` returns. Displayed, it prints two outputs: the safe core (``text/html`` of
    ``SAFE_TAGS`` only, which every sanitizer keeps) and a script (``application/javascript``, which sanitizers
    and untrusted notebooks drop) that, where it runs, builds the page in its own output and hides the core."""

    def __init__(self, data: str, core: str, script: str) -> None:
        self.data = data  # the page: styles inline, no script
        self.core = core
        self._script = script

    def builder(self) -> str:
        """The script that builds the page in its output (``element``: the output node, as JupyterLab and
        nbconvert's templates give it; a jQuery object in the classic notebook; on a static page that defines no
        ``element``, such as the documentation's gallery, an output area it makes where the script stands) and hides
        the core above it."""
        return ("(function (element) {\n"
                "  var host = element && element.jquery ? element[0] : element;\n"
                "  var root = document.createElement('div');\n"
                f"  root.innerHTML = {_script_json(self.data)};\n"
                "  host.appendChild(root.firstChild);\n"
                "  var tries = 0;\n"
                "  (function hideCore() {  // once the output is in the page (JupyterLab attaches it after this runs)\n"
                "    var area = host.closest ? host.closest('.jp-OutputArea-child, .output_area') : null;\n"
                "    if (!area) { if (tries++ < 40) { setTimeout(hideCore, 50); } return; }\n"
                "    var core = area.previousElementSibling;\n"
                "    if (core && core.querySelector('b')) { core.style.display = 'none'; }\n"
                "  })();\n"
                "  window.WB_SCOPE = host.lastChild;\n"
                f"{self._script}\n"
                "  delete window.WB_SCOPE;\n"
                "})(typeof element !== 'undefined' ? element : (function (script) {  // a static page: an output\n"
                "  var area = document.createElement('div');  // area of its own, after the core, where the script is\n"
                "  area.className = 'output_area';\n"
                "  script.parentNode.insertBefore(area, script);\n"
                "  return area;\n"
                "})(document.currentScript));\n")

    def _ipython_display_(self) -> None:
        from IPython.display import display

        first = re.sub(r"<[^>]+>", "", self.core.split("\n", 1)[0])
        display({"text/html": self.core, "text/plain": first}, raw=True)
        display({"application/javascript": self.builder(), "text/plain": ""}, raw=True)

    def _repr_html_(self) -> str:
        return self.core


__all__ = ["CompactionDisplay", "show"]
