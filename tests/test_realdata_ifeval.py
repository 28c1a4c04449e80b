"""Real input: IFEval prompts with GPT-4's responses (tests/data/ifeval_gpt4)."""

from __future__ import annotations

import pytest
from fake_openai import Reply
from judge_data import settings_for, single_analysis
from realdata import read_jsonl

from scorers import create_prompt_alignment_scorer, create_textual_difference_scorer

ROWS = read_jsonl("ifeval_gpt4/input_response_data_gpt4_20231107_145030.jsonl", limit=25)


def test_the_dataset_is_the_real_one():
    assert len(ROWS) == 25
    assert ROWS[0]["prompt"].startswith("Write a 300+ word summary of the wikipedia page")
    assert all(r["response"].strip() for r in ROWS)


def test_prompt_alignment_on_real_rows_sends_the_real_texts(fake_openai):
    fake_openai.responder = lambda body: Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0))
    scorer = create_prompt_alignment_scorer(options={"evaluation_mode": "user"}, settings=settings_for(fake_openai))
    for i, row in enumerate(ROWS):
        result = scorer.run(
            {"input": [{"role": "user", "content": row["prompt"]}], "output": {"text": row["response"]}}
        )
        assert result.score == 0.84  # the scripted dimensions 0.9/0.8/0.7/1.0 in user mode
        prompt = fake_openai.prompt_text(i)
        assert f"<user_prompt>\n{row['prompt']}\n</user_prompt>" in prompt
        assert f"<response>\n{row['response']}\n</response>" in prompt
    assert fake_openai.chat_call_count == len(ROWS)


@pytest.mark.parametrize("row", ROWS[:10], ids=lambda r: r["prompt"][:30])
def test_textual_difference_of_response_against_prompt(row):
    result = create_textual_difference_scorer().run({"input": row["prompt"], "output": row["response"]})
    a, b = row["prompt"], row["response"]
    length_diff = abs(len(a) - len(b)) / max(len(a), len(b))
    analysis = result.analyze_step_result
    assert analysis["lengthDiff"] == pytest.approx(length_diff)
    assert result.score == pytest.approx(analysis["ratio"] * (1 - length_diff))
    assert 0 <= analysis["ratio"] <= 1 and analysis["changes"] >= 1
