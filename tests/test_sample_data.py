"""Consistency checks for sample_data/examples.jsonl and sample_data/examples.csv."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_data"
JSONL_PATH = SAMPLE_DIR / "examples.jsonl"
CSV_PATH = SAMPLE_DIR / "examples.csv"

COLUMNS = [
    "id",
    "category",
    "scorer",
    "title",
    "system",
    "prompt",
    "response",
    "ground_truth",
    "notes",
]
SCORERS = {"prompt-alignment", "textual-difference", "gluten-checker"}
CATEGORIES = {
    "code-generation",
    "format-instructions",
    "system-prompt",
    "recipe",
    "reference-answer",
    "edge-case",
}


@pytest.fixture(scope="module")
def jsonl_rows() -> list[dict]:
    rows = []
    with JSONL_PATH.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            assert line.strip(), f"blank line {lineno} in {JSONL_PATH.name}"
            obj = json.loads(line)
            assert isinstance(obj, dict), f"line {lineno} is not a JSON object"
            rows.append(obj)
    return rows


@pytest.fixture(scope="module")
def csv_frame() -> pd.DataFrame:
    return pd.read_csv(CSV_PATH, encoding="utf-8", keep_default_na=False, dtype=str)


def test_jsonl_has_expected_keys_in_order(jsonl_rows: list[dict]) -> None:
    assert 25 <= len(jsonl_rows) <= 40
    for row in jsonl_rows:
        assert list(row) == COLUMNS, row.get("id")
        for key in COLUMNS:
            assert isinstance(row[key], str), (row["id"], key)


def test_csv_has_expected_columns(csv_frame: pd.DataFrame) -> None:
    assert list(csv_frame.columns) == COLUMNS
    assert not csv_frame.isna().any().any()


def test_csv_and_jsonl_agree(jsonl_rows: list[dict], csv_frame: pd.DataFrame) -> None:
    csv_rows = [{k: str(v) for k, v in rec.items()} for rec in csv_frame.to_dict("records")]
    assert [r["id"] for r in csv_rows] == [r["id"] for r in jsonl_rows]
    for csv_row, json_row in zip(csv_rows, jsonl_rows, strict=True):
        assert csv_row == json_row, json_row["id"]


def test_ids_unique_slugs(jsonl_rows: list[dict]) -> None:
    ids = [r["id"] for r in jsonl_rows]
    assert len(ids) == len(set(ids))
    for row_id in ids:
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", row_id), row_id


def test_scorer_and_category_values(jsonl_rows: list[dict]) -> None:
    for row in jsonl_rows:
        assert row["scorer"] in SCORERS, row["id"]
        assert row["category"] in CATEGORIES, row["id"]
    assert {r["scorer"] for r in jsonl_rows} == SCORERS
    assert {r["category"] for r in jsonl_rows} == CATEGORIES


def test_required_text_fields_non_empty(jsonl_rows: list[dict]) -> None:
    for row in jsonl_rows:
        for key in ("title", "prompt", "response", "notes"):
            assert row[key].strip(), (row["id"], key)


def test_textual_difference_rows_have_ground_truth(jsonl_rows: list[dict]) -> None:
    td_rows = [r for r in jsonl_rows if r["scorer"] == "textual-difference"]
    assert len(td_rows) >= 4
    for row in td_rows:
        assert row["ground_truth"].strip(), row["id"]
    # at least one response is identical to its reference, and at least one differs
    assert any(r["response"] == r["ground_truth"] for r in td_rows)
    assert any(r["response"] != r["ground_truth"] for r in td_rows)


def test_gluten_rows_with_and_without_gluten(jsonl_rows: list[dict]) -> None:
    gluten_rows = [r for r in jsonl_rows if r["scorer"] == "gluten-checker"]
    for row in gluten_rows:
        assert row["id"].startswith(("gluten-free-", "gluten-contains-")), row["id"]
    free = [r for r in gluten_rows if r["id"].startswith("gluten-free-")]
    contains = [r for r in gluten_rows if r["id"].startswith("gluten-contains-")]
    assert len(free) >= 2
    assert len(contains) >= 2
    # the id prefix is reserved for gluten-checker rows
    for row in jsonl_rows:
        if row["id"].startswith("gluten-"):
            assert row["scorer"] == "gluten-checker", row["id"]


def test_system_rows_have_system_message(jsonl_rows: list[dict]) -> None:
    system_rows = [r for r in jsonl_rows if r["category"] == "system-prompt"]
    assert len(system_rows) >= 2
    for row in system_rows:
        assert row["system"].strip(), row["id"]
