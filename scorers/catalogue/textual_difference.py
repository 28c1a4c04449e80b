"""Textual difference scorer (SPEC §1.2; Mastra seed "テキスト差分スコアラー").

Compares the response with a reference text without any LLM: its target, the
ground truth or the input (the user messages), chosen per run (``target``; auto:
the ground truth when the run carries one, else the input, as Mastra does). A
row whose target is blank is ``missing_input``, never compared with the other
text. Both texts are normalised first (NFC and CRLF/CR → LF by default; see
:func:`normalize_text`), so lengths count Unicode code points of that form.

Cost on long texts (measured with ``bench/textual_difference.py``): the
character ratio is rapidfuzz's bit-parallel LCS, ``O(ceil(N/64)·M)`` time and
``O(N)`` memory; the word alignment is rapidfuzz's Levenshtein ``editops``,
which switches to Hirschberg's divide and conquer once the bit matrix would
exceed 1 MiB, so its memory stays linear in the number of words. Two
100,000-character texts score in well under a second.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rapidfuzz.distance import Indel, Levenshtein

from scorers.catalogue.metrics._code_based import check_flag, check_scale, check_target, percent, reference_text
from scorers.core.base import RunInput, ScoreResult, decimal_text, normalize_run

_HORIZONTAL_SPACE = re.compile(r"[^\S\n]+")
_LINE_BREAKS = re.compile(r"[^\S\n]*\n\s*")


def normalize_text(
    text: str, *, normalize_newlines: bool = True, ignore_case: bool = False, collapse_whitespace: bool = False
) -> str:
    r"""The text as the textual difference scorer compares it.

    Always NFC (Unicode canonical composition), then, as asked:

    - ``normalize_newlines``: CRLF and lone CR become LF (on by default: a file saved on
      Windows does not differ from the same text saved elsewhere);
    - ``collapse_whitespace``: every run of whitespace becomes one space, or one line break
      when it holds a line break (so lines stay lines), and the ends are stripped;
    - ``ignore_case``: Unicode case folding (``str.casefold``: "Straße" and "STRASSE" match).

    >>> normalize_text("A\r\nb  c ", collapse_whitespace=True, ignore_case=True)
    'a\nb c'
    """
    text = unicodedata.normalize("NFC", text)
    if normalize_newlines:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if collapse_whitespace:
        text = _HORIZONTAL_SPACE.sub(" ", _LINE_BREAKS.sub("\n", text)).strip()
    if ignore_case:
        text = text.casefold()
    return text


@dataclass(frozen=True)
class TextualDifferenceScorer:
    """Scores how close the response is to a reference text, character by character.

    Build it with :func:`create_textual_difference_scorer`, which validates the options the
    same way.

    Attributes:
        scale: the score's upper bound, a finite number > 0; scores lie in
            ``[0, scale]``.
        target: what the response is compared with: ``"ground_truth"``, ``"input"`` (the user
            messages) or ``"auto"`` (the ground truth when the run carries one, else the input).
        normalize_newlines: CRLF and CR count as LF (default True).
        ignore_case: compare case-folded texts (default False).
        collapse_whitespace: runs of whitespace count as one (default False).

    Raises:
        InvalidInputError: if ``scale`` is not a finite number > 0 (``field="scale"``), a flag is
            not a bool, or ``target`` is not one of the three.
    """

    id: ClassVar[str] = "textual-difference"
    name: ClassVar[str] = "Textual difference"
    cpu_bound: ClassVar[bool] = True  # computes only: see scorers.core.base.Scorer

    scale: float = 1.0
    target: str = "auto"
    normalize_newlines: bool = True
    ignore_case: bool = False
    collapse_whitespace: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_scale(self.scale))
        check_target(self.target)
        for flag in ("normalize_newlines", "ignore_case", "collapse_whitespace"):
            check_flag(getattr(self, flag), flag)

    @property
    def options(self) -> dict[str, Any]:
        """The options it was built with, by their catalogue names (what a run records)."""
        return {
            "scale": self.scale,
            "target": self.target,
            "normalize_newlines": self.normalize_newlines,
            "ignore_case": self.ignore_case,
            "collapse_whitespace": self.collapse_whitespace,
        }

    @staticmethod
    def dimension_scores(analysis: Mapping[str, Any]) -> dict[str, float]:
        """The 0..1 parts of a result: ``ratio`` and ``confidence``."""
        return {"ratio": analysis["ratio"], "confidence": analysis["confidence"]}

    def run(self, payload: dict[str, Any] | RunInput) -> ScoreResult:
        """Score one run: the response against its target (the ground truth or the input).

        Formula (SPEC §1.2, the Mastra seed's ``(similarity_ratio * confidence) * scale``),
        with ``a`` the reference and ``b`` the response, both normalised by
        :func:`normalize_text` with this scorer's options and measured in code points:

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
            whose ``details`` is ``{"comparedWith": "ground_truth" | "input", "options": {...}}``
            (the normalisation flags). The word alignment is not kept (it would be about 14 KB
            a row on 500-character texts): :meth:`alignment` recomputes it from the same payload.

        Raises:
            InvalidInputError: if the payload is malformed.
            MissingInputError: if the target (ground truth or input) is missing or blank;
                the row is never compared with the other text instead.

        >>> scorer = create_textual_difference_scorer()
        >>> result = scorer.run({"input": "Name a pet.", "output": "The quick brown cat",
        ...                      "ground_truth": "The quick brown fox"})
        >>> round(result.score, 4)  # 2·16 / (19 + 19): "The quick brown " is common
        0.8421
        >>> result.analyze_step_result["changes"], result.analyze_step_result["lengthDiff"]
        (1, 0.0)
        """
        compared_with, a, b = self._texts(payload)
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
            reason=_reason(compared_with, a, b, a_tokens == b_tokens, analysis, self.scale),
            analyze_step_result=analysis,
            details={"comparedWith": compared_with, "options": self._options},
        )

    @property
    def _options(self) -> dict[str, bool]:
        return {
            "normalize_newlines": self.normalize_newlines,
            "ignore_case": self.ignore_case,
            "collapse_whitespace": self.collapse_whitespace,
        }

    def _texts(self, payload: dict[str, Any] | RunInput) -> tuple[str, str, str]:
        """``(compared_with, reference, response)``, both normalised by :func:`normalize_text`."""
        run = normalize_run(payload)
        compared_with, reference = reference_text(run, self.target, scorer=self.name)
        return compared_with, normalize_text(reference, **self._options), normalize_text(run.output, **self._options)

    def alignment(self, payload: dict[str, Any] | RunInput) -> dict[str, Any]:
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

        >>> TextualDifferenceScorer().alignment({"output": "The quick brown cat",
        ...                                      "ground_truth": "The quick brown fox"})["opcodes"]
        [['equal', 0, 3, 0, 3], ['replace', 3, 4, 3, 4]]
        """
        compared_with, a, b = self._texts(payload)
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


def create_textual_difference_scorer(
    *,
    scale: float = 1.0,
    target: str = "auto",
    normalize_newlines: bool = True,
    ignore_case: bool = False,
    collapse_whitespace: bool = False,
) -> TextualDifferenceScorer:
    """Create the textual difference scorer (SPEC §1.2), which needs no LLM.

    Args:
        scale: multiplies the score, a finite number > 0 (default 1); scores lie
            in ``[0, scale]``. Booleans are rejected.
        target: ``"auto"`` (default: the ground truth when the run carries one, else the
            input, Mastra's behaviour), ``"ground_truth"`` or ``"input"``. A row whose target
            is blank is not scored (``missing_input``).
        normalize_newlines: CRLF and CR to LF before comparing (default True).
        ignore_case: compare case-folded texts (default False, so Mastra's results hold).
        collapse_whitespace: runs of whitespace count as one space or one line break
            (default False).

    Returns:
        A :class:`TextualDifferenceScorer`; see :meth:`TextualDifferenceScorer.run`
        for the formula and the result's shape.

    Raises:
        InvalidInputError: if ``scale`` is not a finite number > 0 (``field="scale"``), a flag is
            not a bool, or ``target`` is unknown.

    >>> scorer = create_textual_difference_scorer(scale=10)
    >>> scorer.run({"input": "hello world", "output": "hello world"}).score
    10.0
    """
    return TextualDifferenceScorer(
        scale=scale,
        target=target,
        normalize_newlines=normalize_newlines,
        ignore_case=ignore_case,
        collapse_whitespace=collapse_whitespace,
    )


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


def _reason(compared_with: str, a: str, b: str, same_words: bool, analysis: dict[str, Any], scale: float = 1.0) -> str:
    """The result's reason: how the response differs, then how the score came (ratio × confidence × scale)."""
    target = "the ground truth" if compared_with == "ground_truth" else "the input"
    if a == b:
        return f"The response is identical to {target}."
    length = f"length difference {percent(analysis['lengthDiff'])}"
    ratio, confidence = analysis["ratio"], analysis["confidence"]
    # The factors and the score with the digits the result's tiles show them (decimal_text), so the same
    # number reads the same in the reason as beside it.
    scaled = f" × scale {scale:g}" if scale != 1 else ""
    score = (
        f"Score = similarity {decimal_text(ratio)} × length confidence {decimal_text(confidence)}{scaled} "
        f"= {decimal_text(ratio * confidence * scale)}."
    )
    if same_words:
        return (
            f"The response has the same words as {target} but differs in whitespace "
            f"({percent(ratio)} similarity, {length}). {score}"
        )
    changes = analysis["changes"]
    plural = "change" if changes == 1 else "changes"
    return (
        f"The response matches {target} at {percent(ratio)} similarity "
        f"({changes} word-level {plural}, {length}). {score}"
    )
