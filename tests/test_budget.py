"""The warning shown before a run whose cost cap is below the estimate (scorers.core.budget.cost_cap_warning)."""

from scorers.core.budget import cost_cap_warning


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
