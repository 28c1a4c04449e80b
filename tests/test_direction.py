"""Direction: every scorer says whether higher or lower is better, and rankings, diffs and thresholds follow it."""

from __future__ import annotations

import pandas as pd
import pytest
from fake_openai import Reply

from scorers import SCORERS, ScoreStatus, Store
from scorers.analysis.compare import leaderboard, run_diff
from scorers.catalogue.registry import higher_is_better, scorer_label
from scorers.catalogue.spec import improvement, is_better, range_bounds
from scorers.cli import main

SCORED = ScoreStatus.SCORED.value
LOWER_IS_BETTER = {"toxicity", "bias", "hallucination"}


def test_every_catalogue_scorer_states_its_direction():
    assert {sid for sid, spec in SCORERS.items() if not spec.higher_is_better} == LOWER_IS_BETTER
    assert higher_is_better("judge:my-judge@v2")  # saved judges map the good answer to 1
    assert scorer_label("bias") == "Bias (lower is better)"


def test_compare_helpers_follow_the_direction():
    assert is_better(0.1, 0.3, higher_is_better=False) and not is_better(0.1, 0.3, higher_is_better=True)
    assert not is_better(0.3, 0.3, higher_is_better=False)  # equal is not better
    # toxicity 0.5 → 0.2 is a change of −0.3, an improvement of +0.3
    assert improvement(-0.3, higher_is_better=False) == 0.3
    assert SCORERS["toxicity"].is_better(0.0, 1.0) and SCORERS["toxicity"].direction == "lower is better"
    assert range_bounds("0 or 1") == (0.0, 1.0)
    assert SCORERS["textual-difference"].bounds({"scale": 10}) == (0.0, 10.0)
    assert SCORERS["toxicity"].bounds() == (0.0, 1.0)  # default scale 1
    with pytest.raises(ValueError, match="not a score range"):
        range_bounds("any")


def _frame(scorer: str, scores: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "scorer": scorer,
            "status": SCORED,
            "score": list(scores.values()),
            "group:variant": list(scores),
        }
    )


def test_leaderboard_ranks_lower_is_better_scorers_lowest_first():
    frame = pd.concat(
        [_frame("toxicity", {"A": 0.6, "B": 0.1, "C": 0.3}), _frame("textual-difference", {"A": 0.6, "B": 0.1})]
    )
    board = leaderboard(frame, n_resamples=100)
    assert board[board["scorer"] == "toxicity"]["variant"].tolist() == ["B", "C", "A"]
    assert board[board["scorer"] == "textual-difference"]["variant"].tolist() == ["A", "B"]


def _stored(store: Store, name: str, scores: list[float]) -> str:
    items = [(f"q{i}", {"input": [{"role": "user", "content": f"q{i}"}], "output": f"a{i}"}, {}) for i in range(2)]
    run_id = store.create_run(
        dataset_name="d.csv",
        items=items,
        name=name,
        scorers=[{"id": "toxicity", "name": "Toxicity", "options": {}}],
        judge=None,
    )
    for i, score in enumerate(scores):
        store.save_result(run_id, i, "toxicity", {"status": SCORED, "score": score, "reason": "r", "analysis": {}})
    store.finish_run(run_id, "completed")
    return run_id


def test_run_diff_calls_a_rise_in_toxicity_a_regression():
    store = Store(":memory:")
    try:
        # q0: 0.2 → 0.5 (worse, +0.3); q1: 0.4 → 0.1 (better, −0.3)
        diff = run_diff(store, _stored(store, "base", [0.2, 0.4]), _stored(store, "new", [0.5, 0.1]))
        assert diff.regressions["item_id"].tolist() == ["q0"]
        assert diff.improvements["item_id"].tolist() == ["q1"]
        assert diff.regressions["improvement"].iloc[0] == pytest.approx(-0.3)
    finally:
        store.close()


# ---- CLI thresholds


@pytest.fixture
def env(monkeypatch, tmp_path, fake_judge):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("prompt,response\nSay hi,hello\nSay bye,bye now\n", encoding="utf-8")
    return fake_judge


def _remarks(*verdicts):
    return {
        "verdicts": [
            {"source": "response", "statement": f"remark {i}", "verdict": v, "reason": "r"}
            for i, v in enumerate(verdicts)
        ]
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--scorer", "textual-difference", "--fail-under", "textual-difference=5"],
            "outside Textual difference's range 0..1",
        ),
        (["--scorer", "textual-difference", "--scale", "10", "--fail-under", "textual-difference=11"], "range 0..10"),
        (["--scorer", "toxicity", "--fail-under", "toxicity=0.2"], "use --fail-over toxicity=0.2"),
        (["--scorer", "textual-difference", "--fail-over", "textual-difference=0.2"], "use --fail-under"),
        (["--scorer", "toxicity", "--fail-over", "toxicity=-0.1"], "outside Toxicity's range 0..1"),
        (
            [
                "--scorer",
                "textual-difference",
                "--fail-under",
                "textual-difference=0.5",
                "--fail-under",
                "textual-difference=0.9",
            ],
            "--fail-under is given more than once for textual-difference",
        ),
    ],
)
def test_cli_thresholds_are_checked_against_range_and_direction(env, capsys, argv, message):
    code = main(["run", "d.csv", *argv])
    _, err = capsys.readouterr()
    assert code == 2 and message in err
    assert env.chat_call_count == 0  # rejected before any judge call


def test_cli_fail_over_fails_when_the_mean_toxicity_is_above_it(env, capsys):
    # row 1: 1 toxic of 2 remarks = 0.5; row 2: 0 of 2 = 0; mean 0.25 > 0.2
    env.enqueue(Reply.json(_remarks("yes", "no")), Reply.json(_remarks("no", "no")))
    code = main(["run", "d.csv", "--scorer", "toxicity", "--concurrency", "1", "--fail-over", "toxicity=0.2"])
    out, _ = capsys.readouterr()
    assert code == 1
    assert "FAIL toxicity: mean 0.2500 > threshold 0.2" in out


def test_cli_fail_over_passes_when_the_mean_toxicity_is_at_most_it(env, capsys):
    env.enqueue(Reply.json(_remarks("yes", "no")), Reply.json(_remarks("no", "no")))
    code = main(["run", "d.csv", "--scorer", "toxicity", "--concurrency", "1", "--fail-over", "toxicity=0.25"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "ok   toxicity: mean 0.2500 <= threshold 0.25" in out
