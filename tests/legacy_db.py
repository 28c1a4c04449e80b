"""Databases as the SQLite-only store of earlier versions wrote them (numbered migrations in schema_migrations).

The DDL below is what ``m001_initial`` .. ``m009_pairwise`` of ``scorers/runs/store.py``
executed before the store moved to SQLAlchemy and Alembic; tests build an old file with
:func:`make_legacy_db` and check that today's store upgrades it in place.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

LEGACY_DDL = {
    1: """
        CREATE TABLE runs (id TEXT PRIMARY KEY, name TEXT NOT NULL, created_at TEXT NOT NULL, finished_at TEXT,
            status TEXT NOT NULL, dataset_name TEXT NOT NULL, n_items INTEGER NOT NULL, scorers TEXT NOT NULL,
            judge TEXT, mapping TEXT, config TEXT);
        CREATE TABLE items (run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, item_index INTEGER NOT NULL,
            item_id TEXT NOT NULL, payload TEXT NOT NULL, groups TEXT, PRIMARY KEY (run_id, item_index));
        CREATE TABLE results (run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            item_index INTEGER NOT NULL, scorer_id TEXT NOT NULL, status TEXT NOT NULL, score REAL, reason TEXT,
            analysis TEXT, details TEXT, error TEXT, raw_reply TEXT, judge TEXT,
            prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
            judge_calls INTEGER NOT NULL DEFAULT 0, latency_s REAL, finished_at TEXT NOT NULL,
            PRIMARY KEY (run_id, item_index, scorer_id));
        CREATE TABLE judge_cache (key TEXT PRIMARY KEY, model TEXT NOT NULL, base_url TEXT NOT NULL,
            reply TEXT NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
            parameters TEXT NOT NULL, created_at TEXT NOT NULL);
    """,
    2: """
        CREATE TABLE judges (slug TEXT PRIMARY KEY, created_at TEXT NOT NULL, deleted_at TEXT);
        CREATE TABLE judge_versions (slug TEXT NOT NULL REFERENCES judges(slug), version INTEGER NOT NULL,
            name TEXT NOT NULL, definition TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (slug, version));
    """,
    3: """
        CREATE TABLE labels (id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, item_index INTEGER NOT NULL,
            scorer_id TEXT NOT NULL, reviewer TEXT NOT NULL, created_at TEXT NOT NULL, human_score REAL,
            human_pass INTEGER, comment TEXT NOT NULL DEFAULT '', judge_score REAL, judge_status TEXT,
            source TEXT NOT NULL DEFAULT 'review');
        CREATE INDEX labels_by_row ON labels (run_id, scorer_id, item_index, id);
    """,
    4: "ALTER TABLE runs ADD COLUMN owner TEXT;",
    5: """
        CREATE TABLE baselines (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, run_id TEXT NOT NULL,
            set_at TEXT NOT NULL, note TEXT NOT NULL DEFAULT '');
        CREATE INDEX baselines_by_name ON baselines (name, id);
        CREATE TABLE gate_verdicts (id INTEGER PRIMARY KEY AUTOINCREMENT, candidate_run_id TEXT,
            candidate TEXT NOT NULL, baseline_run_id TEXT, baseline TEXT NOT NULL, verdict TEXT NOT NULL,
            created_at TEXT NOT NULL, details TEXT NOT NULL);
        CREATE INDEX gate_verdicts_by_run ON gate_verdicts (candidate_run_id, id);
    """,
    6: """
        CREATE TABLE batch_jobs (batch_id TEXT PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            input_file_id TEXT NOT NULL, n_requests INTEGER NOT NULL, status TEXT NOT NULL,
            created_at TEXT NOT NULL, finished_at TEXT);
        CREATE TABLE batch_requests (run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            custom_id TEXT NOT NULL, batch_id TEXT, status_code INTEGER, body TEXT,
            expired INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (run_id, custom_id));
        CREATE INDEX batch_requests_by_batch ON batch_requests (batch_id);
    """,
    7: "ALTER TABLE runs ADD COLUMN stop_reason TEXT;",
    8: "ALTER TABLE items ADD COLUMN columns TEXT;",
    9: """
        CREATE TABLE pairwise (id INTEGER PRIMARY KEY AUTOINCREMENT,
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, created_at TEXT NOT NULL, a TEXT NOT NULL,
            b TEXT NOT NULL, group_col TEXT NOT NULL, pair_col TEXT NOT NULL, rubric TEXT NOT NULL, judge TEXT,
            outcomes TEXT NOT NULL);
        CREATE INDEX pairwise_by_run ON pairwise (run_id, id);
    """,
}


def make_legacy_db(path: Path, version: int) -> sqlite3.Connection:
    """Create ``path`` as the old store at schema ``version`` left it; returns an open connection (commit, close)."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT)")
    for n in range(1, version + 1):
        db.executescript(LEGACY_DDL[n])
        db.execute("INSERT INTO schema_migrations VALUES (?, '2025-01-01T00:00:00+00:00')", (n,))
    db.commit()
    return db
