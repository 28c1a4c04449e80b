"""Prompt alignment: an LLM judge analyses, the code scores (SPEC §1.1)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from functools import cached_property
from typing import Any

from scorers.catalogue.prompt_alignment import prompts
from scorers.catalogue.prompt_alignment.schema import BothAnalysis, JudgeReason, SingleAnalysis
from scorers.core.base import (
    JudgeInfo,
    JudgeUsage,
    RunInput,
    ScoreResult,
    decimal_text,
    normalize_run,
    round_half_up,
)
from scorers.core.errors import (
    FOLLOW_UPS_RETRIED,
    FollowUpRateLimitedError,
    InvalidInputError,
    JudgeError,
    MissingInputError,
    RateLimitedError,
)
from scorers.core.judge import Judge, JudgeCache, JudgeSettings, resolve_judge_settings

SCORER_ID = "prompt-alignment"

DIMENSIONS = ("intentAlignment", "requirementsFulfillment", "completeness", "responseAppropriateness")
DIMENSION_LABELS = {
    "intentAlignment": "Intent alignment",
    "requirementsFulfillment": "Requirements fulfillment",
    "completeness": "Completeness",
    "responseAppropriateness": "Response appropriateness",
}
# Weights from the seed (Mastra's prompt-alignment docs), SPEC §1.1.
USER_WEIGHTS = {
    "intentAlignment": 0.40,
    "requirementsFulfillment": 0.30,
    "completeness": 0.20,
    "responseAppropriateness": 0.10,
}
SYSTEM_WEIGHTS = {
    "intentAlignment": 0.35,
    "requirementsFulfillment": 0.35,
    "completeness": 0.15,
    "responseAppropriateness": 0.15,
}
BOTH_USER_SHARE = 0.7
BOTH_SYSTEM_SHARE = 0.3
EVALUATION_MODES = ("user", "system", "both")

# (lower bound on the 0..1 score, label), SPEC §1.1 interpretation bands.
BANDS = (
    (0.9, "excellent alignment in every dimension"),
    (0.8, "very good alignment with small gaps"),
    (0.7, "good alignment, but some requirements or completeness missing"),
    (0.6, "moderate alignment with visible gaps"),
    (0.4, "poor alignment with serious problems"),
    (0.0, "very poor alignment: the response does not address the prompt"),
)


def interpretation_band(score: float, scale: float = 1.0) -> str:
    """The SPEC's interpretation band of a prompt-alignment score.

    Args:
        score: a score in [0, scale].
        scale: the scorer's scale (> 0).

    Returns:
        The band's label, e.g. ``"very good alignment with small gaps"`` for 0.84.

    >>> interpretation_band(8.4, scale=10)
    'very good alignment with small gaps'
    """
    normalized = score / scale
    return next(label for bound, label in BANDS if normalized >= bound - 1e-12)


def dimension_score(dimensions: Mapping[str, Any], name: str) -> float:
    """The 0..1 score of one dimension of an analysis (``overallScore`` for requirements)."""
    part = dimensions[name]
    return part["overallScore"] if name == "requirementsFulfillment" else part["score"]


def weighted_sum(dimensions: Mapping[str, Any], weights: Mapping[str, float]) -> float:
    """Σ weight·score over the four dimensions (the seed's "Weighted Score"), in [0, 1]."""
    return math.fsum(weights[name] * dimension_score(dimensions, name) for name in DIMENSIONS)


def dimension_sources(
    analysis: Mapping[str, Any],
) -> list[tuple[str, Mapping[str, Any], Mapping[str, float], float]]:
    """The instruction sources of a prompt-alignment analysis: (``"user"`` or ``"system"``, the part
    of the analysis holding its four dimensions, their weights, the source's share of the score)."""
    mode = analysis["effectiveMode"]
    if mode == "both":
        return [
            ("user", analysis, USER_WEIGHTS, BOTH_USER_SHARE),
            ("system", analysis["systemAlignment"], SYSTEM_WEIGHTS, BOTH_SYSTEM_SHARE),
        ]
    if mode == "system":
        return [("system", analysis, SYSTEM_WEIGHTS, 1.0)]
    return [("user", analysis, USER_WEIGHTS, 1.0)]


def dimension_breakdown(analysis: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Rows for a chart or table of the dimensions of a prompt-alignment analysis.

    Args:
        analysis: ``ScoreResult.analyze_step_result`` of this scorer.

    Returns:
        One dict per dimension and instruction source, with keys ``source``
        (``"user"`` or ``"system"``), ``dimension`` (camelCase key), ``label``,
        ``score`` (0..1), ``weight`` (within its source), ``sourceShare`` (0.7/0.3
        in both mode, else 1) and ``contribution`` = sourceShare·weight·score,
        the dimension's share of the final 0..1 score (the contributions sum to it).
    """
    rows = []
    for source, dims, weights, share in dimension_sources(analysis):
        for name in DIMENSIONS:
            score = dimension_score(dims, name)
            rows.append(
                {
                    "source": source,
                    "dimension": name,
                    "label": DIMENSION_LABELS[name],
                    "score": score,
                    "weight": weights[name],
                    "sourceShare": share,
                    "contribution": share * weights[name] * score,
                }
            )
    return rows


def _parse_options(options: Mapping[str, Any] | None) -> tuple[float, str, str, bool]:
    options = dict(options or {})
    for camel, snake in (("evaluationMode", "evaluation_mode"), ("includeConversationHistory", HISTORY_OPTION)):
        if camel in options:
            options.setdefault(snake, options.pop(camel))
    unknown = set(options) - {"scale", "evaluation_mode", "reason", HISTORY_OPTION}
    if unknown:
        raise InvalidInputError(
            f"unknown option(s) {', '.join(sorted(unknown))}; expected scale, evaluation_mode, reason, "
            f"{HISTORY_OPTION}",
            field="options",
        )
    history = options.get(HISTORY_OPTION, True)
    if not isinstance(history, bool):
        raise InvalidInputError(
            f"{HISTORY_OPTION} must be true or false, got {history!r}", field=f"options.{HISTORY_OPTION}"
        )
    scale = options.get("scale", 1.0)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise InvalidInputError(f"scale must be a finite number > 0, got {scale!r}", field="options.scale")
    mode = options.get("evaluation_mode", "both")
    if mode not in EVALUATION_MODES:
        raise InvalidInputError(
            f"evaluation_mode must be one of {', '.join(EVALUATION_MODES)}, got {mode!r}",
            field="options.evaluation_mode",
        )
    reason = options.get("reason", "composed")
    if reason not in ("composed", "judge"):
        raise InvalidInputError(f"reason must be 'composed' or 'judge', got {reason!r}", field="options.reason")
    return float(scale), mode, reason, history


def _describe_set(dims: Mapping[str, Any], against: str) -> str:
    intent = dims["intentAlignment"]
    reqs = dims["requirementsFulfillment"]["requirements"]
    unmet = [r["requirement"] for r in reqs if not r["isFulfilled"]]
    completeness = dims["completeness"]
    appropriateness = dims["responseAppropriateness"]
    parts = [
        f"it {'addresses' if intent['isAddressed'] else 'does not address'} the primary intent "
        f"of the {against} ({intent['primaryIntent'].rstrip('.')}; intent {decimal_text(intent['score'], 2)})",
        f"{len(reqs) - len(unmet)} of {len(reqs)} requirements are fulfilled"
        + (f" (unmet: {'; '.join(unmet)})" if unmet else ""),
        f"completeness is {decimal_text(completeness['score'], 2)}"
        + (f" (missing: {'; '.join(completeness['missingElements'])})" if completeness["missingElements"] else ""),
    ]
    flags = [
        name
        for name, ok in (("format", appropriateness["formatAlignment"]), ("tone", appropriateness["toneAlignment"]))
        if not ok
    ]
    parts.append(
        f"the {' and '.join(flags)} {'does' if len(flags) == 1 else 'do'} not match (appropriateness "
        f"{decimal_text(appropriateness['score'], 2)})"
        if flags
        else f"format and tone match (appropriateness {decimal_text(appropriateness['score'], 2)})"
    )
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def compose_reason(analysis: Mapping[str, Any], score: float, scale: float) -> str:
    """The reason, written from the analysis in code (no judge call); it quotes ``score``, the user and system
    scores as the dashboard's tiles write them (:func:`scorers.core.base.decimal_text`, 3 decimals: 0.645, never
    0.65 beside it) and each dimension score as its breakdown does (2 decimals, rounded half up)."""
    band = interpretation_band(score, scale)
    head = f"The score is {decimal_text(score)} out of {scale:g} ({band})"
    mode = analysis["effectiveMode"]
    if mode == "both":
        body = (
            f"Against the user prompt (70% of the score, {decimal_text(analysis['userScore'])}): "
            f"{_describe_set(analysis, 'user prompt')}. Against the system instructions (30%, "
            f"{decimal_text(analysis['systemScore'])}): {_describe_set(analysis['systemAlignment'], 'system instructions')}."
        )
    elif mode == "system":
        body = f"Against the system instructions: {_describe_set(analysis, 'system instructions')}."
    else:
        body = f"Against the user prompt: {_describe_set(analysis, 'user prompt')}."
    note = f" {analysis['note']}" if analysis.get("note") else ""
    return f"{head}. {body}{note}"


SHORT_PROMPT_CHARS = 20
"""A user prompt shorter than this, with no earlier turns, gets a warning in the result (the judge
has little to go on: "A", "yes", "continue")."""

HISTORY_OPTION = "include_conversation_history"
"""The option that shows the judge a conversation's earlier turns (Mastra's ``includeConversationHistory``)."""


class PromptAlignmentScorer:
    """Scores how well a response aligns with its prompt; build it with :func:`create_prompt_alignment_scorer`."""

    id = SCORER_ID
    name = "Prompt alignment"

    def __init__(
        self,
        settings: JudgeSettings,
        scale: float,
        evaluation_mode: str,
        reason: str,
        cache: JudgeCache | None,
        *,
        include_conversation_history: bool = True,
    ):
        self.include_conversation_history = include_conversation_history
        self.settings = settings
        self.cache = cache
        self.scale = scale
        self.evaluation_mode = evaluation_mode
        self.reason_source = reason

    @property
    def options(self) -> dict[str, Any]:
        """The options it was built with, by their catalogue names (what a run records)."""
        return {
            "scale": self.scale,
            "evaluation_mode": self.evaluation_mode,
            "reason": self.reason_source,
            HISTORY_OPTION: self.include_conversation_history,
        }

    @cached_property
    def judge(self) -> Judge:
        """The judge client, created on first use (so a missing key fails at run time, after input checks)."""
        return Judge(self.settings, self.cache)

    def _validate(self, run: RunInput) -> str:
        if not run.output.strip():
            raise MissingInputError("the response to evaluate is empty", field="output")
        has_user = bool(run.user_text.strip())
        has_system = bool(run.system_text.strip())
        mode = self.evaluation_mode
        if mode == "both" and not has_user and not has_system:
            raise MissingInputError(
                "both mode needs a user prompt or a system message, but the input has neither with text",
                field="input",
            )
        if mode == "user" and not has_user:
            raise MissingInputError(
                "user mode needs a user prompt, but the input has no user message with text",
                field="input",
            )
        if mode == "system" and not has_system:
            raise MissingInputError(
                "system mode needs at least one system message with text (input.systemMessages "
                "or a message with role 'system')",
                field="system",
            )
        if mode == "both" and not (has_user and has_system):
            return "user" if has_user else "system"
        return mode

    # Typical reply size, for cost estimates before a batch run.
    expected_completion_tokens = 700

    @property
    def judge_calls_per_run(self) -> int:
        """Judge calls one run makes: 1, or 2 when the judge writes the reason."""
        return 2 if self.reason_source == "judge" else 1

    def _messages(self, run: RunInput, effective: str) -> list[dict[str, str]]:
        # A conversation: the final user prompt is what the response answers; the earlier turns
        # are context, shown to the judge first, in order, each delimited as data (or left out).
        # The turns after it (tool calls and results) come between it and the response, as they happened.
        user_text = run.prompt_text
        after = prompts.after_prompt_block(run.after_prompt) if self.include_conversation_history else ""
        if effective == "both":
            prompt = prompts.both_mode_prompt(run.system_text, user_text, run.output, after)
        elif effective == "user":
            prompt = prompts.user_mode_prompt(user_text, run.output, after)
        else:
            prompt = prompts.system_mode_prompt(run.system_text, user_text, run.output, after)
        if run.history and self.include_conversation_history:
            prompt = prompts.history_block(run.history) + "\n\n" + prompt
        return [{"role": "system", "content": prompts.INSTRUCTIONS}, {"role": "user", "content": prompt}]

    def render_prompt(self, payload: dict[str, Any] | RunInput) -> list[dict[str, str]]:
        """The chat messages the judge receives for ``payload`` (for previews and estimates).

        Raises:
            InvalidInputError: as for :meth:`run`.
        """
        run = normalize_run(payload)
        return self._messages(run, self._validate(run))

    @staticmethod
    def dimension_scores(analysis: Mapping[str, Any]) -> dict[str, float]:
        """The 0..1 dimension scores of a result, named ``user.<dim>`` / ``system.<dim>``."""
        return {
            f"{source}.{name}": dimension_score(dims, name)
            for source, dims, *_ in dimension_sources(analysis)
            for name in DIMENSIONS
        }

    def run(self, payload: dict[str, Any] | RunInput) -> ScoreResult:
        """Score one run.

        Args:
            payload: a seed-shaped run (see :func:`scorers.core.base.normalize_run`).

        Returns:
            A :class:`ScoreResult` whose ``score`` is ``round_half_up(W × scale, 2)``
            in [0, scale], with W the weighted sum of SPEC §1.1 for the mode.

        Raises:
            InvalidInputError: before any judge call, when the mode's inputs are missing
                or the response is empty.
            JudgeConfigError, JudgeError subclasses: see :meth:`scorers.core.judge.Judge.complete`.
        """
        run = normalize_run(payload)
        effective = self._validate(run)
        messages = self._messages(run, effective)
        if effective == "both":
            reply = self.judge.complete(messages, BothAnalysis, schema_name="prompt_alignment_both")
            parsed = reply.parsed
            assert isinstance(parsed, BothAnalysis)
            user_dims = parsed.user.model_dump()
            system_dims = parsed.system.model_dump()
            user_score = weighted_sum(user_dims, USER_WEIGHTS)
            system_score = weighted_sum(system_dims, SYSTEM_WEIGHTS)
            weighted = math.fsum((BOTH_USER_SHARE * user_score, BOTH_SYSTEM_SHARE * system_score))
            analysis: dict[str, Any] = {
                **user_dims,
                "overallAssessment": parsed.overallAssessment,
                "systemAlignment": system_dims,
                "userScore": user_score,
                "systemScore": system_score,
            }
        else:
            reply = self.judge.complete(messages, SingleAnalysis, schema_name=f"prompt_alignment_{effective}")
            dims = reply.parsed.model_dump()
            weighted = weighted_sum(dims, USER_WEIGHTS if effective == "user" else SYSTEM_WEIGHTS)
            analysis = {
                **dims,
                "userScore": weighted if effective == "user" else None,
                "systemScore": weighted if effective == "system" else None,
            }
        score = round_half_up(weighted * self.scale, 2)
        note = None
        if self.evaluation_mode == "both" and effective == "user":
            note = "No system message was given, so the run was scored in user mode; no system score was invented."
        short = len(run.prompt_text.strip())
        if effective != "system" and short < SHORT_PROMPT_CHARS and not run.conversation:
            warning = (
                f"The user prompt is very short ({short} characters) and the run has no earlier turns: the judge "
                "sees no context, so its scores may mean little. Give the whole conversation if there was one."
            )
        else:
            warning = None
        if self.evaluation_mode == "both" and effective == "system":
            note = "No user message was given, so the run was scored in system mode; no user score was invented."
        analysis = {
            "evaluationMode": self.evaluation_mode,
            "effectiveMode": effective,
            **analysis,
            "weightedScore": weighted,
            "scale": self.scale,
            "note": note,
            "warning": warning,
            "conversationTurns": len(run.history + run.after_prompt) if self.include_conversation_history else 0,
        }
        if self.reason_source == "judge":
            return self._with_judge_reason(analysis, score, reply.info)
        reason = compose_reason(analysis, score, self.scale)
        return ScoreResult(scorer=self.id, score=score, reason=reason, analyze_step_result=analysis, judge=reply.info)

    def _with_judge_reason(self, analysis: dict[str, Any], score: float, info: JudgeInfo) -> ScoreResult:
        """The result with the reason written by a second judge call (the score is given, never judged again).

        Raises:
            FollowUpRateLimitedError: the reason call was rate limited while :data:`FOLLOW_UPS_RETRIED` is set
                (the runner then retries only that call after its shared pause).
        """
        messages = [
            {"role": "system", "content": prompts.INSTRUCTIONS},
            {"role": "user", "content": prompts.reason_prompt(score, self.scale, analysis)},
        ]
        try:
            reply = self.judge.complete(messages, JudgeReason, schema_name="prompt_alignment_reason")
        except JudgeError as exc:
            # The score and its analysis stand (the first call made them); only the reason is missing.
            # The judge's error messages never carry the API key.
            spent = exc.usage if exc.usage is not None else JudgeUsage()
            info = replace(info, usage=info.usage + spent, cached=False)
            reason = (
                f"The score is {decimal_text(score)} out of {self.scale:g}. The judge could not write the reason "
                f"({exc.status.value}): {exc}"
            )
            if isinstance(exc, RateLimitedError):
                reason += (
                    " The score stands. To get the reason, score this item again once the rate limit allows "
                    "(with the judge cache on, the scoring call is answered from the cache: only the reason is asked)."
                )
            result = ScoreResult(scorer=self.id, score=score, reason=reason, analyze_step_result=analysis, judge=info)
            if isinstance(exc, RateLimitedError) and FOLLOW_UPS_RETRIED.get():
                raise FollowUpRateLimitedError(
                    f"the judge-written reason: {exc}",
                    result=result,
                    follow_up=lambda: self._with_judge_reason(analysis, score, info),
                    retry_after=exc.retry_after,
                    quota=exc.quota,
                ) from exc
            return result
        reason = reply.parsed.reason.strip()
        if decimal_text(score) not in reason:
            # The judge wrote a reason without the score as the tiles write it (0.840, not 0.84): state it, so
            # reason and score agree.
            reason = f"The score is {decimal_text(score)} out of {self.scale:g}. {reason}"
        merged = replace(info, usage=info.usage + reply.usage, cached=info.cached and reply.info.cached)
        return ScoreResult(scorer=self.id, score=score, reason=reason, analyze_step_result=analysis, judge=merged)


def create_prompt_alignment_scorer(
    model: str | None = None,
    options: Mapping[str, Any] | None = None,
    *,
    settings: JudgeSettings | None = None,
    cache: JudgeCache | None = None,
) -> PromptAlignmentScorer:
    """Create the LLM-judged prompt-alignment scorer (Mastra's ``createPromptAlignmentScorerLLM``).

    The judge returns four dimension scores in [0, 1]; the code combines them
    (SPEC §1.1, weights from the seed):

    - user mode: W = 0.40·intent + 0.30·requirements + 0.20·completeness + 0.10·appropriateness
    - system mode: W = 0.35·intent + 0.35·requirements + 0.15·completeness + 0.15·appropriateness
    - both mode: W = 0.7·U + 0.3·S, U and S judged separately against the user prompt and the
      system messages (one judge call returns both sets); with no system message, user mode,
      and with only system messages, system mode (a symmetric fallback; the note says so).
    - score = round_half_up(W × scale, 2).

    Args:
        model: ``"openai/gpt-4o-mini"`` or a bare model name; overrides ``settings.model``.
        options: ``scale`` (finite number > 0, default 1), ``evaluation_mode``
            (or ``evaluationMode``: ``"user" | "system" | "both"``, default ``"both"``) and
            ``reason`` (``"composed"``, default: written in code from the analysis with no
            further call; ``"judge"``: a second judge call writes it; when that call fails the result
            is still scored and its reason says the judge could not write it, and why; in a run
            (:func:`scorers.run_evals`) a rate-limited reason call is retried alone after the run's pause) and
            ``include_conversation_history`` (or ``includeConversationHistory``, default True:
            a conversation's earlier turns are shown to the judge, in order, before the final
            user prompt; False: only the final user prompt). The scored response is the final
            assistant message. A prompt shorter than :data:`SHORT_PROMPT_CHARS` with no earlier
            turns gets ``analysis["warning"]``.
        settings: the judge settings; default :func:`~scorers.core.judge.resolve_judge_settings`.
        cache: a judge-reply cache such as :class:`scorers.runs.store.Store`; None for none.

    Returns:
        The scorer; ``run(payload)`` returns a :class:`~scorers.core.base.ScoreResult`.

    Raises:
        InvalidInputError: unknown option, or scale/evaluation_mode/reason out of range.
    """
    scale, mode, reason, history = _parse_options(options)
    settings = settings or resolve_judge_settings(model=model)
    if model:
        settings = replace(settings, model=model)
    return PromptAlignmentScorer(settings, scale, mode, reason, cache, include_conversation_history=history)
