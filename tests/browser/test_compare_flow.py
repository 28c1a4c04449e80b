"""The Compare page in a real browser: generate two variants' responses, score them, read the comparison.

Streamlit serves app.py, Chromium drives it; the target model and the judge are the fake
OpenAI-compatible server (``judge`` fixture).
"""

from __future__ import annotations

from typing import Any

from fake_openai import FakeOpenAI, Reply
from judge_data import dimension_set, single_analysis
from playwright.sync_api import Locator, Page, expect

# The first run of a fresh server imports pandas, plotly and the scorers, and the Compare page's first
# run scipy and the comparison modules: allow them time on a busy machine.
FIRST_LOAD_TIMEOUT = 120_000
JOB_TIMEOUT = 90_000

USER = single_analysis(0.9, 0.8, 0.7, 1.0)
BOTH = {"user": dimension_set(1.0, 1.0, 1.0, 1.0), "system": dimension_set(0.5, 0.5, 0.5, 0.5),
        "overallAssessment": "Fine."}  # fmt: skip


def respond(body: dict[str, Any]) -> Reply:
    """The judge by its schema; the target model: a long answer without a system prompt, a short one with."""
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    if schema is not None:
        return Reply.json(BOTH if schema == "prompt_alignment_both" else USER)
    if body["messages"][0]["role"] == "system":
        return Reply.content("Short answer.")
    return Reply.content("A longer answer that explains every step of the reasoning in detail.")


def wait_until_idle(page: Page) -> None:
    """Wait until Streamlit's running indicator is gone (see test_evaluate_flow.py)."""
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0)


def metric(page: Page, label: str) -> Locator:
    """The value of the ``st.metric`` whose label is exactly ``label``."""
    box = page.get_by_test_id("stMetric").filter(
        has=page.get_by_test_id("stMetricLabel").get_by_text(label, exact=True)
    )
    return box.get_by_test_id("stMetricValue")


def test_generate_score_and_compare_two_variants(page: Page, app_url: str, judge: FakeOpenAI, screenshot):
    judge.responder = respond
    page.goto(app_url)  # the router first (a deep link on a fresh server runs the page without st.navigation)
    expect(page.get_by_role("heading", name="Evaluate")).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Compare").click()
    go = page.get_by_role("button").filter(has_text="Generate & score")  # its name also has the icon
    expect(go).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    wait_until_idle(page)
    expect(page.get_by_text("examples.csv: 34 rows loaded, 9 columns (csv).", exact=True)).to_be_visible()

    # Fewer rows: 3 questions × 2 variants.
    rows = page.get_by_role("spinbutton", name="Rows to use", exact=True)
    rows.fill("3")
    rows.press("Tab")
    wait_until_idle(page)
    expect(page.get_by_text("3 rows × 2 variants = 6 responses to generate", exact=False)).to_be_visible()

    # An unknown column in a template is caught as it is typed, with where it is.
    template = page.get_by_role("textbox", name="Prompt template").nth(1)
    template.fill("Q: {question}")
    template.press("Control+Enter")
    expect(page.get_by_text("the prompt template uses {question} at line 1, column 4", exact=False)).to_be_visible()
    expect(go).to_be_disabled()
    template.fill("Q: {prompt}")
    template.press("Control+Enter")
    wait_until_idle(page)
    expect(go).to_be_enabled()

    go.click()
    expect(page.get_by_text("Stored as run", exact=False)).to_be_visible(timeout=JOB_TIMEOUT)
    expect(metric(page, "Responses generated").first).to_have_text("6", timeout=JOB_TIMEOUT)
    # 6 generations, then prompt alignment judges the 6 responses.
    assert judge.chat_call_count == 12

    # The page keeps ?run=ID in the address (a history update, not a navigation): do not wait for one.
    page.get_by_role("tab", name="2. Comparison").click(no_wait_after=True)
    expect(page.get_by_role("heading", name="Leaderboard")).to_be_visible(timeout=JOB_TIMEOUT)
    # The Comparison tab's tables (the first tab's, hidden now, come first in the page): the generation cost per
    # variant, then the leaderboard.
    tables = page.locator('[data-testid="stDataFrame"]:visible')
    expect(tables.nth(1)).to_be_visible()
    # Prompt alignment: both variants are judged on the user prompt only (one basis): 0.84 each, so
    # the head to head on it says they scored the same.
    chart = page.locator(".js-plotly-plot").filter(has_text="Prompt alignment: mean per variant")
    expect(chart).to_be_visible()
    expect(chart.locator(".barlayer .point path")).to_have_count(2)
    expect(
        page.locator(".js-plotly-plot").filter(has_text="Textual difference (vs ground truth): scores")
    ).to_be_visible()
    expect(page.get_by_role("heading", name="Head to head")).to_be_visible()
    expect(page.get_by_text("Variant A and B scored the same on all 3 questions", exact=False).first).to_be_visible()
    expect(metric(page, "Wilcoxon p")).to_be_visible()
    wait_until_idle(page)
    screenshot("compare_two_variants")
    expect(page.get_by_test_id("stException")).to_have_count(0)
    assert "test-key" not in page.content()


LONG_CSV = (
    "question_id,category,model,turn,response\n"
    "81,writing,gpt-4,Name a primary colour.,red\n"
    "81,writing,llama-13b,Name a primary colour.,rad\n"
    "81,writing,vicuna-13b,Name a primary colour.,blue\n"
    "82,math,gpt-4,What is 3 times 4?,twelve\n"
    "82,math,llama-13b,What is 3 times 4?,12\n"
    "82,math,vicuna-13b,What is 3 times 4?,twelve\n"
)
"""MT-Bench-like long layout (written for this test): one row per question and model."""


def test_long_layout_with_a_question_id_and_the_per_question_view(
    page: Page, app_url: str, judge: FakeOpenAI, tmp_path
):
    judge.responder = respond
    data = tmp_path / "mt_bench_long.csv"
    data.write_text(LONG_CSV, encoding="utf-8")
    page.goto(app_url)
    expect(page.get_by_role("heading", name="Evaluate")).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Compare").click()
    expect(page.get_by_role("heading", name="Compare")).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    wait_until_idle(page)
    page.get_by_text("Upload a file", exact=True).click(no_wait_after=True)
    page.locator("input[type=file]").first.set_input_files(data)
    expect(page.get_by_text("mt_bench_long.csv: 6 rows loaded", exact=False)).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    page.get_by_text("Use existing responses", exact=True).click(no_wait_after=True)
    page.get_by_text("One row per response, with a variant or model column", exact=True).click(no_wait_after=True)
    wait_until_idle(page)
    # No column is named like a question: the box is left to choose, and Score is blocked until it is.
    expect(page.get_by_text("Choose the question column", exact=False)).to_be_visible()
    expect(page.get_by_role("button").filter(has_text="Score").first).to_be_disabled()
    expect(page.get_by_role("combobox", name="Response column *")).to_have_value("response")
    # The question column is "turn"; question_id is the id (it repeats, once per model: no error).
    question = page.get_by_role("combobox", name="Question column *")
    question.click(no_wait_after=True)
    page.keyboard.type("turn")  # typed: the dropdown's options are drawn lazily
    page.keyboard.press("Enter")
    wait_until_idle(page)
    expect(page.get_by_role("combobox", name="Question id column")).to_have_value("question_id")
    expect(page.get_by_role("combobox", name="Variant (or model) column")).to_have_value("model")
    expect(page.get_by_text("6 responses of 3 variant(s): gpt-4, llama-13b, vicuna-13b.")).to_be_visible()
    expect(page.get_by_text("repeats values")).to_have_count(0)
    # The default scorers (prompt alignment, judged by the fake judge, and textual difference).
    page.get_by_role("button").filter(has_text="Score").first.click(no_wait_after=True)
    expect(page.get_by_text("Stored as run", exact=False)).to_be_visible(timeout=JOB_TIMEOUT)

    # The page keeps ?run=ID in the address (a history update, not a navigation): do not wait for one.
    page.get_by_role("tab", name="2. Comparison").click(no_wait_after=True)
    expect(page.get_by_role("heading", name="Ranking of all variants")).to_be_visible(timeout=JOB_TIMEOUT)
    expect(page.get_by_role("heading", name="Question by question")).to_be_visible()
    # The per-question view: every model's response to question 81 side by side, with its score.
    expect(page.get_by_text("gpt-4 · Prompt alignment", exact=False).first).to_be_visible()
    expect(page.get_by_text("vicuna-13b · Prompt alignment", exact=False).first).to_be_visible()
    expect(page.get_by_role("heading", name="Breakdown by group")).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
