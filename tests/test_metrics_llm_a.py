"""LLM-judged metrics, part A: answer relevancy, answer similarity, faithfulness, hallucination,
context precision and context relevance (MASTRA_SCORERS.md), through the fake OpenAI server.

Expected scores are worked by hand from the formulas in the comments.
"""

from __future__ import annotations

import pytest
from fake_openai import Reply
from judge_data import settings_for

from scorers import SCORERS, InvalidInputError, JudgeOutputInvalidError, JudgeSettings, ScoreStatus, create_scorer
from scorers.catalogue.metrics.answer_relevancy import create_answer_relevancy_scorer
from scorers.catalogue.metrics.answer_similarity import create_answer_similarity_scorer
from scorers.catalogue.metrics.context_precision import create_context_precision_scorer, mean_average_precision
from scorers.catalogue.metrics.context_relevance import create_context_relevance_scorer
from scorers.catalogue.metrics.faithfulness import create_faithfulness_scorer
from scorers.catalogue.metrics.hallucination import create_hallucination_scorer
from scorers.core.base import decimal_text
from scorers.core.judge import DATA_NOTICE

QUESTION = "How do I reverse a list in Python?"
RESPONSE = "Use my_list.reverse() to reverse in place. Python was created by Guido van Rossum."
CONTEXT = ["The Eiffel Tower is in Paris.", "It was completed in 1889.", "It is repainted every seven years."]
MY_IDS = (
    "answer-relevancy",
    "answer-similarity",
    "faithfulness",
    "hallucination",
    "context-precision",
    "context-relevance",
)


def payload(**extra):
    return {"input": [{"role": "user", "content": QUESTION}], "output": RESPONSE, **extra}


def statements(*verdicts, key="statement"):
    return [{key: f"{key} {i}", "verdict": v, "reason": f"because {i}"} for i, v in enumerate(verdicts, 1)]


def pieces(*verdicts):
    return {"verdicts": [{"index": i, "verdict": v, "reason": f"piece {i} reason"} for i, v in enumerate(verdicts, 1)]}


def rated(*ratings, missing=()):
    return {
        "pieces": [
            {"index": i, "relevance": r, "used": u, "reason": f"piece {i}"} for i, (r, u) in enumerate(ratings, 1)
        ],
        "missingContext": list(missing),
    }


def units(*matches, extra=(), contradictions=()):
    return {
        "groundTruthUnits": [
            {"unit": f"unit {i}", "match": m, "responseEvidence": "" if m == "missing" else f"text {i}", "reason": "r"}
            for i, m in enumerate(matches, 1)
        ],
        "extraUnits": list(extra),
        "contradictions": [{"responseClaim": a, "groundTruthClaim": b} for a, b in contradictions],
    }


def system_and_user(fake):
    messages = fake.last_chat_request()["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"].endswith(DATA_NOTICE)
    return messages[1]["content"]


# ---------------------------------------------------------------- answer relevancy


def test_answer_relevancy_formula_one_call_and_prompt(fake_openai):
    # 2 yes, 1 unsure, 1 no: (2 + 0.3·1) / 4 = 2.3 / 4 = 0.575 -> 0.58 (half up)
    fake_openai.enqueue(Reply.json({"statements": statements("yes", "yes", "unsure", "no")}))
    result = create_answer_relevancy_scorer(settings=settings_for(fake_openai)).run(payload())
    assert result.score == 0.58
    assert fake_openai.chat_call_count == 1 and result.judge.usage.calls == 1
    analysis = result.analyze_step_result
    assert analysis["counts"] == {"yes": 2, "unsure": 1, "no": 1}
    assert analysis["uncertaintyWeight"] == 0.3
    assert result.reason.startswith("The score is 0.580 out of 1: 2 of 4 statements are relevant")
    assert '"statement 4"' in result.reason  # the irrelevant one is quoted
    prompt = system_and_user(fake_openai)
    assert f"<question>\n{QUESTION}\n</question>" in prompt
    assert f"<response>\n{RESPONSE}\n</response>" in prompt
    schema = fake_openai.last_chat_request()["response_format"]["json_schema"]
    assert schema["name"] == "answer_relevancy"
    verdict = schema["schema"]["$defs"]["StatementVerdict"]["properties"]["verdict"]
    assert verdict["enum"] == ["yes", "no", "unsure"]


def test_answer_relevancy_keeps_weight_default_when_only_scale_is_given(fake_openai):
    # Mastra's defect: options {scale} dropped the 0.3 default. Ours: (2 + 0.3) / 4 × 10 = 5.75
    fake_openai.enqueue(Reply.json({"statements": statements("yes", "yes", "unsure", "no")}))
    scorer = create_answer_relevancy_scorer(options={"scale": 10}, settings=settings_for(fake_openai))
    assert scorer.run(payload()).score == 5.75


def test_answer_relevancy_custom_weight_keyword_and_camel_case(fake_openai):
    # (1 + 0.5·2) / 4 = 2 / 4 = 0.5
    fake_openai.enqueue(Reply.json({"statements": statements("yes", "unsure", "unsure", "no")}))
    scorer = create_answer_relevancy_scorer(uncertaintyWeight=0.5, settings=settings_for(fake_openai))
    assert scorer.run(payload()).score == 0.5
    # weight 0: unsure counts nothing: 1 / 3 = 0.333… -> 0.33
    fake_openai.enqueue(Reply.json({"statements": statements("yes", "unsure", "no")}))
    scorer = create_answer_relevancy_scorer(options={"uncertainty_weight": 0}, settings=settings_for(fake_openai))
    assert scorer.run(payload()).score == 0.33


def test_answer_relevancy_verdicts_are_trimmed_and_lowercased(fake_openai):
    # " YES " = yes, "Unsure" = unsure: (1 + 0.3) / 2 = 0.65
    fake_openai.enqueue(Reply.json({"statements": statements(" YES ", "Unsure")}))
    result = create_answer_relevancy_scorer(settings=settings_for(fake_openai)).run(payload())
    assert result.score == 0.65
    assert [s["verdict"] for s in result.analyze_step_result["statements"]] == ["yes", "unsure"]


def test_answer_relevancy_no_statements_scores_zero_and_says_why(fake_openai):
    fake_openai.enqueue(Reply.json({"statements": []}))
    scorer = create_answer_relevancy_scorer(settings=settings_for(fake_openai))
    result = scorer.run(payload(output="🙂"))
    assert result.score == 0
    assert "no statements" in result.reason
    assert scorer.dimension_scores(result.analyze_step_result) == {}


def test_answer_relevancy_dimension_scores(fake_openai):
    fake_openai.enqueue(Reply.json({"statements": statements("yes", "yes", "unsure", "no")}))
    scorer = create_answer_relevancy_scorer(settings=settings_for(fake_openai))
    dims = scorer.dimension_scores(scorer.run(payload()).analyze_step_result)
    assert dims == {"relevant": 0.5, "partlyRelevant": 0.25, "irrelevant": 0.25}


@pytest.mark.parametrize("bad", ["maybe", "", True, 1, None, "yes please"])
def test_invalid_verdict_is_invalid_judge_output_after_one_reask(fake_openai, bad):
    reply = Reply.json({"statements": [{"statement": "s", "verdict": bad, "reason": "r"}]})
    fake_openai.enqueue(reply, reply)
    with pytest.raises(JudgeOutputInvalidError) as info:
        create_answer_relevancy_scorer(settings=settings_for(fake_openai)).run(payload())
    assert info.value.status is ScoreStatus.JUDGE_OUTPUT_INVALID
    assert fake_openai.chat_call_count == 2
    assert "verdict" in str(info.value)
    assert "That reply is invalid" in fake_openai.last_prompt_text()


def test_invalid_verdict_then_valid_reply_scores(fake_openai):
    fake_openai.enqueue(
        Reply.json({"statements": statements("relevant")}), Reply.json({"statements": statements("yes")})
    )
    result = create_answer_relevancy_scorer(settings=settings_for(fake_openai)).run(payload())
    assert result.score == 1.0
    assert result.judge.usage.calls == 2


@pytest.mark.parametrize(
    ("run", "field"),
    [({"input": [], "output": RESPONSE}, "input"), (payload(output="  \n"), "output")],
)
def test_answer_relevancy_input_errors_before_any_call(fake_openai, run, field):
    with pytest.raises(InvalidInputError) as info:
        create_answer_relevancy_scorer(settings=settings_for(fake_openai)).run(run)
    assert info.value.field == field
    assert fake_openai.chat_call_count == 0


# ---------------------------------------------------------------- answer similarity


def test_answer_similarity_formula(fake_openai):
    # exact 1.2 + semantic 0.8 + missing −0.15 = 1.85; / (3·1.2 = 3.6) = 0.513888…
    # minus min(1 extra·0.05, 0.2) = 0.05 -> 0.463888… -> 0.46
    fake_openai.enqueue(Reply.json(units("exact", "semantic", "missing", extra=["It has a tower."])))
    scorer = create_answer_similarity_scorer(settings=settings_for(fake_openai))
    result = scorer.run(
        payload(ground_truth="Reverse with list.reverse() or slicing [::-1]; reverse() works in place.")
    )
    assert result.score == 0.46
    assert fake_openai.chat_call_count == 1
    analysis = result.analyze_step_result
    assert analysis["matchCounts"] == {"exact": 1, "semantic": 1, "partial": 0, "missing": 1}
    assert analysis["coverage"] == pytest.approx(1.85 / 3.6)
    assert scorer.dimension_scores(analysis) == pytest.approx(
        {"exact": 1 / 3, "semantic": 1 / 3, "partial": 0, "missing": 1 / 3}
    )
    assert "misses 1" in result.reason and '"unit 3"' in result.reason
    prompt = system_and_user(fake_openai)
    assert "<ground_truth>\nReverse with list.reverse()" in prompt
    assert f"<response>\n{RESPONSE}\n</response>" in prompt


def test_answer_similarity_contradiction_penalty(fake_openai):
    # exact 1.2 + partial 0.4 = 1.6; / 2.4 = 0.6667; − 1.0·1 contradiction = −0.333 -> clamped to 0
    reply = units("exact", "partial", contradictions=[("It is in Lyon", "It is in Paris")])
    fake_openai.enqueue(Reply.json(reply))
    result = create_answer_similarity_scorer(settings=settings_for(fake_openai)).run(payload(ground_truth="gt"))
    assert result.score == 0
    assert "contradicts the ground truth 1 time" in result.reason
    assert '"It is in Lyon" where the ground truth says "It is in Paris"' in result.reason
    # with contradiction_penalty 0.25: 0.6667 − 0.25 = 0.41667 -> 0.42
    fake_openai.enqueue(Reply.json(reply))
    scorer = create_answer_similarity_scorer(contradiction_penalty=0.25, settings=settings_for(fake_openai))
    assert scorer.run(payload(ground_truth="gt")).score == 0.42


def test_answer_similarity_extra_penalty_is_capped_and_scale_applies(fake_openai):
    # 1 exact unit: 1.2 / 1.2 = 1; 5 extras: min(5·0.05 = 0.25, 0.2) = 0.2 -> 0.8; × 10 = 8
    fake_openai.enqueue(Reply.json(units("exact", extra=["a", "b", "c", "d", "e"])))
    scorer = create_answer_similarity_scorer(options={"scale": 10}, settings=settings_for(fake_openai))
    result = scorer.run(payload(ground_truth="gt"))
    assert result.score == 8.0
    assert "(and 2 more)" in result.reason


def test_answer_similarity_all_missing_is_clamped_to_zero(fake_openai):
    # 2 × −0.15 = −0.3; / 2.4 = −0.125 -> clamped to 0
    fake_openai.enqueue(Reply.json(units("missing", "missing")))
    assert (
        create_answer_similarity_scorer(settings=settings_for(fake_openai)).run(payload(ground_truth="gt")).score == 0
    )


def test_answer_similarity_custom_weights_and_label_normalisation(fake_openai):
    # semantic_threshold 0.6, exact_match_bonus 0: semantic 0.6 + partial 0.3 = 0.9; / (2·1.0) = 0.45
    fake_openai.enqueue(Reply.json(units(" Semantic", "PARTIAL ")))
    scorer = create_answer_similarity_scorer(
        options={"semanticThreshold": 0.6, "exactMatchBonus": 0}, settings=settings_for(fake_openai)
    )
    assert scorer.run(payload(ground_truth="gt")).score == 0.45


def test_answer_similarity_without_ground_truth_is_invalid_input_never_zero(fake_openai):
    scorer = create_answer_similarity_scorer(settings=settings_for(fake_openai))
    for run in (payload(), payload(ground_truth="   ")):
        with pytest.raises(InvalidInputError) as info:
            scorer.run(run)
        assert info.value.field == "ground_truth"
    assert fake_openai.chat_call_count == 0


def test_answer_similarity_require_ground_truth_false_is_rejected():
    settings = JudgeSettings(base_url="http://127.0.0.1:9/v1")
    with pytest.raises(InvalidInputError) as info:
        create_answer_similarity_scorer(options={"requireGroundTruth": False}, settings=settings)
    assert info.value.field == "options.require_ground_truth"
    assert "never a score" in str(info.value)
    create_answer_similarity_scorer(require_ground_truth=True, settings=settings)


def test_answer_similarity_empty_unit_list_is_invalid_judge_output(fake_openai):
    empty = Reply.json(units())
    fake_openai.enqueue(empty, empty)
    with pytest.raises(JudgeOutputInvalidError):
        create_answer_similarity_scorer(settings=settings_for(fake_openai)).run(payload(ground_truth="gt"))
    assert fake_openai.chat_call_count == 2


# ---------------------------------------------------------------- faithfulness


def test_faithfulness_formula_and_prompt(fake_openai):
    # 2 supported of 4 claims: 2 / 4 = 0.5; × 10 = 5
    fake_openai.enqueue(Reply.json({"claims": statements("yes", "yes", "no", "unsure", key="claim")}))
    scorer = create_faithfulness_scorer(scale=10, settings=settings_for(fake_openai))
    result = scorer.run(payload(context=CONTEXT))
    assert result.score == 5.0
    assert fake_openai.chat_call_count == 1
    assert result.analyze_step_result["contextSource"] == "run"
    assert scorer.dimension_scores(result.analyze_step_result) == {
        "supported": 0.5,
        "contradicted": 0.25,
        "notInContext": 0.25,
    }
    assert "2 of 4 claims are supported by the context, 1 contradicted and 1 not covered" in result.reason
    prompt = system_and_user(fake_openai)
    for i, piece in enumerate(CONTEXT, 1):
        assert f"<context_{i}>\n{piece}\n</context_{i}>" in prompt
    assert f"<response>\n{RESPONSE}\n</response>" in prompt
    assert f"<question>\n{QUESTION}\n</question>" in prompt


def test_faithfulness_one_third(fake_openai):
    # 1 / 3 = 0.333… -> 0.33
    fake_openai.enqueue(Reply.json({"claims": statements("yes", "no", "no", key="claim")}))
    assert create_faithfulness_scorer(settings=settings_for(fake_openai)).run(payload(context=CONTEXT)).score == 0.33


def test_faithfulness_no_claims_scores_zero(fake_openai):
    fake_openai.enqueue(Reply.json({"claims": []}))
    result = create_faithfulness_scorer(settings=settings_for(fake_openai)).run(payload(context=CONTEXT))
    assert result.score == 0
    assert "no factual claims" in result.reason


def test_faithfulness_without_any_context_is_invalid_input(fake_openai):
    with pytest.raises(InvalidInputError) as info:
        create_faithfulness_scorer(settings=settings_for(fake_openai)).run(payload(context=["  "]))
    assert info.value.field == "context"
    assert fake_openai.chat_call_count == 0


def test_faithfulness_context_from_option_then_tool_results(fake_openai):
    fake_openai.enqueue(Reply.json({"claims": statements("yes", key="claim")}))
    scorer = create_faithfulness_scorer(
        options={"context": ["Configured passage."]}, settings=settings_for(fake_openai)
    )
    result = scorer.run(payload())
    assert result.analyze_step_result["contextSource"] == "options"
    assert "<context_1>\nConfigured passage.\n</context_1>" in fake_openai.last_prompt_text()
    # the run's own context wins over the option
    fake_openai.enqueue(Reply.json({"claims": statements("yes", key="claim")}))
    assert scorer.run(payload(context="Run passage.")).analyze_step_result["contextSource"] == "run"
    assert "Configured passage." not in fake_openai.last_prompt_text()
    # no context anywhere: tool results in the output are the context (Mastra)
    fake_openai.enqueue(Reply.json({"claims": statements("yes", "no", key="claim")}))
    run = {
        "input": [{"role": "user", "content": "Weather in Paris?"}],
        "output": {
            "role": "assistant",
            "text": "It is 21 °C in Paris.",
            "toolInvocations": [
                {"toolName": "weather", "args": {"city": "Paris"}, "result": {"temp": 21}},
                {"toolName": "pending", "args": {}},
            ],
        },
    }
    result = create_faithfulness_scorer(settings=settings_for(fake_openai)).run(run)
    assert result.score == 0.5  # 1 / 2
    assert result.analyze_step_result["contextSource"] == "tool results"
    assert "supported by the tool results" in result.reason
    prompt = fake_openai.last_prompt_text()
    assert '<context_1>\nweather({"city": "Paris"}) returned: {"temp": 21}\n</context_1>' in prompt
    assert "<context_2>" not in prompt  # a call without a result is no context


# ---------------------------------------------------------------- hallucination


def test_hallucination_formula_lower_is_better(fake_openai):
    # 1 hallucinated of 3 claims: 1 / 3 = 0.333… -> 0.33
    fake_openai.enqueue(Reply.json({"claims": statements("yes", "no", " No", key="claim")}))
    result = create_hallucination_scorer(settings=settings_for(fake_openai)).run(payload(context=CONTEXT))
    assert result.score == 0.33
    assert fake_openai.chat_call_count == 1
    assert "lower is better" in result.reason and '"claim 1"' in result.reason
    assert SCORERS["hallucination"].higher_is_better is False
    prompt = system_and_user(fake_openai)
    assert "<context_3>\nIt is repainted every seven years.\n</context_3>" in prompt


def test_hallucination_all_hallucinated_with_scale(fake_openai):
    # 2 / 2 = 1; × 5 = 5
    fake_openai.enqueue(Reply.json({"claims": statements("yes", "yes", key="claim")}))
    assert (
        create_hallucination_scorer(scale=5, settings=settings_for(fake_openai)).run(payload(context=CONTEXT)).score
        == 5
    )


def test_hallucination_no_claims_scores_zero(fake_openai):
    fake_openai.enqueue(Reply.json({"claims": []}))
    result = create_hallucination_scorer(settings=settings_for(fake_openai)).run(payload(context=CONTEXT))
    assert result.score == 0 and "nothing is hallucinated" in result.reason


def test_hallucination_unsure_is_not_a_valid_verdict(fake_openai):
    reply = Reply.json({"claims": statements("unsure", key="claim")})
    fake_openai.enqueue(reply, reply)
    with pytest.raises(JudgeOutputInvalidError):
        create_hallucination_scorer(settings=settings_for(fake_openai)).run(payload(context=CONTEXT))
    assert fake_openai.chat_call_count == 2


def test_hallucination_without_context_is_invalid_input(fake_openai):
    with pytest.raises(InvalidInputError) as info:
        create_hallucination_scorer(settings=settings_for(fake_openai)).run(payload())
    assert info.value.field == "context" and fake_openai.chat_call_count == 0


# ---------------------------------------------------------------- context precision


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        # relevant at positions 1 and 3: (1/1 + 2/3) / 2 = 0.8333 -> 0.83
        (("yes", "no", "yes"), 0.83),
        # relevant at 2 only: (1/2) / 1 = 0.5
        (("no", "yes"), 0.5),
        # relevant at 2 and 3: (1/2 + 2/3) / 2 = 0.58333 -> 0.58
        (("no", "yes", "yes"), 0.58),
        # all relevant: (1 + 1 + 1) / 3 = 1
        (("yes", "yes", "yes"), 1.0),
        # none relevant -> 0
        (("no", "no", "no"), 0.0),
    ],
)
def test_context_precision_mean_average_precision(fake_openai, verdicts, expected):
    fake_openai.enqueue(Reply.json(pieces(*verdicts)))
    context = [f"passage {i}" for i in range(1, len(verdicts) + 1)]
    result = create_context_precision_scorer(settings=settings_for(fake_openai)).run(payload(context=context))
    assert result.score == expected
    assert fake_openai.chat_call_count == 1


def test_context_precision_helper_and_reason_and_schema(fake_openai):
    assert mean_average_precision([]) == 0
    fake_openai.enqueue(Reply.json(pieces("Yes", "no", "YES")))
    scorer = create_context_precision_scorer(settings=settings_for(fake_openai))
    result = scorer.run(payload(context=CONTEXT))
    assert result.score == 0.83
    assert "2 of 3 context pieces are relevant, at positions 1, 3" in result.reason
    assert "piece 2 is irrelevant" in result.reason
    assert scorer.dimension_scores(result.analyze_step_result) == {"relevantShare": pytest.approx(2 / 3)}
    schema = fake_openai.last_chat_request()["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["verdicts"]["minItems"] == 3 == schema["properties"]["verdicts"]["maxItems"]
    prompt = system_and_user(fake_openai)
    assert f"<question>\n{QUESTION}\n</question>" in prompt and "<context_2>\nIt was completed in 1889." in prompt


@pytest.mark.parametrize(
    "bad",
    [
        pieces("yes", "no"),  # one verdict short
        pieces("yes", "no", "yes", "no"),  # one too many
        {"verdicts": [{"index": i, "verdict": "yes", "reason": "r"} for i in (1, 3, 2)]},  # out of order
        pieces("yes", "perhaps", "no"),  # unknown label
    ],
)
def test_context_precision_wrong_verdict_list_is_invalid_after_one_reask(fake_openai, bad):
    fake_openai.enqueue(Reply.json(bad), Reply.json(bad))
    with pytest.raises(JudgeOutputInvalidError):
        create_context_precision_scorer(settings=settings_for(fake_openai)).run(payload(context=CONTEXT))
    assert fake_openai.chat_call_count == 2


def test_context_precision_without_context_is_invalid_input(fake_openai):
    scorer = create_context_precision_scorer(settings=settings_for(fake_openai))
    with pytest.raises(InvalidInputError) as info:
        scorer.run(payload())
    assert info.value.field == "context"
    tool_run = {
        "input": [{"role": "user", "content": "q"}],
        "output": "a",
        "tool_calls": [{"name": "search", "arguments": {}, "result": "found"}],
    }
    with pytest.raises(InvalidInputError):  # tool results are not retrieval context here
        scorer.run(tool_run)
    assert fake_openai.chat_call_count == 0


def test_context_precision_uses_the_context_option(fake_openai):
    # option context, relevant at 2: 1/2 = 0.5
    fake_openai.enqueue(Reply.json(pieces("no", "yes")))
    scorer = create_context_precision_scorer(context=["first", "second"], settings=settings_for(fake_openai))
    result = scorer.run(payload())
    assert result.score == 0.5 and result.analyze_step_result["contextSource"] == "options"


# ---------------------------------------------------------------- context relevance


def test_context_relevance_formula(fake_openai):
    # weights high 1.0 + medium 0.7 + none 0 = 1.7; / 3 = 0.5667; no unused high piece;
    # 1 missing: min(1·0.15, 0.5) = 0.15 -> 0.41667 -> 0.42
    fake_openai.enqueue(Reply.json(rated(("high", True), ("medium", False), ("none", False), missing=["the height"])))
    scorer = create_context_relevance_scorer(settings=settings_for(fake_openai))
    result = scorer.run(payload(context=CONTEXT))
    assert result.score == 0.42
    assert fake_openai.chat_call_count == 1
    analysis = result.analyze_step_result
    assert analysis["meanRelevance"] == pytest.approx(1.7 / 3)
    assert analysis["relevanceCounts"] == {"high": 1, "medium": 1, "low": 0, "none": 1}
    assert scorer.dimension_scores(analysis) == pytest.approx({"meanRelevance": 1.7 / 3, "usedShare": 1 / 3})
    assert 'Missing from the context (−0.15): "the height"' in result.reason
    prompt = system_and_user(fake_openai)
    assert "<context_1>\nThe Eiffel Tower is in Paris.\n</context_1>" in prompt
    schema = fake_openai.last_chat_request()["response_format"]["json_schema"]["schema"]
    assert list(schema["properties"]) == ["pieces", "missingContext"]


def test_context_relevance_unused_high_piece_penalty(fake_openai):
    # two high pieces: mean 1.0; piece 1 unused: − 0.1 -> 0.9; × 10 = 9
    fake_openai.enqueue(Reply.json(rated((" High", False), ("high", True))))
    result = create_context_relevance_scorer(scale=10, settings=settings_for(fake_openai)).run(
        payload(context=CONTEXT[:2])
    )
    assert result.score == 9.0
    assert "did not use highly relevant piece 1 (−0.1)" in result.reason


def test_context_relevance_missing_penalty_is_capped_and_floored(fake_openai):
    # low 0.3; 5 missing: min(5·0.15 = 0.75, 0.5) = 0.5 -> −0.2 -> floored at 0
    fake_openai.enqueue(Reply.json(rated(("low", True), missing=["a", "b", "c", "d", "e"])))
    result = create_context_relevance_scorer(settings=settings_for(fake_openai)).run(payload(context=CONTEXT[:1]))
    assert result.score == 0
    # custom penalties: medium 0.7 − min(2·0.1, 0.15) = 0.7 − 0.15 = 0.55
    fake_openai.enqueue(Reply.json(rated(("medium", True), missing=["a", "b"])))
    scorer = create_context_relevance_scorer(
        options={"missingContextPenalty": 0.1, "maxMissingContextPenalty": 0.15}, settings=settings_for(fake_openai)
    )
    assert scorer.run(payload(context=CONTEXT[:1])).score == 0.55


def test_context_relevance_without_context_scores_scale_with_no_call_and_says_so(fake_openai):
    scorer = create_context_relevance_scorer(scale=10, settings=settings_for(fake_openai))
    result = scorer.run(payload())
    assert result.score == 10
    assert result.judge is None
    assert "No context was given" in result.reason and "retrieval failure" in result.reason
    assert scorer.render_prompt(payload()) == []
    assert scorer.dimension_scores(result.analyze_step_result) == {}
    assert fake_openai.chat_call_count == 0


def test_context_relevance_wrong_piece_count_is_invalid(fake_openai):
    bad = Reply.json(rated(("high", True)))
    fake_openai.enqueue(bad, bad)
    with pytest.raises(JudgeOutputInvalidError):
        create_context_relevance_scorer(settings=settings_for(fake_openai)).run(payload(context=CONTEXT[:2]))
    assert fake_openai.chat_call_count == 2


# ---------------------------------------------------------------- options, catalogue, examples

FACTORIES = {
    "answer-relevancy": create_answer_relevancy_scorer,
    "answer-similarity": create_answer_similarity_scorer,
    "faithfulness": create_faithfulness_scorer,
    "hallucination": create_hallucination_scorer,
    "context-precision": create_context_precision_scorer,
    "context-relevance": create_context_relevance_scorer,
}


@pytest.mark.parametrize(
    ("scorer_id", "options", "field"),
    [
        ("answer-relevancy", {"scale": 0}, "options.scale"),
        ("answer-relevancy", {"scale": True}, "options.scale"),
        ("answer-relevancy", {"uncertainty_weight": 1.5}, "options.uncertainty_weight"),
        ("answer-relevancy", {"uncertainty_weight": -0.1}, "options.uncertainty_weight"),
        ("answer-relevancy", {"uncertainty_weight": "0.3"}, "options.uncertainty_weight"),
        ("answer-relevancy", {"weights": 1}, "options"),
        ("answer-similarity", {"semantic_threshold": 1.2}, "options.semantic_threshold"),
        ("answer-similarity", {"contradiction_penalty": -1}, "options.contradiction_penalty"),
        ("answer-similarity", {"extra_info_penalty": float("nan")}, "options.extra_info_penalty"),
        ("answer-similarity", {"require_ground_truth": "yes"}, "options.require_ground_truth"),
        ("faithfulness", {"context": "one passage"}, "options.context"),
        ("hallucination", {"context": [1, 2]}, "options.context[0]"),
        ("context-precision", {"scale": float("inf")}, "options.scale"),
        ("context-relevance", {"unused_high_relevance_penalty": -0.1}, "options.unused_high_relevance_penalty"),
    ],
)
def test_bad_options_are_rejected_at_construction_naming_the_option(scorer_id, options, field):
    with pytest.raises(InvalidInputError) as info:
        FACTORIES[scorer_id](options=options, settings=JudgeSettings(base_url="http://127.0.0.1:9/v1"))
    assert info.value.field == field


def _valid_reply(body):
    """A valid reply for any of the six schemas (per-piece lists sized from the request's schema)."""
    fmt = body["response_format"]["json_schema"]
    name, schema = fmt["name"], fmt["schema"]
    if name == "answer_similarity":
        return Reply.json(units("semantic"))
    if name == "context_precision":
        return Reply.json(pieces(*["yes"] * schema["properties"]["verdicts"]["maxItems"]))
    if name == "context_relevance":
        return Reply.json(rated(*[("high", True)] * schema["properties"]["pieces"]["maxItems"]))
    key = "statements" if name == "answer_relevancy" else "claims"
    return Reply.json({key: statements("yes", "no", key=key[:-1])})


@pytest.mark.parametrize("scorer_id", MY_IDS)
def test_catalogue_entry_builds_and_its_example_runs_with_one_call(fake_openai, scorer_id):
    fake_openai.responder = _valid_reply
    spec = SCORERS[scorer_id]
    assert spec.uses_judge and spec.judge_calls == 1 and spec.score_range == "0..1"
    assert spec.options[0].name == "scale" and spec.notes and spec.example
    defaults = {o.name: o.default for o in spec.options}
    scorer = create_scorer(scorer_id, defaults, settings=settings_for(fake_openai))
    assert scorer.judge_calls_per_run == 1
    example = {k: v for k, v in spec.example.items() if k != "options"}
    assert scorer.render_prompt(example)
    result = scorer.run(example)
    assert 0 <= result.score <= 1
    assert result.reason.startswith(f"The score is {decimal_text(result.score)} out of 1")
    assert fake_openai.chat_call_count == 1
    assert result.to_dict()["judge"]["usage"]["calls"] == 1
