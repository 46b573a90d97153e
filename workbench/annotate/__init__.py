"""Labeling: validation samples, the append-only annotation store, labeling interfaces, Label Studio round trip,
adjudication.

| module | job |
| --- | --- |
| :mod:`~workbench.annotate.sampling` | drawing a validation sample (SJC Appendix G) and attaching what a labeler sees |
| :mod:`~workbench.annotate.samples` | sample files: writing, reading, a store's samples, their items by id |
| :mod:`~workbench.annotate.store` | the append-only :class:`AnnotationStore` |
| :mod:`~workbench.annotate.views` | what an annotator sees of an item (one view for every interface) |
| :mod:`~workbench.annotate.sessions` | the state of a labeling or adjudication walk |
| :mod:`~workbench.annotate.widget` | the JupyterLab widget |
| :mod:`~workbench.annotate.terminal` | the terminal labeler and adjudicator |
| :mod:`~workbench.annotate.labelstudio` | Label Studio export and import |
| :mod:`~workbench.annotate.adjudication` | agreement's disagreements written out (``prepare``), decisions added (``apply``) |
| :mod:`~workbench.annotate.evaluation` | the material a ``correct`` label is given with |
"""

from workbench.annotate.labelstudio import from_labelstudio, labeling_config, to_labelstudio
from workbench.annotate.samples import load_sample, sample_index, write_sample
from workbench.annotate.sampling import SampleReport, entries_with_outcome, sample_entries, sample_items
from workbench.annotate.sessions import AdjudicationSession, LabelSession
from workbench.annotate.store import AnnotationStore
from workbench.annotate.terminal import terminal_adjudicate, terminal_label
from workbench.annotate.views import render_item_html
from workbench.annotate.widget import adjudicate_widget, label_widget

__all__ = [
    "AdjudicationSession",
    "AnnotationStore",
    "LabelSession",
    "SampleReport",
    "adjudicate_widget",
    "entries_with_outcome",
    "from_labelstudio",
    "label_widget",
    "labeling_config",
    "load_sample",
    "render_item_html",
    "sample_entries",
    "sample_index",
    "sample_items",
    "terminal_adjudicate",
    "terminal_label",
    "to_labelstudio",
    "write_sample",
]
