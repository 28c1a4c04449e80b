"""Pairwise LLM judge: which of two responses to the same prompt is better, with position bias controlled.

LLM judges tend to prefer the response shown first (or second) whatever its content
(Zheng et al., "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena", 2023, §3.3).
:meth:`PairwiseJudge.compare` therefore asks twice, once with A shown first and once
with B shown first, and declares a winner only when both orders agree; when they
disagree the verdict is a tie. Each answer is a strict schema (``reasoning``, then
``choice``: ``"first" | "second" | "tie"``); both responses, the prompt and any system
message are wrapped as delimited data (:func:`scorers.core.judge.delimit`); the rubric is part of
the judge's instructions (its system message).

Not a catalogue scorer: :mod:`scorers.catalogue.registry` lists scorers whose ``run(payload)``
scores one response; a pairwise verdict needs two responses to the same prompt, so
there is no :class:`~scorers.catalogue.spec.ScorerSpec` for it. Use :func:`pairwise_over_items`
on two variants' items and :func:`win_rates` for the totals.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import Field
from scipy import stats

from scorers.catalogue.metrics._llm import StrictModel, merge_info, normalized_label, resolve_settings, system_message
from scorers.core.base import JudgeInfo, JudgeUsage, normalize_run
from scorers.core.errors import InvalidInputError, ScorerError, ScoreStatus
from scorers.core.judge import Judge, JudgeCache, JudgeSettings, delimit, spent_before
from scorers.core.workers import map_in_threads
from scorers.runs.runner import EvalItem

Winner = Literal["a", "b", "tie"]

ROLE = (
    "You are an impartial judge comparing two responses to the same prompt against a rubric. "
    "Judge only how well each response meets the rubric for this prompt: the order in which the "
    "responses are shown, their length and their style are not merits in themselves."
)


class PairwiseChoice(StrictModel):
    """The judge's answer for one order of the two responses."""

    reasoning: str = Field(description="A short comparison of the two responses against the rubric.")
    choice: normalized_label("first", "second", "tie") = Field(  # type: ignore[valid-type]
        description="Which response meets the rubric better: first, second, or tie when neither is better."
    )


@dataclass(frozen=True)
class PairwiseVerdict:
    """The verdict on one pair of responses.

    Attributes:
        winner: ``"a"``, ``"b"``, or ``"tie"`` (a tie also when the two orders disagree).
        first: the preference with A shown first, as ``"a" | "b" | "tie"``.
        second: the preference with B shown first, as ``"a" | "b" | "tie"``.
        reason: a sentence on the verdict, with the judge's reasoning.
        usage: tokens and calls of both judge calls (0 for cached replies).
        reasoning_first, reasoning_second: the judge's reasoning in each order.
        info: the judge model and parameters.
    """

    winner: Winner
    first: Winner
    second: Winner
    reason: str
    usage: JudgeUsage
    reasoning_first: str = ""
    reasoning_second: str = ""
    info: JudgeInfo | None = field(default=None, repr=False)

    @property
    def consistent(self) -> bool:
        """True when both orders gave the same preference (no position bias showed)."""
        return self.first == self.second


_AS_WINNER = {
    True: {"first": "a", "second": "b", "tie": "tie"},  # A shown first
    False: {"first": "b", "second": "a", "tie": "tie"},  # B shown first
}
_NAMES = {"a": "A", "b": "B", "tie": "neither (a tie)"}


def _prompt(prompt: str, system: str | None, shown_first: str, shown_second: str) -> str:
    parts = []
    if system:
        parts.append(f"System instructions the responses were given:\n{delimit('system_instructions', system)}")
    parts += [
        f"The prompt:\n{delimit('prompt', prompt)}",
        f"The first response:\n{delimit('response_first', shown_first)}",
        f"The second response:\n{delimit('response_second', shown_second)}",
        "Compare the two responses against the rubric. Give your reasoning, then the choice: "
        '"first" if the first response is better, "second" if the second is better, or "tie" '
        "if neither is better.",
    ]
    return "\n\n".join(parts)


class PairwiseJudge:
    """A pairwise LLM judge; build it with :func:`create_pairwise_judge_scorer`."""

    id = "pairwise-judge"
    name = "Pairwise judge"
    judge_calls_per_compare = 2
    schema_name = "pairwise_choice"

    def __init__(self, rubric: str, settings: JudgeSettings, cache: JudgeCache | None = None):
        if not isinstance(rubric, str) or not rubric.strip():
            raise InvalidInputError("the rubric is empty: say what makes a response better", field="rubric")
        self.rubric = rubric.strip()
        self.settings = settings
        self.cache = cache
        self._judge: Judge | None = None
        self._lock = threading.Lock()

    @property
    def judge(self) -> Judge:
        """The judge client, created on first use."""
        with self._lock:
            if self._judge is None:
                self._judge = Judge(self.settings, self.cache)
            return self._judge

    def render_prompts(
        self, prompt: str, response_a: str, response_b: str, *, system: str | None = None
    ) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
        """The two judge conversations: A shown first, then B shown first.

        Raises:
            InvalidInputError: the prompt or a response is empty.
        """
        for value, where in ((prompt, "prompt"), (response_a, "response_a"), (response_b, "response_b")):
            if not isinstance(value, str) or not value.strip():
                raise InvalidInputError(f"the {where.replace('_', ' ')} is empty", field=where)
        head = system_message(f"{ROLE}\n\nThe rubric:\n{self.rubric}\n\n")
        return (
            [head, {"role": "user", "content": _prompt(prompt, system, response_a, response_b)}],
            [head, {"role": "user", "content": _prompt(prompt, system, response_b, response_a)}],
        )

    def compare(self, prompt: str, response_a: str, response_b: str, *, system: str | None = None) -> PairwiseVerdict:
        """Judge which response is better, asking in both orders.

        Args:
            prompt: the user's prompt both responses answer.
            response_a, response_b: the two responses.
            system: the system message the responses were given, or None.

        Returns:
            The :class:`PairwiseVerdict`: ``winner`` is the preference both orders share,
            else ``"tie"``.

        Raises:
            InvalidInputError: the prompt or a response is empty (before any call).
            JudgeConfigError, JudgeError subclasses: see :meth:`scorers.core.judge.Judge.complete`.
        """
        order_ab, order_ba = self.render_prompts(prompt, response_a, response_b, system=system)
        reply_ab = self.judge.complete(order_ab, PairwiseChoice, schema_name=self.schema_name)
        with spent_before(reply_ab.usage):
            reply_ba = self.judge.complete(order_ba, PairwiseChoice, schema_name=self.schema_name)
        first = _AS_WINNER[True][reply_ab.parsed.choice]
        second = _AS_WINNER[False][reply_ba.parsed.choice]
        reasoning_ab, reasoning_ba = reply_ab.parsed.reasoning.strip(), reply_ba.parsed.reasoning.strip()
        if first == second:
            winner: Winner = first
            if winner == "tie":
                reason = f"Both orders judged the responses equally good. {reasoning_ab}"
            else:
                reason = f"{_NAMES[winner]} is better in both orders. {reasoning_ab}"
        else:
            winner = "tie"
            reason = (
                f"The judge's preference changed with the order (A shown first: {_NAMES[first]}; "
                f"B shown first: {_NAMES[second]}), so the verdict is a tie: position bias, not the "
                "content, decided at least one of the answers."
            )
        info = merge_info(reply_ab.info, reply_ba.info)
        return PairwiseVerdict(
            winner, first, second, reason.strip(), reply_ab.usage + reply_ba.usage, reasoning_ab, reasoning_ba, info
        )


def create_pairwise_judge_scorer(
    rubric: str,
    *,
    model: str | None = None,
    settings: JudgeSettings | None = None,
    cache: JudgeCache | None = None,
) -> PairwiseJudge:
    """A pairwise LLM judge that compares two responses to the same prompt against ``rubric``.

    Args:
        rubric: what makes a response better (e.g. "Correct, complete and concise.").
        model: the judge model; overrides ``settings.model``.
        settings: judge settings (default: resolved from secrets and the environment).
        cache: a judge-reply cache (e.g. :class:`scorers.runs.store.Store`).

    Returns:
        A :class:`PairwiseJudge`; call :meth:`PairwiseJudge.compare`.

    Raises:
        InvalidInputError: an empty rubric.
    """
    return PairwiseJudge(rubric, resolve_settings(model, settings), cache)


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (Wilson, JASA 1927; Agresti & Coull 1998).

    ``p̂ = k/n``, ``z`` the normal quantile at ``(1 + confidence)/2``;
    centre ``(p̂ + z²/2n) / (1 + z²/n)``, half-width ``z·√(p̂(1−p̂)/n + z²/4n²) / (1 + z²/n)``.
    Unlike the normal approximation it stays within [0, 1] and is not empty at k = 0 or k = n.

    Returns:
        ``(low, high)``; ``(nan, nan)`` when ``n`` is 0.

    >>> tuple(round(x, 4) for x in wilson_interval(0, 10))
    (0.0, 0.2775)
    """
    if n <= 0:
        return float("nan"), float("nan")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, {n}], got {successes}")
    z = float(stats.norm.ppf((1 + confidence) / 2))
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class PairwiseOutcome:
    """One pair of :func:`pairwise_over_items`: its verdict, or why there is none."""

    row_id: str
    status: ScoreStatus
    verdict: PairwiseVerdict | None = None
    error: str | None = None


def win_rates(verdicts: Iterable[PairwiseVerdict | PairwiseOutcome], *, confidence: float = 0.95) -> dict[str, Any]:
    """Win, loss and tie rates of A against B, with Wilson intervals.

    Args:
        verdicts: :class:`PairwiseVerdict` s, or :class:`PairwiseOutcome` s (those without a
            verdict are counted in ``n_failed``, not in the rates).
        confidence: the intervals' confidence.

    Returns:
        ``{"n", "n_failed", "a_wins", "b_wins", "ties", "a_win_rate", "b_win_rate", "tie_rate",
        "a_win_rate_ci", "b_win_rate_ci", "tie_rate_ci", "consistency"}``: the rates are shares
        of ``n`` (NaN when n is 0), each ``*_ci`` a ``(low, high)`` :func:`wilson_interval`,
        ``consistency`` the share of pairs whose two orders agreed.
    """
    judged: list[PairwiseVerdict] = []
    failed = 0
    for v in verdicts:
        if isinstance(v, PairwiseOutcome):
            if v.verdict is None:
                failed += 1
                continue
            v = v.verdict
        judged.append(v)
    n = len(judged)
    counts = {w: sum(v.winner == w for v in judged) for w in ("a", "b", "tie")}

    def rate(k: int) -> float:
        return k / n if n else float("nan")

    return {
        "n": n,
        "n_failed": failed,
        "a_wins": counts["a"],
        "b_wins": counts["b"],
        "ties": counts["tie"],
        "a_win_rate": rate(counts["a"]),
        "b_win_rate": rate(counts["b"]),
        "tie_rate": rate(counts["tie"]),
        "a_win_rate_ci": wilson_interval(counts["a"], n, confidence=confidence),
        "b_win_rate_ci": wilson_interval(counts["b"], n, confidence=confidence),
        "tie_rate_ci": wilson_interval(counts["tie"], n, confidence=confidence),
        "consistency": rate(sum(v.consistent for v in judged)),
    }


def _by_row(items: Sequence[EvalItem], key: str, which: str) -> dict[str, EvalItem]:
    out: dict[str, EvalItem] = {}
    for item in items:
        row_id = item.groups.get(key)
        if row_id is None:
            raise InvalidInputError(f"item {item.item_id!r} has no {key!r} group to pair it by", field=which)
        if str(row_id) in out:
            raise InvalidInputError(f"two items of {which} have {key} {row_id!r}", field=which)
        out[str(row_id)] = item
    return out


def pairwise_over_items(
    items_a: Sequence[EvalItem],
    items_b: Sequence[EvalItem],
    judge: PairwiseJudge,
    *,
    pair_key: str = "row_id",
    concurrency: int = 4,
    cancel: threading.Event | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[PairwiseOutcome]:
    """Judge every pair of two variants' items (e.g. from :func:`scorers.analysis.generate.comparison_items`).

    Items are paired by their ``pair_key`` group (the dataset row); rows that only one
    variant has are skipped. The prompt and system message are read from A's item (both
    answer the same question). A failed judgement (invalid input, a judge error) is
    recorded with its status, never dropped.

    Args:
        items_a, items_b: the two variants' items.
        judge: the pairwise judge.
        pair_key: the group both variants' items share per row.
        concurrency: pairs judged at once (each pair makes two calls), >= 1.
        cancel: set it to stop: pairs not started are absent from the result.
        on_progress: called as ``(done, total)`` after each pair, from a worker thread.

    Returns:
        One :class:`PairwiseOutcome` per pair, in the order of ``items_a``.

    Raises:
        InvalidInputError: an item lacks the ``pair_key`` group, or a variant has two items for one row.
        ValueError: ``concurrency`` < 1.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    by_a, by_b = _by_row(items_a, pair_key, "items_a"), _by_row(items_b, pair_key, "items_b")
    rows = [r for r in by_a if r in by_b]

    def one(row_id: str) -> PairwiseOutcome:
        try:
            run_a = normalize_run(by_a[row_id].payload)
            run_b = normalize_run(by_b[row_id].payload)
            verdict = judge.compare(run_a.user_text, run_a.output, run_b.output, system=run_a.system_text or None)
            return PairwiseOutcome(row_id, ScoreStatus.SCORED, verdict)
        except ScorerError as exc:
            return PairwiseOutcome(row_id, exc.status, None, str(exc))

    return map_in_threads(
        one, rows, concurrency=concurrency, cancel=cancel, on_progress=on_progress, thread_name_prefix="pairwise"
    )


__all__ = [
    "PairwiseChoice",
    "PairwiseJudge",
    "PairwiseOutcome",
    "PairwiseVerdict",
    "create_pairwise_judge_scorer",
    "pairwise_over_items",
    "wilson_interval",
    "win_rates",
]
