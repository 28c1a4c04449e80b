"""Per-run caps on judge calls, total tokens and cost, checked before every judge call.

A run sets a :class:`Budget` for its worker threads (:func:`active`); the judge client
asks it before each request (:func:`current`, :meth:`Budget.reserve`) and reports
what the request spent (:meth:`Budget.settle`). A request is sent only when the spend
so far, plus what the requests in flight may still spend, plus what this one may spend
stays within every cap, so a run stops *at* a cap, never past it:

* a request may take one call (each HTTP request is one: a retry the openai client makes is reserved anew,
  :meth:`Budget.resend`);
* its prompt at most one token per UTF-8 byte of the messages and the response
  format, plus 8 tokens per message (byte-level BPE tokenizers never make more
  tokens than bytes; the 8 cover the chat format's per-message tokens);
* its reply at most the judge's ``max_tokens``, or :data:`ASSUMED_MAX_REPLY_TOKENS`
  when none is set (set one, e.g. ``--judge-max-tokens``, for a strict bound);
* its cost those tokens at the judge model's price (a cost cap needs a known price).

A request that would pass the token or cost cap only because of what the requests in flight
hold waits for them to end (each then counts what it spent, at most what it held), so the cap
admits calls while what the run spent plus the next call's bound stays within it. When a request
would pass a cap with nothing in flight (or the call cap, which calls in flight only fill),
:class:`BudgetReached` is raised instead of sending it, and every later request is refused the
same way; the run leaves that item unscored and ends as ``budget_reached`` (resumable). With
nothing in flight, what its message calls spent is all that the run's judge calls spent.

A run takes its first reservations in item order (:meth:`Budget.order`, :meth:`Budget.turn`): the
first judge call of an item's scorer reserves only after the first call of every earlier one has
reserved or been refused (or it made none), so the calls a cap admits are a prefix in item order,
the same at any concurrency and on every run, as long as the judge's replies are the same. A
scorer's later calls (a re-ask of an invalid reply, a reason written by a second call, a call retried
after the judge's rate limit) reserve when they are made, so with such calls the prefix can end an
item earlier or later at a concurrency above 1.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from typing import Any

from scorers.core.pricing import Price, usd_text

ASSUMED_MAX_REPLY_TOKENS = 4096
"""Tokens a judge reply is assumed to take at most when the judge has no ``max_tokens``."""

PER_MESSAGE_TOKENS = 8


CAP_FLAGS = {
    "max_judge_calls": "--max-judge-calls N",
    "max_total_tokens": "--max-total-tokens N",
    "max_cost_usd": "--max-cost USD",
}
"""The command-line flag that sets each cap of :class:`BudgetCaps`, with its value's kind."""


class BudgetReached(Exception):
    """The next judge call could pass a cap of the run's budget; it was not sent.

    Args:
        message: the cap and what was spent, in words.
        cap: the :class:`BudgetCaps` field of the cap reached (a key of :data:`CAP_FLAGS`).

    ``usage`` is the :class:`~scorers.core.base.JudgeUsage` the judge call spent before the request not sent (its
    failed requests, a reply re-asked), set by the judge; None when nothing was sent.
    """

    def __init__(self, message: str, cap: str):
        super().__init__(message)
        self.cap = cap
        self.usage: Any = None

    @property
    def flag(self) -> str:
        """The command-line flag that raises the cap reached, e.g. ``"--max-judge-calls N"``."""
        return CAP_FLAGS[self.cap]


class StoppedWhileWaiting(BudgetReached):
    """A judge call that waited for the calls in flight was not sent because the run stopped meanwhile
    (cancelled, paused for another reason, a quota): no cap was reached, and the run's status is that stop's."""


@dataclass(frozen=True)
class BudgetCaps:
    """A run's caps; None for no cap.

    Attributes:
        max_judge_calls: HTTP requests to the judge, >= 1: a request the openai client retries counts once a try.
        max_total_tokens: prompt + completion tokens, >= 1.
        max_cost_usd: USD, > 0.
    """

    max_judge_calls: int | None = None
    max_total_tokens: int | None = None
    max_cost_usd: float | None = None

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be > 0 (or no cap), got {value}")

    @property
    def any(self) -> bool:
        """True when at least one cap is set."""
        return any(v is not None for v in asdict(self).values())

    def to_dict(self) -> dict[str, Any]:
        """The caps as JSON-ready fields (how a run records them)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> BudgetCaps:
        """Caps from :meth:`to_dict` (missing fields: no cap)."""
        data = data or {}
        return cls(data.get("max_judge_calls"), data.get("max_total_tokens"), data.get("max_cost_usd"))

    def describe(self) -> str:
        """``"at most 100 judge calls, 50,000 tokens, $0.004"`` (or ``"no caps"``); the cost as :func:`usd_text` shows it."""
        parts = []
        if self.max_judge_calls is not None:
            parts.append(f"{self.max_judge_calls:,} judge calls")
        if self.max_total_tokens is not None:
            parts.append(_tokens_text(self.max_total_tokens))
        if self.max_cost_usd is not None:
            parts.append(usd_text(self.max_cost_usd))
        return "at most " + ", ".join(parts) if parts else "no caps"


def batch_api_caps_problem(caps: BudgetCaps) -> str | None:
    """Why ``caps`` cannot hold a Batch API run (:mod:`scorers.runs.batch_api`), or None when no cap is set.

    Caps are checked before each live judge call; a Batch API run uploads all of its requests at once in
    files, so no cap could stop it part way: such a run is refused rather than run past its caps.
    """
    if not caps.any:
        return None
    return (
        f"Budget caps ({caps.describe()}) apply to live judge calls only: the Batch API sends all of a run's "
        "requests at once, so no cap could stop it. Remove the caps or switch the Batch API off."
    )


RESERVED_BOUND = (
    f"its prompt at one token per byte, its reply at the judge's max output tokens, "
    f"{ASSUMED_MAX_REPLY_TOKENS:,} without one"
)
"""What the budget holds for a judge call before sending it (:meth:`Budget.reserve`), in words."""


def _tokens_text(tokens: float) -> str:
    """Tokens in words, rounded to a whole token: ``"4,357 tokens"``, ``"1 token"``."""
    return f"{round(tokens):,} token{'' if round(tokens) == 1 else 's'}"


def _cap_refusal(
    cap: str,
    amount: Callable[[float], str],
    limit: float,
    call_bound: float,
    spent: float,
    cap_field: str,
    tokens_field: str,
) -> str | None:
    """:func:`cost_cap_refusal` for any cap: ``cap`` names it (``"cost cap of $0.001"``), ``amount`` writes a quantity."""
    left = round(limit - spent, 12)  # not 0.0002999... for $0.003 - $0.0027
    if left >= call_bound:
        return None
    before = f", on top of what the run spent, {amount(spent)}" if spent > 0 else ""
    return (
        f"The {cap} cannot hold one judge call: the run reserves a call's upper bound "
        f"before sending it, {amount(call_bound)} for the first ({RESERVED_BOUND}){before}, so no judge call "
        f"would be sent. Raise the cap to at least {amount(spent + call_bound)} ({cap_field}), or lower "
        f"the bound by setting the judge's max output tokens to about the reply's length ({tokens_field})."
    )


def cost_cap_refusal(
    max_cost_usd: float | None,
    call_bound_usd: float | None,
    spent_usd: float = 0.0,
    *,
    cap_field: str,
    tokens_field: str,
) -> str | None:
    """Why a run cannot start under its cost cap: not even its first judge call fits; None when it does (or no cap).

    The run holds a call's upper bound before sending it (:meth:`Budget.reserve`) and stops for good at the first
    call refused with nothing in flight, so when what the cap leaves is below the first call's bound no judge call
    would ever be sent: such a run (or resume) is refused before it is created or anything is sent.

    Args:
        max_cost_usd: the cost cap in USD (> 0), or None for no cap.
        call_bound_usd: what the budget holds before sending the run's first judge call
            (``Estimate.call_bound_usd``), or None when unknown (no call to make, or no price): never refused.
        spent_usd: what the run spent before (a resume), USD >= 0: the cap is for the whole run.
        cap_field: where the user raises the cap, e.g. ``"--max-cost USD"``.
        tokens_field: where the user sets the judge's max output tokens, e.g. ``"--judge-max-tokens N"``.
    """
    if max_cost_usd is None or call_bound_usd is None:
        return None
    cap = f"cost cap of {usd_text(max_cost_usd)}"
    return _cap_refusal(cap, usd_text, max_cost_usd, call_bound_usd, spent_usd, cap_field, tokens_field)


def token_cap_refusal(
    max_total_tokens: int | None,
    call_bound_tokens: int | None,
    spent_tokens: int = 0,
    *,
    cap_field: str,
    tokens_field: str,
) -> str | None:
    """Why a run cannot start under its token cap: not even its first judge call fits; None when it does (or no cap).

    As :func:`cost_cap_refusal`, in tokens: the cap (less what a resumed run spent) must hold the first call's
    reserved bound, its prompt at one token per byte and its reply at the judge's max output tokens.

    Args:
        max_total_tokens: the token cap (prompt + completion tokens, > 0), or None for no cap.
        call_bound_tokens: the tokens the budget holds before sending the run's first judge call
            (``Estimate.call_bound_tokens``), or None when there is no call to make: never refused.
        spent_tokens: the tokens the run spent before (a resume), >= 0: the cap is for the whole run.
        cap_field: where the user raises the cap, e.g. ``"--max-total-tokens N"``.
        tokens_field: where the user sets the judge's max output tokens, e.g. ``"--judge-max-tokens N"``.
    """
    if max_total_tokens is None or call_bound_tokens is None:
        return None
    cap = f"cap of {_tokens_text(max_total_tokens)}"
    return _cap_refusal(cap, _tokens_text, max_total_tokens, call_bound_tokens, spent_tokens, cap_field, tokens_field)


def _cap_warning(
    cap: str,
    amount: Callable[[float], str],
    limit: float,
    estimate: float,
    judge_calls: int,
    spent: float,
    call_bound: float | None,
) -> str | None:
    """:func:`cost_cap_warning` for any cap: ``cap`` names it (``"cost cap of $0.001"``), ``amount`` writes a quantity."""
    left = round(limit - spent, 12)  # not 0.0002999... for $0.003 - $0.0027
    per_call = estimate / judge_calls
    bound = max(call_bound if call_bound is not None else per_call, per_call)
    if left < bound:
        return None
    admitted = min(judge_calls, int((left - bound) / per_call + 1e-9) + 1)
    if admitted >= judge_calls:
        return None
    if spent > 0:
        cap = f"The {cap} leaves {amount(left)} after what the run spent ({amount(spent)}),"
    else:
        cap = f"The {cap} is"
    worst = min(judge_calls, int(left / bound + 1e-9))
    return (
        f"{cap} short of the estimate's {judge_calls:,} judge calls ({amount(estimate)}): the run sends "
        f"a call only while what it spent plus the call's upper bound ({amount(bound)}: {RESERVED_BOUND}) stays "
        f"within the cap, so it admits about {admitted:,} of them at the estimate's {amount(per_call)} a call "
        f"(at least {worst:,} if every call spends its whole bound), then pauses at the cap; the scorers "
        "that call no judge still score every item."
    )


def cost_cap_warning(
    max_cost_usd: float | None,
    estimate_usd: float | None,
    judge_calls: int,
    spent_usd: float = 0.0,
    call_bound_usd: float | None = None,
) -> str | None:
    """How many of a run's estimated judge calls its cost cap admits, or None when it admits them all (or none:
    such a run is refused, :func:`cost_cap_refusal`).

    Args:
        max_cost_usd: the cost cap in USD (> 0), or None for no cap.
        estimate_usd: the run's estimated judge cost in USD (:func:`scorers.runs.runner.estimate_run`), or None
            when unknown.
        judge_calls: the judge calls of that estimate, >= 0.
        spent_usd: what the run spent before (a resumed run's outcomes), USD >= 0: the cap is for the whole run,
            so only ``max_cost_usd - spent_usd`` is left for the estimate.
        call_bound_usd: what the budget holds before sending the run's first judge call (:meth:`Budget.reserve`:
            :data:`RESERVED_BOUND`; ``Estimate.call_bound_usd``), or None when unknown (then one estimated call).

    Returns:
        A sentence, when the cap does not admit every call, saying how many it admits. The run sends a call only
        while what it spent plus the call's bound stays within the cap (:meth:`Budget.reserve`), so with ``c`` the
        estimate's cost per call and ``b`` the bound it admits ``floor((left - b) / c) + 1`` calls at the estimate,
        and ``floor(left / b)`` when every call spends its whole bound (its prompt at one token per byte, its reply
        at the max output tokens: more than the estimate's prompt), both at most ``judge_calls``. Code scorers are
        never held by the cap.
    """
    if max_cost_usd is None or estimate_usd is None or judge_calls <= 0:
        return None
    cap = f"cost cap of {usd_text(max_cost_usd)}"
    return _cap_warning(cap, usd_text, max_cost_usd, estimate_usd, judge_calls, spent_usd, call_bound_usd)


def token_cap_warning(
    max_total_tokens: int | None,
    estimate_tokens: int,
    judge_calls: int,
    spent_tokens: int = 0,
    call_bound_tokens: int | None = None,
) -> str | None:
    """How many of a run's estimated judge calls its token cap admits, or None when it admits them all (or none:
    such a run is refused, :func:`token_cap_refusal`).

    As :func:`cost_cap_warning`, in tokens: with ``c`` the estimate's tokens per call and ``b`` the first call's
    reserved bound, about ``floor((left - b) / c) + 1`` calls, at least ``floor(left / b)``.

    Args:
        max_total_tokens: the token cap (prompt + completion tokens, > 0), or None for no cap.
        estimate_tokens: the run's estimated prompt + completion tokens (:func:`scorers.runs.runner.estimate_run`).
        judge_calls: the judge calls of that estimate, >= 0.
        spent_tokens: the tokens the run spent before (a resumed run's outcomes), >= 0: the cap is for the whole
            run, so only ``max_total_tokens - spent_tokens`` is left for the estimate.
        call_bound_tokens: the tokens the budget holds before sending the run's first judge call
            (``Estimate.call_bound_tokens``), or None when unknown (then one estimated call).
    """
    if max_total_tokens is None or judge_calls <= 0:
        return None
    cap = f"cap of {_tokens_text(max_total_tokens)}"
    return _cap_warning(
        cap, _tokens_text, max_total_tokens, estimate_tokens, judge_calls, spent_tokens, call_bound_tokens
    )


def prompt_token_bound(messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any]) -> int:
    """An upper bound of a request's prompt tokens: UTF-8 bytes of the messages and response format, + 8 a message."""
    size = sum(len(str(m.get("content") or "").encode()) for m in messages)
    size += len(json.dumps(params.get("response_format") or {}).encode())
    return size + PER_MESSAGE_TOKENS * len(messages)


def reply_token_bound(max_reply_tokens: int | None) -> int:
    """An upper bound of a reply's tokens: the judge's ``max_tokens``, or :data:`ASSUMED_MAX_REPLY_TOKENS` without."""
    return max_reply_tokens or ASSUMED_MAX_REPLY_TOKENS


@dataclass(frozen=True)
class _Ticket:
    tokens: int
    cost: float


class Budget:
    """The caps of one run and what it has spent; shared by the run's threads.

    Args:
        caps: the caps.
        price: the judge model's price per million tokens (needed for a cost cap).
        spent_calls, spent_prompt_tokens, spent_completion_tokens: what the run spent
            before (a resumed run counts its stored outcomes).

    Attributes:
        stopped: says whether the run stopped (cancelled, paused): a request waiting for the requests in
            flight is then refused. Set by the run; never stopped by default.
        waiting: called as ``waiting(unit, True)`` when a unit starts waiting for other units (its :meth:`turn`,
            the requests in flight in :meth:`reserve`) and ``waiting(unit, False)`` when that wait ends (the
            unit is the one of the enclosing :meth:`turn`, or None); the run stops an item's clock meanwhile.
            Set by the run; does nothing by default.

    Raises:
        ValueError: a cost cap without a price.
    """

    def __init__(
        self,
        caps: BudgetCaps,
        *,
        price: Price | None = None,
        spent_calls: int = 0,
        spent_prompt_tokens: int = 0,
        spent_completion_tokens: int = 0,
    ):
        if caps.max_cost_usd is not None and price is None:
            raise ValueError(
                "a cost cap needs the judge model's price: it has no list price, so set a price per million tokens"
            )
        self.caps = caps
        self.price = price
        self.calls = spent_calls
        self.prompt_tokens = spent_prompt_tokens
        self.completion_tokens = spent_completion_tokens
        self._held_calls = 0
        self._held_tokens = 0
        self._held_cost = 0.0
        self._earlier: tuple[int, int, float | None] = (0, 0, 0.0)  # prompt, completion tokens, their USD
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # a request in flight settled
        self._reached: BudgetReached | None = None  # the cap a request was refused at with nothing in flight
        self._rank: dict[Hashable, int] = {}  # a unit of work -> its place in the order of first reservations
        self._taken: list[bool] = []  # per place: its first reservation was taken or refused (or it needs none)
        self._next = 0  # the first place not taken
        self.stopped: Callable[[], bool] = lambda: False
        self.waiting: Callable[[Hashable | None, bool], None] = lambda unit, waiting: None

    def order(self, units: Iterable[Hashable]) -> None:
        """Set the order in which the ``units`` (e.g. ``(item index, scorer id)``) take their first reservation.

        A unit entered with :meth:`turn` waits until every earlier unit has reserved its first call, been refused,
        or ended without a call; units not given here never wait.
        """
        units = list(units)
        with self._lock:
            self._rank = {unit: place for place, unit in enumerate(units)}
            self._taken = [False] * len(units)
            self._next = 0

    @contextmanager
    def turn(self, unit: Hashable) -> Iterator[bool]:
        """Do one unit's work (its judge calls) in its turn: wait for the earlier units of :meth:`order` first.

        Yields True when its turn came, False when the run stopped (:attr:`stopped`) while it waited: then do
        nothing. Its first :meth:`reserve` in the block, refused or not, ends the turn; leaving the block ends it
        too (a unit that made no call).
        """
        place = self._rank.get(unit)
        waited = place is not None and self._next < place
        if waited:
            self.waiting(unit, True)
        try:
            with self._changed:
                while place is not None and self._next < place:
                    if self.stopped():
                        break
                    self._changed.wait(0.2)  # an earlier unit takes its turn (or the run stops)
                ready = place is None or self._next >= place
        finally:
            if waited:
                self.waiting(unit, False)
        token = _UNIT.set(unit)
        try:
            yield ready
        finally:
            _UNIT.reset(token)
            self.end_turn(unit)

    def end_turn(self, unit: Hashable) -> None:
        """Mark ``unit``'s turn taken (it reserved, was refused, or needs no call); later units may then reserve."""
        with self._changed:
            self._end_turn(unit)

    def _end_turn(self, unit: Hashable | None) -> None:
        place = self._rank.get(unit)
        if place is None or self._taken[place]:
            return
        self._taken[place] = True
        while self._next < len(self._taken) and self._taken[self._next]:
            self._next += 1
        self._changed.notify_all()

    def count_earlier(self, calls: int, prompt_tokens: int, completion_tokens: int, cost_usd: float | None) -> None:
        """Count what the run spent before (a resumed run's stored outcomes), priced apart.

        Args:
            calls, prompt_tokens, completion_tokens: what the earlier outcomes spent, >= 0; ``calls`` are the HTTP
                requests they sent (:attr:`scorers.core.base.JudgeUsage.requests`, failed ones and retries included).
            cost_usd: what they cost, each outcome at the price of its own judge's model
                (:func:`scorers.core.pricing.run_cost`; a resumed or retried run may hold
                outcomes of other models than :attr:`price` is for), or None when unknown.

        Raises:
            ValueError: ``cost_usd`` is None and a cost cap is set.
        """
        if cost_usd is None and self.caps.max_cost_usd is not None:
            raise ValueError("a cost cap needs the cost of what the run spent before, and it is unknown")
        with self._lock:
            self.calls += calls
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            prompt, completion, usd = self._earlier
            self._earlier = (
                prompt + prompt_tokens,
                completion + completion_tokens,
                None if usd is None or cost_usd is None else usd + cost_usd,
            )

    @property
    def cost_usd(self) -> float | None:
        """USD spent so far (earlier outcomes at their own judges' prices), or None without a price or when unknown."""
        prompt, completion, earlier = self._earlier
        if self.price is None or earlier is None:
            return None
        return earlier + self.price.cost(self.prompt_tokens - prompt, self.completion_tokens - completion)

    def reserve(self, prompt_bound: int, max_reply_tokens: int | None) -> _Ticket:
        """Hold what one request may spend, or raise :class:`BudgetReached` if it could pass a cap.

        While only what the requests in flight hold keeps this one from the token or cost cap, it waits
        for them to end (and for :attr:`stopped` to say the run stopped: then it is refused with
        :class:`StoppedWhileWaiting`, which is no cap reached). Made in a
        :meth:`turn`, the unit's first reservation ends its turn, whether taken or refused.

        Args:
            prompt_bound: the request's prompt tokens at most (:func:`prompt_token_bound`).
            max_reply_tokens: the judge's ``max_tokens``, or None (then :data:`ASSUMED_MAX_REPLY_TOKENS`).
        """
        reply = reply_token_bound(max_reply_tokens)
        return self._hold(_Ticket(prompt_bound + reply, self.price.cost(prompt_bound, reply) if self.price else 0.0))

    def resend(self, ticket: _Ticket) -> _Ticket:
        """Count the request ``ticket`` held as a call that failed (it spent no tokens), and hold the same bound for
        sending it again (the openai client retries a failed request itself): each HTTP request is a judge call of
        the budget. Raises :class:`BudgetReached` as :meth:`reserve` does: then the request is not sent again."""
        self.settle(ticket, 0, 0)
        return self._hold(ticket)

    def _hold(self, ticket: _Ticket) -> _Ticket:
        """:meth:`reserve` a ticket made."""
        unit = _UNIT.get()
        waited = False
        try:
            with self._changed:
                try:
                    while (reached := self._reached or self._passes(ticket)) is not None:
                        if reached is self._reached:  # refused once with nothing in flight: spending only grows
                            raise BudgetReached(str(reached), reached.cap)
                        if reached.cap == "max_judge_calls" or not self._held_calls:
                            self._reached = reached
                            raise reached
                        if self.stopped():
                            raise StoppedWhileWaiting(
                                "the run stopped while a judge call waited for the calls in flight", reached.cap
                            )
                        if not waited:
                            waited = True
                            self.waiting(unit, True)
                        self._changed.wait(0.2)  # a request in flight settles (or the run stops)
                    self._held_calls += 1
                    self._held_tokens += ticket.tokens
                    self._held_cost += ticket.cost
                finally:
                    self._end_turn(unit)  # reserved or refused: the next unit in order may reserve
        finally:
            if waited:
                self.waiting(unit, False)
        return ticket

    def _passes(self, ticket: _Ticket) -> BudgetReached | None:
        """The cap ``ticket`` could pass on top of what is spent and held, or None; called under the lock."""
        caps = self.caps
        if caps.max_judge_calls is not None and self.calls + self._held_calls + 1 > caps.max_judge_calls:
            return BudgetReached(
                f"the cap of {caps.max_judge_calls:,} judge calls is reached (each HTTP request to the judge is a "
                "call, a retry of a failed one too)",
                "max_judge_calls",
            )
        bound = f"({RESERVED_BOUND})"
        spent_tokens = self.prompt_tokens + self.completion_tokens
        if (
            caps.max_total_tokens is not None
            and spent_tokens + self._held_tokens + ticket.tokens > caps.max_total_tokens
        ):
            return BudgetReached(
                f"the next judge call could pass the cap of {caps.max_total_tokens:,} tokens: the run's judge calls "
                f"spent {spent_tokens:,} tokens, and the next one reserves up to {ticket.tokens:,} before it is "
                f"sent {bound}",
                "max_total_tokens",
            )
        spent = self.cost_usd or 0.0
        if caps.max_cost_usd is not None and spent + self._held_cost + ticket.cost > caps.max_cost_usd:
            return BudgetReached(
                f"the next judge call could pass the cost cap of {usd_text(caps.max_cost_usd)}: the run's judge calls "
                f"spent {usd_text(spent)}, and the next one reserves up to {usd_text(ticket.cost)} before it is "
                f"sent {bound}",
                "max_cost_usd",
            )
        return None

    def settle(self, ticket: _Ticket, prompt_tokens: int, completion_tokens: int) -> None:
        """Replace a reservation by what the request spent (a request that failed still counts as a call)."""
        with self._changed:
            self._held_calls -= 1
            self._held_tokens -= ticket.tokens
            self._held_cost -= ticket.cost
            self.calls += 1
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            self._changed.notify_all()


_CURRENT: ContextVar[Budget | None] = ContextVar("scorer_studio_budget", default=None)
_UNIT: ContextVar[Hashable | None] = ContextVar("scorer_studio_budget_unit", default=None)


def current() -> Budget | None:
    """The budget of the run this thread works for, or None."""
    return _CURRENT.get()


@contextmanager
def active(budget: Budget | None) -> Iterator[None]:
    """Make ``budget`` the current one in this thread for the ``with`` block."""
    token = _CURRENT.set(budget)
    try:
        yield
    finally:
        _CURRENT.reset(token)
