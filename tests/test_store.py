"""The store on SQLite and on PostgreSQL: the same behaviour, old files upgraded in place, copies between the two.

Tests that take ``store_target`` run twice: on a SQLite file and on a fresh PostgreSQL
database (``.ci/run`` starts the server; on a developer machine without one they skip).
"""

from __future__ import annotations

import enum
import json
import logging
import math
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import sqlalchemy as sa
from legacy_db import make_legacy_db

from scorers import EvalItem, Store, create_textual_difference_scorer, run_evals
from scorers.analysis.labels import current_labels, label_history, save_label
from scorers.catalogue.judge_store import list_judges, save_judge
from scorers.cli import main
from scorers.core.budget import BudgetCaps
from scorers.core.pricing import JudgeSpend, Price
from scorers.runs.judges import has_price, judge_totals, judges_used, limits_config, run_prices, spend_by_judge
from scorers.runs.runner import LOST_REASON
from scorers.runs.store import (
    HEARTBEAT_STALE_S,
    CachedReply,
    RunBusy,
    RunHeartbeat,
    StoreError,
    copy_store,
    database_url,
    display_name,
    process_owner,
)
from scorers.runs.table import load_run_table

REPO = Path(__file__).resolve().parents[1]
LEGACY = REPO / "tests" / "data" / "legacy_store" / "scorer_studio_v3.db"
TD = "textual-difference"


@pytest.fixture
def store(store_target: str):
    s = Store(store_target)
    yield s
    s.close()


def td_run(store: Store, outputs: list[str], reference: str = "abc") -> str:
    items = [
        EvalItem(f"row{n}", {"input": "q", "output": out, "ground_truth": reference}) for n, out in enumerate(outputs)
    ]
    return run_evals(items, [create_textual_difference_scorer()], store=store, dataset_name="td.csv").run_id


def make_run(store: Store, n_items: int = 3, name: str | None = None) -> str:
    items = [(f"i{i}", {"input": f"q{i} ünï", "output": "a"}, {"variant": "AB"[i % 2]}) for i in range(n_items)]
    return store.create_run(
        dataset_name="d.csv",
        items=items,
        scorers=[{"id": TD, "name": "Textual difference", "options": {}}],
        judge={"model": "m"},
        name=name,
    )


# ---- the same behaviour on both databases


def test_runs_items_and_results_round_trip(store: Store):
    run_id = make_run(store, name="first")
    store.save_result(run_id, 0, TD, {"status": "scored", "score": 0.84, "analysis": {"ratio": 0.84}})
    store.save_result(run_id, 1, TD, {"status": "api_error", "error": "boom", "raw_reply": "{"})
    store.save_result(run_id, 2, TD, {"status": "scored", "score": 0.1})
    store.save_result(run_id, 2, TD, {"status": "scored", "score": 0.4})  # a retry replaces the first outcome
    run = store.get_run(run_id)
    assert (run["name"], run["status"], run["n_items"], run["judge"]) == ("first", "running", 3, {"model": "m"})
    assert [i["payload"]["input"] for i in store.items(run_id)] == ["q0 ünï", "q1 ünï", "q2 ünï"]
    assert store.items(run_id)[1]["groups"] == {"variant": "B"}
    results = store.results(run_id)
    assert [(r["item_index"], r["status"], r["score"]) for r in results] == [
        (0, "scored", 0.84),  # a double on both databases: 0.84 comes back exactly
        (1, "api_error", None),
        (2, "scored", 0.4),
    ]
    assert results[0]["analysis"] == {"ratio": 0.84} and results[1]["raw_reply"] == "{"
    (listed,) = store.list_runs()
    # Scored items only: mean (0.84 + 0.4) / 2 = 0.62; one failed item is counted apart (an API
    # error, not an input problem: n_input 0).
    assert listed["stats"][TD] == {"n_scored": 2, "n_failed": 1, "n_input": 0, "mean": pytest.approx(0.62)}
    store.finish_run(run_id, "completed")
    store.rename_run(run_id, "  renamed ")
    assert store.get_run(run_id)["name"] == "renamed" and store.get_run(run_id)["finished_at"]
    with pytest.raises(ValueError, match="no run"):
        store.rename_run("nope", "x")
    save_label(store, run_id, 0, TD, reviewer="ann", human_pass=True)
    store.delete_run(run_id)  # items, results and labels go with it
    assert store.list_runs() == [] and store.results(run_id) == []
    assert store.query("SELECT COUNT(*) FROM labels")[0][0] == 0
    with pytest.raises(KeyError):
        store.get_run(run_id)


def test_runs_are_listed_newest_first(store: Store):
    first = make_run(store, name="a")
    store.query("SELECT 1")
    with store.transaction() as db:
        db.execute("UPDATE runs SET created_at = ? WHERE id = ?", ("2020-01-01T00:00:00+00:00", first))
    second = make_run(store, name="b")
    assert [r["id"] for r in store.list_runs()] == [second, first]


def test_a_run_of_more_items_than_one_chunk_and_a_batch_of_results_are_stored_whole(
    store: Store, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr("scorers.runs.store.ITEMS_CHUNK", 2)  # 5 items: chunks of 2 + 2 + 1
    items = [(f"i{i}", {"input": f"q{i}", "output": "a ünï"}, {"v": i % 2} if i else {}, {"n": i}) for i in range(5)]
    run_id = store.create_run(dataset_name="d.csv", items=items, scorers=[{"id": TD}], judge=None)
    stored = store.items(run_id)
    assert [(r["item_index"], r["item_id"], r["payload"]["input"]) for r in stored] == [
        (i, f"i{i}", f"q{i}") for i in range(5)
    ]
    assert stored[0]["groups"] == {} and stored[3]["groups"] == {"v": 1} and stored[4]["columns"] == {"n": 4}
    assert stored[1]["payload"]["output"] == "a ünï"
    analysis = {"ratio": 0.5, "note": 'a "quoted" ünï'}
    store.save_results(
        run_id,
        [
            (0, TD, {"status": "scored", "score": 0.5, "analysis": analysis, "details": {}}),
            (1, TD, {"status": "invalid_input", "error": "no output"}),
            (0, "other", {"status": "scored", "score": 1.0, "judge": {"model": "m", "cached": True}}),
        ],
    )
    store.save_results(run_id, [(1, TD, {"status": "scored", "score": 0.25, "latency_s": 0.125})])  # replaces
    results = {(r["item_index"], r["scorer_id"]): r for r in store.results(run_id)}
    assert sorted(results) == [(0, "other"), (0, TD), (1, TD)]
    assert results[(0, TD)]["analysis"] == analysis and results[(0, TD)]["details"] == {}
    assert results[(0, TD)]["judge"] is None and results[(0, "other")]["judge"] == {"model": "m", "cached": True}
    assert (results[(1, TD)]["status"], results[(1, TD)]["score"], results[(1, TD)]["error"]) == ("scored", 0.25, None)
    assert (results[(1, TD)]["latency_s"], results[(1, TD)]["prompt_tokens"]) == (0.125, 0)
    # The JSON is written compactly (non-ASCII as UTF-8); a judge-less outcome's judge is JSON null, as before.
    raw = store.query("SELECT analysis, judge FROM results WHERE item_index = 0 AND scorer_id = ?", (TD,))[0]
    assert raw["analysis"] == '{"ratio":0.5,"note":"a \\"quoted\\" ünï"}' and raw["judge"] == "null"


class Colour(str, enum.Enum):
    RED = "red"


def test_values_orjson_does_not_write_as_json_does_are_stored_as_json_writes_them(store: Store):
    # Each value goes to the standard encoder's compact form, so it reads back as it was written:
    # NaN (orjson would write null), an integer key (orjson rejects it), an integer beyond 64 bits,
    # a string enum (a str subclass), a lone surrogate; and a response holding the word null.
    payload = {"input": "q", "output": "null \ud800", "ground_truth": "a"}
    run_id = store.create_run(dataset_name="d.csv", items=[("i0", payload, {1: "x"})], scorers=[], judge=None)
    analysis = {"ratio": math.nan, "big": 2**70, "colour": Colour.RED, "inf": -math.inf}
    store.save_results(run_id, [(0, TD, {"status": "scored", "score": 0.5, "analysis": analysis})])
    raw = store.query("SELECT payload, groups FROM items")[0]
    assert (raw["payload"], raw["groups"]) == (
        '{"input":"q","output":"null \\ud800","ground_truth":"a"}',
        '{"1":"x"}',
    )
    stored = store.query("SELECT analysis FROM results")[0]["analysis"]
    assert stored == '{"ratio":NaN,"big":1180591620717411303424,"colour":"red","inf":-Infinity}'
    back = store.results(run_id)[0]["analysis"]
    assert math.isnan(back["ratio"]) and (back["big"], back["colour"], back["inf"]) == (2**70, "red", -math.inf)
    assert store.items(run_id)[0]["payload"] == payload


def test_the_judges_of_a_run_and_what_each_spent(store: Store, monkeypatch: pytest.MonkeyPatch):
    mini = {"model": "gpt-4o-mini", "baseUrl": "https://api.openai.com/v1"}
    local = {"model": "qwen2.5", "baseUrl": "http://localhost:11434/v1"}
    run_id = store.create_run(
        dataset_name="judged.csv",
        items=[(f"q{i}", {"input": "q", "output": "x"}, {}) for i in range(5)],
        scorers=[{"id": "gluten-checker", "name": "Gluten checker", "options": {}}],
        judge=mini,
    )
    usage = {"judge_calls": 1}
    store.save_result(
        run_id,
        0,
        "gluten-checker",
        {"status": "scored", "score": 1.0, "judge": mini, "prompt_tokens": 100, "completion_tokens": 10, **usage},
    )
    store.save_result(
        run_id,
        1,
        "gluten-checker",
        {"status": "scored", "score": 1.0, "judge": mini, "prompt_tokens": 200, "completion_tokens": 20, **usage},
    )
    store.save_result(
        run_id,
        2,
        "gluten-checker",
        {"status": "scored", "score": 0.0, "judge": local, "prompt_tokens": 50, "completion_tokens": 5, **usage},
    )
    # A cached reply spent nothing: a judge was used, but there is nothing to price.
    store.save_result(run_id, 3, "gluten-checker", {"status": "scored", "score": 1.0, "judge": local})
    # The same model at another endpoint: another judge, but the same model's price.
    proxy = {"model": "gpt-4o-mini", "baseUrl": "https://proxy.example/v1"}
    store.save_result(
        run_id,
        4,
        "gluten-checker",
        {"status": "scored", "score": 1.0, "judge": proxy, "prompt_tokens": 30, "completion_tokens": 3, **usage},
    )

    assert judges_used(store, run_id) == [
        ("gpt-4o-mini", "https://api.openai.com/v1", 2),
        ("qwen2.5", "http://localhost:11434/v1", 2),
        ("gpt-4o-mini", "https://proxy.example/v1", 1),
    ]
    # gpt-4o-mini: items 0, 1 and 4, 100 + 200 + 30 prompt and 10 + 20 + 3 completion tokens; qwen2.5: item 2 only.
    spend = [JudgeSpend("gpt-4o-mini", 330, 33, 3), JudgeSpend("qwen2.5", 50, 5, 1)]
    assert spend_by_judge(store, run_id) == spend
    assert spend_by_judge(store, run_id, "other-scorer") == []
    queries: list[tuple] = []
    original = store.query
    monkeypatch.setattr(store, "query", lambda *args: queries.append(args) or original(*args))
    assert judge_totals(store, run_id) == (judges_used(store, run_id), spend)
    assert len(queries) == 2  # one for both, one for judges_used alone


def test_which_judge_models_of_a_run_have_a_price():
    run = {"judge": {"model": "llama3.1"}, "config": {"price": [0.5, 1.0]}}
    assert has_price(run, "llama3.1")  # the price set for the run is for its own judge
    assert not has_price(run, "fake-judge")  # another model without a list price: not the run's price
    assert has_price(run, "gpt-4o-mini")  # a list price
    assert not has_price({"judge": {"model": "llama3.1"}, "config": {}}, "llama3.1")


def test_a_resumes_price_and_caps_are_stored_for_the_model_that_resumes(store: Store):
    run_id = store.create_run(
        dataset_name="d.csv",
        items=[("q0", {"input": "q", "output": "a"}, {})],
        scorers=[{"id": "gluten-checker", "name": "Gluten checker", "options": {}}],
        judge={"model": "llama3.1"},
        config={"price": [0.5, 1.0], "concurrency": 4},
    )
    run = store.get_run(run_id)
    # A resume with qwen2.5 at $2 / $3 and a cap of $1: qwen2.5's price goes beside the run's own model's.
    config = limits_config(run, "qwen2.5", budget=BudgetCaps(max_cost_usd=1.0), price=Price(2.0, 3.0))
    store.set_run_config(run_id, config)
    run = store.get_run(run_id)
    assert run["config"] == {
        "price": [0.5, 1.0],
        "concurrency": 4,
        "budget": {"max_judge_calls": None, "max_total_tokens": None, "max_cost_usd": 1.0},
        "prices": {"qwen2.5": [2.0, 3.0]},
    }
    assert run_prices(run) == {"llama3.1": Price(0.5, 1.0), "qwen2.5": Price(2.0, 3.0)}
    assert has_price(run, "qwen2.5") and not has_price(run, "fake-judge")
    # A price for the run's own model replaces its price; list_price forgets another model's.
    config = limits_config(run, "llama3.1", price=Price(0.0, 0.0))
    assert limits_config({**run, "config": config}, "qwen2.5", list_price=True)["prices"] == {}
    assert config["price"] == [0.0, 0.0] and config["budget"] == run["config"]["budget"]
    with pytest.raises(KeyError):
        store.set_run_config("missing", {})


def _set_owner(store: Store, run_id: str, owner: str, heartbeat_age_s: float) -> None:
    with store.transaction() as db:
        db.execute(
            "UPDATE runs SET owner = ?, heartbeat_at = ? WHERE id = ?", (owner, time.time() - heartbeat_age_s, run_id)
        )


def test_a_run_whose_heartbeat_is_stale_is_interrupted_and_one_scored_by_a_live_process_is_never_claimed(
    store: Store,
):
    fresh, stale = make_run(store), make_run(store)
    # Scored on another host (its pid cannot be checked from here): the heartbeat alone tells.
    _set_owner(store, fresh, "other-host:4242", HEARTBEAT_STALE_S - 10)
    _set_owner(store, stale, "other-host:4343", HEARTBEAT_STALE_S + 10)
    assert store.mark_interrupted() == [stale]
    run = store.get_run(stale)
    assert run["status"] == "interrupted"
    assert run["stop_reason"].startswith("The process scoring it (other-host:4343) stopped writing its heartbeat 70 s")
    assert store.get_run(fresh)["status"] == "running"
    with pytest.raises(RunBusy):  # never scored by two processes
        store.claim_run(fresh)
    assert store.get_run(fresh)["owner"] == "other-host:4242"
    store.claim_run(stale)  # resumed here
    assert store.get_run(stale)["status"] == "running" and store.get_run(stale)["stop_reason"] is None


def test_the_heartbeat_keeps_a_run_running_and_stops_when_another_process_took_the_run(store: Store):
    run_id = make_run(store)
    lost = threading.Event()
    with RunHeartbeat(store, run_id, lost.set, interval=0.05):
        time.sleep(0.3)
        assert time.time() - store.get_run(run_id)["heartbeat_at"] < 1  # written every 0.05 s
        assert store.mark_interrupted() == [] and not lost.is_set()
        _set_owner(store, run_id, "other-host:4242", 0)  # another process resumed it
        assert lost.wait(5)
    assert store.get_run(run_id)["owner"] == "other-host:4242"


def test_the_heartbeat_is_written_on_entering_not_an_interval_later(store: Store):
    run_id = make_run(store)
    assert time.time() - store.get_run(run_id)["heartbeat_at"] < HEARTBEAT_STALE_S  # stamped when stored
    _set_owner(store, run_id, process_owner(), HEARTBEAT_STALE_S - 1)  # e.g. long in loading the scorers
    with RunHeartbeat(store, run_id, interval=3600):
        deadline = time.time() + 10
        while time.time() - store.get_run(run_id)["heartbeat_at"] > 10 and time.time() < deadline:
            time.sleep(0.02)
        assert time.time() - store.get_run(run_id)["heartbeat_at"] < 10  # not in an hour
    assert store.mark_interrupted() == []


def test_the_first_heartbeat_that_fails_is_logged_without_the_statement_or_its_parameters(
    store: Store, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    run_id = make_run(store)
    failures = []

    def unreachable(beaten: str) -> bool:
        failures.append(beaten)
        raise sa.exc.OperationalError("UPDATE runs SET heartbeat_at=?", ("s3cret",), OSError("server closed\nhint"))

    monkeypatch.setattr(store, "beat", unreachable)
    with caplog.at_level(logging.WARNING, logger="scorers.runs.store"), RunHeartbeat(store, run_id, interval=0.02):
        while len(failures) < 3:
            time.sleep(0.02)
    (record,) = caplog.records  # one line, not one per heartbeat
    assert record.getMessage() == (
        f"Run {run_id}: its heartbeat could not be written to {store.display_name} (OperationalError: server closed); "
        "retried every 0.02 s, further failures not logged."
    )
    assert "s3cret" not in caplog.text and "UPDATE" not in caplog.text


def test_finish_run_records_only_a_run_this_process_still_scores(store: Store):
    mine, resumed, stale = make_run(store), make_run(store), make_run(store)
    assert store.finish_run(mine, "completed")
    assert store.get_run(mine)["status"] == "completed"
    assert not store.finish_run(mine, "cancelled")  # no longer running: its end is recorded once
    assert store.get_run(mine)["status"] == "completed"
    # This process was taken as dead (e.g. suspended) and another one resumed the run: it stays that one's.
    _set_owner(store, resumed, "other-host:4242", 0)
    assert not store.finish_run(resumed, "completed")
    run = store.get_run(resumed)
    assert (run["status"], run["owner"], run["finished_at"]) == ("running", "other-host:4242", None)
    # Another process marked it interrupted (its heartbeat over HEARTBEAT_STALE_S old): the reason stays.
    _set_owner(store, stale, process_owner(), HEARTBEAT_STALE_S + 10)
    assert store.mark_interrupted() == [stale]
    assert not store.finish_run(stale, "cancelled")
    assert store.get_run(stale)["status"] == "interrupted" and "heartbeat" in store.get_run(stale)["stop_reason"]


def test_a_run_taken_by_another_process_before_it_ends_is_left_to_that_process(store: Store):
    items = [EvalItem(f"row{n}", {"input": "q", "output": "ab", "ground_truth": "abc"}) for n in range(3)]

    def taken(index: int, item: EvalItem, outcomes: list) -> None:
        # This process was taken as dead (e.g. suspended over HEARTBEAT_STALE_S) and another one resumed the run,
        # before this one's next heartbeat could notice.
        (row,) = store.query("SELECT id FROM runs")
        _set_owner(store, row["id"], "other-host:4242", 0)

    result = run_evals(items, [create_textual_difference_scorer()], store=store, on_item_complete=taken)
    assert (result.status, result.stop_reason) == ("cancelled", LOST_REASON)  # every item scored, yet not its run
    run = store.get_run(result.run_id)
    assert (run["status"], run["owner"], run["finished_at"]) == ("running", "other-host:4242", None)


def test_the_judge_cache(store: Store):
    assert store.cache_get("k") is None
    store.cache_put("k", model="m", base_url="u", reply=CachedReply('{"a": 1}', 10, 2, {"seed": 42}))
    store.cache_put("k", model="m", base_url="u", reply=CachedReply('{"a": 2}', 11, 3, {"seed": 42}))
    assert store.cache_get("k") == CachedReply('{"a": 2}', 11, 3, {"seed": 42})
    assert store.cache_clear() == 1 and store.cache_get("k") is None


def test_sql_text_with_question_marks_and_percent_signs(store: Store):
    run_id = make_run(store, name="100% done?")
    rows = store.query("SELECT id, name FROM runs WHERE name LIKE ? AND id = ?", ("100%", run_id))
    assert [(r["id"], r["name"], r[1]) for r in rows] == [(run_id, "100% done?", "100% done?")]
    assert dict(rows[0]) == {"id": run_id, "name": "100% done?"}
    assert store.query("SELECT '?' AS mark")[0]["mark"] == "?"  # a quoted ? is not a placeholder


def test_read_chunks_yields_the_rows_in_order_size_at_a_time(store: Store):
    run_id = make_run(store, n_items=7)
    sql = "SELECT item_index FROM items WHERE run_id = ? ORDER BY item_index"
    chunks = [[r["item_index"] for r in chunk] for chunk in store.read_chunks(sql, (run_id,), size=3)]
    # 7 rows 3 at a time: 3 + 3 + 1 (a chunk of one row each would make 7 chunks and a slow open).
    assert chunks == [[0, 1, 2], [3, 4, 5], [6]]


def test_read_chunks_reads_a_sqlite_file_named_by_a_relative_path(tmp_path, monkeypatch):
    # `--db s.db`, SCORER_STUDIO_DB=studio.db: the read-only connection must find the same file.
    monkeypatch.chdir(tmp_path)
    store = Store("relative.db")
    run_id = make_run(store, n_items=2)
    sql = "SELECT item_index FROM items WHERE run_id = ? ORDER BY item_index"
    assert [[r["item_index"] for r in chunk] for chunk in store.read_chunks(sql, (run_id,))] == [[0, 1]]
    store.close()


def test_a_run_reads_into_columns_with_its_cache_marks_and_texts(store: Store):
    run_id = make_run(store, n_items=3)
    store.save_result(run_id, 0, TD, {"status": "scored", "score": 0.5, "judge": {"model": "m", "cached": True}})
    store.save_result(run_id, 1, TD, {"status": "scored", "score": 0.25, "judge": {"model": "m", "cached": False}})
    store.save_result(run_id, 2, TD, {"status": "invalid_input", "error": "no output"})  # no judge at all
    table = load_run_table(store, run_id, splitters={})
    assert table.results["cached"].tolist() == [True, False, False]
    assert table.results["score"].tolist()[:2] == [0.5, 0.25] and math.isnan(table.results["score"].iloc[2])
    # make_run's items: prompt "q<i> ünï", response "a"; asked for 2 then 0, in that order.
    texts = table.texts([2, 0])
    assert texts.index.tolist() == [2, 0] and texts["input"].tolist() == ["q2 ünï", "q0 ünï"]
    assert table.texts()["output"].tolist() == ["a", "a", "a"]


def test_results_version_changes_when_an_outcome_is_replaced(store: Store):
    run_id = make_run(store, n_items=2)
    assert store.results_version(run_id) == (0, 0, None, None)
    store.save_result(run_id, 0, TD, {"status": "scored", "score": 0.5})
    store.save_result(run_id, 1, TD, {"status": "api_error", "error": "boom"})
    count, scored, total, latest = store.results_version(run_id)
    assert (count, scored, total) == (2, 1, 0.5) and latest
    # A retry scores item 1 (the same count, perhaps the same second): 2 scored, 0.5 + 0.25.
    store.save_result(run_id, 1, TD, {"status": "scored", "score": 0.25})
    assert store.results_version(run_id)[:3] == (2, 2, 0.75)


def test_the_run_list_statistics_and_the_results_version_read_only_the_covering_index(tmp_path: Path):
    # Every run view checks results_version on each rerun and History lists every run's counts:
    # both must be answered from the results_by_scorer index, never by reading the rows' JSON.
    from sqlalchemy import event

    store = Store(tmp_path / "s.db")
    run_id = make_run(store, n_items=2)
    store.save_result(run_id, 0, TD, {"status": "scored", "score": 0.5, "analysis": {"big": "x" * 1000}})
    statements: list[tuple[str, tuple]] = []
    listener = lambda _conn, _cursor, sql, params, _ctx, _many: statements.append((sql, params))  # noqa: E731
    event.listen(store.engine, "before_cursor_execute", listener)
    store.results_version(run_id)
    store.list_runs()
    event.remove(store.engine, "before_cursor_execute", listener)
    on_results = [(sql, params) for sql, params in statements if "FROM results" in sql]
    assert len(on_results) == 2
    for sql, params in on_results:
        plan = " ".join(row[3] for row in store.query(f"EXPLAIN QUERY PLAN {sql}", params))
        assert "COVERING INDEX results_by_scorer" in plan, plan
    store.close()


def test_opening_a_run_reads_its_item_ids_groups_and_columns_from_an_index_not_past_the_payloads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # SQLite keeps a row's columns in order: without the index, reading the groups and columns that follow
    # a long payload walks the payload's overflow pages, for every item of the run.
    from scorers.runs.table import load_run_table

    store = Store(tmp_path / "s.db")
    run_id = store.create_run(
        dataset_name="long.csv",
        items=[(f"q{i}", {"input": "q", "output": "x" * 20_000}, {"model": "m"}, {"votes": i}) for i in range(3)],
        scorers=[{"id": TD, "name": "Textual difference", "options": {}}],
        judge=None,
    )
    reads: list[tuple[str, list]] = []
    original = Store.read_chunks

    def logged(self, sql, params=(), size=2000):
        reads.append((sql, list(params)))
        return original(self, sql, params, size)

    monkeypatch.setattr(Store, "read_chunks", logged)
    table = load_run_table(store, run_id)
    assert table.items["group:model"].tolist() == ["m", "m", "m"] and table.items["votes"].tolist() == [0, 1, 2]
    on_items = [(sql, params) for sql, params in reads if "FROM items" in sql]
    assert len(on_items) == 1
    for sql, params in on_items:
        plan = " ".join(row[3] for row in store.query(f"EXPLAIN QUERY PLAN {sql}", params))
        assert "COVERING INDEX items_without_payload" in plan, plan
    store.close()


def test_a_new_sqlite_file_has_8_kb_pages_and_a_file_made_before_keeps_its_own(tmp_path: Path):
    from scorers.runs.store import SQLITE_PAGE_SIZE

    Store(tmp_path / "new.db").close()
    db = sqlite3.connect(tmp_path / "new.db")
    assert db.execute("PRAGMA page_size").fetchone()[0] == SQLITE_PAGE_SIZE == 8192
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
    old = sqlite3.connect(tmp_path / "old.db")  # SQLite's default page size when the file was made
    old.execute("PRAGMA page_size = 4096")
    old.execute("CREATE TABLE unrelated (x)")
    old.close()
    store = Store(tmp_path / "old.db")
    run_id = make_run(store, n_items=2)
    store.save_result(run_id, 1, TD, {"status": "scored", "score": 0.5})
    assert store.query("PRAGMA page_size")[0][0] == 4096
    assert [(r["item_index"], r["score"]) for r in store.results(run_id)] == [(1, 0.5)]
    store.close()


def test_label_history_and_saved_judges(store: Store):
    run_id = td_run(store, ["abc", "abx"])
    save_label(store, run_id, 1, TD, reviewer="ann", human_score=0.5)
    save_label(store, run_id, 1, TD, reviewer="bob", human_pass=False)
    save_label(store, run_id, 1, TD, reviewer="ann", human_score=0.6)
    assert [(h.reviewer, h.human_score) for h in label_history(store, run_id, 1, TD)] == [
        ("ann", 0.5),
        ("bob", None),
        ("ann", 0.6),
    ]
    assert current_labels(store, run_id)[(1, TD)].human_score == 0.6
    definition = {
        "name": "Politeness",
        "instructions": "Rate politeness.",
        "prompt_template": "Rate: {output}",
        "output_fields": [{"name": "polite", "type": "boolean", "description": "polite?"}],
        "score_rule": {"kind": "boolean", "field": "polite"},
    }
    assert save_judge(store, definition).version == 1
    assert save_judge(store, {**definition, "prompt_template": "Rate this: {output}"}).version == 2
    assert [j.versioned_id for j in list_judges(store)] == ["judge:politeness@v2"]


def test_batch_jobs_are_kept(store: Store):
    run_id = make_run(store)
    store.add_batch(run_id, "batch_1", "file_1", ["a", "b"])
    store.save_batch_answers(run_id, [("a", "batch_1", 200, {"ok": True}, 0), ("b", None, None, None, 1)])
    store.set_batch_status("batch_1", "expired", finished=True)
    store.add_batch(run_id, "batch_2", "file_2", ["b"])  # b sent again: its expiry count stays
    (first, second) = store.batch_jobs(run_id)
    assert (first["status"], second["status"], second["n_requests"]) == ("expired", "validating", 1)
    requests = {r["custom_id"]: r for r in store.batch_requests(run_id)}
    assert (requests["a"]["status_code"], requests["a"]["body"]) == (200, {"ok": True})
    assert (requests["b"]["batch_id"], requests["b"]["status_code"], requests["b"]["expired"]) == ("batch_2", None, 1)


# ---- which store, shown without its password


def test_urls_and_display_names():
    url = database_url("postgresql://ann:s3cret@db.internal:5432/evals")
    assert url.drivername == "postgresql+psycopg" and url.password == "s3cret"
    assert display_name(url) == "postgresql://ann:***@db.internal:5432/evals"
    assert "s3cret" not in display_name(url)
    assert display_name(database_url("/data/studio.db")) == "/data/studio.db"
    assert display_name(database_url("sqlite:///data/studio.db")) == "data/studio.db"
    with pytest.raises(ValueError, match="SQLite .* or PostgreSQL"):
        database_url("mysql://root:pw@localhost/x")


def test_an_unreachable_server_is_named_without_its_password():
    with pytest.raises(StoreError) as info:
        Store("postgresql://ann:s3cret@127.0.0.1:1/evals")
    assert "postgresql://ann:***@127.0.0.1:1/evals" in str(info.value) and "s3cret" not in str(info.value)


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path):
    bad = tmp_path / "notes.db"
    bad.write_text("not a database " * 100)
    with pytest.raises(StoreError, match="notes.db: not a usable Scorer Studio database"):
        Store(bad)


# ---- old files upgrade in place


def test_a_file_made_by_the_previous_version_upgrades_in_place_and_loses_nothing(tmp_path: Path):
    path = tmp_path / "old.db"
    shutil.copy(LEGACY, path)  # see tests/data/legacy_store/SOURCE.txt for what it holds
    store = Store(path)
    try:
        assert store.schema_version >= 4
        runs = {r["name"]: r for r in store.list_runs()}
        assert set(runs) == {"legacy run", next(n for n in runs if n.startswith("second.csv"))}
        legacy = runs["legacy run"]
        assert legacy["stats"]["prompt-alignment"] == {"n_scored": 1, "n_failed": 1, "n_input": 0, "mean": 0.84}
        results = {(r["item_index"], r["scorer_id"]): r for r in store.results(legacy["id"])}
        assert len(results) == 4
        assert results[(1, "prompt-alignment")]["status"] == "judge_output_invalid"
        assert results[(1, "prompt-alignment")]["raw_reply"] == "still not json"
        assert store.items(legacy["id"])[1]["groups"] == {"variant": "B"}
        assert "ünïcode" in json.dumps(store.items(legacy["id"])[1]["payload"], ensure_ascii=False)
        assert store.query("SELECT COUNT(*) FROM judge_cache")[0][0] == 1
        assert [j.versioned_id for j in list_judges(store)] == ["judge:gluten-check@v1"]
        history = label_history(store, legacy["id"], 0, "prompt-alignment")
        assert [(h.reviewer, h.human_score, h.comment) for h in history] == [
            ("ana", 0.8, "first"),
            ("ana", 0.7, "edited"),
        ]
        # New rows go on after the old ones: the label ids continue.
        newer = save_label(store, legacy["id"], 0, "prompt-alignment", reviewer="bo", human_score=0.9)
        assert newer.id > history[-1].id
        assert store.query("SELECT MAX(version) FROM schema_migrations")[0][0] == 3  # kept, no longer used
    finally:
        store.close()
    again = Store(path)
    try:
        assert len(again.list_runs()) == 2 and again.schema_version >= 4
    finally:
        again.close()


def test_the_head_revision_is_alembics_head():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from scorers.runs.store import MIGRATIONS_DIR, head_revision

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    assert head_revision() == ScriptDirectory.from_config(config).get_current_head()


def test_a_store_behind_head_is_upgraded_and_one_at_head_opens_without_alembic(tmp_path: Path):
    import sqlalchemy as sa
    from alembic import command
    from alembic.config import Config

    from scorers.runs.store import MIGRATIONS_DIR

    path = tmp_path / "behind.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:  # a database at revision 0009, before 0010 added the jobs table
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS_DIR))
        config.attributes["connection"] = conn
        command.upgrade(config, "0009")
        assert not conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE name = 'jobs'").all()
    engine.dispose()
    # Opened again (in a fresh process, so nothing is imported yet): upgraded to head, the jobs table is back.
    probe = (
        "import sys; from scorers.runs.store import Store, head_revision; s = Store(sys.argv[1]); "
        "print(s.schema_version == int(head_revision()), s.query('SELECT COUNT(*) FROM jobs')[0][0], "
        "'alembic' in sys.modules)"
    )
    run = [sys.executable, "-c", probe, str(path)]
    assert subprocess.run(run, cwd=REPO, capture_output=True, text=True, check=True).stdout.split() == [
        "True",
        "0",
        "True",
    ]
    # At head: the stored revision is read and Alembic is never imported.
    assert subprocess.run(run, cwd=REPO, capture_output=True, text=True, check=True).stdout.split() == [
        "True",
        "0",
        "False",
    ]


def test_a_file_of_an_unknown_newer_schema_is_refused(tmp_path: Path):
    make_legacy_db(tmp_path / "future.db", 4).execute(
        "INSERT INTO schema_migrations VALUES (99, 'x')"
    ).connection.commit()
    with pytest.raises(StoreError, match="unknown schema version 99"):
        Store(tmp_path / "future.db")


# ---- copying between the two


def fill(store: Store) -> str:
    run_id = td_run(store, ["abc", "abx", "xyz"])
    save_label(store, run_id, 0, TD, reviewer="ann", human_pass=True)
    save_label(store, run_id, 0, TD, reviewer="ann", human_pass=False, comment="second thought")
    store.cache_put("k", model="m", base_url="u", reply=CachedReply("{}", 1, 1, {}))
    store.add_batch(run_id, "b1", "f1", ["c1"])
    return run_id


def test_copy_sqlite_to_postgresql_and_back_keeps_everything(tmp_path: Path, pg_url: str):
    source = Store(tmp_path / "team.db")
    run_id = fill(source)
    target = Store(pg_url)
    copied = copy_store(source, target)
    # 1 run, 3 items, 3 results, 2 labels, 1 cached reply, 1 batch, 1 batch request; no judges.
    assert {k: v for k, v in copied.items() if v} == {
        "runs": 1,
        "items": 3,
        "results": 3,
        "labels": 2,
        "judge_cache": 1,
        "batch_jobs": 1,
        "batch_requests": 1,
    }
    assert target.results(run_id) == source.results(run_id)
    assert label_history(target, run_id, 0, TD) == label_history(source, run_id, 0, TD)
    # PostgreSQL's id sequence goes on after the copied label ids.
    assert save_label(target, run_id, 1, TD, reviewer="bo", human_pass=True).id == 3
    with pytest.raises(ValueError, match="is not empty"):
        copy_store(source, target)
    back = Store(tmp_path / "back.db")
    assert copy_store(target, back)["labels"] == 3
    assert [h.comment for h in label_history(back, run_id, 0, TD)] == ["", "second thought"]
    for s in (source, target, back):
        s.close()


def test_cli_db_copy_prints_the_counts(tmp_path: Path, capsys):
    source = Store(tmp_path / "a.db")
    fill(source)
    source.close()
    assert main(["db", "copy", str(tmp_path / "a.db"), str(tmp_path / "b.db")]) == 0
    out = capsys.readouterr().out
    assert "every table's count matches" in out and "labels" in out
    assert main(["db", "copy", str(tmp_path / "a.db"), str(tmp_path / "b.db")]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert main(["db", "copy", str(tmp_path / "missing.db"), str(tmp_path / "c.db")]) == 2


# ---- several processes at once


_WORKER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from scorers import EvalItem, Store, create_textual_difference_scorer, run_evals
from scorers.analysis.labels import save_label
role, url, run_id, go = sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
store = Store(url)
while time.time() < go:
    time.sleep(0.01)
if role in ("ann", "bob"):
    for n in range(40):
        save_label(store, run_id, n % 20, "textual-difference", reviewer=role, human_score=n / 40, comment=f"{role} {n}")
elif role == "stopper":  # resumes the interrupted run, then stops it
    store.claim_run(run_id)
    assert store.finish_run(run_id, "cancelled")
else:
    items = [EvalItem(f"{role}{i}", {"input": "q", "output": "ab" * (i % 5), "ground_truth": "abab"}) for i in range(150)]
    result = run_evals(items, [create_textual_difference_scorer()], store=store, concurrency=4, run_name=role)
    assert result.status == "completed", result.status
print("ok", role)
"""


def test_reviewers_a_batch_run_and_a_comparison_write_at_once_and_nothing_is_lost(store_target: str):
    store = Store(store_target)
    run_id = td_run(store, ["abc"] * 20)
    other = make_run(store, name="to be stopped")
    store.finish_run(other, "interrupted")  # for the stopper to resume: a run only its own process finishes
    go = time.time() + 25  # every process imported and connected by then (a busy machine)
    roles = {"ann": run_id, "bob": run_id, "batch": run_id, "comparison": run_id, "stopper": other}
    procs = {
        role: subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(REPO), role, store_target, rid, str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for role, rid in roles.items()
    }
    for role, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0 and out.strip() == f"ok {role}", err[-3000:]
    # Two reviewers × 40 labels on the same 20 rows: all 80 kept, each one's history in order.
    for reviewer in ("ann", "bob"):
        comments = [
            r["comment"] for r in store.query("SELECT comment FROM labels WHERE reviewer = ? ORDER BY id", (reviewer,))
        ]
        assert comments == [f"{reviewer} {n}" for n in range(40)]
    row_3 = [h.comment for h in label_history(store, run_id, 3, TD)]  # labels n = 3 and n = 23 of each
    assert sorted(row_3) == ["ann 23", "ann 3", "bob 23", "bob 3"]
    assert row_3.index("ann 3") < row_3.index("ann 23") and row_3.index("bob 3") < row_3.index("bob 23")
    runs = {r["name"]: r for r in store.list_runs()}
    for name in ("batch", "comparison"):
        assert runs[name]["status"] == "completed" and runs[name]["stats"][TD]["n_scored"] == 150
    # A status set by another process is what this one reads.
    assert store.get_run(other)["status"] == "cancelled"
    store.close()


def test_the_migrations_build_exactly_the_declared_tables(store: Store):
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from scorers.runs import schema_history as history
    from scorers.runs.store import METADATA

    # An index made on one database only (e.g. SQLite's items_without_payload) is not expected on the others.
    elsewhere = {
        piece.name
        for piece in vars(history).values()
        if isinstance(piece, history.AddedIndex) and piece.dialect not in (None, store.dialect)
    }
    with store.engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"include_object": lambda _obj, name, kind, *_: not (kind == "index" and name in elsewhere)}
        )
        differences = compare_metadata(context, METADATA)
    # The old numbered-migration tables (schema_migrations) exist only in upgraded old files.
    assert differences == []


def _sqlite_schema(db: sqlite3.Connection) -> dict[str, dict[str, object]]:
    """Each table of a SQLite file as SQLite sees it: columns (name, type affinity, NOT NULL of a non-key
    column, default, key position), foreign keys, named indexes, AUTOINCREMENT. Spellings that mean the same
    to SQLite compare equal: REAL and DOUBLE (both REAL affinity), DEFAULT 0 and DEFAULT '0' (an INTEGER
    column stores both as 0), and NOT NULL on a key (a key column is the row's identity either way)."""

    def affinity(declared: str) -> str:  # https://www.sqlite.org/datatype3.html#determination_of_column_affinity
        declared = declared.upper()
        if "INT" in declared:
            return "INTEGER"
        if any(word in declared for word in ("CHAR", "CLOB", "TEXT")):
            return "TEXT"
        return "REAL" if any(word in declared for word in ("REAL", "FLOA", "DOUB")) else "NUMERIC"

    skip = ("alembic_version", "schema_migrations", "sqlite_sequence")
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'") if r[0] not in skip]
    schema: dict[str, dict[str, object]] = {}
    for table in tables:
        sql = db.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
        indexes = db.execute(f"PRAGMA index_list({table})").fetchall()  # (seq, name, unique, origin, partial)
        schema[table] = {
            "columns": [
                (name, affinity(kind), bool(notnull) and not pk, None if default is None else default.strip("'"), pk)
                for _, name, kind, notnull, default, pk in db.execute(f"PRAGMA table_info({table})")
            ],
            "foreign keys": sorted(
                (row[2], row[3], row[4], row[6]) for row in db.execute(f"PRAGMA foreign_key_list({table})")
            ),
            "indexes": sorted(
                (name, [c[2] for c in db.execute(f"PRAGMA index_info({name})")])
                for _, name, _, origin, _ in indexes
                if origin == "c"  # made by CREATE INDEX (not a key's own index)
            ),
            "autoincrement": "AUTOINCREMENT" in sql.upper(),
        }
    return schema


def _upgrade_to(engine, revision: str) -> None:
    """Upgrade the database behind ``engine`` to Alembic ``revision`` (one step of the history)."""
    from alembic import command
    from alembic.config import Config

    from scorers.runs.store import MIGRATIONS_DIR

    with engine.begin() as conn:
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS_DIR))
        config.attributes["connection"] = conn
        command.upgrade(config, revision)


def test_every_revision_builds_what_the_old_stores_migration_of_that_number_built(tmp_path: Path):
    # A file the old store left at migration N is stamped at revision "000N" and upgraded from there
    # (store.LEGACY_REVISIONS), so revision 000N must build what m00N built. tests/legacy_db.py holds the
    # old store's DDL, written apart from scorers/runs/schema_history.py: a released piece of the history
    # that someone edits (instead of adding a revision) makes its revision differ from it.
    import sqlalchemy as sa

    from scorers.runs.store import LEGACY_REVISIONS

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'fresh.db'}")
    for version, revision in LEGACY_REVISIONS.items():
        _upgrade_to(engine, revision)
        old = make_legacy_db(tmp_path / f"old{version}.db", version)
        fresh = sqlite3.connect(tmp_path / "fresh.db")
        assert _sqlite_schema(fresh) == _sqlite_schema(old), f"revision {revision} differs from m{version:03d}"
        assert len(_sqlite_schema(old)) >= 4  # the comparison saw the tables (m001 made four)
        fresh.close()
        old.close()
    engine.dispose()


def test_a_table_refuses_a_column_or_index_that_another_tables_revision_added():
    import sqlalchemy as sa

    from scorers.runs import schema_history as history

    with pytest.raises(ValueError, match=r"runs: items\.columns belong to another table"):
        history.CREATE_RUNS.table(sa.MetaData(), history.ADD_RUNS_OWNER, history.ADD_ITEMS_COLUMNS)
    with pytest.raises(ValueError, match=r"runs: results\.results_stats belong to another table"):
        history.CREATE_RUNS.table(sa.MetaData(), history.ADD_RESULTS_STATS_INDEX)
    # An index a revision added belongs to its table, on the columns it names.
    results = history.CREATE_RESULTS.table(sa.MetaData(), history.ADD_RESULTS_STATS_INDEX)
    (index,) = [i for i in results.indexes if i.name == "results_stats"]
    assert [c.name for c in index.columns] == ["run_id", "scorer_id", "status", "score", "finished_at"]
    # An index a later revision dropped is gone from the table now.
    with pytest.raises(ValueError, match=r"runs: results\.results_stats belong to another table"):
        history.CREATE_RUNS.table(sa.MetaData(), history.DROP_RESULTS_STATS_INDEX)
    now = history.CREATE_RESULTS.table(
        sa.MetaData(),
        history.ADD_RESULTS_STATS_INDEX,
        history.DROP_RESULTS_STATS_INDEX,
        history.ADD_RESULTS_BY_SCORER_INDEX,
    )
    assert sorted(i.name for i in now.indexes) == ["results_by_scorer"]


# What revisions 0010 onwards added to a SQLite file when they were released, as SQLite keeps it in
# sqlite_master (the DDL SQLAlchemy emitted for them then). Revisions 0001-0009 are checked against the old
# store's DDL above; these have no older twin, so their released DDL is written down here, apart from
# scorers/runs/schema_history.py: editing a released piece (instead of adding a revision) changes it.
RELEASED_DDL = {
    "0010": {
        "CREATE TABLE jobs (\n\tid TEXT NOT NULL, \n\towner TEXT NOT NULL, \n\tkind TEXT NOT NULL, "
        "\n\tlabel TEXT NOT NULL, \n\tstatus TEXT NOT NULL, \n\tphase TEXT DEFAULT '' NOT NULL, "
        "\n\tdone INTEGER DEFAULT '0' NOT NULL, \n\ttotal INTEGER DEFAULT '0' NOT NULL, "
        "\n\tfailed INTEGER DEFAULT '0' NOT NULL, \n\tstarted_at TEXT NOT NULL, "
        "\n\telapsed_s DOUBLE DEFAULT '0' NOT NULL, \n\tmessage TEXT DEFAULT '' NOT NULL, \n\trun_id TEXT, "
        "\n\tjob_key TEXT, \n\tupdated_at DOUBLE NOT NULL, \n\tstop_requested INTEGER DEFAULT '0' NOT NULL, "
        "\n\tPRIMARY KEY (id)\n)",
    },
    "0011": {
        "CREATE TABLE rejudges (\n\tid INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, \n\trun_id TEXT NOT NULL, "
        "\n\tscorer_id TEXT NOT NULL, \n\tcreated_at TEXT NOT NULL, \n\tparams TEXT NOT NULL, "
        "\n\trepetitions TEXT NOT NULL, \n\tFOREIGN KEY(run_id) REFERENCES runs (id) ON DELETE CASCADE\n)",
        "CREATE INDEX rejudges_by_run ON rejudges (run_id, scorer_id, id)",
    },
    "0012": {"CREATE INDEX results_stats ON results (run_id, scorer_id, status, score, finished_at)"},
    "0013": {"CREATE INDEX results_by_scorer ON results (run_id, scorer_id, item_index, status, score, finished_at)"},
    "0014": {"CREATE INDEX items_without_payload ON items (run_id, item_index, item_id, groups, columns)"},
    "0015": {  # ALTER TABLE ADD COLUMN rewrites the table's DDL
        "CREATE TABLE runs (\n\tid TEXT NOT NULL, \n\tname TEXT NOT NULL, \n\tcreated_at TEXT NOT NULL, "
        "\n\tfinished_at TEXT, \n\tstatus TEXT NOT NULL, \n\tdataset_name TEXT NOT NULL, "
        "\n\tn_items INTEGER NOT NULL, \n\tscorers TEXT NOT NULL, \n\tjudge TEXT, \n\tmapping TEXT, "
        "\n\tconfig TEXT, owner TEXT, stop_reason TEXT, heartbeat_at DOUBLE, \n\tPRIMARY KEY (id)\n)",
    },
    "0016": {  # ALTER TABLE ADD COLUMN rewrites the tables' DDL
        "CREATE TABLE runs (\n\tid TEXT NOT NULL, \n\tname TEXT NOT NULL, \n\tcreated_at TEXT NOT NULL, "
        "\n\tfinished_at TEXT, \n\tstatus TEXT NOT NULL, \n\tdataset_name TEXT NOT NULL, "
        "\n\tn_items INTEGER NOT NULL, \n\tscorers TEXT NOT NULL, \n\tjudge TEXT, \n\tmapping TEXT, "
        "\n\tconfig TEXT, owner TEXT, stop_reason TEXT, heartbeat_at DOUBLE, "
        "left_judge_requests INTEGER DEFAULT '0' NOT NULL, \n\tPRIMARY KEY (id)\n)",
        "CREATE TABLE results (\n\trun_id TEXT NOT NULL, \n\titem_index INTEGER NOT NULL, "
        "\n\tscorer_id TEXT NOT NULL, \n\tstatus TEXT NOT NULL, \n\tscore DOUBLE, \n\treason TEXT, "
        "\n\tanalysis TEXT, \n\tdetails TEXT, \n\terror TEXT, \n\traw_reply TEXT, \n\tjudge TEXT, "
        "\n\tprompt_tokens INTEGER DEFAULT '0' NOT NULL, \n\tcompletion_tokens INTEGER DEFAULT '0' NOT NULL, "
        "\n\tjudge_calls INTEGER DEFAULT '0' NOT NULL, \n\tlatency_s DOUBLE, \n\tfinished_at TEXT NOT NULL, "
        "judge_requests INTEGER DEFAULT '0' NOT NULL, \n\tPRIMARY KEY (run_id, item_index, scorer_id), "
        "\n\tFOREIGN KEY(run_id) REFERENCES runs (id) ON DELETE CASCADE\n)",
    },
}


def test_every_revision_after_the_old_store_adds_what_it_added_when_released(tmp_path: Path):
    import sqlalchemy as sa

    from scorers.runs.store import head_revision

    # A new revision must write down what it adds here, so that it is frozen from then on too.
    assert max(RELEASED_DDL) == head_revision()
    path = tmp_path / "fresh.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    before: set[str] = set()
    for revision in ["0009", *sorted(RELEASED_DDL)]:
        _upgrade_to(engine, revision)
        db = sqlite3.connect(path)
        now = {sql for (sql,) in db.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL")}
        db.close()
        if revision in RELEASED_DDL:
            assert now - before == RELEASED_DDL[revision], f"revision {revision} adds other DDL than it did"
        before = now
    engine.dispose()


def test_revision_0016_counts_an_outcome_stored_before_it_as_one_request_per_call(store_target: str):
    # A run stored at revision 0015: its outcome made 3 judge calls, its failed requests then uncounted. Upgraded,
    # the outcome's requests are its 3 calls, and the run left no requests of outcomes to do.
    import sqlalchemy as sa

    from scorers.runs.store import database_url

    engine = sa.create_engine(database_url(store_target))
    _upgrade_to(engine, "0015")
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO runs (id, name, created_at, status, dataset_name, n_items, scorers) "
                "VALUES ('r1', 'old', '2026-01-01T00:00:00', 'completed', 'd', 1, '[]')"
            )
        )
        conn.execute(
            sa.text(
                "INSERT INTO results (run_id, item_index, scorer_id, status, judge_calls, finished_at) "
                "VALUES ('r1', 0, 'prompt-alignment', 'scored', 3, '2026-01-01T00:00:00')"
            )
        )
    engine.dispose()
    store = Store(store_target)
    try:
        ((row,), run) = store.results("r1"), store.get_run("r1")
        assert (row["judge_calls"], row["judge_requests"], run["left_judge_requests"]) == (3, 3, 0)
    finally:
        store.close()


def variant_run(store: Store) -> str:
    """A run of two variants, a and b, as Compare stores one (item ids "row::variant"), scored by textual
    difference against the ground truth: a scores 1 ("4"/"4") and 1 ("abcd"/"abcd"); b scores 0.75 ("=1+1" vs
    "=1+2": 2·3/8) and 0 ("ab" vs "cd"), and has a third item without a response (not scored: missing input)."""
    rows = [("1", "a", "4", "4"), ("1", "b", "=1+1", "=1+2"), ("2", "a", "abcd", "abcd"), ("2", "b", "ab", "cd")]
    items = [
        EvalItem(f"{r}::{v}", {"input": "q", "output": o, "ground_truth": g}, {"variant": v, "row_id": r})
        for r, v, o, g in rows
    ]
    items.append(EvalItem("3::b", {"input": "q", "ground_truth": "x"}, {"variant": "b", "row_id": "3"}))
    result = run_evals(
        items, [create_textual_difference_scorer()], store=store, mapping={"groups": ["variant", "row_id"]}
    )
    return result.run_id


def test_list_runs_gives_a_run_of_variants_a_mean_per_variant(store):
    run_id = variant_run(store)
    run_evals([EvalItem("x", {"input": "q", "output": "q"})], [create_textual_difference_scorer()], store=store)
    # Made in the same second: on PostgreSQL their order is the ids'.
    (variants,) = (r for r in store.list_runs() if r["id"] == run_id)
    (plain,) = (r for r in store.list_runs() if r["id"] != run_id)
    assert plain["variant_stats"] == {}
    # Over all 4 scored responses (1 + 0.75 + 1 + 0) / 4 = 0.6875 mixes the variants; each has its own mean.
    assert variants["stats"]["textual-difference"]["mean"] == pytest.approx(0.6875)
    assert variants["variant_stats"] == {
        "textual-difference": {
            "a": {"n_scored": 2, "n_failed": 0, "n_input": 0, "mean": pytest.approx(1.0)},
            "b": {"n_scored": 2, "n_failed": 1, "n_input": 1, "mean": pytest.approx(0.375)},  # (0.75 + 0) / 2
        }
    }
