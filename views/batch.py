"""Batch page: load a dataset, map its columns, choose scorers, run them over every row, explore the results."""

from __future__ import annotations

import functools
import hashlib
from typing import Any

import streamlit as st

from dashboard.batch import (
    CONFIRM_ABOVE_CALLS,
    CONFIRM_ABOVE_USD,
    DEFAULT_CONCURRENCY,
    DEFAULT_ITEM_TIMEOUT_S,
    ROLE_LABELS,
    SAMPLE_DATASETS,
    build_items,
    create_batch_run,
    limit_responses,
    long_responses,
    needs_confirmation,
    scorer_preview,
)
from dashboard.budget import budget_form, budget_problem, price_record
from dashboard.dataset_picker import pick_dataset, warn_shared_columns
from dashboard.layout import (
    RUN_PARAM,
    follow_run_link,
    kept_in_session,
    setup_page,
    show_run_link,
    warn_missing_run_link,
)
from dashboard.options import option_widget
from dashboard.results import md_escape
from dashboard.run_explorer import NO_VALUE
from dashboard.run_view import check_judges, get_store, job_running, render_job_panel, render_run, start_job
from dashboard.settings import judge_cache, judge_settings
from scorers import (
    DatasetError,
    LoadedDataset,
    ScorerError,
    create_scorer,
    estimate_run,
    guess_columns,
)
from scorers.catalogue.registry import resolve_options, scorer_label, scorer_spec, scorer_specs, unmapped_fields
from scorers.core.budget import (
    BudgetCaps,
    batch_api_caps_problem,
    cost_cap_refusal,
    cost_cap_warning,
    token_cap_refusal,
    token_cap_warning,
)
from scorers.core.errors import ScoreStatus, outcome_status_label
from scorers.core.pricing import BATCH_DISCOUNT, Price, usd_text
from scorers.runs.datasets import (
    ROLES,
    blank_response_note,
    cell_text,
    not_text_notices,
    shared_columns,
    skipped_record,
    unused_system_column,
)
from scorers.runs.runner import DEFAULT_MAX_CONSECUTIVE_FAILURES

SESSION = {"persist_state": "session"}  # keep the page's choices when the user visits another page
# Roles whose guessed column changes what the judge sees: used only once the user confirms.
CONFIRM_ROLES = ("system", "context", "tool_calls", "messages")


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
    columns = [*st.columns(4), *st.columns(4)]  # two rows, so the controls show whole column names
    for column, role in zip(columns, ROLES, strict=False):
        label = ROLE_LABELS.get(role, role.replace("_", " ").capitalize())
        required = role == "output"  # or a conversation column ending with the reply
        guess = guessed.get(role)
        chosen = column.selectbox(
            label + (" *" if required else ""),
            options,
            index=options.index(guess),
            format_func=lambda c: "— none —" if c is None else c,
            key=f"batch_map_{role}_{token}",
            help="Guessed from the column name." if guess is not None else None,
            **SESSION,
        )
        # A guess that changes what the judge sees is used only once confirmed.
        if role in CONFIRM_ROLES and chosen is not None and chosen == guess:
            confirmed = column.checkbox(
                f"Use {chosen!r} as the {label.lower()} (guessed)",
                value=False,
                key=f"batch_confirm_{role}_{token}",
                **SESSION,
            )
            if not confirmed:
                column.caption("Guessed from its name: not used until confirmed.")
                chosen = None
        mapping[role] = chosen
    warn_shared_columns({ROLE_LABELS.get(role, role.replace("_", " ")).lower(): c for role, c in mapping.items()})
    system = unused_system_column(dataset.columns, mapping)
    if system is not None:
        st.info(
            f"Column {system!r} is not used: a column of that name is never taken as the system message, "
            "as it often names the system under test. If it holds the system prompt, choose it under System message.",
            icon=":material/info:",
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
    # As the scorers read them: a JSON number, boolean, list or object as its text (mixed kinds in a column, too).
    st.dataframe(
        {label: head[column].map(cell_text).tolist() for label, column in chosen.items()},
        hide_index=True,
        placeholder=NO_VALUE,
    )
    st.caption(
        f'The first {len(head)} of {len(dataset.frame)} rows, as mapped; "{NO_VALUE}": the row has no value there.'
    )


def _defaults(mapping: dict[str, str | None]) -> list[str]:
    """The scorers pre-selected: prompt alignment when a prompt is mapped (or a conversation, which holds one),
    textual difference when a ground truth is (never response-vs-prompt by default)."""
    wanted = {"prompt-alignment": ("input", "system", "messages"), "textual-difference": ("ground_truth",)}
    return [sid for sid, roles in wanted.items() if any(mapping.get(r) for r in roles)]


def _scorer_choice(mapping: dict[str, str | None]) -> dict[str, dict[str, Any]]:
    chosen = st.multiselect(
        "Scorers",
        list(scorer_specs(store)),
        default=_defaults(mapping),
        format_func=lambda sid: scorer_spec(sid, store).name,
        key="batch_scorers",
        **SESSION,
    )
    options: dict[str, dict[str, Any]] = {}
    for sid in chosen:
        spec = scorer_spec(sid, store)
        st.markdown(f"**{spec.name}** — {md_escape(spec.measures)}")
        st.caption(
            md_escape(
                f"Reads: {', '.join(spec.reads or spec.inputs)}; requires: {', '.join(spec.requires) or 'nothing'}"
                f". Formula: {spec.formula}"
            )
        )
        values: dict[str, Any] = {}
        if spec.options:
            columns = st.columns(min(4, len(spec.options)))
            for n, option in enumerate(spec.options):
                values[option.name] = option_widget(
                    columns[n % len(columns)], option, key=f"batch_opt_{sid}_{option.name}"
                )
        options[sid] = values
    return options


def _limits_form(batch_api: bool) -> tuple[dict[str, Any], Price | None, int, str]:
    """Budget caps, the judge's price, the pause after K failures and the long-response limit.

    Opened once the Batch API is on with a cap set (the run is refused, and the caps are shown where they can be
    removed), and kept open for the session: the user may close it.
    """
    if batch_api and any(st.session_state.get(f"batch_{cap}") for cap in ("max_calls", "max_tokens", "max_cost")):
        st.session_state["batch_limits_open"] = True
    with st.expander("Budget, price and limits", expanded=st.session_state.get("batch_limits_open", False)):
        caps, price = budget_form("batch")
        k_col, _ = st.columns(2)
        k = k_col.number_input(
            "Pause after this many judge failures in a row",
            min_value=1,
            max_value=1000,
            value=DEFAULT_MAX_CONSECUTIVE_FAILURES,
            key="batch_k",
            help="Connection, auth or 5xx failures in a row pause the run as judge_unreachable (resumable); "
            "the items they hit are left to do, not recorded as failed. As many unusable judge replies in a row "
            "(invalid output after the re-ask, or refusals) pause it as judge_replies_unusable (those are recorded "
            "as failed: they were paid for).",
            **SESSION,
        )
        l1, l2 = st.columns(2)
        long_limit = l1.number_input(
            "Longest response to send (characters, 0: no limit)", min_value=0, step=1000, key="batch_long_limit"
        )
        long_action = l2.radio("Longer responses", ("truncate", "skip"), key="batch_long_action", horizontal=True)
    limits = {
        "budget": caps.to_dict(),
        "price": price_record(price),
        "max_consecutive_failures": int(k),
    }
    return limits, price, int(long_limit), long_action


def _estimate(items: list[Any], scorers: list[Any], batch_api: bool, price: Price | None) -> Any:
    """:func:`scorers.estimate_run` with the cache probed, computed once per dataset, scorers and judge."""
    key = (
        st.session_state.get("batch_dataset", ("",))[0],
        len(items),
        repr([(s.id, getattr(s, "settings", None), getattr(s, "cache", None) is not None) for s in scorers]),
        repr(st.session_state.get("batch_scorers")),
        repr({k: v for k, v in st.session_state.items() if str(k).startswith(("batch_opt_", "batch_map_"))}),
        batch_api,
        price,
        st.session_state.get("batch_long_limit"),
        st.session_state.get("batch_long_action"),
        # A run of this session fills the judge cache: looked up again once it starts and once it ends.
        (st.session_state.get("batch_run_id"), job_running()),
    )
    return kept_in_session(
        "batch_estimate", key, lambda: estimate_run(items, scorers, batch_api=batch_api, probe_cache=True, price=price)
    )


# Session key: (run id, judge calls, cost in USD or None when unknown) as estimated when Run started that run.
# (A comment, not a docstring: a bare string in a page script is written on the page by Streamlit's magic.)
RUN_ESTIMATE = "batch_run_estimate"


def _estimate_after_run(estimate: Any, dataset_token: str) -> str | None:
    """What the estimate is once this session's run of the dataset shown (``dataset_token``) has filled the
    judge cache, and what that run was estimated at before it started (its own Cost, under Results, is what it
    spent); None before such a run."""
    run_id = st.session_state.get("batch_run_id")
    before = st.session_state.get(RUN_ESTIMATE)
    if before is None or before[0] != run_id or st.session_state.get("batch_run_dataset") != dataset_token:
        return None
    _, calls, cost = before
    now = (
        f"all {estimate.cached:,} judge calls are in the judge cache, so it would cost $0.00"
        if not estimate.judge_calls
        else f"{estimate.cached:,} of its judge calls are in the judge cache and cost nothing"
    )
    return (
        f"Estimate for a new run now: {now}. Run {run_id} was estimated at "
        f"{'an unknown cost' if cost is None else usd_text(cost)} for {calls:,} judge calls before it started; "
        "what it spent is its Cost under Results."
    )


def _items(dataset: LoadedDataset, mapping: dict[str, str | None], group_by: list[str]) -> tuple[Any, str | None]:
    """(the run's items, None), or (None, why they cannot be built) when the mapping does not fit the data."""
    try:
        return build_items(dataset, mapping, group_by), None
    except DatasetError as exc:
        return None, str(exc)


setup_page()
st.title("Batch")
st.caption(
    "Score every row of a dataset. Results are saved as items finish, so a stopped run can be resumed "
    "and reopened in History."
)
store = get_store()
panel_shown = False
# The stored runs' ids, read once and only when the URL names a run (?run=ID; list_runs counts every run's outcomes).
linkable = [r["id"] for r in store.list_runs()] if st.query_params.get(RUN_PARAM) else []
warn_missing_run_link(linkable, "no stored run is shown: open one from History")

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
    if not mapping["output"] and not mapping.get("messages"):
        st.warning("Map the response column (marked *), or a conversation (messages) column, to continue.")
    else:
        _preview(dataset, mapping, group_by)
        # JSON values that are not text (numbers, booleans, lists, objects) are scored as their text: said here.
        for notice in kept_in_session(
            "batch_not_text", (token, repr(mapping)), lambda: not_text_notices(dataset, mapping)
        ):
            st.warning(notice, icon=":material/text_fields:")
        items_key = (token, repr(mapping), repr(group_by))  # built again only when the data or mapping changes
        items, items_error = kept_in_session("batch_items", items_key, lambda: _items(dataset, mapping, group_by))
        if items_error:
            st.error(items_error)

    st.header("3. Scorers and run", divider="gray")
    scorer_options = _scorer_choice(mapping)
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

    limits, price, long_limit, long_action = _limits_form(batch_api)

    scorer_options = {
        sid: resolve_options(sid, opts, ground_truth_mapped=bool(mapping.get("ground_truth")))
        for sid, opts in scorer_options.items()
    }
    scorers, problem, settings = [], None, None
    if scorer_options:
        try:
            if any(scorer_spec(sid, store).uses_judge for sid in scorer_options):
                settings = judge_settings()
            scorers = [
                create_scorer(sid, opts, settings=settings, cache=judge_cache(store), store=store)
                for sid, opts in scorer_options.items()
            ]
            problem = check_judges(scorers)
        except ScorerError as exc:
            problem = str(exc)
        # A conversation carries the prompt and system turns, and the response when no response column is mapped
        # (its final message, when that is the assistant's reply: scorers.core.base.split_conversation).
        conversation = mapping.get("messages")
        mapped = {**mapping, **{role: mapping[role] or conversation for role in ("input", "system", "output")}}
        unmapped = unmapped_fields(scorer_options, mapped, store)
        if unmapped:
            problem = "; ".join(
                f"{', '.join(names)} need(s) the {ROLE_LABELS.get(f, f).lower()} column: map it above"
                for f, names in unmapped.items()
            )
    else:
        problem = "Choose at least one scorer."
    shared = shared_columns({ROLE_LABELS[role].lower(): c for role, c in mapping.items() if role != "id"})
    if shared:  # the scorers would read one text as two (a response against itself scores 1)
        problem = " ".join(shared) + " Each role needs its own column: choose another above to run."

    run_items, long_record = items, {}
    if items is not None and long_limit:
        n_long = kept_in_session("batch_long", (items_key, long_limit), lambda: len(long_responses(items, long_limit)))
        if n_long:
            st.warning(
                f"{n_long} response(s) are longer than {long_limit:,} characters: they will be "
                + ("cut to that length (recorded with the run, per item)." if long_action == "truncate" else "skipped.")
            )
            run_items, long_record = kept_in_session(
                "batch_limited",
                (items_key, long_limit, long_action),
                lambda: limit_responses(items, long_limit, long_action),
            )
    if run_items is not None and scorers:
        blank_key = (items_key, long_limit, long_action, repr(scorer_options))
        blank_note = kept_in_session(
            "batch_blank", blank_key, lambda: blank_response_note([it.payload for it in run_items], scorers)
        )
        if blank_note:
            st.warning(blank_note)
    confirm_needed = False
    if run_items is not None and scorers:
        estimate = _estimate(run_items, scorers, batch_api, price)
        confirm_needed = needs_confirmation(estimate.judge_calls, estimate.cost_usd)
    if items and scorers and not problem:
        st.markdown("**Preview: the first rows as each scorer will read them**")
        st.caption(f'"{NO_VALUE}": a field the scorer cannot read from the row; its status says why.')
        for scorer in scorers:
            st.caption(md_escape(scorer_label(scorer.id, scorer_options.get(scorer.id))))
            preview = kept_in_session(
                f"batch_preview_rows_{scorer.id}",
                (items_key, repr(scorer_options.get(scorer.id))),
                functools.partial(scorer_preview, items, scorer),
            )
            st.dataframe(preview, hide_index=True, placeholder=NO_VALUE, key=f"batch_preview_{scorer.id}")
        judged = [s for s in scorers if hasattr(s, "render_prompt")]
        if judged and st.toggle("Show the judge prompt for the first row", key="batch_show_prompt"):
            for scorer in judged:
                st.markdown(f"**{md_escape(scorer.name)}**")
                try:
                    messages = scorer.render_prompt(items[0].payload)
                except ScorerError as exc:
                    st.warning(f"Not sent: {exc}")
                    continue
                for message in messages:
                    st.caption(message["role"])
                    st.code(message["content"], language=None, wrap_lines=True)

    cap_refused = None  # a cost or token cap that cannot hold the first judge call (cost_cap_refusal ...)
    if run_items is not None and scorers:  # the estimate above: cache probed, computed once per inputs
        if estimate.cached and (note := _estimate_after_run(estimate, token)):
            st.caption(note)
        e1, e2, e3, e4 = st.columns(4)
        e1.metric("Items", len(run_items))
        e2.metric(
            "Judge calls (est.)",
            f"{estimate.judge_calls:,}",
            help=f"{estimate.cached:,} item × scorer outcome(s) are answered from the cache: free, not counted.",
        )
        e3.metric(
            "Tokens (est.)",
            f"{estimate.prompt_tokens + estimate.completion_tokens:,}",
            help=f"{estimate.prompt_tokens:,} prompt + {estimate.completion_tokens:,} completion tokens, "
            "at 4 characters a token. Replies already in the cache cost nothing.",
        )
        if estimate.cached:
            st.caption(f"{estimate.cached:,} outcome(s) are already in the judge cache: they cost nothing.")
        if estimate.too_long:
            st.warning(
                f"{estimate.too_long:,} outcome(s) have a judge prompt longer than the model's context window: "
                "they will not be sent, and are stored as not scored "
                f"({outcome_status_label(ScoreStatus.EXCEEDS_CONTEXT.value)}), not counted above. "
                "Shorten the texts (Longest response to send), or choose a model with a larger window."
            )
        # A price refused below (negative, or half set) gives no cost: the list price's would be shown for it.
        bad_price = settings is not None and budget_problem(BudgetCaps(), None, price, "batch") is not None
        cost = None if bad_price else estimate.cost_usd
        all_cached = settings is not None and estimate.cached > 0 and not estimate.judge_calls
        e4.metric(
            "Cost (est.)",
            "—"
            if bad_price
            else ("$0 (no judge)" if settings is None else ("unknown" if cost is None else usd_text(cost))),
            delta="the price is not valid"
            if bad_price
            else (
                f"all {estimate.cached:,} calls are in the judge cache"
                if all_cached
                else (
                    None
                    if not batch_api or cost is None or not estimate.live_cost_usd
                    else f"-{usd_text(estimate.live_cost_usd - cost)} with the Batch API"
                )
            ),
            delta_color="off" if bad_price or all_cached else "inverse",
            delta_arrow="off" if bad_price or all_cached else "auto",
            help="List prices of genai-prices (offline), or the price you set; 'unknown' when neither is known."
            + (f" Batch API: {BATCH_DISCOUNT:.0%} off the list price." if batch_api else "")
            + (" No judge call is left to make: $0.00 whatever the model's price." if not estimate.judge_calls else ""),
        )
        # With the Batch API a cap refuses the run (below): what the cap would leave out is beside the point.
        if settings is not None and not batch_api:
            max_cost, max_tokens = limits["budget"]["max_cost_usd"], limits["budget"]["max_total_tokens"]
            tokens_field = "the sidebar's Max output tokens per call"
            cap_refused = cost_cap_refusal(
                max_cost,
                estimate.call_bound_usd,
                cap_field="Max cost in USD, under Budget, price and limits",
                tokens_field=tokens_field,
            ) or token_cap_refusal(
                max_tokens,
                estimate.call_bound_tokens,
                cap_field="Max total tokens, under Budget, price and limits",
                tokens_field=tokens_field,
            )
            warnings = (
                cost_cap_warning(max_cost, cost, estimate.judge_calls, call_bound_usd=estimate.call_bound_usd),
                token_cap_warning(
                    max_tokens,
                    estimate.prompt_tokens + estimate.completion_tokens,
                    estimate.judge_calls,
                    call_bound_tokens=estimate.call_bound_tokens,
                ),
            )
            for warning in () if cap_refused else filter(None, warnings):
                st.warning(warning)
    if batch_api and settings is None and scorers:
        problem = "The Batch API carries judge calls: choose at least one LLM-judged scorer, or switch it off."
    caps = BudgetCaps.from_dict(limits["budget"])
    refused = batch_api and batch_api_caps_problem(caps)
    if refused:
        refused += " The caps are under Budget, price and limits (opened above)."
    problem = budget_problem(caps, settings, price, "batch") or refused or cap_refused or problem
    if problem:
        st.error(problem)
    confirmed = True
    if confirm_needed and not problem:
        confirmed = st.checkbox(
            f"This run is large (more than {CONFIRM_ABOVE_CALLS:,} judge calls or ${CONFIRM_ABOVE_USD:g} "
            "estimated). I want to run it.",
            key="batch_confirm",
        )
    busy = job_running()
    clicked = st.button(
        "Run",
        type="primary",
        key="batch_run",
        icon=":material/play_arrow:",
        disabled=busy or run_items is None or problem is not None or not confirmed,
        help="A run is already being scored in this session." if busy else None,
    )
    if clicked and run_items is not None and not problem:
        run_id = create_batch_run(
            store,
            items=run_items,
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
            limits={
                **limits,
                **long_record,
                "cache": judge_cache(store) is not None,
                **skipped_record(dataset.skipped),
            },
        )
        start_job(store, run_id, scorers, concurrency=int(concurrency), item_timeout=float(timeout) or None)
        st.session_state["batch_run_id"] = run_id
        st.session_state["batch_run_dataset"] = token
        st.session_state[RUN_ESTIMATE] = (run_id, estimate.judge_calls, cost)  # the estimate shown when Run was pressed
        st.rerun()
    if job_running():  # the progress right under the Run button, in view after clicking it
        render_job_panel()
        panel_shown = True

if not job_running():  # ?run=ID shows that stored run here
    if follow_run_link("batch_run_id", linkable):
        st.session_state.pop("batch_run_dataset", None)  # a stored run, not scored from the dataset picked here
if job_running() or st.session_state.get("batch_run_id"):
    st.header("4. Results", divider="gray", anchor="results")
    if not panel_shown:
        render_job_panel()
    if st.session_state.get("batch_run_id"):
        if dataset is not None and st.session_state.get("batch_run_dataset") != st.session_state["batch_dataset"][0]:
            st.info(
                f"These are the results of run {st.session_state['batch_run_id']}, not of {dataset.source_name} "
                "chosen above: press Run to score it.",
                icon=":material/history:",
            )
        show_run_link(st.session_state["batch_run_id"])
        render_run(store, st.session_state["batch_run_id"], key="batch")
