"""AppTest tests of the Review page: labelling rows, filters, the agreement panel, consistency, import and export.

Runs are stored with run_evals + Store in a temporary database; textual-difference scores are
worked out by hand (ratio = 2·LCS / (len a + len b), × (1 − |len a − len b| / max len)).
"""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, Reply
from judge_data import settings_for, single_analysis
from scipy import stats
from streamlit.testing.v1 import AppTest

from dashboard.review.context import review_key
from dashboard.review.labelling import queue_order, resolve_position, review_queue, step
from scorers import (
    EvalItem,
    ItemOutcome,
    ScoreResult,
    ScoreStatus,
    Store,
    create_prompt_alignment_scorer,
    create_scorer,
    create_textual_difference_scorer,
    run_evals,
)
from scorers.analysis.labels import Label, current_labels, label_history, reviewer_labels, save_label
from scorers.analysis.pairwise_runs import save_pairwise
from scorers.analysis.uncertainty import stored_rejudges
from scorers.catalogue.metrics.pairwise import PairwiseOutcome, PairwiseVerdict
from scorers.core.base import JudgeUsage
from scorers.runs import jobs

TD = "textual-difference"


def stored_td_run(db: Path, outputs: list[str], reference: str) -> str:
    store = Store(db)
    try:
        items = [
            EvalItem(f"row{n}", {"input": f"question {n}", "output": {"text": out}, "ground_truth": reference})
            for n, out in enumerate(outputs)
        ]
        return run_evals(items, [create_textual_difference_scorer()], store=store, dataset_name="pairs.csv").run_id
    finally:
        store.close()


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def row_heading(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**Row "))


def test_empty_store_says_how_to_make_a_run(open_page):
    at = open_page("review")
    assert at.title[0].value == "Review"
    assert at.info[0].value.startswith("No runs yet. Score a dataset on the Batch page")


def test_the_run_is_read_once_per_version_of_its_outcomes(open_page, studio_db: Path, monkeypatch):
    from dashboard import run_explorer
    from dashboard.review import context

    tables: list[str] = []  # the run's columns (shared with History), once per version
    full: list[str] = []  # the run's items and outcomes in full: never on the review view
    items: list[int | None] = []  # the items read: only the row on screen
    judged: list[str] = []  # the scorer's rows for the queues: once per version too
    load_run_table, load_run, store_items = run_explorer.load_run_table, context.load_run, Store.items
    judged_rows = context.judged_rows

    def counted_judged(results, item_ids, scorer_id):
        judged.append(scorer_id)
        return judged_rows(results, item_ids, scorer_id)

    def counted_table(store, run_id):
        tables.append(run_id)
        return load_run_table(store, run_id)

    def counted_run(store, run_id):
        full.append(run_id)
        return load_run(store, run_id)

    def counted_items(self, run_id, item_index=None):
        items.append(item_index)
        return store_items(self, run_id, item_index)

    monkeypatch.setattr(run_explorer, "load_run_table", counted_table)
    monkeypatch.setattr(context, "load_run", counted_run)
    monkeypatch.setattr(Store, "items", counted_items)
    monkeypatch.setattr(context, "judged_rows", counted_judged)
    # Against "abc": "abc" → 1, "xyz" → 0.
    run_id = stored_td_run(studio_db, ["abc", "xyz"], "abc")
    key = review_key(run_id, TD)
    at = open_page("review")
    at.text_input(key="review_reviewer").input("Ann").run()
    at.button(key=f"{key}_0_pass").click().run()  # a label saved, a row stepped to: the run is not read again
    assert tables == [run_id] and full == [] and judged == [TD]
    assert items and None not in items and set(items) == {0, 1}  # row0, then row1 after the label
    assert metrics(at)["Labelled"] == "1 of 2" and metrics(at)["Score"] == "0.000"
    store = Store(studio_db)
    analysis = {"ratio": 0.25, "changes": 2, "lengthDiff": 0.0, "confidence": 1.0}
    details = {"comparedWith": "ground_truth", "options": {}}
    store.save_result(run_id, 1, TD, {"status": "scored", "score": 0.25, "analysis": analysis, "details": details})
    store.close()
    at.run()  # an outcome replaced (same count, same second): read again, and shown
    assert tables == [run_id, run_id] and full == [] and judged == [TD, TD]
    assert metrics(at)["Score"] == "0.250"  # row1 ("xyz" vs "abc") was 0
    # The export view reads no item until a button is clicked (the file is written from the columns then).
    at.radio(key="review_view").set_value("Import and export").run()
    assert not at.exception and full == []
    # The views that need every item (matching an uploaded file's rows) read the run in full once per version.
    at.file_uploader(key=f"review_{run_id}_upload").upload("votes.csv", b"id,vote\nrow0,1\n", "text/plain")
    at.run()
    at.radio(key="review_view").set_value("Review").run()
    at.radio(key="review_view").set_value("Import and export").run()
    assert not at.exception and full == [run_id]


def test_labelling_rows_with_the_buttons_and_the_form(open_page, studio_db: Path):
    # Against "abc": "abc" → 1; "abx" → LCS 2: 4/6 = 0.667; "xyz" → 0; "ab" → 4/5 × (1 − 1/3) = 0.533.
    run_id = stored_td_run(studio_db, ["abc", "abx", "xyz", "ab"], "abc")
    key = review_key(run_id, TD)
    at = open_page("review")
    assert metrics(at)["Labelled"] == "0 of 4"
    assert row_heading(at).startswith("**Row 1 of 4** (all rows) · item `row0`")
    assert at.button(key=f"{key}_0_pass").disabled  # no reviewer name yet
    assert at.button(key=f"{key}_previous").disabled and not at.button(key=f"{key}_next").disabled
    # The textual difference's numbers, its chart only when asked.
    assert [metrics(at)[m] for m in ("Score", "Ratio", "Changes", "Length diff", "Confidence")] == [
        "1.000",
        "1.000",
        "0",
        "0.000",
        "1.000",
    ]
    assert not at.get("plotly_chart")
    at.session_state[f"{key}_breakdown_charts"] = True
    at.run()
    assert [c.key for c in at.get("plotly_chart")] == [f"{key}_0_outcome_textual_difference"]

    at.text_input(key="review_reviewer").input("Ann").run()
    at.button(key=f"{key}_0_pass").click().run()
    assert not at.exception
    # Saved and moved on: row0 judge 1 ≥ 0.5 passes, the person passes it → 1 of 1 agree.
    assert row_heading(at).startswith("**Row 2 of 4** (all rows) · item `row1`")
    assert metrics(at)["Labelled"] == "1 of 4" and metrics(at)["Agreement"] == "100%"

    # A score below the threshold with no verdict: the person fails row1, the judge (0.667) passes it.
    at.number_input(key=f"{key}_1_score").set_value(0.2)
    at.text_input(key=f"{key}_1_comment").input("misses the point")
    at.button(key=f"{key}_1_save").click().run()
    assert not at.exception
    assert metrics(at)["Labelled"] == "2 of 4" and metrics(at)["Agreement"] == "50%"
    # MAE over the rows with a human score: |0.667 − 0.2| = 0.467.
    assert metrics(at)["Judge vs human MAE"] == "0.467"
    assert "fewer than 10 labelled rows: not meaningful yet" in " ".join(c.value for c in at.caption)

    at.button(key=f"{key}_previous").click().run()
    assert row_heading(at).startswith("**Row 2 of 4**")
    assert at.number_input(key=f"{key}_1_score").value == 0.2
    assert at.radio(key=f"{key}_1_verdict").value == "none"

    # Override: thumbs down on row1 keeps the earlier save in the history.
    at.button(key=f"{key}_1_fail").click().run()
    store = Store(studio_db)
    try:
        history = label_history(store, run_id, 1, TD)
        assert [(h.reviewer, h.human_score, h.human_pass, h.comment) for h in history] == [
            ("Ann", 0.2, None, "misses the point"),
            ("Ann", 0.2, False, "misses the point"),
        ]
        assert history[0].judge_score == pytest.approx(4 / 6)
        assert store.results(run_id)[1]["score"] == pytest.approx(4 / 6)  # the judge's score is kept
    finally:
        store.close()
    at.button(key=f"{key}_previous").click().run()
    assert "History of this label (2 saves)" in [e.label for e in at.expander]
    assert at.radio(key=f"{key}_1_verdict").value == "fail"  # the form shows the saved label


def test_filters_unlabelled_disagreements_and_low_scores(open_page, studio_db: Path):
    run_id = stored_td_run(studio_db, ["abc", "abx", "xyz", "ab"], "abc")
    store = Store(studio_db)
    save_label(store, run_id, 0, TD, reviewer="ann", human_pass=True)  # agrees (judge 1)
    save_label(store, run_id, 1, TD, reviewer="ann", human_pass=False)  # disagrees (judge 0.667)
    store.close()
    key = review_key(run_id, TD)
    at = open_page("review")

    at.radio(key="review_filter").set_value("unlabelled").run()
    assert row_heading(at).startswith("**Row 1 of 2** (unlabelled) · item `row2`")
    at.button(key=f"{key}_next").click().run()
    assert row_heading(at).startswith("**Row 2 of 2** (unlabelled) · item `row3`")
    assert at.button(key=f"{key}_next").disabled

    at.radio(key="review_filter").set_value("disagreements").run()
    assert row_heading(at).startswith("**Row 1 of 1** (disagreements) · item `row1`")

    # Below 0.5: only row2 (0); row3 is 0.533.
    at.radio(key="review_filter").set_value("low").run()
    assert row_heading(at).startswith("**Row 1 of 1** (low judge scores) · item `row2`")

    # Labelling the last unlabelled rows empties the "Unlabelled" queue.
    at.text_input(key="review_reviewer").input("Ann").run()
    at.radio(key="review_filter").set_value("unlabelled").run()
    at.button(key=f"{key}_2_fail").click().run()
    assert row_heading(at).startswith("**Row 1 of 1** (unlabelled) · item `row3`")
    at.button(key=f"{key}_3_pass").click().run()
    assert at.info[0].value == "Every one of the 4 rows is labelled."


TEN = ["abcd", "abcx", "abxy", "axyz", "wxyz"] * 2
# Against "abcd": LCS 4, 3, 2, 1, 0 of 8 characters, equal lengths → 1, 0.75, 0.5, 0.25, 0 (twice).
JUDGE = [1.0, 0.75, 0.5, 0.25, 0.0] * 2
HUMAN = [0.9, 0.8, 0.3, 0.2, 0.1, 1.0, 0.4, 0.6, 0.7, 0.0]


def test_agreement_panel_with_ten_labelled_rows(open_page, studio_db: Path):
    run_id = stored_td_run(studio_db, TEN, "abcd")
    store = Store(studio_db)
    for index, score in enumerate(HUMAN):
        save_label(store, run_id, index, TD, reviewer="ann", human_score=score)
    store.close()
    key = review_key(run_id, TD)
    at = open_page("review")
    at.radio(key="review_view").set_value("Agreement").run()
    assert not at.exception
    assert not at.warning  # 10 rows: meaningful
    shown = metrics(at)
    # Verdicts at 0.5 — judge: T T T F F T T T F F; people (from their scores): T T F F F T F T T F.
    # Both pass 4, judge pass · human fail 2, judge fail · human pass 1, both fail 3:
    # p_o = 0.7; p_e = 0.6·0.5 + 0.4·0.5 = 0.5; κ = (0.7 − 0.5)/0.5 = 0.4.
    assert shown["Labelled rows"] == "10"
    assert shown["Agreement rate"] == "70%"
    assert shown["Cohen's κ"] == "0.400"
    # MAE: .1 + .05 + .2 + .05 + .1 + 0 + .35 + .1 + .45 + 0 = 1.4 → 0.14.
    assert shown["Mean absolute error"] == "0.140"
    assert shown["Spearman ρ"] == f"{stats.spearmanr(JUDGE, HUMAN).statistic:.3f}"
    assert shown["Pearson r"] == f"{stats.pearsonr(JUDGE, HUMAN).statistic:.3f}"
    assert "Spearman ρ and Pearson r are over 10 pair(s) of judge and human scores." in [c.value for c in at.caption]
    charts = {c.key for c in at.get("plotly_chart")}
    assert {f"{key}_confusion", f"{key}_calibration"} <= charts

    # Certification: people pass rows 0 1 5 7 8, the judge passes 4 of them: TPR 4/5 = 80%; people fail
    # rows 2 3 4 6 9, the judge fails 3: TNR 3/5 = 60%; the judge passes 6 of 10 rows: 60%.
    # Rogan–Gladen: (0.6 + 0.6 − 1)/(0.8 + 0.6 − 1) = 0.2/0.4 = 50%. At 80% the intervals of 5 rows straddle it.
    assert (shown["True-positive rate"], shown["True-negative rate"]) == ("80%", "60%")
    assert (shown["Judge's pass rate"], shown["Corrected pass rate"]) == ("60%", "50%")
    assert any(i.value == "**Not known yet** at 80%." for i in at.info)
    assert any("Rogan–Gladen" in m.value for m in at.markdown)

    # Largest |judge − human| first: row8 (|0.25 − 0.7| = 0.45), row6 (0.35), row2 (0.2).
    opens = [b.key for b in at.button if b.key and b.key.startswith(f"{key}_open_")]
    assert opens[:3] == [f"{key}_open_8", f"{key}_open_6", f"{key}_open_2"]
    at.button(key=f"{key}_open_8").click().run()
    assert at.radio(key="review_view").value == "Review"
    assert row_heading(at).startswith("**Row 9 of 10** (all rows) · item `row8`")


def test_two_reviewers_are_kept_apart_and_their_agreement_measured(open_page, studio_db: Path):
    run_id = stored_td_run(studio_db, TEN, "abcd")
    store = Store(studio_db)
    # ann: pass pass fail fail; bo: pass fail fail fail on rows 0-3. Units (T,T), (T,F), (F,F), (F,F):
    # Krippendorff's α = 1 − (2/8)/(30/56) = 16/30 = 0.533 (worked in tests/test_certify.py).
    for index, verdict in enumerate([True, True, False, False]):
        save_label(store, run_id, index, TD, reviewer="ann", human_pass=verdict)
    for index, verdict in enumerate([True, False, False, False]):
        save_label(store, run_id, index, TD, reviewer="bo", human_pass=verdict)
    store.close()
    at = open_page("review")
    at.radio(key="review_view").set_value("Agreement").run()
    shown = metrics(at)
    assert shown["Reviewers"] == "2"
    assert shown["Rows labelled by two or more"] == "4"
    assert shown["Krippendorff's α (verdicts)"] == "0.533"


def test_agreement_panel_with_few_rows_and_one_class(open_page, studio_db: Path):
    run_id = stored_td_run(studio_db, ["abc", "abc", "xyz"], "abc")
    at = open_page("review")
    at.radio(key="review_view").set_value("Agreement").run()
    assert at.info[0].value.startswith("No labelled row of Textual difference has a judge score yet.")

    store = Store(studio_db)
    save_label(store, run_id, 0, TD, reviewer="ann", human_pass=True)
    save_label(store, run_id, 1, TD, reviewer="ann", human_pass=True)
    store.close()
    at.run()
    assert not at.exception
    assert at.warning[0].value == (
        "Only 2 labelled row(s): with fewer than 10 the numbers below are not meaningful yet."
    )
    shown = metrics(at)
    assert shown["Cohen's κ"] == "—" and shown["Agreement rate"] == "100%" and shown["Spearman ρ"] == "—"
    captions = " ".join(c.value for c in at.caption)
    assert "kappa is undefined" in captions


def test_consistency_rejudges_without_the_cache_and_never_changes_the_run(
    open_page, studio_db: Path, fake_judge: FakeOpenAI
):
    def verdict(free: bool) -> Reply:
        return Reply.json({"isGlutenFree": free, "glutenSources": [] if free else ["wheat flour"]})

    asked: Counter[str] = Counter()
    lock = threading.Lock()

    def respond(body):
        text = " ".join(str(m.get("content")) for m in body["messages"])
        dish = re.search(r"dish(\d)", text).group(1)
        with lock:
            asked[dish] += 1
            n = asked[dish]
        # dish0 always gluten-free, dish2 never; dish1 alternates (fresh calls, so it flips).
        return verdict({"0": True, "2": False}.get(dish, n % 2 == 1))

    fake_judge.responder = respond
    store = Store(studio_db)
    items = [EvalItem(f"d{n}", {"input": "A dinner", "output": f"dish{n}: stir-fried rice"}) for n in range(3)]
    scorer = create_scorer("gluten-checker", settings=settings_for(fake_judge), cache=store)
    run_id = run_evals(items, [scorer], store=store, dataset_name="dishes.csv").run_id
    before = store.results(run_id)
    store.close()
    assert fake_judge.chat_call_count == 3

    key = review_key(run_id, "gluten-checker")
    at = open_page("review")
    at.radio(key="review_view").set_value("Consistency").run()
    at.number_input(key=f"{key}_c_rows").set_value(3)
    at.number_input(key=f"{key}_c_repeats").set_value(3)
    at.number_input(key=f"{key}_c_temperature").set_value(0.7)
    at.run()
    assert "9 judge call(s): 3 row(s) × 3 time(s)" in " ".join(c.value for c in at.caption)
    at.button(key=f"{key}_c_run").click().run()
    assert not at.exception
    # A background job of the server: wait for it as the page's refresh would.
    deadline = time.monotonic() + 60
    while jobs.get(at.session_state["job_rejudge"]).running:
        assert time.monotonic() < deadline, "the re-judging job did not finish"
        time.sleep(0.1)
    at.run()
    assert fake_judge.chat_call_count == 3 + 9  # no reply came from the cache
    sent = fake_judge.chat_requests()[3:]
    assert all(body["temperature"] == 0.7 and "seed" not in body for body in sent)
    shown = metrics(at)
    assert shown["Rows re-judged"] == "3"
    assert shown["Verdict flips"] == "33%"  # only dish1 flips
    assert shown["Failed calls"] == "0"
    # Drift from the stored scores (1, 1, 0): dish1 re-judged 0, 1, 0 → changes 1, 0, 1 (mean 2/3), the
    # others 0: mean change (0 + 2/3 + 0)/3 = 0.222; 2 of the 9 re-judged verdicts differ from the stored one.
    assert shown["Change from stored"] == "0.222"
    assert shown["Flips vs stored verdict"] == "22%"
    table = next(d.value for d in at.dataframe if "flips" in d.value.columns)
    assert table["flips"].tolist() == [False, True, False]
    assert table["scores"].tolist()[0] == "1, 1, 1"
    assert f"{key}_c_chart" in {c.key for c in at.get("plotly_chart")}
    store = Store(studio_db)
    try:
        assert store.results(run_id) == before
        # dish1's repetitions, in the order the concurrent calls finished: two 0s and one 1.
        assert [sorted(r["repetitions"][1]) for r in stored_rejudges(store, run_id, "gluten-checker")] == [[0, 0, 1]]
    finally:
        store.close()

    # The re-judging is kept: the review queue "judge least sure first" puts dish1 first (its stored pass
    # was reversed by 2 of its 3 repetitions); dish0 and dish2 did not flip (0/3), both 0.5 from the
    # threshold 0.5, so they follow in row order.
    at.text_input(key="review_reviewer").input("Ann").run()
    at.radio(key="review_view").set_value("Review").run()
    at.radio(key="review_filter").set_value("uncertain").run()
    # The page stays on the row it showed (d0, the first row), now second in this queue.
    assert row_heading(at).startswith("**Row 2 of 3** (mine: judge least sure first) · item `d0`")
    assert "Why here: flipped on re-judge 0/3 · 0.5 from the threshold" in [m.value for m in at.markdown]
    at.button(key=f"{key}_previous").click().run()
    assert row_heading(at).startswith("**Row 1 of 3** (mine: judge least sure first) · item `d1`")
    assert "Why here: flipped on re-judge 2/3 · 0.5 from the threshold" in [m.value for m in at.markdown]
    at.button(key=f"{key}_next").click().run()
    at.button(key=f"{key}_next").click().run()
    assert row_heading(at).startswith("**Row 3 of 3** (mine: judge least sure first) · item `d2`")
    # A fresh session shows the stored re-judging again in the Consistency view.
    again = open_page("review")
    again.radio(key="review_view").set_value("Consistency").run()
    assert metrics(again)["Verdict flips"] == "33%"


def test_consistency_of_a_code_scorer_says_it_never_varies(open_page, studio_db: Path):
    stored_td_run(studio_db, ["abc"], "abc")
    at = open_page("review")
    at.radio(key="review_view").set_value("Consistency").run()
    assert at.info[0].value == "Textual difference uses no judge: its scores are computed in code and never vary."


def test_import_labels_from_an_uploaded_file_and_export(open_page, studio_db: Path, monkeypatch):
    import dashboard.review.import_export as import_export

    written = []
    monkeypatch.setattr(import_export, "export_labelled_run", lambda *args: written.append(args) or b"")
    run_id = stored_td_run(studio_db, ["abc", "abx", "xyz"], "abc")
    key = review_key(run_id, TD)
    at = open_page("review")
    at.text_input(key="review_reviewer").input("Ann").run()
    at.radio(key="review_view").set_value("Import and export").run()
    assert {f"{key}_export_csv", f"{key}_export_jsonl"} <= {b.key for b in at.get("download_button")}
    assert written == []  # the export files are written when a button is clicked, never on every rerun
    data = b"id,human verdict\nrow2,fail\nrow0,pass\nrow7,pass\nrow1,perhaps\n"
    at.file_uploader(key=f"review_{run_id}_upload").upload("verdicts.csv", data, "text/csv").run()
    assert not at.exception
    assert at.radio(key=next(r.key for r in at.radio if r.key and "_kind_" in r.key)).value == "verdict"
    summary = next(m.value for m in at.markdown if "rows give a label" in m.value)
    assert summary == "**2 of 4 rows give a label**; 2 do not; 1 of the run's 3 items get none."
    problems = next(d.value for d in at.dataframe if "reason" in d.value.columns)
    assert problems["row"].tolist() == ["line 4", "line 5"]
    assert problems["reason"].tolist()[0] == "no item of the run has the id 'row7'"
    import_button = next(b for b in at.button if b.key and b.key.endswith("_import"))
    assert import_button.label == "Import 2 label(s)"
    import_button.click().run()
    assert not at.exception
    assert at.success[0].value == "Imported 2 label(s) from verdicts.csv."
    store = Store(studio_db)
    try:
        labels = current_labels(store, run_id)
        assert {(i, label.human_pass, label.source) for (i, _), label in labels.items()} == {
            (0, True, "import: verdicts.csv"),
            (2, False, "import: verdicts.csv"),
        }
    finally:
        store.close()


def test_label_import_refuses_rows_for_items_without_a_response_and_imports_the_others(open_page, studio_db: Path):
    store = Store(studio_db)
    items = [
        EvalItem("row0", {"input": "question 0", "output": {"text": "abc"}, "ground_truth": "abc"}),
        EvalItem("row1", {"input": "question 1", "ground_truth": "abc"}),  # no response: missing_input
        EvalItem("row2", {"input": "question 2", "output": {"text": "xyz"}, "ground_truth": "abc"}),
    ]
    run_id = run_evals(items, [create_textual_difference_scorer()], store=store, dataset_name="gaps.jsonl").run_id
    # A label stored before save_label refused such rows (an older version wrote it): never lost.
    with store.transaction() as db:
        db.execute(
            "INSERT INTO labels (run_id, item_index, scorer_id, reviewer, created_at, human_score, human_pass, comment,"
            " judge_score, judge_status, source) VALUES (?, 1, ?, 'Bea', '2026-01-01T00:00:00+00:00', NULL, 1, '',"
            " NULL, 'missing_input', 'review')",
            (run_id, TD),
        )
    store.close()
    at = open_page("review")
    at.text_input(key="review_reviewer").input("Ann").run()
    at.radio(key="review_view").set_value("Import and export").run()
    data = b"id,verdict\nrow0,pass\nrow1,fail\nrow2,fail\n"  # line 3 labels row1, which has no response
    at.file_uploader(key=f"review_{run_id}_upload").upload("verdicts.csv", data, "text/csv").run()
    summary = next(m.value for m in at.markdown if "rows give a label" in m.value)
    assert summary == "**2 of 3 rows give a label**; 1 do not; 1 of the run's 3 items get none."
    assert (
        "verdicts.csv: 1 row(s) label an item with no response (not scored: Missing input), and are not imported, "
        "since there is no answer to label: line 3 (item 'row1'). The file's other rows are imported as usual, "
        "and no label already stored is changed."
    ) in [w.value for w in at.warning]
    problems = next(d.value for d in at.dataframe if "reason" in d.value.columns)
    assert problems.to_dict("records") == [
        {
            "row": "line 3",
            "key": "row1",
            "reason": "item 'row1' has no response (not scored: Missing input): there is no answer to label",
        }
    ]
    import_button = next(b for b in at.button if b.key and b.key.endswith("_import"))
    assert import_button.label == "Import 2 label(s)"  # no conflict: row1's label is not in the match
    import_button.click().run()
    assert at.success[0].value == "Imported 2 label(s) from verdicts.csv."
    store = Store(studio_db)
    try:
        labels = current_labels(store, run_id)
        assert {i: (label.reviewer, label.human_pass) for (i, _), label in labels.items()} == {
            0: ("Ann", True),
            1: ("Bea", True),
            2: ("Ann", False),
        }
    finally:
        store.close()


def test_label_import_writes_the_reviewer_and_file_names_literally(open_page, studio_db: Path):
    # A reviewer name and a file name with Markdown in them ("*", "_", "$") read as typed, never as emphasis or math.
    run_id = stored_td_run(studio_db, ["abc", "abx", "xyz"], "abc")
    store = Store(studio_db)
    save_label(store, run_id, 1, TD, reviewer="*Ann* $5", human_pass=True)
    store.close()
    at = open_page("review")
    at.text_input(key="review_reviewer").input("*Ann* $5").run()
    at.radio(key="review_view").set_value("Import and export").run()
    data = b"item_id,verdict\nrow1,fail\nrow2,fail\n"
    at.file_uploader(key=f"review_{run_id}_upload").upload("my_verdicts_v2.csv", data, "text/csv").run()
    assert not at.exception
    assert any(
        w.value.startswith("1 row(s) already have a different label from you (\\*Ann\\* \\$5).") for w in at.warning
    )
    next(b for b in at.button if b.key and b.key.endswith("_import")).click().run()
    assert at.success[0].value == "Imported 1 label(s) from my\\_verdicts\\_v2.csv; 1 row(s) kept their label."


def test_label_import_matches_by_item_id_and_never_overwrites_a_person_silently(open_page, studio_db: Path):
    run_id = stored_td_run(studio_db, ["abc", "abx", "xyz"], "abc")
    store = Store(studio_db)
    save_label(store, run_id, 0, TD, reviewer="Bea", human_pass=True, human_score=1.0)
    save_label(store, run_id, 1, TD, reviewer="Ann", human_pass=True)
    store.close()
    at = open_page("review")
    at.text_input(key="review_reviewer").input("Ann").run()
    at.radio(key="review_view").set_value("Import and export").run()
    # The file's rows are in another order than the run's items; it has an item_id column.
    data = b"n,item_id,verdict\n1,row2,fail\n2,row0,fail\n3,row1,fail\n"
    at.file_uploader(key=f"review_{run_id}_upload").upload("verdicts.csv", data, "text/csv").run()
    match_by = next(s for s in at.selectbox if s.key and s.key.endswith("_id"))
    assert match_by.value == "item_id"  # matched by id, not by row order
    # Only Ann's own label of row1 is in conflict: Bea's label of row0 is hers, kept apart.
    conflicts = next(d.value for d in at.dataframe if "in the file" in d.value.columns)
    assert conflicts.to_dict("records") == [
        {"item_id": "row1", "current label": "pass", "given by": "Ann (review)", "in the file": "fail"}
    ]
    assert any("1 row(s) already have a different label from you (Ann)" in w.value for w in at.warning)
    import_button = next(b for b in at.button if b.key and b.key.endswith("_import"))
    assert import_button.label == "Import 2 label(s)"  # Ann's own label is kept by default
    import_button.click().run()
    assert at.success[0].value == "Imported 2 label(s) from verdicts.csv; 1 row(s) kept their label."
    store = Store(studio_db)
    try:
        own = {
            who: {i: lb.human_pass for i, lb in rows.items()}
            for who, rows in reviewer_labels(store, run_id, TD).items()
        }
        assert own == {"Bea": {0: True}, "Ann": {0: False, 1: True, 2: False}}
        assert current_labels(store, run_id)[(2, TD)].source == "import: verdicts.csv"
    finally:
        store.close()
    # Replacing is an explicit choice; the earlier label stays in the history.
    next(r for r in at.radio if r.key and r.key.endswith("_conflict_choice")).set_value("replace").run()
    next(b for b in at.button if b.key and b.key.endswith("_import")).click().run()
    store = Store(studio_db)
    try:
        history = label_history(store, run_id, 1, TD)
        assert [(h.reviewer, h.human_pass, h.source) for h in history] == [
            ("Ann", True, "review"),
            ("Ann", False, "import: verdicts.csv"),
        ]
    finally:
        store.close()
    # A file whose columns hold no item id: row order is not assumed, the page asks.
    at.file_uploader(key=f"review_{run_id}_upload").upload("plain.csv", b"verdict\npass\n", "text/csv").run()
    assert next(s for s in at.selectbox if s.key and s.key.endswith("_id")).value is None
    assert any("choose how rows are matched" in w.value for w in at.warning)


def test_review_queue_per_reviewer_by_judge_doubt_or_at_random():
    def scored(i: int, score: float) -> ItemOutcome:
        return ItemOutcome(
            i, f"r{i}", TD, ScoreStatus.SCORED, ScoreResult(scorer=TD, score=score, reason="", analyze_step_result={})
        )

    outcomes = {i: scored(i, s) for i, s in enumerate([0.9, 0.45, 0.1, 0.6, 0.52])}
    mine = {1: Label(1, "run", 1, TD, "ann", "2026-01-01T00:00:00+00:00", None, True, "", None, None, "review")}
    # |score − 0.5|: row0 0.4, row1 0.05 (labelled by ann: left out), row2 0.4, row3 0.1, row4 0.02.
    # Nearest first, ties by row: 4, 3, 0, 2.
    assert review_queue(5, outcomes, {}, "uncertain", threshold=0.5, mine=mine) == [4, 3, 0, 2]
    # Random: every row ann has not labelled, in an order of her own that stays the same.
    ann = review_queue(5, outcomes, {}, "random", threshold=0.5, mine=mine, reviewer="ann")
    assert sorted(ann) == [0, 2, 3, 4]
    assert ann == review_queue(5, outcomes, {}, "random", threshold=0.5, mine=mine, reviewer="ann")
    orders = {tuple(review_queue(5, outcomes, {}, "random", threshold=0.5, reviewer=name)) for name in "abcdefgh"}
    assert len(orders) > 1  # another reviewer gets another order


def test_queue_helpers_without_streamlit():
    def scored(i: int, score: float) -> ItemOutcome:
        return ItemOutcome(
            i, f"r{i}", TD, ScoreStatus.SCORED, ScoreResult(scorer=TD, score=score, reason="", analyze_step_result={})
        )

    def label(i: int, human_pass: bool) -> Label:
        return Label(i, "run", i, TD, "ann", "2026-01-01T00:00:00+00:00", None, human_pass, "", None, None, "review")

    outcomes = {0: scored(0, 0.4), 1: scored(1, 0.1), 2: scored(2, 0.9), 3: scored(3, 0.3)}
    outcomes[4] = ItemOutcome(4, "r4", TD, ScoreStatus.API_ERROR, error="boom")
    labels = {1: label(1, True), 2: label(2, True)}
    assert review_queue(5, outcomes, labels, "unlabelled", threshold=0.5) == [0, 3, 4]
    assert review_queue(5, outcomes, labels, "disagreements", threshold=0.5) == [1]  # judge 0.1 fails, person passes
    low = review_queue(5, outcomes, labels, "low", threshold=0.5)
    assert low == [1, 3, 0]  # lowest first; the failed row has no score
    order = queue_order(outcomes, "low")
    assert step(low, 3, 1, order) == 0 and step(low, 3, -1, order) == 1
    # Row 0 labelled under "Unlabelled": it left the queue, and the next one is still row 3.
    unlabelled = review_queue(5, outcomes, {**labels, 0: label(0, False)}, "unlabelled", threshold=0.5)
    assert step(unlabelled, 0, 1, queue_order(outcomes, "unlabelled")) == 3
    assert resolve_position(unlabelled, 0, queue_order(outcomes, "unlabelled")) == 3
    assert resolve_position([2], 4, lambda i: i) == 2 and resolve_position([], 0, lambda i: i) is None
    with pytest.raises(ValueError, match="unknown review filter"):
        review_queue(1, {}, {}, "mine", threshold=0.5)


def test_the_uncertain_queue_puts_rows_whose_pairwise_order_flipped_first(open_page, studio_db: Path):
    # Two models answer two questions; textual difference against "abc": "abc" → 1, "ab" → 0.533 (see above).
    store = Store(studio_db)
    try:
        items = [
            EvalItem(
                f"q{q}/{m}", {"input": f"q{q}", "output": out, "ground_truth": "abc"}, groups={"model": m, "row_id": q}
            )
            for q, outs in ((1, ("abc", "ab")), (2, ("ab", "abc")))
            for m, out in zip(("x", "y"), outs, strict=True)
        ]  # 0 q1/x 1, 1 q1/y 0.533, 2 q2/x 0.533, 3 q2/y 1
        run_id = run_evals(items, [create_textual_difference_scorer()], store=store, dataset_name="mt.csv").run_id
        verdict = PairwiseVerdict("tie", "a", "b", "the orders disagree", JudgeUsage())
        save_pairwise(
            store,
            run_id,
            a="x",
            b="y",
            group_col="group:model",
            pair_col="group:row_id",
            rubric="better",
            judge=None,
            outcomes=[PairwiseOutcome("2", ScoreStatus.SCORED, verdict)],  # question 2: the order flipped
        )
    finally:
        store.close()
    key = review_key(run_id, TD)
    at = open_page("review")
    at.text_input(key="review_reviewer").input("Ann").run()
    at.radio(key="review_filter").set_value("uncertain").run()
    # Share of flips: q2/x and q2/y 1/1, the others never judged again (0). Then |score − 0.5|: q2/x 0.0333
    # before q2/y 0.5; q1/y 0.0333 before q1/x 0.5. Queue: 2, 3, 1, 0; the page stays on row 0, last.
    assert row_heading(at).startswith("**Row 4 of 4** (mine: judge least sure first) · item `q1/x`")
    assert "Why here: 0.5 from the threshold" in [m.value for m in at.markdown]
    for _ in range(3):
        at.button(key=f"{key}_previous").click().run()
    assert row_heading(at).startswith("**Row 1 of 4** (mine: judge least sure first) · item `q2/x`")
    assert "Why here: order flipped in pairwise judging 1/1 · 0.0333 from the threshold" in [
        m.value for m in at.markdown
    ]


def test_choosing_another_scorer_keeps_the_uploaded_label_file(open_page, studio_db: Path):
    store = Store(studio_db)
    try:
        items = [
            EvalItem(f"row{n}", {"input": "q", "output": out, "ground_truth": "abc"}) for n, out in enumerate("ab")
        ]
        scorers = [create_textual_difference_scorer(), create_scorer("content-similarity")]
        run_id = run_evals(items, scorers, store=store, dataset_name="two.csv").run_id
    finally:
        store.close()
    at = open_page("review")
    at.radio(key="review_view").set_value("Import and export").run()
    data = b"item_id,verdict\nrow0,pass\nrow1,fail\n"
    at.file_uploader(key=f"review_{run_id}_upload").upload("verdicts.csv", data, "text/csv").run()
    assert next(b for b in at.button if b.key and b.key.endswith("_import")).label == "Import 2 label(s)"
    at.selectbox(key=f"review_scorer_{run_id}").set_value("content-similarity").run()
    assert not at.exception
    # The file is still there, now matched for the other scorer's rows.
    assert next(b for b in at.button if b.key and b.key.endswith("_import")).label == "Import 2 label(s)"
    assert review_key(run_id, "content-similarity") in next(b.key for b in at.button if b.key.endswith("_import"))


def test_the_row_view_draws_its_charts_only_when_asked(open_page, studio_db: Path, fake_judge: FakeOpenAI):
    # answer0: intent 0.9, requirements 0.5, completeness 1, appropriateness 0.8; answer1: 0.5 each; answer2: no JSON.
    replies = {"0": (0.9, 0.5, 1.0, 0.8), "1": (0.5, 0.5, 0.5, 0.5)}

    def respond(body):
        which = re.search(r"answer(\d)", " ".join(str(m.get("content")) for m in body["messages"])).group(1)
        return Reply.json(single_analysis(*replies[which])) if which in replies else Reply.content("Not JSON <b>")

    fake_judge.responder = respond
    store = Store(studio_db)
    outputs = ["answer0:\n    indented  twice", "answer1", "answer2"]
    items = [EvalItem(f"q{n}", {"input": "Say it.", "output": out}) for n, out in enumerate(outputs)]
    scorer = create_prompt_alignment_scorer(options={"evaluation_mode": "user"}, settings=settings_for(fake_judge))
    run_id = run_evals(items, [scorer], store=store, dataset_name="answers.csv").run_id
    store.close()
    key = review_key(run_id, "prompt-alignment")
    at = open_page("review")
    assert not at.exception
    # Row 1: no chart, no JSON viewer, no code block; every number as text. W = 0.40·0.9 + 0.30·0.5 + 0.20·1
    # + 0.10·0.8 = 0.36 + 0.15 + 0.2 + 0.08 = 0.79, the score on the scale 1.
    assert not at.get("plotly_chart") and not at.json and not at.code
    assert metrics(at)["Prompt alignment (0–1)"] == "0.790"
    table = next(m.value for m in at.markdown if m.value.startswith("| Dimension"))
    assert table.splitlines()[2:6] == [
        "| Intent alignment | 0.90 | 40% | 0.360 |",
        "| Requirements fulfillment | 0.50 | 30% | 0.150 |",
        "| Completeness | 1.00 | 20% | 0.200 |",
        "| Response appropriateness | 0.80 | 10% | 0.080 |",
    ]
    # The score is W on the scale 1 rounded half up to 2 decimals (SPEC §1.1): 0.79, written as the tile writes it.
    assert table.endswith(
        "Weighted score W = 0.7900 (the sum of the contributions); the score is W × 1 rounded half up to 2 decimals "
        "(Mastra's rule): 0.790."
    )
    assert "The function is there." in [c.value for c in at.caption]  # each dimension's reasoning
    # The texts as they are (spaces and line breaks kept), escaped, without st.code's highlighter.
    texts = [h.proto.body for h in at.get("html")]
    assert any(t.endswith(">answer0:\n    indented  twice</div>") for t in texts)
    # Asked for: the gauge and the dimension chart, and the raw JSON; they stay open on the next row.
    at.session_state[f"{key}_breakdown_charts"] = True
    at.session_state[f"{key}_breakdown_raw"] = True
    at.run()
    assert [c.key for c in at.get("plotly_chart")] == [f"{key}_0_outcome_gauge", f"{key}_0_outcome_dimensions"]
    assert at.json[0].value and '"score": 0.79' in at.json[0].value
    at.button(key=f"{key}_next").click().run()
    assert [c.key for c in at.get("plotly_chart")] == [f"{key}_1_outcome_gauge", f"{key}_1_outcome_dimensions"]
    assert metrics(at)["Prompt alignment (0–1)"] == "0.500"
    # A failure: the judge's raw reply as plain text (escaped), no code block.
    at.button(key=f"{key}_next").click().run()
    assert at.error[0].value.startswith("Not scored (Judge output invalid)")
    assert not at.get("plotly_chart") and not at.code
    assert at.expander[-1].label == "The judge's raw reply"
    assert at.expander[-1].get("html")[0].proto.body.endswith(">Not JSON &lt;b&gt;</div>")


def test_the_key_legend_says_what_u_d_and_enter_do_with_the_next_row_setting(open_page, studio_db: Path):
    run_id = stored_td_run(studio_db, ["abc", "abx"], "abc")
    key = review_key(run_id, TD)
    at = open_page("review")

    def legend() -> str:
        (text,) = [c.value for c in at.caption if c.value.startswith("Keys: ")]
        return text

    assert at.checkbox(key=f"{key}_advance").value  # on by default: a save moves on, so U then J skips a row
    assert legend().startswith(
        "Keys: J next · K previous · U pass and next row · D fail and next row · S score field · M comment · "
        "Enter saves and goes to the next row · "
    )
    at.checkbox(key=f"{key}_advance").uncheck().run()
    assert legend().startswith(
        "Keys: J next · K previous · U pass · D fail · S score field · M comment · Enter saves · "
    )


def test_a_long_response_in_the_row_view_is_cut_as_history_cuts_it(open_page, studio_db: Path):
    # 25,000 "a" then "TAIL": the first 20,000 characters shown, the toggle shows all 25,004.
    run_id = stored_td_run(studio_db, ["a" * 25_000 + "TAIL", "abc"], "abc")
    key = review_key(run_id, TD)
    at = open_page("review")
    assert not at.exception
    assert "The first 20,000 of 25,004 characters: the rest is not shown." in [c.value for c in at.caption]
    blocks = [h.proto.body for h in at.get("html") if "aaaa" in h.proto.body and "<span" not in h.proto.body]
    assert len(blocks) == 1 and blocks[0].endswith(">" + "a" * 20_000 + "</div>")
    at.toggle(key=f"{key}_texts_0_output").set_value(True).run()
    blocks = [h.proto.body for h in at.get("html") if "aaaa" in h.proto.body and "<span" not in h.proto.body]
    assert blocks[0].endswith("aTAIL</div>")


def test_a_row_without_a_response_cannot_be_labelled_and_says_why(open_page, studio_db: Path):
    store = Store(studio_db)
    items = [
        EvalItem("row0", {"input": "question 0", "output": {"text": "abc"}, "ground_truth": "abc"}),
        EvalItem("row1", {"input": "question 1", "ground_truth": "abc"}),  # no response: missing_input
    ]
    run_id = run_evals(items, [create_textual_difference_scorer()], store=store, dataset_name="gaps.jsonl").run_id
    assert [r["status"] for r in store.results(run_id)] == ["scored", "missing_input"]
    key = review_key(run_id, TD)
    at = open_page("review")
    at.text_input(key="review_reviewer").input("Ann").run()
    assert not at.button(key=f"{key}_0_pass").disabled  # a response: it can be labelled
    at.button(key=f"{key}_next").click().run()
    assert row_heading(at).startswith("**Row 2 of 2** (all rows) · item `row1`")
    for action in ("save", "pass", "fail"):
        assert at.button(key=f"{key}_1_{action}").disabled
    assert any(i.value.startswith("This row has no response: it was not scored (Missing input)") for i in at.info)
    assert label_history(store, run_id, 1, TD) == []
    store.close()


def test_a_conversation_is_shown_turn_by_turn_with_its_roles_not_as_one_user_prompt(open_page, studio_db: Path):
    store = Store(studio_db)
    turns = [
        {"role": "user", "content": "Topic A or B first?"},
        {"role": "assistant", "content": "Which carries more marks?"},
        {"role": "user", "content": "A"},
    ]
    item = EvalItem("chat", {"input": turns, "output": {"role": "assistant", "content": "Revise A first."}})
    run_evals([item], [create_textual_difference_scorer()], store=store, dataset_name="chat.jsonl")
    store.close()
    at = open_page("review")
    assert not at.exception
    labels = [m.value for m in at.markdown]
    # Before: "User prompt" holding "Topic A or B first?\n\nA", the assistant's question left out.
    assert "**User prompt**" not in labels
    assert "**Conversation** (the turns before the response, as the judge was shown them)" in labels
    start = labels.index("**Conversation** (the turns before the response, as the judge was shown them)")
    assert labels[start + 1 : start + 4] == ["*User*", "*Assistant*", "*User*"]
    bodies = [h.proto.body for h in at.get("html")]
    shown = [
        b for b in bodies if b.endswith(("Topic A or B first?</div>", "Which carries more marks?</div>", ">A</div>"))
    ]
    assert len(shown) == 3 and shown[1].endswith(">Which carries more marks?</div>")
    assert any(b.endswith(">Revise A first.</div>") for b in bodies) and "**Response**" in labels


TOOL_CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}
TOOL_USE = [
    {"role": "user", "content": "Weather in Oslo?"},
    {"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]},
    {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "18C"},
]


def test_a_tool_call_and_its_result_are_shown_under_their_roles_not_as_the_users_prompt(open_page, studio_db: Path):
    # Before: the row was invalid_input (content null) and the tool's "18C" was read as a user turn.
    store = Store(studio_db)
    item = EvalItem("chat", {"input": TOOL_USE, "output": {"role": "assistant", "content": "It is 18C in Oslo."}})
    run_evals([item], [create_textual_difference_scorer()], store=store, dataset_name="chat.jsonl")
    store.close()
    at = open_page("review")
    assert not at.exception
    labels = [m.value for m in at.markdown]
    start = labels.index("**Conversation** (the turns before the response, as the judge was shown them)")
    assert labels[start + 1 : start + 4] == ["*User*", "*Assistant*", "*Tool*"]
    bodies = [h.proto.body for h in at.get("html")]
    assert any(b.endswith('>tool call (call_1): get_weather({"city": "Oslo"})</div>') for b in bodies)
    assert any(b.endswith(">tool result of get_weather (call call_1):\n18C</div>") for b in bodies)
    assert any(b.endswith(">It is 18C in Oslo.</div>") for b in bodies)


def test_rows_without_a_response_are_left_out_of_the_queues_to_label_and_the_page_says_so(open_page, studio_db: Path):
    store = Store(studio_db)
    items = [
        EvalItem("row0", {"input": "question 0", "output": {"text": "abc"}, "ground_truth": "abc"}),
        EvalItem("row1", {"input": "question 1", "ground_truth": "abc"}),  # no response: missing_input
        EvalItem("row2", {"input": "question 2", "output": {"text": "xyz"}, "ground_truth": "abc"}),
    ]
    run_id = run_evals(items, [create_textual_difference_scorer()], store=store, dataset_name="gaps.jsonl").run_id
    key = review_key(run_id, TD)
    at = open_page("review")
    at.text_input(key="review_reviewer").input("Ann").run()
    left_out = (
        "1 row(s) with no response (not scored: Missing input) are left out: there is no answer to label. "
        "They are under All rows; fix the dataset's response and score it again to label it."
    )
    assert metrics(at)["Labelled"] == "0 of 2"  # 3 rows, one of which cannot be labelled
    for mode in ("unlabelled", "random"):
        at.radio(key="review_filter").set_value(mode).run()
        assert row_heading(at).startswith("**Row 1 of 2**")  # row0 and row2, never row1
        assert left_out in [c.value for c in at.caption]
    at.radio(key="review_filter").set_value("unlabelled").run()
    at.button(key=f"{key}_0_pass").click().run()
    assert row_heading(at).startswith("**Row 1 of 1** (unlabelled) · item `row2`")  # row1 skipped
    at.button(key=f"{key}_2_fail").click().run()
    # The queue can be emptied: every row that can be labelled is.
    assert "Every one of the 2 rows with a response is labelled." in [i.value for i in at.info]
    assert metrics(at)["Labelled"] == "2 of 2"
    store.close()


def test_the_queues_to_label_leave_out_rows_without_a_response():
    outcomes = {
        i: ItemOutcome(
            i, f"r{i}", TD, ScoreStatus.SCORED, ScoreResult(scorer=TD, score=0.5, reason="", analyze_step_result={})
        )
        for i in (0, 2)
    }
    outcomes[1] = ItemOutcome(1, "r1", TD, ScoreStatus.MISSING_INPUT, error="no response")
    assert review_queue(3, outcomes, {}, "unlabelled", threshold=0.5, no_response={1}) == [0, 2]
    assert sorted(review_queue(3, outcomes, {}, "random", threshold=0.5, reviewer="ann", no_response={1})) == [0, 2]
    assert review_queue(3, outcomes, {}, "all", threshold=0.5, no_response={1}) == [0, 1, 2]  # shown, not labelled
