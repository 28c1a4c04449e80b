"""From form fields to a scorer call: the payload, the scorer, and the outcome of one run."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from scorers import InvalidInputError, JudgeSettings, ScorerError, ScoreResult, ScoreStatus, Store, create_scorer
from scorers.runs.datasets import conversation_run, conversation_turns

_SEPARATOR = re.compile(r"^[ \t]*---[ \t]*$", flags=re.MULTILINE)


def split_system_messages(text: str) -> list[str]:
    """Split a text area into system messages at lines that hold only ``---``.

    Args:
        text: the system text; surrounding whitespace of each part is dropped.

    Returns:
        The non-blank parts, in order (``[]`` for a blank text).

    >>> split_system_messages("Be brief.\\n---\\nAnswer in French.")
    ['Be brief.', 'Answer in French.']
    """
    return [part.strip() for part in _SEPARATOR.split(text) if part.strip()]


def build_payload(
    *,
    system: str,
    prompt: str,
    response: str,
    ground_truth: str,
    context: str = "",
    tool_calls: str = "",
    conversation: str = "",
) -> dict[str, Any]:
    """The seed-shaped run payload for the Evaluate form.

    Blank fields count as not given: a blank prompt sends no user message and a
    blank ground truth sends ``None``. The response is sent as typed (a scorer
    that needs it rejects a blank one).

    Args:
        system: system message(s), several separated by a line with ``---``.
        prompt: the user prompt.
        response: the response to evaluate.
        ground_truth: the reference answer, or "".
        context: context passages, several separated by a line with ``---``; "" for none.
        tool_calls: the assistant's tool calls as a JSON list (``[{"name", "arguments"}]``); "" for none.
        conversation: a whole conversation as OpenAI messages JSON (``[{"role", "content"}, ...]``);
            "" for none. Read as the CLI and the Batch page read a messages cell
            (:func:`scorers.runs.datasets.conversation_run`): text that is not a JSON list of messages is the
            prompt's text (:func:`conversation_reading` says which). Its turns replace the user prompt (the system
            messages are added); when the response is blank, the conversation's final message is the response if
            it is the assistant's, else the run has no output (``missing_input``: an earlier exchange is never
            scored in its place).

    Returns:
        ``{"input": {"inputMessages": [...], "systemMessages": [...]}, "output": {"text": ...},
        "ground_truth": str | None, "context"?: [str], "tool_calls"?: [...]}``.

    Raises:
        InvalidInputError: the tool calls are not a JSON list (field ``tool_calls``, with the
            JSON error's line and column).
    """
    payload: dict[str, Any] = {
        "input": {
            "inputMessages": [{"role": "user", "content": prompt}] if prompt.strip() else [],
            "systemMessages": [{"role": "system", "content": m} for m in split_system_messages(system)],
        },
        "output": {"text": response},
        "ground_truth": ground_truth if ground_truth.strip() else None,
    }
    if conversation.strip():
        # Read as the CLI and the Batch page read a messages cell: a list of messages, else the prompt's text.
        system_messages = [m["content"] for m in payload["input"]["systemMessages"]]
        payload.pop("output")
        payload |= conversation_run(conversation, response if response.strip() else None, system_messages)
    if context.strip():
        payload["context"] = split_system_messages(context)
    if tool_calls.strip():
        calls = _json_value(tool_calls, "tool_calls")
        if not isinstance(calls, list):
            raise InvalidInputError(
                'expected a JSON list such as [{"name": "search", "arguments": {}}]', field="tool_calls"
            )
        payload["tool_calls"] = calls
    return payload


def conversation_reading(conversation: str) -> str:
    """What the Evaluate form reads its conversation field as (:func:`build_payload`), said under the field:
    a conversation of so many messages, or, for text that is not a JSON list of messages, the user prompt.

    >>> conversation_reading('[{"role": "user", "content": "Hi"}]')
    'Read as a conversation of 1 message (it replaces the user prompt).'
    >>> conversation_reading("Give me a haiku")
    "Read as the user prompt's text: it is not a JSON list of messages (as the Batch page and the CLI read such a cell); it replaces the User prompt field."
    """
    turns = conversation_turns(conversation)
    if turns is None:
        return (
            "Read as the user prompt's text: it is not a JSON list of messages (as the Batch page and the CLI read "
            "such a cell); it replaces the User prompt field."
        )
    if not turns:
        return "Read as an empty conversation: no prompt, and no response unless the Response field holds one."
    return (
        f"Read as a conversation of {len(turns)} message{'' if len(turns) == 1 else 's'} (it replaces the user prompt)."
    )


def _json_value(text: str, field: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", field=field
        ) from None


@dataclass(frozen=True)
class RunFailure:
    """A run that was not scored (SPEC §3): why, and the judge's reply when there was one."""

    message: str
    status: ScoreStatus
    raw_reply: str | None = None


def evaluate(
    scorer_id: str,
    options: Mapping[str, Any],
    payload: Mapping[str, Any],
    settings: Callable[[], JudgeSettings],
    store: Store | None = None,
    bypass_cache: bool = False,
) -> ScoreResult | RunFailure:
    """Score one payload, turning every :class:`~scorers.ScorerError` into a :class:`RunFailure`.

    Args:
        scorer_id: a catalogue id (:func:`scorers.catalogue.registry.scorer_specs`), saved judges included.
        options: the scorer's options (its catalogue entry lists them).
        payload: a run payload, e.g. from :func:`build_payload`.
        settings: returns the judge settings; called inside the error handling, so a
            configuration error becomes a failure too.
        store: the judge-reply cache and where saved judges are read from.
        bypass_cache: ask the judge again even when ``store`` has the reply.

    Returns:
        The :class:`~scorers.ScoreResult`, or a :class:`RunFailure` whose message is the
        error's text (it names the field or says how to configure the judge).
    """
    try:
        scorer = create_scorer(
            scorer_id, options, settings=settings(), cache=None if bypass_cache else store, store=store
        )
        return scorer.run(dict(payload))
    except ScorerError as exc:
        return RunFailure(str(exc), exc.status, getattr(exc, "raw_reply", None))
