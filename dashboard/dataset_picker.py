"""The dataset chooser shared by the Batch and Compare pages: upload a file or pick a sample; check the columns chosen."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import streamlit as st

from dashboard.batch import UPLOAD_TYPES
from dashboard.options import SESSION
from scorers import DatasetError, LoadedDataset, load_dataset
from scorers.runs.datasets import shared_columns

UPLOAD = "Upload a file"
SAMPLE = "Sample dataset"


def pick_dataset(
    prefix: str, *, samples: Mapping[str, Path], upload_help: str, sample_first: bool = False
) -> LoadedDataset | None:
    """Draw the chooser and return the chosen dataset, loaded once per file and kept in the session.

    Args:
        prefix: widget and session-state key prefix (``<prefix>_source``, ``_upload``,
            ``_sample``, ``_dataset``), one per page.
        samples: the sample files offered, by display name.
        upload_help: the uploader's help text.
        sample_first: offer "Sample dataset" as the first (default) choice.

    Returns:
        The dataset, or None when nothing is chosen yet or the file cannot be loaded
        (then the error, which names the line and column, is shown).
    """
    origins = [SAMPLE, UPLOAD] if sample_first else [UPLOAD, SAMPLE]
    origin = st.radio("Dataset", origins, horizontal=True, key=f"{prefix}_source", **SESSION)
    state_key = f"{prefix}_dataset"
    if origin == UPLOAD:
        uploaded = st.file_uploader(
            "CSV, TSV, JSON Lines, JSON, Parquet or Excel",
            type=list(UPLOAD_TYPES),
            key=f"{prefix}_upload",
            help=upload_help,
        )
        if uploaded is None:
            previous = st.session_state.get(state_key)
            if previous is not None and previous[0].startswith("upload:"):
                st.caption(f"Using {previous[1].source_name}, uploaded earlier in this session.")
                return previous[1]
            return None
        data = uploaded.getvalue()
        token = "upload:" + hashlib.sha256(data).hexdigest()[:16] + ":" + uploaded.name
        source: bytes | Path = data
        name = uploaded.name
    else:
        name = st.selectbox(SAMPLE, list(samples), key=f"{prefix}_sample", **SESSION)
        source = samples[name]
        token = f"sample:{name}:{source.stat().st_mtime_ns}"
    cached = st.session_state.get(state_key)
    if cached is None or cached[0] != token:
        try:
            dataset = load_dataset(source, name=name)
        except DatasetError as exc:
            st.error(str(exc))
            return None
        st.session_state[state_key] = (token, dataset)
    return st.session_state[state_key][1]


def warn_shared_columns(roles: Mapping[str, str | Sequence[str] | None]) -> None:
    """A warning under the form for each column chosen for more than one role
    (:func:`scorers.runs.datasets.shared_columns`)."""
    for sentence in shared_columns(roles):
        st.warning(f"{sentence} Each role usually needs its own column: check the choices above.")
