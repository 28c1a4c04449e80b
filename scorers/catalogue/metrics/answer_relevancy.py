"""Answer relevancy (LLM judge): how much of the response is relevant to the user's question.

One judge call splits the response into statements and gives each a verdict
(``"yes"`` relevant, ``"unsure"`` partly relevant or unclear, ``"no"``
irrelevant); the code counts the verdicts, computes the score and writes the
reason. Mastra makes three calls for this (statements, verdicts, reason).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field

from scorers.catalogue.metrics._define import SCALE_PARAM, Metric, Param, factory, specs
from scorers.catalogue.metrics._llm import (
    JudgedScorer,
    StrictModel,
    Verdict,
    VerdictReason,
    number,
    require_text,
    system_message,
    verdict_shares,
)
from scorers.core.base import RunInput
from scorers.core.judge import delimit

SCORER_ID = "answer-relevancy"
DEFAULT_UNCERTAINTY_WEIGHT = 0.3


class StatementVerdict(StrictModel):
    """One statement of the response and whether it is relevant to the question."""

    statement: str = Field(description="One statement of the response, quoted or closely paraphrased.")
    verdict: Verdict = Field(description='"yes" relevant, "unsure" partly relevant or unclear, "no" irrelevant.')
    reason: str = Field(description="One short sentence justifying the verdict.")


class AnswerRelevancyAnalysis(StrictModel):
    """The judge's answer: the response's statements, in order, each with a verdict."""

    statements: list[StatementVerdict]


INSTRUCTIONS = (
    "You evaluate whether an AI assistant's response stays relevant to the question it was asked. "
    "You break the response into its statements and decide, for each one, whether it helps answer "
    "the question. You are strict, consistent and brief."
)


def judge_prompt(question: str, response: str) -> str:
    """The user message of the judge call."""
    return (
        "Break the response into its statements: every self-contained claim, fact, instruction, "
        "recommendation or opinion is one statement; headings, bullet markers and other formatting "
        "are not statements. Keep the order of the response.\n\n"
        "Then give each statement a verdict on its relevance to the question:\n"
        '- "yes": it helps answer the question, directly or as context the answer needs;\n'
        '- "unsure": it is loosely related, tangential or generic, so it is unclear whether it helps;\n'
        '- "no": it does not help answer the question (off topic, filler, about something else).\n'
        "Add a one-sentence reason to every verdict. If the response contains no statement at all, "
        "return an empty list.\n\n"
        f"{delimit('question', question)}\n\n{delimit('response', response)}"
    )


def answer_relevancy_value(counts: Mapping[str, int], uncertainty_weight: float) -> float:
    """(#yes + uncertainty_weight·#unsure) / n in [0, 1]; 0 when there are no statements.

    >>> answer_relevancy_value({"yes": 2, "unsure": 1, "no": 1}, 0.3)
    0.575
    """
    n = sum(counts.values())
    return (counts.get("yes", 0) + uncertainty_weight * counts.get("unsure", 0)) / n if n else 0.0


compose_reason = VerdictReason(
    noun="statement",
    empty="the judge found no statements in the response, so nothing in it answers the question "
    "(a response without statements scores 0).",
    tally=lambda a: f"relevant to the question, {a['counts']['unsure']} partly relevant "
    f"(counted {a['uncertaintyWeight']:g} each) and {a['counts']['no']} irrelevant",
    labels=(("no", "Irrelevant"), ("unsure", "Partly relevant")),
)
"""The reason, written from the verdicts (no judge call): ``compose_reason(analysis, score)``."""


class AnswerRelevancyScorer(JudgedScorer):
    """Scores how relevant the response is to the question; build it with :func:`create_answer_relevancy_scorer`."""

    id = SCORER_ID
    name = "Answer relevancy"
    output_model = AnswerRelevancyAnalysis
    schema_name = "answer_relevancy"
    expected_completion_tokens = 400

    uncertainty_weight: float

    def _validate(self, run: RunInput) -> None:
        require_text(run.user_text, "input", "the user's question (the input's user messages)")
        require_text(run.output, "output", "the response to evaluate")

    def _messages(self, run: RunInput) -> list[dict[str, str]]:
        return [system_message(INSTRUCTIONS), {"role": "user", "content": judge_prompt(run.user_text, run.output)}]

    def _score(self, parsed: Any, run: RunInput) -> tuple[float, dict[str, Any], Any]:
        statements = [s.model_dump() for s in parsed.statements]
        counts = {v: sum(s["verdict"] == v for s in statements) for v in ("yes", "unsure", "no")}
        value = answer_relevancy_value(counts, self.uncertainty_weight)
        analysis = {"statements": statements, "counts": counts, "uncertaintyWeight": self.uncertainty_weight}
        return value, analysis, lambda score: compose_reason({**analysis, "scale": self.scale}, score)

    @staticmethod
    def dimension_scores(analysis: Mapping[str, Any]) -> dict[str, float]:
        """Shares of relevant, partly relevant and irrelevant statements (none when there are no statements)."""
        return verdict_shares(
            analysis, "statement", {"yes": "relevant", "unsure": "partlyRelevant", "no": "irrelevant"}
        )


METRIC = Metric(
    id=SCORER_ID,
    name="Answer relevancy",
    scorer=AnswerRelevancyScorer,
    params=(
        SCALE_PARAM,
        Param(
            "uncertainty_weight",
            DEFAULT_UNCERTAINTY_WEIGHT,
            number(minimum=0, maximum=1),
            "Uncertainty weight",
            "number",
            "Credit of a statement judged 'unsure' (partly relevant), in [0, 1].",
        ),
    ),
    inputs=("input", "output"),
    measures="How much of the response is relevant to the user's question, statement by statement.",
    formula="(#yes + uncertainty_weight·#unsure) / #statements; no statements → 0; round half up to 2 decimals, × scale",
    higher_is_better=True,
    example={
        "input": [{"role": "user", "content": "How do I reverse a list in Python?"}],
        "output": "Use my_list.reverse() to reverse in place, or my_list[::-1] for a reversed copy. "
        "Python was created by Guido van Rossum.",
    },
    notes=(
        "One judge call returns the statements with their verdicts (Mastra: 3 calls); the reason is written "
        "in code from the verdicts. Verdicts are yes/no/unsure, compared after trimming and lower-casing; "
        "any other label is invalid judge output (re-asked once). No statements → 0. uncertainty_weight "
        "keeps its 0.3 default when only scale is given (Mastra drops it then). An empty response or a run "
        "without a user message is invalid input, not a 0."
    ),
)

create_answer_relevancy_scorer = factory(
    METRIC,
    """Create the LLM-judged answer-relevancy scorer (Mastra's ``createAnswerRelevancyScorer``).

    One judge call splits the response into statements and judges each against the
    user's question; the code scores:
    ``round_half_up((#yes + uncertainty_weight·#unsure) / #statements × scale, 2)``,
    0 when the response has no statements. The run needs a user message and a
    non-empty response.

    Options: ``scale`` (finite number > 0, default 1) and ``uncertainty_weight``
    (credit of an "unsure" statement, in [0, 1], default 0.3, also when only
    ``scale`` is given).
    """,
)

SPECS = specs(METRIC)
