"""Judge cost: a price table for common OpenAI models and token estimates.

Prices are USD per million tokens (input, output), OpenAI's list prices for
standard processing as published in 2025; a model not in the table has an
"unknown" cost (None), never a guessed one.
"""

from __future__ import annotations

PRICES_PER_MILLION: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "o3": (2.00, 8.00),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-3.5-turbo": (0.50, 1.50),
}

CHARS_PER_TOKEN = 4  # OpenAI's rule of thumb for English text

# OpenAI's Batch API bills input and output tokens at half the standard price.
BATCH_DISCOUNT = 0.5


def price_for(model: str) -> tuple[float, float] | None:
    """(input, output) USD per million tokens for ``model`` (``openai/`` prefix and dated suffixes allowed).

    >>> price_for("openai/gpt-4o-mini-2024-07-18")
    (0.15, 0.6)
    >>> price_for("llama3.1") is None
    True
    """
    name = model.removeprefix("openai/").lower()
    # The longest table name that the model id starts with: "gpt-4o-mini-2024..." is gpt-4o-mini, not gpt-4o.
    matches = [m for m in PRICES_PER_MILLION if name == m or name.startswith(m + "-")]
    return PRICES_PER_MILLION[max(matches, key=len)] if matches else None


def cost_usd(model: str, prompt_tokens: int, completion_tokens: int, *, batch_api: bool = False) -> float | None:
    """Cost in USD of the given tokens, or None when the model's price is unknown.

    With ``batch_api`` the tokens are billed at the Batch API's price: the standard
    price times (1 - :data:`BATCH_DISCOUNT`).

    >>> round(cost_usd("gpt-4o-mini", 1_000_000, 100_000), 4)
    0.21
    >>> round(cost_usd("gpt-4o-mini", 1_000_000, 100_000, batch_api=True), 4)
    0.105
    """
    price = price_for(model)
    if price is None:
        return None
    cost = (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000
    return cost * (1 - BATCH_DISCOUNT) if batch_api else cost


def estimate_tokens(text: str) -> int:
    """Rough token count of ``text``: characters / 4, at least 1 for non-empty text."""
    return max(1, len(text) // CHARS_PER_TOKEN) if text else 0
