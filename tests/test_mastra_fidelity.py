"""Issue #14, "Fidelity to Mastra": each decision with the value Mastra gives, worked by hand
from @mastra/evals 1.10.2's source (dist/scorers/prebuilt/index.js and dist/scorers/utils.js).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorers.catalogue.metrics.completeness import create_completeness_scorer
from scorers.catalogue.metrics.content_similarity import create_content_similarity_scorer
from scorers.catalogue.metrics.keyword_coverage import create_keyword_coverage_scorer
from scorers.catalogue.metrics.tone_consistency import create_tone_consistency_scorer
from scorers.catalogue.metrics.tool_call_accuracy_code import create_tool_call_accuracy_code_scorer
from scorers.catalogue.registry import SCORERS, create_scorer
from scorers.cli import main
from scorers.core.base import normalize_run
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


def test_cli_scores_an_export_of_mastra_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SCORER_STUDIO_DB", str(tmp_path / "s.db"))
    out = tmp_path / "out.jsonl"
    code = main(["run", str(MASTRA_RUNS), "--scorer", "textual-difference", "--output", str(out), "--yes"])
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["status"] for r in rows] == ["scored", "scored"]
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


def test_several_input_messages_join_with_comma():
    # Mastra: inputMessages.map(getTextContent).join(", ") -> "hello, world", equal to the output -> 1
    run = {
        "input": [{"role": "user", "content": "Hello"}, {"role": "user", "content": "world"}],
        "output": "hello, world",
    }
    assert create_content_similarity_scorer().run(run).score == 1.0
    assert create_content_similarity_scorer().run(run).analyze_step_result["processedInput"] == "hello, world"


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
