"""Background jobs seen and stopped across processes, through the store.

:mod:`scorers.runs.jobs` keeps a process's jobs in memory. With a store shared by several
dashboard processes (PostgreSQL), :func:`share_jobs` starts one thread per process that,
every ``interval`` seconds, writes the state of this process's jobs to the store's
``jobs`` table and stops those another process asked to stop (:func:`request_stop`).
:func:`other_jobs` lists the jobs of the other processes; a job whose process has not
written for ``stale_after`` seconds is reported ``lost`` (the process died).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from scorers.runs import jobs
from scorers.runs.store import Store, process_owner

_SYNCS: dict[int, JobSync] = {}
_SYNCS_LOCK = threading.Lock()


def stored_id(job_id: str) -> str:
    """The id a job of this process has in the store: ``"<host>:<pid>/<job id>"``."""
    return f"{process_owner()}/{job_id}"


def _row(shot: jobs.JobSnapshot, now: float) -> dict[str, Any]:
    return {
        "id": stored_id(shot.id),
        "owner": process_owner(),
        "kind": shot.kind,
        "label": shot.label,
        "status": shot.status,
        "phase": shot.phase,
        "done": shot.done,
        "total": shot.total,
        "failed": shot.failed,
        "started_at": shot.started_at,
        "elapsed_s": shot.elapsed_s,
        "message": shot.message,
        "run_id": shot.run_id,
        "job_key": shot.key,
        "updated_at": now,
    }


class JobSync:
    """The thread that mirrors this process's jobs into a store (see the module docstring)."""

    def __init__(self, store: Store, interval: float):
        self.store = store
        self.interval = interval
        self._written_final: set[str] = set()
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="shared-jobs", daemon=True)

    def sync_once(self) -> None:
        """Write the jobs' state and stop the jobs another process asked to stop (one round)."""
        now = time.time()
        shots = [s for s in jobs.list_jobs() if s.running or s.id not in self._written_final]
        self.store.save_jobs([_row(s, now) for s in shots])
        self._written_final.update(s.id for s in shots if not s.running)
        prefix = f"{process_owner()}/"
        for wanted in self.store.jobs_to_stop(process_owner()):
            try:
                jobs.stop(wanted.removeprefix(prefix))
            except KeyError:  # finished and dropped from the registry meanwhile
                continue

    def _loop(self) -> None:
        while not self._halt.wait(self.interval):
            try:
                self.sync_once()
            except Exception:  # the store is unreachable for a moment: try again next round
                continue

    def close(self) -> None:
        """Stop the thread (tests)."""
        self._halt.set()
        self._thread.join(timeout=5)


def share_jobs(store: Store, *, interval: float = 1.0) -> JobSync:
    """Mirror this process's jobs into ``store`` from now on (once per store; later calls return the same).

    Args:
        store: the store the processes share.
        interval: seconds between two rounds, > 0.
    """
    with _SYNCS_LOCK:
        sync = _SYNCS.get(id(store))
        if sync is None:
            sync = _SYNCS[id(store)] = JobSync(store, interval)
            sync._thread.start()
        return sync


def shared_store() -> Store | None:
    """The store this process shares its jobs through (the first :func:`share_jobs` one), or None."""
    with _SYNCS_LOCK:
        return next((sync.store for sync in _SYNCS.values()), None)


def other_jobs(store: Store, *, running_only: bool = True, stale_after: float = 30.0) -> list[dict[str, Any]]:
    """The jobs of the other processes sharing ``store``, newest first.

    With ``running_only``, only the running ones and the lost ones. Each is the ``jobs`` row
    as a dict; ``status`` is ``lost`` for a job still marked running whose process has not
    written for ``stale_after`` seconds (it died).
    """
    now = time.time()
    out = []
    for row in store.stored_jobs():
        if row["owner"] == process_owner():
            continue
        if row["status"] in ("running", "stopping") and now - row["updated_at"] > stale_after:
            row["status"] = "lost"
        if running_only and row["status"] not in ("running", "stopping", "lost"):
            continue
        out.append(row)
    return out


def request_stop(store: Store, job_id: str) -> None:
    """Ask the process running the stored job ``job_id`` to stop it (it does within its next round).

    Raises:
        KeyError: no such stored job.
    """
    store.request_job_stop(job_id)
