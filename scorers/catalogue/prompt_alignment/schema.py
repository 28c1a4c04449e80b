"""The judge's output schema for prompt alignment (SPEC §1.1), validated strictly.

Scores must be JSON numbers in [0, 1]: strings, booleans, NaN and infinities
are invalid judge output, never clamped or coerced.

A reply that contradicts itself is invalid too, and gets the judge's one re-ask (the
problem quoted); the scores are never derived or repaired in code:

- ``isAddressed`` must agree with the intent score: addressed ⇔ score ≥ 0.5;
- ``overallScore`` must agree with the requirement list: when no listed requirement is
  fulfilled it is at most 0.5, and when every one is fulfilled it is at least 0.5.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

UnitScore = Annotated[float, Field(ge=0.0, le=1.0, description="A score from 0 (not at all) to 1 (fully).")]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, allow_inf_nan=False, extra="ignore", frozen=True)


ADDRESSED_AT = 0.5
"""The intent score from which the intent counts as addressed (see the module docstring)."""


class IntentAlignment(_Strict):
    score: UnitScore
    primaryIntent: str = Field(description="The core request, in one sentence.")
    isAddressed: bool = Field(description="True exactly when the intent score is 0.5 or more.")
    reasoning: str

    @model_validator(mode="after")
    def _agrees(self) -> IntentAlignment:
        if self.isAddressed != (self.score >= ADDRESSED_AT):
            raise ValueError(
                f"isAddressed is {str(self.isAddressed).lower()} but the intent score is {self.score:g}: an addressed "
                f"intent scores {ADDRESSED_AT:g} or more, an unaddressed one less"
            )
        return self


class Requirement(_Strict):
    requirement: str = Field(description="One explicit or clearly implied requirement.")
    isFulfilled: bool
    reasoning: str


class RequirementsFulfillment(_Strict):
    requirements: list[Requirement]
    overallScore: UnitScore = Field(description="Agrees with the list: about the share of requirements fulfilled.")

    @model_validator(mode="after")
    def _agrees(self) -> RequirementsFulfillment:
        n = len(self.requirements)
        met = sum(r.isFulfilled for r in self.requirements)
        if n and ((met == 0 and self.overallScore > 0.5) or (met == n and self.overallScore < 0.5)):
            raise ValueError(
                f"overallScore {self.overallScore:g} contradicts the list: {met} of {n} requirements are fulfilled"
            )
        return self


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
