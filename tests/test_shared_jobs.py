"""Jobs seen and stopped from another process through the store (SQLite and PostgreSQL)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from scorers.runs import jobs
from scorers.runs.shared_jobs import other_jobs, share_jobs, stored_id
from scorers.runs.store import Store

REPO = Path(__file__).resolve().parents[1]

_OTHER_PROCESS = """
import sys, time
sys.path.insert(0, sys.argv[1])
from scorers.runs.shared_jobs import other_jobs, request_stop
from scorers.runs.store import Store
store = Store(sys.argv[2])
deadline = time.time() + 60
while time.time() < deadline:
    seen = [j for j in other_jobs(store) if j["label"] == "long job"]
    if seen and seen[0]["done"] >= 3:
        break
    time.sleep(0.05)
(job,) = seen
print(job["status"], job["done"] >= 3, job["total"])
request_stop(store, job["id"])
"""


def test_a_job_is_seen_and_stopped_from_another_process(store_target: str):
    store = Store(store_target)
    sync = share_jobs(store, interval=0.05)

    def work(ctx: jobs.JobContext) -> str:
        for n in range(100_000):
            if ctx.cancel.is_set():
                return "stopped early"
            ctx.progress(done=n, total=100_000, phase="counting")
            time.sleep(0.01)
        return "ran to the end"

    job_id = jobs.start("test", "long job", work)
    try:
        other = subprocess.run(
            [sys.executable, "-c", _OTHER_PROCESS, str(REPO), store_target],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert other.returncode == 0, other.stderr[-2000:]
        assert other.stdout.split() == ["running", "True", "100000"]
        jobs.get(job_id).join(timeout=30)  # the stop reaches it within a round or two
        assert jobs.get(job_id).result == "stopped early"
        assert jobs.snapshot(job_id).status == "stopped"
        sync.sync_once()
        (row,) = [r for r in store.stored_jobs() if r["id"] == stored_id(job_id)]
        assert (row["status"], row["stop_requested"]) == ("stopped", 1)
    finally:
        jobs.stop(job_id)
        sync.close()
        store.close()


def test_a_job_whose_process_stopped_writing_is_lost(tmp_path: Path):
    store = Store(tmp_path / "jobs.db")
    row = {
        "id": "elsewhere:1/j1",
        "owner": "elsewhere:1",
        "kind": "batch",
        "label": "old run",
        "status": "running",
        "phase": "scoring",
        "done": 5,
        "total": 10,
        "failed": 0,
        "started_at": "2026-01-01T00:00:00+00:00",
        "elapsed_s": 3.0,
        "message": "",
        "run_id": None,
        "job_key": None,
        "updated_at": time.time() - 60,
    }
    store.save_jobs([row, {**row, "id": "elsewhere:1/j2", "updated_at": time.time()}])
    statuses = {j["id"]: j["status"] for j in other_jobs(store, stale_after=30)}
    assert statuses == {"elsewhere:1/j1": "lost", "elsewhere:1/j2": "running"}
    assert [j["id"] for j in other_jobs(store, stale_after=30) if j["status"] != "lost"] == ["elsewhere:1/j2"]
    store.close()
