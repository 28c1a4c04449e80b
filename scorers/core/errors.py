"""Item statuses and the typed errors a scorer raises instead of a score.

A failure is never a score of 0 (SPEC §3): a scorer either returns a
:class:`~scorers.core.base.ScoreResult` or raises one of the errors below, each of
which carries the :class:`ScoreStatus` a batch run records for the item.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from enum import Enum
from typing import Any


class ScoreStatus(str, Enum):
    """Outcome of scoring one item (SPEC §3)."""

    SCORED = "scored"
    INVALID_INPUT = "invalid_input"
    MISSING_INPUT = "missing_input"
    JUDGE_REFUSED = "judge_refused"
    JUDGE_OUTPUT_INVALID = "judge_output_invalid"
    JUDGE_OUTPUT_TRUNCATED = "judge_output_truncated"
    RATE_LIMITED = "rate_limited"
    API_ERROR = "api_error"
    EXCEEDS_CONTEXT = "exceeds_context"

    @property
    def retryable(self) -> bool:
        """Whether scoring the item again can change this outcome ("Retry failed items", ``--retry-failed``).

        True for a failure at the judge or its API (refused, invalid or truncated output, rate limit,
        API error, context exceeded: another attempt or another judge may succeed). False for a scored
        outcome, and for ``invalid_input`` and ``missing_input``: a run's items and options are stored
        with it, so scoring the same input again gives the same outcome.
        """
        return self not in (ScoreStatus.SCORED, ScoreStatus.INVALID_INPUT, ScoreStatus.MISSING_INPUT)


class RunStatus(str, Enum):
    """Status of a stored run (``runs.status``): how far it is and, when it stopped early, why.

    Every status but ``completed`` and ``running`` can be resumed: items without an
    outcome are scored, nothing is scored twice.
    """

    RUNNING = "running"
    COMPLETED = "completed"
    CANCELLED = "cancelled"  # stopped by the user
    FAILED = "failed"  # stopped by an unexpected error
    INTERRUPTED = "interrupted"  # the process scoring it died (marked at the next start-up)
    BUDGET_REACHED = "budget_reached"  # a judge-call, token or cost cap would have been passed
    JUDGE_UNREACHABLE = "judge_unreachable"  # consecutive connection, auth or 5xx failures, or the pre-flight
    QUOTA_EXHAUSTED = "quota_exhausted"  # the judge's quota or daily limit is used up (429 insufficient_quota)
    JUDGE_REPLIES_UNUSABLE = "judge_replies_unusable"  # consecutive replies not matching the schema, or refusals


RUN_STATUS_LABELS: dict[str, str] = {
    RunStatus.RUNNING.value: "Running",
    RunStatus.COMPLETED.value: "Completed",
    RunStatus.CANCELLED.value: "Stopped",
    RunStatus.FAILED.value: "Stopped on an unexpected error",
    RunStatus.INTERRUPTED.value: "Interrupted (the process scoring it stopped during the run)",
    RunStatus.BUDGET_REACHED.value: "Paused at the budget cap (the next judge call could have passed it)",
    RunStatus.JUDGE_UNREACHABLE.value: "Paused because the judge could not be used (unreachable, or answering with errors)",
    RunStatus.JUDGE_REPLIES_UNUSABLE.value: (
        "Paused because the judge's replies were unusable (invalid output or refusals, several in a row)"
    ),
    RunStatus.QUOTA_EXHAUSTED.value: "Paused because the judge's quota or daily limit is used up (429 insufficient_quota)",
}
"""How a run's stored status reads to a person, the one wording of the dashboard and the CLI (``python -m scorers
runs``); :func:`run_status_label` looks a status up."""


def run_status_label(status: str) -> str:
    """The human label of a stored run status (:data:`RUN_STATUS_LABELS`); a status it does not know, as it is.

    >>> run_status_label("quota_exhausted")
    "Paused because the judge's quota or daily limit is used up (429 insufficient_quota)"
    """
    return RUN_STATUS_LABELS.get(status, status)


RUN_STATUS_SHORT_LABELS: dict[str, str] = {
    RunStatus.RUNNING.value: "Running",
    RunStatus.COMPLETED.value: "Completed",
    RunStatus.CANCELLED.value: "Stopped",
    RunStatus.FAILED.value: "Stopped on an error",
    RunStatus.INTERRUPTED.value: "Interrupted",
    RunStatus.BUDGET_REACHED.value: "Paused at the budget cap",
    RunStatus.JUDGE_UNREACHABLE.value: "Paused: judge unusable",
    RunStatus.JUDGE_REPLIES_UNUSABLE.value: "Paused: judge replies unusable",
    RunStatus.QUOTA_EXHAUSTED.value: "Paused: judge quota used up",
}
"""The same statuses in a few words, where a line or a table column is narrow (History's run picker and list); the
full :data:`RUN_STATUS_LABELS` wording goes in the column's or picker's help."""


def run_status_short_label(status: str) -> str:
    """:data:`RUN_STATUS_SHORT_LABELS`' few words for a stored run status; a status it does not know, as it is."""
    return RUN_STATUS_SHORT_LABELS.get(status, status)


OUTCOME_STATUS_LABELS: dict[str, str] = {
    ScoreStatus.SCORED.value: "Scored",
    ScoreStatus.INVALID_INPUT.value: "Invalid input",
    ScoreStatus.MISSING_INPUT.value: "Missing input",
    ScoreStatus.JUDGE_REFUSED.value: "Judge refused",
    ScoreStatus.JUDGE_OUTPUT_INVALID.value: "Judge output invalid",
    ScoreStatus.JUDGE_OUTPUT_TRUNCATED.value: "Judge output cut off",
    ScoreStatus.RATE_LIMITED.value: "Rate limited",
    ScoreStatus.API_ERROR.value: "API error",
    ScoreStatus.EXCEEDS_CONTEXT.value: "Too long for the judge's context",
}
"""How an item outcome's status (:class:`ScoreStatus`) reads to a person on the dashboard; exports' machine columns
and CLI flags keep the raw names (``missing_input``), which is what a user types or filters on there."""


def outcome_status_label(status: str) -> str:
    """The human label of an outcome status (:data:`OUTCOME_STATUS_LABELS`); a status it does not know, as it is.

    >>> outcome_status_label("judge_output_invalid")
    'Judge output invalid'
    """
    return OUTCOME_STATUS_LABELS.get(status, status)


class ScorerError(Exception):
    """Base class of every error a scorer raises; ``status`` says which outcome it is."""

    status: ScoreStatus = ScoreStatus.API_ERROR


class InvalidInputError(ScorerError, ValueError):
    """The run payload or the scorer's options are unusable; raised before any judge call.

    Args:
        message: what is wrong and how to fix it.
        field: the payload field path that is wrong, e.g. ``"input.inputMessages"``.
    """

    status = ScoreStatus.INVALID_INPUT

    def __init__(self, message: str, *, field: str | None = None):
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)


class MissingInputError(InvalidInputError):
    """The run lacks a field the scorer requires (a blank cell, a missing key, an empty list).

    The item is not scored and is counted apart; the scorer never falls back to another field.
    ``field`` names the missing run field, e.g. ``"ground_truth"`` or ``"context"``.
    """

    status = ScoreStatus.MISSING_INPUT


class JudgeConfigError(ScorerError):
    """The judge cannot be reached as configured (no API key, no base URL, bad model name)."""

    status = ScoreStatus.API_ERROR


class JudgeError(ScorerError):
    """A judge call failed. ``raw_reply`` keeps the judge's text when there was one.

    ``usage`` is the :class:`~scorers.core.base.JudgeUsage` the failed attempt still spent
    (tokens of replies that were refused, cut off or invalid; its HTTP requests, failed ones included), or None.
    """

    def __init__(self, message: str, *, raw_reply: str | None = None, usage: Any = None):
        self.raw_reply = raw_reply
        self.usage = usage
        super().__init__(message)


class JudgeRefusalError(JudgeError):
    """The judge model refused to answer (an explicit refusal or content filter)."""

    status = ScoreStatus.JUDGE_REFUSED


class JudgeOutputInvalidError(JudgeError):
    """The judge's reply was not valid JSON for the schema, even after one re-ask."""

    status = ScoreStatus.JUDGE_OUTPUT_INVALID


class JudgeOutputTruncatedError(JudgeError):
    """The judge's reply was cut off by the token limit (``finish_reason == "length"``)."""

    status = ScoreStatus.JUDGE_OUTPUT_TRUNCATED


class RateLimitedError(JudgeError):
    """The judge endpoint kept answering 429 after every retry.

    ``retry_after`` is the server's last ``Retry-After`` in seconds, or None. ``quota`` is True
    for an exhausted quota or daily limit: not retried, and a batch run pauses on it.
    """

    status = ScoreStatus.RATE_LIMITED

    def __init__(self, message: str, *, retry_after: float | None = None, quota: bool = False):
        self.retry_after = retry_after
        self.quota = quota
        super().__init__(message)


FOLLOW_UPS_RETRIED: ContextVar[bool] = ContextVar("follow_ups_retried", default=False)
"""True while a caller that retries rate-limited calls itself scores an item (the runner, with its shared pause):
a scorer whose follow-up call (e.g. prompt alignment's judge-written reason) is rate limited then raises
:class:`FollowUpRateLimitedError` rather than returning the result without it."""


ITEM_GIVEN_UP: ContextVar[Callable[[], bool] | None] = ContextVar("item_given_up", default=None)
"""Set by the runner while a worker scores an item under a per-item timeout: says whether the item was given up
(recorded as timed out); its next judge call is then not sent (:class:`ItemGivenUpError`)."""


class FollowUpRateLimitedError(RateLimitedError):
    """A scored result's follow-up call (not the one that scored it) kept answering 429.

    Raised only when :data:`FOLLOW_UPS_RETRIED` is set. ``result`` is the result as it stands (the
    score and analysis, its reason saying the follow-up was rate limited, the usage so far);
    ``follow_up()`` makes only the follow-up call again and returns the whole result (or raises this
    again), so a retry never scores the item again. ``usage`` is None: what was spent is in ``result``.
    """

    def __init__(
        self,
        message: str,
        *,
        result: Any,
        follow_up: Callable[[], Any],
        retry_after: float | None = None,
        quota: bool = False,
    ):
        self.result = result
        self.follow_up = follow_up
        super().__init__(message, retry_after=retry_after, quota=quota)


class ContextWindowExceededError(JudgeError):
    """The judge prompt is longer than the model's context window."""

    status = ScoreStatus.EXCEEDS_CONTEXT


class JudgeAPIError(JudgeError):
    """Any other failure talking to the judge: HTTP errors, timeouts, connection errors.

    ``kind`` says which: ``"connection"``, ``"timeout"``, ``"auth"`` (401/403),
    ``"unknown_model"`` (404), ``"rejected"`` (400: a parameter or the request),
    ``"server"`` (5xx), ``"not_a_completion"`` or ``"other"``.
    """

    status = ScoreStatus.API_ERROR

    def __init__(self, message: str, *, kind: str = "other", raw_reply: str | None = None, usage: Any = None):
        self.kind = kind
        super().__init__(message, raw_reply=raw_reply, usage=usage)


class ItemGivenUpError(JudgeAPIError):
    """A judge call not sent: its item was given up at the per-item timeout (:data:`ITEM_GIVEN_UP`).

    ``usage`` is what the item's earlier calls in the same request spent (e.g. a reply re-asked); the runner
    recorded the item's outcome already and adds it there.
    """

    def __init__(self, usage: Any = None):
        super().__init__(
            "the item took longer than the per-item timeout: its further judge calls are not sent",
            kind="item_timeout",
            usage=usage,
        )
