"""A function over tasks on a few threads, stoppable, with progress: for calls that wait on the network."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

Task = TypeVar("Task")
Result = TypeVar("Result")


def map_in_threads(
    fn: Callable[[Task], Result],
    tasks: Sequence[Task],
    *,
    concurrency: int,
    cancel: threading.Event | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    thread_name_prefix: str = "worker",
) -> list[Result]:
    """Call ``fn`` on every task, at most ``concurrency`` at once; the results in task order.

    Args:
        fn: called once per task, from a worker thread; it records failures in its result
            (an exception it raises is raised here, after the tasks already started end).
        tasks: the tasks, any values.
        concurrency: calls in flight at once, >= 1.
        cancel: set it to stop: tasks not started by then are not called and are absent
            from the result; calls in flight finish.
        on_progress: called as ``(done, total)`` after each task, from a worker thread.
        thread_name_prefix: the worker threads' name prefix (seen in thread dumps).

    Returns:
        ``fn``'s result for each task that was called, in the order of ``tasks``.

    Raises:
        ValueError: ``concurrency`` < 1.

    >>> map_in_threads(lambda n: n * n, [1, 2, 3], concurrency=2)
    [1, 4, 9]
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    results: dict[int, Result] = {}
    lock = threading.Lock()

    def one(index: int) -> None:
        if cancel is not None and cancel.is_set():
            return
        result = fn(tasks[index])
        with lock:
            results[index] = result
            done = len(results)
        if on_progress is not None:
            on_progress(done, len(tasks))

    if tasks:
        with ThreadPoolExecutor(
            max_workers=min(concurrency, len(tasks)), thread_name_prefix=thread_name_prefix
        ) as pool:
            for future in [pool.submit(one, index) for index in range(len(tasks))]:
                future.result()
    return [results[index] for index in range(len(tasks)) if index in results]
