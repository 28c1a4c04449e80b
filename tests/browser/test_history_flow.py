"""History's run view in a real browser: a click on a histogram bar in Distributions filters the rows table.

The run is stored in the served app's database before the page opens. Its scorer is the
textual difference against "abc" (no judge): "abc" → 1 (rows 0 and 4); "abx" → 2·2/6 = 0.667;
"xyz" → 0; "ab" → 2·2/5 × (1 − 1/3) = 0.533. The histogram has 20 bins of width 0.05 over
0–1, the last holding 0.95 ≤ score ≤ 1: rows 0 and 4, its bar the rightmost and the tallest (2).
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from scorers import EvalItem, Store, create_textual_difference_scorer, run_evals

FIRST_LOAD_TIMEOUT = 90_000


def store_run(path: Path) -> str:
    store = Store(path)
    try:
        items = [
            EvalItem(f"row{n}", {"input": f"Say abc ({n})", "output": {"text": out}, "ground_truth": "abc"})
            for n, out in enumerate(["abc", "abx", "xyz", "ab", "abc"])
        ]
        return run_evals(items, [create_textual_difference_scorer()], store=store, run_name="histogram run").run_id
    finally:
        store.close()


def wait_until_idle(page: Page) -> None:
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0)


def test_a_histogram_bar_filters_the_rows_table(page: Page, app_url: str, streamlit_server, screenshot):
    run_id = store_run(streamlit_server.log_path.parent / "scorer_studio.db")  # the served app's database
    page.goto(app_url)  # the router first (a deep link on a fresh server runs the page without st.navigation)
    expect(page.get_by_role("heading", name="Evaluate", level=1)).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    page.goto(f"{app_url}/history?run={run_id}")
    expect(page.get_by_text("Completed: all 5 outcomes scored.")).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    wait_until_idle(page)

    page.get_by_role("tab", name="Distributions").click()
    histogram = page.locator(f".st-key-history_{run_id}_hist_textual-difference")
    bars = histogram.locator(".bars .point path")
    expect(bars.last).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)  # Plotly's bundle loads on the first chart
    wait_until_idle(page)
    # Plotly's drag layer lies over the bars: click where the bar of the bin 0.95 to 1 is drawn.
    # Plotly clicks the point it hovers: hover first, until its label shows the bin.
    bars.last.scroll_into_view_if_needed()
    box = bars.last.bounding_box()  # in the viewport's coordinates, as the mouse's
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x - 20, y + 20)
    page.mouse.move(x, y, steps=5)
    expect(page.locator(".hovertext")).to_contain_text("score 0.950 to 1.002 items")  # 1.00, then "2 items"
    page.mouse.click(x, y)
    wait_until_idle(page)
    screenshot("history_histogram_selection")

    page.get_by_role("tab", name="Rows and drill-down").click()
    # 5 rows (one scorer); the bin holds rows 0 and 4 only.
    expect(page.get_by_text("2 of 5 rows (one per item and scorer)")).to_be_visible()
    expect(page.get_by_text("Chart selection:")).to_contain_text("score 0.95 to 1")
    wait_until_idle(page)
    # The chooser lists the items of the table's page. ArrowDown opens its list when the click only focused it.
    chooser = page.get_by_role("combobox", name="Item to inspect")
    chooser.click()
    chooser.press("ArrowDown")
    options = page.get_by_role("option")
    expect(options).to_have_count(2)
    expect(options.nth(0)).to_contain_text("row0")
    expect(options.nth(1)).to_contain_text("row4")
    page.keyboard.press("Escape")

    # Clearing the chart filter brings every row back.
    page.get_by_role("button", name="Clear chart filter").click()
    expect(page.get_by_text("5 of 5 rows (one per item and scorer)")).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
