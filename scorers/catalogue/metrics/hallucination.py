"""Hallucination (LLM judge): the share of the response's claims that the context does not back.

One judge call extracts the response's factual claims and gives each a verdict:
``"yes"`` when the context contradicts the claim or does not support it (a
hallucination), ``"no"`` when the context supports it. The code computes the
score (lower is better) and writes the reason. Mastra makes three calls for this.

The context is the run's ``context``, else the scorer's ``context`` option,
else the results of the run's tool calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from scorers.catalogue.metrics._define import CONTEXT_PARAM, SCALE_PARAM, Metric, Param, factory, specs
from scorers.catalogue.metrics._llm import BinaryVerdict, StrictModel, delimit_pieces, function, quoted
from scorers.catalogue.metrics.faithfulness import CLAIMS_INPUTS, CONTEXT_PHRASES, Claim, ClaimsScorer, question_block
from scorers.core.base import decimal_text
from scorers.core.judge import delimit

SCORER_ID = "hallucination"


class HallucinationVerdict(Claim):
    """One factual claim of the response and whether it is hallucinated."""

    verdict: BinaryVerdict = Field(
        description='"yes" the context contradicts it or does not support it (hallucinated), "no" the context supports it.'
    )
    reason: str = Field(description="One short sentence: what the context says, or that it says nothing about it.")


class HallucinationAnalysis(StrictModel):
    """The judge's answer: the response's claims, in order, each with a verdict."""

    claims: list[HallucinationVerdict]


INSTRUCTIONS = (
    "You detect hallucinations in an AI assistant's response: factual claims that the context it was "
    "given contradicts or does not support. You use only the context, never your own knowledge, and "
    "you are strict and consistent."
)


def judge_prompt(question: str, pieces: tuple[str, ...], response: str) -> str:
    """The user message of the judge call."""
    return (
        "Extract every factual claim the response makes: each checkable statement of fact is one claim, "
        "written so it can be understood on its own. Greetings, questions, opinions, advice and clearly "
        'hedged speculation ("might", "possibly") are not claims. Keep the response\'s order.\n\n'
        "Then judge each claim against the context only:\n"
        '- "yes" (hallucinated): the context contradicts it, or the context does not support it '
        "(including precise numbers, dates or names the context does not give);\n"
        '- "no": the context states it or directly implies it.\n'
        "Add a one-sentence reason. If the response makes no factual claim, return an empty list.\n\n"
        f"{question_block(question)}{delimit_pieces(pieces)}\n\n{delimit('response', response)}"
    )


def compose_reason(analysis: Mapping[str, Any], score: float) -> str:
    """The reason, written from the verdicts (no judge call); it quotes ``score``."""
    head = f"The score is {decimal_text(score)} out of {analysis['scale']:g} (lower is better)"
    claims = analysis["claims"]
    if not claims:
        return f"{head}: the judge found no factual claims in the response, so nothing is hallucinated."
    n = len(claims)
    hallucinated = [c["claim"] for c in claims if c["verdict"] == "yes"]
    text = (
        f"{head}: {len(hallucinated)} of {n} claim{'s' if n != 1 else ''} "
        f"{'is' if len(hallucinated) == 1 else 'are'} contradicted or unsupported by "
        f"{CONTEXT_PHRASES[analysis['contextSource']]}"
    )
    return text + (f": {quoted(hallucinated)}." if hallucinated else "; every claim is supported.")


class HallucinationScorer(ClaimsScorer):
    """Scores hallucinated claims (lower is better); build it with :func:`create_hallucination_scorer`."""

    id = SCORER_ID
    name = "Hallucination"
    output_model = HallucinationAnalysis
    schema_name = "hallucination"
    labels = ("yes", "no")
    instructions = INSTRUCTIONS
    judge_prompt = staticmethod(judge_prompt)
    compose_reason = staticmethod(compose_reason)


METRIC = Metric(
    id=SCORER_ID,
    name="Hallucination",
    scorer=HallucinationScorer,
    params=(SCALE_PARAM, CONTEXT_PARAM, Param("get_context", None, function)),
    inputs=CLAIMS_INPUTS,
    measures="The share of the response's factual claims that the context contradicts or does not support.",
    formula="#hallucinated claims / #claims; no claims → 0; round half up to 2 decimals, × scale",
    higher_is_better=False,
    example={
        "input": [{"role": "user", "content": "When was the Eiffel Tower finished?"}],
        "output": "The Eiffel Tower was finished in 1889 and cost 10 million francs.",
        "context": ["The Eiffel Tower is a wrought-iron tower in Paris, completed in 1889."],
    },
    notes=(
        "Lower is better. One judge call returns the claims with their verdicts (Mastra: 3 calls); the "
        "reason is written in code. Verdict yes = contradicted or unsupported by the context, no = "
        "supported; compared after trimming and lower-casing, any other label (including unsure) is invalid "
        "judge output. Deviation: Mastra compares === 'yes' exactly, so ' Yes' counts as supported there; "
        "our structured output constrains the labels, so this differs from Mastra only when the judge falls back to JSON mode."
        " Context: get_context(run) when configured (Mastra's getContext), else the run's, else the context "
        "option, else tool results in the output; no "
        "context at all is invalid input (otherwise every claim would count as unsupported). No claims → 0. "
        "An empty response is invalid input."
    ),
)

create_hallucination_scorer = factory(
    METRIC,
    """Create the LLM-judged hallucination scorer (Mastra's ``createHallucinationScorer``); lower is better.

    One judge call extracts the response's claims and marks each one the context
    contradicts or does not support; the code scores
    ``round_half_up(#hallucinated / #claims × scale, 2)``, 0 when the response makes
    no claims. The context is the run's ``context``, else the ``context`` option, else
    the results of the run's tool calls.

    Options: ``scale`` (finite number > 0, default 1), ``context`` (a list of
    passages for runs without context of their own, default none) and, in Python,
    ``get_context`` (Mastra's ``getContext``: a function of the
    :class:`~scorers.core.base.RunInput` returning the passages; it wins over the rest).
    """,
)

SPECS = specs(METRIC)
