"""Answer similarity (LLM judge): how closely the response matches the ground-truth answer.

One judge call splits the ground truth into semantic units, matches each one
against the response (exact / semantic / partial / missing), and lists the
response's extra units and its contradictions of the ground truth; the code
computes the score and writes the reason. Mastra makes three calls for this
(extract units, analyse, reason).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import Field

from scorers.catalogue.metrics._define import SCALE_PARAM, Metric, Param, factory, specs
from scorers.catalogue.metrics._llm import (
    JudgedScorer,
    StrictModel,
    boolean,
    normalized_label,
    number,
    quoted,
    require_text,
    system_message,
)
from scorers.core.base import RunInput, decimal_text
from scorers.core.errors import InvalidInputError
from scorers.core.judge import JudgeCache, JudgeSettings, delimit

SCORER_ID = "answer-similarity"
MATCH_TYPES = ("exact", "semantic", "partial", "missing")
MatchType = normalized_label(*MATCH_TYPES)
# Mastra's cap on the penalty for extra information in the response.
MAX_EXTRA_INFO_PENALTY = 0.2


class GroundTruthUnit(StrictModel):
    """One semantic unit of the ground truth and how the response matches it."""

    unit: str = Field(description="One fact, claim or concept of the ground truth.")
    match: MatchType = Field(
        description='"exact": stated the same way; "semantic": same meaning in other words; '
        '"partial": only part of it, or vaguer; "missing": absent from the response.'
    )
    responseEvidence: str = Field(description='The matching text of the response; "" when missing.')
    reason: str = Field(description="One short sentence justifying the match type.")


class Contradiction(StrictModel):
    """A statement of the response that contradicts the ground truth."""

    responseClaim: str = Field(description="What the response says.")
    groundTruthClaim: str = Field(description="What the ground truth says instead.")


class AnswerSimilarityAnalysis(StrictModel):
    """The judge's answer: every ground-truth unit matched, extra response units, contradictions."""

    groundTruthUnits: Annotated[list[GroundTruthUnit], Field(min_length=1)]
    extraUnits: list[str] = Field(description="Facts or claims of the response that the ground truth does not contain.")
    contradictions: list[Contradiction]


INSTRUCTIONS = (
    "You compare an AI assistant's response with a reference (ground-truth) answer, fact by fact. "
    "You judge meaning, not wording, and you are precise about what is missing and what is contradicted."
)


def judge_prompt(response: str, ground_truth: str) -> str:
    """The user message of the judge call."""
    return (
        "1. Split the ground truth into its semantic units: each key fact, claim, concept, quantity "
        "(with its unit) or relationship is one unit. Keep the ground truth's order; the ground truth "
        "has at least one unit.\n"
        "2. For each unit, find how the response covers it:\n"
        '- "exact": the response states it, in the same or nearly the same words;\n'
        '- "semantic": the response states the same meaning in different words;\n'
        '- "partial": the response states part of it, or a vaguer or less precise version;\n'
        '- "missing": the response does not state it.\n'
        "Quote the matching text of the response as evidence (an empty string when missing) and add a "
        "one-sentence reason.\n"
        "3. List the extra units: facts or claims of the response that the ground truth does not contain "
        "(not restatements of units already matched).\n"
        "4. List the contradictions: statements of the response that conflict with the ground truth, "
        "each with what the ground truth says instead. A unit the response contradicts is not a match.\n\n"
        f"{delimit('ground_truth', ground_truth)}\n\n{delimit('response', response)}"
    )


def unit_weights(semantic_threshold: float, exact_match_bonus: float, missing_penalty: float) -> dict[str, float]:
    """Points per match type (Mastra): exact 1 + bonus, semantic threshold, partial threshold/2, missing −penalty.

    >>> unit_weights(0.8, 0.2, 0.15)
    {'exact': 1.2, 'semantic': 0.8, 'partial': 0.4, 'missing': -0.15}
    """
    return {
        "exact": 1.0 + exact_match_bonus,
        "semantic": semantic_threshold,
        "partial": semantic_threshold * 0.5,
        "missing": -missing_penalty,
    }


def compose_reason(analysis: Mapping[str, Any], score: float) -> str:
    """The reason, written from the match analysis (no judge call); it quotes ``score``."""
    units = analysis["groundTruthUnits"]
    counts = analysis["matchCounts"]
    n = len(units)
    text = (
        f"The score is {decimal_text(score)} out of {analysis['scale']:g}: of {n} ground-truth unit{'s' if n != 1 else ''}, "
        f"the response matches {counts['exact']} exactly, {counts['semantic']} semantically and "
        f"{counts['partial']} partially, and misses {counts['missing']}"
    )
    missing = [u["unit"] for u in units if u["match"] == "missing"]
    text += f" ({quoted(missing)})." if missing else "."
    contradictions = analysis["contradictions"]
    if contradictions:
        pairs = [f'{c["responseClaim"]}" where the ground truth says "{c["groundTruthClaim"]}' for c in contradictions]
        text += (
            f" It contradicts the ground truth {len(contradictions)} time{'s' if len(contradictions) != 1 else ''} "
            f"(−{analysis['contradictionPenalty']:g} of the 0..1 score each): {quoted(pairs)}."
        )
    extra = analysis["extraUnits"]
    if extra:
        text += (
            f" It adds {len(extra)} unit{'s' if len(extra) != 1 else ''} the ground truth does not contain "
            f"(−{analysis['extraInfoDeduction']:g} in total): {quoted(extra)}."
        )
    return text


class AnswerSimilarityScorer(JudgedScorer):
    """Scores the response against the ground truth; build it with :func:`create_answer_similarity_scorer`."""

    id = SCORER_ID
    name = "Answer similarity"
    output_model = AnswerSimilarityAnalysis
    schema_name = "answer_similarity"
    expected_completion_tokens = 600

    semantic_threshold: float
    exact_match_bonus: float
    missing_penalty: float
    contradiction_penalty: float
    extra_info_penalty: float

    def __init__(self, settings: JudgeSettings, cache: JudgeCache | None, scale: float, **options: Any):
        super().__init__(settings, cache, scale, **options)
        self.weights = unit_weights(self.semantic_threshold, self.exact_match_bonus, self.missing_penalty)

    def _validate(self, run: RunInput) -> None:
        require_text(run.output, "output", "the response to evaluate")
        if run.ground_truth is None or not run.ground_truth.strip():
            raise InvalidInputError(
                "answer similarity compares the response with a ground truth, but the run has none; add "
                "ground_truth (or groundTruth) to the run, or leave the item out (it is never scored 0)",
                field="ground_truth",
            )

    def _messages(self, run: RunInput) -> list[dict[str, str]]:
        return [
            system_message(INSTRUCTIONS),
            {"role": "user", "content": judge_prompt(run.output, run.ground_truth or "")},
        ]

    def _score(self, parsed: Any, run: RunInput) -> tuple[float, dict[str, Any], Any]:
        data = parsed.model_dump()
        units = data["groundTruthUnits"]
        counts = {m: sum(u["match"] == m for u in units) for m in MATCH_TYPES}
        points = math.fsum(self.weights[u["match"]] for u in units)
        coverage = points / (len(units) * self.weights["exact"])
        contradiction = self.contradiction_penalty * len(data["contradictions"])
        extra = min(len(data["extraUnits"]) * self.extra_info_penalty, MAX_EXTRA_INFO_PENALTY)
        value = min(1.0, max(0.0, coverage - contradiction - extra))
        analysis = {
            **data,
            "matchCounts": counts,
            "unitWeights": self.weights,
            "points": points,
            "coverage": coverage,
            "contradictionPenalty": self.contradiction_penalty,
            "contradictionDeduction": contradiction,
            "extraInfoDeduction": extra,
        }
        return value, analysis, lambda score: compose_reason({**analysis, "scale": self.scale}, score)

    @staticmethod
    def dimension_scores(analysis: Mapping[str, Any]) -> dict[str, float]:
        """Shares of ground-truth units matched exactly, semantically, partially and missing."""
        n = len(analysis["groundTruthUnits"])
        return {m: analysis["matchCounts"][m] / n for m in MATCH_TYPES}


def _require_ground_truth(value: Any, name: str) -> bool:
    if not boolean(value, name):
        raise InvalidInputError(
            "false is not supported: Mastra then scores a run without ground truth 0, but a missing input "
            "is a failure, never a score (SPEC §3). Runs without ground truth are reported as invalid input; "
            "give them a ground truth or leave them out",
            field=f"options.{name}",
        )
    return True


METRIC = Metric(
    id=SCORER_ID,
    name="Answer similarity",
    scorer=AnswerSimilarityScorer,
    params=(
        SCALE_PARAM,
        Param(
            "semantic_threshold",
            0.8,
            number(minimum=0, maximum=1),
            "Semantic match points",
            "number",
            "Points of a semantic match (a partial match gets half), in [0, 1].",
        ),
        Param(
            "exact_match_bonus",
            0.2,
            number(minimum=0),
            "Exact match bonus",
            "number",
            "Extra points of an exact match over 1 (>= 0).",
        ),
        Param(
            "missing_penalty",
            0.15,
            number(minimum=0),
            "Missing unit penalty",
            "number",
            "Points taken per ground-truth unit the response misses (>= 0).",
        ),
        Param(
            "contradiction_penalty",
            1.0,
            number(minimum=0),
            "Contradiction penalty",
            "number",
            "Taken from the 0..1 score per contradiction (>= 0); 1 makes any contradiction a 0.",
        ),
        Param(
            "extra_info_penalty",
            0.05,
            number(minimum=0),
            "Extra information penalty",
            "number",
            "Taken per extra unit in the response (>= 0), at most 0.2 in total.",
        ),
        Param("require_ground_truth", True, _require_ground_truth),
    ),
    inputs=("output", "ground_truth"),
    measures="How closely the response matches the ground-truth answer, fact by fact.",
    formula=(
        "units: exact +1.2, semantic +0.8, partial +0.4, missing −0.15; s = Σ / (#units·1.2) "
        "− contradiction_penalty·#contradictions − min(#extra·0.05, 0.2), clamped to [0, 1]; "
        "round half up to 2 decimals, × scale"
    ),
    higher_is_better=True,
    example={
        "input": [{"role": "user", "content": "What is the capital of France and its population?"}],
        "output": "Paris is France's capital. It is also known for the Eiffel Tower.",
        "ground_truth": "The capital of France is Paris, with about 2.1 million inhabitants.",
    },
    notes=(
        "One judge call returns the matched ground-truth units, extra units and contradictions (Mastra: 3 "
        "calls); the reason is written in code. Match types are exact/semantic/partial/missing, compared "
        "after trimming and lower-casing; any other label is invalid judge output. No ground truth is "
        "invalid input, never a 0: Mastra's require_ground_truth=false (score 0 without ground truth) is "
        "rejected at construction. A ground truth with no units is invalid judge output (re-asked once). "
        "An empty response is invalid input."
    ),
)

create_answer_similarity_scorer = factory(
    METRIC,
    """Create the LLM-judged answer-similarity scorer (Mastra's ``createAnswerSimilarityScorer``).

    One judge call matches every ground-truth unit against the response; the code scores
    (Mastra's formula, defaults in brackets):

    - points per unit: exact 1 + exact_match_bonus [1.2], semantic semantic_threshold [0.8],
      partial semantic_threshold/2 [0.4], missing −missing_penalty [−0.15];
    - coverage = Σ points / (#units × (1 + exact_match_bonus));
    - s = coverage − contradiction_penalty [1.0] × #contradictions
      − min(#extra units × extra_info_penalty [0.05], 0.2), clamped to [0, 1];
    - score = round_half_up(s × scale, 2).

    The run needs a non-empty response and ground truth.

    Options: ``scale`` (> 0, default 1), ``semantic_threshold`` (in [0, 1]),
    ``exact_match_bonus``, ``missing_penalty``, ``contradiction_penalty``,
    ``extra_info_penalty`` (each >= 0); and ``require_ground_truth``, accepted for
    Mastra compatibility: only true is allowed, since a run without ground truth is
    invalid input, never a 0.
    """,
)

SPECS = specs(METRIC)
