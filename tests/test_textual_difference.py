"""Tests of the textual difference scorer (SPEC §1.2).

Expected values are worked by hand from the formula: ratio = 2·LCS / (len a + len b),
lengthDiff = |len a - len b| / max(len a, len b), confidence = 1 - lengthDiff,
score = ratio * confidence * scale.
"""

from __future__ import annotations

import json
import math
import unicodedata

import pytest
from realdata import read_jsonl

from scorers.catalogue.textual_difference import TextualDifferenceScorer, create_textual_difference_scorer
from scorers.core.base import Message, RunInput
from scorers.core.errors import InvalidInputError, MissingInputError, ScoreStatus

IFEVAL_RESPONSES = "ifeval_gpt4/input_response_data_gpt4_20231107_145030.jsonl"


def run(payload, *, scale=1.0):
    return create_textual_difference_scorer(scale=scale).run(payload)


NORMALISATION = {"normalize_newlines": True, "ignore_case": False, "collapse_whitespace": False}  # the defaults


def align(payload):
    return TextualDifferenceScorer().alignment(payload)


def lcs_length(a: str, b: str) -> int:
    """Plain O(len a · len b) dynamic programme, independent of rapidfuzz."""
    previous = [0] * (len(b) + 1)
    for ch in a:
        current = [0]
        for j, other in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if ch == other else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def rebuild_response(reference_tokens, response_tokens, opcodes):
    """Apply the opcodes to the reference tokens; check they tile both token lists."""
    rebuilt, a_pos, b_pos = [], 0, 0
    for tag, a0, a1, b0, b1 in opcodes:
        assert (a0, b0) == (a_pos, b_pos), "opcodes must be contiguous"
        if tag == "equal":
            assert reference_tokens[a0:a1] == response_tokens[b0:b1]
            rebuilt += reference_tokens[a0:a1]
        elif tag in ("replace", "insert"):
            rebuilt += response_tokens[b0:b1]
        else:
            assert tag == "delete" and b0 == b1
        a_pos, b_pos = a1, b1
    assert (a_pos, b_pos) == (len(reference_tokens), len(response_tokens))
    return rebuilt


def word_edits(opcodes) -> int:
    """Word-level edits implied by the opcodes: one per replaced, inserted or deleted word."""
    return sum(max(a1 - a0, b1 - b0) for tag, a0, a1, b0, b1 in opcodes if tag != "equal")


# --- the formula, worked by hand ---------------------------------------------------


def test_one_word_replaced():
    # "The quick brown " (16 chars) is common; "fox" and "cat" share no character.
    payload = {"input": "Name an animal", "output": "The quick brown cat", "ground_truth": "The quick brown fox"}
    result = run(payload)
    analysis = result.analyze_step_result
    assert analysis["ratio"] == pytest.approx(32 / 38)
    assert analysis["changes"] == 1
    assert analysis["lengthDiff"] == 0
    assert analysis["confidence"] == 1
    assert result.score == pytest.approx(32 / 38)
    assert result.scorer == "textual-difference"
    assert result.details == {
        "comparedWith": "ground_truth",
        "options": NORMALISATION,
    }  # the alignment is recomputed, not kept
    assert align(payload)["opcodes"] == [["equal", 0, 3, 0, 3], ["replace", 3, 4, 3, 4]]
    assert "84%" in result.reason and "1 word-level change" in result.reason


def test_score_is_not_rounded():
    result = run({"output": "The quick brown cat", "ground_truth": "The quick brown fox"})
    assert result.score == 32 / 38
    assert result.analyze_step_result["ratio"] == 32 / 38


@pytest.mark.parametrize("blank", ["", "  \n\t"])
def test_a_blank_ground_truth_is_missing_input_not_a_comparison(blank):
    # SPEC §1.2: once the target is the ground truth, a blank one is not scored (never 0, never the input)
    with pytest.raises(MissingInputError) as info:
        run({"input": "hello world", "output": "hello world", "ground_truth": blank})
    assert info.value.status is ScoreStatus.MISSING_INPUT and info.value.field == "ground_truth"


@pytest.mark.parametrize(("reference", "response"), [("abc", "")])
def test_one_empty_text(reference, response):
    result = run({"output": response, "ground_truth": reference})
    analysis = result.analyze_step_result
    assert analysis["ratio"] == 0
    assert analysis["lengthDiff"] == 1
    assert analysis["confidence"] == 0
    assert analysis["changes"] == 1  # one word inserted or deleted
    assert result.score == 0


def test_whitespace_only_difference_counts_one_change():
    # "a b" vs "a  b": LCS 3, ratio 6/7; lengths 3 and 4, lengthDiff 1/4.
    result = run({"output": "a  b", "ground_truth": "a b"})
    analysis = result.analyze_step_result
    assert analysis["changes"] == 1
    assert analysis["ratio"] == pytest.approx(6 / 7)
    assert analysis["lengthDiff"] == pytest.approx(1 / 4)
    assert result.score == pytest.approx(6 / 7 * 3 / 4)
    assert align({"output": "a  b", "ground_truth": "a b"})["opcodes"] == [["equal", 0, 2, 0, 2]]
    assert "whitespace" in result.reason


def test_word_insert_delete_and_replace_are_counted():
    # a b c d -> a x c d e: replace b by x, insert e.  LCS "a  c d" = 6 of 7 + 9 chars.
    result = run({"output": "a x c d e", "ground_truth": "a b c d"})
    analysis = result.analyze_step_result
    assert analysis["changes"] == 2
    assert analysis["ratio"] == pytest.approx(12 / 16)
    assert analysis["lengthDiff"] == pytest.approx(2 / 9)
    assert analysis["confidence"] == pytest.approx(7 / 9)
    assert result.score == pytest.approx(12 / 16 * 7 / 9)
    assert "2 word-level changes" in result.reason


def test_identical_texts():
    result = run({"output": "Paris is the capital.", "ground_truth": "Paris is the capital."})
    assert result.score == 1
    assert result.analyze_step_result["changes"] == 0
    assert result.reason == "The response is identical to the ground truth."


def test_nfc_composed_and_decomposed_are_equal():
    composed, decomposed = "caf\u00e9 cr\u00e8me", "cafe\u0301 cre\u0300me"
    assert composed != decomposed
    result = run({"output": decomposed, "ground_truth": composed})
    assert result.analyze_step_result == {"ratio": 1.0, "changes": 0, "lengthDiff": 0.0, "confidence": 1.0}
    assert align({"output": decomposed, "ground_truth": composed})["response"] == composed


def test_lengths_are_code_points_after_nfc():
    # "é" is one code point after NFC: "café" is 4 long, "cafe" 4 long, LCS "caf" = 3.
    result = run({"output": "cafe\u0301", "ground_truth": "cafe"})
    assert result.analyze_step_result["lengthDiff"] == 0
    assert result.analyze_step_result["ratio"] == pytest.approx(6 / 8)


def test_scale_multiplies_the_score():
    result = run({"output": "The quick brown cat", "ground_truth": "The quick brown fox"}, scale=10)
    assert result.score == pytest.approx(320 / 38)
    assert result.analyze_step_result["ratio"] == pytest.approx(32 / 38)


def test_integer_scale_is_accepted():
    assert create_textual_difference_scorer(scale=10).scale == 10.0


@pytest.mark.parametrize("scale", [0, -1, 0.0, math.nan, math.inf, -math.inf, True, False, "1", None])
def test_bad_scale_is_rejected(scale):
    with pytest.raises(InvalidInputError) as caught:
        create_textual_difference_scorer(scale=scale)
    assert caught.value.field == "scale"
    assert caught.value.status is ScoreStatus.INVALID_INPUT


def test_scale_is_validated_when_the_class_is_built_directly():
    with pytest.raises(InvalidInputError):
        TextualDifferenceScorer(scale=-2)


def test_scale_is_keyword_only():
    with pytest.raises(TypeError):
        create_textual_difference_scorer(10)


def test_scorer_identity():
    scorer = create_textual_difference_scorer()
    assert scorer.id == "textual-difference"
    assert scorer.name == "Textual difference"


# --- which text is the reference ---------------------------------------------------


def test_ground_truth_is_preferred_over_input():
    result = run({"input": "completely unrelated words", "output": "hello world", "ground_truth": "hello world"})
    assert result.details["comparedWith"] == "ground_truth"
    assert (
        align({"input": "completely unrelated words", "output": "hello world", "ground_truth": "hello world"})[
            "reference"
        ]
        == "hello world"
    )
    assert result.score == 1
    assert "ground truth" in result.reason


def test_an_explicit_target_is_kept_whatever_the_row_carries():
    payload = {"input": "hello world", "output": "hello world", "ground_truth": "bye"}
    assert create_textual_difference_scorer(target="input").run(payload).score == 1
    with pytest.raises(MissingInputError, match="ground_truth"):  # no ground truth in the run: not the input
        create_textual_difference_scorer(target="ground_truth").run({"input": "hello", "output": "hello"})
    with pytest.raises(InvalidInputError, match="target"):
        create_textual_difference_scorer(target="reference")


def test_falls_back_to_input():
    result = run({"input": "hello world", "output": "hello world"})
    assert result.details["comparedWith"] == "input"
    assert result.score == 1
    assert result.reason == "The response is identical to the input."


def test_no_reference_at_all_is_missing_input():
    # no ground truth carried: the target is the input, which is missing
    with pytest.raises(MissingInputError) as caught:
        run({"output": "hello"})
    assert caught.value.field == "input"


# --- payload shapes ------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(
            {
                "input": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "hello world"},
                ],
                "output": "hello world",
            },
            id="input-list-of-messages",
        ),
        pytest.param(
            {
                "input": {
                    "inputMessages": [{"role": "user", "content": "hello world"}],
                    "systemMessages": [{"role": "system", "content": "Be brief."}],
                },
                "output": "hello world",
            },
            id="input-inputMessages-systemMessages",
        ),
        pytest.param({"input": "hello world", "output": {"text": "hello world"}}, id="output-text-object"),
        pytest.param(
            {"input": "hello world", "output": {"role": "assistant", "content": "hello world"}},
            id="output-message",
        ),
        pytest.param(
            {
                "input": "hello world",
                "output": [
                    {"role": "user", "content": "ignored"},
                    {"role": "assistant", "content": "hello world"},
                ],
            },
            id="output-list-of-messages",
        ),
        pytest.param({"input": "hello world", "output": "hello world"}, id="output-string"),
        pytest.param({"input": "unrelated", "output": "hello world", "groundTruth": "hello world"}, id="groundTruth"),
        pytest.param(
            RunInput((Message("user", "hello world"),), (), "hello world"),
            id="RunInput",
        ),
    ],
)
def test_accepted_payload_shapes(payload):
    result = run(payload)
    assert align(payload)["reference"] == "hello world"
    assert align(payload)["response"] == "hello world"
    assert result.score == 1
    assert result.analyze_step_result["changes"] == 0


def test_system_messages_are_not_the_reference():
    payload = {"input": [{"role": "system", "content": "abc"}, {"role": "user", "content": "xyz"}], "output": "abc"}
    result = run(payload)
    assert align(payload)["reference"] == "xyz"
    assert result.score == 0


def test_malformed_payload_is_an_input_error():
    with pytest.raises(InvalidInputError):
        run({"input": "hello", "output": 42})


def test_to_dict_has_the_seed_shape():
    out = run({"output": "The quick brown cat", "ground_truth": "The quick brown fox"}).to_dict()
    assert set(out) == {"runId", "scorer", "score", "reason", "analyzeStepResult"}
    assert set(out["analyzeStepResult"]) == {"ratio", "changes", "lengthDiff", "confidence"}


# --- the word diff -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "response"),
    [
        ("The quick brown fox", "The quick brown cat"),
        ("a b c d", "a x c d e"),
        ("one two three four five", "zero one three four six seven"),
        ("old words only", ""),
        ("same words", "same   words"),
        ("x y x y x", "y x y"),
    ],
)
def test_opcodes_rebuild_the_response_tokens(reference, response):
    result = run({"output": response, "ground_truth": reference})
    details = align({"output": response, "ground_truth": reference})
    assert details["referenceTokens"] == reference.split()
    assert details["responseTokens"] == response.split()
    assert rebuild_response(details["referenceTokens"], details["responseTokens"], details["opcodes"]) == (
        response.split()
    )
    if details["referenceTokens"] != details["responseTokens"]:
        assert word_edits(details["opcodes"]) == result.analyze_step_result["changes"]


def test_long_texts_are_scored():
    words = [f"w{i % 997}" for i in range(21_000)]
    reference = " ".join(words)
    edited = list(words)
    edited[10] = "changed"
    del edited[5_000]
    edited.insert(15_000, "added")
    response = " ".join(edited)
    assert len(reference) > 100_000
    result = run({"output": response, "ground_truth": reference})
    assert result.analyze_step_result["changes"] == 3
    assert (
        rebuild_response(reference.split(), edited, align({"output": response, "ground_truth": reference})["opcodes"])
        == edited
    )
    assert 0 < result.score < 1


# --- real data: IFEval prompts and GPT-4 responses --------------------------------------


@pytest.fixture(scope="module")
def ifeval_rows():
    rows = read_jsonl(IFEVAL_RESPONSES, limit=20)
    assert len(rows) == 20
    return rows


def test_real_rows_are_in_range(ifeval_rows):
    for row in ifeval_rows:
        result = run({"input": row["prompt"], "output": row["response"]}, scale=10)
        analysis = result.analyze_step_result
        a = unicodedata.normalize("NFC", row["prompt"])
        b = unicodedata.normalize("NFC", row["response"])
        assert 0 <= analysis["ratio"] <= 1
        assert 0 <= analysis["lengthDiff"] <= 1
        assert analysis["confidence"] == pytest.approx(1 - analysis["lengthDiff"])
        assert analysis["lengthDiff"] == pytest.approx(abs(len(a) - len(b)) / max(len(a), len(b)))
        assert isinstance(analysis["changes"], int) and analysis["changes"] >= 1
        assert 0 <= result.score <= 10
        assert result.score == pytest.approx(analysis["ratio"] * analysis["confidence"] * 10)
        assert result.details["comparedWith"] == "input"
        details = align({"input": row["prompt"], "output": row["response"]})
        rebuilt = rebuild_response(details["referenceTokens"], details["responseTokens"], details["opcodes"])
        assert rebuilt == b.split()
        assert word_edits(details["opcodes"]) == analysis["changes"]


def test_real_rows_ratio_matches_a_plain_lcs(ifeval_rows):
    shortest = sorted(ifeval_rows, key=lambda r: len(r["prompt"]) * len(r["response"]))[:4]
    for row in shortest:
        a = unicodedata.normalize("NFC", row["prompt"])
        b = unicodedata.normalize("NFC", row["response"])
        expected = 2 * lcs_length(a, b) / (len(a) + len(b))
        result = run({"input": row["prompt"], "output": row["response"]})
        assert result.analyze_step_result["ratio"] == pytest.approx(expected, abs=1e-12)


def test_a_result_keeps_no_alignment_and_stays_under_one_kilobyte():
    # Two 500-word texts: the old details (both texts, both token lists, the opcodes) were ~14 KB.
    reference = " ".join(f"word{i}" for i in range(500))
    response = reference.replace("word7 ", "changed ")
    result = run({"output": response, "ground_truth": reference})
    stored = json.dumps({"analysis": result.analyze_step_result, "details": result.details, "reason": result.reason})
    assert len(stored.encode()) <= 1024
    assert result.details == {"comparedWith": "ground_truth", "options": NORMALISATION}


def test_normalisation_options_worked_by_hand():
    crlf = {"output": "a\nb", "ground_truth": "a\r\nb"}
    assert run(crlf).score == 1  # normalize_newlines is on by default: CRLF is LF
    # off: a = "a\r\nb" (4), b = "a\nb" (3), LCS 3: ratio 6/7, lengthDiff 1/4, confidence 3/4 -> 18/28
    assert create_textual_difference_scorer(normalize_newlines=False).run(crlf).score == pytest.approx(18 / 28)
    case = {"output": "hello world", "ground_truth": "Hello World"}
    # off (default, as Mastra): LCS "ello orld" = 9 of 11 + 11 -> ratio 18/22, same length
    assert run(case).score == pytest.approx(18 / 22)
    assert create_textual_difference_scorer(ignore_case=True).run(case).score == 1
    spaces = {"output": "a b\nc", "ground_truth": "a  b\n\n\nc "}
    assert create_textual_difference_scorer(collapse_whitespace=True).run(spaces).score == 1
    assert run(spaces).score < 1  # off by default


def test_the_reason_states_how_the_score_came():
    # "The cat sat" (11 characters) is a prefix of "The cat sat on the mat today" (28): LCS = 11,
    # similarity = 2·11 / (11 + 28) = 22/39 = 0.5641; length confidence = 1 − (28 − 11)/28 = 11/28 = 0.3929;
    # score = 22/39 × 11/28 = 242/1092 = 0.2216 (×10 with scale 10: 2.216).
    payload = {"input": "x", "output": "The cat sat", "ground_truth": "The cat sat on the mat today"}
    result = create_textual_difference_scorer().run(payload)
    assert result.score == pytest.approx(242 / 1092)
    assert result.reason.endswith("Score = similarity 0.564 × length confidence 0.393 = 0.222.")
    # The score with the 3 decimals its tile shows (decimal_text), not 3 significant digits (2.22).
    scaled = create_textual_difference_scorer(scale=10).run(payload)
    assert scaled.reason.endswith("Score = similarity 0.564 × length confidence 0.393 × scale 10 = 2.216.")


def test_the_reason_writes_small_factors_with_the_digits_the_result_shows():
    # "ab" (2 characters) vs "ab" + 60 "c" (62): LCS = 2, similarity = 2·2 / 64 = 0.0625 (rounded half up:
    # 0.063); length confidence = 1 − 60/62 = 2/62 = 0.03226 (0.032); score = 0.0625 × 2/62 = 0.002016 (0.002).
    # 3 significant digits wrote 0.0625, 0.0323 and 0.00202 beside the tiles' 0.063, 0.032 and 0.002.
    result = create_textual_difference_scorer().run({"input": "x", "output": "ab", "ground_truth": "ab" + "c" * 60})
    assert result.score == pytest.approx(0.0625 * 2 / 62)
    assert result.reason.endswith("Score = similarity 0.063 × length confidence 0.032 = 0.002.")
