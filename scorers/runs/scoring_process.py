"""Scoring CPU-bound scorers in child processes, beside the run's bookkeeping and store writes.

A run whose scorers all compute (``cpu_bound = True``, see :class:`~scorers.core.base.Scorer`)
cannot go faster with threads: they take turns at the GIL, and the run's own work (recording each
outcome, encoding its row, the store's inserts) takes turns with the scoring. For a large run
:func:`~scorers.runs.runner.run_evals` therefore sends the items, in chunks of
:data:`CHUNK_ITEMS`, to a few child processes (:func:`process_count`), in turn, that score them
while the run's process records and writes what comes back, chunk by chunk in the order they were
sent: the cores of the machine instead of one (and the dashboard's server, which runs jobs in its
threads, stays responsive). Each child is a fresh interpreter (never a fork of the
multi-threaded Streamlit server or test runner, which could copy a lock held by another thread)
and imports only the scorers' modules (no Streamlit, Plotly or pandas).

The scorers reach the child pickled: a catalogue scorer is rebuilt there from its id and options
(:meth:`scorers.catalogue.registry.CheckedScorer.__reduce__`), as a stored run is. A scorer that
cannot be pickled (a closure, a lambda) is scored in the run's thread, as is a small run, whose
scoring would not pay for the child's start-up (about 0.5–1 s, mostly imports).
"""

from __future__ import annotations

import mmap
import os
import pickle
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorers.core.errors import ScorerError, ScoreStatus

try:
    import fcntl
except ImportError:  # not POSIX: runs are scored in a thread there (packed_scorers)
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from scorers.core.base import Scorer
    from scorers.runs.runner import EvalItem, ItemOutcome

PROCESS_MIN_ITEMS = 50_000
"""Items to score, at least, for a run to use the child process (fewer are scored in a thread). On
this project's shared 2-core machine (load 3.5-5) a 20,000-item textual-difference run with the
SQLite store still took 1.1-1.3x as long in the child as in a thread (docs/scaling.md §2): the
child's start-up and the pickling both ways cost CPU that only a free second core pays back."""

CHUNK_ITEMS = 200
"""Items sent to a child at a time; :data:`CHUNKS_IN_FLIGHT` chunks are sent ahead so it never waits."""

CHUNKS_IN_FLIGHT = 3
"""Chunks sent ahead to each child."""

MAX_PROCESSES = 4
"""Children, at most, that score one run (:func:`process_count`)."""


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, which a container's CPU set limits), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def process_count() -> int:
    """How many children score a run: one per CPU this process may use (:func:`usable_cpus`), at most
    :data:`MAX_PROCESSES`.

    The run's process takes about 30–40 µs per item (recording and writing each outcome) against a
    child's 75–100 µs for a 1 kB textual difference (100,000 rows, docs/scaling.md §2), so it keeps up
    with two or three children; beyond them it is the bottleneck. On a 2-core machine the two children
    and the run's process share the two cores (store path 1.25–1.28x the plain loop there, against
    1.57–1.74x with one child).
    """
    return max(1, min(MAX_PROCESSES, usable_cpus()))


HEAD_START_ITEMS = 20_000
"""Items, at most, that a new run sends the child before it records the run and its items (:func:`head_start`)."""


def head_start(n_items: int, chunk_items: int) -> int:
    """Items of a new run of ``n_items`` to send to the child, in chunks of ``chunk_items``, before the
    run and its items are recorded: a whole number of chunks, so the chunks after are the same as without.

    Recording them takes about 15 µs an item (100,000 textual-difference items of 1 kB: 1.5 s), while
    the child scores (textual difference: about 90 µs an item, about a sixth as many in that time). A
    fifth of the run, at most :data:`HEAD_START_ITEMS`, keeps the child busy meanwhile instead of
    waiting; a faster scorer finishes them sooner and waits for the rest, as it did before. The chunks
    wait in the child's input queue, pickled (about 22 MB for the 20,000 items of 1 kB).
    """
    return min(n_items // 5, HEAD_START_ITEMS) // chunk_items * chunk_items


Chunk = list[tuple[int, str, dict[str, Any], tuple[int, ...] | None]]
"""What the child scores: ``(item_index, item_id, payload, positions of the scorers to run)`` per item, the
positions None for every scorer (the common case: one object less to pickle per item)."""


def packed_scorers(scorers: Sequence[Scorer], n_items: int) -> bytes | None:
    """The scorers pickled for a child process, or None when the run is scored in a thread.

    Args:
        scorers: the run's scorers.
        n_items: items left to score.

    Returns:
        The pickle when every scorer is CPU-bound and can be pickled, there are at least
        :data:`PROCESS_MIN_ITEMS` items, and the machine has more than one CPU (and is POSIX: the
        child shares a small memory map with this process through an inherited file descriptor);
        otherwise None.
    """
    if n_items < PROCESS_MIN_ITEMS or usable_cpus() < 2 or os.name != "posix":
        return None
    if not all(getattr(s, "cpu_bound", False) for s in scorers):
        return None
    try:
        return pickle.dumps(list(scorers), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # a closure, a lambda, a lock...: pickle raises several kinds  # noqa: BLE001
        return None


ScoredRow = tuple[int, int, float, str, float, "str | None", dict[str, Any], dict[str, Any], str]
"""A scored outcome without a judge as the child sends it back: ``(item_index, scorer position, latency_s,
result.scorer, score, reason, analyze_step_result, details, run_id)``. Flat tuples pickle and unpickle
several times faster than the outcome objects (whose frozen dataclasses go through Python-level
``__getstate__``/``__setstate__``): about 7 instead of 45 ms per 5,000 outcomes in the child and,
rebuilt in the run's process, 30 instead of 40 ms there."""

Outcomes = tuple[list["ScoredRow | ItemOutcome"], BaseException | None]
"""What the child returns for a chunk: :func:`score_chunk`'s result (:func:`outcomes_of` rebuilds the outcomes)."""


class ScoringProcessDied(Exception):
    """The worker process ended before it returned every chunk sent to it (killed, out of memory)."""


class ScoringProcess:
    """One child process scoring chunks of items with the run's scorers, in the order they are sent.

    The child is a fresh interpreter (``python -c``, never a fork of this multi-threaded process,
    and not :mod:`multiprocessing`, whose children import this process's ``__main__``: in the
    dashboard, the page script being run). It reads the pickled scorers, then chunks, from its
    standard input and writes each chunk's outcomes, pickled, to its standard output; a memory
    map shared with it holds the item it is scoring (for the per-item timeout) and the stop flag.

    Args:
        packed: the scorers, from :func:`packed_scorers`.
    """

    def __init__(self, packed: bytes):
        self._map_file = tempfile.TemporaryFile()
        self._map_file.write(bytes(_MAP_BYTES))
        self._map_file.flush()
        self._map = mmap.mmap(self._map_file.fileno(), _MAP_BYTES)
        # [item index being scored or -1, when it started (time.monotonic(), one clock for both
        # processes), 1 when the child is to stop], written without a lock.
        self._shared = memoryview(self._map).cast("d")
        self._shared[0] = -1.0
        self._proc = subprocess.Popen(
            [sys.executable, "-c", _CHILD_MAIN, _PACKAGE_ROOT, str(self._map_file.fileno())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            pass_fds=(self._map_file.fileno(),),
        )
        for pipe in (self._proc.stdin, self._proc.stdout):
            _widen(pipe.fileno())
        self._results: queue.SimpleQueue[Outcomes | None] = queue.SimpleQueue()
        self._reader = threading.Thread(target=self._read, name="scoring_process_reader", daemon=True)
        self._reader.start()
        self._send((sys.path, packed))  # this process's module path: where the scorers' classes are found

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self._proc.pid

    def _send(self, message: Any) -> None:
        try:
            pickle.dump(message, self._proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):  # it died: the reader says so
            pass

    def _read(self) -> None:
        try:
            while True:
                self._results.put(pickle.load(self._proc.stdout))
        except (EOFError, OSError, pickle.UnpicklingError):
            self._results.put(None)

    def submit(self, chunk: Chunk) -> None:
        """Send ``chunk`` to be scored after the chunks sent before it."""
        self._send(chunk)

    def result(self, timeout: float) -> Outcomes | None:
        """The outcomes of the oldest chunk not yet returned, or None when they take longer than ``timeout`` s.

        Raises:
            ScoringProcessDied: the child ended first, saying how (its exit code or signal).
        """
        try:
            got = self._results.get(timeout=timeout)
        except queue.Empty:
            return None
        if got is None:
            self._results.put(None)  # asked again: the same answer
            raise ScoringProcessDied(_how_it_ended(self._proc.wait()))
        return got

    def current(self) -> tuple[int, float] | None:
        """``(item_index, started)`` of the item the child is scoring, or None between items."""
        index = self._shared[0]
        started = self._shared[1]  # the child sets it before the index
        if index < 0 or self._shared[0] != index:  # changed while read: look again later
            return None
        return int(index), started

    def stop(self) -> None:
        """Make the child return after the item it is scoring: the chunks sent end early."""
        self._shared[2] = 1.0

    def close(self) -> None:
        """Stop the child (after the item it is scoring) and wait for it to exit (killing it after 10 s)."""
        self.stop()
        try:
            self._proc.stdin.close()  # it ends at the end of its input
        except OSError:
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join()
        self._proc.stdout.close()
        self._shared.release()
        self._map.close()
        self._map_file.close()


PIPE_BYTES = 1 << 20
"""Capacity asked for each pipe to the child (Linux; the default is 64 kB): a chunk of a few hundred items
of about 1 kB each is written at once, without waiting for the child's reader thread to take the GIL from
its scoring, 64 kB at a time (that wait made a chunk take 15-200 ms to send)."""


def _widen(fd: int) -> None:
    """Ask for a :data:`PIPE_BYTES` pipe where the system allows it (it stays as it is otherwise)."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if set_size is None:
        return
    try:
        fcntl.fcntl(fd, set_size, PIPE_BYTES)
    except OSError:  # above /proc/sys/fs/pipe-max-size for an unprivileged user
        pass


def _how_it_ended(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


_MAP_BYTES = 3 * 8

_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])
"""The directory holding the ``scorers`` package, for the child to import this module from."""

_CHILD_MAIN = "import sys; sys.path.insert(0, sys.argv[1]); from scorers.runs.scoring_process import serve; serve()"


def serve() -> None:
    """The child's main loop: the scorers, then chunks, from standard input; outcomes to standard output.

    Chunks are read by a thread of their own, so that this process always drains its input (the
    run's process never blocks on a full pipe while this one writes outcomes).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the run's to handle: it stops the child in order
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a scorer that prints must not write into the outcomes
    shared_map = mmap.mmap(int(sys.argv[2]), _MAP_BYTES)
    shared = memoryview(shared_map).cast("d")
    sys.path[:], packed = pickle.load(source)
    scorers = pickle.loads(packed)  # a catalogue scorer is rebuilt here (create_scorer)
    chunks: queue.SimpleQueue[Chunk | None] = queue.SimpleQueue()

    def read() -> None:
        try:
            while True:
                chunks.put(pickle.load(source))
        except EOFError:
            chunks.put(None)

    threading.Thread(target=read, daemon=True).start()
    try:
        while (chunk := chunks.get()) is not None:
            pickle.dump(score_chunk(scorers, shared, chunk), sink, protocol=pickle.HIGHEST_PROTOCOL)
            sink.flush()
    except BrokenPipeError:  # the run's process is gone: nobody to tell
        os._exit(1)


def score_chunk(scorers: Sequence[Scorer], shared: Any, chunk: Chunk) -> Outcomes:
    """Score the items of ``chunk`` in order, in the child: what the run's worker thread would do.

    A :class:`~scorers.core.errors.ScorerError` is the item's failed outcome (its status and
    message), as in the thread; any other exception ends the chunk and is returned beside the
    outcomes before it, for the run to record them and then raise it. Once ``shared[2]`` is set
    (stop), the chunk ends with the item being scored.

    Args:
        scorers: the run's scorers.
        shared: ``[item index or -1, its start (time.monotonic()), stop flag]``, updated here.
        chunk: the items.

    Returns:
        ``(outcomes, error)``: the outcomes in item order (every scorer asked, per item done), a
        scored one without a judge as a :data:`ScoredRow`, any other as its
        :class:`~scorers.runs.runner.ItemOutcome`; and the exception that ended the chunk, or None.
    """
    from scorers.runs.runner import _NO_USAGE, EvalItem, failed_outcome, scored_outcome

    every = range(len(scorers))
    outcomes: list[ScoredRow | ItemOutcome] = []
    try:
        for index, item_id, payload, which in chunk:
            if shared[2]:
                break
            shared[1] = time.monotonic()
            shared[0] = index
            for position in every if which is None else which:
                scorer = scorers[position]
                started = time.monotonic()
                try:
                    result = scorer.run(payload)
                except ScorerError as exc:
                    outcomes.append(failed_outcome(scorer, index, EvalItem(item_id, payload), exc, _NO_USAGE, started))
                    continue
                if result.judge is not None:  # a judge's usage and details: the outcome as it is
                    outcomes.append(
                        scored_outcome(scorer, index, EvalItem(item_id, payload), result, _NO_USAGE, started)
                    )
                    continue
                latency = time.monotonic() - started
                outcomes.append(
                    (
                        index,
                        position,
                        latency,
                        result.scorer,
                        result.score,
                        result.reason,
                        result.analyze_step_result,
                        result.details,
                        result.run_id,
                    )
                )
    except Exception as exc:  # a bug in a scorer: the run surfaces it  # noqa: BLE001
        exc.add_note(f"(in the scoring process)\n{traceback.format_exc()}")  # the traceback is not pickled
        return outcomes, exc
    finally:
        shared[0] = -1.0
    return outcomes, None


def outcomes_of(
    rows: list[ScoredRow | ItemOutcome], items: Sequence[EvalItem], scorers: Sequence[Scorer]
) -> list[ItemOutcome]:
    """The outcomes that :func:`score_chunk` sent back, rebuilt in the run's process.

    Args:
        rows: the chunk's outcomes as the child sent them.
        items: the run's items, by item index.
        scorers: the run's scorers, by position.

    Returns:
        The outcomes, equal to those :func:`scorers.runs.runner.scored_outcome` makes in a thread.
    """
    from scorers.core.base import ScoreResult
    from scorers.runs.runner import _NO_USAGE, ItemOutcome

    scored = ScoreStatus.SCORED
    return [
        ItemOutcome(
            row[0],
            items[row[0]].item_id,
            scorers[row[1]].id,
            scored,
            ScoreResult(row[3], row[4], row[5], row[6], row[8], None, row[7]),
            None,
            None,
            _NO_USAGE,
            row[2],
        )
        if type(row) is tuple
        else row
        for row in rows
    ]
