"""What every page script starts with."""

from pathlib import Path

import streamlit as st

from dashboard.jobs import render_jobs_sidebar
from dashboard.settings import render_judge_sidebar

# The tab's icon, served by the app itself: a Material icon name would make the browser
# fetch it from fonts.gstatic.com.
FAVICON = Path(__file__).with_name("favicon.png")


def page_config() -> None:
    """Title, local favicon and wide layout.

    ``app.py`` calls it before ``st.navigation``: once a page config has set the icon,
    the browser no longer shows (and fetches from fonts.gstatic.com) each ``st.Page``'s
    Material icon as the favicon.
    """
    st.set_page_config(page_title="Scorer Studio", page_icon=str(FAVICON), layout="wide")


def setup_page() -> None:
    """Page config, the judge-settings sidebar and the server's running jobs: the first call of every page script.

    Pages do this themselves, rather than ``app.py``, so a page renders the same
    whether Streamlit runs it through ``st.navigation`` or directly from the
    ``pages/`` folder (its legacy multipage mode, which AppTest reruns and a deep
    link on a fresh server use).
    """
    page_config()
    render_judge_sidebar()
    render_jobs_sidebar()
