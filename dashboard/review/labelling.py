"""The Review page's labelling view: step through a run's results and label them.

Keyboard (Streamlit 1.67's native ``st.button(..., shortcut=...)``; the shortcut is shown on
each button): ``J`` next row, ``K`` previous row, ``U`` thumbs up (pass: save), ``D`` thumbs down
(fail: save); with "After saving, go to the next row" (on by default) every save goes to the next row,
and the key legend says so. The score and the comment sit in a form, so
``Enter`` in either saves. Streamlit binds keys to buttons only, so a small script
(:data:`FOCUS_SCRIPT`, ``st.html`` with JavaScript) adds ``S`` to put the cursor in the
score field, ``M`` in the comment field, and ``Esc`` to leave them (``Enter`` saves and
leaves them too); letter shortcuts do nothing while the cursor is in a field, so typing
a comment never triggers them.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from scorers import (
    EvalItem,
    InvalidInputError,
    ItemOutcome,
)
from scorers.analysis.agreement import (
    AgreementRow,
    human_verdict,
    passes,
)
from scorers.analysis.labels import (
    Label,
    current_labels,
    label_history,
    lacks_response,
    reviewer_labels,
    save_label,
)
from scorers.analysis.pairwise_runs import order_flips_by_item, stored_pairwise
from scorers.analysis.uncertainty import JudgeDoubt, judge_doubts, pooled_repetitions, stored_rejudges
from scorers.core.base import decimal_text
from scorers.core.errors import ScoreStatus, outcome_status_label
from scorers.runs.export import item_texts

from ..results import md_escape, render_outcome
from ..run_explorer import render_item_texts
from ..runs import RunFailure
from .context import (
    FILTER_KEY,
    LOW_CONFIDENCE,
    SESSION,
    ReviewContext,
    fmt_number,
    fmt_share,
    verdict_text,
)

FILTERS: dict[str, str] = {
    "all": "All rows",
    "unlabelled": "Unlabelled",
    "labelled": "Labelled",
    "disagreements": "Disagreements",
    "low": "Low judge scores",
    "uncertain": "Mine: judge least sure first",
    "random": "Mine: random order",
}
"""Review filters: key → label. Disagreements: judge verdict ≠ human verdict at the threshold;
low judge scores: scored below the threshold, lowest first. The two "Mine" queues hold the
rows this reviewer has not labelled yet: judge least sure first (:data:`UNCERTAIN_ORDER`), or in
a random order of their own (seeded by their name), so that a calibration sample is not biased
by the judge."""

UNCERTAIN_ORDER = (
    "Least sure first: rows whose verdict flipped when the judge was asked again come first, the highest "
    "share of flips first (re-judged repetitions that gave the other verdict, from the Consistency view, "
    "pooled with pairwise judgings on Compare whose preference changed when the order was swapped); then "
    "the score nearest the pass threshold. Rows never judged again count as 0 flips."
)
"""The "judge least sure first" order in words (:mod:`scorers.analysis.uncertainty`)."""

NO_RESPONSE_LEFT_OUT = (
    "{n} row(s) with no response (not scored: " + outcome_status_label(ScoreStatus.MISSING_INPUT.value) + ") are left "
    "out: there is no answer to label. "
    "They are under All rows; fix the dataset's response and score it again to label it."
)
"""Why the queues of rows to label leave out the rows with no response (``n``: how many)."""

SHORTCUTS: dict[str, str] = {"next": "J", "previous": "K", "pass": "U", "fail": "D"}
"""Native Streamlit button shortcuts of the review view."""

LABEL_BUTTONS: tuple[tuple[str, str, str, str], ...] = (
    ("save", "Save", ":material/save:", "Save the score, verdict and comment (Enter)."),
    ("pass", "Pass", ":material/thumb_up:", "Thumbs up: save as pass (with the score and comment typed)."),
    ("fail", "Fail", ":material/thumb_down:", "Thumbs down: save as fail (with the score and comment typed)."),
)
"""The label form's buttons: action (the widget key's suffix), label, icon, help."""

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


def review_queue(
    n_items: int,
    outcomes: Mapping[int, ItemOutcome],
    labels: Mapping[int, Label],
    mode: str,
    *,
    threshold: float,
    higher_is_better: bool = True,
    mine: Mapping[int, Label] | None = None,
    reviewer: str = "",
    doubts: Mapping[int, JudgeDoubt] | None = None,
    no_response: Collection[int] = frozenset(),
) -> list[int]:
    """The item indexes a filter shows, in review order.

    Args:
        n_items: items in the run.
        outcomes: item index → the scorer's outcome.
        labels: item index → current label.
        mode: a key of :data:`FILTERS`.
        threshold: the pass threshold.
        higher_is_better: the scorer's direction.
        mine: item index → this reviewer's own label (the ``"uncertain"`` and ``"random"`` queues).
        reviewer: the reviewer's name (seeds the ``"random"`` order).
        doubts: item index → the judge's doubt (:func:`load_doubts`), for ``"uncertain"``;
            None: from the scores alone (nearest the threshold first).
        no_response: item indexes with no response (:func:`~scorers.analysis.labels.lacks_response`): they
            cannot be labelled, so the queues of rows to label (``"unlabelled"``, ``"uncertain"``, ``"random"``)
            leave them out.

    Returns:
        Item order, except ``"low"``: scored rows below the threshold, lowest score first;
        ``"uncertain"``: scored rows the reviewer has not labelled, in :attr:`JudgeDoubt.key`
        order (:data:`UNCERTAIN_ORDER`); ``"random"``: rows the reviewer has not labelled,
        shuffled with a seed from their name.

    Raises:
        ValueError: an unknown mode.
    """
    indexes = range(n_items)
    if mode == "all":
        return list(indexes)
    if mode == "unlabelled":
        return [i for i in indexes if i not in labels and i not in no_response]
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
    if mode in ("uncertain", "random"):
        todo = [i for i in indexes if i not in (mine or {}) and i not in no_response]
        if mode == "uncertain":
            todo = [i for i in todo if (o := outcomes.get(i)) is not None and o.score is not None]
        return sorted(todo, key=queue_order(outcomes, mode, threshold=threshold, reviewer=reviewer, doubts=doubts))
    raise ValueError(f"unknown review filter {mode!r}; use one of {', '.join(FILTERS)}")


def queue_order(
    outcomes: Mapping[int, ItemOutcome],
    mode: str,
    *,
    threshold: float = 0.0,
    reviewer: str = "",
    doubts: Mapping[int, JudgeDoubt] | None = None,
) -> Callable[[int], tuple[float, ...]]:
    """The sort key of :func:`review_queue` for ``mode`` (defined for every item, queued or not)."""
    if mode == "uncertain":
        known = doubts if doubts is not None else judge_doubts(_scores(outcomes), threshold=threshold)
        return lambda i: known[i].key if i in known else (0.0, math.inf, i)
    if mode == "random":
        # A shuffle of the reviewer's own: each row's rank is a hash of the name and the row.
        return lambda i: (float(int(hashlib.sha256(f"{reviewer}\0{i}".encode()).hexdigest()[:12], 16)), i)
    if mode == "low":

        def by_score(i: int) -> tuple[float, int]:
            o = outcomes.get(i)
            return (o.score if o is not None and o.score is not None else math.inf, i)

        return by_score
    return lambda i: (0.0, i)


def _scores(outcomes: Mapping[int, ItemOutcome]) -> dict[int, float]:
    return {i: o.score for i, o in outcomes.items() if o.score is not None}


def load_doubts(ctx: ReviewContext) -> dict[int, JudgeDoubt]:
    """The judge's doubt of every scored row of the run × scorer under review, at its threshold:
    the stored re-judgings of this scorer, and the run's stored pairwise judgings."""
    pairwise = stored_pairwise(ctx.store, ctx.run["id"])
    return judge_doubts(
        _scores(ctx.outcomes),
        threshold=ctx.threshold,
        higher_is_better=ctx.higher_is_better,
        repetitions=pooled_repetitions(stored_rejudges(ctx.store, ctx.run["id"], ctx.scorer_id)),
        order_flips=order_flips_by_item(pairwise, ctx.items) if pairwise else {},  # the items only when needed
    )


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


def _go(position_key: str, index: int | None) -> None:
    if index is not None:
        st.session_state[position_key] = index


def render_agreement_strip(ctx: ReviewContext) -> None:
    """Three numbers that move as rows are labelled: labelled rows, agreement rate, Cohen's kappa."""
    report = ctx.report
    columns = st.columns(4)
    left_out = len(ctx.no_response)
    columns[0].metric(
        "Labelled",
        f"{sum(i not in ctx.no_response for i in ctx.labels)} of {ctx.n_items - left_out}",
        help=f"Of the rows that can be labelled: {NO_RESPONSE_LEFT_OUT.format(n=left_out)}" if left_out else None,
    )
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


def _judge_line(ctx: ReviewContext, outcome: ItemOutcome | None) -> str:
    if outcome is None:
        return "Judge: not scored yet (the run stopped before this row)."
    if outcome.score is None:
        return f"Judge: not scored ({outcome_status_label(outcome.status.value)})."
    verdict = passes(outcome.score, ctx.threshold, higher_is_better=ctx.higher_is_better)
    return f"Judge: {decimal_text(outcome.score)} of {ctx.scale:g} → {verdict_text(verdict)} at {ctx.threshold:g}"


def _queue(
    ctx: ReviewContext, labels: Mapping[int, Label], mode: str, reviewer: str
) -> tuple[list[int], Callable[[int], tuple[float, ...]], dict[int, JudgeDoubt] | None]:
    """The rows of the queue ``mode`` for ``reviewer`` given the current ``labels``, their order, and the
    judge's doubts (:func:`load_doubts`, read for the ``"uncertain"`` queue only)."""
    mine = reviewer_labels(ctx.store, ctx.run["id"], ctx.scorer_id).get(reviewer, {}) if reviewer else {}
    doubts = load_doubts(ctx) if mode == "uncertain" else None
    queue = review_queue(
        ctx.n_items,
        ctx.outcomes,
        labels,
        mode,
        threshold=ctx.threshold,
        higher_is_better=ctx.higher_is_better,
        mine=mine,
        reviewer=reviewer,
        doubts=doubts,
        no_response=ctx.no_response,
    )
    order = queue_order(ctx.outcomes, mode, threshold=ctx.threshold, reviewer=reviewer, doubts=doubts)
    return queue, order, doubts


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
        queue, order, _ = _queue(ctx, labels, mode, reviewer)
        _go(ctx.position_key, step(queue, index, 1, order))
    for field in ("score", "verdict", "comment"):  # the row's form shows the saved label next time
        st.session_state.pop(f"{ctx.key}_{index}_{field}", None)
    st.session_state[f"{ctx.key}_saved"] = f"Saved your label of {ctx.item_ids[index]}."
    st.rerun()


def no_response_reason(item: EvalItem, outcome: ItemOutcome | None) -> str | None:
    """Why a row cannot be labelled, or None: it was not scored because its response is missing
    (``missing_input``, no response text), so there is nothing for a person to judge."""
    if outcome is None or not lacks_response(outcome.status, item_texts(item)["output"]):
        return None
    return (
        f"This row has no response: it was not scored ({outcome_status_label(ScoreStatus.MISSING_INPUT.value)}), "
        "and there is no answer to label. "
        "Fix the dataset's response and score it again to label it."
    )


def _render_label_form(ctx: ReviewContext, index: int, reviewer: str, mode: str, refused: str | None) -> None:
    current = ctx.labels.get(index)
    row_key = f"{ctx.key}_{index}"
    advance = st.checkbox("After saving, go to the next row", value=True, key=f"{ctx.key}_advance", **SESSION)
    if refused:
        st.info(refused, icon=":material/block:")
    elif not reviewer:
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
        disabled = bool(refused) or not reviewer
        why = refused or ("Type your name at the top first." if disabled else None)
        pressed = None
        for column, (action, label, icon, tip) in zip(st.columns(3), LABEL_BUTTONS, strict=True):
            if column.form_submit_button(
                label,
                type="primary" if action == "save" else "secondary",
                icon=icon,
                key=f"{row_key}_{action}",
                shortcut=SHORTCUTS.get(action),
                disabled=disabled,
                help=why or tip,
            ):
                pressed = action
    if pressed is not None and not disabled:
        chosen = {"pass": True, "fail": False}.get(verdict if pressed == "save" else pressed)
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
        st.caption(
            f"The judge's score was {decimal_text(latest.judge_score)} when this was labelled; the row was re-scored since."
        )
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
    if mode == "uncertain":
        st.caption(UNCERTAIN_ORDER)
    render_agreement_strip(ctx)
    saved = st.session_state.pop(f"{ctx.key}_saved", None)
    if saved:
        st.toast(saved, icon=":material/check:")
    queue, order, doubts = _queue(ctx, ctx.labels, mode, reviewer)
    if ctx.no_response and mode in ("unlabelled", "uncertain", "random"):
        st.caption(NO_RESPONSE_LEFT_OUT.format(n=len(ctx.no_response)))
    index = resolve_position(queue, st.session_state.get(ctx.position_key), order)
    if index is None:
        labellable = ctx.n_items - len(ctx.no_response)
        empty = {
            "unlabelled": f"Every one of the {labellable} rows with a response is labelled."
            if ctx.no_response
            else f"Every one of the {ctx.n_items} rows is labelled.",
            "labelled": "No row is labelled yet.",
            "disagreements": f"No labelled row where the judge and the person disagree at {ctx.threshold:g}.",
            "low": f"No scored row is below {ctx.threshold:g}.",
            "uncertain": "No scored row is left for you to label." if reviewer else "Type your name at the top first.",
            "random": "No row is left for you to label." if reviewer else "Type your name at the top first.",
        }
        st.info(empty.get(mode, "The run has no items."))
        return
    st.session_state[ctx.position_key] = index
    item, outcome = ctx.row(index)  # the row on screen, in full: the only one read
    previous, following = step(queue, index, -1, order), step(queue, index, 1, order)
    head, prev_col, next_col = st.columns([4, 1, 1], vertical_alignment="center")
    head.markdown(
        f"**Row {queue.index(index) + 1} of {len(queue)}** ({FILTERS[mode].lower()}) · item "
        f"`{md_escape(item.item_id)}` (#{index + 1} of {ctx.n_items})"
    )
    for column, action, target, icon in (
        (prev_col, "previous", previous, ":material/arrow_back:"),
        (next_col, "next", following, ":material/arrow_forward:"),
    ):
        column.button(
            action.capitalize(),
            key=f"{ctx.key}_{action}",
            icon=icon,
            shortcut=SHORTCUTS[action],
            on_click=_go,
            args=(ctx.position_key, target),
            disabled=target is None,
        )
    if doubts is not None and index in doubts:
        st.markdown(f"Why here: {md_escape(doubts[index].explain())}")
    # The label form's "After saving, go to the next row" (drawn below; its value is the last run's): on, a save moves.
    moves = st.session_state.get(f"{ctx.key}_advance", True)
    then, then_enter = (" and next row", " and goes to the next row") if moves else ("", "")
    st.caption(
        f"Keys: J next · K previous · U pass{then} · D fail{then} · S score field · M comment · Enter saves{then_enter} · "
        "Esc leaves a field (letter keys do nothing while the cursor is in a field)."
    )
    texts_col, label_col = st.columns([3, 2])
    with texts_col:
        render_item_texts(item, f"{ctx.key}_texts_{index}")
    with label_col:
        st.markdown(f"**{md_escape(_judge_line(ctx, outcome))}**")
        st.caption("Your label is stored apart: the judge's score and breakdown are kept as they are.")
        _render_label_form(ctx, index, reviewer, mode, no_response_reason(item, outcome))
        _render_history(ctx, index)
    with st.expander(f"The judge's breakdown ({ctx.scorer_name})", expanded=True):
        # The light view: its charts and raw JSON are drawn when asked (kept open from row to row).
        light = {"key": f"{ctx.key}_{index}_outcome", "lazy_key": f"{ctx.key}_breakdown"}
        if outcome is None:
            st.info("Not scored yet: the run stopped before this row. Resume the run on the History page.")
        elif outcome.result is not None:
            render_outcome(outcome.result, payload=item.payload, **light)
        else:
            render_outcome(RunFailure(outcome.error or "not scored", outcome.status, outcome.raw_reply), **light)


# ---- agreement view
