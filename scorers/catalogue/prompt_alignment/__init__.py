"""Prompt alignment (LLM judge): schema, prompt templates and scorer."""

from scorers.catalogue.prompt_alignment.scorer import (
    BANDS,
    DIMENSION_LABELS,
    DIMENSIONS,
    SYSTEM_WEIGHTS,
    USER_WEIGHTS,
    PromptAlignmentScorer,
    compose_reason,
    create_prompt_alignment_scorer,
    dimension_breakdown,
    interpretation_band,
)

__all__ = [
    "BANDS",
    "DIMENSIONS",
    "DIMENSION_LABELS",
    "SYSTEM_WEIGHTS",
    "USER_WEIGHTS",
    "PromptAlignmentScorer",
    "compose_reason",
    "create_prompt_alignment_scorer",
    "dimension_breakdown",
    "interpretation_band",
]
