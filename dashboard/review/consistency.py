"""The Review page's consistency view: re-judge a sample of rows several times and show the spread."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from scorers import (
    ScorerError,
    create_scorer,
)
from scorers.analysis.agreement import (
    consistency_report,
    rejudge,
    sample_indexes,
)
from scorers.analysis.uncertainty import save_rejudge, stored_rejudges
from scorers.catalogue.registry import scorer_spec
from scorers.runs import jobs

from ..agreement_charts import consistency_chart
from ..batch import resume_settings, stored_scorer_options
from ..jobs import remember, render_job_progress, session_job
from ..results import md_escape
from ..run_view import check_judges
from ..settings import judge_settings
from .context import (
    ReviewContext,
    fmt_number,
    fmt_share,
)

REJUDGE_SLOT = "rejudge"
"""This session's re-judging job, in :func:`dashboard.jobs.session_job`."""


def render_consistency(ctx: ReviewContext) -> None:
    """Re-judge a sample of rows several times (cache bypassed) and show the spread.

    The run's results are never changed; each re-judging is stored beside the run
    (:func:`scorers.analysis.uncertainty.save_rejudge`), shown again here, and feeds the review
    queue's "judge least sure first" order.
    """
    if not ctx.uses_judge:
        st.info(f"{ctx.scorer_name} uses no judge: its scores are computed in code and never vary.")
        return
    scored = sorted(i for i, o in ctx.outcomes.items() if o.score is not None)
    if not scored:
        st.info("No row of this scorer was scored yet; nothing to re-judge.")
        return
    st.caption(
        "Asks the judge again about a sample of rows, several times each, with the cache bypassed. "
        "The run's stored results are never changed: each re-judging is kept beside the run, shown again here, "
        'and puts rows whose verdict flipped first in the review queue\'s "judge least sure first" order.'
    )
    c1, c2, c3, c4 = st.columns(4)
    n_rows = c1.number_input(
        "Rows to re-judge",
        min_value=1,
        max_value=len(scored),
        value=min(5, len(scored)),
        step=1,
        key=f"{ctx.key}_c_rows",
    )
    repeats = c2.number_input("Times each", min_value=2, max_value=20, value=3, step=1, key=f"{ctx.key}_c_repeats")
    temperature = c3.number_input(
        "Temperature",
        min_value=0.0,
        max_value=2.0,
        value=float(st.session_state.get("judge_temperature", 0.0)),
        step=0.1,
        key=f"{ctx.key}_c_temperature",
        help="The judge's sampling temperature for these calls (default: the sidebar's).",
    )
    sample_seed = c4.number_input(
        "Sample seed",
        min_value=0,
        value=0,
        step=1,
        key=f"{ctx.key}_c_seed",
        help="Which rows are drawn (the same seed draws the same rows).",
    )
    keep_seed = st.checkbox(
        "Send the run's sampling seed with every call",
        value=False,
        key=f"{ctx.key}_c_keep_seed",
        help="Off: no seed is sent, so each call can differ. On: servers that honour seeds may repeat themselves.",
    )
    indexes = sample_indexes(scored, int(n_rows), seed=int(sample_seed))
    per_run = _scorer_calls(ctx)
    st.caption(
        f"{len(indexes) * int(repeats) * per_run} judge call(s): {len(indexes)} row(s) × {int(repeats)} "
        f"time(s) × {per_run} call(s) per score."
    )
    job = session_job(REJUDGE_SLOT)
    busy = job is not None and job.running
    if st.button("Re-judge", type="primary", key=f"{ctx.key}_c_run", icon=":material/replay:", disabled=busy):
        _run_consistency(ctx, indexes, int(repeats), float(temperature), keep_seed)
        st.rerun()
    if busy:
        render_job_progress(job.id, key=f"{ctx.key}_c_job")
    elif job is not None and job.snapshot().status == "failed":
        st.error(job.snapshot().message)
    records = stored_rejudges(ctx.store, ctx.run["id"], ctx.scorer_id)
    if not records:
        return
    by_id = {r["id"]: r for r in records}
    chosen = st.selectbox(
        "Stored re-judgings of this scorer (newest first)",
        list(by_id),
        key=f"{ctx.key}_c_pick",
        format_func=lambda i: f"{by_id[i]['created_at'][:16].replace('T', ' ')} UTC · {by_id[i]['params']}",
    )
    params, repetitions = by_id[chosen]["params"], by_id[chosen]["repetitions"]
    report = consistency_report(
        repetitions,
        threshold=ctx.threshold,
        item_ids={i: ctx.items[i].item_id for i in repetitions},
        stored_scores={i: ctx.outcomes[i].score if i in ctx.outcomes else None for i in repetitions},
        higher_is_better=ctx.higher_is_better,
    )
    st.markdown(f"**Re-judging:** {md_escape(params)}")
    m = st.columns(6)
    m[0].metric("Rows re-judged", len(report.rows))
    m[4].metric(
        "Change from stored",
        fmt_number(report.mean_abs_change),
        help="Drift: mean |re-judged score − the run's stored score| over the re-judged rows. Steady repetitions "
        "far from the stored score mean the judge (or its endpoint) changed since the run.",
    )
    m[5].metric(
        "Flips vs stored verdict",
        fmt_share(report.stored_flip_share),
        help=f"Share of the re-judged scores whose verdict at {ctx.threshold:g} differs from the stored score's.",
    )
    m[1].metric(
        "Verdict flips",
        fmt_share(report.flip_share),
        help=f"Share of rows whose repetitions give both pass and fail at {ctx.threshold:g} "
        f"({report.n_compared} rows with at least 2 scored repetitions).",
    )
    m[2].metric(
        "Mean std", fmt_number(report.mean_std), help="Mean over rows of the scores' sample standard deviation."
    )
    m[3].metric(
        "Failed calls",
        sum(r.n_failed for r in report.rows),
        help="Repetitions that were not scored (counted apart, never as 0).",
    )
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "item_id": r.item_id,
                    "stored score": r.stored_score,
                    "scores": ", ".join(f"{s:g}" for s in r.scores),
                    "mean": r.mean,
                    "std": r.std,
                    "min": r.min,
                    "max": r.max,
                    "flips": r.flips,
                    "change from stored": r.change,
                    "failed": r.n_failed,
                }
                for r in report.rows
            ]
        ),
        hide_index=True,
        key=f"{ctx.key}_c_table",
        column_config={
            c: st.column_config.NumberColumn(format="%.3f") for c in ("mean", "std", "min", "max", "change from stored")
        },
    )
    st.plotly_chart(consistency_chart(report.rows, threshold=ctx.threshold), key=f"{ctx.key}_c_chart")


def _scorer_calls(ctx: ReviewContext) -> int:
    try:
        return max(1, scorer_spec(ctx.scorer_id, ctx.store).judge_calls)
    except ScorerError:
        return 1


def _run_consistency(ctx: ReviewContext, indexes: list[int], repeats: int, temperature: float, keep_seed: bool) -> None:
    try:
        base = resume_settings(ctx.run, judge_settings())
        settings = replace(base, temperature=temperature, seed=base.seed if keep_seed else None)
        options = stored_scorer_options(ctx.run).get(ctx.scorer_id, {})
        scorer = create_scorer(ctx.scorer_id, options, settings=settings, cache=None, store=ctx.store)
    except ScorerError as exc:
        st.error(str(exc))
        return
    problem = check_judges([scorer])
    if problem:
        st.error(problem)
        return
    concurrency = int((ctx.run.get("config") or {}).get("concurrency") or 4)
    params = (
        f"{len(indexes)} row(s) × {repeats}, model {settings.model_name}, temperature {temperature:g}, "
        + (f"seed {settings.seed}" if settings.seed is not None else "no seed")
        + ", cache bypassed"
    )
    store, run_id, scorer_id = ctx.store, ctx.run["id"], ctx.scorer_id

    def work(job: jobs.JobContext) -> int:
        job.progress(done=0, total=len(indexes) * repeats, phase="re-judging")
        repetitions = rejudge(
            scorer,
            ctx.items,
            indexes,
            repeats=repeats,
            concurrency=min(concurrency, 8),
            on_progress=lambda done, total: job.progress(done=done, total=total),
            cancel=job.cancel,
        )
        return save_rejudge(store, run_id, scorer_id, params=params, repetitions=repetitions)

    remember(REJUDGE_SLOT, jobs.start("rejudge", f"Re-judging {ctx.scorer_name} in run {ctx.run['id']}", work))


# ---- import and export view
