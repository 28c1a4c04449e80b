"""The Judges page's builder: a judge definition <-> the builder's widget values, and its views.

The builder's widgets keep their values in ``st.session_state`` under ``jb_*`` keys. The
pure functions here (:func:`builder_state`, :func:`definition_data`, :func:`rule_choices`)
convert between a :class:`~scorers.catalogue.judge_builder.JudgeDefinition` and those values, so
loading, copying and validating a judge is testable without Streamlit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from scorers.catalogue.judge_builder import (
    FIELD_TYPES,
    RESERVED_NAMES,
    JudgeDefinition,
    JudgeExample,
    TryOutcome,
    describe_rule,
    parse_consistency_rules,
    scan_prompt_template,
    scan_reason_template,
)
from scorers.catalogue.judge_store import SavedJudge, export_judges
from scorers.core.base import decimal_text
from scorers.core.errors import outcome_status_label

from .results import md_escape

PREFIX = "jb_"
ROWS = "jb_rows"
"""Session-state key: the ids of the output-field rows, in order (a row's widgets are ``jb_f<id>_*``)."""
TRY_FIELDS = {
    "input": "jb_try_prompt",
    "output": "jb_try_response",
    "ground_truth": "jb_try_ground_truth",
    "system": "jb_try_system",
}
"""Example text → the session-state key of its "Try it" text area."""

FIELD_TYPE_LABELS = {
    "boolean": "boolean (true/false)",
    "number": "number",
    "string": "string",
    "list_of_strings": "list of strings",
    "label": "label (one of several)",
}
RULE_LABELS = {
    "boolean": "Boolean field → 1 or 0",
    "number": "Number field normalised by its range",
    "label": "Label field → a score per label",
    "list_count": "List field: count the items",
}


def _row_key(row: int, part: str) -> str:
    return f"jb_f{row}_{part}"


def score_key(field: str, label: str) -> str:
    """Session-state key of the score of ``label`` in a label rule over ``field``."""
    return f"jb_rule_score_{field}_{label}"


def default_label_scores(labels: tuple[str, ...] | list[str]) -> dict[str, float]:
    """Scores from 1 (first label) down to 0 (last), evenly spaced, to start a label table.

    >>> default_label_scores(["good", "partial", "bad"])
    {'good': 1.0, 'partial': 0.5, 'bad': 0.0}
    """
    n = len(labels)
    return {label: round(1 - i / (n - 1), 2) if n > 1 else 1.0 for i, label in enumerate(labels)}


def builder_state(definition: JudgeDefinition) -> dict[str, Any]:
    """The builder's widget values that show ``definition`` (rows numbered 0..n−1)."""
    state: dict[str, Any] = {
        "jb_name": definition.name,
        "jb_description": definition.description,
        "jb_instructions": definition.instructions,
        "jb_template": definition.prompt_template,
        "jb_reason": definition.reason_template,
        "jb_scale": float(definition.scale),
        "jb_rules": "\n".join(rule.describe() for rule in definition.consistency_rules),
        ROWS: list(range(len(definition.output_fields))),
        "jb_next_row": len(definition.output_fields),
    }
    for row, f in enumerate(definition.output_fields):
        state[_row_key(row, "name")] = f.name
        state[_row_key(row, "type")] = f.type
        state[_row_key(row, "description")] = f.description
        state[_row_key(row, "min")] = f.min
        state[_row_key(row, "max")] = f.max
        state[_row_key(row, "integer")] = f.integer
        state[_row_key(row, "labels")] = ", ".join(f.labels)
    rule = definition.score_rule
    state["jb_rule_kind"] = rule.kind
    state["jb_rule_field"] = rule.field
    if rule.kind == "boolean":
        state["jb_rule_good"] = rule.true_is_good
    elif rule.kind == "number":
        state["jb_rule_higher"] = rule.higher_is_better
    elif rule.kind == "label":
        for label, score in rule.scores.items():
            state[score_key(rule.field, label)] = float(score)
    else:
        state["jb_rule_cap"] = rule.cap
        state["jb_rule_fewer"] = rule.fewer_is_better
    example = definition.example or JudgeExample()
    for name, key in TRY_FIELDS.items():
        state[key] = getattr(example, name)
    return state


def load_definition(state: MutableMapping[str, Any], definition: JudgeDefinition, note: str) -> None:
    """Replace the builder's values with ``definition`` (call it from a widget callback).

    Args:
        state: ``st.session_state``.
        definition: what to show.
        note: what was loaded, shown above the builder (e.g. ``"Editing My judge, v2"``).
    """
    for key in [k for k in state if isinstance(k, str) and k.startswith(PREFIX)]:
        del state[key]
    state.update(builder_state(definition))
    state["jb_note"] = note


def labels_of(text: str) -> tuple[str, ...]:
    """Labels typed as comma-separated text, trimmed, blanks dropped.

    >>> labels_of(" good, partial ,, bad")
    ('good', 'partial', 'bad')
    """
    return tuple(label.strip() for label in text.split(",") if label.strip())


def field_rows(state: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The output fields as typed, in JSON shape (only the attributes their type has)."""
    fields = []
    for row in state.get(ROWS, []):
        kind = state.get(_row_key(row, "type"), "boolean")
        entry: dict[str, Any] = {
            "name": (state.get(_row_key(row, "name")) or "").strip(),
            "type": kind,
            "description": state.get(_row_key(row, "description")) or "",
        }
        if kind == "number":
            entry["min"] = state.get(_row_key(row, "min"))
            entry["max"] = state.get(_row_key(row, "max"))
            entry["integer"] = bool(state.get(_row_key(row, "integer"), False))
        if kind == "label":
            entry["labels"] = list(labels_of(state.get(_row_key(row, "labels")) or ""))
        fields.append(entry)
    return fields


def rule_choices(fields: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The safe score rules the fields allow: rule kind → the names of the fields it can use.

    A number field needs a min and a max; a label field two labels or more; blank names are skipped.

    >>> rule_choices([{"name": "ok", "type": "boolean"}, {"name": "n", "type": "number", "min": None, "max": 5}])
    {'boolean': ['ok']}
    """
    choices: dict[str, list[str]] = {}
    for f in fields:
        if not f["name"]:
            continue
        kind = {"boolean": "boolean", "number": "number", "label": "label", "list_of_strings": "list_count"}.get(
            f["type"]
        )
        if kind == "number" and (f.get("min") is None or f.get("max") is None):
            continue
        if kind == "label" and len(f.get("labels", [])) < 2:
            continue
        if kind is not None and f["name"] not in choices.get(kind, []):
            choices.setdefault(kind, []).append(f["name"])
    return {kind: choices[kind] for kind in RULE_LABELS if kind in choices}


def rule_data(state: Mapping[str, Any], fields: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The score rule as chosen, in JSON shape, or None when the fields allow no rule yet."""
    choices = rule_choices(fields)
    kind = state.get("jb_rule_kind")
    if kind not in choices:
        return None
    name = state.get("jb_rule_field")
    if name not in choices[kind]:
        name = choices[kind][0]
    if kind == "boolean":
        return {"kind": kind, "field": name, "true_is_good": bool(state.get("jb_rule_good", True))}
    if kind == "number":
        return {"kind": kind, "field": name, "higher_is_better": bool(state.get("jb_rule_higher", True))}
    if kind == "label":
        labels = next(f["labels"] for f in fields if f["name"] == name)
        defaults = default_label_scores(labels)
        return {
            "kind": kind,
            "field": name,
            "scores": {label: state.get(score_key(name, label), defaults[label]) for label in labels},
        }
    return {
        "kind": kind,
        "field": name,
        "cap": int(state.get("jb_rule_cap", 3)),
        "fewer_is_better": bool(state.get("jb_rule_fewer", True)),
    }


def example_data(state: Mapping[str, Any]) -> dict[str, str]:
    """The "Try it" texts as a :class:`~scorers.catalogue.judge_builder.JudgeExample` dict."""
    return {name: state.get(key) or "" for name, key in TRY_FIELDS.items()}


def definition_data(state: Mapping[str, Any], *, with_example: bool = False) -> dict[str, Any]:
    """The definition the builder's values describe, in JSON shape (validate it with
    :func:`scorers.catalogue.judge_builder.validate_definition`).

    Args:
        state: ``st.session_state``.
        with_example: include the "Try it" texts as the judge's example when a response is typed.
    """
    fields = field_rows(state)
    data: dict[str, Any] = {
        "name": (state.get("jb_name") or "").strip(),
        "description": (state.get("jb_description") or "").strip(),
        "instructions": state.get("jb_instructions") or "",
        "prompt_template": state.get("jb_template") or "",
        "output_fields": fields,
        "reason_template": state.get("jb_reason") or "",
        "scale": state.get("jb_scale", 1.0),
        "consistency_rules": parse_consistency_rules(state.get("jb_rules") or ""),
    }
    rule = rule_data(state, fields)
    if rule is not None:
        data["score_rule"] = rule
    example = example_data(state)
    if with_example and example["output"].strip():
        data["example"] = example
    return data


def problems_under(problems: list[str], *sections: str) -> list[str]:
    """The problems of the given top-level sections (``"output_fields"``, ``"score_rule"`` ...).

    >>> problems_under(["name: empty", "output_fields[0].name: empty"], "output_fields")
    ['output_fields[0].name: empty']
    """
    return [p for p in problems if p.split(":", 1)[0].split(".", 1)[0].split("[", 1)[0] in sections]


def rule_problems_by_line(problems: list[str], text: str) -> list[str]:
    """The consistency rules' problems, placed by the line of the rules' text box they are on.

    Args:
        problems: :func:`validate_definition`'s problems (``"consistency_rules[1].when: ..."``, 0-based).
        text: the rules as typed, one per line (blank lines are skipped by ``parse_consistency_rules``).

    Returns:
        Those problems worded for the page: ``"consistency rule on line 3, its 'if' part: ..."``.

    >>> rule_problems_by_line(["consistency_rules[1].then: 'x' must ..."], "if a is true then b is empty\\n\\nif c")
    ["consistency rule on line 3, its 'then' part: 'x' must ..."]
    """
    lines = [n for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    parts = {"": "", ".when": ", its 'if' part", ".then": ", its 'then' part"}
    worded = []
    for problem in problems_under(problems, "consistency_rules"):
        found = re.match(r"consistency_rules\[(\d+)\](\.when|\.then)?: ", problem)
        if found is None or int(found[1]) >= len(lines):
            worded.append(problem)
            continue
        where = f"consistency rule on line {lines[int(found[1])]}{parts[found[2] or '']}"
        worded.append(f"{where}: {problem[found.end() :]}")
    return worded


def show_problems(problems: list[str]) -> None:
    """Each problem as a warning line (Markdown escaped)."""
    for problem in problems:
        st.warning(md_escape(problem), icon=":material/error:")


# ---------------------------------------------------------------- widgets


def _add_row() -> None:
    state = st.session_state
    row = state.get("jb_next_row", 0)
    state[ROWS] = [*state.get(ROWS, []), row]
    state["jb_next_row"] = row + 1
    state[_row_key(row, "type")] = "boolean"


def _remove_row(row: int) -> None:
    state = st.session_state
    state[ROWS] = [r for r in state.get(ROWS, []) if r != row]
    for key in [k for k in state if isinstance(k, str) and k.startswith(f"jb_f{row}_")]:
        del state[key]


def render_field_rows() -> None:
    """The output-fields editor: one row of widgets per field, "Add a field" and a remove button per row."""
    for position, row in enumerate(st.session_state.get(ROWS, [])):
        with st.container(border=True):
            name_col, type_col, remove_col = st.columns([3, 2, 1], vertical_alignment="bottom")
            name_col.text_input(
                f"Field {position + 1} name",
                key=_row_key(row, "name"),
                help="An identifier: letters, digits and _, e.g. isGlutenFree.",
            )
            st.session_state.setdefault(_row_key(row, "type"), "boolean")
            kind = type_col.selectbox(
                f"Field {position + 1} type", FIELD_TYPES, format_func=FIELD_TYPE_LABELS.get, key=_row_key(row, "type")
            )
            remove_col.button(
                "Remove", key=_row_key(row, "remove"), on_click=_remove_row, args=(row,), icon=":material/delete:"
            )
            if kind == "number":
                low, high, whole = st.columns(3, vertical_alignment="bottom")
                low.number_input(
                    f"Field {position + 1} min",
                    value=None,
                    key=_row_key(row, "min"),
                    step=1.0,
                    help="Needed to score by this number.",
                )
                high.number_input(f"Field {position + 1} max", value=None, key=_row_key(row, "max"), step=1.0)
                whole.checkbox("Whole numbers", key=_row_key(row, "integer"))
            elif kind == "label":
                st.text_input(
                    f"Field {position + 1} labels",
                    key=_row_key(row, "labels"),
                    placeholder="good, partial, bad",
                    help="At least two, separated by commas.",
                )
            st.text_input(
                f"Field {position + 1} description",
                key=_row_key(row, "description"),
                help="What the judge should put in this field; the judge sees it in the schema.",
            )
    st.button("Add a field", key="jb_add_field", on_click=_add_row, icon=":material/add:")


def _keep_valid(key: str, options: list[Any]) -> None:
    if st.session_state.get(key) not in options:
        st.session_state[key] = options[0]


def render_rule_chooser(fields: list[dict[str, Any]]) -> None:
    """The score-rule chooser: only the safe rules the fields allow, and each rule's settings."""
    choices = rule_choices(fields)
    if not choices:
        st.info(
            "Add a boolean field, a number field with a min and a max, a label field with two labels or "
            "more, or a list-of-strings field: the score is computed from one of them."
        )
        return
    _keep_valid("jb_rule_kind", list(choices))
    kind_col, field_col = st.columns(2)
    kind = kind_col.selectbox("Score rule", list(choices), format_func=RULE_LABELS.get, key="jb_rule_kind")
    _keep_valid("jb_rule_field", choices[kind])
    name = field_col.selectbox("Field to score", choices[kind], key="jb_rule_field")
    if kind == "boolean":
        st.session_state.setdefault("jb_rule_good", True)
        st.radio(
            "Polarity",
            [True, False],
            key="jb_rule_good",
            horizontal=True,
            format_func={True: f"{name} = true is good (1)", False: f"{name} = true is bad (0)"}.get,
        )
    elif kind == "number":
        st.session_state.setdefault("jb_rule_higher", True)
        st.radio(
            "Direction",
            [True, False],
            key="jb_rule_higher",
            horizontal=True,
            format_func={True: "Higher is better", False: "Lower is better"}.get,
        )
    elif kind == "label":
        labels = next(f["labels"] for f in fields if f["name"] == name)
        st.caption("The score of each label, from 0 to 1 (every label needs one).")
        columns = st.columns(min(len(labels), 4))
        for i, (label, default) in enumerate(default_label_scores(labels).items()):
            st.session_state.setdefault(score_key(name, label), default)
            columns[i % len(columns)].number_input(
                label, min_value=0.0, max_value=1.0, step=0.1, key=score_key(name, label)
            )
    else:
        st.session_state.setdefault("jb_rule_cap", 3)
        st.session_state.setdefault("jb_rule_fewer", True)
        cap_col, direction_col = st.columns(2)
        cap_col.number_input(
            "Cap (items)",
            min_value=1,
            step=1,
            key="jb_rule_cap",
            help="k items of n (the cap) or more give the extreme score.",
        )
        direction_col.radio(
            "Direction",
            [True, False],
            key="jb_rule_fewer",
            horizontal=True,
            format_func={True: "Fewer is better: 1 − min(k/cap, 1)", False: "More is better: min(k/cap, 1)"}.get,
        )


def render_template_check(template: str) -> None:
    """Under the template: the placeholders found, or each problem with its line and column."""
    used, problems = scan_prompt_template(template)
    if used:
        st.caption(
            "Placeholders found: "
            + ", ".join(f"`{{{p}}}`" for p in used)
            + " · other braces are literal text; write `{{name}}` for a literal `{name}`."
        )
    show_problems(problems)


def render_reason_check(reason: str, fields: list[dict[str, Any]]) -> None:
    """Under the reason template: the names it may use, and its problems."""
    names = {f["name"] for f in fields if f["name"]}
    st.caption(
        "Names you can use: "
        + ", ".join(f"`{{{n}}}`" for n in [*sorted(names), *RESERVED_NAMES])
        + ". Empty: the reason lists every field."
    )
    show_problems(scan_reason_template(reason, names)[1])


def render_try_outcome(outcome: TryOutcome) -> None:
    """A "Try it" outcome: the rendered prompt, the raw reply, the parsed fields and the score, or the error."""
    if outcome.error is not None:
        st.error(f"Not scored ({outcome_status_label(outcome.status.value)}): {md_escape(outcome.error)}")
    if outcome.score is not None:
        score_col, reason_col = st.columns([1, 3])
        score_col.metric("Score", decimal_text(outcome.score))
        if outcome.result is not None and outcome.result.reason:
            reason_col.markdown(f"**Reason:** {md_escape(outcome.result.reason)}")
    if outcome.fields is not None:
        st.markdown("**Parsed fields**")
        st.json(outcome.fields)
    if outcome.raw_reply is not None:
        st.markdown("**The judge's raw reply**")
        st.code(outcome.raw_reply, language=None)
    if outcome.messages is not None:
        with st.expander("Rendered prompt", expanded=outcome.error is not None):
            for message in outcome.messages:
                st.caption(f"{message['role']} message")
                st.code(message["content"], language=None, wrap_lines=True)


def judges_frame(judges: list[SavedJudge]) -> pd.DataFrame:
    """The saved judges as a table: name, scorer id, version, saved at, fields and score rule."""
    return pd.DataFrame(
        [
            {
                "Name": j.name,
                "Scorer id": j.scorer_id,
                "Version": j.version,
                "Saved (UTC)": j.created_at[:16].replace("T", " "),
                "Fields": ", ".join(f.name for f in j.definition.output_fields),
                "Score rule": describe_rule(j.definition),
            }
            for j in judges
        ],
        columns=["Name", "Scorer id", "Version", "Saved (UTC)", "Fields", "Score rule"],
    )


def starter_state() -> dict[str, Any]:
    """The builder's values for a new judge: empty texts and one boolean field to name."""
    return {
        "jb_name": "",
        "jb_description": "",
        "jb_instructions": "",
        "jb_template": "",
        "jb_reason": "",
        "jb_rules": "",
        "jb_scale": 1.0,
        ROWS: [0],
        "jb_next_row": 1,
        _row_key(0, "name"): "",
        _row_key(0, "type"): "boolean",
        _row_key(0, "description"): "",
    }


def start_new(state: MutableMapping[str, Any]) -> None:
    """Clear the builder for a new judge (call it from a widget callback)."""
    for key in [k for k in state if isinstance(k, str) and k.startswith(PREFIX)]:
        del state[key]
    state.update(starter_state())
    state["jb_note"] = "A new judge."


KEPT = "judges_builder_kept"
"""Session-state key: a copy of the builder's widget values from the page's last complete run."""
_KEPT_KEYS = (
    "jb_name",
    "jb_description",
    "jb_instructions",
    "jb_template",
    "jb_reason",
    "jb_rules",
    "jb_scale",
    "jb_rule_kind",
    "jb_rule_field",
    "jb_rule_good",
    "jb_rule_higher",
    "jb_rule_cap",
    "jb_rule_fewer",
    *TRY_FIELDS.values(),
)
_KEPT_ROW_PARTS = ("name", "type", "description", "min", "max", "integer", "labels")


def _widget_value_keys(state: Mapping[str, Any]) -> list[str]:
    rows = [_row_key(row, part) for row in state.get(ROWS, []) for part in _KEPT_ROW_PARTS]
    scores = [k for k in state if isinstance(k, str) and k.startswith("jb_rule_score_")]
    return [k for k in (*_KEPT_KEYS, *rows, *scores) if k in state]


def keep_builder_values(state: MutableMapping[str, Any]) -> None:
    """Copy the builder's widget values aside (call it at the end of the page).

    Streamlit forgets the values of widgets that a script run does not draw, so visiting
    another page would empty the builder; :func:`restore_builder_values` puts them back.
    """
    state[KEPT] = {k: state[k] for k in _widget_value_keys(state)}


def restore_builder_values(state: MutableMapping[str, Any]) -> None:
    """Put back the builder's values when Streamlit dropped them while another page ran
    (call it at the top of the page, before any builder widget is drawn)."""
    if "jb_name" in state:
        return
    for key, value in state.get(KEPT, {}).items():
        state.setdefault(key, value)


def deferred_export(judges: Sequence[SavedJudge | JudgeDefinition]) -> Callable[[], bytes]:
    """A download button's data for the JSON export of ``judges``, written only when the button is clicked.

    Args:
        judges: saved judges or definitions, as :func:`export_judges` takes them.

    Returns:
        A function returning the export as UTF-8 bytes (Streamlit's deferred download takes bytes).
    """
    return lambda: export_judges(judges).encode("utf-8")
