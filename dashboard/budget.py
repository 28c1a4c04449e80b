"""The spend caps of a run (judge calls, tokens, cost) and the judge's price, as the Batch and Compare pages ask them."""

from __future__ import annotations

import streamlit as st

from scorers import JudgeSettings
from scorers.core.budget import BudgetCaps
from scorers.core.pricing import Price, price_for

SESSION = {"persist_state": "session"}  # the caps are kept when the user visits another page

CAP_RULE = (
    "A judge call that could pass a cap is not sent: the run stops at the cap, never past it "
    "(status budget_reached), and can be resumed."
)


def budget_form(prefix: str) -> tuple[BudgetCaps, Price | None]:
    """Three caps (0: no cap) and an optional price per million tokens, keyed ``<prefix>_max_calls``,
    ``_max_tokens``, ``_max_cost``, ``_price_in`` and ``_price_out``.

    Returns:
        The caps (:class:`scorers.core.budget.BudgetCaps`, for ``run_evals(budget=...)`` and the run's
        ``config["budget"]``) and the price the user set, or None for the model's list price.
    """
    c1, c2, c3 = st.columns(3)
    calls = c1.number_input("Max judge calls (0: no cap)", min_value=0, step=100, key=f"{prefix}_max_calls", **SESSION)
    tokens = c2.number_input(
        "Max total tokens (0: no cap)", min_value=0, step=10_000, key=f"{prefix}_max_tokens", **SESSION
    )
    # "%g" shows a cap or price as typed (sprintf.js prints the number in full): a cap of 0.004, never "0.00", which
    # reads as no cap; a price of 0.075, never "0.08" (Streamlit's default for a float is "%0.2f").
    cost = c3.number_input(
        "Max cost in USD (0: no cap)", min_value=0.0, step=1.0, format="%g", key=f"{prefix}_max_cost", **SESSION
    )
    st.caption(CAP_RULE)
    p1, p2 = st.columns(2)
    price_in = p1.number_input(
        "Price per million input tokens (USD, 0: list price)",
        min_value=0.0,
        step=0.05,
        format="%g",
        key=f"{prefix}_price_in",
    )
    price_out = p2.number_input(
        "Price per million output tokens (USD, 0: list price)",
        min_value=0.0,
        step=0.05,
        format="%g",
        key=f"{prefix}_price_out",
    )
    price = Price(price_in, price_out) if price_in or price_out else None
    return BudgetCaps(int(calls) or None, int(tokens) or None, float(cost) or None), price


def price_record(price: Price | None) -> list[float] | None:
    """How a run records the price (``config["price"]``, read back by :func:`dashboard.batch.run_limits`)."""
    return [price.input_per_million, price.output_per_million] if price else None


def budget_problem(caps: BudgetCaps, settings: JudgeSettings | None, price: Price | None) -> str | None:
    """Why the caps cannot be kept, or None: a cost cap needs the judge's price."""
    if caps.max_cost_usd and settings is not None and price_for(settings.model, price) is None:
        return f"A cost cap needs the price of {settings.model_name}: set a price per million tokens."
    return None
