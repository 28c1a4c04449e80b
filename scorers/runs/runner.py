"""``run_evals``: score a dataset with several scorers, concurrently, losing nothing.

The seeds' ``runEvals``, with what a batch needs: bounded concurrency, an
adaptive pause on rate limits that honours ``Retry-After``, a per-item
timeout, a status for every item × scorer (a failure is never a 0), results
written to the store as they finish, resume and retry of failed items, and
aggregates that count scored items only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import statistics
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from scorers.core import budget as budgets
from scorers.core.base import JudgeInfo, JudgeUsage, Scorer, ScoreResult
from scorers.core.budget import BudgetCaps, BudgetReached
from scorers.core.errors import (
    FOLLOW_UPS_RETRIED,
    ITEM_GIVEN_UP,
    ContextWindowExceededError,
    FollowUpRateLimitedError,
    JudgeConfigError,
    RateLimitedError,
    RunStatus,
    ScorerError,
    ScoreStatus,
)
from scorers.core.judge import CacheMiss, cache_probe, context_window, estimate_prompt_tokens
from scorers.core.pricing import JudgeSpend, Price, RunCost, cost_usd, estimate_tokens, price_for, run_cost
from scorers.runs.garbage import full_collections_deferred
from scorers.runs.judges import judge_record, limits_config, run_prices, spend_by_judge
from scorers.runs.scoring_process import (
    CHUNK_ITEMS,
    CHUNKS_IN_FLIGHT,
    ScoringProcess,
    ScoringProcessDied,
    head_start,
    outcomes_of,
    packed_scorers,
    process_count,
)
from scorers.runs.store import HEARTBEAT_STALE_S, RunHeartbeat, Store

if TYPE_CHECKING:
    import pandas as pd

_NO_USAGE = JudgeUsage()  # frozen: every outcome without a judge call shares it (one object less per outcome)

LOST_REASON = (
    f"Stopped: this process wrote no heartbeat for over {HEARTBEAT_STALE_S:g} s (the store was unreachable, or the "
    "process was suspended), so another process took the run as interrupted; its stored status is that process's."
)
"""Why a run stopped when another process marked it interrupted, or resumed it, while this one still scored it."""

DEFAULT_MAX_CONSECUTIVE_FAILURES = 5
"""Judge failures in a row (connection, auth, 5xx, timeout) after which a run pauses as ``judge_unreachable``."""

UNREACHABLE_KINDS = frozenset({"connection", "timeout", "auth", "server", "not_a_completion"})
"""``JudgeAPIError.kind`` values that say the judge cannot be reached (counted towards the pause)."""

UNUSABLE_REPLY_STATUSES = frozenset({ScoreStatus.JUDGE_OUTPUT_INVALID, ScoreStatus.JUDGE_REFUSED})
"""Outcomes whose judge answered but not usably (no valid reply after the re-ask, or a refusal): K of them in a row
(``max_consecutive_failures``) pause a run as ``judge_replies_unusable``."""

REPLY_SHOWN_CHARS = 200
"""Characters of the judge's first unusable reply that the pause's reason quotes."""

PREFLIGHT_KINDS = UNREACHABLE_KINDS - {"server"} | {"unknown_model", "rejected", "config"}
"""Failures of the first item that stop a run before it fans out (a 5xx may be passing; it is counted instead)."""


RESULT_COLUMNS: tuple[str, ...] = (
    "item_index",
    "scorer",
    "status",
    "score",
    "reason",
    "error",
    "prompt_tokens",
    "completion_tokens",
    "judge_calls",
    "judge_requests",
    "latency_s",
    "judge_model",
)
"""The result columns of a run's tables (:meth:`EvalRunResult.frame` adds ``item_id``; :attr:`scorers.runs.table.RunTable.results` adds the dimension columns)."""


@dataclass(frozen=True, slots=True)
class EvalItem:
    """One dataset row to score.

    Attributes:
        item_id: a stable id (the dataset's id column, or its row label).
        payload: a seed-shaped run payload (see :func:`scorers.core.base.normalize_run`).
        groups: values of the group-by columns, e.g. ``{"variant": "A"}``.
        columns: the row's other dataset columns (not mapped to a role), kept for exports.
    """

    item_id: str
    payload: dict[str, Any]
    groups: dict[str, Any] = field(default_factory=dict)
    columns: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ItemOutcome:
    """What one scorer made of one item.

    ``result`` is set exactly when ``status`` is ``SCORED``; otherwise ``error``
    says why and ``raw_reply`` keeps the judge's text when there was one.
    """

    item_index: int
    item_id: str
    scorer_id: str
    status: ScoreStatus
    result: ScoreResult | None = None
    error: str | None = None
    raw_reply: str | None = None
    usage: JudgeUsage = JudgeUsage()
    latency_s: float = 0.0
    error_kind: str | None = field(default=None, compare=False)
    """For a judge failure: ``JudgeAPIError.kind`` (``"connection"``, ``"auth"``, ...), ``"config"``, or None."""
    judge_used: dict[str, Any] | None = field(default=None, compare=False)
    """For a failure of an LLM-judged scorer: the judge it asked (base URL, model, parameters; never the key)."""

    @property
    def cached(self) -> bool:
        """True when the judge's reply came from the cache (no call was made, nothing was spent)."""
        return bool(self.result is not None and self.result.judge is not None and self.result.judge.cached)

    @property
    def score(self) -> float | None:
        return self.result.score if self.result is not None else None

    @property
    def judge_model(self) -> str | None:
        """The model of the judge that made this outcome (scored or failed), or None (no judge, or not recorded)."""
        if self.result is not None and self.result.judge is not None:
            return self.result.judge.model
        return (self.judge_used or {}).get("model")

    @property
    def asked_judge_model(self) -> str | None:
        """The model of the judge asked for this outcome: :attr:`judge_model`, but None for an outcome not scored
        for its input (``missing_input``, ``invalid_input``: no judge was asked, whatever judge it records)."""
        if self.status in (ScoreStatus.MISSING_INPUT, ScoreStatus.INVALID_INPUT):
            return None
        return self.judge_model

    def to_record(self) -> dict[str, Any]:
        """The row the store keeps for this outcome."""
        r = self.result
        return {
            "status": self.status.value,
            "score": r.score if r else None,
            "reason": r.reason if r else None,
            "analysis": r.analyze_step_result if r else None,
            "details": r.details if r else None,
            "judge": r.judge.to_dict() if r and r.judge else self.judge_used,
            "error": self.error,
            "raw_reply": self.raw_reply,
            "prompt_tokens": self.usage.prompt_tokens,
            "completion_tokens": self.usage.completion_tokens,
            "judge_calls": self.usage.calls,
            "judge_requests": self.usage.requests,
            "latency_s": self.latency_s,
        }


@dataclass(frozen=True)
class Summary:
    """Statistics of a set of scores: only scored items count; failures are counted apart.

    ``std`` is the sample standard deviation (n − 1); None where undefined.
    """

    n_scored: int
    n_failed: int
    mean: float | None
    median: float | None
    std: float | None
    min: float | None
    max: float | None

    @classmethod
    def of(cls, values: Sequence[float], n_failed: int = 0) -> Summary:
        """Summarise ``values`` (finite numbers) with ``n_failed`` items that have none."""
        if not values:
            return cls(0, n_failed, None, None, None, None, None)
        return cls(
            n_scored=len(values),
            n_failed=n_failed,
            mean=statistics.fmean(values),
            median=statistics.median(values),
            std=statistics.stdev(values) if len(values) > 1 else None,
            min=min(values),
            max=max(values),
        )


@dataclass(frozen=True)
class Estimate:
    """What a run is expected to cost before it starts.

    ``cost_usd`` is None when the judge model's price is unknown. With ``batch_api`` it is
    the Batch API's price (:data:`scorers.core.pricing.BATCH_DISCOUNT` off) and
    ``live_cost_usd`` what the same calls would cost live (None without ``batch_api``).
    """

    judge_calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    batch_api: bool = False
    live_cost_usd: float | None = None
    cached: int = 0
    """Item × scorer outcomes whose judge replies are all in the cache: free, not counted in calls and tokens."""
    too_long: int = 0
    """Item × scorer outcomes whose judge prompt is longer than the model's context window: refused before
    sending (status ``exceeds_context``, not scored), not counted in calls and tokens."""
    call_bound_usd: float | None = None
    """What a run's budget holds, USD at the live price, before sending a judge scorer's first call (the least of
    the judge scorers'): its prompt at one token per byte and its reply at the judge's max output tokens
    (:class:`scorers.core.budget.Budget`); None without a call to make or a price."""
    call_bound_tokens: int | None = None
    """The same bound in tokens (the least of the judge scorers' first calls), what a token cap must hold: the
    first call's prompt at one token per byte plus its reply at the judge's max output tokens; None without a call
    to make."""


@dataclass
class EvalRunResult:
    """The outcome of :func:`run_evals`.

    Attributes:
        run_id: the stored run's id (None without a store).
        outcomes: every item × scorer outcome known, in item order.
        status: a :class:`~scorers.RunStatus` value: ``"completed"``, ``"cancelled"``,
            ``"judge_unreachable"``, ``"quota_exhausted"``, ``"judge_replies_unusable"`` or ``"budget_reached"``.
        n_items: items in the dataset.
        batch_api: the judge calls went through the Batch API (billed at its price).
        stop_reason: why a run that is not completed stopped early, in a sentence, or None.
        cap_reached: for a ``"budget_reached"`` run, the cap it stopped at (a
            :class:`~scorers.core.budget.BudgetCaps` field, a key of :data:`~scorers.core.budget.CAP_FLAGS`), else None.
        prices: the judge prices set by the user (they override the list price), by judge model:
            a stored run's are those recorded with it (:func:`scorers.runs.judges.run_prices`).
        left_judge_requests: HTTP requests to the judge made for outcomes the run left to do (not among
            ``outcomes``: an item stopped at a cap, or in flight when the run paused); :attr:`usage` counts them.
        scorer_options: scorer id → the options it scored with, as the run records them (a scorer's
            options left out are its defaults; None for a scorer whose options are not known, a scorer
            of the caller's own class: :func:`recorded_options`); None when the result knows none.
            Exports carry them, so the gate can tell whether two results files measured the same thing.
    """

    run_id: str | None
    outcomes: list[ItemOutcome]
    status: str
    n_items: int
    scorer_ids: list[str]
    judge_model: str | None = None
    batch_api: bool = False
    stop_reason: str | None = None
    cap_reached: str | None = None
    prices: Mapping[str, Price] = dataclasses.field(default_factory=dict)
    left_judge_requests: int = 0
    scorer_options: Mapping[str, Mapping[str, Any] | None] | None = None

    @property
    def cache_hits(self) -> int:
        """Outcomes whose judge reply came from the cache (they cost nothing)."""
        return sum(o.cached for o in self.outcomes)

    def scores(self) -> dict[str, Summary]:
        """Per scorer: the :class:`Summary` of its scores (the seeds' ``result.scores``, with counts)."""
        out = {}
        for sid in self.scorer_ids:
            mine = [o for o in self.outcomes if o.scorer_id == sid]
            values = [o.score for o in mine if o.status is ScoreStatus.SCORED]
            out[sid] = Summary.of(values, n_failed=sum(o.status is not ScoreStatus.SCORED for o in mine))
        return out

    def dimensions(self, scorers: Sequence[Scorer]) -> dict[str, dict[str, Summary]]:
        """Per scorer and dimension: the :class:`Summary` of the 0..1 dimension scores of scored items.

        Each summary's ``n_failed`` is the number of the scorer's items that are not scored.
        """
        out: dict[str, dict[str, Summary]] = {}
        for scorer in scorers:
            split = getattr(scorer, "dimension_scores", None)
            if split is None:
                continue
            columns: dict[str, list[float]] = {}
            n_failed = 0
            for o in self.outcomes:
                if o.scorer_id != scorer.id:
                    continue
                if o.result is None:
                    n_failed += 1
                    continue
                for name, value in split(o.result.analyze_step_result).items():
                    columns.setdefault(name, []).append(value)
            out[scorer.id] = {name: Summary.of(values, n_failed=n_failed) for name, values in columns.items()}
        return out

    @property
    def usage(self) -> JudgeUsage:
        """Tokens, judge calls answered and HTTP requests sent (failed ones and retries included, those of the
        outcomes left to do too), re-asks included."""
        total = JudgeUsage(requests=self.left_judge_requests)
        for o in self.outcomes:
            total += o.usage
        return total

    @property
    def cost(self) -> RunCost:
        """Actual judge cost, each outcome's usage priced at the model of the judge that made it.

        A run resumed or retried with another judge holds outcomes of each; :attr:`prices` are
        the prices set per model. A Batch API run is counted at the Batch API's
        price (re-asks sent live included). Only outcomes that spent tokens are counted, as for a
        stored run (:func:`scorers.runs.judges.spend_by_judge`): a reply from the cache and an
        outcome not scored for its input were made by no judge call.
        """
        spend: dict[str | None, list[int]] = {}
        for o in self.outcomes:
            if not o.usage.prompt_tokens + o.usage.completion_tokens:
                continue
            entry = spend.setdefault(o.judge_model, [0, 0, 0])
            entry[0] += o.usage.prompt_tokens
            entry[1] += o.usage.completion_tokens
            entry[2] += 1
        return run_cost(
            (JudgeSpend(model, *entry) for model, entry in spend.items()),
            prices=self.prices,
            batch_api=self.batch_api,
        )

    @property
    def cost_usd(self) -> float | None:
        """Actual judge cost in USD (:attr:`cost`), or None when some outcomes' cost is unknown or no judge was used."""
        if self.judge_model is None:
            return None
        return self.cost.total_usd

    @property
    def n_failed(self) -> int:
        """Outcomes that are not scored."""
        return sum(o.status is not ScoreStatus.SCORED for o in self.outcomes)

    def to_frame(self) -> pd.DataFrame:
        """One row per item × scorer: ``item_index``, ``item_id``, ``scorer``, ``status``,
        ``score`` (float, NaN when not scored — never 0), ``reason``, ``error``,
        ``prompt_tokens``, ``completion_tokens``, ``judge_calls`` (answered), ``judge_requests`` (HTTP requests sent,
        failed ones and retries included), ``latency_s``, ``judge_model`` (the
        model of the judge that made the outcome; None for a code-based scorer and for an outcome not
        scored for its input, for which no judge was asked).

        :func:`scorers.runs.export.results_frame` adds the items' texts and groups.
        """
        import pandas as pd  # only here: the command line scores a run without importing pandas

        rows = [
            {
                "item_index": o.item_index,
                "item_id": o.item_id,
                "scorer": o.scorer_id,
                "status": o.status.value,
                "score": o.score if o.score is not None else float("nan"),
                "reason": o.result.reason if o.result else None,
                "error": o.error,
                "prompt_tokens": o.usage.prompt_tokens,
                "completion_tokens": o.usage.completion_tokens,
                "judge_calls": o.usage.calls,
                "judge_requests": o.usage.requests,
                "latency_s": o.latency_s,
                "judge_model": o.asked_judge_model,
            }
            for o in self.outcomes
        ]
        columns = ["item_index", "item_id", *RESULT_COLUMNS[1:]]
        frame = pd.DataFrame(rows, columns=columns if not rows else None)
        return frame.astype({"score": "float64"})


def judge_model_of(scorers: Sequence[Scorer]) -> str | None:
    """The judge model of the first LLM-judged scorer, or None when no scorer uses a judge."""
    for scorer in scorers:
        settings = getattr(scorer, "settings", None)
        if settings is not None:
            return settings.model_name
    return None


def estimate_run(
    items: Sequence[EvalItem],
    scorers: Sequence[Scorer],
    *,
    batch_api: bool = False,
    probe_cache: bool = False,
    price: Price | None = None,
) -> Estimate:
    """Judge calls, tokens and cost a run is expected to take (no call is made).

    Prompt tokens are the rendered judge prompts at 4 characters a token;
    completion tokens each scorer's typical reply, at most the judge's ``max_tokens`` when set. Items whose prompt cannot
    be rendered (invalid input) make no call and are not counted, nor are those
    the judge refuses before sending because the prompt is longer than the
    model's context window (counted in ``too_long``: every prompt of at least half
    the window goes through the judge's own check, :func:`scorers.core.judge.cache_probe`).

    Args:
        items: the items to score.
        scorers: the scorers; code-based ones cost nothing.
        batch_api: the calls go through the Batch API (billed at its discounted price).
        probe_cache: look every judged item up in its scorer's reply cache
            (:func:`scorers.core.judge.cache_probe`: the scorer runs, but a reply not in the
            cache stops it before any request); items answered from the cache are free and
            counted in ``cached``.
        price: a user-set price overriding the list price.

    Returns:
        The :class:`Estimate`; ``cost_usd`` None for a model not in the price table (0.0 when
        no call is left to make, e.g. every item is answered from the cache).
    """
    calls = prompt = completion = cached = too_long = 0
    bounds: list[CacheMiss] = []  # each judge scorer's first request, as a run's budget would reserve it
    for scorer in scorers:
        render = getattr(scorer, "render_prompt", None)
        if render is None:
            continue
        per_run = getattr(scorer, "judge_calls_per_run", 1)
        probe = probe_cache and getattr(scorer, "cache", None) is not None
        settings = getattr(scorer, "settings", None)
        window = context_window(settings) if settings is not None else None
        reply_tokens = scorer.expected_completion_tokens
        if settings is not None and settings.max_tokens:  # no reply is longer than the judge's max_tokens
            reply_tokens = min(reply_tokens, settings.max_tokens)
        first = True
        for item in items:
            try:
                messages = render(item.payload)
            except ScorerError:
                continue
            found = None
            if probe or (window is not None and estimate_prompt_tokens(messages) * 2 >= window):
                found = _probe(scorer, item)
                if found is ScoreStatus.EXCEEDS_CONTEXT:
                    too_long += 1
                    continue
                if found is ScoreStatus.SCORED and probe:
                    cached += 1
                    continue
            if first:  # the scorer's first call: what the budget would hold for it
                first = False
                found = found if isinstance(found, CacheMiss) else _probe(scorer, item)
                if isinstance(found, CacheMiss):
                    bounds.append(found)
            calls += per_run
            prompt += per_run * sum(estimate_tokens(m["content"]) for m in messages)
            completion += per_run * reply_tokens
    model = judge_model_of(scorers) if calls else None  # no call to make costs $0, whatever the model's price
    cost = cost_usd(model, prompt, completion, price, batch_api=batch_api) if model else 0.0
    model_price = price_for(model, price) if model else None  # as the run's budget prices a call (live)
    bound = (
        min((model_price.cost(b.prompt_bound, b.reply_bound) for b in bounds), default=None) if model_price else None
    )
    token_bound = min((b.prompt_bound + b.reply_bound for b in bounds), default=None)
    counts = {"cached": cached, "too_long": too_long, "call_bound_usd": bound, "call_bound_tokens": token_bound}
    if not batch_api:
        return Estimate(calls, prompt, completion, cost, **counts)
    live = cost_usd(model, prompt, completion, price) if model else 0.0
    return Estimate(calls, prompt, completion, cost, batch_api=True, live_cost_usd=live, **counts)


def _probe(scorer: Scorer, item: EvalItem) -> ScoreStatus | CacheMiss | None:
    """What scoring ``item`` would come to without sending anything (:func:`~scorers.core.judge.cache_probe`).

    Returns:
        ``SCORED`` when every reply it asks for is in the cache, ``EXCEEDS_CONTEXT`` when the judge
        refuses its prompt before sending, the :class:`CacheMiss` of the first request it would send (a cache
        miss, or a cached reply no longer valid, which would be asked again), None when the scorer fails first.
    """
    with cache_probe():
        try:
            scorer.run(item.payload)
        except ContextWindowExceededError:
            return ScoreStatus.EXCEEDS_CONTEXT
        except CacheMiss as miss:
            return miss
        except ScorerError:
            return None
    return ScoreStatus.SCORED


MAX_RATE_LIMIT_WAIT_S = 300.0
"""Seconds an item may spend rate limited, from its first try to its next retry: past this the item
ends as ``rate_limited`` (the openai client's own retries, which honour ``Retry-After``, count too)."""


def _backoff(retry_after: float | None, attempt: int) -> float:
    """The pause after a 429: the server's ``Retry-After``, else 0.5 · 2^attempt seconds, at most 30."""
    return retry_after if retry_after and retry_after > 0 else min(0.5 * 2**attempt, 30.0)


class _Throttle:
    """Shared across workers: pause everyone after a 429, and halve the parallelism.

    After a rate limit, no new judge work starts before ``Retry-After`` (or an
    exponential backoff) has passed, and at most half as many items run at once;
    each success afterwards gives one slot back, up to the configured concurrency.
    """

    def __init__(self, concurrency: int, cancel: threading.Event, halt: threading.Event):
        self.limit = concurrency
        self.allowed = concurrency
        self.active = 0
        self.resume_at = 0.0
        self.cancel = cancel
        self.halt = halt
        self.paused = ""  # why the run paused (an exhausted quota), or ""
        self._cond = threading.Condition(threading.Lock())  # never taken twice by one thread: no RLock needed
        self._waiting = 0  # threads waiting in acquire(): release() wakes them only when there are some

    def pause(self, reason: str) -> None:
        """Start no further judge work (an exhausted quota): the run stops, resumable, with ``reason``."""
        with self._cond:
            self.paused = self.paused or reason
            self._cond.notify_all()

    def acquire(self) -> bool:
        with self._cond:
            while True:
                if self.cancel.is_set() or self.halt.is_set() or self.paused:
                    return False
                delay = self.resume_at - time.monotonic()
                if delay <= 0 and self.active < self.allowed:
                    self.active += 1
                    return True
                self._waiting += 1
                try:
                    self._cond.wait(timeout=max(0.01, min(delay, 0.2)) if delay > 0 else 0.2)
                finally:
                    self._waiting -= 1

    def release(self, *, rate_limited: bool, retry_after: float | None, attempt: int) -> None:
        with self._cond:
            self.active -= 1
            if rate_limited:
                pause = _backoff(retry_after, attempt)
                self.resume_at = max(self.resume_at, time.monotonic() + pause)
                self.allowed = max(1, self.allowed // 2)
            elif self.allowed < self.limit:
                self.allowed += 1
            if self._waiting:
                self._cond.notify_all()


WRITE_BATCH = 500
"""Outcomes the runner writes to the store in one transaction, about: a full batch is handed to the
run's main thread to write; a worker that finds two batches waiting writes them itself."""

WRITE_INTERVAL_S = 0.5
"""Seconds a finished outcome waits, at most, before it is written (while the store keeps up): a crash
loses at most this window, and never more than about 4 × :data:`WRITE_BATCH` outcomes."""


class _ResultWriter:
    """Writes finished outcomes to the store in batches: one transaction per :data:`WRITE_BATCH`
    outcomes, or per :data:`WRITE_INTERVAL_S` seconds when fewer finish (SQLite commits, not
    rows, are what cost: one per outcome took most of a fast scorer's time).

    Workers :meth:`add` an outcome and go on scoring; a full batch sets ``wake``, and the run's main
    thread writes it (:meth:`flush_if_due`), so that the store's own work, which releases the GIL
    (SQLite's inserts, commits and checkpoints with their fsyncs), overlaps the scoring. A worker
    that finds two batches waiting (the store is slower than the scoring) writes them itself, after
    the write under way. Leaving the ``with`` block writes the rest, whatever happened (an outcome
    added after that is written at once). Without a store it does nothing.
    """

    def __init__(self, store: Store | None, run_id: str | None, wake: threading.Event):
        self.store = store
        self.run_id = run_id
        self.wake = wake
        self._pending: list[ItemOutcome] = []
        self._oldest = 0.0
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()  # batches reach the store in the order they were taken
        self._closed = False

    def __enter__(self) -> _ResultWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.flush()
        self._closed = True

    def add(self, outcome: ItemOutcome) -> None:
        if self.store is None:
            return
        if self._closed:  # recorded after the workers stopped: written at once
            self._write([outcome])
            return
        with self._lock:
            if not self._pending:
                self._oldest = time.monotonic()
            self._pending.append(outcome)
            waiting = len(self._pending)
        if waiting >= 2 * WRITE_BATCH:
            self.flush()
        elif waiting >= WRITE_BATCH:
            self.wake.set()

    def due_in(self) -> float | None:
        """Seconds until the oldest outcome waiting is due (:data:`WRITE_INTERVAL_S` when none waits);
        None without a store."""
        if self.store is None:
            return None
        with self._lock:
            if not self._pending:
                return WRITE_INTERVAL_S
            return max(0.0, self._oldest + WRITE_INTERVAL_S - time.monotonic())

    def flush_if_due(self) -> None:
        """Write the outcomes waiting when they fill a batch or the oldest has waited :data:`WRITE_INTERVAL_S`."""
        with self._lock:
            waiting = len(self._pending)
            due = waiting >= WRITE_BATCH or (waiting > 0 and time.monotonic() - self._oldest >= WRITE_INTERVAL_S)
        if due:
            self.flush()

    def flush(self) -> None:
        with self._write_lock:
            with self._lock:
                batch, self._pending = self._pending, []
            if batch:
                self._write(batch)

    def _write(self, outcomes: list[ItemOutcome]) -> None:
        # Each record is made as the store encodes its row, and dropped at once: a batch of records
        # held until the write would outlive young garbage collections (and make the old ones run).
        self.store.save_results(self.run_id, ((o.item_index, o.scorer_id, o.to_record()) for o in outcomes))


def _as_items(data: Iterable[EvalItem | Mapping[str, Any]]) -> list[EvalItem]:
    items = []
    for i, entry in enumerate(data):
        if isinstance(entry, EvalItem):
            items.append(entry)
        else:
            payload = {k: v for k, v in entry.items() if k not in ("id", "groups")}
            items.append(EvalItem(str(entry.get("id", i)), payload, dict(entry.get("groups") or {})))
    return items


class OpenedRun(NamedTuple):
    """A run opened by :func:`open_run`, new or resumed."""

    run_id: str | None
    """The stored run's id (None without a store)."""
    items: list[EvalItem]
    known: dict[tuple[int, str], ItemOutcome]
    """The outcomes already stored, by ``(item_index, scorer_id)``: without the failed ones when retrying them."""
    retried: dict[tuple[int, str], ItemOutcome]
    """Each failed outcome about to be retried, as stored: its new row adds what it spent, and until it is recorded
    again its stored row stands (:func:`run_outcomes`)."""
    spent: JudgeUsage
    """What every stored outcome of the run spent (a budget counts it), retried failures included, and the requests
    it made for outcomes it left to do (its ``left_judge_requests``)."""


def open_run(
    data: Iterable[EvalItem | Mapping[str, Any]],
    scorers: Sequence[Scorer],
    *,
    store: Store | None,
    run_id: str | None,
    retry_failed: bool,
    dataset_name: str,
    run_name: str | None,
    mapping: Mapping[str, Any] | None,
    scorer_options: Mapping[str, Mapping[str, Any]] | None,
    run_config: Mapping[str, Any],
) -> OpenedRun:
    """Record a new run in ``store`` (when given), or load the stored run ``run_id`` to resume it.

    The stored outcomes are read once: what they spent is summed in the same pass.

    Args: as :func:`run_evals`; ``run_config`` is recorded as the run's config.

    Returns:
        The :class:`OpenedRun`.

    Raises:
        ValueError: duplicate scorer ids, or ``run_id`` without ``store``.
        KeyError: ``run_id`` is not in the store.
    """
    scorer_ids = [s.id for s in scorers]
    if len(set(scorer_ids)) != len(scorer_ids):
        raise ValueError(f"scorer ids must be distinct, got {scorer_ids}")
    known: dict[tuple[int, str], ItemOutcome] = {}
    if run_id is not None:
        if store is None:
            raise ValueError("resuming a run needs the store it is in")
        store.claim_run(run_id)  # the stored status says "running" while it is scored (KeyError if unknown)
        items = [EvalItem(r["item_id"], r["payload"], r["groups"], r["columns"]) for r in store.items(run_id)]
        spent = JudgeUsage(requests=store.get_run(run_id)["left_judge_requests"])
        retried: dict[tuple[int, str], ItemOutcome] = {}
        for row in store.results(run_id):
            usage = stored_usage(row)
            spent += usage  # every stored row, those of scorers not resumed included
            if row["scorer_id"] not in scorer_ids:  # resumed with fewer scorers: their rows stay stored
                continue
            outcome = outcome_from_record(row, items[row["item_index"]].item_id)
            key = (outcome.item_index, outcome.scorer_id)
            if retry_failed and outcome.status.retryable:
                retried[key] = outcome
            else:
                known[key] = outcome
        return OpenedRun(run_id, items, known, retried, spent)
    items = _as_items(data)
    if store is not None:
        run_id = store.create_run(
            dataset_name=dataset_name,
            items=[(it.item_id, it.payload, it.groups, it.columns) for it in items],
            scorers=[
                {"id": s.id, "name": s.name, "options": options}
                for s, options in zip(scorers, recorded_options(scorers, scorer_options).values(), strict=True)
            ],
            judge=_judge_description(scorers),
            mapping=dict(mapping) if mapping is not None else None,
            config=dict(run_config),
            name=run_name,
        )
    return OpenedRun(run_id, items, known, {}, JudgeUsage())


def run_evals(
    data: Iterable[EvalItem | Mapping[str, Any]],
    scorers: Sequence[Scorer],
    *,
    concurrency: int = 8,
    item_timeout: float | None = None,
    max_rate_limit_retries: int = 3,
    on_item_complete: Callable[[int, EvalItem, list[ItemOutcome]], None] | None = None,
    store: Store | None = None,
    run_id: str | None = None,
    retry_failed: bool = False,
    dataset_name: str = "dataset",
    run_name: str | None = None,
    mapping: Mapping[str, Any] | None = None,
    scorer_options: Mapping[str, Mapping[str, Any]] | None = None,
    run_config: Mapping[str, Any] | None = None,
    cancel: threading.Event | None = None,
    preflight: bool = True,
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES,
    budget: BudgetCaps | None = None,
    price: Price | None = None,
) -> EvalRunResult:
    """Score every item with every scorer (the seeds' ``runEvals``), once each.

    A run that uses a judge fails fast: the first item is scored alone before the
    rest fan out, and when the judge cannot be used there (connection, timeout, auth,
    unknown model, rejected parameters, no key) the run stops as ``judge_unreachable``
    with that error and sends nothing else. During the run, ``max_consecutive_failures``
    judge failures in a row that say the judge is unreachable (connection, timeout,
    auth, 5xx) pause it as ``judge_unreachable``: no new call is made, and the items
    those failures hit are left unscored rather than recorded as failed (a resume
    scores them). As many judge replies in a row that are unusable (invalid output
    after the re-ask, or refusals: :data:`UNUSABLE_REPLY_STATUSES`) pause it as
    ``judge_replies_unusable``; those outcomes are recorded (they were paid for). With a ``budget``, a judge call that could pass a cap is not sent and
    the run ends as ``budget_reached`` (see :mod:`scorers.core.budget`). Both can be
    resumed.

    Args:
        data: :class:`EvalItem` objects, or seed items (``{"input", "output",
            "groundTruth"?, "id"?, "groups"?}``). Ignored when resuming ``run_id``,
            whose stored items are used.
        scorers: scorers with distinct ids.
        concurrency: items scored at once, >= 1 (Mastra's default is 1; ours 8). When every
            scorer is CPU-bound (``cpu_bound = True``, see :class:`~scorers.core.base.Scorer`:
            the code-based scorers) one worker thread scores the items in turn, whatever the
            concurrency: threads cannot run Python code at the same time, and several would only
            contend for the GIL. Cancel, the per-item timeout and ``on_item_complete`` work as
            with more workers. A large run of such scorers (:data:`~scorers.runs.scoring_process.PROCESS_MIN_ITEMS`
            items or more, more than one CPU, scorers that pickle) is scored in worker processes
            (:mod:`scorers.runs.scoring_process`, one per CPU, at most ``MAX_PROCESSES``) while this
            process records and writes the outcomes: the same outcomes, in the same order; if one dies the run ends
            ``interrupted`` (what came back is stored; a resume scores the rest). While such a run
            scores, the process's full garbage collections wait until it ends
            (:func:`~scorers.runs.garbage.full_collections_deferred`; young ones go on).
        item_timeout: seconds one item may take for all its scorers, counting its own work
            only: its clock stops while it waits for other items (its turn for the budget's
            first reservations, the probation turn, a reservation waiting for the judge calls
            in flight). An item past it is recorded as an API error for the scorers not yet
            done, and sends no further judge call. The judge call it stopped waiting for goes
            on in its worker (the run waits for it before it ends): when it is answered, what
            it spent is added to that outcome's usage (a provider bills it), so the run's usage
            and cost count it. None: no limit beyond the judge's own HTTP timeout.
        max_rate_limit_retries: times an item that stayed rate limited (after the
            client's own retries) is tried again after the shared pause; an item never
            waits more than :data:`MAX_RATE_LIMIT_WAIT_S` in all. An exhausted quota or
            daily limit (429 ``insufficient_quota``) is not retried and pauses the run: no
            further item starts, the items it hit are left to do (not recorded as failed), the run
            ends ``quota_exhausted`` (resume it once the quota is back) and
            ``EvalRunResult.stop_reason`` says why.
        on_item_complete: called as ``(item_index, item, outcomes)`` when an item is
            finished, from a worker thread.
        store: where the run, its items and every outcome are written as they finish
            (in batches: one transaction per :data:`WRITE_BATCH` outcomes or
            :data:`WRITE_INTERVAL_S` seconds, written by the calling thread while the workers
            score, so a crash loses at most that window).
        run_id: resume this stored run (requires ``store``): items with an outcome
            for every scorer are not scored again.
        retry_failed: with ``run_id``, also re-score the failed outcomes (``ScoreStatus.retryable``; an
            outcome with a missing or invalid input would come out the same and is kept). A retried
            outcome's usage adds what its failed attempt spent, so the run's spend counts every call.
        dataset_name: the dataset's name, for the stored run.
        run_name: the stored run's display name (default: dataset and date).
        mapping: the dataset's column mapping, recorded with the run.
        scorer_options: each scorer's options by id, recorded so the run can be rebuilt
            (:func:`scorers.catalogue.registry.create_scorer`) and resumed later.
        run_config: other options to record with the run.
        cancel: set it to stop: items not started are left unscored (resumable).
        preflight: score the first item alone before the others (only when a scorer uses a judge); and, with
            ``max_consecutive_failures``, the judge scorers one item at a time until the judge's first usable
            reply and after an unusable one (a judge whose replies are all unusable costs K items).
        max_consecutive_failures: K >= 1, or None to never pause: unreachable-judge failures
            in a row, and unusable replies in a row, that pause the run.
        budget: caps on judge calls, tokens and cost for the whole run (a resumed run
            counts what its stored outcomes spent, each at its own judge's price), or None. A
            resume given caps stores them in the run's config (they replace the recorded ones).
        price: the price per million tokens of the judge model of ``scorers``, overriding its
            list price (for the cost cap and :attr:`EvalRunResult.cost_usd`). A resume given a
            price stores it in the run's config for that model (:func:`scorers.runs.judges.limits_config`),
            so the run's stored cost (History, the report) prices that model's outcomes as this run
            did; a resume without one uses the price recorded for that model, else its list price.
            Other models' outcomes get the prices recorded for them, else their list price.

    Returns:
        The :class:`EvalRunResult` with every known outcome, resumed ones included.

    Raises:
        ValueError: concurrency < 1, max_consecutive_failures < 1, duplicate scorer ids,
            ``run_id`` without ``store``, a cost cap for a model without a price, or a cost cap
            on a resumed run whose earlier outcomes were judged by a model without a price.
        KeyError: ``run_id`` is not in the store.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    if max_consecutive_failures is not None and max_consecutive_failures < 1:
        raise ValueError(f"max_consecutive_failures must be >= 1 (or None), got {max_consecutive_failures}")
    scorer_ids = [s.id for s in scorers]
    cancel = cancel or threading.Event()
    judge_model = judge_model_of(scorers)
    prices: dict[str, Price] = {judge_model: price} if judge_model and price is not None else {}
    new_config = None  # a resume's caps and price, to store once they are checked
    # What the run records as its scorers' options (as open_run stores them), for its exports.
    run_options: Mapping[str, Mapping[str, Any] | None] = recorded_options(scorers, scorer_options)
    if run_id is not None and store is not None:
        stored = store.get_run(run_id)
        run_options = recorded_scorer_options(stored)
        new_config = limits_config(stored, judge_model, budget=budget, price=price)
        prices = run_prices({**stored, "config": new_config})
        price = prices.get(judge_model) if judge_model else price  # given, else recorded for this model
    guard = None
    if budget is not None and budget.any:
        model_price = price_for(judge_model, price) if judge_model else price
        guard = budgets.Budget(budget, price=model_price)  # ValueError: a cost cap without a price
    earlier_cost: float | None = 0.0
    if guard is not None and run_id is not None and store is not None:
        # What the run spent before, each outcome at its own judge's price (a resume may change the judge),
        # checked before the run is claimed: a cost cap cannot be kept when that is unknown.
        earlier = run_cost(spend_by_judge(store, run_id), prices=prices)
        if earlier.unpriced and budget.max_cost_usd is not None:
            raise ValueError(
                f"a cost cap needs the cost of what the run spent before, and it is {earlier.unknown_text()}"
            )
        earlier_cost = earlier.total_usd
    if new_config is not None and new_config != (stored.get("config") or {}):
        store.set_run_config(run_id, new_config)
    first_item = [preflight and judge_model is not None]  # while True: the pre-flight item is being scored
    # A new run large enough for the worker processes starts them first, and sends them the first items
    # (scoring_process.head_start): their start-up (mostly imports) and their scoring overlap the
    # recording of the run and its items.
    packed = packed_scorers(scorers, len(data)) if run_id is None and isinstance(data, Sized) else None
    children = [ScoringProcess(packed) for _ in range(process_count())] if packed is not None else []
    # Per chunk sent, oldest first: the child it went to and [(item index, scorers asked)]. Chunks go to the
    # children in turn and come back in the order sent, so the outcomes are recorded in item order.
    sent: deque[tuple[ScoringProcess, list[tuple[int, int]]]] = deque()
    try:
        if children and not first_item[0]:
            data = _as_items(data)
            ahead = head_start(len(data), CHUNK_ITEMS)
            for n, at in enumerate(range(0, ahead, CHUNK_ITEMS)):
                chunk = range(at, min(at + CHUNK_ITEMS, ahead))
                child = children[n % len(children)]
                child.submit([(i, data[i].item_id, data[i].payload, None) for i in chunk])  # None: every scorer
                sent.append((child, [(i, len(scorers)) for i in chunk]))
        run_id, items, known, retried, spent = open_run(
            data,
            scorers,
            store=store,
            run_id=run_id,
            retry_failed=retry_failed,
            dataset_name=dataset_name,
            run_name=run_name,
            mapping=mapping,
            scorer_options=scorer_options,
            run_config=dict(run_config or {}, concurrency=concurrency, item_timeout=item_timeout),
        )
    except BaseException:
        for child in children:
            child.close()
        raise
    if guard is not None:  # a budget is for the whole run: what was spent before counts
        guard.count_earlier(spent.requests, spent.prompt_tokens, spent.completion_tokens, earlier_cost)

    lock = threading.Lock()
    halt = threading.Event()  # the run pauses (judge unreachable, budget reached): start nothing new
    halted: list[str] = []  # [status, reason] of the first halt
    throttle = _Throttle(concurrency, cancel, halt)
    wake = threading.Event()  # set when a worker ends or a batch of outcomes waits to be written
    writer = _ResultWriter(store if run_id is not None else None, run_id, wake)
    streak: list[ItemOutcome] = []  # unreachable-judge failures in a row, held back until the streak ends
    unusable: list[ItemOutcome] = []  # judge replies in a row that were invalid or refusals (recorded: they were paid)

    def halt_with(status: RunStatus, reason: str) -> None:
        with lock:
            if not halted:
                halted[:] = [status.value, reason]
        halt.set()

    # A budget reached holds only the judge calls: the scorers that call no judge go on scoring every item.
    capped: list[BudgetReached] = []  # the cap, once a judge call was not sent for the budget

    def hold_judge(reached: BudgetReached) -> None:
        with lock:
            if not capped:
                capped.append(reached)

    left = [0]  # HTTP requests to the judge made for outcomes left to do (not recorded): the run stores them apart

    def leave(requests: int) -> None:
        """Count the requests of an outcome left to do."""
        with lock:
            left[0] += requests

    def record(outcome: ItemOutcome) -> bool:
        key = (outcome.item_index, outcome.scorer_id)
        # What a retried failure spent stays in the run: its new row carries it (the usage of an outcome counts
        # every attempt, as the runner's own retries do), so the run's spend adds up across retries.
        if key in retried:
            outcome = dataclasses.replace(outcome, usage=outcome.usage + retried[key].usage)
        with lock:
            if key in known:  # exactly once: a late result after a timeout is dropped, but not what it spent
                if outcome.item_index not in timed_out:
                    left[0] += outcome.usage.requests
                    return False
                if not outcome.usage.requests:
                    return False
                # The abandoned judge call sent requests (an answer is billed): the timed-out outcome carries them.
                outcome = known[key] = dataclasses.replace(known[key], usage=known[key].usage + outcome.usage)
            else:
                known[key] = outcome
        writer.add(outcome)  # a timed-out outcome written already is replaced (the store's rows are upserts)
        return True

    def settle(outcome: ItemOutcome) -> None:
        """Record an outcome, holding back unreachable-judge failures until the judge answers again."""
        kind = outcome.error_kind if outcome.status is not ScoreStatus.SCORED else None
        if first_item[0] and kind in PREFLIGHT_KINDS:
            leave(outcome.usage.requests)  # the first item is left to do
            halt_with(
                RunStatus.JUDGE_UNREACHABLE,
                f"The judge could not be used for the first item, so nothing else was sent: {outcome.error}",
            )
            return
        if kind in UNREACHABLE_KINDS:
            with lock:
                if halt.is_set():  # paused: the items still in flight stay unscored, not failed
                    left[0] += outcome.usage.requests
                    return
                streak.append(outcome)
                if max_consecutive_failures is None or len(streak) < max_consecutive_failures:
                    return
                left[0] += sum(o.usage.requests for o in streak)  # the items they hit are left to do
                streak.clear()
            halt_with(
                RunStatus.JUDGE_UNREACHABLE,
                f"Paused after {max_consecutive_failures} judge failures in a row, no answer between them: the "
                f"judge is unreachable or failing (the last: {outcome.error}). The items they hit are left to do.",
            )
            return
        flushed: list[ItemOutcome] = []
        if outcome.usage.calls:  # the judge answered: the failures before were passing ones
            with lock:
                flushed, streak[:] = list(streak), []
        for held in flushed:
            record(held)
        if record(outcome):
            count_unusable(outcome)

    def count_unusable(outcome: ItemOutcome) -> None:
        """Count the judge's unusable replies in a row (invalid output, refusals); K of them pause the run."""
        if outcome.status in UNUSABLE_REPLY_STATUSES:
            if probation:
                on_probation.set()  # one judge scorer at a time until a usable reply
            with lock:
                unusable.append(outcome)
                if max_consecutive_failures is None or len(unusable) < max_consecutive_failures:
                    return
                hit, unusable[:] = list(unusable), []
            halt_with(RunStatus.JUDGE_REPLIES_UNUSABLE, unusable_replies_reason(hit))
        elif outcome.usage.calls or (outcome.result is not None and outcome.result.judge is not None):
            if outcome.result is not None and outcome.result.judge is not None:
                on_probation.clear()  # a usable reply: the run's concurrency again
            with lock:  # the judge gave a usable reply (or another failure): the count starts again
                unusable.clear()

    # Until the judge's first usable reply, and after an unusable one, the judge scorers score one item at a time,
    # each up to its outcome's count (so a K-th unusable reply in a row pauses the run before another call starts):
    # a judge whose replies are all unusable costs K items, not K plus the items the other workers had in flight.
    probation = preflight and max_consecutive_failures is not None and judge_model is not None
    on_probation = threading.Event()
    if probation:
        on_probation.set()
    probation_turn = threading.Lock()

    def take_turn(index: int, scorer: Scorer) -> bool | None:
        """Wait for this judge scorer's turn while on probation: True when taken (release it after the outcome is
        counted), False when no turn is needed, None when the run stopped meanwhile. The item's clock stops
        while it waits."""
        if _judge_used(scorer) is None or not on_probation.is_set():
            return False
        clock(index, waiting=True)
        try:
            while on_probation.is_set():
                if probation_turn.acquire(timeout=0.1):
                    return True
                if cancel.is_set() or halt.is_set() or stop.is_set() or throttle.paused:
                    return None
            return False
        finally:
            clock(index, waiting=False)

    # The per-item timeout counts the item's own work: its clock stops while it waits for other items (its budget
    # turn, the probation turn, a reservation waiting for the calls in flight).
    running: dict[int, float] = {}  # item index -> when its clock started (time.monotonic(), less the time used)
    used: dict[int, float] = {}  # item index -> the time it used before the wait it is in now
    timed_out: set[int] = set()

    def clock(index: int, *, waiting: bool) -> None:
        """Stop ``index``'s clock while it waits for other items (``waiting``), start it again after."""
        with lock:
            if waiting:
                if index in running:
                    used[index] = time.monotonic() - running.pop(index)
            elif index in used:
                running[index] = time.monotonic() - used.pop(index)

    stop = threading.Event()  # a scorer raised: start no further item
    if guard is not None:  # a judge call waiting for the calls in flight is not sent once the run stops
        guard.stopped = lambda: cancel.is_set() or halt.is_set() or stop.is_set() or bool(throttle.paused)
        guard.waiting = lambda unit, waiting: clock(unit[0], waiting=waiting) if isinstance(unit, tuple) else None

    def score_item(index: int) -> None:
        with lock:
            running[index] = time.monotonic()
        item = items[index]
        # A judge call of an item given up at the timeout is not sent (the timeout is its outcome).
        given_up = ITEM_GIVEN_UP.set((lambda: index in timed_out) if item_timeout is not None else None)
        try:
            for scorer in scorers:
                with lock:
                    skip = (index, scorer.id) in known or (capped and getattr(scorer, "settings", None) is not None)
                if skip:
                    if guard is not None:
                        guard.end_turn((index, scorer.id))
                    continue
                # The budget's first reservations are taken in item order (Budget.turn), waited for before the
                # probation turn and the throttle's slot, so an earlier item never waits for this one.
                with guard.turn((index, scorer.id)) if guard is not None else contextlib.nullcontext(True) as ready:
                    if not ready:  # the run stopped while an earlier item's judge call had still to reserve
                        return
                    turn = take_turn(index, scorer)
                    if turn is None:  # cancelled or paused while waiting for its turn
                        return
                    try:
                        outcome = _score_with_retries(
                            scorer, index, item, throttle, max_rate_limit_retries, hold_judge, leave
                        )
                        if (
                            outcome is None and capped and not (halt.is_set() or cancel.is_set())
                        ):  # its judge call waits for the budget
                            continue
                        if outcome is None:  # cancelled or paused while waiting
                            return
                        settle(outcome)
                    finally:
                        if turn:
                            probation_turn.release()
        finally:
            ITEM_GIVEN_UP.reset(given_up)
            if guard is not None:
                # Every turn of the item ends, those of the scorers after an early return too: later items never
                # wait for them, whatever the budget's stopped() says.
                for scorer in scorers:
                    guard.end_turn((index, scorer.id))
            with lock:
                running.pop(index, None)  # (the worker process's watch may have cleared it)
                used.pop(index, None)
        if on_item_complete is not None:
            with lock:
                mine = [known[(index, s.id)] for s in scorers if (index, s.id) in known]
            if len(mine) == len(scorers) or not (halt.is_set() or capped):
                on_item_complete(index, item, mine)

    todo = [i for i in range(len(items)) if any((i, s.id) not in known for s in scorers)]
    if guard is not None:  # the calls a cap admits are a prefix in item order, at any concurrency
        judged = [s.id for s in scorers if _judge_used(s) is not None]
        guard.order((i, sid) for i in todo for sid in judged if (i, sid) not in known)
    first = todo.pop(0) if first_item[0] and todo else None  # scored alone before the others (fail fast)
    next_index = iter(todo)

    def score_first(index: int) -> None:
        with budgets.active(guard):
            score_item(index)

    def work() -> None:
        # Each worker takes the next item itself. (One future per item made every completion
        # a round trip through this thread, and wait() scans every future it is given: O(items).)
        try:
            with budgets.active(guard):
                while not (cancel.is_set() or stop.is_set() or halt.is_set() or throttle.paused):
                    with lock:
                        index = next(next_index, None)
                    if index is None:
                        return
                    score_item(index)
        except BaseException:
            stop.set()
            raise

    def work_in_process(children: list[ScoringProcess]) -> None:
        # The one worker hands the items to the child processes in chunks, in turn, a few ahead of each, and
        # records what comes back in the order sent: the scoring and this process's bookkeeping and writes
        # use the machine's cores. The head start sent before the run was recorded is todo's first items (a
        # new run's todo is every item).
        ahead = sum(len(chunk) for _, chunk in sent)
        chunks = (todo[at : at + CHUNK_ITEMS] for at in range(ahead, len(todo), CHUNK_ITEMS))
        in_flight = sent
        n_back = 0  # chunks come back in the order sent: chunk k went to children[k % len(children)]
        try:
            while True:
                stopping = cancel.is_set() or stop.is_set()
                if stopping:
                    for child in children:
                        child.stop()  # the chunks sent end after the item the child is scoring
                while (
                    not stopping and len(in_flight) < CHUNKS_IN_FLIGHT * len(children) and (chunk := next(chunks, None))
                ):
                    with lock:
                        asked = [(i, [k for k, s in enumerate(scorers) if (i, s.id) not in known]) for i in chunk]
                    every = len(scorers)
                    child = children[(len(in_flight) + n_back) % len(children)]  # the next in turn
                    child.submit(
                        [
                            (i, items[i].item_id, items[i].payload, None if len(which) == every else tuple(which))
                            for i, which in asked
                        ]
                    )
                    in_flight.append((child, [(i, len(which)) for i, which in asked]))
                if not in_flight:
                    return
                now = [c.current() for c in children]  # for the per-item timeout, watched by the run's thread
                with lock:
                    running.clear()
                    running.update(current for current in now if current is not None)
                try:
                    back = in_flight[0][0].result(timeout=0.2)  # the oldest chunk's child
                except ScoringProcessDied as exc:
                    with lock:
                        done = sum(all((i, s.id) in known for s in scorers) for i in range(len(items)))
                    halt_with(
                        RunStatus.INTERRUPTED,
                        f"The process scoring the items stopped unexpectedly ({exc}; killed, or out of memory) "
                        f"with {done} of {len(items)} items done. Resume the run to score the others.",
                    )
                    return
                if back is None:  # not yet
                    continue
                rows, error = back
                outcomes = outcomes_of(rows, items, scorers)
                _, asked_of = in_flight.popleft()
                n_back += 1
                for outcome in outcomes:
                    settle(outcome)
                if on_item_complete is not None:
                    ended = Counter(o.item_index for o in outcomes)
                    for index, n_asked in asked_of:
                        if ended[index] == n_asked:  # every scorer asked is done (not stopped, no bug)
                            with lock:
                                mine = [known[(index, s.id)] for s in scorers if (index, s.id) in known]
                            on_item_complete(index, items[index], mine)
                if error is not None:
                    raise error
        except BaseException:
            stop.set()
            raise
        finally:
            with lock:
                running.clear()
            for child in children:
                child.close()

    def watch(workers: set[Future[None]]) -> None:
        """Wait for ``workers``, writing the outcomes as they are due and timing out the items past the timeout."""
        for worker in workers:
            worker.add_done_callback(lambda _: wake.set())
        while workers:
            timeout = writer.due_in()
            if item_timeout is not None:
                with lock:
                    starts = [t for i, t in running.items() if i not in timed_out]
                # No item running on time: look again shortly for the next one to start.
                until = max(0.0, min(starts) + item_timeout - time.monotonic()) if starts else 0.1
                timeout = until if timeout is None else min(timeout, until)
            wake.wait(timeout)
            wake.clear()  # what set it is looked at below; a later set wakes the next wait
            writer.flush_if_due()
            done = {worker for worker in workers if worker.done()}
            workers -= done
            for worker in done:
                worker.result()  # a bug in a scorer is not an item outcome: let it surface
            if item_timeout is not None:
                now = time.monotonic()
                with lock:
                    late = {i: t for i, t in running.items() if i not in timed_out and now - t >= item_timeout}
                    timed_out.update(late)
                for index, started in late.items():  # its worker finishes later; record() drops what it brings
                    for scorer in scorers:
                        record(
                            ItemOutcome(
                                index,
                                items[index].item_id,
                                scorer.id,
                                ScoreStatus.API_ERROR,
                                error=f"the item took longer than the per-item timeout of {item_timeout:g} s",
                                latency_s=now - started,  # how long it ran until given up: >= the timeout
                                judge_used=_judge_used(scorer),
                            )
                        )

    parallel = 1 if all(getattr(s, "cpu_bound", False) for s in scorers) else concurrency
    # The writer exits last: after the workers have stopped, what they finished is written. A run of code
    # scorers defers the full garbage collections (scorers.runs.garbage) while its outcomes pile up.
    # While it is scored, the run's heartbeat tells the other processes that this one is alive (store.RunHeartbeat).
    heartbeat = RunHeartbeat(store, run_id, cancel.set) if store is not None and run_id is not None else None
    with (
        full_collections_deferred() if parallel == 1 else contextlib.nullcontext(),
        heartbeat or contextlib.nullcontext(),
        writer,
        ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="run_evals") as pool,
    ):
        try:
            if first is not None:  # alone, and under the per-item timeout as every item is
                watch({pool.submit(score_first, first)})
                first_item[0] = False
            n_workers = 0 if halt.is_set() else min(parallel, len(todo))
            if not children and n_workers and (packed := packed_scorers(scorers, len(todo))) is not None:
                children = [
                    ScoringProcess(packed) for _ in range(process_count())
                ]  # a resumed run: its items are known now
            elif children and not n_workers:  # nothing to score after all
                for child in children:
                    child.close()
                children = []
            watch({pool.submit(work_in_process, children) if children else pool.submit(work) for _ in range(n_workers)})
        except BaseException:
            stop.set()
            raise

    for held in streak:  # fewer than K in a row at the end: they are ordinary failures, or left to do once paused
        if halt.is_set():
            leave(held.usage.requests)
        else:
            record(held)
    complete = all((i, s.id) in known for i in range(len(items)) for s in scorers)
    if complete:
        status, reason = RunStatus.COMPLETED.value, None
    elif halted:
        status, reason = halted
    elif capped and not cancel.is_set():
        status = RunStatus.BUDGET_REACHED.value
        reason = budget_stop_reason(capped[0], run_id, free=any(_judge_used(s) is None for s in scorers))
    elif throttle.paused:
        status = RunStatus.QUOTA_EXHAUSTED.value
        ended = throttle.paused.rstrip()
        ended += "" if ended.endswith((".", "!", "?")) else "."
        reason = f"Paused: {ended[:1].lower()}{ended[1:]} The items it hit are left to do: resume the run once the quota is back."
    else:
        status, reason = RunStatus.CANCELLED.value, None
    left_requests = left[0]
    if store is not None and run_id is not None:
        if not store.finish_run(run_id, status, reason, left_judge_requests=left[0]):
            status, reason = RunStatus.CANCELLED.value, LOST_REASON  # lost to another process: that one records it
        left_requests = store.get_run(run_id)["left_judge_requests"]  # a resumed run's earlier ones too
    return EvalRunResult(
        run_id,
        run_outcomes(known, retried, len(items), scorer_ids),
        status,
        len(items),
        scorer_ids,
        judge_model,
        stop_reason=reason,
        cap_reached=capped[0].cap if status == RunStatus.BUDGET_REACHED.value else None,
        prices=prices,
        left_judge_requests=left_requests,
        scorer_options=run_options,
    )


def run_outcomes(
    known: Mapping[tuple[int, str], ItemOutcome],
    retried: Mapping[tuple[int, str], ItemOutcome],
    n_items: int,
    scorer_ids: Sequence[str],
) -> list[ItemOutcome]:
    """The run's outcomes as stored, in item and scorer order: those recorded (``known``), and each failure retried
    but not recorded again (left to do: its stored row stands, with the requests it spent).

    Args:
        known: the outcomes recorded, by ``(item_index, scorer_id)``.
        retried: the failed outcomes a resume retried, as stored (:attr:`OpenedRun.retried`).
        n_items: the run's number of items.
        scorer_ids: the scorers' ids, in order.
    """
    keys = ((i, sid) for i in range(n_items) for sid in scorer_ids)
    return [outcome for key in keys if (outcome := known.get(key) or retried.get(key)) is not None]


def unusable_replies_reason(hit: Sequence[ItemOutcome]) -> str:
    """Why a run paused after the judge's replies in ``hit`` (in a row, oldest first) were all unusable: what
    they were, the first one's error and reply, and how to go on."""
    refused = sum(o.status is ScoreStatus.JUDGE_REFUSED for o in hit)
    if not refused:
        what = "did not match the schema"
    elif refused == len(hit):
        what = "were refusals"
    else:
        what = f"did not match the schema or were refusals ({len(hit) - refused} invalid, {refused} refused)"
    first = hit[0]
    reply = first.raw_reply or ""
    shown = reply if len(reply) <= REPLY_SHOWN_CHARS else reply[:REPLY_SHOWN_CHARS] + "…"
    return (
        f'Paused: the judge\'s last {len(hit)} replies {what}: {first.error}; first reply: "{shown}". '
        "Those items are recorded as failed (their calls are counted); nothing was scored between them. "
        "Check the judge's model and settings, then resume the run to score the rest (Retry failed items, "
        "or --retry-failed, asks these again)."
    )


def budget_stop_reason(cap: BudgetReached, run_id: str | None, *, free: bool) -> str:
    """Why a run paused at its budget, and how to go on: the cap reached, and the flag that raises it.

    Args:
        cap: the cap reached (its message says what was spent).
        run_id: the run, for the resume command (None: not stored).
        free: True when some scorer calls no judge (those scored every item; only judge calls wait).
    """
    went_on = " The scorers that call no judge scored every item; only the judge calls wait." if free else ""
    resume = f"python -m scorers run --resume {run_id or 'RUN_ID'}"
    return (
        f"Stopped at the budget: {cap}.{went_on} The cap can be raised: resume the run with a higher one "
        f"({resume} {cap.flag}; in History: Resume, Cost cap and price), which the run then keeps."
    )


def _judge_used(scorer: Scorer) -> dict[str, Any] | None:
    settings = getattr(scorer, "settings", None)
    if settings is None:
        return None
    return {
        "model": settings.model_name,
        "baseUrl": settings.endpoint,
        "parameters": {"temperature": settings.temperature, "seed": settings.seed, "maxTokens": settings.max_tokens},
    }


def scored_outcome(
    scorer: Scorer, index: int, item: EvalItem, result: ScoreResult, usage: JudgeUsage, started: float
) -> ItemOutcome:
    """The outcome of ``scorer`` scoring ``item`` (at ``index``): ``usage`` spent before plus the result's own.

    ``started`` is the ``time.monotonic()`` at which scoring began (for the latency).
    """
    if result.judge is not None:
        usage += result.judge.usage
    return ItemOutcome(
        index,
        item.item_id,
        scorer.id,
        ScoreStatus.SCORED,
        result=result,
        usage=usage,
        latency_s=time.monotonic() - started,
    )


def failed_outcome(
    scorer: Scorer, index: int, item: EvalItem, exc: ScorerError, usage: JudgeUsage, started: float
) -> ItemOutcome:
    """The outcome of ``scorer`` failing on ``item`` with ``exc``: its status and message, the judge's text if
    any, its kind of failure, the judge asked, and ``usage`` spent before plus what the failed calls spent.

    ``started`` is the ``time.monotonic()`` at which scoring began (for the latency).
    """
    if getattr(exc, "usage", None) is not None:
        usage += exc.usage
    return ItemOutcome(
        index,
        item.item_id,
        scorer.id,
        exc.status,
        error=str(exc),
        raw_reply=getattr(exc, "raw_reply", None),
        usage=usage,
        latency_s=time.monotonic() - started,
        error_kind="config" if isinstance(exc, JudgeConfigError) else getattr(exc, "kind", None),
        judge_used=_judge_used(scorer),
    )


def _score_with_retries(
    scorer: Scorer,
    index: int,
    item: EvalItem,
    throttle: _Throttle,
    max_retries: int,
    on_budget: Callable[[BudgetReached], None],
    on_left: Callable[[int], None],
) -> ItemOutcome | None:
    """``scorer``'s outcome on ``item``, a rate-limited call retried after the run's shared pause; None for an
    item left to do (the run stopped or paused, or its judge call waits for the budget), whose HTTP requests to the
    judge are then passed to ``on_left``, and a cap reached to ``on_budget``."""
    usage = _NO_USAGE  # what the attempts retried spent
    start = time.monotonic()
    call: Callable[[], ScoreResult] = functools.partial(scorer.run, item.payload)
    kept: ScoreResult | None = None  # a scored result whose follow-up call (e.g. its reason) was rate limited
    retried = FOLLOW_UPS_RETRIED.set(True)  # such a follow-up is retried here, after the shared pause, alone
    try:
        for attempt in range(max_retries + 1):
            if not throttle.acquire():
                on_left(usage.requests)
                return None
            rate_limited, retry_after = False, None
            try:
                result = call()
            except BudgetReached as exc:
                if not isinstance(exc, budgets.StoppedWhileWaiting):  # the run stopped: its own status says why
                    on_budget(exc)
                on_left(usage.requests + (exc.usage.requests if exc.usage is not None else 0))
                return None
            except RateLimitedError as exc:
                rate_limited, retry_after = True, exc.retry_after
                if isinstance(exc, FollowUpRateLimitedError):  # the score stands: only the follow-up is retried
                    call, kept = exc.follow_up, exc.result
                if exc.quota:  # retrying cannot help until the quota resets: end the item, pause the run
                    throttle.pause(str(exc))
                waited = time.monotonic() - start + _backoff(retry_after, attempt)
                if exc.quota or attempt == max_retries or waited > MAX_RATE_LIMIT_WAIT_S:
                    if kept is not None:  # scored, its reason saying the follow-up was rate limited
                        return scored_outcome(scorer, index, item, kept, usage, start)
                    if exc.quota and not (exc.usage and exc.usage.calls):  # nothing answered: left to do, as paused
                        on_left(usage.requests + (exc.usage.requests if exc.usage is not None else 0))
                        return None
                    return failed_outcome(scorer, index, item, exc, usage, start)
                if exc.usage is not None:  # tried again: what this attempt spent stays the outcome's
                    usage += exc.usage
            except ScorerError as exc:
                return failed_outcome(scorer, index, item, exc, usage, start)
            else:
                return scored_outcome(scorer, index, item, result, usage, start)
            finally:
                throttle.release(rate_limited=rate_limited, retry_after=retry_after, attempt=attempt)
        raise AssertionError("unreachable")  # pragma: no cover
    finally:
        FOLLOW_UPS_RETRIED.reset(retried)


def recorded_options(
    scorers: Sequence[Scorer], scorer_options: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, dict[str, Any] | None]:
    """Scorer id → the options a run of ``scorers`` records for it: those given in ``scorer_options``,
    else the scorer's own ``options`` (every scorer the catalogue builds keeps the options it was built
    with), else None: not known (a scorer of the caller's own class), never taken for its defaults.
    """
    out: dict[str, dict[str, Any] | None] = {}
    for s in scorers:
        given = (scorer_options or {}).get(s.id)
        own = getattr(s, "options", None)
        out[s.id] = dict(given) if given is not None else dict(own) if isinstance(own, Mapping) else None
    return out


def stored_scorer_options(run: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Scorer id → the options a stored run was started with (``{}`` when not recorded or not known)."""
    return {sid: options or {} for sid, options in recorded_scorer_options(run).items()}


def recorded_scorer_options(run: Mapping[str, Any]) -> dict[str, dict[str, Any] | None]:
    """Scorer id → the options a stored run was started with (``{}`` when not recorded; None when the run
    recorded that they are not known: a scorer of the caller's own class, :func:`recorded_options`), for
    what must not take unknown options for the defaults: exports, the gate, a resume."""
    config = run.get("config") or {}
    from_config = config.get("scorerOptions") or {}
    out: dict[str, dict[str, Any] | None] = {}
    for entry in run.get("scorers") or []:
        options = entry.get("options")
        if options is None:
            options = from_config.get(entry["id"])
        if options is None and "options" in entry:  # recorded as not known
            out[entry["id"]] = None
        else:
            out[entry["id"]] = dict(options or {})
    return out


def load_run(store: Store, run_id: str) -> tuple[dict[str, Any], list[EvalItem], EvalRunResult]:
    """A stored run: its record, its items and its outcomes so far.

    Raises:
        KeyError: no such run.
    """
    run = store.get_run(run_id)
    items = [EvalItem(r["item_id"], r["payload"], r["groups"], r["columns"]) for r in store.items(run_id)]
    outcomes = [outcome_from_record(row, items[row["item_index"]].item_id) for row in store.results(run_id)]
    scorer_ids = [s["id"] for s in run["scorers"]]
    outcomes.sort(key=lambda o: (o.item_index, scorer_ids.index(o.scorer_id) if o.scorer_id in scorer_ids else 0))
    model = (run["judge"] or {}).get("model")
    config = run["config"] or {}
    result = EvalRunResult(
        run_id,
        outcomes,
        run["status"],
        len(items),
        scorer_ids,
        model,
        bool(config.get("batch_api")),
        stop_reason=run.get("stop_reason"),
        prices=run_prices(run),
        left_judge_requests=run["left_judge_requests"],
        scorer_options=recorded_scorer_options(run),
    )
    return run, items, result


def _judge_description(scorers: Sequence[Scorer]) -> dict[str, Any] | None:
    return judge_record(next((s.settings for s in scorers if getattr(s, "settings", None) is not None), None))


def outcome_from_record(row: Mapping[str, Any], item_id: str) -> ItemOutcome:
    """An outcome from its stored row (:meth:`scorers.runs.store.Store.results`)."""
    status = ScoreStatus(row["status"])
    result = None
    if status is ScoreStatus.SCORED:
        judge = row["judge"]
        result = ScoreResult(
            scorer=row["scorer_id"],
            score=row["score"],
            reason=row["reason"],
            analyze_step_result=row["analysis"] or {},
            details=row["details"] or {},
            judge=_judge_info(judge) if judge else None,
        )
    usage = stored_usage(row)
    return ItemOutcome(
        row["item_index"],
        item_id,
        row["scorer_id"],
        status,
        result,
        row["error"],
        row["raw_reply"],
        usage,
        row["latency_s"] or 0.0,
        judge_used=row["judge"] if result is None else None,
    )


def stored_usage(row: Mapping[str, Any]) -> JudgeUsage:
    """What a stored outcome (a row of :meth:`scorers.runs.store.Store.results`) spent."""
    return JudgeUsage(row["prompt_tokens"], row["completion_tokens"], row["judge_calls"], row["judge_requests"])


def _judge_info(data: Mapping[str, Any]) -> JudgeInfo:
    u = data["usage"]
    return JudgeInfo(
        data["model"],
        data["baseUrl"],
        data["parameters"],
        JudgeUsage(u["promptTokens"], u["completionTokens"], u["calls"], u.get("requests", u["calls"])),
        data.get("cached", False),
        data.get("note", ""),
    )
