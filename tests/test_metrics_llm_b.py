"""LLM-judged metrics, part B: toxicity, bias, tool-call accuracy (LLM), noise sensitivity,
summarization, the G-Eval rubric and the checklist rubric (MASTRA_SCORERS.md), through the
fake OpenAI server.

Expected scores are worked by hand from the formulas in the comments.
"""

from __future__ import annotations

import pytest
from fake_openai import Reply
from judge_data import settings_for

from scorers import (
    SCORERS,
    InvalidInputError,
    JudgeConfigError,
    JudgeOutputInvalidError,
    JudgeSettings,
    ScoreStatus,
    create_scorer,
)
from scorers.catalogue.metrics.bias import create_bias_scorer
from scorers.catalogue.metrics.noise_sensitivity import create_noise_sensitivity_scorer
from scorers.catalogue.metrics.rubric import create_checklist_rubric_scorer, create_rubric_scorer
from scorers.catalogue.metrics.summarization import create_summarization_scorer
from scorers.catalogue.metrics.tool_call_accuracy import create_tool_call_accuracy_scorer
from scorers.catalogue.metrics.toxicity import create_toxicity_scorer
from scorers.core.base import decimal_text
from scorers.core.errors import JudgeError
from scorers.core.judge import DATA_NOTICE
from scorers.runs.runner import EvalItem, estimate_run, run_evals

MY_IDS = ("toxicity", "bias", "tool-call-accuracy", "noise-sensitivity", "summarization", "rubric", "checklist-rubric")
OFFLINE = JudgeSettings(base_url="http://127.0.0.1:9/v1")
QUESTION = "What do you think of my essay draft?"
RESPONSE = "Only a fool would write this. The structure is clear. The conclusion is weak."
TOOLS = ["weather: current weather for a city", "calculator: evaluates arithmetic", "search: web search"]


def payload(question=QUESTION, output=RESPONSE, **extra):
    return {"input": [{"role": "user", "content": question}], "output": output, **extra}


def messages_of(fake, index=-1):
    return fake.chat_requests()[index]["messages"]


def assert_wrapped(fake, *tags_and_texts, index=-1):
    """The system message ends with the data notice; each text appears inside its tag in the user prompt."""
    system, user = messages_of(fake, index)[:2]
    assert system["role"] == "system" and system["content"].endswith(DATA_NOTICE)
    for tag, text in tags_and_texts:
        assert f"<{tag}>\n{text}\n</{tag}>" in user["content"], tag


# ----------------------------------------------------------------------------- toxicity


def remarks(*verdicts, source="response"):
    return {
        "verdicts": [
            {"source": source, "statement": f"remark {i}", "verdict": v, "reason": f"why {i}."}
            for i, v in enumerate(verdicts, 1)
        ]
    }


def test_toxicity_share_of_toxic_remarks(fake_openai):
    # 1 toxic of 3 remarks: 1/3 = 0.333... → 0.33
    fake_openai.enqueue(Reply.json(remarks("yes", "no", "no")))
    scorer = create_toxicity_scorer(settings=settings_for(fake_openai))
    result = scorer.run(payload())
    assert result.score == 0.33
    assert result.analyze_step_result["toxicCount"] == 1 and result.analyze_step_result["total"] == 3
    assert result.reason.startswith("The score is 0.330 out of 1 (lower is better): 1 of 3")
    assert '"remark 1" (response: why 1)' in result.reason
    assert fake_openai.chat_call_count == 1 and scorer.judge_calls_per_run == 1
    assert_wrapped(fake_openai, ("input", QUESTION), ("response", RESPONSE))
    assert fake_openai.last_chat_request()["response_format"]["json_schema"]["name"] == "toxicity"


def test_toxicity_scale_and_rounding(fake_openai):
    # 2 of 3: 2/3 × 10 = 6.666... → 6.67
    fake_openai.enqueue(Reply.json(remarks("yes", "yes", "no")))
    assert create_toxicity_scorer(scale=10, settings=settings_for(fake_openai)).run(payload()).score == 6.67


def test_toxicity_nothing_found_scores_zero_not_one(fake_openai):
    # n = 0 → 0 (Mastra's defect gives 1)
    fake_openai.enqueue(Reply.json({"verdicts": []}))
    result = create_toxicity_scorer(settings=settings_for(fake_openai)).run(payload(output="Paris is in France."))
    assert result.score == 0
    assert "nothing is toxic" in result.reason


def test_toxicity_labels_are_trimmed_and_lowercased(fake_openai):
    # MASTRA_SCORERS.md: verdicts compared after trimming and lower-casing; 1 of 2 → 0.5
    fake_openai.enqueue(Reply.json(remarks(" Yes ", "NO")))
    result = create_toxicity_scorer(settings=settings_for(fake_openai)).run(payload())
    assert result.score == 0.5
    assert [v["verdict"] for v in result.analyze_step_result["verdicts"]] == ["yes", "no"]


def test_toxicity_invalid_label_is_invalid_output_after_one_reask(fake_openai):
    bad = remarks("maybe", "no")
    fake_openai.enqueue(Reply.json(bad), Reply.json(bad))
    with pytest.raises(JudgeOutputInvalidError) as info:
        create_toxicity_scorer(settings=settings_for(fake_openai)).run(payload())
    assert info.value.status is ScoreStatus.JUDGE_OUTPUT_INVALID
    assert "verdicts.0.verdict" in str(info.value)
    assert fake_openai.chat_call_count == 2


def test_toxicity_response_only_rejects_input_remarks(fake_openai):
    # include_input=False: the input is not shown, and a remark sourced from it is invalid output
    fake_openai.enqueue(Reply.json(remarks("yes", source="input")), Reply.json(remarks("no", "no")))
    scorer = create_toxicity_scorer(options={"includeInput": False}, settings=settings_for(fake_openai))
    assert scorer.run(payload()).score == 0
    assert "<input>" not in fake_openai.prompt_text(0)
    assert fake_openai.chat_call_count == 2  # one re-ask


def test_toxicity_empty_response_is_invalid_input_before_any_call(fake_openai):
    with pytest.raises(InvalidInputError) as info:
        create_toxicity_scorer(settings=settings_for(fake_openai)).run(payload(output="  "))
    assert info.value.field == "output"
    assert fake_openai.chat_call_count == 0


# ----------------------------------------------------------------------------- bias


def opinions(*kinds):
    """One opinion per kind; "none" means not biased."""
    return {
        "opinions": [
            {"opinion": f"opinion {i}", "verdict": "no" if k == "none" else "yes", "kind": k, "reason": f"why {i}."}
            for i, k in enumerate(kinds, 1)
        ]
    }


def test_bias_share_of_biased_opinions(fake_openai):
    # 1 biased of 4 opinions: 1/4 = 0.25; scale 4 → 1.0
    fake_openai.enqueue(Reply.json(opinions("gender", "none", "none", "none")))
    scorer = create_bias_scorer(options={"scale": 4}, settings=settings_for(fake_openai))
    result = scorer.run(payload("Who makes a better engineer?", "Men are better at logic. Testing matters."))
    assert result.score == 1.0
    assert '"opinion 1" (gender: why 1)' in result.reason
    assert fake_openai.chat_call_count == 1
    assert_wrapped(
        fake_openai,
        ("input", "Who makes a better engineer?"),
        ("response", "Men are better at logic. Testing matters."),
    )


def test_bias_no_opinion_scores_zero(fake_openai):
    fake_openai.enqueue(Reply.json({"opinions": []}))
    result = create_bias_scorer(settings=settings_for(fake_openai)).run(payload(output="Water boils at 100 °C."))
    assert result.score == 0
    assert "expresses no opinion" in result.reason


def test_bias_kind_must_match_verdict(fake_openai):
    # verdict "yes" with kind "none" contradicts itself: invalid, re-asked once, then 2 of 3 → 0.67
    contradictory = {"opinions": [{"opinion": "o", "verdict": "yes", "kind": "none", "reason": "r"}]}
    fake_openai.enqueue(Reply.json(contradictory), Reply.json(opinions("age", "political", "none")))
    assert create_bias_scorer(settings=settings_for(fake_openai)).run(payload()).score == 0.67
    assert "kind must be" in fake_openai.prompt_text(1)


# ----------------------------------------------------------------------------- tool-call accuracy (LLM)


def evaluations(*pairs, missing=()):
    return {
        "evaluations": [{"toolCalled": name, "verdict": v, "reasoning": f"{name} reason."} for name, v in pairs],
        "missingTools": list(missing),
    }


def tool_payload(*names, question="What's the weather in Paris right now?"):
    calls = [{"name": n, "arguments": {"q": f"arg-{n}"}} for n in names]
    return payload(question, "It is 18 °C and sunny in Paris.", tool_calls=calls)


def test_tool_calls_share_appropriate(fake_openai):
    # 3 calls, 2 appropriate: 2/3 = 0.666... → 0.67; the missing tool does not lower it (Mastra's rule)
    fake_openai.enqueue(
        Reply.json(evaluations(("weather", "yes"), ("calculator", "no"), ("weather", "yes"), missing=["search"]))
    )
    scorer = create_tool_call_accuracy_scorer(available_tools=TOOLS, settings=settings_for(fake_openai))
    result = scorer.run(tool_payload("weather", "calculator", "weather"))
    assert result.score == 0.67
    analysis = result.analyze_step_result
    assert analysis["appropriateCount"] == 2 and analysis["totalCalls"] == 3 and analysis["missingTools"] == ["search"]
    assert "inappropriate: calculator (calculator reason)" in result.reason
    assert "never called: search" in result.reason
    assert fake_openai.chat_call_count == 1
    prompt = fake_openai.last_prompt_text()
    assert '<tool_calls>\n1. weather {"q": "arg-weather"}\n2. calculator' in prompt
    assert "<available_tools>\n- weather: current weather for a city\n" in prompt
    assert_wrapped(
        fake_openai,
        ("user_request", "What's the weather in Paris right now?"),
        ("response", "It is 18 °C and sunny in Paris."),
    )
    schema = fake_openai.last_chat_request()["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["evaluations"]["minItems"] == 3 == schema["properties"]["evaluations"]["maxItems"]
    assert schema["properties"]["missingTools"]["items"]["enum"] == ["weather", "calculator", "search"]


def test_no_tool_calls_scores_zero_when_a_tool_was_missing(fake_openai):
    fake_openai.enqueue(Reply.json(evaluations(missing=["weather"])))
    scorer = create_tool_call_accuracy_scorer(options={"availableTools": TOOLS}, settings=settings_for(fake_openai))
    result = scorer.run(tool_payload())
    assert result.score == 0
    assert result.reason == "The score is 0.000 out of 1: no tool was called although the request needed weather."
    assert "(no tool calls)" in fake_openai.last_prompt_text()


def test_no_tool_calls_scores_full_when_none_was_needed(fake_openai):
    # no calls and nothing missing → 1 × scale 10 = 10
    fake_openai.enqueue(Reply.json(evaluations()))
    scorer = create_tool_call_accuracy_scorer(
        available_tools={"weather": "current weather"}, scale=10, settings=settings_for(fake_openai)
    )
    assert scorer.run(tool_payload(question="Say hello.")).score == 10


def test_tool_calls_read_from_output_tool_invocations(fake_openai):
    # one call, appropriate: 1/1 = 1
    fake_openai.enqueue(Reply.json(evaluations(("weather", "yes"))))
    scorer = create_tool_call_accuracy_scorer(available_tools=TOOLS, settings=settings_for(fake_openai))
    run = {
        "input": "Weather in Oslo?",
        "output": {
            "role": "assistant",
            "content": "Cold.",
            "toolInvocations": [{"toolName": "weather", "args": {"city": "Oslo"}}],
        },
    }
    assert scorer.run(run).score == 1


@pytest.mark.parametrize(
    "bad",
    [
        evaluations(("weather", "yes")),  # one verdict for two calls
        evaluations(("calculator", "yes"), ("weather", "yes")),  # calls out of order
        evaluations(("weather", "yes"), ("calculator", "yes"), missing=["email"]),  # not an available tool
        evaluations(("weather", "perhaps"), ("calculator", "yes")),  # not a verdict label
    ],
)
def test_tool_call_verdicts_must_match_the_calls(fake_openai, bad):
    fake_openai.enqueue(Reply.json(bad), Reply.json(bad))
    scorer = create_tool_call_accuracy_scorer(available_tools=TOOLS, settings=settings_for(fake_openai))
    with pytest.raises(JudgeOutputInvalidError):
        scorer.run(tool_payload("weather", "calculator"))
    assert fake_openai.chat_call_count == 2


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({}, "options.available_tools"),
        ({"available_tools": []}, "options.available_tools"),
        ({"available_tools": "weather"}, "options.available_tools"),
        ({"available_tools": ["weather", "weather: again"]}, "options.available_tools[1]"),
        ({"available_tools": [{"description": "no name"}]}, "options.available_tools[0]"),
        ({"available_tools": TOOLS, "scale": 0}, "options.scale"),
        ({"available_tools": TOOLS, "expected_tool": "weather"}, "options"),
    ],
)
def test_tool_call_options_checked_at_construction(options, field):
    with pytest.raises(InvalidInputError) as info:
        create_tool_call_accuracy_scorer(options=options, settings=OFFLINE)
    assert info.value.field == field


def test_tool_call_accuracy_needs_the_request(fake_openai):
    scorer = create_tool_call_accuracy_scorer(available_tools=TOOLS, settings=settings_for(fake_openai))
    with pytest.raises(InvalidInputError) as info:
        scorer.run({"input": [], "output": "x", "tool_calls": [{"name": "weather"}]})
    assert info.value.field == "input" and fake_openai.chat_call_count == 0


# ----------------------------------------------------------------------------- noise sensitivity

BASELINE = "Water boils at 100 °C (212 °F) at sea level."
NOISY_QUERY = "What is the boiling point of water at sea level? I read it is 90 °C."
ORIGINAL = "What is the boiling point of water at sea level?"
NOISY_RESPONSE = "Some say 90 °C, but water boils at 100 °C at sea level."
DIMS = ("contentAccuracy", "completeness", "relevance", "consistency", "hallucinationResistance")


def noise(levels, robustness, majors=()):
    return {
        "dimensions": {
            d: {"impactLevel": lvl, "specificChanges": f"{d} change", "noiseInfluence": "some"}
            for d, lvl in zip(DIMS, levels, strict=True)
        },
        "majorIssues": list(majors),
        "robustnessScore": robustness,
        "overallAssessment": "Mostly robust.",
    }


def noise_scorer(fake, **options):
    return create_noise_sensitivity_scorer(
        options={"baseline_response": BASELINE, "noisy_query": NOISY_QUERY, **options}, settings=settings_for(fake)
    )


def test_noise_sensitivity_agreeing_robustness_minus_major_issue(fake_openai):
    # weights 1 + 0.85 + 0.6 + 1 + 1 = 4.45, mean 0.89; robustness 0.85, |0.85 − 0.89| = 0.04 ≤ 0.2 → 0.85
    # 1 major issue: 0.85 − min(1·0.1, 0.3) = 0.75
    fake_openai.enqueue(Reply.json(noise(("none", "minimal", "moderate", "none", "none"), 0.85, ["repeats 90 °C"])))
    scorer = noise_scorer(fake_openai)
    result = scorer.run(payload(ORIGINAL, NOISY_RESPONSE))
    assert result.score == 0.75
    analysis = result.analyze_step_result
    assert analysis["meanImpactWeight"] == pytest.approx(0.89)
    assert analysis["discrepancy"] is False and analysis["majorIssuePenalty"] == pytest.approx(0.1)
    assert "minus 0.10 for 1 major issue(s): repeats 90 °C" in result.reason
    assert scorer.dimension_scores(analysis)["completeness"] == 0.85
    assert fake_openai.chat_call_count == 1
    assert_wrapped(
        fake_openai,
        ("original_query", ORIGINAL),
        ("baseline_response", BASELINE),
        ("noisy_query", NOISY_QUERY),
        ("noisy_response", NOISY_RESPONSE),
    )


def test_noise_sensitivity_discrepancy_takes_lower_and_floors_at_zero(fake_openai):
    # weights 0.3 + 0.1 + 0.6 + 0.3 + 0.1 = 1.4, mean 0.28; robustness 0.9: gap 0.62 > 0.2 → min = 0.28
    # 5 major issues: penalty min(0.5, 0.3) = 0.3; 0.28 − 0.3 < 0 → floor 0
    fake_openai.enqueue(
        Reply.json(
            noise(("significant", "severe", "moderate", "significant", "severe"), 0.9, ["a", "b", "c", "d", "e"])
        )
    )
    result = noise_scorer(fake_openai).run(payload(ORIGINAL, NOISY_RESPONSE))
    assert result.score == 0
    assert result.analyze_step_result["baseScore"] == pytest.approx(0.28)
    assert "the lower of the judge's robustness 0.90 and the mean impact weight 0.28" in result.reason


def test_noise_sensitivity_discrepancy_lower_is_mean_with_scale(fake_openai):
    # all "moderate": mean 0.6; robustness 0.95: gap 0.35 > 0.2 → 0.6; no majors; × 10 = 6
    fake_openai.enqueue(Reply.json(noise(("moderate",) * 5, 0.95)))
    assert noise_scorer(fake_openai, scale=10).run(payload(ORIGINAL, NOISY_RESPONSE)).score == 6


def test_noise_sensitivity_gap_of_exactly_threshold_keeps_robustness(fake_openai):
    # all "moderate": mean 0.6; robustness 0.8: gap 0.2 is not > 0.2 → 0.8
    fake_openai.enqueue(Reply.json(noise(("moderate",) * 5, 0.8)))
    assert noise_scorer(fake_openai).run(payload(ORIGINAL, NOISY_RESPONSE)).score == 0.8


def test_noise_sensitivity_custom_penalties(fake_openai):
    # robustness 1, all none: mean 1; 2 majors × 0.2 = 0.4 capped at 0.25 → 0.75
    fake_openai.enqueue(Reply.json(noise(("none",) * 5, 1.0, ["x", "y"])))
    scorer = noise_scorer(fake_openai, majorIssuePenalty=0.2, max_major_issue_penalty=0.25)
    assert scorer.run(payload(ORIGINAL, NOISY_RESPONSE)).score == 0.75


@pytest.mark.parametrize(
    "bad",
    [
        noise(("none", "none", "high", "none", "none"), 0.9),  # not an impact level
        noise(("none",) * 5, 1.2),  # robustness outside [0, 1]
        noise(("none",) * 5, "0.9"),  # a string is not a number
    ],
)
def test_noise_sensitivity_invalid_judge_output(fake_openai, bad):
    fake_openai.enqueue(Reply.json(bad), Reply.json(bad))
    with pytest.raises(JudgeOutputInvalidError):
        noise_scorer(fake_openai).run(payload(ORIGINAL, NOISY_RESPONSE))
    assert fake_openai.chat_call_count == 2


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"noisy_query": NOISY_QUERY}, "options.baseline_response"),
        ({"baseline_response": BASELINE}, "options.noisy_query"),
        ({"baseline_response": "  ", "noisy_query": NOISY_QUERY}, "options.baseline_response"),
        (
            {"baseline_response": BASELINE, "noisy_query": NOISY_QUERY, "discrepancy_threshold": 2},
            "options.discrepancy_threshold",
        ),
        (
            {"baseline_response": BASELINE, "noisy_query": NOISY_QUERY, "major_issue_penalty": "0.1"},
            "options.major_issue_penalty",
        ),
    ],
)
def test_noise_sensitivity_options_checked_at_construction(options, field):
    with pytest.raises(InvalidInputError) as info:
        create_noise_sensitivity_scorer(options=options, settings=OFFLINE)
    assert info.value.field == field


# ----------------------------------------------------------------------------- summarization

SOURCE = (
    "The council approved a 12 million euro budget for bike lanes on Tuesday. Construction starts in March. "
    "Opponents wanted the money for public transport."
)
SUMMARY = "The council approved 12 million euros for bike lanes, built from March."


def claims(*verdicts):
    return [{"claim": f"claim {i}", "verdict": v, "reason": "r"} for i, v in enumerate(verdicts, 1)]


def questions(*answered):
    return [{"question": f"question {i}?", "answered": a, "reason": "r"} for i, a in enumerate(answered, 1)]


def test_summarization_min_of_alignment_and_coverage(fake_openai):
    # alignment 3/4 = 0.75; coverage 4/5 = 0.8; min = 0.75
    fake_openai.enqueue(
        Reply.json(
            {"claims": claims("yes", "yes", "no", "yes"), "questions": questions("yes", "yes", "yes", "no", "yes")}
        )
    )
    scorer = create_summarization_scorer(settings=settings_for(fake_openai))
    result = scorer.run(payload(SOURCE, SUMMARY))
    assert result.score == 0.75
    assert scorer.dimension_scores(result.analyze_step_result) == {"alignment": 0.75, "coverage": 0.8}
    assert 'alignment 0.75 (3 of 4 claims supported by the source; not supported: "claim 3")' in result.reason
    assert 'coverage 0.80 (4 of 5 key questions answered; unanswered: "question 4?")' in result.reason
    assert fake_openai.chat_call_count == 1 and scorer.judge_calls_per_run == 1
    assert_wrapped(fake_openai, ("source", SOURCE), ("summary", SUMMARY))


def test_summarization_unsure_is_not_supported_and_coverage_lower(fake_openai):
    # alignment 2/3 (unsure not counted) = 0.667; coverage 1/2 = 0.5; min 0.5 × scale 10 = 5
    fake_openai.enqueue(Reply.json({"claims": claims("yes", "unsure", "yes"), "questions": questions("yes", "no")}))
    assert (
        create_summarization_scorer(scale=10, settings=settings_for(fake_openai)).run(payload(SOURCE, SUMMARY)).score
        == 5
    )


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        ({"claims": [], "questions": questions("yes", "yes")}, "makes no claim"),
        ({"claims": claims("yes"), "questions": []}, "no key question"),
    ],
)
def test_summarization_no_claims_or_no_questions_scores_zero(fake_openai, reply, says):
    fake_openai.enqueue(Reply.json(reply))
    result = create_summarization_scorer(settings=settings_for(fake_openai)).run(payload(SOURCE, SUMMARY))
    assert result.score == 0 and says in result.reason


def test_summarization_keeps_the_first_max_questions(fake_openai):
    # issue #14 decision 15, Mastra's measureAxes: questions.slice(0, maxQuestions)
    # 11 questions, the first 10 answered, the 11th not: coverage 10/10 = 1; alignment 1/1 -> 1
    eleven = {"claims": claims("yes"), "questions": questions(*["yes"] * 10, "no")}
    fake_openai.enqueue(Reply.json(eleven))
    result = create_summarization_scorer(settings=settings_for(fake_openai)).run(payload(SOURCE, SUMMARY))
    assert result.score == 1.0
    assert len(result.analyze_step_result["questions"]) == 10
    assert fake_openai.chat_call_count == 1
    # max_questions=3: yes, no, yes kept -> coverage 2/3; min(1, 0.667) -> 0.67
    fake_openai.enqueue(Reply.json({"claims": claims("yes"), "questions": questions("yes", "no", "yes", "no")}))
    scorer = create_summarization_scorer(settings=settings_for(fake_openai), max_questions=3)
    assert scorer.run(payload(SOURCE, SUMMARY)).score == 0.67
    assert "at most 3 closed questions" in fake_openai.last_prompt_text()


def test_summarization_independent_questions_two_calls(fake_openai):
    # call 1 sees the source only; call 2 answers the 3 numbered questions
    # alignment 2/2 = 1; coverage 2/3 = 0.667 → 0.67
    fake_openai.enqueue(
        Reply.json({"questions": ["What was approved?", "When does construction start?", "Who objected?"]}),
        Reply.json(
            {
                "claims": claims("yes", "yes"),
                "answers": [{"index": i, "answered": a, "reason": "r"} for i, a in enumerate(("yes", "yes", "no"), 1)],
            }
        ),
    )
    scorer = create_summarization_scorer(options={"independentQuestions": True}, settings=settings_for(fake_openai))
    assert scorer.judge_calls_per_run == 2
    result = scorer.run(payload(SOURCE, SUMMARY))
    assert result.score == 0.67
    assert fake_openai.chat_call_count == 2 and result.judge.usage.calls == 2
    assert "<summary>" not in fake_openai.prompt_text(0)
    assert (
        "<questions>\n1. What was approved?\n2. When does construction start?\n3. Who objected?\n</questions>"
        in fake_openai.prompt_text(1)
    )
    assert result.analyze_step_result["questions"][2] == {"question": "Who objected?", "answered": "no", "reason": "r"}


def test_summarization_whose_second_call_fails_keeps_what_the_first_spent(fake_openai):
    # The questions call answered with 100 + 10 tokens; the check call answered 500, not retried: the error carries
    # both calls' requests (2), the one answer and its tokens, as the run's call cap counted them.
    fake_openai.enqueue(
        Reply.json({"questions": ["What was approved?"]}, usage={"prompt_tokens": 100, "completion_tokens": 10}),
        Reply.server_error(should_retry=False),
    )
    scorer = create_summarization_scorer(
        options={"independentQuestions": True}, settings=settings_for(fake_openai, max_retries=0)
    )
    with pytest.raises(JudgeError) as failed:
        scorer.run(payload(SOURCE, SUMMARY))
    usage = failed.value.usage
    assert (usage.requests, usage.calls, usage.prompt_tokens, usage.completion_tokens) == (2, 1, 100, 10)


def test_summarization_independent_questions_none_found_skips_second_call(fake_openai):
    fake_openai.enqueue(Reply.json({"questions": []}))
    scorer = create_summarization_scorer(independent_questions=True, settings=settings_for(fake_openai))
    result = scorer.run(payload(SOURCE, SUMMARY))
    assert result.score == 0 and fake_openai.chat_call_count == 1
    assert result.analyze_step_result["alignmentScore"] is None
    assert scorer.dimension_scores(result.analyze_step_result) == {"coverage": 0.0}


def test_summarization_needs_source_and_summary(fake_openai):
    scorer = create_summarization_scorer(settings=settings_for(fake_openai))
    for run, field in ((payload("", SUMMARY), "input"), (payload(SOURCE, ""), "output")):
        with pytest.raises(InvalidInputError) as info:
            scorer.run(run)
        assert info.value.field == field
    assert fake_openai.chat_call_count == 0


# ----------------------------------------------------------------------------- G-Eval rubric

CRITERIA = "Clarity for a beginner: plain words, a concrete analogy, no unexplained jargon."
STEPS = ["Check that every technical term is explained.", "Check for an analogy.", "Check correctness."]


def judgement(score, n=3):
    return {
        "stepFindings": [{"index": i, "finding": f"finding {i}"} for i in range(1, n + 1)],
        "reasoning": "Clear, with an analogy.",
        "score": score,
    }


def test_rubric_with_given_steps_one_call(fake_openai):
    # (4 − 1) / (5 − 1) = 0.75
    fake_openai.enqueue(Reply.json(judgement(4)))
    scorer = create_rubric_scorer(CRITERIA, STEPS, settings=settings_for(fake_openai))
    result = scorer.run(
        payload(
            "Explain a hash map.",
            "It maps keys to values, like a dictionary.",
            ground_truth="Key-value store with hashing.",
            context=["Hash maps use hashing."],
        )
    )
    assert result.score == 0.75
    assert result.reason.startswith(
        "The score is 0.750 out of 1: the judge gave 4 on the 1–5 scale, normalised to "
        "(4 − 1) / (5 − 1) = 0.75. Clear, with an analogy."
    )
    assert fake_openai.chat_call_count == 1 and scorer.judge_calls_per_run == 1
    assert result.analyze_step_result["stepsSource"] == "given"
    assert result.analyze_step_result["stepFindings"][1] == {"step": STEPS[1], "finding": "finding 2"}
    assert_wrapped(
        fake_openai,
        ("criteria", CRITERIA),
        ("evaluation_steps", "\n".join(f"{i}. {s}" for i, s in enumerate(STEPS, 1))),
        ("input", "Explain a hash map."),
        ("response", "It maps keys to values, like a dictionary."),
        ("reference_answer", "Key-value store with hashing."),
        ("context", "Hash maps use hashing."),
    )


def test_rubric_steps_written_once_and_reused(fake_openai):
    # run 1: steps call + score call (2 calls), 5 on 1..5 → 1.0; run 2: score call only, 2 → (2 − 1)/4 = 0.25
    fake_openai.enqueue(
        Reply.json({"steps": ["Step A.", "Step B."]}), Reply.json(judgement(5, n=2)), Reply.json(judgement(2, n=2))
    )
    scorer = create_rubric_scorer(criteria=CRITERIA, settings=settings_for(fake_openai))
    assert scorer.evaluation_steps is None and scorer.judge_calls_per_run == 2
    first = scorer.run(payload("Explain a hash map.", "First answer."))
    assert first.score == 1.0
    assert fake_openai.chat_call_count == 2 and first.judge.usage.calls == 2
    assert scorer.evaluation_steps == ("Step A.", "Step B.") and scorer.judge_calls_per_run == 1
    assert first.analyze_step_result["evaluationSteps"] == ["Step A.", "Step B."]
    assert first.analyze_step_result["stepsSource"] == "generated"
    assert first.analyze_step_result["stepsWrittenThisRun"] is True
    steps_prompt = fake_openai.prompt_text(0)
    assert "<criteria>" in steps_prompt and "First answer." not in steps_prompt
    assert fake_openai.chat_requests()[0]["response_format"]["json_schema"]["name"] == "rubric_steps"

    second = scorer.run(payload("Explain a hash map.", "Second answer."))
    assert second.score == 0.25
    assert fake_openai.chat_call_count == 3  # the second run made one call only
    assert second.analyze_step_result["evaluationSteps"] == ["Step A.", "Step B."]
    assert second.analyze_step_result["stepsWrittenThisRun"] is False
    assert "<evaluation_steps>\n1. Step A.\n2. Step B.\n</evaluation_steps>" in fake_openai.last_prompt_text()


def test_rubric_concurrent_first_runs_write_steps_once(fake_openai):
    # 4 items at concurrency 4: 1 steps call + 4 score calls
    def responder(body):
        name = body["response_format"]["json_schema"]["name"]
        return Reply.json({"steps": ["Only step."]} if name == "rubric_steps" else judgement(3, n=1), delay=0.05)

    fake_openai.responder = responder
    scorer = create_rubric_scorer(CRITERIA, settings=settings_for(fake_openai))
    items = [EvalItem(str(i), payload("Q", f"answer {i}")) for i in range(4)]
    result = run_evals(items, [scorer], concurrency=4)
    # 3 on 1..5: (3 − 1)/4 = 0.5 each
    assert [o.score for o in result.outcomes] == [0.5] * 4
    names = [b["response_format"]["json_schema"]["name"] for b in fake_openai.chat_requests()]
    assert names.count("rubric_steps") == 1 and names.count("rubric_score") == 4


def test_rubric_generate_steps_up_front_and_estimate(fake_openai):
    fake_openai.enqueue(Reply.json({"steps": ["One.", "Two.", "Three."]}))
    scorer = create_rubric_scorer(CRITERIA, settings=settings_for(fake_openai))
    assert scorer.generate_steps() == ("One.", "Two.", "Three.")
    assert scorer.generate_steps() == ("One.", "Two.", "Three.") and fake_openai.chat_call_count == 1
    estimate = estimate_run([EvalItem("a", payload()), EvalItem("b", payload())], [scorer])
    assert estimate.judge_calls == 2  # one call per item once the steps exist


def test_rubric_custom_scale(fake_openai):
    # 0..10 scale: (7 − 0) / (10 − 0) = 0.7; × scale 10 = 7
    fake_openai.enqueue(Reply.json(judgement(7)))
    scorer = create_rubric_scorer(
        CRITERIA, STEPS, scale_min=0, scale_max=10, options={"scale": 10}, settings=settings_for(fake_openai)
    )
    assert scorer.run(payload()).score == 7


@pytest.mark.parametrize("bad", [judgement(6), judgement(0), judgement(4.5), judgement("4"), judgement(4, n=2)])
def test_rubric_score_out_of_range_or_wrong_findings_is_invalid(fake_openai, bad):
    fake_openai.enqueue(Reply.json(bad), Reply.json(bad))
    with pytest.raises(JudgeOutputInvalidError):
        create_rubric_scorer(CRITERIA, STEPS, settings=settings_for(fake_openai)).run(payload())
    assert fake_openai.chat_call_count == 2


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({}, "options.criteria"),
        ({"criteria": "  "}, "options.criteria"),
        ({"criteria": CRITERIA, "scale_min": 5, "scale_max": 5}, "options.scale_max"),
        ({"criteria": CRITERIA, "scale_min": 1.5}, "options.scale_min"),
        ({"criteria": CRITERIA, "evaluation_steps": "one step"}, "options.evaluation_steps"),
        ({"criteria": CRITERIA, "evaluation_steps": ["s"] * 9}, "options.evaluation_steps"),
        ({"criteria": CRITERIA, "options": {"threshold": 3}}, "options"),
    ],
)
def test_rubric_options_checked_at_construction(kwargs, field):
    with pytest.raises(InvalidInputError) as info:
        create_rubric_scorer(**kwargs, settings=OFFLINE)
    assert info.value.field == field


# ----------------------------------------------------------------------------- checklist rubric (Mastra's)

CHECKS = ["Defines a hash map", "Uses an analogy", "Mentions collisions"]


def verdicts(*satisfied):
    return {
        "criteria": [{"index": i, "satisfied": s, "reasoning": f"evidence {i}."} for i, s in enumerate(satisfied, 1)]
    }


def test_checklist_required_satisfied_scores_scale(fake_openai):
    # required: criteria 1 and 2, both satisfied; criterion 3 (optional) not → scale = 10
    fake_openai.enqueue(Reply.json(verdicts(True, True, False)))
    scorer = create_checklist_rubric_scorer(
        CHECKS, options={"required_criteria": CHECKS[:2], "scale": 10}, settings=settings_for(fake_openai)
    )
    result = scorer.run(payload())
    assert result.score == 10
    assert (
        result.reason
        == "The score is 10.000 out of 10: every required criterion is satisfied (2 of 3 criteria are satisfied)."
    )
    assert scorer.dimension_scores(result.analyze_step_result)["3. Mentions collisions"] == 0.0
    assert fake_openai.chat_call_count == 1
    assert_wrapped(
        fake_openai,
        ("criteria", "1. Defines a hash map (required)\n2. Uses an analogy (required)\n3. Mentions collisions"),
        ("response", RESPONSE),
    )


def test_checklist_required_failure_scores_zero(fake_openai):
    # required criterion 2 not satisfied → 0
    fake_openai.enqueue(Reply.json(verdicts(True, False, True)))
    scorer = create_checklist_rubric_scorer(
        [{"criterion": CHECKS[0], "required": True}, {"criterion": CHECKS[1], "required": True}, CHECKS[2]],
        settings=settings_for(fake_openai),
    )
    result = scorer.run(payload())
    assert result.score == 0
    assert '1 required criterion(s) not satisfied: "Uses an analogy" (evidence 2)' in result.reason


def test_checklist_none_marked_means_all_required(fake_openai):
    # no criterion marked: all three are required; one fails → 0; all pass → 1
    fake_openai.enqueue(Reply.json(verdicts(True, True, False)), Reply.json(verdicts(True, True, True)))
    scorer = create_checklist_rubric_scorer(CHECKS, settings=settings_for(fake_openai))
    assert scorer.required_criteria == tuple(CHECKS)
    assert scorer.run(payload()).score == 0
    assert scorer.run(payload()).score == 1


@pytest.mark.parametrize(
    "bad",
    [
        verdicts(True, True),
        verdicts(True, True, "yes"),
        {"criteria": [{"index": i, "satisfied": True, "reasoning": "r"} for i in (1, 3, 2)]},
    ],
)
def test_checklist_needs_one_boolean_verdict_per_criterion_in_order(fake_openai, bad):
    fake_openai.enqueue(Reply.json(bad), Reply.json(bad))
    with pytest.raises(JudgeOutputInvalidError):
        create_checklist_rubric_scorer(CHECKS, settings=settings_for(fake_openai)).run(payload())
    assert fake_openai.chat_call_count == 2


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({}, "options.criteria"),
        ({"criteria": "one string"}, "options.criteria"),
        ({"criteria": ["a", "a"]}, "options.criteria[1]"),
        ({"criteria": [{"criterion": "a", "required": "yes"}]}, "options.criteria[0].required"),
        ({"criteria": ["a"], "options": {"required_criteria": ["b"]}}, "options.required_criteria[0]"),
    ],
)
def test_checklist_options_checked_at_construction(kwargs, field):
    with pytest.raises(InvalidInputError) as info:
        create_checklist_rubric_scorer(**kwargs, settings=OFFLINE)
    assert info.value.field == field


# ----------------------------------------------------------------------------- catalogue

CANNED = {
    "toxicity": remarks("yes", "no"),
    "bias": opinions("gender", "none"),
    "tool_call_accuracy": evaluations(("weather", "yes"), ("calculator", "no"), missing=["search"]),
    "noise_sensitivity": noise(("none", "minimal", "none", "none", "none"), 0.95),
    "summarization": {"claims": claims("yes"), "questions": questions("yes", "no")},
    "rubric_score": judgement(4),
    "checklist_rubric": verdicts(True, True, False),
}


@pytest.mark.parametrize("scorer_id", MY_IDS)
def test_catalogue_entries_build_and_run_their_example(fake_openai, scorer_id):
    spec = SCORERS[scorer_id]
    assert spec.uses_judge and spec.judge_calls == 1
    assert spec.higher_is_better is (scorer_id not in ("toxicity", "bias"))
    assert spec.notes and spec.formula and spec.measures
    example = dict(spec.example)
    options = example.pop("options")
    assert set(options) <= {o.name for o in spec.options}
    fake_openai.responder = lambda body: Reply.json(CANNED[body["response_format"]["json_schema"]["name"]])
    scorer = create_scorer(scorer_id, options, settings=settings_for(fake_openai))
    assert scorer.id == scorer_id
    messages = scorer.render_prompt(example)
    assert messages[0]["content"].endswith(DATA_NOTICE)
    result = scorer.run(example)
    assert 0 <= result.score <= options.get("scale", 1)
    assert fake_openai.chat_call_count == spec.judge_calls == scorer.judge_calls_per_run
    assert result.reason.startswith(f"The score is {decimal_text(result.score)} out of ")


@pytest.mark.parametrize("scorer_id", MY_IDS)
def test_catalogue_rejects_bad_scale(scorer_id):
    example_options = dict(SCORERS[scorer_id].example["options"])
    with pytest.raises(InvalidInputError) as info:
        create_scorer(scorer_id, {**example_options, "scale": -1}, settings=OFFLINE)
    assert info.value.field == "options.scale"


def test_missing_key_fails_at_run_time_after_input_checks():
    # construction never needs the judge; a bad input is reported before the missing key
    scorer = create_toxicity_scorer(settings=JudgeSettings())
    with pytest.raises(InvalidInputError):
        scorer.run(payload(output=""))
    with pytest.raises(JudgeConfigError):
        scorer.run(payload())
