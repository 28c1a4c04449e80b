"""Ranking of k variants: Holm, Bradley–Terry, pairwise tests and group breakdowns, worked by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scorers.analysis.ranking import bradley_terry, group_breakdown, holm, pairwise_tests, ranking
from scorers.analysis.report import comparison_report


def test_holm_by_hand():
    # m = 4, sorted: 0.005 (×4 = 0.02), 0.01 (×3 = 0.03), 0.03 (×2 = 0.06), 0.04 (×1 = 0.04 → kept
    # monotone: max(0.06, 0.04) = 0.06). Returned in the input's order.
    assert holm([0.04, 0.005, 0.03, 0.01]) == pytest.approx([0.06, 0.02, 0.06, 0.03])
    # Capped at 1: 3 × 0.5 = 1.5 → 1.
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        holm([1.2])


def test_bradley_terry_on_a_small_table_by_hand():
    # Strengths 4 : 2 : 1 (sum 7) give P(A>B) = 4/6, P(A>C) = 4/5, P(B>C) = 2/3. The table
    # A–B 2:1, A–C 4:1, B–C 2:1 satisfies the likelihood equations W_i = Σ_j n_ij π_i/(π_i+π_j) exactly:
    # A: 6 = 3·4/6 + 5·4/5 = 2 + 4; B: 3 = 3·2/6 + 3·2/3 = 1 + 2; C: 2 = 5·1/5 + 3·1/3 = 1 + 1.
    wins = np.array([[0, 2, 4], [1, 0, 2], [1, 1, 0]])
    assert bradley_terry(wins) == pytest.approx([4 / 7, 2 / 7, 1 / 7], abs=1e-8)
    # Two players: π_A / (π_A + π_B) = 3 / (3 + 1).
    assert bradley_terry(np.array([[0, 3], [1, 0]])) == pytest.approx([0.75, 0.25], abs=1e-8)
    with pytest.raises(ValueError, match="square"):
        bradley_terry(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="no finite Bradley–Terry estimate"):
        bradley_terry(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="no finite Bradley–Terry estimate"):
        bradley_terry(np.array([[0, 3], [0, 0]]))  # B never won: π_B → 0


def frame_of(scores: dict[str, list[float | None]], scorer: str = "textual-difference", **groups) -> pd.DataFrame:
    rows = []
    for variant, values in scores.items():
        for q, value in enumerate(values):
            rows.append(
                {
                    "group:variant": variant,
                    "group:row_id": f"q{q}",
                    "scorer": scorer,
                    "status": "scored" if value is not None else "judge_refused",
                    "score": np.nan if value is None else value,
                    **{f"group:{k}": v[q] for k, v in groups.items()},
                }
            )
    return pd.DataFrame(rows)


def test_ranking_from_per_question_outcomes():
    # Per question A > B > C, except q2 where B = C (a tie, half a win each) and q3 where C > B.
    # Games: A–B 4:0, A–C 4:0, B–C 2.5:1.5. A won everything (no finite MLE on its own); with half a
    # pseudo-win on both sides of every pair the fit is finite and the order is A, B, C.
    frame = frame_of({"A": [0.9, 0.9, 0.9, 0.9], "B": [0.5, 0.5, 0.4, 0.2], "C": [0.1, 0.2, 0.4, 0.3]})
    result = ranking(frame, "textual-difference", n_resamples=50)
    table = result.table
    assert table["variant"].tolist() == ["A", "B", "C"]
    assert table["rank"].tolist() == [1, 2, 3]
    assert table["wins"].tolist() == pytest.approx([8.0, 2.5, 1.5])
    assert table["comparisons"].tolist() == pytest.approx([8.0, 8.0, 8.0])
    assert result.n_questions == 4
    assert (table["ci_low"] <= table["strength"] + 1e-9).all() and (table["strength"] <= table["ci_high"] + 1e-9).all()


def test_pairwise_tests_are_holm_adjusted():
    # 3 variants → 3 pairs. A beats B and C on all 6 questions with distinct |d|: exact Wilcoxon
    # p = 2 · (1/2)^6 = 0.03125 each; B vs C equal everywhere: no test. Holm over the 2 tested:
    # sorted 0.03125, 0.03125 → 2 · 0.03125 = 0.0625 for both.
    a = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    b = [x - d for x, d in zip(a, [0.01, 0.02, 0.03, 0.04, 0.05, 0.06], strict=True)]
    frame = frame_of({"A": a, "B": b, "C": b})
    tests = pairwise_tests(frame, "textual-difference", ["A", "B", "C"]).set_index(["a", "b"])
    assert tests.loc[("A", "B"), "p"] == pytest.approx(0.03125)
    assert tests.loc[("A", "B"), "p_holm"] == pytest.approx(0.0625)
    assert tests.loc[("A", "C"), "p_holm"] == pytest.approx(0.0625)
    assert np.isnan(tests.loc[("B", "C"), "p_holm"])
    assert tests.loc[("B", "C"), "ties"] == 6


def test_group_breakdown_counts_scored_only():
    frame = frame_of({"A": [1.0, 0.5, None], "B": [0.0, 0.5, 1.0]}, category=["math", "math", "writing"])
    out = group_breakdown(frame, "textual-difference", "group:category").set_index(["group", "variant"])
    assert out.loc[("math", "A"), "mean"] == pytest.approx(0.75)
    assert out.loc[("math", "B"), "mean"] == pytest.approx(0.25)
    assert np.isnan(out.loc[("writing", "A"), "mean"])
    assert (out.loc[("writing", "A"), "n_scored"], out.loc[("writing", "A"), "n_failed"]) == (0, 1)


def test_comparison_report_ranks_three_variants_and_breaks_down_by_category():
    frame = frame_of(
        {"A": [0.9, 0.8, 0.7], "B": [0.5, 0.6, 0.7], "C": [0.1, 0.2, 0.3]}, category=["math", "math", "writing"]
    )
    frame = frame.assign(input="q", output="r", ground_truth=None, reason="", analysis=None, item_id=frame.index)
    html = comparison_report(frame, a="A", b="B")
    assert "textual-difference: ranking (Bradley–Terry strength, 95% bootstrap interval)" in html
    assert "textual-difference: every pair (Wilcoxon p, Holm-adjusted)" in html
    assert "textual-difference: mean by category" in html
