"""The public API of ``scorers``: the names of ``__all__``, listed here in full.

The restructure into core/, catalogue/, runs/ and analysis/ kept every name. A name may be
added (add it here too); removing or renaming one breaks users and fails this test.
"""

from __future__ import annotations

import subprocess
import sys

import scorers

# scorers.__all__: the names from before the restructure (commit 047582d) and those added since, in its order.
PUBLIC_API = [
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


def test_all_lists_exactly_the_public_api():
    assert scorers.__all__ == PUBLIC_API


def test_every_public_name_is_importable_from_the_package():
    namespace: dict[str, object] = {}
    exec("from scorers import *", namespace)
    assert [name for name in PUBLIC_API if name not in namespace] == []
    assert all(getattr(scorers, name) is namespace[name] for name in PUBLIC_API)


def test_the_library_never_imports_streamlit():
    code = "import sys, scorers, scorers.cli; print('streamlit' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
