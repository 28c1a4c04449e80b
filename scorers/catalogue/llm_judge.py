"""Custom LLM judges (SPEC §1.3) and the seeds' gluten checker built on them.

A judge is: instructions (the judge's role), a prompt template over the run's
fields, an output schema, a rule that turns the judge's structured answer into
a score, and a reason. The judge only analyses; the score is computed in code.
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from scorers.core.base import RunInput, ScoreResult, decimal_text, normalize_run, round_half_up
from scorers.core.errors import InvalidInputError, JudgeOutputInvalidError
from scorers.core.judge import DATA_NOTICE, Judge, JudgeCache, JudgeSettings, delimit, resolve_judge_settings

# Placeholder -> the tag its value is wrapped in when rendered (see judge.delimit).
PLACEHOLDERS = {
    "input": "input",
    "output": "response",
    "ground_truth": "ground_truth",
    "system": "system_instructions",
}

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _position(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


def template_placeholders(template: str) -> list[str]:
    """Validate a judge prompt template and return the placeholders it uses, in order of first use.

    Placeholders are ``{input}``, ``{output}``, ``{ground_truth}`` and ``{system}``.
    Other braces are literal text, so a JSON example such as
    ``{"isGlutenFree": false}`` needs no escaping; write ``{{name}}`` for a literal
    ``{name}`` that would otherwise read as a placeholder.

    Args:
        template: the prompt template.

    Returns:
        The placeholder names used, e.g. ``["output"]``.

    Raises:
        InvalidInputError: an unknown placeholder (named, with its line and column),
            or a template that uses no placeholder at all.

    >>> template_placeholders('Recipe: {output}. Reply {"ok": true}')
    ['output']
    """
    used: list[str] = []
    for match in _TOKEN.finditer(template):
        name = match.group(1)
        if name is None:
            continue
        if name not in PLACEHOLDERS:
            raise InvalidInputError(
                f"unknown placeholder {{{name}}} at {_position(template, match.start())}; "
                f"use one of {', '.join('{' + p + '}' for p in PLACEHOLDERS)}, or write "
                f"{{{{{name}}}}} for literal braces",
                field="prompt_template",
            )
        if name not in used:
            used.append(name)
    if not used:
        raise InvalidInputError(
            "the template uses no placeholder, so the judge would never see the run; "
            "add {output} (the response) and any of {input}, {ground_truth}, {system}",
            field="prompt_template",
        )
    return used


def render_template(template: str, values: Mapping[str, str]) -> str:
    """Fill a validated template in one pass; each value is wrapped as delimited data.

    Values are never re-scanned, so a response that contains ``{input}`` stays literal.
    """

    def fill(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        name = match.group(1)
        return delimit(PLACEHOLDERS[name], values[name])

    return _TOKEN.sub(fill, template)


_JSON_TYPES: dict[str, Any] = {"boolean": bool, "number": float, "integer": int, "string": str}


def model_from_json_schema(schema: Mapping[str, Any], name: str = "JudgeOutput") -> type[BaseModel]:
    """Build a strict pydantic model from a flat JSON schema of the judge's answer.

    Supported: an object whose properties are boolean, number or integer (with
    optional ``minimum``/``maximum``), string (optional ``enum``), or an array of
    those; ``required`` (default: all properties).

    Raises:
        InvalidInputError: for any other construct, naming the property.
    """
    if schema.get("type") != "object" or not isinstance(schema.get("properties"), Mapping) or not schema["properties"]:
        raise InvalidInputError("the output schema must be an object with at least one property", field="output_schema")
    required = set(schema.get("required", schema["properties"]))
    fields: dict[str, Any] = {}
    for prop, spec in schema["properties"].items():
        where = f"output_schema.properties.{prop}"
        if not isinstance(spec, Mapping):
            raise InvalidInputError("expected a schema object", field=where)
        kind = spec.get("type")
        if kind == "array":
            item_kind = (spec.get("items") or {}).get("type")
            if item_kind not in _JSON_TYPES:
                raise InvalidInputError(f"unsupported array item type {item_kind!r}", field=where)
            annotation: Any = list[_JSON_TYPES[item_kind]]
        elif kind in _JSON_TYPES:
            annotation = _JSON_TYPES[kind]
        else:
            raise InvalidInputError(
                f"unsupported type {kind!r}; use boolean, number, integer, string or array", field=where
            )
        constraints: dict[str, Any] = {"description": spec.get("description")}
        if "minimum" in spec:
            constraints["ge"] = spec["minimum"]
        if "maximum" in spec:
            constraints["le"] = spec["maximum"]
        if "enum" in spec:
            if kind != "string":
                raise InvalidInputError("enum is supported on strings only", field=where)
            constraints["pattern"] = "^(" + "|".join(re.escape(v) for v in spec["enum"]) + ")$"
        default = ... if prop in required else None
        if default is None:
            annotation = annotation | None
        fields[prop] = (annotation, Field(default, **constraints))
    config = ConfigDict(strict=True, allow_inf_nan=False, extra="ignore", frozen=True)
    return create_model(name, __config__=config, **fields)


ScoreRule = Callable[[dict[str, Any]], float]
ReasonRule = Callable[[dict[str, Any], float], str]


class LLMJudgeScorer:
    """A custom LLM judge; build it with :func:`create_llm_judge_scorer`."""

    def __init__(
        self,
        *,
        id: str,
        name: str,
        instructions: str,
        prompt_template: str,
        output_model: type[BaseModel],
        score: ScoreRule,
        reason: ReasonRule | str | None,
        scale: float,
        settings: JudgeSettings,
        cache: JudgeCache | None = None,
    ):
        self.id = id
        self.name = name
        self.instructions = instructions
        self.prompt_template = prompt_template
        self.placeholders = template_placeholders(prompt_template)
        self.output_model = output_model
        self.score_rule = score
        self.reason_rule = reason
        self.scale = scale
        self.settings = settings
        self.cache = cache

    @cached_property
    def judge(self) -> Judge:
        """The judge client, created on first use."""
        return Judge(self.settings, self.cache)

    def _values(self, run: RunInput) -> dict[str, str]:
        values = {
            "input": run.user_text,
            "output": run.output,
            "ground_truth": run.ground_truth or "",
            "system": run.system_text,
        }
        for name, where in (("output", "output"), ("input", "input"), ("ground_truth", "ground_truth")):
            if name in self.placeholders and not values[name].strip():
                raise InvalidInputError(
                    f"the judge {self.name!r} uses {{{name}}}, but the run's {name.replace('_', ' ')} is empty",
                    field=where,
                )
        return values

    # Typical reply size, for cost estimates before a batch run.
    expected_completion_tokens = 150
    judge_calls_per_run = 1

    def render_prompt(self, payload: dict[str, Any] | RunInput) -> list[dict[str, str]]:
        """The chat messages the judge receives for ``payload`` (for previews and tests).

        Raises:
            InvalidInputError: a field the template uses is empty or missing.
        """
        run = normalize_run(payload)
        return [
            {"role": "system", "content": f"{self.instructions}\n\n{DATA_NOTICE}"},
            {"role": "user", "content": render_template(self.prompt_template, self._values(run))},
        ]

    def run(self, payload: dict[str, Any] | RunInput) -> ScoreResult:
        """Judge one run and score it with the score rule.

        Returns:
            A :class:`ScoreResult`: ``score`` = round_half_up(rule(analysis) × scale, 2),
            ``analyze_step_result`` = the judge's validated answer, ``details["rawReply"]``
            = the judge's text.

        Raises:
            InvalidInputError: a field the template uses is empty.
            JudgeOutputInvalidError: the score rule gave a value outside [0, 1] or not finite.
            JudgeConfigError, JudgeError subclasses: see :meth:`scorers.core.judge.Judge.complete`.
        """
        messages = self.render_prompt(payload)
        schema_name = re.sub(r"[^A-Za-z0-9_-]", "_", self.id)[:64]
        reply = self.judge.complete(messages, self.output_model, schema_name=schema_name)
        analysis = reply.parsed.model_dump()
        raw_score = self.score_rule(analysis)
        if (
            isinstance(raw_score, bool)
            or not isinstance(raw_score, (int, float))
            or not math.isfinite(raw_score)
            or not 0 <= raw_score <= 1
        ):
            raise JudgeOutputInvalidError(
                f"the score rule of {self.name!r} gave {raw_score!r} (expected a number in [0, 1]) "
                f"from the judge's answer {analysis}",
                raw_reply=reply.raw,
            )
        score = round_half_up(raw_score * self.scale, 2)
        return ScoreResult(
            scorer=self.id,
            score=score,
            reason=self._reason(analysis, score),
            analyze_step_result=analysis,
            judge=reply.info,
            details={"rawReply": reply.raw},
        )

    def _reason(self, analysis: dict[str, Any], score: float) -> str:
        if callable(self.reason_rule):
            return self.reason_rule(analysis, score)
        fields = {k: ", ".join(map(str, v)) if isinstance(v, list) else v for k, v in analysis.items()}
        if isinstance(self.reason_rule, str):
            return self.reason_rule.format_map({**fields, "score": score})
        listed = "; ".join(f"{k}: {v}" for k, v in fields.items())
        return f"The score is {decimal_text(score)} out of {self.scale:g}. The judge found {listed}."


def _check_reason_template(reason: str, fields: set[str]) -> None:
    for _, name, _, _ in string.Formatter().parse(reason):
        if name is not None and name not in fields | {"score"}:
            raise InvalidInputError(
                f"the reason template uses {{{name}}}, which is not an output field; "
                f"use one of {', '.join(sorted(fields | {'score'}))}",
                field="reason",
            )


def create_llm_judge_scorer(
    *,
    name: str,
    instructions: str,
    prompt_template: str,
    output_schema: type[BaseModel] | Mapping[str, Any],
    score: ScoreRule,
    reason: ReasonRule | str | None = None,
    id: str | None = None,
    model: str | None = None,
    scale: float = 1.0,
    settings: JudgeSettings | None = None,
    cache: JudgeCache | None = None,
) -> LLMJudgeScorer:
    """Define a custom LLM judge (the seeds' ``MastraAgentJudge`` + metric, as one scorer).

    Args:
        name: display name, e.g. ``"Gluten checker"``.
        instructions: the judge's role (its system message); the data notice that
            tells it to treat the run's texts as data is appended.
        prompt_template: the prompt with ``{input}``, ``{output}``, ``{ground_truth}``
            and ``{system}`` placeholders; other braces are literal (see
            :func:`template_placeholders`).
        output_schema: a pydantic model (validated as written; make it strict) or a
            flat JSON schema (see :func:`model_from_json_schema`).
        score: maps the judge's answer (a dict) to a score in [0, 1].
        reason: maps (answer, score) to the reason, or a ``str.format`` template over
            the answer's fields and ``{score}``; None lists the fields.
        id: the scorer id; default: ``name`` lower-cased with dashes.
        model: judge model; overrides ``settings.model``.
        scale: multiplies the 0..1 score; a finite number > 0.
        settings: judge settings; default :func:`~scorers.core.judge.resolve_judge_settings`.
        cache: a judge-reply cache such as :class:`scorers.runs.store.Store`; None for none.

    Returns:
        The scorer.

    Raises:
        InvalidInputError: an unknown placeholder, an unsupported schema, a reason
            template naming an unknown field, a bad scale, or an empty name/instructions.
    """
    if not name.strip():
        raise InvalidInputError("a judge needs a name", field="name")
    if not instructions.strip():
        raise InvalidInputError("a judge needs instructions (its role)", field="instructions")
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise InvalidInputError(f"scale must be a finite number > 0, got {scale!r}", field="scale")
    if isinstance(output_schema, type) and issubclass(output_schema, BaseModel):
        output_model = output_schema
    elif isinstance(output_schema, Mapping):
        output_model = model_from_json_schema(output_schema)
    else:
        raise InvalidInputError("expected a pydantic model class or a JSON schema dict", field="output_schema")
    if isinstance(reason, str):
        _check_reason_template(reason, set(output_model.model_fields))
    settings = settings or resolve_judge_settings(model=model)
    if model:
        settings = replace(settings, model=model)
    return LLMJudgeScorer(
        id=id or re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-"),
        name=name,
        instructions=instructions,
        prompt_template=prompt_template,
        output_model=output_model,
        score=score,
        reason=reason,
        scale=float(scale),
        settings=settings,
        cache=cache,
    )


# The seeds' gluten checker (Mastra's custom-eval example), on the custom-judge API.
GLUTEN_INSTRUCTIONS = "You are a Master Chef that identifies if recipes contain gluten."

GLUTEN_PROMPT = """Check if this recipe is gluten-free.

Check for:
- Wheat
- Barley
- Rye
- Common sources like flour, pasta, bread
- Hidden sources such as soy sauce, malt, beer, couscous, seitan

Example with gluten:
"Mix flour and water to make dough"
Response: {"isGlutenFree": false, "glutenSources": ["flour"]}

Example gluten-free:
"Mix rice, beans, and vegetables"
Response: {"isGlutenFree": true, "glutenSources": []}

Recipe to analyze:
{output}

Return your response in this format:
{"isGlutenFree": boolean, "glutenSources": ["list ingredients containing gluten"]}"""


class GlutenAnalysis(BaseModel):
    """The gluten checker's answer; a verdict that contradicts its sources is invalid."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    isGlutenFree: bool
    glutenSources: list[str] = Field(description="Ingredients that contain gluten; empty if gluten-free.")

    @model_validator(mode="after")
    def _consistent(self) -> GlutenAnalysis:
        sources = [s for s in self.glutenSources if s.strip()]
        if self.isGlutenFree and sources:
            raise ValueError(f"isGlutenFree is true but glutenSources lists {sources}")
        if not self.isGlutenFree and not sources:
            raise ValueError("isGlutenFree is false but glutenSources is empty: name the gluten sources")
        return self


def _gluten_reason(analysis: dict[str, Any], score: float) -> str:
    if analysis["isGlutenFree"]:
        return "This recipe is gluten-free: the judge found no gluten-containing ingredients."
    return "This recipe contains gluten because of: " + ", ".join(analysis["glutenSources"]) + "."


def create_gluten_checker_scorer(
    model: str | None = None, *, settings: JudgeSettings | None = None, cache: JudgeCache | None = None
) -> LLMJudgeScorer:
    """The seeds' gluten checker: score 1 if the recipe (the response) is gluten-free, else 0.

    The analysis is ``{"isGlutenFree": bool, "glutenSources": [str]}``; the reason
    names the sources. A verdict that contradicts its own source list is invalid
    judge output (re-asked once).

    Args:
        model: judge model, e.g. ``"openai/gpt-4o-mini"``.
        settings: judge settings; default :func:`~scorers.core.judge.resolve_judge_settings`.
        cache: a judge-reply cache such as :class:`scorers.runs.store.Store`; None for none.
    """
    return create_llm_judge_scorer(
        id="gluten-checker",
        name="Gluten checker",
        instructions=GLUTEN_INSTRUCTIONS,
        prompt_template=GLUTEN_PROMPT,
        output_schema=GlutenAnalysis,
        score=lambda analysis: 1.0 if analysis["isGlutenFree"] else 0.0,
        reason=_gluten_reason,
        model=model,
        settings=settings,
        cache=cache,
    )
