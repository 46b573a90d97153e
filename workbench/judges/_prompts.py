"""The prompts a model judge can ask, by ``--prompt`` name: one declaration each, the only place a name is written.

* ``sjc`` (the default): SJC's source question about one summary entry, scored from the log-probabilities of a
  one-token yes or no (:func:`workbench.judges._openai.messages_for`).
* ``summedits``: the SummEdits authors' zero-shot prompt (``prompts/summedits.txt``, copied unchanged): the whole
  document and the whole summary in one request, the answer read as the paper reads it, by whether it *starts*
  with Yes (consistent: 1) or No (0) (``summedits_verdict``); every entry of the summary gets that score.

A prompt's file is package data, read when the prompt is asked for; ``version`` enters every cache key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Literal


@dataclass(frozen=True)
class Prompt:
    """One judge prompt: its name, one line of what it is, its file (None: written in code), how an answer is read
    (``logprobs``: P(yes) per entry; ``verdict``: a Yes/No text per summary), and its version."""

    name: str
    summary: str
    file: str | None
    reads: Literal["logprobs", "verdict"]
    version: str

    def text(self) -> str:
        """The prompt file's text."""
        if self.file is None:
            raise ValueError(f"prompt {self.name!r} is written in code, not in a file")
        return resources.files("workbench.judges").joinpath("prompts", self.file).read_text(encoding="utf-8")


#: the prompts, by ``--prompt`` name (the first is the default)
PROMPTS: dict[str, Prompt] = {p.name: p for p in (
    Prompt("sjc", "SJC's source question per summary entry, P(yes) from the first token's log-probabilities", None,
           "logprobs", "sjc-source-1"),
    Prompt("summedits", "SummEdits' zero-shot prompt per summary (the authors' file), the answer's first word Yes "
           "or No", "summedits.txt", "verdict", "summedits-zs-1"),
)}

#: the prompt a model judge asks unless told otherwise (the first of :data:`PROMPTS`)
DEFAULT_PROMPT = next(iter(PROMPTS))
#: the judges that send a prompt other than the default (the others ask only their own question)
PROMPT_JUDGES = ("openai",)


def check_prompt(prompt: str, judge: str) -> None:
    """Refuse a prompt that is not declared, or one the ``judge`` does not send (only ``PROMPT_JUDGES`` send a
    prompt other than ``DEFAULT_PROMPT``): a ``ValueError`` saying which.

    Parameters
    ----------
    prompt : str
        A ``--prompt`` name.
    judge : str
        A ``--judge`` name.
    """
    if prompt not in PROMPTS:
        raise ValueError(f"prompt: expected one of {list(PROMPTS)}, got {prompt!r}")
    if prompt != DEFAULT_PROMPT and judge not in PROMPT_JUDGES:
        raise ValueError(f"prompt: {prompt!r} is sent by the {', '.join(PROMPT_JUDGES)} judge only (a model's chat "
                         f"answer), not by {judge!r}")


_FIRST_WORD = re.compile(r"[\s\"'*`#>_\-:.]*([A-Za-z]+)")


def summedits_messages(document: str, sentences: list[str]) -> list[dict[str, str]]:
    """The authors' prompt with ``[ARTICLE]`` the document and ``[SUMMARY_SENTENCES]`` the summary's sentences, one
    a line; one user message, as the authors send it."""
    text = PROMPTS["summedits"].text()
    filled = text.replace("[ARTICLE]", document).replace("[SUMMARY_SENTENCES]", "\n".join(sentences))
    return [{"role": "user", "content": filled}]


def summedits_verdict(answer: object) -> tuple[float | None, str | None]:
    """1.0 for an answer whose first word is Yes, 0.0 for No (any case, after quotes, markdown or spaces), else
    (None, why): the paper's rule (an answer that starts with neither is not counted as either)."""
    if not isinstance(answer, str):
        return None, f"the answer is not text ({type(answer).__name__})"
    m = _FIRST_WORD.match(answer)
    word = m.group(1).lower() if m else ""
    if word == "yes":
        return 1.0, None
    if word == "no":
        return 0.0, None
    shown = " ".join(answer.split())[:60]
    return None, f"the answer does not start with Yes or No: {shown!r}" if shown else "the answer is empty"


__all__ = ["Prompt", "PROMPTS"]
