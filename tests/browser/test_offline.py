"""The dashboard requests no host but its own: every main page opened in Chromium, every request counted.

The server is ``streamlit run app.py`` with the repository's ``.streamlit/config.toml``
(no usage statistics, minimal toolbar) and the favicon from ``dashboard/``. Requests
whose host is not 127.0.0.1 or localhost are collected from the browser context (page,
workers, favicon) and must be none; the Deploy button must be absent.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Request, expect

from scorers import Store

# Each main page by its URL path (st.Page's default: the script's name) and its title.
PAGES = [
    ("", "Evaluate"),
    ("batch", "Batch"),
    ("compare", "Compare"),
    ("history", "History"),
    ("review", "Review"),
    ("judges", "Judges"),
    ("catalogue", "Catalogue"),
]
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
FIRST_LOAD_TIMEOUT = 60_000


@pytest.fixture
def foreign_requests(page: Page) -> list[str]:
    """The URL of every request of the page's browser context to a host other than this machine."""
    seen: list[str] = []

    def record(request: Request) -> None:
        url = urlsplit(request.url)
        if url.scheme not in ("data", "blob", "about") and url.hostname not in LOCAL_HOSTS:
            seen.append(request.url)

    page.context.on("request", record)
    yield seen
    page.context.remove_listener("request", record)


def test_main_pages_request_no_host_but_their_own(page: Page, app_url: str, foreign_requests: list[str]):
    icons = {}
    for path, title in PAGES:
        page.goto(f"{app_url}/{path}")
        heading = page.get_by_role("heading", name=title, level=1)
        expect(heading).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
        expect(page.get_by_test_id("stStatusWidget")).to_have_count(0)
        assert page.get_by_test_id("stException").count() == 0, f"{title} shows an exception"
        # The favicon is the app's own file, not an icon from a font server.
        icons[title] = page.locator("link[rel='shortcut icon'], link[rel='icon']").first.get_attribute("href")
        expect(page.get_by_test_id("stAppDeployButton")).to_have_count(0)
    page.wait_for_timeout(1000)  # let late requests (fonts, icons, telemetry) start
    assert foreign_requests == []
    # Every page's favicon is served by the app itself, not by a font server.
    assert {title: urlsplit(href).netloc for title, href in icons.items()} == dict.fromkeys(
        icons, urlsplit(app_url).netloc
    )


def _store_run(path) -> str:
    store = Store(path)
    try:
        items = [(f"q{i}", {"input": f"question {i}", "output": f"answer {i}"}, {}) for i in range(3)]
        scorers = [{"id": "textual-difference", "name": "Textual difference", "options": {}}]
        run_id = store.create_run(dataset_name="d.csv", items=items, scorers=scorers, judge=None)
        record = {"status": "scored", "score": 0.5, "reason": "r", "analysis": {}}
        store.save_results(run_id, [(i, "textual-difference", record) for i in range(3)])
        store.finish_run(run_id, "completed")
        return run_id
    finally:
        store.close()


def _loaded(page: Page, name: str) -> bool:
    return page.evaluate(f"performance.getEntriesByType('resource').some(entry => entry.name.includes({name!r}))")


def test_a_run_view_loads_the_chart_module_after_its_script_run(page: Page, app_url: str, streamlit_server):
    # A page that shows no run does not load it (a full page load leaving it would wait for it);
    # History's Summary of a run shows no chart, so there it comes from the preload
    # (dashboard.layout.preload_components), from this server, once the script run is over.
    run_id = _store_run(streamlit_server.log_path.parent / "scorer_studio.db")
    page.goto(app_url)
    expect(page.get_by_role("heading", name="Evaluate", level=1)).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0)
    page.wait_for_timeout(1000)
    assert not _loaded(page, "/PlotlyChart.")
    page.goto(f"{app_url}/history?run={run_id}")
    expect(page.get_by_text("Completed: all")).to_be_visible(timeout=FIRST_LOAD_TIMEOUT)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0)
    assert page.locator(".stPlotlyChart").count() == 0
    page.wait_for_function(
        "performance.getEntriesByType('resource').some(entry => entry.name.includes('/PlotlyChart.'))",
        timeout=FIRST_LOAD_TIMEOUT,
    )
    loaded = page.evaluate(
        "performance.getEntriesByType('resource').map(entry => entry.name).filter(name => name.includes('Plotly'))"
    )
    assert all(urlsplit(url).netloc == urlsplit(app_url).netloc for url in loaded)
