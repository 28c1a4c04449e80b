"""Rubric judges: a G-Eval style score on a stated scale, and Mastra's all-or-nothing checklist.

- :func:`create_rubric_scorer` (G-Eval): criteria and evaluation steps; the judge
  follows the steps, writes a finding per step and gives an integer score on
  [scale_min, scale_max]; the code normalises it to (s − min) / (max − min). When no
  steps are given the judge writes them once, on the first run; they are kept on the
  scorer (``scorer.evaluation_steps``) and in every result, so every later run uses
  the same steps and makes one call.
- :func:`create_checklist_rubric_scorer` (Mastra's rubric): one satisfied/not verdict
  per criterion; scale if every required criterion is satisfied (every criterion when
  none is marked required), else 0. One call.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints, create_model, model_validator

from scorers.catalogue.metrics._llm import (
    SCALE_OPTION,
    JudgedScorer,
    Option,
    StrictModel,
    exactly,
    integer,
    merge_info,
    numbered_list_model,
    read_options,
    require_text,
    resolve_settings,
    system_message,
    text,
    text_list,
)
from scorers.catalogue.spec import SCALE, OptionSpec, ScorerSpec
from scorers.core.base import JudgeInfo, RunInput, ScoreResult, decimal_text, normalize_run
from scorers.core.errors import InvalidInputError
from scorers.core.judge import JudgeCache, JudgeSettings, delimit, spent_before

RUBRIC_ID = "rubric"
CHECKLIST_ID = "checklist-rubric"
MAX_STEPS = 8

ROLE = (
    "You are a rigorous, consistent evaluator of AI assistant responses. You apply the given evaluation "
    "criteria exactly as written, follow the evaluation steps in order, and base every finding on evidence "
    "from the texts."
)


def run_texts(run: RunInput) -> str:
    """The run's texts for a rubric judge, each delimited: input, response, reference answer, context."""
    parts = []
    if run.user_text.strip():
        parts.append(delimit("input", run.user_text))
    parts.append(delimit("response", run.output))
    if run.ground_truth and run.ground_truth.strip():
        parts.append(delimit("reference_answer", run.ground_truth))
    if any(c.strip() for c in run.context):
        parts.append(delimit("context", "\n\n".join(c for c in run.context if c.strip())))
    return "\n\n".join(parts)


# ----------------------------------------------------------------------------- G-Eval rubric


class EvaluationSteps(StrictModel):
    """The judge-written evaluation steps (first run only, when none are given)."""

    steps: Annotated[
        list[Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]],
        Field(min_length=1, max_length=MAX_STEPS),
    ] = Field(description="Concrete evaluation steps, in order, each one imperative sentence.")


class StepFinding(StrictModel):
    """What the judge found at one evaluation step (``index`` 1-based, in order)."""

    index: int
    finding: str = Field(description="What this step found in the texts, with evidence.")


class _RubricJudgement(StrictModel):
    @model_validator(mode="after")
    def _one_finding_per_step(self) -> _RubricJudgement:
        numbers = [f.index for f in self.stepFindings]  # type: ignore[attr-defined]
        if numbers != list(range(1, len(numbers) + 1)):
            raise ValueError(
                f"stepFindings must have one entry per step, numbered 1..{len(numbers)} in order; got {numbers}"
            )
        return self


@functools.lru_cache(maxsize=64)
def judgement_model(scale_min: int, scale_max: int, n_steps: int) -> type[BaseModel]:
    """The scoring call's schema, in answer order: one finding per step (numbered 1..n), the reasoning, then
    an integer score in [scale_min, scale_max] (findings first, so the score follows from them)."""
    return create_model(
        f"RubricJudgement{scale_min}to{scale_max}x{n_steps}",
        __base__=_RubricJudgement,
        stepFindings=(exactly(StepFinding, n_steps), Field(description="One finding per evaluation step, in order.")),
        reasoning=(str, Field(description="Two or three sentences that justify the score from the findings.")),
        score=(
            Annotated[int, Field(ge=scale_min, le=scale_max)],
            Field(description=f"An integer from {scale_min} (fails the criteria) to {scale_max} (fully meets them)."),
        ),
    )


def steps_prompt(criteria: str) -> str:
    """The prompt that asks the judge to write the evaluation steps for ``criteria`` (no run data)."""
    return (
        f"{delimit('criteria', criteria)}\n\n"
        f"Write between 3 and {MAX_STEPS} evaluation steps that an evaluator will follow to judge how well a "
        "response meets these criteria. The evaluator will see the user's input, the response, and when "
        "available a reference answer and context. Each step is one imperative sentence that names what to "
        "check and in which text; order them from the most to the least important; do not score yet."
    )


def rubric_prompt(criteria: str, steps: Sequence[str], run: RunInput, scale_min: int, scale_max: int) -> str:
    """The scoring prompt: criteria, numbered steps, the run's texts and the scale."""
    numbered = "\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1))
    return (
        f"{delimit('criteria', criteria)}\n\n{delimit('evaluation_steps', numbered)}\n\n{run_texts(run)}\n\n"
        f"Follow the evaluation steps in order and write a finding for each (stepFindings, index 1..{len(steps)}). "
        f"Then give score: an integer from {scale_min} (the response does not meet the criteria at all) to "
        f"{scale_max} (it fully meets them), and a short reasoning that justifies it from the findings."
    )


class RubricScorer(JudgedScorer):
    """A G-Eval style rubric judge; build it with :func:`create_rubric_scorer`."""

    id = RUBRIC_ID
    name = "Rubric (G-Eval)"
    schema_name = "rubric_score"
    expected_completion_tokens = 400

    def __init__(
        self,
        settings: JudgeSettings,
        cache: JudgeCache | None,
        scale: float,
        criteria: str,
        steps: tuple[str, ...],
        scale_min: int,
        scale_max: int,
    ):
        super().__init__(settings, cache, scale)
        self.criteria = criteria
        self.scale_min = scale_min
        self.scale_max = scale_max
        self._steps: tuple[str, ...] | None = steps or None
        self.steps_source = "given" if steps else "generated"
        self._steps_lock = threading.Lock()

    @property
    def evaluation_steps(self) -> tuple[str, ...] | None:
        """The evaluation steps every run uses: the given ones, the judge-written ones, or None before the first run."""
        return self._steps

    def generate_steps(self) -> tuple[str, ...]:
        """The evaluation steps, asking the judge to write them if this scorer has none yet (one call, once).

        Thread-safe: concurrent first runs share one generation call.

        Raises:
            JudgeConfigError, JudgeError subclasses: see :meth:`scorers.core.judge.Judge.complete`.
        """
        return self._ensure_steps()[0]

    def _ensure_steps(self) -> tuple[tuple[str, ...], JudgeInfo | None]:
        with self._steps_lock:
            if self._steps is not None:
                return self._steps, None
            messages = [system_message(ROLE), {"role": "user", "content": steps_prompt(self.criteria)}]
            reply = self.judge.complete(messages, EvaluationSteps, schema_name="rubric_steps")
            steps = tuple(reply.parsed.steps)  # type: ignore[attr-defined]
            self._steps = steps
            return steps, reply.info

    @property
    def judge_calls_per_run(self) -> int:  # type: ignore[override]
        """1 (the first run makes 2 when the scorer still has to write its evaluation steps)."""
        return 1 if self._steps is not None else 2

    def _validate(self, run: RunInput) -> None:
        require_text(run.output, "output", "the response to evaluate")

    def _messages(self, run: RunInput) -> list[dict[str, str]]:
        if self._steps is None:  # a preview before the first run: the step-writing prompt comes first
            return [system_message(ROLE), {"role": "user", "content": steps_prompt(self.criteria)}]
        return self._score_messages(run, self._steps)

    def _score_messages(self, run: RunInput, steps: Sequence[str]) -> list[dict[str, str]]:
        prompt = rubric_prompt(self.criteria, steps, run, self.scale_min, self.scale_max)
        return [system_message(ROLE), {"role": "user", "content": prompt}]

    def run(self, payload: dict[str, Any] | RunInput) -> ScoreResult:
        """Score one run: (s − scale_min) / (scale_max − scale_min) × scale, rounded half up to 2 decimals.

        Raises:
            InvalidInputError: before any judge call, when the response is empty.
            JudgeConfigError, JudgeError subclasses: see :meth:`scorers.core.judge.Judge.complete`.
        """
        run = normalize_run(payload)
        self._validate(run)
        steps, steps_info = self._ensure_steps()
        model = judgement_model(self.scale_min, self.scale_max, len(steps))
        with spent_before(steps_info.usage if steps_info is not None else None):
            reply = self.judge.complete(self._score_messages(run, steps), model, schema_name=self.schema_name)
        parsed: Any = reply.parsed
        normalized = (parsed.score - self.scale_min) / (self.scale_max - self.scale_min)
        analysis = {
            "criteria": self.criteria,
            "evaluationSteps": list(steps),
            "stepsSource": self.steps_source,
            "stepsWrittenThisRun": steps_info is not None,
            "stepFindings": [
                {"step": s, "finding": f.finding} for s, f in zip(steps, parsed.stepFindings, strict=True)
            ],
            "judgeScore": parsed.score,
            "scaleMin": self.scale_min,
            "scaleMax": self.scale_max,
            "reasoning": parsed.reasoning,
        }

        def reason(score: float) -> str:
            return (
                f"The score is {decimal_text(score)} out of {self.scale:g}: the judge gave {parsed.score} on the "
                f"{self.scale_min}–{self.scale_max} scale, normalised to ({parsed.score} − {self.scale_min}) / "
                f"({self.scale_max} − {self.scale_min}) = {normalized:.2f}. {parsed.reasoning.strip()}"
            )

        info = reply.info if steps_info is None else merge_info(steps_info, reply.info)
        return self.finish(normalized, analysis, reason, info)


def create_rubric_scorer(
    criteria: str | None = None,
    evaluation_steps: Sequence[str] | None = None,
    scale_min: int | None = None,
    scale_max: int | None = None,
    *,
    model: str | None = None,
    options: Mapping[str, Any] | None = None,
    settings: JudgeSettings | None = None,
    cache: JudgeCache | None = None,
    **keyword_options: Any,
) -> RubricScorer:
    """Create a G-Eval style rubric judge: criteria (+ evaluation steps) → a score on a stated scale.

    score = round_half_up((s − scale_min) / (scale_max − scale_min) × scale, 2), with s the
    judge's integer score in [scale_min, scale_max]. Without ``evaluation_steps`` the judge
    writes them once (the first run makes 2 calls, every later run 1); read them from
    ``scorer.evaluation_steps`` or ``analyze_step_result["evaluationSteps"]`` and pass them
    back to reproduce the scorer exactly. :meth:`RubricScorer.generate_steps` writes them
    up front.

    Args:
        criteria: what a good response does, in plain words (required, here or in ``options``).
        evaluation_steps: the steps the judge follows, in order (at most 8); None to let the judge write them.
        scale_min: the lowest score, a whole number (default 1).
        scale_max: the highest score, a whole number > scale_min (default 5).
        model: ``"openai/gpt-4o-mini"`` or a bare model name; overrides ``settings.model``.
        options: any of ``criteria``, ``evaluation_steps``, ``scale_min``, ``scale_max`` and
            ``scale`` (finite number > 0, default 1); camelCase accepted. Explicit arguments
            and keyword options win over it.
        settings: judge settings; default :func:`~scorers.core.judge.resolve_judge_settings`.
        cache: a judge-reply cache such as :class:`scorers.runs.store.Store`; None for none.

    Raises:
        InvalidInputError: missing criteria, too many steps, scale_min ≥ scale_max, an unknown
            option or a value out of range (naming the option).
    """
    explicit = {
        "criteria": criteria,
        "evaluation_steps": evaluation_steps,
        "scale_min": scale_min,
        "scale_max": scale_max,
    }
    opts = read_options(
        options,
        {**keyword_options, **{k: v for k, v in explicit.items() if v is not None}},
        {
            "criteria": Option("", text(required=True), required=True),
            "evaluation_steps": Option((), text_list),
            "scale_min": Option(1, integer),
            "scale_max": Option(5, integer),
            "scale": SCALE_OPTION,
        },
    )
    if len(opts["evaluation_steps"]) > MAX_STEPS:
        raise InvalidInputError(
            f"at most {MAX_STEPS} evaluation steps, got {len(opts['evaluation_steps'])}",
            field="options.evaluation_steps",
        )
    if opts["scale_min"] >= opts["scale_max"]:
        raise InvalidInputError(
            f"scale_max ({opts['scale_max']}) must be greater than scale_min ({opts['scale_min']})",
            field="options.scale_max",
        )
    return RubricScorer(
        resolve_settings(model, settings),
        cache,
        opts["scale"],
        opts["criteria"].strip(),
        opts["evaluation_steps"],
        opts["scale_min"],
        opts["scale_max"],
    )


# ----------------------------------------------------------------------------- checklist rubric (Mastra's)


class CriterionVerdict(StrictModel):
    """Whether the response satisfies criterion ``index`` (1-based, in the given order)."""

    index: int
    satisfied: bool
    reasoning: str = Field(description="One sentence with the evidence.")


class _Checklist(StrictModel):
    pass


def checklist_model(n: int) -> type[BaseModel]:
    """The checklist call's schema: exactly one verdict per criterion, numbered 1..n in order."""
    return numbered_list_model(_Checklist, "criteria", CriterionVerdict, n)


def checklist_prompt(criteria: Sequence[tuple[str, bool]], run: RunInput) -> str:
    """The checklist prompt: the numbered criteria (required ones marked) and the run's texts."""
    numbered = "\n".join(
        f"{i}. {c}" + (" (required)" if required else "") for i, (c, required) in enumerate(criteria, 1)
    )
    return (
        f"{delimit('criteria', numbered)}\n\n{run_texts(run)}\n\n"
        f"For each numbered criterion, in order (index 1..{len(criteria)}), decide whether the response satisfies "
        "it (satisfied true or false) and give one sentence of evidence. Judge each criterion on its own, "
        "strictly as written; partial satisfaction is not satisfaction."
    )


def parse_criteria(value: Any, required_names: Sequence[str] = ()) -> tuple[tuple[str, bool], ...]:
    """``(criterion, required)`` pairs from strings or ``{"criterion", "required"}`` objects.

    ``required_names`` marks string criteria as required (each must be one of them).

    Raises:
        InvalidInputError: no criterion, a malformed or duplicate one, or a required name that is not a criterion.
    """
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidInputError(
            "criteria must be a list of strings or {'criterion', 'required'} objects", field="options.criteria"
        )
    pairs: list[tuple[str, bool]] = []
    for i, item in enumerate(value):
        where = f"options.criteria[{i}]"
        if isinstance(item, Mapping):
            name = item.get("criterion", item.get("description"))
            required = item.get("required", False)
            if not isinstance(required, bool):
                raise InvalidInputError("'required' must be true or false", field=f"{where}.required")
        else:
            name, required = item, False
        if not isinstance(name, str) or not name.strip():
            raise InvalidInputError("a criterion must be a non-empty string", field=where)
        if any(name.strip() == p[0] for p in pairs):
            raise InvalidInputError(f"criterion {name.strip()!r} is listed twice", field=where)
        pairs.append((name.strip(), required))
    if not pairs:
        raise InvalidInputError("criteria is required: list what the response must do", field="options.criteria")
    names = [p[0] for p in pairs]
    for i, name in enumerate(required_names):
        if name.strip() not in names:
            raise InvalidInputError(f"{name!r} is not one of the criteria", field=f"options.required_criteria[{i}]")
    marked = {n.strip() for n in required_names}
    return tuple((name, required or name in marked) for name, required in pairs)


class ChecklistRubricScorer(JudgedScorer):
    """Mastra's rubric: all required criteria satisfied or nothing; build it with :func:`create_checklist_rubric_scorer`."""

    id = CHECKLIST_ID
    name = "Checklist rubric"
    schema_name = "checklist_rubric"
    expected_completion_tokens = 300

    def __init__(
        self, settings: JudgeSettings, cache: JudgeCache | None, scale: float, criteria: tuple[tuple[str, bool], ...]
    ):
        super().__init__(settings, cache, scale)
        self.criteria = criteria
        self.output_model = checklist_model(len(criteria))

    @property
    def required_criteria(self) -> tuple[str, ...]:
        """The criteria that must all be satisfied: the marked ones, or all when none is marked."""
        marked = tuple(c for c, required in self.criteria if required)
        return marked or tuple(c for c, _ in self.criteria)

    def _validate(self, run: RunInput) -> None:
        require_text(run.output, "output", "the response to evaluate")

    def _messages(self, run: RunInput) -> list[dict[str, str]]:
        return [system_message(ROLE), {"role": "user", "content": checklist_prompt(self.criteria, run)}]

    def dimension_scores(self, analysis: Mapping[str, Any]) -> dict[str, float]:
        """1.0 or 0.0 per criterion (named ``"<i>. <criterion>"``): the share of runs that satisfy it."""
        return {f"{i}. {c['criterion']}": 1.0 if c["satisfied"] else 0.0 for i, c in enumerate(analysis["criteria"], 1)}

    def _score(self, parsed: Any, run: RunInput) -> tuple[float, dict[str, Any], Callable[[float], str]]:
        required = set(self.required_criteria)
        rows = [
            {"criterion": c, "required": c in required, "satisfied": v.satisfied, "reasoning": v.reasoning}
            for (c, _), v in zip(self.criteria, parsed.criteria, strict=True)
        ]
        failed = [r for r in rows if r["required"] and not r["satisfied"]]
        raw = 0.0 if failed else 1.0
        analysis = {
            "criteria": rows,
            "satisfiedCount": sum(r["satisfied"] for r in rows),
            "requiredCount": len(required),
            "requiredSatisfied": len(required) - len(failed),
            "allRequiredMarked": all(r for _, r in self.criteria) or not any(r for _, r in self.criteria),
        }

        def reason(score: float) -> str:
            head = f"The score is {decimal_text(score)} out of {self.scale:g}"
            satisfied = f"{analysis['satisfiedCount']} of {len(rows)} criteria are satisfied"
            if not failed:
                return f"{head}: every required criterion is satisfied ({satisfied})."
            missed = "; ".join(f'"{r["criterion"]}" ({r["reasoning"].rstrip(".")})' for r in failed)
            return f"{head}: {len(failed)} required criterion(s) not satisfied: {missed} ({satisfied})."

        return raw, analysis, reason


def create_checklist_rubric_scorer(
    criteria: Sequence[str | Mapping[str, Any]] | None = None,
    *,
    model: str | None = None,
    options: Mapping[str, Any] | None = None,
    settings: JudgeSettings | None = None,
    cache: JudgeCache | None = None,
    **keyword_options: Any,
) -> ChecklistRubricScorer:
    """Create Mastra's rubric scorer: one satisfied/not verdict per criterion, all-or-nothing.

    score = scale if every required criterion is satisfied, else 0. A criterion is required
    when marked so; when none is marked, every criterion is required. One judge call.

    Args:
        criteria: the criteria, in order: strings, or ``{"criterion": str, "required": bool}``
            objects (required, here or in ``options``).
        model: ``"openai/gpt-4o-mini"`` or a bare model name; overrides ``settings.model``.
        options: any of ``criteria``, ``required_criteria`` (names of criteria to mark
            required, for string criteria) and ``scale`` (finite number > 0, default 1);
            camelCase accepted. Explicit arguments and keyword options win over it.
        settings: judge settings; default :func:`~scorers.core.judge.resolve_judge_settings`.
        cache: a judge-reply cache such as :class:`scorers.runs.store.Store`; None for none.

    Raises:
        InvalidInputError: no criteria, a malformed or duplicate criterion, a required name
            that is not a criterion, an unknown option or a bad scale.
    """
    explicit = {"criteria": criteria} if criteria is not None else {}
    opts = read_options(
        options,
        {**keyword_options, **explicit},
        {
            "criteria": Option((), lambda value, name: value),
            "required_criteria": Option((), text_list),
            "scale": SCALE_OPTION,
        },
    )
    pairs = parse_criteria(opts["criteria"], opts["required_criteria"])
    return ChecklistRubricScorer(resolve_settings(model, settings), cache, opts["scale"], pairs)


_EXAMPLE_RUN = {
    "input": [{"role": "user", "content": "Explain what a hash map is to a beginner."}],
    "output": "A hash map stores key-value pairs. It turns each key into a number (a hash) that says where the "
    "value lives, so looking a value up is fast, like finding a word in a dictionary by its first "
    "letters.",
}

SPECS = (
    ScorerSpec(
        id=RUBRIC_ID,
        name="Rubric (G-Eval)",
        uses_judge=True,
        judge_calls=1,
        inputs=("output", "input", "ground_truth (optional)", "context (optional)"),
        measures="How well the response meets your criteria, scored by the judge on a stated scale after "
        "following evaluation steps (G-Eval).",
        formula="round2((s − scale_min) / (scale_max − scale_min) × scale), s the judge's integer score",
        score_range="0..1",
        higher_is_better=True,
        options=(
            OptionSpec("criteria", "Criteria", "text", "", help="Required. What a good response does."),
            OptionSpec(
                "evaluation_steps",
                "Evaluation steps",
                "list",
                (),
                help="Optional, at most 8. Left empty, the judge writes them once on the first run and "
                "every later run reuses them.",
            ),
            OptionSpec("scale_min", "Lowest score", "number", 1, help="A whole number."),
            OptionSpec("scale_max", "Highest score", "number", 5, help="A whole number greater than the lowest."),
            SCALE,
        ),
        build=lambda o, s, c: create_rubric_scorer(options=o, settings=s, cache=c),
        example={
            **_EXAMPLE_RUN,
            "options": {
                "criteria": "Clarity for a beginner: plain words, a concrete analogy, no unexplained jargon.",
                "evaluation_steps": [
                    "Check that every technical term is explained in plain words.",
                    "Check for a concrete analogy or example.",
                    "Check that the explanation is correct.",
                ],
                "scale_min": 1,
                "scale_max": 5,
            },
        },
        notes=(
            "Not in Mastra's catalogue: a G-Eval style judge. One call per run; without evaluation steps the first "
            "run makes one more call to write them, and they are stored on the scorer and in every result "
            '(stepsSource "generated") so later runs use the same ones. The judge\'s score must be an integer '
            "in [scale_min, scale_max] and it must give one finding per step, in order; anything else is invalid "
            "judge output (re-asked once). G-Eval's probability-weighted score is not used (not every "
            "OpenAI-compatible server returns log-probabilities). Empty response → invalid input."
        ),
    ),
    ScorerSpec(
        id=CHECKLIST_ID,
        name="Checklist rubric",
        uses_judge=True,
        judge_calls=1,
        inputs=("output", "input", "ground_truth (optional)", "context (optional)"),
        measures="Whether the response satisfies every required criterion of a checklist (Mastra's rubric).",
        formula="scale if every required criterion is satisfied (every criterion when none is marked), else 0",
        score_range="0 or 1",
        higher_is_better=True,
        options=(
            OptionSpec("criteria", "Criteria", "list", (), help="Required. One criterion per line."),
            OptionSpec(
                "required_criteria",
                "Required criteria",
                "list",
                (),
                help="Criteria (copied exactly) that must be satisfied; empty = all of them.",
            ),
            SCALE,
        ),
        build=lambda o, s, c: create_checklist_rubric_scorer(options=o, settings=s, cache=c),
        example={
            **_EXAMPLE_RUN,
            "options": {
                "criteria": ["Defines a hash map as key-value storage", "Uses an analogy", "Mentions collisions"],
                "required_criteria": ["Defines a hash map as key-value storage", "Uses an analogy"],
            },
        },
        notes=(
            "Mastra's rubric rule, one call; the reason is written in code and names each unmet required criterion. "
            "Which criteria are required is configured, not judged. The judge must give exactly one verdict per "
            "criterion, in order (satisfied: a JSON boolean); anything else is invalid judge output (re-asked "
            "once). Empty response → invalid input."
        ),
    ),
)
