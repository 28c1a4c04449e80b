"""AppTest of the Batch page's Batch API option (the judge is the fake server's /v1/batches)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, Reply
from judge_data import single_analysis
from streamlit.testing.v1 import AppTest

from scorers import Store, load_run

APP = str(Path(__file__).resolve().parent.parent / "app.py")
CSV = b"id,prompt,response\na,Say hi.,hi\nb,Say bye.,bye\nc,Count to two.,1 2\n"
USER = single_analysis(0.9, 0.8, 0.7, 1.0)  # 0.40·0.9 + 0.30·0.8 + 0.20·0.7 + 0.10·1.0 = 0.84


@pytest.fixture
def judge_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fake_openai: FakeOpenAI) -> Path:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_MODEL", "gpt-4o-mini")
    monkeypatch.setenv("SCORER_STUDIO_DB", str(tmp_path / "studio.db"))
    monkeypatch.setattr("dashboard.batch.BATCH_POLL_INTERVAL_S", 0.02)
    fake_openai.responder = lambda body: Reply.json(USER)
    return tmp_path / "studio.db"


def test_batch_api_option_shows_the_discount_and_runs_through_batches(judge_env: Path, fake_openai: FakeOpenAI):
    at = AppTest.from_file(APP, default_timeout=60)
    at.run()
    at.switch_page("pages/batch.py").run()
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
    while at.session_state["batch_job"].running:
        assert time.monotonic() < deadline, "the Batch API run did not finish"
        time.sleep(0.1)
        at.run()
    at.run()
    assert not at.exception

    assert fake_openai.chat_call_count == 0 and len(fake_openai.batches) == 1
    store = Store(judge_env)
    run, _, result = load_run(store, at.session_state["batch_run_id"])
    assert run["config"]["batch_api"] is True and run["status"] == "completed"
    assert [o.score for o in result.outcomes] == [0.84, 0.84, 0.84]
    store.close()
