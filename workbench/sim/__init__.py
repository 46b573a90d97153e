"""The invoice testbed, with ground truth: the world and its tasks (``_world``), the scripted agent (``_agent``),
the lossy rule compressor (``_rule_compressor``), the six policies of an episode (``_episode``), the SJC policy's judge
step (``_judging``), simulated annotators (``_annotators``) and the dataset builder behind ``workbench simulate``
(``_dataset``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = [
    "Action", "action_text", "attribute", "Beliefs", "Boundary", "build", "Candidate", "check", "compress",
    "CompressorConfig", "Context", "context_tokens", "context_units", "DatasetConfig", "DEFAULT_BUDGETS", "EnvState",
    "Episode", "EpisodeResult", "in_text_order", "Invoice", "InvoiceEnv", "judge_candidate", "judge_request",
    "make_tasks", "MAX_STEPS", "Observation", "POLICIES", "read_beliefs", "render_entries", "run_id", "Scenario",
    "SCENARIOS", "ScriptedAgent", "SILENT", "SimConfig", "SimEntry", "simulate", "simulate_annotation",
    "simulated_rollouts", "StepRecord", "Task", "Turn", "units", "verifier_score", "VISIBLE", "world_json",
    "write_dataset"
]

__getattr__, __dir__ = attach(__name__, {
    "_agent": ["Beliefs", "Context", "MAX_STEPS", "read_beliefs", "ScriptedAgent", "SimEntry", "Turn"],
    "_annotators": ["simulate_annotation"],
    "_dataset": [
        "attribute", "build", "DatasetConfig", "DEFAULT_BUDGETS", "run_id", "simulate", "simulated_rollouts",
        "write_dataset"
    ],
    "_episode": [
        "action_text", "Boundary", "context_tokens", "context_units", "Episode", "EpisodeResult", "POLICIES",
        "SimConfig", "StepRecord", "units", "verifier_score"
    ],
    "_judging": ["judge_candidate", "judge_request"],
    "_rule_compressor": [
        "Candidate", "compress", "CompressorConfig", "in_text_order", "render_entries", "SILENT", "VISIBLE"
    ],
    "_world": [
        "Action", "check", "EnvState", "Invoice", "InvoiceEnv", "make_tasks", "Observation", "Scenario", "SCENARIOS",
        "Task", "world_json"
    ],
}, public=__all__)

if TYPE_CHECKING:
    from workbench.sim._agent import (Beliefs, Context, MAX_STEPS, read_beliefs, ScriptedAgent, SimEntry, Turn)
    from workbench.sim._annotators import (simulate_annotation)
    from workbench.sim._dataset import (
        attribute, build, DatasetConfig, DEFAULT_BUDGETS, run_id, simulate, simulated_rollouts, write_dataset
    )
    from workbench.sim._episode import (
        action_text, Boundary, context_tokens, context_units, Episode, EpisodeResult, POLICIES, SimConfig, StepRecord,
        units, verifier_score
    )
    from workbench.sim._judging import (judge_candidate, judge_request)
    from workbench.sim._rule_compressor import (
        Candidate, compress, CompressorConfig, in_text_order, render_entries, SILENT, VISIBLE
    )
    from workbench.sim._world import (
        Action, check, EnvState, Invoice, InvoiceEnv, make_tasks, Observation, Scenario, SCENARIOS, Task, world_json
    )
