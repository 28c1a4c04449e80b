"""AppTest tests of the Compare page (no network: the target model and the judge are the fake OpenAI server).

The page generates and scores in a background thread; a test presses the button, then
reruns the script until the session's job has finished, as the page's refresh would.
Expected scores are worked out by hand in the comments.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from fake_openai import FakeOpenAI, Reply
from judge_data import dimension_set, settings_for, single_analysis
from streamlit.testing.v1 import AppTest

from dashboard import run_explorer
from scorers import EvalItem, Store, create_scorer, load_run, run_evals
from scorers.analysis.report import run_report
from scorers.runs import jobs
from scorers.runs.table import load_run_table

# Six questions whose answers have distinct lengths L = 3..8.
ANSWERS = {
    "Which colour is a ripe tomato?": "Red",
    "What is two plus two in words?": "Four",
    "What is the capital of France?": "Paris",
    "Which fruit shares its name with a colour?": "Orange",
    "Which planet is the largest?": "Jupiter",
    "Which day comes after Wednesday?": "Thursday",
}
CSV = "id,question,answer\n" + "".join(f"q{n},{q},{a}\n" for n, (q, a) in enumerate(ANSWERS.items(), 1))
BRIEF = "Answer in one short sentence."

# Variant A (no system prompt) answers with the ground truth itself: textual difference 1.
# Variant B (system prompt BRIEF) lower-cases the first letter: "Paris" → "paris". Indel similarity
# = 1 − 2/(2L) = (L − 1)/L, equal lengths → confidence 1, so its score is (L − 1)/L and A − B = 1/L.
TD_B = {a: (len(a) - 1) / len(a) for a in ANSWERS.values()}
MEAN_B = sum(TD_B.values()) / 6  # (2/3 + 3/4 + 4/5 + 5/6 + 6/7 + 7/8) / 6 ≈ 0.79702
# Paired: A wins on all 6 questions, all |d| = 1/L distinct, so the exact two-sided Wilcoxon
# signed-rank p-value is 2 · (1/2)^6 = 0.03125: "p = 0.03".

# Prompt alignment: every variant is judged on one basis, the user prompt (B's own system prompt is not
# shown to the judge): user mode for both: 0.40·0.9 + 0.30·0.8 + 0.20·0.7 + 0.10·1.0 = 0.84. (Judged
# against B's system prompt too, as before, B would get both mode: 0.7·1 + 0.3·0.5 = 0.85.)
USER = single_analysis(0.9, 0.8, 0.7, 1.0)
BOTH = {
    "user": dimension_set(1.0, 1.0, 1.0, 1.0),
    "system": dimension_set(0.5, 0.5, 0.5, 0.5),
    "overallAssessment": "Right answer; the brevity rule is half followed.",
}


def responder(body: dict[str, Any]) -> Reply:
    """Target model (no response_format): answer per variant; judge: by the requested schema."""
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("name")
    if schema is not None:
        return Reply.json(BOTH if schema == "prompt_alignment_both" else USER)
    messages = body["messages"]
    answer = ANSWERS[messages[-1]["content"]]
    if messages[0]["role"] == "system":
        return Reply.content(answer[0].lower() + answer[1:], usage={"prompt_tokens": 20, "completion_tokens": 2})
    return Reply.content(answer, usage={"prompt_tokens": 10, "completion_tokens": 2})


@pytest.fixture
def judge(fake_judge: FakeOpenAI) -> FakeOpenAI:
    fake_judge.responder = responder
    return fake_judge


def upload(at: AppTest, name: str, data: str) -> None:
    at.radio(key="compare_source").set_value("Upload a file").run()
    at.file_uploader(key="compare_upload").upload(name, data.encode(), "text/plain")
    at.run()
    assert not at.exception


def show(at: AppTest, tab: str = "2. Comparison") -> None:
    """Open one of the page's tabs (only the open one is built, and the first, which holds the setup) and rerun."""
    at.session_state["compare_tab"] = tab
    at.run()
    assert not at.exception


def keyed(at: AppTest, kind: str, prefix: str, suffix: str = "") -> Any:
    """The widget of ``kind`` whose key starts with ``prefix`` (and ends with ``suffix``)."""
    (widget,) = [w for w in at.get(kind) if w.key and w.key.startswith(prefix) and w.key.endswith(suffix)]
    return widget


def wait_for_job(at: AppTest, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while jobs.get(at.session_state["job_compare"]).running:
        assert time.monotonic() < deadline, "the comparison job did not finish"
        time.sleep(0.1)
        at.run()
    at.run()
    assert not at.exception


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def chart_keys(at: AppTest) -> list[str]:
    return [c.key for c in at.get("plotly_chart")]


def table_with(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def markdown_text(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_page_renders_and_checks_templates_as_you_type(open_page):
    at = open_page("compare")
    assert at.title[0].value == "Compare"
    assert [t.label for t in at.tabs] == ["1. Variants and scoring", "2. Comparison", "3. Run vs run", "4. Report"]
    assert "examples.csv: 34 rows loaded, 9 columns (csv)." in [c.value for c in at.caption]
    # Two variants by default, each template over the guessed question column.
    templates = [t for t in at.text_area if t.key and t.key.endswith("_template")]
    assert [t.value for t in templates] == ["{prompt}", "{prompt}"]
    assert not any("No comparison yet" in i.value for i in at.info)  # the Comparison tab is built when opened
    # One stated basis for every variant, the user prompt by default.
    assert any(
        i.value.startswith("Every variant is judged against the dataset's user prompt (column 'prompt') only")
        for i in at.info
    )
    # Without a key nothing can be generated: the page says how to fix it, and the button is off.
    assert any("No API key" in e.value for e in at.error)
    assert at.button(key="compare_go").disabled

    templates[1].input("Answer briefly.\nQuestion: {question}").run()
    problem = [e.value for e in at.error if "{question}" in e.value]
    assert problem and "line 2, column 11" in problem[0] and "no column 'question'" in problem[0]
    assert at.button(key="compare_go").disabled
    show(at)
    assert any("No comparison yet" in i.value for i in at.info)
    assert at.text_area(key=templates[1].key).value == "Answer briefly.\nQuestion: {question}"  # the setup is kept


def test_textual_difference_without_a_ground_truth_says_what_it_would_measure(open_page):
    at = open_page("compare")
    upload(at, "questions.csv", CSV)  # the answer column is the ground truth
    assert "textual-difference" in at.multiselect(key="compare_scorers").value
    assert not [w for w in at.warning if w.value.startswith("Textual difference has no ground truth")]
    upload(at, "questions_only.csv", "id,question\nq1,What is the capital of France?\n")
    assert "textual-difference" in at.multiselect(key="compare_scorers").value
    assert [w.value for w in at.warning if w.value.startswith("Textual difference has no ground truth")] == [
        "Textual difference has no ground truth column to compare with here, so it compares each response with "
        "the question: it ranks the variants by how much of the question they repeat, not by whether they are "
        "right. Choose the ground truth column above, or leave textual difference out."
    ]


def test_generate_two_variants_then_compare_and_report(open_page, judge: FakeOpenAI, downloads, studio_db):
    at = open_page("compare")
    upload(at, "questions.csv", CSV)
    assert keyed(at, "selectbox", "compare_input_").value == "question"
    assert keyed(at, "selectbox", "compare_truth_").value == "answer"
    assert keyed(at, "selectbox", "compare_id_").value == "id"
    assert keyed(at, "number_input", "compare_rows_").value == 6
    keyed(at, "text_area", "compare_v0_", "_system").input("").run()
    keyed(at, "text_area", "compare_v1_", "_system").input(BRIEF).run()
    keyed(at, "text_input", "compare_v1_", "_name").input("B").run()
    at.multiselect(key="compare_scorers").set_value(["textual-difference", "prompt-alignment"]).run()
    assert not at.error
    assert "6 rows × 2 variants = 12 responses to generate" in "\n".join(c.value for c in at.caption)
    at.text_input(key="compare_run_name").input("Brevity check").run()
    at.button(key="compare_go").click().run()
    wait_for_job(at)
    show(at)  # the comparison is in its tab

    # 12 generations + 12 prompt-alignment judge calls; textual difference calls nothing.
    assert judge.chat_call_count == 24
    job = jobs.get(at.session_state["job_compare"])
    run_id = job.run_id
    assert at.success[0].value.startswith(f"Stored as run {run_id}")
    assert not at.warning  # no generation failed, and every default is set once
    assert metrics(at)["Responses generated"] == "12"
    assert metrics(at)["Not generated"] == "0"
    # Tokens: A 6 × (10 + 2), B 6 × (20 + 2).
    assert metrics(at)["Generation tokens"] == "204"
    helps = [m.proto.help for m in at.metric if m.label == "Generation cost"]  # the job's, and the comparison's
    assert helps and all(h.startswith("At each variant's model's list price (genai-prices, offline") for h in helps)
    assert at.selectbox(key="compare_run_pick").value == run_id

    # Leaderboard: per variant and scorer, failures apart, CI around the mean.
    board = table_with(at, "ci_low")
    td = board[board["scorer"] == "Textual difference (vs ground truth)"].set_index("variant")
    assert td.loc["A", "mean"] == pytest.approx(1.0)
    assert td.loc["B", "mean"] == pytest.approx(MEAN_B)
    assert td.loc["B", "ci_low"] <= MEAN_B <= td.loc["B", "ci_high"]
    assert (td.loc["A", "n_scored"], td.loc["A", "n_failed"]) == (6, 0)
    # Generation cost is one figure per variant, not per scorer: the leaderboard (one row per variant × scorer)
    # does not repeat it; a table of its own has one row per variant, whose sum is the Generation cost tile.
    # gpt-4o-mini list price: A 6 × (10 + 2) tokens = (60 × $0.15 + 12 × $0.60) / 1e6 = $0.0000162;
    # B 6 × (20 + 2) = (120 × $0.15 + 12 × $0.60) / 1e6 = $0.0000252; together $0.0000414.
    assert "cost_usd" not in board.columns and not any("cost" in c for c in board.columns)
    tables = [d for d in at.dataframe if "generation cost (USD)" in d.value.columns]  # the job's, the comparison's
    assert len(tables) == 2 and tables[0].value.equals(tables[1].value)
    costs = tables[1]
    per_variant = costs.value.set_index("variant")["generation cost (USD)"]
    assert per_variant.to_dict() == pytest.approx({"A": 0.0000162, "B": 0.0000252})
    assert [m.value for m in at.metric if m.label == "Generation cost"][-1] == "$0.0000414"
    assert per_variant.sum() == pytest.approx(0.0000414)
    # $0.0000162 is shown in full ("%g"), never "0.0000" ("%.4f"), which reads as free.
    columns = json.loads(costs.proto.columns)
    assert columns["generation cost (USD)"]["type_config"]["format"] == "%g"
    pa = board[board["scorer"] == "Prompt alignment"].set_index("variant")
    assert (pa.loc["A", "mean"], pa.loc["B", "mean"]) == (pytest.approx(0.84), pytest.approx(0.84))
    basis = "Every variant is judged against the dataset's user prompt (column 'question') only"
    assert any(c.value.startswith(basis) for c in at.caption)

    key = f"compare_{run_id}"
    charts = set(chart_keys(at))
    for sid in ("textual-difference", "prompt-alignment"):
        assert {f"{key}_board_{sid}", f"{key}_dist_{sid}", f"{key}_dims_{sid}"} <= charts
    assert {f"{key}_wtl", f"{key}_h2h"} <= charts

    # Head to head on textual difference: the paired test in words.
    at.selectbox(key=f"{key}_scorer").set_value("textual-difference").run()
    text = markdown_text(at)
    assert "Variant A scored higher than B on 6 of 6 questions and lower on 0 (no ties)" in text
    assert "unlikely if the two variants were equally good (Wilcoxon signed-rank test, p = 0.031)" in text
    assert metrics(at)["A wins"] == "6" and metrics(at)["Ties"] == "0" and metrics(at)["Wilcoxon p"] == "0.031"
    h2h = next(c for c in at.get("plotly_chart") if c.key == f"{key}_h2h")
    points = {t["name"]: t for t in json.loads(h2h.proto.spec)["data"]}
    assert sorted(points["A higher"]["y"]) == pytest.approx(sorted(TD_B.values()))

    # Rows by |Δ|: the shortest answer first (Δ = 1/3), both responses side by side, with a diff.
    rows = table_with(at, "Δ (A − B)")
    assert rows["row_id"].tolist()[0] == "q1"
    assert rows["Δ (A − B)"].tolist() == pytest.approx(sorted((1 / len(a) for a in ANSWERS.values()), reverse=True))
    assert at.selectbox(key=f"{key}_row").value == "q1"
    assert any("Red" in h.proto.body and "red" in h.proto.body for h in at.get("html"))
    # The shared diff view (dashboard/diff.py): whole words by default, single characters on request:
    # "Red" → "red" replaces the word, or only its first letter.
    assert at.session_state[f"{key}_row_diff_level"] == "word"
    assert any('">Red</del>' in h.proto.body and '">red</ins>' in h.proto.body for h in at.get("html"))
    at.session_state[f"{key}_row_diff_level"] = "char"
    at.run()
    assert any('">R</del>' in h.proto.body and '">r</ins>' in h.proto.body for h in at.get("html"))
    assert f"{key}_row_a_textual-difference_textual_difference" in chart_keys(at)

    # Pairwise judge is optional: nothing is called until its button is pressed.
    assert judge.chat_call_count == 24

    # Report: built on request, one self-contained HTML file.
    show(at, "4. Report")
    at.button(key=f"compare_report_cmp_{run_id}_build").click().run()
    html = downloads.of(at, f"compare_report_cmp_{run_id}_download").decode()
    assert html.startswith("<!DOCTYPE html>")
    assert "Comparison report: Brevity check" in html and "test-key" not in html
    assert "Judged against" in html and "user prompt (column &#x27;question&#x27;) only" in html
    at.button(key=f"compare_report_run_{run_id}_build").click().run()
    assert downloads.of(at, f"compare_report_run_{run_id}_download").decode().startswith("<!DOCTYPE html>")

    # Stored with its variant groups, so History can reopen it.
    store = Store(studio_db)
    run, items, result = load_run(store, run_id)
    assert run["name"] == "Brevity check" and run["status"] == "completed"
    assert run["config"]["source"] == "compare"
    assert run["config"]["judging_basis"]["input_col"] == "question"
    assert run["config"]["judging_basis"]["system_col"] is None
    assert [v["name"] for v in run["config"]["variants"]] == ["A", "B"]
    assert {it.groups["variant"] for it in items} == {"A", "B"}
    assert sorted(it.groups["row_id"] for it in items if it.groups["variant"] == "A") == [f"q{n}" for n in range(1, 7)]
    assert len(result.outcomes) == 24
    store.close()


def test_pairwise_judge_win_rates(open_page, judge: FakeOpenAI, studio_db):
    def pairwise(body: dict[str, Any]) -> Reply:
        schema = (body.get("response_format") or {}).get("json_schema", {}).get("name")
        if schema == "pairwise_choice":
            # A's answer is the capitalised one: prefer it in whichever position it is shown.
            prompt = body["messages"][-1]["content"]
            first = prompt.split("response_first")[1]
            choice = "first" if any(a in first for a in ANSWERS.values()) else "second"
            return Reply.json({"reasoning": "Capitalised proper answer.", "choice": choice})
        return responder(body)

    judge.responder = pairwise
    at = open_page("compare")
    upload(at, "questions.csv", CSV)
    keyed(at, "text_area", "compare_v0_", "_system").input("").run()
    keyed(at, "text_area", "compare_v1_", "_system").input(BRIEF).run()
    keyed(at, "number_input", "compare_rows_").set_value(3).run()
    at.multiselect(key="compare_scorers").set_value(["textual-difference"]).run()
    at.button(key="compare_go").click().run()
    wait_for_job(at)
    show(at)  # the comparison is in its tab
    run_id = jobs.get(at.session_state["job_compare"]).run_id
    key = f"compare_{run_id}"
    calls = judge.chat_call_count
    assert calls == 6
    at.button(key=f"{key}_pairwise_run").click().run()
    assert not at.exception
    # A background job of the server: wait for it as the page's refresh would.
    deadline = time.monotonic() + 60
    while jobs.get(at.session_state["job_pairwise"]).running:
        assert time.monotonic() < deadline, "the pairwise job did not finish"
        time.sleep(0.1)
    at.run()
    assert judge.chat_call_count == calls + 6  # 3 pairs, both orders
    assert f"{key}_winrate" in chart_keys(at)
    verdicts = table_with(at, "winner")
    assert verdicts["winner"].tolist() == ["A", "A", "A"]
    # A preferred in both orders on every pair: no order flip.
    assert verdicts["order flipped"].tolist() == [False, False, False]
    assert metrics(at)["Order flips"] == "0%"
    # Stored with the run: shown again on a fresh page, and in the report.
    again = open_page("compare")
    show(again)
    again.selectbox(key="compare_run_pick").set_value(run_id).run()
    assert table_with(again, "order flipped")["winner"].tolist() == ["A", "A", "A"]
    store = Store(studio_db)
    try:
        html = run_report(store, run_id)
    finally:
        store.close()
    assert "Pairwise judge: A vs B" in html and "order flips 0%" in html


def test_existing_responses_in_columns_one_variant_edge_case(open_page):
    csv = "question,reference,short,long\nSay hi.,hi,hi,hello there\nSay bye.,bye,bye,goodbye\nSay yes.,yes,yes,yes\n"
    at = open_page("compare")
    upload(at, "answers.csv", csv)
    at.radio(key="compare_mode").set_value("Use existing responses").run()
    keyed(at, "selectbox", "compare_truth_").set_value("reference").run()
    keyed(at, "multiselect", "compare_response_cols_").set_value(["short"]).run()
    at.multiselect(key="compare_scorers").set_value(["textual-difference"]).run()
    assert "3 responses of 1 variant(s): short." in [c.value for c in at.caption]
    assert not at.error  # no judge and no generation: no key needed
    at.button(key="compare_go").click().run()
    wait_for_job(at)
    show(at)  # the comparison is in its tab
    run_id = jobs.get(at.session_state["job_compare"]).run_id
    assert any(i.value.startswith("Only one variant (short) is in this run") for i in at.info)
    charts = {c.key: c for c in at.get("plotly_chart")}
    board_chart = json.loads(charts[f"compare_{run_id}_board_textual-difference"].proto.spec)
    assert board_chart["layout"]["annotations"][0]["text"].startswith("Only one variant has scored items")

    # Both columns: "short" equals the reference (1 each); "long": "hello there" vs "hi": LCS "h" → 2·1/13,
    # lengthDiff 9/11 → (2/13)(2/11); "goodbye" vs "bye": ratio 6/10, lengthDiff 4/7 → 0.6·3/7; "yes" → 1.
    keyed(at, "multiselect", "compare_response_cols_").set_value(["short", "long"]).run()
    at.button(key="compare_go").click().run()
    wait_for_job(at)
    show(at)  # the comparison is in its tab
    run_id = jobs.get(at.session_state["job_compare"]).run_id
    board = table_with(at, "ci_low").set_index("variant")
    assert board.loc["short", "mean"] == pytest.approx(1.0)
    assert board.loc["long", "mean"] == pytest.approx((2 / 13 * 2 / 11 + 0.6 * 3 / 7 + 1) / 3)
    text = markdown_text(at)
    assert "Variant short scored higher than long on 2 of 3 questions and lower on 0 (1 tie)" in text
    assert "Only 2 questions have different scores, too few" in text


@pytest.mark.parametrize(
    ("name", "data", "where"),
    [
        # CSV: the header is line 1, so the second record (the first repeat of id 1) is on line 3.
        ("answers.csv", "id,question,short\n1,Say hi.,hi\n1,Say bye.,bye\n3,Say yes.,yes\n", "answers.csv, line 3"),
        # JSON Lines: one record a line; the repeat of id 1 is the third record, on line 3.
        (
            "answers.jsonl",
            '{"id": 1, "question": "a", "short": "x"}\n{"id": 2, "question": "b", "short": "y"}\n'
            '{"id": 1, "question": "c", "short": "z"}\n',
            "answers.jsonl, line 3",
        ),
    ],
)
def test_a_repeated_question_id_names_the_file_and_its_line_counted_from_1(open_page, name, data, where):
    at = open_page("compare")
    upload(at, name, data)
    at.radio(key="compare_mode").set_value("Use existing responses").run()
    keyed(at, "selectbox", "compare_id_").set_value("id").run()
    keyed(at, "multiselect", "compare_response_cols_").set_value(["short"]).run()
    assert [e.value for e in at.error if "second response" in e.value] == [
        f"{where}: a second response of variant 'short' (among the response columns) for '1' of column 'id'; "
        "pairs need one response per variant and question: in this layout each row is one question, so its id "
        "must not repeat"
    ]


# MT-Bench-like long layout (written for this test): one row per question and model.
LONG_CSV = (
    "question_id,category,model,turn,reference,response\n"
    "81,writing,gpt-4,Name a primary colour.,red,red\n"
    "81,writing,llama-13b,Name a primary colour.,red,rad\n"
    "82,math,gpt-4,What is 3 times 4?,twelve,twelve\n"
    "82,math,llama-13b,What is 3 times 4?,twelve,twelve\n"
)


def test_long_layout_pairs_by_question_id_and_proposes_the_model_column(open_page):
    at = open_page("compare")
    upload(at, "mt_bench.csv", LONG_CSV)
    at.radio(key="compare_mode").set_value("Use existing responses").run()
    at.radio(key="compare_layout").set_value("One row per response, with a variant or model column").run()
    # question_id repeats (once per model), as it must in this layout: no error, and it is the id.
    assert keyed(at, "selectbox", "compare_id_").value == "question_id"
    keyed(at, "selectbox", "compare_input_").set_value("turn").run()
    keyed(at, "selectbox", "compare_truth_").set_value("reference").run()
    # "model" repeats across ids but never within one; "category" repeats within an id.
    assert keyed(at, "selectbox", "compare_variant_col_").value == "model"
    assert keyed(at, "selectbox", "compare_output_col_").value == "response"
    at.multiselect(key="compare_scorers").set_value(["textual-difference"]).run()
    assert not at.error
    assert "4 responses of 2 variant(s): gpt-4, llama-13b." in [c.value for c in at.caption]
    at.button(key="compare_go").click().run()
    wait_for_job(at)
    show(at)  # the comparison is in its tab
    run_id = jobs.get(at.session_state["job_compare"]).run_id
    # Pairs by question id: 81: "red" vs "rad" (ratio 2·2/6 = 2/3, equal lengths: 2/3); 82: equal (1 vs 1).
    text = markdown_text(at)
    assert "Variant gpt-4 scored higher than llama-13b on 1 of 2 questions and lower on 0 (1 tie)" in text
    assert metrics(at)["Rows"] == "2"
    assert at.session_state[f"compare_{run_id}_pair"] == "group:row_id"
    # The pairing names the id column chosen on the first tab, not the internal row_id group.
    pair = at.selectbox(key=f"compare_{run_id}_pair")
    assert pair.options[pair.index] == "question_id (the question id column)"
    key = f"compare_{run_id}"
    # Ranking: one game per question: 81 gpt-4 wins, 82 a tie (½ each) → wins 1.5 : 0.5.
    ranked = table_with(at, "strength")
    assert ranked["variant"].tolist() == ["gpt-4", "llama-13b"]
    assert ranked["wins"].tolist() == pytest.approx([1.5, 0.5])
    tests = table_with(at, "p_holm")
    assert tests[["A", "B", "A wins", "ties", "B wins"]].values.tolist() == [["gpt-4", "llama-13b", 1, 1, 0]]
    # Per question: every variant's score side by side (81: 1 vs 2/3; 82: 1 vs 1).
    per_question = table_with(at, "prompt").set_index("question")
    assert per_question.loc["81", "gpt-4"] == pytest.approx(1.0)
    assert per_question.loc["81", "llama-13b"] == pytest.approx(2 / 3)
    assert at.selectbox(key=f"{key}_pq_question").value == "81"
    # Breakdown by the dataset's category column (kept as a group by default).
    assert at.selectbox(key=f"{key}_by").value == "group:category"
    by = table_with(at, "category").set_index(["category", "variant"])
    assert by.loc[("writing", "llama-13b"), "mean"] == pytest.approx(2 / 3)
    assert f"{key}_by_chart" in chart_keys(at)

    # A second response of one model to one question: the error names the column, and the rest of the
    # form (scorers, run button) stays on the page.
    upload(at, "twice.csv", LONG_CSV + "81,writing,gpt-4,Name a primary colour.,red,blue\n")
    keyed(at, "selectbox", "compare_input_").set_value("turn").run()
    keyed(at, "selectbox", "compare_variant_col_").set_value("model").run()
    errors = [e.value for e in at.error]
    assert any("second response of variant 'gpt-4'" in e and "column 'question_id'" in e for e in errors)
    assert at.multiselect(key="compare_scorers") is not None
    assert at.button(key="compare_go").disabled


# The fresh user's MT-Bench long file: no column is named like a question ("turn_1"), and the
# responses are in "response", which the Generate mode proposes as the ground truth.
MT_LONG_CSV = (
    "question_id,category,turn_1,model,response\n"
    "81,writing,Name a primary colour.,gpt-4,red\n"
    "81,writing,Name a primary colour.,llama-13b,rad\n"
    "82,math,What is 3 times 4?,gpt-4,twelve\n"
    "82,math,What is 3 times 4?,llama-13b,twelve\n"
)


def test_long_layout_defaults_never_score_the_wrong_columns(open_page):
    at = open_page("compare")
    upload(at, "mt_long.csv", MT_LONG_CSV)
    # Generating: the existing answers are the reference the new responses are compared with.
    assert keyed(at, "selectbox", "compare_truth_generate_").value == "response"
    at.radio(key="compare_mode").set_value("Use existing responses").run()
    at.radio(key="compare_layout").set_value("One row per response, with a variant or model column").run()
    at.multiselect(key="compare_scorers").set_value(["textual-difference"]).run()
    # That guess is not carried into this mode, where "response" holds the responses.
    assert keyed(at, "selectbox", "compare_truth_existing_").value is None
    # No column is named like a question: the box is left to choose (not the first column, question_id),
    # nothing claims what the variants are judged against, and Score is blocked by a message naming it.
    question = keyed(at, "selectbox", "compare_input_")
    assert question.value is None and question.placeholder == "choose…"
    assert not [i for i in at.info if i.value.startswith("Every variant is judged against")]
    assert any("Choose the question column" in e.value for e in at.error)
    assert at.button(key="compare_go").disabled
    # The response column is proposed from its name, the variant from the values (not the breakdown column).
    assert keyed(at, "selectbox", "compare_output_col_").value == "response"
    assert keyed(at, "selectbox", "compare_variant_col_").value == "model"
    assert keyed(at, "multiselect", "compare_group_cols_").value == ["category"]
    question.set_value("turn_1").run()
    # Only the warning that textual difference, with no ground truth here, compares with the question.
    assert not at.error and [w.value[:40] for w in at.warning] == ["Textual difference has no ground truth c"]
    assert not at.button(key="compare_go").disabled
    assert "4 responses of 2 variant(s): gpt-4, llama-13b." in [c.value for c in at.caption]

    # A response column that is also a breakdown column is warned about.
    keyed(at, "selectbox", "compare_output_col_").set_value("category").run()
    assert [w.value for w in at.warning if w.value.startswith("Column ")] == [
        "Column 'category' is used as the breakdown columns and as the response column. Each role usually needs "
        "its own column: check the choices above."
    ]


def test_generate_mode_warns_when_two_roles_share_a_column(open_page):
    at = open_page("compare")
    upload(at, "mt_long.csv", MT_LONG_CSV)
    keyed(at, "selectbox", "compare_input_").set_value("turn_1").run()
    keyed(at, "selectbox", "compare_truth_generate_").set_value("turn_1").run()
    warnings = [w.value for w in at.warning]
    assert any(
        w.startswith("Column 'turn_1' is used as the question column and as the ground truth column.") for w in warnings
    )


def test_run_vs_run_regressions_and_a_different_dataset(open_page, fake_openai: FakeOpenAI, studio_db: Path, downloads):
    """Two runs of the same responses judged by two judge models; then a run over other questions."""

    def by_model(body: dict[str, Any]) -> Reply:
        # fake-judge is harsher on intent: 0.40·0.4 + 0.30·0.8 + 0.20·0.7 + 0.10·1.0 = 0.64 (vs 0.84).
        low = body["model"] == "fake-judge" and "bye" in body["messages"][-1]["content"]
        return Reply.json(single_analysis(0.4 if low else 0.9, 0.8, 0.7, 1.0))

    fake_openai.responder = by_model
    items = [
        EvalItem("hi", {"input": "Say hi.", "output": "hi"}),
        EvalItem("bye", {"input": "Say bye.", "output": "bye"}),
    ]
    store = Store(studio_db)
    ids = []
    for model, name in (("gpt-4o-mini", "Baseline judge"), ("fake-judge", "Stricter judge")):
        scorer = create_scorer(
            "prompt-alignment", {"evaluation_mode": "user"}, settings=settings_for(fake_openai, model=model)
        )
        result = run_evals(
            items,
            [scorer],
            store=store,
            run_name=name,
            dataset_name="greetings.csv",
            scorer_options={"prompt-alignment": {"evaluation_mode": "user"}},
        )
        ids.append(result.run_id)
    other = run_evals(
        [EvalItem("thanks", {"input": "Say thanks.", "output": "thanks"})],
        [create_scorer("textual-difference")],
        store=store,
        run_name="Other questions",
        dataset_name="other.csv",
    )
    store.close()

    at = open_page("compare")
    assert "compare_diff_a" not in at.session_state  # Run vs run is built only when its tab is open
    at.session_state["compare_tab"] = "3. Run vs run"
    at.run()
    at.selectbox(key="compare_diff_a").set_value(ids[0]).run()
    at.selectbox(key="compare_diff_b").set_value(ids[1]).run()
    assert at.success[0].value == "Both runs score the same dataset (2 rows matched by id)."
    # A dimension one run's scored outcomes lack has no mean there: "—", as the caption says, not "None".
    assert next(d for d in at.dataframe if "mean in A" in d.value.columns).proto.placeholder == "—"
    assert '"—": no value (a dimension no scored outcome of that run has, so no mean nor change).' in [
        c.value for c in at.caption
    ]
    # The stored runs' table is built when its expander is opened: newest first, the three runs.
    assert "Stored runs" in [e.label for e in at.expander]
    assert [d for d in at.dataframe if "first judge" in d.value.columns] == []
    at.session_state["compare_diff_runs"] = True
    at.run()
    assert table_with(at, "first judge")["name"].tolist() == ["Other questions", "Stricter judge", "Baseline judge"]
    at.session_state["compare_diff_runs"] = False
    at.run()
    assert metrics(at)["Regressions"] == "1"
    assert metrics(at)["Improvements"] == "0"
    assert metrics(at)["Unchanged"] == "1"
    assert "No row got better in run B." in [c.value for c in at.caption]  # no improvements table, a sentence
    # B − A: hi 0.84 − 0.84 = 0 (a tie), bye 0.64 − 0.84 = −0.20 (a loss); two runs, over items.
    (sentence,) = [m.value for m in at.markdown if "scored higher than" in m.value]
    assert (
        "Run B (Stricter judge) scored higher than run A (Baseline judge) on 0 of 2 items and lower on 1 (1 tie)"
        in (sentence.replace("\\", ""))
    )
    assert "ariant" not in sentence and "question" not in sentence
    assert len([d for d in at.dataframe if "item_id" in d.value.columns]) == 1  # the regressions only
    regressions = table_with(at, "item_id")
    assert regressions["item_id"].tolist() == ["bye"]
    assert regressions["Δ (B − A)"].tolist() == pytest.approx([0.64 - 0.84])
    # Intent per run: A 0.9 on both items; B 0.9 (hi) and 0.4 (bye), mean 0.65; B − A = −0.25.
    dims = table_with(at, "scorer · dimension")
    intent = dims[dims["scorer · dimension"].str.contains("Intent")].iloc[0]
    assert (intent["mean in A"], intent["mean in B"], intent["Δ (B − A)"]) == pytest.approx((0.9, 0.65, -0.25))
    # The charts are built only when their expander is opened (their module is heavy for the browser).
    pair = f"compare_diff_{ids[0]}_{ids[1]}"
    assert chart_keys(at) == []
    at.session_state[f"{pair}_charts"] = True
    at.run()
    assert {f"{pair}_scorers", f"{pair}_dims"} <= set(chart_keys(at))
    dims = next(c for c in at.get("plotly_chart") if c.key == f"{pair}_dims")
    bars = json.loads(dims.proto.spec)["data"][0]
    intent = bars["x"][[n for n, label in enumerate(bars["y"]) if "Intent" in label][0]]
    assert intent == pytest.approx((0.4 - 0.9) / 2)

    build = f"compare_report_diff_{ids[0]}_{ids[1]}"
    at.button(key=f"{build}_build").click().run()
    html = downloads.of(at, f"{build}_download").decode()
    assert "Run comparison: Stricter judge against Baseline judge" in html

    at.selectbox(key="compare_diff_b").set_value(other.run_id).run()
    warning = at.warning[0].value
    assert warning.startswith("The runs are not over the same dataset")
    assert "Only the rows with the same id in both runs are compared" in warning
    assert any("The two runs have no scorer in common" in w.value for w in at.warning)

    # The same dataset scored by another scorer: no row matched, and nothing says "0 rows matched".
    store = Store(studio_db)
    textual = run_evals(
        items, [create_scorer("textual-difference")], store=store, run_name="Textual", dataset_name="greetings.csv"
    ).run_id
    store.close()
    at.run()
    at.selectbox(key="compare_diff_b").set_value(textual).run()
    assert not at.success and "Both runs score the same dataset." in [i.value for i in at.info]
    assert any("The two runs have no scorer in common" in w.value for w in at.warning)

    # A common scorer but no common row: nothing is compared, so no chart of changes is drawn.
    store = Store(studio_db)
    fresh = run_evals(
        [EvalItem("welcome", {"input": "Say welcome.", "output": "welcome"})],
        [create_scorer("textual-difference")],
        store=store,
        run_name="Fresh questions",
        dataset_name="fresh.csv",
    ).run_id
    store.close()
    at.run()
    at.selectbox(key="compare_diff_a").set_value(other.run_id).run()
    at.selectbox(key="compare_diff_b").set_value(fresh).run()
    assert metrics(at)["Outcomes compared"] == "0"
    assert any(i.value.startswith("No outcome was scored in both runs") for i in at.info)
    assert not [k for k in chart_keys(at) if k.startswith(f"compare_diff_{other.run_id}_{fresh}")]


def test_a_run_link_opens_run_vs_run_and_reads_each_run_once_per_version(
    open_page, studio_db: Path, monkeypatch: pytest.MonkeyPatch
):
    td = create_scorer("textual-difference")
    store = Store(studio_db)
    ids = [
        run_evals(
            [EvalItem("hi", {"input": "hi", "output": output})],
            [td],
            store=store,
            run_name=name,
            dataset_name="greetings.csv",
        ).run_id
        for name, output in (("Before", "hi"), ("After", "hello"))
    ]
    store.close()
    reads: list[str] = []

    def counted(store: Store, run_id: str, *args: Any, **kwargs: Any) -> Any:
        reads.append(run_id)
        return load_run_table(store, run_id, *args, **kwargs)

    # Run vs run reads each run in columns, the cache History shares; never outcome by outcome.
    monkeypatch.setattr(run_explorer, "load_run_table", counted)
    monkeypatch.setattr(Store, "results", lambda *_: pytest.fail("a run was read outcome by outcome"))
    at = open_page("compare")
    assert reads == []  # nothing but the setup tab's and the comparison tab's own work: no run is read
    # A link to the older run (no variants): Run vs run opens with it as run B, the next older run as A;
    # here there is none older, so A is the other run.
    at.query_params["run"] = ids[0]
    at.run()
    assert not at.exception
    assert at.session_state["compare_tab"] == "3. Run vs run"
    assert (at.selectbox(key="compare_diff_a").value, at.selectbox(key="compare_diff_b").value) == (ids[1], ids[0])
    assert metrics(at)["Outcomes compared"] == "1"
    first = len(reads)
    assert sorted(reads) == sorted(ids)  # each run once, for the diff and then the gate
    # Reruns (the gate's threshold, a plain rerun) read neither run again.
    at.run()
    at.session_state["compare_diff_view"] = "CI gate"
    at.run()
    at.number_input(key=f"compare_gate_{ids[1]}_{ids[0]}_min_effect").set_value(0.1).run()
    assert not at.exception and len(reads) == first
    at.session_state["compare_diff_view"] = "Row by row"
    # A new outcome in run B is a new version: that run is read again, the other one is not.
    store = Store(studio_db)
    store.save_results(ids[0], [(0, "textual-difference", {"status": "api_error", "error": "judge unreachable"})])
    store.close()
    at.run()
    assert reads[first:] == [ids[0]]
    assert metrics(at)["Outcomes compared"] == "0"  # the failed outcome is not compared as a score


def test_a_run_link_builds_the_setup_tab_only_once_it_is_opened(open_page, studio_db: Path):
    td = create_scorer("textual-difference")
    store = Store(studio_db)
    items = [EvalItem("hi", {"input": "hi", "output": "hi"})]
    ids = [run_evals(items, [td], store=store, run_name=n, dataset_name="greetings.csv").run_id for n in "AB"]
    store.close()
    at = open_page()  # a new session whose first visit of Compare is the link
    at.query_params["run"] = ids[1]
    at.switch_page("views/compare.py").run()
    assert not at.exception
    assert at.session_state["compare_tab"] == "3. Run vs run"
    assert metrics(at)["Outcomes compared"] == "1"
    assert "compare_scorers" not in [w.key for w in at.multiselect]  # the setup tab is not built
    assert "compare_source" not in [w.key for w in at.radio]
    show(at, "1. Variants and scoring")
    upload(at, "mine.csv", CSV)
    assert "mine.csv: 6 rows loaded, 3 columns (csv)." in [c.value for c in at.caption]
    # Once shown it is built on every run, hidden or not: the uploaded file is kept.
    show(at, "3. Run vs run")
    assert "compare_scorers" in [w.key for w in at.multiselect]
    show(at, "1. Variants and scoring")
    assert "mine.csv: 6 rows loaded, 3 columns (csv)." in [c.value for c in at.caption]


def test_a_comparison_with_failed_outcomes_says_how_many_and_why(open_page):
    # Variant "b" has no response to two of the three questions: those two outcomes are missing input.
    csv = "question,reference,a,b\nSay hi.,hi,hi,hi\nSay bye.,bye,bye,\nSay yes.,yes,yes,\n"
    at = open_page("compare")
    upload(at, "answers.csv", csv)
    at.radio(key="compare_mode").set_value("Use existing responses").run()
    keyed(at, "selectbox", "compare_truth_").set_value("reference").run()
    keyed(at, "multiselect", "compare_response_cols_").set_value(["a", "b"]).run()
    at.multiselect(key="compare_scorers").set_value(["textual-difference"]).run()
    # 6 cells: 4 responses to score, the 2 blank ones said apart (they were counted as responses).
    assert "4 responses of 2 variant(s): a, b. 2 more cell(s) blank: no response, not scored (missing input)." in [
        c.value for c in at.caption
    ]
    assert (
        "2 response cell(s) are blank or missing. Here a blank cell is no response from that variant (unlike the "
        "Batch page, where it is an empty answer): every scorer reports it as not scored (missing input), never as "
        "0, and the variant's means leave it out."
    ) in [w.value for w in at.warning]
    at.button(key="compare_go").click().run()
    wait_for_job(at)
    show(at)  # the comparison is in its tab
    run_id = jobs.get(at.session_state["job_compare"]).run_id
    # Never a green "Stored as run": 2 of the 6 outcomes failed, and the message says so and why.
    assert not [s for s in at.success if "Stored as run" in s.value]
    stored = next(w.value for w in at.warning if w.value.startswith(f"Stored as run {run_id}"))
    assert "2 of 6 outcomes were not scored (2 Missing input)" in stored
    # The comparison says it too, and counts them apart from the scores.
    assert any(
        w.value.startswith(
            "2 of 6 outcomes were not scored (2 Missing input): never counted as a score of 0, and left out of every mean."
        )
        for w in at.warning[1:]
    )  # an input problem is "not scored", not a failure
    assert metrics(at)["Not scored"] == "2" and metrics(at)["Outcomes scored"] == "4"
    board = table_with(at, "ci_low").set_index("variant")
    assert (board.loc["b", "n_scored"], board.loc["b", "n_failed"]) == (1, 2)


def test_leaderboard_shows_a_mean_without_scored_items_as_a_dash_its_caption_says_why(open_page):
    # Variant "b" has no response at all: no item of it is scored, so it has no mean nor interval. The grid
    # showed its default grey "None" there, which reads like a value; it shows "—", as the caption says.
    csv = "question,reference,a,b\nSay hi.,hi,hi,\nSay bye.,bye,bye,\n"
    at = open_page("compare")
    upload(at, "answers.csv", csv)
    at.radio(key="compare_mode").set_value("Use existing responses").run()
    keyed(at, "selectbox", "compare_truth_").set_value("reference").run()
    keyed(at, "multiselect", "compare_response_cols_").set_value(["a", "b"]).run()
    at.multiselect(key="compare_scorers").set_value(["textual-difference"]).run()
    at.button(key="compare_go").click().run()
    wait_for_job(at)
    show(at)
    grid = next(d for d in at.dataframe if "ci_low" in d.value.columns)
    board = grid.value.set_index("variant")
    assert board.loc["b", ["n_scored", "n_failed"]].tolist() == [0, 2]
    assert board.loc["b", ["mean", "ci_low", "ci_high"]].isna().all()
    assert grid.proto.placeholder == "—"
    assert any('"—": no value (a variant with no item scored has no mean nor interval)' in c.value for c in at.caption)


def test_budget_caps_the_scorers_judge_calls(open_page, judge: FakeOpenAI, studio_db):
    # 3 questions × 2 variants of existing responses, prompt alignment (one judge call each, user mode):
    # 6 calls without a cap; at most 2 with "Max judge calls" 2, and the run says it stopped there.
    csv = "question,a,b\nSay hi.,hi,hello\nSay bye.,bye,goodbye\nSay yes.,yes,yep\n"
    at = open_page("compare")
    upload(at, "answers.csv", csv)
    at.radio(key="compare_mode").set_value("Use existing responses").run()
    keyed(at, "multiselect", "compare_response_cols_").set_value(["a", "b"]).run()
    at.multiselect(key="compare_scorers").set_value(["prompt-alignment"]).run()
    at.number_input(key="compare_max_calls").set_value(2).run()
    assert not at.error
    at.button(key="compare_go").click().run()
    wait_for_job(at)
    show(at)  # the comparison is in its tab
    run_id = jobs.get(at.session_state["job_compare"]).run_id
    assert judge.chat_call_count == 2
    stored = next(w.value for w in at.warning if w.value.startswith(f"Stored as run {run_id}"))
    assert (
        "Its status: Paused at the budget cap (the next judge call could have passed it). Not every item was scored"
        in stored
    )
    store = Store(studio_db)
    try:
        run = store.get_run(run_id)
        assert run["status"] == "budget_reached"
        assert run["config"]["budget"] == {"max_judge_calls": 2, "max_total_tokens": None, "max_cost_usd": None}
        assert sum(r["status"] == "scored" for r in store.results(run_id)) == 2
    finally:
        store.close()


def test_compare_refuses_a_cost_cap_below_one_judge_calls_reserved_bound(open_page, judge: FakeOpenAI, studio_db):
    # As Batch (f40be76): a call holds its prompt bound + 4,096 reply tokens at gpt-4o-mini's list price
    # (> 4,096 × $0.60 / 1e6 = $0.0024576) before it is sent: a $0.0000001 cap could never send one. Refused in
    # Batch's words before anything is created or sent.
    csv = "question,a,b\nSay hi.,hi,hello\nSay bye.,bye,goodbye\nSay yes.,yes,yep\n"
    at = open_page("compare")
    upload(at, "answers.csv", csv)
    at.radio(key="compare_mode").set_value("Use existing responses").run()
    keyed(at, "multiselect", "compare_response_cols_").set_value(["a", "b"]).run()
    at.multiselect(key="compare_scorers").set_value(["prompt-alignment"]).run()
    assert not at.error and not at.button(key="compare_go").disabled
    at.number_input(key="compare_max_cost").set_value(0.0000001).run()
    (error,) = [e.value for e in at.error]
    assert error.startswith("The cost cap of $0.0000001 cannot hold one judge call: the run reserves a call's upper")
    assert "Max cost in USD, under Budget" in error and "the sidebar's Max output tokens per call" in error
    assert not [w for w in at.warning if "cost cap" in w.value]
    assert at.button(key="compare_go").disabled
    assert judge.chat_call_count == 0 and Store(studio_db).list_runs() == []

    # A $0.004 cap holds the first call's bound (its prompt is under 5,000 bytes: < $0.0024576 + 5,000 × $0.15 / 1e6
    # = $0.0032076) but not the estimate's 3 rows × 2 variants = 6 calls (each at least its 700 expected reply
    # tokens, $0.00042: the bound + 5 × $0.00042 > $0.004): warned, in Batch's words, and the run may start.
    at.number_input(key="compare_max_cost").set_value(0.004).run()
    assert not at.error and not at.button(key="compare_go").disabled
    (warning,) = [w.value for w in at.warning if "cost cap" in w.value]
    assert warning.startswith("The cost cap of $0.004 is short of the estimate's 6 judge calls")
    assert "then pauses at the cap" in warning


def test_compare_refuses_a_token_cap_below_one_judge_calls_reserved_bound_and_warns_of_a_short_one(
    open_page, judge: FakeOpenAI, studio_db
):
    # As Batch: a call holds its prompt bound + 4,096 reply tokens before it is sent, so a 1-token cap could never
    # send one: refused in Batch's words before anything is created or sent.
    csv = "question,a,b\nSay hi.,hi,hello\nSay bye.,bye,goodbye\nSay yes.,yes,yep\n"
    at = open_page("compare")
    upload(at, "answers.csv", csv)
    at.radio(key="compare_mode").set_value("Use existing responses").run()
    keyed(at, "multiselect", "compare_response_cols_").set_value(["a", "b"]).run()
    at.multiselect(key="compare_scorers").set_value(["prompt-alignment"]).run()
    at.number_input(key="compare_max_tokens").set_value(1).run()
    (error,) = [e.value for e in at.error]
    assert error.startswith("The cap of 1 token cannot hold one judge call: the run reserves a call's upper bound")
    assert "(Max total tokens, under Budget)" in error and "the sidebar's Max output tokens per call" in error
    assert at.button(key="compare_go").disabled
    # A cap of exactly the bound b admits floor((b - b) / c) + 1 = 1 of the 3 rows × 2 variants = 6 calls at the
    # estimate, and floor(b / b) = 1 at the bound: warned, and the run may start.
    bound = int(re.search(r"at least ([\d,]+) tokens", error).group(1).replace(",", ""))
    at.number_input(key="compare_max_tokens").set_value(bound).run()
    assert not at.error and not at.button(key="compare_go").disabled
    (warning,) = [w.value for w in at.warning if "short of the estimate" in w.value]
    assert warning.startswith(f"The cap of {bound:,} tokens is short of the estimate's 6 judge calls (")
    assert "admits about 1 of them at the estimate's" in warning and "(at least 1 if every call spends" in warning
    assert judge.chat_call_count == 0 and Store(studio_db).list_runs() == []


def test_compare_generating_refuses_a_cost_cap_below_one_judge_call_before_storing_a_run(
    open_page, judge: FakeOpenAI, studio_db
):
    at = open_page("compare")
    upload(at, "questions.csv", CSV)
    at.multiselect(key="compare_scorers").set_value(["prompt-alignment"]).run()
    at.number_input(key="compare_max_cost").set_value(0.0000001).run()
    assert any(
        c.value.startswith("The cost and token caps are checked against the judge calls once") for c in at.caption
    )
    at.button(key="compare_go").click().run()
    wait_for_job(at)
    # 6 rows × 2 variants generated; no judge call, no run: the cap cannot hold the first call's bound.
    assert judge.chat_call_count == 12 and Store(studio_db).list_runs() == []
    (error,) = [e.value for e in at.error]
    assert error.startswith("Generated, but nothing was scored or stored: the cost cap of $0.0000001 cannot hold")
    assert "Max cost in USD, under Budget" in error


def test_leaderboard_counts_judge_cache_replies_apart_from_tokens(open_page, fake_judge: FakeOpenAI):
    # Two response columns with the same answers: one at a time (concurrency 1), each row's first variant
    # asks the judge (100 prompt + 20 completion tokens per call), the second gets the same reply from the
    # judge cache: no call, no tokens. 3 rows → "same_a": 300 / 60 tokens, 0 cached; "same_b": 0 / 0, 3 cached.
    fake_judge.responder = lambda body: Reply.json(USER, usage={"prompt_tokens": 100, "completion_tokens": 20})
    csv = "question,same_a,same_b\nSay hi.,hi,hi\nSay bye.,bye,bye\nSay yes.,yes,yes\n"
    at = open_page("compare")
    upload(at, "same.csv", csv)
    at.radio(key="compare_mode").set_value("Use existing responses").run()
    at.radio(key="compare_layout").set_value("One response column per variant").run()
    keyed(at, "multiselect", "compare_response_cols_").set_value(["same_a", "same_b"]).run()
    at.multiselect(key="compare_scorers").set_value(["prompt-alignment"]).run()
    at.number_input(key="compare_concurrency").set_value(1).run()
    at.button(key="compare_go").click().run()
    wait_for_job(at)
    show(at)  # the comparison is in its tab
    board = table_with(at, "n_cached").set_index("variant")
    assert board.loc["same_a", ["prompt_tokens", "completion_tokens", "n_cached"]].tolist() == [300, 60, 0]
    assert board.loc["same_b", ["prompt_tokens", "completion_tokens", "n_cached"]].tolist() == [0, 0, 3]


def test_a_run_link_to_a_grouped_plain_run_opens_run_vs_run_and_a_variant_run_the_comparison(
    open_page, studio_db: Path
):
    # A plain run scored with --group-col category has groups too ({"category": ...}); its categories are
    # not prompt variants, so its link opens Run vs run as run B against the next older run. A run of
    # variants (groups variant, model, row_id, as the first tab stores them) opens in the Comparison tab.
    td = create_scorer("textual-difference")
    store = Store(studio_db)

    def run(name: str, groups: list[str], items: list[EvalItem]) -> str:
        return run_evals(
            items, [td], store=store, run_name=name, dataset_name="ifeval.csv", mapping={"groups": groups}
        ).run_id

    run("Older", [], [EvalItem("q1", {"input": "hi", "output": "hi"})])  # neither link picks it
    variants = run(
        "Variants",
        ["variant", "model", "row_id"],
        [
            EvalItem(f"q1::{v}", {"input": "hi", "output": o}, {"variant": v, "row_id": "q1"})
            for v, o in (("A", "hi"), ("B", "ho"))
        ],
    )
    grouped = run(
        "Grouped",
        ["category"],
        [EvalItem(f"q{i}", {"input": "hi", "output": "hi"}, {"category": c}) for i, c in enumerate(("math", "code"))],
    )
    store.close()
    at = open_page("compare")
    at.query_params["run"] = grouped
    at.run()
    assert not at.exception
    assert at.session_state["compare_tab"] == "3. Run vs run"  # was "2. Comparison", ranking the categories
    assert at.selectbox(key="compare_diff_b").value == grouped
    assert at.selectbox(key="compare_diff_a").value == variants  # the next older run
    again = open_page("compare")
    again.query_params["run"] = variants
    again.run()
    assert not again.exception
    assert again.session_state["compare_tab"] == "2. Comparison"
    assert again.selectbox(key="compare_run_pick").value == variants


def test_a_run_link_takes_as_run_a_the_next_older_run_on_the_same_dataset_and_says_why(open_page, studio_db: Path):
    # Newest first: B (ifeval.csv, 2 items), then a run of other items (other.csv, 1 item), then an older
    # run of B's dataset. The next older run overall is the other dataset's (nothing in common with B: 0
    # outcomes compared); the next older run on B's dataset is "Baseline", and its 2 items pair with B's 2.
    td = create_scorer("textual-difference")
    store = Store(studio_db)

    def run(name: str, dataset: str, ids: list[str]) -> str:
        items = [EvalItem(i, {"input": i, "output": i}) for i in ids]
        return run_evals(items, [td], store=store, run_name=name, dataset_name=dataset).run_id

    baseline = run("Baseline", "ifeval.csv", ["q1", "q2"])
    run("Other items", "other.csv", ["x1"])
    candidate = run("Candidate", "ifeval.csv", ["q1", "q2"])
    store.close()
    at = open_page("compare")
    at.query_params["run"] = candidate
    at.run()
    assert not at.exception
    assert at.selectbox(key="compare_diff_a").value == baseline  # was the other dataset's run
    assert metrics(at)["Outcomes compared"] == "2"
    why = f"Run A is Baseline ({baseline}), the next older run on the same dataset, ifeval.csv (2 items)."
    assert why in [c.value for c in at.caption]


def test_default_baseline_falls_back_and_says_so():
    from dashboard.compare.run_vs_run import default_baseline

    def run(rid: str, dataset: str, n: int) -> dict[str, Any]:
        return {"id": rid, "name": rid.upper(), "dataset_name": dataset, "n_items": n}

    # Newest first. Same name with another size beats another dataset; nothing on B's dataset: the next older.
    runs = [run("b", "ifeval.csv", 10000), run("s", "other.csv", 540), run("f", "ifeval.csv", 540)]
    assert default_baseline(runs, "b") == (
        "f",
        "Run A is F (f), the next older run on ifeval.csv, though with another number of items than run B's 10000.",
    )
    runs = [run("b", "ifeval.csv", 10000), run("s", "other.csv", 540)]
    a, why = default_baseline(runs, "b")
    assert a == "s" and why.endswith(
        "no other run is on run B's dataset, ifeval.csv (10000 items); A is on other.csv (540 items): only the items "
        "whose ids are in both runs are compared (counted below)."
    )  # never "few or no items may be compared": other.csv may hold B's ids (540 were compared, once)
    # The oldest run: the newer runs, nearest first; a lone run has no baseline.
    assert default_baseline(runs, "s")[0] == "b"
    assert default_baseline(runs[:1], "b") is None


def test_default_baseline_prefers_a_completed_run_to_one_stopped_part_way():
    from dashboard.compare.run_vs_run import default_baseline

    def run(rid: str, dataset: str, status: str, n: int = 40) -> dict[str, Any]:
        return {"id": rid, "name": rid.upper(), "dataset_name": dataset, "n_items": n, "status": status}

    # Newest first. No other run on B's dataset (ifeval40_short.csv): the nearest older run paused at the budget
    # cap with most of its items never scored, the next one paused too, then a completed run of 40 items.
    runs = [
        run("b", "ifeval40_short.csv", "completed"),
        run("paused", "ifeval40.csv", "budget_reached"),
        run("small", "ifeval6.csv", "completed", 6),
        run("done", "ifeval40.csv", "completed"),
    ]
    assert default_baseline(runs, "b") == (
        "done",
        "Run A is DONE (done), the next older run that was completed (the nearer PAUSED (paused) is paused at the "
        "budget cap): no other run is on run B's dataset, ifeval40_short.csv (40 items); A is on ifeval40.csv (40 "
        "items): only the items whose ids are in both runs are compared (counted below).",
    )
    # On B's own dataset too: the completed run, not the nearer paused one.
    for r in runs[1:]:
        r["dataset_name"] = "ifeval40_short.csv"
    assert default_baseline(runs, "b") == (
        "done",
        "Run A is DONE (done), the next older run on the same dataset, ifeval40_short.csv (40 items) that was "
        "completed (the nearer PAUSED (paused) is paused at the budget cap).",
    )


def test_run_vs_run_sets_apart_a_scorer_run_with_other_options(open_page, studio_db: Path):
    items = [EvalItem("hi", {"input": "Say hi.", "output": "hi", "ground_truth": "hi"})]
    store = Store(studio_db)
    ids = [
        run_evals(
            items,
            [create_scorer("textual-difference", {"target": target})],
            store=store,
            dataset_name="greetings.csv",
            scorer_options={"textual-difference": {"target": target}},
        ).run_id
        for target in ("ground_truth", "input")
    ]
    store.close()
    at = open_page("compare")
    at.session_state["compare_tab"] = "3. Run vs run"
    at.run()
    at.selectbox(key="compare_diff_a").set_value(ids[0]).run()
    at.selectbox(key="compare_diff_b").set_value(ids[1]).run()
    assert not at.exception
    assert [w.value for w in at.warning] == [
        "Textual difference was scored with other options in the two runs (target: 'ground\\_truth' against "
        "'input', run A against run B): its scores do not measure the same thing, so they are not compared."
    ]
    assert "Outcomes compared" not in metrics(at)


def test_json_values_that_are_not_text_are_named_before_the_comparison(open_page, studio_db: Path):
    data = (
        '{"question": "Add 2 and 2", "reference": "4", "a": "4", "b": "four"}\n'
        '{"question": "Add 40 and 2", "reference": 42, "a": 42, "b": "forty-two"}\n'  # line 2: numbers
        '{"question": "Is 7 prime?", "reference": "yes", "a": true, "b": {"answer": "yes"}}\n'  # line 3
    )
    at = open_page("compare")
    upload(at, "answers.jsonl", data)
    at.radio(key="compare_mode").set_value("Use existing responses").run()
    keyed(at, "selectbox", "compare_truth_").set_value("reference").run()
    keyed(at, "multiselect", "compare_response_cols_").set_value(["a", "b"]).run()
    tail = "each is scored as its text (numbers as written, true/false, lists and objects as JSON)."
    # reference: 42 on line 2; a: 42 (line 2) and true (line 3); b: an object on line 3 (on this page a message
    # object is read as text too).
    assert [w.value for w in at.warning if "is not text" in w.value] == [
        f"Field 'reference' (the ground truth) is not text in 1 row (1 number), the first on line 2: {tail}",
        f"Field 'a' (the response) is not text in 2 rows (1 number, 1 boolean), the first on line 2: {tail}",
        f"Field 'b' (the response) is not text in 1 row (1 object), the first on line 3: {tail}",
    ]
    # Scored as that text: true as "true" (as on the Batch page and in the CLI), the object as its JSON.
    at.multiselect(key="compare_scorers").set_value(["textual-difference"]).run()
    at.button(key="compare_go").click().run()
    wait_for_job(at)
    store = Store(studio_db)
    (run,) = store.list_runs()
    outputs = {it["item_id"]: it["payload"]["output"]["text"] for it in store.items(run["id"])}
    store.close()
    assert (outputs["2::a"], outputs["2::b"]) == ("true", '{"answer": "yes"}')  # item ids: row number::variant


def test_default_baseline_prefers_a_run_whose_scores_measure_the_same_thing():
    from dashboard.compare.run_vs_run import default_baseline

    def run(rid: str, scale: int) -> dict[str, Any]:
        scorers = [{"id": "prompt-alignment", "name": "Prompt alignment", "options": {"scale": scale}}]
        return {"id": rid, "name": rid.upper(), "dataset_name": "ifeval.jsonl", "n_items": 541, "scorers": scorers}

    # Newest first: the next older run on B's dataset scored on 0-10, which Run vs run would refuse to compare
    # (no scorer in common on the same scale); the one before it is on B's 0-1 scale.
    runs = [run("b", 1), run("ten", 10), run("one", 1)]
    assert default_baseline(runs, "b") == (
        "one",
        "Run A is ONE (one), the next older run on the same dataset, ifeval.jsonl (541 items) scored as run B is "
        "(the nearer TEN (ten) has another scale or target).",
    )
    # With no comparable run, the rules apply as before.
    assert default_baseline([run("b", 1), run("ten", 10)], "b")[0] == "ten"
    # No run on B's dataset: the next older run scored as B is, not the nearest one on another scale.
    other = [run("b", 1), run("ten", 10), run("one", 1)]
    for r in other[1:]:
        r["dataset_name"] = "other.jsonl"
    a, why = default_baseline(other, "b")
    assert a == "one" and why.startswith("Run A is ONE (one), the next older run scored as run B is: no other run")


def test_the_row_view_cuts_a_long_response_with_its_length_a_toggle_and_a_download(open_page, studio_db: Path):
    # Variant A's answer to q1 is 30,000 characters (20,000 "a", "TAIL", 9,996 "b"); B's is "hi". The row view
    # shows each text as Review does (dashboard.results.render_text_block): the first 20,000 characters, its
    # length, a toggle for all of it and a download of all of it; a short text whole, with neither.
    long = "a" * 20_000 + "TAIL" + "b" * 9_996
    outputs = {("q1", "A"): long, ("q1", "B"): "hi", ("q2", "A"): "yo", ("q2", "B"): "hi"}
    store = Store(studio_db)
    run_id = run_evals(
        [
            EvalItem(f"{q}::{v}", {"input": "hi", "output": o}, {"variant": v, "row_id": q})
            for (q, v), o in outputs.items()
        ],
        [create_scorer("textual-difference")],
        store=store,
        run_name="Long answers",
        mapping={"groups": ["variant", "row_id"]},
    ).run_id
    store.close()
    at = open_page("compare")
    show(at)  # the Comparison tab opens the newest run with groups, this one
    key = f"compare_{run_id}"
    at.selectbox(key=f"{key}_row").set_value("q1").run()
    assert not at.exception
    assert not [c for c in at.code if "aaaa" in c.value]  # no longer the whole text in st.code
    # The row view's block, and the breakdown's below it (render_outcome, which cut it already): both cut.
    blocks = [h.proto.body for h in at.get("html") if "aaaa" in h.proto.body and "<span" not in h.proto.body]
    assert len(blocks) == 2 and all(b.endswith(">" + "a" * 20_000 + "</div>") for b in blocks)
    assert "The first 20,000 of 30,000 characters: the rest is not shown." in [c.value for c in at.caption]
    assert any(h.proto.body.endswith(">hi</div>") for h in at.get("html"))  # the prompt and B's answer, whole
    texts = f"{key}_row_q1"
    assert [t.key for t in at.toggle if t.key.startswith(texts)] == [f"{texts}_output_a"]
    download = next(b for b in at.get("download_button") if b.proto.id and f"{texts}_output_a_download" in b.proto.id)
    assert download.proto.label == "Download all 30,000 characters"  # its file is written when clicked
    at.toggle(key=f"{texts}_output_a").set_value(True).run()
    blocks = [h.proto.body for h in at.get("html") if "aaaa" in h.proto.body and "<span" not in h.proto.body]
    assert sorted(b.endswith(">" + long + "</div>") for b in blocks) == [False, True]  # the row view's, whole


def test_the_row_view_writes_a_score_the_same_way_in_its_heading_and_its_breakdown(
    open_page, fake_judge: FakeOpenAI, studio_db: Path
):
    # Every dimension 0.8: user mode 0.40·0.8 + 0.30·0.8 + 0.20·0.8 + 0.10·0.8 = 0.8, for both variants. The row's
    # heading and the breakdown's tile write it with the one formatter (decimal_text): 0.800 both, never 0.8.
    fake_judge.responder = lambda body: Reply.json(single_analysis(0.8, 0.8, 0.8, 0.8))
    store = Store(studio_db)
    scorer = create_scorer("prompt-alignment", {"evaluation_mode": "user"}, settings=settings_for(fake_judge))
    run_id = run_evals(
        [
            EvalItem(f"q1::{v}", {"input": "Say hi.", "output": o}, {"variant": v, "row_id": "q1"})
            for v, o in (("A", "hi"), ("B", "hello"))
        ],
        [scorer],
        store=store,
        run_name="Same score",
        mapping={"groups": ["variant", "row_id"]},
    ).run_id
    store.close()
    at = open_page("compare")
    show(at)
    assert at.selectbox(key=f"compare_{run_id}_row").value == "q1"
    headings = [m.value for m in at.markdown if m.value.startswith(("**A** ·", "**B** ·"))]
    # The row view's headings, and the per-question view's (many.py) below them.
    assert headings == ["**A** · Prompt alignment 0.800", "**B** · Prompt alignment 0.800"] * 2
    tiles = [m.value for m in at.metric if m.label == "Prompt alignment (0–1)"]
    assert tiles and set(tiles) == {"0.800"}


def test_a_run_link_stopped_by_a_rerun_request_part_way_is_followed_whole_on_the_next_run(
    open_page, studio_db: Path, monkeypatch: pytest.MonkeyPatch
):
    # A rerun request (a click while the page loads) stops a script at its next session-state access: here,
    # between putting the linked run into run B and run A's baseline. Streamlit does that at any st.session_state
    # read or write; the test makes it happen there every time by calling st.rerun() in default_baseline once.
    # Runs, newest first: Newer, Linked, Oldest (one dataset). Linked is not the newest, so run A's own
    # default (the second run in the list) is Linked itself: a link marked followed before run A was set left
    # A on Linked, "Choose two different runs", and the page on its first tab. Followed whole: A is Oldest,
    # the next older run on the dataset, and the page is on Run vs run.
    from dashboard.compare import run_vs_run

    td = create_scorer("textual-difference")
    store = Store(studio_db)

    def run(name: str) -> str:
        items = [EvalItem("q1", {"input": "hi", "output": "hi"})]
        return run_evals(items, [td], store=store, run_name=name, dataset_name="ifeval.csv").run_id

    oldest, linked, _newer = run("Oldest"), run("Linked"), run("Newer")
    store.close()
    real, calls = run_vs_run.default_baseline, []

    def stopped_once(runs: list[dict[str, Any]], run_b: str) -> tuple[str, str] | None:
        calls.append(run_b)
        if len(calls) == 1:
            st.rerun()
        return real(runs, run_b)

    monkeypatch.setattr(run_vs_run, "default_baseline", stopped_once)
    at = open_page("compare")
    at.query_params["run"] = linked
    at.run()
    assert not at.exception
    tab = at.session_state["compare_tab"]
    show(at, "3. Run vs run")  # where the link should have gone; the user would open it
    assert (at.selectbox(key="compare_diff_a").value, at.selectbox(key="compare_diff_b").value) == (oldest, linked)
    assert "Choose two different runs." not in [i.value for i in at.info]
    assert metrics(at)["Outcomes compared"] == "1"
    assert tab == "3. Run vs run"
    assert calls == [linked, linked]  # stopped once, then followed whole


def test_a_link_to_a_run_of_variants_stays_on_the_comparison_after_a_rerun(open_page, studio_db: Path):
    # The Comparison tab keeps ?run=ID in the URL for the run it shows; a rerun (any click) sent it again, and
    # Run vs run followed it as run B, switching the page to that tab.
    store = Store(studio_db)
    run_evals([EvalItem("q0", {"input": "hi", "output": "hi"})], [create_scorer("textual-difference")], store=store)
    variants = run_evals(
        [
            EvalItem(f"q1::{v}", {"input": "hi", "output": o}, {"variant": v, "row_id": "q1"})
            for v, o in (("A", "hi"), ("B", "ho"))
        ],
        [create_scorer("textual-difference")],
        store=store,
        mapping={"groups": ["variant", "row_id"]},
    ).run_id
    store.close()
    at = open_page("compare")
    at.query_params["run"] = variants
    at.run()
    assert at.session_state["compare_tab"] == "2. Comparison"
    at.selectbox(key=f"compare_{variants}_row").set_value("q1").run()
    assert not at.exception
    assert at.session_state["compare_tab"] == "2. Comparison"
    assert "compare_diff_b" not in at.session_state
