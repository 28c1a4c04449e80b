"""A stored run's results on screen: summary, charts, the rows table with its drill-down, and exports.

The run is read once per run and version of its outcomes (:func:`run_table`, cached
in the server process), so a rerun only filters, sorts and aggregates columns. The rows
table shows one page; a row's detail is read from the store when it is opened; exports
are written to a file only when their button is clicked; charts are drawn from counts
and statistics, not from one mark per item.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from scorers import EvalItem, ScoreStatus, Store
from scorers.analysis.compare import StoredRun, read_stored_run
from scorers.core.base import round_half_up, turn_text
from scorers.core.errors import RUN_STATUS_LABELS, RUN_STATUS_SHORT_LABELS, outcome_status_label
from scorers.core.pricing import JudgeSpend, RunCost
from scorers.runs.export import (
    TABLE_EXPORTS,
    conversation_turns_of,
    export_file_stem,
    item_texts,
    spreadsheet_overflow_note,
    write_run_export,
)
from scorers.runs.judges import judge_totals, stored_run_cost
from scorers.runs.store import VARIANT_GROUP
from scorers.runs.table import RunTable, dimension_label, load_outcomes, load_run_table

from .batch import NOT_USED, runs_table_styler, truncate
from .distributions import (
    dimension_distribution,
    dimension_heatmap,
    group_comparison_chart,
    heatmap_rows,
    score_box,
    score_histogram,
    status_chart,
)
from .layout import kept_in_session
from .results import md_escape, render_outcome, render_text_block
from .run_frames import (
    PAGE_SIZE,
    aggregates,
    dimension_aggregates,
    filter_results,
    group_means,
    page_rows,
    sort_results,
    status_counts,
)
from .runs import RunFailure

_NUMBER = st.column_config.NumberColumn(format="%.3f")
_STATS = ("mean", "median", "std", "min", "max")
HISTOGRAM_BINS = 20

TABS = ("Summary", "Distributions", "Rows and drill-down", "Export")
"""The tabs of a run's results; the widget key ``<key>_tab`` holds the open one."""

NO_VALUE = "—"
"""A grid's cell without a value (the rows table's score, dimension or text a row does not have; a Batch preview's
field a row does not give); never the grid's default "None", which reads like a text. An empty error or reason is an
empty cell."""

MIMES = {"csv": "text/csv", "jsonl": "application/x-ndjson", "json": "application/json"}


@st.cache_resource(max_entries=12, show_spinner="Reading the run…")
def _per_version(path: str, what: str, versions: tuple[tuple[str, Any], ...], _build: Callable[[], Any]) -> Any:
    # Keyed on the database, what is built and the version of each run's outcomes: a finished
    # or replaced outcome makes a new one.
    return _build()


def per_version(store: Store, what: str, run_ids: tuple[str, ...], build: Callable[[], Any]) -> Any:
    """``build()`` once per (database, ``what``, each run's :meth:`~scorers.Store.results_version`) in this process.

    The cache of every view of stored runs (History, Batch, Review, Compare): a rerun that
    changes no outcome of the runs reads nothing of them but their version stamps.

    Args:
        store: the database.
        what: names what ``build`` makes (one name per kind of value, e.g. ``"table"``).
        run_ids: the runs ``build`` reads.
        build: reads the runs and returns the value to keep (shared between sessions: never mutate it).

    Raises:
        KeyError: a run is not in the store (from ``build``).
    """
    versions = tuple((run_id, store.results_version(run_id)) for run_id in run_ids)
    return _per_version(store.display_name, what, versions, build)


def stored_run(store: Store, run_id: str) -> StoredRun:
    """:func:`scorers.analysis.compare.read_stored_run` once per version of the run's outcomes (:func:`per_version`).

    Raises:
        KeyError: no such run.
    """
    return per_version(store, "stored run", (run_id,), lambda: read_stored_run(store, run_id))


def run_table(store: Store, run_id: str) -> RunTable:
    """The run in columns, read once per (database, run id, :meth:`~scorers.Store.results_version`) in this process.

    Raises:
        KeyError: no such run.
    """
    return per_version(store, "table", (run_id,), lambda: load_run_table(store, run_id))


def run_judges(store: Store, table: RunTable) -> tuple[list[tuple[str, str, int]], list[JudgeSpend]]:
    """The judges the run's outcomes were made by and what each spent (:func:`scorers.runs.judges.judge_totals`),
    read once per version of the table (:func:`run_table`): they change when its outcomes do, and the rerun
    that got the table has just read the version stamp."""
    run_id = table.run["id"]
    return _per_version(
        store.display_name, "judge totals", ((run_id, table.version),), lambda: judge_totals(store, run_id)
    )


def run_usage(store: Store, table: RunTable) -> tuple[int, int, int, int, RunCost | None]:
    """Prompt tokens, completion tokens, judge calls answered and HTTP requests sent to the judge (failed ones and
    retries included, those for outcomes left to do too: what the call cap counts), and their cost (None when the
    run has no judge).

    Each outcome is priced at the model of the judge that made it (a resumed or retried run
    may hold several), at the price set for the run for the run's own judge model, and at the
    Batch API's price when the run went through it.
    """
    results = table.results
    prompt, completion = int(results["prompt_tokens"].sum()), int(results["completion_tokens"].sum())
    cost = None
    if (table.run.get("judge") or {}).get("model"):
        cost = stored_run_cost(store, table.run, spend=run_judges(store, table)[1])
    requests = int(results["judge_requests"].sum()) + int(table.run["left_judge_requests"])
    return prompt, completion, int(results["judge_calls"].sum()), requests, cost


def _scale_range(options: dict[str, Any]) -> tuple[float, float]:
    scale = options.get("scale", 1.0)
    return (0.0, float(scale) if isinstance(scale, (int, float)) and scale > 0 else 1.0)


def _long_dimensions(table: RunTable, sid: str) -> pd.DataFrame:
    """One scorer's dimension scores as a long frame (``item_index``, ``item_id``, ``dimension``, ``value``)."""
    columns = table.dimensions.get(sid, [])
    mine = table.results.loc[table.results["scorer"] == sid, ["item_index", *columns]]
    long = mine.melt(id_vars="item_index", value_vars=columns, var_name="column", value_name="value").dropna()
    long["dimension"] = long["column"].map({c: dimension_label(c.split(".", 1)[1]) for c in columns})
    long["item_id"] = table.items["item_id"].reindex(long["item_index"].to_numpy()).to_numpy()
    return long[["item_index", "item_id", "dimension", "value"]]


def render_results(
    store: Store, table: RunTable, names: dict[str, str], options: dict[str, dict[str, Any]], key: str
) -> None:
    """The tabs of a run with outcomes (:data:`TABS`): Summary, Distributions, Rows and drill-down, Export.

    Only the open tab is built; ``st.session_state[f"{key}_tab"]`` holds its label (Summary
    on a first visit), so a page or a test can open another one.

    Args:
        store: the database (a row's detail is read from it when the row is opened).
        table: the run (:func:`run_table`).
        names: scorer id → display name.
        options: scorer id → the options the run was started with.
        key: prefix of every widget and chart key.
    """
    groups = [c.removeprefix("group:") for c in table.items.columns if c.startswith("group:")]
    # Only the open tab's body runs (a tab switch reruns the page): charts, rows and exports
    # are built when their tab is shown, not on every rerun of the Summary.
    summary, charts, rows, export = st.tabs(list(TABS), key=f"{key}_tab", on_change="rerun")
    if summary.open:
        with summary:
            _render_summary(table, names, groups, key)
    if charts.open:
        with charts:
            _render_charts(table, names, options, groups, key)
    if rows.open:
        with rows:
            _render_rows(store, table, names, key)
    if export.open:
        with export:
            _render_exports(table, key)


def _render_summary(table: RunTable, names: dict[str, str], groups: list[str], key: str) -> None:
    # Tables only: the first Plotly chart of a page load makes the browser evaluate Plotly's 4.7 MB
    # bundle (about a second of its main thread), which held up the page after the run had opened.
    # The outcomes by status are in the scores table's counts; their chart opens the Distributions tab.
    # A run of variants scores each variant's responses to the same items: a mean over all of them mixes the variants.
    by = VARIANT_GROUP if VARIANT_GROUP in groups else None
    scores, dimensions = _summary(table.run["id"], table.version, names, by, table)
    per = " and variant" if by else ""
    st.markdown(f"**Scores per scorer{per}** (scored items only; failed items are counted, never averaged as 0)")
    st.dataframe(scores, hide_index=True, column_config=dict.fromkeys(_STATS, _NUMBER))
    if dimensions is not None:
        st.markdown(f"**Scores per dimension{per}** (0–1, before scale; the column names are those of the exports)")
        st.dataframe(dimensions, hide_index=True, column_config=dict.fromkeys(_STATS, _NUMBER))
    for group in groups:
        st.markdown(f"**Mean score per {md_escape(group)}**")
        st.dataframe(
            shown_decimals(_group_means(table.run["id"], table.version, group, names, table), ["mean"]),
            hide_index=True,
            column_config={"mean": _NUMBER},
        )


# The Summary shows the whole run, whatever the filters: its tables are built once per
# run version (run id and RunTable.version), like the charts, and reused by every rerun.
@st.cache_resource(max_entries=16, show_spinner=False)
def _summary(
    run_id: str,
    version: tuple[int, int, float | None, str | None],
    names: dict[str, str],
    by: str | None,
    _table: RunTable,
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    dimensions = shown_decimals(dimension_aggregates(_table, names, by), _STATS) if _table.dimensions else None
    return shown_decimals(aggregates(_table, names, by), _STATS), dimensions


def shown_decimals(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """A copy of ``frame`` whose ``columns`` are rounded to the 3 decimals the grid shows, by
    :func:`scorers.core.base.round_half_up` (as :func:`~scorers.core.base.decimal_text` writes them in the CLI, the
    gate, the report and History's run list): the grid's ``%.3f`` rounds the binary value in the browser, so a mean
    of 0.6944999999999999 would read 0.694 here and 0.695 there. Missing values stay missing.
    """
    out = frame.copy()
    for column in columns:
        out[column] = [round_half_up(v, 3) if math.isfinite(v) else v for v in out[column].astype(float)]
    return out


@st.cache_resource(max_entries=16, show_spinner=False)
def _group_means(
    run_id: str, version: tuple[int, int, float | None, str | None], group: str, names: dict[str, str], _table: RunTable
) -> pd.DataFrame:
    means = group_means(_table, group)
    means["scorer"] = means["scorer"].map(lambda s: names.get(s, s))
    return means


def _new_selection(event: Any, chart_key: str) -> list[dict[str, Any]]:
    """The points newly selected on a chart: empty when the selection is the one already applied
    (a selection stays in the chart's state across reruns; clearing the filter must stick)."""
    selection = getattr(event, "selection", None) or {}
    points = list(selection.get("points") or [])
    seen = f"{chart_key}_seen"
    if points == st.session_state.get(seen):
        return []
    st.session_state[seen] = points
    return points


def _render_charts(
    table: RunTable, names: dict[str, str], options: dict[str, dict[str, Any]], groups: list[str], key: str
) -> None:
    st.caption(
        "Charts show the whole run. Click a histogram bar or a heatmap row to show those items in the "
        "rows table (Rows and drill-down tab); click again on an empty spot to clear."
    )
    run_id = table.run["id"]
    # First, and cheap to build: the browser starts loading Plotly while the score charts are built.
    st.plotly_chart(_status_chart(run_id, table.version, names, table), key=f"{key}_status")
    shown = table.scorer_ids
    if len(shown) > 1:  # one scorer's charts at a time: the browser draws each chart, seen or not
        chosen = st.segmented_control(
            "Scorer", shown, default=shown[0], key=f"{key}_chart_scorer", format_func=lambda sid: names[sid]
        )
        shown = [chosen or shown[0]]
    for sid in shown:
        name = names[sid]
        st.markdown(f"#### {md_escape(name)}")
        span = _scale_range(options.get(sid, {}))
        hist, box = _score_charts(run_id, table.version, sid, name, span, table)
        left, right = st.columns(2)
        with left:
            event = st.plotly_chart(hist, key=f"{key}_hist_{sid}", on_select="rerun", selection_mode="points")
        points = _new_selection(event, f"{key}_hist_{sid}")
        if points and points[0].get("customdata"):
            lo, hi = (float(v) for v in points[0]["customdata"][:2])
            _set_chart_filter(key, f"{name}: score {lo:.3g} to {hi:.3g}", scorer=sid, score_range=(lo, hi))
        right.plotly_chart(box, key=f"{key}_box_{sid}")
        if sid not in table.dimensions:
            continue
        kind = (
            st.segmented_control(
                "Dimension chart", ["box", "violin"], default="box", key=f"{key}_kind_{sid}", format_func=str.capitalize
            )
            or "box"
        )
        dims, heat, (rows, members) = _dimension_charts(run_id, table.version, sid, name, kind, table)
        st.plotly_chart(dims, key=f"{key}_dims_{sid}")
        event = st.plotly_chart(heat, key=f"{key}_heat_{sid}", on_select="rerun", selection_mode="points")
        points = _new_selection(event, f"{key}_heat_{sid}")
        if points and points[0].get("y") is not None:
            labels = [str(label) for label in rows.index]
            if str(points[0]["y"]) in labels:
                chosen = members[labels.index(str(points[0]["y"]))]
                _set_chart_filter(key, f"{name}: heatmap row {points[0]['y']}", scorer=None, items=chosen)
    for group in groups:
        means = _group_means(run_id, table.version, group, names, table)
        st.plotly_chart(group_comparison_chart(means, group), key=f"{key}_group_{group}")


# The charts show the whole run, whatever the filters: built once per run version (run id and
# RunTable.version) and reused by every rerun. Plotly figures are not changed by drawing.
@st.cache_resource(max_entries=16, show_spinner=False)
def _score_charts(
    run_id: str,
    version: tuple[int, int, float | None, str | None],
    sid: str,
    name: str,
    span: tuple[float, float],
    _table: RunTable,
) -> tuple[Any, Any]:
    results = _table.results
    mine = results[(results["status"] == ScoreStatus.SCORED.value) & (results["scorer"] == sid)]
    labels = _table.items["item_id"].reindex(mine["item_index"].to_numpy()).astype(str).tolist()
    return (
        score_histogram(mine["score"], title=f"{name}: scores", x_range=span, bins=HISTOGRAM_BINS),
        score_box(mine["score"], labels=labels, title=f"{name}: spread", x_range=span),
    )


@st.cache_resource(max_entries=16, show_spinner=False)
def _status_chart(
    run_id: str, version: tuple[int, int, float | None, str | None], names: dict[str, str], _table: RunTable
) -> Any:
    return status_chart(status_counts(_table, names))


@st.cache_resource(max_entries=16, show_spinner=False)
def _dimension_charts(
    run_id: str, version: tuple[int, int, float | None, str | None], sid: str, name: str, kind: str, _table: RunTable
) -> tuple[Any, ...]:
    long = _long_dimensions(_table, sid)
    rows = heatmap_rows(long)
    return (
        dimension_distribution(long, kind=kind, title=f"{name}: dimension scores"),
        dimension_heatmap(long, title=f"{name}: dimension scores by item", rows=rows),
        rows,
    )


def _set_chart_filter(
    key: str,
    label: str,
    *,
    scorer: str | None,
    score_range: tuple[float, float] | None = None,
    items: list[int] | None = None,
) -> None:
    wanted = {"label": label, "scorer": scorer, "score_range": score_range, "items": items}
    if st.session_state.get(f"{key}_chart_filter") != wanted:
        st.session_state[f"{key}_chart_filter"] = wanted
        st.session_state[f"{key}_page"] = 1


def _clear_chart_filter(key: str) -> None:
    st.session_state.pop(f"{key}_chart_filter", None)


def page_of(rows: pd.DataFrame, key: str, box: Any = st) -> tuple[pd.DataFrame, int]:
    """The :data:`PAGE_SIZE` rows of the page chosen in a "Page (of n)" box keyed ``key``, drawn in ``box``
    (a column, or the page); a page past the last (the rows shrank) goes back to page 1.

    Returns:
        ``(the page's rows, the position of its first row in rows)``.
    """
    pages = max(1, math.ceil(len(rows) / PAGE_SIZE))
    if st.session_state.get(key, 1) > pages:
        st.session_state[key] = 1
    page = int(box.number_input(f"Page (of {pages})", min_value=1, max_value=pages, step=1, key=key))
    start = (page - 1) * PAGE_SIZE
    return rows.iloc[start : start + PAGE_SIZE], start


def _render_rows(store: Store, table: RunTable, names: dict[str, str], key: str) -> None:
    # Fixed choices and ranges: a filter drawn while a run was still scoring must not hide
    # the statuses and scores that arrive later (widget state keeps its first value).
    statuses = [s.value for s in ScoreStatus]
    results = table.results
    f1, f2, f3, f4 = st.columns([2, 2, 2, 3])
    chosen_status = f1.multiselect(
        "Status", statuses, default=statuses, format_func=outcome_status_label, key=f"{key}_f_status"
    )
    chosen_scorers = f2.multiselect(
        "Scorer",
        table.scorer_ids,
        default=table.scorer_ids,
        format_func=lambda s: names.get(s, s),
        key=f"{key}_f_scorer",
    )
    scored = results["score"].dropna()
    score_range = None
    if len(scored) and scored.min() < scored.max():
        lo, hi = min(0.0, float(scored.min())), max(1.0, math.ceil(float(scored.max())))
        score_range = f3.slider(
            "Score range",
            min_value=lo,
            max_value=hi,
            value=(lo, hi),
            key=f"{key}_f_score",
            help="Applies to scored rows; rows not scored are kept or hidden by status.",
        )
    else:
        f3.caption("Score range: " + (f"every score is {scored.iloc[0]:g}" if len(scored) else "nothing scored yet"))
    search = f4.text_input("Search text", key=f"{key}_f_search", placeholder="words in the prompt, response, error…")
    chart = st.session_state.get(f"{key}_chart_filter")
    shown = filter_results(
        table, statuses=chosen_status, scorers=chosen_scorers, score_range=score_range, search=search
    )
    if chart:
        narrowed = filter_results(
            table,
            scorers=[chart["scorer"]] if chart["scorer"] else None,
            score_range=chart["score_range"],
            item_indexes=chart["items"],
        )
        if chart["score_range"] is not None:
            narrowed = narrowed[narrowed["score"].notna()]
        shown = shown.loc[shown.index.intersection(narrowed.index)]
        note, clear = st.columns([4, 1], vertical_alignment="center")
        note.info(f"Chart selection: {md_escape(chart['label'])}.")
        clear.button("Clear chart filter", key=f"{key}_chart_clear", on_click=_clear_chart_filter, args=(key,))

    # Named as the filter, the charts and the dimension table name them ("Textual difference · Confidence").
    sort_labels = {None: "item order", "score": "Score"} | {
        column: f"{names.get(sid, sid)} · {dimension_label(column.split('.', 1)[1])}"
        for sid, columns in table.dimensions.items()
        for column in columns
    }
    s1, s2, s3 = st.columns([3, 2, 2])
    sort_by = s1.selectbox(
        "Sort by",
        list(sort_labels),
        format_func=sort_labels.__getitem__,
        key=f"{key}_sort",
        help="Any score or dimension score; rows without one go last.",
    )
    descending = s2.toggle("Highest first", key=f"{key}_sort_desc", disabled=sort_by is None)
    shown = sort_results(shown, sort_by, descending=descending)
    visible, start = page_of(shown, f"{key}_page", s3)
    st.caption(
        f"{len(shown)} of {len(results)} rows (one per item and scorer); rows {start + 1 if len(visible) else 0}–"
        f"{start + len(visible)} shown. Long texts are cut here; select a row to read it whole below. "
        f'"{NO_VALUE}": no value (a row not scored has no score, nor another scorer\'s dimensions; a text the item '
        "does not have, such as a ground truth)."
    )
    page_table = page_rows(table, visible)
    # The scorer as the filter, the charts and History name it ("Textual difference (vs input)"), not its id.
    page_table["scorer"] = page_table["scorer"].map(lambda s: names.get(s, s))
    page_table["status"] = page_table["status"].map(outcome_status_label)  # the exports keep the raw names
    dims = [c for columns in table.dimensions.values() for c in columns]
    page_table = shown_decimals(page_table, ["score", *dims])  # as decimal_text writes them (the drill-down, the CLI)
    event = st.dataframe(
        page_table.drop(columns=["item_index"]),
        hide_index=True,
        key=f"{key}_table",
        on_select="rerun",
        selection_mode="single-row",
        placeholder=NO_VALUE,
        column_config={
            "score": _NUMBER,
            "error": st.column_config.TextColumn("error", width="large"),
            "latency_s": st.column_config.NumberColumn("latency (s)", format="%.2f"),
            **dict.fromkeys(dims, _NUMBER),
        },
    )
    if visible.empty:
        st.info("No row matches the filters.")
        return
    # Selecting a row in the table opens its item; so does the chooser (which keyboards and tests can use).
    pick_key, last_key = f"{key}_item", f"{key}_table_last"
    item_indexes = list(dict.fromkeys(page_table["item_index"].tolist()))
    selected = event.selection.rows if event is not None else []
    if selected and selected != st.session_state.get(last_key):
        st.session_state[pick_key] = int(page_table.iloc[selected[0]]["item_index"])
    st.session_state[last_key] = selected
    if st.session_state.get(pick_key) not in item_indexes:
        st.session_state[pick_key] = None
    ids = dict(zip(page_table["item_index"], page_table["item_id"], strict=True))
    prompts = dict(zip(page_table["item_index"], page_table["input"], strict=True))
    index = st.selectbox(
        "Item to inspect",
        item_indexes,
        index=None,
        key=pick_key,
        placeholder="Select a row above, or choose an item of this page",
        format_func=lambda i: f"{ids[i]} — {truncate(prompts[i] or '', 80)}",
    )
    if index is not None:
        _render_item(store, table, index, names, key)


def _render_item(store: Store, table: RunTable, index: int, names: dict[str, str], key: str) -> None:
    item, outcomes = load_outcomes(store, table.run["id"], index)  # read only for the row that is opened
    with st.expander(f"Texts of {item.item_id}", expanded=True):
        render_item_texts(item, f"{key}_texts_{index}")
    for sid in table.scorer_ids:
        st.markdown(f"#### {md_escape(names[sid])}")
        outcome = outcomes.get(sid)
        if outcome is None:
            st.info("Not scored yet: the run stopped before this item. Resume the run to score it.")
            continue
        view = outcome.result or RunFailure(outcome.error or "not scored", outcome.status, outcome.raw_reply)
        render_outcome(view, key=f"{key}_drill_{sid}", payload=item.payload)


def render_item_texts(item: EvalItem, key: str) -> None:
    """An item's user prompt, system message, response and ground truth (those it has, each exactly as
    written, a long one cut with a way to see and download all of it: :func:`~dashboard.results.render_text_block`,
    widget keys ``<key>_<field>``), then its groups and its other dataset columns.

    A conversation is shown turn by turn in place of the user prompt (its user turns joined): each turn before the
    response under its role (User, Assistant, Tool ...), in the order the judge was shown them (the exports'
    ``conversation``), with its tool calls and a tool result's call (:func:`~scorers.core.base.turn_text`), widget
    keys ``<key>_conversation_<n>``."""
    texts = item_texts(item)
    turns = conversation_turns_of(texts["conversation"])
    if turns:
        st.markdown("**Conversation** (the turns before the response, as the judge was shown them)")
        for n, turn in enumerate(turns):
            st.markdown(f"*{md_escape(str(turn['role']).capitalize())}*")
            render_text_block(turn_text(turn), key=f"{key}_conversation_{n}", name=f"{item.item_id}-turn-{n + 1}")
    for label, field in (
        ("User prompt", "input"),
        ("System message", "system"),
        ("Response", "output"),
        ("Ground truth", "ground_truth"),
    ):
        if texts[field] and not (turns and field == "input"):
            st.markdown(f"**{label}**")
            render_text_block(texts[field], key=f"{key}_{field}", name=f"{item.item_id}-{field}")
    for name, value in {**item.groups, **item.columns}.items():
        st.caption(md_escape(f"{name}: {value}"))


def _export_writer(table: RunTable, fmt: str) -> Callable[[], bytes]:
    def build() -> bytes:
        # Written to a temporary file chunk by chunk, only when the button is clicked, and read back once:
        # Streamlit's deferred download takes bytes (not the open temporary file, which it refuses).
        with tempfile.TemporaryFile() as out:
            write_run_export(table, fmt, out)
            out.seek(0)
            return out.read()

    return build


def _render_exports(table: RunTable, key: str) -> None:
    st.caption(
        "One row per item and scorer (CSV, JSON Lines, Parquet), or the seeds' runEvals shape (JSON), with "
        "the dataset's other columns and one numeric column per dimension score. A failed item has an empty "
        "score with its status and error. The spreadsheet CSV prefixes with ' the cells a spreadsheet would run "
        "as a formula (also answers starting with '- '); the plain CSV keeps every text as it is. Each file is "
        "written when its button is clicked."
    )
    overflow = kept_in_session(f"{key}_export_overflow", table.version, lambda: spreadsheet_overflow_note(table))
    if overflow:
        st.warning(overflow)
    stem = export_file_stem(table.run)
    with st.container(horizontal=True):  # each button as wide as its label (five columns cut them)
        for fmt, (label, ext) in TABLE_EXPORTS.items():
            st.download_button(
                label,
                data=_export_writer(table, fmt),
                file_name=f"{stem}{'-plain' if fmt == 'plain-csv' else ''}.{ext}",
                mime=MIMES.get(ext, "application/octet-stream"),
                key=f"{key}_export_{fmt}",
                on_click="ignore",
                icon=":material/download:",
                width="content",
            )


def show_runs_table(table: pd.DataFrame, **kwargs: Any) -> None:
    """Draw :func:`dashboard.batch.runs_table`'s frame (``id`` may be dropped) with ``st.dataframe`` as
    :func:`dashboard.batch.runs_table_styler` shows it; ``kwargs`` go to ``st.dataframe`` (``key``,
    ``column_config``)."""
    config = {"status": st.column_config.TextColumn("status", width="medium", help=RUN_STATUS_HELP)}
    # A run of variants' means are a text ("gpt4 0.473 · gpt4_short 0.506"): wide enough to be read whole, as
    # the grid cuts a cell's text on the left, which would show another variant's name ("pt4").
    widths: dict[str, int] = {}
    for _, column, text in table.attrs.get("per_variant", []):
        widths[column] = max(widths.get(column, 0), 8 * len(text) + 24)  # about 8 pixels a character
    config |= {column: st.column_config.Column(width=width) for column, width in widths.items()}
    config |= kwargs.pop("column_config", None) or {}
    st.dataframe(runs_table_styler(table), hide_index=True, placeholder=NOT_USED, column_config=config, **kwargs)


RUN_STATUS_HELP = "; ".join(
    f"{short}: {RUN_STATUS_LABELS[status]}"
    for status, short in RUN_STATUS_SHORT_LABELS.items()
    if short != RUN_STATUS_LABELS[status]
)
"""The full wording of each short run status of History's list and picker (their help)."""
