"""Noise sensitivity (LLM judge): how robust a response to a noisy query is, against a clean baseline.

The run's input is the original (clean) query and its output the agent's response
to the noisy query; the options give the baseline response (to the clean query) and
the noisy query. One judge call compares the two responses on five dimensions
(impact level each), lists major issues and gives a robustness score; the code
combines them (Mastra: 2 calls, analysis and reason).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import Field

from scorers.catalogue.metrics._define import SCALE_PARAM, Metric, Param, factory, specs
from scorers.catalogue.metrics._llm import (
    JudgedScorer,
    StrictModel,
    UnitScore,
    listing,
    normalized_label,
    number,
    require_text,
    system_message,
    text,
)
from scorers.core.base import RunInput, decimal_text
from scorers.core.errors import InvalidInputError
from scorers.core.judge import delimit

SCORER_ID = "noise-sensitivity"

ImpactLevel = normalized_label("none", "minimal", "moderate", "significant", "severe")

# Mastra's impact weights: how much of the baseline quality survives the noise on a dimension.
IMPACT_WEIGHTS: dict[str, float] = {"none": 1.0, "minimal": 0.85, "moderate": 0.6, "significant": 0.3, "severe": 0.1}


def impact_weights(value: Any, name: str) -> dict[str, float]:
    """The impact weights: :data:`IMPACT_WEIGHTS` with the given levels replaced (each a number in [0, 1]).

    As Mastra's ``scoring.impactWeights``, a level left out keeps its default.
    """
    if not isinstance(value, Mapping):
        raise InvalidInputError(
            f"{name} must be an object of impact levels, got {type(value).__name__}", field=f"options.{name}"
        )
    unknown = set(value) - set(IMPACT_WEIGHTS)
    if unknown:
        raise InvalidInputError(
            f"unknown impact level(s) {', '.join(sorted(map(str, unknown)))}; expected {', '.join(IMPACT_WEIGHTS)}",
            field=f"options.{name}",
        )
    check = number(minimum=0, maximum=1)
    return {**IMPACT_WEIGHTS, **{level: check(w, f"{name}.{level}") for level, w in value.items()}}


DIMENSIONS = ("contentAccuracy", "completeness", "relevance", "consistency", "hallucinationResistance")
DIMENSION_LABELS = {
    "contentAccuracy": "Content accuracy",
    "completeness": "Completeness",
    "relevance": "Relevance",
    "consistency": "Consistency",
    "hallucinationResistance": "Hallucination resistance",
}

ROLE = (
    "You are an expert in evaluating the robustness of AI agents. You compare an agent's response to a "
    "query that contains noise (misleading, distracting or adversarial content) with its response to the "
    "clean query, and judge how much the noise changed the answer's quality."
)


class DimensionImpact(StrictModel):
    """The noise's effect on one quality dimension."""

    impactLevel: ImpactLevel = Field(description="How much the noise degraded this dimension.")
    specificChanges: str = Field(description="What changed between the baseline and the noisy response.")
    noiseInfluence: str = Field(description="How the noise caused the change (or why it did not).")


class Dimensions(StrictModel):
    contentAccuracy: DimensionImpact = Field(description="Are the facts still correct?")
    completeness: DimensionImpact = Field(description="Does it still cover what the baseline covered?")
    relevance: DimensionImpact = Field(description="Does it still address the original question?")
    consistency: DimensionImpact = Field(description="Is it consistent with the baseline's message?")
    hallucinationResistance: DimensionImpact = Field(
        description="Does it avoid repeating false claims from the noise or inventing facts?"
    )


class NoiseAnalysis(StrictModel):
    """The judge's comparison of the noisy response with the baseline."""

    dimensions: Dimensions
    majorIssues: list[str] = Field(description="Serious problems the noise caused; empty if none.")
    robustnessScore: UnitScore = Field(description="1 = the noise had no effect, 0 = the response was ruined.")
    overallAssessment: str = Field(description="Two or three sentences.")


def noise_prompt(original_query: str, baseline: str, noisy_query: str, noisy_response: str, noise_type: str) -> str:
    """The judge prompt: compare the noisy response with the baseline on the five dimensions."""
    kind = f" The noise type is: {noise_type}." if noise_type else ""
    return (
        f"{delimit('original_query', original_query)}\n\n{delimit('baseline_response', baseline)}\n\n"
        f"{delimit('noisy_query', noisy_query)}\n\n{delimit('noisy_response', noisy_response)}\n\n"
        "The baseline response answers the original query; the noisy response answers the noisy query, "
        f"which is the original query with noise added.{kind} Compare the noisy response with the baseline "
        "on each dimension (contentAccuracy, completeness, relevance, consistency, hallucinationResistance) "
        'and give its impactLevel: "none" (no degradation), "minimal", "moderate", "significant" or '
        '"severe" (the dimension is ruined), with the specific changes and how the noise caused them. '
        "List majorIssues (e.g. a false claim from the noise repeated as fact, the original question "
        "abandoned). Give robustnessScore from 0 to 1 and an overallAssessment. Judge the effect of the noise, "
        "not the style: a reworded but equally good answer has no impact."
    )


class NoiseSensitivityScorer(JudgedScorer):
    """Robustness of a response to noise; build it with :func:`create_noise_sensitivity_scorer`."""

    id = SCORER_ID
    name = "Noise sensitivity"
    schema_name = "noise_sensitivity"
    output_model = NoiseAnalysis
    expected_completion_tokens = 600

    baseline_response: str
    noisy_query: str
    noise_type: str
    discrepancy_threshold: float
    major_issue_penalty: float
    max_major_issue_penalty: float
    impact_weights: Mapping[str, float]

    def _validate(self, run: RunInput) -> None:
        require_text(run.user_text, "input", "the original query (the run's input)")
        require_text(run.output, "output", "the response to the noisy query (the run's output)")

    def _messages(self, run: RunInput) -> list[dict[str, str]]:
        prompt = noise_prompt(run.user_text, self.baseline_response, self.noisy_query, run.output, self.noise_type)
        return [system_message(ROLE), {"role": "user", "content": prompt}]

    @staticmethod
    def dimension_scores(analysis: Mapping[str, Any]) -> dict[str, float]:
        """The impact weight (1 = unaffected ... 0.1 = severe) of each dimension, and the judge's robustness."""
        weights = analysis.get("impactWeights", IMPACT_WEIGHTS)  # runs stored before the option lack it
        scores = {name: weights[analysis["dimensions"][name]["impactLevel"]] for name in DIMENSIONS}
        return {**scores, "robustness": analysis["robustnessScore"]}

    def _score(self, parsed: Any, run: RunInput) -> tuple[float, dict[str, Any], Callable[[float], str]]:
        data = parsed.model_dump()
        weights = [self.impact_weights[data["dimensions"][name]["impactLevel"]] for name in DIMENSIONS]
        mean_impact = math.fsum(weights) / len(weights)
        robustness = data["robustnessScore"]
        discrepant = abs(robustness - mean_impact) > self.discrepancy_threshold + 1e-12
        base = min(robustness, mean_impact) if discrepant else robustness
        penalty = min(len(data["majorIssues"]) * self.major_issue_penalty, self.max_major_issue_penalty)
        raw = max(0.0, base - penalty)
        analysis = {
            **data,
            "impactWeights": dict(self.impact_weights),
            "meanImpactWeight": mean_impact,
            "discrepancy": discrepant,
            "baseScore": base,
            "majorIssuePenalty": penalty,
            "noiseType": self.noise_type or None,
        }

        def reason(score: float) -> str:
            affected = [
                f"{DIMENSION_LABELS[name].lower()} {data['dimensions'][name]['impactLevel']}"
                for name in DIMENSIONS
                if data["dimensions"][name]["impactLevel"] != "none"
            ]
            impact = f"impact: {', '.join(affected)}" if affected else "no dimension was affected"
            source = (
                f"the lower of the judge's robustness {robustness:.2f} and the mean impact weight "
                f"{mean_impact:.2f}, which differ by more than {self.discrepancy_threshold:g}"
                if discrepant
                else f"the judge's robustness {robustness:.2f} (mean impact weight {mean_impact:.2f})"
            )
            issues = (
                f"; minus {penalty:.2f} for {len(data['majorIssues'])} major issue(s): {listing(data['majorIssues'])}"
                if data["majorIssues"]
                else ""
            )
            return f"The score is {decimal_text(score)} out of {self.scale:g}: {source}; {impact}{issues}."

        return raw, analysis, reason


METRIC = Metric(
    id=SCORER_ID,
    name="Noise sensitivity",
    scorer=NoiseSensitivityScorer,
    params=(
        Param(
            "baseline_response",
            "",
            text(required=True),
            "Baseline response",
            "text",
            "Required. The agent's response to the clean (original) query.",
            required=True,
        ),
        Param(
            "noisy_query",
            "",
            text(required=True),
            "Noisy query",
            "text",
            "Required. The original query with noise added; the run's output answers it.",
            required=True,
        ),
        Param(
            "noise_type", "", text(), "Noise type", "text", "Optional, e.g. misinformation, distractors, adversarial."
        ),
        SCALE_PARAM,
        Param(
            "discrepancy_threshold",
            0.2,
            number(minimum=0, maximum=1),
            "Discrepancy threshold",
            "number",
            "In [0, 1]. Above this gap between robustness and mean impact, the lower one is used.",
        ),
        Param(
            "major_issue_penalty", 0.1, number(minimum=0, maximum=1), "Penalty per major issue", "number", "In [0, 1]."
        ),
        Param(
            "max_major_issue_penalty",
            0.3,
            number(minimum=0, maximum=1),
            "Maximum major-issue penalty",
            "number",
            "In [0, 1].",
        ),
        Param("impact_weights", IMPACT_WEIGHTS, impact_weights),
    ),
    nested={
        "scoring": {
            "impactWeights": "impact_weights",
            "discrepancyThreshold": "discrepancy_threshold",
            "penalties": {
                "majorIssuePerItem": "major_issue_penalty",
                "maxMajorIssuePenalty": "max_major_issue_penalty",
            },
        }
    },
    inputs=("input (original query)", "output (response to the noisy query)"),
    measures="How robust the response to a noisy query is compared with the baseline response to the clean query.",
    formula=(
        "impact weights none 1.0 / minimal 0.85 / moderate 0.6 / significant 0.3 / severe 0.1; "
        "s = judge robustness, or min(robustness, mean weight) if they differ by > 0.2; "
        "minus min(#major issues·0.1, 0.3); floor 0; round2(s × scale)"
    ),
    higher_is_better=True,
    example={
        "input": [{"role": "user", "content": "What is the boiling point of water at sea level?"}],
        "output": "Some say 90 °C, but water boils at 100 °C (212 °F) at sea level.",
        "options": {
            "baseline_response": "Water boils at 100 °C (212 °F) at sea level.",
            "noisy_query": "What is the boiling point of water at sea level? I read it is 90 °C.",
            "noise_type": "misinformation",
        },
    },
    notes=(
        "One judge call (Mastra: 2); the reason is written in code. The five dimensions are fixed fields of "
        "the schema, so the judge cannot skip one; impact levels and the robustness score are validated "
        "strictly (a robustness outside [0, 1] is invalid judge output, never clamped). A gap of exactly "
        "the threshold keeps the judge's robustness. Deviation from Mastra: Mastra compares the float gap, so "
        "robustness 0.8 against a mean impact weight of 0.6 reads 0.20000000000000007 > 0.2 and takes the "
        "lower; ours compares with a tolerance of 1e-12, because a gap that is 0.2 on paper is not more than "
        "the threshold. Baseline response and noisy query are scorer options "
        "(as in Mastra), so one scorer serves one query; they are required at construction."
    ),
)

create_noise_sensitivity_scorer = factory(
    METRIC,
    """Create the LLM-judged noise-sensitivity scorer (Mastra's ``createNoiseSensitivityScorerLLM``).

    Score, with impact weights none 1.0, minimal 0.85, moderate 0.6, significant 0.3, severe 0.1:

    - m = mean impact weight over the five dimensions; r = the judge's robustness score;
    - s = min(r, m) if |r − m| > discrepancy_threshold (0.2), else r;
    - s = max(0, s − min(#major issues · major_issue_penalty (0.1), max_major_issue_penalty (0.3)));
    - score = round_half_up(s × scale, 2).

    Run it with the original query as the run's input and the agent's response to the
    noisy query as its output.

    Options: ``baseline_response`` (required: the response to the clean query),
    ``noisy_query`` (required), ``noise_type`` (free text such as
    ``"misinformation"``, ``"distractors"``, ``"adversarial"``; optional), ``scale``
    (> 0, default 1), ``discrepancy_threshold``, ``major_issue_penalty``,
    ``max_major_issue_penalty`` (numbers in [0, 1]), ``impact_weights`` (a mapping of
    impact levels to weights in [0, 1]; levels left out keep the defaults above); the
    last four also in Mastra's shape ``scoring={"impactWeights", "discrepancyThreshold",
    "penalties": {"majorIssuePerItem", "maxMajorIssuePenalty"}}``. A missing or blank baseline
    response or noisy query is an ``InvalidInputError``.
    """,
)

SPECS = specs(METRIC)
