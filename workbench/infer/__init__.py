"""Everything that asks a model to write: the OpenClaw compressor, FOCUS draft rollouts, replay compaction.

Compute modules never import this package; it talks to models only through :mod:`workbench.llm`.
"""

from workbench.infer.compressor import Compaction, OpenClawCompressor
from workbench.infer.drafts import DRAFT_PROMPT, draft_messages, draft_rollouts
from workbench.infer.recompact import compact_with

__all__ = ["DRAFT_PROMPT", "Compaction", "OpenClawCompressor", "compact_with", "draft_messages",
           "draft_rollouts"]
