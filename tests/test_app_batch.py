"""AppTest tests of the Batch page (no network: the judge is the fake OpenAI server, the store a temp file).

The page scores in a background thread; a test presses Run, then reruns the script
until the session's job has finished, as the page's one-second refresh would.
"""

from __future__ import annotations

import io
import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fake_openai import FakeOpenAI, Reply
from judge_data import dimension_set, single_analysis
from streamlit.runtime.download_data_util import convert_data_to_bytes_and_infer_mime
from streamlit.testing.v1 import AppTest

from dashboard import run_explorer
from scorers import SCORERS, Store, load_run
from scorers.runs import jobs

# Four rows: a has a system message (prompt alignment in both mode), b's response is a
# spreadsheet formula, c's response is empty (prompt alignment: invalid input), d is plain.
CSV = (
    b"id,system,prompt,response,reference,variant\n"
    b"a,Answer with a digit.,What is 2+2?,4,4,A\n"
    b"b,,Write the formula that adds one and one.,=1+1,=1+2,A\n"
    b"c,,Say hi.,,hi,B\n"
    b"d,,Say bye.,bye,bye,B\n"
)

BOTH = {
    "user": dimension_set(1.0, 1.0, 1.0, 1.0),
    "system": dimension_set(0.5, 0.5, 0.5, 0.5),
    "overallAssessment": "Right answer; the system rule is half followed.",
}
USER = single_analysis(0.9, 0.8, 0.7, 1.0)
# Hand-computed from SPEC §1.1:
#   both (row a): U = 1, S = 0.35·0.5 + 0.35·0.5 + 0.15·0.5 + 0.15·0.5 = 0.5 → 0.7·1 + 0.3·0.5 = 0.85
#   user (rows b, d): 0.40·0.9 + 0.30·0.8 + 0.20·0.7 + 0.10·1.0 = 0.84
PA_SCORES = {"a": 0.85, "b": 0.84, "d": 0.84}
# Textual difference (SPEC §1.2): a "4" = "4" → 1; b "=1+2" vs "=1+1": LCS "=1+" = 3 → 2·3/8 = 0.75,
# equal lengths → 0.75; c "hi" vs "" → 0; d "bye" = "bye" → 1.
TD_SCORES = {"a": 1.0, "b": 0.75, "c": 0.0, "d": 1.0}


def judge(body: dict[str, Any]) -> Reply:
    """Answer by the requested schema: the both-mode analysis or a single-mode one."""
    name = body.get("response_format", {}).get("json_schema", {}).get("name")
    return Reply.json(BOTH if name == "prompt_alignment_both" else USER)


@pytest.fixture
def exports(monkeypatch: pytest.MonkeyPatch) -> dict[str, Callable[[], io.BytesIO]]:
    """The file behind every export button, by format, as Streamlit serves it when the button is clicked.

    AppTest cannot click a download: each deferred writer is called through Streamlit's own conversion
    (the one its media file manager applies), which refuses what a browser download could not get.
    """
    built: dict[str, Callable[[], io.BytesIO]] = {}
    original = run_explorer._export_writer

    def record(table, fmt):
        writer = original(table, fmt)
        built[fmt] = lambda: io.BytesIO(convert_data_to_bytes_and_infer_mime(writer(), TypeError(fmt))[0])
        return writer

    monkeypatch.setattr(run_explorer, "_export_writer", record)
    return built


def upload(at: AppTest, name: str, data: bytes) -> None:
    at.file_uploader(key="batch_upload").upload(name, data, "text/plain")
    at.run()
    assert not at.exception


def wait_for_job(at: AppTest, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while jobs.get(at.session_state["job_batch"]).running:
        assert time.monotonic() < deadline, "the batch run did not finish"
        time.sleep(0.1)
        at.run()
    at.run()  # the run that sees the job ended draws the final results;
    at.run()  # one more, so no view is left from the last in-progress snapshot
    assert not at.exception


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def open_tab(at: AppTest, key: str, label: str) -> None:
    """Open a tab of a run's results, as a click on it does (only the open tab's body runs)."""
    at.session_state[f"{key}_tab"] = label
    at.run()
    assert not at.exception


def chart_keys(at: AppTest) -> list[str]:
    return [c.key for c in at.get("plotly_chart")]


def table_of(at: AppTest, key_suffix: str):
    """The selectable table whose key ends with ``key_suffix``."""
    (frame,) = [d for d in at.dataframe if d.key and d.key.endswith(key_suffix)]
    return frame.value


def table_with(at: AppTest, column: str):
    """The first table that has ``column`` (read-only tables carry no key)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_page_renders_and_lists_the_sample_datasets(open_page):
    at = open_page("batch")
    assert at.title[0].value == "Batch"
    assert at.radio(key="batch_source").options == ["Upload a file", "Sample dataset"]
    at.radio(key="batch_source").set_value("Sample dataset").run()
    assert at.selectbox(key="batch_sample").options == ["examples.csv", "examples.jsonl"]
    assert "examples.csv: 34 rows loaded, 9 columns (csv)." in [c.value for c in at.caption]
    # guess_columns picks the defaults; every scorer of the registry is offered.
    token = [s.key for s in at.selectbox if s.key and s.key.startswith("batch_map_input_")][0].rsplit("_", 1)[1]
    assert at.selectbox(key=f"batch_map_input_{token}").value == "prompt"
    assert at.selectbox(key=f"batch_map_output_{token}").value == "response"
    assert at.selectbox(key=f"batch_map_system_{token}").value is None  # a bare "system" name is not guessed
    assert at.selectbox(key=f"batch_map_ground_truth_{token}").value == "ground_truth"
    assert at.selectbox(key=f"batch_map_id_{token}").value == "id"
    assert at.multiselect(key="batch_scorers").options == [spec.name for spec in SCORERS.values()]
    assert at.multiselect(key="batch_scorers").value == ["prompt-alignment", "textual-difference"]
    # Without a judge configured, prompt alignment cannot run: the page says how to fix it.
    assert "No API key for the judge" in at.error[0].value
    assert at.button(key="batch_run").disabled


def test_sample_dataset_textual_difference_runs_without_a_judge(open_page, studio_db: Path):
    at = open_page("batch")
    at.radio(key="batch_source").set_value("Sample dataset").run()
    at.multiselect(key="batch_scorers").set_value(["textual-difference"]).run()
    # Most samples have no ground truth: compare every response with its prompt, chosen explicitly.
    at.selectbox(key="batch_opt_textual-difference_target").set_value("input").run()
    assert not at.error
    assert metrics(at)["Judge calls (est.)"] == "0"
    assert metrics(at)["Cost (est.)"] == "$0 (no judge)"
    at.button(key="batch_run").click().run()
    wait_for_job(at)

    assert metrics(at)["Outcomes scored"] == "34"
    assert metrics(at)["Cost"] == "—"
    assert [s.value for s in at.success] == ["Completed: all 34 outcomes scored."]
    run_id = at.session_state["batch_run_id"]
    open_tab(at, f"batch_{run_id}", "Distributions")
    assert {
        f"batch_{run_id}_hist_textual-difference",
        f"batch_{run_id}_box_textual-difference",
        f"batch_{run_id}_dims_textual-difference",
        f"batch_{run_id}_heat_textual-difference",
    } <= set(chart_keys(at))
    store = Store(studio_db)
    run, _, result = load_run(store, run_id)
    assert run["dataset_name"] == "examples.csv" and run["status"] == "completed"
    assert len(result.outcomes) == 34
    store.close()


def test_results_of_an_earlier_dataset_say_so_once_another_is_picked(open_page):
    at = open_page("batch")
    at.radio(key="batch_source").set_value("Sample dataset").run()
    at.multiselect(key="batch_scorers").set_value(["textual-difference"]).run()
    at.selectbox(key="batch_opt_textual-difference_target").set_value("input").run()
    at.button(key="batch_run").click().run()
    wait_for_job(at)
    first = at.session_state["batch_run_id"]

    def results_notes() -> list[str]:
        return [i.value for i in at.info if i.value.startswith("These are the results of run")]

    assert not results_notes()  # the results are of the dataset on screen

    at.selectbox(key="batch_sample").set_value("examples.jsonl").run()
    # The previous run's results stay in view, labelled as not being the new dataset's.
    assert at.session_state["batch_run_id"] == first
    assert results_notes() == [
        f"These are the results of run {first}, not of examples.jsonl chosen above: press Run to score it."
    ]
    at.button(key="batch_run").click().run()
    wait_for_job(at)
    assert at.session_state["batch_run_id"] != first
    assert not results_notes()


def test_the_estimate_leaves_out_a_prompt_longer_than_the_judges_window(open_page, fake_judge: FakeOpenAI):
    at = open_page("batch")
    # gpt-4o-mini's window is 128,000 tokens; 600,000 characters are 150,000 tokens at 4 characters a token.
    upload(at, "long.csv", b"prompt,response\nSay hi.,hi\nSay hi.," + b"word " * 120_000 + b"\n")
    at.multiselect(key="batch_scorers").set_value(["prompt-alignment"]).run()
    assert metrics(at)["Judge calls (est.)"] == "1"
    assert [w.value for w in at.warning] == [
        "1 outcome(s) have a judge prompt longer than the model's context window: they will not be sent, and are "
        "stored as not scored (Too long for the judge's context), not counted above. Shorten the texts (Longest response to send), "
        "or choose a model with a larger window."
    ]
    assert fake_judge.chat_call_count == 0


def test_a_column_mapped_to_two_roles_is_warned_about(open_page):
    at = open_page("batch")
    upload(at, "small.csv", CSV)
    token = [s.key for s in at.selectbox if s.key and s.key.startswith("batch_map_input_")][0].rsplit("_", 1)[1]
    assert not [w for w in at.warning if "is used as the" in w.value]
    # A column named "system" is never guessed: the page says it is not used, and how to use it.
    assert [i.value for i in at.info] == [
        "Column 'system' is not used: a column of that name is never taken as the system message, as it often "
        "names the system under test. If it holds the system prompt, choose it under System message."
    ]
    at.selectbox(key=f"batch_map_system_{token}").set_value("system").run()
    assert not at.info
    at.selectbox(key=f"batch_map_output_{token}").set_value("prompt").run()
    assert [w.value for w in at.warning if "is used as the" in w.value] == [
        "Column 'prompt' is used as the user prompt and as the response. Each role usually needs its own column: "
        "check the choices above."
    ]


def test_blank_responses_are_announced_before_the_run_whichever_scorer_meets_them(open_page):
    at = open_page("batch")
    upload(at, "small.csv", CSV)  # row c's response is empty
    at.multiselect(key="batch_scorers").set_value(["prompt-alignment"]).run()
    # Prompt alignment alone does not score row c (missing_input): said before the run too (it said nothing).
    assert [w.value for w in at.warning if "blank response" in w.value] == [
        "1 row has a blank response. Prompt alignment will not score them (not scored: Missing input). If these "
        "rows have no answer rather than an empty one, leave them out of the file."
    ]
    at.multiselect(key="batch_scorers").set_value(["prompt-alignment", "textual-difference"]).run()
    assert [w.value for w in at.warning if "blank response" in w.value] == [
        "1 row has a blank response. Textual difference scores each 0 by its formula (an empty text against a "
        "non-empty one is 0), and those 0s count in its mean. Prompt alignment will not score them (not scored: "
        "Missing input). If these rows have no answer rather than an empty one, leave them out of the file."
    ]
    # With a blank ground truth too, textual difference does not score the row either (its target is blank).
    token = [s.key for s in at.selectbox if s.key and s.key.startswith("batch_map_input_")][0].rsplit("_", 1)[1]
    at.selectbox(key=f"batch_map_ground_truth_{token}").set_value("response").run()
    assert [w.value for w in at.warning if "blank response" in w.value] == [
        "1 row has a blank response. Prompt alignment, Textual difference will not score them (not scored: Missing "
        "input). If these rows have no answer rather than an empty one, leave them out of the file."
    ]


def test_uploaded_csv_with_prompt_alignment_and_textual_difference(
    open_page, fake_judge: FakeOpenAI, studio_db: Path, exports: dict[str, Callable[[], io.BytesIO]]
):
    fake_judge.responder = judge
    at = open_page("batch")
    upload(at, "small.csv", CSV)
    assert "small.csv: 4 rows loaded, 6 columns (csv)." in [c.value for c in at.caption]

    token = [s.key for s in at.selectbox if s.key and s.key.startswith("batch_map_input_")][0].rsplit("_", 1)[1]
    assert at.selectbox(key=f"batch_map_ground_truth_{token}").value == "reference"
    at.selectbox(key=f"batch_map_system_{token}").set_value("system").run()
    at.multiselect(key=f"batch_groups_{token}").set_value(["variant"]).run()
    preview = at.dataframe[0].value
    assert list(preview.columns) == [
        "User prompt",
        "Response",
        "System message",
        "Ground truth",
        "Row id",
        "Group: variant",
    ]
    assert preview["Response"].tolist() == ["4", "=1+1", "", "bye"]

    # The estimate: one judge call per item that can be judged (c has no response).
    assert metrics(at)["Items"] == "4"
    assert metrics(at)["Judge calls (est.)"] == "3"
    assert metrics(at)["Cost (est.)"].startswith("$")
    assert not at.error
    at.number_input(key="batch_concurrency").set_value(2).run()
    at.text_input(key="batch_run_name").input("Small check").run()
    at.button(key="batch_run").click().run()
    wait_for_job(at)

    assert fake_judge.chat_call_count == 3
    run_id = at.session_state["batch_run_id"]
    key = f"batch_{run_id}"
    assert at.subheader[0].value == "Small check"
    assert metrics(at)["Outcomes scored"] == "7"
    assert metrics(at)["Not scored"] == "1"
    assert any(w.value.startswith("Completed with 1 outcome(s) not scored") for w in at.warning)

    # Grouped by a column named "variant", the run is a run of variants: its Summary has a row per variant and
    # scorer, never one mean over the variants' responses (A: items a and b; B: items c and d).
    aggregates = table_with(at, "n pending").set_index(["variant", "scorer"])
    pa_a, pa_b = aggregates.loc[("A", "Prompt alignment")], aggregates.loc[("B", "Prompt alignment")]
    # A: (0.85 + 0.84) / 2 = 0.845; B: d's 0.84 alone, c's failure counted apart, never a 0.
    assert (pa_a["mean"], pa_a["n scored"], pa_a["n not scored"], pa_a["n pending"]) == (0.845, 2, 0, 0)
    assert (pa_a["min"], pa_a["max"]) == (0.84, 0.85)
    assert (pa_b["mean"], pa_b["n scored"], pa_b["n not scored"], pa_b["n pending"]) == (0.84, 1, 1, 0)
    td_a = aggregates.loc[("A", "Textual difference (vs ground truth)")]
    td_b = aggregates.loc[("B", "Textual difference (vs ground truth)")]
    assert td_a["mean"] == 0.875  # (1 + 0.75) / 2
    assert td_b["mean"] == 0.5  # (0 + 1) / 2: c's empty response against "hi" is 0 by the formula
    assert td_a["median"] == pytest.approx((0.75 + 1.0) / 2)

    open_tab(at, key, "Distributions")
    hist = [c for c in at.get("plotly_chart") if c.key == f"{key}_hist_prompt-alignment"][0]
    bars = json.loads(hist.proto.spec)["data"][0]
    # 20 bins of 0.05 over 0..1: 0.84, 0.84 in [0.80, 0.85), 0.85 in [0.85, 0.90); the failure is not counted.
    assert sum(bars["y"]) == 3 and bars["y"][16] == 2 and bars["y"][17] == 1
    # One scorer's charts at a time (the first, then the one chosen), with the status and group charts.
    for sid, other in (("prompt-alignment", "textual-difference"), ("textual-difference", "prompt-alignment")):
        at.session_state[f"{key}_chart_scorer"] = sid
        at.run()
        charts = set(chart_keys(at))
        assert {f"{key}_hist_{sid}", f"{key}_box_{sid}", f"{key}_dims_{sid}", f"{key}_heat_{sid}"} <= charts
        assert not [c for c in charts if c.endswith(other)]
        assert {f"{key}_status", f"{key}_group_variant"} <= charts

    # Rows: one per item × scorer, status and error in their own columns.
    open_tab(at, key, "Rows and drill-down")
    rows = table_of(at, "_table")
    assert len(rows) == 8
    failed = rows[rows["status"] == "Missing input"].iloc[0]
    assert (failed["item_id"], failed["scorer"]) == ("c", "Prompt alignment")  # as the filter and charts name it
    assert "output, which is blank" in failed["error"]
    at.multiselect(key=f"{key}_f_status").set_value(["missing_input"]).run()
    assert table_of(at, "_table")["item_id"].tolist() == ["c"]
    at.multiselect(key=f"{key}_f_status").set_value(["scored", "missing_input"]).run()
    at.text_input(key=f"{key}_f_search").input("=1+").run()
    assert table_of(at, "_table")["item_id"].tolist() == ["b", "b"]
    at.text_input(key=f"{key}_f_search").input("").run()
    at.multiselect(key=f"{key}_f_scorer").set_value(["textual-difference"]).run()
    at.slider(key=f"{key}_f_score").set_value((0.5, 0.9)).run()
    assert table_of(at, "_table")["item_id"].tolist() == ["b"]

    # Drill-down: the Evaluate page's breakdown for every scorer of the chosen item.
    at.slider(key=f"{key}_f_score").set_value((0.0, 1.0)).run()
    at.multiselect(key=f"{key}_f_scorer").set_value(["prompt-alignment", "textual-difference"]).run()
    assert at.selectbox(key=f"{key}_item").value is None  # no detail is built before a row is opened
    assert f"{key}_drill_prompt-alignment_gauge" not in set(chart_keys(at))
    at.selectbox(key=f"{key}_item").set_value(0).run()
    assert not at.exception
    assert metrics(at)["Prompt alignment (0–1)"] == "0.850"
    assert metrics(at)["System score (0–1, weight 30%)"] == "0.500"
    assert metrics(at)["Ratio"] == "1.000"
    assert {f"{key}_drill_prompt-alignment_gauge", f"{key}_drill_textual-difference_textual_difference"} <= set(
        chart_keys(at)
    )
    at.selectbox(key=f"{key}_item").set_value(2).run()
    assert any(e.value.startswith("Not scored (Missing input)") for e in at.error)

    # Reruns and widget changes never call the judge again.
    assert fake_judge.chat_call_count == 3

    # Nothing to retry: c's missing input would come out the same (test_runner and test_dashboard_batch
    # retry outcomes the judge failed on), so neither Resume nor Retry is offered.
    assert f"{key}_retry" not in {b.key for b in at.button}
    assert any("is not retried" in w.value for w in at.warning)

    # Exports through scorers/export.py; the CSV neutralises the formula.
    open_tab(at, key, "Export")
    csv_text = exports["csv"]().read().decode()
    assert "'=1+1" in csv_text and ",=1+1" not in csv_text
    assert ",=1+1" in exports["plain-csv"]().read().decode()  # the plain CSV keeps texts as they are
    lines = exports["jsonl"]().read().decode().splitlines()
    assert len(lines) == 8
    assert {json.loads(line)["status"] for line in lines} == {"scored", "missing_input"}
    # Per-dimension scores are flat numeric columns; the item id is the mapped id column's value.
    first = json.loads(lines[0])
    assert first["item_id"] == "a" and 0 <= first["prompt_alignment.user.intentAlignment"] <= 1
    seed = json.loads(exports["json"]().read())
    assert seed["scores"]["prompt-alignment"]["nFailed"] == 1
    assert seed["items"][2]["scorerResults"]["prompt-alignment"]["score"] is None
    assert exports["parquet"]().read()[:4] == b"PAR1"

    # The key is never stored.
    store = Store(studio_db)
    run = store.get_run(run_id)
    assert run["judge"]["model"] == "gpt-4o-mini" and run["judge"]["baseUrl"] == fake_judge.base_url
    assert run["mapping"]["groups"] == ["variant"]
    store.close()
    with sqlite3.connect(studio_db) as db:
        dump = "\n".join(db.iterdump())
    assert "test-key" not in dump


def test_stop_then_resume_scores_each_item_once(open_page, fake_judge: FakeOpenAI):
    fake_judge.responder = lambda body: Reply.json(USER).delayed(0.15)
    rows = "".join(f"r{n},Question {n}?,Answer {n}.\n" for n in range(12))
    at = open_page("batch")
    upload(at, "twelve.csv", ("id,prompt,response\n" + rows).encode())
    at.multiselect(key="batch_scorers").set_value(["prompt-alignment"]).run()
    at.number_input(key="batch_concurrency").set_value(1).run()
    at.button(key="batch_run").click().run()

    assert at.progress, "the progress bar shows while the run is going"
    assert at.progress[-1].text.startswith("Scoring: ") and " of 12 · " in at.progress[-1].text
    deadline = time.monotonic() + 20
    while jobs.get(at.session_state["job_batch"]).snapshot().done < 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    at.button(key="batch_job_stop").click().run()
    wait_for_job(at)

    run_id = at.session_state["batch_run_id"]
    key = f"batch_{run_id}"
    stopped_calls = fake_judge.chat_call_count
    assert 2 <= stopped_calls < 12
    assert at.warning[0].value.startswith(f"Stopped: {stopped_calls} of 12 outcomes stored")
    resume = at.button(key=f"{key}_resume")
    assert resume.label == f"Resume ({12 - stopped_calls} items left)"
    resume.click().run()
    wait_for_job(at)

    assert [s.value for s in at.success] == ["Completed: all 12 outcomes scored."]
    assert fake_judge.chat_call_count == 12  # nothing paid twice
    prompts = [fake_judge.prompt_text(i) for i in range(12)]
    for n in range(12):
        assert sum(f"Question {n}?" in p for p in prompts) == 1


def test_jsonl_upload_shows_what_was_skipped_and_why(open_page):
    data = b'{"prompt": "Hi", "response": "Hello"}\n[1, 2]\n\n{"prompt": "Bye", "response": "Bye"}\n{broken\n'
    at = open_page("batch")
    upload(at, "mixed.jsonl", data)
    assert "mixed.jsonl: 2 rows loaded, 2 columns (jsonl)." in [c.value for c in at.caption]
    assert at.warning[0].value == "2 record(s) of the file were not loaded and will not be scored."
    skipped = at.dataframe[0].value
    assert skipped["where"].tolist() == ["line 2", "line 5"]
    assert "not a JSON object" in skipped["reason"].iloc[0]

    # The run keeps saying so once scored, and when reopened from History.
    at.multiselect(key="batch_scorers").set_value(["textual-difference"]).run()
    at.selectbox(key="batch_opt_textual-difference_target").set_value("input").run()
    at.button(key="batch_run").click().run()
    wait_for_job(at)
    note = (
        "2 record(s) of the file could not be loaded, so they are not in this run: line 2: "
        + skipped["reason"].iloc[0]
        + "; line 5: "
        + skipped["reason"].iloc[1]
        + "."
    )
    assert note in [w.value for w in at.warning]
    run_id = at.session_state["batch_run_id"]
    history = open_page("history")
    history.query_params["run"] = run_id
    history.run()
    assert note in [w.value for w in history.warning]


def test_unreadable_upload_is_an_error_not_an_exception(open_page):
    at = open_page("batch")
    upload(at, "bad.csv", b"")
    assert at.error and "bad.csv" in at.error[0].value
    assert "batch_run" not in [b.key for b in at.button]


def test_unmapped_required_column_is_explained(open_page):
    at = open_page("batch")
    upload(at, "odd.csv", b"alpha,beta\nx,y\n")
    assert (
        at.warning[0].value == "Map the response column (marked *), or a conversation (messages) column, to continue."
    )
    assert at.button(key="batch_run").disabled


def test_a_rerun_builds_items_and_previews_again_only_for_what_changed(open_page, monkeypatch: pytest.MonkeyPatch):
    import dashboard.batch

    calls: dict[str, list[str]] = {"items": [], "preview": []}
    build_items, scorer_preview = dashboard.batch.build_items, dashboard.batch.scorer_preview

    def counted_items(dataset, mapping, group_by=()):
        calls["items"].append(mapping["output"])
        return build_items(dataset, mapping, group_by)

    def counted_preview(items, scorer, limit=3):
        calls["preview"].append(scorer.id)
        return scorer_preview(items, scorer, limit)

    monkeypatch.setattr(dashboard.batch, "build_items", counted_items)
    monkeypatch.setattr(dashboard.batch, "scorer_preview", counted_preview)
    at = open_page("batch")
    upload(at, "small.csv", CSV)
    at.multiselect(key="batch_scorers").set_value(["textual-difference"]).run()
    assert calls == {"items": ["response"], "preview": ["textual-difference"]}

    at.text_input(key="batch_run_name").input("Unrelated").run()  # nothing the items or previews depend on
    at.run()
    assert calls == {"items": ["response"], "preview": ["textual-difference"]}

    at.multiselect(key="batch_scorers").set_value(["textual-difference", "completeness"]).run()
    assert calls == {"items": ["response"], "preview": ["textual-difference", "completeness"]}  # only the new one
    at.selectbox(key="batch_opt_textual-difference_target").set_value("input").run()
    assert calls["preview"][2:] == ["textual-difference"]  # its options changed, so its preview is built again

    token = [s.key for s in at.selectbox if s.key and s.key.startswith("batch_map_input_")][0].rsplit("_", 1)[1]
    # (not "reference", the ground truth's column: one column for two roles keeps Run disabled, with no preview)
    at.selectbox(key=f"batch_map_output_{token}").set_value("variant").run()
    assert calls["items"] == ["response", "variant"]  # a new mapping: new items, new previews
    assert sorted(calls["preview"][3:]) == ["completeness", "textual-difference"]
    assert at.dataframe[0].value["Response"].tolist() == ["A", "A", "B", "B"]


# JSON Lines whose line 2 has no "response" key and whose line 3's response is an object without
# text: pandas reads the missing key as NaN. Textual difference (vs ground truth) then gives
#   line 1: "a1" = "r1"? no: Indel similarity of "a1" and "r1" is 2·1/4 = 0.5, equal lengths → 0.5 (scored);
#   line 2: no output → missing_input (output); line 3: a message whose content is 5, no text → invalid_input (output).
MISSING_KEYS = (
    b'{"prompt": "p1", "response": "a1", "ground_truth": "r1"}\n'
    b'{"prompt": "p2", "ground_truth": "r2"}\n'
    # A message whose content is no text: invalid input (an object that is no message is scored as its JSON).
    b'{"prompt": "p3", "response": {"role": "assistant", "content": 5}, "ground_truth": "r3"}\n'
)


def test_a_missing_response_key_is_previewed_with_its_other_fields_and_stored_as_missing_input(
    open_page, studio_db: Path
):
    at = open_page("batch")
    upload(at, "missingkeys.jsonl", MISSING_KEYS)
    at.multiselect(key="batch_scorers").set_value(["textual-difference"]).run()
    preview = at.dataframe[1].value  # after the mapped columns: the rows as textual difference reads them
    row = preview.iloc[1]
    assert row["status"].startswith("not scored: Missing input (output")
    # The record has p2 and r2: they are shown, only the response is absent.
    assert (row["User prompt"], row["Ground truth"]) == ("p2", "r2")
    assert pd.isna(row["Response"])
    # Both previews (the mapped columns', the scorer's) show the absent response as "—", as their captions say,
    # never the grid's default "None", which reads like a response "None".
    assert pd.isna(at.dataframe[0].value["Response"].iloc[1])
    assert [at.dataframe[0].proto.placeholder, at.dataframe[1].proto.placeholder] == ["—", "—"]
    captions = [c.value for c in at.caption]
    assert any(c.endswith('rows, as mapped; "—": the row has no value there.') for c in captions)
    assert '"—": a field the scorer cannot read from the row; its status says why.' in captions

    at.button(key="batch_run").click().run()
    wait_for_job(at)
    assert metrics(at)["Not scored"] == "2"
    store = Store(studio_db)
    _, _, result = load_run(store, at.session_state["batch_run_id"])
    store.close()
    statuses = {o.item_id: (o.status.value, (o.error or "").split(":")[0]) for o in result.outcomes}
    assert statuses == {
        "line 1": ("scored", ""),
        "line 2": ("missing_input", "output"),
        "line 3": ("invalid_input", "output"),
    }
    banner = " ".join(w.value for w in at.warning)
    assert "2 of 3 outcomes were not scored (1 Missing input, 1 Invalid input)" in banner


def test_json_values_that_are_not_text_are_named_before_the_run(open_page):
    data = (
        b'{"prompt": "Add 2 and 2", "response": "4"}\n'
        b'{"prompt": "Add 40 and 2", "response": 42}\n'  # line 2: a number
        b'{"prompt": "Is 7 prime?", "response": true}\n'  # line 3: a boolean
        b'{"prompt": "Name two", "response": ["a", "b"]}\n'  # line 4: a list of strings (not messages)
    )
    at = open_page("batch")
    upload(at, "answers.jsonl", data)
    # Lines 2-4 hold a number, a boolean and a list: 3 rows, the first on line 2; the prompts are all text.
    assert [w.value for w in at.warning] == [
        "Field 'response' (the response) is not text in 3 rows (1 number, 1 boolean, 1 list), the first on line 2: "
        "each is scored as its text (numbers as written, true/false, lists and objects as JSON)."
    ]
    output = next(s.key for s in at.selectbox if s.key.startswith("batch_map_output_"))
    at.selectbox(key=output).set_value("prompt").run()  # text in every row: nothing to say
    assert not any("is not text" in w.value for w in at.warning), [w.value for w in at.warning]


def test_the_scorer_preview_heads_its_first_column_as_the_id_or_where_the_row_starts(open_page):
    # No id column, and a response over 3 lines: the second data row starts on line 5 of the file (header on 1).
    at = open_page("batch")
    upload(at, "multi.csv", b'prompt,response\nSay hi.,"hi\nthere\nfriend"\nSay bye.,bye\n')
    at.multiselect(key="batch_scorers").set_value(["textual-difference"]).run()
    preview = table_with(at, "status")
    assert preview.columns[0] == "id (or where the row starts in the file)"
    assert preview[preview.columns[0]].tolist() == ["line 2", "line 5"]


def test_the_export_says_which_cells_are_too_long_for_a_spreadsheet(open_page):
    # Row b's response is 40,000 characters: over the 32,767 a spreadsheet cell holds; one scorer, one cell.
    at = open_page("batch")
    upload(at, "long.csv", b"id,prompt,response\na,Say hi.,hi\nb,Say a lot.," + b"x" * 40_000 + b"\n")
    at.multiselect(key="batch_scorers").set_value(["textual-difference"]).run()
    at.selectbox(key="batch_opt_textual-difference_target").set_value("input").run()
    at.button(key="batch_run").click().run()
    wait_for_job(at)
    key = f"batch_{at.session_state['batch_run_id']}"
    open_tab(at, key, "Export")
    assert [w.value for w in at.warning if "spreadsheet CSV" in w.value] == [
        "1 cell of the spreadsheet CSV is longer than the 32,767 characters a spreadsheet cell holds (output: 1). "
        "The file keeps it whole, but Excel cuts or breaks it on opening: for the full texts, use the plain CSV, "
        "JSON Lines or Parquet."
    ]


def test_a_conversation_column_alone_is_the_prompt_and_the_response(open_page, fake_judge: FakeOpenAI, studio_db: Path):
    # Only an id and a conversation, as the CLI and the README take it: the final assistant message is the response.
    data = (
        b'{"id": "a1", "messages": [{"role": "system", "content": "Answer with a digit."}, '
        b'{"role": "user", "content": "What is 2+2?"}, {"role": "assistant", "content": "4"}]}\n'
        b'{"id": "a2", "messages": [{"role": "user", "content": "Name a color of the sky."}]}\n'
    )
    fake_judge.responder = judge
    at = open_page("batch")
    upload(at, "msgs.jsonl", data)
    token = [s.key for s in at.selectbox if s.key and s.key.startswith("batch_map_messages_")][0].rsplit("_", 1)[1]
    at.checkbox(key=f"batch_confirm_messages_{token}").check().run()
    at.multiselect(key="batch_scorers").set_value(["prompt-alignment", "textual-difference"]).run()
    at.selectbox(key="batch_opt_textual-difference_target").set_value("input").run()
    assert not [e.value for e in at.error if "need(s) the" in e.value]
    assert not at.button(key="batch_run").disabled
    at.button(key="batch_run").click().run()
    wait_for_job(at)
    store = Store(studio_db)
    _, _, result = load_run(store, at.session_state["batch_run_id"])
    store.close()
    outcomes = {(o.item_id, o.scorer_id): (o.status.value, o.score) for o in result.outcomes}
    # a1, both mode (BOTH): 0.7·1 + 0.3·0.5 = 0.85; a2 has no reply: no response, for every scorer.
    assert outcomes[("a1", "prompt-alignment")] == ("scored", 0.85)
    assert outcomes[("a2", "prompt-alignment")] == ("missing_input", None)
    assert outcomes[("a2", "textual-difference")] == ("missing_input", None)


def test_the_preview_status_is_the_scorers_own_input_check(open_page, fake_judge: FakeOpenAI, studio_db: Path):
    # r1 has a blank prompt and no system message: prompt alignment in both mode does not score it.
    fake_judge.responder = judge
    at = open_page("batch")
    upload(at, "blank.csv", b"id,prompt,response\nr1,,Hello there.\nr2,Say hi.,hi\n")
    at.multiselect(key="batch_scorers").set_value(["prompt-alignment"]).run()
    preview = table_with(at, "status")
    why = "input: both mode needs a user prompt or a system message, but the input has neither with text"
    assert preview["status"].tolist() == [f"not scored: Missing input ({why})", "will be scored"]
    at.button(key="batch_run").click().run()
    wait_for_job(at)
    store = Store(studio_db)
    _, _, result = load_run(store, at.session_state["batch_run_id"])
    store.close()
    assert {o.item_id: (o.status.value, o.error) for o in result.outcomes if o.status.value != "scored"} == {
        "r1": ("missing_input", why)
    }


def test_after_a_run_the_estimate_says_it_is_for_a_new_run_and_what_the_run_was_estimated_at(
    open_page, fake_judge: FakeOpenAI
):
    # Before the run: 3 judge calls (c has no response), none cached. After it, all 3 replies are in the judge
    # cache, so a new run would cost $0.00: the estimate says so beside its $0.00, and gives the run's own
    # estimate from before it started (the figure shown then), so it does not read as the run's cost.
    fake_judge.responder = judge
    at = open_page("batch")
    upload(at, "small.csv", CSV)
    at.multiselect(key="batch_scorers").set_value(["prompt-alignment"]).run()
    assert metrics(at)["Judge calls (est.)"] == "3"
    before = metrics(at)["Cost (est.)"]
    assert before.startswith("$") and before != "$0.00"  # 3 replies of 700 tokens at gpt-4o-mini's list price
    assert not [c for c in at.caption if c.value.startswith("Estimate for a new run")]
    at.button(key="batch_run").click().run()
    wait_for_job(at)
    run_id = at.session_state["batch_run_id"]
    (cost,) = [m for m in at.metric if m.label == "Cost (est.)"]
    assert (cost.value, cost.proto.delta) == ("$0.00", "all 3 calls are in the judge cache")
    assert (
        f"Estimate for a new run now: all 3 judge calls are in the judge cache, so it would cost $0.00. Run {run_id} "
        f"was estimated at {before} for 3 judge calls before it started; what it spent is its Cost under Results."
    ) in [c.value for c in at.caption]
