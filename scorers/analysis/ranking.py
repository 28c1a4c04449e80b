"""Rank k variants with an honest treatment of multiple comparisons, and break results down by group.

Comparing k variants pair by pair runs k(k−1)/2 tests (10 for 5 models): at a 0.05 level
some look significant by chance. This module gives:

- :func:`holm`: Holm's step-down adjustment of a family of p-values (Holm, "A simple
  sequentially rejective multiple test procedure", *Scand. J. Statist.* 6, 1979), which
  controls the family-wise error rate without assuming independence. SciPy has no Holm
  (``scipy.stats.false_discovery_control`` is Benjamini–Hochberg), so it is written here.
- :func:`pairwise_tests`: every pair of variants compared question by question
  (:func:`scorers.analysis.compare.paired`: Wilcoxon signed-rank with ``scipy.stats.wilcoxon``),
  with Holm-adjusted p-values.
- :func:`bradley_terry`: Bradley–Terry maximum-likelihood strengths (Hunter, "MM algorithms
  for generalized Bradley–Terry models", *Ann. Statist.* 32, 2004) fitted by Newton's method
  from a table of wins, ties counting half a win to each side; :func:`ranking` fits it to the
  per-question outcomes of a scorer, with percentile bootstrap intervals (resampling
  questions, Efron & Tibshirani 1993, ch. 13).
- :func:`group_breakdown`: the mean score of every variant within each value of a group
  column (e.g. a dataset's ``category``), counting scored outcomes only.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from scorers.analysis.compare import TIE_TOLERANCE, _higher_is_better, _require, _scored, paired, variant_label
from scorers.core.errors import ScoreStatus


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given.

    With the m p-values sorted ascending, p_(1) <= ... <= p_(m), the adjusted value of the
    i-th smallest is ``max_{j <= i} min(1, (m − j + 1) · p_(j))``; a hypothesis is rejected at
    level α when its adjusted p-value is <= α (Holm 1979).

    Args:
        p_values: raw p-values in [0, 1].

    Returns:
        The adjusted p-values in [0, 1], one per input, in the input's order.

    Raises:
        ValueError: a p-value outside [0, 1] or NaN.

    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    values = [float(p) for p in p_values]
    for p in values:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p-values must be in [0, 1], got {p}")
    m = len(values)
    order = sorted(range(m), key=lambda i: values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * values[i]))
        adjusted[i] = running
    return adjusted


def pairwise_tests(
    frame: pd.DataFrame,
    scorer: str,
    variants: Sequence[str],
    *,
    group_col: str = "group:variant",
    pair_col: str = "group:row_id",
    seed: int = 0,
) -> pd.DataFrame:
    """Every pair of ``variants`` compared question by question, with Holm-adjusted p-values.

    Args:
        frame: a results frame (:func:`scorers.runs.export.results_frame`).
        scorer: the scorer id.
        variants: the variants to compare (values of ``group_col``), at least two.
        group_col, pair_col: as for :func:`scorers.analysis.compare.paired`.
        seed: for the paired bootstrap intervals.

    Returns:
        One row per pair (in the order of ``variants``): ``a``, ``b``, ``n_pairs``, ``wins``,
        ``ties``, ``losses`` (a's), ``mean_diff`` (a − b), ``ci_low``, ``ci_high``, ``p``
        (Wilcoxon, NaN when too few differences to test), ``p_holm`` (Holm over the pairs
        that have a p-value; NaN otherwise) and ``note``.

    Raises:
        ValueError: fewer than two variants, or a missing column.
    """
    if len(variants) < 2:
        raise ValueError(f"pairwise tests need at least two variants, got {list(variants)}")
    rows = []
    for a, b in itertools.combinations(variants, 2):
        c = paired(frame, scorer, a, b, group_col=group_col, pair_col=pair_col, seed=seed)
        rows.append(
            {
                "a": a,
                "b": b,
                "n_pairs": c.n_pairs,
                "wins": c.wins,
                "ties": c.ties,
                "losses": c.losses,
                "mean_diff": np.nan if c.mean_diff is None else c.mean_diff,
                "ci_low": np.nan if c.ci_low is None else c.ci_low,
                "ci_high": np.nan if c.ci_high is None else c.ci_high,
                "p": np.nan if c.wilcoxon_p is None else c.wilcoxon_p,
                "note": c.note,
            }
        )
    out = pd.DataFrame(rows)
    tested = out["p"].notna()
    out["p_holm"] = np.nan
    if tested.any():
        out.loc[tested, "p_holm"] = holm(out.loc[tested, "p"].tolist())
    return out


def bradley_terry(wins: np.ndarray, *, tol: float = 1e-10, max_iter: int = 100) -> np.ndarray:
    """Bradley–Terry maximum-likelihood strengths from a table of wins, by Newton's method.

    The model: P(i beats j) = π_i / (π_i + π_j), with θ = log π. The log-likelihood
    ``Σ_ij wins[i, j] · log σ(θ_i − θ_j)`` is concave; Newton steps on θ (θ_0 fixed at 0)
    use the gradient ``W_i − Σ_j n_ij p_ij`` and the Hessian ``n_ij p_ij (1 − p_ij)``
    (Hunter, "MM algorithms for generalized Bradley–Terry models", *Ann. Statist.* 32,
    2004, gives the model and the condition for a finite estimate).

    Args:
        wins: a k × k array, ``wins[i, j]`` = times i beat j (a tie adds 0.5 to both cells);
            the diagonal is ignored.
        tol: stop when no log-strength moves by more than this.
        max_iter: at most this many Newton steps.

    Returns:
        The k strengths, > 0, summing to 1.

    Raises:
        ValueError: ``wins`` is not square, has a negative or non-finite entry, or has no
            finite estimate: Hunter's condition (in every split of the variants in two, one
            side beat the other at least once) fails, e.g. a variant never won, or a variant
            won every game it played (``scipy.sparse.csgraph.connected_components`` of the
            "beat" graph is not strongly connected). Add pseudo-wins (as :func:`ranking` does).

    >>> [round(float(s), 6) for s in bradley_terry(np.array([[0, 2, 4], [1, 0, 2], [1, 1, 0]]))]
    [0.571429, 0.285714, 0.142857]
    """
    w = np.asarray(wins, dtype=float).copy()
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise ValueError(f"wins must be a square table, got shape {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("wins must be finite and >= 0")
    np.fill_diagonal(w, 0.0)
    k = w.shape[0]
    n_components, _ = connected_components(csr_matrix(w > 0), directed=True, connection="strong")
    if k < 2 or n_components > 1:
        raise ValueError(
            "no finite Bradley–Terry estimate: some variants were never beaten by (or never beat) the others "
            "(Hunter's condition); add pseudo-wins to every pair that met"
        )
    games = w + w.T
    won = w.sum(axis=1)
    theta = np.zeros(k)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))  # p[i, j] = P(i beats j)
        gradient = won - (games * p).sum(axis=1)
        curvature = games * p * (1 - p)
        hessian = curvature - np.diag(curvature.sum(axis=1))
        step = np.linalg.solve(hessian[1:, 1:], -gradient[1:])
        theta[1:] += np.clip(step, -5.0, 5.0)  # damped: a first step from 0 can overshoot
        if np.max(np.abs(step)) < tol:
            break
    strength = np.exp(theta - theta.max())
    return strength / strength.sum()


def _outcome_table(frame: pd.DataFrame, scorer: str, group_col: str, pair_col: str) -> pd.DataFrame:
    """Scores pivoted: one row per question (``pair_col``), one column per variant (NaN: not scored)."""
    _require(frame, [group_col, pair_col, "scorer", "status", "score"])
    part = frame[(frame["scorer"] == scorer) & (frame["status"] == ScoreStatus.SCORED.value)]
    part = part.assign(_variant=part[group_col].map(variant_label), _pair=part[pair_col].map(variant_label))
    part = part.drop_duplicates(["_pair", "_variant"], keep="first")
    return part.pivot(index="_pair", columns="_variant", values="score").astype(float)


def _wins(table: np.ndarray, higher_is_better: bool) -> np.ndarray:
    """The k × k wins table of per-question scores (questions × variants), ties half a win each."""
    scores = table if higher_is_better else -table
    k = scores.shape[1]
    wins = np.zeros((k, k))
    for i, j in itertools.combinations(range(k), 2):
        both = ~np.isnan(scores[:, i]) & ~np.isnan(scores[:, j])
        d = scores[both, i] - scores[both, j]
        tie = np.abs(d) <= TIE_TOLERANCE
        wins[i, j] += ((d > 0) & ~tie).sum() + 0.5 * tie.sum()
        wins[j, i] += ((d < 0) & ~tie).sum() + 0.5 * tie.sum()
    return wins


@dataclass(frozen=True)
class Ranking:
    """A Bradley–Terry ranking of variants on one scorer (see :func:`ranking`).

    Attributes:
        table: one row per variant, best first: ``variant``, ``strength`` (sums to 1 over the
            variants; P(i beats j) = s_i / (s_i + s_j)), ``ci_low``, ``ci_high`` (percentile
            bootstrap over questions), ``rank`` (1 = best), ``rank_low``, ``rank_high`` (the
            bootstrap's 2.5 and 97.5 percentiles of the rank), ``wins`` (per-question wins,
            ties as half), ``comparisons`` (per-question comparisons the variant took part in).
        n_questions: questions with at least two variants scored.
        n_resamples: bootstrap resamples.
        confidence: the interval's level.
    """

    table: pd.DataFrame
    n_questions: int
    n_resamples: int
    confidence: float


PSEUDO_WINS = 0.5
"""Wins added to both sides of every pair of variants that met, before a :func:`ranking` fit.

Without them a variant that beat all others on every question has no finite Bradley–Terry
estimate (Hunter 2004's condition fails) and the fit drifts without end; half a win keeps
it finite (the usual continuity correction of half a count); it moves strengths from a handful of
questions towards equality, and matters less the more questions there are.
"""


def ranking(
    frame: pd.DataFrame,
    scorer: str,
    *,
    group_col: str = "group:variant",
    pair_col: str = "group:row_id",
    confidence: float = 0.95,
    n_resamples: int = 300,
    seed: int = 0,
) -> Ranking:
    """Rank the variants of a results frame by Bradley–Terry strength on one scorer.

    On every question (a ``pair_col`` value), every two variants scored there play one
    game: the better score wins (by the scorer's direction), equal scores are a tie (half
    a win each). :func:`bradley_terry` fits the strengths to these wins plus
    :data:`PSEUDO_WINS` on both sides of every pair that met; the intervals come from
    refitting on questions resampled with replacement (``numpy.random.default_rng(seed)``).

    Args:
        frame: a results frame (:func:`scorers.runs.export.results_frame`).
        scorer: the scorer id.
        group_col, pair_col: the variant and the question columns.
        confidence: the interval's level, in (0, 1).
        n_resamples: bootstrap resamples, >= 1.
        seed: the bootstrap's seed.

    Returns:
        The :class:`Ranking`.

    Raises:
        ValueError: fewer than two variants with a scored outcome, no question with two of
            them scored, or a missing column.
    """
    table = _outcome_table(frame, scorer, group_col, pair_col)
    table = table.loc[table.notna().sum(axis=1) >= 2]
    variants = list(table.columns)
    if len(variants) < 2 or table.empty:
        raise ValueError(f"a ranking needs two variants scored on the same question for {scorer}; found {variants}")
    higher = _higher_is_better(scorer)
    scores = table.to_numpy()
    wins = _wins(scores, higher)
    strength = bradley_terry(_with_pseudo_wins(wins))
    rng = np.random.default_rng(seed)
    samples = np.empty((n_resamples, len(variants)))
    ranks = np.empty((n_resamples, len(variants)))
    for r in range(n_resamples):
        pick = scores[rng.integers(0, len(scores), len(scores))]
        resampled = _wins(pick, higher)
        # A looser fit per resample: interval ends need 3 decimals, not 10.
        samples[r] = bradley_terry(_with_pseudo_wins(resampled), tol=1e-6) if resampled.sum() > 0 else strength
        ranks[r] = _ranks(samples[r])
    tail = (1 - confidence) / 2 * 100
    games = wins + wins.T
    out = pd.DataFrame(
        {
            "variant": variants,
            "strength": strength,
            "ci_low": np.percentile(samples, tail, axis=0),
            "ci_high": np.percentile(samples, 100 - tail, axis=0),
            "rank": _ranks(strength),
            "rank_low": np.percentile(ranks, tail, axis=0, method="lower").astype(int),
            "rank_high": np.percentile(ranks, 100 - tail, axis=0, method="higher").astype(int),
            "wins": wins.sum(axis=1),
            "comparisons": games.sum(axis=1),
        }
    )
    out = out.sort_values(["rank", "variant"], ignore_index=True)
    return Ranking(out, int(len(table)), n_resamples, confidence)


def _with_pseudo_wins(wins: np.ndarray) -> np.ndarray:
    met = (wins + wins.T) > 0
    return wins + PSEUDO_WINS * met


def _ranks(strength: np.ndarray) -> np.ndarray:
    """Competition ranks, 1 = strongest (equal strengths share the better rank)."""
    return np.array([1 + int((strength > s + 1e-12).sum()) for s in strength])


def group_breakdown(frame: pd.DataFrame, scorer: str, by: str, *, group_col: str = "group:variant") -> pd.DataFrame:
    """Mean score of every variant within each value of the column ``by`` (e.g. ``group:category``).

    Args:
        frame: a results frame with ``by`` and ``group_col``.
        scorer: the scorer id.
        by: the column to break down by.
        group_col: the column naming the variant.

    Returns:
        One row per (group value, variant): ``group``, ``variant``, ``mean`` (scored outcomes
        only; NaN when none), ``n_scored``, ``n_failed``. Sorted by group, then variant.

    Raises:
        ValueError: a missing column.
    """
    _require(frame, [by, group_col, "scorer", "status", "score"])
    part = frame[frame["scorer"] == scorer]
    part = part.assign(_group=part[by].map(variant_label), _variant=part[group_col].map(variant_label))
    rows = []
    for (group, variant), cell in part.groupby(["_group", "_variant"], sort=True):
        scores = _scored(cell)
        rows.append(
            {
                "group": group,
                "variant": variant,
                "mean": float(scores.mean()) if len(scores) else float("nan"),
                "n_scored": int(len(scores)),
                "n_failed": int(len(cell) - len(scores)),
            }
        )
    return pd.DataFrame(rows, columns=["group", "variant", "mean", "n_scored", "n_failed"])


__all__ = ["Ranking", "bradley_terry", "group_breakdown", "holm", "pairwise_tests", "ranking"]
