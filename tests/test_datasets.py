"""Tests of scorers.runs.datasets: loading evaluation datasets and turning rows into run payloads.

Every file is small and written by hand in the test, so the expected frame,
line numbers and reasons are read off the file text, not copied from the code.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import openpyxl
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from realdata import REALDATA

from scorers.catalogue.registry import create_scorer
from scorers.core.base import normalize_run
from scorers.core.errors import InvalidInputError, ScoreStatus
from scorers.runs.datasets import (
    ROLES,
    SUPPORTED_FORMATS,
    DatasetError,
    LoadedDataset,
    SkippedRow,
    guess_columns,
    iter_runs,
    load_dataset,
    not_text_notices,
    require_columns,
)

RECIPES_CSV = REALDATA / "recipes_public_domain" / "recipes.csv"
RECIPES_JSONL = REALDATA / "recipes_public_domain" / "recipes.jsonl"
IFEVAL_RESPONSES = REALDATA / "ifeval_gpt4" / "input_response_data_gpt4_20231107_145030.jsonl"
SAMPLE_DATA = Path(__file__).resolve().parents[1] / "sample_data"


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8", newline="")
    else:
        path.write_bytes(content)
    return path


def rows(dataset: LoadedDataset) -> list[dict]:
    return dataset.frame.to_dict(orient="records")


# --- format detection and sources ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a.csv", "csv"),
        ("a.TSV", "csv"),
        ("a.txt", "csv"),
        ("a.jsonl", "jsonl"),
        ("a.ndjson", "jsonl"),
        ("a.json", "json"),
        ("a.parquet", "parquet"),
        ("a.xlsx", "xlsx"),
    ],
)
def test_format_detected_from_the_extension(name, expected):
    content = {
        "csv": b"prompt\nhi\n",
        "jsonl": b'{"prompt": "hi"}\n',
        "json": b'[{"prompt": "hi"}]',
    }
    if expected in ("parquet", "xlsx"):
        buffer = io.BytesIO()
        frame = pd.DataFrame({"prompt": ["hi"]})
        frame.to_parquet(buffer) if expected == "parquet" else frame.to_excel(buffer, index=False)
        data = buffer.getvalue()
    else:
        data = content[expected]
    dataset = load_dataset(data, name=name)
    assert dataset.format == expected
    assert dataset.source_name == name


def test_unknown_extension_lists_the_supported_formats():
    with pytest.raises(DatasetError) as caught:
        load_dataset(b"a,b\n1,2\n", name="data.xml")
    message = str(caught.value)
    assert message.startswith("data.xml: ")
    assert "'.xml'" in message
    for fmt in SUPPORTED_FORMATS:
        assert fmt in message
    assert "format=" in message


def test_bytes_without_a_name_need_a_format():
    with pytest.raises(DatasetError, match="no extension"):
        load_dataset(b"a,b\n1,2\n")
    dataset = load_dataset(b"a,b\n1,2\n", format="csv")
    assert dataset.source_name == "<uploaded data>"
    assert rows(dataset) == [{"a": "1", "b": "2"}]


def test_format_overrides_the_extension():
    dataset = load_dataset(b'{"prompt": "p", "response": "r"}\n', name="export.txt", format="jsonl")
    assert dataset.format == "jsonl"
    assert rows(dataset) == [{"prompt": "p", "response": "r"}]
    with pytest.raises(DatasetError, match="unknown format 'yaml'"):
        load_dataset(b"x", name="a.csv", format="yaml")


def test_uploaded_bytes_and_file_object_as_from_streamlit():
    content = b"prompt\tresponse\nWhat is 2+2?\t4\n"
    from_bytes = load_dataset(content, name="upload.tsv")
    upload = io.BytesIO(content)
    upload.name = "upload.tsv"
    from_file = load_dataset(upload)
    for dataset in (from_bytes, from_file):
        assert dataset.source_name == "upload.tsv"
        assert rows(dataset) == [{"prompt": "What is 2+2?", "response": "4"}]


def test_path_as_str_and_path(tmp_path):
    path = write(tmp_path, "data.csv", "prompt,response\np,r\n")
    assert rows(load_dataset(str(path))) == rows(load_dataset(path)) == [{"prompt": "p", "response": "r"}]
    assert load_dataset(path).source_name == str(path)


def test_missing_file(tmp_path):
    with pytest.raises(DatasetError, match="file not found") as caught:
        load_dataset(tmp_path / "nope.csv")
    assert caught.value.path == str(tmp_path / "nope.csv")


def test_text_passed_as_a_path_is_explained():
    with pytest.raises(DatasetError, match="pass the content as bytes"):
        load_dataset("prompt,response\np,r\n")


def test_dataset_error_is_invalid_input():
    with pytest.raises(InvalidInputError) as caught:
        load_dataset(b"", name="empty.csv")
    assert caught.value.status is ScoreStatus.INVALID_INPUT


# --- CSV -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("delimiter", "text"),
    [
        (",", 'id,prompt,response\n1,"Hello; world","Hi,\tthere"\n2,Bye,See you\n'),
        (";", 'id;prompt;response\n1;"Hello; world";Hi,\tthere\n2;Bye;See you\n'),
        ("\t", 'id\tprompt\tresponse\n1\tHello; world\t"Hi,\tthere"\n2\tBye\tSee you\n'),
    ],
    ids=["comma", "semicolon", "tab"],
)
def test_csv_delimiter_detected(tmp_path, delimiter, text):
    dataset = load_dataset(write(tmp_path, "data.csv", text))
    assert list(dataset.frame.columns) == ["id", "prompt", "response"]
    assert rows(dataset) == [
        {"id": "1", "prompt": "Hello; world", "response": "Hi,\tthere"},
        {"id": "2", "prompt": "Bye", "response": "See you"},
    ]


def test_csv_delimiter_when_the_header_has_several_candidates(tmp_path):
    # The header holds both ";" (3 times, the delimiter) and "," (inside a quoted name);
    # every data line has 3 semicolons and varying numbers of commas.
    text = 'id;"score, raw";prompt;response\n1;0,5;a, b, c;d\n2;1;e;f, g\n3;0,25;h;i\n'
    dataset = load_dataset(write(tmp_path, "data.csv", text))
    assert list(dataset.frame.columns) == ["id", "score, raw", "prompt", "response"]
    assert dataset.frame["prompt"].tolist() == ["a, b, c", "e", "h"]


def test_csv_explicit_delimiter(tmp_path):
    path = write(tmp_path, "data.csv", "a;b,c\n1;2,3\n")
    assert rows(load_dataset(path, delimiter=",")) == [{"a;b": "1;2", "c": "3"}]
    assert rows(load_dataset(path, delimiter=";")) == [{"a": "1", "b,c": "2,3"}]
    with pytest.raises(DatasetError, match="unsupported delimiter '|'"):
        load_dataset(path, delimiter="|")


def test_csv_utf8_bom_is_not_part_of_the_first_column(tmp_path):
    path = write(tmp_path, "excel.csv", b"\xef\xbb\xbfprompt,response\nCaf\xc3\xa9?,Oui\n")
    dataset = load_dataset(path)
    assert list(dataset.frame.columns) == ["prompt", "response"]
    assert rows(dataset) == [{"prompt": "Café?", "response": "Oui"}]
    assert dataset.row_label(0) == "line 2"


def test_csv_quoted_field_with_newlines_and_line_numbers(tmp_path):
    text = 'prompt,response\n"Line one\nline two\r\nline three",ok\nnext,"say ""hi"""\n'
    dataset = load_dataset(write(tmp_path, "data.csv", text))
    assert rows(dataset) == [
        {"prompt": "Line one\nline two\r\nline three", "response": "ok"},
        {"prompt": "next", "response": 'say "hi"'},
    ]
    # Row 0 starts on line 2 and spans lines 2-4; row 1 is on line 5.
    assert dataset.source_rows == (2, 5)
    assert [dataset.row_label(0), dataset.row_label(1)] == ["line 2", "line 5"]
    with pytest.raises(IndexError):
        dataset.row_label(2)


def test_csv_null_like_text_kept_as_text(tmp_path):
    text = "prompt,response,score\nNone,N/A,NaN\nNULL,,1.50\nnan,null,007\n"
    dataset = load_dataset(write(tmp_path, "data.csv", text))
    assert rows(dataset) == [
        {"prompt": "None", "response": "N/A", "score": "NaN"},
        {"prompt": "NULL", "response": "", "score": "1.50"},
        {"prompt": "nan", "response": "null", "score": "007"},
    ]
    assert not dataset.frame.isna().any().any()
    assert all(pd.api.types.is_string_dtype(dtype) for dtype in dataset.frame.dtypes)


def test_csv_blank_lines_and_empty_rows_are_ignored_visibly(tmp_path):
    text = "prompt,response\n\np,r\n,\n\nq,s\n"
    dataset = load_dataset(write(tmp_path, "data.csv", text))
    assert rows(dataset) == [{"prompt": "p", "response": "r"}, {"prompt": "q", "response": "s"}]
    assert dataset.source_rows == (3, 6)
    assert dataset.warnings == ["1 row(s) with every field empty were ignored: line 4"]


def test_csv_short_row_padded_with_a_warning(tmp_path):
    dataset = load_dataset(write(tmp_path, "data.csv", "a,b,c\n1,2,3\n4,5\n"))
    assert rows(dataset)[1] == {"a": "4", "b": "5", "c": ""}
    assert len(dataset.warnings) == 1
    assert "fewer fields" in dataset.warnings[0] and "line 3" in dataset.warnings[0]


def test_csv_ragged_row_names_the_line(tmp_path):
    text = "prompt,response\nhello,world\nhello, again,world\n"
    with pytest.raises(DatasetError) as caught:
        load_dataset(write(tmp_path, "data.csv", text))
    error = caught.value
    assert error.line == 3
    message = str(error)
    assert message.startswith(f"{tmp_path / 'data.csv'}, line 3: ")
    assert "3 fields" in message and "2 columns" in message and "quoted" in message


def test_csv_unclosed_quote_names_the_line_it_opens_on(tmp_path):
    text = 'prompt,response\nok,fine\n"never closed,x\nmore,lines\n'
    with pytest.raises(DatasetError, match="never closed") as caught:
        load_dataset(write(tmp_path, "data.csv", text))
    assert caught.value.line == 3


def test_csv_text_after_a_closing_quote_is_an_error(tmp_path):
    with pytest.raises(DatasetError, match="two quotes") as caught:
        load_dataset(write(tmp_path, "data.csv", 'prompt,response\n"a"b,c\n'))
    assert caught.value.line == 2


def test_csv_not_utf8_names_line_and_byte(tmp_path):
    # "café" in Latin-1: 0xe9 is the 4th byte of "caf\xe9", line 3.
    path = write(tmp_path, "latin1.csv", b"prompt,response\nok,fine\nx,caf\xe9\n")
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    error = caught.value
    assert (error.line, error.column) == (3, 6)
    message = str(error)
    assert "0xe9" in message and "UTF-8" in message and "iconv" in message
    assert "byte offset 29" in message  # len("prompt,response\nok,fine\nx,caf")


def test_csv_byte_offset_counts_the_bom(tmp_path):
    path = write(tmp_path, "bom.csv", b"\xef\xbb\xbfa,b\n1,\xff\n")
    with pytest.raises(DatasetError, match="byte offset 9") as caught:
        load_dataset(path)
    assert (caught.value.line, caught.value.column) == (2, 3)


def test_utf16_is_rejected_with_a_hint(tmp_path):
    path = write(tmp_path, "unicode.txt", "a\tb\n1\t2\n".encode("utf-16"))
    with pytest.raises(DatasetError, match="UTF-16"):
        load_dataset(path)


def test_csv_duplicate_columns_rejected_by_name(tmp_path):
    path = write(tmp_path, "data.csv", "prompt,response,prompt,id,id\na,b,c,1,2\n")
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    error = caught.value
    assert "duplicate column names" in str(error)
    assert "'prompt', 'id'" in str(error)
    assert "'response'" not in str(error)
    assert error.line == 1
    assert error.field == "prompt"


def test_csv_unnamed_column_gets_a_name_and_a_warning(tmp_path):
    dataset = load_dataset(write(tmp_path, "data.csv", ",prompt\n0,p\n"))
    assert list(dataset.frame.columns) == ["column_1", "prompt"]
    assert dataset.warnings == ["column 1 has no name in the header (line 1); it was named 'column_1'"]


@pytest.mark.parametrize(
    ("content", "why"),
    [(b"", "the file is empty"), (b"\n \n", "the file is empty"), (b"prompt,response\n", "no data rows")],
    ids=["empty", "blank", "header-only"],
)
def test_csv_without_rows(tmp_path, content, why):
    with pytest.raises(DatasetError, match="no rows") as caught:
        load_dataset(write(tmp_path, "data.csv", content))
    assert why in str(caught.value)


def test_csv_long_field_beyond_the_csv_module_default_limit(tmp_path):
    long = "x" * 200_000
    dataset = load_dataset(write(tmp_path, "data.csv", f'prompt,response\np,"{long}"\n'))
    assert dataset.frame.loc[0, "response"] == long


# --- JSON Lines ------------------------------------------------------------------------------------


def test_jsonl_bad_lines_skipped_with_reasons_while_others_load(tmp_path):
    lines = [
        '{"prompt": "p1", "response": "r1"}',  # 1
        '{"prompt": "p2", "response": }',  # 2: invalid JSON, error at the "}" in column 30
        "",  # 3: blank
        "   ",  # 4: blank
        '["p", "r"]',  # 5: array
        "42",  # 6: number
        '"text"',  # 7: string
        '{"prompt": "p8", "response": "r8", "score": 0.5}',  # 8
        '{"prompt": "p9", "response": "a", "response": "b"}',  # 9: duplicate key
        "{}",  # 10: empty object
    ]
    dataset = load_dataset(write(tmp_path, "data.jsonl", "\n".join(lines) + "\n"))
    assert dataset.frame["prompt"].tolist() == ["p1", "p8"]
    assert dataset.frame["response"].tolist() == ["r1", "r8"]
    assert dataset.source_rows == (1, 8)
    assert dataset.row_label(1) == "line 8"
    assert [s.line for s in dataset.skipped] == [2, 5, 6, 7, 9, 10]
    assert all(s.row is None for s in dataset.skipped)
    reasons = [s.reason for s in dataset.skipped]
    assert reasons[0] == "invalid JSON at column 30: Expecting value"
    assert reasons[1].startswith("not a JSON object (found an array)")
    assert reasons[2].startswith("not a JSON object (found a number)")
    assert reasons[3].startswith("not a JSON object (found a string)")
    assert "duplicate key(s) 'response'" in reasons[4]
    assert "empty JSON object" in reasons[5]
    assert str(dataset.skipped[0]) == "line 2: invalid JSON at column 30: Expecting value"


def test_jsonl_duplicate_key_in_a_nested_object(tmp_path):
    line = '{"prompt": "p", "response": "r", "meta": {"k": 1, "k": 2}}'
    dataset = load_dataset(write(tmp_path, "data.jsonl", '{"prompt": "q", "response": "s"}\n' + line + "\n"))
    assert len(dataset.frame) == 1
    assert dataset.skipped[0].line == 2
    assert "duplicate key(s) 'k' in 'meta'" in dataset.skipped[0].reason


def test_jsonl_lone_surrogate_skips_the_row_naming_column_and_line(tmp_path):
    lines = [
        '{"prompt": "ok", "response": "fine \\ud83d\\ude00"}',  # a proper surrogate pair: 😀
        '{"prompt": "bad", "response": "broken \\ud800 text"}',
    ]
    dataset = load_dataset(write(tmp_path, "data.jsonl", "\n".join(lines)))
    assert rows(dataset) == [{"prompt": "ok", "response": "fine 😀"}]
    [skipped] = dataset.skipped
    assert skipped.line == 2
    assert "column 'response'" in skipped.reason
    assert "character 8" in skipped.reason  # "broken " is 7 characters
    assert "surrogate" in skipped.reason


def test_jsonl_invalid_utf8_line_skipped(tmp_path):
    path = write(tmp_path, "data.jsonl", b'{"prompt": "a", "response": "b"}\n{"prompt": "caf\xe9", "response": "x"}\n')
    dataset = load_dataset(path)
    assert len(dataset.frame) == 1
    assert dataset.skipped[0].line == 2
    assert "0xe9" in dataset.skipped[0].reason and "byte column 16" in dataset.skipped[0].reason


def test_jsonl_keeps_nested_values_and_text_columns_are_str(tmp_path):
    lines = [
        '{"id": 1, "prompt": "p1", "tags": ["a", "b"], "meta": {"k": null}, "note": null}',
        '{"id": 2, "prompt": "p2", "tags": [], "meta": {}, "note": "n"}',
    ]
    dataset = load_dataset(write(tmp_path, "data.jsonl", "\n".join(lines)))
    frame = dataset.frame
    assert frame["tags"].tolist() == [["a", "b"], []]
    assert frame["meta"].tolist() == [{"k": None}, {}]
    assert frame["id"].tolist() == [1, 2]
    assert pd.api.types.is_string_dtype(frame["prompt"].dtype)
    assert frame["prompt"].tolist() == ["p1", "p2"]
    assert math.isnan(frame["note"][0]) and frame["note"][1] == "n"


def test_jsonl_bom_and_crlf(tmp_path):
    path = write(tmp_path, "data.jsonl", b'\xef\xbb\xbf{"prompt": "a"}\r\n{"prompt": "b"}\r\n')
    assert load_dataset(path).frame["prompt"].tolist() == ["a", "b"]


def test_jsonl_line_separator_inside_a_string_is_not_a_line_break(tmp_path):
    # U+2028 is allowed unescaped in JSON strings; str.splitlines() would break on it.
    dataset = load_dataset(write(tmp_path, "data.jsonl", '{"prompt": "a\u2028b"}\n'))
    assert dataset.frame["prompt"].tolist() == ["a\u2028b"]


def test_jsonl_no_line_loads_lists_the_first_problems(tmp_path):
    path = write(tmp_path, "data.jsonl", "not json\n[1, 2]\n\n{bad\n")
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    message = str(caught.value)
    assert "no rows loaded: all 3 records were skipped" in message
    assert "line 1: invalid JSON at column 1" in message
    assert "line 2: not a JSON object (found an array)" in message
    assert "line 4: invalid JSON at column 2" in message


def test_jsonl_that_is_really_a_json_array(tmp_path):
    path = write(tmp_path, "data.jsonl", '[\n  {"prompt": "a"},\n  {"prompt": "b"}\n]\n')
    with pytest.raises(DatasetError, match="format='json'"):
        load_dataset(path)


@pytest.mark.parametrize("content", ["", "\n\n  \n"], ids=["empty", "blank-lines"])
def test_jsonl_without_rows(tmp_path, content):
    with pytest.raises(DatasetError, match="no rows: the file is empty"):
        load_dataset(write(tmp_path, "data.jsonl", content))


# --- JSON ----------------------------------------------------------------------------------------


def test_json_array_with_a_non_object_element(tmp_path):
    text = json.dumps([{"prompt": "a", "response": "b"}, "oops", {"prompt": "c", "response": "d"}, None])
    dataset = load_dataset(write(tmp_path, "data.json", text))
    assert rows(dataset) == [{"prompt": "a", "response": "b"}, {"prompt": "c", "response": "d"}]
    assert dataset.source_rows == (1, 3)
    assert dataset.row_label(1) == "row 3"
    assert [(s.line, s.row) for s in dataset.skipped] == [(None, 2), (None, 4)]
    assert dataset.skipped[0].reason.startswith("element [1]: not a JSON object (found a string)")
    assert dataset.skipped[1].reason.startswith("element [3]: not a JSON object (found null)")


@pytest.mark.parametrize("key", ["data", "items", "rows"])
def test_json_wrapper_objects(tmp_path, key):
    text = json.dumps({"version": 2, key: [{"prompt": "a"}, 7]})
    dataset = load_dataset(write(tmp_path, "data.json", text))
    assert rows(dataset) == [{"prompt": "a"}]
    assert dataset.skipped[0].reason.startswith(f"element {key}[1]: not a JSON object")
    # One record read (the 7 is skipped), and the unwrapping is said, with the key left unread.
    assert dataset.warnings == [
        f"the top level is an object: read the 1 record(s) under key {key!r}; its other key(s) ['version'] were not read"
    ]


@pytest.mark.parametrize(
    "records",
    [[{"prompt": "a"}, {"prompt": "b"}], [{"prompt": "a"}, {"prompt": None}]],
    ids=["plain-columns", "pandas-frame"],  # a null sends the records through pandas
)
def test_json_wrapper_said_on_both_read_paths(tmp_path, records):
    dataset = load_dataset(write(tmp_path, "data.json", json.dumps({"items": records})))
    assert (dataset.plain is None) == (records[1]["prompt"] is None)
    assert dataset.warnings == ["the top level is an object: read the 2 record(s) under key 'items'"]
    assert dataset.columns == ["prompt"] and len(dataset.source_rows) == 2


def test_json_object_with_two_lists_of_records(tmp_path):
    text = json.dumps({"data": [{"prompt": "a"}], "items": [{"prompt": "b"}]})
    with pytest.raises(
        DatasetError, match=r"more than one list of records \(under keys \['data', 'items'\]\)"
    ) as caught:
        load_dataset(write(tmp_path, "data.json", text))
    assert "data.json" in str(caught.value)


def test_json_invalid_names_line_and_column(tmp_path):
    text = '[\n  {"prompt": "a"},\n  {"prompt" "b"}\n]\n'
    with pytest.raises(DatasetError) as caught:
        load_dataset(write(tmp_path, "data.json", text))
    error = caught.value
    # Line 3 is '  {"prompt" "b"}': the ':' is missing at column 13.
    assert (error.line, error.column) == (3, 13)
    assert "Expecting ':' delimiter" in str(error)


def test_json_lines_named_json_get_a_hint(tmp_path):
    with pytest.raises(DatasetError, match="rename it to .jsonl") as caught:
        load_dataset(write(tmp_path, "data.json", '{"prompt": "a"}\n{"prompt": "b"}\n'))
    assert caught.value.line == 2


def test_json_object_without_a_known_wrapper(tmp_path):
    with pytest.raises(DatasetError, match=r"found an object with keys \['prompt', 'response'\]"):
        load_dataset(write(tmp_path, "data.json", '{"prompt": "a", "response": "b"}'))


def test_json_lone_surrogate_reported_by_row(tmp_path):
    text = '[{"prompt": "a", "response": "b"}, {"prompt": "x\\udfff", "response": "c"}]'
    dataset = load_dataset(write(tmp_path, "data.json", text))
    assert rows(dataset) == [{"prompt": "a", "response": "b"}]
    [skipped] = dataset.skipped
    assert (skipped.line, skipped.row) == (None, 2)
    assert "column 'prompt'" in skipped.reason and "surrogate" in skipped.reason


@pytest.mark.parametrize("text", ["[]", '{"data": []}'], ids=["array", "wrapper"])
def test_json_empty_array(tmp_path, text):
    with pytest.raises(DatasetError, match="no rows"):
        load_dataset(write(tmp_path, "data.json", text))


# --- Parquet -------------------------------------------------------------------------------------


def test_parquet_round_trip(tmp_path):
    frame = pd.DataFrame(
        {
            "id": [10, 11, 12],
            "prompt": ["None", "N/A", ""],
            "response": ["r1", None, "r3"],
            "score": [0.5, float("nan"), 1.0],
        }
    )
    path = tmp_path / "data.parquet"
    frame.to_parquet(path)
    dataset = load_dataset(path)
    assert dataset.format == "parquet"
    pd.testing.assert_frame_equal(dataset.frame, frame)
    assert pd.api.types.is_string_dtype(dataset.frame["prompt"].dtype)
    assert dataset.source_rows == (1, 2, 3)
    assert dataset.row_label(2) == "row 3"


def test_parquet_duplicate_columns_rejected(tmp_path):
    table = pa.Table.from_arrays(
        [pa.array(["a"]), pa.array(["b"]), pa.array(["c"])], names=["prompt", "response", "prompt"]
    )
    path = tmp_path / "dup.parquet"
    pq.write_table(table, path)
    with pytest.raises(DatasetError, match="duplicate column names in the header: 'prompt'"):
        load_dataset(path)


def test_parquet_without_rows_and_not_parquet(tmp_path):
    path = tmp_path / "empty.parquet"
    pd.DataFrame({"prompt": pd.Series([], dtype=str)}).to_parquet(path)
    with pytest.raises(DatasetError, match="no rows"):
        load_dataset(path)
    with pytest.raises(DatasetError, match="not a readable Parquet file"):
        load_dataset(b"a,b\n1,2\n", name="fake.parquet")


# --- Excel ---------------------------------------------------------------------------------------


def test_xlsx_round_trip_empty_cells_are_empty_text(tmp_path):
    frame = pd.DataFrame(
        {
            "prompt": ["What is 2+2?", "NULL", None],
            "response": ["4", None, "five"],
            "id": [1, 2, None],
        }
    )
    path = tmp_path / "data.xlsx"
    frame.to_excel(path, index=False)
    dataset = load_dataset(path)
    assert dataset.format == "xlsx"
    assert dataset.frame["prompt"].tolist() == ["What is 2+2?", "NULL", ""]
    assert dataset.frame["response"].tolist() == ["4", "", "five"]
    assert pd.api.types.is_string_dtype(dataset.frame["prompt"].dtype)
    # A column of numbers only keeps its numbers; its empty cell is missing.
    assert dataset.frame["id"].tolist()[:2] == [1, 2] and math.isnan(dataset.frame["id"][2])
    # Header on sheet row 1, data on rows 2-4.
    assert dataset.source_rows == (2, 3, 4)
    assert dataset.row_label(0) == "row 2"


def test_xlsx_sheet_choice_mixed_column_and_empty_rows(tmp_path):
    workbook = openpyxl.Workbook()
    first = workbook.active
    first.title = "notes"
    first.append(["ignored"])
    sheet = workbook.create_sheet("runs")
    sheet.append(["prompt", "response"])
    sheet.append(["p1", 42])  # a number in a text column becomes "42"
    sheet.append([None, None])  # empty row 3, between data rows
    sheet.append(["p4", "r4"])
    sheet.append([None, None])  # trailing empty row 5: not data
    path = tmp_path / "book.xlsx"
    workbook.save(path)
    for choice in ("runs", 1):
        dataset = load_dataset(path, sheet=choice)
        assert rows(dataset) == [{"prompt": "p1", "response": "42"}, {"prompt": "p4", "response": "r4"}]
        assert dataset.source_rows == (2, 4)
        assert dataset.warnings == ["1 row(s) with every cell empty were ignored: row 3"]
    with pytest.raises(DatasetError, match=r"\[sheet 'notes'\]: no rows: the sheet has a header row"):
        load_dataset(path)
    with pytest.raises(DatasetError, match=r"no sheet 'missing' in the workbook; its sheets are \['notes', 'runs'\]"):
        load_dataset(path, sheet="missing")


def test_xlsx_duplicate_header_rejected(tmp_path):
    workbook = openpyxl.Workbook()
    workbook.active.append(["prompt", "response", "response"])
    workbook.active.append(["a", "b", "c"])
    path = tmp_path / "dup.xlsx"
    workbook.save(path)
    with pytest.raises(DatasetError, match="duplicate column names in the header: 'response'") as caught:
        load_dataset(path)
    assert caught.value.row == 1


def test_xlsx_header_only_and_old_xls(tmp_path):
    workbook = openpyxl.Workbook()
    workbook.active.append(["prompt", "response"])
    path = tmp_path / "header.xlsx"
    workbook.save(path)
    with pytest.raises(DatasetError, match="no rows"):
        load_dataset(path)
    with pytest.raises(DatasetError, match="save it as .xlsx"):
        load_dataset(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 100, name="old.xls")
    with pytest.raises(DatasetError, match="sheet='x' applies to Excel files only"):
        load_dataset(b"a\n1\n", name="a.csv", sheet="x")


# --- require_columns and guess_columns -------------------------------------------------------------


def test_require_columns_names_role_column_header_and_close_match(tmp_path):
    dataset = load_dataset(write(tmp_path, "data.csv", "Prompt,responses,id\na,b,1\n"))
    require_columns(dataset, {"input": "Prompt", "id": "id", "system": None})
    with pytest.raises(DatasetError) as caught:
        require_columns(dataset, {"input": "prompt", "output": "response", "ground_truth": "gold"})
    error = caught.value
    message = str(error)
    assert "the column 'prompt' mapped to the 'input' role is not in the file (did you mean 'Prompt'?)" in message
    assert "the column 'response' mapped to the 'output' role is not in the file (did you mean 'responses'?)" in message
    assert "the column 'gold' mapped to the 'ground_truth' role is not in the file." in message
    assert "Columns read from the header: ['Prompt', 'responses', 'id']" in message
    assert error.field == "prompt"
    assert error.path == str(tmp_path / "data.csv")


def test_guess_columns_roles():
    assert guess_columns(["Question", "Answer", "System Prompt", "expected-output", "UID", "other"]) == {
        "input": "Question",
        "output": "Answer",
        "system": "System Prompt",
        "ground_truth": "expected-output",
        "id": "UID",
        "context": None,
        "tool_calls": None,
        "messages": None,
    }
    assert guess_columns(["text"]) == dict.fromkeys(ROLES)
    # The first known name in each role's list wins: "prompt" before "input", "response" before "output".
    assert guess_columns(["input", "output", "prompt", "response"])["input"] == "prompt"
    assert guess_columns(["input", "output", "prompt", "response"])["output"] == "response"
    assert guess_columns(["question", "answer", "passages", "tool_calls"])["context"] == "passages"
    assert guess_columns(["instruction", "completion", "gold", "row_id"]) == {
        "input": "instruction",
        "output": "completion",
        "system": None,
        "ground_truth": "gold",
        "id": "row_id",
        "context": None,
        "tool_calls": None,
        "messages": None,
    }


# --- iter_runs -----------------------------------------------------------------------------------


def test_iter_runs_payloads(tmp_path):
    text = (
        "id,system,prompt,response,reference\na1,Be brief.,What is 2+2?,4,4\na2,,Say hi,hello,\n,  ,Empty answer,,   \n"
    )
    dataset = load_dataset(write(tmp_path, "data.csv", text))
    mapping = guess_columns(dataset.frame.columns)
    assert mapping["system"] is None  # a bare "system" column is ambiguous (often a model name): not guessed
    mapping["system"] = "system"
    assert mapping == {
        "input": "prompt",
        "output": "response",
        "system": "system",
        "ground_truth": "reference",
        "id": "id",
        "context": None,
        "tool_calls": None,
        "messages": None,
    }
    runs = list(iter_runs(dataset, mapping))
    assert runs == [
        (
            0,
            "a1",
            {
                "input": {
                    "inputMessages": [{"role": "user", "content": "What is 2+2?"}],
                    "systemMessages": [{"role": "system", "content": "Be brief."}],
                },
                "output": {"text": "4"},
                "ground_truth": "4",
            },
        ),
        (
            1,
            "a2",
            {
                "input": {"inputMessages": [{"role": "user", "content": "Say hi"}], "systemMessages": []},
                "output": {"text": "hello"},
                "ground_truth": "",  # mapped but blank: carried, so a scorer reports missing_input
            },
        ),
        (
            2,
            "line 4",
            {
                "input": {"inputMessages": [{"role": "user", "content": "Empty answer"}], "systemMessages": []},
                "output": {"text": ""},
                "ground_truth": "   ",
            },
        ),
    ]
    run = normalize_run(runs[0][2])
    assert (run.user_text, run.system_text, run.output, run.ground_truth) == ("What is 2+2?", "Be brief.", "4", "4")


def test_iter_runs_converts_parquet_values_and_keeps_a_missing_response_visible(tmp_path):
    frame = pd.DataFrame(
        {
            "key": [1.0, 2.0, None],  # float because of the missing id
            "prompt": ["p1", "p2", "p3"],
            "response": ["r1", None, "r3"],
            "target": [3.5, float("nan"), 7.0],
        }
    )
    path = tmp_path / "data.parquet"
    frame.to_parquet(path)
    dataset = load_dataset(path)
    runs = list(iter_runs(dataset, {"input": "prompt", "output": "response", "ground_truth": "target", "id": "key"}))
    assert [item_id for _, item_id, _ in runs] == ["1", "2", "row 3"]
    assert [p["ground_truth"] for _, _, p in runs] == ["3.5", "", "7"]  # mapped: carried, "" when blank
    assert "output" not in runs[1][2]  # a missing response: no output, never an empty text
    with pytest.raises(InvalidInputError) as caught:
        normalize_run(runs[1][2])
    assert caught.value.status is ScoreStatus.MISSING_INPUT and caught.value.field == "output"


def test_iter_runs_chat_shaped_json_cells(tmp_path):
    record = {
        "messages": [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi"}],
        "reply": {"role": "assistant", "content": "Hello!"},
    }
    dataset = load_dataset(write(tmp_path, "chat.jsonl", json.dumps(record)))
    [(_, item_id, payload)] = iter_runs(dataset, {"input": "messages", "output": "reply"})
    assert item_id == "line 1"
    run = normalize_run(payload)
    assert (run.user_text, run.system_text, run.output) == ("Hi", "Be kind.", "Hello!")


def test_iter_runs_rejects_bad_mappings(tmp_path):
    dataset = load_dataset(write(tmp_path, "data.csv", "id,prompt,response\n1,a,b\n1,c,d\n"))
    with pytest.raises(DatasetError, match="no column is mapped to the 'output' role"):
        iter_runs(dataset, {"input": "prompt", "output": None})
    with pytest.raises(DatasetError, match=r"unknown role\(s\) \['answer'\]"):
        iter_runs(dataset, {"input": "prompt", "output": "response", "answer": "response"})
    with pytest.raises(DatasetError, match="'reply' mapped to the 'output' role"):
        iter_runs(dataset, {"input": "prompt", "output": "reply"})
    with pytest.raises(DatasetError, match="duplicate values") as caught:
        iter_runs(dataset, {"input": "prompt", "output": "response", "id": "id"})
    assert "'1' on line 2, line 3" in str(caught.value)
    assert str(caught.value).endswith("leave it unmapped to use the row labels as ids.")  # a sentence, full stop
    assert [i for _, i, _ in iter_runs(dataset, {"input": "prompt", "output": "response"})] == ["line 2", "line 3"]


def test_skipped_row_str():
    assert str(SkippedRow(4, None, "bad")) == "line 4: bad"
    assert str(SkippedRow(None, 2, "bad")) == "row 2: bad"


# --- real data -----------------------------------------------------------------------------------


def test_realdata_recipes_csv_and_jsonl_agree():
    csv_data = load_dataset(RECIPES_CSV)
    jsonl_data = load_dataset(RECIPES_JSONL)
    assert len(csv_data.frame) == len(jsonl_data.frame) == 60
    assert csv_data.skipped == [] and jsonl_data.skipped == [] and csv_data.warnings == []
    assert list(csv_data.frame.columns) == ["id", "title", "author", "tags", "ingredients", "directions", "recipe_text"]
    assert csv_data.frame["id"].tolist() == jsonl_data.frame["id"].tolist()
    assert csv_data.frame["recipe_text"].tolist() == jsonl_data.frame["recipe_text"].tolist()
    # Multi-line quoted fields: the CSV has far more lines than records.
    multiline = csv_data.frame["ingredients"].str.contains("\n")
    assert multiline.sum() > 50
    assert csv_data.source_rows[0] == 2 and csv_data.source_rows[-1] < RECIPES_CSV.read_bytes().count(b"\n")
    # The CSV's ingredient lines are the JSONL's list joined by newlines.
    assert csv_data.frame["ingredients"][0].split("\n") == jsonl_data.frame["ingredients"][0]
    # An independent parse with pandas gives the same text.
    reference = pd.read_csv(RECIPES_CSV, dtype=str, keep_default_na=False)
    pd.testing.assert_frame_equal(csv_data.frame, reference, check_dtype=False)


def test_realdata_ifeval_responses_run_through_normalize_run():
    dataset = load_dataset(IFEVAL_RESPONSES)
    assert len(dataset.frame) == 120 and dataset.skipped == []
    mapping = guess_columns(dataset.frame.columns)
    assert mapping == {
        "input": "prompt",
        "output": "response",
        **dict.fromkeys(("system", "ground_truth", "id", "context", "tool_calls", "messages")),
    }
    runs = list(iter_runs(dataset, mapping))
    assert len(runs) == 120
    assert runs[0][1] == "line 1" and runs[-1][1] == "line 120"
    first = json.loads(IFEVAL_RESPONSES.read_text(encoding="utf-8").split("\n", 1)[0])
    run = normalize_run(runs[0][2])
    assert (run.user_text, run.output) == (first["prompt"], first["response"])


def test_sample_data_csv_and_jsonl_load_alike():
    csv_data = load_dataset(SAMPLE_DATA / "examples.csv")
    jsonl_data = load_dataset(SAMPLE_DATA / "examples.jsonl")
    assert guess_columns(csv_data.frame.columns) == guess_columns(jsonl_data.frame.columns)
    csv_runs = [(i, p) for _, i, p in iter_runs(csv_data, guess_columns(csv_data.frame.columns))]
    jsonl_runs = [(i, p) for _, i, p in iter_runs(jsonl_data, guess_columns(jsonl_data.frame.columns))]
    assert csv_runs == jsonl_runs


def test_tsv_format_means_tab(tmp_path):
    # Without the override the header's only candidate, ",", would be the delimiter.
    dataset = load_dataset(b"a,b\tc\n1,2\t3\n", name="upload.dat", format="tsv")
    assert rows(dataset) == [{"a,b": "1,2", "c": "3"}]


def test_iter_runs_context_and_tool_calls(tmp_path):
    text = (
        "q,a,context,tool_calls\n"
        'What?,Paris,"[""Paris is in France."", ""It is the capital.""]","[{""name"": ""search"", ""arguments"": {}}]"\n'
        "Q2,A2,one plain passage,\n"
    )
    dataset = load_dataset(write(tmp_path, "tools.csv", text))
    runs = list(iter_runs(dataset, {"input": "q", "output": "a", "context": "context", "tool_calls": "tool_calls"}))
    first, second = (normalize_run(payload) for _, _, payload in runs)
    assert first.context == ("Paris is in France.", "It is the capital.")
    assert [c.name for c in first.tool_calls] == ["search"]
    assert second.context == ("one plain passage",) and second.tool_calls == ()


@pytest.mark.parametrize(
    "second",
    [
        b'{"prompt": "p2", "ground_truth": "r2"}',  # the key is missing: pandas reads NaN
        b'{"prompt": "p2", "response": null, "ground_truth": "r2"}',  # null: None
    ],
)
def test_a_missing_response_is_missing_input_naming_the_output(second):
    from scorers import create_scorer
    from scorers.core.errors import MissingInputError

    data = b'{"prompt": "p1", "response": "a1", "ground_truth": "r1"}\n' + second + b"\n"
    dataset = load_dataset(data, name="missingkeys.jsonl")
    runs = list(iter_runs(dataset, guess_columns(dataset.columns)))
    payload = runs[1][2]
    assert "output" not in payload and payload["ground_truth"] == "r2"
    with pytest.raises(MissingInputError) as caught:
        create_scorer("textual-difference").run(payload)
    assert caught.value.status is ScoreStatus.MISSING_INPUT and caught.value.field == "output"
    # An empty text is a response (an empty one), not a missing one.
    empty = load_dataset(b"prompt,response,ground_truth\np2,,r2\n", name="blank.csv")
    assert next(iter_runs(empty, guess_columns(empty.columns)))[2]["output"] == {"text": ""}


def test_json_values_that_are_not_text_are_named_with_their_rows_and_first_line():
    lines = [
        {"prompt": "Add 2 and 2", "response": "4", "reference": "4"},
        {"prompt": "Add 40 and 2", "response": 42, "reference": ["42", "forty-two"]},  # line 2
        {"prompt": "Is 7 prime?", "response": True, "reference": "yes"},  # line 3
        {"prompt": "Pi?", "response": 3.14, "reference": {"value": 3.14}},  # line 4
        {"prompt": ["a", "b"], "response": [{"role": "assistant", "content": "ok"}], "reference": None},  # line 5
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    dataset = load_dataset(data, name="mixed.jsonl")
    mapping = {"input": "prompt", "output": "response", "ground_truth": "reference"}
    # prompt: only line 5's list of strings (scored as its JSON text); response: 42 and 3.14 (numbers), true
    # (a boolean) on lines 2-4; line 5's list of messages is a conversation, passed as is. reference: a list on
    # line 2 and an object on line 4; the null on line 5 is a missing cell, not a value.
    tail = "each is scored as its text (numbers as written, true/false, lists and objects as JSON)."
    assert not_text_notices(dataset, mapping) == [
        f"Field 'prompt' (the prompt) is not text in 1 row (1 list), the first on line 5: {tail}",
        f"Field 'response' (the response) is not text in 3 rows (2 numbers, 1 boolean), the first on line 2: {tail}",
        f"Field 'reference' (the ground truth) is not text in 2 rows (1 list, 1 object), the first on line 2: {tail}",
    ]
    # Text everywhere: nothing to say (a CSV is always text).
    assert not_text_notices(load_dataset(b"prompt,response\n1,2\n", name="a.csv"), mapping) == []


def test_a_response_object_that_is_no_message_is_scored_as_its_json_text_and_named():
    lines = [
        {"prompt": "p1", "response": {"answer": "4", "confidence": 0.9}, "reference": '{"answer": "4"}'},  # line 1
        {"prompt": "p2", "response": {"role": "assistant", "content": "ok"}, "reference": "ok"},  # line 2
        {"prompt": "p3", "response": {"text": "fine"}, "reference": "fine"},  # line 3
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    dataset = load_dataset(data, name="objects.jsonl")
    mapping = {"input": "prompt", "output": "response", "ground_truth": "reference"}
    payloads = [payload for _, _, payload in iter_runs(dataset, mapping)]
    # Line 1's object is no message: its JSON text (json.dumps, ", " and ": " separators) is the response.
    assert payloads[0]["output"] == {"text": '{"answer": "4", "confidence": 0.9}'}
    # A message and a {"text"} output are passed as they are.
    assert payloads[1]["output"] == {"role": "assistant", "content": "ok"}
    assert payloads[2]["output"] == {"text": "fine"}
    # The notice counts line 1's object only.
    tail = "each is scored as its text (numbers as written, true/false, lists and objects as JSON)."
    assert not_text_notices(dataset, mapping) == [
        f"Field 'response' (the response) is not text in 1 row (1 object), the first on line 1: {tail}"
    ]
    # It is scored, not rejected: b = '{"answer": "4", "confidence": 0.9}' (34 characters) against a =
    # '{"answer": "4"}' (15), all of which is a subsequence of b: ratio = 2·15/49, confidence = 1 - 19/34 = 15/34.
    result = create_scorer("textual-difference").run(payloads[0])
    assert result.score == pytest.approx(30 / 49 * 15 / 34)


def test_a_list_of_objects_that_are_no_messages_is_scored_as_its_json_text_and_named():
    lines = [
        {"prompt": [{"q": "2+2"}], "response": [{"answer": "4"}, {"answer": "four"}]},  # line 1
        {"prompt": [{"role": "user", "content": "2+2?"}], "response": [{"role": "assistant", "content": "4"}]},
        {"prompt": "3+3?", "response": [{"role": "assistant", "content": "6"}, {"answer": "6"}]},  # line 3
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    dataset = load_dataset(data, name="lists.jsonl")
    mapping = {"input": "prompt", "output": "response"}
    payloads = [payload for _, _, payload in iter_runs(dataset, mapping)]
    # Line 1: neither list holds messages, so each is its JSON text (json.dumps: ", " and ": " separators).
    assert payloads[0]["input"]["inputMessages"] == [{"role": "user", "content": '[{"q": "2+2"}]'}]
    assert payloads[0]["output"] == {"text": '[{"answer": "4"}, {"answer": "four"}]'}
    # Line 2: lists of messages are a conversation, passed as they are.
    assert payloads[1]["input"]["inputMessages"] == [{"role": "user", "content": "2+2?"}]
    assert payloads[1]["output"] == [{"role": "assistant", "content": "4"}]
    # Line 3: one object of the list is no message, so the whole list is JSON text.
    assert payloads[2]["output"] == {"text": '[{"role": "assistant", "content": "6"}, {"answer": "6"}]'}
    tail = "each is scored as its text (numbers as written, true/false, lists and objects as JSON)."
    assert not_text_notices(dataset, mapping) == [
        f"Field 'prompt' (the prompt) is not text in 1 row (1 list), the first on line 1: {tail}",
        f"Field 'response' (the response) is not text in 2 rows (2 lists), the first on line 1: {tail}",
    ]
    # Scored, not rejected as invalid input (as it was when any list of objects was read as messages): with no
    # ground truth mapped, textual difference compares the response with the prompt, here both JSON texts.
    result = create_scorer("textual-difference").run(payloads[0])
    assert result.details["comparedWith"] == "input"
    assert 0 < result.score < 1


def test_a_key_column_is_guessed_as_the_id_as_readme_says():
    # IFEval's records: {"key": 1000, "prompt": ..., "response": ...}; README: a `key` column is guessed as the id.
    assert guess_columns(["key", "prompt", "response"])["id"] == "key"
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    assert "a `key` column, as in IFEval's data, is guessed as the id" in readme
    assert "`target` or `key` column is" not in readme
