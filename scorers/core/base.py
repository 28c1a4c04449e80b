"""Run payloads, score results and helpers shared by every scorer.

The payload shapes follow the seeds (Mastra's ``scorer.run()``): ``input`` is a
list of messages or ``{"inputMessages": [...], "systemMessages": [...]}`` (Mastra's
agent run input; its ``taggedSystemMessages`` count as system messages, its
``rememberedMessages`` are not read); ``output`` is ``{"text": ...}``,
``{"role", "content"}``, a list of messages (Mastra's run output: its final message is the response, when
that is the assistant's reply, :func:`split_conversation`) or a plain string; ``ground_truth``
(or ``groundTruth``) is optional. A message's ``content`` (the reply's too) may be a string, a list
of content parts (OpenAI's text parts; the AI SDK's ``tool-call`` / ``tool-invocation`` parts are tool calls,
``tool-result`` parts a tool message's results, ``reasoning`` / ``step-start`` / ``source`` parts are skipped, an
image, audio or file part is invalid input: :func:`_content_parts`), or Mastra's v2 object ``{"format": 2, "parts": [...],
"toolInvocations": [...]}``, whose tool invocations are the run's tool calls.
"""

from __future__ import annotations

import json
import math
import uuid
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Protocol

from scorers.core.errors import InvalidInputError, MissingInputError

RUN_FIELDS: tuple[str, ...] = ("input", "system", "output", "ground_truth", "context", "tool_calls")
"""The fields of a run that scorers read (see :func:`missing_fields`)."""


def round_half_up(value: float, digits: int = 2) -> float:
    """Round half away from zero to ``digits`` decimals, on the decimal value.

    ``round(0.125, 2)`` in Python gives 0.12 (banker's rounding on the binary
    float); this gives 0.13, as the SPEC's "round_half_up" asks.

    Args:
        value: a finite number.
        digits: decimals to keep, >= 0.

    Returns:
        The rounded float.

    Raises:
        ValueError: if ``value`` is not finite.

    >>> round_half_up(0.125)
    0.13
    >>> round_half_up(8.4449)
    8.44
    """
    return float(_snapped(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def _snapped(value: float) -> Decimal:
    """The decimal a float stands for: its value to 12 decimals, the float noise of weighted sums dropped."""
    if not math.isfinite(value):
        raise ValueError(f"cannot round a non-finite value: {value!r}")
    # repr() gives the shortest decimal that round-trips; snapping to 12 decimals
    # absorbs the float noise of weighted sums (0.8449999999999999 from
    # 0.35·0.9 + ... is the decimal 0.845), so the half-up step sees the true value.
    # float(): a numpy float's repr is "np.float64(0.5)", not a number.
    return Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-12))


def decimal_text(value: float, digits: int = 3) -> str:
    """A number as text with ``digits`` decimals, rounded by :func:`round_half_up`: the one way a mean (or any
    statistic shown to a fixed number of decimals) is written, so History, the CLI, the gate and the report print
    the same digits for the same number.

    The decimal the float stands for is rounded, not its binary value: 0.6945 and a mean computed as
    0.6944999999999999 (float noise of (0.689 + 0.7) / 2) both read 0.695, where ``f"{x:.3f}"`` gives 0.695 for
    the first and 0.694 for the second; 0.0045 (binary 0.004499999…) reads 0.005. A value within 5e-13 of a half
    counts as the half. Half goes away from zero (-0.0005 reads -0.001) and a value that rounds to zero reads
    without a sign (-0.0004 reads 0.000).

    >>> decimal_text(0.6944999999999999), decimal_text(0.0045), decimal_text(0.0005), decimal_text(-0.0004)
    ('0.695', '0.005', '0.001', '0.000')
    """
    rounded = round_half_up(value, digits)
    return f"{rounded + 0.0:.{digits}f}"  # + 0.0: -0.0 reads 0.000


def exact_decimal_text(value: float, min_digits: int = 4) -> str:
    """A number as text with every decimal it has (to 12 decimals, which drops float noise), and at least
    ``min_digits``: for a value whose own rounding is shown beside it, such as prompt alignment's weighted score W
    before it is rounded to 2 decimals, where :func:`decimal_text` at 4 decimals would round it a first time
    (0.64495 read 0.6450 beside a score of 0.64).

    >>> exact_decimal_text(0.64495), exact_decimal_text(0.7 * 0.715 + 0.3 * 0.4815), exact_decimal_text(0.4875)
    ('0.64495', '0.64495', '0.4875')
    >>> exact_decimal_text(0.5), exact_decimal_text(4.875), exact_decimal_text(10)
    ('0.5000', '4.8750', '10.0000')
    """
    exponent = _snapped(value).normalize().as_tuple().exponent
    return decimal_text(value, max(min_digits, -int(exponent)))


MESSAGE_ROLES: tuple[str, ...] = ("system", "user", "assistant", "tool")
"""The roles a message may have; a message with another role is ``invalid_input`` (:func:`unknown_role_reason`),
never read as the user prompt."""


def unknown_role_reason(role: str) -> str:
    """Why a message whose role is not one of :data:`MESSAGE_ROLES` is not read.

    >>> unknown_role_reason("wizard")
    "message role 'wizard' is not one of the roles a message may have: system, user, assistant, tool"
    """
    return f"message role {role!r} is not one of the roles a message may have: {', '.join(MESSAGE_ROLES)}"


@dataclass(frozen=True)
class Message:
    """One chat message: ``role`` is one of :data:`MESSAGE_ROLES`.

    ``tool_calls`` are the tools an assistant turn calls (OpenAI's ``tool_calls``; its ``content`` may then be
    empty); ``tool_call_id`` and ``name`` are a tool result's (a ``"tool"`` turn's) call id and tool name.
    ``content_null``: such a turn's content was null (or absent), as OpenAI writes it; ``content`` is then ``""``
    for the texts and the judge, and :meth:`as_turn` gives null, as the user brought it.
    """

    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    content_null: bool = False

    def as_turn(self) -> dict[str, Any]:
        """The message as a conversation turn, the exports' shape: ``{"role", "content"}``, with ``tool_calls``
        (``[{"id", "name", "arguments"}]``), ``tool_call_id`` and ``name`` when it has them (:func:`turn_text`);
        ``content`` is None where the message's was null (``content_null``), never turned into ``""``.

        >>> Message("tool", "18C", tool_call_id="call_1").as_turn()
        {'role': 'tool', 'content': '18C', 'tool_call_id': 'call_1'}
        >>> Message("assistant", "", (ToolCall("get_time", {}, call_id="c1"),), content_null=True).as_turn()
        {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'c1', 'name': 'get_time', 'arguments': {}}]}
        """
        turn: dict[str, Any] = {"role": self.role, "content": None if self.content_null else self.content}
        if self.tool_calls:
            turn["tool_calls"] = [{"id": c.call_id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls]
        if self.tool_call_id is not None:
            turn["tool_call_id"] = self.tool_call_id
        if self.name is not None:
            turn["name"] = self.name
        return turn


def turn_text(turn: dict[str, Any]) -> str:
    """The text a conversation turn (:meth:`Message.as_turn`) shows, to the judge and in History and Review: its
    content, a tool result headed by its tool and call id, and one line per tool call under a "tool call" label
    (its arguments as JSON).

    >>> call = {"id": "call_1", "name": "get_weather", "arguments": '{"city":"Oslo"}'}
    >>> turn_text({"role": "assistant", "content": "", "tool_calls": [call]})
    'tool call (call_1): get_weather({"city": "Oslo"})'
    >>> turn_text({"role": "tool", "content": "18C", "tool_call_id": "call_1", "name": "get_weather"})
    'tool result of get_weather (call call_1):\\n18C'
    """
    lines = [turn["content"]] if turn.get("content") else []
    name, call_id = turn.get("name"), turn.get("tool_call_id")
    if turn.get("role") == "tool" and (name or call_id):
        lines.insert(0, f"tool result{f' of {name}' if name else ''}{f' (call {call_id})' if call_id else ''}:")
    for call in turn.get("tool_calls") or []:
        label = f"tool call ({call['id']})" if call.get("id") else "tool call"
        lines.append(f"{label}: {call['name']}({_arguments_text(call.get('arguments'))})")
    return "\n".join(lines)


def _arguments_text(arguments: Any) -> str:
    """A tool call's arguments as JSON text (OpenAI's JSON string read and written again); text that is not JSON
    as it is; nothing for no arguments."""
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return arguments
    return json.dumps(arguments, ensure_ascii=False)


@dataclass(frozen=True)
class ToolCall:
    """A tool the assistant called: its name, arguments and (when known) result.

    ``call_id`` is the call's ``toolCallId`` (or ``id``) when given; ``position`` is
    ``(message index, invocation index)`` for a call read from the output messages
    (as Mastra's ``toolCallInfos`` number them), None for the run's ``tool_calls``.
    """

    name: str
    arguments: Any = None
    result: Any = None
    call_id: str | None = None
    position: tuple[int, int] | None = None


@dataclass(frozen=True)
class RunInput:
    """A normalised run: what every scorer reads.

    Attributes:
        user_messages: the user's messages, in order.
        system_messages: the system messages, in order (may be empty).
        output: the response under evaluation as plain text.
        ground_truth: the reference answer, or None.
        context: context passages (retrieved documents ...), in order; may be empty.
        tool_calls: the tools the assistant called, in order; may be empty.
        history: the turns of a conversation before the final user prompt, in order: context for the judge,
            not the prompt or the response; empty for a single-turn run.
        after_prompt: the turns after the final user prompt, before the response, in order: the assistant's
            tool calls, the tools' results (``"tool"`` turns, never user turns) and the earlier messages of an
            output given as messages; context, like ``history``.
        given: the optional fields the payload carries (``ground_truth``, ``context``,
            ``tool_calls`` present with a value that is not None), blank or not: a run whose
            dataset maps a ground-truth column carries ``ground_truth`` in every row.
        no_reply: why the output holds no reply to score though it was given, or None: its final message only
            calls tools (``output`` is then ``""``). A scorer that reads the response's text does not score such
            a run (:func:`require_fields`, with this reason); one that reads the tool calls does.
    """

    user_messages: tuple[Message, ...]
    system_messages: tuple[Message, ...]
    output: str
    ground_truth: str | None = None
    context: tuple[str, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    given: frozenset[str] = frozenset()
    history: tuple[Message, ...] = ()
    after_prompt: tuple[Message, ...] = ()
    no_reply: str | None = None

    @property
    def user_text(self) -> str:
        """The user messages (never a tool's result) joined by blank lines."""
        return "\n\n".join(m.content for m in self.user_messages)

    @property
    def prompt_text(self) -> str:
        """The final user prompt: the user messages after the earlier turns of ``history``
        (all of them for a single-turn run), joined by blank lines."""
        return "\n\n".join(m.content for m in self._final_prompt)

    @property
    def conversation(self) -> tuple[Message, ...]:
        """A conversation's turns before the response, with their roles, in order, as the judge is shown them: the
        earlier turns (``history``), the final user prompt's messages, then the turns after it (``after_prompt``:
        tool calls and results ...); empty for a single-turn run (no other turns). What the exports'
        ``conversation`` column and Review show.

        >>> run = normalize_run({"input": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"},
        ...                                {"role": "user", "content": "A haiku?"}], "output": "Rain."})
        >>> [(m.role, m.content) for m in run.conversation]
        [('user', 'Hi'), ('assistant', 'Hello'), ('user', 'A haiku?')]
        """
        return self.history + self._final_prompt + self.after_prompt if self.history or self.after_prompt else ()

    @property
    def _final_prompt(self) -> tuple[Message, ...]:
        """The user messages after the earlier turns of ``history`` (all of them for a single-turn run)."""
        if not self.history:
            return self.user_messages
        return self.user_messages[sum(m.role == "user" for m in self.history) :]

    @property
    def system_text(self) -> str:
        """The system messages joined by blank lines ("" when there are none)."""
        return "\n\n".join(m.content for m in self.system_messages)


def _v2_text(content: dict[str, Any]) -> str | None:
    """The text of Mastra's v2 message content ``{format: 2, parts, content?, toolInvocations?}``.

    As Mastra's ``getTextContentFromMastraDBMessage``: ``content.content`` when it is a
    non-empty string, else the last ``text`` part; "" for a turn that only calls tools;
    None when it holds no text at all.
    """
    if isinstance(content.get("content"), str) and content["content"]:
        return content["content"]
    parts = content.get("parts")
    texts = (
        [p.get("text") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
        if isinstance(parts, list)
        else []
    )
    if texts and isinstance(texts[-1], str):
        return texts[-1]
    if isinstance(parts, list) or content.get("toolInvocations"):
        return ""
    return None


_SKIPPED_PARTS: tuple[str, ...] = (
    "reasoning",
    "redacted-reasoning",
    "step-start",
    "source",
    "source-url",
    "source-document",
)
"""Content part types (AI SDK / Mastra) that are neither the answer's (or prompt's) text nor a tool call or result:
the model's reasoning, a step boundary, a cited source. They are skipped (no scorer reads them; the README says so)."""


_TEXT_PARTS = ("text", "output_text")
"""Content part types that hold text: OpenAI Chat Completions' and the AI SDK's ``text``, the OpenAI Responses
API's ``output_text`` (a reply's text)."""


def _is_parts(value: list[Any]) -> bool:
    """Whether a list is content parts (each an object with a ``type`` and no ``role``), not messages."""
    return bool(value) and all(_is_part(item) for item in value)


def _is_part(item: Any) -> bool:
    return isinstance(item, dict) and "type" in item and "role" not in item


def _content_parts(parts: list[Any]) -> tuple[list[str], list[Any], list[Any], list[str]]:
    """A message's content parts by what they are: the text parts' texts, the tool calls (``tool-call`` parts, and
    ``tool-invocation`` parts' invocations as in Mastra's v2 content, :func:`_v2_invocations`), the ``tool-result``
    parts, and the kinds of the parts that cannot be read (an image, audio, a file, an unknown type, a text part
    without text). The parts of :data:`_SKIPPED_PARTS` are in none of them.

    >>> _content_parts([{"type": "reasoning", "text": "Hm."}, {"type": "text", "text": "Paris."},
    ...                 {"type": "tool-call", "toolCallId": "c1", "toolName": "search", "args": {}}])[:2]
    (['Paris.'], [{'type': 'tool-call', 'toolCallId': 'c1', 'toolName': 'search', 'args': {}}])
    """
    texts, calls, results, others = [], [], [], []
    for part in parts:
        kind = part.get("type", "text") if isinstance(part, dict) else f"a {type(part).__name__}"
        if kind in _TEXT_PARTS and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "tool-call":
            calls.append(part)
        elif kind == "tool-result":
            results.append(part)
        elif kind not in _SKIPPED_PARTS and kind != "tool-invocation":
            others.append(f"a {kind} part without a 'text' string" if kind in _TEXT_PARTS else str(kind))
    return texts, _v2_invocations({"parts": parts}) + calls, results, others


def _parts_text(parts: list[Any], where: str) -> tuple[str, list[Any], list[Any]]:
    """The text of a message's content parts (OpenAI's ``[{"type": "text", "text": ...}, ...]``, AI SDK / Mastra
    parts), a user turn's and the reply's alike: the text parts' texts joined by a line break ("" for none), with
    the tool calls and ``tool-result`` parts (:func:`_content_parts`).

    >>> _parts_text([{"type": "text", "text": "Paris."}, {"type": "text", "text": "It is."}], "output")
    ('Paris.\\nIt is.', [], [])

    Raises:
        InvalidInputError: a part that cannot be read (an image, audio, a file ...), naming each kind: the scorers
            read text only, and a message is never scored without a part of it.
    """
    texts, calls, results, others = _content_parts(parts)
    if others:
        named = list(dict.fromkeys(others))
        raise InvalidInputError(
            f"message content has {'a part' if len(others) == 1 else 'parts'} that "
            f"{'is' if len(others) == 1 else 'are'} not text ({', '.join(named)}): the scorers read text only, and "
            "a message is never scored without a part of it",
            field=where,
        )
    return "\n".join(texts), calls, results


def _result_text(part: dict[str, Any]) -> str:
    """A ``tool-result`` part's result (AI SDK's ``result``, or v5's ``output``) as a tool message's content: text
    as it is, any other value as JSON."""
    result = part.get("result", part.get("output"))
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def _message_turns(message: Any, where: str) -> list[Message]:
    """A message as the turns it holds: one, or, for a tool message whose content is AI SDK ``tool-result`` parts,
    one tool turn per result (as OpenAI writes one tool message per call). A ``tool-call`` or ``tool-invocation``
    part of an assistant turn is one of its tool calls, as ``tool_calls`` are."""
    if isinstance(message, str):
        return [Message("user", message)]
    if not isinstance(message, dict):
        raise InvalidInputError(
            f"expected a message object with 'role' and 'content', got {type(message).__name__}",
            field=where,
        )
    role = message.get("role", "user")
    content = message.get("content", message.get("text"))
    part_calls: list[Any] = []
    results: list[Any] = []
    if isinstance(content, list):  # content parts: OpenAI's, AI SDK / Mastra's
        content, part_calls, results = _parts_text(content, where)
    elif isinstance(content, dict):  # Mastra's v2 message content
        content = _v2_text(content)
    calls = message.get("tool_calls") if role == "assistant" else None
    if calls is not None and not isinstance(calls, list):
        raise InvalidInputError("expected a list of tool calls", field=f"{where}.tool_calls")
    content_null = bool(calls) and content is None  # OpenAI: an assistant turn that only calls tools
    if content_null:
        content = ""
    if not isinstance(content, str):
        raise InvalidInputError(
            "message has no text 'content' (a string, a list of text parts, or Mastra's "
            "{format: 2, parts: [...]} object)",
            field=where,
        )
    if not isinstance(role, str):
        raise InvalidInputError("message 'role' must be a string", field=f"{where}.role")
    if role not in MESSAGE_ROLES:
        raise InvalidInputError(unknown_role_reason(role), field=f"{where}.role")
    if part_calls and role != "assistant":
        raise InvalidInputError(
            f"a {role} message has a tool call part: only an assistant turn calls tools", field=where
        )
    if results and role != "tool":
        raise InvalidInputError(
            f"a {role} message has a tool-result part: a tool's result is a tool message", field=where
        )
    if role != "tool":
        labelled = [(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(calls or [])]
        labelled += [(c, f"{where}.content") for c in part_calls if _counts_as_call(c)]
        tool_calls = tuple(_tool_call(c, label) for c, label in labelled)
        return [Message(role, content, tool_calls, content_null=content_null)]
    call_id, name = message.get("tool_call_id"), message.get("name")
    for key, value in (("tool_call_id", call_id), ("name", name)):
        if value is not None and not isinstance(value, str):
            raise InvalidInputError(f"a tool message's {key!r} must be a string", field=f"{where}.{key}")
    turns = [Message(role, content, tool_call_id=call_id, name=name)] if content or not results else []
    for result in results:
        result_id, tool = result.get("toolCallId"), result.get("toolName")
        turns.append(
            Message(
                role,
                _result_text(result),
                tool_call_id=result_id if isinstance(result_id, str) else call_id,
                name=tool if isinstance(tool, str) else name,
            )
        )
    return turns


def _messages(value: Any, where: str) -> list[Message]:
    if value is None:
        return []
    if isinstance(value, (str, dict)):
        value = [value]
    if not isinstance(value, list):
        raise InvalidInputError(f"expected a list of messages, got {type(value).__name__}", field=where)
    return [turn for i, m in enumerate(value) for turn in _message_turns(m, f"{where}[{i}]")]


ONLY_TOOL_CALLS = "the output only calls tools and has no text to score (no assistant reply)"
"""Why an output object that only calls tools (``tool_calls`` or ``toolInvocations`` and no text) has no reply."""


def _output_text(value: Any) -> tuple[str, str | None]:
    """The output's reply text, and why it has none (:attr:`RunInput.no_reply`) or None."""
    if isinstance(value, str):
        return value, None
    if isinstance(value, dict):
        text = value.get("text")
        if text is None:
            text = value.get("content")
        if isinstance(text, dict):  # one Mastra v2 message
            text = _v2_text(text)
        elif isinstance(text, list):  # content parts, read as a user turn's are
            return _reply_parts_text(text)
        if isinstance(text, str):
            return text, None
        if text is None and (value.get("toolInvocations") or value.get("tool_calls")):
            return "", ONLY_TOOL_CALLS  # an assistant turn that only calls tools
        raise InvalidInputError("the output object has no 'text' or 'content' string", field="output")
    if isinstance(value, list) and _is_parts(value):  # the reply's content parts, as a message's content
        return _reply_parts_text(value)
    if isinstance(value, list):
        return _split_output(_messages(_output_messages(value), "output"))[1:]
    raise InvalidInputError(
        f"expected a string, {{'text': ...}}, a message, a list of messages or a list of content parts, got "
        f"{type(value).__name__}",
        field="output",
    )


def _reply_parts_text(parts: list[Any]) -> tuple[str, str | None]:
    """The reply's text from its content parts (:func:`_parts_text`), and :data:`ONLY_TOOL_CALLS` as why it has
    none when its parts only call tools."""
    text, calls, _ = _parts_text(parts, "output")
    if not text and any(_counts_as_call(c) for c in calls):
        return "", ONLY_TOOL_CALLS
    return text, None


def _output_messages(value: list[Any]) -> list[Any]:
    """An output list read as messages, once :func:`_is_parts` has said it is not all content parts.

    Raises:
        InvalidInputError: the list mixes content parts with messages: it is neither the reply's content nor a
            conversation.
    """
    if any(_is_part(item) for item in value):
        raise InvalidInputError(
            "the output list mixes content parts (objects with a 'type' and no 'role') with messages: give either "
            "the reply's content parts or a list of messages",
            field="output",
        )
    return value


def split_conversation(turns: list[Any]) -> tuple[list[Any], Any]:
    """A conversation's earlier turns and its response: the final message when it is the assistant's reply (the
    turns before it are the earlier ones), else all the turns and None.

    The one rule for a conversation, whether a dataset's messages cell (raw ``{"role", ...}`` objects) or an
    output given as a list of messages (:class:`Message`): one that ends with a user turn (an unanswered request),
    a tool result, an assistant turn that only calls tools (``tool_calls`` and no text) or no assistant message at
    all has no response (``missing_input`` for every scorer, the reason from :func:`no_reply_reason`): an earlier
    exchange is never scored in place of the last request.

    >>> split_conversation([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}])
    ([{'role': 'user', 'content': 'Hi'}], {'role': 'assistant', 'content': 'Hello'})
    >>> split_conversation([Message("assistant", "Hello"), Message("user", "And?")])[1] is None
    True
    """
    last = turns[-1] if turns else None
    if _turn_kind(last) == "assistant":
        return turns[:-1], last
    return turns, None


def _turn_kind(turn: Any) -> str | None:
    """A turn's role, or ``"tool call"`` for an assistant turn that only calls tools (``tool_calls``, no text)."""
    if isinstance(turn, Message):
        role, calls, text = turn.role, turn.tool_calls, turn.content
    elif isinstance(turn, dict):
        role, calls, text = turn.get("role"), turn.get("tool_calls"), turn.get("content")
        if isinstance(text, list):  # content parts: their text, and tool-call parts as tool calls
            texts, part_calls, _, _ = _content_parts(text)
            calls, text = calls or [c for c in part_calls if _counts_as_call(c)], "".join(texts)
    else:
        return None
    return "tool call" if role == "assistant" and calls and not text else role


def no_reply_reason(last: Any) -> str:
    """Why a conversation whose final message is ``last`` (a :class:`Message` or a raw message) has no response
    (:func:`split_conversation`).

    >>> no_reply_reason(Message("user", "And?"))
    "the conversation ends with a user turn, not an assistant reply (its response is its final message only when that is the assistant's)"
    >>> no_reply_reason(Message("assistant", "", (ToolCall("get_weather"),)))
    'the conversation ends with a tool call, not an assistant reply (its final message calls a tool and has no text to score)'
    """
    if _turn_kind(last) == "tool call":
        return "the conversation ends with a tool call, not an assistant reply (its final message calls a tool and has no text to score)"
    role = last.role if isinstance(last, Message) else last.get("role", "user")
    return (
        f"the conversation ends with a {role} turn, not an assistant reply (its response is its final message "
        "only when that is the assistant's)"
    )


def _no_output_reason(raw_input: Any, turns: list[Message]) -> str:
    """What a run without an output says after "the run has no 'output'", by what its input is: how a conversation
    ends (:func:`no_reply_reason`), that its list of messages is empty, or that its input is text, not a list of
    messages; nothing for another input (the response was simply not given)."""
    if isinstance(raw_input, list) and turns:  # a conversation: its response is a final assistant reply
        return f": {no_reply_reason(turns[-1])}"
    if isinstance(raw_input, list):
        return ": the conversation has no user or assistant message (the messages list is empty)"
    if isinstance(raw_input, str):
        return (
            ": no response given; the input is not a list of messages (it is read as the prompt's text), so it holds "
            "no assistant reply to score"
        )
    return ""


def _split_output(messages: list[Message]) -> tuple[list[Message], str, str | None]:
    """An output given as messages: the earlier ones (context), the scored response, the final message when it
    is the assistant's reply (:func:`split_conversation`; a message without a role is a user turn, as in the input),
    and why there is none (:attr:`RunInput.no_reply`) or None. Messages that end with a tool call are all context,
    with ``""`` as the response and :func:`no_reply_reason` as why: the scorers that read tool calls still score them.

    Raises:
        MissingInputError: the messages end with a user turn or a tool result: no response.
    """
    if not messages:
        return [], "", None
    earlier, reply = split_conversation(messages)
    if reply is None:
        if _turn_kind(messages[-1]) == "tool call":
            return earlier, "", no_reply_reason(messages[-1])
        raise MissingInputError(no_reply_reason(messages[-1]), field="output")
    return earlier, reply.content, None


def _tool_call(raw: Any, where: str, position: tuple[int, int] | None = None) -> ToolCall:
    if not isinstance(raw, dict):
        raise InvalidInputError(f"expected a tool call object, got {type(raw).__name__}", field=where)
    function = raw.get("function") if isinstance(raw.get("function"), dict) else {}
    name = raw.get("name", raw.get("toolName", function.get("name")))
    if not isinstance(name, str) or not name.strip():
        raise InvalidInputError("a tool call needs a 'name' (or 'toolName' / 'function.name')", field=where)
    arguments = raw.get("arguments", raw.get("args", raw.get("input", function.get("arguments"))))
    call_id = raw.get("toolCallId", raw.get("id"))
    return ToolCall(name, arguments, raw.get("result"), call_id if isinstance(call_id, str) else None, position)


# Mastra's tool-invocation states that count as a call (extractToolCalls): a
# "partial-call" (arguments still streaming) is not one.
_CALL_STATES = ("result", "call", "output-error")


def _counts_as_call(invocation: Any) -> bool:
    """Whether a tool invocation is a call (Mastra's ``extractToolCalls``): one without a ``state`` is."""
    return not (isinstance(invocation, dict) and invocation.get("state", "result") not in _CALL_STATES)


def _v2_invocations(content: dict[str, Any]) -> list[Any]:
    """Mastra's ``mergeToolInvocations``: the ``tool-invocation`` parts, then legacy
    ``toolInvocations`` whose ``toolCallId`` no part has, in Mastra's order."""
    parts = content.get("parts") if isinstance(content.get("parts"), list) else []
    from_parts = [
        p["toolInvocation"]
        for p in parts
        if isinstance(p, dict) and p.get("type") == "tool-invocation" and p.get("toolInvocation")
    ]
    ids = {i.get("toolCallId") for i in from_parts if isinstance(i, dict) and i.get("toolCallId")}
    legacy = content.get("toolInvocations") or []
    positions = {i.get("toolCallId"): n for n, i in enumerate(legacy) if isinstance(i, dict)}
    merged: list[Any] = []
    next_legacy = 0
    for invocation in from_parts:
        shared = positions.get(invocation.get("toolCallId")) if isinstance(invocation, dict) else None
        if invocation.get("toolCallId") and shared is not None and shared >= next_legacy:
            merged += [
                i for i in legacy[next_legacy:shared] if not (isinstance(i, dict) and i.get("toolCallId") in ids)
            ]
            next_legacy = shared + 1
        merged.append(invocation)
    merged += [i for i in legacy[next_legacy:] if not (isinstance(i, dict) and i.get("toolCallId") in ids)]
    return merged


def _tool_calls(payload: dict[str, Any]) -> list[ToolCall]:
    calls: list[ToolCall] = []
    explicit = payload.get("tool_calls", payload.get("toolCalls"))
    if explicit is not None:
        if not isinstance(explicit, list):
            raise InvalidInputError("expected a list of tool calls", field="tool_calls")
        calls += [_tool_call(c, f"tool_calls[{i}]") for i, c in enumerate(explicit)]
    output = payload.get("output")
    if isinstance(output, list) and _is_parts(output):  # the reply's content parts: one message's content
        output = {"content": output}
    messages = output if isinstance(output, list) else [output] if isinstance(output, dict) else []
    for m_index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        found = [
            ("toolInvocations", message.get("toolInvocations") or []),
            ("tool_calls", message.get("tool_calls") or []),
        ]
        if isinstance(message.get("content"), dict):
            found.insert(0, ("content.toolInvocations", _v2_invocations(message["content"])))
        elif isinstance(message.get("content"), list):  # tool-call / tool-invocation parts
            found.insert(0, ("content", _content_parts(message["content"])[1]))
        for key, invocations in found:
            for i, c in enumerate(invocations):
                if not _counts_as_call(c):
                    continue
                calls.append(_tool_call(c, f"output[{m_index}].{key}[{i}]", (m_index, i)))
    return calls


def _context(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise InvalidInputError("context must be a string or a list of strings", field="context")


def normalize_run(payload: dict[str, Any] | RunInput) -> RunInput:
    """Turn a seed-shaped run payload into a :class:`RunInput`.

    Args:
        payload: ``{"input": ..., "output": ..., "ground_truth"?: str}``; see the
            module docstring for the accepted shapes. ``groundTruth`` is accepted
            for ``ground_truth``. Optional ``context`` (a string or a list of passages)
            and ``tool_calls`` (``[{"name", "arguments", "result"?}]``; also read from
            output messages' ``toolInvocations`` or OpenAI ``tool_calls``).
            A :class:`RunInput` is returned unchanged.

    Returns:
        The normalised run. Messages in ``input`` with role ``"system"`` go to
        ``system_messages`` whichever shape they came in.

    Raises:
        InvalidInputError: when a field has the wrong type, or holds text that cannot be encoded
            (a lone surrogate); the error names the field.
    """
    if isinstance(payload, RunInput):
        return payload
    if not isinstance(payload, dict):
        raise InvalidInputError(f"expected a dict run payload, got {type(payload).__name__}", field="payload")
    raw_input = payload.get("input")
    if isinstance(raw_input, dict) and ("inputMessages" in raw_input or "systemMessages" in raw_input):
        messages = _messages(raw_input.get("inputMessages"), "input.inputMessages")
        system = _messages(raw_input.get("systemMessages"), "input.systemMessages")
        tagged = raw_input.get("taggedSystemMessages")
        for tag, tagged_messages in tagged.items() if isinstance(tagged, dict) else ():
            system += _messages(tagged_messages, f"input.taggedSystemMessages.{tag}")
        system = [Message("system", m.content) for m in system]
    else:
        messages = _messages(raw_input, "input")
        system = []
    system += [m for m in messages if m.role == "system"]
    user = [m for m in messages if m.role == "user"]  # a tool's result is never the user's request
    turns = [m for m in messages if m.role != "system"]
    # The final user prompt is the input's last user turn (with the user turns right before it); the turns before
    # it are the earlier ones, the turns after it (tool calls, tool results) and the earlier messages of an output
    # given as messages come between it and the response.
    end = max((i + 1 for i, m in enumerate(turns) if m.role == "user"), default=0)
    start = end - 1 if end else 0
    while start > 0 and turns[start - 1].role == "user":
        start -= 1
    history, after_prompt = turns[:start], turns[end:]
    from_input = len(after_prompt)  # the turns after it that the input holds; the output's earlier messages follow
    if isinstance(payload.get("output"), list) and not _is_parts(payload["output"]):
        after_prompt += _split_output(_messages(_output_messages(payload["output"]), "output"))[0]
    if "output" not in payload:
        raise MissingInputError(
            "the run has no 'output' (the response to evaluate)" + _no_output_reason(raw_input, turns), field="output"
        )
    ground_truth = payload.get("ground_truth")
    if ground_truth is None:
        ground_truth = payload.get("groundTruth")
    if ground_truth is not None and not isinstance(ground_truth, str):
        raise InvalidInputError("ground truth must be a string", field="ground_truth")
    given = {"ground_truth"} if ground_truth is not None else set()
    given |= {k for k in ("context", "tool_calls") if payload.get(k) is not None}
    if payload.get("toolCalls") is not None:
        given.add("tool_calls")
    output, no_reply = _output_text(payload["output"])
    run = RunInput(
        tuple(user),
        tuple(system),
        output,
        ground_truth,
        tuple(_context(payload.get("context"))),
        tuple(_tool_calls(payload)),
        frozenset(given),
        tuple(history),
        tuple(after_prompt),
        no_reply,
    )
    texts = [("input", m.content) for m in run.user_messages] + [("system", m.content) for m in run.system_messages]
    texts += [("output", run.output), ("ground_truth", run.ground_truth or "")]
    texts += [(f"context[{i}]", passage) for i, passage in enumerate(run.context)]
    texts += [("input", turn_text(m.as_turn())) for m in run.history + run.after_prompt[:from_input]]
    texts += [("output", turn_text(m.as_turn())) for m in run.after_prompt[from_input:]]
    for name, text in texts:
        check_encodable(text, name)
    return run


def check_encodable(text: str, field: str) -> None:
    """Raise :class:`~scorers.core.errors.InvalidInputError` when ``text`` cannot be sent as UTF-8
    (a lone surrogate such as ``"\ud800"``, from a broken decode), naming the field and position.

    >>> check_encodable("fine", "output")
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(
            f"the text cannot be encoded as UTF-8: a lone surrogate U+{ord(text[exc.start]):04X} at character "
            f"{exc.start + 1}; fix the text's encoding (it was probably decoded wrongly)",
            field=field,
        ) from None


def _blank(run: RunInput, name: str) -> bool:
    if name == "input":
        return not run.user_text.strip()
    if name == "system":
        return not run.system_text.strip()
    if name == "output":
        return not run.output.strip()
    if name == "ground_truth":
        return run.ground_truth is None or not run.ground_truth.strip()
    if name == "context":
        return not any(p.strip() for p in run.context)
    if name == "tool_calls":
        return not run.tool_calls
    raise ValueError(f"unknown run field {name!r}; the fields are {', '.join(RUN_FIELDS)}")


def missing_fields(run: RunInput, required: tuple[str, ...] | list[str], optional: tuple[str, ...] = ()) -> list[str]:
    """The fields a scorer needs that this run lacks, in the order given.

    Args:
        run: a normalised run.
        required: fields (of :data:`RUN_FIELDS`) that must be present and not blank: a blank
            or whitespace text, a missing key, no user message, an empty list all count as missing.
        optional: fields read when present; one the run *carries* (in ``run.given``, e.g. a
            mapped ground-truth column) but leaves blank counts as missing too, so a run never
            mixes rows scored with and without it.

    Raises:
        ValueError: a name that is not a run field.
    """
    missing = [f for f in required if _blank(run, f)]
    return missing + [f for f in optional if f not in missing and f in run.given and _blank(run, f)]


def require_fields(
    run: RunInput, required: tuple[str, ...] | list[str], optional: tuple[str, ...] = (), *, scorer: str
) -> None:
    """Raise :class:`~scorers.core.errors.MissingInputError` naming the first field of
    :func:`missing_fields`; the row is then not scored and is never filled from another field.

    Args:
        run: a normalised run.
        required, optional: as for :func:`missing_fields`.
        scorer: the scorer's display name, for the message.
    """
    missing = missing_fields(run, required, optional)
    if missing:
        name = missing[0]
        if name == "output" and run.no_reply is not None:  # the output only calls tools: say so
            raise MissingInputError(run.no_reply, field="output")
        what = "is blank" if name in run.given or name in ("input", "output", "system") else "is missing"
        raise MissingInputError(
            f"{scorer} needs the run's {name}, which {what} in this row: not scored "
            "(a required field is never filled from another one)",
            field=name,
        )


@dataclass(frozen=True)
class JudgeUsage:
    """Tokens a scorer's judge calls used, retries and re-asks included.

    ``calls`` counts the judge's answers (replies with tokens), ``requests`` every HTTP request sent to the judge:
    answered, failed (a 5xx, a 429, a timeout, a lost connection) and each retry of a failed one, as the run
    budget's call cap counts them (:mod:`scorers.core.budget`). A request that failed spent no tokens. In Batch API
    mode ``requests`` counts the request lines sent in batch files instead (a line sent again after its batch
    expired counts again; a re-ask sent live counts one).
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    requests: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: JudgeUsage) -> JudgeUsage:
        return JudgeUsage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.calls + other.calls,
            self.requests + other.requests,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "promptTokens": self.prompt_tokens,
            "completionTokens": self.completion_tokens,
            "totalTokens": self.total_tokens,
            "calls": self.calls,
            "requests": self.requests,
        }


@dataclass(frozen=True)
class JudgeInfo:
    """Which judge produced a result: model, endpoint and parameters (never the key).

    ``cached`` is True when the reply came from the judge cache (then ``usage`` is 0). ``note``
    says what differs from the settings asked for, e.g. a temperature the model does not accept
    (the judge is then not pinned); "" when nothing does.
    """

    model: str
    base_url: str
    parameters: dict[str, Any]
    usage: JudgeUsage
    cached: bool = False
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        out = {
            "model": self.model,
            "baseUrl": self.base_url,
            "parameters": dict(self.parameters),
            "usage": self.usage.to_dict(),
            "cached": self.cached,
        }
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class ScoreResult:
    """A scored item.

    Attributes:
        scorer: the scorer's id, e.g. ``"prompt-alignment"``.
        score: the score in ``[0, scale]``.
        reason: a human-readable explanation, or None for scorers without one.
        analyze_step_result: the analysis in the seeds' camelCase shape.
        run_id: a unique id for this run.
        judge: the judge model, parameters and token usage (None for code scorers).
        details: extra data for display that is not part of the seed shape
            (e.g. the textual-difference alignment opcodes).
    """

    scorer: str
    score: float
    reason: str | None
    analyze_step_result: dict[str, Any]
    run_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    judge: JudgeInfo | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The seeds' JSON shape: ``{"runId", "scorer", "score", "reason", "analyzeStepResult", "judge"?}``."""
        out: dict[str, Any] = {
            "runId": self.run_id,
            "scorer": self.scorer,
            "score": self.score,
            "reason": self.reason,
            "analyzeStepResult": self.analyze_step_result,
        }
        if self.judge is not None:
            out["judge"] = self.judge.to_dict()
        return out


class Scorer(Protocol):
    """What every scorer offers: an id, a display name and a synchronous ``run()``.

    A scorer may also declare ``cpu_bound = True`` (a class attribute): its ``run()`` only
    computes, with no judge call and no other network, file or database access, so it never
    waits. Python threads cannot run such work at the same time (the GIL), so
    :func:`~scorers.runs.runner.run_evals` scores a run whose scorers are all CPU-bound in one
    worker thread, whatever concurrency is asked for, or, for a large run, in one worker process
    (the scorer is pickled to it: :mod:`scorers.runs.scoring_process`). Without the attribute a scorer is taken
    to wait on I/O (an LLM judge, a custom scorer calling a service) and items are scored
    concurrently. The catalogue's code-based scorers declare it; its LLM-judged ones do not.
    """

    id: str
    name: str

    def run(self, payload: dict[str, Any] | RunInput) -> ScoreResult:
        """Score one run; raises a :class:`~scorers.core.errors.ScorerError` instead of scoring a failure."""
        ...
