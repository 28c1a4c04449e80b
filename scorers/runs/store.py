"""SQLite storage: runs, their items and results, the judge-call cache, saved judges and human labels.

The database lives in the user's data directory (``platformdirs``), or where
``SCORER_STUDIO_DB`` points. Numbered migrations (``m001_...``) are applied
when a store is opened, as in simonw/llm. API keys are never stored: runs keep
the judge's model, endpoint and parameters only.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import platformdirs

DB_ENV = "SCORER_STUDIO_DB"


def default_db_path() -> Path:
    """``$SCORER_STUDIO_DB`` if set, else ``<user data dir>/scorer-studio/scorer_studio.db``."""
    override = os.environ.get(DB_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir("scorer-studio", appauthor=False)) / "scorer_studio.db"


def _run_script(db: sqlite3.Connection, script: str) -> None:
    # executescript() would COMMIT the migration's transaction half-way; run statement by statement.
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def _m001_initial(db: sqlite3.Connection) -> None:
    _run_script(
        db,
        """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            created_at TEXT NOT NULL,
            finished_at TEXT,
            status TEXT NOT NULL,
            dataset_name TEXT NOT NULL,
            n_items INTEGER NOT NULL,
            scorers TEXT NOT NULL,
            judge TEXT,
            mapping TEXT,
            config TEXT
        );
        CREATE TABLE items (
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            item_index INTEGER NOT NULL,
            item_id TEXT NOT NULL,
            payload TEXT NOT NULL,
            groups TEXT,
            PRIMARY KEY (run_id, item_index)
        );
        CREATE TABLE results (
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            item_index INTEGER NOT NULL,
            scorer_id TEXT NOT NULL,
            status TEXT NOT NULL,
            score REAL,
            reason TEXT,
            analysis TEXT,
            details TEXT,
            error TEXT,
            raw_reply TEXT,
            judge TEXT,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            judge_calls INTEGER NOT NULL DEFAULT 0,
            latency_s REAL,
            finished_at TEXT NOT NULL,
            PRIMARY KEY (run_id, item_index, scorer_id)
        );
        CREATE TABLE judge_cache (
            key TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            base_url TEXT NOT NULL,
            reply TEXT NOT NULL,
            prompt_tokens INTEGER NOT NULL,
            completion_tokens INTEGER NOT NULL,
            parameters TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        """,
    )


def _m002_judges(db: sqlite3.Connection) -> None:
    """Saved judge definitions (:mod:`scorers.catalogue.judge_store`): one row per judge, one per version.

    A version is never changed or removed; deleting a judge only hides it, so a run that
    names ``judge:<slug>@v<n>`` can always be rebuilt.
    """
    _run_script(
        db,
        """
        CREATE TABLE judges (
            slug TEXT PRIMARY KEY,
            created_at TEXT NOT NULL,
            deleted_at TEXT
        );
        CREATE TABLE judge_versions (
            slug TEXT NOT NULL REFERENCES judges(slug),
            version INTEGER NOT NULL,
            name TEXT NOT NULL,
            definition TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (slug, version)
        );
        """,
    )


def _m003_labels(db: sqlite3.Connection) -> None:
    """Human labels of results (:mod:`scorers.analysis.labels`): every save appends a row, the latest is current.

    A label concerns one run × item × scorer and keeps who gave it, when, and the judge's
    score it was given against; the judge's result itself is never changed. Deleting the
    run deletes its labels.
    """
    _run_script(
        db,
        """
        CREATE TABLE labels (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            item_index INTEGER NOT NULL,
            scorer_id TEXT NOT NULL,
            reviewer TEXT NOT NULL,
            created_at TEXT NOT NULL,
            human_score REAL,
            human_pass INTEGER,
            comment TEXT NOT NULL DEFAULT '',
            judge_score REAL,
            judge_status TEXT,
            source TEXT NOT NULL DEFAULT 'review'
        );
        CREATE INDEX labels_by_row ON labels (run_id, scorer_id, item_index, id)
        """,
    )


def _m004_run_owner(db: sqlite3.Connection) -> None:
    """Which process scores a run (``host:pid``), so a run left "running" by a dead process can be told apart."""
    db.execute("ALTER TABLE runs ADD COLUMN owner TEXT")


def _m005_baselines(db: sqlite3.Connection) -> None:
    """Named baselines with their history, and the gate verdicts recorded against runs (:mod:`scorers.analysis.gate`).

    Setting a baseline appends a row; the latest row of a name is its current run. A gate
    verdict is appended each time a run is gated, so a run that failed a gate can be refused
    as a baseline. No foreign key: the history outlives a deleted run (and says so).
    """
    _run_script(
        db,
        """
        CREATE TABLE baselines (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            name TEXT NOT NULL,
            run_id TEXT NOT NULL,
            set_at TEXT NOT NULL,
            note TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX baselines_by_name ON baselines (name, id);
        CREATE TABLE gate_verdicts (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            candidate_run_id TEXT,
            candidate TEXT NOT NULL,
            baseline_run_id TEXT,
            baseline TEXT NOT NULL,
            verdict TEXT NOT NULL,
            created_at TEXT NOT NULL,
            details TEXT NOT NULL
        );
        CREATE INDEX gate_verdicts_by_run ON gate_verdicts (candidate_run_id, id)
        """,
    )


def _m006_batches(db: sqlite3.Connection) -> None:
    """Batch API runs (:mod:`scorers.runs.batch_api`): the provider's batch ids and each request's answer.

    A request row is keyed by its ``custom_id`` (a hash of the request body). ``batch_id``
    is the batch it was last sent in (NULL: to be sent again); ``status_code`` is NULL until
    the batch answered it (200, the provider's 4xx/5xx, or 0 when the batch never ran it);
    ``expired`` counts the batches that expired before running it.
    """
    _run_script(
        db,
        """
        CREATE TABLE batch_jobs (
            batch_id TEXT PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            input_file_id TEXT NOT NULL,
            n_requests INTEGER NOT NULL,
            status TEXT NOT NULL,
            created_at TEXT NOT NULL,
            finished_at TEXT
        );
        CREATE TABLE batch_requests (
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            custom_id TEXT NOT NULL,
            batch_id TEXT,
            status_code INTEGER,
            body TEXT,
            expired INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (run_id, custom_id)
        );
        CREATE INDEX batch_requests_by_batch ON batch_requests (batch_id)
        """,
    )


def _m007_stop_reason(db: sqlite3.Connection) -> None:
    """Why a run stopped early (the judge unreachable, a budget cap), in a sentence."""
    db.execute("ALTER TABLE runs ADD COLUMN stop_reason TEXT")


def _m008_item_columns(db: sqlite3.Connection) -> None:
    """The dataset columns an item carries beyond the mapped ones (ids, metadata, human votes), as JSON.

    Exports write them back next to the scores, so nothing the user brought is lost.
    """
    db.execute("ALTER TABLE items ADD COLUMN columns TEXT")


def _m009_pairwise(db: sqlite3.Connection) -> None:
    """Pairwise-judge results of a run (:mod:`scorers.analysis.pairwise_runs`): the two variants, the rubric,
    the judge, and every pair's verdict in both orders (JSON). Deleting the run deletes them."""
    _run_script(
        db,
        """
        CREATE TABLE pairwise (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            created_at TEXT NOT NULL,
            a TEXT NOT NULL,
            b TEXT NOT NULL,
            group_col TEXT NOT NULL,
            pair_col TEXT NOT NULL,
            rubric TEXT NOT NULL,
            judge TEXT,
            outcomes TEXT NOT NULL
        );
        CREATE INDEX pairwise_by_run ON pairwise (run_id, id)
        """,
    )


MIGRATIONS: Sequence[Callable[[sqlite3.Connection], None]] = (
    _m001_initial,
    _m002_judges,
    _m003_labels,
    _m004_run_owner,
    _m005_baselines,
    _m006_batches,
    _m007_stop_reason,
    _m008_item_columns,
    _m009_pairwise,
)


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


def _columns_json(item: Sequence[Any]) -> str | None:
    return json.dumps(item[3]) if len(item) > 3 and item[3] else None


def now_iso() -> str:
    """The current UTC time as ISO 8601 with seconds."""
    return datetime.now(UTC).isoformat(timespec="seconds")


PRAGMAS: tuple[str, ...] = (
    "foreign_keys = ON",
    "journal_mode = WAL",
    "synchronous = NORMAL",
    "busy_timeout = 5000",
    "temp_store = MEMORY",
)
"""Set on every connection (SQLite's "Write-Ahead Logging" and "PRAGMA" pages): WAL lets the
dashboard's readers work while one run writes; in WAL mode ``synchronous = NORMAL`` keeps the
database consistent after a crash and only skips the fsync per commit (a power cut may lose
the last commits, never corrupt the file); a writer that finds the file locked waits up to
5 s instead of failing at once."""


@dataclass(frozen=True)
class CachedReply:
    """A judge reply kept in the cache: the raw text, its token usage and the parameters sent."""

    raw: str
    prompt_tokens: int
    completion_tokens: int
    parameters: dict[str, Any]


class Store:
    """A Scorer Studio database. Thread-safe: one connection guarded by a lock.

    Args:
        path: the SQLite file; None for :func:`default_db_path`; ``":memory:"`` for tests.

    Raises:
        sqlite3.DatabaseError: the file is not a database (the message names it).
    """

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path not in (None, ":memory:") else (default_db_path() if path is None else None)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        target = str(self.path) if self.path is not None else ":memory:"
        self._lock = threading.RLock()
        self._db = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        try:
            for pragma in PRAGMAS:
                self._db.execute(f"PRAGMA {pragma}")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise sqlite3.DatabaseError(f"{target}: not a Scorer Studio database ({exc})") from exc

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (committed on success, rolled back on error)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        """Run a read query and return all rows."""
        with self._lock:
            return self._db.execute(sql, params).fetchall()

    def _migrate(self) -> None:
        with self.transaction() as db:
            db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT)")
            done = {r[0] for r in db.execute("SELECT version FROM schema_migrations")}
            for version, migration in enumerate(MIGRATIONS, start=1):
                if version not in done:
                    migration(db)
                    db.execute("INSERT INTO schema_migrations VALUES (?, ?)", (version, now_iso()))

    @property
    def schema_version(self) -> int:
        """The highest migration applied."""
        return self.query("SELECT MAX(version) FROM schema_migrations")[0][0]

    # ---- judge cache

    def cache_get(self, key: str) -> CachedReply | None:
        """The cached judge reply for ``key``, or None."""
        rows = self.query(
            "SELECT reply, prompt_tokens, completion_tokens, parameters FROM judge_cache WHERE key = ?", (key,)
        )
        if not rows:
            return None
        row = rows[0]
        return CachedReply(row[0], row[1], row[2], json.loads(row[3]))

    def cache_put(self, key: str, *, model: str, base_url: str, reply: CachedReply) -> None:
        """Keep a valid judge reply under ``key`` (replacing any older one)."""
        with self.transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO judge_cache VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    model,
                    base_url,
                    reply.raw,
                    reply.prompt_tokens,
                    reply.completion_tokens,
                    json.dumps(reply.parameters),
                    now_iso(),
                ),
            )

    def cache_clear(self) -> int:
        """Empty the judge cache; returns how many replies were removed."""
        with self.transaction() as db:
            return db.execute("DELETE FROM judge_cache").rowcount

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
                "INSERT INTO runs (id, name, created_at, status, dataset_name, n_items, scorers, judge, mapping, config,"
                " owner) VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    name or f"{dataset_name} {created[:16].replace('T', ' ')}",
                    created,
                    dataset_name,
                    len(items),
                    json.dumps(list(scorers)),
                    json.dumps(judge),
                    json.dumps(mapping),
                    json.dumps(config),
                    process_owner(),
                ),
            )
            db.executemany(
                "INSERT INTO items (run_id, item_index, item_id, payload, groups, columns) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (run_id, i, item[0], json.dumps(item[1]), json.dumps(item[2]), _columns_json(item))
                    for i, item in enumerate(items)
                ],
            )
        return run_id

    def save_result(self, run_id: str, item_index: int, scorer_id: str, record: dict[str, Any]) -> None:
        """Write one item × scorer outcome (replacing an earlier attempt); see :meth:`save_results`."""
        self.save_results(run_id, [(item_index, scorer_id, record)])

    def save_results(self, run_id: str, outcomes: Sequence[tuple[int, str, dict[str, Any]]]) -> None:
        """Write a batch of item × scorer outcomes in one transaction (each replacing an earlier attempt).

        Args:
            run_id: the run.
            outcomes: ``(item_index, scorer_id, record)`` per outcome; ``record`` has
                ``status`` (a ScoreStatus value) and optional ``score``, ``reason``,
                ``analysis``, ``details``, ``error``, ``raw_reply``, ``judge``,
                ``prompt_tokens``, ``completion_tokens``, ``judge_calls``, ``latency_s``.
        """
        finished = now_iso()
        rows = [
            (
                run_id,
                item_index,
                scorer_id,
                record["status"],
                record.get("score"),
                record.get("reason"),
                json.dumps(record.get("analysis")),
                json.dumps(record.get("details")),
                record.get("error"),
                record.get("raw_reply"),
                json.dumps(record.get("judge")),
                record.get("prompt_tokens", 0),
                record.get("completion_tokens", 0),
                record.get("judge_calls", 0),
                record.get("latency_s"),
                finished,
            )
            for item_index, scorer_id, record in outcomes
        ]
        with self.transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
            )

    def finish_run(self, run_id: str, status: str, reason: str | None = None) -> None:
        """Record how a run ended: a :class:`~scorers.core.errors.RunStatus` value other than ``running``.

        Args:
            reason: why it stopped early, in a sentence (kept as ``stop_reason``), or None.
        """
        with self.transaction() as db:
            db.execute(
                "UPDATE runs SET status = ?, finished_at = ?, stop_reason = ? WHERE id = ?",
                (status, now_iso(), reason, run_id),
            )

    def claim_run(self, run_id: str) -> None:
        """Mark a run ``running`` in this process (see :func:`process_owner`), e.g. when it is resumed.

        Raises:
            KeyError: no such run.
        """
        with self.transaction() as db:
            cursor = db.execute(
                "UPDATE runs SET status = 'running', finished_at = NULL, stop_reason = NULL, owner = ? WHERE id = ?",
                (process_owner(), run_id),
            )
            if cursor.rowcount == 0:
                raise KeyError(f"no run with id {run_id!r}")

    def mark_interrupted(self, *, alive: Callable[[str], bool] | None = None) -> list[str]:
        """Mark ``interrupted`` every run stored as ``running`` whose process has died.

        Called when the dashboard starts. A run owned by a process that still runs on
        this host (a CLI run, another server) keeps ``running``; so does one owned by
        another host, which cannot be checked from here.

        Args:
            alive: ``alive(run_id)`` True when this process is scoring the run (its
                own jobs, which the owner check cannot tell from a dead process whose
                pid was reused); None when nothing in this process scores runs.

        Returns:
            The ids of the runs marked.
        """
        marked = []
        with self.transaction() as db:
            for row in db.execute("SELECT id, owner FROM runs WHERE status = 'running'").fetchall():
                mine = row["owner"] == process_owner()
                dead = (mine and not (alive and alive(row["id"]))) or (not mine and _owner_alive(row["owner"]) is False)
                if dead:
                    db.execute(
                        "UPDATE runs SET status = 'interrupted', finished_at = ? WHERE id = ?", (now_iso(), row["id"])
                    )
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
            if db.execute("UPDATE runs SET name = ? WHERE id = ?", (name.strip(), run_id)).rowcount == 0:
                raise ValueError(f"no run with id {run_id!r}")

    def delete_run(self, run_id: str) -> None:
        """Delete a run with its items and results."""
        with self.transaction() as db:
            db.execute("DELETE FROM runs WHERE id = ?", (run_id,))

    def get_run(self, run_id: str) -> dict[str, Any]:
        """The run's row as a dict with JSON fields decoded.

        Raises:
            KeyError: no such run.
        """
        rows = self.query("SELECT * FROM runs WHERE id = ?", (run_id,))
        if not rows:
            raise KeyError(f"no run with id {run_id!r}")
        run = dict(rows[0])
        for key in ("scorers", "judge", "mapping", "config"):
            run[key] = json.loads(run[key]) if run[key] else None
        return run

    def list_runs(self) -> list[dict[str, Any]]:
        """Every run, newest first, with per-scorer counts and means of scored items."""
        runs = [dict(r) for r in self.query("SELECT * FROM runs ORDER BY created_at DESC, rowid DESC")]
        stats = self.query(
            "SELECT run_id, scorer_id, COUNT(score) AS n_scored, SUM(status != 'scored') AS n_failed, AVG(score) AS mean"
            " FROM results GROUP BY run_id, scorer_id"
        )
        by_run: dict[str, dict[str, dict[str, Any]]] = {}
        for s in stats:
            by_run.setdefault(s["run_id"], {})[s["scorer_id"]] = {
                "n_scored": s["n_scored"],
                "n_failed": s["n_failed"],
                "mean": s["mean"],
            }
        for run in runs:
            for key in ("scorers", "judge", "mapping", "config"):
                run[key] = json.loads(run[key]) if run[key] else None
            run["stats"] = by_run.get(run["id"], {})
        return runs

    def items(self, run_id: str, item_index: int | None = None) -> list[dict[str, Any]]:
        """The run's items in order (or only ``item_index``): ``item_index``, ``item_id``, ``payload``,
        ``groups`` and ``columns`` (the unmapped dataset columns, ``{}`` when none were kept)."""
        sql = "SELECT * FROM items WHERE run_id = ?"
        params: tuple[Any, ...] = (run_id,)
        if item_index is not None:
            sql, params = sql + " AND item_index = ?", (run_id, item_index)
        return [
            {
                "item_index": r["item_index"],
                "item_id": r["item_id"],
                "payload": json.loads(r["payload"]),
                "groups": json.loads(r["groups"]) if r["groups"] else {},
                "columns": json.loads(r["columns"]) if r["columns"] else {},
            }
            for r in self.query(sql + " ORDER BY item_index", params)
        ]

    def count_results(self, run_id: str) -> int:
        """How many outcomes of the run are stored (a cheap version stamp of its results)."""
        return self.query("SELECT COUNT(*) FROM results WHERE run_id = ?", (run_id,))[0][0]

    def read_chunks(self, sql: str, params: Sequence[Any] = (), size: int = 2000) -> Iterator[list[sqlite3.Row]]:
        """Run a read query and yield its rows ``size`` at a time, so a large result is never held whole.

        A file database is read on a connection of its own (WAL lets it read while a run
        writes, from one consistent snapshot); an in-memory one under the store's lock.
        """
        if self.path is None:
            rows = self.query(sql, params)
            for start in range(0, len(rows), size):
                yield rows[start : start + size]
            return
        reader = sqlite3.connect(f"{self.path.as_uri()}?mode=ro", uri=True, check_same_thread=False)
        reader.row_factory = sqlite3.Row
        try:
            reader.execute("BEGIN")
            cursor = reader.execute(sql, params)
            while rows := cursor.fetchmany(size):
                yield rows
        finally:
            reader.close()

    def results(self, run_id: str, item_index: int | None = None) -> list[dict[str, Any]]:
        """Every stored outcome of the run (or of one item), JSON fields decoded, ordered by item then scorer."""
        sql = "SELECT * FROM results WHERE run_id = ?"
        params: tuple[Any, ...] = (run_id,)
        if item_index is not None:
            sql, params = sql + " AND item_index = ?", (run_id, item_index)
        out = []
        for r in self.query(sql + " ORDER BY item_index, scorer_id", params):
            row = dict(r)
            for key in ("analysis", "details", "judge"):
                row[key] = json.loads(row[key]) if row[key] else None
            out.append(row)
        return out

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
                "created_at, details) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (candidate_run_id, candidate, baseline_run_id, baseline, verdict, now_iso(), json.dumps(details)),
            )
            return int(cursor.lastrowid)

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
                    f"run {run_id} is {run['status']}, not completed: finish it (python -m scorers run --resume "
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
                "INSERT INTO baselines (name, run_id, set_at, note) VALUES (?, ?, ?, ?)", (name, run_id, set_at, note)
            )
        return {"id": int(cursor.lastrowid), "name": name, "run_id": run_id, "set_at": set_at, "note": note}

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

    # ---- Batch API runs

    def add_batch(self, run_id: str, batch_id: str, input_file_id: str, custom_ids: Sequence[str]) -> None:
        """Record a batch just created for ``run_id`` and the requests it carries (awaiting answers)."""
        with self.transaction() as db:
            db.execute(
                "INSERT INTO batch_jobs VALUES (?, ?, ?, ?, 'validating', ?, NULL)",
                (batch_id, run_id, input_file_id, len(custom_ids), now_iso()),
            )
            db.executemany(
                "INSERT INTO batch_requests (run_id, custom_id, batch_id) VALUES (?, ?, ?)"
                " ON CONFLICT (run_id, custom_id) DO UPDATE SET batch_id = excluded.batch_id, status_code = NULL,"
                " body = NULL",
                [(run_id, cid, batch_id) for cid in custom_ids],
            )

    def batch_jobs(self, run_id: str) -> list[dict[str, Any]]:
        """The run's batches, oldest first: ``batch_id``, ``input_file_id``, ``n_requests``, ``status``..."""
        rows = self.query("SELECT * FROM batch_jobs WHERE run_id = ? ORDER BY created_at, rowid", (run_id,))
        return [dict(r) for r in rows]

    def set_batch_status(self, batch_id: str, status: str, *, finished: bool = False) -> None:
        """Record the provider's status of a batch (``finished``: it is final)."""
        with self.transaction() as db:
            db.execute(
                "UPDATE batch_jobs SET status = ?, finished_at = ? WHERE batch_id = ?",
                (status, now_iso() if finished else None, batch_id),
            )

    def batch_requests(self, run_id: str) -> list[dict[str, Any]]:
        """The run's Batch API requests: ``custom_id``, ``batch_id``, ``status_code``, ``body`` (decoded), ``expired``."""
        out = []
        for r in self.query("SELECT * FROM batch_requests WHERE run_id = ? ORDER BY custom_id", (run_id,)):
            row = dict(r)
            row["body"] = json.loads(row["body"]) if row["body"] else None
            out.append(row)
        return out

    def save_batch_answers(
        self, run_id: str, rows: Sequence[tuple[str, str | None, int | None, dict[str, Any] | None, int]]
    ) -> None:
        """Write answers as ``(custom_id, batch_id, status_code, body, expired)`` rows, in one transaction."""
        with self.transaction() as db:
            db.executemany(
                "INSERT OR REPLACE INTO batch_requests VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (run_id, cid, batch_id, code, json.dumps(body) if body is not None else None, expired)
                    for cid, batch_id, code, body, expired in rows
                ],
            )
