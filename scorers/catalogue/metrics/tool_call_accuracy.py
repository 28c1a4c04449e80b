"""Tool-call accuracy, LLM-judged: was each tool call appropriate for the request?

One judge call gets the request, the available tools (names and descriptions),
the calls the assistant made, in order, and the response; it returns one
``"yes"``/``"no"`` verdict per call, in order, and the available tools that should
have been called but were not. The code scores (Mastra: 2 calls, analysis and reason).
The code-based variant with an expected tool or order is a different scorer.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, create_model, model_validator

from scorers.catalogue.metrics._define import SCALE_PARAM, Metric, Param, factory, specs
from scorers.catalogue.metrics._llm import (
    BinaryVerdict,
    JudgedScorer,
    StrictModel,
    exactly,
    listing,
    ratio,
    require_text,
    system_message,
)
from scorers.core.base import RunInput, ToolCall, decimal_text
from scorers.core.errors import InvalidInputError
from scorers.core.judge import delimit

SCORER_ID = "tool-call-accuracy"

ROLE = (
    "You are an expert reviewer of AI agents' tool use. Given a user's request, the tools the agent "
    "could use and the calls it made, you decide for each call whether it was an appropriate step "
    "towards the request, and which available tools the agent should have called but did not."
)

# Arguments longer than this (as JSON) are cut in the prompt: the judge needs their gist only.
MAX_ARGUMENT_CHARS = 2000


@dataclass(frozen=True)
class Tool:
    """An available tool: its name and what it does."""

    name: str
    description: str = ""


def parse_tools(value: Any, name: str = "available_tools") -> tuple[Tool, ...]:
    """The available tools from an option value.

    Accepted: a list whose items are ``"name"``, ``"name: description"``,
    ``{"name": ..., "description": ...}``, a Mastra tool ``{"id": ..., "description": ...}``
    or :class:`Tool`; or a mapping
    ``{name: description}``. Names must be unique and non-empty.

    Raises:
        InvalidInputError: no tool, an item of another shape, or a duplicate name;
            ``field`` is ``options.available_tools[i]``.
    """
    if isinstance(value, Mapping):
        value = [{"name": k, "description": v} for k, v in value.items()]
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidInputError(
            f"{name} must be a list of tools ('name: description' strings or {{'name', 'description'}} "
            f"objects), got {type(value).__name__}",
            field=f"options.{name}",
        )
    tools: list[Tool] = []
    for i, item in enumerate(value):
        where = f"options.{name}[{i}]"
        if isinstance(item, Tool):
            tool = item
        elif isinstance(item, str):
            tool_name, _, description = item.partition(":")
            tool = Tool(tool_name.strip(), description.strip())
        elif isinstance(item, Mapping):
            tool_name, description = item.get("name", item.get("id")), item.get("description", "")
            if not isinstance(tool_name, str) or not isinstance(description, str):
                raise InvalidInputError(
                    "a tool needs a string 'name' and an optional string 'description'", field=where
                )
            tool = Tool(tool_name.strip(), description.strip())
        else:
            raise InvalidInputError(
                f"expected a tool name, 'name: description' or an object, got {item!r}", field=where
            )
        if not tool.name:
            raise InvalidInputError("a tool needs a non-empty name", field=where)
        if any(t.name == tool.name for t in tools):
            raise InvalidInputError(f"tool {tool.name!r} is listed twice", field=where)
        tools.append(tool)
    if not tools:
        raise InvalidInputError(
            f"{name} is required: list the tools the agent could use, e.g. "
            "['weather: current weather for a city', 'search: web search']",
            field=f"options.{name}",
        )
    return tuple(tools)


class ToolCallEvaluation(StrictModel):
    """The verdict on one tool call."""

    toolCalled: str = Field(description="The name of the tool called, exactly as listed in the calls.")
    verdict: BinaryVerdict = Field(description='"yes" if the call was appropriate for the request, else "no".')
    reasoning: str = Field(description="One sentence: why.")


class _ToolCallAnalysis(StrictModel):
    """Base of the per-run schema: the verdicts must follow the calls, in order."""

    expected_calls: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="after")
    def _follows_the_calls(self) -> _ToolCallAnalysis:
        got = tuple(e.toolCalled for e in self.evaluations)  # type: ignore[attr-defined]
        if got != self.expected_calls:
            raise ValueError(
                f"evaluations must judge the tool calls in order: expected toolCalled values "
                f"{list(self.expected_calls)}, got {list(got)}"
            )
        return self


@functools.lru_cache(maxsize=256)
def analysis_model(tool_names: tuple[str, ...], call_names: tuple[str, ...]) -> type[BaseModel]:
    """The strict schema for one run: one evaluation per call, in order; missing tools among the available ones."""
    model = create_model(
        "ToolCallAnalysis",
        __base__=_ToolCallAnalysis,
        evaluations=(
            exactly(ToolCallEvaluation, len(call_names)),
            Field(description="One verdict per tool call, in the order of the calls."),
        ),
        missingTools=(
            list[Literal[tool_names]],  # type: ignore[valid-type]
            Field(description="Available tools the request needed that were never called."),
        ),
    )
    model.expected_calls = call_names
    return model


def _arguments(call: ToolCall) -> str:
    if call.arguments is None:
        return "(no arguments)"
    text = (
        call.arguments
        if isinstance(call.arguments, str)
        else json.dumps(call.arguments, ensure_ascii=False, default=str)
    )
    return text if len(text) <= MAX_ARGUMENT_CHARS else text[:MAX_ARGUMENT_CHARS] + " …(cut)"


def tool_call_prompt(user_text: str, tools: Sequence[Tool], calls: Sequence[ToolCall], response: str) -> str:
    """The judge prompt: the request, the available tools, the calls in order and the response."""
    tool_lines = "\n".join(f"- {t.name}: {t.description}" if t.description else f"- {t.name}" for t in tools)
    call_lines = "\n".join(f"{i}. {c.name} {_arguments(c)}" for i, c in enumerate(calls, 1)) or "(no tool calls)"
    answer = f"\n\n{delimit('response', response)}" if response.strip() else ""
    return (
        f"{delimit('user_request', user_text)}\n\n{delimit('available_tools', tool_lines)}\n\n"
        f"{delimit('tool_calls', call_lines)}{answer}\n\n"
        'For each tool call, in order, give toolCalled (the name as listed), verdict "yes" if the call '
        "was an appropriate step towards the request (the right tool, with arguments that fit the request) "
        'or "no" if it was unnecessary, the wrong tool, or had arguments that do not fit, and one sentence '
        "of reasoning. A call to a tool that is not in the available tools is never appropriate. Then list "
        "in missingTools the available tools the request needed that were never called (an empty list if "
        "none)." + (" There were no tool calls: return an empty evaluations list." if not calls else "")
    )


class ToolCallAccuracyScorer(JudgedScorer):
    """LLM-judged tool-call accuracy; build it with :func:`create_tool_call_accuracy_scorer`."""

    id = SCORER_ID
    name = "Tool-call accuracy (LLM)"
    schema_name = "tool_call_accuracy"
    expected_completion_tokens = 250

    available_tools: tuple[Tool, ...]

    def _validate(self, run: RunInput) -> None:
        require_text(run.user_text, "input", "the user's request")

    def _output_model(self, run: RunInput) -> type[BaseModel]:
        return analysis_model(tuple(t.name for t in self.available_tools), tuple(c.name for c in run.tool_calls))

    def _messages(self, run: RunInput) -> list[dict[str, str]]:
        prompt = tool_call_prompt(run.user_text, self.available_tools, run.tool_calls, run.output)
        return [system_message(ROLE), {"role": "user", "content": prompt}]

    def _score(self, parsed: Any, run: RunInput) -> tuple[float, dict[str, Any], Callable[[float], str]]:
        evaluations = [e.model_dump() for e in parsed.evaluations]
        missing = list(dict.fromkeys(parsed.missingTools))
        appropriate = [e for e in evaluations if e["verdict"] == "yes"]
        if evaluations:
            raw = ratio(len(appropriate), len(evaluations))
        else:
            raw = 0.0 if missing else 1.0
        analysis = {
            "evaluations": evaluations,
            "missingTools": missing,
            "appropriateCount": len(appropriate),
            "totalCalls": len(evaluations),
            "availableTools": [{"name": t.name, "description": t.description} for t in self.available_tools],
        }

        def reason(score: float) -> str:
            head = f"The score is {decimal_text(score)} out of {self.scale:g}"
            missed = f"; tools the request needed but never called: {', '.join(missing)}" if missing else ""
            if not evaluations:
                if missing:
                    return f"{head}: no tool was called although the request needed {', '.join(missing)}."
                return f"{head}: no tool was called and none was needed."
            wrong = [f"{e['toolCalled']} ({e['reasoning'].rstrip('.')})" for e in evaluations if e["verdict"] == "no"]
            body = f"{len(appropriate)} of {len(evaluations)} tool calls were appropriate"
            body += f"; inappropriate: {listing(wrong)}" if wrong else ""
            return f"{head}: {body}{missed}."

        return raw, analysis, reason


METRIC = Metric(
    id=SCORER_ID,
    name="Tool-call accuracy (LLM)",
    scorer=ToolCallAccuracyScorer,
    params=(
        Param(
            "available_tools",
            (),
            parse_tools,
            "Available tools",
            "list",
            "Required. One tool per line as 'name: description'.",
            required=True,
        ),
        SCALE_PARAM,
    ),
    inputs=("input", "tool_calls", "output"),
    measures="Whether each tool the agent called was appropriate for the request, and which needed tools it "
    "never called.",
    formula="round2(#appropriate / #calls × scale); no calls → 0 if a needed tool was missing, else 1 × scale",
    higher_is_better=True,
    example={
        "input": [{"role": "user", "content": "What's the weather in Paris right now?"}],
        "output": "It is 18 °C and sunny in Paris.",
        "tool_calls": [
            {"name": "weather", "arguments": {"city": "Paris"}},
            {"name": "calculator", "arguments": {"expression": "2+2"}},
        ],
        "options": {
            "available_tools": [
                "weather: current weather for a city",
                "calculator: evaluates arithmetic",
                "search: web search",
            ]
        },
    },
    notes=(
        "One judge call (Mastra: 2); the reason is written in code. The judge must give exactly one verdict "
        "per call, in order, naming each call's tool, and may name only available tools as missing; anything "
        "else is invalid judge output (re-asked once). With calls, missing tools are reported but do not "
        "lower the score (Mastra's rule). No calls → the judge still decides whether a tool was needed "
        "(0 if so, else 1). Tool results are not shown to the judge; arguments over 2000 characters are cut. "
        "available_tools is required; an empty user request is invalid input."
    ),
)

create_tool_call_accuracy_scorer = factory(
    METRIC,
    """Create the LLM-judged tool-call accuracy scorer (Mastra's ``createToolCallAccuracyScorerLLM``).

    The run's tool calls come from ``tool_calls`` (or the output messages'
    ``toolInvocations`` / ``tool_calls``; see :func:`scorers.core.base.normalize_run`).

    - calls made: score = round_half_up(#appropriate / #calls × scale, 2)
      (missing tools are reported but, as in Mastra, do not lower the score);
    - no call: score = 0 if the judge names a missing tool, else scale.

    Options: ``available_tools`` (required: a list of ``"name: description"`` strings,
    ``{"name", "description"}`` objects or Mastra tools ``{"id", "description"}``, or a
    ``{name: description}`` mapping) and
    ``scale`` (finite number > 0, default 1). No available tools or a malformed tool
    is an ``InvalidInputError``.
    """,
)

SPECS = specs(METRIC)
