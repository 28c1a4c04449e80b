"""Fixtures of the real-browser tests: the app served by Streamlit, driven by Chromium.

Module scope: the judge, the server and the browser live for one test file and are
gone before the rest of the suite runs (a test file pays for one server start).

``judge_server``: a started :class:`fake_openai.FakeOpenAI` shared by the file's tests.
``judge``: the same server, reset for the test; script it with ``judge.responder = fn``.

``app_url``: the URL of ``streamlit run app.py`` (``streamlit_server``: a subprocess,
its own process group, a free port on 127.0.0.1) whose judge is ``judge_server``:
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY=test-key`` in its environment, a temporary
``HOME``, no secrets file (``--secrets.files`` names one that does not exist, so a
developer's ``.streamlit/secrets.toml`` is never read) and ``SCORER_STUDIO_DB`` in a
temporary directory. Its settings are the repository's ``.streamlit/config.toml`` (usage
statistics off, minimal toolbar), as for a user. The process group is killed after the file's last test.

``browser``: Debian's Chromium, launched headless for the file (also for tests that
need no server, such as the report opened from disk).

``page``: a new page (a new Streamlit session) per test, 1400×1000, in one browser
context for the file; when the test fails, a screenshot of the whole app is saved as
``test-artifacts/<test name>.png`` (:func:`save_screenshot`) and the end of the
server's output is printed.

Chromium is Debian's (``apt-get install chromium``), never a Playwright download:
``$CHROMIUM_PATH`` or ``chromium`` on ``PATH``. Without it the tests fail and say how
to install it.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
STARTUP_TIMEOUT = 60.0
# Playwright's default wait for expect() and actions (ms): Streamlit reruns and Plotly's
# lazily loaded bundle can take seconds on a busy CI machine.
EXPECT_TIMEOUT = 30_000
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """Keep each phase's report on the item (``item.rep_call``), for the screenshot on failure."""
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _health(url: str) -> str | None:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read().decode("utf-8", "replace").strip()
    except (urllib.error.URLError, OSError):
        return None


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Debian's Chromium: ``$CHROMIUM_PATH``, else ``chromium`` on PATH (the test fails without it)."""
    path = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")
    if not path or not os.access(path, os.X_OK):
        pytest.fail(
            "The browser tests need Debian's Chromium and found none "
            f"(CHROMIUM_PATH={os.environ.get('CHROMIUM_PATH')!r}, no 'chromium' on PATH). "
            "Install it with `apt-get update && apt-get install -y chromium` or set CHROMIUM_PATH to the "
            "executable; never `playwright install`.",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="module")
def judge_server() -> Iterator[FakeOpenAI]:
    """The fake OpenAI-compatible judge the app under test talks to."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def judge(judge_server: FakeOpenAI) -> FakeOpenAI:
    """``judge_server`` with no requests, replies or responder left over from another test."""
    judge_server.reset()
    judge_server.responder = None
    return judge_server


@dataclass
class StreamlitServer:
    """A ``streamlit run app.py`` subprocess (leader of its own process group)."""

    process: subprocess.Popen
    url: str
    command: list[str]
    log_path: Path

    def output(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def wait_healthy(self, timeout: float = STARTUP_TIMEOUT) -> None:
        """Wait until ``/_stcore/health`` answers "ok"; fail with the server's output if it does not."""
        deadline = time.monotonic() + timeout
        while _health(self.url) != "ok":
            if self.process.poll() is not None or time.monotonic() > deadline:
                if self.process.poll() is not None:
                    state = f"exited with status {self.process.returncode}"
                else:
                    state = f"did not answer {self.url}/_stcore/health with 'ok' within {timeout:.0f} s"
                pytest.fail(
                    f"Streamlit ({' '.join(self.command)}) {state}; its output:\n{self.output()}", pytrace=False
                )
            time.sleep(0.2)

    def stop(self) -> None:
        """SIGTERM the process group, SIGKILL it when it is still there after 10 s."""
        for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.process.wait(timeout=wait)
                return
            except subprocess.TimeoutExpired:
                continue


@pytest.fixture(scope="module")
def streamlit_server(judge_server: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StreamlitServer]:
    """Start ``streamlit run app.py`` (not yet waiting for it: see ``app_url``); stop it after the file's last test."""
    tmp = tmp_path_factory.mktemp("streamlit")
    home = tmp / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "STREAMLIT_"))}
    env.update(
        HOME=str(home),
        OPENAI_BASE_URL=judge_server.base_url,
        OPENAI_API_KEY="test-key",
        SCORER_STUDIO_DB=str(tmp / "scorer_studio.db"),
        PYTHONUNBUFFERED="1",
    )
    port = _free_port()
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.headless", "true",
        "--server.port", str(port),
        "--server.address", "127.0.0.1",
        "--server.fileWatcherType", "none",
        "--secrets.files", str(tmp / "no-secrets.toml"),
    ]  # fmt: skip
    log_path = tmp / "streamlit.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    server = StreamlitServer(process, f"http://127.0.0.1:{port}", command, log_path)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def app_url(streamlit_server: StreamlitServer, browser_context: BrowserContext) -> str:
    """The base URL of the app once Streamlit is healthy.

    It asks for ``browser_context`` so that Chromium launches while Streamlit boots.
    """
    streamlit_server.wait_healthy()
    return streamlit_server.url


def save_screenshot(page: Page, name: str) -> Path:
    """Save the whole app as ``test-artifacts/<name>.png``; returns the path.

    Streamlit scrolls its main area (``stMain``), not the document, so a "full page"
    screenshot would only show the viewport: the viewport is made as tall as the main
    area's content for the shot, then restored.
    """
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / (re.sub(r"[^\w.-]+", "_", name) + ".png")
    size = page.viewport_size or {"width": 1400, "height": 1000}
    main = page.get_by_test_id("stMain")
    height = main.evaluate("e => e.scrollHeight") if main.count() else size["height"]
    page.set_viewport_size({"width": size["width"], "height": max(size["height"], min(int(height), 8000))})
    try:
        page.wait_for_timeout(500)  # let Plotly re-lay out its charts for the new size
        page.screenshot(path=str(path))
    finally:
        page.set_viewport_size(size)
    return path


@pytest.fixture(scope="module")
def browser(chromium_path: str) -> Iterator[Browser]:
    """Headless Debian Chromium through Playwright's sync API, for one test file."""
    expect.set_options(timeout=EXPECT_TIMEOUT)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def browser_context(streamlit_server: StreamlitServer, browser: Browser) -> Iterator[BrowserContext]:
    """One browser context for the file.

    Its pages share the HTTP cache (Streamlit's and Plotly's scripts load once); every
    page is still a new Streamlit session. It asks for ``streamlit_server`` first so that
    the server boots while Chromium launches.
    """
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(EXPECT_TIMEOUT)
    yield context
    context.close()


@pytest.fixture
def page(
    browser_context: BrowserContext, streamlit_server: StreamlitServer, request: pytest.FixtureRequest
) -> Iterator[Page]:
    """A new page (a new Streamlit session); a screenshot and the server's output when the test fails."""
    page = browser_context.new_page()
    try:
        yield page
    finally:
        report = getattr(request.node, "rep_call", None)
        if report is not None and report.failed:
            try:
                print(f"screenshot: {save_screenshot(page, request.node.name)}")
            except Exception as exc:  # the page may be gone; the test's own failure matters more
                print(f"no screenshot of {request.node.nodeid}: {exc!r}")
            print(f"end of the Streamlit server's output:\n{streamlit_server.output()[-3000:]}")
        page.close()


@pytest.fixture
def screenshot(page: Page):
    """``screenshot(name)`` saves the whole app as ``test-artifacts/<name>.png`` and returns the path."""
    return lambda name: save_screenshot(page, name)
