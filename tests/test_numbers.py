"""signed_numbers: differences and intervals keep the digits that decide a verdict (worked by hand)."""

from __future__ import annotations

from scorers.analysis.compare import PairedComparison
from scorers.analysis.numbers import p_value_text, signed_number, signed_numbers


def test_ordinary_values_keep_the_usual_decimals():
    # 0.125, 0.1, 0.15 are all visible at 3 decimals: nothing is added.
    assert signed_numbers([0.125, 0.1, 0.15]) == ["+0.125", "+0.100", "+0.150"]
    assert signed_numbers([0.25, 0.1, 0.4], decimals=2) == ["+0.25", "+0.10", "+0.40"]


def test_small_values_get_enough_digits_to_be_read():
    # At 3 decimals all three read -0.000. log10(1.2e-5) = -4.92 -> first significant digit at the
    # 5th decimal, one more for the estimate's second digit -> 6 decimals; -9e-6 needs 6 as well.
    assert signed_numbers([-1.2e-5, -1.5e-5, -9e-6]) == ["-0.000012", "-0.000015", "-0.000009"]
    # An interval end that is exactly 0 stays 0 (unsigned) at the shared precision: 4e-4 needs 4 decimals
    # (its first digit); the estimate 0 asks for nothing.
    assert signed_numbers([0.0, -4e-4, 4e-4]) == ["0.0000", "-0.0004", "+0.0004"]


def test_tiny_values_turn_scientific():
    # 1.2e-10 would need 11 decimals, past MAX_DECIMALS = 8: scientific, two significant digits.
    assert signed_numbers([-1.2e-10, -2e-10, -1e-11]) == ["-1.2e-10", "-2.0e-10", "-1.0e-11"]


def test_none_and_one_value():
    assert signed_numbers([None, None, None]) == ["n/a", "n/a", "n/a"]
    assert signed_number(-0.25) == "-0.250"
    assert signed_number(-3e-5) == "-0.000030"  # 5th decimal first digit, +1 for a second digit


def test_a_mean_is_written_from_the_decimal_it_stands_for_half_away_from_zero():
    from scorers.core.base import decimal_text

    # (0.689 + 0.7) / 2 is 0.6945 by hand; in floats it comes out 0.6944999999999999, which f"{:.3f}" writes
    # 0.694. The decimal is honoured: 0.6945 → 0.695 (half away from zero), whichever float holds it.
    assert decimal_text((0.689 + 0.7) / 2) == decimal_text(0.6945) == "0.695"
    # 0.0045 is stored as 0.00449999999999999966...: still the half, 0.005 (f"{:.3f}" gives 0.004).
    assert decimal_text(0.0045) == "0.005"
    # 0.0005 → 0.001 and -0.0005 → -0.001 (away from zero); 0.00049 → 0.000.
    assert (decimal_text(0.0005), decimal_text(-0.0005), decimal_text(0.00049)) == ("0.001", "-0.001", "0.000")
    # A negative value that rounds to zero reads without a sign: -0.0004 → 0.000, not -0.000.
    assert decimal_text(-0.0004) == "0.000"
    # 1.0005 is 1.000499999999999989... in binary: the decimal half rounds up to 1.001.
    assert decimal_text(1.0005) == "1.001"
    assert decimal_text(0.125, 2) == "0.13" and decimal_text(7.0) == "7.000"


def test_a_numpy_mean_is_written_as_its_float():
    import numpy as np

    from scorers.core.base import decimal_text

    # A pandas mean is a numpy float (its repr "np.float64(0.6945)" is no decimal): the same digits as the float.
    assert (decimal_text(np.float64(0.6945)), decimal_text(np.float32(0.5))) == ("0.695", "0.500")


def test_signed_numbers_round_half_away_from_zero_as_decimal_text_does():
    # 0.0525 and -0.1235 are a hair below their halves in binary: f"{x:+.3f}" wrote +0.052 and -0.123.
    assert signed_numbers([0.0525, -0.1235, 0.1925]) == ["+0.053", "-0.124", "+0.193"]
    assert p_value_text(0.8245) == "0.825" and p_value_text(0.0004) == "< 0.001" and p_value_text(None) == "n/a"


def test_a_run_pairs_sentences_give_the_gates_digits():
    # Compare › Run vs run: the row-by-row sentence and the CI gate beside it write the same change, interval and p.
    comparison = PairedComparison("Prompt alignment", "B", "A", 40, 12, 16, 12, -0.0175, -0.2265, 0.1925, 0.824)
    summary = comparison.summary()
    assert "the average difference is -0.018 (95% bootstrap CI -0.227 to +0.193)." in summary
    assert "(Wilcoxon signed-rank test, p = 0.824)" in summary
    diff, low, high = signed_numbers([-0.0175, -0.2265, 0.1925])
    assert f"{diff} [{low}, {high}]" == "-0.018 [-0.227, +0.193]" and p_value_text(0.824) == "0.824"
