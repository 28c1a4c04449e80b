"""The judge's chat request is the one the openai client's ``chat.completions.create`` sends.

The judge posts the body through the client's ``post`` (retries, timeouts, auth and error
mapping included) without ``create``'s type-driven transform; these tests check that skipping
the transform changes nothing on the wire.
"""

from __future__ import annotations

import json

import openai
import pytest
from fake_openai import Reply
from judge_data import run_payload, settings_for, single_analysis
from openai._utils._transform import maybe_transform
from openai.types.chat import completion_create_params

from scorers import JudgeSettings, create_prompt_alignment_scorer
from scorers.catalogue.prompt_alignment.schema import SingleAnalysis
from scorers.core.judge import Judge, _request_schema, estimate_prompt_tokens

GOOD = json.dumps(single_analysis(0.9, 0.8, 0.7, 1.0))  # user mode: 0.84
# Headers that differ between any two requests (retry count, ids, timeouts) or between call sites.
VARYING = {"x-stainless-retry-count", "x-stainless-read-timeout", "idempotency-key", "content-length"}


def _bodies() -> list[dict]:
    """The request bodies the judge builds: strict schema, JSON mode, with and without sampling parameters."""
    judge = Judge(JudgeSettings(base_url="http://127.0.0.1:9/v1", api_key="test-key", max_tokens=300))
    schema = _request_schema(SingleAnalysis)
    messages = [{"role": "system", "content": "Rules."}, {"role": "user", "content": "<response>\nhi\n</response>"}]
    strict = judge._params(schema, "prompt_alignment_user")
    json_mode = {"response_format": {"type": "json_object"}, "max_completion_tokens": 300}
    return [
        {"model": "gpt-4o-mini", "messages": messages, **strict},
        {"model": "gpt-4o-mini", "messages": judge._messages(messages, schema, True), **json_mode},
        {"model": "o3-mini", "messages": messages, "response_format": strict["response_format"]},
    ]


@pytest.mark.parametrize("index", range(3))
def test_the_transform_the_judge_skips_leaves_its_bodies_unchanged(index):
    body = _bodies()[index]
    assert maybe_transform(body, completion_create_params.CompletionCreateParamsNonStreaming) == body


def test_the_judge_sends_what_chat_completions_create_sends(fake_openai):
    fake_openai.enqueue(Reply.content(GOOD), Reply.content(GOOD))
    scorer = create_prompt_alignment_scorer(options={"evaluation_mode": "user"}, settings=settings_for(fake_openai))
    assert scorer.run(run_payload()).score == 0.84
    ours = fake_openai.requests[-1]
    body = dict(ours.body)
    client = openai.OpenAI(api_key="test-key", base_url=fake_openai.base_url, max_retries=0)
    try:
        client.chat.completions.create(**body)
    finally:
        client.close()
    theirs = fake_openai.requests[-1]
    assert (ours.method, ours.path, ours.query) == (theirs.method, theirs.path, theirs.query)
    assert ours.body == theirs.body  # the same JSON object (create orders the keys its own way)
    assert ours.api_key == "test-key"
    assert {k: v for k, v in ours.headers.items() if k not in VARYING} == {
        k: v for k, v in theirs.headers.items() if k not in VARYING
    }


def test_the_prompt_estimate_takes_the_schema_or_its_json_text():
    # 40 characters of content, the schema's JSON '{"a": 1}' is 8 characters, one message:
    # (40 + 8) // 4 + 4 * 1 = 12 + 4 = 16 tokens.
    messages = [{"role": "user", "content": "abcd" * 10}]
    assert estimate_prompt_tokens(messages, {"a": 1}) == 16
    assert estimate_prompt_tokens(messages, '{"a": 1}') == 16
    assert estimate_prompt_tokens(messages) == 40 // 4 + 4  # no schema: 14
