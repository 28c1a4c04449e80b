"""Batch and History pages: resume with the sidebar's judge, the cache shown and bypassed, budget caps, the
pre-flight, confirmation of big runs. The judge is the fake server; calls are counted there."""

from __future__ import annotations

import json
import re

import pytest
from fake_openai import FakeOpenAI, Reply
from judge_data import single_analysis
from streamlit.testing.v1 import AppTest

from scorers import Store
from scorers.cli import main
from scorers.runs import jobs

OK = Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0))
DEAD_URL = "http://127.0.0.1:9/v1"  # nothing listens there


def csv(n: int) -> bytes:
    return ("id,prompt,response\n" + "".join(f"r{i},Question {i}?,Answer {i}.\n" for i in range(n))).encode()


def prepare(at: AppTest, n: int) -> None:
    at.file_uploader(key="batch_upload").upload("rows.csv", csv(n), "text/plain")
    at.run()
    at.multiselect(key="batch_scorers").set_value(["prompt-alignment"]).run()
    assert not at.exception


def wait_for(at: AppTest, slot: str = "job_batch") -> None:
    job = jobs.get(at.session_state[slot])
    job.join(30)
    assert not job.running
    at.run()
    at.run()
    assert not at.exception


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


@pytest.fixture
def judge(fake_judge: FakeOpenAI) -> FakeOpenAI:
    fake_judge.responder = lambda body: OK
    return fake_judge


def test_a_used_up_quota_pauses_the_run_and_history_shows_it_paused_and_resumes_it(
    judge: FakeOpenAI, open_page, studio_db
):
    judge.responder = lambda body: Reply.error(429, "You exceeded your current quota", code="insufficient_quota")
    at = open_page("batch")
    prepare(at, 4)
    at.button(key="batch_run").click().run()
    wait_for(at)
    run_id = at.session_state["batch_run_id"]
    store = Store(studio_db)
    run = store.get_run(run_id)
    assert run["status"] == "quota_exhausted" and store.results(run_id) == []  # paused, not stopped by the user
    assert judge.chat_call_count == 1
    paused = "Paused because the judge's quota or daily limit is used up (429 insufficient_quota)"

    history = open_page("history")
    history.button(key="history_open_button").click().run()
    assert any(paused in w.value and "current quota. The items it hit" in w.value for w in history.warning)
    judge.responder = lambda body: OK  # the quota is back
    history.button(key=f"history_{run_id}_resume").click().run()
    wait_for(history)
    assert judge.chat_call_count == 5 and store.get_run(run_id)["status"] == "completed"


def test_unusable_judge_replies_pause_a_batch_run_and_the_page_says_why(judge: FakeOpenAI, open_page, studio_db):
    judge.responder = lambda body: Reply.content("I think it is fine.")  # not JSON: asked, re-asked, invalid
    at = open_page("batch")
    prepare(at, 30)  # more than the 8 workers have in flight when the third unusable reply pauses the run
    at.number_input(key="batch_k").set_value(3).run()
    at.button(key="batch_run").click().run()
    wait_for(at)
    run = Store(studio_db).get_run(at.session_state["batch_run_id"])
    assert run["status"] == "judge_replies_unusable"
    assert run["stop_reason"].startswith("Paused: the judge's last 3 replies did not match the schema: ")
    assert any(
        "Paused because the judge's replies were unusable (invalid output or refusals, several in a row)" in w.value
        for w in at.warning
    )


def test_a_wrong_url_stops_after_the_preflight_and_resume_with_the_sidebars_judge_reaches_the_new_endpoint(
    judge: FakeOpenAI, open_page, studio_db
):
    at = open_page("batch")
    at.sidebar.text_input(key="judge_base_url").set_value(DEAD_URL).run()
    prepare(at, 5)
    at.button(key="batch_run").click().run()
    wait_for(at)
    run_id = at.session_state["batch_run_id"]
    store = Store(studio_db)
    run = store.get_run(run_id)
    assert run["status"] == "judge_unreachable" and store.results(run_id) == []
    assert "Cannot connect to the judge" in run["stop_reason"]
    assert any(
        "Paused because the judge could not be used (unreachable, or answering with errors)" in w.value
        for w in at.warning
    )

    # The sidebar now points at the working judge; History resumes the run with it.
    history = open_page("history")
    history.sidebar.text_input(key="judge_base_url").set_value(judge.base_url).run()
    history.button(key="history_open_button").click().run()
    key = f"history_{run_id}"
    history.radio(key=f"{key}_which_judge").set_value("with the sidebar's judge").run()
    note = [c.value for c in history.caption if c.value.startswith("Will use ")]
    assert note and judge.base_url in note[0]
    history.button(key=f"{key}_resume").click().run()
    wait_for(history)
    assert judge.chat_call_count == 5
    assert store.get_run(run_id)["status"] == "completed"
    assert {r["judge"]["baseUrl"] for r in store.results(run_id)} == {judge.base_url}  # per item, no key
    store.close()


def test_a_cached_rerun_is_marked_cached_and_costs_nothing_and_bypass_asks_again(judge: FakeOpenAI, open_page):
    at = open_page("batch")
    prepare(at, 3)
    at.button(key="batch_run").click().run()
    wait_for(at)
    assert judge.chat_call_count == 3 and metrics(at)["Cache hits"] == "0"

    at.button(key="batch_run").click().run()  # the same run again: every reply is in the cache
    wait_for(at)
    assert judge.chat_call_count == 3
    shown = metrics(at)
    assert (shown["Cache hits"], shown["Judge tokens"], shown["Cost"]) == ("3", "0", "$0.00")
    at.session_state[f"batch_{at.session_state['batch_run_id']}_tab"] = "Rows and drill-down"  # the rows table's tab
    at.run()
    table = next(d.value for d in at.dataframe if "cached" in d.value.columns)
    assert table["cached"].tolist() == [True, True, True]

    at.sidebar.toggle(key="judge_bypass_cache").set_value(True).run()
    at.button(key="batch_run").click().run()
    wait_for(at)
    assert judge.chat_call_count == 6 and metrics(at)["Cache hits"] == "0"


def test_the_estimate_counts_cached_items_as_free(judge: FakeOpenAI, open_page):
    at = open_page("batch")
    prepare(at, 4)
    assert metrics(at)["Judge calls (est.)"] == "4"
    at.button(key="batch_run").click().run()
    wait_for(at)
    at.file_uploader(key="batch_upload").upload("more.csv", csv(6), "text/plain")  # 4 rows seen, 2 new
    at.run()
    assert metrics(at)["Judge calls (est.)"] == "2"
    assert any(c.value.startswith("4 outcome(s) are already in the judge cache") for c in at.caption)


def test_the_estimate_is_looked_up_again_after_a_run_of_the_same_rows(judge: FakeOpenAI, open_page):
    at = open_page("batch")
    prepare(at, 3)
    assert metrics(at)["Judge calls (est.)"] == "3"
    at.button(key="batch_run").click().run()
    wait_for(at)
    # The same upload, now every reply in the cache: running it again makes no call, and the estimate says so.
    assert metrics(at)["Judge calls (est.)"] == "0"
    assert any(c.value.startswith("3 outcome(s) are already in the judge cache") for c in at.caption)


def test_a_dashboard_budget_cap_is_never_exceeded(judge: FakeOpenAI, open_page, studio_db):
    at = open_page("batch")
    prepare(at, 8)
    at.number_input(key="batch_max_calls").set_value(3).run()
    at.button(key="batch_run").click().run()
    wait_for(at)
    assert judge.chat_call_count == 3
    store = Store(studio_db)
    run = store.get_run(at.session_state["batch_run_id"])
    store.close()
    assert run["status"] == "budget_reached" and run["config"]["budget"]["max_judge_calls"] == 3
    assert any(w.value.startswith("Paused at the budget cap") for w in at.warning)


def test_a_big_run_asks_for_confirmation(judge: FakeOpenAI, open_page, monkeypatch):
    monkeypatch.setattr("dashboard.batch.CONFIRM_ABOVE_CALLS", 2)
    monkeypatch.setattr("views.batch.CONFIRM_ABOVE_CALLS", 2, raising=False)
    at = open_page("batch")
    prepare(at, 3)
    assert at.button(key="batch_run").disabled
    at.checkbox(key="batch_confirm").check().run()
    assert not at.button(key="batch_run").disabled
    assert judge.chat_call_count == 0


def test_long_responses_are_truncated_and_recorded(judge: FakeOpenAI, open_page, studio_db):
    at = open_page("batch")
    data = "id,prompt,response\na,Q?,short\nb,Q?," + "x" * 50 + "\n"
    at.file_uploader(key="batch_upload").upload("long.csv", data.encode(), "text/plain")
    at.run()
    at.multiselect(key="batch_scorers").set_value(["prompt-alignment"]).run()
    at.number_input(key="batch_long_limit").set_value(10).run()
    assert any("1 response(s) are longer than 10 characters" in w.value for w in at.warning)
    at.button(key="batch_run").click().run()
    wait_for(at)
    store = Store(studio_db)
    run_id = at.session_state["batch_run_id"]
    assert store.get_run(run_id)["config"]["truncated"] == {"b": 50}
    assert store.items(run_id)[1]["payload"]["output"] == {"text": "x" * 10}
    store.close()


def test_a_cost_cap_or_price_below_a_cent_is_shown_with_its_digits(open_page):
    at = open_page("batch")
    prepare(at, 2)
    field = at.number_input(key="batch_max_cost")
    field.set_value(0.004).run()
    assert not at.exception
    field = at.number_input(key="batch_max_cost")
    # The page formats the value printf-style (sprintf.js in the browser, which prints %g's number as typed);
    # with "%.2f" a $0.004 cap read "0.00", the field's "no cap".
    assert field.value == 0.004 and field.proto.format % field.value == "0.004"
    # A price per million tokens below a cent's step: 0.075 (input) and 0.3 (output), shown as typed.
    at.number_input(key="batch_price_in").set_value(0.075).run()
    at.number_input(key="batch_price_out").set_value(0.3).run()
    shown = [at.number_input(key=k) for k in ("batch_price_in", "batch_price_out")]
    assert [f.proto.format % f.value for f in shown] == ["0.075", "0.3"]


def test_costs_under_a_hundredth_of_a_cent_are_shown_with_their_digits(judge: FakeOpenAI, open_page):
    judge.responder = lambda body: Reply.json(
        single_analysis(0.9, 0.8, 0.7, 1.0), usage={"prompt_tokens": 100, "completion_tokens": 10}
    )
    at = open_page("batch")
    prepare(at, 3)
    at.number_input(key="batch_price_in").set_value(0.001).run()
    at.number_input(key="batch_price_out").set_value(0.002).run()
    # The estimate: its prompt and completion tokens (the Tokens tile's help) at $0.001 and $0.002 per million.
    tokens = next(m for m in at.metric if m.label == "Tokens (est.)").proto.help
    prompt, completion = (int(n.replace(",", "")) for n in re.findall(r"([\d,]+) (?:prompt|completion)", tokens))
    estimate = (prompt * 0.001 + completion * 0.002) / 1e6
    assert estimate < 0.00005  # what "$0.0000" showed
    assert metrics(at)["Cost (est.)"] == f"${estimate:.10f}".rstrip("0")
    at.button(key="batch_run").click().run()
    wait_for(at)
    # 3 calls × (100 × $0.001 + 10 × $0.002) per million tokens = 3 × 0.12 / 1e6 = $0.00000036
    assert metrics(at)["Cost"] == "$0.00000036"


def test_an_estimate_with_every_item_cached_costs_nothing_even_without_a_price(judge: FakeOpenAI, open_page):
    at = open_page("batch")
    at.sidebar.text_input(key="judge_model").set_value("no-such-model").run()  # no list price, none set
    prepare(at, 3)
    assert metrics(at)["Cost (est.)"] == "unknown"  # 3 calls to make at an unknown price
    at.button(key="batch_run").click().run()
    wait_for(at)
    at.file_uploader(key="batch_upload").upload("again.csv", csv(3), "text/plain")  # the same rows again
    at.run()
    shown = metrics(at)
    # Every outcome is in the cache: no call is left to make, so nothing to pay, as the CLI says ("cost $0.00").
    assert (shown["Judge calls (est.)"], shown["Cost (est.)"]) == ("0", "$0.00")


def test_a_price_of_0_can_be_set_for_a_free_model_and_a_negative_one_is_refused(judge: FakeOpenAI, open_page):
    at = open_page("batch")
    at.sidebar.text_input(key="judge_model").set_value("llama3.1").run()  # a local model: no list price
    prepare(at, 2)
    assert metrics(at)["Cost (est.)"] == "unknown"
    at.number_input(key="batch_price_in").set_value(0.0).run()
    assert [e.value for e in at.error] == [
        "Set both prices per million tokens (0 for a free model), or leave both empty for the list price."
    ]
    assert at.button(key="batch_run").disabled
    at.number_input(key="batch_price_out").set_value(0.0).run()
    # 0 per million tokens: free, $0.00 (0 used to mean "the list price", which llama3.1 has not).
    assert not at.error and metrics(at)["Cost (est.)"] == "$0.00"
    at.number_input(key="batch_price_in").set_value(-1.0).run()
    assert [e.value for e in at.error] == [
        "A price per million tokens cannot be negative (input -1): 0 is a free model; leave both empty for the "
        "list price."
    ]
    assert at.button(key="batch_run").disabled and judge.chat_call_count == 0


def test_no_cost_is_estimated_while_the_price_is_not_valid(judge: FakeOpenAI, open_page):
    at = open_page("batch")
    prepare(at, 2)  # the default judge, gpt-4o-mini, has a list price: a cost is estimated
    assert metrics(at)["Cost (est.)"].startswith("$")
    at.number_input(key="batch_price_in").set_value(-1.0).run()
    at.number_input(key="batch_price_out").set_value(0.0).run()
    # A negative price is refused: no cost figure (the list price's was shown), and Run stays disabled.
    cost = next(m for m in at.metric if m.label == "Cost (est.)")
    assert (cost.value, cost.proto.delta) == ("—", "the price is not valid")
    assert at.error and at.button(key="batch_run").disabled
    at.number_input(key="batch_price_in").set_value(1.0).run()
    # 1 and 0 USD per million tokens: valid again, a cost is shown.
    assert metrics(at)["Cost (est.)"].startswith("$") and not at.error


def test_batch_refuses_a_cost_cap_below_one_judge_calls_reserved_bound(judge: FakeOpenAI, open_page, studio_db):
    at = open_page("batch")
    prepare(at, 3)
    assert not at.error and not at.button(key="batch_run").disabled
    # A call holds its prompt bound + 4,096 reply tokens at gpt-4o-mini's list price (> $0.0024576) before it is
    # sent: far above a $0.0000001 cap, so no call could ever be sent. Refused before Run does anything.
    at.number_input(key="batch_max_cost").set_value(0.0000001).run()
    assert not [w for w in at.warning if "cost cap" in w.value]
    (error,) = [e.value for e in at.error]
    assert error.startswith("The cost cap of $0.0000001 cannot hold one judge call: the run reserves a call's upper")
    assert "Max cost in USD, under Budget, price and limits" in error
    assert "the sidebar's Max output tokens per call" in error
    assert at.button(key="batch_run").disabled  # a browser cannot press it
    assert judge.chat_call_count == 0 and Store(studio_db).list_runs() == []


def test_batch_refuses_a_token_cap_below_one_judge_calls_reserved_bound_and_warns_of_a_short_one(
    judge: FakeOpenAI, open_page, studio_db
):
    at = open_page("batch")
    prepare(at, 3)
    # A call holds its prompt bound + 4,096 reply tokens before it is sent: a 1-token cap could never send one.
    at.number_input(key="batch_max_tokens").set_value(1).run()
    (error,) = [e.value for e in at.error]
    assert error.startswith("The cap of 1 token cannot hold one judge call: the run reserves a call's upper bound")
    assert "(Max total tokens, under Budget, price and limits)" in error
    assert "the sidebar's Max output tokens per call" in error
    assert not [w for w in at.warning if "short of the estimate" in w.value]
    assert at.button(key="batch_run").disabled
    # A cap of exactly the bound b: floor((b - b) / c) + 1 = 1 of the 3 calls at the estimate, floor(b / b) = 1 at
    # the bound. Run is enabled.
    bound = int(re.search(r"at least ([\d,]+) tokens", error).group(1).replace(",", ""))
    at.number_input(key="batch_max_tokens").set_value(bound).run()
    assert not at.error and not at.button(key="batch_run").disabled
    (warning,) = [w.value for w in at.warning if "short of the estimate" in w.value]
    assert warning.startswith(f"The cap of {bound:,} tokens is short of the estimate's 3 judge calls (")
    assert "admits about 1 of them at the estimate's" in warning and "(at least 1 if every call spends" in warning
    assert judge.chat_call_count == 0 and Store(studio_db).list_runs() == []


def test_a_conversations_long_reply_is_truncated_too(judge: FakeOpenAI, open_page, studio_db):
    # The response of a conversation is its final assistant message (a message, not {"text": ...}).
    records = [
        {"id": "a", "messages": [{"role": "user", "content": "Q?"}, {"role": "assistant", "content": "short"}]},
        {"id": "b", "messages": [{"role": "user", "content": "Q?"}, {"role": "assistant", "content": "x" * 50}]},
    ]
    data = "".join(json.dumps(r) + "\n" for r in records)
    at = open_page("batch")
    at.file_uploader(key="batch_upload").upload("chats.jsonl", data.encode(), "text/plain")
    at.run()
    token = [s.key for s in at.selectbox if s.key and s.key.startswith("batch_map_messages_")][0].rsplit("_", 1)[1]
    at.checkbox(key=f"batch_confirm_messages_{token}").check().run()
    at.multiselect(key="batch_scorers").set_value(["prompt-alignment"]).run()
    at.number_input(key="batch_long_limit").set_value(10).run()
    assert any("1 response(s) are longer than 10 characters" in w.value for w in at.warning)
    at.button(key="batch_run").click().run()
    wait_for(at)
    store = Store(studio_db)
    run_id = at.session_state["batch_run_id"]
    assert store.get_run(run_id)["config"]["truncated"] == {"b": 50}
    assert store.items(run_id)[1]["payload"]["output"] == {"role": "assistant", "content": "x" * 10}
    store.close()


def test_history_refuses_a_resume_whose_cost_cap_cannot_hold_one_judge_call(judge: FakeOpenAI, open_page, studio_db):
    at = open_page("batch")
    prepare(at, 4)
    at.number_input(key="batch_max_calls").set_value(2).run()
    at.button(key="batch_run").click().run()
    wait_for(at)
    run_id = at.session_state["batch_run_id"]
    store = Store(studio_db)
    assert store.get_run(run_id)["status"] == "budget_reached" and judge.chat_call_count == 2

    history = open_page("history")
    history.button(key="history_open_button").click().run()
    prefix = f"history_{run_id}_resume_gpt-4o-mini"
    # The first item left's call holds its prompt bound + 4,096 reply tokens at gpt-4o-mini's list price
    # (> 4,096 × $0.60 / 1e6 = $0.0024576) before it is sent: a $0.0000001 cap cannot hold it.
    history.number_input(key=f"{prefix}_max_calls").set_value(0).run()
    history.number_input(key=f"{prefix}_max_cost").set_value(0.0000001).run()
    history.button(key=f"history_{run_id}_resume").click().run()
    errors = [e.value for e in history.error]
    assert any(
        e.startswith("Not started: the cost cap of \\$0.0000001 cannot hold one judge call")  # md-escaped
        and "Max cost in USD, under Cost cap and price" in e
        for e in errors
    ), errors
    assert judge.chat_call_count == 2 and store.get_run(run_id)["status"] == "budget_reached"
    assert store.get_run(run_id)["config"]["budget"]["max_cost_usd"] is None  # nothing stored with the run


def test_history_refuses_a_resume_whose_token_cap_cannot_hold_one_more_judge_call(
    judge: FakeOpenAI, open_page, studio_db
):
    judge.responder = lambda body: Reply.json(
        single_analysis(0.9, 0.8, 0.7, 1.0), usage={"prompt_tokens": 300, "completion_tokens": 200}
    )
    at = open_page("batch")
    prepare(at, 4)
    at.number_input(key="batch_max_calls").set_value(2).run()
    at.button(key="batch_run").click().run()
    wait_for(at)
    run_id = at.session_state["batch_run_id"]
    store = Store(studio_db)
    assert store.get_run(run_id)["status"] == "budget_reached" and judge.chat_call_count == 2

    history = open_page("history")
    history.button(key="history_open_button").click().run()
    prefix = f"history_{run_id}_resume_gpt-4o-mini"
    # 2 calls of 300 + 200 tokens: 1,000 spent. A cap of 1,000 leaves nothing for the next call's bound b.
    history.number_input(key=f"{prefix}_max_calls").set_value(0).run()
    history.number_input(key=f"{prefix}_max_tokens").set_value(1_000).run()
    history.button(key=f"history_{run_id}_resume").click().run()
    (error,) = [e.value for e in history.error if e.value.startswith("Not started: the cap of 1,000 tokens")]
    assert "cannot hold one judge call" in error and "on top of what the run spent, 1,000 tokens, so no" in error
    bound = int(re.search(r"([\d,]+) tokens for the first", error).group(1).replace(",", ""))
    assert f"Raise the cap to at least {1_000 + bound:,} tokens (Max total tokens, under Cost cap and price)" in error
    assert judge.chat_call_count == 2 and store.get_run(run_id)["config"]["budget"]["max_total_tokens"] is None
    # 1,000 + b holds the next call (then 1,500 spent + b passes it): one call more, paused at the token cap.
    history.number_input(key=f"{prefix}_max_tokens").set_value(1_000 + bound).run()
    history.button(key=f"history_{run_id}_resume").click().run()
    assert not [e for e in history.error if "Not started" in e.value]
    wait_for(history)
    assert judge.chat_call_count == 3 and store.get_run(run_id)["status"] == "budget_reached"
    store.close()


def test_history_resumes_a_cli_run_with_its_judges_max_output_tokens(judge: FakeOpenAI, open_page, studio_db, tmp_path):
    data = tmp_path / "rows.csv"
    data.write_bytes(csv(4))
    argv = ["run", str(data), "--scorer", "prompt-alignment", "--yes", "--model", "fake-judge", "--price", "0.15,0.6"]
    assert main([*argv, "--max-judge-calls", "1", "--judge-max-tokens", "300", "--concurrency", "1"]) == 4  # paused
    store = Store(studio_db)
    run_id = store.list_runs()[0]["id"]
    assert store.get_run(run_id)["judge"]["maxTokens"] == 300 and judge.chat_call_count == 1

    history = open_page("history")  # the sidebar's max output tokens: 0, none
    history.button(key="history_open_button").click().run()
    prefix = f"history_{run_id}_resume_fake-judge"
    history.number_input(key=f"{prefix}_max_calls").set_value(0).run()
    # A call's bound holds its reply at the judge's max output tokens: 300 × $0.60 / 1e6 = $0.00018 with the run's
    # judge, which a $0.002 cap admits; at 4,096 reply tokens (none set) it would be over $0.0024576 and refused.
    history.number_input(key=f"{prefix}_max_cost").set_value(0.002).run()
    history.button(key=f"history_{run_id}_resume").click().run()
    assert not history.error, [e.value for e in history.error]
    wait_for(history)
    assert store.get_run(run_id)["status"] == "completed"
    assert [body.get("max_completion_tokens") for body in judge.chat_requests()] == [300] * 4


def test_a_run_started_bypassing_the_cache_bypasses_it_when_history_resumes_it(judge: FakeOpenAI, open_page, studio_db):
    at = open_page("batch")
    prepare(at, 4)
    at.button(key="batch_run").click().run()
    wait_for(at)  # every item's reply is in the cache now
    at.sidebar.toggle(key="judge_bypass_cache").set_value(True).run()
    at.number_input(key="batch_max_calls").set_value(2).run()
    at.button(key="batch_run").click().run()
    wait_for(at)
    run_id = at.session_state["batch_run_id"]
    store = Store(studio_db)
    assert store.get_run(run_id)["status"] == "budget_reached" and judge.chat_call_count == 6

    history = open_page("history")  # a new session, whose sidebar does not bypass the cache
    history.button(key="history_open_button").click().run()
    history.number_input(key=f"history_{run_id}_resume_gpt-4o-mini_max_calls").set_value(0).run()
    history.button(key=f"history_{run_id}_resume").click().run()
    wait_for(history)
    assert store.get_run(run_id)["status"] == "completed"
    assert judge.chat_call_count == 8  # the 2 items left were asked again, not taken from the cache


def test_the_call_caps_help_names_the_max_retries_of_the_judge_chosen(open_page, studio_db):
    # The Batch page's judge (the sidebar's) keeps JudgeSettings' default, 3; History's resume of a run whose judge
    # recorded maxRetries 5 says 5 for the run's judge, 3 for the sidebar's. Before, every form said "up to 3 times".
    at = open_page("batch")
    prepare(at, 1)
    help_text = at.number_input(key="batch_max_calls").help
    assert "(a 5xx, a 429, a timeout, a lost connection; up to 3 times, the judge's max_retries)" in help_text
    store = Store(studio_db)
    run_id = store.create_run(
        dataset_name="rows.csv",
        items=[("r0", {"input": "q", "output": "x"}, {})],
        scorers=[{"id": "prompt-alignment", "name": "Prompt alignment", "options": {}}],
        judge={"model": "gpt-4o-mini", "baseUrl": "https://api.openai.com/v1", "maxRetries": 5},
    )
    store.finish_run(run_id, "cancelled")
    store.close()
    history = open_page("history")
    history.button(key="history_open_button").click().run()
    assert not history.exception
    prefix = f"history_{run_id}_resume_gpt-4o-mini"
    assert "up to 5 times, the judge's max_retries" in history.number_input(key=f"{prefix}_max_calls").help
    history.radio(key=f"history_{run_id}_which_judge").set_value("with the sidebar's judge").run()
    (sidebar,) = [n for n in history.number_input if n.key.endswith("_max_calls")]  # the sidebar's gpt-4o-mini
    assert "up to 3 times, the judge's max_retries" in sidebar.help


def test_the_cap_rule_names_the_status_as_history_shows_it():
    from dashboard.budget import CAP_RULE

    assert "(History shows it as “Paused at the budget cap”)" in CAP_RULE and "budget_reached" not in CAP_RULE
