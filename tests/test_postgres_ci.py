"""The test PostgreSQL that .ci/run starts: reachable with SQLAlchemy 2 and psycopg 3, one fresh database a test."""

from __future__ import annotations

import sqlalchemy as sa


def engine_for(url: str) -> sa.Engine:
    return sa.create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))


def test_each_test_gets_an_empty_database_of_its_own(pg_url, pg_server_url):
    assert pg_url != pg_server_url
    engine = engine_for(pg_url)
    try:
        with engine.begin() as db:
            assert db.execute(sa.text("SELECT current_database()")).scalar() == pg_url.rsplit("/", 1)[1]
            tables = db.execute(sa.text("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")).scalar()
            assert tables == 0
            db.execute(sa.text("CREATE TABLE t (x INTEGER)"))
            db.execute(sa.text("INSERT INTO t VALUES (1), (2)"))
        with engine.connect() as db:
            assert db.execute(sa.text("SELECT sum(x) FROM t")).scalar() == 3
    finally:
        engine.dispose()
