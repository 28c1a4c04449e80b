"""Keyword coverage scorer (code-based): the share of the input's keywords the response uses.

Re-implements Mastra's keyword-coverage scorer (``@mastra/evals``,
``scorers/code/keyword-coverage``), which extracts keywords with the npm package
*keyword-extractor* (English stopwords removed, numbers removed, lowercased, deduplicated).

Language processing: the English stopword list of
`stop-words <https://pypi.org/project/stop-words/>`_ 2018.7.23, shipped inside the package
(no download, works offline, no dependencies). It is the classic 174-word list of function
words (articles, pronouns, prepositions, auxiliaries and their contractions). We pin that
release on purpose: the package's 2025 releases replaced the English list with a
1,333-word list that also removes content words such as "computer", "research",
"system" and "information", which would hide exactly the keywords this scorer counts.
NLTK's similar list needs a corpus download; spaCy's needs the whole spaCy stack.
Tokenising is a regular expression (below), so no other library is needed.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache
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

SCORER_ID = "keyword-coverage"

# A span that looks like an HTML tag or comment: "<" then a letter, "/" or "!", up to the next ">".
_HTML_TAG = re.compile(r"<(?:[^\W\d_]|[/!])[^>]*>")

# A word: letters/digits of any script, joined by inner apostrophes or hyphens ("don't", "state-of-the-art").
_TOKEN = re.compile(r"[^\W_]+(?:['\-][^\W_]+)*")


@cache
def english_stopwords() -> frozenset[str]:
    """The English stopwords of the ``stop-words`` package, lowercase, with straight apostrophes."""
    from stop_words import get_stop_words

    return frozenset(word.lower().replace("\u2019", "'") for word in get_stop_words("english"))


def extract_keywords(text: str) -> list[str]:
    """The English keywords of ``text``, lowercased, in order of first appearance, without duplicates.

    Spans that look like HTML tags (``<b>``, ``</p>``, ``<!-- -->``: a letter, ``/`` or
    ``!`` after ``<``) are removed first, so IFEval's ``<<title>>`` loses its title as in
    Mastra, while ``a < b and c > d`` keeps its words (Mastra deletes every ``<…>`` span).
    Words are runs of letters and digits with inner apostrophes or hyphens; curly
    apostrophes count as straight ones. A word is dropped when it is a stopword, or when
    it has no letter (numbers such as ``2024`` or ``3-5``); a possessive ``'s`` is
    removed (``"mastra's"`` → ``"mastra"``).

    >>> extract_keywords("What's the capital of France? France's capital, in 2024, is Paris!")
    ['capital', 'france', 'paris']
    >>> extract_keywords("It is what it is.")
    []
    """
    stop = english_stopwords()
    text = _HTML_TAG.sub("", unicodedata.normalize("NFC", text)).replace("\u2019", "'").replace("\u2018", "'").lower()
    keywords: dict[str, None] = {}
    for token in _TOKEN.findall(text):
        if token in stop:
            continue
        if token.endswith("'s"):
            token = token[:-2]
            if token in stop:
                continue
        if any(unicodedata.category(ch).startswith("L") for ch in token):
            keywords.setdefault(token, None)
    return list(keywords)


@dataclass(frozen=True)
class KeywordCoverageScorer(ScaledScorer):
    """Scores the share of the input's keywords that the response contains.

    Build it with :func:`create_keyword_coverage_scorer`. Its option ``scale`` is
    checked as :class:`ScaledScorer` describes.
    """

    id: ClassVar[str] = SCORER_ID
    name: ClassVar[str] = "Keyword coverage"

    def run(self, payload: dict[str, Any] | RunInput) -> ScoreResult:
        """Score one run: the input's keywords found among the response's keywords.

        Formula (Mastra's keyword coverage): with ``R`` the keywords of the input (the
        reference) and ``O`` those of the response (:func:`extract_keywords`),

        - ``score`` = |R ∩ O| / |R| × scale, in ``[0, scale]``, not rounded; keywords
          match exactly (``"plant"`` does not match ``"plants"``).
        - no reference keywords (|R| = 0) → ``scale``: nothing to cover.

        Args:
            payload: a seed-shaped run (``{"input", "output"}``; every shape
                :func:`~scorers.core.base.normalize_run` accepts) or a :class:`~scorers.core.base.RunInput`.
                The user messages are the reference; the ground truth is not used.

        Returns:
            A :class:`~scorers.core.base.ScoreResult` whose ``analyze_step_result`` is
            ``{"totalKeywordsLength", "matchedKeywordsLength", "referenceKeywords", "responseKeywords",
            "missingKeywords"}``: the two counts and the keyword lists.

        Raises:
            InvalidInputError: if the payload is malformed or has no user message.

        >>> scorer = create_keyword_coverage_scorer()
        >>> result = scorer.run({"input": "Capital of France?", "output": "Paris is France's capital."})
        >>> result.score, result.analyze_step_result["matchedKeywordsLength"]
        (1.0, 2)
        """
        run = normalize_run(payload)
        reference = extract_keywords(require_input(run, "Keyword coverage"))
        response = extract_keywords(run.output)
        found = set(response)
        missing = [keyword for keyword in reference if keyword not in found]
        matched = len(reference) - len(missing)
        fraction = matched / len(reference) if reference else 1.0
        analysis = {
            "totalKeywordsLength": len(reference),
            "matchedKeywordsLength": matched,
            "referenceKeywords": reference,
            "responseKeywords": response,
            "missingKeywords": missing,
        }
        return ScoreResult(
            scorer=self.id,
            score=fraction * self.scale,
            reason=_reason(analysis, fraction),
            analyze_step_result=analysis,
        )


def create_keyword_coverage_scorer(*, scale: float = 1.0) -> KeywordCoverageScorer:
    """Create the keyword coverage scorer (Mastra's code-based keyword coverage), which needs no LLM.

    Args:
        scale: multiplies the 0..1 score, a finite number > 0 (default 1); booleans are rejected.

    Returns:
        A :class:`KeywordCoverageScorer`; see :meth:`KeywordCoverageScorer.run` for the
        formula and the result's shape.

    Raises:
        InvalidInputError: if ``scale`` is not a finite number > 0 (``field="scale"``).
    """
    return KeywordCoverageScorer(scale=scale)


def _reason(analysis: dict[str, Any], fraction: float) -> str:
    total = analysis["totalKeywordsLength"]
    if total == 0:
        return "The input has no keywords (only stopwords or numbers), so there is nothing to cover."
    text = (
        f"The response contains {analysis['matchedKeywordsLength']} of the input's "
        f"{plural(total, 'keyword')} ({percent(fraction)})"
    )
    missing = analysis["missingKeywords"]
    return f"{text}; missing: {quote_list(missing)}." if missing else f"{text}; none is missing."


SPECS = (
    code_scorer_spec(
        create=create_keyword_coverage_scorer,
        id=SCORER_ID,
        name="Keyword coverage",
        inputs=("input", "output"),
        measures="The share of the input's keywords (words other than stopwords and numbers) the response uses.",
        formula="matched input keywords / input keywords × scale; no input keywords → 1",
        example={
            "input": [{"role": "user", "content": "Summarise the causes of the French Revolution and its outcome."}],
            "output": "The French Revolution was caused by debt, inequality and famine; it ended the monarchy.",
            "options": {"scale": 1},
        },
        notes=(
            "The input is the reference (as in Mastra); the ground truth is not used. No input keywords → 1; a "
            "missing input → invalid input. Keywords match exactly after lowercasing (no stemming). Deviations "
            "from Mastra: the stopword list is stop-words' classic 174 English function words (Mastra's "
            'keyword-extractor list has several hundred and also drops words such as "use", "help", "example", '
            '"value"); contractions and possessives are handled (Mastra keeps "don\'t" as a keyword because '
            'its list spells it "dont"); punctuation of any kind separates words and tokens without a letter '
            "are dropped (Mastra drops only all-digit tokens and keeps brackets or slashes inside a word, and "
            'keeps a lone ">" as a keyword). Only spans that look like HTML tags are removed (a letter, / or ! '
            'after <): Mastra deletes every <…> span as HTML, so maths such as "a < b and c > d" loses its '
            "words there; IFEval's <<title>> loses its title in both."
        ),
    ),
)
