"""Everything that asks a model to write: the OpenClaw compressor (``_compressor``), FOCUS draft rollouts
(``_drafts``) and the compaction of real runs (``_recompact``). Computation never imports this package; it talks to
models only through :mod:`workbench.llm`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = [
    "build_messages", "compact_with", "Compaction", "CORRECTIVE_SUFFIX", "draft_messages", "DRAFT_PROMPT",
    "draft_rollouts", "finalize", "INSTRUCTIONS", "MAX_CHARS", "OpenClawCompressor", "PREVIOUS_BLOCK", "quality_check",
    "SYSTEM_PROMPT"
]

__getattr__, __dir__ = attach(__name__, {
    "_compressor": [
        "build_messages", "Compaction", "CORRECTIVE_SUFFIX", "finalize", "INSTRUCTIONS", "MAX_CHARS",
        "OpenClawCompressor", "PREVIOUS_BLOCK", "quality_check", "SYSTEM_PROMPT"
    ],
    "_drafts": ["draft_messages", "DRAFT_PROMPT", "draft_rollouts"],
    "_recompact": ["compact_with"],
}, public=__all__)

if TYPE_CHECKING:
    from workbench.infer._compressor import (
        build_messages, Compaction, CORRECTIVE_SUFFIX, finalize, INSTRUCTIONS, MAX_CHARS, OpenClawCompressor,
        PREVIOUS_BLOCK, quality_check, SYSTEM_PROMPT
    )
    from workbench.infer._drafts import (draft_messages, DRAFT_PROMPT, draft_rollouts)
    from workbench.infer._recompact import (compact_with)
