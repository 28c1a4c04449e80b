"""dashboard.run_view.check_judges: the judges' settings checked as their clients would be, no client created."""

from __future__ import annotations

import pytest

from dashboard.run_view import check_judges
from scorers import JudgeSettings, create_scorer
from scorers.core.errors import JudgeConfigError
from scorers.core.judge import HOW_TO_CONFIGURE, Judge, check_settings


def test_check_judges_names_the_scorer_and_the_problem_without_creating_a_client():
    local = JudgeSettings(model="llama3.1", base_url="http://127.0.0.1:9/v1")  # a self-hosted server: no key needed
    ok = create_scorer("prompt-alignment", {}, settings=local)
    plain = create_scorer("textual-difference")  # no judge: never checked
    assert check_judges([plain, ok]) is None
    assert "judge" not in vars(ok)  # the cached client was not created (no openai import, no call)

    no_key = create_scorer("prompt-alignment", {}, settings=JudgeSettings(model="openai/gpt-4o-mini"))
    assert check_judges([ok, no_key]) == f"{no_key.name}: No API key for the judge. {HOW_TO_CONFIGURE}"
    too_hot = create_scorer(
        "prompt-alignment", {}, settings=JudgeSettings(model="m", base_url=local.base_url, temperature=2.5)
    )
    assert check_judges([too_hot]) == f"{too_hot.name}: temperature must be in [0, 2], got 2.5"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (JudgeSettings(model="openai/gpt-4o-mini"), "No API key for the judge."),
        (JudgeSettings(model="m", api_key="k", timeout=0), "timeout must be > 0 seconds, got 0"),
        (JudgeSettings(model="m", api_key="k", max_retries=-1), "max_retries must be >= 0, got -1"),
    ],
)
def test_check_settings_raises_what_the_client_raises(settings: JudgeSettings, message: str):
    for check in (check_settings, Judge):
        with pytest.raises(JudgeConfigError, match=message):
            check(settings)
