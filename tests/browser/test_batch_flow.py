"""The Batch and History pages in a real browser: score the sample dataset, then reopen the run from History.

Streamlit serves app.py, Chromium drives it; the judge is the fake OpenAI-compatible
server (``judge`` fixture), answering prompt alignment by the schema it is asked for.
"""

from __future__ import annotations

import csv
import re
from typing import Any

from fake_openai import FakeOpenAI, Reply
from judge_data import both_analysis, single_analysis
from playwright.sync_api import Page, expect

# The first run of a fresh server imports pandas, plotly and the scorers: allow it time on a busy machine.
FIRST_LOAD_TIMEOUT = 120_000
JOB_TIMEOUT = 120_000
# sample_data/examples.csv: 34 rows, every response non-empty (prompt alignment scores them all);
# textual difference compares with the mapped ground truth, which 29 rows leave blank: those 29
# outcomes are missing_input (never compared with the prompt), so 68 − 29 = 39 are scored.
DONE = "Completed with 29 outcome(s) not scored"


def respond(body: dict[str, Any]) -> Reply:
    """Prompt alignment's analysis for the requested mode; the intent score varies with the prompt's length."""
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    intent = 0.5 + (len(body["messages"][-1]["content"]) % 6) / 10  # 0.5 .. 1.0
    if schema == "prompt_alignment_both":
        return Reply.json(both_analysis(user=(intent, 0.8, 0.7, 1.0), system=(1.0, 0.5, 1.0, 1.0)))
    return Reply.json(single_analysis(intent, 0.8, 0.7, 1.0))


def wait_until_idle(page: Page) -> None:
    """Wait until Streamlit's running indicator is gone (see test_evaluate_flow.py)."""
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0)


def go_to(page: Page, title: str) -> None:
    """Follow the sidebar's link to the page ``title`` and wait for its heading."""
    page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True).click(timeout=FIRST_LOAD_TIMEOUT)
    expect(page.get_by_role("heading", name=title, level=1)).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    wait_until_idle(page)


def test_score_the_sample_dataset_then_reopen_the_run_from_history(
    page: Page, app_url: str, judge: FakeOpenAI, screenshot
):
    judge.responder = respond
    page.goto(app_url)  # the router first (a deep link on a fresh server runs the page without st.navigation)
    expect(page.get_by_role("heading", name="Evaluate", level=1)).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    go_to(page, "Batch")

    page.get_by_role("radiogroup", name="Dataset").get_by_test_id("stRadioOption").filter(
        has_text="Sample dataset"
    ).click()
    expect(page.get_by_text("examples.csv: 34 rows loaded, 9 columns (csv).")).to_be_visible()
    wait_until_idle(page)
    page.get_by_role("button", name="Run", exact=True).click()

    expect(page.get_by_text(DONE, exact=False)).to_be_visible(timeout=JOB_TIMEOUT)
    wait_until_idle(page)
    screenshot("batch_results")
    # Prompt alignment of all 34 rows, one call each (the dataset's 6 system messages: both mode).
    assert judge.chat_call_count == 34

    go_to(page, "History")
    open_button = page.get_by_test_id("stBaseButton-primary").filter(has_text="Open")
    expect(open_button).to_be_enabled()
    open_button.click()
    expect(page.get_by_text(DONE, exact=False)).to_be_visible(timeout=JOB_TIMEOUT)
    wait_until_idle(page)
    screenshot("history_run")
    expect(page.get_by_test_id("stException")).to_have_count(0)
    # The run's Cost tile shows its whole value (a small cost such as $0.000903 was cut to "$0.000…" when six
    # tiles shared one row), at this 1400 px window and at 1000 px.
    cost = page.get_by_test_id("stMetric").filter(has=page.get_by_text("Cost", exact=True)).first
    for width in (1400, 1000):
        page.set_viewport_size({"width": width, "height": 1000})
        wait_until_idle(page)
        value = cost.get_by_test_id("stMetricValue")
        assert re.fullmatch(r"\$0\.\d{4,}", value.inner_text().strip())  # a small cost, many digits
        cut = value.evaluate("el => [el, ...el.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1)")
        assert not cut, f"the Cost tile's value is cut at {width} px"
        screenshot(f"history_run_tiles_{width}")
    page.set_viewport_size({"width": 1400, "height": 1000})

    # The export is written when its button is clicked, and the browser gets the file.
    page.get_by_role("tab", name="Export").click()
    wait_until_idle(page)
    with page.expect_download() as download:
        page.get_by_role("button", name="Plain CSV (for data tools)").click()
    assert download.value.suggested_filename.endswith("-plain.csv")
    with open(download.value.path(), newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    # One row per item and scorer: 34 items × 2 scorers; the 29 blank references are not scored, not 0.
    assert len(rows) == 68
    assert sum(r["status"] == "missing_input" for r in rows) == 29
    assert all(r["score"] == "" for r in rows if r["status"] == "missing_input")
