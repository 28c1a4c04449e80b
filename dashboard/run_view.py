"""Streamlit views shared by the Batch and History pages: the store, a run's progress, its results.

Runs are scored by background jobs of the server process (:mod:`scorers.runs.jobs`):
a run being scored shows its progress with Stop wherever it is opened, from any
session. The results of a run are always read back from the store, so what the pages
show is what was saved, whether the run finished, was stopped, or was started elsewhere.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import streamlit as st

from scorers import (
    JudgeSettings,
    RunStatus,
    ScorerError,
    ScoreStatus,
    Store,
)
from scorers.analysis.compare import not_scored_summary
from scorers.catalogue.registry import scorer_label
from scorers.core.budget import BudgetCaps, batch_api_caps_problem, cost_cap_refusal, token_cap_refusal
from scorers.core.errors import run_status_label
from scorers.core.judge import check_settings
from scorers.core.pricing import run_cost, usd_text
from scorers.runs import jobs
from scorers.runs.judges import has_price, judges_text, limits_config, run_prices, spend_by_judge
from scorers.runs.runner import EvalItem, estimate_run, judge_model_of
from scorers.runs.shared_jobs import share_jobs
from scorers.runs.store import default_db
from scorers.runs.table import RunTable

from .batch import (
    DEFAULT_CONCURRENCY,
    job_judge_model,
    resume_settings,
    run_limits,
    scorers_for_run,
    start_batch_job,
    stored_scorer_options,
)
from .budget import budget_form, budget_problem
from .jobs import remember, render_job_progress, session_job, session_job_running
from .layout import preload_components
from .results import md_escape
from .run_explorer import render_results, run_judges, run_table, run_usage
from .run_frames import items_left
from .settings import judge_cache, judge_settings

JOB_SLOT = "batch"
"""This session's batch job, in :func:`dashboard.jobs.session_job`."""


@st.cache_resource(show_spinner=False)
def _open_store(path: str) -> Store:
    store = Store(path)
    # Once per server process: runs left "running" by a process that died are interrupted.
    store.mark_interrupted(alive=lambda run_id: jobs.running_for(jobs.run_key(run_id)) is not None)
    share_jobs(store)  # this server's jobs are seen, and can be stopped, from the other processes
    return store


def get_store() -> Store:
    """The store at :func:`scorers.runs.store.default_db` (``SCORER_STUDIO_DB``: a file or a URL), opened once per process.

    Stops the page with an error message when it is not a Scorer Studio database.
    """
    target = default_db()
    try:
        return _open_store(target)
    except (OSError, sqlite3.DatabaseError, ValueError) as exc:
        st.error(f"Cannot open the run database: {exc}. Set SCORER_STUDIO_DB to another file or URL.")
        st.stop()


def job_running() -> bool:
    """True while this session's batch job is scoring."""
    return session_job_running(JOB_SLOT)


def check_judges(scorers: list[Any]) -> str | None:
    """None when every LLM-judged scorer can reach its judge as configured, else the error text.

    Checks each scorer's settings as its judge client would (:func:`scorers.core.judge.check_settings`) without
    creating the client: no call is made and ``openai`` (half a second of CPU to import) is not imported.
    """
    for scorer in scorers:
        settings = getattr(scorer, "settings", None)
        if settings is None:
            continue
        try:
            check_settings(settings)
        except ScorerError as exc:
            return f"{scorer.name}: {exc}"
    return None


def cap_problem(store: Store, run: dict[str, Any], scorers: list[Any], *, retry_failed: bool = False) -> str | None:
    """Why the run's cost or token cap cannot be kept on a resume or retry with ``scorers``, or None.

    As :func:`scorers.run_evals` checks it (and refuses the run): the cost cap counts what the run
    spent before at each outcome's own judge's price (:func:`scorers.runs.judges.run_prices`, else the
    list price), so it cannot be kept when an earlier judge's model has no price, nor when the judge of
    ``scorers`` has none. And as the command line refuses them (:func:`scorers.core.budget.cost_cap_refusal`,
    :func:`scorers.core.budget.token_cap_refusal`): what each cap leaves after what the run spent must hold the
    first judge call's reserved bound, the first item left's.

    Args:
        store: the database holding the run.
        run: the stored run (:meth:`~scorers.Store.get_run`), its ``config`` holding the caps and prices
            (those the resume would store, :func:`scorers.runs.judges.limits_config`).
        scorers: the scorers the run would continue with.
        retry_failed: the failed outcomes are scored again (Retry failed items), not only the missing ones.

    Returns:
        What to say on the page (what, why, and what the user can do), or None when the run has no
        cost or token cap, or every earlier outcome's model has a price and each cap holds the first call.
    """
    model = judge_model_of(scorers)
    caps = run_limits(run, model)["budget"]
    cap = caps.max_cost_usd
    if cap is None and caps.max_total_tokens is None:
        return None
    if cap is not None and model and not has_price(run, model):
        return (
            f"Not started: the cost cap is {usd_text(cap)}, and {model} has no list price and no price set for it "
            "in this run, so the cap cannot be kept. Set its price per million tokens under Cost cap and price, "
            "or set the cost cap to 0 (no cap)."
        )
    spend = spend_by_judge(store, run["id"])
    earlier = run_cost(spend, prices=run_prices(run))
    if cap is not None and earlier.unpriced:
        models = ", ".join(str(model) for model in earlier.unpriced if model) or "a judge the outcomes do not record"
        return (
            f"Not started: the cost cap is {usd_text(cap)}, and the cost of what the run spent before is "
            f"{earlier.unknown_text()}, so the cap cannot be kept. Set the cost cap to 0 (no cap), or resume with "
            f"the judge of {models} and set its price per million tokens under Cost cap and price."
        )
    first = _first_item_left(store, run["id"], [s.id for s in scorers], retry_failed=retry_failed)
    bound = None if first is None else estimate_run([first], scorers, price=run_prices(run).get(model))
    tokens_field = "the sidebar's Max output tokens per call, resuming with the sidebar's judge"
    refusal = cost_cap_refusal(
        cap,
        None if bound is None else bound.call_bound_usd,
        earlier.total_usd or 0.0,
        cap_field="Max cost in USD, under Cost cap and price",
        tokens_field=tokens_field,
    ) or token_cap_refusal(
        caps.max_total_tokens,
        None if bound is None else bound.call_bound_tokens,
        sum(s.prompt_tokens + s.completion_tokens for s in spend),  # as run_evals counts them
        cap_field="Max total tokens, under Cost cap and price",
        tokens_field=tokens_field,
    )
    return f"Not started: {refusal[:1].lower()}{refusal[1:]}" if refusal else None


def _first_item_left(store: Store, run_id: str, scorer_ids: list[str], *, retry_failed: bool) -> EvalItem | None:
    """The run's first item that some scorer of ``scorer_ids`` has no outcome for (or, with ``retry_failed``, a
    failed one): the item a resume scores first, alone (:func:`scorers.run_evals`); None when none is left."""
    done: dict[int, int] = {}
    for row in store.results(run_id):
        if row["scorer_id"] in scorer_ids and not (retry_failed and ScoreStatus(row["status"]).retryable):
            done[row["item_index"]] = done.get(row["item_index"], 0) + 1
    index = 0
    while done.get(index, 0) == len(scorer_ids):
        index += 1
    rows = store.items(run_id, index)  # none past the last item
    return EvalItem(rows[0]["item_id"], rows[0]["payload"], rows[0]["groups"], rows[0]["columns"]) if rows else None


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


def _judges_text(store: Store, run: dict[str, Any], table: RunTable) -> str:
    """ " · judge M" for the run's judge, or every judge its outcomes were made by when a resume or retry used others."""
    started = run.get("judge") or {}
    used = run_judges(store, table)[0]
    if all((model, url) == (started.get("model"), started.get("baseUrl")) for model, url, _ in used):
        return f" · judge {started['model']}" if started.get("model") else ""
    return " · judges: " + judges_text(used)


def render_run(store: Store, run_id: str, *, key: str) -> None:
    """A stored run: status, resume controls, aggregates, distributions, filtered rows, drill-down and exports.

    Args:
        store: the database.
        run_id: the run to show.
        key: prefix of every widget and chart key (one per place the view is shown).
    """
    preload_components()  # for the Distributions tab, once this run is over
    try:
        table = run_table(store, run_id)
    except KeyError:
        st.warning(f"Run {run_id} is no longer in the store (it was deleted).")
        return
    try:
        run = store.get_run(run_id)  # fresh: the status and stop reason change without a new outcome
    except KeyError:
        st.warning(f"Run {run_id} is no longer in the store (it was deleted).")
        return
    key = f"{key}_{run_id}"
    options = stored_scorer_options(run)
    names = {sid: scorer_label(sid, options.get(sid)) for sid in table.scorer_ids}
    job = jobs.running_for(jobs.run_key(run_id))
    scoring_now = job is not None or run["status"] == "running"

    st.subheader(run["name"])
    st.caption(
        md_escape(
            f"Run {run_id} · dataset {run['dataset_name']} · started {str(run['created_at'])[:19].replace('T', ' ')} "
            f"UTC · scorers {', '.join(names.values())}" + _judges_text(store, run, table)
        )
    )
    stored = len(table.results)
    n_failed = int((table.results["status"] != ScoreStatus.SCORED.value).sum())
    _render_status(run, table.n_items * len(table.scorer_ids), stored, n_failed, scoring_now)
    skipped = (run.get("config") or {}).get("skippedAtLoad")
    if skipped:
        more = skipped["count"] - len(skipped["first"])
        st.warning(
            f"{skipped['count']} record(s) of the file could not be loaded, so they are not in this run: "
            + md_escape("; ".join(skipped["first"]))
            + (f"; and {more} more." if more else ".")
        )
    if job is not None:
        render_job_progress(job.id, key=f"{key}_job")
    if not scoring_now:
        _render_resume(store, run, items_left(table), items_left(table, retry_failed=True), key)

    prompt, completion, calls, requests, cost = run_usage(store, table)
    # The tiles as wide as their values, wrapping onto a second row when the window is narrow: six equal columns
    # cut a small cost ("$0.000…" for $0.000903) at 1400 px.
    tiles = st.container(horizontal=True, gap="medium")
    columns = [tiles.container(width="content") for _ in range(6)]
    columns[0].metric("Items", table.n_items)
    columns[1].metric("Outcomes scored", stored - n_failed)
    columns[2].metric(
        "Not scored",
        n_failed,
        help="Failed outcomes and those with a missing or invalid input: counted apart, never as a score of 0.",
    )
    if (run.get("config") or {}).get("batch_api"):
        sent = (
            f"{requests:,} Batch API request line{'' if requests == 1 else 's'} sent (a line sent again after its "
            "batch expired counts again, a re-ask sent live counts one)"
        )
    else:
        sent = (
            f"{requests:,} HTTP request{'' if requests == 1 else 's'} to the judge (failed ones and retries included, "
            "as Max judge calls counts them)"
        )
    columns[3].metric(
        "Judge tokens",
        f"{prompt + completion:,}",
        help=f"{prompt:,} prompt + {completion:,} completion tokens in {calls:,} judge repl"
        f"{'y' if calls == 1 else 'ies'}, of {sent}; cached replies cost nothing.",
    )
    # While scoring, the judge calls in flight and the outcomes not yet written cost what their judge costs:
    # unknown when it has no price (the job's judge; a run scored elsewhere: the run's own judge).
    scoring_model = (job_judge_model(job.id) if job is not None else None) or (run.get("judge") or {}).get("model")
    unpriced_now = scoring_model if scoring_now and scoring_model and not has_price(run, scoring_model) else None
    unknown_now = f"what {unpriced_now} is scoring now (no list price, and no price set for it)" if unpriced_now else ""
    # The tile holds the known part (a "$X + unknown" was cut); what is unknown is said right under it, in the delta.
    unknown_parts = [
        f"{n:,} outcome{'' if n == 1 else 's'} of {model or 'a judge the outcome does not record'}"
        for model, n in (cost.unpriced.items() if cost is not None else ())
    ] + ([f"what {unpriced_now} is scoring now"] if unpriced_now else [])
    if cost is None:
        cost_value = "—"
    else:
        cost_value = usd_text(cost.usd) if cost.priced or not unknown_parts else "unknown"
    columns[4].metric(
        "Cost",
        cost_value,
        delta=(("+ unknown for " if cost_value != "unknown" else "for ") + "; ".join(unknown_parts))
        if unknown_parts
        else None,
        delta_color="off",
        delta_arrow="off",
        help="Actual judge cost, each outcome at the price of the judge model that made it: the list price "
        "(genai-prices, offline), or the price set for the run for its own judge; 'unknown' where neither is "
        "known, never $0 and never another model's price."
        + (f" Unknown here: {cost.unknown_text().removeprefix('unknown for ')}." if cost and cost.unpriced else "")
        + (f" Unknown: {unknown_now}." if unknown_now else ""),
    )
    columns[5].metric(
        "Cache hits",
        f"{int(table.results['cached'].sum()):,}",
        help="Outcomes whose judge reply came from the cache: no call, no tokens, no cost. "
        "Marked 'cached' in the rows table.",
    )
    if cost is not None and (cost.unpriced or unpriced_now):
        st.caption(
            md_escape(
                f"Judge cost: {usd_text(cost.usd)} for {cost.priced:,} outcome(s) at their judges' prices, "
                if cost.priced
                else "Judge cost: "
            )
            + md_escape("; ".join(filter(None, [cost.unknown_text(), unknown_now and "unknown for " + unknown_now])))
            + "."
        )
    not_scored = not_scored_summary(table.results)  # every not-scored status, counted
    if not_scored:
        missing = bool((table.results["status"] == ScoreStatus.MISSING_INPUT.value).any())
        st.warning(
            not_scored
            + (
                " Missing input: the row lacks a field the scorer requires (each row names it); it is never "
                "compared with another field instead."
                if missing
                else ""
            )
            + " Each row's status and message say why."
        )
    if not stored:
        st.info("No outcome has been stored for this run yet.")
        return
    render_results(store, table, names, options, key)


def _render_status(run: dict[str, Any], expected: int, stored: int, n_failed: int, scoring_now: bool) -> None:
    missing = expected - stored
    status = run["status"]
    note = run.get("stop_reason")
    if scoring_now:
        where = "" if jobs.running_for(jobs.run_key(run["id"])) else " by another process (e.g. the command line)"
        n_items = run.get("n_items") or 0
        per_item = f": {n_items:,} items × {expected // n_items} scorers" if n_items and expected > n_items else ""
        st.info(
            f"Being scored now{where}: the progress bar counts items as they finish; the results below are the "
            f"outcomes stored when this view was drawn ({stored:,} of {expected:,}{per_item}, written in batches), "
            "and everything once the run ends."
        )
    elif status == RunStatus.COMPLETED.value and not n_failed:
        st.success(f"Completed: all {expected} outcomes scored.")
    elif status == RunStatus.COMPLETED.value:
        st.warning(
            f"Completed with {n_failed} outcome(s) not scored; see the status and error columns. "
            "Retry failed items re-sends those that failed at the judge; one with a missing or invalid "
            "input would come out the same and is not retried."
        )
    elif status == RunStatus.FAILED.value:
        st.error(
            f"The run stopped on an unexpected error; {stored} of {expected} outcomes are stored. "
            "Resume continues where it stopped."
        )
    else:
        what = run_status_label(status)
        st.warning(
            f"{what}: {stored} of {expected} outcomes stored, {missing} still to do. "
            + (md_escape(note) + " " if note else "")
            + "Resume scores only what is missing."
        )


RUN_JUDGE, SIDEBAR_JUDGE = "with the run's judge", "with the sidebar's judge"


def _sidebar_settings() -> Any:
    try:
        return judge_settings()
    except ScorerError:
        return None


def _render_resume(store: Store, run: dict[str, Any], left: int, left_with_failed: int, key: str) -> None:
    failed_items = left_with_failed - left
    if not left and not failed_items:
        return
    config = run.get("config") or {}
    col_resume, col_retry, col_note = st.columns([1, 1, 2])
    # Each button only when it has something to do (a completed run with failures offers only Retry).
    resume = bool(left) and col_resume.button(
        f"Resume ({left} item{'' if left == 1 else 's'} left)", key=f"{key}_resume", icon=":material/play_arrow:"
    )
    retry = bool(failed_items) and col_retry.button(
        f"Retry failed items ({failed_items})",
        key=f"{key}_retry",
        icon=":material/replay:",
        help="Scores again the items a judge or its API failed on. Items not scored for a missing or invalid "
        "input are not retried: the run's stored input would give the same outcome.",
    )
    stored = run.get("judge") or {}
    which = RUN_JUDGE
    if stored:
        which = col_note.radio(
            "Judge for the items left",
            (RUN_JUDGE, SIDEBAR_JUDGE),
            key=f"{key}_which_judge",
            horizontal=True,
            help="The run's judge keeps its results comparable and lets the cache answer unchanged calls; "
            "the sidebar's judge rescues a run started with a wrong URL or model.",
        )
        sidebar = _sidebar_settings()
        chosen = (
            f"{stored.get('model')} at {stored.get('baseUrl')}"
            if which == RUN_JUDGE
            else (f"{sidebar.model_name} at {sidebar.endpoint}" if sidebar else "the sidebar's (not valid yet)")
        )
        col_note.caption(
            f"Will use {md_escape(chosen)}, with the API key the sidebar names (typed there, secrets or "
            "environment). Finished outcomes are never scored again; each result records the judge that made it."
        )
    caps, price, prefix = None, None, None
    model = (sidebar.model_name if sidebar else None) if which == SIDEBAR_JUDGE else stored.get("model")
    if model:
        limits = run_limits(run, model)
        with st.expander("Cost cap and price"):
            prefix = f"{key}_resume_{model}"  # per model: the fields show the price recorded for the judge chosen
            # The client of the judge chosen retries a failed request its max_retries times (the run's as recorded).
            retries = (sidebar.max_retries if sidebar else None) if which == SIDEBAR_JUDGE else stored.get("maxRetries")
            caps, price = budget_form(
                prefix,
                limits["budget"],
                limits["price"],
                max_retries=JudgeSettings.max_retries if retries is None else retries,
            )
            st.caption(
                f"The price is for {md_escape(model)}'s outcomes. Resume and Retry store the caps and the price "
                "with the run: its Cost here, the report and a later resume use them."
            )
    if not (resume or retry):
        return
    if problem := budget_problem(caps or BudgetCaps(), None, price, prefix):
        st.error(problem)
        return
    if config.get("batch_api") and (
        problem := batch_api_caps_problem(caps or BudgetCaps.from_dict(config.get("budget")))
    ):
        st.error(problem)
        return
    try:
        current = judge_settings() if stored else None
        settings = (resume_settings(run, current) if which == RUN_JUDGE else current) if stored else None
        # A run started bypassing the cache keeps bypassing it, as the CLI's resume does; the sidebar's can add it.
        cache = None if config.get("cache") is False else judge_cache(store)
        scorers = scorers_for_run(run, settings, cache=cache)
    except ScorerError as exc:
        st.error(str(exc))
        return
    problem = check_judges(scorers)
    if problem:
        st.error(problem)
        return
    if caps is not None:  # what the resume stores with the run (the job's run_evals reads it back)
        run = {**run, "config": limits_config(run, model, budget=caps, price=price, list_price=price is None)}
    if problem := cap_problem(store, run, scorers, retry_failed=retry):  # refused before anything is sent
        st.error(md_escape(problem))
        return
    if caps is not None and run["config"] != (store.get_run(run["id"]).get("config") or {}):
        store.set_run_config(run["id"], run["config"])
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
