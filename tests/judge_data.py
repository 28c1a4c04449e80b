"""Builders for judge replies and settings used across tests (hand-written analyses)."""

from __future__ import annotations

from scorers import JudgeSettings, Store


def settings_for(fake, **overrides) -> JudgeSettings:
    """Judge settings pointed at a FakeOpenAI server: short timeout, fast retries."""
    values = {
        "model": "openai/fake-judge",
        "base_url": fake.base_url,
        "api_key": "test-key",
        "timeout": 5.0,
        "max_retries": 2,
    }
    values.update(overrides)
    return JudgeSettings(**values)


def dimension_set(
    intent: float,
    requirements: float,
    completeness: float,
    appropriateness: float,
    *,
    unmet: tuple[str, ...] = (),
    missing: tuple[str, ...] = (),
    format_ok: bool = True,
    tone_ok: bool = True,
) -> dict:
    """A valid four-dimension set with the given 0..1 scores."""
    # consistent with the score (the schema rejects "every requirement met" with a score below 0.5)
    reqs = [{"requirement": "Use Python", "isFulfilled": requirements >= 0.5, "reasoning": "The code is Python."}]
    reqs += [{"requirement": r, "isFulfilled": False, "reasoning": f"No {r} found."} for r in unmet]
    return {
        "intentAlignment": {
            "score": intent,
            "primaryIntent": "Write a factorial function",
            "isAddressed": intent >= 0.5,
            "reasoning": "The function is there.",
        },
        "requirementsFulfillment": {"requirements": reqs, "overallScore": requirements},
        "completeness": {"score": completeness, "missingElements": list(missing), "reasoning": "Mostly complete."},
        "responseAppropriateness": {
            "score": appropriateness,
            "formatAlignment": format_ok,
            "toneAlignment": tone_ok,
            "reasoning": "Code block, neutral tone.",
        },
    }


def single_analysis(*scores: float, **kw) -> dict:
    """A user- or system-mode judge reply."""
    return {**dimension_set(*scores, **kw), "overallAssessment": "Solid answer with small gaps."}


def both_analysis(user: tuple[float, float, float, float], system: tuple[float, float, float, float]) -> dict:
    """A both-mode judge reply: user and system dimension sets."""
    return {"user": dimension_set(*user), "system": dimension_set(*system), "overallAssessment": "Mixed."}


def run_payload(
    user: str = "Write a Python function to calculate factorial with error handling",
    output: str = "def factorial(n):\n    if n < 0:\n        raise ValueError('negative')\n    return 1 if n < 2 else n * factorial(n - 1)",
    system: str | None = None,
) -> dict:
    """A seed-shaped run payload."""
    payload_input: dict = {"inputMessages": [{"role": "user", "content": user}]}
    if system is not None:
        payload_input["systemMessages"] = [{"role": "system", "content": system}]
    return {"input": payload_input, "output": {"role": "assistant", "text": output}}


def resumed_with_another_judge(store: Store) -> str:
    """A run started with a judge without a price (fake-judge) and resumed with gpt-4o-mini, beside a code scorer."""
    fake = {"model": "fake-judge", "baseUrl": "http://127.0.0.1:9/v1"}
    mini = {"model": "gpt-4o-mini", "baseUrl": "https://api.openai.com/v1"}
    run_id = store.create_run(
        dataset_name="judged.csv",
        items=[(f"q{i}", {"input": "q", "output": "x", "ground_truth": "x"}, {}) for i in range(4)],
        scorers=[
            {"id": "prompt-alignment", "name": "Prompt alignment", "options": {}},
            {"id": "textual-difference", "name": "Textual difference", "options": {}},
        ],
        judge=fake,
        name="resumed",
    )
    judged = [(mini, 1_000_000, 0), (mini, 0, 100_000), (fake, 500, 50)]
    for index, (judge, prompt, completion) in enumerate(judged):
        usage = {"promptTokens": prompt, "completionTokens": completion, "totalTokens": prompt + completion, "calls": 1}
        outcome = {"status": "scored", "score": 0.5, "judge": judge | {"parameters": {}, "usage": usage}}
        store.save_result(
            run_id,
            index,
            "prompt-alignment",
            outcome | {"prompt_tokens": prompt, "completion_tokens": completion, "judge_calls": 1},
        )
    # Not scored for its input: no judge was asked, though the outcome records the run's judge.
    store.save_result(run_id, 3, "prompt-alignment", {"status": "missing_input", "error": "no input", "judge": fake})
    for index in range(4):
        store.save_result(run_id, index, "textual-difference", {"status": "scored", "score": 1.0})
    return run_id
