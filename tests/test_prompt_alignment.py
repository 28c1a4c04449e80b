"""Prompt alignment: the SPEC §1.1 formulas worked by hand, modes, options and input checks."""

from __future__ import annotations

import io
import json

import pytest
from fake_openai import Reply
from judge_data import both_analysis, run_payload, settings_for, single_analysis

from scorers import (
    EvalItem,
    InvalidInputError,
    JudgeConfigError,
    JudgeOutputInvalidError,
    JudgeSettings,
    JudgeUsage,
    MissingInputError,
    ScoreStatus,
    Store,
    create_prompt_alignment_scorer,
    dimension_breakdown,
    interpretation_band,
    run_evals,
)
from scorers.runs.export import write_run_export
from scorers.runs.table import load_run_table

SYSTEM = "You are a helpful coding assistant. Always provide working code examples."


def scorer(fake, **options):
    return create_prompt_alignment_scorer(options=options, settings=settings_for(fake))


def test_user_mode_weights(fake_openai):
    # 0.40·0.9 + 0.30·0.8 + 0.20·0.7 + 0.10·1.0 = 0.36 + 0.24 + 0.14 + 0.10 = 0.84
    fake_openai.enqueue(Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0)))
    result = scorer(fake_openai, evaluation_mode="user").run(run_payload())
    assert result.score == 0.84
    assert result.analyze_step_result["userScore"] == pytest.approx(0.84)
    assert result.analyze_step_result["systemScore"] is None
    assert result.reason.startswith("The score is 0.840 out of 1 (very good alignment with small gaps)")


def test_system_mode_weights(fake_openai):
    # 0.35·0.9 + 0.35·0.8 + 0.15·0.7 + 0.15·1.0 = 0.315 + 0.28 + 0.105 + 0.15 = 0.85
    fake_openai.enqueue(Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0)))
    result = scorer(fake_openai, evaluation_mode="system").run(run_payload(system=SYSTEM))
    assert result.score == 0.85
    assert result.analyze_step_result["systemScore"] == pytest.approx(0.85)
    assert "<system_instructions>" in fake_openai.last_prompt_text()


def test_both_mode_user_perfect_system_zero_scale_10(fake_openai):
    # U = 1, S = 0: W = 0.7·1 + 0.3·0 = 0.7; × 10 = 7.0
    fake_openai.enqueue(Reply.json(both_analysis((1, 1, 1, 1), (0, 0, 0, 0))))
    result = scorer(fake_openai, evaluation_mode="both", scale=10).run(run_payload(system=SYSTEM))
    assert result.score == 7.0
    analysis = result.analyze_step_result
    assert analysis["effectiveMode"] == "both"
    assert analysis["userScore"] == 1 and analysis["systemScore"] == 0
    assert analysis["systemAlignment"]["intentAlignment"]["score"] == 0
    assert "The score is 7.000 out of 10" in result.reason
    body = fake_openai.last_chat_request()
    assert body["response_format"]["json_schema"]["name"] == "prompt_alignment_both"


def test_the_composed_reason_writes_the_user_and_system_scores_as_the_tiles_do(fake_openai):
    # A fresh user's row (IFEval 1005): U = .4·.6 + .3·.1 + .2·.5 + .1·.5 = 0.42; S = .35·1 + .35·.2 + .15·.5
    # + .15·1 = 0.645; W = .7·0.42 + .3·0.645 = 0.4875 → 0.49. The reason read "0.42" and "0.65" (binary :.2f)
    # beside the tiles' 0.420 and 0.645.
    fake_openai.enqueue(Reply.json(both_analysis((0.6, 0.1, 0.5, 0.5), (1.0, 0.2, 0.5, 1.0))))
    result = scorer(fake_openai, evaluation_mode="both").run(run_payload(system=SYSTEM))
    assert result.score == 0.49
    assert result.reason.startswith("The score is 0.490 out of 1 (poor alignment with serious problems)")
    assert "Against the user prompt (70% of the score, 0.420): " in result.reason
    assert "Against the system instructions (30%, 0.645): " in result.reason
    assert "(Write a factorial function; intent 0.60)" in result.reason
    assert "completeness is 0.50" in result.reason


def test_both_mode_mixed_sets(fake_openai):
    # U = 0.84 (as above); S = 0.35·0.5 + 0.35·0.4 + 0.15·1 + 0.15·0 = 0.175 + 0.14 + 0.15 = 0.465
    # W = 0.7·0.84 + 0.3·0.465 = 0.588 + 0.1395 = 0.7275 -> 0.73
    fake_openai.enqueue(Reply.json(both_analysis((0.9, 0.8, 0.7, 1.0), (0.5, 0.4, 1.0, 0.0))))
    result = scorer(fake_openai).run(run_payload(system=SYSTEM))
    assert result.score == 0.73
    rows = dimension_breakdown(result.analyze_step_result)
    assert len(rows) == 8
    assert sum(r["contribution"] for r in rows) == pytest.approx(0.7275)
    user_intent = next(r for r in rows if r["source"] == "user" and r["dimension"] == "intentAlignment")
    assert user_intent["contribution"] == pytest.approx(0.7 * 0.4 * 0.9)


def test_dimension_scores_name_each_source_and_dimension(fake_openai):
    # The judge's four scores per source, as sent: user (0.9, 0.8, 0.7, 1.0), system (0.5, 0.4, 1.0, 0.0).
    fake_openai.enqueue(Reply.json(both_analysis((0.9, 0.8, 0.7, 1.0), (0.5, 0.4, 1.0, 0.0))))
    judged = scorer(fake_openai)
    analysis = judged.run(run_payload(system=SYSTEM)).analyze_step_result
    assert judged.dimension_scores(analysis) == {
        "user.intentAlignment": 0.9,
        "user.requirementsFulfillment": 0.8,
        "user.completeness": 0.7,
        "user.responseAppropriateness": 1.0,
        "system.intentAlignment": 0.5,
        "system.requirementsFulfillment": 0.4,
        "system.completeness": 1.0,
        "system.responseAppropriateness": 0.0,
    }
    fake_openai.enqueue(Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0)))
    analysis = scorer(fake_openai, evaluation_mode="system").run(run_payload(system=SYSTEM)).analyze_step_result
    assert list(judged.dimension_scores(analysis).items()) == [
        ("system.intentAlignment", 0.9),
        ("system.requirementsFulfillment", 0.8),
        ("system.completeness", 0.7),
        ("system.responseAppropriateness", 1.0),
    ]


def test_half_up_rounding(fake_openai):
    # 0.40·0.5 + 0.30·0.5 + 0.20·0.5 + 0.10·0.45 = 0.2 + 0.15 + 0.1 + 0.045 = 0.495 -> 0.50 (half up)
    fake_openai.enqueue(Reply.json(single_analysis(0.5, 0.5, 0.5, 0.45)))
    assert scorer(fake_openai, evaluation_mode="user").run(run_payload()).score == 0.5
    # scale 10: 0.40·0.9 + 0.30·0.9 + 0.20·0.9 + 0.10·0.45 = 0.855; × 10 = 8.55 exactly: stays 8.55
    fake_openai.enqueue(Reply.json(single_analysis(0.9, 0.9, 0.9, 0.45)))
    assert scorer(fake_openai, evaluation_mode="user", scale=10).run(run_payload()).score == 8.55
    # 0.40·0.8 + 0.30·0.75 + 0.20·0.6 + 0.10·0.6 = 0.32 + 0.225 + 0.12 + 0.06 = 0.725 -> 0.73
    fake_openai.enqueue(Reply.json(single_analysis(0.8, 0.75, 0.6, 0.6)))
    assert scorer(fake_openai, evaluation_mode="user").run(run_payload()).score == 0.73


def test_both_without_system_scores_as_user_and_says_so(fake_openai):
    fake_openai.enqueue(Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0)))
    result = scorer(fake_openai).run(run_payload())
    assert result.score == 0.84
    analysis = result.analyze_step_result
    assert analysis["evaluationMode"] == "both" and analysis["effectiveMode"] == "user"
    assert analysis["systemScore"] is None
    assert "No system message" in analysis["note"] and "No system message" in result.reason
    assert fake_openai.last_chat_request()["response_format"]["json_schema"]["name"] == "prompt_alignment_user"


def test_system_role_messages_in_a_plain_list_count_as_system(fake_openai):
    fake_openai.enqueue(Reply.json(both_analysis((1, 1, 1, 1), (1, 1, 1, 1))))
    payload = {
        "input": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Explain recursion"}],
        "output": "Recursion is a function calling itself.",
    }
    assert scorer(fake_openai).run(payload).analyze_step_result["effectiveMode"] == "both"


@pytest.mark.parametrize(
    ("mode", "payload", "field"),
    [
        ("user", run_payload(output="   \n"), "output"),
        ("user", {"input": [], "output": "text"}, "input"),
        ("both", {"input": [], "output": "text"}, "input"),
        ("system", run_payload(), "system"),
    ],
)
def test_missing_input_is_reported_before_any_judge_call(fake_openai, mode, payload, field):
    with pytest.raises(MissingInputError) as info:
        scorer(fake_openai, evaluation_mode=mode).run(payload)
    assert info.value.field == field
    assert info.value.status is ScoreStatus.MISSING_INPUT
    assert fake_openai.chat_call_count == 0


def test_both_mode_with_only_a_system_prompt_scores_in_system_mode_and_says_so(fake_openai):
    # SPEC §1.4, the mirror of the no-system fallback: system weights 0.35·1 + 0.35·0.8 + 0.15·0.6 + 0.15·1 = 0.87
    fake_openai.enqueue(Reply.json(single_analysis(1.0, 0.8, 0.6, 1.0)))
    payload = {"input": {"systemMessages": [{"role": "system", "content": SYSTEM}]}, "output": "text"}
    result = scorer(fake_openai, evaluation_mode="both").run(payload)
    assert result.analyze_step_result["effectiveMode"] == "system" and result.score == 0.87
    assert "No user message was given" in result.analyze_step_result["note"]
    assert "<system_instructions>" in fake_openai.last_prompt_text()


@pytest.mark.parametrize(
    "options",
    [
        {"scale": 0},
        {"scale": -1},
        {"scale": float("nan")},
        {"scale": True},
        {"scale": "10"},
        {"evaluation_mode": "users"},
        {"reason": "llm"},
        {"weights": 1},
    ],
)
def test_bad_options_rejected_at_construction(options):
    with pytest.raises(InvalidInputError):
        create_prompt_alignment_scorer(options=options, settings=JudgeSettings(base_url="http://127.0.0.1:9/v1"))


def test_camel_case_option_and_model_prefix(fake_openai):
    fake_openai.enqueue(Reply.json(single_analysis(1, 1, 1, 1)))
    s = create_prompt_alignment_scorer(
        "openai/gpt-4o-mini", {"evaluationMode": "user"}, settings=settings_for(fake_openai)
    )
    assert s.run(run_payload()).score == 1.0
    body = fake_openai.last_chat_request()
    assert body["model"] == "gpt-4o-mini"
    assert body["temperature"] == 0 and body["seed"] == 42


def test_the_reason_writes_the_score_as_the_tiles_do(fake_openai):
    # .4·.8 + .3·.8 + .2·.8 + .1·.8 = 0.8, written 0.800 as the score tile writes it (the reason read 0.8).
    fake_openai.enqueue(Reply.json(single_analysis(0.8, 0.8, 0.8, 0.8)))
    assert (
        scorer(fake_openai, evaluation_mode="user")
        .run(run_payload())
        .reason.startswith("The score is 0.800 out of 1 (")
    )
    # The judge-written reason is asked to start so, and a reason that does is kept as written.
    fake_openai.enqueue(
        Reply.json(single_analysis(0.8, 0.8, 0.8, 0.8)),
        Reply.json({"reason": "The score is 0.800 because the docstring is missing."}),
    )
    result = scorer(fake_openai, evaluation_mode="user", reason="judge").run(run_payload())
    assert 'Start with "The score is 0.800 because"' in fake_openai.last_prompt_text()
    assert result.reason == "The score is 0.800 because the docstring is missing."


def test_judge_written_reason_is_a_second_call_and_states_the_score(fake_openai):
    fake_openai.enqueue(
        Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0)),
        Reply.json({"reason": "Good function, but the docstring is missing."}),
    )
    result = scorer(fake_openai, evaluation_mode="user", reason="judge").run(run_payload())
    assert fake_openai.chat_call_count == 2
    assert result.reason == "The score is 0.840 out of 1. Good function, but the docstring is missing."
    assert result.judge.usage.calls == 2
    assert "0.84" in fake_openai.last_prompt_text()


def test_a_judge_written_reason_that_fails_keeps_the_score_and_says_why(fake_openai):
    usage = {"usage": {"prompt_tokens": 100, "completion_tokens": 20}}
    fake_openai.enqueue(
        Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0), **usage),
        Reply.server_error("The server is overloaded.", should_retry=False),
    )
    store = Store(":memory:")
    pa = create_prompt_alignment_scorer(
        options={"evaluation_mode": "user", "reason": "judge"}, settings=settings_for(fake_openai, max_retries=0)
    )

    run = run_evals([EvalItem("q1", run_payload())], [pa], store=store)

    (outcome,) = run.outcomes
    # The analysis call made the score: 0.40·0.9 + 0.30·0.8 + 0.20·0.7 + 0.10·1.0 = 0.84. Only the reason failed.
    assert outcome.status is ScoreStatus.SCORED and outcome.score == 0.84
    assert outcome.result.analyze_step_result["intentAlignment"]["score"] == 0.9
    assert outcome.result.reason.startswith(
        "The score is 0.840 out of 1. The judge could not write the reason (api_error): "
    )
    assert "overloaded" in outcome.result.reason and "test-key" not in outcome.result.reason
    # Two requests, one answered; the analysis reply's 100 + 20 tokens are kept. The 500 reported no usage (an API
    # error spends none, as when it fails an item).
    assert fake_openai.chat_call_count == 2 and outcome.usage == JudgeUsage(100, 20, calls=1, requests=2)
    # Stored and exported as scored, with that reason.
    row = store.results(run.run_id)[0]
    assert (row["status"], row["score"], row["reason"]) == ("scored", 0.84, outcome.result.reason)
    out = io.BytesIO()
    write_run_export(load_run_table(store, run.run_id), "jsonl", out)
    (exported,) = [json.loads(line) for line in out.getvalue().decode().splitlines()]
    assert (exported["status"], exported["score"], exported["reason"]) == ("scored", 0.84, outcome.result.reason)


def test_composed_reason_names_unmet_requirements_and_flags(fake_openai):
    analysis = single_analysis(0.8, 0.5, 0.6, 0.3, unmet=("bullet points",), missing=("examples",), format_ok=False)
    fake_openai.enqueue(Reply.json(analysis))
    result = scorer(fake_openai, evaluation_mode="user").run(run_payload())
    # 0.32 + 0.15 + 0.12 + 0.03 = 0.62
    assert result.score == 0.62
    assert "1 of 2 requirements are fulfilled (unmet: bullet points)" in result.reason
    assert "missing: examples" in result.reason
    assert "the format does not match" in result.reason
    assert fake_openai.chat_call_count == 1


def test_result_shape_and_usage(fake_openai):
    fake_openai.enqueue(Reply.json(single_analysis(1, 1, 1, 1), usage={"prompt_tokens": 120, "completion_tokens": 30}))
    result = scorer(fake_openai, evaluation_mode="user").run(run_payload())
    data = result.to_dict()
    assert set(data) >= {"runId", "score", "reason", "analyzeStepResult", "judge"}
    assert data["judge"]["usage"] == {
        "promptTokens": 120,
        "completionTokens": 30,
        "totalTokens": 150,
        "calls": 1,
        "requests": 1,
    }
    assert data["judge"]["model"] == "fake-judge"
    assert data["judge"]["parameters"] == {"temperature": 0.0, "seed": 42, "responseFormat": "json_schema"}
    assert "test-key" not in repr(data)


def test_no_key_and_no_base_url_says_how_to_configure(monkeypatch):
    s = create_prompt_alignment_scorer(options={"evaluation_mode": "user"}, settings=JudgeSettings())
    with pytest.raises(InvalidInputError):  # bad input is still reported first
        s.run(run_payload(output=""))
    with pytest.raises(JudgeConfigError) as info:
        s.run(run_payload())
    message = str(info.value)
    assert "OPENAI_API_KEY" in message and "http://localhost:11434/v1" in message


@pytest.mark.parametrize(
    ("score", "scale", "band"),
    [
        (0.95, 1, "excellent"),
        (0.9, 1, "excellent"),
        (0.84, 1, "very good"),
        (7.0, 10, "good alignment"),
        (0.65, 1, "moderate"),
        (0.4, 1, "poor"),
        (0.39, 1, "very poor"),
        (0, 1, "very poor"),
    ],
)
def test_interpretation_bands(score, scale, band):
    assert interpretation_band(score, scale).startswith(band)


@pytest.mark.parametrize(
    ("patch", "problem"),
    [
        # isAddressed false with intent 0.9: addressed exactly when the score is >= 0.5
        ({"intentAlignment": {"isAddressed": False}}, "isAddressed is false but the intent score is 0.9"),
        # 0 of 3 requirements fulfilled with overallScore 0.67
        (
            {
                "requirementsFulfillment": {
                    "requirements": [
                        {"requirement": r, "isFulfilled": False, "reasoning": "No."} for r in ("a", "b", "c")
                    ],
                    "overallScore": 0.67,
                }
            },
            "overallScore 0.67 contradicts the list: 0 of 3 requirements are fulfilled",
        ),
    ],
)
def test_self_contradicting_judge_output_is_re_asked_once_then_invalid(fake_openai, patch, problem):
    bad = single_analysis(0.9, 0.8, 0.7, 1.0)
    for key, value in patch.items():
        bad[key] = {**bad[key], **value}
    fake_openai.enqueue(Reply.json(bad), Reply.json(bad))
    with pytest.raises(JudgeOutputInvalidError) as info:
        scorer(fake_openai, evaluation_mode="user").run(run_payload())
    assert problem in str(info.value)
    assert fake_openai.chat_call_count == 2
    assert problem in fake_openai.last_prompt_text()  # the re-ask quotes the contradiction


def test_a_contradiction_corrected_on_the_re_ask_is_scored(fake_openai):
    bad = single_analysis(0.9, 0.8, 0.7, 1.0)
    bad["intentAlignment"]["isAddressed"] = False
    fake_openai.enqueue(Reply.json(bad), Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0)))
    assert scorer(fake_openai, evaluation_mode="user").run(run_payload()).score == 0.84  # 0.36+0.24+0.14+0.10


def test_a_rate_limited_reason_is_retried_by_the_run_alone_without_scoring_again(fake_openai):
    fake_openai.enqueue(
        Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0), usage={"prompt_tokens": 100, "completion_tokens": 20}),
        Reply.rate_limited(0.01),  # the reason call: 429, which the run's pause-and-retry handles
        Reply.json({"reason": "Good function, but the docstring is missing."}, usage={"prompt_tokens": 30,
                                                                                       "completion_tokens": 10}),
    )  # fmt: skip
    pa = create_prompt_alignment_scorer(
        options={"evaluation_mode": "user", "reason": "judge"}, settings=settings_for(fake_openai, max_retries=0)
    )

    (outcome,) = run_evals([EvalItem("q1", run_payload())], [pa]).outcomes

    # 0.40·0.9 + 0.30·0.8 + 0.20·0.7 + 0.10·1.0 = 0.84, judged once: three requests (analysis, 429, reason).
    assert outcome.status is ScoreStatus.SCORED and outcome.score == 0.84
    assert outcome.result.reason == "The score is 0.840 out of 1. Good function, but the docstring is missing."
    assert fake_openai.chat_call_count == 3
    # The analysis's 100 + 20 tokens and the reason's 30 + 10, two calls answered of 3 requests (the 429 spent none).
    assert outcome.usage == JudgeUsage(130, 30, calls=2, requests=3)


def test_a_reason_still_rate_limited_after_the_runs_retries_keeps_the_score_and_says_how_to_get_it(fake_openai):
    pa = create_prompt_alignment_scorer(
        options={"evaluation_mode": "user", "reason": "judge"}, settings=settings_for(fake_openai, max_retries=0)
    )
    fake_openai.enqueue(Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0)), *[Reply.rate_limited(0.01)] * 2)

    (outcome,) = run_evals([EvalItem("q1", run_payload())], [pa], max_rate_limit_retries=1).outcomes

    # The analysis once, the reason twice (the run's first try and its one retry): never scored again.
    assert fake_openai.chat_call_count == 3
    assert outcome.status is ScoreStatus.SCORED and outcome.score == 0.84
    reason = outcome.result.reason
    assert reason.startswith("The score is 0.840 out of 1. The judge could not write the reason (rate_limited): ")
    assert reason.endswith(
        "The score stands. To get the reason, score this item again once the rate limit allows (with the judge "
        "cache on, the scoring call is answered from the cache: only the reason is asked)."
    )
    # Outside a run (e.g. the Evaluate page) the scorer returns the same result at once.
    fake_openai.enqueue(Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0)), Reply.rate_limited(0.01))
    result = pa.run(run_payload())
    assert fake_openai.chat_call_count == 5 and result.score == 0.84 and "To get the reason" in result.reason
