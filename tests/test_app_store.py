"""The sidebar and History name the store in use, a PostgreSQL URL without its password."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import make_url


def texts(at) -> str:
    return "\n".join(str(e.value) for e in [*at.caption, *at.sidebar.caption, *at.markdown])


def test_the_sqlite_file_is_named(open_page, studio_db):
    at = open_page("history")
    assert f"Store: {studio_db}" in [c.value for c in at.sidebar.caption]
    assert any(f"Runs stored in {studio_db}." in c.value for c in at.caption)


def test_a_postgresql_store_is_named_without_its_password(open_page, pg_url, monkeypatch: pytest.MonkeyPatch):
    # The test server trusts local connections, so any password works, and none may be shown.
    url = make_url(pg_url).set(password="s3cret-pw").render_as_string(hide_password=False)
    monkeypatch.setenv("SCORER_STUDIO_DB", url)
    at = open_page("history")
    u = make_url(pg_url)
    shown = f"postgresql://{u.username}:***@{u.host}:{u.port}/{u.database}"
    assert f"Store: {shown}" in [c.value for c in at.sidebar.caption]
    assert any(f"Runs stored in {shown}." in c.value for c in at.caption)
    assert "s3cret-pw" not in texts(at)
