"""Comparison statistics: bootstrap intervals, leaderboards, paired tests, dimensions, row and run diffs.

Expected values are worked out by hand (or, for the bootstrap and the Wilcoxon test,
by an independent numpy / scipy computation written here).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from scorers import ScoreStatus, Store
from scorers.analysis import compare
from scorers.analysis.compare import (
    MIN_WILCOXON_PAIRS,
    bootstrap_ci,
    dimension_means,
    leaderboard,
    paired,
    rows_by_difference,
    run_diff,
)
from scorers.analysis.gate import Verdict, evaluate_gate, side_from_run, side_from_table
from scorers.runs.table import load_run_table

SCORED = ScoreStatus.SCORED.value


def frame_of(rows: list[tuple[str, str, float | None]], scorer: str = "textual-difference") -> pd.DataFrame:
    """A results frame: one row per (row id, variant, score); a None score is an API error."""
    out = []
    for i, (row_id, variant, score) in enumerate(rows):
        ok = score is not None
        out.append(
            {
                "item_index": i,
                "item_id": f"{row_id}::{variant}",
                "scorer": scorer,
                "status": SCORED if ok else ScoreStatus.API_ERROR.value,
                "score": score if ok else float("nan"),
                "reason": f"reason {variant} {row_id}" if ok else None,
                "error": None if ok else "boom",
                "prompt_tokens": 10,
                "completion_tokens": 5,
                "judge_calls": 1,
                "latency_s": 0.5,
                "input": f"question {row_id}",
                "system": "",
                "output": f"answer {variant} {row_id}",
                "ground_truth": None,
                "group:variant": variant,
                "group:row_id": row_id,
                "analysis": {"ratio": score, "confidence": 1.0, "changes": 1, "lengthDiff": 0.0} if ok else None,
            }
        )
    return pd.DataFrame(out)


def pairs_frame(a_scores, b_scores, **kw) -> pd.DataFrame:
    rows = []
    for i, (sa, sb) in enumerate(zip(a_scores, b_scores, strict=True)):
        rows += [(f"r{i}", "A", sa), (f"r{i}", "B", sb)]
    return frame_of(rows, **kw)


# ---- bootstrap -----------------------------------------------------------------------------------------


def test_bootstrap_matches_an_independent_numpy_computation():
    values = np.array([0.2, 0.5, 0.9, 0.4, 0.7, 0.65, 0.1])
    n, resamples = len(values), 2000
    rng = np.random.default_rng(0)
    idx = rng.integers(0, n, size=(resamples, n))
    means = sorted(sum(values[j] for j in row) / n for row in idx)

    def percentile(q: float) -> float:  # linear interpolation between order statistics
        position = q * (resamples - 1)
        lower = math.floor(position)
        return means[lower] + (position - lower) * (means[min(lower + 1, resamples - 1)] - means[lower])

    low, high = bootstrap_ci(values)
    assert low == pytest.approx(percentile(0.025), abs=1e-12)
    assert high == pytest.approx(percentile(0.975), abs=1e-12)
    assert low < values.mean() < high
    assert bootstrap_ci(values) == (low, high)  # same seed, same interval
    assert bootstrap_ci(values, seed=1) != (low, high)


def test_bootstrap_drawn_in_blocks_gives_the_one_draw_interval(monkeypatch: pytest.MonkeyPatch):
    # Blocks of 3 resamples of 7 values (21 draws, an odd count): the same interval as one draw of
    # rng.integers(0, 7, size=(2000, 7)), worked out independently as above; then kept, not redrawn.
    monkeypatch.setattr(compare, "_BOOTSTRAP_BLOCK", 21)
    monkeypatch.setattr(compare, "_BOOTSTRAP_CACHE", type(compare._BOOTSTRAP_CACHE)())
    values = np.array([0.3, 0.15, 0.8, 0.45, 0.6, 0.95, 0.05])
    idx = np.random.default_rng(4).integers(0, 7, size=(2000, 7))
    means = np.sort(values[idx].mean(axis=1))
    position = 0.025 * 1999  # linear interpolation between order statistics
    low = means[math.floor(position)] + (position - math.floor(position)) * (
        means[math.floor(position) + 1] - means[math.floor(position)]
    )
    assert bootstrap_ci(values, seed=4)[0] == pytest.approx(low, abs=1e-15)
    monkeypatch.setattr(np.random, "default_rng", None)  # a second call draws nothing: it is kept
    assert bootstrap_ci(values, seed=4)[0] == pytest.approx(low, abs=1e-15)


def test_bootstrap_of_a_thousand_values_in_default_blocks_gives_the_one_draw_interval():
    # 1,000 values: blocks of 2**17 // 1000 = 131 resamples, 16 blocks for 2000 (the last of 35): the
    # same means, hence the same interval, as one draw of rng.integers(0, 1000, size=(2000, 1000)).
    values = np.random.default_rng(7).random(1000)
    idx = np.random.default_rng(0).integers(0, 1000, size=(2000, 1000))
    low, high = np.quantile(values[idx].mean(axis=1), [0.025, 0.975])  # linear interpolation, as documented
    assert bootstrap_ci(values) == (low, high)


def test_bootstrap_is_close_to_normal_theory_for_a_large_sample():
    values = np.random.default_rng(123).normal(0.6, 0.1, size=400)
    low, high = bootstrap_ci(values, n_resamples=4000)
    half = 1.959964 * values.std(ddof=1) / math.sqrt(len(values))  # ≈ 0.0098
    assert low == pytest.approx(values.mean() - half, abs=0.002)
    assert high == pytest.approx(values.mean() + half, abs=0.002)


def test_bootstrap_collapses_when_all_values_are_equal():
    assert bootstrap_ci([0.7] * 9) == (0.7, 0.7)
    assert bootstrap_ci([3.0]) == (3.0, 3.0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"values": []},
        {"values": [1.0, float("nan")]},
        {"values": [1.0, 2.0], "confidence": 1.0},
        {"values": [1.0], "n_resamples": 0},
    ],
)
def test_bootstrap_rejects_bad_input(kwargs):
    values = kwargs.pop("values")
    with pytest.raises(ValueError):
        bootstrap_ci(values, **kwargs)


# ---- leaderboard ------------------------------------------------------------------------------------------


def test_leaderboard_says_how_many_replies_came_from_the_judge_cache():
    # Two variants with the same responses: B's second and third replies come from the judge cache, so
    # no call is made for them and they add no tokens. A: 3 calls → 30 prompt / 15 completion tokens,
    # none cached; B: 1 call → 10 / 5, and 2 from the cache.
    frame = frame_of(
        [("r1", "A", 0.5), ("r2", "A", 0.5), ("r3", "A", 0.5), ("r1", "B", 0.5), ("r2", "B", 0.5), ("r3", "B", 0.5)]
    )
    cached = [False, False, False, False, True, True]
    frame["cached"] = cached
    frame.loc[cached, ["prompt_tokens", "completion_tokens", "judge_calls"]] = 0
    board = leaderboard(frame).set_index("variant")
    assert board.loc["A", ["prompt_tokens", "completion_tokens", "n_cached"]].tolist() == [30, 15, 0]
    assert board.loc["B", ["prompt_tokens", "completion_tokens", "n_cached"]].tolist() == [10, 5, 2]
    # A frame without the cached column (an export) counts none.
    assert leaderboard(frame.drop(columns="cached"))["n_cached"].tolist() == [0, 0]


def test_leaderboard_counts_failures_apart_and_passes_costs():
    frame = frame_of(
        [("r1", "A", 0.8), ("r2", "A", 0.6), ("r3", "A", None), ("r1", "B", 0.5), ("r2", "B", 0.5), ("r3", "B", 0.2)]
    )
    board = leaderboard(frame, costs={"A": 0.0123, "B": None})
    assert board["variant"].tolist() == ["A", "B"]  # best mean first
    a, b = board.iloc[0], board.iloc[1]
    assert a["mean"] == pytest.approx(0.7)  # (0.8 + 0.6) / 2; the failure is not a 0
    assert (a["n_scored"], a["n_failed"]) == (2, 1)
    assert b["mean"] == pytest.approx(0.4)  # (0.5 + 0.5 + 0.2) / 3
    assert (a["ci_low"], a["ci_high"]) == bootstrap_ci([0.8, 0.6])
    assert (b["ci_low"], b["ci_high"]) == bootstrap_ci([0.5, 0.5, 0.2])
    assert (a["prompt_tokens"], a["completion_tokens"]) == (30, 15)
    assert a["cost_usd"] == 0.0123 and b["cost_usd"] is None
    assert a["latency_s"] == pytest.approx(0.5)


def test_leaderboard_of_a_variant_with_nothing_scored():
    board = leaderboard(frame_of([("r1", "A", None), ("r1", "B", 0.4)]))
    a = board.set_index("variant").loc["A"]
    assert math.isnan(a["mean"]) and math.isnan(a["ci_low"]) and a["n_failed"] == 1
    assert board["cost_usd"].tolist() == [None, None]


def test_leaderboard_names_a_missing_group_column():
    with pytest.raises(ValueError, match="group:model"):
        leaderboard(frame_of([("r1", "A", 0.5)]), group_col="group:model")


# ---- paired ---------------------------------------------------------------------------------------


A8 = [0.9, 0.8, 0.5, 0.7, 0.6, 1.0, 0.3, 0.4]
B8 = [0.6, 0.8, 0.6, 0.2, 0.6, 0.5, 0.1, 0.45]
# d = a − b = 0.3, 0, −0.1, 0.5, 0, 0.5, 0.2, −0.05: wins 4, ties 2, losses 2; mean 1.35 / 8 = 0.16875.


def test_paired_counts_by_hand_and_wilcoxon_as_scipy():
    comparison = paired(pairs_frame(A8, B8), "textual-difference", "A", "B")
    assert (comparison.n_pairs, comparison.wins, comparison.ties, comparison.losses) == (8, 4, 2, 2)
    assert comparison.mean_diff == pytest.approx(0.16875)
    d = np.array(A8) - np.array(B8)
    expected = stats.wilcoxon(d, zero_method="wilcox").pvalue
    assert comparison.wilcoxon_p == pytest.approx(expected)
    assert comparison.ci == bootstrap_ci(np.where(np.abs(d) < 1e-9, 0.0, d))
    assert comparison.ci_low < comparison.mean_diff < comparison.ci_high
    assert comparison.note == ""


def test_paired_reports_no_p_value_with_too_few_differences():
    a = [0.9, 0.8, 0.7, 0.6, 0.5, 0.5, 0.5]
    b = [0.5, 0.4, 0.3, 0.2, 0.1, 0.5, 0.5]  # 5 non-zero differences, 2 ties
    comparison = paired(pairs_frame(a, b), "textual-difference", "A", "B")
    assert comparison.wilcoxon_p is None
    assert (comparison.wins, comparison.ties, comparison.losses) == (5, 2, 0)
    assert f"at least {MIN_WILCOXON_PAIRS}" in comparison.note
    summary = comparison.summary()
    assert summary.startswith("Variant A scored higher than B on 5 of 7 questions and lower on 0 (2 ties)")
    assert "too few to tell" in summary


def test_summary_of_a_clear_difference():
    # 14 wins of +0.2, 4 ties, 2 losses of −0.1: mean = (14·0.2 − 2·0.1) / 20 = 2.6 / 20 = 0.13.
    a = [0.9] * 14 + [0.5] * 4 + [0.4] * 2
    b = [0.7] * 14 + [0.5] * 4 + [0.5] * 2
    comparison = paired(pairs_frame(a, b), "textual-difference", "A", "B")
    assert (comparison.wins, comparison.ties, comparison.losses) == (14, 4, 2)
    assert comparison.mean_diff == pytest.approx(0.13)
    assert comparison.wilcoxon_p < 0.01
    summary = comparison.summary()
    assert summary.startswith(
        "Variant A scored higher than B on 14 of 20 questions and lower on 2 (4 ties); the average difference "
        "is +0.130 (95% bootstrap CI "
    )
    assert "would be unlikely if the two variants were equally good (Wilcoxon signed-rank test, p " in summary


def test_summary_when_the_difference_is_not_significant():
    a = [0.9, 0.2, 0.8, 0.3, 0.7, 0.4, 0.6, 0.5]
    b = [0.2, 0.9, 0.3, 0.8, 0.4, 0.7, 0.5, 0.6]  # 4 wins, 4 losses of equal sizes: mean 0
    comparison = paired(pairs_frame(a, b), "textual-difference", "A", "B")
    assert comparison.mean_diff == pytest.approx(0.0, abs=1e-12)
    assert comparison.wilcoxon_p == pytest.approx(1.0)
    assert "could easily arise by chance" in comparison.summary()
    assert "do not show that either is better" in comparison.summary()


def test_summary_says_the_evidence_is_mixed_when_the_interval_and_the_test_disagree():
    from scorers.analysis.compare import PairedComparison

    # The run a fresh user saw: the 95% interval of the mean (+0.003 to +0.057) leaves out 0, the signed-rank
    # test gives p = 0.07. "Could easily arise by chance" contradicted the interval printed beside it.
    comparison = PairedComparison("textual-difference", "B", "A", 20, 12, 0, 8, 0.029, 0.003, 0.057, 0.07)
    summary = comparison.summary()
    assert "the average difference is +0.029 (95% bootstrap CI +0.003 to +0.057)." in summary
    assert "could easily arise by chance" not in summary
    assert summary.endswith(
        "The evidence is mixed: the 95% bootstrap interval of the average difference leaves out 0, but the "
        "signed-rank test does not show that either variant is better (Wilcoxon signed-rank test, p = 0.070); more "
        "questions would settle it."
    )


def test_summary_says_the_evidence_is_mixed_when_the_test_is_significant_but_the_interval_holds_zero():
    from scorers.analysis.compare import PairedComparison

    # Run vs run as a fresh user saw it: the signed-rank test gave p = 0.027, the bootstrap interval of the
    # average difference -0.017 to +0.102 includes 0. "Would be unlikely if the two runs were equally good" read as
    # contradicting the interval beside it: each number now names its test, and the two are said to disagree.
    comparison = PairedComparison(
        "Prompt alignment", "B", "A", 40, 22, 4, 14, 0.042, -0.017, 0.102, 0.027, noun="run", unit="item"
    )
    summary = comparison.summary()
    assert "the average difference is +0.042 (95% bootstrap CI -0.017 to +0.102)." in summary
    assert "would be unlikely" not in summary
    assert summary.endswith(
        "The evidence is mixed: the signed-rank test finds a difference this large unlikely if the two runs were "
        "equally good (Wilcoxon signed-rank test, p = 0.027), but the 95% bootstrap interval of the average "
        "difference includes 0; more items would settle it."
    )


def test_paired_leaves_out_pairs_with_a_failure_and_says_so():
    frame = pairs_frame([0.9, 0.8], [0.5, None])
    comparison = paired(frame, "textual-difference", "A", "B")
    assert (comparison.n_pairs, comparison.n_unpaired) == (1, 1)
    assert "1 more question was left out" in comparison.summary()
    assert (
        paired(frame_of([("r1", "A", 0.5)]), "textual-difference", "A", "B")
        .summary()
        .startswith("Variant A and B cannot be compared")
    )


def test_paired_says_when_lower_is_better():
    comparison = paired(pairs_frame([0.2] * 3, [0.1] * 3, scorer="toxicity"), "toxicity", "A", "B")
    assert "for toxicity, lower is better" in comparison.summary()


def test_paired_rejects_two_results_for_one_row():
    frame = frame_of([("r1", "A", 0.5), ("r1", "A", 0.6), ("r1", "B", 0.4)])
    with pytest.raises(ValueError, match="more than one"):
        paired(frame, "textual-difference", "A", "B")
    with pytest.raises(ValueError, match="two different"):
        paired(frame, "textual-difference", "A", "A")


# ---- dimensions and rows ---------------------------------------------------------------------------------


def test_dimension_means_use_the_scorers_dimension_scores():
    frame = pairs_frame([0.8, 0.6], [0.4, None])
    means = dimension_means(frame, "textual-difference", "group:variant")
    table = {(r.variant, r.dimension): (r.mean, r.n) for r in means.itertuples()}
    # textual difference's dimensions are ratio and confidence (the frame's analyses: ratio = score).
    assert table[("A", "ratio")] == (pytest.approx(0.7), 2)
    assert table[("B", "ratio")] == (pytest.approx(0.4), 1)
    assert table[("A", "confidence")] == (1.0, 2)
    assert set(means["label"]) == {"Ratio", "Confidence"}


def test_dimension_means_of_a_custom_judge_read_named_scores_only():
    frame = frame_of([("r1", "A", 0.5)], scorer="my-judge")
    frame.at[0, "analysis"] = {
        "clarity": {"score": 0.25},
        "depthScore": 0.75,
        "count": 1,
        "flag": True,
        "rawScore": 0.5,
        "note": "x",
    }
    means = dimension_means(frame, "my-judge", "group:variant")
    assert dict(zip(means["dimension"], means["mean"], strict=True)) == {"clarity": 0.25, "depthScore": 0.75}
    # A catalogue scorer without a dimension breakdown has no dimensions (its counts are not scores).
    plain = frame_of([("r1", "A", 0.5)], scorer="content-similarity")
    plain.at[0, "analysis"] = {"similarity": 0.5, "commonBigrams": 1}
    assert dimension_means(plain, "content-similarity", "group:variant").empty


def test_rows_by_difference_sorted_by_absolute_difference():
    frame = pairs_frame([0.9, 0.5, 0.2, 0.7], [0.8, 0.9, 0.2, None])
    rows = rows_by_difference(frame, "textual-difference", "A", "B")
    assert rows["row_id"].tolist() == ["r1", "r0", "r2"]  # |−0.4| > |0.1| > 0; r3 is not paired
    first = rows.iloc[0]
    assert first["diff"] == pytest.approx(-0.4)
    assert (first["input"], first["output_a"], first["output_b"]) == ("question r1", "answer A r1", "answer B r1")
    assert first["reason_b"] == "reason B r1"
    assert len(rows_by_difference(frame, "textual-difference", "A", "B", limit=1)) == 1


# ---- run_diff --------------------------------------------------------------------------------------------


def stored_run(store: Store, name: str, rows: list[tuple[str, str, float | None]]) -> str:
    """A stored run of textual-difference: rows are (item id, output, score or None for a failure)."""
    items = [
        (item_id, {"input": [{"role": "user", "content": f"question {item_id}"}], "output": output}, {})
        for item_id, output, _ in rows
    ]
    run_id = store.create_run(
        dataset_name="d.csv",
        items=items,
        name=name,
        scorers=[{"id": "textual-difference", "name": "Textual difference", "options": {}}],
        judge=None,
    )
    for i, (_, _, score) in enumerate(rows):
        if score is None:
            record = {"status": ScoreStatus.API_ERROR.value, "error": "boom"}
        else:
            record = {
                "status": SCORED,
                "score": score,
                "reason": "r",
                "analysis": {"ratio": score, "confidence": 1.0, "changes": 0, "lengthDiff": 0.0},
            }
        store.save_result(run_id, i, "textual-difference", record)
    store.finish_run(run_id, "completed")
    return run_id


def test_run_diff_matches_items_and_finds_regressions_and_improvements():
    store = Store(":memory:")
    base = stored_run(store, "baseline", [("q1", "a1", 0.5), ("q2", "a2", 0.9), ("q3", "a3", 0.4), ("q4", "a4", 0.7)])
    new = stored_run(store, "new prompt", [("q1", "a1", 0.8), ("q2", "a2", 0.6), ("q3", "a3", 0.4), ("q4", "a4", None)])
    diff = run_diff(store, base, new)
    assert diff.same_dataset and diff.dataset_note == ""
    assert (diff.name_a, diff.name_b) == ("baseline", "new prompt")
    deltas = dict(zip(diff.rows["item_id"], diff.rows["delta"], strict=True))
    assert deltas["q1"] == pytest.approx(0.3) and deltas["q2"] == pytest.approx(-0.3)
    assert deltas["q3"] == 0 and math.isnan(deltas["q4"])  # q4 failed in the new run: no delta
    assert diff.regressions["item_id"].tolist() == ["q2"]
    assert diff.improvements["item_id"].tolist() == ["q1"]
    ratio = diff.dimensions.set_index("dimension").loc["ratio"]
    # ratio means: baseline (0.5 + 0.9 + 0.4 + 0.7) / 4 = 0.625; new (0.8 + 0.6 + 0.4) / 3 = 0.6.
    assert (ratio["mean_a"], ratio["mean_b"]) == (pytest.approx(0.625), pytest.approx(0.6))
    assert ratio["delta"] == pytest.approx(-0.025)
    comparison = diff.comparisons["textual-difference"]
    assert (comparison.a, comparison.b) == ("new prompt", "baseline")
    assert (comparison.n_pairs, comparison.wins, comparison.ties, comparison.losses) == (3, 1, 1, 1)
    # Two runs, not prompt variants, over items: B − A is +0.3 (q1), −0.3 (q2), 0 (q3); q4 is unpaired.
    summary = comparison.summary()
    assert summary.startswith(
        "Run B (new prompt) scored higher than run A (baseline) on 1 of 3 items and lower on 1 (1 tie); "
    )
    assert "Only 2 items have different scores" in summary
    assert summary.endswith(" 1 more item was left out because it lacks a scored result from one of the two.")
    assert "ariant" not in summary and "question" not in summary
    store.close()


def test_run_diff_from_columns_counts_not_scored_rows_apart_and_never_as_zero():
    store = Store(":memory:")
    # q4 failed in run B, q5 failed in run A (None: an api_error outcome, no score).
    base = stored_run(
        store, "A", [("q1", "a1", 0.5), ("q2", "a2", 0.9), ("q3", "a3", 0.4), ("q4", "a4", 0.7), ("q5", "a5", None)]
    )
    new = stored_run(
        store, "B", [("q1", "a1", 0.8), ("q2", "a2", 0.6), ("q3", "a3", 0.4), ("q4", "a4", None), ("q5", "a5", 0.2)]
    )
    diff = run_diff(store, base, new)
    rows = diff.rows.set_index("item_id")
    assert list(rows.index) == ["q1", "q2", "q3", "q4", "q5"]  # the failed rows are kept, one row per item
    # delta = B − A where both were scored: 0.8 − 0.5 = +0.3, 0.6 − 0.9 = −0.3, 0.4 − 0.4 = 0.
    assert rows.loc["q1", "delta"] == pytest.approx(0.3) and rows.loc["q2", "delta"] == pytest.approx(-0.3)
    assert rows.loc["q3", "delta"] == 0
    # A failure has no score and no delta, never 0 (which would read as a drop of 0.7 or a rise of 0.2).
    assert (rows.loc["q4", "status_b"], rows.loc["q5", "status_a"]) == ("api_error", "api_error")
    assert math.isnan(rows.loc["q4", "score_b"]) and math.isnan(rows.loc["q5", "score_a"])
    assert math.isnan(rows.loc["q4", "delta"]) and math.isnan(rows.loc["q5", "delta"])
    assert int(diff.rows["delta"].notna().sum()) == 3  # "Outcomes compared"
    assert diff.regressions["item_id"].tolist() == ["q2"] and diff.improvements["item_id"].tolist() == ["q1"]
    # Paired (B − A) over q1..q3: +0.3, −0.3, 0 → 1 win, 1 tie, 1 loss, mean 0; q4 and q5 are unpaired.
    comparison = diff.comparisons["textual-difference"]
    assert (comparison.n_pairs, comparison.wins, comparison.ties, comparison.losses) == (3, 1, 1, 1)
    assert comparison.mean_diff == pytest.approx(0.0, abs=1e-12) and comparison.n_unpaired == 2
    assert comparison.pair_ids == ("q1", "q2", "q3")
    assert comparison.summary().endswith(
        " 2 more items were left out because they lack a scored result from one of the two."
    )
    # Dimension "ratio" (= the score here) over each run's scored rows only:
    # A (0.5 + 0.9 + 0.4 + 0.7) / 4 = 0.625; B (0.8 + 0.6 + 0.4 + 0.2) / 4 = 0.5; delta −0.125.
    ratio = diff.dimensions.set_index("dimension").loc["ratio"]
    assert (ratio["mean_a"], ratio["mean_b"]) == (pytest.approx(0.625), pytest.approx(0.5))
    assert ratio["delta"] == pytest.approx(-0.125)
    # The texts of the rows asked for only.
    shown = diff.with_texts(diff.regressions)
    assert shown[["input", "output_a", "output_b"]].values.tolist() == [["question q2", "a2", "a2"]]

    # The gate from the same columns: 5 items, 3 pairs, so 2 of 5 (40%) not scored > 10%: undecided.
    sides = [side_from_table(load_run_table(store, r)) for r in (base, new)]
    gate = evaluate_gate(*sides).scorers[0]
    assert (gate.verdict, gate.n_items, gate.n_pairs) == (Verdict.UNDECIDED, 5, 3)
    assert (gate.n_unscored_baseline, gate.n_unscored_candidate) == (1, 1)
    # Means over the pairs: A (0.5 + 0.9 + 0.4) / 3 = 0.6, B (0.8 + 0.6 + 0.4) / 3 = 0.6; B over all
    # its scored items (0.8 + 0.6 + 0.4 + 0.2) / 4 = 0.5.
    assert (gate.baseline_mean, gate.candidate_mean) == (pytest.approx(0.6), pytest.approx(0.6))
    assert gate.candidate_mean_all == pytest.approx(0.5)
    assert evaluate_gate(*sides).to_dict() == evaluate_gate(*(side_from_run(store, r) for r in (base, new))).to_dict()
    store.close()


def test_run_diff_compares_the_input_and_response_texts_not_the_stored_payloads():
    store = Store(":memory:")
    ids = []
    for name, payloads in (
        ("before", [{"input": "Say hi.", "output": "hi", "ground_truth": "hi"}, {"input": "Say no.", "output": "no"}]),
        # q1: only the ground truth differs (the same input and response): another item, whose score against
        # its reference means something else; q2: the same texts written as messages ({"role", "content"})
        # instead of plain strings: the same item.
        (
            "after",
            [
                {"input": "Say hi.", "output": "hi", "ground_truth": "hello"},
                {"input": [{"role": "user", "content": "Say no."}], "output": {"role": "assistant", "content": "no"}},
            ],
        ),
    ):
        run_id = store.create_run(
            dataset_name="d.csv",
            items=[(f"q{n}", payload, {}) for n, payload in enumerate(payloads, 1)],
            name=name,
            scorers=[{"id": "textual-difference", "name": "Textual difference", "options": {}}],
            judge=None,
        )
        for i in range(2):
            store.save_result(run_id, i, "textual-difference", {"status": SCORED, "score": 1.0, "analysis": {}})
        ids.append(run_id)
    diff = run_diff(store, *ids)
    assert not diff.same_dataset and (diff.changed_inputs, diff.changed_responses) == (["q1"], [])
    assert diff.dataset_note == (
        "The runs are not over the same dataset: 1 item id(s) in both runs with a different prompt, system message "
        "or ground truth: 'q1'."
    )
    store.close()


def test_run_diff_says_what_differs_between_the_datasets():
    store = Store(":memory:")
    base = stored_run(store, "same", [("q1", "a1", 0.5), ("q2", "a2", 0.9), ("q3", "a3", 0.4)])
    other = stored_run(store, "same", [("q1", "a1", 0.5), ("q2", "CHANGED", 0.9), ("q9", "a9", 0.4)])
    diff = run_diff(store, base, other)
    assert not diff.same_dataset
    assert (diff.only_in_a, diff.only_in_b, diff.changed_inputs, diff.changed_responses) == (["q3"], ["q9"], [], ["q2"])
    assert diff.name_a == f"same ({base})" and diff.name_b == f"same ({other})"  # equal names get their ids
    note = diff.dataset_note
    assert note.startswith("The runs are not over the same dataset")
    assert "'q3'" in note and "'q9'" in note and "1 item(s) have another response in" in note and "('q2')" in note
    with pytest.raises(KeyError):
        run_diff(store, base, "nope")
    store.close()


def test_run_diff_counts_the_items_a_stopped_run_never_scored_as_not_scored_not_as_another_dataset():
    # Run A paused after scoring q1 of its 3 items; run B scored all 3, with the same texts. q2 and q3 are
    # items of both runs that A never scored: not "only in B", and the runs are over the same dataset.
    store = Store(":memory:")
    rows = [("q1", "a1", 0.5), ("q2", "a2", 0.9), ("q3", "a3", 0.4)]
    done = stored_run(store, "done", rows)
    paused = store.create_run(
        dataset_name="d.csv",
        items=[(r["item_id"], r["payload"], {}) for r in store.items(done)],
        name="paused",
        scorers=[{"id": "textual-difference", "name": "Textual difference", "options": {}}],
        judge=None,
    )
    store.save_result(paused, 0, "textual-difference", {"status": SCORED, "score": 0.5, "analysis": {}})
    store.finish_run(paused, "budget_reached")
    diff = run_diff(store, paused, done)
    assert (diff.only_in_a, diff.only_in_b) == ([], [])
    assert diff.same_dataset
    assert (
        diff.dataset_note
        == "Note: 2 item(s) of both runs not scored in paused (never scored: a stopped run): 'q2', 'q3'."
    )
    # q1 alone is compared: 0.5 against 0.5, a tie.
    assert len(diff.rows) == 1 and diff.rows["delta"].tolist() == [0.0]
    store.close()


def test_run_diff_finds_the_changed_texts_of_items_in_another_order():
    # Items are matched by id wherever they stand: q1 and q2 swapped places (q2's response changed, q1's
    # did not), q3 kept its place with a changed response, q4 kept its place and its texts.
    store = Store(":memory:")
    base = stored_run(store, "before", [("q1", "a1", 0.5), ("q2", "a2", 0.9), ("q3", "a3", 0.4), ("q4", "a4", 1.0)])
    other = stored_run(
        store, "after", [("q2", "CHANGED", 0.9), ("q1", "a1", 0.5), ("q3", "a3!", 0.4), ("q4", "a4", 1.0)]
    )
    diff = run_diff(store, base, other)
    assert diff.changed_responses == ["q2", "q3"]  # in run A's order
    # Other responses to the same prompts are what two runs of a dataset compare (a new model, a new prompt):
    # the same dataset, with a note.
    assert diff.same_dataset and (diff.only_in_a, diff.only_in_b, diff.changed_inputs) == ([], [], [])
    assert diff.dataset_note == (
        "Note: 2 item(s) have another response in after than in before: their changes compare the scores of two "
        "responses to the same item ('q2', 'q3')."
    )
    # Only swapped places, the same texts: the same dataset.
    swapped = stored_run(store, "swapped", [("q2", "a2", 0.9), ("q1", "a1", 0.5), ("q3", "a3", 0.4), ("q4", "a4", 1.0)])
    diff = run_diff(store, base, swapped)
    assert diff.same_dataset and diff.changed_responses == [] and diff.dataset_note == ""
    store.close()


def test_summary_of_a_tiny_difference_shows_its_digits():
    # 20 questions, B = 0.5 each, A = 0.5 − 2e-5 each: every d = −2e-5 (above the tie tolerance 1e-9), so
    # mean(d) = −2e-5 and every bootstrap resample's mean is −2e-5: the CI is [−2e-5, −2e-5]. At the old
    # two or three decimals all read 0.00; 2e-5's first significant digit is the 5th decimal, one more for
    # the estimate's second digit -> 6 decimals.
    comparison = paired(pairs_frame([0.5 - 2e-5] * 20, [0.5] * 20), "textual-difference", "A", "B")
    assert (comparison.wins, comparison.ties, comparison.losses) == (0, 0, 20)
    assert "the average difference is -0.000020 (95% bootstrap CI -0.000020 to -0.000020)" in comparison.summary()
