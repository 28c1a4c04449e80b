"""Human labels of a run's results, kept in the Store's database (migration ``m003_labels``).

A label is a person's view of one run × item × scorer: a score on the scorer's scale
and/or a pass/fail verdict, and a comment, with who gave it, when, and the judge's
score at that moment. Labels never change the judge's result. Every save appends a
row; the latest one is the current label and the earlier ones are its history.

Labels can also be imported from a column of a dataset labelled elsewhere
(:func:`match_labels`, :func:`import_labels`), and exported with the results
(:func:`labelled_results_frame`, :func:`export_labelled_run`).

Typical use::

    store = Store()
    save_label(store, run_id, 3, "prompt-alignment", reviewer="Aiko", human_pass=False, comment="misses the tests")
    current = current_labels(store, run_id)          # {(item_index, scorer_id): Label}
    history = label_history(store, run_id, 3, "prompt-alignment")
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from scorers.catalogue.judge_store import get_judge
from scorers.core.errors import InvalidInputError, ScoreStatus, outcome_status_label
from scorers.runs.export import export_columns, item_texts, nest_analysis, to_csv_bytes, to_jsonl_bytes
from scorers.runs.runner import EvalItem
from scorers.runs.store import Record, Store, now_iso
from scorers.runs.table import RunTable

LABEL_COLUMNS: tuple[str, ...] = (
    "human_score",
    "human_pass",
    "human_comment",
    "reviewer",
    "labelled_at",
    "label_source",
    "label_edits",
    "judge_score_at_label",
)
"""The columns :func:`labelled_results_frame` adds to :func:`scorers.runs.export.results_frame`."""

PASS_WORDS: dict[str, bool] = {
    "pass": True,
    "passed": True,
    "true": True,
    "yes": True,
    "y": True,
    "1": True,
    "ok": True,
    "good": True,
    "👍": True,
    "✓": True,
    "✅": True,
    "fail": False,
    "failed": False,
    "false": False,
    "no": False,
    "n": False,
    "0": False,
    "bad": False,
    "👎": False,
    "✗": False,
    "❌": False,
}
"""Cell texts read as a verdict by :func:`parse_verdict` (compared lower-cased and stripped)."""


@dataclass(frozen=True)
class Label:
    """One saved label (one row of the history).

    Attributes:
        id: increasing with every save.
        run_id: the run.
        item_index: the item's position in the run.
        scorer_id: the scorer whose result it concerns.
        reviewer: who gave it.
        created_at: when (UTC, ISO 8601).
        human_score: the person's score on the scorer's scale, or None.
        human_pass: their verdict (True pass, False fail), or None.
        comment: their comment ("" for none).
        judge_score: the judge's score when the label was saved (None when not scored).
        judge_status: the judge's outcome status then (``"scored"``, ``"api_error"`` ...), or
            None when the row had no outcome yet.
        source: ``"review"`` for the Review page, ``"import: <file>"`` for imported labels.
    """

    id: int
    run_id: str
    item_index: int
    scorer_id: str
    reviewer: str
    created_at: str
    human_score: float | None
    human_pass: bool | None
    comment: str
    judge_score: float | None
    judge_status: str | None
    source: str


def _label(row: Record) -> Label:
    return Label(
        id=row["id"],
        run_id=row["run_id"],
        item_index=row["item_index"],
        scorer_id=row["scorer_id"],
        reviewer=row["reviewer"],
        created_at=row["created_at"],
        human_score=row["human_score"],
        human_pass=None if row["human_pass"] is None else bool(row["human_pass"]),
        comment=row["comment"],
        judge_score=row["judge_score"],
        judge_status=row["judge_status"],
        source=row["source"],
    )


@dataclass(frozen=True)
class NewLabel:
    """A label to save: which row, and what the person said (see :func:`save_labels`)."""

    item_index: int
    scorer_id: str
    human_score: float | None = None
    human_pass: bool | None = None
    comment: str = ""


def lacks_response(status: ScoreStatus, output: str | None) -> bool:
    """A row that cannot be labelled: not scored because an input is missing (``missing_input``) and its response
    text is blank, so there is no answer for a person to judge (a missing prompt with a response can be labelled).

    >>> lacks_response(ScoreStatus.MISSING_INPUT, " "), lacks_response(ScoreStatus.MISSING_INPUT, "Paris")
    (True, False)
    """
    return status is ScoreStatus.MISSING_INPUT and not (output or "").strip()


def no_response_text(item_id: str) -> str:
    """Why a row with no response (:func:`lacks_response`) gets no label, naming its item.

    >>> no_response_text("row1")
    "item 'row1' has no response (not scored: Missing input): there is no answer to label"
    """
    return (
        f"item {item_id!r} has no response (not scored: {outcome_status_label(ScoreStatus.MISSING_INPUT.value)}): "
        "there is no answer to label"
    )


def _refuse_rows_without_response(store: Store, run_id: str, labels: Sequence[NewLabel]) -> None:
    """Raise for the first label whose row has no response (:func:`lacks_response`): reads the outcomes not scored
    for a missing input, then the payload of those few items the labels name."""
    wanted = {(label.item_index, label.scorer_id) for label in labels}
    missing = {
        (row["item_index"], row["scorer_id"])
        for row in store.query(
            "SELECT item_index, scorer_id FROM results WHERE run_id = ? AND status = ?",
            (run_id, ScoreStatus.MISSING_INPUT.value),
        )
    } & wanted
    for label in labels:
        if (label.item_index, label.scorer_id) not in missing:
            continue
        row = store.items(run_id, label.item_index)[0]
        item = EvalItem(row["item_id"], row["payload"], row["groups"], row["columns"])
        if lacks_response(ScoreStatus.MISSING_INPUT, item_texts(item)["output"]):
            raise InvalidInputError(
                f"item {label.item_index}, scorer {label.scorer_id}: {no_response_text(item.item_id)}; fix the "
                "dataset's response and score it again to label it",
                field="item_index",
            )


def _check_label(label: NewLabel, max_score: float | None, where: str) -> None:
    if label.human_score is None and label.human_pass is None:
        raise InvalidInputError(f"{where}: give a score, a pass/fail verdict or both", field="label")
    if label.human_pass is not None and not isinstance(label.human_pass, bool):
        raise InvalidInputError(f"{where}: the verdict must be True (pass) or False (fail)", field="human_pass")
    score = label.human_score
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise InvalidInputError(f"{where}: the score must be a finite number, got {score!r}", field="human_score")
        top = max_score if max_score is not None else math.inf
        if not 0 <= score <= top:
            raise InvalidInputError(
                f"{where}: the score {score:g} is outside the scorer's scale 0..{top:g}", field="human_score"
            )


def save_labels(
    store: Store,
    run_id: str,
    labels: Sequence[NewLabel],
    *,
    reviewer: str,
    source: str = "review",
    max_score: float | None = None,
) -> list[Label]:
    """Append labels in one transaction (all or none) and return them as saved.

    Each label records the judge's score and status of its row at this moment.

    Args:
        store: the database.
        run_id: the run the labels concern.
        labels: what to save.
        reviewer: who gives them (a name; surrounding spaces are dropped).
        source: ``"review"``, or ``"import: <file>"`` for imported labels.
        max_score: the top of the scorer's scale; a score outside [0, max_score] is rejected.
            None checks only that the score is ≥ 0.

    Raises:
        InvalidInputError: no reviewer, a label with neither score nor verdict, a score
            outside the scale, an item index outside the run, a scorer the run does not have, or a row with no
            response (:func:`lacks_response`: not scored for a missing input, no response text), which has no
            answer to label (the message names the item and the scorer).
        KeyError: no such run.
    """
    who = reviewer.strip()
    if not who:
        raise InvalidInputError("type your name first: every label records who gave it", field="reviewer")
    run = store.get_run(run_id)
    scorer_ids = {s["id"] for s in run["scorers"]}
    for label in labels:
        where = f"item {label.item_index}, scorer {label.scorer_id}"
        if label.scorer_id not in scorer_ids:
            raise InvalidInputError(
                f"{where}: run {run_id} has no scorer {label.scorer_id!r} (it has {', '.join(sorted(scorer_ids))})",
                field="scorer_id",
            )
        if not 0 <= label.item_index < run["n_items"]:
            raise InvalidInputError(f"{where}: run {run_id} has items 0..{run['n_items'] - 1}", field="item_index")
        _check_label(label, max_score, where)
    _refuse_rows_without_response(store, run_id, labels)
    created = now_iso()
    ids = []
    with store.transaction() as db:
        for label in labels:
            judged = db.execute(
                "SELECT status, score FROM results WHERE run_id = ? AND item_index = ? AND scorer_id = ?",
                (run_id, label.item_index, label.scorer_id),
            ).fetchone()
            cursor = db.execute(
                "INSERT INTO labels (run_id, item_index, scorer_id, reviewer, created_at, human_score, human_pass,"
                " comment, judge_score, judge_status, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (
                    run_id,
                    label.item_index,
                    label.scorer_id,
                    who,
                    created,
                    None if label.human_score is None else float(label.human_score),
                    None if label.human_pass is None else int(label.human_pass),
                    label.comment.strip(),
                    judged["score"] if judged else None,
                    judged["status"] if judged else None,
                    source,
                ),
            )
            ids.append(cursor.fetchone()[0])
    if not ids:
        return []
    marks = ", ".join("?" * len(ids))
    rows = store.query(f"SELECT * FROM labels WHERE id IN ({marks}) ORDER BY id", ids)
    return [_label(r) for r in rows]


def save_label(
    store: Store,
    run_id: str,
    item_index: int,
    scorer_id: str,
    *,
    reviewer: str,
    human_score: float | None = None,
    human_pass: bool | None = None,
    comment: str = "",
    max_score: float | None = None,
) -> Label:
    """Save one label from the Review page (appended: the previous ones stay as its history).

    Args:
        store: the database.
        run_id: the run.
        item_index: the item's position in the run.
        scorer_id: the scorer whose result is labelled.
        reviewer: who labels it.
        human_score: a score on the scorer's scale, or None.
        human_pass: pass (True) or fail (False), or None. At least one of the two is needed.
        comment: free text.
        max_score: the top of the scorer's scale, to check the score against.

    Returns:
        The saved :class:`Label` (now the row's current label).

    Raises:
        InvalidInputError, KeyError: see :func:`save_labels`.
    """
    label = NewLabel(item_index, scorer_id, human_score, human_pass, comment)
    return save_labels(store, run_id, [label], reviewer=reviewer, max_score=max_score)[0]


def current_labels(
    store: Store, run_id: str, scorer_id: str | None = None, *, reviewer: str | None = None
) -> dict[tuple[int, str], Label]:
    """The current (latest) label of every labelled row of a run.

    Args:
        store: the database.
        run_id: the run.
        scorer_id: only this scorer's rows; None for all.
        reviewer: only this reviewer's labels (surrounding spaces dropped, as :func:`save_labels` does): their
            latest of each row, which another reviewer's later label does not replace; None for anyone's latest.

    Returns:
        ``(item_index, scorer_id)`` → :class:`Label`.
    """
    where = [("scorer_id", scorer_id), ("reviewer", None if reviewer is None else reviewer.strip())]
    given = [(name, value) for name, value in where if value is not None]
    sql = (
        "SELECT * FROM labels WHERE id IN (SELECT MAX(id) FROM labels WHERE run_id = ?"
        + "".join(f" AND {name} = ?" for name, _ in given)
        + " GROUP BY item_index, scorer_id) ORDER BY item_index, scorer_id"
    )
    params = (run_id, *(value for _, value in given))
    return {(label.item_index, label.scorer_id): label for label in map(_label, store.query(sql, params))}


def reviewer_labels(store: Store, run_id: str, scorer_id: str) -> dict[str, dict[int, Label]]:
    """Each reviewer's own current labels of one scorer's rows, kept apart.

    Returns:
        reviewer → item index → that reviewer's latest label of the row (another reviewer's
        later label of the same row does not replace it here).
    """
    rows = store.query(
        "SELECT * FROM labels WHERE id IN (SELECT MAX(id) FROM labels WHERE run_id = ? AND scorer_id = ?"
        " GROUP BY item_index, reviewer) ORDER BY reviewer, item_index",
        (run_id, scorer_id),
    )
    out: dict[str, dict[int, Label]] = {}
    for label in map(_label, rows):
        out.setdefault(label.reviewer, {})[label.item_index] = label
    return out


def label_history(store: Store, run_id: str, item_index: int, scorer_id: str) -> list[Label]:
    """Every label saved for one row, oldest first (the last one is current)."""
    rows = store.query(
        "SELECT * FROM labels WHERE run_id = ? AND item_index = ? AND scorer_id = ? ORDER BY id",
        (run_id, item_index, scorer_id),
    )
    return [_label(r) for r in rows]


def edit_counts(store: Store, run_id: str) -> dict[tuple[int, str], int]:
    """``(item_index, scorer_id)`` → how many times the row's label was saved."""
    rows = store.query(
        "SELECT item_index, scorer_id, COUNT(*) AS n FROM labels WHERE run_id = ? GROUP BY item_index, scorer_id",
        (run_id,),
    )
    return {(r["item_index"], r["scorer_id"]): r["n"] for r in rows}


# ---- import


def parse_verdict(value: Any) -> bool:
    """A cell read as pass (True) or fail (False).

    Accepts booleans, the numbers 1 and 0, and the words of :data:`PASS_WORDS`
    (pass/fail, true/false, yes/no, 👍/👎 ..., any case).

    Raises:
        ValueError: anything else; the message quotes the value and lists what is accepted.

    >>> parse_verdict("PASS"), parse_verdict(0), parse_verdict(" no ")
    (True, False, False)
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    if text in PASS_WORDS:
        return PASS_WORDS[text]
    raise ValueError(f"{str(value)[:40]!r} is not a verdict: use pass/fail, true/false, yes/no or 1/0")


def parse_score(value: Any, max_score: float | None) -> float:
    """A cell read as a score on the scale 0..max_score.

    Raises:
        ValueError: not a finite number, or outside the scale.

    >>> parse_score(" 0.75 ", 1.0)
    0.75
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is a boolean, not a score")
    try:
        number = float(str(value).strip()) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{str(value)[:40]!r} is not a number") from None
    if not math.isfinite(number):
        raise ValueError(f"{value!r} is not a finite number")
    top = max_score if max_score is not None else math.inf
    if not 0 <= number <= top:
        raise ValueError(f"{number:g} is outside the scorer's scale 0..{top:g}")
    return number


def _blank(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and not value.strip()


@dataclass(frozen=True)
class ImportProblem:
    """A dataset row that gave no label, and why.

    Attributes:
        row: the row's label in the file (``"line 12"``, ``"row 3"``).
        key: its id cell (matching by id), or its position (matching by order).
        reason: why it was not imported.
    """

    row: str
    key: str
    reason: str


@dataclass(frozen=True)
class LabelMatch:
    """What a labels column gives, before anything is saved.

    Attributes:
        labels: one label per matched row with a usable value.
        problems: every other dataset row (unmatched id, duplicate, blank or invalid value).
        n_rows: rows in the dataset.
        unlabelled_items: items of the run no dataset row labels (by item index).
        no_response: (the row's label in the file, the item's id) of each row refused because its item has no
            response (``no_response`` of :func:`match_labels`); each is also in ``problems``.
    """

    labels: list[NewLabel]
    problems: list[ImportProblem]
    n_rows: int
    unlabelled_items: list[int]
    no_response: list[tuple[str, str]] = field(default_factory=list)


def match_labels(
    frame: pd.DataFrame,
    items: Sequence[EvalItem],
    *,
    column: str,
    kind: str,
    scorer_id: str,
    id_column: str | None = None,
    row_labels: Sequence[str] | None = None,
    max_score: float | None = None,
    comment_column: str | None = None,
    no_response: Collection[int] = (),
) -> LabelMatch:
    """Match a dataset's labels column to a run's items, reporting every row that gives no label.

    Args:
        frame: the dataset (e.g. ``load_dataset(...).frame``).
        items: the run's items, in order.
        column: the column holding the human labels.
        kind: ``"score"`` (a number on the scorer's scale) or ``"verdict"`` (pass/fail,
            see :func:`parse_verdict`).
        scorer_id: the scorer the labels are for.
        id_column: match rows to items by this column against the items' ids; None to match
            by row order (row n labels item n).
        row_labels: how to name each row in problems (``LoadedDataset.row_label``); default ``"row n"`` (1-based).
        max_score: the top of the scorer's scale (for ``kind="score"``).
        comment_column: a column whose text becomes the label's comment, or None.
        no_response: item indexes with no response (not scored, ``missing_input``): there is no answer to
            label, so a row matched to one gives no label (a problem naming the item, also in ``no_response``).

    Returns:
        The :class:`LabelMatch`: rows are never dropped silently; each one without a label
        is in ``problems`` with the reason (no item with that id, id repeated in the file,
        beyond the run's items, an item with no response, blank or invalid value).

    Raises:
        InvalidInputError: an unknown kind, or a column the dataset does not have.
    """
    if kind not in ("score", "verdict"):
        raise InvalidInputError(f"unknown label kind {kind!r}; use 'score' or 'verdict'", field="kind")
    for name in (column, id_column, comment_column):
        if name is not None and name not in frame.columns:
            raise InvalidInputError(
                f"the dataset has no column {name!r}; its columns: {', '.join(map(str, frame.columns))}",
                field="column",
            )
    names = list(row_labels) if row_labels is not None else [f"row {n + 1}" for n in range(len(frame))]
    values = frame[column].tolist()
    comments = frame[comment_column].tolist() if comment_column else [None] * len(frame)
    problems: list[tuple[int, ImportProblem]] = []
    targets: list[int | None] = []
    if id_column is None:
        keys = [str(n + 1) for n in range(len(frame))]
        for n in range(len(frame)):
            if n < len(items):
                targets.append(n)
            else:
                targets.append(None)
                problems.append((n, ImportProblem(names[n], keys[n], f"the run has only {len(items)} items")))
    else:
        by_id: dict[str, list[int]] = {}
        for index, item in enumerate(items):
            by_id.setdefault(item.item_id, []).append(index)
        keys = ["" if _blank(v) else str(v).strip() for v in frame[id_column].tolist()]
        counts = Counter(keys)
        for n, key in enumerate(keys):
            reason = None
            if not key:
                reason = f"the id column {id_column!r} is blank"
            elif counts[key] > 1:
                reason = f"the id {key!r} appears {counts[key]} times in the file: which label is meant is unclear"
            elif key not in by_id:
                reason = f"no item of the run has the id {key!r}"
            elif len(by_id[key]) > 1:
                reason = f"{len(by_id[key])} items of the run have the id {key!r}"
            if reason:
                targets.append(None)
                problems.append((n, ImportProblem(names[n], key, reason)))
            else:
                targets.append(by_id[key][0])
    labels: list[NewLabel] = []
    refused: list[tuple[str, str]] = []
    for n, target in enumerate(targets):
        if target is None:
            continue
        if target in no_response:
            reason = no_response_text(items[target].item_id)
            refused.append((names[n], items[target].item_id))
            problems.append((n, ImportProblem(names[n], keys[n], reason)))
            continue
        value = values[n]
        if _blank(value):
            problems.append((n, ImportProblem(names[n], keys[n], f"the {column!r} cell is blank")))
            continue
        try:
            if kind == "score":
                label = NewLabel(target, scorer_id, human_score=parse_score(value, max_score))
            else:
                label = NewLabel(target, scorer_id, human_pass=parse_verdict(value))
        except ValueError as exc:
            problems.append((n, ImportProblem(names[n], keys[n], f"{column!r}: {exc}")))
            continue
        note = comments[n]
        labels.append(
            NewLabel(
                label.item_index, scorer_id, label.human_score, label.human_pass, "" if _blank(note) else str(note)
            )
        )
    labelled = {label.item_index for label in labels}
    ordered = [problem for _, problem in sorted(problems, key=lambda entry: entry[0])]
    return LabelMatch(labels, ordered, len(frame), [i for i in range(len(items)) if i not in labelled], refused)


@dataclass(frozen=True)
class LabelConflict:
    """An imported label for a row that already has a different current label.

    Attributes:
        item_index: the row's item.
        existing: its current label (who gave it, when, what).
        imported: what the file says.
    """

    item_index: int
    existing: Label
    imported: NewLabel


def _same_label(current: Label, label: NewLabel) -> bool:
    """Whether ``label`` gives the same score and verdict as ``current`` (comments are not compared)."""
    same_score = (current.human_score is None and label.human_score is None) or (
        current.human_score is not None
        and label.human_score is not None
        and math.isclose(current.human_score, label.human_score)
    )
    return same_score and current.human_pass == label.human_pass


def import_conflicts(store: Store, run_id: str, match: LabelMatch, *, reviewer: str) -> list[LabelConflict]:
    """The matched labels that would replace a different label the importing reviewer gave the same row.

    Each reviewer's labels are kept apart (:func:`reviewer_labels`), so only the reviewer's own current
    labels are compared: another reviewer's label of the row is neither a conflict nor replaced.
    A label is different when its score or its verdict differs (comments are not compared).

    Args:
        store: the database.
        run_id: the run the labels are for.
        match: :func:`match_labels`' result.
        reviewer: who imports them.

    Returns:
        One :class:`LabelConflict` per such row, in item order.
    """
    current = current_labels(store, run_id, reviewer=reviewer)
    return [
        LabelConflict(label.item_index, now, label)
        for label in sorted(match.labels, key=lambda lab: lab.item_index)
        if (now := current.get((label.item_index, label.scorer_id))) is not None and not _same_label(now, label)
    ]


def import_labels(
    store: Store,
    run_id: str,
    match: LabelMatch,
    *,
    reviewer: str,
    file_name: str,
    max_score: float | None = None,
    replace_conflicting: bool = False,
) -> list[Label]:
    """Save the labels of a :class:`LabelMatch` as ``reviewer``'s (appended, source ``"import: <file_name>"``).

    Only the reviewer's own labels are compared (each reviewer's labels are kept apart; another
    reviewer's label of the same row never stops or changes this import). A row whose own current
    label differs from the imported one (:func:`import_conflicts`) keeps it unless
    ``replace_conflicting`` is True: a label is never overwritten without that explicit choice. A row
    whose own current label gives the same score and verdict is left as it is (its comment kept;
    nothing to save). Either way the earlier labels stay in the row's history, and every imported
    label records its file in ``source``.

    Returns:
        The labels saved (rows kept as they were are missing; see :func:`import_conflicts`).

    Raises:
        InvalidInputError: nothing to import, or see :func:`save_labels`.
    """
    if not match.labels:
        raise InvalidInputError(f"{file_name}: no row gave a label to import", field="column")
    current = current_labels(store, run_id, reviewer=reviewer)
    labels = [
        label
        for label in match.labels
        if (now := current.get((label.item_index, label.scorer_id))) is None
        or (replace_conflicting and not _same_label(now, label))
    ]
    return save_labels(store, run_id, labels, reviewer=reviewer, source=f"import: {file_name}", max_score=max_score)


def guess_id_column(frame: pd.DataFrame, items: Sequence[EvalItem]) -> str | None:
    """The column of ``frame`` whose values match the most item ids of the run (None when none matches).

    >>> guess_id_column(pd.DataFrame({"n": [1, 2], "item_id": ["q1", "q2"]}), [EvalItem("q1", {}), EvalItem("q2", {})])
    'item_id'
    """
    ids = {item.item_id for item in items}
    best, best_hits = None, 0
    for column in frame.columns:
        hits = sum(1 for v in frame[column].tolist() if not _blank(v) and str(v).strip() in ids)
        if hits > best_hits:
            best, best_hits = str(column), hits
    return best


# ---- export


def labelled_results_frame(
    table: RunTable,
    labels: Mapping[tuple[int, str], Label],
    edits: Mapping[tuple[int, str], int] | None = None,
) -> pd.DataFrame:
    """A stored run's export rows (:func:`scorers.runs.export.export_columns`) with each row's current label joined.

    Args:
        table: the run (:func:`scorers.runs.table.load_run_table`).
        labels: the current labels (:func:`current_labels`), by (item index, scorer id).
        edits: times each row's label was saved (:func:`edit_counts`), or None.

    Returns:
        One row per item × scorer: the run's export columns (texts, groups, the dataset's
        unmapped columns, one numeric column per dimension score, ``analysis`` as JSON text),
        then :data:`LABEL_COLUMNS`: ``human_score`` (float, NaN when none), ``human_pass``
        (True/False/None), ``human_comment``, ``reviewer``, ``labelled_at``, ``label_source``,
        ``label_edits`` (0 when unlabelled) and ``judge_score_at_label`` (the judge's score
        when labelled). The judge's ``score`` is unchanged.
    """
    frame = export_columns(table)
    keys = list(zip(frame["item_index"].tolist(), frame["scorer"].tolist(), strict=True))
    found = [labels.get(key) for key in keys]
    index = frame.index
    frame["human_score"] = pd.Series(
        [label.human_score if label and label.human_score is not None else math.nan for label in found],
        index=index,
        dtype="float64",
    )
    columns: dict[str, list[Any]] = {
        "human_pass": [label.human_pass if label else None for label in found],
        "human_comment": [label.comment if label else None for label in found],
        "reviewer": [label.reviewer if label else None for label in found],
        "labelled_at": [label.created_at if label else None for label in found],
        "label_source": [label.source if label else None for label in found],
    }
    for name, values in columns.items():
        frame[name] = pd.Series(values, index=index, dtype=object)
    frame["label_edits"] = pd.Series(
        [(edits or {}).get(key, 1 if label else 0) for key, label in zip(keys, found, strict=True)],
        index=index,
        dtype="int64",
    )
    frame["judge_score_at_label"] = pd.Series(
        [label.judge_score if label and label.judge_score is not None else math.nan for label in found],
        index=index,
        dtype="float64",
    )
    return frame


def export_labelled_run(store: Store, table: RunTable, fmt: str) -> bytes:
    """A stored run's results with their labels as CSV or JSON Lines (:func:`labelled_results_frame`).

    CSV cells are neutralised against spreadsheet formulas as in :func:`scorers.runs.export.to_csv_bytes`
    (a comment such as ``=HYPERLINK(...)`` is written as text); JSON Lines keeps every value as is, with
    ``analysis`` nested.

    Args:
        store: the database the labels are in.
        table: the run (:func:`scorers.runs.table.load_run_table`); its id names the labels.
        fmt: ``"csv"`` or ``"jsonl"``.

    Raises:
        ValueError: another format.
    """
    if fmt not in ("csv", "jsonl"):
        raise ValueError(f"labels export in {fmt!r} is not supported; use csv or jsonl")
    run_id = table.run["id"]
    frame = labelled_results_frame(table, current_labels(store, run_id), edit_counts(store, run_id))
    return to_csv_bytes(frame) if fmt == "csv" else to_jsonl_bytes(nest_analysis(frame))


def scorer_scale(run: Mapping[str, Any], scorer_id: str, store: Store | None = None) -> float:
    """The top of a stored run's scorer's scale: its ``scale`` option, a saved judge's scale, else 1.

    Args:
        run: the run record (:meth:`Store.get_run`).
        scorer_id: the scorer.
        store: where saved judges are read from (for ``judge:`` ids).
    """
    for entry in run.get("scorers") or []:
        if entry["id"] != scorer_id:
            continue
        options = entry.get("options")
        if options is None:
            options = ((run.get("config") or {}).get("scorerOptions") or {}).get(scorer_id) or {}
        scale = options.get("scale")
        if isinstance(scale, (int, float)) and not isinstance(scale, bool) and scale > 0:
            return float(scale)
    if store is not None and scorer_id.startswith("judge:"):
        try:
            return float(get_judge(store, scorer_id).definition.scale)
        except KeyError:
            return 1.0
    return 1.0
