"""The judge's doubt per row and the review queue's "judge least sure first" order, worked by hand."""

from __future__ import annotations

import pytest

from dashboard.review.labelling import queue_order, review_queue, step
from scorers import EvalItem, ItemOutcome, ScoreResult, ScoreStatus, Store, create_textual_difference_scorer, run_evals
from scorers.analysis.labels import Label
from scorers.analysis.pairwise_runs import order_flips_by_item
from scorers.analysis.uncertainty import JudgeDoubt, judge_doubts, pooled_repetitions, save_rejudge, stored_rejudges

TD = "textual-difference"


def scored(i: int, score: float) -> ItemOutcome:
    return ItemOutcome(
        i, f"r{i}", TD, ScoreStatus.SCORED, ScoreResult(scorer=TD, score=score, reason="", analyze_step_result={})
    )


SCORES = {0: 0.52, 1: 0.90, 2: 0.10, 3: 0.45, 4: 0.70}
REPETITIONS = {
    1: [0.4, 0.6, 0.3, 0.8, 0.9],  # stored 0.9 passes at 0.5; 0.4 and 0.3 fail: 2 flips of 5
    3: [0.45, 0.4, "api_error"],  # stored 0.45 fails; both scored repetitions fail: 0 of 2 (the error not counted)
    4: [0.7, 0.2],  # stored 0.7 passes; 0.2 fails: 1 of 2
}
ORDER_FLIPS = {2: (1, 1), 3: (0, 1), 4: (0, 1)}  # (flipped, judged) pairwise judgings


def test_doubts_and_the_uncertain_order_by_hand():
    doubts = judge_doubts(SCORES, threshold=0.5, repetitions=REPETITIONS, order_flips=ORDER_FLIPS)
    # Flip share = (re-judge flips + order flips) / (scored repetitions + judged pairwise judgings):
    #   row0: nothing again → 0;             distance |0.52 − 0.5| = 0.02
    #   row1: (2 + 0) / (5 + 0) = 0.4;       distance 0.40
    #   row2: (0 + 1) / (0 + 1) = 1.0;       distance 0.40
    #   row3: (0 + 0) / (2 + 1) = 0;         distance 0.05
    #   row4: (1 + 0) / (2 + 1) = 1/3;       distance 0.20
    assert [doubts[i].flip_share for i in range(5)] == pytest.approx([0, 0.4, 1.0, 0, 1 / 3])
    assert [doubts[i].distance for i in range(5)] == pytest.approx([0.02, 0.4, 0.4, 0.05, 0.2])
    assert (doubts[1].rejudge_flips, doubts[1].rejudges) == (2, 5)
    assert (doubts[3].rejudge_flips, doubts[3].rejudges, doubts[3].order_flips, doubts[3].pairwise) == (0, 2, 0, 1)
    # Highest share first: 2 (1.0), 1 (0.4), 4 (1/3); then the rows with none, nearest first: 0 (0.02), 3 (0.05).
    assert sorted(doubts, key=lambda i: doubts[i].key) == [2, 1, 4, 0, 3]
    assert doubts[1].explain() == "flipped on re-judge 2/5 · 0.4 from the threshold"
    assert doubts[2].explain() == "order flipped in pairwise judging 1/1 · 0.4 from the threshold"
    assert doubts[4].explain() == (
        "flipped on re-judge 1/2 · order flipped in pairwise judging 0/1 · 0.2 from the threshold"
    )
    assert doubts[0].explain() == "0.02 from the threshold"


def test_the_review_queue_uses_the_doubts_and_leaves_out_labelled_and_unscored_rows():
    outcomes = {i: scored(i, s) for i, s in SCORES.items()}
    outcomes[5] = ItemOutcome(5, "r5", TD, ScoreStatus.API_ERROR, error="boom")
    mine = {0: Label(0, "run", 0, TD, "ann", "2026-01-01T00:00:00+00:00", None, True, "", None, None, "review")}
    doubts = judge_doubts(SCORES, threshold=0.5, repetitions=REPETITIONS, order_flips=ORDER_FLIPS)
    queue = review_queue(6, outcomes, {}, "uncertain", threshold=0.5, mine=mine, doubts=doubts)
    assert queue == [2, 1, 4, 3]  # the order above without row 0 (ann labelled it) and row 5 (not scored)
    # Row 0, just labelled, left the queue: the next row after it in the order is 3.
    assert step(queue, 0, 1, queue_order(outcomes, "uncertain", threshold=0.5, doubts=doubts)) == 3
    # Without stored re-judgings or pairwise judgings the order is by distance alone: 0, 3, 4, then 1 and 2 (0.4 each).
    assert review_queue(6, outcomes, {}, "uncertain", threshold=0.5) == [0, 3, 4, 1, 2]


def test_lower_is_better_scorers_flip_on_the_other_side():
    # Lower is better: a row passes at score <= 0.5. Stored 0.3 passes; 0.6 fails → 1 flip of 2.
    doubts = judge_doubts({0: 0.3}, threshold=0.5, higher_is_better=False, repetitions={0: [0.6, 0.4]})
    assert (doubts[0].rejudge_flips, doubts[0].rejudges) == (1, 2)
    assert doubts[0] == JudgeDoubt(0, 0.3, pytest.approx(0.2), 1, 2, 0, 0)


def test_order_flips_by_item_pairs_items_by_variant_and_row():
    items = [
        EvalItem(f"q{q}/{m}", {}, groups={"model": m, "row_id": q})
        for q in (1, 2)
        for m in ("gpt-4", "llama", "vicuna")
    ]  # index: 0 q1/gpt-4, 1 q1/llama, 2 q1/vicuna, 3 q2/gpt-4, 4 q2/llama, 5 q2/vicuna

    def record(a: str, b: str, outcomes: list[dict]) -> dict:
        return {"a": a, "b": b, "group_col": "group:model", "pair_col": "group:row_id", "outcomes": outcomes}

    records = [
        record(
            "gpt-4",
            "llama",
            [
                {"row_id": "1", "winner": "tie", "first": "a", "second": "b"},  # flipped
                {"row_id": "2", "winner": "a", "first": "a", "second": "a"},  # steady
            ],
        ),
        record(
            "gpt-4",
            "vicuna",
            [
                {"row_id": "1", "winner": "a", "first": "a", "second": "a"},  # steady
                {"row_id": "2", "winner": None, "first": None, "second": None},  # not judged: not counted
            ],
        ),
    ]
    # q1/gpt-4: flipped with llama, steady with vicuna → (1, 2); q1/llama (1, 1); q1/vicuna (0, 1);
    # q2/gpt-4: steady with llama → (0, 1); q2/llama (0, 1); q2/vicuna: its only pair was not judged → absent.
    assert order_flips_by_item(records, items) == {0: (1, 2), 1: (1, 1), 2: (0, 1), 3: (0, 1), 4: (0, 1)}


def test_rejudgings_are_stored_with_the_run_newest_first_and_go_with_it(store_target: str):
    store = Store(store_target)  # SQLite, then PostgreSQL
    try:
        items = [EvalItem(f"r{i}", {"input": "q", "output": "a", "ground_truth": "a"}) for i in range(3)]
        run_id = run_evals(items, [create_textual_difference_scorer()], store=store, dataset_name="d.csv").run_id
        first = save_rejudge(
            store, run_id, TD, params="2 row(s) × 2", repetitions={0: [0.4, 0.6], 2: [1.0, "api_error"]}
        )
        second = save_rejudge(store, run_id, TD, params="1 row(s) × 1", repetitions={0: [0.5]})
        records = stored_rejudges(store, run_id, TD)
        assert [r["id"] for r in records] == [second, first]
        assert records[1]["repetitions"] == {0: [0.4, 0.6], 2: [1.0, "api_error"]}
        assert records[1]["params"] == "2 row(s) × 2"
        assert stored_rejudges(store, run_id, "another-scorer") == []
        assert pooled_repetitions(records) == {0: [0.5, 0.4, 0.6], 2: [1.0, "api_error"]}
        with pytest.raises(KeyError):
            save_rejudge(store, "no-such-run", TD, params="", repetitions={})
        store.delete_run(run_id)
        assert stored_rejudges(store, run_id, TD) == []
    finally:
        store.close()
