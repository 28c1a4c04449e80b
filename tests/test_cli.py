"""The command line, in-process through ``main(argv)`` and as ``python -m scorers``, against the fake judge."""

from __future__ import annotations

import csv
import gc
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from fake_openai import Reply
from judge_data import single_analysis
from killed_runs import kill_once_stored
from realdata import REALDATA

from scorers import (
    EvalItem,
    ScoreStatus,
    Store,
    create_prompt_alignment_scorer,
    create_textual_difference_scorer,
    run_evals,
)
from scorers.cli import Progress, item_progress, main
from scorers.core.judge import resolve_judge_settings

REPO = Path(__file__).resolve().parents[1]
IFEVAL = REALDATA / "ifeval_gpt4" / "input_response_data_gpt4_20231107_145030.jsonl"
KEY = "test-key"  # the key the fake_judge fixture puts in the environment
# user mode (no system column): 0.40·0.9 + 0.30·0.8 + 0.20·0.7 + 0.10·1.0 = 0.84
GOOD = single_analysis(0.9, 0.8, 0.7, 1.0)
SMALL_CSV = (
    "id,prompt,response,variant\n"
    "q1,Say hi in French,Bonjour !,A\n"
    "q2,Name a prime number,7,B\n"
    'q3,"Write a haiku, about rain","Soft rain on the roof,\nthe gutter hums a low song,\nnight drinks it all in",A\n'
)


@pytest.fixture
def env(monkeypatch, tmp_path, fake_judge):
    """The judge is the fake server (its key is ``KEY``); HOME, the working directory and the store in tmp_path."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    fake_judge.responder = lambda body: Reply.json(GOOD)
    return fake_judge


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


class _Tty(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert KEY not in out and KEY not in err
    return code, out, err


def ifeval_copy(tmp_path: Path, n: int = 30) -> tuple[Path, list[dict]]:
    lines = IFEVAL.read_text(encoding="utf-8").splitlines()[:n]
    path = tmp_path / "ifeval.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, [json.loads(line) for line in lines]


def summary_row(out: str, scorer: str) -> list[str]:
    """The cells of ``scorer``'s row in the Scores table: n scored, n not scored, mean, median, std, min, max."""
    block = out.split("Scores (", 1)[1].split("\n\n", 1)[0]
    line = next(line for line in block.splitlines() if line.strip().startswith(scorer + " "))
    return line.split()[1:]


# ---- a complete run


def test_run_scores_every_row_and_prints_the_summary(env, tmp_path, capsys):
    data = write(tmp_path, "small.csv", SMALL_CSV)
    code, out, err = run_cli(
        capsys,
        "run",
        str(data),
        "--scorer",
        "prompt-alignment",
        "--scorer",
        "textual-difference",
        "--model",
        "gpt-4o-mini",
    )
    assert code == 0, err
    assert env.chat_call_count == 3
    assert summary_row(out, "prompt-alignment") == ["3", "0", "0.840", "0.840", "0.000", "0.840", "0.840"]
    assert summary_row(out, "textual-difference")[:2] == ["3", "0"]
    assert "user.intentAlignment" in out and "0.900" in out  # the dimension table
    assert "ratio" in out and "confidence" in out
    assert "Columns: input = 'prompt' (detected), output = 'response' (detected)" in err
    assert "id = 'id' (detected)" in err
    assert "Estimate: 3 judge calls to gpt-4o-mini" in err
    assert "3/3 items, 0 with failures" in err
    # usage from the fake server: 3 calls; gpt-4o-mini has a list price, so a cost is printed
    assert "Judge usage: 3 requests (3 answered)" in out and "cost $" in out
    run_id = out.split("Run id: ", 1)[1].split()[0]
    store = Store(tmp_path / "studio.db")  # SCORER_STUDIO_DB
    try:
        assert store.get_run(run_id)["status"] == "completed"
        assert len(store.results(run_id)) == 6
    finally:
        store.close()


def test_run_on_real_ifeval_rows_detects_prompt_and_response(env, tmp_path, capsys):
    data, rows = ifeval_copy(tmp_path)
    code, out, err = run_cli(
        capsys, "run", str(data), "--scorer", "prompt-alignment", "--scorer", "textual-difference", "--concurrency", "4"
    )
    assert code == 0, err
    assert "Loaded 30 row(s) from" in err
    assert "input = 'prompt' (detected), output = 'response' (detected), system = none" in err
    assert env.chat_call_count == 30
    sent = "\n".join(env.prompt_text(i) for i in range(30))
    for row in rows:
        assert f"<response>\n{row['response']}\n</response>" in sent
    assert summary_row(out, "prompt-alignment") == ["30", "0", "0.840", "0.840", "0.000", "0.840", "0.840"]
    assert summary_row(out, "textual-difference")[:2] == ["30", "0"]
    # the model is the default one and the fake reports usage: the cost is known
    assert "Judge usage: 30 requests (30 answered)" in out


# ---- exit codes


def test_fail_under_above_the_mean_exits_1_and_names_the_scorer(env, tmp_path, capsys):
    data = write(tmp_path, "small.csv", SMALL_CSV)
    code, out, _ = run_cli(
        capsys,
        "run",
        str(data),
        "--scorer",
        "prompt-alignment",
        "--scorer",
        "textual-difference",
        "--fail-under",
        "prompt-alignment=0.85",
        "--fail-under",
        "textual-difference=0",
    )
    assert code == 1
    assert "FAIL prompt-alignment: mean 0.8400 < threshold 0.85" in out
    assert "ok   textual-difference" in out


def test_fail_under_uses_the_scorers_scale(env, tmp_path, capsys):
    data = write(tmp_path, "small.csv", SMALL_CSV)
    code, out, _ = run_cli(
        capsys,
        "run",
        str(data),
        "--scorer",
        "prompt-alignment",
        "--scale",
        "10",
        "--fail-under",
        "prompt-alignment=8.4",
    )
    assert code == 0
    assert summary_row(out, "prompt-alignment")[2] == "8.400"
    assert "ok   prompt-alignment: mean 8.4000 >= threshold 8.4" in out


def test_fail_under_an_unknown_scorer_is_a_usage_error(env, tmp_path, capsys):
    data = write(tmp_path, "small.csv", SMALL_CSV)
    code, _, err = run_cli(
        capsys, "run", str(data), "--scorer", "textual-difference", "--fail-under", "prompt-alignment=0.5"
    )
    assert code == 2
    assert "'prompt-alignment'" in err and "textual-difference" in err
    assert env.chat_call_count == 0


def test_an_empty_response_exits_3_and_reports_the_row(env, tmp_path, capsys):
    data = write(tmp_path, "gaps.csv", "prompt,response\nSay hi,hello\nSay bye,\nCount to 3,1 2 3\n")
    code, out, err = run_cli(capsys, "run", str(data), "--scorer", "prompt-alignment")
    assert code == 3
    assert env.chat_call_count == 2  # the empty response is rejected before any judge call
    assert "Not scored (1 outcome(s)):" in out
    assert "line 3 [prompt-alignment] missing_input: output: " in out and "is blank in this row" in out
    assert summary_row(out, "prompt-alignment")[:3] == ["2", "1", "0.840"]
    # A missing input is not a failure of the judge: the progress bar counts it apart.
    assert "3/3 items, 0 with failures, 1 not scored (missing input)," in err


def test_a_failed_threshold_wins_over_unscored_items(env, tmp_path, capsys):
    data = write(tmp_path, "gaps.csv", "prompt,response\nSay hi,hello\nSay bye,\n")
    code, out, _ = run_cli(
        capsys, "run", str(data), "--scorer", "prompt-alignment", "--fail-under", "prompt-alignment=0.9"
    )
    assert code == 1
    assert "FAIL prompt-alignment" in out and "Not scored" in out


def test_a_missing_column_exits_2_naming_it_and_the_header(env, tmp_path, capsys):
    data = write(tmp_path, "small.csv", SMALL_CSV)
    code, _, err = run_cli(capsys, "run", str(data), "--scorer", "prompt-alignment", "--output-col", "answer")
    assert code == 2
    assert "'answer'" in err
    assert "['id', 'prompt', 'response', 'variant']" in err
    assert env.chat_call_count == 0


def test_no_detectable_column_exits_2_with_the_flags_to_use(env, tmp_path, capsys):
    data = write(tmp_path, "odd.csv", "question_text,model_said\nQ,A\n")
    code, _, err = run_cli(capsys, "run", str(data), "--scorer", "textual-difference")
    assert code == 2
    assert "'input'" in err and "['question_text', 'model_said']" in err and "--input-col" in err


def test_an_unused_system_column_is_pointed_out(env, tmp_path, capsys):
    data = write(tmp_path, "sys.csv", "prompt,response,ground_truth,system\nSay hi.,hi,hi,Be brief.\n")
    code, _, err = run_cli(capsys, "run", str(data), "--scorer", "textual-difference")
    assert code == 0
    assert (
        "Column 'system' is not used: it is never taken as the system message by its name alone. "
        "If it holds the system prompt, pass --system-col system."
    ) in err
    code, _, err = run_cli(capsys, "run", str(data), "--scorer", "textual-difference", "--system-col", "system")
    assert code == 0 and "is not used" not in err


def test_no_key_and_no_base_url_exits_2_with_the_how_to_before_any_work(env, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")
    data = write(tmp_path, "small.csv", SMALL_CSV)
    code, out, err = run_cli(capsys, "run", str(data), "--scorer", "textual-difference", "--scorer", "gluten-checker")
    assert code == 2
    assert "gluten-checker needs an LLM judge, but no API key and no base URL are set" in err
    assert "export OPENAI_API_KEY=" in err and "OPENAI_BASE_URL=http://localhost:11434/v1" in err
    assert "Loaded" not in err and out == ""
    assert not (tmp_path / "studio.db").exists()
    assert env.requests == []


def test_code_scorers_need_no_key(env, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.delenv("OPENAI_BASE_URL")
    data = write(tmp_path, "small.csv", SMALL_CSV)
    code, out, err = run_cli(capsys, "run", str(data), "--scorer", "textual-difference")
    assert code == 0, err
    assert "Estimate: no judge calls" in err
    assert "Judge usage: none" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "x.csv", "--scorer", "bleu"],
        ["run", "x.csv", "--scorer", "textual-difference", "--concurrency", "0"],
        ["run", "x.csv", "--scorer", "textual-difference", "--fail-under", "textual-difference"],
        ["run", "x.csv", "--scorer", "textual-difference", "--scale", "-1"],
        ["run", "x.csv"],
        ["run", "--scorer", "textual-difference"],
        ["run", "x.csv", "--scorer", "textual-difference", "--output", "out.xlsx"],
        ["run", "x.csv", "--scorer", "textual-difference", "--retry-failed"],
        ["run", "x.csv", "--scorer", "textual-difference", "--resume", "abc"],
        ["frobnicate"],
    ],
)
def test_bad_flags_exit_2(env, tmp_path, capsys, argv):
    write(tmp_path, "x.csv", "prompt,response\nQ,A\n")
    code = main(argv)
    capsys.readouterr()
    assert code == 2
    assert env.chat_call_count == 0


def test_an_unreadable_dataset_exits_2(env, tmp_path, capsys):
    code, _, err = run_cli(capsys, "run", str(tmp_path / "nope.csv"), "--scorer", "textual-difference")
    assert code == 2 and "file not found" in err


def test_skipped_records_are_listed_with_line_and_reason(env, tmp_path, capsys):
    data = write(
        tmp_path,
        "bad.jsonl",
        '{"prompt": "Q1", "response": "A1"}\n{"prompt": "Q2", \n[1, 2]\n{"prompt": "Q4", "response": "A4"}\n',
    )
    code, _, err = run_cli(capsys, "run", str(data), "--scorer", "textual-difference")
    assert code == 3  # records that could not be loaded were not scored: not a clean pass
    assert "Skipped 2 record(s)" in err
    assert "2 record(s) of the dataset could not be loaded and were not scored" in err
    assert "line 2: invalid JSON" in err
    assert "line 3: not a JSON object (found an array)" in err
    store = Store(tmp_path / "studio.db")  # SCORER_STUDIO_DB: the run records them too, for whoever reopens it
    (run,) = store.list_runs()
    skipped = store.get_run(run["id"])["config"]["skippedAtLoad"]
    store.close()
    assert skipped["count"] == 2
    assert [s.split(":")[0] for s in skipped["first"]] == ["line 2", "line 3"]


def test_help_lists_the_exit_codes(capsys):
    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    for text in ("--fail-under", "--resume", "--group-col", "exit codes:", "130", "precedence"):
        assert text in out


# ---- outputs


def _run_with_output(capsys, tmp_path, name: str) -> Path:
    data = write(tmp_path, "gaps.csv", "id,prompt,response\nq1,=SUM(A1),-2 apples\nq2,Say bye,\n")
    out_path = tmp_path / name
    code, out, _ = run_cli(
        capsys,
        "run",
        str(data),
        "--scorer",
        "prompt-alignment",
        "--scorer",
        "textual-difference",
        "--output",
        str(out_path),
    )
    assert code == 3
    assert f"to {out_path}" in out
    return out_path


def test_output_csv(env, tmp_path, capsys):
    path = _run_with_output(capsys, tmp_path, "results.csv")
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    assert [(r["item_id"], r["scorer"], r["status"]) for r in rows] == [
        ("q1", "prompt-alignment", "scored"),
        ("q1", "textual-difference", "scored"),
        ("q2", "prompt-alignment", "missing_input"),
        ("q2", "textual-difference", "scored"),
    ]
    assert rows[0]["input"] == "'=SUM(A1)" and rows[0]["output"] == "'-2 apples"
    assert rows[0]["score"] == "0.84" and rows[2]["score"] == ""
    assert rows[2]["error"].startswith("output: Prompt alignment needs the run's output, which is blank")


def test_output_jsonl(env, tmp_path, capsys):
    path = _run_with_output(capsys, tmp_path, "results.jsonl")
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(records) == 4
    assert records[0]["input"] == "=SUM(A1)" and records[0]["score"] == 0.84
    assert records[0]["analysis"]["effectiveMode"] == "user"
    assert records[2]["status"] == "missing_input" and records[2]["score"] is None


def test_output_seed_json(env, tmp_path, capsys):
    path = _run_with_output(capsys, tmp_path, "results.json")
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["scores"]["prompt-alignment"]["nScored"] == 1 and doc["scores"]["prompt-alignment"]["nFailed"] == 1
    assert doc["scores"]["prompt-alignment"]["mean"] == 0.84
    assert [i["itemId"] for i in doc["items"]] == ["q1", "q2"]
    failed = doc["items"][1]["scorerResults"]["prompt-alignment"]
    assert failed["status"] == "missing_input" and failed["score"] is None
    assert failed["error"].startswith("output: Prompt alignment needs the run's output, which is blank")


def test_output_parquet(env, tmp_path, capsys):
    path = _run_with_output(capsys, tmp_path, "results.parquet")
    frame = pd.read_parquet(path)
    assert frame["status"].tolist() == ["scored", "scored", "missing_input", "scored"]
    assert frame["score"][0] == 0.84 and pd.isna(frame["score"][2])
    assert frame["input"][0] == "=SUM(A1)"


def test_groups_are_summarised_and_exported(env, tmp_path, capsys):
    data = write(tmp_path, "small.csv", SMALL_CSV)
    out_path = tmp_path / "r.jsonl"
    code, out, _ = run_cli(
        capsys, "run", str(data), "--scorer", "prompt-alignment", "--group-col", "variant", "--output", str(out_path)
    )
    assert code == 0
    assert "variant=A" in out and "variant=B" in out
    records = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert [r["group:variant"] for r in records] == ["A", "B", "A"]


# ---- runs, export, resume


def test_runs_counts_an_input_problem_as_not_scored_apart_from_failures(env, tmp_path, capsys):
    # Two items: one scored (identical texts), one without an output (missing input: not scored,
    # not a failure).
    store = Store(tmp_path / "studio.db")  # SCORER_STUDIO_DB
    try:
        result = run_evals(
            [EvalItem("a", {"input": "hi", "output": "hi"}), EvalItem("b", {"input": "hi"})],
            [create_textual_difference_scorer()],
            store=store,
        )
    finally:
        store.close()
    assert [o.status.value for o in result.outcomes] == ["scored", "missing_input"]
    code, out, _ = run_cli(capsys, "runs")
    assert code == 0
    # "hi" vs "hi" → 1.0; the missing output is counted apart: 0 judge/scorer failures, 1 not scored (input).
    assert "textual-difference: mean 1.000, 1 scored, 0 failed, 1 not scored (input), 0 pending" in out


def test_runs_gives_a_run_of_variants_a_mean_per_variant(env, tmp_path, capsys):
    # A Compare run of variants a and b over the same rows: a scores 1 ("4"/"4") and 1 ("abcd"/"abcd"), b 0.75
    # ("=1+1" vs "=1+2": 2·3/8) and 0 ("ab" vs "cd"). (1 + 1 + 0.75 + 0) / 4 = 0.688 would mix the two.
    rows = [("1", "a", "4", "4"), ("1", "b", "=1+1", "=1+2"), ("2", "a", "abcd", "abcd"), ("2", "b", "ab", "cd")]
    items = [
        EvalItem(f"{r}::{v}", {"input": "q", "output": o, "ground_truth": g}, {"variant": v, "row_id": r})
        for r, v, o, g in rows
    ]
    store = Store(tmp_path / "studio.db")  # SCORER_STUDIO_DB
    try:
        run_evals(items, [create_textual_difference_scorer()], store=store, mapping={"groups": ["variant", "row_id"]})
    finally:
        store.close()
    code, out, _ = run_cli(capsys, "runs")
    assert code == 0
    assert "    textual-difference: 4 scored, 0 failed, 0 pending\n" in out
    assert "      variant a: mean 1.000, 2 scored, 0 failed\n      variant b: mean 0.375, 2 scored, 0 failed\n" in out
    assert "0.688" not in out


def test_runs_counts_what_a_stopped_run_has_still_to_score(env, tmp_path, capsys):
    store = Store(tmp_path / "studio.db")  # SCORER_STUDIO_DB
    run_id = store.create_run(
        dataset_name="paused.csv",
        items=[(f"q{i}", {"input": "q", "output": "x"}, {}) for i in range(5)],
        scorers=[{"id": "textual-difference", "name": "Textual difference", "options": {}}],
        judge=None,
    )
    store.save_result(run_id, 0, "textual-difference", {"status": "scored", "score": 1.0})
    store.save_result(run_id, 1, "textual-difference", {"status": "api_error", "error": "HTTP 500"})
    store.finish_run(run_id, "cancelled")
    store.close()
    code, out, _ = run_cli(capsys, "runs")
    # 5 items, 1 scored, 1 failed: 5 - 1 - 1 = 3 never scored.
    assert code == 0 and "textual-difference: mean 1.000, 1 scored, 1 failed, 3 pending" in out


def test_runs_prints_the_dashboards_label_of_a_status_not_its_stored_name(env, tmp_path, capsys):
    store = Store(tmp_path / "studio.db")  # SCORER_STUDIO_DB
    run_id = store.create_run(
        dataset_name="quota.csv",
        items=[("q0", {"input": "q", "output": "x"}, {})],
        scorers=[{"id": "textual-difference", "name": "Textual difference", "options": {}}],
        judge=None,
    )
    store.finish_run(run_id, "quota_exhausted")
    store.close()
    code, out, _ = run_cli(capsys, "runs")
    (line,) = [line for line in out.splitlines() if line.startswith(run_id)]
    # The wording of History's pause warning (RUN_STATUS_LABELS), not the stored name.
    assert code == 0 and "Paused because the judge's quota or daily limit is used up (429 insufficient_quota)" in line
    assert "quota_exhausted" not in out


def test_runs_lists_stored_runs_and_export_writes_one(env, tmp_path, capsys):
    data = write(tmp_path, "small.csv", SMALL_CSV)
    code, out, _ = run_cli(capsys, "run", str(data), "--scorer", "prompt-alignment", "--model", "gpt-4o-mini")
    assert code == 0
    run_id = out.split("Run id: ", 1)[1].split()[0]
    code, out, _ = run_cli(capsys, "runs")
    assert code == 0
    line = next(line for line in out.splitlines() if line.startswith(run_id))
    assert "Completed" in line and "gpt-4o-mini" in line and "small.csv" in line and " 3 " in line
    assert "prompt-alignment: mean 0.840, 3 scored, 0 failed" in out
    target = tmp_path / "again.json"
    code, out, _ = run_cli(capsys, "export", run_id, "--output", str(target))
    assert code == 0
    assert json.loads(target.read_text())["runId"] == run_id
    code, _, err = run_cli(capsys, "export", "nope", "--output", str(target))
    assert code == 2 and "no run with id 'nope'" in err


def test_resume_of_a_python_run_rebuilds_its_scorers_with_the_options_it_recorded(env, tmp_path, capsys):
    db = tmp_path / "py.db"
    items = [EvalItem(f"r{i}", {"input": f"Say {i} in French", "output": "Bonjour"}) for i in range(3)]
    settings = resolve_judge_settings(model="fake-judge")
    cancel = threading.Event()
    store = Store(db)
    first = run_evals(
        items,
        [create_prompt_alignment_scorer(settings=settings, options={"scale": 10})],
        concurrency=1,
        store=store,
        cancel=cancel,
        on_item_complete=lambda index, item, outcomes: cancel.set(),
    )
    assert first.status == "cancelled" and [o.score for o in first.outcomes] == [8.4]
    # Resumed from the command line at scale 10 (before: at the defaults, 0.84 beside 8.4): 0.84 × 10 = 8.4.
    code, out, err = run_cli(capsys, "run", "--resume", first.run_id, "--db", str(db))
    assert code == 0, err
    assert summary_row(out, "prompt-alignment")[:3] == ["3", "0", "8.400"]

    class Own:  # a catalogue id, so the CLI could build it (before: at the defaults)
        id = "textual-difference"
        name = "Own"

        def run(self, payload):
            return create_textual_difference_scorer().run(payload)

    cancel = threading.Event()
    own = run_evals(items, [Own()], concurrency=1, store=store, cancel=cancel, on_item_complete=lambda *a: cancel.set())
    store.close()
    # Its options are not known: rebuilt at the defaults it could score the rest with other options.
    code, _, err = run_cli(capsys, "run", "--resume", own.run_id, "--db", str(db))
    assert code == 2 and "does not record the options of textual-difference" in err


def test_runs_on_an_empty_store(env, tmp_path, capsys):
    code, out, _ = run_cli(capsys, "runs")
    assert code == 0 and "No runs stored" in out


def test_resume_of_a_run_stopped_by_run_evals_scores_only_the_rest(env, tmp_path, capsys):
    db = tmp_path / "other.db"
    data, rows = ifeval_copy(tmp_path, 12)
    items = [EvalItem(f"r{i}", {"input": r["prompt"], "output": r["response"]}) for i, r in enumerate(rows)]
    settings = resolve_judge_settings(model="fake-judge")
    scorers = [create_prompt_alignment_scorer(settings=settings), create_textual_difference_scorer()]
    cancel = threading.Event()
    store = Store(db)

    def stop_after_four(index, item, outcomes):
        if index == 3:
            cancel.set()

    first = run_evals(items, scorers, concurrency=1, store=store, cancel=cancel, on_item_complete=stop_after_four)
    store.close()
    assert first.status == "cancelled"
    done = {o.item_index for o in first.outcomes if o.scorer_id == "prompt-alignment"}
    calls_before = env.chat_call_count
    assert calls_before == len(done) and 0 < len(done) < len(items)

    code, out, err = run_cli(capsys, "run", "--resume", first.run_id, "--db", str(db))
    assert code == 0, err
    assert env.chat_call_count - calls_before == len(items) - len(done)
    resumed_prompts = "\n".join(env.prompt_text(i) for i in range(calls_before, env.chat_call_count))
    for i, row in enumerate(rows):
        assert (f"<response>\n{row['response']}\n</response>" in resumed_prompts) == (i not in done)
    assert summary_row(out, "prompt-alignment")[:2] == ["12", "0"]
    assert "rebuilt with default options" not in err  # the run records its scorers' options
    code, out, _ = run_cli(capsys, "runs", "--db", str(db))
    assert first.run_id in out and "Completed" in out


def test_retry_failed_scores_the_failed_outcomes_again(env, tmp_path, capsys):
    data = write(tmp_path, "small.csv", SMALL_CSV)
    env.responder = None
    env.enqueue(Reply.json(GOOD), Reply.server_error(should_retry=False), Reply.json(GOOD))
    code, out, _ = run_cli(capsys, "run", str(data), "--scorer", "prompt-alignment", "--concurrency", "1")
    assert code == 3
    assert "api_error" in out
    run_id = out.split("Run id: ", 1)[1].split()[0]
    code, out, _ = run_cli(capsys, "run", "--resume", run_id)
    assert code == 3 and env.chat_call_count == 3  # without --retry-failed nothing is re-scored
    env.responder = lambda body: Reply.json(GOOD)
    code, out, _ = run_cli(capsys, "run", "--resume", run_id, "--retry-failed")
    assert code == 0
    assert env.chat_call_count == 4
    assert summary_row(out, "prompt-alignment")[:2] == ["3", "0"]


def test_the_usage_line_prices_each_outcome_at_its_own_judges_model(env, tmp_path, capsys):
    data = write(tmp_path, "small.csv", SMALL_CSV)
    tokens = {"usage": {"prompt_tokens": 1000, "completion_tokens": 200}}
    env.responder = None
    env.enqueue(Reply.json(GOOD, **tokens), Reply.server_error(should_retry=False), Reply.json(GOOD, **tokens))
    args = ("--scorer", "prompt-alignment", "--concurrency", "1", "--yes")
    code, out, _ = run_cli(capsys, "run", str(data), *args, "--model", "gpt-4o-mini")
    assert code == 3
    run_id = out.split("Run id: ", 1)[1].split()[0]
    env.responder = lambda body: Reply.json(GOOD, usage={"prompt_tokens": 500, "completion_tokens": 50})
    code, out, _ = run_cli(
        capsys, "run", "--resume", run_id, "--retry-failed", "--judge", "current", "--model", "qwen2.5", "--yes"
    )
    assert code == 0
    # q1 and q3 at gpt-4o-mini's list price: 2 · (1000 · 0.15 + 200 · 0.60) / 1e6 = $0.00054; q2 was retried
    # with qwen2.5, which has no list price: unknown, not priced at gpt-4o-mini nor counted as $0.
    assert (
        "cost $0.00054 for 2 outcome(s), unknown for 1 outcome judged by qwen2.5 (no list price, and no price set "
        "for it)" in out
    )
    # A cost cap cannot be kept on this run: the cost of qwen2.5's outcome is unknown. Said so, nothing sent.
    calls = env.chat_call_count
    code, _, err = run_cli(capsys, "run", "--resume", run_id, "--max-cost", "1", "--yes")
    assert code == 2 and "unknown for 1 outcome judged by qwen2.5" in err and env.chat_call_count == calls
    # The run list names both judges' models (most outcomes first), not only the one the run started with.
    code, out, _ = run_cli(capsys, "runs")
    (line,) = [line for line in out.splitlines() if line.startswith(run_id)]
    assert code == 0 and "gpt-4o-mini, qwen2.5" in line


def test_a_used_up_quota_pauses_the_run_with_exit_4_and_a_resume_scores_every_item(env, tmp_path, capsys):
    # A server whose message has no full stop of its own: the reason still reads as sentences.
    env.responder = lambda body: Reply.error(429, "You exceeded your current quota", code="insufficient_quota")
    data = write(tmp_path, "small.csv", SMALL_CSV)

    code, out, err = run_cli(capsys, "run", str(data), "--scorer", "prompt-alignment", "--concurrency", "1")

    assert code == 4  # a pause, not Ctrl-C (130)
    assert env.chat_call_count == 1  # the pre-flight item met the quota: nothing else was sent
    assert "Interrupted" not in out + err
    assert "You exceeded your current quota. The items it hit are left to do: resume the run once the quota" in err
    run_id = err.split("--resume ", 1)[1].split()[0]
    assert (
        f"Run {run_id}: paused because the judge's quota or daily limit is used up (429 insufficient_quota), with 0 "
        "of 3 outcomes." in err
    )
    store = Store(tmp_path / "studio.db")
    try:
        assert store.get_run(run_id)["status"] == "quota_exhausted" and store.results(run_id) == []
    finally:
        store.close()

    env.responder = lambda body: Reply.json(GOOD)  # the quota is back
    code, out, _ = run_cli(capsys, "run", "--resume", run_id)
    assert code == 0 and env.chat_call_count == 4  # the 3 items, the one the quota hit included
    store = Store(tmp_path / "studio.db")
    try:
        assert store.get_run(run_id)["status"] == "completed"
        assert [r["status"] for r in store.results(run_id)] == ["scored"] * 3
    finally:
        store.close()


def test_unusable_judge_replies_in_a_row_pause_the_run_with_exit_4(env, tmp_path, capsys):
    env.responder = lambda body: Reply.content("I think it is fine.")  # not JSON: asked, re-asked, invalid
    data = write(tmp_path, "small.csv", SMALL_CSV)

    code, out, err = run_cli(
        capsys,
        "run",
        str(data),
        "--scorer",
        "prompt-alignment",
        "--concurrency",
        "1",
        "--max-consecutive-failures",
        "2",
    )

    assert code == 4 and env.chat_call_count == 4  # 2 items, 2 calls each; the third was never sent
    assert "Interrupted" not in out + err
    assert "Paused: the judge's last 2 replies did not match the schema: " in err
    assert 'first reply: "I think it is fine.".' in err
    assert (
        "paused because the judge's replies were unusable (invalid output or refusals, several in a row), with 2 of 3 outcomes."
        in err
    )


def test_resume_of_an_unknown_run_exits_2(env, tmp_path, capsys):
    Store(tmp_path / "studio.db").close()
    code, _, err = run_cli(capsys, "run", "--resume", "feedbeef")
    assert code == 2 and "no run with id 'feedbeef'" in err


# ---- the key is never printed


@pytest.mark.fake_openai(api_key="sk-right-key")
def test_the_key_is_never_printed_even_when_rejected(env, tmp_path, capsys, monkeypatch):
    secret = "sk-wrong-SECRET-1234567890"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    data = write(tmp_path, "small.csv", SMALL_CSV)
    code, out, err = run_cli(capsys, "run", str(data), "--scorer", "prompt-alignment")
    assert code == 4  # the pre-flight item met the rejected key: the run paused after one call
    assert "rejected the API key (401)" in err
    assert secret not in out + err and "SECRET" not in out + err
    assert env.api_keys() == [secret]


@pytest.mark.fake_openai(api_key="e")
def test_a_one_letter_key_alters_no_id_or_message(env, tmp_path, capsys, monkeypatch):
    # A key of one letter is no secret: hiding every "e" turned "Run id: d650e9c106cd" into
    # "d650[redacted]9c106cd" and the stored "Error code: 500 - Judge ..." into "Error cod[redacted]: 500 ...".
    monkeypatch.setenv("OPENAI_API_KEY", "e")
    env.responder = lambda body: Reply.server_error("Judge exploded here", should_retry=False)
    data = write(tmp_path, "small.csv", SMALL_CSV)
    code, out, err = main(["run", str(data), "--scorer", "prompt-alignment"]), *capsys.readouterr()
    assert "[redacted]" not in out + err
    run_id = out.split("Run id: ", 1)[1].split()[0]
    store = Store(tmp_path / "studio.db")  # SCORER_STUDIO_DB
    try:
        assert store.get_run(run_id) is not None  # the printed id is the stored run's
        errors = [r["error"] for r in store.results(run_id) if r["error"]]
    finally:
        store.close()
    assert errors and all(
        "[redacted]" not in e and "Error code: 500" in e and "Judge exploded here" in e for e in errors
    )
    # A usage error's words stay whole too (a key "x" once printed "te[redacted]t").
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    code, _, err = main(["run", str(data), "--scorer", "no-such-scorer"]), *capsys.readouterr()
    assert code == 2 and "[redacted]" not in err and "x" in err


# ---- confirmation on a terminal


@pytest.mark.parametrize(("answer", "code", "calls"), [("n\n", 130, 0), ("", 130, 0), ("y\n", 0, 3)])
def test_a_terminal_is_asked_before_paid_calls(env, tmp_path, capsys, monkeypatch, answer, code, calls):
    monkeypatch.setattr(sys, "stdin", _Tty(answer))
    data = write(tmp_path, "small.csv", SMALL_CSV)
    result, _, err = run_cli(capsys, "run", str(data), "--scorer", "prompt-alignment")
    assert result == code and env.chat_call_count == calls
    assert "Proceed? [y/N]" in err


def test_yes_skips_the_question(env, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", _Tty(""))
    data = write(tmp_path, "small.csv", SMALL_CSV)
    code, _, err = run_cli(capsys, "run", str(data), "--scorer", "prompt-alignment", "--yes")
    assert code == 0 and "Proceed?" not in err


# ---- progress


def test_progress_redraws_in_place_on_a_terminal():
    stream = _Tty()
    progress = Progress(stream, 4, interval=0.0)
    progress.start()
    for kind in (None, "failed", None, None):
        progress.item_done(kind)
    progress.close()
    text = stream.getvalue()
    assert text.count("\r") == 6 and text.endswith("\n") and text.count("\n") == 1
    assert "4/4 items, 1 with failures" in text and "ETA 0:00" in text


def test_progress_counts_an_item_not_scored_for_a_missing_input_apart_from_failures():
    assert item_progress([ScoreStatus.SCORED, ScoreStatus.SCORED]) is None
    assert item_progress([ScoreStatus.SCORED, ScoreStatus.MISSING_INPUT]) == "missing"
    assert item_progress([ScoreStatus.MISSING_INPUT, ScoreStatus.JUDGE_OUTPUT_INVALID]) == "failed"
    assert item_progress([ScoreStatus.INVALID_INPUT]) == "failed"
    stream = io.StringIO()
    progress = Progress(stream, 4, done=1, missing=1, interval=0.0)
    for kind in ("missing", "failed", None):
        progress.item_done(kind)
    assert "4/4 items, 1 with failures, 2 not scored (missing input)," in progress.text()


def test_progress_writes_occasional_lines_elsewhere():
    stream = io.StringIO()
    progress = Progress(stream, 100, done=40, failed=2)
    progress.start()
    for _ in range(60):
        progress.item_done(None)
    progress.close()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert lines[0].startswith("[") and "40/100 items, 2 with failures" in lines[0] and "ETA ?" in lines[0]
    assert len(lines) == 7  # the start, then one line per 10% step: 50% .. 100%
    assert "100/100 items" in lines[-1]


# ---- as a subprocess


def _child_env(fake, tmp_path: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SCORER_STUDIO_"))}
    return {
        **keep,
        "OPENAI_BASE_URL": fake.base_url,
        "OPENAI_API_KEY": KEY,
        "HOME": str(tmp_path),
        "SCORER_STUDIO_DB": str(tmp_path / "studio.db"),
        "PYTHONPATH": str(REPO),
    }


HEAVY_MODULES = (
    *("openai", "httpx2", "genai_prices", "alembic", "sqlalchemy.dialects.postgresql", "streamlit", "plotly"),
    *("pandas", "numpy", "pyarrow"),  # a CSV or JSON Lines file is read without them
    "xml.etree.ElementTree",  # for --junit only
)
# Runs ``python -m scorers ARGS...`` in this interpreter and prints which heavy modules it imported.
_MODULES_AFTER = (
    "import runpy, sys\n"
    "sys.argv = ['scorers', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('scorers', run_name='__main__')\n"
    "except SystemExit as exc:\n"
    "    print('exit', exc.code)\n"
    f"print('imported', *[m for m in {HEAVY_MODULES!r} if m in sys.modules])\n"
)


def _imported(tmp_path: Path, *args: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SCORER_STUDIO_"))}
    proc = subprocess.run(
        [sys.executable, "-c", _MODULES_AFTER, *args],
        cwd=tmp_path,
        env={**env, "HOME": str(tmp_path), "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = proc.stdout.splitlines()
    assert lines[-2] == "exit 0", proc.stdout + proc.stderr
    return lines[-1].split()[1:]


def test_a_code_only_run_imports_no_judge_client_price_list_or_migrations(tmp_path):
    data = write(tmp_path, "rows.csv", "input,output,ground_truth\nq,abc,abd\nq,x y,x z\n")
    run = ("run", str(data), "--scorer", "textual-difference", "--db", str(tmp_path / "s.db"))
    # A new store is built by the Alembic migrations (Alembic loads every dialect it knows); nothing else.
    assert _imported(tmp_path, *run) == ["alembic", "sqlalchemy.dialects.postgresql"]
    # Once the store exists (at the newest revision), a run of code scorers needs none of them.
    assert _imported(tmp_path, *run) == []
    assert _imported(tmp_path, "runs", "--db", str(tmp_path / "s.db")) == []
    lines = write(tmp_path, "rows.jsonl", '{"input": "q", "output": "abc", "ground_truth": "abd", "votes": [1, 2]}\n')
    assert (
        _imported(tmp_path, "run", str(lines), "--scorer", "textual-difference", "--db", str(tmp_path / "s.db")) == []
    )


# Runs ``python -m scorers ARGS...`` and prints, when the scoring starts, whether the collector is on and
# whether the dataset module (imported by the command to read the file, after the imports it froze) was
# frozen too: gc.get_objects() lists what the collector still walks, never what is frozen.
_GC_DURING_THE_RUN = (
    "import gc, runpy, sys\n"
    "import scorers.cli\n"
    "scoring = scorers.cli.run_evals\n"
    "def watched(*args, **kwargs):\n"
    "    from scorers.runs import datasets\n"
    "    walked = {id(o) for o in gc.get_objects()}\n"
    "    print('collector on', gc.isenabled(), 'datasets frozen', id(datasets.LoadedDataset) not in walked)\n"
    "    return scoring(*args, **kwargs)\n"
    "scorers.cli.run_evals = watched\n"
    "sys.argv = ['scorers', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('scorers', run_name='__main__')\n"
    "except SystemExit as exc:\n"
    "    print('exit', exc.code)\n"
)


def test_python_m_scorers_runs_into_a_closed_pipe_exits_quietly(tmp_path):
    # `python -m scorers runs | head`: head leaves; here the reader is gone before the first line.
    store = Store(tmp_path / "s.db")
    for i in range(3):
        store.create_run(
            dataset_name=f"d{i}.csv", items=[("q", {"input": "q", "output": "x"}, {})], scorers=[], judge=None
        )
    store.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SCORER_STUDIO_"))}
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "scorers", "runs", "--db", str(tmp_path / "s.db")],
            cwd=tmp_path,
            env={**env, "HOME": str(tmp_path), "PYTHONPATH": str(REPO)},
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert proc.stderr == ""  # no BrokenPipeError traceback, no "Exception ignored" at exit
    assert proc.returncode == 141  # 128 + SIGPIPE, as a shell reports `yes | head`'s yes


def test_python_m_scorers_freezes_its_start_up_and_collects_during_the_run(tmp_path):
    data = write(tmp_path, "rows.csv", "input,output,ground_truth\nq,abc,abd\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SCORER_STUDIO_"))}
    proc = subprocess.run(
        [sys.executable, "-c", _GC_DURING_THE_RUN, "run", str(data), "--scorer", "textual-difference"],
        cwd=tmp_path,
        env={**env, "HOME": str(tmp_path), "PYTHONPATH": str(REPO), "SCORER_STUDIO_DB": str(tmp_path / "s.db")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = proc.stdout.splitlines()
    assert lines[-1] == "exit 0", proc.stderr
    assert "collector on True datasets frozen True" in lines
    # Called in-process (tests, other programs), the command line leaves the host's collector alone.
    assert main(["run", str(data), "--scorer", "textual-difference", "--db", str(tmp_path / "s.db")]) == 0
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_python_m_scorers_run_in_a_subprocess(fake_openai, tmp_path):
    fake_openai.responder = lambda body: Reply.json(GOOD)
    data, _ = ifeval_copy(tmp_path, 10)
    out_path = tmp_path / "results.csv"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "scorers",
            "run",
            str(data),
            "--scorer",
            "prompt-alignment",
            "--scorer",
            "textual-difference",
            "--output",
            str(out_path),
            "--fail-under",
            "prompt-alignment=0.8",
        ],
        cwd=tmp_path,
        env=_child_env(fake_openai, tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert summary_row(proc.stdout, "prompt-alignment") == ["10", "0", "0.840", "0.840", "0.000", "0.840", "0.840"]
    assert "ok   prompt-alignment: mean 0.8400 >= threshold 0.8" in proc.stdout
    assert "10/10 items" in proc.stderr
    assert KEY not in proc.stdout + proc.stderr
    assert fake_openai.chat_call_count == 10
    assert len(list(csv.DictReader(out_path.open(encoding="utf-8", newline="")))) == 20


def test_a_second_ctrl_c_leaves_a_run_another_process_took_as_that_process_recorded_it(
    env, tmp_path, capsys, monkeypatch
):
    data = write(tmp_path, "small.csv", SMALL_CSV)

    def taken_then_interrupted(items, scorers, *, store, run_id, **kwargs):
        # This process was taken as dead (e.g. suspended) and another one resumed the run; then Ctrl-C twice.
        with store.transaction() as db:
            db.execute("UPDATE runs SET owner = ? WHERE id = ?", ("other-host:4242", run_id))
        raise KeyboardInterrupt

    monkeypatch.setattr("scorers.cli.run_evals", taken_then_interrupted)
    code, _, err = run_cli(capsys, "run", str(data), "--scorer", "textual-difference")
    assert code == 130
    assert "its status left alone: it is no longer this process's" in err and "resume it with" not in err
    store = Store(tmp_path / "studio.db")  # SCORER_STUDIO_DB
    (run,) = store.list_runs()
    assert (run["status"], run["owner"]) == ("running", "other-host:4242")  # not cancelled over the other's run
    store.close()


def test_ctrl_c_stops_the_run_exits_130_and_resume_finishes_it(fake_openai, tmp_path, capsys, monkeypatch):
    data, rows = ifeval_copy(tmp_path, 10)
    child: dict[str, subprocess.Popen] = {}

    def responder(body):
        if len(fake_openai.chat_records()) == 3:  # the third judge call: press Ctrl-C while it is in flight
            child["proc"].send_signal(signal.SIGINT)
            time.sleep(0.5)
        return Reply.json(GOOD)

    fake_openai.responder = responder
    proc = subprocess.Popen(
        [sys.executable, "-m", "scorers", "run", str(data), "--scorer", "prompt-alignment", "--concurrency", "1"],
        cwd=tmp_path,
        env=_child_env(fake_openai, tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    child["proc"] = proc
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "Stopping" in stderr
    run_id = stdout.split("Run id: ", 1)[1].split()[0]
    assert f"python -m scorers run --resume {run_id}" in stderr
    assert fake_openai.chat_call_count == 3  # nothing started after Ctrl-C
    assert summary_row(stdout, "prompt-alignment")[:2] == ["3", "0"]

    for name, value in _child_env(fake_openai, tmp_path).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    fake_openai.responder = lambda body: Reply.json(GOOD)
    code, out, _ = run_cli(capsys, "run", "--resume", run_id)
    assert code == 0
    assert fake_openai.chat_call_count == 10  # only the 7 remaining items were judged
    resumed = "\n".join(fake_openai.prompt_text(i) for i in range(3, 10))
    assert all(f"<response>\n{r['response']}\n</response>" in resumed for r in rows[3:])
    assert summary_row(out, "prompt-alignment")[:2] == ["10", "0"]


def test_a_run_killed_with_sigkill_is_shown_interrupted_at_once_and_resumes_without_scoring_anything_twice(
    fake_openai, tmp_path, capsys, monkeypatch
):
    data, rows = ifeval_copy(tmp_path, 20)
    fake_openai.responder = lambda body: Reply.json(GOOD).delayed(0.2)  # 20 items one at a time: 4 s
    db = tmp_path / "studio.db"
    argv = [sys.executable, "-m", "scorers", "run", str(data), "--scorer", "prompt-alignment", "--concurrency", "1"]
    child = subprocess.Popen(
        argv,
        cwd=tmp_path,
        env=_child_env(fake_openai, tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    kill_once_stored(child, db, 3, within_s=120)  # `kill -9` part-way
    assert child.returncode == -signal.SIGKILL
    for name, value in _child_env(fake_openai, tmp_path).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    store = Store(db)
    (run,) = store.list_runs()
    assert run["status"] == "running"  # as the killed process left it
    finished = len(store.results(run["id"]))
    store.close()

    # Without any restart: `runs` sees its process is gone (same host, its pid) and says so.
    code, out, _ = run_cli(capsys, "runs")
    assert code == 0 and "Interrupted" in out and "Running" not in out
    store = Store(db)
    run = store.get_run(run["id"])
    assert run["status"] == "interrupted"
    assert run["stop_reason"] == f"The process scoring it ({run['owner']}) is no longer running."
    store.close()

    calls = fake_openai.chat_call_count
    fake_openai.responder = lambda body: Reply.json(GOOD)
    code, out, _ = run_cli(capsys, "run", "--resume", run["id"])
    assert code == 0 and summary_row(out, "prompt-alignment")[:2] == ["20", "0"]
    # Only the items without a stored outcome were judged (those in flight at the kill too, once each).
    assert fake_openai.chat_call_count - calls == 20 - finished
    store = Store(db)
    assert store.get_run(run["id"])["status"] == "completed" and len(store.results(run["id"])) == 20
    store.close()


def test_a_run_being_scored_by_another_live_process_is_not_resumed(env, tmp_path, capsys):
    store = Store(tmp_path / "studio.db")
    run_id = store.create_run(
        dataset_name="d.csv",
        items=[("q1", {"input": "q", "output": "a"}, {})],
        scorers=[{"id": "textual-difference", "name": "Textual difference", "options": {}}],
        judge=None,
    )
    with store.transaction() as db:  # scored on another host, whose heartbeat is 5 s old
        db.execute(
            "UPDATE runs SET owner = 'other-host:4242', heartbeat_at = ? WHERE id = ?", (time.time() - 5, run_id)
        )
    store.close()
    code, _, err = run_cli(capsys, "run", "--resume", run_id, "--db", "studio.db")
    assert code == 2
    assert f"run {run_id} is being scored by another process (other-host:4242)" in err
    code, out, _ = run_cli(capsys, "runs", "--db", "studio.db")
    assert "Running" in out
    assert Store(tmp_path / "studio.db").results(run_id) == []


_IMPORTED = """
import json, sys
sys.path.insert(0, sys.argv[1])
from scorers.cli import main
code = main(sys.argv[2:])
heavy = ("streamlit", "plotly", "pandas", "pyarrow")
print(json.dumps({"code": code, "imported": sorted(m for m in heavy if m in sys.modules)}))
"""


def _imports_of(tmp_path: Path, *argv: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["SCORER_STUDIO_DB"] = str(tmp_path / "imports.db")
    out = subprocess.run(
        [sys.executable, "-c", _IMPORTED, str(REPO), *argv], capture_output=True, text=True, env=env, check=False
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_command_line_imports_no_dashboard_library_and_pandas_only_for_a_file(tmp_path):
    # Listing runs reads no file: none of the heavy libraries is imported.
    assert _imports_of(tmp_path, "runs") == {"code": 0, "imported": []}
    # Scoring a JSON Lines file: read into plain columns, without pandas; never Streamlit or Plotly.
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps({"input": "Say hi", "output": "hi", "ground_truth": "hi"}) + "\n", encoding="utf-8")
    assert _imports_of(tmp_path, "run", str(data), "--scorer", "textual-difference", "--yes") == {
        "code": 0,
        "imported": [],
    }
    # A null pandas would turn into NaN: pandas (which brings pyarrow) reads the file.
    data.write_text(json.dumps({"input": "Say hi", "output": "hi", "ground_truth": "hi", "note": None}) + "\n")
    scored = _imports_of(tmp_path, "run", str(data), "--scorer", "textual-difference", "--yes")
    assert scored["code"] == 0
    assert "streamlit" not in scored["imported"] and "plotly" not in scored["imported"]
    assert "pandas" in scored["imported"]


def test_json_values_that_are_not_text_are_named_before_anything_is_scored(env, tmp_path, capsys):
    data = write(
        tmp_path,
        "answers.jsonl",
        '{"prompt": "Add 2 and 2", "response": "4", "reference": "4"}\n'
        '{"prompt": "Add 40 and 2", "response": 42, "reference": 42}\n'  # line 2: numbers
        '{"prompt": "Is 7 prime?", "response": "yes", "reference": true}\n',  # line 3: a boolean
    )
    code, out, err = run_cli(capsys, "run", str(data), "--scorer", "textual-difference", "--yes")
    assert code == 0, err
    tail = "each is scored as its text (numbers as written, true/false, lists and objects as JSON)."
    # response: line 2's 42 only; reference (the ground truth): 42 on line 2, true on line 3.
    response = f"Note: Field 'response' (the response) is not text in 1 row (1 number), the first on line 2: {tail}"
    reference = (
        "Note: Field 'reference' (the ground truth) is not text in 2 rows (1 number, 1 boolean), the first on "
        f"line 2: {tail}"
    )
    assert response in err and reference in err
    assert err.index(reference) < err.index("Estimate: ")  # said before anything is scored


def test_output_csv_says_which_cells_a_spreadsheet_cannot_hold(env, tmp_path, capsys):
    # Response b is 40,000 characters, over a spreadsheet cell's 32,767: one cell (one scorer), written whole.
    data = write(tmp_path, "long.csv", "id,prompt,response\na,Say hi.,hi\nb,Say a lot.," + "x" * 40_000 + "\n")
    out = tmp_path / "results.csv"
    argv = ["run", str(data), "--scorer", "textual-difference", "--output", str(out), "--yes", "--db", "s.db"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert (
        "1 cell of the spreadsheet CSV is longer than the 32,767 characters a spreadsheet cell holds (output: 1). "
        "The file keeps it whole, but Excel cuts or breaks it on opening: for the full texts, use the plain CSV, "
        "JSON Lines or Parquet."
    ) in err
    csv.field_size_limit(10**6)
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"), newline="")))
    assert len(rows[1]["output"]) == 40_000


@pytest.mark.parametrize(
    ("flags", "sentence"),
    [
        (
            ["--output-col", "response", "--ground-truth-col", "response"],
            "Column 'response' is used as the output (--output-col) and as the ground_truth (--ground-truth-col).",
        ),
        (
            ["--input-col", "prompt", "--output-col", "prompt"],
            "Column 'prompt' is used as the input (--input-col) and as the output (--output-col).",
        ),
    ],
)
def test_one_column_mapped_to_two_roles_is_refused(tmp_path, capsys, flags, sentence):
    # Textual difference of a response with itself scored 1.000 (mean 1.000) without a word.
    data = tmp_path / "awk.csv"
    data.write_text("prompt,response\nSay hi.,hello\n")
    db = tmp_path / "s.db"
    argv = ["run", str(data), "--scorer", "textual-difference", *flags, "--yes", "--db", str(db)]
    code, _, err = run_cli(capsys, *argv)
    assert code == 2
    assert f"error: {sentence} Each role needs its own column: map another one with its flag." in err
    assert not db.exists() or Store(db).list_runs() == []


def test_a_blank_response_is_announced_before_the_run_as_on_the_batch_page(env, tmp_path, capsys):
    # Row 2's response cell is empty: prompt alignment does not score it (missing_input); textual difference
    # compares "" with "Say bye." and scores it 0 by its formula (one empty text → 0), a 0 in its mean.
    data = write(tmp_path, "blank.csv", "prompt,response\nSay hi.,hi\nSay bye.,\n")
    code, out, err = run_cli(
        capsys, "run", str(data), "--scorer", "prompt-alignment", "--scorer", "textual-difference", "--yes"
    )
    assert code == 3, err  # an item not scored
    note = (
        "Note: 1 row has a blank response. Textual difference scores each 0 by its formula (an empty text against a "
        "non-empty one is 0), and those 0s count in its mean. Prompt alignment will not score them (not scored: "
        "Missing input). If these rows have no answer rather than an empty one, leave them out of the file."
    )
    assert note in err
    assert env.chat_call_count == 1  # the blank row was not sent to the judge
    assert summary_row(out, "textual-difference")[:2] == ["2", "0"]


def test_a_blank_response_is_announced_for_prompt_alignment_alone(env, tmp_path, capsys):
    # Row 2's response cell is empty and prompt alignment alone is chosen: it does not score the row (missing_input),
    # which the note said only when textual difference was chosen too.
    data = write(tmp_path, "blank.csv", "prompt,response\nSay hi.,hi\nSay bye.,\n")
    code, _, err = run_cli(capsys, "run", str(data), "--scorer", "prompt-alignment", "--yes")
    assert code == 3, err  # an item not scored
    assert (
        "Note: 1 row has a blank response. Prompt alignment will not score them (not scored: Missing input). If these "
        "rows have no answer rather than an empty one, leave them out of the file."
    ) in err
    assert env.chat_call_count == 1  # the blank row was not sent to the judge


def test_the_outcomes_not_listed_are_said_to_be_where_they_are(env, tmp_path, capsys):
    # 25 rows without a response: 25 missing_input outcomes, the first 20 listed. Without --output the rest are in
    # the store only (and the export command writes them); with --output, in that file too.
    data = write(
        tmp_path,
        "rows.jsonl",
        "".join(json.dumps({"id": f"r{i}", "prompt": "q", "response": None}) + "\n" for i in range(25)),
    )
    argv = ["run", str(data), "--scorer", "textual-difference", "--yes", "--db", "s.db"]
    code, out, err = run_cli(capsys, *argv)
    run_id = re.search(r"Run id: (\w+)", out).group(1)
    assert (
        f"  ... and 5 more (all are in the store; python -m scorers export {run_id} --db s.db --output results.csv "
        "writes them to a file)" in out
    )
    assert "--output and" not in out
    code, out, err = run_cli(capsys, *argv, "--output", "out.csv")
    assert "  ... and 5 more (all are in out.csv and the store)" in out
