"""Labeling: validation samples, the append-only annotation store, labeling UIs, Label Studio round trip."""

from workbench.annotate.labelstudio import from_labelstudio, labeling_config, to_labelstudio
from workbench.annotate.sampling import SampleReport, entries_with_outcome, sample_entries
from workbench.annotate.store import AnnotationStore
from workbench.annotate.ui import LabelSession, label_widget, load_sample, render_item_html, terminal_label

__all__ = [
    "AnnotationStore",
    "LabelSession",
    "SampleReport",
    "entries_with_outcome",
    "from_labelstudio",
    "label_widget",
    "labeling_config",
    "load_sample",
    "render_item_html",
    "sample_entries",
    "terminal_label",
    "to_labelstudio",
]
