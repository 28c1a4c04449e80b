"""Code scorers for the tests of scoring in a worker process (tests/test_scoring_process.py).

They live in a module of their own, not in the test file, so the worker process can unpickle
them (by module and class name) without importing pytest's test module.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from typing import Any

from scorers import create_textual_difference_scorer
from scorers.core.errors import MissingInputError

TD = create_textual_difference_scorer()


def item_index(payload: dict[str, Any]) -> int:
    """The item's index, from an output of the form ``"out <index> ..."`` (or ``{"text": "out <index> ..."}``)."""
    output = payload["output"]
    return int((output["text"] if isinstance(output, dict) else output).split()[1])


class Scripted:
    """Textual difference, with what the arguments script at one item (by its index):

    ``missing_at``: a :class:`MissingInputError` (a per-item failure); ``bug_at``: a RuntimeError (a bug);
    ``die_at``: the process exits at once (``os._exit``, as if killed); ``sleep_at``: ``sleep_s`` seconds' sleep.
    """

    cpu_bound = True

    def __init__(self, scorer_id: str = "scripted", **script: Any):
        self.id, self.name = scorer_id, scorer_id
        self.script = script

    def run(self, payload: dict[str, Any]):
        index = item_index(payload)
        if index == self.script.get("missing_at"):
            raise MissingInputError("no reference for this item", field="ground_truth")
        if index == self.script.get("bug_at"):
            raise RuntimeError(f"bug in the scorer at item {index}")
        if index == self.script.get("die_at"):
            os._exit(3)
        if index == self.script.get("sleep_at"):
            time.sleep(self.script["sleep_s"])
        return TD.run(payload)


class WhereScored:
    """Scores 1 and says, in ``details``, which process scored the item and which heavy modules it had loaded."""

    id = name = "where"
    cpu_bound = True

    def run(self, payload: dict[str, Any]):
        result = TD.run({**payload, "ground_truth": payload["output"]})
        loaded = sorted(m for m in ("streamlit", "plotly", "pandas", "pyarrow", "openai") if m in sys.modules)
        return dataclasses.replace(result, details={"pid": os.getpid(), "modules": loaded})


class Noted(Scripted):
    """Textual difference that appends the index of each item it scores, one line each, to the file ``path``."""

    def __init__(self, path: str):
        super().__init__("noted")
        self.path = path

    def run(self, payload: dict[str, Any]):
        with open(self.path, "a", encoding="utf-8") as noted:
            noted.write(f"{item_index(payload)}\n")
        return super().run(payload)
