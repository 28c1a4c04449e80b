"""Compare page: prompt or model variants side by side, from generation to a report.

1. Variants and scoring: a dataset, two or more variants (system prompt, prompt template,
   model, sampling) or existing responses, the scorers; generate and score as a stored run.
2. Comparison: leaderboard with confidence intervals, charts, head to head with a paired
   test, the rows that differ most, and an optional pairwise judge.
3. Run vs run: two stored runs row by row: regressions and improvements, and the CI gate verdict.
4. Report: a self-contained HTML report to download.

Only the open tab is built (a tab switch reruns the page), but the first one once it has been shown in
the session: its widgets (the uploaded dataset) hold the setup. ``?run=ID`` opens that run in the
Comparison tab when it is a run of variants (its groups include ``variant``), else (a plain run, with or
without a group column) in Run vs run as run B; the setup is then not built until its tab is opened.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from dashboard.compare.common import variant_runs
from dashboard.compare.run_vs_run import follow_run_b, render_run_vs_run
from dashboard.layout import follow_run_link, setup_page, warn_missing_run_link
from dashboard.run_view import get_store

TABS = ("1. Variants and scoring", "2. Comparison", "3. Run vs run", "4. Report")
TAB_KEY = "compare_tab"
SETUP_SHOWN = "compare_setup_shown"  # session key: the setup tab has been open (from then on it is always built)


def _open_tab(tab: str) -> Callable[[str], None]:
    """A link's last write before it counts as followed: open ``tab`` (see follow_run_link's ``also``)."""
    return lambda _run_id: st.session_state.__setitem__(TAB_KEY, tab)


setup_page()
store = get_store()
st.title("Compare")
st.caption(
    "Compare prompts or models side by side: generate each variant's responses (or bring your own), score them, "
    "and see which is better, where, and by how much."
)
runs = store.list_runs()
warn_missing_run_link([r["id"] for r in runs], "no run is picked: choose one in the Comparison or Run vs run tab")

# ?run=ID of a variant run opens the Comparison tab; of another run, Run vs run with it as run B.
follow_run_link("compare_run_pick", [r["id"] for r in variant_runs(runs)], also=_open_tab(TABS[1]))
follow_run_b(runs, also=_open_tab(TABS[2]))
setup_tab, compare_tab, runs_tab, report_tab = st.tabs(list(TABS), key=TAB_KEY, on_change="rerun")
if setup_tab.open:
    st.session_state[SETUP_SHOWN] = True
# Once shown, always drawn: its widgets (the uploaded dataset, the variants) keep their values only while
# drawn. Before (a ?run= link opened another tab) there is nothing in it to keep.
# A tab's module is imported when the tab is first built (a ?run= link to Run vs run loads none of the others').
if st.session_state.get(SETUP_SHOWN):
    from dashboard.compare.setup import render_setup

    with setup_tab:
        render_setup(store)
# The other tabs read stored runs: each is built only when shown (a tab switch reruns the page).
if compare_tab.open:
    from dashboard.compare.comparison import render_comparison_tab

    with compare_tab:
        render_comparison_tab(store, runs)
if runs_tab.open:
    with runs_tab:
        render_run_vs_run(store, runs)
if report_tab.open:
    from dashboard.compare.comparison import selected_comparison
    from dashboard.compare.report import render_report_tab

    with report_tab:
        render_report_tab(store, runs, selected_comparison(store, runs))
