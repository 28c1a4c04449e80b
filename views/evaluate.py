"""Evaluate page: score one prompt/response pair and read the breakdown."""

from __future__ import annotations

from typing import Any

import streamlit as st

from dashboard.layout import setup_page
from dashboard.options import option_widget
from dashboard.results import render_outcome
from dashboard.run_view import get_store
from dashboard.runs import RunFailure, build_payload, conversation_reading, evaluate
from dashboard.samples import render_sample_chooser
from dashboard.settings import judge_cache, judge_settings
from scorers import InvalidInputError
from scorers.catalogue.registry import scorer_specs

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

with st.expander("Conversation (several turns)"):
    conversation = st.text_area(
        "Conversation as OpenAI messages JSON",
        key="eval_conversation",
        height=160,
        placeholder='[{"role": "user", "content": "Pick A or B for the exam?"},\n'
        ' {"role": "assistant", "content": "Which exam?"},\n {"role": "user", "content": "Maths."}]',
        help="Replaces the user prompt: the judge sees every turn in order, as context, and judges the response "
        "against the final user message. Leave the response blank to score the conversation's final "
        "message, when it is the assistant's reply (a conversation that ends with your turn has no response). "
        "Text that is not a JSON list of messages is read as the user prompt, as the Batch page and the CLI read it.",
    )
    if conversation.strip():
        st.caption(conversation_reading(conversation))

with st.expander("Context passages and tool calls (for RAG and agent scorers)"):
    context = st.text_area(
        "Context passages",
        key="eval_context",
        help="For faithfulness, hallucination and the context scorers. Separate passages with a line that holds only ---.",
    )
    tool_calls = st.text_area(
        "Tool calls (JSON)",
        key="eval_tool_calls",
        placeholder='[{"name": "get_weather", "arguments": {"city": "Paris"}}]',
        help="For the tool-call accuracy scorers: the tools the assistant called, as a JSON list.",
    )

store = get_store()
specs = scorer_specs(store)
scorer_id = st.selectbox("Scorer", list(specs), format_func=lambda sid: specs[sid].name, key="eval_scorer")
spec = specs[scorer_id]
st.caption(f"{spec.measures} Reads: {', '.join(spec.inputs)}. Judge calls: {spec.judge_calls}.")
options: dict[str, Any] = {}
if scorer_id == "prompt-alignment":
    mode_col, scale_col, reason_col = st.columns(3)
    options = {
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
elif spec.options:
    columns = st.columns(min(3, len(spec.options)))
    for n, option in enumerate(spec.options):
        options[option.name] = option_widget(
            columns[n % len(columns)], option, key=f"eval_opt_{scorer_id}_{option.name}"
        )

if st.button("Run", type="primary", key="eval_run"):
    try:
        payload = build_payload(
            system=system,
            prompt=prompt,
            response=response,
            ground_truth=ground_truth,
            context=context,
            tool_calls=tool_calls,
            conversation=conversation,
        )
    except InvalidInputError as exc:
        st.session_state["eval_last"] = RunFailure(str(exc), exc.status)
    else:
        with st.spinner(f"Scoring with {spec.name}..."):
            st.session_state["eval_last"] = evaluate(
                scorer_id, options, payload, judge_settings, store, bypass_cache=judge_cache(store) is None
            )
            st.session_state["eval_last_payload"] = payload

if "eval_last" in st.session_state:
    st.divider()
    render_outcome(st.session_state["eval_last"], payload=st.session_state.get("eval_last_payload"))
