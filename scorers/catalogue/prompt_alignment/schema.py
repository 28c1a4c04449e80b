"""The judge's output schema for prompt alignment (SPEC §1.1), validated strictly.

Scores must be JSON numbers in [0, 1]: strings, booleans, NaN and infinities
are invalid judge output, never clamped or coerced.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

UnitScore = Annotated[float, Field(ge=0.0, le=1.0, description="A score from 0 (not at all) to 1 (fully).")]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, allow_inf_nan=False, extra="ignore", frozen=True)


class IntentAlignment(_Strict):
    score: UnitScore
    primaryIntent: str = Field(description="The core request, in one sentence.")
    isAddressed: bool
    reasoning: str


class Requirement(_Strict):
    requirement: str = Field(description="One explicit or clearly implied requirement.")
    isFulfilled: bool
    reasoning: str


class RequirementsFulfillment(_Strict):
    requirements: list[Requirement]
    overallScore: UnitScore


class Completeness(_Strict):
    score: UnitScore
    missingElements: list[str]
    reasoning: str


class ResponseAppropriateness(_Strict):
    score: UnitScore
    formatAlignment: bool = Field(description="Does the format match what was asked?")
    toneAlignment: bool = Field(description="Does the tone match what was asked?")
    reasoning: str


class DimensionSet(_Strict):
    """The four dimensions, judged against one source of instructions."""

    intentAlignment: IntentAlignment
    requirementsFulfillment: RequirementsFulfillment
    completeness: Completeness
    responseAppropriateness: ResponseAppropriateness


class SingleAnalysis(DimensionSet):
    """User or system mode: one dimension set and an overall assessment."""

    overallAssessment: str


class BothAnalysis(_Strict):
    """Both mode: the dimensions judged against the user prompt and, separately, the system messages."""

    user: DimensionSet
    system: DimensionSet
    overallAssessment: str


class JudgeReason(_Strict):
    """The optional judge-written reason."""

    reason: str
