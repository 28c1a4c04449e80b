"""Formatting of differences and their intervals so the digits shown are the ones that decide.

A gate verdict or a "p < 0.001" rests on the exact difference and interval; rounded to a fixed
three decimals, a real change of about 1e-5 reads as ``-0.000 [-0.000, -0.000]`` next to FAIL.
:func:`signed_numbers` keeps the usual decimals for ordinary values and adds digits (or turns
to scientific notation) only when a value would otherwise round to zero.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scorers.core.base import decimal_text

#: Past this many decimals the numbers are written in scientific notation instead.
MAX_DECIMALS = 8


def signed_numbers(values: Sequence[float | None], decimals: int = 3) -> list[str]:
    """Format related numbers (an estimate and its interval) with a sign and a shared precision.

    Every value is written with ``decimals`` decimals unless a non-zero value would then round to
    zero: the precision then grows until each non-zero value shows its first significant digit and
    the first value (the estimate) shows two. Past :data:`MAX_DECIMALS` decimals all are written in
    scientific notation with two significant digits after the point's first.

    Args:
        values: the numbers, e.g. ``[mean_diff, ci_low, ci_high]``; None is written "n/a".
        decimals: the precision for ordinary values (>= 0).

    Returns:
        One string per value, in order: ``"+0.125"``, ``"-0.000012"``, ``"-1.2e-09"``; an exact zero
        is written without a sign (``"0.000"``); None is ``"n/a"``.

    Example:
        ``signed_numbers([-1.2e-5, -1.5e-5, -9e-6])`` is ``["-0.000012", "-0.000015", "-0.000009"]``.
    """
    nonzero = [(i, abs(v)) for i, v in enumerate(values) if v is not None and v != 0 and math.isfinite(v)]
    if any(round(a, decimals) == 0 for _, a in nonzero):
        # -exponent decimals put a's first significant digit last; one more for the estimate's second.
        # The exponent is read from a rounded to one digit, so 9.9999999e-6 counts as 1e-5.
        decimals = max(decimals, *(-int(f"{a:.0e}".split("e")[1]) + (i == 0) for i, a in nonzero))
    scientific = decimals > MAX_DECIMALS

    def one(value: float | None) -> str:
        if value is None:
            return "n/a"
        if value == 0:
            return f"{0:.{decimals}f}" if not scientific else "0"
        if scientific:
            return f"{value:+.1e}"
        text = decimal_text(value, decimals)  # half away from zero on the decimal, as every mean is written
        return text if text.startswith("-") or not value > 0 else f"+{text}"

    return [one(v) for v in values]


def p_value_text(p: float | None) -> str:
    """A p-value as the gate and the comparisons write it: ``"< 0.001"``, else 3 decimals (:func:`decimal_text`);
    ``"n/a"`` for None."""
    if p is None:
        return "n/a"
    return "< 0.001" if p < 0.001 else decimal_text(p, 3)


def signed_number(value: float | None, decimals: int = 3) -> str:
    """:func:`signed_numbers` of one value (e.g. one item's change)."""
    return signed_numbers([value], decimals)[0]


__all__ = ["MAX_DECIMALS", "p_value_text", "signed_number", "signed_numbers"]
