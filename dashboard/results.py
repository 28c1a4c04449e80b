"""Render one run's outcome: a score with its breakdown, or the reason it was not scored."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import streamlit as st

from scorers import JudgeInfo, ScoreResult, TextualDifferenceScorer, interpretation_band
from scorers.catalogue.registry import higher_is_better

from .charts import dimension_chart, score_gauge, textual_difference_chart
from .diff import render_text_diff
from .runs import RunFailure

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>#$|~])")


def md_escape(text: str) -> str:
    """Escape Markdown (and Streamlit's ``$`` math) so judge and user text shows literally.

    >>> md_escape("costs $5 *now*")
    'costs \\\\$5 \\\\*now\\\\*'
    """
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def pass_fail(ok: bool, yes: str, no: str) -> str:
    """A pass/fail verdict as a coloured text badge (Streamlit Markdown): the words carry it, the
    colour repeats it, so it reads the same without an emoji font or colour vision.

    >>> pass_fail(False, "addressed", "not addressed")
    ':red-badge[NO: not addressed]'
    """
    return f":green-badge[YES: {yes}]" if ok else f":red-badge[NO: {no}]"


def _render_dimensions(dims: Mapping[str, Any]) -> None:
    intent = dims["intentAlignment"]
    st.markdown(
        f"**Primary intent:** {md_escape(intent['primaryIntent'])} — "
        + pass_fail(intent["isAddressed"], "addressed", "not addressed")
    )
    st.caption(md_escape(intent["reasoning"]))

    st.markdown("**Requirements**")
    requirements = dims["requirementsFulfillment"]["requirements"]
    if not requirements:
        st.caption("The judge listed no requirements.")
    for item in requirements:
        mark = pass_fail(item["isFulfilled"], "fulfilled", "not fulfilled")
        st.markdown(f"{mark} **{md_escape(item['requirement'])}** — {md_escape(item['reasoning'])}")

    completeness = dims["completeness"]
    st.markdown("**Missing elements**")
    missing = completeness["missingElements"]
    if missing:
        st.markdown("\n".join(f"- {md_escape(m)}" for m in missing))
    else:
        st.caption("None.")
    st.caption(md_escape(completeness["reasoning"]))

    appropriateness = dims["responseAppropriateness"]
    st.markdown(
        "**Format** "
        + pass_fail(appropriateness["formatAlignment"], "matches", "does not match")
        + " · **Tone** "
        + pass_fail(appropriateness["toneAlignment"], "matches", "does not match")
    )
    st.caption(md_escape(appropriateness["reasoning"]))


def _render_judge(judge: JudgeInfo | None) -> None:
    if judge is None:
        return
    if judge.note:  # e.g. a temperature the model does not accept: the judge is not pinned
        st.warning(md_escape(judge.note))
    usage = judge.usage
    parameters = ", ".join(f"{k}={v}" for k, v in judge.parameters.items())
    st.caption(
        md_escape(
            f"Judge: {judge.model} at {judge.base_url} · parameters: {parameters or 'server defaults'} · "
            f"tokens: {usage.prompt_tokens} prompt + {usage.completion_tokens} completion = "
            f"{usage.total_tokens} in {usage.calls} call{'' if usage.calls == 1 else 's'}"
            + (" (the reply came from the judge cache: no call, no cost)" if judge.cached else "")
        )
    )


def _render_raw(result: ScoreResult, key: str) -> None:
    data = result.to_dict()
    with st.expander("Raw result JSON"):
        st.json(data)
    st.download_button(
        "Download result JSON",
        data=json.dumps(data, indent=2, ensure_ascii=False),
        file_name=f"{result.scorer}-{result.run_id}.json",
        mime="application/json",
        on_click="ignore",
        key=f"{key}_download",
    )


def _render_prompt_alignment(result: ScoreResult, key: str, payload: Mapping[str, Any] | None) -> None:
    analysis = result.analyze_step_result
    scale = analysis["scale"]
    both = analysis["effectiveMode"] == "both"
    left, right = st.columns([1, 2])
    with left:
        st.metric(
            f"Prompt alignment (0–{scale:g})",
            f"{result.score:g}",
            delta=interpretation_band(result.score, scale),
            delta_color="off",
            delta_arrow="off",
        )
        if both:
            st.metric("User score (0–1, weight 70%)", f"{analysis['userScore']:.2f}")
            st.metric("System score (0–1, weight 30%)", f"{analysis['systemScore']:.2f}")
        mode = analysis["evaluationMode"]
        effective = analysis["effectiveMode"]
        st.caption(f"Evaluation mode: {mode}" + (f", scored in {effective} mode" if effective != mode else ""))
    with right:
        st.plotly_chart(score_gauge(result.score, scale), key=f"{key}_gauge")
    if analysis["note"]:
        st.info(analysis["note"])
    if analysis.get("warning"):  # a very short prompt with no conversation context
        st.warning(md_escape(analysis["warning"]))
    if analysis.get("conversationTurns"):
        st.caption(f"The judge saw {analysis['conversationTurns']} earlier turn(s) of the conversation as context.")
    st.plotly_chart(dimension_chart(analysis), key=f"{key}_dimensions")
    st.markdown(f"**Reason:** {md_escape(result.reason or '')}")
    if both:
        user_tab, system_tab = st.tabs(["Against the user prompt", "Against the system messages"])
        with user_tab:
            _render_dimensions(analysis)
        with system_tab:
            _render_dimensions(analysis["systemAlignment"])
    else:
        st.subheader("Against the user prompt" if effective == "user" else "Against the system messages")
        _render_dimensions(analysis)
    st.markdown(f"**Overall assessment:** {md_escape(analysis['overallAssessment'])}")


def _render_textual_difference(result: ScoreResult, key: str, payload: Mapping[str, Any] | None) -> None:
    analysis = result.analyze_step_result
    details = result.details
    columns = st.columns(5)
    columns[0].metric("Score", f"{result.score:.3f}", help="ratio × confidence × scale")
    columns[1].metric("Ratio", f"{analysis['ratio']:.3f}", help="2·LCS / (len(a) + len(b)) over characters")
    columns[2].metric("Changes", str(analysis["changes"]), help="word-level insert, delete or replace operations")
    columns[3].metric("Length diff", f"{analysis['lengthDiff']:.3f}", help="|len(a) − len(b)| / max(len(a), len(b))")
    columns[4].metric("Confidence", f"{analysis['confidence']:.3f}", help="1 − length diff")
    st.markdown(f"**Reason:** {md_escape(result.reason or '')}")
    st.plotly_chart(textual_difference_chart(analysis), key=f"{key}_textual_difference")
    reference = "Ground truth" if details["comparedWith"] == "ground_truth" else "Input (user prompt)"
    if payload is None:
        st.caption("The word diff is drawn where the run's texts are shown.")
        return
    # recomputed here (results do not keep it), with the run's target and normalisation
    scorer = TextualDifferenceScorer(target=details["comparedWith"], **details.get("options", {}))
    alignment = scorer.alignment(payload)
    render_text_diff(
        alignment["reference"], alignment["response"], key=key, reference_title=reference, response_title="Response"
    )


def _render_gluten(result: ScoreResult, key: str, payload: Mapping[str, Any] | None) -> None:
    analysis = result.analyze_step_result
    left, right = st.columns(2)
    left.metric("Verdict", "Gluten-free" if analysis["isGlutenFree"] else "Contains gluten")
    right.metric("Score (0–1)", f"{result.score:g}")
    if analysis["glutenSources"]:
        st.markdown("**Gluten sources**\n" + "\n".join(f"- {md_escape(s)}" for s in analysis["glutenSources"]))
    st.markdown(f"**Reason:** {md_escape(result.reason or '')}")


def _render_generic(result: ScoreResult, key: str, payload: Mapping[str, Any] | None) -> None:
    """Any other scorer: its score (with its direction), its reason, and its analysis as JSON."""
    up = higher_is_better(result.scorer)
    st.metric(
        "Score" if up else "Score (lower is better)",
        f"{result.score:g}",
        help=None if up else "For this scorer a low score is good: 0 means none of what it looks for was found.",
    )
    st.markdown(f"**Reason:** {md_escape(result.reason or '')}")
    if result.analyze_step_result:
        with st.expander("Analysis", expanded=True):
            st.json(result.analyze_step_result)


_RENDERERS = {
    "prompt-alignment": _render_prompt_alignment,
    "textual-difference": _render_textual_difference,
    "gluten-checker": _render_gluten,
}


def render_outcome(
    outcome: ScoreResult | RunFailure, key: str = "result", payload: Mapping[str, Any] | None = None
) -> None:
    """Show a run's outcome.

    A :class:`~scorers.ScoreResult` gets its scorer's view (metrics, charts, checklist
    or diff; score, reason and analysis for a scorer without a view of its own), the
    judge's model, parameters and token usage, the raw JSON and a download of
    ``result.to_dict()``. A :class:`RunFailure` becomes an error message,
    with the judge's raw reply in an expander when there is one.

    Args:
        outcome: what :func:`dashboard.runs.evaluate` returned.
        key: prefix of the element keys (charts, download button); give each outcome
            shown on one page its own prefix.
        payload: the run payload that was scored; views that recompute detail the
            result does not keep (the textual-difference word diff) need it.
    """
    if isinstance(outcome, RunFailure):
        st.error(f"Not scored ({outcome.status.value.replace('_', ' ')}): {md_escape(outcome.message)}")
        if outcome.raw_reply:
            with st.expander("The judge's raw reply"):
                st.code(outcome.raw_reply, language=None)
        return
    _RENDERERS.get(outcome.scorer, _render_generic)(outcome, key, payload)
    _render_judge(outcome.judge)
    _render_raw(outcome, key)
