"""Judges page: build an LLM judge without code, try it on one example, save it (versioned), export/import."""

from __future__ import annotations

import streamlit as st

from dashboard.judges import (
    ROWS,
    deferred_export,
    definition_data,
    example_data,
    field_rows,
    judges_frame,
    keep_builder_values,
    load_definition,
    problems_under,
    render_field_rows,
    render_reason_check,
    render_rule_chooser,
    render_template_check,
    render_try_outcome,
    restore_builder_values,
    rule_choices,
    rule_problems_by_line,
    show_problems,
    start_new,
    starter_state,
)
from dashboard.layout import setup_page
from dashboard.results import md_escape
from dashboard.run_view import get_store
from dashboard.settings import judge_settings
from scorers import InvalidInputError
from scorers.catalogue.judge_builder import (
    BUILT_IN_DEFINITIONS,
    JudgeDefinition,
    JudgeExample,
    slugify,
    try_definition,
    validate_definition,
)
from scorers.catalogue.judge_store import (
    delete_judge,
    import_judges,
    judge_versions,
    list_judges,
    save_judge,
)

BUILT_IN = "builtin:"

setup_page()
st.title("Judges")
st.caption(
    "Build an LLM judge without code: its instructions, a prompt template, the fields it answers with and a "
    "safe rule that turns the answer into a score. Saved judges are versioned and join the scorer lists "
    "(Evaluate, Catalogue) as judge:<name>; a run records the version it used."
)
store = get_store()
state = st.session_state
if ROWS not in state:
    state.update(starter_state())
restore_builder_values(state)


def _flash(key: str) -> None:
    message = state.pop(key, None)
    if message is not None:
        getattr(st, message[0])(message[1])


# ---------------------------------------------------------------- saved judges

st.subheader("Saved judges")
_flash("judges_flash")
saved = list_judges(store)
if saved:
    st.dataframe(judges_frame(saved), hide_index=True, key="judges_table")
else:
    st.info("No saved judge yet: build one below, or copy the built-in gluten checker.")

options = [BUILT_IN + slug for slug in BUILT_IN_DEFINITIONS] + [j.slug for j in saved]
labels = {BUILT_IN + slug: f"{d.name} (built-in, copy to edit)" for slug, d in BUILT_IN_DEFINITIONS.items()}
labels |= {j.slug: f"{j.name} (v{j.version})" for j in saved}
if "judges_pick_next" in state:
    state["judges_pick"] = state.pop("judges_pick_next")
if state.get("judges_pick") not in options:
    state["judges_pick"] = options[-1]
pick = st.selectbox("Judge", options, format_func=labels.get, key="judges_pick")
if pick.startswith(BUILT_IN):
    built_in = BUILT_IN_DEFINITIONS[pick.removeprefix(BUILT_IN)]
    copy = built_in.model_copy(update={"name": f"{built_in.name} (copy)"})
    st.button(
        "Copy into the builder",
        key="judges_load",
        icon=":material/content_copy:",
        on_click=load_definition,
        args=(state, copy, f"A copy of the built-in {built_in.name}: rename it, change it, save it."),
    )
    st.download_button(
        "Export as JSON",
        data=deferred_export([built_in]),  # written when clicked
        file_name=f"{pick.removeprefix(BUILT_IN)}.json",
        mime="application/json",
        on_click="ignore",
        key="judges_export_one",
    )
else:
    versions = {v.version: v for v in judge_versions(store, pick)}
    version = st.selectbox(
        "Version", sorted(versions, reverse=True), format_func=lambda n: f"v{n}", key=f"judges_version_{pick}"
    )
    chosen = versions[version]
    load_col, export_col = st.columns(2)
    load_col.button(
        "Load into the builder",
        key="judges_load",
        icon=":material/edit:",
        on_click=load_definition,
        args=(
            state,
            chosen.definition,
            f"Editing {chosen.name}, loaded from v{chosen.version}: saving a change creates "
            f"v{chosen.latest_version + 1}.",
        ),
    )
    export_col.download_button(
        "Export this version as JSON",
        data=deferred_export([chosen]),
        file_name=f"{chosen.slug}-v{chosen.version}.json",
        mime="application/json",
        on_click="ignore",
        key="judges_export_one",
    )
    confirm = st.checkbox(
        f"Delete {chosen.name}: hide it from the lists (runs that used it keep its versions)",
        key=f"judges_delete_confirm_{pick}",
    )
    if st.button("Delete", key="judges_delete", icon=":material/delete:", disabled=not confirm):
        delete_judge(store, pick)
        state["judges_flash"] = ("success", f"Deleted {chosen.name}.")
        st.rerun()
st.download_button(
    "Export all saved judges as JSON",
    data=deferred_export(saved),
    file_name="judges.json",
    mime="application/json",
    on_click="ignore",
    key="judges_export_all",
    disabled=not saved,
)

with st.expander("Import judges from JSON"):
    upload = st.file_uploader(
        "A judges JSON file (an export, one definition, or a list of them)", type=["json"], key="judges_import_file"
    )
    pasted = st.text_area("…or paste the JSON", key="judges_import_text", height=120)
    if st.button("Import", key="judges_import"):
        if upload is None and not pasted.strip():
            st.warning("Choose a JSON file or paste the JSON first.")
        else:
            try:
                imported = import_judges(store, upload.getvalue() if upload is not None else pasted)
            except InvalidInputError as exc:
                st.error(md_escape(str(exc)))
            else:
                names = ", ".join(f"{j.name} (v{j.version})" for j in imported)
                state["judges_flash"] = ("success", f"Imported {names}. A name that was taken got a new version.")
                st.rerun()

# ---------------------------------------------------------------- builder

st.divider()
st.subheader("Builder")
note_col, new_col = st.columns([4, 1], vertical_alignment="center")
note_col.caption(md_escape(state.get("jb_note", "A new judge.")))
new_col.button("Start a new judge", key="jb_new", on_click=start_new, args=(state,), icon=":material/note_add:")

data = definition_data(state)
problems = validate_definition(data)

name_col, description_col = st.columns(2)
name = name_col.text_input("Name", key="jb_name", help="Its slug (lower case, dashes) is the judge's id: judge:<slug>.")
description_col.text_input("What it measures (optional)", key="jb_description", help="One sentence for the Catalogue.")
show_problems(problems_under(problems, "name", "description"))
st.text_area(
    "Instructions (the judge's role, its system message)",
    key="jb_instructions",
    height=90,
    placeholder="You are a careful reviewer who checks whether ...",
)
show_problems(problems_under(problems, "instructions"))
template = st.text_area(
    "Prompt template",
    key="jb_template",
    height=240,
    placeholder="Check whether the response answers the question.\n\nQuestion: {input}\nResponse: {output}",
    help="Placeholders: {input} (the user prompt), {output} (the response), {ground_truth}, {system}. Each "
    "value is sent wrapped in tags as data. Other braces are literal text, so JSON examples need no escaping.",
)
render_template_check(template)

st.markdown("**Output fields** — what the judge answers with")
render_field_rows()
fields = field_rows(state)
show_problems(problems_under(problems, "output_fields"))

st.markdown("**Score rule** — how the answer becomes a score in 0..1 (no code is run)")
render_rule_chooser(fields)
if rule_choices(fields):
    show_problems(problems_under(problems, "score_rule"))

reason_col, scale_col = st.columns([3, 1])
with reason_col:
    reason = st.text_input(
        "Reason template", key="jb_reason", placeholder="Verdict: {verdict}. Score {score} of {scale}."
    )
    render_reason_check(reason, fields)
scale_col.number_input("Scale", min_value=0.01, step=1.0, key="jb_scale", help="Multiplies the 0..1 score.")
show_problems(problems_under(problems, "scale"))

st.text_area(
    "Consistency rules (optional, one per line)",
    key="jb_rules",
    height=80,
    placeholder="if isGlutenFree is true then glutenSources is empty\nif isGlutenFree is false then glutenSources is not empty",
    help="Checks between output fields: a reply that breaks one is invalid output (asked again once, then not "
    "scored), as in the built-in gluten checker. Form: if <yes/no field> is true|false then <list or text field> "
    "is empty|not empty.",
)
show_problems(rule_problems_by_line(problems, st.session_state.get("jb_rules") or ""))

# ---------------------------------------------------------------- try it

st.divider()
st.subheader("Try it")
st.caption("One example, judged with the sidebar's judge settings. Saving keeps these texts as the judge's example.")
left, right = st.columns(2)
left.text_area("System message (optional)", key="jb_try_system", height=80)
left.text_area("User prompt", key="jb_try_prompt", height=120)
right.text_area("Response to evaluate", key="jb_try_response", height=120)
right.text_area("Ground truth (optional)", key="jb_try_ground_truth", height=80)
if st.button(
    "Try it",
    key="jb_try",
    icon=":material/play_arrow:",
    disabled=bool(problems),
    help="Fix the problems above first." if problems else None,
):
    with st.spinner("Asking the judge..."):
        state["jb_try_last"] = try_definition(data, JudgeExample(**example_data(state)).payload(), judge_settings)
if "jb_try_last" in state:
    render_try_outcome(state["jb_try_last"])

# ---------------------------------------------------------------- save

st.divider()
st.subheader("Save")
_flash("jb_flash")
slug = slugify(name)
if problems:
    st.caption(f"Fix the {len(problems)} problem{'s' if len(problems) != 1 else ''} above to save.")
else:
    existing = {j.slug: j for j in saved}.get(slug)
    if existing is None:
        st.caption(f"Saves a new judge, judge:{slug}, as version 1.")
    elif existing.definition == JudgeDefinition.model_validate(definition_data(state, with_example=True)):
        st.caption(f"No changes since v{existing.version} of judge:{slug}.")
    else:
        st.caption(f"Saves version {existing.version + 1} of judge:{slug} (v{existing.version} stays available).")
if st.button("Save", type="primary", key="jb_save", icon=":material/save:", disabled=bool(problems)):
    before = {j.slug: j.version for j in saved}.get(slug)
    stored = save_judge(store, definition_data(state, with_example=True))
    if stored.version == before:
        state["jb_flash"] = ("info", f"No change since v{stored.version} of {stored.name}: nothing was saved.")
    else:
        state["jb_flash"] = ("success", f"Saved {stored.name} as v{stored.version} ({stored.versioned_id}).")
    state["judges_pick_next"] = stored.slug
    state["jb_note"] = f"Editing {stored.name}, v{stored.version}."
    st.rerun()

keep_builder_values(state)
