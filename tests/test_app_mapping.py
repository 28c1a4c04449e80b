"""AppTest tests of the Batch page's column mapping: guesses confirmed, previews, defaults, required columns.

Hand-made data only; the judge is the fake OpenAI server and is never called before Run.
"""

from __future__ import annotations

from pathlib import Path

from fake_openai import FakeOpenAI
from streamlit.testing.v1 import AppTest
from test_app_batch import upload, wait_for_job

from dashboard.batch import PREVIEW_ID
from scorers import Store, load_run

# `system` holds the model under test (never a system message); `system_prompt` and `context` are
# guessed from their names but change what the judge sees, so they wait for confirmation.
MODELS_CSV = (
    b"id,system,system_prompt,context,prompt,response\n"
    b"r1,gpt-4o,Answer in French.,Paris is in France.,What is 2+2?,quatre\n"
    b"r2,claude-3,Be brief.,Greetings are short.,Say hi.,hi\n"
)


def token_of(at: AppTest) -> str:
    """The dataset's token in the mapping widgets' keys."""
    return next(s.key for s in at.selectbox if s.key and s.key.startswith("batch_map_input_")).rsplit("_", 1)[1]


def preview(at: AppTest):
    """The one scorer preview on the page (its table has a ``status`` column; AppTest exposes no key)."""
    (table,) = [d.value for d in at.dataframe if "status" in d.value.columns]
    return table


def page_text(at: AppTest) -> str:
    """Every table cell, code block and caption on the page, for 'never shown' checks."""
    tables = " ".join(d.value.astype(str).to_csv() for d in at.dataframe)
    return " ".join([tables, *(c.value for c in at.code), *(c.value for c in at.caption)])


def test_guessed_system_message_and_context_are_used_only_once_confirmed(open_page, fake_judge: FakeOpenAI):
    at = open_page("batch")
    upload(at, "models.csv", MODELS_CSV)
    token = token_of(at)
    # The bare `system` column (model names) is not guessed; `system_prompt` and `context` are, unconfirmed.
    assert at.selectbox(key=f"batch_map_system_{token}").value == "system_prompt"
    assert at.selectbox(key=f"batch_map_context_{token}").value == "context"
    assert at.checkbox(key=f"batch_confirm_system_{token}").value is False
    assert at.checkbox(key=f"batch_confirm_context_{token}").value is False
    assert [c.value for c in at.caption].count("Guessed from its name: not used until confirmed.") == 2
    # Prompt alignment reads the system message: blank in the preview until confirmed.
    at.multiselect(key="batch_scorers").set_value(["prompt-alignment"]).run()
    assert preview(at)["System message"].tolist() == ["", ""]
    at.toggle(key="batch_show_prompt").set_value(True).run()
    assert at.code, "the judge prompt for the first row is shown on request"
    prompt = "\n".join(c.value for c in at.code)
    assert "What is 2+2?" in prompt and "quatre" in prompt
    assert "Answer in French." not in prompt
    assert "gpt-4o" not in page_text(at) and "claude-3" not in page_text(at)

    at.checkbox(key=f"batch_confirm_system_{token}").check().run()
    assert preview(at)["System message"].tolist() == ["Answer in French.", "Be brief."]
    prompt = "\n".join(c.value for c in at.code)
    assert "Answer in French." in prompt and "Be brief." not in prompt  # the first row only
    assert "gpt-4o" not in page_text(at)
    assert fake_judge.chat_call_count == 0  # nothing is sent before Run


def test_model_name_column_becomes_the_system_message_only_when_chosen_and_confirmed(open_page, fake_judge):
    at = open_page("batch")
    upload(at, "models.csv", b"system,prompt,response\ngpt-4o,What is 2+2?,4\n")
    token = token_of(at)
    assert at.selectbox(key=f"batch_map_system_{token}").value is None
    assert f"batch_confirm_system_{token}" not in [c.key for c in at.checkbox]
    at.multiselect(key="batch_scorers").set_value(["prompt-alignment"]).run()
    assert preview(at)["System message"].tolist() == [""]
    # Chosen by hand, it is the user's decision: used as mapped, with no guess to confirm.
    at.selectbox(key=f"batch_map_system_{token}").set_value("system").run()
    assert f"batch_confirm_system_{token}" not in [c.key for c in at.checkbox]
    assert preview(at)["System message"].tolist() == ["gpt-4o"]


def test_only_scorers_whose_inputs_are_mapped_are_preselected(open_page):
    at = open_page("batch")
    # A response and a reference, no prompt: textual difference only.
    upload(at, "pairs.csv", b"response,reference\nhello,hello\n")
    assert at.multiselect(key="batch_scorers").value == ["textual-difference"]
    # A prompt, no reference: prompt alignment only (never response-vs-prompt textual difference).
    at = open_page("batch")
    upload(at, "prompts.csv", b"prompt,response\nSay hi.,hi\n")
    assert at.multiselect(key="batch_scorers").value == ["prompt-alignment"]
    # Neither: nothing pre-selected, and the page asks for a scorer.
    at = open_page("batch")
    upload(at, "bare.csv", b"response\nhi\n")
    assert at.multiselect(key="batch_scorers").value == []
    assert at.error[0].value == "Choose at least one scorer."
    assert at.button(key="batch_run").disabled


def test_textual_difference_needs_no_prompt_and_blank_references_are_missing_input(open_page, studio_db: Path):
    at = open_page("batch")
    # r2's reference is blank: not scored (missing_input), never compared with anything else.
    upload(at, "pairs.csv", b"id,response,reference\nr1,abc,abc\nr2,abc,\nr3,ab,abcd\n")
    assert not at.error, "no prompt column is required for textual difference against the ground truth"
    assert not at.button(key="batch_run").disabled
    rows = preview(at)
    assert rows[PREVIEW_ID].tolist() == ["r1", "r2", "r3"]
    assert rows["status"].iloc[0] == "will be scored"
    assert rows["status"].iloc[1].startswith("not scored: Missing input")
    assert rows["Ground truth"].tolist() == ["abc", "", "abcd"]

    at.button(key="batch_run").click().run()
    wait_for_job(at)
    store = Store(studio_db)
    _, _, result = load_run(store, at.session_state["batch_run_id"])
    store.close()
    by_id = {o.item_id: o for o in result.outcomes}
    assert by_id["r2"].status.value == "missing_input" and by_id["r2"].result is None
    # SPEC §1.2: r1 "abc" = "abc" → 1; r3 ratio = 2·LCS("ab", "abcd")/(2+4) = 4/6, lengthDiff = 2/4,
    # confidence = 1/2 → score = 4/6 · 1/2 = 1/3.
    assert by_id["r1"].result.score == 1.0
    assert abs(by_id["r3"].result.score - 1 / 3) < 1e-9


def test_required_columns_follow_the_chosen_scorers(open_page, fake_judge):
    at = open_page("batch")
    upload(at, "pairs.csv", b"response,reference\nhello,hello\n")
    at.multiselect(key="batch_scorers").set_value(["textual-difference", "prompt-alignment"]).run()
    assert any("need(s) the user prompt column" in e.value for e in at.error)
    assert at.button(key="batch_run").disabled
    at.multiselect(key="batch_scorers").set_value(["textual-difference"]).run()
    assert not at.error and not at.button(key="batch_run").disabled


def test_blank_reference_is_never_compared_with_the_prompt(open_page):
    at = open_page("batch")
    # Row r1's prompt equals its response: compared with the prompt it would score 1; its reference is blank.
    upload(at, "qa.csv", b"id,prompt,response,reference\nr1,abc,abc,\nr2,x,abc,abc\n")
    at.multiselect(key="batch_scorers").set_value(["textual-difference"]).run()
    rows = preview(at)
    assert rows["status"].tolist()[0].startswith("not scored: Missing input")
    assert rows["status"].tolist()[1] == "will be scored"


def test_one_column_chosen_for_two_roles_keeps_run_disabled(open_page):
    # The response chosen as the ground truth too: textual difference would compare each response with itself (1).
    at = open_page("batch")
    upload(at, "awk.csv", b"prompt,response\nSay hi.,hello\n")
    at.multiselect(key="batch_scorers").set_value(["textual-difference"]).run()
    assert not at.error and not at.button(key="batch_run").disabled
    at.selectbox(key=f"batch_map_ground_truth_{token_of(at)}").set_value("response").run()
    assert [e.value for e in at.error] == [
        "Column 'response' is used as the response and as the ground truth. Each role needs its own column: choose "
        "another above to run."
    ]
    assert at.button(key="batch_run").disabled
