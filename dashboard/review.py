"""The Review page's views: label a run's results row by row, agreement, judge consistency, import/export.

Keyboard (Streamlit 1.67's native ``st.button(..., shortcut=...)``; the shortcut is shown on
each button): ``J`` next row, ``K`` previous row, ``U`` thumbs up (pass: save and go on),
``D`` thumbs down (fail: save and go on). The score and the comment sit in a form, so
``Enter`` in either saves. Streamlit binds keys to buttons only, so a small script
(:data:`FOCUS_SCRIPT`, ``st.html`` with JavaScript) adds ``S`` to put the cursor in the
score field, ``M`` in the comment field, and ``Esc`` to leave them (``Enter`` saves and
leaves them too); letter shortcuts do nothing while the cursor is in a field, so typing
a comment never triggers them.

Pages call :func:`pick_run`, :func:`pick_scorer` and :func:`pick_threshold`, build a
:class:`ReviewContext` with :func:`load_context`, then one of the ``render_*`` views.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd
import streamlit as st

from scorers import (
    DatasetError,
    EvalItem,
    EvalRunResult,
    InvalidInputError,
    ItemOutcome,
    ScorerError,
    Store,
    create_scorer,
    guess_columns,
    load_dataset,
    load_run,
)
from scorers.analysis.agreement import (
    AgreementReport,
    AgreementRow,
    agreement_report,
    agreement_rows,
    consistency_report,
    human_verdict,
    passes,
    rejudge,
    sample_indexes,
)
from scorers.analysis.labels import (
    Label,
    current_labels,
    export_labelled_run,
    import_labels,
    label_history,
    match_labels,
    parse_verdict,
    save_label,
    scorer_scale,
)
from scorers.catalogue.registry import scorer_spec
from scorers.runs.export import item_texts

from .agreement_charts import calibration_chart, confusion_heatmap, consistency_chart
from .batch import UPLOAD_TYPES, resume_settings, stored_scorer_options
from .results import md_escape, render_outcome
from .run_view import check_judges
from .runs import RunFailure
from .settings import judge_settings

SESSION = {"persist_state": "session"}  # keep the reviewer's choices across pages

REVIEWER_KEY = "review_reviewer"
VIEW_KEY = "review_view"
FILTER_KEY = "review_filter"
VIEWS = ("Review", "Agreement", "Consistency", "Import and export")

FILTERS: dict[str, str] = {
    "all": "All rows",
    "unlabelled": "Unlabelled",
    "labelled": "Labelled",
    "disagreements": "Disagreements",
    "low": "Low judge scores",
}
"""Review filters: key → label. Disagreements: judge verdict ≠ human verdict at the threshold;
low judge scores: scored below the threshold, lowest first."""

SHORTCUTS: dict[str, str] = {"next": "J", "previous": "K", "pass": "U", "fail": "D"}
"""Native Streamlit button shortcuts of the review view."""

FOCUS_KEYS: dict[str, str] = {"s": "review_score_box", "m": "review_comment_box"}
"""Keys of :data:`FOCUS_SCRIPT`: key → the ``st.container`` key whose input it focuses."""

FOCUS_SCRIPT = """
<script>
(() => {
  if (window.__scorerStudioReviewKeys) return;
  window.__scorerStudioReviewKeys = true;
  const boxes = __BOXES__;
  const editable = (el) => el && (el.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName));
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    const ours = editable(target) && target.closest("[class*='st-key-review_']");
    if (ours && event.key === "Escape") {
      target.blur();
      return;
    }
    if (ours && event.key === "Enter") {
      setTimeout(() => target.blur(), 0);  // Streamlit saves on Enter; then the letter keys work again
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || event.shiftKey || editable(target)) return;
    const box = boxes[(event.key || "").toLowerCase()];
    if (!box) return;
    const field = document.querySelector(`.st-key-${box} input`);
    if (!field) return;
    event.preventDefault();
    field.focus();
    field.select();
  });
})();
</script>
""".replace("__BOXES__", json.dumps(FOCUS_KEYS))
"""Focus keys for the score and comment fields (Streamlit binds shortcuts to buttons only)."""

LOW_CONFIDENCE = "fewer than 10 labelled rows: not meaningful yet"


@dataclass(frozen=True)
class ReviewContext:
    """What every view of one run × scorer needs.

    Attributes:
        store: the database.
        run: the run record.
        items: the run's items.
        result: the run's outcomes.
        scorer_id: the scorer under review.
        scorer_name: its display name.
        scale: the top of its scale.
        threshold: the pass threshold on that scale.
        higher_is_better: False for scorers where low scores are good.
        uses_judge: True when the scorer calls an LLM judge.
        outcomes: item index → the scorer's outcome (missing when not scored yet).
        labels: item index → the current label of this scorer's row.
        report: the agreement at ``threshold``.
    """

    store: Store
    run: dict[str, Any]
    items: list[EvalItem]
    result: EvalRunResult
    scorer_id: str
    scorer_name: str
    scale: float
    threshold: float
    higher_is_better: bool
    uses_judge: bool
    outcomes: dict[int, ItemOutcome]
    labels: dict[int, Label]
    report: AgreementReport

    @property
    def key(self) -> str:
        """Prefix of the widget keys of this run × scorer (:func:`review_key`)."""
        return review_key(self.run["id"], self.scorer_id)

    @property
    def position_key(self) -> str:
        """Session-state key of the item index shown in the review view."""
        return f"{self.key}_pos"


def review_key(run_id: str, scorer_id: str) -> str:
    """The prefix of the Review page's widget keys for one run × scorer: ``review_<run>_<8 hex of the scorer id>``.

    A row's form widgets are ``<prefix>_<item index>_score``, ``_verdict``, ``_comment``,
    ``_save``, ``_pass`` and ``_fail``; the navigation buttons ``<prefix>_previous`` and ``_next``.
    """
    return f"review_{run_id}_{hashlib.sha256(scorer_id.encode()).hexdigest()[:8]}"


def _scorer_facts(scorer_id: str, store: Store) -> tuple[str, bool, bool]:
    try:
        spec = scorer_spec(scorer_id, store)
    except ScorerError:
        return scorer_id, True, True
    return spec.name, spec.higher_is_better, spec.uses_judge


def scorer_name(scorer_id: str, store: Store) -> str:
    """The catalogue name of a scorer (its id when the catalogue no longer has it)."""
    return _scorer_facts(scorer_id, store)[0]


def load_context(store: Store, run_id: str, scorer_id: str, threshold: float) -> ReviewContext:
    """Read the run, its outcomes for ``scorer_id``, the current labels, and measure agreement.

    Raises:
        KeyError: no such run.
    """
    run, items, result = load_run(store, run_id)
    name, higher_is_better, uses_judge = _scorer_facts(scorer_id, store)
    scale = scorer_scale(run, scorer_id, store)
    labels = {index: label for (index, _), label in current_labels(store, run_id, scorer_id).items()}
    outcomes = {o.item_index: o for o in result.outcomes if o.scorer_id == scorer_id}
    rows = agreement_rows(result, {(i, scorer_id): label for i, label in labels.items()}, scorer_id)
    report = agreement_report(rows, threshold=threshold, scale=scale, higher_is_better=higher_is_better)
    return ReviewContext(
        store,
        run,
        items,
        result,
        scorer_id,
        name,
        scale,
        threshold,
        higher_is_better,
        uses_judge,
        outcomes,
        labels,
        report,
    )


# ---- pure helpers (tested without Streamlit)


def review_queue(
    n_items: int,
    outcomes: Mapping[int, ItemOutcome],
    labels: Mapping[int, Label],
    mode: str,
    *,
    threshold: float,
    higher_is_better: bool = True,
) -> list[int]:
    """The item indexes a filter shows, in review order.

    Args:
        n_items: items in the run.
        outcomes: item index → the scorer's outcome.
        labels: item index → current label.
        mode: a key of :data:`FILTERS`.
        threshold: the pass threshold.
        higher_is_better: the scorer's direction.

    Returns:
        Item order, except ``"low"``: scored rows below the threshold, lowest score first.

    Raises:
        ValueError: an unknown mode.
    """
    indexes = range(n_items)
    if mode == "all":
        return list(indexes)
    if mode == "unlabelled":
        return [i for i in indexes if i not in labels]
    if mode == "labelled":
        return [i for i in indexes if i in labels]
    if mode == "disagreements":
        out = []
        for i in indexes:
            label, outcome = labels.get(i), outcomes.get(i)
            if label is None or outcome is None or outcome.score is None:
                continue
            row = AgreementRow(i, outcome.item_id, outcome.score, label.human_score, label.human_pass)
            verdict = human_verdict(row, threshold, higher_is_better=higher_is_better)
            if verdict is not None and verdict != passes(outcome.score, threshold, higher_is_better=higher_is_better):
                out.append(i)
        return out
    if mode == "low":
        low = [i for i in indexes if (o := outcomes.get(i)) is not None and o.score is not None and o.score < threshold]
        return sorted(low, key=lambda i: (outcomes[i].score, i))
    raise ValueError(f"unknown review filter {mode!r}; use one of {', '.join(FILTERS)}")


def queue_order(outcomes: Mapping[int, ItemOutcome], mode: str) -> Callable[[int], tuple[float, int]]:
    """The sort key of :func:`review_queue` for ``mode`` (defined for every item, queued or not)."""
    if mode == "low":

        def by_score(i: int) -> tuple[float, int]:
            o = outcomes.get(i)
            return (o.score if o is not None and o.score is not None else math.inf, i)

        return by_score
    return lambda i: (0.0, i)


def step(queue: Sequence[int], current: int | None, direction: int, key: Callable[[int], Any]) -> int | None:
    """The queued item after (``direction`` = 1) or before (−1) ``current``, or None at an end.

    ``current`` need not be queued (a row just labelled leaves the "Unlabelled" queue):
    its place in the order still decides what comes next.

    >>> step([1, 3, 5], 3, 1, lambda i: i), step([1, 3, 5], 2, 1, lambda i: i), step([1, 3, 5], 1, -1, lambda i: i)
    (5, 3, None)
    """
    if not queue:
        return None
    if current is None:
        return queue[0] if direction > 0 else queue[-1]
    if current in queue:
        j = list(queue).index(current) + direction
        return queue[j] if 0 <= j < len(queue) else None
    k = key(current)
    if direction > 0:
        return next((q for q in queue if key(q) > k), None)
    return next((q for q in reversed(queue) if key(q) < k), None)


def resolve_position(queue: Sequence[int], current: int | None, key: Callable[[int], Any]) -> int | None:
    """The row to show: ``current`` when queued, else the next queued one, else the last; None for an empty queue."""
    if not queue:
        return None
    if current in queue:
        return current
    following = step(queue, current, 1, key)
    return following if following is not None else queue[-1]


def fmt_number(value: float | None, digits: int = 3) -> str:
    """A statistic for a metric: ``"—"`` when undefined.

    >>> fmt_number(0.4), fmt_number(None)
    ('0.400', '—')
    """
    return "—" if value is None else f"{value:.{digits}f}"


def fmt_share(value: float | None) -> str:
    """A share as a percentage, ``"—"`` when undefined.

    >>> fmt_share(0.75)
    '75%'
    """
    return "—" if value is None else f"{value:.0%}"


def verdict_text(value: bool | None) -> str:
    """``"pass"``, ``"fail"`` or ``"—"``."""
    return "—" if value is None else ("pass" if value else "fail")


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


def reviewer_name() -> str:
    """The reviewer's name, typed once per browser session (kept across pages)."""
    name = st.text_input(
        "Your name",
        key=REVIEWER_KEY,
        placeholder="who labels (recorded with every label)",
        help="Typed once per browser session; every label you save records it.",
        **SESSION,
    )
    return (name or "").strip()


def pick_run(store: Store) -> str | None:
    """A run chosen from the store (newest first), or None when there is none."""
    runs = store.list_runs()
    if not runs:
        st.info("No runs yet. Score a dataset on the Batch page; its run can then be reviewed here.")
        return None
    by_id = {run["id"]: run for run in runs}
    if st.session_state.get("review_run") not in by_id:
        st.session_state.pop("review_run", None)
    return st.selectbox(
        "Run",
        list(by_id),
        key="review_run",
        format_func=lambda rid: f"{by_id[rid]['name']} · {by_id[rid]['status']} · {rid}",
        **SESSION,
    )


def pick_scorer(store: Store, run: Mapping[str, Any]) -> str | None:
    """One of the run's scorers."""
    ids = [s["id"] for s in run.get("scorers") or []]
    if not ids:
        return None
    key = f"review_scorer_{run['id']}"
    if st.session_state.get(key) not in ids:
        st.session_state.pop(key, None)
    return st.selectbox("Scorer", ids, key=key, format_func=lambda sid: scorer_name(sid, store), **SESSION)


def pick_threshold(store: Store, run: Mapping[str, Any], scorer_id: str) -> float:
    """The pass threshold on the scorer's scale (default: half the scale)."""
    scale = scorer_scale(run, scorer_id, store)
    higher = _scorer_facts(scorer_id, store)[1]
    return float(
        st.number_input(
            f"Pass threshold (0–{scale:g})",
            min_value=0.0,
            max_value=float(scale),
            value=scale / 2,
            step=scale / 20,
            format="%.3g",
            key=f"{review_key(run['id'], scorer_id)}_threshold",
            help=(
                "The judge passes a row when its score is at least this; "
                if higher
                else "Lower is better for this scorer: the judge passes a row when its score is at most this; "
            )
            + "a person passes it when they said pass, or when their score passes the same test.",
            **SESSION,
        )
    )


# ---- review view


def _go(position_key: str, index: int | None) -> None:
    if index is not None:
        st.session_state[position_key] = index


def open_row(position_key: str, index: int) -> None:
    """Show item ``index`` in the review view (a button callback: switches the view and clears the filter)."""
    st.session_state[position_key] = index
    st.session_state[VIEW_KEY] = "Review"
    st.session_state[FILTER_KEY] = "all"


def render_agreement_strip(ctx: ReviewContext) -> None:
    """Three numbers that move as rows are labelled: labelled rows, agreement rate, Cohen's kappa."""
    report = ctx.report
    columns = st.columns(4)
    columns[0].metric("Labelled", f"{len(ctx.labels)} of {len(ctx.items)}")
    columns[1].metric(
        "Agreement",
        fmt_share(report.agreement_rate),
        help=f"Share of labelled rows where the judge's verdict at {ctx.threshold:g} matches the person's.",
    )
    columns[2].metric("Cohen's κ", fmt_number(report.kappa.value), help=report.kappa.reason or None)
    columns[3].metric(
        "Judge vs human MAE", fmt_number(report.mae), help="Mean |judge − human| of rows with a human score."
    )
    if report.n_labelled and not report.meaningful:
        st.caption(f"{report.n_labelled} labelled row(s) the judge scored: {LOW_CONFIDENCE}.")


def _render_texts(item: EvalItem) -> None:
    texts = item_texts(item)
    for label, field in (
        ("User prompt", "input"),
        ("System message", "system"),
        ("Response", "output"),
        ("Ground truth", "ground_truth"),
    ):
        if texts[field]:
            st.markdown(f"**{label}**")
            st.code(texts[field], language=None, wrap_lines=True)
    for name, value in item.groups.items():
        st.caption(md_escape(f"{name}: {value}"))


def _judge_line(ctx: ReviewContext, outcome: ItemOutcome | None) -> str:
    if outcome is None:
        return "Judge: not scored yet (the run stopped before this row)."
    if outcome.score is None:
        return f"Judge: not scored ({outcome.status.value.replace('_', ' ')})."
    verdict = passes(outcome.score, ctx.threshold, higher_is_better=ctx.higher_is_better)
    return f"Judge: {outcome.score:.3g} of {ctx.scale:g} → {verdict_text(verdict)} at {ctx.threshold:g}"


def _save(
    ctx: ReviewContext,
    index: int,
    reviewer: str,
    score: float | None,
    verdict: bool | None,
    comment: str,
    advance: bool,
    mode: str,
) -> None:
    try:
        save_label(
            ctx.store,
            ctx.run["id"],
            index,
            ctx.scorer_id,
            reviewer=reviewer,
            human_score=score,
            human_pass=verdict,
            comment=comment,
            max_score=ctx.scale,
        )
    except InvalidInputError as exc:
        st.error(str(exc))
        return
    if advance:
        labels = {i: label for (i, _), label in current_labels(ctx.store, ctx.run["id"], ctx.scorer_id).items()}
        queue = review_queue(
            len(ctx.items), ctx.outcomes, labels, mode, threshold=ctx.threshold, higher_is_better=ctx.higher_is_better
        )
        _go(ctx.position_key, step(queue, index, 1, queue_order(ctx.outcomes, mode)))
    for field in ("score", "verdict", "comment"):  # the row's form shows the saved label next time
        st.session_state.pop(f"{ctx.key}_{index}_{field}", None)
    st.session_state[f"{ctx.key}_saved"] = f"Saved your label of {ctx.items[index].item_id}."
    st.rerun()


def _render_label_form(ctx: ReviewContext, index: int, reviewer: str, mode: str) -> None:
    current = ctx.labels.get(index)
    row_key = f"{ctx.key}_{index}"
    advance = st.checkbox("After saving, go to the next row", value=True, key=f"{ctx.key}_advance", **SESSION)
    if not reviewer:
        st.caption("Type your name at the top to save labels: every label records who gave it.")
    with st.form(f"{row_key}_form", border=True, enter_to_submit=True):
        left, right = st.columns([1, 1])
        with left.container(key=FOCUS_KEYS["s"]):
            score = st.number_input(
                f"Your score (0–{ctx.scale:g}) · S",
                min_value=0.0,
                max_value=float(ctx.scale),
                value=current.human_score if current else None,
                step=ctx.scale / 100,
                format="%.3g",
                placeholder="none",
                key=f"{row_key}_score",
                help="Optional, on the scorer's scale. S puts the cursor here; Enter saves; Esc leaves the field.",
            )
        choices = ["none", "pass", "fail"]
        verdict = right.radio(
            "Your verdict",
            choices,
            index=choices.index(verdict_text(current.human_pass).replace("—", "none")) if current else 0,
            horizontal=True,
            key=f"{row_key}_verdict",
            help="Used by Save; the thumbs buttons set it themselves.",
        )
        with st.container(key=FOCUS_KEYS["m"]):
            comment = st.text_input(
                "Comment · M",
                value=current.comment if current else "",
                key=f"{row_key}_comment",
                placeholder="why (optional)",
                help="M puts the cursor here; Enter saves; Esc leaves the field.",
            )
        b1, b2, b3 = st.columns(3)
        disabled = not reviewer
        why = "Type your name at the top first." if disabled else None
        save = b1.form_submit_button(
            "Save",
            type="primary",
            icon=":material/save:",
            key=f"{row_key}_save",
            disabled=disabled,
            help=why or "Save the score, verdict and comment (Enter).",
        )
        up = b2.form_submit_button(
            "Pass",
            icon=":material/thumb_up:",
            key=f"{row_key}_pass",
            shortcut=SHORTCUTS["pass"],
            disabled=disabled,
            help=why or "Thumbs up: save as pass (with the score and comment typed).",
        )
        down = b3.form_submit_button(
            "Fail",
            icon=":material/thumb_down:",
            key=f"{row_key}_fail",
            shortcut=SHORTCUTS["fail"],
            disabled=disabled,
            help=why or "Thumbs down: save as fail (with the score and comment typed).",
        )
    if save or up or down:
        chosen = True if up else False if down else {"pass": True, "fail": False}.get(verdict)
        _save(ctx, index, reviewer, score, chosen, comment or "", advance, mode)


def _render_history(ctx: ReviewContext, index: int) -> None:
    history = label_history(ctx.store, ctx.run["id"], index, ctx.scorer_id)
    if not history:
        st.caption("No label yet.")
        return
    latest = history[-1]
    st.markdown(
        md_escape(
            f"Current label: {verdict_text(latest.human_pass)}"
            + (f", score {latest.human_score:g}" if latest.human_score is not None else "")
            + f" by {latest.reviewer}, {latest.created_at[:16].replace('T', ' ')} UTC"
        )
        + (f" — “{md_escape(latest.comment)}”" if latest.comment else "")
    )
    if latest.judge_score is not None and ctx.outcomes.get(index) and ctx.outcomes[index].score != latest.judge_score:
        st.caption(f"The judge's score was {latest.judge_score:g} when this was labelled; the row was re-scored since.")
    with st.expander(f"History of this label ({len(history)} save{'s' if len(history) != 1 else ''})"):
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "saved at (UTC)": h.created_at.replace("T", " ")[:19],
                        "reviewer": h.reviewer,
                        "score": h.human_score,
                        "verdict": verdict_text(h.human_pass),
                        "comment": h.comment,
                        "judge score then": h.judge_score,
                        "source": h.source,
                    }
                    for h in reversed(history)
                ]
            ),
            hide_index=True,
            key=f"{ctx.key}_{index}_history",
        )


def render_review(ctx: ReviewContext, reviewer: str) -> None:
    """The review view: filters, the agreement strip, one row with its texts, breakdown and label form."""
    st.html(FOCUS_SCRIPT, unsafe_allow_javascript=True)
    mode = st.radio("Show", list(FILTERS), format_func=FILTERS.get, horizontal=True, key=FILTER_KEY, **SESSION)
    render_agreement_strip(ctx)
    saved = st.session_state.pop(f"{ctx.key}_saved", None)
    if saved:
        st.toast(saved, icon=":material/check:")
    queue = review_queue(
        len(ctx.items), ctx.outcomes, ctx.labels, mode, threshold=ctx.threshold, higher_is_better=ctx.higher_is_better
    )
    order = queue_order(ctx.outcomes, mode)
    index = resolve_position(queue, st.session_state.get(ctx.position_key), order)
    if index is None:
        empty = {
            "unlabelled": f"Every one of the {len(ctx.items)} rows is labelled.",
            "labelled": "No row is labelled yet.",
            "disagreements": f"No labelled row where the judge and the person disagree at {ctx.threshold:g}.",
            "low": f"No scored row is below {ctx.threshold:g}.",
        }
        st.info(empty.get(mode, "The run has no items."))
        return
    st.session_state[ctx.position_key] = index
    item = ctx.items[index]
    previous, following = step(queue, index, -1, order), step(queue, index, 1, order)
    head, prev_col, next_col = st.columns([4, 1, 1], vertical_alignment="center")
    head.markdown(
        f"**Row {queue.index(index) + 1} of {len(queue)}** ({FILTERS[mode].lower()}) · item "
        f"`{md_escape(item.item_id)}` (#{index + 1} of {len(ctx.items)})"
    )
    prev_col.button(
        "Previous",
        key=f"{ctx.key}_previous",
        icon=":material/arrow_back:",
        shortcut=SHORTCUTS["previous"],
        on_click=_go,
        args=(ctx.position_key, previous),
        disabled=previous is None,
    )
    next_col.button(
        "Next",
        key=f"{ctx.key}_next",
        icon=":material/arrow_forward:",
        shortcut=SHORTCUTS["next"],
        on_click=_go,
        args=(ctx.position_key, following),
        disabled=following is None,
    )
    st.caption(
        "Keys: J next · K previous · U pass · D fail · S score field · M comment · Enter saves · "
        "Esc leaves a field (letter keys do nothing while the cursor is in a field)."
    )
    outcome = ctx.outcomes.get(index)
    texts_col, label_col = st.columns([3, 2])
    with texts_col:
        _render_texts(item)
    with label_col:
        st.markdown(f"**{md_escape(_judge_line(ctx, outcome))}**")
        st.caption("Your label is stored apart: the judge's score and breakdown are kept as they are.")
        _render_label_form(ctx, index, reviewer, mode)
        _render_history(ctx, index)
    with st.expander(f"The judge's breakdown ({ctx.scorer_name})", expanded=True):
        if outcome is None:
            st.info("Not scored yet: the run stopped before this row. Resume the run on the History page.")
        elif outcome.result is not None:
            render_outcome(outcome.result, key=f"{ctx.key}_{index}_outcome")
        else:
            render_outcome(
                RunFailure(outcome.error or "not scored", outcome.status, outcome.raw_reply),
                key=f"{ctx.key}_{index}_outcome",
            )


# ---- agreement view


def render_agreement(ctx: ReviewContext, *, top: int = 10) -> None:
    """The agreement panel: the numbers, the confusion matrix, calibration, and the largest disagreements."""
    report = ctx.report
    if report.n_labelled == 0:
        st.info(
            f"No labelled row of {ctx.scorer_name} has a judge score yet. Label rows in the Review view, "
            "or import labels made elsewhere."
        )
        return
    if not report.meaningful:
        st.warning(
            f"Only {report.n_labelled} labelled row(s): with fewer than 10 the numbers below are not meaningful yet."
        )
    columns = st.columns(6)
    columns[0].metric(
        "Labelled rows",
        report.n_labelled,
        help=f"{report.n_verdicts} with a verdict, {report.n_scores} with a human score.",
    )
    columns[1].metric(
        "Agreement rate",
        fmt_share(report.agreement_rate),
        help=f"Verdicts that match at the threshold {ctx.threshold:g}.",
    )
    columns[2].metric(
        "Cohen's κ",
        fmt_number(report.kappa.value),
        help=report.kappa.reason
        or (
            f"(p_o − p_e) / (1 − p_e) with p_o = {fmt_number(report.kappa.p_observed)} and "
            f"p_e = {fmt_number(report.kappa.p_expected)}"
        ),
    )
    columns[3].metric(
        "Spearman ρ",
        fmt_number(report.spearman.value),
        help=report.spearman.reason
        or (
            f"Rank correlation of {report.spearman.n} judge and human scores (p = {fmt_number(report.spearman.p_value)})"
        ),
    )
    columns[4].metric(
        "Pearson r",
        fmt_number(report.pearson.value),
        help=report.pearson.reason
        or (
            f"Linear correlation of {report.pearson.n} judge and human scores (p = {fmt_number(report.pearson.p_value)})"
        ),
    )
    columns[5].metric(
        "Mean absolute error",
        fmt_number(report.mae),
        help=f"Mean |judge − human| on the 0–{ctx.scale:g} scale, over rows with a human score.",
    )
    for note in report.notes[0 if report.meaningful else 1 :]:
        st.caption(md_escape(note))
    left, right = st.columns(2)
    left.plotly_chart(confusion_heatmap(report.confusion), key=f"{ctx.key}_confusion")
    right.plotly_chart(
        calibration_chart(report.calibration, scale=ctx.scale, threshold=ctx.threshold), key=f"{ctx.key}_calibration"
    )
    st.markdown("**Where the judge and people disagree most** (|judge − human|, largest first)")
    st.caption(
        "A label without a score counts as the end of the scale it points at (pass → best, fail → worst). "
        "Open a row to see it in the Review view."
    )
    shown = report.disagreements[:top]
    for d in shown:
        row = d.row
        human = f"{d.human_value:.3g}" if row.human_score is not None else verdict_text(d.human_pass)
        cols = st.columns([5, 2, 2, 1, 1.5], vertical_alignment="center")
        cols[0].markdown(f"`{md_escape(row.item_id)}` — {md_escape(_excerpt(ctx.items[row.item_index]))}")
        cols[1].markdown(f"judge **{row.judge_score:.3g}** ({verdict_text(d.judge_pass)})")
        cols[2].markdown(f"human **{md_escape(human)}** ({verdict_text(d.human_pass)})")
        cols[3].markdown(f"gap **{d.gap:.3g}**")
        cols[4].button(
            "Open",
            key=f"{ctx.key}_open_{row.item_index}",
            on_click=open_row,
            args=(ctx.position_key, row.item_index),
            icon=":material/open_in_new:",
            help="Show this row in the Review view.",
        )
    if len(report.disagreements) > top:
        st.caption(f"The {top} largest of {len(report.disagreements)} labelled rows.")


def _excerpt(item: EvalItem, limit: int = 80) -> str:
    text = item_texts(item)["output"] or item_texts(item)["input"] or ""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# ---- consistency view


def _consistency_key(ctx: ReviewContext) -> str:
    return f"{ctx.key}_consistency"


def render_consistency(ctx: ReviewContext) -> None:
    """Re-judge a sample of rows several times (cache bypassed, nothing stored) and show the spread."""
    if not ctx.uses_judge:
        st.info(f"{ctx.scorer_name} uses no judge: its scores are computed in code and never vary.")
        return
    scored = sorted(i for i, o in ctx.outcomes.items() if o.score is not None)
    if not scored:
        st.info("No row of this scorer was scored yet; nothing to re-judge.")
        return
    st.caption(
        "Asks the judge again about a sample of rows, several times each, with the cache bypassed. "
        "The run's stored results are never changed: the new scores live in this browser session only."
    )
    c1, c2, c3, c4 = st.columns(4)
    n_rows = c1.number_input(
        "Rows to re-judge",
        min_value=1,
        max_value=len(scored),
        value=min(5, len(scored)),
        step=1,
        key=f"{ctx.key}_c_rows",
    )
    repeats = c2.number_input("Times each", min_value=2, max_value=20, value=3, step=1, key=f"{ctx.key}_c_repeats")
    temperature = c3.number_input(
        "Temperature",
        min_value=0.0,
        max_value=2.0,
        value=float(st.session_state.get("judge_temperature", 0.0)),
        step=0.1,
        key=f"{ctx.key}_c_temperature",
        help="The judge's sampling temperature for these calls (default: the sidebar's).",
    )
    sample_seed = c4.number_input(
        "Sample seed",
        min_value=0,
        value=0,
        step=1,
        key=f"{ctx.key}_c_seed",
        help="Which rows are drawn (the same seed draws the same rows).",
    )
    keep_seed = st.checkbox(
        "Send the run's sampling seed with every call",
        value=False,
        key=f"{ctx.key}_c_keep_seed",
        help="Off: no seed is sent, so each call can differ. On: servers that honour seeds may repeat themselves.",
    )
    indexes = sample_indexes(scored, int(n_rows), seed=int(sample_seed))
    per_run = _scorer_calls(ctx)
    st.caption(
        f"{len(indexes) * int(repeats) * per_run} judge call(s): {len(indexes)} row(s) × {int(repeats)} "
        f"time(s) × {per_run} call(s) per score."
    )
    if st.button("Re-judge", type="primary", key=f"{ctx.key}_c_run", icon=":material/replay:"):
        _run_consistency(ctx, indexes, int(repeats), float(temperature), keep_seed)
    stored = st.session_state.get(_consistency_key(ctx))
    if stored is None:
        return
    params, repetitions = stored
    report = consistency_report(
        repetitions,
        threshold=ctx.threshold,
        item_ids={i: ctx.items[i].item_id for i in repetitions},
        stored_scores={i: ctx.outcomes[i].score if i in ctx.outcomes else None for i in repetitions},
        higher_is_better=ctx.higher_is_better,
    )
    st.markdown(f"**Last re-judging:** {md_escape(params)}")
    m = st.columns(4)
    m[0].metric("Rows re-judged", len(report.rows))
    m[1].metric(
        "Verdict flips",
        fmt_share(report.flip_share),
        help=f"Share of rows whose repetitions give both pass and fail at {ctx.threshold:g} "
        f"({report.n_compared} rows with at least 2 scored repetitions).",
    )
    m[2].metric(
        "Mean std", fmt_number(report.mean_std), help="Mean over rows of the scores' sample standard deviation."
    )
    m[3].metric(
        "Failed calls",
        sum(r.n_failed for r in report.rows),
        help="Repetitions that were not scored (counted apart, never as 0).",
    )
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "item_id": r.item_id,
                    "stored score": r.stored_score,
                    "scores": ", ".join(f"{s:g}" for s in r.scores),
                    "mean": r.mean,
                    "std": r.std,
                    "min": r.min,
                    "max": r.max,
                    "flips": r.flips,
                    "failed": r.n_failed,
                }
                for r in report.rows
            ]
        ),
        hide_index=True,
        key=f"{ctx.key}_c_table",
        column_config={c: st.column_config.NumberColumn(format="%.3f") for c in ("mean", "std", "min", "max")},
    )
    st.plotly_chart(consistency_chart(report.rows, threshold=ctx.threshold), key=f"{ctx.key}_c_chart")


def _scorer_calls(ctx: ReviewContext) -> int:
    try:
        return max(1, scorer_spec(ctx.scorer_id, ctx.store).judge_calls)
    except ScorerError:
        return 1


def _run_consistency(ctx: ReviewContext, indexes: list[int], repeats: int, temperature: float, keep_seed: bool) -> None:
    try:
        base = resume_settings(ctx.run, judge_settings())
        settings = replace(base, temperature=temperature, seed=base.seed if keep_seed else None)
        options = stored_scorer_options(ctx.run).get(ctx.scorer_id, {})
        scorer = create_scorer(ctx.scorer_id, options, settings=settings, cache=None, store=ctx.store)
    except ScorerError as exc:
        st.error(str(exc))
        return
    problem = check_judges([scorer])
    if problem:
        st.error(problem)
        return
    concurrency = int((ctx.run.get("config") or {}).get("concurrency") or 4)
    with st.spinner(f"Asking the judge {len(indexes) * repeats} time(s)…"):
        repetitions = rejudge(scorer, ctx.items, indexes, repeats=repeats, concurrency=min(concurrency, 8))
    params = (
        f"{len(indexes)} row(s) × {repeats}, model {settings.model_name}, temperature {temperature:g}, "
        + (f"seed {settings.seed}" if settings.seed is not None else "no seed")
        + ", cache bypassed"
    )
    st.session_state[_consistency_key(ctx)] = (params, repetitions)


# ---- import and export view


def render_import_export(ctx: ReviewContext, reviewer: str) -> None:
    """Import labels from a dataset column; export the results with their labels."""
    st.subheader("Import labels made elsewhere")
    st.caption(
        "Upload the dataset with a column of human labels (a score on the scorer's scale, or pass/fail). "
        "Rows are matched to the run's items by an id column or by row order; every row that gives no "
        "label is listed with the reason. Imported labels are added to each row's history."
    )
    uploaded = st.file_uploader("Dataset with labels", type=list(UPLOAD_TYPES), key=f"{ctx.key}_upload")
    if uploaded is not None:
        _render_import(ctx, reviewer, uploaded.getvalue(), uploaded.name)
    st.subheader("Export results with labels")
    st.caption(
        "One row per item and scorer with the judge's score kept and the current label's columns joined: "
        "human_score, human_pass, human_comment, reviewer, labelled_at, label_source, label_edits, "
        "judge_score_at_label. CSV cells a spreadsheet would run as a formula are prefixed with '."
    )
    left, right = st.columns(2)
    stem = f"labels-{ctx.run['id']}"
    for column, fmt, label, mime in (
        (left, "csv", "CSV", "text/csv"),
        (right, "jsonl", "JSON Lines", "application/x-ndjson"),
    ):
        column.download_button(
            label,
            data=export_labelled_run(ctx.store, ctx.result, ctx.items, fmt),
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
    id_guess = guess_columns(columns).get("id")
    match_options: list[str | None] = [None, *columns]
    id_column = c3.selectbox(
        "Match rows by",
        match_options,
        index=match_options.index(id_guess) if id_guess in columns else 0,
        format_func=lambda c: "row order" if c is None else f"id column: {c}",
        key=f"{token}_id",
    )
    comment_options: list[str | None] = [None, *[c for c in columns if c != column]]
    comment_column = c4.selectbox(
        "Comments column (optional)",
        comment_options,
        format_func=lambda c: "— none —" if c is None else c,
        key=f"{token}_comment",
    )
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
        )
    except InvalidInputError as exc:
        st.error(str(exc))
        return
    st.markdown(
        f"**{len(match.labels)} of {match.n_rows} rows give a label**; {len(match.problems)} do not; "
        f"{len(match.unlabelled_items)} of the run's {len(ctx.items)} items get none."
    )
    if dataset.skipped:
        st.warning(
            f"{len(dataset.skipped)} record(s) of the file could not be read at all: "
            + "; ".join(str(s) for s in dataset.skipped[:5])
        )
    if match.problems:
        with st.expander(f"Rows without a label ({len(match.problems)})", expanded=len(match.problems) <= 10):
            st.dataframe(
                pd.DataFrame([{"row": p.row, "key": p.key, "reason": p.reason} for p in match.problems]),
                hide_index=True,
                key=f"{token}_problems",
            )
    if not reviewer:
        st.caption("Type your name at the top to import: every label records who gave it.")
    if st.button(
        f"Import {len(match.labels)} label(s)",
        type="primary",
        key=f"{token}_import",
        disabled=not reviewer or not match.labels,
        help="Type your name at the top first." if not reviewer else None,
        icon=":material/upload:",
    ):
        try:
            saved = import_labels(
                ctx.store, ctx.run["id"], match, reviewer=reviewer, file_name=name, max_score=ctx.scale
            )
        except InvalidInputError as exc:
            st.error(str(exc))
            return
        st.session_state[f"{ctx.key}_imported"] = f"Imported {len(saved)} label(s) from {name}."
        st.rerun()
    done = st.session_state.pop(f"{ctx.key}_imported", None)
    if done:
        st.success(done)
