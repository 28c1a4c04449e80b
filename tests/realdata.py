"""Where the shared real datasets live: ../shared/realdata beside the repo, or $SCORER_STUDIO_REALDATA."""

from __future__ import annotations

import json
import os
from pathlib import Path

REALDATA = Path(os.environ.get("SCORER_STUDIO_REALDATA", Path(__file__).resolve().parents[2] / "shared" / "realdata"))


def read_jsonl(relative: str, limit: int | None = None) -> list[dict]:
    """The first ``limit`` JSON objects of a realdata JSONL file."""
    rows = []
    with (REALDATA / relative).open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rows.append(json.loads(line))
            if limit is not None and len(rows) == limit:
                break
    return rows
