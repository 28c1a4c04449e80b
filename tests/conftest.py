"""Shared pytest fixtures.

``fake_openai``: a started :class:`fake_openai.FakeOpenAI` (a real HTTP server on
127.0.0.1, free port) for the duration of one test; closed afterwards. Options
can be passed with the marker ``@pytest.mark.fake_openai(models=[...],
api_key="k", responder=fn, reject_unknown_models=True)``.

``fake_openai_client``: an ``openai.OpenAI`` pointed at that server
(``api_key="test-key"``, ``max_retries=0``, ``timeout=5``).

Import the helpers in tests with ``from fake_openai import FakeOpenAI, Reply``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Make ``import fake_openai`` work whatever pytest's import mode (importlib mode
# does not put the test directory on sys.path).
_TESTS_DIR = str(Path(__file__).resolve().parent)
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)

from fake_openai import FakeOpenAI  # noqa: E402


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "fake_openai(**kwargs): keyword arguments for the FakeOpenAI of the fake_openai fixture",
    )


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
