"""The run budget: the warning before a run whose cost cap admits fewer calls than the estimate (cost_cap_warning),
the cap reached."""

import threading
import time
from types import SimpleNamespace

import pytest

from scorers import EvalItem, ScoreStatus, run_evals
from scorers.core.base import ScoreResult
from scorers.core.budget import (
    Budget,
    BudgetCaps,
    BudgetReached,
    StoppedWhileWaiting,
    cost_cap_refusal,
    cost_cap_warning,
    token_cap_refusal,
    token_cap_warning,
)
from scorers.core.budget import current as current_budget
from scorers.core.errors import RateLimitedError
from scorers.core.pricing import Price


def test_cost_cap_warning_says_how_many_calls_the_cap_admits():
    assert cost_cap_warning(None, 0.01, 10) is None  # no cap
    assert cost_cap_warning(0.02, 0.01, 10) is None  # covers the estimate
    assert cost_cap_warning(0.02, None, 10) is None  # estimate unknown
    # $0.01 for 10 calls: $0.001 a call, the bound unknown (taken as the estimate's call): a $0.0025 cap admits
    # floor((0.0025 - 0.001) / 0.001) + 1 = 2 calls, and floor(0.0025 / 0.001) = 2 at the bound.
    text = cost_cap_warning(0.0025, 0.01, 10)
    assert "short of the estimate's 10 judge calls ($0.01)" in text
    assert (
        "admits about 2 of them at the estimate's $0.001 a call (at least 2 if every call spends its whole bound"
        in text
    )
    # $0.00313785 for 30 calls: about $0.0001046 a call; a $0.00005 cap admits none: refused, not warned of.
    assert cost_cap_warning(0.00005, 0.00313785, 30) is None


def test_a_cap_equal_to_the_estimate_does_not_admit_every_call_when_each_reserves_more():
    # $0.01 for 10 calls ($0.001 each), each reserving $0.003 before it is sent: the 10th call needs
    # 9 × $0.001 spent + $0.003 = $0.012 within the cap. A $0.01 cap admits floor((0.01 - 0.003) / 0.001) + 1 = 8,
    # and floor(0.01 / 0.003) = 3 if every call spends its whole bound.
    text = cost_cap_warning(0.01, 0.01, 10, call_bound_usd=0.003)
    assert (
        "admits about 8 of them at the estimate's $0.001 a call (at least 3 if every call spends its whole bound"
        in text
    )
    assert "the call's upper bound ($0.003:" in text
    assert cost_cap_warning(0.012, 0.01, 10, call_bound_usd=0.003) is None  # floor(0.009 / 0.001) + 1 = 10
    assert "admits about 9 of them" in cost_cap_warning(0.0119, 0.01, 10, call_bound_usd=0.003)


def test_a_cost_cap_below_what_one_call_holds_is_refused():
    # At $0.15 / $0.60 per million tokens a call of a 1,000-token prompt bound and no max output tokens (4,096)
    # holds 1,000 × 0.15e-6 + 4,096 × 0.6e-6 = $0.00015 + $0.0024576 = $0.0026076 ($0.00261) before it is sent.
    fields = {"cap_field": "--max-cost USD", "tokens_field": "--judge-max-tokens N"}
    text = cost_cap_refusal(0.001, 0.0026076, **fields)
    assert text.startswith(
        "The cost cap of $0.001 cannot hold one judge call: the run reserves a call's upper bound before sending it, "
        "$0.00261 for the first (its prompt at one token per byte, its reply at the judge's max output tokens, "
        "4,096 without one), so no judge call would be sent."
    )
    assert "Raise the cap to at least $0.00261 (--max-cost USD), or lower the bound" in text
    assert text.endswith("(--judge-max-tokens N).")
    assert cost_cap_warning(0.001, 0.00942, 20, call_bound_usd=0.0026076) is None  # refused, not warned of
    # A cap that covers the estimate ($0.001 for 2 calls) but not one call's bound is refused too.
    assert cost_cap_refusal(0.002, 0.0026076, **fields) is not None
    # A resumed run: $0.0001 spent, so a call needs a cap of $0.0027076 ($0.00271).
    text = cost_cap_refusal(0.002, 0.0026076, 0.0001, **fields)
    assert "for the first (" in text and "), on top of what the run spent, $0.0001, so no judge call" in text
    assert "Raise the cap to at least $0.00271 (--max-cost USD)" in text
    # A cap below what the run spent: refused the same way ($0.0027 + $0.0026076 = $0.0053076, shown $0.00531).
    assert "at least $0.00531 (" in cost_cap_refusal(0.000001, 0.0026076, 0.0027, **fields)
    assert cost_cap_refusal(0.0027076, 0.0026076, 0.0001, **fields) is None  # exactly one call
    assert cost_cap_refusal(None, 0.0026076, **fields) is None and cost_cap_refusal(0.001, None, **fields) is None


def test_the_warning_of_a_fresh_users_run_counts_calls_at_the_reservation():
    # 20 calls estimated at $0.00462 ($0.000231 each), a call reserving $0.000795 (its prompt bound and 300 reply
    # tokens): a $0.002 cap admits floor((0.002 - 0.000795) / 0.000231) + 1 = floor(5.22) + 1 = 6 calls, and
    # floor(0.002 / 0.000795) = floor(2.52) = 2 if every call spends its whole bound (prompt at one token per byte, reply at 300 tokens).
    text = cost_cap_warning(0.002, 0.00462, 20, call_bound_usd=0.000795)
    assert text.startswith("The cost cap of $0.002 is short of the estimate's 20 judge calls ($0.00462)")
    assert (
        "admits about 6 of them at the estimate's $0.000231 a call (at least 2 if every call spends its whole bound"
        in text
    )


def test_a_token_cap_below_what_one_call_holds_is_refused():
    # A first call of a 604-token prompt bound and no max output tokens (4,096) holds 4,700 tokens before it is sent.
    fields = {"cap_field": "--max-total-tokens N", "tokens_field": "--judge-max-tokens N"}
    text = token_cap_refusal(4_699, 4_700, **fields)
    assert text == (
        "The cap of 4,699 tokens cannot hold one judge call: the run reserves a call's upper bound before sending it, "
        "4,700 tokens for the first (its prompt at one token per byte, its reply at the judge's max output tokens, "
        "4,096 without one), so no judge call would be sent. Raise the cap to at least 4,700 tokens "
        "(--max-total-tokens N), or lower the bound by setting the judge's max output tokens to about the reply's "
        "length (--judge-max-tokens N)."
    )
    assert token_cap_refusal(4_700, 4_700, **fields) is None  # exactly one call
    # A resumed run that spent 4,357 tokens: a 9,000 cap leaves 4,643, below 4,700; a call needs 9,057.
    text = token_cap_refusal(9_000, 4_700, 4_357, **fields)
    assert "4,700 tokens for the first (" in text and "), on top of what the run spent, 4,357 tokens, so no" in text
    assert "Raise the cap to at least 9,057 tokens (--max-total-tokens N)" in text
    assert token_cap_refusal(9_057, 4_700, 4_357, **fields) is None
    assert token_cap_refusal(None, 4_700, **fields) is None and token_cap_refusal(1, None, **fields) is None
    assert token_cap_refusal(1, 4_700, **fields).startswith("The cap of 1 token cannot hold")


def test_token_cap_warning_says_how_many_calls_the_cap_admits():
    # The user's run: 20 calls estimated at 18,900 tokens (945 a call), each call reserving 4,700 tokens before it
    # is sent. A 9,000-token cap admits floor((9,000 - 4,700) / 945) + 1 = floor(4.55) + 1 = 5 calls at the
    # estimate, and floor(9,000 / 4,700) = 1 if every call spends its whole bound.
    text = token_cap_warning(9_000, 18_900, 20, call_bound_tokens=4_700)
    assert text.startswith("The cap of 9,000 tokens is short of the estimate's 20 judge calls (18,900 tokens)")
    assert "upper bound (4,700 tokens: its prompt at one token per byte" in text
    assert (
        "admits about 5 of them at the estimate's 945 tokens a call (at least 1 if every call spends its whole bound"
        in text
    )
    # 4,700 + 19 × 945 = 22,655 admits all 20; one token less admits 19.
    assert token_cap_warning(22_655, 18_900, 20, call_bound_tokens=4_700) is None
    assert "admits about 19 of them" in token_cap_warning(22_654, 18_900, 20, call_bound_tokens=4_700)
    assert token_cap_warning(4_699, 18_900, 20, call_bound_tokens=4_700) is None  # refused, not warned of
    assert token_cap_warning(None, 18_900, 20, call_bound_tokens=4_700) is None
    # A resumed run that spent 4,357 tokens: a 15,000 cap leaves 10,643, floor((10,643 - 4,700) / 945) + 1 = 7,
    # and floor(10,643 / 4,700) = 2.
    text = token_cap_warning(15_000, 18_900, 20, 4_357, call_bound_tokens=4_700)
    assert text.startswith(
        "The cap of 15,000 tokens leaves 10,643 tokens after what the run spent (4,357 tokens), short of the "
        "estimate's 20 judge calls (18,900 tokens)"
    )
    assert "admits about 7 of them at the estimate's 945 tokens a call (at least 2 if every call" in text


def test_cost_cap_warning_counts_what_a_resumed_run_spent():
    # A $0.003 cap on a run that spent $0.0027 leaves $0.0003: 30% of a $0.001 estimate for 10 calls, 3 calls.
    # $0.0001 a call (the bound unknown: the same), so floor((0.0003 - 0.0001) / 0.0001) + 1 = 3 calls.
    text = cost_cap_warning(0.003, 0.001, 10, spent_usd=0.0027)
    assert text.startswith("The cost cap of $0.003 leaves $0.0003 after what the run spent ($0.0027), short of")
    assert "admits about 3 of them" in text
    assert cost_cap_warning(0.0037, 0.001, 10, spent_usd=0.0027) is None  # $0.001 left covers the estimate


def test_the_cap_reached_names_its_own_flag():
    # Each cap alone, one request of a 100-token prompt and a 10-token reply at $1 / $1 per million tokens
    # (110 tokens, $0.00011): a call cap of 1 holds one request, so the second is refused; a token cap of
    # 100 and a cost cap of $0.0001 refuse the first.
    calls = Budget(BudgetCaps(max_judge_calls=1))
    calls.reserve(100, 10)
    reached = []
    for budget in (
        calls,
        Budget(BudgetCaps(max_total_tokens=100)),
        Budget(BudgetCaps(max_cost_usd=0.0001), price=Price(1.0, 1.0)),
    ):
        with pytest.raises(BudgetReached) as caught:
            budget.reserve(100, 10)
        reached.append((caught.value.cap, caught.value.flag))
    assert reached == [
        ("max_judge_calls", "--max-judge-calls N"),
        ("max_total_tokens", "--max-total-tokens N"),
        ("max_cost_usd", "--max-cost USD"),
    ]


def test_a_request_sent_again_is_a_call_of_its_own():
    # A call cap of 2: a request (110 tokens held) fails and is sent again: the failed one is a call that spent no
    # tokens, and the retry holds the same 110; a second retry would be the third call, so it is refused.
    budget = Budget(BudgetCaps(max_judge_calls=2, max_total_tokens=1_000))
    retry = budget.resend(budget.reserve(100, 10))
    assert (budget.calls, budget.prompt_tokens + budget.completion_tokens, retry.tokens) == (1, 0, 110)
    with pytest.raises(BudgetReached) as caught:
        budget.resend(retry)
    assert caught.value.cap == "max_judge_calls" and budget.calls == 2


def test_a_call_that_passes_the_cap_only_for_what_is_in_flight_waits_and_a_refusal_holds():
    # $1 per million tokens; a request of a 100-token prompt bound and a 10-token reply bound holds 110 tokens,
    # $0.00011. Cap $0.0002: A holds $0.00011, so B ($0.00011 more: $0.00022) waits for A.
    budget = Budget(BudgetCaps(max_cost_usd=0.0002), price=Price(1.0, 1.0))
    a = budget.reserve(100, 10)
    granted = []
    waiter = threading.Thread(target=lambda: granted.append(budget.reserve(100, 10)))
    waiter.start()
    waiter.join(0.5)
    assert waiter.is_alive() and not granted
    budget.settle(a, 50, 5)  # A spent 55 tokens, $0.000055: B fits ($0.000165)
    waiter.join(5)
    assert len(granted) == 1
    budget.settle(granted[0], 50, 5)  # $0.00011 spent: $0.00011 more would pass $0.0002, nothing in flight
    with pytest.raises(BudgetReached) as caught:
        budget.reserve(100, 10)
    assert str(caught.value) == (
        "the next judge call could pass the cost cap of $0.0002: the run's judge calls spent $0.00011, and the next "
        "one reserves up to $0.00011 before it is sent (its prompt at one token per byte, its reply at the judge's "
        "max output tokens, 4,096 without one)"
    )
    with pytest.raises(BudgetReached):  # a smaller request ($0.000002) would fit, but the run has stopped at the cap
        budget.reserve(1, 1)


def test_a_call_waiting_for_the_calls_in_flight_is_refused_when_the_run_stops():
    budget = Budget(BudgetCaps(max_total_tokens=150))
    budget.reserve(100, 10)
    budget.stopped = lambda: True
    with pytest.raises(StoppedWhileWaiting, match="the run stopped while a judge call waited"):
        budget.reserve(100, 10)


class _QuotaAtItemZero:
    """A judge-like scorer (it has judge settings) whose calls each reserve a 90-token prompt and a 10-token reply
    (100 tokens) and spend all of it: item 0's call ends after 0.3 s with an exhausted quota, item 1's after 2 s."""

    id = "quota-judge"
    settings = SimpleNamespace(
        model_name="m", endpoint="http://127.0.0.1:9/v1", temperature=0, seed=None, max_tokens=10
    )

    def run(self, payload):
        ticket = current_budget().reserve(90, 10)
        try:
            time.sleep({0: 0.3, 1: 2.0}.get(payload["i"], 0.1))
        finally:
            current_budget().settle(ticket, 90, 10)
        if payload["i"] == 0:
            raise RateLimitedError("You exceeded your current quota", quota=True)
        return ScoreResult(self.id, 1.0, None, {})


def test_a_quota_pause_while_a_call_waits_for_the_calls_in_flight_is_no_budget_stop():
    # Cap 250 tokens, concurrency 3: items 0 and 1 hold 200; item 2's 100 more would pass 250, so it waits for them.
    # Item 0 spends its 100 and hits the quota: the run pauses, and item 2 (100 spent + 100 held + 100 > 250) is
    # refused because the run stopped, not because of the cap. The run is paused for the quota, not at the budget.
    items = [EvalItem(str(i), {"i": i}) for i in range(4)]
    result = run_evals(
        items, [_QuotaAtItemZero()], concurrency=3, preflight=False, budget=BudgetCaps(max_total_tokens=250)
    )
    assert result.status == "quota_exhausted"
    assert result.cap_reached is None and "budget" not in result.stop_reason
    assert [(o.item_index, o.status) for o in result.outcomes] == [(1, ScoreStatus.SCORED)]  # 0, 2, 3 left to do


class _TurnsJudge:
    """A judge-like scorer (it has judge settings): each call reserves a 10-token prompt and a 10-token reply. As
    ``first``, item 0's call is refused as if the run had stopped while it waited (StoppedWhileWaiting), though
    nothing stopped the run: the item returns early, before its second scorer's turn."""

    settings = SimpleNamespace(
        model_name="m", endpoint="http://127.0.0.1:9/v1", temperature=0, seed=None, max_tokens=10
    )

    def __init__(self, scorer_id: str, first: bool):
        self.id = scorer_id
        self.first = first

    def run(self, payload):
        if self.first and payload["i"] == 0:
            raise StoppedWhileWaiting("the run stopped while a judge call waited for the calls in flight", "x")
        current_budget().settle(current_budget().reserve(10, 10), 10, 10)
        return ScoreResult(self.id, 1.0, None, {})


def test_an_item_that_returns_early_ends_its_turns_so_later_items_are_not_kept_waiting():
    # Two judge scorers, so item 0 has two turns, (0, a) and (0, b); item 0 returns after a's call, and b's turn
    # must end too, or item 1's turn (after (0, b) in the order) waits for it, here for good: nothing stopped the run.
    items = [EvalItem(str(i), {"i": i}) for i in range(4)]
    scorers = [_TurnsJudge("a", first=True), _TurnsJudge("b", first=False)]
    cancel = threading.Event()
    done = []
    thread = threading.Thread(
        target=lambda: done.append(
            run_evals(
                items,
                scorers,
                concurrency=2,
                preflight=False,
                budget=BudgetCaps(max_total_tokens=10_000),
                cancel=cancel,
            )
        ),
        daemon=True,
    )
    thread.start()
    thread.join(10)
    kept_waiting = thread.is_alive()
    cancel.set()  # stops the waits (the budget's stopped says so) whatever happened
    thread.join(10)
    assert not kept_waiting
    assert [(o.item_index, o.scorer_id, o.status) for o in done[0].outcomes] == [
        (i, s, ScoreStatus.SCORED) for i in (1, 2, 3) for s in ("a", "b")
    ]


def test_first_reservations_are_taken_in_the_order_given_so_a_cap_admits_a_prefix():
    # $1 per million tokens, replies bounded at 10 tokens. Units of different sizes: prompt bounds 300, 100, 500 and
    # 20 tokens hold $0.00031, $0.00011, $0.00051 and $0.00003. Cap $0.0005: unit 0 fits ($0.00031); unit 1 too
    # ($0.00042); unit 2 would pass the cap ($0.00093), so it waits for 0 and 1, which spend 100 and 50 tokens
    # ($0.00015), and is refused then ($0.00015 + $0.00051 > $0.0005) with nothing in flight. Unit 3 ($0.00003) would
    # fit, but comes after 2: refused too. Started in reverse order, the units reserve in order all the same.
    budget = Budget(BudgetCaps(max_cost_usd=0.0005), price=Price(1.0, 1.0))
    bounds = [300, 100, 500, 20]
    budget.order(range(4))
    taken: dict[int, object] = {}
    held: dict[int, object] = {}

    def unit(n: int) -> None:
        with budget.turn(n) as ready:
            assert ready
            try:
                held[n] = budget.reserve(bounds[n], 10)
                taken[n] = "sent"
            except BudgetReached:
                taken[n] = "refused"

    threads = [threading.Thread(target=unit, args=(n,)) for n in (3, 2, 1, 0)]
    for thread in threads:
        thread.start()
    threads[2].join(5)  # unit 1 ends once it reserved
    threads[1].join(0.3)
    assert taken == {0: "sent", 1: "sent"}  # 2 waits for what 0 and 1 hold; 3 waits for 2's turn
    budget.settle(held[0], 90, 10)
    budget.settle(held[1], 40, 10)
    for thread in threads:
        thread.join(5)
    assert taken == {0: "sent", 1: "sent", 2: "refused", 3: "refused"}
    assert budget.calls == 2 and budget.cost_usd == pytest.approx(0.00015)
