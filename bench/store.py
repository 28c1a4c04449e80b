"""Benchmark the store: result writes per second, and reading a large run back, on SQLite and PostgreSQL.

Run from the repository root: ``python bench/store.py`` (``--help`` for options). With
``--pg URL`` (or ``SCORER_STUDIO_TEST_PG_URL`` set, as ``.ci/postgres.sh`` does) the same
is measured on PostgreSQL, in a new database that is dropped afterwards.

Per database it prints:

* writes/s: ``--writes`` outcomes saved one by one with ``Store.save_result`` (one
  transaction each, as a run writes them as they finish), by ``--writers`` threads at once;
* open s: ``load_run`` of a stored run of ``--rows`` items (what History and the Batch
  page read to show a run), best of 3;
* the ratio of each to SQLite's, measured in the same run. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from scorers import Store, load_run  # noqa: E402

RECORD = {
    "status": "scored",
    "score": 0.84,
    "reason": "The response addresses the request with small gaps.",
    "analysis": {"ratio": 0.84, "changes": 3, "lengthDiff": 0.1, "confidence": 0.9},
    "prompt_tokens": 420,
    "completion_tokens": 120,
    "judge_calls": 1,
    "latency_s": 0.8,
}


def writes_per_second(store: Store, n: int, writers: int) -> float:
    run_id = store.create_run(
        dataset_name="bench",
        items=[(f"i{i}", {"input": "q", "output": "a"}, {}) for i in range(n)],
        scorers=[],
        judge=None,
    )
    per = n // writers

    def write(w: int) -> None:
        for i in range(w * per, (w + 1) * per):
            store.save_result(run_id, i, "bench", RECORD)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return per * writers / (time.perf_counter() - start)


def open_seconds(store: Store, rows: int) -> float:
    run_id = store.create_run(
        dataset_name="bench",
        items=[(f"i{i}", {"input": f"question {i}", "output": "answer " * 20}, {"g": i % 3}) for i in range(rows)],
        scorers=[{"id": "bench", "name": "bench", "options": {}}],
        judge=None,
    )
    with store.transaction() as db:
        db.executemany(
            "INSERT INTO results (run_id, item_index, scorer_id, status, score, reason, finished_at)"
            " VALUES (?, ?, 'bench', 'scored', 0.5, 'fine', '2026-01-01T00:00:00+00:00')",
            [(run_id, i) for i in range(rows)],
        )
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        load_run(store, run_id)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writes", type=int, default=1000)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--pg", default=os.environ.get("SCORER_STUDIO_TEST_PG_URL"), help="a PostgreSQL server URL")
    args = parser.parse_args()
    targets = {}
    with tempfile.TemporaryDirectory() as tmp:
        targets["SQLite (file, WAL)"] = str(Path(tmp) / "bench.db")
        admin = None
        if args.pg:
            import psycopg
            from sqlalchemy.engine import make_url

            name = f"bench_{uuid.uuid4().hex[:8]}"
            admin = psycopg.connect(args.pg, autocommit=True)
            admin.execute(f'CREATE DATABASE "{name}"')
            targets["PostgreSQL"] = make_url(args.pg).set(database=name).render_as_string(hide_password=False)
        try:
            results = {}
            for label, target in targets.items():
                store = Store(target)
                results[label] = (writes_per_second(store, args.writes, args.writers), open_seconds(store, args.rows))
                store.close()
        finally:
            if admin is not None:
                admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
                admin.close()
    base_w, base_o = results["SQLite (file, WAL)"]
    print(f"{args.writes} single-row writes by {args.writers} threads; load_run of {args.rows:,} rows (best of 3)")
    for label, (w, o) in results.items():
        print(f"{label:20s} {w:8.0f} writes/s ({w / base_w:.2f}x SQLite)   open {o:6.2f} s ({o / base_o:.2f}x SQLite)")


if __name__ == "__main__":
    main()
