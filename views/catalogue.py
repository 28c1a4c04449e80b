"""Catalogue page: every scorer (saved judges included), what it measures and how, and an example to run."""

from __future__ import annotations

import streamlit as st

from dashboard.catalogue import catalogue_frame, render_facts, run_example, split_example
from dashboard.layout import setup_page
from dashboard.results import render_outcome
from dashboard.run_view import get_store
from dashboard.settings import judge_cache, judge_settings
from scorers.catalogue.registry import scorer_specs

setup_page()
st.title("Catalogue")
st.caption(
    "Every scorer: what it measures, its inputs, formula and range, and how many judge calls it makes per run "
    "(next to Mastra's, where it differs). Judges saved on the Judges page are listed as judge:<name>."
)
store = get_store()
specs = scorer_specs(store)
st.dataframe(catalogue_frame(specs), hide_index=True, key="cat_table")

scorer_id = st.selectbox("Scorer", list(specs), format_func=lambda sid: f"{specs[sid].name} · {sid}", key="cat_scorer")
spec = specs[scorer_id]
st.subheader(spec.name)
render_facts(spec)

st.markdown("**Example**")
if spec.example is None:
    st.caption("No example: save the judge after trying it on the Judges page to keep one.")
else:
    payload, options = split_example(spec.example)
    payload_col, options_col = st.columns([3, 1])
    payload_col.json(payload)
    options_col.caption("Options")
    options_col.json(options)
    st.caption("Runs with the sidebar's judge settings." if spec.uses_judge else "A code scorer: no judge, no key.")
    results = st.session_state.setdefault("cat_results", {})
    if st.button("Run example", key="cat_run", type="primary", icon=":material/play_arrow:"):
        with st.spinner(f"Scoring with {spec.name}..."):
            results[scorer_id] = run_example(spec, store, judge_settings, bypass_cache=judge_cache(store) is None)
    if scorer_id in results:
        render_outcome(results[scorer_id], key=f"cat_{scorer_id}", payload=split_example(spec.example or {})[0])
