"""Exports of run results: CSV neutralisation, JSON Lines, the seeds' JSON shape, Parquet."""

from __future__ import annotations

import csv
import io
import json
import math

import pandas as pd
import pytest
from fake_openai import Reply
from judge_data import resumed_with_another_judge, settings_for, single_analysis

from scorers import (
    EvalItem,
    EvalRunResult,
    ItemOutcome,
    ScoreResult,
    ScoreStatus,
    Store,
    create_prompt_alignment_scorer,
    create_textual_difference_scorer,
    load_run,
    run_evals,
)
from scorers.runs.export import (
    export_run,
    format_for_path,
    item_texts,
    results_frame,
    to_csv_bytes,
    to_jsonl_bytes,
    to_parquet_bytes,
    to_seed_json_bytes,
    write_run_export,
)
from scorers.runs.table import load_run_table

ITEMS = [
    EvalItem(
        "a",
        {"input": [{"role": "user", "content": "Say hi"}], "output": {"text": "hi there"}, "ground_truth": "hello"},
        {"variant": "A"},
    ),
    EvalItem("b", {"input": "=SUM(A1)", "output": "-2 apples"}, {"variant": "B"}),
    EvalItem("c", {"input": "Explain", "output": {"text": ""}}, {"variant": "A"}),
]


def _result() -> EvalRunResult:
    """Two scorers over three items; item c failed for one of them (hand-written scores)."""

    def scored(index: int, scorer: str, score: float, analysis: dict) -> ItemOutcome:
        return ItemOutcome(
            index,
            ITEMS[index].item_id,
            scorer,
            ScoreStatus.SCORED,
            ScoreResult(scorer, score, f"{scorer} reason {index}", analysis),
        )

    outcomes = [
        scored(0, "judge", 0.5, {"verdict": "ok", "parts": [1, 2]}),
        scored(0, "diff", 0.25, {"ratio": 0.5}),
        scored(1, "judge", 1.0, {"verdict": "great", "parts": []}),
        scored(1, "diff", 0.0, {"ratio": 0.0}),
        ItemOutcome(2, "c", "judge", ScoreStatus.INVALID_INPUT, error="output: the response to evaluate is empty"),
        scored(2, "diff", 0.75, {"ratio": 1.0}),
    ]
    return EvalRunResult("run123", outcomes, "completed", 3, ["judge", "diff"], None)


def _csv_rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


# ---- CSV


@pytest.mark.parametrize("cell", ["=SUM(A1)", "+1", "-2", "@x", "\tx", "\rx"])
def test_csv_neutralises_formula_cells_in_text_columns(cell):
    frame = pd.DataFrame({"output": [cell], "score": [0.5]})
    rows = _csv_rows(to_csv_bytes(frame))
    assert rows[0]["output"] == "'" + cell
    assert rows[0]["score"] == "0.5"


@pytest.mark.parametrize("cell", ["hello", "a=b", "x+1", "email me@x", " =1", "'quoted", ""])
def test_csv_leaves_normal_text_alone(cell):
    rows = _csv_rows(to_csv_bytes(pd.DataFrame({"output": [cell]})))
    assert rows[0]["output"] == cell


def test_csv_leaves_numeric_columns_and_numbers_in_text_columns_alone():
    frame = pd.DataFrame(
        {
            "score": [-1.5, 2.0],
            "tokens": [-3, 4],
            "mixed": pd.Series([-7, "-7"], dtype=object),  # a number in a text column is still a number
            "text": pd.Series(["-1.5", "ok"], dtype="str"),
        }
    )
    rows = _csv_rows(to_csv_bytes(frame))
    assert [r["score"] for r in rows] == ["-1.5", "2.0"]
    assert [r["tokens"] for r in rows] == ["-3", "4"]
    assert [r["mixed"] for r in rows] == ["-7", "'-7"]
    assert [r["text"] for r in rows] == ["'-1.5", "ok"]


def test_csv_json_encodes_nested_values_and_neutralises_the_header():
    frame = pd.DataFrame({"analysis": pd.Series([{"a": [1, "x"]}, ["-y"]], dtype=object), "=cmd": ["v", "w"]})
    data = to_csv_bytes(frame)
    rows = _csv_rows(data)
    assert json.loads(rows[0]["analysis"]) == {"a": [1, "x"]}
    assert json.loads(rows[1]["analysis"]) == ["-y"]
    assert data.decode().split("\r\n")[0] == "analysis,'=cmd"


def test_csv_of_a_run_keeps_failures_as_empty_scores_with_status_and_error():
    data = to_csv_bytes(results_frame(_result(), ITEMS))
    rows = _csv_rows(data)
    assert len(rows) == 6
    failed = [r for r in rows if r["status"] != "scored"]
    assert failed == [r for r in rows if r["item_id"] == "c" and r["scorer"] == "judge"]
    assert failed[0]["status"] == "invalid_input"
    assert failed[0]["score"] == ""
    assert failed[0]["error"] == "output: the response to evaluate is empty"
    b = next(r for r in rows if r["item_id"] == "b" and r["scorer"] == "diff")
    assert b["input"] == "'=SUM(A1)" and b["output"] == "'-2 apples"
    assert b["score"] == "0.0"
    assert b["group:variant"] == "B"
    a = next(r for r in rows if r["item_id"] == "a" and r["scorer"] == "judge")
    assert json.loads(a["analysis"]) == {"verdict": "ok", "parts": [1, 2]}
    assert a["ground_truth"] == "hello" and a["run_id"] == "run123"


def test_csv_is_utf8():
    data = to_csv_bytes(pd.DataFrame({"output": ["グルテンフリー ✓"]}))
    assert data.decode("utf-8").splitlines()[1] == "グルテンフリー ✓"


# ---- JSON Lines


def test_jsonl_has_one_object_per_item_and_scorer_with_null_for_nan():
    lines = to_jsonl_bytes(results_frame(_result(), ITEMS)).decode("utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [(r["item_id"], r["scorer"]) for r in records] == [
        ("a", "judge"),
        ("a", "diff"),
        ("b", "judge"),
        ("b", "diff"),
        ("c", "judge"),
        ("c", "diff"),
    ]
    failed = records[4]
    assert failed["status"] == "invalid_input" and failed["score"] is None and failed["reason"] is None
    assert failed["error"] == "output: the response to evaluate is empty"
    assert failed["analysis"] is None
    assert records[0]["analysis"] == {"verdict": "ok", "parts": [1, 2]}
    assert records[2]["input"] == "=SUM(A1)"  # JSON is not a spreadsheet: nothing is neutralised
    assert records[3]["output"] == "-2 apples"
    assert "NaN" not in "".join(lines)


def test_jsonl_round_trips_through_pandas():
    frame = results_frame(_result(), ITEMS)
    back = pd.read_json(io.BytesIO(to_jsonl_bytes(frame)), lines=True)
    assert list(back.columns) == list(frame.columns)
    assert back["score"].tolist()[:4] == [0.5, 0.25, 1.0, 0.0]
    assert math.isnan(back["score"][4])


def test_jsonl_writes_nan_and_numpy_values_as_plain_json():
    frame = pd.DataFrame({"score": [float("nan"), 1.5], "n": [1, 2], "nested": [{"x": float("inf")}, None]})
    records = [json.loads(line) for line in to_jsonl_bytes(frame).decode().splitlines()]
    assert records == [{"score": None, "n": 1, "nested": {"x": None}}, {"score": 1.5, "n": 2, "nested": None}]


# ---- the seeds' JSON shape


def test_seed_json_shape_scores_and_failures():
    doc = json.loads(to_seed_json_bytes(_result(), ITEMS))
    assert doc["runId"] == "run123"
    # judge: scored 0.5 and 1.0, one failure -> mean 0.75, sample std sqrt(2 * 0.25**2 / 1)
    assert doc["scores"]["judge"] == {
        "mean": 0.75,
        "median": 0.75,
        "std": pytest.approx(math.sqrt(0.125)),
        "min": 0.5,
        "max": 1.0,
        "nScored": 2,
        "nFailed": 1,
    }
    # diff: 0.25, 0.0, 0.75 -> mean 1/3, median 0.25
    assert doc["scores"]["diff"]["mean"] == pytest.approx(1 / 3)
    assert doc["scores"]["diff"]["median"] == 0.25
    assert doc["scores"]["diff"]["nScored"] == 3 and doc["scores"]["diff"]["nFailed"] == 0
    first = doc["items"][0]
    assert first["itemId"] == "a" and first["input"] == "Say hi" and first["output"] == "hi there"
    assert first["groundTruth"] == "hello"
    assert first["scorerResults"]["judge"] == {
        "status": "scored",
        "score": 0.5,
        "reason": "judge reason 0",
        "analyzeStepResult": {"verdict": "ok", "parts": [1, 2]},
        "error": None,
        "judgeModel": None,  # the hand-written result records no judge
    }
    failed = doc["items"][2]["scorerResults"]["judge"]
    assert failed == {
        "status": "invalid_input",
        "score": None,
        "reason": None,
        "analyzeStepResult": None,
        "error": "output: the response to evaluate is empty",
        "judgeModel": None,
    }
    assert doc["items"][1]["groundTruth"] is None


def test_seed_json_of_a_stopped_run_lists_items_without_outcomes():
    result = EvalRunResult("r", [], "cancelled", 3, ["judge"], None)
    doc = json.loads(to_seed_json_bytes(result, ITEMS))
    assert [i["scorerResults"] for i in doc["items"]] == [{}, {}, {}]
    assert doc["scores"]["judge"] == {
        "mean": None,
        "median": None,
        "std": None,
        "min": None,
        "max": None,
        "nScored": 0,
        "nFailed": 0,
    }


# ---- Parquet


def test_parquet_round_trip():
    frame = results_frame(_result(), ITEMS)
    back = pd.read_parquet(io.BytesIO(to_parquet_bytes(frame)))
    assert list(back.columns) == list(frame.columns)
    assert back["score"].dtype == "float64"
    assert back["score"].tolist()[:4] == [0.5, 0.25, 1.0, 0.0] and math.isnan(back["score"][4])
    assert back["status"].tolist() == frame["status"].tolist()
    assert back["error"][4] == "output: the response to evaluate is empty"
    assert json.loads(back["analysis"][0]) == {"verdict": "ok", "parts": [1, 2]}
    assert back["analysis"][4] is None or pd.isna(back["analysis"][4])
    assert back["input"][2] == "=SUM(A1)"
    assert back["prompt_tokens"].tolist() == [0] * 6


def test_parquet_stores_mixed_object_columns_as_text():
    frame = pd.DataFrame({"group:temp": pd.Series([0.7, "hot", None], dtype=object)})
    back = pd.read_parquet(io.BytesIO(to_parquet_bytes(frame)))
    assert back["group:temp"].tolist()[:2] == ["0.7", "hot"]
    assert pd.isna(back["group:temp"][2])


# ---- helpers


def test_item_texts_tolerates_a_malformed_payload():
    item = EvalItem("x", {"input": {"inputMessages": [{"role": "user", "content": "Q"}]}, "output": {"text": None}})
    assert item_texts(item) == {"input": "Q", "system": "", "output": None, "ground_truth": None, "conversation": "[]"}


def test_results_frame_of_a_run_with_a_malformed_payload():
    items = [EvalItem("x", {"input": "Q", "output": {"text": None}})]
    result = run_evals(items, [create_textual_difference_scorer()])
    frame = results_frame(result, items)
    assert frame["status"].tolist() == ["invalid_input"]
    assert frame["output"].tolist() == [None]


@pytest.mark.parametrize(
    ("name", "fmt"), [("r.csv", "csv"), ("R.JSONL", "jsonl"), ("x/r.json", "json"), ("r.parquet", "parquet")]
)
def test_format_for_path(name, fmt):
    assert format_for_path(name) == fmt


def test_format_for_path_rejects_unknown_extensions():
    with pytest.raises(ValueError, match=r"\.xlsx.*\.csv, \.jsonl, \.json, \.parquet"):
        format_for_path("results.xlsx")


# ---- no API key anywhere


SECRET = "sk-test-SECRET-never-export-7f3a"


@pytest.mark.fake_openai(api_key=SECRET)
def test_no_export_contains_the_api_key(fake_openai, tmp_path):
    fake_openai.responder = lambda body: Reply.json(single_analysis(0.9, 0.8, 0.7, 1.0))
    store = Store(tmp_path / "db.sqlite")
    settings = settings_for(fake_openai, api_key=SECRET, model="openai/gpt-4o-mini")
    scorers = [
        create_prompt_alignment_scorer(options={"evaluation_mode": "user"}, settings=settings, cache=store),
        create_textual_difference_scorer(),
    ]
    items = [EvalItem(f"i{i}", {"input": f"Question {i}", "output": f"Answer {i}"}) for i in range(3)]
    result = run_evals(items, scorers, store=store)
    store.close()
    assert [o.status for o in result.outcomes] == [ScoreStatus.SCORED] * 6
    assert fake_openai.api_keys() == [SECRET] * 3  # the key was really used
    for fmt in ("csv", "jsonl", "json", "parquet"):
        data = export_run(result, items, fmt)
        assert SECRET.encode() not in data, fmt
        assert b"SECRET" not in data, fmt
    assert SECRET.encode() not in (tmp_path / "db.sqlite").read_bytes()


# ---- exports of a stored run, streamed from its columns


def _stored_table(tmp_path):
    items = [
        EvalItem(
            "q-17",
            {"input": "List fruit", "output": "- apple\n- pear", "ground_truth": "- apple\n- plum"},
            {"variant": "A"},
            {"human_vote": 1, "source": "=cmd"},
        ),
        EvalItem("q-18", {"input": "Say hi", "output": "", "ground_truth": "hi"}, {"variant": "B"}, {"human_vote": 0}),
        EvalItem("q-19", {"input": "Say", "output": "yes", "ground_truth": "yes"}, {}, {}),
    ]
    store = Store(tmp_path / "runs.db")
    run_id = run_evals(items, [create_textual_difference_scorer()], store=store).run_id
    return store, load_run_table(store, run_id)


def _export(table, fmt: str, chunk_rows: int = 2000) -> bytes:
    out = io.BytesIO()
    write_run_export(table, fmt, out, chunk_rows=chunk_rows)
    return out.getvalue()


def test_run_export_csv_carries_dataset_columns_and_flat_dimension_scores(tmp_path):
    store, table = _stored_table(tmp_path)
    rows = _csv_rows(_export(table, "csv"))
    assert [r["item_id"] for r in rows] == ["q-17", "q-18", "q-19"]  # the mapped id column, not a row label
    assert rows[0]["human_vote"] == "1" and rows[1]["human_vote"] == "0" and rows[2]["human_vote"] == ""
    assert rows[0]["source"] == "'=cmd"  # the spreadsheet CSV neutralises carried columns too
    assert rows[0]["output"] == "'- apple\n- pear"
    # "- apple\n- pear" vs "- apple\n- plum": equal lengths → confidence 1; "hi" vs "": ratio 0, confidence 0.
    assert float(rows[0]["textual_difference.confidence"]) == 1.0
    assert float(rows[1]["textual_difference.ratio"]) == 0.0
    assert rows[1]["group:variant"] == "B"
    plain = _csv_rows(_export(table, "plain-csv"))
    assert plain[0]["output"] == "- apple\n- pear" and plain[0]["source"] == "=cmd"
    store.close()


def test_run_export_streams_in_chunks_with_the_same_bytes(tmp_path):
    store, table = _stored_table(tmp_path)
    for fmt in ("csv", "plain-csv", "jsonl", "json"):
        assert _export(table, fmt, chunk_rows=1) == _export(table, fmt)
    lines = [json.loads(line) for line in _export(table, "jsonl").splitlines()]
    assert lines[0]["analysis"]["changes"] >= 1 and lines[0]["human_vote"] == 1
    doc = json.loads(_export(table, "json"))
    assert [i["itemId"] for i in doc["items"]] == ["q-17", "q-18", "q-19"]
    assert doc["items"][2]["scorerResults"]["textual-difference"]["score"] == 1.0  # "yes" vs "yes"
    assert doc["scores"]["textual-difference"]["nScored"] == 3
    # What the user brought is carried: the group-by values and the dataset's other columns.
    assert [i["groups"] for i in doc["items"]] == [{"variant": "A"}, {"variant": "B"}, {"variant": None}]
    assert [i["columns"] for i in doc["items"]] == [
        {"human_vote": 1, "source": "=cmd"},
        {"human_vote": 0, "source": None},
        {"human_vote": None, "source": None},
    ]
    _, items, result = load_run(store, table.run["id"])
    library = json.loads(export_run(result, items, "json"))  # the library's export of the same run
    assert [i["groups"] for i in library["items"]] == [{"variant": "A"}, {"variant": "B"}, {}]
    assert [i["columns"] for i in library["items"]] == [{"human_vote": 1, "source": "=cmd"}, {"human_vote": 0}, {}]
    back = pd.read_parquet(io.BytesIO(_export(table, "parquet")))
    assert back["textual_difference.ratio"].dtype == "float64" and back["item_id"].tolist() == ["q-17", "q-18", "q-19"]
    with pytest.raises(ValueError, match="unknown export format"):
        _export(table, "xml")
    store.close()


def test_every_export_names_each_rows_judge_model(tmp_path):
    store = Store(tmp_path / "runs.db")
    run_id = resumed_with_another_judge(store)
    # Rows by item, then scorer (prompt-alignment, textual-difference): items 0 and 1 were judged by
    # gpt-4o-mini, item 2 by fake-judge, item 3 is a missing input (no judge asked, though it records
    # fake-judge); textual-difference is a code scorer (no judge).
    expected = ["gpt-4o-mini", "", "gpt-4o-mini", "", "fake-judge", "", "", ""]
    table = load_run_table(store, run_id)
    for fmt in ("csv", "plain-csv"):
        assert [r["judge_model"] for r in _csv_rows(_export(table, fmt))] == expected, fmt
    jsonl = [json.loads(line) for line in _export(table, "jsonl").decode().splitlines()]
    assert [r["judge_model"] or "" for r in jsonl] == expected
    parquet = pd.read_parquet(io.BytesIO(_export(table, "parquet")))
    assert parquet["judge_model"].fillna("").tolist() == expected
    seed = json.loads(_export(table, "json"))
    per_row = [o["judgeModel"] or "" for item in seed["items"] for _, o in sorted(item["scorerResults"].items())]
    assert per_row == expected
    # The same from a run's result (export_run), e.g. the command line's --output.
    _, items, result = load_run(store, run_id)
    for fmt in ("csv", "jsonl", "parquet"):
        frame = read_results_bytes(export_run(result, items, fmt), fmt)
        rows = frame.sort_values(["item_id", "scorer"])["judge_model"]
        assert rows.fillna("").tolist() == expected, fmt
    seed = json.loads(export_run(result, items, "json"))
    assert [o["judgeModel"] or "" for item in seed["items"] for _, o in sorted(item["scorerResults"].items())] == (
        expected
    )
    store.close()


def read_results_bytes(data: bytes, fmt: str) -> pd.DataFrame:
    """An export's rows as a frame, empty cells as None."""
    if fmt == "csv":
        return pd.DataFrame(_csv_rows(data)).replace("", None)
    if fmt == "jsonl":
        return pd.read_json(io.BytesIO(data), lines=True, dtype=False)
    return pd.read_parquet(io.BytesIO(data))


def test_export_file_names_drop_the_datasets_extension_and_give_the_time_in_full():
    from scorers.runs.export import export_file_stem

    run = {
        "id": "c4de9c5a5b6f",
        "name": "input_response_data_2026.jsonl 2026-12-02 10:34",  # the store's default name
        "created_at": "2026-12-02T10:34:12+00:00",
        "dataset_name": "input_response_data_2026.jsonl",
    }
    assert export_file_stem(run) == "input_response_data_2026-2026-12-02T103412Z-c4de9c5a5b6f"
    # A name the user gave is kept (in file-name characters); the time is still the run's, to the second.
    named = {**run, "name": "Prompt v7: gpt-4o / both"}
    assert export_file_stem(named) == "Prompt-v7-gpt-4o-both-2026-12-02T103412Z-c4de9c5a5b6f"
    # A long name is cut at 60 characters before the time, so the time is never cut.
    long = {**run, "name": "x" * 80}
    assert export_file_stem(long) == "x" * 60 + "-2026-12-02T103412Z-c4de9c5a5b6f"


def test_spreadsheet_overflow_counts_the_cells_over_a_spreadsheets_limit_by_column(tmp_path):
    from scorers import create_content_similarity_scorer
    from scorers.runs.export import SPREADSHEET_CELL_LIMIT, spreadsheet_overflow

    store = Store(tmp_path / "s.db")
    limit = SPREADSHEET_CELL_LIMIT  # 32,767
    items = [
        EvalItem("long", {"input": "Q", "output": "x" * 40_000, "ground_truth": "y" * 33_000}),
        EvalItem("at-limit", {"input": "Q", "output": "x" * limit, "ground_truth": "x"}),  # fits exactly
        EvalItem("formula", {"input": "=" + "x" * (limit - 1), "output": "a", "ground_truth": "a"}),  # ' makes 32,768
        EvalItem("short", {"input": "Q", "output": "a", "ground_truth": "a"}),
    ]
    scorers = [create_textual_difference_scorer(), create_content_similarity_scorer()]
    run_id = run_evals(items, scorers, store=store).run_id
    table = load_run_table(store, run_id)
    # Two scorers: each item is two rows of the CSV, so each long text is two cells. Content similarity's
    # analysis JSON holds both processed texts: over the limit for "long" (33,000 + 40,000 characters) and
    # "at-limit" (32,767 + 1, plus the JSON around them); textual difference's is a few numbers.
    assert spreadsheet_overflow(table) == {"input": 2, "output": 2, "ground_truth": 2, "analysis": 2}
    # What the spreadsheet CSV holds: the cells whole, never cut.
    rows = _csv_rows(_export(table, "csv"))
    assert [len(r["output"]) for r in rows if r["item_id"] == "long"] == [40_000, 40_000]
    short = run_evals(items[1:], scorers[:1], store=store).run_id
    assert spreadsheet_overflow(load_run_table(store, short)) == {"input": 1}
    store.close()


# A conversation as a dataset gives it: a messages cell whose final assistant message is the response.
CONVERSATION = [
    {"role": "system", "content": "You are an exam coach."},
    {"role": "user", "content": "Topic A or B first?"},
    {"role": "assistant", "content": "Which carries more marks?"},
    {"role": "user", "content": "A"},
]
# What the judge is shown before the response, with the roles; the system message stays in its own column.
EARLIER_TURNS = [
    {"role": "user", "content": "Topic A or B first?"},
    {"role": "assistant", "content": "Which carries more marks?"},
    {"role": "user", "content": "A"},
]


def test_every_export_carries_a_conversations_turns_with_their_roles(tmp_path):
    items = [
        EvalItem("chat", {"input": CONVERSATION, "output": {"role": "assistant", "content": "Revise A first."}}),
        EvalItem("single", {"input": "Say yes", "output": "yes"}),
    ]
    store = Store(tmp_path / "runs.db")
    result = run_evals(items, [create_textual_difference_scorer()], store=store)
    table = load_run_table(store, result.run_id)
    turns_text = json.dumps(EARLIER_TURNS, ensure_ascii=False)
    # The existing columns keep their meaning: input is the user turns joined, output the reply.
    expected = {
        "input": "Topic A or B first?\n\nA",
        "system": "You are an exam coach.",
        "output": "Revise A first.",
        "conversation": turns_text,
    }
    for frame in (results_frame(result, items), read_results_bytes(_export(table, "jsonl"), "jsonl")):
        chat, single = frame.iloc[0], frame.iloc[1]
        assert {k: chat[k] for k in expected} == expected
        assert single["conversation"] == "[]"  # no earlier turns: an empty conversation, not a missing value
    for data in (_export(table, "parquet"), export_run(result, items, "parquet")):
        assert pd.read_parquet(io.BytesIO(data))["conversation"].tolist() == [turns_text, "[]"]
    for data in (_export(table, "plain-csv"), export_run(result, items, "csv")):
        assert [row["conversation"] for row in _csv_rows(data)] == [turns_text, "[]"]
    for data in (_export(table, "json"), export_run(result, items, "json")):
        documents = json.loads(data)["items"]
        assert [d["conversation"] for d in documents] == [EARLIER_TURNS, []]
    store.close()


def test_a_tool_call_turns_null_content_stays_null_and_an_empty_one_empty_in_every_export(tmp_path):
    # OpenAI writes an assistant turn that only calls tools with content null; another client may write "".
    # Each is exported as it was brought (null was written as "", which no one wrote).
    call = {"id": "c1", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}
    result_turn = {"role": "tool", "tool_call_id": "c1", "content": "noon"}
    items = [
        EvalItem(
            f"content-{label}",
            {
                "input": [
                    {"role": "user", "content": "Time?"},
                    {"role": "assistant", "content": content, "tool_calls": [call]},
                    result_turn,
                ],
                "output": {"role": "assistant", "content": "Noon."},
            },
        )
        for label, content in (("null", None), ("empty", ""))
    ]
    store = Store(tmp_path / "runs.db")
    result = run_evals(items, [create_textual_difference_scorer()], store=store)
    table = load_run_table(store, result.run_id)

    def turns(content):
        return [
            {"role": "user", "content": "Time?"},
            {
                "role": "assistant",
                "content": content,
                "tool_calls": [{"id": "c1", "name": "get_time", "arguments": "{}"}],
            },
            {"role": "tool", "content": "noon", "tool_call_id": "c1"},
        ]

    expected = [turns(None), turns("")]
    assert [o.status for o in result.outcomes] == [ScoreStatus.SCORED, ScoreStatus.SCORED]
    # The columns hold JSON text (null inside it, in the CSV too); the JSON holds the lists.
    jsonl = [json.loads(line) for line in _export(table, "jsonl").decode().splitlines()]
    assert [json.loads(row["conversation"]) for row in jsonl] == expected
    for data in (_export(table, "parquet"), export_run(result, items, "parquet")):
        assert [json.loads(t) for t in pd.read_parquet(io.BytesIO(data))["conversation"]] == expected
    for data in (_export(table, "plain-csv"), export_run(result, items, "csv")):
        assert [json.loads(row["conversation"]) for row in _csv_rows(data)] == expected
    for data in (_export(table, "json"), export_run(result, items, "json")):
        assert [d["conversation"] for d in json.loads(data)["items"]] == expected
    store.close()
