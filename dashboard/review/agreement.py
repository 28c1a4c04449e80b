"""The Review page's agreement view: how often the judge agrees with people, and where it disagrees most."""

from __future__ import annotations

import streamlit as st

from scorers import (
    EvalItem,
)
from scorers.analysis.agreement import passes
from scorers.analysis.certify import certify_judge, krippendorff_alpha, krippendorff_interval
from scorers.analysis.labels import reviewer_labels
from scorers.core.base import decimal_text
from scorers.runs.export import item_texts

from ..agreement_charts import calibration_chart, confusion_heatmap
from ..results import md_escape
from .context import (
    ReviewContext,
    fmt_number,
    fmt_share,
    label_verdict,
    open_row,
    verdict_text,
)


def render_agreement(ctx: ReviewContext, *, top: int = 10) -> None:
    """The agreement panel: the numbers, the confusion matrix, calibration, and the largest disagreements."""
    report = ctx.report
    if report.n_labelled == 0:
        st.info(
            f"No labelled row of {ctx.scorer_name} has a judge score yet. Label rows in the Review view, "
            "or import labels made elsewhere."
        )
        return
    if not report.meaningful:
        st.warning(
            f"Only {report.n_labelled} labelled row(s): with fewer than 10 the numbers below are not meaningful yet."
        )
    columns = st.columns(6)
    columns[0].metric(
        "Labelled rows",
        report.n_labelled,
        help=f"{report.n_verdicts} with a verdict, {report.n_scores} with a human score.",
    )
    columns[1].metric(
        "Agreement rate",
        fmt_share(report.agreement_rate),
        help=f"Verdicts that match at the threshold {ctx.threshold:g}.",
    )
    columns[2].metric(
        "Cohen's κ",
        fmt_number(report.kappa.value),
        help=report.kappa.reason
        or (
            f"(p_o − p_e) / (1 − p_e) with p_o = {fmt_number(report.kappa.p_observed)} and "
            f"p_e = {fmt_number(report.kappa.p_expected)}"
        ),
    )
    columns[3].metric(
        "Spearman ρ",
        fmt_number(report.spearman.value),
        help=report.spearman.reason
        or (
            f"Rank correlation of {report.spearman.n} judge and human scores (p = {fmt_number(report.spearman.p_value)})"
        ),
    )
    columns[4].metric(
        "Pearson r",
        fmt_number(report.pearson.value),
        help=report.pearson.reason
        or (
            f"Linear correlation of {report.pearson.n} judge and human scores (p = {fmt_number(report.pearson.p_value)})"
        ),
    )
    columns[5].metric(
        "Mean absolute error",
        fmt_number(report.mae),
        help=f"Mean |judge − human| on the 0–{ctx.scale:g} scale, over rows with a human score.",
    )
    pairs = report.spearman.n
    if pairs:
        st.caption(
            f"Spearman ρ and Pearson r are over {pairs} pair(s) of judge and human scores"
            + (": with so few, one pair moves them a lot." if pairs < 10 else ".")
        )
    for note in report.notes[0 if report.meaningful else 1 :]:
        st.caption(md_escape(note))
    left, right = st.columns(2)
    left.plotly_chart(confusion_heatmap(report.confusion), key=f"{ctx.key}_confusion")
    right.plotly_chart(
        calibration_chart(report.calibration, scale=ctx.scale, threshold=ctx.threshold), key=f"{ctx.key}_calibration"
    )
    st.markdown("**Where the judge and people disagree most** (|judge − human|, largest first)")
    st.caption(
        "A label without a score counts as the end of the scale it points at (pass → best, fail → worst). "
        "Open a row to see it in the Review view."
    )
    shown = report.disagreements[:top]
    for d in shown:
        row = d.row
        human = f"{d.human_value:.3g}" if row.human_score is not None else verdict_text(d.human_pass)
        cols = st.columns([5, 2, 2, 1, 1.5], vertical_alignment="center")
        cols[0].markdown(f"`{md_escape(row.item_id)}` — {md_escape(_excerpt(ctx.items[row.item_index]))}")
        cols[1].markdown(f"judge **{decimal_text(row.judge_score)}** ({verdict_text(d.judge_pass)})")
        cols[2].markdown(f"human **{md_escape(human)}** ({verdict_text(d.human_pass)})")
        cols[3].markdown(f"gap **{d.gap:.3g}**")
        cols[4].button(
            "Open",
            key=f"{ctx.key}_open_{row.item_index}",
            on_click=open_row,
            args=(ctx.position_key, row.item_index),
            icon=":material/open_in_new:",
            help="Show this row in the Review view.",
        )
    if len(report.disagreements) > top:
        st.caption(f"The {top} largest of {len(report.disagreements)} labelled rows.")
    render_certificate(ctx)
    render_reviewers(ctx)


def _excerpt(item: EvalItem, limit: int = 80) -> str:
    text = item_texts(item)["output"] or item_texts(item)["input"] or ""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# ---- consistency view


def render_certificate(ctx: ReviewContext) -> None:
    """Can the judge be trusted on this task: TPR/TNR against people, the corrected pass rate, a verdict."""
    st.markdown("#### Can this judge be trusted on this task?")
    pairs = [(d.human_pass, d.judge_pass) for d in ctx.report.disagreements if d.human_pass is not None]
    run_verdicts = [
        passes(o.score, ctx.threshold, higher_is_better=ctx.higher_is_better)
        for o in ctx.outcomes.values()
        if o.score is not None
    ]
    level = st.slider(
        "The judge must get at least this share of both people's passes and people's fails right",
        min_value=0.5,
        max_value=0.99,
        value=0.8,
        step=0.01,
        key=f"{ctx.key}_cert_level",
    )
    if not pairs or not run_verdicts:
        st.info("Label some rows (pass and fail) first: certification compares the judge with people.")
        return
    cert = certify_judge([h for h, _ in pairs], [j for _, j in pairs], run_verdicts, level=level)
    show = {"good enough": st.success, "not good enough": st.error}.get(cert.verdict, st.info)
    show(f"**{cert.verdict.capitalize()}** at {level:.0%}.")
    m = st.columns(4)
    for column, label, rate, tip in (
        (m[0], "True-positive rate", cert.tpr, "Of the rows people pass, the share the judge passes."),
        (m[1], "True-negative rate", cert.tnr, "Of the rows people fail, the share the judge fails."),
        (m[2], "Judge's pass rate", cert.raw_rate, "The share of the run's scored rows the judge passes."),
    ):
        column.metric(
            label,
            fmt_share(rate.value),
            help=f"{tip} {rate.hits} of {rate.n}; 95% Wilson interval {fmt_share(rate.low)}–{fmt_share(rate.high)}.",
        )
    m[3].metric(
        "Corrected pass rate",
        fmt_share(cert.corrected),
        help="Rogan–Gladen: (pass rate + TNR − 1) / (TPR + TNR − 1); 95% bootstrap interval "
        f"{fmt_share(cert.corrected_low)}–{fmt_share(cert.corrected_high)}.",
    )
    st.markdown(md_escape(cert.explanation))


def render_reviewers(ctx: ReviewContext) -> None:
    """How people agree with each other: each reviewer's labels kept apart, Krippendorff's alpha with an interval."""
    st.markdown("#### People with each other")
    by_reviewer = reviewer_labels(ctx.store, ctx.run["id"], ctx.scorer_id)
    if len(by_reviewer) < 2:
        st.caption(
            "One reviewer so far. When several people label the same rows (each types their name), their agreement "
            "with each other is measured here: the ceiling for any judge."
        )
        return
    units: dict[int, list[bool]] = {}
    for labels in by_reviewer.values():
        for index, label in labels.items():
            verdict = label_verdict(label, ctx.threshold, ctx.higher_is_better)
            if verdict is not None:
                units.setdefault(index, []).append(verdict)
    shared = [u for u in units.values() if len(u) >= 2]
    alpha = krippendorff_alpha(shared)
    low, high = krippendorff_interval(shared)
    m = st.columns(3)
    m[0].metric("Reviewers", len(by_reviewer))
    m[1].metric("Rows labelled by two or more", len(shared))
    m[2].metric(
        "Krippendorff's α (verdicts)",
        fmt_number(alpha),
        help="1 = people always agree, 0 = no better than chance; 95% bootstrap interval over rows "
        f"{fmt_number(low)} to {fmt_number(high)}.",
    )
    st.dataframe(
        [{"reviewer": who, "rows labelled": len(labels)} for who, labels in sorted(by_reviewer.items())],
        hide_index=True,
        key=f"{ctx.key}_reviewers",
    )
