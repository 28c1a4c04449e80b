"""Required inputs: a row without a field its scorer needs is missing_input, named, counted apart, never
filled from another field; textual difference compares with an explicit per-run target."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from fake_openai import Reply
from realdata import read_jsonl

from scorers import EvalItem, MissingInputError, ScoreStatus, Store, create_scorer, run_evals
from scorers.analysis.generate import items_from_responses
from scorers.catalogue.registry import SCORERS, resolve_options, scorer_label, unmapped_fields
from scorers.cli import main
from scorers.core.base import RUN_FIELDS
from scorers.runs.datasets import iter_runs, load_dataset

IFEVAL = "ifeval_gpt4/input_response_data_gpt4_20231107_145030.jsonl"


def blank_reference_csv(tmp_path: Path, n: int = 10) -> tuple[Path, list[dict]]:
    """Real IFEval prompts and GPT-4 responses, with a reference column that is blank in every odd row.

    The even rows' reference is the response itself (a perfect match), so a score of 1 there is worked
    by hand; the odd rows' blank reference must never make them compare with the prompt.
    """
    rows = read_jsonl(IFEVAL, limit=n)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["prompt", "response", "reference"])
    for i, row in enumerate(rows):
        writer.writerow([row["prompt"], row["response"], row["response"] if i % 2 == 0 else ""])
    path = tmp_path / "ifeval_blank_refs.csv"
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path, rows


def test_every_catalogue_scorer_declares_what_it_reads_and_requires():
    for spec in SCORERS.values():
        assert spec.reads and set(spec.reads) <= set(RUN_FIELDS), spec.id
        assert set(spec.requires) <= set(spec.reads), spec.id


def test_real_dataset_with_blank_references_never_compares_with_the_prompt(tmp_path):
    path, rows = blank_reference_csv(tmp_path)
    dataset = load_dataset(path)
    items = [
        EvalItem(i, p)
        for _, i, p in iter_runs(dataset, {"input": "prompt", "output": "response", "ground_truth": "reference"})
    ]
    options = resolve_options("textual-difference", {}, ground_truth_mapped=True)
    assert options["target"] == "ground_truth"
    result = run_evals(items, [create_scorer("textual-difference", options)])
    statuses = [o.status for o in result.outcomes]
    # even rows: reference == response -> ratio 1, confidence 1 -> 1.0; odd rows: not scored
    assert statuses == [ScoreStatus.SCORED, ScoreStatus.MISSING_INPUT] * 5
    assert [o.score for o in result.outcomes if o.status is ScoreStatus.SCORED] == [1.0] * 5
    missing = [o for o in result.outcomes if o.status is ScoreStatus.MISSING_INPUT]
    assert all(o.error.startswith("ground_truth:") for o in missing)
    summary = result.scores()["textual-difference"]
    assert (summary.n_scored, summary.n_failed, summary.mean) == (5, 5, 1.0)


def test_cli_on_blank_references_exits_3_and_says_the_target(fake_judge, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path, _ = blank_reference_csv(tmp_path)
    code = main(["run", str(path), "--scorer", "textual-difference", "--concurrency", "1"])
    out, err = capsys.readouterr()
    assert code == 3
    assert "textual-difference compares each response with its ground_truth" in err
    assert "missing_input: ground_truth:" in out
    run_id = out.split("Run id: ", 1)[1].split()[0]
    store = Store(tmp_path / "studio.db")
    try:
        assert store.get_run(run_id)["scorers"][0]["options"]["target"] == "ground_truth"  # recorded in the run
    finally:
        store.close()


def test_cli_without_a_ground_truth_column_compares_with_the_input_and_records_it(
    fake_judge, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("prompt,response\nhello world,hello world\n", encoding="utf-8")
    code = main(["run", "d.csv", "--scorer", "textual-difference"])
    out, err = capsys.readouterr()
    assert code == 0 and "compares each response with its input" in err


def test_cli_explicit_target_without_its_column_is_a_usage_error(fake_judge, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("prompt,response\nhello,hello\n", encoding="utf-8")
    code = main(["run", "d.csv", "--scorer", "textual-difference", "--target", "ground_truth"])
    _, err = capsys.readouterr()
    assert code == 2 and "'ground_truth' role (--ground-truth-col COL)" in err


def test_cli_needs_no_prompt_column_for_textual_difference_against_a_ground_truth(
    fake_judge, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("response,reference\nabc,abc\n", encoding="utf-8")
    code = main(["run", "d.csv", "--scorer", "textual-difference"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "ground_truth = 'reference' (detected)" in err


def test_cli_no_guess_maps_only_the_flagged_roles(fake_judge, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d.csv").write_text("prompt,response,reference\nhi,hi,bye\n", encoding="utf-8")
    code = main(
        [
            "run",
            "d.csv",
            "--scorer",
            "textual-difference",
            "--no-guess",
            "--output-col",
            "response",
            "--input-col",
            "prompt",
        ]
    )
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "ground_truth = none" in err and "(detected)" not in err
    assert "compares each response with its input" in err  # the reference column was not guessed


def test_cli_does_not_take_a_bare_system_column_as_the_system_message(fake_judge, tmp_path, capsys, monkeypatch):
    # a "system" column holding model names (as in summarisation benchmarks) must not reach the judge
    monkeypatch.chdir(tmp_path)
    fake_judge.responder = lambda body: Reply.json(
        {
            "intentAlignment": {"score": 1, "primaryIntent": "x", "isAddressed": True, "reasoning": "r"},
            "requirementsFulfillment": {"requirements": [], "overallScore": 1},
            "completeness": {"score": 1, "missingElements": [], "reasoning": "r"},
            "responseAppropriateness": {"score": 1, "formatAlignment": True, "toneAlignment": True, "reasoning": "r"},
            "overallAssessment": "ok",
        }
    )
    (tmp_path / "d.csv").write_text("system,prompt,response\nBERTS2S,Summarise: a b c,a b\n", encoding="utf-8")
    code = main(["run", "d.csv", "--scorer", "prompt-alignment", "--yes"])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "system = none" in err
    assert "BERTS2S" not in fake_judge.last_prompt_text()


def test_compare_items_carry_a_blank_ground_truth_as_missing_not_as_the_question():
    import pandas as pd

    frame = pd.DataFrame({"q": ["What is 2+2?", "Say hi"], "gold": ["4", None], "A": ["4", "Say hi"]})
    items = items_from_responses(frame, input_col="q", response_cols={"A": "A"}, ground_truth_col="gold")
    scorer = create_scorer("textual-difference", resolve_options("textual-difference", {}, ground_truth_mapped=True))
    assert scorer.run(items[0].payload).score == 1.0
    with pytest.raises(MissingInputError, match="ground_truth"):  # "Say hi" == "Say hi" would have scored 1
        scorer.run(items[1].payload)


@pytest.mark.parametrize(
    ("scorer_id", "payload", "field"),
    [
        ("answer-similarity", {"input": "q", "output": "a", "ground_truth": " "}, "ground_truth"),
        ("rubric", {"input": "q", "output": "a", "ground_truth": ""}, "ground_truth"),  # carried but blank
        ("faithfulness", {"input": "q", "output": "a", "context": []}, "context"),
        ("answer-relevancy", {"input": [], "output": "a"}, "input"),
        ("toxicity", {"input": "q", "output": "  "}, "output"),
    ],
)
def test_scorers_reading_ground_truth_or_context_report_the_missing_field_before_any_call(
    fake_openai, scorer_id, payload, field
):
    from judge_data import settings_for

    options = {"criteria": "Be correct."} if scorer_id == "rubric" else {}
    scorer = create_scorer(scorer_id, options, settings=settings_for(fake_openai))
    with pytest.raises(MissingInputError) as info:
        scorer.run(payload)
    assert info.value.field == field and info.value.status is ScoreStatus.MISSING_INPUT
    assert fake_openai.chat_call_count == 0


def test_required_columns_follow_the_chosen_scorers():
    td = resolve_options("textual-difference", {}, ground_truth_mapped=True)
    assert unmapped_fields({"textual-difference": td}, {"output": "r", "ground_truth": "g"}) == {}
    assert unmapped_fields({"prompt-alignment": {"evaluation_mode": "user"}}, {"output": "r"}) == {
        "input": ["Prompt alignment"]
    }
    assert scorer_label("textual-difference", td) == "Textual difference (vs ground truth)"


def test_only_failures_at_the_judge_are_retried():
    """Retry re-sends what another attempt can change; a missing or invalid input would come out the same."""
    assert {s.value for s in ScoreStatus if s.retryable} == {
        "judge_refused",
        "judge_output_invalid",
        "judge_output_truncated",
        "rate_limited",
        "api_error",
        "exceeds_context",
    }
