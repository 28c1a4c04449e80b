"""A run belongs to the server: start it on the Batch page, close the tab, stop it from a new tab's sidebar.

Streamlit serves app.py, Chromium drives it; the judge is the fake server (``judge``),
slowed down so the run is still going when the tab closes, and counting every call.
"""

from __future__ import annotations

import time
from typing import Any

from fake_openai import FakeOpenAI, Reply
from judge_data import dimension_set, single_analysis
from playwright.sync_api import BrowserContext, Page, expect

FIRST_LOAD_TIMEOUT = 120_000
SAMPLE_ROWS = 34  # sample_data/examples.csv: one prompt-alignment judge call per row

USER = single_analysis(0.9, 0.8, 0.7, 1.0)
BOTH = {"user": dimension_set(1.0, 1.0, 1.0, 1.0), "system": dimension_set(0.5, 0.5, 0.5, 0.5),
        "overallAssessment": "Fine."}  # fmt: skip


def slow_judge(body: dict[str, Any]) -> Reply:
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    return Reply.json(BOTH if schema == "prompt_alignment_both" else USER).delayed(0.4)


def wait_until_idle(page: Page) -> None:
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0)


def test_close_the_tab_then_stop_the_run_from_a_new_one(
    page: Page, browser_context: BrowserContext, app_url: str, judge: FakeOpenAI
):
    judge.responder = slow_judge
    page.goto(app_url)
    expect(page.get_by_role("heading", name="Evaluate")).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Batch").click()
    expect(page.get_by_role("heading", name="Batch")).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    wait_until_idle(page)
    page.get_by_text("Sample dataset", exact=True).click()
    expect(page.get_by_text("examples.csv: 34 rows loaded", exact=False)).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    wait_until_idle(page)
    concurrency = page.get_by_role("spinbutton", name="Concurrency", exact=True)
    concurrency.fill("1")
    concurrency.press("Enter")
    wait_until_idle(page)
    page.get_by_role("button").filter(has_text="Run").first.click()
    expect(page.get_by_text("in the background on the server", exact=False)).to_be_visible()

    deadline = time.monotonic() + 60
    while judge.chat_call_count < 2:
        assert time.monotonic() < deadline, "the run did not start calling the judge"
        time.sleep(0.1)
    page.close()  # the session that started the run is gone
    time.sleep(1.5)
    assert judge.chat_call_count > 2  # the run goes on without its tab

    fresh = browser_context.new_page()
    try:
        fresh.goto(app_url)
        sidebar = fresh.get_by_test_id("stSidebar")
        expect(sidebar.get_by_text("Scoring examples.csv", exact=False)).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
        sidebar.get_by_role("button").filter(has_text="Stop").click()
        expect(sidebar.get_by_text("No job running on this server.", exact=True)).to_be_visible()
        stopped_at = judge.chat_call_count
        time.sleep(1.5)
        assert judge.chat_call_count == stopped_at < SAMPLE_ROWS  # no call after the stop
    finally:
        fresh.close()
