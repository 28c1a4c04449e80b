"""Batch page: load a dataset, map its columns, choose scorers, run them over every row, explore the results."""

from __future__ import annotations

import hashlib
from typing import Any

import streamlit as st

from dashboard.batch import (
    DEFAULT_CONCURRENCY,
    DEFAULT_ITEM_TIMEOUT_S,
    ROLE_LABELS,
    SAMPLE_DATASETS,
    build_items,
    create_batch_run,
)
from dashboard.dataset_picker import pick_dataset
from dashboard.layout import RUN_PARAM, follow_run_link, setup_page, show_run_link
from dashboard.options import option_widget
from dashboard.results import md_escape
from dashboard.run_view import check_judges, get_store, job_running, render_job_panel, render_run, start_job
from dashboard.settings import judge_settings
from scorers import (
    DatasetError,
    LoadedDataset,
    ScorerError,
    create_scorer,
    estimate_run,
    guess_columns,
)
from scorers.catalogue.registry import scorer_spec, scorer_specs
from scorers.core.pricing import BATCH_DISCOUNT
from scorers.runs.datasets import ROLES

SESSION = {"persist_state": "session"}  # keep the page's choices when the user visits another page


def _show_problems(dataset: LoadedDataset) -> None:
    st.caption(
        f"{dataset.source_name}: {len(dataset.frame)} rows loaded, {len(dataset.columns)} columns ({dataset.format})."
    )
    for warning in dataset.warnings:
        st.info(warning)
    if dataset.skipped:
        st.warning(f"{len(dataset.skipped)} record(s) of the file were not loaded and will not be scored.")
        with st.expander("Skipped records and why", expanded=len(dataset.skipped) <= 10):
            st.dataframe(
                [
                    {"where": (f"line {s.line}" if s.line is not None else f"row {s.row}"), "reason": s.reason}
                    for s in dataset.skipped
                ],
                hide_index=True,
            )


def _mapping(dataset: LoadedDataset, token: str) -> tuple[dict[str, str | None], list[str]]:
    guessed = guess_columns(dataset.columns)
    options: list[str | None] = [None, *dataset.columns]
    mapping: dict[str, str | None] = {}
    columns = st.columns(len(ROLES))
    for column, role in zip(columns, ROLES, strict=True):
        label = ROLE_LABELS.get(role, role.replace("_", " ").capitalize())
        required = role in ("input", "output")
        mapping[role] = column.selectbox(
            label + (" *" if required else ""),
            options,
            index=options.index(guessed.get(role)),
            format_func=lambda c: "— none —" if c is None else c,
            key=f"batch_map_{role}_{token}",
            **SESSION,
        )
    group_by = st.multiselect(
        "Group by (optional)",
        [c for c in dataset.columns if c not in mapping.values()],
        key=f"batch_groups_{token}",
        help="Columns to compare results by, e.g. a variant, prompt version or model column.",
        **SESSION,
    )
    return mapping, group_by


def _preview(dataset: LoadedDataset, mapping: dict[str, str | None], group_by: list[str]) -> None:
    chosen = {ROLE_LABELS.get(r, r): c for r, c in mapping.items() if c}
    chosen.update({f"Group: {g}": g for g in group_by})
    head = dataset.frame.head(5)
    st.dataframe({label: head[column].tolist() for label, column in chosen.items()}, hide_index=True)
    st.caption(f"The first {len(head)} of {len(dataset.frame)} rows, as mapped.")


def _scorer_choice() -> dict[str, dict[str, Any]]:
    chosen = st.multiselect(
        "Scorers",
        list(scorer_specs(store)),
        default=["prompt-alignment", "textual-difference"],
        format_func=lambda sid: scorer_spec(sid, store).name,
        key="batch_scorers",
        **SESSION,
    )
    options: dict[str, dict[str, Any]] = {}
    for sid in chosen:
        spec = scorer_spec(sid, store)
        st.markdown(f"**{spec.name}** — {md_escape(spec.measures)}")
        st.caption(md_escape(f"Reads: {', '.join(spec.inputs)}. Formula: {spec.formula}"))
        values: dict[str, Any] = {}
        if spec.options:
            columns = st.columns(min(4, len(spec.options)))
            for n, option in enumerate(spec.options):
                values[option.name] = option_widget(
                    columns[n % len(columns)], option, key=f"batch_opt_{sid}_{option.name}"
                )
        options[sid] = values
    return options


setup_page()
st.title("Batch")
st.caption(
    "Score every row of a dataset. Results are saved as items finish, so a stopped run can be resumed "
    "and reopened in History."
)
store = get_store()

st.header("1. Dataset", divider="gray")
dataset = pick_dataset(
    "batch",
    samples=SAMPLE_DATASETS,
    upload_help="UTF-8 text files; one row per response to score. Nothing is sent anywhere until you press Run.",
)
if dataset is not None:
    token = st.session_state["batch_dataset"][0]
    short = hashlib.sha256(token.encode()).hexdigest()[:8]
    _show_problems(dataset)

    st.header("2. Columns", divider="gray")
    mapping, group_by = _mapping(dataset, short)
    items = None
    if not mapping["input"] or not mapping["output"]:
        st.warning("Map the user prompt and the response columns (marked *) to continue.")
    else:
        _preview(dataset, mapping, group_by)
        try:
            items = build_items(dataset, mapping, group_by)
        except DatasetError as exc:
            st.error(str(exc))

    st.header("3. Scorers and run", divider="gray")
    scorer_options = _scorer_choice()
    left, right, name_col = st.columns(3)
    concurrency = left.number_input(
        "Concurrency",
        min_value=1,
        max_value=64,
        value=DEFAULT_CONCURRENCY,
        step=1,
        key="batch_concurrency",
        help="Items scored at once.",
        **SESSION,
    )
    timeout = right.number_input(
        "Per-item timeout (seconds)",
        min_value=0.0,
        max_value=3600.0,
        value=DEFAULT_ITEM_TIMEOUT_S,
        step=30.0,
        key="batch_timeout",
        help="An item taking longer is recorded as an API error. 0: no limit.",
        **SESSION,
    )
    run_name = name_col.text_input(
        "Run name (optional)", key="batch_run_name", placeholder=f"{dataset.source_name} <date>"
    )
    batch_api = st.toggle(
        "Use the provider's Batch API",
        key="batch_api",
        help="For very large runs: the judge requests go in files to /v1/batches instead of live calls. "
        f"{BATCH_DISCOUNT:.0%} off the price and a separate rate limit, but answers can take up to 24 hours. "
        "The batch ids are stored: stop the run, close the page, and resume it from History later.",
    )
    live_follow_ups = batch_api and (
        st.radio(
            "Re-ask invalid judge output",
            ("in a follow-up batch", "with a live call at once"),
            key="batch_api_reask",
            horizontal=True,
            help="A reply that does not match the schema is asked again once: in the next batch "
            "(cheaper) or live (sooner).",
        )
        == "with a live call at once"
    )

    scorers, problem, settings = [], None, None
    if scorer_options:
        try:
            if any(scorer_spec(sid, store).uses_judge for sid in scorer_options):
                settings = judge_settings()
            scorers = [
                create_scorer(sid, opts, settings=settings, cache=store, store=store)
                for sid, opts in scorer_options.items()
            ]
            problem = check_judges(scorers)
        except ScorerError as exc:
            problem = str(exc)
    else:
        problem = "Choose at least one scorer."

    if items is not None and scorers:
        estimate = estimate_run(items, scorers, batch_api=batch_api)
        e1, e2, e3, e4 = st.columns(4)
        e1.metric("Items", len(items))
        e2.metric("Judge calls (est.)", f"{estimate.judge_calls:,}")
        e3.metric(
            "Tokens (est.)",
            f"{estimate.prompt_tokens + estimate.completion_tokens:,}",
            help=f"{estimate.prompt_tokens:,} prompt + {estimate.completion_tokens:,} completion tokens, "
            "at 4 characters a token. Replies already in the cache cost nothing.",
        )
        cost = estimate.cost_usd
        e4.metric(
            "Cost (est.)",
            "$0 (no judge)" if settings is None else ("unknown" if cost is None else f"${cost:,.4f}"),
            delta=None
            if not batch_api or cost is None or not estimate.live_cost_usd
            else f"-${estimate.live_cost_usd - cost:,.4f} with the Batch API",
            delta_color="inverse",
            help="From the price table of common OpenAI models; 'unknown' for other models."
            + (f" Batch API: {BATCH_DISCOUNT:.0%} off the list price." if batch_api else ""),
        )
    if batch_api and settings is None and scorers:
        problem = "The Batch API carries judge calls: choose at least one LLM-judged scorer, or switch it off."
    if problem:
        st.error(problem)
    busy = job_running()
    clicked = st.button(
        "Run",
        type="primary",
        key="batch_run",
        icon=":material/play_arrow:",
        disabled=busy or items is None or problem is not None,
        help="A run is already being scored in this session." if busy else None,
    )
    if clicked and items is not None and not problem:
        run_id = create_batch_run(
            store,
            items=items,
            scorers=scorers,
            scorer_options=scorer_options,
            settings=settings,
            dataset_name=dataset.source_name,
            mapping=mapping,
            group_by=group_by,
            concurrency=int(concurrency),
            item_timeout=float(timeout) or None,
            name=run_name,
            batch_api=batch_api,
            live_follow_ups=live_follow_ups,
        )
        start_job(store, run_id, scorers, concurrency=int(concurrency), item_timeout=float(timeout) or None)
        st.session_state["batch_run_id"] = run_id
        st.rerun()

if not job_running():  # ?run=ID shows that stored run here
    follow_run_link("batch_run_id", [r["id"] for r in store.list_runs()] if st.query_params.get(RUN_PARAM) else [])
if job_running() or st.session_state.get("batch_run_id"):
    st.header("4. Results", divider="gray")
    render_job_panel()
    if st.session_state.get("batch_run_id"):
        show_run_link(st.session_state["batch_run_id"])
        render_run(store, st.session_state["batch_run_id"], key="batch")
