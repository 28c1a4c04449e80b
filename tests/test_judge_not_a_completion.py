"""A 200 reply that is not a chat completion is an API error, never an uncaught exception."""

from __future__ import annotations

import pytest
from fake_openai import FakeOpenAI, Reply

from scorers import JudgeAPIError, JudgeSettings, ScoreStatus, create_prompt_alignment_scorer

PAYLOAD = {"input": [{"role": "user", "content": "Say hi."}], "output": "Hi."}


@pytest.mark.parametrize(
    ("reply", "got"),
    [
        (Reply.raw(200, "<html>login page</html>", content_type="text/html"), "'<html>login page</html>'"),
        (
            Reply.raw(200, {"id": "c", "object": "chat.completion", "created": 1, "model": "m", "choices": []}),
            "no choices",
        ),
    ],
)
def test_a_reply_without_a_completion_is_an_api_error(fake_openai: FakeOpenAI, reply: Reply, got: str):
    fake_openai.enqueue(reply)
    settings = JudgeSettings(model="fake-judge", base_url=fake_openai.base_url, api_key="k", max_retries=0, timeout=5)
    scorer = create_prompt_alignment_scorer(options={"evaluation_mode": "user"}, settings=settings)

    with pytest.raises(JudgeAPIError) as caught:
        scorer.run(PAYLOAD)

    assert caught.value.status is ScoreStatus.API_ERROR
    assert f"did not answer with a chat completion (got {got})" in str(caught.value)
    assert "/v1" in str(caught.value)
