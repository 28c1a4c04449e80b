"""Batch API mode: the real openai client drives the fake server's /v1/files and /v1/batches.

Every expected number is worked out by hand in the comments.
"""

from __future__ import annotations

import collections
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fake_openai import BatchPlan, FakeOpenAI, Reply
from judge_data import run_payload, settings_for, single_analysis

from scorers import EvalItem, JudgeUsage, ScoreStatus, Store, create_prompt_alignment_scorer, estimate_run, run_evals
from scorers.runs.batch_api import run_batch_api, split_requests

REPO = Path(__file__).resolve().parents[1]
PA_ID = "prompt-alignment"
GOOD = single_analysis(0.9, 0.8, 0.7, 1.0)  # user mode: 0.40·0.9 + 0.30·0.8 + 0.20·0.7 + 0.10·1.0 = 0.84
_ITEM = re.compile(r"\[item-(\d+)\]")


def items(n: int) -> list[EvalItem]:
    return [EvalItem(f"q{i}", run_payload(user=f"[item-{i}] Write a factorial function")) for i in range(n)]


def alignment(fake, store=None):
    return create_prompt_alignment_scorer(options={"evaluation_mode": "user"}, settings=settings_for(fake), cache=store)


def item_of(body: dict) -> int:
    return int(_ITEM.search(json.dumps(body["messages"])).group(1))


def is_reask(body: dict) -> bool:
    return any(m["role"] == "assistant" for m in body["messages"])


def responder(invalid_first: set[int] = frozenset(), too_long: set[int] = frozenset()):
    """Valid analyses, except: ``invalid_first`` items answer non-JSON until re-asked; ``too_long`` items 400."""

    def answer(body: dict) -> Reply:
        item = item_of(body)
        if item in too_long:
            return Reply.context_length_exceeded()
        if item in invalid_first and not is_reask(body):
            return Reply.content("the answer is 0.9")
        return Reply.json(GOOD)

    return answer


def line_counts(fake: FakeOpenAI) -> collections.Counter[int]:
    """How many batch lines the fake answered per item (what the provider would bill)."""
    return collections.Counter(item_of(line["body"]) for line in fake.batch_lines)


_CHILD = """
import sys
sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[1] + "/tests")
from judge_data import run_payload
from scorers import EvalItem, JudgeSettings, Store, create_prompt_alignment_scorer
from scorers.runs.batch_api import run_batch_api
settings = JudgeSettings(model="openai/fake-judge", base_url=sys.argv[3], api_key="test-key", max_retries=0)
scorer = create_prompt_alignment_scorer(options={"evaluation_mode": "user"}, settings=settings)
data = [EvalItem(f"q{i}", run_payload(user=f"[item-{i}] Write a factorial function")) for i in range(2000)]
run_batch_api(data, [scorer], store=Store(sys.argv[2]), poll_interval=0.05, max_requests_per_file=800,
              dataset_name="large.jsonl")
"""


def _stored_batches(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=1.0) as conn:
            return conn.execute("SELECT COUNT(*) FROM batch_jobs").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet, or locked for a moment
        return 0


def test_2000_items_through_the_batch_api_survive_a_restart_an_expiry_a_reask_and_a_failed_line(fake_openai, tmp_path):
    # Item 7 answers invalid JSON first (re-asked in a follow-up batch); item 13's line fails
    # with 400 context_length_exceeded; the first batch expires after 700 of its 800 lines.
    fake_openai.responder = responder(invalid_first={7}, too_long={13})
    fake_openai.plan_batches(BatchPlan(expire_after=700))
    fake_openai.batch_polls = 10**9  # the batches stay in progress while the first process runs
    db = tmp_path / "team.db"
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(REPO), str(db), fake_openai.base_url],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120  # imports and 2,000 prompts on a busy machine
        while _stored_batches(db) < 3:  # 2,000 requests at 800 a file: 800 + 800 + 400
            assert child.poll() is None, child.communicate()[1].decode()[-2000:]
            assert time.monotonic() < deadline, "the first process did not submit its batches within 120 s"
            time.sleep(0.05)
        time.sleep(0.2)  # it is polling now
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.wait()

    store = Store(db)
    (run,) = store.list_runs()
    assert run["status"] == "running"  # killed while waiting
    assert [j["n_requests"] for j in store.batch_jobs(run["id"])] == [800, 800, 400]
    assert store.results(run["id"]) == []

    fake_openai.batch_polls = 0  # the provider finishes the batches now
    progress: list[str] = []
    result = run_batch_api(
        [],
        [alignment(fake_openai, store)],
        store=store,
        run_id=run["id"],
        poll_interval=0.01,
        max_requests_per_file=800,
        on_progress=progress.append,
    )

    assert result.status == "completed"
    assert store.get_run(run["id"])["status"] == "completed"
    statuses = collections.Counter(o.status for o in result.outcomes)
    assert statuses == {ScoreStatus.SCORED: 1999, ScoreStatus.EXCEEDS_CONTEXT: 1}
    by_item = {o.item_index: o for o in result.outcomes}
    assert "context window" in by_item[13].error
    assert by_item[7].score == 0.84 and by_item[7].usage.calls == 2  # the answer and its re-ask
    assert {o.score for o in result.outcomes if o.status is ScoreStatus.SCORED} == {0.84}
    # Batches: the 3 of the first process, then one follow-up with the 100 expired lines
    # (800 - 700) and item 7's re-ask: 101 requests. The restart created none of its own.
    jobs = store.batch_jobs(run["id"])
    assert [j["n_requests"] for j in jobs] == [800, 800, 400, 101]
    assert [j["status"] for j in jobs] == ["expired", "completed", "completed", "completed"]
    assert len(fake_openai.batches) == 4
    # Billed once per request: every item once, item 7 twice (its re-ask); no live call.
    counts = line_counts(fake_openai)
    assert counts[7] == 2 and set(counts) == set(range(2000))
    assert sum(counts.values()) == 2001
    assert fake_openai.chat_call_count == 0
    assert any("submitted: 101 requests" in p for p in progress)


def test_answers_are_cached_like_live_replies(fake_openai):
    fake_openai.responder = responder()
    store = Store(":memory:")
    first = run_batch_api(items(3), [alignment(fake_openai, store)], store=store, poll_interval=0.01)
    assert [o.score for o in first.outcomes] == [0.84, 0.84, 0.84]
    # The same items live: every reply comes from the cache, no call at all.
    second = run_evals(items(3), [alignment(fake_openai, store)], store=store)
    assert [o.score for o in second.outcomes] == [0.84, 0.84, 0.84]
    assert fake_openai.chat_call_count == 0 and second.usage.calls == 0


def test_reasks_can_go_to_the_live_api(fake_openai):
    fake_openai.responder = responder(invalid_first={1})
    store = Store(":memory:")
    result = run_batch_api(
        items(3), [alignment(fake_openai, store)], store=store, poll_interval=0.01, live_follow_ups=True
    )
    assert [o.status for o in result.outcomes] == [ScoreStatus.SCORED] * 3
    assert len(fake_openai.batches) == 1  # no follow-up batch
    assert fake_openai.chat_call_count == 1 and is_reask(fake_openai.last_chat_request())
    assert store.get_run(result.run_id)["config"]["live_follow_ups"] is True


def test_invalid_twice_is_judge_output_invalid_with_the_raw_reply(fake_openai):
    fake_openai.responder = lambda body: Reply.content("still not JSON") if item_of(body) == 0 else Reply.json(GOOD)
    store = Store(":memory:")
    result = run_batch_api(items(2), [alignment(fake_openai, store)], store=store, poll_interval=0.01)
    first = result.outcomes[0]
    assert first.status is ScoreStatus.JUDGE_OUTPUT_INVALID and first.raw_reply == "still not JSON"
    assert first.usage.calls == 2
    assert [b["request_counts"]["total"] for b in fake_openai.batches] == [2, 1]  # 2 answers, 1 re-ask


def test_a_request_that_expires_twice_is_an_api_error(fake_openai):
    fake_openai.responder = responder()
    # Batch 1 runs 2 of 3 lines; batch 2 (the third line again) runs none of its 1.
    fake_openai.plan_batches(BatchPlan(expire_after=2), BatchPlan(expire_after=0))
    store = Store(":memory:")
    result = run_batch_api(items(3), [alignment(fake_openai, store)], store=store, poll_interval=0.01)
    statuses = [o.status for o in result.outcomes]
    assert statuses.count(ScoreStatus.SCORED) == 2 and statuses.count(ScoreStatus.API_ERROR) == 1
    (failed,) = [o for o in result.outcomes if o.status is ScoreStatus.API_ERROR]
    assert "expired 2 times" in failed.error
    assert result.status == "completed"


def test_a_line_sent_again_after_its_batch_expired_counts_as_sent_twice(fake_openai):
    # Batch 1 runs 1 of its 3 lines and expires; batch 2 carries the other 2 again and runs none. The item answered
    # had 1 line sent; the 2 others had 2 each and are API errors: 1 + 2 + 2 = 5 lines, the fake's 3 + 2. Before,
    # each outcome counted 1 (the answer it read), 3 in all.
    fake_openai.responder = responder()
    fake_openai.plan_batches(BatchPlan(expire_after=1), BatchPlan(expire_after=0))
    store = Store(":memory:")
    result = run_batch_api(items(3), [alignment(fake_openai, store)], store=store, poll_interval=0.01)
    assert [b["request_counts"]["total"] for b in fake_openai.batches] == [3, 2]
    sent = sorted((o.status, o.usage.requests, o.usage.calls) for o in result.outcomes)
    assert sent == [(ScoreStatus.API_ERROR, 2, 0), (ScoreStatus.API_ERROR, 2, 0), (ScoreStatus.SCORED, 1, 1)]
    assert sorted(r["judge_requests"] for r in store.results(result.run_id)) == [1, 2, 2]
    assert result.usage.requests == 5


def test_a_line_answered_after_its_batch_expired_once_counts_both_lines(fake_openai):
    # Batch 1 runs 2 of its 3 lines and expires; batch 2 runs the third line again: 2 lines for that item, 4 in all.
    fake_openai.responder = responder()
    fake_openai.plan_batches(BatchPlan(expire_after=2))
    store = Store(":memory:")
    result = run_batch_api(items(3), [alignment(fake_openai, store)], store=store, poll_interval=0.01)
    assert [b["request_counts"]["total"] for b in fake_openai.batches] == [3, 1]
    assert [o.status for o in result.outcomes] == [ScoreStatus.SCORED] * 3
    assert sorted(o.usage.requests for o in result.outcomes) == [1, 1, 2]
    assert result.usage.requests == 4 and result.usage.calls == 3


def test_a_batch_that_fails_validation_fails_its_items_with_the_reason(fake_openai):
    fake_openai.responder = responder()
    fake_openai.plan_batches(BatchPlan(fail="line 1: model not allowed"))
    store = Store(":memory:")
    result = run_batch_api(items(2), [alignment(fake_openai, store)], store=store, poll_interval=0.01)
    assert [o.status for o in result.outcomes] == [ScoreStatus.API_ERROR] * 2
    assert all("model not allowed" in o.error for o in result.outcomes)
    assert fake_openai.batch_lines == []


def test_stopping_leaves_the_batch_to_a_later_resume(fake_openai):
    fake_openai.responder = responder()
    fake_openai.batch_polls = 10**9
    store = Store(":memory:")
    cancel = threading.Event()
    first = run_batch_api(
        items(4),
        [alignment(fake_openai, store)],
        store=store,
        poll_interval=0.01,
        on_progress=lambda message: cancel.set(),
        cancel=cancel,
    )
    assert first.status == "cancelled" and first.outcomes == []
    fake_openai.batch_polls = 0
    second = run_batch_api([], [alignment(fake_openai, store)], store=store, run_id=first.run_id, poll_interval=0.01)
    assert second.status == "completed" and [o.score for o in second.outcomes] == [0.84] * 4
    assert len(fake_openai.batches) == 1


def test_files_are_split_at_the_providers_limits():
    # 50,001 requests: one full file of 50,000 and one of 1.
    assert [len(f) for f in split_requests(["{}"] * 50_001)] == [50_000, 1]
    # 10-byte lines (9 characters + newline) in files of at most 25 bytes: 2 per file.
    assert [len(f) for f in split_requests(["x" * 9] * 5, max_bytes=25)] == [2, 2, 1]
    with pytest.raises(ValueError, match="more than a file may hold"):
        split_requests(["x" * 30], max_bytes=25)


def test_the_estimate_shows_the_batch_discount(fake_openai):
    scorer = create_prompt_alignment_scorer(
        options={"evaluation_mode": "user"}, settings=settings_for(fake_openai, model="openai/gpt-4o-mini")
    )
    live = estimate_run(items(10), [scorer])
    batch = estimate_run(items(10), [scorer], batch_api=True)
    assert batch.judge_calls == live.judge_calls == 10
    assert batch.batch_api and batch.live_cost_usd == live.cost_usd
    # The Batch API bills half the list price: cost = live cost × (1 - 0.5).
    assert batch.cost_usd == pytest.approx(live.cost_usd * 0.5)


def test_cli_batch_api_prints_the_discounted_estimate_and_scores_through_batches(
    fake_judge, tmp_path, monkeypatch, capsys
):
    from scorers.cli import main

    monkeypatch.chdir(tmp_path)
    fake_judge.responder = lambda body: Reply.json(GOOD)
    data = tmp_path / "small.csv"
    data.write_text("id,prompt,response\nq1,Say hi in French,Bonjour !\nq2,Name a prime,7\n", encoding="utf-8")
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--model", "gpt-4o-mini", "--mode", "user"]
    code = main([*argv, "--batch-api", "--poll-interval", "0.01"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "at the Batch API's price (50% off gpt-4o-mini's list price, $" in err
    assert "submitted: 2 requests" in err
    assert "Judge usage: 2 batch lines (2 answered)," in out  # a Batch API run sends lines, not requests
    assert "cost $" in out and "at Batch API prices" in out
    assert fake_judge.chat_call_count == 0 and len(fake_judge.batches) == 1
    run_id = out.split("Run id: ", 1)[1].split()[0]
    store = Store(tmp_path / "studio.db")
    assert store.get_run(run_id)["config"]["batch_api"] is True
    assert [r["score"] for r in store.results(run_id)] == [0.84, 0.84]
    store.close()
    assert main(["run", str(data), "--scorer", "textual-difference", "--batch-api"]) == 2
    assert "--batch-api needs an LLM-judged scorer" in capsys.readouterr().err


def test_budget_caps_are_refused_with_the_batch_api_before_anything_is_sent(fake_judge, tmp_path, monkeypatch, capsys):
    # Caps are checked before each live call; a Batch API run uploads every request at once, so none could hold it.
    from scorers.cli import main

    monkeypatch.chdir(tmp_path)
    store = Store(tmp_path / "lib.db")
    with pytest.raises(ValueError, match=r"Budget caps \(at most 5 judge calls\) apply to live judge calls only"):
        run_batch_api(items(2), [alignment(fake_judge)], store=store, run_config={"budget": {"max_judge_calls": 5}})
    assert store.list_runs() == []
    store.close()
    data = tmp_path / "small.csv"
    data.write_text("id,prompt,response\nq1,Say hi,hi\n", encoding="utf-8")
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--model", "gpt-4o-mini", "--batch-api", "--yes"]
    assert main([*argv, "--max-cost", "2"]) == 2
    assert "Budget caps (at most $2.00) apply to live judge calls only" in capsys.readouterr().err
    assert fake_judge.chat_call_count == 0 and not fake_judge.batches


def test_retrying_failed_items_sends_them_again_and_their_rows_keep_what_the_failed_attempts_spent(fake_openai):
    fixed = threading.Event()

    def answer(body: dict) -> Reply:
        if item_of(body) == 0 and not fixed.is_set():
            return Reply.content("still not JSON", usage={"prompt_tokens": 100, "completion_tokens": 10})
        return Reply.json(GOOD, usage={"prompt_tokens": 50, "completion_tokens": 5})

    fake_openai.responder = answer
    store = Store(":memory:")
    first = run_batch_api(items(2), [alignment(fake_openai)], store=store, poll_interval=0.01)
    # Item 0: the answer and its re-ask are invalid: 2 calls, 2 × 100 prompt + 2 × 10 completion tokens.
    assert first.outcomes[0].status is ScoreStatus.JUDGE_OUTPUT_INVALID
    assert first.outcomes[0].usage == JudgeUsage(200, 20, 2, 2)
    assert len(fake_openai.batch_lines) == 3  # 2 answers, then 1 re-ask

    fixed.set()
    retried = run_batch_api(
        [], [alignment(fake_openai)], store=store, run_id=first.run_id, retry_failed=True, poll_interval=0.01
    )

    # The retry sends item 0's request again (one more batch line), and it is answered validly.
    assert len(fake_openai.batch_lines) == 4 and item_of(fake_openai.batch_lines[-1]["body"]) == 0
    assert [o.status for o in retried.outcomes] == [ScoreStatus.SCORED] * 2
    # Its row: the failed attempt's 2 calls (200 + 20) and the retry's 1 (50 + 5): 3 calls, 250 + 25 tokens,
    # as the live path counts a retried failure.
    assert retried.outcomes[0].usage == JudgeUsage(250, 25, 3, 3)
    row = store.results(first.run_id, 0)[0]
    assert (row["prompt_tokens"], row["completion_tokens"], row["judge_calls"]) == (250, 25, 3)
    # The run's spend: item 1's 50 + 5 in 1 call, plus item 0's.
    assert retried.usage == JudgeUsage(300, 30, 4, 4)


def test_a_retry_stopped_before_its_batch_ends_keeps_the_stored_failure_in_its_result(fake_openai):
    # Item 0 fails as above (2 invalid answers: 200 + 20 tokens, 2 calls, 2 lines); item 1 scores (50 + 5, 1 line).
    def answer(body: dict) -> Reply:
        if item_of(body) == 0:
            return Reply.content("still not JSON", usage={"prompt_tokens": 100, "completion_tokens": 10})
        return Reply.json(GOOD, usage={"prompt_tokens": 50, "completion_tokens": 5})

    fake_openai.responder = answer
    store = Store(":memory:")
    first = run_batch_api(items(2), [alignment(fake_openai)], store=store, poll_interval=0.01)
    assert first.usage == JudgeUsage(250, 25, 3, 3)
    # The retry's batch is submitted, then the run is stopped before it ends: item 0's stored row stands, and the
    # result shows it. Before, the result left it out: 1 outcome, 50 + 5 tokens in 1 call.
    fake_openai.batch_polls = 10**9
    cancel = threading.Event()
    retried = run_batch_api(
        [],
        [alignment(fake_openai)],
        store=store,
        run_id=first.run_id,
        retry_failed=True,
        poll_interval=0.01,
        on_progress=lambda message: cancel.set(),
        cancel=cancel,
    )
    assert retried.status == "cancelled"
    assert [o.status for o in retried.outcomes] == [ScoreStatus.JUDGE_OUTPUT_INVALID, ScoreStatus.SCORED]
    assert retried.usage == JudgeUsage(250, 25, 3, 3)


def test_cli_batch_api_usage_line_prices_the_outcomes_at_the_price_set(fake_judge, tmp_path, monkeypatch, capsys):
    from scorers.cli import main
    from scorers.runs.judges import stored_run_cost

    monkeypatch.chdir(tmp_path)
    fake_judge.responder = lambda body: Reply.json(GOOD, usage={"prompt_tokens": 100, "completion_tokens": 10})
    data = tmp_path / "small.csv"
    data.write_text("id,prompt,response\nq1,Say hi in French,Bonjour !\nq2,Name a prime,7\n", encoding="utf-8")
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--model", "llama3.1", "--mode", "user"]
    code = main([*argv, "--price", "1,2", "--batch-api", "--poll-interval", "0.01"])
    out, err = capsys.readouterr()
    assert code == 0, err
    # llama3.1 has no list price; at the price set, 2 outcomes × (100 × 1 + 10 × 2) / 1e6 = $0.00024,
    # at the Batch API's half: $0.00012 (the usage line said 'unknown' before, History $0.00012).
    assert "cost $0.00012" in out
    run_id = out.split("Run id: ", 1)[1].split()[0]
    store = Store(tmp_path / "studio.db")
    assert round(stored_run_cost(store, store.get_run(run_id)).usd, 10) == 0.00012
    store.close()
