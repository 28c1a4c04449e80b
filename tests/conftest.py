"""Shared pytest fixtures.

``fake_openai``: a started :class:`fake_openai.FakeOpenAI` (a real HTTP server on
127.0.0.1, free port) for the duration of one test; closed afterwards. Options
can be passed with the marker ``@pytest.mark.fake_openai(models=[...],
api_key="k", responder=fn, reject_unknown_models=True)``.

``fake_openai_client``: an ``openai.OpenAI`` pointed at that server
(``api_key="test-key"``, ``max_retries=0``, ``timeout=5``).

``fake_judge``: the ``fake_openai`` server as the judge that the app, the CLI and
``JudgeSettings`` find in the environment (``OPENAI_BASE_URL`` = the server,
``OPENAI_API_KEY=test-key``), on top of ``studio_db``.

``studio_db``: a store of the test's own (``SCORER_STUDIO_DB`` = ``tmp_path/studio.db``,
returned as a path; the file is created when the app or a ``Store`` first opens it) and
no judge configuration from the developer's environment (``OPENAI_API_KEY``,
``OPENAI_BASE_URL``, ``OPENAI_MODEL`` removed).

``open_page``: ``open_page("batch")`` runs ``app.py`` in Streamlit's ``AppTest`` (empty
secrets, so no developer's ``secrets.toml`` is read; a 90 s timeout per run, for a busy
machine), switches to ``views/batch.py`` and checks that nothing raised;
``open_page()`` stays on the first page (Evaluate). Uses ``studio_db``.

Every test starts with nothing frozen from the garbage collector (``gc.unfreeze``): the
dashboard's pages freeze what is alive when they import something new
(``dashboard.layout.freeze_new_imports``), and AppTest runs them in this process, while the
command line takes a process with frozen objects for ``python -m scorers``.

``downloads``: the bytes of every file handed to an ``st.download_button`` during the
test; ``downloads.of(at, key)`` gives those of the button with that key.

``pg_url``: a new empty PostgreSQL database for the test (dropped afterwards) on the server
that ``SCORER_STUDIO_TEST_PG_URL`` names; ``.ci/run`` starts one (``.ci/postgres.sh``). Without
that variable the test is skipped on a developer machine, and fails under CI (``CI`` set).

``store_target``: parametrized, where a store suite's store lives: a SQLite file in
``tmp_path``, then a fresh PostgreSQL database (``pg_url``). ``Store(store_target)``.

The browser tests' own fixtures (Streamlit server, Chromium) are in tests/browser/conftest.py.

Import the helpers in tests with ``from fake_openai import FakeOpenAI, Reply``.
"""

from __future__ import annotations

import gc
import os
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# Make ``import fake_openai`` work whatever pytest's import mode (importlib mode
# does not put the test directory on sys.path).
_TESTS_DIR = str(Path(__file__).resolve().parent)
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)

from fake_openai import FakeOpenAI  # noqa: E402
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

ROOT = Path(_TESTS_DIR).parent
JUDGE_ENVIRONMENT = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL")
# AppTest's wait for one script run (s): generous, as the suite shares a busy machine.
APP_TIMEOUT = 90


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "fake_openai(**kwargs): keyword arguments for the FakeOpenAI of the fake_openai fixture",
    )


@pytest.fixture(autouse=True)
def _nothing_frozen() -> None:
    gc.unfreeze()


@pytest.fixture
def fake_openai(request: pytest.FixtureRequest):
    """A started FakeOpenAI server, closed after the test."""
    marker = request.node.get_closest_marker("fake_openai")
    kwargs = dict(marker.kwargs) if marker is not None else {}
    server = FakeOpenAI(**kwargs)
    server.start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def fake_openai_client(fake_openai: FakeOpenAI):
    """An ``openai.OpenAI`` client for the ``fake_openai`` server (no retries, 5 s timeout)."""
    client = fake_openai.client()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def studio_db(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """``SCORER_STUDIO_DB`` in ``tmp_path``, and no judge settings from the environment."""
    for name in JUDGE_ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "studio.db"
    monkeypatch.setenv("SCORER_STUDIO_DB", str(path))
    return path


@pytest.fixture
def fake_judge(studio_db: Path, fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    """``fake_openai`` as the environment's judge (``OPENAI_BASE_URL``, ``OPENAI_API_KEY=test-key``).

    It asks for ``studio_db`` so that the environment is cleared before, never after, it is set.
    """
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    return fake_openai


@pytest.fixture
def open_page(studio_db: Path) -> Callable[..., AppTest]:
    """``open_page(name=None)``: the app after its first run, switched to ``views/<name>.py``.

    With ``at.secrets`` set, ``st.secrets`` is replaced for the run and never reads a
    ``secrets.toml`` from the home or working directory.
    """

    def start(name: str | None = None) -> AppTest:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=APP_TIMEOUT)
        at.secrets["OPENAI_API_KEY"] = ""
        at.secrets["OPENAI_BASE_URL"] = ""
        at.run()
        if name is not None:
            at.switch_page(f"views/{name}.py").run()
        assert not at.exception
        return at

    return start


class Downloads(dict[str, bytes]):
    """The bytes handed to download buttons, by Streamlit's media file id."""

    def of(self, at: AppTest, key: str) -> bytes:
        """The bytes of the download button whose widget key is ``key``."""
        buttons = at.get("download_button")
        url = buttons[[b.key for b in buttons].index(key)].proto.url
        return self[url.rsplit("/", 1)[-1].split(".")[0]]


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> Downloads:
    """Record the bytes of every file handed to a download button during the test."""
    files = Downloads()
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self, path_or_data, mimetype, kind, filename=None):
        file_id = original(self, path_or_data, mimetype, kind, filename)
        files[file_id] = path_or_data if isinstance(path_or_data, bytes) else path_or_data.encode()
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return files


PG_URL_ENV = "SCORER_STUDIO_TEST_PG_URL"


@pytest.fixture(scope="session")
def pg_server_url() -> str:
    """The test PostgreSQL server's URL; skip without one, except under CI where it must be there."""
    url = os.environ.get(PG_URL_ENV, "").strip()
    if not url:
        if os.environ.get("CI"):
            pytest.fail(f"{PG_URL_ENV} is not set: .ci/run must start PostgreSQL (.ci/postgres.sh)")
        pytest.skip(f"no PostgreSQL for the tests: `source .ci/postgres.sh && start_postgres` sets {PG_URL_ENV}")
    return url


@pytest.fixture
def pg_url(pg_server_url: str) -> Iterator[str]:
    """A new empty database on the test server, as a ``postgresql://`` URL; dropped after the test."""
    import psycopg
    from sqlalchemy.engine import make_url

    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(pg_server_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_url(pg_server_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(pg_server_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A SQLite file, then a new PostgreSQL database: the store suites run on both."""
    if request.param == "sqlite":
        return str(tmp_path / "store.db")
    return request.getfixturevalue("pg_url")
