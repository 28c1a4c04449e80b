"""From form fields to a scorer call: the payload, the scorer, and the outcome of one run."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from scorers import (
    JudgeSettings,
    Scorer,
    ScorerError,
    ScoreResult,
    ScoreStatus,
    create_gluten_checker_scorer,
    create_prompt_alignment_scorer,
    create_textual_difference_scorer,
)

SCORER_LABELS = {
    "prompt-alignment": "Prompt alignment",
    "textual-difference": "Textual difference",
    "gluten-checker": "Gluten checker",
}

_SEPARATOR = re.compile(r"^[ \t]*---[ \t]*$", flags=re.MULTILINE)


def split_system_messages(text: str) -> list[str]:
    """Split a text area into system messages at lines that hold only ``---``.

    Args:
        text: the system text; surrounding whitespace of each part is dropped.

    Returns:
        The non-blank parts, in order (``[]`` for a blank text).

    >>> split_system_messages("Be brief.\\n---\\nAnswer in French.")
    ['Be brief.', 'Answer in French.']
    """
    return [part.strip() for part in _SEPARATOR.split(text) if part.strip()]


def build_payload(*, system: str, prompt: str, response: str, ground_truth: str) -> dict[str, Any]:
    """The seed-shaped run payload for the Evaluate form.

    Blank fields count as not given: a blank prompt sends no user message and a
    blank ground truth sends ``None``. The response is sent as typed (a scorer
    that needs it rejects a blank one).

    Args:
        system: system message(s), several separated by a line with ``---``.
        prompt: the user prompt.
        response: the response to evaluate.
        ground_truth: the reference answer, or "".

    Returns:
        ``{"input": {"inputMessages": [...], "systemMessages": [...]}, "output": {"text": ...},
        "ground_truth": str | None}``.
    """
    return {
        "input": {
            "inputMessages": [{"role": "user", "content": prompt}] if prompt.strip() else [],
            "systemMessages": [{"role": "system", "content": m} for m in split_system_messages(system)],
        },
        "output": {"text": response},
        "ground_truth": ground_truth if ground_truth.strip() else None,
    }


def make_scorer(scorer_id: str, options: Mapping[str, Any], settings: JudgeSettings) -> Scorer:
    """Create a scorer by id.

    Args:
        scorer_id: a key of :data:`SCORER_LABELS`.
        options: prompt alignment: ``scale``, ``evaluation_mode``, ``reason``;
            textual difference: ``scale``; gluten checker: none.
        settings: the judge settings (unused by textual difference).

    Returns:
        The scorer.

    Raises:
        InvalidInputError: an option is out of range.
        ValueError: ``scorer_id`` is unknown.
    """
    if scorer_id == "prompt-alignment":
        return create_prompt_alignment_scorer(options=options, settings=settings)
    if scorer_id == "textual-difference":
        return create_textual_difference_scorer(**options)
    if scorer_id == "gluten-checker":
        return create_gluten_checker_scorer(settings=settings)
    raise ValueError(f"unknown scorer {scorer_id!r}; expected one of {', '.join(SCORER_LABELS)}")


@dataclass(frozen=True)
class RunFailure:
    """A run that was not scored (SPEC §3): why, and the judge's reply when there was one."""

    message: str
    status: ScoreStatus
    raw_reply: str | None = None


def evaluate(
    scorer_id: str,
    options: Mapping[str, Any],
    payload: Mapping[str, Any],
    settings: Callable[[], JudgeSettings],
) -> ScoreResult | RunFailure:
    """Score one payload, turning every :class:`~scorers.ScorerError` into a :class:`RunFailure`.

    Args:
        scorer_id: a key of :data:`SCORER_LABELS`.
        options: the scorer's options (see :func:`make_scorer`).
        payload: a run payload, e.g. from :func:`build_payload`.
        settings: returns the judge settings; called inside the error handling, so a
            configuration error becomes a failure too.

    Returns:
        The :class:`~scorers.ScoreResult`, or a :class:`RunFailure` whose message is the
        error's text (it names the field or says how to configure the judge).
    """
    try:
        return make_scorer(scorer_id, options, settings()).run(dict(payload))
    except ScorerError as exc:
        return RunFailure(str(exc), exc.status, getattr(exc, "raw_reply", None))
