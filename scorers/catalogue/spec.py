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
        higher_is_better: False for scorers such as toxicity.
        options: its options.
        build: ``(options, settings, cache) -> Scorer``.
        example: a run payload (and ``options``) to try it on, for the catalogue page.
        notes: edge-case rules and where ours differs from Mastra, for the catalogue page.
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


SCALE = OptionSpec("scale", "Scale", "number", 1.0, help="Multiplies the 0..1 score, e.g. 10 for a 0..10 score.")
