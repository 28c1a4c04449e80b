"""Tool-call accuracy scorer, code variant: did the response call the expected tool(s)?

Re-implements Mastra's code-based tool-call accuracy scorer (``@mastra/evals``,
``scorers/code/tool-call-accuracy``, ``createToolCallAccuracyScorerCode``). It is binary
and needs no library: the tool calls come from the run (:attr:`scorers.core.base.RunInput.tool_calls`,
read from the payload's ``tool_calls`` or the output messages' ``toolInvocations`` /
OpenAI ``tool_calls``). The LLM-judged variant is
:func:`scorers.catalogue.metrics.tool_call_accuracy.create_tool_call_accuracy_scorer`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from scorers.catalogue.metrics._code_based import check_flag, check_scale, code_scorer_spec, plural
from scorers.catalogue.spec import SCALE, OptionSpec
from scorers.core.base import RunInput, ScoreResult, normalize_run
from scorers.core.errors import InvalidInputError

SCORER_ID = "tool-call-accuracy-code"


def in_relative_order(expected: Sequence[str], actual: Sequence[str]) -> bool:
    """Whether ``expected`` is a subsequence of ``actual``: its tools appear in that order, others in between.

    >>> in_relative_order(["search", "book"], ["search", "weather", "book"])
    True
    >>> in_relative_order(["book", "search"], ["search", "book", "search"])
    True
    >>> in_relative_order(["search", "search"], ["search", "book"])
    False
    """
    calls = iter(actual)
    return all(any(call == tool for call in calls) for tool in expected)


def _expected_tool(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"expected_tool must be a tool name (a string), got {value!r}", field="expected_tool")
    return value if value.strip() else None


def _expected_order(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidInputError(
            f"expected_tool_order must be a list of tool names, got {type(value).__name__}", field="expected_tool_order"
        )
    names = []
    for i, name in enumerate(value):
        if not isinstance(name, str) or not name.strip():
            raise InvalidInputError(
                f"expected_tool_order[{i}] must be a non-empty tool name, got {name!r}",
                field=f"expected_tool_order[{i}]",
            )
        names.append(name)
    return tuple(names) or None


@dataclass(frozen=True)
class ToolCallAccuracyCodeScorer:
    """Scores 1 when the response's tool calls meet the expectation, else 0.

    Build it with :func:`create_tool_call_accuracy_code_scorer`.

    Attributes:
        expected_tool: the tool that should be called, or None.
        expected_tool_order: the tools that should be called in this order, or None.
        strict_mode: exact matching (see :meth:`run`).
        scale: the score's upper bound, a finite number > 0; scores are 0 or ``scale``.

    Raises:
        InvalidInputError: if neither or both of ``expected_tool`` and
            ``expected_tool_order`` are given, or an option has the wrong type
            (``field`` names the option).
    """

    id: ClassVar[str] = SCORER_ID
    name: ClassVar[str] = "Tool-call accuracy (code)"
    cpu_bound: ClassVar[bool] = True  # computes only: see scorers.core.base.Scorer

    expected_tool: str | None = None
    expected_tool_order: tuple[str, ...] | None = None
    strict_mode: bool = False
    scale: float = 1.0

    def __post_init__(self) -> None:
        tool = _expected_tool(self.expected_tool)
        order = _expected_order(self.expected_tool_order)
        if tool is None and order is None:
            raise InvalidInputError(
                "give the tool the response should call (expected_tool) or the tools in the order they "
                "should be called (expected_tool_order)",
                field="expected_tool",
            )
        if tool is not None and order is not None:
            raise InvalidInputError(
                "give either expected_tool or expected_tool_order, not both (for one tool in an order, "
                f"use expected_tool_order=[{tool!r}])",
                field="expected_tool_order",
            )
        object.__setattr__(self, "expected_tool", tool)
        object.__setattr__(self, "expected_tool_order", order)
        check_flag(self.strict_mode, "strict_mode")
        object.__setattr__(self, "scale", check_scale(self.scale))

    def run(self, payload: dict[str, Any] | RunInput) -> ScoreResult:
        """Score one run: 1 (× scale) if the tool calls meet the expectation, else 0.

        Rules (Mastra's code-based tool-call accuracy), with ``calls`` the names of the
        tools the response called, in order (names compare exactly, case-sensitively):

        - no tool calls → 0.
        - ``expected_tool_order``: strict → ``calls`` equals it exactly; otherwise its tools
          appear in ``calls`` in that relative order, other calls allowed in between
          (:func:`in_relative_order`).
        - ``expected_tool``: strict → exactly one call and it is that tool; otherwise that
          tool is among the calls.

        Args:
            payload: a seed-shaped run with tool calls (``tool_calls`` of the payload, or
                ``toolInvocations`` / ``tool_calls`` of the output messages; every shape
                :func:`~scorers.core.base.normalize_run` accepts) or a :class:`~scorers.core.base.RunInput`.

        Returns:
            A :class:`~scorers.core.base.ScoreResult` with score 0 or ``scale`` and
            ``analyze_step_result`` ``{"expectedTool", "expectedToolOrder", "actualTools",
            "strictMode", "hasToolCalls", "correctToolCalled", "correctOrderCalled"}``;
            ``correctToolCalled`` is False when checking an order (as in Mastra),
            ``correctOrderCalled`` None when checking a single tool; ``toolCallInfos``
            lists each call as ``{"toolName", "toolCallId", "messageIndex",
            "invocationIndex"}`` (Mastra's shape; the indexes are None for the run's
            own ``tool_calls`` list, and the id defaults to ``"<message>-<invocation>"``).

        Raises:
            InvalidInputError: if the payload is malformed (e.g. a tool call without a name).

        >>> scorer = create_tool_call_accuracy_code_scorer(expected_tool="weather")
        >>> scorer.run({"output": "It is sunny.", "tool_calls": [{"name": "weather"}]}).score
        1.0
        """
        run = normalize_run(payload)
        calls = [call.name for call in run.tool_calls]
        order = self.expected_tool_order
        tool = self.expected_tool
        correct_tool, correct_order = False, None
        if order is not None:
            correct_order = bool(calls) and (
                tuple(calls) == order if self.strict_mode else in_relative_order(order, calls)
            )
            passed = correct_order
        else:
            correct_tool = bool(calls) and (calls == [tool] if self.strict_mode else tool in calls)
            passed = correct_tool
        analysis = {
            "expectedTool": tool,
            "expectedToolOrder": list(order) if order is not None else None,
            "actualTools": calls,
            "strictMode": self.strict_mode,
            "hasToolCalls": bool(calls),
            "correctToolCalled": correct_tool,
            "correctOrderCalled": correct_order,
            "toolCallInfos": [
                {
                    "toolName": call.name,
                    "toolCallId": call.call_id or (f"{call.position[0]}-{call.position[1]}" if call.position else None),
                    "messageIndex": call.position[0] if call.position else None,
                    "invocationIndex": call.position[1] if call.position else None,
                }
                for call in run.tool_calls
            ],
        }
        return ScoreResult(
            scorer=self.id,
            score=self.scale if passed else 0.0,
            reason=self._reason(calls, passed),
            analyze_step_result=analysis,
        )

    def _reason(self, calls: list[str], passed: bool) -> str:
        made = f"the response made {plural(len(calls), 'tool call')}: {', '.join(calls)}"
        if self.expected_tool_order is not None:
            order = " → ".join(self.expected_tool_order)
            if not calls:
                return f"The response called no tool; expected {order}."
            if self.strict_mode:
                verdict = "exactly the expected sequence" if passed else "not exactly the expected sequence"
                return f"Strict mode: {made}, {verdict} {order}."
            verdict = "which include" if passed else "which do not include"
            return f"{made[0].upper()}{made[1:]}, {verdict} {order} in that order."
        tool = self.expected_tool
        if not calls:
            return f"The response called no tool; expected {tool}."
        if self.strict_mode:
            verdict = "exactly the one expected call" if passed else f"not exactly one call to {tool}"
            return f"Strict mode: {made}, {verdict}."
        verdict = f"including the expected {tool}" if passed else f"but not the expected {tool}"
        return f"{made[0].upper()}{made[1:]}, {verdict}."


def create_tool_call_accuracy_code_scorer(
    *,
    expected_tool: str | None = None,
    expected_tool_order: Sequence[str] | None = None,
    strict_mode: bool = False,
    scale: float = 1.0,
) -> ToolCallAccuracyCodeScorer:
    """Create the code-based tool-call accuracy scorer (Mastra's ``createToolCallAccuracyScorerCode``).

    Give exactly one expectation. A blank ``expected_tool`` or an empty
    ``expected_tool_order`` counts as not given; names are compared as given (not
    stripped), as in Mastra.

    Args:
        expected_tool: the tool the response should call.
        expected_tool_order: the tools the response should call, in this order.
        strict_mode: False (default): the tool is among the calls / the tools appear in
            that relative order. True: the only call is that tool / the calls are exactly
            that sequence.
        scale: the score for a pass, a finite number > 0 (default 1); a fail scores 0.

    Returns:
        A :class:`ToolCallAccuracyCodeScorer`; see :meth:`ToolCallAccuracyCodeScorer.run`.

    Raises:
        InvalidInputError: if neither or both expectations are given, a tool name is not a
            non-empty string, ``strict_mode`` is not a bool, or ``scale`` is not a finite
            number > 0 (``field`` names the option).
    """
    return ToolCallAccuracyCodeScorer(
        expected_tool=expected_tool, expected_tool_order=expected_tool_order, strict_mode=strict_mode, scale=scale
    )


SPECS = (
    code_scorer_spec(
        create=create_tool_call_accuracy_code_scorer,
        id=SCORER_ID,
        name="Tool-call accuracy (code)",
        inputs=("tool_calls",),
        measures="Whether the response called the expected tool, or the expected tools in the expected order.",
        formula=(
            "1 × scale or 0: expected tool among the calls (strict: the only call); expected order as a "
            "subsequence of the calls (strict: exactly the calls); no calls → 0"
        ),
        score_range="0 or 1",
        options=(
            SCALE,
            OptionSpec(
                "expected_tool",
                "Expected tool",
                "text",
                "",
                help="The tool the response should call (leave empty when giving an order).",
            ),
            OptionSpec(
                "expected_tool_order",
                "Expected tool order",
                "list",
                (),
                help="The tools the response should call, in order (leave empty when giving one tool).",
            ),
            OptionSpec(
                "strict_mode",
                "Strict mode",
                "bool",
                False,
                help="Tool: it must be the only call. Order: the calls must be exactly this sequence.",
            ),
        ),
        example={
            "input": [{"role": "user", "content": "Find a flight to Lisbon and book it."}],
            "output": "Your flight to Lisbon is booked.",
            "tool_calls": [
                {"name": "search_flights", "arguments": {"to": "LIS"}},
                {"name": "check_weather", "arguments": {"city": "Lisbon"}},
                {"name": "book_flight", "arguments": {"flight": "TP123"}},
            ],
            "options": {"expected_tool_order": ["search_flights", "book_flight"], "strict_mode": False},
        },
        notes=(
            "Binary. No tool calls → 0. Tool names compare exactly. Neither expectation → error when the scorer "
            "is built. Deviations from Mastra: giving both expected_tool and expected_tool_order is an error "
            "(Mastra silently ignores expected_tool); the relative order is a subsequence test, so repeated "
            "calls count (Mastra compares each tool's first call only: calls a, b, a fail the order b → a there, "
            "and an order that repeats a tool, such as search → search, can never pass); the run needs no input "
            "message (Mastra requires one). Tool names are compared as given; a partial-call invocation is not a "
            "call; correctToolCalled is false in order mode and toolCallInfos lists the calls, as in Mastra."
        ),
    ),
)
