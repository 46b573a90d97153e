"""The data model: the tables every reader writes and every analysis reads, their columns and checks, the fixed
vocabulary they share, and their files.

``_schema`` declares each table (:data:`TABLES`, :func:`table`, :func:`empty`); ``_validation`` checks a frame or a
record against its declaration (:func:`validate`, :func:`check_record`); ``_vocabulary`` holds SJC's sections, patterns
and label values and the annotator naming rule (:func:`check_annotator`); ``_records`` the rows log readers build with
no table library; ``_files`` a directory's table files (:func:`read_table`, :func:`write_tables`); ``_frames`` frame
helpers; ``_labels`` latest and gold labels."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = [
    "all_keys", "ANNOTATOR_RULE", "ATTRIBUTIONS", "batches_by_run", "CANDIDATES", "check_annotator", "check_label",
    "check_record", "check_references", "CHUNK_ROWS", "CHUNK_RUNS", "CHUNK_TEXT", "collected", "Column",
    "column_order", "columns_frame", "COMPACTIONS", "describe_dtype", "describe_dtypes", "empty", "encode_args",
    "ENTRIES", "EVIDENCE", "gold_labels", "GROUND_TRUTH_PREFIX", "height", "is_timestamp", "label_source",
    "LABEL_SPANS", "LABEL_VALUES", "LABELS", "latest_labels", "majority_labels", "move_into_place",
    "one_question", "OPEN_LABEL_FIELDS", "open_tables", "PartWriter", "PATTERNS", "read_table", "REASONING_SECTIONS",
    "RESERVED_ANNOTATORS", "ROLLOUTS", "row_columns", "RowChunks", "RowNames", "rows_frame", "rows_of", "RUNS",
    "SCORES", "SECTIONS", "sink_parts", "slices", "SPANS", "STEPS", "SUPPORT_VALUES", "table", "Table", "table_file",
    "table_files", "TABLE_NAMES", "TABLES", "TRAJECTORY_TABLES", "validate", "value_fits", "VARIABLES", "widen_span",
    "write_tables"
]

__getattr__, __dir__ = attach(__name__, {
    "_files": [
        "check_references", "columns_frame", "move_into_place", "open_tables", "PartWriter", "read_table", "RowNames",
        "rows_frame", "sink_parts", "table_file", "table_files", "write_tables"
    ],
    "_frames": ["batches_by_run", "collected", "height", "rows_of", "slices"],
    "_labels": ["gold_labels", "label_source", "latest_labels", "majority_labels", "one_question"],
    "_records": [
        "all_keys", "CHUNK_ROWS", "CHUNK_RUNS", "CHUNK_TEXT", "encode_args", "row_columns", "RowChunks",
        "TRAJECTORY_TABLES", "widen_span"
    ],
    "_schema": [
        "ATTRIBUTIONS", "CANDIDATES", "Column", "column_order", "COMPACTIONS", "empty", "ENTRIES", "EVIDENCE",
        "GROUND_TRUTH_PREFIX", "LABEL_SPANS", "LABELS", "ROLLOUTS", "RUNS", "SCORES", "SPANS", "STEPS", "Table", "table",
        "TABLES", "VARIABLES"
    ],
    "_validation": [
        "check_label", "check_record", "describe_dtype", "describe_dtypes", "is_timestamp", "validate", "value_fits"
    ],
    "_vocabulary": [
        "ANNOTATOR_RULE", "check_annotator", "LABEL_VALUES", "OPEN_LABEL_FIELDS", "PATTERNS",
        "REASONING_SECTIONS", "RESERVED_ANNOTATORS", "SECTIONS", "SUPPORT_VALUES", "TABLE_NAMES"
    ],
}, public=__all__)

if TYPE_CHECKING:
    from workbench.tables._files import (
        check_references, columns_frame, move_into_place, open_tables, PartWriter, read_table, RowNames, rows_frame,
        sink_parts, table_file, table_files, write_tables
    )
    from workbench.tables._frames import (batches_by_run, collected, height, rows_of, slices)
    from workbench.tables._labels import (gold_labels, label_source, latest_labels, majority_labels, one_question)
    from workbench.tables._records import (
        all_keys, CHUNK_ROWS, CHUNK_RUNS, CHUNK_TEXT, encode_args, row_columns, RowChunks, TRAJECTORY_TABLES, widen_span
    )
    from workbench.tables._schema import (
        ATTRIBUTIONS, CANDIDATES, Column, column_order, COMPACTIONS, empty, ENTRIES, EVIDENCE, GROUND_TRUTH_PREFIX, LABEL_SPANS,
        LABELS, ROLLOUTS, RUNS, SCORES, SPANS, STEPS, Table, table, TABLES, VARIABLES
    )
    from workbench.tables._validation import (
        check_label, check_record, describe_dtype, describe_dtypes, is_timestamp, validate, value_fits
    )
    from workbench.tables._vocabulary import (
        ANNOTATOR_RULE, check_annotator, LABEL_VALUES, OPEN_LABEL_FIELDS, PATTERNS, REASONING_SECTIONS,
        RESERVED_ANNOTATORS, SECTIONS, SUPPORT_VALUES, TABLE_NAMES
    )
