"""Jobs belong to the server, not to a session: one AppTest session starts a run, another lists and stops it.

Two AppTest instances in one process are two browser sessions of one server (they share
the module-level job registry, as Streamlit sessions do). The judge is the fake server,
which counts the calls.
"""

from __future__ import annotations

import time

import pytest
from fake_openai import FakeOpenAI, Reply
from judge_data import single_analysis
from streamlit.testing.v1 import AppTest

from scorers import Store
from scorers.runs import jobs

ROWS = 12


@pytest.fixture
def slow_judge(fake_judge: FakeOpenAI) -> FakeOpenAI:
    """The environment's fake judge, answering every call after 0.2 s."""
    fake_judge.responder = lambda body: Reply.json(single_analysis(1, 1, 1, 1)).delayed(0.2)
    return fake_judge


def start_run_in_a_session(open_page) -> tuple[AppTest, str]:
    """Session A: score ROWS rows on the Batch page one at a time; returns the session and its job id."""
    at = open_page("batch")
    rows = "".join(f"r{n},Question {n}?,Answer {n}.\n" for n in range(ROWS))
    at.file_uploader(key="batch_upload").upload("rows.csv", ("id,prompt,response\n" + rows).encode(), "text/plain")
    at.run()
    at.multiselect(key="batch_scorers").set_value(["prompt-alignment"]).run()
    at.number_input(key="batch_concurrency").set_value(1).run()
    at.button(key="batch_run").click().run()
    assert not at.exception
    return at, at.session_state["job_batch"]


def wait_until(predicate, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def test_a_job_started_in_one_session_is_listed_and_stopped_from_another(slow_judge: FakeOpenAI, studio_db, open_page):
    first, job_id = start_run_in_a_session(open_page)
    wait_until(lambda: jobs.snapshot(job_id).done >= 1)

    other = open_page("evaluate")  # a second session, on a page that has nothing to do with batches
    label = jobs.snapshot(job_id).label
    assert label in [m.value.strip("*") for m in other.sidebar.markdown]
    assert any(p.text.startswith("Scoring: ") for p in other.sidebar.get("progress"))
    other.sidebar.button(key=f"sidebar_stop_{job_id}").click().run()
    assert not other.exception

    jobs.get(job_id).join(20)
    assert jobs.snapshot(job_id).status == "stopped"
    calls = slow_judge.chat_call_count
    time.sleep(0.5)  # nothing is sent after the stop (counted at the server)
    assert slow_judge.chat_call_count == calls < ROWS
    run_id = jobs.snapshot(job_id).run_id
    store = Store(studio_db)
    assert store.get_run(run_id)["status"] == "cancelled"
    assert len(store.results(run_id)) == calls  # each call that was made is stored
    store.close()

    other.run()
    assert not [m for m in other.sidebar.markdown if m.value.strip("*") == label]  # no longer listed as running
    first.run()
    assert not first.exception


def test_history_of_another_session_shows_the_running_run_with_stop(slow_judge: FakeOpenAI, open_page):
    _, job_id = start_run_in_a_session(open_page)
    wait_until(lambda: jobs.snapshot(job_id).done >= 1)

    history = open_page("history")
    table = next(d.value for d in history.dataframe if "status" in d.value.columns and "dataset" in d.value.columns)
    assert table["status"].tolist() == ["Running"]  # the stored status, true while it is scored
    assert history.button(key="history_delete").disabled
    history.button(key="history_stop").click().run()
    jobs.get(job_id).join(20)
    history.run()
    table = next(d.value for d in history.dataframe if "status" in d.value.columns and "dataset" in d.value.columns)
    assert table["status"].tolist() == ["Stopped"]
    assert not history.button(key="history_delete").disabled
    assert slow_judge.chat_call_count < ROWS
