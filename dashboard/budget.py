"""The spend caps of a run (judge calls, tokens, cost) and the judge's price, as the Batch and Compare pages ask them."""

from __future__ import annotations

import streamlit as st

from scorers import JudgeSettings
from scorers.core.budget import BudgetCaps
from scorers.core.errors import RunStatus, run_status_short_label
from scorers.core.pricing import Price, price_for

SESSION = {"persist_state": "session"}  # the caps are kept when the user visits another page

CAP_RULE = (
    "A judge call that could pass a cap is not sent: the run stops at the cap, never past it "
    f"(History shows it as “{run_status_short_label(RunStatus.BUDGET_REACHED.value)}”), and can be resumed."
)


def budget_form(
    prefix: str,
    caps: BudgetCaps | None = None,
    price: Price | None = None,
    *,
    max_retries: int = JudgeSettings.max_retries,
) -> tuple[BudgetCaps, Price | None]:
    """Three caps (0: no cap) and an optional price per million tokens, keyed ``<prefix>_max_calls``,
    ``_max_tokens``, ``_max_cost``, ``_price_in`` and ``_price_out``.

    ``caps`` and ``price`` fill the fields when they are first shown (a stored run's, on a resume);
    None: no caps and the list price. ``max_retries`` is the judge's (:attr:`JudgeSettings.max_retries`), which the
    call cap's help names: the default is the sidebar's judge's, which keeps the setting's default.

    Returns:
        The caps (:class:`scorers.core.budget.BudgetCaps`, for ``run_evals(budget=...)`` and the run's
        ``config["budget"]``) and the price the user set (0 allowed: a free model), or None for the model's
        list price: both fields empty, or a price :func:`budget_problem` refuses (negative, or only one set).
    """
    caps = caps or BudgetCaps()
    c1, c2, c3 = st.columns(3)
    calls = c1.number_input(
        "Max judge calls (0: no cap)",
        min_value=0,
        value=caps.max_judge_calls or 0,
        step=100,
        help="HTTP requests to the judge: a failed request the judge's client retries itself (a 5xx, a 429, a "
        f"timeout, a lost connection; up to {max_retries} time{'' if max_retries == 1 else 's'}, the judge's "
        "max_retries) counts once a try.",
        key=f"{prefix}_max_calls",
        **SESSION,
    )
    tokens = c2.number_input(
        "Max total tokens (0: no cap)",
        min_value=0,
        value=caps.max_total_tokens or 0,
        step=10_000,
        key=f"{prefix}_max_tokens",
        **SESSION,
    )
    # "%g" shows a cap or price as typed (sprintf.js prints the number in full): a cap of 0.004, never "0.00", which
    # reads as no cap; a price of 0.075, never "0.08" (Streamlit's default for a float is "%0.2f").
    cost = c3.number_input(
        "Max cost in USD (0: no cap)",
        min_value=0.0,
        value=float(caps.max_cost_usd or 0.0),
        step=1.0,
        format="%g",
        key=f"{prefix}_max_cost",
        **SESSION,
    )
    st.caption(CAP_RULE)
    p1, p2 = st.columns(2)
    # Empty: the model's list price. 0 is a price (a free local model); a negative one is refused (budget_problem).
    price_in = p1.number_input(
        "Price per million input tokens (USD; empty: list price)",
        value=price.input_per_million if price else None,
        step=0.05,
        format="%g",
        placeholder="list price",
        key=f"{prefix}_price_in",
    )
    price_out = p2.number_input(
        "Price per million output tokens (USD; empty: list price)",
        value=price.output_per_million if price else None,
        step=0.05,
        format="%g",
        placeholder="list price",
        key=f"{prefix}_price_out",
    )
    price = None
    if price_in is not None and price_out is not None and price_in >= 0 and price_out >= 0:
        price = Price(price_in, price_out)
    return BudgetCaps(int(calls) or None, int(tokens) or None, float(cost) or None), price


def price_record(price: Price | None) -> list[float] | None:
    """How a run records the price (``config["price"]``, read back by :func:`dashboard.batch.run_limits`)."""
    return [price.input_per_million, price.output_per_million] if price else None


def budget_problem(
    caps: BudgetCaps, settings: JudgeSettings | None, price: Price | None, prefix: str | None = None
) -> str | None:
    """Why the run cannot start as set, or None: a price of :func:`budget_form` ``prefix`` that is negative or half
    set (it then returns no price), or a cost cap without the judge's price."""
    typed = {side: st.session_state.get(f"{prefix}_price_{side}") for side in ("in", "out")} if prefix else {}
    negative = [
        f"{name} {typed[side]:g}" for side, name in (("in", "input"), ("out", "output")) if (typed.get(side) or 0) < 0
    ]
    if negative:
        return (
            f"A price per million tokens cannot be negative ({', '.join(negative)}): "
            "0 is a free model; leave both empty for the list price."
        )
    if prefix and (typed["in"] is None) != (typed["out"] is None):
        return "Set both prices per million tokens (0 for a free model), or leave both empty for the list price."
    if caps.max_cost_usd and settings is not None and price_for(settings.model, price) is None:
        return f"A cost cap needs the price of {settings.model_name}: set a price per million tokens."
    return None
