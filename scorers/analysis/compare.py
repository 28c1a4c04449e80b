"""Compare variants (prompts, models) or runs: leaderboards, paired tests, per-dimension and per-row deltas.

Every function reads a results frame in the shape of :func:`scorers.runs.export.results_frame`
(one row per item × scorer: ``item_id``, ``scorer``, ``status``, ``score`` (NaN when not
scored), ``latency_s``, token counts, the texts, ``group:<name>`` columns and
``analysis``). Failures are counted, never averaged: a row that was not scored has no
score, and a pair is compared only when both of its responses were scored.

Statistics, and where they come from:

- :func:`bootstrap_ci`: the percentile bootstrap of the mean (Efron & Tibshirani, *An
  Introduction to the Bootstrap*, 1993, ch. 13), with ``numpy.random.default_rng(seed)``;
  the last few intervals are kept (the Compare page's run diff and gate ask for the same one).
- :func:`paired`: wins, ties and losses per question, the mean paired difference with a
  paired bootstrap interval (resampling questions, i.e. the differences), and the
  Wilcoxon signed-rank test (``scipy.stats.wilcoxon``, ``zero_method="wilcox"``: ties
  are dropped), reported only with at least :data:`MIN_WILCOXON_PAIRS` non-zero differences.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from scorers.analysis.numbers import p_value_text, signed_numbers
from scorers.core.errors import ScorerError, ScoreStatus, outcome_status_label
from scorers.core.judge import JudgeSettings
from scorers.runs.export import results_frame
from scorers.runs.runner import EvalItem, EvalRunResult, load_run, stored_scorer_options
from scorers.runs.store import Store
from scorers.runs.table import RunTable, dimension_column, dimension_label, load_run_table

MIN_WILCOXON_PAIRS = 6
"""Fewest non-zero differences for which :func:`paired` reports a Wilcoxon p-value.

With 5 or fewer, the smallest two-sided p the exact test can give is 2/2^5 = 0.0625:
it could never show a difference, so no p-value is given and the summary says why.
"""

SIGNIFICANCE = 0.05
"""The p-value under which :meth:`PairedComparison.summary` calls a difference unlikely to be chance."""

TIE_TOLERANCE = 1e-9
"""Two scores closer than this count as a tie (float noise is not a win)."""


def bootstrap_ci(
    values: Sequence[float] | np.ndarray, *, confidence: float = 0.95, n_resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean.

    Algorithm (so it can be reproduced): ``rng = numpy.random.default_rng(seed)``;
    ``idx = rng.integers(0, n, size=(n_resamples, n))``; the resampled means are
    ``values[idx].mean(axis=1)``; the interval is their ``numpy.quantile`` (linear
    interpolation) at ``(1 − confidence) / 2`` and ``(1 + confidence) / 2``.
    When every value is the same, the interval is that value at both ends.
    The resamples are drawn a block of rows at a time (the same numbers as one draw, in
    bounded memory), and the last :data:`BOOTSTRAP_CACHE_SIZE` intervals are kept by
    (values, confidence, n_resamples, seed).

    Args:
        values: finite numbers, at least one.
        confidence: in (0, 1), e.g. 0.95 for a 95% interval.
        n_resamples: bootstrap resamples, >= 1.
        seed: the generator's seed (the same inputs give the same interval).

    Returns:
        ``(low, high)``.

    Raises:
        ValueError: no values, a non-finite value, or a parameter out of range.

    >>> bootstrap_ci([0.5, 0.5, 0.5])
    (0.5, 0.5)
    """
    data = np.asarray(values, dtype=float)
    if data.ndim != 1 or data.size == 0:
        raise ValueError("bootstrap_ci needs a non-empty 1-D sequence of numbers")
    if not np.all(np.isfinite(data)):
        raise ValueError("bootstrap_ci needs finite values (drop the unscored ones first)")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if np.all(data == data[0]):
        return float(data[0]), float(data[0])
    key = (hashlib.blake2b(data.tobytes(), digest_size=16).digest(), data.size, confidence, n_resamples, seed)
    with _BOOTSTRAP_LOCK:
        if key in _BOOTSTRAP_CACHE:
            _BOOTSTRAP_CACHE.move_to_end(key)
            return _BOOTSTRAP_CACHE[key]
    rng = np.random.default_rng(seed)
    # Row blocks of rng.integers(0, n, size=(n_resamples, n)): consecutive draws continue the
    # same stream, so the means are the same. Blocks of about 2**17 draws (a megabyte of indices and
    # of values) stay in the processor's cache: at 10,000 values a quarter faster than 2**20 int32 ones.
    block = max(1, _BOOTSTRAP_BLOCK // data.size)
    means = np.concatenate(
        [
            data[rng.integers(0, data.size, size=(min(block, n_resamples - start), data.size))].mean(axis=1)
            for start in range(0, n_resamples, block)
        ]
    )
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    interval = float(low), float(high)
    with _BOOTSTRAP_LOCK:
        _BOOTSTRAP_CACHE[key] = interval
        while len(_BOOTSTRAP_CACHE) > BOOTSTRAP_CACHE_SIZE:
            _BOOTSTRAP_CACHE.popitem(last=False)
    return interval


BOOTSTRAP_CACHE_SIZE = 64
"""How many bootstrap intervals :func:`bootstrap_ci` keeps (the least recently used goes first)."""

_BOOTSTRAP_BLOCK = 2**17  # resampled values drawn at a time
_BOOTSTRAP_CACHE: OrderedDict[tuple[Any, ...], tuple[float, float]] = OrderedDict()
_BOOTSTRAP_LOCK = threading.Lock()


def _require(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        groups = [c for c in frame.columns if str(c).startswith("group:")]
        raise ValueError(
            f"the results frame has no column(s) {', '.join(missing)} (group columns: {', '.join(groups) or 'none'}); "
            "build it with scorers.runs.export.results_frame(run_result, items)"
        )


def variant_label(value: Any) -> str:
    """A variant (or pair id) value as comparisons show it: text, ``"(blank)"`` when missing.

    >>> variant_label(None), variant_label(" "), variant_label(3)
    ('(blank)', '(blank)', '3')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)) or str(value).strip() == "":
        return "(blank)"
    return str(value)


def variant_labels(values: pd.Series) -> pd.Series:
    """:func:`variant_label` of every value: once per distinct text of a text column, else over a plain list
    (``Series.map`` is slow on pyarrow strings).

    Returns:
        Object-dtype text labels, indexed as ``values``.
    """
    if isinstance(values.dtype, pd.StringDtype):  # only text: equal values are the same text
        codes, uniques = pd.factorize(values)  # a missing value has code −1: the last label
        # variant_label of a text: the text, "(blank)" when only spaces (one call per value is slow at 10,000 ids)
        labels = np.array([*(u if u.strip() else "(blank)" for u in uniques.tolist()), "(blank)"], dtype=object)
        return pd.Series(labels[codes], index=values.index, dtype=object)
    return pd.Series([variant_label(v) for v in values.tolist()], index=values.index, dtype=object)


def _scored(part: pd.DataFrame) -> pd.Series:
    return part.loc[part["status"] == ScoreStatus.SCORED.value, "score"].dropna().astype(float)


LEADERBOARD_COLUMNS = [
    "variant",
    "scorer",
    "mean",
    "ci_low",
    "ci_high",
    "n_scored",
    "n_failed",
    "prompt_tokens",
    "completion_tokens",
    "n_cached",
    "cost_usd",
    "latency_s",
]


def leaderboard(
    frame: pd.DataFrame,
    *,
    group_col: str = "group:variant",
    costs: Mapping[str, float | None] | None = None,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> pd.DataFrame:
    """Per variant × scorer: the mean score with its bootstrap interval, counts, tokens, cost and latency.

    Args:
        frame: a results frame (:func:`scorers.runs.export.results_frame`) with ``group_col``.
        group_col: the column naming the variant, e.g. ``"group:variant"`` or ``"group:model"``.
        costs: variant → USD cost, e.g. :func:`scorers.analysis.generate.generation_costs` (the cost
            of generating that variant's responses at list prices, None when the model's
            price is unknown); None to leave the cost unknown.
        confidence, n_resamples, seed: for :func:`bootstrap_ci`.

    Returns:
        Columns ``variant`` (text, ``"(blank)"`` for a missing value), ``scorer``,
        ``mean`` / ``ci_low`` / ``ci_high`` (NaN when nothing was scored; the interval
        collapses to the mean with one score), ``n_scored``, ``n_failed``,
        ``prompt_tokens`` and ``completion_tokens`` (the tokens of the judge calls made for these
        outcomes), ``n_cached`` (outcomes whose judge reply came from the cache: no call was made, so
        they add no tokens; 0 when the frame has no boolean ``cached`` column),
        ``cost_usd`` (from ``costs``, or None), ``latency_s`` (mean seconds per item
        for the scorer). Sorted by scorer, then mean (best first in the scorer's direction:
        lowest first for toxicity, bias, hallucination), then variant.

    Raises:
        ValueError: the frame lacks a needed column.
    """
    _require(frame, [group_col, "scorer", "status", "score"])
    rows = []
    keys = variant_labels(frame[group_col])
    for (variant, scorer), part in frame.assign(_variant=keys).groupby(["_variant", "scorer"], sort=True):
        scores = _scored(part)
        if len(scores):
            mean = float(scores.mean())
            low, high = bootstrap_ci(scores.to_numpy(), confidence=confidence, n_resamples=n_resamples, seed=seed)
        else:
            mean = low = high = float("nan")
        rows.append(
            {
                "variant": variant,
                "scorer": scorer,
                "mean": mean,
                "ci_low": low,
                "ci_high": high,
                "n_scored": int(len(scores)),
                "n_failed": int((part["status"] != ScoreStatus.SCORED.value).sum()),
                "prompt_tokens": int(part["prompt_tokens"].sum()) if "prompt_tokens" in part else 0,
                "completion_tokens": int(part["completion_tokens"].sum()) if "completion_tokens" in part else 0,
                "n_cached": int(part["cached"].astype(bool).sum()) if "cached" in part else 0,
                "cost_usd": (costs or {}).get(variant),
                "latency_s": float(part["latency_s"].mean()) if "latency_s" in part and len(part) else float("nan"),
            }
        )
    out = pd.DataFrame(rows, columns=LEADERBOARD_COLUMNS)
    if out.empty:
        return out
    out["cost_usd"] = out["cost_usd"].astype(object).where(out["cost_usd"].notna(), None)
    # Best first in each scorer's direction: rank by the mean made "higher is better".
    rank = out["mean"].where(out["scorer"].map(_higher_is_better), -out["mean"])
    return (
        out.assign(_rank=rank)
        .sort_values(["scorer", "_rank", "variant"], ascending=[True, False, True], na_position="last")
        .drop(columns="_rank")
        .reset_index(drop=True)
    )


def _higher_is_better(scorer: str) -> bool:
    from scorers.catalogue.registry import higher_is_better

    return higher_is_better(scorer)


@dataclass(frozen=True)
class PairedComparison:
    """Two variants compared question by question on one scorer (see :func:`paired`).

    Attributes:
        scorer: the scorer id.
        a, b: the variants compared; differences are ``a − b``.
        n_pairs: questions where both responses were scored.
        wins, ties, losses: questions where a scored higher than, the same as (within
            :data:`TIE_TOLERANCE`), or lower than b.
        mean_diff: the mean of ``a − b`` over the pairs (None without pairs).
        ci_low, ci_high: the paired bootstrap interval of ``mean_diff`` (None without pairs).
        wilcoxon_p: the two-sided Wilcoxon signed-rank p-value, or None (see ``note``).
        note: why there is no p-value, or "".
        n_unpaired: questions left out because only one of the two responses was scored.
        confidence: the interval's confidence level.
        higher_is_better: False for scorers where lower is better (toxicity, bias ...).
        differences: ``a − b`` per pair, in ``pair_ids`` order.
        pair_ids: the pair (row) ids.
        noun: what a and b are, in the sentences (``"variant"``; ``"run"`` for two stored runs).
        unit: what a pair is, in the sentences (``"question"``; ``"item"`` where the rows are not questions).
        labels: how the sentences name a and b (say ``("run B (v2.csv)", "run A (v1.csv)")``); None:
            ``"Variant <a>"`` and ``"<b>"``.
    """

    scorer: str
    a: str
    b: str
    n_pairs: int
    wins: int
    ties: int
    losses: int
    mean_diff: float | None
    ci_low: float | None
    ci_high: float | None
    wilcoxon_p: float | None
    note: str = ""
    n_unpaired: int = 0
    confidence: float = 0.95
    higher_is_better: bool = True
    differences: tuple[float, ...] = field(default=(), repr=False)
    pair_ids: tuple[str, ...] = field(default=(), repr=False)
    noun: str = "variant"
    unit: str = "question"
    labels: tuple[str, str] | None = None

    @property
    def ci(self) -> tuple[float, float] | None:
        """``(ci_low, ci_high)``, or None without pairs."""
        return None if self.ci_low is None or self.ci_high is None else (self.ci_low, self.ci_high)

    @property
    def significant(self) -> bool:
        """True when the Wilcoxon p-value is below :data:`SIGNIFICANCE`."""
        return self.wilcoxon_p is not None and self.wilcoxon_p < SIGNIFICANCE

    def summary(self) -> str:
        """A plain-English account for a stakeholder, honest about chance and small samples.

        >>> PairedComparison("s", "A", "B", 0, 0, 0, 0, None, None, None, None).summary()
        'Variant A and B cannot be compared on s: no question has a scored response from both.'
        """
        first, b = self.labels or (f"Variant {self.a}", self.b)
        a = first[:1].upper() + first[1:]
        unit, units = self.unit, f"{self.unit}s"
        if self.n_pairs == 0:
            return f"{a} and {b} cannot be compared on {self.scorer}: no {unit} has a scored response from both."
        counted = unit if self.n_pairs == 1 else units
        left_out = (
            (
                f" {self.n_unpaired} more "
                + (
                    f"{unit} was left out because it lacks"
                    if self.n_unpaired == 1
                    else f"{units} were left out because they lack"
                )
                + " a scored result from one of the two."
            )
            if self.n_unpaired
            else ""
        )
        direction = "" if self.higher_is_better else f" (for {self.scorer}, lower is better)"
        if self.wins == 0 and self.losses == 0:
            return f"{a} and {b} scored the same on all {self.n_pairs} {counted}{direction}.{left_out}"
        ties = "no ties" if self.ties == 0 else f"{self.ties} tie" + ("" if self.ties == 1 else "s")
        level = f"{self.confidence:.0%}"
        diff, low, high = signed_numbers([self.mean_diff, self.ci_low, self.ci_high])
        head = (
            f"{a} scored higher than {b} on {self.wins} of {self.n_pairs} {counted} and lower on "
            f"{self.losses} ({ties}){direction}; the average difference is {diff} "
            f"({level} bootstrap CI {low} to {high})."
        )
        # The interval is the bootstrap's, of the average difference; the p-value is the Wilcoxon signed-rank test's,
        # of the ranks of the differences. They can disagree: each sentence names where its number comes from.
        test = f"Wilcoxon signed-rank test, {_p_text(self.wilcoxon_p)}" if self.wilcoxon_p is not None else ""
        excludes_zero = self.ci is not None and (self.ci[0] > 0 or self.ci[1] < 0)
        if self.wilcoxon_p is None:
            verdict = f" {self.note}" if self.note else ""
        elif self.significant and excludes_zero:
            verdict = f" A difference this large would be unlikely if the two {self.noun}s were equally good ({test})."
        elif self.significant:
            verdict = (
                f" The evidence is mixed: the signed-rank test finds a difference this large unlikely if the two "
                f"{self.noun}s were equally good ({test}), but the {level} bootstrap interval of the average "
                f"difference includes 0; more {units} would settle it."
            )
        elif excludes_zero:
            verdict = (
                f" The evidence is mixed: the {level} bootstrap interval of the average difference leaves out 0, but "
                f"the signed-rank test does not show that either {self.noun} is better ({test}); more {units} would "
                "settle it."
            )
        else:
            verdict = (
                f" A difference this large could easily arise by chance if the two {self.noun}s were equally "
                f"good ({test}), so these {units} do not show that either is better."
            )
        return head + verdict + left_out

    def to_dict(self) -> dict[str, Any]:
        """The statistics as plain data (for tables and JSON), without the per-pair differences."""
        return {
            "scorer": self.scorer,
            "a": self.a,
            "b": self.b,
            "n_pairs": self.n_pairs,
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "mean_diff": self.mean_diff,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "wilcoxon_p": self.wilcoxon_p,
            "n_unpaired": self.n_unpaired,
            "note": self.note,
            "summary": self.summary(),
        }


def _p_text(p: float) -> str:
    """``"p < 0.001"`` or ``"p = 0.824"``: the digits the gate gives the same p-value (:func:`p_value_text`)."""
    text = p_value_text(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def _pairs(frame: pd.DataFrame, scorer: str, a: str, b: str, group_col: str, pair_col: str) -> tuple[pd.DataFrame, int]:
    """Rows ``pair_id``, ``a``, ``b`` (scores) of the pairs scored for both, and the number left unpaired."""
    _require(frame, [group_col, pair_col, "scorer", "status", "score"])
    part = frame[frame["scorer"] == scorer]
    part = part.assign(_variant=variant_labels(part[group_col]), _pair=variant_labels(part[pair_col]))
    part = part[part["_variant"].isin([a, b])]
    duplicated = part.duplicated(["_pair", "_variant"], keep=False)
    if duplicated.any():
        first = part.loc[duplicated, ["_pair", "_variant"]].iloc[0]
        raise ValueError(
            f"{pair_col} {first['_pair']!r} has more than one {scorer} result for variant {first['_variant']!r}; "
            f"pairs need one response per variant and {pair_col}"
        )
    scored = part[(part["status"] == ScoreStatus.SCORED.value) & part["score"].notna()]
    table = scored.pivot(index="_pair", columns="_variant", values="score")
    for name in (a, b):
        if name not in table.columns:
            table[name] = np.nan
    complete = table[[a, b]].dropna()
    all_pairs = set(part["_pair"].tolist())
    wide = pd.DataFrame(
        {
            "pair_id": complete.index.astype(str),
            "a": complete[a].astype(float).to_numpy(),
            "b": complete[b].astype(float).to_numpy(),
        }
    )
    return wide, len(all_pairs) - len(wide)


def paired(
    frame: pd.DataFrame,
    scorer: str,
    a: str,
    b: str,
    *,
    group_col: str = "group:variant",
    pair_col: str = "group:row_id",
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> PairedComparison:
    """Compare two variants question by question on one scorer.

    A pair is the two results with the same ``pair_col`` value (the dataset row) for
    variants ``a`` and ``b``; it counts only when both were scored. ``d = score_a − score_b``.

    Args:
        frame: a results frame (:func:`scorers.runs.export.results_frame`).
        scorer: the scorer id (the ``scorer`` column).
        a, b: the two variants (values of ``group_col``).
        group_col: the column naming the variant.
        pair_col: the column naming the dataset row a response answers.
        confidence, n_resamples, seed: the paired bootstrap of ``mean(d)`` (:func:`bootstrap_ci` of d).

    Returns:
        The :class:`PairedComparison`: wins (d > 0), ties (|d| <= :data:`TIE_TOLERANCE`),
        losses, ``mean_diff``, its interval and the Wilcoxon signed-rank p-value
        (``scipy.stats.wilcoxon(d, zero_method="wilcox")``, two-sided), which is None
        with fewer than :data:`MIN_WILCOXON_PAIRS` non-zero differences (``note`` says so).

    Raises:
        ValueError: a missing column, ``a == b``, or two results of one variant for the same row.
    """
    if a == b:
        raise ValueError(f"compare two different variants, got {a!r} twice")
    pairs, unpaired = _pairs(frame, scorer, a, b, group_col, pair_col)
    return _paired_statistics(pairs, unpaired, scorer, a, b, confidence=confidence, n_resamples=n_resamples, seed=seed)


def _paired_statistics(
    pairs: pd.DataFrame,
    unpaired: int,
    scorer: str,
    a: str,
    b: str,
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
    noun: str = "variant",
    unit: str = "question",
    labels: tuple[str, str] | None = None,
) -> PairedComparison:
    """:func:`paired`'s statistics of the pairs (``pair_id``, ``a`` and ``b`` scores, sorted by ``pair_id``);
    ``noun``, ``unit`` and ``labels``: the words of the sentences (:class:`PairedComparison`)."""
    d = (pairs["a"] - pairs["b"]).to_numpy(dtype=float)
    d = np.where(np.abs(d) <= TIE_TOLERANCE, 0.0, d)
    common = {
        "scorer": scorer,
        "a": a,
        "b": b,
        "n_unpaired": unpaired,
        "confidence": confidence,
        "higher_is_better": _higher_is_better(scorer),
        "noun": noun,
        "unit": unit,
        "labels": labels,
    }
    if d.size == 0:
        return PairedComparison(
            n_pairs=0,
            wins=0,
            ties=0,
            losses=0,
            mean_diff=None,
            ci_low=None,
            ci_high=None,
            wilcoxon_p=None,
            note=f"No {unit} has a scored response from both {noun}s.",
            **common,
        )
    low, high = bootstrap_ci(d, confidence=confidence, n_resamples=n_resamples, seed=seed)
    nonzero = int(np.count_nonzero(d))
    p: float | None = None
    if nonzero == 0:
        note = f"The scores are equal on every {unit}, so there is no difference to test."
    elif nonzero < MIN_WILCOXON_PAIRS:
        note = (
            f"Only {nonzero} {f'{unit} has' if nonzero == 1 else f'{unit}s have'} different scores, too few "
            f"to tell whether the difference is more than chance (a signed-rank test needs at least "
            f"{MIN_WILCOXON_PAIRS})."
        )
    else:
        note = ""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "exact p-value unavailable with ties": normal approx.
            p = float(stats.wilcoxon(d, zero_method="wilcox").pvalue)
    return PairedComparison(
        n_pairs=int(d.size),
        wins=int((d > 0).sum()),
        ties=int((d == 0).sum()),
        losses=int((d < 0).sum()),
        mean_diff=float(d.mean()),
        ci_low=low,
        ci_high=high,
        wilcoxon_p=p,
        note=note,
        differences=tuple(d.tolist()),
        pair_ids=tuple(pairs["pair_id"].tolist()),
        **common,
    )


def _generic_dimensions(analysis: Mapping[str, Any]) -> dict[str, float]:
    """The 0..1 parts of an analysis of a scorer the catalogue does not know (a custom judge).

    Only values named as scores count: ``{"clarity": {"score": x}}`` parts and top-level
    keys ending in "score" (``depthScore``), never counts or flags that happen to lie in [0, 1].
    """
    out: dict[str, float] = {}
    for key, value in analysis.items():
        name = str(key)
        if name in ("rawScore", "score"):
            continue
        if isinstance(value, Mapping):
            value = value.get("score")
        elif not name.lower().endswith("score"):
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and 0 <= value <= 1:
            out[name] = float(value)
    return out


def dimension_splitter(scorer: str, options: Mapping[str, Any] | None = None, *, store: Store | None = None):
    """The ``dimension_scores(analysis)`` function of a scorer, or None when it has none.

    The scorer is built (with keyless judge settings: no call is made) only to find it.
    """
    from scorers.catalogue.registry import create_scorer

    try:
        built = create_scorer(scorer, dict(options or {}), settings=JudgeSettings(), store=store)
    except (ScorerError, KeyError, ValueError):
        return None
    split = getattr(built, "dimension_scores", None)
    return split if callable(split) else None


def dimension_means(
    frame: pd.DataFrame,
    scorer: str,
    group_col: str = "group:variant",
    *,
    options: Mapping[str, Any] | None = None,
    store: Store | None = None,
) -> pd.DataFrame:
    """Per variant × dimension: the mean 0..1 dimension score of the scored items.

    Dimensions come from the scorer's ``dimension_scores`` (``scorers.catalogue.registry.SCORERS``,
    built with ``options``). A catalogue scorer without one has no dimensions (an empty
    frame); for any other scorer (a custom judge) the analysis's ``{"name": {"score": x}}``
    parts and top-level ``...Score`` numbers in [0, 1] are used. An analysis the splitter
    cannot read is skipped.

    Args:
        frame: a results frame with ``analysis`` (:func:`scorers.runs.export.results_frame`).
        scorer: the scorer id.
        group_col: the column naming the variant.
        options: the scorer's options, for scorers whose dimensions depend on them.
        store: where saved judges live, for ``judge:`` scorer ids.

    Returns:
        Columns ``variant``, ``dimension`` (the name), ``label`` (readable, see
        :func:`dimension_label`), ``mean``, ``n`` (items with that dimension), in order
        of first appearance.

    Raises:
        ValueError: the frame lacks a needed column.
    """
    _require(frame, [group_col, "scorer", "status", "analysis"])
    from scorers.catalogue.registry import SCORERS

    split = dimension_splitter(scorer, options, store=store)
    if split is None:
        if scorer in SCORERS:
            return pd.DataFrame(columns=["variant", "dimension", "label", "mean", "n"])
        split = _generic_dimensions
    values: dict[tuple[str, str], list[float]] = {}
    part = frame[(frame["scorer"] == scorer) & (frame["status"] == ScoreStatus.SCORED.value)]
    for variant, analysis in zip(variant_labels(part[group_col]), part["analysis"], strict=True):
        if not isinstance(analysis, Mapping):
            continue
        try:
            dims = split(analysis)
        except (KeyError, TypeError, ValueError):
            continue
        for name, value in dims.items():
            values.setdefault((variant, name), []).append(float(value))
    rows = [
        {"variant": v, "dimension": d, "label": dimension_label(d), "mean": float(np.mean(x)), "n": len(x)}
        for (v, d), x in values.items()
    ]
    return pd.DataFrame(rows, columns=["variant", "dimension", "label", "mean", "n"])


def rows_by_difference(
    frame: pd.DataFrame,
    scorer: str,
    a: str,
    b: str,
    *,
    group_col: str = "group:variant",
    pair_col: str = "group:row_id",
    limit: int | None = None,
) -> pd.DataFrame:
    """The questions where two variants' scores differ most, with both responses side by side.

    Args:
        frame: a results frame with the texts (:func:`scorers.runs.export.results_frame` with items).
        scorer: the scorer id.
        a, b: the two variants.
        group_col, pair_col: as for :func:`paired`.
        limit: keep the first ``limit`` rows; None for all.

    Returns:
        Columns ``row_id``, ``input``, ``ground_truth``, ``score_a``, ``score_b``, ``diff``
        (a − b), ``abs_diff``, ``output_a``, ``output_b``, ``reason_a``, ``reason_b``: one
        row per question both responses were scored on, sorted by ``abs_diff`` (largest
        first), then ``row_id``.

    Raises:
        ValueError: as for :func:`paired`.
    """
    pairs, _ = _pairs(frame, scorer, a, b, group_col, pair_col)
    part = frame[frame["scorer"] == scorer]
    part = part.assign(_variant=variant_labels(part[group_col]), _pair=variant_labels(part[pair_col]))

    def texts(variant: str, column: str) -> dict[str, Any]:
        rows = part[part["_variant"] == variant]
        if column not in rows.columns:
            return {}
        return dict(zip(rows["_pair"], rows[column], strict=True))

    out = pairs.rename(columns={"pair_id": "row_id", "a": "score_a", "b": "score_b"})
    out["diff"] = out["score_a"] - out["score_b"]
    out["abs_diff"] = out["diff"].abs()
    inputs_a, inputs_b = texts(a, "input"), texts(b, "input")
    truth_a, truth_b = texts(a, "ground_truth"), texts(b, "ground_truth")
    out["input"] = [inputs_a.get(r, inputs_b.get(r)) for r in out["row_id"]]
    out["ground_truth"] = [truth_a.get(r, truth_b.get(r)) for r in out["row_id"]]
    for side, variant in (("a", a), ("b", b)):
        outputs, reasons = texts(variant, "output"), texts(variant, "reason")
        out[f"output_{side}"] = [outputs.get(r) for r in out["row_id"]]
        out[f"reason_{side}"] = [reasons.get(r) for r in out["row_id"]]
    out = out.sort_values(["abs_diff", "row_id"], ascending=[False, True], ignore_index=True)
    columns = [
        "row_id",
        "input",
        "ground_truth",
        "score_a",
        "score_b",
        "diff",
        "abs_diff",
        "output_a",
        "output_b",
        "reason_a",
        "reason_b",
    ]
    out = out[columns]
    return out.head(limit).reset_index(drop=True) if limit is not None else out


@dataclass(frozen=True)
class RunDiff:
    """Two stored runs compared item by item (see :func:`run_diff`).

    Attributes:
        run_a, run_b: the run ids; deltas are ``b − a`` (how run b changed from run a).
        name_a, name_b: the runs' display names.
        same_dataset: True when both runs have the same item ids and each item the same prompt, system message
            and ground truth (its response may differ: that is what two runs of a dataset compare).
        dataset_note: what differs between the datasets ("" when they are the same).
        only_in_a, only_in_b: item ids in one run only.
        changed_inputs: item ids in both runs whose prompt, system message or ground truth differs.
        changed_responses: the other item ids in both runs whose response differs (a note, not another dataset).
        scorers: the scorer ids both runs have, scored with the same options: the ones compared.
        scorers_only_in_a, scorers_only_in_b: scorer ids of one run only.
        scorers_unlike: scorer id → the options the runs gave it differently
            (:func:`scorers.catalogue.registry.scoring_differences`), for the scorers of both runs
            that are not compared because their scores do not measure the same thing.
        rows: one row per matched item × common scorer: ``item_id``, ``scorer``,
            ``item_index_a``, ``item_index_b`` (the item's position in each run), ``status_a``,
            ``status_b``, ``score_a``, ``score_b`` (NaN when not scored), ``delta`` (NaN unless
            both were scored: an outcome that was not scored is never a 0), ``improvement``
            (``delta`` signed so that a positive value is better in the scorer's direction:
            ``−delta`` for toxicity, bias, hallucination). The texts are read for the rows
            asked for by :meth:`with_texts`.
        dimensions: ``scorer``, ``dimension``, ``label``, ``mean_a``, ``mean_b``, ``delta``.
        regressions: ``rows`` that got worse in the scorer's direction (improvement < 0), worst first.
        improvements: ``rows`` that got better (improvement > 0), best first.
        comparisons: per common scorer, the :class:`PairedComparison` of run b against run a
            (``a`` = run b's name, ``b`` = run a's name, so a positive difference is an improvement).
        tables: the two runs in columns (run a's, run b's), where :meth:`with_texts` reads the texts.
    """

    run_a: str
    run_b: str
    name_a: str
    name_b: str
    same_dataset: bool
    dataset_note: str
    only_in_a: list[str]
    only_in_b: list[str]
    changed_inputs: list[str]
    changed_responses: list[str]
    scorers: list[str]
    scorers_only_in_a: list[str]
    scorers_only_in_b: list[str]
    rows: pd.DataFrame
    dimensions: pd.DataFrame
    regressions: pd.DataFrame
    improvements: pd.DataFrame
    comparisons: dict[str, PairedComparison]
    tables: tuple[RunTable, RunTable] = field(repr=False, compare=False)
    scorers_unlike: dict[str, list[str]] = field(default_factory=dict)

    def with_texts(self, rows: pd.DataFrame) -> pd.DataFrame:
        """Some of :attr:`rows` (e.g. one page of :attr:`regressions`) with their texts, read from the store.

        Returns:
            ``rows`` with ``input`` (run a's user prompt), ``output_a`` and ``output_b`` (the
            responses in run a and run b) added, None where an item has none.
        """
        texts_a = self.tables[0].texts(rows["item_index_a"].tolist())
        texts_b = self.tables[1].texts(rows["item_index_b"].tolist())

        def column(texts: pd.DataFrame, name: str) -> np.ndarray:
            values = texts[name].astype(object)
            return values.where(values.notna(), None).to_numpy()

        return rows.assign(
            input=column(texts_a, "input"), output_a=column(texts_a, "output"), output_b=column(texts_b, "output")
        )


def _sample(ids: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(repr(i) for i in ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


StoredRun = tuple[dict[str, Any], list[EvalItem], EvalRunResult, pd.DataFrame]
"""A stored run read back: its record, items, outcomes and :func:`results_frame` (:func:`read_stored_run`)."""


def read_stored_run(store: Store, run_id: str) -> StoredRun:
    """A stored run's record, items and outcomes (:func:`scorers.load_run`) with its :func:`results_frame`
    and a boolean ``cached`` column (the judge's reply came from the cache, see :func:`leaderboard`).

    What :func:`run_frames`, :func:`run_diff` and :func:`scorers.analysis.gate.side_from_run`
    read of a run; a caller that keeps it (the dashboard, per version of the run's outcomes)
    passes its own ``read`` to them. The frame is shared: they never modify it.

    Raises:
        KeyError: the run is not in the store.
    """
    run, items, result = load_run(store, run_id)
    frame = results_frame(result, items)
    frame["cached"] = [o.cached for o in result.outcomes]  # the judge's reply came from the cache: no tokens spent
    return run, items, result, frame


def run_frames(
    store: Store, run_a: str, run_b: str, *, read: Callable[[str], StoredRun] | None = None
) -> tuple[dict[str, Any], dict[str, Any], pd.DataFrame]:
    """Both runs' results in one frame: their :func:`results_frame` rows with a ``group:run`` column.

    ``group:run`` holds the run's display name (with its id when both names are equal),
    ready for :func:`leaderboard`, :func:`paired` (``group_col="group:run"``,
    ``pair_col="item_id"``) and :func:`rows_by_difference`.

    Args:
        store: the store both runs are in.
        run_a: the first run's id.
        run_b: the second run's id.
        read: run id → :data:`StoredRun` (default :func:`read_stored_run` from ``store``).

    Returns:
        ``(run record a, run record b, frame)``.

    Raises:
        KeyError: a run is not in the store.
    """
    records, frames = [], []
    for run_id in (run_a, run_b):
        run, _, _, frame = read(run_id) if read is not None else read_stored_run(store, run_id)
        records.append(run)
        frames.append(frame)
    names = [r["name"] for r in records]
    if names[0] == names[1]:
        names = [f"{r['name']} ({r['id']})" for r in records]
    combined = pd.concat([f.assign(**{"group:run": n}) for f, n in zip(frames, names, strict=True)], ignore_index=True)
    return records[0] | {"label": names[0]}, records[1] | {"label": names[1]}, combined


def table_outcomes(table: RunTable) -> pd.DataFrame:
    """A run's outcomes from its columns: ``item_index``, ``item_id``, ``scorer``, ``status``, ``score``.

    Ordered as :func:`scorers.load_run` orders them: by item, then by the run's scorer order.
    ``score`` is NaN when not scored (never 0).
    """
    results = table.results
    positions = results["item_index"].to_numpy()
    order = {sid: n for n, sid in enumerate(table.scorer_ids)}
    scorers = results["scorer"].astype(object)
    frame = pd.DataFrame(
        {
            "item_index": positions,
            "item_id": table.items["item_id"].astype(object).reindex(positions).to_numpy(),
            "scorer": scorers.to_numpy(),
            "status": results["status"].astype(object).to_numpy(),
            "score": results["score"].to_numpy(dtype=float),
            "_order": scorers.map(order).fillna(0).to_numpy(),
        }
    )
    return frame.sort_values(["item_index", "_order"], kind="stable", ignore_index=True).drop(columns="_order")


def _changed_items(
    store: Store, tables: tuple[RunTable, RunTable], pairs: Sequence[tuple[str, int, int]]
) -> tuple[list[str], list[str]]:
    """The item ids of ``pairs`` (item id, index in run a, index in run b) whose texts differ: (those whose prompt,
    system message or ground truth differs, the others whose response differs).

    The database first finds the pairs whose stored payloads are not the same (an equal payload has equal
    texts): a pair at the same position in both runs by comparing the two rows at that position, any other
    pair by its id's payload being in one run only. Only those items' texts are read and compared.
    """
    run_ids = [t.run["id"] for t in tables]
    differ_at: set[int] = set()
    if any(p[1] == p[2] for p in pairs):  # a join on the position: cheaper than grouping every payload
        sql = (
            "SELECT a.item_index FROM items a JOIN items b ON b.run_id = ? AND b.item_index = a.item_index"
            " WHERE a.run_id = ? AND a.payload <> b.payload"
        )
        differ_at = {row[0] for chunk in store.read_chunks(sql, run_ids[::-1]) for row in chunk}
    differ_ids: set[str] = set()
    if any(p[1] != p[2] for p in pairs):
        sql = "SELECT item_id FROM items WHERE run_id IN (?, ?) GROUP BY item_id, payload HAVING COUNT(*) = 1"
        differ_ids = {row["item_id"] for chunk in store.read_chunks(sql, run_ids) for row in chunk}
    suspects = [p for p in pairs if (p[1] in differ_at if p[1] == p[2] else p[0] in differ_ids)]
    if not suspects:
        return [], []
    fields = ["input", "system", "ground_truth", "output"]
    texts = []
    for table, side in zip(tables, (1, 2), strict=True):
        found = table.texts([p[side] for p in suspects])[fields].astype(object)
        texts.append(list(zip(*(found[c].where(found[c].notna(), None).tolist() for c in found), strict=True)))
    items = [p[0] for p, a, b in zip(suspects, *texts, strict=True) if a[:3] != b[:3]]
    responses = [p[0] for p, a, b in zip(suspects, *texts, strict=True) if a[:3] == b[:3] and a[3] != b[3]]
    return items, responses


def _dimension_means(store: Store, table: RunTable, scorer: str, options: Mapping[str, Any] | None) -> dict[str, float]:
    """Dimension name → mean 0..1 score of one scorer's scored outcomes in a run (see :func:`dimension_means`).

    From the table's dimension columns; for a scorer without any (a saved or custom judge), from
    its stored analyses as :func:`dimension_means` reads them.
    """
    columns = table.dimensions.get(scorer)
    if columns:
        mine = table.results.loc[table.results["scorer"] == scorer, columns]
        prefix = len(dimension_column(scorer, ""))
        means = {}
        for column in columns:
            values = mine[column].dropna().to_numpy(dtype=float)
            if values.size:
                means[column[prefix:]] = float(np.mean(values))
        return means
    results = table.results
    scored = results[(results["scorer"] == scorer) & (results["status"] == ScoreStatus.SCORED.value)]
    analyses = [json.loads(a) if isinstance(a, str) else None for a in scored["analysis"]]
    frame = pd.DataFrame(
        {"group:run": "run", "scorer": scorer, "status": ScoreStatus.SCORED.value, "analysis": analyses}
    )
    means = dimension_means(frame, scorer, "group:run", options=options, store=store)
    return dict(zip(means["dimension"], means["mean"], strict=True))


def run_diff(
    store: Store, run_a: str, run_b: str, *, seed: int = 0, table: Callable[[str], RunTable] | None = None
) -> RunDiff:
    """Compare two stored runs item by item: per-row and per-dimension deltas, regressions, improvements.

    Items are matched by ``item_id``; an id used more than once in a run is matched by its
    first outcome (the note says so). The runs should score the same dataset; when they do
    not (different item ids, or the same ids with a different prompt, system message or ground truth),
    ``same_dataset`` is False and ``dataset_note`` says what differs. Deltas are ``b − a``.
    Built from the runs' columns (:class:`scorers.runs.table.RunTable`), vectorised; the
    paired statistics are :func:`paired`'s (run b as ``a``, run a as ``b``, pairs by item id).

    Args:
        store: the store both runs are in.
        run_a: the earlier (baseline) run's id.
        run_b: the later run's id.
        seed: for the bootstrap intervals.
        table: run id → its :class:`~scorers.runs.table.RunTable` (default
            :func:`scorers.runs.table.load_run_table` from ``store``; the dashboard passes its cache).

    Returns:
        The :class:`RunDiff`.

    Raises:
        KeyError: a run is not in the store.
    """
    tables = tuple(table(r) if table is not None else load_run_table(store, r) for r in (run_a, run_b))
    rec_a, rec_b = tables[0].run, tables[1].run
    name_a, name_b = rec_a["name"], rec_b["name"]
    if name_a == name_b:
        name_a, name_b = f"{rec_a['name']} ({rec_a['id']})", f"{rec_b['name']} ({rec_b['id']})"
    fa, fb = table_outcomes(tables[0]), table_outcomes(tables[1])
    # The runs' items, scored or not: an item a stopped run never scored is still one of its items.
    first_a, first_b = (t.items["item_id"].astype(object) for t in tables)
    first_a, first_b = first_a[~first_a.duplicated()], first_b[~first_b.duplicated()]
    index_b = dict(zip(first_b.tolist(), first_b.index.tolist(), strict=True))
    ids_a, ids_b = first_a.tolist(), first_b.tolist()
    only_a = [i for i in ids_a if i not in index_b]
    set_a = set(ids_a)
    only_b = [i for i in ids_b if i not in set_a]
    both_ids = [(i, n, index_b[i]) for i, n in zip(ids_a, first_a.index.tolist(), strict=True) if i in index_b]
    changed, responses = _changed_items(store, tables, both_ids)
    notes = []
    if only_a:
        notes.append(f"{len(only_a)} item id(s) only in {name_a}: {_sample(only_a)}")
    if only_b:
        notes.append(f"{len(only_b)} item id(s) only in {name_b}: {_sample(only_b)}")
    if changed:
        notes.append(
            f"{len(changed)} item id(s) in both runs with a different prompt, system message or ground truth: "
            f"{_sample(changed)}"
        )
    duplicated = sorted(
        set(fa.loc[fa.duplicated(["item_id", "scorer"]), "item_id"].tolist())
        | set(fb.loc[fb.duplicated(["item_id", "scorer"]), "item_id"].tolist())
    )
    if duplicated:
        notes.append(f"item id(s) used more than once in a run, matched by their first row only: {_sample(duplicated)}")
    same = not (only_a or only_b or changed)
    if responses:  # two models' (or prompts') answers to the same items: what Run vs run compares
        notes.append(
            f"{len(responses)} item(s) have another response in {name_b} than in {name_a}: their changes compare the "
            f"scores of two responses to the same item ({_sample(responses)})"
        )
    scorers_a = [s["id"] for s in rec_a["scorers"]]
    scorers_b = [s["id"] for s in rec_b["scorers"]]
    from scorers.catalogue.registry import unlike_scorers

    options = stored_scorer_options(rec_a)
    unlike = unlike_scorers([s for s in scorers_a if s in scorers_b], options, stored_scorer_options(rec_b))
    common = [s for s in scorers_a if s in scorers_b and s not in unlike]
    # Items of both runs that one never scored (a run stopped part way): the same dataset, with fewer items
    # compared (an outcome that failed keeps its row, with its status).
    in_both = [i for i, _, _ in both_ids]
    for frame, name in ((fa, name_a), (fb, name_b)):
        stored = frame[frame["scorer"].isin(common)].drop_duplicates(["item_id", "scorer"]).groupby("item_id").size()
        never = [i for i in in_both if stored.get(i, 0) < len(common)]
        if common and never:
            notes.append(
                f"{len(never)} item(s) of both runs not scored in {name} (never scored: a stopped run): {_sample(never)}"
            )
    note = "; ".join(notes)
    if note:
        note = f"The runs are not over the same dataset: {note}." if not same else f"Note: {note}."
    left = fa.drop_duplicates(["item_id", "scorer"])
    right = fb.drop_duplicates(["item_id", "scorer"])
    merged = left.merge(right, on=["item_id", "scorer"], suffixes=("_a", "_b"))
    merged = merged[merged["scorer"].isin(common)]
    both = (merged["status_a"] == ScoreStatus.SCORED.value) & (merged["status_b"] == ScoreStatus.SCORED.value)
    delta = (merged["score_b"] - merged["score_a"]).where(both)
    merged["delta"] = delta.mask(delta.abs() <= TIE_TOLERANCE, 0.0)
    columns = ["item_id", "scorer", "item_index_a", "item_index_b", "status_a", "status_b", "score_a", "score_b"]
    rows = merged[[*columns, "delta"]].reset_index(drop=True)
    # "improvement" is the delta signed so that > 0 is better in the scorer's direction.
    higher = {s: _higher_is_better(s) for s in common}
    rows["improvement"] = rows["delta"].where(rows["scorer"].map(higher).astype(bool), -rows["delta"])
    regressions = rows[rows["improvement"] < 0].sort_values(["improvement", "item_id"], ignore_index=True)
    improvements = rows[rows["improvement"] > 0].sort_values(
        ["improvement", "item_id"], ascending=[False, True], ignore_index=True
    )

    dim_rows = []
    for scorer in common:
        means_a, means_b = (_dimension_means(store, t, scorer, options.get(scorer)) for t in tables)
        for dimension in dict.fromkeys([*means_a, *means_b]):
            mean_a, mean_b = means_a.get(dimension, math.nan), means_b.get(dimension, math.nan)
            dim_rows.append(
                {
                    "scorer": scorer,
                    "dimension": dimension,
                    "label": dimension_label(dimension),
                    "mean_a": mean_a,
                    "mean_b": mean_b,
                    "delta": mean_b - mean_a,
                }
            )
    dimensions = pd.DataFrame(dim_rows, columns=["scorer", "dimension", "label", "mean_a", "mean_b", "delta"])
    comparisons = {s: _run_pairs(fa, fb, s, name_b, name_a, seed) for s in common}
    return RunDiff(
        run_a=run_a,
        run_b=run_b,
        name_a=name_a,
        name_b=name_b,
        same_dataset=same,
        dataset_note=note,
        only_in_a=only_a,
        only_in_b=only_b,
        changed_inputs=changed,
        changed_responses=responses,
        scorers=common,
        scorers_only_in_a=[s for s in scorers_a if s not in scorers_b],
        scorers_only_in_b=[s for s in scorers_b if s not in scorers_a],
        rows=rows,
        dimensions=dimensions,
        regressions=regressions,
        improvements=improvements,
        comparisons=comparisons,
        tables=tables,
        scorers_unlike=unlike,
    )


def _run_pairs(
    fa: pd.DataFrame, fb: pd.DataFrame, scorer: str, name_b: str, name_a: str, seed: int
) -> PairedComparison:
    """:func:`paired` of run b (``a``) against run a (``b``) on one scorer, pairs by item id (first outcome of an id);
    its sentences speak of run B and run A (with their names) and of items."""
    sides = []
    for frame in (fb, fa):
        part = frame[frame["scorer"] == scorer]
        sides.append(part.assign(pair_id=variant_labels(part["item_id"])))
    every = set(sides[0]["pair_id"].tolist()) | set(sides[1]["pair_id"].tolist())
    firsts = [part.drop_duplicates("pair_id") for part in sides]
    scored = [
        part.loc[(part["status"] == ScoreStatus.SCORED.value) & part["score"].notna()].set_index("pair_id")["score"]
        for part in firsts
    ]
    pairs = pd.concat(scored, axis=1, keys=["a", "b"], join="inner").sort_index().rename_axis("pair_id").reset_index()
    pairs = pairs.astype({"pair_id": str, "a": float, "b": float})
    return _paired_statistics(
        pairs,
        len(every) - len(pairs),
        scorer,
        name_b,
        name_a,
        confidence=0.95,
        n_resamples=2000,
        seed=seed,
        noun="run",
        unit="item",
        labels=(f"run B ({name_b})", f"run A ({name_a})"),
    )


__all__ = [
    "LEADERBOARD_COLUMNS",
    "MIN_WILCOXON_PAIRS",
    "PairedComparison",
    "RunDiff",
    "StoredRun",
    "SIGNIFICANCE",
    "TIE_TOLERANCE",
    "bootstrap_ci",
    "dimension_label",
    "dimension_means",
    "dimension_splitter",
    "leaderboard",
    "paired",
    "rows_by_difference",
    "read_stored_run",
    "table_outcomes",
    "run_diff",
    "run_frames",
    "variant_label",
    "variant_labels",
]


def not_scored_summary(frame: pd.DataFrame) -> str | None:
    """How many outcomes of a results frame were not scored, and why, in one sentence; None when all were.

    Args:
        frame: a results frame with a ``status`` column (:class:`~scorers.core.errors.ScoreStatus` values).

    Returns:
        E.g. ``"3 of 8 outcomes were not scored (2 Judge refused, 1 Invalid input): never counted
        as a score of 0, and left out of every mean."``, or None when every outcome was scored.

    >>> not_scored_summary(pd.DataFrame({"status": ["scored", "judge_refused", "judge_refused", "invalid_input"]}))
    '3 of 4 outcomes were not scored (2 Judge refused, 1 Invalid input): never counted as a score of 0, and left out of every mean.'
    """
    _require(frame, ["status"])
    failed = frame.loc[frame["status"] != ScoreStatus.SCORED.value, "status"]
    if failed.empty:
        return None
    reasons = ", ".join(f"{n} {outcome_status_label(str(status))}" for status, n in failed.value_counts().items())
    return (
        f"{len(failed)} of {len(frame)} outcomes were not scored ({reasons}): never counted as a "
        "score of 0, and left out of every mean."
    )
