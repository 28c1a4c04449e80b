"""CSV and JSON Lines read into plain columns, without pandas: the same values as the frame."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from scorers.runs.datasets import guess_columns, iter_runs, load_dataset, unmapped_columns


def _jsonl(*records: dict) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def test_a_csv_is_read_into_plain_text_columns_and_the_frame_is_built_on_first_use():
    data = b'id,prompt,response,extra\n1,"p, 1",r1,NaN\n2,p2,,\n\n3,p3\n'
    dataset = load_dataset(data, name="rows.csv")
    assert "frame" not in vars(dataset)  # not built yet
    # Every field as written, as text; the short line 5 padded with empty fields; the empty line 4 ignored.
    assert dataset.columns == ["id", "prompt", "response", "extra"]
    assert dataset.column_values("prompt") == ["p, 1", "p2", "p3"]
    assert dataset.column_values("response") == ["r1", "", ""]
    assert dataset.column_values("extra") == ["NaN", "", ""]
    assert dataset.source_rows == (2, 3, 5)
    expected = pd.DataFrame(
        [["1", "p, 1", "r1", "NaN"], ["2", "p2", "", ""], ["3", "p3", "", ""]],
        columns=["id", "prompt", "response", "extra"],
        dtype=str,
    )
    pd.testing.assert_frame_equal(dataset.frame, expected)
    with pytest.raises(KeyError):
        dataset.column_values("missing")


PLAIN = [
    # text, whole and fractional numbers, booleans, arrays and objects, each column of one kind
    ({"id": 1, "prompt": "p", "response": "r", "score": 0.5, "ok": True, "tags": ["a"], "meta": {"k": 1}},
     {"id": 2, "prompt": "q", "response": "s", "score": 1.5, "ok": False, "tags": [], "meta": {"k": 2}}),
    # the same keys in another order: the columns are in the order of the first record
    ({"prompt": "p", "response": "r", "id": "a"}, {"id": "b", "response": "s", "prompt": "q"}),
]  # fmt: skip
CONVERTED = [
    # a key missing from a record (pandas fills NaN), null, whole and fractional numbers mixed (all
    # become floats), a whole number beyond 64 bits, text and numbers mixed
    ({"id": 1, "prompt": "p", "response": "r"}, {"id": 2, "prompt": "q", "response": "s", "extra": 3}),
    ({"id": 1, "prompt": "p", "response": None}, {"id": 2, "prompt": "q", "response": "s"}),
    ({"id": 1, "prompt": "p", "response": "r"}, {"id": 2.5, "prompt": "q", "response": "s"}),
    ({"id": 2**64, "prompt": "p", "response": "r"}, {"id": 1, "prompt": "q", "response": "s"}),
    ({"id": "a", "prompt": "p", "response": "r"}, {"id": 7, "prompt": "q", "response": "s"}),
]  # fmt: skip


@pytest.mark.parametrize(("records", "plain"), [(r, True) for r in PLAIN] + [(r, False) for r in CONVERTED])
def test_json_lines_give_the_values_pandas_would(records, plain):
    dataset = load_dataset(_jsonl(*records), name="rows.jsonl")
    assert (dataset.plain is not None) is plain
    mapping = guess_columns(dataset.columns)
    runs = list(iter_runs(dataset, mapping))
    others = unmapped_columns(dataset, mapping)
    values = {c: dataset.column_values(c) for c in dataset.columns}
    # The frame is what the reader always built: pandas' frame of the records.
    expected = pd.DataFrame.from_records(list(records))
    pd.testing.assert_frame_equal(dataset.frame, expected)
    assert list(dataset.frame.columns) == dataset.columns
    assert repr(values) == repr({c: expected[c].tolist() for c in expected.columns})  # repr: nan == nan
    assert runs == list(iter_runs(load_dataset(_jsonl(*records), name="rows.jsonl"), mapping))
    assert others == unmapped_columns(dataset, mapping)


def test_whole_and_fractional_numbers_in_one_column_are_all_fractional_as_in_pandas():
    dataset = load_dataset(
        _jsonl({"id": "a", "response": "r", "n": 1}, {"id": "b", "response": "s", "n": 2.5}), name="x.jsonl"
    )
    assert dataset.plain is None
    assert dataset.column_values("n") == [1.0, 2.5]  # 1 became 1.0
    assert unmapped_columns(dataset, {"id": "id", "output": "response"}) == [{"n": 1.0}, {"n": 2.5}]


def test_a_plain_column_keeps_whole_numbers_and_the_run_payloads_their_text():
    dataset = load_dataset(_jsonl({"id": 7, "prompt": "p", "response": "r", "votes": [1, 2]}), name="x.jsonl")
    assert dataset.plain is not None
    [(index, item_id, payload)] = iter_runs(dataset, {"id": "id", "input": "prompt", "output": "response"})
    assert (index, item_id) == (0, "7")
    assert payload == {"input": {"inputMessages": [{"role": "user", "content": "p"}], "systemMessages": []},
                       "output": {"text": "r"}}  # fmt: skip
    assert unmapped_columns(dataset, {"id": "id", "input": "prompt", "output": "response"}) == [{"votes": "[1, 2]"}]
