"""Names shared by the Compare page's tabs: the variant and row groups, scorer names, the run picker."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from scorers.catalogue.registry import scorer_label

SAMPLE_DIR = Path(__file__).resolve().parents[2] / "sample_data"
SESSION = {"persist_state": "session"}  # keep the page's choices when the user visits another page
VARIANT_GROUP = "group:variant"
ROW_GROUP = "group:row_id"

NUMBER_COLUMN = st.column_config.NumberColumn(format="%.3f")
"""A table column of scores, shown to 3 decimals."""


def sample_datasets() -> dict[str, Path]:
    """The files of ``sample_data/`` the page offers (CSV and JSON Lines), by file name."""
    return {p.name: p for p in sorted(SAMPLE_DIR.iterdir()) if p.suffix in (".csv", ".jsonl")}


def scorer_names(scorer_ids: Sequence[str], options: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, str]:
    """Scorer id → display name, with "(lower is better)" where it is and the comparison target a run's
    ``options`` (scorer id → options) give it, e.g. "(vs input)" (the id for a scorer not in the catalogue)."""
    return {sid: scorer_label(sid, (options or {}).get(sid)) for sid in scorer_ids}


def _run_label(run: dict[str, Any]) -> str:
    return f"{run['name']} · {run['status']} · {run['id']}"


def pick_run(runs: list[dict[str, Any]], label: str, key: str, default: int = 0) -> str:
    """A run chosen from ``runs`` in a select box keyed ``key`` (``default``: the index shown first)."""
    by_id = {r["id"]: r for r in runs}
    if st.session_state.get(key) not in by_id:
        st.session_state.pop(key, None)
    ids = list(by_id)
    if key not in st.session_state:  # a default index with a value set through the session state is an error
        st.session_state[key] = ids[min(default, len(ids) - 1)]
    return st.selectbox(label, ids, key=key, format_func=lambda r: _run_label(by_id[r]), **SESSION)
