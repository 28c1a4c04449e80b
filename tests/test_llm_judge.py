"""Custom LLM judges and the gluten checker, through the fake judge server."""

from __future__ import annotations

import pytest
from fake_openai import Reply
from judge_data import settings_for
from pydantic import BaseModel, ConfigDict
from realdata import read_jsonl

from scorers import (
    InvalidInputError,
    JudgeOutputInvalidError,
    create_gluten_checker_scorer,
    create_llm_judge_scorer,
    template_placeholders,
)
from scorers.catalogue.llm_judge import GLUTEN_PROMPT

RECIPE = "Mix flour, water and soy sauce; knead the dough and boil the noodles."


def test_gluten_checker_contains_gluten(fake_openai):
    fake_openai.enqueue(Reply.json({"isGlutenFree": False, "glutenSources": ["flour", "soy sauce"]}))
    result = create_gluten_checker_scorer(settings=settings_for(fake_openai)).run(
        {"input": "Make noodles", "output": RECIPE}
    )
    assert result.score == 0
    assert result.analyze_step_result == {"isGlutenFree": False, "glutenSources": ["flour", "soy sauce"]}
    assert result.reason == "This recipe contains gluten because of: flour, soy sauce."
    prompt = fake_openai.last_prompt_text()
    assert "<response>\n" + RECIPE + "\n</response>" in prompt
    assert '{"isGlutenFree": false, "glutenSources": ["flour"]}' in prompt  # literal braces survive
    assert "Master Chef" in fake_openai.last_chat_request()["messages"][0]["content"]


def test_gluten_checker_gluten_free(fake_openai):
    fake_openai.enqueue(Reply.json({"isGlutenFree": True, "glutenSources": []}))
    result = create_gluten_checker_scorer(settings=settings_for(fake_openai)).run(
        {"input": "rice and beans", "output": "Simmer rice, black beans and peppers."}
    )
    assert result.score == 1
    assert "gluten-free" in result.reason
    assert result.to_dict()["analyzeStepResult"] == {"isGlutenFree": True, "glutenSources": []}


def test_gluten_verdict_contradicting_its_sources_is_invalid(fake_openai):
    contradictory = {"isGlutenFree": True, "glutenSources": ["barley"]}
    fake_openai.enqueue(Reply.json(contradictory), Reply.json(contradictory))
    with pytest.raises(JudgeOutputInvalidError, match="isGlutenFree is true but glutenSources lists"):
        create_gluten_checker_scorer(settings=settings_for(fake_openai)).run({"input": "x", "output": "barley soup"})


def test_gluten_checker_on_real_recipes(fake_openai):
    recipes = read_jsonl("recipes_public_domain/recipes.jsonl", limit=5)
    scorer = create_gluten_checker_scorer(settings=settings_for(fake_openai))

    def responder(body):
        text = body["messages"][1]["content"].lower()
        sources = [w for w in ("flour", "pasta", "macaroni", "bread", "soy sauce") if w in text]
        return Reply.json({"isGlutenFree": not sources, "glutenSources": sources})

    fake_openai.responder = responder
    for i, recipe in enumerate(recipes):
        result = scorer.run({"input": f"Recipe for {recipe['title']}", "output": recipe["recipe_text"]})
        assert recipe["recipe_text"] in fake_openai.prompt_text(i)
        assert result.score == (1 if result.analyze_step_result["isGlutenFree"] else 0)
    # Älplermagronen (Alpine macaroni) is the first recipe: macaroni is wheat pasta
    assert "macaroni" in fake_openai.chat_requests()[0]["messages"][1]["content"].lower()


@pytest.mark.parametrize(
    ("template", "placeholders"),
    [
        ("Q: {input}\nA: {output}", ["input", "output"]),
        ('Rate {output} against {ground_truth}. Reply {"score": 0.5}', ["output", "ground_truth"]),
        ("{system}\n{output}\n{{literal}}", ["system", "output"]),
        (GLUTEN_PROMPT, ["output"]),
    ],
)
def test_template_placeholders(template, placeholders):
    assert template_placeholders(template) == placeholders


def test_unknown_placeholder_is_rejected_with_its_position():
    with pytest.raises(InvalidInputError) as info:
        template_placeholders("Answer: {output}\nContext: {context}")
    assert "{context}" in str(info.value) and "line 2, column 10" in str(info.value)
    with pytest.raises(InvalidInputError, match="uses no placeholder"):
        template_placeholders('Only {"json": true}')


class Verdict(BaseModel):
    model_config = ConfigDict(strict=True)
    correct: bool
    confidence: float


def make_judge(fake, **kw):
    values = dict(
        name="Answer checker",
        instructions="You check answers against a reference.",
        prompt_template="Question: {input}\nAnswer: {output}\nReference: {ground_truth}",
        output_schema=Verdict,
        score=lambda a: 1.0 if a["correct"] else 0.0,
        reason="Correct: {correct} (confidence {confidence}); score {score}.",
        settings=settings_for(fake),
    )
    values.update(kw)
    return create_llm_judge_scorer(**values)


def test_custom_judge_renders_every_field_as_data_and_scores_in_code(fake_openai):
    fake_openai.enqueue(Reply.json({"correct": True, "confidence": 0.9}))
    judge = make_judge(fake_openai, scale=5)
    result = judge.run({"input": "Capital of France? {output}", "output": "Paris", "ground_truth": "Paris"})
    assert judge.id == "answer-checker"
    assert result.score == 5.0
    assert result.reason == "Correct: True (confidence 0.9); score 5.0."
    prompt = fake_openai.last_prompt_text()
    assert "<input>\nCapital of France? {output}\n</input>" in prompt  # values are not re-expanded
    assert "<ground_truth>\nParis\n</ground_truth>" in prompt


def test_custom_judge_needs_the_fields_its_template_uses(fake_openai):
    with pytest.raises(InvalidInputError, match="ground truth is empty"):
        make_judge(fake_openai).run({"input": "q", "output": "a"})
    assert fake_openai.chat_call_count == 0


def test_custom_judge_with_a_json_schema(fake_openai):
    schema = {
        "type": "object",
        "properties": {
            "label": {"type": "string", "enum": ["good", "bad"]},
            "rating": {"type": "integer", "minimum": 1, "maximum": 5},
            "issues": {"type": "array", "items": {"type": "string"}},
        },
    }
    judge = make_judge(fake_openai, output_schema=schema, score=lambda a: (a["rating"] - 1) / 4, reason=None)
    fake_openai.enqueue(Reply.json({"label": "good", "rating": 4, "issues": []}))
    result = judge.run({"input": "q", "output": "a", "ground_truth": "a"})
    assert result.score == 0.75  # (4 − 1) / 4
    sent = fake_openai.last_chat_request()["response_format"]["json_schema"]["schema"]
    assert sent["additionalProperties"] is False and sent["required"] == ["label", "rating", "issues"]
    fake_openai.enqueue(
        Reply.json({"label": "meh", "rating": 9, "issues": []}), Reply.json({"label": "meh", "rating": 9, "issues": []})
    )
    with pytest.raises(JudgeOutputInvalidError) as info:
        judge.run({"input": "q", "output": "a", "ground_truth": "a"})
    assert "label" in str(info.value) and "rating" in str(info.value)


def test_a_score_rule_outside_0_1_is_not_a_score(fake_openai):
    fake_openai.enqueue(Reply.json({"correct": True, "confidence": 0.9}))
    with pytest.raises(JudgeOutputInvalidError, match="expected a number in"):
        make_judge(fake_openai, score=lambda a: a["confidence"] * 10).run(
            {"input": "q", "output": "a", "ground_truth": "a"}
        )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": " "}, "needs a name"),
        ({"instructions": ""}, "instructions"),
        ({"reason": "{verdict}"}, "not an output field"),
        ({"scale": 0}, "scale"),
        ({"output_schema": {"type": "object", "properties": {"x": {"type": "object"}}}}, "unsupported type"),
        ({"prompt_template": "{output} {answer}"}, "unknown placeholder"),
    ],
)
def test_judge_definition_errors(fake_openai, change, message):
    with pytest.raises(InvalidInputError, match=message):
        make_judge(fake_openai, **change)
