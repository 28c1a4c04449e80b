"""Custom LLM judges defined as data, without code (SPEC §1.3: judges built in the dashboard).

A :class:`JudgeDefinition` is plain JSON: a name, the judge's instructions, a prompt
template, the output fields the judge fills in, a score rule and a reason template.
:func:`build_scorer` turns it into the same :class:`~scorers.catalogue.llm_judge.LLMJudgeScorer`
that :func:`~scorers.catalogue.llm_judge.create_llm_judge_scorer` builds from Python.

No user-written code is ever evaluated: the score rule is one of four fixed forms,
each a few lines below with its parameters checked, and the reason template allows
plain ``{name}`` substitutions only (no attribute access, indexing or format specs;
it is filled by this module, never by ``str.format``).

Score rules (every one gives a value in [0, 1]; the scorer multiplies it by ``scale``
and rounds half up to 2 decimals):

- ``boolean``: a boolean field; 1 when it has the good value (``true_is_good``), else 0.
- ``number``: a number field with a range; ``(x − min) / (max − min)``, or ``1 −`` that
  when lower is better.
- ``label``: a label field; a table gives every label its score in [0, 1].
- ``list_count``: a list-of-strings field and a cap ``n``; with ``k`` non-blank items,
  ``1 − min(k / n, 1)`` when fewer is better (problems found: none → 1, ``n`` or more →
  0), or ``min(k / n, 1)`` when more is better (strengths found: ``n`` or more → 1).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from scorers.catalogue.llm_judge import (
    GLUTEN_INSTRUCTIONS,
    GLUTEN_PROMPT,
    PLACEHOLDERS,
    LLMJudgeScorer,
    create_llm_judge_scorer,
)
from scorers.core.base import ScoreResult
from scorers.core.errors import InvalidInputError, ScorerError, ScoreStatus
from scorers.core.judge import JudgeCache, JudgeSettings, strict_json_schema

FieldType = Literal["boolean", "number", "string", "list_of_strings", "label"]
FIELD_TYPES: tuple[str, ...] = ("boolean", "number", "string", "list_of_strings", "label")
RESERVED_NAMES = ("score", "scale")
"""Names the reason template gives the computed score and the scale; no output field may use them."""
MAX_NAME_LENGTH = 80

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The prompt template's tokens, as scorers.catalogue.llm_judge reads them: {{ and }} are literal braces,
# {identifier} is a placeholder, every other brace is literal text.
_PROMPT_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")
# The reason template's tokens: {{ and }} are literal braces, {...} must be a plain name, and a
# lone brace is an error (so "{x.y}" or "{score:.2f}" is rejected, never half-substituted).
_REASON_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class OutputField(_Strict):
    """One field of the judge's answer.

    Attributes:
        name: an identifier (letters, digits, ``_``; not starting with a digit), e.g. ``"isGlutenFree"``.
        type: ``"boolean"``, ``"number"``, ``"string"``, ``"list_of_strings"`` or ``"label"``.
        description: what the judge should put there (sent to the judge in the schema).
        min: number fields only: the lowest allowed value (optional unless the score rule uses it).
        max: number fields only: the highest allowed value.
        integer: number fields only: whole numbers (e.g. a 1–5 rating).
        labels: label fields only: the allowed labels (at least two, distinct).
    """

    name: str
    type: FieldType
    description: str = ""
    min: float | None = None
    max: float | None = None
    integer: bool = False
    labels: tuple[str, ...] = ()


class BooleanRule(_Strict):
    """Score 1 when the boolean ``field`` is ``true_is_good``, else 0."""

    kind: Literal["boolean"] = "boolean"
    field: str
    true_is_good: bool = True


class NumberRule(_Strict):
    """Score ``(x − min) / (max − min)`` over the number ``field``'s range (``1 −`` that unless ``higher_is_better``)."""

    kind: Literal["number"] = "number"
    field: str
    higher_is_better: bool = True


class LabelRule(_Strict):
    """Score the label ``field`` by the table ``scores`` (every label → a score in [0, 1])."""

    kind: Literal["label"] = "label"
    field: str
    scores: dict[str, float]


class ListCountRule(_Strict):
    """Score by the number ``k`` of non-blank items of a list ``field``: ``1 − min(k / cap, 1)`` or ``min(k / cap, 1)``."""

    kind: Literal["list_count"] = "list_count"
    field: str
    cap: int = 3
    fewer_is_better: bool = True


ScoreRule = Annotated[BooleanRule | NumberRule | LabelRule | ListCountRule, Field(discriminator="kind")]
RULE_KINDS: dict[str, str] = {
    "boolean": "boolean",
    "number": "number",
    "label": "label",
    "list_count": "list_of_strings",
}
"""Score-rule kind → the field type it needs."""


class ConsistencyRule(_Strict):
    """A check between two output fields: when a boolean field has a value, another field must be (non-)empty.

    ``ConsistencyRule(when="isGlutenFree", equals=True, then="glutenSources", must_be="empty")`` reads
    "if isGlutenFree then glutenSources is empty". A reply that breaks a rule is invalid judge
    output (re-asked once, then a typed error), as in the built-in gluten checker.
    """

    when: str
    equals: bool = True
    then: str
    must_be: Literal["empty", "not_empty"] = "empty"

    def describe(self) -> str:
        """The rule in words, e.g. ``"if isGlutenFree is true then glutenSources is empty"``."""
        return f"if {self.when} is {'true' if self.equals else 'false'} then {self.then} is " + (
            "empty" if self.must_be == "empty" else "not empty"
        )


_RULE_TEXT = re.compile(r"if\s+(\w+)\s+is\s+(true|false)\s+then\s+(\w+)\s+is\s+(empty|not empty)", re.IGNORECASE)


_RULE_PARTS = (
    (r"if(?:\s+|$)", "'if'"),
    (r"\w+(?:\s+|$)", "a yes/no field's name"),
    (r"is(?:\s+|$)", "'is'"),
    (r"(?:true|false)(?:\s+|$)", "true or false"),
    (r"then(?:\s+|$)", "'then'"),
    (r"\w+(?:\s+|$)", "a list or text field's name"),
    (r"is(?:\s+|$)", "'is'"),
    (r"(?:empty|not\s+empty)$", "empty or not empty"),
)


def rule_text_problem(line: str) -> str | None:
    """Why a consistency rule written as text cannot be read: the part read no further, and what was expected there.

    Args:
        line: one rule, e.g. ``"if isGlutenFree is true then glutenSources is empty"``.

    Returns:
        None when the line reads as a rule, else a sentence quoting the first part that could not be read.

    >>> rule_text_problem("if x is true then x is purple")
    "could not read 'purple' in 'if x is true then x is purple': expected empty or not empty"
    """
    rest = line.strip()
    for pattern, expected in _RULE_PARTS:
        found = re.match(pattern, rest, re.IGNORECASE)
        if found is None:
            if not rest:
                return f"{line.strip()!r} ends too soon: expected {expected} next"
            return f"could not read {rest.split()[0]!r} in {line.strip()!r}: expected {expected}"
        rest = rest[found.end() :]
    return None


def parse_consistency_rules(text: str) -> list[dict[str, Any]]:
    """Consistency rules written one per line as :meth:`ConsistencyRule.describe` writes them.

    A line that does not read ``if <field> is true|false then <field> is empty|not empty``
    becomes a rule naming the line itself, so :func:`validate_definition` reports it with
    its position (``consistency_rules[i].when: ...``).

    >>> parse_consistency_rules("if isGlutenFree is true then glutenSources is empty")
    [{'when': 'isGlutenFree', 'equals': True, 'then': 'glutenSources', 'must_be': 'empty'}]
    """
    rules = []
    for line in (raw.strip() for raw in text.splitlines()):
        if not line:
            continue
        found = _RULE_TEXT.fullmatch(line)
        if found is None:
            rules.append({"when": line, "equals": True, "then": "", "must_be": "empty"})
            continue
        when, value, then, must = found.groups()
        rules.append(
            {"when": when, "equals": value.lower() == "true", "then": then, "must_be": must.lower().replace(" ", "_")}
        )
    return rules


class JudgeExample(_Strict):
    """An example run to try the judge on: the texts of the Evaluate form."""

    input: str = ""
    output: str = ""
    ground_truth: str = ""
    system: str = ""

    def payload(self) -> dict[str, Any]:
        """The seed-shaped run payload of this example."""
        return {
            "input": {
                "inputMessages": [{"role": "user", "content": self.input}] if self.input.strip() else [],
                "systemMessages": [{"role": "system", "content": self.system}] if self.system.strip() else [],
            },
            "output": {"text": self.output},
            "ground_truth": self.ground_truth if self.ground_truth.strip() else None,
        }


class JudgeDefinition(_Strict):
    """A custom LLM judge as data (JSON-serialisable with ``model_dump_json``).

    Attributes:
        name: display name; its slug (lower case, dashes) is the judge's stored identity.
        instructions: the judge's role, sent as its system message.
        prompt_template: the prompt with ``{input}``, ``{output}``, ``{ground_truth}`` and
            ``{system}``; other braces are literal (``{{name}}`` for a literal ``{name}``).
        output_fields: what the judge answers, in order.
        score_rule: one of the safe rules (see the module docstring).
        reason_template: the reason, with ``{field}``, ``{score}`` and ``{scale}``; empty for
            a reason that lists the fields.
        scale: multiplies the 0..1 score; a finite number > 0.
        description: one sentence on what it measures (for the catalogue).
        example: a run to try it on (for the catalogue), or None.
        consistency_rules: checks between output fields (:class:`ConsistencyRule`); a reply
            that breaks one is invalid output.
    """

    name: str
    instructions: str
    prompt_template: str
    output_fields: tuple[OutputField, ...]
    score_rule: ScoreRule
    reason_template: str = ""
    scale: float = 1.0
    description: str = ""
    example: JudgeExample | None = None
    consistency_rules: tuple[ConsistencyRule, ...] = ()


def slugify(name: str) -> str:
    """The judge's identity from its name: lower case ASCII letters and digits joined by dashes.

    >>> slugify("Gluten checker (strict)")
    'gluten-checker-strict'
    """
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _position(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


def scan_prompt_template(template: str) -> tuple[list[str], list[str]]:
    """The placeholders a prompt template uses and every problem in it, for validation as you type.

    Reads the template as :func:`scorers.catalogue.llm_judge.template_placeholders` does, but reports
    every unknown placeholder instead of the first.

    Returns:
        ``(placeholders in order of first use, problems)``; a problem reads
        ``"prompt_template: unknown placeholder {context} at line 2, column 5; ..."``.

    >>> scan_prompt_template('Rate {output}. Reply {"ok": true}')
    (['output'], [])
    """
    used: list[str] = []
    problems: list[str] = []
    known = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
    for match in _PROMPT_TOKEN.finditer(template):
        name = match.group(1)
        if name is None:
            continue
        if name not in PLACEHOLDERS:
            problems.append(
                f"prompt_template: unknown placeholder {{{name}}} at {_position(template, match.start())}; "
                f"use one of {known}, or write {{{{{name}}}}} for literal braces"
            )
        elif name not in used:
            used.append(name)
    if not template.strip():
        problems.append("prompt_template: empty; write the prompt with {output} where the response goes")
    elif not used:
        problems.append(
            "prompt_template: uses no placeholder, so the judge would never see the run; "
            "add {output} (the response) and any of {input}, {ground_truth}, {system}"
        )
    return used, problems


def scan_reason_template(template: str, names: set[str]) -> tuple[list[str], list[str]]:
    """The names a reason template uses and every problem in it.

    Args:
        template: the reason template.
        names: the output field names (``score`` and ``scale`` are always allowed).

    Returns:
        ``(names in order of first use, problems)``.

    >>> scan_reason_template("{verdict}: {score} of {scale} {{sic}}", {"verdict"})
    (['verdict', 'score', 'scale'], [])
    >>> scan_reason_template("{verdict.upper}", {"verdict"})[1]
    ['reason_template: {verdict.upper} at line 1, column 1 is not a plain {name}; attribute access, indexing and format specs are not allowed']
    """
    allowed = names | set(RESERVED_NAMES)
    used: list[str] = []
    problems: list[str] = []
    for match in _REASON_TOKEN.finditer(template):
        token = match.group(0)
        if token in ("{{", "}}"):
            continue
        where = _position(template, match.start())
        inner = match.group(1)
        if inner is None:
            problems.append(f"reason_template: a lone {token!r} at {where}; write {token * 2} for a literal brace")
        elif not _IDENTIFIER.fullmatch(inner):
            problems.append(
                f"reason_template: {token} at {where} is not a plain {{name}}; "
                "attribute access, indexing and format specs are not allowed"
            )
        elif inner not in allowed:
            problems.append(
                f"reason_template: unknown name {{{inner}}} at {where}; use one of "
                + ", ".join("{" + n + "}" for n in sorted(names) + list(RESERVED_NAMES))
            )
        elif inner not in used:
            used.append(inner)
    return used, problems


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _field_problems(fields: tuple[OutputField, ...]) -> list[str]:
    problems: list[str] = []
    if not fields:
        return ["output_fields: add at least one field for the judge to fill in"]
    seen: dict[str, int] = {}
    for i, f in enumerate(fields):
        where = f"output_fields[{i}]"
        if not f.name:
            problems.append(f"{where}.name: empty; give the field a name such as verdict")
        elif not _IDENTIFIER.fullmatch(f.name):
            problems.append(
                f"{where}.name: {f.name!r} is not an identifier; use letters, digits and _, not starting with a digit"
            )
        elif f.name in RESERVED_NAMES:
            problems.append(f"{where}.name: {f.name!r} is reserved for the computed {f.name}; call it e.g. rating")
        elif f.name in seen:
            problems.append(f"{where}.name: duplicate of output_fields[{seen[f.name]}] ({f.name!r})")
        else:
            seen[f.name] = i
        if f.type != "number":
            for attribute in ("min", "max"):
                if getattr(f, attribute) is not None:
                    problems.append(f"{where}.{attribute}: only number fields have a range")
            if f.integer:
                problems.append(f"{where}.integer: only number fields can be whole numbers")
        else:
            for attribute in ("min", "max"):
                value = getattr(f, attribute)
                if value is not None and not _number(value):
                    problems.append(f"{where}.{attribute}: must be a finite number, got {value!r}")
            if _number(f.min) and _number(f.max) and not f.min < f.max:
                problems.append(f"{where}.max: must be greater than min ({f.min:g}), got {f.max:g}")
            if f.integer:
                for attribute in ("min", "max"):
                    value = getattr(f, attribute)
                    if _number(value) and value != int(value):
                        problems.append(f"{where}.{attribute}: a whole-number field needs a whole {attribute}")
        if f.type != "label":
            if f.labels:
                problems.append(f"{where}.labels: only label fields have labels")
            continue
        labels = [label.strip() for label in f.labels]
        if len([label for label in labels if label]) < 2:
            problems.append(f"{where}.labels: a label field needs at least two labels")
        if any(not label for label in labels):
            problems.append(f"{where}.labels: a label cannot be empty")
        duplicates = sorted({label for label in labels if label and labels.count(label) > 1})
        if duplicates:
            problems.append(f"{where}.labels: listed twice: {', '.join(duplicates)}")
        if any(label != raw for label, raw in zip(labels, f.labels, strict=True)):
            problems.append(f"{where}.labels: remove the spaces around the labels")
    return problems


def _rule_problems(
    rule: BooleanRule | NumberRule | LabelRule | ListCountRule, fields: tuple[OutputField, ...]
) -> list[str]:
    by_name = {f.name: f for f in fields}
    target = by_name.get(rule.field)
    if target is None:
        known = ", ".join(by_name) or "none yet"
        return [f"score_rule.field: no field named {rule.field!r}; the fields are: {known}"]
    needed = RULE_KINDS[rule.kind]
    if target.type != needed:
        return [
            f"score_rule.field: a {rule.kind} rule needs a {needed.replace('_', ' ')} field; "
            f"{rule.field} is a {target.type.replace('_', ' ')} field"
        ]
    problems: list[str] = []
    if isinstance(rule, NumberRule):
        if not (_number(target.min) and _number(target.max)):
            problems.append(
                f"score_rule.field: the number field {rule.field} needs a min and a max to be normalised to 0..1"
            )
    elif isinstance(rule, LabelRule):
        labels = list(target.labels)
        for label in labels:
            if label not in rule.scores:
                problems.append(f"score_rule.scores: no score for label {label!r} of {rule.field}")
        for label, value in rule.scores.items():
            if label not in labels:
                problems.append(f"score_rule.scores: {label!r} is not a label of {rule.field} ({', '.join(labels)})")
            elif not _number(value) or not 0 <= value <= 1:
                problems.append(f"score_rule.scores.{label}: must be a number in 0..1, got {value!r}")
    elif isinstance(rule, ListCountRule) and rule.cap < 1:
        problems.append(f"score_rule.cap: must be a whole number ≥ 1, got {rule.cap}")
    return problems


def _format_validation_error(error: ValidationError) -> list[str]:
    problems = []
    for e in error.errors():
        path = ""
        for part in e["loc"]:
            path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
        if e["type"] == "missing":
            problems.append(f"{path}: missing")
        else:
            problems.append(f"{path}: {e['msg']} (got {e['input']!r:.60})")
    return problems


def _text_problems(texts: Mapping[str, Any]) -> list[str]:
    problems: list[str] = []
    name = texts.get("name")
    if name is None:
        pass
    elif not name.strip():
        problems.append("name: empty; give the judge a name")
    elif not slugify(name):
        problems.append("name: needs at least one letter or digit (it becomes the judge's id)")
    elif len(name) > MAX_NAME_LENGTH:
        problems.append(f"name: at most {MAX_NAME_LENGTH} characters, got {len(name)}")
    if "instructions" in texts and not texts["instructions"].strip():
        problems.append("instructions: empty; say who the judge is and what it checks")
    if "prompt_template" in texts:
        problems += scan_prompt_template(texts["prompt_template"])[1]
    return problems


def _consistency_problems(rules: Sequence[ConsistencyRule], fields: Sequence[OutputField]) -> list[str]:
    by_name = {f.name: f for f in fields}
    problems = []
    for i, rule in enumerate(rules):
        where = f"consistency_rules[{i}]"
        # A field name has no spaces: such a "when" is a line of text that parse_consistency_rules could not read.
        unread = rule_text_problem(rule.when) if not rule.then and len(rule.when.split()) > 1 else None
        if unread is not None:
            problems.append(f"{where}: {unread}")
            continue
        when = by_name.get(rule.when)
        if when is None or when.type != "boolean":
            problems.append(f"{where}.when: {rule.when!r} must name a boolean output field")
        then = by_name.get(rule.then)
        if then is None or then.type not in ("list_of_strings", "string"):
            problems.append(f"{where}.then: {rule.then!r} must name a list-of-strings or string output field")
    return problems


def _empty(value: Any) -> bool:
    if isinstance(value, str):
        return not value.strip()
    return not [v for v in value if str(v).strip()]


def validate_definition(definition: JudgeDefinition | Mapping[str, Any]) -> list[str]:
    """Every problem of a judge definition, each naming its field; ``[]`` when it is valid.

    Args:
        definition: a :class:`JudgeDefinition`, or its JSON-shaped dict (then type errors
            are reported too, e.g. ``"output_fields[1].type: Input should be ..."``).

    Returns:
        Problems such as ``"prompt_template: unknown placeholder {context} at line 2, column 5; ..."``,
        ``"output_fields[2].name: duplicate of output_fields[0] ('verdict')"`` or
        ``"score_rule.field: no field named 'x'; ..."``.
    """
    if not isinstance(definition, JudgeDefinition):
        try:
            definition = JudgeDefinition.model_validate(definition)
        except ValidationError as exc:
            problems = _format_validation_error(exc)
            # The texts can still be checked when the rest does not parse.
            broken = {re.split(r"[.\[:]", p, maxsplit=1)[0] for p in problems}
            texts = {k: v for k, v in definition.items() if k not in broken and isinstance(v, str)}
            return problems + _text_problems(texts)
    d = definition
    problems = _text_problems(d.model_dump(include={"name", "instructions", "prompt_template"}))
    problems += _field_problems(d.output_fields)
    if d.output_fields:
        problems += _rule_problems(d.score_rule, d.output_fields)
    problems += scan_reason_template(d.reason_template, {f.name for f in d.output_fields})[1]
    problems += _consistency_problems(d.consistency_rules, d.output_fields)
    if not _number(d.scale) or d.scale <= 0:
        problems.append(f"scale: must be a finite number > 0, got {d.scale!r}")
    return problems


def parse_definition(data: JudgeDefinition | Mapping[str, Any] | str) -> JudgeDefinition:
    """A valid :class:`JudgeDefinition` from a model, its dict or its JSON text.

    Raises:
        InvalidInputError: the JSON does not parse or the definition has problems; the
            message lists every problem (see :func:`validate_definition`).
    """
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"not JSON ({exc})", field="definition") from None
    if not isinstance(data, (JudgeDefinition, Mapping)):
        raise InvalidInputError(f"expected a judge definition object, got {type(data).__name__}", field="definition")
    problems = validate_definition(data)
    if problems:
        raise InvalidInputError("; ".join(problems))
    return data if isinstance(data, JudgeDefinition) else JudgeDefinition.model_validate(data)


_JSON_TYPE_NAMES = {
    "boolean": "a boolean",
    "number": "a number",
    "string": "a string",
    "list_of_strings": "a list of strings",
    "label": "a label",
}


def output_model(definition: JudgeDefinition) -> type[BaseModel]:
    """The strict pydantic model of the judge's answer: one required field per output field, in order.

    Booleans, strings and lists are validated strictly (``"true"`` is not a boolean); numbers
    get their range (``ge``/``le``), whole-number fields are integers, label fields accept
    exactly their labels (a JSON-schema ``enum``).
    """
    fields: dict[str, Any] = {}
    for f in definition.output_fields:
        annotation: Any
        constraints: dict[str, Any] = {}
        if f.type == "boolean":
            annotation = bool
        elif f.type == "number":
            annotation = int if f.integer else float
            if f.min is not None:
                constraints["ge"] = int(f.min) if f.integer else f.min
            if f.max is not None:
                constraints["le"] = int(f.max) if f.integer else f.max
        elif f.type == "string":
            annotation = str
        elif f.type == "list_of_strings":
            annotation = list[str]
        else:
            annotation = Literal[tuple(f.labels)]
        description = f.description.strip() or f"{_JSON_TYPE_NAMES[f.type]}"
        fields[f.name] = (annotation, Field(..., description=description, **constraints))
    config = ConfigDict(strict=True, allow_inf_nan=False, extra="ignore", frozen=True)
    model_name = "".join(part.capitalize() for part in slugify(definition.name).split("-")) or "Judge"
    rules = definition.consistency_rules

    def consistent(answer: BaseModel) -> BaseModel:
        for rule in rules:
            if getattr(answer, rule.when) is rule.equals and _empty(getattr(answer, rule.then)) != (
                rule.must_be == "empty"
            ):
                raise ValueError(f"inconsistent answer: the rule {rule.describe()!r} is broken")
        return answer

    validators = {"consistency_rules": model_validator(mode="after")(consistent)} if rules else {}
    return create_model(f"{model_name}Answer", __config__=config, __validators__=validators, **fields)


def json_schema(definition: JudgeDefinition) -> dict[str, Any]:
    """The JSON schema the judge is asked to answer with (OpenAI's strict structured-output form)."""
    return strict_json_schema(output_model(definition))


def score_function(definition: JudgeDefinition) -> Callable[[Mapping[str, Any]], float]:
    """The definition's score rule as a function of the judge's (validated) answer, giving a value in [0, 1].

    Only the four rule forms of the module docstring exist; nothing the user wrote is evaluated.
    """
    rule = definition.score_rule
    target = next(f for f in definition.output_fields if f.name == rule.field)
    if isinstance(rule, BooleanRule):
        good = rule.true_is_good
        return lambda answer: 1.0 if answer[rule.field] is good else 0.0
    if isinstance(rule, NumberRule):
        low, high = float(target.min), float(target.max)  # type: ignore[arg-type]

        def normalised(answer: Mapping[str, Any]) -> float:
            share = (answer[rule.field] - low) / (high - low)
            return share if rule.higher_is_better else 1.0 - share

        return normalised
    if isinstance(rule, LabelRule):
        table = dict(rule.scores)
        return lambda answer: float(table[answer[rule.field]])
    cap = rule.cap

    def counted(answer: Mapping[str, Any]) -> float:
        share = min(len([item for item in answer[rule.field] if item.strip()]) / cap, 1.0)
        return 1.0 - share if rule.fewer_is_better else share

    return counted


def describe_rule(definition: JudgeDefinition) -> str:
    """The score rule as a formula, e.g. ``"1 if isGlutenFree is true, else 0"``."""
    rule = definition.score_rule
    name = rule.field
    if isinstance(rule, BooleanRule):
        return f"1 if {name} is {'true' if rule.true_is_good else 'false'}, else 0"
    if isinstance(rule, NumberRule):
        target = next(f for f in definition.output_fields if f.name == name)
        low, high = target.min or 0.0, target.max or 0.0
        share = f"({name} − {low:g}) / ({high:g} − {low:g})"
        return share if rule.higher_is_better else f"1 − {share}"
    if isinstance(rule, LabelRule):
        return f"by the label of {name}: " + ", ".join(f"{label} → {score:g}" for label, score in rule.scores.items())
    share = f"min(k / {rule.cap}, 1), k = the number of non-blank items of {name}"
    return f"1 − {share}" if rule.fewer_is_better else share


def score_range(definition: JudgeDefinition) -> str:
    """The range of the 0..1 score before ``scale``: ``"0 or 1"`` for a boolean rule, else ``"0..1"``."""
    return "0 or 1" if isinstance(definition.score_rule, BooleanRule) else "0..1"


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return ", ".join(map(str, value)) if value else "none"
    return str(value)


def render_reason(template: str, answer: Mapping[str, Any], score: float, scale: float) -> str:
    """Fill a validated reason template: ``{field}`` → the answer's value (a list joined by commas,
    ``none`` when empty; booleans as ``true``/``false``), ``{score}`` and ``{scale}`` → numbers.

    >>> render_reason("Found: {sources}; {score} of {scale} {{ok}}", {"sources": []}, 1.0, 1.0)
    'Found: none; 1 of 1 {ok}'
    """
    values = {**{k: _show(v) for k, v in answer.items()}, "score": f"{score:g}", "scale": f"{scale:g}"}

    def fill(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        return values[match.group(1)]

    return _REASON_TOKEN.sub(fill, template)


def build_scorer(
    definition: JudgeDefinition | Mapping[str, Any],
    settings: JudgeSettings | None = None,
    cache: JudgeCache | None = None,
    *,
    id: str | None = None,
    name: str | None = None,
) -> LLMJudgeScorer:
    """Build the LLM judge a definition describes, with :func:`~scorers.catalogue.llm_judge.create_llm_judge_scorer`.

    Args:
        definition: the definition (or its dict).
        settings: judge settings; default :func:`~scorers.core.judge.resolve_judge_settings`.
        cache: a judge-reply cache such as :class:`scorers.runs.store.Store`; None for none.
        id: the scorer id; default ``"judge:<slug>"``.
        name: the display name; default the definition's name.

    Returns:
        The scorer: ``score = round_half_up(rule(answer) × scale, 2)``.

    Raises:
        InvalidInputError: the definition has problems (all listed).
    """
    d = parse_definition(definition)
    reason: Callable[[dict[str, Any], float], str] | None = None
    if d.reason_template.strip():
        template, scale = d.reason_template, d.scale
        reason = lambda answer, score: render_reason(template, answer, score, scale)  # noqa: E731
    return create_llm_judge_scorer(
        id=id or f"judge:{slugify(d.name)}",
        name=name or d.name,
        instructions=d.instructions,
        prompt_template=d.prompt_template,
        output_schema=output_model(d),
        score=score_function(d),
        reason=reason,
        scale=d.scale,
        settings=settings,
        cache=cache,
    )


@dataclass(frozen=True)
class TryOutcome:
    """What trying a definition on one example gave.

    Attributes:
        messages: the chat messages the judge received (system, user), or None when the
            definition or the example was rejected before a prompt could be rendered.
        raw_reply: the judge's text, or None when there was no reply.
        fields: the judge's validated answer, or None.
        score: the score (``rule × scale``, 2 decimals), or None when not scored.
        result: the full :class:`~scorers.core.base.ScoreResult`, or None.
        error: why it was not scored, or None.
        status: the outcome (``SCORED`` or the failure's status).
        problems: the definition's problems (then nothing was sent to the judge).
    """

    status: ScoreStatus
    messages: list[dict[str, str]] | None = None
    raw_reply: str | None = None
    fields: dict[str, Any] | None = None
    score: float | None = None
    result: ScoreResult | None = None
    error: str | None = None
    problems: list[str] = field(default_factory=list)


def try_definition(
    definition: JudgeDefinition | Mapping[str, Any],
    payload: Mapping[str, Any],
    settings: JudgeSettings | Callable[[], JudgeSettings] | None = None,
    cache: JudgeCache | None = None,
) -> TryOutcome:
    """Try a definition on one run: the rendered prompt, the raw reply, the parsed fields and the score.

    Never raises a :class:`~scorers.core.errors.ScorerError`: an invalid definition, an empty
    field the template needs, a missing key or a failed judge call comes back as a
    :class:`TryOutcome` with ``error`` (and the raw reply when the judge answered).

    Args:
        definition: the definition to try.
        payload: a run payload (see :func:`scorers.core.base.normalize_run`).
        settings: judge settings, or a function returning them (called inside the error
            handling, so a configuration error is reported too); None resolves them.
        cache: a judge-reply cache; None to always ask the judge.
    """
    problems = validate_definition(definition)
    if problems:
        return TryOutcome(
            ScoreStatus.INVALID_INPUT, error="The definition has problems: " + "; ".join(problems), problems=problems
        )
    messages = None
    try:
        resolved = settings() if callable(settings) else settings
        scorer = build_scorer(definition, resolved, cache)
        messages = scorer.render_prompt(dict(payload))
        result = scorer.run(dict(payload))
    except ScorerError as exc:
        return TryOutcome(exc.status, messages, raw_reply=getattr(exc, "raw_reply", None), error=str(exc))
    return TryOutcome(
        ScoreStatus.SCORED,
        messages,
        raw_reply=result.details.get("rawReply"),
        fields=dict(result.analyze_step_result),
        score=result.score,
        result=result,
    )


GLUTEN_CHECKER = JudgeDefinition(
    name="Gluten checker",
    description="Whether the recipe in the response is gluten-free (the seeds' custom judge, as a definition).",
    instructions=GLUTEN_INSTRUCTIONS,
    prompt_template=GLUTEN_PROMPT,
    output_fields=(
        OutputField(name="isGlutenFree", type="boolean", description="True when the recipe contains no gluten."),
        OutputField(
            name="glutenSources",
            type="list_of_strings",
            description="Ingredients that contain gluten; empty if gluten-free.",
        ),
    ),
    score_rule=BooleanRule(field="isGlutenFree", true_is_good=True),
    reason_template="Gluten-free: {isGlutenFree}. Gluten sources: {glutenSources}.",
    example=JudgeExample(input="A quick dinner, please.", output="Stir-fry beef with soy sauce and serve it on rice."),
    consistency_rules=(
        ConsistencyRule(when="isGlutenFree", equals=True, then="glutenSources", must_be="empty"),
        ConsistencyRule(when="isGlutenFree", equals=False, then="glutenSources", must_be="not_empty"),
    ),
)
"""The seeds' gluten checker as a definition to copy and edit: the template, instructions, answer
fields and rule of :func:`~scorers.catalogue.llm_judge.create_gluten_checker_scorer`, with its
consistency rules: like the Python version it rejects a verdict that contradicts its source list."""

BUILT_IN_DEFINITIONS: dict[str, JudgeDefinition] = {"gluten-checker": GLUTEN_CHECKER}
"""Definitions that ship with Scorer Studio, by slug (shown on the Judges page to copy)."""
