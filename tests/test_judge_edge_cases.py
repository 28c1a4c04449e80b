"""Judge edge cases, each through the real openai client against the fake server (tests/fake_openai.py)."""

from __future__ import annotations

import threading
import uuid

import pytest
from fake_openai import Reply
from judge_data import settings_for
from pydantic import BaseModel

from scorers import (
    ContextWindowExceededError,
    EvalItem,
    JudgeRefusalError,
    RateLimitedError,
    ScoreStatus,
    create_gluten_checker_scorer,
    run_evals,
)
from scorers.core.judge import CONTEXT_WINDOWS, Judge, context_window, extract_json
from scorers.runs import runner

MESSAGES = [{"role": "system", "content": "Judge."}, {"role": "user", "content": "Is it good?"}]


class Verdict(BaseModel):
    ok: bool
    reasoning: str


def unique_model() -> str:
    """A model name of its own: what an endpoint and model accept is learnt once per process."""
    return f"model-{uuid.uuid4().hex[:8]}"


def test_a_longer_outer_fence_around_strings_holding_a_fence_is_parsed(fake_openai):
    reply = '````json\n{"ok": true, "reasoning": "It shows ```python\\nprint(1)\\n``` as asked."}\n````'
    fake_openai.enqueue(Reply.content(reply))
    parsed = Judge(settings_for(fake_openai)).complete(MESSAGES, Verdict, schema_name="v").parsed
    assert parsed.ok and "```python" in parsed.reasoning
    assert fake_openai.chat_call_count == 1  # parsed at once, no re-ask
    # the same strings inside a plain ``` fence: the last closing fence is tried first
    assert extract_json('```json\n{"a": "x ```\\n``` y"}\n```') == {"a": "x ```\n``` y"}


def test_a_plain_text_refusal_is_judge_refused_at_once_with_its_text(fake_openai):
    text = "I'm sorry, but I can't help with evaluating this content."
    fake_openai.enqueue(Reply.content(text))
    with pytest.raises(JudgeRefusalError) as info:
        Judge(settings_for(fake_openai)).complete(MESSAGES, Verdict, schema_name="v")
    assert info.value.status is ScoreStatus.JUDGE_REFUSED and info.value.raw_reply == text
    assert fake_openai.chat_call_count == 1  # not re-asked


@pytest.mark.parametrize(
    ("feature", "rejection"),
    [
        ("json_schema", lambda: Reply.json_schema_unsupported(delay=0.3)),
        (
            "temperature",
            lambda: Reply.error(
                400, "Unsupported value: 'temperature' does not support 0.0.", param="temperature", delay=0.3
            ),
        ),
    ],
)
def test_a_rejected_parameter_costs_one_failed_call_whatever_the_concurrency(fake_openai, feature, rejection):
    def responder(body):
        sent = (
            body.get("response_format", {}).get("type") == "json_schema"
            if feature == "json_schema"
            else ("temperature" in body)
        )
        return rejection() if sent else Reply.json({"ok": True, "reasoning": "fine"})

    fake_openai.responder = responder
    settings = settings_for(fake_openai, model=unique_model())
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            Judge(settings).complete(MESSAGES, Verdict, schema_name="v")
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    requests = fake_openai.chat_requests()
    with_feature = [
        r
        for r in requests
        if (
            r.get("response_format", {}).get("type") == "json_schema"
            if feature == "json_schema"
            else "temperature" in r
        )
    ]
    # 8 workers: one probe was rejected, then 8 successful calls without the feature = 9 calls
    assert len(with_feature) == 1 and len(requests) == 9


def test_an_unpinned_model_is_noted_in_the_result(fake_openai):
    def responder(body):
        if "temperature" in body:
            return Reply.error(400, "Unsupported parameter: 'temperature'.", param="temperature")
        return Reply.json({"isGlutenFree": True, "glutenSources": []})

    fake_openai.responder = responder
    scorer = create_gluten_checker_scorer(settings=settings_for(fake_openai, model=unique_model(), temperature=0.0))
    result = scorer.run({"input": "Dinner?", "output": "Rice with beans."})
    assert "Not pinned" in result.judge.note and "instead of 0" in result.judge.note
    assert result.judge.to_dict()["note"] == result.judge.note
    pinned = create_gluten_checker_scorer(settings=settings_for(fake_openai, model=unique_model(), temperature=None))
    assert pinned.run({"input": "Dinner?", "output": "Rice."}).judge.note == ""  # nothing asked, nothing missed


def test_an_exhausted_quota_is_rate_limited_at_once_and_a_run_pauses_leaving_the_item_to_do(fake_openai):
    fake_openai.responder = lambda body: Reply.error(
        429, "You exceeded your current quota, please check your plan and billing details.", code="insufficient_quota"
    )
    scorer = create_gluten_checker_scorer(settings=settings_for(fake_openai, max_retries=3))
    with pytest.raises(RateLimitedError) as info:
        scorer.run({"input": "Dinner?", "output": "Rice."})
    assert info.value.quota and fake_openai.chat_call_count == 1  # the client did not retry it

    fake_openai.reset()
    items = [EvalItem(f"q{i}", {"input": "Dinner?", "output": f"Rice {i}."}) for i in range(6)]
    result = run_evals(items, [scorer], concurrency=1, max_rate_limit_retries=3)
    assert fake_openai.chat_call_count == 1  # one call, then the run paused instead of hammering
    assert result.outcomes == []  # the item it hit is left to do, like the other pauses: a resume scores it
    assert result.status == "quota_exhausted" and result.stop_reason.startswith(
        "Paused: the judge's quota is exhausted"
    )


def test_the_total_rate_limit_wait_of_an_item_is_capped(fake_openai, monkeypatch):
    # Retry-After 0.4 s each time; cap 0.6 s: try 1 (waited 0 + 0.4 <= 0.6, retry), try 2 (0.4+ + 0.4 > 0.6, stop):
    # 2 calls, where max_rate_limit_retries=5 alone would allow 6.
    monkeypatch.setattr(runner, "MAX_RATE_LIMIT_WAIT_S", 0.6)
    fake_openai.responder = lambda body: Reply.rate_limited(retry_after=0.4)
    scorer = create_gluten_checker_scorer(settings=settings_for(fake_openai, max_retries=0))
    result = run_evals([EvalItem("q", {"input": "Dinner?", "output": "Rice."})], [scorer], max_rate_limit_retries=5)
    assert result.outcomes[0].status is ScoreStatus.RATE_LIMITED
    assert fake_openai.chat_call_count == 2


def test_a_prompt_over_the_known_context_window_is_not_sent(fake_openai):
    assert context_window(settings_for(fake_openai, model="gpt-4-0613")) == CONTEXT_WINDOWS["gpt-4"] == 8_192
    assert context_window(settings_for(fake_openai, model="openai/gpt-4o-mini")) == 128_000
    # 40,000 characters / 4 = 10,000 tokens > 8,192
    long_prompt = [{"role": "user", "content": "word " * 8_000}]
    with pytest.raises(ContextWindowExceededError, match="no call was made"):
        Judge(settings_for(fake_openai, model="gpt-4")).complete(long_prompt, Verdict, schema_name="v")
    # the window is overridable: 10 tokens for a short prompt
    with pytest.raises(ContextWindowExceededError):
        Judge(settings_for(fake_openai, context_window=10)).complete(MESSAGES * 20, Verdict, schema_name="v")
    assert fake_openai.chat_call_count == 0


def test_unencodable_text_is_an_item_level_invalid_input(fake_openai):
    fake_openai.responder = lambda body: Reply.json({"isGlutenFree": True, "glutenSources": []})
    scorer = create_gluten_checker_scorer(settings=settings_for(fake_openai))
    items = [
        EvalItem("a", {"input": "Dinner?", "output": "Rice."}),
        EvalItem("b", {"input": "Dinner?", "output": "Rice \ud800 beans."}),  # a lone surrogate
        EvalItem("c", {"input": "Dinner?", "output": "Beans."}),
    ]
    result = run_evals(items, [scorer], concurrency=2)
    statuses = {o.item_id: o.status for o in result.outcomes}
    assert statuses == {"a": ScoreStatus.SCORED, "b": ScoreStatus.INVALID_INPUT, "c": ScoreStatus.SCORED}
    bad = next(o for o in result.outcomes if o.item_id == "b")
    assert bad.error.startswith("output: the text cannot be encoded as UTF-8: a lone surrogate U+D800 at character 6")
    assert fake_openai.chat_call_count == 2
