"""Background jobs owned by the process, not by a browser session: one mechanism for everything long.

A job is a function run in its own thread. The registry is module level, so every
Streamlit session of a server sees every job, can read its progress and stop it, and a
job whose session has ended runs until it is done or stopped. Batch runs, comparisons
(generation and scoring), pairwise judging and re-judging all start through it.

API (every function is thread-safe)::

    from scorers.runs import jobs

    def work(ctx: jobs.JobContext) -> Any:      # runs in the job's thread
        for i, item in enumerate(items):
            if ctx.cancel.is_set():              # Stop was pressed: end early, keep what is done
                break
            ...
            ctx.progress(done=i + 1, total=len(items), failed=n_failed, phase="scoring")
        return result                             # kept as ``jobs.get(job_id).result``

    job_id = jobs.start("batch", "Scoring run 1a2b", work, key="run:1a2b", run_id="1a2b")
    jobs.snapshot(job_id)    # JobSnapshot: status, phase, done / total, failed, elapsed, ETA
    jobs.stop(job_id)        # ask it to stop (sets ctx.cancel); the thread ends after work in flight
    jobs.list_jobs()         # every job of this process, newest first (finished ones too)
    jobs.get(job_id)         # the Job: .result, .error, .join(timeout)

``key`` makes a job exclusive: while a job with the same key runs, :func:`start` raises
:class:`JobConflict` (one job per stored run). A job's status is one of
:data:`JOB_STATUSES`; :meth:`JobSnapshot.to_dict` gives a JSON-ready record of it, so a
store shared between processes can keep job state later.

The work function ends the job by returning (status ``done``, or ``stopped`` when Stop
was pressed) or raising (status ``failed``; the exception is kept in ``Job.error`` and
its text in the snapshot's ``message``: a :class:`JobError`'s message alone, any other
exception with its type). It may set a closing note with ``ctx.note(text)`` and keep a
partial result with ``ctx.keep(value)`` (still there when it then raises).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from scorers.core.errors import ScoreStatus

JOB_STATUSES: tuple[str, ...] = ("running", "stopping", "done", "stopped", "failed")
"""``running``; ``stopping`` (Stop pressed, work in flight finishing); then ``done``, ``stopped`` or ``failed``."""

FINISHED_KEPT = 50
"""Finished jobs kept in the registry (the newest), so a session can still read how its job ended."""


class JobConflict(RuntimeError):
    """A job with the same key is already running."""


class JobError(Exception):
    """Raise it from a work function to end the job as ``failed`` with this message (and no type name)."""


@dataclass(frozen=True)
class JobSnapshot:
    """A job's state at one moment (safe to keep; never changes).

    Attributes:
        id: the job id.
        kind: what it does, e.g. ``"batch"``, ``"compare"``, ``"pairwise"``, ``"rejudge"``.
        label: one line for people, e.g. ``"Scoring run 1a2b (examples.csv)"``.
        status: one of :data:`JOB_STATUSES`.
        phase: the current step, e.g. ``"generating"`` or ``"scoring"`` ("" if none).
        done: units finished in this phase.
        total: units in this phase (0 when not known yet).
        failed: finished units that failed.
        started_at: ISO 8601 UTC time the job started.
        elapsed_s: seconds since it started (until it ended).
        message: the closing note, or the error text of a failed job ("" when none).
        run_id: the stored run the job writes, when there is one.
        key: the exclusivity key, or None.
    """

    id: str
    kind: str
    label: str
    status: str
    phase: str
    done: int
    total: int
    failed: int
    started_at: str
    elapsed_s: float
    message: str = ""
    run_id: str | None = None
    key: str | None = None

    @property
    def running(self) -> bool:
        """True while the thread works (``running`` or ``stopping``)."""
        return self.status in ("running", "stopping")

    @property
    def fraction(self) -> float:
        """``done / total`` in [0, 1] (0 when the total is not known, 1 once finished)."""
        if not self.total:
            return 0.0 if self.running else 1.0
        return min(1.0, self.done / self.total)

    @property
    def eta_s(self) -> float | None:
        """Seconds left at this phase's pace so far, or None (nothing done yet, total unknown, or ended)."""
        if not self.running or self.done == 0 or not self.total:
            return None
        return self.elapsed_s / self.done * max(0, self.total - self.done)

    def describe(self) -> str:
        """One line for a progress bar.

        >>> JobSnapshot("j1", "batch", "run", "running", "scoring", 4, 10, 1, "", 8.0).describe()
        'Scoring: 4 of 10 · 1 failed · about 12 s left'
        >>> JobSnapshot("j1", "batch", "run", "done", "scoring", 2, 2, 0, "", 65.0).describe()
        'Done: 2 of 2 · 0 failed · took 1 min 5 s'
        """
        head = {"running": self.phase.capitalize() or "Working", "stopping": "Stopping"}.get(
            self.status, self.status.capitalize()
        )
        parts = [f"{head}: {self.done} of {self.total}" if self.total else f"{head}: {self.done} done"]
        parts.append(f"{self.failed} failed")
        if self.running:
            eta = self.eta_s
            parts.append("estimating time left…" if eta is None else f"about {format_duration(eta)} left")
        else:
            parts.append(f"took {format_duration(self.elapsed_s)}")
        return " · ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The snapshot as JSON-ready fields (a row a store could keep)."""
        return asdict(self)


def format_duration(seconds: float) -> str:
    """``"42 s"``, ``"3 min 5 s"`` or ``"1 h 2 min"``.

    >>> [format_duration(s) for s in (4.2, 185, 3725)]
    ['4 s', '3 min 5 s', '1 h 2 min']
    """
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


class JobContext:
    """What a work function gets: the stop request and a way to report progress."""

    def __init__(self, job: Job):
        self._job = job
        self.cancel: threading.Event = job._cancel
        """Set when Stop is pressed; pass it on (e.g. ``run_evals(cancel=ctx.cancel)``)."""

    def progress(
        self, *, done: int | None = None, total: int | None = None, failed: int | None = None, phase: str | None = None
    ) -> None:
        """Report progress: any of units done, units in the phase, units failed, the phase's name."""
        self._job._update(done=done, total=total, failed=failed, phase=phase)

    def add(self, *, done: int = 0, failed: int = 0) -> None:
        """Count ``done`` more finished units, ``failed`` of them failed (for callbacks from worker threads)."""
        with self._job._lock:
            self._job._done += done
            self._job._failed += failed

    def on_item_complete(self, index: int, item: Any, outcomes: Sequence[Any]) -> None:
        """A :func:`scorers.run_evals` ``on_item_complete`` callback: one item done, failed if any outcome is not scored."""
        self.add(done=1, failed=int(any(o.status is not ScoreStatus.SCORED for o in outcomes)))

    def note(self, text: str) -> None:
        """Set the closing note shown with the finished job (e.g. "paused: the judge is unreachable")."""
        with self._job._lock:
            self._job._message = text

    def keep(self, result: Any) -> None:
        """Keep ``result`` as the job's result now (a partial one, kept even if the work then raises)."""
        self._job.result = result

    def set_run_id(self, run_id: str) -> None:
        """Name the stored run the job writes (once it is created)."""
        with self._job._lock:
            self._job.run_id = run_id


class Job:
    """One background job. Create it with :func:`start`."""

    def __init__(
        self, job_id: str, kind: str, label: str, work: Callable[[JobContext], Any], key: str | None, run_id: str | None
    ):
        self.id = job_id
        self.kind = kind
        self.label = label
        self.key = key
        self.run_id = run_id
        self.result: Any = None
        self.error: BaseException | None = None
        self._work = work
        self._cancel = threading.Event()
        self._lock = threading.Lock()
        self._phase = ""
        self._done = self._total = self._failed = 0
        self._message = ""
        self._status = "running"
        self._started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._t0 = time.monotonic()
        self._t1: float | None = None
        self._thread = threading.Thread(target=self._run, name=f"job-{kind}-{job_id}", daemon=True)

    def _update(self, **changes: Any) -> None:
        with self._lock:
            for name, value in changes.items():
                if value is not None:
                    setattr(self, f"_{name}", value)

    def _run(self) -> None:
        try:
            result = self._work(JobContext(self))
            if result is not None:
                self.result = result
            status = "stopped" if self._cancel.is_set() else "done"
        except Exception as exc:  # the job's outcome: shown with the job, never lost
            self.error = exc
            status = "failed"
            with self._lock:
                self._message = str(exc) if isinstance(exc, JobError) else f"{type(exc).__name__}: {exc}"
        with self._lock:
            self._status = status
            self._t1 = time.monotonic()

    @property
    def running(self) -> bool:
        """True until the work function has returned or raised."""
        with self._lock:
            return self._status in ("running", "stopping")

    def stop(self) -> None:
        """Ask the job to stop (see :func:`stop`)."""
        with self._lock:
            if self._status == "running":
                self._status = "stopping"
        self._cancel.set()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the thread to end (tests and callers that must wait)."""
        self._thread.join(timeout)

    def snapshot(self) -> JobSnapshot:
        """The job's state now."""
        with self._lock:
            end = self._t1 if self._t1 is not None else time.monotonic()
            return JobSnapshot(
                id=self.id,
                kind=self.kind,
                label=self.label,
                status=self._status,
                phase=self._phase,
                done=self._done,
                total=self._total,
                failed=self._failed,
                started_at=self._started_at,
                elapsed_s=max(0.0, end - self._t0),
                message=self._message,
                run_id=self.run_id,
                key=self.key,
            )


_JOBS: dict[str, Job] = {}
_LOCK = threading.Lock()
_IDS = itertools.count(1)


def start(
    kind: str, label: str, work: Callable[[JobContext], Any], *, key: str | None = None, run_id: str | None = None
) -> str:
    """Start ``work(ctx)`` in a background thread owned by this process.

    Args:
        kind: what the job does (``"batch"``, ``"compare"``, ``"pairwise"``, ``"rejudge"``, ...).
        label: one line shown in every session's job list.
        work: the function to run; it gets a :class:`JobContext`.
        key: while a job with this key runs, no other may start (e.g. ``"run:<run id>"``).
        run_id: the stored run the job writes, when known at start.

    Returns:
        The job id (``"j1"``, ``"j2"``, ... in this process).

    Raises:
        JobConflict: a job with ``key`` is still running.
    """
    with _LOCK:
        if key is not None and any(j.key == key and j.running for j in _JOBS.values()):
            raise JobConflict(f"{key} is already being worked on by another job; wait for it or stop it first")
        job_id = f"j{next(_IDS)}"
        job = Job(job_id, kind, label, work, key, run_id)
        _JOBS[job_id] = job
        finished = [jid for jid, j in _JOBS.items() if not j.running]
        for jid in finished[: max(0, len(finished) - FINISHED_KEPT)]:
            del _JOBS[jid]
    job._thread.start()
    return job_id


def get(job_id: str) -> Job:
    """The job with this id.

    Raises:
        KeyError: no such job in this process (an unknown id, or a finished job dropped long ago).
    """
    with _LOCK:
        try:
            return _JOBS[job_id]
        except KeyError:
            raise KeyError(f"no job {job_id!r} in this process") from None


def snapshot(job_id: str) -> JobSnapshot:
    """The job's progress now (see :class:`JobSnapshot`).

    Raises:
        KeyError: no such job.
    """
    return get(job_id).snapshot()


def stop(job_id: str) -> None:
    """Ask a job to stop: it sees ``ctx.cancel`` set and ends after the work in flight.

    Stopping a finished job does nothing.

    Raises:
        KeyError: no such job.
    """
    get(job_id).stop()


def list_jobs(*, running_only: bool = False) -> list[JobSnapshot]:
    """Every job of this process (or only those still running), newest first."""
    with _LOCK:
        jobs = list(_JOBS.values())
    shots = [j.snapshot() for j in reversed(jobs)]
    return [s for s in shots if s.running] if running_only else shots


def running_for(key: str) -> JobSnapshot | None:
    """The running job holding ``key`` (e.g. ``"run:<id>"``), or None."""
    for shot in list_jobs(running_only=True):
        if shot.key == key:
            return shot
    return None


def run_key(run_id: str) -> str:
    """The exclusivity key of a job that scores the stored run ``run_id``."""
    return f"run:{run_id}"
