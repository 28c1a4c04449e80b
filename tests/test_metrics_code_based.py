"""Tests of the code-based metrics: completeness, content similarity, keyword coverage,
tone consistency and tool-call accuracy (code). No network, no judge.

Expected values are worked by hand from MASTRA_SCORERS.md's formulas; the arithmetic is
in the comments. Facts the hand computations take from the shipped word lists are checked
in their own tests first (lemminflect verb base forms, the stop-words list, AFINN scores),
so a changed list fails there with a clear message.
"""

from __future__ import annotations

import math
import random
import time

import pytest

from scorers.catalogue.metrics import completeness, content_similarity, keyword_coverage, tone_consistency
from scorers.catalogue.metrics import tool_call_accuracy_code as tool_code
from scorers.catalogue.metrics.completeness import (
    covered_elements,
    create_completeness_scorer,
    element_covered,
    extract_elements,
    normalize_words,
)
from scorers.catalogue.metrics.content_similarity import create_content_similarity_scorer, dice_similarity
from scorers.catalogue.metrics.keyword_coverage import (
    create_keyword_coverage_scorer,
    english_stopwords,
    extract_keywords,
)
from scorers.catalogue.metrics.tone_consistency import create_tone_consistency_scorer, sentiment, split_sentences
from scorers.catalogue.metrics.tool_call_accuracy_code import create_tool_call_accuracy_code_scorer, in_relative_order
from scorers.catalogue.registry import SCORERS, create_scorer
from scorers.core.base import RunInput, ScoreResult, ToolCall
from scorers.core.errors import InvalidInputError, MissingInputError, ScoreStatus

MODULES = (completeness, content_similarity, keyword_coverage, tone_consistency, tool_code)
SPECS = [spec for module in MODULES for spec in module.SPECS]
FACTORIES = {
    "completeness": create_completeness_scorer,
    "content-similarity": create_content_similarity_scorer,
    "keyword-coverage": create_keyword_coverage_scorer,
    "tone-consistency": create_tone_consistency_scorer,
    "tool-call-accuracy-code": lambda **kw: create_tool_call_accuracy_code_scorer(expected_tool="search", **kw),
}


def user(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


# ============================================================================ completeness


def test_completeness_normalisation():
    # accents stripped (NFD, U+0300–U+036F removed), lowercase, non-alphanumerics to spaces
    assert normalize_words("Crème BRÛLÉE, naïve-café!") == ["creme", "brulee", "naive", "cafe"]
    assert normalize_words("") == []
    assert normalize_words("?!- …") == []


def test_completeness_lexicon_facts():
    # lemminflect's lexicon: "converts" is a verb (and a noun: kept, base added); "ran" only a verb
    # (replaced by "run", as compromise's toInfinitive rewrites it); "photosynthesis", "light" add nothing new
    assert extract_elements("Explain photosynthesis") == (["explain", "photosynthesis"], [])
    assert extract_elements("Photosynthesis converts light.") == (
        ["photosynthesis", "converts", "convert", "light"],
        ["convert"],
    )
    assert extract_elements("She ran") == (["she", "run"], ["run"])
    # duplicates removed, first appearance kept
    assert extract_elements("Water, water WATER") == (["water"], [])


def test_completeness_hand_worked():
    # input elements: explain, photosynthesis (2)
    # output elements: photosynthesis, converts, convert, light
    # photosynthesis: exact; explain (7 chars): no output element contains it or is contained in it
    # score = 1 / 2
    result = create_completeness_scorer().run(
        {"input": user("Explain photosynthesis"), "output": "Photosynthesis converts light."}
    )
    assert result.score == pytest.approx(0.5)
    a = result.analyze_step_result
    assert a["inputElements"] == ["explain", "photosynthesis"]
    assert a["outputElements"] == ["photosynthesis", "converts", "convert", "light"]
    assert a["missingElements"] == ["explain"]
    assert a["elementCounts"] == {"input": 2, "output": 4}
    assert a["coveredCount"] == 1
    assert result.details == {"inputBaseForms": [], "outputBaseForms": ["convert"]}
    assert result.reason == 'The response covers 1 of the input\'s 2 elements (50%); missing: "explain".'


def test_completeness_containment_rule():
    # nonsense words, so the lexicon adds no base form
    # abcdef (6) in abcdefghij (10): 6/10 = 0.6, not > 0.6 -> not covered
    # abcdef (6) in abcdefghi (9): 6/9 = 0.667 > 0.6 -> covered
    run = create_completeness_scorer().run
    assert run({"input": "abcdef", "output": "abcdefghij"}).score == 0
    assert run({"input": "abcdef", "output": "abcdefghi"}).score == 1
    # the longer side may be the input: abcdefghi (9) contains abcdef (6): 6/9 > 0.6 -> covered
    assert run({"input": "abcdefghi", "output": "abcdef"}).score == 1
    # elements of <= 3 chars need an exact match: "zzz" is in "zzzz" (3/4 = 0.75) but does not count
    assert run({"input": "zzz", "output": "zzzz"}).score == 0
    # a 4-char element may match by containment: "zzzz" in "zzzzz" (4/5 = 0.8)
    assert run({"input": "zzzz", "output": "zzzzz"}).score == 1
    # sunlight (8) contains light (5): 5/8 = 0.625 > 0.6; sun (3) needs an exact match
    result = run({"input": "sunlight sun", "output": "light"})
    assert result.score == pytest.approx(1 / 2)
    assert result.analyze_step_result["missingElements"] == ["sun"]


def test_completeness_verb_base_forms():
    # input elements: she, run ("ran" is only a verb form: replaced, issue #14 decision 1); output: run, she
    # she: exact; run: exact -> score = 2/2 (Mastra: compromise gives terms she, run on both sides -> 1)
    result = create_completeness_scorer().run({"input": "She ran", "output": "run she"})
    assert result.score == 1
    assert result.analyze_step_result["missingElements"] == []
    assert result.details["inputBaseForms"] == ["run"]


def test_completeness_accents_ignored():
    # café -> cafe, naïve -> naive on both sides: 2/2
    assert create_completeness_scorer().run({"input": "Café naïve", "output": "cafe NAIVE"}).score == 1


@pytest.mark.parametrize(
    ("input_text", "output", "expected"),
    [
        ("", "", 1.0),  # no input elements, no output elements -> 1
        ("?!", "...", 1.0),  # punctuation only: no elements on either side -> 1
        ("", "hello", 0.0),  # no input elements but the response has one -> 0 (Mastra's rule)
        ("hello world", "", 0.0),  # 0 of 2 covered
    ],
)
def test_completeness_edge_cases(input_text, output, expected):
    result = create_completeness_scorer().run({"input": input_text, "output": output})
    assert result.score == expected
    assert isinstance(result.reason, str) and result.reason


def test_completeness_needs_an_input():
    with pytest.raises(InvalidInputError) as info:
        create_completeness_scorer().run({"output": "hello"})
    assert info.value.field == "input"
    assert info.value.status is ScoreStatus.MISSING_INPUT


def test_completeness_scale():
    # 1/2 × 10
    result = create_completeness_scorer(scale=10).run(
        {"input": "Explain photosynthesis", "output": "Photosynthesis converts light."}
    )
    assert result.score == pytest.approx(5.0)


@pytest.mark.parametrize("max_length", [6, 12, 80, 150])  # 80 and 150 exercise the >64-char fallback
def test_completeness_fast_matching_equals_pairwise_rule(max_length):
    # two-letter alphabet: many containments, ratios on both sides of 0.6
    rng = random.Random(max_length)

    def word():
        return "".join(rng.choice("ab") for _ in range(rng.randint(1, max_length)))

    for _ in range(60):
        inputs = list(dict.fromkeys(word() for _ in range(rng.randint(0, 25))))
        outputs = list(dict.fromkeys(word() for _ in range(rng.randint(0, 25))))
        pairwise = [any(element_covered(e, s) for s in outputs) for e in inputs]
        assert covered_elements(inputs, outputs) == pairwise


def test_completeness_long_texts_are_fast():
    words = [f"w{i:05d}x" for i in range(4000)]
    start = time.perf_counter()
    result = create_completeness_scorer().run({"input": " ".join(words), "output": " ".join(words[::2])})
    assert time.perf_counter() - start < 5  # pairwise comparison took ~9 s here; the index takes ~0.1 s
    # w00000x..: 7-char nonsense words, each contained in no other -> exactly the even half is covered
    assert result.score == pytest.approx(0.5)


# ============================================================================ content similarity


def test_dice_hand_worked():
    # night: ni ig gh ht; nacht: na ac ch ht -> 1 common; 2·1 / (5 + 5 − 2) = 0.25
    assert dice_similarity("night", "nacht") == (0.25, 1)
    # multisets: aaaa has aa ×3, aa has aa ×1 -> 1 common; 2·1 / (4 + 2 − 2) = 0.5
    assert dice_similarity("aaaa", "aa") == (0.5, 1)
    # abab: ab ×2, ba; ab: ab -> 1 common; 2·1 / (4 + 2 − 2) = 0.5
    assert dice_similarity("abab", "ab") == (0.5, 1)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("", "", 1.0),  # equal texts, both empty -> 1
        ("a", "a", 1.0),  # equal 1-char texts -> 1
        ("a", "ab", 0.0),  # a text shorter than 2 chars -> 0
        ("", "ab", 0.0),
        ("ab", "b", 0.0),
    ],
)
def test_dice_edge_cases(a, b, expected):
    assert dice_similarity(a, b)[0] == expected


def test_content_similarity_against_ground_truth():
    # ignore case -> "night" vs "nacht": 0.25 (see above)
    result = create_content_similarity_scorer().run(
        {"input": user("Say night in German"), "output": "NIGHT", "ground_truth": "nacht"}
    )
    assert result.score == pytest.approx(0.25)
    assert result.analyze_step_result == {
        "similarity": 0.25,
        "comparedWith": "ground_truth",
        "commonBigrams": 1,
        "referenceBigrams": 4,
        "outputBigrams": 4,
        "processedInput": "nacht",
        "processedOutput": "night",
    }
    assert result.details == {"processedReference": "nacht", "processedOutput": "night"}
    assert "25%" in result.reason and "ground truth" in result.reason


def test_content_similarity_falls_back_to_input():
    result = create_content_similarity_scorer().run({"input": user("night"), "output": "nacht"})
    assert result.analyze_step_result["comparedWith"] == "input"
    assert result.score == pytest.approx(0.25)


def test_content_similarity_needs_a_reference():
    # no ground truth carried: the target is the input, which is missing; never scored as 0
    with pytest.raises(MissingInputError) as info:
        create_content_similarity_scorer().run({"output": "nacht"})
    assert info.value.field == "input"


def test_content_similarity_ignore_case_option():
    payload = {"output": "Hello", "ground_truth": "hello"}
    assert create_content_similarity_scorer().run(payload).score == 1
    # He el ll lo vs he el ll lo: 3 common; 2·3 / (5 + 5 − 2) = 0.75
    assert create_content_similarity_scorer(ignore_case=False).run(payload).score == pytest.approx(0.75)


def test_content_similarity_ignore_whitespace_option():
    payload = {"output": "a b\tc\n", "ground_truth": "abc"}
    # whitespace removed: "abc" == "abc" -> 1
    assert create_content_similarity_scorer().run(payload).score == 1
    # kept: "a b\tc\n" has a_, _b, b\t, \tc, c\n; "abc" has ab, bc -> 0 common -> 0
    assert create_content_similarity_scorer(ignore_whitespace=False).run(payload).score == 0


def test_content_similarity_one_char_and_empty_texts():
    scorer = create_content_similarity_scorer(scale=10)
    with pytest.raises(MissingInputError, match="ground_truth"):  # a blank reference is not scored (SPEC §1.4)
        scorer.run({"output": "", "ground_truth": ""})
    assert scorer.run({"output": " \n", "ground_truth": "x"}).score == 0  # "" after removing whitespace vs "x"
    one = scorer.run({"output": "a", "ground_truth": "ab"})
    assert one.score == 0
    assert "fewer than 2 characters" in one.reason


def test_content_similarity_scale():
    # 0.25 × 4
    assert create_content_similarity_scorer(scale=4).run({"output": "night", "ground_truth": "nacht"}).score == 1.0


# ============================================================================ keyword coverage


def test_stopword_list_facts():
    stop = english_stopwords()
    assert len(stop) == 174  # stop-words 2018.7.23's classic English list
    assert {"the", "how", "and", "what", "is", "it", "don't", "let's"} <= stop
    assert not {"explain", "use", "need", "computer", "research", "system"} & stop


def test_keyword_extraction():
    # stopwords how, and removed
    assert extract_keywords("Explain how plants use sunlight and water") == [
        "explain",
        "plants",
        "use",
        "sunlight",
        "water",
    ]
    # numbers removed (10, 2024, 3-5: no letter), "gpt-4" kept; "for", "with", "and" are stopwords
    assert extract_keywords("Top 10 tips for 2024 with gpt-4 and 3-5 ideas") == ["top", "tips", "gpt-4", "ideas"]
    # possessive 's removed; lowercased and deduplicated; curly apostrophes count as straight ones
    assert extract_keywords("France’s capital; FRANCE, france!") == ["france", "capital"]
    assert extract_keywords("I don’t know, let's see") == ["know", "see"]
    assert extract_keywords("") == []


def test_keyword_coverage_hand_worked():
    # reference keywords: explain, plants, use, sunlight, water (5)
    # response keywords: plants, need, water, light -> matched: plants, water (2); 2/5 = 0.4
    result = create_keyword_coverage_scorer().run(
        {"input": user("Explain how plants use sunlight and water"), "output": "Plants need water and light."}
    )
    assert result.score == pytest.approx(0.4)
    assert result.analyze_step_result == {
        "totalKeywordsLength": 5,
        "matchedKeywordsLength": 2,
        "referenceKeywords": ["explain", "plants", "use", "sunlight", "water"],
        "responseKeywords": ["plants", "need", "water", "light"],
        "missingKeywords": ["explain", "use", "sunlight"],
    }
    assert result.reason == (
        'The response contains 2 of the input\'s 5 keywords (40%); missing: "explain", "use", "sunlight".'
    )


def test_keyword_coverage_ignores_ground_truth():
    # the input is the reference: 1 keyword ("paris"), present -> 1, whatever the ground truth says
    result = create_keyword_coverage_scorer().run(
        {"input": "Paris?", "output": "Paris.", "ground_truth": "London Berlin Rome"}
    )
    assert result.score == 1
    assert result.analyze_step_result["totalKeywordsLength"] == 1


@pytest.mark.parametrize("output", ["", "Lots of keywords here: apples, pears."])
def test_keyword_coverage_no_reference_keywords(output):
    # "What is it?" is only stopwords -> no reference keywords -> 1, whatever the response
    result = create_keyword_coverage_scorer(scale=5).run({"input": "What is it?", "output": output})
    assert result.score == 5
    assert result.analyze_step_result["totalKeywordsLength"] == 0
    assert result.analyze_step_result["matchedKeywordsLength"] == 0
    assert "no keywords" in result.reason


def test_keyword_coverage_empty_texts():
    run = create_keyword_coverage_scorer().run
    assert run({"input": "", "output": ""}).score == 1  # no reference keywords
    assert run({"input": "photosynthesis", "output": ""}).score == 0  # 0 of 1


def test_keyword_coverage_needs_an_input():
    with pytest.raises(InvalidInputError) as info:
        create_keyword_coverage_scorer().run({"output": "photosynthesis"})
    assert info.value.field == "input"


# ============================================================================ tone consistency


def test_afinn_facts():
    # AFINN-165: good +3, great +3, thanks +2, bad −3
    assert sentiment("Good, thanks.") == tone_consistency.Sentiment(5.0, 2, 2.5)
    assert sentiment("Great!") == tone_consistency.Sentiment(3.0, 1, 3.0)
    assert sentiment("Bad.") == tone_consistency.Sentiment(-3.0, 1, -3.0)
    # npm sentiment scores single tokens only: the phrase "does not work" never matches (0 over 4 tokens)
    assert sentiment("It does not work.") == tone_consistency.Sentiment(0.0, 4, 0.0)
    # nor "can't stand"; the curly apostrophe is kept: tokens i, can’t, stand, it
    assert sentiment("I can’t stand it") == tone_consistency.Sentiment(0.0, 4, 0.0)
    assert sentiment("") == tone_consistency.Sentiment(0.0, 1, 0.0)  # "".split(" ") is one empty token


def test_tone_against_reference_hand_worked():
    # comp(response) = 3/1 = 3.0; comp(reference) = (3 + 2)/2 = 2.5; 1 − |3.0 − 2.5| = 0.5
    result = create_tone_consistency_scorer().run(
        {"input": user("Thanks!"), "output": "Great!", "ground_truth": "Good, thanks."}
    )
    assert result.score == pytest.approx(0.5)
    assert result.analyze_step_result == {
        "mode": "reference",
        "responseSentiment": 3.0,
        "referenceSentiment": 2.5,
        "difference": 0.5,
    }
    assert result.details["reference"] == {"score": 5.0, "words": 2, "comparative": 2.5}
    assert "+3.00" in result.reason and "+2.50" in result.reason and "0.50" in result.reason


def test_tone_against_reference_floored_at_zero():
    # comp("Great!") = 3, comp("Bad.") = −3: 1 − 6 = −5 -> floored at 0
    result = create_tone_consistency_scorer().run({"output": "Great!", "ground_truth": "Bad."})
    assert result.score == 0
    assert result.analyze_step_result["difference"] == 6


def test_tone_empty_reference_is_no_reference():
    # Mastra: `if (referenceTone)` is false for "", so sentence stability: one sentence -> variance 0 -> 1
    result = create_tone_consistency_scorer().run({"output": "Great!", "ground_truth": ""})
    assert result.analyze_step_result["mode"] == "stability"
    assert result.score == 1.0


def test_tone_stability_hand_worked():
    # sentences: "This is good." 3/3 = 1.0; "This is a table." 0/4 = 0.0
    # mean 0.5; population variance ((0.5)² + (0.5)²) / 2 = 0.25; 1 − 0.25 = 0.75
    result = create_tone_consistency_scorer().run({"output": "This is good. This is a table."})
    assert result.score == pytest.approx(0.75)
    a = result.analyze_step_result
    assert a["mode"] == "stability"
    assert a["avgSentiment"] == pytest.approx(0.5)
    assert a["sentimentVariance"] == pytest.approx(0.25)
    assert a["sentenceCount"] == 2
    assert [s["text"] for s in result.details["sentences"]] == ["This is good.", "This is a table."]
    assert "0.2500" in result.reason


def test_tone_stability_uses_population_variance():
    # comparatives 1, 0, 0: mean 1/3; Σ(c − mean)² = (2/3)² + 2·(1/3)² = 6/9
    # population variance 6/9 / 3 = 2/9 (the sample variance would be 6/9 / 2 = 1/3); 1 − 2/9 = 7/9
    result = create_tone_consistency_scorer().run({"output": "It is good. It is a table. It is a chair."})
    assert result.analyze_step_result["sentimentVariance"] == pytest.approx(2 / 9)
    assert result.score == pytest.approx(7 / 9)


def test_tone_stability_floored_at_zero():
    # comparatives 3/1 = 3 and −3/1 = −3: mean 0, variance (9 + 9)/2 = 9; 1 − 9 < 0 -> 0
    assert create_tone_consistency_scorer().run({"output": "Great! Bad."}).score == 0


@pytest.mark.parametrize(("output", "sentences"), [("", 0), ("...", 0), ("I love this, truly", 1)])
def test_tone_stability_fewer_than_two_sentences(output, sentences):
    result = create_tone_consistency_scorer(scale=10).run({"output": output})
    assert result.score == 10  # variance 0 -> 1 × 10
    assert result.analyze_step_result["sentenceCount"] == sentences


def test_sentence_split_keeps_the_last_sentence_and_abbreviations():
    # Mastra's /[^.!?]+[.!?]+/ would drop "And then" and split after "Dr."
    assert split_sentences("Dr. Smith is great. Really great! And then") == [
        "Dr. Smith is great.",
        "Really great!",
        "And then",
    ]


# ============================================================================ tool-call accuracy (code)


def calls(*names: str) -> dict:
    return {"input": user("Do it"), "output": "Done.", "tool_calls": [{"name": n} for n in names]}


@pytest.mark.parametrize(
    ("options", "names", "expected"),
    [
        ({"expected_tool": "weather"}, (), 0),  # no tool calls -> 0
        ({"expected_tool": "weather"}, ("search", "weather"), 1),  # lenient: among the calls
        ({"expected_tool": "weather"}, ("search",), 0),
        ({"expected_tool": "weather"}, ("Weather",), 0),  # names compare exactly
        ({"expected_tool": "weather", "strict_mode": True}, ("weather",), 1),  # strict: the only call
        ({"expected_tool": "weather", "strict_mode": True}, ("weather", "weather"), 0),
        ({"expected_tool": "weather", "strict_mode": True}, ("search", "weather"), 0),
        ({"expected_tool_order": ["a", "b"]}, (), 0),
        ({"expected_tool_order": ["a", "b"]}, ("a", "x", "b"), 1),  # relative order, others in between
        ({"expected_tool_order": ["a", "b"]}, ("b", "a"), 0),
        ({"expected_tool_order": ["a", "b"]}, ("a",), 0),
        ({"expected_tool_order": ["b", "a"]}, ("a", "b", "a"), 1),  # Mastra (first calls only) gives 0
        ({"expected_tool_order": ["s", "s"]}, ("s", "s"), 1),  # a repeated tool; Mastra can never pass
        ({"expected_tool_order": ["s", "s"]}, ("s",), 0),
        ({"expected_tool_order": ["a", "b"], "strict_mode": True}, ("a", "b"), 1),  # strict: exact sequence
        ({"expected_tool_order": ["a", "b"], "strict_mode": True}, ("a", "x", "b"), 0),
        ({"expected_tool_order": ["a", "b"], "strict_mode": True}, ("a", "b", "b"), 0),
    ],
)
def test_tool_call_accuracy_rules(options, names, expected):
    result = create_tool_call_accuracy_code_scorer(**options, scale=2).run(calls(*names))
    assert result.score == expected * 2
    assert result.analyze_step_result["actualTools"] == list(names)
    assert result.analyze_step_result["hasToolCalls"] is bool(names)
    assert result.reason


def test_tool_call_accuracy_analysis_shape():
    result = create_tool_call_accuracy_code_scorer(expected_tool="weather").run(calls("search", "weather"))
    assert result.analyze_step_result == {
        "expectedTool": "weather",
        "expectedToolOrder": None,
        "actualTools": ["search", "weather"],
        "strictMode": False,
        "hasToolCalls": True,
        "correctToolCalled": True,
        "correctOrderCalled": None,
        "toolCallInfos": [
            {"toolName": "search", "toolCallId": None, "messageIndex": None, "invocationIndex": None},
            {"toolName": "weather", "toolCallId": None, "messageIndex": None, "invocationIndex": None},
        ],
    }
    result = create_tool_call_accuracy_code_scorer(expected_tool_order=("a", "b")).run(calls("b"))
    assert result.analyze_step_result["expectedToolOrder"] == ["a", "b"]
    assert result.analyze_step_result["correctOrderCalled"] is False
    # Mastra: correctToolCalled = expectedTool ? ... : false (issue #14, decision 12)
    assert result.analyze_step_result["correctToolCalled"] is False


def test_tool_call_accuracy_reads_output_messages():
    scorer = create_tool_call_accuracy_code_scorer(expected_tool_order=["search", "book"])
    mastra_shape = {
        "output": [
            {"role": "assistant", "content": "", "toolInvocations": [{"toolName": "search"}, {"toolName": "book"}]}
        ]
    }
    openai_shape = {
        "output": {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"function": {"name": "search", "arguments": "{}"}},
                {"function": {"name": "book", "arguments": "{}"}},
            ],
        }
    }
    run_input = RunInput((), (), "", tool_calls=(ToolCall("search"), ToolCall("book")))
    for payload in (mastra_shape, openai_shape, run_input):
        assert scorer.run(payload).score == 1


def test_in_relative_order():
    assert in_relative_order([], ["a"])
    assert in_relative_order(["a", "c"], ["a", "b", "c"])
    assert not in_relative_order(["c", "a"], ["a", "b", "c"])


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({}, "expected_tool"),  # neither expectation
        ({"expected_tool": "  "}, "expected_tool"),  # blank counts as not given
        ({"expected_tool_order": []}, "expected_tool"),  # empty counts as not given
        ({"expected_tool": "", "expected_tool_order": []}, "expected_tool"),  # the catalogue's defaults
        ({"expected_tool": "a", "expected_tool_order": ["a", "b"]}, "expected_tool_order"),  # both
        ({"expected_tool": 3}, "expected_tool"),
        ({"expected_tool_order": "ab"}, "expected_tool_order"),  # a string is not a list
        ({"expected_tool_order": ["a", ""]}, "expected_tool_order[1]"),
        ({"expected_tool_order": ["a", None]}, "expected_tool_order[1]"),
        ({"expected_tool": "a", "strict_mode": "yes"}, "strict_mode"),
        ({"expected_tool": "a", "scale": 0}, "scale"),
    ],
)
def test_tool_call_accuracy_options_validated_at_construction(options, field):
    with pytest.raises(InvalidInputError) as info:
        create_tool_call_accuracy_code_scorer(**options)
    assert info.value.field == field


def test_tool_call_accuracy_names_are_compared_as_given():
    # Mastra compares actualTools.includes(expectedTool) with the name as given (issue #14, decision 12)
    scorer = create_tool_call_accuracy_code_scorer(expected_tool=" weather ", expected_tool_order=None)
    assert scorer.expected_tool == " weather "
    assert scorer.run(calls("weather")).score == 0


def test_tool_call_accuracy_bad_tool_call_is_invalid_input():
    scorer = create_tool_call_accuracy_code_scorer(expected_tool="a")
    with pytest.raises(InvalidInputError) as info:
        scorer.run({"output": "x", "tool_calls": [{"arguments": {}}]})
    assert info.value.field == "tool_calls[0]"


# ============================================================================ shared: options, shape, catalogue


@pytest.mark.parametrize("scorer_id", list(FACTORIES))
@pytest.mark.parametrize("scale", [0, -1, math.nan, math.inf, True, "1", None])
def test_scale_is_validated(scorer_id, scale):
    with pytest.raises(InvalidInputError) as info:
        FACTORIES[scorer_id](scale=scale)
    assert info.value.field == "scale"


@pytest.mark.parametrize("name", ["ignore_case", "ignore_whitespace"])
@pytest.mark.parametrize("value", [1, "true", None])
def test_content_similarity_flags_are_validated(name, value):
    with pytest.raises(InvalidInputError) as info:
        create_content_similarity_scorer(**{name: value})
    assert info.value.field == name


@pytest.mark.parametrize("scorer_id", list(FACTORIES))
def test_options_are_keyword_only(scorer_id):
    with pytest.raises(TypeError):
        FACTORIES[scorer_id](1.0)


@pytest.mark.parametrize("scorer_id", list(FACTORIES))
def test_result_shape(scorer_id):
    scorer = FACTORIES[scorer_id](scale=10)
    assert scorer.id == scorer_id and scorer.name
    payload = {
        "input": user("Explain photosynthesis, please."),
        "output": "Photosynthesis is great. I love it.",
        "ground_truth": "Photosynthesis makes sugar.",
        "tool_calls": [{"name": "search"}],
    }
    result = scorer.run(payload)
    assert isinstance(result, ScoreResult)
    assert result.scorer == scorer_id
    assert 0 <= result.score <= 10
    assert isinstance(result.reason, str) and result.reason.endswith(".")
    out = result.to_dict()
    assert set(out) == {"runId", "scorer", "score", "reason", "analyzeStepResult"}
    assert isinstance(out["analyzeStepResult"], dict)
    with pytest.raises(AttributeError):
        scorer.scale = 1  # frozen


@pytest.mark.parametrize("scorer_id", list(FACTORIES))
def test_malformed_payload_is_invalid_input(scorer_id):
    with pytest.raises(InvalidInputError):
        FACTORIES[scorer_id]().run({"input": user("hi")})  # no output


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.id)
def test_specs_are_registered_and_their_examples_run(spec):
    assert SCORERS[spec.id].build is spec.build and SCORERS[spec.id].reads  # the catalogue adds what it reads
    assert not spec.uses_judge and spec.judge_calls == 0
    assert spec.notes and spec.formula and spec.measures
    assert spec.options[0].name == "scale"
    example = dict(spec.example)
    options = example.pop("options", {})
    assert set(options) <= {o.name for o in spec.options}
    scorer = create_scorer(spec.id, options)
    assert scorer.id == spec.id
    result = scorer.run(example)
    assert 0 <= result.score <= options.get("scale", 1)
    assert result.reason


@pytest.mark.parametrize("spec", [s for s in SPECS if s.id != "tool-call-accuracy-code"], ids=lambda s: s.id)
def test_specs_build_with_their_option_defaults(spec):
    scorer = spec.build({o.name: o.default for o in spec.options}, None, None)
    assert scorer.scale == 1.0


def test_tool_call_spec_defaults_need_an_expectation():
    spec = SCORERS["tool-call-accuracy-code"]
    with pytest.raises(InvalidInputError):
        spec.build({o.name: o.default for o in spec.options}, None, None)
    scorer = create_scorer("tool-call-accuracy-code", {"expected_tool": "search", "expected_tool_order": []})
    assert scorer.run(calls("search")).score == 1


def test_example_scores_worked_by_hand():
    # content similarity example, ignoring case and whitespace:
    # a = "parisisthecapitaloffrance." (26 chars, 25 bigrams), b = "thecapitaloffranceisparis." (26, 25)
    # common: "thecapitaloffrance" gives 17 bigrams, "paris" 4, "is" 1 -> 22; 2·22 / (26 + 26 − 2) = 0.88
    spec = SCORERS["content-similarity"]
    example = dict(spec.example)
    options = example.pop("options")
    result = create_scorer(spec.id, options).run(example)
    assert result.score == pytest.approx(0.88)
    assert result.analyze_step_result["commonBigrams"] == 22
