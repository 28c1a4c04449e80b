"""Which judges made a stored run's outcomes, and what they spent: SQL over the results table.

A run resumed or retried with another judge than it started with holds outcomes of each
(every result records its judge, the failures included), so its cost is priced per judge
model (:func:`scorers.core.pricing.run_cost`). No pandas: the command line lists runs with it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scorers.core.budget import BudgetCaps
from scorers.core.errors import ScoreStatus
from scorers.core.pricing import JudgeSpend, Price, RunCost, price_for, run_cost
from scorers.runs.store import Store

if TYPE_CHECKING:
    from scorers.core.judge import JudgeSettings

JUDGE_MODEL_SQL = {"sqlite": "json_extract(judge, '$.model')", "postgresql": "judge::jsonb ->> 'model'"}
"""Per database: SQL of a result's judge model (its ``judge`` JSON's ``model``)."""

JUDGE_SQL = {
    "sqlite": JUDGE_MODEL_SQL["sqlite"] + ", json_extract(judge, '$.baseUrl')",
    "postgresql": JUDGE_MODEL_SQL["postgresql"] + ", judge::jsonb ->> 'baseUrl'",
}
"""Per database: SQL of a result's judge model and endpoint (its ``judge`` JSON's ``model`` and ``baseUrl``)."""


RECORDED_SETTINGS = {
    "temperature": "temperature",
    "seed": "seed",
    "maxTokens": "max_tokens",
    "timeout": "timeout",
    "maxRetries": "max_retries",
    "contextWindow": "context_window",
}
"""A run's recorded judge (``run["judge"]``) key → the :class:`~scorers.core.judge.JudgeSettings` field it holds,
besides ``model`` and ``baseUrl``."""


def judge_record(settings: JudgeSettings | None) -> dict[str, Any] | None:
    """What a stored run keeps of its judge (``run["judge"]``): every setting but the key, which is never stored.

    ``{"model", "baseUrl"}`` and the keys of :data:`RECORDED_SETTINGS`; :func:`recorded_judge_settings` reads it back.
    None for None (no scorer of the run uses a judge).
    """
    if settings is None:
        return None
    return {"model": settings.model_name, "baseUrl": settings.endpoint} | {
        key: getattr(settings, field) for key, field in RECORDED_SETTINGS.items()
    }


def recorded_judge_settings(judge: Mapping[str, Any] | None, settings: JudgeSettings) -> JudgeSettings:
    """The settings a resume "with the run's judge" uses: each setting the run's ``judge`` record holds, else ``settings``'.

    The API key (never stored) always comes from ``settings``; so does a setting a run did not record (runs
    stored before it was recorded: the dashboard's kept no max output tokens nor timeout).
    """
    judge = judge or {}
    return dataclasses.replace(
        settings,
        model=judge.get("model") or settings.model,
        base_url=judge.get("baseUrl") or settings.base_url,
        **{field: judge[key] for key, field in RECORDED_SETTINGS.items() if key in judge},
    )


def judges_used(store: Store, run_id: str) -> list[tuple[str, str, int]]:
    """The judges a run's outcomes were made by, most outcomes first.

    A run resumed or retried with another judge than it started with holds outcomes of each
    (every result records its judge, the failures included).

    Returns:
        ``(model, base URL, number of outcomes)`` per judge; outcomes of code-based scorers
        (no judge) and those not scored for their input (no judge was asked) are not counted.
    """
    return judge_totals(store, run_id)[0]


def judge_totals(
    store: Store, run_id: str, scorer_id: str | None = None
) -> tuple[list[tuple[str, str, int]], list[JudgeSpend]]:
    """:func:`judges_used` and :func:`spend_by_judge` of a run (or of one scorer's outcomes) from one pass
    over its outcomes, for a view that shows both (a run's judges and its cost).

    Returns:
        ``(judges used, spend by judge)``. Ties are ordered by model (a model not recorded first),
        then base URL.
    """
    mine = " AND scorer_id = ?" if scorer_id is not None else ""
    spent = "prompt_tokens + completion_tokens > 0"
    rows = store.query(
        f"SELECT {JUDGE_SQL[store.dialect]}, SUM(CASE WHEN judge IS NOT NULL AND status NOT IN (?, ?) THEN 1 ELSE 0 END),"
        f" SUM(CASE WHEN {spent} THEN prompt_tokens ELSE 0 END), SUM(CASE WHEN {spent} THEN completion_tokens ELSE 0 END),"
        f" SUM(CASE WHEN {spent} THEN 1 ELSE 0 END) FROM results WHERE run_id = ?{mine} GROUP BY 1, 2",
        (ScoreStatus.MISSING_INPUT.value, ScoreStatus.INVALID_INPUT.value, run_id)
        + (() if scorer_id is None else (scorer_id,)),
    )
    used = [(str(model), str(url), int(n)) for model, url, n, *_ in rows if model is not None and n]
    by_model: dict[str | None, list[int]] = {}
    for model, _, _, prompt, completion, n in rows:
        if n:
            totals = by_model.setdefault(model, [0, 0, 0])
            for i, value in enumerate((prompt, completion, n)):
                totals[i] += int(value)
    spend = [JudgeSpend(model, *totals) for model, totals in by_model.items()]
    return (
        sorted(used, key=lambda j: (-j[2], j[0], j[1])),
        sorted(spend, key=lambda j: (-j.outcomes, j.model is not None, j.model or "")),
    )


def judges_text(used: list[tuple[str, str, int]]) -> str:
    """The judges of :func:`judges_used` in words, e.g. ``"gpt-4o-mini at https://api.openai.com/v1 (441 outcomes)"``."""
    return ", ".join(f"{model} at {url} ({n:,} outcome{'' if n == 1 else 's'})" for model, url, n in used)


def spend_by_judge(store: Store, run_id: str, scorer_id: str | None = None) -> list[JudgeSpend]:
    """What a run's outcomes (or one scorer's) spent, per the judge model each records (its ``judge`` JSON's ``model``),
    most outcomes first.

    Only outcomes that spent tokens are counted (a cached reply, a code-based scorer and an
    input error spent none); one that spent tokens without recording a judge has model None.
    Price it with :func:`scorers.core.pricing.run_cost`.

    Args:
        store: the database.
        run_id: the run.
        scorer_id: only this scorer's outcomes; None for all of them.
    """
    return judge_totals(store, run_id, scorer_id)[1]


def stored_run_cost(
    store: Store, run: dict[str, Any], scorer_id: str | None = None, spend: list[JudgeSpend] | None = None
) -> RunCost | None:
    """The judge cost of a stored run's outcomes (or one scorer's), each at the price of the judge model that made it.

    The prices set for the run (:func:`run_prices`) are for their own models; other models get
    their list price; a run that went through the Batch API is counted at its price
    (:func:`scorers.core.pricing.run_cost`).

    Args:
        store: the database.
        run: the run's record (:meth:`scorers.runs.store.Store.get_run`).
        scorer_id: only this scorer's outcomes; None for all of them.
        spend: :func:`spend_by_judge` of the same, when already read (e.g. cached by the dashboard).

    Returns:
        The cost, or None when the run has no judge.
    """
    if not (run.get("judge") or {}).get("model"):
        return None
    if spend is None:
        spend = spend_by_judge(store, run["id"], scorer_id)
    return run_cost(spend, prices=run_prices(run), batch_api=bool((run.get("config") or {}).get("batch_api")))


def run_prices(run: Mapping[str, Any]) -> dict[str, Price]:
    """The prices per million tokens set for a run, by judge model.

    A run records the price it was started with (its config's ``price``, for its own judge
    model, the one it started with) and those a resume was given for another judge model
    (``prices``: ``{model: [input, output]}``, see :func:`limits_config`).

    Args:
        run: the run's record (:meth:`scorers.runs.store.Store.get_run`).

    Returns:
        ``{model: Price}``; a model not in it is priced at its list price.
    """
    config = run.get("config") or {}
    prices = {str(model): Price(*pair) for model, pair in (config.get("prices") or {}).items()}
    own = (run.get("judge") or {}).get("model")
    if own and config.get("price"):
        prices[own] = Price(*config["price"])
    return prices


def limits_config(
    run: Mapping[str, Any],
    model: str | None,
    *,
    budget: BudgetCaps | None = None,
    price: Price | None = None,
    list_price: bool = False,
) -> dict[str, Any]:
    """The run's config with a new budget and a price for ``model``, as a resume given them stores it.

    A price given for the run's own judge model replaces its ``price``; one given for another
    model (a resume with another judge) goes into ``prices`` under that model.

    Args:
        run: the run's record (:meth:`scorers.runs.store.Store.get_run`).
        model: the judge model ``price`` is for (the one that resumes the run); None: no judge.
        budget: the caps for the whole run (they replace the recorded ones), or None to keep them.
        price: the price per million tokens of ``model``, or None to keep the recorded one.
        list_price: with no ``price``, forget the price recorded for ``model`` (its list price applies).

    Returns:
        The new config (the stored one is not changed: :meth:`scorers.runs.store.Store.set_run_config`).
    """
    config = dict(run.get("config") or {})
    if budget is not None:
        config["budget"] = budget.to_dict()
    if model and (price is not None or list_price):
        pair = [price.input_per_million, price.output_per_million] if price is not None else None
        others = {name: p for name, p in (config.get("prices") or {}).items() if name != model}
        if model == (run.get("judge") or {}).get("model"):
            config["price"] = pair
        elif pair is not None:
            config["prices"] = {**others, model: pair}
        elif "prices" in config:
            config["prices"] = others
    return config


def has_price(run: dict[str, Any], model: str) -> bool:
    """Whether the outcomes ``model`` makes in ``run`` can be priced (as :func:`stored_run_cost` prices them).

    Args:
        run: the run's record (:meth:`scorers.runs.store.Store.get_run`).
        model: a judge model, e.g. the one scoring the run now.

    Returns:
        True when the model has a list price or a price set for it in the run (:func:`run_prices`).
    """
    return price_for(model, run_prices(run).get(model)) is not None
