"""The Batch/History helpers without Streamlit (dashboard/batch.py): items, stored runs, the background
job with stop and resume, and the tables. Expected numbers are worked out by hand in the comments."""

from __future__ import annotations

import dataclasses
import json
import math
import threading
import time
from collections import Counter
from typing import Any

import pandas as pd
import pytest

from dashboard.batch import (
    NO_SCORED_ITEMS,
    NOT_USED,
    build_items,
    create_batch_run,
    resume_settings,
    runs_table,
    runs_table_styler,
    scorers_for_run,
    start_batch_job,
    work_left,
)
from scorers import (
    EvalItem,
    InvalidInputError,
    JudgeOutputInvalidError,
    JudgeSettings,
    ScoreResult,
    Store,
    create_textual_difference_scorer,
    load_dataset,
    load_run,
    run_evals,
)
from scorers.runs import jobs
from scorers.runs.judges import judge_record

CSV = b"id,prompt,response,reference,variant\na,Say four,4,4,A\nb,Add,=1+1,=1+2,A\nc,Say hi,,hi,B\nd,Say bye,bye,bye,\n"


class SlowScorer:
    """A code scorer that takes ``delay`` seconds per item, logs every call, scores 1.

    It fails on "bad" as a judge would (invalid output: retryable) and on "invalid" as an unusable
    input (invalid input: the same input fails the same way, so it is not retried).
    """

    id = "slow"
    name = "Slow"

    def __init__(self, delay: float):
        self.delay = delay
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def run(self, payload: dict[str, Any]) -> ScoreResult:
        time.sleep(self.delay)
        text = payload["output"]["text"]
        with self._lock:
            self.calls[text] += 1
        if text == "bad":
            raise JudgeOutputInvalidError("the reply was not valid JSON")
        if text == "invalid":
            raise InvalidInputError("unusable output", field="output")
        return ScoreResult(scorer=self.id, score=1.0, reason=None, analyze_step_result={})


def items_of(texts: list[str]) -> list[EvalItem]:
    return [
        EvalItem(f"i{n}", {"input": [{"role": "user", "content": "q"}], "output": {"text": t}})
        for n, t in enumerate(texts)
    ]


@pytest.fixture
def store(tmp_path) -> Store:
    db = Store(tmp_path / "runs.db")
    yield db
    db.close()


def test_build_items_maps_columns_and_groups():
    dataset = load_dataset(CSV, name="small.csv")
    items = build_items(
        dataset, {"input": "prompt", "output": "response", "ground_truth": "reference", "id": "id"}, ["variant"]
    )
    assert [it.item_id for it in items] == ["a", "b", "c", "d"]
    assert [it.groups for it in items] == [{"variant": "A"}, {"variant": "A"}, {"variant": "B"}, {"variant": ""}]
    assert items[1].payload["output"] == {"text": "=1+1"}
    assert items[1].payload["ground_truth"] == "=1+2"
    assert items[0].payload["input"]["inputMessages"] == [{"role": "user", "content": "Say four"}]


def test_create_batch_run_records_options_like_the_cli_and_never_the_key(store, tmp_path):
    settings = JudgeSettings(model="openai/gpt-4o-mini", base_url="http://127.0.0.1:9/v1", api_key="sk-secret-123")
    td = create_textual_difference_scorer(scale=10)
    run_id = create_batch_run(
        store,
        items=items_of(["x"]),
        scorers=[td],
        scorer_options={td.id: {"scale": 10.0}},
        settings=settings,
        dataset_name="d.csv",
        mapping={"input": "p", "output": "r"},
        group_by=["variant"],
        concurrency=3,
        item_timeout=None,
        name="  My run ",
    )
    run = store.get_run(run_id)
    assert run["name"] == "My run"
    assert run["scorers"] == [{"id": "textual-difference", "name": "Textual difference", "options": {"scale": 10.0}}]
    assert run["config"]["scorerOptions"] == {"textual-difference": {"scale": 10.0}}
    assert run["config"]["concurrency"] == 3
    assert run["mapping"] == {"input": "p", "output": "r", "groups": ["variant"]}
    assert run["judge"] is None  # no judge scorer: no judge recorded
    assert b"sk-secret-123" not in (tmp_path / "runs.db").read_bytes()

    rebuilt = scorers_for_run(run, None)
    assert [(s.id, s.scale) for s in rebuilt] == [("textual-difference", 10.0)]


def test_resume_settings_keep_every_setting_of_the_runs_judge_with_the_current_key():
    started = JudgeSettings(
        model="gpt-4o",
        base_url="http://judge/v1",
        api_key="sk-secret",
        temperature=0.5,
        seed=7,
        timeout=12.5,
        max_retries=1,
        max_tokens=300,
        context_window=8000,
    )
    run = {"judge": judge_record(started)}
    assert "sk-secret" not in json.dumps(run)
    current = JudgeSettings(model="other", base_url=None, api_key="k", temperature=0.0, seed=1)
    assert resume_settings(run, current) == dataclasses.replace(started, api_key="k")
    # A run stored before max output tokens and the timeout were recorded keeps the current ones.
    older = {"judge": {"model": "gpt-4o", "baseUrl": "http://judge/v1", "temperature": 0.5, "seed": 7}}
    resumed = resume_settings(older, dataclasses.replace(current, max_tokens=500))
    assert (resumed.model, resumed.base_url, resumed.temperature, resumed.seed, resumed.max_tokens) == (
        "gpt-4o",
        "http://judge/v1",
        0.5,
        7,
        500,
    )
    assert resume_settings({"judge": None}, current) is current


def test_job_scores_every_item_and_reports_progress(store):
    td = create_textual_difference_scorer()
    items = items_of(["a", "b", "c"])
    run_id = create_batch_run(
        store, items=items, scorers=[td], scorer_options={td.id: {}}, settings=None, dataset_name="d", mapping={}
    )
    job = jobs.get(start_batch_job(store, run_id, [td], concurrency=2))
    job.join(10)
    assert not job.running and job.error is None
    assert jobs.running_for(jobs.run_key(run_id)) is None
    progress = job.snapshot()
    assert (progress.total, progress.done, progress.failed, progress.status) == (3, 3, 0, "done")
    assert progress.fraction == 1.0 and progress.eta_s is None
    run, _, result = load_run(store, run_id)
    assert run["status"] == "completed"
    assert len(result.outcomes) == 3


def test_stopped_job_resumes_without_scoring_anything_twice(store):
    slow = SlowScorer(0.05)
    texts = [f"t{n}" for n in range(12)]
    run_id = create_batch_run(
        store,
        items=items_of(texts),
        scorers=[slow],
        scorer_options={"slow": {}},
        settings=None,
        dataset_name="d",
        mapping={},
    )
    job = jobs.get(start_batch_job(store, run_id, [slow], concurrency=1))
    with pytest.raises(jobs.JobConflict, match="already being worked on"):
        start_batch_job(store, run_id, [slow])
    deadline = time.monotonic() + 10
    while job.snapshot().done < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    jobs.stop(job.id)
    job.join(10)
    stopped = job.snapshot()
    assert stopped.status == "stopped"
    run, _, partial = load_run(store, run_id)
    assert run["status"] == "cancelled"
    assert 3 <= len(partial.outcomes) < 12
    assert stopped.done == len(partial.outcomes)

    resumed = jobs.get(start_batch_job(store, run_id, [slow], concurrency=4))
    assert resumed.snapshot().total == 12 - len(partial.outcomes)
    resumed.join(10)
    run, _, final = load_run(store, run_id)
    assert run["status"] == "completed"
    assert len(final.outcomes) == 12
    assert slow.calls == Counter({t: 1 for t in texts})  # each item scored exactly once over both jobs


def test_retry_failed_rescores_only_the_failed_items(store):
    slow = SlowScorer(0)
    run_id = create_batch_run(
        store,
        items=items_of(["ok", "bad", "fine", "invalid"]),
        scorers=[slow],
        scorer_options={"slow": {}},
        settings=None,
        dataset_name="d",
        mapping={},
    )
    jobs.get(start_batch_job(store, run_id, [slow])).join(10)
    _, _, first = load_run(store, run_id)
    # Two not scored: "bad" failed at the judge (retried), "invalid" has an invalid input (would fail the same way).
    assert (first.n_failed, work_left(first), work_left(first, retry_failed=True)) == (2, 0, 1)
    retry = jobs.get(start_batch_job(store, run_id, [slow], retry_failed=True))
    retry.join(10)
    assert (retry.snapshot().total, retry.snapshot().failed) == (1, 1)
    assert slow.calls == Counter({"ok": 1, "bad": 2, "fine": 1, "invalid": 1})


def small_run(store: Store):
    dataset = load_dataset(CSV, name="small.csv")
    items = build_items(
        dataset, {"input": "prompt", "output": "response", "ground_truth": "reference", "id": "id"}, ["variant"]
    )
    td = create_textual_difference_scorer()
    slow = SlowScorer(0)
    items[3] = EvalItem(items[3].item_id, {**items[3].payload, "output": {"text": "bad"}}, items[3].groups)
    result = run_evals(items, [td, slow], store=store, dataset_name="small.csv")
    return result, items


def test_runs_table_tells_a_used_scorer_without_scored_items_from_an_unused_one(store):
    small_run(store)
    stale = create_batch_run(
        store,
        items=items_of(["x", "y"]),
        scorers=[SlowScorer(0)],
        scorer_options={"slow": {}},
        settings=None,
        dataset_name="other.jsonl",
        mapping={},
        name="stale",
    )
    table = runs_table(store.list_runs())
    assert table.iloc[0]["id"] == stale
    # The stale run used 'slow' but scored none of its 2 items; it did not use textual-difference.
    assert table.attrs["no_scored"] == [(0, "mean: slow")]
    shown = table.drop(columns=["id"])
    lines = runs_table_styler(shown).to_string(delimiter="|").splitlines()  # the header, then one line a run
    # Each line starts with the row's index, then its cells.
    first, second = (dict(zip(shown.columns, line.split("|")[1:], strict=True)) for line in lines[1:3])
    assert (first["mean: slow"], first["mean: textual-difference"]) == (NO_SCORED_ITEMS, NOT_USED)
    # small_run: textual difference (1 + 0.75 + 0 + 1/3) / 4 = 0.5208… → 0.521; slow 1.0 → 1.000.
    assert (second["mean: textual-difference"], second["mean: slow"]) == ("0.521", "1.000")
    # Streamlit's grid shows its placeholder for any missing value whatever the Styler says: the grid gets -inf
    # (shown as NO_SCORED_ITEMS, sorted below every mean) for the used scorer, NaN (the placeholder) for the other.
    data = runs_table_styler(shown).data
    assert data.iloc[0]["mean: slow"] == -math.inf and math.isnan(data.iloc[0]["mean: textual-difference"])
    assert math.isnan(shown.iloc[0]["mean: slow"])  # the table itself is untouched


def test_runs_table_puts_means_on_another_scale_in_their_own_column(store):
    items = items_of(["x"])
    run_evals(items, [create_textual_difference_scorer()], store=store)
    scaled = SlowScorer(0)
    run_evals(items, [scaled], store=store, scorer_options={"slow": {"scale": 10}})
    table = runs_table(store.list_runs())
    assert [c for c in table.columns if c.startswith("mean:")] == ["mean: slow (0–10)", "mean: textual-difference"]


def test_runs_table_lists_means_counts_and_status(store):
    small_run(store)
    slow = SlowScorer(0)
    stale = create_batch_run(
        store,
        items=items_of(["x", "y"]),
        scorers=[slow],
        scorer_options={"slow": {}},
        settings=None,
        dataset_name="other.jsonl",
        mapping={},
        name="stale",
    )
    table = runs_table(store.list_runs())
    assert table["name"].tolist()[0] == "stale"
    first, second = table.iloc[0], table.iloc[1]
    assert first["id"] == stale
    assert (first["status"], first["items"], first["pending"], first["scored"]) == ("Running", 2, 2, 0)
    assert math.isnan(first["mean: textual-difference"])
    assert second["status"] == "Completed"
    assert second["dataset"] == "small.csv"
    assert second["scorers"] == "Textual difference, Slow"
    assert (second["scored"], second["not scored"], second["pending"]) == (7, 1, 0)
    assert second["mean: textual-difference"] == pytest.approx((1 + 0.75 + 0 + 1 / 3) / 4)
    assert second["mean: slow"] == 1.0
    # Nothing in this process scores it: at start-up it is marked interrupted (the table shows the stored status).
    assert store.mark_interrupted(alive=lambda run_id: False) == [stale]
    assert runs_table(store.list_runs()).iloc[0]["status"] == "Interrupted"
    # Textual difference against the input is another column than against the ground truth.
    options = {"textual-difference": {"target": "input"}}
    run_evals(items_of(["x"]), [create_textual_difference_scorer(target="input")], store=store, scorer_options=options)
    newest, _, oldest = (row for _, row in runs_table(store.list_runs()).iterrows())
    assert newest["mean: textual-difference (vs input)"] == 0.0  # "x" vs "q": no character in common → 0
    assert math.isnan(newest["mean: textual-difference"])
    assert math.isnan(oldest["mean: textual-difference (vs input)"])
    assert isinstance(runs_table([]), pd.DataFrame) and runs_table([]).empty


def test_runs_table_shows_each_variants_mean_for_a_run_of_variants(store):
    # Variant a: "4"/"4" → 1, "abcd"/"abcd" → 1; variant b: "=1+1" vs "=1+2" → 2·3/8 = 0.75, "ab" vs "cd" → 0.
    # The mean of the 4 responses, (1 + 1 + 0.75 + 0) / 4 = 0.6875, mixes the variants: never shown.
    rows = [("1", "a", "4", "4"), ("1", "b", "=1+1", "=1+2"), ("2", "a", "abcd", "abcd"), ("2", "b", "ab", "cd")]
    items = [
        EvalItem(f"{r}::{v}", {"input": "q", "output": o, "ground_truth": g}, {"variant": v, "row_id": r})
        for r, v, o, g in rows
    ]
    run_evals(items, [create_textual_difference_scorer()], store=store, mapping={"groups": ["variant", "row_id"]})
    table = runs_table(store.list_runs())
    assert table.attrs["per_variant"] == [(0, "mean: textual-difference", "a 1.000 · b 0.375")]  # b: (0.75 + 0) / 2
    shown = table.drop(columns=["id"])
    line = runs_table_styler(shown).to_string(delimiter="|").splitlines()[1]
    cells = dict(zip(shown.columns, line.split("|")[1:], strict=True))
    assert cells["mean: textual-difference"] == "a 1.000 · b 0.375"
    assert "0.688" not in runs_table_styler(shown).to_html()
