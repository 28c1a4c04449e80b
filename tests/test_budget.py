"""The run budget: the warning before a run whose cost cap is below the estimate (cost_cap_warning), the cap reached."""

import pytest

from scorers.core.budget import Budget, BudgetCaps, BudgetReached, cost_cap_warning
from scorers.core.pricing import Price


def test_cost_cap_warning_says_what_part_of_the_estimate_the_cap_covers():
    assert cost_cap_warning(None, 0.01, 10) is None  # no cap
    assert cost_cap_warning(0.02, 0.01, 10) is None  # covers the estimate
    assert cost_cap_warning(0.02, None, 10) is None  # estimate unknown
    # $0.01 for 10 calls: $0.001 a call; a $0.0025 cap is 25% of it, floor(0.0025 / 0.001) = 2 calls.
    text = cost_cap_warning(0.0025, 0.01, 10)
    assert "below the estimate of $0.01" in text and "about 25% of the judging (about 2 of 10 judge calls" in text
    # $0.00313785 for 30 calls: about $0.0001046 a call; a $0.00005 cap is below one call.
    text = cost_cap_warning(0.00005, 0.00313785, 30)
    assert "below one judge call" in text and "no judge call will be sent" in text


def test_cost_cap_warning_says_no_call_is_sent_when_the_cap_is_below_what_one_call_holds():
    # At $0.15 / $0.60 per million tokens a call of a 1,000-token prompt bound and no max output tokens (4,096)
    # holds 1,000 × 0.15e-6 + 4,096 × 0.6e-6 = $0.00015 + $0.0024576 = $0.0026076 ($0.00261) before it is sent.
    # A $0.001 cap: about 2 of 20 calls of the $0.00942 estimate ($0.000471 each), but none is sent.
    text = cost_cap_warning(0.001, 0.00942, 20, call_bound_usd=0.0026076)
    assert text.startswith("The cost cap of $0.001 is below what one judge call may cost, $0.00261, which the run")
    assert "no judge call will be sent" in text and "of 20 judge calls" not in text
    assert "Raise the cap above $0.00261, or set the judge's max output tokens" in text
    # A cap that covers the estimate ($0.001 for 2 calls) but not one call's bound sends nothing either.
    assert "no judge call will be sent" in cost_cap_warning(0.002, 0.001, 2, call_bound_usd=0.0026076)
    # A resumed run: $0.0001 spent, so a call needs a cap of $0.0027076 ($0.00271).
    text = cost_cap_warning(0.002, 0.01, 20, spent_usd=0.0001, call_bound_usd=0.0026076)
    assert "leaves $0.0019 after what the run spent ($0.0001), below what one judge call may cost" in text
    assert "Raise the cap above $0.00271," in text
    assert cost_cap_warning(0.02, 0.01, 20, call_bound_usd=0.0026076) is None  # covers the estimate and a call


def test_cost_cap_warnings_share_and_calls_are_rounded_the_same_way():
    # $0.001 of a $0.0102 estimate for 20 calls: 9.8%, 1.96 calls: both rounded down, 9% and 1 (not 10% and 1).
    text = cost_cap_warning(0.001, 0.0102, 20, call_bound_usd=0.0005)
    assert "it covers about 9% of the judging (about 1 of 20 judge calls;" in text
    # $0.00005 of a $0.01 estimate for 1,000 calls: 0.5%, 5 calls.
    assert "it covers under 1% of the judging (about 5 of 1,000 judge calls;" in cost_cap_warning(0.00005, 0.01, 1000)


def test_cost_cap_warning_counts_what_a_resumed_run_spent():
    # A $0.003 cap on a run that spent $0.0027 leaves $0.0003: 30% of a $0.001 estimate for 10 calls, 3 calls.
    text = cost_cap_warning(0.003, 0.001, 10, spent_usd=0.0027)
    assert text.startswith("The cost cap of $0.003 leaves $0.0003 after what the run spent ($0.0027), below the")
    assert "about 30% of the judging (about 3 of 10 judge calls" in text
    assert cost_cap_warning(0.0037, 0.001, 10, spent_usd=0.0027) is None  # $0.001 left covers the estimate
    # A cap below the spend: no call, and the spend named (not "below one judge call").
    text = cost_cap_warning(0.000001, 0.001, 10, spent_usd=0.0027)
    assert text.startswith("The cost cap of $0.000001 is already below what the run spent ($0.0027;")
    assert "Raise the cap above $0.0027" in text


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
