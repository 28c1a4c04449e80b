"""Issue #14, "Fidelity to Mastra": each decision with the value Mastra gives, worked by hand
from @mastra/evals 1.10.2's source (dist/scorers/prebuilt/index.js and dist/scorers/utils.js).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from fake_openai import Reply
from judge_data import settings_for, single_analysis

from scorers import Store, load_run
from scorers.catalogue.metrics.completeness import create_completeness_scorer
from scorers.catalogue.metrics.content_similarity import create_content_similarity_scorer
from scorers.catalogue.metrics.context_precision import create_context_precision_scorer
from scorers.catalogue.metrics.context_relevance import create_context_relevance_scorer
from scorers.catalogue.metrics.hallucination import create_hallucination_scorer
from scorers.catalogue.metrics.keyword_coverage import create_keyword_coverage_scorer
from scorers.catalogue.metrics.noise_sensitivity import create_noise_sensitivity_scorer
from scorers.catalogue.metrics.summarization import create_summarization_scorer
from scorers.catalogue.metrics.tone_consistency import create_tone_consistency_scorer
from scorers.catalogue.metrics.tool_call_accuracy import create_tool_call_accuracy_scorer
from scorers.catalogue.metrics.tool_call_accuracy_code import create_tool_call_accuracy_code_scorer
from scorers.catalogue.prompt_alignment import create_prompt_alignment_scorer
from scorers.catalogue.registry import SCORERS, create_scorer
from scorers.cli import main
from scorers.core.base import normalize_run
from scorers.core.judge import JudgeSettings
from scorers.runs import jobs
from scorers.runs.datasets import guess_columns, iter_runs, load_dataset

MASTRA_RUNS = Path(__file__).resolve().parents[1] / "sample_data" / "mastra_scorer_runs.jsonl"


def mastra_runs() -> list[dict]:
    return [json.loads(line) for line in MASTRA_RUNS.read_text(encoding="utf-8").splitlines()]


def v2(role: str, *parts: dict, **extra) -> dict:
    """A Mastra v2 message (MastraDBMessage) with ``parts`` and optional legacy fields."""
    return {
        "id": "m",
        "role": role,
        "createdAt": "2025-01-01T00:00:00Z",
        "content": {"format": 2, "parts": list(parts), **extra},
    }


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def invocation(name: str, state: str = "result", call_id: str | None = None) -> dict:
    inv = {"state": state, "toolName": name, "args": {}, **({"toolCallId": call_id} if call_id else {})}
    if state == "result":
        inv["result"] = {"ok": True}
    return {"type": "tool-invocation", "toolInvocation": inv}


# ----------------------------------------------------------------------------- decision 11: run shapes


def test_v2_messages_give_text_and_tool_calls():
    run = normalize_run(
        {
            "input": {
                "inputMessages": [v2("user", text("Weather in Paris?"))],
                "rememberedMessages": [],
                "systemMessages": [{"role": "system", "content": "Be brief."}],
                "taggedSystemMessages": {"memory": [{"role": "system", "content": "User likes Celsius."}]},
            },
            "output": [v2("assistant", invocation("weather", call_id="c1"), text("draft"), text("18 °C, sunny."))],
        }
    )
    assert run.user_text == "Weather in Paris?"
    assert [m.content for m in run.system_messages] == ["Be brief.", "User likes Celsius."]
    # getTextContentFromMastraDBMessage: no content.content, so the LAST text part
    assert run.output == "18 °C, sunny."
    assert [(c.name, c.call_id, c.position) for c in run.tool_calls] == [("weather", "c1", (0, 0))]


def test_v2_content_string_wins_over_parts():
    run = normalize_run({"input": [v2("user", text("part"), content="whole text")], "output": "x"})
    assert run.user_text == "whole text"


def test_every_scorer_reads_mastra_scorer_runs():
    # each run of the export normalises; every code scorer scores it, every LLM scorer renders its prompt
    for record in mastra_runs():
        run = normalize_run(record)
        assert run.user_messages and run.output
        for spec in SCORERS.values():
            options = dict((spec.example or {}).get("options", {}))
            scorer = create_scorer(spec.id, options)
            if spec.uses_judge:
                payload = {**record, "context": ["Paris is in France."], "ground_truth": "It is sunny."}
                assert scorer.render_prompt(payload)
            elif spec.id != "tool-call-accuracy-code":
                assert scorer.run(record).score >= 0


# ----------------------------------------------------------------------------- decision 12: tool-call accuracy (code)


def test_partial_call_is_not_a_call():
    # extractToolCalls keeps states result / call / output-error only: actualTools = ["weatherTool"]
    run = mastra_runs()[1]
    assert create_tool_call_accuracy_code_scorer(expected_tool="taxiTool").run(run).score == 0
    result = create_tool_call_accuracy_code_scorer(expected_tool="weatherTool").run(run)
    assert result.score == 1
    assert result.analyze_step_result["actualTools"] == ["weatherTool"]


def test_tool_call_infos_as_mastra_numbers_them():
    # mergeToolInvocations: part call-1 shares legacy index 0, so it appears once, at invocation 0
    result = create_tool_call_accuracy_code_scorer(expected_tool="weatherTool").run(mastra_runs()[0])
    assert result.analyze_step_result["toolCallInfos"] == [
        {"toolName": "weatherTool", "toolCallId": "call-1", "messageIndex": 0, "invocationIndex": 0}
    ]
    # without an id Mastra writes `${messageIndex}-${invocationIndex}`: the 2nd invocation of message 1 -> "1-1"
    run = {"input": "go", "output": [v2("assistant", text("a")), v2("assistant", invocation("a"), invocation("b"))]}
    infos = create_tool_call_accuracy_code_scorer(expected_tool="b").run(run).analyze_step_result["toolCallInfos"]
    assert [i["toolCallId"] for i in infos] == ["1-0", "1-1"]


# ----------------------------------------------------------------------------- loading an export of Mastra runs


def test_export_of_mastra_runs_loads_and_maps():
    dataset = load_dataset(MASTRA_RUNS)
    mapping = guess_columns(dataset.columns)
    assert mapping["ground_truth"] == "groundTruth"
    payloads = [p for _, _, p in iter_runs(dataset, mapping)]
    runs = [normalize_run(p) for p in payloads]
    assert runs[0].user_text == "What's the weather in Paris?"
    assert runs[0].system_text == "You are a weather assistant."
    assert [c.name for c in runs[1].tool_calls] == ["weatherTool"]


def test_cli_scores_an_export_of_mastra_runs(studio_db, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    code = main(["run", str(MASTRA_RUNS), "--scorer", "textual-difference", "--output", str(out), "--yes"])
    assert code == 3  # run 2 has no groundTruth while the column is mapped: missing_input, never the input
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["status"] for r in rows] == ["scored", "missing_input"]
    # run 1: output equals groundTruth -> ratio 1, lengthDiff 0 -> score 1
    assert rows[0]["score"] == 1.0


# ----------------------------------------------------------------------------- decisions 4-7, 9, 10: code scorers


def test_keyword_coverage_field_names():
    # Mastra's analyzeStepResult: {totalKeywordsLength, matchedKeywordsLength}; "paris capital" vs "paris": 1 of 2
    result = create_keyword_coverage_scorer().run({"input": "Paris capital", "output": "Paris"})
    assert result.analyze_step_result["totalKeywordsLength"] == 2
    assert result.analyze_step_result["matchedKeywordsLength"] == 1
    assert result.score == 0.5


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("a\ufeffb", 1.0),  # U+FEFF is JavaScript whitespace: removed, "ab" == "ab" -> 1
        ("a\x1cb", 0.0),  # U+001C is not: "a\x1cb" vs "ab" share no bigram -> 2·0 / (3 + 2 − 2) = 0
        ("a\x85b", 0.0),  # nor U+0085 (NEL)
    ],
)
def test_content_similarity_whitespace_is_javascripts(output, expected):
    assert create_content_similarity_scorer().run({"input": "ab", "output": output}).score == expected


def test_content_similarity_shows_processed_texts():
    # Mastra: lower-case, then /\s+/g -> " " and trim
    result = create_content_similarity_scorer().run({"input": "  Hello\n\n World ", "output": "HELLO  there"})
    assert result.analyze_step_result["processedInput"] == "hello world"
    assert result.analyze_step_result["processedOutput"] == "hello there"


def test_several_input_messages_join_by_a_blank_line_as_the_exports_input():
    # Ours joins them by a blank line, the input the exports show: "Hello\n\nworld", processed (lower-case,
    # whitespace runs -> " ") to "hello world", equal to the processed output -> 1. (Mastra joins with ", ", a text
    # shown nowhere; a documented deviation.)
    run = {
        "input": [{"role": "user", "content": "Hello"}, {"role": "user", "content": "world"}],
        "output": "hello world",
    }
    assert create_content_similarity_scorer().run(run).score == 1.0
    assert create_content_similarity_scorer().run(run).analyze_step_result["processedInput"] == "hello world"


def test_tone_scores_whole_tokens():
    # npm sentiment: tokens i, won't, go / i, will, not, go; none is an AFINN word -> 0 and 0 -> 1 − 0 = 1
    result = create_tone_consistency_scorer().run({"output": "I won't go.", "ground_truth": "I will not go."})
    assert result.score == 1.0
    # "well-loved" is one token, not in AFINN (ours used to find "loved" inside it): 0/1 vs 0/1 -> 1
    assert create_tone_consistency_scorer().run({"output": "well-loved", "ground_truth": "table"}).score == 1.0


def test_tone_empty_reference_falls_back_to_stability():
    # sentences "I love it." (love +3 over 3 tokens = 1) and "It is bad." (bad −3 over 3 = −1):
    # mean 0, population variance ((1)² + (−1)²) / 2 = 1 -> max(0, 1 − 1) = 0
    result = create_tone_consistency_scorer().run({"output": "I love it. It is bad.", "ground_truth": ""})
    assert result.score == 0.0


def test_keyword_coverage_strips_only_html_like_tags():
    # "<<Ocean>>": the span "<Ocean>" is a tag and goes (Mastra's /<([^>]+)>/ removes "<<Ocean>" too);
    # reference keywords wrap, carefully; the output has both -> 2/2 = 1
    assert (
        create_keyword_coverage_scorer().run({"input": "Wrap <<Ocean>> carefully", "output": "wrap carefully"}).score
        == 1
    )
    # deliberate deviation (decision 3): "x < y and z > w" keeps x, y, z, w ("and" is a stopword); "x" matches 1 of 4.
    # Mastra removes "< y and z >"; x and w are stopwords in its list, so it has no keywords and scores 1.
    result = create_keyword_coverage_scorer().run({"input": "x < y and z > w", "output": "x"})
    assert result.analyze_step_result["totalKeywordsLength"] == 4
    assert result.score == 0.25


# ----------------------------------------------------------------------------- decisions 1, 2: completeness


@pytest.mark.parametrize(
    ("input_text", "output"),
    [
        # Mastra: compromise rewrites every verb to its infinitive, so both sides give he, run, home -> 3/3
        ("He ran home", "He runs home"),
        # compromise expands contractions: "can't" and "cannot" both read "can not" -> 1
        ("I can't go", "I cannot go"),
        # "let's" -> "let us" -> let, us, go on both sides -> 1
        ("Let's go", "Let us go"),
    ],
)
def test_completeness_verbs_and_contractions_as_mastra(input_text, output):
    assert create_completeness_scorer().run({"input": input_text, "output": output}).score == 1.0


# ----------------------------------------------------------------------------- decision 16: prompt alignment


def test_both_mode_with_only_a_system_prompt_scores_as_system(fake_openai):
    # kept and documented: system weights 0.35·0.9 + 0.35·0.8 + 0.15·0.7 + 0.15·1.0 = 0.85
    # (Mastra would judge an empty user prompt in both mode: 0.7·U + 0.3·S)
    fake_openai.enqueue(Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0)))
    scorer = create_prompt_alignment_scorer(settings=settings_for(fake_openai))
    result = scorer.run(
        {
            "input": {"inputMessages": [], "systemMessages": [{"role": "system", "content": "Be brief."}]},
            "output": "Ok.",
        }
    )
    assert result.score == 0.85
    assert result.analyze_step_result["effectiveMode"] == "system"
    assert "No user message" in result.analyze_step_result["note"] and "No user message" in result.reason
    assert fake_openai.last_chat_request()["response_format"]["json_schema"]["name"] == "prompt_alignment_system"


# ----------------------------------------------------------------------------- decisions 13, 14, 15, 17: LLM scorers

QUESTION = "Tell me about the Eiffel Tower."
CONTEXT = ["The Eiffel Tower is in Paris.", "It was completed in 1889."]
DIMENSIONS = ("contentAccuracy", "completeness", "relevance", "consistency", "hallucinationResistance")


def claims(*verdicts):
    return {"claims": [{"claim": f"claim {i}", "verdict": v, "reason": "r"} for i, v in enumerate(verdicts, 1)]}


def test_verdict_labels_are_trimmed_and_documented(fake_openai):
    # kept + documented (decision 13): " Yes" counts as supported here -> 1/1 = 1;
    # Mastra's faithfulness compares v.verdict === "yes", so it would score 0/1 = 0
    fake_openai.enqueue(Reply.json(claims(" Yes")))
    scorer = create_scorer("faithfulness", settings=settings_for(fake_openai))
    assert scorer.run({"input": QUESTION, "output": "It is in Paris.", "context": CONTEXT}).score == 1.0
    for scorer_id, says in (
        ("faithfulness", "=== 'yes'"),
        ("hallucination", "=== 'yes'"),
        ("bias", "without trimming"),
        ("context-precision", "idk"),
    ):
        notes = SCORERS[scorer_id].notes
        assert says in notes and "JSON mode" in notes


def test_noise_sensitivity_gap_of_exactly_the_threshold(fake_openai):
    # five "moderate" dimensions: mean weight 0.6; robustness 0.8; gap 0.8 − 0.6 = 0.2 on paper.
    # Mastra: 0.20000000000000007 > 0.2 -> min(0.8, 0.6) = 0.6. Ours (kept, decision 14): not over -> 0.8
    fake_openai.enqueue(Reply.json(noise(["moderate"] * 5, 0.8)))
    scorer = create_scorer(
        "noise-sensitivity", {"baseline_response": "b", "noisy_query": "q"}, settings=settings_for(fake_openai)
    )
    assert scorer.run({"input": "q0", "output": "o"}).score == 0.8
    assert "0.20000000000000007" in SCORERS["noise-sensitivity"].notes


def noise(levels, robustness, majors=()):
    return {
        "dimensions": {
            d: {"impactLevel": lvl, "specificChanges": "c", "noiseInfluence": "i"}
            for d, lvl in zip(DIMENSIONS, levels, strict=True)
        },
        "majorIssues": list(majors),
        "robustnessScore": robustness,
        "overallAssessment": "ok",
    }


def test_noise_sensitivity_impact_weights_and_mastra_scoring_shape(fake_openai):
    # scoring.impactWeights.moderate = 0.5 (others default): mean of 5 moderate = 0.5; robustness 0.9;
    # gap 0.4 > discrepancyThreshold 0.3 -> min = 0.5; 2 major issues · 0.05 = 0.1 (cap 0.3) -> 0.4
    fake_openai.enqueue(Reply.json(noise(["moderate"] * 5, 0.9, ["a", "b"])))
    scorer = create_noise_sensitivity_scorer(
        options={
            "baselineResponse": "b",
            "noisyQuery": "q",
            "scoring": {
                "impactWeights": {"moderate": 0.5},
                "discrepancyThreshold": 0.3,
                "penalties": {"majorIssuePerItem": 0.05, "maxMajorIssuePenalty": 0.3},
            },
        },
        settings=settings_for(fake_openai),
    )
    result = scorer.run({"input": "q0", "output": "o"})
    assert result.score == 0.4
    assert result.analyze_step_result["impactWeights"]["moderate"] == 0.5


def test_context_relevance_penalties_shape_and_extractor(fake_openai):
    # Mastra's penalties={missingContextPerItem: 0.2}: one high, used piece (1.0), 1 missing: 1.0 − 0.2 = 0.8
    fake_openai.enqueue(
        Reply.json(
            {"pieces": [{"index": 1, "relevance": "high", "used": True, "reason": "r"}], "missingContext": ["x"]}
        )
    )
    scorer = create_context_relevance_scorer(
        penalties={"missingContextPerItem": 0.2},
        context_extractor=lambda run: [f"Extracted for: {run.user_text}"],
        settings=settings_for(fake_openai),
    )
    result = scorer.run({"input": QUESTION, "output": "It is in Paris."})
    assert result.score == 0.8
    assert result.analyze_step_result["contextSource"] == "extractor"
    assert "Extracted for: Tell me about the Eiffel Tower." in fake_openai.last_prompt_text()


def test_context_precision_extractor_wins(fake_openai):
    # the extractor's 2 pieces are judged (not the run's 3): verdicts no, yes -> (1/2) / 1 = 0.5
    fake_openai.enqueue(
        Reply.json({"verdicts": [{"index": i, "verdict": v, "reason": "r"} for i, v in ((1, "no"), (2, "yes"))]})
    )
    scorer = create_context_precision_scorer(
        context_extractor=lambda run: ["a", "b"], settings=settings_for(fake_openai)
    )
    assert scorer.run({"input": QUESTION, "output": "x", "context": ["1", "2", "3"]}).score == 0.5


def test_hallucination_get_context(fake_openai):
    # getContext's passage is the context: 1 hallucinated of 2 claims -> 0.5
    fake_openai.enqueue(Reply.json(claims("yes", "no")))
    scorer = create_hallucination_scorer(
        get_context=lambda run: ["The tower is 330 m tall."], settings=settings_for(fake_openai)
    )
    result = scorer.run({"input": QUESTION, "output": "It is 330 m tall and red."})
    assert result.score == 0.5
    assert "The tower is 330 m tall." in fake_openai.last_prompt_text()


def test_summarization_source_option_and_extractor(fake_openai):
    # the source option replaces the run's input as the source; alignment 1/1, coverage 1/2 -> 0.5
    reply = {
        "claims": [{"claim": "c", "verdict": "yes", "reason": "r"}],
        "questions": [{"question": f"q{i}?", "answered": a, "reason": "r"} for i, a in enumerate(("yes", "no"))],
    }
    fake_openai.enqueue(Reply.json(reply), Reply.json(reply))
    scorer = create_summarization_scorer(source="The real source text.", settings=settings_for(fake_openai))
    assert scorer.run({"input": "ignored", "output": "A summary."}).score == 0.5
    assert "The real source text." in fake_openai.last_prompt_text()
    scorer = create_summarization_scorer(
        source_extractor=lambda run: "From the extractor.", settings=settings_for(fake_openai)
    )
    assert scorer.run({"input": "ignored", "output": "A summary."}).score == 0.5
    assert "From the extractor." in fake_openai.last_prompt_text()


def test_available_tools_accept_mastra_tool_objects():
    scorer = create_tool_call_accuracy_scorer(
        available_tools=[{"id": "weatherTool", "description": "Current weather"}], settings=JudgeSettings(model="m")
    )
    assert [(t.name, t.description) for t in scorer.available_tools] == [("weatherTool", "Current weather")]


def test_batch_page_scores_an_export_of_mastra_runs(open_page, studio_db):
    at = open_page("batch")
    at.file_uploader(key="batch_upload").upload(MASTRA_RUNS.name, MASTRA_RUNS.read_bytes(), "text/plain")
    at.run()
    assert not at.exception
    at.multiselect(key="batch_scorers").set_value(["textual-difference", "tool-call-accuracy-code"]).run()
    assert not at.exception
    at.text_area(key="batch_opt_tool-call-accuracy-code_expected_tool").set_value("weatherTool").run()
    assert not at.error
    at.button(key="batch_run").click().run()
    deadline = time.monotonic() + 30
    while jobs.get(at.session_state["job_batch"]).running:
        assert time.monotonic() < deadline, "the batch run did not finish"
        time.sleep(0.1)
        at.run()
    at.run()
    assert not at.exception
    store = Store(studio_db)
    _, _, result = load_run(store, at.session_state["batch_run_id"])
    store.close()
    scores = {(o.item_id, o.scorer_id): o.score for o in result.outcomes}
    # run 1: the output equals groundTruth -> ratio 1, lengthDiff 0 -> 1
    assert scores[("score-1", "textual-difference")] == 1.0
    # weatherTool was called in both runs (the taxi call of run 2 is a partial call, not a call) -> 1 and 1
    assert scores[("score-1", "tool-call-accuracy-code")] == 1.0
    assert scores[("score-2", "tool-call-accuracy-code")] == 1.0
