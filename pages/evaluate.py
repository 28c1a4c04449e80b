"""Evaluate page: score one prompt/response pair and read the breakdown."""

from __future__ import annotations

from typing import Any

import streamlit as st

from dashboard.layout import setup_page
from dashboard.results import render_outcome
from dashboard.runs import SCORER_LABELS, build_payload, evaluate
from dashboard.samples import render_sample_chooser
from dashboard.settings import judge_settings

# Example column -> the form field's session-state key.
FIELDS = {
    "system": "eval_system",
    "prompt": "eval_prompt",
    "response": "eval_response",
    "ground_truth": "eval_ground_truth",
}


def _load_example(example: dict[str, Any]) -> None:
    for column, key in FIELDS.items():
        st.session_state[key] = example[column]
    if example["scorer"] in SCORER_LABELS:
        st.session_state["eval_scorer"] = example["scorer"]
    st.session_state.pop("eval_last", None)


setup_page()
st.title("Evaluate")
st.caption("Score one response with one scorer. The result stays until you press Run again.")

with st.expander("Load a sample example"):
    render_sample_chooser(_load_example)

left, right = st.columns(2)
with left:
    system = st.text_area(
        "System message(s)",
        key="eval_system",
        height=120,
        help="Optional. Separate several system messages with a line that holds only ---.",
    )
    prompt = st.text_area("User prompt", key="eval_prompt", height=160)
with right:
    response = st.text_area("Response to evaluate", key="eval_response", height=200)
    ground_truth = st.text_area(
        "Ground truth (optional)",
        key="eval_ground_truth",
        height=80,
        help="Textual difference compares the response with it, or with the user prompt when it is blank.",
    )

scorer_id = st.radio("Scorer", list(SCORER_LABELS), format_func=SCORER_LABELS.get, horizontal=True, key="eval_scorer")
if scorer_id == "prompt-alignment":
    mode_col, scale_col, reason_col = st.columns(3)
    options: dict[str, Any] = {
        "evaluation_mode": mode_col.radio(
            "Evaluation mode", ["both", "user", "system"], horizontal=True, key="pa_mode"
        ),
        "scale": scale_col.number_input("Scale", min_value=0.01, value=1.0, step=1.0, key="pa_scale"),
        "reason": reason_col.radio(
            "Reason",
            ["composed", "judge"],
            format_func={"composed": "Composed from the analysis", "judge": "Written by the judge (one more call)"}.get,
            key="pa_reason",
        ),
    }
elif scorer_id == "textual-difference":
    options = {"scale": st.number_input("Scale", min_value=0.01, value=1.0, step=1.0, key="td_scale")}
else:
    options = {}

if st.button("Run", type="primary", key="eval_run"):
    payload = build_payload(system=system, prompt=prompt, response=response, ground_truth=ground_truth)
    with st.spinner(f"Scoring with {SCORER_LABELS[scorer_id]}..."):
        st.session_state["eval_last"] = evaluate(scorer_id, options, payload, judge_settings)

if "eval_last" in st.session_state:
    st.divider()
    render_outcome(st.session_state["eval_last"])
