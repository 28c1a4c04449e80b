"""Killing a run's process part-way, for the tests that a killed run resumes without scoring anything twice."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path


def stored_results(db: Path) -> int:
    """How many results the SQLite file ``db`` holds (0 before its tables exist, or while it is locked)."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=1.0) as conn:
            return conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.OperationalError:  # tables not created yet, or locked for a moment
        return 0


def kill_once_stored(child: subprocess.Popen, db: Path, n: int, within_s: float) -> None:
    """SIGKILL ``child`` once ``db`` holds ``n`` results; fail if it exits first or takes over ``within_s`` s."""
    try:
        deadline = time.monotonic() + within_s
        while stored_results(db) < n:
            assert child.poll() is None, child.communicate()[1].decode()
            assert time.monotonic() < deadline, f"the run did not store {n} results within {within_s:g} s"
            time.sleep(0.02)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()
