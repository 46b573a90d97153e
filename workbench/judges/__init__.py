"""Source judges behind one protocol (:class:`SourceJudge`): the offline lexical judge (``_lexical``, the
default), Jev's decision API (``_jev``) and any OpenAI-compatible chat model (``_openai``), built by name with
:func:`make_judge`; requests scored here or on Ray (``_requests``), and a whole directory judged with its scores and
evidence written (``_run``: :func:`judge_directory`, what ``workbench judge`` runs). Beside them, failure attributors
behind their own protocol (``_attributors``: :class:`Attributor`; offline baselines that need no model)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = [
    "answer_of", "attribute_directory", "ATTRIBUTOR_REGISTRY", "Attribution", "AttributionReport", "Attributor", "build_body",
    "check_answers", "check_predictions_path", "count_tokens", "DATA_NOTE", "entry_question", "ERROR_PATTERN",
    "failure_logs", "FailureLog", "FailureStep", "features", "FirstError", "fitted_steps", "JevJudge",
    "JUDGE_BATCH_RUNS", "judge_directory", "JUDGE_REGISTRY", "JUDGE_TABLES", "JudgeReport", "JudgeResult", "JUDGES",
    "LastStep",
    "LexicalFeatures", "LexicalJudge", "LLMAttributor", "make_attributor", "make_judge", "messages_for",
    "model_client", "MostActive", "Named", "OPENAI_BASE_URL", "OpenAIJudge", "PositionPrior", "predict", "PREDICTION_COLUMNS",
    "probability", "PROTOCOLS", "RAY_BATCH_RUNS", "read_answer", "read_predictions", "ROUTES", "run_batches",
    "score_of", "score_requests", "SOURCE_QUESTION", "SourceJudge", "Sources", "split_request", "step_tokens",
    "system_one_essentials", "Tables", "usable_logprob", "usable_probability", "yes_probability"
]

__getattr__, __dir__ = attach(__name__, {
    "_attributors": [
        "Attribution", "Attributor", "ERROR_PATTERN", "failure_logs", "FailureLog", "FailureStep", "FirstError",
        "LastStep", "MostActive", "PositionPrior", "predict", "PREDICTION_COLUMNS", "read_predictions"
    ],
    "_base": [
        "count_tokens", "DATA_NOTE", "entry_question", "JudgeResult", "SOURCE_QUESTION", "SourceJudge", "split_request",
        "usable_probability"
    ],
    "_jev": ["answer_of", "build_body", "check_answers", "JevJudge", "ROUTES", "system_one_essentials"],
    "_lexical": ["features", "LexicalFeatures", "LexicalJudge", "probability", "Sources"],
    "_llm_attributors": [
        "attribute_directory", "AttributionReport", "check_predictions_path", "fitted_steps", "LLMAttributor",
        "make_attributor", "PROTOCOLS", "read_answer", "step_tokens"
    ],
    "_make": [
        "JUDGES", "make_judge", "model_client", "OPENAI_BASE_URL"
    ],
    "_openai": ["messages_for", "OpenAIJudge", "score_of", "usable_logprob", "yes_probability"],
    "_registry": ["ATTRIBUTOR_REGISTRY", "JUDGE_REGISTRY", "Named"],
    "_requests": ["score_requests"],
    "_run": [
        "JUDGE_BATCH_RUNS", "judge_directory", "JUDGE_TABLES", "JudgeReport", "RAY_BATCH_RUNS", "run_batches", "Tables"
    ],
}, public=__all__)

if TYPE_CHECKING:
    from workbench.judges._base import (
        count_tokens, DATA_NOTE, entry_question, JudgeResult, SOURCE_QUESTION, SourceJudge, split_request,
        usable_probability
    )
    from workbench.judges._jev import (answer_of, build_body, check_answers, JevJudge, ROUTES, system_one_essentials)
    from workbench.judges._lexical import (features, LexicalFeatures, LexicalJudge, probability, Sources)
    from workbench.judges._make import (
        JUDGES, make_judge, model_client, OPENAI_BASE_URL
    )
    from workbench.judges._openai import (messages_for, OpenAIJudge, score_of, usable_logprob, yes_probability)
    from workbench.judges._requests import (score_requests)
    from workbench.judges._registry import (ATTRIBUTOR_REGISTRY, JUDGE_REGISTRY, Named)
    from workbench.judges._run import (
        JUDGE_BATCH_RUNS, judge_directory, JUDGE_TABLES, JudgeReport, RAY_BATCH_RUNS, run_batches, Tables
    )
    from workbench.judges._attributors import (
        Attribution, Attributor, ERROR_PATTERN, failure_logs, FailureLog, FailureStep, FirstError, LastStep,
        MostActive, PositionPrior, predict, PREDICTION_COLUMNS, read_predictions
    )
    from workbench.judges._llm_attributors import (
        attribute_directory, AttributionReport, check_predictions_path, fitted_steps, LLMAttributor, make_attributor,
        PROTOCOLS, read_answer, step_tokens
    )
