"""Render one run's outcome: a score with its breakdown, or the reason it was not scored."""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from scorers import JudgeInfo, ScoreResult, TextualDifferenceScorer, dimension_breakdown, interpretation_band
from scorers.catalogue.registry import higher_is_better
from scorers.core.base import decimal_text, exact_decimal_text, round_half_up
from scorers.core.errors import outcome_status_label

from .charts import SOURCE_NAMES, dimension_chart, score_gauge, textual_difference_chart
from .diff import TEXT_PREVIEW_CHARS, render_text_diff
from .runs import RunFailure

_Renderer = Callable[[ScoreResult, str, Mapping[str, Any] | None, str | None], None]

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>#$|~])")
_TEXT_BLOCK_STYLE = (
    "white-space:pre-wrap;overflow-wrap:anywhere;font-family:'Source Code Pro',monospace;font-size:0.875rem;"
    "line-height:1.6;padding:0.75rem 1rem;border-radius:0.5rem;background:rgba(128,128,128,0.1)"
)


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


def text_block_html(text: str) -> str:
    """``text`` as an HTML block for ``st.html`` that shows it as it is: HTML-escaped, in a monospace
    font, every space and line break kept, long lines wrapped. It shows what ``st.code(text,
    language=None, wrap_lines=True)`` shows, less its copy button, without loading ``st.code``'s
    1.6 MB syntax highlighter in the browser (a row's texts on every Review open).

    >>> text_block_html("a  <b>\\n c").endswith(">a  &lt;b&gt;\\n c</div>")
    True
    """
    return f'<div style="{_TEXT_BLOCK_STYLE}">{html.escape(text, quote=False)}</div>'


def render_text_block(text: str, *, key: str, name: str) -> None:
    """``text`` as :func:`text_block_html`, cut to its first :data:`TEXT_PREVIEW_CHARS` characters when it
    is longer (a row's 386,000-character response made a page of 777,000 characters): then a caption
    gives the total length, a toggle (key ``key``) shows all of it and a download (key
    ``<key>_download``, file ``<name>.txt``, written when clicked) gives all of it.
    """
    if len(text) <= TEXT_PREVIEW_CHARS:
        st.html(text_block_html(text))
        return
    whole = st.toggle(f"Show all {len(text):,} characters", key=key)
    st.html(text_block_html(text if whole else text[:TEXT_PREVIEW_CHARS]))
    if not whole:
        st.caption(f"The first {TEXT_PREVIEW_CHARS:,} of {len(text):,} characters: the rest is not shown.")
    st.download_button(
        f"Download all {len(text):,} characters",
        data=lambda: text.encode("utf-8"),
        file_name=f"{name}.txt",
        mime="text/plain",
        key=f"{key}_download",
        on_click="ignore",
        icon=":material/download:",
    )


def dimension_table(analysis: Mapping[str, Any]) -> str:
    """The prompt-alignment dimensions as a Markdown table, the numbers
    :func:`dashboard.charts.dimension_chart` draws: per dimension (and instruction source, with its
    share, in both mode) its 0..1 score, its weight and its contribution ``share · weight · score``;
    then the weighted score W, the sum of the contributions.

    Args:
        analysis: ``ScoreResult.analyze_step_result`` of the prompt-alignment scorer.

    Returns:
        Markdown: a table with one row per :func:`scorers.dimension_breakdown` row, and a line with W (and, for a
        result that carries its scale, the score it rounds to).
    """
    rows = dimension_breakdown(analysis)
    both = len({r["source"] for r in rows}) > 1
    head = ["Dimension", *(["Against (share)"] if both else []), "Score (0–1)", "Weight", "Contribution"]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for r in rows:
        source = [f"{SOURCE_NAMES[r['source']]} ({r['sourceShare']:.0%})"] if both else []
        cells = [
            r["label"],
            *source,
            decimal_text(r["score"], 2),
            f"{r['weight']:.0%}",
            decimal_text(r["contribution"], 3),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + f"\n\n{weighted_score_line(analysis)}"


def weighted_score_line(analysis: Mapping[str, Any]) -> str:
    """How the prompt-alignment score comes from the weighted score W, in one sentence: W (the sum of the
    contributions, written exactly, at least 4 decimals, :func:`scorers.core.base.exact_decimal_text`, so the
    2-decimal rounding can be followed: W = 0.64495 rounded to 4 decimals would read 0.6450 beside a score of 0.64)
    and, for a result that carries its scale, the score: W × scale (written exactly too) rounded half up to
    2 decimals (Mastra's rule), written as the score tile and the gauge write it (3 decimals).

    >>> dims = {"intentAlignment": {"score": 0.6}, "requirementsFulfillment": {"overallScore": 0.25},
    ...         "completeness": {"score": 0.5}, "responseAppropriateness": {"score": 0.6}}
    >>> weighted_score_line({"effectiveMode": "user", **dims, "weightedScore": 0.475, "scale": 1})
    "Weighted score W = 0.4750 (the sum of the contributions); the score is W × 1 rounded half up to 2 decimals
    (Mastra's rule): 0.480."
    """
    total = math.fsum(r["contribution"] for r in dimension_breakdown(analysis))
    line = f"Weighted score W = {exact_decimal_text(total)} (the sum of the contributions)"
    if "scale" in analysis:
        scale = analysis["scale"]
        on_scale = "" if scale == 1 else f" = {exact_decimal_text(analysis['weightedScore'] * scale)}"
        score = round_half_up(analysis["weightedScore"] * scale, 2)
        line += (
            f"; the score is W × {scale:g}{on_scale} rounded half up to 2 decimals (Mastra's rule): "
            f"{decimal_text(score)}"
        )
    return f"{line}."


def on_request(label: str, key: str) -> DeltaGenerator | None:
    """A collapsed expander (widget key ``key``) whose content runs only when it is open: the
    expander to draw into when it is, None when it is closed."""
    box = st.expander(label, key=key, on_change="rerun")
    return box if box.open else None


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
            f"{usage.total_tokens} in {usage.calls} answered call{'' if usage.calls == 1 else 's'} of "
            f"{usage.requests} HTTP request{'' if usage.requests == 1 else 's'} to the judge"
            + (" (the reply came from the judge cache: no call, no cost)" if judge.cached else "")
        )
    )


def _render_raw(result: ScoreResult, key: str, lazy_key: str | None) -> None:
    data = result.to_dict()
    if lazy_key is None:
        with st.expander("Raw result JSON"):
            st.json(data)
    elif (box := on_request("Raw result JSON", f"{lazy_key}_raw")) is not None:
        box.json(data)
    st.download_button(
        "Download result JSON",
        data=json.dumps(data, indent=2, ensure_ascii=False),
        file_name=f"{result.scorer}-{result.run_id}.json",
        mime="application/json",
        on_click="ignore",
        key=f"{key}_download",
    )


def _render_prompt_alignment(
    result: ScoreResult, key: str, payload: Mapping[str, Any] | None, lazy_key: str | None
) -> None:
    analysis = result.analyze_step_result
    scale = analysis["scale"]
    both = analysis["effectiveMode"] == "both"
    left, right = st.columns([1, 2])
    with left:
        st.metric(
            f"Prompt alignment (0–{scale:g})",
            decimal_text(result.score),
            delta=interpretation_band(result.score, scale),
            delta_color="off",
            delta_arrow="off",
            help=f"The weighted score W × {scale:g}, rounded half up to 2 decimals (Mastra's rule).",
        )
        if both:
            st.metric("User score (0–1, weight 70%)", decimal_text(analysis["userScore"]))
            st.metric("System score (0–1, weight 30%)", decimal_text(analysis["systemScore"]))
        mode = analysis["evaluationMode"]
        effective = analysis["effectiveMode"]
        st.caption(f"Evaluation mode: {mode}" + (f", scored in {effective} mode" if effective != mode else ""))
    with right:
        if lazy_key is None:
            st.plotly_chart(score_gauge(result.score, scale), key=f"{key}_gauge")
        else:  # the numbers of the dimension chart, drawn below on request
            st.markdown(dimension_table(analysis))
    if analysis["note"]:
        st.info(analysis["note"])
    if analysis.get("warning"):  # a very short prompt with no conversation context
        st.warning(md_escape(analysis["warning"]))
    if analysis.get("conversationTurns"):
        st.caption(f"The judge saw {analysis['conversationTurns']} earlier turn(s) of the conversation as context.")
    if lazy_key is None:
        st.plotly_chart(dimension_chart(analysis), key=f"{key}_dimensions")
        st.markdown(weighted_score_line(analysis))  # the table's last line says it in the light view
    elif (box := on_request("Charts: score gauge and dimensions", f"{lazy_key}_charts")) is not None:
        box.plotly_chart(score_gauge(result.score, scale), key=f"{key}_gauge")
        box.plotly_chart(dimension_chart(analysis), key=f"{key}_dimensions")
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


def _render_textual_difference(
    result: ScoreResult, key: str, payload: Mapping[str, Any] | None, lazy_key: str | None
) -> None:
    analysis = result.analyze_step_result
    details = result.details
    columns = st.columns(5)
    columns[0].metric("Score", decimal_text(result.score), help="ratio × confidence × scale")
    columns[1].metric("Ratio", decimal_text(analysis["ratio"]), help="2·LCS / (len(a) + len(b)) over characters")
    columns[2].metric("Changes", str(analysis["changes"]), help="word-level insert, delete or replace operations")
    columns[3].metric(
        "Length diff", decimal_text(analysis["lengthDiff"]), help="|len(a) − len(b)| / max(len(a), len(b))"
    )
    columns[4].metric("Confidence", decimal_text(analysis["confidence"]), help="1 − length diff")
    st.markdown(f"**Reason:** {md_escape(result.reason or '')}")
    if lazy_key is None:
        st.plotly_chart(textual_difference_chart(analysis), key=f"{key}_textual_difference")
    elif (box := on_request("Chart of the ratio, confidence and length difference", f"{lazy_key}_charts")) is not None:
        box.plotly_chart(textual_difference_chart(analysis), key=f"{key}_textual_difference")
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


def _render_gluten(result: ScoreResult, key: str, payload: Mapping[str, Any] | None, lazy_key: str | None) -> None:
    analysis = result.analyze_step_result
    left, right = st.columns(2)
    left.metric("Verdict", "Gluten-free" if analysis["isGlutenFree"] else "Contains gluten")
    right.metric("Score (0–1)", decimal_text(result.score))
    if analysis["glutenSources"]:
        st.markdown("**Gluten sources**\n" + "\n".join(f"- {md_escape(s)}" for s in analysis["glutenSources"]))
    st.markdown(f"**Reason:** {md_escape(result.reason or '')}")


def _render_generic(result: ScoreResult, key: str, payload: Mapping[str, Any] | None, lazy_key: str | None) -> None:
    """Any other scorer: its score (with its direction), its reason, and its analysis as JSON."""
    up = higher_is_better(result.scorer)
    st.metric(
        "Score" if up else "Score (lower is better)",
        decimal_text(result.score),
        help=None if up else "For this scorer a low score is good: 0 means none of what it looks for was found.",
    )
    st.markdown(f"**Reason:** {md_escape(result.reason or '')}")
    if result.analyze_step_result:
        with st.expander("Analysis", expanded=True):
            st.json(result.analyze_step_result)


_RENDERERS: dict[str, _Renderer] = {
    "prompt-alignment": _render_prompt_alignment,
    "textual-difference": _render_textual_difference,
    "gluten-checker": _render_gluten,
}


def render_outcome(
    outcome: ScoreResult | RunFailure,
    key: str = "result",
    payload: Mapping[str, Any] | None = None,
    *,
    lazy_key: str | None = None,
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
        lazy_key: None (default): everything is drawn at once, charts inline. A widget key prefix: the
            light view of a page that shows one outcome after another (Review's rows), which loads
            no chart, JSON viewer or syntax highlighter in the browser until asked. Every number
            stays on the page as text (the prompt-alignment dimensions as :func:`dimension_table`);
            the charts and the raw JSON sit in collapsed expanders (keys ``<lazy_key>_charts``,
            ``<lazy_key>_raw``) whose content runs only when opened, and an opened one stays open
            for the next outcome shown under the same prefix; a raw reply is plain text
            (:func:`render_text_block`, keyed ``<key>_raw_reply``).
    """
    if isinstance(outcome, RunFailure):
        st.error(f"Not scored ({outcome_status_label(outcome.status.value)}): {md_escape(outcome.message)}")
        if outcome.raw_reply:
            with st.expander("The judge's raw reply"):
                if lazy_key is None:
                    st.code(outcome.raw_reply, language=None)
                else:
                    render_text_block(outcome.raw_reply, key=f"{key}_raw_reply", name="raw-reply")
        return
    _RENDERERS.get(outcome.scorer, _render_generic)(outcome, key, payload, lazy_key)
    _render_judge(outcome.judge)
    _render_raw(outcome, key, lazy_key)
