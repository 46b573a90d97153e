"""The ``prompting_sjc`` policy's judge step: the real retrieval + lexical judge + prune operator."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.judges._base import JudgeRequest, count_tokens
from workbench.judges._lexical import LexicalJudge
from workbench.summaries._evidence import build_request
from workbench.sim._agent import SimEntry, Turn
from workbench.sim._rule_compressor import in_text_order, render_entries
from workbench.sim._world import Task
from workbench.summaries._prune import keep_positions

_JUDGE = LexicalJudge()


def judge_request(task: Task, previous: Sequence[SimEntry] | None, span: Sequence[Turn], retained: Turn,
                  entries: Sequence[SimEntry]) -> JudgeRequest:
    """The SJC request at a boundary: BM25 evidence from the span's outputs and the retained turn."""
    return build_request(task=task.instruction(), retained_turn=retained.render(),
                         previous_summary=render_entries(in_text_order(previous)) if previous else "",
                         outputs=[t.observation.text for t in span] + [retained.render()],
                         entries=[e.text for e in entries])


def judge_candidate(task: Task, previous: Sequence[SimEntry] | None, span: Sequence[Turn], retained: Turn,
                    entries: Sequence[SimEntry], tau: float) -> tuple[list[SimEntry], list[float], int]:
    """Score a candidate's entries, keep those at or above tau; returns (kept, scores, request tokens)."""
    request = judge_request(task, previous, span, retained, entries)
    result = _JUDGE.score(request)
    scores = [float("nan") if s is None else s for s in result.scores]  # the lexical judge always answers
    kept = keep_positions(scores, tau)
    size = count_tokens("\n".join([request.task, request.retained_turn, request.previous_summary,
                                   *request.evidence, *request.entries]))
    return [entries[i] for i in kept], scores, size


__all__ = []
