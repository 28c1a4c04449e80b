"""The Review page in a real browser: label rows with the keyboard and watch the agreement numbers move.

The run is stored in the served app's database before the page opens. Its scorer is the
textual difference (no judge): against "abc", "abc" → 1; "abx" → 2·2/6 = 0.667; "xyz" → 0;
"ab" → 2·2/5 × (1 − 1/3) = 0.533. At the default threshold 0.5 the judge passes rows 0, 1 and 3.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Locator, Page, expect

from scorers import EvalItem, Store, create_textual_difference_scorer, run_evals
from scorers.analysis.labels import current_labels, reviewer_labels, save_label
from scorers.analysis.uncertainty import save_rejudge

FIRST_LOAD_TIMEOUT = 90_000


def server_db(server) -> Path:
    """The served app's database (``SCORER_STUDIO_DB`` beside the server's log)."""
    return server.log_path.parent / "scorer_studio.db"


def store_run(path: Path) -> str:
    store = Store(path)
    try:
        items = [
            EvalItem(f"row{n}", {"input": f"Say abc ({n})", "output": {"text": out}, "ground_truth": "abc"})
            for n, out in enumerate(["abc", "abx", "xyz", "ab"])
        ]
        return run_evals(items, [create_textual_difference_scorer()], store=store, run_name="keyboard run").run_id
    finally:
        store.close()


def metric(page: Page, label: str) -> Locator:
    box = page.get_by_test_id("stMetric").filter(
        has=page.get_by_test_id("stMetricLabel").get_by_text(label, exact=True)
    )
    return box.get_by_test_id("stMetricValue")


def wait_until_idle(page: Page) -> None:
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0)


def heading(page: Page) -> Locator:
    return page.get_by_test_id("stMarkdownContainer").filter(has_text="Row ").filter(has_text="(all rows)")


def press(page: Page, key: str) -> None:
    """Press a key with the focus on the page, not in a field, once the last rerun is over."""
    wait_until_idle(page)
    page.keyboard.press(key)


def test_label_rows_with_the_keyboard(page: Page, app_url: str, streamlit_server, screenshot):
    db = server_db(streamlit_server)
    run_id = store_run(db)

    page.goto(app_url)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Review", exact=True).click(timeout=FIRST_LOAD_TIMEOUT)
    expect(page.get_by_role("heading", name="Review")).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    expect(metric(page, "Labelled")).to_have_text("0 of 4", timeout=FIRST_LOAD_TIMEOUT)
    expect(metric(page, "Agreement")).to_have_text("—")
    expect(heading(page)).to_contain_text("Row 1 of 4")

    name = page.get_by_role("textbox", name="Your name", exact=True)
    name.fill("Ann")
    name.press("Enter")
    # Until the rerun has drawn the row again, the form of the run before (disabled: no name yet) can stand
    # beside the new one: wait for one form, enabled.
    pass_button = page.get_by_role("button", name="Pass Shortcut U")
    expect(pass_button.and_(page.locator(":enabled"))).to_have_count(1)
    wait_until_idle(page)
    expect(pass_button).to_have_count(1)
    expect(pass_button).to_be_enabled()
    # The row's view draws no chart and no code block (Plotly's and the highlighter's modules stay unloaded).
    expect(page.locator(".js-plotly-plot")).to_have_count(0)
    expect(page.get_by_test_id("stCode")).to_have_count(0)
    name.press("Escape")  # leave the field so the letter keys reach the buttons

    press(page, "u")  # thumbs up on row0 (judge 1 → pass): agree
    expect(metric(page, "Labelled")).to_have_text("1 of 4")
    expect(metric(page, "Agreement")).to_have_text("100%")
    expect(heading(page)).to_contain_text("Row 2 of 4")

    press(page, "d")  # thumbs down on row1 (judge 0.667 → pass): disagree
    expect(metric(page, "Labelled")).to_have_text("2 of 4")
    expect(metric(page, "Agreement")).to_have_text("50%")
    # judge T T, people T F: p_o = 1/2; p_e = 1·1/2 + 0·1/2 = 1/2; κ = 0.
    expect(metric(page, "Cohen's κ")).to_have_text("0.000")
    expect(heading(page)).to_contain_text("Row 3 of 4")

    press(page, "k")
    expect(heading(page)).to_contain_text("Row 2 of 4")
    press(page, "j")
    expect(heading(page)).to_contain_text("Row 3 of 4")

    press(page, "s")  # the score field of row2 (judge 0 → fail)
    score = page.get_by_role("spinbutton", name="Your score (0–1) · S")
    expect(score).to_be_focused()
    page.keyboard.type("0.1")
    page.keyboard.press("Enter")  # saves: 0.1 < 0.5, the person fails it too
    expect(metric(page, "Labelled")).to_have_text("3 of 4")
    expect(metric(page, "Agreement")).to_have_text("67%")
    # judge T T F, people T F F: p_o = 2/3; p_e = 2/3·1/3 + 1/3·2/3 = 4/9; κ = (2/9)/(5/9) = 0.4.
    expect(metric(page, "Cohen's κ")).to_have_text("0.400")
    expect(heading(page)).to_contain_text("Row 4 of 4")

    press(page, "m")  # the comment of row3
    comment = page.get_by_role("textbox", name="Comment · M")
    expect(comment).to_be_focused()
    page.keyboard.type("close enough")
    page.keyboard.press("Escape")
    expect(comment).not_to_be_focused()
    press(page, "u")  # row3 (judge 0.533 → pass): agree
    expect(metric(page, "Labelled")).to_have_text("4 of 4")
    expect(metric(page, "Agreement")).to_have_text("75%")
    # judge T T F T, people T F F T: p_o = 3/4; p_e = 3/4·1/2 + 1/4·1/2 = 1/2; κ = 0.5.
    expect(metric(page, "Cohen's κ")).to_have_text("0.500")
    wait_until_idle(page)
    screenshot("review_keyboard_labelled")

    # The chart on request: row3 "ab" against "abc" is 1 word-level change; it stays open on row2 ("xyz").
    page.get_by_test_id("stExpander").get_by_text("Chart of the ratio, confidence and length difference").click()
    expect(page.locator(".js-plotly-plot").filter(has_text="1 word-level change")).to_be_visible()
    press(page, "k")
    expect(heading(page)).to_contain_text("Row 3 of 4")
    wait_until_idle(page)
    expect(page.locator(".js-plotly-plot")).to_have_count(1)

    page.get_by_test_id("stRadio").get_by_text("Agreement", exact=True).click()
    expect(page.get_by_text("Only 4 labelled row(s): with fewer than 10", exact=False)).to_be_visible()
    expect(metric(page, "Agreement rate")).to_have_text("75%")
    expect(page.locator(".js-plotly-plot").filter(has_text="Judge vs people")).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
    wait_until_idle(page)
    screenshot("review_agreement_panel")

    store = Store(db)
    try:
        labels = current_labels(store, run_id)
        assert [
            (i, lb.reviewer, lb.human_pass, lb.human_score, lb.comment) for (i, _), lb in sorted(labels.items())
        ] == [
            (0, "Ann", True, None, ""),
            (1, "Ann", False, None, ""),
            (2, "Ann", None, 0.1, ""),
            (3, "Ann", True, None, "close enough"),
        ]
    finally:
        store.close()


def test_label_import_with_a_conflict(page: Page, app_url: str, streamlit_server, tmp_path: Path):
    db = server_db(streamlit_server)
    run_id = store_run(db)
    store = Store(db)
    try:
        save_label(store, run_id, 0, "textual-difference", reviewer="Bea", human_pass=True, human_score=1.0)
        save_label(store, run_id, 1, "textual-difference", reviewer="Ann", human_pass=True)
    finally:
        store.close()
    labels_file = tmp_path / "verdicts.csv"
    labels_file.write_text("item_id,verdict\nrow2,fail\nrow0,fail\nrow1,fail\n", encoding="utf-8")

    page.goto(app_url)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Review").click()
    expect(page.get_by_role("heading", name="Review")).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    page.get_by_role("combobox", name="Run").click()
    page.get_by_role("option").filter(has_text=run_id).first.click()
    wait_until_idle(page)
    name = page.get_by_role("textbox", name="Your name", exact=True)
    name.fill("Ann")
    name.press("Enter")
    wait_until_idle(page)
    page.get_by_test_id("stRadio").get_by_text("Import and export", exact=True).click()
    page.locator("input[type=file]").first.set_input_files(labels_file)
    # Matched by the item_id column (the file's rows are in another order); Ann's own label of row1 is a
    # conflict, Bea's label of row0 is hers, kept apart.
    expect(page.get_by_text("1 row(s) already have a different label from you (Ann)", exact=False)).to_be_visible(
        timeout=FIRST_LOAD_TIMEOUT
    )
    expect(page.get_by_role("button").filter(has_text="Import 2 label(s)")).to_be_enabled()
    page.get_by_role("button").filter(has_text="Import 2 label(s)").click()
    expect(page.get_by_text("Imported 2 label(s) from verdicts.csv; 1 row(s) kept their label.")).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
    store = Store(db)
    try:
        own = reviewer_labels(store, run_id, "textual-difference")
        assert {who: {i: lb.human_pass for i, lb in rows.items()} for who, rows in own.items()} == {
            "Bea": {0: True},
            "Ann": {0: False, 1: True, 2: False},
        }
        assert current_labels(store, run_id)[(2, "textual-difference")].source == "import: verdicts.csv"
    finally:
        store.close()


def test_the_least_sure_queue_says_why_each_row_is_there(page: Page, app_url: str, streamlit_server):
    db = server_db(streamlit_server)
    run_id = store_run(db)
    store = Store(db)
    try:
        # row2 (stored 0 → fail at 0.5) re-judged 0.9, 0.1, 0.8: two of three repetitions pass → flipped 2/3.
        save_rejudge(store, run_id, "textual-difference", params="1 row(s) × 3", repetitions={2: [0.9, 0.1, 0.8]})
    finally:
        store.close()
    # Queue: row2 (flip share 2/3) first; then no flips, nearest the threshold first: row3 |0.533 − 0.5| = 0.0333,
    # row1 0.167, row0 0.5.
    page.goto(app_url)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Review").click(timeout=FIRST_LOAD_TIMEOUT)
    expect(page.get_by_role("heading", name="Review")).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    page.get_by_role("combobox", name="Run").click()
    page.get_by_role("option").filter(has_text=run_id).first.click()
    wait_until_idle(page)
    name = page.get_by_role("textbox", name="Your name", exact=True)
    name.fill("Ann")
    name.press("Enter")
    wait_until_idle(page)
    page.get_by_test_id("stRadio").get_by_text("Mine: judge least sure first", exact=True).click()
    queue = page.get_by_test_id("stMarkdownContainer").filter(has_text="(mine: judge least sure first)")
    expect(queue).to_contain_text("Row 4 of 4")  # the row shown before, row0, is last in this queue
    expect(page.get_by_text("Why here: 0.5 from the threshold")).to_be_visible()
    for position in (3, 2, 1):
        wait_until_idle(page)
        page.get_by_role("button", name="Previous").click()
        expect(queue).to_contain_text(f"Row {position} of 4")
    expect(queue).to_contain_text("row2")
    expect(page.get_by_text("Why here: flipped on re-judge 2/3 · 0.5 from the threshold")).to_be_visible()
    # Labelling it takes it out of Ann's queue; the next is row3, nearest the threshold.
    page.get_by_role("button", name="Fail Shortcut D").click()
    expect(queue).to_contain_text("Row 1 of 3")
    expect(queue).to_contain_text("row3")
    expect(page.get_by_text("Why here: 0.0333 from the threshold")).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
