"""A regression gate for CI: a candidate run against a baseline, scorer by scorer.

The CLI (``python -m scorers gate``) and the dashboard's Compare page both call
:func:`evaluate_gate`, so they show the same verdict with the same numbers.

Per scorer present in both runs, items are paired by ``item_id`` and the statistics come
from :func:`scorers.analysis.compare.paired` (candidate − baseline): the mean difference
with its paired percentile-bootstrap interval, wins/ties/losses and the Wilcoxon
signed-rank test. A pair counts only when both sides were scored: an item that was not
scored (a judge failure, invalid input, no outcome stored at all, :data:`NOT_RUN`, or a
baseline item the candidate lacks) is never counted as 0; it is counted apart, and too many
of them make the scorer undecided. The items gated are the baseline's: the candidate's items
that the baseline lacks are not gated (the result's notes say how many).

Decision rule for one scorer, with ``g = d`` when higher is better and ``g = −d`` when
lower is better (so g < 0 is always worse), ``d`` the candidate − baseline differences:

1. **undecided** when no item is paired, or when the share of the baseline's items not scored
   on either side (or missing from the candidate) exceeds ``max_unscored_share``;
2. **fail** (regression) when ``mean(g) < −min_effect`` *and* the interval of ``mean(g)``
   lies wholly below zero (it excludes zero on the worse side);
3. **fail** (floor) when the candidate's mean over its scored items is below the floor
   (above it for a lower-is-better scorer);
4. otherwise **pass**.

The gate fails when any scorer fails (exit 1); otherwise it is undecided when any scorer is
undecided (exit 3); otherwise it passes (exit 0). The Wilcoxon p-value is reported for
reading, not used in the rule (the interval and the minimum effect decide).
"""

from __future__ import annotations

import hashlib
import html
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import pandas as pd

from scorers.analysis.compare import PairedComparison, StoredRun, paired, read_stored_run, table_outcomes
from scorers.analysis.gate_defaults import DEFAULT_MAX_UNSCORED_SHARE, DEFAULT_TOP
from scorers.analysis.junit import JUnitCase, JUnitSuite, junit_xml
from scorers.analysis.numbers import p_value_text, signed_number, signed_numbers
from scorers.catalogue.registry import unlike_scorers
from scorers.core.base import decimal_text
from scorers.core.errors import InvalidInputError, ScoreStatus
from scorers.runs.export import SCORER_OPTIONS_COLUMN, json_safe, read_results
from scorers.runs.runner import recorded_scorer_options
from scorers.runs.store import Store
from scorers.runs.table import RunTable

NOT_RUN = "not_run"
"""Status of an item × scorer with no stored outcome (the run stopped before scoring it)."""


_BASE = "group:gate"
_CANDIDATE = "candidate"
_BASELINE = "baseline"


class Verdict(str, Enum):
    """The outcome of the gate, or of one scorer in it."""

    PASS = "pass"
    FAIL = "fail"
    UNDECIDED = "undecided"


EXIT_CODES: Mapping[Verdict, int] = {Verdict.PASS: 0, Verdict.FAIL: 1, Verdict.UNDECIDED: 3}
"""The CLI's exit code for each verdict (2 is a usage error, before any verdict)."""


@dataclass(frozen=True)
class GatePolicy:
    """What the gate asks of the candidate.

    Attributes:
        min_effect: scorer id → minimum effect, on the scorer's own scale (a 0..10 scorer
            takes 0..10 units), >= 0: a worse mean difference smaller than this passes.
        default_min_effect: the minimum effect of scorers not in ``min_effect`` (default 0:
            any regression the interval shows fails).
        floors: scorer id → absolute floor of the candidate's mean (a ceiling for scorers
            where lower is better).
        max_unscored_share: in [0, 1]; a scorer with a larger share of the baseline's items
            not scored on either side (or missing from the candidate) is undecided.
        confidence, n_resamples, seed: the bootstrap interval (:func:`scorers.analysis.compare.bootstrap_ci`).
        top: most-regressed items listed per scorer.
        assume_same_options: gate a scorer whose options a side does not record (a results file
            exported before exports carried them) as if they matched the other side's; by default
            :func:`evaluate_gate` refuses it, since scores on another scale, mode or target would read
            as a change.

    Raises:
        ValueError: a negative or non-finite minimum effect, a share outside [0, 1], or a
            non-finite floor.
    """

    min_effect: Mapping[str, float] = field(default_factory=dict)
    default_min_effect: float = 0.0
    floors: Mapping[str, float] = field(default_factory=dict)
    max_unscored_share: float = DEFAULT_MAX_UNSCORED_SHARE
    confidence: float = 0.95
    n_resamples: int = 2000
    seed: int = 0
    top: int = DEFAULT_TOP
    assume_same_options: bool = False

    def __post_init__(self) -> None:
        for name, value in [("default", self.default_min_effect), *self.min_effect.items()]:
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"the minimum effect of {name} must be a finite number >= 0, got {value!r}")
        for name, value in self.floors.items():
            if not (isinstance(value, (int, float)) and math.isfinite(value)):
                raise ValueError(f"the floor of {name} must be a finite number, got {value!r}")
        if not 0 <= self.max_unscored_share <= 1:
            raise ValueError(f"the share of unscored items allowed must be in [0, 1], got {self.max_unscored_share}")
        if self.top < 0:
            raise ValueError(f"top must be >= 0, got {self.top}")

    def min_effect_for(self, scorer: str) -> float:
        """The minimum effect that applies to ``scorer``."""
        return float(self.min_effect.get(scorer, self.default_min_effect))

    def to_dict(self) -> dict[str, Any]:
        """The policy as plain data."""
        return {
            "min_effect": dict(self.min_effect),
            "default_min_effect": self.default_min_effect,
            "floors": dict(self.floors),
            "max_unscored_share": self.max_unscored_share,
            "confidence": self.confidence,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "assume_same_options": self.assume_same_options,
        }


@dataclass(frozen=True)
class GateSide:
    """A baseline or candidate, resolved (see :func:`resolve_side`).

    Attributes:
        label: what to call it, e.g. ``"baseline 'main' (run 3f2a9c0d1e4b)"``.
        kind: ``"run"``, ``"baseline"`` (a named baseline's current run) or ``"file"``.
        run_id: the stored run (for a file, its ``run_id`` column when it names one run), or None.
        frame: one row per item × scorer: ``item_id``, ``scorer``, ``status``, ``score`` (NaN
            when not scored), and any texts; items with no outcome have status :data:`NOT_RUN`.
        options: scorer id → the options the side scored with (a scorer missing: its defaults; None for a
            scorer: not known), or None when none are known (a results file exported without them).
    """

    label: str
    kind: str
    run_id: str | None
    frame: pd.DataFrame = field(repr=False)
    options: Mapping[str, Mapping[str, Any] | None] | None = field(default=None, repr=False)

    def options_unknown(self, scorer: str) -> bool:
        """Whether the options ``scorer`` scored with on this side are not known."""
        return self.options is None or (scorer in self.options and self.options[scorer] is None)


@dataclass(frozen=True)
class Regression:
    """One item that got worse: scores on both sides and ``change`` = candidate − baseline."""

    item_id: str
    baseline_score: float
    candidate_score: float
    change: float
    input: str | None = None


@dataclass(frozen=True)
class ScorerGate:
    """The gate's account of one scorer.

    Attributes:
        scorer: the scorer id.
        higher_is_better: the scorer's direction (from its catalogue entry).
        verdict: pass, fail or undecided.
        reasons: one sentence per reason for the verdict.
        n_items: the baseline's item ids for this scorer (the items gated).
        n_pairs: of those, items scored on both sides.
        n_unscored_baseline, n_unscored_candidate: of those, items not scored on that side
            (for the candidate, including items it lacks).
        unscored_share: ``(n_items − n_pairs) / n_items`` (1 without items).
        baseline_mean, candidate_mean: means over the paired items (None without pairs).
        candidate_mean_all: the candidate's mean over all its scored items (for the floor).
        mean_diff, ci_low, ci_high: candidate − baseline and its interval (None without pairs).
        wins, ties, losses: items where the candidate is better, the same, worse (in the
            scorer's direction).
        wilcoxon_p: two-sided Wilcoxon signed-rank p-value, or None (``note`` says why).
        note: why there is no p-value, or "".
        min_effect, floor: the policy that applied.
        regressions: the most-regressed items, worst first.
        unscored: ``(item_id, why)`` of each gated item not scored on a side, e.g.
            ``("q7", "candidate: api_error")`` or ``("q8", "candidate: missing")``, in item id order.
        comparison: the underlying :class:`PairedComparison` (candidate as ``a``).
    """

    scorer: str
    higher_is_better: bool
    verdict: Verdict
    reasons: tuple[str, ...]
    n_items: int
    n_pairs: int
    n_unscored_baseline: int
    n_unscored_candidate: int
    unscored_share: float
    baseline_mean: float | None
    candidate_mean: float | None
    candidate_mean_all: float | None
    mean_diff: float | None
    ci_low: float | None
    ci_high: float | None
    wins: int
    ties: int
    losses: int
    wilcoxon_p: float | None
    note: str
    min_effect: float
    floor: float | None
    regressions: tuple[Regression, ...]
    unscored: tuple[tuple[str, str], ...] = field(repr=False)
    comparison: PairedComparison = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for the JSON verdict."""
        return json_safe(
            {
                "scorer": self.scorer,
                "direction": "higher is better" if self.higher_is_better else "lower is better",
                "verdict": self.verdict.value,
                "reasons": list(self.reasons),
                "n_items": self.n_items,
                "n_pairs": self.n_pairs,
                "n_unscored_baseline": self.n_unscored_baseline,
                "n_unscored_candidate": self.n_unscored_candidate,
                "unscored_share": self.unscored_share,
                "baseline_mean": self.baseline_mean,
                "candidate_mean": self.candidate_mean,
                "candidate_mean_all_scored": self.candidate_mean_all,
                "mean_diff": self.mean_diff,
                "ci_low": self.ci_low,
                "ci_high": self.ci_high,
                "confidence": self.comparison.confidence,
                "wins": self.wins,
                "ties": self.ties,
                "losses": self.losses,
                "wilcoxon_p": self.wilcoxon_p,
                "note": self.note,
                "min_effect": self.min_effect,
                "floor": self.floor,
                "top_regressions": [
                    {
                        "item_id": r.item_id,
                        "baseline_score": r.baseline_score,
                        "candidate_score": r.candidate_score,
                        "change": r.change,
                    }
                    for r in self.regressions
                ],
                "unscored": [{"item_id": i, "why": why} for i, why in self.unscored],
            }
        )


def _unlike_text(scorer: str, differences: Sequence[str]) -> str:
    """Why a scorer on both sides is not gated: the options it was scored with differ."""
    return f"{scorer} was scored with other options ({'; '.join(differences)}, baseline against candidate)"


@dataclass(frozen=True)
class GateResult:
    """The gate's verdict on a candidate against a baseline (see :func:`evaluate_gate`).

    Attributes:
        baseline, candidate: the two sides.
        scorers: one :class:`ScorerGate` per scorer present on both sides, in the candidate's order.
        verdict: fail if a scorer fails, else undecided if one is undecided or a baseline scorer has no
            candidate results, else pass.
        notes: what else the reader should know (items or scorers on one side only).
        policy: the policy applied.
        unlike: scorer id → the options that differ, for a scorer on both sides scored with other
            options (not gated, so the gate cannot pass).
    """

    baseline: GateSide
    candidate: GateSide
    scorers: tuple[ScorerGate, ...]
    verdict: Verdict
    notes: tuple[str, ...]
    policy: GatePolicy
    unlike: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """0 pass, 1 fail, 3 undecided (:data:`EXIT_CODES`)."""
        return EXIT_CODES[self.verdict]

    def headline(self) -> str:
        """One sentence: the verdict and which scorers decided it."""
        failed = [s.scorer for s in self.scorers if s.verdict is Verdict.FAIL]
        undecided = [s.scorer for s in self.scorers if s.verdict is Verdict.UNDECIDED]
        if failed:
            return f"FAIL: {', '.join(failed)} got worse than the baseline allows."
        if undecided:
            return f"UNDECIDED: too few items were scored to decide on {', '.join(undecided)}."
        if self.verdict is Verdict.UNDECIDED:
            gated = {s.scorer for s in self.scorers} | set(self.unlike)
            dropped = [s for s in self.baseline.frame["scorer"].unique().tolist() if s not in gated]
            why = [f"the candidate has no results for {', '.join(dropped)}"] if dropped else []
            why += [_unlike_text(s, differ) for s, differ in self.unlike.items()]
            return f"UNDECIDED: {'; '.join(why)}."
        return f"PASS: no scorer regressed ({len(self.scorers)} compared)."

    def to_dict(self) -> dict[str, Any]:
        """The JSON verdict: sides, policy, verdict, exit code, notes and every scorer's numbers."""
        return {
            "verdict": self.verdict.value,
            "exit_code": self.exit_code,
            "headline": self.headline(),
            "baseline": {"label": self.baseline.label, "kind": self.baseline.kind, "run_id": self.baseline.run_id},
            "candidate": {"label": self.candidate.label, "kind": self.candidate.kind, "run_id": self.candidate.run_id},
            "policy": self.policy.to_dict(),
            "notes": list(self.notes),
            "scorers": [s.to_dict() for s in self.scorers],
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as indented JSON text."""
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False)


# ---- sides ---------------------------------------------------------------------------------------------


def _with_missing_outcomes(frame: pd.DataFrame, item_ids: Sequence[str], scorers: Sequence[str]) -> pd.DataFrame:
    """Add a :data:`NOT_RUN` row for every item × scorer without an outcome."""
    have = set(zip(frame["item_id"].tolist(), frame["scorer"].tolist(), strict=True))
    missing = [(i, s) for s in scorers for i in dict.fromkeys(item_ids) if (i, s) not in have]
    if not missing:
        return frame
    extra = pd.DataFrame(
        {
            "item_id": [i for i, _ in missing],
            "scorer": [s for _, s in missing],
            "status": NOT_RUN,
            "score": float("nan"),
        }
    )
    return pd.concat([frame, extra], ignore_index=True)


def side_from_run(
    store: Store,
    run_id: str,
    *,
    label: str | None = None,
    kind: str = "run",
    read: Callable[[str], StoredRun] | None = None,
) -> GateSide:
    """A stored run as a gate side; items with no stored outcome count as :data:`NOT_RUN`.

    Args:
        store: the store with the run.
        run_id: the run.
        label: the side's name in the verdict (default ``run <name> (<id>)``).
        kind: ``"run"`` or ``"baseline"``.
        read: run id → :data:`~scorers.analysis.compare.StoredRun` (default
            :func:`~scorers.analysis.compare.read_stored_run` from ``store``).

    Raises:
        KeyError: no such run.
    """
    run, items, result, frame = read(run_id) if read is not None else read_stored_run(store, run_id)
    frame = _with_missing_outcomes(frame, [it.item_id for it in items], result.scorer_ids)
    return GateSide(label or f"run {run['name']} ({run_id})", kind, run_id, frame, recorded_scorer_options(run))


def side_from_table(table: RunTable, *, label: str | None = None, kind: str = "run") -> GateSide:
    """A stored run read in columns (:func:`scorers.runs.table.load_run_table`) as a gate side, without its texts.

    The same verdict and numbers as :func:`side_from_run` of the run; the side has no ``input``
    column, so the regressions it gives carry no input text (the HTML gate report shows it).

    Args:
        table: the run.
        label: the side's name in the verdict (default ``run <name> (<id>)``).
        kind: ``"run"`` or ``"baseline"``.
    """
    run = table.run
    frame = table_outcomes(table)[["item_id", "scorer", "status", "score"]]
    frame = _with_missing_outcomes(frame, table.items["item_id"].astype(object).tolist(), table.scorer_ids)
    return GateSide(label or f"run {run['name']} ({run['id']})", kind, run["id"], frame, recorded_scorer_options(run))


def side_from_file(path: str | Path) -> GateSide:
    """A JSON Lines or Parquet results export as a gate side (:func:`scorers.runs.export.read_results`).

    The side's options are the file's :data:`~scorers.runs.export.SCORER_OPTIONS_COLUMN`: a scorer
    with a row that has none is not known (None), and a file without the column knows none (a file
    exported before exports carried them).

    Raises:
        InvalidInputError: the file cannot be read as a results export, or it gives one scorer
            different options on different rows (two runs' results in one file).
    """
    frame = read_results(path)
    run_ids = list(dict.fromkeys(frame["run_id"].dropna().astype(str))) if "run_id" in frame.columns else []
    options: dict[str, dict[str, Any] | None] | None = None
    if SCORER_OPTIONS_COLUMN in frame.columns:
        options = {}
        for scorer, values in frame.groupby("scorer", sort=False)[SCORER_OPTIONS_COLUMN]:
            seen = {json.dumps(json_safe(v), sort_keys=True) if isinstance(v, dict) else None for v in values}
            if None in seen:  # a row without options: not known
                options[str(scorer)] = None
            elif len(seen) > 1:
                raise InvalidInputError(
                    f"{path}: {scorer} was scored with different options on different rows "
                    f"({'; '.join(sorted(seen))}): gate one run's results at a time",
                    field=str(path),
                )
            else:
                options[str(scorer)] = json.loads(seen.pop())
    return GateSide(f"file {Path(path).name}", "file", run_ids[0] if len(run_ids) == 1 else None, frame, options)


def resolve_side(spec: str, store: Store | None) -> GateSide:
    """Resolve ``--baseline`` / ``--candidate``: a results file, a named baseline or a stored run id.

    ``spec`` may carry a prefix to say which: ``file:PATH``, ``baseline:NAME`` or ``run:ID``.
    Without one, an existing file wins, then a named baseline, then a run id.

    Args:
        spec: what the user gave.
        store: the store with runs and baselines, or None when there is none.

    Returns:
        The side.

    Raises:
        InvalidInputError: nothing matches (the message says what was looked for), a named
            baseline whose run was deleted, or an unreadable file.
    """
    kind, sep, rest = spec.partition(":")
    prefixed = sep and kind in ("file", "baseline", "run")
    name = rest if prefixed else spec
    if (prefixed and kind == "file") or (not prefixed and Path(spec).expanduser().is_file()):
        return side_from_file(Path(name).expanduser())
    if store is not None and (not prefixed or kind == "baseline"):
        current = store.current_baseline(name)
        if current is not None:
            try:
                return side_from_run(
                    store, current["run_id"], label=f"baseline {name!r} (run {current['run_id']})", kind="baseline"
                )
            except KeyError:
                raise InvalidInputError(
                    f"baseline {name!r} points at run {current['run_id']}, which was deleted; set it again with "
                    f"`python -m scorers baseline set {name} RUN_ID`",
                    field=name,
                ) from None
    if store is not None and (not prefixed or kind == "run"):
        try:
            return side_from_run(store, name)
        except KeyError:
            pass
    where = f" in {store.display_name}" if store is not None else " (there is no store)"
    raise InvalidInputError(
        f"{spec!r} is not a results file (.jsonl or .parquet), a named baseline or a run id{where}; "
        "`python -m scorers runs` lists the runs and `python -m scorers baseline list` the baselines",
        field=spec,
    )


# ---- the gate ------------------------------------------------------------------------------------------


def _scored(frame: pd.DataFrame) -> pd.Series:
    return (frame["status"] == ScoreStatus.SCORED.value) & frame["score"].notna()


def _mean(values: Sequence[float]) -> float | None:
    return float(sum(values) / len(values)) if len(values) else None


def _fmt(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else decimal_text(value, digits)


def _scorer_gate(combined: pd.DataFrame, scorer: str, policy: GatePolicy) -> ScorerGate:
    part = combined[combined["scorer"] == scorer]
    base, cand = part[part[_BASE] == _BASELINE], part[part[_BASE] == _CANDIDATE]
    gated = set(base["item_id"].tolist())  # the items gated: the baseline's
    base_ok = set(base.loc[_scored(base), "item_id"].tolist()) & gated
    cand_ok = set(cand.loc[_scored(cand), "item_id"].tolist()) & gated
    comparison = paired(
        part[part["item_id"].astype(object).isin(gated)],  # object: isin on pyarrow strings is slow
        scorer,
        _CANDIDATE,
        _BASELINE,
        group_col=_BASE,
        pair_col="item_id",
        confidence=policy.confidence,
        n_resamples=policy.n_resamples,
        seed=policy.seed,
    )
    hib = comparison.higher_is_better
    sign = 1.0 if hib else -1.0
    n_items, n_pairs = len(gated), comparison.n_pairs
    share = (n_items - n_pairs) / n_items if n_items else 1.0
    scores = {
        side: dict(
            zip(frame.loc[_scored(frame), "item_id"].tolist(), frame.loc[_scored(frame), "score"].tolist(), strict=True)
        )
        for side, frame in ((_BASELINE, base), (_CANDIDATE, cand))
    }
    pair_ids = list(comparison.pair_ids)
    baseline_mean = _mean([scores[_BASELINE][i] for i in pair_ids])
    candidate_mean = _mean([scores[_CANDIDATE][i] for i in pair_ids])
    candidate_all = cand.loc[_scored(cand), "score"].astype(float)
    candidate_mean_all = float(candidate_all.mean()) if len(candidate_all) else None
    wins, losses = (comparison.wins, comparison.losses) if hib else (comparison.losses, comparison.wins)
    min_effect = policy.min_effect_for(scorer)
    floor = policy.floors.get(scorer)

    reasons: list[str] = []
    verdict = Verdict.PASS
    direction = "higher" if hib else "lower"
    if n_pairs == 0:
        verdict = Verdict.UNDECIDED
        reasons.append(
            f"no item was scored on both sides ({n_items} in the baseline), so nothing can be compared"
            if n_items
            else "no item id is on both sides, so nothing can be compared"
        )
    elif share > policy.max_unscored_share:
        verdict = Verdict.UNDECIDED
        reasons.append(
            f"{n_items - n_pairs} of {n_items} items ({share:.0%}) were not scored on one side or both "
            f"({n_items - len(cand_ok)} in the candidate, {n_items - len(base_ok)} in the baseline); at most "
            f"{policy.max_unscored_share:.0%} may be (failures are never counted as 0)"
        )
    else:
        assert comparison.mean_diff is not None and comparison.ci_low is not None and comparison.ci_high is not None
        effect = sign * comparison.mean_diff
        best_bound = max(sign * comparison.ci_low, sign * comparison.ci_high)  # the interval's end nearest "better"
        diff, low, high = signed_numbers([comparison.mean_diff, comparison.ci_low, comparison.ci_high])
        interval = f"the {comparison.confidence:.0%} interval [{low}, {high}]"
        if effect < -min_effect and best_bound < 0:
            verdict = Verdict.FAIL
            reasons.append(
                f"the mean changed by {diff} ({direction} is better), worse than the minimum "
                f"effect {min_effect:g}, and {interval} excludes zero"
            )
            if min_effect == 0:
                reasons.append(
                    "with a minimum effect of 0 any statistically detectable worsening fails, however small; "
                    'to let changes smaller than X pass, set a minimum effect: "Minimum effect" in the '
                    "dashboard's gate, --min-effect X (or --min-effect SCORER=X) in `python -m scorers gate`"
                )
        elif effect < 0:
            why = f"{interval} includes zero" if best_bound >= 0 else f"it is within the minimum effect {min_effect:g}"
            reasons.append(f"the mean changed by {diff} ({direction} is better), but {why}")
        else:
            reasons.append(f"the mean changed by {diff} ({direction} is better): no regression")
        if floor is not None and candidate_mean_all is not None:
            below = candidate_mean_all < floor if hib else candidate_mean_all > floor
            bound = "floor" if hib else "ceiling"
            if below:
                verdict = Verdict.FAIL
                reasons.append(
                    f"the candidate's mean {decimal_text(candidate_mean_all)} is {'below' if hib else 'above'} the {bound} "
                    f"{floor:g}"
                )
            else:
                reasons.append(f"the candidate's mean {decimal_text(candidate_mean_all)} meets the {bound} {floor:g}")

    changes = [
        (i, sign * d, d) for i, d in zip(comparison.pair_ids, comparison.differences, strict=True) if sign * d < 0
    ]
    changes.sort(key=lambda t: (t[1], t[0]))
    inputs = dict(zip(cand["item_id"].tolist(), cand["input"].tolist(), strict=True)) if "input" in cand.columns else {}
    regressions = tuple(
        Regression(
            item_id=i,
            baseline_score=float(scores[_BASELINE][i]),
            candidate_score=float(scores[_CANDIDATE][i]),
            change=float(d),
            input=inputs.get(i),
        )
        for i, _, d in changes[: policy.top]
    )
    statuses = {
        side: dict(zip(f["item_id"].tolist(), f["status"].tolist(), strict=False))
        for side, f in ((_BASELINE, base), (_CANDIDATE, cand))
    }
    unscored = tuple(
        (
            i,
            "; ".join(
                f"{side}: {statuses[side].get(i, 'missing')}"
                for side, ok in ((_BASELINE, base_ok), (_CANDIDATE, cand_ok))
                if i not in ok
            ),
        )
        for i in sorted(gated - (base_ok & cand_ok))
    )
    return ScorerGate(
        scorer=scorer,
        higher_is_better=hib,
        verdict=verdict,
        reasons=tuple(reasons),
        n_items=n_items,
        n_pairs=n_pairs,
        n_unscored_baseline=n_items - len(base_ok),
        n_unscored_candidate=n_items - len(cand_ok),
        unscored_share=share,
        baseline_mean=baseline_mean,
        candidate_mean=candidate_mean,
        candidate_mean_all=candidate_mean_all,
        mean_diff=comparison.mean_diff,
        ci_low=comparison.ci_low,
        ci_high=comparison.ci_high,
        wins=wins,
        ties=comparison.ties,
        losses=losses,
        wilcoxon_p=comparison.wilcoxon_p,
        note=comparison.note,
        min_effect=min_effect,
        floor=floor,
        regressions=regressions,
        unscored=unscored,
        comparison=comparison,
    )


def evaluate_gate(baseline: GateSide, candidate: GateSide, policy: GatePolicy | None = None) -> GateResult:
    """Gate a candidate against a baseline (the rule is in this module's docstring).

    Args:
        baseline: the reference side (:func:`resolve_side`, :func:`side_from_run` or :func:`side_from_file`).
        candidate: the side being gated.
        policy: minimum effects, floors, the unscored share allowed, the bootstrap; default :class:`GatePolicy`.

    Returns:
        The :class:`GateResult`.

    Raises:
        ValueError: no scorer on both sides; a scorer whose options a side does not record, unless
            ``policy.assume_same_options``; a minimum effect or floor naming a scorer that is not on
            both sides; an item id with two results for one scorer on one side.
    """
    policy = policy or GatePolicy()
    scorers_b, scorers_c = (side.frame["scorer"].unique().tolist() for side in (baseline, candidate))  # in order
    common = [s for s in scorers_c if s in scorers_b]
    # A scorer whose options a side does not record (a results file exported before exports carried
    # them, a Python run's scorer of the caller's own class) may have measured something else: it is not gated unless the user vouches that they match.
    unrecorded = [side.label for side in (baseline, candidate) if any(side.options_unknown(s) for s in common)]
    assumed = [s for s in common if baseline.options_unknown(s) or candidate.options_unknown(s)]
    if unrecorded and not policy.assume_same_options:
        one = len(unrecorded) == 1
        raise ValueError(
            f"{' and '.join(unrecorded)} {'does' if one else 'do'} not record the options {', '.join(assumed)} "
            f"scored with: {'it was' if one else 'they were'} exported before exports carried them, or scored by "
            "a scorer of the caller's own class (a Python run, whose options cannot be known), so the gate "
            "cannot tell whether both sides measured the same thing (another scale, evaluation mode or target "
            "would read as a change). Export the run again (`python -m scorers export RUN_ID --output FILE.jsonl`) "
            "or gate the stored run; if you know both sides were scored with the same options, pass "
            "--assume-same-options"
        )
    # A scorer run with other options on the two sides (textual difference against another text, another
    # scale or evaluation mode) measured something else: its scores are not compared, and it cannot pass.
    known = [s for s in common if s not in assumed]
    differences = unlike_scorers(known, baseline.options or {}, candidate.options or {})
    unlike = {s: _unlike_text(s, differ) for s, differ in differences.items()}
    common = [s for s in common if s not in unlike]
    if not common:
        raise ValueError(
            "; ".join(unlike.values()) + ": there is nothing to gate"
            if unlike
            else f"no scorer is in both the baseline ({', '.join(scorers_b) or 'none'}) and the candidate "
            f"({', '.join(scorers_c) or 'none'}): there is nothing to gate"
        )
    for what, names in (("--min-effect", policy.min_effect), ("--floor", policy.floors)):
        unknown = [n for n in names if n not in common]
        if unknown:
            raise ValueError(
                f"{what} names {', '.join(map(repr, unknown))}, not a scorer of both sides; "
                f"the scorers compared are {', '.join(common)}"
            )
    columns = ["item_id", "scorer", "status", "score", "input"]
    parts = []
    for side, name in ((baseline, _BASELINE), (candidate, _CANDIDATE)):
        frame = side.frame[[c for c in columns if c in side.frame.columns]]
        parts.append(frame.assign(**{_BASE: name, "item_id": frame["item_id"].astype(str)}))
    combined = pd.concat(parts, ignore_index=True)
    gates = tuple(_scorer_gate(combined, s, policy) for s in common)
    notes = []
    # A scorer scored with other options is on both sides: its note says so, not "only in" nor "no results".
    extra = [s for s in scorers_c if s not in common and s not in unlike]
    if extra:
        notes.append(f"Not gated, only in {candidate.label}: {', '.join(extra)}.")
    ids_b, ids_c = (set(side.frame["item_id"].astype(str).tolist()) for side in (baseline, candidate))
    if ids_c - ids_b:
        notes.append(f"{len(ids_c - ids_b)} item id(s) of the candidate are not in the baseline and are not gated.")
    if ids_b - ids_c:
        notes.append(
            f"{len(ids_b - ids_c)} item id(s) of the baseline are missing from the candidate: they count as not scored."
        )
    dropped = [s for s in scorers_b if s not in common and s not in unlike]
    if dropped:
        notes.append(
            f"{candidate.label} has no results for {', '.join(dropped)}: every baseline item of "
            f"{'it' if len(dropped) == 1 else 'them'} counts as not scored, so the gate cannot pass."
        )
    notes += [
        f"Not gated: {why}, so its scores do not measure the same thing and the gate cannot pass."
        for why in unlike.values()
    ]
    if assumed:
        notes.append(
            f"The options {', '.join(assumed)} scored with are not recorded on "
            f"{' and '.join(unrecorded)}: assumed to be the same on both sides (--assume-same-options)."
        )
    verdicts = {g.verdict for g in gates} | ({Verdict.UNDECIDED} if dropped or unlike else set())
    verdict = (
        Verdict.FAIL
        if Verdict.FAIL in verdicts
        else Verdict.UNDECIDED
        if Verdict.UNDECIDED in verdicts
        else Verdict.PASS
    )
    unlike_options = {s: tuple(differ) for s, differ in differences.items()}
    return GateResult(baseline, candidate, gates, verdict, tuple(notes), policy, unlike_options)


def gate_runs(store: Store, baseline_run: str, candidate_run: str, policy: GatePolicy | None = None) -> GateResult:
    """:func:`evaluate_gate` of two stored runs (what the dashboard's Compare page shows).

    Raises:
        KeyError: a run is not in the store.
        ValueError: as for :func:`evaluate_gate`.
    """
    return evaluate_gate(side_from_run(store, baseline_run), side_from_run(store, candidate_run), policy)


# ---- outputs -------------------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~$])")
_SLUG = re.compile(r"[^A-Za-z0-9_-]+")


def _md(text: Any) -> str:
    """Text safe in a Markdown table cell: one line, Markdown's special characters escaped."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def anchor(scorer: str, item_id: str | None = None) -> str:
    """The HTML id of a scorer's gate section (or of one item's row in it) in the gate report.

    >>> anchor("prompt-alignment")
    'gate-prompt-alignment'
    """
    base = "gate-" + (_SLUG.sub("-", scorer).strip("-") or "scorer")
    if item_id is None:
        return base
    digest = hashlib.sha1(f"{scorer}\0{item_id}".encode()).hexdigest()[:8]
    return f"{base}-{_SLUG.sub('-', item_id).strip('-')[:40]}-{digest}"


def _link(text: str, url: str | None, target: str) -> str:
    return f"[{text}]({url}#{target})" if url else text


def _change_cell(g: ScorerGate) -> str:
    if g.mean_diff is None:
        return "n/a"
    diff, low, high = signed_numbers([g.mean_diff, g.ci_low, g.ci_high])
    return f"{diff} [{low}, {high}]"


def markdown_summary(result: GateResult, *, report_url: str | None = None) -> str:
    """The gate as Markdown for a pull-request comment or a CI job summary.

    A heading with the verdict in words (never a glyph alone), the two sides, a table with one
    row per scorer (direction, means, change with its interval, minimum effect, win/tie/loss,
    Wilcoxon p, items not scored, verdict), the reasons, and the top regressions per scorer.

    Args:
        result: the gate's result.
        report_url: where the HTML gate report will be (a path or URL); scorer names and
            regressed items link to its sections (:func:`anchor`). None for no links.

    Returns:
        GitHub-flavoured Markdown (pipe tables), ending with a newline.
    """
    level = f"{result.policy.confidence:.0%}"
    lines = [
        f"## Scorer gate: {result.verdict.value.upper()}",
        "",
        f"**{_md(result.headline())}**",
        "",
        f"Candidate: {_md(result.candidate.label)} · baseline: {_md(result.baseline.label)} · items paired by id, "
        f"{level} paired bootstrap intervals ({result.policy.n_resamples} resamples), change = candidate − baseline; "
        "the means are over the items scored in both runs.",
        "",
        f"| Scorer | Better | Baseline mean (paired) | Candidate mean (paired) | Change ({level} CI) | Min effect "
        "| Win / tie / loss "
        "| Wilcoxon p | Not scored | Verdict |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for g in result.scorers:
        name = _link(_md(g.scorer), report_url, anchor(g.scorer))
        floor = f" (floor {g.floor:g})" if g.floor is not None and g.higher_is_better else ""
        floor = f" (ceiling {g.floor:g})" if g.floor is not None and not g.higher_is_better else floor
        lines.append(
            f"| {name} | {'higher' if g.higher_is_better else 'lower'} | {_fmt(g.baseline_mean)} | "
            f"{_fmt(g.candidate_mean)} | {_change_cell(g)} | {g.min_effect:g}{floor} | {g.wins} / {g.ties} / "
            f"{g.losses} | {p_value_text(g.wilcoxon_p)} | {g.n_items - g.n_pairs} of {g.n_items} | **{g.verdict.value.upper()}** |"
        )
    lines += ["", "### Why", ""]
    lines += [f"- **{_md(g.scorer)}**: {_md('; '.join(g.reasons))}." for g in result.scorers]
    regressed = [g for g in result.scorers if g.regressions]
    if regressed:
        lines += ["", "### Top regressions", ""]
        for g in regressed:
            lines += [
                f"**{_link(_md(g.scorer), report_url, anchor(g.scorer))}** "
                f"({'higher' if g.higher_is_better else 'lower'} is better)",
                "",
                "| Item | Baseline | Candidate | Change |",
                "|---|---:|---:|---:|",
            ]
            lines += [
                f"| {_link(_md(r.item_id), report_url, anchor(g.scorer, r.item_id))} | {r.baseline_score:.3f} | "
                f"{r.candidate_score:.3f} | {signed_number(r.change)} |"
                for r in g.regressions
            ]
            lines.append("")
    if result.notes:
        lines += ["", *[f"- {_md(n)}" for n in result.notes]]
    return "\n".join(lines).rstrip("\n") + "\n"


def junit_report(result: GateResult, *, per_item: bool = False) -> bytes:
    """The gate as JUnit XML (:func:`scorers.analysis.junit.junit_xml`).

    One test case per scorer (classname ``scorers.gate``): a ``<failure>`` when it fails the
    gate, an ``<error>`` when it is undecided, passed otherwise; the reasons and numbers are
    in the body or ``<system-out>``. With ``per_item``, one more case per gated item ×
    scorer (classname ``scorers.gate.<scorer>``): ``<skipped>`` when it was not scored on a
    side, a ``<failure>`` when its scorer failed the gate for a regression and the item got
    worse by more than the minimum effect, passed otherwise.
    """
    cases = []
    for g in result.scorers:
        details = (
            f"{'; '.join(g.reasons)}.\nbaseline mean {_fmt(g.baseline_mean)}, candidate mean "
            f"{_fmt(g.candidate_mean)}, change {_change_cell(g)}, win/tie/loss {g.wins}/{g.ties}/{g.losses}, "
            f"Wilcoxon p {p_value_text(g.wilcoxon_p)}, not scored {g.n_items - g.n_pairs} of {g.n_items}"
        )
        outcome = {Verdict.PASS: "passed", Verdict.FAIL: "failure", Verdict.UNDECIDED: "error"}[g.verdict]
        kind = {Verdict.PASS: "", Verdict.FAIL: "regression", Verdict.UNDECIDED: "undecided"}[g.verdict]
        cases.append(JUnitCase("scorers.gate", g.scorer, outcome, g.reasons[0] if g.reasons else "", kind, details))
    if per_item:
        for g in result.scorers:
            cases += _item_cases(g)
    suite = JUnitSuite(
        f"scorer gate: {result.candidate.label} against {result.baseline.label}",
        cases,
        {
            "verdict": result.verdict.value,
            "baseline": result.baseline.label,
            "candidate": result.candidate.label,
            "max_unscored_share": str(result.policy.max_unscored_share),
        },
    )
    return junit_xml(suite)


def _item_cases(g: ScorerGate) -> list[JUnitCase]:
    classname = f"scorers.gate.{g.scorer}"
    sign = 1.0 if g.higher_is_better else -1.0
    changes = dict(zip(g.comparison.pair_ids, g.comparison.differences, strict=True))
    regression = g.verdict is Verdict.FAIL and any(r.startswith("the mean changed") for r in g.reasons)
    cases = []
    for item_id in sorted(changes):
        d = changes[item_id]
        text = (
            f"change {signed_number(d)} (candidate − baseline; {'higher' if g.higher_is_better else 'lower'} is better)"
        )
        if regression and sign * d < -g.min_effect:
            cases.append(JUnitCase(classname, item_id, "failure", text, "regression", text))
        else:
            cases.append(JUnitCase(classname, item_id, details=text))
    cases += [JUnitCase(classname, i, "skipped", f"not scored ({why})", "not_scored") for i, why in g.unscored]
    return cases


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def gate_section_html(result: GateResult) -> str:
    """The gate as an HTML section for the report, with the ids :func:`anchor` names.

    Every text is HTML-escaped.
    """
    level = f"{result.policy.confidence:.0%}"
    rows = "".join(
        f'<tr><td><a href="#{anchor(g.scorer)}">{_e(g.scorer)}</a></td>'
        f'<td>{"higher" if g.higher_is_better else "lower"}</td><td class="num">{_fmt(g.baseline_mean)}</td>'
        f'<td class="num">{_fmt(g.candidate_mean)}</td><td class="num">{_e(_change_cell(g))}</td>'
        f'<td class="num">{g.min_effect:g}</td><td class="num">{g.wins} / {g.ties} / {g.losses}</td>'
        f'<td class="num">{_e(p_value_text(g.wilcoxon_p))}</td><td class="num">{g.n_items - g.n_pairs} of {g.n_items}</td>'
        f"<td><strong>{g.verdict.value.upper()}</strong></td></tr>"
        for g in result.scorers
    )
    parts = [
        f'<p class="note"><strong>{_e(result.headline())}</strong> Candidate: {_e(result.candidate.label)}; '
        f"baseline: {_e(result.baseline.label)}; change = candidate − baseline, {level} paired bootstrap "
        "intervals.</p>",
        "<table><thead><tr><th>scorer</th><th>better</th><th>baseline mean (paired)</th><th>candidate mean (paired)</th>"
        f"<th>change ({level} CI)</th><th>min effect</th><th>win / tie / loss</th><th>Wilcoxon p</th>"
        f"<th>not scored</th><th>verdict</th></tr></thead><tbody>{rows}</tbody></table>",
    ]
    for g in result.scorers:
        parts.append(f'<h3 id="{anchor(g.scorer)}">{_e(g.scorer)}: {g.verdict.value.upper()}</h3>')
        parts.append("<ul>" + "".join(f"<li>{_e(r)}</li>" for r in g.reasons) + "</ul>")
        if g.regressions:
            body = "".join(
                f'<tr id="{anchor(g.scorer, r.item_id)}"><td>{_e(r.item_id)}</td>'
                f'<td class="num">{r.baseline_score:.3f}</td><td class="num">{r.candidate_score:.3f}</td>'
                f'<td class="num">{signed_number(r.change)}</td><td><div class="text">{_e(r.input or "")}</div></td></tr>'
                for r in g.regressions
            )
            parts.append(
                "<table><thead><tr><th>item</th><th>baseline</th><th>candidate</th><th>change</th><th>input</th>"
                f"</tr></thead><tbody>{body}</tbody></table>"
            )
    parts += [f'<p class="note">{_e(n)}</p>' for n in result.notes]
    return "\n".join(parts)


def gate_report(result: GateResult) -> str:
    """A self-contained HTML report of the gate: its section first, then the comparison report.

    The comparison part is :func:`scorers.analysis.report.comparison_report` of the two sides
    (leaderboard, paired summaries, charts, the rows that differ most).
    """
    from scorers.analysis.report import comparison_report

    names = {_CANDIDATE: f"candidate: {result.candidate.label}", _BASELINE: f"baseline: {result.baseline.label}"}
    frames = []
    for side, name in ((result.candidate, names[_CANDIDATE]), (result.baseline, names[_BASELINE])):
        frame = side.frame
        if "analysis" not in frame.columns:
            frame = frame.assign(analysis=None)
        frames.append(frame.assign(**{"group:run": name, "item_id": frame["item_id"].astype(str)}))
    return comparison_report(
        pd.concat(frames, ignore_index=True),
        title=f"Scorer gate: {result.verdict.value.upper()}",
        setup={"Candidate": result.candidate.label, "Baseline": result.baseline.label, **result.policy.to_dict()},
        a=names[_CANDIDATE],
        b=names[_BASELINE],
        scorers=[g.scorer for g in result.scorers],
        group_col="group:run",
        pair_col="item_id",
        seed=result.policy.seed,
        sections=[("gate", "Gate", gate_section_html(result))],
    )


__all__ = [
    "DEFAULT_MAX_UNSCORED_SHARE",
    "DEFAULT_TOP",
    "EXIT_CODES",
    "NOT_RUN",
    "GatePolicy",
    "GateResult",
    "GateSide",
    "Regression",
    "ScorerGate",
    "Verdict",
    "anchor",
    "evaluate_gate",
    "gate_report",
    "gate_runs",
    "gate_section_html",
    "junit_report",
    "markdown_summary",
    "resolve_side",
    "side_from_file",
    "side_from_run",
    "side_from_table",
]
