"""The real public datasets the tests use, copied into ``tests/data`` with their SOURCE and licence."""

from __future__ import annotations

import json
from pathlib import Path

REALDATA = Path(__file__).resolve().parent / "data"


def read_jsonl(relative: str, limit: int | None = None) -> list[dict]:
    """The first ``limit`` JSON objects of a JSONL file under ``tests/data``."""
    rows = []
    with (REALDATA / relative).open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rows.append(json.loads(line))
            if limit is not None and len(rows) == limit:
                break
    return rows
