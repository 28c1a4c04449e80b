"""What every view of the Review page needs: the run × scorer under review, the pickers, number formats."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from scorers import (
    EvalItem,
    EvalRunResult,
    ItemOutcome,
    ScorerError,
    ScoreStatus,
    Store,
    load_run,
)
from scorers.analysis.agreement import (
    AgreementReport,
    agreement_report,
    agreement_rows,
    passes,
)
from scorers.analysis.labels import (
    Label,
    current_labels,
    lacks_response,
    scorer_scale,
)
from scorers.catalogue.registry import scorer_spec
from scorers.core.errors import run_status_short_label
from scorers.runs.table import RunTable, load_outcomes

from ..layout import follow_run_link, warn_missing_run_link
from ..run_explorer import per_version, run_table

SESSION = {"persist_state": "session"}  # keep the reviewer's choices across pages

REVIEWER_KEY = "review_reviewer"
VIEW_KEY = "review_view"
FILTER_KEY = "review_filter"
VIEWS = ("Review", "Agreement", "Consistency", "Import and export")

LOW_CONFIDENCE = "fewer than 10 labelled rows: not meaningful yet"


@dataclass(frozen=True)
class JudgedRow:
    """One outcome of the scorer under review, from the run's columns (what the queues and the agreement need).

    Attributes:
        item_index: the item.
        item_id: its id.
        scorer_id: the scorer.
        score: the judge's score, None when not scored (never 0 for a failure).
        status: the outcome's :class:`~scorers.ScoreStatus` value.
    """

    item_index: int
    item_id: str
    scorer_id: str
    score: float | None
    status: str


@dataclass(frozen=True)
class ReviewContext:
    """What every view of one run × scorer needs.

    The run's items and outcomes in full (:attr:`items`, :attr:`result`) are read only by the views
    that use them; the review view reads the columns (:attr:`outcomes`) and the one row on screen
    (:meth:`row`).

    Attributes:
        store: the database.
        run: the run record.
        scorer_id: the scorer under review.
        scorer_name: its display name.
        scale: the top of its scale.
        threshold: the pass threshold on that scale.
        higher_is_better: False for scorers where low scores are good.
        uses_judge: True when the scorer calls an LLM judge.
        outcomes: item index → the scorer's outcome as a :class:`JudgedRow` (missing when not scored yet).
        labels: item index → the current label of this scorer's row.
        report: the agreement at ``threshold``.
        item_ids: the run's item ids, by item index.
        no_response: the item indexes with no response (:func:`~scorers.analysis.labels.lacks_response`): they
            cannot be labelled, so no queue of rows to label holds them.
    """

    store: Store
    run: dict[str, Any]
    scorer_id: str
    scorer_name: str
    scale: float
    threshold: float
    higher_is_better: bool
    uses_judge: bool
    outcomes: dict[int, JudgedRow]
    labels: dict[int, Label]
    report: AgreementReport
    item_ids: list[str]
    no_response: frozenset[int] = frozenset()

    @property
    def key(self) -> str:
        """Prefix of the widget keys of this run × scorer (:func:`review_key`)."""
        return review_key(self.run["id"], self.scorer_id)

    @property
    def position_key(self) -> str:
        """Session-state key of the item index shown in the review view."""
        return f"{self.key}_pos"

    @property
    def n_items(self) -> int:
        """Items in the run."""
        return len(self.item_ids)

    @property
    def items(self) -> list[EvalItem]:
        """The run's items in full, read once per version of its outcomes (the views that use them all)."""
        return self._full_run()[0]

    @property
    def result(self) -> EvalRunResult:
        """The run's outcomes in full, read once per version of its outcomes (the views that use them all)."""
        return self._full_run()[1]

    def _full_run(self) -> tuple[list[EvalItem], EvalRunResult]:
        run_id = self.run["id"]
        return per_version(self.store, "review run", (run_id,), lambda: load_run(self.store, run_id)[1:])

    def row(self, index: int) -> tuple[EvalItem, ItemOutcome | None]:
        """One item and its outcome for the scorer under review, in full (None when not scored yet), read from the store."""
        item, outcomes = load_outcomes(self.store, self.run["id"], index)
        return item, outcomes.get(self.scorer_id)


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
    """Read the run's columns (once per version, shared with History), the current labels, and measure agreement.

    Raises:
        KeyError: no such run.
    """
    run = store.get_run(run_id)  # fresh: its name and status change without a new outcome
    table = run_table(store, run_id)
    name, higher_is_better, uses_judge = _scorer_facts(scorer_id, store)
    scale = scorer_scale(run, scorer_id, store)
    labels = {index: label for (index, _), label in current_labels(store, run_id, scorer_id).items()}
    # Built once per version of the run's outcomes, like the table: a rerun builds no row of them.
    item_ids, outcomes, no_response = per_version(
        store, f"review rows of {scorer_id}", (run_id,), lambda: _review_rows(table, scorer_id)
    )
    rows = agreement_rows(outcomes.values(), {(i, scorer_id): label for i, label in labels.items()}, scorer_id)
    report = agreement_report(rows, threshold=threshold, scale=scale, higher_is_better=higher_is_better)
    return ReviewContext(
        store,
        run,
        scorer_id,
        name,
        scale,
        threshold,
        higher_is_better,
        uses_judge,
        outcomes,
        labels,
        report,
        item_ids,
        no_response,
    )


def _review_rows(table: RunTable, scorer_id: str) -> tuple[list[str], dict[int, JudgedRow], frozenset[int]]:
    item_ids = table.items["item_id"].astype(str).tolist()
    outcomes = judged_rows(table.results, item_ids, scorer_id)
    # The texts of the rows not scored for a missing input only (usually few): which of them have no response.
    missing = [i for i, row in outcomes.items() if row.status == ScoreStatus.MISSING_INPUT.value]
    outputs = table.texts(missing)["output"] if missing else pd.Series(dtype="string")
    no_response = frozenset(
        i
        for i, text in zip(missing, outputs, strict=True)
        if lacks_response(ScoreStatus.MISSING_INPUT, None if pd.isna(text) else text)
    )
    return item_ids, outcomes, no_response


def judged_rows(results: pd.DataFrame, item_ids: list[str], scorer_id: str) -> dict[int, JudgedRow]:
    """Item index → :class:`JudgedRow` of one scorer's outcomes in a run's columns (:attr:`RunTable.results`).

    A score is kept only when the outcome is scored: a failure's score is None, never 0.
    """
    mine = results[results["scorer"] == scorer_id]
    scored = (mine["status"] == ScoreStatus.SCORED.value).to_numpy()
    return {
        int(i): JudgedRow(int(i), item_ids[int(i)], scorer_id, float(score) if ok and score == score else None, status)
        for i, score, status, ok in zip(
            mine["item_index"].to_numpy(), mine["score"].to_numpy(), mine["status"].astype(str), scored, strict=True
        )
    }


# ---- pure helpers (tested without Streamlit)


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


def label_verdict(label: Label, threshold: float, higher_is_better: bool) -> bool | None:
    """A label's verdict: its pass/fail, else its score against the threshold, else None."""
    if label.human_pass is not None:
        return label.human_pass
    if label.human_score is None:
        return None
    return passes(label.human_score, threshold, higher_is_better=higher_is_better)


def verdict_text(value: bool | None) -> str:
    """``"pass"``, ``"fail"`` or ``"—"``."""
    return "—" if value is None else ("pass" if value else "fail")


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
        warn_missing_run_link([], "there is no run to review")
        st.info("No runs yet. Score a dataset on the Batch page; its run can then be reviewed here.")
        return None
    by_id = {run["id"]: run for run in runs}
    if st.session_state.get("review_run") not in by_id:
        st.session_state.pop("review_run", None)
    shown = by_id[st.session_state.get("review_run", runs[0]["id"])]
    warn_missing_run_link(by_id, f"showing run {shown['name']} ({shown['id']}) instead: choose another below")
    follow_run_link("review_run", by_id)  # ?run=ID picks that run
    return st.selectbox(
        "Run",
        list(by_id),
        key="review_run",
        format_func=lambda rid: f"{by_id[rid]['name']} · {run_status_short_label(by_id[rid]['status'])} · {rid}",
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


def open_row(position_key: str, index: int) -> None:
    """Show item ``index`` in the review view (a button callback: switches the view and clears the filter)."""
    st.session_state[position_key] = index
    st.session_state[VIEW_KEY] = "Review"
    st.session_state[FILTER_KEY] = "all"
