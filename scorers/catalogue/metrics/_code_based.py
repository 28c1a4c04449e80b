"""Shared helpers of the code-based (no judge) scorers in :mod:`scorers.catalogue.metrics`.

Option checks that raise :class:`~scorers.core.errors.InvalidInputError` naming the
option (as :mod:`scorers.catalogue.textual_difference` does for ``scale``), the choice of
the reference text (the ``target`` option: ground truth or input), and number formatting for the
reasons.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from scorers.catalogue.spec import SCALE, ScorerSpec
from scorers.core.base import RunInput, require_fields, round_half_up
from scorers.core.errors import InvalidInputError, MissingInputError


def check_scale(scale: Any) -> float:
    """``scale`` as a float: a finite number > 0 (booleans and strings rejected).

    Raises:
        InvalidInputError: otherwise, with ``field="scale"``.
    """
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise InvalidInputError(
            f"scale must be a number > 0 such as 1 or 10, got {type(scale).__name__} {scale!r}", field="scale"
        )
    if not math.isfinite(scale) or scale <= 0:
        raise InvalidInputError(f"scale must be a finite number > 0, got {scale!r}", field="scale")
    return float(scale)


@dataclass(frozen=True)
class ScaledScorer:
    """Base of the code-based scorers whose only option is ``scale``.

    Attributes:
        scale: the score's upper bound, a finite number > 0; scores lie in ``[0, scale]``.

    Raises:
        InvalidInputError: if ``scale`` is not a finite number > 0 (``field="scale"``).
    """

    cpu_bound: ClassVar[bool] = True  # computes only: see scorers.core.base.Scorer

    scale: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_scale(self.scale))

    @property
    def options(self) -> dict[str, Any]:
        """The options it was built with (its scale), as a run records them."""
        return {"scale": self.scale}


def check_flag(value: Any, name: str) -> bool:
    """``value`` if it is True or False (not 0/1, not ``"true"``).

    Raises:
        InvalidInputError: otherwise, with ``field=name``.
    """
    if not isinstance(value, bool):
        raise InvalidInputError(f"{name} must be true or false, got {value!r}", field=name)
    return value


TARGETS = ("auto", "ground_truth", "input")
"""The values of a ``target`` option: what a response is compared with."""


def check_target(value: Any) -> str:
    """``value`` if it is one of :data:`TARGETS`.

    Raises:
        InvalidInputError: otherwise, with ``field="target"``.
    """
    if value not in TARGETS:
        raise InvalidInputError(f"target must be one of {', '.join(TARGETS)}, got {value!r}", field="target")
    return value


def resolve_target(target: str, run: RunInput) -> str:
    """``"ground_truth"`` or ``"input"``: ``target`` itself, or for ``"auto"`` the ground truth when the
    run carries one (the key is present, a mapped column: blank or not) and the input otherwise (Mastra)."""
    if target != "auto":
        return target
    return "ground_truth" if "ground_truth" in run.given else "input"


def reference_text(
    run: RunInput,
    target: str = "auto",
    *,
    scorer: str = "This scorer",
) -> tuple[str, str]:
    """The text a response is compared with: ``(target, text)`` with target ``"ground_truth"`` or ``"input"``.

    The input is :attr:`~scorers.core.base.RunInput.user_text`, the user messages joined by a blank line: the
    exports' ``input`` and the text every judge is shown, so the text compared is the one on screen (Mastra's code
    scorers join several input messages with ``", "``, a text shown nowhere).

    Args:
        run: the normalised run.
        target: ``"ground_truth"``, ``"input"`` or ``"auto"`` (see :func:`resolve_target`).
        scorer: the scorer's name, for the error message.

    Raises:
        MissingInputError: the target text is missing or blank (``field`` names it); the run is
            not scored, and never compared with the other text instead.
    """
    resolved = resolve_target(target, run)
    require_fields(run, (resolved,), scorer=scorer)
    if resolved == "ground_truth":
        return resolved, run.ground_truth or ""
    return resolved, run.user_text


def require_input(run: RunInput, scorer_name: str) -> str:
    """The user text of ``run`` (:attr:`~scorers.core.base.RunInput.user_text`, the exports' ``input``); an empty
    message counts, a missing ``input`` does not.

    Raises:
        MissingInputError: when the run has no user message (``field="input"``).
    """
    if not run.user_messages:
        raise MissingInputError(
            f"{scorer_name} compares the response with the input: give the user message(s) in 'input'",
            field="input",
        )
    return run.user_text


def percent(value: float) -> str:
    """A fraction in [0, 1] as a whole percentage that never rounds a difference away.

    >>> percent(2 / 3), percent(0.999), percent(0.001), percent(1.0)
    ('67%', '>99%', '<1%', '100%')
    """
    whole = int(round_half_up(value * 100, 0))
    if whole == 100 and value < 1:
        return ">99%"
    if whole == 0 and value > 0:
        return "<1%"
    return f"{whole}%"


def number(value: float, *, signed: bool = False) -> str:
    """``value`` rounded half up to 2 decimals for a reason, e.g. ``0.33`` or ``+0.25``.

    >>> number(1 / 3), number(0.125, signed=True), number(-0.5, signed=True)
    ('0.33', '+0.13', '-0.50')
    """
    rounded = round_half_up(value, 2)
    return f"{rounded:+.2f}" if signed else f"{rounded:.2f}"


def quote_list(items: Iterable[str], limit: int = 8) -> str:
    """``"a", "b" and 3 more``: at most ``limit`` items quoted, then a count of the rest.

    >>> quote_list(["a", "b", "c"], limit=2)
    '"a", "b" and 1 more'
    """
    items = list(items)
    shown = ", ".join(f'"{item}"' for item in items[:limit])
    rest = len(items) - limit
    return f"{shown} and {rest} more" if rest > 0 else shown


def plural(count: int, word: str, many: str | None = None) -> str:
    """``"1 keyword"``, ``"2 keywords"``.

    >>> plural(1, "call"), plural(3, "call"), plural(2, "sentence")
    ('1 call', '3 calls', '2 sentences')
    """
    return f"{count} {word if count == 1 else (many or word + 's')}"


def code_scorer_spec(*, create: Callable[..., Any], **fields: Any) -> ScorerSpec:
    """The :class:`~scorers.catalogue.spec.ScorerSpec` of a code-based scorer.

    Args:
        create: the scorer's factory, called with the chosen options as keyword arguments;
            it becomes the spec's ``build`` (a code-based scorer needs no judge settings or cache).
        **fields: the other :class:`~scorers.catalogue.spec.ScorerSpec` fields. The defaults such
            scorers share may be overridden: no judge (``uses_judge=False``, ``judge_calls=0``),
            ``score_range="0..1"``, ``higher_is_better=True`` and one option, ``scale``
            (:data:`~scorers.catalogue.spec.SCALE`).
    """

    @functools.wraps(create)  # the build names the scorer's own module (the catalogue page reads its docstring)
    def build(options: Mapping[str, Any], settings: Any, cache: Any) -> Any:
        return create(**options)

    defaults = {"uses_judge": False, "judge_calls": 0, "score_range": "0..1", "higher_is_better": True}
    return ScorerSpec(**{**defaults, "options": (SCALE,), **fields}, build=build)
