"""A comparison report opened from disk (file://) in Debian's Chromium: charts drawn, nothing fetched.

Every request that is not for a ``file:`` URL is counted and aborted (there must be none),
and Content-Security-Policy violations are collected too, so a request the report's
policy blocked before the network would still be seen. No Streamlit server is needed.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from playwright.sync_api import Browser, Route, expect

from scorers import Store, create_content_similarity_scorer, create_textual_difference_scorer, run_evals
from scorers.analysis.generate import items_from_responses
from scorers.analysis.report import build_report, dimension_figure, leaderboard_figure, run_report, variant_colors

XSS = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'

WATCH_VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
    e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""


@pytest.fixture(scope="module")
def report_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("report")
    store = Store(tmp / "r.db")
    frame = pd.DataFrame(
        {
            "id": [f"q{i}" for i in range(8)],
            "question": [f"What is {i} + {i}?" for i in range(8)],
            "answer": [str(2 * i) for i in range(8)],
            "terse": [str(2 * i) for i in range(8)],
            "chatty": [f"Well, {i} + {i} is {2 * i}." if i % 2 else XSS for i in range(8)],
        }
    )
    items = items_from_responses(
        frame,
        input_col="question",
        response_cols={"terse": "terse", "chatty": "chatty"},
        id_col="id",
        ground_truth_col="answer",
    )
    run_id = run_evals(
        items,
        [create_textual_difference_scorer(), create_content_similarity_scorer()],
        store=store,
        run_name="terse vs chatty",
    ).run_id
    path = tmp / "report.html"
    path.write_text(run_report(store, run_id), encoding="utf-8")
    store.close()
    return path


def test_the_report_draws_its_charts_offline(browser: Browser, report_file: Path):
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    external: list[str] = []
    seen: list[str] = []

    def route(r: Route) -> None:
        url = r.request.url
        if url.startswith("file:"):
            r.continue_()
        else:
            external.append(url)
            r.abort()

    page.on("request", lambda request: seen.append(request.url))
    page.route("**/*", route)
    page.add_init_script(WATCH_VIOLATIONS)
    try:
        page.goto(report_file.as_uri())
        plots = page.locator(".js-plotly-plot")
        expect(plots.first).to_be_visible(timeout=20_000)
        n_figures = page.locator(".plotly-graph-div").count()
        assert n_figures >= 4
        expect(plots).to_have_count(n_figures)  # every figure was drawn by Plotly ...
        for i in range(n_figures):
            expect(plots.nth(i).locator("svg.main-svg").first).to_be_attached()
        expect(page.locator(".js-plotly-plot .trace").first).to_be_attached()  # ... with data in it
        expect(page.get_by_role("heading", name="Run report: terse vs chatty")).to_be_visible()
        expect(page.get_by_text("Variant terse scored higher than chatty on 8 of 8 questions").first).to_be_visible()
        page.get_by_text("Well, 3 + 3 is 6.").first.scroll_into_view_if_needed()
        assert page.evaluate("window.__pwned") is None  # the response's markup is shown, not run
        assert page.evaluate("window.__violations") == []
        assert external == []
        assert all(url.startswith("file:") for url in seen), seen
    finally:
        context.close()


LABELS = ["User · Intent alignment", "User · Requirements fulfillment", "User · Completeness", "User · Appropriateness"]


@pytest.mark.parametrize("width", [1280, 1920])
def test_report_charts_at_two_widths_keep_labels_and_colours(browser: Browser, tmp_path: Path, width: int):
    # Three variants whose order differs by scorer in the leaderboard; long dimension labels.
    variants = ["gpt-4", "llama-13b", "vicuna-13b"]
    colors = variant_colors(variants)
    board = pd.DataFrame(
        {
            "variant": ["llama-13b", "gpt-4", "vicuna-13b"],
            "scorer": ["prompt-alignment"] * 3,
            "mean": [0.9, 0.8, 0.5],
            "ci_low": [0.8, 0.7, 0.4],
            "ci_high": [1.0, 0.9, 0.6],
            "n_scored": [5, 5, 5],
            "n_failed": [0, 0, 0],
        }
    )
    means = pd.DataFrame(
        [
            {"variant": v, "dimension": label, "label": label, "mean": 0.5 + 0.1 * i}
            for i, v in enumerate(variants)
            for label in LABELS
        ]
    )
    html = build_report(
        title="Charts",
        setup={},
        leaderboard=board,
        figures=[
            leaderboard_figure(board, colors=colors),
            dimension_figure(means, "prompt-alignment", colors=colors),
        ],
        rows=pd.DataFrame(),
    )
    path = tmp_path / "charts.html"
    path.write_text(html, encoding="utf-8")
    context = browser.new_context(viewport={"width": width, "height": 1000})
    page = context.new_page()
    try:
        page.goto(path.as_uri())
        plot = page.locator(".js-plotly-plot").filter(has_text="mean per dimension")
        expect(plot.locator(".ytick").first).to_be_attached(timeout=20_000)
        frame_box = plot.bounding_box()
        ticks = plot.locator(".yaxislayer-above .ytick text")
        assert ticks.count() == len(LABELS)
        for i in range(ticks.count()):
            box = ticks.nth(i).bounding_box()
            assert box["x"] >= frame_box["x"] - 0.5, f"label {i} starts left of the chart at {width}px"
        shown = " ".join(t.replace("\u00a0", " ") for t in ticks.all_text_contents())
        for word in ("Intent", "alignment", "Requirements", "fulfillment", "Completeness", "Appropriateness"):
            assert word in shown
        # Every chart draws a variant in the same colour (read from the drawn figures' data).
        drawn = page.evaluate(
            "[...document.querySelectorAll('.js-plotly-plot')].map(p => p.data.map(t => [t.name, t.marker.color]))"
        )
        for traces in drawn:
            for name, color in traces:
                assert color == colors[name]
    finally:
        context.close()
