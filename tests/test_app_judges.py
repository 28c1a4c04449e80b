"""AppTest tests of the Judges page: build, validate, try (fake judge), save, version, load, delete, import."""

from __future__ import annotations

import json
from pathlib import Path

from fake_openai import FakeOpenAI, Reply
from judge_data import settings_for
from streamlit.testing.v1 import AppTest

from scorers import EvalItem, ScoreStatus, Store, create_scorer, run_evals
from scorers.catalogue.judge_builder import GLUTEN_PROMPT
from scorers.catalogue.judge_store import judge_versions, list_judges


def warnings(at: AppTest) -> list[str]:
    return [w.value.replace("\\", "") for w in at.warning]  # the page escapes Markdown


def saved(db: Path):
    store = Store(db)
    try:
        return list_judges(store)
    finally:
        store.close()


def build_politeness(at: AppTest) -> None:
    """Fill the builder: a boolean verdict (the score) and a list of rude phrases."""
    at.text_input(key="jb_name").input("Politeness")
    at.text_area(key="jb_instructions").input("You check the tone of customer-service replies.")
    at.text_area(key="jb_template").input('Is this reply polite?\n{output}\nAnswer like {"isPolite": true}.')
    at.text_input(key="jb_f0_name").input("isPolite")
    at.button(key="jb_add_field").click().run()
    at.text_input(key="jb_f1_name").input("rudePhrases")
    at.selectbox(key="jb_f1_type").set_value("list_of_strings").run()
    at.text_input(key="jb_reason").input("Polite: {isPolite}. Rude phrases: {rudePhrases}.").run()


def test_page_renders_with_the_built_in_gluten_checker_to_copy(open_page):
    at = open_page("judges")

    assert at.title[0].value == "Judges"
    assert at.info[0].value.startswith("No saved judge yet")
    assert at.selectbox(key="judges_pick").value == "builtin:gluten-checker"
    assert at.button(key="jb_save").disabled  # the new judge is still empty

    at.button(key="judges_load").click().run()
    assert not at.exception
    assert at.text_input(key="jb_name").value == "Gluten checker (copy)"
    assert at.text_area(key="jb_template").value == GLUTEN_PROMPT
    assert at.text_input(key="jb_f0_name").value == "isGlutenFree"
    assert at.selectbox(key="jb_f1_type").value == "list_of_strings"
    assert at.selectbox(key="jb_rule_kind").value == "boolean"
    assert at.radio(key="jb_rule_good").value is True
    # The copy keeps the built-in's check: "gluten-free" with gluten sources is invalid output.
    assert at.text_area(key="jb_rules").value == (
        "if isGlutenFree is true then glutenSources is empty\nif isGlutenFree is false then glutenSources is not empty"
    )
    assert warnings(at) == []
    assert not at.button(key="jb_save").disabled
    assert any("Placeholders found: `{output}`" in c.value for c in at.caption)


def test_template_problems_are_named_as_you_type(open_page):
    at = open_page("judges")
    at.text_area(key="jb_template").input('Check it.\n{output} against {context}\n{{literal}} and {"json": 1}').run()

    template_warnings = [w for w in warnings(at) if w.startswith("prompt_template")]
    assert template_warnings == [
        "prompt_template: unknown placeholder {context} at line 2, column 18; use one of {input}, {output}, "
        "{ground_truth}, {system}, or write {{context}} for literal braces"
    ]
    assert any("Placeholders found: `{output}`" in c.value for c in at.caption)
    assert at.button(key="jb_save").disabled and at.button(key="jb_try").disabled


def test_the_rule_chooser_offers_only_rules_the_fields_allow(open_page):
    at = open_page("judges")
    at.text_input(key="jb_f0_name").input("comment")
    at.selectbox(key="jb_f0_type").set_value("string").run()
    assert "jb_rule_kind" not in [s.key for s in at.selectbox]
    assert any(i.value.startswith("Add a boolean field") for i in at.info)

    at.selectbox(key="jb_f0_type").set_value("number").run()
    assert "jb_rule_kind" not in [s.key for s in at.selectbox]  # no range yet
    at.number_input(key="jb_f0_min").set_value(1.0)
    at.number_input(key="jb_f0_max").set_value(5.0).run()
    assert at.selectbox(key="jb_rule_kind").options == ["Number field normalised by its range"]

    at.button(key="jb_add_field").click().run()
    at.text_input(key="jb_f1_name").input("verdict")
    at.selectbox(key="jb_f1_type").set_value("label").run()
    at.text_input(key="jb_f1_labels").input("good, partial, bad").run()
    assert at.selectbox(key="jb_rule_kind").options == [
        "Number field normalised by its range",
        "Label field → a score per label",
    ]
    at.selectbox(key="jb_rule_kind").set_value("label").run()
    scores = {n.label: n.value for n in at.number_input if n.key.startswith("jb_rule_score_")}
    assert scores == {"good": 1.0, "partial": 0.5, "bad": 0.0}
    assert not at.exception


def test_build_try_and_save_a_judge(open_page, fake_judge: FakeOpenAI, studio_db: Path):
    fake_judge.enqueue(Reply.json({"isPolite": False, "rudePhrases": ["calm down"]}))
    at = open_page("judges")
    build_politeness(at)
    assert warnings(at) == []
    assert at.selectbox(key="jb_rule_kind").options == ["Boolean field → 1 or 0", "List field: count the items"]

    at.text_area(key="jb_try_prompt").input("Where is my parcel?")
    at.text_area(key="jb_try_response").input("Calm down, it is coming.")
    at.button(key="jb_try").click().run()

    assert not at.exception
    assert not at.error
    assert {m.label: m.value for m in at.metric} == {"Score": "0.000"}  # isPolite false, true is good → 0
    assert "**Reason:** Polite: false. Rude phrases: calm down." in [m.value for m in at.markdown]
    codes = [c.value for c in at.code]
    assert json.loads(codes[0]) == {"isPolite": False, "rudePhrases": ["calm down"]}  # the raw reply
    assert any("<response>\nCalm down, it is coming.\n</response>" in c for c in codes)  # the rendered prompt
    assert any(c.startswith("You check the tone of customer-service replies.") for c in codes)
    assert json.loads(at.get("json")[0].proto.body) == {"isPolite": False, "rudePhrases": ["calm down"]}
    request = fake_judge.last_chat_request()
    assert request["response_format"]["json_schema"]["schema"]["required"] == ["isPolite", "rudePhrases"]

    at.button(key="jb_save").click().run()
    assert not at.exception
    assert at.success[0].value == "Saved Politeness as v1 (judge:politeness@v1)."
    table = at.dataframe[0].value
    assert list(table["Scorer id"]) == ["judge:politeness"]
    assert list(table["Score rule"]) == ["1 if isPolite is true, else 0"]
    [stored] = saved(studio_db)
    assert stored.definition.example.output == "Calm down, it is coming."
    assert at.selectbox(key="judges_pick").value == "politeness"


def test_saving_an_edit_creates_v2_and_v1_can_be_loaded(open_page, studio_db: Path):
    at = open_page("judges")
    build_politeness(at)
    at.button(key="jb_save").click().run()
    at.text_area(key="jb_template").input("Second version: {output}").run()
    assert any("Saves version 2 of judge:politeness" in c.value for c in at.caption)
    at.button(key="jb_save").click().run()
    assert at.success[0].value == "Saved Politeness as v2 (judge:politeness@v2)."

    assert "No changes since v2 of judge:politeness." in [c.value for c in at.caption]
    at.button(key="jb_save").click().run()
    assert at.info[0].value == "No change since v2 of Politeness: nothing was saved."

    at.selectbox(key="judges_version_politeness").set_value(1).run()
    at.button(key="judges_load").click().run()
    assert at.text_area(key="jb_template").value.startswith("Is this reply polite?")
    assert "Editing Politeness, loaded from v1: saving a change creates v3." in [c.value for c in at.caption]
    store = Store(studio_db)
    try:
        assert [v.version for v in judge_versions(store, "politeness")] == [1, 2]
    finally:
        store.close()


def test_try_it_shows_errors_with_the_raw_reply(open_page, fake_judge: FakeOpenAI):
    fake_judge.enqueue(Reply.content("I think it is polite."), Reply.content("Yes, polite."))
    at = open_page("judges")
    build_politeness(at)
    at.text_area(key="jb_try_response").input("Thank you for waiting!")
    at.button(key="jb_try").click().run()

    assert not at.exception
    assert at.error[0].value.startswith("Not scored (Judge output invalid): The judge")
    assert "Yes, polite." in [c.value for c in at.code]
    assert not at.metric


def test_try_it_without_a_key_says_how_to_configure(open_page):
    at = open_page("judges")
    build_politeness(at)
    at.text_area(key="jb_try_response").input("Thank you for waiting!")
    at.button(key="jb_try").click().run()

    assert not at.exception
    assert "No API key for the judge" in at.error[0].value.replace("\\", "")


def test_delete_needs_a_confirmation(open_page, studio_db: Path):
    at = open_page("judges")
    build_politeness(at)
    at.button(key="jb_save").click().run()
    assert at.button(key="judges_delete").disabled
    at.checkbox(key="judges_delete_confirm_politeness").check().run()
    at.button(key="judges_delete").click().run()

    assert not at.exception
    assert at.success[0].value == "Deleted Politeness."
    assert at.info[0].value.startswith("No saved judge yet")
    assert saved(studio_db) == []


def test_import_pasted_json(open_page, studio_db: Path):
    definition = {
        "name": "Conciseness",
        "instructions": "You judge whether answers are concise.",
        "prompt_template": "Answer: {output}",
        "output_fields": [{"name": "fillerPhrases", "type": "list_of_strings"}],
        "score_rule": {"kind": "list_count", "field": "fillerPhrases", "cap": 3},
    }
    at = open_page("judges")
    at.button(key="judges_import").click().run()
    assert at.warning[0].value == "Choose a JSON file or paste the JSON first."
    at.text_area(key="judges_import_text").input(json.dumps(definition))
    at.button(key="judges_import").click().run()

    assert not at.exception
    assert at.success[0].value.startswith("Imported Conciseness (v1).")
    assert list(at.dataframe[0].value["Score rule"]) == [
        "1 − min(k / 3, 1), k = the number of non-blank items of fillerPhrases"
    ]

    at.text_area(key="judges_import_text").input('{"name": "Broken"}')
    at.button(key="judges_import").click().run()
    assert at.error[0].value.replace("\\", "").startswith("nothing was imported: instructions: missing")
    assert [j.name for j in saved(studio_db)] == ["Conciseness"]


def test_the_builder_survives_a_visit_to_another_page(open_page):
    at = open_page("judges")
    build_politeness(at)
    at.text_area(key="jb_try_response").input("Thanks for waiting!").run()
    at.switch_page("views/catalogue.py").run()
    at.switch_page("views/judges.py").run()

    assert not at.exception
    assert at.text_input(key="jb_name").value == "Politeness"
    assert at.text_input(key="jb_f1_name").value == "rudePhrases"
    assert at.selectbox(key="jb_f1_type").value == "list_of_strings"
    assert at.text_input(key="jb_reason").value == "Polite: {isPolite}. Rude phrases: {rudePhrases}."
    assert at.text_area(key="jb_try_response").value == "Thanks for waiting!"
    assert warnings(at) == []


def test_a_consistency_rule_typed_in_the_page_makes_a_contradicting_reply_invalid(
    open_page, fake_judge: FakeOpenAI, studio_db: Path
):
    contradiction = Reply.json({"isGlutenFree": True, "glutenSources": ["wheat flour"]})
    at = open_page("judges")
    at.text_input(key="jb_name").input("Gluten check")
    at.text_area(key="jb_instructions").input("You check recipes for gluten.")
    at.text_area(key="jb_template").input("Is this recipe gluten-free?\n{output}")
    at.text_input(key="jb_f0_name").input("isGlutenFree")
    at.button(key="jb_add_field").click().run()
    at.text_input(key="jb_f1_name").input("glutenSources")
    at.selectbox(key="jb_f1_type").set_value("list_of_strings").run()
    at.text_input(key="jb_reason").input("Gluten-free: {isGlutenFree}. Sources: {glutenSources}.")
    at.text_area(key="jb_rules").input("if isGlutenFree is true then glutenSources is empty").run()
    assert warnings(at) == []

    # "Try it" with the rule: a reply saying gluten-free while naming wheat flour is asked again once,
    # then not scored (judge output invalid) — never scored 1.
    fake_judge.enqueue(contradiction, contradiction)
    at.text_area(key="jb_try_response").input("Pancakes: wheat flour, milk, eggs.")
    at.button(key="jb_try").click().run()
    assert not at.exception
    assert at.error[0].value.startswith("Not scored (Judge output invalid)")
    assert "glutenSources is empty" in at.error[0].value.replace("\\", "")
    assert not at.metric

    at.button(key="jb_save").click().run()
    assert at.success[0].value == "Saved Gluten check as v1 (judge:gluten-check@v1)."
    [stored] = saved(studio_db)
    assert [rule.describe() for rule in stored.definition.consistency_rules] == [
        "if isGlutenFree is true then glutenSources is empty"
    ]

    # The saved judge, as any run would use it: the contradiction is invalid output, a consistent reply scores.
    store = Store(studio_db)
    try:
        scorer = create_scorer("judge:gluten-check", settings=settings_for(fake_judge), store=store)
        fake_judge.enqueue(contradiction, contradiction)
        bad = run_evals([EvalItem("pancakes", {"input": "Dinner?", "output": "Pancakes: wheat flour."})], [scorer])
        assert bad.outcomes[0].status is ScoreStatus.JUDGE_OUTPUT_INVALID and bad.outcomes[0].score is None
        assert "wheat flour" in bad.outcomes[0].raw_reply
        fake_judge.enqueue(Reply.json({"isGlutenFree": True, "glutenSources": []}))
        good = run_evals([EvalItem("rice", {"input": "Dinner?", "output": "Steamed rice and fish."})], [scorer])
        assert good.outcomes[0].status is ScoreStatus.SCORED and good.outcomes[0].score == 1.0
    finally:
        store.close()
    assert fake_judge.chat_call_count == 2 + 2 + 1  # Try it asked twice; the run asked twice, then once


def test_a_bad_consistency_rule_is_named_by_its_line_and_the_part_not_read(open_page):
    at = open_page("judges")
    at.button(key="judges_load").click().run()  # the gluten checker's copy: two good rules on lines 1 and 2
    rules = at.text_area(key="jb_rules").value
    # Line 3 is blank (skipped), line 4 cannot be read at "purple", line 5 names a field the judge lacks.
    at.text_area(key="jb_rules").input(
        rules
        + "\n\nif isGlutenFree is true then isGlutenFree is purple\nif isVegan is true then glutenSources is empty"
    ).run()
    assert warnings(at) == [
        "consistency rule on line 4: could not read 'purple' in 'if isGlutenFree is true then isGlutenFree is "
        "purple': expected empty or not empty",
        "consistency rule on line 5, its 'if' part: 'isVegan' must name a boolean output field",
    ]
    assert at.button(key="jb_save").disabled


def test_exports_are_written_only_when_downloaded(open_page, studio_db: Path, monkeypatch):
    import dashboard.judges as page_helpers
    from scorers.catalogue.judge_store import read_export

    written: list[int] = []
    writers: list = []
    export, deferred = page_helpers.export_judges, page_helpers.deferred_export
    monkeypatch.setattr(page_helpers, "export_judges", lambda judges: written.append(len(judges)) or export(judges))
    monkeypatch.setattr(page_helpers, "deferred_export", lambda judges: writers.append(deferred(judges)) or writers[-1])
    at = open_page("judges")
    build_politeness(at)
    at.button(key="jb_save").click().run()
    at.run()
    # Three reruns with export buttons on screen (the built-in's, then the saved judge's and "all saved"):
    # no JSON was written for them.
    assert writers and written == []
    data = writers[-1]()  # what clicking "Export all saved judges as JSON" downloads
    assert isinstance(data, bytes)
    assert [d.name for d in read_export(data)] == ["Politeness"]
    assert written == [1]
