"""AppTest tests of the Catalogue page: every scorer's facts, judge calls next to Mastra's, and runnable examples."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, Reply
from streamlit.testing.v1 import AppTest

from scorers import SCORERS, Store
from scorers.catalogue.judge_store import save_judge


def show(at: AppTest, scorer_id: str) -> AppTest:
    at.selectbox(key="cat_scorer").set_value(scorer_id).run()
    assert not at.exception
    return at


def markdown(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown).replace("\\", "")


def test_every_scorer_is_listed_with_its_judge_calls(open_page):
    at = open_page("catalogue")

    table = at.dataframe[0].value.set_index("Id")
    assert list(table.index) == list(SCORERS)
    assert table.loc["answer-relevancy", "Judge calls"] == "1 (Mastra: 3)"
    assert table.loc["prompt-alignment", "Judge calls"] == "1 (Mastra: 2)"
    assert table.loc["checklist-rubric", "Judge calls"] == "1 (Mastra: 1)"
    assert table.loc["gluten-checker", "Judge calls"] == "1"
    assert table.loc["completeness", "Judge calls"] == "0 (code)"
    assert table.loc["toxicity", "Higher is better"] == "no"
    assert table.loc["textual-difference", "Kind"] == "code"
    assert at.selectbox(key="cat_scorer").options[0] == "Prompt alignment · prompt-alignment"


def test_a_scorer_shows_what_it_measures_its_formula_options_and_notes(open_page):
    at = show(open_page("catalogue"), "hallucination")
    text = markdown(at)
    spec = SCORERS["hallucination"]
    assert f"**What it measures:** {spec.measures}" in text
    assert f"- **Formula:** {spec.formula}" in text
    assert "- **Higher is better:** no: lower is better" in text
    assert "- **Judge calls per run:** 1 (Mastra: 3)" in text
    assert list(at.dataframe[1].value["Option"]) == [o.name for o in spec.options]
    assert "**Notes:**" in text
    assert "**Language processing**" not in text  # LLM judges use no NLP library


@pytest.mark.parametrize(
    ("scorer_id", "library"),
    [
        ("keyword-coverage", "[stop-words](https://pypi.org/project/stop-words/) 2018.7.23"),
        ("tone-consistency", "[pysbd](https://pypi.org/project/pysbd/) splits the response into sentences"),
        ("completeness", "[lemminflect](https://pypi.org/project/lemminflect/) gives the base form of verbs"),
        ("textual-difference", "[rapidfuzz](https://pypi.org/project/rapidfuzz/)"),
    ],
)
def test_code_scorers_say_which_language_libraries_they_use(open_page, scorer_id, library):
    text = markdown(show(open_page("catalogue"), scorer_id))
    assert "**Language processing**" in text
    assert library in text


def test_a_code_scorer_example_runs_without_a_key(open_page):
    at = show(open_page("catalogue"), "textual-difference")
    at.button(key="cat_run").click().run()

    assert not at.exception
    assert not at.error
    # "The quick brown cat" vs "The quick brown fox": LCS "The quick brown " = 16 of 19 characters each;
    # ratio = 2·16 / 38 = 0.842, equal lengths → confidence 1.
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Ratio"] == "0.842" and metrics["Changes"] == "1"


def test_an_llm_example_without_a_key_says_how_to_configure(open_page):
    at = show(open_page("catalogue"), "answer-relevancy")
    at.button(key="cat_run").click().run()

    assert not at.exception
    assert "No API key for the judge" in at.error[0].value.replace("\\", "")


def test_a_saved_judge_is_listed_and_its_example_runs(open_page, studio_db: Path, fake_judge: FakeOpenAI):
    store = Store(studio_db)
    try:
        save_judge(
            store,
            {
                "name": "Politeness",
                "description": "Whether a customer-service reply is polite.",
                "instructions": "You check the tone of customer-service replies.",
                "prompt_template": "Is this reply polite?\n{output}",
                "output_fields": [{"name": "rating", "type": "number", "min": 1, "max": 5, "integer": True}],
                "score_rule": {"kind": "number", "field": "rating"},
                "reason_template": "Rated {rating} of 5.",
                "example": {"input": "Where is my parcel?", "output": "It arrives tomorrow, sorry for the wait!"},
            },
        )
    finally:
        store.close()
    fake_judge.enqueue(Reply.json({"rating": 4}))

    at = open_page("catalogue")
    assert list(at.dataframe[0].value["Id"])[-1] == "judge:politeness"
    show(at, "judge:politeness")
    text = markdown(at)
    assert "**What it measures:** Whether a customer-service reply is polite." in text
    assert "- **Formula:** (rating − 1) / (5 − 1); × scale (1), rounded half up to 2 decimals" in text
    assert "- **Judge calls per run:** 1" in text
    at.button(key="cat_run").click().run()

    assert not at.exception
    assert {m.label: m.value for m in at.metric} == {"Score": "0.750"}  # (4 − 1) / (5 − 1)
    assert "**Reason:** Rated 4 of 5." in [m.value for m in at.markdown]
    assert "It arrives tomorrow, sorry for the wait!" in fake_judge.last_prompt_text()
