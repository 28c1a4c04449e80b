"""Tone consistency scorer (code-based): AFINN sentiment of the response, against a reference or across sentences.

Re-implements Mastra's tone scorer (``@mastra/evals``, ``scorers/code/tone``), which uses
the npm package *sentiment* (the AFINN-165 word list) and its "comparative" score: the sum
of the word scores divided by the number of words.

Language processing:

- `afinn <https://pypi.org/project/afinn/>`_ (by Finn Årup Nielsen, the author of the
  AFINN lexicon) ships the AFINN-165 English word list inside the package (no download,
  works offline, no dependencies); the scoring itself follows the npm package: whole
  tokens only (its multi-word entries never match there), negation by the token before.
- `pysbd <https://pypi.org/project/pysbd/>`_ splits the response into sentences with
  rules only (no model; handles "Dr.", "e.g.", decimals and ellipses), where Mastra
  uses the regular expression ``[^.!?]+[.!?]+``, which drops a last sentence without
  end punctuation and splits at every abbreviation.

The reference tone text is the run's ground truth: in a dataset, map the "reference
tone" column to the ground-truth role. Without a ground truth the scorer measures how
stable the sentiment is across the response's sentences.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

from scorers.catalogue.metrics._code_based import ScaledScorer, code_scorer_spec, number, plural
from scorers.core.base import RunInput, ScoreResult, normalize_run

SCORER_ID = "tone-consistency"

# A word: letters/digits of any script, joined by inner apostrophes or hyphens ("don't", "well-being").
_WORD = re.compile(r"[^\W_]+(?:['\-][^\W_]+)*")


@dataclass(frozen=True)
class Sentiment:
    """AFINN sentiment of one text.

    Attributes:
        score: the sum of the AFINN scores (-5..+5 each) of the words and phrases found.
        words: the number of words in the text.
        comparative: ``score / words`` (0 for a text without words).
    """

    score: float
    words: int
    comparative: float


@cache
def _afinn() -> Any:
    from afinn import Afinn

    return Afinn(language="en")


def _clean(text: str) -> str:
    return unicodedata.normalize("NFC", text).replace("\u2019", "'").replace("\u2018", "'")


# The npm package sentiment's tokenizer (lib/tokenize.js) and English negators (languages/en/negators.json).
_PUNCTUATION = re.compile(r"[.,/#!?$%^&*;:{}=_`\"~()]")
# JavaScript's \s: Python's also holds U+001C-U+001F and U+0085, and lacks U+FEFF.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_RUNS_OF_SPACE = re.compile(f"[{JS_WHITESPACE}]{{2,}}")
_NEGATORS = frozenset(
    ("cant", "can't", "dont", "don't", "doesnt", "doesn't", "not", "non", "wont", "won't", "isnt", "isn't")
)


def tokens(text: str) -> list[str]:
    """The npm *sentiment* package's tokens: lowercase, punctuation to spaces, split at single spaces.

    Runs of two or more (JavaScript) whitespace characters become one space, the text is
    trimmed and split at each space, so a lone tab or hyphen joins words into one token.

    >>> tokens("I won't go, (really)!")
    ['i', "won't", 'go', 'really']
    >>> tokens("")
    ['']
    """
    text = _PUNCTUATION.sub(" ", text.lower().replace("\n", " "))
    return _RUNS_OF_SPACE.sub(" ", text).strip(JS_WHITESPACE).split(" ")


def sentiment(text: str) -> Sentiment:
    """The AFINN-165 sentiment of ``text`` as the npm *sentiment* package (Mastra's) computes it.

    Each whole token (:func:`tokens`) found in the AFINN-165 list scores its value, negated
    when the token before it is a negator ("not", "don't", ...); ``comparative`` is the sum
    divided by the number of tokens (an empty text is one empty token).

    >>> sentiment("I love it, but the ending is bad.")  # love +3, bad -3; 8 tokens
    Sentiment(score=0.0, words=8, comparative=0.0)
    >>> sentiment("Great!")
    Sentiment(score=3.0, words=1, comparative=3.0)
    >>> sentiment("not good")  # good +3 negated
    Sentiment(score=-3.0, words=2, comparative=-1.5)
    """
    words = tokens(text)
    lexicon = _afinn()._dict
    score = 0.0
    for i, word in enumerate(words):
        if word in lexicon:
            score += -lexicon[word] if i > 0 and words[i - 1] in _NEGATORS else lexicon[word]
    return Sentiment(score, len(words), score / len(words))


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (pysbd, English rules), stripped; pieces without a word are dropped.

    >>> split_sentences("Dr. Smith is great. Really great! And then")
    ['Dr. Smith is great.', 'Really great!', 'And then']
    >>> split_sentences("It costs 3.5 dollars. ... Fine")
    ['It costs 3.5 dollars.', 'Fine']
    """
    import pysbd

    segments = pysbd.Segmenter(language="en", clean=False).segment(_clean(text)) if text.strip() else []
    return [s.strip() for s in segments if _WORD.search(s)]


@dataclass(frozen=True)
class ToneConsistencyScorer(ScaledScorer):
    """Scores how well the response's tone matches a reference tone, or how stable it is.

    Build it with :func:`create_tone_consistency_scorer`. Its option ``scale`` is
    checked as :class:`ScaledScorer` describes.
    """

    id: ClassVar[str] = SCORER_ID
    name: ClassVar[str] = "Tone consistency"

    def run(self, payload: dict[str, Any] | RunInput) -> ScoreResult:
        """Score one run: the response's sentiment against the reference tone, else across its sentences.

        Formula (Mastra's tone scorer), with ``comp(t)`` the AFINN comparative of a text
        (sum of word scores / number of words, 0 without words; see :func:`sentiment`):

        - with a reference (the run's ground truth; an empty one counts as none, as in Mastra):
          ``score`` = max(0, 1 − |comp(response) − comp(reference)|) × scale.
        - without: the response's sentences ``s_1..s_n`` (:func:`split_sentences`);
          ``score`` = max(0, 1 − Var(comp(s_1), ..., comp(s_n))) × scale, with the
          population variance (divided by n); fewer than 2 sentences → variance 0 → ``scale``.

        Scores lie in ``[0, scale]`` and are not rounded.

        Args:
            payload: a seed-shaped run (``{"output", "ground_truth"?}``; every shape
                :func:`~scorers.core.base.normalize_run` accepts) or a :class:`~scorers.core.base.RunInput`.
                The input is not used.

        Returns:
            A :class:`~scorers.core.base.ScoreResult`. With a reference, ``analyze_step_result`` is
            ``{"mode": "reference", "responseSentiment", "referenceSentiment", "difference"}``
            (comparatives and their absolute difference) and ``details`` holds ``response``
            and ``reference``, each ``{"score", "words", "comparative"}``. Without,
            ``{"mode": "stability", "avgSentiment", "sentimentVariance", "sentenceCount"}``
            and ``details["sentences"]``, a list of ``{"text", "score", "words", "comparative"}``.

        Raises:
            InvalidInputError: if the payload is malformed.

        >>> scorer = create_tone_consistency_scorer()
        >>> scorer.run({"output": "Great!", "ground_truth": "Good, thanks."}).score  # |3/1 − (3+2)/2| = 0.5
        0.5
        """
        run = normalize_run(payload)
        if run.ground_truth:
            return self._against_reference(run.output, run.ground_truth)
        return self._stability(run.output)

    def _against_reference(self, output: str, reference: str) -> ScoreResult:
        response, ref = sentiment(output), sentiment(reference)
        difference = abs(response.comparative - ref.comparative)
        fraction = max(0.0, 1.0 - difference)
        analysis = {
            "mode": "reference",
            "responseSentiment": response.comparative,
            "referenceSentiment": ref.comparative,
            "difference": difference,
        }
        outcome = "so the score is 0" if fraction == 0 else f"a score of {number(fraction)}"
        reason = (
            f"The response's sentiment ({number(response.comparative, signed=True)} per word) differs from the "
            f"reference tone's ({number(ref.comparative, signed=True)} per word) by {number(difference)}: {outcome}."
        )
        return ScoreResult(
            scorer=self.id,
            score=fraction * self.scale,
            reason=reason,
            analyze_step_result=analysis,
            details={"response": _as_dict(response), "reference": _as_dict(ref)},
        )

    def _stability(self, output: str) -> ScoreResult:
        sentences = split_sentences(output)
        values = [sentiment(s) for s in sentences]
        comparatives = [v.comparative for v in values]
        n = len(comparatives)
        mean = sum(comparatives) / n if n else 0.0
        variance = sum((c - mean) ** 2 for c in comparatives) / n if n else 0.0
        fraction = max(0.0, 1.0 - variance)
        analysis = {"mode": "stability", "avgSentiment": mean, "sentimentVariance": variance, "sentenceCount": n}
        if n == 0:
            reason = "The response has no words, so its tone cannot vary (no reference tone given)."
        elif n == 1:
            reason = (
                f"The response is a single sentence (sentiment {number(mean, signed=True)} per word), "
                "so its tone cannot vary (no reference tone given)."
            )
        else:
            outcome = "so the score is 0" if fraction == 0 else f"a score of {number(fraction)}"
            reason = (
                f"Across the response's {plural(n, 'sentence')} the sentiment averages "
                f"{number(mean, signed=True)} per word with a variance of {variance:.4f}: {outcome} "
                "(no reference tone given)."
            )
        return ScoreResult(
            scorer=self.id,
            score=fraction * self.scale,
            reason=reason,
            analyze_step_result=analysis,
            details={"sentences": [{"text": s, **_as_dict(v)} for s, v in zip(sentences, values, strict=True)]},
        )


def _as_dict(value: Sentiment) -> dict[str, float | int]:
    return {"score": value.score, "words": value.words, "comparative": value.comparative}


def create_tone_consistency_scorer(*, scale: float = 1.0) -> ToneConsistencyScorer:
    """Create the tone consistency scorer (Mastra's code-based tone scorer), which needs no LLM.

    The reference tone text is the run's ground truth (``ground_truth`` in the payload; in
    a dataset, map the "reference tone" column to the ground-truth role).

    Args:
        scale: multiplies the 0..1 score, a finite number > 0 (default 1); booleans are rejected.

    Returns:
        A :class:`ToneConsistencyScorer`; see :meth:`ToneConsistencyScorer.run` for the
        formula and the result's shape.

    Raises:
        InvalidInputError: if ``scale`` is not a finite number > 0 (``field="scale"``).
    """
    return ToneConsistencyScorer(scale=scale)


SPECS = (
    code_scorer_spec(
        create=create_tone_consistency_scorer,
        id=SCORER_ID,
        name="Tone consistency",
        inputs=("output", "ground_truth (reference tone, optional)"),
        measures=(
            "Whether the response's sentiment matches a reference tone text, or, without one, "
            "how steady it stays from sentence to sentence."
        ),
        formula=(
            "AFINN comparative c = Σ word scores / words; with reference: max(0, 1 − |c(response) − c(reference)|); "
            "without: max(0, 1 − population variance of the sentences' c); × scale"
        ),
        example={
            "input": [{"role": "user", "content": "My order arrived broken."}],
            "output": "I'm so sorry about that. We will send a replacement today. Thank you for your patience!",
            "ground_truth": "We apologise for the trouble and are happy to help.",
            "options": {"scale": 1},
        },
        notes=(
            'The reference tone text comes from the ground truth (map a dataset\'s "reference tone" column to '
            "ground truth). Called directly (create_tone_consistency_scorer), an empty or blank reference counts as "
            "none, as in Mastra, and the run is scored for stability. In a run that carries a reference (a "
            "dataset with a mapped ground-truth column, the Batch and Compare pages, the CLI), a blank reference in "
            "a row is not scored (missing_input): one run never mixes reference and stability scores. Sentiment as Mastra's npm sentiment package computes it: whole whitespace-separated "
            "tokens of the AFINN-165 list (via the afinn package), negated after not/don't/won't..., divided by "
            "the number of tokens. Without a reference, fewer than 2 sentences (an empty response included) → 1. "
            "Deviations from Mastra: sentences come from pysbd (Mastra's regular expression drops a last "
            "sentence without end punctuation and splits at abbreviations); pieces without a word are not "
            "sentences; no emoji scores (the sentiment package adds 767 from the Emoji Sentiment Ranking, which "
            "we do not ship). Mastra's tone scorer takes the reference as an option fixed per scorer; ours reads "
            "it per run."
        ),
    ),
)
