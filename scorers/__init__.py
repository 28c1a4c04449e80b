"""Scorer Studio's scorer library: LLM-judged and code-based scorers for LLM responses.

Public API (SPEC §2). This package never imports streamlit.
"""

from .base import JudgeInfo, JudgeUsage, Message, RunInput, Scorer, ScoreResult, normalize_run, round_half_up
from .datasets import DatasetError, LoadedDataset, guess_columns, iter_runs, load_dataset, require_columns
from .errors import (
    ContextWindowExceededError,
    InvalidInputError,
    JudgeAPIError,
    JudgeConfigError,
    JudgeError,
    JudgeOutputInvalidError,
    JudgeOutputTruncatedError,
    JudgeRefusalError,
    RateLimitedError,
    ScorerError,
    ScoreStatus,
)
from .judge import DEFAULT_MODEL, Judge, JudgeSettings, check_connection, resolve_judge_settings
from .llm_judge import (
    LLMJudgeScorer,
    create_gluten_checker_scorer,
    create_llm_judge_scorer,
    template_placeholders,
)
from .prompt_alignment import (
    PromptAlignmentScorer,
    create_prompt_alignment_scorer,
    dimension_breakdown,
    interpretation_band,
)
from .registry import SCORERS, OptionSpec, ScorerSpec, create_scorer
from .runner import Estimate, EvalItem, EvalRunResult, ItemOutcome, Summary, estimate_run, load_run, run_evals
from .store import Store, default_db_path
from .textual_difference import TextualDifferenceScorer, create_textual_difference_scorer

__all__ = [
    "DEFAULT_MODEL",
    "SCORERS",
    "check_connection",
    "ContextWindowExceededError",
    "create_gluten_checker_scorer",
    "create_llm_judge_scorer",
    "create_prompt_alignment_scorer",
    "create_scorer",
    "create_textual_difference_scorer",
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
