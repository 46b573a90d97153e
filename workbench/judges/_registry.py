"""The judges and attributors the workbench builds by name: one declaration each, the only place a name is written.

:func:`~workbench.judges.make_judge`, :func:`~workbench.judges.make_attributor` and the command line's ``--judge``
and ``--attributor`` (choices and help) read these registries. The module is light (names, one-line help, dotted
paths): ``workbench --help`` imports it without polars or numpy, and a judge's module is imported only when it is
built. Adding a judge is its module, one :class:`Named` in :data:`JUDGE_REGISTRY`, and its tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any, Literal

__all__ = ["ATTRIBUTOR_REGISTRY", "JUDGE_REGISTRY", "Named"]


@dataclass(frozen=True)
class Named:
    """One judge or attributor: its name, one line of what it is, where it lives (``module:name``) and whether it
    asks a model (``model``: through the cached client and ``--base-url``) or runs offline."""

    name: str
    summary: str
    target: str
    kind: Literal["offline", "model"]

    def load(self) -> Any:
        """The class (or constant) ``target`` names, imported now."""
        module, _, name = self.target.partition(":")
        return getattr(import_module(module), name)


def _registry(*items: Named) -> dict[str, Named]:
    out: dict[str, Named] = {}
    for item in items:
        if item.name in out:
            raise ValueError(f"{item.name!r} is declared twice")
        out[item.name] = item
    return out


#: the source judges, by ``--judge`` name (the first is the default)
JUDGE_REGISTRY: dict[str, Named] = _registry(
    Named("lexical", "the offline lexical judge: evidence overlap of identifiers, numbers and words (deterministic)",
          "workbench.judges._lexical:LexicalJudge", "offline"),
    Named("jev", "TypeSafe's Jev decision endpoint (or OpenRouter's decisions route)",
          "workbench.judges._jev:JevJudge", "model"),
    Named("openai", "any OpenAI-compatible chat model, P(yes) from its logprobs (hosted, llama.cpp, vLLM, Ollama)",
          "workbench.judges._openai:OpenAIJudge", "model"),
)

#: the failure attributors, by ``--attributor`` name: offline baselines, then the LLM protocols
ATTRIBUTOR_REGISTRY: dict[str, Named] = _registry(
    Named("last-step", "the last step of the log (offline baseline)", "workbench.judges._attributors:LastStep",
          "offline"),
    Named("first-error", "the first step after the task whose text reads as an error, else the last (offline baseline)",
          "workbench.judges._attributors:FirstError", "offline"),
    Named("most-active", "the agent with the most steps, at its first step (offline baseline)",
          "workbench.judges._attributors:MostActive", "offline"),
    Named("all-at-once", "the whole log in one request; the model names the agent and step",
          "workbench.judges._llm_attributors:LLMAttributor", "model"),
    Named("step-by-step", "one request a step until the model says yes", "workbench.judges._llm_attributors:LLMAttributor",
          "model"),
    Named("binary-search", "halve the steps until one is left", "workbench.judges._llm_attributors:LLMAttributor",
          "model"),
)
