"""The regression gate's defaults, apart from :mod:`scorers.analysis.gate` so that the command
line can show them in its help without importing pandas."""

DEFAULT_MAX_UNSCORED_SHARE = 0.1
"""Default largest share of the baseline's items not scored (on either side) before a scorer is undecided."""

DEFAULT_TOP = 5
"""Default number of most-regressed items listed per scorer."""
