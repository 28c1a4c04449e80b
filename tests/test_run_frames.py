"""A stored run in columns (scorers/runs/table.py) and the view tables built from it (dashboard/run_frames.py).

Expected numbers are worked out by hand in the comments."""

from __future__ import annotations

import gc
import json
import math
import threading
import time
from collections import Counter
from typing import Any

import pytest

from dashboard.batch import build_items, truncate
from dashboard.run_frames import (
    aggregates,
    dimension_aggregates,
    filter_results,
    group_means,
    items_left,
    page_rows,
    sort_results,
    status_counts,
)
from scorers import (
    EvalItem,
    InvalidInputError,
    ScoreResult,
    Store,
    create_textual_difference_scorer,
    load_dataset,
    run_evals,
)
from scorers.runs.table import collector_paused, json_documents, load_outcomes, load_run_table

CSV = (
    b"id,prompt,response,reference,variant,votes,note\n"
    b"a,Say four,4,4,A,3,first\nb,Add,=1+1,=1+2,A,1,\nc,Say hi,,hi,B,0,x\nd,Say bye,bye,bye,,2,y\n"
)


class FailingScorer:
    """Scores 1, except that it fails on the output "bad"."""

    id = "slow"
    name = "Slow"

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def run(self, payload: dict[str, Any]) -> ScoreResult:
        time.sleep(0)
        text = payload["output"]["text"]
        with self._lock:
            self.calls[text] += 1
        if text == "bad":
            raise InvalidInputError("bad output", field="output")
        return ScoreResult(scorer=self.id, score=1.0, reason=None, analyze_step_result={})


@pytest.fixture
def store(tmp_path) -> Store:
    db = Store(tmp_path / "runs.db")
    yield db
    db.close()


def small_table(store: Store):
    dataset = load_dataset(CSV, name="small.csv")
    items = build_items(
        dataset, {"input": "prompt", "output": "response", "ground_truth": "reference", "id": "id"}, ["variant"]
    )
    items[3] = EvalItem(
        items[3].item_id, {**items[3].payload, "output": {"text": "bad"}}, items[3].groups, items[3].columns
    )
    result = run_evals(items, [create_textual_difference_scorer(), FailingScorer()], store=store)
    return load_run_table(store, result.run_id)


def test_table_has_items_texts_groups_dataset_columns_and_flat_dimensions(store):
    table = small_table(store)
    assert table.items["item_id"].tolist() == ["a", "b", "c", "d"]
    texts = table.texts()
    assert texts.loc[1, "output"] == "=1+1" and texts.loc[1, "ground_truth"] == "=1+2"
    assert table.items["group:variant"].tolist() == ["A", "A", "B", ""]
    # The unmapped columns are carried through as loaded (CSV cells are text; a blank cell is empty).
    assert table.items["votes"].tolist() == ["3", "1", "0", "2"]
    assert table.items["note"].tolist() == ["first", "", "x", "y"]
    assert len(table.results) == 8 and table.n_stored == 8
    assert table.dimensions == {"textual-difference": ["textual_difference.ratio", "textual_difference.confidence"]}
    td = table.results[table.results["scorer"] == "textual-difference"].set_index("item_index")
    # ratio: a "4"/"4" → 1; b "=1+2" vs "=1+1": LCS 3 of 8 chars → 0.75; c "hi" vs "" → 0; d "bye"/"bad": 2/6.
    assert td["textual_difference.ratio"].tolist() == pytest.approx([1.0, 0.75, 0.0, 1 / 3])
    slow = table.results[table.results["scorer"] == "slow"].set_index("item_index")
    assert slow.loc[3, "status"] == "invalid_input" and math.isnan(slow.loc[3, "score"])
    assert math.isnan(slow.loc[0, "textual_difference.ratio"])  # another scorer's dimension: empty, not 0


@pytest.mark.parametrize("chunk", [2000, 1, 4])
def test_dimension_columns_come_in_order_of_first_appearance_down_the_rows(store, monkeypatch, chunk):
    # Read in one chunk, then a row at a time and in chunks of 4 (rows 0-3, 4-5): the same table.
    original = Store.read_chunks
    monkeypatch.setattr(
        Store, "read_chunks", lambda self, sql, params=(), size=2000: original(self, sql, params, chunk)
    )
    run_id = store.create_run(
        dataset_name="d.csv",
        items=[(f"i{i}", {"input": "q", "output": "a"}, {}) for i in range(3)],
        scorers=[{"id": "a-x", "name": "A", "options": {}}, {"id": "b", "name": "B", "options": {}}],
        judge=None,
    )
    rows = [
        (0, "a-x", {"status": "scored", "score": 1.0, "analysis": {"p": 0.5}}),
        (0, "b", {"status": "scored", "score": 1.0, "analysis": {"q": 1, "r": 0.25}}),
        (1, "a-x", {"status": "scored", "score": 1.0, "analysis": {"s": 0.75, "p": 0.0}}),
        (1, "b", {"status": "api_error", "error": "boom", "analysis": {"q": 9}}),  # a failure: no dimensions
        (2, "a-x", {"status": "scored", "score": 1.0, "analysis": {}}),
        (2, "b", {"status": "scored", "score": 1.0, "analysis": {"r": 0.5}}),
    ]
    store.save_results(run_id, rows)
    table = load_run_table(store, run_id, splitters={"a-x": dict, "b": dict})
    # Rows go item by item, scorer by scorer: (0,a-x) p; (0,b) q, r; (1,a-x) s, p; (1,b) failed; (2,a-x) none;
    # (2,b) r. First appearances: a_x.p (row 1), b.q and b.r (row 2), a_x.s (row 3).
    assert table.dimensions == {"a-x": ["a_x.p", "a_x.s"], "b": ["b.q", "b.r"]}
    dims = ["a_x.p", "b.q", "b.r", "a_x.s"]
    assert [c for c in table.results.columns if "." in c] == dims
    nan = float("nan")
    expected = {
        "a_x.p": [0.5, nan, 0.0, nan, nan, nan],
        "b.q": [nan, 1.0, nan, nan, nan, nan],  # the failure's stored analysis is not read
        "b.r": [nan, 0.25, nan, nan, nan, 0.5],
        "a_x.s": [nan, nan, 0.75, nan, nan, nan],
    }
    for column, values in expected.items():
        assert table.results[column].tolist() == pytest.approx(values, nan_ok=True), column
    assert table.results["analysis"].isna().tolist() == [False, False, False, True, False, False]
    assert table.results["status"].tolist() == ["scored", "scored", "scored", "api_error", "scored", "scored"]
    assert table.results["error"].tolist()[3] == "boom" and str(table.results["error"].dtype) == "string"


def test_the_collector_is_paused_while_a_table_is_built_and_back_on_after(store, monkeypatch):
    run_id = store.create_run(
        dataset_name="d.csv", items=[("i0", {"input": "q", "output": "a"}, {})], scorers=[], judge=None
    )
    seen: list[bool] = []
    original = Store.get_run
    monkeypatch.setattr(Store, "get_run", lambda self, rid: seen.append(gc.isenabled()) or original(self, rid))
    assert gc.isenabled()
    load_run_table(store, run_id)
    assert seen == [False] and gc.isenabled()
    with pytest.raises(KeyError):
        load_run_table(store, "no-such-run")
    assert gc.isenabled()  # back on after a failed build too
    with collector_paused():
        with collector_paused():  # nested (or another thread's): on again only when the last one ends
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # off before: left off
    finally:
        gc.enable()


def test_an_analysis_that_cannot_be_read_or_split_gives_that_row_no_dimensions(store):
    run_id = store.create_run(
        dataset_name="d.csv",
        items=[(f"i{i}", {"input": "q", "output": "a"}, {}) for i in range(3)],
        scorers=[{"id": "s", "name": "S", "options": {}}],
        judge=None,
    )
    analyses = [{"p": 0.5}, [1, 2, 3], {"p": 0.25}]  # dict([1, 2, 3]) raises TypeError: not splittable
    store.save_results(
        run_id, [(i, "s", {"status": "scored", "score": 1.0, "analysis": a}) for i, a in enumerate(analyses)]
    )
    with store.transaction() as conn:  # a stored analysis that is not JSON at all
        conn.execute("UPDATE results SET analysis = '{not json' WHERE run_id = ? AND item_index = 2", (run_id,))
    table = load_run_table(store, run_id, splitters={"s": dict})
    # Item 0 splits to p = 0.5; item 1 cannot be split and item 2 cannot be decoded: no dimension, not a failure.
    assert table.results["s.p"].tolist() == pytest.approx([0.5, float("nan"), float("nan")], nan_ok=True)
    assert table.results["status"].tolist() == ["scored"] * 3


def test_json_documents_decodes_in_chunks_and_refuses_a_text_of_two_documents():
    texts = ['{"a": 1}', None, "", "[2]", "3"]
    assert list(json_documents(texts, chunk=2)) == [{"a": 1}, {}, {}, [2], 3]
    with pytest.raises(json.JSONDecodeError):
        list(json_documents(['{"a": 1}', "1, 2"]))
    # Asked to, an unreadable text gives the value named, and the others of its chunk are still read.
    assert list(json_documents(['{"a": 1}', "1, 2", "{", "[3]"], chunk=3, unreadable="?")) == [{"a": 1}, "?", "?", [3]]


def test_json_documents_fast_reads_the_values_json_reads():
    # orjson reads the first chunk; it refuses the second (the NaN that json writes), which json reads
    # a text at a time; the third holds a lone surrogate (orjson refuses it too).
    texts = ['{"ratio": 0.25, "n": 3}', "[1, 2.5]", '{"x": NaN}', None, '"\\ud800"']
    fast = list(json_documents(texts, chunk=2, fast=True))
    assert fast[:2] == [{"ratio": 0.25, "n": 3}, [1, 2.5]] and isinstance(fast[0]["n"], int)
    assert math.isnan(fast[2]["x"]) and fast[3] == {}
    assert fast[4] == "\ud800"
    with pytest.raises(json.JSONDecodeError):  # a text of two documents is refused, as without fast
        list(json_documents(['{"a": 1}', "1, 2"], fast=True))
    assert list(json_documents(['{"a": 1}', "1, 2", "{"], fast=True, unreadable="?")) == [{"a": 1}, "?", "?"]


class ReadLog:
    """The SQL a store runs through ``read_chunks``, with its parameters."""

    def __init__(self, store: Store, monkeypatch: pytest.MonkeyPatch):
        self.calls: list[tuple[str, list[Any]]] = []
        original = store.read_chunks

        def logged(sql, params=(), size=2000):
            self.calls.append((sql, list(params)))
            return original(sql, params, size)

        monkeypatch.setattr(store, "read_chunks", logged)

    def payload_reads(self) -> list[list[Any]]:
        return [params for sql, params in self.calls if "payload" in sql]


def test_texts_are_read_for_the_rows_asked_for_and_all_once_for_a_search(store, monkeypatch):
    table = small_table(store)
    log = ReadLog(store, monkeypatch)
    assert "output" not in table.items.columns  # opening a run reads no payload
    page = page_rows(table, table.results.iloc[2:4])  # item b's two outcomes
    assert page["output"].tolist() == ["=1+1", "=1+1"] and page["input"].tolist() == ["Add", "Add"]
    assert log.payload_reads() == [[table.run["id"], 1]]  # only item b's payload was read
    picked = table.texts([3, 1, 3])  # in the order asked, repeats kept
    assert picked.index.tolist() == [3, 1, 3] and picked["output"].tolist() == ["bad", "=1+1", "bad"]
    # A search reads every item's texts once, then keeps them.
    assert filter_results(table, search="SAY H")["item_index"].unique().tolist() == [2]
    assert filter_results(table, search="bye")["item_index"].unique().tolist() == [3]
    assert len(log.payload_reads()) == 3 and log.payload_reads()[-1] == [table.run["id"]]
    assert table.texts()["output"].tolist() == ["4", "=1+1", "", "bad"]
    page_rows(table, table.results.iloc[:2])
    assert len(log.payload_reads()) == 3  # the kept texts serve the next pages


def test_filters_search_sort_and_page(store):
    table = small_table(store)
    assert len(filter_results(table, statuses=["invalid_input"])) == 1
    td_only = filter_results(table, scorers=["textual-difference"])
    assert set(td_only["scorer"]) == {"textual-difference"}
    in_range = filter_results(table, scorers=["textual-difference"], score_range=(0.5, 0.8))
    assert in_range["item_index"].tolist() == [1]
    # A row without a score is kept by the range filter (its status decides).
    assert 3 in filter_results(table, scorers=["slow"], score_range=(0.5, 0.8))["item_index"].tolist()
    assert filter_results(table, search="=1+1")["item_index"].unique().tolist() == [1]
    assert filter_results(table, search="BAD OUTPUT")["item_index"].tolist() == [3]  # the error, any case
    assert len(filter_results(table, search="  ")) == 8
    assert filter_results(table, item_indexes=[0, 2])["item_index"].unique().tolist() == [0, 2]

    ranked = sort_results(td_only, "textual_difference.ratio", descending=True)
    assert ranked["item_index"].tolist() == [0, 1, 3, 2]
    assert sort_results(td_only, None)["item_index"].tolist() == [0, 1, 2, 3]

    page = page_rows(table, td_only.iloc[:2])
    assert list(page.columns[:7]) == ["item_index", "item_id", "scorer", "score", "status", "cached", "error"]
    assert page["item_id"].tolist() == ["a", "b"]
    assert "textual_difference.ratio" in page.columns and "group:variant" in page.columns
    assert truncate("word " * 100, 20) == "word word word word…"


def test_aggregates_count_failures_apart(store):
    table = small_table(store)
    frame = aggregates(table, {"slow": "Slow"}).set_index("scorer")
    # Slow: 1, 1, 1 scored, "bad" failed → mean 1 over 3 items, 1 failed (not a 0).
    assert frame.loc["Slow", "mean"] == 1.0
    assert (frame.loc["Slow", "n scored"], frame.loc["Slow", "n not scored"], frame.loc["Slow", "n pending"]) == (
        3,
        1,
        0,
    )
    # Textual difference: (1 + 0.75 + 0 + 1/3) / 4 = 0.5208…; median (1/3 + 0.75) / 2.
    td = frame.loc["textual-difference"]
    assert td["mean"] == pytest.approx((1 + 0.75 + 0 + 1 / 3) / 4)
    assert td["median"] == pytest.approx((1 / 3 + 0.75) / 2)
    assert (td["min"], td["max"], td["n scored"], td["n not scored"]) == (0.0, 1.0, 4, 0)
    dims = dimension_aggregates(table).set_index("dimension")
    # Confidence: 1, 1, 0 ("" vs "hi"), 1 → mean 0.75.
    assert dims.loc["Confidence", "mean"] == pytest.approx(0.75)
    assert dims.loc["Confidence", "n scored"] == 4
    assert dims.loc["Ratio", "column"] == "textual_difference.ratio"


def test_aggregates_by_variant_keep_each_variants_outcomes_apart(store):
    table = small_table(store)
    frame = aggregates(table, {"slow": "Slow"}, by="variant")
    assert list(frame.columns[:2]) == ["variant", "scorer"]
    # Variants in the order of their first item: A (a, b), B (c), then d without one.
    td = frame[frame["scorer"] == "textual-difference"].set_index("variant")
    assert td.index.tolist() == ["A", "B", "(blank)"]
    # A: (1 + 0.75) / 2 = 0.875 over 2; B: "" vs "hi" = 0; (blank): "bad" vs "bye" = 2·1/6 = 1/3.
    assert td["mean"].tolist() == pytest.approx([0.875, 0.0, 1 / 3])
    assert td["n scored"].tolist() == [2, 1, 1]
    slow = frame[frame["scorer"] == "Slow"].set_index("variant")
    # Slow scores 1 on a, b, c and fails on d ("bad"): counted in its variant, never averaged.
    assert slow["n scored"].tolist() == [2, 1, 0] and slow["n not scored"].tolist() == [0, 0, 1]
    assert slow["n pending"].tolist() == [0, 0, 0] and math.isnan(slow.loc["(blank)", "mean"])
    dims = dimension_aggregates(table, by="variant")
    confidence = dims[dims["dimension"] == "Confidence"].set_index("variant")
    # Confidence 1, 1 (A), 0 (B: "" vs "hi"), 1 (d).
    assert confidence["mean"].tolist() == pytest.approx([1.0, 0.0, 1.0])


def test_status_counts_count_every_outcome_and_the_items_left(store):
    table = small_table(store)
    # Textual difference scored all 4 items; Slow scored 3 and failed on item d (invalid input).
    assert list(status_counts(table, {"slow": "Slow"}).itertuples(index=False, name=None)) == [
        ("textual-difference", "scored", 4),
        ("Slow", "scored", 3),
        ("Slow", "invalid_input", 1),
    ]
    run_id = store.create_run(
        dataset_name="d.csv",
        items=[(f"i{i}", {"input": "q", "output": "a"}, {}) for i in range(3)],
        scorers=[{"id": "slow", "name": "Slow", "options": {}}],
        judge=None,
    )
    store.save_result(run_id, 0, "slow", {"status": "scored", "score": 1.0})
    # 3 items, 1 outcome stored: 2 pending.
    stopped = load_run_table(store, run_id, splitters={})
    assert list(status_counts(stopped).itertuples(index=False, name=None)) == [
        ("slow", "scored", 1),
        ("slow", "pending", 2),
    ]


def test_group_means_average_scored_items_only(store):
    table = small_table(store)
    means = group_means(table, "variant")
    by = {(r.group, r.scorer): r for r in means.itertuples()}
    assert by[("A", "textual-difference")].mean == pytest.approx((1 + 0.75) / 2)
    assert by[("B", "textual-difference")].mean == 0.0
    assert by[("(blank)", "slow")].n_failed == 1 and math.isnan(by[("(blank)", "slow")].mean)
    with pytest.raises(ValueError, match="no group column"):
        group_means(table, "model")


def test_items_left_and_one_rows_detail(store):
    table = small_table(store)
    assert items_left(table) == 0
    # Item d's slow outcome is invalid input: the stored input would fail the same way, so not retried.
    assert items_left(table, retry_failed=True) == 0
    item, outcomes = load_outcomes(store, table.run["id"], 1)
    assert item.item_id == "b" and item.columns == {"votes": "1", "note": ""}
    assert outcomes["textual-difference"].score == pytest.approx(0.75)
    assert outcomes["slow"].result.score == 1.0
    with pytest.raises(KeyError):
        load_outcomes(store, table.run["id"], 9)
