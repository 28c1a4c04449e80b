"""Prompt templates of the prompt-alignment judge. Our own wording, not Mastra's."""

from __future__ import annotations

import json
from collections.abc import Sequence

from scorers.core.base import Message, decimal_text, turn_text
from scorers.core.judge import DATA_NOTICE, delimit

INSTRUCTIONS = (
    "You are a meticulous evaluator of AI assistant responses. You judge how well a response "
    "aligns with the instructions it was given: whether it addresses the intent, fulfils every "
    "requirement, is complete, and has the requested format and tone. You are strict and fair, "
    "you quote concrete evidence in your reasoning, and you score each dimension from 0 to 1. " + DATA_NOTICE
)

_DIMENSIONS = {
    "user": (
        "- intentAlignment: does the response address the user's primary intent?\n"
        "- requirementsFulfillment: list every explicit or clearly implied requirement of the user "
        "prompt (format, length, language, content, constraints), say for each whether it is "
        "fulfilled, and give overallScore = the share of requirements fulfilled, adjusted for how "
        "important they are.\n"
        "- completeness: is the response detailed and complete enough for the user's needs? List "
        "missing elements.\n"
        "- responseAppropriateness: do format and tone match what the user expects?"
    ),
    "system": (
        "- intentAlignment: does the response follow the system's behavioural guidelines?\n"
        "- requirementsFulfillment: list every constraint of the system instructions, say for each "
        "whether the response respects it, and give overallScore = the share respected, adjusted "
        "for importance.\n"
        "- completeness: does the response follow all of the system's rules? List rules it ignores "
        "as missing elements.\n"
        "- responseAppropriateness: do format and tone match the system's specification?"
    ),
}


def _turns(messages: Sequence[Message]) -> str:
    """Turns in order, each in its own tag (``<user>``, ``<assistant>``, ``<tool>``) as it is shown in History and
    Review (:func:`~scorers.core.base.turn_text`: tool calls and results named)."""
    return "\n".join(
        delimit(m.role if m.role in ("user", "assistant", "tool") else "message", turn_text(m.as_turn()))
        for m in messages
    )


def history_block(history: Sequence[Message]) -> str:
    """The turns of a conversation before the final user prompt, in order, inside ``<conversation_history>``:
    context for the judge, delimited as data."""
    return (
        "The conversation so far, in order (context only: the response answers the final user prompt below):\n"
        + delimit("conversation_history", _turns(history))
    )


def after_prompt_block(after: Sequence[Message]) -> str:
    """The turns between the final user prompt and the response (the assistant's tool calls, the tools' results,
    its earlier messages), in order, inside ``<after_user_prompt>``, followed by a blank line; "" when there are
    none: context for the judge, delimited as data, never the user's request."""
    if not after:
        return ""
    return (
        "What happened after the user prompt, before the response, in order (context only: tool calls, tool "
        "results and earlier assistant messages, not the user's request):\n"
        + delimit("after_user_prompt", _turns(after))
        + "\n\n"
    )


def user_mode_prompt(user_text: str, response: str, after: str = "") -> str:
    """Judge prompt for user mode: the dimensions against the user prompt only (``after``: the turns after the
    prompt, :func:`after_prompt_block`)."""
    return (
        "Evaluate the response against the user prompt only.\n\n"
        f"{delimit('user_prompt', user_text)}\n\n{after}{delimit('response', response)}\n\n"
        f"Score these dimensions against the user prompt:\n{_DIMENSIONS['user']}\n"
        "Finish with overallAssessment: two or three sentences."
    )


def system_mode_prompt(system_text: str, user_text: str, response: str, after: str = "") -> str:
    """Judge prompt for system mode: the dimensions against the system messages only (``after``: the turns after
    the prompt, :func:`after_prompt_block`)."""
    context = f"{delimit('user_prompt', user_text)}\n\n" if user_text.strip() else ""
    return (
        "Evaluate the response against the system instructions only. The user prompt is given "
        "for context; do not score the response against it.\n\n"
        f"{delimit('system_instructions', system_text)}\n\n{context}{after}{delimit('response', response)}\n\n"
        f"Score these dimensions against the system instructions:\n{_DIMENSIONS['system']}\n"
        "Finish with overallAssessment: two or three sentences."
    )


def both_mode_prompt(system_text: str, user_text: str, response: str, after: str = "") -> str:
    """Judge prompt for both mode: two separate dimension sets in one call (``after``: the turns after the
    prompt, :func:`after_prompt_block`)."""
    return (
        "Evaluate the response twice, separately: once against the user prompt (the `user` "
        "object) and once against the system instructions (the `system` object). A breach of a "
        "system rule lowers the `system` scores, not the `user` scores, and the other way round.\n\n"
        f"{delimit('system_instructions', system_text)}\n\n{delimit('user_prompt', user_text)}\n\n"
        f"{after}{delimit('response', response)}\n\n"
        f"For `user`, score against the user prompt:\n{_DIMENSIONS['user']}\n\n"
        f"For `system`, score against the system instructions:\n{_DIMENSIONS['system']}\n\n"
        "Finish with overallAssessment: two or three sentences covering both."
    )


def reason_prompt(score: float, scale: float, analysis: dict) -> str:
    """Prompt for the optional judge-written reason; the score is given, never re-judged, and written as the
    composed reason and the score tile write it (:func:`scorers.core.base.decimal_text`: 0.800, never 0.8)."""
    shown = decimal_text(score)
    return (
        f"A response was scored {shown} out of {scale:g} for prompt alignment from this analysis:\n"
        f"{delimit('analysis', json.dumps(analysis, ensure_ascii=False, indent=1))}\n\n"
        f'Explain the score in two or three sentences. Start with "The score is {shown} because". '
        "Name the most important fulfilled and unfulfilled requirements. Do not change the score."
    )
