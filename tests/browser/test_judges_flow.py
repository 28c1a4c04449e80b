"""The Judges and Catalogue pages in a real browser: build a judge, try it, save it, find it in the
Catalogue (and run its example there) and in the Evaluate page's scorer list.

The judge is the fake OpenAI-compatible server (``judge`` fixture).
"""

from __future__ import annotations

from fake_openai import FakeOpenAI, Reply
from playwright.sync_api import Locator, Page, expect

# The first run of a fresh server imports pandas, plotly and the scorers: allow it time.
FIRST_LOAD_TIMEOUT = 45_000
# A judged result redraws the whole builder page; on a loaded CI machine that takes a while.
RESULT_TIMEOUT = 45_000


def wait_until_idle(page: Page) -> None:
    """Wait until Streamlit's running indicator is gone (see test_evaluate_flow.wait_until_idle)."""
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0)


def textbox(page: Page, label: str) -> Locator:
    return page.get_by_role("textbox", name=label, exact=True)


def type_into(page: Page, label: str, text: str) -> None:
    """Fill a text input or text area and commit it (blur), then let the rerun finish."""
    box = textbox(page, label)
    box.fill(text)
    box.press("Tab")
    expect(box).to_have_value(text)
    wait_until_idle(page)


def choose(page: Page, label: str, option: str) -> None:
    """Pick ``option`` in the select box ``label``."""
    box = page.get_by_role("combobox", name=label, exact=True)
    box.click()
    page.get_by_role("option", name=option, exact=True).click()
    expect(box).to_have_value(option)
    wait_until_idle(page)


def metric(page: Page, label: str) -> Locator:
    box = page.get_by_test_id("stMetric").filter(
        has=page.get_by_test_id("stMetricLabel").get_by_text(label, exact=True)
    )
    return box.get_by_test_id("stMetricValue")


def test_build_try_save_and_find_a_judge(page: Page, app_url: str, judge: FakeOpenAI, screenshot):
    seen: list[dict] = []

    def respond(request: dict) -> Reply:
        seen.append(request)
        return Reply.json({"isPolite": False, "rudePhrases": ["calm down"]})

    judge.responder = respond
    page.goto(app_url)
    nav = page.get_by_test_id("stSidebarNav")
    nav.get_by_role("link", name="Judges", exact=True).click(timeout=FIRST_LOAD_TIMEOUT)
    expect(page.get_by_role("heading", name="Builder")).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    wait_until_idle(page)

    type_into(page, "Name", "Politeness check")
    type_into(
        page, "Instructions (the judge's role, its system message)", "You check the tone of customer-service replies."
    )
    template = 'Is this reply polite?\n{output}\nAnswer like {"isPolite": true, "rudePhrases": []}.'
    type_into(page, "Prompt template", template)
    expect(page.get_by_text("Placeholders found:")).to_contain_text("{output}")
    type_into(page, "Field 1 name", "isPolite")
    page.get_by_role("button", name="Add a field").click()
    expect(textbox(page, "Field 2 name")).to_be_visible()
    wait_until_idle(page)
    type_into(page, "Field 2 name", "rudePhrases")
    choose(page, "Field 2 type", "list of strings")
    type_into(page, "Reason template", "Polite: {isPolite}. Rude phrases: {rudePhrases}.")

    # Only the rules these fields allow are offered; the boolean rule is chosen, true is good.
    expect(page.get_by_role("combobox", name="Score rule", exact=True)).to_have_value("Boolean field → 1 or 0")
    page.get_by_role("combobox", name="Score rule", exact=True).click()
    expect(page.get_by_role("option")).to_have_text(["Boolean field → 1 or 0", "List field: count the items"])
    page.keyboard.press("Escape")
    wait_until_idle(page)

    type_into(page, "User prompt", "Where is my parcel?")
    type_into(page, "Response to evaluate", "Calm down, it is coming.")
    page.get_by_role("button", name="Try it", exact=True).click()

    # isPolite is false and true is good: score 0 (× scale 1).
    expect(metric(page, "Score")).to_have_text("0.000", timeout=RESULT_TIMEOUT)
    expect(page.get_by_text("Reason: Polite: false. Rude phrases: calm down.")).to_be_visible()
    expect(page.get_by_text("The judge's raw reply")).to_be_visible()
    wait_until_idle(page)
    screenshot("judges_try_it")
    assert len(seen) == 1
    assert "<response>\nCalm down, it is coming.\n</response>" in judge.last_prompt_text()

    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_text("Saved Politeness check as v1 (judge:politeness-check@v1).")).to_be_visible(
        timeout=RESULT_TIMEOUT
    )
    expect(page.get_by_role("combobox", name="Judge", exact=True)).to_have_value("Politeness check (v1)")
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    wait_until_idle(page)
    screenshot("judges_saved")

    nav.get_by_role("link", name="Catalogue", exact=True).click()
    expect(page.get_by_role("heading", name="Catalogue")).to_be_visible()
    wait_until_idle(page)
    choose(page, "Scorer", "Politeness check · judge:politeness-check")
    expect(page.get_by_text("1 if isPolite is true, else 0", exact=False).first).to_be_visible()
    page.get_by_role("button", name="Run example", exact=True).click()
    expect(metric(page, "Score")).to_have_text("0.000", timeout=RESULT_TIMEOUT)
    wait_until_idle(page)
    screenshot("catalogue_saved_judge")
    assert len(seen) == 2
    assert "Calm down, it is coming." in judge.last_prompt_text()  # the example kept from "Try it"
    expect(page.get_by_test_id("stException")).to_have_count(0)

    # The Evaluate page offers it too (its scorer list is scorer_specs(store)).
    nav.get_by_role("link", name="Evaluate", exact=True).click()
    scorer = page.get_by_role("combobox", name="Scorer", exact=True)
    expect(scorer).to_be_visible()
    wait_until_idle(page)
    scorer.click()
    page.keyboard.type("Politeness")
    expect(page.get_by_role("option", name="Politeness check", exact=True)).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("stException")).to_have_count(0)
