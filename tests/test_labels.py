"""Human labels in the Store: migration m003, history of edits, reloads, resumed runs, import matching, export."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path

import pandas as pd
import pytest
from legacy_db import make_legacy_db

from scorers import (
    EvalItem,
    InvalidInputError,
    Store,
    create_textual_difference_scorer,
    load_dataset,
    run_evals,
)
from scorers.analysis.labels import (
    LABEL_COLUMNS,
    NewLabel,
    current_labels,
    edit_counts,
    export_labelled_run,
    import_conflicts,
    import_labels,
    label_history,
    labelled_results_frame,
    match_labels,
    parse_score,
    parse_verdict,
    reviewer_labels,
    save_label,
    save_labels,
    scorer_scale,
)
from scorers.catalogue.judge_store import save_judge
from scorers.runs.table import load_run_table

TD = "textual-difference"


def td_items(outputs: list[str], reference: str = "abc") -> list[EvalItem]:
    return [
        EvalItem(f"row{n}", {"input": "q", "output": {"text": out}, "ground_truth": reference})
        for n, out in enumerate(outputs)
    ]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "labels.db"


@pytest.fixture
def store(store_target: str):
    """The store suite runs on SQLite and on PostgreSQL."""
    s = Store(store_target)
    yield s
    s.close()


def stored_run(store: Store, outputs=("abc", "abx", "xyz", "ab"), scale: float | None = None) -> str:
    scorer = create_textual_difference_scorer(scale=scale) if scale else create_textual_difference_scorer()
    options = {TD: {"scale": scale}} if scale else None
    return run_evals(td_items(list(outputs)), [scorer], store=store, scorer_options=options).run_id


# ---- migration


def test_a_database_of_schema_2_gets_the_labels_table(db: Path):
    old = make_legacy_db(db, 2)
    old.execute(
        "INSERT INTO runs (id, name, created_at, status, dataset_name, n_items, scorers)"
        " VALUES ('r1', 'old run', '2025-01-01T00:00:00+00:00', 'completed', 'x.csv', 1, ?)",
        (json.dumps([{"id": TD, "name": "Textual difference", "options": {}}]),),
    )
    old.commit()
    old.close()

    store = Store(db)
    try:
        assert store.schema_version >= 3
        assert [r["name"] for r in store.list_runs()] == ["old run"]
        label = save_label(store, "r1", 0, TD, reviewer="ann", human_pass=True)
        assert label.judge_score is None and label.judge_status is None  # the old run has no result for it
    finally:
        store.close()


# ---- saving, history, reloads


def test_a_label_records_who_when_and_the_judge_score_it_concerns(store: Store):
    run_id = stored_run(store)
    label = save_label(store, run_id, 1, TD, reviewer="  Ann  ", human_score=0.5, comment=" close enough ")
    # "abx" vs "abc": LCS 2 → ratio 4/6; equal lengths → score 0.667 (the judge's score, kept as is).
    assert label.judge_score == pytest.approx(4 / 6)
    assert label.judge_status == "scored"
    assert (label.reviewer, label.human_score, label.human_pass, label.comment) == ("Ann", 0.5, None, "close enough")
    assert label.source == "review" and label.created_at.endswith("+00:00")
    assert store.results(run_id)[1]["score"] == pytest.approx(4 / 6)  # the result itself is untouched


def test_every_save_appends_and_the_latest_is_current(store: Store):
    run_id = stored_run(store)
    save_label(store, run_id, 2, TD, reviewer="ann", human_pass=True)
    save_label(store, run_id, 2, TD, reviewer="bob", human_pass=False, comment="actually wrong")
    save_label(store, run_id, 2, TD, reviewer="ann", human_score=0.1, human_pass=False)
    save_label(store, run_id, 0, TD, reviewer="ann", human_score=1.0)
    history = label_history(store, run_id, 2, TD)
    assert [(h.reviewer, h.human_pass, h.human_score) for h in history] == [
        ("ann", True, None),
        ("bob", False, None),
        ("ann", False, 0.1),
    ]
    assert [h.id for h in history] == sorted(h.id for h in history)
    current = current_labels(store, run_id)
    assert sorted(current) == [(0, TD), (2, TD)]
    assert current[(2, TD)] == history[-1]
    assert edit_counts(store, run_id) == {(0, TD): 1, (2, TD): 3}
    assert current_labels(store, run_id, TD) == current
    assert current_labels(store, run_id, "other") == {}


def test_labels_survive_a_new_store_on_the_same_file(db: Path):
    first = Store(db)
    run_id = stored_run(first)
    save_label(first, run_id, 0, TD, reviewer="ann", human_pass=True, comment="fine")
    save_label(first, run_id, 0, TD, reviewer="ann", human_pass=False, comment="on second thought")
    first.close()
    again = Store(db)
    try:
        current = current_labels(again, run_id)
        assert current[(0, TD)].comment == "on second thought" and current[(0, TD)].human_pass is False
        assert len(label_history(again, run_id, 0, TD)) == 2
    finally:
        again.close()


def test_a_resumed_run_keeps_its_labels(store: Store):
    items = td_items(["abc", "abx", "xyz", "ab", "a"])
    cancel = threading.Event()

    def stop_after_two(index, item, outcomes):
        if index >= 1:
            cancel.set()

    partial = run_evals(
        items,
        [create_textual_difference_scorer()],
        store=store,
        concurrency=1,
        cancel=cancel,
        on_item_complete=stop_after_two,
    )
    assert partial.status == "cancelled"
    done = {o.item_index for o in partial.outcomes}
    assert 0 in done and 4 not in done
    save_label(store, partial.run_id, 0, TD, reviewer="ann", human_pass=True)
    early = save_label(store, partial.run_id, 4, TD, reviewer="ann", human_pass=False)  # before it was scored
    assert early.judge_score is None and early.judge_status is None

    resumed = run_evals([], [create_textual_difference_scorer()], store=store, run_id=partial.run_id)
    assert resumed.status == "completed"
    current = current_labels(store, partial.run_id)
    assert sorted(current) == [(0, TD), (4, TD)]
    assert current[(4, TD)].judge_score is None  # the judge score it was given against is kept
    assert store.results(partial.run_id)[4]["score"] is not None


def test_deleting_a_run_deletes_its_labels(store: Store):
    keep, doomed = stored_run(store), stored_run(store)
    save_label(store, keep, 0, TD, reviewer="ann", human_pass=True)
    save_label(store, doomed, 0, TD, reviewer="ann", human_pass=True)
    store.delete_run(doomed)
    assert current_labels(store, doomed) == {}
    assert len(current_labels(store, keep)) == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"reviewer": " ", "human_pass": True}, "type your name first"),
        ({"reviewer": "ann"}, "give a score, a pass/fail verdict or both"),
        ({"reviewer": "ann", "human_score": 1.5}, "outside the scorer's scale 0..1"),
        ({"reviewer": "ann", "human_score": -0.1}, "outside the scorer's scale"),
        ({"reviewer": "ann", "human_score": float("nan")}, "finite number"),
        ({"reviewer": "ann", "human_score": True}, "finite number"),
        ({"reviewer": "ann", "human_pass": "yes"}, r"True \(pass\) or False \(fail\)"),
    ],
)
def test_invalid_labels_are_rejected_with_the_reason(store: Store, kwargs, message):
    run_id = stored_run(store)
    with pytest.raises(InvalidInputError, match=message):
        save_label(store, run_id, 0, TD, max_score=1.0, **kwargs)
    assert current_labels(store, run_id) == {}


def test_labels_must_name_a_row_of_the_run(store: Store):
    run_id = stored_run(store)
    with pytest.raises(InvalidInputError, match="has items 0..3"):
        save_label(store, run_id, 4, TD, reviewer="ann", human_pass=True)
    with pytest.raises(InvalidInputError, match="has no scorer 'prompt-alignment'"):
        save_label(store, run_id, 0, "prompt-alignment", reviewer="ann", human_pass=True)
    with pytest.raises(KeyError):
        save_label(store, "nope", 0, TD, reviewer="ann", human_pass=True)
    # One bad label in a batch saves none.
    with pytest.raises(InvalidInputError):
        save_labels(store, run_id, [NewLabel(0, TD, human_pass=True), NewLabel(1, TD)], reviewer="ann")
    assert current_labels(store, run_id) == {}


def test_a_row_with_no_response_cannot_be_labelled_in_the_library_either(store: Store):
    # Item "b" has no response: missing_input, nothing to judge. Item "c" has a response but no ground truth:
    # missing_input too, yet a person can judge its answer, so it can be labelled (as on the Review page).
    items = [
        EvalItem("a", {"input": "q", "output": "abc", "ground_truth": "abc"}),
        EvalItem("b", {"input": "q", "ground_truth": "abc"}),
        EvalItem("c", {"input": "q", "output": "Paris", "ground_truth": " "}),
    ]
    run_id = run_evals(items, [create_textual_difference_scorer()], store=store).run_id
    why = (
        "item 1, scorer textual-difference: item 'b' has no response (not scored: Missing input): there is no answer "
        "to label; fix the dataset's response and score it again to label it"
    )
    with pytest.raises(InvalidInputError) as refused:
        save_label(store, run_id, 1, TD, reviewer="ann", human_pass=True)
    assert str(refused.value) == f"item_index: {why}"  # the field, as for an item index outside the run
    # One such label in a batch (or an import not told which rows have no response) saves none.
    with pytest.raises(InvalidInputError, match="item 'b' has no response"):
        save_labels(
            store, run_id, [NewLabel(0, TD, human_pass=True), NewLabel(1, TD, human_pass=False)], reviewer="ann"
        )
    frame = pd.DataFrame({"verdict": ["pass", "fail"]})
    match = match_labels(frame, items, column="verdict", kind="verdict", scorer_id=TD)  # row 2 labels item "b"
    with pytest.raises(InvalidInputError, match="item 'b' has no response"):
        import_labels(store, run_id, match, reviewer="ann", file_name="x.csv")
    assert current_labels(store, run_id) == {}
    assert save_label(store, run_id, 2, TD, reviewer="ann", human_pass=False).judge_status == "missing_input"
    assert save_label(store, run_id, 0, TD, reviewer="ann", human_pass=True).judge_status == "scored"


def test_scorer_scale(store: Store):
    assert scorer_scale(store.get_run(stored_run(store)), TD) == 1.0
    assert scorer_scale(store.get_run(stored_run(store, scale=10)), TD) == 10.0
    save_judge(
        store,
        {
            "name": "Polite",
            "instructions": "Check the tone.",
            "prompt_template": "Polite?\n{output}",
            "output_fields": [{"name": "ok", "type": "boolean"}],
            "score_rule": {"kind": "boolean", "field": "ok"},
            "scale": 5,
        },
    )
    run = {"scorers": [{"id": "judge:polite@v1", "options": {}}]}
    assert scorer_scale(run, "judge:polite@v1", store) == 5.0
    assert scorer_scale(run, "judge:gone@v1", store) == 1.0


# ---- import


def test_parse_verdict_and_score():
    assert [parse_verdict(v) for v in ("Pass", "FAIL", "yes", "No", "true", "0", 1, True, "👍", "👎")] == [
        True,
        False,
        True,
        False,
        True,
        False,
        True,
        True,
        True,
        False,
    ]
    with pytest.raises(ValueError, match="'maybe' is not a verdict"):
        parse_verdict("maybe")
    assert parse_score("7.5", 10) == 7.5
    for bad, why in (("abc", "not a number"), ("11", "outside the scorer's scale 0..10"), ("inf", "finite")):
        with pytest.raises(ValueError, match=why):
            parse_score(bad, 10)


def test_match_by_id_reports_every_row_without_a_label():
    items = td_items(["a", "b", "c", "d"])  # ids row0..row3
    frame = pd.DataFrame(
        {
            "id": ["row2", "row0", "nope", "row3", "row3", "", "row1"],
            "human": ["pass", "fail", "pass", "pass", "fail", "pass", "maybe"],
            "note": ["good", None, "x", "y", "z", "w", "v"],
        }
    )
    match = match_labels(
        frame, items, column="human", kind="verdict", scorer_id=TD, id_column="id", comment_column="note"
    )
    assert [(lb.item_index, lb.human_pass, lb.comment) for lb in match.labels] == [(2, True, "good"), (0, False, "")]
    assert [(p.row, p.key) for p in match.problems] == [
        ("row 3", "nope"),
        ("row 4", "row3"),
        ("row 5", "row3"),
        ("row 6", ""),
        ("row 7", "row1"),
    ]
    reasons = [p.reason for p in match.problems]
    assert reasons[0] == "no item of the run has the id 'nope'"
    assert reasons[1] == reasons[2] == "the id 'row3' appears 2 times in the file: which label is meant is unclear"
    assert reasons[3] == "the id column 'id' is blank"
    assert reasons[4].startswith("'human': 'maybe' is not a verdict")
    assert match.n_rows == 7 and len(match.labels) + len(match.problems) == 7  # nothing dropped silently
    assert match.unlabelled_items == [1, 3]


def test_match_by_row_order_with_scores_on_the_scale():
    items = td_items(["a", "b", "c"])
    frame = pd.DataFrame({"score": ["7", "", "12", "3.5"]})
    match = match_labels(
        frame,
        items,
        column="score",
        kind="score",
        scorer_id=TD,
        max_score=10,
        row_labels=["line 2", "line 3", "line 4", "line 5"],
    )
    assert [(lb.item_index, lb.human_score) for lb in match.labels] == [(0, 7.0)]
    assert [(p.row, p.key, p.reason) for p in match.problems] == [
        ("line 3", "2", "the 'score' cell is blank"),
        ("line 4", "3", "'score': 12 is outside the scorer's scale 0..10"),
        ("line 5", "4", "the run has only 3 items"),
    ]
    assert match.unlabelled_items == [1, 2]
    with pytest.raises(InvalidInputError, match="no column 'missing'"):
        match_labels(frame, items, column="missing", kind="score", scorer_id=TD)
    with pytest.raises(InvalidInputError, match="unknown label kind"):
        match_labels(frame, items, column="score", kind="stars", scorer_id=TD)


def test_import_from_an_uploaded_csv_then_agreement_data_is_there(store: Store):
    run_id = stored_run(store)
    data = b"row_id,rating\nrow1,0.5\nrow3,1\nrow9,0.2\n"
    dataset = load_dataset(data, name="rated.csv")
    match = match_labels(
        dataset.frame,
        [EvalItem(r["item_id"], r["payload"]) for r in store.items(run_id)],
        column="rating",
        kind="score",
        scorer_id=TD,
        id_column="row_id",
        row_labels=[dataset.row_label(i) for i in range(len(dataset.frame))],
        max_score=1.0,
    )
    assert [(p.row, p.reason) for p in match.problems] == [("line 4", "no item of the run has the id 'row9'")]
    saved = import_labels(store, run_id, match, reviewer="ann", file_name="rated.csv", max_score=1.0)
    assert [(lb.item_index, lb.human_score, lb.source) for lb in saved] == [
        (1, 0.5, "import: rated.csv"),
        (3, 1.0, "import: rated.csv"),
    ]
    assert sorted(current_labels(store, run_id)) == [(1, TD), (3, TD)]
    empty = match_labels(pd.DataFrame({"r": ["x"]}), [], column="r", kind="verdict", scorer_id=TD)
    with pytest.raises(InvalidInputError, match="no row gave a label"):
        import_labels(store, run_id, empty, reviewer="ann", file_name="x.csv")


def test_match_labels_refuses_a_row_whose_item_has_no_response():
    items = [EvalItem("a", {}), EvalItem("b", {}), EvalItem("c", {})]
    frame = pd.DataFrame({"verdict": ["pass", "fail", "pass"]})  # by row order: row 2 labels item "b"
    match = match_labels(frame, items, column="verdict", kind="verdict", scorer_id=TD, no_response={1})
    assert [label.item_index for label in match.labels] == [0, 2]
    assert match.no_response == [("row 2", "b")]
    assert [(p.row, p.key, p.reason) for p in match.problems] == [
        ("row 2", "2", "item 'b' has no response (not scored: Missing input): there is no answer to label")
    ]
    assert match.unlabelled_items == [1]


def test_import_leaves_the_same_label_as_it_was_and_keeps_a_different_one_unless_replaced(store: Store):
    run_id = stored_run(store)
    save_labels(store, run_id, [NewLabel(1, TD, human_score=0.5, comment="checked the units")], reviewer="alice")
    save_labels(store, run_id, [NewLabel(2, TD, human_score=0.0)], reviewer="alice")
    items = [EvalItem(r["item_id"], r["payload"]) for r in store.items(run_id)]
    # row1 gives alice's own 0.5 again, row2 a different 1.0, row3 a first label.
    frame = pd.DataFrame({"row_id": ["row1", "row2", "row3"], "rating": ["0.5", "1", "1"]})
    match = match_labels(frame, items, column="rating", kind="score", scorer_id=TD, id_column="row_id", max_score=1.0)

    conflicts = import_conflicts(store, run_id, match, reviewer=" alice ")
    assert [(c.item_index, c.existing.human_score, c.imported.human_score) for c in conflicts] == [(2, 0.0, 1.0)]
    saved = import_labels(store, run_id, match, reviewer="alice", file_name="r.csv", max_score=1.0)
    assert [lb.item_index for lb in saved] == [3]  # the same label is not saved again, the different one kept
    same = label_history(store, run_id, 1, TD)
    assert [(lb.reviewer, lb.comment) for lb in same] == [("alice", "checked the units")]
    assert current_labels(store, run_id)[(2, TD)].human_score == 0.0

    saved = import_labels(
        store, run_id, match, reviewer="alice", file_name="r.csv", max_score=1.0, replace_conflicting=True
    )
    assert [lb.item_index for lb in saved] == [2]  # replaced by choice; row1 still left as it was
    assert current_labels(store, run_id)[(2, TD)].human_score == 1.0
    assert len(label_history(store, run_id, 1, TD)) == 1


def test_import_compares_only_the_importing_reviewers_own_labels(store: Store):
    # The user's case: alice and bob both marked row1 fail on the page, bob marked row0 fail; carol
    # imports a file saying row0 pass, row1 fail. Each reviewer's labels are kept apart, so carol has no
    # label to conflict with or to match: both her labels are saved, and alice's and bob's stay theirs.
    run_id = stored_run(store)
    save_labels(store, run_id, [NewLabel(1, TD, human_pass=False)], reviewer="alice")
    save_labels(store, run_id, [NewLabel(0, TD, human_pass=False), NewLabel(1, TD, human_pass=False)], reviewer="bob")
    items = [EvalItem(r["item_id"], r["payload"]) for r in store.items(run_id)]
    frame = pd.DataFrame({"key": ["row0", "row1"], "label": ["pass", "FAIL"]})
    match = match_labels(frame, items, column="label", kind="verdict", scorer_id=TD, id_column="key")

    assert import_conflicts(store, run_id, match, reviewer="carol") == []
    saved = import_labels(store, run_id, match, reviewer="carol", file_name="labels.csv", replace_conflicting=True)
    assert [(lb.item_index, lb.reviewer, lb.human_pass) for lb in saved] == [(0, "carol", True), (1, "carol", False)]
    by_reviewer = reviewer_labels(store, run_id, TD)
    assert {who: {i: lb.human_pass for i, lb in own.items()} for who, own in by_reviewer.items()} == {
        "alice": {1: False},
        "bob": {0: False, 1: False},
        "carol": {0: True, 1: False},
    }
    # Importing the same file again finds carol's own labels the same: nothing saved, nothing in conflict.
    assert import_conflicts(store, run_id, match, reviewer="carol") == []
    assert import_labels(store, run_id, match, reviewer="carol", file_name="labels.csv") == []


# ---- export


def test_labelled_results_frame_joins_the_current_label(store: Store):
    run_id = stored_run(store)
    save_label(store, run_id, 0, TD, reviewer="ann", human_pass=True)
    save_label(store, run_id, 0, TD, reviewer="bob", human_score=0.9, human_pass=True, comment='=HYPERLINK("x")')
    table = load_run_table(store, run_id)
    frame = labelled_results_frame(table, current_labels(store, run_id), edit_counts(store, run_id))
    assert list(frame.columns[-len(LABEL_COLUMNS) :]) == list(LABEL_COLUMNS)
    first = frame.iloc[0]
    assert (first["score"], first["human_score"], first["human_pass"], first["reviewer"]) == (1.0, 0.9, True, "bob")
    assert first["label_edits"] == 2 and first["judge_score_at_label"] == 1.0
    assert pd.isna(frame.iloc[1]["human_score"]) and frame.iloc[1]["human_pass"] is None
    assert frame.iloc[1]["label_edits"] == 0

    csv = pd.read_csv(io.BytesIO(export_labelled_run(store, table, "csv")), keep_default_na=False)
    assert csv.loc[0, "human_comment"] == '\'=HYPERLINK("x")'  # neutralised for spreadsheets
    assert csv.loc[0, "human_score"] == "0.9" and csv.loc[1, "human_score"] == ""
    lines = [json.loads(line) for line in export_labelled_run(store, table, "jsonl").decode().splitlines()]
    assert lines[0]["human_comment"] == '=HYPERLINK("x")' and lines[0]["human_pass"] is True
    assert lines[1]["human_score"] is None and lines[1]["score"] == pytest.approx(4 / 6)
    with pytest.raises(ValueError, match="use csv or jsonl"):
        export_labelled_run(store, table, "parquet")


def test_the_labelled_export_keeps_the_dataset_columns_and_the_dimension_scores(store: Store):
    items = [
        EvalItem("q1", {"input": "q", "output": {"text": "abc"}, "ground_truth": "abx"}, columns={"vote": "up"}),
        EvalItem("q2", {"input": "q", "output": {"text": "abc"}, "ground_truth": "abc"}, columns={"vote": "down"}),
    ]
    run_id = run_evals(items, [create_textual_difference_scorer()], store=store).run_id
    save_label(store, run_id, 1, TD, reviewer="ann", human_score=0.5)

    csv = pd.read_csv(io.BytesIO(export_labelled_run(store, load_run_table(store, run_id), "csv")))
    assert csv["item_id"].tolist() == ["q1", "q2"]
    assert csv["vote"].tolist() == ["up", "down"]  # the dataset's unmapped column, carried through
    # "abc" vs "abx": 2 matching characters of 3 + 3 → 2·2/6 = 0.667; "abc" vs "abc" → 1.
    assert csv["textual_difference.ratio"].tolist() == pytest.approx([4 / 6, 1.0])
    assert pd.isna(csv.loc[0, "human_score"]) and csv.loc[1, "human_score"] == 0.5
