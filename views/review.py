"""Review page: label a run's results by hand, measure how the judge agrees, re-judge, import and export labels."""

from __future__ import annotations

import streamlit as st

from dashboard.layout import setup_page, show_run_link
from dashboard.review.agreement import render_agreement
from dashboard.review.consistency import render_consistency
from dashboard.review.context import (
    SESSION,
    VIEW_KEY,
    VIEWS,
    load_context,
    pick_run,
    pick_scorer,
    pick_threshold,
    reviewer_name,
)
from dashboard.review.import_export import render_import_export
from dashboard.review.labelling import render_review
from dashboard.run_view import get_store

setup_page()
st.title("Review")
st.caption(
    "Step through a run's results, label them (a score, pass/fail, a comment), and see how often the judge "
    "agrees with people. Labels are stored apart from the judge's results, with who gave them and when; "
    "every save is kept as the label's history."
)
store = get_store()
reviewer = reviewer_name()

run_id = pick_run(store)
if run_id is None:
    st.stop()
show_run_link(run_id)
run = store.get_run(run_id)
scorer_col, threshold_col = st.columns([2, 1])
with scorer_col:
    scorer_id = pick_scorer(store, run)
if scorer_id is None:
    st.info("This run has no scorers.")
    st.stop()
with threshold_col:
    threshold = pick_threshold(store, run, scorer_id)

try:
    ctx = load_context(store, run_id, scorer_id, threshold)
except KeyError:
    st.warning(f"Run {run_id} is no longer in the store (it was deleted).")
    st.stop()

view = st.radio("View", VIEWS, horizontal=True, key=VIEW_KEY, label_visibility="collapsed", **SESSION)
if view == "Review":
    render_review(ctx, reviewer)
elif view == "Agreement":
    render_agreement(ctx)
elif view == "Consistency":
    render_consistency(ctx)
else:
    render_import_export(ctx, reviewer)
