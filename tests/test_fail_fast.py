"""Runs fail fast: the pre-flight item, and a pause after K judge failures in a row (calls counted at the fake)."""

from __future__ import annotations

import json
import threading
import time

import pytest
from fake_openai import FakeOpenAI, Reply
from judge_data import run_payload, settings_for, single_analysis

from scorers import EvalItem, Store, create_prompt_alignment_scorer, load_run, run_evals
from scorers.core.budget import BudgetCaps
from scorers.core.pricing import Price

OK = Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0))


def items(n: int) -> list[EvalItem]:
    return [EvalItem(f"q{i}", run_payload(user=f"Question {i}?", output=f"Answer {i}.")) for i in range(n)]


def alignment(fake: FakeOpenAI, **settings):
    return create_prompt_alignment_scorer(
        options={"evaluation_mode": "user"}, settings=settings_for(fake, max_retries=0, **settings)
    )


@pytest.fixture
def store(tmp_path):
    db = Store(tmp_path / "runs.db")
    yield db
    db.close()


def test_preflight_stops_a_wrong_url_run_after_one_item(fake_openai: FakeOpenAI, store):
    # A base URL without the /v1 part: every chat request is a 404, as for a wrong URL or model.
    scorer = alignment(fake_openai, base_url=fake_openai.url + "/wrong")
    result = run_evals(items(10), [scorer], concurrency=4, store=store)

    assert fake_openai.chat_call_count == 0 and len(fake_openai.requests) == 1  # one request, nothing else
    assert result.status == "judge_unreachable"
    assert result.outcomes == []  # the pre-flight item is left to do, not recorded as failed
    assert result.stop_reason.startswith("The judge could not be used for the first item, so nothing else was sent")
    assert "(404)" in result.stop_reason
    run = store.get_run(result.run_id)
    assert (run["status"], run["stop_reason"]) == ("judge_unreachable", result.stop_reason)


def test_preflight_stops_a_run_whose_judge_cannot_be_reached(store):
    closed = FakeOpenAI().start()
    settings_url = closed.base_url
    closed.close()  # nothing listens on that port any more
    scorer = create_prompt_alignment_scorer(
        options={"evaluation_mode": "user"},
        settings=settings_for(closed, base_url=settings_url, max_retries=0, timeout=2.0),
    )
    result = run_evals(items(10), [scorer], concurrency=4, store=store)
    assert result.status == "judge_unreachable" and result.outcomes == []
    assert "Cannot connect to the judge" in result.stop_reason


def test_k_server_errors_in_a_row_pause_the_run_with_no_further_calls(fake_openai: FakeOpenAI, store):
    lock = threading.Lock()
    count = {"n": 0}

    def responder(body):  # the judge works for 4 calls, then answers 500 to everything
        with lock:
            count["n"] += 1
            n = count["n"]
        return OK if n <= 4 else Reply.server_error(should_retry=False)

    fake_openai.responder = responder
    result = run_evals(items(20), [alignment(fake_openai)], concurrency=1, store=store, max_consecutive_failures=3)

    # 4 scored, then 3 failures in a row: the pause; one item at a time, so 4 + 3 calls and none after.
    assert fake_openai.chat_call_count == 7
    assert result.status == "judge_unreachable"
    assert [o.status.value for o in result.outcomes] == ["scored"] * 4  # the 3 items hit are left to do
    assert "Paused after 3 judge failures in a row" in result.stop_reason
    assert store.get_run(result.run_id)["status"] == "judge_unreachable"

    fake_openai.responder = lambda body: OK  # the judge is back: resume scores the 16 left, each once
    resumed = run_evals([], [alignment(fake_openai)], concurrency=4, store=store, run_id=result.run_id)
    assert resumed.status == "completed" and len(resumed.outcomes) == 20
    assert fake_openai.chat_call_count == 7 + 16


def test_a_killed_judge_pauses_the_run_after_k_failures(fake_openai: FakeOpenAI, store):
    lock = threading.Lock()
    served = {"n": 0}
    killed = threading.Event()

    def responder(body):
        with lock:
            served["n"] += 1
            if served["n"] == 3:
                killed.set()
        return OK

    fake_openai.responder = responder
    closer = threading.Thread(target=lambda: killed.wait(10) and fake_openai.close())
    closer.start()
    result = run_evals(
        items(30), [alignment(fake_openai, timeout=2.0)], concurrency=1, store=store, max_consecutive_failures=4
    )
    closer.join(10)
    assert result.status == "judge_unreachable"
    scored = [o for o in result.outcomes if o.status.value == "scored"]
    # The reply the server was writing when it closed may never reach the client: at most one served
    # reply is lost that way (its item is left to do, not recorded).
    assert served["n"] - 1 <= len(scored) <= served["n"] and served["n"] >= 3
    assert len(result.outcomes) == len(scored)  # no item was recorded as failed
    assert "Paused after 4 judge failures in a row" in result.stop_reason
    _, _, stored = load_run(store, result.run_id)
    assert len(stored.outcomes) == len(scored)


def test_isolated_failures_are_recorded_and_the_run_goes_on(fake_openai: FakeOpenAI, store):
    lock = threading.Lock()
    count = {"n": 0}

    def responder(body):  # every third call fails: never K = 3 in a row
        with lock:
            count["n"] += 1
            n = count["n"]
        return Reply.server_error(should_retry=False) if n % 3 == 0 else OK

    fake_openai.responder = responder
    result = run_evals(items(9), [alignment(fake_openai)], concurrency=1, store=store, max_consecutive_failures=3)
    assert result.status == "completed"
    assert [o.status.value for o in result.outcomes].count("api_error") == 3  # calls 3, 6 and 9
    assert fake_openai.chat_call_count == 9


# ---- unusable judge replies: K in a row pause the run (the same K); they were paid, so they are recorded

GARBAGE = "I think it is fine."  # not JSON: invalid, re-asked once, invalid again (2 calls an item)
REFUSAL = "I'm sorry, but I can't help with evaluating this content."  # judge_refused at once (1 call)
OUT_OF_RANGE = Reply.json(single_analysis(1.5, 0.8, 0.7, 1.0))  # an intent score above 1: invalid, never clamped


def test_k_invalid_replies_in_a_row_pause_the_run_and_a_resume_scores_the_rest(fake_openai: FakeOpenAI, store):
    fake_openai.responder = lambda body: Reply.content(GARBAGE)
    result = run_evals(items(20), [alignment(fake_openai)], concurrency=1, store=store)

    # K = 5 (the default): 5 items, each asked and re-asked (10 calls), then nothing more was sent.
    assert fake_openai.chat_call_count == 10
    assert result.status == "judge_replies_unusable"
    assert [o.status.value for o in result.outcomes] == ["judge_output_invalid"] * 5  # recorded: they were paid
    assert result.usage.calls == 10
    assert result.stop_reason.startswith(
        "Paused: the judge's last 5 replies did not match the schema: The judge's reply is not valid for "
        "prompt_alignment_user after one re-ask: not JSON"
    )
    assert f'first reply: "{GARBAGE}".' in result.stop_reason
    run = store.get_run(result.run_id)
    assert (run["status"], run["stop_reason"]) == ("judge_replies_unusable", result.stop_reason)

    fake_openai.responder = lambda body: OK  # the judge is fixed: a resume scores the 15 items left, each once
    resumed = run_evals([], [alignment(fake_openai)], concurrency=4, store=store, run_id=result.run_id)
    assert resumed.status == "completed" and fake_openai.chat_call_count == 10 + 15
    assert [o.status.value for o in resumed.outcomes] == ["judge_output_invalid"] * 5 + ["scored"] * 15


def test_refusals_and_out_of_range_scores_in_a_row_pause_the_run_too(fake_openai: FakeOpenAI, store):
    fake_openai.responder = lambda body: Reply.content(REFUSAL)
    refused = run_evals(items(20), [alignment(fake_openai)], concurrency=1, store=store, max_consecutive_failures=3)
    assert fake_openai.chat_call_count == 3  # a refusal is not re-asked: 3 items, 3 calls
    assert refused.status == "judge_replies_unusable"
    assert [o.status.value for o in refused.outcomes] == ["judge_refused"] * 3
    assert refused.stop_reason.startswith("Paused: the judge's last 3 replies were refusals: ")
    assert f'first reply: "{REFUSAL}".' in refused.stop_reason

    fake_openai.reset()
    replies = iter([Reply.content(REFUSAL), OUT_OF_RANGE, OUT_OF_RANGE])  # item 0 refused, item 1 invalid twice
    lock = threading.Lock()

    def mixed(body):
        with lock:
            return next(replies, OUT_OF_RANGE)

    fake_openai.responder = mixed
    result = run_evals(items(20), [alignment(fake_openai)], concurrency=1, store=store, max_consecutive_failures=3)
    assert fake_openai.chat_call_count == 1 + 2 + 2
    assert [o.status.value for o in result.outcomes] == ["judge_refused"] + ["judge_output_invalid"] * 2
    assert result.stop_reason.startswith(
        "Paused: the judge's last 3 replies did not match the schema or were refusals (2 invalid, 1 refused): "
    )


def test_a_usable_reply_between_unusable_ones_starts_the_count_again(fake_openai: FakeOpenAI, store):
    lock = threading.Lock()
    count = {"n": 0}

    def responder(body):  # 2 items refused, then 1 scored, and again: never K = 3 unusable in a row
        with lock:
            count["n"] += 1
            n = count["n"]
        return OK if n % 3 == 0 else Reply.content(REFUSAL)

    fake_openai.responder = responder
    result = run_evals(items(9), [alignment(fake_openai)], concurrency=1, store=store, max_consecutive_failures=3)
    assert result.status == "completed"
    assert [o.status.value for o in result.outcomes] == ["judge_refused", "judge_refused", "scored"] * 3
    assert fake_openai.chat_call_count == 9


def test_a_judge_whose_replies_are_all_unusable_costs_k_items_at_any_concurrency(fake_openai: FakeOpenAI, store):
    # Until a usable reply the judge scores one item at a time, each counted before the next starts: K = 5 items,
    # each asked and re-asked (10 calls), then the pause; the 7 other workers never send a call.
    fake_openai.responder = lambda body: Reply.content(GARBAGE).delayed(0.02)
    result = run_evals(items(40), [alignment(fake_openai)], concurrency=8, store=store)
    assert result.status == "judge_replies_unusable"
    assert fake_openai.chat_call_count == 10 and result.usage.calls == 10
    assert [o.status.value for o in result.outcomes] == ["judge_output_invalid"] * 5
    # Refusals (not re-asked), K = 3: 3 calls.
    fake_openai.reset()
    fake_openai.responder = lambda body: Reply.content(REFUSAL).delayed(0.02)
    refused = run_evals(items(40), [alignment(fake_openai)], concurrency=8, store=store, max_consecutive_failures=3)
    assert refused.status == "judge_replies_unusable" and fake_openai.chat_call_count == 3


def test_after_a_usable_reply_the_run_scores_at_its_concurrency_again(fake_openai: FakeOpenAI, store):
    lock = threading.Lock()
    seen = {"n": 0, "active": 0, "peak": 0}

    def responder(body):  # the first item's two calls (ask, re-ask) are unusable; every later reply is usable
        with lock:
            seen["n"] += 1
            n = seen["n"]
            seen["active"] += 1
            seen["peak"] = max(seen["peak"], seen["active"])
        time.sleep(0.05)
        with lock:
            seen["active"] -= 1
        return Reply.content(GARBAGE) if n <= 2 else OK

    fake_openai.responder = responder
    result = run_evals(items(16), [alignment(fake_openai)], concurrency=4, store=store)
    assert result.status == "completed" and fake_openai.chat_call_count == 2 + 15
    assert seen["peak"] == 4  # one at a time only until item 1's usable reply


# ---- budgets: a run stops at a cap, never past it (calls and tokens counted at the fake server)


def test_a_judge_call_cap_is_never_exceeded(fake_openai: FakeOpenAI, store):
    fake_openai.responder = lambda body: OK
    caps = BudgetCaps(max_judge_calls=7)
    result = run_evals(items(20), [alignment(fake_openai)], concurrency=4, store=store, budget=caps)
    assert fake_openai.chat_call_count == 7  # exactly the cap, with 4 workers racing for it
    assert result.status == "budget_reached" and len(result.outcomes) == 7
    assert result.stop_reason.startswith("Stopped at the budget: the cap of 7 judge calls is reached")

    # Resumed with the same cap: the run already spent it, so nothing more is sent.
    again = run_evals([], [alignment(fake_openai)], store=store, run_id=result.run_id, budget=caps)
    assert again.status == "budget_reached" and fake_openai.chat_call_count == 7
    # With a higher cap it goes on to 12 calls in all.
    more = run_evals([], [alignment(fake_openai)], store=store, run_id=result.run_id, budget=BudgetCaps(12))
    assert more.status == "budget_reached" and fake_openai.chat_call_count == 12 and len(more.outcomes) == 12


def test_a_token_cap_is_never_exceeded_and_admits_the_same_calls_at_any_concurrency(fake_openai: FakeOpenAI, tmp_path):
    # Each call spends 1,000 + 100 tokens and holds its prompt bound (~4,300 tokens) + 200 before it is sent: the
    # cap admits a call while spent + its bound <= 15,000, about 10 calls whatever the concurrency (a call that
    # passes the cap only for what the calls in flight hold waits for them).
    fake_openai.responder = lambda body: Reply.json(
        single_analysis(0.9, 0.8, 0.7, 1.0), usage={"prompt_tokens": 1000, "completion_tokens": 100}
    )
    cap = 15_000
    calls = []
    for concurrency in (1, 4):
        store = Store(tmp_path / f"runs{concurrency}.db")
        sent = fake_openai.chat_call_count
        result = run_evals(
            items(20),
            [alignment(fake_openai, max_tokens=200)],
            concurrency=concurrency,
            store=store,
            budget=BudgetCaps(None, cap),
        )
        store.close()
        assert result.status == "budget_reached"
        spent = result.usage.total_tokens
        assert 0 < spent <= cap and spent == 1100 * result.usage.calls
        assert fake_openai.chat_call_count - sent == result.usage.calls == len(result.outcomes)
        # The stop line's "spent" is what the run's calls spent, every one of them ended.
        assert f"the run's judge calls spent {spent:,} tokens, and the next one reserves up to" in result.stop_reason
        calls.append(result.usage.calls)
    assert calls[0] == calls[1]


def test_a_cost_cap_is_never_exceeded_at_a_user_price(fake_openai: FakeOpenAI, store):
    fake_openai.responder = lambda body: OK
    price = Price(1000.0, 1000.0)  # $1,000 per million tokens: $0.001 a token
    result = run_evals(
        items(20),
        [alignment(fake_openai, max_tokens=100)],
        concurrency=2,
        store=store,
        budget=BudgetCaps(max_cost_usd=6.0),
        price=price,
    )
    assert result.status == "budget_reached"
    assert 0 < result.cost_usd <= 6.0
    # The cost is the tokens at the user's price: (prompt + completion) × $0.001.
    assert result.cost_usd == pytest.approx(result.usage.total_tokens * 0.001)


def test_a_cost_cap_counts_what_a_resumed_run_spent_at_its_own_judges_price(fake_openai: FakeOpenAI, store):
    tokens = {"usage": {"prompt_tokens": 1000, "completion_tokens": 100}}
    fake_openai.responder = lambda body: (
        Reply.server_error(should_retry=False)
        if "Question 1?" in json.dumps(body)
        else Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0), **tokens)
    )
    first = run_evals(items(2), [alignment(fake_openai, model="openai/gpt-4o")], concurrency=1, store=store)
    assert first.n_failed == 1  # item 1: a server error, no tokens
    calls = fake_openai.chat_call_count
    fake_openai.responder = lambda body: Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0), **tokens)

    # Item 1 retried with gpt-4o-mini under a $0.0034 cap. What the run spent is item 0 at gpt-4o's list price,
    # (1000 · 2.50 + 100 · 10) / 1e6 = $0.0035: past the cap already, so nothing is sent. (At gpt-4o-mini's
    # price it would pass for (1000 · 0.15 + 100 · 0.60) / 1e6 = $0.00021, leaving room for the call.)
    retried = run_evals(
        [],
        [alignment(fake_openai, model="openai/gpt-4o-mini", max_tokens=100)],
        store=store,
        run_id=first.run_id,
        retry_failed=True,
        budget=BudgetCaps(max_cost_usd=0.0034),
    )
    assert retried.status == "budget_reached" and fake_openai.chat_call_count == calls
    assert "the run's judge calls spent $0.0035," in retried.stop_reason


def test_a_cost_cap_on_a_run_whose_earlier_judge_has_no_price_is_refused(fake_openai: FakeOpenAI, store):
    tokens = {"usage": {"prompt_tokens": 1000, "completion_tokens": 100}}
    fake_openai.responder = lambda body: Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0), **tokens)
    first = run_evals(items(1), [alignment(fake_openai, model="llama3.1")], store=store)
    with pytest.raises(ValueError, match="unknown for 1 outcome judged by llama3.1"):
        run_evals(
            items(1),
            [alignment(fake_openai, model="openai/gpt-4o-mini")],
            store=store,
            run_id=first.run_id,
            budget=BudgetCaps(max_cost_usd=1.0),
        )
    assert store.get_run(first.run_id)["status"] == "completed"  # refused before the run was claimed


def test_a_cost_cap_needs_a_known_price(fake_openai: FakeOpenAI):
    with pytest.raises(ValueError, match="a cost cap needs the judge model's price"):
        run_evals(items(2), [alignment(fake_openai)], budget=BudgetCaps(max_cost_usd=1.0))
    assert fake_openai.chat_call_count == 0


def test_a_failed_item_records_the_judge_it_asked_never_the_key(fake_openai: FakeOpenAI, store):
    fake_openai.responder = lambda body: Reply.refusal()
    result = run_evals(items(1), [alignment(fake_openai, temperature=0.0, seed=5)], store=store)
    (row,) = store.results(result.run_id)
    assert row["status"] == "judge_refused"
    assert row["judge"] == {
        "model": "fake-judge",
        "baseUrl": fake_openai.base_url,
        "parameters": {"temperature": 0.0, "seed": 5, "maxTokens": None},
    }
    assert "test-key" not in json.dumps(row)
