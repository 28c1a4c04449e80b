"""How well a judge agrees with people: kappa, correlations, error, calibration and consistency.

Pure functions over plain values (no store, no Streamlit): the Review page gathers the
rows (:func:`agreement_rows`), these functions measure them, and the page draws the
result. Only :func:`rejudge` calls a judge.

Verdicts at a pass threshold ``t`` (on the scorer's scale, e.g. 0.5 of a 0..1 score):

- the judge passes a row when its score ≥ t (≤ t for a scorer where lower is better,
  such as toxicity);
- a person passes a row when they said "pass"; when they gave only a score, when that
  score passes the same test.

With fewer than :data:`MIN_MEANINGFUL` labelled rows the numbers are computed but are
not meaningful yet; :class:`AgreementReport` says so. Statistics that are undefined
(kappa when both raters use one and the same class, a correlation of constant scores)
are None with the reason, never an exception and never NaN.
"""

from __future__ import annotations

import math
import random
import statistics
import threading
import warnings
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scipy import stats

from scorers.runs.runner import EvalItem, EvalRunResult, run_evals

if TYPE_CHECKING:
    from scorers.analysis.labels import Label
    from scorers.core.base import Scorer

MIN_MEANINGFUL = 10
"""Labelled rows below which agreement numbers are shown as not meaningful yet."""


@dataclass(frozen=True)
class AgreementRow:
    """One labelled row: the judge's current score and the person's label.

    Attributes:
        item_index: the item's position in the run.
        item_id: the item's id (the dataset's id column or row label).
        judge_score: the judge's score on the scorer's scale.
        human_score: the person's score on the same scale, or None.
        human_pass: the person's pass (True) or fail (False), or None.
    """

    item_index: int
    item_id: str
    judge_score: float
    human_score: float | None = None
    human_pass: bool | None = None


def passes(score: float, threshold: float, *, higher_is_better: bool = True) -> bool:
    """The verdict of a score at ``threshold``: score ≥ t passes (score ≤ t when lower is better).

    >>> passes(0.5, 0.5), passes(0.49, 0.5), passes(0.2, 0.3, higher_is_better=False)
    (True, False, True)
    """
    return score >= threshold if higher_is_better else score <= threshold


def human_verdict(row: AgreementRow, threshold: float, *, higher_is_better: bool = True) -> bool | None:
    """The person's pass/fail: their explicit verdict, else their score at ``threshold``, else None."""
    if row.human_pass is not None:
        return row.human_pass
    if row.human_score is not None:
        return passes(row.human_score, threshold, higher_is_better=higher_is_better)
    return None


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa of two raters over the same rows.

    Attributes:
        value: κ = (p_o − p_e) / (1 − p_e), in [−1, 1]; None when undefined.
        p_observed: p_o, the share of rows both raters put in the same class.
        p_expected: p_e, the agreement expected by chance: Σ over classes of the product
            of the two raters' shares of that class.
        n: rows compared.
        reason: why ``value`` is None, else "".
    """

    value: float | None
    p_observed: float | None
    p_expected: float | None
    n: int
    reason: str = ""


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> Kappa:
    """Cohen's kappa (Cohen 1960) of two raters' classes for the same rows.

    Args:
        a: the first rater's class per row (e.g. the judge's pass/fail as bools).
        b: the second rater's class per row, same length.

    Returns:
        The :class:`Kappa`. ``value`` is None when there are no rows, or when both raters
        put every row in one and the same class (p_e = 1: kappa is 0/0).

    Raises:
        ValueError: ``a`` and ``b`` differ in length.

    >>> k = cohen_kappa([True, True, False, False], [True, False, False, False])
    >>> k.p_observed, k.p_expected, round(k.value, 4)
    (0.75, 0.5, 0.5)
    """
    if len(a) != len(b):
        raise ValueError(f"both raters need a class for every row: {len(a)} vs {len(b)} rows")
    n = len(a)
    if n == 0:
        return Kappa(None, None, None, 0, "no row has a verdict from both the judge and a person")
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    classes = set(a) | set(b)
    p_e = sum((sum(x == c for x in a) / n) * (sum(y == c for y in b) / n) for c in classes)
    if math.isclose(p_e, 1.0):
        only = next(iter(classes))
        return Kappa(
            None,
            p_o,
            p_e,
            n,
            f"both the judge and the people put all {n} rows in one class ({_class_name(only)}): "
            "kappa is undefined (chance agreement is already 1)",
        )
    return Kappa((p_o - p_e) / (1 - p_e), p_o, p_e, n)


def _class_name(value: Hashable) -> str:
    if isinstance(value, bool):
        return "pass" if value else "fail"
    return str(value)


@dataclass(frozen=True)
class Correlation:
    """A correlation coefficient with its two-sided p-value.

    Attributes:
        value: the coefficient in [−1, 1], or None when undefined.
        p_value: scipy's two-sided p-value, or None.
        n: pairs used.
        reason: why ``value`` is None, else "".
    """

    value: float | None
    p_value: float | None
    n: int
    reason: str = ""


def correlation(x: Sequence[float], y: Sequence[float], *, method: str = "spearman") -> Correlation:
    """Spearman's rank or Pearson's linear correlation of paired scores (``scipy.stats``).

    Args:
        x: the judge's scores.
        y: the people's scores for the same rows.
        method: ``"spearman"`` (:func:`scipy.stats.spearmanr`) or ``"pearson"`` (:func:`scipy.stats.pearsonr`).

    Returns:
        The :class:`Correlation`; None with a reason for fewer than 2 pairs or when either
        side is constant (the coefficient divides by a zero spread).

    Raises:
        ValueError: an unknown method, or ``x`` and ``y`` differ in length.

    >>> round(correlation([1, 2, 3, 4, 5], [2, 4, 5, 4, 5], method="pearson").value, 4)
    0.7746
    """
    if method not in ("spearman", "pearson"):
        raise ValueError(f"unknown correlation method {method!r}; use 'spearman' or 'pearson'")
    if len(x) != len(y):
        raise ValueError(f"correlation needs paired scores: {len(x)} vs {len(y)} values")
    n = len(x)
    if n < 2:
        return Correlation(None, None, n, f"{n} row(s) with both a judge and a human score: at least 2 are needed")
    for side, values in (("judge", x), ("human", y)):
        if len(set(values)) == 1:
            return Correlation(
                None, None, n, f"every {side} score is {values[0]:g}: a correlation of constant scores is undefined"
            )
    test = stats.spearmanr if method == "spearman" else stats.pearsonr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # n = 2: scipy warns that the p-value is meaningless; it is reported as is
        result = test(list(x), list(y))
    value, p_value = float(result.statistic), float(result.pvalue)
    return Correlation(value, p_value if math.isfinite(p_value) else None, n)


def mean_absolute_error(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Σ|x − y| / n of paired scores on the same scale; None without pairs.

    >>> round(mean_absolute_error([0.9, 0.2, 0.6], [1.0, 0.0, 0.6]), 6)
    0.1
    """
    if len(x) != len(y):
        raise ValueError(f"the mean absolute error needs paired scores: {len(x)} vs {len(y)} values")
    if not x:
        return None
    return sum(abs(a - b) for a, b in zip(x, y, strict=True)) / len(x)


@dataclass(frozen=True)
class Confusion:
    """The 2×2 table of human verdicts (rows) against judge verdicts (columns).

    Attributes:
        both_pass: the person and the judge pass the row.
        human_pass_judge_fail: the person passes it, the judge fails it.
        human_fail_judge_pass: the person fails it, the judge passes it.
        both_fail: both fail it.
    """

    both_pass: int = 0
    human_pass_judge_fail: int = 0
    human_fail_judge_pass: int = 0
    both_fail: int = 0

    @property
    def n(self) -> int:
        """Rows in the table."""
        return self.both_pass + self.human_pass_judge_fail + self.human_fail_judge_pass + self.both_fail

    def matrix(self) -> list[list[int]]:
        """``[[both pass, human pass · judge fail], [human fail · judge pass, both fail]]``."""
        return [[self.both_pass, self.human_pass_judge_fail], [self.human_fail_judge_pass, self.both_fail]]


def confusion(judge: Sequence[bool], human: Sequence[bool]) -> Confusion:
    """Count the verdict pairs of the same rows into a :class:`Confusion`.

    >>> confusion([True, True, False], [True, False, False]).matrix()
    [[1, 0], [1, 1]]
    """
    if len(judge) != len(human):
        raise ValueError(f"both raters need a verdict for every row: {len(judge)} vs {len(human)} rows")
    pairs = list(zip(human, judge, strict=True))
    return Confusion(
        both_pass=pairs.count((True, True)),
        human_pass_judge_fail=pairs.count((True, False)),
        human_fail_judge_pass=pairs.count((False, True)),
        both_fail=pairs.count((False, False)),
    )


@dataclass(frozen=True)
class CalibrationBin:
    """Rows whose judge score falls in ``[lo, hi)`` (the last bin includes ``hi``).

    Attributes:
        lo: the bin's lower edge on the scorer's scale.
        hi: its upper edge.
        n: rows with a human verdict in the bin.
        n_pass: of those, rows the person passed.
        mean_judge_score: the mean judge score of those rows, or None when the bin is empty.
    """

    lo: float
    hi: float
    n: int
    n_pass: int
    mean_judge_score: float | None

    @property
    def pass_rate(self) -> float | None:
        """The people's pass rate in the bin (n_pass / n), or None when the bin is empty."""
        return self.n_pass / self.n if self.n else None


def calibration_bins(
    judge_scores: Sequence[float], human_pass: Sequence[bool], *, scale: float = 1.0, n_bins: int = 5
) -> list[CalibrationBin]:
    """The people's pass rate per judge-score bin: equal-width bins over [0, scale].

    A well-calibrated judge's pass rate rises with its score. Scores outside [0, scale]
    go to the first or last bin.

    Args:
        judge_scores: the judge's score per row.
        human_pass: the person's verdict per row.
        scale: the top of the scorer's scale (> 0).
        n_bins: the number of bins (≥ 1).

    Raises:
        ValueError: lengths differ, ``scale`` ≤ 0 or ``n_bins`` < 1.

    >>> [(b.lo, b.hi, b.n, b.n_pass) for b in calibration_bins([0.1, 0.9, 1.0], [False, True, False], n_bins=2)]
    [(0.0, 0.5, 1, 0), (0.5, 1.0, 2, 1)]
    """
    if len(judge_scores) != len(human_pass):
        raise ValueError(f"calibration needs a verdict per score: {len(judge_scores)} vs {len(human_pass)} rows")
    if not scale > 0 or n_bins < 1:
        raise ValueError(f"calibration needs scale > 0 and at least 1 bin, got scale={scale}, n_bins={n_bins}")
    width = scale / n_bins
    members: list[list[tuple[float, bool]]] = [[] for _ in range(n_bins)]
    for score, verdict in zip(judge_scores, human_pass, strict=True):
        index = min(n_bins - 1, max(0, math.floor(score / width)))
        members[index].append((score, verdict))
    return [
        CalibrationBin(
            lo=round(i * width, 12),
            hi=round((i + 1) * width, 12),
            n=len(rows),
            n_pass=sum(v for _, v in rows),
            mean_judge_score=statistics.fmean(s for s, _ in rows) if rows else None,
        )
        for i, rows in enumerate(members)
    ]


@dataclass(frozen=True)
class Disagreement:
    """A labelled row and how far apart the judge and the person are.

    Attributes:
        row: the labelled row.
        human_value: the person's score, or for a pass/fail-only label the end of the
            scale it points at (pass → the scale's best end, fail → its worst end).
        gap: |judge score − human value|, on the scorer's scale.
        judge_pass: the judge's verdict at the threshold.
        human_pass: the person's verdict.
    """

    row: AgreementRow
    human_value: float
    gap: float
    judge_pass: bool
    human_pass: bool | None


def disagreements(
    rows: Sequence[AgreementRow], *, threshold: float, scale: float = 1.0, higher_is_better: bool = True
) -> list[Disagreement]:
    """Every labelled row, largest |judge − human| first (ties: verdicts that differ first, then item order).

    A label with a score is compared on the score; a pass/fail-only label as the end of
    the scale it points at (pass → ``scale``, fail → 0 when higher is better).
    """
    best, worst = (scale, 0.0) if higher_is_better else (0.0, scale)
    out = []
    for row in rows:
        verdict = human_verdict(row, threshold, higher_is_better=higher_is_better)
        if row.human_score is not None:
            value = row.human_score
        elif verdict is not None:
            value = best if verdict else worst
        else:
            continue
        judge_pass = passes(row.judge_score, threshold, higher_is_better=higher_is_better)
        out.append(Disagreement(row, value, abs(row.judge_score - value), judge_pass, verdict))
    out.sort(key=lambda d: (-round(d.gap, 12), d.judge_pass == d.human_pass, d.row.item_index))
    return out


@dataclass(frozen=True)
class AgreementReport:
    """Everything the agreement panel shows for one scorer at one threshold.

    Attributes:
        threshold: the pass threshold on the scorer's scale.
        scale: the top of the scorer's scale.
        n_labelled: labelled rows the judge scored.
        n_verdicts: of those, rows with a human verdict (pass/fail or a score).
        n_scores: of those, rows with a human score.
        agreement_rate: share of ``n_verdicts`` rows where the verdicts match, or None.
        kappa: Cohen's kappa of the verdicts.
        spearman: Spearman's rank correlation of the scores.
        pearson: Pearson's correlation of the scores.
        mae: mean absolute error of judge vs human score, or None.
        confusion: the verdict table.
        calibration: the people's pass rate per judge-score bin.
        disagreements: the rows, largest gap first.
        notes: sentences the page shows (too few rows, undefined statistics).
    """

    threshold: float
    scale: float
    n_labelled: int
    n_verdicts: int
    n_scores: int
    agreement_rate: float | None
    kappa: Kappa
    spearman: Correlation
    pearson: Correlation
    mae: float | None
    confusion: Confusion
    calibration: list[CalibrationBin]
    disagreements: list[Disagreement]
    notes: list[str] = field(default_factory=list)

    @property
    def meaningful(self) -> bool:
        """True from :data:`MIN_MEANINGFUL` labelled rows on."""
        return self.n_labelled >= MIN_MEANINGFUL


def agreement_report(
    rows: Sequence[AgreementRow],
    *,
    threshold: float,
    scale: float = 1.0,
    higher_is_better: bool = True,
    n_bins: int = 5,
) -> AgreementReport:
    """Measure how the judge agrees with people on labelled rows.

    Args:
        rows: labelled rows the judge scored (see :func:`agreement_rows`).
        threshold: the pass threshold on the scorer's scale.
        scale: the top of the scorer's scale (> 0).
        higher_is_better: False for scorers where a low score is good (toxicity, bias).
        n_bins: calibration bins over [0, scale].

    Returns:
        The :class:`AgreementReport`; never raises on degenerate data.
    """
    with_verdict = [
        (r, v) for r in rows if (v := human_verdict(r, threshold, higher_is_better=higher_is_better)) is not None
    ]
    judge_v = [passes(r.judge_score, threshold, higher_is_better=higher_is_better) for r, _ in with_verdict]
    human_v = [v for _, v in with_verdict]
    scored = [r for r in rows if r.human_score is not None]
    judge_s = [r.judge_score for r in scored]
    human_s = [r.human_score for r in scored if r.human_score is not None]
    kappa = cohen_kappa(judge_v, human_v)
    spearman = correlation(judge_s, human_s, method="spearman")
    pearson = correlation(judge_s, human_s, method="pearson")
    notes = []
    if len(rows) < MIN_MEANINGFUL:
        notes.append(
            f"Only {len(rows)} labelled row(s): with fewer than {MIN_MEANINGFUL} the numbers are not meaningful yet."
        )
    for name, stat in (("Cohen's kappa", kappa), ("Spearman", spearman), ("Pearson", pearson)):
        if stat.value is None and stat.reason:
            notes.append(f"{name}: {stat.reason}.")
    return AgreementReport(
        threshold=threshold,
        scale=scale,
        n_labelled=len(rows),
        n_verdicts=len(with_verdict),
        n_scores=len(scored),
        agreement_rate=kappa.p_observed,
        kappa=kappa,
        spearman=spearman,
        pearson=pearson,
        mae=mean_absolute_error(judge_s, human_s),
        confusion=confusion(judge_v, human_v),
        calibration=calibration_bins([r.judge_score for r, _ in with_verdict], human_v, scale=scale, n_bins=n_bins),
        disagreements=disagreements(rows, threshold=threshold, scale=scale, higher_is_better=higher_is_better),
        notes=notes,
    )


def agreement_rows(
    run_result: EvalRunResult | Iterable[Any], labels: Mapping[tuple[int, str], Label], scorer_id: str
) -> list[AgreementRow]:
    """The labelled rows of one scorer whose outcome is scored, in item order.

    Args:
        run_result: the run (its current outcomes: a row re-scored after it was labelled
            is compared on its current score), or its outcomes alone: anything with
            ``item_index``, ``item_id``, ``scorer_id`` and ``score`` (None when not scored),
            in item order.
        labels: the current label per ``(item_index, scorer_id)`` (see :func:`scorers.analysis.labels.current_labels`).
        scorer_id: the scorer.

    Returns:
        One :class:`AgreementRow` per row with both a judge score and a label that has a
        score or a verdict. Rows the judge did not score are left out (nothing to compare).
    """
    out = []
    outcomes = run_result.outcomes if isinstance(run_result, EvalRunResult) else run_result
    for o in outcomes:
        label = labels.get((o.item_index, scorer_id))
        if o.scorer_id != scorer_id or label is None or o.score is None:
            continue
        if label.human_score is None and label.human_pass is None:
            continue
        out.append(AgreementRow(o.item_index, o.item_id, o.score, label.human_score, label.human_pass))
    return out


# ---- judge consistency


@dataclass(frozen=True)
class ConsistencyRow:
    """How one row's score varies when the judge is asked again.

    Attributes:
        item_index: the item's position in the run.
        item_id: its id.
        stored_score: the run's stored score (None when it was not scored).
        scores: the score of each repetition that was scored.
        n_failed: repetitions that were not scored (their status in ``failures``).
        failures: the status of each failed repetition.
        mean: mean of ``scores``, or None.
        std: sample standard deviation of ``scores`` (n − 1), or None with fewer than 2.
        min: lowest score, or None.
        max: highest score, or None.
        flips: True when the repetitions' verdicts at the threshold differ (some pass, some fail).
        stored_flips: repetitions whose verdict differs from the stored score's verdict
            (0 when there is no stored score).
    """

    item_index: int
    item_id: str
    stored_score: float | None
    scores: tuple[float, ...]
    n_failed: int
    failures: tuple[str, ...]
    mean: float | None
    std: float | None
    min: float | None
    max: float | None
    flips: bool
    stored_flips: int = 0

    @property
    def change(self) -> float | None:
        """Mean of |repetition − stored score| over the scored repetitions, or None without both."""
        if self.stored_score is None or not self.scores:
            return None
        return statistics.fmean(abs(s - self.stored_score) for s in self.scores)

    @property
    def spread(self) -> float | None:
        """max − min, or None without scores."""
        return None if self.max is None or self.min is None else self.max - self.min


@dataclass(frozen=True)
class ConsistencyReport:
    """Re-judged rows and the share whose verdict flips.

    Attributes:
        rows: one :class:`ConsistencyRow` per re-judged item, in item order.
        threshold: the pass threshold used for flips.
        repeats: times each row was judged.
    """

    rows: list[ConsistencyRow]
    threshold: float
    repeats: int

    @property
    def n_compared(self) -> int:
        """Rows with at least 2 scored repetitions (a flip needs two verdicts)."""
        return sum(len(r.scores) >= 2 for r in self.rows)

    @property
    def flip_share(self) -> float | None:
        """Share of the compared rows whose verdict flips, or None when none can be compared."""
        compared = [r for r in self.rows if len(r.scores) >= 2]
        return sum(r.flips for r in compared) / len(compared) if compared else None

    @property
    def mean_abs_change(self) -> float | None:
        """Drift from the stored result: the mean over rows of :attr:`ConsistencyRow.change`, or None."""
        values = [r.change for r in self.rows if r.change is not None]
        return statistics.fmean(values) if values else None

    @property
    def stored_flip_share(self) -> float | None:
        """Share of scored repetitions (of rows with a stored score) whose verdict differs from the stored one."""
        counted = [r for r in self.rows if r.stored_score is not None and r.scores]
        total = sum(len(r.scores) for r in counted)
        return sum(r.stored_flips for r in counted) / total if total else None

    @property
    def mean_std(self) -> float | None:
        """Mean of the rows' standard deviations, or None."""
        values = [r.std for r in self.rows if r.std is not None]
        return statistics.fmean(values) if values else None


def consistency_report(
    repetitions: Mapping[int, Sequence[float | str]],
    *,
    threshold: float,
    item_ids: Mapping[int, str] | None = None,
    stored_scores: Mapping[int, float | None] | None = None,
    higher_is_better: bool = True,
) -> ConsistencyReport:
    """Summarise repeated judgements: per row the spread, and whether the verdict flips.

    Args:
        repetitions: item index → one entry per repetition: the score (a number), or the
            status of a repetition that was not scored (a string such as ``"api_error"``).
        threshold: the pass threshold on the scorer's scale.
        item_ids: item index → id, for display (default: the index as text).
        stored_scores: item index → the run's stored score.
        higher_is_better: False for scorers where a low score is good.

    >>> report = consistency_report({0: [0.4, 0.6, 0.6], 1: [1.0, 1.0, "api_error"]}, threshold=0.5)
    >>> [(r.min, r.max, r.flips, r.n_failed) for r in report.rows], report.flip_share
    ([(0.4, 0.6, True, 0), (1.0, 1.0, False, 1)], 0.5)

    Drift from the stored result: every re-judged 0.56 against a stored 0.83 is a change of
    0.27 and, at 0.7, a verdict flip against the stored pass, however steady the repetitions are:

    >>> drift = consistency_report({0: [0.56, 0.56]}, threshold=0.7, stored_scores={0: 0.83})
    >>> round(drift.mean_abs_change, 2), drift.stored_flip_share, drift.flip_share
    (0.27, 1.0, 0.0)
    """
    rows = []
    for index in sorted(repetitions):
        entries = repetitions[index]
        scores = tuple(float(e) for e in entries if not isinstance(e, str))
        failures = tuple(e for e in entries if isinstance(e, str))
        verdicts = {passes(s, threshold, higher_is_better=higher_is_better) for s in scores}
        stored = (stored_scores or {}).get(index)
        stored_verdict = None if stored is None else passes(stored, threshold, higher_is_better=higher_is_better)
        rows.append(
            ConsistencyRow(
                item_index=index,
                item_id=(item_ids or {}).get(index, str(index)),
                stored_score=stored,
                scores=scores,
                n_failed=len(failures),
                failures=failures,
                mean=statistics.fmean(scores) if scores else None,
                std=statistics.stdev(scores) if len(scores) > 1 else None,
                min=min(scores) if scores else None,
                max=max(scores) if scores else None,
                flips=len(verdicts) > 1,
                stored_flips=0
                if stored_verdict is None
                else sum(passes(x, threshold, higher_is_better=higher_is_better) != stored_verdict for x in scores),
            )
        )
    repeats = max((len(v) for v in repetitions.values()), default=0)
    return ConsistencyReport(rows, threshold, repeats)


def sample_indexes(indexes: Sequence[int], n: int, *, seed: int = 0) -> list[int]:
    """``n`` of ``indexes`` drawn at random with ``seed`` (all of them when n ≥ their number), sorted.

    >>> sample_indexes([0, 1, 2], 5)
    [0, 1, 2]
    """
    if n >= len(indexes):
        return sorted(indexes)
    return sorted(random.Random(seed).sample(list(indexes), max(0, n)))


def rejudge(
    scorer: Scorer,
    items: Sequence[EvalItem],
    indexes: Sequence[int],
    *,
    repeats: int,
    concurrency: int = 4,
    on_progress: Callable[[int, int], None] | None = None,
    cancel: threading.Event | None = None,
) -> dict[int, list[float | str]]:
    """Score the items at ``indexes`` ``repeats`` times each, storing nothing.

    Build ``scorer`` with ``cache=None`` so every call reaches the judge (a cached
    reply would repeat itself), and with the temperature to study. The run's stored
    results are never touched: the calls go through :func:`scorers.run_evals` without a store.

    Args:
        scorer: the scorer to ask again.
        items: the run's items.
        indexes: which items to re-judge.
        repeats: judgements per item (≥ 1).
        concurrency: calls at once.
        on_progress: called as ``(done, total)`` after each call, from a worker thread.
        cancel: set it to stop: repetitions not started are missing from the result.

    Returns:
        Item index → per repetition the score, or the status value of a failed one
        (the input of :func:`consistency_report`).

    Raises:
        ValueError: ``repeats`` < 1.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    plan = [(index, r) for index in indexes for r in range(repeats)]
    copies = [EvalItem(f"{items[i].item_id}#{r + 1}", items[i].payload) for i, r in plan]
    lock = threading.Lock()
    done = [0]

    def progress(*_: Any) -> None:
        with lock:
            done[0] += 1
            count = done[0]
        if on_progress is not None:
            on_progress(count, len(plan))

    result = run_evals(copies, [scorer], concurrency=concurrency, on_item_complete=progress, cancel=cancel)
    out: dict[int, list[float | str]] = {index: [] for index in indexes}
    for o in result.outcomes:
        index = plan[o.item_index][0]
        out[index].append(o.score if o.score is not None else o.status.value)
    return out
