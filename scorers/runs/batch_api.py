"""Batch API mode: score a run through the provider's Batch API instead of live judge calls.

For very large runs the limit is the provider's rate quota, not the CPU. OpenAI's
Batch API (``/v1/files`` + ``/v1/batches``, followed by every OpenAI-compatible server
that implements it) has its own rate-limit pool and half the price, and answers within
24 hours. :func:`run_batch_api` drives a run in rounds:

1. every item × scorer not yet known is scored with the judge in batch mode
   (:func:`scorers.core.judge.batch_mode`): a judge call whose answer is known is
   validated exactly like a live reply (same statuses, same re-ask, same cache); one whose
   answer is not known is queued, and the item waits;
2. the queued requests are written as JSONL files of at most 50,000 requests (and
   190 MB), uploaded, and a batch is created for each; the batch ids are stored at once;
3. the stored open batches are polled until they end; their output and error files are
   downloaded into the store; then the next round starts.

A re-ask of invalid output is one more request: it goes into the next round's batch,
or with ``live_follow_ups`` to the live API at once. A request the batch never ran
(the batch expired or failed) is sent again in the next round; after it has expired
:data:`MAX_EXPIRIES` times it is recorded as an API error. A stopped or killed process
loses nothing: resuming the run (``run_id``) keeps polling the stored batches.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from scorers.core.base import JudgeUsage, Scorer
from scorers.core.budget import BudgetCaps, batch_api_caps_problem
from scorers.core.errors import ScorerError
from scorers.core.judge import (
    BatchAnswer,
    BatchClient,
    BatchPending,
    BatchRound,
    BatchState,
    JudgeSettings,
    answers_from_lines,
    batch_line,
    batch_mode,
)
from scorers.runs.runner import (
    LOST_REASON,
    EvalItem,
    EvalRunResult,
    ItemOutcome,
    failed_outcome,
    judge_model_of,
    open_run,
    run_outcomes,
    scored_outcome,
)
from scorers.runs.store import RunHeartbeat, Store

MAX_REQUESTS_PER_FILE = 50_000  # OpenAI's limit of requests in one batch input file
MAX_FILE_BYTES = 190 * 1024 * 1024  # under OpenAI's 200 MB limit of one batch input file
MAX_EXPIRIES = 2  # a request whose batch expired this many times is recorded as an API error
FINAL_STATUSES = ("completed", "failed", "expired", "cancelled")


def batch_settings(scorers: Sequence[Scorer]) -> JudgeSettings:
    """The judge settings every LLM-judged scorer of the run shares (one endpoint and key per run).

    Raises:
        ValueError: no scorer uses a judge, or two use different endpoints or keys.
    """
    found = [s.settings for s in scorers if getattr(s, "settings", None) is not None]
    if not found:
        raise ValueError("the Batch API mode needs at least one LLM-judged scorer")
    if len({(s.endpoint, s.api_key) for s in found}) > 1:
        raise ValueError("the Batch API mode needs every judged scorer on the same endpoint and API key")
    return found[0]


def split_requests(
    lines: Sequence[str], *, max_requests: int = MAX_REQUESTS_PER_FILE, max_bytes: int = MAX_FILE_BYTES
) -> list[list[str]]:
    """Cut JSONL request lines into files of at most ``max_requests`` lines and ``max_bytes`` bytes.

    Args:
        lines: one request per line (no newline at the end).
        max_requests: lines per file, >= 1 (OpenAI: 50,000).
        max_bytes: UTF-8 bytes per file, newlines included (OpenAI: 200 MB).

    Raises:
        ValueError: a limit < 1, or one line longer than ``max_bytes``.

    >>> [len(f) for f in split_requests(["a"] * 5, max_requests=2)]
    [2, 2, 1]
    """
    if max_requests < 1 or max_bytes < 1:
        raise ValueError(f"limits must be >= 1, got max_requests={max_requests}, max_bytes={max_bytes}")
    files: list[list[str]] = []
    size = 0
    for line in lines:
        n = len(line.encode("utf-8")) + 1
        if n > max_bytes:
            raise ValueError(f"one batch request is {n} bytes, more than a file may hold ({max_bytes})")
        if not files or len(files[-1]) >= max_requests or size + n > max_bytes:
            files.append([])
            size = 0
        files[-1].append(line)
        size += n
    return files


def _score(scorer: Scorer, index: int, item: EvalItem) -> ItemOutcome:
    """One scorer on one item in batch mode; raises :class:`BatchPending` while a judge answer is awaited."""
    start = time.monotonic()
    try:
        result = scorer.run(item.payload)
    except ScorerError as exc:
        return failed_outcome(scorer, index, item, exc, JudgeUsage(), start)
    return scored_outcome(scorer, index, item, result, JudgeUsage(), start)


def _forget_failed_attempts(
    store: Store,
    run_id: str,
    items: Sequence[EvalItem],
    scorers: Sequence[Scorer],
    retried: Mapping[tuple[int, str], ItemOutcome],
) -> None:
    """Forget the stored answers the retried failures were made of, so the retry sends their requests again.

    Each failed attempt is replayed from the stored answers (the same requests give the same
    failure), noting every request it asked; those answers are deleted from the store.
    """
    replay = BatchRound(_known_answers(store, run_id))
    with batch_mode(replay):
        for scorer in scorers:
            for index, scorer_id in retried:
                if scorer_id == scorer.id:
                    try:
                        _score(scorer, index, items[index])
                    except BatchPending:  # a request never answered: it is sent anyway
                        continue
    store.forget_batch_answers(run_id, sorted(replay.answered))


def _known_answers(store: Store, run_id: str) -> dict[str, BatchAnswer]:
    return {
        r["custom_id"]: BatchAnswer(r["status_code"], r["body"] or {}, _lines_sent(r))
        for r in store.batch_requests(run_id)
        if r["status_code"] is not None
    }


def _lines_sent(request: Mapping[str, Any]) -> int:
    """The lines sent for a stored request with its answer: the last one, and one per batch that expired before
    running it (a request recorded as expired :data:`MAX_EXPIRIES` times counts those, as its last one expired)."""
    expired_for_good = (
        request["status_code"] == 0 and ((request["body"] or {}).get("error") or {}).get("code") == "batch_expired"
    )
    return request["expired"] + (0 if expired_for_good else 1)


def _finish_batch(store: Store, client: BatchClient, run_id: str, state: BatchState) -> None:
    """Download a finished batch's files and record every request of it (answered, expired or failed)."""
    batch_id, status, errors = state.batch_id, state.status, "; ".join(state.errors)
    answers: dict[str, BatchAnswer] = {}
    for file_id in (state.output_file_id, state.error_file_id):
        if file_id:
            answers.update(answers_from_lines(client.file_lines(file_id)))
    rows = []
    for request in store.batch_requests(run_id):
        cid = request["custom_id"]
        if request["batch_id"] != batch_id or request["status_code"] is not None:
            continue
        answer = answers.get(cid)
        if answer is None:  # never run: the batch failed, expired or was cancelled before this line
            code = f"batch_{status}"
            answer = BatchAnswer(0, {"error": {"code": code, "message": errors or f"the batch {batch_id} {status}"}})
        never_run = answer.status_code == 0
        if never_run and (status == "expired" or (answer.body.get("error") or {}).get("code") == "batch_expired"):
            expired = request["expired"] + 1
            if expired < MAX_EXPIRIES:  # send it again in the next round
                rows.append((cid, None, None, None, expired))
                continue
            message = f"the batch expired {expired} times before running this request (last batch {batch_id})"
            answer = BatchAnswer(0, {"error": {"code": "batch_expired", "message": message}})
            rows.append((cid, batch_id, 0, answer.body, expired))
            continue
        rows.append((cid, batch_id, answer.status_code, answer.body, request["expired"]))
    store.save_batch_answers(run_id, rows)
    store.set_batch_status(batch_id, status, finished=True)


def _wait_for_batches(
    store: Store,
    client: BatchClient,
    run_id: str,
    *,
    poll_interval: float,
    cancel: threading.Event,
    on_progress: Callable[[str], None] | None,
) -> bool:
    """Poll the run's open batches until each ends, and record their answers; False when cancelled."""
    while True:
        open_jobs = [j for j in store.batch_jobs(run_id) if j["finished_at"] is None]
        if not open_jobs:
            return True
        for job in open_jobs:
            state = client.state(job["batch_id"])
            if state.status != job["status"]:
                store.set_batch_status(job["batch_id"], state.status)
                if on_progress is not None:
                    on_progress(f"batch {job['batch_id']} ({job['n_requests']} requests): {state.status}")
            if state.done:
                _finish_batch(store, client, run_id, state)
        if any(j["finished_at"] is None for j in store.batch_jobs(run_id)) and cancel.wait(poll_interval):
            return False


def _submit(
    store: Store,
    client: BatchClient,
    run_id: str,
    pending: Mapping[str, dict[str, Any]],
    *,
    max_requests: int,
    max_bytes: int,
    on_progress: Callable[[str], None] | None,
) -> None:
    ids = sorted(pending)
    lines = [batch_line(pending[cid]) for cid in ids]
    start = 0
    for chunk in split_requests(lines, max_requests=max_requests, max_bytes=max_bytes):
        chunk_ids = ids[start : start + len(chunk)]
        start += len(chunk)
        batch_id, file_id = client.submit(chunk, metadata={"scorer_studio_run": run_id})
        store.add_batch(run_id, batch_id, file_id, chunk_ids)
        if on_progress is not None:
            on_progress(f"batch {batch_id} submitted: {len(chunk)} requests")


def run_batch_api(
    data: Iterable[EvalItem | Mapping[str, Any]],
    scorers: Sequence[Scorer],
    *,
    store: Store,
    run_id: str | None = None,
    retry_failed: bool = False,
    live_follow_ups: bool = False,
    poll_interval: float = 30.0,
    max_requests_per_file: int = MAX_REQUESTS_PER_FILE,
    max_file_bytes: int = MAX_FILE_BYTES,
    on_item_complete: Callable[[int, EvalItem, list[ItemOutcome]], None] | None = None,
    on_progress: Callable[[str], None] | None = None,
    dataset_name: str = "dataset",
    run_name: str | None = None,
    mapping: Mapping[str, Any] | None = None,
    scorer_options: Mapping[str, Mapping[str, Any]] | None = None,
    run_config: Mapping[str, Any] | None = None,
    cancel: threading.Event | None = None,
) -> EvalRunResult:
    """Score every item with every scorer through the provider's Batch API (see the module docstring).

    Args:
        data, scorers, run_id, retry_failed, on_item_complete, dataset_name, run_name, mapping,
            scorer_options, run_config, cancel: as :func:`scorers.runs.runner.run_evals`.
        store: where the run, its batch ids and every answer are kept (required: it is what
            makes the run resumable).
        live_follow_ups: send re-asks of invalid judge output to the live API at once instead
            of a follow-up batch.
        poll_interval: seconds between two polls of the open batches, > 0.
        max_requests_per_file: requests per uploaded file (the provider's limit: 50,000).
        max_file_bytes: bytes per uploaded file (the provider's limit: 200 MB).
        on_progress: called with a one-line message when a batch is submitted or changes status.

    Returns:
        The :class:`~scorers.runs.runner.EvalRunResult`: ``"completed"``, or ``"cancelled"``
        when ``cancel`` was set (the batches keep running at the provider; resume the run to
        collect them).

    Raises:
        ValueError: no judged scorer, scorers on different endpoints, duplicate scorer ids,
            ``poll_interval`` <= 0, budget caps in ``run_config`` or in the stored run's config
            (:func:`scorers.core.budget.batch_api_caps_problem`: no cap can stop a Batch API run).
        KeyError: ``run_id`` is not in the store.
        JudgeConfigError, JudgeAPIError, RateLimitedError: the Files or Batches endpoint
            could not be used (the run stays resumable).
    """
    if poll_interval <= 0:
        raise ValueError(f"poll_interval must be > 0 seconds, got {poll_interval}")
    config = (store.get_run(run_id)["config"] or {}) if run_id is not None else (run_config or {})
    if problem := batch_api_caps_problem(BudgetCaps.from_dict(config.get("budget"))):
        raise ValueError(problem)
    cancel = cancel or threading.Event()
    scorer_ids = [s.id for s in scorers]
    client = BatchClient(batch_settings(scorers))
    run_id, items, known, retried, _ = open_run(
        data,
        scorers,
        run_config=dict(run_config or {}, batch_api=True, live_follow_ups=live_follow_ups),
        store=store,
        run_id=run_id,
        retry_failed=retry_failed,
        dataset_name=dataset_name,
        run_name=run_name,
        mapping=mapping,
        scorer_options=scorer_options,
    )
    assert run_id is not None  # a store was given
    # While the batches are polled, the run's heartbeat tells the other processes that this one is alive.
    with RunHeartbeat(store, run_id, cancel.set):
        if retried:
            _forget_failed_attempts(store, run_id, items, scorers, retried)
        while _wait_for_batches(
            store, client, run_id, poll_interval=poll_interval, cancel=cancel, on_progress=on_progress
        ):
            round_ = BatchRound(_known_answers(store, run_id), live_follow_ups=live_follow_ups)
            with batch_mode(round_):
                for index, item in enumerate(items):
                    mine = []
                    for scorer in scorers:
                        if (index, scorer.id) in known:
                            continue
                        try:
                            outcome = _score(scorer, index, item)
                        except BatchPending:
                            continue
                        if (index, scorer.id) in retried:  # the row of a retried failure counts every attempt
                            outcome = dataclasses.replace(
                                outcome, usage=outcome.usage + retried[(index, scorer.id)].usage
                            )
                        known[(index, scorer.id)] = outcome
                        store.save_result(run_id, index, scorer.id, outcome.to_record())
                        mine.append(outcome)
                    if mine and on_item_complete is not None and all((index, s.id) in known for s in scorers):
                        on_item_complete(index, item, [known[(index, s.id)] for s in scorers])
            if not round_.pending or cancel.is_set():
                break
            _submit(
                store,
                client,
                run_id,
                round_.pending,
                max_requests=max_requests_per_file,
                max_bytes=max_file_bytes,
                on_progress=on_progress,
            )
    complete = all((i, s.id) in known for i in range(len(items)) for s in scorers)
    status, reason = ("completed" if complete else "cancelled"), None
    if not store.finish_run(run_id, status):  # lost to another process: that one records how it ended
        status, reason = "cancelled", LOST_REASON
    return EvalRunResult(
        run_id,
        run_outcomes(known, retried, len(items), scorer_ids),
        status,
        len(items),
        scorer_ids,
        judge_model_of(scorers),
        stop_reason=reason,
        batch_api=True,
        left_judge_requests=store.get_run(run_id)["left_judge_requests"],  # a resumed live run's
    )
