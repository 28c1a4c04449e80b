"""The Evaluate page in a real browser: Streamlit serves app.py, Chromium drives it.

The judge is the fake OpenAI-compatible server (``judge`` fixture); expected scores
are worked out by hand from the formulas in the comments.
"""

from __future__ import annotations

from pathlib import Path

from fake_openai import FakeOpenAI, Reply
from judge_data import both_analysis
from playwright.sync_api import Locator, Page, expect

ROOT = Path(__file__).resolve().parents[2]
# Waits that can be long on a busy machine (ms): the first script run of a fresh server
# imports pandas, plotly and the scorers; the first result on a page loads the
# frontend's metric, HTML and Plotly components lazily (the Plotly bundle is large).
FIRST_LOAD_TIMEOUT = 60_000
RESULT_TIMEOUT = 60_000


def open_evaluate(page: Page, app_url: str) -> None:
    """Load the app and wait until the Evaluate form is drawn and the script run is over.

    Fails at once, with the exception's text, when the page shows a Python exception.
    """
    page.goto(app_url)
    run_button = page.get_by_role("button", name="Run", exact=True)
    exception = page.get_by_test_id("stException")
    expect(run_button.or_(exception).first).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    assert exception.count() == 0, f"the page shows an exception: {exception.first.inner_text()}"
    wait_until_idle(page)


def wait_until_idle(page: Page) -> None:
    """Wait until Streamlit's running indicator (the status widget with its Stop button) is gone.

    It only shows while a script run is in progress; right after an action the rerun may
    not have started yet, so tests wait for the content they expect, and use this to let
    a run that has started finish.
    """
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0)


def text_area(page: Page, label: str) -> Locator:
    return page.get_by_role("textbox", name=label, exact=True)


def choose_radio(page: Page, group: str, option: str) -> None:
    """Click the option's label in the radio group named ``group`` and wait until it is selected."""
    radiogroup = page.get_by_role("radiogroup", name=group, exact=True)
    radiogroup.get_by_test_id("stRadioOption").filter(has_text=option).click()
    expect(radiogroup.get_by_role("radio", name=option, exact=True)).to_be_checked()


def scorer_box(page: Page) -> Locator:
    """The Scorer selectbox."""
    return page.get_by_test_id("stSelectbox").filter(has=page.get_by_text("Scorer", exact=True))


def scorer_value(page: Page) -> Locator:
    """The text input that shows the Scorer selectbox's current choice."""
    return scorer_box(page).locator("input")


def choose_scorer(page: Page, name: str) -> None:
    """Open the Scorer selectbox, pick ``name`` and wait until it shows."""
    scorer_box(page).click()
    page.get_by_role("option", name=name, exact=True).click()
    expect(scorer_value(page)).to_have_value(name)


def metric(page: Page, label: str) -> Locator:
    """The value of the ``st.metric`` whose label is exactly ``label``."""
    box = page.get_by_test_id("stMetric").filter(
        has=page.get_by_test_id("stMetricLabel").get_by_text(label, exact=True)
    )
    return box.get_by_test_id("stMetricValue")


def run(page: Page) -> None:
    page.get_by_role("button", name="Run", exact=True).click()


def test_prompt_alignment_both_mode_scale_10(page: Page, app_url: str, judge: FakeOpenAI, screenshot):
    seen: list[dict] = []

    def respond(request: dict) -> Reply:
        seen.append(request)
        return Reply.json(both_analysis(user=(0.9, 0.8, 0.7, 1.0), system=(1.0, 1.0, 1.0, 1.0)))

    judge.responder = respond
    system = "You are a patient tutor for beginners."
    prompt = "Write a Python function to calculate factorial with error handling."
    response = "def factorial(n):\n    if n < 0:\n        raise ValueError('negative')\n    return 1 if n < 2 else n * factorial(n - 1)"

    open_evaluate(page, app_url)
    text_area(page, "System message(s)").fill(system)
    text_area(page, "User prompt").fill(prompt)
    text_area(page, "Response to evaluate").fill(response)
    choose_radio(page, "Evaluation mode", "both")
    scale = page.get_by_role("spinbutton", name="Scale", exact=True)
    scale.fill("10")
    scale.press("Tab")
    wait_until_idle(page)
    run(page)

    # U = .4·.9 + .3·.8 + .2·.7 + .1·1.0 = 0.84; S = .35·1 + .35·1 + .15·1 + .15·1 = 1.0;
    # W = .7·0.84 + .3·1.0 = 0.888; score = W × 10 = 8.88 (0.888 lies in the 0.8–0.9 band).
    expect(metric(page, "Prompt alignment (0–10)")).to_have_text("8.880", timeout=RESULT_TIMEOUT)
    expect(metric(page, "User score (0–1, weight 70%)")).to_have_text("0.840")
    expect(metric(page, "System score (0–1, weight 30%)")).to_have_text("1.000")
    expect(page.get_by_text("very good alignment with small gaps").first).to_be_visible()
    expect(page.get_by_text("Evaluation mode: both", exact=True)).to_be_visible()

    # The gauge writes the tile's figure; the line under the chart says how the score comes from W.
    expect(page.locator(".js-plotly-plot").filter(has_text="very good alignment").first).to_contain_text("8.880")
    expect(
        page.get_by_text(
            "Weighted score W = 0.8880 (the sum of the contributions); the score is W × 10 = 8.8800 rounded half up "
            "to 2 decimals (Mastra's rule): 8.880."
        )
    ).to_be_visible()
    chart = page.locator(".js-plotly-plot").filter(has_text="Weighted score W = 0.8880")
    expect(chart).to_be_visible(timeout=RESULT_TIMEOUT)
    expect(chart.locator(".plot-container svg").first).to_be_visible()
    bars = chart.locator(".barlayer .point path")
    # 4 dimensions × 2 sources × 2 panels (score, contribution).
    expect(bars).to_have_count(16)
    drawn = [box for box in (bar.bounding_box() for bar in bars.all()) if box and box["width"] > 1]
    assert len(drawn) == 16, f"only {len(drawn)} of 16 bars have a visible width"
    for label in ("Intent alignment", "Requirements fulfillment", "Completeness", "Response appropriateness"):
        expect(chart.get_by_text(label, exact=True).first).to_be_visible()
    wait_until_idle(page)
    screenshot("prompt_alignment_result")

    assert len(seen) == 1, f"expected one judge call, got {len(seen)}"
    sent = judge.last_prompt_text()
    for typed in (system, prompt, response):
        assert typed in sent
    assert judge.last_api_key() == "test-key"
    assert "test-key" not in page.content()
    expect(page.get_by_test_id("stSidebar").get_by_text("API key: from environment", exact=True)).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_textual_difference_without_a_judge(page: Page, app_url: str, judge: FakeOpenAI):
    open_evaluate(page, app_url)
    choose_scorer(page, "Textual difference")
    expect(page.get_by_role("radiogroup", name="Evaluation mode")).to_have_count(0)
    text_area(page, "Response to evaluate").fill("The quick brown fox")
    text_area(page, "Ground truth (optional)").fill("The quick brown cat")
    run(page)

    # Characters: the longest common subsequence is "The quick brown " (16 of each 19):
    # ratio = 2·16 / (19 + 19) = 32/38 = 0.842; one word replaced; equal lengths.
    expect(metric(page, "Ratio")).to_have_text("0.842", timeout=RESULT_TIMEOUT)
    expect(metric(page, "Score")).to_have_text("0.842")
    expect(metric(page, "Changes")).to_have_text("1")
    expect(metric(page, "Length diff")).to_have_text("0.000")

    diff = page.get_by_test_id("stHtml")
    expect(diff).to_contain_text("Ground truth")  # the reference column's title
    removed = diff.locator("del", has_text="cat")
    added = diff.locator("ins", has_text="fox")
    expect(removed).to_be_visible(timeout=RESULT_TIMEOUT)
    expect(added).to_be_visible()
    expect(removed).to_have_css("text-decoration-line", "line-through")
    expect(removed).to_have_css("background-color", "rgba(245, 158, 11, 0.35)")
    expect(added).to_have_css("background-color", "rgba(245, 158, 11, 0.35)")
    expect(page.locator(".js-plotly-plot").filter(has_text="1 word-level change")).to_be_visible(timeout=RESULT_TIMEOUT)
    assert judge.requests == [], "textual difference must not call the judge"
    expect(page.get_by_test_id("stException")).to_have_count(0)
