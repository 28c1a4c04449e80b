"""Builders for judge replies and settings used across tests (hand-written analyses)."""

from __future__ import annotations

from scorers import JudgeSettings


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
