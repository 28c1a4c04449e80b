"""Streamlit views shared by the Batch and History pages: the store, a run's progress, its results.

Runs are scored by background jobs of the server process (:mod:`scorers.runs.jobs`):
a run being scored shows its progress with Stop wherever it is opened, from any
session. The results of a run are always read back from the store, so what the pages
show is what was saved, whether the run finished, was stopped, or was started elsewhere.
"""

from __future__ import annotations

import math
import re
import sqlite3
from typing import Any

import pandas as pd
import streamlit as st

from scorers import (
    EvalItem,
    EvalRunResult,
    ItemOutcome,
    RunStatus,
    ScorerError,
    ScoreStatus,
    Store,
    default_db_path,
    load_run,
)
from scorers.catalogue.registry import scorer_label
from scorers.runs import jobs
from scorers.runs.export import export_run, item_texts

from .batch import (
    DEFAULT_CONCURRENCY,
    aggregates_frame,
    dimension_aggregates,
    dimension_frame,
    dimension_splitters,
    display_rows,
    filter_rows,
    group_means,
    result_rows,
    resume_settings,
    scorers_for_run,
    start_batch_job,
    stored_scorer_options,
    truncate,
    work_left,
)
from .distributions import dimension_distribution, dimension_heatmap, group_comparison_chart, score_box, score_histogram
from .jobs import remember, render_job_progress, session_job, session_job_running
from .results import md_escape, render_outcome
from .runs import RunFailure
from .settings import judge_settings

JOB_SLOT = "batch"
"""This session's batch job, in :func:`dashboard.jobs.session_job`."""

EXPORTS = (
    ("csv", "CSV", "text/csv"),
    ("jsonl", "JSON Lines", "application/x-ndjson"),
    ("json", "JSON (seeds' shape)", "application/json"),
    ("parquet", "Parquet", "application/octet-stream"),
)

_NUMBER = st.column_config.NumberColumn(format="%.3f")


@st.cache_resource(show_spinner=False)
def _open_store(path: str) -> Store:
    store = Store(path)
    # Once per server process: runs left "running" by a process that died are interrupted.
    store.mark_interrupted(alive=lambda run_id: jobs.running_for(jobs.run_key(run_id)) is not None)
    return store


def get_store() -> Store:
    """The database at :func:`scorers.default_db_path` (``SCORER_STUDIO_DB`` overrides it), opened once per process.

    Stops the page with an error message when the file is not a Scorer Studio database.
    """
    path = default_db_path()
    try:
        return _open_store(str(path))
    except (OSError, sqlite3.DatabaseError) as exc:
        st.error(f"Cannot open the run database {path}: {exc}. Set SCORER_STUDIO_DB to another file.")
        st.stop()


def job_running() -> bool:
    """True while this session's batch job is scoring."""
    return session_job_running(JOB_SLOT)


def check_judges(scorers: list[Any]) -> str | None:
    """None when every LLM-judged scorer can reach its judge as configured, else the error text (no call is made)."""
    for scorer in scorers:
        if getattr(scorer, "settings", None) is None:
            continue
        try:
            scorer.judge  # noqa: B018 - creating the client checks the key and parameters
        except ScorerError as exc:
            return f"{scorer.name}: {exc}"
    return None


def start_job(
    store: Store,
    run_id: str,
    scorers: list[Any],
    *,
    concurrency: int,
    item_timeout: float | None,
    retry_failed: bool = False,
) -> str:
    """Start scoring ``run_id`` as a background job of the server, remembered as this session's batch job.

    Raises:
        JobConflict: the run is already being scored.
    """
    job_id = start_batch_job(
        store, run_id, scorers, concurrency=concurrency, item_timeout=item_timeout, retry_failed=retry_failed
    )
    remember(JOB_SLOT, job_id)
    return job_id


def render_job_panel() -> None:
    """This session's batch job while it runs: progress (done, failed, ETA) with Stop, refreshed every second."""
    job = session_job(JOB_SLOT)
    if job is None or not job.running:
        return
    st.info(
        f"Scoring run {job.run_id} in the background on the server. You can switch pages or close the tab; "
        "the run goes on, and any session can stop it from the sidebar."
    )
    render_job_progress(job.id, key="batch_job")


def _scale_range(options: dict[str, Any]) -> tuple[float, float]:
    scale = options.get("scale", 1.0)
    return (0.0, float(scale) if isinstance(scale, (int, float)) and scale > 0 else 1.0)


def _outcome_view(outcome: ItemOutcome) -> Any:
    if outcome.result is not None:
        return outcome.result
    return RunFailure(outcome.error or "not scored", outcome.status, outcome.raw_reply)


def _file_stem(name: str, run_id: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")[:60] or "run"
    return f"{slug}-{run_id}"


def render_run(store: Store, run_id: str, *, key: str) -> None:
    """A stored run: status, resume controls, aggregates, distributions, filtered rows, drill-down and exports.

    Args:
        store: the database.
        run_id: the run to show.
        key: prefix of every widget and chart key (one per place the view is shown).
    """
    try:
        run, items, result = load_run(store, run_id)
    except KeyError:
        st.warning(f"Run {run_id} is no longer in the store (it was deleted).")
        return
    key = f"{key}_{run_id}"
    names = {sid: scorer_label(sid) for sid in result.scorer_ids}
    options = stored_scorer_options(run)
    job = jobs.running_for(jobs.run_key(run_id))
    scoring_now = job is not None or run["status"] == "running"

    st.subheader(run["name"])
    judge = (run.get("judge") or {}).get("model")
    st.caption(
        md_escape(
            f"Run {run_id} · dataset {run['dataset_name']} · started {str(run['created_at'])[:19].replace('T', ' ')} "
            f"UTC · scorers {', '.join(names.values())}" + (f" · judge {judge}" if judge else "")
        )
    )
    _render_status(run, result, scoring_now)
    if job is not None:
        render_job_progress(job.id, key=f"{key}_job")
    if not scoring_now:
        _render_resume(store, run, result, key)

    usage = result.usage
    cost = result.cost_usd
    columns = st.columns(5)
    columns[0].metric("Items", result.n_items)
    columns[1].metric("Outcomes scored", sum(o.status is ScoreStatus.SCORED for o in result.outcomes))
    columns[2].metric("Not scored", result.n_failed, help="Failed outcomes: counted apart, never as a score of 0.")
    columns[3].metric(
        "Judge tokens",
        f"{usage.total_tokens:,}",
        help=f"{usage.prompt_tokens:,} prompt + {usage.completion_tokens:,} completion tokens in "
        f"{usage.calls:,} judge calls, retries included; cached replies cost nothing.",
    )
    columns[4].metric(
        "Cost",
        "—" if judge is None else ("unknown" if cost is None else f"${cost:,.4f}"),
        help="Actual judge cost from the price table; 'unknown' for a model not in it.",
    )
    if not result.outcomes:
        st.info("No outcome has been stored for this run yet.")
        return

    rows = result_rows(result, items)
    dims = dimension_frame(result, dimension_splitters(options))
    groups = [c.removeprefix("group:") for c in rows.columns if c.startswith("group:")]
    summary, charts, table, export = st.tabs(["Summary", "Distributions", "Rows and drill-down", "Export"])
    with summary:
        _render_summary(result, rows, dims, names, groups)
    with charts:
        _render_charts(result, rows, dims, names, options, groups, key)
    with table:
        _render_rows(result, items, rows, names, key)
    with export:
        _render_exports(run, result, items, key)


STOPPED_BECAUSE: dict[str, str] = {
    RunStatus.CANCELLED.value: "Stopped",
    RunStatus.INTERRUPTED.value: "Interrupted (the process scoring it stopped during the run)",
    RunStatus.BUDGET_REACHED.value: "Paused at the budget cap (the next judge call could have passed it)",
    RunStatus.JUDGE_UNREACHABLE.value: "Paused because the judge could not be reached",
}
"""How a run that stopped early says why, by stored status."""


def _render_status(run: dict[str, Any], result: EvalRunResult, scoring_now: bool) -> None:
    expected = result.n_items * len(result.scorer_ids)
    missing = expected - len(result.outcomes)
    status = run["status"]
    note = run.get("stop_reason")
    if scoring_now:
        where = "" if jobs.running_for(jobs.run_key(run["id"])) else " by another process (e.g. the command line)"
        st.info(
            f"Being scored now{where}: {len(result.outcomes)} of {expected} outcomes were stored when this view "
            "was drawn; it shows everything when the run ends."
        )
    elif status == RunStatus.COMPLETED.value and not result.n_failed:
        st.success(f"Completed: all {expected} outcomes scored.")
    elif status == RunStatus.COMPLETED.value:
        st.warning(
            f"Completed with {result.n_failed} outcome(s) not scored; see the status and error columns. "
            "Retry failed items re-sends only those."
        )
    elif status == RunStatus.FAILED.value:
        st.error(
            f"The run stopped on an unexpected error; {len(result.outcomes)} of {expected} outcomes are stored. "
            "Resume continues where it stopped."
        )
    else:
        what = STOPPED_BECAUSE.get(status, status)
        st.warning(
            f"{what}: {len(result.outcomes)} of {expected} outcomes stored, {missing} still to do. "
            + (md_escape(note) + " " if note else "")
            + "Resume scores only what is missing."
        )


def _render_resume(store: Store, run: dict[str, Any], result: EvalRunResult, key: str) -> None:
    left = work_left(result)
    failed_items = work_left(result, retry_failed=True) - left
    if not left and not failed_items:
        return
    config = run.get("config") or {}
    col_resume, col_retry, col_note = st.columns([1, 1, 2])
    resume = col_resume.button(
        f"Resume ({left} items left)", key=f"{key}_resume", disabled=not left, icon=":material/play_arrow:"
    )
    retry = col_retry.button(
        f"Retry failed items ({failed_items})",
        key=f"{key}_retry",
        disabled=not failed_items,
        icon=":material/replay:",
    )
    col_note.caption(
        "Uses the run's judge model, endpoint and options with the API key from the sidebar. "
        "Finished outcomes are never scored again."
    )
    if not (resume or retry):
        return
    try:
        settings = resume_settings(run, judge_settings()) if run.get("judge") else None
        scorers = scorers_for_run(run, settings, cache=store)
    except ScorerError as exc:
        st.error(str(exc))
        return
    problem = check_judges(scorers)
    if problem:
        st.error(problem)
        return
    try:
        start_job(
            store,
            run["id"],
            scorers,
            concurrency=int(config.get("concurrency") or DEFAULT_CONCURRENCY),
            item_timeout=config.get("item_timeout"),
            retry_failed=retry,
        )
    except jobs.JobConflict as exc:  # another browser session started it a moment ago
        st.error(str(exc))
        return
    st.rerun()


def _render_summary(
    result: EvalRunResult, rows: pd.DataFrame, dims: pd.DataFrame, names: dict[str, str], groups: list[str]
) -> None:
    st.markdown("**Scores per scorer** (scored items only; failed items are counted, never averaged as 0)")
    st.dataframe(
        aggregates_frame(result, names),
        hide_index=True,
        column_config={c: _NUMBER for c in ("mean", "median", "std", "min", "max")},
    )
    if not dims.empty:
        st.markdown("**Scores per dimension** (0–1, before scale)")
        table = dimension_aggregates(dims)
        table["scorer"] = table["scorer"].map(lambda s: names.get(s, s))
        st.dataframe(
            table, hide_index=True, column_config={c: _NUMBER for c in ("mean", "median", "std", "min", "max")}
        )
    for group in groups:
        st.markdown(f"**Mean score per {md_escape(group)}**")
        table = group_means(rows, group)
        table["scorer"] = table["scorer"].map(lambda s: names.get(s, s))
        st.dataframe(table, hide_index=True, column_config={"mean": _NUMBER})


def _render_charts(
    result: EvalRunResult,
    rows: pd.DataFrame,
    dims: pd.DataFrame,
    names: dict[str, str],
    options: dict[str, Any],
    groups: list[str],
    key: str,
) -> None:
    st.caption("Charts show the whole run; the filters apply to the rows table.")
    for sid in result.scorer_ids:
        name = names[sid]
        st.markdown(f"#### {md_escape(name)}")
        mine = rows[rows["scorer"] == sid]
        span = _scale_range(options.get(sid, {}))
        left, right = st.columns(2)
        left.plotly_chart(
            score_histogram(mine["score"], title=f"{name}: scores", x_range=span), key=f"{key}_hist_{sid}"
        )
        right.plotly_chart(
            score_box(
                mine["score"], labels=mine["item_id"].astype(str).tolist(), title=f"{name}: spread", x_range=span
            ),
            key=f"{key}_box_{sid}",
        )
        mine_dims = dims[dims["scorer"] == sid]
        if mine_dims.empty:
            continue
        kind = (
            st.segmented_control(
                "Dimension chart", ["box", "violin"], default="box", key=f"{key}_kind_{sid}", format_func=str.capitalize
            )
            or "box"
        )
        st.plotly_chart(
            dimension_distribution(mine_dims, kind=kind, title=f"{name}: dimension scores"), key=f"{key}_dims_{sid}"
        )
        st.plotly_chart(
            dimension_heatmap(mine_dims, title=f"{name}: dimension scores by item"), key=f"{key}_heat_{sid}"
        )
    for group in groups:
        table = group_means(rows, group)
        table["scorer"] = table["scorer"].map(lambda s: names.get(s, s))
        st.plotly_chart(group_comparison_chart(table, group), key=f"{key}_group_{group}")


def _render_rows(
    result: EvalRunResult, items: list[EvalItem], rows: pd.DataFrame, names: dict[str, str], key: str
) -> None:
    # Fixed choices and ranges: a filter drawn while a run was still scoring must not hide
    # the statuses and scores that arrive later (widget state keeps its first value).
    statuses = [s.value for s in ScoreStatus]
    f1, f2, f3, f4 = st.columns([2, 2, 2, 3])
    chosen_status = f1.multiselect("Status", statuses, default=statuses, key=f"{key}_f_status")
    chosen_scorers = f2.multiselect(
        "Scorer",
        result.scorer_ids,
        default=result.scorer_ids,
        format_func=lambda s: names.get(s, s),
        key=f"{key}_f_scorer",
    )
    scored = rows["score"].dropna()
    score_range = None
    if len(scored) and scored.min() < scored.max():
        lo, hi = min(0.0, float(scored.min())), max(1.0, math.ceil(float(scored.max())))
        score_range = f3.slider(
            "Score range",
            min_value=lo,
            max_value=hi,
            value=(lo, hi),
            key=f"{key}_f_score",
            help="Applies to scored rows; rows not scored are kept or hidden by status.",
        )
    else:
        f3.caption("Score range: " + (f"every score is {scored.iloc[0]:g}" if len(scored) else "nothing scored yet"))
    search = f4.text_input("Search text", key=f"{key}_f_search", placeholder="words in the prompt, response, error…")
    shown = filter_rows(rows, statuses=chosen_status, scorers=chosen_scorers, score_range=score_range, search=search)
    st.caption(
        f"{len(shown)} of {len(rows)} rows (one per item and scorer). Long texts are cut here; "
        "select a row to read it whole below."
    )
    table = display_rows(shown).drop(columns=["item_index"])
    event = st.dataframe(
        table,
        hide_index=True,
        key=f"{key}_table",
        on_select="rerun",
        selection_mode="single-row",
        column_config={"score": _NUMBER, "latency_s": st.column_config.NumberColumn("latency (s)", format="%.2f")},
    )
    item_indexes = list(dict.fromkeys(shown["item_index"].tolist()))
    if not item_indexes:
        st.info("No row matches the filters.")
        return
    pick_key = f"{key}_item"
    selected = event.selection.rows if event is not None else []
    last_key = f"{key}_table_last"
    if selected and selected != st.session_state.get(last_key):
        st.session_state[pick_key] = int(shown.iloc[selected[0]]["item_index"])
    st.session_state[last_key] = selected
    if st.session_state.get(pick_key) not in item_indexes:
        st.session_state.pop(pick_key, None)
    prompts = dict(zip(shown["item_index"], shown["input"], strict=True))
    index = st.selectbox(
        "Item to inspect",
        item_indexes,
        key=pick_key,
        format_func=lambda i: f"{items[i].item_id} — {truncate(prompts[i], 80)}",
    )
    _render_item(result, items, index, names, key)


def render_item_texts(item: EvalItem) -> None:
    """An item's user prompt, system message, response and ground truth (those it has), then its groups."""
    texts = item_texts(item)
    for label, field in (
        ("User prompt", "input"),
        ("System message", "system"),
        ("Response", "output"),
        ("Ground truth", "ground_truth"),
    ):
        if texts[field]:
            st.markdown(f"**{label}**")
            st.code(texts[field], language=None, wrap_lines=True)
    for name, value in item.groups.items():
        st.caption(md_escape(f"{name}: {value}"))


def _render_item(result: EvalRunResult, items: list[EvalItem], index: int, names: dict[str, str], key: str) -> None:
    item = items[index]
    with st.expander(f"Texts of {item.item_id}", expanded=True):
        render_item_texts(item)
    outcomes = {o.scorer_id: o for o in result.outcomes if o.item_index == index}
    for sid in result.scorer_ids:
        st.markdown(f"#### {md_escape(names[sid])}")
        if sid not in outcomes:
            st.info("Not scored yet: the run stopped before this item. Resume the run to score it.")
            continue
        render_outcome(_outcome_view(outcomes[sid]), key=f"{key}_drill_{sid}", payload=item.payload)


def _render_exports(run: dict[str, Any], result: EvalRunResult, items: list[EvalItem], key: str) -> None:
    st.caption(
        "One row per item and scorer (CSV, JSON Lines, Parquet), or the seeds' runEvals shape (JSON). "
        "A failed item has an empty score with its status and error. CSV cells that a spreadsheet would "
        "run as a formula are prefixed with '."
    )
    stem = _file_stem(run["name"], run["id"])
    for column, (fmt, label, mime) in zip(st.columns(len(EXPORTS)), EXPORTS, strict=True):
        column.download_button(
            label,
            data=export_run(result, items, fmt),
            file_name=f"{stem}.{fmt}",
            mime=mime,
            key=f"{key}_export_{fmt}",
            on_click="ignore",
            icon=":material/download:",
        )
