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

from scorers.catalogue.metrics._llm import (
    SCALE_OPTION,
    BinaryVerdict,
    JudgedScorer,
    Option,
    StrictModel,
    delimit_pieces,
    quoted,
    read_options,
    require_text,
    resolve_context,
    resolve_settings,
    system_message,
    text_list,
)
from scorers.catalogue.metrics.faithfulness import CONTEXT_OPTION, CONTEXT_PHRASES, NO_CONTEXT, question_block
from scorers.catalogue.spec import SCALE, ScorerSpec
from scorers.core.base import RunInput
from scorers.core.errors import InvalidInputError
from scorers.core.judge import JudgeCache, JudgeSettings, delimit

SCORER_ID = "hallucination"


class HallucinationVerdict(StrictModel):
    """One factual claim of the response and whether it is hallucinated."""

    claim: str = Field(description="One factual claim of the response, self-contained.")
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
    head = f"The score is {score:g} out of {analysis['scale']:g} (lower is better)"
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


class HallucinationScorer(JudgedScorer):
    """Scores hallucinated claims (lower is better); build it with :func:`create_hallucination_scorer`."""

    id = SCORER_ID
    name = "Hallucination"
    output_model = HallucinationAnalysis
    schema_name = "hallucination"
    expected_completion_tokens = 500

    def __init__(self, settings: JudgeSettings, cache: JudgeCache | None, scale: float, context: tuple[str, ...]):
        super().__init__(settings, cache, scale)
        self.context = context

    def _validate(self, run: RunInput) -> None:
        require_text(run.output, "output", "the response to evaluate")
        if not resolve_context(run, self.context, tool_results=True).pieces:
            raise InvalidInputError(
                NO_CONTEXT.format(name=self.name, tools=", or include tool calls with results"), field="context"
            )

    def _messages(self, run: RunInput) -> list[dict[str, str]]:
        pieces = resolve_context(run, self.context, tool_results=True).pieces
        return [
            system_message(INSTRUCTIONS),
            {"role": "user", "content": judge_prompt(run.user_text, pieces, run.output)},
        ]

    def _score(self, parsed: Any, run: RunInput) -> tuple[float, dict[str, Any], Any]:
        context = resolve_context(run, self.context, tool_results=True)
        claims = [c.model_dump() for c in parsed.claims]
        counts = {v: sum(c["verdict"] == v for c in claims) for v in ("yes", "no")}
        value = counts["yes"] / len(claims) if claims else 0.0
        analysis = {
            "claims": claims,
            "counts": counts,
            "contextSource": context.source,
            "contextPieces": len(context.pieces),
        }
        return value, analysis, lambda score: compose_reason({**analysis, "scale": self.scale}, score)


OPTIONS = {"scale": SCALE_OPTION, "context": Option((), text_list)}


def create_hallucination_scorer(
    model: str | None = None,
    options: Mapping[str, Any] | None = None,
    *,
    settings: JudgeSettings | None = None,
    cache: JudgeCache | None = None,
    **option_kwargs: Any,
) -> HallucinationScorer:
    """Create the LLM-judged hallucination scorer (Mastra's ``createHallucinationScorer``); lower is better.

    One judge call extracts the response's claims and marks each one the context
    contradicts or does not support; the code scores
    ``round_half_up(#hallucinated / #claims × scale, 2)``, 0 when the response makes
    no claims. The context is the run's ``context``, else the ``context`` option, else
    the results of the run's tool calls.

    Args:
        model: ``"openai/gpt-4o-mini"`` or a bare model name; overrides ``settings.model``.
        options: ``scale`` (finite number > 0, default 1) and ``context`` (a list of
            passages for runs without context of their own, default none).
        settings: the judge settings; default :func:`~scorers.core.judge.resolve_judge_settings`.
        cache: a judge-reply cache such as :class:`scorers.runs.store.Store`; None for none.
        **option_kwargs: options as keyword arguments (they win over ``options``).

    Returns:
        The scorer; ``run(payload)`` needs a non-empty response and some context.

    Raises:
        InvalidInputError: unknown option, or an option out of range (the error names it).
    """
    opts = read_options(options, option_kwargs, OPTIONS)
    return HallucinationScorer(resolve_settings(model, settings), cache, opts["scale"], opts["context"])


SPECS = (
    ScorerSpec(
        id=SCORER_ID,
        name="Hallucination",
        uses_judge=True,
        judge_calls=1,
        inputs=("output", "context or tool results", "input (optional)"),
        measures="The share of the response's factual claims that the context contradicts or does not support.",
        formula="#hallucinated claims / #claims; no claims → 0; round half up to 2 decimals, × scale",
        score_range="0..1",
        higher_is_better=False,
        options=(SCALE, CONTEXT_OPTION),
        build=lambda o, s, c: create_hallucination_scorer(options=o, settings=s, cache=c),
        example={
            "input": [{"role": "user", "content": "When was the Eiffel Tower finished?"}],
            "output": "The Eiffel Tower was finished in 1889 and cost 10 million francs.",
            "context": ["The Eiffel Tower is a wrought-iron tower in Paris, completed in 1889."],
        },
        notes=(
            "Lower is better. One judge call returns the claims with their verdicts (Mastra: 3 calls); the "
            "reason is written in code. Verdict yes = contradicted or unsupported by the context, no = "
            "supported; compared after trimming and lower-casing, any other label (including unsure) is invalid "
            "judge output. Context: the run's, else the context option, else tool results in the output; no "
            "context at all is invalid input (otherwise every claim would count as unsupported). No claims → 0. "
            "An empty response is invalid input."
        ),
    ),
)
