"""Deferring the garbage collector's full collections while a run of code scorers is scored.

A run keeps every outcome until it ends: an outcome, its result and their dicts are a few objects
that the cyclic garbage collector tracks, and as they pile up (100,000 outcomes: about 300,000
objects, beside the run's items) CPython's rule of a full collection whenever the objects that
survived into the oldest generation have grown by a quarter makes it walk them all again, five or
six times in a run: about 1 s of CPU for 100,000 textual-difference outcomes, a tenth of the
scoring's own (docs/scaling.md §2). :func:`full_collections_deferred` raises the threshold of the
oldest generation for the duration of such a run, and restores it after. The young generations
are still collected as usual (most cyclic garbage never gets older than them); reference cycles
that have reached the oldest generation wait until the run ends, then the first full collection
after it frees them. It acts on the whole process, so it is kept to runs whose scorers only
compute (no judge: such a run lasts seconds to minutes, never hours waiting on a server), and
several runs at once (the dashboard's jobs, in threads of one server) restore the threshold
when the last of them ends.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

DEFERRED_THRESHOLD = 1_000_000_000
"""The oldest generation's threshold during a run (collections of the middle generation between two
full collections): never reached in practice."""

_lock = threading.Lock()
_state = {"runs": 0, "threshold": 10}  # runs deferring now; the threshold they replaced


@contextmanager
def full_collections_deferred() -> Iterator[None]:
    """No automatic full garbage collection in this process while the block runs (young ones go on).

    The oldest generation's threshold (:func:`gc.get_threshold`'s third value) is set to
    :data:`DEFERRED_THRESHOLD` when the first such block starts and set back when the last one
    ends, unless something else changed it meanwhile (then it is left as that set it).
    """
    with _lock:
        if _state["runs"] == 0:
            young, middle, oldest = gc.get_threshold()
            _state["threshold"] = oldest
            gc.set_threshold(young, middle, DEFERRED_THRESHOLD)
        _state["runs"] += 1
    try:
        yield
    finally:
        with _lock:
            _state["runs"] -= 1
            young, middle, oldest = gc.get_threshold()
            if _state["runs"] == 0 and oldest == DEFERRED_THRESHOLD:
                gc.set_threshold(young, middle, _state["threshold"])
