"""The CI gate's verdict on the Compare page's Run vs run tab, in a real browser.

Two runs are stored in the served app's database before the page opens; the tab's defaults
are the newest run as B (the candidate) and the one before as A (the baseline). Their scorer is
the textual difference (no judge): every item scores 0.9 in the baseline and 0.5 in the
candidate, so d = −0.4 on each of 8 items, the bootstrap interval is [−0.4, −0.4] and the gate
fails; a minimum effect of 0.5 (> 0.4) makes it pass.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect

from scorers import Store
from scorers.core.errors import ScoreStatus

FIRST_LOAD_TIMEOUT = 90_000


def store_run(path: Path, name: str, score: float) -> str:
    store = Store(path)
    try:
        run_id = store.create_run(
            dataset_name="d.csv",
            items=[(f"q{i}", {"input": f"question {i}", "output": f"answer {i}"}, {}) for i in range(8)],
            scorers=[{"id": "textual-difference", "name": "Textual difference", "options": {}}],
            judge=None,
            name=name,
        )
        for i in range(8):
            record = {"status": ScoreStatus.SCORED.value, "score": score, "reason": "r", "analysis": {}}
            store.save_result(run_id, i, "textual-difference", record)
        store.finish_run(run_id, "completed")
        return run_id
    finally:
        store.close()


def test_the_gate_verdict_on_run_vs_run(page: Page, app_url: str, streamlit_server, screenshot):
    db = streamlit_server.log_path.parent / "scorer_studio.db"
    store_run(db, "prompt v6", 0.9)
    store_run(db, "prompt v7", 0.5)

    page.goto(app_url)
    expect(page.get_by_role("heading", name="Evaluate")).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Compare").click()
    page.get_by_role("tab", name="3. Run vs run").click()
    expect(page.get_by_test_id("stMetricLabel").get_by_text("Regressions", exact=True)).to_be_visible(
        timeout=FIRST_LOAD_TIMEOUT
    )
    page.get_by_role("tab", name="CI gate").click()  # worked out only when its view is open
    verdict = page.get_by_text("Gate verdict: FAIL: textual-difference got worse than the baseline allows.")
    expect(verdict).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    # The summary's table is drawn as a table, with the change and its interval.
    table = page.get_by_test_id("stMarkdownContainer").locator("table").filter(has_text="Win / tie / loss")
    expect(table).to_be_visible()
    expect(table).to_contain_text("-0.400 [-0.400, -0.400]")
    expect(table).to_contain_text("0 / 0 / 8")

    effect = page.get_by_role("spinbutton", name="Minimum effect (every scorer, on its own scale)")
    effect.fill("0.5")
    effect.press("Enter")
    expect(page.get_by_text("Gate verdict: PASS: no scorer regressed (1 compared).")).to_be_visible()
    expect(page.get_by_text("--min-effect 0.5")).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
    screenshot("compare_gate_verdict")
