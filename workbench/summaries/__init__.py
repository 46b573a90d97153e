"""Summaries and their entries: the grammar that splits a summary into entries (``_grammar``: :func:`parse`,
:func:`render`, :data:`SCHEMAS`), the entries table and every id format (``_entries``), the exact-identifier rules and
the checks that use them (``_identifiers``), a compaction's replaced history as judge evidence (``_retrieval``: SJC
Appendix F passages and chunks; ``_evidence``: requests and the evidence table), and SJC's prune operator
(``_prune``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = [
    "arg_identifiers", "build_request", "Chunk", "CHUNK_CHARS", "chunk_outputs", "chunk_step", "claude_check",
    "CLAUDE_SECTIONS", "clear_caches", "CODE", "code_identifiers", "compaction_requests", "CompactionRequest",
    "DEFAULT_TAU", "describe_source", "detect_schema", "entries_table", "Entry", "entry_evidence", "entry_id",
    "entry_parts", "Evidence", "evidence_id", "evidence_path", "evidence_rows", "evidence_table", "fact_check",
    "fact_check_compactions", "FactCheck", "find", "given_entries", "headings", "IDENTIFIER", "identifier_sources",
    "JudgeRequest", "keep_positions", "LAST_MESSAGES", "MAX_IDENTIFIERS", "NETWORK", "normalise", "opaque_identifiers",
    "OPENCLAW", "openclaw_identifiers", "parse", "Passage", "PASSAGE_CHARS", "passages", "prune", "prune_compactions",
    "prune_summary", "PruneResult", "render", "replaced_history", "request_evidence", "request_id", "request_of_entry",
    "RETRIEVAL_BATCH", "retrieve", "retrieve_many", "ROLES", "RULES", "run_of_entry", "Schema", "SCHEMAS",
    "section_name", "span_index", "span_outputs", "SpanIndex", "summary_identifiers", "summary_includes",
    "SummaryCheck", "TOP_K", "with_roles", "write_entries"
]

__getattr__, __dir__ = attach(__name__, {
    "_entries": [
        "entries_table", "entry_id", "entry_parts", "evidence_id", "given_entries", "request_id", "request_of_entry",
        "run_of_entry", "with_roles", "write_entries"
    ],
    "_evidence": [
        "build_request", "chunk_step", "compaction_requests", "CompactionRequest", "describe_source", "entry_evidence",
        "evidence_path", "evidence_rows", "evidence_table", "JudgeRequest", "request_evidence", "RETRIEVAL_BATCH",
        "span_index", "span_outputs", "SpanIndex"
    ],
    "_grammar": [
        "CLAUDE_SECTIONS", "detect_schema", "Entry", "headings", "normalise", "parse", "prune", "render", "ROLES",
        "Schema", "SCHEMAS", "section_name"
    ],
    "_identifiers": [
        "arg_identifiers", "claude_check", "CODE", "code_identifiers", "fact_check", "fact_check_compactions",
        "FactCheck", "find", "IDENTIFIER", "identifier_sources", "LAST_MESSAGES", "MAX_IDENTIFIERS", "NETWORK",
        "opaque_identifiers", "OPENCLAW", "openclaw_identifiers", "replaced_history", "RULES", "summary_identifiers",
        "summary_includes", "SummaryCheck"
    ],
    "_prune": ["DEFAULT_TAU", "keep_positions", "prune_compactions", "prune_summary", "PruneResult"],
    "_retrieval": [
        "Chunk", "CHUNK_CHARS", "chunk_outputs", "clear_caches", "Evidence", "Passage", "PASSAGE_CHARS", "passages",
        "retrieve", "retrieve_many", "TOP_K"
    ],
}, public=__all__)

if TYPE_CHECKING:
    from workbench.summaries._entries import (
        entries_table, entry_id, entry_parts, evidence_id, given_entries, request_id, request_of_entry, run_of_entry, with_roles,
        write_entries
    )
    from workbench.summaries._evidence import (
        build_request, chunk_step, compaction_requests, CompactionRequest, describe_source, entry_evidence,
        evidence_path, evidence_rows, evidence_table, JudgeRequest, request_evidence, RETRIEVAL_BATCH, span_index,
        span_outputs, SpanIndex
    )
    from workbench.summaries._grammar import (
        CLAUDE_SECTIONS, detect_schema, Entry, headings, normalise, parse, prune, render, ROLES, Schema, SCHEMAS,
        section_name
    )
    from workbench.summaries._identifiers import (
        arg_identifiers, claude_check, CODE, code_identifiers, fact_check, fact_check_compactions, FactCheck, find,
        IDENTIFIER, identifier_sources, LAST_MESSAGES, MAX_IDENTIFIERS, NETWORK, opaque_identifiers, OPENCLAW,
        openclaw_identifiers, replaced_history, RULES, summary_identifiers, summary_includes, SummaryCheck
    )
    from workbench.summaries._prune import (DEFAULT_TAU, keep_positions, prune_compactions, prune_summary, PruneResult)
    from workbench.summaries._retrieval import (
        Chunk, CHUNK_CHARS, chunk_outputs, clear_caches, Evidence, Passage, PASSAGE_CHARS, passages, retrieve,
        retrieve_many, TOP_K
    )
