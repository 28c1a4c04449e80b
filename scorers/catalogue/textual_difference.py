"""Textual difference scorer (SPEC §1.2; Mastra seed "テキスト差分スコアラー").

Compares the response with a reference text without any LLM: the ground truth
when the run has one, else the input (the user messages). Both texts are NFC
normalised first, so lengths count Unicode code points of the NFC form.

Cost on long texts (measured with ``bench/textual_difference.py``): the
character ratio is rapidfuzz's bit-parallel LCS, ``O(ceil(N/64)·M)`` time and
``O(N)`` memory; the word alignment is rapidfuzz's Levenshtein ``editops``,
which switches to Hirschberg's divide and conquer once the bit matrix would
exceed 1 MiB, so its memory stays linear in the number of words. Two
100,000-character texts score in well under a second.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rapidfuzz.distance import Indel, Levenshtein

from scorers.catalogue.metrics._code_based import reference_text
from scorers.core.base import RunInput, ScoreResult, normalize_run, round_half_up
from scorers.core.errors import InvalidInputError


@dataclass(frozen=True)
class TextualDifferenceScorer:
    """Scores how close the response is to a reference text, character by character.

    Build it with :func:`create_textual_difference_scorer`, which validates
    ``scale`` the same way.

    Attributes:
        scale: the score's upper bound, a finite number > 0; scores lie in
            ``[0, scale]``.

    Raises:
        InvalidInputError: if ``scale`` is not a finite number > 0 (``field="scale"``).
    """

    id: ClassVar[str] = "textual-difference"
    name: ClassVar[str] = "Textual difference"

    scale: float = 1.0

    def __post_init__(self) -> None:
        scale = self.scale
        if isinstance(scale, bool) or not isinstance(scale, (int, float)):
            raise InvalidInputError(
                f"scale must be a number > 0 such as 1 or 10, got {type(scale).__name__} {scale!r}",
                field="scale",
            )
        if not math.isfinite(scale) or scale <= 0:
            raise InvalidInputError(f"scale must be a finite number > 0, got {scale!r}", field="scale")
        object.__setattr__(self, "scale", float(scale))

    @staticmethod
    def dimension_scores(analysis: Mapping[str, Any]) -> dict[str, float]:
        """The 0..1 parts of a result: ``ratio`` and ``confidence``."""
        return {"ratio": analysis["ratio"], "confidence": analysis["confidence"]}

    def run(self, payload: dict[str, Any] | RunInput) -> ScoreResult:
        """Score one run: the response against the ground truth, else against the input.

        Formula (SPEC §1.2, the Mastra seed's ``(similarity_ratio * confidence) * scale``),
        with ``a`` the reference and ``b`` the response, both NFC normalised and
        measured in code points:

        - ``ratio`` = 2·LCS(a, b) / (len(a) + len(b)) over characters, in ``[0, 1]``
          (rapidfuzz ``Indel.normalized_similarity``); both empty → 1, one empty → 0.
        - ``changes`` = word-level edits (insert, delete or replace one word of
          ``str.split()``) turning ``a`` into ``b``, an int >= 0; at least 1 when
          the texts differ only in whitespace, 0 when they are identical.
        - ``lengthDiff`` = |len(a) - len(b)| / max(len(a), len(b)), in ``[0, 1]``
          (0 when both are empty); ``confidence`` = 1 - ``lengthDiff``.
        - ``score`` = ratio * confidence * scale, in ``[0, scale]``, not rounded.

        Args:
            payload: a seed-shaped run (``{"input", "output", "ground_truth"?}``;
                every shape :func:`~scorers.core.base.normalize_run` accepts) or a
                :class:`~scorers.core.base.RunInput`.

        Returns:
            A :class:`~scorers.core.base.ScoreResult` whose ``analyze_step_result`` is
            ``{"ratio", "changes", "lengthDiff", "confidence"}`` (the seed's shape) and
            whose ``details`` is ``{"comparedWith": "ground_truth" | "input"}``. The word
            alignment is not kept (it would be about 14 KB a row on 500-character texts):
            :meth:`alignment` recomputes it from the same payload when it is shown.

        Raises:
            InvalidInputError: if the payload is malformed, or if it has neither a
                ground truth nor a user message to compare the response with.

        >>> scorer = create_textual_difference_scorer()
        >>> result = scorer.run({"input": "Name a pet.", "output": "The quick brown cat",
        ...                      "ground_truth": "The quick brown fox"})
        >>> round(result.score, 4)  # 2·16 / (19 + 19): "The quick brown " is common
        0.8421
        >>> result.analyze_step_result["changes"], result.analyze_step_result["lengthDiff"]
        (1, 0.0)
        """
        compared_with, a, b = _texts(payload)
        ratio = Indel.normalized_similarity(a, b)
        longest = max(len(a), len(b))
        length_diff = abs(len(a) - len(b)) / longest if longest else 0.0
        confidence = 1.0 - length_diff

        a_tokens, b_tokens = a.split(), b.split()
        changes = len(Levenshtein.editops(*_word_ids(a_tokens, b_tokens)))
        if changes == 0 and a != b:  # same words, different whitespace
            changes = 1

        analysis = {"ratio": ratio, "changes": changes, "lengthDiff": length_diff, "confidence": confidence}
        return ScoreResult(
            scorer=self.id,
            score=ratio * confidence * self.scale,
            reason=_reason(compared_with, a, b, a_tokens == b_tokens, analysis),
            analyze_step_result=analysis,
            details={"comparedWith": compared_with},
        )

    @staticmethod
    def alignment(payload: dict[str, Any] | RunInput) -> dict[str, Any]:
        """The word diff of one run for display, recomputed from its payload (what :meth:`run` compares).

        Args:
            payload: the same payload that was given to :meth:`run`.

        Returns:
            ``comparedWith`` (``"ground_truth"`` or ``"input"``), ``reference`` and
            ``response`` (the NFC texts), ``referenceTokens`` and ``responseTokens``
            (their words, ``str.split()``) and ``opcodes``, a list of
            ``[tag, ref_start, ref_end, resp_start, resp_end]`` with tag ``"equal"``,
            ``"replace"``, ``"insert"`` or ``"delete"`` over the token lists, as
            rapidfuzz's ``Editops.as_opcodes`` gives them.

        Raises:
            InvalidInputError: as :meth:`run`.

        >>> TextualDifferenceScorer.alignment({"output": "The quick brown cat",
        ...                                    "ground_truth": "The quick brown fox"})["opcodes"]
        [['equal', 0, 3, 0, 3], ['replace', 3, 4, 3, 4]]
        """
        compared_with, a, b = _texts(payload)
        a_tokens, b_tokens = a.split(), b.split()
        editops = Levenshtein.editops(*_word_ids(a_tokens, b_tokens))
        return {
            "comparedWith": compared_with,
            "reference": a,
            "response": b,
            "referenceTokens": a_tokens,
            "responseTokens": b_tokens,
            "opcodes": [[tag, a0, a1, b0, b1] for tag, a0, a1, b0, b1 in editops.as_opcodes()],
        }


def _texts(payload: dict[str, Any] | RunInput) -> tuple[str, str, str]:
    """``(compared_with, reference, response)``, both texts NFC normalised."""
    run = normalize_run(payload)
    compared_with, reference = reference_text(run)
    return compared_with, unicodedata.normalize("NFC", reference), unicodedata.normalize("NFC", run.output)


def create_textual_difference_scorer(*, scale: float = 1.0) -> TextualDifferenceScorer:
    """Create the textual difference scorer (SPEC §1.2), which needs no LLM.

    Args:
        scale: multiplies the score, a finite number > 0 (default 1); scores lie
            in ``[0, scale]``. Booleans are rejected.

    Returns:
        A :class:`TextualDifferenceScorer`; see :meth:`TextualDifferenceScorer.run`
        for the formula and the result's shape.

    Raises:
        InvalidInputError: if ``scale`` is not a finite number > 0 (``field="scale"``).

    >>> scorer = create_textual_difference_scorer(scale=10)
    >>> scorer.run({"input": "hello world", "output": "hello world"}).score
    10.0
    """
    return TextualDifferenceScorer(scale=scale)


def _word_ids(a_tokens: list[str], b_tokens: list[str]) -> tuple[list[int], list[int]]:
    """Map each distinct word to a small int so words compare by exact equality.

    rapidfuzz compares a list of str by ``hash()`` of each element (and by code
    point for one-character strings), so two different words could in principle
    collide; dense ids cannot.
    """
    ids: dict[str, int] = {}
    return (
        [ids.setdefault(w, len(ids)) for w in a_tokens],
        [ids.setdefault(w, len(ids)) for w in b_tokens],
    )


def _percent(value: float) -> str:
    """A fraction in [0, 1] as a whole percentage that never rounds a difference away."""
    whole = int(round_half_up(value * 100, 0))
    if whole == 100 and value < 1:
        return ">99%"
    if whole == 0 and value > 0:
        return "<1%"
    return f"{whole}%"


def _reason(compared_with: str, a: str, b: str, same_words: bool, analysis: dict[str, Any]) -> str:
    target = "the ground truth" if compared_with == "ground_truth" else "the input"
    if a == b:
        return f"The response is identical to {target}."
    length = f"length difference {_percent(analysis['lengthDiff'])}"
    if same_words:
        return (
            f"The response has the same words as {target} but differs in whitespace "
            f"({_percent(analysis['ratio'])} similarity, {length})."
        )
    changes = analysis["changes"]
    plural = "change" if changes == 1 else "changes"
    return (
        f"The response matches {target} at {_percent(analysis['ratio'])} similarity "
        f"({changes} word-level {plural}, {length})."
    )
