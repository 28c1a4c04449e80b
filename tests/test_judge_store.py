"""Saved judges: versions, scorer ids that pin a version, export/import, and migration m002."""

from __future__ import annotations

import json

import pytest
from fake_openai import Reply
from judge_data import settings_for
from legacy_db import make_legacy_db

from scorers import SCORERS, EvalItem, InvalidInputError, JudgeSettings, Store, create_scorer, run_evals
from scorers.catalogue.judge_builder import GLUTEN_CHECKER, JudgeDefinition
from scorers.catalogue.judge_store import (
    delete_judge,
    export_judges,
    get_judge,
    get_judge_version,
    import_judges,
    judge_versions,
    list_judges,
    read_export,
    save_judge,
)
from scorers.catalogue.registry import scorer_spec, scorer_specs


def polite(template: str = "Is this reply polite?\n{output}", **overrides) -> dict:
    data = {
        "name": "Politeness",
        "instructions": "You check the tone of customer-service replies.",
        "prompt_template": template,
        "output_fields": [{"name": "isPolite", "type": "boolean"}, {"name": "rudePhrases", "type": "list_of_strings"}],
        "score_rule": {"kind": "boolean", "field": "isPolite"},
        "reason_template": "Polite: {isPolite}. Rude phrases: {rudePhrases}.",
    }
    data.update(overrides)
    return data


def settings_for_key() -> JudgeSettings:
    """Settings that pass the key check; no test that uses them calls the judge."""
    return JudgeSettings(api_key="k")


@pytest.fixture
def store(store_target: str):
    """The store suite runs on SQLite and on PostgreSQL."""
    s = Store(store_target)
    yield s
    s.close()


def test_saving_an_edit_creates_the_next_version(store):
    first = save_judge(store, polite())
    second = save_judge(store, polite("Rate the politeness of:\n{output}"))

    assert (first.version, second.version) == (1, 2)
    assert (first.scorer_id, first.versioned_id) == ("judge:politeness", "judge:politeness@v1")
    assert second.versioned_id == "judge:politeness@v2"
    assert [j.versioned_id for j in list_judges(store)] == ["judge:politeness@v2"]
    assert [v.version for v in judge_versions(store, "Politeness")] == [1, 2]
    assert get_judge(store, "politeness").definition.prompt_template.startswith("Rate the politeness")
    assert get_judge_version(store, "judge:politeness", 1).definition.prompt_template.startswith("Is this reply")
    assert get_judge(store, "judge:politeness@v1").version == 1
    with pytest.raises(KeyError, match="has no version 3"):
        get_judge_version(store, "politeness", 3)


def test_saving_an_unchanged_definition_keeps_the_version(store):
    save_judge(store, polite())
    assert save_judge(store, polite()).version == 1
    assert len(judge_versions(store, "politeness")) == 1


def test_invalid_definitions_are_not_saved(store):
    with pytest.raises(InvalidInputError, match=r"prompt_template: unknown placeholder \{context\}"):
        save_judge(store, polite("{output} {context}"))
    assert list_judges(store) == []


def test_a_scorer_id_pins_the_version(store, fake_openai):
    save_judge(store, polite("V1 template: {output}"))
    save_judge(store, polite("V2 template: {output}"))
    settings = settings_for(fake_openai)
    fake_openai.enqueue(
        Reply.json({"isPolite": True, "rudePhrases": []}), Reply.json({"isPolite": False, "rudePhrases": ["whatever"]})
    )

    old = create_scorer("judge:politeness@v1", settings=settings, store=store)
    latest = create_scorer("judge:politeness", settings=settings, store=store)
    assert (old.id, latest.id) == ("judge:politeness@v1", "judge:politeness@v2")
    assert old.name == "Politeness · v1"

    assert old.run({"input": "q", "output": "Thanks!"}).score == 1.0
    assert fake_openai.chat_requests()[0]["messages"][1]["content"].startswith("V1 template: <response>")
    result = latest.run({"input": "q", "output": "Whatever."})
    assert (result.score, result.reason) == (0.0, "Polite: false. Rude phrases: whatever.")
    assert "V2 template:" in fake_openai.prompt_text(1)


def test_a_run_records_the_version_it_used(store, fake_openai):
    save_judge(store, polite())
    save_judge(store, polite("Second version: {output}"))
    fake_openai.responder = lambda body: Reply.json({"isPolite": True, "rudePhrases": []})
    scorer = create_scorer("judge:politeness", settings=settings_for(fake_openai), store=store)
    items = [EvalItem("a", {"input": "q", "output": "Thank you!"}, {})]
    outcome = run_evals(items, [scorer], store=store, dataset_name="replies.csv")

    run = store.get_run(outcome.run_id)
    assert [s["id"] for s in run["scorers"]] == ["judge:politeness@v2"]
    assert [r["scorer_id"] for r in store.results(outcome.run_id)] == ["judge:politeness@v2"]
    rebuilt = create_scorer(run["scorers"][0]["id"], settings=settings_for(fake_openai), store=store)
    assert rebuilt.prompt_template == "Second version: {output}"


def test_delete_hides_a_judge_but_keeps_its_versions(store):
    save_judge(store, polite())
    delete_judge(store, "Politeness")
    assert list_judges(store) == []
    assert "judge:politeness" not in scorer_specs(store)
    with pytest.raises(KeyError, match="was deleted"):
        get_judge(store, "politeness")
    assert get_judge_version(store, "politeness", 1).deleted
    assert create_scorer("judge:politeness@v1", settings=settings_for_key(), store=store).id == "judge:politeness@v1"
    with pytest.raises(InvalidInputError, match="was deleted"):
        create_scorer("judge:politeness", settings=settings_for_key(), store=store)
    with pytest.raises(KeyError):
        delete_judge(store, "politeness")

    again = save_judge(store, polite("Back again: {output}"))
    assert again.version == 2  # numbering continues: judge:politeness@v1 still names the first definition
    assert [j.versioned_id for j in list_judges(store)] == ["judge:politeness@v2"]


def test_scorer_specs_add_saved_judges(store):
    assert scorer_specs() == SCORERS
    assert scorer_specs(store) == SCORERS  # none saved yet
    save_judge(
        store,
        polite(
            description="Whether a reply is polite.",
            example={"input": "Where is my parcel?", "output": "Calm down, it is coming."},
        ),
    )
    specs = scorer_specs(store)
    assert list(specs)[: len(SCORERS)] == list(SCORERS)
    spec = specs["judge:politeness"]
    assert (spec.name, spec.uses_judge, spec.judge_calls, spec.options) == ("Politeness", True, 1, ())
    assert spec.inputs == ("output",)
    assert spec.measures == "Whether a reply is polite."
    assert spec.formula.startswith("1 if isPolite is true, else 0")
    assert spec.score_range == "0 or 1" and spec.higher_is_better
    assert spec.example["output"] == {"text": "Calm down, it is coming."}
    assert spec.example["options"] == {}
    assert "judge:politeness@v1" in spec.notes
    assert scorer_spec("judge:politeness@v1", store).id == "judge:politeness@v1"
    assert scorer_spec("textual-difference") is SCORERS["textual-difference"]


def test_create_scorer_keeps_its_signature_and_explains_judge_ids(store):
    assert create_scorer("textual-difference", {"scale": 10}).id == "textual-difference"
    save_judge(store, polite())
    with pytest.raises(InvalidInputError, match=r"saved judge: pass the store"):
        create_scorer("judge:politeness")
    with pytest.raises(InvalidInputError, match="no saved judge 'judge:nothing'"):
        create_scorer("judge:nothing", store=store)
    with pytest.raises(InvalidInputError, match="has no option"):
        create_scorer("judge:politeness", {"scale": 10}, settings=settings_for_key(), store=store)
    with pytest.raises(InvalidInputError, match="unknown scorer 'judge:Bad Name'"):
        create_scorer("judge:Bad Name", store=store)


# ---------------------------------------------------------------- export / import


def test_export_and_import_into_another_database(store, tmp_path):
    save_judge(store, polite())
    save_judge(store, GLUTEN_CHECKER.model_copy(update={"name": "Gluten copy"}))
    text = export_judges(list_judges(store))
    data = json.loads(text)
    assert data["format"] == "scorer-studio-judges"
    assert [j["name"] for j in data["judges"]] == ["Gluten copy", "Politeness"]

    other = Store(tmp_path / "other.db")
    try:
        imported = import_judges(other, text)
        assert [(j.versioned_id, j.name) for j in imported] == [
            ("judge:gluten-copy@v1", "Gluten copy"),
            ("judge:politeness@v1", "Politeness"),
        ]
        assert [j.definition for j in list_judges(other)] == [j.definition for j in list_judges(store)]
    finally:
        other.close()


def test_import_with_a_taken_name_adds_a_version(store):
    save_judge(store, polite())
    changed = polite("Imported template: {output}")
    [saved] = import_judges(store, json.dumps(changed))  # a single definition object
    assert saved.versioned_id == "judge:politeness@v2"
    [same] = import_judges(store, json.dumps([changed]))  # a list; unchanged: no new version
    assert same.version == 2


def test_an_invalid_import_saves_nothing(store):
    broken = polite(output_fields=[{"name": "is polite", "type": "boolean"}])
    text = json.dumps({"format": "scorer-studio-judges", "judges": [polite(name="Fine"), broken]})
    with pytest.raises(InvalidInputError) as caught:
        import_judges(store, text)
    message = str(caught.value)
    assert message.startswith("nothing was imported: ")
    assert "judges[1].output_fields[0].name: 'is polite' is not an identifier" in message
    assert "judges[1].score_rule.field: no field named 'isPolite'" in message
    assert list_judges(store) == []
    with pytest.raises(InvalidInputError, match="import: not JSON"):
        import_judges(store, "{oops")
    with pytest.raises(InvalidInputError, match="unknown format 'other'"):
        read_export(json.dumps({"format": "other", "judges": []}))
    with pytest.raises(InvalidInputError, match="no judge definitions found"):
        read_export("[]")


def test_read_export_round_trips_definitions():
    definitions = [JudgeDefinition.model_validate(polite()), GLUTEN_CHECKER]
    assert read_export(export_judges(definitions)) == definitions


# ---------------------------------------------------------------- migration


def test_a_schema_1_database_gets_the_judge_tables_once(tmp_path):
    path = tmp_path / "old.db"
    db = make_legacy_db(path, 1)
    db.execute(
        "INSERT INTO runs (id, name, created_at, status, dataset_name, n_items, scorers)"
        " VALUES ('r1', 'old run', '2025-01-01T00:00:00+00:00', 'completed', 'x.csv', 0, '[]')"
    )
    db.commit()
    db.close()

    store = Store(path)
    try:
        head = store.schema_version
        assert head >= 4  # stamped at revision 1, upgraded through the judges revision and the later ones
        tables = {r[0] for r in store.query("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"judges", "judge_versions", "runs", "results", "alembic_version"} <= tables
        assert [r["name"] for r in store.list_runs()] == ["old run"]
        assert save_judge(store, polite()).version == 1
    finally:
        store.close()
    reopened = Store(path)  # applied once: opening again changes nothing
    try:
        assert reopened.schema_version == head
        assert [j.versioned_id for j in list_judges(reopened)] == ["judge:politeness@v1"]
    finally:
        reopened.close()
