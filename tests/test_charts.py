"""Chart builders and the dimension table: traces and values from hand-written analyses (expected values computed by hand)."""

from __future__ import annotations

import plotly.graph_objects as go
import pytest

from dashboard.charts import dimension_chart, score_gauge, textual_difference_chart
from dashboard.results import dimension_table, weighted_score_line

LABELS = ["Intent alignment", "Requirements fulfillment", "Completeness", "Response appropriateness"]


def dims(intent: float, requirements: float, completeness: float, appropriateness: float) -> dict:
    """The fields of a dimension set that the charts read."""
    return {
        "intentAlignment": {"score": intent},
        "requirementsFulfillment": {"overallScore": requirements},
        "completeness": {"score": completeness},
        "responseAppropriateness": {"score": appropriateness},
    }


def traces(fig: go.Figure) -> dict[str, go.Bar]:
    return {t.name: t for t in fig.data}


def test_user_mode_scores_and_contributions():
    fig = dimension_chart({"effectiveMode": "user", **dims(0.9, 0.8, 0.7, 1.0)})

    by_name = traces(fig)
    assert list(by_name) == ["User prompt", "User prompt: contribution"]
    scores, contributions = by_name["User prompt"], by_name["User prompt: contribution"]
    assert list(scores.y) == LABELS and list(contributions.y) == LABELS
    assert list(scores.x) == [0.9, 0.8, 0.7, 1.0]
    # 0.40·0.9, 0.30·0.8, 0.20·0.7, 0.10·1.0
    assert list(contributions.x) == pytest.approx([0.36, 0.24, 0.14, 0.10])
    assert list(scores.text) == ["0.90 × 40%", "0.80 × 30%", "0.70 × 20%", "1.00 × 10%"]
    assert list(contributions.text) == ["0.360", "0.240", "0.140", "0.100"]
    assert "weight" in scores.hovertemplate and "contribution" in scores.hovertemplate
    assert [row[0] for row in scores.customdata] == [0.40, 0.30, 0.20, 0.10]
    assert fig.layout.title.text.startswith("Weighted score W = 0.8400")
    assert scores.xaxis == "x" and contributions.xaxis == "x2"


def test_both_mode_puts_user_and_system_side_by_side():
    analysis = {
        "effectiveMode": "both",
        **dims(0.9, 0.8, 0.7, 1.0),
        "systemAlignment": dims(1.0, 0.5, 1.0, 0.5),
    }
    fig = dimension_chart(analysis)

    by_name = traces(fig)
    assert list(by_name) == [
        "User prompt",
        "User prompt: contribution",
        "System messages",
        "System messages: contribution",
    ]
    assert fig.layout.barmode == "group"
    assert list(by_name["System messages"].x) == [1.0, 0.5, 1.0, 0.5]
    # 0.7 share of the user weights, 0.3 share of the system weights (0.35/0.35/0.15/0.15).
    assert list(by_name["User prompt: contribution"].x) == pytest.approx([0.252, 0.168, 0.098, 0.07])
    assert list(by_name["System messages: contribution"].x) == pytest.approx([0.105, 0.0525, 0.045, 0.0225])
    # W = 0.7·0.84 + 0.3·0.75 = 0.813
    assert fig.layout.title.text.startswith("Weighted score W = 0.8130")


def test_system_mode_uses_system_weights_only():
    fig = dimension_chart({"effectiveMode": "system", **dims(1.0, 1.0, 0.0, 0.0)})

    by_name = traces(fig)
    assert list(by_name) == ["System messages", "System messages: contribution"]
    assert list(by_name["System messages: contribution"].x) == pytest.approx([0.35, 0.35, 0.0, 0.0])


def test_gauge_draws_the_interpretation_bands_on_the_scale():
    fig = score_gauge(8.4, 10)

    indicator = fig.data[0]
    assert indicator.value == 8.4
    assert list(indicator.gauge.axis.range) == [0, 10]
    bands = [(list(step.range), step.name) for step in indicator.gauge.steps]
    assert [x for r, _ in bands for x in r] == pytest.approx([9, 10, 8, 9, 7, 8, 6, 7, 4, 6, 0, 4])
    assert bands[1][1] == "very good alignment with small gaps"
    assert "very good alignment with small gaps" in indicator.title.text


def test_textual_difference_bars():
    fig = textual_difference_chart({"ratio": 32 / 38, "changes": 1, "lengthDiff": 0.0, "confidence": 1.0})

    bar = fig.data[0]
    assert list(bar.y) == ["Similarity ratio", "Confidence", "Length difference"]
    assert list(bar.x) == pytest.approx([0.8421, 1.0, 0.0], abs=1e-4)
    assert list(bar.text) == ["0.842", "1.000", "0.000"]
    assert fig.layout.title.text == "1 word-level change"
    assert textual_difference_chart(
        {"ratio": 0.5, "changes": 3, "lengthDiff": 0.2, "confidence": 0.8}
    ).layout.title.text == ("3 word-level changes")


def test_the_dimension_table_carries_the_charts_numbers_in_both_mode():
    analysis = {
        "effectiveMode": "both",
        **dims(0.9, 0.8, 0.7, 1.0),
        "systemAlignment": dims(1.0, 0.4, 1.0, 0.6),
    }
    # User: 0.7 × (0.40·0.9, 0.30·0.8, 0.20·0.7, 0.10·1) = 0.252, 0.168, 0.098, 0.070 (sum 0.588);
    # system: 0.3 × (0.35·1, 0.35·0.4, 0.15·1, 0.15·0.6) = 0.105, 0.042, 0.045, 0.027 (sum 0.219); W = 0.807.
    assert dimension_table(analysis).splitlines() == [
        "| Dimension | Against (share) | Score (0–1) | Weight | Contribution |",
        "|---|---:|---:|---:|---:|",
        "| Intent alignment | User prompt (70%) | 0.90 | 40% | 0.252 |",
        "| Requirements fulfillment | User prompt (70%) | 0.80 | 30% | 0.168 |",
        "| Completeness | User prompt (70%) | 0.70 | 20% | 0.098 |",
        "| Response appropriateness | User prompt (70%) | 1.00 | 10% | 0.070 |",
        "| Intent alignment | System messages (30%) | 1.00 | 35% | 0.105 |",
        "| Requirements fulfillment | System messages (30%) | 0.40 | 35% | 0.042 |",
        "| Completeness | System messages (30%) | 1.00 | 15% | 0.045 |",
        "| Response appropriateness | System messages (30%) | 0.60 | 15% | 0.027 |",
        "",
        "Weighted score W = 0.8070 (the sum of the contributions).",
    ]


def test_the_dimension_table_and_chart_round_half_away_from_zero():
    analysis = {
        "effectiveMode": "both",
        **dims(0.75, 0.75, 0.75, 0.75),
        "systemAlignment": dims(0.8, 0.5, 1.0, 1.0),
    }
    # User: 0.7 × (0.40, 0.30, 0.20, 0.10) × 0.75 = 0.21, 0.1575, 0.105, 0.0525; system: 0.3 × (0.35·0.8, 0.35·0.5,
    # 0.15·1, 0.15·1) = 0.084, 0.0525, 0.045, 0.045. W = 0.7515 (to 4 decimals). Halves go away from zero: 0.158, 0.053
    # (the floats' binary values are a hair below: f"{x:.3f}" wrote 0.157, 0.052).
    table = dimension_table(analysis).splitlines()
    assert [line.split(" | ")[-1] for line in table[2:10]] == [
        "0.210 |", "0.158 |", "0.105 |", "0.053 |", "0.084 |", "0.053 |", "0.045 |", "0.045 |",
    ]  # fmt: skip
    assert table[-1] == "Weighted score W = 0.7515 (the sum of the contributions)."
    by_name = traces(dimension_chart(analysis))
    assert list(by_name["User prompt: contribution"].text) == ["0.210", "0.158", "0.105", "0.053"]
    assert list(by_name["System messages: contribution"].text) == ["0.084", "0.053", "0.045", "0.045"]
    assert [row[2] for row in by_name["User prompt"].customdata] == ["0.210", "0.158", "0.105", "0.053"]
    assert dimension_chart(analysis).layout.title.text.startswith("Weighted score W = 0.7515")


def test_the_dimension_table_says_the_score_is_w_rounded_to_2_decimals():
    # A fresh user's row (IFEval 1005, both mode): U = .4·.6 + .3·.1 + .2·.5 + .1·.5 = 0.42; S = .35·1 + .35·.2
    # + .15·.5 + .15·1 = 0.645; W = .7·0.42 + .3·0.645 = 0.4875; the score is W × 1 rounded half up to 2 decimals
    # (Mastra's rule, SPEC §1.1) = 0.49, written as the tile writes it, 0.490. The page read W = 0.488 beside 0.49.
    analysis = {
        "effectiveMode": "both",
        **dims(0.6, 0.1, 0.5, 0.5),
        "systemAlignment": dims(1.0, 0.2, 0.5, 1.0),
        "weightedScore": 0.4875,
        "scale": 1,
    }
    line = (
        "Weighted score W = 0.4875 (the sum of the contributions); the score is W × 1 rounded half up to 2 decimals "
        "(Mastra's rule): 0.490."
    )
    assert dimension_table(analysis).splitlines()[-1] == line
    assert weighted_score_line(analysis) == line
    assert dimension_chart(analysis).layout.title.text == "Weighted score W = 0.4875 (sum of the contributions)"
    # On the scale 10: W × 10 = 4.875 → 4.88, written 4.880.
    assert weighted_score_line({**analysis, "scale": 10}).endswith(
        "the score is W × 10 = 4.8750 rounded half up to 2 decimals (Mastra's rule): 4.880."
    )


def test_the_weighted_score_is_written_exactly_so_its_rounding_agrees_with_the_score():
    # U = .4·.9 + .3·.75 + .2·.15 + .1·1 = 0.715; S = .35·.48 + .35·.48 + .15·.26 + .15·.71 = 0.4815;
    # W = .7·0.715 + .3·0.4815 = 0.64495 (5 decimals), rounded half up to 2 decimals: 0.64, written 0.640.
    # W to 4 decimals read 0.6450 beside it, a second rounding the score never made.
    analysis = {
        "effectiveMode": "both",
        **dims(0.9, 0.75, 0.15, 1.0),
        "systemAlignment": dims(0.48, 0.48, 0.26, 0.71),
        "weightedScore": 0.7 * 0.715 + 0.3 * 0.4815,
        "scale": 1,
    }
    assert weighted_score_line(analysis) == (
        "Weighted score W = 0.64495 (the sum of the contributions); the score is W × 1 rounded half up to 2 "
        "decimals (Mastra's rule): 0.640."
    )
    assert dimension_chart(analysis).layout.title.text == "Weighted score W = 0.64495 (sum of the contributions)"
    # On the scale 10: W × 10 = 6.4495 → 6.45, written 6.450 (W × 10 read 6.4495 to 4 decimals already).
    assert weighted_score_line({**analysis, "scale": 10}).endswith(
        "the score is W × 10 = 6.4495 rounded half up to 2 decimals (Mastra's rule): 6.450."
    )
    # On the scale 100: W × 100 = 64.495 → 64.5 (64.50), written 64.500; to 4 decimals W × 100 read 64.4950.
    assert weighted_score_line({**analysis, "scale": 100}).endswith(
        "the score is W × 100 = 64.4950 rounded half up to 2 decimals (Mastra's rule): 64.500."
    )


def test_the_gauge_writes_the_score_as_the_tile_does():
    # 0.49 read "0.49" (d3's .2f) under a tile of 0.490; 8.4 on the scale 10 reads 8.400.
    assert [a.text for a in score_gauge(0.49, 1).layout.annotations] == ["0.490"]
    assert [a.text for a in score_gauge(8.4, 10).layout.annotations] == ["8.400"]
    assert score_gauge(0.49, 1).data[0].mode == "gauge"  # no second number drawn by the browser
