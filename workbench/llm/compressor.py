"""Old home of the OpenClaw compressor; it lives in :mod:`workbench.infer.compressor` (kept so imports still work)."""

from workbench.infer.compressor import (
    MAX_CHARS,
    SYSTEM_PROMPT,
    Compaction,
    OpenClawCompressor,
    build_messages,
    finalize,
    quality_check,
)

__all__ = ["MAX_CHARS", "SYSTEM_PROMPT", "Compaction", "OpenClawCompressor", "build_messages", "finalize",
           "quality_check"]
