"""Adapters: one reader per log format, each turning a file into the runs, steps and compactions tables.

The formats are declared once, in :data:`LOG_FORMATS` (a :class:`LogFormat` each: its ``--format`` name, what it
reads, its reader, how a file or directory is recognised, whether it carries labels); :func:`read_log` reads any
of them and sniffs the format when it is not given (:func:`sniff_format`, :func:`sniff_directory`);
:func:`register_format` adds one. :func:`load_fixture` and :func:`load_full` load the Claude compaction data set;
:func:`session_usage` is what ``workbench usage`` counts. The cores the usage pass and the importer's worker
processes share (``_claude_lines``, ``_usage_scan``, ``_logfiles``) import no table library."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = [
    "ANNOTATOR", "BASELINE_METRICS", "BENCHMARK_DIRECTORIES", "chat_to_run", "check_header", "check_summary",
    "check_table", "checked_records", "chunk_entries", "claude_code_runs", "codex_runs", "collect_runs", "defang",
    "DEFAULT_METRICS", "directory_formats", "DIRECTORY_FORMATS", "directory_listing", "FAILURE_ANNOTATOR",
    "FAILURE_QUESTION", "FIELDS", "FILE_OR_DIRECTORY", "format_names", "FORMATS", "frank_records", "GIVEN", "HEAD_BYTES", "HEADER_FIELDS", "input_bytes",
    "is_frank", "is_success", "is_who_and_when", "LABELLED_FORMATS", "load_fixture", "LOG_FORMATS", "LogFormat", "load_full", "message_text",
    "message_tokens", "normalised_agent", "one_walk", "openai_runs", "Parts", "project_dir", "read_claude_code",
    "MissingExtra", "read_codex", "read_frank", "read_json", "read_labelled_summaries", "read_log", "read_openai_chat", "read_sessions",
    "read_tau_bench", "read_trajectories", "read_who_and_when", "records_to_tables", "register_format", "RELEASE", "run_column",
    "RunTables", "SECTION", "session_files", "session_format", "session_runs", "session_usage", "sniff_directory",
    "sniff_format", "split_sentences", "stream_tables", "STREAMING", "SUBSETS", "trajectory_runs", "TranscriptWarning",
    "tree_files", "tree_listing", "USAGE_COLUMNS", "usage_rows", "usage_table", "WHO_AND_WHEN", "who_and_when_logs",
    "write_trajectories"
]

__getattr__, __dir__ = attach(__name__, {
    "_claude_code": ["claude_code_runs", "read_claude_code"],
    "_claude_compaction": ["check_table", "defang", "load_fixture", "load_full"],
    "_claude_lines": ["TranscriptWarning"],
    "_codex": ["codex_runs", "read_codex"],
    "_formats": ["format_names", "LOG_FORMATS", "LogFormat", "MissingExtra", "register_format"],
    "_frank": [
        "ANNOTATOR", "BASELINE_METRICS", "DEFAULT_METRICS", "frank_records", "is_frank", "read_frank", "read_json",
        "RELEASE"
    ],
    "_labelled_summaries": [
        "check_header", "check_summary", "checked_records", "FIELDS", "GIVEN", "HEADER_FIELDS", "read_labelled_summaries",
        "records_to_tables", "run_column", "SECTION", "split_sentences"
    ],
    "_logfiles": [
        "directory_formats", "directory_listing", "HEAD_BYTES", "input_bytes", "one_walk", "project_dir",
        "session_files", "session_format", "sniff_directory", "sniff_format", "tree_files", "tree_listing"
    ],
    "_openai_chat": ["chat_to_run", "message_text", "message_tokens", "openai_runs", "read_openai_chat"],
    "_read": [
        "BENCHMARK_DIRECTORIES", "DIRECTORY_FORMATS", "FILE_OR_DIRECTORY", "FORMATS", "LABELLED_FORMATS", "read_log",
        "read_sessions", "session_runs", "STREAMING"
    ],
    "_staging": ["chunk_entries", "collect_runs", "Parts", "RunTables", "stream_tables"],
    "_tau_bench": ["is_success", "read_tau_bench"],
    "_trajectory": ["read_trajectories", "trajectory_runs", "write_trajectories"],
    "_who_and_when": [
        "FAILURE_ANNOTATOR", "FAILURE_QUESTION", "is_who_and_when", "normalised_agent", "read_who_and_when", "SUBSETS",
        "WHO_AND_WHEN", "who_and_when_logs"
    ],
    "_usage": ["session_usage", "usage_rows", "usage_table"],
    "_usage_scan": ["USAGE_COLUMNS"],
}, public=__all__)

if TYPE_CHECKING:
    from workbench.adapters._claude_code import (claude_code_runs, read_claude_code)
    from workbench.adapters._claude_compaction import (check_table, defang, load_fixture, load_full)
    from workbench.adapters._claude_lines import (TranscriptWarning)
    from workbench.adapters._codex import (codex_runs, read_codex)
    from workbench.adapters._formats import (format_names, LOG_FORMATS, LogFormat, MissingExtra, register_format)
    from workbench.adapters._frank import (
        ANNOTATOR, BASELINE_METRICS, DEFAULT_METRICS, frank_records, is_frank, read_frank, read_json, RELEASE
    )
    from workbench.adapters._labelled_summaries import (
        check_header, check_summary, checked_records, FIELDS, GIVEN, HEADER_FIELDS, read_labelled_summaries,
        records_to_tables, run_column, SECTION, split_sentences
    )
    from workbench.adapters._logfiles import (
        directory_formats, directory_listing, HEAD_BYTES, input_bytes, one_walk, project_dir, session_files,
        session_format, sniff_directory, sniff_format, tree_files, tree_listing
    )
    from workbench.adapters._openai_chat import (
        chat_to_run, message_text, message_tokens, openai_runs, read_openai_chat
    )
    from workbench.adapters._read import (
        BENCHMARK_DIRECTORIES, DIRECTORY_FORMATS, FILE_OR_DIRECTORY, FORMATS, LABELLED_FORMATS, read_log,
        read_sessions, session_runs, STREAMING
    )
    from workbench.adapters._staging import (chunk_entries, collect_runs, Parts, RunTables, stream_tables)
    from workbench.adapters._tau_bench import (is_success, read_tau_bench)
    from workbench.adapters._trajectory import (read_trajectories, trajectory_runs, write_trajectories)
    from workbench.adapters._who_and_when import (
        FAILURE_ANNOTATOR, FAILURE_QUESTION, is_who_and_when, normalised_agent, read_who_and_when, SUBSETS,
        WHO_AND_WHEN, who_and_when_logs
    )
    from workbench.adapters._usage import (session_usage, usage_rows, usage_table)
    from workbench.adapters._usage_scan import (USAGE_COLUMNS)
