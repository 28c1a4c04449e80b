"""Dashboard helpers that need no running app: payloads, key source, sample loading, outcomes."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from dashboard.layout import PRELOADED, component_chunks, freeze_new_imports, preload_script
from dashboard.runs import RunFailure, build_payload, evaluate, split_system_messages
from dashboard.samples import COLUMNS, read_examples
from dashboard.settings import key_source
from scorers import JudgeSettings, ScoreStatus

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("  \n ", []),
        ("Be brief.", ["Be brief."]),
        ("Be brief.\n---\nUse British English.", ["Be brief.", "Use British English."]),
        ("A\n  ---  \n\n---\nB\n", ["A", "B"]),
        ("A --- B\n----\nC", ["A --- B\n----\nC"]),
    ],
)
def test_split_system_messages(text, expected):
    assert split_system_messages(text) == expected


def test_build_payload_treats_blank_fields_as_missing():
    payload = build_payload(system="S1\n---\nS2", prompt="  ", response="R", ground_truth="\n")

    assert payload == {
        "input": {
            "inputMessages": [],
            "systemMessages": [{"role": "system", "content": "S1"}, {"role": "system", "content": "S2"}],
        },
        "output": {"text": "R"},
        "ground_truth": None,
    }
    assert build_payload(system="", prompt="P", response="R", ground_truth="G")["input"]["inputMessages"] == [
        {"role": "user", "content": "P"}
    ]


@pytest.mark.parametrize(
    ("session", "secrets", "environ", "source"),
    [
        ("sk-typed", {"OPENAI_API_KEY": "sk-secret"}, {"OPENAI_API_KEY": "sk-env"}, "from this session"),
        ("", {"OPENAI_API_KEY": "sk-secret"}, {"OPENAI_API_KEY": "sk-env"}, "from secrets"),
        (" ", {"OPENAI_API_KEY": ""}, {"OPENAI_API_KEY": "sk-env"}, "from environment"),
        ("", {}, {}, "none"),
    ],
)
def test_key_source_follows_the_lookup_order_and_never_shows_the_key(session, secrets, environ, source):
    assert key_source(session, secrets, environ) == source


def test_read_examples_fills_missing_values(tmp_path):
    path = tmp_path / "examples.jsonl"
    row = {c: f"{c}-1" for c in COLUMNS} | {"ground_truth": None}
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")

    frame = read_examples(path)

    assert list(frame.columns) == list(COLUMNS)
    assert frame.loc[0, "ground_truth"] == "" and frame.loc[0, "id"] == "id-1"


def test_read_examples_names_missing_columns(tmp_path):
    path = tmp_path / "examples.jsonl"
    path.write_text(json.dumps({"id": "x", "title": "t"}) + "\n", encoding="utf-8")

    with pytest.raises(ValueError, match="missing column\\(s\\) category, scorer, system"):
        read_examples(path)


def test_evaluate_turns_scorer_errors_into_failures():
    payload = build_payload(system="", prompt="", response="an answer", ground_truth="")

    outcome = evaluate("textual-difference", {"scale": 1.0}, payload, JudgeSettings)

    assert isinstance(outcome, RunFailure)
    # no ground truth given: the target is the input, which is blank -> missing_input, named
    assert outcome.status is ScoreStatus.MISSING_INPUT
    assert outcome.message.startswith("input: Textual difference needs the run's input")


def test_a_cost_cap_needs_the_judges_price():
    from dashboard.budget import budget_problem, price_record
    from scorers.core.budget import BudgetCaps
    from scorers.core.pricing import Price

    unpriced = JudgeSettings(model="openai/fake-judge", base_url="http://127.0.0.1:9/v1", api_key="k")
    problem = budget_problem(BudgetCaps(max_cost_usd=1.0), unpriced, None)
    assert problem == "A cost cap needs the price of fake-judge: set a price per million tokens."
    assert budget_problem(BudgetCaps(max_cost_usd=1.0), unpriced, Price(0.5, 1.5)) is None  # a price was set
    assert budget_problem(BudgetCaps(max_judge_calls=5), unpriced, None) is None  # no cost cap
    assert budget_problem(BudgetCaps(max_cost_usd=1.0), None, None) is None  # no judge: nothing to price
    assert price_record(Price(0.5, 1.5)) == [0.5, 1.5] and price_record(None) is None


def test_the_server_freezes_what_is_alive_only_after_new_imports():
    name = "_scorer_studio_test_import"

    def frozen(obj: object) -> bool:  # the collector's generations hold every tracked object not frozen
        return not any(o is obj for o in gc.get_objects())

    try:
        freeze_new_imports()  # whatever the tests imported so far
        built = [[i] for i in range(3)]  # lists: always tracked by the collector
        # Nothing imported since: nothing frozen, however much was built.
        assert freeze_new_imports() is False and not frozen(built[0])
        sys.modules[name] = types.ModuleType(name)  # an import
        assert freeze_new_imports() is True and frozen(built[0]) and frozen(built)
    finally:
        sys.modules.pop(name, None)
        gc.unfreeze()


def test_the_price_list_loads_before_any_cost_is_asked_for():
    # In a fresh process (nothing imported yet): the price list is not loaded by the import of
    # scorers.core.pricing, and load_price_list loads it.
    code = (
        "import sys; from scorers.core.pricing import load_price_list; "
        "before = 'genai_prices.data' in sys.modules; load_price_list(); "
        "print(before, 'genai_prices.data' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.split() == ["False", "True"]


def test_the_preloaded_components_are_streamlits_modules():
    # Both names must be found in the installed Streamlit: a version that renames them fails here
    # (the preload would otherwise quietly load nothing).
    chunks = component_chunks()
    assert [c.split(".")[0] for c in chunks] == list(PRELOADED)
    assert all(c.endswith(".js") and len(c.split(".")) == 3 for c in chunks)
    assert component_chunks(["NoSuchComponent"]) == []
    script = preload_script(chunks)
    assert all(json.dumps(c) in script for c in chunks)
    assert preload_script([]) == ""


def test_usd_text_keeps_the_digits_of_a_small_sum():
    from scorers.core.budget import BudgetCaps
    from scorers.core.pricing import usd_text

    # Cents, and below a dollar the first 3 significant digits (trailing zeros past the cents dropped):
    # 0.28238715 → 0.282; 0.00012345 → 0.000123; 0.09996 rounds to 0.1000 → $0.10; a tiny sum is never $0.00.
    assert [usd_text(v) for v in (0.004, 0.5, 12.0, 1234.5, 0.28238715, 0.00012345, 0.000036, 0.09996, 3e-12, 0)] == [
        "$0.004",
        "$0.50",
        "$12.00",
        "$1,234.50",
        "$0.282",
        "$0.000123",
        "$0.000036",
        "$0.10",
        "$0.000000000003",
        "$0.00",
    ]
    assert BudgetCaps(max_judge_calls=100, max_cost_usd=0.004).describe() == "at most 100 judge calls, $0.004"
