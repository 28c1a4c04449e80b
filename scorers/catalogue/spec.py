"""Catalogue entries: what a scorer is, measures and takes (see :mod:`scorers.catalogue.registry`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scorers.core.base import Scorer
    from scorers.core.judge import JudgeCache, JudgeSettings


@dataclass(frozen=True)
class OptionSpec:
    """One option of a scorer.

    ``kind`` is ``"number"`` (a float; > 0 unless the help says otherwise), ``"choice"``
    (one of ``choices``), ``"bool"``, ``"text"`` (a string) or ``"list"`` (a list of strings).
    """

    name: str
    label: str
    kind: str
    default: Any
    choices: tuple[str, ...] = ()
    help: str = ""


@dataclass(frozen=True)
class ScorerSpec:
    """A catalogue entry.

    Attributes:
        id: the scorer id, e.g. ``"prompt-alignment"``.
        name: display name.
        uses_judge: True when it calls an LLM judge.
        judge_calls: judge calls per run (0 for code scorers).
        inputs: the run fields it reads, e.g. ``("input", "output")``.
        measures: one sentence on what it measures.
        formula: how the score is computed.
        score_range: the range before ``scale``, e.g. ``"0..1"``.
        higher_is_better: the score's direction: True when a higher score is better, False
            for scorers where lower is better (toxicity, bias, hallucination). Badges,
            rankings, run diffs and thresholds read it (see :func:`is_better`).
        options: its options.
        build: ``(options, settings, cache) -> Scorer``.
        example: a run payload (and ``options``) to try it on, for the catalogue page.
        notes: edge-case rules and where ours differs from Mastra, for the catalogue page.
        fixed_scale: the multiplier of a scorer without a ``scale`` option (a saved judge's
            definition carries its own scale); 1 for the others.
        reads: the run fields it reads, of :data:`scorers.core.base.RUN_FIELDS` (``input``,
            ``system``, ``output``, ``ground_truth``, ``context``, ``tool_calls``).
        requires: the fields of ``reads`` a row must have (not blank, not missing, not an
            empty list); a row without one is ``missing_input``, named, and not scored. A
            field read but not required that the run carries (a mapped column) must not be
            blank either, so one run never mixes rows scored with and without it. Scorers
            with a ``target`` option (textual difference, content similarity) also require
            their target, ``ground_truth`` or ``input``.
    """

    id: str
    name: str
    uses_judge: bool
    judge_calls: int
    inputs: tuple[str, ...]
    measures: str
    formula: str
    score_range: str
    higher_is_better: bool
    options: tuple[OptionSpec, ...]
    build: Callable[[Mapping[str, Any], JudgeSettings | None, JudgeCache | None], Scorer]
    example: Mapping[str, Any] | None = None
    notes: str = ""
    fixed_scale: float = 1.0
    reads: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()

    @property
    def direction(self) -> str:
        """``"higher is better"`` or ``"lower is better"``, for labels."""
        return direction_label(self.higher_is_better)

    def is_better(self, a: float, b: float) -> bool:
        """True when score ``a`` is strictly better than ``b`` in this scorer's direction."""
        return is_better(a, b, higher_is_better=self.higher_is_better)

    def bounds(self, options: Mapping[str, Any] | None = None) -> tuple[float, float]:
        """The lowest and highest score with these options (``scale`` applied), e.g. ``(0.0, 10.0)``."""
        scale = (options or {}).get("scale")
        if scale is None:
            scale = next((o.default for o in self.options if o.name == "scale"), self.fixed_scale)
        return range_bounds(self.score_range, float(scale))


PRESENTATION_OPTIONS: tuple[str, ...] = ("reason",)
"""Options that change how a result is explained, never its score (prompt alignment's ``reason``: composed
from the analysis, or written by one more judge call). Two runs that differ only in these still measure
the same thing (:func:`scorers.catalogue.registry.scoring_differences`)."""

SCALE = OptionSpec("scale", "Scale", "number", 1.0, help="Multiplies the 0..1 score, e.g. 10 for a 0..10 score.")


def direction_label(higher_is_better: bool) -> str:
    """``"higher is better"`` or ``"lower is better"``.

    >>> direction_label(False)
    'lower is better'
    """
    return "higher is better" if higher_is_better else "lower is better"


def is_better(a: float, b: float, *, higher_is_better: bool) -> bool:
    """True when score ``a`` is strictly better than score ``b`` in the scorer's direction.

    >>> is_better(0.2, 0.5, higher_is_better=False), is_better(0.2, 0.5, higher_is_better=True)
    (True, False)
    """
    return a > b if higher_is_better else a < b


def improvement(delta: float, *, higher_is_better: bool) -> float:
    """A score change ``new − old`` signed so that a positive value is always an improvement.

    Args:
        delta: ``new − old`` in the scorer's units.
        higher_is_better: the scorer's direction (:attr:`ScorerSpec.higher_is_better`).

    Returns:
        ``delta`` when higher is better, ``−delta`` when lower is better (a toxicity that
        drops by 0.2 is an improvement of +0.2).

    >>> improvement(-0.2, higher_is_better=False)
    0.2
    """
    return delta if higher_is_better else -delta


def range_bounds(score_range: str, scale: float = 1.0) -> tuple[float, float]:
    """The lowest and highest score of a :attr:`ScorerSpec.score_range` such as ``"0..1"`` or
    ``"0 or 1"``, times ``scale``.

    Args:
        score_range: the catalogue's range text: ``"<low>..<high>"`` or ``"<low> or <high>"``.
        scale: the scorer's ``scale`` option (> 0); the range is before scale.

    Raises:
        ValueError: a range text of another form.

    >>> range_bounds("0..1", 10)
    (0.0, 10.0)
    """
    parts = score_range.replace(" or ", "..").split("..")
    try:
        low, high = (float(p) for p in parts)
    except ValueError:
        raise ValueError(f"not a score range: {score_range!r} (expected e.g. '0..1')") from None
    return low * scale, high * scale


TARGET = OptionSpec(
    "target",
    "Compare with",
    "choice",
    "auto",
    ("auto", "ground_truth", "input"),
    "The text the response is compared with. auto: the ground truth when the run carries one (a mapped "
    "ground-truth column), else the input. A row whose target is blank is not scored (missing_input); "
    "it never falls back to the other text.",
)
"""The ``target`` option of the scorers that compare the response with a reference text."""
