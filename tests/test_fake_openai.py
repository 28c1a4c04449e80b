"""The fake OpenAI server, checked with the real ``openai`` client (3.x, httpx2)."""

from __future__ import annotations

import json
import math
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import openai
import pytest
from fake_openai import FakeOpenAI, Reply

MESSAGES = [
    {"role": "system", "content": "You are a strict judge."},
    {"role": "user", "content": "Score this answer."},
]


def make_client(server: FakeOpenAI, **kwargs) -> openai.OpenAI:
    kwargs.setdefault("max_retries", 0)
    kwargs.setdefault("timeout", 5.0)
    return openai.OpenAI(base_url=server.base_url, api_key="test-key", **kwargs)


def ask(client: openai.OpenAI, content: str = "Score this answer.", **kwargs):
    kwargs.setdefault("model", "fake-judge")
    return client.chat.completions.create(messages=[{"role": "user", "content": content}], **kwargs)


# --------------------------------------------------------------------------- successful replies


def test_scripted_json_reply_is_received_and_parsed(fake_openai):
    fake_openai.enqueue(Reply.json({"score": 0.75, "reason": "mostly right"}))
    client = make_client(fake_openai)

    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini",
        messages=MESSAGES,
        temperature=0,
        response_format={"type": "json_object"},
    )
    completion = raw.parse()

    assert raw.headers["x-request-id"].startswith("req_")
    assert completion.object == "chat.completion"
    assert completion.id.startswith("chatcmpl-")
    assert isinstance(completion.created, int)
    assert completion.model == "gpt-4o-mini"  # echoes the requested model
    choice = completion.choices[0]
    assert choice.index == 0
    assert choice.finish_reason == "stop"
    assert choice.logprobs is None
    assert choice.message.role == "assistant"
    assert choice.message.refusal is None
    assert json.loads(choice.message.content) == {"score": 0.75, "reason": "mostly right"}
    # what was sent
    body = fake_openai.last_chat_request()
    assert body["model"] == "gpt-4o-mini"
    assert body["temperature"] == 0
    assert body["response_format"] == {"type": "json_object"}
    assert fake_openai.chat_requests() == [body]
    assert fake_openai.last_prompt_text() == "You are a strict judge.\nScore this answer."
    fake_openai.assert_all_replies_used()


def test_raw_json_body_matches_openai_shape(fake_openai):
    fake_openai.enqueue(Reply.content("hi"))
    req = urllib.request.Request(
        fake_openai.base_url + "/chat/completions",
        data=json.dumps({"model": "m-1", "messages": [{"role": "user", "content": "abcdefgh"}]}).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer k"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=5) as resp:
        assert resp.headers["x-request-id"]
        data = json.loads(resp.read())
    assert {"id", "object", "created", "model", "choices", "usage"} <= data.keys()
    assert data["choices"][0] == {
        "index": 0,
        "message": {"role": "assistant", "content": "hi", "refusal": None, "annotations": []},
        "logprobs": None,
        "finish_reason": "stop",
    }
    assert data["usage"]["prompt_tokens"] == 2  # 8 chars // 4
    assert data["usage"]["completion_tokens"] == 1  # len("hi") // 4 + 1
    assert data["usage"]["total_tokens"] == 3


def test_usage_tokens_come_through(fake_openai):
    content = json.dumps({"score": 1})
    fake_openai.enqueue(Reply.content(content))
    completion = make_client(fake_openai).chat.completions.create(
        model="fake-judge",
        messages=[{"role": "system", "content": "a" * 40}, {"role": "user", "content": "b" * 61}],
    )
    assert completion.usage.prompt_tokens == 101 // 4
    assert completion.usage.completion_tokens == len(content) // 4 + 1
    assert completion.usage.total_tokens == completion.usage.prompt_tokens + completion.usage.completion_tokens


def test_usage_can_be_overridden(fake_openai):
    fake_openai.enqueue(Reply.json({"score": 1}, usage={"prompt_tokens": 1000, "completion_tokens": 7}))
    usage = ask(make_client(fake_openai)).usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (1000, 7, 1007)


@pytest.mark.parametrize(
    "text",
    ['```json\n{"score": 1}\n```', '{"score": 0.5, "reason": ', '{"score": NaN}', "", "plain prose"],
)
def test_raw_content_is_sent_verbatim(fake_openai, text):
    fake_openai.enqueue(Reply.content(text))
    assert ask(make_client(fake_openai)).choices[0].message.content == text


def test_json_helper_writes_nan_like_a_sloppy_model(fake_openai):
    fake_openai.enqueue(Reply.json({"score": math.nan}))
    assert ask(make_client(fake_openai)).choices[0].message.content == '{"score": NaN}'


def test_refusal(fake_openai):
    fake_openai.enqueue(Reply.refusal("I can't evaluate that."))
    choice = ask(make_client(fake_openai)).choices[0]
    assert choice.message.content is None
    assert choice.message.refusal == "I can't evaluate that."
    assert choice.finish_reason == "stop"


def test_truncated_reply_has_finish_reason_length(fake_openai):
    fake_openai.enqueue(Reply.truncated('{"score": 0.9, "reas'))
    choice = ask(make_client(fake_openai)).choices[0]
    assert choice.finish_reason == "length"
    assert choice.message.content == '{"score": 0.9, "reas'


def test_content_filter_finish_reason(fake_openai):
    fake_openai.enqueue(Reply.content_filter())
    choice = ask(make_client(fake_openai)).choices[0]
    assert choice.finish_reason == "content_filter"
    assert choice.message.content is None


def test_model_override(fake_openai):
    fake_openai.enqueue(Reply.json({}, model="gpt-4o-mini-2024-07-18"))
    assert ask(make_client(fake_openai), model="gpt-4o-mini").model == "gpt-4o-mini-2024-07-18"


# --------------------------------------------------------------------------- errors


def test_429_with_retry_after_is_retried_transparently(fake_openai):
    fake_openai.enqueue(Reply.rate_limited(retry_after=0.1), Reply.json({"score": 1}))
    client = make_client(fake_openai, max_retries=2)

    start = time.monotonic()
    completion = ask(client)
    elapsed = time.monotonic() - start

    assert json.loads(completion.choices[0].message.content) == {"score": 1}
    assert fake_openai.chat_call_count == 2
    records = fake_openai.chat_records()
    assert [r.status for r in records] == [429, 200]
    assert [r.header("x-stainless-retry-count") for r in records] == ["0", "1"]
    assert records[0].body == records[1].body
    assert 0.09 <= elapsed < 1.0  # honoured Retry-After: 0.1, not the 0.5 s default backoff


def test_429_without_retries_raises_rate_limit_error(fake_openai):
    fake_openai.enqueue(Reply.rate_limited(retry_after=0.1))
    with pytest.raises(openai.RateLimitError) as info:
        ask(make_client(fake_openai, max_retries=0))
    assert info.value.status_code == 429
    assert info.value.code == "rate_limit_exceeded"
    assert info.value.response.headers["retry-after"] == "0.1"
    assert info.value.request_id.startswith("req_")


def test_500_then_success_is_retried(fake_openai):
    fake_openai.enqueue(Reply.error(500, "boom", headers={"retry-after-ms": "50"}), Reply.json({"ok": True}))
    completion = ask(make_client(fake_openai, max_retries=1))
    assert json.loads(completion.choices[0].message.content) == {"ok": True}
    assert fake_openai.chat_call_count == 2


def test_500_raises_internal_server_error(fake_openai):
    fake_openai.enqueue(Reply.server_error())
    with pytest.raises(openai.InternalServerError) as info:
        ask(make_client(fake_openai))
    assert info.value.status_code == 500
    assert info.value.type == "server_error"


def test_400_context_length_exceeded(fake_openai):
    fake_openai.enqueue(Reply.context_length_exceeded())
    with pytest.raises(openai.BadRequestError) as info:
        ask(make_client(fake_openai, max_retries=2))
    err = info.value
    assert err.status_code == 400
    assert err.code == "context_length_exceeded"
    assert err.param == "messages"
    assert err.type == "invalid_request_error"
    assert "maximum context length" in err.message
    assert err.body["code"] == "context_length_exceeded"  # body is the inner "error" object
    assert fake_openai.chat_call_count == 1  # 400 is never retried


def test_400_json_schema_not_supported(fake_openai):
    fake_openai.enqueue(Reply.json_schema_unsupported())
    schema = {"type": "object", "properties": {"score": {"type": "number"}}, "required": ["score"]}
    with pytest.raises(openai.BadRequestError) as info:
        make_client(fake_openai).chat.completions.create(
            model="fake-judge",
            messages=MESSAGES,
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "score", "schema": schema, "strict": True},
            },
        )
    assert "'response_format' of type 'json_schema' is not supported with this model" in str(info.value)
    assert info.value.param == "response_format"
    assert fake_openai.last_chat_request()["response_format"]["type"] == "json_schema"


def test_generic_error_helper_fields(fake_openai):
    fake_openai.enqueue(Reply.error(400, "bad temperature", code="invalid_value", type="invalid_request_error"))
    with pytest.raises(openai.BadRequestError) as info:
        ask(make_client(fake_openai))
    assert (info.value.code, info.value.type, info.value.param) == ("invalid_value", "invalid_request_error", None)


def test_401_scripted_invalid_key(fake_openai):
    fake_openai.enqueue(Reply.invalid_api_key("sk-wrong-key-1234"))
    with pytest.raises(openai.AuthenticationError) as info:
        ask(make_client(fake_openai))
    assert info.value.code == "invalid_api_key"
    assert "Incorrect API key provided" in info.value.message


@pytest.mark.fake_openai(api_key="right-key")
def test_api_key_enforced_when_configured(fake_openai):
    fake_openai.enqueue(Reply.json({"score": 1}))
    wrong = openai.OpenAI(base_url=fake_openai.base_url, api_key="wrong-key-123456", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as info:
        ask(wrong)
    assert info.value.code == "invalid_api_key"
    assert fake_openai.pending_replies == 1  # a rejected request does not consume the script

    right = openai.OpenAI(base_url=fake_openai.base_url, api_key="right-key", max_retries=0)
    assert json.loads(ask(right).choices[0].message.content) == {"score": 1}
    assert fake_openai.api_keys() == ["wrong-key-123456", "right-key"]


def test_sent_api_key_is_recorded(fake_openai):
    fake_openai.enqueue(Reply.json({}))
    ask(make_client(fake_openai))
    assert fake_openai.last_api_key() == "test-key"
    assert fake_openai.requests[-1].headers["authorization"] == "Bearer test-key"


def test_no_scripted_reply_fails_loudly_without_retries(fake_openai):
    with pytest.raises(openai.InternalServerError, match="no scripted reply"):
        ask(make_client(fake_openai, max_retries=2), content="unexpected call")
    assert fake_openai.chat_call_count == 1  # x-should-retry: false stops the client's retries


def test_responder_errors_are_reported(fake_openai):
    def responder(body):
        raise ValueError("responder bug")

    fake_openai.responder = responder
    with pytest.raises(openai.InternalServerError, match="responder bug"):
        ask(make_client(fake_openai, max_retries=2))
    assert fake_openai.chat_call_count == 1
    assert isinstance(fake_openai.errors[0], ValueError)


def test_disconnect_raises_connection_error(fake_openai):
    fake_openai.enqueue(Reply.disconnect())
    with pytest.raises(openai.APIConnectionError):
        ask(make_client(fake_openai))


def test_non_json_error_body(fake_openai):
    fake_openai.enqueue(Reply.raw(502, "<html>Bad Gateway</html>", content_type="text/html"))
    with pytest.raises(openai.InternalServerError) as info:
        ask(make_client(fake_openai))
    assert info.value.status_code == 502
    assert info.value.body == "<html>Bad Gateway</html>"


def test_unknown_path_is_404_in_openai_error_shape(fake_openai):
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(fake_openai.base_url + "/nope", timeout=5)
    assert info.value.code == 404
    body = json.loads(info.value.read())
    info.value.close()
    assert body == {
        "error": {"message": "Invalid URL (GET /v1/nope)", "type": "invalid_request_error", "param": None, "code": None}
    }
    with pytest.raises(openai.NotFoundError):
        make_client(fake_openai).embeddings.create(model="fake-judge", input="x")
    assert [r.path for r in fake_openai.requests] == ["/v1/nope", "/v1/embeddings"]
    assert fake_openai.chat_call_count == 0


# --------------------------------------------------------------------------- delays and concurrency


def test_delay_longer_than_client_timeout_raises_timeout(fake_openai):
    fake_openai.enqueue(Reply.sleep(0.6, then=Reply.json({"score": 1})))
    client = make_client(fake_openai, max_retries=0, timeout=0.2)
    start = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        ask(client)
    assert time.monotonic() - start < 0.55
    assert fake_openai.chat_call_count == 1


def test_delay_shorter_than_timeout_succeeds(fake_openai):
    fake_openai.enqueue(Reply.json({"score": 1}).delayed(0.2))
    start = time.monotonic()
    completion = ask(make_client(fake_openai, timeout=3))
    assert time.monotonic() - start >= 0.19
    assert json.loads(completion.choices[0].message.content) == {"score": 1}


def test_delayed_reply_does_not_block_other_requests(fake_openai):
    def responder(body):
        text = body["messages"][-1]["content"]
        reply = Reply.json({"echo": text})
        return reply.delayed(0.8) if text == "slow" else reply

    fake_openai.responder = responder
    client = make_client(fake_openai)

    with ThreadPoolExecutor(max_workers=1) as pool:
        slow = pool.submit(ask, client, "slow")
        time.sleep(0.05)  # let the slow request reach the server first
        start = time.monotonic()
        fast = ask(client, "fast")
        fast_elapsed = time.monotonic() - start
        assert json.loads(fast.choices[0].message.content) == {"echo": "fast"}
        assert fast_elapsed < 0.5
        assert json.loads(slow.result(timeout=5).choices[0].message.content) == {"echo": "slow"}


def test_concurrent_requests(fake_openai):
    fake_openai.responder = lambda body: Reply.json({"echo": body["messages"][-1]["content"]}).delayed(0.05)
    client = make_client(fake_openai)
    prompts = [f"item-{i}" for i in range(16)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda p: ask(client, p), prompts))
    assert [json.loads(r.choices[0].message.content)["echo"] for r in results] == prompts
    assert fake_openai.chat_call_count == 16
    assert sorted(b["messages"][-1]["content"] for b in fake_openai.chat_requests()) == sorted(prompts)


def test_close_is_fast_with_a_pending_delayed_reply():
    server = FakeOpenAI([Reply.sleep(5, then=Reply.json({}))]).start()
    client = make_client(server, max_retries=0, timeout=10)
    thread = threading.Thread(target=lambda: pytest.raises(openai.APIConnectionError, ask, client), daemon=True)
    thread.start()
    deadline = time.monotonic() + 2
    while server.chat_call_count == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    start = time.monotonic()
    server.close()
    server.close()  # idempotent
    thread.join(timeout=3)
    assert time.monotonic() - start < 2
    assert not thread.is_alive()
    assert not server.running


# --------------------------------------------------------------------------- scripting


def test_responder_used_when_queue_is_empty(fake_openai):
    seen = []

    def responder(body):
        seen.append(body)
        return Reply.json({"score": 0.5, "from": "responder"})

    fake_openai.responder = responder
    fake_openai.enqueue(Reply.json({"score": 1.0, "from": "queue"}))
    client = make_client(fake_openai)

    first = json.loads(ask(client).choices[0].message.content)
    second = json.loads(ask(client, "second").choices[0].message.content)
    third = json.loads(ask(client, "third").choices[0].message.content)

    assert first["from"] == "queue"
    assert second["from"] == third["from"] == "responder"
    assert [b["messages"][-1]["content"] for b in seen] == ["second", "third"]
    assert fake_openai.chat_call_count == 3


def test_queue_is_fifo_and_reports_leftovers():
    with FakeOpenAI([Reply.content("one"), Reply.content("two"), Reply.content("three")]) as server:
        client = make_client(server)
        assert ask(client).choices[0].message.content == "one"
        assert ask(client).choices[0].message.content == "two"
        assert server.pending_replies == 1
        with pytest.raises(AssertionError, match="1 scripted reply never requested"):
            server.assert_all_replies_used()
        server.reset()
        assert server.pending_replies == 0 and server.requests == []


def test_enqueue_rejects_non_replies(fake_openai):
    with pytest.raises(TypeError):
        fake_openai.enqueue({"score": 1})


def test_prompt_text_handles_content_parts(fake_openai):
    fake_openai.enqueue(Reply.json({}))
    make_client(fake_openai).chat.completions.create(
        model="fake-judge",
        messages=[
            {"role": "system", "content": "sys"},
            {"role": "user", "content": [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}]},
        ],
    )
    assert fake_openai.last_prompt_text() == "sys\npart one\npart two"
    assert fake_openai.prompt_text(0, sep=" | ") == "sys | part one\npart two"


def test_helpers_fail_clearly_without_requests(fake_openai):
    with pytest.raises(AssertionError, match="no chat completion request"):
        fake_openai.last_prompt_text()


# --------------------------------------------------------------------------- models and fixtures


def test_models_list(fake_openai):
    client = make_client(fake_openai)
    models = client.models.list()
    assert [m.id for m in models] == ["gpt-4o-mini", "fake-judge"]
    assert all(m.object == "model" for m in models)
    assert client.models.retrieve("fake-judge").id == "fake-judge"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("nope")
    assert fake_openai.chat_call_count == 0
    assert fake_openai.requests[0].method == "GET" and fake_openai.requests[0].path == "/v1/models"


@pytest.mark.fake_openai(models=["judge-a"], reject_unknown_models=True)
def test_marker_configures_models(fake_openai):
    client = make_client(fake_openai)
    assert [m.id for m in client.models.list()] == ["judge-a"]
    with pytest.raises(openai.NotFoundError) as info:
        ask(client, model="gpt-4o-mini")
    assert info.value.code == "model_not_found"


def test_fake_openai_client_fixture(fake_openai, fake_openai_client):
    fake_openai.enqueue(Reply.json({"score": 1}))
    assert json.loads(ask(fake_openai_client).choices[0].message.content) == {"score": 1}
    assert fake_openai_client.max_retries == 0


def test_base_url_and_context_manager():
    with FakeOpenAI() as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        assert server.running
    assert not server.running
    with pytest.raises(openai.APIConnectionError):
        ask(make_client(server, max_retries=0, timeout=1))
