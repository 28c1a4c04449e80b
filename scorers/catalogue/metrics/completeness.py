"""Completeness scorer (code-based): how many of the input's words the response covers.

Re-implements Mastra's completeness scorer (``@mastra/evals``, ``scorers/code/completeness``):
NLP elements of the input and of the response, and the share of input elements that
some response element covers.

Language processing: `lemminflect <https://pypi.org/project/lemminflect/>`_ gives the
base form of verbs ("works" -> "work", "ran" -> "run"). It ships its English lexicon
and rules inside the package (no model or corpus download, works offline) and needs only
numpy. Mastra uses the JavaScript library *compromise* for nouns, verbs (``toInfinitive``),
topics and terms; spaCy or NLTK would need a model or corpus download at run time.

Why only verb base forms are looked up: Mastra splits every extracted element into
words and pools them. Nouns, topics (people, places, organisations) and terms are
spans of the text's own words, so after splitting they add no word that the terms
(every word) do not already give. compromise's ``toInfinitive`` rewrites the verbs
of the document in place, so a verb's inflected form ("ran") is not an element, only
its base form ("run"); compromise also expands contractions ("can't" -> "can not").
We do both word by word, without tagging parts of speech in context: contractions
are written out first; a word the lexicon knows only as a verb form is replaced by its
base form(s); a word that may also be a noun or adjective ("plants", "runs") is kept
and its verb base form added, which is harmless for coverage because the same word in
the response adds the same base form.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from scorers.catalogue.metrics._code_based import (
    ScaledScorer,
    code_scorer_spec,
    percent,
    plural,
    quote_list,
    require_input,
)
from scorers.core.base import RunInput, ScoreResult, normalize_run

SCORER_ID = "completeness"

_COMBINING_DIACRITICS = re.compile("[\u0300-\u036f]")


def normalize_words(text: str) -> list[str]:
    """Mastra's element normalisation: strip accents, lowercase, non-alphanumerics to spaces, split.

    Accents are the combining diacritical marks U+0300–U+036F after NFD decomposition
    (as in Mastra). Letters, digits and other combining marks of every script are kept
    (Mastra keeps only ``a-z0-9``, which deletes every non-Latin word and letters such
    as ß or ø).

    >>> normalize_words("Crème brûlée, São-Paulo's CO2!")
    ['creme', 'brulee', 'sao', 'paulo', 's', 'co2']
    >>> normalize_words("Straße über Москва")
    ['straße', 'uber', 'москва']
    """
    stripped = _COMBINING_DIACRITICS.sub("", unicodedata.normalize("NFD", text.lower()))
    composed = unicodedata.normalize("NFC", stripped)
    return "".join(ch if unicodedata.category(ch)[0] in "LNM" else " " for ch in composed).split()


# English contractions, expanded before the elements are taken (compromise does the same):
# "can't" -> "can not", "let's" -> "let us", "she's" -> "she is"; a possessive "'s" after
# other words is kept ("John's" -> "john", "s").
_CONTRACTIONS = (
    (re.compile(r"\b(can)no(t)\b", re.IGNORECASE), r"\1 no\2"),
    (re.compile(r"\bwon['\u2019]t\b", re.IGNORECASE), "will not"),
    (re.compile(r"\bshan['\u2019]t\b", re.IGNORECASE), "shall not"),
    (re.compile(r"\bcan['\u2019]t\b", re.IGNORECASE), "can not"),
    (re.compile(r"n['\u2019]t\b", re.IGNORECASE), " not"),
    (re.compile(r"\blet['\u2019]s\b", re.IGNORECASE), "let us"),
    (
        re.compile(r"\b(he|she|it|that|what|who|where|there|here|how)['\u2019]s\b", re.IGNORECASE),
        r"\1 is",
    ),
    (re.compile(r"['\u2019]m\b", re.IGNORECASE), " am"),
    (re.compile(r"['\u2019]re\b", re.IGNORECASE), " are"),
    (re.compile(r"['\u2019]ve\b", re.IGNORECASE), " have"),
    (re.compile(r"['\u2019]ll\b", re.IGNORECASE), " will"),
    (re.compile(r"['\u2019]d\b", re.IGNORECASE), " would"),
)


def expand_contractions(text: str) -> str:
    """``text`` with English contractions written out.

    >>> expand_contractions("I can't go, let's see what's left; John's won't")
    "I can not go, let us see what is left; John's will not"
    >>> expand_contractions("I cannot say I'd")
    'I can not say I would'
    """
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return text


@lru_cache(maxsize=65536)
def verb_base_forms(word: str) -> tuple[tuple[str, ...], bool]:
    """The base forms lemminflect's lexicon gives ``word`` as a verb, and whether it is only a verb.

    ``only_verb`` is True when the lexicon knows ``word`` as a verb (or auxiliary) form and
    as nothing else ("ran", "using", "is"): such a word is replaced by its base form, as
    compromise's ``toInfinitive`` rewrites the verbs of the text. A word that can also be
    a noun or adjective ("runs", "plants") is kept, with its base form added.

    >>> verb_base_forms("ran"), verb_base_forms("runs"), verb_base_forms("glucose")
    ((('run',), True), (('run',), False), ((), False))
    """
    from lemminflect import getAllLemmas  # loads the lexicon on first use (~1 s), not at import

    lemmas = getAllLemmas(word)
    bases = tuple(dict.fromkeys((*lemmas.get("VERB", ()), *lemmas.get("AUX", ()))))
    return bases, bool(bases) and set(lemmas) <= {"VERB", "AUX"}


def extract_elements(text: str) -> tuple[list[str], list[str]]:
    """The normalised elements of ``text``, in order of first appearance, without duplicates.

    Args:
        text: any text.

    Returns:
        ``(elements, base_forms)``: contractions are expanded, then ``elements`` are the
        text's words (its terms), each word that is only a verb form replaced by its base
        form(s), and each word that may also be another part of speech followed by its verb
        base form(s); ``base_forms`` are the base forms that are not themselves words of
        the text.

    >>> extract_elements("The plant works, the plants ran.")
    (['the', 'plant', 'works', 'work', 'plants', 'run'], ['work', 'run'])
    """
    words = normalize_words(expand_contractions(text))
    seen_words = set(words)
    elements: dict[str, None] = {}
    base_forms: dict[str, None] = {}
    for word in words:
        bases, only_verb = verb_base_forms(word)
        if not only_verb:
            elements.setdefault(word, None)
        for base in bases:
            for part in normalize_words(base):
                elements.setdefault(part, None)
                if part not in seen_words:
                    base_forms.setdefault(part, None)
    return list(elements), list(base_forms)


def element_covered(element: str, candidate: str) -> bool:
    """Mastra's match rule between an input element and a response element.

    Elements of 3 characters or fewer match only exactly; longer ones match when one
    contains the other and shorter/longer > 0.6 (in characters).

    >>> element_covered("cat", "cats"), element_covered("plant", "plants"), element_covered("photo", "photosynthesis")
    (False, True, False)
    """
    if len(element) <= 3:
        return element == candidate
    shorter, longer = sorted((element, candidate), key=len)
    # shorter/longer > 0.6  <=>  5·shorter > 3·longer, in integers (no float rounding at the boundary)
    return shorter in longer and 5 * len(shorter) > 3 * len(longer)


# Output elements up to this length are indexed by their qualifying substrings; longer
# ones (rare: runs of text without spaces) are compared one by one.
_INDEX_LIMIT = 64


def _min_part(length: int) -> int:
    """The shortest part of a ``length``-character string that passes the ratio: 5·k > 3·length."""
    return 3 * length // 5 + 1


def covered_elements(input_elements: Iterable[str], output_elements: Iterable[str]) -> list[bool]:
    """For each input element, whether some output element covers it (:func:`element_covered`).

    Same answers as comparing every pair with :func:`element_covered`, without the
    quadratic cost: an input element is covered when it is an output element, or a
    substring of an output element long enough to pass the ratio (looked up in an index
    of those substrings), or when one of its own long-enough substrings is an output
    element. Elements longer than 64 characters fall back to pairwise comparison with
    the candidates whose length can pass the ratio.
    """
    exact = set(output_elements)
    parts: set[str] = set()  # substrings t of an indexed output element s with 5·len(t) > 3·len(s)
    by_length: dict[int, list[str]] = defaultdict(list)
    for candidate in exact:
        size = len(candidate)
        by_length[size].append(candidate)
        if size <= _INDEX_LIMIT:
            for k in range(_min_part(size), size + 1):
                parts.update(candidate[i : i + k] for i in range(size - k + 1))
    long_lengths = sorted(size for size in by_length if size > _INDEX_LIMIT)
    all_lengths = sorted(by_length)

    def covered(element: str) -> bool:
        n = len(element)
        if element in exact:
            return True
        if n <= 3:
            return False
        if element in parts:
            return True
        if n <= _INDEX_LIMIT:
            if any(element[i : i + k] in exact for k in range(_min_part(n), n) for i in range(n - k + 1)):
                return True
            lengths = long_lengths  # only unindexed (long) output elements are left to compare
        else:
            lengths = all_lengths
        return any(
            element_covered(element, candidate)
            for m in lengths
            if 5 * min(n, m) > 3 * max(n, m)
            for candidate in by_length[m]
        )

    return [covered(element) for element in input_elements]


@dataclass(frozen=True)
class CompletenessScorer(ScaledScorer):
    """Scores the share of the input's elements (words and verb base forms) the response covers.

    Build it with :func:`create_completeness_scorer`. Its option ``scale`` is
    checked as :class:`ScaledScorer` describes.
    """

    id: ClassVar[str] = SCORER_ID
    name: ClassVar[str] = "Completeness"

    def run(self, payload: dict[str, Any] | RunInput) -> ScoreResult:
        """Score one run: the input's elements covered by the response's elements.

        Formula (Mastra's completeness scorer):

        - elements of a text = its words after contractions are expanded, normalised by
          :func:`normalize_words` (accents stripped, lowercase, non-alphanumerics to
          spaces, split), with verb forms rewritten to their base form
          (:func:`extract_elements`), deduplicated.
        - an input element is covered when some response element equals it (elements of
          ≤ 3 characters) or, for longer elements, when one contains the other and
          shorter/longer > 0.6.
        - ``score`` = covered input elements / input elements × scale, in ``[0, scale]``,
          not rounded; no input elements → ``scale`` if the response has no elements
          either, else 0.

        Args:
            payload: a seed-shaped run (``{"input", "output"}``; every shape
                :func:`~scorers.core.base.normalize_run` accepts) or a :class:`~scorers.core.base.RunInput`.
                The user messages are the input; the ground truth is not used.

        Returns:
            A :class:`~scorers.core.base.ScoreResult` whose ``analyze_step_result`` is
            ``{"inputElements", "outputElements", "missingElements", "elementCounts":
            {"input", "output"}, "coveredCount"}`` and whose ``details`` holds
            ``inputBaseForms`` and ``outputBaseForms``, the verb base forms added to
            each side's words.

        Raises:
            InvalidInputError: if the payload is malformed or has no user message.

        >>> scorer = create_completeness_scorer()
        >>> result = scorer.run({"input": "Explain photosynthesis", "output": "Photosynthesis converts light."})
        >>> result.score, result.analyze_step_result["missingElements"]
        (0.5, ['explain'])
        """
        run = normalize_run(payload)
        input_text = require_input(run, "Completeness")
        input_elements, input_bases = extract_elements(input_text)
        output_elements, output_bases = extract_elements(run.output)

        flags = covered_elements(input_elements, output_elements)
        covered = sum(flags)
        missing = [element for element, ok in zip(input_elements, flags, strict=True) if not ok]
        if input_elements:
            fraction = covered / len(input_elements)
        else:
            fraction = 1.0 if not output_elements else 0.0

        analysis = {
            "inputElements": input_elements,
            "outputElements": output_elements,
            "missingElements": missing,
            "elementCounts": {"input": len(input_elements), "output": len(output_elements)},
            "coveredCount": covered,
        }
        return ScoreResult(
            scorer=self.id,
            score=fraction * self.scale,
            reason=_reason(analysis, fraction),
            analyze_step_result=analysis,
            details={"inputBaseForms": input_bases, "outputBaseForms": output_bases},
        )


def create_completeness_scorer(*, scale: float = 1.0) -> CompletenessScorer:
    """Create the completeness scorer (Mastra's code-based completeness), which needs no LLM.

    Args:
        scale: multiplies the 0..1 score, a finite number > 0 (default 1); booleans are rejected.

    Returns:
        A :class:`CompletenessScorer`; see :meth:`CompletenessScorer.run` for the formula
        and the result's shape.

    Raises:
        InvalidInputError: if ``scale`` is not a finite number > 0 (``field="scale"``).
    """
    return CompletenessScorer(scale=scale)


def _reason(analysis: dict[str, Any], fraction: float) -> str:
    counts = analysis["elementCounts"]
    if counts["input"] == 0:
        if counts["output"] == 0:
            return "Neither the input nor the response has any element (word) to compare, so nothing is missing."
        return (
            f"The input has no element (word) to cover while the response has {counts['output']}, "
            "so the score is 0 (Mastra's rule)."
        )
    covered = analysis["coveredCount"]
    text = f"The response covers {covered} of the input's {plural(counts['input'], 'element')} ({percent(fraction)})"
    missing = analysis["missingElements"]
    if not missing:
        return text + "; none is missing."
    return f"{text}; missing: {quote_list(missing)}."


SPECS = (
    code_scorer_spec(
        create=create_completeness_scorer,
        id=SCORER_ID,
        name="Completeness",
        inputs=("input", "output"),
        measures="How many of the input's words (and verb base forms) the response covers.",
        formula=(
            "covered input elements / input elements × scale; elements = normalised words + verb base forms; "
            "≤ 3 chars match exactly, longer ones when one contains the other and shorter/longer > 0.6"
        ),
        example={
            "input": [{"role": "user", "content": "Explain how plants use sunlight, water and carbon dioxide."}],
            "output": "Plants turn sunlight, water and carbon dioxide into glucose and oxygen.",
            "options": {"scale": 1},
        },
        notes=(
            "As in Mastra, contractions are expanded (can't → can not, let's → let us) and verbs are rewritten "
            "to their base form (ran → run) before the elements are taken; nouns, topics and terms are all "
            "words of the text, so after Mastra's split into words they add nothing beyond the words "
            "themselves. No input elements → 1 if the response has none either, else 0 (Mastra's rule). "
            "Missing input → invalid input (an empty input message is scored). Deviations from Mastra: verb "
            "base forms come from lemminflect's lexicon (shipped in the package), word by word, instead of "
            "compromise's part-of-speech tagging in context, so the element lists can differ where compromise "
            'rewrites whole verb phrases (it drops auxiliaries such as will/have, reads "can\'t go" as '
            '"do not go" and "were growing" as "be growing") or tags a word otherwise; a word that may '
            "be a noun as well as a verb is kept with its base form added; missingElements uses the same match "
            "rule as the score (Mastra lists every element without an exact match, so its list disagrees with "
            "its score); letters of every script are kept (Mastra keeps only a-z0-9, dropping non-Latin words "
            "and ß, ø); words are split at non-alphanumerics only (Mastra's camelCase split runs after "
            "lowercasing and never applies). Languages written without spaces (Japanese, Chinese) give one "
            "element per run of text, so this scorer suits space-separated languages."
        ),
    ),
)
