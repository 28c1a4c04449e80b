"""Judge definitions without code: validation, the safe score rules, JSON, building and trying a judge.

Expected scores are worked by hand from the rules in scorers/judge_builder.py's docstring.
"""

from __future__ import annotations

import json

import pytest
from fake_openai import Reply
from judge_data import settings_for

from scorers import InvalidInputError, JudgeSettings, ScoreStatus, create_gluten_checker_scorer
from scorers.catalogue.judge_builder import (
    GLUTEN_CHECKER,
    BooleanRule,
    JudgeDefinition,
    JudgeExample,
    LabelRule,
    ListCountRule,
    NumberRule,
    OutputField,
    build_scorer,
    describe_rule,
    json_schema,
    parse_definition,
    render_reason,
    scan_prompt_template,
    score_function,
    try_definition,
    validate_definition,
)
from scorers.catalogue.llm_judge import GLUTEN_INSTRUCTIONS, GLUTEN_PROMPT, template_placeholders


def definition(**overrides) -> dict:
    """A valid definition in JSON shape: a 1–5 helpfulness rating, a verdict label and a list of issues."""
    data = {
        "name": "Helpfulness",
        "instructions": "You judge how helpful an answer is.",
        "prompt_template": "Question:\n{input}\n\nAnswer:\n{output}\n\nReply as JSON.",
        "output_fields": [
            {
                "name": "rating",
                "type": "number",
                "min": 1,
                "max": 5,
                "integer": True,
                "description": "1 (useless) to 5 (perfect)",
            },
            {"name": "verdict", "type": "label", "labels": ["good", "partial", "bad"]},
            {"name": "issues", "type": "list_of_strings"},
            {"name": "onTopic", "type": "boolean"},
            {"name": "comment", "type": "string"},
        ],
        "score_rule": {"kind": "number", "field": "rating"},
        "reason_template": "Rated {rating} ({verdict}); issues: {issues}. Score {score} of {scale}.",
        "scale": 1,
    }
    data.update(overrides)
    return data


def fields_with(index: int, **changes) -> list[dict]:
    fields = [dict(f) for f in definition()["output_fields"]]
    fields[index].update(changes)
    return fields


# ---------------------------------------------------------------- validation


def test_a_valid_definition_has_no_problems():
    assert validate_definition(definition()) == []
    assert validate_definition(GLUTEN_CHECKER) == []


def test_unknown_placeholders_are_named_with_line_and_column():
    problems = validate_definition(definition(prompt_template="Answer:\n{output}\n  {context} and {retrieved}"))
    assert problems[0].startswith("prompt_template: unknown placeholder {context} at line 3, column 3")
    assert problems[1].startswith("prompt_template: unknown placeholder {retrieved} at line 3, column 17")
    assert len(problems) == 2


def test_literal_braces_are_allowed_and_placeholders_are_listed():
    template = 'Reply {"ok": true, "why": "..."} about {output} given {{input}} and {ground_truth}.'
    assert validate_definition(definition(prompt_template=template)) == []
    assert scan_prompt_template(template) == (["output", "ground_truth"], [])
    assert template_placeholders(template) == ["output", "ground_truth"]  # the library reads it the same way


def test_a_template_without_placeholders_is_a_problem():
    assert validate_definition(definition(prompt_template="Rate the answer."))[0].startswith(
        "prompt_template: uses no placeholder"
    )


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        (fields_with(2, name="rating"), "output_fields[2].name: duplicate of output_fields[0] ('rating')"),
        (fields_with(1, name="2nd"), "output_fields[1].name: '2nd' is not an identifier"),
        (fields_with(1, name="verdict.x"), "output_fields[1].name: 'verdict.x' is not an identifier"),
        (fields_with(3, name="score"), "output_fields[3].name: 'score' is reserved"),
        (fields_with(3, name=""), "output_fields[3].name: empty"),
        (fields_with(0, min=5, max=1), "output_fields[0].max: must be greater than min (5), got 1"),
        (fields_with(0, min=1.5), "output_fields[0].min: a whole-number field needs a whole min"),
        (fields_with(1, labels=["good"]), "output_fields[1].labels: a label field needs at least two labels"),
        (fields_with(1, labels=["good", "bad", "good"]), "output_fields[1].labels: listed twice: good"),
        (fields_with(3, min=0), "output_fields[3].min: only number fields have a range"),
        (fields_with(2, labels=["a", "b"]), "output_fields[2].labels: only label fields have labels"),
        (
            fields_with(4, type="float"),
            "output_fields[4].type: Input should be 'boolean', 'number', 'string', "
            "'list_of_strings' or 'label' (got 'float')",
        ),
        ([], "output_fields: add at least one field"),
    ],
)
def test_field_problems_name_the_field(fields, problem):
    problems = validate_definition(definition(output_fields=fields))
    assert any(p.startswith(problem) for p in problems), problems


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ({"kind": "boolean", "field": "x"}, "score_rule.field: no field named 'x'; the fields are: rating, verdict"),
        (
            {"kind": "boolean", "field": "rating"},
            "score_rule.field: a boolean rule needs a boolean field; rating is a number field",
        ),
        (
            {"kind": "list_count", "field": "comment"},
            "score_rule.field: a list_count rule needs a list of strings field; comment is a string field",
        ),
        (
            {"kind": "label", "field": "verdict", "scores": {"good": 1, "bad": 0}},
            "score_rule.scores: no score for label 'partial' of verdict",
        ),
        (
            {"kind": "label", "field": "verdict", "scores": {"good": 1, "partial": 0.5, "bad": 0, "meh": 0.2}},
            "score_rule.scores: 'meh' is not a label of verdict (good, partial, bad)",
        ),
        (
            {"kind": "label", "field": "verdict", "scores": {"good": 1.5, "partial": 0.5, "bad": 0}},
            "score_rule.scores.good: must be a number in 0..1, got 1.5",
        ),
        (
            {"kind": "label", "field": "verdict", "scores": {"good": 1, "partial": 0.5, "bad": -0.1}},
            "score_rule.scores.bad: must be a number in 0..1, got -0.1",
        ),
        ({"kind": "list_count", "field": "issues", "cap": 0}, "score_rule.cap: must be a whole number ≥ 1, got 0"),
    ],
)
def test_score_rule_problems_name_the_field(rule, problem):
    problems = validate_definition(definition(score_rule=rule))
    assert any(p.startswith(problem) for p in problems), problems


def test_a_number_rule_needs_the_fields_range():
    problems = validate_definition(definition(output_fields=fields_with(0, min=None)))
    assert problems == ["score_rule.field: the number field rating needs a min and a max to be normalised to 0..1"]


@pytest.mark.parametrize(
    "rule",
    [
        {"kind": "expression", "field": "rating", "expression": "rating / 5"},
        {"kind": "python", "code": "__import__('os').system('true')"},
        {"kind": "number", "field": "rating", "formula": "rating ** 2"},
    ],
)
def test_only_the_safe_rule_forms_exist(rule):
    problems = validate_definition(definition(score_rule=rule))
    assert problems and all(p.startswith("score_rule") for p in problems), problems


@pytest.mark.parametrize(
    ("reason", "problem"),
    [
        (
            "Rated {stars}.",
            "reason_template: unknown name {stars} at line 1, column 7; use one of {comment}, "
            "{issues}, {onTopic}, {rating}, {verdict}, {score}, {scale}",
        ),
        ("{verdict.__class__}", "reason_template: {verdict.__class__} at line 1, column 1 is not a plain {name}"),
        ("{issues[0]}", "reason_template: {issues[0]} at line 1, column 1 is not a plain {name}"),
        ("{score:.2f}", "reason_template: {score:.2f} at line 1, column 1 is not a plain {name}"),
        ("{rating!r}", "reason_template: {rating!r} at line 1, column 1 is not a plain {name}"),
        ("Score {score", "reason_template: a lone '{' at line 1, column 7"),
        ("a } b", "reason_template: a lone '}' at line 1, column 3"),
    ],
)
def test_reason_templates_allow_plain_names_only(reason, problem):
    problems = validate_definition(definition(reason_template=reason))
    assert any(p.startswith(problem) for p in problems), problems


@pytest.mark.parametrize("scale", [0, -1, float("inf")])
def test_scale_must_be_positive_and_finite(scale):
    assert any(p.startswith("scale: must be a finite number > 0") for p in validate_definition(definition(scale=scale)))


def test_name_and_instructions_are_required():
    problems = validate_definition(definition(name="  ", instructions=""))
    assert problems[:2] == [
        "name: empty; give the judge a name",
        "instructions: empty; say who the judge is and what it checks",
    ]
    assert validate_definition(definition(name="???")) == [
        "name: needs at least one letter or digit (it becomes the judge's id)"
    ]


def test_unknown_keys_are_rejected():
    problems = validate_definition(definition(score_function="lambda a: 1"))
    assert problems == ["score_function: Extra inputs are not permitted (got 'lambda a: 1')"]


def test_parse_definition_raises_with_every_problem():
    with pytest.raises(InvalidInputError) as caught:
        parse_definition(definition(name="", reason_template="{nope}"))
    message = str(caught.value)
    assert "name: empty" in message and "reason_template: unknown name {nope}" in message
    with pytest.raises(InvalidInputError, match="definition: not JSON"):
        parse_definition("{not json")


# ---------------------------------------------------------------- score rules, by hand


def scored(rule, answer: dict, **overrides) -> float:
    return score_function(JudgeDefinition.model_validate(definition(score_rule=rule, **overrides)))(answer)


def test_boolean_rule_polarity():
    assert scored({"kind": "boolean", "field": "onTopic"}, {"onTopic": True}) == 1.0
    assert scored({"kind": "boolean", "field": "onTopic"}, {"onTopic": False}) == 0.0
    assert scored({"kind": "boolean", "field": "onTopic", "true_is_good": False}, {"onTopic": True}) == 0.0
    assert scored({"kind": "boolean", "field": "onTopic", "true_is_good": False}, {"onTopic": False}) == 1.0


def test_number_rule_normalises_by_the_range():
    # (4 − 1) / (5 − 1) = 0.75; lower is better: 1 − 0.75 = 0.25
    assert scored({"kind": "number", "field": "rating"}, {"rating": 4}) == 0.75
    assert scored({"kind": "number", "field": "rating", "higher_is_better": False}, {"rating": 4}) == 0.25
    assert scored({"kind": "number", "field": "rating"}, {"rating": 1}) == 0.0
    assert scored({"kind": "number", "field": "rating"}, {"rating": 5}) == 1.0


def test_label_rule_uses_the_table():
    rule = {"kind": "label", "field": "verdict", "scores": {"good": 1, "partial": 0.4, "bad": 0}}
    assert [scored(rule, {"verdict": v}) for v in ("good", "partial", "bad")] == [1.0, 0.4, 0.0]


def test_list_count_rule():
    fewer = {"kind": "list_count", "field": "issues", "cap": 4}
    # 1 issue of cap 4: 1 − 1/4 = 0.75; 5 issues: 1 − min(5/4, 1) = 0; none: 1; a blank item is not counted.
    assert scored(fewer, {"issues": ["vague"]}) == 0.75
    assert scored(fewer, {"issues": ["a", "b", "c", "d", "e"]}) == 0.0
    assert scored(fewer, {"issues": []}) == 1.0
    assert scored(fewer, {"issues": ["vague", "  "]}) == 0.75
    more = {"kind": "list_count", "field": "issues", "cap": 4, "fewer_is_better": False}
    assert scored(more, {"issues": ["a", "b"]}) == 0.5  # 2/4
    assert scored(more, {"issues": ["a", "b", "c", "d", "e", "f"]}) == 1.0


def test_rules_are_described_as_formulas():
    d = JudgeDefinition.model_validate(definition())
    assert describe_rule(d) == "(rating − 1) / (5 − 1)"
    assert describe_rule(GLUTEN_CHECKER) == "1 if isGlutenFree is true, else 0"
    label = JudgeDefinition.model_validate(
        definition(score_rule={"kind": "label", "field": "verdict", "scores": {"good": 1, "partial": 0.5, "bad": 0}})
    )
    assert describe_rule(label) == "by the label of verdict: good → 1, partial → 0.5, bad → 0"
    count = JudgeDefinition.model_validate(definition(score_rule={"kind": "list_count", "field": "issues", "cap": 2}))
    assert describe_rule(count) == "1 − min(k / 2, 1), k = the number of non-blank items of issues"


def test_reason_is_substituted_once_without_formatting():
    template = "Verdict {verdict}; issues: {issues}; on topic: {onTopic}; {score}/{scale} {{literal}}"
    answer = {"verdict": "{score.__class__}", "issues": [], "onTopic": True}
    assert render_reason(template, answer, 0.75, 1.0) == (
        "Verdict {score.__class__}; issues: none; on topic: true; 0.75/1 {literal}"
    )


# ---------------------------------------------------------------- JSON


def test_json_round_trip():
    d = JudgeDefinition.model_validate(definition(example={"input": "Q?", "output": "A."}))
    text = d.model_dump_json()
    assert JudgeDefinition.model_validate_json(text) == d
    assert JudgeDefinition.model_validate(json.loads(text)) == d
    assert json.loads(GLUTEN_CHECKER.model_dump_json())["score_rule"] == {
        "kind": "boolean",
        "field": "isGlutenFree",
        "true_is_good": True,
    }


def test_the_rule_classes_are_the_json_shapes():
    d = JudgeDefinition.model_validate(definition())
    assert isinstance(d.score_rule, NumberRule)
    for rule in (
        BooleanRule(field="onTopic"),
        LabelRule(field="verdict", scores={"good": 1, "partial": 0, "bad": 0}),
        ListCountRule(field="issues", cap=2),
    ):
        assert validate_definition(d.model_copy(update={"score_rule": rule})) == []


def test_json_schema_sent_to_the_judge():
    schema = json_schema(JudgeDefinition.model_validate(definition()))
    assert schema["required"] == ["rating", "verdict", "issues", "onTopic", "comment"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["rating"] == {
        "description": "1 (useless) to 5 (perfect)",
        "type": "integer",
        "minimum": 1,
        "maximum": 5,
    }
    assert schema["properties"]["verdict"]["enum"] == ["good", "partial", "bad"]
    assert schema["properties"]["issues"]["items"] == {"type": "string"}
    assert schema["properties"]["onTopic"]["type"] == "boolean"


# ---------------------------------------------------------------- building and running


PAYLOAD = {
    "input": [{"role": "user", "content": "How do I boil an egg?"}],
    "output": "Put it in boiling water for 8 minutes.",
}


def test_build_and_run_through_the_fake_judge(fake_openai):
    fake_openai.enqueue(
        Reply.json(
            {"rating": 4, "verdict": "partial", "issues": ["no cooling step"], "onTopic": True, "comment": "Fine."}
        )
    )
    scorer = build_scorer(definition(scale=10), settings_for(fake_openai))
    result = scorer.run(PAYLOAD)

    assert scorer.id == "judge:helpfulness"
    assert result.score == 7.5  # (4 − 1) / (5 − 1) = 0.75, × 10
    assert result.reason == "Rated 4 (partial); issues: no cooling step. Score 7.5 of 10."
    assert result.analyze_step_result["verdict"] == "partial"
    request = fake_openai.last_chat_request()
    assert request["messages"][0]["content"].startswith("You judge how helpful an answer is.")
    assert "<input>\nHow do I boil an egg?\n</input>" in request["messages"][1]["content"]
    assert "<response>\nPut it in boiling water for 8 minutes.\n</response>" in request["messages"][1]["content"]
    sent_schema = request["response_format"]["json_schema"]
    assert sent_schema["strict"] is True
    assert sent_schema["schema"]["properties"]["verdict"]["enum"] == ["good", "partial", "bad"]


def test_an_answer_outside_the_schema_is_invalid_not_scored(fake_openai):
    bad = {"rating": 7, "verdict": "great", "issues": [], "onTopic": "yes", "comment": ""}
    fake_openai.enqueue(Reply.json(bad), Reply.json(bad))
    outcome = try_definition(definition(), PAYLOAD, settings_for(fake_openai))
    assert outcome.status is ScoreStatus.JUDGE_OUTPUT_INVALID
    assert outcome.score is None
    assert "rating: Input should be less than or equal to 5" in outcome.error
    assert json.loads(outcome.raw_reply) == bad
    assert outcome.messages[1]["content"].startswith("Question:\n<input>")


def test_try_definition_shows_prompt_reply_fields_and_score(fake_openai):
    reply = {"rating": 2, "verdict": "bad", "issues": ["wrong time", "unsafe"], "onTopic": True, "comment": "No."}
    fake_openai.enqueue(Reply.json(reply))
    rule = {"kind": "list_count", "field": "issues", "cap": 4}
    outcome = try_definition(definition(score_rule=rule), PAYLOAD, lambda: settings_for(fake_openai))
    assert outcome.status is ScoreStatus.SCORED
    assert outcome.score == 0.5  # 1 − 2/4
    assert outcome.fields == reply
    assert json.loads(outcome.raw_reply) == reply
    assert [m["role"] for m in outcome.messages] == ["system", "user"]
    assert outcome.result.reason == "Rated 2 (bad); issues: wrong time, unsafe. Score 0.5 of 1."


def test_try_definition_reports_problems_and_empty_inputs_without_calling(fake_openai):
    outcome = try_definition(definition(prompt_template="{output} {context}"), PAYLOAD, settings_for(fake_openai))
    assert outcome.status is ScoreStatus.INVALID_INPUT
    assert outcome.problems and outcome.problems[0].startswith("prompt_template: unknown placeholder {context}")
    outcome = try_definition(definition(), {"input": "", "output": "x"}, settings_for(fake_openai))
    assert outcome.status is ScoreStatus.INVALID_INPUT
    assert "uses {input}, but the run's input is empty" in outcome.error
    assert fake_openai.chat_call_count == 0


def test_try_definition_without_a_key_says_how_to_configure():
    outcome = try_definition(definition(), PAYLOAD, JudgeSettings(api_key=None, base_url=None))
    assert outcome.status is ScoreStatus.API_ERROR
    assert outcome.error.startswith("No API key for the judge.")
    assert outcome.messages is not None and outcome.raw_reply is None


def test_build_scorer_rejects_an_invalid_definition():
    with pytest.raises(InvalidInputError, match=r"score_rule.field: no field named 'nope'"):
        build_scorer(definition(score_rule={"kind": "boolean", "field": "nope"}), JudgeSettings(api_key="k"))


# ---------------------------------------------------------------- the built-in gluten checker


def test_gluten_definition_matches_the_python_gluten_checker(fake_openai):
    python_version = create_gluten_checker_scorer(settings=settings_for(fake_openai))
    from_definition = build_scorer(GLUTEN_CHECKER, settings_for(fake_openai))
    assert GLUTEN_CHECKER.instructions == GLUTEN_INSTRUCTIONS
    assert GLUTEN_CHECKER.prompt_template == GLUTEN_PROMPT
    assert from_definition.render_prompt(PAYLOAD) == python_version.render_prompt(PAYLOAD)
    ours = json_schema(GLUTEN_CHECKER)["properties"]
    assert {k: v["type"] for k, v in ours.items()} == {"isGlutenFree": "boolean", "glutenSources": "array"}
    assert ours["glutenSources"]["items"] == {"type": "string"}

    fake_openai.enqueue(
        Reply.json({"isGlutenFree": False, "glutenSources": ["soy sauce"]}),
        Reply.json({"isGlutenFree": True, "glutenSources": []}),
    )
    with_gluten = from_definition.run({"input": "x", "output": "Beef with soy sauce."})
    without = from_definition.run({"input": "x", "output": "Rice and beans."})
    assert (with_gluten.score, without.score) == (0.0, 1.0)
    assert with_gluten.reason == "Gluten-free: false. Gluten sources: soy sauce."
    assert without.reason == "Gluten-free: true. Gluten sources: none."


def test_a_copy_of_the_gluten_checker_can_be_edited():
    copy = GLUTEN_CHECKER.model_copy(
        update={
            "name": "Gluten checker (strict)",
            "output_fields": (
                *GLUTEN_CHECKER.output_fields,
                OutputField(name="confidence", type="number", min=0, max=1),
            ),
        }
    )
    assert validate_definition(copy) == []
    assert build_scorer(copy, JudgeSettings(api_key="k")).id == "judge:gluten-checker-strict"


def test_example_payload():
    example = JudgeExample(input="Q", output="A", ground_truth="", system="Be brief.")
    assert example.payload() == {
        "input": {
            "inputMessages": [{"role": "user", "content": "Q"}],
            "systemMessages": [{"role": "system", "content": "Be brief."}],
        },
        "output": {"text": "A"},
        "ground_truth": None,
    }


GLUTEN_AS_SAVED_JUDGE = {
    "name": "Gluten checker (saved judge)",
    "instructions": GLUTEN_INSTRUCTIONS,
    "prompt_template": "Check if this recipe is gluten-free:\n{output}",
    "output_fields": [
        {"name": "isGlutenFree", "type": "boolean", "description": "Whether the recipe is gluten-free"},
        {"name": "glutenSources", "type": "list_of_strings", "description": "Ingredients that contain gluten"},
    ],
    "score_rule": {"kind": "boolean", "field": "isGlutenFree", "true_is_good": True},
    "consistency_rules": [
        {"when": "isGlutenFree", "equals": True, "then": "glutenSources", "must_be": "empty"},
        {"when": "isGlutenFree", "equals": False, "then": "glutenSources", "must_be": "not_empty"},
    ],
}


def test_consistency_rules_make_the_gluten_checker_a_saved_judge(fake_openai):
    assert validate_definition(GLUTEN_AS_SAVED_JUDGE) == []
    rules = JudgeDefinition.model_validate(GLUTEN_AS_SAVED_JUDGE).consistency_rules
    assert rules[0].describe() == "if isGlutenFree is true then glutenSources is empty"
    # "Gluten-free" together with a list of gluten sources breaks the first rule: invalid output, as in the
    # built-in gluten checker (asked twice: once, then once again after the invalid reply).
    contradiction = {"isGlutenFree": True, "glutenSources": ["flour"]}
    fake_openai.enqueue(Reply.json(contradiction), Reply.json(contradiction))
    outcome = try_definition(GLUTEN_AS_SAVED_JUDGE, {"output": "Bread: flour, water."}, settings_for(fake_openai))
    assert outcome.status is ScoreStatus.JUDGE_OUTPUT_INVALID and outcome.score is None
    assert "if isGlutenFree is true then glutenSources is empty" in outcome.error
    # A consistent answer scores as the built-in does: gluten → 0.
    fake_openai.enqueue(Reply.json({"isGlutenFree": False, "glutenSources": ["flour"]}))
    scored = try_definition(GLUTEN_AS_SAVED_JUDGE, {"output": "Bread: flour, water."}, settings_for(fake_openai))
    assert scored.status is ScoreStatus.SCORED and scored.score == 0
    # A rule must name a boolean field and a list or text field.
    broken = dict(GLUTEN_AS_SAVED_JUDGE, consistency_rules=[{"when": "glutenSources", "then": "isGlutenFree"}])
    assert validate_definition(broken) == [
        "consistency_rules[0].when: 'glutenSources' must name a boolean output field",
        "consistency_rules[0].then: 'isGlutenFree' must name a list-of-strings or string output field",
    ]
