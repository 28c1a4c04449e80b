"""AppTest of the Batch page's Batch API option (the judge is the fake server's /v1/batches)."""

from __future__ import annotations

import time

import pytest
from fake_openai import FakeOpenAI, Reply
from judge_data import single_analysis

from scorers import Store, load_run
from scorers.runs import jobs

CSV = b"id,prompt,response\na,Say hi.,hi\nb,Say bye.,bye\nc,Count to two.,1 2\n"
USER = single_analysis(0.9, 0.8, 0.7, 1.0)  # 0.40·0.9 + 0.30·0.8 + 0.20·0.7 + 0.10·1.0 = 0.84


@pytest.fixture
def batch_judge(fake_judge: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    """The fake judge answering every request with USER, at gpt-4o-mini's list price; quick polling."""
    monkeypatch.setenv("OPENAI_MODEL", "gpt-4o-mini")
    monkeypatch.setattr("dashboard.batch.BATCH_POLL_INTERVAL_S", 0.02)
    fake_judge.responder = lambda body: Reply.json(USER)
    return fake_judge


def limits_expander(at):
    (expander,) = [e for e in at.expander if e.label == "Budget, price and limits"]
    return expander


def test_batch_api_option_shows_the_discount_and_runs_through_batches(batch_judge: FakeOpenAI, studio_db, open_page):
    fake_openai = batch_judge
    at = open_page("batch")
    at.file_uploader(key="batch_upload").upload("three.csv", CSV, "text/plain")
    at.run()
    at.multiselect(key="batch_scorers").set_value(["prompt-alignment"]).run()
    live_cost = float(next(m.value for m in at.metric if m.label == "Cost (est.)").lstrip("$"))

    at.toggle(key="batch_api").set_value(True).run()
    assert not at.exception and not at.error
    cost = next(m for m in at.metric if m.label == "Cost (est.)")
    # Half the list price; the delta says what the Batch API saves (the other half).
    assert float(cost.value.lstrip("$")) == pytest.approx(live_cost / 2, abs=1e-4)
    assert cost.proto.delta.startswith("-$") and "with the Batch API" in cost.proto.delta
    assert at.radio(key="batch_api_reask").value == "in a follow-up batch"

    at.button(key="batch_run").click().run()
    deadline = time.monotonic() + 60
    while jobs.get(at.session_state["job_batch"]).running:
        assert time.monotonic() < deadline, "the Batch API run did not finish"
        time.sleep(0.1)
        at.run()
    at.run()
    assert not at.exception

    assert fake_openai.chat_call_count == 0 and len(fake_openai.batches) == 1
    store = Store(studio_db)
    run, _, result = load_run(store, at.session_state["batch_run_id"])
    assert run["config"]["batch_api"] is True and run["status"] == "completed"
    assert [o.score for o in result.outcomes] == [0.84, 0.84, 0.84]
    store.close()


def test_budget_caps_with_the_batch_api_are_refused_on_the_page(batch_judge: FakeOpenAI, studio_db, open_page):
    at = open_page("batch")
    at.file_uploader(key="batch_upload").upload("three.csv", CSV, "text/plain")
    at.run()
    at.multiselect(key="batch_scorers").set_value(["prompt-alignment"]).run()
    at.number_input(key="batch_max_calls").set_value(2).run()
    # A call holds its prompt bound (about 4,000 bytes) + 4,096 reply tokens at gpt-4o-mini's list price (about
    # $0.0031) before it is sent, and is estimated at about $0.00047: a $0.0035 cap holds 1 or 2 of the 3 calls.
    at.number_input(key="batch_max_cost").set_value(0.0035).run()
    assert not at.error and not at.button(key="batch_run").disabled  # live calls: the cap holds
    assert [w.value for w in at.warning if w.value.startswith("The cost cap of $0.0035 is short of")]
    assert not limits_expander(at).proto.expanded
    at.toggle(key="batch_api").set_value(True).run()
    assert [e.value for e in at.error] == [
        "Budget caps (at most 2 judge calls, $0.0035) apply to live judge calls only: the Batch API sends all of "
        "a run's requests at once, so no cap could stop it. Remove the caps or switch the Batch API off. The caps "
        "are under Budget, price and limits (opened above)."
    ]
    # The refusal is the whole story: no warning of what the cost cap would leave out; the caps are shown.
    assert not [w.value for w in at.warning if w.value.startswith("The cost cap")]
    assert limits_expander(at).proto.expanded
    assert at.button(key="batch_run").disabled
    at.number_input(key="batch_max_calls").set_value(0).run()
    at.number_input(key="batch_max_cost").set_value(0.0).run()
    assert not at.error and not at.button(key="batch_run").disabled
    assert limits_expander(at).proto.expanded  # left open: the user closes it
