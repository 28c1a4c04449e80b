"""The tables of a run's views, from its columnar form (:class:`scorers.runs.table.RunTable`), without Streamlit.

Everything here is a vectorised pandas operation over the run's outcome frame: a
rerun filters, sorts and aggregates columns, and only the rows of one page are ever
turned into Python objects (:func:`page_rows`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from scorers import ScoreStatus
from scorers.runs.table import TEXT_FIELDS, RunTable, dimension_label

from .batch import truncate

PAGE_SIZE = 50
"""Rows of the rows table on one page."""

SEARCHED_RESULT_COLUMNS: tuple[str, ...] = ("reason", "error")
"""Outcome columns the text search looks in, besides the item's id and texts."""

_STATS = ["mean", "median", "std", "min", "max"]


def _scored(results: pd.DataFrame) -> pd.Series:
    return results["status"] == ScoreStatus.SCORED.value


def _stats(values: pd.core.groupby.SeriesGroupBy | pd.Series) -> pd.DataFrame | pd.Series:
    return values.agg(["mean", "median", "std", "min", "max", "count"])


def _parts(table: RunTable, by: str | None) -> list[tuple[Any, pd.DataFrame, int]]:
    """``(group value, its outcomes, its number of items)``: the whole run, or one per value of the group ``by``
    (in the order of its first item; ``"(blank)"`` for a missing or empty value)."""
    if by is None:
        return [(None, table.results, table.n_items)]
    keys = group_keys(table.items[f"group:{by}"])
    parts = []
    for value in dict.fromkeys(keys):
        indexes = keys.index[keys == value]
        parts.append((value, table.results[table.results["item_index"].isin(indexes)], len(indexes)))
    return parts


def aggregates(table: RunTable, names: Mapping[str, str] | None = None, by: str | None = None) -> pd.DataFrame:
    """Per scorer: mean, median, std, min, max of the scored outcomes, n scored, n not scored, n pending.

    Outcomes that are not scored (failed, or a missing or invalid input) never count as 0: they are
    counted in ``n not scored`` only. ``n pending``
    is items without an outcome yet (a stopped run). ``std`` is the sample standard
    deviation (n − 1; NaN with fewer than two scores).

    Args:
        table: the run.
        names: scorer id → display name (default: the id).
        by: a group column's name (``"variant"`` for a run of variants, whose variants must not be averaged
            together): one row per value of it and scorer, in a first column named ``by``; None: one row per scorer.
    """
    rows = []
    for value, results, n_items in _parts(table, by):
        scored = results[_scored(results)]
        stats = _stats(scored.groupby("scorer", observed=True)["score"])
        counted = results.groupby("scorer", observed=True).size()
        for sid in table.scorer_ids:
            n_scored = int(stats["count"].get(sid, 0))
            n_stored = int(counted.get(sid, 0))
            row: dict[str, Any] = {by: value} if by else {}
            row["scorer"] = (names or {}).get(sid, sid)
            row.update({k: float(stats[k].get(sid, math.nan)) if n_scored else math.nan for k in _STATS})
            row.update({"n scored": n_scored, "n not scored": n_stored - n_scored, "n pending": n_items - n_stored})
            rows.append(row)
    return pd.DataFrame(
        rows, columns=[*([by] if by else []), "scorer", *_STATS, "n scored", "n not scored", "n pending"]
    )


PENDING = "pending"
"""The status :func:`status_counts` gives items without an outcome yet (a stopped run)."""


def status_counts(table: RunTable, names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Per scorer: how many outcomes have each status, and how many items have none yet.

    Args:
        table: the run.
        names: scorer id → display name (default: the id).

    Returns:
        Columns ``scorer`` (display name), ``status`` and ``n``; scorers in the run's
        order, statuses in :class:`~scorers.ScoreStatus` order (any other stored status
        after them), then :data:`PENDING` (items × 1 − outcomes stored); counts of 0 left out.
    """
    counts = table.results.groupby(["scorer", "status"], observed=True).size()
    known = [s.value for s in ScoreStatus]
    found = {str(status) for _, status in counts.index}
    order = known + sorted(found - set(known))
    rows = []
    for sid in table.scorer_ids:
        label = (names or {}).get(sid, sid)
        stored = 0
        for status in order:
            n = int(counts.get((sid, status), 0))
            stored += n
            if n:
                rows.append((label, status, n))
        if table.n_items > stored:
            rows.append((label, PENDING, table.n_items - stored))
    return pd.DataFrame(rows, columns=["scorer", "status", "n"])


def dimension_aggregates(
    table: RunTable, names: Mapping[str, str] | None = None, by: str | None = None
) -> pd.DataFrame:
    """Per scorer and dimension: mean, median, std, min, max and n scored of the 0..1 dimension scores.

    Args:
        table: the run.
        names: scorer id → display name (default: the id).
        by: as :func:`aggregates`' ``by``: one row per value of that group, scorer and dimension.

    Returns:
        Columns ``by`` (when given), ``scorer`` (display name), ``dimension`` (a label, see
        :func:`scorers.runs.table.dimension_label`), ``column`` (the flat column name,
        e.g. ``prompt_alignment.user.intentAlignment``), the statistics and ``n scored``.
    """
    rows = []
    for value, results, _ in _parts(table, by):
        for sid, columns in table.dimensions.items():
            for column in columns:
                values = results[column].dropna()
                stats = _stats(values)
                row: dict[str, Any] = {by: value} if by else {}
                row |= {
                    "scorer": (names or {}).get(sid, sid),
                    "dimension": dimension_label(column.split(".", 1)[1]),
                    "column": column,
                }
                row.update({k: float(stats[k]) if len(values) else math.nan for k in _STATS})
                row["n scored"] = int(len(values))
                rows.append(row)
    return pd.DataFrame(rows, columns=[*([by] if by else []), "scorer", "dimension", "column", *_STATS, "n scored"])


def group_keys(values: pd.Series) -> pd.Series:
    """Group values as text, ``"(blank)"`` for a missing or empty value."""
    text = values.map(lambda v: None if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
    return text.where(text.notna() & (text.str.strip() != ""), "(blank)")


def group_means(table: RunTable, group: str) -> pd.DataFrame:
    """Mean score per group value and scorer, with counts; failed outcomes are counted, never averaged.

    Args:
        table: the run.
        group: a group-by column's name.

    Returns:
        Columns ``group`` (text; ``"(blank)"`` for a missing or empty value), ``scorer``,
        ``mean`` (NaN when nothing in the group was scored), ``n_scored``, ``n_failed``.

    Raises:
        ValueError: the run has no such group column.
    """
    column = f"group:{group}"
    if column not in table.items.columns:
        raise ValueError(
            f"no group column {group!r}; the run has {[c for c in table.items.columns if c.startswith('group:')]}"
        )
    results = table.results
    keys = group_keys(table.items[column]).reindex(results["item_index"].to_numpy()).to_numpy()
    frame = pd.DataFrame(
        {
            "group": keys,
            "scorer": results["scorer"].to_numpy(),
            "score": results["score"].where(_scored(results)).to_numpy(),
            "failed": (~_scored(results)).to_numpy(),
        }
    )
    out = frame.groupby(["group", "scorer"], sort=True).agg(
        mean=("score", "mean"), n_scored=("score", "count"), n_failed=("failed", "sum")
    )
    out = out.reset_index()
    return out.astype({"n_scored": int, "n_failed": int})[["group", "scorer", "mean", "n_scored", "n_failed"]]


def items_left(table: RunTable, *, retry_failed: bool = False) -> int:
    """Items that still need scoring: some scorer has no outcome (or, with ``retry_failed``, a failed one).

    A failed outcome is one scoring again can change (``ScoreStatus.retryable``): not one whose input
    is missing or invalid.
    """
    results = table.results
    wanted = set(table.scorer_ids)
    done = results[results["scorer"].isin(wanted)]
    if retry_failed:
        done = done[~done["status"].isin([s.value for s in ScoreStatus if s.retryable])]
    complete = done.groupby("item_index").size() == len(wanted)
    return table.n_items - int(complete.sum())


def filter_results(
    table: RunTable,
    *,
    statuses: Sequence[str] | None = None,
    scorers: Sequence[str] | None = None,
    score_range: tuple[float, float] | None = None,
    search: str = "",
    item_indexes: Sequence[int] | None = None,
) -> pd.DataFrame:
    """The outcomes that pass the filters, as a slice of ``table.results``.

    Args:
        table: the run.
        statuses: keep these statuses (``ScoreStatus`` values); None keeps all.
        scorers: keep these scorer ids; None keeps all.
        score_range: keep scored rows with ``lo <= score <= hi``; rows that were not
            scored have no score and are kept or dropped by ``statuses`` alone.
        search: text searched, ignoring case, in the item's id and texts (whole, not
            truncated) and the outcome's reason and error; blank keeps all. The first
            search reads every item's texts (:meth:`~scorers.runs.table.RunTable.texts`).
        item_indexes: keep only these items (a chart selection); None keeps all.
    """
    results = table.results
    keep = pd.Series(True, index=results.index)
    if statuses is not None:
        keep &= results["status"].isin(list(statuses))
    if scorers is not None:
        keep &= results["scorer"].isin(list(scorers))
    if score_range is not None:
        lo, hi = score_range
        keep &= results["score"].isna() | results["score"].between(lo, hi)
    if item_indexes is not None:
        keep &= results["item_index"].isin(list(item_indexes))
    needle = search.strip()
    if needle:
        texts = table.texts()  # every item's texts: read once per run version, then kept with the table
        hit_items = _contains(table.items["item_id"], needle)
        for column in TEXT_FIELDS:
            hit_items |= _contains(texts[column], needle)
        hit = results["item_index"].map(hit_items).fillna(False).astype(bool)
        for column in SEARCHED_RESULT_COLUMNS:
            hit |= _contains(results[column], needle)
        keep &= hit
    return results[keep]


def _contains(values: pd.Series, needle: str) -> pd.Series:
    return values.str.contains(needle, case=False, regex=False).fillna(False).astype(bool)


def sort_results(results: pd.DataFrame, by: str | None, *, descending: bool = False) -> pd.DataFrame:
    """Sort outcomes by a column (``score`` or a dimension column), rows without a value last; None keeps item order."""
    if not by:
        return results
    return results.sort_values(by, ascending=not descending, na_position="last", kind="stable")


def page_rows(table: RunTable, results: pd.DataFrame, *, limit: int = 120) -> pd.DataFrame:
    """The rows of one page for the table: item id, scorer, score, status, the error in full, texts cut to ``limit``.

    Args:
        table: the run.
        results: the page's outcomes (a slice of ``table.results``).
        limit: characters kept of each text (see :func:`dashboard.batch.truncate`);
            the error is kept whole, so it can be read in the table.

    Returns:
        Columns ``item_index``, ``item_id``, ``scorer``, ``score``, ``status``,
        ``cached`` (the judge's reply came from the cache), ``error``, ``input``, ``output``, ``ground_truth``, ``system``, ``reason``,
        the group columns, the run's dimension columns, then the token and latency columns. A scored row's
        ``error`` and a row's absent ``reason`` are ``""`` (nothing to say: an empty cell); a text the item
        does not have (``None``) and a score or dimension a row does not have (NaN) stay missing values.
    """
    rows = table.rows(results.index)
    for column in (*TEXT_FIELDS, "reason"):
        rows[column] = rows[column].map(lambda v: truncate(v, limit) if isinstance(v, str) else None).astype(object)
    rows[["error", "reason"]] = rows[["error", "reason"]].fillna("")
    groups = [c for c in rows.columns if c.startswith("group:")]
    dims = [c for columns in table.dimensions.values() for c in columns]
    order = [
        "item_index",
        "item_id",
        "scorer",
        "score",
        "status",
        "cached",
        "error",
        "input",
        "output",
        "ground_truth",
        "system",
        "reason",
        *groups,
        *dims,
        "prompt_tokens",
        "completion_tokens",
        "judge_calls",
        "judge_requests",
        "latency_s",
    ]
    return rows[order].reset_index(drop=True)
