"""Summarization (LLM judge): is the summary faithful to its source, and does it cover it?

The source text is the run's input, the summary its output. Alignment: the
summary's claims, each checked against the source. Coverage: up to ten key
questions the source answers, each checked for being answered by the summary.
score = min(alignment, coverage). One judge call returns both lists with their
verdicts (Mastra: 3 calls, alignment, coverage, reason); with
``independent_questions`` the questions are written first, from the source alone,
in a separate call (2 calls).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, Field

from scorers.catalogue.metrics._define import SCALE_PARAM, Metric, Param, factory, specs
from scorers.catalogue.metrics._llm import (
    BinaryVerdict,
    JudgedScorer,
    StrictModel,
    Verdict,
    boolean,
    function,
    merge_info,
    numbered_list_model,
    positive_integer,
    quote_list,
    ratio,
    require_text,
    system_message,
    text,
)
from scorers.core.base import RunInput, ScoreResult, decimal_text, normalize_run
from scorers.core.errors import InvalidInputError
from scorers.core.judge import delimit, spent_before

SCORER_ID = "summarization"
MAX_QUESTIONS = 10

ROLE = (
    "You are a meticulous editor who checks summaries. You check every claim of a summary against its "
    "source, and whether the summary answers the key questions the source answers."
)

_ALIGNMENT_TASK = (
    'Alignment: list every factual claim the summary makes, one entry each. For each, verdict "yes" if '
    'the source supports it, "no" if the source contradicts it, "unsure" if the source neither supports '
    "nor contradicts it; add a one-sentence reason."
)


def _questions_task(limit: int) -> str:
    return (
        f"write at most {limit} closed questions about the most important information in the source (its "
        "main points, key facts, figures and conclusions), each answerable from the source alone. Choose "
        "them from what matters in the source, not from what the summary happens to mention."
    )


class AlignmentClaim(StrictModel):
    """One claim of the summary, checked against the source."""

    claim: str = Field(description="A factual claim of the summary, quoted or closely paraphrased.")
    verdict: Verdict = Field(description='"yes" supported by the source, "no" contradicted, "unsure" neither.')
    reason: str


class CoverageQuestion(StrictModel):
    """One key question of the source and whether the summary answers it."""

    question: str = Field(description="A closed question the source answers.")
    answered: BinaryVerdict = Field(description='"yes" if the summary answers it, else "no".')
    reason: str


class SummarizationAnalysis(StrictModel):
    """The one-call analysis: claims with alignment verdicts, questions with coverage verdicts."""

    claims: list[AlignmentClaim]
    questions: list[CoverageQuestion]


class SourceQuestions(StrictModel):
    """The first call of the two-call mode: questions from the source alone."""

    questions: list[str]


class QuestionAnswer(StrictModel):
    """Whether the summary answers question ``index`` (1-based, in the given order)."""

    index: int
    answered: BinaryVerdict = Field(description='"yes" if the summary answers the question, else "no".')
    reason: str


class _Claims(StrictModel):
    claims: list[AlignmentClaim]


def summarization_prompt(source: str, summary: str, max_questions: int = MAX_QUESTIONS) -> str:
    """The one-call prompt: claims with alignment verdicts and questions with coverage verdicts."""
    return (
        f"{delimit('source', source)}\n\n{delimit('summary', summary)}\n\n"
        f"{_ALIGNMENT_TASK}\n\nCoverage: first, reading the source, {_questions_task(max_questions)} Then for each "
        'question, answered "yes" if the summary gives the answer, else "no", with a one-sentence reason.'
    )


def questions_prompt(source: str, max_questions: int = MAX_QUESTIONS) -> str:
    """The two-call mode's first prompt: the key questions, from the source alone."""
    return f"{delimit('source', source)}\n\nFor a later check of a summary of this source, {_questions_task(max_questions)}"


def check_prompt(source: str, summary: str, questions: list[str]) -> str:
    """The two-call mode's second prompt: the claims, and whether the summary answers the given questions."""
    numbered = "\n".join(f"{i}. {q}" for i, q in enumerate(questions, 1))
    return (
        f"{delimit('source', source)}\n\n{delimit('summary', summary)}\n\n{delimit('questions', numbered)}\n\n"
        f"{_ALIGNMENT_TASK}\n\nCoverage: for each numbered question, in order (index 1..{len(questions)}), "
        'answered "yes" if the summary gives the answer, else "no", with a one-sentence reason.'
    )


class SummarizationScorer(JudgedScorer):
    """Summary quality; build it with :func:`create_summarization_scorer`."""

    id = SCORER_ID
    name = "Summarization"
    schema_name = "summarization"
    output_model = SummarizationAnalysis
    expected_completion_tokens = 800

    independent_questions: bool
    max_questions: int
    source: str
    source_extractor: Callable[[RunInput], str] | None

    def _source(self, run: RunInput) -> str:
        """The source text: ``source_extractor(run)``, else the ``source`` option, else the run's input."""
        if self.source_extractor is not None:
            source = self.source_extractor(run)
            if not isinstance(source, str):
                raise InvalidInputError(
                    f"source_extractor must return the source text, got {type(source).__name__}", field="source"
                )
            return source
        return self.source or run.user_text

    @property
    def judge_calls_per_run(self) -> int:  # type: ignore[override]
        """1, or 2 with ``independent_questions``."""
        return 2 if self.independent_questions else 1

    def _validate(self, run: RunInput) -> None:
        require_text(self._source(run), "input", "the source text to summarise (the run's input, or the source option)")
        require_text(run.output, "output", "the summary (the run's output)")

    def _messages(self, run: RunInput) -> list[dict[str, str]]:
        if self.independent_questions:
            prompt = questions_prompt(self._source(run), self.max_questions)
        else:
            prompt = summarization_prompt(self._source(run), run.output, self.max_questions)
        return [system_message(ROLE), {"role": "user", "content": prompt}]

    @staticmethod
    def dimension_scores(analysis: Mapping[str, Any]) -> dict[str, float]:
        """The 0..1 alignment and coverage of a result (alignment left out when it was not judged)."""
        scores = {"alignment": analysis["alignmentScore"], "coverage": analysis["coverageScore"]}
        return {name: value for name, value in scores.items() if value is not None}

    def _score(self, parsed: Any, run: RunInput) -> tuple[float, dict[str, Any], Callable[[float], str]]:
        claims = [c.model_dump() for c in parsed.claims]
        # Mastra keeps the first max_questions questions and drops the rest (measureAxes)
        questions = [q.model_dump() for q in parsed.questions[: self.max_questions]]
        return self._combine(claims, questions)

    def _combine(
        self, claims: list[dict[str, Any]] | None, questions: list[dict[str, Any]]
    ) -> tuple[float, dict[str, Any], Callable[[float], str]]:
        """Score from the judged claims (None when not judged: no question, the second call skipped)."""
        aligned = [c for c in claims or () if c["verdict"] == "yes"]
        answered = [q for q in questions if q["answered"] == "yes"]
        alignment = None if claims is None else ratio(len(aligned), len(claims))
        coverage = ratio(len(answered), len(questions))
        raw = min(alignment or 0.0, coverage)
        analysis = {
            "claims": claims,
            "questions": questions,
            "alignmentScore": alignment,
            "coverageScore": coverage,
            "independentQuestions": self.independent_questions,
        }

        def reason(score: float) -> str:
            head = f"The score is {decimal_text(score)} out of {self.scale:g}, the lower of alignment and coverage"
            if claims is None or (claims and not questions):
                return f"{head}: the judge found no key question in the source, so the summary scores 0."
            if not claims:
                return f"{head}: the summary makes no claim, so it scores 0."
            parts = [f"alignment {alignment:.2f} ({len(aligned)} of {len(claims)} claims supported by the source"]
            unsupported = [c["claim"] for c in claims if c["verdict"] != "yes"]
            parts[0] += f"; not supported: {quote_list(unsupported)})" if unsupported else ")"
            parts.append(f"coverage {coverage:.2f} ({len(answered)} of {len(questions)} key questions answered")
            unanswered = [q["question"] for q in questions if q["answered"] != "yes"]
            parts[1] += f"; unanswered: {quote_list(unanswered)})" if unanswered else ")"
            return f"{head}: {parts[0]}; {parts[1]}."

        return raw, analysis, reason

    def run(self, payload: dict[str, Any] | RunInput) -> ScoreResult:
        """Score one summary (1 judge call, or 2 with ``independent_questions``).

        Raises:
            InvalidInputError: before any judge call, when the source or the summary is empty.
            JudgeConfigError, JudgeError subclasses: see :meth:`scorers.core.judge.Judge.complete`.
        """
        if not self.independent_questions:
            return super().run(payload)
        run = normalize_run(payload)
        self._validate(run)
        first = self.judge.complete(self._messages(run), SourceQuestions, schema_name="summarization_questions")
        texts = [q.strip() for q in first.parsed.questions if q.strip()][: self.max_questions]
        if not texts:
            return self.finish(*self._combine(None, []), first.info)
        model: type[BaseModel] = numbered_list_model(_Claims, "answers", QuestionAnswer, len(texts))
        messages = [
            system_message(ROLE),
            {"role": "user", "content": check_prompt(self._source(run), run.output, texts)},
        ]
        with spent_before(first.usage):
            second = self.judge.complete(messages, model, schema_name="summarization_check")
        claims = [c.model_dump() for c in second.parsed.claims]  # type: ignore[attr-defined]
        questions = [
            {"question": q, "answered": a.answered, "reason": a.reason}
            for q, a in zip(texts, second.parsed.answers, strict=True)
        ]  # type: ignore[attr-defined]
        raw, analysis, reason = self._combine(claims, questions)
        return self.finish(raw, analysis, reason, merge_info(first.info, second.info))


METRIC = Metric(
    id=SCORER_ID,
    name="Summarization",
    scorer=SummarizationScorer,
    params=(
        SCALE_PARAM,
        Param(
            "independent_questions",
            False,
            boolean,
            "Questions from the source alone",
            "bool",
            "Write the coverage questions in a separate first call that never sees the summary (2 calls instead of 1).",
        ),
        Param(
            "max_questions",
            MAX_QUESTIONS,
            positive_integer,
            "Most coverage questions",
            "number",
            "The judge writes at most this many key questions; extra ones are dropped (a whole number >= 1).",
        ),
        Param(
            "source",
            "",
            text(),
            "Source text",
            "text",
            "The text the summary condenses, when it is not the run's input.",
        ),
        Param("source_extractor", None, function),
    ),
    inputs=("input (source text)", "output (summary)"),
    measures="Whether the summary's claims are supported by the source (alignment) and whether it answers the "
    "source's key questions (coverage).",
    formula="round2(min(#supported claims / #claims, #answered questions / #questions (≤ max_questions, 10)) × scale); "
    "no claims or no questions → 0",
    higher_is_better=True,
    example={
        "input": [
            {
                "role": "user",
                "content": (
                    "The city council approved a 12 million euro budget for new bike lanes on Tuesday. Construction "
                    "starts in March and should finish by the end of next year. Opponents argued the money should go "
                    "to public transport instead."
                ),
            }
        ],
        "output": "The council approved 12 million euros for bike lanes, to be built from March.",
        "options": {"scale": 1},
    },
    notes=(
        "One judge call returns claims and questions with their verdicts (Mastra: 3 calls); the reason is "
        "written in code. Because the judge sees the summary while writing the questions, the prompt asks it "
        "to pick them from the source's key points; independent_questions=true removes that influence at the "
        'cost of a second call. "unsure" claims count as not supported. No claims or no questions → 0 '
        "(with independent_questions and no question, the second call is skipped). Empty source or summary "
        "→ invalid input. As in Mastra, a judge that writes more than max_questions (default 10) questions "
        "has the first max_questions kept and the rest dropped (not an invalid reply), and the source is "
        "source_extractor(run), else the source option, else the run's input. Deviation: Mastra's coverage "
        "call sees only the summary; ours judges coverage in the same call as alignment, with the source in view."
    ),
)

create_summarization_scorer = factory(
    METRIC,
    """Create the LLM-judged summarization scorer (Mastra's ``createSummarizationScorer``).

    alignment = #claims supported by the source / #claims ("unsure" counts as not supported);
    coverage = #key questions answered by the summary / #questions (at most 10);
    score = round_half_up(min(alignment, coverage) × scale, 2); no claims or no questions → 0.

    Options: ``scale`` (finite number > 0, default 1) and ``independent_questions``
    (bool, default False: one call; True: the questions come from the source alone in
    a first call, so they cannot lean on the summary, and the judge cache reuses them
    for every summary of the same source; 2 calls); ``max_questions`` (whole number
    >= 1, default 10: the first ones are kept when the judge writes more); ``source``
    (the text the summary condenses, default the run's input) and, in Python,
    ``source_extractor`` (a function of the :class:`~scorers.core.base.RunInput`
    returning the source text; it wins over ``source``).
    """,
)

SPECS = specs(METRIC)
