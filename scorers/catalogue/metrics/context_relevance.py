"""Context relevance (LLM judge): how relevant the context is to the question, and whether it was used.

One judge call rates every context piece (relevance high / medium / low / none,
and whether the response used it) and lists information the question needs
that no piece provides; the code computes the score and writes the reason.
Mastra makes two calls for this (analysis, reason).

The context is the run's ``context``, else the scorer's ``context`` option. A
run without any context makes no judge call and scores ``scale`` (Mastra's rule).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import Field, create_model

from scorers.catalogue.metrics._define import CONTEXT_PARAM, SCALE_PARAM, Metric, Param, factory, specs
from scorers.catalogue.metrics._llm import (
    Context,
    JudgedScorer,
    StrictModel,
    delimit_pieces,
    function,
    normalized_label,
    number,
    numbered_list_model,
    quoted,
    require_text,
    resolve_context,
    system_message,
)
from scorers.core.base import RunInput, ScoreResult, decimal_text, normalize_run, round_half_up
from scorers.core.judge import delimit

SCORER_ID = "context-relevance"
RELEVANCE_WEIGHTS = {"high": 1.0, "medium": 0.7, "low": 0.3, "none": 0.0}
Relevance = normalized_label(*RELEVANCE_WEIGHTS)

NO_CONTEXT_NOTE = (
    "No context was given (neither in the run nor in the context option), so no judge call was made and the "
    "score is the maximum, as in Mastra. If this run should have had retrieved context, the score hides a "
    "retrieval failure."
)


class PieceAssessment(StrictModel):
    """One context piece: how relevant it is and whether the response used it."""

    index: int = Field(description="The piece's number: 1 for <context_1>, 2 for <context_2> ...")
    relevance: Relevance = Field(  # type: ignore[valid-type]
        description='"high" directly answers the question, "medium" helps, "low" barely related, "none" unrelated.'
    )
    used: bool = Field(description="Does the response use information from this piece?")
    reason: str = Field(description="One short sentence justifying the rating.")


class _Pieces(StrictModel):
    """Base of the per-piece-count schema."""


@functools.lru_cache(maxsize=128)
def analysis_model(n: int) -> type[StrictModel]:
    """The schema for ``n`` pieces: ``pieces`` (exactly n, numbered 1..n in order), then ``missingContext``."""
    return create_model(
        f"ContextRelevanceAnalysis{n}",
        __base__=numbered_list_model(_Pieces, "pieces", PieceAssessment, n),
        missingContext=(
            list[str],
            Field(description="Information the question needs that no context piece provides; empty if none."),
        ),
    )


INSTRUCTIONS = (
    "You evaluate the context given to an AI assistant: how relevant each context piece is to the "
    "user's question, whether the response made use of it, and what information the context lacks. "
    "You are strict and consistent."
)


def judge_prompt(question: str, pieces: tuple[str, ...], response: str) -> str:
    """The user message of the judge call."""
    return (
        f"There are {len(pieces)} context pieces, <context_1> to <context_{len(pieces)}>. For each piece, "
        "in order, give its number (index) and:\n"
        '- relevance to the question: "high" (directly answers it), "medium" (useful supporting '
        'information), "low" (barely related) or "none" (unrelated);\n'
        "- used: true if the response uses information from this piece, else false;\n"
        "- a one-sentence reason.\n"
        "Then list missingContext: pieces of information the question needs that no context piece "
        "provides (an empty list if the context is sufficient).\n\n"
        f"{delimit('question', question)}\n\n{delimit_pieces(pieces)}\n\n{delimit('response', response)}"
    )


def compose_reason(analysis: Mapping[str, Any], score: float) -> str:
    """The reason, written from the analysis (no judge call); it quotes ``score``."""
    head = f"The score is {decimal_text(score)} out of {analysis['scale']:g}"
    if analysis.get("note"):
        return f"{head}. {analysis['note']}"
    pieces = analysis["pieces"]
    n = len(pieces)
    counts = analysis["relevanceCounts"]
    text = (
        f"{head}: of {n} context piece{'s' if n != 1 else ''}, {counts['high']} highly relevant, "
        f"{counts['medium']} medium, {counts['low']} low and {counts['none']} irrelevant "
        f"(mean relevance {analysis['meanRelevance']:.2f})."
    )
    unused = analysis["unusedHighRelevance"]
    if unused:
        text += (
            f" The response did not use highly relevant piece{'s' if len(unused) != 1 else ''} "
            f"{', '.join(map(str, unused))} (−{analysis['unusedPenalty']:g})."
        )
    missing = analysis["missingContext"]
    if missing:
        text += f" Missing from the context (−{analysis['missingPenalty']:g}): {quoted(missing)}."
    return text


class ContextRelevanceScorer(JudgedScorer):
    """Scores how relevant and used the context is; build it with :func:`create_context_relevance_scorer`."""

    id = SCORER_ID
    name = "Context relevance"
    output_model = _Pieces
    schema_name = "context_relevance"
    expected_completion_tokens = 400

    context: tuple[str, ...]
    context_extractor: Callable[[RunInput], Sequence[str]] | None
    unused_high_relevance_penalty: float
    missing_context_penalty: float
    max_missing_context_penalty: float

    def _pieces(self, run: RunInput) -> tuple[str, ...]:
        return self._context(run).pieces

    def _context(self, run: RunInput) -> Context:
        return resolve_context(run, self.context, tool_results=False, extractor=self.context_extractor)

    def _validate(self, run: RunInput) -> None:
        require_text(run.user_text, "input", "the user's question (the input's user messages)")
        require_text(run.output, "output", "the response to evaluate")

    def _output_model(self, run: RunInput) -> type[StrictModel]:
        return analysis_model(len(self._pieces(run)))

    def _messages(self, run: RunInput) -> list[dict[str, str]]:
        prompt = judge_prompt(run.user_text, self._pieces(run), run.output)
        return [system_message(INSTRUCTIONS), {"role": "user", "content": prompt}]

    def render_prompt(self, payload: dict[str, Any] | RunInput) -> list[dict[str, str]]:
        """The chat messages the judge receives for ``payload``; ``[]`` when the run has no context (no call).

        Raises:
            InvalidInputError: as for :meth:`run`.
        """
        run = normalize_run(payload)
        self._validate(run)
        return self._messages(run) if self._pieces(run) else []

    def run(self, payload: dict[str, Any] | RunInput) -> ScoreResult:
        """Score one run: one judge call, or none (score = scale) when the run has no context.

        Raises:
            InvalidInputError: before any judge call, for an empty question or response.
            JudgeConfigError, JudgeError subclasses: see :meth:`scorers.core.judge.Judge.complete`.
        """
        run = normalize_run(payload)
        self._validate(run)
        if self._pieces(run):
            return super().run(run)
        analysis = {
            "pieces": [],
            "missingContext": [],
            "contextSource": "none",
            "note": NO_CONTEXT_NOTE,
            "rawScore": 1.0,
            "scale": self.scale,
        }
        score = round_half_up(self.scale, 2)
        return ScoreResult(
            scorer=self.id,
            score=score,
            reason=compose_reason(analysis, score),
            analyze_step_result=analysis,
            judge=None,
        )

    def _score(self, parsed: Any, run: RunInput) -> tuple[float, dict[str, Any], Any]:
        context = self._context(run)
        data = parsed.model_dump()
        pieces = data["pieces"]
        counts = {level: sum(p["relevance"] == level for p in pieces) for level in RELEVANCE_WEIGHTS}
        mean_relevance = math.fsum(RELEVANCE_WEIGHTS[p["relevance"]] for p in pieces) / len(pieces)
        unused = [p["index"] for p in pieces if p["relevance"] == "high" and not p["used"]]
        unused_penalty = self.unused_high_relevance_penalty * len(unused)
        missing_penalty = min(
            len(data["missingContext"]) * self.missing_context_penalty, self.max_missing_context_penalty
        )
        value = max(0.0, mean_relevance - unused_penalty - missing_penalty)
        analysis = {
            **data,
            "relevanceCounts": counts,
            "meanRelevance": mean_relevance,
            "unusedHighRelevance": unused,
            "unusedPenalty": unused_penalty,
            "missingPenalty": missing_penalty,
            "contextSource": context.source,
            "note": None,
        }
        return value, analysis, lambda score: compose_reason({**analysis, "scale": self.scale}, score)

    @staticmethod
    def dimension_scores(analysis: Mapping[str, Any]) -> dict[str, float]:
        """Mean relevance weight and share of pieces the response used (none when there was no context)."""
        pieces = analysis["pieces"]
        if not pieces:
            return {}
        return {"meanRelevance": analysis["meanRelevance"], "usedShare": sum(p["used"] for p in pieces) / len(pieces)}


METRIC = Metric(
    id=SCORER_ID,
    name="Context relevance",
    scorer=ContextRelevanceScorer,
    params=(
        SCALE_PARAM,
        CONTEXT_PARAM,
        Param("context_extractor", None, function),
        Param(
            "unused_high_relevance_penalty",
            0.1,
            number(minimum=0),
            "Unused relevant piece penalty",
            "number",
            "Taken per highly relevant piece the response did not use (>= 0).",
        ),
        Param(
            "missing_context_penalty",
            0.15,
            number(minimum=0),
            "Missing context penalty",
            "number",
            "Taken per piece of information the context lacks (>= 0).",
        ),
        Param(
            "max_missing_context_penalty",
            0.5,
            number(minimum=0),
            "Maximum missing context penalty",
            "number",
            "Cap on the total missing-context penalty (>= 0).",
        ),
    ),
    nested={
        "penalties": {
            "unusedHighRelevanceContext": "unused_high_relevance_penalty",
            "missingContextPerItem": "missing_context_penalty",
            "maxMissingContextPenalty": "max_missing_context_penalty",
        }
    },
    inputs=("input", "output", "context"),
    measures="How relevant the context is to the question, whether the response used it, and what it lacks.",
    formula=(
        "mean weight (high 1.0, medium 0.7, low 0.3, none 0) − 0.1 per unused highly relevant piece "
        "− min(#missing·0.15, 0.5), floored at 0; no context → 1; round half up to 2 decimals, × scale"
    ),
    higher_is_better=True,
    example={
        "input": [{"role": "user", "content": "How tall is the Eiffel Tower and when was it built?"}],
        "output": "The Eiffel Tower is 330 metres tall.",
        "context": ["The Eiffel Tower is 330 metres tall.", "Paris hosts many museums, such as the Louvre."],
    },
    notes=(
        "One judge call rates every piece and lists missing context (Mastra: 2 calls); the reason is written "
        "in code. The reply must rate exactly one entry per piece, numbered 1..n in order; relevance labels "
        "high/medium/low/none compared after trimming and lower-casing; anything else is invalid judge output "
        "(re-asked once). No context (run or context option) → score = scale with no judge call, as in "
        "Mastra; the reason says so loudly, since it can hide a retrieval failure. The cost estimate still "
        "counts one call for such runs. An empty question or response is invalid input."
    ),
)

create_context_relevance_scorer = factory(
    METRIC,
    """Create the LLM-judged context-relevance scorer (Mastra's ``createContextRelevanceScorerLLM``).

    One judge call rates each context piece and lists missing context; the code scores
    (Mastra's formula, defaults in brackets):

    - base = mean relevance weight (high 1.0, medium 0.7, low 0.3, none 0);
    - minus unused_high_relevance_penalty [0.1] per highly relevant piece the response did not use;
    - minus min(#missing × missing_context_penalty [0.15], max_missing_context_penalty [0.5]);
    - floored at 0; score = round_half_up(value × scale, 2).

    A run without context scores ``scale`` with no judge call (Mastra's rule; the
    reason and ``analyze_step_result["note"]`` say so). The run needs a user question
    and a response.

    Options: ``scale`` (> 0, default 1), ``context`` (passages for runs without
    context of their own), and the three penalties above (each >= 0), also in Mastra's
    shape ``penalties={"unusedHighRelevanceContext", "missingContextPerItem",
    "maxMissingContextPenalty"}``; in Python, ``context_extractor`` (Mastra's
    ``contextExtractor``: a function of the :class:`~scorers.core.base.RunInput`
    returning the passages; it wins over the rest).
    """,
)

SPECS = specs(METRIC)
