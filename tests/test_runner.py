"""run_evals: aggregates, fault injection, the shared throttle, timeouts, resume, cache and cost.

The judge is the fake OpenAI-compatible server on 127.0.0.1 (no network). Every
expected number is worked out by hand from the formulas in the comments.
"""

from __future__ import annotations

import collections
import gc
import json
import math
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import fake_openai as fake_openai_module
import pytest
from fake_openai import FakeOpenAI, Reply
from judge_data import run_payload, settings_for, single_analysis
from killed_runs import kill_once_stored

from scorers import (
    Estimate,
    EvalItem,
    JudgeUsage,
    ScoreStatus,
    Store,
    create_faithfulness_scorer,
    create_hallucination_scorer,
    create_keyword_coverage_scorer,
    create_prompt_alignment_scorer,
    create_scorer,
    create_textual_difference_scorer,
    estimate_run,
    load_run,
    run_evals,
)
from scorers.core import budget as budgets
from scorers.core.budget import BudgetCaps
from scorers.core.judge import JudgeSettings
from scorers.runs import garbage
from scorers.runs import runner as runner_module
from scorers.runs.runner import ItemOutcome, _ResultWriter, recorded_options

REPO = Path(__file__).resolve().parents[1]

TD = create_textual_difference_scorer()
TD_ID = "textual-difference"
PA_ID = "prompt-alignment"

GOOD = single_analysis(0.9, 0.8, 0.7, 1.0)  # user mode: 0.40·0.9 + 0.30·0.8 + 0.20·0.7 + 0.10·1.0 = 0.84
OK = Reply.json(GOOD)
BROKEN = '{"intentAlignment": '  # not JSON
TIMEOUT_MESSAGE = "the item took longer than the per-item timeout of {:g} s"

# gpt-4o-mini: 0.15 USD per million prompt tokens, 0.60 USD per million completion tokens.
PROMPT_USD, COMPLETION_USD = 0.15 / 1e6, 0.60 / 1e6

_ITEM_MARK = re.compile(r"\[item-(\d+)\]")


@pytest.fixture(autouse=True)
def _listen_backlog(monkeypatch):
    """Give the fake server a listen backlog of 128 instead of socketserver's 5.

    With 5, workers that connect at once can get "Connection error" (64 clients at once:
    161 errors in 640 requests; none with 128), which would flake the tests that run with
    ``max_retries=0``. Autouse fixtures run first, so this applies before the server starts.
    """
    monkeypatch.setattr(fake_openai_module._Server, "request_queue_size", 128)


def item_payload(i: int, *, output: str = "def factorial(n): ...", ground_truth: str | None = None) -> dict:
    """A user-mode payload whose prompt carries ``[item-i]`` so a responder can tell items apart."""
    payload = run_payload(user=f"[item-{i}] Write a Python function to calculate factorial", output=output)
    payload["ground_truth"] = output if ground_truth is None else ground_truth
    return payload


def no_reference_payload(i: int) -> dict:
    """Missing input for both scorers: no user message (prompt alignment, user mode; textual difference's
    target, as the run carries no ground truth)."""
    return {"input": [{"role": "system", "content": f"[item-{i}] Be brief."}], "output": "Sure."}


def items_of(payloads: list[dict]) -> list[EvalItem]:
    return [EvalItem(f"q{i}", p) for i, p in enumerate(payloads)]


def item_of(request: dict) -> int:
    return int(_ITEM_MARK.search(json.dumps(request["messages"])).group(1))


def alignment(fake, *, cache=None, **settings):
    return create_prompt_alignment_scorer(
        options={"evaluation_mode": "user"}, settings=settings_for(fake, **settings), cache=cache
    )


class Script:
    """A thread-safe responder: ``plans[item]`` answers that item's successive requests (the last repeats)."""

    def __init__(self, plans: dict[int, list[Reply]] | None = None, default: Reply = OK):
        self.plans = plans or {}
        self.default = default
        self.calls: collections.Counter[int] = collections.Counter()
        self._lock = threading.Lock()

    def __call__(self, request: dict) -> Reply:
        item = item_of(request)
        with self._lock:
            n = self.calls[item]
            self.calls[item] += 1
        plan = self.plans.get(item)
        return plan[min(n, len(plan) - 1)] if plan else self.default

    def snapshot(self) -> collections.Counter[int]:
        with self._lock:
            return collections.Counter(self.calls)


def sample_std(values: list[float]) -> float:
    """Textbook sample standard deviation: sqrt(Σ(x − mean)² / (n − 1))."""
    mean = sum(values) / len(values)
    return math.sqrt(sum((x - mean) ** 2 for x in values) / (len(values) - 1))


def assert_each_once(result, n_items: int, scorer_ids: list[str]) -> None:
    keys = [(o.item_index, o.scorer_id) for o in result.outcomes]
    assert len(keys) == len(set(keys)) == n_items * len(scorer_ids)
    assert set(keys) == {(i, s) for i in range(n_items) for s in scorer_ids}


def stored_statuses(store: Store, run_id: str) -> dict[tuple[int, str], str]:
    rows = store.results(run_id)
    statuses = {(r["item_index"], r["scorer_id"]): r["status"] for r in rows}
    assert len(statuses) == len(rows)
    return statuses


# ---------------------------------------------------------------- aggregates


def test_aggregates_count_scored_items_only(fake_openai):
    def dims(*scores):
        return Reply.json(single_analysis(*scores))

    fake_openai.responder = Script(
        {
            0: [dims(1.0, 1.0, 1.0, 1.0)],  # W = 1.0
            1: [dims(0.5, 0.5, 0.5, 0.5)],  # W = 0.5
            2: [dims(0.9, 0.8, 0.7, 1.0)],  # W = 0.84
            3: [Reply.refusal()],
            4: [dims(0.0, 0.0, 0.0, 0.0)],  # W = 0: a real zero, counted
        }
    )
    pairs = [("abcd", "abcd"), ("abcd", "abce"), ("abcd", "ab"), ("abcd", "wxyz"), ("kitten", "sitting")]
    payloads = [item_payload(i, ground_truth=gt, output=out) for i, (gt, out) in enumerate(pairs)]
    payloads.append(no_reference_payload(5))
    pa = alignment(fake_openai)
    store = Store(":memory:")

    result = run_evals(items_of(payloads), [TD, pa], concurrency=4, store=store)

    assert result.status == "completed"
    assert_each_once(result, 6, [TD_ID, PA_ID])
    # Textual difference = ratio · confidence, ratio = 2·LCS/(|a|+|b|), confidence = 1 − |Δlen|/max len:
    # abcd/abcd 1; abcd/abce 6/8; abcd/ab (4/6)·(1/2) = 1/3; abcd/wxyz 0 (scored, a real 0);
    # kitten/sitting LCS "ittn" = 4: (8/13)·(6/7) = 48/91; item 5 has nothing to compare with.
    td_values = [Fraction(1), Fraction(3, 4), Fraction(1, 3), Fraction(0), Fraction(48, 91)]
    td = result.scores()[TD_ID]
    assert (td.n_scored, td.n_failed) == (5, 1)
    assert td.mean == pytest.approx(float(Fraction(2851, 5460)))  # (1092 + 819 + 364 + 0 + 576) / 1092 / 5
    assert td.median == pytest.approx(48 / 91)  # sorted: 0, 1/3, 48/91, 3/4, 1
    assert td.std == pytest.approx(sample_std([float(v) for v in td_values]))
    assert (td.min, td.max) == (0.0, 1.0)

    # Prompt alignment: 1.0, 0.5, 0.84, 0.0 scored; the refusal and the invalid item are failures, not zeros.
    pa_summary = result.scores()[PA_ID]
    assert (pa_summary.n_scored, pa_summary.n_failed) == (4, 2)
    assert pa_summary.mean == pytest.approx(2.34 / 4)  # 0.585
    assert pa_summary.median == pytest.approx(0.67)  # (0.5 + 0.84) / 2
    # deviations 0.415, −0.085, 0.255, −0.585: squares sum to 0.5867
    assert pa_summary.std == pytest.approx(math.sqrt(0.5867 / 3))
    assert (pa_summary.min, pa_summary.max) == (0.0, 1.0)

    by_key = {(o.item_index, o.scorer_id): o for o in result.outcomes}
    assert by_key[(3, PA_ID)].status is ScoreStatus.JUDGE_REFUSED and by_key[(3, PA_ID)].score is None
    assert by_key[(3, TD_ID)].score == 0.0 and by_key[(3, TD_ID)].status is ScoreStatus.SCORED
    assert by_key[(5, TD_ID)].status is ScoreStatus.MISSING_INPUT  # no ground truth, no user text
    assert by_key[(5, PA_ID)].status is ScoreStatus.MISSING_INPUT
    assert result.n_failed == 3

    frame = result.to_frame()
    failed = frame[frame["status"] != "scored"]
    assert len(failed) == 3 and failed["score"].isna().all()

    dims_summary = result.dimensions([TD, pa])
    # user.<dimension> over items 0, 1, 2, 4: intent 1, 0.5, 0.9, 0 ...
    user = dims_summary[PA_ID]
    assert set(user) == {
        "user.intentAlignment",
        "user.requirementsFulfillment",
        "user.completeness",
        "user.responseAppropriateness",
    }
    intent = user["user.intentAlignment"]
    assert (intent.n_scored, intent.n_failed) == (4, 2)
    assert intent.mean == pytest.approx(0.6) and intent.median == pytest.approx(0.7)
    assert user["user.requirementsFulfillment"].mean == pytest.approx(2.3 / 4)  # 1 + 0.5 + 0.8 + 0
    assert user["user.completeness"].mean == pytest.approx(2.2 / 4)  # 1 + 0.5 + 0.7 + 0
    appropriateness = user["user.responseAppropriateness"]
    assert appropriateness.mean == pytest.approx(2.5 / 4) and appropriateness.median == pytest.approx(0.75)
    ratio = dims_summary[TD_ID]["ratio"]  # 1, 6/8, 4/6, 0, 8/13
    assert ratio.mean == pytest.approx((1 + 0.75 + 2 / 3 + 0 + 8 / 13) / 5) and ratio.n_failed == 1
    confidence = dims_summary[TD_ID]["confidence"]  # 1, 1, 1/2, 1, 6/7
    assert confidence.mean == pytest.approx((3.5 + 6 / 7) / 5) and confidence.min == 0.5

    assert stored_statuses(store, result.run_id) == {
        (o.item_index, o.scorer_id): o.status.value for o in result.outcomes
    }


# ---------------------------------------------------------------- fault injection


def test_fault_storm_accounts_for_every_item_once(fake_openai):
    rate_limited = Reply.rate_limited(0.05)
    server_error = Reply.server_error(headers={"retry-after-ms": "20"})
    slow = OK.delayed(4.0)  # longer than the judge timeout of 2 s
    plans = {i: [rate_limited] * 4 + [OK] for i in range(10)}  # 2 runner tries of 2 requests fail, the third wins
    plans.update(
        {
            10: [rate_limited],  # 429 for ever
            11: [server_error, OK],
            12: [server_error, OK],
            13: [server_error],
            14: [slow, OK],
            15: [slow],
            16: [Reply.content(BROKEN)],
            17: [Reply.content(BROKEN)],
            18: [Reply.content(BROKEN), OK],
            19: [Reply.refusal()],
            20: [Reply.truncated('{"intentAlignment": {"sco')],
        }
    )
    script = Script(plans)
    fake_openai.responder = script
    payloads = [item_payload(i) for i in range(39)] + [no_reference_payload(39)]
    store = Store(":memory:")
    pa = alignment(fake_openai, timeout=2.0, max_retries=1)

    result = run_evals(items_of(payloads), [TD, pa], concurrency=8, store=store)

    assert result.status == "completed"
    assert_each_once(result, 40, [TD_ID, PA_ID])
    expected = {i: ScoreStatus.SCORED for i in range(39)}
    expected.update(
        {
            10: ScoreStatus.RATE_LIMITED,
            13: ScoreStatus.API_ERROR,
            15: ScoreStatus.API_ERROR,
            16: ScoreStatus.JUDGE_OUTPUT_INVALID,
            17: ScoreStatus.JUDGE_OUTPUT_INVALID,
            19: ScoreStatus.JUDGE_REFUSED,
            20: ScoreStatus.JUDGE_OUTPUT_TRUNCATED,
            39: ScoreStatus.MISSING_INPUT,
        }
    )
    pa_outcomes = {o.item_index: o for o in result.outcomes if o.scorer_id == PA_ID}
    assert {i: o.status for i, o in pa_outcomes.items()} == expected
    td_statuses = {o.item_index: o.status for o in result.outcomes if o.scorer_id == TD_ID}
    assert td_statuses == {i: ScoreStatus.MISSING_INPUT if i == 39 else ScoreStatus.SCORED for i in range(40)}

    recovered = [*range(10), 11, 12, 14, 18, *range(21, 39)]
    assert all(pa_outcomes[i].score == 0.84 for i in recovered)
    assert all(pa_outcomes[i].score is None for i in (10, 13, 15, 16, 17, 19, 20, 39))
    assert pa_outcomes[16].raw_reply == BROKEN
    assert "429" in pa_outcomes[10].error
    assert "did not answer within 2 s" in pa_outcomes[15].error

    # Requests per item: the client's retry (max_retries=1) and the runner's retries after a 429.
    calls = dict.fromkeys(range(39), 1)
    calls.update(dict.fromkeys(range(10), 5))  # 429, 429 → RateLimitedError, twice; then OK
    calls[10] = 4 * 2  # the first try and 3 runner retries, 2 requests each
    calls.update({11: 2, 12: 2, 13: 2, 14: 2, 15: 2, 16: 2, 17: 2, 18: 2})
    assert script.snapshot() == collections.Counter(calls)

    assert stored_statuses(store, result.run_id) == {
        (o.item_index, o.scorer_id): o.status.value for o in result.outcomes
    }
    assert store.get_run(result.run_id)["status"] == "completed"


# ---------------------------------------------------------------- the shared throttle


def test_rate_limit_pauses_everyone_for_retry_after_and_halves_concurrency(fake_openai):
    lock = threading.Lock()
    log: list[dict] = []
    state = {"in_flight": 0, "arrivals": 0}

    def responder(request: dict) -> Reply:
        with lock:
            state["arrivals"] += 1
            limited = state["arrivals"] <= 8  # the first request of each of the 8 workers
            state["in_flight"] += 1
            entry = {
                "start": time.monotonic(),
                "limited": limited,
                "in_flight": state["in_flight"],
                "item": item_of(request),
            }
            log.append(entry)
        time.sleep(0.6 if limited else 0.05)
        with lock:
            state["in_flight"] -= 1
            entry["end"] = time.monotonic()
        return Reply.rate_limited(0.3) if limited else OK

    fake_openai.responder = responder
    pa = alignment(fake_openai, max_retries=0)  # every 429 reaches the runner

    result = run_evals(items_of([item_payload(i) for i in range(24)]), [pa], concurrency=8, preflight=False)

    assert [o.status for o in result.outcomes] == [ScoreStatus.SCORED] * 24
    limited = [e for e in log if e["limited"]]
    successes = sorted((e for e in log if not e["limited"]), key=lambda e: e["start"])
    assert len(limited) == 8 and len(successes) == 24
    # Before the 429s the 8 workers each had an item at the judge, overlapping.
    assert len({e["item"] for e in limited}) == 8 and max(e["in_flight"] for e in limited) > 1
    # Nobody starts judge work until Retry-After (0.3 s) has passed since the last 429 was answered.
    assert successes[0]["start"] >= max(e["end"] for e in limited) + 0.3 - 1e-3
    # Eight 429s halved the allowed parallelism 8 → 4 → 2 → 1: the first request after the pause runs alone.
    first = successes[0]
    assert not [e for e in log if e is not first and e["start"] < first["end"] and e["end"] > first["start"]]
    # Each success gives a slot back, never beyond the configured 8.
    assert 2 <= max(e["in_flight"] for e in successes) <= 8


# ---------------------------------------------------------------- per-item timeout


def test_item_past_its_timeout_is_an_api_error_once_even_when_its_worker_finishes_later(fake_openai):
    fake_openai.responder = Script({1: [OK.delayed(3.0)]})
    store = Store(":memory:")
    completed: list[tuple[int, list]] = []
    pa = alignment(fake_openai, max_retries=0)

    result = run_evals(
        items_of([item_payload(i) for i in range(3)]),
        [TD, pa],
        concurrency=2,
        item_timeout=1.5,
        store=store,
        on_item_complete=lambda i, item, o: completed.append((i, o)),
    )

    assert_each_once(result, 3, [TD_ID, PA_ID])
    late = next(o for o in result.outcomes if (o.item_index, o.scorer_id) == (1, PA_ID))
    assert late.status is ScoreStatus.API_ERROR
    assert late.error == TIMEOUT_MESSAGE.format(1.5)
    # It ran 1.5 s at least before it was given up (its reply came after 3 s): not 0 s.
    assert late.latency_s >= 1.5
    others = [o for o in result.outcomes if (o.item_index, o.scorer_id) != (1, PA_ID)]
    assert all(o.status is ScoreStatus.SCORED for o in others)  # the text diff of item 1 was done in time
    # The worker of item 1 did finish (its judge call returned after 3 s), but its result was dropped.
    assert sorted(i for i, _ in completed) == [0, 1, 2]
    assert [o.status for i, outcomes in completed if i == 1 for o in outcomes] == [
        ScoreStatus.SCORED,
        ScoreStatus.API_ERROR,
    ]
    assert fake_openai.chat_call_count == 3
    row = next(r for r in store.results(result.run_id) if (r["item_index"], r["scorer_id"]) == (1, PA_ID))
    assert (row["status"], row["error"]) == ("api_error", TIMEOUT_MESSAGE.format(1.5))
    assert row["latency_s"] >= 1.5
    assert len(store.results(result.run_id)) == 6


def test_a_judge_call_abandoned_at_the_item_timeout_counts_in_the_usage_and_cost_when_it_returns(fake_openai):
    # The provider answers (and bills) the call the run stopped waiting for: its worker thread gets the reply.
    billed = {"prompt_tokens": 1000, "completion_tokens": 200}
    fake_openai.responder = Script(
        {1: [Reply.json(GOOD, usage=billed).delayed(3.0)], 2: [Reply.json(GOOD, usage=billed).delayed(3.0)]},
        default=Reply.json(GOOD, usage=billed),
    )
    store = Store(":memory:")
    pa = alignment(fake_openai, model="openai/gpt-4o-mini", max_retries=0)

    result = run_evals(
        items_of([item_payload(i) for i in range(3)]), [pa], concurrency=2, item_timeout=1.5, store=store
    )

    assert fake_openai.chat_call_count == 3
    assert [o.status for o in result.outcomes] == [ScoreStatus.SCORED, ScoreStatus.API_ERROR, ScoreStatus.API_ERROR]
    assert [o.error for o in result.outcomes[1:]] == [TIMEOUT_MESSAGE.format(1.5)] * 2
    # Items 1 and 2 timed out, but each call was answered: 3 calls (3 requests) of 1,000 + 200 tokens.
    assert [o.usage for o in result.outcomes] == [JudgeUsage(1000, 200, 1, 1)] * 3
    assert result.usage == JudgeUsage(3000, 600, 3, 3)
    # 3000 · 0.15 / 1e6 + 600 · 0.60 / 1e6 = 0.00045 + 0.00036 = 0.00081 USD
    assert result.cost_usd == pytest.approx(0.00081)
    rows = sorted(store.results(result.run_id), key=lambda r: r["item_index"])
    assert [(r["status"], r["judge_calls"], r["prompt_tokens"], r["completion_tokens"]) for r in rows] == [
        ("scored", 1, 1000, 200),
        ("api_error", 1, 1000, 200),
        ("api_error", 1, 1000, 200),
    ]
    assert [r["judge"]["model"] for r in rows[1:]] == ["gpt-4o-mini"] * 2  # priced at the judge asked
    assert load_run(store, result.run_id)[2].cost_usd == pytest.approx(0.00081)


def test_the_first_item_scored_alone_is_held_to_the_item_timeout_too(fake_openai):
    # The first item is scored alone before the others (fail fast); its reply comes after 3 s, past 1.5 s.
    fake_openai.responder = Script({0: [OK.delayed(3.0)]})
    pa = alignment(fake_openai, max_retries=0)

    result = run_evals(items_of([item_payload(i) for i in range(3)]), [pa], concurrency=2, item_timeout=1.5)

    assert [o.status for o in result.outcomes] == [ScoreStatus.API_ERROR, ScoreStatus.SCORED, ScoreStatus.SCORED]
    assert result.outcomes[0].error == TIMEOUT_MESSAGE.format(1.5)
    assert result.outcomes[0].latency_s >= 1.5
    assert result.status == "completed" and fake_openai.chat_call_count == 3


def test_queued_items_are_not_timed_out_before_they_start(fake_openai):
    fake_openai.responder = Script(default=OK.delayed(0.5))
    pa = alignment(fake_openai, max_retries=0)

    # One at a time, 5 items take ≥ 2.5 s in all: items 3 and 4 end after 2 s and 2.5 s, past the
    # timeout of 1.5 s if it ran from the start of the run; each item alone takes 0.5 s.
    result = run_evals(items_of([item_payload(i) for i in range(5)]), [pa], concurrency=1, item_timeout=1.5)

    assert [o.status for o in result.outcomes] == [ScoreStatus.SCORED] * 5
    assert fake_openai.chat_call_count == 5


def test_the_item_timeout_does_not_count_the_waits_for_other_items_under_a_token_cap(fake_openai):
    # Each call takes 0.8 s and bills 40 + 10 = 50 tokens; a call reserves R tokens before it is sent (its
    # prompt at one token per byte plus the max output tokens), the same R for every item ([item-i], one digit).
    billed = {"prompt_tokens": 40, "completion_tokens": 10}
    fake_openai.responder = Script(default=Reply.json(GOOD, usage=billed).delayed(0.8))
    pa = alignment(fake_openai, max_retries=0)
    pa.run(item_payload(0))
    body = fake_openai.chat_requests()[0]
    reserved = budgets.prompt_token_bound(body["messages"], body) + budgets.reply_token_bound(pa.settings.max_tokens)
    assert reserved > 150  # two calls never fit in the cap below at once
    fake_openai.reset()

    # A cap of R + 150: item 0 (alone, first) reserves R. At 0.8 s 50 are spent: item 1 reserves (50 + R), item 2
    # waits for it (50 + 2R > R + 150), items 3-5 wait for their turn. At 1.6 s item 2 reserves (100 + R); at 2.4 s
    # item 3 (150 + R, at the cap); at 3.2 s 200 are spent and nothing is in flight: item 4 is refused (200 + R),
    # the cap is reached, items 4 and 5 are left to do. Each item's own work is one 0.8 s call, within 1.5 s,
    # though items 2 and 3 finish 1.6 s and 2.4 s after they started, most of it waiting for the others.
    result = run_evals(
        items_of([item_payload(i) for i in range(6)]),
        [pa],
        concurrency=6,
        item_timeout=1.5,
        budget=BudgetCaps(max_total_tokens=reserved + 150),
    )

    assert [(o.item_index, o.status) for o in result.outcomes] == [(i, ScoreStatus.SCORED) for i in range(4)]
    assert result.status == "budget_reached"
    assert fake_openai.chat_call_count == 4
    assert result.usage == JudgeUsage(160, 40, 4, 4)


def test_an_item_past_its_timeout_sends_no_further_judge_call(fake_openai):
    # Prompt alignment with a judge-written reason makes two calls an item: the score, then the reason (its
    # prompt has no [item-i]: the reason calls are told apart by their schema).
    billed = {"prompt_tokens": 1000, "completion_tokens": 200}
    scores = Script({1: [Reply.json(GOOD, usage=billed).delayed(2.0)]}, default=Reply.json(GOOD, usage=billed))
    reason = Reply.json({"reason": "Scored 0.84."}, usage=billed)

    def responder(request: dict) -> Reply:
        return reason if "prompt_alignment_reason" in json.dumps(request["response_format"]) else scores(request)

    fake_openai.responder = responder
    pa = create_prompt_alignment_scorer(
        options={"evaluation_mode": "user", "reason": "judge"}, settings=settings_for(fake_openai, max_retries=0)
    )

    result = run_evals(items_of([item_payload(i) for i in range(3)]), [pa], concurrency=2, item_timeout=1.0)

    # Item 1 is given up at 1 s; its score call, answered at 2 s, was billed and counts; its reason call is not
    # sent: 2 + 1 + 2 = 5 calls.
    assert [o.status for o in result.outcomes] == [ScoreStatus.SCORED, ScoreStatus.API_ERROR, ScoreStatus.SCORED]
    assert result.outcomes[1].error == TIMEOUT_MESSAGE.format(1)
    assert scores.snapshot() == collections.Counter({0: 1, 1: 1, 2: 1})
    assert fake_openai.chat_call_count == 5
    assert [o.usage for o in result.outcomes] == [
        JudgeUsage(2000, 400, 2, 2),
        JudgeUsage(1000, 200, 1, 1),
        JudgeUsage(2000, 400, 2, 2),
    ]
    assert result.status == "completed"


# ---------------------------------------------------------------- cancel, crash and resume


def test_cancelled_run_keeps_its_results_and_resumes_only_the_rest(fake_openai):
    script = Script()
    fake_openai.responder = script
    store = Store(":memory:")
    cancel = threading.Event()
    done: list[int] = []

    def stop_after_five(index, item, outcomes):
        done.append(index)
        if len(done) == 5:
            cancel.set()

    scorers = [TD, alignment(fake_openai)]
    first = run_evals(
        items_of([item_payload(i) for i in range(20)]),
        scorers,
        concurrency=1,
        store=store,
        cancel=cancel,
        on_item_complete=stop_after_five,
    )

    assert first.status == "cancelled"
    assert store.get_run(first.run_id)["status"] == "cancelled"
    assert len(first.outcomes) == 10
    assert {(r["item_index"], r["scorer_id"]) for r in store.results(first.run_id)} == {
        (i, s) for i in range(5) for s in (TD_ID, PA_ID)
    }
    assert script.snapshot() == collections.Counter(range(5))

    resumed = run_evals([], scorers, store=store, run_id=first.run_id, concurrency=4)

    assert resumed.status == "completed" and resumed.run_id == first.run_id
    assert_each_once(resumed, 20, [TD_ID, PA_ID])
    assert all(o.status is ScoreStatus.SCORED for o in resumed.outcomes)
    assert script.snapshot() == collections.Counter(range(20))  # items 5..19 judged once each, 0..4 not again
    assert len(store.results(first.run_id)) == 40
    run, items, loaded = load_run(store, first.run_id)
    assert run["status"] == "completed" and [it.item_id for it in items] == [f"q{i}" for i in range(20)]
    assert [(o.item_index, o.scorer_id, o.status, o.score) for o in loaded.outcomes] == [
        (o.item_index, o.scorer_id, o.status, o.score) for o in resumed.outcomes
    ]


_CRASHING_RUN = """
import json, sys
sys.path.insert(0, sys.argv[1])
from scorers import EvalItem, JudgeSettings, Store, create_prompt_alignment_scorer, create_textual_difference_scorer
from scorers import run_evals
db, base_url, items_file = sys.argv[2:5]
items = [EvalItem(**item) for item in json.loads(open(items_file, encoding="utf-8").read())]
settings = JudgeSettings(model="openai/fake-judge", base_url=base_url, api_key="test-key", timeout=5.0, max_retries=0)
scorers = [create_textual_difference_scorer(),
           create_prompt_alignment_scorer(options={"evaluation_mode": "user"}, settings=settings)]
run_evals(items, scorers, store=Store(db), concurrency=2, dataset_name="crash")
"""


def test_run_killed_with_sigkill_resumes_without_judging_finished_items_again(fake_openai, tmp_path):
    fake_openai.responder = Script(default=OK.delayed(0.2))
    db = tmp_path / "runs.db"
    items_file = tmp_path / "items.json"
    items = [{"item_id": f"q{i}", "payload": item_payload(i)} for i in range(30)]
    items_file.write_text(json.dumps(items), encoding="utf-8")

    child = subprocess.Popen(
        [sys.executable, "-c", _CRASHING_RUN, str(REPO), str(db), fake_openai.base_url, str(items_file)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    kill_once_stored(child, db, 5, within_s=90)  # mostly imports: slow on a busy machine
    assert child.returncode == -signal.SIGKILL

    store = Store(db)
    (run,) = store.list_runs()
    assert run["status"] == "running"  # never finished: it was killed
    before = store.results(run["id"])
    assert 5 <= len(before) < 60
    finished = {r["item_index"] for r in before if r["scorer_id"] == PA_ID}

    script = Script()
    with FakeOpenAI(responder=script) as second_judge:  # only the resumed run talks to this one
        result = run_evals([], [TD, alignment(second_judge)], store=store, run_id=run["id"], concurrency=4)

    judged = script.snapshot()
    assert not finished & set(judged)
    assert set(judged) == set(range(30)) - finished and set(judged.values()) == {1}
    assert result.status == "completed"
    assert_each_once(result, 30, [TD_ID, PA_ID])
    assert all(o.status is ScoreStatus.SCORED for o in result.outcomes)
    assert len(stored_statuses(store, run["id"])) == 60
    assert store.get_run(run["id"])["status"] == "completed"


def test_resuming_with_fewer_scorers_scores_those_and_keeps_the_other_rows(fake_openai):
    fake_openai.responder = Script()
    store = Store(":memory:")
    first = run_evals(items_of([item_payload(i) for i in range(4)]), [TD, alignment(fake_openai)], store=store)

    resumed = run_evals([], [TD], store=store, run_id=first.run_id)

    assert resumed.status == "completed"
    assert_each_once(resumed, 4, [TD_ID])
    assert len(store.results(first.run_id)) == 8
    assert fake_openai.chat_call_count == 4


def test_a_bug_in_a_scorer_surfaces_and_stops_the_run():
    seen: list[str] = []

    class Broken:
        id, name = "broken", "Broken"

        def run(self, payload):
            seen.append(payload["output"])
            if len(seen) == 3:
                raise RuntimeError("bug in the scorer")
            return TD.run(payload)

    with pytest.raises(RuntimeError, match="bug in the scorer"):
        run_evals(items_of([item_payload(i, output=f"out {i}") for i in range(50)]), [Broken()], concurrency=2)
    assert len(seen) <= 3 + 1  # the other worker finishes the item it had started, and no other


# ---------------------------------------------------------------- CPU-bound scorers: one worker


class Recording:
    """Textual difference that notes, per item, the thread that scored it; ``cpu_bound`` as asked."""

    def __init__(self, scorer_id: str, *, cpu_bound: bool, before=None):
        self.id, self.name, self.cpu_bound = scorer_id, scorer_id, cpu_bound
        self.before = before or (lambda index: None)  # called with the item's index before it is scored
        self.threads: dict[int, int] = {}

    def run(self, payload):
        index = int(payload["output"].split()[1])
        self.before(index)
        self.threads[index] = threading.get_ident()
        return TD.run(payload)


def numbered(n: int) -> list[EvalItem]:
    return items_of([{"input": "q", "output": f"out {i}", "ground_truth": f"out {i}"} for i in range(n)])


def test_the_catalogue_says_which_scorers_are_cpu_bound_and_they_are_the_code_based_ones(fake_openai):
    from scorers.catalogue.registry import SCORERS

    kinds = set()
    for sid, spec in SCORERS.items():
        options = {o.name: o.default for o in spec.options} | dict((spec.example or {}).get("options", {}))
        scorer = spec.build(options, settings_for(fake_openai) if spec.uses_judge else None, None)
        assert getattr(scorer, "cpu_bound", False) is (not spec.uses_judge), sid
        kinds.add(spec.uses_judge)
    assert kinds == {True, False}  # both kinds are in the catalogue


def test_cpu_bound_scorers_score_every_item_in_one_worker_whatever_the_concurrency():
    # Each item sleeps a little (releasing the GIL), so that several workers, if there were any, would take items.
    a, b = Recording("a", cpu_bound=True, before=lambda index: time.sleep(0.01)), Recording("b", cpu_bound=True)
    completed: list[tuple[int, int]] = []

    result = run_evals(
        numbered(12),
        [a, b],
        concurrency=8,
        on_item_complete=lambda index, item, outcomes: completed.append((index, len(outcomes))),
    )

    assert result.status == "completed" and [o.score for o in result.outcomes] == [1.0] * 24  # identical texts
    (worker,) = set(a.threads.values()) | set(b.threads.values())
    assert worker != threading.get_ident()  # a worker thread: the calling thread watches timeouts
    assert completed == [(i, 2) for i in range(12)]  # one worker: in order, each item with both outcomes


def test_a_scorer_that_may_wait_keeps_the_concurrency_beside_a_cpu_bound_one():
    # Three items must be in the waiting scorer at once to pass the barrier: with one worker the
    # barrier would break after 10 s and the scorer's error would surface.
    barrier = threading.Barrier(3, timeout=10)
    waiting = Recording("waits", cpu_bound=False, before=lambda index: index < 3 and barrier.wait())
    code = Recording("code", cpu_bound=True)

    result = run_evals(numbered(6), [code, waiting], concurrency=3)

    assert result.status == "completed" and len(result.outcomes) == 12
    assert len(set(waiting.threads[i] for i in range(3))) == 3


def stored_when_it_reaches(store: Store, want: int) -> int:
    """The number of outcomes stored once it reaches ``want`` (looked at for up to 20 s), or the last count seen."""
    deadline = time.monotonic() + 20
    while (count := store.query("SELECT COUNT(*) FROM results")[0][0]) < want and time.monotonic() < deadline:
        time.sleep(0.01)
    return count


def test_outcomes_are_written_once_a_batch_is_full_while_the_workers_score(monkeypatch):
    monkeypatch.setattr("scorers.runs.runner.WRITE_BATCH", 4)
    monkeypatch.setattr("scorers.runs.runner.WRITE_INTERVAL_S", 3600.0)  # only a full batch is written
    store = Store(":memory:")
    seen: list[int] = []
    # Item 9 waits, in the only worker, until 6 outcomes are stored or 20 s pass. The 9 outcomes
    # before it are written while it waits, all but fewer than a batch of 4: a full batch is
    # written (with every outcome waiting at the time), and what is left cannot fill one.
    scorer = Recording(
        "a", cpu_bound=True, before=lambda index: index == 9 and seen.append(stored_when_it_reaches(store, 6))
    )

    result = run_evals(numbered(11), [scorer], store=store)

    assert len(seen) == 1 and 6 <= seen[0] <= 9
    assert result.status == "completed" and len(store.results(result.run_id)) == 11  # the rest at the end


def test_a_full_batch_is_left_to_the_main_thread_and_two_waiting_ones_are_written_by_the_worker(monkeypatch):
    monkeypatch.setattr("scorers.runs.runner.WRITE_BATCH", 3)
    store = Store(":memory:")
    items = [(f"q{i}", {"input": "q", "output": "a"}, {}) for i in range(6)]
    run_id = store.create_run(dataset_name="d.csv", items=items, scorers=[{"id": "a"}], judge=None)
    wake = threading.Event()  # nobody waits on it here: the writer alone decides who writes
    writer = _ResultWriter(store, run_id, wake)
    stored = []
    for i in range(6):
        writer.add(ItemOutcome(i, f"q{i}", "a", ScoreStatus.API_ERROR, error="boom"))
        stored.append((wake.is_set(), store.count_results(run_id)))
    # 1, 2 waiting: nothing; 3 (a batch): the main thread is woken; 4, 5: still its job; 6 (two
    # batches waiting: it is behind): the worker writes all 6 itself.
    assert stored == [(False, 0), (False, 0), (True, 0), (True, 0), (True, 0), (True, 6)]
    assert writer.due_in() == runner_module.WRITE_INTERVAL_S  # nothing waits


def test_an_outcome_is_written_after_the_interval_when_no_batch_fills(monkeypatch):
    monkeypatch.setattr("scorers.runs.runner.WRITE_INTERVAL_S", 0.2)  # batches of 500: none fills
    store = Store(":memory:")
    seen: list[int] = []
    scorer = Recording(
        "a", cpu_bound=True, before=lambda index: index == 3 and seen.append(stored_when_it_reaches(store, 3))
    )

    result = run_evals(numbered(5), [scorer], store=store)

    assert seen == [3]  # items 0-2, written 0.2 s after the first finished while item 3 waited
    assert len(store.results(result.run_id)) == 5


def test_cancel_and_the_item_timeout_work_with_one_cpu_bound_worker():
    cancel = threading.Event()
    stopper = Recording("a", cpu_bound=True, before=lambda index: index == 2 and cancel.set())

    cancelled = run_evals(numbered(10), [stopper], concurrency=8, cancel=cancel)

    # Cancelled while item 2 is scored: that item ends, no further one starts.
    assert cancelled.status == "cancelled" and [o.item_index for o in cancelled.outcomes] == [0, 1, 2]

    slow = Recording("a", cpu_bound=True, before=lambda index: index == 1 and time.sleep(2.0))
    timed = run_evals(numbered(4), [slow], concurrency=8, item_timeout=0.3)

    # Item 1 takes 2 s, past the timeout of 0.3 s: an API error; the others are scored.
    assert [o.status for o in timed.outcomes] == [ScoreStatus.SCORED, ScoreStatus.API_ERROR] + [ScoreStatus.SCORED] * 2
    assert timed.outcomes[1].error == TIMEOUT_MESSAGE.format(0.3)


# ---------------------------------------------------------------- retry failed


def test_retry_failed_resends_only_the_failed_items(fake_openai):
    fail_once = [Reply.server_error(should_retry=False), OK]
    script = Script({2: fail_once, 5: fail_once, 7: fail_once})
    fake_openai.responder = script
    store = Store(":memory:")
    scorers = [alignment(fake_openai, max_retries=0)]

    first = run_evals(items_of([item_payload(i) for i in range(10)]), scorers, store=store)
    failed = [o.item_index for o in first.outcomes if o.status is not ScoreStatus.SCORED]
    assert failed == [2, 5, 7]
    assert all(o.status is ScoreStatus.API_ERROR for o in first.outcomes if o.item_index in failed)
    assert script.snapshot() == collections.Counter(range(10))

    again = run_evals([], scorers, store=store, run_id=first.run_id)  # nothing is missing: no call
    assert script.snapshot() == collections.Counter(range(10))
    assert again.status == "completed" and again.n_failed == 3

    retried = run_evals([], scorers, store=store, run_id=first.run_id, retry_failed=True)

    assert script.snapshot() - collections.Counter(range(10)) == collections.Counter([2, 5, 7])
    assert_each_once(retried, 10, [PA_ID])
    assert [o.score for o in retried.outcomes] == [0.84] * 10
    assert set(stored_statuses(store, first.run_id).values()) == {"scored"}
    assert len(store.results(first.run_id)) == 10


def test_a_retried_failure_keeps_what_its_failed_attempt_spent(fake_openai):
    def usage(prompt, completion):
        return {"usage": {"prompt_tokens": prompt, "completion_tokens": completion}}

    broken = Reply.content(BROKEN, **usage(100, 10))  # item 1: invalid twice (a re-ask), then valid on the retry
    fake_openai.responder = Script(
        {1: [broken, broken, Reply.json(GOOD, **usage(50, 5))]}, default=Reply.json(GOOD, **usage(40, 4))
    )
    store = Store(":memory:")
    scorers = [alignment(fake_openai, max_retries=0)]
    first = run_evals(items_of([item_payload(i) for i in range(2)]), scorers, store=store)
    assert first.outcomes[1].status is ScoreStatus.JUDGE_OUTPUT_INVALID
    assert first.outcomes[1].usage == JudgeUsage(200, 20, 2, 2)

    retried = run_evals([], scorers, store=store, run_id=first.run_id, retry_failed=True)

    # Item 1's row: the two failed calls (200 + 20 tokens) and the retry's (50 + 5): 3 calls, 250 + 25.
    assert retried.outcomes[1].status is ScoreStatus.SCORED
    assert retried.outcomes[1].usage == JudgeUsage(250, 25, 3, 3)
    row = store.results(first.run_id, 1)[0]
    assert (row["prompt_tokens"], row["completion_tokens"], row["judge_calls"]) == (250, 25, 3)
    # The run's spend: item 0's 40 + 4 in 1 call, plus item 1's.
    assert retried.usage == JudgeUsage(290, 29, 4, 4)


def test_resuming_with_a_budget_and_retrying_reads_the_stored_results_once(fake_openai, monkeypatch):
    fake_openai.responder = Script({1: [Reply.server_error(should_retry=False), OK]})
    store = Store(":memory:")
    scorers = [alignment(fake_openai, max_retries=0)]
    first = run_evals(items_of([item_payload(i) for i in range(3)]), scorers, store=store)
    assert first.n_failed == 1
    reads = []
    real_results = Store.results
    monkeypatch.setattr(Store, "results", lambda self, *a, **k: reads.append(a) or real_results(self, *a, **k))

    budget = BudgetCaps(max_judge_calls=100)
    retried = run_evals([], scorers, store=store, run_id=first.run_id, retry_failed=True, budget=budget)

    assert retried.n_failed == 0
    assert reads == [(first.run_id,)]  # once, by open_run: the spend so far is summed in the same pass


# ---------------------------------------------------------------- judge cache


def test_second_run_of_the_same_dataset_is_served_from_the_cache(fake_openai):
    fake_openai.responder = Script(default=Reply.json(GOOD, usage={"prompt_tokens": 1000, "completion_tokens": 200}))
    cache = Store(":memory:")
    items = items_of([item_payload(i) for i in range(6)])

    first = run_evals(items, [alignment(fake_openai, model="openai/gpt-4o-mini", cache=cache)])

    assert fake_openai.chat_call_count == 6
    assert first.usage == JudgeUsage(6000, 1200, 6, 6)
    assert first.cost_usd == pytest.approx(6 * (1000 * 0.15 + 200 * 0.60) / 1e6)  # 0.00162 USD
    assert not any(o.result.judge.cached for o in first.outcomes)

    second = run_evals(items, [alignment(fake_openai, model="openai/gpt-4o-mini", cache=cache)])

    assert fake_openai.chat_call_count == 6  # no new call
    assert [o.score for o in second.outcomes] == [0.84] * 6
    assert all(o.result.judge.cached for o in second.outcomes)
    assert all(o.usage == JudgeUsage() and o.result.judge.usage == JudgeUsage() for o in second.outcomes)
    assert second.cost_usd == 0.0


# ---------------------------------------------------------------- estimate and actual cost


def test_estimate_counts_rendered_prompts_and_prices_them(fake_openai):
    payloads = [
        item_payload(0),
        item_payload(1, output="def f(n):\n    return 1 if n < 2 else n * f(n - 1)"),
        run_payload(user="[item-2] " + "Explain recursion. " * 40, output="It calls itself."),
        item_payload(3, output="   "),
    ]  # empty response: invalid input, no call
    items = items_of(payloads)
    pa = alignment(fake_openai, model="openai/gpt-4o-mini")
    # 4 characters a token, per message, of the prompts the judge would receive for the 3 valid items.
    prompt = sum(len(m["content"]) // 4 for p in payloads[:3] for m in pa.render_prompt(p))
    completion = 3 * 700  # the scorer's typical reply: 700 tokens

    estimate = estimate_run(items, [TD, pa])

    assert replace(estimate, call_bound_usd=None, call_bound_tokens=None) == Estimate(
        judge_calls=3,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost_usd=pytest.approx(prompt * PROMPT_USD + completion * COMPLETION_USD),
    )
    # What a budget holds for the first call: at least its messages' bytes (+ the response format) as prompt
    # tokens and a 4,096-token reply (no max output tokens); the CLI test checks it is the budget's own figure.
    first_bytes = sum(len(m["content"].encode()) for m in pa.render_prompt(payloads[0]))
    assert estimate.call_bound_usd > first_bytes * PROMPT_USD + 4096 * COMPLETION_USD
    # The same call's bound in tokens: its prompt bound and the 4,096-token reply, priced as the USD bound is.
    assert estimate.call_bound_tokens > first_bytes + 4096
    assert estimate.call_bound_usd == pytest.approx(
        (estimate.call_bound_tokens - 4096) * PROMPT_USD + 4096 * COMPLETION_USD
    )
    unknown = estimate_run(items, [TD, alignment(fake_openai, model="openai/no-such-model")])
    assert (unknown.judge_calls, unknown.prompt_tokens, unknown.cost_usd) == (3, prompt, None)
    assert estimate_run(items, [TD]) == Estimate(0, 0, 0, 0.0)
    assert fake_openai.chat_call_count == 0


def test_estimate_leaves_out_prompts_the_judge_refuses_as_longer_than_the_context_window(fake_openai):
    short = run_payload(user="Explain recursion.", output="It calls itself.")
    long = run_payload(user="Explain recursion.", output="word " * 1600)  # 8,000 characters: 2,000 tokens alone
    pa = alignment(fake_openai, model="openai/gpt-4o-mini", context_window=2000)
    items = items_of([short, long])

    estimate = estimate_run(items, [pa])

    # Only the short item's prompt is sent: 4 characters a token, per message.
    assert (estimate.judge_calls, estimate.too_long) == (1, 1)
    assert estimate.prompt_tokens == sum(len(m["content"]) // 4 for m in pa.render_prompt(short))
    assert fake_openai.chat_call_count == 0
    fake_openai.enqueue(Reply.json(GOOD))
    result = run_evals(items, [pa])  # the run agrees: one call, the long item refused before sending
    assert [o.status for o in result.outcomes] == [ScoreStatus.SCORED, ScoreStatus.EXCEEDS_CONTEXT]
    assert fake_openai.chat_call_count == 1


def test_actual_usage_and_cost_include_reasks_and_retries(fake_openai):
    def usage(prompt, completion):
        return {"usage": {"prompt_tokens": prompt, "completion_tokens": completion}}

    fake_openai.enqueue(
        Reply.content(BROKEN, **usage(100, 10)),
        Reply.json(GOOD, **usage(150, 20)),  # item 0: re-ask, then valid
        Reply.content(BROKEN, **usage(100, 10)),
        Reply.content(BROKEN, **usage(100, 10)),  # item 1: invalid twice
        Reply.rate_limited(0.01),
        Reply.json(GOOD, **usage(50, 5)),  # item 2: 429, the runner retries
    )
    store = Store(":memory:")
    pa = alignment(fake_openai, model="openai/gpt-4o-mini", max_retries=0)

    result = run_evals(items_of([item_payload(i) for i in range(3)]), [pa], concurrency=1, store=store)

    fake_openai.assert_all_replies_used()
    assert [o.status for o in result.outcomes] == [
        ScoreStatus.SCORED,
        ScoreStatus.JUDGE_OUTPUT_INVALID,
        ScoreStatus.SCORED,
    ]
    assert result.outcomes[0].usage == JudgeUsage(250, 30, 2, 2)
    assert result.outcomes[1].usage == JudgeUsage(200, 20, 2, 2)
    # Item 2: the 429 the runner retried is a request (it spent no tokens), the answer another.
    assert result.outcomes[2].usage == JudgeUsage(50, 5, 1, 2)
    # 500 prompt tokens and 55 completion tokens: (500 · 0.15 + 55 · 0.60) / 1e6 = 108e-6 USD
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (500, 55)
    assert result.cost_usd == pytest.approx(108e-6)
    _, _, loaded = load_run(store, result.run_id)
    assert loaded.usage == result.usage and loaded.cost_usd == pytest.approx(108e-6)


def test_a_run_retried_with_another_judge_prices_each_outcome_at_its_own_judges_model(fake_openai):
    def usage(prompt, completion):
        return {"usage": {"prompt_tokens": prompt, "completion_tokens": completion}}

    fake_openai.responder = Script(
        {2: [Reply.server_error(should_retry=False), Reply.json(GOOD, **usage(500, 50))]},
        default=Reply.json(GOOD, **usage(1000, 200)),
    )
    store = Store(":memory:")
    first = run_evals(
        items_of([item_payload(i) for i in range(3)]),
        [alignment(fake_openai, model="openai/gpt-4o-mini", max_retries=0)],
        store=store,
    )
    assert first.n_failed == 1  # item 2: a server error, no tokens

    retried = run_evals(
        [],
        [alignment(fake_openai, model="openai/gpt-4o", max_retries=0)],
        store=store,
        run_id=first.run_id,
        retry_failed=True,
    )

    # Items 0 and 1 at gpt-4o-mini's list price ($0.15 / $0.60 per million): 2 · (1000 · 0.15 + 200 · 0.60) / 1e6
    # = 540e-6; item 2 at gpt-4o's ($2.50 / $10): (500 · 2.5 + 50 · 10) / 1e6 = 1750e-6. Together 2290e-6.
    # (All at gpt-4o would be (2500 · 2.5 + 450 · 10) / 1e6 = 10750e-6.)
    assert retried.cost.unpriced == {} and retried.cost.priced == 3
    assert retried.cost_usd == pytest.approx(2290e-6)
    _, _, loaded = load_run(store, first.run_id)
    assert loaded.cost_usd == pytest.approx(2290e-6)


def test_outcomes_of_a_judge_without_a_price_have_an_unknown_cost_not_another_models(fake_openai):
    fake_openai.responder = Script(
        {
            1: [
                Reply.server_error(should_retry=False),
                Reply.json(GOOD, usage={"prompt_tokens": 500, "completion_tokens": 50}),
            ]
        },
        default=Reply.json(GOOD, usage={"prompt_tokens": 1000, "completion_tokens": 200}),
    )
    store = Store(":memory:")
    first = run_evals(
        items_of([item_payload(i) for i in range(2)]),
        [alignment(fake_openai, model="openai/gpt-4o-mini", max_retries=0)],
        store=store,
    )
    retried = run_evals(
        [],
        [alignment(fake_openai, model="llama3.1", max_retries=0)],
        store=store,
        run_id=first.run_id,
        retry_failed=True,
    )

    # Item 0 at gpt-4o-mini: (1000 · 0.15 + 200 · 0.60) / 1e6 = 270e-6; item 1's llama3.1 has no list price.
    assert retried.cost.usd == pytest.approx(270e-6) and retried.cost.priced == 1
    assert retried.cost.unpriced == {"llama3.1": 1}
    assert retried.cost_usd is None  # the whole cost is unknown, not $270e-6
    assert (
        retried.cost.unknown_text()
        == "unknown for 1 outcome judged by llama3.1 (no list price, and no price set for it)"
    )


# ---------------------------------------------------------------- validation


def test_invalid_arguments_are_rejected_before_anything_runs():
    items = items_of([item_payload(0)])
    store = Store(":memory:")
    with pytest.raises(ValueError, match="concurrency"):
        run_evals(items, [TD], concurrency=0, store=store)
    with pytest.raises(ValueError, match="distinct"):
        run_evals(items, [TD, create_textual_difference_scorer(scale=10)], store=store)
    with pytest.raises(ValueError, match="store"):
        run_evals([], [TD], run_id="abc123")
    with pytest.raises(KeyError, match="nope"):
        run_evals([], [TD], store=store, run_id="nope")
    assert store.list_runs() == []


class _Waits:
    """A scorer that is not CPU-bound (no ``cpu_bound``): textual difference, as if it waited on a service."""

    id = name = "waits"

    def run(self, payload):
        return TD.run(payload)


def test_a_run_of_code_scorers_defers_full_garbage_collections_until_it_ends():
    items = [EvalItem(f"q{i}", {"input": "q", "output": f"out {i}", "ground_truth": f"out {i}"}) for i in range(4)]
    before = gc.get_threshold()
    seen: list[tuple[str, int]] = []

    def on_item(index, item, outcomes):
        seen.append(("first", gc.get_threshold()[2]))
        if index == 0:  # a second run of code scorers while the first one scores, then one that waits on I/O
            run_evals(items[:1], [TD], on_item_complete=lambda *_: seen.append(("second", gc.get_threshold()[2])))
            seen.append(("after the second", gc.get_threshold()[2]))

    run_evals(items, [TD], on_item_complete=on_item)
    waiting: list[tuple[int, int, int]] = []
    run_evals(items, [_Waits()], on_item_complete=lambda *_: waiting.append(gc.get_threshold()))

    deferred = garbage.DEFERRED_THRESHOLD
    assert (
        seen == [("first", deferred), ("second", deferred), ("after the second", deferred)] + [("first", deferred)] * 3
    )
    assert gc.get_threshold() == before  # set back when the last run ended
    assert waiting == [before] * 4  # a run that is not CPU-bound leaves the collector alone


def test_a_run_records_the_options_each_scorer_was_built_with_and_none_it_cannot_know():
    settings = JudgeSettings(api_key="k")

    class Own:  # the caller's own class: its options cannot be known
        id = "own"
        name = "Own"

        def run(self, payload):
            return TD.run(payload)

    scorers = [
        create_prompt_alignment_scorer(settings=settings, options={"scale": 10, "evaluationMode": "user"}),
        create_faithfulness_scorer(settings=settings, options={"scale": 5}),
        create_hallucination_scorer(settings=settings, get_context=lambda run: ["a passage"]),  # Python-only option
        create_keyword_coverage_scorer(scale=2),
        create_scorer("textual-difference", {"target": "input"}),
        Own(),
    ]
    assert recorded_options(scorers) == {
        PA_ID: {"scale": 10.0, "evaluation_mode": "user", "reason": "composed", "include_conversation_history": True},
        "faithfulness": {"scale": 5.0, "context": ()},
        "hallucination": None,
        "keyword-coverage": {"scale": 2.0},
        TD_ID: {"target": "input"},  # as given to the catalogue, whose missing options are its defaults
        "own": None,
    }
    # Options given to run_evals (the CLI's and the dashboard's) are recorded as given.
    assert recorded_options([Own()], {"own": {"scale": 3}}) == {"own": {"scale": 3}}
