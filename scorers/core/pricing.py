"""Judge cost: list prices from pydantic's ``genai-prices`` (offline), a user-set price, and token estimates.

Prices come from the ``genai-prices`` package's bundled snapshot, a maintained price
list of many providers (OpenAI, Anthropic, Google, Mistral, Groq, DeepSeek, ...). Its
network updater (``genai_prices.UpdatePrices``) is never started, so no request leaves
the machine; a newer snapshot arrives with a newer pinned version. A price per million
tokens set by the user (:class:`Price`) overrides the list. A model the list does not
know has an "unknown" cost (None), never a guessed one and never $0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

CHARS_PER_TOKEN = 4  # OpenAI's rule of thumb for English text

# OpenAI's Batch API bills input and output tokens at half the standard price.
BATCH_DISCOUNT = 0.5


@dataclass(frozen=True)
class Price:
    """A price set by the user: USD per million input (prompt) and output (completion) tokens, each >= 0."""

    input_per_million: float
    output_per_million: float

    def __post_init__(self) -> None:
        if not (self.input_per_million >= 0 and self.output_per_million >= 0):
            raise ValueError(
                f"a price per million tokens must be >= 0, got {self.input_per_million}, {self.output_per_million}"
            )

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """USD for these tokens."""
        return (prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million) / 1_000_000


def usd_text(value: float) -> str:
    """A sum of USD in words: cents, and below a dollar the decimals its first 3 significant digits need.

    Every cost, estimate and cap is shown this way (the CLI, the pages, the report), so a sum never reads
    as $0.00 when it is not zero ($0.000036), and never with digits that say nothing ($0.282, not
    $0.28238715). Trailing zeros past the cents are dropped.

    Args:
        value: USD, >= 0.

    >>> usd_text(0.28238715), usd_text(0.004), usd_text(0.5), usd_text(1234.5), usd_text(0.0000362)
    ('$0.282', '$0.004', '$0.50', '$1,234.50', '$0.0000362')
    >>> usd_text(0.09996), usd_text(0.0), usd_text(3e-12)
    ('$0.10', '$0.00', '$0.000000000003')
    """
    decimals = 2 if value <= 0 or value >= 1 else max(2, 2 - math.floor(math.log10(value)))
    whole, _, fraction = f"{value:,.{decimals}f}".partition(".")
    return f"${whole}.{fraction.rstrip('0').ljust(2, '0')}"


def _list_cost(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    from genai_prices import Usage, calc_price  # its price snapshot takes a third of a second to import

    name = model.removeprefix("openai/")
    usage = Usage(input_tokens=prompt_tokens, output_tokens=completion_tokens)
    attempts = [(name, None)]
    if "/" in name:  # "anthropic/claude-3-5-sonnet": the provider, then the model
        provider, _, bare = name.partition("/")
        attempts = [(bare, provider.lower()), (bare, None), (name, None)]
    for ref, provider in attempts:
        try:
            return float(calc_price(usage, ref, provider_id=provider).total_price)
        except LookupError:
            continue
    return None


def load_price_list() -> None:
    """Load the list prices now rather than at the first cost asked for (a third of a second, once per process).

    The dashboard's server calls it in a background thread when it starts, so the first run
    opened does not wait for it; the command line never does (a run without a judge needs no
    price).
    """
    _list_cost("gpt-4o-mini", 0, 0)


def price_for(model: str, price: Price | None = None) -> Price | None:
    """The price of ``model`` per million tokens: ``price`` when set, else the list price, else None.

    Args:
        model: ``"provider/model"`` or a bare model id (``openai/`` prefix and dated suffixes allowed).
        price: a user-set price, which wins.

    >>> price_for("openai/gpt-4o-mini-2024-07-18")
    Price(input_per_million=0.15, output_per_million=0.6)
    >>> price_for("llama3.1") is None
    True
    """
    if price is not None:
        return price
    per_input = _list_cost(model, 1_000_000, 0)
    per_output = _list_cost(model, 0, 1_000_000)
    if per_input is None or per_output is None:
        return None
    return Price(round(per_input, 6), round(per_output, 6))


def cost_usd(
    model: str, prompt_tokens: int, completion_tokens: int, price: Price | None = None, *, batch_api: bool = False
) -> float | None:
    """Cost in USD of the given tokens, or None when the model's price is unknown and none is set.

    List prices are computed by ``genai-prices`` for the whole usage (so tiered prices apply).
    With ``batch_api`` the tokens are billed at the Batch API's price: the standard
    price times (1 - :data:`BATCH_DISCOUNT`).

    >>> round(cost_usd("gpt-4o-mini", 1_000_000, 100_000), 4)
    0.21
    >>> round(cost_usd("gpt-4o-mini", 1_000_000, 100_000, batch_api=True), 4)
    0.105
    >>> cost_usd("my-local-model", 1_000_000, 0, Price(1.0, 2.0))
    1.0
    """
    if price is not None:
        cost = price.cost(prompt_tokens, completion_tokens)
    else:
        cost = _list_cost(model, prompt_tokens, completion_tokens)
    if cost is None:
        return None
    return cost * (1 - BATCH_DISCOUNT) if batch_api else cost


@dataclass(frozen=True)
class JudgeSpend:
    """What the outcomes one judge model made spent: the tokens of every call, retries included.

    Attributes:
        model: the judge model the outcomes record (``"provider/model"`` or bare), or None
            when they record none.
        prompt_tokens: prompt (input) tokens, >= 0.
        completion_tokens: completion (output) tokens, >= 0.
        outcomes: how many outcomes these tokens are of, >= 0.
    """

    model: str | None
    prompt_tokens: int
    completion_tokens: int
    outcomes: int


@dataclass(frozen=True)
class RunCost:
    """The judge cost of a run's outcomes, each priced at the model of the judge that made it.

    Attributes:
        usd: USD of the outcomes whose model has a price (0.0 when there are none).
        priced: outcomes counted in ``usd``.
        unpriced: the outcomes whose model has no known price (nor a price set for it), by
            model (None: the outcome records no judge): their cost is unknown, never priced
            at another model and never counted as 0.
    """

    usd: float
    priced: int
    unpriced: dict[str | None, int]

    @property
    def total_usd(self) -> float | None:
        """The whole cost in USD, or None when some outcomes' cost is unknown."""
        return None if self.unpriced else self.usd

    def unknown_text(self) -> str:
        """What is not priced, in words (``""`` when everything is)."""
        parts = [
            f"{n:,} outcome{'' if n == 1 else 's'} judged by "
            + (f"{model} (no list price, and no price set for it)" if model else "a judge the outcome does not record")
            for model, n in self.unpriced.items()
        ]
        return "unknown for " + "; ".join(parts) if parts else ""


def run_cost(
    spend: Iterable[JudgeSpend], *, prices: Mapping[str, Price] | None = None, batch_api: bool = False
) -> RunCost:
    """Price each model's outcomes at that model's price (:func:`cost_usd`) and add them up.

    Args:
        spend: the tokens spent, per judge model (one entry per model, or several).
        prices: the prices set by the user, by judge model; other models get their list price.
        batch_api: the calls went through the Batch API (billed at its price).

    Returns:
        The :class:`RunCost`: entries without tokens cost nothing whatever their model;
        those of a model without a price are counted apart as unknown.

    >>> cost = run_cost([JudgeSpend("gpt-4o-mini", 1_000_000, 0, 3), JudgeSpend("llama3.1", 500, 50, 2)])
    >>> round(cost.usd, 4), cost.priced, cost.unpriced, cost.total_usd
    (0.15, 3, {'llama3.1': 2}, None)
    """
    usd, priced, unpriced = 0.0, 0, {}
    for entry in spend:
        if not entry.prompt_tokens + entry.completion_tokens:
            continue
        cost = None
        if entry.model is not None:
            own = (prices or {}).get(entry.model)
            cost = cost_usd(entry.model, entry.prompt_tokens, entry.completion_tokens, own, batch_api=batch_api)
        if cost is None:
            unpriced[entry.model] = unpriced.get(entry.model, 0) + entry.outcomes
        else:
            usd += cost
            priced += entry.outcomes
    return RunCost(usd, priced, unpriced)


def estimate_tokens(text: str) -> int:
    """Rough token count of ``text``: characters / 4, at least 1 for non-empty text."""
    return max(1, len(text) // CHARS_PER_TOKEN) if text else 0
