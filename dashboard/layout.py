"""What every page script starts with."""

import gc
import json
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import streamlit as st

from dashboard.jobs import render_jobs_sidebar
from dashboard.settings import render_judge_sidebar
from scorers.core.pricing import load_price_list
from scorers.runs.store import database_url, default_db, display_name

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
    whether Streamlit runs it through ``st.navigation`` or directly (as AppTest's
    ``switch_page`` does). The scripts live in ``views/``, not ``pages/``: a ``pages/``
    folder turns on Streamlit's legacy multipage navigation on a fresh server's first run.
    """
    page_config()
    freeze_new_imports()
    _load_price_list()
    render_judge_sidebar()
    render_jobs_sidebar()
    try:
        where = display_name(database_url(default_db()))
    except ValueError as exc:  # an unsupported URL: the page that opens the store says so
        where = str(exc)
    st.sidebar.caption(f"Store: {where}", help="SCORER_STUDIO_DB: a SQLite file, or a postgresql:// URL for a team.")


def preload_components() -> None:
    """Have the browser import Streamlit's Plotly module (:data:`PRELOADED`) once the page's script run is
    over: called by History's and Batch's run view, whose Summary has no chart, so the module is ready
    when the user opens the Distributions tab.

    Only there, and only after the run: the module's evaluation is one long task of the browser's main
    thread (and CPU the server's script run would compete with on a busy machine); a page that draws
    charts in the same run (Compare) loads it then anyway.
    """
    if PRELOAD_SCRIPT:
        st.sidebar.html(PRELOAD_SCRIPT, unsafe_allow_javascript=True)


PRELOADED = ("PlotlyChart",)
"""Streamlit's largest component the run views use after their first view: its Plotly charts
(``st.plotly_chart``, a 4.7 MB module)."""


def component_chunks(names: Iterable[str] = PRELOADED) -> list[str]:
    """The file names of Streamlit's front-end modules of these components (``PlotlyChart.<hash>.js``).

    Streamlit's page loads each only when the first element that needs it arrives; its file name
    carries a content hash that changes with Streamlit's version, so it is looked up in the
    installed package. A name not found (another Streamlit) is left out.
    """
    folder = Path(st.__file__).parent / "static" / "static" / "js"
    found = []
    for name in names:
        matches = sorted(folder.glob(f"{name}.*.js"))
        if len(matches) == 1:
            found.append(matches[0].name)
    return found


def preload_script(chunks: list[str]) -> str:
    """The ``st.html`` script that imports ``chunks`` (Streamlit's own modules, next to its main script) once
    per browser page, when the script run is over (no running indicator) and the browser is idle;
    ``""`` without chunks.

    Chromium evaluates Streamlit's Plotly module in 0.5–0.8 s of its main thread (docs/scaling.md §3),
    when the first chart arrives; imported before, the module is ready (the same URL is the same
    module) when the chart is drawn.
    """
    if not chunks:
        return ""
    return f"""<script>
(() => {{
  if (window.__scorerStudioPreload) return;
  window.__scorerStudioPreload = true;
  const main = document.querySelector('script[src*="/static/js/index."]');
  if (!main) return;
  const load = () => {{ for (const chunk of {json.dumps(chunks)}) import(new URL(chunk, main.src).href).catch(() => {{}}); }};
  const idle = window.requestIdleCallback || ((f) => setTimeout(f, 0));
  const after = () => document.querySelector('[data-testid="stStatusWidget"]') ? setTimeout(after, 200) : idle(load);
  setTimeout(after, 200);
}})();
</script>"""


PRELOAD_SCRIPT = preload_script(component_chunks())


@st.cache_resource(show_spinner=False)
def _load_price_list() -> threading.Thread:
    # Once per server process, in the background: the first cost shown (a run's judge cost) would wait for it.
    thread = threading.Thread(target=load_price_list, name="load-price-list", daemon=True)
    thread.start()
    return thread


_frozen_at = [0]  # len(sys.modules) at the last gc.freeze of this process


def freeze_new_imports() -> bool:
    """Exclude from later garbage collections what is alive now (:func:`gc.freeze`) when modules were
    imported since the last time: called by :func:`setup_page`, after a page script's imports.

    The server process keeps what a page imports (modules, classes, pydantic and Plotly schemas:
    a few hundred thousand objects) until it exits, and every full collection walked them all
    again: about a third of the CPU time of opening a 20,000-outcome run (``bench/dashboard.py``).
    Frozen objects are still freed by reference counting; only reference cycles among them that
    become garbage later are never reclaimed, a bounded cost: this freezes only when the server
    imported something new (the first visit of each page, a library first used), a few times
    per process.

    Returns:
        True when it froze.
    """
    if len(sys.modules) == _frozen_at[0]:
        return False
    _frozen_at[0] = len(sys.modules)
    gc.freeze()
    return True


RUN_PARAM = "run"
"""The URL query parameter naming a run: ``?run=ID`` opens it on History, Batch, Compare or Review."""


_SHOWN = "_run_link_shown"
"""Session-state key of the run the page last put in the URL itself."""


def follow_run_link(key: str, run_ids: Iterable[str], *, also: Callable[[str], None] | None = None) -> str | None:
    """Put the run named by ``?run=ID`` into the widget ``key``, once per link, when it is one of ``run_ids``.

    A link is followed once: choosing another run afterwards is not undone on the next
    rerun (and :func:`show_run_link` then puts that run in the URL). A run the page itself
    put in the URL (:func:`show_run_link`) is not a link to follow.

    The link is marked followed after its last write: a rerun request stops a script at any
    session-state access, and a run stopped part way follows the link again on the next run
    (marked first, the rest of its writes would be lost: Compare's run A was then left to its default).

    Args:
        key: the widget that shows the run.
        run_ids: the runs this widget offers.
        also: the other session-state writes the link makes (given the run id), done before it is marked followed.

    Returns:
        The linked run id when it was just applied, else None.
    """
    wanted = st.query_params.get(RUN_PARAM)
    followed = f"_{key}_followed_link"
    if not wanted or wanted == st.session_state.get(_SHOWN) or st.session_state.get(followed) == wanted:
        return None
    if wanted not in set(run_ids):
        return None
    st.session_state[key] = wanted
    if also is not None:
        also(wanted)
    st.session_state[followed] = wanted
    return wanted


def warn_missing_run_link(run_ids: Iterable[str], instead: str) -> bool:
    """Say so at the top of the page when ``?run=ID`` names a run that is not in the store.

    A link to a deleted (or mistyped) run is not followed, and the page must not let another
    run pass for the linked one: the error names the missing id and what the page shows instead.

    Args:
        run_ids: the ids of every run in the store.
        instead: what the page shows instead, completing "No run ID in this store (...); ",
            e.g. "choose a run below".

    Returns:
        True when the link names a missing run (and the error was shown).
    """
    wanted = st.query_params.get(RUN_PARAM)
    if not wanted or wanted in set(run_ids):
        return False
    st.error(f"No run {wanted} in this store (it may have been deleted); {instead}.", icon=":material/link_off:")
    return True


def show_run_link(run_id: str) -> None:
    """Keep ``?run=ID`` in the URL for the run on screen, so the address can be shared."""
    if st.query_params.get(RUN_PARAM) != run_id:
        st.query_params[RUN_PARAM] = run_id
        st.session_state[_SHOWN] = run_id


def kept_in_session(slot: str, key: Any, compute: Callable[[], Any]) -> Any:
    """``compute()``, kept in the session under ``slot`` and computed again only when ``key`` changes.

    Args:
        slot: the ``st.session_state`` key that holds ``(key, value)``.
        key: what the value depends on (compared with ``!=``), e.g. the upload's token and the mapping.
        compute: builds the value; not called while ``key`` is unchanged.
    """
    saved = st.session_state.get(slot)
    if saved is None or saved[0] != key:
        saved = (key, compute())
        st.session_state[slot] = saved
    return saved[1]
