"""Faithfulness (LLM judge): the share of the response's claims that the context supports.

One judge call extracts the response's factual claims and gives each a verdict
against the context (``"yes"`` supported, ``"no"`` contradicted, ``"unsure"``
the context does not say); the code computes the score and writes the reason.
Mastra makes three calls for this (claims, verdicts, reason).

The context is the run's ``context``, else the scorer's ``context`` option,
else the results of the run's tool calls (as in Mastra).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import Field

from scorers.catalogue.metrics._define import CONTEXT_PARAM, SCALE_PARAM, Metric, factory, specs
from scorers.catalogue.metrics._llm import (
    Context,
    JudgedScorer,
    StrictModel,
    Verdict,
    VerdictReason,
    delimit_pieces,
    require_text,
    resolve_context,
    system_message,
    verdict_shares,
)
from scorers.core.base import RunInput
from scorers.core.errors import MissingInputError
from scorers.core.judge import delimit

SCORER_ID = "faithfulness"

NO_CONTEXT = (
    "{name} checks the response's claims against context, but the run has none: give the run a "
    "context (a string or a list of passages), set the scorer's context option{tools}"
)


# The run fields the claim-by-claim scorers read (faithfulness, hallucination).
CLAIMS_INPUTS = ("output", "context or tool results", "input (optional)")

# How a reason names the context, by its source (see scorers.catalogue.metrics._llm.Context).
CONTEXT_PHRASES = {
    "extractor": "the extracted context",
    "run": "the context",
    "options": "the configured context",
    "tool results": "the tool results",
}


class Claim(StrictModel):
    """Base of a judge's per-claim verdict: the claim; a subclass adds ``verdict`` and ``reason``."""

    claim: str = Field(description="One factual claim of the response, self-contained.")


class ClaimVerdict(Claim):
    """One factual claim of the response and whether the context supports it."""

    verdict: Verdict = Field(
        description='"yes" the context supports it, "no" the context contradicts it, "unsure" the context does not say.'
    )
    reason: str = Field(description="One short sentence citing the context piece that decides the verdict.")


class FaithfulnessAnalysis(StrictModel):
    """The judge's answer: the response's claims, in order, each with a verdict."""

    claims: list[ClaimVerdict]


INSTRUCTIONS = (
    "You check whether an AI assistant's response is faithful to the context it was given: whether "
    "each factual claim of the response is backed by that context. You use only the context, never "
    "your own knowledge, and you are strict and consistent."
)


def question_block(question: str) -> str:
    """The user's question as a delimited block, or "" when there is none."""
    if not question.strip():
        return ""
    return (
        f"The question is given only to understand the response; do not judge it.\n{delimit('question', question)}\n\n"
    )


def judge_prompt(question: str, pieces: tuple[str, ...], response: str) -> str:
    """The user message of the judge call."""
    return (
        "Extract every factual claim the response makes: each checkable statement of fact is one claim, "
        "written so it can be understood on its own. Greetings, questions, opinions, advice and hedged "
        'speculation ("might", "possibly") are not claims. Keep the response\'s order.\n\n'
        "Then judge each claim against the context only:\n"
        '- "yes": the context states it or directly implies it;\n'
        '- "no": the context contradicts it;\n'
        '- "unsure": the context neither supports nor contradicts it.\n'
        "Add a one-sentence reason naming the context piece that decides. If the response makes no "
        "factual claim, return an empty list.\n\n"
        f"{question_block(question)}{delimit_pieces(pieces)}\n\n{delimit('response', response)}"
    )


compose_reason = VerdictReason(
    noun="claim",
    empty="the judge found no factual claims in the response, so none is supported by the context "
    "(a response without claims scores 0).",
    tally=lambda a: f"supported by {CONTEXT_PHRASES[a['contextSource']]}, "
    f"{a['counts']['no']} contradicted and {a['counts']['unsure']} not covered",
    labels=(("no", "Contradicted"), ("unsure", "Not in the context")),
)
"""The reason, written from the verdicts (no judge call): ``compose_reason(analysis, score)``."""


class ClaimsScorer(JudgedScorer):
    """Frame of the claim-by-claim context scorers (faithfulness, hallucination).

    A subclass sets ``labels`` (the verdicts counted), ``instructions``,
    ``judge_prompt`` and ``compose_reason``; the score is the share of ``"yes"``
    verdicts, 0 when the response makes no claims.
    """

    labels: tuple[str, ...]
    instructions: str
    context: tuple[str, ...]
    get_context: Callable[[RunInput], Sequence[str]] | None = None
    expected_completion_tokens = 500

    def _context(self, run: RunInput) -> Context:
        return resolve_context(run, self.context, tool_results=True, extractor=self.get_context)

    @staticmethod
    def judge_prompt(question: str, pieces: tuple[str, ...], response: str) -> str:
        raise NotImplementedError

    @staticmethod
    def compose_reason(analysis: Mapping[str, Any], score: float) -> str:
        raise NotImplementedError

    def _validate(self, run: RunInput) -> None:
        require_text(run.output, "output", "the response to evaluate")
        if not self._context(run).pieces:
            raise MissingInputError(
                NO_CONTEXT.format(name=self.name, tools=", or include tool calls with results"), field="context"
            )

    def _messages(self, run: RunInput) -> list[dict[str, str]]:
        pieces = self._context(run).pieces
        return [
            system_message(self.instructions),
            {"role": "user", "content": self.judge_prompt(run.user_text, pieces, run.output)},
        ]

    def _score(self, parsed: Any, run: RunInput) -> tuple[float, dict[str, Any], Any]:
        context = self._context(run)
        claims = [c.model_dump() for c in parsed.claims]
        counts = {v: sum(c["verdict"] == v for c in claims) for v in self.labels}
        value = counts["yes"] / len(claims) if claims else 0.0
        analysis = {
            "claims": claims,
            "counts": counts,
            "contextSource": context.source,
            "contextPieces": len(context.pieces),
        }
        return value, analysis, lambda score: self.compose_reason({**analysis, "scale": self.scale}, score)


class FaithfulnessScorer(ClaimsScorer):
    """Scores how faithful the response is to its context; build it with :func:`create_faithfulness_scorer`."""

    id = SCORER_ID
    name = "Faithfulness"
    output_model = FaithfulnessAnalysis
    schema_name = "faithfulness"
    labels = ("yes", "no", "unsure")
    instructions = INSTRUCTIONS
    judge_prompt = staticmethod(judge_prompt)
    compose_reason = staticmethod(compose_reason)

    @staticmethod
    def dimension_scores(analysis: Mapping[str, Any]) -> dict[str, float]:
        """Shares of supported, contradicted and unverifiable claims (none when there are no claims)."""
        return verdict_shares(analysis, "claim", {"yes": "supported", "no": "contradicted", "unsure": "notInContext"})


METRIC = Metric(
    id=SCORER_ID,
    name="Faithfulness",
    scorer=FaithfulnessScorer,
    params=(SCALE_PARAM, CONTEXT_PARAM),
    inputs=CLAIMS_INPUTS,
    measures="The share of the response's factual claims that the context supports.",
    formula="#supported claims / #claims; no claims → 0; round half up to 2 decimals, × scale",
    higher_is_better=True,
    example={
        "input": [{"role": "user", "content": "Tell me about the Eiffel Tower."}],
        "output": "The Eiffel Tower is in Paris, was finished in 1889 and is painted red.",
        "context": [
            "The Eiffel Tower is a wrought-iron tower in Paris, completed in 1889.",
            "It is repainted every seven years in a bronze colour.",
        ],
    },
    notes=(
        "One judge call returns the claims with their verdicts (Mastra: 3 calls); the reason is written in "
        "code. Verdicts yes (supported) / no (contradicted) / unsure (not in the context), compared after "
        "trimming and lower-casing; any other label is invalid judge output. Deviation: Mastra compares "
        "=== 'yes' exactly, so ' Yes' counts as unsupported there; our structured output constrains the labels, so this differs from Mastra only when the judge falls back to JSON mode."
        " Context: the run's, else the "
        "context option, else tool results in the output. No context at all is invalid input (Mastra would "
        "judge against nothing and score 0). No claims → 0. An empty response is invalid input."
    ),
)

create_faithfulness_scorer = factory(
    METRIC,
    """Create the LLM-judged faithfulness scorer (Mastra's ``createFaithfulnessScorer``).

    One judge call extracts the response's claims and judges each against the context;
    the code scores ``round_half_up(#supported / #claims × scale, 2)``, 0 when the
    response makes no claims. The context is the run's ``context``, else the ``context``
    option, else the results of the run's tool calls.

    Options: ``scale`` (finite number > 0, default 1) and ``context`` (a list of
    passages for runs without context of their own, default none).
    """,
)

SPECS = specs(METRIC)
