"""AppTest tests of the History page: runs stored with run_evals + Store in a temp database."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
import sqlalchemy as sa
from fake_openai import FakeOpenAI, Reply
from judge_data import run_payload, settings_for, single_analysis
from streamlit.testing.v1 import AppTest

from scorers import EvalItem, Store, create_prompt_alignment_scorer, create_textual_difference_scorer, run_evals
from scorers.runs import jobs


def td_items(pairs: list[tuple[str, str]]) -> list[EvalItem]:
    return [
        EvalItem(
            f"row{n}",
            {"input": [{"role": "user", "content": "q"}], "output": {"text": out}, "ground_truth": ref},
            {"model": "m1" if n % 2 == 0 else "m2"},
        )
        for n, (out, ref) in enumerate(pairs)
    ]


def stored_td_run(db: Path, pairs: list[tuple[str, str]], dataset: str = "pairs.csv") -> str:
    store = Store(db)
    try:
        return run_evals(
            td_items(pairs), [create_textual_difference_scorer()], store=store, dataset_name=dataset
        ).run_id
    finally:
        store.close()


def open_tab(at: AppTest, key: str, label: str) -> None:
    """Open a tab of a run's results, as a click on it does (only the open tab's body runs)."""
    at.session_state[f"{key}_tab"] = label
    at.run()
    assert not at.exception


def history_table(at: AppTest):
    return next(d.value for d in at.dataframe if "status" in d.value.columns and "dataset" in d.value.columns)


def test_empty_history_says_how_to_make_a_run(open_page):
    at = open_page("history")
    assert at.title[0].value == "History"
    assert at.info[0].value == "No runs yet. Score a dataset on the Batch page; its run appears here."


def test_a_run_of_variants_is_listed_with_each_variants_mean_in_a_column_wide_enough(open_page, studio_db: Path):
    # Variant a: "4"/"4" → 1, "abcd"/"abcd" → 1; variant b: "=1+1" vs "=1+2" → 2·3/8 = 0.75, "ab" vs "cd" → 0.
    rows = [("1", "a", "4", "4"), ("1", "b", "=1+1", "=1+2"), ("2", "a", "abcd", "abcd"), ("2", "b", "ab", "cd")]
    items = [
        EvalItem(f"{r}::{v}", {"input": "q", "output": o, "ground_truth": g}, {"variant": v, "row_id": r})
        for r, v, o, g in rows
    ]
    store = Store(studio_db)
    run_evals(items, [create_textual_difference_scorer()], store=store, mapping={"groups": ["variant", "row_id"]})
    store.close()
    at = open_page("history")
    (grid,) = [d for d in at.dataframe if "status" in d.value.columns and "dataset" in d.value.columns]
    # The cell reads "a 1.000 · b 0.375" (17 characters): never (1 + 1 + 0.75 + 0) / 4 = 0.6875 of both variants,
    # in a column of about 8 pixels a character and a margin, 8 · 17 + 24 = 160, so its text is not cut.
    assert json.loads(grid.proto.columns)["mean: textual-difference"]["width"] == 160


def test_runs_are_listed_with_their_means_and_counts(open_page, studio_db: Path):
    # "abc" vs "abc" → 1; "abcd" vs "abcx": LCS 3 → 6/8 = 0.75, same length → 0.75. Mean 0.875.
    first = stored_td_run(studio_db, [("abc", "abc"), ("abcd", "abcx")], "first.csv")
    # "" vs "xy" → 0 (scored, not failed); mean 0.
    second = stored_td_run(studio_db, [("", "xy")], "second.jsonl")
    at = open_page("history")
    table = history_table(at)
    assert table["dataset"].tolist() == ["second.jsonl", "first.csv"]  # newest first
    assert table["scorers"].tolist() == ["Textual difference", "Textual difference"]
    assert table["status"].tolist() == ["Completed", "Completed"]
    assert table["items"].tolist() == [1, 2]
    assert table["scored"].tolist() == [1, 2]
    assert table["not scored"].tolist() == [0, 0]
    assert table["mean: textual-difference"].tolist() == pytest.approx([0.0, 0.875])
    assert table["first judge"].tolist() == ["—", "—"]
    # A missing mean (a scorer the run did not use) shows the grid's placeholder, "—" as the caption says.
    (grid,) = [d for d in at.dataframe if "status" in d.value.columns and "dataset" in d.value.columns]
    assert grid.proto.placeholder == "—"
    assert at.selectbox(key="history_pick").value == second
    assert [o.rsplit(" · ", 1)[1] for o in at.selectbox(key="history_pick").options] == [second, first]


def test_open_shows_the_results_view(open_page, studio_db: Path):
    run_id = stored_td_run(studio_db, [("abc", "abc"), ("abcd", "abcx"), ("", "xy")])
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    assert not at.exception
    key = f"history_{run_id}"
    assert [s.value for s in at.success] == ["Completed: all 3 outcomes scored."]
    aggregates = next(d.value for d in at.dataframe if "n pending" in d.value.columns).set_index("scorer")
    # (1 + 0.75 + 0) / 3 = 0.58333..., given to the grid at the 3 decimals it shows: 0.583.
    assert aggregates.loc["Textual difference", "mean"] == 0.583
    # The Summary tab opens first, and only it is built: its tables, no chart (no Plotly to load in the
    # browser), rows table or export.
    assert not at.get("plotly_chart") and not at.get("download_button")
    assert f"{key}_table" not in [d.key for d in at.dataframe]
    open_tab(at, key, "Distributions")
    charts = {c.key for c in at.get("plotly_chart")}
    assert {
        f"{key}_hist_textual-difference",
        f"{key}_box_textual-difference",
        f"{key}_dims_textual-difference",
        f"{key}_heat_textual-difference",
        f"{key}_group_model",
        f"{key}_status",
    } <= charts
    assert not any("n pending" in d.value.columns for d in at.dataframe)  # the Summary is not built now
    open_tab(at, key, "Rows and drill-down")
    rows = next(d for d in at.dataframe if d.key == f"{key}_table").value
    assert rows["item_id"].tolist() == ["row0", "row1", "row2"]
    open_tab(at, key, "Export")
    assert {b.key for b in at.get("download_button")} >= {
        f"{key}_export_{f}" for f in ("csv", "jsonl", "json", "parquet")
    }
    # A completed run without failures offers no resume.
    assert f"{key}_resume" not in [b.key for b in at.button]


def test_the_rows_table_names_textual_difference_with_its_target_as_history_and_the_charts_do(
    open_page, studio_db: Path
):
    store = Store(studio_db)
    run_id = run_evals(
        td_items([("abc", "abc")]),
        [create_textual_difference_scorer()],
        store=store,
        scorer_options={"textual-difference": {"target": "ground_truth"}},
    ).run_id
    store.close()
    at = open_page("history")
    assert "mean: textual-difference (vs ground truth)" in history_table(at).columns
    at.button(key="history_open_button").click().run()
    key = f"history_{run_id}"
    open_tab(at, key, "Rows and drill-down")
    rows = next(d for d in at.dataframe if d.key == f"{key}_table").value
    assert rows["scorer"].tolist() == ["Textual difference (vs ground truth)"]
    assert at.multiselect(key=f"{key}_f_scorer").options == ["Textual difference (vs ground truth)"]  # the filter


def test_rows_page_sort_by_a_dimension_and_a_chart_selection(open_page, studio_db: Path):
    # 60 items, row k with n = k + 1: "a"*n vs "a"*60 → ratio 2n / (n + 60), confidence n / 60.
    run_id = stored_td_run(studio_db, [("a" * n, "a" * 60) for n in range(1, 61)])
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    key = f"history_{run_id}"
    open_tab(at, key, "Rows and drill-down")
    rows = next(d for d in at.dataframe if d.key == f"{key}_table").value
    assert len(rows) == 50  # one page of 50 of the 60 rows
    at.number_input(key=f"{key}_page").set_value(2).run()
    rows = next(d for d in at.dataframe if d.key == f"{key}_table").value
    assert rows["item_id"].tolist() == [f"row{n}" for n in range(50, 60)]
    # The sort box names the scorer and dimension as the charts do, not the column behind them.
    assert at.selectbox(key=f"{key}_sort").options == [
        "item order",
        "Score",
        "Textual difference · Ratio",
        "Textual difference · Confidence",
    ]
    at.selectbox(key=f"{key}_sort").set_value("textual_difference.confidence").run()
    at.toggle(key=f"{key}_sort_desc").set_value(True).run()
    at.number_input(key=f"{key}_page").set_value(1).run()
    rows = next(d for d in at.dataframe if d.key == f"{key}_table").value
    assert rows["item_id"].tolist()[:2] == ["row59", "row58"]  # confidence 60/60, then 59/60
    # A histogram bar's range (as a click sets it) filters the rows: 2n/(n+60) · n/60 is 0.8768 at
    # n = 55 and 0.9011 at n = 56, so scores in [0.9, 1.0] are rows 55..59 (n = 56..60).
    at.session_state[f"{key}_chart_filter"] = {
        "label": "Textual difference: score 0.9 to 1",
        "scorer": "textual-difference",
        "score_range": (0.9, 1.0),
        "items": None,
    }
    at.run()
    rows = next(d for d in at.dataframe if d.key == f"{key}_table").value
    assert sorted(rows["item_id"].tolist()) == [f"row{k}" for k in range(55, 60)]
    at.button(key=f"{key}_chart_clear").click().run()
    assert len(next(d for d in at.dataframe if d.key == f"{key}_table").value) == 50


def test_rows_read_the_texts_of_their_page_only_and_a_search_finds_any_row(
    open_page, studio_db: Path, monkeypatch: pytest.MonkeyPatch
):
    # 60 items; only row57's response holds "needle", past the first page of 50 rows.
    run_id = stored_td_run(studio_db, [("needle here" if n == 57 else f"answer {n}", "ref") for n in range(60)])
    payload_reads: list[list] = []
    original = Store.read_chunks

    def logged(self, sql, params=(), size=2000):
        if "payload" in sql:
            payload_reads.append(list(params))
        return original(self, sql, params, size)

    monkeypatch.setattr(Store, "read_chunks", logged)
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    key = f"history_{run_id}"
    assert payload_reads == []  # the Summary needs no text
    open_tab(at, key, "Rows and drill-down")
    rows = next(d for d in at.dataframe if d.key == f"{key}_table").value
    assert rows["output"].tolist()[:2] == ["answer 0", "answer 1"] and len(rows) == 50
    assert payload_reads == [[run_id, *range(50)]]  # the 50 items of the page, nothing else
    at.text_input(key=f"{key}_f_search").input("NEEDLE").run()
    rows = next(d for d in at.dataframe if d.key == f"{key}_table").value
    assert rows["item_id"].tolist() == ["row57"] and rows["output"].tolist() == ["needle here"]
    # The search read every item's texts once; the page's texts then come from them.
    assert payload_reads[1:] == [[run_id]]


def test_a_rerun_with_a_run_open_reads_its_version_stamp_once(open_page, studio_db: Path, monkeypatch):
    run_id = stored_td_run(studio_db, [("a", "a"), ("b", "c")])
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    stamps: list[str] = []
    original = Store.results_version
    monkeypatch.setattr(Store, "results_version", lambda self, rid: stamps.append(rid) or original(self, rid))
    at.run()
    # The table's cache reads it; the judges and their cost are kept per version of that table.
    assert stamps == [run_id]
    assert at.metric[1].value == "2"  # Outcomes scored: both


def test_a_replaced_outcome_is_shown_though_the_count_is_unchanged(open_page, studio_db: Path, monkeypatch):
    from dashboard import run_explorer

    built: list[str] = []  # the Summary's tables and chart: built once per version of the run's outcomes
    aggregates = run_explorer.aggregates

    def counted(table, names, by):
        built.append(table.run["id"])
        return aggregates(table, names, by)

    monkeypatch.setattr(run_explorer, "aggregates", counted)
    store = Store(studio_db)
    run_id = store.create_run(
        dataset_name="retry.csv",
        items=[("a", {"input": "q", "output": "x", "ground_truth": "x"}, {}), ("b", {"input": "q"}, {})],
        scorers=[{"id": "textual-difference", "name": "Textual difference", "options": {}}],
        judge=None,
    )
    full = {"ratio": 1.0, "changes": 0, "lengthDiff": 0.0, "confidence": 1.0}
    store.save_result(run_id, 0, "textual-difference", {"status": "scored", "score": 1.0, "analysis": full})
    store.save_result(run_id, 1, "textual-difference", {"status": "invalid_input", "error": "no output"})
    store.finish_run(run_id, "completed")
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    assert at.warning[0].value.startswith("Completed with 1 outcome(s) not scored")
    at.run()  # a rerun: nothing new stored, the Summary is not built again
    assert built == [run_id]
    # A retry replaces the failed outcome (within the same second, the same number of outcomes).
    half = {"ratio": 0.5, "changes": 1, "lengthDiff": 0.0, "confidence": 1.0}
    store.save_result(run_id, 1, "textual-difference", {"status": "scored", "score": 0.5, "analysis": half})
    store.close()
    at.run()
    assert [s.value for s in at.success] == ["Completed: all 2 outcomes scored."]
    summary = next(d.value for d in at.dataframe if "n pending" in d.value.columns).set_index("scorer")
    assert summary.loc["Textual difference", "mean"] == pytest.approx((1.0 + 0.5) / 2)
    assert built == [run_id, run_id]


def test_a_run_retried_with_another_judge_names_each_judge_and_its_outcomes(open_page, studio_db: Path):
    store = Store(studio_db)
    openai = {"model": "gpt-4o-mini", "baseUrl": "https://api.openai.com/v1"}
    local = {"model": "qwen2.5", "baseUrl": "http://localhost:11434/v1"}
    run_id = store.create_run(
        dataset_name="judged.csv",
        items=[(f"q{i}", {"input": "q", "output": "x"}, {}) for i in range(4)],
        scorers=[{"id": "gluten-checker", "name": "Gluten checker", "options": {}}],
        judge=openai,
    )
    analysis = {"isGlutenFree": True, "glutenSources": []}
    store.save_result(
        run_id, 0, "gluten-checker", {"status": "scored", "score": 1.0, "analysis": analysis, "judge": openai}
    )
    store.finish_run(run_id, "completed")
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    assert [c.value for c in at.caption if c.value.startswith(f"Run {run_id}")][0].endswith("· judge gpt-4o-mini")

    # Items 1 and 2 failed and were retried with the sidebar's (local) judge; item 3 has no response,
    # so no judge was asked (its record still names the judge it would have used): not counted.
    for index in (1, 2):
        record = {"status": "scored", "score": 1.0, "analysis": analysis, "judge": local}
        store.save_result(run_id, index, "gluten-checker", record)
    record = {"status": "missing_input", "error": "no output", "judge": local}
    store.save_result(run_id, 3, "gluten-checker", record)
    store.close()
    at.run()
    (caption,) = [c.value for c in at.caption if c.value.startswith(f"Run {run_id}")]
    assert caption.endswith(
        "· judges: qwen2.5 at http://localhost:11434/v1 (2 outcomes), gpt-4o-mini at https://api.openai.com/v1 (1 outcome)"
    )


def test_the_judge_tokens_help_counts_every_request_to_the_judge_apart_from_the_replies(open_page, studio_db: Path):
    # Item 0 scored in 1 reply after 3 failed requests (4 requests); item 1 left to do after 2 failed requests,
    # kept with the run: 1 reply of 6 requests, as the call cap counts them.
    store = Store(studio_db)
    run_id = store.create_run(
        dataset_name="judged.csv",
        items=[(f"q{i}", {"input": "q", "output": "x"}, {}) for i in range(2)],
        scorers=[{"id": "gluten-checker", "name": "Gluten checker", "options": {}}],
        judge={"model": "gpt-4o-mini", "baseUrl": "https://api.openai.com/v1"},
    )
    record = {"status": "scored", "score": 1.0, "analysis": {"isGlutenFree": True, "glutenSources": []}}
    spent = {"prompt_tokens": 100, "completion_tokens": 10, "judge_calls": 1, "judge_requests": 4}
    store.save_result(run_id, 0, "gluten-checker", record | spent)
    store.finish_run(run_id, "budget_reached", "capped", left_judge_requests=2)
    store.close()
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    assert not at.exception
    tile = next(m for m in at.metric if m.label == "Judge tokens")
    assert (tile.value, tile.proto.help) == (
        "110",
        "100 prompt + 10 completion tokens in 1 judge reply, of 6 HTTP requests to the judge (failed ones and "
        "retries included, as Max judge calls counts them); cached replies cost nothing.",
    )


def test_the_judge_tokens_help_of_a_batch_api_run_counts_batch_lines(open_page, studio_db: Path):
    # A Batch API run: item 0 answered by its first line, item 1 failed after 2 lines (its first batch expired):
    # 1 reply of 3 lines sent. Before, the help called them "HTTP requests to the judge ... as Max judge calls counts
    # them" (a Batch API run takes no cap).
    store = Store(studio_db)
    run_id = store.create_run(
        dataset_name="judged.csv",
        items=[(f"q{i}", {"input": "q", "output": "x"}, {}) for i in range(2)],
        scorers=[{"id": "gluten-checker", "name": "Gluten checker", "options": {}}],
        judge={"model": "gpt-4o-mini", "baseUrl": "https://api.openai.com/v1"},
        config={"batch_api": True},
    )
    record = {"status": "scored", "score": 1.0, "analysis": {"isGlutenFree": True, "glutenSources": []}}
    spent = {"prompt_tokens": 100, "completion_tokens": 10, "judge_calls": 1, "judge_requests": 1}
    store.save_result(run_id, 0, "gluten-checker", record | spent)
    failed = {"status": "api_error", "error": "the batch expired 2 times", "judge_calls": 0, "judge_requests": 2}
    store.save_result(run_id, 1, "gluten-checker", failed)
    store.finish_run(run_id, "completed")
    store.close()
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    assert not at.exception
    tile = next(m for m in at.metric if m.label == "Judge tokens")
    assert (tile.value, tile.proto.help) == (
        "110",
        "100 prompt + 10 completion tokens in 1 judge reply, of 3 Batch API request lines sent (a line sent again "
        "after its batch expired counts again, a re-ask sent live counts one); cached replies cost nothing.",
    )


def test_the_cost_of_a_run_with_several_judges_prices_each_outcome_at_its_own_judge(open_page, studio_db: Path):
    store = Store(studio_db)
    mini = {"model": "gpt-4o-mini", "baseUrl": "https://api.openai.com/v1"}
    big = {"model": "gpt-4o", "baseUrl": "https://api.openai.com/v1"}
    local = {"model": "qwen2.5", "baseUrl": "http://localhost:11434/v1"}
    run_id = store.create_run(
        dataset_name="judged.csv",
        items=[(f"q{i}", {"input": "q", "output": "x"}, {}) for i in range(3)],
        scorers=[{"id": "gluten-checker", "name": "Gluten checker", "options": {}}],
        judge=mini,
    )
    analysis = {"isGlutenFree": True, "glutenSources": []}
    for index, judge, prompt, completion in ((0, mini, 1000, 200), (1, big, 500, 50)):
        record = {"status": "scored", "score": 1.0, "analysis": analysis, "judge": judge}
        store.save_result(
            run_id,
            index,
            "gluten-checker",
            dict(record, prompt_tokens=prompt, completion_tokens=completion, judge_calls=1),
        )
    store.finish_run(run_id, "cancelled")
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    assert not at.exception
    # Item 0 at gpt-4o-mini's list price ($0.15 / $0.60 per million): (1000 · 0.15 + 200 · 0.60) / 1e6 = 270e-6;
    # item 1 at gpt-4o's ($2.50 / $10): (500 · 2.5 + 50 · 10) / 1e6 = 1750e-6. Together $0.00202.
    # (Both at the run's first judge, gpt-4o-mini, would be (1500 · 0.15 + 250 · 0.60) / 1e6 = $0.000375.)
    assert {m.label: m.value for m in at.metric}["Cost"] == "$0.00202"

    # Item 2 judged by a local model without a price: its cost is unknown, said so, not $0 nor gpt-4o-mini's.
    record = {"status": "scored", "score": 1.0, "analysis": analysis, "judge": local}
    store.save_result(run_id, 2, "gluten-checker", dict(record, prompt_tokens=300, completion_tokens=30, judge_calls=1))
    store.close()
    at.run()
    # The tile holds the known part, whole; what is unknown is said under it (a "$0.00202 + unknown" value was cut).
    tile = next(m for m in at.metric if m.label == "Cost")
    assert (tile.value, tile.proto.delta) == ("$0.00202", "+ unknown for 1 outcome of qwen2.5")
    assert (
        "Judge cost: \\$0.00202 for 2 outcome(s) at their judges' prices, unknown for 1 outcome judged by qwen2.5 "
        "(no list price, and no price set for it)." in [c.value for c in at.caption]  # markdown-escaped
    )


def test_the_cost_of_a_run_scoring_with_a_judge_without_a_price_is_unknown_not_0(open_page, studio_db: Path):
    store = Store(studio_db)
    fake = {"model": "fake-judge", "baseUrl": "http://127.0.0.1:9/v1"}
    run_id = store.create_run(  # still running (scored elsewhere): nothing written yet, calls in flight
        dataset_name="judged.csv",
        items=[(f"q{i}", {"input": "q", "output": "x"}, {}) for i in range(3)],
        scorers=[{"id": "gluten-checker", "name": "Gluten checker", "options": {}}],
        judge=fake,
    )
    with store.transaction() as db:  # scored by a process on another host, which the page cannot check
        db.execute(sa.text("UPDATE runs SET owner = 'other-host:4242' WHERE id = :id"), {"id": run_id})
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    assert not at.exception
    # Nothing stored has spent anything, but fake-judge is scoring and has no price: never "$0.0000".
    tile = next(m for m in at.metric if m.label == "Cost")
    assert (tile.value, tile.proto.delta) == ("unknown", "for what fake-judge is scoring now")
    assert "Judge cost: unknown for what fake-judge is scoring now (no list price, and no price set for it)." in [
        c.value for c in at.caption
    ]
    # Once stopped with nothing spent, nothing is being scored: it cost nothing.
    with store.transaction() as db:  # stopped by the process on the other host (finish_run is its own runs' only)
        db.execute(sa.text("UPDATE runs SET status = 'cancelled' WHERE id = :id"), {"id": run_id})
    store.close()
    at.run()
    assert {m.label: m.value for m in at.metric}["Cost"] == "$0.00"


def test_a_completed_run_with_a_failure_offers_retry_and_no_resume(open_page, studio_db: Path):
    store = Store(studio_db)
    judge = {"model": "gpt-4o-mini", "baseUrl": "https://api.openai.com/v1"}
    run_id = store.create_run(
        dataset_name="judged.csv",
        items=[(f"q{i}", {"input": "q", "output": "x"}, {}) for i in range(2)],
        scorers=[{"id": "gluten-checker", "name": "Gluten checker", "options": {}}],
        judge=judge,
    )
    analysis = {"isGlutenFree": True, "glutenSources": []}
    store.save_result(run_id, 0, "gluten-checker", {"status": "scored", "score": 1.0, "analysis": analysis})
    store.save_result(run_id, 1, "gluten-checker", {"status": "api_error", "error": "HTTP 500", "judge": judge})
    store.finish_run(run_id, "completed")
    store.close()
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    assert not at.exception
    key = f"history_{run_id}"
    buttons = {b.key: b for b in at.button}
    # Nothing is left to resume (both items have an outcome): no "Resume (0 items left)"; item 1 can be retried.
    assert f"{key}_resume" not in buttons
    assert buttons[f"{key}_retry"].label == "Retry failed items (1)" and not buttons[f"{key}_retry"].disabled


def test_rename_and_delete_with_confirmation(open_page, studio_db: Path):
    keep = stored_td_run(studio_db, [("a", "a")], "keep.csv")
    doomed = stored_td_run(studio_db, [("b", "b")], "doomed.csv")
    at = open_page("history")
    assert at.selectbox(key="history_pick").value == doomed

    at.text_input(key=f"history_name_{doomed}").input("Renamed run").run()
    at.button(key="history_rename").click().run()
    assert not at.exception
    assert history_table(at)["name"].tolist()[0] == "Renamed run"

    at.button(key="history_delete").click().run()
    assert at.warning[0].value == (
        "Delete the run “Renamed run” with its 1 items and every result? This cannot be undone."
    )  # no baseline points at it: nothing more to say
    at.button(key="history_delete_cancel").click().run()
    assert len(history_table(at)) == 2  # "Keep it" deletes nothing

    at.button(key="history_delete").click().run()
    at.button(key="history_delete_confirm").click().run()
    assert not at.exception
    assert history_table(at)["dataset"].tolist() == ["keep.csv"]
    store = Store(studio_db)
    assert [r["id"] for r in store.list_runs()] == [keep]
    store.close()


def test_deleting_a_baselines_run_names_the_baselines_and_what_it_does_to_them(open_page, studio_db: Path):
    stored_td_run(studio_db, [("a", "a")], "other.csv")
    doomed = stored_td_run(studio_db, [("b", "b"), ("c", "c")], "doomed.csv")
    store = Store(studio_db)
    store.set_baseline("tmpbase", doomed)
    name = store.get_run(doomed)["name"]
    at = open_page("history")
    assert at.selectbox(key="history_pick").value == doomed
    at.button(key="history_delete").click().run()
    assert at.warning[0].value == (
        f"Delete the run “{name}” with its 2 items and every result? This cannot be undone.\n\n"
        "It is the current run of the baseline 'tmpbase': once it is deleted, "
        "`python -m scorers gate --baseline tmpbase` stops with an error (exit 2, the CI gate fails) until the "
        "baseline is pointed at another run (`python -m scorers baseline set tmpbase RUN_ID`)."
    )
    at.button(key="history_delete_cancel").click().run()
    # A second baseline, its name with a space: every baseline's commands, each name quoted for the shell (the
    # warning gave only the first baseline's, unquoted).
    store.set_baseline("nightly main", doomed)
    store.close()
    at.button(key="history_delete").click().run()
    assert at.warning[0].value.endswith(
        "It is the current run of the baselines 'nightly main' and 'tmpbase': once it is deleted, "
        "`python -m scorers gate --baseline 'nightly main'` and `python -m scorers gate --baseline tmpbase` stop "
        "with an error (exit 2, the CI gate fails) until each is pointed at another run "
        "(`python -m scorers baseline set 'nightly main' RUN_ID`, `python -m scorers baseline set tmpbase RUN_ID`)."
    )
    # Warned, the user may still delete it; the baselines then point at a deleted run, as the warning said.
    at.button(key="history_delete_confirm").click().run()
    assert not at.exception
    store = Store(studio_db)
    assert [r["id"] for r in store.list_runs()] != [] and doomed not in {r["id"] for r in store.list_runs()}
    assert store.baselines_at(doomed) == [
        "nightly main",
        "tmpbase",
    ]  # still there: only a new `baseline set` moves them
    store.close()


def test_stopped_run_resumes_from_history_without_repeating_judge_calls(
    open_page, studio_db: Path, fake_judge: FakeOpenAI
):
    fake_judge.responder = lambda body: Reply.json(single_analysis(1.0, 1.0, 1.0, 1.0))
    items = [EvalItem(f"q{n}", run_payload(user=f"Question number {n}")) for n in range(6)]
    scorer = create_prompt_alignment_scorer(options={"evaluation_mode": "user"}, settings=settings_for(fake_judge))
    store = Store(studio_db)
    cancel = threading.Event()
    finished: list[int] = []

    def stop_after_two(index, item, outcomes):
        finished.append(index)
        if len(finished) >= 2:
            cancel.set()

    partial = run_evals(
        items,
        [scorer],
        store=store,
        concurrency=1,
        cancel=cancel,
        on_item_complete=stop_after_two,
        dataset_name="questions.jsonl",
    )
    store.close()
    assert partial.status == "cancelled"
    done = len(partial.outcomes)
    assert 2 <= done < 6 and fake_judge.chat_call_count == done

    at = open_page("history")
    assert history_table(at)["status"].tolist() == ["Stopped"]
    assert history_table(at)["pending"].tolist() == [6 - done]
    at.button(key="history_open_button").click().run()
    key = f"history_{partial.run_id}"
    assert at.warning[0].value.startswith(f"Stopped: {done} of 6 outcomes stored, {6 - done} still to do.")
    at.button(key=f"{key}_resume").click().run()
    deadline = time.monotonic() + 30
    while jobs.get(at.session_state["job_batch"]).running:
        assert time.monotonic() < deadline
        time.sleep(0.1)
        at.run()
    at.run()
    assert not at.exception
    assert [s.value for s in at.success] == ["Completed: all 6 outcomes scored."]
    assert history_table(at)["status"].tolist() == ["Completed"]
    assert fake_judge.chat_call_count == 6  # each item judged once over both sessions
    assert fake_judge.last_api_key() == "test-key"


def test_resume_with_a_cost_cap_is_not_started_when_an_earlier_judge_has_no_price(
    open_page, studio_db: Path, fake_judge: FakeOpenAI
):
    store = Store(studio_db)
    run_id = store.create_run(
        dataset_name="judged.csv",
        items=[(f"q{i}", {"input": "q", "output": "x"}, {}) for i in range(2)],
        scorers=[{"id": "gluten-checker", "name": "Gluten checker", "options": {}}],
        judge={"model": "gpt-4o-mini", "baseUrl": fake_judge.base_url},
        config={"budget": {"max_cost_usd": 0.5}},
    )
    # Item 0 was judged by a local model (a retry with the sidebar's judge): qwen2.5 has no list price and
    # the run's price (none here) would be for its own judge only, so what the run spent is unknown.
    usage = {"promptTokens": 300, "completionTokens": 30, "calls": 1}
    local = {"model": "qwen2.5", "baseUrl": "http://localhost:11434/v1", "parameters": {}, "usage": usage}
    record = {"status": "scored", "score": 1.0, "analysis": {"isGlutenFree": True, "glutenSources": []}}
    record |= {"judge": local, "prompt_tokens": 300, "completion_tokens": 30, "judge_calls": 1}
    store.save_result(run_id, 0, "gluten-checker", record)
    store.finish_run(run_id, "cancelled")
    store.close()
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    at.button(key=f"history_{run_id}_resume").click().run()
    assert not at.exception
    (error,) = [e.value for e in at.error]
    assert error == (
        "Not started: the cost cap is \\$0.50, and the cost of what the run spent before is unknown for "
        "1 outcome judged by qwen2.5 (no list price, and no price set for it), so the cap cannot be kept. Set the "
        "cost cap to 0 (no cap), or resume with the judge of qwen2.5 and set its price per million tokens under "
        "Cost cap and price."
    )
    assert "job_batch" not in at.session_state and jobs.running_for(jobs.run_key(run_id)) is None
    assert fake_judge.chat_call_count == 0
    assert history_table(at)["status"].tolist() == ["Stopped"]


def test_a_run_link_opens_the_run_on_history_batch_and_review(open_page, studio_db: Path):
    # Two runs: the link names the older one, which no page would show first.
    linked = stored_td_run(studio_db, [("abc", "abc")], "linked.csv")
    newest = stored_td_run(studio_db, [("x", "y")], "newest.csv")
    for page, shown in (("history", "history_pick"), ("review", "review_run")):
        at = open_page(page)
        assert at.selectbox(key=shown).value == newest
        at.query_params["run"] = linked
        at.run()
        assert not at.exception
        assert at.selectbox(key=shown).value == linked
        assert at.query_params["run"] == [linked] or at.query_params["run"] == linked
    # History opened it: its results view is on screen.
    at = open_page("history")
    at.query_params["run"] = linked
    at.run()
    assert [s.value for s in at.success] == ["Completed: all 1 outcomes scored."]
    at = open_page("batch")
    at.query_params["run"] = linked
    at.run()
    assert at.session_state["batch_run_id"] == linked


def test_a_link_to_a_missing_run_says_so_on_every_page(open_page, studio_db: Path):
    # A link to a run not in the store (deleted, mistyped): each page says so at the top, and none
    # lets another run pass for the linked one: Review names the run it shows instead.
    newest = stored_td_run(studio_db, [("x", "y")], "newest.csv")
    store = Store(studio_db)
    name = store.get_run(newest)["name"]
    store.close()
    instead = {
        "history": "no run is opened: choose one below and press Open.",
        "batch": "no stored run is shown: open one from History.",
        "compare": "no run is picked: choose one in the Comparison or Run vs run tab.",
        "review": f"showing run {name} ({newest}) instead: choose another below.",
    }
    for page, shown in instead.items():
        at = open_page(page)
        at.query_params["run"] = "deadbeef0000"
        at.run()
        assert not at.exception, page
        assert at.error[0].value == f"No run deadbeef0000 in this store (it may have been deleted); {shown}"
        if page == "history":  # nothing opened: no run's results on screen
            assert not at.session_state["history_open"] if "history_open" in at.session_state else True
            assert not at.success
        if page == "batch":
            assert "batch_run_id" not in at.session_state or not at.session_state["batch_run_id"]


def _paged_rows() -> None:
    import pandas as pd
    import streamlit as st

    from dashboard.run_explorer import page_of

    rows = pd.DataFrame({"n": range(st.session_state.get("n_rows", 120))})
    page, start = page_of(rows, "rows_page")
    st.write(f"start {start}, first {page['n'].iloc[0]}, last {page['n'].iloc[-1]}, shown {len(page)}")


def test_the_page_box_shows_one_page_of_rows_and_goes_back_to_the_first_when_the_rows_shrink():
    at = AppTest.from_function(_paged_rows).run()
    # 120 rows at 50 a page: 3 pages; page 1 is rows 0-49.
    assert at.number_input(key="rows_page").label == "Page (of 3)"
    assert at.markdown[0].value == "start 0, first 0, last 49, shown 50"
    at.number_input(key="rows_page").set_value(3).run()
    assert at.markdown[0].value == "start 100, first 100, last 119, shown 20"  # 120 - 100 = 20 rows left
    at.session_state["n_rows"] = 60  # now 2 pages: page 3 is gone, back to page 1
    at.run()
    assert at.number_input(key="rows_page").label == "Page (of 2)"
    assert at.markdown[0].value == "start 0, first 0, last 49, shown 50"


def test_a_resume_with_another_judge_stores_the_price_and_cap_it_is_given(
    open_page, studio_db: Path, fake_judge: FakeOpenAI
):
    store = Store(studio_db)
    own = {"model": "model-a", "baseUrl": "http://127.0.0.1:9/v1"}
    run_id = store.create_run(
        dataset_name="judged.csv",
        items=[(f"q{i}", {"input": "q", "output": "x"}, {}) for i in range(2)],
        scorers=[{"id": "gluten-checker", "name": "Gluten checker", "options": {}}],
        judge=own,
        config={"price": [1.0, 2.0], "budget": {"max_cost_usd": 1.0}},
    )
    record = {"status": "scored", "score": 1.0, "analysis": {"isGlutenFree": True, "glutenSources": []}}
    made = dict(own, parameters={}, usage={"promptTokens": 100, "completionTokens": 10, "calls": 1})
    store.save_result(run_id, 0, "gluten-checker", dict(record, judge=made, prompt_tokens=100, completion_tokens=10))
    store.finish_run(run_id, "cancelled")
    store.close()
    fake_judge.responder = lambda body: Reply.json(
        {"isGlutenFree": True, "glutenSources": []}, usage={"prompt_tokens": 200, "completion_tokens": 20}
    )
    at = open_page("history")
    at.sidebar.text_input(key="judge_model").set_value("model-b").run()
    at.button(key="history_open_button").click().run()
    # The stored cost: model-a's outcome at the run's price, (100 × 1 + 10 × 2) / 1e6 = $0.00012.
    assert {m.label: m.value for m in at.metric}["Cost"] == "$0.00012"
    key = f"history_{run_id}"
    at.radio(key=f"{key}_which_judge").set_value("with the sidebar's judge").run()
    # The resume's fields: the run's cap, and model-b's price (none recorded: the list price).
    prefix = f"{key}_resume_model-b"
    assert at.number_input(key=f"{prefix}_max_cost").value == 1.0
    assert at.number_input(key=f"{prefix}_price_in").value is None
    # model-b has no list price, so the run's cost cap could not be kept: said, nothing started.
    at.button(key=f"{key}_resume").click().run()
    assert [e.value for e in at.error] == [
        "Not started: the cost cap is \\$1.00, and model-b has no list price and no price set for it in this run, "
        "so the cap cannot be kept. Set its price per million tokens under Cost cap and price, or set the cost cap "
        "to 0 (no cap)."
    ]
    assert fake_judge.chat_call_count == 0
    # With model-b's price ($3 / $4 per million tokens) and a cap of $2, the resume stores both and runs.
    at.number_input(key=f"{prefix}_price_in").set_value(3.0)
    at.number_input(key=f"{prefix}_price_out").set_value(4.0)
    at.number_input(key=f"{prefix}_max_cost").set_value(2.0).run()
    at.button(key=f"{key}_resume").click().run()
    deadline = time.monotonic() + 30
    while jobs.get(at.session_state["job_batch"]).running:
        assert time.monotonic() < deadline
        time.sleep(0.1)
        at.run()
    at.run()
    assert not at.exception and fake_judge.chat_call_count == 1
    config = Store(studio_db).get_run(run_id)["config"]
    assert config["price"] == [1.0, 2.0] and config["prices"] == {"model-b": [3.0, 4.0]}
    assert config["budget"]["max_cost_usd"] == 2.0
    # model-a's outcome $0.00012, model-b's at its stored price: (200 × 3 + 20 × 4) / 1e6 = $0.00068; $0.0008 in all.
    assert {m.label: m.value for m in at.metric}["Cost"] == "$0.0008"


def test_a_run_being_scored_says_its_stored_outcomes_in_the_units_of_its_progress():
    def page():
        from dashboard.run_view import _render_status

        _render_status({"id": "r1", "status": "running", "n_items": 541}, 1082, 0, 0, True)

    at = AppTest.from_function(page).run()
    # 541 items × 2 scorers = 1,082 outcomes: the progress bar counts items, the view stored outcomes.
    assert [i.value for i in at.info] == [
        "Being scored now by another process (e.g. the command line): the progress bar counts items as they "
        "finish; the results below are the outcomes stored when this view was drawn (0 of 1,082: 541 items × 2 "
        "scorers, written in batches), and everything once the run ends."
    ]


def test_a_long_response_in_the_drill_down_is_cut_with_its_length_a_toggle_and_a_download(open_page, studio_db: Path):
    # 20,000 "a", then "TAIL", then 9,996 "b": 30,000 characters, of which the first 20,000 are shown
    # (the text block; the word diff of the textual-difference outcome below it has its words in spans).
    long = "a" * 20_000 + "TAIL" + "b" * 9_996
    run_id = stored_td_run(studio_db, [(long, "ref"), ("short", "ref")])
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    key = f"history_{run_id}"
    open_tab(at, key, "Rows and drill-down")
    at.selectbox(key=f"{key}_item").set_value(0).run()
    assert not at.exception
    texts = f"{key}_texts_0"
    blocks = [h.proto.body for h in at.get("html") if "aaaa" in h.proto.body and "<span" not in h.proto.body]
    assert len(blocks) == 1 and blocks[0].endswith(">" + "a" * 20_000 + "</div>") and "TAIL" not in blocks[0]
    assert "The first 20,000 of 30,000 characters: the rest is not shown." in [c.value for c in at.caption]
    # The word diff of the textual-difference outcome holds both texts whole: drawn only when asked.
    assert not [h for h in at.get("html") if "<span" in h.proto.body]
    assert "A text is longer than 20,000 characters: its diff is drawn when asked." in [c.value for c in at.caption]
    diff_toggle = at.toggle(key=f"{key}_drill_textual-difference_diff_long")
    assert diff_toggle.label == "Show the diff of the whole texts (3 and 30,000 characters)"
    diff_toggle.set_value(True).run()
    assert [h for h in at.get("html") if "<span" in h.proto.body and "TAIL" in h.proto.body]
    download = next(b for b in at.get("download_button") if b.proto.id and f"{texts}_output_download" in b.proto.id)
    assert download.proto.label == "Download all 30,000 characters"
    at.toggle(key=f"{texts}_output").set_value(True).run()
    blocks = [h.proto.body for h in at.get("html") if "aaaa" in h.proto.body and "<span" not in h.proto.body]
    assert len(blocks) == 1 and blocks[0].endswith(">" + long + "</div>")
    # A short text is shown whole, with no toggle.
    at.selectbox(key=f"{key}_item").set_value(1).run()
    assert any(h.proto.body.endswith(">short</div>") for h in at.get("html"))
    assert not [t for t in at.toggle if t.key.startswith(f"{key}_texts_1")]


def test_the_same_mean_reads_the_same_digits_in_history_the_cli_and_the_gate(open_page, studio_db: Path):
    import io

    from dashboard.batch import runs_table, runs_table_styler
    from scorers.cli import main
    from scorers.core.errors import ScoreStatus

    # Two items scored 0.689 and 0.7: mean (0.689 + 0.7) / 2 = 0.6945 by hand, 0.695 at 3 decimals (half away
    # from zero). In floats the mean is 0.6944999999999999, which f"{:.3f}" (and the browser's toFixed) wrote 0.694.
    store = Store(studio_db)
    try:
        run_ids = []
        for name in ("base", "cand"):
            run_id = store.create_run(
                dataset_name="d.csv",
                items=[(f"q{i}", {"input": "q", "output": "a"}, {}) for i in range(2)],
                name=name,
                scorers=[{"id": "textual-difference", "name": "Textual difference", "options": {}}],
                judge=None,
            )
            for i, score in enumerate([0.689, 0.7]):
                store.save_result(run_id, i, "textual-difference", {"status": ScoreStatus.SCORED.value, "score": score})
            store.finish_run(run_id, "completed")
            run_ids.append(run_id)
        listed = runs_table(store.list_runs())
    finally:
        store.close()
    # History's run list (its Styler writes the shown text).
    assert "0.695" in runs_table_styler(listed).to_html() and "0.694" not in runs_table_styler(listed).to_html()
    # History's Summary: the grid's %.3f is applied in the browser, so the value it gets is already rounded.
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    assert not at.exception
    aggregates = next(d.value for d in at.dataframe if "n pending" in d.value.columns).set_index("scorer")
    assert aggregates.loc["Textual difference", "mean"] == 0.695
    # The CLI's run list and the gate's summary.
    out = io.StringIO()
    assert main(["runs", "--db", str(studio_db)], stdout=out, stderr=io.StringIO()) == 0
    assert out.getvalue().count("textual-difference: mean 0.695,") == 2
    out = io.StringIO()
    main(["gate", "--baseline", run_ids[0], "--candidate", run_ids[1], "--db", str(studio_db)], stdout=out)
    assert "| 0.695 | 0.695 |" in out.getvalue() and "0.694" not in out.getvalue()


def test_a_run_whose_process_died_while_the_dashboard_ran_is_shown_interrupted_and_can_be_resumed_and_deleted(
    open_page, studio_db: Path
):
    at = open_page("history")  # the dashboard is up before the run's process dies
    store = Store(studio_db)
    run_id = store.create_run(
        dataset_name="big.csv",
        items=[(f"q{i}", {"input": "q", "output": f"answer {i}", "ground_truth": "answer"}, {}) for i in range(3)],
        scorers=[{"id": "textual-difference", "name": "Textual difference", "options": {}}],
        judge=None,
    )
    dead = subprocess.Popen([sys.executable, "-c", "pass"])  # e.g. a CLI run, `kill -9`ed
    dead.wait()
    owner = f"{socket.gethostname()}:{dead.pid}"
    with store.transaction() as db:
        db.execute(sa.text("UPDATE runs SET owner = :owner WHERE id = :id"), {"owner": owner, "id": run_id})
    at.run()
    at.button(key="history_open_button").click().run()
    assert not at.exception
    run = store.get_run(run_id)
    assert (run["status"], run["stop_reason"]) == (
        "interrupted",
        f"The process scoring it ({owner}) is no longer running.",
    )
    assert not any(i.value.startswith("Being scored now") for i in at.info)
    assert not at.button(key="history_delete").disabled
    at.button(key=f"history_{run_id}_resume").click().run()
    job = jobs.get(at.session_state["job_batch"])
    job.join(30)
    at.run()
    assert store.get_run(run_id)["status"] == "completed" and len(store.results(run_id)) == 3
    store.close()


def test_statuses_read_as_words_in_the_list_the_picker_the_filter_and_the_rows(open_page, studio_db: Path):
    # A run paused at its budget, one of whose rows has no response (missing_input): History writes both statuses
    # in words, the run's in a few (its full wording in the column's and the picker's help), not as code names.
    items = td_items([("abc", "abc")]) + [EvalItem("row1", {"input": "q", "ground_truth": "x"}, {})]
    store = Store(studio_db)
    run_id = run_evals(items, [create_textual_difference_scorer()], store=store).run_id
    with store.transaction() as db:  # finished: finish_run records only a running run
        db.execute(
            sa.text("UPDATE runs SET status = 'budget_reached', stop_reason = 'Stopped at the budget.' WHERE id = :id"),
            {"id": run_id},
        )
    store.close()
    at = open_page("history")
    assert history_table(at)["status"].tolist() == ["Paused at the budget cap"]
    (grid,) = [d for d in at.dataframe if "status" in d.value.columns and "dataset" in d.value.columns]
    status_column = json.loads(grid.proto.columns)["status"]
    assert (
        "Paused at the budget cap: Paused at the budget cap (the next judge call could have passed it)"
        in (status_column["help"])
    )
    assert status_column["width"] == "medium"
    assert at.selectbox(key="history_pick").options[0].endswith(f" · Paused at the budget cap · {run_id}")
    at.button(key="history_open_button").click().run()
    key = f"history_{run_id}"
    open_tab(at, key, "Rows and drill-down")
    rows = next(d for d in at.dataframe if d.key == f"{key}_table").value
    assert rows["status"].tolist() == ["Scored", "Missing input"]
    options = at.multiselect(key=f"{key}_f_status").options
    assert "Missing input" in options and "Judge output invalid" in options and "missing_input" not in options


def test_the_drill_down_shows_a_tool_call_and_its_result_as_context_turns(open_page, studio_db: Path):
    # The tool's "18C" is not the user's request: the input is the user turn only, the tool turns are shown
    # under their roles with the call and its id (before: the row was invalid_input, the call dropped).
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}
    turns = [
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "18C"},
    ]
    store = Store(studio_db)
    item = EvalItem("chat", {"input": turns, "output": {"role": "assistant", "content": "It is 18C in Oslo."}})
    run_id = run_evals([item], [create_textual_difference_scorer()], store=store, dataset_name="chat.jsonl").run_id
    assert [r["status"] for r in store.results(run_id)] == ["scored"]
    store.close()
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    key = f"history_{run_id}"
    open_tab(at, key, "Rows and drill-down")
    at.selectbox(key=f"{key}_item").set_value(0).run()
    assert not at.exception
    labels = [m.value for m in at.markdown]
    start = labels.index("**Conversation** (the turns before the response, as the judge was shown them)")
    assert labels[start + 1 : start + 4] == ["*User*", "*Assistant*", "*Tool*"]
    bodies = [h.proto.body for h in at.get("html")]
    assert any(b.endswith('>tool call (call_1): get_weather({"city": "Oslo"})</div>') for b in bodies)
    assert any(b.endswith(">tool result (call call_1):\n18C</div>") for b in bodies)


def test_the_rows_table_gets_each_score_rounded_half_up_as_the_drill_down_writes_it(open_page, studio_db: Path):
    from scorers.core.errors import ScoreStatus

    # A score of (0.689 + 0.7) / 2: 0.6945 by hand, 0.695 at 3 decimals (half away from zero); the float is
    # 0.6944999999999999, which the grid's %.3f (the browser's toFixed) would write 0.694.
    store = Store(studio_db)
    run_id = store.create_run(
        dataset_name="d.csv",
        items=[("q0", {"input": "q", "output": "a"}, {})],
        scorers=[{"id": "textual-difference", "name": "Textual difference", "options": {}}],
        judge=None,
    )
    store.save_result(run_id, 0, "textual-difference", {"status": ScoreStatus.SCORED.value, "score": (0.689 + 0.7) / 2})
    store.finish_run(run_id, "completed")
    store.close()
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    key = f"history_{run_id}"
    open_tab(at, key, "Rows and drill-down")
    assert not at.exception
    (grid,) = [d for d in at.dataframe if d.key == f"{key}_table"]
    assert grid.value["score"].tolist() == [0.695]


def test_the_rows_table_leaves_an_empty_error_or_reason_empty_and_shows_a_missing_value_as_a_dash(
    open_page, studio_db: Path
):
    # Item "a" is scored ("abc" vs "abc" → 1: no error); item "b" has no response: missing_input, so no
    # score, no reason and no dimensions (its error says why).
    items = [
        EvalItem("a", {"input": "q", "output": {"text": "abc"}, "ground_truth": "abc"}, {}),
        EvalItem("b", {"input": "q", "ground_truth": "abc"}, {}),
    ]
    store = Store(studio_db)
    run_id = run_evals(items, [create_textual_difference_scorer()], store=store).run_id
    store.close()
    at = open_page("history")
    at.button(key="history_open_button").click().run()
    key = f"history_{run_id}"
    open_tab(at, key, "Rows and drill-down")
    (grid,) = [d for d in at.dataframe if d.key == f"{key}_table"]
    rows = grid.value.set_index("item_id")
    assert rows.loc["a", "score"] == 1.0 and rows.loc["a", "error"] == ""  # scored: an empty error cell
    assert rows.loc["b", "status"] == "Missing input" and rows.loc["b", "error"].startswith("output")
    assert rows.loc["b", "reason"] == ""  # not scored: no reason, an empty cell
    # Missing values (b's score and output) are shown as the grid's placeholder, "—" as the caption says,
    # never the grid's default "None", which reads like the text "None".
    assert pd.isna(rows.loc["b", "score"]) and pd.isna(rows.loc["b", "output"])
    assert grid.proto.placeholder == "—"
    assert any('"—": no value (a row not scored has no score' in c.value for c in at.caption)
