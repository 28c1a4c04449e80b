"""Content similarity scorer (code-based): Sørensen–Dice similarity of character bigrams.

Re-implements Mastra's content-similarity scorer (``@mastra/evals``,
``scorers/code/content-similarity``), which calls ``compareTwoStrings`` of the npm
package *string-similarity*. The coefficient is a few lines of plain Python
(:func:`dice_similarity`, :class:`collections.Counter` for the bigram multisets), so no
library is needed.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar

from scorers.catalogue.metrics._code_based import (
    check_flag,
    check_scale,
    check_target,
    code_scorer_spec,
    percent,
    plural,
    reference_text,
)
from scorers.catalogue.metrics.tone_consistency import JS_WHITESPACE
from scorers.catalogue.spec import SCALE, TARGET, OptionSpec
from scorers.core.base import RunInput, ScoreResult, normalize_run

SCORER_ID = "content-similarity"

_WHITESPACE = re.compile(f"[{JS_WHITESPACE}]+")  # JavaScript's \s, as in Mastra


def bigrams(text: str) -> Counter[str]:
    """The multiset of ``text``'s character bigrams (pairs of adjacent code points).

    >>> sorted(bigrams("abab").items())
    [('ab', 2), ('ba', 1)]
    """
    return Counter(text[i : i + 2] for i in range(len(text) - 1))


def dice_similarity(a: str, b: str) -> tuple[float, int]:
    """Sørensen–Dice coefficient of the character-bigram multisets of ``a`` and ``b``.

    ``2·|common bigrams| / (len(a) + len(b) − 2)``, where common bigrams are counted
    with multiplicity (the multiset intersection). Equal texts (both empty included)
    → 1; a text shorter than 2 characters (and different from the other) → 0.
    Texts are compared as given: process them first (case, whitespace).

    Args:
        a: a text.
        b: another text.

    Returns:
        ``(similarity, common)``: the coefficient in ``[0, 1]`` and the number of
        common bigrams.

    >>> dice_similarity("night", "nacht")  # ni ig gh ht / na ac ch ht: 1 in common, 2·1 / 8
    (0.25, 1)
    >>> dice_similarity("", ""), dice_similarity("a", "ab")
    ((1.0, 0), (0.0, 0))
    """
    if a == b:
        return 1.0, max(len(a) - 1, 0)
    if len(a) < 2 or len(b) < 2:
        return 0.0, 0
    common = sum((bigrams(a) & bigrams(b)).values())
    return 2 * common / (len(a) + len(b) - 2), common


def mastra_processed(text: str, ignore_case: bool, ignore_whitespace: bool) -> str:
    """Mastra's ``processedInput`` / ``processedOutput``: lowercased, whitespace runs collapsed to one space, trimmed.

    >>> mastra_processed(" Hello\\n  World ", True, True)
    'hello world'
    """
    if ignore_case:
        text = text.lower()
    if ignore_whitespace:
        text = _WHITESPACE.sub(" ", text).strip(JS_WHITESPACE)
    return text


def preprocess(text: str, *, ignore_case: bool, ignore_whitespace: bool) -> str:
    """NFC-normalise ``text``, then lowercase it and/or remove all whitespace as asked.

    >>> preprocess(" Hello\\n World ", ignore_case=True, ignore_whitespace=True)
    'helloworld'
    >>> preprocess(" Hello\\n World ", ignore_case=False, ignore_whitespace=False)
    ' Hello\\n World '
    """
    text = unicodedata.normalize("NFC", text)
    if ignore_case:
        text = text.lower()
    if ignore_whitespace:
        text = _WHITESPACE.sub("", text)
    return text


@dataclass(frozen=True)
class ContentSimilarityScorer:
    """Scores how similar the response is to a reference text, by character bigrams.

    Build it with :func:`create_content_similarity_scorer`.

    Attributes:
        ignore_case: compare lowercased texts (default True).
        ignore_whitespace: remove all whitespace before comparing (default True); when
            False, whitespace characters take part in the bigrams.
        scale: the score's upper bound, a finite number > 0; scores lie in ``[0, scale]``.
        target: what the response is compared with: ``"ground_truth"``, ``"input"`` or
            ``"auto"`` (the ground truth when the run carries one, else the input); a row whose
            target is blank is ``missing_input``.

    Raises:
        InvalidInputError: if an option has the wrong type or ``scale`` is not a finite
            number > 0 (``field`` names the option).
    """

    id: ClassVar[str] = SCORER_ID
    name: ClassVar[str] = "Content similarity"
    cpu_bound: ClassVar[bool] = True  # computes only: see scorers.core.base.Scorer

    ignore_case: bool = True
    ignore_whitespace: bool = True
    scale: float = 1.0
    target: str = "auto"

    def __post_init__(self) -> None:
        check_target(self.target)
        check_flag(self.ignore_case, "ignore_case")
        check_flag(self.ignore_whitespace, "ignore_whitespace")
        object.__setattr__(self, "scale", check_scale(self.scale))

    def run(self, payload: dict[str, Any] | RunInput) -> ScoreResult:
        """Score one run: the response against the ground truth, else against the input.

        Formula (Mastra's content similarity, i.e. string-similarity's ``compareTwoStrings``),
        with ``a`` the processed reference and ``b`` the processed response (NFC, then
        lowercased when ``ignore_case``, all whitespace removed when ``ignore_whitespace``),
        lengths in code points:

        - ``similarity`` = 2·|bigrams(a) ∩ bigrams(b)| / (len(a) + len(b) − 2), the
          Sørensen–Dice coefficient over character-bigram multisets, in ``[0, 1]``.
        - ``a == b`` (both empty included) → 1; otherwise a text of fewer than 2
          characters → 0.
        - ``score`` = similarity × scale, in ``[0, scale]``, not rounded.

        Args:
            payload: a seed-shaped run (``{"input", "output", "ground_truth"?}``; every shape
                :func:`~scorers.core.base.normalize_run` accepts) or a :class:`~scorers.core.base.RunInput`.

        Returns:
            A :class:`~scorers.core.base.ScoreResult` whose ``analyze_step_result`` is
            ``{"similarity", "comparedWith", "commonBigrams", "referenceBigrams",
            "outputBigrams", "processedInput", "processedOutput"}`` (``comparedWith`` is
            ``"ground_truth"`` or ``"input"``; the processed texts as Mastra shows them,
            whitespace runs collapsed to one space) and
            whose ``details`` holds the processed texts, ``processedReference`` and
            ``processedOutput``.

        Raises:
            InvalidInputError: if the payload is malformed, or has neither a ground truth
                nor a user message to compare the response with.

        >>> scorer = create_content_similarity_scorer()
        >>> scorer.run({"output": "Night", "ground_truth": "nacht"}).score
        0.25
        """
        run = normalize_run(payload)
        compared_with, reference = reference_text(run, self.target, scorer=self.name)
        a = preprocess(reference, ignore_case=self.ignore_case, ignore_whitespace=self.ignore_whitespace)
        b = preprocess(run.output, ignore_case=self.ignore_case, ignore_whitespace=self.ignore_whitespace)
        similarity, common = dice_similarity(a, b)
        analysis = {
            "similarity": similarity,
            "comparedWith": compared_with,
            "commonBigrams": common,
            "referenceBigrams": max(len(a) - 1, 0),
            "outputBigrams": max(len(b) - 1, 0),
            "processedInput": mastra_processed(reference, self.ignore_case, self.ignore_whitespace),
            "processedOutput": mastra_processed(run.output, self.ignore_case, self.ignore_whitespace),
        }
        return ScoreResult(
            scorer=self.id,
            score=similarity * self.scale,
            reason=self._reason(analysis, a, b),
            analyze_step_result=analysis,
            details={"processedReference": a, "processedOutput": b},
        )

    def _reason(self, analysis: dict[str, Any], a: str, b: str) -> str:
        target = "the ground truth" if analysis["comparedWith"] == "ground_truth" else "the input"
        steps = [
            s for s, on in (("ignoring case", self.ignore_case), ("without whitespace", self.ignore_whitespace)) if on
        ]
        how = f" ({', '.join(steps)})" if steps else ""
        if a == b:
            return f"The response is identical to {target}{how}."
        if len(a) < 2 or len(b) < 2:
            short = "The response" if len(b) < 2 else target.capitalize()
            return f"{short} has fewer than 2 characters{how}, so no character bigram can match: similarity 0."
        return (
            f"The response shares {plural(analysis['commonBigrams'], 'character bigram')} with {target}{how}: "
            f"Dice similarity {percent(analysis['similarity'])} over {analysis['outputBigrams']} + "
            f"{analysis['referenceBigrams']} bigrams."
        )


def create_content_similarity_scorer(
    *, ignore_case: bool = True, ignore_whitespace: bool = True, scale: float = 1.0, target: str = "auto"
) -> ContentSimilarityScorer:
    """Create the content similarity scorer (Mastra's code-based content similarity), which needs no LLM.

    Args:
        ignore_case: compare lowercased texts (default True).
        ignore_whitespace: remove all whitespace before comparing (default True).
        scale: multiplies the 0..1 score, a finite number > 0 (default 1); booleans are rejected.
        target: ``"auto"`` (default), ``"ground_truth"`` or ``"input"``; see :class:`ContentSimilarityScorer`.

    Returns:
        A :class:`ContentSimilarityScorer`; see :meth:`ContentSimilarityScorer.run` for
        the formula and the result's shape.

    Raises:
        InvalidInputError: if ``ignore_case`` or ``ignore_whitespace`` is not a bool, or
            ``scale`` is not a finite number > 0 (``field`` names the option).
    """
    return ContentSimilarityScorer(
        ignore_case=ignore_case, ignore_whitespace=ignore_whitespace, scale=scale, target=target
    )


SPECS = (
    code_scorer_spec(
        create=create_content_similarity_scorer,
        id=SCORER_ID,
        name="Content similarity",
        inputs=("output", "ground_truth or input"),
        measures="How similar the response is to the ground truth (or the input), by shared character pairs.",
        formula="2·|common character bigrams| / (len a + len b − 2) × scale (Sørensen–Dice over bigram multisets)",
        options=(
            SCALE,
            OptionSpec("ignore_case", "Ignore case", "bool", True, help="Compare lowercased texts."),
            OptionSpec(
                "ignore_whitespace",
                "Ignore whitespace",
                "bool",
                True,
                help="Remove all whitespace before comparing; off: whitespace counts in the bigrams.",
            ),
            TARGET,
        ),
        example={
            "input": [{"role": "user", "content": "What is the capital of France?"}],
            "output": "The capital of France is Paris.",
            "ground_truth": "Paris is the capital of France.",
            "options": {"scale": 1, "ignore_case": True, "ignore_whitespace": True},
        },
        notes=(
            "Equal texts (both empty included) → 1; a text shorter than 2 characters → 0. Compares the response "
            "with its target: the ground truth when the run carries one (target auto), else the input (Mastra "
            "always uses the input); a row whose target is blank is missing_input, never compared with the other "
            "text. Deviations from Mastra: ignore_whitespace=false keeps "
            "whitespace in the bigrams (in Mastra the option has no effect, since string-similarity always "
            "removes whitespace); lengths count Unicode code points after NFC (JavaScript counts UTF-16 units, "
            "so an emoji is 2 characters there); options left out keep their defaults even when an empty options "
            "object is given (Mastra's createContentSimilarityScorer({}) turns both ignore_case and "
            "ignore_whitespace off, a defect of its default-parameter handling); several user messages (a "
            "conversation's user turns) are joined by a blank line, the input the exports show (Mastra joins "
            'inputMessages with ", ").'
        ),
    ),
)
