"""The sample examples (``sample_data/examples.jsonl``) and a chooser that loads one into a form."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

EXAMPLES_PATH = Path(__file__).resolve().parent.parent / "sample_data" / "examples.jsonl"
COLUMNS = ("id", "category", "scorer", "title", "system", "prompt", "response", "ground_truth", "notes")


def read_examples(path: Path = EXAMPLES_PATH) -> pd.DataFrame:
    """Read the sample examples, one JSON object per line.

    Args:
        path: a JSON Lines file whose objects have the string fields ``id``,
            ``category``, ``scorer`` (a scorer id such as ``"prompt-alignment"``),
            ``title``, ``system``, ``prompt``, ``response``, ``ground_truth`` and
            ``notes``.

    Returns:
        A DataFrame with exactly those columns, in that order; missing values are "".

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: a line is not JSON, or a column is missing (named in the message).
    """
    frame = pd.read_json(path, lines=True, dtype=False)
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {', '.join(missing)}; every line needs {', '.join(COLUMNS)}")
    return frame[list(COLUMNS)].fillna("")


@st.cache_data(show_spinner=False)
def _cached_examples(path: str, modified: float) -> pd.DataFrame:
    # ``modified`` is only part of the cache key: an edited file is read again.
    return read_examples(Path(path))


def render_sample_chooser(on_load: Callable[[dict[str, Any]], None], path: Path = EXAMPLES_PATH) -> None:
    """A select box of the sample examples and a "Load example" button.

    Args:
        on_load: called with the chosen example (a dict with the :data:`COLUMNS`
            keys) when the button is clicked, before the next script run, so it
            may set widget values in ``st.session_state``.
        path: the examples file; a caption says so when it is missing or unreadable.
    """
    try:
        examples = _cached_examples(str(path), path.stat().st_mtime)
    except (OSError, ValueError) as exc:
        st.caption(f"No sample examples available: {exc}")
        return
    by_id = {row["id"]: row for row in examples.to_dict("records")}
    if not by_id:
        st.caption(f"No sample examples available: {path} is empty.")
        return
    choice = st.selectbox(
        "Sample example",
        options=list(by_id),
        format_func=lambda example_id: f"{by_id[example_id]['title']} · {by_id[example_id]['scorer']}",
        key="sample_choice",
    )
    st.caption(by_id[choice]["notes"])
    st.button("Load example", key="sample_load", on_click=on_load, args=(by_id[choice],))
