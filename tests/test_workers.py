"""map_in_threads: results in task order, at most `concurrency` calls at once, cancel and progress."""

from __future__ import annotations

import threading
import time

import pytest

from scorers.core.workers import map_in_threads


def test_results_come_back_in_task_order_whatever_order_calls_end():
    # Earlier tasks sleep longer, so they end last.
    tasks = [5, 4, 3, 2, 1]
    assert map_in_threads(lambda n: (time.sleep(n / 100), n * 10)[1], tasks, concurrency=5) == [50, 40, 30, 20, 10]


def test_never_more_calls_in_flight_than_the_concurrency():
    in_flight, peak, lock = 0, 0, threading.Lock()

    def call(_: int) -> None:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.02)
        with lock:
            in_flight -= 1

    map_in_threads(call, range(12), concurrency=3)
    assert 1 <= peak <= 3


def test_cancel_skips_the_tasks_not_started_and_progress_counts_the_done():
    cancel = threading.Event()
    progress: list[tuple[int, int]] = []

    def call(n: int) -> int:
        if n == 2:
            cancel.set()  # one worker: tasks 3 and 4 are never started
        return n

    done = map_in_threads(
        call, [0, 1, 2, 3, 4], concurrency=1, cancel=cancel, on_progress=lambda *p: progress.append(p)
    )
    assert done == [0, 1, 2]
    assert progress == [(1, 5), (2, 5), (3, 5)]


def test_an_exception_of_the_function_is_raised():
    def call(n: int) -> int:
        if n == 1:
            raise KeyError("row 1")
        return n

    with pytest.raises(KeyError, match="row 1"):
        map_in_threads(call, [0, 1, 2], concurrency=2)


def test_no_tasks_and_bad_concurrency():
    assert map_in_threads(str, [], concurrency=4) == []
    with pytest.raises(ValueError, match="concurrency must be >= 1, got 0"):
        map_in_threads(str, [1], concurrency=0)
