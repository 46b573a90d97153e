"""The answer shapes a real model (SmolLM2-135M-Instruct on llama.cpp's server, issue 81) produced that the parsers
did not expect, each as a test with that answer (abridged where long)."""

from __future__ import annotations

import pytest


def test_a_verdict_that_restates_the_question_is_a_miss_with_its_words() -> None:
    """Under SummEdits' prompt the model often began "The summary is factually consistent with the ..." (8 of 16
    summaries): neither Yes nor No first, so no verdict, as the paper's rule reads it, its words in the reason."""
    from workbench.judges._prompts import summedits_verdict

    score, why = summedits_verdict("The summary is factually consistent with the")
    assert score is None and why == ("the answer does not start with Yes or No: "
                                     "'The summary is factually consistent with the'")


def test_a_first_token_among_other_words_is_normalised_over_yes_and_no_only() -> None:
    """Asked for one token with log-probabilities, the model's top five were No, The, I, Yes, To: P(yes) is taken
    over the yes/no variants alone (exp(-2.956) / (exp(-2.956) + exp(-1.248)))."""
    import math

    from workbench.judges._openai import yes_probability

    top = [{"token": "No", "logprob": -1.2478628158569336}, {"token": "The", "logprob": -1.6705312728881836},
           {"token": "I", "logprob": -2.5401411056518555}, {"token": "Yes", "logprob": -2.9563722610473633},
           {"token": "To", "logprob": -4.2295026779174805}]
    score, why = yes_probability(top)
    want = math.exp(-2.9563722610473633) / (math.exp(-2.9563722610473633) + math.exp(-1.2478628158569336))
    assert why is None and score == pytest.approx(want, abs=1e-12)


def test_an_attribution_that_quotes_the_log_back_names_nothing() -> None:
    """Asked which agent and step decided a Who&When failure, the model answered by quoting the log's data block:
    the parser found "### Step 1:" in the quoted text and the one agent it named, and reported step 1 by
    GameTheory_Expert, a guess the model never made. The quoted block is cut out; nothing is left to read."""
    from workbench.judges import FailureLog, FailureStep
    from workbench.judges._llm_attributors import read_answer

    log = FailureLog(run_id="Algorithm-Generated/9", question="How many coins?", steps=(
        FailureStep(0, "GameTheory_Expert", "GameTheory_Expert", "Let's analyze the problem step-by-step"),
        FailureStep(1, "Verification_Expert", "Verification_Expert", "The answer is 16")))
    answer = ('<data>\n{\n  "step": 0,\n   "agent": "GameTheory_Expert",\n   "text": "Let\'s analyze the problem '
              'step-by-step:\\n\\n### Step 1: Identify constraints and conditions for the coin distribution')
    got = read_answer(answer, log)
    assert (got.agent, got.step) == (None, None)
    assert got.reason.startswith("the answer quotes the log back (<data>...) and names no agent or step")
    closed = read_answer('<data>{"step": 0, "agent": "GameTheory_Expert"}</data> Step 1, Verification_Expert', log)
    assert (closed.agent, closed.step) == ("Verification_Expert", 1)  # what follows the quote is still read


def test_a_verdict_that_contradicts_itself_is_read_by_its_first_word() -> None:
    """11 of the model's SummEdits answers were "Yes" and then "No" on the next line: the paper reads an answer by
    the word it starts with, so it is Yes (1.0), whatever follows."""
    from workbench.judges._prompts import summedits_verdict

    assert summedits_verdict("Yes\nNo") == (1.0, None)
    assert summedits_verdict("No, the summary is consistent") == (0.0, None)
