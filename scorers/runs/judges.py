"""Which judges made a stored run's outcomes, and what they spent: SQL over the results table.

A run resumed or retried with another judge than it started with holds outcomes of each
(every result records its judge, the failures included), so its cost is priced per judge
model (:func:`scorers.core.pricing.run_cost`). No pandas: the command line lists runs with it.
"""

from __future__ import annotations

from typing import Any

from scorers.core.errors import ScoreStatus
from scorers.core.pricing import JudgeSpend, Price, RunCost, price_for, run_cost
from scorers.runs.store import Store

JUDGE_MODEL_SQL = {"sqlite": "json_extract(judge, '$.model')", "postgresql": "judge::jsonb ->> 'model'"}
"""Per database: SQL of a result's judge model (its ``judge`` JSON's ``model``)."""

JUDGE_SQL = {
    "sqlite": JUDGE_MODEL_SQL["sqlite"] + ", json_extract(judge, '$.baseUrl')",
    "postgresql": JUDGE_MODEL_SQL["postgresql"] + ", judge::jsonb ->> 'baseUrl'",
}
"""Per database: SQL of a result's judge model and endpoint (its ``judge`` JSON's ``model`` and ``baseUrl``)."""


def judges_used(store: Store, run_id: str) -> list[tuple[str, str, int]]:
    """The judges a run's outcomes were made by, most outcomes first.

    A run resumed or retried with another judge than it started with holds outcomes of each
    (every result records its judge, the failures included).

    Returns:
        ``(model, base URL, number of outcomes)`` per judge; outcomes of code-based scorers
        (no judge) and those not scored for their input (no judge was asked) are not counted.
    """
    rows = store.query(
        f"SELECT {JUDGE_SQL[store.dialect]}, COUNT(*) FROM results WHERE run_id = ? AND judge IS NOT NULL"
        " AND status NOT IN (?, ?) GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2",
        (run_id, ScoreStatus.MISSING_INPUT.value, ScoreStatus.INVALID_INPUT.value),
    )
    return [(str(r[0]), str(r[1]), int(r[2])) for r in rows if r[0] is not None]


def judges_text(used: list[tuple[str, str, int]]) -> str:
    """The judges of :func:`judges_used` in words, e.g. ``"gpt-4o-mini at https://api.openai.com/v1 (441 outcomes)"``."""
    return ", ".join(f"{model} at {url} ({n:,} outcome{'' if n == 1 else 's'})" for model, url, n in used)


def spend_by_judge(store: Store, run_id: str, scorer_id: str | None = None) -> list[JudgeSpend]:
    """What a run's outcomes (or one scorer's) spent, per the judge model each records (its ``judge`` JSON's ``model``).

    Only outcomes that spent tokens are counted (a cached reply, a code-based scorer and an
    input error spent none); one that spent tokens without recording a judge has model None.
    Price it with :func:`scorers.core.pricing.run_cost`.

    Args:
        store: the database.
        run_id: the run.
        scorer_id: only this scorer's outcomes; None for all of them.
    """
    mine = " AND scorer_id = ?" if scorer_id is not None else ""
    rows = store.query(
        f"SELECT {JUDGE_MODEL_SQL[store.dialect]}, SUM(prompt_tokens), SUM(completion_tokens), COUNT(*) FROM results"
        f" WHERE run_id = ?{mine} AND prompt_tokens + completion_tokens > 0 GROUP BY 1 ORDER BY 4 DESC, 1",
        (run_id,) if scorer_id is None else (run_id, scorer_id),
    )
    return [JudgeSpend(r[0], int(r[1]), int(r[2]), int(r[3])) for r in rows]


def stored_run_cost(
    store: Store, run: dict[str, Any], scorer_id: str | None = None, spend: list[JudgeSpend] | None = None
) -> RunCost | None:
    """The judge cost of a stored run's outcomes (or one scorer's), each at the price of the judge model that made it.

    The price set for the run (its config's ``price``) is for the run's own judge model;
    other models get their list price; a run that went through the Batch API is counted
    at its price (:func:`scorers.core.pricing.run_cost`).

    Args:
        store: the database.
        run: the run's record (:meth:`scorers.runs.store.Store.get_run`).
        scorer_id: only this scorer's outcomes; None for all of them.
        spend: :func:`spend_by_judge` of the same, when already read (e.g. cached by the dashboard).

    Returns:
        The cost, or None when the run has no judge.
    """
    model = (run.get("judge") or {}).get("model")
    if not model:
        return None
    config = run.get("config") or {}
    price = _set_price(run)
    if spend is None:
        spend = spend_by_judge(store, run["id"], scorer_id)
    return run_cost(spend, price=price, priced_model=model, batch_api=bool(config.get("batch_api")))


def _set_price(run: dict[str, Any]) -> Price | None:
    config = run.get("config") or {}
    return Price(*config["price"]) if config.get("price") else None


def has_price(run: dict[str, Any], model: str) -> bool:
    """Whether the outcomes ``model`` makes in ``run`` can be priced (as :func:`stored_run_cost` prices them).

    Args:
        run: the run's record (:meth:`scorers.runs.store.Store.get_run`).
        model: a judge model, e.g. the one scoring the run now.

    Returns:
        True when the model has a list price, or is the run's own judge model and the run has a price set.
    """
    own = (run.get("judge") or {}).get("model") == model
    return price_for(model, _set_price(run) if own else None) is not None
