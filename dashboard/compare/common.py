"""Names shared by the Compare page's tabs: the variant and row groups, scorer names, the run lists and picker,
the report's Build button (light: the page imports a tab's own module only when that tab is open)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from scorers.catalogue.registry import scorer_label
from scorers.core.errors import run_status_short_label

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
    return f"{run['name']} · {run_status_short_label(run['status'])} · {run['id']}"


def pick_run(runs: list[dict[str, Any]], label: str, key: str, default: int = 0) -> str:
    """A run chosen from ``runs`` in a select box keyed ``key`` (``default``: the index shown first)."""
    by_id = {r["id"]: r for r in runs}
    if st.session_state.get(key) not in by_id:
        st.session_state.pop(key, None)
    ids = list(by_id)
    if key not in st.session_state:  # a default index with a value set through the session state is an error
        st.session_state[key] = ids[min(default, len(ids) - 1)]
    return st.selectbox(label, ids, key=key, format_func=lambda r: _run_label(by_id[r]), **SESSION)


def comparison_runs(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs with groups (a comparison, or a Batch run grouped by a column), newest first."""
    return [r for r in runs if (r.get("mapping") or {}).get("groups")]


def variant_runs(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs of variants (generated or scored on the first tab, whose groups include ``variant``), newest first.

    A Batch or CLI run with a group column (``--group-col category``) has groups too, but they group
    the dataset's items, not variants of a prompt: it is not one of these.
    """
    return [r for r in runs if VARIANT_GROUP.removeprefix("group:") in ((r.get("mapping") or {}).get("groups") or ())]


def _download(label: str, html: str, name: str, key: str) -> None:
    st.download_button(
        label,
        data=html.encode("utf-8"),
        file_name=name,
        mime="text/html",
        key=key,
        on_click="ignore",
        icon=":material/download:",
    )


def render_report_builder(kind: str, build: Any, name: str, key: str) -> None:
    """A Build button; once built, the report's download button (reports inline Plotly: a few MB)."""
    state = f"compare_report_{key}"
    if st.button(f"Build the {kind} report", key=f"{key}_build", icon=":material/description:"):
        try:
            with st.spinner("Building the report…"):
                st.session_state[state] = (name, build())
        except (ValueError, KeyError) as exc:
            st.error(f"Cannot build the report: {exc}")
    built = st.session_state.get(state)
    if built is not None and built[0] == name:
        _download(f"Download the {kind} report (HTML)", built[1], name, f"{key}_download")
