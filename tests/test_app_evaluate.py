"""AppTest tests of the Evaluate page (no network: the judge is the fake OpenAI server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, Reply
from judge_data import both_analysis
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent


def fill(at: AppTest, *, system: str = "", prompt: str = "", response: str = "", ground_truth: str = "") -> None:
    at.text_area(key="eval_system").input(system)
    at.text_area(key="eval_prompt").input(prompt)
    at.text_area(key="eval_response").input(response)
    at.text_area(key="eval_ground_truth").input(ground_truth)


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def rendered_text(block) -> str:
    """Every element proto under ``block`` as text (to look for strings that must not show)."""
    parts = [str(block.proto)] if getattr(block, "proto", None) is not None else []
    for child in getattr(block, "children", {}).values():
        parts.append(rendered_text(child))
    return "\n".join(parts)


def test_page_renders_without_exceptions(open_page):
    at = open_page()

    assert not at.exception
    assert at.title[0].value == "Evaluate"
    assert [t.label for t in at.text_area] == [
        "System message(s)",
        "User prompt",
        "Response to evaluate",
        "Ground truth (optional)",
        "Conversation as OpenAI messages JSON",
        "Context passages",
        "Tool calls (JSON)",
    ]
    options = at.selectbox(key="eval_scorer").options
    assert options[:3] == ["Prompt alignment", "Textual difference", "Gluten checker"]
    # every scorer of the catalogue can be chosen (MASTRA_SCORERS.md)
    assert {"Faithfulness", "Toxicity", "Content similarity", "Tone consistency"} <= set(options)
    key_field = at.sidebar.text_input(key="judge_api_key")
    assert key_field.proto.type == key_field.proto.PASSWORD
    captions = [c.value for c in at.sidebar.caption]
    assert "API key: none" in captions
    assert any("this browser session only" in c and "OPENAI_API_KEY" in c and "secrets.toml" in c for c in captions)


def test_textual_difference_metrics_and_diff(open_page):
    at = open_page()
    fill(at, response="The quick brown cat", ground_truth="The quick brown fox")
    at.selectbox(key="eval_scorer").set_value("textual-difference").run()
    at.button(key="eval_run").click().run()

    assert not at.exception
    assert not at.error
    # Common subsequence "The quick brown " = 16 characters; both texts have 19.
    ratio = 2 * 16 / (19 + 19)
    assert metrics(at) == {
        "Score": f"{ratio * 1.0 * 1.0:.3f}",
        "Ratio": f"{ratio:.3f}",
        "Changes": "1",
        "Length diff": "0.000",
        "Confidence": "1.000",
    }
    assert f"{ratio:.3f}" == "0.842"
    diff = at.get("html")[0].proto.body
    left, right = diff.split(">Response</div>")
    assert ">fox</del>" in left and "line-through" in left
    assert ">cat</ins>" in right
    assert at.get("plotly_chart")


def test_textual_difference_tiles_and_reason_write_the_same_numbers(open_page):
    at = open_page()
    # "ab" vs "ab" + 60 "c": similarity 2·2 / 64 = 0.0625, read 0.063 rounded half up (f"{0.0625:.3f}" gives
    # 0.062); length difference 60/62 = 0.9677 (0.968), confidence 2/62 = 0.0323 (0.032); score 0.002016 (0.002).
    fill(at, prompt="x", response="ab", ground_truth="ab" + "c" * 60)
    at.selectbox(key="eval_scorer").set_value("textual-difference").run()
    at.button(key="eval_run").click().run()
    assert not at.exception
    assert metrics(at) == {
        "Score": "0.002",
        "Ratio": "0.063",
        "Changes": "1",
        "Length diff": "0.968",
        "Confidence": "0.032",
    }
    assert any(
        m.value.startswith("**Reason:**")
        and m.value.endswith("Score = similarity 0.063 × length confidence 0.032 = 0.002.")
        for m in at.markdown
    )


def test_result_is_kept_across_widget_interactions(open_page):
    at = open_page()
    fill(at, response="hello world", ground_truth="hello there world")
    at.selectbox(key="eval_scorer").set_value("textual-difference").run()
    at.button(key="eval_run").click().run()
    run_id = at.session_state["eval_last"].run_id

    at.number_input(key="eval_opt_textual-difference_scale").set_value(10.0).run()
    at.text_area(key="eval_response").input("something else").run()

    assert at.session_state["eval_last"].run_id == run_id
    assert metrics(at)["Changes"] == "1"


@pytest.mark.parametrize("scorer_id", ["prompt-alignment", "gluten-checker"])
def test_llm_scorer_without_key_says_how_to_configure(open_page, scorer_id):
    at = open_page()
    fill(at, prompt="Give me a pasta recipe.", response="Boil pasta, add tomato sauce.")
    at.selectbox(key="eval_scorer").set_value(scorer_id).run()
    at.button(key="eval_run").click().run()

    assert not at.exception
    assert len(at.error) == 1
    message = at.error[0].value.replace("\\", "")  # the page escapes Markdown
    assert "No API key for the judge" in message
    assert "OPENAI_API_KEY" in message and ".streamlit/secrets.toml" in message
    assert "OPENAI_BASE_URL=http://localhost:11434/v1" in message
    assert not at.metric


def test_loading_a_sample_example_fills_the_form(open_page):
    lines = (ROOT / "sample_data" / "examples.jsonl").read_text(encoding="utf-8").splitlines()
    examples = [json.loads(line) for line in lines if line.strip()]
    example = next(e for e in examples if e["scorer"] == "textual-difference" and e["ground_truth"])

    at = open_page()
    at.selectbox(key="sample_choice").set_value(example["id"]).run()
    at.button(key="sample_load").click().run()

    assert not at.exception
    assert at.text_area(key="eval_system").value == example["system"]
    assert at.text_area(key="eval_prompt").value == example["prompt"]
    assert at.text_area(key="eval_response").value == example["response"]
    assert at.text_area(key="eval_ground_truth").value == example["ground_truth"]
    assert at.selectbox(key="eval_scorer").value == "textual-difference"

    at.button(key="eval_run").click().run()
    assert not at.error
    assert "Ratio" in metrics(at)


def dimension_set(scores: tuple[float, float, float, float], unmet: str) -> dict:
    intent, requirements, completeness, appropriateness = scores
    return {
        "intentAlignment": {
            "score": intent,
            "primaryIntent": "Explain binary search",
            "isAddressed": True,
            "reasoning": "It explains the halving step.",
        },
        "requirementsFulfillment": {
            "requirements": [
                {"requirement": "Give a Python example", "isFulfilled": True, "reasoning": "A function is shown."},
                {"requirement": unmet, "isFulfilled": False, "reasoning": "Not mentioned."},
            ],
            "overallScore": requirements,
        },
        "completeness": {"score": completeness, "missingElements": ["edge cases"], "reasoning": "Short."},
        "responseAppropriateness": {
            "score": appropriateness,
            "formatAlignment": True,
            "toneAlignment": appropriateness == 1.0,
            "reasoning": "Code block.",
        },
    }


def test_prompt_alignment_through_the_fake_judge(open_page, fake_judge: FakeOpenAI):
    fake_judge.enqueue(
        Reply.json(
            {
                "user": dimension_set((0.9, 0.8, 0.7, 1.0), "Mention the time complexity"),
                "system": dimension_set((1.0, 0.5, 1.0, 0.5), "Answer in British English"),
                "overallAssessment": "Clear, but misses the complexity.",
            }
        )
    )
    at = open_page()
    fill(
        at,
        system="You are a tutor.\n---\nUse British English.",
        prompt="Explain binary search with a Python example and its time complexity.",
        response="Binary search halves the range each step: def search(xs, x): ...",
    )
    at.button(key="eval_run").click().run()

    assert not at.exception
    assert not at.error
    # U = .4·.9 + .3·.8 + .2·.7 + .1·1 = 0.84; S = .35·1 + .35·.5 + .15·1 + .15·.5 = 0.75;
    # W = .7·0.84 + .3·0.75 = 0.813 -> 0.81.
    shown = metrics(at)
    assert shown["Prompt alignment (0–1)"] == "0.810"
    assert shown["User score (0–1, weight 70%)"] == "0.840"
    assert shown["System score (0–1, weight 30%)"] == "0.750"
    assert at.metric[0].proto.delta == "very good alignment with small gaps"
    markdown = [m.value for m in at.markdown]
    assert ":red-badge[NO: not fulfilled] **Mention the time complexity** — Not mentioned." in markdown
    assert ":red-badge[NO: not fulfilled] **Answer in British English** — Not mentioned." in markdown
    assert (
        ":green-badge[YES: fulfilled] **Give a Python example** — A function is shown." in markdown
    )  # words, not a glyph alone
    assert len(at.get("plotly_chart")) == 2

    request = fake_judge.last_chat_request()
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert "Use British English." in fake_judge.last_prompt_text()
    assert fake_judge.last_api_key() == "test-key"
    assert "API key: from environment" in [c.value for c in at.sidebar.caption]

    # The key never reaches the page or the exported JSON.
    assert "test-key" not in rendered_text(at.main) + rendered_text(at.sidebar)
    assert "test-key" not in json.dumps(at.session_state["eval_last"].to_dict())

    # Widget interactions show the stored result without calling the judge again.
    at.radio(key="pa_mode").set_value("user").run()
    assert fake_judge.chat_call_count == 1
    assert metrics(at)["Prompt alignment (0–1)"] == "0.810"


def test_prompt_alignment_writes_one_figure_for_the_score_and_says_how_it_comes_from_w(
    open_page, fake_judge: FakeOpenAI
):
    # A fresh user's run (IFEval row 1005, both mode): U = .4·.6 + .3·.1 + .2·.5 + .1·.5 = 0.42;
    # S = .35·1 + .35·.2 + .15·.5 + .15·1 = 0.645; W = .7·0.42 + .3·0.645 = 0.294 + 0.1935 = 0.4875, and the score
    # is W rounded half up to 2 decimals, 0.49. The page read 0.490 (tile), 0.49 (gauge), W = 0.488 (chart) and
    # User score 0.42 beside System score 0.645.
    fake_judge.enqueue(
        Reply.json(
            {
                "user": dimension_set((0.6, 0.1, 0.5, 0.5), "Include at least 12 placeholders"),
                "system": dimension_set((1.0, 0.2, 0.5, 1.0), "Answer in under 50 words"),
                "overallAssessment": "Too long, too few placeholders.",
            }
        )
    )
    at = open_page()
    fill(
        at,
        system="Answer in under 50 words.",
        prompt="Write a resume for a fresh high school graduate who is seeking their first job.",
        response="[Name]\n[Address]\nObjective: ...",
    )
    at.button(key="eval_run").click().run()

    assert not at.exception
    shown = metrics(at)
    assert shown["Prompt alignment (0–1)"] == "0.490"
    assert shown["User score (0–1, weight 70%)"] == "0.420"
    assert shown["System score (0–1, weight 30%)"] == "0.645"
    gauge, dimensions = (json.loads(chart.proto.spec) for chart in at.get("plotly_chart"))
    assert [a["text"] for a in gauge["layout"]["annotations"]] == ["0.490"]
    assert dimensions["layout"]["title"]["text"] == "Weighted score W = 0.4875 (sum of the contributions)"
    assert (
        "Weighted score W = 0.4875 (the sum of the contributions); the score is W × 1 rounded half up to 2 decimals "
        "(Mastra's rule): 0.490."
    ) in [m.value for m in at.markdown]


def test_prompt_alignment_writes_w_exactly_so_the_page_never_rounds_it_twice(open_page, fake_judge: FakeOpenAI):
    # U = .4·.9 + .3·.75 + .2·.15 + .1·1 = 0.715; S = .35·.48 + .35·.48 + .15·.26 + .15·.71 = 0.4815;
    # W = .7·0.715 + .3·0.4815 = 0.64495, rounded half up to 2 decimals: 0.64 (tile 0.640). The page read
    # W = 0.6450 beside it.
    fake_judge.enqueue(Reply.json(both_analysis((0.9, 0.75, 0.15, 1.0), (0.48, 0.48, 0.26, 0.71))))
    at = open_page()
    fill(
        at, system="Answer in under 50 words.", prompt="Write a factorial function in Python.", response="def f(n): ..."
    )
    at.button(key="eval_run").click().run()

    assert not at.exception
    assert metrics(at)["Prompt alignment (0–1)"] == "0.640"
    _, dimensions = (json.loads(chart.proto.spec) for chart in at.get("plotly_chart"))
    assert dimensions["layout"]["title"]["text"] == "Weighted score W = 0.64495 (sum of the contributions)"
    assert (
        "Weighted score W = 0.64495 (the sum of the contributions); the score is W × 1 rounded half up to 2 "
        "decimals (Mastra's rule): 0.640."
    ) in [m.value for m in at.markdown]


def test_test_connection_button(open_page, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    fake_openai.enqueue(Reply.json({"ok": True}))
    at = open_page()
    at.sidebar.button(key="judge_test_connection").click().run()

    assert not at.exception
    assert fake_openai.chat_call_count == 1  # one real structured call, not a model listing
    assert at.sidebar.success[0].value.startswith(
        f"Connected to {fake_openai.base_url}: gpt-4o-mini answered a structured call in "
    )
    assert at.sidebar.success[0].value.endswith("; strict JSON schema output works; temperature 0; seed 42.")


def test_a_base_url_without_v1_gets_a_hint_under_the_field(open_page):
    at = open_page()
    hint = "OpenAI-compatible servers usually serve the API under /v1: try http://localhost:8000/v1."
    assert hint not in [c.value for c in at.sidebar.caption]  # empty field: OpenAI's API, nothing to say
    at.sidebar.text_input(key="judge_base_url").set_value("http://localhost:8000").run()
    assert hint in [c.value for c in at.sidebar.caption]
    at.sidebar.text_input(key="judge_base_url").set_value("http://localhost:8000/v1").run()
    assert not [c.value for c in at.sidebar.caption if "under /v1" in c.value]


def test_the_max_output_tokens_field_says_what_0_means_in_its_label(open_page):
    at = open_page()
    field = at.sidebar.number_input(key="judge_max_tokens")
    assert (field.label, field.value) == ("Max output tokens per call (0: the server's default)", 0)


def test_both_mode_without_system_message_shows_the_fallback_note(open_page, fake_judge: FakeOpenAI):
    fake_judge.enqueue(Reply.json({**dimension_set((1.0, 1.0, 1.0, 1.0), "Be short"), "overallAssessment": "Fine."}))
    at = open_page()
    fill(at, prompt="Explain binary search.", response="It halves the range.")
    at.button(key="eval_run").click().run()

    assert not at.exception
    assert metrics(at) == {"Prompt alignment (0–1)": "1.000"}
    assert at.info[0].value.startswith("No system message was given, so the run was scored in user mode")
    assert "Evaluation mode: both, scored in user mode" in [c.value for c in at.caption]


def test_invalid_judge_output_shows_the_error_and_the_raw_reply(open_page, fake_judge: FakeOpenAI):
    fake_judge.enqueue(Reply.content("I think it is fine."), Reply.content("Still not JSON <b>"))
    at = open_page()
    fill(at, prompt="Explain binary search.", response="It halves the range.")
    at.radio(key="pa_mode").set_value("user").run()
    at.button(key="eval_run").click().run()

    assert not at.exception
    assert at.error[0].value.startswith("Not scored (Judge output invalid): The judge")
    assert at.expander[-1].label == "The judge's raw reply"
    assert at.code[0].value == "Still not JSON <b>"


def test_gluten_checker_shows_the_verdict_and_sources(open_page, fake_judge: FakeOpenAI):
    fake_judge.enqueue(Reply.json({"isGlutenFree": False, "glutenSources": ["soy sauce", "flour"]}))
    at = open_page()
    fill(at, response="Stir-fry beef with soy sauce; dust with flour.")
    at.selectbox(key="eval_scorer").set_value("gluten-checker").run()
    at.button(key="eval_run").click().run()

    assert not at.exception
    assert metrics(at) == {"Verdict": "Contains gluten", "Score (0–1)": "0.000"}
    markdown = [m.value for m in at.markdown]
    assert "**Gluten sources**\n- soy sauce\n- flour" in markdown
    assert "**Reason:** This recipe contains gluten because of: soy sauce, flour." in markdown


def test_a_reply_from_the_judge_cache_says_so_beside_its_zero_calls(open_page, fake_judge: FakeOpenAI):
    fake_judge.enqueue(Reply.json({"isGlutenFree": True, "glutenSources": []}))
    at = open_page()
    fill(at, response="Rice with steamed vegetables.")
    at.selectbox(key="eval_scorer").set_value("gluten-checker").run()
    at.button(key="eval_run").click().run()
    first = [c.value for c in at.caption if c.value.startswith("Judge: ")]
    assert len(first) == 1 and first[0].endswith(" in 1 answered call of 1 HTTP request to the judge")

    at.button(key="eval_run").click().run()  # the same texts again: answered by the cache
    assert fake_judge.chat_call_count == 1
    (again,) = [c.value for c in at.caption if c.value.startswith("Judge: ")]
    assert again.endswith(
        " = 0 in 0 answered calls of 0 HTTP requests to the judge (the reply came from the judge cache: no call, no cost)"
    )


def test_catalogue_scorer_with_context_through_the_fake_judge(open_page, fake_judge: FakeOpenAI):
    at = open_page()
    fill(at, prompt="When was the Eiffel Tower finished?", response="It was finished in 1889 and is red.")
    at.text_area(key="eval_context").input("The Eiffel Tower was completed in 1889.\n---\nIt is bronze.")
    at.selectbox(key="eval_scorer").set_value("faithfulness").run()
    # two claims, one supported: 1 / 2 = 0.5
    fake_judge.enqueue(
        Reply.json(
            {
                "claims": [
                    {"claim": "It was finished in 1889.", "verdict": "yes", "reason": "Passage 1 says so."},
                    {"claim": "It is red.", "verdict": "no", "reason": "Passage 2 says bronze."},
                ]
            }
        )
    )
    at.button(key="eval_run").click().run()
    assert not at.exception
    prompt = fake_judge.last_prompt_text()
    assert "The Eiffel Tower was completed in 1889." in prompt and "It is bronze." in prompt
    assert "0.5" in rendered_text(at.main)


def test_code_scorer_from_the_catalogue_and_a_tool_call_json_error(open_page):
    at = open_page()
    fill(at, prompt="q", response="night", ground_truth="nacht")
    at.selectbox(key="eval_scorer").set_value("content-similarity").run()
    at.button(key="eval_run").click().run()
    assert not at.exception
    # bigrams ni ig gh ht vs na ac ch ht: 1 common; 2·1 / (5 + 5 − 2) = 0.25
    assert "0.25" in rendered_text(at.main)
    at.text_area(key="eval_tool_calls").input("[{not json")
    at.button(key="eval_run").click().run()
    assert not at.exception
    assert any("not valid JSON at line 1, column 3" in e.value and "tool" in e.value for e in at.error)


def test_a_pasted_conversation_ending_with_a_user_turn_is_not_scored_on_an_earlier_exchange(open_page):
    at = open_page()
    turns = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Give me a haiku about rain"},
    ]
    at.text_area(key="eval_conversation").input(json.dumps(turns))
    at.selectbox(key="eval_scorer").set_value("Textual difference").run()
    at.button(key="eval_run").click().run()
    assert not at.exception
    assert not at.metric  # before: "Hello" scored against "Hi"
    assert [e.value for e in at.error] == [
        "Not scored (Missing input): output: the run has no 'output' (the response to evaluate): the conversation "
        "ends with a user turn, not an assistant reply (its response is its final message only when that is the "
        "assistant's)"
    ]


def test_a_plain_string_pasted_as_the_conversation_is_read_as_the_prompt_as_the_cli_and_batch_read_it(open_page):
    at = open_page()
    # Not JSON: before, invalid_input ("not valid JSON ..."); the CLI and Batch read such a messages cell as the
    # prompt's text, and so does Evaluate now, saying so under the field.
    at.text_area(key="eval_conversation").input("abcd")
    at.text_area(key="eval_response").input("abcx")
    at.selectbox(key="eval_scorer").set_value("Textual difference").run()
    assert (
        "Read as the user prompt's text: it is not a JSON list of messages (as the Batch page and the CLI read such "
        "a cell); it replaces the User prompt field." in [c.value for c in at.caption]
    )
    at.button(key="eval_run").click().run()
    assert not at.exception and not at.error
    # No ground truth: the response is compared with the prompt. "abcx" vs "abcd": LCS "abc" = 3 → 2·3 / 8 = 0.75;
    # equal lengths → confidence 1 → score 0.75.
    assert metrics(at)["Score"] == "0.750"
    # A JSON list of messages is a conversation, and says how many messages.
    at.text_area(key="eval_conversation").input(json.dumps([{"role": "user", "content": "abcd"}])).run()
    assert "Read as a conversation of 1 message (it replaces the user prompt)." in [c.value for c in at.caption]
