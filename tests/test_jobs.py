"""The process-owned job registry (scorers/runs/jobs.py) and the run ownership that keeps stored statuses true."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading

import pytest

from scorers import Store
from scorers.runs import jobs


def _wait_started(started: threading.Event) -> None:
    assert started.wait(10), "the job's thread did not start"


def test_a_job_reports_progress_and_is_listed_until_it_ends():
    started, release = threading.Event(), threading.Event()

    def work(ctx: jobs.JobContext) -> str:
        ctx.progress(done=0, total=4, phase="scoring")
        ctx.add(done=1)
        ctx.add(done=1, failed=1)
        started.set()
        release.wait(10)
        return "result"

    job_id = jobs.start("test", "A test job", work)
    _wait_started(started)
    shot = jobs.snapshot(job_id)
    assert (shot.kind, shot.label, shot.status, shot.phase) == ("test", "A test job", "running", "scoring")
    assert (shot.done, shot.total, shot.failed, shot.fraction) == (2, 4, 1, 0.5)
    assert shot.describe().startswith("Scoring: 2 of 4 · 1 failed · about ")
    assert job_id in [s.id for s in jobs.list_jobs(running_only=True)]
    release.set()
    jobs.get(job_id).join(10)
    assert jobs.snapshot(job_id).status == "done"
    assert jobs.get(job_id).result == "result"
    assert job_id not in [s.id for s in jobs.list_jobs(running_only=True)]
    assert job_id in [s.id for s in jobs.list_jobs()]  # finished jobs stay readable
    assert jobs.snapshot(job_id).to_dict()["status"] == "done"


def test_stop_sets_the_cancel_event_and_the_job_ends_stopped():
    started = threading.Event()

    def work(ctx: jobs.JobContext) -> None:
        started.set()
        assert ctx.cancel.wait(10)
        ctx.note("stopped after 0 items")

    job_id = jobs.start("test", "stoppable", work, key="run:stop-me")
    _wait_started(started)
    with pytest.raises(jobs.JobConflict):
        jobs.start("test", "same key", lambda ctx: None, key="run:stop-me")
    assert jobs.running_for("run:stop-me").id == job_id
    jobs.stop(job_id)
    assert jobs.snapshot(job_id).status in ("stopping", "stopped")
    jobs.get(job_id).join(10)
    shot = jobs.snapshot(job_id)
    assert (shot.status, shot.message) == ("stopped", "stopped after 0 items")
    assert jobs.running_for("run:stop-me") is None
    jobs.get(jobs.start("test", "same key, later", lambda ctx: None, key="run:stop-me")).join(10)


def test_a_failing_job_keeps_its_error_and_partial_result():
    def work(ctx: jobs.JobContext) -> None:
        ctx.keep({"generated": 3})
        raise jobs.JobError("No response could be generated.")

    job = jobs.get(jobs.start("test", "fails", work))
    job.join(10)
    assert (job.snapshot().status, job.snapshot().message) == ("failed", "No response could be generated.")
    assert job.result == {"generated": 3}

    job = jobs.get(jobs.start("test", "bug", lambda ctx: 1 / 0))
    job.join(10)
    assert job.snapshot().message == "ZeroDivisionError: division by zero"
    assert isinstance(job.error, ZeroDivisionError)


def test_unknown_job_ids_raise_key_error():
    with pytest.raises(KeyError, match="no job"):
        jobs.snapshot("j-none")
    with pytest.raises(KeyError):
        jobs.stop("j-none")


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_runs_left_running_by_a_dead_process_are_marked_interrupted(tmp_path):
    store = Store(tmp_path / "s.db")
    item = [("a", {"input": "q", "output": "r"}, {})]
    ids = {name: store.create_run(dataset_name="d", items=item, scorers=[], judge=None) for name in "abcde"}
    host = socket.gethostname()
    owners = {
        "a": f"{host}:{_dead_pid()}",  # its process is gone
        "c": "elsewhere:1",  # another host: cannot be checked from here
        "d": None,  # written before owners were recorded
    }
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    owners["b"] = f"{host}:{live.pid}"  # still running (e.g. a CLI run)
    try:
        with store.transaction() as db:
            for name, owner in owners.items():
                db.execute("UPDATE runs SET owner = ? WHERE id = ?", (owner, ids[name]))
        # "e" is owned by this process: interrupted unless one of its jobs scores it.
        marked = store.mark_interrupted(alive=lambda run_id: False)
    finally:
        live.kill()
        live.wait()
    assert sorted(marked) == sorted([ids["a"], ids["d"], ids["e"]])
    status = {name: store.get_run(run_id)["status"] for name, run_id in ids.items()}
    assert status == {"a": "interrupted", "b": "running", "c": "running", "d": "interrupted", "e": "interrupted"}
    store.claim_run(ids["a"])  # resumed: running again, owned by this process
    assert store.get_run(ids["a"])["status"] == "running"
    assert ids["a"] not in store.mark_interrupted(alive=lambda run_id: run_id == ids["a"])  # its job scores it
    store.close()
