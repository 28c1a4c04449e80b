"""The Compare page's background job: generate (optional), then score into the store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd
import streamlit as st

from scorers import (
    EvalItem,
    JudgeSettings,
    Scorer,
    ScorerError,
    Store,
    estimate_run,
    run_evals,
)
from scorers.analysis.generate import (
    Variant,
    comparison_items,
    failed_generations,
    generate_responses,
    generation_costs,
)
from scorers.core.budget import (
    BudgetCaps,
    cost_cap_refusal,
    cost_cap_warning,
    token_cap_refusal,
    token_cap_warning,
)
from scorers.core.pricing import Price, usd_text
from scorers.runs import jobs

from ..budget import price_record
from ..jobs import remember, render_job_progress
from ..jobs import session_job as session_job_of
from ..run_explorer import NO_VALUE

JOB_SLOT = "compare"
"""This session's comparison job, in :func:`dashboard.jobs.session_job`."""

CAP_FIELDS = {"cost": "Max cost in USD, under Budget", "tokens": "Max total tokens, under Budget"}
"""Where the page's cost and token caps are raised, as :func:`scorers.core.budget.cost_cap_refusal` names them."""
TOKENS_FIELD = "the sidebar's Max output tokens per call"
"""Where the judge's max output tokens are set, as :func:`scorers.core.budget.cost_cap_refusal` names it."""


def cap_notes(
    items: Sequence[EvalItem], scorers: Sequence[Scorer], budget: BudgetCaps | None, price: Price | None
) -> tuple[str | None, list[str]]:
    """What the cost and token caps of ``budget`` mean for scoring ``items``, in Batch's words: (refusal, warnings).

    The refusal (:func:`scorers.core.budget.cost_cap_refusal`, :func:`~scorers.core.budget.token_cap_refusal`): a
    cap cannot hold the first judge call's reserved bound, so the run is not started. The warnings
    (:func:`scorers.core.budget.cost_cap_warning`, :func:`~scorers.core.budget.token_cap_warning`, only without a
    refusal): how many of the estimated judge calls each cap admits. None and no warning without a cost or token cap
    (then nothing is estimated); the estimate is Batch's (:func:`scorers.estimate_run`, the judge cache probed).
    """
    if budget is None or (budget.max_cost_usd is None and budget.max_total_tokens is None):
        return None, []
    estimate = estimate_run(items, scorers, probe_cache=True, price=price)
    cost, tokens = budget.max_cost_usd, budget.max_total_tokens
    refusal = cost_cap_refusal(
        cost, estimate.call_bound_usd, cap_field=CAP_FIELDS["cost"], tokens_field=TOKENS_FIELD
    ) or token_cap_refusal(
        tokens, estimate.call_bound_tokens, cap_field=CAP_FIELDS["tokens"], tokens_field=TOKENS_FIELD
    )
    if refusal:
        return refusal, []
    warnings = (
        cost_cap_warning(cost, estimate.cost_usd, estimate.judge_calls, call_bound_usd=estimate.call_bound_usd),
        token_cap_warning(
            tokens,
            estimate.prompt_tokens + estimate.completion_tokens,
            estimate.judge_calls,
            call_bound_tokens=estimate.call_bound_tokens,
        ),
    )
    return None, [warning for warning in warnings if warning]


@dataclass(frozen=True)
class GenerationPlan:
    """What to generate before scoring: the rows, the variants, and how items are built from them.

    Attributes:
        rows: the dataset rows (column → value), in order.
        item_ids: one id per row (the pairs' ``row_id``).
        variants: the variants, with distinct names.
        settings: endpoint, key and default sampling parameters (each variant's model replaces the model).
        input_col: the column the scorers judge the responses against (the user's question).
        ground_truth_col: the reference answer column, or None.
        system_col: the dataset column of the system message every variant is also judged
            against, or None (judged against the user prompt only).
        group_cols: dataset columns kept as groups for breakdowns.
    """

    rows: list[dict[str, Any]]
    item_ids: list[str]
    variants: list[Variant]
    settings: JudgeSettings
    input_col: str
    ground_truth_col: str | None = None
    system_col: str | None = None
    group_cols: tuple[str, ...] | list[str] = ()


def generation_record(responses: Sequence[Any]) -> dict[str, Any]:
    """What a stored comparison run keeps of its generation step (in ``config["generation"]``).

    Returns:
        ``{"responses", "cached", "prompt_tokens", "completion_tokens", "costs"}`` (costs:
        variant → USD or None when the model's price is unknown) and ``"failed"``: one
        ``{"row_id", "variant", "status", "error"}`` per response that was not generated.
    """
    return {
        "responses": len(responses),
        "cached": sum(bool(r.cached) for r in responses),
        "prompt_tokens": sum(r.usage.prompt_tokens for r in responses),
        "completion_tokens": sum(r.usage.completion_tokens for r in responses),
        "costs": generation_costs(responses),
        "failed": [
            {"row_id": r.item_id, "variant": r.variant.name, "status": r.status.value, "error": r.error}
            for r in failed_generations(responses)
        ],
    }


@dataclass
class CompareOutcome:
    """What a comparison job made: the stored run (None if nothing was scored) and the generation step."""

    run_id: str | None = None
    generation: dict[str, Any] | None = None


def start_compare_job(
    store: Store,
    scorers: Sequence[Scorer],
    scorer_options: Mapping[str, Mapping[str, Any]],
    *,
    items: Sequence[EvalItem] = (),
    plan: GenerationPlan | None = None,
    dataset_name: str,
    run_name: str | None = None,
    mapping: Mapping[str, Any] | None = None,
    config: Mapping[str, Any] | None = None,
    concurrency: int = 8,
    budget: BudgetCaps | None = None,
    price: Price | None = None,
) -> str:
    """Generate (optionally) and score a comparison as a background job of the server (:mod:`scorers.runs.jobs`).

    With a :class:`GenerationPlan`, every variant answers every row first; the responses
    that were generated become the items. Without one, ``items`` are scored as given.
    The items are then scored by :func:`scorers.run_evals` into ``store`` (a new run,
    written as outcomes finish, which History can reopen and resume). The job's result
    is a :class:`CompareOutcome`; a job that could score nothing fails with the reason.

    Args:
        store: the database (also the reply cache of the generation and of the judges).
        scorers: the scorers, with distinct ids.
        scorer_options: scorer id → its options (recorded with the run).
        items: the items to score when nothing is generated.
        plan: what to generate first, or None.
        dataset_name: the dataset's name for the stored run.
        run_name: the run's display name, or None for the default.
        mapping: the columns used, recorded with the run.
        config: other settings recorded with the run (``config``).
        concurrency: requests (generation) and items (scoring) at once, >= 1.
        budget: caps on the scorers' judge calls, tokens and cost (the generation step is not
            counted), recorded with the run so a resume keeps them; None for no cap.
        price: the judge's price per million tokens for the cost cap, or None for its list price.

    Returns:
        The job id.

    Raises:
        ValueError: concurrency < 1.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    scorers = list(scorers)
    options = {k: dict(v) for k, v in scorer_options.items()}

    def work(ctx: jobs.JobContext) -> CompareOutcome:
        outcome = CompareOutcome()
        ctx.keep(outcome)
        todo = list(items)
        run_config = dict(config or {}, source="compare", scorerOptions=options, cache=True)
        run_config.update(budget=(budget or BudgetCaps()).to_dict(), price=price_record(price))  # as Batch records
        if plan is not None:
            ctx.progress(done=0, total=len(plan.rows) * len(plan.variants), phase="generating")
            responses = generate_responses(
                plan.rows,
                plan.variants,
                settings=plan.settings,
                item_ids=plan.item_ids,
                concurrency=concurrency,
                cache=store,
                cancel=ctx.cancel,
                on_progress=lambda done, total: ctx.progress(done=done, total=total),
            )
            outcome.generation = generation_record(responses)
            todo = comparison_items(
                plan.rows,
                responses,
                input_col=plan.input_col,
                ground_truth_col=plan.ground_truth_col,
                system_col=plan.system_col,
                group_cols=plan.group_cols,
            )
            run_config["variants"] = [asdict(v) for v in plan.variants]
            run_config["generation"] = outcome.generation
            if ctx.cancel.is_set():
                ctx.note("Stopped while generating: nothing was scored or stored (the responses are cached).")
                return outcome
            if not todo:
                failed = outcome.generation.get("failed") or []
                first = ""
                if failed:  # the generation step failed, not the judge: name the variant's model and endpoint
                    models = {v.name: v.model for v in plan.variants}
                    where = f"target model {models.get(failed[0]['variant'])} at {plan.settings.endpoint}"
                    first = f" The first error (variant {failed[0]['variant']}, {where}): {failed[0]['error']}"
                raise jobs.JobError(
                    "No response could be generated by the variants' target models, so nothing was judged or "
                    f"scored.{first}"
                )
            # The judge prompts hold the responses: the cap's refusal can be known only now, before the run exists.
            if refusal := cap_notes(todo, scorers, budget, price)[0]:
                raise jobs.JobError(
                    f"Generated, but nothing was scored or stored: {refusal[:1].lower()}{refusal[1:]} The responses "
                    "are in the cache: run again with a higher cap and they are not generated again."
                )
        ctx.progress(done=0, total=len(todo), phase="scoring")

        try:
            result = run_evals(
                todo,
                scorers,
                concurrency=concurrency,
                store=store,
                dataset_name=dataset_name,
                run_name=run_name,
                mapping=dict(mapping or {}),
                scorer_options=options,
                run_config=run_config,
                cancel=ctx.cancel,
                on_item_complete=ctx.on_item_complete,
                budget=budget,
                price=price,
            )
        except ScorerError as exc:  # e.g. no API key for the target model: shown with the job
            raise jobs.JobError(str(exc)) from exc
        outcome.run_id = result.run_id
        ctx.set_run_id(result.run_id)
        return outcome

    what = "Generating and scoring" if plan is not None else "Scoring"
    return jobs.start("compare", f"{what} a comparison of {dataset_name}", work)


def session_job() -> jobs.Job | None:
    """This session's comparison job, running or finished, or None."""
    return session_job_of(JOB_SLOT)


def start_job(job_id: str) -> None:
    """Remember the job ``job_id`` as this session's comparison job."""
    remember(JOB_SLOT, job_id)


def render_job_panel() -> str | None:
    """This session's job: progress with Stop while it runs; when it has ended, its outcome.

    Returns:
        The id of the run the job has just stored (the first time the page is drawn
        after the job ended), else None.
    """
    job = session_job()
    if job is None:
        return None
    shot = job.snapshot()
    if shot.running:
        st.info("Generating and scoring in the background on the server. You can switch pages; the job goes on.")
        render_job_progress(job.id, key="compare_job")
        return None
    outcome: CompareOutcome = job.result or CompareOutcome()
    if shot.status == "failed":
        st.error(shot.message)
    elif shot.message:
        st.warning(shot.message)
    if outcome.generation is not None:
        render_generation(outcome.generation)
    shown = f"compare_job_shown_{job.id}"
    if st.session_state.get(shown):
        return None
    st.session_state[shown] = True
    return outcome.run_id


def render_generation(generation: Mapping[str, Any]) -> None:
    """The generation step of a comparison: responses, tokens, cost, and the responses that failed."""
    costs = generation.get("costs") or {}
    known = [c for c in costs.values() if c is not None]
    if not costs:
        cost = "—"
    elif len(known) < len(costs):
        cost = "unknown" if not known else f"≥ {usd_text(sum(known))}"
    else:
        cost = usd_text(sum(known))
    failed = generation.get("failed") or []
    columns = st.columns(4)
    columns[0].metric("Responses generated", int(generation.get("responses", 0)) - len(failed))
    columns[1].metric("Not generated", len(failed), help="Rows that got no response: they are not scored.")
    tokens = int(generation.get("prompt_tokens", 0)) + int(generation.get("completion_tokens", 0))
    columns[2].metric(
        "Generation tokens",
        f"{tokens:,}",
        help=f"{generation.get('prompt_tokens', 0):,} prompt + {generation.get('completion_tokens', 0):,} completion "
        f"tokens; {generation.get('cached', 0)} responses came from the cache and cost nothing.",
    )
    columns[3].metric(
        "Generation cost",
        cost,
        help="At each variant's model's list price (genai-prices, offline; a price set on this page is for the "
        "judge, not for generation); responses from the cache cost nothing. 'unknown' when no variant's model has a "
        "known price, '≥' before the known part when only some have one.",
    )
    if costs:
        # Once per variant: the rows add up to the Generation cost tile (judging is not in it).
        st.dataframe(
            pd.DataFrame({"variant": list(costs), "generation cost (USD)": list(costs.values())}),
            hide_index=True,
            placeholder=NO_VALUE,
            # "%g" prints the cost to 6 significant digits (sprintf.js): "%.4f" showed $0.0000162 as 0.0000, free.
            column_config={"generation cost (USD)": st.column_config.NumberColumn(format="%g")},
        )
        st.caption(
            "What generating each variant's responses cost, once per variant: together they make the Generation "
            f'cost above ("{NO_VALUE}": the model\'s price is unknown). Judging is not in it.'
        )
    if failed:
        st.warning(f"{len(failed)} response(s) could not be generated; those rows are missing from the comparison.")
        st.dataframe(pd.DataFrame(failed), hide_index=True)


# ---- a comparison's data
