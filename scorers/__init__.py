"""Scorer Studio's scorer library: LLM-judged and code-based scorers for LLM responses.

Public API (SPEC §2). This package never imports streamlit.
"""

from scorers.catalogue.llm_judge import (
    LLMJudgeScorer,
    create_gluten_checker_scorer,
    create_llm_judge_scorer,
    template_placeholders,
)
from scorers.catalogue.metrics.answer_relevancy import create_answer_relevancy_scorer
from scorers.catalogue.metrics.answer_similarity import create_answer_similarity_scorer
from scorers.catalogue.metrics.bias import create_bias_scorer
from scorers.catalogue.metrics.completeness import create_completeness_scorer
from scorers.catalogue.metrics.content_similarity import create_content_similarity_scorer
from scorers.catalogue.metrics.context_precision import create_context_precision_scorer
from scorers.catalogue.metrics.context_relevance import create_context_relevance_scorer
from scorers.catalogue.metrics.faithfulness import create_faithfulness_scorer
from scorers.catalogue.metrics.hallucination import create_hallucination_scorer
from scorers.catalogue.metrics.keyword_coverage import create_keyword_coverage_scorer
from scorers.catalogue.metrics.noise_sensitivity import create_noise_sensitivity_scorer
from scorers.catalogue.metrics.rubric import create_checklist_rubric_scorer, create_rubric_scorer
from scorers.catalogue.metrics.summarization import create_summarization_scorer
from scorers.catalogue.metrics.tone_consistency import create_tone_consistency_scorer
from scorers.catalogue.metrics.tool_call_accuracy import create_tool_call_accuracy_scorer
from scorers.catalogue.metrics.tool_call_accuracy_code import create_tool_call_accuracy_code_scorer
from scorers.catalogue.metrics.toxicity import create_toxicity_scorer
from scorers.catalogue.prompt_alignment import (
    PromptAlignmentScorer,
    create_prompt_alignment_scorer,
    dimension_breakdown,
    interpretation_band,
)
from scorers.catalogue.registry import SCORERS, OptionSpec, ScorerSpec, create_scorer
from scorers.catalogue.textual_difference import TextualDifferenceScorer, create_textual_difference_scorer
from scorers.core.base import (
    JudgeInfo,
    JudgeUsage,
    Message,
    RunInput,
    Scorer,
    ScoreResult,
    normalize_run,
    round_half_up,
)
from scorers.core.errors import (
    ContextWindowExceededError,
    InvalidInputError,
    JudgeAPIError,
    JudgeConfigError,
    JudgeError,
    JudgeOutputInvalidError,
    JudgeOutputTruncatedError,
    JudgeRefusalError,
    MissingInputError,
    RateLimitedError,
    RunStatus,
    ScorerError,
    ScoreStatus,
)
from scorers.core.judge import DEFAULT_MODEL, Judge, JudgeSettings, check_connection, resolve_judge_settings
from scorers.runs.runner import (
    Estimate,
    EvalItem,
    EvalRunResult,
    ItemOutcome,
    Summary,
    estimate_run,
    load_run,
    run_evals,
)
from scorers.runs.store import Store, default_db_path

__all__ = [
    "DEFAULT_MODEL",
    "SCORERS",
    "check_connection",
    "ContextWindowExceededError",
    "create_answer_relevancy_scorer",
    "create_answer_similarity_scorer",
    "create_bias_scorer",
    "create_checklist_rubric_scorer",
    "create_completeness_scorer",
    "create_content_similarity_scorer",
    "create_context_precision_scorer",
    "create_context_relevance_scorer",
    "create_faithfulness_scorer",
    "create_gluten_checker_scorer",
    "create_hallucination_scorer",
    "create_keyword_coverage_scorer",
    "create_llm_judge_scorer",
    "create_noise_sensitivity_scorer",
    "create_prompt_alignment_scorer",
    "create_rubric_scorer",
    "create_scorer",
    "create_summarization_scorer",
    "create_textual_difference_scorer",
    "create_tone_consistency_scorer",
    "create_tool_call_accuracy_code_scorer",
    "create_tool_call_accuracy_scorer",
    "create_toxicity_scorer",
    "DatasetError",
    "default_db_path",
    "dimension_breakdown",
    "Estimate",
    "estimate_run",
    "EvalItem",
    "EvalRunResult",
    "guess_columns",
    "interpretation_band",
    "InvalidInputError",
    "ItemOutcome",
    "iter_runs",
    "Judge",
    "JudgeAPIError",
    "JudgeConfigError",
    "JudgeError",
    "JudgeInfo",
    "JudgeOutputInvalidError",
    "JudgeOutputTruncatedError",
    "MissingInputError",
    "JudgeRefusalError",
    "JudgeSettings",
    "JudgeUsage",
    "LLMJudgeScorer",
    "load_dataset",
    "load_run",
    "LoadedDataset",
    "Message",
    "normalize_run",
    "OptionSpec",
    "PromptAlignmentScorer",
    "RateLimitedError",
    "require_columns",
    "resolve_judge_settings",
    "round_half_up",
    "run_evals",
    "RunInput",
    "RunStatus",
    "Scorer",
    "ScorerError",
    "ScoreResult",
    "ScorerSpec",
    "ScoreStatus",
    "Store",
    "Summary",
    "template_placeholders",
    "TextualDifferenceScorer",
]


# Datasets need pandas (and pyarrow with it): imported on first use, so ``python -m scorers``
# starts without them until a command reads a file.
_LAZY = dict.fromkeys(
    ("DatasetError", "LoadedDataset", "guess_columns", "iter_runs", "load_dataset", "require_columns"),
    "scorers.runs.datasets",
)


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'scorers' has no attribute {name!r}")
