"""What every page script starts with."""

import streamlit as st

from dashboard.settings import render_judge_sidebar


def setup_page() -> None:
    """Page config and the judge-settings sidebar: the first call of every page script.

    Pages do this themselves, rather than ``app.py``, so a page renders the same
    whether Streamlit runs it through ``st.navigation`` or directly from the
    ``pages/`` folder (its legacy multipage mode, which AppTest reruns and a deep
    link on a fresh server use).
    """
    st.set_page_config(page_title="Scorer Studio", page_icon=":material/fact_check:", layout="wide")
    render_judge_sidebar()
