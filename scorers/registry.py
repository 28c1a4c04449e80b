"""The scorer catalogue: every scorer by id, with its options and what it measures.

The CLI, the dashboard's pages and stored runs name scorers by id and build
them here, so a scorer is added in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import Scorer
from .errors import InvalidInputError
from .judge import JudgeCache, JudgeSettings
from .llm_judge import create_gluten_checker_scorer
from .metrics import (
    answer_relevancy,
    answer_similarity,
    bias,
    completeness,
    content_similarity,
    context_precision,
    context_relevance,
    faithfulness,
    hallucination,
    keyword_coverage,
    noise_sensitivity,
    rubric,
    summarization,
    tone_consistency,
    tool_call_accuracy,
    tool_call_accuracy_code,
    toxicity,
)
from .prompt_alignment import create_prompt_alignment_scorer
from .spec import SCALE, OptionSpec, ScorerSpec
from .textual_difference import create_textual_difference_scorer

_SEED_SCORERS = (
    ScorerSpec(
        id="prompt-alignment",
        name="Prompt alignment",
        uses_judge=True,
        judge_calls=1,
        inputs=("input", "system", "output"),
        measures="How well the response addresses the prompt's intent, requirements, completeness and format.",
        formula=(
            "user: 0.40·intent + 0.30·requirements + 0.20·completeness + 0.10·appropriateness; "
            "system: 0.35/0.35/0.15/0.15; both: 0.7·U + 0.3·S; round half up to 2 decimals, × scale"
        ),
        score_range="0..1",
        higher_is_better=True,
        options=(
            SCALE,
            OptionSpec("evaluation_mode", "Evaluation mode", "choice", "both", ("both", "user", "system"),
                       "Judge against the user prompt, the system messages, or both (70/30)."),
        ),
        build=lambda o, s, c: create_prompt_alignment_scorer(options=o, settings=s, cache=c),
    ),
    ScorerSpec(
        id="textual-difference",
        name="Textual difference",
        uses_judge=False,
        judge_calls=0,
        inputs=("output", "ground_truth or input"),
        measures="How close the response is to the ground truth (or the input), character by character.",
        formula="ratio (2·LCS / total length) × (1 − |len a − len b| / max len) × scale",
        score_range="0..1",
        higher_is_better=True,
        options=(SCALE,),
        build=lambda o, s, c: create_textual_difference_scorer(**o),
    ),
    ScorerSpec(
        id="gluten-checker",
        name="Gluten checker",
        uses_judge=True,
        judge_calls=1,
        inputs=("output",),
        measures="Whether the recipe in the response is gluten-free (the seeds' custom judge).",
        formula="1 if the judge finds no gluten source, else 0",
        score_range="0 or 1",
        higher_is_better=True,
        options=(),
        build=lambda o, s, c: create_gluten_checker_scorer(settings=s, cache=c),
    ),
)

# One entry per metrics module: each has a SPECS tuple (see scorers/metrics/__init__.py).
_METRIC_MODULES = (
    answer_relevancy,
    answer_similarity,
    faithfulness,
    hallucination,
    context_precision,
    context_relevance,
    toxicity,
    bias,
    tool_call_accuracy,
    noise_sensitivity,
    summarization,
    rubric,
    completeness,
    content_similarity,
    keyword_coverage,
    tone_consistency,
    tool_call_accuracy_code,
)

SCORERS: dict[str, ScorerSpec] = {
    spec.id: spec for spec in (*_SEED_SCORERS, *(spec for module in _METRIC_MODULES for spec in module.SPECS))
}


def create_scorer(
    scorer_id: str,
    options: Mapping[str, Any] | None = None,
    *,
    settings: JudgeSettings | None = None,
    cache: JudgeCache | None = None,
) -> Scorer:
    """Build a catalogue scorer by id.

    Args:
        scorer_id: a key of :data:`SCORERS`.
        options: the scorer's options (see its :class:`OptionSpec` list); unknown ones are rejected.
        settings: judge settings for LLM-judged scorers (default: resolved from secrets/env).
        cache: a judge-reply cache (e.g. :class:`scorers.store.Store`).

    Raises:
        InvalidInputError: unknown scorer id or option, or an option out of range.
    """
    spec = SCORERS.get(scorer_id)
    if spec is None:
        raise InvalidInputError(f"unknown scorer {scorer_id!r}; known: {', '.join(SCORERS)}", field="scorer")
    options = dict(options or {})
    unknown = set(options) - {o.name for o in spec.options}
    if unknown:
        known = ", ".join(o.name for o in spec.options) or "none"
        raise InvalidInputError(
            f"{spec.name} has no option(s) {', '.join(sorted(unknown))}; its options: {known}", field="options"
        )
    return spec.build(options, settings, cache)
