"""Generating responses with target models: templates, Judge.complete_text, generate_responses, items.

Every model is the fake OpenAI-compatible server on 127.0.0.1 (no network).
"""

from __future__ import annotations

import threading

import pandas as pd
import pytest
from fake_openai import Reply
from judge_data import settings_for

from scorers import (
    InvalidInputError,
    JudgeOutputTruncatedError,
    JudgeRefusalError,
    ScoreStatus,
    Store,
    create_textual_difference_scorer,
    run_evals,
)
from scorers.analysis.compare import paired
from scorers.analysis.generate import (
    JudgingBasis,
    Variant,
    comparison_items,
    failed_generations,
    generate_responses,
    generation_costs,
    guess_variant_column,
    items_from_responses,
    render_variant,
    template_columns,
    validate_variant,
)
from scorers.core.judge import Judge
from scorers.runs.export import results_frame

ROWS = [
    {"id": "q1", "question": "What is 2+2?", "answer": "4"},
    {"id": "q2", "question": "Capital of France?", "answer": "Paris"},
    {"id": "q3", "question": "Colour of the sky?", "answer": "Blue"},
]
A = Variant("A", "gpt-4o-mini", prompt_template="Question: {question}")
B = Variant(
    "B",
    "fake-target",
    system_prompt="Answer in one word.",
    prompt_template="Q: {question}\nA:",
    temperature=0.7,
    max_tokens=50,
    seed=7,
)


def user_text(body: dict) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def echo(body: dict) -> Reply:
    """The 'model' answers with its name and the user message it received."""
    return Reply.content(f"{body['model']} says: {user_text(body)}")


# ---- templates ---------------------------------------------------------------------------------------


def test_template_columns_reads_column_names_and_leaves_other_braces_literal():
    template = 'Context: {context}\nQ: {user question}\nReply as {"answer": "..."} {{not_a_column}} {question}'
    assert template_columns(template) == ["context", "user question", "question"]
    assert template_columns("質問: {質問}") == ["質問"]
    assert template_columns("no placeholders {1} { x } {}") == []


def test_unknown_column_names_the_placeholder_its_position_and_the_columns():
    variant = Variant("A", "gpt-4o-mini", prompt_template="Answer this.\nQ: {questoin}")
    with pytest.raises(InvalidInputError) as info:
        validate_variant(variant, ["id", "question", "answer"])
    message = str(info.value)
    assert "{questoin}" in message
    assert "line 2, column 4" in message
    assert "{id}, {question}, {answer}" in message
    assert info.value.field == "variants.A.prompt_template"


@pytest.mark.parametrize(
    ("variant", "needle"),
    [
        (Variant("A", "m", prompt_template="Answer briefly."), "uses no dataset column"),
        (Variant("", "m"), "needs a name"),
        (Variant("A", ""), "model is empty"),
        (Variant("A", "m", prompt_template="{question}", temperature=3.0), "temperature"),
        (Variant("A", "m", prompt_template="{question}", max_tokens=0), "max_tokens"),
    ],
)
def test_invalid_variants_are_rejected_before_any_call(variant, needle):
    with pytest.raises(InvalidInputError, match=needle):
        validate_variant(variant, ["question"])


def test_render_variant_fills_once_and_keeps_literal_braces():
    variant = Variant("B", "m", system_prompt="Be brief.", prompt_template='{{q}} {q} -> {"a": 1}')
    messages = render_variant(variant, {"q": "Why {x}?"})
    assert messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": '{q} Why {x}? -> {"a": 1}'},
    ]
    assert render_variant(A, {"question": 3.0}) == [{"role": "user", "content": "Question: 3"}]
    with pytest.raises(InvalidInputError, match="empty"):
        render_variant(A, {"question": float("nan")})


# ---- Judge.complete_text ---------------------------------------------------------------------------


def test_complete_text_sends_no_schema_and_returns_the_text(fake_openai):
    fake_openai.enqueue(Reply.content("Paris.", usage={"prompt_tokens": 11, "completion_tokens": 2}))
    judge = Judge(settings_for(fake_openai, model="openai/gpt-4o-mini"))
    reply = judge.complete_text(
        [{"role": "user", "content": "Capital of France?"}], temperature=0.5, seed=3, max_tokens=20
    )
    assert reply.text == "Paris."
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.calls) == (11, 2, 1)
    body = fake_openai.last_chat_request()
    assert "response_format" not in body
    assert body["model"] == "gpt-4o-mini"
    assert (body["temperature"], body["seed"], body["max_completion_tokens"]) == (0.5, 3, 20)
    assert reply.info.parameters["responseFormat"] == "text"
    assert not reply.info.cached


def test_complete_text_maps_truncation_and_refusal(fake_openai):
    judge = Judge(settings_for(fake_openai))
    fake_openai.enqueue(Reply.truncated("Once upon a"), Reply.refusal("I can't."), Reply.content_filter())
    messages = [{"role": "user", "content": "Tell a story."}]
    with pytest.raises(JudgeOutputTruncatedError) as info:
        judge.complete_text(messages, max_tokens=3)
    assert info.value.raw_reply == "Once upon a"
    assert "3 tokens" in str(info.value)
    with pytest.raises(JudgeRefusalError, match="I can't"):
        judge.complete_text(messages)
    with pytest.raises(JudgeRefusalError, match="content filter"):
        judge.complete_text(messages)


def test_complete_text_retries_server_errors(fake_openai):
    fake_openai.enqueue(Reply.server_error(), Reply.content("fine"))
    reply = Judge(settings_for(fake_openai)).complete_text([{"role": "user", "content": "hi"}])
    assert reply.text == "fine"
    assert fake_openai.chat_call_count == 2


def test_complete_text_drops_a_rejected_temperature(fake_openai):
    fake_openai.enqueue(
        Reply.error(400, "Unsupported value: 'temperature' does not support 0.7 with this model.", param="temperature"),
        Reply.content("ok"),
    )
    judge = Judge(settings_for(fake_openai, model="strict-model"))
    assert judge.complete_text([{"role": "user", "content": "hi"}], temperature=0.7).text == "ok"
    first, second = fake_openai.chat_requests()
    assert first["temperature"] == 0.7
    assert "temperature" not in second
    # Reasoning models never get a temperature.
    fake_openai.enqueue(Reply.content("ok"))
    Judge(settings_for(fake_openai, model="o3-mini")).complete_text([{"role": "user", "content": "hi"}])
    assert "temperature" not in fake_openai.last_chat_request()


def test_complete_text_cache_key_includes_the_parameters(fake_openai, tmp_path):
    store = Store(tmp_path / "cache.db")
    fake_openai.responder = lambda body: Reply.content(f"t={body.get('temperature')}")
    judge = Judge(settings_for(fake_openai), cache=store)
    messages = [{"role": "user", "content": "hi"}]
    assert judge.complete_text(messages, temperature=0.2).text == "t=0.2"
    again = judge.complete_text(messages, temperature=0.2)
    assert (again.text, again.info.cached, again.usage.calls) == ("t=0.2", True, 0)
    assert judge.complete_text(messages, temperature=0.9).text == "t=0.9"
    assert judge.complete_text(messages, temperature=0.2, max_tokens=5).text == "t=0.2"
    assert fake_openai.chat_call_count == 3
    store.close()


# ---- generate_responses ------------------------------------------------------------------------------


def test_two_variants_times_rows_carry_the_rendered_templates(fake_openai):
    fake_openai.responder = echo
    progress = []
    responses = generate_responses(
        ROWS,
        [A, B],
        settings=settings_for(fake_openai),
        item_ids=[r["id"] for r in ROWS],
        concurrency=3,
        on_progress=lambda done, total: progress.append((done, total)),
    )
    assert [(r.item_id, r.variant.name) for r in responses] == [
        ("q1", "A"),
        ("q1", "B"),
        ("q2", "A"),
        ("q2", "B"),
        ("q3", "A"),
        ("q3", "B"),
    ]
    assert all(r.status is ScoreStatus.SCORED and r.error is None and not r.cached for r in responses)
    assert responses[0].text == "gpt-4o-mini says: Question: What is 2+2?"
    assert responses[3].text == "fake-target says: Q: Capital of France?\nA:"
    assert sorted(progress)[-1] == (6, 6)
    bodies = fake_openai.chat_requests()
    assert len(bodies) == 6
    by_model = {m: [b for b in bodies if b["model"] == m] for m in ("gpt-4o-mini", "fake-target")}
    assert sorted(user_text(b) for b in by_model["gpt-4o-mini"]) == sorted(f"Question: {r['question']}" for r in ROWS)
    for body in by_model["fake-target"]:
        assert body["messages"][0] == {"role": "system", "content": "Answer in one word."}
        assert (body["temperature"], body["max_completion_tokens"], body["seed"]) == (0.7, 50, 7)
    for body in by_model["gpt-4o-mini"]:
        assert [m["role"] for m in body["messages"]] == ["user"]
        assert (body["temperature"], body["seed"]) == (0.0, 42)  # the settings' defaults


def test_cached_rerun_makes_no_calls(fake_openai, tmp_path):
    store = Store(tmp_path / "gen.db")
    fake_openai.responder = echo
    first = generate_responses(ROWS, [A, B], settings=settings_for(fake_openai), cache=store)
    assert fake_openai.chat_call_count == 6
    second = generate_responses(ROWS, [A, B], settings=settings_for(fake_openai), cache=store)
    assert fake_openai.chat_call_count == 6
    assert [r.text for r in second] == [r.text for r in first]
    assert all(r.cached and r.usage.calls == 0 for r in second)
    store.close()


def test_a_failed_generation_is_recorded_not_dropped(fake_openai):
    rows = [*ROWS, {"id": "q4", "question": "", "answer": "x"}]

    def script(body: dict) -> Reply:
        text = user_text(body)
        if "France" in text and body["model"] == "fake-target":
            return Reply.truncated("Par")
        if "sky" in text and body["model"] == "gpt-4o-mini":
            return Reply.refusal("No.")
        return echo(body)

    fake_openai.responder = script
    responses = generate_responses(rows, [A, B], settings=settings_for(fake_openai))
    assert len(responses) == 8
    status = {(r.item_id, r.variant.name): r.status for r in responses}
    assert status[("1", "B")] is ScoreStatus.JUDGE_OUTPUT_TRUNCATED
    assert status[("2", "A")] is ScoreStatus.JUDGE_REFUSED
    assert status[("3", "A")] is ScoreStatus.INVALID_INPUT and status[("3", "B")] is ScoreStatus.INVALID_INPUT
    assert fake_openai.chat_call_count == 6  # the empty question made no call
    failed = failed_generations(responses)
    assert [(r.item_id, r.variant.name) for r in failed] == [("1", "B"), ("2", "A"), ("3", "A"), ("3", "B")]
    assert all(r.text is None and r.error for r in failed)
    truncated = next(r for r in failed if r.status is ScoreStatus.JUDGE_OUTPUT_TRUNCATED)
    assert truncated.usage.calls == 1  # the cut reply was still paid for
    items = comparison_items(rows, responses, input_col="question")
    assert [i.item_id for i in items] == ["0::A", "0::B", "1::A", "2::B"]


def test_bad_variants_fail_before_any_call(fake_openai):
    with pytest.raises(InvalidInputError, match="no column 'q'"):
        generate_responses(ROWS, [Variant("A", "m", prompt_template="{q}")], settings=settings_for(fake_openai))
    with pytest.raises(InvalidInputError, match="repeated: A"):
        generate_responses(ROWS, [A, A], settings=settings_for(fake_openai))
    with pytest.raises(InvalidInputError, match="3 rows"):
        generate_responses(ROWS, [A], settings=settings_for(fake_openai), item_ids=["x"])
    assert fake_openai.chat_call_count == 0


def test_cancel_before_start_makes_no_calls(fake_openai):
    fake_openai.responder = echo
    cancel = threading.Event()
    cancel.set()
    assert generate_responses(ROWS, [A], settings=settings_for(fake_openai), cancel=cancel) == []
    assert fake_openai.chat_call_count == 0


def test_comparison_items_score_and_pair_by_row(fake_openai):
    # A answers every row correctly, B only the first: hand-checked textual difference 1 vs lower.
    def script(body: dict) -> Reply:
        answers = {"What is 2+2?": "4", "Capital of France?": "Paris", "Colour of the sky?": "Blue"}
        question = user_text(body).removeprefix("Question: ").removeprefix("Q: ").removesuffix("\nA:")
        if body["model"] == "fake-target" and question != "What is 2+2?":
            return Reply.content("I do not know")
        return Reply.content(answers[question])

    fake_openai.responder = script
    responses = generate_responses(ROWS, [A, B], settings=settings_for(fake_openai), item_ids=["q1", "q2", "q3"])
    items = comparison_items(ROWS, responses, input_col="question", ground_truth_col="answer")
    first_b = items[1]
    assert first_b.item_id == "q1::B"
    assert first_b.groups == {"variant": "B", "model": "fake-target", "row_id": "q1"}
    # One basis for every variant: B's own system prompt and both templates never reach the scorers.
    assert first_b.payload["input"] == {"inputMessages": [{"role": "user", "content": "What is 2+2?"}]}
    assert items[0].payload["input"] == first_b.payload["input"]
    assert first_b.payload["output"] == {"role": "assistant", "text": "4"}
    assert first_b.payload["ground_truth"] == "4"
    # The system message is an explicit choice: the dataset's column, the same for A and B.
    rows = [dict(row, rules="Be exact.") for row in ROWS]
    with_system = comparison_items(rows, responses, input_col="question", system_col="rules")
    assert {str(it.payload["input"]["systemMessages"]) for it in with_system} == {
        str([{"role": "system", "content": "Be exact."}])
    }
    with pytest.raises(InvalidInputError, match="no system column 'rules'"):
        comparison_items(ROWS, responses, input_col="question", system_col="rules")

    result = run_evals(items, [create_textual_difference_scorer()])
    frame = results_frame(result, items)
    comparison = paired(frame, "textual-difference", "A", "B")
    assert (comparison.n_pairs, comparison.wins, comparison.ties, comparison.losses) == (3, 2, 1, 0)


def test_generation_costs_use_list_prices(fake_openai):
    fake_openai.responder = lambda body: Reply.content("x", usage={"prompt_tokens": 1000, "completion_tokens": 500})
    responses = generate_responses(ROWS[:2], [A, B], settings=settings_for(fake_openai))
    costs = generation_costs(responses)
    # gpt-4o-mini: 2 × (1000 × 0.15 + 500 × 0.60) / 1e6 = 2 × 0.00045 = 0.0009; fake-target has no price.
    assert costs["A"] == pytest.approx(0.0009)
    assert costs["B"] is None


# ---- existing responses ------------------------------------------------------------------------------


def test_items_from_responses_wide_layout():
    frame = pd.DataFrame(
        {"id": ["a", "b", "c"], "q": ["Q1", "Q2", "Q3"], "old": ["R1", None, "R3"], "new": ["S1", "S2", " "]}
    ).assign(gt=["G1", "G2", "G3"])
    items = items_from_responses(
        frame,
        input_col="q",
        response_cols={"old": "old", "new": "new"},
        id_col="id",
        ground_truth_col="gt",
        models={"old": "gpt-4o-mini"},
    )
    assert [i.item_id for i in items] == ["a::old", "a::new", "b::old", "b::new", "c::old", "c::new"]
    assert items[0].groups == {"variant": "old", "row_id": "a", "model": "gpt-4o-mini"}
    assert items[1].groups == {"variant": "new", "row_id": "a"}
    assert "output" not in items[2].payload  # a missing response stays an item, with no output ...
    assert "output" not in items[5].payload  # ... and so does a blank one (never scored 0 as an empty text) ...
    result = run_evals(items, [create_textual_difference_scorer()])
    statuses = [o.status for o in result.outcomes]
    assert statuses[2] is statuses[5] is ScoreStatus.MISSING_INPUT  # ... that the run records as not scored
    assert result.outcomes[5].error == "output: the run has no 'output' (the response to evaluate)"
    assert statuses.count(ScoreStatus.SCORED) == 4


def test_items_from_responses_long_layout_pairs_by_question():
    frame = pd.DataFrame(
        {"q": ["Q1", "Q1", "Q2", "Q2"], "model": ["m1", "m2", "m1", "m2"], "response": ["a", "b", "c", "d"]}
    )
    items = items_from_responses(frame, input_col="q", variant_col="model", output_col="response", model_col="model")
    assert [(i.item_id, i.groups["row_id"], i.groups["model"]) for i in items] == [
        ("Q1::m1", "Q1", "m1"),
        ("Q1::m2", "Q1", "m2"),
        ("Q2::m1", "Q2", "m1"),
        ("Q2::m2", "Q2", "m2"),
    ]
    # The repeat is the frame's 5th row (positions count from 1, as every message does).
    with pytest.raises(InvalidInputError, match="^row 5: a second response of variant 'm1'"):
        items_from_responses(
            pd.concat([frame, frame.head(1)]), input_col="q", variant_col="model", output_col="response"
        )
    with pytest.raises(InvalidInputError, match="either response_cols"):
        items_from_responses(frame, input_col="q")
    with pytest.raises(InvalidInputError, match="no column 'nope'"):
        items_from_responses(frame, input_col="nope", variant_col="model", output_col="response")


def test_context_window_and_rate_limits(fake_openai):
    fake_openai.enqueue(Reply.context_length_exceeded())
    responses = generate_responses(ROWS[:1], [A], settings=settings_for(fake_openai))
    assert responses[0].status is ScoreStatus.EXCEEDS_CONTEXT and "context window" in responses[0].error
    # The client retries a 429 twice (max_retries=2); then the generation waits Retry-After and tries again.
    fake_openai.enqueue(*[Reply.rate_limited(0.01)] * 3, Reply.content("finally"))
    responses = generate_responses(ROWS[:1], [A], settings=settings_for(fake_openai))
    assert (responses[0].status, responses[0].text) == (ScoreStatus.SCORED, "finally")
    fake_openai.enqueue(*[Reply.rate_limited(0.01)] * 3)
    responses = generate_responses(ROWS[:1], [A], settings=settings_for(fake_openai), max_rate_limit_retries=0)
    assert responses[0].status is ScoreStatus.RATE_LIMITED and responses[0].text is None
    fake_openai.assert_all_replies_used()


def test_judging_basis_says_what_every_variant_is_judged_against():
    assert JudgingBasis("question").record() == {
        "input_col": "question",
        "system_col": None,
        "description": "Every variant is judged against the dataset's user prompt (column 'question') only; "
        "a variant's own system prompt and prompt template are not shown to the scorers.",
    }
    assert "and the dataset's system message (column 'rules')" in JudgingBasis("question", "rules").describe()


def test_long_layout_pairs_by_question_id_within_each_variant():
    # MT-Bench-like: one row per question and model; question_id repeats (once per model).
    frame = pd.DataFrame(
        {
            "question_id": [81, 81, 82, 82],
            "category": ["writing", "writing", "math", "math"],
            "model": ["gpt-4", "llama-13b", "gpt-4", "llama-13b"],
            "turn": ["Write a haiku.", "Write a haiku.", "What is 3*4?", "What is 3*4?"],
            "response": ["Leaves fall", "Trees", "12", "7"],
        }
    )
    # model: 2 values, each distinct within a question id; category repeats within an id; response has 4 values.
    assert guess_variant_column(frame, "question_id", exclude=["turn", "response"]) == "model"
    assert guess_variant_column(frame, None) is None
    items = items_from_responses(
        frame, input_col="turn", variant_col="model", output_col="response", id_col="question_id"
    )
    assert [(it.item_id, it.groups["row_id"]) for it in items] == [
        ("81::gpt-4", "81"),
        ("81::llama-13b", "81"),
        ("82::gpt-4", "82"),
        ("82::llama-13b", "82"),
    ]
    twice = pd.concat([frame, frame.iloc[[0]]], ignore_index=True)
    with pytest.raises(InvalidInputError, match="second response of variant 'gpt-4' .*column 'question_id'"):
        items_from_responses(twice, input_col="turn", variant_col="model", output_col="response", id_col="question_id")


def test_a_target_model_that_fails_is_named_as_such_never_as_the_judge(fake_openai, tmp_path):
    from dashboard.compare.job import GenerationPlan, start_compare_job
    from scorers.runs import jobs

    # The endpoint answers 500 to every request (the client's 2 retries included): generating fails.
    fake_openai.responder = lambda body: Reply.server_error()
    settings = settings_for(fake_openai)
    (failed,) = generate_responses(ROWS[:1], [A], settings=settings)
    assert failed.status is ScoreStatus.API_ERROR
    assert failed.error.startswith("The target model endpoint answered 500") and "judge" not in failed.error
    # Compare's job: nothing was generated, so nothing was judged; the message names the step, the variant's
    # model and the endpoint.
    store = Store(tmp_path / "s.db")
    plan = GenerationPlan(rows=ROWS[:1], item_ids=["q1"], variants=[A], settings=settings, input_col="question")
    job = jobs.get(start_compare_job(store, [create_textual_difference_scorer()], {}, plan=plan, dataset_name="d.csv"))
    job.join(30)
    message = job.snapshot().message
    assert message.startswith(
        "No response could be generated by the variants' target models, so nothing was judged or scored. The first "
        f"error (variant A, target model gpt-4o-mini at {settings.endpoint}): The target model endpoint answered 500"
    )
    assert "judge endpoint" not in message
    store.close()
