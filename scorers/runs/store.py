"""The store: runs, their items and results, the judge-call cache, saved judges, human labels, Batch API jobs.

One store, two databases, written once on SQLAlchemy 2 Core: SQLite by default (a file
in the user's data directory), PostgreSQL (psycopg 3) when ``SCORER_STUDIO_DB`` holds a
``postgresql://`` URL, so a team shares runs, judges and labels across dashboard
processes and CI jobs. The tables are declared in :data:`METADATA`; schema changes go
through Alembic (``scorers/runs/migrations``), applied when a store is opened. A SQLite
file written by an earlier version (numbered migrations in ``schema_migrations``, as in
simonw/llm) is stamped at the matching Alembic revision and upgraded in place.

API keys are never stored: runs keep the judge's model, endpoint and parameters only.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import platformdirs
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import make_url
from sqlalchemy.pool import StaticPool

from scorers.core.errors import ScoreStatus, run_status_label
from scorers.runs import schema_history as history

DB_ENV = "SCORER_STUDIO_DB"
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"

# ---- the schema now: each table as its revision created it, with the columns later revisions added
# (scorers.runs.schema_history holds every piece once; the Alembic revisions apply the same pieces)

METADATA = sa.MetaData()
RUNS = history.CREATE_RUNS.table(
    METADATA,
    history.ADD_RUNS_OWNER,
    history.ADD_RUNS_STOP_REASON,
    history.ADD_RUNS_HEARTBEAT,
    history.ADD_RUNS_LEFT_JUDGE_REQUESTS,
)
ITEMS = history.CREATE_ITEMS.table(METADATA, history.ADD_ITEMS_COLUMNS, history.ADD_ITEMS_WITHOUT_PAYLOAD_INDEX)
RESULTS = history.CREATE_RESULTS.table(
    METADATA,
    history.ADD_RESULTS_STATS_INDEX,
    history.DROP_RESULTS_STATS_INDEX,
    history.ADD_RESULTS_BY_SCORER_INDEX,
    history.ADD_RESULTS_JUDGE_REQUESTS,
)
JUDGE_CACHE = history.CREATE_JUDGE_CACHE.table(METADATA)
JUDGES = history.CREATE_JUDGES.table(METADATA)
JUDGE_VERSIONS = history.CREATE_JUDGE_VERSIONS.table(METADATA)
LABELS = history.CREATE_LABELS.table(METADATA)
BASELINES = history.CREATE_BASELINES.table(METADATA)
GATE_VERDICTS = history.CREATE_GATE_VERDICTS.table(METADATA)
BATCH_JOBS = history.CREATE_BATCH_JOBS.table(METADATA)
BATCH_REQUESTS = history.CREATE_BATCH_REQUESTS.table(METADATA)
PAIRWISE = history.CREATE_PAIRWISE.table(METADATA)
REJUDGES = history.CREATE_REJUDGES.table(METADATA)
JOBS = history.CREATE_JOBS.table(METADATA)

# Legacy numbered migration N (m00N_..., kept in ``schema_migrations``) = Alembic revision "000N".
LEGACY_REVISIONS = {n: f"{n:04d}" for n in range(1, 10)}  # revision 0010 (jobs) came with Alembic


@functools.cache
def head_revision() -> str:
    """The newest migration's revision id: the highest ``NNNN`` of ``migrations/versions/NNNN_*.py``.

    Revisions are numbered in one line (each revises the one before), so this is the head
    that Alembic's ``ScriptDirectory.get_current_head()`` finds, without loading the scripts.
    """
    return max(path.name[:4] for path in (MIGRATIONS_DIR / "versions").glob("[0-9][0-9][0-9][0-9]_*.py"))


def process_owner() -> str:
    """This process as a run's owner: ``"<host>:<pid>"``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _owner_alive(owner: str | None) -> bool | None:
    """Whether the process named by ``owner`` runs: True, False, or None when it is on another host."""
    if not owner or ":" not in owner:
        return False
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, OverflowError):
        return True
    return True


HEARTBEAT_INTERVAL_S = 5.0
"""Seconds between two heartbeats of the process scoring a run (:class:`RunHeartbeat`)."""

HEARTBEAT_STALE_S = 60.0
"""A ``running`` run whose heartbeat is older than this lost its process (:meth:`Store.mark_interrupted`): twelve
heartbeats missed. The processes sharing a store compare their clocks here, so their hosts' clocks must agree
to within a few seconds (NTP)."""


class RunBusy(RuntimeError):
    """The run is being scored by another live process: it cannot be resumed (nor claimed) from this one."""


def _why_dead(owner: str | None, heartbeat: float | None, now: float) -> str | None:
    """Why the process that owns a ``running`` run is dead, in a sentence, or None when it may be scoring it.

    Its pid gone on this host, or its heartbeat (when it writes one) older than :data:`HEARTBEAT_STALE_S`.
    A run of this process is judged by its heartbeat only (its pid is this one).
    """
    if owner != process_owner() and _owner_alive(owner) is False:
        return f"The process scoring it ({owner}) is no longer running."
    if heartbeat is not None and now - heartbeat > HEARTBEAT_STALE_S:
        return (
            f"The process scoring it ({owner}) stopped writing its heartbeat {now - heartbeat:,.0f} s ago "
            f"(it writes one every {HEARTBEAT_INTERVAL_S:g} s): it died or lost the store."
        )
    return None


_log = logging.getLogger(__name__)


def _error_detail(exc: BaseException) -> str:
    """A database error in a line: the driver's first line (never the statement or its parameters)."""
    return next(iter(str(exc.orig if getattr(exc, "orig", None) is not None else exc).splitlines()), "")


def now_iso() -> str:
    """The current UTC time as ISO 8601 with seconds."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def default_db_path() -> Path:
    """``$SCORER_STUDIO_DB`` if it is a file path, else ``<user data dir>/scorer-studio/scorer_studio.db``.

    A ``postgresql://`` or ``sqlite://`` URL in ``SCORER_STUDIO_DB`` is used by :func:`default_db`.
    """
    override = os.environ.get(DB_ENV, "").strip()
    if override and "://" not in override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir("scorer-studio", appauthor=False)) / "scorer_studio.db"


def default_db() -> str:
    """The store the dashboard and the CLI use: ``$SCORER_STUDIO_DB`` (a path or URL) or :func:`default_db_path`."""
    override = os.environ.get(DB_ENV, "").strip()
    return override if "://" in override else str(default_db_path())


def database_url(target: str | Path) -> sa.URL:
    """The SQLAlchemy URL of a store given as a file path, ``":memory:"``, ``sqlite:///...`` or ``postgresql://...``.

    ``postgresql://`` (and ``postgres://``) get the psycopg 3 driver.

    Raises:
        ValueError: a URL of another database (the message lists the two supported).

    >>> database_url("postgresql://ann:secret@db:5432/evals").drivername
    'postgresql+psycopg'
    >>> database_url("runs/studio.db").render_as_string()
    'sqlite:///runs/studio.db'
    """
    text = str(target)
    if "://" not in text:
        return sa.URL.create("sqlite", database=None if text == ":memory:" else text)
    url = make_url(text)
    backend = url.get_backend_name()
    if backend in ("postgresql", "postgres"):
        return url.set(drivername="postgresql+psycopg")
    if backend == "sqlite":
        return url
    raise ValueError(
        f"{url.render_as_string(hide_password=True)}: the store runs on SQLite (a file path or sqlite:///PATH) "
        "or PostgreSQL (postgresql://USER:PASSWORD@HOST:PORT/DATABASE)"
    )


def display_name(url: sa.URL) -> str:
    """How a store is shown (sidebar, History, CLI): the SQLite file, or the URL without the password.

    >>> display_name(database_url("postgresql://ann:secret@db:5432/evals"))
    'postgresql://ann:***@db:5432/evals'
    """
    if url.get_backend_name() == "sqlite":
        return url.database or ":memory:"
    return url.set(drivername=url.get_backend_name()).render_as_string(hide_password=True)


VARIANT_GROUP = "variant"
"""The group naming a run's variant in a run of variants (Compare's first tab)."""

_INPUT_STATUSES = [s.value for s in ScoreStatus if s is not ScoreStatus.SCORED and not s.retryable]
"""Statuses of outcomes not scored because of their input (scoring again gives the same outcome)."""


class StoreError(sqlite3.DatabaseError):
    """The store cannot be opened or used (not a Scorer Studio database, unreachable server ...).

    A subclass of :class:`sqlite3.DatabaseError`, so callers written for the SQLite-only
    store keep catching it.
    """


@dataclass(frozen=True)
class CachedReply:
    """A judge reply kept in the cache: the raw text, its token usage and the parameters sent."""

    raw: str
    prompt_tokens: int
    completion_tokens: int
    parameters: dict[str, Any]


class Record:
    """A result row: by position (``row[0]``), by column name (``row["score"]``), or ``dict(row)``."""

    __slots__ = ("_index", "_values")

    def __init__(self, index: Mapping[str, int], values: Sequence[Any]):
        self._index = index  # column name -> position, shared by the rows of one result
        self._values = tuple(values)

    def keys(self) -> list[str]:
        return list(self._index)

    def __getitem__(self, key: int | str) -> Any:
        if isinstance(key, str):
            try:
                return self._values[self._index[key]]
            except KeyError:
                raise IndexError(f"no column {key!r}") from None
        return self._values[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Record({dict(zip(self._index, self._values, strict=True))!r})"


class Cursor:
    """What :meth:`Connection.execute` returns: rows as :class:`Record`, ``rowcount``, ``lastrowid``."""

    def __init__(self, result: sa.CursorResult):
        self._result = result
        self._index = {key: n for n, key in enumerate(result.keys())} if result.returns_rows else {}

    @property
    def rowcount(self) -> int:
        return self._result.rowcount

    @property
    def lastrowid(self) -> int | None:
        """The rowid of an INSERT on SQLite (on PostgreSQL use ``INSERT ... RETURNING id``)."""
        return self._result.lastrowid

    def fetchone(self) -> Record | None:
        row = self._result.fetchone()
        return None if row is None else Record(self._index, row)

    def fetchall(self) -> list[Record]:
        return [Record(self._index, row) for row in self._result.fetchall()]

    def __iter__(self) -> Iterator[Record]:
        return iter(self.fetchall())


def _qmark_to_format(sql: str) -> str:
    """``?`` placeholders to psycopg's ``%s`` (a literal ``%`` doubled), leaving quoted text alone."""
    out, quote = [], None
    for ch in sql:
        if quote:
            quote = None if ch == quote else quote
            out.append("%%" if ch == "%" else ch)
        elif ch in ("'", '"'):
            quote = ch
            out.append(ch)
        else:
            out.append("%s" if ch == "?" else "%%" if ch == "%" else ch)
    return "".join(out)


class Connection:
    """A store connection inside a transaction: SQLAlchemy Core statements, or SQL text with ``?`` placeholders.

    SQL text is passed to the driver (``?`` becomes ``%s`` on PostgreSQL), so it must be
    SQL both databases accept.
    """

    def __init__(self, conn: sa.Connection):
        self.sa = conn
        self.dialect = conn.dialect.name

    def _sql(self, sql: str) -> str:
        return _qmark_to_format(sql) if self.dialect == "postgresql" else sql

    def execute(self, statement: str | sa.Executable, params: Sequence[Any] | Mapping[str, Any] = ()) -> Cursor:
        """Run one statement: a Core construct (``params`` a mapping) or SQL text (``params`` a sequence)."""
        if isinstance(statement, str):
            return Cursor(self.sa.exec_driver_sql(self._sql(statement), tuple(params)))
        return Cursor(self.sa.execute(statement, dict(params) if params else None))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run SQL text once per parameter row."""
        if rows:
            self.sa.exec_driver_sql(self._sql(sql), [tuple(r) for r in rows])


@functools.cache
def _upsert(dialect: str, table: sa.Table, *kept: str) -> sa.Executable:
    """INSERT that replaces the row with the same primary key (``ON CONFLICT ... DO UPDATE``), but the columns ``kept``.

    Built once per table and database kind, and executed with the rows as parameters, so
    SQLAlchemy compiles it once (a statement with the values inside is compiled on every call).
    """
    if dialect == "postgresql":  # imported for a PostgreSQL store only: a tenth of a second of CPU
        from sqlalchemy.dialects import postgresql as pg_dialect

        insert = pg_dialect.insert(table)
    else:
        insert = sqlite_dialect.insert(table)
    keys = [c.name for c in table.primary_key.columns]
    return insert.on_conflict_do_update(
        index_elements=keys,
        set_={c.name: insert.excluded[c.name] for c in table.columns if c.name not in keys and c.name not in kept},
    )


ITEMS_CHUNK = 2000
"""Items :meth:`Store.create_run` encodes and inserts at a time (in its one transaction)."""

_compact_json = json.JSONEncoder(separators=(",", ":")).encode

_ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS
"""Values :func:`json.dumps` writes its own way (subclasses of str, int, dict and list, such as a
string enum) or rejects (dates, dataclasses) are left to it: orjson raises and :func:`dump_json` falls back."""


def dump_json(value: Any) -> str:
    """``value`` as compact JSON text (no spaces after ``,`` and ``:``), as the store writes run items and results.

    Encoded by orjson (a run's items and results are encoded once each, when written: the standard
    encoder took about a fifth of a fast scorer's store overhead), falling back to :func:`json.dumps`'s
    compact form for what orjson does not encode as it would: values orjson rejects (non-string keys,
    integers beyond 64 bits, lone surrogates, the types :data:`_ORJSON_OPTIONS` passes through) and any
    text holding ``null`` (orjson writes NaN and infinities as ``null``; :mod:`json` writes ``NaN``,
    which it reads back). Both read back as the same values; orjson writes non-ASCII characters as
    UTF-8 rather than ``\\u`` escapes, and floats in their shortest form (``1e16`` for ``1e+16``).
    ``None`` is ``"null"``, as :func:`json.dumps` writes it.

    >>> dump_json({"ratio": 0.5, "changes": [1, 2]}), dump_json({}), dump_json(None), dump_json({"x": float("nan")})
    ('{"ratio":0.5,"changes":[1,2]}', '{}', 'null', '{"x":NaN}')

    Raises:
        TypeError: ``value`` holds something neither encoder writes (as :func:`json.dumps`).
        ValueError: ``value`` refers to itself (as :func:`json.dumps`).
    """
    if value is None:
        return "null"
    if type(value) is dict and not value:  # an item without groups: no encoder call for the commonest value
        return "{}"
    try:
        encoded = orjson.dumps(value, option=_ORJSON_OPTIONS)
    except TypeError:
        return _compact_json(value)
    if b"null" in encoded:
        return _compact_json(value)
    return encoded.decode()


@functools.cache
def _bulk_insert(dialect: str, table: sa.Table, upsert: bool) -> str:
    """``table``'s INSERT (with ``upsert``, :func:`_upsert`'s) compiled once for the driver, taking one
    parameter per column in the table's column order (``table.columns``), so that a row is a plain tuple.

    A batch of rows then goes to the driver's ``executemany`` in one call
    (``Connection.exec_driver_sql``), without SQLAlchemy's per-row parameter processing, which took
    more time than SQLite's own insert when a run writes thousands of small outcomes.

    Raises:
        RuntimeError: the compiled statement takes its parameters in another order (a SQLAlchemy change).
    """
    statement = _upsert(dialect, table) if upsert else sa.insert(table)
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import psycopg

        compiled = statement.compile(dialect=psycopg.dialect(paramstyle="format"))
    else:
        compiled = statement.compile(dialect=sqlite_dialect.dialect())
    if tuple(compiled.positiontup) != tuple(table.columns.keys()):
        raise RuntimeError(f"{table.name}: the INSERT takes {compiled.positiontup}, not the table's column order")
    return compiled.string


def _decode(row: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    out = dict(row)
    for key in keys:
        out[key] = json.loads(out[key]) if out[key] else None
    return out


class Store:
    """A Scorer Studio database. Thread-safe; several processes may share one (PostgreSQL, or SQLite on a local disk).

    Args:
        path: a SQLite file path, ``":memory:"`` (tests), a ``sqlite:///`` or ``postgresql://``
            URL; None for :func:`default_db`.

    Attributes:
        url: the SQLAlchemy URL (holds the password: never print it; see :attr:`display_name`).
        path: the SQLite file, or None (in memory, or PostgreSQL).
        dialect: ``"sqlite"`` or ``"postgresql"``.

    Raises:
        StoreError: the file is not a database, or the server cannot be reached (the message
            names the store, never its password).
        ValueError: a URL of another kind of database.
    """

    def __init__(self, path: str | Path | None = None):
        self.url = database_url(default_db() if path is None else path)
        self.dialect = self.url.get_backend_name()
        self.path = Path(self.url.database) if self.dialect == "sqlite" and self.url.database else None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock: Any = threading.RLock() if self.dialect == "sqlite" else nullcontext()
        if self.dialect == "sqlite":
            # One connection, used under the lock (SQLite has one writer at a time anyway).
            self.engine = sa.create_engine(self.url, connect_args={"check_same_thread": False}, poolclass=StaticPool)
            event.listen(self.engine, "connect", _sqlite_connect)
            event.listen(self.engine, "begin", _sqlite_begin)
        else:
            self.engine = sa.create_engine(self.url, pool_pre_ping=True, pool_size=5, max_overflow=10)
        try:
            self._migrate()
        except StoreError:
            self.engine.dispose()
            raise
        except sa.exc.SQLAlchemyError as exc:
            self.engine.dispose()
            raise StoreError(
                f"{self.display_name}: not a usable Scorer Studio database ({_error_detail(exc)})"
            ) from None

    @property
    def display_name(self) -> str:
        """The store as shown to people: the SQLite file, or the URL without the password."""
        return display_name(self.url)

    def close(self) -> None:
        """Close every connection."""
        self.engine.dispose()

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """A write transaction (committed on success, rolled back on error); yields a :class:`Connection`."""
        with self._lock, self.engine.connect() as conn:
            conn = conn.execution_options(scorer_studio_write=True)
            with conn.begin():
                yield Connection(conn)

    def query(self, sql: str | sa.Executable, params: Sequence[Any] | Mapping[str, Any] = ()) -> list[Record]:
        """Run a read query (SQL text with ``?`` placeholders, or a Core select) and return all rows."""
        with self._lock, self.engine.connect() as conn:
            return Connection(conn).execute(sql, params).fetchall()

    # ---- schema

    def _alembic(self, conn: sa.Connection) -> Any:
        from alembic.config import Config

        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS_DIR))
        config.attributes["connection"] = conn
        return config

    def _migrate(self) -> None:
        with self.transaction() as db:
            conn = db.sa
            if self.dialect == "postgresql":  # two processes opening a new database: one migrates at a time
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(7341902)"))
            tables = set(sa.inspect(conn).get_table_names())
            if "alembic_version" in tables:
                stored = conn.execute(sa.text("SELECT version_num FROM alembic_version")).scalars().all()
                if stored == [head_revision()]:
                    return  # at head: Alembic (its import and reading every migration script) is not needed
            from alembic import command

            config = self._alembic(conn)
            if "schema_migrations" in tables and "alembic_version" not in tables:
                done = conn.execute(sa.text("SELECT MAX(version) FROM schema_migrations")).scalar()
                if done not in LEGACY_REVISIONS:
                    raise StoreError(
                        f"{self.display_name}: unknown schema version {done} (made by a newer Scorer Studio?)"
                    )
                command.stamp(config, LEGACY_REVISIONS[done])
            command.upgrade(config, "head")

    @property
    def schema_version(self) -> int:
        """The number of the Alembic revision the database is at (revision ``"0004"`` is 4)."""
        return int(self.query("SELECT version_num FROM alembic_version")[0][0])

    # ---- judge cache

    def cache_get(self, key: str) -> CachedReply | None:
        """The cached judge reply for ``key``, or None."""
        rows = self.query(sa.select(JUDGE_CACHE).where(JUDGE_CACHE.c.key == key))
        if not rows:
            return None
        row = rows[0]
        return CachedReply(row["reply"], row["prompt_tokens"], row["completion_tokens"], json.loads(row["parameters"]))

    def cache_put(self, key: str, *, model: str, base_url: str, reply: CachedReply) -> None:
        """Keep a valid judge reply under ``key`` (replacing any older one)."""
        row = {
            "key": key,
            "model": model,
            "base_url": base_url,
            "reply": reply.raw,
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "parameters": json.dumps(reply.parameters),
            "created_at": now_iso(),
        }
        with self.transaction() as db:
            db.sa.execute(_upsert(self.dialect, JUDGE_CACHE), [row])

    def cache_clear(self) -> int:
        """Empty the judge cache; returns how many replies were removed."""
        with self.transaction() as db:
            return db.execute(sa.delete(JUDGE_CACHE)).rowcount

    # ---- runs

    def create_run(
        self,
        *,
        dataset_name: str,
        items: Sequence[tuple[str, dict[str, Any], dict[str, Any]]],
        scorers: Sequence[dict[str, Any]],
        judge: dict[str, Any] | None,
        mapping: dict[str, Any] | None = None,
        config: dict[str, Any] | None = None,
        name: str | None = None,
    ) -> str:
        """Record a new run and its items; returns the run id.

        Args:
            dataset_name: the dataset's file name (shown in History).
            items: ``(item_id, payload, groups)`` or ``(item_id, payload, groups, columns)``
                per item, in dataset order; ``columns`` maps the dataset's unmapped
                column names to the row's values (plain JSON values).
            scorers: one config dict per scorer (``{"id", "name", "options"}``).
            judge: model, endpoint and parameters (never the key), or None.
            mapping: the column mapping used.
            config: run options (concurrency, timeouts ...).
            name: display name; default ``"<dataset> <date>"``.
        """
        run_id = uuid.uuid4().hex[:12]
        created = now_iso()
        with self.transaction() as db:
            db.execute(
                sa.insert(RUNS).values(
                    id=run_id,
                    name=name or f"{dataset_name} {created[:16].replace('T', ' ')}",
                    created_at=created,
                    status="running",
                    dataset_name=dataset_name,
                    n_items=len(items),
                    scorers=json.dumps(list(scorers)),
                    judge=json.dumps(judge),
                    mapping=json.dumps(mapping),
                    config=json.dumps(config),
                    owner=process_owner(),
                )
            )
            sql = _bulk_insert(self.dialect, ITEMS, upsert=False)
            for start in range(0, len(items), ITEMS_CHUNK):  # a large dataset is never encoded whole
                # In the order of ITEMS' columns: run_id, item_index, item_id, payload, groups, columns.
                rows = [
                    (
                        run_id,
                        i,
                        item[0],
                        dump_json(item[1]),
                        dump_json(item[2]),
                        dump_json(item[3]) if len(item) > 3 and item[3] else None,
                    )
                    for i, item in enumerate(items[start : start + ITEMS_CHUNK], start)
                ]
                db.sa.exec_driver_sql(sql, rows)
            # Stamped once the items are in: however long they took, the run is not stale when it is committed.
            db.execute(sa.update(RUNS).where(RUNS.c.id == run_id).values(heartbeat_at=time.time()))
        return run_id

    def save_result(self, run_id: str, item_index: int, scorer_id: str, record: dict[str, Any]) -> None:
        """Write one item × scorer outcome (replacing an earlier attempt); see :meth:`save_results`."""
        self.save_results(run_id, [(item_index, scorer_id, record)])

    def save_results(self, run_id: str, outcomes: Iterable[tuple[int, str, dict[str, Any]]]) -> None:
        """Write a batch of item × scorer outcomes in one transaction (each replacing an earlier attempt).

        Args:
            run_id: the run.
            outcomes: ``(item_index, scorer_id, record)`` per outcome (any iterable, read once: a
                generator lets each record go as soon as its row is encoded); ``record`` has
                ``status`` (a ScoreStatus value) and optional ``score``, ``reason``,
                ``analysis``, ``details``, ``error``, ``raw_reply``, ``judge``,
                ``prompt_tokens``, ``completion_tokens``, ``judge_calls`` (answered), ``judge_requests`` (HTTP
                requests sent, failed ones and retries included; ``judge_calls`` when not given), ``latency_s``.
        """
        finished = now_iso()
        sql = _bulk_insert(self.dialect, RESULTS, upsert=True)
        # In the order of RESULTS' columns (run_id, item_index, scorer_id, status, score, reason, analysis,
        # details, error, raw_reply, judge, prompt_tokens, completion_tokens, judge_calls, latency_s,
        # finished_at, judge_requests): a tuple per row, built at once (no mapping per row to take apart again).
        rows = [
            (
                run_id,
                item_index,
                scorer_id,
                record["status"],
                record.get("score"),
                record.get("reason"),
                dump_json(record.get("analysis")),
                dump_json(record.get("details")),
                record.get("error"),
                record.get("raw_reply"),
                dump_json(record.get("judge")),
                record.get("prompt_tokens", 0),
                record.get("completion_tokens", 0),
                record.get("judge_calls", 0),
                record.get("latency_s"),
                finished,
                record.get("judge_requests", record.get("judge_calls", 0)),
            )
            for item_index, scorer_id, record in outcomes
        ]
        if rows:
            with self.transaction() as db:
                db.sa.exec_driver_sql(sql, rows)

    def finish_run(self, run_id: str, status: str, reason: str | None = None, *, left_judge_requests: int = 0) -> bool:
        """Record how a run this process scores ended: a :class:`~scorers.core.errors.RunStatus` value other than
        ``running``.

        Only a run still ``running`` in this process (see :func:`process_owner`) is changed: one another process
        marked interrupted or claimed (this one was taken as dead, e.g. suspended) is that process's to record.

        Args:
            reason: why it stopped early, in a sentence (kept as ``stop_reason``), or None.
            left_judge_requests: HTTP requests to the judge this session made for outcomes it left to do (not
                stored), added to the run's ``left_judge_requests``.

        Returns:
            Whether the run was this process's and is now recorded as ended; False leaves it as it was.
        """
        with self.transaction() as db:
            mine = sa.update(RUNS).where(
                RUNS.c.id == run_id, RUNS.c.status == "running", RUNS.c.owner == process_owner()
            )
            ended = mine.values(
                status=status,
                finished_at=now_iso(),
                stop_reason=reason,
                left_judge_requests=RUNS.c.left_judge_requests + left_judge_requests,
            )
            return db.execute(ended).rowcount == 1

    def claim_run(self, run_id: str) -> None:
        """Mark a run ``running`` in this process (see :func:`process_owner`), e.g. when it is resumed.

        A run ``running`` in another process is claimed only once that process is dead (:meth:`mark_interrupted`'s
        rule), and atomically: of two processes resuming it at once, one claims it and the other gets
        :class:`RunBusy`, so a run is never scored by two processes.

        Raises:
            KeyError: no such run.
            RunBusy: another live process is scoring it.
        """
        with self.transaction() as db:
            read = sa.select(RUNS.c.status, RUNS.c.owner, RUNS.c.heartbeat_at).where(RUNS.c.id == run_id)
            row = db.execute(read).fetchone()
            if row is None:
                raise KeyError(f"no run with id {run_id!r}")
            busy = row["status"] == "running" and row["owner"] != process_owner()
            if busy and _why_dead(row["owner"], row["heartbeat_at"], time.time()) is None:
                raise RunBusy(f"run {run_id} is being scored by another process ({row['owner']})")
            claim = sa.update(RUNS).where(
                RUNS.c.id == run_id,  # unchanged since it was read: no other process claimed it meanwhile
                RUNS.c.status == row["status"],
                RUNS.c.owner.is_not_distinct_from(row["owner"]),
                RUNS.c.heartbeat_at.is_not_distinct_from(row["heartbeat_at"]),
            )
            claimed = claim.values(
                status="running", finished_at=None, stop_reason=None, owner=process_owner(), heartbeat_at=time.time()
            )
            if db.execute(claimed).rowcount == 0:
                raise RunBusy(f"run {run_id} was claimed by another process a moment ago")

    def beat(self, run_id: str) -> bool:
        """Write that this process still scores ``run_id`` (its heartbeat); False when the run is no longer its own
        (marked interrupted, claimed by another process, deleted).

        Raises:
            sqlalchemy.exc.SQLAlchemyError: the write failed (e.g. ``OperationalError``: the server cannot be
                reached, or the SQLite file is locked past its busy timeout); nothing was written, and
                :class:`RunHeartbeat` tries again at its next heartbeat.
        """
        with self.transaction() as db:
            mine = sa.update(RUNS).where(
                RUNS.c.id == run_id, RUNS.c.status == "running", RUNS.c.owner == process_owner()
            )
            return db.execute(mine.values(heartbeat_at=time.time())).rowcount == 1

    def mark_interrupted(self, *, alive: Callable[[str], bool] | None = None) -> list[str]:
        """Mark ``interrupted`` every run stored as ``running`` whose process has died, with the reason.

        Called when the dashboard starts, by History and by the CLI's ``runs`` and ``--resume``. A run's process
        is dead when it was on this host and its pid is gone, or when its heartbeat (:class:`RunHeartbeat`) is
        older than :data:`HEARTBEAT_STALE_S`, whatever its host. A run still scored by a live process, here or
        on another host, keeps ``running``; so does one stored by an earlier version on another host (no
        heartbeat), which cannot be checked from here.

        Args:
            alive: ``alive(run_id)`` True when this process is scoring the run (its own jobs), when this process
                has just started: its runs that it does not score were left by a dead process whose pid it
                reuses. None: this process's runs are judged by their heartbeat.

        Returns:
            The ids of the runs marked.
        """
        now = time.time()
        dead = []  # read without the write lock (History calls this on every rerun), written only when one died
        for row in self.query(
            sa.select(RUNS.c.id, RUNS.c.owner, RUNS.c.heartbeat_at).where(RUNS.c.status == "running")
        ):
            if row["owner"] == process_owner() and alive is not None and not alive(row["id"]):
                why = "The process scoring it stopped (the dashboard restarted)."
            else:
                why = _why_dead(row["owner"], row["heartbeat_at"], now)
            if why is not None:
                dead.append((row, why))
        if not dead:
            return []
        marked = []
        with self.transaction() as db:
            for row, why in dead:
                mark = sa.update(RUNS).where(
                    RUNS.c.id == row["id"],  # unchanged since it was read: not claimed meanwhile
                    RUNS.c.status == "running",
                    RUNS.c.owner.is_not_distinct_from(row["owner"]),
                    RUNS.c.heartbeat_at.is_not_distinct_from(row["heartbeat_at"]),
                )
                if db.execute(mark.values(status="interrupted", finished_at=now_iso(), stop_reason=why)).rowcount:
                    marked.append(row["id"])
        return marked

    def rename_run(self, run_id: str, name: str) -> None:
        """Rename a run.

        Raises:
            ValueError: empty name, or no such run.
        """
        if not name.strip():
            raise ValueError("a run name cannot be empty")
        with self.transaction() as db:
            if db.execute(sa.update(RUNS).where(RUNS.c.id == run_id).values(name=name.strip())).rowcount == 0:
                raise ValueError(f"no run with id {run_id!r}")

    def set_run_config(self, run_id: str, config: Mapping[str, Any]) -> None:
        """Replace a run's recorded options (e.g. the cost cap and prices a resume was given).

        Args:
            run_id: the run.
            config: the whole new config (JSON-serialisable), as :meth:`get_run` returns it.

        Raises:
            KeyError: no such run.
        """
        with self.transaction() as db:
            if db.execute(sa.update(RUNS).where(RUNS.c.id == run_id).values(config=json.dumps(config))).rowcount == 0:
                raise KeyError(run_id)

    def delete_run(self, run_id: str) -> None:
        """Delete a run with its items, results, labels and batch jobs."""
        with self.transaction() as db:
            db.execute(sa.delete(RUNS).where(RUNS.c.id == run_id))

    def get_run(self, run_id: str) -> dict[str, Any]:
        """The run's row as a dict with JSON fields decoded.

        Raises:
            KeyError: no such run.
        """
        rows = self.query(sa.select(RUNS).where(RUNS.c.id == run_id))
        if not rows:
            raise KeyError(f"no run with id {run_id!r}")
        return _decode(rows[0], "scorers", "judge", "mapping", "config")

    def list_runs(self) -> list[dict[str, Any]]:
        """Every run, newest first, with per-scorer stats: ``n_scored``, ``n_failed`` (outcomes not
        scored, for any reason), ``n_input`` (of those, not scored for a missing or invalid input:
        not :attr:`~scorers.core.errors.ScoreStatus.retryable`) and ``mean`` (of scored items).

        A run of variants (made on Compare: its groups include ``variant``) scores each variant's
        responses to the same items, so a mean over all its outcomes mixes the variants: it also has
        ``variant_stats``, scorer id → variant → the same stats over that variant's outcomes (variants
        in the order of their first item); other runs have ``variant_stats`` ``{}``."""
        # Runs made in the same second: the later one first (SQLite's rowid; on PostgreSQL the id decides).
        tiebreak = sa.literal_column("rowid") if self.dialect == "sqlite" else RUNS.c.id
        rows = self.query(sa.select(RUNS).order_by(RUNS.c.created_at.desc(), tiebreak.desc()))
        runs = [_decode(r, "scorers", "judge", "mapping", "config") for r in rows]
        stats = self.query(
            sa.select(
                RESULTS.c.run_id,
                RESULTS.c.scorer_id,
                sa.func.count(RESULTS.c.score).label("n_scored"),
                sa.func.sum(sa.case((RESULTS.c.status != "scored", 1), else_=0)).label("n_failed"),
                sa.func.sum(sa.case((RESULTS.c.status.in_(_INPUT_STATUSES), 1), else_=0)).label("n_input"),
                sa.func.avg(RESULTS.c.score).label("mean"),
            ).group_by(RESULTS.c.run_id, RESULTS.c.scorer_id)
        )
        by_run: dict[str, dict[str, dict[str, Any]]] = {}
        for s in stats:
            by_run.setdefault(s["run_id"], {})[s["scorer_id"]] = {
                "n_scored": s["n_scored"],
                "n_failed": s["n_failed"],
                "n_input": s["n_input"],
                "mean": None if s["mean"] is None else float(s["mean"]),
            }
        by_variant = self._variant_stats(
            [r["id"] for r in runs if VARIANT_GROUP in ((r["mapping"] or {}).get("groups") or ())]
        )
        for run in runs:
            run["stats"] = by_run.get(run["id"], {})
            run["variant_stats"] = by_variant.get(run["id"], {})
        return runs

    def _variant_stats(self, run_ids: Sequence[str]) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
        """Run id → scorer id → variant → :meth:`list_runs`' stats over that variant's outcomes."""
        if not run_ids:
            return {}
        if self.dialect == "postgresql":
            variant = sa.cast(ITEMS.c.groups, sa.JSON)["variant"].as_string()
        else:  # SQLite: JSON_EXTRACT of the stored text (a CAST to JSON would make it a number)
            variant = sa.type_coerce(ITEMS.c.groups, sa.JSON)["variant"].as_string()
        rows = self.query(
            sa.select(
                RESULTS.c.run_id,
                RESULTS.c.scorer_id,
                variant.label("variant"),
                sa.func.min(RESULTS.c.item_index).label("first"),
                sa.func.count(RESULTS.c.score).label("n_scored"),
                sa.func.sum(sa.case((RESULTS.c.status != "scored", 1), else_=0)).label("n_failed"),
                sa.func.sum(sa.case((RESULTS.c.status.in_(_INPUT_STATUSES), 1), else_=0)).label("n_input"),
                sa.func.avg(RESULTS.c.score).label("mean"),
            )
            .join(ITEMS, (ITEMS.c.run_id == RESULTS.c.run_id) & (ITEMS.c.item_index == RESULTS.c.item_index))
            .where(RESULTS.c.run_id.in_(run_ids))
            .group_by(RESULTS.c.run_id, RESULTS.c.scorer_id, variant)
        )
        out: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
        for s in sorted(rows, key=lambda r: r["first"]):
            out.setdefault(s["run_id"], {}).setdefault(s["scorer_id"], {})[str(s["variant"])] = {
                "n_scored": s["n_scored"],
                "n_failed": s["n_failed"],
                "n_input": s["n_input"],
                "mean": None if s["mean"] is None else float(s["mean"]),
            }
        return out

    def items(self, run_id: str, item_index: int | None = None) -> list[dict[str, Any]]:
        """The run's items in order (or only ``item_index``): ``item_index``, ``item_id``, ``payload``,
        ``groups`` and ``columns`` (the unmapped dataset columns, ``{}`` when none were kept)."""
        query = sa.select(ITEMS).where(ITEMS.c.run_id == run_id)
        if item_index is not None:
            query = query.where(ITEMS.c.item_index == item_index)
        return [
            {
                "item_index": r["item_index"],
                "item_id": r["item_id"],
                "payload": json.loads(r["payload"]),
                "groups": json.loads(r["groups"]) if r["groups"] else {},
                "columns": json.loads(r["columns"]) if r["columns"] else {},
            }
            for r in self.query(query.order_by(ITEMS.c.item_index))
        ]

    def count_results(self, run_id: str) -> int:
        """How many outcomes of the run are stored (a cheap version stamp of its results)."""
        return self.query(sa.select(sa.func.count()).select_from(RESULTS).where(RESULTS.c.run_id == run_id))[0][0]

    def results_version(self, run_id: str) -> tuple[int, int, float | None, str | None]:
        """A version stamp of the run's stored outcomes, for caches.

        Returns:
            (how many, how many scored, the sum of their scores, the latest write). Unlike
            :meth:`count_results` alone, it changes when an outcome is replaced with
            another status or score (a retry that scores a failed item), or in a later second.
        """
        scored = sa.func.count(sa.case((RESULTS.c.status == "scored", 1)))
        query = sa.select(
            sa.func.count(), scored, sa.func.sum(RESULTS.c.score), sa.func.max(RESULTS.c.finished_at)
        ).where(RESULTS.c.run_id == run_id)
        row = self.query(query)[0]
        return int(row[0]), int(row[1]), None if row[2] is None else float(row[2]), row[3]

    def read_chunks(self, sql: str, params: Sequence[Any] = (), size: int = 2000) -> Iterator[list[Record]]:
        """Run a read query (SQL text, ``?`` placeholders) and yield its rows ``size`` at a time.

        A large result is never held whole: it is read on a connection of its own (on SQLite,
        WAL lets it read while a run writes, from one consistent snapshot; an in-memory
        database is read under the store's lock).
        """
        if self.dialect == "sqlite" and self.path is None:
            rows = self.query(sql, params)
            for start in range(0, len(rows), size):
                yield rows[start : start + size]
            return
        if self.dialect == "sqlite":
            yield from self._read_only_chunks(sql, params, size)
            return
        with self.engine.connect() as conn:
            db = Connection(conn)
            result = conn.exec_driver_sql(db._sql(sql), tuple(params), execution_options={"yield_per": size})
            index = {key: n for n, key in enumerate(result.keys())}
            for part in result.partitions(size):
                yield [Record(index, row) for row in part]

    def _read_only_chunks(self, sql: str, params: Sequence[Any], size: int) -> Iterator[list[Record]]:
        # A read-only connection of its own, beside the store's one, used through the sqlite3 module directly:
        # SQLAlchemy made a Row of each row before its Record (a quarter to a third of the time of reading 20,000
        # outcomes).
        conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
        try:
            cursor = conn.execute(sql, tuple(params))
            index = {column[0]: n for n, column in enumerate(cursor.description or ())}
            while rows := cursor.fetchmany(size):
                yield [Record(index, row) for row in rows]
        finally:
            conn.close()

    def results(self, run_id: str, item_index: int | None = None) -> list[dict[str, Any]]:
        """Every stored outcome of the run (or of one item), JSON fields decoded, ordered by item then scorer."""
        query = sa.select(RESULTS).where(RESULTS.c.run_id == run_id)
        if item_index is not None:
            query = query.where(RESULTS.c.item_index == item_index)
        rows = self.query(query.order_by(RESULTS.c.item_index, RESULTS.c.scorer_id))
        return [_decode(r, "analysis", "details", "judge") for r in rows]

    # ---- baselines and gate verdicts

    def record_gate_verdict(
        self,
        *,
        candidate: str,
        candidate_run_id: str | None,
        baseline: str,
        baseline_run_id: str | None,
        verdict: str,
        details: dict[str, Any],
    ) -> int:
        """Append a gate verdict (``"pass"``, ``"fail"`` or ``"undecided"``); returns its id.

        Args:
            candidate, baseline: how the two sides were named (a run, a baseline, a file).
            candidate_run_id, baseline_run_id: their stored runs, or None (a file of no known run).
            verdict: the gate's verdict.
            details: the JSON verdict (:meth:`scorers.analysis.gate.GateResult.to_dict`).
        """
        with self.transaction() as db:
            cursor = db.execute(
                "INSERT INTO gate_verdicts (candidate_run_id, candidate, baseline_run_id, baseline, verdict, "
                "created_at, details) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (candidate_run_id, candidate, baseline_run_id, baseline, verdict, now_iso(), json.dumps(details)),
            )
            return int(cursor.fetchone()[0])

    def gate_verdicts(self, run_id: str) -> list[dict[str, Any]]:
        """Every gate verdict recorded with ``run_id`` as the candidate, newest first (``details`` decoded)."""
        rows = self.query("SELECT * FROM gate_verdicts WHERE candidate_run_id = ? ORDER BY id DESC", (run_id,))
        return [dict(r) | {"details": json.loads(r["details"])} for r in rows]

    def set_baseline(self, name: str, run_id: str, *, note: str = "") -> dict[str, Any]:
        """Point the named baseline at a run (appending to its history); returns the new entry.

        Refused for a run that failed a gate (any recorded ``fail`` verdict) and for a run
        that did not complete: a baseline must be a run the team trusts.

        Raises:
            ValueError: an empty name, no such run, a run that is not completed, a run that
                failed a gate (the message names the gate), or the run already is that baseline.
        """
        name = name.strip()
        if not name:
            raise ValueError("a baseline name cannot be empty")
        with self.transaction() as db:
            run = db.execute("SELECT status FROM runs WHERE id = ?", (run_id,)).fetchone()
            if run is None:
                raise ValueError(f"no run with id {run_id!r}")
            if run["status"] != "completed":
                raise ValueError(
                    f"run {run_id} is {run_status_label(run['status']).lower()}, not completed: finish it (python -m scorers run --resume "
                    f"{run_id}) before making it a baseline"
                )
            failed = db.execute(
                "SELECT baseline, created_at FROM gate_verdicts WHERE candidate_run_id = ? AND verdict = 'fail' "
                "ORDER BY id DESC LIMIT 1",
                (run_id,),
            ).fetchone()
            if failed is not None:
                raise ValueError(
                    f"run {run_id} failed its gate against {failed['baseline']} on {failed['created_at']}: a run "
                    "that failed a gate cannot become a baseline"
                )
            current = db.execute(
                "SELECT run_id FROM baselines WHERE name = ? ORDER BY id DESC LIMIT 1", (name,)
            ).fetchone()
            if current is not None and current["run_id"] == run_id:
                raise ValueError(f"baseline {name!r} already is run {run_id}")
            set_at = now_iso()
            cursor = db.execute(
                "INSERT INTO baselines (name, run_id, set_at, note) VALUES (?, ?, ?, ?) RETURNING id",
                (name, run_id, set_at, note),
            )
            entry_id = int(cursor.fetchone()[0])
        return {"id": entry_id, "name": name, "run_id": run_id, "set_at": set_at, "note": note}

    def current_baseline(self, name: str) -> dict[str, Any] | None:
        """The named baseline's current entry (``id``, ``name``, ``run_id``, ``set_at``, ``note``), or None."""
        rows = self.query("SELECT * FROM baselines WHERE name = ? ORDER BY id DESC LIMIT 1", (name.strip(),))
        return dict(rows[0]) if rows else None

    def baseline_history(self, name: str) -> list[dict[str, Any]]:
        """Every run the named baseline has pointed at, newest (current) first."""
        return [dict(r) for r in self.query("SELECT * FROM baselines WHERE name = ? ORDER BY id DESC", (name.strip(),))]

    def list_baselines(self) -> list[dict[str, Any]]:
        """The current entry of every named baseline, by name, with ``n_changes`` (entries in its history)."""
        rows = self.query(
            "SELECT b.*, (SELECT COUNT(*) FROM baselines h WHERE h.name = b.name) AS n_changes FROM baselines b "
            "WHERE b.id = (SELECT MAX(id) FROM baselines m WHERE m.name = b.name) ORDER BY b.name"
        )
        return [dict(r) for r in rows]

    def baselines_at(self, run_id: str) -> list[str]:
        """The names of the named baselines whose current run is ``run_id``, by name (deleting that run
        leaves them pointing at nothing: the gate refuses them until they are set again)."""
        return [b["name"] for b in self.list_baselines() if b["run_id"] == run_id]

    # ---- background jobs shared between processes

    def save_jobs(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Write the state of jobs (one row each: the columns of the ``jobs`` table but ``stop_requested``)."""
        if rows:
            with self.transaction() as db:
                db.sa.execute(_upsert(self.dialect, JOBS, "stop_requested"), [dict(r) for r in rows])

    def stored_jobs(self) -> list[dict[str, Any]]:
        """Every job row of every process, newest first."""
        return [dict(r) for r in self.query(sa.select(JOBS).order_by(JOBS.c.started_at.desc(), JOBS.c.id.desc()))]

    def request_job_stop(self, job_id: str) -> None:
        """Ask the process that runs job ``job_id`` (a stored id) to stop it.

        Raises:
            KeyError: no such stored job.
        """
        with self.transaction() as db:
            if db.execute(sa.update(JOBS).where(JOBS.c.id == job_id).values(stop_requested=1)).rowcount == 0:
                raise KeyError(f"no job {job_id!r} in the store")

    def jobs_to_stop(self, owner: str) -> list[str]:
        """The stored ids of ``owner``'s running jobs that another process asked to stop."""
        query = sa.select(JOBS.c.id).where(
            JOBS.c.owner == owner, JOBS.c.stop_requested == 1, JOBS.c.status == "running"
        )
        return [r[0] for r in self.query(query)]

    # ---- Batch API runs

    def add_batch(self, run_id: str, batch_id: str, input_file_id: str, custom_ids: Sequence[str]) -> None:
        """Record a batch just created for ``run_id`` and the requests it carries (awaiting answers)."""
        with self.transaction() as db:
            db.execute(
                sa.insert(BATCH_JOBS).values(
                    batch_id=batch_id,
                    run_id=run_id,
                    input_file_id=input_file_id,
                    n_requests=len(custom_ids),
                    status="validating",
                    created_at=now_iso(),
                )
            )
            expired = (
                {
                    r["custom_id"]: r["expired"]
                    for r in db.execute(
                        sa.select(BATCH_REQUESTS.c.custom_id, BATCH_REQUESTS.c.expired).where(
                            BATCH_REQUESTS.c.run_id == run_id, BATCH_REQUESTS.c.custom_id.in_(list(custom_ids))
                        )
                    )
                }
                if custom_ids
                else {}
            )
            rows = [
                {
                    "run_id": run_id,
                    "custom_id": cid,
                    "batch_id": batch_id,
                    "status_code": None,
                    "body": None,
                    "expired": expired.get(cid, 0),
                }
                for cid in custom_ids
            ]
            for start in range(0, len(rows), 1000):
                db.sa.execute(_upsert(self.dialect, BATCH_REQUESTS), rows[start : start + 1000])

    def forget_batch_answers(self, run_id: str, custom_ids: Sequence[str]) -> None:
        """Delete the run's answers to these requests, so that asking again sends them in the next batch."""
        with self.transaction() as db:
            for start in range(0, len(custom_ids), 1000):
                db.execute(
                    sa.delete(BATCH_REQUESTS).where(
                        BATCH_REQUESTS.c.run_id == run_id,
                        BATCH_REQUESTS.c.custom_id.in_(list(custom_ids[start : start + 1000])),
                    )
                )

    def batch_jobs(self, run_id: str) -> list[dict[str, Any]]:
        """The run's batches, oldest first: ``batch_id``, ``input_file_id``, ``n_requests``, ``status``..."""
        rows = self.query(
            sa.select(BATCH_JOBS)
            .where(BATCH_JOBS.c.run_id == run_id)
            .order_by(BATCH_JOBS.c.created_at, BATCH_JOBS.c.batch_id)
        )
        return [dict(r) for r in rows]

    def set_batch_status(self, batch_id: str, status: str, *, finished: bool = False) -> None:
        """Record the provider's status of a batch (``finished``: it is final)."""
        with self.transaction() as db:
            db.execute(
                sa.update(BATCH_JOBS)
                .where(BATCH_JOBS.c.batch_id == batch_id)
                .values(status=status, finished_at=now_iso() if finished else None)
            )

    def batch_requests(self, run_id: str) -> list[dict[str, Any]]:
        """The run's Batch API requests: ``custom_id``, ``batch_id``, ``status_code``, ``body`` (decoded), ``expired``."""
        rows = self.query(
            sa.select(BATCH_REQUESTS).where(BATCH_REQUESTS.c.run_id == run_id).order_by(BATCH_REQUESTS.c.custom_id)
        )
        return [_decode(r, "body") for r in rows]

    def save_batch_answers(
        self, run_id: str, rows: Sequence[tuple[str, str | None, int | None, dict[str, Any] | None, int]]
    ) -> None:
        """Write answers as ``(custom_id, batch_id, status_code, body, expired)`` rows, in one transaction."""
        values = [
            {
                "run_id": run_id,
                "custom_id": cid,
                "batch_id": batch_id,
                "status_code": code,
                "body": json.dumps(body) if body is not None else None,
                "expired": expired,
            }
            for cid, batch_id, code, body, expired in rows
        ]
        with self.transaction() as db:
            for start in range(0, len(values), 1000):
                db.sa.execute(_upsert(self.dialect, BATCH_REQUESTS), values[start : start + 1000])


PRAGMAS: tuple[str, ...] = (
    "foreign_keys = ON",
    "synchronous = NORMAL",
    "busy_timeout = 30000",
    "temp_store = MEMORY",
)
"""Set on every SQLite connection, besides ``journal_mode = WAL`` for a file (SQLite's "Write-Ahead
Logging" and "PRAGMA" pages): WAL lets the dashboard's readers work while one run writes; in WAL
mode ``synchronous = NORMAL`` keeps the database consistent after a crash and only skips the
fsync per commit (a power cut may lose the last commits, never corrupt the file); a writer that
finds the file locked by another process waits up to 30 s instead of failing at once."""


SQLITE_PAGE_SIZE = 8192
"""Bytes per page of a SQLite file the store creates (SQLite's default is 4096; a file made before
keeps its own). A run's item rows (the payload's JSON, about 1 kB for a 500-character pair) fitted
three to a 4 kB page with a quarter of it left over: with 8 kB pages a file of 100,000
textual-difference items and results is 12% smaller and SQLite spends about a fifth less CPU
writing it (SQLite's "Database File Format": the page size is set when the file is created)."""


class RunHeartbeat:
    """While its ``with`` block runs, a daemon thread writes the run's heartbeat: once on entering, then every
    :data:`HEARTBEAT_INTERVAL_S`.

    So the other processes sharing the store see the run is still scored (:meth:`Store.mark_interrupted`); when
    this process dies (``kill -9``, out of memory), the heartbeats stop with it. When a heartbeat finds the run is
    no longer this process's (another process marked it interrupted after :data:`HEARTBEAT_STALE_S` without one,
    or claimed it), ``on_lost`` is called once (the run stops starting items) and the heartbeats end; how the run
    ended is then that process's to record (:meth:`Store.finish_run` leaves it alone).

    Args:
        store: the run's store.
        run_id: the run this process scores.
        on_lost: called from the thread when the run is no longer this process's, or None.
        interval: seconds between two heartbeats, > 0.
    """

    def __init__(
        self,
        store: Store,
        run_id: str,
        on_lost: Callable[[], None] | None = None,
        *,
        interval: float = HEARTBEAT_INTERVAL_S,
    ):
        self.store = store
        self.run_id = run_id
        self.on_lost = on_lost
        self.interval = interval
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"heartbeat-{run_id}", daemon=True)

    def _loop(self) -> None:
        failed = False
        while not self._halt.is_set():  # the first heartbeat at once: the time since the run was stored is not lost
            try:
                mine = self.store.beat(self.run_id)
            except Exception as exc:  # the store is unreachable for a moment: the next heartbeat tries again
                if not failed:  # the first failure is logged (the store without its password), not every 5 s
                    _log.warning(
                        "Run %s: its heartbeat could not be written to %s (%s: %s); retried every %g s, "
                        "further failures not logged.",
                        self.run_id,
                        self.store.display_name,
                        type(exc).__name__,
                        _error_detail(exc),
                        self.interval,
                    )
                    failed = True
            else:
                if not mine:
                    if self.on_lost is not None:
                        self.on_lost()
                    return
            self._halt.wait(self.interval)

    def __enter__(self) -> RunHeartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._halt.set()
        self._thread.join()


def _sqlite_connect(dbapi_connection: Any, connection_record: Any) -> None:
    # pysqlite's own transaction handling is off: SQLAlchemy's "begin" event below emits BEGIN.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    # Before anything is written (journal_mode = WAL writes a new file's header); no effect on a file that exists.
    cursor.execute(f"PRAGMA page_size = {SQLITE_PAGE_SIZE}")
    if cursor.execute("PRAGMA journal_mode").fetchone()[0] != "memory":
        cursor.execute("PRAGMA journal_mode = WAL")
    for pragma in PRAGMAS:
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def _sqlite_begin(conn: sa.Connection) -> None:
    # A writer takes the write lock at BEGIN, so two writers wait for each other instead of failing mid-way.
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("scorer_studio_write") else "BEGIN")


def copy_store(source: Store, target: Store, *, chunk_rows: int = 5000) -> dict[str, int]:
    """Copy everything in ``source`` into the empty store ``target`` (SQLite → PostgreSQL or back), checking counts.

    Tables are copied in foreign-key order, in one transaction on the target (all or
    nothing), ``chunk_rows`` rows at a time. Label ids are kept (so is every history), and
    on PostgreSQL the id sequence continues after the copied ones.

    Args:
        source: the store to read.
        target: an empty store (no row in any table) at the same schema revision.
        chunk_rows: rows read and written at a time, >= 1.

    Returns:
        Rows copied per table, e.g. ``{"runs": 2, "items": 4, ...}``; equal to the source's counts.

    Raises:
        ValueError: ``target`` is not empty, the two stores are at different schema
            revisions, or ``source`` has tables this version does not know.
        StoreError: a table's count differs after the copy (nothing is committed).
    """
    if source.schema_version != target.schema_version:
        raise ValueError(
            f"{source.display_name} is at schema revision {source.schema_version}, {target.display_name} at "
            f"{target.schema_version}: open both with this version first"
        )
    with source.engine.connect() as conn:
        unknown = (
            set(sa.inspect(conn).get_table_names()) - set(METADATA.tables) - {"alembic_version", "schema_migrations"}
        )
    if unknown:
        raise ValueError(f"{source.display_name} has tables this version cannot copy: {', '.join(sorted(unknown))}")
    tables = METADATA.sorted_tables
    busy = {t.name: n for t in tables if (n := target.query(sa.select(sa.func.count()).select_from(t))[0][0])}
    if busy:
        raise ValueError(f"{target.display_name} is not empty ({busy}); copy into a new database")
    copied: dict[str, int] = {}
    with source.engine.connect() as src, target.transaction() as dst:
        for table in tables:
            result = src.execution_options(yield_per=chunk_rows).execute(sa.select(table))
            copied[table.name] = 0
            for rows in result.partitions():
                dst.sa.execute(sa.insert(table), [dict(r._mapping) for r in rows])
                copied[table.name] += len(rows)
        if target.dialect == "postgresql":  # the id sequences go on after the copied ids
            for table in tables:
                if "id" in table.c and table.c.id.autoincrement is True:
                    dst.sa.execute(
                        sa.text(
                            f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), COALESCE(MAX(id), 0) + 1, "
                            f"false) FROM {table.name}"
                        )
                    )

        for table in tables:
            want = src.execute(sa.select(sa.func.count()).select_from(table)).scalar()
            got = dst.sa.execute(sa.select(sa.func.count()).select_from(table)).scalar()
            if not want == got == copied[table.name]:
                raise StoreError(f"{table.name}: {want} rows in the source, {got} in the target after the copy")
    return copied
