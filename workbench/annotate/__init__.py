"""Labeling: validation samples, the append-only annotation store, the labeling interfaces, the Label Studio
round trip and adjudication.

| module | job |
| --- | --- |
| ``_sampling`` | drawing a validation sample (SJC Appendix G) and attaching what a labeler sees |
| ``_samples`` | sample files: writing, reading, a store's samples, their items by id |
| ``_store`` | the append-only :class:`AnnotationStore` |
| ``_item_views`` | what an annotator sees of an item (one view for every interface) |
| ``_walks`` | the state of a labeling or adjudication walk (:class:`LabelSession`, :class:`AdjudicationSession`) |
| ``_widget`` | the JupyterLab widget |
| ``_terminal`` | the terminal labeler and adjudicator |
| ``_labelstudio`` | Label Studio export and import |
| ``_adjudication`` | agreement's disagreements written out (``prepare``), decisions added (``apply``) |
| ``_evaluation`` | the material a ``correct`` label is given with |"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = [
    "adjudicate_widget", "adjudication_requests", "AdjudicationFile", "AdjudicationSession", "ADJUDICATOR",
    "AnnotationStore", "Applied", "apply", "Block", "check_export_paths", "decide", "DEFAULT_SELECTION",
    "default_selection", "DEFINITIONS", "definitions_text", "entries_with_outcome", "evaluation_material", "FIELDS",
    "from_labelstudio", "has_own_question", "item_definitions", "item_keys", "item_lines", "item_question", "item_view", "JournalMismatch", "judge_scores", "JUDGE_SHOWN",
    "label_widget", "labeling_config", "LabelSession", "LabelStudioImport", "load_sample", "LOCK_WAIT",
    "LockWaitWarning", "merge_adjudication", "NO_MATERIAL", "NOTE", "numbered_records", "OWN_DEFINITIONS", "prepare",
    "Prepared",
    "QUESTIONS", "read_adjudication", "read_labelstudio", "read_users", "render_item_html", "SAMPLE_BATCH_ROWS",
    "sample_clusters", "sample_entries", "sample_index", "sample_items", "SampleReport", "selection_help",
    "store_samples", "stream_sample", "TASK_DATA", "task_data", "terminal_adjudicate", "terminal_label",
    "to_labelstudio", "TornLineWarning", "write_sample"
]

__getattr__, __dir__ = attach(__name__, {
    "_adjudication": [
        "adjudication_requests", "AdjudicationFile", "ADJUDICATOR", "Applied", "apply", "decide", "merge_adjudication",
        "numbered_records", "prepare", "Prepared", "read_adjudication"
    ],
    "_evaluation": ["evaluation_material", "NO_MATERIAL"],
    "_item_views": [
        "Block", "DEFINITIONS", "definitions_text", "FIELDS", "has_own_question", "item_definitions", "item_question",
        "item_view", "OWN_DEFINITIONS", "QUESTIONS", "render_item_html"
    ],
    "_labelstudio": [
        "check_export_paths", "from_labelstudio", "judge_scores", "JUDGE_SHOWN", "labeling_config", "LabelStudioImport",
        "NOTE", "read_labelstudio", "read_users", "TASK_DATA", "task_data", "to_labelstudio"
    ],
    "_samples": ["load_sample", "sample_clusters", "sample_index", "store_samples", "write_sample"],
    "_sampling": [
        "DEFAULT_SELECTION", "default_selection", "entries_with_outcome", "item_keys", "SAMPLE_BATCH_ROWS",
        "sample_entries", "sample_items", "SampleReport", "selection_help", "stream_sample"
    ],
    "_store": ["AnnotationStore", "JournalMismatch", "LOCK_WAIT", "LockWaitWarning", "TornLineWarning"],
    "_terminal": ["item_lines", "terminal_adjudicate", "terminal_label"],
    "_walks": ["AdjudicationSession", "LabelSession"],
    "_widget": ["adjudicate_widget", "label_widget"],
}, public=__all__)

if TYPE_CHECKING:
    from workbench.annotate._adjudication import (
        adjudication_requests, AdjudicationFile, ADJUDICATOR, Applied, apply, decide, merge_adjudication,
        numbered_records, prepare, Prepared, read_adjudication
    )
    from workbench.annotate._evaluation import (evaluation_material, NO_MATERIAL)
    from workbench.annotate._item_views import (
        Block, DEFINITIONS, definitions_text, FIELDS, has_own_question, item_definitions, item_question, item_view,
        OWN_DEFINITIONS, QUESTIONS, render_item_html
    )
    from workbench.annotate._labelstudio import (
        check_export_paths, from_labelstudio, judge_scores, JUDGE_SHOWN, labeling_config, LabelStudioImport, NOTE,
        read_labelstudio, read_users, TASK_DATA, task_data, to_labelstudio
    )
    from workbench.annotate._samples import (load_sample, sample_clusters, sample_index, store_samples, write_sample)
    from workbench.annotate._sampling import (
        DEFAULT_SELECTION, default_selection, entries_with_outcome, item_keys, SAMPLE_BATCH_ROWS, sample_entries,
        sample_items, SampleReport, selection_help, stream_sample
    )
    from workbench.annotate._store import (
        AnnotationStore, JournalMismatch, LOCK_WAIT, LockWaitWarning, TornLineWarning
    )
    from workbench.annotate._terminal import (item_lines, terminal_adjudicate, terminal_label)
    from workbench.annotate._walks import (AdjudicationSession, LabelSession)
    from workbench.annotate._widget import (adjudicate_widget, label_widget)
