"""Context precision (LLM judge): are the relevant context pieces ranked first? (mean average precision)

One judge call gives a relevance verdict for every context piece, in order;
the code computes the mean average precision and writes the reason. Mastra
makes two calls for this (verdicts, reason).

The context is the run's ``context``, else the scorer's ``context`` option.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic import Field

from scorers.catalogue.metrics._define import CONTEXT_PARAM, SCALE_PARAM, Metric, Param, factory, specs
from scorers.catalogue.metrics._llm import (
    BinaryVerdict,
    Context,
    JudgedScorer,
    StrictModel,
    delimit_pieces,
    function,
    numbered_list_model,
    require_text,
    resolve_context,
    system_message,
)
from scorers.core.base import RunInput, decimal_text
from scorers.core.errors import MissingInputError
from scorers.core.judge import delimit

SCORER_ID = "context-precision"


class PieceVerdict(StrictModel):
    """Whether one context piece is relevant."""

    index: int = Field(description="The piece's number: 1 for <context_1>, 2 for <context_2> ...")
    verdict: BinaryVerdict = Field(description='"yes" the piece is useful for answering the question, "no" it is not.')
    reason: str = Field(description="One short sentence justifying the verdict.")


class ContextPrecisionAnalysis(StrictModel):
    """The judge's answer: one verdict per context piece, numbered 1..n in order (built per piece count)."""


@functools.lru_cache(maxsize=128)
def analysis_model(n: int) -> type[StrictModel]:
    """The schema for ``n`` context pieces: ``verdicts`` with exactly n entries numbered 1..n."""
    return numbered_list_model(ContextPrecisionAnalysis, "verdicts", PieceVerdict, n)


INSTRUCTIONS = (
    "You evaluate retrieved context for a question-answering system: for each context piece, whether it "
    "is useful for answering the question. You judge every piece on its own and you are strict and consistent."
)


def judge_prompt(question: str, pieces: tuple[str, ...], response: str) -> str:
    """The user message of the judge call."""
    return (
        f"There are {len(pieces)} context pieces, <context_1> to <context_{len(pieces)}>. For each piece, in "
        "order, decide whether it is useful for answering the question, as the response answers it:\n"
        '- "yes": it contains information that helps arrive at the answer;\n'
        '- "no": it does not (off topic, or related but of no use for this answer).\n'
        "Give exactly one entry per piece with its number (index), the verdict and a one-sentence reason.\n\n"
        f"{delimit('question', question)}\n\n{delimit_pieces(pieces)}\n\n{delimit('response', response)}"
    )


def mean_average_precision(relevant: Sequence[bool]) -> float:
    """Σ over relevant positions i (0-based) of (relevant pieces up to i) / (i + 1), divided by #relevant.

    0 when no piece is relevant.

    >>> round(mean_average_precision([True, False, True]), 4)  # (1/1 + 2/3) / 2
    0.8333
    """
    hits = 0
    terms = []
    for i, is_relevant in enumerate(relevant):
        if is_relevant:
            hits += 1
            terms.append(hits / (i + 1))
    return math.fsum(terms) / hits if hits else 0.0


def compose_reason(analysis: Mapping[str, Any], score: float) -> str:
    """The reason, written from the verdicts (no judge call); it quotes ``score``."""
    verdicts = analysis["verdicts"]
    n = len(verdicts)
    relevant = [v["index"] for v in verdicts if v["verdict"] == "yes"]
    head = f"The score is {decimal_text(score)} out of {analysis['scale']:g}"
    if not relevant:
        return f"{head}: none of the {n} context pieces is relevant to the question, so the precision is 0."
    where = ", ".join(str(i) for i in relevant)
    text = (
        f"{head} (mean average precision): {len(relevant)} of {n} context piece{'s' if n != 1 else ''} "
        f"{'is' if len(relevant) == 1 else 'are'} relevant, at position{'s' if len(relevant) != 1 else ''} {where}"
    )
    irrelevant = [v for v in verdicts if v["verdict"] == "no"]
    if not irrelevant:
        return text + "; every piece is relevant."
    first_miss = irrelevant[0]
    return (
        text + f". Irrelevant pieces ranked before relevant ones lower the score; piece {first_miss['index']} "
        f"is irrelevant: {first_miss['reason'].strip()}"
    )


class ContextPrecisionScorer(JudgedScorer):
    """Scores the ranking of relevant context pieces; build it with :func:`create_context_precision_scorer`."""

    id = SCORER_ID
    name = "Context precision"
    output_model = ContextPrecisionAnalysis
    schema_name = "context_precision"
    expected_completion_tokens = 300

    context: tuple[str, ...]
    context_extractor: Callable[[RunInput], Sequence[str]] | None

    def _pieces(self, run: RunInput) -> tuple[str, ...]:
        return self._context(run).pieces

    def _context(self, run: RunInput) -> Context:
        return resolve_context(run, self.context, tool_results=False, extractor=self.context_extractor)

    def _validate(self, run: RunInput) -> None:
        require_text(run.user_text, "input", "the user's question (the input's user messages)")
        require_text(run.output, "output", "the response to evaluate")
        if not self._pieces(run):
            raise MissingInputError(
                "context precision ranks the run's context pieces, but the run has none: give the run a "
                "context (a list of passages, in retrieval order) or set the scorer's context option",
                field="context",
            )

    def _output_model(self, run: RunInput) -> type[StrictModel]:
        return analysis_model(len(self._pieces(run)))

    def _messages(self, run: RunInput) -> list[dict[str, str]]:
        prompt = judge_prompt(run.user_text, self._pieces(run), run.output)
        return [system_message(INSTRUCTIONS), {"role": "user", "content": prompt}]

    def _score(self, parsed: Any, run: RunInput) -> tuple[float, dict[str, Any], Any]:
        context = self._context(run)
        verdicts = [v.model_dump() for v in parsed.verdicts]
        relevant = [v["verdict"] == "yes" for v in verdicts]
        value = mean_average_precision(relevant)
        analysis = {"verdicts": verdicts, "relevantCount": sum(relevant), "contextSource": context.source}
        return value, analysis, lambda score: compose_reason({**analysis, "scale": self.scale}, score)

    @staticmethod
    def dimension_scores(analysis: Mapping[str, Any]) -> dict[str, float]:
        """The share of relevant context pieces (regardless of their rank)."""
        return {"relevantShare": analysis["relevantCount"] / len(analysis["verdicts"])}


METRIC = Metric(
    id=SCORER_ID,
    name="Context precision",
    scorer=ContextPrecisionScorer,
    params=(SCALE_PARAM, CONTEXT_PARAM, Param("context_extractor", None, function)),
    inputs=("input", "output", "context"),
    measures="Whether the context pieces relevant to the question are ranked before the irrelevant ones.",
    formula=(
        "mean average precision: Σ over relevant pieces i of (relevant so far / (i+1)) / #relevant; "
        "none relevant → 0; round half up to 2 decimals, × scale"
    ),
    higher_is_better=True,
    example={
        "input": [{"role": "user", "content": "How tall is the Eiffel Tower?"}],
        "output": "The Eiffel Tower is 330 metres tall.",
        "context": [
            "Paris hosts many museums, such as the Louvre.",
            "The Eiffel Tower is 330 metres tall since a new antenna was added in 2022.",
            "The tower was designed by Gustave Eiffel's company.",
        ],
    },
    notes=(
        "One judge call returns a yes/no verdict per context piece (Mastra: 2 calls); the reason is written "
        "in code. The reply must give exactly one verdict per piece, numbered 1..n in order, or it is invalid "
        "judge output (re-asked once). Verdicts compared after trimming and lower-casing, as in Mastra. "
        "Deviation: any label but yes/no (such as idk) is invalid judge output, where Mastra counts it as not "
        "relevant, so a reply of all idk verdicts scores 0 there and is re-asked here; "
        "our structured output constrains the labels, so this differs from Mastra only when the judge falls back to JSON mode. No context (context extractor, run or "
        "context option) is invalid input, as in Mastra; tool results do not count as context here. "
        "No relevant piece → 0. An empty question or response is invalid input."
    ),
)

create_context_precision_scorer = factory(
    METRIC,
    """Create the LLM-judged context-precision scorer (Mastra's ``createContextPrecisionScorer``).

    One judge call gives a relevance verdict per context piece, in retrieval order;
    the code scores the mean average precision
    ``Σ_{relevant i} (relevant up to i / (i + 1)) / #relevant`` (0 when none is
    relevant), ``round_half_up(MAP × scale, 2)``. The run needs a user question, a
    response and context.

    Options: ``scale`` (finite number > 0, default 1) and ``context`` (passages,
    in retrieval order, for runs without context of their own); in Python,
    ``context_extractor`` (Mastra's ``contextExtractor``: a function of the
    :class:`~scorers.core.base.RunInput` returning the passages; it wins over the rest).
    """,
)

SPECS = specs(METRIC)
