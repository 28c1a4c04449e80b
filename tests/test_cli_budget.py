"""CLI parity with the dashboard: budget caps, the judge's price and max tokens, context and tool-call columns,
the judge chosen on --resume, and the cache shown in the totals. Calls are counted at the fake server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, Reply
from judge_data import single_analysis

from scorers import Store
from scorers.cli import EXIT_OK, EXIT_PAUSED, EXIT_USAGE, build_parser, main

GOOD = single_analysis(0.9, 0.8, 0.7, 1.0)
KEY = "test-key"


@pytest.fixture
def env(monkeypatch, tmp_path, fake_judge):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    fake_judge.responder = lambda body: Reply.json(GOOD)
    return fake_judge


def dataset(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "rows.csv"
    path.write_text("id,prompt,response\n" + "".join(f"r{i},Question {i}?,Answer {i}.\n" for i in range(n)))
    return path


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert KEY not in out + err
    return code, out, err


def run_id_of(out: str) -> str:
    return re.search(r"Run id: (\w+)", out).group(1) if "Run id:" in out else None


def test_help_documents_the_new_flags():
    text = build_parser()._subparsers._group_actions[0].choices["run"].format_help()
    for flag in (
        "--max-judge-calls",
        "--max-total-tokens",
        "--max-cost",
        "--price",
        "--judge-max-tokens",
        "--timeout",
        "--judge {run,current}",
        "--context-col",
        "--tool-calls-col",
        "--max-consecutive-failures",
        "--no-cache",
    ):
        assert flag in text, flag


def test_the_call_caps_help_names_the_judges_max_retries_not_a_fixed_count():
    action = next(
        a
        for a in build_parser()._subparsers._group_actions[0].choices["run"]._actions
        if "--max-judge-calls" in a.option_strings
    )
    assert "up to the judge's max_retries times, 3 by default, a resumed run's judge's as recorded" in action.help
    assert "up to 3 times" not in action.help


def test_max_judge_calls_stops_at_the_cap_and_resume_with_a_higher_cap_goes_on(env: FakeOpenAI, tmp_path, capsys):
    data = dataset(tmp_path, 10)
    code, out, err = run_cli(
        capsys, "run", str(data), "--scorer", "prompt-alignment", "--max-judge-calls", "4", "--yes", "--db", "s.db"
    )
    assert code == EXIT_PAUSED
    assert env.chat_call_count == 4  # never past the cap
    assert "Stopped at the budget: the cap of 4 judge calls is reached" in err
    run_id = re.search(r"Run (\w+): paused at the budget cap", err).group(1)
    # The flag of the cap reached, not another cap's, in the stop reason's resume command, completed with --db.
    assert f"(python -m scorers run --resume {run_id} --db s.db --max-judge-calls N; in History: Resume, Cost" in err
    assert "--max-cost USD" not in err
    store = Store(tmp_path / "s.db")
    assert store.get_run(run_id)["config"]["budget"]["max_judge_calls"] == 4
    store.close()

    code, out, err = run_cli(capsys, "run", "--resume", run_id, "--db", "s.db", "--yes")
    assert code == EXIT_PAUSED and env.chat_call_count == 4  # the stored cap is spent: nothing sent
    code, out, err = run_cli(capsys, "run", "--resume", run_id, "--db", "s.db", "--yes", "--max-judge-calls", "10")
    assert code == EXIT_OK and env.chat_call_count == 10


def test_a_paused_run_prints_its_scores_and_usage_then_the_reason_and_the_resume_command_once(
    env: FakeOpenAI, tmp_path, capsys
):
    env.responder = lambda body: Reply.json(GOOD, usage={"prompt_tokens": 100, "completion_tokens": 10})
    data = dataset(tmp_path, 10)
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--yes", "--db", "s.db", "--concurrency", "1"]
    code, out, err = run_cli(capsys, *argv, "--model", "model-a", "--price", "1,2", "--max-judge-calls", "4")
    assert code == EXIT_PAUSED and env.chat_call_count == 4
    run_id = re.search(
        r"Run (\w+): paused at the budget cap \(the next judge call could have passed it\), with 4 of 10 outcomes\.",
        err,
    ).group(1)
    # The summary of what was done, as for a completed run: 4 scored, 6 left; 4 calls of 100 + 10 tokens at
    # $1 / $2 per million: 4 × (100 × 1 + 10 × 2) / 1e6 = $0.00048.
    assert re.search(r"prompt-alignment +4 +0 ", out)
    assert "Not scored yet: 6 item × scorer outcome(s)" in out
    assert "Judge usage: 4 requests (4 answered), 400 prompt + 40 completion tokens, cost $0.00048;" in out
    assert f"Run id: {run_id}" in out
    # Then the reason, with the one resume command (the run's --db and the flag of the cap reached).
    assert err.count("python -m scorers run --resume") == 1
    assert f"python -m scorers run --resume {run_id} --db s.db --max-judge-calls N;" in err


def test_none_removes_a_runs_cap_on_resume(env: FakeOpenAI, tmp_path, capsys):
    data = dataset(tmp_path, 6)
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--yes", "--db", "s.db", "--price", "1,1"]
    code, out, err = run_cli(capsys, *argv, "--max-judge-calls", "2", "--max-cost", "5")
    assert code == EXIT_PAUSED and env.chat_call_count == 2
    run_id = re.search(r"Run (\w+): paused at the budget cap", err).group(1)
    # The call cap removed, the cost cap kept: the 4 other items are scored.
    code, out, err = run_cli(capsys, "run", "--resume", run_id, "--db", "s.db", "--yes", "--max-judge-calls", "none")
    assert code == EXIT_OK and env.chat_call_count == 6
    assert "the caps: at most $5.00" in out + err
    store = Store(tmp_path / "s.db")
    assert store.get_run(run_id)["config"]["budget"] == {
        "max_judge_calls": None,
        "max_total_tokens": None,
        "max_cost_usd": 5.0,
    }
    store.close()
    # Anything else is still refused, and the message says none is allowed.
    assert main(["run", str(data), "--max-cost", "0"]) == EXIT_USAGE
    assert "expected a finite number > 0, got '0' (or none, for no cap)" in capsys.readouterr().err


def test_max_cost_needs_a_price_for_an_unknown_model(env: FakeOpenAI, tmp_path, capsys):
    data = dataset(tmp_path, 10)
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--model", "fake-judge", "--yes", "--db", "s.db"]
    code, out, err = run_cli(capsys, *argv, "--max-cost", "0.01")
    assert code == EXIT_USAGE and "--max-cost needs the judge's price" in err
    assert env.chat_call_count == 0
    # At $1,000 per million tokens ($0.001 a token) a $6 cap stops the run before its 10 calls.
    code, out, err = run_cli(capsys, *argv, "--max-cost", "6", "--price", "1000,1000", "--judge-max-tokens", "100")
    assert code == EXIT_PAUSED and 1 <= env.chat_call_count < 10
    assert all(body.get("max_completion_tokens") == 100 for body in env.chat_requests())
    store = Store(tmp_path / "s.db")
    (run,) = [r for r in store.list_runs() if r["status"] == "budget_reached"]
    spent = sum(r["prompt_tokens"] + r["completion_tokens"] for r in store.results(run["id"]))
    store.close()
    assert 0 < spent * 0.001 <= 6.0


def test_a_cost_cap_below_a_cent_is_printed_with_its_digits(env: FakeOpenAI, tmp_path, capsys):
    data = dataset(tmp_path, 1)
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--yes", "--db", "s.db", "--price", "0,1"]
    code, out, err = run_cli(capsys, *argv, "--judge-max-tokens", "300", "--max-cost", "0.001")  # a call holds $0.0003
    # $0.001 is one thousandth of a dollar: "$0.00" would read as nothing allowed.
    assert "Budget: at most $0.001 for the whole run." in out + err


def test_context_and_tool_call_columns(env: FakeOpenAI, tmp_path, capsys):
    path = tmp_path / "ctx.jsonl"
    row = {
        "q": "What is the capital of France?",
        "a": "Paris.",
        "passages": ["Paris is the capital of France."],
        "calls": ["search"],
    }
    path.write_text(json.dumps(row) + "\n")
    code, out, err = run_cli(
        capsys,
        "run",
        str(path),
        "--scorer",
        "textual-difference",
        "--input-col",
        "q",
        "--output-col",
        "a",
        "--context-col",
        "passages",
        "--tool-calls-col",
        "calls",
        "--yes",
        "--db",
        "s.db",
    )
    assert "context = 'passages' (--context-col)" in err and "tool_calls = 'calls' (--tool-calls-col)" in err
    store = Store(tmp_path / "s.db")
    (run,) = store.list_runs()
    (item,) = store.items(run["id"])
    store.close()
    assert item["payload"]["context"] == ["Paris is the capital of France."]
    assert item["payload"]["tool_calls"]  # the column's calls, in the run payload


def test_resume_with_the_current_judge_reaches_the_new_endpoint(env: FakeOpenAI, tmp_path, capsys, monkeypatch):
    data = dataset(tmp_path, 4)
    wrong = "http://127.0.0.1:9/v1"  # nothing listens there
    code, out, err = run_cli(
        capsys, "run", str(data), "--scorer", "prompt-alignment", "--base-url", wrong, "--yes", "--db", "s.db"
    )
    assert code == EXIT_PAUSED and "could not be used for the first item" in err
    run_id = re.search(r"Run (\w+): paused", err).group(1)
    # --judge run (the default) keeps the stored, wrong endpoint; --judge current takes the environment's.
    code, out, err = run_cli(capsys, "run", "--resume", run_id, "--db", "s.db", "--yes")
    assert code == EXIT_PAUSED and env.chat_call_count == 0
    code, out, err = run_cli(capsys, "run", "--resume", run_id, "--db", "s.db", "--yes", "--judge", "current")
    assert code == EXIT_OK and env.chat_call_count == 4
    store = Store(tmp_path / "s.db")
    results = store.results(run_id)
    store.close()
    assert {r["judge"]["baseUrl"] for r in results} == {env.base_url}  # recorded per item, never the key


def test_a_cached_rerun_is_marked_cached_and_costs_nothing(env: FakeOpenAI, tmp_path, capsys):
    data = dataset(tmp_path, 3)
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--yes", "--db", "s.db"]
    code, out, _ = run_cli(capsys, *argv)
    assert code == EXIT_OK and env.chat_call_count == 3
    assert "0 outcome(s) served from the cache" in out
    code, out, err = run_cli(capsys, *argv)
    assert code == EXIT_OK and env.chat_call_count == 3  # nothing new sent
    # The estimate said so before the run: every item looked up in the cache, none left to pay for.
    assert "3 item × scorer outcome(s) are answered from the judge cache: free, not in the estimate." in err
    assert "Estimate: no judge calls, cost $0.00." in err
    assert (
        "Judge usage: 0 requests (0 answered), 0 prompt + 0 completion tokens, cost $0.00; 3 outcome(s) served from the cache"
        in out
    )
    code, out, _ = run_cli(capsys, *argv, "--no-cache")
    assert env.chat_call_count == 6


def test_the_estimate_uses_the_price_given(env: FakeOpenAI, tmp_path, capsys):
    data = dataset(tmp_path, 3)
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--yes", "--db", "s.db", "--model", "no-such-model"]
    code, _, err = run_cli(capsys, *argv)
    assert code == EXIT_OK and "cost unknown (no list price for model 'no-such-model'; set one with --price)" in err
    code, _, err = run_cli(capsys, *argv, "--price", "1,2", "--no-cache")
    assert code == EXIT_OK
    # 3 calls at 700 expected completion tokens each, 2 USD per million: 0.0042 USD, plus the prompts at 1 USD.
    (line,) = [ln for ln in err.splitlines() if ln.startswith("Estimate: ")]
    prompt = int(re.search(r"~([\d,]+) prompt", line).group(1).replace(",", ""))
    assert line.endswith(
        f"about ${prompt * 1 / 1e6 + 3 * 700 * 2 / 1e6:.10f}".rstrip("0") + " at the price set with --price."
    )


def test_the_estimate_takes_no_reply_longer_than_the_judges_max_tokens(env: FakeOpenAI, tmp_path, capsys):
    data = dataset(tmp_path, 3)
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--yes", "--db", "s.db", "--no-cache"]
    # Prompt alignment's typical reply is 700 tokens: 3 calls, 2,100 completion tokens; at most 100 each: 300.
    for flags, completion in (
        ((), "2,100"),
        (("--judge-max-tokens", "100"), "300"),
        (("--judge-max-tokens", "5000"), "2,100"),
    ):
        code, _, err = run_cli(capsys, *argv, *flags)
        assert code == EXIT_OK
        (line,) = [ln for ln in err.splitlines() if ln.startswith("Estimate: ")]
        assert f"~{completion} completion tokens" in line, line


def test_a_cost_under_a_hundredth_of_a_cent_is_printed_in_full_not_as_0_0000(env: FakeOpenAI, tmp_path, capsys):
    env.responder = lambda body: Reply.json(GOOD, usage={"prompt_tokens": 100, "completion_tokens": 10})
    data = dataset(tmp_path, 3)
    code, out, err = run_cli(
        capsys, "run", str(data), "--scorer", "prompt-alignment", "--yes", "--db", "s.db", "--price", "0.1,0.2"
    )
    assert code == EXIT_OK
    # 3 calls × (100 prompt tokens × $0.1 + 10 completion tokens × $0.2) per million = 3 × 12 / 1e6 = $0.000036
    assert "cost $0.000036;" in out and "$0.0000;" not in out
    # The estimate: (prompt tokens × 0.1 + 3 calls × 700 completion tokens × 0.2) / 1e6; 420 / 1e6 alone is $0.00042,
    # so its text starts with $0.0004 and has more digits than the four a "$0.0004" would give.
    (line,) = [ln for ln in err.splitlines() if ln.startswith("Estimate: ")]
    prompt = int(re.search(r"~([\d,]+) prompt", line).group(1).replace(",", ""))
    cost = (prompt * 0.1 + 3 * 700 * 0.2) / 1e6
    assert f"about ${cost:.10f}".rstrip("0") + " at the price set with --price." in line


def test_the_usage_line_counts_as_judged_only_the_outcomes_the_judge_made(env: FakeOpenAI, tmp_path, capsys):
    # r0 and r1 are judged; r2 has no response (missing_input: no judge is asked).
    data = tmp_path / "rows.csv"
    data.write_text("id,prompt,response\nr0,Question 0?,Answer 0.\nr1,Question 1?,Answer 1.\nr2,Question 2?,\n")
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--yes", "--db", "s.db", "--model", "no-such-model"]
    code, out, err = run_cli(capsys, *argv)
    assert env.chat_call_count == 2
    (usage,) = [ln for ln in out.splitlines() if ln.startswith("Judge usage: ")]
    # 2 outcomes made by the judge; the missing input is not one of them.
    assert "cost unknown for 2 outcomes judged by no-such-model (no list price, and no price set for it);" in usage
    # Again: r0 and r1 come from the judge cache (no call, nothing spent), r2 is still a missing input.
    code, out, err = run_cli(capsys, *argv)
    assert env.chat_call_count == 2
    (usage,) = [ln for ln in out.splitlines() if ln.startswith("Judge usage: ")]
    assert usage == (
        "Judge usage: 0 requests (0 answered), 0 prompt + 0 completion tokens, cost $0.00; 2 outcome(s) served from the cache (free)."
    )
    # A new row beside the cached ones: only its outcome was made by the judge.
    data.write_text(data.read_text() + "r3,Question 3?,Answer 3.\n")
    code, out, err = run_cli(capsys, *argv)
    assert env.chat_call_count == 3
    (usage,) = [ln for ln in out.splitlines() if ln.startswith("Judge usage: ")]
    assert (
        "cost unknown for 1 outcome judged by no-such-model" in usage and "2 outcome(s) served from the cache" in usage
    )


def test_a_price_of_0_is_a_free_model_and_a_negative_price_is_refused_clearly(env: FakeOpenAI, tmp_path, capsys):
    data = dataset(tmp_path, 2)
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--yes", "--db", "s.db", "--model", "llama3.1"]
    for given, negative in (("-1,0", "input -1"), ("0.1,-0.5", "output -0.5"), ("-1,-2", "input -1, output -2")):
        code, out, err = run_cli(capsys, *argv, "--price", given)
        assert code == EXIT_USAGE and env.chat_call_count == 0
        assert (
            f"argument --price: a price per million tokens cannot be negative ({negative} in {given!r}); "
            "0 is a free model, e.g. --price 0,0" in err
        )
    # A free local model: 0 per million tokens, so the estimate and the run cost $0.00 (not unknown).
    code, out, err = run_cli(capsys, *argv, "--price", "0,0")
    assert code == EXIT_OK and env.chat_call_count == 2
    assert "about $0.00 at the price set with --price." in err
    assert "cost $0.00;" in out


def test_the_runs_price_is_for_its_own_judge_model_on_a_resume_as_on_display(env: FakeOpenAI, tmp_path, capsys):
    from scorers.runs.judges import stored_run_cost

    env.responder = lambda body: Reply.json(GOOD, usage={"prompt_tokens": 100, "completion_tokens": 10})
    data = dataset(tmp_path, 4)
    base = ["--yes", "--db", "s.db", "--concurrency", "1"]
    # Started with model-a at $1 / $2 per million tokens, paused after 2 judge calls.
    code, out, err = run_cli(
        capsys,
        "run",
        str(data),
        "--scorer",
        "prompt-alignment",
        *base,
        "--model",
        "model-a",
        "--price",
        "1,2",
        "--max-judge-calls",
        "2",
    )
    assert code == EXIT_PAUSED and env.chat_call_count == 2
    run_id = re.search(r"Run (\w+): paused", err).group(1)
    # Resumed with model-b (no list price) and no --price: the run's price stays model-a's.
    code, out, err = run_cli(
        capsys, "run", "--resume", run_id, *base, "--judge", "current", "--model", "model-b", "--max-judge-calls", "4"
    )
    assert code == EXIT_OK and env.chat_call_count == 4
    assert "cost unknown (no list price for model 'model-b'; set one with --price)." in err
    # model-a's 2 outcomes at its price: 2 × (100 × 1 + 10 × 2) / 1e6 = $0.00024; model-b's 2 outcomes unknown.
    assert (
        "cost $0.00024 for 2 outcome(s), unknown for 2 outcomes judged by model-b (no list price, and no price set "
        "for it);" in out
    )
    store = Store(tmp_path / "s.db")
    cost = stored_run_cost(store, store.get_run(run_id))  # what History and the report show: the same rule
    store.close()
    assert (round(cost.usd, 10), cost.priced, cost.unpriced) == (0.00024, 2, {"model-b": 2})


def test_a_resume_given_a_price_and_a_cap_stores_them_so_the_cli_history_and_the_report_agree(
    env: FakeOpenAI, tmp_path, capsys
):
    from scorers.analysis.report import run_report
    from scorers.runs.judges import stored_run_cost

    env.responder = lambda body: Reply.json(GOOD, usage={"prompt_tokens": 100, "completion_tokens": 10})
    data = dataset(tmp_path, 4)
    base = ["--yes", "--db", "s.db", "--concurrency", "1"]
    code, out, err = run_cli(
        capsys, "run", str(data), "--scorer", "prompt-alignment", *base, "--model", "model-a", "--price", "1,2",
        "--max-judge-calls", "2",
    )  # fmt: skip
    assert code == EXIT_PAUSED and env.chat_call_count == 2
    run_id = re.search(r"Run (\w+): paused", err).group(1)
    # Resumed with model-b (no list price) at $3 / $4 per million tokens and a cost cap of $1: both are stored.
    code, out, err = run_cli(
        capsys, "run", "--resume", run_id, *base, "--judge", "current", "--model", "model-b", "--price", "3,4",
        "--max-judge-calls", "4", "--max-cost", "1",
    )  # fmt: skip
    assert code == EXIT_OK and env.chat_call_count == 4
    assert (
        f"Stored with run {run_id} (its cost in History and the report, and a later resume, use them): the price "
        "3,4 USD per million input,output tokens for model-b; the caps: at most 4 judge calls, $1.00." in err
    )
    # model-a's 2 outcomes at $1 / $2: 2 × (100 × 1 + 10 × 2) / 1e6 = $0.00024; model-b's 2 at $3 / $4:
    # 2 × (100 × 3 + 10 × 4) / 1e6 = $0.00068; in all $0.00092.
    assert "cost $0.00092;" in out
    store = Store(tmp_path / "s.db")
    run = store.get_run(run_id)
    assert run["config"]["price"] == [1.0, 2.0] and run["config"]["prices"] == {"model-b": [3.0, 4.0]}
    assert run["config"]["budget"] == {"max_judge_calls": 4, "max_total_tokens": None, "max_cost_usd": 1.0}
    cost = stored_run_cost(store, run)  # what History's Cost shows
    html = run_report(store, run_id)
    store.close()
    assert (round(cost.usd, 10), cost.priced, cost.unpriced) == (0.00092, 4, {})
    assert "$0.00092" in html
    # A later resume without --price keeps model-b's stored price: nothing new is stored, nothing said.
    code, out, err = run_cli(
        capsys, "run", "--resume", run_id, *base, "--judge", "current", "--model", "model-b", "--retry-failed"
    )
    assert code == EXIT_OK and "Stored with run" not in err


def test_a_cost_cap_holds_only_the_judge_calls_and_says_how_to_raise_it(env: FakeOpenAI, tmp_path, capsys):
    # Input tokens free, $1 per million output tokens, at most 300 reply tokens: a call reserves $0.0003; replies of
    # 100 tokens cost $0.0001. A $0.0005 cap admits a call while spent + $0.0003 <= $0.0005: 3 calls ($0.0003).
    env.responder = lambda body: Reply.json(GOOD, usage={"prompt_tokens": 100, "completion_tokens": 100})
    data = dataset(tmp_path, 5)
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--scorer", "textual-difference", "--yes", "--db", "s.db"]
    code, out, err = run_cli(
        capsys, *argv, "--no-cache", "--price", "0,1", "--judge-max-tokens", "300", "--max-cost", "0.0005"
    )
    assert code == EXIT_PAUSED and env.chat_call_count == 3
    assert "The scorers that call no judge scored every item" in err
    run_id = re.search(r"Run (\w+): paused at the budget cap", err).group(1)
    assert f"python -m scorers run --resume {run_id} --db s.db --max-cost USD" in err  # the cap can be raised
    store = Store(tmp_path / "s.db")
    rows = store.results(run_id)
    store.close()
    assert (
        sorted((r["scorer_id"], r["status"]) for r in rows)
        == [("prompt-alignment", "scored")] * 3 + [("textual-difference", "scored")] * 5
    )
    # A higher cap on the resume: the 2 other judge calls fit in $100.
    code, out, err = run_cli(capsys, "run", "--resume", run_id, "--db", "s.db", "--yes", "--max-cost", "100")
    assert code == EXIT_OK and env.chat_call_count == 5


def test_a_cost_cap_that_cannot_hold_one_judge_call_is_refused_before_the_run_is_created(
    env: FakeOpenAI, tmp_path, capsys
):
    # $1 per million output tokens, input free, at most 300 reply tokens: the first call reserves 300 × 1e-6 =
    # $0.0003 before it is sent, more than a $0.0002 cap: no call could ever be sent.
    data = dataset(tmp_path, 5)
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--scorer", "textual-difference", "--yes", "--db", "s.db"]
    code, out, err = run_cli(capsys, *argv, "--price", "0,1", "--judge-max-tokens", "300", "--max-cost", "0.0002")
    assert code == EXIT_USAGE and env.chat_call_count == 0
    assert (
        "error: The cost cap of $0.0002 cannot hold one judge call: the run reserves a call's upper bound before "
        "sending it, $0.0003 for the first" in err
    )
    assert "Raise the cap to at least $0.0003 (--max-cost USD)" in err and "(--judge-max-tokens N)" in err
    assert "Nothing was sent." in err and "Run id" not in out
    store = Store(tmp_path / "s.db")
    assert store.list_runs() == []  # no run created
    store.close()
    # Without a max output tokens, a call reserves 4,096 reply tokens: at gpt-4o-mini's list price
    # ($0.60 per million output tokens) more than 4,096 × 0.6e-6 = $0.0024576, past a $0.001 cap.
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--model", "gpt-4o-mini", "--yes", "--db", "s.db"]
    code, out, err = run_cli(capsys, *argv, "--max-cost", "0.001")
    assert code == EXIT_USAGE and env.chat_call_count == 0
    assert "error: The cost cap of $0.001 cannot hold one judge call" in err and "4,096 without one" in err


def test_a_resume_whose_cost_cap_cannot_hold_one_more_judge_call_is_refused(env: FakeOpenAI, tmp_path, capsys):
    env.responder = lambda body: Reply.json(GOOD, usage={"prompt_tokens": 100, "completion_tokens": 100})
    data = dataset(tmp_path, 4)
    base = ["--yes", "--db", "s.db", "--concurrency", "1", "--price", "0,1", "--judge-max-tokens", "300"]
    code, out, err = run_cli(capsys, "run", str(data), "--scorer", "prompt-alignment", *base, "--max-judge-calls", "2")
    assert code == EXIT_PAUSED and env.chat_call_count == 2
    run_id = re.search(r"Run (\w+): paused", err).group(1)
    # 2 calls of 100 output tokens at $1 per million: $0.0002 spent. A $0.0004 cap leaves $0.0002, below the
    # $0.0003 a call reserves: refused, nothing sent, the run's caps unchanged.
    resume = ["run", "--resume", run_id, *base, "--max-judge-calls", "none"]
    code, out, err = run_cli(capsys, *resume, "--max-cost", "0.0004")
    assert code == EXIT_USAGE and env.chat_call_count == 2
    assert "The cost cap of $0.0004 cannot hold one judge call" in err
    assert "on top of what the run spent, $0.0002" in err and "Raise the cap to at least $0.0005" in err
    store = Store(tmp_path / "s.db")
    assert store.get_run(run_id)["config"]["budget"]["max_judge_calls"] == 2  # nothing stored
    store.close()
    # A cap below what the run spent is refused the same way.
    code, out, err = run_cli(capsys, *resume, "--max-cost", "0.0001")
    assert code == EXIT_USAGE and "Raise the cap to at least $0.0005" in err
    # $0.0005: one call ($0.0002 + $0.0003 <= $0.0005), then $0.0003 spent + $0.0003 would pass it.
    code, out, err = run_cli(capsys, *resume, "--max-cost", "0.0005")
    assert code == EXIT_PAUSED and env.chat_call_count == 3


def test_the_call_cap_counts_every_http_request_the_clients_retries_included(env: FakeOpenAI, tmp_path, capsys):
    # Every request is answered 500 (Retry-After 0.01 s): the openai client tries each judge call 1 + 3 times (its
    # max_retries, 3). One at a time, a cap of 10 calls: items 0 and 1 take 4 requests each and fail (8); item 2's
    # first try and first retry are the 9th and 10th; its second retry would be the 11th, so it is not sent. Before,
    # the cap counted a call and its retries as one: 5 items × 4 = 20 requests, until 5 failures in a row paused it.
    env.responder = lambda body: Reply.server_error(headers={"Retry-After": "0.01"})
    data = dataset(tmp_path, 20)
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--yes", "--db", "s.db", "--concurrency", "1"]
    code, out, err = run_cli(capsys, *argv, "--max-judge-calls", "10")
    assert code == EXIT_PAUSED and env.chat_call_count == 10
    assert (
        "Stopped at the budget: the cap of 10 judge calls is reached (each HTTP request to the judge is a call, a "
        "retry of a failed one too)" in err
    )
    store = Store(tmp_path / "s.db")
    run_id = store.list_runs()[0]["id"]
    rows = store.results(run_id)
    store.close()
    assert [(r["item_index"], r["status"]) for r in rows] == [(0, "api_error"), (1, "api_error")]  # 2-19 left to do
    # The usage line counts the 10 requests, none answered: items 0 and 1's 4 each, stored with them, and item 2's
    # 2, stored with the run (the item is left to do). Before, it said "0 calls".
    assert "Judge usage: 10 requests (0 answered), 0 prompt + 0 completion tokens," in out
    assert [(r["judge_requests"], r["judge_calls"]) for r in rows] == [(4, 0), (4, 0)]
    # A resume with a cap of 12 counts those 10: 2 more requests (item 2's first try and first retry again).
    code, out, err = run_cli(capsys, "run", "--resume", run_id, "--db", "s.db", "--yes", "--max-judge-calls", "12")
    assert code == EXIT_PAUSED and env.chat_call_count == 12
    assert "Judge usage: 12 requests (0 answered), 0 prompt + 0 completion tokens," in out


def test_a_resume_retrying_failures_it_leaves_to_do_prints_the_run_as_stored(env: FakeOpenAI, tmp_path, capsys):
    # As above, a cap of 10 stores items 0 and 1 as api_error (4 requests each) and 2 requests left over. A resume
    # with --retry-failed and a cap of 12 sends 2 more: item 0's retry, first try and first retry, then the cap
    # (10 + 2). Item 0's retry is left to do, so the store keeps both failed rows (4 + 4) and the run's left
    # requests become 2 + 2 = 4: 12 in all. Before, the result dropped the two retried outcomes: "Judge usage: 4
    # requests", no failure in the table and "Not scored yet: 20" where 18 items are left (2 of 20 are failed).
    env.responder = lambda body: Reply.server_error(headers={"Retry-After": "0.01"})
    data = dataset(tmp_path, 20)
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--yes", "--db", "s.db", "--concurrency", "1"]
    code, out, err = run_cli(capsys, *argv, "--max-judge-calls", "10")
    run_id = run_id_of(out) or Store(tmp_path / "s.db").list_runs()[0]["id"]
    code, out, err = run_cli(
        capsys,
        *["run", "--resume", run_id, "--db", "s.db", "--yes", "--concurrency", "1", "--retry-failed"],
        *["--max-judge-calls", "12"],
    )
    assert code == EXIT_PAUSED and env.chat_call_count == 12
    assert "the cap of 12 judge calls is reached" in err
    store = Store(tmp_path / "s.db")
    rows = store.results(run_id)
    left = store.get_run(run_id)["left_judge_requests"]
    store.close()
    assert [(r["item_index"], r["status"], r["judge_requests"]) for r in rows] == [
        (0, "api_error", 4),
        (1, "api_error", 4),
    ]
    assert left == 4
    assert "Judge usage: 12 requests (0 answered), 0 prompt + 0 completion tokens," in out
    assert re.search(r"prompt-alignment\s+0\s+2\b", out)  # n scored 0, n not scored 2
    assert "Not scored (2 outcome(s)):" in out
    assert "Not scored yet: 18 item × scorer outcome(s)" in out


def test_the_usage_line_counts_a_failed_request_retried_apart_from_the_answer(env: FakeOpenAI, tmp_path, capsys):
    # One item: a 500 (Retry-After 0.01 s), then the client's retry answered with 100 + 10 tokens: 2 requests, 1
    # answered, the answer's tokens only (a 500 spends none); the outcome is stored so.
    env.enqueue(
        Reply.server_error(headers={"Retry-After": "0.01"}),
        Reply.json(GOOD, usage={"prompt_tokens": 100, "completion_tokens": 10}),
    )
    data = dataset(tmp_path, 1)
    code, out, err = run_cli(capsys, "run", str(data), "--scorer", "prompt-alignment", "--yes", "--db", "s.db")
    assert code == EXIT_OK and env.chat_call_count == 2
    assert "Judge usage: 2 requests (1 answered), 100 prompt + 10 completion tokens," in out
    store = Store(tmp_path / "s.db")
    (row,) = store.results(store.list_runs()[0]["id"])
    store.close()
    assert (row["judge_requests"], row["judge_calls"], row["prompt_tokens"], row["completion_tokens"]) == (
        2,
        1,
        100,
        10,
    )


def test_a_token_cap_is_refused_or_warned_of_before_the_run_as_a_cost_cap_is(env: FakeOpenAI, tmp_path, capsys):
    # Prompt alignment on "Question i?" / "Answer i." with at most 300 reply tokens: the estimate is ~340 prompt
    # (4 characters a token) + 300 completion tokens a call, and the first call reserves 4,401 tokens (its prompt
    # bound, 4,101: the bytes of its messages and response format + 8 a message; its reply, 300). Replies spend
    # what the estimate counts: 340 + 300 = 640 tokens.
    env.responder = lambda body: Reply.json(GOOD, usage={"prompt_tokens": 340, "completion_tokens": 300})
    data = dataset(tmp_path, 10)
    base = ["--yes", "--db", "s.db", "--concurrency", "1", "--judge-max-tokens", "300"]
    argv = ["run", str(data), "--scorer", "prompt-alignment", *base]
    code, out, err = run_cli(capsys, *argv, "--max-total-tokens", "4400")
    assert code == EXIT_USAGE and env.chat_call_count == 0
    assert "~3,400 prompt + ~3,000 completion tokens" in err
    assert (
        "error: The cap of 4,400 tokens cannot hold one judge call: the run reserves a call's upper bound before "
        "sending it, 4,401 tokens for the first (its prompt at one token per byte" in err
    )
    assert "Raise the cap to at least 4,401 tokens (--max-total-tokens N)" in err and "Nothing was sent." in err
    store = Store(tmp_path / "s.db")
    assert store.list_runs() == []  # no run created
    store.close()
    # 4,401 + 3 × 640 = 6,321: floor((6,321 - 4,401) / 640) + 1 = 4 calls at the estimate, floor(6,321 / 4,401) = 1
    # at the bound; the run sends 4 (after them 2,560 spent + 4,401 > 6,321).
    code, out, err = run_cli(capsys, *argv, "--max-total-tokens", "6321")
    assert code == EXIT_PAUSED and env.chat_call_count == 4
    assert "warning: The cap of 6,321 tokens is short of the estimate's 10 judge calls (6,400 tokens)" in err
    assert "admits about 4 of them at the estimate's 640 tokens a call (at least 1 if every call spends" in err
    run_id = re.search(r"Run (\w+): paused", err).group(1)
    # A resume counts the 2,560 tokens spent: a 6,000 cap leaves 3,440, below the 4,401 a call reserves.
    resume = ["run", "--resume", run_id, *base]
    code, out, err = run_cli(capsys, *resume, "--max-total-tokens", "6000")
    assert code == EXIT_USAGE and env.chat_call_count == 4
    assert "error: The cap of 6,000 tokens cannot hold one judge call" in err
    assert "on top of what the run spent, 2,560 tokens" in err and "at least 6,961 tokens (--max-total-tokens N)" in err
    # 7,601 leaves 5,041 for the 6 calls left (3,840 tokens): floor((5,041 - 4,401) / 640) + 1 = 2 of them, and
    # floor(5,041 / 4,401) = 1 at the bound; the run sends 2 (then 3,840 spent + 4,401 > 7,601).
    code, out, err = run_cli(capsys, *resume, "--max-total-tokens", "7601")
    assert code == EXIT_PAUSED and env.chat_call_count == 6
    assert (
        "warning: The cap of 7,601 tokens leaves 5,041 tokens after what the run spent (2,560 tokens), short of the "
        "estimate's 6 judge calls (3,840 tokens)" in err
    )
    assert "admits about 2 of them at the estimate's 640 tokens a call (at least 1 if" in err


def test_the_warning_counts_calls_at_the_reservation_and_the_stop_line_spends_what_the_usage_line_counts(
    env: FakeOpenAI, tmp_path, capsys
):
    # Input tokens free, $1 per million output tokens, at most 300 reply tokens: each call reserves 300 × 1e-6 =
    # $0.0003 before it is sent. Replies of 300 tokens (as the estimate counts them): $0.0003 a call. A $0.001 cap
    # admits a call while spent + $0.0003 <= $0.001: 3 calls ($0.0009 spent; a 4th would hold up to $0.0012).
    env.responder = lambda body: Reply.json(GOOD, usage={"prompt_tokens": 100, "completion_tokens": 300})
    data = dataset(tmp_path, 20)
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--yes", "--db", "s.db", "--price", "0,1"]
    code, out, err = run_cli(capsys, *argv, "--judge-max-tokens", "300", "--max-cost", "0.001")
    assert code == EXIT_PAUSED and env.chat_call_count == 3
    # floor((0.001 - 0.0003) / 0.0003) + 1 = 3 at the estimate, floor(0.001 / 0.0003) = 3 at the bound.
    assert (
        "admits about 3 of them at the estimate's $0.0003 a call (at least 3 if every call spends its whole bound"
        in err
    )
    assert "the run's judge calls spent $0.0009, and the next one reserves up to $0.0003 before it is sent" in err
    assert "Judge usage: 3 requests (3 answered), 300 prompt + 900 completion tokens, cost $0.0009;" in out


def test_a_cost_cap_admits_the_same_calls_at_any_concurrency(env: FakeOpenAI, tmp_path, capsys):
    # As above, but replies of 100 tokens ($0.0001): a call is sent while spent + $0.0003 <= $0.001, so
    # (n - 1) × $0.0001 + $0.0003 <= $0.001 gives n = 8 calls, $0.0008 spent; at concurrency 8 too (a call that
    # would pass the cap only for what the calls in flight hold waits for them to end).
    env.responder = lambda body: Reply.json(GOOD, usage={"prompt_tokens": 100, "completion_tokens": 100})
    data = dataset(tmp_path, 20)
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--yes", "--db", "s.db", "--price", "0,1"]
    code, out, err = run_cli(capsys, *argv, "--judge-max-tokens", "300", "--max-cost", "0.001", "--concurrency", "8")
    assert code == EXIT_PAUSED and env.chat_call_count == 8
    assert "the run's judge calls spent $0.0008, and the next one reserves up to $0.0003 before it is sent" in err
    assert "Judge usage: 8 requests (8 answered), 800 prompt + 800 completion tokens, cost $0.0008;" in out


@pytest.mark.parametrize("concurrency", [1, 8])
def test_a_cost_cap_admits_a_prefix_of_the_items_whatever_the_concurrency_and_on_every_run(
    env: FakeOpenAI, tmp_path, capsys, concurrency
):
    # Input tokens free, $1 per million output tokens, at most 300 reply tokens: each call reserves $0.0003. Items of
    # different sizes: item i's reply takes TOKENS[i] tokens. A call is sent while spent + $0.0003 <= $0.001, i.e.
    # while the earlier items spent at most 700 tokens: items 0-4 spend 200, 300, 600, 650, 750 in turn, so item 4
    # is sent (650 <= 700) and item 5 is not (750 > 700), although items 6 and 7 (10 tokens each) would fit the room
    # an item skipped would leave. 5 calls, items 0-4, $0.00075; the same on each of three runs at concurrency 8.
    tokens = [200, 100, 300, 50, 100, 100, 10, 10] + [10] * 12

    def item_of(body) -> int:
        return int(re.search(r"Question (\d+)\?", json.dumps(body)).group(1))

    def reply(body):
        answer = Reply.json(GOOD, usage={"prompt_tokens": 100, "completion_tokens": tokens[item_of(body)]})
        return answer.delayed(0.05 * (item_of(body) % 3))  # replies come back out of item order

    env.responder = reply
    data = dataset(tmp_path, 20)
    for attempt in range(1 if concurrency == 1 else 3):
        env.reset()
        argv = ["run", str(data), "--scorer", "prompt-alignment", "--yes", "--db", f"s{attempt}.db", "--no-cache"]
        code, out, err = run_cli(
            capsys, *argv, "--price", "0,1", "--judge-max-tokens", "300", "--max-cost", "0.001",
            "--concurrency", str(concurrency),
        )  # fmt: skip
        assert code == EXIT_PAUSED
        assert sorted(item_of(body) for body in env.chat_requests()) == [0, 1, 2, 3, 4]
        assert "the run's judge calls spent $0.00075, and the next one reserves up to $0.0003 before it is sent" in err
        store = Store(tmp_path / f"s{attempt}.db")
        run_id = store.list_runs()[0]["id"]
        scored = sorted(r["item_index"] for r in store.results(run_id) if r["status"] == "scored")
        store.close()
        assert scored == [0, 1, 2, 3, 4]
