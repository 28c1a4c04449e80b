"""The Review page's import and export view: labels made elsewhere in, results with their labels out."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from functools import partial
from typing import Any

import pandas as pd
import streamlit as st

from scorers import (
    DatasetError,
    InvalidInputError,
    load_dataset,
)
from scorers.analysis.labels import (
    export_labelled_run,
    guess_id_column,
    import_conflicts,
    import_labels,
    match_labels,
    parse_verdict,
)
from scorers.core.errors import ScoreStatus, outcome_status_label

from ..batch import UPLOAD_TYPES
from ..results import md_escape
from ..run_explorer import run_table
from .context import ReviewContext, verdict_text


def guess_label_column(columns: Sequence[str]) -> str | None:
    """A column that looks like human labels (``human_score``, ``label``, ``verdict``, ``pass`` ...), or None.

    >>> guess_label_column(["id", "prompt", "Human score"])
    'Human score'
    """
    hints = ("human", "label", "verdict", "rating", "pass", "grade")
    for hint in hints:
        for column in columns:
            if hint in str(column).lower():
                return column
    return None


def guess_label_kind(values: Sequence[Any]) -> str:
    """``"verdict"`` when more cells hold pass/fail words than numbers, else ``"score"``.

    >>> guess_label_kind(["pass", "FAIL", "", "perhaps"]), guess_label_kind(["0.5", "1", "n/a"])
    ('verdict', 'score')
    """
    words = numbers = 0
    for value in values:
        if isinstance(value, bool):
            words += 1
            continue
        try:
            float(str(value).strip())
        except ValueError:
            pass
        else:
            numbers += not (isinstance(value, float) and math.isnan(value))
            continue
        try:
            parse_verdict(value)
        except ValueError:
            continue
        words += 1
    return "verdict" if words > numbers else "score"


# ---- pickers


ROW_ORDER = "__row_order__"
"""The "Match rows by" choice that matches row n of the file to item n of the run."""


def _label_text(score: float | None, verdict: bool | None) -> str:
    parts = [verdict_text(verdict)] if verdict is not None else []
    if score is not None:
        parts.append(f"score {score:g}")
    return ", ".join(parts) or "—"


def render_import_export(ctx: ReviewContext, reviewer: str) -> None:
    """Import labels from a dataset column; export the results with their labels."""
    st.subheader("Import labels made elsewhere")
    st.caption(
        "Upload the dataset with a column of human labels (a score on the scorer's scale, or pass/fail). "
        "Rows are matched to the run's items by an id column (row order only if you choose it); every row that "
        "gives no label is listed with the reason. The labels are yours (the name at the top): a label you already "
        "gave is replaced only if you choose so, and other reviewers' labels are kept apart, never compared or "
        "changed. Imported labels are added to each row's history with the file's name."
    )
    # Keyed by run, not by scorer: choosing another scorer keeps the uploaded file.
    uploaded = st.file_uploader("Dataset with labels", type=list(UPLOAD_TYPES), key=f"review_{ctx.run['id']}_upload")
    if uploaded is not None:
        _render_import(ctx, reviewer, uploaded.getvalue(), uploaded.name)
    st.subheader("Export results with labels")
    st.caption(
        "One row per item and scorer, with the dataset's other columns and one numeric column per dimension "
        "score as in History's exports, the judge's score kept and the current label's columns joined: "
        "human_score, human_pass, human_comment, reviewer, labelled_at, label_source, label_edits, "
        "judge_score_at_label. CSV cells a spreadsheet would run as a formula are prefixed with '. Each file is "
        "written when its button is clicked."
    )
    left, right = st.columns(2)
    stem = f"labels-{ctx.run['id']}"
    for column, fmt, label, mime in (
        (left, "csv", "CSV", "text/csv"),
        (right, "jsonl", "JSON Lines", "application/x-ndjson"),
    ):
        column.download_button(
            label,
            data=partial(
                export_labelled_run, ctx.store, run_table(ctx.store, ctx.run["id"]), fmt
            ),  # written when clicked
            file_name=f"{stem}.{fmt}",
            mime=mime,
            key=f"{ctx.key}_export_{fmt}",
            on_click="ignore",
            icon=":material/download:",
        )


def _render_import(ctx: ReviewContext, reviewer: str, data: bytes, name: str) -> None:
    try:
        dataset = load_dataset(data, name=name)
    except DatasetError as exc:
        st.error(str(exc))
        return
    columns = list(dataset.columns)
    token = f"{ctx.key}_{hashlib.sha256(data).hexdigest()[:8]}"
    guessed = guess_label_column(columns)
    c1, c2, c3, c4 = st.columns(4)
    column = c1.selectbox(
        "Labels column", columns, index=columns.index(guessed) if guessed else 0, key=f"{token}_column"
    )
    kinds = {"score": f"Score (0–{ctx.scale:g})", "verdict": "Pass/fail"}
    guess = guess_label_kind(dataset.frame[column].tolist())
    kind = c2.radio(
        "It holds", list(kinds), index=list(kinds).index(guess), format_func=kinds.get, key=f"{token}_kind_{column}"
    )
    id_guess = guess_id_column(dataset.frame, ctx.items)
    match_options: list[str] = [*columns, ROW_ORDER]
    id_choice = c3.selectbox(
        "Match rows by",
        match_options,
        index=match_options.index(id_guess) if id_guess in columns else None,
        placeholder="choose: an id column, or row order",
        format_func=lambda c: "row order (row n labels item n)" if c == ROW_ORDER else f"id column: {c}",
        key=f"{token}_id",
        help="Proposed: the column whose values match the most item ids of the run. Row order only when you pick it.",
    )
    comment_options: list[str | None] = [None, *[c for c in columns if c != column]]
    comment_column = c4.selectbox(
        "Comments column (optional)",
        comment_options,
        format_func=lambda c: "— none —" if c is None else c,
        key=f"{token}_comment",
    )
    if id_choice is None:
        st.warning(
            "No column of the file holds the run's item ids: choose how rows are matched (row order or a column)."
        )
        return
    id_column = None if id_choice == ROW_ORDER else id_choice
    try:
        match = match_labels(
            dataset.frame,
            ctx.items,
            column=column,
            kind=kind,
            scorer_id=ctx.scorer_id,
            id_column=id_column,
            row_labels=[dataset.row_label(i) for i in range(len(dataset.frame))],
            max_score=ctx.scale,
            comment_column=comment_column,
            no_response=ctx.no_response,
        )
    except InvalidInputError as exc:
        st.error(str(exc))
        return
    st.markdown(
        f"**{len(match.labels)} of {match.n_rows} rows give a label**; {len(match.problems)} do not; "
        f"{len(match.unlabelled_items)} of the run's {len(ctx.items)} items get none."
    )
    if match.no_response:
        where = "; ".join(f"{row} (item {md_escape(repr(item_id))})" for row, item_id in match.no_response[:10])
        more = f" and {len(match.no_response) - 10} more" if len(match.no_response) > 10 else ""
        st.warning(
            f"{md_escape(name)}: {len(match.no_response)} row(s) label an item with no response "
            f"(not scored: {outcome_status_label(ScoreStatus.MISSING_INPUT.value)}), "
            f"and are not imported, since there is no answer to label: {where}{more}. The file's other rows are "
            "imported as usual, and no label already stored is changed."
        )
    if dataset.skipped:
        st.warning(
            f"{len(dataset.skipped)} record(s) of the file could not be read at all: "
            + "; ".join(md_escape(str(s)) for s in dataset.skipped[:5])
        )
    if match.problems:
        with st.expander(f"Rows without a label ({len(match.problems)})", expanded=len(match.problems) <= 10):
            st.dataframe(
                pd.DataFrame([{"row": p.row, "key": p.key, "reason": p.reason} for p in match.problems]),
                hide_index=True,
                key=f"{token}_problems",
            )
    conflicts = import_conflicts(ctx.store, ctx.run["id"], match, reviewer=reviewer)
    replace_conflicting = False
    if conflicts:
        st.warning(
            f"{len(conflicts)} row(s) already have a different label from you ({md_escape(reviewer)}). They keep it "
            "unless you choose to replace it; either way the earlier labels stay in the row's history."
        )
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "item_id": ctx.items[c.item_index].item_id,
                        "current label": _label_text(c.existing.human_score, c.existing.human_pass),
                        "given by": f"{c.existing.reviewer} ({c.existing.source})",
                        "in the file": _label_text(c.imported.human_score, c.imported.human_pass),
                    }
                    for c in conflicts
                ]
            ),
            hide_index=True,
            key=f"{token}_conflicts",
        )
        replace_conflicting = (
            st.radio(
                "Rows with a different label",
                ["keep", "replace"],
                format_func={"keep": "Keep the current labels", "replace": "Replace them with the file's"}.get,
                key=f"{token}_conflict_choice",
                horizontal=True,
            )
            == "replace"
        )
    n_import = len(match.labels) - (0 if replace_conflicting else len(conflicts))
    if not reviewer:
        st.caption("Type your name at the top to import: every label records who gave it.")
    if st.button(
        f"Import {n_import} label(s)",
        type="primary",
        key=f"{token}_import",
        disabled=not reviewer or n_import == 0,
        help="Type your name at the top first." if not reviewer else None,
        icon=":material/upload:",
    ):
        try:
            saved = import_labels(
                ctx.store,
                ctx.run["id"],
                match,
                reviewer=reviewer,
                file_name=name,
                max_score=ctx.scale,
                replace_conflicting=replace_conflicting,
            )
        except InvalidInputError as exc:
            st.error(str(exc))
            return
        kept = "" if replace_conflicting or not conflicts else f"; {len(conflicts)} row(s) kept their label"
        same = len(match.labels) - len(saved) - (0 if replace_conflicting else len(conflicts))
        same_text = f"; {same} row(s) already had the same label from you, left as they were" if same else ""
        st.session_state[f"{ctx.key}_imported"] = (
            f"Imported {len(saved)} label(s) from {md_escape(name)}{kept}{same_text}."
        )
        st.rerun()
    done = st.session_state.pop(f"{ctx.key}_imported", None)
    if done:
        st.success(done)
