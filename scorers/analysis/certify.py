"""Certify a judge against people, and measure how people agree with each other.

- :func:`certify_judge`: from rows both a person and the judge gave a verdict on, the
  judge's true-positive rate (sensitivity: of the rows people pass, the share the judge
  passes) and true-negative rate (specificity), each with a Wilson interval
  (``scipy.stats.binomtest(...).proportion_ci(method="wilson")``); the run's pass rate
  corrected for the judge's errors by the Rogan–Gladen estimator (Rogan & Gladen,
  "Estimating prevalence from the results of a screening test", *Am. J. Epidemiol.* 107,
  1978): ``(p + TNR − 1) / (TPR + TNR − 1)``, clipped to [0, 1], with a percentile bootstrap
  interval that resamples the labelled rows and the run's verdicts; and a verdict in plain
  words decided from the intervals' lower (and upper) bounds at a level the user sets.
- :func:`krippendorff_alpha`: agreement between several reviewers on the same rows
  (Krippendorff, *Content Analysis*, 2004, ch. 11, via the coincidence matrix), nominal
  (pass/fail) or interval (scores), with a bootstrap interval over rows.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from scorers.analysis.agreement import agreement_report, agreement_rows, passes
from scorers.analysis.labels import current_labels, reviewer_labels, scorer_scale
from scorers.catalogue.registry import SCORERS


@dataclass(frozen=True)
class Rate:
    """A share with its interval: ``hits`` of ``n`` (``value`` None when ``n`` is 0)."""

    hits: int
    n: int
    value: float | None
    low: float | None
    high: float | None


def _wilson(hits: int, n: int, confidence: float) -> Rate:
    if n == 0:
        return Rate(hits, n, None, None, None)
    ci = stats.binomtest(hits, n).proportion_ci(confidence_level=confidence, method="wilson")
    return Rate(hits, n, hits / n, float(ci.low), float(ci.high))


def rogan_gladen(raw_rate: float, tpr: float, tnr: float) -> float | None:
    """The pass rate corrected for a judge's errors: ``(p + TNR − 1) / (TPR + TNR − 1)``, clipped to [0, 1].

    Args:
        raw_rate: the share of rows the judge passes, in [0, 1].
        tpr: the judge's true-positive rate against people, in [0, 1].
        tnr: its true-negative rate, in [0, 1].

    Returns:
        The corrected rate, or None when ``TPR + TNR <= 1`` (the judge is no better than a
        coin: its verdicts carry no information to correct with).

    >>> round(rogan_gladen(0.6, 0.8, 0.9), 6)
    0.714286
    """
    youden = tpr + tnr - 1
    if youden <= 0:
        return None
    return min(1.0, max(0.0, (raw_rate + tnr - 1) / youden))


@dataclass(frozen=True)
class Certificate:
    """How far a judge can be trusted on a task (see :func:`certify_judge`).

    Attributes:
        tpr: of the labelled rows people pass, how many the judge passes.
        tnr: of the labelled rows people fail, how many the judge fails.
        raw_rate: the judge's pass rate over the whole run (``hits`` of ``n`` rows it scored).
        corrected: the Rogan–Gladen pass rate, None when undefined.
        corrected_low, corrected_high: its percentile bootstrap interval (None when undefined).
        level: the rate both TPR and TNR must reach.
        confidence: the intervals' level.
        verdict: ``"good enough"``, ``"not good enough"`` or ``"not known yet"``.
        explanation: the verdict and the correction in plain words, for a stakeholder.
    """

    tpr: Rate
    tnr: Rate
    raw_rate: Rate
    corrected: float | None
    corrected_low: float | None
    corrected_high: float | None
    level: float
    confidence: float
    verdict: str
    explanation: str


def certify_judge(
    human: Sequence[bool],
    judge: Sequence[bool],
    run_verdicts: Sequence[bool],
    *,
    level: float = 0.8,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> Certificate:
    """Certify a judge from rows people labelled, and correct the run's pass rate for its errors.

    Args:
        human: people's verdicts (True = pass) on the labelled rows.
        judge: the judge's verdicts on the same rows, in the same order.
        run_verdicts: the judge's verdict on every scored row of the run (labelled or not).
        level: the TPR and TNR the task needs, in (0, 1]: the judge is "good enough" when
            both lower interval bounds reach it, "not good enough" when either upper bound
            is below it, else "not known yet".
        confidence: the intervals' level, in (0, 1).
        n_resamples: bootstrap resamples for the corrected rate.
        seed: ``numpy.random.default_rng`` seed.

    Returns:
        The :class:`Certificate`.

    Raises:
        ValueError: ``human`` and ``judge`` differ in length, or ``level`` / ``confidence``
            out of range.
    """
    if len(human) != len(judge):
        raise ValueError(f"human and judge verdicts differ in length: {len(human)} vs {len(judge)}")
    if not 0 < level <= 1 or not 0 < confidence < 1:
        raise ValueError(f"level must be in (0, 1] and confidence in (0, 1); got {level}, {confidence}")
    h = np.asarray(human, dtype=bool)
    j = np.asarray(judge, dtype=bool)
    run = np.asarray(run_verdicts, dtype=bool)
    tpr = _wilson(int((h & j).sum()), int(h.sum()), confidence)
    tnr = _wilson(int((~h & ~j).sum()), int((~h).sum()), confidence)
    raw = _wilson(int(run.sum()), len(run), confidence)
    corrected = low = high = None
    if tpr.value is not None and tnr.value is not None and raw.value is not None:
        corrected = rogan_gladen(raw.value, tpr.value, tnr.value)
        rng = np.random.default_rng(seed)
        draws = []
        for _ in range(n_resamples):
            pick = rng.integers(0, len(h), len(h))
            hh, jj = h[pick], j[pick]
            if hh.all() or not hh.any():
                continue
            rate = rogan_gladen(
                float(run[rng.integers(0, len(run), len(run))].mean()),
                float((hh & jj).sum() / hh.sum()),
                float((~hh & ~jj).sum() / (~hh).sum()),
            )
            if rate is not None:
                draws.append(rate)
        if corrected is not None and draws:
            tail = (1 - confidence) / 2 * 100
            low, high = (float(x) for x in np.percentile(draws, [tail, 100 - tail]))
    verdict, explanation = _explain(tpr, tnr, raw, corrected, low, high, level, confidence)
    return Certificate(tpr, tnr, raw, corrected, low, high, level, confidence, verdict, explanation)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _explain(
    tpr: Rate,
    tnr: Rate,
    raw: Rate,
    corrected: float | None,
    low: float | None,
    high: float | None,
    level: float,
    confidence: float,
) -> tuple[str, str]:
    need = f"at least {level:.0%} of both the rows people pass and the rows people fail"
    if tpr.low is None or tnr.low is None:
        missing = "pass" if tpr.n == 0 else "fail"
        return "not known yet", (
            f"No labelled row that people {missing}: label some before the judge can be certified. "
            f"The task needs the judge to get {need} right."
        )
    conf = f"{confidence:.0%}"
    rates = (
        f"The judge passes {_pct(tpr.value)} of the {tpr.n} labelled rows people pass ({conf} interval "
        f"{_pct(tpr.low)}–{_pct(tpr.high)}) and fails {_pct(tnr.value)} of the {tnr.n} rows people fail "
        f"({_pct(tnr.low)}–{_pct(tnr.high)})."
    )
    if tpr.low >= level and tnr.low >= level:
        verdict, head = (
            "good enough",
            f"Good enough for this task: even the low ends of both intervals reach {level:.0%}.",
        )
    elif (tpr.high is not None and tpr.high < level) or (tnr.high is not None and tnr.high < level):
        verdict, head = (
            "not good enough",
            f"Not good enough for this task: it is below {level:.0%} even at the high end of an interval.",
        )
    else:
        verdict, head = (
            "not known yet",
            (
                f"Not known yet: the intervals still straddle {level:.0%}; label more rows (especially of the smaller class)."
            ),
        )
    if corrected is None:
        correction = (
            "Its verdicts are no better than chance (TPR + TNR ≤ 1), so the run's pass rate cannot be corrected."
        )
    else:
        correction = (
            f"On the whole run the judge passes {_pct(raw.value)} of {raw.n} rows. Because it wrongly passes some "
            f"rows people fail and wrongly fails some they pass, the share people would pass is estimated at "
            f"{_pct(corrected)} ({conf} interval {_pct(low)}–{_pct(high)}): the raw rate minus the judge's expected "
            "false passes, plus its expected false fails (the Rogan–Gladen correction)."
        )
    return verdict, " ".join([head, rates, correction])


def krippendorff_alpha(units: Sequence[Sequence[Hashable | float]], *, level: str = "nominal") -> float | None:
    """Krippendorff's alpha of several reviewers' values on the same rows.

    ``α = 1 − D_o / D_e`` with the coincidence matrix ``o_ck = Σ_u (pairs c–k in unit u) / (m_u − 1)``
    over units with m_u ≥ 2 values, ``n_c = Σ_k o_ck``, ``n = Σ_c n_c``,
    ``D_o = Σ_ck o_ck δ²_ck / n`` and ``D_e = Σ_ck n_c n_k δ²_ck / (n (n − 1))``
    (Krippendorff 2004, ch. 11).

    Args:
        units: one list per row of the values the reviewers gave it (missing reviewers
            simply absent); rows with fewer than two values are ignored.
        level: ``"nominal"`` (δ² = 0 if equal else 1: verdicts) or ``"interval"`` (δ² = (c − k)²: scores).

    Returns:
        α in [−1, 1] (1 = perfect agreement, 0 = chance), or None when undefined (fewer than
        two pairable values, or all values equal so no disagreement is expected).

    Raises:
        ValueError: an unknown level.

    >>> round(krippendorff_alpha([["a", "a"], ["a", "b"], ["b", "b"], ["b", "b"]]), 4)
    0.5333
    """
    if level not in ("nominal", "interval"):
        raise ValueError(f"unknown level {level!r}; use 'nominal' or 'interval'")
    pairable = [list(u) for u in units if len(u) >= 2]
    values = sorted({v for u in pairable for v in u}, key=str)
    if len(values) < 2:
        return None
    index = {v: i for i, v in enumerate(values)}
    o = np.zeros((len(values), len(values)))
    for unit in pairable:
        m = len(unit)
        for a in range(m):
            for b in range(m):
                if a != b:
                    o[index[unit[a]], index[unit[b]]] += 1.0 / (m - 1)
    if level == "nominal":
        delta = 1.0 - np.eye(len(values))
    else:
        x = np.array([float(v) for v in values])
        delta = (x[:, None] - x[None, :]) ** 2
    n_c = o.sum(axis=1)
    n = n_c.sum()
    d_observed = (o * delta).sum() / n
    d_expected = (np.outer(n_c, n_c) * delta).sum() / (n * (n - 1))
    if d_expected == 0 or math.isnan(d_expected):
        return None
    return float(1 - d_observed / d_expected)


def krippendorff_interval(
    units: Sequence[Sequence[Hashable | float]],
    *,
    level: str = "nominal",
    confidence: float = 0.95,
    n_resamples: int = 1000,
    seed: int = 0,
) -> tuple[float | None, float | None]:
    """A percentile bootstrap interval of :func:`krippendorff_alpha`, resampling rows with replacement.

    Returns:
        ``(low, high)``, or ``(None, None)`` when alpha is undefined on every resample.
    """
    pairable = [list(u) for u in units if len(u) >= 2]
    if not pairable:
        return None, None
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_resamples):
        pick = rng.integers(0, len(pairable), len(pairable))
        alpha = krippendorff_alpha([pairable[i] for i in pick], level=level)
        if alpha is not None:
            draws.append(alpha)
    if not draws:
        return None, None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return float(low), float(high)


__all__ = [
    "Certificate",
    "Rate",
    "certify_judge",
    "krippendorff_alpha",
    "krippendorff_interval",
    "labels_report_tables",
    "rogan_gladen",
]


def labels_report_tables(store: Any, run: Mapping[str, Any], result: Any, items: Sequence[Any]) -> dict[str, Any]:
    """The HTML report's tables of people's labels: agreement per scorer, and every current label.

    The verdicts are taken at half each scorer's scale (the Review page's default threshold).

    Args:
        store: the database (:class:`scorers.runs.store.Store`).
        run: the run record.
        result: its :class:`scorers.runs.runner.EvalRunResult`.
        items: its items.

    Returns:
        ``{}`` when nothing is labelled; else ``"Agreement with people"`` (one row per labelled
        scorer: labelled rows, agreement rate, Cohen's kappa, reviewers, Krippendorff's alpha with
        its interval, TPR, TNR, the corrected pass rate and the verdict at 80%) and ``"Labels"``
        (one row per current label: item, scorer, reviewer, verdict, score, comment, source, when).
    """
    labels = current_labels(store, run["id"])
    if not labels:
        return {}
    summary = []
    for sid in result.scorer_ids:
        mine = {k: v for k, v in labels.items() if k[1] == sid}
        if not mine:
            continue
        scale = scorer_scale(run, sid, store)
        higher = SCORERS[sid].higher_is_better if sid in SCORERS else True
        threshold = scale / 2
        report = agreement_report(
            agreement_rows(result, mine, sid), threshold=threshold, scale=scale, higher_is_better=higher
        )
        pairs = [(d.human_pass, d.judge_pass) for d in report.disagreements if d.human_pass is not None]
        verdicts = [
            passes(o.score, threshold, higher_is_better=higher)
            for o in result.outcomes
            if o.scorer_id == sid and o.score is not None
        ]
        cert = certify_judge([h for h, _ in pairs], [j for _, j in pairs], verdicts) if pairs and verdicts else None
        units: dict[int, list[bool]] = {}
        by_reviewer = reviewer_labels(store, run["id"], sid)
        for per in by_reviewer.values():
            for index, label in per.items():
                verdict = label.human_pass
                if verdict is None and label.human_score is not None:
                    verdict = passes(label.human_score, threshold, higher_is_better=higher)
                if verdict is not None:
                    units.setdefault(index, []).append(verdict)
        alpha = krippendorff_alpha(list(units.values()))
        low, high = krippendorff_interval(list(units.values()), n_resamples=300)
        summary.append(
            {
                "scorer": sid,
                "threshold": threshold,
                "labelled rows": report.n_labelled,
                "agreement rate": report.agreement_rate,
                "Cohen's kappa": report.kappa.value,
                "reviewers": len(by_reviewer),
                "Krippendorff's alpha": alpha,
                "alpha 95% interval": None if low is None else f"{low:.2f} to {high:.2f}",
                "TPR": cert.tpr.value if cert else None,
                "TNR": cert.tnr.value if cert else None,
                "corrected pass rate": cert.corrected if cert else None,
                "judge verdict at 80%": cert.verdict if cert else "not known yet",
            }
        )
    rows = [
        {
            "item_id": items[index].item_id if index < len(items) else index,
            "scorer": sid,
            "reviewer": label.reviewer,
            "verdict": None if label.human_pass is None else ("pass" if label.human_pass else "fail"),
            "score": label.human_score,
            "comment": label.comment,
            "source": label.source,
            "labelled at": label.created_at[:16].replace("T", " "),
        }
        for (index, sid), label in sorted(labels.items())
    ]
    return {"Agreement with people": pd.DataFrame(summary), "Labels": pd.DataFrame(rows)}
